// SPDX-License-Identifier: MIT
/*
 * pgsql_buf.c - shared_buffers, relation files, the background writer and
 * the checkpointer, as bufmgr.c, md.c, bgwriter.c and checkpointer.c do
 * them
 *
 * Buffer pool (bufmgr.c, freelist.c): NBuffers descriptors found through
 * a hash of (relation, block); a miss takes the clock-sweep victim (usage
 * count 0, decremented on the way), writes it first if dirty (after
 * flushing the WAL up to its LSN: the WAL rule), then reads the page with
 * one 8 KiB pread (md.c: block b of a relation is at (b % 131072) * 8 KiB
 * of segment file b / 131072). Hits bump the usage count (at most 5).
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

/* --- relation files (md.c) --------------------------------------------- */

int pg_rel_open_seg(struct pg *pg, struct pg_rel *rel, unsigned int segno)
{
	struct pg_seg *s;
	int ret;

	if (segno < rel->nseg)
		return 0;
	s = realloc(rel->seg, (segno + 1) * sizeof(*s));
	if (!s)
		return -ENOMEM;
	rel->seg = s;
	while (rel->nseg <= segno) {
		struct pg_seg *g = &rel->seg[rel->nseg];

		memset(g, 0, sizeof(*g));
		g->f.fd = -1;
		if (rel->nseg)
			snprintf(g->name, sizeof(g->name), "%u%s.%u", rel->relfilenode, rel->suffix,
				 rel->nseg);
		else
			snprintf(g->name, sizeof(g->name), "%u%s", rel->relfilenode, rel->suffix);
		/* mdcreate / _mdfd_openseg(O_CREAT) */
		ret = wl_open(pg->c, &g->f, rel->dirfd, rel->dir_ino, g->name,
			      O_RDWR | O_CREAT | O_EXCL, 0600);
		if (ret)
			return ret;
		g->f.name = g->name;
		atomic_init(&g->need_sync, 0);
		rel->nseg++;
	}
	return 0;
}

static struct pg_seg *seg_of(struct pg_rel *rel, uint32_t blk, uint64_t *off)
{
	*off = (uint64_t)(blk % PG_RELSEG_BLOCKS) * PG_BLCKSZ;
	return &rel->seg[blk / PG_RELSEG_BLOCKS];
}

int pg_rel_extend(struct pg *pg, enum pg_relid id, uint32_t n, int zero_write)
{
	struct pg_rel *rel = &pg->rel[id];
	uint32_t first, b;
	int ret;

	pthread_mutex_lock(&pg->pool.lock);
	first = rel->nblocks;
	if (first + n > rel->cap) {
		uint32_t cap = (first + n) * 2 + 64;
		uint16_t *e = realloc(rel->epoch, cap * sizeof(*e));

		if (!e) {
			pthread_mutex_unlock(&pg->pool.lock);
			return -ENOMEM;
		}
		memset(e + rel->cap, 0, (cap - rel->cap) * sizeof(*e));
		rel->epoch = e;
		rel->cap = cap;
	}
	for (b = first; b < first + n; b++)
		rel->epoch[b] = (uint16_t)atomic_load(&pg->epoch);
	rel->nblocks = first + n;
	pthread_mutex_unlock(&pg->pool.lock);
	ret = pg_rel_open_seg(pg, rel, first + n ? (first + n - 1) / PG_RELSEG_BLOCKS : 0);
	if (ret || !zero_write)
		return ret;
	atomic_fetch_add(&pg->cnt.extends, 1);
	if (pg->o->era >= IOTAP_PGSQL_17 && n > 8) {
		/* 16+: smgrzeroextend of many blocks is one posix_fallocate */
		for (b = first; b < first + n && !ret;) {
			uint64_t off;
			struct pg_seg *s = seg_of(rel, b, &off);
			uint32_t k = PG_RELSEG_BLOCKS - b % PG_RELSEG_BLOCKS;

			if (k > first + n - b)
				k = first + n - b;
			ret = wl_fallocate(pg->c, &s->f, 0, off, (uint64_t)k * PG_BLCKSZ);
			atomic_store(&s->need_sync, 1);
			b += k;
		}
		return ret;
	}
	/* smgrextend: one zero page written at the end, per block */
	for (b = first; b < first + n && !ret; b++) {
		uint64_t off;
		struct pg_seg *s = seg_of(rel, b, &off);
		ssize_t w = wl_pwrite(pg->c, &s->f, pg->wal.zero, PG_BLCKSZ, off);

		ret = w < 0 ? (int)w : 0;
		atomic_store(&s->need_sync, 1);
	}
	return ret;
}

/* --- the buffer table ------------------------------------------------------ */

