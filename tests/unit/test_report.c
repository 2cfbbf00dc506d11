// SPDX-License-Identifier: MIT
/*
 * test_report.c - the report's figures against synthetic traces with known timing
 *
 * Each case writes a trace with synth.h, whose every request time, size
 * and duration is set by the script, builds the report the way `iotap
 * report` does and checks the figures exactly (rates, counts) or within
 * the latency histogram's stated error (percentiles: IOTAP_HIST_REL_ERROR of the
 * exact empirical quantile). Covers: marked phases, the latency histogram
 * and its merge, seeks and their distance histogram, fsyncs, concurrency,
 * the device view, CPU, lost records, the throughput-change and latency
 * outlier flags, automatic phases on a bonnie-like trace (each boundary
 * within one second), idle gaps, --phases-from, compare of a trace with
 * itself, the JSON contract's keys, and the fleet report of several hosts'
 * traces (sums over the union of their wall-clock spans), and the same
 * state at any --threads, and in time windows (report_par.c: a recorder-
 * written trace with a long fsync in flight across windows, gaps, runs of
 * 1-byte requests). Block merges and the seek cache: test_stat.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <math.h>
#include <stddef.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis_i.h"
#include "phase.h"
#include "synth.h"
#include "tap.h"
#include "trace_test.h"

static char dir[] = "/tmp/iotap-test-report.XXXXXX";
static char path_buf[4][256];

static const char *tpath(int k, const char *name)
{
	snprintf(path_buf[k], sizeof(path_buf[k]), "%s/%s", dir, name);
	return path_buf[k];
}

static int near(double got, double want, double rel)
{
	return fabs(got - want) <= rel * fabs(want) + 1e-9;
}

static int has_flag(const struct iotap_flagset *fs, const char *kw)
{
	unsigned int i;

	for (i = 0; i < fs->n; i++)
		if (!strncmp(fs->text[i], kw, strlen(kw)))
			return 1;
	return 0;
}

/* Exact empirical quantile of the spread latencies: lat + k * spread/1000 us. */
static double spread_q(double lat_us, double spread_us, double q)
{
	double k = ceil(q * 1000) - 1;

	return lat_us + k * spread_us / 1000;
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t p = *(const uint64_t *)x, r = *(const uint64_t *)y;

	return p < r ? -1 : p > r;
}

static void test_histogram(void)
{
	struct iotap_hist a = { 0 }, b = { 0 }, all = { 0 };
	uint64_t s = 7, v, i, worst_ok = 1;
	static uint64_t vals[20000];
	double q;

	for (i = 0; i < 20000; i++) {
		v = synth_rng(&s) % 50000000 + 1;	/* 1 ns .. 50 ms */
		vals[i] = v;
		iotap_hist_add(i % 2 ? &a : &b, v);
		iotap_hist_add(&all, v);
	}
	iotap_hist_merge(&a, &b);
	ok(a.n == all.n && a.sum == all.sum && a.min == all.min && a.max == all.max,
	   "merged histogram has the same n, sum, min, max");
	for (i = 0; i < IOTAP_HIST_BUCKETS; i++)
		if (iotap_hist_count(&a, (unsigned int)i) != iotap_hist_count(&all, (unsigned int)i))
			worst_ok = 0;
	ok(worst_ok, "merged histogram has the same buckets");
	/* quantiles against the sorted samples */
	qsort(vals, 20000, sizeof(vals[0]), cmp_u64);
	worst_ok = 1;
	for (q = 0.01; q < 1; q += 0.01) {
		double exact = (double)vals[(uint64_t)ceil(q * 20000) - 1];
		double got = (double)iotap_hist_quantile(&all, q);

		if (fabs(got - exact) > exact * IOTAP_HIST_REL_ERROR)
			worst_ok = 0;
	}
	ok(worst_ok, "every percentile within 1/64 of the exact one");
	iotap_hist_clear(&a);
	ok(a.n == 0 && iotap_hist_quantile(&a, 0.5) == 0, "a cleared histogram is empty");
	iotap_hist_release(&a);
	iotap_hist_release(&b);
	iotap_hist_release(&all);
}

static void test_golden(void)
{
	static const char script[] =
		"w1 seqwrite ops=1000 rate=100 bs=1048576 lat=5000 fsync=100 threads=1\n"
		"r1 strided ops=500 rate=500 bs=4096 stride=65536 lat=100 spread=200 file=5\n"
		"c4 seqread ops=1000 rate=1000 bs=8192 lat=2000 threads=4 file=6 devread=20\n";
	struct iotap_report rep;
	const struct iotap_pstats *w, *r, *c;
	struct dev_fig dev;
	double d, cpu;
	int n, has_dev;

	n = synth_write(tpath(0, "golden.iotap"), script, SYNTH_SAMPLES | SYNTH_LOST, NULL, 0);
	ok(n == 3, "golden trace written (%d phases)", n);
	if (iotap_report_build(&rep, tpath(0, "golden.iotap"), NULL)) {
		ok(0, "report of the golden trace");
		return;
	}
	ok(rep.nphases == 3 && !strcmp(rep.phase_source, "markers"), "3 phases from markers (%u)",
	   rep.nphases);
	if (rep.nphases != 3)
		goto out;
	w = &rep.phases[0];
	r = &rep.phases[1];
	c = &rep.phases[2];
	/* w1: 1000 x 1 MiB in exactly 10 s */
	d = pstats_duration_s(w);
	ok(near(d, 10.0, 1e-12), "w1 lasts 10 s (%.9f)", d);
	ok(w->wr.ops == 1000 && w->wr.bytes == 1048576000ull, "w1 wrote 1000 x 1 MiB");
	ok(near(fig_mbps(w->wr.bytes, d), 104.8576, 1e-12), "w1 104.8576 MB/s (%.6f)",
	   fig_mbps(w->wr.bytes, d));
	ok(near(fig_rate(w->wr.ops, d), 100, 1e-12), "w1 100 IOPS");
	ok(w->seeks == 0 && near(fig_seq_pct(w), 100, 1e-12), "w1 has no seeks");
	ok(w->fsyncs == 10 && near(fig_rate(w->fsyncs, d), 1.0, 1e-12), "w1 10 fsyncs, 1/s");
	ok(w->wr.size_hist[20] == 1000 && dir_typical_size(&w->wr) == 1048576,
	   "w1 size histogram: all in the 1 MiB bucket");
	ok(near(iotap_hist_quantile(w->lat[IOTAP_OP_WRITE], 0.5) / 1e3, 5000, IOTAP_HIST_REL_ERROR),
	   "w1 write p50 5000 us");
	ok(w->lost == 5 && has_flag(&rep.flags[0], "lost-records"), "w1 lost 5 records, flagged");
	ok(fig_cpu(w, &(struct cpu_fig){ 0 }) && fig_cpu_pct(w, &cpu) && near(cpu, 10, 1e-6),
	   "w1 workload cpu 10%%");
	/* fill @dev first: the arguments of ok() are evaluated in no set order */
	has_dev = fig_device(w, &dev);
	ok(has_dev && near(dev.wr_mbps, 104.8576, 0.05),
	   "w1 device writes what the filesystem wrote (%.2f MB/s)", dev.wr_mbps);
	/* r1: strided reads, every one but the first a seek of 61440 bytes */
	d = pstats_duration_s(r);
	ok(near(d, 1.0, 1e-12), "r1 lasts 1 s");
	ok(r->seeks == 499 && near(fig_rate(r->seeks, d), 499, 1e-12),
	   "r1 499 seeks/s (%" PRIu64 ")", r->seeks);
	ok(r->seek_hist[16] == 499, "r1 seek distances all in [32k, 64k)");
	ok(near(fig_seq_pct(r), 0.2, 1e-9), "r1 sequential 0.2%%");
	{
		const struct iotap_hist *h = r->lat[IOTAP_OP_READ];
		static const double qs[] = { 0.5, 0.9, 0.99 };
		uint64_t ks[500];
		unsigned int i, good = 1;

		/* the first 500 of the spread permutation: 100 + k * 0.2 us */
		for (i = 0; i < 500; i++)
			ks[i] = (uint64_t)i * 7919 % 1000;
		qsort(ks, 500, sizeof(ks[0]), cmp_u64);
		ok(h && h->n == 500, "r1 500 read latencies");
		for (i = 0; h && i < 3; i++) {
			double want = 100 + ks[(unsigned int)ceil(qs[i] * 500) - 1] * 0.2;

			if (!near(iotap_hist_quantile(h, qs[i]) / 1e3, want, IOTAP_HIST_REL_ERROR))
				good = 0;
		}
		ok(good, "r1 p50, p90, p99 within 1/64 of the exact values");
	}
	/* c4: 4 threads, 2 ms each at 1000/s: 2 in flight */
	d = pstats_duration_s(c);
	ok(pstats_threads(c) == 4, "c4 4 threads (%u)", pstats_threads(c));
	ok(near((double)c->busy_ns / 1e9 / d, 2.0, 1e-9), "c4 2.0 ops in flight on average");
	ok(c->max_inflight == 2, "c4 at most 2 in flight (%" PRIu64 ")", c->max_inflight);
	has_dev = fig_device(c, &dev);
	ok(has_dev && near(dev.fs_unseen_pct, 80, 0.05),
	   "c4 the device never saw 80%% of the reads (%.1f%%)", dev.fs_unseen_pct);
	/* total */
	{
		/* --by op: the read row has the phase's seeks, not 0 and 100% sequential */
		char *txt = NULL, *row;
		size_t len = 0;
		FILE *f = open_memstream(&txt, &len);

		ok(f && !iotap_report_print_by(&rep, 1, IOTAP_BY_OP, 1, f, NULL), "--by op of r1");
		if (f)
			fclose(f);
		row = txt ? strstr(txt, "\n\"read\",") : NULL;
		ok(row && strstr(row, ",499,499.000,0.20,"),
		   "--by op: r1's read row has 499 seeks, 499/s, 0.2%% sequential");
		free(txt);
	}
	ok(rep.total.ops == w->ops + r->ops + c->ops, "total ops are the sum of the phases");
	ok(rep.total.wr.bytes == 1048576000ull && rep.total.seeks == 499, "total bytes and seeks");
out:
	iotap_report_release(&rep);
}

