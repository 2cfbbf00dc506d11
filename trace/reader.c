// SPDX-License-Identifier: MIT
/*
 * reader.c - stream a trace file in bounded memory, merged by start time
 *
 * The reader walks the file chunk by chunk through one read buffer (a
 * window of the file, grown to the largest chunk met), checks each chunk
 * (chunk.c), decompresses it into one raw buffer and decodes it into a
 * batch: an array of records in the layout of struct iotap_trace_rec without
 * its sample (REC_HEAD bytes each), plus an arena for their names and
 * samples. It never holds the file, only the batches not yet delivered.
 * iotap_trace_reader_next_ref() hands out a pointer into the batch;
 * iotap_trace_reader_next() copies that head and a sample.
 *
 * Merged order. Each batch's records are sorted by (start, position) —
 * often they already are; a capture's chunk is dozens of interleaved
 * sorted runs (one per recording thread buffer), which batch_sort() orders
 * on packed 64-bit keys: bucket + insertion sort, a natural merge for few
 * runs, LSD radix when the buckets crowd. Pending batches form a small
 * min-heap on their next record; while the top batch's next records come
 * before everything else and are released, they go through a cursor
 * (struct rd_run, trace_i.h) without the heap. After a chunk
 * whose watermark is W has been decoded, every record starting before W
 * is known and is released in order; at the end of the file everything
 * is. A record arriving later than one already released (a broken
 * promise) is delivered anyway and counted in late_records. To keep
 * memory bounded whatever the file says, more than RD_PENDING_MAX pending
 * records, or RD_PENDING_MEM bytes of batches, are released without
 * waiting for a watermark.
 *
 * Damage. A chunk whose header checks but whose payload does not is
 * skipped by its size; bytes where no valid chunk header starts are
 * skipped by scanning for the next CHUNK_MAGIC whose header checks. What
 * remains after the last valid chunk is the tail. Everything is counted
 * in struct iotap_trace_read_stats; only I/O errors and ENOMEM are errors.
 *
 * Parallel decoding (iotap_trace_reader_set_threads: n threads, the
 * reading thread and n - 1 started ones). The reading thread still walks
 * the file, checks chunk headers, resynchronises over damage and copies
 * each whole chunk's payload into a job of a small ring; decoder threads
 * take jobs in any order, check the payload's checksum, decompress it
 * into a buffer of their own and copy it into the job's (pool_run()).
 * The reading thread takes the jobs back strictly in file order, swaps
 * the job's raw buffer for its own spent one, queues the next chunk and
 * decodes and sorts this one itself, so the records, their order and
 * every statistic are the same with one thread or many; when the chunk
 * it needs is not decompressed yet, it decompresses the oldest queued
 * job itself rather than wait. What
 * crosses between the CPUs is a chunk's raw payload (10-17 bytes a
 * record), not its decoded records (112 bytes each): decoding whole
 * batches on the other thread cost more CPU than it overlapped, every
 * record moving between the CPUs' caches (BENCHMARKS.md, session 9; a
 * try in session 10 that decoded and sorted in the pool, the raw payload
 * staying there, took 1.3-1.7 times the wall time of one thread). The
 * ring holds n - 1 jobs: memory grows by that many raw payloads and
 * compressed copies (one 2 MiB extent each), and a decoder's own buffer.
 *
 * One reader serves one thread. A delivered record's name points into the
 * batch it came from, which is recycled only at the next call.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


#include <zstd.h>

#include "iotap_base.h"
#include "trace_i.h"

/*
 * The read window's first size: it grows to the largest chunk met (a
 * capture's chunks are 20 to 90 KiB compressed). Small, as every page of
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

enum { JOB_FREE, JOB_QUEUED, JOB_TAKEN, JOB_DONE };

#define RD_SPIN			256	/* pauses before a pool side sleeps (a few us) */

/* One chunk on its way through the decoder pool. */
struct rd_job {
	int state;			/* JOB_*, atomic (see "the decoder pool") */
	int ret;			/* 0, -EBADMSG (bad payload), -ENOMEM */
	uint64_t off;			/* file offset of the chunk */
	uint64_t total;			/* its bytes, header and payload */
	struct chunk_hdr h;
	uint8_t *payload;		/* copy of the compressed payload */
	size_t payload_cap;
	uint8_t *raw;			/* the payload decompressed (iotap_buf) */
	size_t raw_cap;
};

struct rd_pool {
	unsigned int work_seq;		/* futex, atomic: bumped when jobs were queued, or stop */
	unsigned int done_seq;		/* futex, atomic: bumped when a job is done */
	pthread_t tid[RD_THREADS_MAX];
	unsigned int nthreads;		/* decoder threads running */
	int stop;			/* atomic */
	unsigned int sleeping;		/* atomic: decoders asleep on work */
	int waiting;			/* atomic: the reading thread is asleep on done */
	struct rd_job *ring;
	unsigned int njobs;		/* ring size */
	unsigned int head;		/* oldest job; written by the reading thread only */
	unsigned int nq;		/* jobs in the ring: the reading thread's */
	unsigned int unwoken;		/* jobs queued since the decoders were last woken */
	unsigned int wake_at;		/* ... wake them at this many */
	int err;			/* -errno that stopped pool_fill (sticky) */
};

struct iotap_trace_reader {
	int fd;
	int own_fd;
	unsigned int flags;
	struct iotap_trace_header hdr;
	char *hdr_strings;

	uint8_t *buf;			/* window of the file */
	size_t buf_cap, buf_len;
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

	/* the fast path (trace_i.h) on heap[0] = run_b; top_dirty: heap[0] moved on without heap_down() */
	struct rd_run run;
	struct rd_batch *run_b;		/* NULL: no run */
	uint32_t run_from;		/* run_b->pos when the run began */
	int top_dirty;
	struct iotap_trace_rec out;	/* a SAMPLE record, whole, for next_ref() */

	struct iotap_trace_read_stats stats;	/* but for the batches being delivered */
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

/* --- the read window ---------------------------------------------------- */

/*
 * Makes [off, off + n) available at *p. Returns n, fewer bytes only at the
 * end of the file, or -errno.
 */
static ssize_t rb_get(struct iotap_trace_reader *r, uint64_t off, size_t n,
		      const uint8_t **p)
{
	size_t keep = 0;

	if (off >= r->buf_off && off - r->buf_off <= r->buf_len) {
		size_t start = (size_t)(off - r->buf_off);

		if (r->buf_len - start >= n || r->buf_eof) {
			*p = r->buf + start;
			return r->buf_len - start >= n ? (ssize_t)n :
			       (ssize_t)(r->buf_len - start);
		}
		keep = r->buf_len - start;
		if (start)
			memmove(r->buf, r->buf + start, keep);
	}
	if (n > r->buf_cap) {
		size_t cap = r->buf_cap;
		uint8_t *nb;

		while (cap < n)
			cap *= 2;
		nb = realloc(r->buf, cap);
		if (!nb)
			return -ENOMEM;
		r->buf = nb;
		r->buf_cap = cap;
	}
	r->buf_off = off;
	r->buf_len = keep;
	r->buf_eof = 0;
	while (r->buf_len < n) {
		ssize_t k = pread(r->fd, r->buf + r->buf_len, r->buf_cap - r->buf_len,
				  (off_t)(off + r->buf_len));

		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (k == 0) {
			r->buf_eof = 1;
			r->eof_off = off + r->buf_len;
			break;
		}
		r->buf_len += (size_t)k;
	}
	*p = r->buf;
	return r->buf_len >= n ? (ssize_t)n : (ssize_t)r->buf_len;
}

/* --- batches ------------------------------------------------------------ */

/*
 * The arrays of a roomy batch are iotap_buf_alloc()'s (huge pages from
 * 512 KiB); the others' malloc'ed to their size, so that many small
 * batches pending for the merge cost what they hold.
 */
static void *batch_regrow(const struct rd_batch *b, void *p, size_t *size, size_t want)
{
	void *q;

	if (b->roomy)
		return iotap_buf_regrow(p, size, want);
	q = realloc(p, want);
	if (!q) {
		free(p);
		*size = 0;
		return NULL;
	}
	*size = want;
	return q;
}

static void batch_buf_free(const struct rd_batch *b, void *p, size_t size)
{
	if (b->roomy)
		iotap_buf_free(p, size);
	else
		free(p);
}

static void batch_free(struct rd_batch *b)
{
	batch_buf_free(b, b->recs, b->recs_size);
	free(b->data);
	batch_buf_free(b, b->keys, b->keys_size);
	batch_buf_free(b, b->tmp, b->keys_size);
	free(b->run);
	free(b->arena);
	free(b);
}

static struct rd_batch *batch_get(struct iotap_trace_reader *r)
{
	struct rd_batch *b = r->free;