static int64_t ht_find(struct pg_pool *p, uint64_t tag)
{
	uint32_t *id = iotap_map_get(&p->tab, tag);

	return id ? (int64_t)*id : -1;
}

/* Cannot fail: pg_pool_init sized the map for every buffer. */
static void ht_insert(struct pg_pool *p, uint64_t tag, uint32_t id)
{
	uint32_t *v;

	iotap_map_put(&p->tab, tag, (void **)&v);
	*v = id;
}

int pg_pool_init(struct pg *pg)
{
	struct pg_pool *p = &pg->pool;
	uint32_t i;

	p->n = (uint32_t)(pg->o->shared_buffers / PG_BLCKSZ);
	p->buf = calloc(p->n, sizeof(*p->buf));
	if (!p->buf)
		return -ENOMEM;
	/* room for all n tags up front, so that no insertion grows (or fails) */
	iotap_map_init(&p->tab, sizeof(uint32_t));
	while ((uint64_t)p->n * 4 > p->tab.cap * 3)
		if (iotap_map_grow(&p->tab))
			return -ENOMEM;
	for (i = 0; i < p->n; i++)
		p->buf[i].tag = PG_NO_TAG;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->io_done, NULL);
	return 0;
}

void pg_pool_release(struct pg *pg)
{
	free(pg->pool.buf);
	pg->pool.buf = NULL;
	iotap_map_release(&pg->pool.tab);
}

/* Full-page image needed for a change to @blk now? Sets its epoch. pool.lock held. */
static uint32_t fpw_of(struct pg *pg, struct pg_rel *rel, uint32_t blk)
{
	uint16_t e = (uint16_t)atomic_load(&pg->epoch);

	if (blk >= rel->cap || rel->epoch[blk] == e)
		return 0;
	rel->epoch[blk] = e;
	if (!pg->o->full_page_writes || !rel->fill)
		return 0;
	atomic_fetch_add(&pg->cnt.fpw, 1);
	return rel->fill;
}

static int write_buf_page(struct pg *pg, enum pg_role role, uint64_t tag, struct pg_wb *wb)
{
	struct pg_rel *rel = &pg->rel[tag >> 32];
	uint32_t blk = (uint32_t)tag;
	struct pg_seg *s;
	uint64_t off;
	ssize_t n;

	s = seg_of(rel, blk, &off);
	n = wl_pwrite(pg->c, &s->f, pg->page, PG_BLCKSZ, off);
	if (n < 0)
		return (int)n;
	/* register_dirty_segment: the checkpointer fsyncs it */
	atomic_store(&s->need_sync, 1);
	atomic_fetch_add(&pg->cnt.data_writes, 1);
	if (role == PG_R_CKPT)
		atomic_fetch_add(&pg->cnt.writes_ckpt, 1);
	else if (role == PG_R_BGWRITER)
		atomic_fetch_add(&pg->cnt.writes_bgwriter, 1);
	else
		atomic_fetch_add(&pg->cnt.writes_backend, 1);
	return wb ? pg_wb_add(pg, wb, tag) : 0;
}

int pg_write_page(struct pg *pg, enum pg_role role, enum pg_relid id, uint32_t blk,
		  struct pg_wb *wb)
{
	return write_buf_page(pg, role, (uint64_t)id << 32 | blk, wb);
}

