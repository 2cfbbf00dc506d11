// SPDX-License-Identifier: MIT
/*
 * test_rw_roundtrip.c - writer -> file -> reader, through the public API
 *
 * - the header's fields and strings come back;
 * - 100 k mixed records with edge values over many chunks (explicit
 *   flushes and 1 MiB auto-closes) come back field for field, in file
 *   order as written, and merged as a stable sort by start time; again
 *   with every start in a 5 us window (ties everywhere, and a chunk's
 *   span small enough for the reader's packed sort keys; edge values
 *   take its wide keys);
 * - records of several threads appended out of order, but within the
 *   watermark rules the recorder follows, come back in exact start order
 *   with per-thread order kept and no late records, while the reader
 *   never holds more than the span between watermarks;
 * - a single writer appending in start order without watermarks gets
 *   the default watermark (its largest start) and is merged unchanged;
 * - END carries the record count and the LOST total; stats add up;
 * - -EEXIST without IOTAP_TRACE_FORCE leaves the file alone; FORCE
 *   overwrites it; an empty trace holds END only;
 * - a write error (RLIMIT_FSIZE standing in for a full disk) is returned,
 *   sticks, and leaves a file whose every chunk is whole;
 * - a file whose watermarks promise nothing (4 M records) is still merged
 *   in bounded memory: the reader releases early past its cap.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "tap.h"
#include "trace_test.h"

#define NREC 100000

static struct iotap_trace_rec recs[NREC];
static uint32_t order[NREC];

static int streq(const char *a, const char *b)
{
	if (!a || !b)
		return !a && !b;
	return !strcmp(a, b);
}

static void test_header(void)
{
	const char *path = test_path("hdr.iotap");
	struct iotap_trace_header h;
	const struct iotap_trace_header *d;
	struct iotap_trace_writer *w;
	struct iotap_trace_reader *r;
	struct iotap_trace_rec rec;
	int ret;

	iotap_trace_header_init(&h, IOTAP_SOURCE_WORKLOAD);
	h.capture_mode = IOTAP_MODE_DIRECT;
	h.mono_base_ns = 123456789;
	h.real_base_ns = UINT64_MAX;
	h.mount_opts = "ro";
	h.cmdline = "iotap run bonnie /mnt -s 4g";
	h.backing = "/srv/b";
	h.mountpoint = "/mnt";
	h.workload = "bonnie -s 4g";
	ret = iotap_trace_writer_open(&w, path, &h, 0);
	ok(ret == 0, "writer open: %d", ret);
	ret = iotap_trace_writer_close(w);
	ok(ret == 0, "close an empty trace: %d", ret);
	ret = iotap_trace_reader_open(&r, path, 0);
	ok(ret == 0, "reader open: %d", ret);
	if (ret)
		return;
	d = iotap_trace_reader_header(r);
	ok(d->version_major == 1 && d->version_minor == 0 && d->source == h.source &&
	   d->capture_mode == h.capture_mode && d->mono_base_ns == h.mono_base_ns &&
	   d->real_base_ns == h.real_base_ns && streq(d->host, h.host) &&
	   streq(d->kernel, h.kernel) && streq(d->mount_opts, h.mount_opts) &&
	   streq(d->cmdline, h.cmdline) && streq(d->backing, h.backing) &&
	   streq(d->mountpoint, h.mountpoint) && streq(d->tool, h.tool) &&
	   streq(d->workload, h.workload), "every header field and string round-trips");
	ret = iotap_trace_reader_next(r, &rec);
	ok(ret == 1 && rec.type == IOTAP_REC_END && rec.length == 0 && rec.aux == 0 &&
	   rec.time_ns == h.mono_base_ns, "an empty trace holds END only (at mono_base)");
	ok(iotap_trace_reader_next(r, &rec) == 0, "then the end");
	iotap_trace_reader_close(r);

	ret = iotap_trace_writer_open(&w, path, &h, 0);
	ok(ret == -EEXIST, "opening an existing trace without FORCE is -EEXIST (%d)", ret);
	ret = iotap_trace_reader_open(&r, path, 0);
	ok(ret == 0 && iotap_trace_reader_header(r)->mono_base_ns == 123456789,
	   "and the file is untouched");
	if (!ret)
		iotap_trace_reader_close(r);
	h.mono_base_ns = 42;
	ret = iotap_trace_writer_open(&w, path, &h, IOTAP_TRACE_FORCE);
	ok(ret == 0, "FORCE overwrites it");
	if (!ret)
		iotap_trace_writer_close(w);
	ret = iotap_trace_reader_open(&r, path, 0);
	ok(ret == 0 && iotap_trace_reader_header(r)->mono_base_ns == 42, "with the new header");
	if (!ret)
		iotap_trace_reader_close(r);
	ok(iotap_trace_writer_open(&w, test_path("no/such/dir.iotap"), &h, 0) == -ENOENT,
	   "a missing directory is -ENOENT");
}

/* stable order of recs[] by time */
static int cmp_order(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (recs[x].time_ns != recs[y].time_ns)
		return recs[x].time_ns < recs[y].time_ns ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* @span: 0, starts with edge values; else starts in [1e9, 1e9 + span). */
static void test_mixed(const char *name, uint64_t span)
{
	const char *path = test_path(name);
	struct iotap_trace_read_stats st;
	struct iotap_trace_writer *w;
	struct iotap_trace_reader *r;
	struct iotap_trace_rec rec;
	uint64_t seed = 77, lost = 0, bytype[IOTAP_REC_TYPE_MAX] = { 0 };
	uint64_t flushes = 0;
	char why[256];
	size_t i, bad;
	int ret, pass;

	for (i = 0; i < NREC; i++) {
		rec_random(&recs[i], &seed);
		if (span)
			recs[i].time_ns = 1000000000ull + rng_below(&seed, span);
		if (recs[i].type == IOTAP_REC_END)
			recs[i].type = IOTAP_REC_NOTE;	/* END is the writer's */
		if (recs[i].type == IOTAP_REC_LOST)
			lost += recs[i].length;
		bytype[recs[i].type]++;
		order[i] = (uint32_t)i;
	}
	ret = iotap_trace_writer_open(&w, path, NULL, 0);
	ok(ret == 0, "writer open");
	if (ret)
		return;
	bad = 0;
	for (i = 0; i < NREC; i++) {
		if (iotap_trace_writer_append(w, &recs[i]))
			bad++;
		/* Watermark 1: only time 0 may be released early. */
		if (rng_below(&seed, 2000) == 0) {
			iotap_trace_writer_flush(w, 1);
			flushes++;
		}
	}
	ok(!bad, "%d mixed records appended", NREC);
	ret = iotap_trace_writer_close(w);
	ok(ret == 0, "close: %d", ret);

	qsort(order, NREC, sizeof(order[0]), cmp_order);
	for (pass = 0; pass < 2; pass++) {
		unsigned int flags = pass ? 0 : IOTAP_TRACE_READ_FILE_ORDER;
		const char *what = pass ? "merged" : "file order";

		ret = iotap_trace_reader_open(&r, path, flags);
		ok(ret == 0, "reader open (%s)", what);
		if (ret)
			return;
		bad = 0;
		for (i = 0; i < NREC; i++) {
			const struct iotap_trace_rec *want = &recs[pass ? order[i] : i];

			ret = iotap_trace_reader_next(r, &rec);
			if (ret != 1 || (!bad && !rec_eq(want, &rec, why, sizeof(why)))) {
				if (!bad)
					diag("%s record %zu: ret %d: %s", what, i, ret, why);
				bad++;
				if (ret != 1)
					break;
			}
		}
		ok(!bad, "%s: every field of all %d records equal", what, NREC);
		ret = iotap_trace_reader_next(r, &rec);
		ok(ret == 1 && rec.type == IOTAP_REC_END && rec.length == NREC && rec.aux == lost,
		   "%s: END last, length %" PRIu64 " = records, aux %" PRIu64 " = LOST total",
		   what, rec.length, rec.aux);
		ok(iotap_trace_reader_next(r, &rec) == 0, "%s: then the end", what);
		iotap_trace_reader_stats(r, &st);
		ok(st.records == NREC + 1 && st.has_end && st.chunks_bad == 0 &&
		   st.bytes_skipped == 0 && st.late_records == 0 && st.lost_records == lost &&
		   st.chunks >= flushes && st.chunks > 10,
		   "%s stats: %" PRIu64 " records in %" PRIu64 " chunks, nothing skipped or late",
		   what, st.records, st.chunks);
		bad = 0;
		for (i = 1; i < IOTAP_REC_TYPE_MAX; i++)
			if (st.records_by_type[i] != bytype[i] + (i == IOTAP_REC_END))
				bad++;
		ok(!bad, "%s: records_by_type adds up", what);
		iotap_trace_reader_close(r);
	}
}

/*
 * Several threads' records appended as the recorder does: each thread's
 * records in order, threads interleaved in runs, and after each batch a
 * watermark no later than any thread's next record.
 */
static void test_watermarks(void)
{
	enum { T = 6, PER = 20000 };
	const char *path = test_path("wm.iotap");
	struct iotap_trace_read_stats st;
	struct iotap_trace_writer *w;
	struct iotap_trace_reader *r;
	struct iotap_trace_rec rec;
	uint64_t seed = 5, t[T], next_t[T], last = 0, lastseq[T];
	uint32_t done[T] = { 0 };
	size_t bad_order = 0, bad_tid = 0, n = 0;
	unsigned int k;
	int ret, first = 1;

	ret = iotap_trace_writer_open(&w, path, NULL, 0);
	ok(ret == 0, "writer open");
	if (ret)
		return;
	for (k = 0; k < T; k++) {
		t[k] = 1000000 + rng_below(&seed, 1000);
		next_t[k] = t[k];
		lastseq[k] = 0;
	}
	memset(&rec, 0, sizeof(rec));
	rec.type = IOTAP_REC_OP;
	rec.op = IOTAP_OP_READ;
	for (;;) {
		unsigned int left = 0;
		uint64_t wm = UINT64_MAX;

		/* one batch: a run of each thread, in random thread order */
		for (k = 0; k < T; k++) {
			unsigned int kk = (unsigned int)((k + rng_below(&seed, T)) % T);
			uint64_t run = rng_below(&seed, 400);

			while (run-- && done[kk] < PER) {
				rec.tid = 100 + kk;
				rec.time_ns = next_t[kk];
				rec.dur_ns = 1 + rng_below(&seed, 5000);
				rec.offset = ++done[kk];
				rec.file = kk;
				iotap_trace_writer_append(w, &rec);
				next_t[kk] += rng_below(&seed, 3) ? rng_below(&seed, 20000) : 0;
			}
		}
		for (k = 0; k < T; k++) {
			if (done[k] < PER) {
				left++;
				if (next_t[k] < wm)
					wm = next_t[k];
			}
		}
		if (!left)
			break;
		/*
		 * Flush with the promise after some batches; auto-closed
		 * chunks in between carry the last promise. The first batch
		 * always flushes: before any watermark the writer assumes
		 * start order.
		 */
		if (first || rng_below(&seed, 4) == 0)
			iotap_trace_writer_flush(w, wm);
		first = 0;
	}
	ok(iotap_trace_writer_close(w) == 0,
	   "%d threads x %d records written in watermarked batches", T, PER);

	ret = iotap_trace_reader_open(&r, path, 0);
	ok(ret == 0, "reader open");
	if (ret)
		return;
	while (iotap_trace_reader_next(r, &rec) == 1) {
		if (rec.type != IOTAP_REC_OP)
			continue;
		n++;
		if (rec.time_ns < last)
			bad_order++;
		last = rec.time_ns;
		k = rec.tid - 100;
		if (k >= T || rec.offset != lastseq[k] + 1)
			bad_tid++;
		else
			lastseq[k] = rec.offset;
	}
	iotap_trace_reader_stats(r, &st);
	iotap_trace_reader_close(r);
	ok(n == T * PER, "all %zu records delivered", n);
	ok(!bad_order && st.late_records == 0,
	   "merged in exact start order (%zu out of order, %" PRIu64 " late)",
	   bad_order, st.late_records);
	ok(!bad_tid, "each thread's records in its own order (%zu wrong)", bad_tid);
}

static void test_default_watermark(void)
{
	const char *path = test_path("ordered.iotap");
	struct iotap_trace_read_stats st;
	struct iotap_trace_writer *w;
	struct iotap_trace_reader *r;
	struct iotap_trace_rec rec;
	uint64_t i, bad = 0, n = 0;
	int ret;

	ret = iotap_trace_writer_open(&w, path, NULL, 0);
	ok(ret == 0, "writer open");
	if (ret)
		return;
	memset(&rec, 0, sizeof(rec));
	rec.type = IOTAP_REC_OP;
	rec.op = IOTAP_OP_WRITE;
	for (i = 0; i < 300000; i++) {
		rec.time_ns = 1000 + i / 3;	/* ties across chunk boundaries */
		rec.offset = i;
		iotap_trace_writer_append(w, &rec);
		if (i % 50000 == 0)
			iotap_trace_writer_flush(w, 0);
	}
	ok(iotap_trace_writer_close(w) == 0, "300 k records in start order, no watermarks given");
	ret = iotap_trace_reader_open(&r, path, 0);
	ok(ret == 0, "reader open");
	if (ret)
		return;
	while (iotap_trace_reader_next(r, &rec) == 1)
		if (rec.type == IOTAP_REC_OP && rec.offset != n++)
			bad++;
	iotap_trace_reader_stats(r, &st);
	iotap_trace_reader_close(r);
	ok(n == 300000 && !bad && st.late_records == 0 && st.chunks > 6,
	   "merged = file order, ties kept (%" PRIu64 " wrong, %" PRIu64 " chunks)",
	   bad, st.chunks);
}

static void test_write_error(void)
{
	const char *path = test_path("full.iotap");
	struct iotap_trace_read_stats st;
	struct iotap_trace_writer *w;
	struct iotap_trace_reader *r;
	struct iotap_trace_rec rec;
	struct rlimit old, lim;
	uint64_t seed = 3, i, n = 0, bytes = 0;
	int ret, first = 0, after = 0;

	signal(SIGXFSZ, SIG_IGN);
	ret = iotap_trace_writer_open(&w, path, NULL, 0);
	ok(ret == 0, "writer open");
	if (ret)
		return;
	getrlimit(RLIMIT_FSIZE, &old);
	lim = old;
	lim.rlim_cur = 400000;		/* the "disk" fills in the middle of a chunk */
	setrlimit(RLIMIT_FSIZE, &lim);
	memset(&rec, 0, sizeof(rec));
	rec.type = IOTAP_REC_OP;
	rec.op = IOTAP_OP_READ;
	for (i = 0; i < 2000000; i++) {
		rec.time_ns = 1000 + i * 1000 + rng_below(&seed, 1000);
		rec.offset = rng_next(&seed);
		rec.length = rng_next(&seed) >> 40;
		ret = iotap_trace_writer_append(w, &rec);
		if (!ret && i % 5000 == 4999)
			ret = iotap_trace_writer_flush(w, 0);
		if (ret && !first) {
			first = ret;
			bytes = iotap_trace_writer_bytes(w);
		} else if (ret && ret == first) {
			after++;
		}
	}
	ok(first == -EFBIG, "the write error is returned (%d)", first);
	ok(after > 0, "and again by every chunk that cannot be written: %d times", after);
	ret = iotap_trace_writer_close(w);
	setrlimit(RLIMIT_FSIZE, &old);
	ok(ret == -EFBIG, "close returns the first error (%d)", ret);
	ret = iotap_trace_reader_open(&r, path, IOTAP_TRACE_READ_FILE_ORDER);
	ok(ret == 0, "the file still opens");
	if (ret)
		return;
	while (iotap_trace_reader_next(r, &rec) == 1)
		n += rec.type == IOTAP_REC_OP;
	iotap_trace_reader_stats(r, &st);
	iotap_trace_reader_close(r);
	ok(st.file_bytes > bytes && st.chunks > 0 && st.chunks_bad == 0 && st.tail_bytes == 0 &&
	   st.bytes_skipped == 0,
	   "it holds only whole chunks: %" PRIu64 " bytes, %" PRIu64 " chunks, no damage",
	   st.file_bytes, st.chunks);
	ok(st.has_end && n + st.lost_records == 2000000,
	   "the small LOST + END chunk still fit: %" PRIu64 " ops + %" PRIu64 " lost = 2000000",
	   n, st.lost_records);
}

static long max_rss_kb(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

static void test_no_watermarks(void)
{
	const char *path = test_path("nowm.iotap");
	struct iotap_trace_read_stats st;
	struct iotap_trace_writer *w;
	struct iotap_trace_reader *r;
	struct iotap_trace_rec rec;
	uint64_t i, n = 0, bad = 0, N = 4000000;
	long rss0, rss1;
	int ret;

	ret = iotap_trace_writer_open(&w, path, NULL, 0);
	ok(ret == 0, "writer open");
	if (ret)
		return;
	memset(&rec, 0, sizeof(rec));
	rec.type = IOTAP_REC_OP;
	rec.op = IOTAP_OP_READ;
	for (i = 0; i < N; i++) {
		rec.time_ns = 1000 + i;
		rec.offset = i;
		iotap_trace_writer_append(w, &rec);
		if (i % 100000 == 0)
			iotap_trace_writer_flush(w, 1);	/* promises nothing */
	}
	ok(iotap_trace_writer_close(w) == 0, "%" PRIu64 " records under watermark 1", N);
	rss0 = max_rss_kb();
	ret = iotap_trace_reader_open(&r, path, 0);
	if (ret)
		return;
	while (iotap_trace_reader_next(r, &rec) == 1)
		if (rec.type == IOTAP_REC_OP && rec.offset != n++)
			bad++;
	iotap_trace_reader_stats(r, &st);
	iotap_trace_reader_close(r);
	rss1 = max_rss_kb();
	/* holding them all would take 4 M x 144 bytes = 576 MB */
	ok(n == N && !bad && st.late_records == 0 && rss1 - rss0 < 450 * 1024,
	   "merged in order, peak memory grew by %ld MiB (< 450)", (rss1 - rss0) / 1024);
}

int main(void)
{
	test_header();
	test_mixed("mixed.iotap", 0);
	test_mixed("mixed-ties.iotap", 5000);
	test_watermarks();
	test_default_watermark();
	test_write_error();
	test_no_watermarks();
	return done_testing();
}
