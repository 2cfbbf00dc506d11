// SPDX-License-Identifier: MIT
/*
 * iozone.c - iozone's write/rewrite, read/re-read and random read/write
 * tests (-i 0, 1, 2), single, auto (-a) and throughput (-t) modes
 *
 * Read from iozone.c 3.x: write_perf_test() (open, write every record,
 * fsync inside the timing with -e, else after it; close inside with -c),
 * read_perf_test(), random_perf_test() (every record once, in an order
 * shuffled by Fisher-Yates with lrand48() after srand48(0), the same order
 * for the random read and the random write), auto_test() (file sizes
 * 64 KB..512 MB or -n..-g, record sizes 4 KB..16 MB doubling, records
 * below 64 KB skipped for files above 16 MB unless a record size was
 * given), throughput_test() (N children on their own files; the first to
 * finish stops the others' counting: "stonewalling", -x turns it off).
 * Rates are KB/s = (bytes / seconds) >> 10, as iozone computes them.
 *
 * The phases of one (file, record) pair are a table; each is one
 * wl_data_run() over the same file.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "workload_i.h"
#include "iotap_iozone.h"

#define KB		1024ull
#define CROSSOVER_KB	(16 * 1024)	/* iozone CROSSOVER: larger files skip small records */
#define LARGE_REC_KB	64		/* iozone LARGE_REC */

/* How a phase opens the file. */
enum ioz_open {
	IOZ_CREATE,			/* unlink, O_CREAT|O_RDWR|O_TRUNC (iozone: creat + open) */
	IOZ_RDWR,			/* O_RDWR */
	IOZ_RDONLY,			/* O_RDONLY */
};

struct ioz_phase {
	enum iotap_iozone_test test;
	const char *name;		/* marker prefix */
	const char *tput_name;		/* throughput report row */
	const char *who;		/* "Children see throughput for N <who>" */
	const char *report;		/* -R table title */
	unsigned int need;		/* IOTAP_IOZONE_T_* that selects it */
	enum wl_kind kind;
	enum ioz_open open;
	int write;			/* writes: -e fsyncs inside the timing */
};

/* iozone's tests in its order; the random pair shares one shuffle. */
static const struct ioz_phase ioz_phases[IOTAP_IOZONE_TESTS] = {
	{ IOTAP_IOZONE_WRITE, "write", "Initial write", "initial writers", "Writer report",
	  IOTAP_IOZONE_T_WRITE, WL_SEQ_WRITE, IOZ_CREATE, 1 },
	{ IOTAP_IOZONE_REWRITE, "rewrite", "Rewrite", "rewriters", "Re-writer report",
	  IOTAP_IOZONE_T_WRITE, WL_SEQ_WRITE, IOZ_RDWR, 1 },
	{ IOTAP_IOZONE_READ, "read", "Read", "readers", "Reader report",
	  IOTAP_IOZONE_T_READ, WL_SEQ_READ, IOZ_RDONLY, 0 },
	{ IOTAP_IOZONE_REREAD, "reread", "Re-read", "re-readers", "Re-Reader report",
	  IOTAP_IOZONE_T_READ, WL_SEQ_READ, IOZ_RDONLY, 0 },
	{ IOTAP_IOZONE_RANDOM_READ, "random_read", "Random read", "random readers",
	  "Random read report", IOTAP_IOZONE_T_RANDOM, WL_PERM_READ, IOZ_RDWR, 0 },
	{ IOTAP_IOZONE_RANDOM_WRITE, "random_write", "Random write", "random writers",
	  "Random write report", IOTAP_IOZONE_T_RANDOM, WL_PERM_WRITE, IOZ_RDWR, 1 },
};

void iotap_workload_iozone_opts_init(struct iotap_workload_iozone_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->file_kb = 512;		/* iozone KILOBYTES */
	o->rec_kb = 4;
	o->min_file_kb = 64;		/* KILOBYTES_START */
	o->max_file_kb = 512 * 1024;	/* KILOBYTES_END */
	o->min_rec_kb = 4;		/* RECLEN_START */
	o->max_rec_kb = 16 * 1024;	/* RECLEN_END (MAXBUFFERSIZE) */
}

static int is_random(const struct ioz_phase *ph)
{
	return ph->kind == WL_PERM_READ || ph->kind == WL_PERM_WRITE;
}