	if (b) {
		r->free = b->next;
		r->nfree--;
		return b;
	}
	b = calloc(1, sizeof(*b));
	if (b)
		b->roomy = ++r->nbatch <= RD_ROOMY;
	return b;
}

/* Bytes a batch holds. */
static size_t batch_mem(const struct rd_batch *b)
{
	return sizeof(*b) + b->cap * (REC_STRIDE + 2 * sizeof(*b->keys) + 2 * sizeof(*b->run)) +
	       b->data_cap * sizeof(*b->data) + b->arena_cap;
}

static void batch_put(struct iotap_trace_reader *r, struct rd_batch *b)
{
	if (r->nfree >= r->free_max || batch_mem(b) > RD_FREE_MEM) {
		batch_free(b);
		r->nbatch--;
		return;
	}
	b->next = r->free;
	r->free = b;
	r->nfree++;
}

static int batch_reserve(int merge, struct rd_batch *b, uint32_t n)
{
	size_t rs;

	if (b->cap >= n && b->recs)
		return 0;
	if (!n)
		n = 1;
	/*
	 * The batch's records are spent: batch_regrow() need not keep them
	 * (a roomy batch's, from 512 KiB up, are whole 2 MiB extents, whose
	 * rest is used too). b->cap says 0 until every array has the new
	 * size.
	 *
	 * A record handed out is a struct iotap_trace_rec pointer to REC_HEAD
	 * bytes: room after the last for the rest of a struct, so that even a
	 * caller that copies one whole stays inside the allocation.
	 */
	b->cap = 0;
	rs = (size_t)n * REC_STRIDE + sizeof(struct iotap_trace_rec);
	if (b->roomy && rs < IOTAP_BUF_HUGE)
		rs = IOTAP_BUF_HUGE;
	b->recs = batch_regrow(b, b->recs, &b->recs_size, rs);
	rs = b->recs_size;
	if (!b->recs)
		return -ENOMEM;
	n = (uint32_t)((rs - sizeof(struct iotap_trace_rec)) / REC_STRIDE);
	if (n > CHUNK_REC_MAX)
		n = CHUNK_REC_MAX;
	if (merge) {
		/* RD_PREFETCH more: the fast path prefetches that far ahead unchecked */
		size_t want = (n + RD_PREFETCH) * sizeof(*b->keys);
		size_t ks = b->keys_size, ts = b->keys_size;
		void *p;

		b->keys = batch_regrow(b, b->keys, &ks, want);
		b->tmp = batch_regrow(b, b->tmp, &ts, want);
		if (!b->keys || !b->tmp) {
			batch_buf_free(b, b->keys, ks);
			batch_buf_free(b, b->tmp, ts);
			b->keys = b->tmp = NULL;
			b->keys_size = 0;
			return -ENOMEM;
		}
		b->keys_size = ks;	/* = ts: the same request from the same size */
		p = realloc(b->run, (2 * (size_t)n + 1) * sizeof(*b->run));	/* pk_bucket(): 2n */
		if (!p)
			return -ENOMEM;
		b->run = p;
	}
	b->cap = n;
	return 0;
}

/* Room for one more data entry. */
static int data_reserve(struct rd_batch *b)
{
	uint32_t cap = b->data_cap ? 2 * b->data_cap : 16;
	void *p;

	if (b->ndata < b->data_cap)
		return 0;
	p = realloc(b->data, cap * sizeof(*b->data));
	if (!p)
		return -ENOMEM;
	b->data = p;
	b->data_cap = cap;
	return 0;
}

/* Room for @n more arena bytes. */
static int arena_reserve(struct rd_batch *b, size_t n)
{
	size_t cap = b->arena_cap ? b->arena_cap : 256;
	char *p;

	if (b->arena_len + n <= b->arena_cap)
		return 0;
	while (cap < b->arena_len + n)
		cap *= 2;
	p = realloc(b->arena, cap);
	if (!p)
		return -ENOMEM;
	b->arena = p;
	b->arena_cap = cap;
	return 0;
}

/* --- ordering ----------------------------------------------------------- */

static inline int key_lt(const struct rd_key *a, const struct rd_key *b)
{
	return a->time < b->time || (a->time == b->time && a->idx < b->idx);
}

static uint32_t run_end(const struct rd_key *a, uint32_t i, uint32_t n)
{
	for (i++; i < n && !key_lt(&a[i], &a[i - 1]); i++)
		;
	return i;
}

/*
 * A packed key: the start less the chunk's earliest, above the record's
 * index (PK_IDX_BITS: a chunk holds at most CHUNK_REC_MAX records). One
 * 64-bit compare orders (start, position), and a merge moves half the
 * bytes of a struct rd_key. Used when the chunk's starts span less than
 * 2^44 ns (4.8 hours), which every chunk a recorder writes does.
 */
_Static_assert(CHUNK_REC_MAX <= 1u << PK_IDX_BITS, "index fits a packed key");

/*
 * Natural merge sort of packed keys (all distinct: the index is in them).
 * @run holds the @nrun run starts and n after them (n + 1 entries at
 * most); each pass merges neighbouring pairs and keeps every other start.
 * Returns the array that holds the result, @src or @dst.
 */
static uint64_t *pk_merge(uint64_t *src, uint64_t *dst, uint32_t *run, uint32_t nrun,
			  uint32_t n)
{
	uint32_t i, r;
	uint64_t *t;

	while (nrun > 1) {
		for (r = 0; r + 1 < nrun; r += 2) {
			uint32_t x = run[r], m = run[r + 1], e = run[r + 2], y = m, o = x;

			/* branchless: which side wins is data, not a pattern */
			while (x < m && y < e) {
				uint64_t a = src[x], c = src[y];
				int left = a < c;

				dst[o++] = left ? a : c;
				x += left;
				y += !left;
			}
			memcpy(dst + o, src + x, (m - x) * sizeof(*src));
			o += m - x;
			memcpy(dst + o, src + y, (e - y) * sizeof(*src));
		}
		if (r < nrun)	/* an odd run out: copied as it is */
			memcpy(dst + run[r], src + run[r], (n - run[r]) * sizeof(*src));
		for (i = 0; 2 * i < nrun; i++)
			run[i] = run[2 * i];
		nrun = (nrun + 1) / 2;
		run[nrun] = n;
		t = src;
		src = dst;
		dst = t;
	}
	return src;
}

#define RADIX_BITS	11	/* widest digit: 2^11 counters a pass */
#define RADIX_PASSES	((64 - PK_IDX_BITS + RADIX_BITS - 1) / RADIX_BITS)

/*
 * Build the packed keys of @b's records into @k and count the digits of
 * every radix pass in one go (@rp passes of @dbits each, counters of pass
 * p at @cnt + (p << dbits)).
 */
static void pk_build(const struct rd_batch *b, uint64_t *k, uint32_t n, unsigned int rp,
		     unsigned int dbits, uint32_t *cnt)
{
	uint32_t *c0 = cnt, *c1 = cnt + (1u << dbits), *c2 = c1 + (1u << dbits);
	uint32_t *c3 = c2 + (1u << dbits);
	const unsigned char *rec = b->recs + offsetof(struct iotap_trace_rec, time_ns);
	uint64_t m = (1u << dbits) - 1, base = b->tmin, t;
	unsigned int d = dbits;
	uint32_t i;

	/* one loop per pass count: the counting unrolled */
	switch (rp) {
	case 1:
		for (i = 0; i < n; i++, rec += REC_STRIDE) {
			memcpy(&t, rec, sizeof(t));
			t -= base;
			k[i] = t << PK_IDX_BITS | i;
			c0[t & m]++;
		}
		break;
	case 2:
		for (i = 0; i < n; i++, rec += REC_STRIDE) {
			memcpy(&t, rec, sizeof(t));
			t -= base;
			k[i] = t << PK_IDX_BITS | i;
			c0[t & m]++;
			c1[(t >> d) & m]++;
		}
		break;
	case 3:
		for (i = 0; i < n; i++, rec += REC_STRIDE) {
			memcpy(&t, rec, sizeof(t));
			t -= base;
			k[i] = t << PK_IDX_BITS | i;
			c0[t & m]++;
			c1[(t >> d) & m]++;
			c2[(t >> 2 * d) & m]++;
		}
		break;
	default:
		for (i = 0; i < n; i++, rec += REC_STRIDE) {
			memcpy(&t, rec, sizeof(t));
			t -= base;
			k[i] = t << PK_IDX_BITS | i;
			c0[t & m]++;
			c1[(t >> d) & m]++;
			c2[(t >> 2 * d) & m]++;
			c3[(t >> 3 * d) & m]++;
		}
		break;
	}
}

/*
 * Bucket sort for chunks of many interleaved runs: the keys are built and
 * spread by the top bits of their start over 1 to 2 buckets a key, which
 * leaves records of different runs a few places out of order at most, and
 * an insertion sort finishes. It gives up (returns NULL) when the
 * insertion sort would move more than @budget keys (bursts: many starts in
 * one bucket), so it never costs more than a bounded detour. The counts
 * are b->run's (2 x cap + 1 entries; the merge's run starts otherwise).
 * With at most 8 K buckets (32 KiB on the stack, until session 10), the
 * per-char bonnie++ capture's 17 K-key chunks had two keys a bucket and
 * 45% of its keys moved, most at a mispredicted branch: batch_sort was a
 * sixth of that report's cycles. Now 15% move (its report: -6% CPU).
 */
static uint64_t *pk_bucket(struct rd_batch *b, uint64_t *k, uint64_t *tmp, uint32_t n,
			   unsigned int tbits, uint64_t budget)
{
	const unsigned char *rec = b->recs + offsetof(struct iotap_trace_rec, time_ns);
	unsigned int d = 64 - (unsigned int)__builtin_clzll(n), shift;	/* 2^d <= 2n */
	uint32_t *cnt = b->run, sum = 0, x, i, j;
	uint64_t base = b->tmin, t, moves = 0;

	if (d > tbits)
		d = tbits;
	shift = tbits - d;
	memset(cnt, 0, sizeof(*cnt) << d);
	for (i = 0; i < n; i++, rec += REC_STRIDE) {
		memcpy(&t, rec, sizeof(t));
		t -= base;
		k[i] = t << PK_IDX_BITS | i;
		cnt[t >> shift]++;
	}
	for (i = 0; i < 1u << d; i++) {
		x = cnt[i];
		cnt[i] = sum;
		sum += x;
	}
	for (i = 0; i < n; i++)
		tmp[cnt[k[i] >> (PK_IDX_BITS + shift)]++] = k[i];
	for (i = 1; i < n; i++) {
		uint64_t v = tmp[i];

		if (v > tmp[i - 1])
			continue;
		j = i;
		do {
			tmp[j] = tmp[j - 1];
			j--;
		} while (j && tmp[j - 1] > v);
		tmp[j] = v;
		moves += i - j;
		if (moves > budget)
			return NULL;
	}
	return tmp;
}

/*
 * LSD radix sort of packed keys on their start bits, @rp passes of @dbits
 * whose counts @cnt holds: each pass is stable, and the keys start in
 * index order, so the result is in (start, index) order. A pass whose
 * keys all share the digit is skipped. Returns the array that holds it.
 */
static uint64_t *pk_radix(uint64_t *src, uint64_t *dst, uint32_t n, unsigned int rp,
			  unsigned int dbits, uint32_t *cnt)
{
	uint64_t mask = (1u << dbits) - 1;
	unsigned int p, shift;
	uint64_t *t;
	uint32_t i;

	for (p = 0; p < rp; p++) {
		uint32_t *c = cnt + (p << dbits), sum = 0, x;

		shift = PK_IDX_BITS + p * dbits;
		if (c[(src[0] >> shift) & mask] == n)
			continue;
		for (i = 0; i <= mask; i++) {
			x = c[i];
			c[i] = sum;
			sum += x;
		}
		for (i = 0; i < n; i++)
			dst[c[(src[i] >> shift) & mask]++] = src[i];
		t = src;
		src = dst;
		dst = t;
	}
	return src;
}

/*
 * Natural merge sort: merges neighbouring sorted runs until one is left.
 * The result is in b->keys.
 */
static void batch_sort_wide(struct rd_batch *b)
{
	struct rd_key *src = b->keys, *dst = b->tmp, *t;
	uint32_t n = b->nrec;

	if (run_end(src, 0, n) >= n)
		return;
	for (;;) {
		uint32_t i = 0, runs = 0;

		while (i < n) {
			uint32_t m = run_end(src, i, n), e, x, y, o;

			runs++;
			if (m >= n) {
				memcpy(dst + i, src + i, (n - i) * sizeof(*src));
				break;
			}
			e = run_end(src, m, n);
			for (x = i, y = m, o = i; x < m && y < e;)
				dst[o++] = key_lt(&src[y], &src[x]) ? src[y++] : src[x++];
			memcpy(dst + o, src + x, (m - x) * sizeof(*src));
			o += m - x;
			memcpy(dst + o, src + y, (e - y) * sizeof(*src));
			i = e;
		}
		t = src;
		src = dst;
		dst = t;
		if (runs <= 1)
			break;
	}
	b->keys = src;
	b->tmp = dst;
}

/* Put a batch whose records are not in start order into merge order. */
static void batch_sort(struct rd_batch *b)
{
	uint64_t *k = (uint64_t *)b->keys, *res, span;
	uint32_t i, n = b->nrec;
	unsigned int tbits, rp, mp;

	if ((b->tmax - b->tmin) >> (64 - PK_IDX_BITS)) {
		for (i = 0; i < n; i++) {
			b->keys[i].time = brec(b, i)->time_ns;
			b->keys[i].idx = i;
		}
		b->packed = 0;
		batch_sort_wide(b);
		return;
	}
	span = b->tmax - b->tmin;
	tbits = span ? 64 - (unsigned int)__builtin_clzll(span) : 0;
	rp = (tbits + RADIX_BITS - 1) / RADIX_BITS;
	/*
	 * Merging the runs (desc + 1 of them) costs about 11 instructions a
	 * key a pass, log2(runs) passes, after a pass that finds them; radix
	 * about 4 a key a pass to count (with the key building) and 8 to
	 * move, and 3 a counter. (Captures: ~100 runs of ~30 keys over 27
	 * bits: 3 radix passes of 9 bits instead of 7 merges.)
	 */
	mp = 64 - (unsigned int)__builtin_clzll(b->desc);
	/* many runs: bucket and insertion sort, ~40 a key unless it gives up */
	res = NULL;
	if (tbits && 11ull * mp + 14 > 40)
		res = pk_bucket(b, k, (uint64_t *)b->tmp, n, tbits, 8ull * n);
	if (res) {
		;
	} else if (rp && (uint64_t)rp * (12ull * n + (3ull << ((tbits + rp - 1) / rp))) <
		  (uint64_t)mp * 11 * n + 6ull * n) {
		uint32_t cnt[RADIX_PASSES << RADIX_BITS];
		unsigned int dbits = (tbits + rp - 1) / rp;

		memset(cnt, 0, (size_t)(rp << dbits) * sizeof(*cnt));
		pk_build(b, k, n, rp, dbits, cnt);
		res = pk_radix(k, (uint64_t *)b->tmp, n, rp, dbits, cnt);
	} else {
		uint32_t nrun = 0;

		for (i = 0; i < n; i++)
			k[i] = (brec(b, i)->time_ns - b->tmin) << PK_IDX_BITS | i;
		b->run[nrun++] = 0;
		for (i = 1; i < n; i++)
			if (k[i] < k[i - 1])
				b->run[nrun++] = i;
		b->run[nrun] = n;
		res = pk_merge(k, (uint64_t *)b->tmp, b->run, nrun, n);
	}
	memset(res + n, 0, RD_PREFETCH * sizeof(*res));	/* what the fast path prefetches past the end */
	if (res != k) {
		b->tmp = b->keys;
		b->keys = (struct rd_key *)res;
	}
	b->packed = 1;
	b->kbase = b->tmin;
}

/* Start time and index in recs of the @i-th record in merge order. */
static inline uint64_t batch_time(const struct rd_batch *b, uint32_t i)
{
	if (b->sorted)
		return brec(b, i)->time_ns;
	if (b->packed)
		return b->kbase + (((const uint64_t *)b->keys)[i] >> PK_IDX_BITS);
	return b->keys[i].time;
}

static inline uint32_t batch_idx(const struct rd_batch *b, uint32_t i)
{
	if (b->sorted)
		return i;
	if (b->packed)
		return (uint32_t)(((const uint64_t *)b->keys)[i] & ((1u << PK_IDX_BITS) - 1));
	return (uint32_t)b->keys[i].idx;
}

static inline int batch_before(const struct rd_batch *a, const struct rd_batch *b)
{
	uint64_t x = batch_time(a, a->pos), y = batch_time(b, b->pos);

	return x < y || (x == y && a->seq < b->seq);
}

static void heap_down(struct iotap_trace_reader *r, unsigned int i)
{
	struct rd_batch **h = r->heap, *x = h[i];
	unsigned int n = r->nheap;

	for (;;) {
		unsigned int c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && batch_before(h[c + 1], h[c]))
			c++;
		if (!batch_before(h[c], x))
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = x;
}

static int heap_push(struct iotap_trace_reader *r, struct rd_batch *b)
{
	unsigned int i;

	if (r->nheap == r->heap_cap) {
		unsigned int cap = r->heap_cap ? 2 * r->heap_cap : 16;
		struct rd_batch **h = realloc(r->heap, cap * sizeof(*h));

		if (!h)
			return -ENOMEM;
		r->heap = h;
		r->heap_cap = cap;
	}
	i = r->nheap++;
	while (i) {
		unsigned int parent = (i - 1) / 2;

		if (!batch_before(b, r->heap[parent]))
			break;
		r->heap[i] = r->heap[parent];
		i = parent;
	}
	r->heap[i] = b;
	return 0;
}

/* --- chunks ------------------------------------------------------------- */

/* Header at @off: 0 valid, CHUNK_NEED_MORE torn by the end of the file, -EBADMSG, -errno. */
static int rd_hdr_at(struct iotap_trace_reader *r, uint64_t off, struct chunk_hdr *h)
{
	const uint8_t *p;
	ssize_t got;
	int ret;

	got = rb_get(r, off, CHUNK_HDR_SIZE, &p);
	if (got < 0)
		return (int)got;
	ret = chunk_hdr_parse(p, (size_t)got, h);
	if (ret != CHUNK_NEED_MORE || got < CHUNK_HDR_SIZE)
		return ret;
	/* A longer header than this version writes (checked sane by parse). */
	got = rb_get(r, off, le32_at(p + 8), &p);
	if (got < 0)
		return (int)got;
	return chunk_hdr_parse(p, (size_t)got, h);
}

/* Can this version read a chunk with a valid header @h? */
static int rd_readable(const struct chunk_hdr *h)
{
	/* Every record takes at least 2 bytes: nrec bounds what decoding allocates. */
	return h->raw_size <= CHUNK_RAW_MAX && h->nrec <= CHUNK_REC_MAX &&
	       h->nrec <= h->raw_size / 2 &&
	       h->payload_size <= ZSTD_compressBound(CHUNK_RAW_MAX) &&
	       !(h->flags & CHUNK_FLAGS_REQUIRED);
}

/* 1 and *@at: the next valid chunk header at or after @from; 0: none; -errno. */
static int rd_resync(struct iotap_trace_reader *r, uint64_t from, uint64_t *at)
{
	uint64_t pos = from;

	for (;;) {
		struct chunk_hdr h;
		const uint8_t *p, *q;
		ssize_t got;
		int ret;

		got = rb_get(r, pos, RD_SCAN, &p);
		if (got < 0)
			return (int)got;
		if (got < CHUNK_MAGIC_LEN)
			return 0;
		q = memmem(p, (size_t)got, CHUNK_MAGIC, CHUNK_MAGIC_LEN);
		if (!q) {
			if (got < RD_SCAN)
				return 0;
			pos += (uint64_t)got - (CHUNK_MAGIC_LEN - 1);
			continue;
		}
		pos += (uint64_t)(q - p);
		ret = rd_hdr_at(r, pos, &h);
		if (ret == 0) {
			*at = pos;
			return 1;
		}
		if (ret == CHUNK_NEED_MORE)
			return 0;
		if (ret != -EBADMSG)
			return ret;
		pos++;
	}
}

static void rd_damage(struct iotap_trace_reader *r, uint64_t off, uint64_t len)
{
	/* the pool reports a bad payload after later damage: keep the smallest */
	if (!r->stats.first_bad_offset || off < r->stats.first_bad_offset)
		r->stats.first_bad_offset = off;
	r->stats.bytes_skipped += len;
}

/* Everything from @off to the end of the file is an incomplete tail. */
static void rd_tail(struct iotap_trace_reader *r, uint64_t off)
{
	struct stat st;
	uint64_t end = r->eof_off;

	if (!r->buf_eof && fstat(r->fd, &st) == 0)
		end = (uint64_t)st.st_size;
	if (end > off) {
		rd_damage(r, off, end - off);
		r->stats.tail_bytes += end - off;
	}
	if (end > r->stats.file_bytes)
		r->stats.file_bytes = end;
	r->off = end > off ? end : off;
	r->scan_eof = 1;
}

/*
 * A record with a name or a sample (or LOST, END): copy them to the arena,
 * note them in b->data (the name pointer is set once the arena stops
 * moving) and in the batch's statistics. 0 or -ENOMEM.
 */
static int rd_store_rare(struct rd_batch *b, uint32_t n, const struct iotap_trace_rec *s,
			 const struct rec_extra *x)
{
	struct rd_data *dt;

	if (s->type == IOTAP_REC_LOST)
		b->bs.lost += s->length;
	else if (s->type == IOTAP_REC_END)
		b->bs.has_end = 1;
	if (!x->name && s->type != IOTAP_REC_SAMPLE)
		return 0;
	if (data_reserve(b) || arena_reserve(b, 7 + s->name_len + 1 + 7 + sizeof(x->sample)))
		return -ENOMEM;
	dt = &b->data[b->ndata++];
	dt->idx = n;
	dt->name = dt->sample = RD_NONE;
	b->arena_len = align8(b->arena_len);
	if (x->name) {
		dt->name = (uint32_t)b->arena_len;
		memcpy(b->arena + b->arena_len, x->name, s->name_len);
		b->arena[b->arena_len + s->name_len] = '\0';
		b->arena_len += s->name_len + 1;
	}
	if (s->type == IOTAP_REC_SAMPLE) {
		b->arena_len = align8(b->arena_len);
		dt->sample = (uint32_t)b->arena_len;
		memcpy(b->arena + b->arena_len, &x->sample, sizeof(x->sample));
		b->arena_len += sizeof(x->sample);
	}
	return 0;
}

/* Decode the chunk in d->cd.raw into a batch. -EBADMSG or -ENOMEM. */
static int rd_decode(int merge, struct rd_dec *d, const struct chunk_hdr *h,
		     struct rd_batch *b)
{
	const uint8_t *p = d->cd.raw, *end = d->cd.raw + h->raw_size;
	struct rec_sum sum = { .tmin = UINT64_MAX };
	uint32_t n = 0, total = 0, nops = 0, i;
	struct rec_extra x;
	int ret;

