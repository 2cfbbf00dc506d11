// SPDX-License-Identifier: MIT
/*
 * reader_pool.c - the reader's chunks decompressed on the tree's thread
 * pool (struct iotap_pool, trace/base/pool.c)
 *
 * Parallel decoding (iotap_trace_reader_set_threads: n threads, the
 * reading thread and n - 1 started ones). The reading thread still walks
 * the file, checks chunk headers, resynchronises over damage and copies
 * each whole chunk's payload into a job of a small ring; the pool's threads
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
 * staying there, took longer than one thread). The
 * ring holds n - 1 jobs: memory grows by that many raw payloads and
 * compressed copies (one 2 MiB extent each), and a decoder's own buffer.
 *
 * Hand-off: a job's state moves by atomic stores (the reading thread:
 * FREE -> QUEUED, DONE -> FREE) and compare-and-swap (whoever decodes:
 * QUEUED -> TAKEN -> DONE). Queueing a job also queues one pool task
 * for it; the task decodes whatever that ring slot holds QUEUED if it
 * wins the swap, and does nothing if the reading thread took the job
 * first, so a task never outlives its meaning. Each pool thread borrows a
 * decoding context (a zstd stream, a buffer) from the pool's stock of n
 * - 1 for the job's length. The reading thread waiting for a job spins
 * briefly, then sleeps on a futex word (done_seq): it announces its sleep
 * (pl->waiting) and re-checks the job before sleeping; the decoder
 * publishes DONE before reading the announcement (both sequentially
 * consistent) and only then bumps the word and wakes it. So a wakeup is
 * never lost and costs a system call only when the reading thread sleeps.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "iotap_base.h"
#include "trace_i.h"
#include "reader_i.h"

enum { JOB_FREE, JOB_QUEUED, JOB_TAKEN, JOB_DONE };

#define RD_SPIN			256	/* pauses before the reading thread sleeps (a few us) */

/* One chunk on its way through the decoder pool. */
struct rd_job {
	struct rd_pool *pl;
	int state;			/* JOB_*, atomic (see the top of this file) */
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
	struct iotap_pool *tp;		/* the threads */
	unsigned int done_seq;		/* futex, atomic: bumped when a job is done */
	int waiting;			/* atomic: the reading thread is asleep on done */
	pthread_mutex_t dec_lock;	/* guards the decoder stock */
	struct rd_pool_dec *dec;	/* one decoding context a thread */
	unsigned int ndec;
	struct rd_job *ring;
	unsigned int njobs;		/* ring size */
	unsigned int head;		/* oldest job; written by the reading thread only */
	unsigned int nq;		/* jobs in the ring: the reading thread's */
	int err;			/* -errno that stopped pool_fill (sticky) */
};

/* A pool thread's decoding context, lent for one job. */
struct rd_pool_dec {
	struct rd_dec d;
	int init;			/* chunk_dec_init()'s result: 0, or the job fails with it */
	int busy;			/* dec_lock */
};

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

static struct rd_pool_dec *dec_borrow(struct rd_pool *pl)
{
	struct rd_pool_dec *pd = NULL;
	unsigned int i;

	pthread_mutex_lock(&pl->dec_lock);
	/* as many contexts as threads, each job on a thread: one is free */
	for (i = 0; i < pl->ndec && !pd; i++)
		if (!pl->dec[i].busy)
			pd = &pl->dec[i];
	pd->busy = 1;
	pthread_mutex_unlock(&pl->dec_lock);
	return pd;
}

static void dec_return(struct rd_pool *pl, struct rd_pool_dec *pd)
{
	pthread_mutex_lock(&pl->dec_lock);
	pd->busy = 0;
	pthread_mutex_unlock(&pl->dec_lock);
}

/* A pool task: decode the job in @arg's ring slot unless the reading thread took it. */
static void pool_task(void *arg)
{
	struct rd_job *j = arg;
	struct rd_pool *pl = j->pl;
	struct rd_pool_dec *pd;
	int want = JOB_QUEUED;

	if (__atomic_load_n(&j->state, __ATOMIC_RELAXED) != JOB_QUEUED ||
	    !__atomic_compare_exchange_n(&j->state, &want, JOB_TAKEN, 0, __ATOMIC_ACQUIRE,
					 __ATOMIC_RELAXED))
		return;
	pd = dec_borrow(pl);
	pool_run(pl, &pd->d, pd->init, j, 0);
	dec_return(pl, pd);
}

void rd_pool_stop(struct iotap_trace_reader *r)
{
	struct rd_pool *pl = r->pool;
	unsigned int i;

	if (!pl)
		return;
	/* jobs still queued are not wanted: their tasks find them FREE */
	for (i = 0; i < pl->njobs; i++) {
		int want = JOB_QUEUED;

		__atomic_compare_exchange_n(&pl->ring[i].state, &want, JOB_FREE, 0,
					    __ATOMIC_SEQ_CST, __ATOMIC_RELAXED);
	}
	iotap_pool_free(pl->tp);
	for (i = 0; i < pl->ndec; i++)
		if (!pl->dec[i].init)
			chunk_dec_release(&pl->dec[i].d.cd);
	free(pl->dec);
	pthread_mutex_destroy(&pl->dec_lock);
	for (i = 0; i < pl->njobs; i++) {
		iotap_buf_free(pl->ring[i].payload, pl->ring[i].payload_cap);
		iotap_buf_free(pl->ring[i].raw, pl->ring[i].raw_cap);
	}
	free(pl->ring);
	free(pl);
	r->pool = NULL;
}

/* @n decoder threads besides the reading thread. */
int rd_pool_start(struct iotap_trace_reader *r, unsigned int n)
{
	struct rd_pool *pl = calloc(1, sizeof(*pl));
	unsigned int i;
	int ret;

	if (!pl)
		return -ENOMEM;
	/*
	 * One job a decoder: the reading thread queues the next chunk as it
	 * takes one (rd_next_chunk_pool), so each decoder decompresses the
	 * chunk after the one being decoded and delivered. (With whole
	 * batches decoded in the jobs, a deeper ring cost more CPU, in page
	 * faults, than the stalls it saved.) The pool's queue holds a task
	 * a job and as many stale ones (jobs the reading thread took).
	 */
	pl->njobs = n;
	pl->ring = calloc(pl->njobs, sizeof(*pl->ring));
	pl->dec = calloc(n, sizeof(*pl->dec));
	pthread_mutex_init(&pl->dec_lock, NULL);
	r->pool = pl;
	if (!pl->ring)
		pl->njobs = 0;
	if (!pl->ring || !pl->dec) {
		rd_pool_stop(r);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		pl->ring[i].pl = pl;
		pl->dec[i].init = chunk_dec_init(&pl->dec[i].d.cd);
	}
	pl->ndec = n;
	ret = iotap_pool_create(&pl->tp, n, 2 * n);
	if (ret) {
		rd_pool_stop(r);
		return ret;
	}
	return 0;
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
		iotap_pool_add(pl->tp, pool_task, j);
		ret = 0;
	}
	if (ret < 0)
		pl->err = ret;
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
int rd_next_chunk_pool(struct iotap_trace_reader *r, struct rd_batch **out)
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
		b = rd_batch_get(r);
		if (!b)
			return -ENOMEM;
		if (!ret)
			ret = rd_decode(merge, &r->dec, &h, b);
		if (!ret && merge && b->nrec && !b->sorted)
			rd_batch_sort(b);
		ret = rd_take(r, &h, at, ret, b, out);
		if (ret < 0)
			return ret;
		if (ret == 0)
			continue;	/* a bad chunk, counted and skipped */
		return 1;
	}
}
