// SPDX-License-Identifier: MIT
/*
 * test_split.c - trace/split.c: the windows of a split, one after the
 * other, are the sequential joined reading, record by record, with its
 * statistics; or the split refuses (-EXDEV)
 *
 * Each trace is read through iotap_trace_join_next() over a merged reader,
 * then through the split at 1, 2, 3, 7 and 40 windows, the windows read one
 * after the other and on as many threads at once:
 *  - report_synth's mixed stream (8 threads, marks, samples, several chunks);
 *  - six threads in overlapping watermarked chunks (later chunks' records
 *    interleave with earlier ones), without cut calls;
 *  - the same with a call cut in three pieces across every window seam of
 *    the window count read (first piece before the seam, the others after),
 *    exact mode (calls=1: CUT, CUT|CONT, CONT) and old mode (only CUT);
 *  - the watermarked trace with its last chunk torn (a tail);
 * and refusals: a damaged chunk header in the middle (resync), a damaged
 * payload in the middle, a record below an earlier chunk's watermark, and
 * a watermark held back for 600 k records (the sequential reader's cap
 * releases early).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>

#include "tap.h"
#include "trace_test.h"
#include "synth.h"

/* test_path() keeps 4 paths: a copy that stays */
static const char *tpath(const char *name)
{
	return strdup(test_path(name));
}

struct recs {
	struct iotap_trace_rec *r;
	size_t n, cap;
	struct iotap_trace_read_stats st;
	uint64_t calls, pieces;
	int err;
};

static void recs_free(struct recs *a)
{
	size_t i;

	for (i = 0; i < a->n; i++)
		free((char *)a->r[i].name);
	free(a->r);
	memset(a, 0, sizeof(*a));
}

static void recs_add(struct recs *a, const struct iotap_trace_rec *rec)
{
	struct iotap_trace_rec *d;

	if (a->n == a->cap) {
		a->cap = a->cap ? 2 * a->cap : 4096;
		a->r = realloc(a->r, a->cap * sizeof(*a->r));
		if (!a->r)
			abort();
	}
	d = &a->r[a->n++];
	memcpy(d, rec, offsetof(struct iotap_trace_rec, sample));
	memset(&d->sample, 0, sizeof(d->sample));
	if (rec->type == IOTAP_REC_SAMPLE)
		d->sample = rec->sample;
	if (rec->name) {
		char *p = malloc(rec->name_len + 1u);

		memcpy(p, rec->name, rec->name_len);
		p[rec->name_len] = '\0';
		d->name = p;
	}
}

static int seq_read(const char *path, struct recs *a)
{
	struct iotap_trace_reader *r;
	struct iotap_trace_join *j;
	const struct iotap_trace_rec *rec;
	int ret;

	memset(a, 0, sizeof(*a));
	ret = iotap_trace_reader_open(&r, path, 0);
	if (ret)
		return ret;
	iotap_trace_join_open(&j, r);
	while ((ret = iotap_trace_join_next_ref(j, &rec)) == 1)
		recs_add(a, rec);
	iotap_trace_reader_stats(r, &a->st);
	iotap_trace_join_stats(j, &a->calls, &a->pieces);
	iotap_trace_join_close(j);
	iotap_trace_reader_close(r);
	return ret;
}

struct job {
	struct iotap_trace_split *s;
	unsigned int k;
	bool keep;			/* the records, not only their number */
	unsigned int batch;		/* 0: one record a call, else up to this many (next_refs) */
	struct recs out;
	int ret;
};

static void *window_job(void *arg)
{
	struct job *jb = arg;
	struct iotap_trace_window *w;
	const struct iotap_trace_rec *rec, *rv[64];
	int i;

	jb->ret = iotap_trace_split_window_open(jb->s, jb->k, &w);
	if (jb->ret)
		return NULL;
	if (!jb->batch) {
		while ((jb->ret = iotap_trace_window_next_ref(w, &rec)) == 1)
			if (jb->keep)
				recs_add(&jb->out, rec);
	} else {
		/* all of a call's records are valid until the next call */
		while ((jb->ret = iotap_trace_window_next_refs(w, rv, jb->batch)) > 0)
			for (i = 0; i < jb->ret && jb->keep; i++)
				recs_add(&jb->out, rv[i]);
	}
	iotap_trace_window_close(w);
	return NULL;
}

