/* SPDX-License-Identifier: MIT */
/*
 * run.h - `iotap run`: the workload models as plug-ins (struct run_model,
 * one row each in the models table, iotap_models.h), the options every
 * model shares (struct run_opts, declared once as OPT_RUN_*), and the
 * driver's helpers the models call (cmd_run.c): targets and their checks,
 * signals, --drop-caches, trace names, progress lines.
 */
#ifndef IOTAP_RUN_H
#define IOTAP_RUN_H

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#include "iotap_models.h"
#include "iotap_trace.h"
#include "iotap_workload.h"
#include "opt.h"

/* One target's progress lines on stderr (run_progress() keeps the state). */
struct run_progress {
	const char *path;		/* the target, as given */
	uint64_t last_report_ns;	/* of the last line when stderr is not a tty */
	int mib;			/* rates in MiB/s, as the tool's own lines (hdparm) */
};

/*
 * run_progress - the workload progress callback of every `iotap run`:
 * @arg is the target's struct run_progress. A line rewritten in place on a
 * tty, else one line every 10 s and one at the end of each phase.
 * Context: any workload thread; serialised with the other targets'.
 */
struct iotap_workload_progress;
void run_progress(void *arg, const struct iotap_workload_progress *p);

/*
 * The trace of target @i of @n: PATH itself for one target, else
 * NAME.(i+1).iotap (or PATH.(i+1) without the .iotap suffix). malloc'ed;
 * NULL without memory.
 */
char *run_trace_name(const char *path, unsigned int i, unsigned int n);

/* One target of a run: its context, its progress, the model's results. */
struct run_target {
	const char *path;
	char *trace;
	struct iotap_workload_target info;
	struct iotap_workload_ctx *ctx;
	int ret;			/* the model's run */
	int open_ret;			/* iotap_workload_ctx_open */
	int close_ret;
	void *res;			/* the model's results (run_model.res_size bytes) */
	struct run_progress prog;	/* its progress lines */
	pthread_t thread;
};

/* The options every `iotap run` model shares (OPT_RUN_* below bind them). */
struct run_opts {
	const char *trace;		/* --trace FILE */
	int force;			/* --force */
	int quiet;			/* --quiet */
	int drop_caches;		/* --drop-caches */
	int no_lockstep;		/* --no-lockstep */
	struct iotap_trace_perm perm;	/* --trace-mode, --trace-group */
	int perm_set;
};
extern struct run_opts run_opts;

/*
 * Their table entries, the names and fields declared here once; @help
 * where a model words it in its own terms (test, phase, target).
 */
#define OPT_RUN_TRACE(help) OPT_STRING(0, "trace", &run_opts.trace, "FILE", help)
#define OPT_RUN_TRACE_HELP "record every operation into an iotap trace"
#define OPT_RUN_TRACE_HELP_N OPT_RUN_TRACE_HELP "\n(several targets: FILE.1.iotap, FILE.2.iotap...)"
#define OPT_RUN_FORCE OPT_BOOL(0, "force", &run_opts.force, "overwrite existing trace files")
#define OPT_RUN_QUIET(s, help) OPT_BOOL(s, "quiet", &run_opts.quiet, help)
#define OPT_RUN_QUIET_HELP "no progress on stderr"
#define OPT_RUN_DROP(help) OPT_BOOL(0, "drop-caches", &run_opts.drop_caches, help)
#define OPT_RUN_NOLOCK(help) OPT_BOOL(0, "no-lockstep", &run_opts.no_lockstep, help)
#define OPT_RUN_TRACE_MODE OPT_CALLBACK(0, "trace-mode", &run_opts.perm, "MODE", \
					OPT_TRACE_MODE_HELP("the trace files"), run_perm_opt)
#define OPT_RUN_TRACE_GROUP OPT_CALLBACK(0, "trace-group", &run_opts.perm, "GROUP", \
					 OPT_TRACE_GROUP_HELP, run_perm_opt)
int run_perm_opt(const struct opt_cmd *cmd, const struct opt_desc *d, const char *arg);
/* The tail of most models' tables: --trace, --force, --drop-caches, --no-lockstep, the perms. */
#define OPT_RUN_SHARED(trace_help, drop_help, nolock_help) \
	OPT_RUN_TRACE(trace_help), OPT_RUN_FORCE, OPT_RUN_DROP(drop_help), \
	OPT_RUN_NOLOCK(nolock_help), OPT_RUN_TRACE_MODE, OPT_RUN_TRACE_GROUP
