/* SPDX-License-Identifier: MIT */
/*
 * fs_i.h - private interfaces of the capture daemon (fs/)
 *
 * What a reader must know first:
 *
 * - One daemon, one struct fs_ctx. It is built by session.c before the
 *   mount, handed to libfuse as the session's userdata, and read (never
 *   written, except for its atomics) by the worker threads libfuse starts.
 *
 * - Threads. libfuse's multi-threaded loop creates and cancels its workers
 *   itself. A worker gets its struct fs_thread (RCU registration, aligned
 *   I/O buffer) on its first request, lazily (thread.c); a pthread key
 *   destructor unregisters it when libfuse ends the thread. The recorder's
 *   writer thread (trace/) and liburcu's call_rcu and hash-table resize
 *   threads are the only other threads; they touch no fs/ state except
 *   the inode frees that call_rcu runs. With the io_uring transport
 *   (transport/uring.c) ring threads serve requests as well, through the
 *   same libfuse entry point and ops (READ and WRITE through the same
 *   handler bodies without libfuse: struct fs_io_req), and get their
 *   struct fs_thread the same lazy way.
 *
 * - Inodes (inode.c). fuse_ino_t is a pointer to struct fs_inode (root:
 *   FUSE_ROOT_ID, mapped to fs->root). An inode lives from the lookup that
 *   creates it until the kernel's lookup count drops to 0 through forget;
 *   it is then unlinked from the cds_lfht table and freed after an RCU
 *   grace period (memb flavour). Inodes hold a file handle, not an fd: an
 *   fd is borrowed from a bounded O_PATH cache with fs_inode_fd() and must
 *   be returned with fs_fdref_put().
 *
 * - Recording (capture.c). An op handler (fs_op_<op>, ops_*.c) fills a
 *   struct fs_capture on the stack with fs_capture_start(), marks the
 *   backing call with fs_capture_io_begin()/fs_capture_io_end(), and calls
 *   fs_capture_end() once with the result before it replies, so
 *   everything a request produced is in the trace before the application
 *   sees it.
 *
 * - Ops (ops_*.c) never reply from helpers: each ends with one success
 *   reply or fuse_reply_err(req, -ret).
 */
#ifndef FS_I_H
#define FS_I_H

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <fuse_lowlevel.h>

#include <urcu/urcu-memb.h>
#include <urcu/rculfhash.h>
#include <urcu/uatomic.h>

#include "config.h"
#include "iotap_base.h"
#include "iotap_fs.h"
#include "iotap_trace.h"

_Static_assert(sizeof(fuse_ino_t) >= sizeof(uintptr_t),
	       "fuse_ino_t must hold a pointer");

/* Largest request we size buffers for: max_write and max_read, bytes. */
#define FS_MAX_IO		(1024 * 1024)
/* Largest max_write over io_uring (the ring buffers are ours; each entry holds one). */
#define FS_MAX_WRITE_URING	(4 * 1024 * 1024)
#define FS_URING_SPIN_MAX_US	1000u	/* -o uring_spin: most microseconds */
/* Smallest max_write (the kernel's own floor). */
#define FS_MIN_WRITE		4096u
/* Pages per request: the kernel's most where it has no fs.fuse.max_pages_limit ... */
#define FS_KERNEL_MAX_PAGES	256u
/* ... and what it uses when it does not offer FUSE_MAX_PAGES (before 4.20). */
#define FS_KERNEL_DEFAULT_PAGES	32u
/* Alignment of the per-thread I/O buffer (O_DIRECT on the backing fd). */
#define FS_IO_ALIGN		4096
/* Default entry/attribute timeout, seconds (as passthrough_ll). */
#define FS_DEFAULT_TIMEOUT	1.0
#define FS_DEFAULT_FD_CACHE	4096u

struct fs_ctx;

/* --- log.c ------------------------------------------------------------ */

/* Levels are libfuse's (syslog's) numbers, so fuse_log() maps 1:1. */
enum fs_log_level {
	FS_LOG_ERR = FUSE_LOG_ERR,
	FS_LOG_WARN = FUSE_LOG_WARNING,
	FS_LOG_INFO = FUSE_LOG_INFO,
	FS_LOG_DEBUG = FUSE_LOG_DEBUG,
};

extern int fs_log_level;	/* messages above this level are dropped */

static inline bool fs_log_on(int level)
{
	return level <= fs_log_level;
}

void fs_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Keep lines in memory until fs_log_set_fd() chooses a sink (start-up). */
void fs_log_hold(void);
/*
 * Send log lines to @fd (-1: nowhere), after the held ones; the previous
 * sink is not closed. Start-up and teardown only (not thread-safe).
 */
void fs_log_set_fd(int fd);
/* Route libfuse's messages through fs_vlog(). */
void fs_log_install_fuse(void);
/* The last ERR line logged, "" if none (start-up error reports). */
const char *fs_log_last_error(void);

/* --- stats.c: live counters (per thread, summed on request) ----------- */

/* Latency classes of `iotap top`, and their flat log-linear histograms. */
enum { FS_LAT_READ, FS_LAT_WRITE, FS_LAT_FSYNC, FS_LAT_OPEN, FS_LAT_LOOKUP, FS_LAT_GETATTR,
       FS_LAT_META, FS_LAT_N };
