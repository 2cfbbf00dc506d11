// SPDX-License-Identifier: MIT
/*
 * run_pgsql.c - iotap run pgsql DIR... [options]  (called by cmd_run.c)
 *
 *   iotap run pgsql DIR... [--wal-dir DIR]... [-s SCALE] [-c CLIENTS] [-T DURATION]
 *                   [--warmup DURATION] [-R TPS] [-P SEC] [--era 8.4|9.6|15|17]
 *                   [--shared-buffers SIZE] [--checkpoint-timeout DURATION]
 *                   [--max-wal-size SIZE] [--completion-target F]
 *                   [--wal-sync-method M] [--full-page-writes on|off]
 *                   [--*-flush-after SIZE] [--cpu-per-txn DURATION] [--no-lockstep]
 *                   [-q] [--trace FILE] [--force] [--trace-mode MODE] [--trace-group GROUP]
 *
 * A model of the models table (struct run_model), run by the shared
 * driver (cmd_run.c). It parses PostgreSQL's and pgbench's option names,
 * bound to values in one table with PostgreSQL's ranges (the defaults of
 * the --era chosen: .setup), checks every data and WAL directory before
 * anything is written (exists, writable, not already a data directory,
 * room for the database and for max_wal_size of WAL, summed per
 * filesystem: exit 2), runs one model per DIR at once (their loads and
 * clients started together unless --no-lockstep; the overlap of their
 * phases heads the reports: .overlap_first), with tps progress lines
 * (.progress), and prints, per DIR, what a DBA reads: pgbench -i's "done
 * in" line, pgbench's summary (tps with and without warm-up, latency
 * average, stddev and percentiles, -R's schedule lag, -P's per-interval
 * lines), the WAL sync latency, the I/O per transaction, one
 * log_checkpoints line per checkpoint, and the model's own CPU per
 * transaction. Ctrl-C stops every model, removes the files, prints what
 * was measured (marked partial) and exits 130.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cmds.h"
#include "iotap_base.h"
#include "iotap_trace.h"
#include "iotap_pgsql.h"
#include "iotap_workload.h"
#include "opt.h"
#include "run.h"
#include "traceio.h"

/*
 * The options, bound to these values. Their ranges are PostgreSQL 15's
 * (postgres --describe-config), both ways: what PostgreSQL refuses is
 * refused, what it accepts is accepted; min_wal_size and max_wal_size at
 * least two 16 MiB WAL segments each, as PostgreSQL checks at start, and
 * either may be the larger (max_wal_size then bounds what is kept). Sizes
 * whose GUC counts 8 kB pages are multiples of 8 kB. Where pgbench or the
 * model sets the bound (-c, -s, -R, --cpu-per-txn) it says so.
 */
static struct pg_args {
	struct iotap_workload_pgsql_opts o;
	const char **wal;		/* --wal-dir, once per DIR */
	unsigned int nwal;
	unsigned int progress_s;	/* -P */
	uint64_t combine;		/* --io-combine-limit, bytes */
} a;

#define PG_SEC		1000000000ull
#define PG_MS		1000000ull
#define PG_KB		1024ull
#define PG_MB		(1024ull * 1024)
#define PG_PAGE		(8 * PG_KB)
#define PG_INT_MAX	2147483647ull

static int opt_rate(const struct opt_cmd *cmd, const struct opt_desc *d, const char *arg)
{
	char *end;

	(void)d;
	errno = 0;
	a.o.rate = strtod(arg, &end);
	if (errno || end == arg || *end || !(a.o.rate > 0))
		return opt_error(cmd, "bad rate '%s' (transactions/s)", arg);
	if (a.o.rate > 100000)
		return opt_error(cmd, "a rate of %.0f tps is more than the model can offer "
				 "(100000 tps)", a.o.rate);
	return 0;
}

static int parse_era(const char *s, enum iotap_pgsql_era *era)
{
	if (!strcmp(s, "8.4"))
		*era = IOTAP_PGSQL_84;
	else if (!strcmp(s, "9.6"))
		*era = IOTAP_PGSQL_96;
	else if (!strcmp(s, "15"))
		*era = IOTAP_PGSQL_15;
	else if (!strcmp(s, "17"))
		*era = IOTAP_PGSQL_17;
	else
		return -EINVAL;
	return 0;
}

