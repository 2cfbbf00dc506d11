// SPDX-License-Identifier: MIT
/*
 * output_bonnie.c - bonnie++'s one-line CSV from a trace whose phases are bonnie's
 *
 * The layout is the one Debian's bonnie++ 2.00a writes and bon_csv2txt /
 * bon_csv2html read (format_version 1.98):
 *
 *   0 format_version  1 bonnie_version  2 name  3 concurrency  4 seed
 *   5 file_size  6 io_chunk_size  7 seeks  8 seekers
 *   9-20  putc, put_block, rewrite, getc, get_block, seeks (rate, %CP each)
 *   21 num_files  22 max_size  23 min_size  24 num_dirs  25 file_chunk_size
 *   26-37 seq_create, seq_stat, seq_del, ran_create, ran_stat, ran_del
 *   38-49 the twelve latencies ("565ms", "5243us")
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
 * capture does not know the application's own CPU).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opt.h"
#include "report.h"

enum {
	B_PUTC, B_WRITE, B_REWRITE, B_GETC, B_READ, B_SEEKS, B_SEQ_CREATE, B_SEQ_STAT,
	B_SEQ_DEL, B_RAN_CREATE, B_RAN_STAT, B_RAN_DEL, B_TESTS
};

#define MIN_TIME	0.5	/* bonnie.h MinTime */
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

/* bon_time.cpp print_size(): 8192 " km" -> "8k", 2048 "MG" -> "2G" */
static void print_size(char *buf, size_t len, uint64_t size, const char *units)
{
	int ind = 0;

	if (size == 0) {
		snprintf(buf, len, "0%c", units[0]);
	} else {
		while (size % 1024 == 0 && units[ind + 1] != '\0') {
			size /= 1024;
			ind++;
		}
		snprintf(buf, len, "%" PRIu64 "%c", size, units[ind]);
	}
	if (buf[0] && buf[strlen(buf) - 1] == ' ')
		buf[strlen(buf) - 1] = '\0';
}

static uint64_t lat_max(const struct pstats *p, unsigned int a, unsigned int b)
{
	uint64_t m = 0;

	if (p->lat[a])
		m = p->lat[a]->max;
	if (b < IOTAP_OP_MAX && p->lat[b] && p->lat[b]->max > m)
		m = p->lat[b]->max;
	return m;
}

static void rate_cell(FILE *f, const struct pstats *p, double units, int seeks)
{
	double d = p ? pstats_duration_s(p) : 0, cpu;

	if (!p || d <= 0) {
		fputs(",,", f);
		return;
	}
	if (d < MIN_TIME) {
		fputs(",+++++,+++", f);
		return;
	}
	if (seeks)
		fprintf(f, units / d >= 1000.0 ? ",%.0f" : ",%.1f", units / d);
	else
		fprintf(f, ",%d", (int)(units / d));
	if (fig_cpu_pct(p, &cpu))
		fprintf(f, ",%d", (int)cpu);
	else
		fputs(",", f);
}

static void latency_cell(FILE *f, const struct pstats *p, uint64_t ns)
{
	double l = (double)ns / 1e9;

	if (!p || !ns)
		fputs(",", f);
	else if (l > 99.999999)
		fprintf(f, ",%ds", (int)l);
	else if (l > 0.099999)
		fprintf(f, ",%dms", (int)(l * 1000.0));
	else
		fprintf(f, ",%dus", (int)(l * 1000000.0));
}

