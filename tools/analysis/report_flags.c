// SPDX-License-Identifier: MIT
/*
 * report_flags.c - odd things worth a line in the report
 *
 * Each flag is one string, "keyword: explanation with the numbers", in
 * the phase it concerns (and the whole trace's where it spans phases):
 *
 *   throughput-change    inside one phase, the rate (MB/s, or ops/s for a
 *                        metadata phase) over one sixteenth of the phase
 *                        differs from another sixteenth by more than the flag
 *                        factor (4x unless --flag-factor): a stall, a
 *                        background job, an array still initialising
 *   latency-outlier      an op type whose max is over 100x its p99, and
 *                        whose ops over 10x p99 took 5% of the phase's
 *                        time or are many (20, and 0.5% of that op): a
 *                        stall that explains the phase, not one slow flush
 *   device-busy-fs-idle  the device worked (util >= 50%) for a second or
 *                        more while no filesystem op was in flight
 *   lost-records         the recorder dropped records: figures are low
 *   small-requests       most requests are a few bytes (bonnie++'s
 *                        per-char tests): the phase measures per-call
 *                        overhead, not the storage
 *   page-cache           the device read under a tenth of what the
 *                        filesystem read
 *   writeback-errors     cache mode: writeback WRITEs of a file failed
 *                        (ENOSPC on a full disk); the application saw a
 *                        successful write(2) and learns of it only at
 *                        fsync() or close(), if it checks (one flag per
 *                        file and errno, in the phase of the first failure)
 *   too-short            the phase lasted under REPORT_MIN_TIMED_S: too short
 *                        to time, its rates show as +++++ (bonnie++'s sign)
 *   split-calls          (whole trace) the kernel sent read()/write() calls
 *                        in pieces (larger than max_write, or cut at its
 *                        page cap); counted joined, with the sysctl that
 *                        would have kept a max_write-sized one one request
 *
 * Everything works from the phase's counters and the time bins, after
 * the pass: nothing here reads the trace.
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "phase.h"
#include "analysis_i.h"

#define OUTLIER_MULT	100.0
#define OUTLIER_MIN_N	100	/* samples before a p99 means anything */
#define OUTLIER_SLOW	10.0	/* an outlier: slower than this many p99s */
#define OUTLIER_SHARE	0.05	/* ... flagged when they took 5% of the phase */
#define OUTLIER_MANY	20	/* ... or there are at least this many */
#define OUTLIER_MANY_SHARE 0.005	/* ... and 0.5% of the op type */
#define WINDOWS		16
#define IDLE_UTIL	50.0	/* device util that counts as busy, % */
#define IDLE_MIN_S	1.0

