/* SPDX-License-Identifier: MIT */
/*
 * iotap_replay.h - libiotap-replay, the one public header of the
 * replayer: re-issue a captured trace against another directory
 *
 * Prefix iotap_replay_. The library's internals are replay_i.h's (prefix
 * rp_); it issues every call through libiotap-sys (workload/sys/sys.h),
 * the traced-syscall layer the workload models use too.
 *
 * A replay reads a trace twice. The scan (iotap_replay_open)
 * rebuilds the tree the capture started with from the trace alone, finds
 * the recorded threads and plans one replay thread per recorded thread.
 * The run (iotap_replay_run) streams the trace again through a
 * loader thread that turns each operation into a ready-made request with
 * its paths, its file-handle slot and the operations of other threads it
 * must wait for, and hands it to the replay thread of its recorded thread.
 *
 * Use: open (scan), then iotap_replay_check() the target, or
 * iotap_replay_prepare() it, then run, print, close. The calling
 * thread owns the object. Every function returns 0 or -errno unless
 * stated otherwise; nothing prints except the *_print functions, nothing
 * calls exit(), and the caller's SIGINT handler calls
 * iotap_replay_interrupt() to stop a run.
 */
#ifndef IOTAP_REPLAY_H
#define IOTAP_REPLAY_H

#include <stdint.h>
#include <stdio.h>

#include "iotap_trace.h"

/* --timing */
enum iotap_replay_timing {
	IOTAP_REPLAY_RECORDED,		/* each op at its recorded offset from the start */
	IOTAP_REPLAY_ASAP,		/* as fast as the dependencies allow */
	IOTAP_REPLAY_SCALE,		/* recorded offsets divided by scale */
};

/* --data: synthetic file content */
enum iotap_replay_data {
	IOTAP_REPLAY_DATA_RANDOM,	/* incompressible, every 4 KiB block unique */
	IOTAP_REPLAY_DATA_ZERO,		/* zeros */
	IOTAP_REPLAY_DATA_COMPRESSIBLE,	/* compresses about ratio:1, blocks unique */
	IOTAP_REPLAY_DATA_DEDUP,	/* about one block in ratio unique, the rest repeats */
};

/* Flags of struct iotap_replay_opts. */
#define IOTAP_REPLAY_PREPARE		(1u << 0)	/* build the initial state first */
#define IOTAP_REPLAY_FORCE		(1u << 1)	/* run on a tree that does not match */
#define IOTAP_REPLAY_PROCESSES		(1u << 2)	/* a process per recorded process */
#define IOTAP_REPLAY_TRACE_FORCE	(1u << 3)	/* overwrite the output trace */
#define IOTAP_REPLAY_NO_FSUID		(1u << 4)	/* root: keep our fsuid/fsgid */
#define IOTAP_REPLAY_CLOBBER		(1u << 5)	/* prepare may remove and change what
							   the target holds */

/* --map OLD=NEW */
struct iotap_replay_map {
	const char *old_path;		/* absolute (under the captured mount point or
					 * backing directory) or relative to its root */
	const char *new_path;		/* directory that takes that subtree */
};

/* One progress report, about once a second from the thread calling run. */
struct iotap_replay_progress {
	uint64_t ops_done, ops_total;	/* replay requests finished / planned */
	double elapsed_s;		/* since the replay started */
	double trace_s;			/* recorded time reached (of the slowest thread) */
	double lag_ms;			/* recorded timing: largest lag in the last second */
	uint64_t differences;		/* results unlike the recorded ones so far */
};

typedef void (*iotap_replay_progress_fn)(void *arg,
						  const struct iotap_replay_progress *p);