/*
 * Read @path split in @k windows (on threads or one after the other; with
 * @batched, in calls of 1, 5 or 64 records, window by window) into @a
 * (NULL: counted only), the windows' chunk reads into @rd (or NULL): 0 or
 * -errno.
 */
static int split_read_as(const char *path, unsigned int k, bool threads, bool batched,
			 struct recs *a, unsigned int *nwin, struct iotap_trace_split_reads *rd)
{
	static const unsigned int batches[] = { 1, 5, 64 };
	struct iotap_trace_split_opts o = { .windows = k };
	struct iotap_trace_split *s;
	struct job *jobs;
	pthread_t *tid;
	struct recs none;
	bool keep = a != NULL;
	unsigned int n, i;
	int ret;

	if (!a)
		a = &none;
	memset(a, 0, sizeof(*a));
	ret = iotap_trace_split_open(&s, path, &o);
	if (ret)
		return ret;
	n = iotap_trace_split_count(s);
	*nwin = n;
	jobs = calloc(n, sizeof(*jobs));
	tid = calloc(n, sizeof(*tid));
	for (i = 0; i < n; i++) {
		jobs[i].s = s;
		jobs[i].k = i;
		jobs[i].keep = keep;
		jobs[i].batch = batched ? batches[i % 3] : 0;
		if (threads)
			pthread_create(&tid[i], NULL, window_job, &jobs[i]);
		else
			window_job(&jobs[i]);
	}
	for (i = 0; i < n; i++) {
		size_t m;

		if (threads)
			pthread_join(tid[i], NULL);
		if (jobs[i].ret && !ret)
			ret = jobs[i].ret;
		for (m = 0; m < jobs[i].out.n; m++)
			recs_add(a, &jobs[i].out.r[m]);
		recs_free(&jobs[i].out);
	}
	if (!ret)
		ret = iotap_trace_split_stats(s, &a->st, &a->calls, &a->pieces);
	if (rd)
		iotap_trace_split_reads(s, rd);
	free(jobs);
	free(tid);
	iotap_trace_split_close(s);
	if (a == &none)
		recs_free(a);
	return ret;
}

static int split_read(const char *path, unsigned int k, bool threads, struct recs *a,
		      unsigned int *nwin)
{
	return split_read_as(path, k, threads, false, a, nwin, NULL);
}

static bool stats_eq(const struct iotap_trace_read_stats *a, const struct iotap_trace_read_stats *b,
		     char *why, size_t n)
{
#define SF(f) if (a->f != b->f) { snprintf(why, n, #f " %" PRIu64 " != %" PRIu64, \
				     (uint64_t)a->f, (uint64_t)b->f); return false; }
	unsigned int i;

	SF(file_bytes) SF(header_bytes) SF(chunks) SF(chunks_bad) SF(bytes_skipped)
	SF(tail_bytes) SF(first_bad_offset) SF(compressed_bytes) SF(raw_bytes) SF(records)
	SF(lost_records) SF(late_records) SF(early_records) SF(t_first_ns) SF(t_last_ns)
	SF(has_end)
	for (i = 0; i < IOTAP_REC_TYPE_MAX; i++)
		SF(records_by_type[i])
#undef SF
	return true;
}

/* The sequential reading of @path against its split at @k windows, both ways. */
static void compare_split(const char *path, const char *what, unsigned int k,
			  const struct recs *seq)
{
	int t;

	for (t = 0; t < 3; t++) {
		struct recs a;
		char why[160] = "";
		unsigned int nwin = 0;
		size_t i;
		bool same;
		int ret = split_read_as(path, k, t == 1, t == 2, &a, &nwin, NULL);

		same = ret == 0 && a.n == seq->n;
		if (ret)
			snprintf(why, sizeof(why), "split: %s", strerror(-ret));
		else if (a.n != seq->n)
			snprintf(why, sizeof(why), "%zu records, %zu sequential", a.n, seq->n);
		for (i = 0; same && i < a.n; i++)
			if (!rec_eq(&seq->r[i], &a.r[i], why, sizeof(why))) {
				size_t l = strlen(why);

				snprintf(why + l, sizeof(why) - l, " at record %zu", i);
				same = false;
			}
		if (same)
			same = stats_eq(&a.st, &seq->st, why, sizeof(why));
		if (same && (a.calls != seq->calls || a.pieces != seq->pieces)) {
			snprintf(why, sizeof(why), "join %" PRIu64 "/%" PRIu64 " != %" PRIu64
				 "/%" PRIu64, a.calls, a.pieces, seq->calls, seq->pieces);
			same = false;
		}
		ok(same, "%s: %u windows (%u asked)%s = sequential (%zu records) %s", what, nwin,
		   k, t == 1 ? " on threads" : t == 2 ? " in batches" : "", seq->n, why);
		recs_free(&a);
	}
}