static unsigned int tests_of(const struct iotap_workload_iozone_opts *o)
{
	unsigned int t = o->tests ? o->tests :
			 IOTAP_IOZONE_T_WRITE | IOTAP_IOZONE_T_READ | IOTAP_IOZONE_T_RANDOM;

	/* every other test reads the file the write test makes */
	return t | IOTAP_IOZONE_T_WRITE;
}

static uint64_t kb_per_s(uint64_t bytes, double s)
{
	if (s <= 0)
		s = 1e-6;		/* iozone: time_res when it ran too fast */
	return (uint64_t)((double)bytes / s) >> 10;
}

static void marker(char *buf, size_t len, const char *name, uint64_t file_kb, uint64_t rec_kb)
{
	char s[32], r[32];

	snprintf(buf, len, "%s s=%s r=%s", name, wl_size_name(file_kb * KB, s, sizeof(s)),
		 wl_size_name(rec_kb * KB, r, sizeof(r)));
}

/* iozone random_perf_test(): record numbers shuffled with lrand48 after srand48(0) */
static uint64_t *shuffle(uint64_t n)
{
	uint64_t *perm = malloc((n ? n : 1) * sizeof(*perm)), i;
	struct rng48 r;

	if (!perm)
		return NULL;
	rng48_init(&r, 0);
	for (i = 0; i < n; i++)
		perm[i] = i;
	for (i = n; i-- > 0;) {
		uint64_t j = (uint64_t)rng48_next(&r) % (i + 1), t = perm[i];

		perm[i] = perm[j];
		perm[j] = t;
	}
	return perm;
}

static int open_for(struct iotap_workload_ctx *c, const struct iotap_workload_iozone_opts *o,
		    struct wl_file *f, const char *name, enum ioz_open how)
{
	int fl = how == IOZ_RDONLY ? O_RDONLY : O_RDWR;

	if (o->flags & IOTAP_IOZONE_DIRECT)
		fl |= O_DIRECT;
	if (how == IOZ_CREATE) {
		int ret = wl_unlink_old(c, c->dirfd, c->dir_ino, name);

		if (ret)
			return ret;
		fl |= O_CREAT | O_TRUNC;
	}
	return wl_open(c, f, c->dirfd, c->dir_ino, name, fl, 0640);
}

static unsigned int phase_flags(const struct iotap_workload_iozone_opts *o,
				const struct ioz_phase *ph)
{
	unsigned int fl = 0;

	/* iozone: -e fsyncs inside the timing; without -c it fsyncs after it anyway */
	if (ph->write && (o->flags & IOTAP_IOZONE_FSYNC))
		fl |= WL_PF_FSYNC_IN;
	if (o->flags & IOTAP_IOZONE_CLOSE)
		fl |= WL_PF_CLOSE_IN;
	else if (ph->write && !(o->flags & IOTAP_IOZONE_FSYNC))
		fl |= WL_PF_FSYNC_AFTER;
	return fl;
}

/* --- single and auto mode -------------------------------------------------- */

static int run_pair(struct iotap_workload_ctx *c, const struct iotap_workload_iozone_opts *o,
		    struct iotap_workload_iozone_row *row, void *buf)
{
	static const char fname[] = "iozone.tmp";
	uint64_t units = row->file_kb / row->rec_kb;
	unsigned int tests = tests_of(o), t;
	uint64_t *perm = NULL;
	struct wl_file f = { .fd = -1 };
	struct wl_fileset fs = { .n = 1, .units_per_file = units ? units : 1, .f = &f };
	int ret = 0, made = 0;

	for (t = 0; t < IOTAP_IOZONE_TESTS && !ret; t++) {
		const struct ioz_phase *ph = &ioz_phases[t];
		char name[96];
		struct wl_data_phase p = {
			.name = name, .kind = ph->kind, .io = WL_IO_BLOCK,
			.flags = phase_flags(o, ph), .unit = row->rec_kb * KB,
			.units = units, .buf = buf,
		};

		if (!(tests & ph->need))
			continue;
		if (wl_stopped()) {
			ret = -EINTR;
			break;
		}
		if (is_random(ph)) {
			if (!perm)
				perm = shuffle(units);
			if (!perm) {
				ret = -ENOMEM;
				break;
			}
			p.perm = perm;
		}
		marker(name, sizeof(name), ph->name, row->file_kb, row->rec_kb);
		ret = open_for(c, o, &f, fname, ph->open);
		if (ret)
			break;
		made = 1;
		ret = wl_data_run(c, &p, &fs, &row->ph[t]);
		if (f.fd >= 0 && wl_close(c, &f) && !ret)
			ret = -EIO;
		if (!ret)
			row->kb_per_s[t] = kb_per_s(units * row->rec_kb * KB, row->ph[t].elapsed_s);
	}
	if (f.fd >= 0)
		wl_close(c, &f);
	if (made)
		wl_unlink(c, c->dirfd, c->dir_ino, fname, 0);
	free(perm);
	return ret;
}

