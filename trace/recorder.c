// SPDX-License-Identifier: MIT
/*
 * recorder.c - many recording threads, one writer thread
 *
 * Threads. Any number of recording threads call iotap_trace_op_begin() and
 * iotap_trace_record(); one writer thread, started by
 * iotap_trace_recorder_open() and joined by iotap_trace_recorder_close(),
 * owns the struct iotap_trace_writer (encoding, compression, the file).
 *
 * Buffers. Each recording thread has a slot (struct rcd_slot, allocated on
 * its first call, found again through a thread-local list) whose current
 * buffer it fills with fixed-layout records (struct rec_slim, then the
 * name, then a sample, 8-byte aligned). A full buffer goes to the writer
 * thread through a liburcu wait-free queue (cds_wfcq); the recording thread
 * takes an empty one from a bounded pool (opts.max_bytes in all). When the
 * pool is exhausted the record is dropped and counted in the slot; the
 * writer thread later writes a LOST record for it. A recording thread never
 * waits for the writer, the compressor or the disk, and takes no lock the
 * writer holds while it works: its buffer is handed over by atomic
 * exchange (below), the lost counter is an atomic, and the only lock it
 * shares is the pool's mutex, once per buffer for a list pop (the writer
 * holds it for a list push per buffer it gives back).
 *
 * Handing a partial buffer over. slot->cur is the owner's buffer, NULL, or
 * RCD_BUSY. iotap_trace_record() exchanges it for RCD_BUSY, appends, and
 * stores it back; the writer exchanges it for NULL and collects what it
 * gets. If it gets RCD_BUSY the owner is mid-record: the writer leaves the
 * buffer to a later batch (the owner's store puts it back over the NULL)
 * and lowers its promise to slot->cur_min, the oldest record start in the
 * owner's buffer, and to the record in hand's in-flight start (a record
 * without iotap_trace_op_begin() is in flight at its own time during the
 * call), so the watermark still holds.
 *
 * The writer thread (recorder_writer.c) wakes every 50 ms (producers
 * never signal it), drains full buffers, and every flush_ms collects every
 * slot's partial buffer too, so that a chunk can be written at least every
 * chunk_ms. It runs
 * SCHED_BATCH, so its wake-ups never preempt a recording thread. Between
 * two batches it carries out file switches (rotation, start, stop) and the
 * flight recorder's saves: recorder_switch.c.
 *
 * Order (FORMAT.md "Order and watermarks"). Before collecting, the writer
 * reads the clock, then every slot's in-flight start time, and promises
 * that every record it has not collected yet starts at or after the
 * minimum of those; the reader merges by start time in bounded memory on
 * that promise. The barrier pairs are named where they are.
 *
 * Lifetimes. A slot belongs to its recorder until the thread exits (a
 * pthread key destructor flushes its buffer and marks it dead; the writer
 * thread frees it) or the recorder closes (the slot is detached and left to
 * its thread, which frees it on exit or on its next registration). The
 * global g_lock orders those two ends. Lock order:
 * g_lock > r->slots_lock > r->pool_lock (recording threads take
 * r->slots_lock only to register).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <urcu/arch.h>
#include <urcu/system.h>
#include <urcu/uatomic.h>
#include <urcu/wfcqueue.h>

#include "iotap_base.h"
#include "trace_i.h"
#include "recorder_i.h"

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static pthread_key_t g_key;
static int g_key_err;
static uint64_t g_next_id;
static __thread struct rcd_slot *tl_slots;

void rcd_slot_free(struct rcd_slot *s)
{
	free(s);
}

/* --- buffer pool -------------------------------------------------------- */

static struct rcd_buf *pool_get(struct iotap_trace_recorder *r)
{
	struct rcd_buf *b;
	int grow = 0;

	pthread_mutex_lock(&r->pool_lock);
	b = r->free;
	if (b)
		r->free = b->next;
	else if (r->nbufs < r->nbufs_max)
		grow = ++r->nbufs;
	pthread_mutex_unlock(&r->pool_lock);
	if (b || !grow)
		return b;

	b = malloc(sizeof(*b) + r->buf_bytes);
	if (!b) {
		pthread_mutex_lock(&r->pool_lock);
		r->nbufs--;
		pthread_mutex_unlock(&r->pool_lock);
		return NULL;
	}
	return b;
}