/* --era: taken before the others (find_era()), as every default depends on it */
static int opt_era(const struct opt_cmd *cmd, const struct opt_desc *d, const char *arg)
{
	enum iotap_pgsql_era era;

	(void)d;
	if (parse_era(arg, &era))
		return opt_error(cmd, "--era %s is not modelled (8.4, 9.6, 15, 17)", arg);
	return 0;
}

static int opt_wal_dir(const struct opt_cmd *cmd, const struct opt_desc *d, const char *arg)
{
	const char **n = realloc(a.wal, (a.nwal + 1) * sizeof(*n));

	(void)cmd;
	(void)d;
	if (!n) {
		error_msg("out of memory");
		return 1;
	}
	a.wal = n;
	a.wal[a.nwal++] = arg;
	return 0;
}

static int opt_sync(const struct opt_cmd *cmd, const struct opt_desc *d, const char *arg)
{
	int i;

	(void)d;
	for (i = 0; i < 4; i++)
		if (!strcmp(arg, iotap_workload_pgsql_sync_name(i)))
			break;
	if (i == 4)
		return opt_error(cmd, "wal_sync_method '%s' is not one of fdatasync, fsync, "
				 "open_datasync, open_sync", arg);
	a.o.wal_sync_method = (enum iotap_pgsql_sync)i;
	return 0;
}

static int opt_fpw(const struct opt_cmd *cmd, const struct opt_desc *d, const char *arg)
{
	(void)d;
	if (!strcmp(arg, "on") || !strcmp(arg, "true") || !strcmp(arg, "1"))
		a.o.full_page_writes = 1;
	else if (!strcmp(arg, "off") || !strcmp(arg, "false") || !strcmp(arg, "0"))
		a.o.full_page_writes = 0;
	else
		return opt_error(cmd, "full_page_writes is on or off");
	return 0;
}

#define FLUSH_ERR(name) "bad " name " '%s' (a multiple of 8kB, 0..2MB)"

