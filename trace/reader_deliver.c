// SPDX-License-Identifier: MIT
/*
 * reader_deliver.c - the records of the decoded batches, one at a time
 *
 * Merged order. Each batch's records are sorted by (start, position) —
 * often they already are; a capture's chunk is dozens of interleaved
 * sorted runs (one per recording thread buffer), which rd_batch_sort() orders
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
 * In file order (IOTAP_TRACE_READ_FILE_ORDER) the batches are delivered
 * as they were decoded, without keys or heap.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "iotap_base.h"
#include "trace_i.h"
#include "reader_i.h"

void rd_heap_down(struct iotap_trace_reader *r, unsigned int i)
{
	struct rd_batch **h = r->heap, *x = h[i];
	unsigned int n = r->nheap;

	for (;;) {
		unsigned int c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && rd_batch_before(h[c + 1], h[c]))
			c++;
		if (!rd_batch_before(h[c], x))
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = x;
}

int rd_heap_push(struct iotap_trace_reader *r, struct rd_batch *b)
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

		if (!rd_batch_before(b, r->heap[parent]))
			break;
		r->heap[i] = r->heap[parent];
		i = parent;
	}
	r->heap[i] = b;
	return 0;
}

/* --- delivery ----------------------------------------------------------- */

/* Add the statistics of delivered records @bs to @st. */
void rd_stats_add(struct iotap_trace_read_stats *st, const struct rd_bstats *bs)
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
void rd_bstats_rec(struct rd_bstats *bs, const struct iotap_trace_rec *s)
{
	uint64_t end = rec_end_ns(s);

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
	rd_stats_add(&r->stats, &b->bs);
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
			rd_batch_put(r, b);
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
	r->last_time = rd_batch_time(b, b->pos - 1);
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
		uint64_t t = rd_batch_time(o, o->pos);

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
			rd_heap_down(r, 0);
			r->top_dirty = 0;
		}
		if (r->nheap) {
			uint64_t t;

			b = r->heap[0];
			t = rd_batch_time(b, b->pos);
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
					__builtin_prefetch(brec(b, rd_batch_idx(b, b->pos + RD_PREFETCH)));
				*rec = rd_hand(r, b, rd_batch_idx(b, b->pos));
				r->pending--;
				if (++b->pos == b->nrec) {
					r->heap[0] = r->heap[--r->nheap];
					r->pending_mem -= rd_batch_mem(b);
					rd_retire(r, b);
					if (r->nheap)
						rd_heap_down(r, 0);
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
		/* what is pending starts at or after the watermark: nothing before until is left */
		if (r->until && r->watermark >= r->until && !*r->until_idle)
			return 0;
		ret = rd_next_chunk(r, &b);
		if (ret < 0)
			return ret;
		if (ret == 0)
			continue;	/* r->eof: release what is pending */
		if (!b->nrec) {
			rd_batch_put(r, b);
			continue;
		}
		ret = rd_heap_push(r, b);
		if (ret) {
			rd_batch_put(r, b);
			return ret;
		}
		r->pending += b->nrec;
		r->pending_mem += rd_batch_mem(b);
	}
}

/* The slow path of iotap_trace_reader_next_ref(). */
static __attribute__((noinline)) int rd_next_slow(struct iotap_trace_reader *r,
						  const struct iotap_trace_rec **rec)
{
	int ret;

	if (r->retire) {
		rd_batch_put(r, r->retire);
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

	return rec_next_copy(ret, rec, s);
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
			rd_bstats_rec(&part, brec(b, rd_batch_idx(b, k)));
	}
	rd_stats_add(st, &part);
}