struct iotap_replay_opts {
	const char *trace;		/* the trace to replay */
	const char *target;		/* directory to replay into */
	const char *out_trace;		/* trace of the replay, NULL: none */
	const char *cmdline;		/* for its header */
	unsigned int flags;		/* IOTAP_REPLAY_* */
	enum iotap_replay_timing timing;
	double scale;			/* IOTAP_REPLAY_SCALE: > 0 */
	enum iotap_replay_data data;
	double data_ratio;		/* COMPRESSIBLE, DEDUP: >= 1 */
	const struct iotap_replay_map *maps;
	unsigned int nmaps;
	const char *phase;		/* replay only this phase ("NAME" or "NAME#2"), or NULL */
	uint64_t skip_ops;		/* bit (1 << IOTAP_OP_x): do not replay these ops */
	iotap_replay_progress_fn progress;	/* NULL: no reports */
	void *progress_arg;
};

/* What one op type did in a replay. */
struct iotap_replay_opstat {
	uint64_t recorded;		/* ops of this type in the replayed slice */
	uint64_t replayed;		/* issued (kernel artefacts: passed on as nothing) */
	uint64_t skipped;		/* --skip */
	uint64_t unreplayable;		/* no path, name or handle in the trace */
	uint64_t failed;		/* an error where the capture succeeded */
	uint64_t other_error;		/* another error than the capture's */
	uint64_t succeeded;		/* succeeded where the capture failed */
	uint64_t size_diff;		/* a byte count unlike the capture's (short read...) */
	uint64_t bytes_recorded;	/* READ/WRITE/COPY_FILE_RANGE: bytes in the capture */
	uint64_t bytes;			/* and in the replay */
};

#define IOTAP_REPLAY_EXAMPLES	8

/* struct iotap_replay_stats - the result of a run */
struct iotap_replay_stats {
	struct iotap_replay_opstat op[IOTAP_OP_MAX];
	uint64_t ops;			/* requests issued */
	uint64_t differences;		/* failed + other_error + succeeded + size_diff */
	uint64_t unreplayable;		/* sum over op types */
	double capture_s;		/* recorded span of the slice (first start to last end) */
	double replay_s;		/* replay, first issue to last completion */
	double ops_per_s;		/* ops / replay_s */
	uint64_t lag_mean_ns;		/* recorded/scale: issue time minus scheduled time */
	uint64_t lag_p50_ns, lag_p99_ns, lag_max_ns;
	uint64_t late_ops;		/* issued more than 1 ms behind schedule */
	uint64_t dep_waits;		/* ops that had to wait for another thread */
	uint64_t threads;		/* recorded threads */
	uint64_t lanes;			/* replay threads */
	uint64_t processes;		/* replay processes (--processes), else 1 */
	uint64_t phases;		/* phase markers placed */
	uint64_t trace_lost;		/* records the output trace dropped */
	int interrupted;
	int trace_error;		/* first error writing the output trace, -errno */
	char example[IOTAP_REPLAY_EXAMPLES][256];	/* first differences, one line each */
	unsigned int nexamples;
};

/* What the scan found wrong with the trace itself. */
struct iotap_replay_damage {
	uint64_t chunks_bad;		/* chunks skipped */
	uint64_t bytes_skipped;		/* bytes in no valid chunk (tail included) */
	uint64_t tail_bytes;		/* torn end */
	uint64_t lost_records;		/* records the capture dropped (LOST) */
	int has_end;			/* the writer closed it cleanly */
	uint64_t orphans;		/* ops on file ids the trace never names */
};

/* struct iotap_replay_plan - what the scan planned */
struct iotap_replay_plan {
	uint64_t ops;			/* ops to replay (after --phase and --skip) */
	uint64_t ops_by_type[IOTAP_OP_MAX];
	uint64_t threads, lanes, processes;
	double capture_s;		/* recorded span of the slice */
	uint64_t dirs, files, symlinks, others;	/* initial state entries */
	uint64_t placeholders;		/* of the files: empty ones standing for directory
					 * entries a listing returned but the trace never names */
	uint64_t state_bytes;		/* sum of the initial file sizes */
	uint64_t peak_bytes;		/* largest sum of live file sizes during the slice */
	uint64_t map_hits[16];		/* paths under each --map (at most 16 maps) */
	const char *root;		/* the captured root directory */
	const char *phase;		/* the slice, or NULL */
	struct iotap_replay_damage damage;
};

