// SPDX-License-Identifier: MIT
/*
 * pgsql_buf.c - shared_buffers, relation files and the background writer,
 * as bufmgr.c, md.c and bgwriter.c do them; the checkpointer is
 * pgsql_ckpt.c
 *
 * Buffer pool (bufmgr.c, freelist.c): NBuffers descriptors found through
 * a hash of (relation, block); a miss takes the clock-sweep victim (usage
 * count 0, decremented on the way), writes it first if dirty (after
 * flushing the WAL up to its LSN: the WAL rule), then reads the page with
 * one 8 KiB pread (md.c: block b of a relation is at (b % 131072) * 8 KiB
 * of segment file b / 131072). Hits bump the usage count (at most 5).
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

int pg_wb_init(struct pg_wb *wb, uint64_t flush_after)
{
	wb->n = 0;
	wb->max = (unsigned int)(flush_after / PG_BLCKSZ);
	wb->tag = wb->max ? calloc(wb->max, sizeof(*wb->tag)) : NULL;
	return wb->max && !wb->tag ? -ENOMEM : 0;
}

int pg_sync_buf(struct pg *pg, enum pg_role role, uint32_t i, int need_ckpt, int only_unused,
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
	int ret = pg_wb_init(&wb, o->bgwriter_flush_after);

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
			int w = pg_sync_buf(pg, PG_R_BGWRITER, i, 0, 1, &wb);

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
