/* SPDX-License-Identifier: MIT */
/*
 * app.h - the application figures of `iotap run pgsql` and `run dedup`
 * traces (app.c dispatches over the models table, app_pgsql.c and
 * app_dedup.c compute)
 *
 * Where each figure comes from:
 *   - what only the model knows (transactions, the run's own periods, a
 *     backup's logical bytes and look-ups) from the APP records the run
 *     wrote (trace/FORMAT.md "APP records");
 *   - the rest from the trace's own ops and PHASE markers: the commit
 *     syncs on the WAL files, each checkpoint's writes and fsyncs by the
 *     thread that marked it, the index reads of a backup, the reads of a
 *     restore, compaction's reads, writes and unlinks.
 *
 * Which application a trace is comes from its header's workload ("pgsql
 * ...", "dedup ..."): the first word names the A row of the models table
 * (iotap_models.h) whose struct app_ops reads it; other traces have none
 * (kind NULL) and nothing here prints for them. Like stat_*.c it is an accumulator fed every
 * record in order (report.c's loop); memory grows with checkpoints,
 * generations and WAL/index files, not with records.
 */
#ifndef IOTAP_APP_H
#define IOTAP_APP_H

#include <stdint.h>
#include <stdio.h>

#include "iotap_base.h"
#include "iotap_models.h"
#include "iotap_analysis.h"
#include "iotap_trace.h"

/* One checkpoint as log_checkpoints says it, from its markers and ops. */
struct app_ckpt {
	unsigned int seq;
	uint32_t tid;			/* the checkpointer (the marking thread) */
	uint64_t t_write, t_wend;	/* write part BEGIN, END (marker times; 0: not seen) */
	uint64_t t_sync, t_end;		/* sync part BEGIN, END (the checkpointer's own) */
	uint64_t t_end_other;		/* its END written by another thread (the run's end) */
	uint64_t last_sync_end;		/* end of its last relation fsync */
	uint64_t buffers;		/* 8 KiB relation page writes in the write part */
	uint64_t sync_files;		/* relation fsyncs in the sync part */
	uint64_t sync_longest_ns, sync_sum_ns;
	uint64_t run_write_ns, run_sync_ns;	/* the run's own times (APP SPANs); 0: none */
	int partial;			/* no sync part or no END */
};

/* An APP SPAN. */
struct app_span {
	int seen, partial;
	uint64_t start_ns, dur_ns;
	uint64_t cpu_user_ns, cpu_sys_ns;	/* steady: the model's own CPU over it */
};

struct app_pgsql {
	struct app_span init, warmup, steady;
	uint64_t txns, txns_steady;	/* TXN records (all; STEADY) */
	struct iotap_hist lat;		/* steady latencies, ns */
	double lat_sumsq;		/* ns^2 */
	uint64_t lag_sum, lag_max, lag_n;
	struct iotap_hist commit;	/* WAL fdatasyncs of the steady period, ns */
	struct iotap_hist commit_fsync;	/* and full fsyncs of WAL files */
	int commit_on;			/* counting: steady start known, not yet ended */
	uint64_t commit_from;		/* steady start */
	struct iotap_map wal;		/* file ids of WAL segments (value unused) */
	struct iotap_map skip;		/* pg_control, pg_xact/ dirs and files: not relation files */
	struct app_ckpt *ck;
	unsigned int nck, cap;
	int cur;			/* open checkpoint, -1 */
};

/* One generation's backup or restore. */
struct app_gen {
	char name[32];			/* "gen=2" */
	int have_backup, have_restore, partial;
	/* backup: APP BACKUP record */
	uint64_t dur_ns, logical, lookups, hits, segments, fresh, stored;
	uint64_t cpu_ns;		/* the model's content generation + hashing CPU */
	/* backup: ops of its phase */
	uint64_t written, index_reads;
	struct iotap_hist miss;		/* index read latencies, ns */
	/* restore: ops of its phase */
	uint64_t r_t0, r_t1;		/* phase marker times */
	uint64_t r_bytes, r_reads, r_files;
};

struct app_dedup {
	struct app_gen *gen;
	unsigned int ngen, cap;
	int cur;			/* generation whose phase is open, -1 */
	int cur_restore;		/* that phase is its restore */
	int in_compact;
	uint64_t index_file;		/* file id of "index" (0: none seen) */
	struct iotap_map files;		/* files a restore read (cleared per restore) */
	struct iotap_map data_dirs;	/* data/ and its subdirectories */
	struct iotap_map containers;	/* files in them */
	uint64_t c_t0, c_t1, c_read, c_written, c_unlinks;
	int compact_seen;
};

struct app_fig;
struct json_object;

/*
 * One application's analysis ops: app_NAME_ops in app_NAME.c for each A
 * row of the models table. @acc is its accumulator, @size bytes, zeroed.
 */