static const struct opt_desc pgsql_opts[] = {
	OPT_UINT('s', "scale", &a.o.scale, "N", "pgbench -s: 100000 accounts per unit (default 1)",
		 1, 20000, "bad scale '%s' (1..20000)"),
	OPT_UINT('c', "clients", &a.o.clients, "N", "pgbench -c: concurrent clients (default 1)",
		 1, 1000, "bad client count '%s' (1..1000)"),
	OPT_DURATION('T', "duration", &a.o.duration_ns, "DURATION",
		     "pgbench -T: 60s, 10m (default 60s)", PG_SEC, PG_INT_MAX * PG_SEC,
		     "bad duration '%s'"),
	OPT_DURATION(0, "warmup", &a.o.warmup_ns, "DURATION", "first part of -T not counted as steady\n"
		     "(default a tenth of it; 0: none)", 0, PG_INT_MAX * PG_SEC,
		     "bad warm-up '%s'"),
	OPT_CALLBACK('R', "rate", NULL, "TPS", "pgbench -R: Poisson arrivals at TPS over all clients;\n"
		     "latency counts from the scheduled start", opt_rate),
	OPT_UINT('P', "progress", &a.progress_s, "SEC",
		 "interval of the per-interval tps lines (default 5)", 1, PG_INT_MAX,
		 "bad progress interval '%s' (seconds, at least 1)"),
	OPT_CALLBACK(0, "era", NULL, "8.4|9.6|15|17", "PostgreSQL generation: defaults and I/O paths\n"
		     "(default 15, Debian 12's)", opt_era),
	OPT_CALLBACK(0, "wal-dir", NULL, "DIR", "WAL segments in DIR (initdb -X); once per data DIR",
		     opt_wal_dir),
	OPT_SIZE(0, "shared-buffers", &a.o.shared_buffers, "SIZE",
		 "shared_buffers (15: 128MB; 8.4: 32MB)", 16 * PG_PAGE, 1073741823ull * PG_PAGE,
		 PG_PAGE, "bad shared_buffers '%s' (a multiple of 8kB, 128kB..8TB)"),
	OPT_SIZE(0, "wal-buffers", &a.o.wal_buffers, "SIZE", "wal_buffers (default shared_buffers/32)",
		 PG_PAGE, 262143ull * PG_PAGE, PG_PAGE,
		 "bad wal_buffers '%s' (a multiple of 8kB, 8kB..2GB)"),
	OPT_DURATION(0, "checkpoint-timeout", &a.o.checkpoint_timeout_ns, "DURATION",
		     "checkpoint_timeout (5min; 30s..24h)", 30 * PG_SEC, 86400 * PG_SEC,
		     "bad checkpoint_timeout '%s' (30s..24h)"),
	OPT_SIZE(0, "max-wal-size", &a.o.max_wal_size, "SIZE", "max_wal_size (1GB; 9.5+; at least 32MB)",
		 2 * 16 * PG_MB, PG_INT_MAX * PG_MB, 0,
		 "bad max_wal_size '%s' (at least 32MB: twice the 16MB WAL segment)"),
	OPT_SIZE(0, "min-wal-size", &a.o.min_wal_size, "SIZE", "min_wal_size (80MB; 9.5+; at least 32MB)",
		 2 * 16 * PG_MB, PG_INT_MAX * PG_MB, 0,
		 "bad min_wal_size '%s' (at least 32MB: twice the 16MB WAL segment)"),
	OPT_UINT(0, "checkpoint-segments", &a.o.checkpoint_segments, "N",
		 "checkpoint_segments (8.4: 3)", 1, PG_INT_MAX, "bad checkpoint_segments '%s'"),
	OPT_DOUBLE(0, "completion-target", &a.o.completion_target, "F",
		   "checkpoint_completion_target (14+: 0.9; before: 0.5)", 0, 1,
		   "bad completion target '%s' (0..1)"),
	OPT_CALLBACK(0, "wal-sync-method", NULL, "METHOD",
		     "fdatasync (default), fsync, open_datasync, open_sync", opt_sync),
	OPT_CALLBACK(0, "full-page-writes", NULL, "on|off", "full_page_writes (on)", opt_fpw),
	OPT_SIZE(0, "checkpoint-flush-after", &a.o.checkpoint_flush_after, "SIZE",
		 "sync_file_range every SIZE of checkpoint writes (256kB; 0 off)", 0, 256 * PG_PAGE,
		 PG_PAGE, FLUSH_ERR("checkpoint-flush-after")),
	OPT_SIZE(0, "bgwriter-flush-after", &a.o.bgwriter_flush_after, "SIZE",
		 "likewise for the bgwriter (512kB)", 0, 256 * PG_PAGE, PG_PAGE,
		 FLUSH_ERR("bgwriter-flush-after")),
	OPT_SIZE(0, "backend-flush-after", &a.o.backend_flush_after, "SIZE",
		 "likewise for backends (0)", 0, 256 * PG_PAGE, PG_PAGE,
		 FLUSH_ERR("backend-flush-after")),
	OPT_SIZE(0, "wal-writer-flush-after", &a.o.wal_writer_flush_after, "SIZE",
		 "wal_writer_flush_after (1MB)", 0, PG_INT_MAX * PG_PAGE, PG_PAGE,
		 "bad wal-writer-flush-after '%s' (a multiple of 8kB)"),
	OPT_DURATION(0, "bgwriter-delay", &a.o.bgwriter_delay_ns, "DURATION",
		     "bgwriter_delay (200ms; 10ms..10s)", 10 * PG_MS, 10 * PG_SEC,
		     "bad bgwriter_delay '%s' (10ms..10s)"),
	OPT_UINT(0, "bgwriter-lru-maxpages", &a.o.bgwriter_lru_maxpages, "N",
		 "bgwriter_lru_maxpages (100)", 0, 1073741823, "bad bgwriter_lru_maxpages '%s'"),
	OPT_DOUBLE(0, "bgwriter-lru-multiplier", &a.o.bgwriter_lru_multiplier, "F",
		   "bgwriter_lru_multiplier (2.0)", 0, 10, "bad bgwriter_lru_multiplier '%s' (0..10)"),
	OPT_DURATION(0, "wal-writer-delay", &a.o.wal_writer_delay_ns, "DURATION",
		     "wal_writer_delay (200ms; 1ms..10s)", PG_MS, 10 * PG_SEC,
		     "bad wal_writer_delay '%s' (1ms..10s)"),
	OPT_SIZE(0, "io-combine-limit", &a.combine, "SIZE", "io_combine_limit (17: 128kB; before: 8kB)",
		 PG_PAGE, 32 * PG_PAGE, PG_PAGE, "bad io_combine_limit '%s' (8kB..256kB)"),
	OPT_UINT(0, "seed", &a.o.seed, "N", "random seed (pgbench --random-seed; default: time)",
		 0, UINT32_MAX, "bad seed '%s'"),
	OPT_RUN_QUIET('q', OPT_RUN_QUIET_HELP),
	OPT_RUN_TRACE(OPT_RUN_TRACE_HELP "\n(several DIRs: FILE.1.iotap, FILE.2.iotap...)"),
	OPT_RUN_FORCE,
	OPT_RUN_NOLOCK("several DIRs: do not start the load and the\n"
		       "clients on all together"),
	OPT_DURATION(0, "cpu-per-txn", &a.o.cpu_per_txn_ns, "DURATION",
		     "CPU each client spends per transaction, as\n"
		     "PostgreSQL's executor does (e.g. 300us; the\n"
		     "bench script measures it); default 0: none", 0, PG_SEC,
		     "bad CPU per transaction '%s' (0..1s, e.g. 300us)"),
	OPT_RUN_TRACE_MODE,
	OPT_RUN_TRACE_GROUP,
	OPT_END(),
};

