/* SPDX-License-Identifier: MIT */
/*
 * workload_i.h - private declarations shared by the sources of workload/
 *
 * Module prefixes: wl_ (ctx.c: the run context; traced.c: the traced
 * system calls; phase.c: phase markers and progress; threads.c: helper
 * threads; engine.c: the generic data phase), rng_ (rng.c), bon_
 * (bonnie*.c; bonnie_i.h holds what the parts of that model share), pg_
 * (pgsql*.c, see pgsql_i.h). The system calls themselves go through
 * libiotap-sys (workload/sys/sys.h, prefix sys_), shared with the replayer.
 *
 * What a reader must know first:
 *
 * - One struct iotap_workload_ctx per target directory. The thread that
 *   opened it (its "owner") runs the phases and writes the phase markers;
 *   phases with several threads (bonnie's seekers, iozone -t) start helper
 *   threads through wl_threads_run(), which the owner joins.
 *
 * - Every system call a workload makes on the target goes through a wl_
 *   wrapper below, which issues it through the one traced-syscall layer
 *   (workload/sys/sys.h, shared with the replayer): one OP record (when
 *   tracing) with the same field meanings as the capture daemon
 *   (FORMAT.md "Op fields"): file = st_ino, fh = an id unique in the run,
 *   offset/length/result, dur_ns = the system call alone. lseek(2) is not
 *   recorded (it is not a filesystem request); sync(2)/syncfs(2) are not
 *   either.
 *
 * - CPU time: a phase's CPU is the CPU of the threads that run this
 *   context's workload (the owner's RUSAGE_THREAD plus what each helper
 *   thread used, added when it exits), not RUSAGE_SELF: several
 *   directories run concurrently in one process, and the trace writer
 *   thread's compression must not show up as the workload's %CP. PHASE
 *   markers carry that cumulative figure (user ns in offset, system ns in
 *   length), so `iotap report` derives the same %CP from the trace.
 *
 * - Interruption: iotap_workload_interrupt() sets one flag; every loop
 *   tests wl_stopped() once per unit and unwinds with -EINTR. The phase
 *   that was running gets its END marker and is reported as partial.
 */
#ifndef IOTAP_WORKLOAD_I_H
#define IOTAP_WORKLOAD_I_H

#include <errno.h>
#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "iotap_base.h"
#include "iotap_trace.h"
#include "iotap_workload.h"

/* --- rng.c: seeded generators that match the tools we imitate ---------- */

/*
 * struct rng - glibc's rand() as a value: the same TYPE_3 additive
 * feedback generator that srand(seed)/rand() use, kept per owner through
 * random_r(3), so bonnie's -z seed gives bonnie++'s very offsets and names.
 */
struct rng {
	struct random_data rd;
	char state[128];		/* TYPE_3, as rand()'s default state */
	uint32_t seed;
};

void rng_init(struct rng *r, uint32_t seed);
/* One rand() value: 0..RAND_MAX (2^31 - 1). */
int32_t rng_rand(struct rng *r);
/* A copy whose sequence continues where @src is (what fork() gives a child). */
void rng_copy(struct rng *dst, const struct rng *src);

/* struct rng48 - lrand48() after srand48(seed), as iozone's shuffle uses it. */
struct rng48 {
	unsigned short x[3];
};

void rng48_init(struct rng48 *r, long seed);
long rng48_next(struct rng48 *r);	/* 0..2^31 - 1 */

/* --- ctx.c: the run context ----------------------------------------- */

struct iotap_workload_ctx {
	char *dir;			/* target as given */
	int dirfd;			/* the directory (O_RDONLY), or -1 for a file target */
	uint64_t dir_ino;		/* its st_ino */
	unsigned int flags;		/* IOTAP_WORKLOAD_* */
	struct iotap_trace_recorder *rec;	/* NULL: not tracing */
	char *trace_path;		/* --force over a file: the trace to replace */
	char *trace_tmp;		/* ... written here, renamed over it at close */
	pthread_mutex_t named_lock;	/* guards named */
	struct iotap_map named;		/* file ids a NAME record bound (no value) */
	iotap_workload_progress_fn progress;
	void *progress_arg;
	uint32_t pid, uid, gid;

