/* SPDX-License-Identifier: MIT */
/*
 * iotap_fs.h - the capture mount, as tools/ sees it
 *
 * fs/ is a libfuse3 low-level pass-through filesystem that records every
 * request into a trace through trace/'s recorder. tools/cmd_mount.c fills
 * struct iotap_fs_opts from the command line and calls iotap_fs_main().
 * Everything else in fs/ is private (fs_i.h).
 */
#ifndef IOTAP_FS_H
#define IOTAP_FS_H

#include <stdint.h>

/* xattr names the daemon answers itself on the mount's root directory. */
#define IOTAP_FS_XATTR_MARK	"user.iotap.mark"	/* setxattr: begin phase <value> */
#define IOTAP_FS_XATTR_MARK_END	"user.iotap.mark_end"	/* setxattr: end it */
#define IOTAP_FS_XATTR_PID	"user.iotap.pid"	/* getxattr: daemon pid, decimal */
#define IOTAP_FS_XATTR_TRACE	"user.iotap.trace"	/* getxattr: trace path or "" */
/* setxattr: "start FLAGS PATH", "rotate FLAGS [PATH]", "save FLAGS PATH", "stop";
 * FLAGS "-" or "force" */
#define IOTAP_FS_XATTR_CTL	"user.iotap.ctl"
/* getxattr: live counters, "key value" lines (fs/stats.c), at most 64 KiB */
#define IOTAP_FS_XATTR_STATS	"user.iotap.stats"
#define IOTAP_FS_STATS_MAX	65536
/*
 * The latency classes of `iotap top` (live, from the daemon's counters, and
 * over a finished trace): one class per op, in this order, each a
 * log-linear histogram of IOTAP_FS_LAT_BITS (iotap_hist_index()).
 */
#define IOTAP_FS_LAT_CLASSES	7
#define IOTAP_FS_LAT_BITS	3
extern const char *const iotap_fs_lat_names[IOTAP_FS_LAT_CLASSES];
unsigned int iotap_fs_lat_class(unsigned int op);

/* How FUSE requests reach the daemon (iotap mount --transport). */
enum iotap_fs_transport {
	IOTAP_FS_TRANSPORT_AUTO = 0,	/* io_uring where the kernel offers it, else /dev/fuse */
	IOTAP_FS_TRANSPORT_DEV = 1,	/* read(2)/writev(2) on /dev/fuse */
	IOTAP_FS_TRANSPORT_URING = 2,	/* FUSE over io_uring (Linux 6.14+, enable_uring=Y) */
};

/* "auto", "dev", "uring" -> enum iotap_fs_transport, or -1. */
int iotap_fs_transport_parse(const char *s);