struct app_ops {
	const char *name;		/* the workload's first word: "pgsql" */
	size_t size;
	void (*init)(void *acc);
	void (*release)(void *acc);
	int (*feed)(void *acc, const struct iotap_trace_rec *r);	/* 0 or -ENOMEM */
	void (*finish)(void *acc);
	unsigned int (*figs)(const void *acc, struct app_fig *out);
	void (*print_text)(const void *acc, FILE *f);
	struct json_object *(*json)(const void *acc);
	/*
	 * The span compare shows as one row beside the phases (pgsql: the
	 * steady period, which its checkpoint parts cut into several phases).
	 * Return: 1 with *start_ns and *dur_ns set, 0 if the trace has none.
	 */
	int (*period)(const void *acc, uint64_t *start_ns, uint64_t *dur_ns);
	/* the report page's section, below the headline figures (app_print_html) */
	void (*print_html)(const void *acc, FILE *f);
};

/*
 * APP_OPS(NAME), once in app_NAME.c: app_NAME_ops over its typed
 * app_NAME_init, _release, _feed, _finish, _figs, _print_text, _json,
 * _period and _print_html.
 */
#define APP_OPS(n) \
static void n##_ops_init(void *acc) { app_##n##_init(acc); } \
static void n##_ops_release(void *acc) { app_##n##_release(acc); } \
static int n##_ops_feed(void *acc, const struct iotap_trace_rec *r) \
{ return app_##n##_feed(acc, r); } \
static void n##_ops_finish(void *acc) { app_##n##_finish(acc); } \
static unsigned int n##_ops_figs(const void *acc, struct app_fig *out) \
{ return app_##n##_figs(acc, out); } \
static void n##_ops_print_text(const void *acc, FILE *f) { app_##n##_print_text(acc, f); } \
static struct json_object *n##_ops_json(const void *acc) { return app_##n##_json(acc); } \
static int n##_ops_period(const void *acc, uint64_t *s, uint64_t *d) \
{ return app_##n##_period(acc, s, d); } \
static void n##_ops_print_html(const void *acc, FILE *f) { app_##n##_print_html(acc, f); } \
const struct app_ops app_##n##_ops = { \
	.name = #n, .size = sizeof(struct app_##n), \
	.init = n##_ops_init, .release = n##_ops_release, .feed = n##_ops_feed, \
	.finish = n##_ops_finish, .figs = n##_ops_figs, .print_text = n##_ops_print_text, \
	.json = n##_ops_json, .period = n##_ops_period, .print_html = n##_ops_print_html, \
}

/* The ops of each A row of the models table: app_pgsql_ops ... */
#define APP_OPS_DECL(name) extern const struct app_ops app_##name##_ops;
#define APP_OPS_NONE(name)
IOTAP_MODELS(APP_OPS_NONE, APP_OPS_DECL)

/* @workload: the header's workload string (NULL: none). */
void app_init(struct iotap_app_stats *a, const char *workload);
void app_release(struct iotap_app_stats *a);
/* Every record of the trace, in the reader's order. */
void app_feed(struct iotap_app_stats *a, const struct iotap_trace_rec *r);
void app_finish(struct iotap_app_stats *a);

void app_pgsql_init(struct app_pgsql *p);
void app_pgsql_release(struct app_pgsql *p);
int app_pgsql_feed(struct app_pgsql *p, const struct iotap_trace_rec *r);
void app_pgsql_finish(struct app_pgsql *p);
void app_dedup_init(struct app_dedup *d);
void app_dedup_release(struct app_dedup *d);
int app_dedup_feed(struct app_dedup *d, const struct iotap_trace_rec *r);
void app_dedup_finish(struct app_dedup *d);

/*
 * The headline figures compare puts side by side (and JSON lists under
 * "application.figures"): @better is +1 when more is better, -1 when less.
 */
struct app_fig {
	const char *key;		/* "tps_steady" */
	const char *label;		/* "tps (excl. warm-up)" */
	int decimals;
	int better;
	double value;			/* NAN: not measured */
};

#define APP_FIGS_MAX	16
/* Return: how many figures (0 for a trace of no application). */
unsigned int app_figs(const struct iotap_app_stats *a, struct app_fig *out);
unsigned int app_pgsql_figs(const struct app_pgsql *p, struct app_fig *out);
unsigned int app_dedup_figs(const struct app_dedup *d, struct app_fig *out);

/* The application's own figures as text (nothing without one). */
void app_print_text(const struct iotap_app_stats *a, FILE *f);
void app_pgsql_print_text(const struct app_pgsql *p, FILE *f);
void app_dedup_print_text(const struct app_dedup *d, FILE *f);
/*
 * The report page's application section (html.c): the headline figures
 * (app_figs) as a table, then the application's own tables (checkpoints,
 * backups, restores); nothing without one.
 */
void app_print_html(const struct iotap_app_stats *a, FILE *f);
void app_pgsql_print_html(const struct app_pgsql *p, FILE *f);
void app_dedup_print_html(const struct app_dedup *d, FILE *f);
/* As a JSON object ("application"), NULL without one. */
struct json_object *app_json(const struct iotap_app_stats *a);
struct json_object *app_pgsql_json(const struct app_pgsql *p);
struct json_object *app_dedup_json(const struct app_dedup *d);
/* The span compare shows as one row (struct app_ops' period). */
int app_period(const struct iotap_app_stats *a, uint64_t *start_ns, uint64_t *dur_ns);
int app_pgsql_period(const struct app_pgsql *p, uint64_t *start_ns, uint64_t *dur_ns);
int app_dedup_period(const struct app_dedup *d, uint64_t *start_ns, uint64_t *dur_ns);

#endif /* IOTAP_APP_H */
