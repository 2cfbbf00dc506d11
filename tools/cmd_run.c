// SPDX-License-Identifier: MIT
/*
 * cmd_run.c - iotap run MODEL TARGET... [options]: the driver of the models
 *
 * The models are plug-ins (struct run_model, run.h), one row each in the
 * models table (models.c); each lives in its folder under workload/ with
 * its options bound to its own struct. This file finds the model, parses
 * its table (the options every model shares land in run_opts), collects
 * the targets, lets the model check its values and targets, then checks
 * every target before anything is written (missing or read-only directory,
 * free space, an existing trace: exit 2), runs one context per target (all
 * at once, one thread each, in lockstep, or one after another as hdparm
 * does), prints each target's report, labelled when there are several,
 * and turns Ctrl-C into an orderly stop: files removed, partial results
 * printed and marked, traces closed. Exit status: 0, 1 (a run failed),
 * 2 (usage), 130 (interrupted).
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cmds.h"
#include "iotap_base.h"
#include "iotap_trace.h"
#include "iotap_workload.h"
#include "opt.h"
#include "traceio.h"
#include "run.h"

struct run_opts run_opts;

static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;

static void run_usage(FILE *f)
{
	unsigned int i;

	fprintf(f, "usage: iotap run WORKLOAD DIR... [options]\n\n"
		   "Run a benchmark workload, timed and reported as the tool it imitates,\n"
		   "and recorded into an iotap trace with --trace.\n\n"
		   "workloads:\n");
	for (i = 0; run_models[i]; i++)
		fprintf(f, "  %-8s %s\n", run_models[i]->name, run_models[i]->line);
	fprintf(f, "\n'iotap run WORKLOAD --help' lists a workload's options.\n");
}

int parse_u32(const char *s, uint32_t *out)
{
	uint64_t v;

	if (parse_u64(s, &v) || v > UINT32_MAX)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

/* --- common: targets, traces, free space ------------------------------------------------- */

/* FILE for one target; FILE.N.iotap (or FILE.N) for target N of several */
char *run_trace_name(const char *path, unsigned int i, unsigned int n)
{
	const char *dot = strrchr(path, '.');
	size_t len = strlen(path) + 16;
	char *s = malloc(len);

	if (!s)
		return NULL;
	if (n == 1)
		snprintf(s, len, "%s", path);
	else if (dot && !strcmp(dot, ".iotap") && dot > path)
		snprintf(s, len, "%.*s.%u.iotap", (int)(dot - path), path, i + 1);
	else
		snprintf(s, len, "%s.%u", path, i + 1);
	return s;
}

int run_add_target(struct run *r, const char *path)
{
	struct run_target *n = realloc(r->t, (r->nt + 1) * sizeof(*n));

	if (!n) {
		error_msg("out of memory");
		return 1;
	}
	r->t = n;
	memset(&n[r->nt], 0, sizeof(*n));
	n[r->nt].path = path;
	n[r->nt].prog.path = path;
	r->nt++;
	return 0;
}

/* After the options: the TARGET operands. -1 to go on, 1 without memory (said). */
static int take_targets(struct run *r, int argc, char **argv)
{
	int i;

	for (i = optind; i < argc; i++)
		if (run_add_target(r, argv[i]))
			return 1;
	return -1;
}

#define DROP_CACHES "/proc/sys/vm/drop_caches"

void run_drop_warning(const char *cmd, int err)
{
	warn_msg("--drop-caches: cannot write %s: %s; the page cache is not dropped, so "
		 "the figures of 'iotap %s' include it", DROP_CACHES, strerror(-err), cmd);
}

int run_drop_check(const char *cmd)
{
	int err;

	if (!access(DROP_CACHES, W_OK))
		return 0;
	err = -errno;
	run_drop_warning(cmd, err);
	return err;
}

/* --trace-mode or --trace-group (OPT_RUN_TRACE_MODE, _GROUP): 0, or 2 after saying why. */
int run_perm_opt(const struct opt_cmd *cmd, const struct opt_desc *d, const char *arg)
{
	run_opts.perm_set = 1;
	return opt_trace_perm_opt(cmd, d, arg);
}

/* Name each target's trace and check it may be written; 0 or 1 (said). */
static int check_traces(struct run *r)
{
	/* a target (a FILE or DEVICE that dd or hdparm reads) is an input */
	const char **inputs = calloc(r->nt + 1, sizeof(*inputs));
	struct out_rules rules = { .inputs = inputs, .force = run_opts.force, .trace = 1 };
	unsigned int i;
	int ret = 0;

	if (!inputs) {
		error_msg("out of memory");
		return 1;
	}
	for (i = 0; i < r->nt; i++)
		inputs[i] = r->t[i].path;
	for (i = 0; i < r->nt && !ret; i++) {
		if (!r->t[i].trace)
			r->t[i].trace = run_trace_name(run_opts.trace, i, r->nt);
		if (!r->t[i].trace)
			error_msg("out of memory");
		if (!r->t[i].trace || out_check(r->t[i].trace, &rules) < 0)
			ret = 1;
	}
	free(inputs);
	return ret;
}

