// SPDX-License-Identifier: MIT
/*
 * stat_series.c - the trace cut into time bins
 *
 * The charts, --interval and the "odd things" flags look at the trace over
 * time. Records come in start order, so only the last bin is ever being
 * filled; an op is counted in the bin where it starts (its duration too:
 * over a bin, busy_ns / width is the mean number of ops in flight, Little's
 * law, as long as ops are shorter than bins). The counts themselves are
 * not made twice: the report counts each op in its current block (struct
 * pstats), and what the block gained is folded into the bin when the ops
 * move on to another bin or the block ends. A SAMPLE record leaves its
 * cumulative counters in its bin; rates come from differences between
 * bins that hold one.
 *
 * Memory is bounded: when a trace outgrows `max` bins, neighbouring bins
 * merge pairwise and the width doubles (as an RRD consolidates), so a long
 * trace gets coarser bins, never more of them.
 */
#include <stdlib.h>
#include <string.h>

#include "stat_i.h"

void series_init(struct iotap_series *s, uint64_t origin, uint64_t width, uint64_t max)
{
	memset(s, 0, sizeof(*s));
	s->origin = origin;
	s->width = s->base_width = width ? width : 100000000ull;
	s->max = max < 16 ? 16 : max & ~1ull;
	s->cur_end = origin;
	s->fold_idx = UINT64_MAX;
}

void series_track(struct iotap_series *s, const struct iotap_pstats *src)
{
	s->src = src;
	memset(&s->snap, 0, sizeof(s->snap));
}

/* What the ops of @p add to a bin: every counter of struct iotap_bin that sums. */
static void bin_sums(const struct iotap_pstats *p, struct iotap_bin *b)
{
	/* neither an op class of a bin nor an fsync: bookkeeping */
	uint64_t quiet = p->op_count[IOTAP_OP_FORGET] + p->op_count[IOTAP_OP_FLUSH] +
			 p->op_count[IOTAP_OP_RELEASE] + p->op_count[IOTAP_OP_RELEASEDIR];

	b->ops = p->ops;
	b->busy_ns = p->busy_ns;
	b->rd_ops = p->rd.ops;
	b->wr_ops = p->wr.ops;
	b->data_ops = p->data_ops;
	b->seeks = p->seeks;
	b->fsyncs = p->fsyncs;
	b->rd_bytes = p->rd.bytes;
	b->wr_bytes = p->wr.bytes;
	b->meta_ops = p->ops - p->rd.ops - p->wr.ops - p->fsyncs - quiet;
}

/* Add what @s->src gained since the last fold to bin @s->fold_idx. */
static void series_fold(struct iotap_series *s)
{
	struct iotap_bin now, *b;

	if (!s->src || s->src->ops == s->snap.ops)
		return;
	bin_sums(s->src, &now);
	if (s->fold_idx < s->n) {
		b = &s->bins[s->fold_idx];
		b->ops += now.ops - s->snap.ops;
		b->busy_ns += now.busy_ns - s->snap.busy_ns;
		b->rd_ops += now.rd_ops - s->snap.rd_ops;
		b->wr_ops += now.wr_ops - s->snap.wr_ops;
		b->data_ops += now.data_ops - s->snap.data_ops;
		b->seeks += now.seeks - s->snap.seeks;
		b->fsyncs += now.fsyncs - s->snap.fsyncs;
		b->rd_bytes += now.rd_bytes - s->snap.rd_bytes;
		b->wr_bytes += now.wr_bytes - s->snap.wr_bytes;
		b->meta_ops += now.meta_ops - s->snap.meta_ops;
		b->inflight = 1;
		if (s->fold_lat > b->lat_max)
			b->lat_max = s->fold_lat;
	}
	s->snap = now;
	s->fold_lat = 0;
}

void series_block_end(struct iotap_series *s)
{
	series_fold(s);
	memset(&s->snap, 0, sizeof(s->snap));
}

void series_release(struct iotap_series *s)
{
	iotap_buf_free(s->bins, s->bins_size);
	memset(s, 0, sizeof(*s));
}