#define FS_LAT_BITS		3	/* 8 sub-buckets per octave: p99 within 1/16 */
#define FS_LAT_BUCKETS		IOTAP_HIST_BUCKETS_OF(FS_LAT_BITS)
#define FS_TOP_SLOTS		256	/* per thread, direct-mapped, power of two */
#define FS_TOP_SHOW		64	/* processes and files in an answer */

struct fs_top_ent {
	uint64_t key;			/* pid, or a hash of (dev, ino) | 1; 0: empty */
	uint64_t ops, bytes;
	uint64_t dev, ino;		/* files */
};

struct fs_stats {
	uint64_t ops[IOTAP_OP_MAX];
	uint64_t errors;		/* requests answered with an error */
	uint64_t rd_bytes, wr_bytes;	/* READ/WRITE results */
	uint64_t lat[FS_LAT_N][FS_LAT_BUCKETS];	/* backing-call ns, iotap_hist_index() */
	struct fs_top_ent procs[FS_TOP_SLOTS];
	struct fs_top_ent files[FS_TOP_SLOTS];
};

struct fs_thread;
struct fs_capture;
/* Count one request in the calling thread's stats (fs_capture_end). */
void fs_stats_op(struct fs_thread *t, const struct fs_capture *op, int64_t result);
/* A thread's first request / its exit (thread.c). */
void fs_stats_register(struct fs_thread *t);
void fs_stats_unregister(struct fs_thread *t);
/* The answer to a stats request, NUL-terminated text; its length or -errno. */
ssize_t fs_stats_text(struct fs_ctx *fs, char *buf, size_t size);

/* --- thread.c --------------------------------------------------------- */

struct fs_pending_name;

struct fs_thread {
	void *iobuf;			/* FS_IO_ALIGN-aligned, iobuf_size bytes, or NULL */
	size_t iobuf_size;		/* bytes */
	unsigned int nr_records;	/* records made, for periodic health checks */
	/* NAME records queued by the current request (capture.c) */
	struct fs_pending_name *pend;	/* pend_cap entries */
	unsigned int pend_cap;
	char *arena;			/* copies of the queued names */
	size_t arena_cap;		/* bytes */
	size_t arena_used;		/* bytes */
	/* lookup references a readdirplus reply hands out (dropped if it fails) */
	struct fs_inode **refs;
	unsigned int refs_cap;
	unsigned int nr_refs;
	struct fs_stats stats;		/* written by this thread only (stats.c) */
	struct fs_thread *stats_next;	/* stats.c's list of live threads */
};

/*
 * fs_thread_get - the calling thread's state (thread-local storage)
 *
 * Registers the thread as an RCU reader (memb flavour) on its first call;
 * a pthread key destructor unregisters it when the thread ends. Never
 * fails, never blocks after the first call. Any thread after
 * fs_thread_init().
 */
struct fs_thread *fs_thread_get(void);
/* An aligned scratch buffer of at least @size bytes, or NULL (ENOMEM). */
void *fs_thread_iobuf(struct fs_thread *t, size_t size);
/* Append @inode to t->refs; false without memory. */
bool fs_thread_ref_push(struct fs_thread *t, struct fs_inode *inode);
/* Create the pthread key; 0 or -errno. Once, before any worker runs. */
int fs_thread_init(void);
/* Unregister the calling thread now (main thread at teardown). */
void fs_thread_release(void);

/* --- inode.c ---------------------------------------------------------- */

/*
 * struct fs_inode - one backing inode known to the kernel
 *
 * Key (dev, ino) and handle are immutable after insertion. nlookup and
 * fdstate are updated with uatomic operations; slot and ref_bit belong to
 * the fd cache (slot under its mutex, ref_bit racy by design: a hint).
 */
struct fs_inode {
	struct cds_lfht_node node;	/* in fs->itable, keyed by (dev, ino) */
	struct rcu_head rcu;		/* deferred free after forget */
	uint64_t ino;			/* backing st_ino */
	uint64_t dev;			/* backing st_dev */
	unsigned long nlookup;		/* kernel lookup count; 0 = dead (being removed) */
	/*
	 * Cached O_PATH fd and its borrowers, packed so one CAS covers both:
	 * bits 63..32 = fd + 1 (0: none), bits 31..0 = borrowers.
	 * Invariant: borrowers > 0 implies an fd is installed.
	 */
	uint64_t fdstate;
	int slot;			/* index in the fd cache ring, -1: none */
	uint8_t ref_bit;		/* CLOCK reference bit */
	uint8_t pinned;			/* fd held for the inode's life (no handle) */
	uint8_t wb_failed;		/* cache mode: a writeback WRITE failed (wbfail.c) */
	uint64_t binding[2];		/* hashes of the last two (parent, name) in NAMEs */
	uint32_t scope_gen;		/* fs->scope_gen when scope was set, 0: never */
	uint8_t scope;			/* FS_SCOPE_*: --only-under (under.c) */
	struct file_handle handle;	/* followed by handle.handle_bytes bytes; 0 when pinned */
};

/* A borrowed O_PATH fd of an inode (fs_inode_fd / fs_fdref_put). */
struct fs_fdref {
	int fd;
	struct fs_inode *inode;		/* NULL: fd is private to the borrower */
};

int fs_itable_init(struct fs_ctx *fs);
void fs_itable_destroy(struct fs_ctx *fs);
/* Probe handle support and build fs->root from fs->root_fd. */
int fs_inode_root_init(struct fs_ctx *fs);

