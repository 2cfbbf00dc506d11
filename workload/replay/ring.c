// SPDX-License-Identifier: MIT
/*
 * ring.c - the ring protocol between the loader and the replay threads
 *
 * Each lane (replay thread) has one single-producer single-consumer ring
 * of struct rp_op by value, plus a byte ring for each op's paths, name and
 * dependency list. The loader (load.c) is the only producer of every ring;
 * each lane consumes its own. Counters only grow: tail = ops published,
 * head = ops finished, btail/bhead the byte positions, so "op i of lane L
 * is done" is head(L) > i, which is also how other lanes wait for it
 * (dependencies, deps.c). With --processes the rings, the lanes and the
 * barrier live in one MAP_SHARED mapping made before the fork, and every
 * futex here is a shared (non-private) one.
 *
 * Who waits for whom, and the pairing that keeps a wake-up from being
 * lost (every pair is a seq_cst store on one side and a seq_cst load on
 * the other, then a re-check before sleeping):
 *   - a lane waiting for ops: lane_waits++, then tail; the loader stores
 *     tail, then loads lane_waits and wakes pubq;
 *   - the loader waiting for room: room_at = the head it needs, then head;
 *     the lane stores head, then loads room_at and wakes room;
 *   - a lane waiting for another's op: waiters++, then head; the other
 *     stores head, then loads waiters and wakes seq.
 * A wait only ever points at an op already published, so waits cannot
 * cycle. rp_wake_all() wakes every sleeper for a stop.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "replay_i.h"

#define SPIN		200		/* polls before a futex wait */

/* Futexes here are shared ones (iotap_futex_*(..., 1)): lanes may be processes. */

/* --- the producer: the loader -------------------------------------------------- */

/*
 * Wake-ups are batched both ways, or a loader and a lane that keep pace
 * would switch on every op: a lane waiting for ops is woken after
 * WAKE_BATCH of them, or at the latest after FLUSH_EVERY pushes of the
 * loader, and always before the loader itself may block (otherwise a lane
 * could sleep on an op that is published while the loader waits for that
 * lane's neighbour); the loader waiting for room sleeps until a quarter of
 * the ring is free again.
 */
#define WAKE_BATCH	64
#define FLUSH_EVERY	256

int rp_ring_prod_init(struct rp_ring_prod *l, struct iotap_replay *r)
{
	memset(l, 0, sizeof(*l));
	l->r = r;
	l->sh = r->sh;
	l->pending = calloc(r->nlanes, sizeof(*l->pending));
	l->dirty = calloc(r->nlanes, sizeof(*l->dirty));
	l->isdirty = calloc(r->nlanes, sizeof(*l->isdirty));
	if (!l->pending || !l->dirty || !l->isdirty) {
		rp_ring_prod_release(l);
		return -ENOMEM;
	}
	return 0;
}

void rp_ring_prod_release(struct rp_ring_prod *l)
{
	free(l->pending);
	free(l->dirty);
	free(l->isdirty);
	l->pending = NULL;
	l->dirty = NULL;
	l->isdirty = NULL;
}

static void wake_lane(struct rp_ring_prod *l, uint32_t lane)
{
	struct rp_lane *ln = &l->sh->lanes[lane];

	atomic_fetch_add(&ln->pubq, 1);
	iotap_futex_wake(&ln->pubq, INT_MAX, 1);
	l->pending[lane] = 0;
}

void rp_ring_flush(struct rp_ring_prod *l)
{
	uint32_t i;

	for (i = 0; i < l->ndirty; i++) {
		if (l->pending[l->dirty[i]])
			wake_lane(l, l->dirty[i]);
		l->isdirty[l->dirty[i]] = 0;
	}
	l->ndirty = 0;
	l->since_flush = 0;
}

/*
 * Wait until @lane has room for one op and @nbytes contiguous bytes; return
 * the byte position to write at (after padding to a wrap), or -EINTR.
 */
