/* SPDX-License-Identifier: MIT */
/*
 * session_i.h - what the daemon's start-up files share
 *
 * session.c runs one mount from start to end around struct fs_daemon;
 * session_opts.c checks the input and turns the options into libfuse's
 * arguments; session_trace.c opens the files the mount writes (the trace's
 * recorder and the log) before the mount. A function that can fail returns
 * 0 or -errno and leaves the text to print after "iotap: " in @msg
 * (MSG_MAX bytes).
 */
#ifndef SESSION_I_H
#define SESSION_I_H

#include "fs_i.h"

#define MSG_MAX 512

struct fs_daemon {
	struct fs_ctx fs;
	struct fuse_args args;
	char mount_opts[1024];		/* for the trace header */
	int log_fd;
	bool trace_created;		/* ours to remove if the mount fails */
	int trace_dirfd;		/* with trace_tmp: the trace's directory, opened
					   before the mount (a rename then never loops
					   through it) */
	char *trace_tmp;		/* --force over an existing trace: the name written
					   until the mount is up (in trace_dirfd) */
	bool mounted;
	bool signals_set;
	bool thread_registered;
};

/* --- session_opts.c ---------------------------------------------------- */

/* Check the input and parse our -o options, before anything is opened. */
int fs_check_input(struct fs_daemon *d, char *msg);
/* The options as the trace header's mount options string (d->mount_opts). */
void fs_describe_opts(struct fs_daemon *d);
/* libfuse's mount arguments (fsname, subtype, max_read, ...) into d->args; 0 or -ENOMEM. */
int fs_build_args(struct fs_daemon *d);

/* --- session_trace.c --------------------------------------------------- */

/* The mount's recorder: a trace file, the flight recorder (--ring), or none. */
int fs_open_recorder(struct fs_daemon *d, char *msg);
/* The log: --log FILE, else TRACE.log in the background. */
int fs_open_log(struct fs_daemon *d, char *msg);
/* Once the mount is up: a trace written under --force's temporary name replaces the old one. */
int fs_put_trace(struct fs_daemon *d, char *msg);
/* A refused mount leaves no trace behind, and the old one (--force) as it was. */
void fs_drop_trace(struct fs_daemon *d);

#endif /* SESSION_I_H */
