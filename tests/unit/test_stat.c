// SPDX-License-Identifier: MIT
/*
 * test_stat.c - the report's accumulators (stat.h) on their own
 *
 * The merge and clear of per-block pstats against one span fed every op
 * (what the report's blocks and threads rely on), and the seek map's
 * caches against a plain array of where each file's last op ended.
 */
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iotap_analysis.h"
#include "phase.h"
#include "synth.h"
#include "tap.h"
#include "trace_test.h"

/* A mixed op stream: every op kind (and one past the last), sizes, errors, seeks, threads. */
static void mixed_rec(uint64_t *rng, uint64_t i, struct iotap_trace_rec *r)
{
	uint64_t x = synth_rng(rng);

	memset(r, 0, sizeof(*r));
	r->type = IOTAP_REC_OP;
	r->op = (uint16_t)(x % 3 ? (x >> 8) % 2 ? IOTAP_OP_READ : IOTAP_OP_WRITE
				 : (x >> 8) % (IOTAP_OP_MAX + 1));
	/* mostly in order, every 50th op late by up to 30 ms */
	r->time_ns = 1000000000ull + i * 700000 - (i % 50 ? 0 : (x >> 20) % 30000000);
	r->dur_ns = (x >> 12) % 5000000;
	r->tid = 100 + (uint32_t)((x >> 24) % 9);
	r->pid = (x >> 28) % 5 ? 7 : 0;
	r->length = ((x >> 30) % 7 ? 1ull << ((x >> 33) % 22) : (x >> 33) % 100000);
	r->result = (x >> 40) % 17 ? (int64_t)r->length : -5;
	r->mode = (x >> 45) % 2 ? 0100644 : 040755;
	r->file = (x >> 50) % 4;
	r->offset = (x >> 52) % 3 ? i * 4096 : (x >> 20) % 1000000;
}

static int hist_same(const struct iotap_hist *a, const struct iotap_hist *b)
{
	unsigned int i;

	if (!a || !b)
		return (!a || !a->n) && (!b || !b->n);
	if (a->n != b->n || a->sum != b->sum || a->min != b->min || a->max != b->max)
		return 0;
	for (i = 0; i < IOTAP_HIST_BUCKETS; i++)
		if (iotap_hist_count(a, i) != iotap_hist_count(b, i))
			return 0;
	return 1;
}

/*
 * pstats merge and clear touch only the array entries their masks name,
 * and the time bins take their counts from the block: blocks of any
 * length, merged, must equal one span fed every op, a cleared block must
 * be all zero, and the bins must hold what counting each op in its own
 * bin gives.
 */