static int64_t ring_room(struct rp_ring_prod *l, struct rp_lane *ln, size_t nbytes)
{
	for (;;) {
		uint64_t tail = atomic_load_explicit(&ln->tail, memory_order_relaxed);
		uint64_t head = atomic_load_explicit(&ln->head, memory_order_acquire);
		uint64_t bhead = atomic_load_explicit(&ln->bhead, memory_order_acquire);
		uint64_t pos = ln->btail;
		unsigned int seq;

		/* bytes must not straddle the end of the byte ring */
		if ((pos & (ln->bcap - 1)) + nbytes > ln->bcap)
			pos = (pos + ln->bcap) & ~(ln->bcap - 1);
		if (tail - head < ln->cap && pos + nbytes - bhead <= ln->bcap)
			return (int64_t)pos;
		if (atomic_load(&l->sh->stop))
			return -EINTR;
		rp_ring_flush(l);
		if (!l->r->preloaded) {
			/* the rings are full: the replay may start */
			pthread_mutex_lock(&l->r->pre_lock);
			l->r->preloaded = 1;
			pthread_cond_broadcast(&l->r->pre_cond);
			pthread_mutex_unlock(&l->r->pre_lock);
		}
		/* pairs with rp_ring_finish(): head store, then room_at load (both seq_cst) */
		seq = atomic_load(&ln->room);
		atomic_store(&ln->room_at, head + (ln->cap / 4 < tail - head ? ln->cap / 4 : 1));
		head = atomic_load(&ln->head);
		bhead = atomic_load(&ln->bhead);
		if (!(tail - head < ln->cap && pos + nbytes - bhead <= ln->bcap) &&
		    !atomic_load(&l->sh->stop))
			iotap_futex_wait(&ln->room, seq, 1);
		atomic_store(&ln->room_at, 0);
	}
}

int rp_ring_push(struct rp_ring_prod *l, uint32_t lane, struct rp_op *op, const char *const str[3],
		 const size_t str_len[3], const struct rp_dep *deps, uint32_t ndeps)
{
	struct rp_lane *ln = &l->sh->lanes[lane];
	size_t need = 0, dep_bytes = (size_t)ndeps * sizeof(struct rp_dep);
	int64_t at;
	uint64_t pos;
	int i;

	for (i = 0; i < 3; i++)
		if (str[i])
			need += str_len[i] + 1;
	need = (need + 7) & ~(size_t)7;
	need += dep_bytes;
	if (need + 64 > ln->bcap)
		return -ENAMETOOLONG;
	at = ring_room(l, ln, need);
	if (at < 0)
		return (int)at;
	pos = (uint64_t)at;
	op->path = op->path2 = op->name = RP_NONE;
	for (i = 0; i < 3; i++) {
		uint32_t off = (uint32_t)(pos & (ln->bcap - 1));

		if (!str[i])
			continue;
		memcpy(ln->bytes + off, str[i], str_len[i]);
		ln->bytes[off + str_len[i]] = '\0';
		if (i == 0)
			op->path = off;
		else if (i == 1)
			op->path2 = off;
		else
			op->name = off;
		pos += str_len[i] + 1;
	}
	pos = (pos + 7) & ~(uint64_t)7;
	op->ndeps = ndeps;
	op->deps = RP_NONE;
	if (ndeps) {
		op->deps = (uint32_t)(pos & (ln->bcap - 1));
		memcpy(ln->bytes + op->deps, deps, dep_bytes);
		pos += dep_bytes;
	}
	/* every op's bytes start 8-aligned, as need above assumes */
	pos = (pos + 7) & ~(uint64_t)7;
	op->bend = pos;
	ln->btail = pos;
	{
		uint64_t tail = atomic_load_explicit(&ln->tail, memory_order_relaxed);

		ln->ring[tail & (ln->cap - 1)] = *op;
		/* publish: pairs with the lane's acquire load of tail */
		atomic_store_explicit(&ln->tail, tail + 1, memory_order_seq_cst);
		/* pairs with rp_ring_next(): lane_waits store, then tail load */
		if (atomic_load(&ln->lane_waits)) {
			l->pending[lane]++;
			if (!l->isdirty[lane]) {
				l->isdirty[lane] = 1;
				l->dirty[l->ndirty++] = lane;
			}
			if (l->pending[lane] >= WAKE_BATCH)
				wake_lane(l, lane);
		}
		if (++l->since_flush >= FLUSH_EVERY)
			rp_ring_flush(l);
	}
	return 0;
}

