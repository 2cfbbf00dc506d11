// SPDX-License-Identifier: MIT
/*
 * test_reader_threads.c - decoding on a thread pool changes nothing
 *
 * iotap_trace_reader_set_threads(r, n): for n = 1, 2, 3 and 7, merged and
 * in file order, the same records come back field for field in the same
 * order, and the statistics (chunks, damage, its first offset, late and
 * early records, times) are identical, on
 *   - 200 k random records with edge values (unsorted chunks: the sort
 *     path), two damaged regions (a bad payload and bytes where no chunk
 *     starts) and a torn tail;
 *   - 300 k records of 6 threads in watermarked runs (sorted chunks);
 * set_threads refuses a bad IOTAP_READ_THREADS and a call after the
 * first next(); a record read into a struct full of junk has a zero sample
 * unless it is a SAMPLE.
 *
 * The pool itself: set_threads(n) starts n - 1 threads (counted in
 * /proc/self/task) that check and decompress the next chunks while the
 * reading thread decodes (and decompresses a chunk itself when none is
 * ready), and close ends them; on 3,000 chunks of 40 records (a hand-off
 * every few microseconds, each side often finding nothing to do and going
 * to sleep) 2, 3 and 7 threads read the same records over and over, and a
 * reader closed after any number of records with jobs queued and in
 * flight stops at once. A lost wakeup shows as a hang, which an alarm
 * turns into a failure. By default (set_threads(0)) one thread, or
 * IOTAP_READ_THREADS. The progress callback counts every chunk taken and
 * ends once at the file's size, whatever the threads.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"
#include "trace_test.h"
#include "trace_i.h"

#define NREC 200000

struct ref {
	struct iotap_trace_rec *recs;
	size_t n, cap;
	struct iotap_trace_read_stats st;
};

static void ref_release(struct ref *f)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		free((char *)f->recs[i].name);
	free(f->recs);
	memset(f, 0, sizeof(*f));
}

/* Read @path with @threads decoders into @out (a reference), or compare with @ref. */
static int read_all(const char *path, unsigned int flags, unsigned int threads, struct ref *out,
		    const struct ref *ref, char *why, size_t whylen)
{
	struct iotap_trace_reader *r;
	struct iotap_trace_rec rec;
	struct iotap_trace_read_stats st;
	size_t n = 0;
	int ret;

	why[0] = '\0';
	if (iotap_trace_reader_open(&r, path, flags))
		return snprintf(why, whylen, "open failed"), 0;
	ret = iotap_trace_reader_set_threads(r, threads);
	if (ret) {
		iotap_trace_reader_close(r);
		return snprintf(why, whylen, "set_threads: %d", ret), 0;
	}
	while ((ret = iotap_trace_reader_next(r, &rec)) == 1) {
		if (out) {
			if (out->n == out->cap) {
				out->cap = out->cap ? 2 * out->cap : 4096;
				out->recs = realloc(out->recs, out->cap * sizeof(*out->recs));
				if (!out->recs)
					exit(99);
			}
			out->recs[out->n] = rec;
			if (rec.name)
				out->recs[out->n].name = strndup(rec.name, rec.name_len);
			out->n++;
		} else if (n >= ref->n || !rec_eq(&ref->recs[n], &rec, why, whylen)) {
			if (n >= ref->n)
				snprintf(why, whylen, "more records than the reference");
			else
				snprintf(why + strlen(why), whylen - strlen(why), " (record %zu)", n);
			iotap_trace_reader_close(r);
			return 0;
		}
		n++;
	}
	iotap_trace_reader_stats(r, &st);
	iotap_trace_reader_close(r);
	if (ret < 0)
		return snprintf(why, whylen, "next: %d", ret), 0;
	if (out) {
		out->st = st;
		return 1;
	}
	if (n != ref->n)
		return snprintf(why, whylen, "%zu records, reference %zu", n, ref->n), 0;
	if (memcmp(&st, &ref->st, sizeof(st)))
		return snprintf(why, whylen, "stats differ (chunks %" PRIu64 "/%" PRIu64
				", bad %" PRIu64 "/%" PRIu64 ", first bad %" PRIu64 "/%" PRIu64 ")",
				st.chunks, ref->st.chunks, st.chunks_bad, ref->st.chunks_bad,
				st.first_bad_offset, ref->st.first_bad_offset), 0;
	return 1;
}