static void close_last(struct iotap_series *s)
{
	unsigned int i, set = 0;

	if (!s->n)
		return;
	if (s->window && !s->seam_closed) {
		/* a window's first bin may go on in the window before: keep its threads */
		memcpy(s->seam_bits, s->tid_bits, sizeof(s->seam_bits));
		s->seam_closed = 1;
	}
	for (i = 0; i < IOTAP_TID_BITS / 64; i++) {
		if (!s->tid_bits[i])
			continue;	/* a bin's few threads set few words: count only those */
		set += (unsigned int)__builtin_popcountll(s->tid_bits[i]);
		s->tid_bits[i] = 0;
	}
	if (set > s->bins[s->n - 1].threads)
		s->bins[s->n - 1].threads = set;
}

static void merge_bin(struct iotap_bin *a, const struct iotap_bin *b)
{
	a->ops += b->ops;
	a->rd_ops += b->rd_ops;
	a->wr_ops += b->wr_ops;
	a->data_ops += b->data_ops;
	a->seeks += b->seeks;
	a->fsyncs += b->fsyncs;
	a->meta_ops += b->meta_ops;
	a->rd_bytes += b->rd_bytes;
	a->wr_bytes += b->wr_bytes;
	a->busy_ns += b->busy_ns;
	if (b->threads > a->threads)
		a->threads = b->threads;
	a->inflight |= b->inflight;
	if (b->lat_max > a->lat_max)
		a->lat_max = b->lat_max;
	if (b->has_smp) {
		a->has_smp = 1;
		a->smp_t = b->smp_t;
		a->smp = b->smp;
	}
}

/*
 * Halve the number of bins: width doubles. Bins 2i and 2i + 1 of the whole
 * series merge (a window's first bin, odd, merges with nothing it holds).
 */
static void coarsen(struct iotap_series *s)
{
	uint64_t i, f = s->first / 2, end = s->first + s->n;
	uint64_t n = s->n ? (end - 1) / 2 + 1 - f : 0;

	close_last(s);
	for (i = 0; i < n; i++) {
		uint64_t a = 2 * (f + i);	/* read at or after i: in place */
		struct iotap_bin b = s->bins[(a < s->first ? a + 1 : a) - s->first];

		if (a >= s->first && a + 1 < end)
			merge_bin(&b, &s->bins[a + 1 - s->first]);
		s->bins[i] = b;
	}
	memset(&s->bins[n], 0, (s->n - n) * sizeof(*s->bins));
	s->n = n;
	s->first = f;
	s->width *= 2;
	s->cur_end = s->origin + (s->first + s->n) * s->width;
}

/* Room for bins[0 .. @idx]: 0, or -1 (out of memory, s->err set). */
static int bins_reserve(struct iotap_series *s, uint64_t idx)
{
	uint64_t ncap = s->cap ? s->cap : 256;
	struct iotap_bin *nb;
	size_t size;

	if (idx < s->cap)
		return 0;
	while (ncap <= idx)
		ncap *= 2;
	if (ncap > s->max)
		ncap = s->max;
	/*
	 * Not cleared here: a bin is when it opens. A page first
	 * touched costs more than the bins in it (a fault, 15-25 us on
	 * a VM): past the first 256 bins (25.6 s of 100 ms bins) the
	 * bins go straight to a 2 MiB extent that a huge page backs
	 * (iotap_buf_alloc, 9,039 bins), grown in whole extents, its
	 * untouched rest costing nothing.
	 */
	size = ncap * sizeof(*nb);
	if (s->cap && size < IOTAP_BUF_HUGE)
		size = IOTAP_BUF_HUGE;
	nb = iotap_buf_grow(s->bins, &s->bins_size, s->n * sizeof(*nb), size);
	if (!nb) {
		s->err = 1;
		return -1;
	}
	s->bins = nb;
	size = s->bins_size;
	s->cap = size / sizeof(*nb) < s->max ? size / sizeof(*nb) : s->max;
	return 0;
}

/* Open bins up to @idx (of the whole series), in-flight flags from @max_end. */
static void bins_open(struct iotap_series *s, uint64_t idx, uint64_t max_end)
{
	uint64_t i;

	for (i = s->n; i <= idx - s->first; i++) {
		memset(&s->bins[i], 0, sizeof(s->bins[i]));
		s->bins[i].inflight = max_end > s->origin + (s->first + i) * s->width;
	}
	s->n = idx - s->first + 1;
	s->cur_end = s->origin + (s->first + s->n) * s->width;
}