/* --- the consumers: the lanes --------------------------------------------------- */

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

/* Wait until lane @m finished op @idx. Return: 1 if it had to wait. */
int rp_ring_wait_done(struct rp_shared *sh, uint32_t m, uint64_t idx)
{
	struct rp_lane *ln = &sh->lanes[m];
	int i;

	if (atomic_load_explicit(&ln->head, memory_order_acquire) > idx)
		return 0;
	for (i = 0; i < SPIN; i++) {
		cpu_relax();
		if (atomic_load_explicit(&ln->head, memory_order_acquire) > idx)
			return 1;
	}
	while (atomic_load(&ln->head) <= idx && !atomic_load(&sh->stop)) {
		unsigned int seq;

		/* pairs with rp_ring_finish(): head store, then waiters load (both seq_cst) */
		atomic_fetch_add(&ln->waiters, 1);
		seq = atomic_load(&ln->seq);
		if (atomic_load(&ln->head) <= idx && !atomic_load(&sh->stop))
			iotap_futex_wait(&ln->seq, seq, 1);
		atomic_fetch_sub(&ln->waiters, 1);
	}
	return 1;
}

/* The next op of this lane once the loader published it; NULL on stop. */
struct rp_op *rp_ring_next(struct rp_shared *sh, struct rp_lane *ln, uint64_t idx)
{
	int i;

	for (i = 0; i < SPIN; i++) {
		if (atomic_load_explicit(&ln->tail, memory_order_acquire) > idx)
			return &ln->ring[idx & (ln->cap - 1)];
		cpu_relax();
	}
	while (atomic_load(&ln->tail) <= idx) {
		unsigned int q;

		if (atomic_load(&sh->stop))
			return NULL;
		/* pairs with rp_ring_push(): tail store, then lane_waits load */
		atomic_fetch_add(&ln->lane_waits, 1);
		q = atomic_load(&ln->pubq);
		if (atomic_load(&ln->tail) <= idx && !atomic_load(&sh->stop))
			iotap_futex_wait(&ln->pubq, q, 1);
		atomic_fetch_sub(&ln->lane_waits, 1);
	}
	return &ln->ring[idx & (ln->cap - 1)];
}

void rp_ring_finish(struct rp_lane *ln, const struct rp_op *op, uint64_t idx)
{
	uint64_t at;

	atomic_store(&ln->bhead, op->bend);
	atomic_store(&ln->head, idx + 1);
	/* both loads pair with the waiter's store then re-check of head (seq_cst) */
	if (atomic_load(&ln->waiters)) {
		atomic_fetch_add(&ln->seq, 1);
		iotap_futex_wake(&ln->seq, INT_MAX, 1);
	}
	at = atomic_load(&ln->room_at);
	if (at && idx + 1 >= at) {
		atomic_store(&ln->room_at, 0);
		atomic_fetch_add(&ln->room, 1);
		iotap_futex_wake(&ln->room, INT_MAX, 1);
	}
}

void rp_wake_all(struct rp_shared *sh)
{
	uint32_t i;

	atomic_store(&sh->stop, 1);
	atomic_store(&sh->go, 2);
	iotap_futex_wake((atomic_uint *)&sh->go, INT_MAX, 1);
	for (i = 0; i < sh->nlanes; i++) {
		atomic_fetch_add(&sh->lanes[i].seq, 1);
		iotap_futex_wake(&sh->lanes[i].seq, INT_MAX, 1);
		atomic_fetch_add(&sh->lanes[i].pubq, 1);
		iotap_futex_wake(&sh->lanes[i].pubq, INT_MAX, 1);
		atomic_fetch_add(&sh->lanes[i].room, 1);
		iotap_futex_wake(&sh->lanes[i].room, INT_MAX, 1);
	}
	atomic_fetch_add(&sh->bar_gen, 1);
	iotap_futex_wake(&sh->bar_gen, INT_MAX, 1);
}
