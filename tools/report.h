/* SPDX-License-Identifier: MIT */
/*
 * report.h - a trace reduced to phases, and its output
 *
 * report_build() streams a trace once and fills a struct report: one
 * struct pstats per phase and one for the whole trace, the trace cut into
 * time bins (struct series), a decimated sample of data ops for seek maps,
 * and the names of files. Phases come from PHASE markers when the trace
 * has them, from another trace's phases (--phases-from, by op order), or
 * are found automatically (phase.h). report_flags() then looks for odd
 * things. Memory is bounded by the number of files, bins and phases,
 * never by the number of records.
 *
 * The output functions (output.c: text, CSV, JSON, time series, bonnie++
 * CSV; html.c: the HTML page) and compare (cmd_compare.c) share it.
 */
#ifndef IOTAP_REPORT_H
#define IOTAP_REPORT_H

#include <stdio.h>

#include "iotap_trace.h"
#include "stat.h"

#define REPORT_FLAGS_MAX	8
/* Most phases a report keeps (memory: each is a few KiB to a few tens of KiB);
 * what later markers would start is counted in one "(later phases)". */
#define REPORT_PHASES_MAX	2048
#define REPORT_FLAG_LEN		240

/* Odd things found in one phase (or the whole trace). */
struct flagset {
	unsigned int n;
	char text[REPORT_FLAGS_MAX][REPORT_FLAG_LEN];	/* "keyword: explanation" */
};

/* Phase boundaries taken from another trace (--phases-from). */
struct phase_plan {
	unsigned int n;
	char (*names)[128];
	uint64_t *ord;			/* op ordinal (FORGET not counted) of phase i's start */
	uint64_t total_ops;		/* ops of the trace it came from, same counting */
	const char *from;		/* its path */
};

enum report_by { BY_NONE, BY_OP, BY_FILE, BY_TID };

struct report_opts {
	int auto_phases;		/* 1: find phases even when the trace has markers */
	uint64_t gap_ns;		/* idle gap that starts an automatic phase (0: 1 s) */
	uint64_t interval_ns;		/* time bin asked for (0: 100 ms) */
	uint64_t max_bins;		/* most bins (0: 32768); wider bins beyond */
	const struct phase_plan *plan;	/* --phases-from */
	double flag_factor;		/* flag throughput changes above this factor (0: 4) */
	uint64_t points;		/* data ops kept for seek maps (0: none) */
	int keep_names;			/* remember file names (seek maps, --by file) */
};

/* File id -> name, from NAME records. */
struct name_map {
	uint64_t *keys;			/* file id + 1, 0 = empty */
	uint64_t *parent;
	char **name;
	uint64_t cap, used;
};

struct report {
	const char *path;
	struct iotap_trace_header hdr;	/* strings owned by report */
	struct iotap_trace_read_stats rs;
	struct pstats total;
	struct pstats *phases;
	unsigned int nphases;
	struct flagset *flags;		/* one per phase */
	struct flagset tflags;		/* whole trace */
	uint64_t t0;			/* trace start: header clock base */
	const char *phase_source;	/* "markers", "automatic", "phases-from" */
	uint64_t ops_ord;		/* ops, FORGET not counted (phase plans) */
	uint64_t markers;		/* PHASE records seen */
	uint64_t markers_folded;	/* markers past REPORT_PHASES_MAX, not made phases */
	struct series series;
	struct points points;
	struct seek_map files;		/* per-file data op counts */
	struct name_map names;
	double flag_factor;
};

void report_opts_init(struct report_opts *o);
/* Return: 0, or -errno after printing why (bad trace, out of memory). */
int report_build(struct report *rep, const char *path, const struct report_opts *o);
void report_release(struct report *rep);
/* Find the odd things; called by report_build. */
void report_flags(struct report *rep);

/* Phase by name ("NAME", or "NAME#k" for its k-th occurrence); -1 if none. */
int report_find_phase(const struct report *rep, const char *name);
/* A file's path as far as NAME records tell, into @buf ("#123" if unknown). */
const char *report_file_name(const struct report *rep, uint64_t file, char *buf, size_t len);

/* The phase plan of a built report (its phases by op ordinal), for --phases-from. */
int report_plan(const struct report *rep, struct phase_plan *plan);
void phase_plan_release(struct phase_plan *plan);

/* --- derived figures (output.c) ------------------------------------------ */

struct dev_fig {
	double rd_mbps, wr_mbps, rd_iops, wr_iops, iops, util_pct, queue;
	double rd_bytes;		/* bytes the device read over the span */
	double fs_unseen_pct;		/* % of FS read bytes the device never read, -1: n/a */
};

struct cpu_fig {
	int has_mark;			/* marking process (workload) */
	double mark_pct;
	int has_sample;
	double daemon_pct, system_pct, iowait_pct; /* % of one CPU, % of all CPUs, % of all */
};

double fig_rate(uint64_t n, double secs);
double fig_mbps(uint64_t bytes, double secs);
double fig_seq_pct(const struct pstats *p);
int fig_device(const struct pstats *p, struct dev_fig *f);
/* Return: 1 if any CPU figure is known. */
int fig_cpu(const struct pstats *p, struct cpu_fig *c);
/* The CPU% the report shows: the marking process's, else the system's. */
int fig_cpu_pct(const struct pstats *p, double *out);
double fig_start_s(const struct report *rep, const struct pstats *p);
/* "8k 99.9%, 4k 0.1%": the three fullest request-size buckets of @d */
void fig_size_summary(const struct dir_stats *d, char *buf, size_t len);
/* "<16k 83%, <2m 8%": the three commonest seek distances of @p */
void fig_seek_summary(const struct pstats *p, char *buf, size_t len);

/* --- output (output.c) ---------------------------------------------------- */

struct out_opts {
	int bonnie_units;		/* text in K/sec like bonnie++ */
};

void report_print_text(const struct report *rep, const struct out_opts *oo, FILE *f);
void report_print_csv(const struct report *rep, FILE *f);
/* Return: 0 or -ENOMEM. */
int report_print_json(const struct report *rep, FILE *f);
/* The time series at @interval_ns steps (0: the report's bins), text or CSV. */
void report_print_series(const struct report *rep, uint64_t interval_ns, int csv, FILE *f);
/* bonnie++'s CSV line (Debian 2.00a layout). Return: 0, or -EINVAL if the
 * phases are not bonnie's (a message says why). */
int report_print_bonnie_csv(const struct report *rep, FILE *f);
/* bonnie++'s test name of each phase (NULL: not one), as --bonnie-csv maps
 * them; @names has rep->nphases entries. Return: how many phases are tests. */
unsigned int report_bonnie_names(const struct report *rep, const char **names);
/* One phase broken down by op, file or thread: a second pass over the trace. */
int report_print_by(const struct report *rep, int phase, enum report_by by, int csv, FILE *f);

/* json-c helpers shared with compare */
struct json_object;
struct json_object *report_json_phase(const struct report *rep, const struct pstats *p,
				      const struct flagset *fl);

/* --- HTML (html.c) ------------------------------------------------------- */

/* The report page into @f (out_open()); write errors show in ferror(@f). */
void report_write_html(const struct report *rep, FILE *f);

#endif /* IOTAP_REPORT_H */
