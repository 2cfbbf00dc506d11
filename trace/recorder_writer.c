// SPDX-License-Identifier: MIT
/*
 * recorder_writer.c - the recorder's writer thread: it collects the
 * recording threads' buffers, encodes them into the writer (trace/writer.c),
 * writes LOST and SAMPLE records, and promises the watermark
 *
 * What the threads share and the order they keep is recorder.c's head
 * comment; file switches and saves are recorder_switch.c's.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <urcu/arch.h>
#include <urcu/system.h>
#include <urcu/uatomic.h>
#include <urcu/wfcqueue.h>

#include "iotap_base.h"
#include "trace_i.h"
#include "recorder_i.h"

/* Make the writer's error and losses visible to other threads. */
void rcd_publish(struct iotap_trace_recorder *r)
{
	uint64_t v;

	if (!r->w)
		return;
	if (!r->err && wr_error(r->w))
		CMM_STORE_SHARED(r->err, wr_error(r->w));
	v = r->lost_write_base + wr_dropped(r->w);
	if (r->lost_write != v)
		CMM_STORE_SHARED(r->lost_write, v);
	v = iotap_trace_writer_bytes(r->w);
	if (r->file_bytes != v)
		CMM_STORE_SHARED(r->file_bytes, v);
}

/*
 * Append a record the writer thread makes itself (SAMPLE, LOST, NOTE).
 * After a write error the writer keeps trying (see writer.c), so these go
 * on too: the first chunk written again carries the LOST counts.
 */
void rcd_append_own(struct iotap_trace_recorder *r, const struct iotap_trace_rec *rec)
{
	if (r->w)
		wr_append(r->w, rec, 1);
}

static void rcd_encode_buf(struct iotap_trace_recorder *r, const struct rcd_buf *b)
{
	const uint8_t *p = b->data, *end = b->data + b->len;
	struct iotap_trace_rec rec;

	while (p < end) {
		const struct rec_slim *e = (const struct rec_slim *)p;
		const char *name = e->data == REC_NO_DATA ? NULL : (const char *)(e + 1);

		p += e->pad;
		if (!r->w || e->time_ns < r->floor) {
			/* stopped, or begun before a start: not this file's */
			r->discarded++;
			continue;
		}
		r->written++;
		/* after a write error the writer drops and counts it (wr_dropped()) */
		if (caa_likely(e->type == IOTAP_REC_OP)) {
			wr_append_op(r->w, e, name);
			continue;
		}
		memset(&rec, 0, sizeof(rec));
		rec_from_slim(&rec, e, name);
		if (e->type == IOTAP_REC_SAMPLE)
			memcpy(&rec.sample, (const uint8_t *)(e + 1) + rcd_align8(e->name_len),
			       sizeof(rec.sample));
		wr_append(r->w, &rec, 0);
	}
}

void rcd_sample(struct iotap_trace_recorder *r)
{
	struct iotap_trace_rec rec;

	if (!r->w)
		return;

	memset(&rec, 0, sizeof(rec));
	rec.type = IOTAP_REC_SAMPLE;
	smp_read(&r->smp, &rec.sample);
	rec.time_ns = iotap_trace_now_ns();
	rec.pid = (uint32_t)getpid();
	rcd_append_own(r, &rec);
}

/* Encode the full buffers queued so far, in queue order. */
static void rcd_drain(struct iotap_trace_recorder *r)
{
	struct cds_wfcq_node *node;

	/* The writer thread is the only dequeuer: no lock needed. */
	while ((node = __cds_wfcq_dequeue_blocking(&r->qhead, &r->qtail))) {
		struct rcd_buf *b = caa_container_of(node, struct rcd_buf, node);

		rcd_encode_buf(r, b);
		rcd_pool_put(r, b);
	}
	rcd_publish(r);
}