void rcd_pool_put(struct iotap_trace_recorder *r, struct rcd_buf *b)
{
	pthread_mutex_lock(&r->pool_lock);
	b->next = r->free;
	r->free = b;
	pthread_mutex_unlock(&r->pool_lock);
}

static void queue_buf(struct iotap_trace_recorder *r, struct rcd_buf *b)
{
	cds_wfcq_node_init(&b->node);
	cds_wfcq_enqueue(&r->qhead, &r->qtail, &b->node);
}

/* --- slots -------------------------------------------------------------- */

/* Thread exit: hand each slot's last buffer to its writer, or free it. */
static void tl_destroy(void *arg)
{
	struct rcd_slot *s = arg, *next;
	struct rcd_buf *b;

	pthread_mutex_lock(&g_lock);
	for (; s; s = next) {
		next = s->tl_next;
		if (s->detached) {
			rcd_slot_free(s);
			continue;
		}
		/* the owner is this thread: cur is never RCD_BUSY here */
		b = uatomic_xchg(&s->cur, NULL);
		if (b) {
			if (b->nrec)
				queue_buf(s->r, b);
			else
				rcd_pool_put(s->r, b);
		}
		CMM_STORE_SHARED(s->inflight, 0);
		/* the buffer is queued before dead shows: pairs with the rmb in rcd_batch() */
		cmm_smp_wmb();
		CMM_STORE_SHARED(s->dead, 1);
	}
	tl_slots = NULL;
	pthread_mutex_unlock(&g_lock);
}

static void key_init(void)
{
	g_key_err = -pthread_key_create(&g_key, tl_destroy);
}

static struct rcd_slot *slot_register(struct iotap_trace_recorder *r)
{
	struct rcd_slot *s, **pp;

	for (s = tl_slots; s; s = s->tl_next)
		if (s->rec_id == r->id)
			return s;

	/* Forget slots of recorders closed since this thread last looked. */
	pthread_mutex_lock(&g_lock);
	for (pp = &tl_slots; *pp;) {
		s = *pp;
		if (s->detached) {
			*pp = s->tl_next;
			rcd_slot_free(s);
		} else {
			pp = &s->tl_next;
		}
	}
	pthread_mutex_unlock(&g_lock);
	/* The destructor must never see a freed head, even if we fail below. */
	pthread_setspecific(g_key, tl_slots);

	if (posix_memalign((void **)&s, 64, sizeof(*s)))
		return NULL;
	memset(s, 0, sizeof(*s));
	s->cur_min = UINT64_MAX;
	s->rec_id = r->id;
	s->r = r;
	s->tid = (uint32_t)syscall(SYS_gettid);

	pthread_mutex_lock(&r->slots_lock);
	s->id = ++r->next_slot_id;
	s->next = r->slots;
	r->slots = s;
	pthread_mutex_unlock(&r->slots_lock);

	pthread_mutex_lock(&g_lock);
	s->tl_next = tl_slots;
	tl_slots = s;
	pthread_mutex_unlock(&g_lock);
	pthread_setspecific(g_key, tl_slots);
	return s;
}

static inline struct rcd_slot *slot_get(struct iotap_trace_recorder *r)
{
	struct rcd_slot *s = tl_slots;

	if (caa_likely(s && s->rec_id == r->id))
		return s;
	return slot_register(r);
}

/* --- recording (any thread) --------------------------------------------- */

/**
 * iotap_trace_op_begin - note that the calling thread starts an operation
 * @r: recorder
 *
 * Stores a provisional start in the thread's slot -- the start this
 * function last returned on the thread, a clock read of the past, so never
 * later than the record's time_ns -- then reads the clock once for the
 * start it returns. The in-flight state lasts until the thread's next
 * iotap_trace_record(). Non-op records take their time here too, for an
 * exact place in the merged order. Wait-free after the thread's first
 * call (which allocates its slot). Context: any thread, one operation in
 * flight per thread.
 *
 * A provisional start older than the true one only holds a batch's
 * promise back (promises never shrink, wr_promise()); on a busy thread it
 * is one request old.
 *
 * Return: the start time (CLOCK_MONOTONIC ns) to put in rec->time_ns.
 */
