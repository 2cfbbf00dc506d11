// SPDX-License-Identifier: MIT
/*
 * pgsql_ckpt.c - the checkpointer, as checkpointer.c does it
 *
 * Checkpoint (checkpointer.c CreateCheckPoint, PostgreSQL 15 order): redo
 * point = the insert position (later changes log full-page images),
 * CheckPointReplicationOrigin (9.6+: pg_logical/replorigin_checkpoint.tmp,
 * fsync, durable rename), CheckPointCLOG (dirty pg_xact pages), then
 * BufferSync: every buffer dirty at the start is flagged, the flagged ones
 * sorted by relation and block (9.6+; 8.4 walks buffer order) and written
 * one 8 KiB pwrite each, a sync_file_range per checkpoint_flush_after of
 * sorted, coalesced pages, a 100 ms nap whenever IsCheckpointOnSchedule
 * says the writes are ahead of completion_target x (the time, and the WAL,
 * allowed); then ProcessSyncRequests: one fsync per segment file written
 * since the last checkpoint, by anyone; then the checkpoint record,
 * XLogFlush, pg_control (write 8 KiB, fsync), and WAL recycling.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pgsql_i.h"

/* --- the checkpointer ------------------------------------------------------------ */

struct sort_arg {
	const struct pg_buf *buf;
	const struct pg_rel *rel;
};

/* BufferSync's order: relation file (relfilenode, then fork), then block */
static int cmp_buf_tag(const void *a, const void *b, void *arg)
{
	const struct sort_arg *s = arg;
	uint64_t x = s->buf[*(const uint32_t *)a].tag, y = s->buf[*(const uint32_t *)b].tag;
	uint64_t kx = s->rel[x >> 32].sortkey, ky = s->rel[y >> 32].sortkey;

	if (kx != ky)
		return kx < ky ? -1 : 1;
	return (uint32_t)x < (uint32_t)y ? -1 : (uint32_t)x > (uint32_t)y;
}

/* IsCheckpointOnSchedule: ahead of both the time and the WAL allowed? */
static int on_schedule(struct pg *pg, double progress)
{
	const struct iotap_workload_pgsql_opts *o = pg->o;
	uint64_t ins;
	double el;

	progress *= o->completion_target;
	el = (double)(wl_now() - pg->ckpt_start_ns) / (double)o->checkpoint_timeout_ns;
	if (progress < el)
		return 0;
	pthread_mutex_lock(&pg->wal.insert_lock);
	ins = pg->wal.insert;
	pthread_mutex_unlock(&pg->wal.insert_lock);
	el = (double)(ins - pg->ckpt_start_insert) / (double)PG_WAL_SEG / (double)pg->ckpt_segs;
	return progress >= el;
}

/* CheckPointReplicationOrigin: write a tmp file, fsync, durable_rename. */
static int replorigin_checkpoint(struct pg *pg)
{
	static const char tmp[] = "replorigin_checkpoint.tmp", path[] = "replorigin_checkpoint";
	struct iotap_workload_ctx *c = pg->c;
	uint32_t word = 0x1257DADE;
	struct wl_file f;
	struct stat st;
	int ret;

	ret = wl_unlink_old(c, pg->logicalfd, pg->logical_ino, tmp);
	if (!ret)
		ret = wl_open(c, &f, pg->logicalfd, pg->logical_ino, tmp,
			      O_CREAT | O_EXCL | O_WRONLY, 0600);
	if (ret)
		return ret;
	/* the magic, then the CRC (no origins in between) */
	if (wl_write(c, &f, &word, 4) != 4 || wl_write(c, &f, &word, 4) != 4)
		ret = wl_fail(c, -EIO, "write '%s'", tmp);
	if (!ret) {
		atomic_fetch_add(&pg->cnt.fsyncs, 1);
		ret = wl_fsync(c, &f, 0);
	}
	if (wl_close(c, &f) && !ret)
		ret = -EIO;
	if (!ret)
		ret = pg_fsync_fname(pg, pg->logicalfd, pg->logical_ino, tmp, 0);
	if (!ret && !fstatat(pg->logicalfd, path, &st, 0))
		ret = pg_fsync_fname(pg, pg->logicalfd, pg->logical_ino, path, 0);
	if (!ret)
		ret = wl_rename(c, pg->logicalfd, pg->logical_ino, tmp, pg->logicalfd,
				pg->logical_ino, path);
	if (!ret)
		ret = pg_fsync_fname(pg, pg->logicalfd, pg->logical_ino, path, 0);
	if (!ret)
		ret = pg_fsync_fname(pg, pg->logicalfd, pg->logical_ino, ".", 1);
	return ret;
}