static const struct opt_cmd pgsql_cmd = {
	.name = "run pgsql",
	.usage = "DIR... [--wal-dir DIR]... [options]",
	.summary =
		"A PostgreSQL server running pgbench's TPC-B, modelled at the system-call\n"
		"level: DIR becomes a data directory (base/DB/ relation files of 8 KiB\n"
		"pages in 1 GiB segments, global/pg_control, pg_xact, WAL segments of\n"
		"16 MiB in DIR/pg_wal or --wal-dir), loaded as pgbench -i loads it, then\n"
		"CLIENTS backends run transactions through a shared_buffers pool with a\n"
		"WAL writer, a background writer and a checkpointer, as PostgreSQL's\n"
		"source does them. Prints pgbench's summary, WAL sync latency, I/O per\n"
		"transaction and log_checkpoints lines. Everything is removed at the end.",
	.opts = pgsql_opts,
	.footer =
		"examples:\n"
		"  iotap run pgsql /mnt/r10/pgdata --wal-dir /mnt/r1/pg_wal -s 100 -c 8 -T 10m \\\n"
		"      --trace pg.iotap\n"
		"  iotap run pgsql /mnt/array/pgdata --era 8.4 --shared-buffers 128MB\n"
		"  iotap run pgsql /mnt/a/pg /mnt/b/pg -s 50 -R 500\n"
		"exit status: 0 ok, 1 a run failed, 2 usage, 130 interrupted (partial results)",
};

/* A target's own part of the run: its WAL directory, options and results. */
struct pg_res {
	const char *wal_dir;			/* --wal-dir, or NULL: DIR/pg_wal */
	struct iotap_workload_target wal_info;
	struct iotap_workload_pgsql_opts o;	/* the run's, with its wal_dir */
	struct iotap_workload_pgsql_result res;
};

static pthread_mutex_t pg_out_lock = PTHREAD_MUTEX_INITIALIZER;

