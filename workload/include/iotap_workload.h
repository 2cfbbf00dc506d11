/* SPDX-License-Identifier: MIT */
/*
 * iotap_workload.h - the one public header of libiotap-workload
 *
 * Workload models that imitate bonnie++ (2.00a, as Debian ships it, and
 * 1.03), iozone, dd and hdparm -T/-t: the same system calls in the same
 * order, timed and reported in the units and layouts of those tools, and
 * recorded, op by op, into an iotap trace (trace/include/iotap_trace.h) with
 * PHASE markers that carry the workload's own CPU time.
 *
 * This header is the run context every model shares; each model's own
 * options, results, run and print functions are in its folder's public
 * header, workload/NAME/include/iotap_NAME.h.
 *
 * Use: check each target with iotap_workload_target_check(), open one
 * struct iotap_workload_ctx per target, run a workload on it (as often as
 * -x repeats ask), print the results, close the context (which closes the
 * trace). Targets may run concurrently, one thread each; a context belongs
 * to the thread that opened it.
 *
 * Every function returns 0 or -errno unless stated otherwise. Nothing here
 * prints except the *_print functions into the FILE they are given, and
 * nothing calls exit() or installs signal handlers: the caller's SIGINT
 * handler calls iotap_workload_interrupt().
 */
#ifndef IOTAP_WORKLOAD_H
#define IOTAP_WORKLOAD_H

#include <stdint.h>
#include <stdio.h>

/* --- targets and run contexts ----------------------------------------- */

/* What iotap_workload_target_check() found. */
struct iotap_workload_target {
	int is_dir;			/* a directory */
	int is_blockdev;		/* a block device */
	uint64_t size;			/* regular file or device: bytes */
	uint64_t avail_bytes;		/* free space for an unprivileged writer */
	uint64_t fsid;			/* filesystem id (statvfs f_fsid), to add up demands */
	uint64_t ram_bytes;		/* physical memory of this machine */
	int is_fuse;			/* on a FUSE filesystem (an iotap mount, say) */
	int is_rdonly;			/* on a read-only filesystem */
};

/*
 * iotap_workload_target_check - can a workload use @path?
 * @need_dir:   1: @path must be a directory we may create files in
 *
 * Writes nothing. Return: 0; -ENOENT, -ENOTDIR (want a directory),
 * -EROFS (read-only filesystem), -EACCES (no write permission), or -errno
 * from stat(2)/statvfs(2).
 */
int iotap_workload_target_check(const char *path, int need_dir,
				struct iotap_workload_target *t);

/*
 * struct iotap_workload_progress - one progress report of a running phase
 *
 * Reports come from the thread that runs the target, about once a second
 * once a phase has run two seconds; a phase that reported ends with one
 * report with @done set.
 */
struct iotap_workload_progress {
	const char *target;		/* the context's directory or file */
	const char *phase;		/* its marker name */
	double fraction;		/* 0..1 done */
	double elapsed_s;		/* since the phase began */
	double mb_per_s;		/* data phases: 10^6 bytes/s since the last report */
	double units_per_s;		/* metadata phases: files (or seeks) per second */
	int done;			/* 1: the phase ended */
	int partial;			/* with done: it was interrupted or failed */
};

typedef void (*iotap_workload_progress_fn)(void *arg, const struct iotap_workload_progress *p);

/* Context flags. */
#define IOTAP_WORKLOAD_DROP_CACHES	(1u << 0)	/* sync, drop_caches before each phase */
#define IOTAP_WORKLOAD_TRACE_FORCE	(1u << 1)	/* overwrite an existing trace file */

/*
 * struct iotap_workload_lockstep - several targets' tests kept in step
 *
 * As bonnie++'s -p/-y semaphores: each context of a command that shares
 * one (env.lockstep) starts each phase only when every other member has
 * reached its next phase begin or left. Make it with @members = the
 * targets; each target leaves once: iotap_workload_ctx_leave() after its
 * run, or iotap_workload_lockstep_leave() if its context never opened.
 * Free it after every target's thread ended.
 */