static const unsigned int counts[] = { 1, 2, 3, 7, 40 };
#define NCOUNTS (sizeof(counts) / sizeof(counts[0]))

/* @path split in each of the first @n counts[] against its sequential reading. */
static void compare_all(const char *path, const char *what, unsigned int n)
{
	struct recs seq;
	unsigned int i;

	if (!ok(seq_read(path, &seq) == 0, "%s: read sequentially", what))
		return;
	for (i = 0; i < n; i++)
		compare_split(path, what, counts[i], &seq);
	recs_free(&seq);
}

/* The result of a split reading of @path (0: exact). */
static int split_result(const char *path, unsigned int k)
{
	unsigned int nwin;

	return split_read(path, k, false, NULL, &nwin);
}

/* --- traces ------------------------------------------------------------- */

/* A cut call: three pieces of tid 999 around a seam. */
struct cut {
	uint64_t t;
	unsigned int piece;
};

/*
 * Piece @sp of the call cut across seam @t: the first CUT_BEFORE ns
 * before (some chunks earlier, about 1800 records: the join still folds
 * it, JOIN_WINDOW; less where seams are closer), the others right at the seam and after it.
 */
#define CUT_BEFORE 3000000ull

static uint64_t cut_at(const uint64_t *seams, unsigned int i, unsigned int sp)
{
	uint64_t t = seams[i], d = CUT_BEFORE < t / 2 ? CUT_BEFORE : t / 2;

	if (i && (t - seams[i - 1]) / 2 < d)
		d = (t - seams[i - 1]) / 2;	/* pieces in time order */
	return sp ? t + 2 * (sp - 1) : t - d;
}

#define WM_THREADS 6
#define WM_PER 12000

/*
 * Six threads' runs in chunks closed by explicit watermarks (each run goes
 * past the next watermark: chunks overlap). @seams: times to cut a call
 * across (cut_at()), @fuse the header's fuse field.
 */
static int write_wm(const char *path, const uint64_t *seams, unsigned int nseams, const char *fuse)
{
	struct iotap_trace_writer *w;
	struct iotap_trace_header h;
	struct iotap_trace_rec rec;
	uint64_t seed = 3, next_t[WM_THREADS];
	uint32_t done[WM_THREADS] = { 0 };
	unsigned int k, left, si = 0, sp = 0;
	bool exact = fuse && strstr(fuse, "calls=1");
	int ret;

	iotap_trace_header_init(&h, IOTAP_SOURCE_CAPTURE);
	h.fuse = fuse;
	ret = iotap_trace_writer_open(&w, path, &h, 0);
	if (ret)
		return ret;
	for (k = 0; k < WM_THREADS; k++)
		next_t[k] = 1000 + k;
	do {
		uint64_t wm = UINT64_MAX;

		memset(&rec, 0, sizeof(rec));
		rec.type = IOTAP_REC_OP;
		rec.op = IOTAP_OP_WRITE;
		for (k = 0; k < WM_THREADS; k++) {
			uint64_t run = rng_below(&seed, 60);

			while (run-- && done[k] < WM_PER) {
				rec.tid = 100 + k;
				rec.time_ns = next_t[k];
				rec.dur_ns = 1 + rng_below(&seed, 5000);
				rec.offset = (uint64_t)done[k]++ * 4096;
				rec.length = 4096;
				rec.result = 4096;
				rec.file = k;
				rec.fh = k;
				iotap_trace_writer_append(w, &rec);
				next_t[k] += rng_below(&seed, 20000);
			}
		}
		for (k = 0, left = 0; k < WM_THREADS; k++)
			if (done[k] < WM_PER) {
				left++;
				if (next_t[k] < wm)
					wm = next_t[k];
			}
		/* the cut pieces due before this watermark */
		while (si < nseams && cut_at(seams, si, sp) < (left ? wm : UINT64_MAX)) {
			static const uint64_t len[3] = { 1000, 4096, 10 };

			memset(&rec, 0, sizeof(rec));
			rec.type = IOTAP_REC_OP;
			rec.op = IOTAP_OP_READ;
			rec.tid = 999;
			rec.file = rec.fh = 77;
			rec.offset = si * 100000ull + (sp ? 1000 : 0) + (sp > 1 ? 4096 : 0);
			rec.length = len[sp];
			rec.result = (int64_t)len[sp];
			rec.time_ns = cut_at(seams, si, sp);
			rec.dur_ns = 1;
			if (exact)
				rec.flags = (sp < 2 ? IOTAP_OPF_CUT : 0) | (sp ? IOTAP_OPF_CONT : 0);
			else
				rec.flags = sp ? 0 : IOTAP_OPF_CUT;
			iotap_trace_writer_append(w, &rec);
			if (++sp == 3) {
				sp = 0;
				si++;
			}
		}
		iotap_trace_writer_flush(w, left ? wm : 0);
	} while (left);
	return iotap_trace_writer_close(w);
}

