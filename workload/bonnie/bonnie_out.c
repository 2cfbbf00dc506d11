// SPDX-License-Identifier: MIT
/*
 * bonnie_out.c - bonnie++'s text tables and CSV, from measured figures
 *
 * The layouts are bonnie++'s own (bon_time.cpp: BonTimer::DoReportIO and
 * DoReportFile in 2.00a, DoReport in 1.03), down to the 19-column name
 * field, "+++++" for a test that ran under half a second and blank
 * columns for tests not run, so that Debian's bon_csv2txt and
 * bon_csv2html read the CSV and old tables line up with new ones.
 *
 * Where 2.00a prints something other than what it measured, this prints
 * the measurement: its text table shows the file tests' rates through a
 * printf("%d") of a double (garbage), its CSV leaves io_chunk_size empty
 * and puts num_dirs in the file_chunk_size column. Here the text shows the
 * rate, and the CSV columns hold what the header names them.
 *
 * Units as bonnie++: K/sec is KiB/s; seeks and files are per second; %CP
 * is CPU time over wall time of the test, in percent, truncated.
 *
 * The 2.x CSV line is written by trace/base/bonnie.c, which `iotap report
 * --bonnie-csv` uses too: the run and the report of its trace print one
 * line. The text tables and 1.03's CSV are the run's alone.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "iotap_base.h"
#include "iotap_bonnie.h"
#include "workload_i.h"

#define MIN_TIME	IOTAP_BONNIE_MIN_TIME	/* bonnie.h MinTime: shorter tests print +++++ */
#define TXT_MACHINE	20

static const char *version(const struct iotap_workload_bonnie_opts *o)
{
	return o->flags & IOTAP_BONNIE_103 ? "1.03" : "2.00a";
}

static int v103(const struct iotap_workload_bonnie_opts *o)
{
	return !!(o->flags & IOTAP_BONNIE_103);
}

static uint64_t char_mib(const struct iotap_workload_bonnie_opts *o)
{
	if (!o->char_mib)
		return 0;
	if (v103(o) || o->char_mib > o->file_mib)
		return o->file_mib;
	return o->char_mib;
}

/* What bonnie++ divides by the time: KiB, seeks or files. */
static double test_size(const struct iotap_workload_bonnie_opts *o, unsigned int t)
{
	switch (t) {
	case IOTAP_BONNIE_PUTC:
	case IOTAP_BONNIE_GETC:
		return (double)char_mib(o) * 1024;
	case IOTAP_BONNIE_WRITE:
	case IOTAP_BONNIE_REWRITE:
	case IOTAP_BONNIE_READ:
		return (double)o->file_mib * 1024;
	case IOTAP_BONNIE_SEEKS:
		return o->seeks;
	default:
		return (double)o->num_files * 1024;
	}
}

/* A test counts when it ran to its end: partial ones are blank, like unrun ones. */
static double elapsed(const struct iotap_workload_bonnie_result *r, unsigned int t)
{
	const struct iotap_workload_phase_result *p = &r->test[t];

	if (!p->ran || p->partial)
		return 0;
	return p->elapsed_s > 0 ? p->elapsed_s : 1e-9;
}

static void cpu_stat(FILE *f, int csv, const struct iotap_workload_bonnie_result *r,
		     unsigned int t)
{
	double e = elapsed(r, t);

	if (e == 0)
		fputs(csv ? "," : "    ", f);
	else if (e < MIN_TIME)
		fputs(csv ? ",+++" : " +++", f);
	else
		fprintf(f, csv ? ",%d" : " %3d", (int)(r->test[t].cpu_s / e * 100.0));
}