struct iotap_workload_lockstep;

int iotap_workload_lockstep_new(struct iotap_workload_lockstep **out, unsigned int members);
void iotap_workload_lockstep_leave(struct iotap_workload_lockstep *ls);
void iotap_workload_lockstep_free(struct iotap_workload_lockstep *ls);

/* One phase a context ran: its marker name and CLOCK_MONOTONIC span. */
struct iotap_workload_span {
	char name[64];
	uint64_t t0, t1;
};

struct iotap_workload_env {
	const char *target;		/* directory (or file/device for dd --read and hdparm) */
	const char *trace_path;		/* trace to write, NULL: none */
	const char *cmdline;		/* the command line, for the trace header */
	const char *workload;		/* header.workload: "bonnie -s 64 -n 1" */
	unsigned int flags;		/* IOTAP_WORKLOAD_* */
	iotap_workload_progress_fn progress;	/* NULL: no reports */
	void *progress_arg;
	struct iotap_workload_lockstep *lockstep;	/* NULL: not kept in step */
};

struct iotap_workload_ctx;

/*
 * iotap_workload_ctx_open - start a run on one target
 *
 * Opens the target and, with @env->trace_path, the trace (recorder with
 * one buffer per thread; the header says source "workload", backing = the
 * target, workload = @env->workload) and writes a NAME record for the
 * target. The calling thread owns the context. Return: 0, or -errno of
 * opening the target or the trace (-EEXIST: the trace exists).
 */
int iotap_workload_ctx_open(struct iotap_workload_ctx **out, const struct iotap_workload_env *env);

/*
 * Close the trace (END record) and free @c. Return: 0 or the trace's first
 * write error. A --force run writes its trace under a temporary name and
 * renames it over the old one here; should that be refused (-ETXTBSY: the
 * old trace became another mount's or run's live file) or fail, the run's
 * trace is kept under the temporary name, never deleted: *@kept (when not
 * NULL) is then that name, malloc'ed, else NULL.
 */
int iotap_workload_ctx_close_kept(struct iotap_workload_ctx *c, char **kept);
int iotap_workload_ctx_close(struct iotap_workload_ctx *c);

/* The run on @c is over: leave its lockstep (the others stop waiting for it). */
void iotap_workload_ctx_leave(struct iotap_workload_ctx *c);

/* The phases @c ran so far, in order; valid until the context closes. */
unsigned int iotap_workload_ctx_spans(const struct iotap_workload_ctx *c,
				      const struct iotap_workload_span **spans);

/* What failed last ("write 'Bonnie.123' at 8192"), "" if nothing. */
const char *iotap_workload_ctx_error(const struct iotap_workload_ctx *c);

/* Trace records dropped so far because the trace writer fell behind. */
uint64_t iotap_workload_ctx_lost(struct iotap_workload_ctx *c);

/*
 * With IOTAP_WORKLOAD_DROP_CACHES: 0, or the -errno of the first failure to
 * write /proc/sys/vm/drop_caches (the phases then ran on the page cache).
 */
int iotap_workload_ctx_drop_error(const struct iotap_workload_ctx *c);

/*
 * iotap_workload_interrupt - ask every running workload to stop
 *
 * Async-signal-safe: call it from a SIGINT handler. Running phases end at
 * their next unit, are reported partial, and the files are removed.
 */
void iotap_workload_interrupt(void);
int iotap_workload_interrupted(void);

/* Figures of one phase. */
struct iotap_workload_phase_result {
	int ran;			/* the phase ran (or started, if partial) */
	int partial;			/* interrupted while running */
	double elapsed_s;		/* wall time between its markers */
	double cpu_s;			/* CPU of the workload's threads meanwhile */
	double latency_max_s;		/* longest unit (bonnie++'s latency) */
	uint64_t bytes;			/* data read + written */
	uint64_t units;			/* units done: chunks, files, seeks, records */
};

#endif /* IOTAP_WORKLOAD_H */