static void print_run(FILE *f, const struct report *rep, const struct pstats *const *t)
{
	const struct pstats *wr = t[B_WRITE] ? t[B_WRITE] : t[B_REWRITE] ? t[B_REWRITE] : t[B_PUTC];
	char size[32] = "", chunk[32] = "";
	unsigned int seekers = t[B_SEEKS] ? pstats_data_threads(t[B_SEEKS]) : 0;
	int k;

	fprintf(f, "1.98,2.00a,%s,1,", rep->hdr.host ? rep->hdr.host : "");
	if (wr) {
		uint64_t bytes = wr->wr.bytes, cs = dir_typical_size(&wr->wr);

		print_size(size, sizeof(size), (bytes + (1u << 19)) >> 20, "MG");
		if (t[B_WRITE] && cs && cs != 8192)
			print_size(chunk, sizeof(chunk), cs, " km");
	}
	if (wr || t[B_SEEKS] || t[B_READ])
		fprintf(f, ",%s,%s,%" PRIu64 ",%u", size, chunk,
			t[B_SEEKS] && seekers ? t[B_SEEKS]->rd.ops : 0, seekers);
	else
		fputs(",,,,", f);
	rate_cell(f, t[B_PUTC], t[B_PUTC] ? (double)t[B_PUTC]->wr.bytes / 1024 : 0, 0);
	rate_cell(f, t[B_WRITE], t[B_WRITE] ? (double)t[B_WRITE]->wr.bytes / 1024 : 0, 0);
	rate_cell(f, t[B_REWRITE], t[B_REWRITE] ? (double)t[B_REWRITE]->wr.bytes / 1024 : 0, 0);
	rate_cell(f, t[B_GETC], t[B_GETC] ? (double)t[B_GETC]->rd.bytes / 1024 : 0, 0);
	rate_cell(f, t[B_READ], t[B_READ] ? (double)t[B_READ]->rd.bytes / 1024 : 0, 0);
	rate_cell(f, t[B_SEEKS], t[B_SEEKS] ? (double)t[B_SEEKS]->rd.ops : 0, 1);
	if (t[B_SEQ_CREATE] || t[B_RAN_CREATE]) {
		const struct pstats *c = t[B_SEQ_CREATE] ? t[B_SEQ_CREATE] : t[B_RAN_CREATE];
		uint64_t files = c->op_count[IOTAP_OP_CREATE] + c->op_count[IOTAP_OP_MKNOD];

		fprintf(f, ",%" PRIu64 ",,,,", (files + 512) / 1024 ? (files + 512) / 1024 : 1);
	} else {
		fputs(",,,,,", f);
	}
	for (k = B_SEQ_CREATE; k < B_TESTS; k++) {
		const struct pstats *p = t[k];
		double units = 0;

		if (p && (k == B_SEQ_CREATE || k == B_RAN_CREATE))
			units = (double)(p->op_count[IOTAP_OP_CREATE] +
					 p->op_count[IOTAP_OP_MKNOD]);
		else if (p && (k == B_SEQ_STAT || k == B_RAN_STAT))
			units = (double)(p->op_count[IOTAP_OP_LOOKUP] -
								 p->op_errors[IOTAP_OP_LOOKUP] >
							 p->op_count[IOTAP_OP_GETATTR]
						 ? p->op_count[IOTAP_OP_LOOKUP] -
							   p->op_errors[IOTAP_OP_LOOKUP]
						 : p->op_count[IOTAP_OP_GETATTR]);
		else if (p)
			units = (double)p->op_count[IOTAP_OP_UNLINK];
		rate_cell(f, p, units, 0);
	}
	latency_cell(f, t[B_PUTC],
		     t[B_PUTC] ? lat_max(t[B_PUTC], IOTAP_OP_WRITE, IOTAP_OP_MAX) : 0);
	latency_cell(f, t[B_WRITE],
		     t[B_WRITE] ? lat_max(t[B_WRITE], IOTAP_OP_WRITE, IOTAP_OP_MAX) : 0);
	latency_cell(f, t[B_REWRITE],
		     t[B_REWRITE] ? lat_max(t[B_REWRITE], IOTAP_OP_READ, IOTAP_OP_WRITE) : 0);
	latency_cell(f, t[B_GETC], t[B_GETC] ? lat_max(t[B_GETC], IOTAP_OP_READ, IOTAP_OP_MAX) : 0);
	latency_cell(f, t[B_READ], t[B_READ] ? lat_max(t[B_READ], IOTAP_OP_READ, IOTAP_OP_MAX) : 0);
	latency_cell(f, t[B_SEEKS],
		     t[B_SEEKS] ? lat_max(t[B_SEEKS], IOTAP_OP_READ, IOTAP_OP_WRITE) : 0);
	for (k = B_SEQ_CREATE; k < B_TESTS; k++) {
		const struct pstats *p = t[k];
		uint64_t ns = 0;

		if (p && (k == B_SEQ_CREATE || k == B_RAN_CREATE))
			ns = lat_max(p, IOTAP_OP_CREATE, IOTAP_OP_MKNOD);
		else if (p && (k == B_SEQ_STAT || k == B_RAN_STAT))
			ns = lat_max(p, IOTAP_OP_LOOKUP, IOTAP_OP_GETATTR);
		else if (p)
			ns = lat_max(p, IOTAP_OP_UNLINK, IOTAP_OP_MAX);
		latency_cell(f, p, ns);
	}
	fputc('\n', f);
}

int report_print_bonnie_csv(const struct report *rep, FILE *f)
{
	const struct pstats *t[B_TESTS] = { NULL };
	int filled[B_TESTS] = { 0 }, any = 0, runs = 0;
	unsigned int i;

	for (i = 0; i < rep->nphases; i++) {
		const struct pstats *p = &rep->phases[i];
		int k = test_of(p->name, filled);

		if (k < 0)
			continue;
		if (filled[k]) {
			if (++runs >= RUNS_MAX)
				break;
			print_run(f, rep, t);
			memset(t, 0, sizeof(t));
			memset(filled, 0, sizeof(filled));
			k = test_of(p->name, filled);
		}
		t[k] = p;
		filled[k] = 1;
		any = 1;
	}
	if (!any) {
		die_msg("the phases of '%s' are not bonnie++'s (want putc, write, rewrite, getc, "
			"read, seeks, seq_create... or seq-write-1b, seq-write-8k, rewrite-8k, "
			"rand-read-8k, create, stat, unlink)", rep->path);
		return -EINVAL;
	}
	print_run(f, rep, t);
	return 0;
}

unsigned int report_bonnie_names(const struct report *rep, const char **names)
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
