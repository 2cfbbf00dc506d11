/* SPDX-License-Identifier: MIT */
/*
 * run.h - what cmd_run.c shares with the workloads whose command lines live
 * in files of their own (run_dedup.c, run_pgsql.c), so every workload
 * behaves alike: signals, --drop-caches, the trace name per directory.
 */
#ifndef IOTAP_RUN_H
#define IOTAP_RUN_H

#include <stdint.h>
#include <stdio.h>

/* `iotap run dedup` (run_dedup.c); argv[0] is "dedup". Returns the exit status. */
int cmd_run_dedup(int argc, char **argv);

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
