// SPDX-License-Identifier: MIT
/*
 * session.c - iotap_fs_main(): checks, daemonizing, mount, serve, teardown
 *
 * Order of events, and why:
 *
 *  1. Daemonize first. Unless in the foreground, iotap_fs_main() forks
 *     before it opens anything: the recorder starts a writer thread and
 *     liburcu starts helper threads, and threads do not survive fork(). The
 *     child does all the work and reports "ok" or the error text through a
 *     pipe; the parent prints the error (git style) and returns 1, or
 *     returns 0 once the mount is up. The child never returns into the
 *     caller: it _exit()s when the session ends.
 *  2. Check the input (backing and mount point are directories, the mount
 *     point is not already mounted unless it is the backing dir itself,
 *     /dev/fuse exists), then open the backing dir and the trace
 *     BEFORE mounting: mounting over the backing dir in place hides it, and
 *     a trace or log path inside the mount never goes through the mount.
 *  3. Mount, then install the wire shim (wire.c) as the session's I/O on
 *     its /dev/fuse fd (fuse_session_custom_io): it sees every request
 *     header first and records those libfuse answers itself without calling
 *     us (locks, tmpfile, unknown opcodes), and negotiates
 *     FUSE_HANDLE_KILLPRIV_V2 where libfuse cannot. A custom I/O also turns
 *     splice off, so write payloads always arrive in memory. The transport
 *     (--transport) is settled with the input checks, before the trace
 *     header is written; with io_uring the INIT reply starts the rings
 *     (transport/uring.c) and libfuse's loop keeps the device for what the
 *     kernel still sends there (FORGET, INTERRUPT).
 *  4. Serve with fuse_session_loop_mt() until unmounted (the loop ends on
 *     ENODEV) or signalled (fuse_set_signal_handlers: SIGTERM, SIGINT,
 *     SIGHUP end the session). Only the main thread may take those signals:
 *     they are blocked while setup starts other threads (recorder, liburcu)
 *     so those inherit the block, and libfuse's workers block them too; the
 *     main thread unblocks them just before the loop, whose sem_wait() they
 *     interrupt.
 *  5. Teardown: unmount if still mounted, stop the ring threads (they hold
 *     /dev/fuse open), destroy the session (no worker is
 *     left), free the inode table after an RCU barrier, close the recorder
 *     (it writes the END record) and exit 0.
 *
 * Signals and the recorder never change an I/O result; a trace that stops
 * being writable (disk full) is logged once (capture.c) and the mount keeps
 * serving.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "fs_i.h"
#include "iotap_base.h"

#define MSG_MAX 512

/* Options the daemon takes from -o itself; the rest goes to libfuse. */
struct fs_own_opts {
	unsigned int cache_mode;
	unsigned int fd_cache;
	unsigned int max_read;
	unsigned int uring_depth;
	unsigned int uring_spin;
	int uring_spin_set;
	unsigned int max_write;
	double timeout;
	int timeout_set;
	double attr_timeout, entry_timeout;
	int attr_set, entry_set;
};

static const struct fuse_opt own_opt_spec[] = {
	{ "cache_mode=%u", offsetof(struct fs_own_opts, cache_mode), 0 },
	{ "fd_cache=%u", offsetof(struct fs_own_opts, fd_cache), 0 },
	{ "max_read=%u", offsetof(struct fs_own_opts, max_read), 0 },
	{ "uring_depth=%u", offsetof(struct fs_own_opts, uring_depth), 0 },
	{ "uring_spin=%u", offsetof(struct fs_own_opts, uring_spin), 0 },
	{ "uring_spin=", offsetof(struct fs_own_opts, uring_spin_set), 1 },
	{ "max_write=%u", offsetof(struct fs_own_opts, max_write), 0 },
	{ "timeout=%lf", offsetof(struct fs_own_opts, timeout), 0 },
	{ "timeout=", offsetof(struct fs_own_opts, timeout_set), 1 },
	{ "attr_timeout=%lf", offsetof(struct fs_own_opts, attr_timeout), 0 },
	{ "attr_timeout=", offsetof(struct fs_own_opts, attr_set), 1 },
	{ "entry_timeout=%lf", offsetof(struct fs_own_opts, entry_timeout), 0 },
	{ "entry_timeout=", offsetof(struct fs_own_opts, entry_set), 1 },
	FUSE_OPT_END
};

/* --- libfuse callbacks ------------------------------------------------- */