/* UpdateControlFile: write pg_control whole, fsync. */
static int update_control(struct pg *pg)
{
	struct iotap_workload_ctx *c = pg->c;
	struct wl_file f;
	ssize_t n;
	int ret;

	ret = wl_open(c, &f, pg->globalfd, pg->global_ino, "pg_control", O_RDWR, 0);
	if (ret)
		return ret;
	n = wl_write(c, &f, pg->page, PG_BLCKSZ);
	ret = n < 0 ? (int)n : 0;
	if (!ret) {
		atomic_fetch_add(&pg->cnt.fsyncs, 1);
		ret = wl_fsync(c, &f, 0);
	}
	if (wl_close(c, &f) && !ret)
		ret = -EIO;
	return ret;
}

static int buffer_sync(struct pg *pg, struct iotap_workload_pgsql_ckpt *ck, struct pg_wb *wb)
{
	struct pg_pool *p = &pg->pool;
	uint32_t *ids, n = 0, i;
	int ret = 0;

	ids = malloc((p->n ? p->n : 1) * sizeof(*ids));
	if (!ids)
		return -ENOMEM;
	pthread_mutex_lock(&p->lock);
	/* 8.4 starts at the clock hand; 9.6+ sorts anyway */
	for (i = 0; i < p->n; i++) {
		uint32_t k = (p->hand + i) % p->n;
		struct pg_buf *b = &p->buf[k];

		if ((b->flags & (PG_BUF_VALID | PG_BUF_DIRTY)) == (PG_BUF_VALID | PG_BUF_DIRTY)) {
			b->flags |= PG_BUF_CKPT;
			ids[n++] = k;
		}
	}
	pthread_mutex_unlock(&p->lock);
	if (pg->o->sorted_checkpoints) {
		struct sort_arg sa = { p->buf, pg->rel };

		qsort_r(ids, n, sizeof(*ids), cmp_buf_tag, &sa);
	}
	for (i = 0; i < n && !ret; i++) {
		int w = pg_sync_buf(pg, PG_R_CKPT, ids[i], 1, 0, wb);

		if (w < 0)
			ret = w;
		ck->buffers += w > 0;
		/* CheckpointWriteDelay */
		while (!ret && !pg_stopping(pg) && on_schedule(pg, (double)(i + 1) / n)) {
			pg_nap(pg, 100000000ull);
			if (__atomic_load_n(&pg->ckpt_request, __ATOMIC_RELAXED))
				break;	/* an urgent request: PostgreSQL stops napping too */
		}
		if (pg_stopping(pg))
			ret = -EINTR;
	}
	if (!ret && wb->n)
		ret = pg_wb_issue(pg, wb);
	free(ids);
	return ret;
}

