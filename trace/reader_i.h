/* SPDX-License-Identifier: MIT */
/*
 * reader_i.h - what the reader's files (reader*.c) share: the reader, its
 * batches and decoder jobs, and the functions one file calls in another
 *
 * Not a public header and not trace_i.h's business: nothing outside
 * reader*.c sees a batch.
 */
#ifndef IOTAP_READER_I_H
#define IOTAP_READER_I_H

#include <pthread.h>
#include <stdint.h>

#include "iotap_base.h"
#include "trace_i.h"

/*
 * The read window's first size: it grows to the largest chunk met (a
 * capture's chunks were 20 to 90 KiB compressed where writers cut them at
 * 1 MiB raw; at today's 128 KiB, 27 KiB for a bonnie++ capture, 85 KiB for
 * random 8 KiB reads, which compress 1.5 times). Small, as every page of
 * it is faulted in once (~13 us a page on a VM, more than a read call
 * costs); but not 128 KiB: with the per-char bonnie++ capture's 86 KiB
 * chunks, report took 20% longer at the same instruction count (a
 * refill for nearly every chunk; the cause inside the memory system was
 * not pinned down), 256 KiB and 1 MiB alike.
 */
#define RD_BUF_INIT		(256u << 10)
#define RD_SCAN			(64u << 10)	/* resync scan step, bytes */
#define RD_PENDING_MAX		(1u << 19)	/* records held for ordering, at most */
#define RD_PENDING_MEM		(128ull << 20)	/* bytes of batches held, at most */
#define RD_FREE_BATCHES		4		/* recycled batches kept */
#define RD_FREE_MEM		(64u << 20)	/* larger batches are not recycled */
/*
 * The first batches a reader allocates (recycled, they serve most of a
 * capture) are roomy: their arrays are iotap_buf_alloc()'s, huge pages
 * from 512 KiB up (a 47,000-record chunk: 3 faults instead of 1,300),
 * and their records take a whole 2 MiB page, 18724 of them, even for
 * smaller chunks, so they do not regrow chunk by chunk, faulting their
 * pages in anew (pgbench's report: 260 faults fewer, at ~20 us each).
 * The others are malloc'ed to their chunk's size, so that many batches
 * pending for the merge (RD_PENDING_MEM) cost what they hold.
 */
#define RD_ROOMY		RD_FREE_BATCHES
#define RD_THREADS_MAX		16		/* decoder threads, at most */

/* Sort key of a decoded record: start time, then position in the batch. */
struct rd_key {
	uint64_t time;
	uint64_t idx;
};

/* A record with a name or a sample: where they are in the arena. */
struct rd_data {
	uint32_t idx;			/* the record, index in recs */
	uint32_t name;			/* arena offset of its name, RD_NONE: none */
	uint32_t sample;		/* arena offset of its sample, RD_NONE: none */
};

#define RD_NONE			UINT32_MAX

/* What a batch's records add to struct iotap_trace_read_stats once delivered. */
struct rd_bstats {
	uint64_t n;
	uint64_t by_type[IOTAP_REC_TYPE_MAX];
	uint64_t lost;			/* sum of LOST lengths */
	uint64_t tmin;			/* smallest start */
	uint64_t tend;			/* largest start + duration, saturated */
	int has_end;
};

/* One decoded chunk. */
struct rd_batch {
	struct rd_batch *next;		/* r->free */
	uint64_t seq;			/* chunk order in this reading */
	unsigned char *recs;		/* decoded records (REC_STRIDE bytes apart, brec()), file order */
	struct rd_data *data;		/* records with names or samples, in index order */
	uint32_t ndata, data_cap;
	struct rd_bstats bs;		/* all its records, added to the stats when exhausted */
	struct rd_key *keys;		/* merge order (merged reading only) */
	struct rd_key *tmp;		/* sort scratch */
	uint32_t *run;			/* sort scratch: run starts or bucket counts (2 x cap + 1) */
	uint32_t nrec;			/* records in recs */
	uint32_t pos;			/* next to deliver (index in keys or recs) */
	int sorted;			/* recs already in merge order: keys unused */
	uint32_t desc;			/* records starting before the one before them */
	int packed;			/* keys hold packed keys (pkey()), not struct rd_key */
	uint64_t kbase;			/* packed keys: the chunk's earliest start */
	uint64_t tmin, tmax;		/* earliest and latest start decoded */
	uint32_t cap;			/* entries allocated in recs/keys/tmp */
	int roomy;			/* one of the first RD_ROOMY: huge pages (batch_regrow) */
	size_t recs_size, keys_size;	/* their iotap_buf_alloc() sizes (tmp: keys_size) */
	char *arena;			/* names (NUL-terminated) and samples */
	size_t arena_len, arena_cap;
};

/* A chunk's decoding context: one per decoding thread. */
struct rd_dec {
	struct chunk_dec cd;
	struct rec_state st;
};

struct rd_pool;

struct iotap_trace_reader {
	int fd;
	int own_fd;
	unsigned int flags;
	struct iotap_trace_header hdr;
	char *hdr_strings;

	uint8_t *buf;			/* window of the file */
	size_t buf_cap, buf_len;
	size_t buf_size;		/* its iotap_buf_alloc() size, buf_cap or more */
	uint64_t buf_off;		/* file offset of buf[0] */
	int buf_eof;			/* the window ends at the end of the file */
	uint64_t eof_off;		/* end of the file, once met */