static void fs_op_init(void *userdata, struct fuse_conn_info *conn)
{
	struct fs_ctx *fs = userdata;

	/*
	 * libfuse has already capped max_write to its request buffer (1 MiB
	 * + header with FUSE_MAX_PAGES, 128 KiB without): never raise it.
	 * The pages per request go into the INIT reply (wire.c), which logs
	 * what was negotiated.
	 */
	if (conn->max_write > fs->max_write)
		conn->max_write = fs->max_write;
	conn->max_read = fs->max_read;	/* must equal the max_read mount option */
	/* the kernel clears setuid/setgid bits itself; we write as root */
	conn->want &= ~FUSE_CAP_HANDLE_KILLPRIV;
#if !FS_WIRE_KILLPRIV
	/* libfuse negotiates HANDLE_KILLPRIV_V2 and relays its flags (wire.c) */
	if (conn->capable & FUSE_CAP_HANDLE_KILLPRIV_V2)
		conn->want |= FUSE_CAP_HANDLE_KILLPRIV_V2;
	fs_log(FS_LOG_INFO, "%s", conn->want & FUSE_CAP_HANDLE_KILLPRIV_V2 ?
	       "HANDLE_KILLPRIV_V2 on: the daemon drops suid/sgid bits" :
	       "HANDLE_KILLPRIV_V2 not offered by the kernel");
#endif
	if (fs->cache_mode) {
		if (conn->capable & FUSE_CAP_WRITEBACK_CACHE)
			conn->want |= FUSE_CAP_WRITEBACK_CACHE;
		else
			fs_log(FS_LOG_WARN, "the kernel offers no writeback cache");
	}
	fs_log(FS_LOG_INFO, "FUSE protocol %u.%u, max_write %u, max_read %u, max_readahead %u%s",
	       conn->proto_major, conn->proto_minor, conn->max_write, conn->max_read,
	       conn->max_readahead,
	       conn->want & FUSE_CAP_WRITEBACK_CACHE ? ", writeback cache" : "");
}

static void fs_op_destroy(void *userdata)
{
	(void)userdata;
	fs_log(FS_LOG_DEBUG, "session destroyed");
}

/* --- setup helpers ------------------------------------------------------- */

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

/* Undo mountinfo's octal escapes (\040 etc.) in place. */
static void unescape_octal(char *s)
{
	char *d = s;

	while (*s) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*d++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
			s += 4;
		} else {
			*d++ = *s++;
		}
	}
	*d = '\0';
}

/*
 * The filesystem type of the topmost mount at @path ("" if @path is no
 * mount point), in @type. 0 or -errno.
 */
static int mount_type_at(const char *path, char *type, size_t size)
{
	char *line = NULL;
	size_t cap = 0;
	FILE *f;

	type[0] = '\0';
	f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		char *fields[5], *sep, *save = NULL, *p = line;
		int i;

		for (i = 0; i < 5; i++) {
			fields[i] = strtok_r(p, " ", &save);
			p = NULL;
			if (!fields[i])
				break;
		}
		if (i < 5)
			continue;
		unescape_octal(fields[4]);
		if (strcmp(fields[4], path))
			continue;
		sep = save ? strstr(save, " - ") : NULL;
		if (sep) {
			char *t = sep + 3;

			snprintf(type, size, "%.*s", (int)strcspn(t, " "), t);
		} else {
			snprintf(type, size, "?");
		}
	}
	free(line);
	fclose(f);
	return 0;
}

static void raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			fs_log(FS_LOG_WARN, "cannot raise RLIMIT_NOFILE: %s", strerror(errno));
	}
}

static unsigned long nofile_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY)
		return 1024 * 1024;
	return rl.rlim_cur;
}

static void block_signals(sigset_t *old)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGQUIT);
	pthread_sigmask(SIG_BLOCK, &set, old);
}

/* --- the daemon ------------------------------------------------------------- */

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