/* --era first: every other default depends on it */
static int find_era(int argc, char **argv, enum iotap_pgsql_era *era)
{
	int i;

	*era = IOTAP_PGSQL_15;
	for (i = 1; i < argc; i++) {
		const char *v = NULL;

		if (!strcmp(argv[i], "--era") && i + 1 < argc)
			v = argv[i + 1];
		else if (!strncmp(argv[i], "--era=", 6))
			v = argv[i] + 6;
		if (v && parse_era(v, era))
			return opt_error(&pgsql_cmd, "--era %s is not modelled (8.4, 9.6, 15, 17)", v);
	}
	return 0;
}

/* Before the options: the defaults of the --era given. */
static int pg_setup(struct run *r, int argc, char **argv)
{
	enum iotap_pgsql_era era;

	(void)r;
	if (find_era(argc, argv, &era))
		return 2;
	iotap_workload_pgsql_opts_init(&a.o, era);
	a.o.seed = (uint32_t)time(NULL) ^ (uint32_t)getpid();
	a.o.warmup_ns = UINT64_MAX;	/* not given: a tenth of -T, below */
	a.progress_s = (unsigned int)(a.o.progress_ns / PG_SEC);
	a.combine = a.o.io_combine_limit * PG_PAGE;
	return 0;
}

/* After them: the values that depend on one another; 0 or the exit status (said). */
static int check_values(struct run *r, struct iotap_workload_pgsql_opts *o)
{
	*o = a.o;
	o->progress_ns = a.progress_s * PG_SEC;
	o->io_combine_limit = (uint32_t)(a.combine / PG_PAGE);
	if (!r->nt)
		return opt_error(&pgsql_cmd, "DIR is required");
	if (a.nwal && a.nwal != r->nt)
		return opt_error(&pgsql_cmd, "%u data directories and %u --wal-dir: give one "
				 "--wal-dir per DIR, in order", r->nt, a.nwal);
	if (o->warmup_ns == UINT64_MAX)
		o->warmup_ns = o->duration_ns / 10;
	if (o->warmup_ns >= o->duration_ns)
		return opt_error(&pgsql_cmd, "the warm-up must be shorter than the duration");
	if (o->rate && o->rate * ((double)o->duration_ns / 1e9) < 1)
		return opt_error(&pgsql_cmd, "at %.3g tps no transaction starts within the "
				 "duration", o->rate);
	if (o->checkpoint_segments && o->era != IOTAP_PGSQL_84)
		warn_msg("checkpoint_segments is 8.4's; --era %s uses max_wal_size",
			 iotap_workload_pgsql_era_name(o->era));
	if (o->era != IOTAP_PGSQL_84)
		o->checkpoint_segments = 0;
	return 0;
}

/* Is @path a directory a model may write in (and not already PostgreSQL's)? */
static int check_dir(const char *path, struct iotap_workload_target *info, const char *const *bad)
{
	char p[4096];
	struct stat st;
	int ret = iotap_workload_target_check(path, 1, info);

	if (ret == -ENOTDIR)
		return opt_error(&pgsql_cmd, "'%s' is not a directory", path);
	if (ret == -EROFS)
		return opt_error(&pgsql_cmd, "'%s' is on a read-only filesystem", path);
	if (ret == -EACCES)
		return opt_error(&pgsql_cmd, "no permission to write in '%s'", path);
	if (ret)
		return opt_error(&pgsql_cmd, "cannot use '%s': %s", path, strerror(-ret));
	for (; *bad; bad++) {
		snprintf(p, sizeof(p), "%s/%s", path, *bad);
		if (!lstat(p, &st))
			return opt_error(&pgsql_cmd, "'%s' already holds '%s': a data or WAL "
					 "directory is not overwritten", path, *bad);
	}
	return 0;
}