uint64_t iotap_trace_op_begin(struct iotap_trace_recorder *r)
{
	struct rcd_slot *s = slot_get(r);
	uint64_t t;

	if (caa_unlikely(!s))
		return iotap_clock_ns();
	CMM_STORE_SHARED(s->inflight, s->last_begin ? s->last_begin : 1);
	/*
	 * (A), pairs with (B) in rcd_batch(), between its clock read and its
	 * in-flight reads: either the writer sees this store, or its clock
	 * read came before the one below (FORMAT.md "Order and watermarks").
	 */
	cmm_smp_mb();
	t = iotap_clock_ns();
	s->last_begin = t;
	return t;
}

/**
 * iotap_trace_op_cancel - the operation begun will not be recorded
 * @r: recorder
 *
 * Ends the calling thread's in-flight state without a record (a capture
 * filter dropped the op), so the watermark does not wait for it.
 * Context: the thread that called iotap_trace_op_begin().
 */
void iotap_trace_op_cancel(struct iotap_trace_recorder *r)
{
	struct rcd_slot *s = slot_get(r);

	if (caa_likely(s))
		CMM_STORE_SHARED(s->inflight, 0);
}

/**
 * iotap_trace_op_hold - hand the calling thread's op in flight to another thread
 * @r:     recorder
 * @start: what iotap_trace_op_begin() returned for the op
 *
 * The op's start goes into a hold, then the thread's in-flight state ends
 * (as iotap_trace_op_cancel()); until iotap_trace_hold_release() the
 * writer promises no watermark past @start, so the thread that finishes
 * the op may record it with time_ns = @start without a begin of its own.
 * Wait-free: one compare-and-swap per hold tried.
 * Return: the hold (>= 0), or -1 when all RCD_HOLDS are taken (nothing
 * changed: the caller finishes the op itself).
 */
int iotap_trace_op_hold(struct iotap_trace_recorder *r, uint64_t start)
{
	unsigned int i, k = uatomic_add_return(&r->hold_next, 1);

	for (i = 0; i < RCD_HOLDS; i++) {
		unsigned int h = (k + i) % RCD_HOLDS;

		if (!uatomic_cmpxchg(&r->holds[h], 0, start ? start : 1)) {
			/* (E), pairs with (F) in rcd_batch(): held before the op ends here */
			cmm_smp_mb();
			iotap_trace_op_cancel(r);
			return (int)h;
		}
	}
	return -1;
}

/**
 * iotap_trace_hold_release - the op handed over is recorded (or dropped)
 * @r: recorder
 * @h: what iotap_trace_op_hold() returned
 *
 * Context: after the iotap_trace_record() of the op, in any thread.
 */
void iotap_trace_hold_release(struct iotap_trace_recorder *r, int h)
{
	if (h < 0 || h >= RCD_HOLDS)
		return;
	/* the record is in its buffer before the hold goes: pairs with (D) */
	cmm_smp_mb();
	uatomic_set(&r->holds[h], 0);
}

/* A record dropped by the owner of @s: its slot's count and the recorder's. */
static void slot_drop(struct iotap_trace_recorder *r, struct rcd_slot *s)
{
	CMM_STORE_SHARED(s->lost, s->lost + 1);
	uatomic_inc(&r->lost_total);
}

/**
 * iotap_trace_record - queue one record from the calling thread
 * @r:   recorder
 * @rec: copied, including rec->name (rec->name_len bytes)
 *
 * Ends the thread's in-flight state (whatever the record's type). Never
 * blocks on the writer thread, the compressor or the disk: the buffer is
 * taken and given back by atomic exchange, so the writer collecting it
 * never holds up the append; when the thread's buffer is full and the pool
 * has no free one, the record is dropped and counted (a malformed record
 * too). The one lock it may take is the pool's, once per buffer. Context:
 * any thread; the first call from a thread allocates its slot.
 */
