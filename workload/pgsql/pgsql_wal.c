// SPDX-License-Identifier: MIT
/*
 * pgsql_wal.c - PostgreSQL's write-ahead log, as xlog.c and walwriter.c
 * write it
 *
 * Positions are byte positions in the WAL stream (an LSN): segment number
 * = lsn / 16 MiB, offset in the segment file = lsn % 16 MiB. Every 8 KiB
 * WAL page starts with a header (24 bytes, 40 on a segment's first page),
 * which insertion skips as XLogBytePosToRecPtr does.
 *
 * XLogWrite (xlog_write below, under write_lock = WALWriteLock): writes
 * whole pages from the page holding the last written byte up to the page
 * holding the target, so the partial tail page of the previous write is
 * written again; one pwrite per contiguous run, cut at the end of a
 * segment (that segment is then synced at once, "finishing_seg") and at
 * the wrap of the wal_buffers ring; then one fdatasync (wal_sync_method)
 * of the open segment when a flush is asked. XLogFlush (pg_wal_flush)
 * flushes everything inserted when it takes the lock, so the clients
 * waiting on the lock behind it find their commit durable: group commit.
 * The WAL writer writes up to LogwrtRqst.Write (the end of the last record
 * that crossed a page boundary, or of the last write), backed off to a
 * page boundary.
 *
 * Segments: XLogFileInit creates a missing segment as xlogtemp.PID,
 * zero-filled (8.4/9.6: 8 KiB write()s; 15/17: 256 KiB pwritev()s, 32
 * pages each), fsyncs and closes it, then installs it under its name
 * (15+: durable_rename = fsync old, rename, fsync new, fsync pg_wal; 9.6:
 * the same around link+unlink, modelled as rename; 8.4: plain rename).
 * At a checkpoint's end, segments before the redo segment are recycled
 * under future names (XLOGfileslop's bound) or removed, and the next
 * segment is preallocated when the current one is 3/4 full.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pgsql_i.h"

void pg_wal_seg_name(uint64_t segno, char *buf, size_t len)
{
	/* timeline 1; 256 segments of 16 MiB per "log" */
	snprintf(buf, len, "%08X%08X%08X", 1u, (unsigned int)(segno / 256),
		 (unsigned int)(segno % 256));
}

/* Where @len record bytes starting at @pos end, skipping page headers. */
static uint64_t wal_advance(uint64_t pos, uint64_t len)
{
	while (len) {
		uint64_t in = pos % PG_BLCKSZ, room;

		if (!in) {
			pos += pos % PG_WAL_SEG ? PG_WAL_SHORT_PHD : PG_WAL_LONG_PHD;
			in = pos % PG_BLCKSZ;
		}
		room = PG_BLCKSZ - in;
		if (room > len)
			room = len;
		pos += room;
		len -= room;
	}
	return pos;
}

int pg_fsync_fname(struct pg *pg, int dirfd, uint64_t parent, const char *name, int isdir)
{
	struct iotap_workload_ctx *c = pg->c;
	struct wl_file f;
	struct wl_dir d;
	int ret;

	atomic_fetch_add(&pg->cnt.fsyncs, 1);
	if (isdir) {
		ret = wl_opendir(c, &d, dirfd, name);
		if (ret)
			return ret;
		ret = wl_fsync_dir(c, d.fd, d.ino);
		wl_closedir(c, &d);
		return ret;
	}
	ret = wl_open(c, &f, dirfd, parent, name, O_RDWR, 0);
	if (ret)
		return ret;
	ret = wl_fsync(c, &f, 0);
	if (wl_close(c, &f) && !ret)
		ret = -EIO;
	return ret;
}