/* Every data and WAL directory, and the room on each filesystem; 0 or the exit status. */
static int check_dirs(struct run *r, const struct iotap_workload_pgsql_opts *o)
{
	static const char *const data_bad[] = { "base", "global", "PG_VERSION", "pg_wal",
						"pg_xlog", NULL };
	static const char *const wal_bad[] = { "000000010000000000000001", NULL };
	uint64_t data_need, wal_need;
	unsigned int i, j;

	iotap_workload_pgsql_need(o, &data_need, &wal_need);
	for (i = 0; i < r->nt; i++) {
		struct run_target *t = &r->t[i];
		struct pg_res *p = t->res;

		p->o = *o;
		p->wal_dir = a.nwal ? a.wal[i] : NULL;
		p->o.wal_dir = p->wal_dir;
		if (check_dir(t->path, &t->info, data_bad))
			return 2;
		if (p->wal_dir && check_dir(p->wal_dir, &p->wal_info, wal_bad))
			return 2;
		if (!p->wal_dir)
			p->wal_info = t->info;
		for (j = 0; j < i; j++) {
			const struct pg_res *q = r->t[j].res;

			if (!strcmp(r->t[j].path, t->path))
				return opt_error(&pgsql_cmd, "'%s' is given twice", t->path);
			if (p->wal_dir && q->wal_dir && !strcmp(q->wal_dir, p->wal_dir))
				return opt_error(&pgsql_cmd, "--wal-dir '%s' is given twice",
						 p->wal_dir);
		}
	}
	/* what each filesystem must hold: data and WAL of every target on it */
	for (i = 0; i < r->nt; i++) {
		const struct pg_res *p = r->t[i].res;
		const struct iotap_workload_target *fs[2] = { &r->t[i].info, &p->wal_info };
		const char *where[2] = { r->t[i].path, p->wal_dir ? p->wal_dir : r->t[i].path };
		unsigned int k;

		for (k = 0; k < 2; k++) {
			uint64_t sum = 0;

			for (j = 0; j < r->nt; j++) {
				const struct pg_res *q = r->t[j].res;

				if (r->t[j].info.fsid == fs[k]->fsid)
					sum += data_need;
				if (q->wal_info.fsid == fs[k]->fsid)
					sum += wal_need;
			}
			if (sum > fs[k]->avail_bytes) {
				fprintf(stderr, "iotap run pgsql: '%s' has %.1f MB free; the run needs "
					"%.1f MB (database, and max_wal_size of WAL, of every "
					"target there)\n", where[k], fs[k]->avail_bytes / 1e6,
					sum / 1e6);
				return 2;
			}
		}
	}
	return 0;
}

static int pg_check(struct run *r)
{
	struct iotap_workload_pgsql_opts o;
	int rc = check_values(r, &o);

	if (!rc)
		rc = check_dirs(r, &o);
	free(a.wal);		/* each target's res holds its own */
	a.wal = NULL;
	a.nwal = 0;
	/* the shared checks again (they pass), then --trace-* and the traces */
	return rc ? rc : run_check_targets(r, 1, NULL);
}

/* --- running ------------------------------------------------------------------ */

/* pgsql's progress lines: tps, as pgbench -P; no line at a phase's end */
static void pg_progress(void *arg, const struct iotap_workload_progress *p)
{
	struct run_progress *t = arg;

	pthread_mutex_lock(&pg_out_lock);
	if (isatty(STDERR_FILENO)) {
		if (p->done)
			fprintf(stderr, "\r%-78s\r", "");
		else
			fprintf(stderr, "\r%-36.36s %-8s %5.1f%% %8.1f tps ", t->path, p->phase,
				p->fraction * 100, p->units_per_s);
	} else if (!p->done && p->elapsed_s - t->last_report_ns / 1e9 >= 10) {
		t->last_report_ns = (uint64_t)(p->elapsed_s * 1e9);
		fprintf(stderr, "iotap run: '%s' %s: %.0f%% %.1f tps, %.0f s\n", t->path, p->phase,
			p->fraction * 100, p->units_per_s, p->elapsed_s);
	} else if (p->done) {
		t->last_report_ns = 0;
	}
	fflush(stderr);
	pthread_mutex_unlock(&pg_out_lock);
}

static int pg_run(struct run *r, struct run_target *t)
{
	struct pg_res *p = t->res;

	(void)r;
	return iotap_workload_pgsql_run(t->ctx, &p->o, &p->res);
}

/* --- printing ------------------------------------------------------------------- */

static double per(uint64_t n, uint64_t txns)
{
	return txns ? (double)n / (double)txns : 0;
}