static void compare_threads(const char *path, const char *what, int damaged)
{
	static const unsigned int threads[] = { 2, 3, 7 };
	unsigned int pass, i;
	char why[256];

	for (pass = 0; pass < 2; pass++) {
		unsigned int flags = pass ? IOTAP_TRACE_READ_FILE_ORDER : 0;
		const char *order = pass ? "file order" : "merged";
		struct ref ref = { 0 };
		int got = read_all(path, flags, 1, &ref, NULL, why, sizeof(why));

		if (!ok(got && ref.n > 100000 && ref.st.chunks > 4 &&
			(!damaged || (ref.st.chunks_bad >= 2 && ref.st.tail_bytes)),
			"%s, %s: one thread reads %zu records (%" PRIu64 " chunks, %" PRIu64
			" bad, %" PRIu64 " tail bytes) %s", what, order, ref.n, ref.st.chunks,
			ref.st.chunks_bad, ref.st.tail_bytes, why))
			continue;
		for (i = 0; i < sizeof(threads) / sizeof(threads[0]); i++)
			ok(read_all(path, flags, threads[i], NULL, &ref, why, sizeof(why)),
			   "%s, %s: %u threads give the same records and stats %s", what, order,
			   threads[i], why);
		ref_release(&ref);
	}
}

static void damage(const char *path, off_t at, size_t len)
{
	char junk[4096];
	int fd = open(path, O_WRONLY);

	memset(junk, 0xa5, sizeof(junk));
	if (fd < 0 || len > sizeof(junk) || pwrite(fd, junk, len, at) != (ssize_t)len)
		exit(99);
	close(fd);
}

static void test_random(void)
{
	const char *path = test_path("random.iotap");
	struct iotap_trace_writer *w;
	struct iotap_trace_rec rec;
	uint64_t seed = 99;
	struct stat sb;
	size_t i;
	int fd;

	if (!ok(iotap_trace_writer_open(&w, path, NULL, 0) == 0, "writer open"))
		return;
	for (i = 0; i < NREC; i++) {
		rec_random(&rec, &seed);
		if (rec.type == IOTAP_REC_END)
			rec.type = IOTAP_REC_NOTE;
		iotap_trace_writer_append(w, &rec);
		if (rng_below(&seed, 3000) == 0)
			iotap_trace_writer_flush(w, 1);
	}
	ok(iotap_trace_writer_close(w) == 0, "%d random records written", NREC);
	if (stat(path, &sb))
		return;
	damage(path, sb.st_size * 2 / 5, 64);		/* inside a payload */
	damage(path, sb.st_size * 3 / 5, 3000);		/* a chunk header and more */
	fd = open(path, O_WRONLY | O_APPEND);
	if (fd >= 0) {
		ok(write(fd, "IOTAPCK\ntorn", 12) == 12, "a torn tail appended");
		close(fd);
	}
	compare_threads(path, "random, damaged", 1);
}

static void test_threads_sorted(void)
{
	enum { T = 6, PER = 50000 };
	const char *path = test_path("sorted.iotap");
	struct iotap_trace_writer *w;
	struct iotap_trace_rec rec;
	uint64_t seed = 3, next_t[T];
	uint32_t done[T] = { 0 };
	unsigned int k, left;

	if (!ok(iotap_trace_writer_open(&w, path, NULL, 0) == 0, "writer open"))
		return;
	for (k = 0; k < T; k++)
		next_t[k] = 1000 + k;
	memset(&rec, 0, sizeof(rec));
	rec.type = IOTAP_REC_OP;
	rec.op = IOTAP_OP_WRITE;
	do {
		uint64_t wm = UINT64_MAX;

		for (k = 0; k < T; k++) {
			uint64_t run = rng_below(&seed, 300);

			while (run-- && done[k] < PER) {
				rec.tid = 100 + k;
				rec.time_ns = next_t[k];
				rec.dur_ns = 1 + rng_below(&seed, 5000);
				rec.offset = (uint64_t)done[k]++ * 4096;
				rec.length = rec.result = 4096;
				rec.file = k;
				iotap_trace_writer_append(w, &rec);
				next_t[k] += rng_below(&seed, 20000);
			}
		}
		for (k = 0, left = 0; k < T; k++)
			if (done[k] < PER) {
				left++;
				if (next_t[k] < wm)
					wm = next_t[k];
			}
		iotap_trace_writer_flush(w, left ? wm : 0);
	} while (left);
	ok(iotap_trace_writer_close(w) == 0, "%d threads x %d records written", T, PER);
	compare_threads(path, "six threads, watermarked", 0);
}

/* What iotap_trace_reader_on_progress() reported. */
struct prog_log {
	uint64_t calls, ends, last_done, total, bad;
};

static void prog_cb(void *arg, uint64_t done, uint64_t total, int end)
{
	struct prog_log *l = arg;

	if (l->ends || done < l->last_done || (l->total && total != l->total))
		l->bad++;	/* after the end, going back, or another total */
	l->total = total;
	l->last_done = done;
	l->calls += !end;
	l->ends += !!end;
}

