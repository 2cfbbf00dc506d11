// SPDX-License-Identifier: MIT
/*
 * dedup_index.c - the dedup model's fingerprint cache and on-disk index
 *
 * The index is a file of 4 KiB buckets (dedup_i.h says how entries find
 * their bucket and spill). What a look-up costs is what the media server
 * pays: a cache hit is free, a miss is one random 4 KiB pread of the home
 * bucket (plus one per spill bucket), whose latency is recorded; the
 * answer comes from the bytes read, so the index file really is the
 * index. New entries and changes go into an in-memory copy of their
 * bucket and are written back in batches: the dirty buckets sorted by
 * offset, one 4 KiB pwrite each, then one fdatasync, as a database writes
 * its dirty pages at a checkpoint.
 *
 * Bucket layout: u32 count, u32 flags (bit 0: an entry spilled into the
 * next bucket), 24 bytes zero, then up to 127 32-byte entries.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "dedup_i.h"

#define WAYS		8
#define SPILLED		1u

struct bucket_hdr {
	uint32_t count, flags;
	uint8_t pad[24];
};

static struct dd_entry *slots(uint8_t *page)
{
	return (struct dd_entry *)(page + sizeof(struct bucket_hdr));
}

/* The index's memory (not its file, not its lock). */
static void index_free(struct dd_index *ix)
{
	free(ix->cache);
	free(ix->age);
	iotap_map_release(&ix->dirty);
	iotap_hist_release(&ix->miss);
	free(ix->pool);
	free(ix->sorted);
}

int dd_index_open(struct dd_index *ix, struct iotap_workload_ctx *c, int dirfd,
		  uint64_t parent, uint64_t nbuckets, uint64_t cache_entries)
{
	uint64_t sets = 1;
	int ret;

	memset(ix, 0, sizeof(*ix));
	ix->c = c;
	ix->nbuckets = nbuckets;
	while (sets * 2 * WAYS <= cache_entries)
		sets *= 2;
	ix->sets = sets;
	ix->batch = 256;		/* 1 MiB of dirty buckets */
	iotap_map_init(&ix->dirty, sizeof(uint8_t *));
	ix->cache = calloc(sets * WAYS, sizeof(*ix->cache));
	ix->age = calloc(sets * WAYS, sizeof(*ix->age));
	/* up to batch + one per stream thread in flight, and spills: twice the batch */
	ix->pool = wl_buf_alloc(2 * ix->batch * DD_PAGE);
	ix->sorted = calloc(2 * ix->batch, sizeof(*ix->sorted));
	if (!ix->cache || !ix->age || !ix->pool || !ix->sorted) {
		ret = -ENOMEM;
		goto err_free;
	}
	ret = wl_open(c, &ix->f, dirfd, parent, "index", O_RDWR | O_CREAT | O_EXCL, 0644);
	if (ret)
		goto err_free;
	/* the index is made at its full size, as a database file is */
	ret = wl_fallocate(c, &ix->f, 0, 0, nbuckets * DD_PAGE);
	if (ret)
		goto err_close;
	pthread_mutex_init(&ix->lock, NULL);
	return 0;

err_close:
	wl_close(c, &ix->f);
err_free:
	index_free(ix);
	memset(ix, 0, sizeof(*ix));
	ix->f.fd = -1;
	return ret;
}

void dd_index_close(struct dd_index *ix)
{
	if (!ix->cache)
		return;
	if (ix->f.fd >= 0)
		wl_close(ix->c, &ix->f);
	pthread_mutex_destroy(&ix->lock);
	index_free(ix);
	ix->cache = NULL;
}

/* --- cache (lock held) ---------------------------------------------------- */

static int cache_find(struct dd_index *ix, const struct dd_fp *fp)
{
	uint64_t set = (fp->lo >> 7) & (ix->sets - 1), i;
	struct dd_fp *w = &ix->cache[set * WAYS];

	for (i = 0; i < WAYS; i++)
		if (w[i].lo == fp->lo && w[i].hi == fp->hi) {
			ix->age[set * WAYS + i] = ++ix->clock;
			return 1;
		}
	return 0;
}

static void cache_put(struct dd_index *ix, const struct dd_fp *fp)
{
	uint64_t set = (fp->lo >> 7) & (ix->sets - 1), i, victim = 0;
	struct dd_fp *w = &ix->cache[set * WAYS];
	uint64_t *age = &ix->age[set * WAYS];

	for (i = 0; i < WAYS; i++) {
		if (w[i].lo == fp->lo && w[i].hi == fp->hi) {
			age[i] = ++ix->clock;
			return;
		}
		if (age[i] < age[victim])
			victim = i;
	}
	w[victim] = *fp;
	age[victim] = ++ix->clock;
}

