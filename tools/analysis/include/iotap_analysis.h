/* SPDX-License-Identifier: MIT */
/*
 * iotap_analysis.h - libiotap-analysis: a trace reduced to phases, compared,
 * and rendered (the public header of tools/analysis/)
 *
 * iotap_report_build() streams a trace once and fills a struct
 * iotap_report: one struct iotap_pstats per phase and one for the whole trace,
 * the trace cut into time bins (struct iotap_series), a decimated sample of data
 * ops for seek maps, and the names of files. Phases come from PHASE
 * markers when the trace has them, from another trace's phases
 * (--phases-from, by op order), or are found automatically; then the
 * report looks for odd things (its flags). Memory is bounded by the number
 * of files, bins and phases, never by the number of records.
 *
 * The report prints as text, CSV, JSON, a time series, bonnie++'s CSV line
 * or an HTML page (iotap_report_print_*, iotap_report_write_html); several
 * traces are a fleet (iotap_fleet_*, one report over many hosts) or a
 * compare (iotap_compare_*, runs side by side).
 *
 * The API is what is named iotap_ here. struct iotap_report is complete
 * because the CLI reads its fields (err, rs, ops_ord, phases, flags,
 * names), and with it the types it holds (stat.h: struct iotap_pstats, struct
 * series, ...; struct iotap_app_stats, struct iotap_flagset). What the library's files
 * share with each other only (the figures, the metric table, the pieces of
 * the outputs, the functions of stat.h's accumulators, phase.h, app.h,
 * svg.h) is in tools/analysis/analysis_i.h and the headers beside it.
 *
 * Errors. Nothing here prints to stderr: a function that can fail returns
 * 0 or -errno and fills a struct iotap_analysis_err (the report's, the
 * compare's, or one the caller passes) with the sentence a person needs;
 * the CLI (tools/cmd_*.c) prints it.
 */
#ifndef IOTAP_ANALYSIS_H
#define IOTAP_ANALYSIS_H

#include <stdio.h>

#include "iotap_trace.h"
#include "stat.h"

struct json_object;
struct app_ops;

/*
 * A trace's application figures (`iotap run pgsql`, `run dedup`): which
 * application (tools/analysis/app.h's struct app_ops) and its accumulator.
 */
struct iotap_app_stats {
	const struct app_ops *kind;	/* the trace's application, or NULL */
	void *acc;			/* its accumulator */
	int err;			/* -ENOMEM met */
};

/*
 * struct iotap_analysis_err - why an analysis failed (or what it warns of)
 * @code: -errno (0: nothing to say)
 * @msg:  "cannot read trace 'x.iotap': ..." for people, without the
 *        "iotap: " prefix the CLI adds; empty when @code is 0
 */
struct iotap_analysis_err {
	int code;
	char msg[512];
};

/*
 * iotap_analysis_trace_open - open @path for reading with iotap_trace_reader_open()
 * Return: 0, or -errno with @err saying why in words (a format too new,
 * not a trace, a damaged header, the file system's reason).
 */
int iotap_analysis_trace_open(const char *path, unsigned int flags,
			      struct iotap_trace_reader **out, struct iotap_analysis_err *err);

/*
 * iotap_analysis_threads_auto - with @on, a trace of IOTAP_ANALYSIS_AUTO_BYTES or more
 * that iotap_analysis_trace_open() opens gets two decoding threads when the
 * process may run on two CPUs or more (iotap_trace_reader_set_threads),
 * unless IOTAP_READ_THREADS says how many; else one. Off by default (the
 * CLI's report, compare, dump and info turn it on; replay does not, its
 * threads have the CPUs to themselves).
 */
#define IOTAP_ANALYSIS_AUTO_BYTES	(8ull << 20)
void iotap_analysis_threads_auto(int on);

/*
 * iotap_analysis_on_open - call @fn(@arg, path, reader) for every trace
 * iotap_analysis_trace_open() opens from now on, iotap_report_build()'s and
 * compare's included (the CLI's progress lines attach there); NULL: none.
 * Context: set before reading starts; the calls come on the opening thread.
 */