int run_check_targets(struct run *r, int need_dir, run_need_fn need)
{
	unsigned int i, j;

	if (!r->nt)
		return opt_error(r->cmd, "%s is required", need_dir ? "DIR" : "a target");
	for (i = 0; i < r->nt; i++) {
		struct run_target *t = &r->t[i];
		int ret = iotap_workload_target_check(t->path, need_dir, &t->info);

		if (ret == -ENOTDIR)
			return opt_error(r->cmd, "'%s' is not a directory", t->path);
		if (ret == -EROFS)
			return opt_error(r->cmd, "'%s' is on a read-only filesystem", t->path);
		if (ret == -EACCES)
			return opt_error(r->cmd, "no permission to write in '%s'", t->path);
		if (ret)
			return opt_error(r->cmd, "cannot use '%s': %s", t->path, strerror(-ret));
		for (j = 0; j < i; j++)
			if (!strcmp(r->t[j].path, t->path))
				return opt_error(r->cmd, "'%s' is given twice", t->path);
	}
	for (i = 0; need && i < r->nt; i++) {
		uint64_t sum = 0, avail = r->t[i].info.avail_bytes;

		if (r->t[i].info.is_blockdev)
			continue;
		for (j = 0; j < r->nt; j++)
			if (r->t[j].info.fsid == r->t[i].info.fsid && !r->t[j].info.is_blockdev)
				sum += need(r, &r->t[j]);
		/* a directory the run must write in, not one short of space */
		if (need(r, &r->t[i]) && r->t[i].info.is_rdonly)
			return opt_error(r->cmd, "'%s' is on a read-only filesystem; the run "
					 "writes %.1f MB there", r->t[i].path,
					 need(r, &r->t[i]) / 1e6);
		if (sum > avail) {
			fprintf(stderr,
				"iotap %s: '%s' has %.1f MB free; the run needs %.1f MB%s\n",
				r->cmd->name, r->t[i].path, avail / 1e6, sum / 1e6,
				r->nt > 1 ? " (all targets on that filesystem)" : "");
			return 2;
		}
	}
	if (run_opts.perm_set && !run_opts.trace)
		return opt_error(r->cmd, "--trace-mode and --trace-group need --trace FILE");
	if (run_opts.trace && check_traces(r))
		return 1;
	if (run_opts.drop_caches && geteuid() != 0)
		return opt_error(r->cmd, "--drop-caches needs root");
	if (run_opts.drop_caches && run_drop_check(r->cmd->name))
		r->drop_warned = 1;
	return 0;
}

/* --- progress ---------------------------------------------------------------- */

void run_progress(void *arg, const struct iotap_workload_progress *p)
{
	struct run_progress *t = arg;
	char what[64];

	if (p->mb_per_s > 0 && t->mib)	/* hdparm: its own MB, MiB */
		snprintf(what, sizeof(what), "%8.1f MiB/s", p->mb_per_s * 1e6 / 1048576);
	else if (p->mb_per_s > 0)
		snprintf(what, sizeof(what), "%8.1f MB/s", p->mb_per_s);
	else
		snprintf(what, sizeof(what), "%8.0f /s", p->units_per_s);
	pthread_mutex_lock(&out_lock);
	if (isatty(STDERR_FILENO)) {
		if (p->done)
			fprintf(stderr, "\r%-78s\r", "");
		else
			fprintf(stderr, "\r%-40.40s %-16.16s %5.1f%% %s ", t->path, p->phase,
				p->fraction * 100, what);
	} else if (p->done || p->elapsed_s - t->last_report_ns / 1e9 >= 10) {
		t->last_report_ns = (uint64_t)(p->elapsed_s * 1e9);
		if (p->done)
			fprintf(stderr, "iotap run: '%s' %s: %s, %s average, %.1f s\n", t->path,
				p->phase, p->partial ? "stopped" : "done", what, p->elapsed_s);
		else
			fprintf(stderr, "iotap run: '%s' %s: %.0f%% %s, %.0f s\n", t->path,
				p->phase, p->fraction * 100, what, p->elapsed_s);
		if (p->done)
			t->last_report_ns = 0;
	}
	fflush(stderr);
	pthread_mutex_unlock(&out_lock);
}

static void on_signal(int sig)
{
	(void)sig;
	iotap_workload_interrupt();
}

void run_install_signals(void)
{
	stop_signals_install(on_signal, 1);	/* as bonnie++: Ctrl-C cleans up */
}

