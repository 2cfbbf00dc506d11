// SPDX-License-Identifier: MIT
/*
 * test_reader_ref.c - records handed out in place, and the merged order
 *
 * A trace shaped like a busy capture: 96 recording threads whose records
 * are appended as a recorder does, one thread's buffer (a sorted run of up
 * to 40 records) after another, so every chunk holds dozens of
 * interleaved runs; starts that tie across threads; bursts of starts
 * closer than the sort's buckets; names (NAME, OP), SAMPLE, PHASE, LOST,
 * NOTE and APP records; cut read pieces (calls=1); watermarked flushes.
 * It checks that
 *   - merged reading through iotap_trace_reader_next_ref() and
 *     iotap_trace_reader_next() gives exactly the file's records stably
 *     sorted by start (ties in file order), field for field, names and
 *     samples included, with no late or early record;
 *   - the statistics are the same whichever call reads, and exact in the
 *     middle of the stream (records so far, by type, lost, times);
 *   - file-order reading gives the file's records through both calls;
 *   - iotap_trace_join_next_ref() gives what iotap_trace_join_next() does;
 *   - a chunk whose starts sit in few buckets (the insertion sort gives
 *     up) and one of few runs (merged) come out in order too;
 *   - equal starts in two pending chunks come in file order, and a record
 *     behind one already delivered (a broken watermark) is counted late
 *     also when the records before it took the fast path.
 */
#include <stddef.h>

#include "tap.h"
#include "trace_test.h"

#define THREADS		96
#define PER_THREAD	3000

struct recs {
	struct iotap_trace_rec *v;
	size_t n, cap;
};

/* A whole copy of a record handed out in place (only a SAMPLE has its sample). */
static void copy_ref(struct iotap_trace_rec *dst, const struct iotap_trace_rec *src)
{
	memset(dst, 0, sizeof(*dst));
	memcpy(dst, src, offsetof(struct iotap_trace_rec, sample));
	if (src->type == IOTAP_REC_SAMPLE)
		dst->sample = src->sample;
	if (src->name)
		dst->name = strndup(src->name, src->name_len);
}

static void push(struct recs *r, const struct iotap_trace_rec *rec)
{
	if (r->n == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 4096;
		r->v = realloc(r->v, r->cap * sizeof(*r->v));
		if (!r->v)
			exit(99);
	}
	copy_ref(&r->v[r->n++], rec);
}

static void recs_release(struct recs *r)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		free((char *)r->v[i].name);
	free(r->v);
	memset(r, 0, sizeof(*r));
}

/* Stable by start: merge sort on (time, position). */
static void sort_stable(struct iotap_trace_rec *v, struct iotap_trace_rec *tmp, size_t n)
{
	size_t m = n / 2, i = 0, j = m, o = 0;

	if (n < 2)
		return;
	sort_stable(v, tmp, m);
	sort_stable(v + m, tmp, n - m);
	while (i < m && j < n)
		tmp[o++] = v[j].time_ns < v[i].time_ns ? v[j++] : v[i++];
	while (i < m)
		tmp[o++] = v[i++];
	while (j < n)
		tmp[o++] = v[j++];
	memcpy(v, tmp, n * sizeof(*v));
}

static const char names[] = "alpha beta gamma delta epsilon";