/* The words of --drop-caches and --no-lockstep for a model of tests (bonnie, iozone). */
#define OPT_RUN_DROP_TESTS "sync, drop the page cache before each test (root)"
#define OPT_RUN_NOLOCK_TESTS "several DIRs: do not start each test on all together"

/* A run: one model over its targets (cmd_run.c keeps the one of the process). */
struct run {
	const struct run_model *model;
	const struct opt_cmd *cmd;	/* the model's */
	struct run_target *t;
	unsigned int nt;
	char *cmdline;			/* "iotap run bonnie ..." */
	char *workload;			/* the trace header's "bonnie ...": a model may add to it */
	int concurrent;			/* the targets ran at once */
	int printed;			/* the tables are printed already */
	int drop_warned;		/* the page cache cannot be dropped: said */
	struct iotap_workload_lockstep *lockstep;	/* several targets at once: in step */
};

/*
 * One workload model, a row of the models table. Its options are bound to
 * its own struct (cmd->opts), the shared ones to run_opts. A model gives
 * @check, @run and @print: cmd_run.c parses,
 * collects the targets (a model's option may add one: run_add_target()),
 * gives each a zeroed @res_size result, calls @check (defaults, values,
 * targets: run_check_targets()), runs @run on every target (all at once,
 * one thread each, when @concurrent), @print for each, and closes the
 * traces.
 */
struct run_model {
	const char *name;		/* `iotap run NAME` */
	const char *alias;		/* another name it answers to, or NULL */
	const char *line;		/* its line in `iotap run --help` */
	const struct opt_cmd *cmd;	/* usage, summary, options */
	size_t res_size;		/* its results, per target */
	int concurrent;
	/*
	 * Several targets at once: the overlap of their phases heads the
	 * output, and the driver labels every target's report, one that did
	 * not start too (pgsql); else the overlap follows the reports.
	 */
	int overlap_first;
	/* before the options are parsed (defaults that depend on one): 0 or the exit status */
	int (*setup)(struct run *r, int argc, char **argv);
	/* after: 0, or the exit status after saying why */
	int (*check)(struct run *r);
	/* one target (its own thread when @concurrent): 0 or -errno */
	int (*run)(struct run *r, struct run_target *t);
	void (*print)(struct run *r, struct run_target *t);
	/* its own progress lines instead of run_progress() (@arg: the target's run_progress) */
	void (*progress)(void *arg, const struct iotap_workload_progress *p);
	void (*release)(struct run_target *t);
};

/* The models table (models.c, from iotap_models.h), in `iotap run --help`'s order. */
extern const struct run_model *const run_models[];
#define RUN_MODEL_DECL(name) extern const struct run_model name##_model;
IOTAP_MODELS(RUN_MODEL_DECL, RUN_MODEL_DECL)

/* Add a target to the run; 0, or 1 (the exit status) without memory, said. */
int run_add_target(struct run *r, const char *path);

/*
 * Check every target and trace before anything is written: each a DIR
 * (@need_dir) or a FILE/DEVICE, named once, writable; @need: bytes each
 * target will write (NULL: none), added up per filesystem. Return: 0, or
 * the exit status after saying why.
 */
typedef uint64_t (*run_need_fn)(struct run *r, struct run_target *t);
int run_check_targets(struct run *r, int need_dir, run_need_fn need);

/* "==> PATH <==" above a target's report when there are several. */
void run_label(struct run *r, struct run_target *t, FILE *f);

/* A plain unsigned 32-bit number. 0 or -EINVAL. */
int parse_u32(const char *s, uint32_t *out);

/*
 * SIGINT, SIGTERM and SIGHUP, however many, only ask the run to stop, so
 * that the files are removed and the traces closed (cmd_run.c).
 */
void run_install_signals(void);

/* Can --drop-caches drop the page cache? 0, or -errno after warning. */
int run_drop_check(const char *cmd);
/* --drop-caches failed with @err: the figures of 'iotap @cmd' include the cache. */
void run_drop_warning(const char *cmd, int err);

/*
 * Several directories at once (run_overlap.c): the share, in %, of span @k
 * of target @t during which every other target ran its span of the same
 * name and occurrence; and one line per target with every test's share,
 * after a note saying whether lockstep was on. @ctx must still be open.
 */
struct iotap_workload_ctx;
double run_overlap_pct(struct iotap_workload_ctx *const *ctx, unsigned int n, unsigned int t,
		       unsigned int k);
void run_print_overlap(FILE *f, struct iotap_workload_ctx *const *ctx, const char *const *paths,
		       unsigned int n, int lockstep);

#endif /* IOTAP_RUN_H */