/*
 * fs_inode_get - find or create the inode of @st and take one lookup ref
 * @opath: an O_PATH fd of the object, or -1; always consumed (cached or closed)
 * @anyfd: an fd of the object to take the handle from when @opath is -1
 *         (e.g. the fd create() just opened); not consumed
 *
 * Caller must not hold the RCU read lock. Return: 0 or -errno.
 */
int fs_inode_get(struct fs_ctx *fs, const struct stat *st, int opath, int anyfd,
		 struct fs_inode **out);
/* One more kernel reference (link(), readdirplus entries). */
void fs_inode_ref(struct fs_inode *inode);
/* Drop @n kernel references; the inode may be freed after this returns. */
void fs_inode_forget(struct fs_ctx *fs, struct fs_inode *inode, uint64_t n);
/*
 * fs_inode_collect - a reference on every live inode, the root included,
 * in a malloc'ed array (give each back with fs_inode_forget(fs, i, 1)).
 * Caller registered as an RCU reader, outside a read-side section.
 * Return: the count, or -ENOMEM.
 */
long fs_inode_collect(struct fs_ctx *fs, struct fs_inode ***out);
/* Live inode (@dev, @ino) with one more reference (fs_inode_forget it), or NULL. */
struct fs_inode *fs_inode_find(struct fs_ctx *fs, uint64_t dev, uint64_t ino);
/* The path below the backing dir of live inode (@dev, @ino) into @buf; 0 or -errno. */
int fs_inode_name(struct fs_ctx *fs, uint64_t dev, uint64_t ino, char *buf, size_t size);
/* Borrow an O_PATH fd of @inode; 0 or -errno (-ESTALE: gone from the backing fs). */
int fs_inode_fd(struct fs_ctx *fs, struct fs_inode *inode, struct fs_fdref *ref);
void fs_fdref_put(struct fs_fdref *ref);
/* Open @inode for I/O with open(2) @flags; a new fd or -errno. */
int fs_inode_open(struct fs_ctx *fs, struct fs_inode *inode, int flags);

/* --- the daemon ------------------------------------------------------- */

/* The fd cache: CLOCK over a ring of inodes that hold an O_PATH fd. */
struct fs_fdcache {
	pthread_mutex_t lock;		/* ring, hand, inodes' slot; not on the hit path */
	struct fs_inode **ring;		/* cap entries, NULL = free */
	unsigned int *free;		/* stack of free ring indexes */
	unsigned int nfree;
	unsigned int cap;
	unsigned int hand;		/* CLOCK hand */
	uint64_t evictions;		/* statistics, under lock */
	uint64_t overflows;		/* installs that found every entry busy */
};

/* An open regular file: fi->fh. */
struct fs_file {
	int fd;				/* backing fd, opened with the real flags */
	uint32_t opf;			/* IOTAP_OPF_DIRECT/_SYNC/_CACHED of its READ/WRITE */
	bool nowait_no;			/* the backing fs refuses RWF_NOWAIT reads (fs_op_read) */
	bool wnowait_no;		/* ... writes (ext4), or an append: never tried */
	uint64_t id;			/* trace fh id, unique for the daemon's life */
	struct fs_inode *inode;		/* pinned by the kernel while open */
};

/* An open directory: fi->fh. */
struct fs_dir {
	DIR *dp;
	struct dirent *entry;		/* read but not yet returned, or NULL */
	off_t offset;			/* cookie of the next entry */
	uint64_t id;			/* trace fh id */
	struct fs_inode *inode;
};

/* A thread's call that goes on: its next piece is expected here. */
struct fs_call {
	uint32_t tid;			/* 0: a free slot */
	uint8_t op;			/* IOTAP_OP_READ or _WRITE */
	uint64_t fh;			/* trace fh id */
	uint64_t next;			/* offset of the next piece */
	uint64_t rest;			/* bytes the call still asks for */
	uint64_t when_ns;		/* the last piece's end (stale ones are dropped) */
};
#define FS_CALLS_MAX	64		/* threads with a call in pieces at once */
struct fs_calls {
	pthread_mutex_t lock;		/* slot[] */
	unsigned int n;			/* slots in use, read without the lock */
	int warned;			/* /proc/TID/syscall unreadable, said once */
	struct fs_call slot[FS_CALLS_MAX];
};

/*
 * The subtree filter (--only-under): the subtree roots and the directories
 * above them, by backing inode, found when the mount starts. An inode is
 * FS_SCOPE_IN when it is a root or was named in an IN directory,
 * FS_SCOPE_PATH when it is a directory above a root (its NAME is recorded,
 * so that paths resolve, its ops are not), else FS_SCOPE_OUT.
 */
enum { FS_SCOPE_OUT, FS_SCOPE_PATH, FS_SCOPE_IN };
#define FS_UNDER_MAX		16	/* subtrees */
#define FS_UNDER_ANC_MAX	256	/* directories above them, all together */

struct fs_under {
	unsigned int n;				/* subtrees; 0: no subtree filter */
	char *rel[FS_UNDER_MAX];		/* path below the backing dir, as resolved */
	int fd[FS_UNDER_MAX];			/* O_PATH fd of each root: its current path */
	uint64_t dev[FS_UNDER_MAX], ino[FS_UNDER_MAX];
	unsigned int nanc;
	uint64_t anc_dev[FS_UNDER_ANC_MAX], anc_ino[FS_UNDER_ANC_MAX];
};