/* The kernel's cap on pages per request, 0 if it has none to read (then 256, compiled in). */
static unsigned int read_max_pages_limit(void)
{
	unsigned int v = 0;
	FILE *f = fopen("/proc/sys/fs/fuse/max_pages_limit", "re");

	if (f) {
		if (fscanf(f, "%u", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v;
}

/*
 * Plan max_write and max_pages before mounting (the header is written
 * before the INIT request comes): one call of up to max_write bytes needs
 * max_write / page + 1 pages when its buffer does not start on a page;
 * ask for that, up to fs.fuse.max_pages_limit (never changed here). Where
 * the limit is lower, max_write shrinks to what the pages hold, so aligned
 * calls stay whole and only unaligned ones are cut (marked IOTAP_OPF_CUT).
 */
static void plan_request_limits(struct fs_ctx *fs)
{
	unsigned int page = (unsigned int)sysconf(_SC_PAGESIZE), limit, cap;

	fs->page_size = page;
	fs->max_pages_want = (fs->max_write_asked + page - 1) / page + 1;
	fs->max_pages_limit = read_max_pages_limit();
	limit = fs->max_pages_limit ? fs->max_pages_limit : FS_KERNEL_MAX_PAGES;
	fs->max_pages = fs->max_pages_want < limit ? fs->max_pages_want : limit;
	cap = fs->max_pages * page;
	fs->max_write = fs->max_write_asked < cap ? fs->max_write_asked : cap;
	fs_describe_limits(fs);
}

/*
 * Check the input and parse our -o options. On failure @msg gets the text
 * to print after "iotap: ".
 */
static int check_input(struct fs_daemon *d, char *msg)
{
	struct fs_ctx *fs = &d->fs;
	const struct iotap_fs_opts *o = &fs->o;
	struct fs_own_opts own = { .cache_mode = o->cache_mode, .fd_cache = o->fd_cache };
	char type[64];
	struct stat st;
	size_t len;
	int ret;

	if (o->fuse_opts && *o->fuse_opts) {
		if (fuse_opt_add_arg(&d->args, "-o") || fuse_opt_add_arg(&d->args, o->fuse_opts))
			goto enomem;
		if (fuse_opt_parse(&d->args, &own, own_opt_spec, NULL) < 0) {
			snprintf(msg, MSG_MAX, "cannot mount '%s': bad -o options '%s'",
				 o->mountpoint, o->fuse_opts);
			return -EINVAL;
		}
	}
	fs->cache_mode = own.cache_mode ? 1 : 0;
	fs->perm.mode = o->trace_mode;
	fs->perm.has_gid = o->trace_gid_set;
	fs->perm.gid = o->trace_gid;
	if (own.uring_depth)
		fs->o.uring_depth = own.uring_depth;
	if (own.uring_spin_set) {
		if (own.uring_spin > FS_URING_SPIN_MAX_US) {
			snprintf(msg, MSG_MAX, "cannot mount '%s': uring_spin %u out of range: "
				 "0 (off) to %u microseconds", o->mountpoint, own.uring_spin,
				 FS_URING_SPIN_MAX_US);
			return -EINVAL;
		}
		fs->o.uring_spin_us = own.uring_spin;
		fs->o.uring_spin_set = 1;
	}
	fs->max_read = own.max_read && own.max_read < FS_MAX_IO ? own.max_read : FS_MAX_IO;
	fs->max_write_asked = o->max_write ? o->max_write : own.max_write ? own.max_write : FS_MAX_IO;
	if (fs->max_write_asked < FS_MIN_WRITE || fs->max_write_asked > FS_MAX_WRITE_URING) {
		snprintf(msg, MSG_MAX, "cannot mount '%s': max_write %u out of range: %u to %u bytes "
			 "(%u over /dev/fuse: libfuse %s reads requests into a buffer of 1 MiB + "
			 "4 KiB)", o->mountpoint, fs->max_write_asked, FS_MIN_WRITE,
			 FS_MAX_WRITE_URING, FS_MAX_IO, fuse_pkgversion());
		return -EINVAL;
	}
	plan_request_limits(fs);
	fs->o.fd_cache = own.fd_cache ? own.fd_cache : FS_DEFAULT_FD_CACHE;
	/* timeout= sets both; attr_timeout= and entry_timeout= one each */
	fs->attr_timeout = own.timeout_set ? own.timeout : FS_DEFAULT_TIMEOUT;
	fs->entry_timeout = fs->attr_timeout;
	if (own.attr_set)
		fs->attr_timeout = own.attr_timeout;
	if (own.entry_set)
		fs->entry_timeout = own.entry_timeout;
	/* --attr-timeout, --entry-timeout over -o */
	if (o->attr_set)
		fs->attr_timeout = o->attr_timeout;
	if (o->entry_set)
		fs->entry_timeout = o->entry_timeout;
	if (fs->attr_timeout < 0 || fs->entry_timeout < 0) {
		snprintf(msg, MSG_MAX, "cannot mount '%s': negative timeout", o->mountpoint);
		return -EINVAL;
	}

	if (stat(o->backing, &st) < 0) {
		snprintf(msg, MSG_MAX, "cannot mount '%s': backing directory '%s': %s",
			 o->mountpoint, o->backing, strerror(errno));
		return -errno;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(msg, MSG_MAX, "cannot mount '%s': backing '%s' is not a directory",
			 o->mountpoint, o->backing);
		return -ENOTDIR;
	}
	if (stat(o->mountpoint, &st) < 0) {
		if (errno == ENOTCONN)
			snprintf(msg, MSG_MAX, "cannot mount '%s': the daemon of the mount there "
				 "is gone (killed or crashed); 'iotap umount %s' removes the dead "
				 "mount", o->mountpoint, o->mountpoint);
		else
			snprintf(msg, MSG_MAX, "cannot mount '%s': %s", o->mountpoint,
				 strerror(errno));
		return -errno;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(msg, MSG_MAX, "cannot mount '%s': not a directory", o->mountpoint);
		return -ENOTDIR;
	}
	fs->backing = realpath(o->backing, NULL);
	fs->mountpoint = realpath(o->mountpoint, NULL);
	if (!fs->backing || !fs->mountpoint)
		goto enomem;
	len = strlen(fs->backing);
	if (!strncmp(fs->mountpoint, fs->backing, len) &&
	    (fs->mountpoint[len] == '/' || (len == 1 && fs->mountpoint[1]))) {
		/* the daemon's own lookups would walk into its mount */
		snprintf(msg, MSG_MAX, "cannot mount '%s': it is inside the backing directory "
			 "'%s'", o->mountpoint, o->backing);
		return -ELOOP;
	}
	if (mount_type_at(fs->mountpoint, type, sizeof(type)) == 0 && type[0]) {
		if (!strcmp(type, "fuse.iotap")) {
			char pid[24];

			/* stat may still answer from the kernel's cache: ask the daemon */
			if (getxattr(fs->mountpoint, IOTAP_FS_XATTR_PID, pid, sizeof(pid)) < 0 &&
			    errno == ENOTCONN)
				snprintf(msg, MSG_MAX, "cannot mount '%s': the daemon of the iotap "
					 "mount there is gone (killed or crashed); 'iotap umount "
					 "%s' removes the dead mount", o->mountpoint,
					 o->mountpoint);
			else
				snprintf(msg, MSG_MAX, "cannot mount '%s': already an iotap mount",
					 o->mountpoint);
			return -EBUSY;
		}
		/* mounting over a mount point is fine when it is the backing dir itself */
		if (strcmp(fs->mountpoint, fs->backing)) {
			snprintf(msg, MSG_MAX, "cannot mount '%s': already mounted (%s); only "
				 "the backing directory itself may be mounted over",
				 o->mountpoint, type);
			return -EBUSY;
		}
	}
	if (access("/dev/fuse", R_OK | W_OK) < 0) {
		snprintf(msg, MSG_MAX, "cannot mount '%s': /dev/fuse: %s", o->mountpoint,
			 strerror(errno));
		return -errno;
	}
	ret = fs_transport_choose(fs, msg, MSG_MAX);
	if (ret)
		return ret;
	/* libfuse reads /dev/fuse into 1 MiB + 4 KiB: only the rings can take more */
	if (fs->max_write_asked > FS_MAX_IO && fs->transport != IOTAP_FS_TRANSPORT_URING) {
		snprintf(msg, MSG_MAX, "cannot mount '%s': --max-write %u needs FUSE over io_uring "
			 "(--transport uring, with 'echo Y > /sys/module/fuse/parameters/"
			 "enable_uring'): over /dev/fuse libfuse %s reads requests into a buffer "
			 "of 1 MiB + 4 KiB, so %u is the most", o->mountpoint, fs->max_write_asked,
			 fuse_pkgversion(), FS_MAX_IO);
		return -EINVAL;
	}
	return 0;

enomem:
	snprintf(msg, MSG_MAX, "cannot mount '%s': %s", o->mountpoint, strerror(ENOMEM));
	return -ENOMEM;
}

/*
 * --force over an existing trace: write the trace under a free name beside
 * it ("DIR/.NAME.XXXXXX", iotap_replace_tmp()), so that the old trace is
 * kept until the mount is up (put_trace() renames, through a directory fd
 * opened before the mount, for a trace inside the mounted tree) and a
 * refused mount loses nothing.
 */
static int open_trace_tmp(struct fs_daemon *d, char *msg)
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
static int put_trace(struct fs_daemon *d, char *msg)
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
static void drop_trace(struct fs_daemon *d)
{
	if (d->trace_tmp)
		unlinkat(d->trace_dirfd, strrchr(d->trace_tmp, '/') + 1, 0);
	else if (d->trace_created)
		unlink(d->fs.trace_path);
}

static int open_trace(struct fs_daemon *d, char *msg)
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
		ret = open_trace_tmp(d, msg);
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

static int open_log(struct fs_daemon *d, char *msg)
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

static void describe_opts(struct fs_daemon *d)
{
	struct fs_ctx *fs = &d->fs;
	int i, n;

	n = snprintf(d->mount_opts, sizeof(d->mount_opts),
		     "%s,attr_timeout=%g,entry_timeout=%g,max_write=%u,max_read=%u,fd_cache=%u%s",
		     fs->cache_mode ? "cache_mode=1,writeback_cache,keep_cache" : "direct_io",
		     fs->attr_timeout, fs->entry_timeout, fs->max_write, fs->max_read, fs->o.fd_cache,
		     fs->privileged ? ",allow_other,default_permissions" : "");
	/* capture filters: the trace holds only what passed them */
	if (fs->o.only_ops && n > 0 && (size_t)n < sizeof(d->mount_opts)) {
		const char *sep = ",only_ops=";

		for (i = 0; i < 64 && n > 0 && (size_t)n < sizeof(d->mount_opts); i++)
			if (fs->o.only_ops >> i & 1) {
				n += snprintf(d->mount_opts + n, sizeof(d->mount_opts) - n, "%s%s",
					      sep, iotap_trace_op_name((unsigned int)i));
				sep = "+";
			}
	}
	if (fs->o.only_uid_set && n > 0 && (size_t)n < sizeof(d->mount_opts))
		n += snprintf(d->mount_opts + n, sizeof(d->mount_opts) - n, ",only_uid=%u",
			      fs->o.only_uid);
	if (fs->o.only_pid && n > 0 && (size_t)n < sizeof(d->mount_opts))
		n += snprintf(d->mount_opts + n, sizeof(d->mount_opts) - n, ",only_pid=%u",
			      fs->o.only_pid);
	/* one only_under= per subtree (a path may hold '+'), relative to the mount root */
	for (i = 0; i < (int)fs->under.n && n > 0 && (size_t)n < sizeof(d->mount_opts); i++)
		n += snprintf(d->mount_opts + n, sizeof(d->mount_opts) - n, ",only_under=%s",
			      fs->under.rel[i]);
	/* the transport and why (transport/uring_setup.c), then what is left of -o */
	if (n > 0 && (size_t)n < sizeof(d->mount_opts))
		n += snprintf(d->mount_opts + n, sizeof(d->mount_opts) - n,
			      ",transport=%s,transport_why=%s",
			      fs->transport == IOTAP_FS_TRANSPORT_URING ? "uring" : "dev",
			      fs->transport_why);
	for (i = 1; i < d->args.argc && n > 0 && (size_t)n < sizeof(d->mount_opts); i++) {
		const char *a = d->args.argv[i];

		if (!strcmp(a, "-o"))
			continue;
		if (!strncmp(a, "-o", 2))
			a += 2;
		n += snprintf(d->mount_opts + n, sizeof(d->mount_opts) - n, ",%s", a);
	}
}

static int build_args(struct fs_daemon *d)
{
	struct fs_ctx *fs = &d->fs;
	char *mo = NULL, *fsname = NULL, buf[32];
	int ret = -ENOMEM;

	if (asprintf(&fsname, "fsname=%s", fs->backing) < 0)
		return -ENOMEM;
	if (fuse_opt_add_opt_escaped(&mo, fsname) || fuse_opt_add_opt(&mo, "subtype=iotap"))
		goto out;
	snprintf(buf, sizeof(buf), "max_read=%u", fs->max_read);
	if (fuse_opt_add_opt(&mo, buf))
		goto out;
	if (fs->privileged && (fuse_opt_add_opt(&mo, "allow_other") ||
			       fuse_opt_add_opt(&mo, "default_permissions")))
		goto out;
	if (fuse_opt_insert_arg(&d->args, 1, "-o") || fuse_opt_insert_arg(&d->args, 2, mo))
		goto out;
	if (fs->o.debug && fuse_opt_add_arg(&d->args, "-d"))
		goto out;
	ret = 0;
out:
	free(mo);
	free(fsname);
	return ret;
}

/* Build the mount options and the session (this checks -o): before the trace exists. */
static int create_session(struct fs_daemon *d, char *msg)
{
	struct fs_ctx *fs = &d->fs;
	struct fuse_lowlevel_ops ops;
	int ret;

	memset(&ops, 0, sizeof(ops));
	ops.init = fs_op_init;
	ops.destroy = fs_op_destroy;
	fs_ops_dir(&ops);
	fs_ops_file(&ops);
	fs_ops_attr(&ops);
	fs_ops_xattr(&ops);

	ret = build_args(d);
	if (ret) {
		snprintf(msg, MSG_MAX, "cannot mount '%s': %s", fs->o.mountpoint, strerror(-ret));
		return ret;
	}
	fs->se = fuse_session_new(&d->args, &ops, sizeof(ops), fs);
	if (!fs->se) {
		snprintf(msg, MSG_MAX, "cannot mount '%s': %s", fs->o.mountpoint,
			 *fs_log_last_error() ? fs_log_last_error() : "cannot create the session");
		return -EINVAL;
	}
	return 0;
}

static int mount_session(struct fs_daemon *d, char *msg)
{
	struct fs_ctx *fs = &d->fs;
	struct fuse_custom_io io = { .read = fs_wire_read, .writev = fs_wire_writev };
	int ret;

	if (fuse_set_signal_handlers(fs->se)) {
		snprintf(msg, MSG_MAX, "cannot mount '%s': cannot set signal handlers",
			 fs->o.mountpoint);
		return -EINVAL;
	}
	d->signals_set = true;
	if (fuse_session_mount(fs->se, fs->mountpoint)) {
		snprintf(msg, MSG_MAX, "cannot mount '%s': %s", fs->o.mountpoint,
			 *fs_log_last_error() ? fs_log_last_error() : "mount failed");
		return -EIO;
	}
	d->mounted = true;
	ret = fuse_session_custom_io(fs->se, &io, fuse_session_fd(fs->se));
	if (ret) {
		fs_log(FS_LOG_WARN, "cannot hook the request stream (%s): requests libfuse "
		       "answers itself are not recorded", strerror(-ret));
		/* libfuse's own INIT reply: max_write's pages */
		fs->max_pages = (fs->max_write - 1) / fs->page_size + 1;
	}
	return 0;
}

/* Set up everything up to and including the mount. 0, or -errno and @msg. */
static int setup(struct fs_daemon *d, char *msg)
{
	struct fs_ctx *fs = &d->fs;
	struct stat st;
	unsigned long nofile;
	int ret;

	fs_log_level = fs->o.debug ? FS_LOG_DEBUG : FS_LOG_INFO;
	fs_log_hold();
	fs_log_install_fuse();
	fs->privileged = geteuid() == 0;
	fs->clk_tck = sysconf(_SC_CLK_TCK) > 0 ? (uint64_t)sysconf(_SC_CLK_TCK) : 100;
	fs->fail_op = fs->o.fail_op;
	fs->fail_nth = fs->o.fail_nth;
	fs->fail_errno = fs->o.fail_errno;
	raise_nofile();

	ret = check_input(d, msg);
	if (ret)
		return ret;
	/*
	 * A real directory fd, not O_PATH: open_by_handle_at() wants one as
	 * its mount fd. O_PATH only when the backing dir is not readable.
	 */
	fs->root_fd = open(fs->backing, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fs->root_fd < 0 && errno == EACCES)
		fs->root_fd = open(fs->backing, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fs->root_fd < 0) {
		ret = -errno;
		snprintf(msg, MSG_MAX, "cannot mount '%s': backing directory '%s': %s",
			 fs->o.mountpoint, fs->o.backing, strerror(-ret));
		return ret;
	}
	ret = fs_under_init(fs, msg, MSG_MAX);
	if (ret)
		return ret;
	describe_opts(d);
	ret = create_session(d, msg);
	if (ret)
		return ret;
	ret = open_trace(d, msg);
	if (ret)
		return ret;
	ret = open_log(d, msg);
	if (ret)
		return ret;
	/* the kernel applied the caller's umask already; ours must not mask again */
	umask(0);

	nofile = nofile_limit();
	if (fs->o.fd_cache > nofile / 2) {
		fs_log(FS_LOG_WARN, "fd cache of %u exceeds half of RLIMIT_NOFILE %lu; using %lu",
		       fs->o.fd_cache, nofile, nofile / 2);
		fs->o.fd_cache = (unsigned int)(nofile / 2);
	}
	ret = fs_thread_init();
	if (!ret)
		ret = fs_itable_init(fs);
	if (ret) {
		snprintf(msg, MSG_MAX, "cannot mount '%s': %s", fs->o.mountpoint, strerror(-ret));
		return ret;
	}
	fs_thread_get();	/* the main thread inserts the root */
	d->thread_registered = true;
	ret = fs_inode_root_init(fs);
	if (ret || fstat(fs->root_fd, &st) < 0) {
		ret = ret ? ret : -errno;
		snprintf(msg, MSG_MAX, "cannot mount '%s': %s", fs->o.mountpoint, strerror(-ret));
		return ret;
	}
	fs_under_root(fs);
	fs_creds_init(fs);
	fs_record_root(fs, &st);

	ret = mount_session(d, msg);
	if (ret)
		return ret;
	ret = put_trace(d, msg);
	if (ret)
		return ret;
	if (d->log_fd < 0)
		fs_log_set_fd(fs->o.foreground ? STDERR_FILENO : -1);
	fs_ctl_policy_start(fs);
	fs_log(FS_LOG_INFO, "mounted '%s' on '%s' (%s), trace %s%s%s", fs->backing,
	       fs->mountpoint, fs->cache_mode ? "cache mode" : "direct_io mode",
	       fs->trace_path ? "'" : "", fs->trace_path ? fs->trace_path : "none",
	       fs->trace_path ? "'" : "");
	fs_log(FS_LOG_INFO, "transport %s (%s)", fs->transport == IOTAP_FS_TRANSPORT_URING ?
	       "io_uring" : "/dev/fuse", fs->transport_why);
	if (fs->handles)
		fs_log(FS_LOG_INFO, "inodes held by file handle; O_PATH fd cache %u of "
		       "RLIMIT_NOFILE %lu", fs->o.fd_cache, nofile_limit());
	else
		fs_log(FS_LOG_INFO, "inodes held by one O_PATH fd each: at most about %lu "
		       "(RLIMIT_NOFILE) files known to the kernel at once", nofile_limit());
	if (!fs->cache_mode)
		fs_log(FS_LOG_INFO, "direct_io mode: the kernel refuses MAP_SHARED mmap of files "
		       "on this mount with ENODEV (libfuse 3.14 cannot negotiate "
		       "FUSE_DIRECT_IO_ALLOW_MMAP); use cache mode for such applications");
	return 0;
}

static void teardown(struct fs_daemon *d)
{
	struct fs_ctx *fs = &d->fs;
	int ret;

	if (fs->se) {
		if (d->mounted)
			fuse_session_unmount(fs->se);
		fs_uring_stop(fs);	/* the rings hold /dev/fuse open */
		if (d->signals_set)
			fuse_remove_signal_handlers(fs->se);
		fuse_session_destroy(fs->se);
		fs->se = NULL;
	}
	/*
	 * The rotation thread first, then the recorder, then the inode table:
	 * a rotation's switch makes the recorder's writer thread walk the inode
	 * table (fs_ctl_rebind) to name the files in use in the new file, so
	 * neither may outlive the table. Destroying it first crashed the daemon
	 * when a --rotate-time rotation met the unmount.
	 */
	fs_ctl_policy_stop(fs);
	if (fs->recorder) {
		uint64_t count = iotap_trace_recorder_count(fs->recorder);
		uint64_t lost = iotap_trace_recorder_lost(fs->recorder);

		ret = iotap_trace_recorder_close(fs->recorder);
		fs->rec = fs->recorder = NULL;
		if (!fs->trace_path)
			fs_log(FS_LOG_INFO, "no trace open at exit: %llu records in all, %llu lost",
			       (unsigned long long)count, (unsigned long long)lost);
		else if (ret)
			fs_log(FS_LOG_WARN, "trace '%s' closed with error: %s (%llu records, "
			       "%llu lost)", fs->trace_path, strerror(-ret),
			       (unsigned long long)count, (unsigned long long)lost);
		else
			fs_log(FS_LOG_INFO, "trace '%s' closed: %llu records, %llu lost",
			       fs->trace_path, (unsigned long long)count,
			       (unsigned long long)lost);
	}
	if (fs->itable) {
		fs_log(FS_LOG_INFO, "inodes at exit %llu, fd cache: %llu reopened by handle, "
		       "%llu evicted, %llu overflows",
		       (unsigned long long)uatomic_read(&fs->ninodes),
		       (unsigned long long)uatomic_read(&fs->fdc_misses),
		       (unsigned long long)fs->fdc.evictions,
		       (unsigned long long)fs->fdc.overflows);
		fs_itable_destroy(fs);
	}
	if (d->thread_registered)
		fs_thread_release();
	if (fs->root_fd >= 0)
		close(fs->root_fd);
	fuse_opt_free_args(&d->args);
	free(fs->backing);
	free(fs->mountpoint);
	free(fs->trace_path);
	free(fs->trace_base);
	free(fs->log_path);
}

/* Report the start-up outcome to the waiting parent (@report_fd) or stderr. */
static void report(int report_fd, const char *msg)
{
	if (report_fd < 0) {
		if (msg)
			fprintf(stderr, "iotap: %s\n", msg);
		return;
	}
	if (!msg)
		msg = "ok";
	if (write(report_fd, msg, strlen(msg)) < 0)
		fs_log(FS_LOG_WARN, "cannot report to the parent: %s", strerror(errno));
	close(report_fd);
}

/* Detach from the terminal once mounted: stdio to the log or /dev/null. */
static void detach_stdio(struct fs_daemon *d)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);

	if (null >= 0)
		dup2(null, STDIN_FILENO);
	if (d->log_fd >= 0 || null >= 0) {
		dup2(d->log_fd >= 0 ? d->log_fd : null, STDOUT_FILENO);
		dup2(d->log_fd >= 0 ? d->log_fd : null, STDERR_FILENO);
	}
	if (null > STDERR_FILENO)
		close(null);
}

/* The daemon proper; the exit status. @report_fd: pipe to the parent, or -1. */
static int run(const struct iotap_fs_opts *o, int report_fd)
{
	struct fs_daemon *d;
	struct fuse_loop_config *cfg;
	char msg[MSG_MAX] = "";
	sigset_t oldmask;
	int ret, status = 1;

	d = calloc(1, sizeof(*d));
	if (!d) {
		report(report_fd, "cannot mount: out of memory");
		return 1;
	}
	d->fs.o = *o;
	d->fs.root_fd = -1;
	d->log_fd = -1;
	d->trace_dirfd = -1;
	if (fuse_opt_add_arg(&d->args, "iotap")) {
		report(report_fd, "cannot mount: out of memory");
		free(d);
		return 1;
	}
	block_signals(&oldmask);
	ret = setup(d, msg);
	if (ret) {
		/* in the foreground without --log the log is stderr: say it once */
		if (report_fd >= 0 || d->fs.log_path)
			fs_log(FS_LOG_ERR, "%s", msg);
		drop_trace(d);
		report(report_fd, msg);
		goto out;
	}
	if (chdir("/") < 0)
		fs_log(FS_LOG_WARN, "chdir /: %s", strerror(errno));
	if (report_fd >= 0)
		detach_stdio(d);
	report(report_fd, NULL);

	cfg = fuse_loop_cfg_create();
	if (!cfg) {
		fs_log(FS_LOG_ERR, "out of memory");
		goto out;
	}
	if (o->max_threads)
		fuse_loop_cfg_set_max_threads(cfg, o->max_threads);
	/* started with signals blocked, like the loop's workers */
	if (fs_wbfail_start(&d->fs))
		fs_log(FS_LOG_WARN, "cannot start the writeback-error thread: after a failed "
		       "writeback the mount may show data that is not on disk");
	pthread_sigmask(SIG_SETMASK, &oldmask, NULL);
	ret = fuse_session_loop_mt(d->fs.se, cfg);
	block_signals(NULL);
	fs_wbfail_stop();
	fuse_loop_cfg_destroy(cfg);
	if (ret < 0) {
		fs_log(FS_LOG_ERR, "session ended with error: %s", strerror(-ret));
	} else {
		if (ret > 0)
			fs_log(FS_LOG_INFO, "signal %d: unmounting", ret);
		else
			fs_log(FS_LOG_INFO, "unmounted");
		status = 0;
	}
out:
	teardown(d);
	fs_log_set_fd(-1);
	if (d->log_fd >= 0)
		close(d->log_fd);
	if (d->trace_dirfd >= 0)
		close(d->trace_dirfd);
	free(d->trace_tmp);
	pthread_sigmask(SIG_SETMASK, &oldmask, NULL);
	free(d);
	return status;
}

int iotap_fs_main(const struct iotap_fs_opts *o)
{
	char msg[MSG_MAX + 1];
	size_t len = 0;
	int pfd[2], wstatus;
	ssize_t n;
	pid_t pid;

	if (!o->backing || !o->mountpoint) {
		fprintf(stderr, "iotap: mount needs a backing directory and a mount point\n");
		return 1;
	}
	if (o->foreground)
		return run(o, -1);

	fflush(NULL);
	if (pipe2(pfd, O_CLOEXEC) < 0) {
		fprintf(stderr, "iotap: cannot mount '%s': %s\n", o->mountpoint, strerror(errno));
		return 1;
	}
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "iotap: cannot mount '%s': fork: %s\n", o->mountpoint,
			strerror(errno));
		close(pfd[0]);
		close(pfd[1]);
		return 1;
	}
	if (pid == 0) {
		close(pfd[0]);
		if (setsid() < 0)
			_exit(1);
		_exit(run(o, pfd[1]));
	}
	close(pfd[1]);
	while (len < MSG_MAX && (n = read(pfd[0], msg + len, MSG_MAX - len)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		len += n;
	}
	close(pfd[0]);
	msg[len] = '\0';
	if (!strcmp(msg, "ok"))
		return 0;
	while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR)
		;
	if (len)
		fprintf(stderr, "iotap: %s\n", msg);
	else
		fprintf(stderr, "iotap: cannot mount '%s': the daemon died during start-up\n",
			o->mountpoint);
	return 1;
}
