/* SPDX-License-Identifier: MIT */
/*
 * analysis_i.h - libiotap-analysis's private header: what its files share
 * with each other and not with the CLI (the public API is iotap_analysis.h,
 * which this includes, with app.h, phase.h and stat_i.h: the accumulators'
 * functions). tests/unit/test_report.c, a white-box test, sees it too.
 */
#ifndef IOTAP_ANALYSIS_I_H
#define IOTAP_ANALYSIS_I_H

#include "app.h"
#include "iotap_analysis.h"
#include "phase.h"
#include "stat_i.h"

/* Tell iotap_analysis_on_open()'s function of @r (a reader that @path's reading follows). */
void analysis_opened(const char *path, struct iotap_trace_reader *r);

/* Set @err (may be NULL) to @code and a message; returns @code. */
int analysis_err_set(struct iotap_analysis_err *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Most phases a report keeps (memory: each is a few KiB to a few tens of KiB);
 * what later markers would start is counted in one "(later phases)". */
#define REPORT_PHASES_MAX	2048

/* Find the odd things; called by iotap_report_build. */
void report_flags(struct iotap_report *rep);

/*
 * The phase list once the stream is read (report_phases.c; report.c's
 * finish() calls them): "#k" on repeated names; negligible unmarked spans
 * (fewer than 64 ops, no data, no longer than @gap_ns) into their marked
 * neighbour; marked phases with no op and no length dropped;
 * --phases-from's leading ops into the first phase. -ENOMEM or 0.
 */
void report_number_repeats(struct iotap_report *rep);
int report_fold_unmarked(struct iotap_report *rep, uint64_t gap_ns);
void report_drop_empty(struct iotap_report *rep);
int report_fold_plan(struct iotap_report *rep, const struct iotap_phase_plan *plan);

/* --- derived figures (metric.c) ------------------------------------------ */

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
double fig_seq_pct(const struct iotap_pstats *p);
/* p99 latency of @op in microseconds; NAN when the span has none. */
double fig_p99_us(const struct iotap_pstats *p, unsigned int op);
int fig_device(const struct iotap_pstats *p, struct dev_fig *f);
/* Return: 1 if any CPU figure is known. */
int fig_cpu(const struct iotap_pstats *p, struct cpu_fig *c);
/* The CPU% the report shows: the marking process's, else the system's. */
int fig_cpu_pct(const struct iotap_pstats *p, double *out);
double fig_start_s(const struct iotap_report *rep, const struct iotap_pstats *p);
/* Mean ops in flight: the ops' time over the span's (Little's law). */
double fig_inflight(const struct iotap_pstats *p);
/* Metadata ops (neither data nor fsync) per second. */
double fig_meta_rate(const struct iotap_pstats *p);
/*
 * A phase with ops that lasted under REPORT_MIN_TIMED_S: its rates mean
 * nothing (22 ops in 7 us are not 3 million ops/s); the text and HTML
 * tables print them as bonnie++ does a test under its 0.5 s, "+++++".
 */
#define REPORT_MIN_TIMED_S	0.1
int fig_too_short(const struct iotap_pstats *p);
/* "8k 99.9%, 4k 0.1%": the three fullest request-size buckets of @d */
void fig_size_summary(const struct iotap_dir_stats *d, char *buf, size_t len);
/* "<16k 83%, <2m 8%": the three commonest seek distances of @p */
void fig_seek_summary(const struct iotap_pstats *p, char *buf, size_t len);

/* --- the report's columns (metric.c) ----------------------------------- */

/* Where a report_metric shows (.out). */
enum metric_out {
	MO_TEXT_MB	= 1 << 0,	/* the text phase table, MB/s units */
	MO_TEXT_K	= 1 << 1,	/* the text phase table, --bonnie's K/sec units */
	MO_TEXT		= MO_TEXT_MB | MO_TEXT_K,
	MO_CSV		= 1 << 2,	/* report --csv: a column */
	MO_JSON		= 1 << 3,	/* report --json: a member of each phase */
	MO_HTML		= 1 << 4,	/* the HTML report's phase table */
	MO_CMP		= 1 << 5,	/* compare, in each of its outputs */
	MO_ZERO		= 1 << 6,	/* text, CSV and JSON print an absent figure as 0 */
	MO_ALWAYS	= 1 << 7,	/* compare shows it even where it is 0 everywhere */
	MO_GATE		= 1 << 8,	/* JSON: its group is null where this figure is absent */
	MO_RATE		= 1 << 9,	/* a rate: "+++++" in the text and HTML tables where
					 * the phase is too short to time (fig_too_short) */
};

/*
 * One figure of a phase: a row of report_metrics[], which every output of
 * report and compare walks. A figure is a number (@get; NAN where the
 * phase has none: "-" for people, empty in CSV, null in JSON), or for
 * JSON a whole member (@jget) and for CSV a string (@str).
 */
struct report_metric {
	const char *key;	/* CSV column, compare's key: "write_mb_per_s" */
	const char *json;	/* JSON member, "group.member"; NULL: @key */
	const char *label;	/* compare's name for it: "write MB/s" */
	int dec;		/* decimals for people: the text table, compare */
	int sdec;		/* decimals for scripts: CSV, JSON */
	int hdec;		/* decimals in the HTML phase table */
	unsigned int out;	/* enum metric_out */
	unsigned int side;	/* order in compare and the HTML table; 0: after the rest */
	const char *head;	/* the text table's heading */
	int width;		/* ... and its column's width */
	const char *th;		/* the HTML phase table's heading, a whole <th> */
	double (*get)(const struct iotap_report *rep, const struct iotap_pstats *p);
	struct json_object *(*jget)(const struct iotap_report *rep, const struct iotap_pstats *p,
				    const struct iotap_flagset *fl);
	const char *(*str)(const struct iotap_pstats *p, const struct iotap_flagset *fl, char *buf,
			   size_t len);
};

#define METRIC_MAX	64

extern const struct report_metric report_metrics[];

/*
 * The rows that show in @out (one MO_ bit), in that output's order, into
 * @list (METRIC_MAX entries). Return: how many.
 */
unsigned int metric_view(unsigned int out, const struct report_metric **list);
/* @m's figure for @p as output @out prints it (MO_ZERO applied); NAN: none. */
double metric_value(const struct report_metric *m, unsigned int out, const struct iotap_report *rep,
		    const struct iotap_pstats *p);

/* bonnie++'s test name of each phase (NULL: not one), as --bonnie-csv maps
 * them; @names has rep->nphases entries. Return: how many phases are tests. */
unsigned int report_bonnie_names(const struct iotap_report *rep, const char **names);
/*
 * The pieces of the text table and the CSV, for reports that print rows of
 * their own (fleet.c): the heading row (@what heads the name column), one
 * row of @p under @idx and @name; the CSV's header line, a quoted field,
 * and one row (@index < 0: none, as the total's).
 */
void report_text_head_row(FILE *f, const char *what, const struct iotap_out_opts *oo);
void report_text_row(FILE *f, const struct iotap_report *rep, const struct iotap_pstats *p,
		     const char *idx, const char *name, const struct iotap_out_opts *oo);
void report_csv_head(FILE *f);
void report_csv_str(FILE *f, const char *s);
void report_csv_row(FILE *f, const struct iotap_report *rep, const struct iotap_pstats *p,
		    const struct iotap_flagset *fl, int index);

/* json-c helpers shared with compare */
struct json_object;
struct json_object *report_json_phase(const struct iotap_report *rep, const struct iotap_pstats *p,
				      const struct iotap_flagset *fl);

/* Host @h's pstats of matched phase @k (k == nphases: its total), or NULL. */
const struct iotap_pstats *fleet_phase(const struct iotap_fleet *fl, unsigned int k,
				       unsigned int h);

/* One figure of one phase in every group. */
struct cmp_cell {
	unsigned int n;			/* traces that have it */
	double mean, sd;		/* sd: sample standard deviation, 0 for one trace */
	double ratio;			/* mean / baseline mean; NAN when not comparable */
	/* a rate of a phase too short to time (fig_too_short) in one of its
	 * traces, or in the baseline's: people see +++++ and no ratio */
	unsigned int too_short, base_short;
};

/* compare's figures (report_metrics[]' MO_CMP rows): how many, and the m-th. */
unsigned int compare_nmetrics(void);
const struct report_metric *compare_metric(unsigned int m);

/* The pstats of phase @k in trace @t of group @g, or NULL. */
const struct iotap_pstats *compare_phase(const struct iotap_compare *c, unsigned int k,
					 unsigned int g,
				   unsigned int t);
/* Figure @m of phase @k for group @g. */
void compare_cell(const struct iotap_compare *c, unsigned int k, unsigned int g, unsigned int m,
		  struct cmp_cell *out);
/* 1 if figure @m means anything for phase @k (non-zero somewhere). */
int compare_metric_used(const struct iotap_compare *c, unsigned int k, unsigned int m);

/*
 * pgsql/dedup traces: their application figures side by side, with verdicts
 * (app_compare.c). app_compare_figs() fills @figs with the figures' rows
 * (the first group's with an application; 0: none) and @kind ("pgsql",
 * "dedup"); app_compare_cell() is figure @key of group @g (mean and sample
 * sd over its traces, ratio to group 0's mean; n 0: none);
 * app_compare_best() the group with the better mean of @f (-1: fewer than
 * two groups have it), app_compare_word() its verdict's adjective.
 */
struct app_fig;
unsigned int app_compare_figs(const struct iotap_compare *c, struct app_fig *figs,
			      const char **kind);
void app_compare_cell(const struct iotap_compare *c, unsigned int g, const char *key,
		      struct cmp_cell *out);
int app_compare_best(const struct iotap_compare *c, const struct app_fig *f, double *best);
const char *app_compare_word(const struct app_fig *f);
void app_compare_print_text(const struct iotap_compare *c, FILE *f);
struct json_object *app_compare_json(const struct iotap_compare *c);
/* The CSV rows of the application figures (phase "application"), no header. */
void app_compare_print_csv(const struct iotap_compare *c, FILE *f);

/* Wall-clock time @ns (since the epoch) as "2026-12-05 08:37:10", local time; "?" for 0 (output.c). */
const char *fmt_realtime(uint64_t ns, char *buf, size_t len);

#endif /* IOTAP_ANALYSIS_I_H */