#define FS_PHASES_OPEN	64	/* phase names remembered as begun; the oldest goes first */

struct fs_ctx {
	struct iotap_fs_opts o;			/* copy of the caller's options */
	struct fs_under under;			/* --only-under, fixed before the mount */
	/*
	 * Bumped when a known directory changes scope (a rename into or out
	 * of a subtree): inodes set under an older value find their scope
	 * again from their current path (under.c).
	 */
	uint32_t scope_gen;
	/*
	 * The recorder while a trace is being written, else NULL: read once
	 * per request (fs_capture_start) with CMM_LOAD_SHARED; control.c sets it.
	 */
	struct iotap_trace_recorder *rec;
	struct iotap_trace_recorder *recorder;	/* the mount's, once it traced; freed at exit */
	pthread_mutex_t ctl_lock;		/* control requests; trace_path, trace_base */
	char *phase_open[FS_PHASES_OPEN];	/* marks begun, not yet ended (capture.c) */
	unsigned int nr_phase_open;
	char *trace_base;			/* name numbered rotations derive from */
	uint64_t rot_seq;			/* last number used */
	uint64_t file_start_ns;			/* when the current trace file began */
	char **kept;				/* files written, oldest first (rotate_keep) */
	unsigned int nkept;
	pthread_t policy;			/* rotation by size and time */
	pthread_cond_t policy_wake;		/* with ctl_lock */
	int policy_on, policy_stop;
	const char *mount_opts;			/* for trace headers */
	int ring;				/* the recorder is a flight recorder */
	int filter;				/* o.only_* restrict the OP records */
	/* a save trigger: 0 idle, 1 being set, 2 set (policy thread saves) */
	int trig_state;
	char trig_why[128];			/* written by the one that set state 1 */
	uint64_t trig_last_ns;			/* the last triggered save (policy thread) */
	uint64_t save_seq;			/* numbered names of triggered saves */
	struct fuse_session *se;
	char *backing;				/* realpath of the backing dir */
	char *mountpoint;			/* realpath of the mount point */
	char *trace_path;			/* trace being written, or NULL (ctl_lock) */
	struct iotap_trace_perm perm;		/* of traces and the log we create */
	char *log_path;
	int root_fd;				/* backing dir, opened before mounting; also
						 * the mount fd of open_by_handle_at() */
	uint64_t root_dev;
	int handles;				/* 1: inodes are held by file handle */
	int privileged;				/* euid 0: switch fsuid for creations */
	int cache_mode;				/* 0 direct_io, 1 page cache + writeback */
	uint64_t init_unique;			/* INIT request in flight, 0: none */
	uint32_t init_flags;			/* the flags the kernel offered in INIT */
	uint32_t init_minor;			/* its protocol minor version */
	double attr_timeout;			/* s the kernel may keep attributes */
	double entry_timeout;			/* s it may keep a name (and a miss) */
	unsigned int max_read;			/* bytes, <= FS_MAX_IO (-o max_read=) */
	/* the request limits: planned before mounting, fixed in the INIT reply (wire.c) */
	unsigned int max_write;			/* bytes, <= FS_MAX_IO (--max-write, -o max_write=) */
	unsigned int max_write_asked;		/* what the user asked for (max_write may be less) */
	unsigned int page_size;
	unsigned int max_pages;			/* pages per request we ask the kernel for */
	unsigned int max_pages_want;		/* what one max_write call from any buffer needs */
	unsigned int max_pages_limit;		/* fs.fuse.max_pages_limit, 0: not known */
	char fuse_desc[160];			/* the header's fuse field */
	int wire_bounce;			/* read /dev/fuse through a max_write-sized buffer */
	size_t wire_bounce_size;		/* its size: the kernel's max_write + a page */
	struct fs_calls calls;			/* calls in pieces (calls.c) */
	struct fs_inode *root;
	struct cds_lfht *itable;
	struct fs_fdcache fdc;
	uint64_t next_fh;			/* atomic: last fh id handed out */
	uint64_t ninodes;			/* atomic: live inodes */
	uint64_t fdc_misses;			/* atomic: fds reopened by handle */
	/* fault injection */
	int fail_op;
	uint64_t fail_nth;
	int fail_errno;
	uint64_t fail_count;			/* atomic */
	/* one-time warnings */
	int warned_nohandle;
	int warned_trace;
	int warned_lost;
	uint64_t clk_tck;			/* sysconf(_SC_CLK_TCK) */
	uint64_t start_ns;			/* CLOCK_MONOTONIC at start-up (uptime) */
	/* transport (transport/uring_setup.c) */
	int transport;				/* IOTAP_FS_TRANSPORT_DEV or _URING, as chosen */
	char transport_why[192];		/* why, for the log and the trace header */
	uint64_t uring_init_unique;		/* INIT in flight when the transport is uring */
	uint32_t uring_init_flags2;		/* flags2 the kernel offered in that INIT */
	struct fs_uring *uring;			/* the running rings, or NULL: /dev/fuse only */
	int uring_direct;			/* -o uring_direct: ring READ/WRITE without libfuse */
};

