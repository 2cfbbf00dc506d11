// SPDX-License-Identifier: MIT
/*
 * session.c - iotap_fs_main(): one mount's life: daemonize, set up, serve, tear down
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
 *  2. Check the input (session_opts.c: backing and mount point are
 *     directories, the mount point is not already mounted unless it is the
 *     backing dir itself, /dev/fuse exists), then open the backing dir and
 *     the trace (session_trace.c) BEFORE mounting: mounting over the
 *     backing dir in place hides it, and a trace or log path inside the
 *     mount never goes through the mount.
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
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "session_i.h"
#include "iotap_base.h"

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

	ret = fs_build_args(d);
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

	ret = fs_check_input(d, msg);
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
	fs_describe_opts(d);
	ret = create_session(d, msg);
	if (ret)
		return ret;
	ret = fs_open_recorder(d, msg);
	if (ret)
		return ret;
	ret = fs_open_log(d, msg);
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
	ret = fs_put_trace(d, msg);
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
static void report_startup(int report_fd, const char *msg)
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
static int run_daemon(const struct iotap_fs_opts *o, int report_fd)
{
	struct fs_daemon *d;
	struct fuse_loop_config *cfg;
	char msg[MSG_MAX] = "";
	sigset_t oldmask;
	int ret, status = 1;

	d = calloc(1, sizeof(*d));
	if (!d) {
		report_startup(report_fd, "cannot mount: out of memory");
		return 1;
	}
	d->fs.o = *o;
	d->fs.root_fd = -1;
	d->log_fd = -1;
	d->trace_dirfd = -1;
	if (fuse_opt_add_arg(&d->args, "iotap")) {
		report_startup(report_fd, "cannot mount: out of memory");
		free(d);
		return 1;
	}
	block_signals(&oldmask);
	ret = setup(d, msg);
	if (ret) {
		/* in the foreground without --log the log is stderr: say it once */
		if (report_fd >= 0 || d->fs.log_path)
			fs_log(FS_LOG_ERR, "%s", msg);
		fs_drop_trace(d);
		report_startup(report_fd, msg);
		goto out;
	}
	if (chdir("/") < 0)
		fs_log(FS_LOG_WARN, "chdir /: %s", strerror(errno));
	if (report_fd >= 0)
		detach_stdio(d);
	report_startup(report_fd, NULL);

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
		return run_daemon(o, -1);

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
		_exit(run_daemon(o, pfd[1]));
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
