// SPDX-License-Identifier: MIT
/*
 * output_bonnie.c - bonnie++'s one-line CSV from a trace whose phases are bonnie's
 *
 * The line itself (format_version 1.98, as Debian's bonnie++ 2.00a writes
 * it) is written by trace/base/bonnie.c, the writer `iotap run bonnie` uses
 * too; this file turns a trace's phases into its figures.
 *
 * Phases are bonnie's when they carry its test names (the markers `iotap
 * run bonnie` writes: putc, write, rewrite, getc, read, seeks, seq_create,
 * ...) or the automatic names of the same patterns (seq-write-1b,
 * seq-write-8k, rewrite-8k, seq-read-1b, seq-read-8k, rand-read-8k+10%w,
 * create, stat, unlink: the first create/stat/unlink is the sequential
 * test, the second the random one). A phase that fills a test already
 * filled starts the next line, so `-x 3` runs give three lines.
 *
 * Rates as bonnie++: K/sec = KiB/s of the bytes moved, seeks/s = reads in
 * the seek test, files/s = files created, stat'ed or deleted per second;
 * "+++++" when a test took under 0.5 s. %CP is the workload's CPU when the
 * markers carry it, else the whole system's busy CPU over the phase (a
 * capture does not know the application's own CPU). Latency is the END
 * marker's longest unit where `iotap run` wrote one (a chunk of 8192
 * 1-byte writes for putc, one seek, one file: what bonnie++ times), else
 * the longest op of the test's kind.
 *
 * A trace `iotap run bonnie` wrote also knows the run's name (-m), seed
 * (-z; the run records the one it drew) and -n's MAX:MIN:DIRS:CHUNK: they
 * are read back from the header's workload line, so that the report of a
 * run prints the very line the run printed. A capture of the real bonnie++
 * has the host name and leaves those columns blank.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_i.h"

enum {
	B_PUTC, B_WRITE, B_REWRITE, B_GETC, B_READ, B_SEEKS, B_SEQ_CREATE, B_SEQ_STAT,
	B_SEQ_DEL, B_RAN_CREATE, B_RAN_STAT, B_RAN_DEL, B_TESTS
};

#define RUNS_MAX	64

/* Each test's marker names, the canonical one (what `iotap run bonnie` writes) first. */
static const char *const marker_names[B_TESTS][3] = {
	{ "putc", "put_char", NULL },
	{ "write", "put_block", NULL },
	{ "rewrite", NULL, NULL },
	{ "getc", "get_char", NULL },
	{ "read", "get_block", NULL },
	{ "seeks", "seek", NULL },
	{ "seq_create", NULL, NULL },
	{ "seq_stat", NULL, NULL },
	{ "seq_delete", "seq_del", NULL },
	{ "rand_create", "ran_create", NULL },
	{ "rand_stat", "ran_stat", NULL },
	{ "rand_delete", "ran_del", NULL },
};

static int starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/* The bonnie++ test a phase is, -1 if none; @filled: the tests this run has so far. */
static int test_of(const char *name, const int *filled)
{
	char base[128];
	char *hash;
	int t, k;

	snprintf(base, sizeof(base), "%s", name);
	hash = strchr(base, '#');
	if (hash)
		*hash = '\0';
	for (t = 0; t < B_TESTS; t++)
		for (k = 0; k < 3 && marker_names[t][k]; k++)
			if (!strcmp(base, marker_names[t][k]))
				return t;
	/* automatic names */
	if (starts(base, "seq-write-"))
		return atoi(base + 10) <= 16 && strstr(base, "b") ? B_PUTC : B_WRITE;
	if (starts(base, "seq-read-"))
		return atoi(base + 9) <= 16 && strstr(base, "b") ? B_GETC : B_READ;
	if (starts(base, "rewrite-"))
		return B_REWRITE;
	if (starts(base, "rand-read-") || starts(base, "mixed-read-"))
		return B_SEEKS;
	/* file tests run create, stat, delete, twice: stat and delete follow a create */
	if (!strcmp(base, "create") || starts(base, "create+"))
		return !filled[B_SEQ_CREATE] ? B_SEQ_CREATE : !filled[B_RAN_CREATE] ? B_RAN_CREATE
										   : B_SEQ_CREATE;
	if (!strcmp(base, "stat") || starts(base, "stat+")) {
		if (filled[B_SEQ_CREATE] && !filled[B_SEQ_DEL] && !filled[B_SEQ_STAT])
			return B_SEQ_STAT;
		if (filled[B_RAN_CREATE] && !filled[B_RAN_DEL] && !filled[B_RAN_STAT])
			return B_RAN_STAT;
		return -1;
	}
	if (!strcmp(base, "unlink") || starts(base, "unlink+")) {
		if (filled[B_SEQ_CREATE] && !filled[B_SEQ_DEL])
			return B_SEQ_DEL;
		if (filled[B_RAN_CREATE] && !filled[B_RAN_DEL])
			return B_RAN_DEL;
		return -1;
	}
	return -1;
}