void iotap_analysis_on_open(void (*fn)(void *arg, const char *path,
					 struct iotap_trace_reader *r),
			    void *arg);

#define IOTAP_REPORT_FLAGS_MAX	8
#define IOTAP_REPORT_FLAG_LEN		240

/* Odd things found in one phase (or the whole trace). */
struct iotap_flagset {
	unsigned int n;
	char text[IOTAP_REPORT_FLAGS_MAX][IOTAP_REPORT_FLAG_LEN];	/* "keyword: explanation" */
};

/* Phase boundaries taken from another trace (--phases-from). */
struct iotap_phase_plan {
	unsigned int n;
	char (*names)[128];
	uint64_t *ord;			/* op ordinal (FORGET not counted) of phase i's start */
	uint64_t total_ops;		/* ops of the trace it came from, same counting */
	const char *from;		/* its path */
};

enum iotap_report_by { IOTAP_BY_NONE, IOTAP_BY_OP, IOTAP_BY_FILE, IOTAP_BY_TID };

struct iotap_report_opts {
	int auto_phases;		/* 1: find phases even when the trace has markers */
	uint64_t gap_ns;		/* idle gap that starts an automatic phase (0: 1 s) */
	uint64_t interval_ns;		/* time bin asked for (0: 100 ms) */
	uint64_t max_bins;		/* most bins (0: 32768); wider bins beyond */
	const struct iotap_phase_plan *plan;	/* --phases-from */
	double flag_factor;		/* flag throughput changes above this factor (0: 4) */
	uint64_t points;		/* data ops kept for seek maps (0: none) */
	int keep_names;			/* remember file names (seek maps, --by file) */
	/*
	 * CPUs to use (report --threads): N >= 2 time windows on N threads
	 * (report_par.c) where they apply, else the reading side and the
	 * analysis on two threads, and N - 1 threads that decompress for the
	 * reader (IOTAP_READ_THREADS overrides); 0 the windows on a thread a
	 * CPU (up to 8) where they apply, else the reader as
	 * iotap_analysis_trace_open() sets it and one analysing thread; 1 one
	 * thread for everything. Any N gives the same report byte for byte.
	 */
	unsigned int threads;
};

/* A file's name, from NAME records: the values of report.names. */
struct iotap_name_ent {
	uint64_t parent;		/* file id of its directory */
	char *name;			/* last component, owned */
};

/* Writeback WRITEs (cache mode, aux 1) that failed, per file and errno. */
#define IOTAP_REPORT_WBFAIL_MAX	32
struct iotap_wbfail {
	uint64_t file;
	int err;			/* positive errno */
	uint64_t count;
	uint64_t t_first, t_last;	/* start of the first and the last */
};

struct iotap_report {
	const char *path;
	struct iotap_trace_header hdr;	/* strings owned by report */
	struct iotap_trace_read_stats rs;	/* damage met (the CLI warns of it) */
	struct iotap_analysis_err err;	/* why iotap_report_build() failed */
	struct iotap_pstats total;
	struct iotap_pstats *phases;
	unsigned int nphases;
	struct iotap_flagset *flags;		/* one per phase */
	struct iotap_flagset tflags;		/* whole trace */
	uint64_t t0;			/* trace start: header clock base */
	const char *phase_source;	/* "markers", "automatic", "phases-from" */
	uint64_t ops_ord;		/* ops, FORGET not counted (phase plans) */
	unsigned int par_windows;	/* time windows it was read in on several threads
					 * (report_par.c), 0: one pass */
	uint64_t markers;		/* PHASE records seen */
	uint64_t joined;		/* READ/WRITE pieces of cut calls folded (trace/join.c) */
	uint64_t split_calls;		/* ...into this many calls */
	struct iotap_wbfail wbfail[IOTAP_REPORT_WBFAIL_MAX];	/* failed writebacks, by file */
	unsigned int nwbfail;
	uint64_t wbfail_more;		/* failed writebacks on further files */
	uint64_t markers_folded;	/* markers past REPORT_PHASES_MAX, not made phases */
	struct iotap_series series;
	struct iotap_points points;
	struct iotap_seek_map files;		/* per-file data op counts */
	struct iotap_map names;		/* file id -> struct iotap_name_ent */
	double flag_factor;
	struct iotap_app_stats app;		/* pgsql/dedup application figures (app.h) */
	/* the phases' latency histograms (struct iotap_pstats' pool); freed last */
	struct iotap_hist_pool *hist_pool;
};