static void print_stat(FILE *f, int csv, const struct iotap_workload_bonnie_opts *o,
		 const struct iotap_workload_bonnie_result *r, unsigned int t)
{
	double e = elapsed(r, t), v;

	if (e == 0) {
		fputs(csv ? "," : "      ", f);
	} else if (e < MIN_TIME) {
		fputs(csv ? ",+++++" : " +++++", f);
	} else {
		v = test_size(o, t) / e;
		if (t == IOTAP_BONNIE_SEEKS) {
			if (csv)
				fprintf(f, v >= 1000.0 && !v103(o) ? ",%.0f" : ",%.1f", v);
			else
				fprintf(f, v >= 1000.0 ? " %5.0f" : " %5.1f", v);
		} else if (csv || v103(o) || t > IOTAP_BONNIE_SEEKS) {
			fprintf(f, csv ? ",%d" : " %5d", (int)v);
		} else if (v < 10000.0) {
			fprintf(f, " %4dk", (int)v);
		} else if (v / 1024.0 < 1000.0) {
			v /= 1024.0;
			if (v < 100.0)
				fprintf(f, " %4.1fm", v);
			else
				fprintf(f, " %4dm", (int)(v + 0.5));
		} else {
			fprintf(f, " %4.1fg", v / 1024.0 / 1024.0);
		}
	}
	cpu_stat(f, csv, r, t);
}

/* bon_time.cpp print_latency(): "%ds", "%dms" or "%dus" of the longest unit */
static void latency(FILE *f, int csv, const struct iotap_workload_bonnie_result *r, unsigned int t)
{
	double l = elapsed(r, t) > 0 ? r->test[t].latency_max_s : 0;
	char buf[32] = "";

	if (l > 99.999999)
		snprintf(buf, sizeof(buf), "%ds", (int)l);
	else if (l > 0.099999)
		snprintf(buf, sizeof(buf), "%dms", (int)(l * 1000.0));
	else if (l > 0)
		snprintf(buf, sizeof(buf), "%dus", (int)(l * 1000000.0));
	fprintf(f, csv ? ",%s" : " %9s", buf);
}

/* The 19-column "name size" field: name cut to fit, size right-aligned. */
static void name_size(FILE *f, const char *machine, const char *size)
{
	char buf[TXT_MACHINE + 64];
	int off = TXT_MACHINE - (int)strlen(size) - 2;
	char *cur = buf;

	snprintf(buf, TXT_MACHINE - 1, "%s                  ", machine);
	if (off >= 0) {
		cur = &buf[off];
		*cur++ = ' ';
	}
	strcpy(cur, size);
	fputs(buf, f);
}

static const char *machine(const struct iotap_workload_bonnie_opts *o)
{
	return o->machine ? o->machine : "";
}

static void partial_note(FILE *f, const struct iotap_workload_bonnie_result *r)
{
	unsigned int t;

	if (!r->partial && !r->failed)
		return;
	for (t = 0; t < IOTAP_BONNIE_TESTS; t++)
		if (r->test[t].partial)
			break;
	fprintf(f, "*** partial results: %s during '%s'; that test and later ones are blank ***\n",
		r->partial ? "interrupted" : "failed",
		t < IOTAP_BONNIE_TESTS ? iotap_workload_bonnie_test_name(t) : "setup");
}

/* --- 2.00a ------------------------------------------------------------------ */