/*
 * A capture's watermarks: thread 1 makes short ops back to back, thread 2
 * now and then a long one (two rounds long). The writer
 * collects the threads' records a round at a time (the recorder's writer
 * thread), thread 2's first: the long op lands in a chunk before the
 * chunks of thread 1's records made while it ran. While it runs it holds
 * the watermark at its start; when it ends the watermark jumps to the
 * round's end, just past that chunk's end (t_last). So a window that
 * starts at such a watermark finds no record between the end of the
 * chunks before its first chunk and its start (a bonnie++ capture's every
 * window, session 17): its join must not try to start there first.
 */
#define HELD_OPS	400000
#define HELD_EVERY	100000
#define HELD_ROUND	40000

static int write_held(const char *path)
{
	struct iotap_trace_writer *w;
	struct iotap_trace_header h;
	struct iotap_trace_rec rec, lng;
	uint64_t t = 1000000, t0, long_end = 0;
	unsigned int i, r;
	int held = 0, ret = 0, closed;

	iotap_trace_header_init(&h, IOTAP_SOURCE_CAPTURE);
	ret = iotap_trace_writer_open(&w, path, &h, 0);
	if (ret)
		return ret;
	memset(&rec, 0, sizeof(rec));
	rec.type = IOTAP_REC_OP;
	rec.op = IOTAP_OP_WRITE;
	rec.tid = 1;
	rec.file = rec.fh = 1;
	rec.length = rec.result = 4096;
	lng = rec;
	/* caller-given watermarks from the start (FORMAT.md: "Single-threaded writer") */
	ret = iotap_trace_writer_flush(w, t);
	for (i = 0; i < HELD_OPS && !ret; i += HELD_ROUND) {
		t0 = t;
		if (!held && i % HELD_EVERY == 0) {
			/* thread 2 begins a long fsync in this round */
			lng.tid = 2;
			lng.file = lng.fh = 2;
			lng.op = IOTAP_OP_FSYNC;
			lng.length = lng.result = 0;
			lng.offset = 0;
			lng.time_ns = t + 7000;
			/* it ends 3 us before the next round does (the bonnie++ capture's 2-5 us) */
			long_end = t + 2ull * HELD_ROUND * 1000 - 3000;
			held = 1;
		}
		/* collected at the round's end: thread 2's record first, if its op ended */
		if (held && long_end < t0 + (uint64_t)HELD_ROUND * 1000) {
			lng.dur_ns = long_end - lng.time_ns;
			ret = iotap_trace_writer_append(w, &lng);
			held = 0;
		}
		for (r = 0; r < HELD_ROUND && !ret; r++) {
			rec.time_ns = t;
			rec.dur_ns = 500;
			rec.offset = (uint64_t)(i + r) * 4096;
			ret = iotap_trace_writer_append(w, &rec);
			t += 1000;
		}
		if (!ret)
			ret = iotap_trace_writer_flush(w, held ? lng.time_ns : t);
	}
	if (!ret)
		ret = iotap_trace_writer_flush(w, 0);
	closed = iotap_trace_writer_close(w);
	return ret ? ret : closed;
}

