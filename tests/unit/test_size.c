// SPDX-License-Identifier: MIT
/*
 * test_size.c - bytes per op after compression, and decode speed
 *
 * Builds synthetic traces with the single-threaded writer (zstd level 3,
 * the default) and checks the size targets of FORMAT.md:
 *   - sequential 1 MiB writes on one file by one thread, starts ~300 us
 *     apart and durations ~250 us, both with Gaussian jitter (sd 5 %) and
 *     1 % slow outliers: at most 8 bytes per op;
 *   - random 8 KiB reads over a 1 GiB file (8 KiB aligned, uniform),
 *     starts ~45 us apart, durations ~30 us, same jitter: at most 12.
 * Bytes per op counts the whole file (header, chunk headers, END).
 * Other mixes are printed for information. Then it times the reader over
 * 2 M records, merged and in file order, and prints records per CPU
 * second (and per wall second; neither fails the test: machines differ).
 */
#include <math.h>
#include <sys/stat.h>
#include <time.h>

#include "tap.h"
#include "trace_test.h"

/* Normal(0, 1) from the generator (Box-Muller). */
static double rng_gauss(uint64_t *s)
{
	double u1 = ((double)(rng_next(s) >> 11) + 1.0) / 9007199254740993.0;
	double u2 = (double)(rng_next(s) >> 11) / 9007199254740992.0;

	return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

/* @mean_ns with Gaussian jitter of @sd (fraction) and 1 % outliers x2..x5. */
static uint64_t jitter(uint64_t *s, double mean_ns, double sd)
{
	double v = mean_ns * (1.0 + sd * rng_gauss(s));

	if (rng_below(s, 100) == 0)
		v *= 2.0 + (double)rng_below(s, 4);
	return v < 1.0 ? 1 : (uint64_t)v;
}

struct pattern {
	const char *what;
	int random;		/* random offsets over 1 GiB, else sequential */
	uint64_t block;		/* bytes */
	double gap_ns;		/* mean start-to-start, ns */
	double dur_ns;		/* mean duration, ns */
	double sd;		/* jitter, fraction of the mean */
	int write_pct;		/* writes among the ops, % */
	unsigned int threads;	/* interleaved tids (and files) */
	int sync;		/* next start = previous end + gap_ns (a synchronous thread) */
};

static double measure(const struct pattern *p, uint64_t n, const char *path)
{
	struct iotap_trace_header hdr;
	struct iotap_trace_writer *w;
	struct iotap_trace_rec r;
	uint64_t seed = 1234, i, t[16], off[16], prev_dur[16] = { 0 };
	struct stat st;
	unsigned int k;

	iotap_trace_header_init(&hdr, IOTAP_SOURCE_SYNTHETIC);
	if (iotap_trace_writer_open(&w, path, &hdr, IOTAP_TRACE_FORCE))
		return -1;
	for (k = 0; k < p->threads; k++) {
		t[k] = 1000000000ull + k * 7919;
		off[k] = 0;
	}
	memset(&r, 0, sizeof(r));
	r.type = IOTAP_REC_OP;
	r.pid = 4242;
	r.uid = 1000;
	r.gid = 1000;
	r.flags = IOTAP_OPF_DIRECT;
	for (i = 0; i < n; i++) {
		k = (unsigned int)(i % p->threads);
		r.tid = 4242 + k;
		r.file = 131073 + k;
		r.fh = 1 + k;
		r.op = (int)rng_below(&seed, 100) < p->write_pct ? IOTAP_OP_WRITE : IOTAP_OP_READ;
		t[k] += (p->sync ? prev_dur[k] : 0) + jitter(&seed, p->gap_ns, p->sd);
		r.time_ns = t[k];
		r.dur_ns = jitter(&seed, p->dur_ns, p->sd);
		prev_dur[k] = r.dur_ns;
		if (p->random) {
			r.offset = rng_below(&seed, (1ull << 30) / p->block) * p->block;
		} else {
			r.offset = off[k];
			off[k] += p->block;
		}
		r.length = p->block;
		r.result = (int64_t)p->block;
		if (iotap_trace_writer_append(w, &r))
			return -1;
	}
	if (iotap_trace_writer_close(w) || stat(path, &st))
		return -1;
	return (double)st.st_size / (double)n;
}

static double now_s(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void bench(const char *path, unsigned int flags, const char *what)
{
	struct iotap_trace_reader *rd;
	struct iotap_trace_rec r;
	uint64_t n = 0, sum = 0;
	double t0, t1, c0, c1;
	int ret;

	t0 = now_s(CLOCK_MONOTONIC);
	c0 = now_s(CLOCK_PROCESS_CPUTIME_ID);
	if (iotap_trace_reader_open(&rd, path, flags)) {
		ok(0, "open %s", path);
		return;
	}
	while ((ret = iotap_trace_reader_next(rd, &r)) == 1) {
		n++;
		sum += r.offset;
	}
	iotap_trace_reader_close(rd);
	t1 = now_s(CLOCK_MONOTONIC);
	c1 = now_s(CLOCK_PROCESS_CPUTIME_ID);
	diag("decode %s: %" PRIu64 " records, %.3f s CPU = %.1f M records/s per core "
	     "(%.3f s wall = %.1f M/s; checksum %" PRIx64 ")",
	     what, n, c1 - c0, (double)n / (c1 - c0) / 1e6, t1 - t0,
	     (double)n / (t1 - t0) / 1e6, sum);
	ok(ret == 0 && n > 0, "reader decoded %s to the end", what);
}

int main(void)
{
	static const struct pattern seq = {
		"sequential 1 MiB writes, 1 thread", 0, 1 << 20, 300e3, 250e3, 0.05, 100, 1
	};
	static const struct pattern rnd = {
		"random 8 KiB reads over 1 GiB, 1 thread", 1, 8192, 45e3, 30e3, 0.05, 0, 1
	};
	static const struct pattern info[] = {
		{ "sequential 1 MiB writes, jitter sd 10 %",
		  0, 1 << 20, 300e3, 250e3, 0.10, 100, 1 },
		{ "sequential 1 MiB writes, jitter sd 1 %",
		  0, 1 << 20, 300e3, 250e3, 0.01, 100, 1 },
		{ "sequential 4 KiB reads, 4 threads", 0, 4096, 20e3, 8e3, 0.05, 0, 4 },
		{ "random 8 KiB 70/30 read/write, 1 thread", 1, 8192, 45e3, 30e3, 0.05, 30, 1 },
		{ "random 8 KiB reads, jitter sd 10 %", 1, 8192, 45e3, 30e3, 0.10, 0, 1 },
		{ "random 8 KiB reads, 8 threads", 1, 8192, 45e3, 30e3, 0.05, 0, 8 },
		{ "sequential 1 MiB writes, synchronous (start = end + 40 us)",
		  0, 1 << 20, 40e3, 250e3, 0.05, 100, 1, 1 },
		{ "random 8 KiB reads, synchronous (start = end + 15 us)",
		  1, 8192, 15e3, 30e3, 0.05, 0, 1, 1 },
	};
	const char *path = test_path("size.iotap");
	double b;
	unsigned int i;

	b = measure(&seq, 500000, path);
	diag("%s: %.2f bytes/op", seq.what, b);
	ok(b > 0 && b <= 8.0, "%s: %.2f bytes/op <= 8", seq.what, b);

	b = measure(&rnd, 500000, path);
	diag("%s: %.2f bytes/op", rnd.what, b);
	ok(b > 0 && b <= 12.0, "%s: %.2f bytes/op <= 12", rnd.what, b);

	for (i = 0; i < sizeof(info) / sizeof(info[0]); i++) {
		b = measure(&info[i], 300000, path);
		diag("%s: %.2f bytes/op (for information)", info[i].what, b);
	}

	b = measure(&rnd, 2000000, path);
	ok(b > 0, "2 M random records written (%.2f bytes/op)", b);
	bench(path, 0, "merged");
	bench(path, IOTAP_TRACE_READ_FILE_ORDER, "file order");
	return done_testing();
}