/*
 * The fsync that closes a rewrite belongs to the rewrite (bonnie++ times it
 * there), not to the per-char reads that follow. Without markers.
 */
static void test_closing_fsync(void)
{
	static const char script[] =
		"write seqwrite ops=20000 rate=20000 bs=8192 lat=20 file=2\n"
		"rewrite rewrite ops=10000 rate=10000 bs=8192 lat=20 file=2\n"
		"pause idle dur=0.15\n"
		"sync fsync ops=1 rate=2 lat=400000 file=2\n"
		"getc seqread ops=100000 rate=50000 bs=1 lat=5 file=3\n";
	struct iotap_report rep;
	unsigned int i, at = UINT32_MAX;

	ok(synth_write(tpath(3, "sync.iotap"), script, SYNTH_NO_MARKS, NULL, 0) == 5,
	   "rewrite + fsync trace written");
	if (iotap_report_build(&rep, tpath(3, "sync.iotap"), NULL)) {
		ok(0, "report of the rewrite + fsync trace");
		return;
	}
	for (i = 0; i < rep.nphases; i++)
		if (rep.phases[i].fsyncs)
			at = i;
	ok(at < rep.nphases && !strncmp(rep.phases[at].name, "rewrite", 7),
	   "the closing fsync is in the rewrite phase (%s)",
	   at < rep.nphases ? rep.phases[at].name : "none");
	iotap_report_release(&rep);
}

/* A trace of one phase: the total has the phase's CPU and device figures. */
static void test_one_phase_total(void)
{
	static const char script[] =
		"w1 seqwrite ops=1000 rate=100 bs=1048576 lat=5000 threads=1\n";
	struct dev_fig pd, td;
	struct iotap_report rep;
	double pc, tc;

	ok(synth_write(tpath(1, "one.iotap"), script, SYNTH_SAMPLES, NULL, 0) == 1,
	   "one-phase trace written");
	if (iotap_report_build(&rep, tpath(1, "one.iotap"), NULL)) {
		ok(0, "report of the one-phase trace");
		return;
	}
	ok(rep.nphases == 1 && fig_cpu_pct(&rep.phases[0], &pc) &&
	   fig_device(&rep.phases[0], &pd), "the phase has cpu%% and device figures");
	ok(fig_cpu_pct(&rep.total, &tc) && near(tc, pc, 0.01),
	   "the total has the phase's cpu%% too");
	ok(fig_device(&rep.total, &td) && near(td.wr_mbps, pd.wr_mbps, 0.01),
	   "the total has the phase's device MB/s too");
	iotap_report_release(&rep);
}

/* Threads running while iotap_analysis_trace_open() holds @path open. */
static int threads_open(const char *path)
{
	struct iotap_trace_reader *r;
	struct iotap_analysis_err err;
	int n;

	if (iotap_analysis_trace_open(path, 0, &r, &err))
		return -1;
	n = task_count();
	iotap_trace_reader_close(r);
	return n;
}

/*
 * iotap_analysis_threads_auto(): two decoding threads for a trace of 8 MiB or
 * more on two CPUs or more, one below that, with it off, or where
 * IOTAP_READ_THREADS says (the trace here: a small one, then the same with
 * 8 MiB of damage after it, which counts in the file's size).
 */
static void test_threads_auto(void)
{
	static const char script[] = "w1 seqwrite ops=100 rate=100 bs=4096 lat=50 threads=1\n";
	const char *path = tpath(0, "auto.iotap");
	int base = task_count(), small, big, off, env, cpus = 1;
	cpu_set_t set;
	struct stat st;

	if (!sched_getaffinity(0, sizeof(set), &set))
		cpus = CPU_COUNT(&set);
	unsetenv("IOTAP_READ_THREADS");
	if (!ok(synth_write(path, script, 0, NULL, 0) == 1, "auto-threads trace written"))
		return;
	iotap_analysis_threads_auto(1);
	small = threads_open(path);
	if (stat(path, &st) || truncate(path, st.st_size + (off_t)IOTAP_ANALYSIS_AUTO_BYTES)) {
		ok(0, "the trace grown past %llu bytes", (unsigned long long)IOTAP_ANALYSIS_AUTO_BYTES);
		return;
	}
	big = threads_open(path);
	setenv("IOTAP_READ_THREADS", "1", 1);
	env = threads_open(path);
	unsetenv("IOTAP_READ_THREADS");
	iotap_analysis_threads_auto(0);
	off = threads_open(path);
	ok(small == base && big == base + (cpus >= 2) && env == base && off == base,
	   "decoding threads started (%d CPUs): small trace %d, 8 MiB %d, IOTAP_READ_THREADS=1 %d, "
	   "auto off %d", cpus, small - base, big - base, env - base, off - base);
}