static void text_io_2x(FILE *f, const struct iotap_workload_bonnie_opts *o,
		       const struct iotap_workload_bonnie_result *r)
{
	char size[256];
	unsigned int t;
	size_t l;

	fprintf(f, "Version %5s       ------Sequential Output------ --Sequential Input- --Random-\n",
		version(o));
	fputs("                    -Per Chr- --Block-- -Rewrite- -Per Chr- --Block-- --Seeks--\n", f);
	fputs("Name:Size etc        /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP\n", f);
	/* size:chunk:concurrency:seeks:seekers, defaults left out, trailing ':'s cut */
	iotap_bonnie_size(size, sizeof(size), o->file_mib, "MG");
	l = strlen(size);
	l += (size_t)snprintf(size + l, sizeof(size) - l, ":");
	if (o->chunk != 8192)
		iotap_bonnie_size(size + l, sizeof(size) - l, o->chunk, " km");
	l = strlen(size);
	l += (size_t)snprintf(size + l, sizeof(size) - l, "::");
	if (o->seeks != 8192)
		l += (size_t)snprintf(size + l, sizeof(size) - l, "%u", o->seeks);
	l += (size_t)snprintf(size + l, sizeof(size) - l, ":");
	if (o->seekers != 5)
		l += (size_t)snprintf(size + l, sizeof(size) - l, "%u", o->seekers);
	while (l > 0 && size[l - 1] == ':')
		size[--l] = '\0';
	name_size(f, machine(o), size);
	for (t = IOTAP_BONNIE_PUTC; t <= IOTAP_BONNIE_SEEKS; t++)
		print_stat(f, 0, o, r, t);
	fputs("\nLatency          ", f);
	for (t = IOTAP_BONNIE_PUTC; t <= IOTAP_BONNIE_SEEKS; t++)
		latency(f, 0, r, t);
	fputc('\n', f);
}

static void files_desc(char *buf, size_t len, const struct iotap_workload_bonnie_opts *o)
{
	size_t l;

	snprintf(buf, len, "%u", o->num_files);
	l = strlen(buf);
	if (o->max_size)
		snprintf(buf + l, len - l, ":%d:%d", o->max_size, o->min_size);
	l = strlen(buf);
	if (o->num_dirs > 1)
		snprintf(buf + l, len - l, "/%u", o->num_dirs);
}

/* The file tests' last header line and their figures, as both versions print them. */
static void files_stats(FILE *f, const struct iotap_workload_bonnie_opts *o,
			const struct iotap_workload_bonnie_result *r)
{
	char buf[128];
	unsigned int t;

	files_desc(buf, sizeof(buf), o);
	if (o->min_size)
		fputs("files:max:min       ", f);
	else if (o->max_size)
		fputs("files:max           ", f);
	else
		fputs("              files ", f);
	fputs(" /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP\n", f);
	fprintf(f, "%19s", buf);
	for (t = IOTAP_BONNIE_SEQ_CREATE; t < IOTAP_BONNIE_TESTS; t++)
		print_stat(f, 0, o, r, t);
}

static void text_files_2x(FILE *f, const struct iotap_workload_bonnie_opts *o,
			  const struct iotap_workload_bonnie_result *r)
{
	unsigned int t;

	fprintf(f, "Version %5s       ------Sequential Create------ --------Random Create--------\n",
		version(o));
	fprintf(f, "%-19.19s -Create-- --Read--- -Delete-- -Create-- --Read--- -Delete--\n",
		machine(o));
	files_stats(f, o, r);
	fputs("\nLatency          ", f);
	for (t = IOTAP_BONNIE_SEQ_CREATE; t < IOTAP_BONNIE_TESTS; t++)
		latency(f, 0, r, t);
	fputc('\n', f);
}

/* One line of the 2.x CSV: the shared writer (trace/base/bonnie.c) formats it. */
static void csv_2x(FILE *f, const struct iotap_workload_bonnie_opts *o,
		   const struct iotap_workload_bonnie_result *r)
{
	struct iotap_bonnie_csv l = { 0 };
	unsigned int t;

	l.version = version(o);
	l.name = machine(o);
	l.has_seed = 1;
	l.seed = o->seed;
	if (o->file_mib) {
		l.io = l.has_size = 1;
		l.file_mib = o->file_mib;
		l.chunk = o->chunk != 8192 ? o->chunk : 0;
		l.seeks = o->seeks;
		l.seekers = o->seekers;
	}
	if (o->num_files) {
		l.files = 1;
		l.num_files = o->num_files;
		l.max_size = o->max_size;
		l.min_size = o->min_size;
		l.num_dirs = o->num_dirs;
		l.file_chunk = o->file_chunk != 8192 ? o->file_chunk : 0;
	}
	for (t = 0; t < IOTAP_BONNIE_TESTS; t++) {
		struct iotap_bonnie_csv_test *c = &l.test[t];

		c->elapsed_s = elapsed(r, t);
		c->units = test_size(o, t);
		c->cpu_pct = c->elapsed_s > 0 ? iotap_bonnie_cpu_pct(r->test[t].cpu_s, c->elapsed_s)
					      : -1;
		c->latency_s = r->test[t].latency_max_s;
	}
	iotap_bonnie_csv_print(f, &l);
}

