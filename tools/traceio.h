/* SPDX-License-Identifier: MIT */
/*
 * traceio.h - opening traces from the CLI, with git-style error messages
 */
#ifndef IOTAP_TRACEIO_H
#define IOTAP_TRACEIO_H

#include "iotap_trace.h"

/*
 * open_trace_reader - open @path for reading, or print why not
 *
 * Prints "iotap: cannot read trace 'PATH': REASON" on failure.
 * Return: 0 or -errno.
 */
int open_trace_reader(const char *path, unsigned int flags, struct iotap_trace_reader **out);

/*
 * trace_perm_set - give the finished trace @path (a regular file of ours,
 * not followed if a link) the permissions of --trace-mode/--trace-group
 * (the library creates it 0600, so it is never wider while being written).
 * Prints why on failure. Return: 0 or -errno.
 */
int trace_perm_set(const char *path, const struct iotap_trace_perm *perm);

/*
 * Print the damage a finished reader met, as warnings; returns 1 if any.
 * A trace still being written (iotap_live_held()) is said to be that, not
 * an unclosed or torn one.
 */
int warn_damage(const char *path, const struct iotap_trace_read_stats *st);

/*
 * read_progress_setup - progress lines on stderr while @cmd reads traces
 * @want: -1 never (--no-progress), 0 when stderr is a terminal (and, for a
 *        command whose output @streams while it reads, stdout is not), 1
 *        always (--progress: on a file or pipe, a line every 5 s and one
 *        when a file is read)
 *
 * Every trace opened afterwards (open_trace_reader(), iotap_report_build(), compare)
 * gets the line: on a terminal it appears after 1 s of reading and is
 * redrawn in place with the share read and the time left, and cleared
 * when the file is read, before any output or message (error_msg()).
 */
void read_progress_setup(const char *cmd, int want, int streams);

/* Clear a progress line still on the terminal (no-op otherwise). */
void read_progress_clear(void);

/*
 * stop_signals_install - @fn for SIGINT and SIGTERM (and SIGHUP if @hup),
 * no flags, nothing masked: every interrupt only asks a long command
 * (run, replay) to stop, the second one too -- timeout(1) signals the
 * process and then its group, a user presses Ctrl-C twice, and either
 * must still remove the files and close the trace. SIGQUIT (Ctrl-\) or
 * SIGKILL end the process without cleanup.
 */
void stop_signals_install(void (*fn)(int), int hup);

/* "1.2 MB", "340 B" (powers of 1000, as MB everywhere in iotap) */
const char *fmt_bytes(uint64_t bytes, char *buf, size_t len);

#endif /* IOTAP_TRACEIO_H */