/* Phases begun by markers, none closing the last (as with iotap mark). */
static void test_open_last_phase(void)
{
	static const char script[] =
		"a seqwrite ops=1000 rate=100 bs=65536 lat=500 cpu=20\n"
		"b seqread ops=1000 rate=100 bs=65536 lat=500 cpu=20 file=2\n";
	struct iotap_report rep;
	struct cpu_fig cf;
	double cpu;

	ok(synth_write(tpath(2, "open.iotap"), script, SYNTH_SAMPLES | SYNTH_NO_END, NULL, 0) == 2,
	   "trace without an END marker written");
	if (iotap_report_build(&rep, tpath(2, "open.iotap"), NULL)) {
		ok(0, "report of the trace without an END marker");
		return;
	}
	ok(rep.nphases == 2 && fig_cpu_pct(&rep.phases[0], &cpu) && near(cpu, 20, 0.01),
	   "the first phase has its markers' CPU, 20%%");
	fig_cpu(&rep.phases[rep.nphases - 1], &cf);
	ok(!cf.has_mark && cf.has_sample,
	   "the last phase has no marker CPU (it was a false 0%%): the samples' figure instead");
	iotap_report_release(&rep);
}

static void test_percentiles(void)
{
	static const char script[] = "p seqread ops=10000 rate=10000 bs=4096 lat=100 spread=200\n";
	static const double qs[] = { 0.5, 0.9, 0.99, 0.999 };
	struct iotap_report rep;
	const struct iotap_hist *h;
	unsigned int i;

	synth_write(tpath(0, "pct.iotap"), script, 0, NULL, 0);
	if (iotap_report_build(&rep, tpath(0, "pct.iotap"), NULL)) {
		ok(0, "report of the percentile trace");
		return;
	}
	h = rep.phases[0].lat[IOTAP_OP_READ];
	ok(h && h->n == 10000, "10000 read latencies");
	ok(near((double)h->sum / h->n / 1e3, 199.9, 1e-9), "mean 199.9 us exactly (%.4f)",
	   (double)h->sum / h->n / 1e3);
	for (i = 0; i < 4; i++) {
		double want = spread_q(100, 200, qs[i]), got = iotap_hist_quantile(h, qs[i]) / 1e3;

		ok(near(got, want, IOTAP_HIST_REL_ERROR), "p%g %.3f us within 1/64 of %.3f us",
		   qs[i] * 100, got, want);
	}
	ok(near(h->max / 1e3, 299.8, 1e-9), "max 299.8 us exactly");
	iotap_report_release(&rep);
}

static void test_flags(void)
{
	static const char script[] =
		"slow seqwrite ops=20000 rate=2000 bs=65536 lat=100 slow=8 at=0.5\n"
		"steady seqwrite ops=20000 rate=2000 bs=65536 lat=100 jitter=30 file=2\n"
		"outl seqread ops=5000 rate=1000 bs=4096 lat=100 outlier=50000 every=500 file=3\n"
		"one seqread ops=5000 rate=1000 bs=4096 lat=100 outlier=50000 every=5000 file=4\n";
	struct iotap_report rep;

	synth_write(tpath(0, "flags.iotap"), script, 0, NULL, 0);
	if (iotap_report_build(&rep, tpath(0, "flags.iotap"), NULL)) {
		ok(0, "report of the flags trace");
		return;
	}
	ok(rep.nphases == 4, "4 phases");
	if (rep.nphases != 4)
		goto out;
	ok(has_flag(&rep.flags[0], "throughput-change"),
	   "an 8x slowdown inside a phase is flagged: %s",
	   rep.flags[0].n ? rep.flags[0].text[0] : "(none)");
	{
		const char *fell = rep.flags[0].n ? strstr(rep.flags[0].text[0], "fell ") : NULL;
		double x = fell ? strtod(fell + 5, NULL) : 0;

		ok(x >= 7.5 && x <= 8.5, "... as a fall of about 8x (%.1f)", x);
	}
	ok(!has_flag(&rep.flags[1], "throughput-change"), "a steady phase is not flagged");
	ok(has_flag(&rep.flags[2], "latency-outlier"),
	   "max 500x p99, ten such ops taking 10%% of the phase: flagged");
	ok(!has_flag(&rep.flags[3], "latency-outlier"),
	   "one such op, 1%% of the phase, explains nothing: not flagged");
	ok(!has_flag(&rep.flags[1], "latency-outlier"), "jitter is not an outlier");
out:
	iotap_report_release(&rep);
}

/* bonnie++'s phases, with known boundaries and no markers */
static const char bonnie_script[] =
	"putc seqwrite ops=100000 rate=50000 bs=1 lat=5 file=1\n"
	"write seqwrite ops=40000 rate=20000 bs=8192 lat=20 file=2\n"
	"rewrite rewrite ops=20000 rate=10000 bs=8192 lat=20 file=2\n"
	"getc seqread ops=100000 rate=50000 bs=1 lat=5 file=3\n"
	"read seqread ops=40000 rate=20000 bs=8192 lat=20 file=4\n"
	"seeks randrw ops=6000 rate=3000 bs=8192 lat=100 threads=3 wpct=10 file=10 size=268435456\n"
	"seq_create create n=1024 rate=5000 lat=100\n"
	"seq_stat stat n=1024 rate=10000 lat=20\n"
	"seq_delete unlink n=1024 rate=10000 lat=30\n"
	"rand_create create n=1024 rate=5000 lat=100\n"
	"rand_stat stat n=1024 rate=10000 lat=20\n"
	"rand_delete unlink n=1024 rate=10000 lat=30\n";