static int process_sync(struct pg *pg, struct iotap_workload_pgsql_ckpt *ck)
{
	unsigned int r, s;
	uint64_t longest = 0, sum = 0;
	int ret = 0;

	for (r = 0; r < PG_NALL && !ret; r++) {
		struct pg_rel *rel = &pg->rel[r];

		for (s = 0; s < rel->nseg && !ret; s++) {
			uint64_t t;

			if (!atomic_exchange(&rel->seg[s].need_sync, 0))
				continue;
			t = wl_now();
			ret = wl_fsync(pg->c, &rel->seg[s].f, 0);
			t = wl_now() - t;
			atomic_fetch_add(&pg->cnt.fsyncs, 1);
			ck->sync_files++;
			sum += t;
			if (t > longest)
				longest = t;
		}
	}
	ck->sync_longest_s = (double)longest / 1e9;
	ck->sync_average_s = ck->sync_files ? (double)sum / 1e9 / ck->sync_files : 0;
	return ret;
}

/*
 * The trace's copy of a checkpoint part's time as log_checkpoints prints
 * it (an APP SPAN "checkpoint N write" or "... sync"): the report prints
 * the run's figure, not one from the markers taken a moment apart.
 */
static void ckpt_span(struct pg *pg, unsigned int seq, const char *part, uint64_t t0,
		      uint64_t t1, int partial)
{
	char name[48];
	struct iotap_trace_rec ar;

	snprintf(name, sizeof(name), "checkpoint %u %s", seq, part);
	iotap_trace_app_span_init(&ar, name, t0, t1 - t0, partial ? IOTAP_APPF_PARTIAL : 0);
	wl_app(pg->c, &ar);
}

static int checkpoint(struct pg *pg, struct pg_cpu *t, unsigned int seq, int by_wal,
		      struct pg_wb *wb)
{
	struct iotap_workload_pgsql_ckpt ck = { .seq = seq, .by_wal = by_wal };
	uint64_t t0 = wl_now(), t1, t2, prev_redo = pg->ckpt_redo, lsn;
	unsigned int i;
	int ret = 0;

	ck.start_s = (double)(t0 - pg->t0) / 1e9;
	pthread_mutex_lock(&pg->phase_lock);
	snprintf(pg->ckpt_phase, sizeof(pg->ckpt_phase), "checkpoint %u write", seq);
	pthread_mutex_unlock(&pg->phase_lock);
	pg_phase_update(pg, t);
	/* the redo point: changes after it log full-page images */
	pthread_mutex_lock(&pg->wal.insert_lock);
	pg->ckpt_redo = pg->wal.insert;
	pg->ckpt_start_insert = pg->wal.insert;
	pg->ckpt_start_ns = t0;
	atomic_fetch_add(&pg->epoch, 1);
	pthread_mutex_unlock(&pg->wal.insert_lock);
	if (pg->o->era >= IOTAP_PGSQL_96)
		ret = replorigin_checkpoint(pg);
	/* CheckPointCLOG */
	for (i = 0; i < 32 && !ret; i++) {
		if (!atomic_exchange(&pg->clog_dirty[i], 0))
			continue;
		if (i >= pg->rel[PG_CLOG].nblocks)
			ret = pg_rel_extend(pg, PG_CLOG, i + 1 - pg->rel[PG_CLOG].nblocks, 0);
		if (!ret)
			ret = pg_write_page(pg, PG_R_CKPT, PG_CLOG, i, NULL);
	}
	if (!ret)
		ret = buffer_sync(pg, &ck, wb);
	t1 = wl_now();
	ck.write_s = (double)(t1 - t0) / 1e9;
	ckpt_span(pg, seq, "write", t0, t1, ret != 0);
	if (!ret) {
		pthread_mutex_lock(&pg->phase_lock);
		snprintf(pg->ckpt_phase, sizeof(pg->ckpt_phase), "checkpoint %u sync", seq);
		pthread_mutex_unlock(&pg->phase_lock);
		pg_phase_update(pg, t);
		ret = process_sync(pg, &ck);
	}
	t2 = wl_now();
	ck.sync_s = (double)(t2 - t1) / 1e9;
	if (!ret)
		ckpt_span(pg, seq, "sync", t1, t2, 0);
	if (!ret) {
		lsn = pg_wal_insert(pg, 114);	/* the checkpoint record */
		ret = pg_wal_flush(pg, lsn, 0);
	}
	if (!ret)
		ret = update_control(pg);
	if (!ret && pg->old_created && !pg->old_unlinked) {
		/* SyncPostCheckpoint: the files TRUNCATE replaced go now */
		for (i = PG_NREL + PG_NCAT; i < PG_NREL + PG_NCAT + 4 && !ret; i++) {
			struct pg_rel *rel = &pg->rel[i];

			if (!rel->nseg)
				continue;
			wl_close(pg->c, &rel->seg[0].f);
			ret = wl_unlink(pg->c, rel->dirfd, rel->dir_ino, rel->seg[0].name, 0);
			rel->nseg = 0;
		}
		pg->old_unlinked = 1;
	}
	if (!ret) {
		/* UpdateCheckPointDistanceEstimate */
		double d = (double)(pg->ckpt_redo - prev_redo);

		if (pg->ckpt_distance_est < d)
			pg->ckpt_distance_est = d;
		else
			pg->ckpt_distance_est = 0.9 * pg->ckpt_distance_est + 0.1 * d;
		ck.distance_kb = (uint64_t)(d / 1024);
		ck.estimate_kb = (uint64_t)(pg->ckpt_distance_est / 1024);
		ret = pg_wal_recycle(pg, pg->ckpt_redo, &ck.added, &ck.removed, &ck.recycled);
	}
	ck.total_s = (double)(wl_now() - t0) / 1e9;
	ck.partial = ret != 0;
	pthread_mutex_lock(&pg->res_lock);
	{
		struct iotap_workload_pgsql_ckpt *n = realloc(pg->r->ckpt,
							      (pg->r->nckpt + 1) * sizeof(*n));

		if (n) {
			pg->r->ckpt = n;
			n[pg->r->nckpt++] = ck;
		}
	}
	pthread_mutex_unlock(&pg->res_lock);
	pthread_mutex_lock(&pg->phase_lock);
	pg->ckpt_phase[0] = '\0';
	pthread_mutex_unlock(&pg->phase_lock);
	if (ret != -EINTR)
		pg_phase_update(pg, t);
	return ret;
}