	ret = batch_reserve(merge, b, h->nrec);
	if (ret)
		return ret;
	b->arena_len = 0;
	b->ndata = 0;
	memset(&b->bs, 0, sizeof(b->bs));
	rec_state_reset(&d->st);
	while (p < end) {
		struct iotap_trace_rec *s;
		uint64_t t, e;
		int k;

		if (*p == IOTAP_REC_OP) {
			/* the bulk: OP records without names, in one loop */
			k = rec_decode_ops(&d->st, &p, end, b->recs + (size_t)n * REC_STRIDE,
					   h->nrec - total, &sum);
			if (k < 0)
				return -EBADMSG;
			n += (uint32_t)k;
			nops += (uint32_t)k;
			total += (uint32_t)k;
			if (p >= end)
				break;
		}
		/* one record of any other kind */
		s = brec(b, n);
		if (total == h->nrec)
			return -EBADMSG;
		k = rec_decode(&d->st, p, end, s, &x);
		if (k < 0)
			return -EBADMSG;
		p += k;
		total++;
		if (!s->type)
			continue;
		s->name = NULL;
		if ((s->type != IOTAP_REC_OP || x.name) && rd_store_rare(b, n, s, &x))
			return -ENOMEM;
		b->bs.by_type[s->type]++;
		t = s->time_ns;
		/* an APP record is written when its unit ends: time_ns is that end */
		e = s->type == IOTAP_REC_APP ? t : t + s->dur_ns;
		if (e < t)
			e = UINT64_MAX;
		if (e > sum.tend)
			sum.tend = e;
		/*
		 * Keys only once the chunk turns out not to be in start order
		 * (most are: the keys were a sixth of the memory traffic);
		 * batch_sort() builds them from the records.
		 */
		sum.desc += t < sum.last;
		sum.last = t;
		if (t < sum.tmin)
			sum.tmin = t;
		if (t > sum.tmax)
			sum.tmax = t;
		n++;
	}
	if (total != h->nrec)
		return -EBADMSG;
	for (i = 0; i < b->ndata; i++)
		if (b->data[i].name != RD_NONE)
			brec(b, b->data[i].idx)->name = b->arena + b->data[i].name;
	b->nrec = n;
	b->pos = 0;
	b->sorted = !merge || !sum.desc;
	b->desc = sum.desc;
	b->packed = 0;
	b->tmin = n ? sum.tmin : 0;
	b->tmax = sum.tmax;
	b->bs.n = n;
	b->bs.by_type[IOTAP_REC_OP] += nops;
	b->bs.tmin = b->tmin;
	b->bs.tend = sum.tend;
	return 0;
}

/*
 * Walks to the next chunk whose header is valid and readable, counting
 * damage and unreadable chunks on the way. Returns 1 with its header in
 * *@h, its offset in *@at and its whole bytes at *@p (valid until the next
 * window call), 0 at the end of the file (the tail counted), or -errno.
 */
static int rd_scan(struct iotap_trace_reader *r, struct chunk_hdr *h, uint64_t *at,
		   const uint8_t **p)
{
	for (;;) {
		uint64_t total, next = 0;
		ssize_t got;
		int ret;

		if (r->scan_eof)
			return 0;
		got = rb_get(r, r->off, 1, p);
		if (got < 0)
			return (int)got;
		if (got == 0) {
			rd_tail(r, r->off);
			return 0;
		}
		ret = rd_hdr_at(r, r->off, h);
		if (ret == CHUNK_NEED_MORE) {
			rd_tail(r, r->off);
			return 0;
		}
		if (ret == -EBADMSG) {
			ret = rd_resync(r, r->off + 1, &next);
			if (ret < 0)
				return ret;
			if (ret == 0) {
				rd_tail(r, r->off);
				return 0;
			}
			r->stats.chunks_bad++;
			rd_damage(r, r->off, next - r->off);
			r->off = next;
			continue;
		}
		if (ret < 0)
			return ret;

		total = (uint64_t)h->hdr_size + h->payload_size;
		if (!rd_readable(h)) {
			struct stat st;

			/* Skip it by its size without reading it. */
			if (fstat(r->fd, &st) < 0)
				return -errno;
			if (r->off + total > (uint64_t)st.st_size) {
				rd_tail(r, r->off);
				return 0;
			}
			r->stats.chunks_bad++;
			rd_damage(r, r->off, total);
			r->off += total;
			continue;
		}
		got = rb_get(r, r->off, (size_t)total, p);
		if (got < 0)
			return (int)got;
		if ((uint64_t)got < total) {
			rd_tail(r, r->off);
			return 0;
		}
		*at = r->off;
		r->off += total;
		return 1;
	}
}

/* Check, decompress, decode and (merged reading) sort one chunk's payload. */
static int rd_decode_payload(int merge, struct rd_dec *d, const struct chunk_hdr *h,
			     const uint8_t *payload, struct rd_batch *b)
{
	int ret = chunk_dec_payload(&d->cd, h, payload);

	if (!ret)
		ret = rd_decode(merge, d, h, b);
	if (!ret && merge && b->nrec && !b->sorted)
		batch_sort(b);
	return ret;
}

/*
 * The outcome of one chunk, in file order: 1 with *@out for a chunk that
 * decoded, 0 for one that did not (counted as damage), -ENOMEM.
 */
static int rd_take(struct iotap_trace_reader *r, const struct chunk_hdr *h, uint64_t at,
		   int ret, struct rd_batch *b, struct rd_batch **out)
{
	uint64_t total = (uint64_t)h->hdr_size + h->payload_size;

	if (ret == -ENOMEM) {
		batch_put(r, b);
		return ret;
	}
	if (r->progress)
		r->progress(r->progress_arg, at + total, r->stats.file_bytes, 0);
	if (ret) {
		batch_put(r, b);
		r->stats.chunks_bad++;
		rd_damage(r, at, total);
		return 0;
	}
	r->stats.chunks++;
	r->stats.compressed_bytes += h->payload_size;
	r->stats.raw_bytes += h->raw_size;
	if (h->watermark > r->watermark)
		r->watermark = h->watermark;
	b->seq = r->seq++;
	*out = b;
	return 1;
}

/* --- the decoder pool ---------------------------------------------------- */

/*
 * Hand-off without a lock round trip per chunk: a job's state moves by
 * atomic stores (the reading thread: FREE -> QUEUED, DONE -> FREE) and
 * compare-and-swap (whoever decodes: QUEUED -> TAKEN -> DONE). A side
 * that found nothing to do spins briefly, then sleeps on a futex word
 * (work_seq, done_seq): it reads the word, announces its sleep
 * (pl->sleeping, pl->waiting), checks the jobs once more and sleeps only
 * if the word is unchanged; the other side changes a job's state before
 * reading the announcement (both sequentially consistent) and, only if
 * someone sleeps, bumps the word and wakes it. So a wakeup is never lost,
 * costs a system call only when a thread really sleeps, and the woken
 * thread does not then queue for a mutex. The reading thread wakes
 * sleeping decoders once pl->wake_at jobs are queued, not for each chunk.
 */
/* Bump @word and wake up to @n threads sleeping on it. */
static void futex_bump(unsigned int *word, int n)
{
	__atomic_add_fetch(word, 1, __ATOMIC_SEQ_CST);
	iotap_futex_wake(word, n, 0);
}

static inline int job_state(const struct rd_job *j)
{
	return __atomic_load_n(&j->state, __ATOMIC_ACQUIRE);
}

static inline void job_set(struct rd_job *j, int state)
{
	__atomic_store_n(&j->state, state, __ATOMIC_SEQ_CST);
}

/* Claim the oldest queued job from the @skip-th in the ring on, or NULL. */
static struct rd_job *pool_grab(struct rd_pool *pl, unsigned int skip)
{
	unsigned int head = __atomic_load_n(&pl->head, __ATOMIC_ACQUIRE), i;