static void test_auto_bonnie(void)
{
	static const char *const want[] = {
		"seq-write-1b", "seq-write-8k", "rewrite-8k", "seq-read-1b", "seq-read-8k",
		"rand-read-8k+10%w", "create", "stat", "unlink", "create#2", "stat#2", "unlink#2",
	};
	double bounds[16], worst = 0;
	struct iotap_report rep;
	unsigned int i, names_ok = 1;
	int n;

	n = synth_write(tpath(0, "bonnie.iotap"), bonnie_script, SYNTH_NO_MARKS | SYNTH_SAMPLES,
			bounds, 16);
	ok(n == 12, "bonnie-like trace without markers");
	if (iotap_report_build(&rep, tpath(0, "bonnie.iotap"), NULL)) {
		ok(0, "report of the bonnie-like trace");
		return;
	}
	ok(!strcmp(rep.phase_source, "automatic"), "phases found automatically");
	ok(rep.nphases == 12, "12 phases found (%u)", rep.nphases);
	for (i = 0; i < rep.nphases && i < 12; i++) {
		double err = fabs(fig_start_s(&rep, &rep.phases[i]) - bounds[i]);

		if (strcmp(rep.phases[i].name, want[i])) {
			names_ok = 0;
			diag("phase %u is '%s', want '%s'", i, rep.phases[i].name, want[i]);
		}
		if (err > worst)
			worst = err;
	}
	ok(names_ok, "phases named by what they do");
	ok(rep.nphases == 12 && worst < 1.0,
	   "every boundary within 1 s of the truth (worst %.4f s)", worst);
	ok(rep.nphases == 12 && worst < 0.1, "... and within one block (100 ms)");
	/*
	 * Where 1-byte and 8 KiB requests meet, to the op: the per-char phases
	 * hold their requests and nothing else, the block phases no 1-byte one
	 * (between two 8 KiB phases a boundary is still within a block).
	 */
	if (rep.nphases == 12) {
		const struct iotap_pstats *ph = rep.phases;

		ok(ph[0].wr.ops == 100000 && ph[0].wr.bytes == 100000 && !ph[0].rd.ops &&
		   ph[1].wr.ops >= 40000 - AUTO_BLOCK_OPS && ph[1].wr.bytes == ph[1].wr.ops * 8192 &&
		   ph[3].rd.ops == 100000 && ph[3].rd.bytes == 100000 && !ph[3].wr.ops &&
		   ph[4].rd.ops >= 40000 - AUTO_BLOCK_OPS && ph[4].rd.bytes == ph[4].rd.ops * 8192,
		   "per-char and block phases hold exactly their own requests (putc %" PRIu64
		   " writes, %" PRIu64 " B; write %" PRIu64 "; getc %" PRIu64 " reads, %" PRIu64
		   " B; read %" PRIu64 ")", ph[0].wr.ops, ph[0].wr.bytes, ph[1].wr.ops,
		   ph[3].rd.ops, ph[3].rd.bytes, ph[4].rd.ops);
	}
	for (i = 0; i < rep.nphases; i++)
		diag("%-20s start %.4f s (true %.4f)", rep.phases[i].name,
		     fig_start_s(&rep, &rep.phases[i]), i < 12 ? bounds[i] : -1.0);
	{
		/* the same trace with markers: auto phases hold the same ops */
		struct iotap_report mk, au;
		struct iotap_report_opts o;

		synth_write(tpath(1, "bonnie-m.iotap"), bonnie_script, SYNTH_SAMPLES, NULL, 0);
		iotap_report_opts_init(&o);
		o.auto_phases = 1;
		if (!iotap_report_build(&mk, tpath(1, "bonnie-m.iotap"), NULL)) {
			if (!iotap_report_build(&au, tpath(1, "bonnie-m.iotap"), &o)) {
				ok(au.nphases == 12 && !strcmp(au.phase_source, "automatic"),
				   "--auto-phases ignores the markers");
				ok(mk.nphases == 12 && mk.total.ops == au.total.ops,
				   "marked and automatic reports count the same ops");
				iotap_report_release(&au);
			}
			iotap_report_release(&mk);
		}
	}
	iotap_report_release(&rep);
}

static void test_gap(void)
{
	static const char script[] =
		"a seqwrite ops=20000 rate=10000 bs=8192 lat=20\n"
		"pause idle dur=3\n"
		"b seqwrite ops=20000 rate=10000 bs=8192 lat=20\n"
		"short idle dur=0.3\n"
		"c seqwrite ops=20000 rate=10000 bs=8192 lat=20\n";
	struct iotap_report rep;

	synth_write(tpath(0, "gap.iotap"), script, SYNTH_NO_MARKS, NULL, 0);
	if (iotap_report_build(&rep, tpath(0, "gap.iotap"), NULL)) {
		ok(0, "report of the gap trace");
		return;
	}
	ok(rep.nphases == 2, "a 3 s idle gap splits alike phases, a 0.3 s one does not (%u)",
	   rep.nphases);
	if (rep.nphases == 2) {
		ok(!strcmp(rep.phases[1].name, "seq-write-8k#2"), "the second is seq-write-8k#2");
		ok(near(pstats_duration_s(&rep.phases[0]), 2.0, 0.001),
		   "the first lasts 2 s (%.4f)", pstats_duration_s(&rep.phases[0]));
	}
	iotap_report_release(&rep);
}

static void test_plan(void)
{
	struct iotap_report mk, plain, mapped;
	struct iotap_report_opts o;
	struct iotap_phase_plan plan;
	unsigned int i, same = 1;

	synth_write(tpath(1, "plan-m.iotap"), bonnie_script, 0, NULL, 0);
	synth_write(tpath(2, "plan-n.iotap"), bonnie_script, SYNTH_NO_MARKS, NULL, 0);
	if (iotap_report_build(&mk, tpath(1, "plan-m.iotap"), NULL))
		return;
	ok(!iotap_report_plan(&mk, &plan) && plan.n == 12, "a plan of 12 phases");
	iotap_report_opts_init(&o);
	o.plan = &plan;
	if (!iotap_report_build(&mapped, tpath(2, "plan-n.iotap"), &o)) {
		ok(mapped.nphases == 12 && !strcmp(mapped.phase_source, "phases-from"),
		   "--phases-from gives the other trace's 12 phases");
		for (i = 0; i < mapped.nphases && i < mk.nphases; i++)
			if (strcmp(mapped.phases[i].name, mk.phases[i].name) ||
			    mapped.phases[i].ops != mk.phases[i].ops)
				same = 0;
		ok(same, "with the same names and op counts");
		iotap_report_release(&mapped);
	}
	if (!iotap_report_build(&plain, tpath(2, "plan-n.iotap"), NULL)) {
		ok(iotap_report_find_phase(&plain, "create#2") == 9 &&
			   iotap_report_find_phase(&plain, "nope") < 0,
		   "phases found by name");
		iotap_report_release(&plain);
	}
	ok(iotap_report_find_phase(&mk, "seq_create") == 6, "marker phases found by name");
	iotap_phase_plan_release(&plan);
	iotap_report_release(&mk);
}

static void test_compare_self(void)
{
	struct iotap_cmp_group g[2];
	const char *paths[2];
	struct iotap_compare c;
	unsigned int k, m, all_one = 1, cells = 0;

	paths[0] = tpath(0, "golden.iotap");
	paths[1] = tpath(0, "golden.iotap");
	memset(g, 0, sizeof(g));
	g[0].label = "a";
	g[0].n = 1;
	g[0].paths = &paths[0];
	g[1].label = "b";
	g[1].n = 1;
	g[1].paths = &paths[1];
	if (iotap_compare_build(&c, g, 2, 0)) {
		ok(0, "compare of a trace with itself");
		return;
	}
	ok(c.nphases == 4, "3 phases and the total matched (%u)", c.nphases);
	for (k = 0; k < c.nphases; k++) {
		for (m = 0; m < compare_nmetrics(); m++) {
			struct cmp_cell cell;
			char buf[32];

			if (!compare_metric_used(&c, k, m))
				continue;
			compare_cell(&c, k, 1, m, &cell);
			snprintf(buf, sizeof(buf), "%.3f", cell.ratio);
			cells++;
			if (strcmp(buf, "1.000")) {
				all_one = 0;
				diag("%s %s ratio %s", c.phase_names[k], compare_metric(m)->key, buf);
			}
		}
	}
	ok(all_one && cells > 20, "every ratio is 1.000 (%u figures)", cells);
	iotap_compare_release(&c);
	/* repeats: the same trace twice under one label has sd 0 */
	{
		struct iotap_cmp_group one = { .label = "x", .n = 2, .paths = paths };
		struct cmp_cell cell;

		if (!iotap_compare_build(&c, &one, 1, 0)) {
			compare_cell(&c, 0, 0, 3, &cell);
			ok(cell.n == 2 && cell.sd == 0 && near(cell.mean, 104.8576, 1e-9),
			   "two repeats: mean 104.8576, sd 0");
			iotap_compare_release(&c);
		}
	}
}