/* --- running ----------------------------------------------------------------- */

/* One target's run: a job of the pool (run_all). */
struct job {
	struct run *r;
	struct run_target *t;
};

static void run_one(struct run *r, struct run_target *t)
{
	struct iotap_workload_env env = {
		.target = t->path,
		.trace_path = t->trace,
		.cmdline = r->cmdline,
		.workload = r->workload,
		.flags = (run_opts.force ? IOTAP_WORKLOAD_TRACE_FORCE : 0) |
			 (run_opts.drop_caches ? IOTAP_WORKLOAD_DROP_CACHES : 0),
		.progress = run_opts.quiet ? NULL : r->model->progress ? r->model->progress :
			    run_progress,
		.progress_arg = &t->prog,
		.lockstep = r->lockstep,
	};

	t->open_ret = iotap_workload_ctx_open(&t->ctx, &env);
	if (t->open_ret) {
		iotap_workload_lockstep_leave(r->lockstep);	/* the others do not wait for it */
		return;
	}
	t->ret = r->model->run(r, t);
	iotap_workload_ctx_leave(t->ctx);
}

static void run_job(void *p)
{
	struct job *j = p;

	run_one(j->r, j->t);
}

/*
 * Every target at once: the tree's pool (iotap_pool) with one thread per
 * target, so that each job has its thread from the start (the lockstep
 * waits for all of them); a target without a thread does not start.
 */
static void run_all(struct run *r, int concurrent)
{
	struct iotap_pool *pool = NULL;
	struct job *jobs;
	unsigned int i, started = 0;
	int ret;

	run_install_signals();
	jobs = calloc(r->nt, sizeof(*jobs));
	if (!concurrent || r->nt == 1 || !jobs) {
		for (i = 0; i < r->nt && !iotap_workload_interrupted(); i++)
			run_one(r, &r->t[i]);
		free(jobs);
		return;
	}
	/* bonnie++ -p/-y: every test starts on all the targets together */
	if (!run_opts.no_lockstep && iotap_workload_lockstep_new(&r->lockstep, r->nt))
		r->lockstep = NULL;
	ret = iotap_pool_create(&pool, r->nt, r->nt);
	if (!ret)
		started = iotap_pool_threads(pool);
	for (i = 0; i < r->nt; i++) {
		if (i >= started) {
			r->t[i].open_ret = ret ? ret : -EAGAIN;
			iotap_workload_lockstep_leave(r->lockstep);
			continue;
		}
		jobs[i].r = r;
		jobs[i].t = &r->t[i];
		iotap_pool_add(pool, run_job, &jobs[i]);
	}
	iotap_pool_free(pool);		/* after every job ran */
	iotap_workload_lockstep_free(r->lockstep);
	r->lockstep = NULL;
	r->concurrent = 1;
	free(jobs);
}

/* Print one target's failure or trace problems; return its exit status share. */
static int finish_target(struct run *r, struct run_target *t)
{
	char *kept;
	int rc = 0;

	if (t->open_ret) {
		if (t->open_ret == -EEXIST && t->trace)
			error_msg("cannot create trace '%s': it exists", t->trace);
		else if (t->trace)
			error_msg("cannot start '%s' on '%s' (trace '%s'): %s", r->cmd->name, t->path,
				t->trace, strerror(-t->open_ret));
		else
			error_msg("cannot start '%s' on '%s': %s", r->cmd->name, t->path,
				strerror(-t->open_ret));
		return 1;
	}
	if (t->ret == -EINTR) {
		rc = 130;
	} else if (t->ret) {
		const char *what = iotap_workload_ctx_error(t->ctx);

		error_msg("%s on '%s': %s%s%s", r->cmd->name, t->path, what, *what ? ": " : "",
			strerror(-t->ret));
		rc = 1;
	}
	if (run_opts.drop_caches && !r->drop_warned && iotap_workload_ctx_drop_error(t->ctx)) {
		run_drop_warning(r->cmd->name, iotap_workload_ctx_drop_error(t->ctx));
		r->drop_warned = 1;
	}
	if (t->trace) {
		uint64_t lost = iotap_workload_ctx_lost(t->ctx);

		if (lost)
			warn_msg("trace '%s': %" PRIu64 " records dropped (the trace writer fell "
				 "behind; LOST records say where)", t->trace, lost);
	}
	t->close_ret = iotap_workload_ctx_close_kept(t->ctx, &kept);
	t->ctx = NULL;
	if (kept)	/* not renamed over T: never deleted, said where */
		error_msg("cannot replace trace '%s': %s; this run's trace is kept as '%s'",
			t->trace, t->close_ret == -ETXTBSY ? "another mount or run is writing it" :
			strerror(-t->close_ret), kept);
	else if (t->close_ret)
		error_msg("cannot write trace '%s': %s", t->trace, strerror(-t->close_ret));
	free(kept);
	if (t->close_ret && !rc)
		rc = 1;
	/* the trace this run created, complete: shared as asked */
	if (!t->close_ret && t->trace && run_opts.perm_set &&
	    trace_perm_set(t->trace, &run_opts.perm) && !rc)
		rc = 1;
	return rc;
}