int pg_access(struct pg *pg, enum pg_relid id, uint32_t blk, int dirty, int is_new,
	      uint32_t *fpw_bytes)
{
	struct pg_pool *p = &pg->pool;
	struct pg_rel *rel = &pg->rel[id];
	uint64_t tag = (uint64_t)id << 32 | blk, old_tag, old_lsn;
	struct pg_buf *b;
	uint32_t loops = 0;
	int64_t id_found;
	int old_dirty, ret = 0;

	if (fpw_bytes)
		*fpw_bytes = 0;
	pthread_mutex_lock(&p->lock);
	for (;;) {
		id_found = ht_find(p, tag);
		if (id_found < 0 || !(p->buf[id_found].flags & PG_BUF_IO))
			break;
		pthread_cond_wait(&p->io_done, &p->lock);
	}
	if (id_found >= 0) {
		b = &p->buf[id_found];
		if (b->usage < 5)
			b->usage++;
		if (dirty) {
			b->flags |= PG_BUF_DIRTY;
			if (fpw_bytes)
				*fpw_bytes = fpw_of(pg, rel, blk);
		}
		pthread_mutex_unlock(&p->lock);
		return 0;
	}
	/* StrategyGetBuffer: the clock sweep */
	for (;;) {
		b = &p->buf[p->hand];
		p->hand = p->hand + 1 == p->n ? 0 : p->hand + 1;
		if (b->flags & PG_BUF_IO) {
			if (++loops > 12 * p->n) {
				pthread_cond_wait(&p->io_done, &p->lock);
				loops = 0;
			}
			continue;
		}
		if (b->usage) {
			b->usage--;
			continue;
		}
		break;
	}
	p->allocs++;
	old_tag = b->tag;
	old_lsn = b->lsn;
	old_dirty = (b->flags & (PG_BUF_VALID | PG_BUF_DIRTY)) == (PG_BUF_VALID | PG_BUF_DIRTY);
	if (old_tag != PG_NO_TAG)
		iotap_map_del(&p->tab, old_tag);
	b->tag = tag;
	b->flags = PG_BUF_IO;
	b->usage = 1;
	b->lsn = 0;
	ht_insert(p, tag, (uint32_t)(b - p->buf));
	if (dirty && fpw_bytes)
		*fpw_bytes = fpw_of(pg, rel, blk);
	pthread_mutex_unlock(&p->lock);

	if (old_dirty) {
		/* FlushBuffer: the WAL rule first */
		ret = pg_wal_flush(pg, old_lsn, 0);
		if (!ret)
			ret = write_buf_page(pg, PG_R_BACKEND, old_tag, NULL);
	}
	if (!ret && !is_new) {
		uint64_t off;
		struct pg_seg *s = seg_of(rel, blk, &off);
		char buf[PG_BLCKSZ] __attribute__((aligned(64)));
		ssize_t n = wl_pread(pg->c, &s->f, buf, PG_BLCKSZ, off);

		if (n < 0)
			ret = (int)n;
		atomic_fetch_add(&pg->cnt.data_reads, 1);
	}
	pthread_mutex_lock(&p->lock);
	b->flags = PG_BUF_VALID | (dirty ? PG_BUF_DIRTY : 0);
	pthread_cond_broadcast(&p->io_done);
	pthread_mutex_unlock(&p->lock);
	return ret;
}

int pg_resident(struct pg *pg, enum pg_relid id, uint32_t blk)
{
	int64_t i;

	pthread_mutex_lock(&pg->pool.lock);
	i = ht_find(&pg->pool, (uint64_t)id << 32 | blk);
	pthread_mutex_unlock(&pg->pool.lock);
	return i >= 0;
}

void pg_set_lsn(struct pg *pg, enum pg_relid id, uint32_t blk, uint64_t lsn)
{
	struct pg_pool *p = &pg->pool;
	int64_t i;

	pthread_mutex_lock(&p->lock);
	i = ht_find(p, (uint64_t)id << 32 | blk);
	if (i >= 0 && p->buf[i].lsn < lsn)
		p->buf[i].lsn = lsn;
	pthread_mutex_unlock(&p->lock);
}

/* --- writeback hints (pg_flush_data) ------------------------------------------ */