struct iotap_replay;

/*
 * iotap_replay_open - scan @o->trace and plan the replay
 *
 * Reads the whole trace once: the initial state, the threads, the slice
 * (--phase), the maps. Writes nothing. Return: 0; -ENOENT etc. opening the
 * trace or the target; -EBADMSG/-EPROTONOSUPPORT (not a readable trace);
 * -ESRCH: --phase names no phase of the trace (-ENOMSG: it has no
 * markers at all); -ENXIO: a --map matches nothing (which one:
 * iotap_replay_what); -ENODATA: nothing to replay. On an error
 * *@out may still be set, for iotap_replay_what(): close it.
 */
int iotap_replay_open(struct iotap_replay **out,
			       const struct iotap_replay_opts *o);

/* What the scan planned. Valid until close. */
const struct iotap_replay_plan *
iotap_replay_plan(const struct iotap_replay *r);

/* The subject of the last error ("the --map '/x'", a path), "" if none. */
const char *iotap_replay_what(const struct iotap_replay *r);

/*
 * iotap_replay_check - does the target hold the initial state?
 *
 * Lists into @f (may be NULL) what is missing, of the wrong type or size,
 * and what is in the way of a file the capture creates, at most @max lines
 * and a count of the rest. Return: 0 if the tree matches, -ENOTEMPTY if
 * not, -ENOSPC if a target filesystem cannot hold the initial state (no
 * list then), -errno on I/O errors.
 */
int iotap_replay_check(struct iotap_replay *r, FILE *f, unsigned int max);

/*
 * iotap_replay_changes - what would prepare remove or change?
 *
 * Lists into @f (may be NULL) every entry the target holds that prepare
 * would remove (a name the capture creates or did not find, an entry of
 * another type, a hard link or symlink that differs) or change (a file cut
 * or extended to its recorded size), at most @max lines and a count of the
 * rest. Return: how many, or -errno on I/O errors.
 */
int iotap_replay_changes(struct iotap_replay *r, FILE *f, unsigned int max);

/*
 * iotap_replay_prepare - build the initial state in the target
 * @f: where each removal and change is listed as it is made (may be NULL)
 *
 * Directories, files of their first-seen size with --data content,
 * symlinks (a target of the recorded length), fifos; modes and, as root,
 * owners. Files of the right type and size are kept. Without
 * IOTAP_REPLAY_CLOBBER, a target holding anything prepare would remove or
 * change (iotap_replay_changes()) is refused with -EEXIST and
 * nothing is written; with it, what stands in the way is removed (only
 * below the target and its maps) and files are cut or extended. Refuses
 * with -ENOSPC before writing anything if a target filesystem cannot hold
 * it. Return: 0 or -errno (iotap_replay_what names the path).
 */
int iotap_replay_prepare(struct iotap_replay *r, FILE *f);

/*
 * iotap_replay_run - replay
 *
 * Blocks until every replay thread is done or the run is interrupted.
 * Return: 0 (differences are in @st, not errors), -EEXIST (the output
 * trace exists), -errno opening it or starting threads.
 */
int iotap_replay_run(struct iotap_replay *r,
			      struct iotap_replay_stats *st);

/*
 * iotap_replay_space - will the slice's own growth fit? Return: a
 * sentence saying it may not (valid until close), or NULL.
 */
const char *iotap_replay_space(struct iotap_replay *r);

/* The summary a person reads: ops, differences per op type, lag. */
void iotap_replay_print(FILE *f, const struct iotap_replay *r,
				 const struct iotap_replay_stats *st);

void iotap_replay_close(struct iotap_replay *r);

/*
 * iotap_replay_interrupt - stop a run: every replay thread leaves after its
 * current op, iotap_replay_run() returns with stats->interrupted set.
 * Async-signal-safe (one atomic store); the same flag as
 * iotap_workload_interrupt().
 */
void iotap_replay_interrupt(void);

#endif /* IOTAP_REPLAY_H */