/*
 * The progress callback: once per chunk taken, good or bad (the reader's
 * chunk counts), never going back, then once at the end with @done the
 * file's size; merged or in file order, on 1 and 3 threads, over damage.
 */
static void test_progress(void)
{
	const char *path = test_path("random.iotap");
	static const unsigned int threads[] = { 1, 3 };
	unsigned int t, fo;
	struct stat sb;

	if (stat(path, &sb))
		return;
	for (t = 0; t < 2; t++)
		for (fo = 0; fo < 2; fo++) {
			struct iotap_trace_reader *r;
			struct iotap_trace_read_stats st;
			struct iotap_trace_rec rec;
			struct prog_log l = { 0 };
			int ret;

			if (iotap_trace_reader_open(&r, path, fo ? IOTAP_TRACE_READ_FILE_ORDER : 0) ||
			    iotap_trace_reader_set_threads(r, threads[t])) {
				ok(0, "open");
				continue;
			}
			iotap_trace_reader_on_progress(r, prog_cb, &l);
			while ((ret = iotap_trace_reader_next(r, &rec)) > 0)
				;
			iotap_trace_reader_stats(r, &st);
			iotap_trace_reader_close(r);
			ok(ret == 0 && !l.bad && l.ends == 1 && l.calls == st.chunks + st.chunks_bad &&
			   st.chunks_bad > 0 && l.last_done == (uint64_t)sb.st_size &&
			   l.total == (uint64_t)sb.st_size,
			   "progress, %u thread(s), %s: %" PRIu64 " calls for %" PRIu64
			   " chunks (%" PRIu64 " bad), one end at %" PRIu64 " of %" PRIu64 " bytes",
			   threads[t], fo ? "file order" : "merged", l.calls, st.chunks + st.chunks_bad,
			   st.chunks_bad, l.last_done, (uint64_t)sb.st_size);
		}
}

static void test_api(void)
{
	const char *path = test_path("sorted.iotap");
	struct iotap_trace_reader *r;
	struct iotap_trace_rec rec;

	if (iotap_trace_reader_open(&r, path, 0))
		return;
	setenv("IOTAP_READ_THREADS", "zero", 1);
	ok(iotap_trace_reader_set_threads(r, 0) == -EINVAL, "IOTAP_READ_THREADS=zero: -EINVAL");
	setenv("IOTAP_READ_THREADS", "3", 1);
	ok(iotap_trace_reader_set_threads(r, 0) == 0, "IOTAP_READ_THREADS=3 accepted");
	unsetenv("IOTAP_READ_THREADS");
	ok(iotap_trace_reader_set_threads(r, 0) == 0, "0: one per CPU");
	ok(iotap_trace_reader_next(r, &rec) == 1, "a record");
	ok(iotap_trace_reader_set_threads(r, 2) == -EBUSY, "after next(): -EBUSY");
	iotap_trace_reader_close(r);
}

/* A caller's struct reused with junk in it: the fields that do not apply are still zero. */
static void test_reused_struct(void)
{
	const char *path = test_path("random.iotap");
	struct iotap_trace_reader *r;
	struct iotap_trace_rec rec;
	size_t n = 0, bad = 0;
	uint64_t *f;
	unsigned int i;

	if (iotap_trace_reader_open(&r, path, 0))
		return;
	for (;;) {
		memset(&rec, 0x5a, sizeof(rec));	/* what another frame left there */
		if (iotap_trace_reader_next(r, &rec) != 1)
			break;
		n++;
		if (rec.type == IOTAP_REC_SAMPLE)
			continue;
		f = &rec.sample.rd_ios;
		if (rec.sample.dev_major || rec.sample.dev_minor)
			bad++;
		for (i = 0; i < 14; i++)
			if (f[i])
				bad++;
	}
	iotap_trace_reader_close(r);
	ok(n > 100000 && !bad, "%zu records into a reused struct: no junk in the sample (%zu)", n,
	   bad);
}

/* Threads of this process (/proc/self/task), or -1. */
/* set_threads(n): the reading thread is one of the n. */
static void test_thread_count(void)
{
	static const unsigned int threads[] = { 1, 2, 4 };
	const char *path = test_path("sorted.iotap");
	unsigned int i;

	for (i = 0; i < sizeof(threads) / sizeof(threads[0]); i++) {
		struct iotap_trace_reader *r;
		struct iotap_trace_rec rec;
		int before = task_count(), during;

		if (iotap_trace_reader_open(&r, path, 0))
			return;
		iotap_trace_reader_set_threads(r, threads[i]);
		iotap_trace_reader_next(r, &rec);
		during = task_count();
		iotap_trace_reader_close(r);
		/* (a sanitizer's runtime may have a thread of its own: counted in before) */
		ok(before >= 1 && during == before + (int)threads[i] - 1 && task_count() == before,
		   "%u threads decoding: %d more running while reading (%d before, %d after close)",
		   threads[i], during - before, before, task_count());
	}
}