void iotap_trace_record(struct iotap_trace_recorder *r, const struct iotap_trace_rec *rec)
{
	struct rcd_slot *s = slot_get(r);
	struct rec_slim *e;
	struct rcd_buf *b;
	size_t need;

	if (caa_unlikely(!s)) {
		uatomic_inc(&r->lost_noslot);
		uatomic_inc(&r->lost_total);
		return;
	}
	if (caa_unlikely(rec_check(rec))) {
		slot_drop(r, s);
		goto out;
	}
	need = sizeof(*e) + rcd_align8(rec->name_len);
	if (rec->type == IOTAP_REC_SAMPLE)
		need += sizeof(rec->sample);

	/*
	 * A record without iotap_trace_op_begin() is in flight from here on,
	 * at its own time. Then take the buffer (a full barrier): a writer
	 * collecting now finds RCD_BUSY, leaves the buffer to us and reads
	 * cur_min and inflight instead.
	 */
	if (!CMM_LOAD_SHARED(s->inflight))
		CMM_STORE_SHARED(s->inflight, rec->time_ns ? rec->time_ns : 1);
	b = uatomic_xchg(&s->cur, RCD_BUSY);
	if (caa_unlikely(!b || b->len + need > r->buf_bytes)) {
		/* queued before cur_min moves on: pairs with the rmb in rcd_batch() */
		if (b)
			queue_buf(r, b);
		b = pool_get(r);
		if (!b) {
			slot_drop(r, s);
			CMM_STORE_SHARED(s->cur, NULL);
			goto out;
		}
		b->slot_id = s->id;
		b->gen = ++s->gen;
		b->len = 0;
		b->nrec = 0;
		b->min_time = UINT64_MAX;
	}
	if (rec->time_ns < b->min_time) {
		b->min_time = rec->time_ns;
		cmm_smp_wmb();
		CMM_STORE_SHARED(s->cur_min, b->min_time);
	}
	e = (struct rec_slim *)(b->data + b->len);
	rec_slim_from(e, rec);
	e->pad = (uint32_t)need;
	if (rec->name)
		memcpy(e + 1, rec->name, rec->name_len);
	if (rec->type == IOTAP_REC_SAMPLE)
		memcpy((uint8_t *)(e + 1) + rcd_align8(rec->name_len), &rec->sample,
		       sizeof(rec->sample));
	b->len += (uint32_t)need;
	b->nrec++;
	CMM_STORE_SHARED(s->recorded, s->recorded + 1);
	/* the record is written before the buffer is handed back */
	cmm_smp_wmb();
	CMM_STORE_SHARED(s->cur, b);
out:
	/*
	 * (C), pairs with (D) in rcd_batch(): the record (and the buffer's
	 * return) is published before the in-flight mark goes. A writer that
	 * reads 0 (or a later op's start) then exchanges cur after our store
	 * and collects this record in the same batch (or, finding a later
	 * record's RCD_BUSY, promises no more than cur_min, which covers it).
	 */
	cmm_smp_wmb();
	CMM_STORE_SHARED(s->inflight, 0);
}

/* --- open / close ------------------------------------------------------- */

/**
 * iotap_trace_recorder_open - create the trace file and start the writer thread
 * @out:  the new recorder
 * @path: trace file (IOTAP_TRACE_FORCE in @opts->flags to overwrite)
 * @hdr:  header (copied)
 * @opts: NULL for defaults
 *
 * The file is created here, so -EEXIST and friends reach the caller. The
 * writer thread runs with every signal blocked.
 * Context: call before any recording thread uses the recorder.
 * Return: 0, -EINVAL, -ENOMEM, -EAGAIN, or -errno from creating the file.
 */