static void print_ckpt(FILE *f, const struct iotap_workload_pgsql_opts *o,
		       const struct iotap_workload_pgsql_ckpt *k)
{
	fprintf(f, "LOG:  checkpoint starting: %s (at %.1f s)\n", k->by_wal ? "wal" : "time",
		k->start_s);
	if (k->partial) {
		fprintf(f, "LOG:  checkpoint %u not complete (the run ended): wrote %" PRIu64
			" buffers; write=%.3f s\n", k->seq, k->buffers, k->write_s);
		return;
	}
	fprintf(f, "LOG:  checkpoint complete: wrote %" PRIu64 " buffers (%.1f%%); %u WAL file(s) "
		"added, %u removed, %u recycled; write=%.3f s, sync=%.3f s, total=%.3f s; sync "
		"files=%u, longest=%.3f s, average=%.3f s; distance=%" PRIu64 " kB, estimate=%"
		PRIu64 " kB\n", k->buffers, 100.0 * (double)k->buffers /
		(double)(o->shared_buffers / 8192), k->added, k->removed, k->recycled, k->write_s,
		k->sync_s, k->total_s, k->sync_files, k->sync_longest_s, k->sync_average_s,
		k->distance_kb, k->estimate_kb);
}

static void print_result(FILE *f, const char *path, const struct pg_res *p)
{
	const struct iotap_workload_pgsql_opts *o = &p->o;
	const struct iotap_workload_pgsql_result *r = &p->res;
	const struct iotap_workload_pgsql_io *io = &r->io_steady;
	static const char *const pct[IOTAP_PGSQL_PCT] = { "50", "90", "95", "99", "99.9", "max" };
	double span_s = r->warmup.elapsed_s + r->steady.elapsed_s;
	char sb[48];
	unsigned int i;

	/* at the top, as bonnie's: what follows is not the whole -T */
	if (r->partial)
		fprintf(f, "*** partial results: interrupted during '%s' after %.1f s of %.0f s ***\n",
			r->steady.ran ? "steady" : r->warmup.ran ? "warmup" : "init", span_s,
			(double)o->duration_ns / 1e9);
	fprintf(f, "iotap run pgsql: PostgreSQL %s model, data directory '%s', WAL in '%s%s'\n",
		iotap_workload_pgsql_era_name(o->era), path, p->wal_dir ? p->wal_dir : path,
		p->wal_dir ? "" : o->era >= IOTAP_PGSQL_15 ? "/pg_wal" : "/pg_xlog");
	if (o->checkpoint_segments)
		snprintf(sb, sizeof(sb), "checkpoint_segments = %u", o->checkpoint_segments);
	else
		snprintf(sb, sizeof(sb), "max_wal_size = %" PRIu64 "MB", o->max_wal_size >> 20);
	fprintf(f, "shared_buffers = %" PRIu64 "kB, checkpoint_timeout = %.0fs, %s, "
		"checkpoint_completion_target = %.2g, wal_sync_method = %s, full_page_writes = %s\n",
		o->shared_buffers >> 10, (double)o->checkpoint_timeout_ns / 1e9, sb,
		o->completion_target, iotap_workload_pgsql_sync_name(o->wal_sync_method),
		o->full_page_writes ? "on" : "off");
	if (r->init.ran)
		fprintf(f, "done in %.2f s (create tables %.2f s, client-side generate %.2f s, "
			"vacuum %.2f s, primary keys %.2f s)%s.\n", r->init.elapsed_s,
			r->init_tables_s, r->init_generate_s, r->init_vacuum_s, r->init_keys_s,
			r->init.partial ? " [interrupted]" : "");
	fprintf(f, "transaction type: <builtin: TPC-B (sort of)>\n");
	fprintf(f, "scaling factor: %u\nquery mode: simple\nnumber of clients: %u\n"
		"number of threads: %u\n", o->scale, o->clients, o->clients);
	/* an interrupted run: the time it ran, not the -T it was given */
	if (r->partial)
		fprintf(f, "duration: %.1f s of %.0f s (warm-up %.1f s)\n", span_s,
			(double)o->duration_ns / 1e9, r->warmup.elapsed_s);
	else
		fprintf(f, "duration: %.0f s (warm-up %.0f s)\n", (double)o->duration_ns / 1e9,
			(double)o->warmup_ns / 1e9);
	fprintf(f, "number of transactions actually processed: %" PRIu64 "\n", r->txns_all);
	fprintf(f, "latency average = %.3f ms\nlatency stddev = %.3f ms\n", r->lat_avg_ms,
		r->lat_stddev_ms);
	fprintf(f, "latency percentiles:");
	for (i = 0; i < IOTAP_PGSQL_PCT; i++)
		fprintf(f, " %s%s %.3f ms%s", i + 1 < IOTAP_PGSQL_PCT ? "p" : "", pct[i],
			r->lat_pct_ms[i], i + 1 < IOTAP_PGSQL_PCT ? "," : "\n");
	if (o->rate > 0) {
		fprintf(f, "rate limit schedule lag: avg %.3f (max %.3f) ms\n", r->lag_avg_ms,
			r->lag_max_ms);
		if (r->late)
			fprintf(f, "number of transactions more than 1 s behind schedule: %" PRIu64
				"\n", r->late);
	}
	fprintf(f, "tps = %.6f (including warm-up)\n", r->tps_all);
	fprintf(f, "tps = %.6f (excluding warm-up)\n", r->tps_steady);
	for (i = 0; i < r->nintervals; i++)
		fprintf(f, "progress: %.1f s, %.1f tps, lat %.3f ms\n",
			(double)(i + 1) * (double)o->progress_ns / 1e9, r->interval_tps[i],
			r->interval_lat_ms[i]);
	fprintf(f, "WAL %s latency (steady): %" PRIu64 " calls, %" PRIu64 " by committing "
		"clients, p50 %.3f ms, p99 %.3f ms, max %.3f ms\n",
		iotap_workload_pgsql_sync_name(o->wal_sync_method), r->sync_n, r->sync_commit_n,
		r->sync_p50_ms, r->sync_p99_ms, r->sync_max_ms);
	fprintf(f, "per transaction (steady): WAL %.0f bytes inserted, %.2f writes of %.0f bytes, "
		"%.3f syncs; data %.3f reads, %.3f writes (checkpointer %.3f, bgwriter %.3f, "
		"backends %.3f), %.3f extensions, %.3f full-page images\n",
		per(io->wal_bytes, io->txns), per(io->wal_writes, io->txns),
		per(io->wal_write_bytes, io->wal_writes), per(io->wal_syncs, io->txns),
		per(io->data_reads, io->txns), per(io->data_writes, io->txns),
		per(io->writes_ckpt, io->txns), per(io->writes_bgwriter, io->txns),
		per(io->writes_backend, io->txns), per(io->extends, io->txns),
		per(io->fpw, io->txns));
	for (i = 0; i < r->nckpt; i++)
		print_ckpt(f, o, &r->ckpt[i]);
	fprintf(f, "model CPU per transaction (steady, all roles): %.1f us user, %.1f us system\n",
		r->cpu_user_us_per_txn, r->cpu_sys_us_per_txn);
}

/* Labelled by the driver (.overlap_first); a target's report once its load began. */
static void pg_print(struct run *r, struct run_target *t)
{
	const struct pg_res *p = t->res;

	(void)r;
	if (p->res.init.ran || p->res.partial)
		print_result(stdout, t->path, p);
}

static void pg_release(struct run_target *t)
{
	struct pg_res *p = t->res;

	iotap_workload_pgsql_result_release(&p->res);
}

const struct run_model pgsql_model = {
	.name = "pgsql",
	.line = "PostgreSQL running pgbench: pgbench's summary, checkpoints",
	.cmd = &pgsql_cmd,
	.res_size = sizeof(struct pg_res),
	.concurrent = 1,
	.overlap_first = 1,
	.setup = pg_setup,
	.check = pg_check,
	.run = pg_run,
	.progress = pg_progress,
	.print = pg_print,
	.release = pg_release,
};