	atomic_uint_fast64_t next_fh;	/* file handle ids */
	atomic_uint_fast64_t helper_user_ns;	/* CPU of helper threads that ended */
	atomic_uint_fast64_t helper_sys_ns;

	/* the running phase, for progress reports */
	const char *ph_name;
	uint64_t ph_total;		/* units the phase will do */
	uint64_t ph_unit_bytes;		/* bytes per unit (0: metadata phase) */
	atomic_uint_fast64_t ph_done;	/* units done, helpers add too */
	uint64_t ph_t0;			/* ns */
	uint64_t ph_last_t, ph_last_done;
	int ph_reported;

	char what[320];			/* the operation that failed last */
	int drop_err;			/* first failure to drop the page cache, -errno */

	struct iotap_workload_lockstep *lockstep;	/* NULL: not kept in step */
	struct iotap_workload_span *spans;	/* phases run (named_lock) */
	unsigned int nspans, spans_cap;
};

/* lockstep.c: wait at a phase begin for every other member (no-op without one). */
void wl_lockstep_wait(struct iotap_workload_ctx *c);
/* Log a phase's span for iotap_workload_ctx_spans() (any thread). */
void wl_span_log(struct iotap_workload_ctx *c, const char *name, uint64_t t0, uint64_t t1);

/* 1 once iotap_workload_interrupt() was called. */
int wl_stopped(void);

/*
 * How a model's run ended, into its result: @ret -EINTR (or @stopped) is
 * an interrupted run (*@partial), any other error a failed one (*@failed).
 */
static inline void wl_outcome(int ret, int stopped, int *partial, int *failed)
{
	if (ret == -EINTR || stopped)
		*partial = 1;
	else if (ret)
		*failed = 1;
}

/* CLOCK_MONOTONIC, ns: the shared clock (iotap_base.h). */
static inline uint64_t wl_now(void)
{
	return iotap_clock_ns();
}

/* CPU time of the calling thread (RUSAGE_THREAD), ns. */
void wl_thread_cpu(uint64_t *user_ns, uint64_t *sys_ns);

/* Cumulative CPU of this context's threads: the owner's own plus ended helpers' (owner only). */
void wl_cpu(struct iotap_workload_ctx *c, uint64_t *user_ns, uint64_t *sys_ns);