static void test_json(void)
{
	static const char *const phase_keys[] = {
		"name",		  "index",  "start_s", "duration_s",   "ops",
		"ops_per_s",	  "read",   "write",   "seeks",	       "seeks_per_s",
		"sequential_pct", "meta",   "fsyncs",  "fsyncs_per_s", "latency_us",
		"cpu_pct",	  "device", "flags",
	};
	static const char *const trace_keys[] = {
		"path", "format_version", "source", "capture_mode", "start_realtime", "duration_s",
		"records", "lost_records",
	};
	struct iotap_report rep;
	json_object *root, *o;
	FILE *f;
	unsigned int i, good = 1;

	if (iotap_report_build(&rep, tpath(0, "golden.iotap"), NULL))
		return;
	f = fopen(tpath(3, "out.json"), "w");
	iotap_report_print_json(&rep, f);
	fclose(f);
	iotap_report_release(&rep);
	root = json_object_from_file(tpath(3, "out.json"));
	ok(root != NULL, "--json is valid JSON");
	if (!root)
		return;
	for (i = 0; i < sizeof(trace_keys) / sizeof(trace_keys[0]); i++)
		if (!json_object_object_get_ex(json_object_object_get(root, "trace"), trace_keys[i],
					       &o))
			good = 0;
	ok(good, "trace has every contract key");
	good = 1;
	o = json_object_array_get_idx(json_object_object_get(root, "phases"), 0);
	for (i = 0; i < sizeof(phase_keys) / sizeof(phase_keys[0]); i++)
		if (!json_object_object_get_ex(o, phase_keys[i], NULL)) {
			good = 0;
			diag("phase lacks '%s'", phase_keys[i]);
		}
	ok(good, "a phase has every contract key");
	ok(json_object_object_get_ex(root, "total", &o) &&
	   json_object_object_get_ex(json_object_object_get(o, "write"), "size_hist", NULL),
	   "total.write.size_hist");
	o = json_object_object_get(
		json_object_array_get_idx(json_object_object_get(root, "phases"), 0), "write");
	ok(!strcmp(json_object_get_string(json_object_object_get(o, "mb_per_s")), "104.858"),
	   "phases[0].write.mb_per_s is 104.858");
	json_object_put(root);
}

static void test_many_phases(void)
{
	char *script = malloc(3000 * 48), *p = script;
	struct iotap_report rep;
	int i;

	for (i = 0; i < 3000; i++)
		p += sprintf(p, "p%d seqwrite ops=10 rate=1000 bs=4096\n", i);
	synth_write(tpath(0, "many.iotap"), script, 0, NULL, 0);
	free(script);
	if (iotap_report_build(&rep, tpath(0, "many.iotap"), NULL)) {
		ok(0, "report of 3000 marked phases");
		return;
	}
	ok(rep.nphases == REPORT_PHASES_MAX - 1 &&
	   !strcmp(rep.phases[rep.nphases - 1].name, "(later phases)"),
	   "phases stop at %u, the rest in '(later phases)' (%u)", REPORT_PHASES_MAX - 1,
	   rep.nphases);
	ok(rep.total.ops == 30000 && has_flag(&rep.tflags, "too-many-phases"),
	   "every op still counted, and flagged");
	iotap_report_release(&rep);
}

/*
 * More automatic phases than AUTO_SEG_MAX at once: the look-back merges
 * them in the middle of the trace, and the shells it frees hold the next
 * ones (phase_auto.c's slabs). Every op must stay counted once.
 */
static void test_many_auto_phases(void)
{
	char *script = malloc(800 * 64), *p = script;
	struct iotap_report rep;
	uint64_t sum = 0, prev = 0;
	unsigned int i, ordered = 1;

	for (i = 0; i < 800; i++)
		p += sprintf(p, i % 2 ? "r%u seqread ops=1024 rate=100000 bs=1048576\n" :
					"w%u seqwrite ops=1024 rate=100000 bs=4096\n", i);
	synth_write(tpath(0, "many-auto.iotap"), script, SYNTH_NO_MARKS, NULL, 0);
	free(script);
	if (iotap_report_build(&rep, tpath(0, "many-auto.iotap"), NULL)) {
		ok(0, "report of 800 unmarked phases");
		return;
	}
	for (i = 0; i < rep.nphases; i++) {
		sum += rep.phases[i].ops;
		ordered &= !i || rep.phases[i].first_op > prev;
		prev = rep.phases[i].first_op;
	}
	ok(rep.total.ops == 800 * 1024 && sum == rep.total.ops && ordered &&
	   rep.nphases > 1 && rep.nphases <= AUTO_SEG_MAX,
	   "800 alternating unmarked phases: %u phases in order, %" PRIu64 " of %u ops counted",
	   rep.nphases, sum, 800 * 1024);
	iotap_report_release(&rep);
}

static void test_empty(void)
{
	struct iotap_report rep;

	synth_write(tpath(0, "empty.iotap"), "", 0, NULL, 0);
	ok(!iotap_report_build(&rep, tpath(0, "empty.iotap"), NULL) && rep.nphases == 0 && !rep.total.ops,
	   "a trace without ops reports no phases and no ops");
	iotap_report_release(&rep);
}

/*
 * One report over several hosts' traces (fleet.c): phases matched by name,
 * per host the host's own pstats, all hosts the sums over the union of
 * the spans on the wall clock (the second host started 10 s later by its
 * realtime base), percentiles of the ops together; a host with no op
 * widens nothing.
 */
static void test_fleet(void)
{
	static const char sa[] = "w seqwrite ops=1000 rate=1000 bs=65536 lat=100\n"
				 "r seqread ops=500 rate=1000 bs=65536 lat=100\n";
	static const char sb[] = "w seqwrite ops=1000 rate=1000 bs=65536 lat=1000\n"
				 "x stat n=100 rate=1000\n";
	const char *paths[3] = { tpath(0, "web.iotap"), tpath(1, "db.iotap"),
				 tpath(2, "none.iotap") };
	const uint64_t base = synth_real_base_ns;
	const struct iotap_hist *h;
	const struct iotap_pstats *w, *t;
	struct iotap_report ra, rb;
	struct iotap_fleet fl;
	double span;

	synth_write(paths[0], sa, 0, NULL, 0);
	synth_real_base_ns = base + 10000000000ull;
	synth_write(paths[1], sb, 0, NULL, 0);
	synth_write(paths[2], "", 0, NULL, 0);
	synth_real_base_ns = base;
	if (iotap_report_build(&ra, paths[0], NULL) || iotap_report_build(&rb, paths[1], NULL) ||
	    iotap_fleet_build(&fl, paths, 3, NULL)) {
		ok(0, "fleet of three synthetic traces built");
		return;
	}
	ok(fl.nphases == 3 && !strcmp(fl.names[0], "w") && !strcmp(fl.names[1], "x") &&
	   !strcmp(fl.names[2], "r"), "phases matched by name: w, then x after w, then r");
	ok(fl.hosts[0].by_file && !strcmp(fl.hosts[0].label, "web.iotap") &&
	   !strcmp(fl.hosts[1].label, "db.iotap"), "one host name: told apart by file name");
	ok(fleet_phase(&fl, 1, 0) == NULL && fleet_phase(&fl, 2, 1) == NULL &&
	   fleet_phase(&fl, 0, 1)->ops == rb.phases[0].ops,
	   "a host without the phase has none; with it, its own");
	w = &fl.all[0];
	t = &fl.all[fl.nphases];
	ok(w->ops == ra.phases[0].ops + rb.phases[0].ops && w->wr.bytes == 2000ull * 65536 &&
	   t->ops == ra.total.ops + rb.total.ops,
	   "all hosts: ops and bytes are the sums (%" PRIu64 " ops in w)", w->ops);
	span = 10.0 + pstats_duration_s(&rb.phases[0]);
	ok(near(pstats_duration_s(w), span, 1e-6),
	   "all hosts' w lasts from host 1's start to host 2's end 10 s later: %.6f s, want %.6f",
	   pstats_duration_s(w), span);
	span = 10.0 + (double)(rb.total.t_end - ra.total.t_begin) / 1e9;
	ok(near(pstats_duration_s(t), span, 1e-6),
	   "the total's span is the union, the host with no op adds none: %.6f s, want %.6f",
	   pstats_duration_s(t), span);
	ok(near(fig_rate(w->ops, pstats_duration_s(w)), 2000 / pstats_duration_s(w), 1e-9),
	   "its rates are its sums over that span");
	h = w->lat[IOTAP_OP_WRITE];
	ok(h && h->n == 2000 && near(iotap_hist_quantile(h, 0.5) / 1e3, 100, IOTAP_HIST_REL_ERROR) &&
	   near(iotap_hist_quantile(h, 0.9) / 1e3, 1000, IOTAP_HIST_REL_ERROR),
	   "percentiles of the ops together: p50 %.1f us (100), p90 %.1f us (1000)",
	   h ? iotap_hist_quantile(h, 0.5) / 1e3 : 0, h ? iotap_hist_quantile(h, 0.9) / 1e3 : 0);
	iotap_fleet_release(&fl);
	iotap_report_release(&ra);
	iotap_report_release(&rb);
}