static inline struct fs_ctx *fs_req(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

static inline struct fs_inode *fs_ino(struct fs_ctx *fs, fuse_ino_t ino)
{
	if (ino == FUSE_ROOT_ID)
		return fs->root;
	return (struct fs_inode *)(uintptr_t)ino;
}

static inline fuse_ino_t fs_nodeid(struct fs_ctx *fs, struct fs_inode *inode)
{
	if (inode == fs->root)
		return FUSE_ROOT_ID;
	return (fuse_ino_t)(uintptr_t)inode;
}

static inline struct fs_file *fs_file(struct fuse_file_info *fi)
{
	return (struct fs_file *)(uintptr_t)fi->fh;
}

static inline struct fs_dir *fs_dir(struct fuse_file_info *fi)
{
	return (struct fs_dir *)(uintptr_t)fi->fh;
}

static inline uint64_t fs_next_fh(struct fs_ctx *fs)
{
	return uatomic_add_return(&fs->next_fh, 1);
}

/* "/proc/self/fd/N" for the *at-less calls (chmod, xattrs, truncate). */
#define FS_PROCNAME_MAX 32
static inline void fs_procname(char *buf, int fd)
{
	snprintf(buf, FS_PROCNAME_MAX, "/proc/self/fd/%d", fd);
}

/* --- capture.c -------------------------------------------------------- */

/* One request being recorded: fs_capture_start() fills it, fs_capture_end() writes it. */
struct fs_capture {
	struct fs_ctx *fs;
	struct iotap_trace_recorder *r;	/* fs->rec when the request began */
	uint32_t pid;			/* the caller's thread id (stats) */
	uint64_t dev;			/* the inode's st_dev (stats) */
	struct fs_thread *t;
	struct iotap_trace_rec rec;
	bool begun;			/* rec.time_ns taken */
	bool in;			/* on something under an --only-under subtree */
	bool quiet;			/* iotap's own control request: no record, no stats */
	unsigned int nr_names;		/* queued in t->pend */
};

/*
 * fs_capture_quiet - @op is one of iotap's own control requests (a control
 * xattr answered, or fs_caller_is_tool()'s STATFS/GETATTR of the root):
 * it reaches neither the trace nor the live counters. Before io_begin.
 */
static inline void fs_capture_quiet(struct fs_capture *op)
{
	op->quiet = true;
	op->r = NULL;
}

/* Who sent a request: the fuse_in_header's ids (libfuse's struct fuse_ctx has the same). */
struct fs_caller {
	uint32_t pid;			/* the calling thread's id */
	uint32_t uid, gid;		/* its fsuid, fsgid */
};

/* The caller of libfuse's request @req. */
static inline struct fs_caller fs_req_caller(fuse_req_t req)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);

	return (struct fs_caller){ (uint32_t)ctx->pid, (uint32_t)ctx->uid, (uint32_t)ctx->gid };
}

/*
 * fs_capture_start - begin recording request @req as @opcode on @inode
 * Fills caller tid/pid/uid/gid and file = @inode's st_ino (0 if NULL).
 * fs_capture_start_as - the same for a request from caller @who that
 * libfuse did not parse (struct fs_io_req); never quiet (no control op).
 */
void fs_capture_start(struct fs_capture *op, fuse_req_t req, unsigned int opcode,
		      struct fs_inode *inode);
void fs_capture_start_as(struct fs_capture *op, struct fs_ctx *fs, const struct fs_caller *who,
			 unsigned int opcode, struct fs_inode *inode);
/*
 * A helper serving a request a ring thread handed over half-way
 * (fs_capture_handoff): the start of the op's first backing call, and the
 * recorder holding it (transport/uring.c sets them around the handler).
 */
extern __thread uint64_t fs_capture_held_ns;
extern __thread struct iotap_trace_recorder *fs_capture_held_r;
/* Start of the backing call: takes rec.time_ns. */
static inline void fs_capture_io_begin(struct fs_capture *op)
{
	if (caa_unlikely(fs_capture_held_ns)) {
		uint64_t t = fs_capture_held_ns;

		fs_capture_held_ns = 0;
		if (op->r == fs_capture_held_r) {
			/* the op began on the ring thread: time it from there */
			op->rec.time_ns = t;
			op->begun = true;
			return;
		}
	}
	/* timed untraced too: the live counters' latencies (stats.c) */
	op->rec.time_ns = op->r ? iotap_trace_op_begin(op->r) : iotap_clock_ns();
	op->begun = true;
}
/*
 * fs_capture_handoff - a backing call of @op would wait for the disk on a ring
 * thread (io_uring): hand the request to a helper of the queue, which
 * serves it again from the start and replies. The op's start so far (if
 * its backing call began) is held in the recorder and becomes the
 * helper's record's time_ns. Call only when fs_uring_nowait() said so.
 * Return: true: drop the request now (fuse_reply_none(): no reply, no
 * record, no stats); false (the recorder's holds are all taken): go on
 * here, waiting.
 */