	uint64_t off;			/* where the next chunk should start */
	int scan_eof;			/* the walk met the end of the file */
	int eof;			/* no more chunks (and none in the pool) */
	int err;			/* sticky I/O error */
	int started;			/* next() was called */
	struct rd_dec dec;		/* the reading thread's own decoder */
	struct rd_pool *pool;		/* decoder threads, NULL: decode inline */
	iotap_trace_progress_fn progress;	/* iotap_trace_reader_on_progress() */
	void *progress_arg;

	struct rd_batch **heap;		/* pending batches, min-heap on their next key */
	unsigned int nheap, heap_cap;
	struct rd_batch *cur;		/* file order: the batch being delivered */
	struct rd_batch *retire;	/* exhausted by the last call, recycled by the next */
	struct rd_batch *free;
	unsigned int nfree, free_max;	/* recycled batches, kept at most */
	unsigned int nbatch;		/* batches allocated (free ones included) */
	uint64_t seq;
	uint64_t watermark;		/* largest chunk watermark seen */
	uint64_t pending;		/* decoded records not yet delivered */
	uint64_t pending_mem;		/* bytes of the batches holding them */
	uint64_t last_time;		/* largest start delivered */

	/* the fast path (trace_i.h) on heap[0] = run_b; top_dirty: heap[0] moved on without rd_heap_down() */
	struct rd_run run;
	struct rd_batch *run_b;		/* NULL: no run */
	uint32_t run_from;		/* run_b->pos when the run began */
	int top_dirty;
	struct iotap_trace_rec out;	/* a SAMPLE record, whole, for next_ref() */

	struct iotap_trace_read_stats stats;	/* but for the batches being delivered */

	/* split.c: told of each chunk taken, in file order; non-zero: fail with it */
	int (*on_chunk)(void *arg, const struct chunk_hdr *h, uint64_t at, const struct rd_batch *b);
	void *on_chunk_arg;
	/*
	 * split.c: the end of a window. Non-zero: where the reader would take
	 * another chunk although its watermark is at or above @until (every
	 * record starting before it delivered), it returns 0 instead, while
	 * *@until_idle is 0 (the join on it holds no piece).
	 */
	uint64_t until;
	const unsigned int *until_idle;
};

/* The @i-th decoded record of @b (its head only: no sample). */
static inline struct iotap_trace_rec *brec(const struct rd_batch *b, uint32_t i)
{
	return (struct iotap_trace_rec *)(b->recs + (size_t)i * REC_STRIDE);
}

static inline uint32_t le32_at(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static inline size_t align8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/* Start time and index in recs of the @i-th record in merge order. */
static inline uint64_t rd_batch_time(const struct rd_batch *b, uint32_t i)
{
	if (b->sorted)
		return brec(b, i)->time_ns;
	if (b->packed)
		return b->kbase + (((const uint64_t *)b->keys)[i] >> PK_IDX_BITS);
	return b->keys[i].time;
}

static inline uint32_t rd_batch_idx(const struct rd_batch *b, uint32_t i)
{
	if (b->sorted)
		return i;
	if (b->packed)
		return (uint32_t)(((const uint64_t *)b->keys)[i] & ((1u << PK_IDX_BITS) - 1));
	return (uint32_t)b->keys[i].idx;
}

static inline int rd_batch_before(const struct rd_batch *a, const struct rd_batch *b)
{
	uint64_t x = rd_batch_time(a, a->pos), y = rd_batch_time(b, b->pos);

	return x < y || (x == y && a->seq < b->seq);
}

/* reader.c */
struct rd_batch *rd_batch_get(struct iotap_trace_reader *r);
void rd_batch_put(struct iotap_trace_reader *r, struct rd_batch *b);
void rd_batch_free(struct rd_batch *b);
size_t rd_batch_mem(const struct rd_batch *b);
int rd_scan(struct iotap_trace_reader *r, struct chunk_hdr *h, uint64_t *at, const uint8_t **p);
int rd_readable(const struct chunk_hdr *h);
int rd_resync(struct iotap_trace_reader *r, uint64_t from, uint64_t *at);
int rd_decode(int merge, struct rd_dec *d, const struct chunk_hdr *h, struct rd_batch *b);
int rd_take(struct iotap_trace_reader *r, const struct chunk_hdr *h, uint64_t at, int ret,
	    struct rd_batch *b, struct rd_batch **out);
int rd_next_chunk(struct iotap_trace_reader *r, struct rd_batch **out);

/* reader_sort.c */
void rd_batch_sort(struct rd_batch *b);

/* reader_deliver.c */
void rd_heap_down(struct iotap_trace_reader *r, unsigned int i);
int rd_heap_push(struct iotap_trace_reader *r, struct rd_batch *b);
void rd_stats_add(struct iotap_trace_read_stats *st, const struct rd_bstats *bs);
void rd_bstats_rec(struct rd_bstats *bs, const struct iotap_trace_rec *s);

/* reader_pool.c */
int rd_pool_start(struct iotap_trace_reader *r, unsigned int n);
void rd_pool_stop(struct iotap_trace_reader *r);
int rd_next_chunk_pool(struct iotap_trace_reader *r, struct rd_batch **out);

#endif