int pg_checkpointer(struct pg *pg, struct pg_cpu *t)
{
	const struct iotap_workload_pgsql_opts *o = pg->o;
	uint64_t last = wl_now(), last_insert = 0;
	unsigned int seq = 0;
	struct pg_wb wb;
	int ret = pg_wb_init(&wb, o->checkpoint_flush_after);

	pthread_mutex_lock(&pg->wal.insert_lock);
	last_insert = pg->wal.insert;
	pthread_mutex_unlock(&pg->wal.insert_lock);
	while (!ret && !pg_stopping(pg)) {
		uint64_t now = wl_now(), ins;
		int by_wal;

		if (!pg->ckpt_request && now - last < o->checkpoint_timeout_ns) {
			uint64_t left = o->checkpoint_timeout_ns - (now - last);

			pg_nap(pg, left < 1000000000ull ? left : 1000000000ull);
			pg_cpu_tick(pg, t);
			continue;
		}
		pthread_mutex_lock(&pg->state_lock);
		by_wal = pg->ckpt_request;
		pg->ckpt_request = 0;
		pthread_mutex_unlock(&pg->state_lock);
		pthread_mutex_lock(&pg->wal.insert_lock);
		ins = pg->wal.insert;
		pthread_mutex_unlock(&pg->wal.insert_lock);
		last = now;
		if (!by_wal && ins == last_insert)
			continue;	/* "skipping checkpoint": nothing happened */
		ret = checkpoint(pg, t, ++seq, by_wal, &wb);
		pthread_mutex_lock(&pg->wal.insert_lock);
		last_insert = pg->wal.insert;
		pthread_mutex_unlock(&pg->wal.insert_lock);
		pg_cpu_tick(pg, t);
	}
	free(wb.tag);
	return ret == -EINTR ? 0 : ret;
}