static int buf_cmp(const void *a, const void *b)
{
	const struct rcd_buf *x = *(struct rcd_buf *const *)a;
	const struct rcd_buf *y = *(struct rcd_buf *const *)b;

	if (x->slot_id != y->slot_id)
		return x->slot_id < y->slot_id ? -1 : 1;
	if (x->gen != y->gen)
		return x->gen < y->gen ? -1 : 1;
	return 0;
}

/*
 * Collect every buffer, encode it, write LOST records, and promise the
 * watermark; with @write_chunk, write the open chunk too.
 */
void rcd_batch(struct iotap_trace_recorder *r, int write_chunk)
{
	struct rcd_slot *s, **pp;
	struct cds_wfcq_node *node;
	struct iotap_trace_rec lost;
	unsigned int n = 0, nlost = 0, i;
	uint64_t lw, v, lost_other = 0;

	lw = iotap_trace_now_ns();
	/* (B), pairs with (A) in iotap_trace_op_begin(). */
	cmm_smp_mb();
	pthread_mutex_lock(&r->slots_lock);
	for (s = r->slots; s; s = s->next) {
		v = CMM_LOAD_SHARED(s->inflight);
		if (v && v < lw)
			lw = v;
	}
	/*
	 * (F), pairs with (E) in iotap_trace_op_hold(): an op whose thread's
	 * in-flight state was gone above is held here.
	 */
	cmm_smp_rmb();
	for (i = 0; i < RCD_HOLDS; i++) {
		v = CMM_LOAD_SHARED(r->holds[i]);
		if (v && v < lw)
			lw = v;
	}
	/*
	 * (D), pairs with (C) in iotap_trace_record(): the in-flight reads
	 * come before the collection, so a record whose op was no longer in
	 * flight above is in a buffer collected below.
	 */
	cmm_smp_mb();
	for (pp = &r->slots; (s = *pp);) {
		struct rcd_buf *b;
		int dead;

		/* (a full barrier) pairs with the owner's exchange in iotap_trace_record() */
		b = uatomic_xchg(&s->cur, NULL);
		if (b == RCD_BUSY) {
			/*
			 * The owner is appending and stores its buffer back over
			 * our NULL: nothing it holds starts before cur_min, nor
			 * the record in hand before its in-flight start (read
			 * above). A buffer it queued before moving cur_min on is
			 * in the queue for the drain below.
			 */
			v = CMM_LOAD_SHARED(s->cur_min);
			if (v < lw)
				lw = v;
			v = CMM_LOAD_SHARED(s->inflight);
			if (v && v < lw)
				lw = v;
		} else if (b && b->nrec) {
			r->batch[n++] = b;
		} else if (b) {
			rcd_pool_put(r, b);
		}
		v = CMM_LOAD_SHARED(s->lost);
		if (v != s->lost_reported) {
			uint64_t nl = v;

			v = nl - s->lost_reported;
			s->lost_reported = nl;
			if (nlost < RCD_LOST_SLOTS) {
				r->lostv[nlost].tid = s->tid;
				r->lostv[nlost++].n = v;
			} else {
				lost_other += v;
			}
		}
		dead = CMM_LOAD_SHARED(s->dead);
		if (dead) {
			/* Its last buffer was queued before dead was set. */
			*pp = s->next;
			r->dead_recorded += s->recorded;
			rcd_slot_free(s);
		} else {
			pp = &s->next;
		}
	}
	pthread_mutex_unlock(&r->slots_lock);
	/* dead and cur_min before the drain: pairs with the owners' wmb */
	cmm_smp_rmb();

	v = uatomic_read(&r->lost_noslot);
	lost_other += v - r->noslot_reported;
	r->noslot_reported = v;

	/* No lock held: writing LOST records may write a chunk. */
	for (i = 0; i <= nlost; i++) {
		iotap_trace_lost_init(&lost, i < nlost ? r->lostv[i].n : lost_other,
				      i < nlost ? r->lostv[i].tid : 0);
		if (!iotap_trace_lost_count(&lost))
			continue;
		lost.time_ns = iotap_trace_now_ns();
		rcd_append_own(r, &lost);
	}

	/*
	 * Drain after the swaps: whatever a thread queued before its buffer
	 * was swapped is in the queue now. Buffers are then encoded per slot
	 * in the order the slot filled them.
	 */
	while ((node = __cds_wfcq_dequeue_blocking(&r->qhead, &r->qtail))) {
		struct rcd_buf *b = caa_container_of(node, struct rcd_buf, node);

		if (n < r->nbufs_max) {
			r->batch[n++] = b;
		} else {
			/* Cannot happen (nbufs_max buffers exist); stay safe. */
			rcd_encode_buf(r, b);
			rcd_pool_put(r, b);
		}
	}
	qsort(r->batch, n, sizeof(r->batch[0]), buf_cmp);
	for (i = 0; i < n; i++) {
		rcd_encode_buf(r, r->batch[i]);
		rcd_pool_put(r, r->batch[i]);
	}

	/*
	 * Every record not collected above starts at or after lw: chunks
	 * written from now on carry it. Chunks that closed while encoding
	 * this batch kept the previous promise.
	 */
	r->last_lw = lw;
	if (r->w) {
		wr_promise(r->w, lw);
		if (write_chunk)
			iotap_trace_writer_flush(r->w, 0);
	}
	rcd_publish(r);
}