/* --- 1.03 ---------------------------------------------------------------------- */

static void size_103(char *buf, size_t len, const struct iotap_workload_bonnie_opts *o)
{
	size_t l;

	if (o->file_mib % 1024 == 0)
		snprintf(buf, len, "%uG", o->file_mib / 1024);
	else
		snprintf(buf, len, "%uM", o->file_mib);
	l = strlen(buf);
	if (o->chunk != 8192) {
		if (o->chunk >= 1024)
			snprintf(buf + l, len - l, ":%uk", o->chunk / 1024);
		else
			snprintf(buf + l, len - l, ":%u", o->chunk);
	}
}

static void text_103(FILE *f, const struct iotap_workload_bonnie_opts *o,
		     const struct iotap_workload_bonnie_result *r)
{
	char buf[128];
	unsigned int t;

	if (o->file_mib) {
		fprintf(f, "Version %5s       ------Sequential Output------ --Sequential Input- --Random-\n",
			version(o));
		fputs("                    -Per Chr- --Block-- -Rewrite- -Per Chr- --Block-- --Seeks--\n", f);
		fputs(o->chunk == 8192 ? "Machine        Size " : "Machine   Size:chnk ", f);
		fputs("K/sec %CP K/sec %CP K/sec %CP K/sec %CP K/sec %CP  /sec %CP\n", f);
		size_103(buf, sizeof(buf), o);
		name_size(f, machine(o), buf);
		for (t = IOTAP_BONNIE_PUTC; t <= IOTAP_BONNIE_SEEKS; t++)
			print_stat(f, 0, o, r, t);
		fputc('\n', f);
	}
	if (!o->num_files)
		return;
	if (o->file_mib)
		fputs("                    ", f);
	else
		fprintf(f, "Version %5s       ", version(o));
	fputs("------Sequential Create------ --------Random Create--------\n", f);
	if (o->file_mib)
		fputs("                    ", f);
	else
		fprintf(f, "%-19.19s ", machine(o));
	fputs("-Create-- --Read--- -Delete-- -Create-- --Read--- -Delete--\n", f);
	files_stats(f, o, r);
	fputc('\n', f);
}

static void csv_103(FILE *f, const struct iotap_workload_bonnie_opts *o,
		    const struct iotap_workload_bonnie_result *r)
{
	char buf[128];
	unsigned int t;

	if (o->file_mib) {
		size_103(buf, sizeof(buf), o);
		fprintf(f, "%s,%s", machine(o), buf);
		for (t = IOTAP_BONNIE_PUTC; t <= IOTAP_BONNIE_SEEKS; t++)
			print_stat(f, 1, o, r, t);
	} else {
		fprintf(f, "%s,,,,,,,,,,,,,", machine(o));
	}
	if (o->num_files) {
		files_desc(buf, sizeof(buf), o);
		fprintf(f, ",%s", buf);
		for (t = IOTAP_BONNIE_SEQ_CREATE; t < IOTAP_BONNIE_TESTS; t++)
			print_stat(f, 1, o, r, t);
		fputc('\n', f);
	} else {
		fputs(",,,,,,,,,,,,,\n", f);
	}
}

/* --- public ---------------------------------------------------------------------- */

void iotap_workload_bonnie_print_text(FILE *f, const struct iotap_workload_bonnie_opts *o,
				      const struct iotap_workload_bonnie_result *r)
{
	partial_note(f, r);
	if (v103(o)) {
		text_103(f, o, r);
		return;
	}
	if (o->file_mib)
		text_io_2x(f, o, r);
	if (o->num_files)
		text_files_2x(f, o, r);
}