/* What `iotap run bonnie` said on its command line (the header's workload). */
struct run_args {
	const char *name;		/* -m, NULL: the host */
	char name_buf[256];
	int has_seed;
	uint32_t seed;
	int32_t max_size, min_size;	/* -n NUM:MAX:MIN:DIRS:CHUNK */
	uint32_t num_dirs, file_chunk;
	int is_run;			/* the trace is `iotap run bonnie`'s */
	uint32_t seeks, seekers;	/* -s SIZE:CHUNK:SEEKS:SEEKERS (8192, 5) */
};

static int parse_u32_arg(const char *s, uint32_t *v)
{
	uint64_t x;

	if (iotap_size_parse(s, 1, &x) || x > UINT32_MAX)
		return -EINVAL;
	*v = (uint32_t)x;
	return 0;
}

/* Split "a:b:c" (or "a,b") into at most 5 fields in @buf; empty ones count. */
static unsigned int fields(char *buf, size_t len, const char *s, const char *seps, char **f)
{
	unsigned int n = 0;
	char *p;

	snprintf(buf, len, "%s", s);
	for (p = buf; n < 5; n++) {
		f[n] = p;
		p = strpbrk(p, seps);
		if (!p)
			break;
		*p++ = '\0';
	}
	return n;
}

static void size_arg(struct run_args *a, const char *s)
{
	char buf[256], *f[5] = { NULL };
	unsigned int n = fields(buf, sizeof(buf), s, ":,", f);
	uint32_t v;

	a->seeks = 8192;
	a->seekers = 5;
	if (n >= 2 && *f[2] && !parse_u32_arg(f[2], &v))
		a->seeks = v;
	if (n >= 3 && *f[3] && !parse_u32_arg(f[3], &v))
		a->seekers = v;
}

static void files_arg(struct run_args *a, const char *s)
{
	char buf[256], *f[5] = { NULL };
	unsigned int n = fields(buf, sizeof(buf), s, ":", f);
	uint32_t v;
	if (n >= 1 && *f[1] && !parse_u32_arg(f[1], &v) && v <= INT32_MAX)
		a->max_size = (int32_t)v;
	if (n >= 2 && *f[2] && !parse_u32_arg(f[2], &v) && v <= INT32_MAX)
		a->min_size = (int32_t)v;
	if (n >= 3 && *f[3] && !parse_u32_arg(f[3], &v))
		a->num_dirs = v;
	if (n >= 4 && *f[4] && !parse_u32_arg(f[4], &v))
		a->file_chunk = v;
}

/*
 * Scan "bonnie DIR -s 16 -n 1:4k -z 42 -m e2e ...": the header's workload is
 * the run's argv joined by spaces, so a value is the next word (or the rest
 * of "--opt=value" / "-zVALUE"); the last occurrence wins, as with getopt.
 * Return: 1 if the trace is `iotap run bonnie`'s (2.x CSV), else 0.
 */
static int run_args_read(const struct iotap_report *rep, struct run_args *a)
{
	const char *w = rep->hdr.workload, *p, *q;
	char word[256], val[256];

	memset(a, 0, sizeof(*a));
	a->num_dirs = 1;
	a->seeks = 8192;
	a->seekers = 5;
	if (rep->hdr.source != IOTAP_SOURCE_WORKLOAD || !w || strncmp(w, "bonnie ", 7))
		return 0;
	for (p = w + 7; *p; p = q) {
		size_t l;
		int which = 0;	/* 1 -m, 2 -z, 3 -n, 4 -s */
		const char *v = NULL;

		while (*p == ' ')
			p++;
		for (q = p; *q && *q != ' '; q++)
			;
		l = (size_t)(q - p);
		if (!l)
			break;
		snprintf(word, sizeof(word), "%.*s", (int)l, p);
		if (!strcmp(word, "--bonnie-1.03"))
			return 0;	/* 1.03's CSV is another layout */
		if (!strcmp(word, "-m") || !strcmp(word, "--machine"))
			which = 1;
		else if (!strcmp(word, "-z") || !strcmp(word, "--seed"))
			which = 2;
		else if (!strcmp(word, "-n") || !strcmp(word, "--files"))
			which = 3;
		else if (!strcmp(word, "-s") || !strcmp(word, "--size"))
			which = 4;
		else if (!strncmp(word, "--machine=", 10))
			which = 1, v = word + 10;
		else if (!strncmp(word, "--seed=", 7))
			which = 2, v = word + 7;
		else if (!strncmp(word, "--files=", 8))
			which = 3, v = word + 8;
		else if (!strncmp(word, "--size=", 7))
			which = 4, v = word + 7;
		else if (word[0] == '-' && word[1] && strchr("mzns", word[1]) && word[2])
			which = (int)(strchr("mzns", word[1]) - "mzns") + 1, v = word + 2;
		if (!which)
			continue;
		if (!v) {
			const char *s = q, *e;

			while (*s == ' ')
				s++;
			for (e = s; *e && *e != ' '; e++)
				;
			if (e == s)
				break;
			snprintf(val, sizeof(val), "%.*s", (int)(e - s), s);
			v = val;
			q = e;
		}
		if (which == 1) {
			snprintf(a->name_buf, sizeof(a->name_buf), "%s", v);
			a->name = a->name_buf;
		} else if (which == 2) {
			a->has_seed = !parse_u32_arg(v, &a->seed);
		} else if (which == 3) {
			a->max_size = a->min_size = 0;
			a->num_dirs = 1;
			a->file_chunk = 0;
			files_arg(a, v);
		} else {
			size_arg(a, v);
		}
	}
	a->is_run = 1;
	return 1;
}