/* A run of 1 MiB writes with a few short ones is "1m", not its bucket's mean. */
static void test_size_label(void)
{
	struct iotap_dir_stats d;
	char buf[128];

	memset(&d, 0, sizeof(d));
	d.ops = 100;
	d.size_hist[20] = 100;		/* (512 KiB, 1 MiB] */
	d.size_top[20] = 97;
	d.size_bytes[20] = 97ull * 1048576 + 3ull * 600 * 1024;
	ok(dir_bucket_size(&d, 20) == 1048576, "mostly exact 1 MiB: the bucket is 1 MiB");
	ok(dir_typical_size(&d) == 1048576, "typical size 1 MiB");
	fig_size_summary(&d, buf, sizeof(buf));
	ok(!strcmp(buf, "1m 97.0%, 512k-1m 3.0%"), "size summary '%s': 1m and a range", buf);
	d.size_oth[20][0] = 600 * 1024;
	d.size_oth_n[20][0] = 3;
	fig_size_summary(&d, buf, sizeof(buf));
	ok(!strcmp(buf, "1m 97.0%, 600k 3.0%"), "size summary '%s': two exact sizes", buf);

	memset(&d, 0, sizeof(d));
	d.ops = 10;
	d.size_hist[13] = 10;		/* (4 KiB, 8 KiB] */
	d.size_bytes[13] = 10 * 6000;
	ok(dir_bucket_size(&d, 13) == 6000, "no exact 8 KiB: the mean, 6000");
	d.size_top[13] = 4;
	ok(dir_bucket_size(&d, 13) == 6000, "a minority of exact 8 KiB: still the mean");
	ok(dir_bucket_size(&d, 12) == 0, "an empty bucket: 0");
	/* 3000 and 4096 bytes share a bucket: each its own size and share */
	memset(&d, 0, sizeof(d));
	d.ops = 400;
	d.size_hist[12] = 200;
	d.size_top[12] = 100;
	d.size_oth[12][0] = 3000;
	d.size_oth_n[12][0] = 100;
	d.size_hist[13] = 200;
	d.size_top[13] = 200;
	fig_size_summary(&d, buf, sizeof(buf));
	ok(!strcmp(buf, "8k 50.0%, 4k 25.0%, 3000b 25.0%"), "size summary '%s'", buf);
}

/* One record into a pgsql accumulator (app_pgsql.c), the fields the test names. */
static void pg_rec(struct app_pgsql *p, uint16_t type, uint16_t op, uint32_t flags, uint64_t t,
		   uint64_t dur, uint32_t tid, uint64_t file, uint64_t file2, uint64_t len,
		   uint64_t off, const char *name)
{
	struct iotap_trace_rec r;

	memset(&r, 0, sizeof(r));
	r.type = type;
	r.op = op;
	r.flags = flags;
	r.time_ns = t;
	r.dur_ns = dur;
	r.tid = tid;
	r.file = file;
	r.file2 = file2;
	r.length = len;
	r.offset = off;
	r.name = name;
	r.name_len = name ? (uint32_t)strlen(name) : 0;
	app_pgsql_feed(p, &r);
}

/*
 * pgsql's checkpoint figures follow the checkpointer's own markers: a write
 * part cut by an empty warmup marker (written by the owner) resumes, a
 * sync part whose END the run's end wrote from another thread goes on
 * counting the checkpointer's fsyncs; pg_control's and the WAL's fsyncs
 * are not files synced. Commit syncs are the WAL fdatasyncs inside the
 * run's commit window.
 */