void iotap_workload_bonnie_print_csv_header(FILE *f, const struct iotap_workload_bonnie_opts *o)
{
	if (v103(o)) {
		fputs("name,file_size,putc,putc_cpu,put_block,put_block_cpu,rewrite,rewrite_cpu,"
		      "getc,getc_cpu,get_block,get_block_cpu,seeks,seeks_cpu,num_files,seq_create,"
		      "seq_create_cpu,seq_stat,seq_stat_cpu,seq_del,seq_del_cpu,ran_create,"
		      "ran_create_cpu,ran_stat,ran_stat_cpu,ran_del,ran_del_cpu\n", f);
		return;
	}
	iotap_bonnie_csv_print_header(f);
}

void iotap_workload_bonnie_print_csv(FILE *f, const struct iotap_workload_bonnie_opts *o,
				     const struct iotap_workload_bonnie_result *r)
{
	if (v103(o))
		csv_103(f, o, r);
	else
		csv_2x(f, o, r);
}

/* Mean and sample standard deviation of the runs that timed test @t. */
static int mean_sd(const struct iotap_workload_bonnie_opts *o,
		   const struct iotap_workload_bonnie_result *r, unsigned int n, unsigned int t,
		   int cpu, double *mean, double *sd, unsigned int *used, unsigned int *fast)
{
	double sum = 0, sq = 0;
	unsigned int i;

	*used = *fast = 0;
	for (i = 0; i < n; i++) {
		double e = elapsed(&r[i], t), v;

		if (e == 0)
			continue;
		if (e < MIN_TIME) {
			(*fast)++;
			continue;
		}
		v = cpu ? r[i].test[t].cpu_s / e * 100.0 : test_size(o, t) / e;
		sum += v;
		sq += v * v;
		(*used)++;
	}
	if (!*used)
		return 0;
	*mean = sum / *used;
	*sd = *used > 1 ? sqrt(fmax(0, (sq - sum * sum / *used) / (*used - 1))) : 0;
	return 1;
}

void iotap_workload_bonnie_print_summary(FILE *f, const struct iotap_workload_bonnie_opts *o,
					 const struct iotap_workload_bonnie_result *r,
					 unsigned int n)
{
	static const char *const label[IOTAP_BONNIE_TESTS] = {
		"Per Chr output", "Block output", "Rewrite", "Per Chr input", "Block input",
		"Random seeks", "Sequential create", "Sequential read", "Sequential delete",
		"Random create", "Random read", "Random delete",
	};
	unsigned int t;

	fprintf(f, "\nmean ± sd of %u runs (%s, %s; sd of the runs, n-1):\n", n, machine(o),
		v103(o) ? "bonnie++ 1.03 model" : "bonnie++ 2.00a model");
	fprintf(f, "%-18s %14s %14s %8s\n", "test", "rate", "sd", "%CP");
	for (t = 0; t < IOTAP_BONNIE_TESTS; t++) {
		const char *unit = t < IOTAP_BONNIE_SEEKS ? "K/sec" : "/sec";
		double m, sd, cm = 0, csd = 0;
		unsigned int used, fast, cu, cf;

		if (!mean_sd(o, r, n, t, 0, &m, &sd, &used, &fast)) {
			if (fast)
				fprintf(f, "%-18s %14s %14s %8s  (%u of %u runs under %.1f s)\n",
					label[t], "+++++", "", "+++", fast, n, MIN_TIME);
			continue;
		}
		mean_sd(o, r, n, t, 1, &cm, &csd, &cu, &cf);
		fprintf(f, "%-18s %8.1f %-5s %8.1f %-5s %3.0f ± %-3.0f", label[t], m, unit, sd,
			unit, cm, csd);
		if (used < n)
			fprintf(f, "  (%u of %u runs timed)", used, n);
		fputc('\n', f);
	}
}