/* Note what failed, for iotap_workload_ctx_error(). Returns @err. */
int wl_fail(struct iotap_workload_ctx *c, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* --- traced.c: traced system calls -------------------------------------- */

/* One open file of a workload. */
struct wl_file {
	int fd;
	uint64_t ino;			/* st_ino (0 when not tracing and not needed) */
	uint64_t fh;			/* handle id in the trace */
	uint64_t pos;			/* file offset the next read/write uses */
	int oflags;			/* open(2) flags */
	uint32_t opf;			/* IOTAP_OPF_DIRECT / IOTAP_OPF_SYNC for data records */
	FILE *stream;			/* stdio mode (bonnie 1.03 putc/getc), or NULL */
	char *sbuf;			/* its buffer */
	const char *name;		/* for messages; points into the caller's storage */
	struct iotap_workload_ctx *c;	/* for the stdio cookie */
};

/*
 * wl_open - open or create @name in @dirfd (recorded as OPEN or, with
 * O_CREAT, CREATE plus a NAME record). @parent is @dirfd's st_ino.
 * Return: 0 or -errno.
 */
int wl_open(struct iotap_workload_ctx *c, struct wl_file *f, int dirfd, uint64_t parent,
	    const char *name, int oflags, mode_t mode);
/* write(2)/read(2) at f->pos (which they advance). Return: bytes or -errno. */
ssize_t wl_write(struct iotap_workload_ctx *c, struct wl_file *f, const void *buf, size_t len);
ssize_t wl_read(struct iotap_workload_ctx *c, struct wl_file *f, void *buf, size_t len);
/*
 * pwrite(2)/pread(2) at @off; f->pos does not move. Recorded as
 * wl_write/wl_read are. Return: bytes or -errno (failures noted by wl_fail).
 */
ssize_t wl_pwrite(struct iotap_workload_ctx *c, struct wl_file *f, const void *buf, size_t len,
		  uint64_t off);
ssize_t wl_pread(struct iotap_workload_ctx *c, struct wl_file *f, void *buf, size_t len,
		 uint64_t off);
/* wl_pread that also says how long the call took, ns: its OP record's dur_ns. */
ssize_t wl_pread_ns(struct iotap_workload_ctx *c, struct wl_file *f, void *buf, size_t len,
		    uint64_t off, uint64_t *ns);
/* lseek(2) to @off (not recorded). Return: 0 or -errno. */
int wl_seek(struct iotap_workload_ctx *c, struct wl_file *f, uint64_t off);
/* fsync(2) or fdatasync(2). Return: 0 or -errno. */
int wl_fsync(struct iotap_workload_ctx *c, struct wl_file *f, int datasync);
/* wl_fsync that also says how long the call took, ns, as its OP record does. */
int wl_fsync_ns(struct iotap_workload_ctx *c, struct wl_file *f, int datasync, uint64_t *ns);
/* fsync(2) of an open directory (FSYNCDIR). */
int wl_fsync_dir(struct iotap_workload_ctx *c, int fd, uint64_t ino);
/* close(2), recorded as RELEASE (and fclose of a stdio stream). */
int wl_close(struct iotap_workload_ctx *c, struct wl_file *f);
/* fstatat(2) of @name (GETATTR). */
int wl_stat(struct iotap_workload_ctx *c, int dirfd, const char *name, struct stat *st);
/* unlinkat(2); @ino = the victim's st_ino when known (0: looked up when tracing). */
int wl_unlink(struct iotap_workload_ctx *c, int dirfd, uint64_t parent, const char *name,
	      uint64_t ino);
/* unlink @name if it exists (the lookup is not recorded, the unlink is). */
int wl_unlink_old(struct iotap_workload_ctx *c, int dirfd, uint64_t parent, const char *name);
/*
 * renameat(2) of @oldname in @olddirfd (st_ino @oldparent) to @newname in
 * @newdirfd (@newparent): RENAME, then the NAME that rebinds the file.
 */
int wl_rename(struct iotap_workload_ctx *c, int olddirfd, uint64_t oldparent, const char *oldname,
	      int newdirfd, uint64_t newparent, const char *newname);
/* fallocate(2) of [@off, @off + @len) with @mode (FALLOC_FL_*). Return: 0 or -errno. */
int wl_fallocate(struct iotap_workload_ctx *c, struct wl_file *f, int mode, uint64_t off,
		 uint64_t len);
/*
 * wl_open_root - open a directory of the run outside its target (pgsql's
 * --wal-dir) and bind it in the trace as the target is: a NAME record of
 * @path under no parent, so that every file under it has a path. Not an
 * op of the run (no record of the open). Return: 0 or -errno.
 */
int wl_open_root(struct iotap_workload_ctx *c, const char *path, int *fd, uint64_t *ino);
/* mkdirat(2) (+ NAME) and unlinkat(AT_REMOVEDIR). */
int wl_mkdir(struct iotap_workload_ctx *c, int dirfd, uint64_t parent, const char *name,
	     mode_t mode, uint64_t *ino);
int wl_rmdir(struct iotap_workload_ctx *c, int dirfd, uint64_t parent, const char *name,
	     uint64_t ino);

/* An open directory read with getdents64(2), one READDIR record per call. */
struct wl_dir {
	int fd;
	uint64_t ino, fh;
	uint64_t cookie;		/* d_off of the last entry returned */
	char *buf;			/* getdents64 buffer */
	size_t len, pos, cap;
};

int wl_opendir(struct iotap_workload_ctx *c, struct wl_dir *d, int dirfd, const char *name);
/* The next entry, skipping none: 1 with @name/@ino, 0 at the end, -errno. */
int wl_readdir(struct iotap_workload_ctx *c, struct wl_dir *d, const char **name, uint64_t *ino);
void wl_closedir(struct iotap_workload_ctx *c, struct wl_dir *d);

/* stdio over a wl_file (bonnie 1.03's putc/getc): real syscalls recorded. */
int wl_stdio_open(struct iotap_workload_ctx *c, struct wl_file *f, const char *mode);

/*
 * Beside the data phase (engine.c's last block), for pgsql:
 * wl_sync_file_range is issued but not recorded (no FUSE request exists
 * for it). wl_mark writes a PHASE marker (@kind IOTAP_PHASE_*) from any
 * thread, carrying the caller's cumulative CPU figure, and returns its
 * time in @t.
 */
int wl_sync_file_range(struct iotap_workload_ctx *c, struct wl_file *f, uint64_t off,
		       uint64_t len, unsigned int flags);
void wl_mark(struct iotap_workload_ctx *c, const char *name, unsigned int kind,
	     uint64_t user_ns, uint64_t sys_ns, uint64_t *t);

/*
 * wl_app - record an APP record (FORMAT.md "APP records"): a unit of the
 * application's own work that only the model knows, now that it ended
 * @rec: op (enum iotap_app_kind), flags, dur_ns and the kind's fields;
 *       type, time_ns, tid, pid, uid and gid are filled in here
 *
 * Any thread; nothing without a trace.
 */
void wl_app(struct iotap_workload_ctx *c, struct iotap_trace_rec *rec);

/* --- phase.c and threads.c: phases ----------------------------------------------------- */

/*
 * struct wl_span - timing of one phase, between its BEGIN and END markers
 */
struct wl_span {
	const char *name;		/* marker name */
	uint64_t t0, t1;		/* ns */
	uint64_t u0, s0, u1, s1;	/* cumulative CPU at the marks, ns */
	uint64_t lat_max;		/* longest unit, ns */
	uint64_t bytes, units;		/* done */
	int open;
};

/* PHASE BEGIN marker, timing start, progress reset (owner only). */
void wl_phase_begin(struct iotap_workload_ctx *c, struct wl_span *s, const char *name,
		    uint64_t total_units, uint64_t unit_bytes);
/* Account one unit of @bytes that took @lat_ns (owner only; helpers add to c->ph_done). */
void wl_phase_unit(struct iotap_workload_ctx *c, struct wl_span *s, uint64_t bytes,
		   uint64_t lat_ns);
/* PHASE END marker, timing end; copies the figures into @r (owner only). */
void wl_phase_end(struct iotap_workload_ctx *c, struct wl_span *s,
		  struct iotap_workload_phase_result *r, int partial);
/* Progress tick from the owner: reports every second or so. */
void wl_progress(struct iotap_workload_ctx *c);

/*
 * struct wl_threads - helper threads of one phase
 *
 * wl_threads_run() starts @n threads running @fn(t, i). A helper that
 * must get ready first (open its files) calls wl_threads_ready() when it
 * is; once all are, the owner runs @on_ready (typically: the BEGIN
 * marker), releases them together and runs @on_go (which may block, e.g.
 * feeding them work through a pipe). Without @on_ready helpers start at
 * once and need not call wl_threads_ready(). The owner then waits for all
 * to end, or to call wl_threads_done() (what a helper does after that is
 * outside the phase), giving progress reports meanwhile, and runs
 * @on_done (typically: the END marker) before joining them. A helper's CPU
 * time is added to the context's when it ends or calls wl_threads_done().
 */
struct wl_threads {
	unsigned int n;
	int (*fn)(struct wl_threads *t, unsigned int i);
	void *arg;
	void (*on_ready)(struct wl_threads *t);	/* owner, or NULL */
	void (*on_go)(struct wl_threads *t);	/* owner, after the release, or NULL */
	void (*on_done)(struct wl_threads *t);	/* owner, all done (rc not known yet), or NULL */
	/* private */
	struct iotap_workload_ctx *c;
	pthread_mutex_t lock;
	pthread_cond_t cond;		/* owner waits: ready/finished counts */
	pthread_cond_t go_cond;		/* helpers wait: go */
	unsigned int ready, finished, started;
	int go;
	int rc;
};

/* Return: 0, or the first nonzero return of a helper. */
int wl_threads_run(struct iotap_workload_ctx *c, struct wl_threads *t);
/* Helper: my files are open; wait until all are and the owner says go. */
void wl_threads_ready(struct wl_threads *t);
/* Helper: my part of the phase is over (its CPU is counted up to here). */
void wl_threads_done(struct wl_threads *t);

/* --- engine.c: the generic data phase ----------------------------------- */

/* What a data phase does per unit. */
enum wl_kind {
	WL_SEQ_WRITE,		/* write the files front to back */
	WL_SEQ_READ,		/* read them front to back */
	WL_REWRITE,		/* read a unit, dirty one byte, seek back, write it */
	WL_PERM_READ,		/* read every unit once, in the order of a permutation */
	WL_PERM_WRITE,		/* write every unit once, likewise */
};

/* How a unit reaches the kernel. */
enum wl_io {
	WL_IO_BLOCK,		/* one read(2)/write(2) of the unit (reads loop until full) */
	WL_IO_BYTE,		/* one 1-byte read(2)/write(2) per byte (bonnie++ 2.x) */
	WL_IO_STDIO,		/* getc(3)/putc(3) per byte through stdio (bonnie++ 1.03) */
};

/* Data phase flags. */
#define WL_PF_FSYNC_IN		(1u << 0)	/* fsync(2) each file before the END mark */
#define WL_PF_FDATASYNC_IN	(1u << 1)	/* fdatasync(2) likewise (dd conv=fdatasync) */
#define WL_PF_CLOSE_IN		(1u << 2)	/* close before the END mark (timed) */
#define WL_PF_FSYNC_AFTER	(1u << 3)	/* fsync after the END mark, before closing */
#define WL_PF_DIRTY		(1u << 4)	/* bonnie: change one byte of the buffer per unit */
#define WL_PF_TIME_LIMIT	(1u << 5)	/* stop after limit_ns (hdparm -t) */

/*
 * A set of files a data phase runs over, as bonnie++ 1.03 splits its file
 * into 1 GiB pieces (2.x and everything else: one file).
 */
struct wl_fileset {
	unsigned int n;
	uint64_t units_per_file;	/* units in each file but maybe the last */
	struct wl_file *f;		/* n open files */
};

struct wl_data_phase {
	const char *name;		/* marker */
	enum wl_kind kind;
	enum wl_io io;
	unsigned int flags;		/* WL_PF_* */
	size_t unit;			/* bytes per unit */
	uint64_t first;			/* first unit */
	uint64_t units;			/* units to do */
	const uint64_t *perm;		/* WL_PERM_*: unit numbers in order */
	uint64_t limit_ns;		/* WL_PF_TIME_LIMIT */
	void *buf;			/* unit-sized buffer, aligned for O_DIRECT */
};

/*
 * wl_data_run - one timed data phase over @fs (files already open)
 *
 * Marks BEGIN, runs the units, does the timed syncs/closes the flags ask,
 * marks END and fills @r. An interrupted phase is marked partial.
 * Return: 0, -EINTR, or -errno of a failed system call (wl_fail() says which).
 */
int wl_data_run(struct iotap_workload_ctx *c, const struct wl_data_phase *p,
		struct wl_fileset *fs, struct iotap_workload_phase_result *r);

/* read(2) until @len bytes are in (bonnie++'s read_block); EOF is an error. */
int wl_read_full(struct iotap_workload_ctx *c, struct wl_file *f, void *buf, size_t len);
/* write(2) of @len bytes; a short write is -ENOSPC. */
int wl_write_full(struct iotap_workload_ctx *c, struct wl_file *f, const void *buf, size_t len);

/* Close every file of @fs (optionally fsync first); errors noted, first returned. */
int wl_fileset_close(struct iotap_workload_ctx *c, struct wl_fileset *fs, int do_fsync);

/* --- ctx.c: small helpers ------------------------------------------------ */

/* Aligned buffer for O_DIRECT (4 KiB alignment), zeroed. NULL on failure. */
void *wl_buf_alloc(size_t len);

/* "64k", "20g", "512m", "1000" (bytes when not a multiple of 1 KiB). */
const char *wl_size_name(uint64_t bytes, char *buf, size_t len);

#endif /* IOTAP_WORKLOAD_I_H */