static int cmp_tag(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int pg_wb_issue(struct pg *pg, struct pg_wb *wb)
{
	unsigned int i = 0;
	int ret = 0;

	qsort(wb->tag, wb->n, sizeof(*wb->tag), cmp_tag);
	while (i < wb->n && !ret) {
		unsigned int j = i + 1;
		struct pg_rel *rel = &pg->rel[wb->tag[i] >> 32];
		uint32_t blk = (uint32_t)wb->tag[i];
		struct pg_seg *s;
		uint64_t off;

		/* IssuePendingWritebacks: one call per run of consecutive blocks in a segment */
		while (j < wb->n && wb->tag[j] == wb->tag[j - 1] + 1 &&
		       (uint32_t)wb->tag[j] % PG_RELSEG_BLOCKS)
			j++;
		while (j < wb->n && wb->tag[j] == wb->tag[j - 1])
			j++;
		s = seg_of(rel, blk, &off);
		ret = wl_sync_file_range(pg->c, &s->f, off,
					 (uint64_t)((uint32_t)wb->tag[j - 1] - blk + 1) * PG_BLCKSZ,
					 SYNC_FILE_RANGE_WRITE);
		atomic_fetch_add(&pg->cnt.writebacks, 1);
		i = j;
	}
	wb->n = 0;
	return ret;
}

int pg_wb_add(struct pg *pg, struct pg_wb *wb, uint64_t tag)
{
	if (!wb->max)
		return 0;
	wb->tag[wb->n++] = tag;
	return wb->n >= wb->max ? pg_wb_issue(pg, wb) : 0;
}

static int wb_init(struct pg_wb *wb, uint64_t flush_after)
{
	wb->n = 0;
	wb->max = (unsigned int)(flush_after / PG_BLCKSZ);
	wb->tag = wb->max ? calloc(wb->max, sizeof(*wb->tag)) : NULL;
	return wb->max && !wb->tag ? -ENOMEM : 0;
}

/*
 * Write buffer @i if it is still dirty (and, with @need_ckpt, still flagged
 * for the checkpoint). Return: 1 written, 0 skipped, -errno.
 */
static int sync_one(struct pg *pg, enum pg_role role, uint32_t i, int need_ckpt, int only_unused,
		    struct pg_wb *wb)
{
	struct pg_pool *p = &pg->pool;
	struct pg_buf *b = &p->buf[i];
	uint64_t tag, lsn;
	int ret;

	pthread_mutex_lock(&p->lock);
	if (!(b->flags & PG_BUF_VALID) || !(b->flags & PG_BUF_DIRTY) || (b->flags & PG_BUF_IO) ||
	    (need_ckpt && !(b->flags & PG_BUF_CKPT)) || (only_unused && b->usage)) {
		b->flags &= (uint8_t)~(need_ckpt ? PG_BUF_CKPT : 0);
		pthread_mutex_unlock(&p->lock);
		return 0;
	}
	tag = b->tag;
	lsn = b->lsn;
	b->flags = (uint8_t)((b->flags & ~(PG_BUF_DIRTY | PG_BUF_CKPT)) | PG_BUF_IO);
	pthread_mutex_unlock(&p->lock);
	ret = pg_wal_flush(pg, lsn, 0);
	if (!ret)
		ret = write_buf_page(pg, role, tag, wb);
	pthread_mutex_lock(&p->lock);
	b->flags &= (uint8_t)~PG_BUF_IO;
	if (ret)
		b->flags |= PG_BUF_DIRTY;
	pthread_cond_broadcast(&p->io_done);
	pthread_mutex_unlock(&p->lock);
	return ret ? ret : 1;
}

/* --- the background writer (BgBufferSync) ----------------------------------------- */

int pg_bgwriter(struct pg *pg, struct pg_cpu *t)
{
	const struct iotap_workload_pgsql_opts *o = pg->o;
	struct pg_pool *p = &pg->pool;
	uint64_t last_allocs = 0, last_snap_ns = wl_now(), last_snap_lsn = 0;
	double smoothed = 0;
	struct pg_wb wb;
	int ret = wb_init(&wb, o->bgwriter_flush_after);

	while (!ret && !pg_stopping(pg)) {
		uint64_t allocs, recent, now;
		uint32_t i, start, scanned = 0, reusable = 0, written = 0;
		double upcoming;

		pg_nap(pg, o->bgwriter_delay_ns);
		if (pg_stopping(pg))
			break;
		pthread_mutex_lock(&p->lock);
		allocs = p->allocs;
		start = p->hand;
		pthread_mutex_unlock(&p->lock);
		recent = allocs - last_allocs;
		last_allocs = allocs;
		/* the smoothed allocation rate follows rises at once, falls over 16 rounds */
		if ((double)recent > smoothed)
			smoothed = (double)recent;
		else
			smoothed += ((double)recent - smoothed) / 16.0;
		upcoming = smoothed * o->bgwriter_lru_multiplier;
		for (i = start; scanned < p->n && reusable < upcoming && !ret &&
		     written < o->bgwriter_lru_maxpages; scanned++) {
			int w = sync_one(pg, PG_R_BGWRITER, i, 0, 1, &wb);

			if (w < 0)
				ret = w;
			written += w > 0;
			pthread_mutex_lock(&p->lock);
			reusable += !p->buf[i].usage;
			pthread_mutex_unlock(&p->lock);
			i = i + 1 == p->n ? 0 : i + 1;
		}
		if (!ret && wb.n)
			ret = pg_wb_issue(pg, &wb);
		/* LogStandbySnapshot every 15 s when WAL was written meanwhile */
		now = wl_now();
		if (!ret && o->era >= IOTAP_PGSQL_96 && now - last_snap_ns >= 15000000000ull) {
			uint64_t ins;

			pthread_mutex_lock(&pg->wal.insert_lock);
			ins = pg->wal.insert;
			pthread_mutex_unlock(&pg->wal.insert_lock);
			if (ins != last_snap_lsn) {
				last_snap_lsn = pg_wal_insert(pg, 50);
				pthread_mutex_lock(&pg->wal.write_lock);
				pg->wal.async_lsn = last_snap_lsn;
				pthread_mutex_unlock(&pg->wal.write_lock);
			}
			last_snap_ns = now;
		}
		pg_cpu_tick(pg, t);
	}
	free(wb.tag);
	return ret;
}

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
		int w = sync_one(pg, PG_R_CKPT, ids[i], 1, 0, wb);

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
	int ret = wb_init(&wb, o->checkpoint_flush_after);

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