static void test_held(const char *path)
{
	static const unsigned int ks[] = { 3, 7, 20 };
	struct iotap_trace_split_reads rd;
	unsigned int i, nwin = 0;
	int ret;

	if (!ok(write_held(path) == 0, "trace with held watermarks written"))
		return;
	compare_all(path, "held watermarks", NCOUNTS);
	{
		/*
		 * Bounds where equal shares of the records end: the windows asked
		 * for, none much larger than the rest (cut by payload bytes, 5
		 * came of the 7 asked, the largest 283 K of 426 K records).
		 */
		struct iotap_trace_split_opts o = { .windows = 7 };
		struct iotap_trace_split *s;
		uint64_t most = 0, total = 0, r;
		unsigned int k, n = 0;

		if (!iotap_trace_split_open(&s, path, &o)) {
			n = iotap_trace_split_count(s);
			for (k = 0; k < n; k++) {
				r = iotap_trace_split_records(s, k);
				total += r;
				most = r > most ? r : most;
			}
			iotap_trace_split_close(s);
		}
		ok(n == 7 && most * n <= 2 * total,
		   "held watermarks: %u windows where 7 asked, the largest %" PRIu64 " records of %"
		   PRIu64, n, most, total);
	}
	for (i = 0; i < sizeof(ks) / sizeof(ks[0]); i++) {
		memset(&rd, 0, sizeof(rd));
		ret = split_read_as(path, ks[i], false, false, NULL, &nwin, &rd);
		ok(ret == 0 && rd.again == 0,
		   "held watermarks, %u windows: no join start tried again (%" PRIu64 " chunks again, "
		   "%" PRIu64 " before their window, %" PRIu64 " reads of %u chunks; %d)", nwin,
		   rd.again, rd.back, rd.taken, rd.chunks, ret);
		/*
		 * The chunks before a window's first end 3 us short of its start: a
		 * tight start a chunk or two further back (split.c sp_lookback) reads
		 * 5, 9 and 16 chunks before the 3, 7 and 12 windows here; the
		 * watermark's start read 19, 18 and 41 (and tried again at 3 and 12).
		 */
		ok(ret == 0 && rd.back <= 2 * (nwin - 1) + 1,
		   "held watermarks, %u windows: about two chunks read before each (%" PRIu64 ")",
		   nwin, rd.back);
	}
}

static void test_synth(const char *path)
{
	static const char script[] =
		"p0 mixed ops=50000 rate=200000 lat=20 threads=8 bs=8192\n"
		"p1 mixed ops=50000 rate=100000 lat=200 threads=8 bs=8192\n"
		"p2 mixed ops=50000 rate=200000 lat=20 threads=8 bs=8192\n";

	if (!ok(synth_write(path, script, SYNTH_SAMPLES, NULL, 0) == 3, "synth trace written"))
		return;
	compare_all(path, "synth", 2);	/* 2 chunks: 2 windows at most */
}

static void test_overlap(const char *path)
{
	unsigned int i;

	if (!ok(write_wm(path, NULL, 0, NULL) == 0, "watermarked trace written"))
		return;
	compare_all(path, "overlapping chunks", NCOUNTS);
	/* for each window count: a call cut across each of its seams */
	for (i = 1; i < NCOUNTS; i++) {
		struct iotap_trace_split_opts o = { .windows = counts[i] };
		struct iotap_trace_split *s;
		uint64_t seams[64], lo, hi;
		unsigned int n, m, mode;
		char what[64];
		int ret;

		if (!ok(iotap_trace_split_open(&s, path, &o) == 0, "split %u", counts[i]))
			continue;
		n = iotap_trace_split_count(s);
		for (m = 1; m < n && m <= 64; m++) {
			iotap_trace_split_range(s, m, &lo, &hi);
			seams[m - 1] = lo;
		}
		iotap_trace_split_close(s);
		for (mode = 0; mode < 2; mode++) {
			const char *cpath = tpath("cut.iotap");
			struct recs seq;
			unsigned int same;

			unlink(cpath);
			ok(write_wm(cpath, seams, n - 1, mode ? "max_write=4096 max_pages=1" :
				    "max_write=4096 max_pages=1 page_size=4096 calls=1") == 0,
			   "cut trace written");
			/* the seams did not move */
			ret = iotap_trace_split_open(&s, cpath, &o);
			if (!ok(ret == 0, "split %u of the cut trace: %s", counts[i], strerror(-ret)))
				continue;
			/* the pieces change the chunks' sizes: some seams may move */
			for (m = 1, same = 0; m < n && iotap_trace_split_count(s) == n; m++) {
				iotap_trace_split_range(s, m, &lo, &hi);
				same += lo == seams[m - 1];
			}
			ok(same >= (n + 1) / 2, "the cut trace keeps %u of its %u seams", same, n - 1);
			iotap_trace_split_close(s);
			snprintf(what, sizeof(what), "%s cut calls on %u seams", mode ? "old" : "exact",
				 n - 1);
			if (!ok(seq_read(cpath, &seq) == 0, "%s: read", what))
				continue;
			ok(seq.calls == n - 1 && seq.pieces == 2 * (n - 1), "%s: %" PRIu64
			   " calls of %" PRIu64 " pieces joined sequentially", what, seq.calls,
			   seq.pieces);
			compare_split(cpath, what, counts[i], &seq);
			recs_free(&seq);
		}
	}
}