static void test_app_pgsql(void)
{
	enum { CK = 7, OWNER = 99, CLIENT = 8 };
	struct app_pgsql p;
	struct app_ckpt *k;
	int i;

	app_pgsql_init(&p);
	pg_rec(&p, IOTAP_REC_NAME, 0, 0, 1, 0, CK, 10, 5, 0, 0, "16384");
	pg_rec(&p, IOTAP_REC_NAME, 0, 0, 1, 0, CK, 11, 5, 0, 0, "16385");
	pg_rec(&p, IOTAP_REC_NAME, 0, 0, 1, 0, CK, 20, 6, 0, 0, "000000010000000000000001");
	pg_rec(&p, IOTAP_REC_NAME, 0, 0, 1, 0, CK, 30, 4, 0, 0, "pg_control");
	pg_rec(&p, IOTAP_REC_PHASE, 0, IOTAP_PHASE_BEGIN, 100, 0, CK, 0, 0, 0, 0,
	       "checkpoint 1 write");
	for (i = 0; i < 3; i++)
		pg_rec(&p, IOTAP_REC_OP, IOTAP_OP_WRITE, 0, 110 + i, 1, CK, 10, 0, 8192, 0, NULL);
	pg_rec(&p, IOTAP_REC_OP, IOTAP_OP_WRITE, 0, 120, 1, CLIENT, 10, 0, 8192, 0, NULL);
	pg_rec(&p, IOTAP_REC_PHASE, 0, IOTAP_PHASE_END, 150, 0, OWNER, 0, 0, 0, 0,
	       "checkpoint 1 write");
	pg_rec(&p, IOTAP_REC_PHASE, 0, IOTAP_PHASE_BEGIN, 150, 0, OWNER, 0, 0, 0, 0, "warmup");
	pg_rec(&p, IOTAP_REC_PHASE, 0, IOTAP_PHASE_END, 150, 0, OWNER, 0, 0, 0, 0, "warmup");
	pg_rec(&p, IOTAP_REC_PHASE, 0, IOTAP_PHASE_BEGIN, 150, 0, OWNER, 0, 0, 0, 0,
	       "checkpoint 1 write");
	for (i = 0; i < 2; i++)
		pg_rec(&p, IOTAP_REC_OP, IOTAP_OP_WRITE, 0, 160 + i, 1, CK, 11, 0, 8192, 0, NULL);
	pg_rec(&p, IOTAP_REC_PHASE, 0, IOTAP_PHASE_END, 300, 0, CK, 0, 0, 0, 0,
	       "checkpoint 1 write");
	pg_rec(&p, IOTAP_REC_PHASE, 0, IOTAP_PHASE_BEGIN, 300, 0, CK, 0, 0, 0, 0,
	       "checkpoint 1 sync");
	pg_rec(&p, IOTAP_REC_OP, IOTAP_OP_FSYNC, 0, 310, 50, CK, 10, 0, 0, 0, NULL);
	pg_rec(&p, IOTAP_REC_OP, IOTAP_OP_FSYNC, IOTAP_OPF_DATASYNC, 370, 5, CK, 20, 0, 0, 0, NULL);
	pg_rec(&p, IOTAP_REC_OP, IOTAP_OP_FSYNC, 0, 380, 9, CK, 30, 0, 0, 0, NULL);
	pg_rec(&p, IOTAP_REC_PHASE, 0, IOTAP_PHASE_END, 400, 0, OWNER, 0, 0, 0, 0,
	       "checkpoint 1 sync");
	pg_rec(&p, IOTAP_REC_OP, IOTAP_OP_FSYNC, 0, 410, 70, CK, 11, 0, 0, 0, NULL);
	/* the commit window: one fdatasync inside, one before, one after */
	pg_rec(&p, IOTAP_REC_OP, IOTAP_OP_FSYNC, IOTAP_OPF_DATASYNC, 900, 3, CLIENT, 20, 0, 0, 0,
	       NULL);
	pg_rec(&p, IOTAP_REC_APP, IOTAP_APP_SPAN, IOTAP_APPF_BEGIN, 1000, 0, OWNER, 0, 0, 0, 1000,
	       "commit");
	pg_rec(&p, IOTAP_REC_OP, IOTAP_OP_FSYNC, IOTAP_OPF_DATASYNC, 1100, 4000, CLIENT, 20, 0, 0,
	       0, NULL);
	pg_rec(&p, IOTAP_REC_APP, IOTAP_APP_SPAN, 0, 6000, 4990, OWNER, 0, 0, 0, 1000, "commit");
	pg_rec(&p, IOTAP_REC_OP, IOTAP_OP_FSYNC, IOTAP_OPF_DATASYNC, 6100, 3, CLIENT, 20, 0, 0, 0,
	       NULL);
	app_pgsql_finish(&p);
	k = p.nck ? &p.ck[0] : NULL;
	ok(p.nck == 1 && k->buffers == 5 && !k->partial,
	   "pgsql checkpoint: 5 buffers across a resumed write part, complete (%u, %" PRIu64 ")",
	   p.nck, k ? k->buffers : 0);
	ok(k && k->sync_files == 2 && k->sync_longest_ns == 70 && k->last_sync_end == 480,
	   "pgsql checkpoint: 2 files synced, the last after an END the run's end wrote "
	   "(%" PRIu64 ", longest %" PRIu64 ")", k ? k->sync_files : 0,
	   k ? k->sync_longest_ns : 0);
	ok(p.commit.n == 1 && p.commit.max == 4000, "pgsql commit syncs: the one in the window "
	   "(%" PRIu64 ")", p.commit.n);
	app_pgsql_release(&p);
}

/*
 * report --threads: the engine sees the same records in the same order
 * whatever the thread count, so the report's state is the same to the
 * byte: every phase's additive counters (stat_files and the writeback
 * count included, which no text output shows for these traces), its
 * latency histograms, the bins, the seek-map sample and the per-file map.
 */
static int pstats_same(const struct iotap_pstats *a, const struct iotap_pstats *b)
{
	size_t from = offsetof(struct iotap_pstats, ops), to = offsetof(struct iotap_pstats, lat);
	unsigned int op;

	if (strcmp(a->name, b->name) || a->t_begin != b->t_begin || a->t_end != b->t_end ||
	    a->first_op != b->first_op || a->last_end != b->last_end ||
	    a->ord_first != b->ord_first || a->blocks != b->blocks ||
	    a->ends_sync != b->ends_sync || a->gap_before != b->gap_before ||
	    memcmp((const char *)a + from, (const char *)b + from, to - from))
		return 0;
	for (op = 0; op < IOTAP_OP_MAX; op++) {
		const struct iotap_hist *x = a->lat[op], *y = b->lat[op];
		uint64_t nx = x ? x->n : 0, ny = y ? y->n : 0;

		if (nx != ny)
			return 0;
		if (nx && (x->sum != y->sum || x->min != y->min || x->max != y->max ||
			   iotap_hist_quantile(x, 0.5) != iotap_hist_quantile(y, 0.5) ||
			   iotap_hist_quantile(x, 0.99) != iotap_hist_quantile(y, 0.99) ||
			   iotap_hist_quantile(x, 0.999) != iotap_hist_quantile(y, 0.999)))
			return 0;
	}
	return 1;
}

static int report_same(const struct iotap_report *a, const struct iotap_report *b)
{
	uint64_t fa[16], fb[16], ca[16], cb[16];
	unsigned int i, na, nb;

	if (a->nphases != b->nphases || a->ops_ord != b->ops_ord || a->markers != b->markers ||
	    a->nwbfail != b->nwbfail || !pstats_same(&a->total, &b->total) ||
	    a->series.n != b->series.n || a->series.width != b->series.width ||
	    memcmp(a->series.bins, b->series.bins, a->series.n * sizeof(*a->series.bins)) ||
	    a->points.n != b->points.n ||
	    (a->points.n && memcmp(a->points.p, b->points.p, a->points.n * sizeof(*a->points.p))) ||
	    iotap_map_count(&a->files.map) != iotap_map_count(&b->files.map) ||
	    iotap_map_count(&a->names) != iotap_map_count(&b->names))
		return 0;
	for (i = 0; i < a->nphases; i++)
		if (!pstats_same(&a->phases[i], &b->phases[i]))
			return 0;
	na = seek_map_busiest(&a->files, 16, fa, ca);
	nb = seek_map_busiest(&b->files, 16, fb, cb);
	return na == nb && !memcmp(fa, fb, na * sizeof(*fa)) && !memcmp(ca, cb, na * sizeof(*ca));
}

/*
 * A trace written as a recorder writes it (chunks of 2,000 records, each
 * flush with its watermark) that splits into windows: 300 k ops of four
 * threads in flight over 50 files (reads and writes, sequential runs and
 * jumps), runs of 1-byte requests among 8 KiB ones, two idle gaps, a
 * 2-second FSYNC in flight across many windows, samples, and (@marks)
 * markers. Return: 0 or -1.
 */
static int write_windows_trace(const char *path, int marks)
{
	struct iotap_trace_writer *w;
	struct iotap_trace_rec rec;
	uint64_t rng = 11, t = 1000000000ull, ends[50] = { 0 }, i, nrec = 0;
	int ret;

	if (iotap_trace_writer_open(&w, path, NULL, 0))
		return -1;
	for (i = 0; i < 300000; i++) {
		uint64_t r = synth_rng(&rng), f = r % 50;
		int tiny = (i / 3000) % 5 == 2;

		if (i == 120000 || i == 200000)
			t += 1500000000ull;	/* an idle gap */
		t += 1000 + (r >> 8) % 20000;
		if (marks && i % 40000 == 0) {
			memset(&rec, 0, sizeof(rec));
			rec.type = IOTAP_REC_PHASE;
			rec.flags = IOTAP_PHASE_BEGIN;
			rec.time_ns = t;
			rec.name = i % 80000 ? "load" : "scan";
			iotap_trace_writer_append(w, &rec);
			nrec++;
		}
		if (i % 7000 == 3) {
			memset(&rec, 0, sizeof(rec));
			rec.type = IOTAP_REC_SAMPLE;
			rec.time_ns = t;
			iotap_trace_writer_append(w, &rec);
			nrec++;
		}
		memset(&rec, 0, sizeof(rec));
		rec.type = IOTAP_REC_OP;
		rec.time_ns = t;
		rec.tid = 100 + (uint32_t)(r % 4);
		rec.pid = 10;
		rec.file = f + 2;
		if (i == 50000) {
			rec.op = IOTAP_OP_FSYNC;
			rec.dur_ns = 2000000000ull;	/* in flight across windows */
		} else if ((r >> 12) % 9 == 0) {
			rec.op = IOTAP_OP_GETATTR;
			rec.dur_ns = 2000;
		} else {
			rec.op = (r >> 16) % 3 ? IOTAP_OP_READ : IOTAP_OP_WRITE;
			rec.length = tiny ? 1 : 8192;
			rec.offset = (r >> 20) % 11 ? ends[f] : ((r >> 24) % 1000) * 8192;
			rec.result = (int64_t)rec.length;
			rec.dur_ns = 5000 + (r >> 28) % 60000;	/* several in flight */
			ends[f] = rec.offset + rec.length;
		}
		iotap_trace_writer_append(w, &rec);
		if (++nrec % 2000 == 0)
			iotap_trace_writer_flush(w, t + 1);
	}
	ret = iotap_trace_writer_close(w);
	return ret ? -1 : 0;
}

