// SPDX-License-Identifier: MIT
/*
 * bonnie.c - bonnie++'s one-line CSV, for the workload and the report alike
 *
 * The layout is the one Debian's bonnie++ 2.00a writes (bon_time.cpp,
 * format_version 1.98) and bon_csv2txt / bon_csv2html read:
 *
 *   0 format_version  1 bonnie_version  2 name  3 concurrency  4 seed
 *   5 file_size  6 io_chunk_size  7 seeks  8 seekers
 *   9-20  putc, put_block, rewrite, getc, get_block, seeks (rate, %CP each)
 *   21 num_files  22 max_size  23 min_size  24 num_dirs  25 file_chunk_size
 *   26-37 seq_create, seq_stat, seq_del, ran_create, ran_stat, ran_del
 *   38-49 the twelve latencies ("565ms", "5243us")
 *
 * It lives here, under trace/, because both its writers sit above it and
 * neither may use the other: workload/ (`iotap run bonnie`, from what it
 * timed) and tools/ (`iotap report --bonnie-csv`, from a trace). Both fill
 * struct iotap_bonnie_csv and the formatting — "+++++" for a test under
 * half a second, the rate's precision, the latency's unit — happens once.
 *
 * Where 2.00a prints something other than its header names (it leaves
 * io_chunk_size empty and puts num_dirs in the file_chunk_size column),
 * the columns here hold what the header names them.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "iotap_base.h"

#define CSV_VERSION	"1.98"

void iotap_bonnie_size(char *buf, size_t len, uint64_t size, const char *units)
{
	int ind = 0;
	size_t l;

	if (!units || !*units) {
		snprintf(buf, len, "%" PRIu64, size);
		return;
	}
	if (size == 0) {
		snprintf(buf, len, "0%c", units[0]);
	} else {
		while (size % 1024 == 0 && units[ind + 1] != '\0') {
			size /= 1024;
			ind++;
		}
		snprintf(buf, len, "%" PRIu64 "%c", size, units[ind]);
	}
	l = strlen(buf);
	if (l && buf[l - 1] == ' ')
		buf[l - 1] = '\0';
}

/* rate and %CP of test @t */
static void stat_cells(FILE *f, const struct iotap_bonnie_csv_test *t, int seeks)
{
	double v;

	if (t->elapsed_s <= 0) {
		fputs(",,", f);
		return;
	}
	if (t->elapsed_s < IOTAP_BONNIE_MIN_TIME) {
		fputs(",+++++,+++", f);
		return;
	}
	v = t->units / t->elapsed_s;
	if (seeks)
		fprintf(f, v >= 1000.0 ? ",%.0f" : ",%.1f", v);
	else
		fprintf(f, ",%d", (int)v);
	if (t->cpu_pct >= 0)
		fprintf(f, ",%d", (int)t->cpu_pct);
	else
		fputs(",", f);
}

/* bon_time.cpp print_latency(): "%ds", "%dms" or "%dus" of the longest unit */
static void latency_cell(FILE *f, const struct iotap_bonnie_csv_test *t)
{
	double l = t->elapsed_s > 0 ? t->latency_s : 0;

	if (l > 99.999999)
		fprintf(f, ",%ds", (int)l);
	else if (l > 0.099999)
		fprintf(f, ",%dms", (int)(l * 1000.0));
	else if (l > 0)
		fprintf(f, ",%dus", (int)(l * 1000000.0));
	else
		fputs(",", f);
}

void iotap_bonnie_csv_print(FILE *f, const struct iotap_bonnie_csv *l)
{
	char buf[64];
	unsigned int t;

	fprintf(f, CSV_VERSION ",%s,%s,1,", l->version ? l->version : "2.00a",
		l->name ? l->name : "");
	if (l->has_seed)
		fprintf(f, "%" PRIu32, l->seed);
	if (l->io) {
		buf[0] = '\0';
		if (l->has_size)
			iotap_bonnie_size(buf, sizeof(buf), l->file_mib, "MG");
		fprintf(f, ",%s,", buf);
		if (l->chunk)
			iotap_bonnie_size(buf, sizeof(buf), l->chunk, " km"), fputs(buf, f);
		fprintf(f, ",%" PRIu64 ",%u", l->seeks, l->seekers);
	} else {
		fputs(",,,,", f);
	}
	for (t = 0; t < IOTAP_BONNIE_CSV_IO; t++)
		stat_cells(f, &l->test[t], t == IOTAP_BONNIE_CSV_IO - 1);
	if (l->files) {
		fprintf(f, ",%" PRIu32 ",", l->num_files);
		if (l->max_size)
			fprintf(f, "%" PRId32, l->max_size);
		fputc(',', f);
		if (l->min_size)
			fprintf(f, "%" PRId32, l->min_size);
		fputc(',', f);
		if (l->num_dirs > 1)
			fprintf(f, "%" PRIu32, l->num_dirs);
		fputc(',', f);
		if (l->file_chunk)
			iotap_bonnie_size(buf, sizeof(buf), l->file_chunk, " km"), fputs(buf, f);
	} else {
		fputs(",,,,,", f);
	}
	for (t = IOTAP_BONNIE_CSV_IO; t < IOTAP_BONNIE_CSV_TESTS; t++)
		stat_cells(f, &l->test[t], 0);
	for (t = 0; t < IOTAP_BONNIE_CSV_TESTS; t++)
		latency_cell(f, &l->test[t]);
	fputc('\n', f);
}

/*
 * The header exactly as bonnie++ 2.00a prints it (bonnie++.cpp): it names no
 * seeks and seekers columns though every line has them, so its names sit
 * two columns off from putc on. Tools written for bonnie++ expect this line.
 */
void iotap_bonnie_csv_print_header(FILE *f)
{
	fputs("format_version,bonnie_version,name,concurrency,seed,file_size,io_chunk_size,"
	      "putc,putc_cpu,put_block,put_block_cpu,rewrite,rewrite_cpu,getc,getc_cpu,"
	      "get_block,get_block_cpu,seeks,seeks_cpu,num_files,max_size,min_size,num_dirs,"
	      "file_chunk_size,seq_create,seq_create_cpu,seq_stat,seq_stat_cpu,seq_del,"
	      "seq_del_cpu,ran_create,ran_create_cpu,ran_stat,ran_stat_cpu,ran_del,ran_del_cpu,"
	      "putc_latency,put_block_latency,rewrite_latency,getc_latency,get_block_latency,"
	      "seeks_latency,seq_create_latency,seq_stat_latency,seq_del_latency,"
	      "ran_create_latency,ran_stat_latency,ran_del_latency\n", f);
}