static void test_block_merge(void)
{
	static struct iotap_pstats all, sum, blk, zero;
	static struct iotap_bin want[64];
	struct iotap_series s;
	struct iotap_seek_map sm;
	struct iotap_trace_rec r;
	struct op_in in;
	uint64_t rng = 11, i, n = 6000, left = 0, width = 100000000ull, lat_ok = 1, bins_ok = 1;
	const size_t lo = offsetof(struct iotap_pstats, ops), hi = offsetof(struct iotap_pstats,
				   lat);
	unsigned int op;

	pstats_init(&all, "all", 0, 0);
	pstats_init(&sum, "sum", 0, 0);
	pstats_init(&blk, "", 0, 0);
	pstats_init(&zero, "", 0, 0);
	memset(want, 0, sizeof(want));
	seek_map_init(&sm);
	series_init(&s, 1000000000ull - 50000000, width, 64);
	series_track(&s, &blk);
	for (i = 0; i < n; i++) {
		int64_t dist = 0;
		struct iotap_bin *w;

		mixed_rec(&rng, i, &r);
		if ((r.op == IOTAP_OP_READ || r.op == IOTAP_OP_WRITE) && r.result >= 0)
			dist = seek_map_update(&sm, r.file, r.offset, r.offset + r.length,
					       r.op == IOTAP_OP_WRITE ? IOTAP_SEEK_WRITE : IOTAP_SEEK_READ);
		if (!left) {
			/* a block ends: what the report does at AUTO_BLOCK_OPS or a gap */
			series_block_end(&s);
			pstats_merge(&sum, &blk);
			pstats_clear(&blk);
			if (memcmp((char *)&blk + lo, (char *)&zero + lo, hi - lo))
				bins_ok = lat_ok = 0;
			left = 1 + synth_rng(&rng) % 300;
		}
		left--;
		in = op_in_of(&r);
		series_add_op(&s, &in);
		pstats_add_op(&blk, &in, dist != 0, dist);
		pstats_add_op(&all, &in, dist != 0, dist);
		/* the bin as counting each op in it gives */
		w = &want[(r.time_ns - s.origin) / width];
		w->ops++;
		w->busy_ns += r.dur_ns;
		if (r.dur_ns > w->lat_max)
			w->lat_max = r.dur_ns;
		if (r.op == IOTAP_OP_READ || r.op == IOTAP_OP_WRITE) {
			*(r.op == IOTAP_OP_READ ? &w->rd_ops : &w->wr_ops) += 1;
			w->data_ops++;
			if (r.result > 0)
				*(r.op == IOTAP_OP_READ ? &w->rd_bytes : &w->wr_bytes) +=
					(uint64_t)r.result;
			w->seeks += dist != 0;
		} else if (r.op == IOTAP_OP_FSYNC || r.op == IOTAP_OP_FSYNCDIR) {
			w->fsyncs++;
		} else if (r.op != IOTAP_OP_FORGET && r.op != IOTAP_OP_FLUSH &&
			   r.op != IOTAP_OP_RELEASE && r.op != IOTAP_OP_RELEASEDIR) {
			w->meta_ops++;
		}
	}
	series_block_end(&s);
	pstats_merge(&sum, &blk);
	pstats_clear(&blk);	/* as the report does: the block starts again from 0 */
	series_finish(&s);
	ok(!memcmp((char *)&all + lo, (char *)&sum + lo, hi - lo),
	   "blocks merged = one span: every counter, array and mask");
	ok(all.first_op == sum.first_op && all.last_end == sum.last_end &&
	   all.ends_sync == sum.ends_sync, "blocks merged = one span: first op, last end, ends_sync");
	for (op = 0; op < IOTAP_OP_MAX; op++)
		if (!hist_same(all.lat[op], sum.lat[op]))
			lat_ok = 0;
	ok(lat_ok, "blocks merged = one span: latency histograms; a cleared block is all zero");
	/* what a merge made merges and clears in turn (a phase into the total) */
	pstats_release(&blk);
	pstats_init(&blk, "", 0, 0);
	pstats_merge(&blk, &sum);
	pstats_clear(&sum);
	for (op = 0, lat_ok = 1; op < IOTAP_OP_MAX; op++) {
		unsigned int b;

		if (!hist_same(all.lat[op], blk.lat[op]))
			lat_ok = 0;
		for (b = 0; sum.lat[op] && b < IOTAP_HIST_BUCKETS; b++)
			if (iotap_hist_count(sum.lat[op], b))
				lat_ok = 0;
	}
	ok(lat_ok && !memcmp((char *)&all + lo, (char *)&blk + lo, hi - lo) &&
	   !memcmp((char *)&sum + lo, (char *)&zero + lo, hi - lo),
	   "a merged span merges on whole and clears to zero");
	ok(s.n > 40 && s.n <= 64, "the trace fills %" PRIu64 " bins", s.n);
	for (i = 0; i < s.n; i++) {
		const struct iotap_bin *g = &s.bins[i], *w = &want[i];

		if (g->ops != w->ops || g->busy_ns != w->busy_ns || g->lat_max != w->lat_max ||
		    g->rd_ops != w->rd_ops || g->wr_ops != w->wr_ops || g->data_ops != w->data_ops ||
		    g->rd_bytes != w->rd_bytes || g->wr_bytes != w->wr_bytes ||
		    g->seeks != w->seeks || g->fsyncs != w->fsyncs || g->meta_ops != w->meta_ops ||
		    g->inflight != (w->ops > 0 || g->inflight)) {
			diag("bin %" PRIu64 ": ops %" PRIu64 "/%" PRIu64 " meta %" PRIu64 "/%" PRIu64,
			     i, g->ops, w->ops, g->meta_ops, w->meta_ops);
			bins_ok = 0;
		}
	}
	ok(bins_ok, "time bins folded from the blocks = each op counted in its bin (late ones too)");
	series_release(&s);
	seek_map_release(&sm);
	pstats_release(&all);
	pstats_release(&sum);
	pstats_release(&blk);
}