/* The busy capture described above. */
static const char *write_busy(const char *name)
{
	const char *path = test_path(name);
	struct iotap_trace_header hdr = { .fuse = "max_write=131072 max_pages=32 calls=1" };
	struct iotap_trace_writer *w;
	struct iotap_trace_rec rec;
	uint64_t seed = 41, next_t[THREADS], off[THREADS];
	uint32_t done[THREADS] = { 0 };
	unsigned int k, left, round = 0;

	if (iotap_trace_writer_open(&w, path, &hdr, 0))
		return NULL;
	for (k = 0; k < THREADS; k++) {
		next_t[k] = 1000000 + (k % 7) * 10;	/* ties across threads */
		off[k] = 0;
	}
	do {
		uint64_t wm = UINT64_MAX;

		round++;
		for (k = 0; k < THREADS; k++) {
			uint64_t run = rng_below(&seed, 41);

			while (run-- && done[k] < PER_THREAD) {
				uint64_t kind = rng_below(&seed, 100);

				memset(&rec, 0, sizeof(rec));
				rec.type = IOTAP_REC_OP;
				rec.op = IOTAP_OP_WRITE;
				rec.tid = 1000 + k;
				rec.pid = 77;
				rec.time_ns = next_t[k];
				rec.dur_ns = 1 + rng_below(&seed, 50000);
				rec.file = 1 + k % 5;
				rec.fh = 10 + k;
				rec.offset = off[k];
				rec.length = rec.result = 4096;
				if (kind < 3) {
					rec.type = IOTAP_REC_NAME;
					rec.op = 0;
					rec.length = rec.result = 0;
					rec.file2 = 1;
					rec.name = names + rng_below(&seed, 20);
					rec.name_len = (uint32_t)rng_below(&seed, 8);
				} else if (kind < 5) {
					rec.op = IOTAP_OP_LOOKUP;
					rec.result = -2;
					rec.length = rec.offset = 0;
					rec.name = names + rng_below(&seed, 20);
					rec.name_len = 3;
				} else if (kind < 6) {
					rec.type = IOTAP_REC_SAMPLE;
					rec.op = 0;
					rec.sample.rd_ios = rng_next(&seed);
					rec.sample.proc_rss_kb = k;
					rec.sample.dev_major = 8;
				} else if (kind < 7) {
					rec.type = IOTAP_REC_LOST;
					rec.op = 0;
					rec.length = 1 + rng_below(&seed, 9);
				} else if (kind < 8) {
					rec.type = (uint16_t)(rng_below(&seed, 2) ? IOTAP_REC_PHASE :
							      IOTAP_REC_APP);
					rec.op = IOTAP_APP_TXN;
					rec.name = names;
					rec.name_len = 5;
				} else if (kind < 10 && done[k] + 2 < PER_THREAD) {
					/* a read cut in three pieces, one after the other */
					unsigned int piece;

					for (piece = 0; piece < 3; piece++) {
						rec.op = IOTAP_OP_READ;
						rec.length = rec.result = 131072;
						rec.offset = off[k];
						rec.flags = (piece < 2 ? IOTAP_OPF_CUT : 0) |
							    (piece ? IOTAP_OPF_CONT : 0);
						rec.time_ns = next_t[k];
						iotap_trace_writer_append(w, &rec);
						off[k] += 131072;
						next_t[k] += rec.dur_ns + 1;
						done[k]++;
					}
					continue;
				}
				iotap_trace_writer_append(w, &rec);
				off[k] += 4096;
				done[k]++;
				/* bursts: every 50th round all threads start within 64 ns */
				next_t[k] += round % 50 == 0 ? rng_below(&seed, 2) :
							      rng_below(&seed, 30000);
			}
		}
		for (k = 0, left = 0; k < THREADS; k++)
			if (done[k] < PER_THREAD) {
				left++;
				if (next_t[k] < wm)
					wm = next_t[k];
			}
		iotap_trace_writer_flush(w, left ? wm : 0);
	} while (left);
	if (iotap_trace_writer_close(w))
		return NULL;
	return path;
}

/* Every record of @path through next_ref (@ref) or next into @out; stats at the end. */
static int read_all(const char *path, unsigned int flags, int ref, struct recs *out,
		    struct iotap_trace_read_stats *st, int *mid_ok)
{
	struct iotap_trace_read_stats run;
	struct iotap_trace_reader *r;
	struct iotap_trace_rec rec;
	const struct iotap_trace_rec *p;
	uint64_t lost = 0, by_type[IOTAP_REC_TYPE_MAX] = { 0 }, tmin = UINT64_MAX, tend = 0, end;
	int ret;

	*mid_ok = 1;
	if (iotap_trace_reader_open(&r, path, flags))
		return -1;
	for (;;) {
		if (ref) {
			ret = iotap_trace_reader_next_ref(r, &p);
		} else {
			memset(&rec, 0x5a, sizeof(rec));
			ret = iotap_trace_reader_next(r, &rec);
			p = &rec;
		}
		if (ret != 1)
			break;
		push(out, p);
		by_type[p->type]++;
		if (p->type == IOTAP_REC_LOST)
			lost += p->length;
		if (p->time_ns < tmin)
			tmin = p->time_ns;
		/* an APP record's time is its end */
		end = p->type == IOTAP_REC_APP ? p->time_ns : p->time_ns + p->dur_ns;
		if (end > tend)
			tend = end;
		/* the statistics so far, every 997 records */
		if (out->n % 997 == 0) {
			iotap_trace_reader_stats(r, &run);
			if (run.records != out->n || run.lost_records != lost ||
			    memcmp(run.records_by_type, by_type, sizeof(by_type)) ||
			    run.t_first_ns != tmin || run.t_last_ns != tend)
				*mid_ok = 0;
		}
	}
	iotap_trace_reader_stats(r, st);
	iotap_trace_reader_close(r);
	return ret;
}

static int same_recs(const struct recs *a, const struct recs *b, char *why, size_t n)
{
	size_t i;

	if (a->n != b->n)
		return snprintf(why, n, "%zu records vs %zu", a->n, b->n), 0;
	for (i = 0; i < a->n; i++)
		if (!rec_eq(&a->v[i], &b->v[i], why, n)) {
			snprintf(why + strlen(why), n - strlen(why), " (record %zu)", i);
			return 0;
		}
	return 1;
}

