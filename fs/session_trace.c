// SPDX-License-Identifier: MIT
/*
 * session_trace.c - the files a mount writes, opened before it mounts
 *
 * The recorder (a trace file, or the flight recorder's memory with --ring)
 * and the log are opened before the mount: a trace or log path inside the
 * mount then never goes through it. With --force over an existing trace
 * the new one is written under a temporary name and replaces the old one
 * only once the mount is up; a refused mount leaves no trace behind.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "session_i.h"

/* @p made absolute against the cwd (the daemon's becomes /); malloc'ed, NULL without memory. */
static char *abs_path(const char *p)
{
	char cwd[PATH_MAX], *s;

	if (p[0] == '/')
		return strdup(p);
	if (!getcwd(cwd, sizeof(cwd)))
		return NULL;
	if (asprintf(&s, "%s/%s", cwd, p) < 0)
		return NULL;
	return s;
}

/*
 * --force over an existing trace: write the trace under a free name beside
 * it ("DIR/.NAME.XXXXXX", iotap_replace_tmp()), so that the old trace is
 * kept until the mount is up (fs_put_trace() renames, through a directory fd
 * opened before the mount, for a trace inside the mounted tree) and a
 * refused mount loses nothing.
 */
static int prepare_trace_tmp(struct fs_daemon *d, char *msg)
{
	const char *path = d->fs.trace_path, *slash = strrchr(path, '/');
	char *dir = slash == path ? strdup("/") : strndup(path, (size_t)(slash - path));
	int ret = -ENOMEM;

	if (!dir)
		goto err;
	d->trace_dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (d->trace_dirfd < 0) {
		ret = -errno;
		goto err;
	}
	ret = iotap_replace_tmp(path, &d->trace_tmp);
	if (ret)
		goto err;
	/* the recorder gives it the trace's permissions when it opens it */
	free(dir);
	return 0;

err:
	snprintf(msg, MSG_MAX, "cannot create trace '%s': %s", d->fs.o.trace_path,
		 strerror(-ret));
	free(d->trace_tmp);
	d->trace_tmp = NULL;
	free(dir);
	return ret;
}

/* Once the mount is up: the trace written under its temporary name replaces the old one. */
int fs_put_trace(struct fs_daemon *d, char *msg)
{
	const char *tmp, *name;
	int ret;

	if (!d->trace_tmp)
		return 0;
	tmp = strrchr(d->trace_tmp, '/') + 1;
	name = strrchr(d->fs.trace_path, '/') + 1;
	/* became another mount's or run's live trace since the check: not ours to replace */
	if (iotap_live_held(d->trace_dirfd, name) > 0) {
		snprintf(msg, MSG_MAX, "cannot mount '%s': trace '%s' is being written by another "
			 "mount or run; it is never replaced, not even with --force",
			 d->fs.o.mountpoint, d->fs.o.trace_path);
		return -ETXTBSY;
	}
	if (renameat(d->trace_dirfd, tmp, d->trace_dirfd, name)) {
		ret = -errno;
		snprintf(msg, MSG_MAX, "cannot mount '%s': cannot replace trace '%s': %s",
			 d->fs.o.mountpoint, d->fs.o.trace_path, strerror(-ret));
		return ret;
	}
	free(d->trace_tmp);
	d->trace_tmp = NULL;
	return 0;
}

/* A refused mount leaves no trace behind, and the old one (--force) as it was. */
void fs_drop_trace(struct fs_daemon *d)
{
	if (d->trace_tmp)
		unlinkat(d->trace_dirfd, strrchr(d->trace_tmp, '/') + 1, 0);
	else if (d->trace_created)
		unlink(d->fs.trace_path);
}