/* The test of series windows: one record of a sorted stream with idle gaps and samples. */
static void window_rec(uint64_t *rng, uint64_t *t, struct iotap_trace_rec *r, unsigned int smp)
{
	uint64_t x = synth_rng(rng);

	memset(r, 0, sizeof(*r));
	/* mostly 0.1-3 ms apart, now and then an idle gap of up to 2 s, ties too */
	*t += x % 97 ? x % 5 ? (x >> 8) % 3000000 : 0 : (x >> 8) % 2000000000;
	r->time_ns = *t;
	if ((x >> 40) % smp == 0) {
		r->type = IOTAP_REC_SAMPLE;
		r->sample.rd_ios = x >> 20;
		return;
	}
	r->type = IOTAP_REC_OP;
	r->op = (uint16_t)((x >> 16) % 3 ? (x >> 18) % 2 ? IOTAP_OP_READ : IOTAP_OP_WRITE
				 : (x >> 18) % IOTAP_OP_MAX);
	/* now and then an op in flight for long: bins it spans flag it */
	r->dur_ns = (x >> 24) % 13 ? (x >> 28) % 2000000 : (x >> 28) % 900000000;
	r->tid = 100 + (uint32_t)((x >> 34) % 23);
	r->length = 4096;
	r->result = 4096;
}

/* The report's feed of one record into a series that tracks @blk, a block of @left ops. */
static void window_feed(struct iotap_series *s, struct iotap_pstats *blk, uint64_t *left,
			uint64_t *rng, const struct iotap_trace_rec *r)
{
	struct op_in in;

	if (r->type == IOTAP_REC_SAMPLE) {
		series_add_sample(s, r);
		return;
	}
	if (!*left) {
		series_block_end(s);
		pstats_clear(blk);
		*left = 1 + synth_rng(rng) % 300;
	}
	(*left)--;
	in = op_in_of(r);
	series_add_op(s, &in);
	pstats_add_op(blk, &in, 0, 0);
}

/*
 * A trace's time bins built window by window (each window's series on
 * its own, then appended in order: what a report on several threads does)
 * equal the bins of one series fed every record: cut anywhere (inside a
 * bin, at idle gaps), with the width doubling inside windows and between.
 */
static void test_series_windows(uint64_t width, uint64_t max, unsigned int smp)
{
	static struct iotap_trace_rec recs[40000];
	static struct iotap_pstats blk;
	struct iotap_series one, whole, w;
	uint64_t rng = 5, t = 3000000000ull, i, j, left = 0, max_end = 0, before, round, bad = 0;
	uint64_t n = sizeof(recs) / sizeof(recs[0]);

	for (i = 0; i < n; i++)
		window_rec(&rng, &t, &recs[i], smp);
	pstats_init(&blk, "", 0, 0);
	series_init(&one, 2950000000ull, width, max);
	series_track(&one, &blk);
	for (i = 0; i < n; i++)
		window_feed(&one, &blk, &left, &rng, &recs[i]);
	series_block_end(&one);
	pstats_clear(&blk);	/* as the report ends its last block */
	series_finish(&one);
	ok(one.width > width && one.n > max / 4, "the trace doubles the width: %" PRIu64
	   " bins of %" PRIu64 " ms", one.n, one.width / 1000000);
	for (round = 0; round < 6; round++) {
		uint64_t cut = round < 3 ? 1 + round * 700 : 20 + round * 5000;

		series_init(&whole, 2950000000ull, width, max);
		max_end = 0;
		for (i = 0; i < n; i = j) {
			/* windows of random length up to @cut records: many seams share a bin */
			j = i + 1 + synth_rng(&rng) % cut;
			j = j < n ? j : n;
			before = max_end;
			series_init_window(&w, &whole, before);
			pstats_clear(&blk);
			series_track(&w, &blk);
			left = 0;
			for (; i < j; i++) {
				window_feed(&w, &blk, &left, &rng, &recs[i]);
				if (recs[i].type == IOTAP_REC_OP && recs[i].time_ns + recs[i].dur_ns > max_end)
					max_end = recs[i].time_ns + recs[i].dur_ns;
			}
			series_block_end(&w);
			series_append(&whole, &w, before);
			series_release(&w);
		}
		series_finish(&whole);
		if (whole.n != one.n || whole.width != one.width || whole.first ||
		    memcmp(whole.bins, one.bins, one.n * sizeof(*one.bins))) {
			for (i = 0; i < one.n && i < whole.n; i++)
				if (memcmp(&whole.bins[i], &one.bins[i], sizeof(one.bins[i])))
					break;
			diag("round %" PRIu64 ": %" PRIu64 "/%" PRIu64 " bins, first differing %" PRIu64
			     " (ops %" PRIu64 "/%" PRIu64 ", threads %u/%u, inflight %u/%u)", round,
			     whole.n, one.n, i, i < whole.n ? whole.bins[i].ops : 0,
			     i < one.n ? one.bins[i].ops : 0, i < whole.n ? whole.bins[i].threads : 0,
			     i < one.n ? one.bins[i].threads : 0, i < whole.n ? whole.bins[i].inflight : 0,
			     i < one.n ? one.bins[i].inflight : 0);
			bad++;
		}
		series_release(&whole);
	}
	ok(!bad, "windows appended = one series, byte for byte (%" PRIu64 " bins of %" PRIu64
	   " us at first, 1 record in %u a sample, 6 ways of cutting)", max, width / 1000, smp);
	series_release(&one);
	pstats_release(&blk);
}

