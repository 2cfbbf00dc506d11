/* SPDX-License-Identifier: MIT */
/*
 * iotap_iozone.h - the iozone model's API (workload/iozone/): iozone's tests
 *
 * Over the run context of iotap_workload.h; its conventions hold here.
 */
#ifndef IOTAP_IOZONE_H
#define IOTAP_IOZONE_H

#include <stdint.h>
#include <stdio.h>

#include "iotap_workload.h"

#define IOTAP_IOZONE_T_WRITE	(1u << 0)	/* -i 0: write, rewrite */
#define IOTAP_IOZONE_T_READ	(1u << 1)	/* -i 1: read, re-read */
#define IOTAP_IOZONE_T_RANDOM	(1u << 2)	/* -i 2: random read, random write */

#define IOTAP_IOZONE_DIRECT	(1u << 0)	/* -I: O_DIRECT */
#define IOTAP_IOZONE_FSYNC	(1u << 1)	/* -e: fsync inside the write timing */
#define IOTAP_IOZONE_CLOSE	(1u << 2)	/* -c: close inside the timing */
#define IOTAP_IOZONE_NOSTONEWALL (1u << 3)	/* -x: no stonewalling in -t mode */

/* The six tests in iozone's column order. */
enum iotap_iozone_test {
	IOTAP_IOZONE_WRITE,
	IOTAP_IOZONE_REWRITE,
	IOTAP_IOZONE_READ,
	IOTAP_IOZONE_REREAD,
	IOTAP_IOZONE_RANDOM_READ,
	IOTAP_IOZONE_RANDOM_WRITE,
	IOTAP_IOZONE_TESTS
};

struct iotap_workload_iozone_opts {
	unsigned int tests;		/* IOTAP_IOZONE_T_* (write is implied by the others) */
	unsigned int flags;		/* IOTAP_IOZONE_* */
	int automode;			/* -a */
	uint64_t file_kb;		/* -s (single run, or -a's only size if set) */
	uint64_t rec_kb;		/* -r (single run, or -a's only record size if set) */
	uint64_t min_file_kb, max_file_kb;	/* -a range (-n, -g) */
	uint64_t min_rec_kb, max_rec_kb;	/* -a range (-y, -q) */
	unsigned int threads;		/* -t N: throughput mode; 0: off */
};

void iotap_workload_iozone_opts_init(struct iotap_workload_iozone_opts *o);

/* One row of iozone's table: one (file size, record size) pair. */
struct iotap_workload_iozone_row {
	uint64_t file_kb, rec_kb;
	int skipped;			/* -a skipped this small record for a large file */
	uint64_t kb_per_s[IOTAP_IOZONE_TESTS];	/* 0: not run */
	struct iotap_workload_phase_result ph[IOTAP_IOZONE_TESTS];
};

/* Throughput mode (-t) figures of one test, as iozone prints them. */
struct iotap_workload_iozone_tput {
	int ran;
	double children_kb_s;		/* sum of each thread's KB/s */
	double parent_kb_s;		/* all KB over the wall time */
	double min_kb_s, max_kb_s, avg_kb_s;
	double min_xfer_kb;		/* least KB a thread moved before the stonewall */
	struct iotap_workload_phase_result ph;
};

struct iotap_workload_iozone_result {
	struct iotap_workload_iozone_row *rows;
	unsigned int nrows;
	struct iotap_workload_iozone_tput tput[IOTAP_IOZONE_TESTS];
	int partial, failed;
};

/*
 * iotap_workload_iozone_run - iozone's auto, single or throughput run
 * @live: iozone's running table is printed here row by row (NULL: none)
 *
 * Return: 0, -EINTR, or -errno. Free @r with iotap_workload_iozone_result_release().
 */
int iotap_workload_iozone_run(struct iotap_workload_ctx *c,
			      const struct iotap_workload_iozone_opts *o,
			      struct iotap_workload_iozone_result *r, FILE *live);
void iotap_workload_iozone_result_release(struct iotap_workload_iozone_result *r);
/* iozone's preamble (mode, sizes, units). */
void iotap_workload_iozone_print_header(FILE *f, const struct iotap_workload_iozone_opts *o,
					const char *cmdline);
/* iozone's table (kB, reclen, write, rewrite, read, reread, random read, random write). */
void iotap_workload_iozone_print_table(FILE *f, const struct iotap_workload_iozone_opts *o,
				       const struct iotap_workload_iozone_result *r);
/* -R: "Excel output": one table per test, file sizes down, record sizes across. */
void iotap_workload_iozone_print_report(FILE *f, const struct iotap_workload_iozone_opts *o,
					const struct iotap_workload_iozone_result *r);
/* -t: iozone's per-test throughput lines and its summary table. */
void iotap_workload_iozone_print_tput(FILE *f, const struct iotap_workload_iozone_opts *o,
				      const struct iotap_workload_iozone_result *r);

#endif /* IOTAP_IOZONE_H */
