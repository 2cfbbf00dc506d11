/* SPDX-License-Identifier: MIT */
/*
 * dedup_i.h - private declarations of the dedup model (workload/dedup*.c)
 *
 * Module prefix dd_. Files: dedup.c (the run: phases, streams,
 * containers, maps, restore, expiry, compaction), dedup_data.c (what the
 * images hold: content ids per position, segment bytes, fingerprints),
 * dedup_index.c (fingerprint cache and on-disk index), dedup_out.c (the
 * tables).
 *
 * Fingerprints are XXH3-128 of the segment bytes. That is not a
 * cryptographic hash (MSDP uses MD5, restic SHA-256): a model only needs
 * fingerprints that do not collide by accident, and XXH3 costs a tenth of
 * SHA-256's CPU, which keeps the model's own work small beside its I/O.
 */
#ifndef IOTAP_DEDUP_I_H
#define IOTAP_DEDUP_I_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "workload_i.h"

#define DD_PAGE		4096u		/* index bucket and I/O alignment */
#define DD_SLOTS	127u		/* entries in a bucket after its 32-byte header */
#define DD_ENTRY	32u		/* bytes of an index, map or cache entry */

struct dd_fp {
	uint64_t lo, hi;
};

/* An index bucket entry and a segment map entry (32 bytes, host order). */
struct dd_entry {
	uint64_t lo, hi;		/* fingerprint */
	uint32_t cont;			/* container id */
	uint32_t off;			/* offset in the container */
	uint32_t len;			/* segment bytes */
	uint32_t flags;			/* 0 */
};

_Static_assert(sizeof(struct dd_entry) == DD_ENTRY, "index entry is 32 bytes");

/* Log-linear latency histogram: 16 sub-buckets per power of two of ns. */
#define DD_HIST_BUCKETS (64 * 16)
struct dd_hist {
	uint64_t n;
	uint64_t b[DD_HIST_BUCKETS];
};

void dd_hist_add(struct dd_hist *h, uint64_t ns);
void dd_hist_merge(struct dd_hist *dst, const struct dd_hist *src);
/* Seconds at quantile @q (0..1); 0 when empty. */
double dd_hist_quantile(const struct dd_hist *h, double q);

/* --- dedup_data.c: what the images hold ---------------------------------- */

/*
 * The resolved configuration every dedup file reads.
 */
struct dd_cfg {
	const struct iotap_workload_dedup_opts *o;
	uint64_t positions;		/* segments in one image */
	uint32_t run;			/* positions per changed or duplicated extent */
	uint32_t rand_per_512;		/* random bytes in each 512 (the rest is zeros) */
	uint32_t max_seg;		/* largest segment */
};

int dd_cfg_init(struct dd_cfg *cfg, const struct iotap_workload_dedup_opts *o,
		const char **why);

/*
 * The positions of one stream's image in the current generation: a
 * content id each, its length and fingerprint, and whether this is where
 * the content first appears (a new segment: the model generates and
 * hashes it only then; a repeat takes the fingerprint computed when its
 * content first appeared, as a client that fingerprints its data sends it).
 */
struct dd_pos {
	uint64_t n;
	uint64_t *cid;
	uint32_t *len;
	struct dd_fp *fp;
	uint8_t *fresh;			/* DD_* below */
	uint32_t *src;			/* DD_REPEAT: the earlier position it repeats */
	uint64_t serial;		/* next new content id of this stream */
};

#define DD_KNOWN	0		/* fp known (from the last generation) */
#define DD_NEW		1		/* first appearance: generate and hash */
#define DD_REPEAT	2		/* repeats position src[i] of this image */

int dd_pos_alloc(struct dd_pos *p, uint64_t n);
void dd_pos_free(struct dd_pos *p);
/* Generation @gen of stream @stream (0 first: duplicates inside the image; then changes). */
void dd_pos_generation(const struct dd_cfg *cfg, struct dd_pos *p, unsigned int stream,
		       unsigned int gen);
/* Segment bytes of content id @cid: deterministic from the seed. */
void dd_fill(const struct dd_cfg *cfg, uint64_t cid, void *buf, uint32_t len);
void dd_hash(const void *buf, uint32_t len, struct dd_fp *fp);

/* --- dedup_index.c: fingerprint cache and on-disk index ------------------ */

/*
 * The index file holds @nbuckets 4 KiB buckets, a fingerprint's home
 * bucket is fp.lo mod nbuckets; a full bucket spills into the next one
 * (and says so in its header). The cache is set-associative (8 ways,
 * LRU in a set), 32 bytes an entry; dirty buckets wait in memory until a
 * batch is written back (sorted by bucket, one 4 KiB pwrite each, then
 * fdatasync). One mutex covers cache, dirty buckets and figures; it is
 * dropped for an index read.
 */
struct dd_dirty {
	uint64_t b;			/* bucket number + 1; 0: free slot */
	uint8_t *page;
};

struct dd_index {
	struct iotap_workload_ctx *c;
	struct wl_file f;
	uint64_t nbuckets;
	pthread_mutex_t lock;
	struct dd_fp *cache;		/* sets * 8 */
	uint64_t *age;
	uint64_t sets, clock;
	struct dd_dirty *dirty;		/* open-addressed by bucket */
	uint64_t dirty_cap, ndirty, batch;
	uint8_t *pool;			/* batch pages */
	uint64_t pool_used;
	/* figures since the last dd_index_take() */
	uint64_t lookups, hits, reads, written;
	struct dd_hist miss;
};

int dd_index_open(struct dd_index *ix, struct iotap_workload_ctx *c, int dirfd,
		  uint64_t parent, uint64_t nbuckets, uint64_t cache_entries);
void dd_index_close(struct dd_index *ix);
/* Put @fp in the cache (a prefetch); no I/O. */
void dd_index_cache(struct dd_index *ix, const struct dd_fp *fp);
/*
 * dd_index_lookup - is @fp stored? 1 yes, 0 no, -errno
 * Cache first; a miss reads the home bucket (and any spill buckets).
 * Either way the fingerprint is in the cache afterwards.
 */
int dd_index_lookup(struct dd_index *ix, const struct dd_fp *fp);
/* Add a new entry (after dd_index_lookup() said 0). 0 or -errno. */
int dd_index_insert(struct dd_index *ix, const struct dd_entry *e);
/* Change an entry's location, or remove it (@e NULL: remove @fp). 0 or -errno. */
int dd_index_update(struct dd_index *ix, const struct dd_fp *fp, const struct dd_entry *e);
/* Write back every dirty bucket and fdatasync. 0 or -errno. */
int dd_index_flush(struct dd_index *ix);
/* Figures since the last take, then reset them. */
void dd_index_take(struct dd_index *ix, uint64_t *lookups, uint64_t *hits, uint64_t *reads,
		   uint64_t *written, struct dd_hist *miss);

#endif /* IOTAP_DEDUP_I_H */