int fs_open_recorder(struct fs_daemon *d, char *msg)
{
	struct fs_ctx *fs = &d->fs;
	const struct iotap_fs_opts *o = &fs->o;
	struct iotap_trace_recorder_opts ro;
	struct iotap_trace_header hdr;
	struct stat st;
	char *layout;
	int ret;

	pthread_mutex_init(&fs->ctl_lock, NULL);
	fs_calls_init(fs);
	fs->mount_opts = d->mount_opts;
	fs->start_ns = iotap_trace_now_ns();
	fs->filter = o->only_ops || o->only_uid_set || o->only_pid || fs->under.n;
	if (o->ring_bytes) {
		/* flight recorder: recording from the start, into memory */
		fs_recorder_opts(fs, &ro);
		ro.ring_bytes = o->ring_bytes;
		ret = iotap_trace_recorder_open(&fs->recorder, NULL, NULL, &ro);
		if (ret) {
			snprintf(msg, MSG_MAX, "cannot start the flight recorder: %s", strerror(-ret));
			return ret;
		}
		fs->ring = 1;
		fs->rec = fs->recorder;
		/* triggered saves happen in the daemon, whose cwd is / */
		if (o->save_to && !(fs->o.save_to = abs_path(o->save_to))) {
			snprintf(msg, MSG_MAX, "--save-to '%s': %s", o->save_to, strerror(ENOMEM));
			return -ENOMEM;
		}
		return 0;
	}
	if (!o->trace_path)
		return 0;
	fs->trace_base = abs_path(o->trace_path);
	/* a strftime(3) pattern names each file when it opens (control.c) */
	fs->trace_path = fs->trace_base ? fs_ctl_expand(fs, fs->trace_base) : NULL;
	if (!fs->trace_path) {
		snprintf(msg, MSG_MAX, "cannot create trace '%s': %s", o->trace_path,
			 strerror(errno));
		return -errno;
	}
	fs_trace_header(fs, &hdr, &layout);
	fs_recorder_opts(fs, &ro);
	/* only a regular file is replaced by rename: a device (/dev/null) is written to */
	if (o->force && !lstat(fs->trace_path, &st) && S_ISREG(st.st_mode)) {
		ret = prepare_trace_tmp(d, msg);
		if (ret) {
			free(layout);
			return ret;
		}
	} else if (o->force) {
		ro.flags |= IOTAP_TRACE_FORCE;
	}
	ret = iotap_trace_recorder_open(&fs->rec, d->trace_tmp ? d->trace_tmp : fs->trace_path,
					&hdr, &ro);
	free(layout);
	if (ret == -EEXIST)
		snprintf(msg, MSG_MAX, "trace '%s' exists; use --force to overwrite",
			 o->trace_path);
	else if (ret)
		snprintf(msg, MSG_MAX, "cannot create trace '%s': %s", o->trace_path,
			 strerror(-ret));
	if (!ret && !d->trace_tmp)
		d->trace_created = true;
	fs->recorder = fs->rec;
	if (!ret)
		fs_ctl_note_file(fs, fs->trace_path);
	return ret;
}

int fs_open_log(struct fs_daemon *d, char *msg)
{
	struct fs_ctx *fs = &d->fs;
	const struct iotap_fs_opts *o = &fs->o;

	if (o->log_path)
		fs->log_path = abs_path(o->log_path);
	else if (!o->foreground && fs->trace_path && asprintf(&fs->log_path, "%s.log",
							      fs->trace_path) < 0)
		fs->log_path = NULL;
	if (!fs->log_path && !o->foreground) {
		/* in the background stderr is /dev/null: saves, refusals, losses would vanish */
		snprintf(msg, MSG_MAX, "cannot mount '%s': a mount without --trace FILE (untraced, "
			 "or --ring) has no TRACE.log to log to: give --log FILE (or -f to log "
			 "to stderr)", o->mountpoint);
		return -EINVAL;
	}
	if (!fs->log_path)
		return 0;
	/* a new log gets the trace's permissions (it names files and callers too) */
	d->log_fd = open(fs->log_path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC |
			 O_NOCTTY, 0600);
	if (d->log_fd >= 0) {
		int ret = iotap_trace_perm_apply(d->log_fd, &fs->perm);

		if (ret) {
			snprintf(msg, MSG_MAX, "cannot set the mode of log '%s': %s",
				 fs->log_path, strerror(-ret));
			close(d->log_fd);
			d->log_fd = -1;
			unlink(fs->log_path);
			return ret;
		}
	} else if (errno == EEXIST) {
		d->log_fd = open(fs->log_path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOCTTY);
	}
	if (d->log_fd < 0) {
		snprintf(msg, MSG_MAX, "cannot open log '%s': %s", fs->log_path,
			 strerror(errno));
		return -errno;
	}
	fs_log_set_fd(d->log_fd);
	return 0;
}