/*
 * The seek map's caches (the last file, a direct-mapped one behind it) give
 * what a plain array of "where the last op ended" gives: clients taking
 * turns on a few files, then on thousands (the map grows and moves its
 * entries under the caches).
 */
static void test_seek_cache(void)
{
	static uint64_t last_end[4096], count[4096];
	struct iotap_seek_map m;
	uint64_t rng = 5, i, files[4], counts[4];
	int same = 1;

	seek_map_init(&m);
	for (i = 0; i < 200000; i++) {
		uint64_t x = synth_rng(&rng), f = i < 50000 ? (x >> 8) % 24 : (x >> 8) % 4096;
		uint64_t off = (x >> 20) % 3 ? last_end[f] : (x >> 24) % 1000000, end = off + 8192;
		int64_t want = (int64_t)(off - last_end[f]);

		/* runs of a few ops on one file, as a client does */
		if (seek_map_update(&m, f, off, end, IOTAP_SEEK_READ) != want)
			same = 0;
		last_end[f] = end;
		count[f]++;
		if ((x >> 40) % 4 && i + 1 < 200000) {
			if (seek_map_update(&m, f, end, end + 4096, IOTAP_SEEK_READ) != 0)
				same = 0;
			last_end[f] = end + 4096;
			count[f]++;
			i++;
		}
	}
	ok(same, "seek distances through the caches = a plain array's, as the map grows");
	ok(seek_map_busiest(&m, 1, files, counts) == 1 && counts[0] == count[files[0]],
	   "the busiest file's count (%" PRIu64 ")", counts[0]);
	seek_map_release(&m);
	/*
	 * A new file, an old one, the new one again: the map grows on the old
	 * one's look-up (the insert before filled it), which moves the new
	 * file's entry from under the cache.
	 */
	seek_map_init(&m);
	memset(last_end, 0, sizeof(last_end));
	for (i = 1, same = 1; i < 3000; i++) {
		uint64_t f, k;

		for (k = 0; k < 3; k++) {
			f = k == 1 ? i - 1 : i;
			if (seek_map_update(&m, f, last_end[f], last_end[f] + 100,
			    IOTAP_SEEK_READ) != 0)
				same = 0;
			last_end[f] += 100;
		}
	}
	ok(same, "an entry the map moved while it was cached is not written through the cache");
	seek_map_release(&m);
}

int main(void)
{
	test_block_merge();
	test_seek_cache();
	test_series_windows(10000000, 64, 61);
	test_series_windows(1000000, 16, 61);
	test_series_windows(100000, 4096, 61);
	test_series_windows(1000000, 256, 2);
	test_series_windows(10000, 64, 3);
	return done_testing();
}