static void check_trace(const char *path, const char *what, size_t min_recs)
{
	struct iotap_trace_read_stats st_ref, st_copy, st_file, st_file_ref;
	struct recs file = { 0 }, file_ref = { 0 }, merged = { 0 }, merged_ref = { 0 };
	struct iotap_trace_rec *tmp;
	int mid, mid2, mid3, mid4;
	char why[256] = "";

	if (!ok(path && read_all(path, IOTAP_TRACE_READ_FILE_ORDER, 0, &file, &st_file, &mid) == 0 &&
		file.n >= min_recs, "%s: %zu records in file order", what, file.n))
		return;
	ok(read_all(path, IOTAP_TRACE_READ_FILE_ORDER, 1, &file_ref, &st_file_ref, &mid2) == 0 &&
	   same_recs(&file, &file_ref, why, sizeof(why)) &&
	   !memcmp(&st_file, &st_file_ref, sizeof(st_file)) && mid && mid2,
	   "%s: file order through next_ref: the same records and stats %s", what, why);
	ok(read_all(path, 0, 1, &merged_ref, &st_ref, &mid3) == 0 &&
	   read_all(path, 0, 0, &merged, &st_copy, &mid4) == 0,
	   "%s: merged reading through both calls", what);
	tmp = malloc(file.n * sizeof(*tmp));
	if (!tmp)
		exit(99);
	sort_stable(file.v, tmp, file.n);
	free(tmp);
	why[0] = '\0';
	ok(same_recs(&file, &merged_ref, why, sizeof(why)),
	   "%s: next_ref gives the records stably sorted by start %s", what, why);
	why[0] = '\0';
	ok(same_recs(&file, &merged, why, sizeof(why)),
	   "%s: next gives the records stably sorted by start %s", what, why);
	ok(!memcmp(&st_ref, &st_copy, sizeof(st_ref)) && !st_ref.late_records &&
	   !st_ref.early_records && st_ref.records == file.n && st_ref.chunks > 3,
	   "%s: the same stats through both calls, nothing late or early (%" PRIu64 " chunks)",
	   what, st_ref.chunks);
	ok(mid3 && mid4, "%s: the stats in the middle of the stream count what was delivered",
	   what);
	recs_release(&file);
	recs_release(&file_ref);
	recs_release(&merged);
	recs_release(&merged_ref);
}

static int read_joined(const char *path, int ref, struct recs *out, uint64_t *pieces)
{
	struct iotap_trace_reader *r;
	struct iotap_trace_join *j;
	struct iotap_trace_rec rec;
	const struct iotap_trace_rec *p;
	uint64_t calls;
	int ret;

	if (iotap_trace_reader_open(&r, path, 0))
		return -1;
	if (iotap_trace_join_open(&j, r)) {
		iotap_trace_reader_close(r);
		return -1;
	}
	for (;;) {
		if (ref) {
			ret = iotap_trace_join_next_ref(j, &p);
		} else {
			ret = iotap_trace_join_next(j, &rec);
			p = &rec;
		}
		if (ret != 1)
			break;
		push(out, p);
	}
	iotap_trace_join_stats(j, &calls, pieces);
	iotap_trace_join_close(j);
	iotap_trace_reader_close(r);
	return ret;
}

static void check_join(const char *path)
{
	struct recs a = { 0 }, b = { 0 };
	uint64_t pa = 0, pb = 0;
	char why[256] = "";
	size_t i, cut = 0;

	ok(path && read_joined(path, 1, &a, &pa) == 0 && read_joined(path, 0, &b, &pb) == 0 &&
	   pa > 1000 && pa == pb && same_recs(&a, &b, why, sizeof(why)),
	   "join: next_ref gives what next does (%zu records, %" PRIu64 " pieces folded) %s", a.n,
	   pa, why);
	for (i = 0; i < a.n; i++)
		if (a.v[i].type == IOTAP_REC_OP && (a.v[i].flags & (IOTAP_OPF_CUT | IOTAP_OPF_CONT)))
			cut++;
	ok(a.n && !cut, "join: no piece is left over (%zu)", cut);
	recs_release(&a);
	recs_release(&b);
}

/*
 * One chunk: @runs sorted runs of records interleaved in time, all starts
 * within @spread ns but for one far outlier (so that the sort's buckets
 * are coarse and the insertion sort gives up when @spread is small).
 */