struct iotap_fs_opts {
	const char *backing;		/* directory whose tree is served */
	const char *mountpoint;		/* where to mount; may equal backing */
	const char *trace_path;		/* trace to write; NULL: pass through only */
	const char *log_path;		/* daemon log; NULL: stderr (-f) or TRACE.log */
	const char *fuse_opts;		/* extra -o options for libfuse, or NULL */
	const char *cmdline;		/* recorded in the trace header */
	int cache_mode;			/* 0: direct_io (default), 1: page cache */
	int foreground;			/* do not daemonize */
	int force;			/* overwrite an existing trace */
	int debug;			/* libfuse debug output + our debug log */
	unsigned int max_threads;	/* most worker threads (0: libfuse's 10) */
	unsigned int sample_ms;		/* resource sample interval (0: 100) */
	unsigned int fd_cache;		/* O_PATH fds kept open (0: 4096) */
	int transport;			/* enum iotap_fs_transport: how requests travel */
	unsigned int uring_depth;	/* io_uring entries per CPU queue (0: 16) */
	unsigned int uring_spin_us;	/* a queue's spin before it sleeps (if uring_spin_set) */
	int uring_spin_set;		/* 0: the default, 30 us */
	unsigned int max_write;		/* bytes per WRITE request (0: 1 MiB, the most) */
	double attr_timeout;		/* s the kernel keeps attributes (if attr_set) */
	double entry_timeout;		/* s it keeps names and misses (if entry_set) */
	int attr_set, entry_set;	/* 0: -o or the default (1 s) */
	/* fault injection for tests: fail the Nth call of fail_op with fail_errno */
	int fail_op;			/* enum iotap_op, 0: off */
	uint64_t fail_nth;		/* 1-based */
	int fail_errno;			/* positive errno */
	/* who may read the traces and the log the daemon creates (0: 0600) */
	unsigned int trace_mode;	/* permission bits <= 0666, 0: 0600 */
	int trace_gid_set;		/* chown them to trace_gid */
	uint32_t trace_gid;
	/* who may mark: root/CAP_SYS_ADMIN, and the backing root's owner if set */
	int allow_mark_owner;
	/*
	 * Bounded traces: rotate when the file reaches rotate_bytes or is
	 * rotate_ns old (0: never), into the next name (a trace path with %
	 * is a strftime(3) pattern, else NAME.iotap -> NAME.1.iotap ...),
	 * and delete the oldest beyond rotate_keep files (0: keep all).
	 */
	uint64_t rotate_bytes;
	uint64_t rotate_ns;
	unsigned int rotate_keep;
	/* flight recorder: keep the last ring_bytes of trace in memory (no file) */
	uint64_t ring_bytes;
	/*
	 * Flight recorder triggers: save the window to save_to (a strftime
	 * pattern or a name numbered like rotations) when a mark named
	 * save_mark begins, or when an op of type save_lat_op takes longer
	 * than save_lat_ns; at most one save a second.
	 */
	/*
	 * Capture filters: record only the OPs whose type is in only_ops
	 * (bit per enum iotap_op; 0: every type), whose caller's fsuid is
	 * only_uid (if only_uid_set) and whose process is only_pid (0: any).
	 * NAME, PHASE and the writer's own records are always kept.
	 */
	uint64_t only_ops;
	int only_uid_set;
	uint32_t only_uid;
	uint32_t only_pid;
	/*
	 * Subtree filter: record only the ops on files and directories under
	 * these paths (relative to the mount root, or absolute below the
	 * mount point or the backing dir; resolved when the mount starts and
	 * followed by inode across renames). NAMEs only for those and the
	 * directories above them. 0 paths: the whole tree.
	 */
	const char *const *only_under;
	unsigned int nr_only_under;
	const char *save_to;
	const char *save_mark;
	int save_lat_op;		/* enum iotap_op, 0: none */
	uint64_t save_lat_ns;
};

/*
 * iotap_fs_main - mount, serve until unmounted or signalled, close the trace
 *
 * Checks the arguments (backing and mount point directories, mount point
 * not already mounted unless it is the backing dir itself, /dev/fuse) and
 * opens the backing dir and the trace before mounting. Unless
 * @o->foreground, it forks first (the recorder's and liburcu's threads
 * would not survive a later fork): the child does all of this, reports
 * success or its error through a pipe and becomes the daemon (setsid,
 * chdir /, stdio to the log); the parent returns once the child has
 * mounted or failed. The daemon child never returns: it _exit()s with the
 * status below when the session ends.
 *
 * @o->fuse_opts may carry, besides libfuse mount options, the daemon's
 * own: cache_mode=0|1, fd_cache=N, timeout=SECONDS (entry and attribute
 * cache, default 1), attr_timeout=SECONDS and entry_timeout=SECONDS (one
 * each; 0: every stat and lookup reaches the daemon), max_read=BYTES
 * and max_write=BYTES (default and maximum 1 MiB). When run
 * as root, allow_other and default_permissions are added.
 *
 * Context: the calling process must not have threads of its own.
 * Return: a process exit status: 0 ok (mounted, or served and unmounted
 * cleanly in the foreground), 1 error (message printed on stderr in git's
 * style "iotap: cannot ...").
 */
int iotap_fs_main(const struct iotap_fs_opts *o);

#endif /* IOTAP_FS_H */