static uint64_t lat_max(const struct iotap_pstats *p, unsigned int a, unsigned int b)
{
	uint64_t m = 0;

	if (p->unit_max_ns)
		return p->unit_max_ns;	/* the workload timed the unit itself */
	if (p->lat[a])
		m = p->lat[a]->max;
	if (b < IOTAP_OP_MAX && p->lat[b] && p->lat[b]->max > m)
		m = p->lat[b]->max;
	return m;
}

/* Test @p's figures: @units is what its rate counts, @ns its latency. */
static void test_fig(struct iotap_bonnie_csv_test *c, const struct iotap_pstats *p, double units,
		     uint64_t ns)
{
	struct cpu_fig cpu;

	c->cpu_pct = -1;
	if (!p)
		return;
	c->elapsed_s = pstats_duration_s(p);
	c->units = units;
	if (c->elapsed_s > 0 && fig_cpu(p, &cpu)) {
		if (cpu.has_mark)
			c->cpu_pct = iotap_bonnie_cpu_pct(
				(double)(p->cpu_mark_end_ns - p->cpu_mark_begin_ns) / 1e9,
				c->elapsed_s);
		else
			c->cpu_pct = cpu.system_pct;
	}
	c->latency_s = (double)ns / 1e9;
}

static void print_run(FILE *f, const struct iotap_report *rep, const struct run_args *a,
		      const struct iotap_pstats *const *t)
{
	const struct iotap_pstats *wr = t[B_WRITE] ? t[B_WRITE] : t[B_REWRITE] ? t[B_REWRITE] : t[B_PUTC];
	unsigned int seekers = t[B_SEEKS] ? pstats_data_threads(t[B_SEEKS]) : 0;
	struct iotap_bonnie_csv l = { 0 };
	int k;

	l.version = "2.00a";
	l.name = a->name ? a->name : rep->hdr.host ? rep->hdr.host : "";
	l.has_seed = a->has_seed;
	l.seed = a->seed;
	if (wr || t[B_SEEKS] || t[B_READ]) {
		l.io = 1;
		if (wr) {
			uint64_t cs = dir_typical_size(&wr->wr);

			l.has_size = 1;
			l.file_mib = (wr->wr.bytes + (1u << 19)) >> 20;
			if (t[B_WRITE] && cs && cs != 8192)
				l.chunk = (uint32_t)cs;
		}
		l.seeks = t[B_SEEKS] && seekers ? t[B_SEEKS]->rd.ops : 0;
		l.seekers = seekers;
		if (a->is_run) {
			/* what the run was told: a seeker may finish without a ticket */
			l.seeks = a->seeks;
			l.seekers = a->seekers;
		}
	}
	if (t[B_SEQ_CREATE] || t[B_RAN_CREATE]) {
		const struct iotap_pstats *c = t[B_SEQ_CREATE] ? t[B_SEQ_CREATE] : t[B_RAN_CREATE];
		uint64_t files = c->op_count[IOTAP_OP_CREATE] + c->op_count[IOTAP_OP_MKNOD];

		l.files = 1;
		l.num_files = (files + 512) / 1024 ? (uint32_t)((files + 512) / 1024) : 1;
		l.max_size = a->max_size;
		l.min_size = a->min_size;
		l.num_dirs = a->num_dirs;
		l.file_chunk = a->file_chunk != 8192 ? a->file_chunk : 0;
	}
	if (t[B_PUTC])
		test_fig(&l.test[B_PUTC], t[B_PUTC], (double)t[B_PUTC]->wr.bytes / 1024,
			 lat_max(t[B_PUTC], IOTAP_OP_WRITE, IOTAP_OP_MAX));
	if (t[B_WRITE])
		test_fig(&l.test[B_WRITE], t[B_WRITE], (double)t[B_WRITE]->wr.bytes / 1024,
			 lat_max(t[B_WRITE], IOTAP_OP_WRITE, IOTAP_OP_MAX));
	if (t[B_REWRITE])
		test_fig(&l.test[B_REWRITE], t[B_REWRITE], (double)t[B_REWRITE]->wr.bytes / 1024,
			 lat_max(t[B_REWRITE], IOTAP_OP_READ, IOTAP_OP_WRITE));
	if (t[B_GETC])
		test_fig(&l.test[B_GETC], t[B_GETC], (double)t[B_GETC]->rd.bytes / 1024,
			 lat_max(t[B_GETC], IOTAP_OP_READ, IOTAP_OP_MAX));
	if (t[B_READ])
		test_fig(&l.test[B_READ], t[B_READ], (double)t[B_READ]->rd.bytes / 1024,
			 lat_max(t[B_READ], IOTAP_OP_READ, IOTAP_OP_MAX));
	if (t[B_SEEKS])
		test_fig(&l.test[B_SEEKS], t[B_SEEKS], (double)t[B_SEEKS]->rd.ops,
			 lat_max(t[B_SEEKS], IOTAP_OP_READ, IOTAP_OP_WRITE));
	for (k = B_SEQ_CREATE; k < B_TESTS; k++) {
		const struct iotap_pstats *p = t[k];
		double units;
		uint64_t ns;

		if (!p)
			continue;
		if (k == B_SEQ_CREATE || k == B_RAN_CREATE) {
			units = (double)(p->op_count[IOTAP_OP_CREATE] + p->op_count[IOTAP_OP_MKNOD]);
			ns = lat_max(p, IOTAP_OP_CREATE, IOTAP_OP_MKNOD);
		} else if (k == B_SEQ_STAT || k == B_RAN_STAT) {
			/*
			 * a stat() is a LOOKUP (with --entry-timeout 0) and a GETATTR
			 * of the file; the kernel also asks for the directory's
			 * attributes: count the files, not the requests
			 */
			uint64_t found = p->op_count[IOTAP_OP_LOOKUP] - p->op_errors[IOTAP_OP_LOOKUP];

			units = (double)(found > p->stat_files ? found : p->stat_files);
			ns = lat_max(p, IOTAP_OP_LOOKUP, IOTAP_OP_GETATTR);
		} else {
			units = (double)p->op_count[IOTAP_OP_UNLINK];
			ns = lat_max(p, IOTAP_OP_UNLINK, IOTAP_OP_MAX);
		}
		test_fig(&l.test[k], p, units, ns);
	}
	iotap_bonnie_csv_print(f, &l);
}