int iotap_trace_recorder_open(struct iotap_trace_recorder **out, const char *path,
			      const struct iotap_trace_header *hdr,
			      const struct iotap_trace_recorder_opts *opts)
{
	struct iotap_trace_recorder_opts def;
	struct iotap_trace_recorder *r;
	sigset_t all, old;
	size_t max_bytes;
	int ret;

	if (!out)
		return -EINVAL;
	if (!opts) {
		memset(&def, 0, sizeof(def));
		opts = &def;
	}
	pthread_once(&g_once, key_init);
	if (g_key_err)
		return g_key_err;

	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->id = uatomic_add_return(&g_next_id, 1);
	r->buf_bytes = opts->buf_bytes ? opts->buf_bytes : 64u << 10;
	if (r->buf_bytes < RCD_BUF_MIN)
		r->buf_bytes = RCD_BUF_MIN;
	if (r->buf_bytes > RCD_BUF_MAX)
		r->buf_bytes = RCD_BUF_MAX;
	r->buf_bytes = rcd_align8(r->buf_bytes);
	max_bytes = opts->max_bytes ? opts->max_bytes : 64u << 20;
	r->nbufs_max = max_bytes / r->buf_bytes > 1 << 20 ? 1 << 20 :
		       (unsigned int)(max_bytes / r->buf_bytes);
	if (r->nbufs_max < 2)
		r->nbufs_max = 2;
	r->flush_ms = opts->flush_ms ? opts->flush_ms : 100;
	r->chunk_ms = opts->chunk_ms ? opts->chunk_ms : 1000;
	r->sample_ms = opts->sample_ms ? opts->sample_ms : 100;

	r->batch = calloc(r->nbufs_max, sizeof(r->batch[0]));
	if (!r->batch) {
		ret = -ENOMEM;
		goto err_free_recorder;
	}
	r->zstd_level = opts->zstd_level ? opts->zstd_level : RCD_ZSTD_LEVEL;
	r->perm = opts->perm;
	r->rebind = opts->rebind;
	r->rebind_arg = opts->rebind_arg;
	if (opts->ring_bytes) {
		ret = path ? -EINVAL : wr_open_ring(&r->w, r->zstd_level, opts->ring_bytes);
		if (ret)
			goto err_free_batch;
		r->ring = 1;
		wr_promise(r->w, 0);
	} else if (path) {
		ret = wr_open_level(&r->w, path, hdr, opts->flags, r->zstd_level, &opts->perm);
		if (ret)
			goto err_free_batch;
		r->files = 1;
		/*
		 * Records arrive out of start order: chunks closed before the
		 * first batch must not get the writer's default (largest
		 * start) watermark.
		 */
		wr_promise(r->w, 0);
	}
	if (opts->sample_path) {
		r->sampling = 1;
		if (smp_open(&r->smp, opts->sample_path, r->note, sizeof(r->note)) == 0)
			r->note[0] = '\0';
	}

	__cds_wfcq_init(&r->qhead, &r->qtail);
	pthread_mutex_init(&r->pool_lock, NULL);
	pthread_mutex_init(&r->slots_lock, NULL);
	pthread_mutex_init(&r->wake_lock, NULL);
	pthread_mutex_init(&r->ctl_lock, NULL);
	pthread_cond_init(&r->sw_done, NULL);
	pthread_cond_init(&r->wake, NULL);

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = -pthread_create(&r->thread, NULL, rcd_writer_main, r);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret)
		goto err_destroy_sync;
	pthread_setname_np(r->thread, "iotap-writer");
	*out = r;
	return 0;

err_destroy_sync:
	pthread_cond_destroy(&r->wake);
	pthread_cond_destroy(&r->sw_done);
	pthread_mutex_destroy(&r->ctl_lock);
	pthread_mutex_destroy(&r->wake_lock);
	pthread_mutex_destroy(&r->slots_lock);
	pthread_mutex_destroy(&r->pool_lock);
	if (r->sampling)
		smp_close(&r->smp);
	if (r->w) {
		wr_close_at(r->w, 0);
		if (path && !(opts->flags & IOTAP_TRACE_FORCE))
			unlink(path);
	}
err_free_batch:
	free(r->batch);
err_free_recorder:
	free(r);
	return ret;
}

/**
 * iotap_trace_recorder_lost - records dropped so far
 * @r: recorder
 *
 * Counts records dropped for want of a buffer, malformed records, and
 * records the writer thread could not write after a write error.
 * Context: any thread; two atomic reads, never a lock (the capture path
 * asks on every op until it has warned).
 */
uint64_t iotap_trace_recorder_lost(struct iotap_trace_recorder *r)
{
	/* no lock: FUSE workers call this per op (fs/capture.c) */
	return uatomic_read(&r->lost_total) + CMM_LOAD_SHARED(r->lost_write);
}

/**
 * iotap_trace_recorder_count - records handed to the writer thread so far
 * @r: recorder
 *
 * Context: any thread.
 */
uint64_t iotap_trace_recorder_count(struct iotap_trace_recorder *r)
{
	struct rcd_slot *s;
	uint64_t n;

	pthread_mutex_lock(&r->slots_lock);
	n = r->dead_recorded;
	for (s = r->slots; s; s = s->next)
		n += CMM_LOAD_SHARED(s->recorded);
	pthread_mutex_unlock(&r->slots_lock);
	return n;
}

/**
 * iotap_trace_recorder_error - the writer thread's first write error
 * @r: recorder
 *
 * Context: any thread.
 * Return: 0 or -errno.
 */