void *rcd_writer_main(void *arg)
{
	struct iotap_trace_recorder *r = arg;
	uint64_t now, next_flush, next_chunk, next_sample;
	unsigned int tick = r->flush_ms < RCD_TICK_MS ? r->flush_ms : RCD_TICK_MS;
	struct sched_param sp = { 0 };

	/*
	 * SCHED_BATCH: a wake-up of this thread never preempts a recording
	 * thread (or the application) on its CPU; it still gets its fair
	 * share. Best effort: the pool absorbs the delay.
	 */
	pthread_setschedparam(pthread_self(), SCHED_BATCH, &sp);
	rcd_file_start(r);
	now = iotap_trace_now_ns();
	next_flush = now + r->flush_ms * 1000000ull;
	next_chunk = now + r->chunk_ms * 1000000ull;
	next_sample = now + r->sample_ms * 1000000ull;

	pthread_mutex_lock(&r->wake_lock);
	while (!r->stop) {
		struct rcd_switch *sw;

		if (!r->sw)
			iotap_cond_wait_ns(&r->wake, &r->wake_lock, tick * 1000000ull);
		if (r->stop)
			break;
		sw = r->sw;
		if (sw) {
			pthread_mutex_unlock(&r->wake_lock);
			if (sw->save)
				rcd_do_save(r, sw);
			else
				rcd_do_switch(r, sw);
			pthread_mutex_lock(&r->wake_lock);
			sw->done = 1;
			r->sw = NULL;
			pthread_cond_broadcast(&r->sw_done);
			next_sample = iotap_trace_now_ns() + r->sample_ms * 1000000ull;
			continue;
		}
		if (CMM_LOAD_SHARED(r->hold))
			continue;
		pthread_mutex_unlock(&r->wake_lock);

		now = iotap_trace_now_ns();
		if (r->sampling && now >= next_sample) {
			rcd_sample(r);
			next_sample = now + r->sample_ms * 1000000ull;
		}
		if (now >= next_flush) {
			int chunk = now >= next_chunk;

			rcd_batch(r, chunk);
			next_flush = now + r->flush_ms * 1000000ull;
			if (chunk)
				next_chunk = now + r->chunk_ms * 1000000ull;
		} else {
			rcd_drain(r);
		}
		pthread_mutex_lock(&r->wake_lock);
	}
	pthread_mutex_unlock(&r->wake_lock);

	if (r->sampling)
		rcd_sample(r);
	rcd_batch(r, 1);
	return NULL;
}