void run_label(struct run *r, struct run_target *t, FILE *f)
{
	if (r->nt > 1)
		fprintf(f, "%s==> %s <==\n", t == r->t ? "" : "\n", t->path);
}

static void print_target(struct run *r, struct run_target *t)
{
	r->model->print(r, t);
	fflush(stdout);
}

static int finish_all(struct run *r)
{
	unsigned int i;
	int rc = 0, trc;

	if (r->nt > 1 && r->concurrent) {
		struct iotap_workload_ctx **ctx = calloc(r->nt, sizeof(*ctx));
		const char **paths = calloc(r->nt, sizeof(*paths));

		for (i = 0; ctx && paths && i < r->nt; i++) {
			ctx[i] = r->t[i].open_ret ? NULL : r->t[i].ctx;
			paths[i] = r->t[i].path;
		}
		if (ctx && paths) {
			/* after the tables (stdout), before the contexts close */
			for (i = 0; i < r->nt && !r->model->overlap_first; i++)
				if (!r->t[i].open_ret)
					print_target(r, &r->t[i]);
			run_print_overlap(stdout, ctx, paths, r->nt, !run_opts.no_lockstep);
			fflush(stdout);
			r->printed = !r->model->overlap_first;
		}
		if (r->model->overlap_first)
			printf("\n");
		free(ctx);
		free(paths);
	}
	for (i = 0; i < r->nt; i++) {
		if (r->model->overlap_first)
			run_label(r, &r->t[i], stdout);
		if (!r->t[i].open_ret && !r->printed)
			print_target(r, &r->t[i]);
		trc = finish_target(r, &r->t[i]);
		if (trc && (!rc || trc == 130))
			rc = trc;
	}
	if (rc == 130)
		fprintf(stderr, "iotap run: interrupted: results above are partial; "
				"files removed%s\n", run_opts.trace ? ", traces closed" : "");
	return rc;
}

static void run_release(struct run *r)
{
	unsigned int i;

	for (i = 0; i < r->nt; i++) {
		free(r->t[i].trace);
		if (r->t[i].res && r->model->release)
			r->model->release(&r->t[i]);
		free(r->t[i].res);
	}
	free(r->t);
	free(r->cmdline);
	free(r->workload);
}


/* --- entry ------------------------------------------------------------------- */

static const struct run_model *find_model(const char *name)
{
	unsigned int i;

	for (i = 0; run_models[i]; i++)
		if (!strcmp(name, run_models[i]->name) ||
		    (run_models[i]->alias && !strcmp(name, run_models[i]->alias)))
			return run_models[i];
	return NULL;
}

/* Parse, check and run @r's model over argv; the exit status. */
static int run_model(struct run *r, int argc, char **argv)
{
	unsigned int i;
	int rc;

	if (r->model->setup) {
		rc = r->model->setup(r, argc, argv);
		if (rc)
			return rc;
	}
	rc = opt_parse(r->cmd, argc, argv);
	if (rc < 0)
		rc = take_targets(r, argc, argv);
	if (rc >= 0)
		return rc;
	for (i = 0; i < r->nt; i++) {
		r->t[i].res = calloc(1, r->model->res_size);
		if (!r->t[i].res) {
			error_msg("out of memory");
			return 1;
		}
	}
	rc = r->model->check(r);
	if (rc)
		return rc;
	run_all(r, r->model->concurrent);
	return finish_all(r);
}

int cmd_run(int argc, char **argv)
{
	static struct run r;
	unsigned int i;
	int rc;

	if (argc < 2) {
		run_usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		run_usage(stdout);
		return 0;
	}
	r.model = find_model(argv[1]);
	if (!r.model) {
		fprintf(stderr, "iotap run: '%s' is not a workload (", argv[1]);
		for (i = 0; run_models[i]; i++)
			fprintf(stderr, "%s%s", i ? ", " : "", run_models[i]->name);
		fprintf(stderr, "); see 'iotap run --help'\n");
		return 2;
	}
	r.cmd = r.model->cmd;
	r.cmdline = iotap_argv_join("iotap run", argc - 1, argv + 1);
	r.workload = iotap_argv_join(NULL, argc - 1, argv + 1);
	if (!r.cmdline || !r.workload)
		rc = 1;
	else
		rc = run_model(&r, argc - 1, argv + 1);
	run_release(&r);
	return rc;
}