int iotap_report_print_bonnie_csv(const struct iotap_report *rep, FILE *f, struct iotap_analysis_err *err)
{
	const struct iotap_pstats *t[B_TESTS] = { NULL };
	int filled[B_TESTS] = { 0 }, any = 0, runs = 0;
	struct run_args a;
	unsigned int i;

	run_args_read(rep, &a);
	for (i = 0; i < rep->nphases; i++) {
		const struct iotap_pstats *p = &rep->phases[i];
		int k = test_of(p->name, filled);

		if (k < 0)
			continue;
		if (filled[k]) {
			if (++runs >= RUNS_MAX)
				break;
			print_run(f, rep, &a, t);
			memset(t, 0, sizeof(t));
			memset(filled, 0, sizeof(filled));
			k = test_of(p->name, filled);
		}
		t[k] = p;
		filled[k] = 1;
		any = 1;
	}
	if (!any) {
		return analysis_err_set(err, -EINVAL,
					"the phases of '%s' are not bonnie++'s (want putc, write, "
					"rewrite, getc, read, seeks, seq_create... or seq-write-1b, "
					"seq-write-8k, rewrite-8k, rand-read-8k, create, stat, unlink)",
					rep->path);
	}
	print_run(f, rep, &a, t);
	return 0;
}

unsigned int report_bonnie_names(const struct iotap_report *rep, const char **names)
{
	int filled[B_TESTS] = { 0 };
	unsigned int i, n = 0;

	for (i = 0; i < rep->nphases; i++) {
		int k = test_of(rep->phases[i].name, filled);

		names[i] = NULL;
		if (k < 0 || filled[k])
			continue;
		filled[k] = 1;
		names[i] = marker_names[k][0];	/* the canonical name */
		n++;
	}
	return n;
}