static void add_flag(struct iotap_flagset *fs, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void add_flag(struct iotap_flagset *fs, const char *fmt, ...)
{
	va_list ap;

	if (fs->n >= IOTAP_REPORT_FLAGS_MAX)
		return;
	va_start(ap, fmt);
	vsnprintf(fs->text[fs->n++], IOTAP_REPORT_FLAG_LEN, fmt, ap);
	va_end(ap);
}

static const char *fmt_us(double ns, char *buf, size_t len)
{
	if (ns >= 1e9)
		snprintf(buf, len, "%.2f s", ns / 1e9);
	else if (ns >= 1e6)
		snprintf(buf, len, "%.1f ms", ns / 1e6);
	else
		snprintf(buf, len, "%.0f us", ns / 1e3);
	return buf;
}

/* A rate as people read it: 1020, 35.2, 0.41 (never 1.02e+03). */
static const char *fmt_rate(double v, char *buf, size_t len)
{
	snprintf(buf, len, v >= 100 ? "%.0f" : v >= 10 ? "%.1f" : "%.2f", v);
	return buf;
}

/* Bins wholly inside [b, e): first and one past the last. */
static int bins_inside(const struct iotap_series *s, uint64_t b, uint64_t e, uint64_t *lo,
		       uint64_t *hi)
{
	if (!s->n || e <= b || b < s->origin)
		return 0;
	*lo = (b - s->origin + s->width - 1) / s->width;
	*hi = (e - s->origin) / s->width;
	if (*hi > s->n)
		*hi = s->n;
	return *hi > *lo;
}

static void flag_throughput(const struct iotap_report *rep, const struct iotap_pstats *p,
			    struct iotap_flagset *fs)
{
	const struct iotap_series *s = &rep->series;
	uint64_t lo, hi, nb, per, k;
	double rate[WINDOWS], wsec, hi_r = -1, lo_r = 1e300, t1, t2;
	unsigned int w, nw, at_hi = 0, at_lo = 0, w1, w2;
	int bytes = p->rd.bytes + p->wr.bytes >= 1000000;
	const char *unit = bytes ? "MB/s" : "ops/s";
	char a[32], b[32];

	if (!bins_inside(s, p->t_begin, p->t_end, &lo, &hi))
		return;
	nb = hi - lo;
	if (nb < 8 || (double)(nb * s->width) / 1e9 < 2.0)
		return;
	/* windows of at least two bins; finer windows place a change more exactly */
	nw = nb >= 2 * WINDOWS ? WINDOWS : (unsigned int)(nb / 2);
	per = nb / nw;
	wsec = (double)(per * s->width) / 1e9;
	for (w = 0; w < nw; w++) {
		double work = 0;

		for (k = 0; k < per; k++) {
			const struct iotap_bin *b = &s->bins[lo + w * per + k];

			work += bytes ? (double)(b->rd_bytes + b->wr_bytes) / 1e6 : (double)b->ops;
		}
		rate[w] = work / wsec;
		if (rate[w] > hi_r) {
			hi_r = rate[w];
			at_hi = w;
		}
		if (rate[w] < lo_r) {
			lo_r = rate[w];
			at_lo = w;
		}
	}
	if (hi_r <= 0 || hi_r < rep->flag_factor * lo_r)
		return;
	w1 = at_lo < at_hi ? at_lo : at_hi;
	w2 = at_lo < at_hi ? at_hi : at_lo;
	t1 = (double)((lo + w1 * per) * s->width + s->origin - rep->t0) / 1e9;
	t2 = (double)((lo + w2 * per) * s->width + s->origin - rep->t0) / 1e9;
	if (lo_r <= 0)
		add_flag(fs,
			 "throughput-change: stalled for %.1f s inside the phase at %.1f s "
			 "(%s %s at %.1f s); flagged above a %.0fx change",
			 wsec, at_lo == w1 ? t1 : t2, fmt_rate(hi_r, a, sizeof(a)), unit,
			 at_hi == w1 ? t1 : t2, rep->flag_factor);
	else
		add_flag(fs,
			 "throughput-change: %s %s %.1fx inside the phase (%s at %.1f s, "
			 "%s at %.1f s); flagged above %.0fx",
			 unit, at_lo > at_hi ? "fell" : "rose", hi_r / lo_r,
			 fmt_rate(rate[w1], a, sizeof(a)), t1, fmt_rate(rate[w2], b, sizeof(b)), t2,
			 rep->flag_factor);
}

/*
 * Ops over OUTLIER_SLOW x p99, from the histogram: their count and about
 * how long they took (bucket midpoints, the last one capped at the max).
 */
static void outliers(const struct iotap_hist *h, uint64_t thr, uint64_t *n, double *ns)
{
	unsigned int i;

	*n = 0;
	*ns = 0;
	for (i = iotap_hist_index(thr, IOTAP_HIST_BITS); i < IOTAP_HIST_BUCKETS; i++) {
		uint64_t c = iotap_hist_count(h, i), lo, hi;

		if (!c)
			continue;
		iotap_hist_range(i, IOTAP_HIST_BITS, &lo, &hi);
		if (hi <= thr)
			continue;
		if (hi > h->max)
			hi = h->max;
		*n += c;
		*ns += (double)c * ((double)lo + (double)hi) / 2;
	}
}

/*
 * @part of @whole in percent, at most 100: the outliers' time is summed
 * over concurrent ops (so it is set against the ops' time, not the
 * phase's span) and estimated from bucket midpoints.
 */
static double share_pct(double part, double whole)
{
	return whole <= 0 ? 0 : part >= whole ? 100 : 100 * part / whole;
}

static void flag_latency(const struct iotap_pstats *p, struct iotap_flagset *fs)
{
	double span = (double)pstats_duration_s(p) * 1e9;
	unsigned int op;
	char a[32], b[32];

	for (op = 0; op < IOTAP_OP_MAX; op++) {
		const struct iotap_hist *h = p->lat[op];
		uint64_t p99, n;
		double ns;

		if (!h || h->n < OUTLIER_MIN_N)
			continue;
		p99 = iotap_hist_quantile(h, 0.99);
		if (!p99 || (double)h->max <= OUTLIER_MULT * (double)p99)
			continue;
		/*
		 * One slow flush in a busy phase explains nothing: flag only
		 * outliers that took a real share of the phase's time, or
		 * that are many.
		 */
		outliers(h, OUTLIER_SLOW * p99, &n, &ns);
		if (ns < OUTLIER_SHARE * span &&
		    (n < OUTLIER_MANY || (double)n < OUTLIER_MANY_SHARE * (double)h->n))
			continue;
		add_flag(fs,
			 "latency-outlier: %s max %s is %.0fx its p99 (%s); %" PRIu64
			 " op%s over %.0fx p99 took %.1f%% of the phase's op time",
			 iotap_trace_op_name(op), fmt_us((double)h->max, a, sizeof(a)),
			 (double)h->max / (double)p99, fmt_us((double)p99, b, sizeof(b)), n,
			 n == 1 ? "" : "s", OUTLIER_SLOW, share_pct(ns, (double)p->busy_ns));
	}
}

static void flag_idle_device(const struct iotap_report *rep, const struct bin_dev *dev, uint64_t b,
			     uint64_t e, struct iotap_flagset *fs)
{
	const struct iotap_series *s = &rep->series;
	uint64_t lo, hi, i, n = 0, first = UINT64_MAX;
	double mb = 0;

	if (!dev || !bins_inside(s, b, e, &lo, &hi))
		return;
	for (i = lo; i < hi; i++) {
		if (s->bins[i].inflight || !dev[i].valid || !dev[i].has_dev ||
		    dev[i].util_pct < IDLE_UTIL)
			continue;
		if (first == UINT64_MAX)
			first = i;
		n++;
		mb += (dev[i].rd_mbps + dev[i].wr_mbps) * (double)s->width / 1e9;
	}
	if ((double)(n * s->width) / 1e9 >= IDLE_MIN_S)
		add_flag(fs,
			 "device-busy-fs-idle: the device was busy (util >= %.0f%%, %.1f MB moved) "
			 "for %.1f s from %.1f s while no filesystem op was in flight: writeback, "
			 "another process, or the array working on its own",
			 IDLE_UTIL, mb, (double)(n * s->width) / 1e9,
			 (double)(first * s->width + s->origin - rep->t0) / 1e9);
}

static void flag_small(const struct iotap_pstats *p, struct iotap_flagset *fs)
{
	const struct iotap_dir_stats *d[2] = { &p->rd, &p->wr };
	unsigned int k, i;

	for (k = 0; k < 2; k++) {
		uint64_t small = 0;

		if (d[k]->ops < 1000)
			continue;
		for (i = 0; i <= 4; i++)	/* up to 16 bytes */
			small += d[k]->size_hist[i];
		if (small * 10 >= d[k]->ops * 9)
			add_flag(
				fs,
				"small-requests: %.0f%% of the %s are 16 bytes or less (bonnie++'s "
				"per-char tests): each is a system call, and through the capture "
				"mount a FUSE round trip, so this measures per-call cost, "
				"not storage",
				100.0 * (double)small / (double)d[k]->ops, k ? "writes" : "reads");
	}
}

static void flag_common(const struct iotap_pstats *p, struct iotap_flagset *fs)
{
	struct dev_fig dev;

	if (p->lost)
		add_flag(fs, "lost-records: the recorder dropped %" PRIu64 " records here; "
			 "the figures are low", p->lost);
	if (fig_device(p, &dev) && dev.fs_unseen_pct >= 90 && p->rd.bytes >= 10000000)
		add_flag(fs,
			 "page-cache: the device read %.1f%% of the %.1f MB the filesystem read; "
			 "the page cache served the rest",
			 100 - dev.fs_unseen_pct, (double)p->rd.bytes / 1e6);
}

void report_flags(struct iotap_report *rep)
{
	struct bin_dev *dev = NULL;
	unsigned int i;

	if (rep->series.n) {
		dev = malloc(rep->series.n * sizeof(*dev));
		if (dev)
			series_dev(&rep->series, dev);
	}
	memset(&rep->tflags, 0, sizeof(rep->tflags));
	for (i = 0; i < rep->nphases; i++) {
		struct iotap_pstats *p = &rep->phases[i];
		struct iotap_flagset *fs = &rep->flags[i];

		memset(fs, 0, sizeof(*fs));
		if (fig_too_short(p))
			add_flag(fs, "too-short: %.3f s is too short to time (under %g s); its rates "
				 "show as +++++", pstats_duration_s(p), REPORT_MIN_TIMED_S);
		flag_common(p, fs);
		flag_throughput(rep, p, fs);
		flag_latency(p, fs);
		flag_small(p, fs);
		flag_idle_device(rep, dev, p->t_begin, p->t_end, fs);
	}
	if (rep->rs.lost_records || rep->total.lost)
		add_flag(&rep->tflags, "lost-records: the recorder dropped %" PRIu64 " records; "
			 "the figures are low", rep->rs.lost_records > rep->total.lost ?
			 rep->rs.lost_records : rep->total.lost);
	if (rep->markers_folded)
		add_flag(&rep->tflags, "too-many-phases: %" PRIu64 " markers came after the first "
			 "%u phases; what they mark is counted together in '(later phases)'",
			 rep->markers_folded, rep->nphases ? rep->nphases - 1 : 0);
	if (rep->rs.chunks_bad || rep->rs.tail_bytes)
		add_flag(&rep->tflags, "damaged-trace: %" PRIu64 " chunk(s) unreadable, %" PRIu64
			 " bytes skipped; figures cover what could be read", rep->rs.chunks_bad,
			 rep->rs.bytes_skipped);
	for (i = 0; i < rep->nwbfail; i++) {
		const struct iotap_wbfail *w = &rep->wbfail[i];
		struct iotap_flagset *fs = &rep->tflags;
		unsigned int k;
		char name[512];

		for (k = 0; k < rep->nphases; k++)
			if (w->t_first >= rep->phases[k].t_begin &&
			    (k + 1 == rep->nphases || w->t_first < rep->phases[k + 1].t_begin))
				fs = &rep->flags[k];
		add_flag(fs, "writeback-errors: %" PRIu64 " writeback WRITE(s) failed with %s on %s "
			 "(%.3f s to %.3f s); the application learns of these only at fsync/close, "
			 "and the file holds less than it wrote", w->count, strerrorname_np(w->err) ? strerrorname_np(w->err) : "an error",
			 iotap_report_file_name(rep, w->file, name, sizeof(name)),
			 (w->t_first - rep->t0) / 1e9, (w->t_last - rep->t0) / 1e9);
	}
	if (rep->wbfail_more)
		add_flag(&rep->tflags, "writeback-errors: %" PRIu64 " more failed writeback WRITE(s) "
			 "on other files", rep->wbfail_more);
	if (rep->split_calls) {
		const char *fuse = rep->hdr.fuse;
		uint64_t want = iotap_trace_fuse_field(fuse, "max_pages_want");
		uint64_t limit = iotap_trace_fuse_field(fuse, "max_pages_limit");
		uint64_t mw = iotap_trace_fuse_field(fuse, "max_write");

		if (limit && want > limit)
			add_flag(&rep->tflags, "split-calls: %" PRIu64 " read()/write() calls came in "
				 "pieces (over max_write %" PRIu64 " or the page cap), counted as calls; "
				 "'sysctl -w fs.fuse.max_pages_limit=%" PRIu64 "' keeps one of max_write "
				 "one request", rep->split_calls, mw, want);
		else
			add_flag(&rep->tflags, "split-calls: %" PRIu64 " read()/write() calls came in "
				 "pieces (over max_write %" PRIu64 " or the page cap), counted as calls",
				 rep->split_calls, mw);
	}
	/* across phases, changes and outliers are the phases' business */
	if (rep->nphases <= 1) {
		flag_throughput(rep, &rep->total, &rep->tflags);
		flag_latency(&rep->total, &rep->tflags);
	}
	if (dev && rep->series.n)
		flag_idle_device(rep, dev, rep->series.origin,
				 rep->series.origin + rep->series.n * rep->series.width,
				 &rep->tflags);
	free(dev);
}