static void cache_drop(struct dd_index *ix, const struct dd_fp *fp)
{
	uint64_t set = (fp->lo >> 7) & (ix->sets - 1), i;
	struct dd_fp *w = &ix->cache[set * WAYS];

	for (i = 0; i < WAYS; i++)
		if (w[i].lo == fp->lo && w[i].hi == fp->hi) {
			memset(&w[i], 0, sizeof(w[i]));
			ix->age[set * WAYS + i] = 0;
		}
}

void dd_index_cache(struct dd_index *ix, const struct dd_fp *fp)
{
	pthread_mutex_lock(&ix->lock);
	cache_put(ix, fp);
	pthread_mutex_unlock(&ix->lock);
}

/* --- dirty buckets (lock held) -------------------------------------------- */

static uint8_t *dirty_find(struct dd_index *ix, uint64_t b)
{
	uint8_t **p = iotap_map_get(&ix->dirty, b);

	return p ? *p : NULL;
}

/* A dirty copy of bucket @b made from @page (the bytes just read). */
static uint8_t *dirty_add(struct dd_index *ix, uint64_t b, const uint8_t *page)
{
	uint8_t *p, **slot;

	if (ix->pool_used >= 2 * ix->batch)
		return NULL;
	if (iotap_map_put(&ix->dirty, b, (void **)&slot) < 0)
		return NULL;
	p = ix->pool + ix->pool_used++ * DD_PAGE;
	memcpy(p, page, DD_PAGE);
	*slot = p;
	ix->ndirty++;
	return p;
}

static int cmp_dirty(const void *a, const void *b)
{
	const struct dd_dirty *x = a, *y = b;

	return x->b < y->b ? -1 : x->b > y->b;
}

static int flush_locked(struct dd_index *ix)
{
	struct dd_dirty *d = ix->sorted;
	uint64_t i, n = 0, pos = 0, b;
	uint8_t **p;
	int ret = 0;

	if (!ix->ndirty)
		return 0;
	/* the table in bucket order, written, then emptied */
	while ((p = iotap_map_next(&ix->dirty, &pos, &b)) && n < 2 * ix->batch) {
		d[n].b = b;
		d[n++].page = *p;
	}
	qsort(d, n, sizeof(*d), cmp_dirty);
	for (i = 0; i < n && !ret; i++) {
		ssize_t w = wl_pwrite(ix->c, &ix->f, d[i].page, DD_PAGE, d[i].b * DD_PAGE);

		if (w < 0)
			ret = (int)w;
		else if (w != DD_PAGE)
			ret = wl_fail(ix->c, -ENOSPC, "write 'index': short write");
		else
			ix->written += DD_PAGE;
	}
	if (!ret)
		ret = wl_fsync(ix->c, &ix->f, 1);
	iotap_map_clear(&ix->dirty);
	ix->ndirty = 0;
	ix->pool_used = 0;
	return ret;
}

int dd_index_flush(struct dd_index *ix)
{
	int ret;

	pthread_mutex_lock(&ix->lock);
	ret = flush_locked(ix);
	pthread_mutex_unlock(&ix->lock);
	return ret;
}

/*
 * The bucket @b as it stands: its dirty copy, or read from the file (the
 * lock is dropped for the read; a copy made meanwhile by another thread
 * wins). With @make_dirty, returns a dirty copy the caller may change.
 */
static int get_bucket(struct dd_index *ix, uint64_t b, uint8_t *scratch, int make_dirty,
		      uint8_t **out)
{
	uint8_t *p = dirty_find(ix, b);
	uint64_t ns;
	ssize_t n;

	if (p) {
		*out = p;
		return 0;
	}
	pthread_mutex_unlock(&ix->lock);
	/* the read's own time, as its OP record has it: report's figure is the run's */
	n = wl_pread_ns(ix->c, &ix->f, scratch, DD_PAGE, b * DD_PAGE, &ns);
	pthread_mutex_lock(&ix->lock);
	if (n < 0)
		return (int)n;
	if (n != DD_PAGE)
		memset(scratch + n, 0, DD_PAGE - (size_t)n);
	ix->reads++;
	if (iotap_hist_add(&ix->miss, ns))
		return -ENOMEM;
	p = dirty_find(ix, b);
	if (p) {
		*out = p;
		return 0;
	}
	if (!make_dirty) {
		*out = scratch;
		return 0;
	}
	if (ix->pool_used >= 2 * ix->batch) {
		int ret = flush_locked(ix);

		if (ret)
			return ret;
	}
	*out = dirty_add(ix, b, scratch);
	return *out ? 0 : -ENOMEM;
}

/*
 * Find @fp from its home bucket on: the bucket where the search ended and
 * the slot there, or slot -1 (not stored; the bucket is where it would go
 * unless full). @write: the buckets are read to be changed (get_bucket()).
 */