	for (i = skip; i < pl->njobs; i++) {
		struct rd_job *j = &pl->ring[(head + i) % pl->njobs];
		int want = JOB_QUEUED;

		if (__atomic_load_n(&j->state, __ATOMIC_RELAXED) == JOB_QUEUED &&
		    __atomic_compare_exchange_n(&j->state, &want, JOB_TAKEN, 0,
						__ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			return j;
	}
	return NULL;
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

/* A decoder thread's decompression: into its own buffer, then copied into @j's (pool_run()). */
static int pool_dec_copy(struct rd_dec *d, struct rd_job *j)
{
	int ret = chunk_dec_payload(&d->cd, &j->h, j->payload);

	if (ret)
		return ret;
	if (j->raw_cap < j->h.raw_size || !j->raw) {
		j->raw = iotap_buf_regrow(j->raw, &j->raw_cap, j->h.raw_size > IOTAP_BUF_HUGE ?
						       j->h.raw_size : IOTAP_BUF_HUGE);
		if (!j->raw)
			return -ENOMEM;
	}
	memcpy(j->raw, d->cd.raw, j->h.raw_size);
	return 0;
}

/*
 * Check and decompress a claimed job and publish it; wake the reading
 * thread if it waits. @own: the caller is the reading thread, whose spent
 * buffer the job's raw one is, so it decompresses straight into it. A
 * decoder thread decompresses into its own buffer and copies the payload
 * into the job's: zstd writing straight into a buffer the reading thread
 * had just decoded from ran 2.2-2.4 times as long (the per-char bonnie++
 * capture: 43-49 ms against 19-20 ms for the same 125 chunks, 19.5 MB;
 * its own buffer and the copy, 21-22 ms). Its stores and the match copies
 * that read them back wait for lines the other CPU holds; the copy streams.
 */
static void pool_run(struct rd_pool *pl, struct rd_dec *d, int init, struct rd_job *j, int own)
{
	int ret = init;

	if (!ret)
		ret = own ? chunk_dec_into(&d->cd, &j->h, j->payload, &j->raw, &j->raw_cap)
			  : pool_dec_copy(d, j);
	j->ret = ret;
	job_set(j, JOB_DONE);
	if (__atomic_load_n(&pl->waiting, __ATOMIC_SEQ_CST))
		futex_bump(&pl->done_seq, 1);
}

static void *pool_main(void *arg)
{
	struct rd_pool *pl = arg;
	struct rd_dec d;
	int init = chunk_dec_init(&d.cd);

	while (!__atomic_load_n(&pl->stop, __ATOMIC_ACQUIRE)) {
		struct rd_job *j = pool_grab(pl, 0);
		unsigned int spin;

		/* a short spin: the reading thread often queues a job within it */
		for (spin = 0; !j && spin < RD_SPIN; spin++) {
			cpu_relax();
			if (!(spin & 63))
				j = pool_grab(pl, 0);
		}
		while (!j && !__atomic_load_n(&pl->stop, __ATOMIC_ACQUIRE)) {
			unsigned int seq = __atomic_load_n(&pl->work_seq, __ATOMIC_SEQ_CST);

			__atomic_add_fetch(&pl->sleeping, 1, __ATOMIC_SEQ_CST);
			j = pool_grab(pl, 0);
			if (!j && !__atomic_load_n(&pl->stop, __ATOMIC_SEQ_CST))
				iotap_futex_wait(&pl->work_seq, seq, 0);
			__atomic_sub_fetch(&pl->sleeping, 1, __ATOMIC_SEQ_CST);
		}
		if (!j)
			break;
		pool_run(pl, &d, init, j, 0);
	}
	if (!init)
		chunk_dec_release(&d.cd);
	return NULL;
}

static void pool_stop(struct iotap_trace_reader *r)
{
	struct rd_pool *pl = r->pool;
	unsigned int i;

	if (!pl)
		return;
	__atomic_store_n(&pl->stop, 1, __ATOMIC_SEQ_CST);
	futex_bump(&pl->work_seq, INT32_MAX);
	for (i = 0; i < pl->nthreads; i++)
		pthread_join(pl->tid[i], NULL);
	for (i = 0; i < pl->njobs; i++) {
		iotap_buf_free(pl->ring[i].payload, pl->ring[i].payload_cap);
		iotap_buf_free(pl->ring[i].raw, pl->ring[i].raw_cap);
	}
	free(pl->ring);
	free(pl);
	r->pool = NULL;
}

/* @n decoder threads besides the reading thread. */
static int pool_start(struct iotap_trace_reader *r, unsigned int n)
{
	struct rd_pool *pl = calloc(1, sizeof(*pl));
	unsigned int i;

	if (!pl)
		return -ENOMEM;
	/*
	 * One job a decoder: the reading thread queues the next chunk as it
	 * takes one (rd_next_chunk_pool), so each decoder decompresses the
	 * chunk after the one being decoded and delivered. (With whole
	 * batches decoded in the jobs, a deeper ring cost more CPU, in page
	 * faults, than the stalls it saved.)
	 */
	pl->njobs = n;
	pl->wake_at = (n + 1) / 2;
	pl->ring = calloc(pl->njobs, sizeof(*pl->ring));
	if (!pl->ring) {
		free(pl);
		return -ENOMEM;
	}
	r->pool = pl;
	for (i = 0; i < n; i++) {
		if (pthread_create(&pl->tid[i], NULL, pool_main, pl))
			break;
		pl->nthreads++;
	}
	if (!pl->nthreads) {
		pool_stop(r);
		return -EAGAIN;
	}
	return 0;
}

/* Wake the sleeping decoders. */
static void pool_wake(struct rd_pool *pl)
{
	pl->unwoken = 0;
	if (__atomic_load_n(&pl->sleeping, __ATOMIC_SEQ_CST))
		futex_bump(&pl->work_seq, INT32_MAX);
}

/*
 * Queue chunks until the ring is full or the file ends. An error (the
 * walk's I/O error, ENOMEM) stops the queueing for good in pl->err; the
 * jobs queued before it are still delivered, as without the pool.
 */
static void pool_fill(struct iotap_trace_reader *r)
{
	struct rd_pool *pl = r->pool;
	int ret = 0;

	while (pl->nq < pl->njobs && !r->scan_eof && !pl->err) {
		struct rd_job *j = &pl->ring[(pl->head + pl->nq) % pl->njobs];
		const uint8_t *p;
		uint64_t at;

		ret = rd_scan(r, &j->h, &at, &p);
		if (ret <= 0)
			break;
		ret = -ENOMEM;
		if (j->payload_cap < j->h.payload_size || !j->payload) {
			/*
			 * At least a 2 MiB extent a huge page backs, spent when
			 * regrown: grown chunk by chunk with realloc(), the
			 * copies faulted pages in anew (the per-char capture's
			 * report with two threads: 650 faults, 496 now; one
			 * thread 453).
			 */
			j->payload = iotap_buf_regrow(j->payload, &j->payload_cap,
						      j->h.payload_size > IOTAP_BUF_HUGE ?
						      j->h.payload_size : IOTAP_BUF_HUGE);
			if (!j->payload)
				break;
		}
		memcpy(j->payload, p + j->h.hdr_size, j->h.payload_size);
		j->off = at;
		j->total = (uint64_t)j->h.hdr_size + j->h.payload_size;
		job_set(j, JOB_QUEUED);
		pl->nq++;
		if (++pl->unwoken >= pl->wake_at)
			pool_wake(pl);
		ret = 0;
	}
	if (ret < 0)
		pl->err = ret;
	if (pl->unwoken)
		pool_wake(pl);
}

/* Wait until a decoder has decompressed @j (TAKEN by it, nothing left to claim). */
static void pool_wait(struct rd_pool *pl, struct rd_job *j)
{
	unsigned int spin;

	for (spin = 0; spin < RD_SPIN; spin++) {
		if (job_state(j) == JOB_DONE)
			return;
		cpu_relax();
	}
	for (;;) {
		unsigned int seq = __atomic_load_n(&pl->done_seq, __ATOMIC_SEQ_CST);

		__atomic_store_n(&pl->waiting, 1, __ATOMIC_SEQ_CST);
		if (job_state(j) == JOB_DONE)
			break;
		iotap_futex_wait(&pl->done_seq, seq, 0);
	}
	__atomic_store_n(&pl->waiting, 0, __ATOMIC_SEQ_CST);
}

/*
 * The next chunk in file order, decoded here. The reading thread never
 * sleeps while a job is queued: it decompresses the oldest one itself when
 * the chunk it needs is still queued or is being decompressed elsewhere.
 */
static int rd_next_chunk_pool(struct iotap_trace_reader *r, struct rd_batch **out)
{
	struct rd_pool *pl = r->pool;
	int merge = !(r->flags & IOTAP_TRACE_READ_FILE_ORDER);

	for (;;) {
		struct rd_job *j, *o;
		struct rd_batch *b;
		struct chunk_hdr h;
		uint8_t *raw;
		size_t cap;
		uint64_t at;
		int ret;

		pool_fill(r);
		if (!pl->nq)
			return pl->err;
		j = &pl->ring[pl->head];
		while (job_state(j) != JOB_DONE) {
			o = pool_grab(pl, 0);
			if (o)
				pool_run(pl, &r->dec, 0, o, 1);
			else
				pool_wait(pl, j);
		}
		h = j->h;
		at = j->off;
		ret = j->ret;
		/* the job's raw payload becomes this thread's; the job takes the spent one */
		raw = r->dec.cd.raw;
		cap = r->dec.cd.raw_cap;
		r->dec.cd.raw = j->raw;
		r->dec.cd.raw_cap = j->raw_cap;
		j->raw = raw;
		j->raw_cap = cap;
		__atomic_store_n(&j->state, JOB_FREE, __ATOMIC_RELAXED);
		__atomic_store_n(&pl->head, (pl->head + 1) % pl->njobs, __ATOMIC_RELEASE);
		pl->nq--;
		/* queue the next chunk now: it decompresses while this one decodes and is consumed */
		pool_fill(r);
		b = batch_get(r);
		if (!b)
			return -ENOMEM;
		if (!ret)
			ret = rd_decode(merge, &r->dec, &h, b);
		if (!ret && merge && b->nrec && !b->sorted)
			batch_sort(b);
		ret = rd_take(r, &h, at, ret, b, out);
		if (ret < 0)
			return ret;
		if (ret == 0)
			continue;	/* a bad chunk, counted and skipped */
		return 1;
	}
}

/* The end of the file: no more chunks. */
static void rd_end(struct iotap_trace_reader *r)
{
	if (!r->eof && r->progress)
		r->progress(r->progress_arg, r->stats.file_bytes, r->stats.file_bytes, 1);
	r->eof = 1;
}

/*
 * Reads chunks until one decodes. Returns 1 with *@out (possibly holding
 * no records; merged reading: sorted), 0 at the end of the file (r->eof
 * set), or -errno.
 */
static int rd_next_chunk(struct iotap_trace_reader *r, struct rd_batch **out)
{
	int merge = !(r->flags & IOTAP_TRACE_READ_FILE_ORDER);

	for (;;) {
		struct chunk_hdr h;
		const uint8_t *p;
		struct rd_batch *b;
		uint64_t at;
		int ret;

		if (r->pool) {
			ret = rd_next_chunk_pool(r, out);
			if (ret == 0)
				rd_end(r);
			return ret;
		}
		ret = rd_scan(r, &h, &at, &p);
		if (ret < 0)
			return ret;
		if (ret == 0) {
			rd_end(r);
			return 0;
		}
		b = batch_get(r);
		if (!b)
			return -ENOMEM;
		ret = rd_decode_payload(merge, &r->dec, &h, p + h.hdr_size, b);
		ret = rd_take(r, &h, at, ret, b, out);
		if (ret)
			return ret;
	}
}

/* --- delivery ----------------------------------------------------------- */

/* Add the statistics of delivered records @bs to @st. */
static void stats_add(struct iotap_trace_read_stats *st, const struct rd_bstats *bs)
{
	unsigned int i;

	if (!bs->n)
		return;
	if (!st->records || bs->tmin < st->t_first_ns)
		st->t_first_ns = bs->tmin;
	if (bs->tend > st->t_last_ns)
		st->t_last_ns = bs->tend;
	st->records += bs->n;
	for (i = 0; i < IOTAP_REC_TYPE_MAX; i++)
		st->records_by_type[i] += bs->by_type[i];
	st->lost_records += bs->lost;
	st->has_end |= bs->has_end;
}

/* Count one record in @bs (the delivered part of a batch not exhausted yet). */
static void bstats_rec(struct rd_bstats *bs, const struct iotap_trace_rec *s)
{
	/* an APP record is written when its unit ends: time_ns is that end */
	uint64_t end = s->type == IOTAP_REC_APP ? s->time_ns : s->time_ns + s->dur_ns;

	if (end < s->time_ns)
		end = UINT64_MAX;
	if (!bs->n || s->time_ns < bs->tmin)
		bs->tmin = s->time_ns;
	if (end > bs->tend)
		bs->tend = end;
	bs->n++;
	bs->by_type[s->type]++;
	if (s->type == IOTAP_REC_LOST)
		bs->lost += s->length;
	else if (s->type == IOTAP_REC_END)
		bs->has_end = 1;
}

/* @b is exhausted: its records are in the statistics from now on. */
static void rd_retire(struct iotap_trace_reader *r, struct rd_batch *b)
{
	stats_add(&r->stats, &b->bs);
	r->retire = b;
}

/*
 * The record at index @idx of @b as handed out: the batch's head, or for a
 * SAMPLE record (whose sample lives in the arena) a whole copy in r->out.
 */
static const struct iotap_trace_rec *rd_rare(struct iotap_trace_reader *r,
					     const struct rd_batch *b, uint32_t idx)
{
	const struct iotap_trace_rec *s = brec(b, idx);
	uint32_t lo = 0, hi = b->ndata;

	memcpy(&r->out, s, REC_HEAD);
	memset(&r->out.sample, 0, sizeof(r->out.sample));
	while (lo < hi) {	/* b->data is in index order */
		uint32_t mid = lo + (hi - lo) / 2;

		if (b->data[mid].idx < idx)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < b->ndata && b->data[lo].idx == idx && b->data[lo].sample != RD_NONE)
		memcpy(&r->out.sample, b->arena + b->data[lo].sample, sizeof(r->out.sample));
	return &r->out;
}

static inline const struct iotap_trace_rec *rd_hand(struct iotap_trace_reader *r,
						    const struct rd_batch *b, uint32_t idx)
{
	const struct iotap_trace_rec *s = brec(b, idx);

	if (__builtin_expect(s->type == IOTAP_REC_SAMPLE, 0))
		return rd_rare(r, b, idx);
	return s;
}

static int rd_next_file_order(struct iotap_trace_reader *r, const struct iotap_trace_rec **rec)
{
	for (;;) {
		struct rd_batch *b = r->cur;
		int ret;

		if (b) {
			if (b->pos + RD_PREFETCH < b->nrec)
				__builtin_prefetch(brec(b, b->pos + RD_PREFETCH));
			*rec = rd_hand(r, b, b->pos++);
			if (b->pos == b->nrec) {
				rd_retire(r, b);
				r->cur = NULL;
			}
			return 1;
		}
		if (r->eof)
			return 0;
		ret = rd_next_chunk(r, &b);
		if (ret <= 0)
			return ret;
		if (b->nrec)
			r->cur = b;
		else
			batch_put(r, b);
	}
}

/*
 * Take the fast path down: its records were delivered in order, without
 * the time, position and pending count the slow path keeps: catch up.
 */
static void rd_run_stop(struct iotap_trace_reader *r)
{
	struct rd_batch *b = r->run_b;

	if (!b)
		return;
	b->pos = r->run.pos;
	r->pending -= b->pos - r->run_from;
	r->last_time = batch_time(b, b->pos - 1);
	r->run_b = NULL;
	r->run.end = 0;
}

struct rd_run *rd_run_of(struct iotap_trace_reader *r)
{
	return &r->run;
}

/*
 * Set up the fast path on heap[0] = @b, whose record at b->pos - 1 was just
 * delivered in order: its records that start before the limit come before
 * any other pending batch's next one (ties go by file order) and are
 * released by the watermark or the end of the file.
 */
static void rd_run_start(struct iotap_trace_reader *r, struct rd_batch *b)
{
	uint64_t lim = r->eof ? UINT64_MAX : r->watermark;
	unsigned int c;

	for (c = 1; c <= 2 && c < r->nheap; c++) {
		const struct rd_batch *o = r->heap[c];
		uint64_t t = batch_time(o, o->pos);

		/* b's records at o's time come first if b is the older chunk */
		if (b->seq < o->seq && t < UINT64_MAX)
			t++;
		if (t < lim)
			lim = t;
	}
	r->run_b = b;
	r->run_from = b->pos;
	r->run.recs = b->recs;
	r->run.pos = b->pos;
	r->run.end = b->nrec - 1;	/* the last goes the slow way (the batch retires) */
	if (b->sorted) {
		r->run.keys = NULL;
		r->run.lim = lim;
		return;
	}
	r->run.keys = (const uint64_t *)b->keys;
	if (lim <= b->kbase)
		r->run.lim = 0;
	else if ((lim - b->kbase) >> (64 - PK_IDX_BITS))
		r->run.lim = UINT64_MAX;	/* above every key */
	else
		r->run.lim = (lim - b->kbase) << PK_IDX_BITS;
}

static int rd_next_merged(struct iotap_trace_reader *r, const struct iotap_trace_rec **rec)
{
	rd_run_stop(r);
	for (;;) {
		struct rd_batch *b;
		int ret;

		if (r->top_dirty) {
			heap_down(r, 0);
			r->top_dirty = 0;
		}
		if (r->nheap) {
			uint64_t t;

			b = r->heap[0];
			t = batch_time(b, b->pos);
			if (r->eof || t < r->watermark || r->pending > RD_PENDING_MAX ||
			    r->pending_mem > RD_PENDING_MEM) {
				int late = t < r->last_time;

				if (!r->eof && t >= r->watermark)
					r->stats.early_records++;	/* the memory cap, not the promise */
				if (late)
					r->stats.late_records++;
				else
					r->last_time = t;
				/* the batch is cold by now: fetch a few records ahead */
				if (b->pos + RD_PREFETCH < b->nrec)
					__builtin_prefetch(brec(b, batch_idx(b, b->pos + RD_PREFETCH)));
				*rec = rd_hand(r, b, batch_idx(b, b->pos));
				r->pending--;
				if (++b->pos == b->nrec) {
					r->heap[0] = r->heap[--r->nheap];
					r->pending_mem -= batch_mem(b);
					rd_retire(r, b);
					if (r->nheap)
						heap_down(r, 0);
				} else {
					r->top_dirty = 1;
					/* records after a late one may be late too: check them here */
					if (!late && (b->sorted || b->packed))
						rd_run_start(r, b);
				}
				return 1;
			}
		}
		if (r->eof)
			return 0;
		ret = rd_next_chunk(r, &b);
		if (ret < 0)
			return ret;
		if (ret == 0)
			continue;	/* r->eof: release what is pending */
		if (!b->nrec) {
			batch_put(r, b);
			continue;
		}
		ret = heap_push(r, b);
		if (ret) {
			batch_put(r, b);
			return ret;
		}
		r->pending += b->nrec;
		r->pending_mem += batch_mem(b);
	}
}

/* The slow path of iotap_trace_reader_next_ref(). */
static __attribute__((noinline)) int rd_next_slow(struct iotap_trace_reader *r,
						  const struct iotap_trace_rec **rec)
{
	int ret;

	if (r->retire) {
		batch_put(r, r->retire);
		r->retire = NULL;
	}
	r->started = 1;
	if (r->err)
		return r->err;
	if (r->flags & IOTAP_TRACE_READ_FILE_ORDER)
		ret = rd_next_file_order(r, rec);
	else
		ret = rd_next_merged(r, rec);
	if (ret < 0)
		r->err = ret;	/* no run was set up: the fast path stays off */
	return ret;
}

/**
 * iotap_trace_reader_next_ref - the next record, in place
 * @r:   reader
 * @rec: set to the record, valid until the next call on @r
 *
 * The record's sample may be read only when its type is SAMPLE: other
 * records are handed out without one (do not copy them whole).
 * Context: the reader's thread. Return: as iotap_trace_reader_next().
 */
int iotap_trace_reader_next_ref(struct iotap_trace_reader *r, const struct iotap_trace_rec **rec)
{
	const struct iotap_trace_rec *s = rd_run_next(&r->run);

	if (s) {
		*rec = s;
		return 1;
	}
	return rd_next_slow(r, rec);
}

/**
 * iotap_trace_reader_next - the next record
 * @r:   reader
 * @rec: filled; rec->name points into reader memory valid until the next call
 *
 * Context: the reader's thread. Return: 1 with a record, 0 at the end, or
 * -errno on a read error or when memory runs out (sticky).
 */
int iotap_trace_reader_next(struct iotap_trace_reader *r, struct iotap_trace_rec *rec)
{
	const struct iotap_trace_rec *s;
	int ret = iotap_trace_reader_next_ref(r, &s);

	if (ret == 1)
		rec_copy_out(rec, s);
	return ret;
}

/* --- open / close ------------------------------------------------------- */

/**
 * iotap_trace_reader_open_fd - open a trace on a seekable fd
 * @out:   the new reader
 * @fd:    open for reading; the reader uses pread(2) and does not close it
 * @flags: IOTAP_TRACE_READ_FILE_ORDER
 *
 * Return: as iotap_trace_reader_open().
 */
int iotap_trace_reader_open_fd(struct iotap_trace_reader **out, int fd,
			       unsigned int flags)
{
	struct iotap_trace_reader *r;
	unsigned int major, minor;
	const uint8_t *p;
	struct stat st;
	uint32_t hsize;
	ssize_t got;
	int ret;

	if (!out || fd < 0)
		return -EINVAL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->fd = fd;
	r->flags = flags;
	r->free_max = RD_FREE_BATCHES;
	r->buf_cap = RD_BUF_INIT;
	r->buf = malloc(r->buf_cap);
	if (!r->buf) {
		ret = -ENOMEM;
		goto err_free_reader;
	}
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		goto err_free_buf;
	}
	r->stats.file_bytes = (uint64_t)st.st_size;

	got = rb_get(r, 0, 16, &p);
	if (got < 0) {
		ret = (int)got;
		goto err_free_buf;
	}
	ret = fhdr_probe(p, (size_t)got, &major, &minor, &hsize);
	if (ret)
		goto err_free_buf;
	if (major == 0) {
		ret = -EBADMSG;
		goto err_free_buf;
	}
	if (major > IOTAP_TRACE_VERSION_MAJOR) {
		ret = -EPROTONOSUPPORT;
		goto err_free_buf;
	}
	if (hsize < TRACE_HDR_MIN || hsize > TRACE_HDR_MAX) {
		ret = -EBADMSG;
		goto err_free_buf;
	}
	got = rb_get(r, 0, hsize, &p);
	if (got < 0) {
		ret = (int)got;
		goto err_free_buf;
	}
	ret = fhdr_decode(p, (size_t)got, &r->hdr, &r->hdr_strings);
	if (ret)
		goto err_free_buf;
	ret = chunk_dec_init(&r->dec.cd);
	if (ret)
		goto err_free_strings;
	r->off = hsize;
	r->stats.header_bytes = hsize;
	*out = r;
	return 0;

err_free_strings:
	free(r->hdr_strings);
err_free_buf:
	free(r->buf);
err_free_reader:
	free(r);
	return ret;
}

/**
 * iotap_trace_reader_open - open a trace file and check its header
 * @out:   the new reader
 * @path:  the trace
 * @flags: IOTAP_TRACE_READ_FILE_ORDER
 *
 * Return: 0; -errno from open(2); -ENODATA for an empty file; -EBADMSG
 * when the file is not an iotap trace or its header is damaged;
 * -EPROTONOSUPPORT for a newer major version (iotap_trace_probe_version()
 * says which).
 */
int iotap_trace_reader_open(struct iotap_trace_reader **out, const char *path,
			    unsigned int flags)
{
	int fd, ret;

	if (!out || !path)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = iotap_trace_reader_open_fd(out, fd, flags);
	if (ret) {
		close(fd);
		return ret;
	}
	(*out)->own_fd = 1;
	return 0;
}

/**
 * iotap_trace_reader_set_threads - decompress chunks on @n threads
 * @r: reader, before its first iotap_trace_reader_next()
 * @n: threads that decompress, the calling thread included (it decodes
 *     every chunk, and decompresses one when it would otherwise wait):
 *     @n - 1 are started; 1: everything on the calling thread; 0:
 *     IOTAP_READ_THREADS from the environment if set, else 1 (a second
 *     thread was not faster in wall time on the 2-CPU VMs measured:
 *     BENCHMARKS.md)
 *
 * The records, their order and the statistics do not depend on @n.
 * Return: 0; -EBUSY after the first next(); -EINVAL for a bad
 * IOTAP_READ_THREADS; -ENOMEM or -EAGAIN when no thread could start (the
 * reader then decodes on the calling thread).
 */
int iotap_trace_reader_set_threads(struct iotap_trace_reader *r, unsigned int n)
{
	if (r->started)
		return -EBUSY;
	if (!n) {
		const char *env = getenv("IOTAP_READ_THREADS");

		n = 1;
		if (env && *env) {
			char *end;
			unsigned long v = strtoul(env, &end, 10);

			if (*end || !v)
				return -EINVAL;
			n = v > RD_THREADS_MAX ? RD_THREADS_MAX : (unsigned int)v;
		}
	}
	if (n > RD_THREADS_MAX)
		n = RD_THREADS_MAX;
	pool_stop(r);
	if (n <= 1)
		return 0;
	return pool_start(r, n - 1);	/* the calling thread is the n-th */
}

/**
 * iotap_trace_reader_header - the decoded header, valid until close
 * @r: reader
 */
const struct iotap_trace_header *iotap_trace_reader_header(const struct iotap_trace_reader *r)
{
	return &r->hdr;
}

/**
 * iotap_trace_reader_stats - what the reader found so far
 * @r:  reader
 * @st: filled; complete once iotap_trace_reader_next() has returned 0
 */
void iotap_trace_reader_stats(const struct iotap_trace_reader *r,
			      struct iotap_trace_read_stats *st)
{
	struct rd_bstats part;
	unsigned int i, k;

	*st = r->stats;
	/* the batches being delivered: their records so far */
	memset(&part, 0, sizeof(part));
	for (i = 0; i <= r->nheap; i++) {
		const struct rd_batch *b = i < r->nheap ? r->heap[i] : r->cur;
		uint32_t pos = !b ? 0 : b == r->run_b ? r->run.pos : b->pos;

		for (k = 0; k < pos; k++)
			bstats_rec(&part, brec(b, batch_idx(b, k)));
	}
	stats_add(st, &part);
}

/**
 * iotap_trace_reader_on_progress - follow @r through its file (iotap_trace.h)
 * @r:   reader
 * @fn:  called after each chunk taken and once at the end, NULL: none
 * @arg: its first argument
 */
void iotap_trace_reader_on_progress(struct iotap_trace_reader *r, iotap_trace_progress_fn fn,
				    void *arg)
{
	r->progress = fn;
	r->progress_arg = arg;
}

/**
 * iotap_trace_reader_close - free the reader (and close its fd if it
 * opened it)
 * @r: reader, or NULL
 */
void iotap_trace_reader_close(struct iotap_trace_reader *r)
{
	struct rd_batch *b;
	unsigned int i;

	if (!r)
		return;
	for (i = 0; i < r->nheap; i++)
		batch_free(r->heap[i]);
	free(r->heap);
	if (r->cur)
		batch_free(r->cur);
	if (r->retire)
		batch_free(r->retire);
	while ((b = r->free)) {
		r->free = b->next;
		batch_free(b);
	}
	pool_stop(r);
	chunk_dec_release(&r->dec.cd);
	if (r->own_fd)
		close(r->fd);
	free(r->hdr_strings);
	free(r->buf);
	free(r);
}

/**
 * iotap_trace_probe_version - read a file's format version without
 * accepting it
 * @path:  the file
 * @major: version_major found
 * @minor: version_minor found
 *
 * Return: 0; -errno from open(2)/read(2); -ENODATA for an empty file;
 * -EBADMSG when the file does not start like an iotap trace.
 */
int iotap_trace_probe_version(const char *path, unsigned int *major, unsigned int *minor)
{
	uint8_t buf[16];
	uint32_t hsize;
	ssize_t got = 0;
	int fd, ret;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while ((size_t)got < sizeof(buf)) {
		ssize_t k = pread(fd, buf + got, sizeof(buf) - (size_t)got, got);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			ret = -errno;
			close(fd);
			return ret;
		}
		if (k == 0)
			break;
		got += k;
	}
	close(fd);
	return fhdr_probe(buf, (size_t)got, major, minor, &hsize);
}