/*
 * Windows that start where a block is full: ops only, 1 us apart, a chunk
 * every 2,048 records (8 blocks of AUTO_BLOCK_OPS), so each window after
 * the first begins with a carried block of exactly 256 ops (the block
 * plan then searches nothing before op 0).
 */
static int write_aligned_trace(const char *path)
{
	struct iotap_trace_writer *w;
	struct iotap_trace_rec rec;
	uint64_t i;

	if (iotap_trace_writer_open(&w, path, NULL, 0))
		return -1;
	memset(&rec, 0, sizeof(rec));
	rec.type = IOTAP_REC_OP;
	rec.op = IOTAP_OP_READ;
	rec.pid = 1;
	rec.tid = 7;
	rec.file = 3;
	rec.length = 4096;
	rec.result = 4096;
	for (i = 0; i < 65536; i++) {
		rec.time_ns = 1000000000ull + i * 1000;
		rec.dur_ns = 500;
		rec.offset = i * 4096;
		iotap_trace_writer_append(w, &rec);
		if (i % 2048 == 2047)
			iotap_trace_writer_flush(w, rec.time_ns + 1);
	}
	return iotap_trace_writer_close(w) ? -1 : 0;
}

/* @rep's JSON and time bins (CSV), each into a malloc'ed buffer. */
static void print_json_series(const struct iotap_report *rep, char **json, size_t *jl,
			      char **series, size_t *sl)
{
	FILE *f = open_memstream(json, jl);

	iotap_report_print_json(rep, f);
	fclose(f);
	f = open_memstream(series, sl);
	iotap_report_print_series(rep, 0, 1, f, NULL);
	fclose(f);
}

/*
 * The report read in time windows on threads (report_par.c) is the
 * one-pass report: the same state (report_same) and the same JSON and
 * time bins, at 2 to 40 windows, marked and automatic phases.
 */
static void test_windows(void)
{
	static const unsigned int wins[] = { 2, 3, 7, 40 };
	unsigned int m, k, j;

	for (m = 0; m < 3; m++) {
		const char *path = tpath(0, m == 2 ? "aligned.iotap" :
					    m ? "windows-m.iotap" : "windows.iotap");

		if (!ok((m == 2 ? write_aligned_trace(path) : write_windows_trace(path, (int)m)) == 0,
			"windows trace %s written", path))
			return;
		for (k = 0; k < 2; k++) {
			struct iotap_report_opts o;
			struct iotap_report one, many;
			char *j1 = NULL, *j2 = NULL, *s1 = NULL, *s2 = NULL;
			size_t l1, l2, sl1, sl2;

			iotap_report_opts_init(&o);
			o.threads = 1;
			o.auto_phases = (int)k;
			o.keep_names = 1;
			unsetenv("IOTAP_REPORT_WINDOWS");
			if (!ok(iotap_report_build(&one, path, &o) == 0, "one pass"))
				continue;
			print_json_series(&one, &j1, &l1, &s1, &sl1);
			for (j = 0; j < 4; j++) {
				char env[16];

				snprintf(env, sizeof(env), "%u", wins[j]);
				setenv("IOTAP_REPORT_WINDOWS", env, 1);
				o.threads = 2 + j % 3;
				if (!ok(iotap_report_build(&many, path, &o) == 0, "%u windows", wins[j]))
					continue;
				print_json_series(&many, &j2, &l2, &s2, &sl2);
				ok(many.par_windows > 1 && report_same(&one, &many) && l1 == l2 &&
				   !memcmp(j1, j2, l1) && sl1 == sl2 && !memcmp(s1, s2, sl1),
				   "%s%s: %u phases, %" PRIu64 " ops, max %" PRIu64 " in flight: the same in %u "
				   "windows on %u threads", m == 2 ? "block-aligned" : m ? "marked" : "unmarked",
				   k ? " --auto-phases" : "", one.nphases, one.ops_ord,
				   (uint64_t)one.total.max_inflight, many.par_windows, o.threads);
				free(j2);
				free(s2);
				iotap_report_release(&many);
			}
			unsetenv("IOTAP_REPORT_WINDOWS");
			free(j1);
			free(s1);
			iotap_report_release(&one);
		}
	}
}

/* @capture: a real capture (tests/data/report/capture.iotap: GETATTRs of files, names) */
static void test_threads_same(const char *capture)
{
	const char *traces[] = { tpath(2, "bonnie.iotap"), tpath(3, "bonnie-m.iotap"), capture };
	static const unsigned int nthreads[] = { 2, 3, 7 };
	unsigned int i, j, k;

	for (i = 0; i < 3; i++) {
		if (!traces[i])
			continue;
		for (k = 0; k < 2; k++) {
			struct iotap_report_opts o;
			struct iotap_report one, many;

			iotap_report_opts_init(&o);
			o.threads = 1;
			o.auto_phases = (int)k;
			o.points = 4096;	/* decimated several times over */
			o.keep_names = 1;
			if (iotap_report_build(&one, traces[i], &o)) {
				ok(0, "report of %s, one thread", traces[i]);
				continue;
			}
			for (j = 0; j < 3; j++) {
				o.threads = nthreads[j];
				if (iotap_report_build(&many, traces[i], &o)) {
					ok(0, "report of %s, %u threads", traces[i], nthreads[j]);
					continue;
				}
				ok(report_same(&one, &many),
				   "%s%s: %u phases, %" PRIu64 " ops, the same state with %u threads",
				   strrchr(traces[i], '/') + 1, k ? " --auto-phases" : "", one.nphases,
				   one.ops_ord, nthreads[j]);
				iotap_report_release(&many);
			}
			iotap_report_release(&one);
		}
	}
}

int main(int argc, char **argv)
{
	char cmd[512];

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_histogram();
	test_size_label();
	test_golden();
	test_one_phase_total();
	test_open_last_phase();
	test_closing_fsync();
	test_percentiles();
	test_flags();
	test_auto_bonnie();
	test_gap();
	test_plan();
	test_compare_self();
	test_json();
	test_many_phases();
	test_many_auto_phases();
	test_empty();
	test_fleet();
	test_app_pgsql();
	test_threads_auto();
	test_threads_same(argc > 1 ? argv[1] : NULL);
	test_windows();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		diag("could not remove %s", dir);
	return done_testing();
}