static int copy_file(const char *from, const char *to, off_t size)
{
	int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	char buf[65536];
	ssize_t k;

	while ((k = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)k) != k)
			return -1;
	close(in);
	if (size >= 0 && ftruncate(out, size))
		return -1;
	return close(out);
}

/* Chunk offsets of @path (the i-th chunk's header), as a reader walking it sees them. */
static uint64_t chunk_off(const char *path, unsigned int i)
{
	const char magic[8] = "IOTAPCK\n";
	int fd = open(path, O_RDONLY);
	struct stat st;
	char *p;
	uint64_t at = 0, off;
	unsigned int n = 0;

	fstat(fd, &st);
	p = malloc((size_t)st.st_size);
	if (read(fd, p, (size_t)st.st_size) != st.st_size)
		abort();
	close(fd);
	for (off = 0; off + 8 <= (uint64_t)st.st_size; off++)
		if (!memcmp(p + off, magic, 8) && n++ == i) {
			at = off;
			break;
		}
	free(p);
	return at;
}

static void poke(const char *path, uint64_t off)
{
	int fd = open(path, O_RDWR);
	unsigned char c;

	if (pread(fd, &c, 1, (off_t)off) != 1)
		abort();
	c ^= 0x5a;
	if (pwrite(fd, &c, 1, (off_t)off) != 1)
		abort();
	close(fd);
}

static void test_damage(const char *wm)
{
	const char *path = tpath("torn.iotap");
	struct stat st;

	stat(wm, &st);
	copy_file(wm, path, st.st_size - 100);
	compare_all(path, "torn tail", NCOUNTS);
	copy_file(wm, path, -1);
	poke(path, chunk_off(path, 20) + 20);	/* the header of a chunk in the middle */
	ok(split_result(path, 3) == -EXDEV, "a damaged chunk header in the middle: refused");
	copy_file(wm, path, -1);
	poke(path, chunk_off(path, 21) - 100);	/* the payload of a chunk in the middle */
	ok(split_result(path, 3) == -EXDEV, "a damaged payload in the middle: refused");
	ok(split_result(path, 1) == -EXDEV, "... also in one window");
}

static void test_promise(void)
{
	const char *path = tpath("late.iotap");
	struct iotap_trace_writer *w;
	struct iotap_trace_rec rec;
	uint64_t i;

	memset(&rec, 0, sizeof(rec));
	rec.type = IOTAP_REC_OP;
	rec.op = IOTAP_OP_GETATTR;
	iotap_trace_writer_open(&w, path, NULL, 0);
	for (i = 0; i < 20000; i++) {
		rec.time_ns = 1000 + i * 10 - (i == 15000 ? 50000 : 0);	/* one late record */
		iotap_trace_writer_append(w, &rec);
		if (i % 1000 == 999)
			iotap_trace_writer_flush(w, rec.time_ns + 1);
	}
	iotap_trace_writer_close(w);
	ok(split_result(path, 3) == -EXDEV, "a record below an earlier watermark: refused");

	/* a watermark held back: the sequential reader releases early */
	path = tpath("early.iotap");
	iotap_trace_writer_open(&w, path, NULL, 0);
	for (i = 0; i < 600000; i++) {
		rec.time_ns = 2000 + i;
		iotap_trace_writer_append(w, &rec);
		if (i % 20000 == 19999)
			iotap_trace_writer_flush(w, i < 590000 ? 2000 : rec.time_ns + 1);
	}
	iotap_trace_writer_close(w);
	{
		struct recs seq;

		seq_read(path, &seq);
		ok(seq.st.early_records > 0, "the held-back trace: %" PRIu64
		   " records released early sequentially", seq.st.early_records);
		recs_free(&seq);
	}
	ok(split_result(path, 3) == -EXDEV, "... and the split refuses it");
	ok(split_result(path, 1) == -EXDEV, "... also in one window");
}