static void print_table_header(FILE *f)
{
	fprintf(f, "%16s%8s%9s%9s%8s%10s%8s %9s\n", " ", " ", " ", " ", " ", " ", "random",
		"random");
	fprintf(f, "%16s%8s%9s%9s%8s%10s%8s %9s\n", "kB", "reclen", "write", "rewrite", "read",
		"reread", "read", "write");
}

static void print_row(FILE *f, const struct iotap_workload_iozone_opts *o,
		      const struct iotap_workload_iozone_row *row)
{
	unsigned int tests = tests_of(o), t;

	fprintf(f, "%16" PRIu64 "%8" PRIu64, row->file_kb, row->rec_kb);
	for (t = 0; t < IOTAP_IOZONE_TESTS; t += 2) {
		if (!(tests & ioz_phases[t].need))
			fputs("                  ", f);
		else
			fprintf(f, "%9" PRIu64 "%9" PRIu64, row->kb_per_s[t], row->kb_per_s[t + 1]);
	}
	fputc('\n', f);
	fflush(f);
}

static int add_row(struct iotap_workload_iozone_result *r, uint64_t file_kb, uint64_t rec_kb,
		   int skipped)
{
	struct iotap_workload_iozone_row *n = realloc(r->rows, (r->nrows + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	r->rows = n;
	memset(&n[r->nrows], 0, sizeof(*n));
	n[r->nrows].file_kb = file_kb;
	n[r->nrows].rec_kb = rec_kb;
	n[r->nrows].skipped = skipped;
	r->nrows++;
	return 0;
}

static int run_auto(struct iotap_workload_ctx *c, const struct iotap_workload_iozone_opts *o,
		    struct iotap_workload_iozone_result *r, FILE *live, void *buf)
{
	uint64_t fkb, rkb;
	int ret = 0;

	if (live)
		print_table_header(live);
	for (fkb = o->min_file_kb; fkb <= o->max_file_kb && !ret; fkb *= 2) {
		uint64_t min_rec = o->min_rec_kb;

		/* iozone auto_test(): large files skip small records (unless -r/-y/-q) */
		if (fkb > CROSSOVER_KB && o->min_rec_kb == 4 && o->max_rec_kb == 16 * 1024 &&
		    min_rec < LARGE_REC_KB) {
			for (rkb = o->min_rec_kb; rkb < LARGE_REC_KB && !ret; rkb *= 2)
				ret = add_row(r, fkb, rkb, 1);
			min_rec = LARGE_REC_KB;
		}
		for (rkb = min_rec; rkb <= o->max_rec_kb && rkb <= fkb && !ret; rkb *= 2) {
			ret = add_row(r, fkb, rkb, 0);
			if (ret)
				break;
			ret = run_pair(c, o, &r->rows[r->nrows - 1], buf);
			if (!ret && live)
				print_row(live, o, &r->rows[r->nrows - 1]);
		}
	}
	return ret;
}

/* --- throughput mode ---------------------------------------------------------- */

struct ioz_tp {
	struct iotap_workload_ctx *c;
	const struct iotap_workload_iozone_opts *o;
	const struct ioz_phase *ph;
	const uint64_t *perm;
	uint64_t units;
	size_t unit;
	char name[96];
	atomic_int stop;		/* stonewall: the first thread to finish sets it */
	struct wl_span span;
	struct {
		struct wl_file f;
		char fname[32];		/* f.name points here */
		void *buf;
		uint64_t t0, t_stop;	/* ns: start, stonewall or end */
		uint64_t bytes_counted, bytes;
		uint64_t lat_max;
		int stopped;
	} *th;
};

static void tp_ready(struct wl_threads *t)
{
	struct ioz_tp *tp = t->arg;

	wl_phase_begin(tp->c, &tp->span, tp->name, tp->units * t->n, tp->unit);
}

static int tp_thread(struct wl_threads *t, unsigned int i)
{
	struct ioz_tp *tp = t->arg;
	struct iotap_workload_ctx *c = tp->c;
	const struct ioz_phase *ph = tp->ph;
	struct wl_file *f = &tp->th[i].f;
	uint64_t u;
	int ret;

	snprintf(tp->th[i].fname, sizeof(tp->th[i].fname), "iozone.DUMMY.%u", i);
	ret = open_for(c, tp->o, f, tp->th[i].fname, ph->open);
	wl_threads_ready(t);
	if (ret)
		return ret;
	tp->th[i].t0 = wl_now();
	for (u = 0; u < tp->units && !ret; u++) {
		uint64_t un = tp->perm ? tp->perm[u] : u, t0;

		if (wl_stopped()) {
			ret = -EINTR;
			break;
		}
		if (!tp->th[i].stopped && atomic_load_explicit(&tp->stop, memory_order_relaxed)) {
			/* iozone keeps going so the file is whole, but stops counting */
			tp->th[i].stopped = 1;
			tp->th[i].t_stop = wl_now();
		}
		t0 = wl_now();
		if (f->pos != un * tp->unit)
			ret = wl_seek(c, f, un * tp->unit);
		if (!ret)
			ret = ph->kind == WL_SEQ_WRITE || ph->kind == WL_PERM_WRITE ?
			      wl_write_full(c, f, tp->th[i].buf, tp->unit) :
			      wl_read_full(c, f, tp->th[i].buf, tp->unit);
		if (ret)
			break;
		t0 = wl_now() - t0;
		if (t0 > tp->th[i].lat_max)
			tp->th[i].lat_max = t0;
		tp->th[i].bytes += tp->unit;
		if (!tp->th[i].stopped)
			tp->th[i].bytes_counted += tp->unit;
		atomic_fetch_add_explicit(&c->ph_done, 1, memory_order_relaxed);
	}
	if (!ret && ph->write && (tp->o->flags & IOTAP_IOZONE_FSYNC))
		ret = wl_fsync(c, f, 0);
	if (!ret && (tp->o->flags & IOTAP_IOZONE_CLOSE))
		ret = wl_close(c, f);
	if (!tp->th[i].stopped)
		tp->th[i].t_stop = wl_now();
	if (!(tp->o->flags & IOTAP_IOZONE_NOSTONEWALL))
		atomic_store(&tp->stop, 1);
	if (!ret && ph->write && !(tp->o->flags & (IOTAP_IOZONE_FSYNC | IOTAP_IOZONE_CLOSE)))
		ret = wl_fsync(c, f, 0);
	return ret;
}

static int run_tput_test(struct iotap_workload_ctx *c, const struct iotap_workload_iozone_opts *o,
			 const struct ioz_phase *ph, const uint64_t *perm,
			 struct iotap_workload_iozone_tput *out)
{
	unsigned int n = o->threads, i;
	struct ioz_tp tp = {
		.c = c, .o = o, .ph = ph, .units = o->file_kb / o->rec_kb,
		.unit = o->rec_kb * KB, .perm = perm,
	};
	struct wl_threads t = { .n = n, .fn = tp_thread, .arg = &tp, .on_ready = tp_ready };
	double total_kb = 0;
	int ret;

	marker(tp.name, sizeof(tp.name), ph->name, o->file_kb, o->rec_kb);
	atomic_init(&tp.stop, 0);
	tp.th = calloc(n, sizeof(*tp.th));
	if (!tp.th)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		tp.th[i].f.fd = -1;
		tp.th[i].buf = wl_buf_alloc(tp.unit);
		if (!tp.th[i].buf) {
			ret = -ENOMEM;
			goto out;
		}
	}
	ret = wl_threads_run(c, &t);
	for (i = 0; i < n; i++) {
		tp.span.units += tp.th[i].bytes / tp.unit;
		tp.span.bytes += tp.th[i].bytes;
		if (tp.th[i].lat_max > tp.span.lat_max)
			tp.span.lat_max = tp.th[i].lat_max;
	}
	wl_phase_end(c, &tp.span, &out->ph, ret != 0);
	for (i = 0; i < n; i++) {
		double s = (double)(tp.th[i].t_stop - tp.th[i].t0) / 1e9;
		double kb = (double)tp.th[i].bytes_counted / KB;
		double rate = s > 0 ? kb / s : 0;

		out->children_kb_s += rate;
		if (!i || rate < out->min_kb_s)
			out->min_kb_s = rate;
		if (!i || rate > out->max_kb_s)
			out->max_kb_s = rate;
		if (!i || kb < out->min_xfer_kb)
			out->min_xfer_kb = kb;
		total_kb += kb;
	}
	out->avg_kb_s = n ? out->children_kb_s / n : 0;
	out->parent_kb_s = out->ph.elapsed_s > 0 ? total_kb / out->ph.elapsed_s : 0;
	out->ran = !ret;
out:
	for (i = 0; i < n; i++) {
		if (tp.th[i].f.fd >= 0)
			wl_close(c, &tp.th[i].f);
		free(tp.th[i].buf);
	}
	free(tp.th);
	return ret;
}

static void print_tput_one(FILE *f, const struct iotap_workload_iozone_opts *o,
			   const struct ioz_phase *ph, const struct iotap_workload_iozone_tput *t)
{
	fprintf(f, "\tChildren see throughput for %2u %s \t= %10.2f kB/sec\n", o->threads,
		ph->who, t->children_kb_s);
	fprintf(f, "\tParent sees throughput for %2u %s \t= %10.2f kB/sec\n", o->threads,
		ph->who, t->parent_kb_s);
	fprintf(f, "\tMin throughput per thread \t\t\t= %10.2f kB/sec \n", t->min_kb_s);
	fprintf(f, "\tMax throughput per thread \t\t\t= %10.2f kB/sec\n", t->max_kb_s);
	fprintf(f, "\tAvg throughput per thread \t\t\t= %10.2f kB/sec\n", t->avg_kb_s);
	fprintf(f, "\tMin xfer \t\t\t\t\t= %10.2f kB\n\n", t->min_xfer_kb);
	fflush(f);
}

static int run_tput(struct iotap_workload_ctx *c, const struct iotap_workload_iozone_opts *o,
		    struct iotap_workload_iozone_result *r)
{
	unsigned int tests = tests_of(o), t, i;
	uint64_t *perm = NULL;
	int ret = 0;

	for (t = 0; t < IOTAP_IOZONE_TESTS && !ret; t++) {
		const struct ioz_phase *ph = &ioz_phases[t];

		if (!(tests & ph->need))
			continue;
		if (wl_stopped()) {
			ret = -EINTR;
			break;
		}
		if (is_random(ph) && !perm) {
			perm = shuffle(o->file_kb / o->rec_kb);
			if (!perm) {
				ret = -ENOMEM;
				break;
			}
		}
		ret = run_tput_test(c, o, ph, is_random(ph) ? perm : NULL, &r->tput[t]);
	}
	for (i = 0; i < o->threads; i++) {
		char fname[32];

		snprintf(fname, sizeof(fname), "iozone.DUMMY.%u", i);
		if (!faccessat(c->dirfd, fname, F_OK, 0))
			wl_unlink(c, c->dirfd, c->dir_ino, fname, 0);
	}
	free(perm);
	return ret;
}

/* --- entry points ---------------------------------------------------------------- */

int iotap_workload_iozone_run(struct iotap_workload_ctx *c,
			      const struct iotap_workload_iozone_opts *o,
			      struct iotap_workload_iozone_result *r, FILE *live)
{
	void *buf = NULL;
	int ret;

	memset(r, 0, sizeof(*r));
	if (c->dirfd < 0)
		return -ENOTDIR;
	if (!o->rec_kb || !o->file_kb || o->rec_kb > o->file_kb || o->rec_kb > 16 * 1024 ||
	    (o->automode && o->threads))
		return -EINVAL;
	if (o->threads) {
		ret = run_tput(c, o, r);
	} else {
		buf = wl_buf_alloc((o->automode ? o->max_rec_kb : o->rec_kb) * KB);
		if (!buf)
			return -ENOMEM;
		if (o->automode) {
			ret = run_auto(c, o, r, live, buf);
		} else {
			ret = add_row(r, o->file_kb, o->rec_kb, 0);
			if (!ret) {
				if (live)
					print_table_header(live);
				ret = run_pair(c, o, &r->rows[0], buf);
				if (!ret && live)
					print_row(live, o, &r->rows[0]);
			}
		}
	}
	free(buf);
	wl_outcome(ret, 0, &r->partial, &r->failed);
	return ret;
}

void iotap_workload_iozone_result_release(struct iotap_workload_iozone_result *r)
{
	free(r->rows);
	r->rows = NULL;
	r->nrows = 0;
}

void iotap_workload_iozone_print_header(FILE *f, const struct iotap_workload_iozone_opts *o,
					const char *cmdline)
{
	unsigned int tests = tests_of(o);

	fprintf(f, "\tIozone: Performance Test of File I/O\n"
		   "\t        (iotap run iozone: iozone's tests, timed and traced by iotap)\n\n");
	if (o->automode)
		fprintf(f, "\tAuto Mode\n");
	if (o->flags & IOTAP_IOZONE_FSYNC)
		fprintf(f, "\tInclude fsync in write timing\n");
	if (o->flags & IOTAP_IOZONE_CLOSE)
		fprintf(f, "\tInclude close in write timing\n");
	if (o->flags & IOTAP_IOZONE_DIRECT)
		fprintf(f, "\tO_DIRECT feature enabled\n");
	if (!o->automode || o->min_file_kb == o->max_file_kb)
		fprintf(f, "\tFile size set to %" PRIu64 " kB\n",
			o->automode ? o->min_file_kb : o->file_kb);
	if (!o->automode || o->min_rec_kb == o->max_rec_kb)
		fprintf(f, "\tRecord Size %" PRIu64 " kB\n",
			o->automode ? o->min_rec_kb : o->rec_kb);
	if (cmdline)
		fprintf(f, "\tCommand line used: %s\n", cmdline);
	fprintf(f, "\tOutput is in kBytes/sec\n");
	fprintf(f, "\tTests: %s%s%s\n", "write/rewrite",
		tests & IOTAP_IOZONE_T_READ ? ", read/re-read" : "",
		tests & IOTAP_IOZONE_T_RANDOM ? ", random read/write" : "");
	if (o->threads) {
		fprintf(f, "\tThroughput test with %u thread%s\n", o->threads,
			o->threads > 1 ? "s" : "");
		fprintf(f, "\tEach thread writes a %" PRIu64 " kByte file in %" PRIu64
			" kByte records\n", o->file_kb, o->rec_kb);
	}
	fputc('\n', f);
	fflush(f);
}

void iotap_workload_iozone_print_table(FILE *f, const struct iotap_workload_iozone_opts *o,
				       const struct iotap_workload_iozone_result *r)
{
	unsigned int i;

	print_table_header(f);
	for (i = 0; i < r->nrows; i++)
		if (!r->rows[i].skipped)
			print_row(f, o, &r->rows[i]);
}

void iotap_workload_iozone_print_report(FILE *f, const struct iotap_workload_iozone_opts *o,
					const struct iotap_workload_iozone_result *r)
{
	unsigned int tests = tests_of(o), t, i;
	uint64_t rkb, lo = o->automode ? o->min_rec_kb : o->rec_kb;
	uint64_t hi = o->automode ? o->max_rec_kb : o->rec_kb;

	if (!r->nrows)
		return;
	fprintf(f, "\nExcel output is below:\n");
	for (t = 0; t < IOTAP_IOZONE_TESTS; t++) {
		uint64_t cur;

		if (!(tests & ioz_phases[t].need))
			continue;
		fprintf(f, "\n\"%s\"\n", ioz_phases[t].report);
		fprintf(f, "      ");
		for (rkb = lo; rkb <= hi; rkb *= 2)
			fprintf(f, "  \"%" PRIu64 "\"", rkb);
		fputc('\n', f);
		cur = r->rows[0].file_kb;
		fprintf(f, "\"%" PRIu64 "\"  ", cur);
		for (i = 0; i < r->nrows; i++) {
			if (r->rows[i].file_kb != cur) {
				cur = r->rows[i].file_kb;
				fprintf(f, "\n\"%" PRIu64 "\"  ", cur);
			}
			fprintf(f, " %" PRIu64 " ", r->rows[i].kb_per_s[t]);
		}
		fputc('\n', f);
	}
}

void iotap_workload_iozone_print_tput(FILE *f, const struct iotap_workload_iozone_opts *o,
				      const struct iotap_workload_iozone_result *r)
{
	unsigned int t;

	for (t = 0; t < IOTAP_IOZONE_TESTS; t++)
		if (r->tput[t].ran)
			print_tput_one(f, o, &ioz_phases[t], &r->tput[t]);
	fprintf(f, "\n\"Throughput report Y-axis is type of test X-axis is number of threads\"\n");
	fprintf(f, "\"Record size = %" PRIu64 " kBytes \"\n", o->rec_kb);
	fprintf(f, "\"Output is in kBytes/sec\"\n\n");
	for (t = 0; t < IOTAP_IOZONE_TESTS; t++) {
		if (!r->tput[t].ran)
			continue;
		fprintf(f, "\"%15s \"", ioz_phases[t].tput_name);
		fprintf(f, " %10.2f \n\n", r->tput[t].children_kb_s);
	}
}