bool fs_capture_handoff(struct fs_capture *op);
/* End of the backing call: sets rec.dur_ns. */
static inline void fs_capture_io_end(struct fs_capture *op)
{
	op->rec.dur_ns = iotap_clock_ns() - op->rec.time_ns;
}
/* Fault injection: -errno if this request must fail untried, else 0. */
int fs_capture_fault(struct fs_capture *op);
/*
 * fs_capture_name - queue a NAME record for @st's inode bound to (@dir, @name)
 * @inode: the inode, or NULL to find it in the table; the binding is
 *         remembered there and, unless @force, the NAME is skipped when it
 *         is one of the two bindings last emitted. @flags 1: an additional
 *         hard-link name (see fs_binding_note()).
 * With --only-under the binding also sets the inode's scope (from @dir's),
 * a binding outside every subtree gets no NAME, and one inside makes the
 * op recorded (a lookup or rename of something under a subtree).
 * @name is copied. Dropped silently without memory (the trace is a record,
 * not the file system).
 */
void fs_capture_name(struct fs_capture *op, struct fs_inode *inode, struct fs_inode *dir,
		     const char *name, const struct stat *st, uint32_t flags, bool force);
/* Record the OP (result = bytes, 0 or -errno) and any queued NAMEs. */
void fs_capture_end(struct fs_capture *op, int64_t result);

/* --- under.c: the subtree filter (--only-under) ----------------------- */

/*
 * fs_scope - @inode's FS_SCOPE_* (FS_SCOPE_IN without --only-under). After
 * a directory changed scope it is found again from the inode's current
 * path; an inode that comes into a subtree that way gets its NAME in @r.
 */
uint8_t fs_scope(struct fs_ctx *fs, struct fs_inode *inode, struct iotap_trace_recorder *r);
/* The op acts on an entry of @dir: recorded if @dir is under a subtree. */
static inline void fs_capture_dir(struct fs_capture *op, struct fs_inode *dir)
{
	if (caa_unlikely(op->fs->under.n) && !op->in)
		op->in = fs_scope(op->fs, dir, op->r) == FS_SCOPE_IN;
}
/* For fs_capture_name(): @st bound in @dir sets its scope (and @op's); true: it gets a NAME. */
bool fs_under_bind(struct fs_capture *op, struct fs_inode *inode, struct fs_inode *dir,
		   const struct stat *st);
/* Resolve o.only_under below fs->root_fd into fs->under, before the mount; 0 or -errno, @msg. */
int fs_under_init(struct fs_ctx *fs, char *msg, size_t size);
/* The root's scope, once fs->root exists. */
void fs_under_root(struct fs_ctx *fs);

/*
 * PHASE marker from a setxattr on the root. Return: 0, or -ESRCH for the
 * END of a phase never begun on this mount (nothing recorded).
 */
int fs_record_phase(struct fs_ctx *fs, fuse_req_t req, const char *name,
		    size_t name_len, uint32_t kind);
/* The root's NAME record (file2 = 0, name = backing path). */
void fs_record_root(struct fs_ctx *fs, const struct stat *st);
/* A request libfuse answered without calling us (aux = FUSE opcode). */
void fs_record_unhandled(struct fs_ctx *fs, uint32_t opcode, uint64_t nodeid,
			 uint32_t pid, uint32_t uid, uint32_t gid);

/* --- caller.c: who sent a request -------------------------------------- */

/*
 * Control requests: the caller of @req is root or has CAP_SYS_ADMIN
 * (/proc/TID/status CapEff); may mark (that, or the backing root's owner
 * when the mount has allow_mark_owner). fs_log_refused() logs who was
 * refused @what (uid, pid, comm).
 */
bool fs_caller_admin(fuse_req_t req);
/* Is the caller one of iotap's control commands (status, top, mark, trace, umount)? */
bool fs_caller_is_tool(fuse_req_t req);
bool fs_caller_may_mark(struct fs_ctx *fs, fuse_req_t req);
void fs_log_refused(fuse_req_t req, const char *what);
/* The process (thread group) of thread @tid, cached as for OP records. */
uint32_t fs_caller_tgid(uint32_t tid);
/* The same, @mono_ns a CLOCK_MONOTONIC time just read (a request's start). */
uint32_t fs_caller_tgid_at(uint32_t tid, uint64_t mono_ns);
/* CPU time of process @pid, ns (/proc/PID/stat); 0 or -errno. */
int fs_proc_cpu(struct fs_ctx *fs, uint32_t pid, uint64_t *user_ns, uint64_t *sys_ns);
/* Whether thread @tid has @gid among its supplementary groups (/proc). */
bool fs_proc_in_group(uint32_t tid, uint32_t gid);

/* --- control.c: start, stop, rotate ------------------------------------ */

/* A control request's value (setxattr IOTAP_FS_XATTR_CTL); 0 or -errno. */
int fs_ctl_request(struct fs_ctx *fs, fuse_req_t req, const char *value, size_t size);
/*
 * A flight recorder trigger fired (a mark, a slow op): the policy thread
 * saves the window soon. Never blocks, takes no lock; any thread.
 */