/* InstallXLogFileSegment's rename, as durable as the era makes it. */
static int wal_install(struct pg *pg, const char *from, const char *to)
{
	struct pg_wal *w = &pg->wal;
	int durable = pg->o->era >= IOTAP_PGSQL_96, ret;

	if (durable) {
		ret = pg_fsync_fname(pg, w->dirfd, w->dir_ino, from, 0);
		if (ret)
			return ret;
	}
	ret = wl_rename(pg->c, w->dirfd, w->dir_ino, from, w->dirfd, w->dir_ino, to);
	if (ret || !durable)
		return ret;
	ret = pg_fsync_fname(pg, w->dirfd, w->dir_ino, to, 0);
	if (!ret)
		ret = pg_fsync_fname(pg, w->dirfd, w->dir_ino, ".", 1);
	return ret;
}

int pg_wal_seg_create(struct pg *pg, uint64_t segno, int *added)
{
	struct iotap_workload_ctx *c = pg->c;
	struct pg_wal *w = &pg->wal;
	char tmp[32], name[32];
	struct wl_file f;
	uint64_t off;
	int ret;

	*added = 0;
	if (segno <= w->seg_hi)
		return 0;
	snprintf(tmp, sizeof(tmp), "xlogtemp.%u", (unsigned int)getpid());
	ret = wl_unlink_old(c, w->dirfd, w->dir_ino, tmp);
	if (ret)
		return ret;
	ret = wl_open(c, &f, w->dirfd, w->dir_ino, tmp, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (ret)
		return ret;
	for (off = 0; off < PG_WAL_SEG && !ret; off += w->zero_len) {
		ssize_t n = w->zero_len == PG_BLCKSZ ? wl_write(c, &f, w->zero, w->zero_len) :
			    wl_pwrite(c, &f, w->zero, w->zero_len, off);

		if (n >= 0 && (size_t)n != w->zero_len)
			ret = wl_fail(c, -ENOSPC, "write '%s': short", tmp);
		else if (n < 0)
			ret = (int)n;
	}
	if (!ret) {
		atomic_fetch_add(&pg->cnt.fsyncs, 1);
		ret = wl_fsync(c, &f, 0);
	}
	if (wl_close(c, &f) && !ret)
		ret = -EIO;
	if (ret)
		return ret;
	pg_wal_seg_name(segno, name, sizeof(name));
	ret = wal_install(pg, tmp, name);
	if (ret)
		return ret;
	w->seg_hi = segno;
	*added = 1;
	return 0;
}

static int wal_sync(struct pg *pg, int commit)
{
	struct pg_wal *w = &pg->wal;
	const struct iotap_workload_pgsql_opts *o = pg->o;
	uint64_t t;
	int ret = 0;

	if (o->wal_sync_method == IOTAP_PGSQL_OPEN_DATASYNC ||
	    o->wal_sync_method == IOTAP_PGSQL_OPEN_SYNC)
		return 0;	/* every write was synchronous */
	/* the call's own traced duration: the trace's commit latency is the same figure */
	ret = wl_fsync_ns(pg->c, &w->f, o->wal_sync_method == IOTAP_PGSQL_FDATASYNC, &t);
	atomic_fetch_add(&pg->cnt.wal_syncs, 1);
	if (pg->sync_steady) {
		if (iotap_hist_add(&pg->sync, t))
			ret = ret ? ret : -ENOMEM;
		if (commit)
			pg->sync_commit++;
	}
	return ret;
}

/* Open segment @segno for writing (XLogFileInit + XLogFileOpen). write_lock held. */
static int wal_open_seg(struct pg *pg, uint64_t segno)
{
	struct pg_wal *w = &pg->wal;
	int fl = O_RDWR, added, ret;

	if (w->f.fd >= 0 && w->open_segno == segno)
		return 0;
	if (w->f.fd >= 0) {
		ret = wl_close(pg->c, &w->f);
		if (ret)
			return ret;
	}
	pthread_mutex_lock(&w->seg_lock);
	ret = pg_wal_seg_create(pg, segno, &added);
	pthread_mutex_unlock(&w->seg_lock);
	if (ret)
		return ret;
	if (pg->o->wal_sync_method == IOTAP_PGSQL_OPEN_DATASYNC)
		fl |= O_DSYNC;
	else if (pg->o->wal_sync_method == IOTAP_PGSQL_OPEN_SYNC)
		fl |= O_SYNC;
	pg_wal_seg_name(segno, w->fname, sizeof(w->fname));
	ret = wl_open(pg->c, &w->f, w->dirfd, w->dir_ino, w->fname, fl, 0);
	if (ret)
		return ret;
	w->open_segno = segno;
	return 0;
}

static void request_checkpoint(struct pg *pg)
{
	pthread_mutex_lock(&pg->state_lock);
	pg->ckpt_request = 1;
	pthread_cond_broadcast(&pg->state_cond);
	pthread_mutex_unlock(&pg->state_lock);
}

/* XLogWrite: write up to @target, then sync if @flush. write_lock held. */
static int xlog_write(struct pg *pg, uint64_t target, int flush, int commit)
{
	struct pg_wal *w = &pg->wal;
	uint64_t from = atomic_load(&w->written);
	int ret = 0;

	while (from < target) {
		uint64_t segno = from / PG_WAL_SEG, seg_end = (segno + 1) * PG_WAL_SEG;
		uint64_t end = target < seg_end ? target : seg_end;
		uint64_t p = from - from % PG_BLCKSZ;
		uint64_t wend = (end + PG_BLCKSZ - 1) / PG_BLCKSZ * PG_BLCKSZ;

		ret = wal_open_seg(pg, segno);
		if (ret)
			return ret;
		while (p < wend) {
			uint64_t ring_left = (w->pages - (p / PG_BLCKSZ) % w->pages) * PG_BLCKSZ;
			uint64_t n = wend - p < ring_left ? wend - p : ring_left;
			ssize_t got = wl_pwrite(pg->c, &w->f, w->data, n, p % PG_WAL_SEG);

			if (got < 0)
				return (int)got;
			if ((uint64_t)got != n)
				return wl_fail(pg->c, -ENOSPC, "write '%s': short", w->fname);
			atomic_fetch_add(&pg->cnt.wal_writes, 1);
			atomic_fetch_add(&pg->cnt.wal_write_bytes, n);
			p += n;
		}
		atomic_store(&w->written, end);
		/* XLogWrite's shared status: LogwrtRqst.Write is at least what is written */
		if (atomic_load(&w->rqst_write) < end)
			atomic_store(&w->rqst_write, end);
		if (end == seg_end) {
			/* a finished segment is synced at once */
			ret = wal_sync(pg, commit);
			if (ret)
				return ret;
			atomic_store(&w->flushed, end);
			if (segno >= pg->ckpt_redo / PG_WAL_SEG + pg->ckpt_segs - 1 &&
			    atomic_load(&pg->state) != PG_ST_STOP)
				request_checkpoint(pg);
		}
		from = end;
	}
	if (flush && atomic_load(&w->flushed) < target) {
		ret = wal_open_seg(pg, (target - 1) / PG_WAL_SEG);
		if (!ret)
			ret = wal_sync(pg, commit);
		if (!ret)
			atomic_store(&w->flushed, target);
	}
	return ret;
}

uint64_t pg_wal_insert(struct pg *pg, uint32_t len)
{
	struct pg_wal *w = &pg->wal;
	uint64_t start, end, cap = (w->pages - 1) * PG_BLCKSZ;

	len = (len + 7) & ~7u;		/* MAXALIGN */
	pthread_mutex_lock(&w->insert_lock);
	start = w->insert;
	end = wal_advance(start, len);
	w->insert = end;
	/* XLogInsertRecord: a record that crossed a page boundary advances LogwrtRqst.Write */
	if (start / PG_BLCKSZ != end / PG_BLCKSZ && atomic_load(&w->rqst_write) < end)
		atomic_store(&w->rqst_write, end);
	pthread_mutex_unlock(&w->insert_lock);
	atomic_fetch_add(&pg->cnt.wal_bytes, len);
	/* (a flush may already have written past @end) */
	if (end > atomic_load(&w->written) + cap) {
		/* AdvanceXLInsertBuffer: the ring is full, write out the oldest pages */
		pthread_mutex_lock(&w->write_lock);
		/* one page at a time, as each new page needs its buffer */
		while (end > atomic_load(&w->written) + cap) {
			uint64_t to = atomic_load(&w->written) / PG_BLCKSZ * PG_BLCKSZ + PG_BLCKSZ;
			int ret = xlog_write(pg, to, 0, 0);

			if (ret) {
				pg_set_error(pg, ret);
				break;
			}
		}
		pthread_mutex_unlock(&w->write_lock);
	}
	return end;
}

int pg_wal_flush(struct pg *pg, uint64_t lsn, int commit)
{
	struct pg_wal *w = &pg->wal;
	uint64_t target;
	int ret;

	if (atomic_load(&w->flushed) >= lsn)
		return 0;
	pthread_mutex_lock(&w->write_lock);
	if (atomic_load(&w->flushed) >= lsn) {
		/* flushed by the holder we waited for: group commit */
		pthread_mutex_unlock(&w->write_lock);
		return 0;
	}
	/*
	 * XLogFlush: WaitXLogInsertionsToFinish(max(record, LogwrtRqst.Write))
	 * returns the head of the reserved WAL when no insertion is in progress
	 * (finishedUpto = reservedUpto), and the backend takes WALWriteLock
	 * right after it: everything inserted so far is written and synced, so
	 * the clients waiting behind it whose commits are in find them durable
	 * (group commit)
	 */
	pthread_mutex_lock(&w->insert_lock);
	target = w->insert;
	pthread_mutex_unlock(&w->insert_lock);
	ret = xlog_write(pg, target, 1, commit);
	pthread_mutex_unlock(&w->write_lock);
	return ret;
}

/* walwriter.c: XLogBackgroundFlush every wal_writer_delay. */
int pg_walwriter(struct pg *pg, struct pg_cpu *t)
{
	const struct iotap_workload_pgsql_opts *o = pg->o;
	struct pg_wal *w = &pg->wal;
	uint64_t flush_pages = o->wal_writer_flush_after / PG_BLCKSZ;
	int ret = 0;

	while (!ret && !pg_stopping(pg)) {
		uint64_t ins, target, now;
		int flush = 0;

		pg_nap(pg, o->wal_writer_delay_ns);
		if (pg_stopping(pg))
			break;
		pthread_mutex_lock(&w->write_lock);
		/* XLogBackgroundFlush: LogwrtRqst.Write, backed off to the last completed page */
		pthread_mutex_lock(&w->insert_lock);
		ins = atomic_load(&w->rqst_write);
		target = ins - ins % PG_BLCKSZ;
		if (target <= atomic_load(&w->flushed) && w->async_lsn > target)
			target = w->async_lsn;
		pthread_mutex_unlock(&w->insert_lock);
		if (target > atomic_load(&w->flushed)) {
			now = wl_now();
			if (!flush_pages || !w->last_flush_ns ||
			    now - w->last_flush_ns >= o->wal_writer_delay_ns ||
			    target / PG_BLCKSZ - atomic_load(&w->flushed) / PG_BLCKSZ >= flush_pages) {
				flush = 1;
				w->last_flush_ns = now;
			}
			if (flush || target > atomic_load(&w->written))
				ret = xlog_write(pg, target, flush, 0);
		}
		pthread_mutex_unlock(&w->write_lock);
		pg_cpu_tick(pg, t);
	}
	return ret;
}

int pg_wal_recycle(struct pg *pg, uint64_t redo, uint32_t *added, uint32_t *removed,
		   uint32_t *recycled)
{
	const struct iotap_workload_pgsql_opts *o = pg->o;
	struct pg_wal *w = &pg->wal;
	uint64_t redo_seg = redo / PG_WAL_SEG, max_seg, s, ins;
	char old[32], to[32];
	int ret = 0, add = 0;

	pthread_mutex_lock(&w->insert_lock);
	ins = w->insert;
	pthread_mutex_unlock(&w->insert_lock);
	if (o->checkpoint_segments) {
		/* 8.4: XLOGfileslop = 2 * checkpoint_segments + 1 ahead of the insert point */
		max_seg = ins / PG_WAL_SEG + 2 * (uint64_t)o->checkpoint_segments + 1;
	} else {
		/* XLOGfileslop(): the distance estimate, between min and max_wal_size */
		double dist = (1.0 + o->completion_target) * pg->ckpt_distance_est * 1.10;
		uint64_t lo = redo_seg + o->min_wal_size / PG_WAL_SEG - 1;
		uint64_t hi = redo_seg + o->max_wal_size / PG_WAL_SEG - 1;

		max_seg = (uint64_t)ceil(((double)redo + dist) / (double)PG_WAL_SEG);
		if (max_seg < lo)
			max_seg = lo;
		if (max_seg > hi)
			max_seg = hi;
	}
	pthread_mutex_lock(&w->seg_lock);
	for (s = w->seg_lo; s < redo_seg && !ret; s++) {
		pg_wal_seg_name(s, old, sizeof(old));
		if (w->seg_hi + 1 <= max_seg) {
			pg_wal_seg_name(w->seg_hi + 1, to, sizeof(to));
			ret = wal_install(pg, old, to);
			if (!ret) {
				w->seg_hi++;
				(*recycled)++;
			}
		} else {
			ret = wl_unlink(pg->c, w->dirfd, w->dir_ino, old, 0);
			if (!ret)
				(*removed)++;
		}
		if (!ret)
			w->seg_lo = s + 1;
	}
	/* PreallocXlogFiles: the next segment once the current one is 3/4 used */
	if (!ret && ins % PG_WAL_SEG >= PG_WAL_SEG / 4 * 3)
		ret = pg_wal_seg_create(pg, ins / PG_WAL_SEG + 1, &add);
	pthread_mutex_unlock(&w->seg_lock);
	*added += (uint32_t)add;
	return ret;
}

int pg_wal_init(struct pg *pg)
{
	const struct iotap_workload_pgsql_opts *o = pg->o;
	struct pg_wal *w = &pg->wal;
	uint64_t bytes = o->wal_buffers;

	if (!bytes) {
		/* wal_buffers = -1: shared_buffers / 32, 64 KiB .. one segment */
		bytes = o->shared_buffers / 32;
		if (bytes < (64u << 10))
			bytes = 64u << 10;
		if (bytes > PG_WAL_SEG)
			bytes = PG_WAL_SEG;
	}
	/* check_wal_buffers(): a value set below 4 pages is taken as 4 */
	w->pages = bytes / PG_BLCKSZ;
	if (w->pages < 4)
		w->pages = 4;
	w->data = wl_buf_alloc(w->pages * PG_BLCKSZ);
	w->zero_len = o->era >= IOTAP_PGSQL_15 ? 32 * PG_BLCKSZ : PG_BLCKSZ;
	w->zero = wl_buf_alloc(256u << 10);	/* also the source of pgsql.c's small files */
	if (!w->data || !w->zero)
		return -ENOMEM;
	memset(w->data, 0x5a, w->pages * PG_BLCKSZ);
	w->f.fd = -1;
	w->open_segno = UINT64_MAX;
	pthread_mutex_init(&w->insert_lock, NULL);
	pthread_mutex_init(&w->write_lock, NULL);
	pthread_mutex_init(&w->seg_lock, NULL);
	/* after initdb: its checkpoint record ends 5 MiB into segment 1 (15: 0/1500718) */
	w->seg_lo = w->seg_hi = 1;
	w->insert = PG_WAL_SEG + 0x500718 + 120;
	pg->ckpt_redo = w->insert;	/* the distance of the first checkpoint counts from here */
	atomic_init(&w->written, w->insert);
	atomic_init(&w->flushed, w->insert);
	atomic_init(&w->rqst_write, w->insert);
	return 0;
}

void pg_wal_release(struct pg *pg)
{
	struct pg_wal *w = &pg->wal;

	if (w->f.fd >= 0)
		wl_close(pg->c, &w->f);
	free(w->data);
	free(w->zero);
	w->data = w->zero = NULL;
}