int iotap_trace_recorder_error(struct iotap_trace_recorder *r)
{
	return CMM_LOAD_SHARED(r->err);
}

/**
 * rcd_test_hold - test hook: make the writer thread idle (or resume)
 * @r:    recorder
 * @hold: non-zero to idle
 *
 * While held the writer thread neither drains nor collects, so a small
 * pool runs dry and drops can be tested. Closing still works.
 */
void rcd_test_hold(struct iotap_trace_recorder *r, int hold)
{
	CMM_STORE_SHARED(r->hold, hold);
}

/**
 * iotap_trace_recorder_close - collect every thread's buffer, write END,
 * close the file, stop the writer thread and free @r
 * @r: recorder
 *
 * Context: no thread may record concurrently or afterwards; threads that
 * recorded must be idle or gone. Slots of threads still alive are left to
 * them and freed when they exit.
 * Return: 0 or the first write error.
 */
int iotap_trace_recorder_close(struct iotap_trace_recorder *r)
{
	struct cds_wfcq_node *node;
	struct rcd_slot *s, *next, **pp;
	struct rcd_buf *b;
	uint64_t end;
	int ret;

	if (!r)
		return -EINVAL;
	pthread_mutex_lock(&r->wake_lock);
	r->stop = 1;
	pthread_cond_signal(&r->wake);
	pthread_mutex_unlock(&r->wake_lock);
	pthread_join(r->thread, NULL);

	ret = 0;
	if (r->w) {
		end = iotap_trace_now_ns();
		if (wr_max_time(r->w) > end)
			end = wr_max_time(r->w);
		ret = wr_close_at(r->w, end);
		r->w = NULL;
	}
	if (!ret)
		ret = r->err;

	/* Give the slots away: dead ones are freed, live ones detached. */
	pthread_mutex_lock(&g_lock);
	pthread_mutex_lock(&r->slots_lock);
	for (s = r->slots; s; s = next) {
		next = s->next;
		/* no thread records any more (the contract): cur is not RCD_BUSY */
		b = uatomic_xchg(&s->cur, NULL);
		if (b && b != RCD_BUSY)
			rcd_pool_put(r, b);
		if (s->dead) {
			rcd_slot_free(s);
		} else {
			s->detached = 1;
			s->r = NULL;
		}
	}
	r->slots = NULL;
	pthread_mutex_unlock(&r->slots_lock);
	/* The caller's own slot need not wait for its thread to exit. */
	for (pp = &tl_slots; *pp;) {
		s = *pp;
		if (s->detached) {
			*pp = s->tl_next;
			rcd_slot_free(s);
		} else {
			pp = &s->tl_next;
		}
	}
	pthread_setspecific(g_key, tl_slots);
	pthread_mutex_unlock(&g_lock);

	/* Buffers queued after the final batch (a thread exiting late) are lost. */
	while ((node = __cds_wfcq_dequeue_blocking(&r->qhead, &r->qtail)))
		rcd_pool_put(r, caa_container_of(node, struct rcd_buf, node));
	while ((b = r->free)) {
		r->free = b->next;
		free(b);
	}
	if (r->sampling)
		smp_close(&r->smp);
	pthread_cond_destroy(&r->wake);
	pthread_cond_destroy(&r->sw_done);
	pthread_mutex_destroy(&r->ctl_lock);
	pthread_mutex_destroy(&r->wake_lock);
	pthread_mutex_destroy(&r->slots_lock);
	pthread_mutex_destroy(&r->pool_lock);
	free(r->batch);
	free(r);
	return ret;
}

/**
 * iotap_trace_recorder_stats - live counters, for status and top
 * @r:  recorder
 * @st: filled
 *
 * Context: any thread; a walk of the slots under slots_lock (registration
 * only, never taken by a recording thread after its first record).
 */
void iotap_trace_recorder_stats(struct iotap_trace_recorder *r,
				struct iotap_trace_recorder_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->recorded = iotap_trace_recorder_count(r);
	st->lost = iotap_trace_recorder_lost(r);
	st->written = CMM_LOAD_SHARED(r->written);
	st->discarded = CMM_LOAD_SHARED(r->discarded);
	st->file_bytes = CMM_LOAD_SHARED(r->file_bytes);
	st->files = CMM_LOAD_SHARED(r->files);
	st->ring = r->ring;
	st->error = CMM_LOAD_SHARED(r->err);
}