/* @t's bin: opens bins, widens them. */
static struct iotap_bin *bin_find(struct iotap_series *s, uint64_t t)
{
	uint64_t idx;

	if (t < s->origin)
		t = s->origin;
	if (s->n && t < s->cur_end && t >= s->cur_end - s->width)
		return &s->bins[s->n - 1];
	if (s->err)
		return NULL;
	idx = (t - s->origin) / s->width;
	if (idx < s->first + s->n)	/* a late record: its bin is already closed */
		return idx >= s->first ? &s->bins[idx - s->first] : NULL;
	while (idx >= s->max) {
		coarsen(s);
		idx = (t - s->origin) / s->width;
	}
	if (s->window && !s->n) {
		/* the bins before are the windows' before: open only this one */
		s->first = idx;
		s->t0 = t;
		s->w0 = s->width;
		s->open_flag = s->max_end > s->origin + idx * s->width;
	}
	if (bins_reserve(s, idx - s->first))
		return NULL;
	close_last(s);
	bins_open(s, idx, s->window && !s->n ? 0 : s->max_end);
	return &s->bins[idx - s->first];
}

struct iotap_bin *series_move(struct iotap_series *s, uint64_t t)
{
	struct iotap_bin *b;

	series_fold(s);
	b = bin_find(s, t);
	if (b) {
		s->fold_idx = (uint64_t)(b - s->bins);
		s->fold_lo = s->origin + (s->first + s->fold_idx) * s->width;
		s->fold_w = s->width;
	} else {
		s->fold_idx = UINT64_MAX;
		s->fold_lo = s->fold_w = 0;
	}
	return b;
}

void series_add_sample(struct iotap_series *s, const struct iotap_trace_rec *r)
{
	struct iotap_bin *b = series_bin(s, r->time_ns);

	if (!b)
		return;
	b->has_smp = 1;
	b->smp_t = r->time_ns;
	b->smp = r->sample;
}

void series_finish(struct iotap_series *s)
{
	series_fold(s);
	s->src = NULL;
	close_last(s);
}

void series_init_window(struct iotap_series *s, const struct iotap_series *whole,
			uint64_t max_end)
{
	series_init(s, whole->origin, whole->base_width, whole->max);
	s->window = 1;
	s->max_end = max_end;
}

/* The bin of the whole series that holds time @t. */
static struct iotap_bin *bin_at(struct iotap_series *s, uint64_t t)
{
	return &s->bins[(t - s->origin) / s->width - s->first];
}

/*
 * What the whole series would have done with the window's records, from
 * what the window's series did with them on its own: the bins between
 * are opened as the window's first record would have opened them, the
 * seam bin (where the last window's records and this one's share a bin)
 * gets the threads of both, and the widths meet.
 */