void fs_ctl_trigger(struct fs_ctx *fs, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Start and stop the thread that rotates by size and time (if asked). */
void fs_ctl_policy_start(struct fs_ctx *fs);
void fs_ctl_policy_stop(struct fs_ctx *fs);
/* The first trace path of the mount: a strftime pattern expanded; malloc'ed. */
char *fs_ctl_expand(struct fs_ctx *fs, const char *path);
/* The mount opened its first trace at @path (for --rotate-keep). */
void fs_ctl_note_file(struct fs_ctx *fs, const char *path);
/* The trace being written into @buf, "" when none. */
void fs_ctl_trace_path(struct fs_ctx *fs, char *buf, size_t size);
/*
 * @inode's current name in the backing fs as a NAME record, into @r from a
 * worker (@emit false) or the writer thread (@emit true); false if unknown.
 */
bool fs_ctl_name_inode(struct fs_ctx *fs, struct fs_inode *inode, struct iotap_trace_recorder *r,
		       bool emit);
/* The recorder's rebind callback (every file id in use, at each new file). */
void fs_ctl_rebind(void *arg, struct iotap_trace_recorder *r);
/* A capture header for the mount (@layout: free it after use). */
void fs_trace_header(struct fs_ctx *fs, struct iotap_trace_header *hdr, char **layout);
/* The mount's recorder options. */
void fs_recorder_opts(struct fs_ctx *fs, struct iotap_trace_recorder_opts *ro);

/* --- shared by the ops (ops_file.c) ----------------------------------- */

/* Flags to open the backing file with for an application's open(2) @flags. */
int fs_backing_flags(struct fs_ctx *fs, int flags);
/* --- wire.c: the FUSE wire shim (session.c installs it) ---------------- */

ssize_t fs_wire_read(int fd, void *buf, size_t len, void *userdata);
ssize_t fs_wire_writev(int fd, struct iovec *iov, int count, void *userdata);
/* --- wbfail.c: cache mode, the kernel's view after a failed writeback -- */

int fs_wbfail_start(struct fs_ctx *fs);
void fs_wbfail_stop(void);
/* A writeback WRITE on @inode failed: drop the kernel's pages and size. */
void fs_wbfail_write(struct fs_ctx *fs, struct fs_inode *inode);
/* A handle on @inode was released: let the kernel forget it if it failed. */
void fs_wbfail_release(struct fs_ctx *fs, struct fs_inode *inode);

/* fs->fuse_desc from the request limits (the header's fuse field). */
void fs_describe_limits(struct fs_ctx *fs);
/* --- calls.c: the pieces of one read()/write() the kernel cut ----------- */
/* What a READ/WRITE request is of its application call. */
enum { FS_PIECE_WHOLE, FS_PIECE_FIRST, FS_PIECE_CONT };
struct fs_piece {
	int state;			/* FS_PIECE_* */
	uint64_t rest;			/* bytes the call asks for after this piece */
};
void fs_calls_init(struct fs_ctx *fs);
/*
 * fs_calls_begin - before serving a direct_io READ/WRITE of @size bytes
 * (@max: max_read or max_write) on @f: is it a piece of a longer call?
 * fs_calls_end - after it, with its result @ret: flag op->rec
 * IOTAP_OPF_CUT (the call goes on) and IOTAP_OPF_CONT (it continues the
 * thread's previous record), and remember where the call goes on.
 */
void fs_calls_begin(struct fs_capture *op, const struct fs_file *f, size_t size, size_t max,
		    struct fs_piece *p);
void fs_calls_end(struct fs_capture *op, const struct fs_file *f, size_t size,
		  const struct fs_piece *p, ssize_t ret);
/*
 * fs_req_kill_suidgid - the request being served (an open with @fi, a
 * write with @fi, a setattr with @valid) asks the daemon to kill suid/sgid:
 * from the wire shim where libfuse does not relay the flag (wire.c), else
 * from libfuse (fuse_file_info.kill_suidgid; on setattr FATTR_KILL_SUIDGID
 * arrives as bit 11 of @valid).
 */
#if FS_WIRE_KILLPRIV
bool fs_wire_kill_suidgid(void);
#define fs_req_kill_suidgid(fi, valid)	fs_wire_kill_suidgid()
#else
#define fs_req_kill_suidgid(fi, valid)	(((fi) && (fi)->kill_suidgid) || ((valid) & (1 << 11)))
#endif
/*
 * Drop S_ISUID, and S_ISGID if the file is group-executable or the caller
 * of @req is not in its group, from the regular file open at @fd: what the
 * VFS does when a caller without CAP_FSETID writes or truncates it
 * (setattr_should_drop_sgid()). Through @path if set (@fd may be O_PATH).
 * Return: 0 or -errno.
 */
int fs_kill_suidgid(fuse_req_t req, int fd, const char *path);
/* The same for caller @who. */
int fs_kill_suidgid_as(const struct fs_caller *who, int fd, const char *path);
/* Wrap backing @fd in a new struct fs_file and fill @fi; 0 or -ENOMEM. */
int fs_file_attach(struct fs_ctx *fs, struct fuse_file_info *fi, int fd,
		   struct fs_inode *inode);
/* Close and free what fs_file_attach() made (failed create reply). */
void fs_file_detach(struct fuse_file_info *fi);

/*
 * --- ops_file.c: READ and WRITE, from libfuse or straight from a ring ---
 *
 * One handler body serves READ and WRITE whichever way they came: from
 * libfuse (fs_op_read(), fs_op_write_buf()) or, over io_uring, parsed by
 * the ring thread itself (transport/uring.c, ent_serve_direct()), which
 * then allocates no struct fuse_req and takes no session lock. The body
 * reads the caller from @who and replies through @reply, a table per
 * path: libfuse's fuse_reply_*() (ops_file.c) or straight into the ring
 * entry (uring.c). Whichever way, the reply is the same bytes.
 */
struct fs_io_req;
struct fs_io_reply_ops {
	void (*err)(struct fs_io_req *r, int err);		/* a positive errno */
	void (*data)(struct fs_io_req *r, const void *buf, size_t size);	/* READ */
	void (*written)(struct fs_io_req *r, size_t count);	/* WRITE */
	void (*none)(struct fs_io_req *r);	/* handed to a helper, which replies */
};
struct fs_io_req {
	struct fs_ctx *fs;
	const struct fs_io_reply_ops *reply;
	void *to;			/* where the reply goes: a fuse_req_t, a ring entry */
	struct fs_caller who;
};
/* READ of @size bytes at @off of open file @fi: fs_op_read()'s body. */
void fs_io_read(struct fs_io_req *r, size_t size, off_t off, struct fuse_file_info *fi);
/* WRITE of @in at @off: fs_op_write_buf()'s body. */
void fs_io_write(struct fs_io_req *r, struct fuse_bufvec *in, off_t off,
		 struct fuse_file_info *fi);

/* --- inode.c, for capture.c -------------------------------------------- */

/*
 * Remember binding hash @b of @inode. An additional (hard-link) name keeps
 * the previous binding as the second one; a rebinding replaces both. Racy
 * by design (plain atomic stores): the worst case is a duplicate NAME.
 */
static inline void fs_binding_note(struct fs_inode *inode, uint64_t b, uint32_t flags)
{
	CMM_STORE_SHARED(inode->binding[1], flags ? CMM_LOAD_SHARED(inode->binding[0]) : 0);
	CMM_STORE_SHARED(inode->binding[0], b);
}

static inline bool fs_binding_known(const struct fs_inode *inode, uint64_t b)
{
	return CMM_LOAD_SHARED(inode->binding[0]) == b || CMM_LOAD_SHARED(inode->binding[1]) == b;
}

/* fs_binding_note() on the live inode of (@dev, @ino), if the table has it. */
void fs_inode_note_binding(struct fs_ctx *fs, uint64_t dev, uint64_t ino, uint64_t b,
			   uint32_t flags);

/* --- transport/uring.c, uring_setup.c: FUSE over io_uring ------------ */

struct fs_uring;
/*
 * fs_transport_choose - settle fs->o.transport into fs->transport (dev or
 * uring) and fs->transport_why, before mounting. --transport uring where
 * the kernel cannot: -EOPNOTSUPP and @msg with the command that turns it
 * on (iotap never changes the kernel setting itself).
 */
int fs_transport_choose(struct fs_ctx *fs, char *msg, size_t size);
/* From fs_wire_read(): the INIT request (what the kernel offers in flags2). */
void fs_uring_note_init(struct fs_ctx *fs, const void *buf, size_t n);
/* From fs_wire_writev() for the INIT reply: ask for io_uring, write it, start the rings. */
ssize_t fs_uring_init_reply(struct fs_ctx *fs, int fd, struct iovec *iov, int count);
/*
 * fs_uring_reply - a reply to a request that came over a ring: true, with
 * *@ret what writev(2) would have returned, once it is in the entry's
 * buffers (its ring thread commits it). false: not a ring request (notify,
 * INIT, interrupt replies), it goes to /dev/fuse.
 */
bool fs_uring_reply_slow(struct fs_ctx *fs, const struct iovec *iov, int count, ssize_t *ret);
static inline bool fs_uring_reply(struct fs_ctx *fs, const struct iovec *iov, int count,
				  ssize_t *ret)
{
	if (caa_likely(!CMM_LOAD_SHARED(fs->uring)))
		return false;
	return fs_uring_reply_slow(fs, iov, count, ret);
}
/*
 * fs_uring_read_buf - for the READ being served over a ring: the entry's
 * payload buffer (page-aligned) if @size fits, so the reply needs no copy;
 * else NULL (use fs_thread_iobuf()).
 */
void *fs_uring_read_buf(size_t size);
/*
 * fs_uring_nowait - the calling thread serves a request inline on a ring
 * thread, where a backing call that waits for the disk would hold up the
 * queue's other requests: try the call without waiting (RWF_NOWAIT) and
 * hand the request over (fs_capture_handoff) if it would.
 */
bool fs_uring_nowait(void);
/* For fs_capture_handoff(): mark the request being served for a helper. */
void fs_uring_handoff(struct iotap_trace_recorder *r, int hold, uint64_t start);
/* After the unmount, before the session is destroyed: end and join the ring threads. */
void fs_uring_stop(struct fs_ctx *fs);
/* The common request inspection of the wire shim (fs_wire_read), for ring requests too. */
void fs_wire_inspect(struct fs_ctx *fs, const void *buf, size_t n);

/* --- creds.c: creations as the caller ------------------------------- */

struct fs_creds { bool switched; };
/* Capabilities for creations as the caller; once, at start-up. */
void fs_creds_init(struct fs_ctx *fs);
/* Act as @req's caller (a daemon running as root) until fs_creds_pop(). */
void fs_creds_push(struct fs_ctx *fs, fuse_req_t req, struct fs_creds *c);
void fs_creds_pop(struct fs_creds *c);

/* --- ops tables (ops_*.c) -------------------------------------------- */

void fs_ops_dir(struct fuse_lowlevel_ops *ops);
void fs_ops_file(struct fuse_lowlevel_ops *ops);
void fs_ops_attr(struct fuse_lowlevel_ops *ops);
void fs_ops_xattr(struct fuse_lowlevel_ops *ops);

#endif /* FS_I_H */