static int locate(struct dd_index *ix, const struct dd_fp *fp, uint8_t *scratch, int write,
		  uint8_t **page, uint64_t *bno, int *slot)
{
	uint64_t b = fp->lo % ix->nbuckets, tries;
	int ret;

	for (tries = 0; tries < ix->nbuckets; tries++, b = (b + 1) % ix->nbuckets) {
		struct bucket_hdr *h;
		struct dd_entry *e;
		uint32_t i;

		ret = get_bucket(ix, b, scratch, write, page);
		if (ret)
			return ret;
		*bno = b;
		h = (struct bucket_hdr *)*page;
		e = slots(*page);
		for (i = 0; i < h->count && i < DD_SLOTS; i++)
			if (e[i].lo == fp->lo && e[i].hi == fp->hi) {
				*slot = (int)i;
				return 0;
			}
		if (!(h->flags & SPILLED)) {
			*slot = -1;
			return 0;
		}
	}
	*slot = -1;
	return 0;
}

int dd_index_lookup(struct dd_index *ix, const struct dd_fp *fp)
{
	uint8_t *scratch = NULL, *page;
	uint64_t bno = 0;
	int ret, slot;

	pthread_mutex_lock(&ix->lock);
	ix->lookups++;
	if (cache_find(ix, fp)) {
		ix->hits++;
		pthread_mutex_unlock(&ix->lock);
		return 1;
	}
	pthread_mutex_unlock(&ix->lock);
	scratch = wl_buf_alloc(DD_PAGE);
	if (!scratch)
		return -ENOMEM;
	pthread_mutex_lock(&ix->lock);
	ret = locate(ix, fp, scratch, 0, &page, &bno, &slot);
	if (!ret) {
		cache_put(ix, fp);
		ret = slot >= 0;
	}
	/* not stored: keep the bucket just read, the insert that follows changes it */
	if (!ret && page == scratch) {
		if (ix->pool_used >= 2 * ix->batch)
			ret = flush_locked(ix);
		if (!ret && !dirty_add(ix, bno, scratch))
			ret = -ENOMEM;
	}
	pthread_mutex_unlock(&ix->lock);
	free(scratch);
	return ret;
}

int dd_index_insert(struct dd_index *ix, const struct dd_entry *e)
{
	struct dd_fp fp = { e->lo, e->hi };
	uint64_t b = e->lo % ix->nbuckets, tries;
	uint8_t *scratch = wl_buf_alloc(DD_PAGE), *page;
	int ret = -ENOSPC;

	if (!scratch)
		return -ENOMEM;
	pthread_mutex_lock(&ix->lock);
	for (tries = 0; tries < ix->nbuckets; tries++, b = (b + 1) % ix->nbuckets) {
		struct bucket_hdr *h;

		ret = get_bucket(ix, b, scratch, 1, &page);
		if (ret)
			break;
		h = (struct bucket_hdr *)page;
		if (h->count < DD_SLOTS) {
			slots(page)[h->count++] = *e;
			ret = 0;
			break;
		}
		h->flags |= SPILLED;
		ret = -ENOSPC;
	}
	cache_put(ix, &fp);
	if (!ret && ix->ndirty >= ix->batch)
		ret = flush_locked(ix);
	pthread_mutex_unlock(&ix->lock);
	free(scratch);
	return ret;
}

int dd_index_update(struct dd_index *ix, const struct dd_fp *fp, const struct dd_entry *e)
{
	uint8_t *scratch = wl_buf_alloc(DD_PAGE), *page;
	uint64_t bno;
	int ret, slot;

	if (!scratch)
		return -ENOMEM;
	pthread_mutex_lock(&ix->lock);
	ret = locate(ix, fp, scratch, 1, &page, &bno, &slot);
	if (!ret && slot < 0)
		ret = -ENOENT;
	if (!ret) {
		struct bucket_hdr *h = (struct bucket_hdr *)page;
		struct dd_entry *s = slots(page);

		if (e) {
			s[slot] = *e;
		} else {
			s[slot] = s[--h->count];
			memset(&s[h->count], 0, sizeof(s[0]));
			cache_drop(ix, fp);
		}
	}
	if (!ret && ix->ndirty >= ix->batch)
		ret = flush_locked(ix);
	pthread_mutex_unlock(&ix->lock);
	free(scratch);
	return ret;
}

int dd_index_take(struct dd_index *ix, uint64_t *lookups, uint64_t *hits, uint64_t *reads,
		   uint64_t *written, struct iotap_hist *miss)
{
	int ret;

	pthread_mutex_lock(&ix->lock);
	*lookups = ix->lookups;
	*hits = ix->hits;
	*reads = ix->reads;
	*written = ix->written;
	ret = iotap_hist_merge(miss, &ix->miss);
	ix->lookups = ix->hits = ix->reads = ix->written = 0;
	iotap_hist_clear(&ix->miss);
	pthread_mutex_unlock(&ix->lock);
	return ret;
}