/*
 * test_split --bench FILE K: read FILE in K windows on K threads (0:
 * sequentially, joined; K followed by s: the windows one after the other).
 */
static int bench(const char *path, unsigned int k, bool threads)
{
	struct iotap_trace_read_stats st;
	unsigned int nwin = 0;
	int ret;

	if (!k) {
		struct iotap_trace_reader *r;
		struct iotap_trace_join *j;
		const struct iotap_trace_rec *rec;

		if (iotap_trace_reader_open(&r, path, 0))
			return 1;
		iotap_trace_join_open(&j, r);
		while ((ret = iotap_trace_join_next_ref(j, &rec)) == 1)
			;
		iotap_trace_reader_stats(r, &st);
		iotap_trace_join_close(j);
		iotap_trace_reader_close(r);
		printf("sequential: %" PRIu64 " records\n", st.records);
		return ret != 0;
	}
	ret = split_read(path, k, threads, NULL, &nwin);
	printf("%u windows: %s\n", nwin, ret ? strerror(-ret) : "exact");
	return ret != 0;
}

int main(int argc, char **argv)
{
	const char *synth, *wm;
	struct iotap_trace_split_opts o = { .windows = 2, .min_bytes = 1ull << 40 };
	struct iotap_trace_split *s;

	if (argc == 4 && !strcmp(argv[1], "--bench"))
		return bench(argv[2], (unsigned int)strtoul(argv[3], NULL, 10),
			     !strchr(argv[3], 's'));
	synth = tpath("synth.iotap");
	wm = tpath("wm.iotap");

	test_synth(synth);
	test_overlap(wm);
	test_held(tpath("held.iotap"));
	test_damage(wm);
	test_promise();
	ok(iotap_trace_split_open(&s, synth, &o) == -EXDEV, "a file under min_bytes: refused");
	{
		/* min_chunks: fewer windows where each would hold fewer chunks */
		struct iotap_trace_split_opts m = { .windows = 1000 };
		unsigned int all = 0, few = 0;

		if (!iotap_trace_split_open(&s, wm, &m)) {
			all = iotap_trace_split_count(s);
			iotap_trace_split_close(s);
		}
		m.min_chunks = 8;
		if (!iotap_trace_split_open(&s, wm, &m)) {
			few = iotap_trace_split_count(s);
			iotap_trace_split_close(s);
		}
		ok(all > 8 && few > 1 && few <= all / 4,
		   "min_chunks 8: %u windows where 1000 wanted gave %u", few, all);
	}
	{
		/* records: more windows where each would hold more records, as the headers count them */
		struct iotap_trace_split_opts m = { .windows = 2 };
		unsigned int two = 0, by = 0, k;
		uint64_t most = 0, total = 0;

		if (!iotap_trace_split_open(&s, wm, &m)) {
			two = iotap_trace_split_count(s);
			for (k = 0; k < two; k++)
				total += iotap_trace_split_records(s, k);
			iotap_trace_split_close(s);
		}
		m.records = total / 20;
		if (m.records && !iotap_trace_split_open(&s, wm, &m)) {
			by = iotap_trace_split_count(s);
			for (k = 0; k < by; k++)
				if (iotap_trace_split_records(s, k) > most)
					most = iotap_trace_split_records(s, k);
			iotap_trace_split_close(s);
		}
		ok(two == 2 && by >= 10 && by <= 21 && most <= 3 * m.records,
		   "records %" PRIu64 ": %u windows where 2 wanted (largest %" PRIu64 " records)",
		   m.records, by, most);
	}
	return done_testing();
}