void iotap_report_opts_init(struct iotap_report_opts *o);
/* Return: 0, or -errno with rep->err saying why (bad trace, out of memory). */
int iotap_report_build(struct iotap_report *rep, const char *path,
		       const struct iotap_report_opts *o);
void iotap_report_release(struct iotap_report *rep);
/*
 * iotap_reports_build - the reports of @n traces, each the one
 * iotap_report_build() makes alone, built @jobs at a time on the tree's
 * thread pool (report_many.c): 0 as many as the CPUs this process may run
 * on, 1 one after the other (then with @o as given; side by side each reads
 * with one thread). Same bytes at any @jobs.
 * Return: 0, or the error of the first trace in @paths' order that failed:
 * *@failed is its index and @reps[*failed]->err says why; the reports
 * before it are built, the ones after it released.
 */
int iotap_reports_build(struct iotap_report *const *reps, const char *const *paths, unsigned int n,
			const struct iotap_report_opts *o, unsigned int jobs, unsigned int *failed);
/* Phase by name ("NAME", or "NAME#k" for its k-th occurrence); -1 if none. */
int iotap_report_find_phase(const struct iotap_report *rep, const char *name);
/* A file's path as far as NAME records tell, into @buf ("#123" if unknown). */
const char *iotap_report_file_name(const struct iotap_report *rep, uint64_t file, char *buf,
				   size_t len);

/* The phase plan of a built report (its phases by op ordinal), for --phases-from. */
int iotap_report_plan(const struct iotap_report *rep, struct iotap_phase_plan *plan);
void iotap_phase_plan_release(struct iotap_phase_plan *plan);

/* --- output (output.c) ---------------------------------------------------- */

struct iotap_out_opts {
	int bonnie_units;		/* text in K/sec like bonnie++ */
	int detail;			/* text: every phase's detail, not only the table and flags */
};

void iotap_report_print_text(const struct iotap_report *rep, const struct iotap_out_opts *oo,
			     FILE *f);
void iotap_report_print_csv(const struct iotap_report *rep, FILE *f);
/* Return: 0 or -ENOMEM. */
int iotap_report_print_json(const struct iotap_report *rep, FILE *f);
/*
 * The time series at @interval_ns steps (0: the report's bins), text or CSV.
 * @warn: set (code 0) when the interval had to be rounded to whole bins.
 */
void iotap_report_print_series(const struct iotap_report *rep, uint64_t interval_ns, int csv,
			       FILE *f, struct iotap_analysis_err *warn);
/* bonnie++'s CSV line (Debian 2.00a layout). Return: 0, or -EINVAL if the
 * phases are not bonnie's (@err says why). */
int iotap_report_print_bonnie_csv(const struct iotap_report *rep, FILE *f,
				  struct iotap_analysis_err *err);
/* One phase broken down by op, file or thread: a second pass over the trace.
 * Return: 0 or -errno (@err says why). */
int iotap_report_print_by(const struct iotap_report *rep, int phase, enum iotap_report_by by,
			  int csv, FILE *f, struct iotap_analysis_err *err);

/* A JSON number printed with @decimals decimals; NULL (JSON null) for NaN or inf. */
struct json_object *iotap_report_jnum(double v, int decimals);

/* --- HTML (html.c) ------------------------------------------------------- */

/* The report page into @f (out_open()); write errors show in ferror(@f). */
void iotap_report_write_html(const struct iotap_report *rep, FILE *f);

/* --- fleet: one report over many hosts' traces (fleet.c) ------------------ */

/*
 * Every trace is reported as `iotap report` would; phases are matched by
 * name (a marker's, "#k" for its k-th occurrence; automatic phases by
 * the name of what they do). Each matched phase, and the whole trace, is
 * shown per host (that host's own pstats: the figures of its own report)
 * and for all hosts together: the hosts' pstats merged (counts and bytes
 * add, latency histograms add bucket by bucket) over the union of their
 * spans on the wall clock (each trace's monotonic times moved by its
 * header's realtime - monotonic base).
 */