static const char *write_runs(const char *name, unsigned int runs, uint64_t spread)
{
	const char *path = test_path(name);
	struct iotap_trace_writer *w;
	struct iotap_trace_rec rec;
	uint64_t seed = 5;
	unsigned int k, i;

	if (iotap_trace_writer_open(&w, path, NULL, 0))
		return NULL;
	memset(&rec, 0, sizeof(rec));
	rec.type = IOTAP_REC_OP;
	rec.op = IOTAP_OP_GETATTR;
	for (k = 0; k < runs; k++)
		for (i = 0; i < 2000 / runs; i++) {
			rec.tid = k;
			rec.file = i;
			rec.time_ns = 1ull << 40 | (spread * i / (2000 / runs) + rng_below(&seed, 3));
			if (k == 0 && i == 0)
				rec.time_ns = 1ull << 20;	/* the outlier */
			iotap_trace_writer_append(w, &rec);
		}
	iotap_trace_writer_flush(w, 1ull << 41);
	for (k = 0; k < 4; k++) {	/* and a few more chunks after it */
		rec.time_ns = (1ull << 41) + k;
		iotap_trace_writer_append(w, &rec);
		iotap_trace_writer_flush(w, rec.time_ns);
	}
	if (iotap_trace_writer_close(w))
		return NULL;
	return path;
}

/* Append records of tid @tid at @times, then flush with @wm. */
static void put_chunk(struct iotap_trace_writer *w, uint32_t tid, const uint64_t *times,
		      unsigned int n, uint64_t wm)
{
	struct iotap_trace_rec rec;
	unsigned int i;

	memset(&rec, 0, sizeof(rec));
	rec.type = IOTAP_REC_OP;
	rec.op = IOTAP_OP_FLUSH;
	rec.tid = tid;
	for (i = 0; i < n; i++) {
		rec.time_ns = times[i];
		rec.file = i;
		iotap_trace_writer_append(w, &rec);
	}
	iotap_trace_writer_flush(w, wm);
}

/* Read @path through next_ref: the (time, tid) pairs must be @want, @late of them late. */
static void check_seq(const char *path, const char *what, const uint64_t (*want)[2],
		      unsigned int n, uint64_t late)
{
	struct iotap_trace_read_stats st;
	struct iotap_trace_reader *r;
	const struct iotap_trace_rec *p;
	unsigned int i = 0, bad = 0;

	if (!path || iotap_trace_reader_open(&r, path, 0)) {
		ok(0, "%s: open", what);
		return;
	}
	while (iotap_trace_reader_next_ref(r, &p) == 1) {
		if (p->type == IOTAP_REC_END)
			continue;	/* the writer's, at the end */
		if (i >= n || p->time_ns != want[i][0] || p->tid != want[i][1])
			bad++;
		i++;
	}
	iotap_trace_reader_stats(r, &st);
	iotap_trace_reader_close(r);
	ok(i == n && !bad && st.late_records == late, "%s: %u records in the expected order "
	   "(%u wrong), %" PRIu64 " late (want %" PRIu64 ")", what, i, bad, st.late_records, late);
}

static void test_ties_and_late(void)
{
	static const uint64_t a[] = { 100, 300 }, b[] = { 200, 300, 400 };
	static const uint64_t ties[][2] = { { 100, 1 }, { 200, 2 }, { 300, 1 }, { 300, 2 },
					    { 400, 2 } };
	static const uint64_t la[] = { 100, 200, 300, 2000 }, lb[] = { 250, 3000 };
	static const uint64_t late[][2] = { { 100, 1 }, { 200, 1 }, { 300, 1 }, { 250, 2 },
					    { 2000, 1 }, { 3000, 2 } };
	struct iotap_trace_writer *w;
	const char *path = test_path("ties.iotap");

	if (iotap_trace_writer_open(&w, path, NULL, 0) == 0) {
		put_chunk(w, 1, a, 2, 150);
		put_chunk(w, 2, b, 3, 1000);
		check_seq(iotap_trace_writer_close(w) ? NULL : path,
			  "equal starts in two chunks", ties, 5, 0);
	}
	path = test_path("late.iotap");
	if (iotap_trace_writer_open(&w, path, NULL, 0) == 0) {
		put_chunk(w, 1, la, 4, 1000);
		put_chunk(w, 2, lb, 2, 5000);
		check_seq(iotap_trace_writer_close(w) ? NULL : path,
			  "a broken watermark after a fast run", late, 6, 1);
	}
}

int main(void)
{
	const char *busy = write_busy("busy.iotap");

	check_trace(busy, "96 threads' runs", THREADS * PER_THREAD);
	check_join(busy);
	check_trace(write_runs("burst.iotap", 100, 64), "100 runs within 64 ns", 1900);
	check_trace(write_runs("burst1ms.iotap", 100, 1u << 20), "100 runs within 1 ms", 1900);
	check_trace(write_runs("spread.iotap", 100, 1u << 30), "100 runs over 1 s", 1900);
	check_trace(write_runs("few.iotap", 3, 1u << 30), "3 runs", 1900);
	test_ties_and_late();
	return done_testing();
}