int series_append(struct iotap_series *s, struct iotap_series *w, uint64_t max_end)
{
	uint64_t bits[IOTAP_TID_BITS / 64], i, last, gap_lo = 0;
	int shared, gap = 0;

	if (w->err)
		s->err = 1;
	if (!w->n || s->err)
		goto out;
	if (w->w0 < s->width) {
		s->err = 1;	/* not the window after @s's records: nothing to do right */
		goto out;
	}
	/* the window's first record falls in this series' last bin: nothing closed it */
	shared = s->n && w->t0 < s->cur_end;
	if (shared) {
		memcpy(bits, s->tid_bits, sizeof(bits));
	} else {
		close_last(s);
		if (s->n) {
			/* bins the first record opened between: their flags, at its width */
			last = (s->first + s->n - 1) / (w->w0 / s->width);
			if ((w->t0 - s->origin) / w->w0 > last + 1) {
				gap = 1;
				gap_lo = s->origin + (last + 1) * w->w0;
			}
		} else if ((w->t0 - s->origin) / w->w0 > 0) {
			gap = 1;
			gap_lo = s->origin;
		}
	}
	while (s->width < w->width)
		coarsen(s);
	if (bins_reserve(s, w->first + w->n - 1 - s->first))
		goto out;
	if (!shared && w->first > s->first + s->n)
		bins_open(s, w->first - 1, max_end);
	for (i = 0; i < w->n; i++) {
		uint64_t g = w->first + i;

		if (g < s->first + s->n)
			merge_bin(&s->bins[g - s->first], &w->bins[i]);
		else
			s->bins[g - s->first] = w->bins[i];
	}
	s->n = w->first + w->n - s->first;
	s->cur_end = s->origin + (s->first + s->n) * s->width;
	if (gap) {
		/* bins holding some of them: flagged as the first of those in each was */
		uint64_t hi = s->origin + (w->t0 - s->origin) / w->w0 * w->w0, t;

		for (t = gap_lo; t < hi; t = (t - s->origin) / s->width * s->width + s->origin + s->width)
			if (max_end > t)
				bin_at(s, t)->inflight = 1;
	}
	if (!shared && w->open_flag)
		bin_at(s, w->t0)->inflight = 1;
	if (shared && w->seam_closed) {
		struct iotap_bin *b = &s->bins[w->first - s->first];
		unsigned int set = 0;

		for (i = 0; i < IOTAP_TID_BITS / 64; i++)
			set += (unsigned int)__builtin_popcountll(bits[i] | w->seam_bits[i]);
		if (set > b->threads)
			b->threads = set;
	}
	/* the open bin's threads so far: the window's (and the seam's) */
	for (i = 0; i < IOTAP_TID_BITS / 64; i++)
		s->tid_bits[i] = (shared && !w->seam_closed ? bits[i] : 0) | w->tid_bits[i];
out:
	if (w->max_end > s->max_end)
		s->max_end = w->max_end;
	return s->err ? -1 : 0;
}

void series_dev(const struct iotap_series *s, struct bin_dev *out)
{
	uint64_t i, j, prev = UINT64_MAX;

	memset(out, 0, s->n * sizeof(*out));
	for (i = 0; i < s->n; i++) {
		const struct iotap_trace_sample *a, *b;
		struct bin_dev d;
		double dt, cpu_all;

		if (!s->bins[i].has_smp)
			continue;
		if (prev == UINT64_MAX || s->bins[i].smp_t <= s->bins[prev].smp_t) {
			prev = i;
			continue;
		}
		a = &s->bins[prev].smp;
		b = &s->bins[i].smp;
		dt = (double)(s->bins[i].smp_t - s->bins[prev].smp_t) / 1e9;
		memset(&d, 0, sizeof(d));
		d.has_dev = b->dev_major || b->dev_minor;
		d.rd_mbps = (double)(b->rd_sectors - a->rd_sectors) * 512 / 1e6 / dt;
		d.wr_mbps = (double)(b->wr_sectors - a->wr_sectors) * 512 / 1e6 / dt;
		d.iops = (double)((b->rd_ios - a->rd_ios) + (b->wr_ios - a->wr_ios)) / dt;
		d.util_pct = (double)(b->io_ticks_ms - a->io_ticks_ms) / 10.0 / dt;
		if (d.util_pct > 100)
			d.util_pct = 100;
		d.queue = (double)(b->queue_ms - a->queue_ms) / 1e3 / dt;
		cpu_all = (double)((b->sys_user_ns + b->sys_sys_ns + b->sys_idle_ns +
				    b->sys_iowait_ns) -
				   (a->sys_user_ns + a->sys_sys_ns + a->sys_idle_ns +
				    a->sys_iowait_ns));
		if (cpu_all > 0)
			d.cpu_sys_pct = 100.0 *
					(double)((b->sys_user_ns + b->sys_sys_ns) -
						 (a->sys_user_ns + a->sys_sys_ns)) /
					cpu_all;
		d.cpu_daemon_pct = 100.0 * (double)((b->proc_user_ns + b->proc_sys_ns) -
						    (a->proc_user_ns + a->proc_sys_ns)) / 1e9 / dt;
		if (!d.has_dev)
			d.rd_mbps = d.wr_mbps = d.iops = d.util_pct = d.queue = 0;
		d.valid = 1;
		for (j = prev + 1; j <= i; j++)
			out[j] = d;
		prev = i;
	}
}