struct iotap_fleet_host {
	const char *path;
	char label[256];		/* the header's host; its file name when shared */
	int by_file;			/* @label is the file name */
	struct iotap_report rep;
	uint64_t shift;			/* realtime - monotonic of its clock, ns (mod 2^64) */
};

struct iotap_fleet {
	struct iotap_fleet_host *hosts;
	unsigned int nhosts;
	unsigned int nphases;		/* matched phases; all[nphases] is the total */
	char (*names)[128];
	int *map;			/* [phase][host]: index into its phases, -1: none */
	struct iotap_pstats *all;		/* [nphases + 1]: all hosts together */
	struct iotap_report view;	/* t0: the fleet's start; the figures' report argument */
	struct iotap_analysis_err err;	/* why iotap_fleet_build() failed */
};

/* Return: 0 or -errno (fl->err says why). */
int iotap_fleet_build(struct iotap_fleet *fl, const char *const *paths, unsigned int n,
		      const struct iotap_report_opts *o);
void iotap_fleet_release(struct iotap_fleet *fl);
void iotap_fleet_print_text(const struct iotap_fleet *fl, const struct iotap_out_opts *oo, FILE *f);
void iotap_fleet_print_csv(const struct iotap_fleet *fl, FILE *f);
/* Return: 0 or -ENOMEM. */
int iotap_fleet_print_json(const struct iotap_fleet *fl, FILE *f);
void iotap_fleet_write_html(const struct iotap_fleet *fl, FILE *f);

/* --- compare ------------------------------------------------------------- */

/*
 * compare (compare.c) - several runs side by side, phase by phase
 *
 * A run group is one label and the traces of its repeats (seed 001's
 * bonnie++ -x 3): each figure is shown as the mean over the group's traces
 * and their sample standard deviation, and as the ratio of that mean to
 * the baseline group's (the first). Without labels each trace is a group
 * of one. Phases are matched by name (and occurrence: the second "create"
 * matches the second "create"); a phase one run lacks is left blank.
 */
#define IOTAP_CMP_PHASE_KEY	160

struct iotap_cmp_group {
	const char *label;		/* --label NAME, or the trace's file name */
	unsigned int n;			/* traces (repeats) */
	const char **paths;
	struct iotap_report *reps;		/* n built reports */
};

struct iotap_compare {
	struct iotap_cmp_group *groups;
	unsigned int ngroups;
	unsigned int nphases;		/* matched phases (the last row is the total) */
	char (*phase_names)[IOTAP_CMP_PHASE_KEY];
	/* for group g, trace t, phase k: index into reps[t].phases, -1 if absent,
	 * -2 for the total, -3 for the steady period */
	int *map;			/* [nphases][ngroups][max traces] */
	unsigned int max_traces;
	/*
	 * pgsql traces: the whole steady period (the phases in the run's
	 * steady SPAN, checkpoint parts included) as one row, "steady
	 * period"; [ngroups][max traces], name "" where a trace has none
	 */
	struct iotap_pstats *period;
	struct iotap_analysis_err err;	/* why iotap_compare_build() failed */
};

/*
 * Build every report, @jobs side by side (iotap_reports_build(); 0: a CPU
 * each), and match phases. Return: 0 or -errno (c->err says why).
 */
int iotap_compare_build(struct iotap_compare *c, struct iotap_cmp_group *groups,
			unsigned int ngroups, unsigned int jobs);
void iotap_compare_release(struct iotap_compare *c);
void iotap_compare_print_text(const struct iotap_compare *c, FILE *f);
void iotap_compare_print_csv(const struct iotap_compare *c, FILE *f);
int iotap_compare_print_json(const struct iotap_compare *c, FILE *f);
/* The compare page into @f (out_open()); write errors show in ferror(@f). */
void iotap_compare_write_html(const struct iotap_compare *c, FILE *f);

#endif /* IOTAP_ANALYSIS_H */