static void on_alarm(int sig)
{
	static const char msg[] = "not ok - a reading hung for 100 s (the decoder pool lost a wakeup?)\n";

	(void)sig;
	if (write(STDOUT_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(1);
	_exit(1);
}

/* Tiny chunks: the hand-off between the threads many thousand times. */
static void test_handoff(void)
{
	static const unsigned int threads[] = { 2, 3, 7 };
	const char *path = test_path("tiny.iotap");
	struct iotap_trace_writer *w;
	struct iotap_trace_rec rec;
	uint64_t seed = 7;
	struct ref ref = { 0 };
	char why[256];
	unsigned int i, k, n, bad = 0;
	int tasks = task_count();
	size_t at;

	if (!ok(iotap_trace_writer_open(&w, path, NULL, 0) == 0, "writer open"))
		return;
	for (at = 0; at < 120000; at++) {
		rec_random(&rec, &seed);
		if (rec.type == IOTAP_REC_END)
			rec.type = IOTAP_REC_NOTE;
		iotap_trace_writer_append(w, &rec);
		if (at % 40 == 39)
			iotap_trace_writer_flush(w, 0);
	}
	ok(iotap_trace_writer_close(w) == 0, "120000 records in chunks of 40 written");
	n = read_all(path, 0, 1, &ref, NULL, why, sizeof(why));
	if (!ok(n && ref.n > 100000 && ref.st.chunks >= 2900,
		"one thread reads %zu records in %" PRIu64 " chunks %s", ref.n, ref.st.chunks, why))
		return;
	for (i = 0; i < sizeof(threads) / sizeof(threads[0]); i++) {
		for (k = 0, n = 0; k < 5; k++)
			n += read_all(path, 0, threads[i], NULL, &ref, why, sizeof(why));
		ok(n == 5, "%u threads, 5 readings: %u the same as one thread's %s", threads[i], n,
		   why);
	}
	/* close with jobs queued and being decoded, after 0 .. 20,000 records */
	for (k = 0; k < 40; k++) {
		struct iotap_trace_reader *r;
		size_t stop = rng_below(&seed, 20000);

		if (iotap_trace_reader_open(&r, path, 0))
			break;
		iotap_trace_reader_set_threads(r, 2 + k % 6);
		for (at = 0; at < stop && iotap_trace_reader_next(r, &rec) == 1; at++)
			;
		bad += at != stop;
		iotap_trace_reader_close(r);
	}
	ok(k == 40 && !bad && task_count() == tasks,
	   "40 readers closed part way: every one stopped, no thread left (%d, %d before)",
	   task_count(), tasks);
	ref_release(&ref);
}

/*
 * The default (0, no IOTAP_READ_THREADS): decode on the calling thread. On
 * the 2-CPU VMs measured, a second thread made report and dump slower in
 * wall time even on an idle machine (BENCHMARKS.md); IOTAP_READ_THREADS=N
 * still chooses N.
 */
static void test_default_threads(void)
{
	const char *path = test_path("sorted.iotap");
	struct iotap_trace_reader *r;
	struct iotap_trace_rec rec;
	int before = task_count(), during;

	unsetenv("IOTAP_READ_THREADS");
	if (iotap_trace_reader_open(&r, path, 0))
		return;
	ok(iotap_trace_reader_set_threads(r, 0) == 0, "set_threads(0) without IOTAP_READ_THREADS");
	iotap_trace_reader_next(r, &rec);
	during = task_count();
	iotap_trace_reader_close(r);
	ok(during == before, "by default no decoder thread runs (%d more)", during - before);
	setenv("IOTAP_READ_THREADS", "3", 1);
	if (iotap_trace_reader_open(&r, path, 0))
		return;
	iotap_trace_reader_set_threads(r, 0);
	iotap_trace_reader_next(r, &rec);
	during = task_count();
	iotap_trace_reader_close(r);
	unsetenv("IOTAP_READ_THREADS");
	ok(during == before + 2, "IOTAP_READ_THREADS=3: 2 more threads (%d more)", during - before);
}

int main(void)
{
	/* every reading here takes well under a second: one that waits for ever is a bug */
	signal(SIGALRM, on_alarm);
	alarm(100);
	test_random();
	test_progress();
	test_threads_sorted();
	test_api();
	test_reused_struct();
	test_thread_count();
	test_handoff();
	test_default_threads();
	return done_testing();
}
