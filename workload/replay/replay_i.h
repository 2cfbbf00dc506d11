/* SPDX-License-Identifier: MIT */
/*
 * replay_i.h - private declarations shared by the sources of workload/replay/
 *
 * Module prefix rp_. What a reader must know first:
 *
 * - Two passes over the trace, one model. walk.c keeps the file
 *   model the trace implies at the current record: objects (one per file
 *   *generation*: a file id reused after an unlink is a new object), their
 *   names (NAME records bind them, UNLINK/RMDIR unbind them, a rename is a
 *   rebinding NAME after the RENAME op), simulated sizes, open handles
 *   (fh ids) and the recorded thread each op belongs to. The scan
 *   (scan.c) walks the trace with it once to find the initial state
 *   and the threads; the loader (load.c) walks it again and turns
 *   every op of the slice into a struct rp_op. Both walk exactly the same
 *   way, so they agree on every object, handle and thread.
 *
 * - Threads. Each recorded thread (pid, tid) is played by one lane (a
 *   replay thread); recorded threads whose lifetimes do not overlap may
 *   share a lane, in time order. Ops the kernel sent without a caller
 *   (tid 0: RELEASE, writeback) go to the lane of the thread that used the
 *   handle last. A lane plays its ops in recorded order.
 *
 * - Queues (ring.c). The loader is the only producer of every lane's ring (a
 *   single-producer single-consumer ring of struct rp_op by value, plus a
 *   byte ring for the op's paths and dependency list). A lane's index of
 *   an op is its position in that lane's stream; lane->head is the number
 *   of ops the lane has finished, so "op i of lane L is done" is
 *   head(L) > i. With --processes the rings, the lanes and the barrier
 *   live in one MAP_SHARED mapping made before the fork, and every futex
 *   is a shared (non-private) one.
 *
 * - Dependencies (deps.c). An op lists, per other lane, the last op
 *   it must wait for: one on the same object (file generation, directory,
 *   handle) whose access conflicts with it (overlapping byte ranges, one of
 *   them writing; metadata counts as one byte past the data) and that had
 *   completed in the capture before this op started. They always point to
 *   ops that start earlier in the trace, so waiting can never cycle.
 *
 * - Phase markers are barriers: every lane reaches the marker after its
 *   earlier ops, the last to arrive writes the PHASE record, then all go
 *   on. So each op falls in the same phase of the replay's trace as in
 *   the capture.
 */
#ifndef IOTAP_REPLAY_I_H
#define IOTAP_REPLAY_I_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "iotap_base.h"
#include "iotap_replay.h"
#include "iotap_trace.h"
#include "sys.h"

#define RP_NONE		UINT32_MAX
#define RP_MAPS_MAX	16
#define RP_PATH_MAX	4096
#define RP_DEPTH_MAX	1024

/* Byte positions of the conflict model: data below RP_DMAX, metadata at RP_META. */
#define RP_DMAX		(UINT64_MAX - 2)
#define RP_META		(UINT64_MAX - 1)

/* --- walk.c: the file model ---------------------------------------- */

struct rp_obj;
struct rp_dlog;

/* One name of an object: (parent, name). */
struct rp_bind {
	struct rp_bind *onext;		/* next name of the same object */
	struct rp_obj *parent;		/* NULL: the root's own binding */
	struct rp_obj *obj;
	uint64_t hash;			/* its key in rp_walk.dent */
	char name[];
};

#define RP_OBJ_CREATED	(1u << 0)	/* made by an op (not seen pre-existing) */
#define RP_OBJ_ROOT	(1u << 1)	/* the captured root */
#define RP_OBJ_STATE	(1u << 2)	/* scan: part of the initial state */
#define RP_OBJ_INSLICE	(1u << 3)	/* created inside the replayed slice */

/* One file generation. */
struct rp_obj {
	struct rp_obj *all;		/* every object of the walk, for release */
	uint64_t id;			/* file id in the trace */
	struct rp_bind *names;		/* first = the one paths use */
	uint32_t mode, uid, gid;	/* st_mode, owner when first seen */
	uint32_t flags;			/* RP_OBJ_* */
	uint64_t size;			/* simulated st_size, bytes */
	uint64_t rename_from;		/* RENAME seen: old parent id, for its NAME */
	struct rp_bind *rename_bind;	/* and the name it moved */
	int32_t entry;			/* scan: initial state entry, -1 */
	uint32_t nfh;			/* open handles on it */
	uint32_t nchild;		/* names it holds (directories) */
	uint32_t seen_later;		/* scan: children first seen so far (existing ones) */
	uint32_t unnamed_mark;		/* scan: seen_later at its first full listing */
	int64_t unnamed;		/* scan: entries that listing had but never named, -1 */
	struct rp_dlog *log;		/* loader: recent accesses */
	char *path;			/* loader: cached relative path */
	uint64_t path_epoch;		/* walk epoch the cache was made in */
	uint16_t path_base;		/* base of the cached path */
};

/* One open handle (fh id). */
struct rp_fh {
	struct rp_fh *next_free;	/* rp_walk.fh_free list */
	uint64_t fh;
	struct rp_obj *obj;		/* what it opened (NULL: unknown) */
	uint32_t oflags;		/* open(2) flags as recorded; RP_NONE: not seen */
	uint32_t user;			/* thread that used it last */
	uint32_t slot;			/* loader: descriptor slot */
	uint32_t open_lane;		/* loader: lane that opened it, RP_NONE: none */
	struct rp_dlog *log;		/* loader: accesses of the handle itself */
	uint8_t dir;			/* OPENDIR handle */
	uint8_t writable;		/* opened for writing */
	uint8_t listing;		/* scan: a listing from offset 0 is under way */
	uint64_t listed;		/* scan: entries it returned so far */
};

/* One recorded thread. */
struct rp_thread {
	uint32_t pid, tid;
	uint32_t lane;			/* replay thread that plays it */
	uint64_t first_ns, last_end_ns;	/* its ops in the slice */
	uint64_t ops;			/* its ops in the slice (pseudo-ops included) */
};

/* A --map, normalised. */
struct rp_map {
	char *old;			/* root-relative, no trailing '/'; "" = the root */
	size_t old_len;
	const char *old_arg;		/* as given */
	char *new_path;			/* as given */
	uint64_t hits;
};

/* What the walk resolved for one op (before its effects). */
struct rp_ctx {
	const struct iotap_trace_rec *rec;
	uint32_t thread;		/* rp_thread index */
	struct rp_obj *obj;		/* rec->file's object (NULL: unknown) */
	struct rp_obj *obj2;		/* rec->file2's object */
	struct rp_obj *oldp;		/* RENAME: old parent */
	struct rp_fh *fh;		/* rec->fh's handle */
	uint64_t size;			/* obj's simulated size before the op */
	int ok;				/* rec->result >= 0 */
};

struct rp_walk {
	struct iotap_map ids;		/* current id -> struct rp_obj * */
	struct iotap_map dent;		/* hash of (parent, name) -> struct rp_bind * */
	struct iotap_map fhs;		/* fh id -> struct rp_fh * */
	struct iotap_map thr;		/* pid << 32 | tid -> uint32_t thread index */
	struct rp_thread *threads;
	uint32_t nthreads, thr_cap;
	int add_threads;		/* scan: new (pid, tid) make threads; loader: fixed */
	struct rp_obj *root;
	char *root_path;		/* the root NAME's name */
	uint64_t epoch;			/* bumped when a directory changes name */
	uint64_t orphans;		/* ops naming unknown files */
	int64_t bytes_delta;		/* sum of size changes of regular files, bytes */
	/* object and name memory, released together */
	struct rp_slab *slabs;
	struct rp_obj *objs;		/* list through rp_obj.all */
	struct rp_fh *fh_free;
	/* called after each binding a NAME makes (kind: RP_BIND_*), or NULL */
	void (*on_bind)(struct rp_walk *w, struct rp_bind *b, int kind);
	void *arg;
};

/* What a NAME record did, for rp_walk.on_bind. */
#define RP_BIND_FIRST	1		/* first sight of a file that existed before */
#define RP_BIND_CREATED	2		/* the first name of a file an op created */
#define RP_BIND_MOVED	3		/* a file changed name (rename) */
#define RP_BIND_LINK	4		/* a file got another name (link, or a sighting) */

int rp_walk_init(struct rp_walk *w, int add_threads);
/* Use @n fixed threads (the scan's), indices unchanged. */
int rp_walk_set_threads(struct rp_walk *w, const struct rp_thread *t, uint32_t n);
void rp_walk_release(struct rp_walk *w);
/* Thread index of (pid, tid), creating it if the walk adds threads; RP_NONE if not. */
uint32_t rp_walk_thread(struct rp_walk *w, uint32_t pid, uint32_t tid);
struct rp_obj *rp_walk_obj(struct rp_walk *w, uint64_t id);
struct rp_fh *rp_walk_fh(struct rp_walk *w, uint64_t fh);
struct rp_bind *rp_walk_dentry(struct rp_walk *w, const struct rp_obj *parent, const char *name);
/* The binding of @obj in @parent (NULL: any), preferring its first. */
struct rp_bind *rp_walk_bind_in(const struct rp_obj *obj, const struct rp_obj *parent);
/*
 * The name a successful RENAME of @rec->file moves: the recorded old name
 * when the trace has it, else the newest name of the file in the old
 * directory (`ln a b; mv b c` moves b). NULL if none.
 */
struct rp_bind *rp_walk_rename_src(struct rp_walk *w, const struct iotap_trace_rec *rec,
				   struct rp_obj *obj, struct rp_obj *oldp);
/* Resolve an OP record (no effects yet). */
void rp_walk_op_pre(struct rp_walk *w, const struct iotap_trace_rec *rec, struct rp_ctx *c);
/* Apply its effects: new generations, unlinks, sizes, handles. */
int rp_walk_op_post(struct rp_walk *w, struct rp_ctx *c);
/* Apply a NAME record. Return: 0 or -ENOMEM. */
int rp_walk_name(struct rp_walk *w, const struct iotap_trace_rec *rec);
/*
 * rp_walk_path - @obj's path relative to the root: "a/b/c", "" for the
 * root. Return: its length, -ENOENT (no name known), -ENAMETOOLONG, -ELOOP.
 */
int rp_walk_path(const struct rp_walk *w, const struct rp_obj *obj, char *buf, size_t size);

/*
 * rp_map_apply - apply the maps to a root-relative @path in place: return
 * the base (0 = the target, 1 + i = map i) and leave the path relative to
 * it ("." for the base itself). @maps sorted longest first.
 */
unsigned int rp_map_apply(struct rp_map *maps, unsigned int nmaps, char *path, int count);

/* --- src.c: records with a look-ahead for NAMEs ---------------------- */

struct rp_src;

int rp_src_open(struct rp_src **out, const char *path, unsigned int window);
const struct iotap_trace_header *rp_src_header(const struct rp_src *s);
/* The next record (1), 0 at the end, -errno. rec->name stays valid until the next call. */
int rp_src_next(struct rp_src *s, struct iotap_trace_rec *rec);
/*
 * rp_src_find_name - the NAME record of @file that follows the current
 * record (within the window, before @until_ns), with flags @link (1:
 * additional name) when @link >= 0. Return: it, or NULL.
 */
const struct iotap_trace_rec *rp_src_find_name(struct rp_src *s, uint64_t file, int link,
					       uint64_t until_ns);
void rp_src_stats(const struct rp_src *s, struct iotap_trace_read_stats *st);
void rp_src_close(struct rp_src *s);

/* --- data.c: synthetic content --------------------------------------- */

struct rp_data {
	enum iotap_replay_data mode;
	double ratio;
};

/* One writer's buffer (one per lane, one for prepare). */
struct rp_wbuf {
	unsigned char *buf;		/* 4 KiB aligned */
	size_t cap;
	uint64_t rng;			/* xorshift64* state */
	uint64_t stamp;			/* next unique block stamp */
};

int rp_wbuf_init(struct rp_wbuf *b, const struct rp_data *d, uint64_t seed, size_t cap);
void rp_wbuf_release(struct rp_wbuf *b);
/*
 * rp_data_fill - @len bytes of content for a write at file offset @off:
 * a pointer into @b (grown as needed), or NULL without memory.
 */
const void *rp_data_fill(const struct rp_data *d, struct rp_wbuf *b, uint64_t off, size_t len);

/* --- scan.c: pass 1 ---------------------------------------------------- */

/* One entry of the initial state. */
struct rp_entry {
	char *path;			/* relative to its base; "." for a base itself */
	uint32_t base;			/* 0: target, 1 + i: map i */
	uint32_t mode, uid, gid;
	uint64_t size;			/* bytes (symlink: target length) */
	int32_t parent;			/* entry index, -1 for the root */
	int32_t link_to;		/* an additional hard link of this entry, or -1 */
	uint32_t depth;
};

/* Something that must not exist before the replay (a name the capture creates). */
struct rp_absent {
	char *path;
	uint32_t base;
};

/* --- deps.c ---------------------------------------------------------- */

struct rp_dep {
	uint32_t lane;
	uint32_t pad;
	uint64_t idx;			/* wait until lane's head > idx */
};

#define RP_DLOG_N	8		/* accesses kept per object */

struct rp_acc {
	uint64_t lo, hi;		/* bytes [lo, hi) */
	uint64_t end_ns;		/* recorded completion */
	uint64_t idx;			/* op's index in its lane */
	uint32_t lane;
	uint32_t write;
};

struct rp_dold {
	uint32_t lane;
	uint64_t rd, wr;		/* index + 1 of the latest evicted read, write (0: none) */
};

struct rp_dlog {
	struct rp_acc e[RP_DLOG_N];
	uint32_t n, pos;
	struct rp_dold *old;		/* evicted accesses: per lane, the latest */
	uint32_t nold, old_cap;
};

/* The dependency set of one op being compiled. */
struct rp_deps {
	struct rp_dep *d;
	uint32_t n, cap;
	uint32_t lane;			/* the op's lane */
	uint64_t idx;			/* its index there */
	uint64_t start_ns, end_ns;	/* recorded */
	uint64_t *vc;			/* nlanes x nlanes "already waited for", or NULL */
	uint32_t nlanes;
};

int rp_deps_init(struct rp_deps *ds, uint32_t nlanes);
void rp_deps_release(struct rp_deps *ds);
void rp_deps_begin(struct rp_deps *ds, uint32_t lane, uint64_t idx, uint64_t start_ns,
		   uint64_t end_ns);
/*
 * rp_deps_access - the op accesses [lo, hi) of the object whose log is
 * *@logp (allocated on first use), reading or writing: collect what it
 * must wait for and log the access. Return: 0 or -ENOMEM.
 */
int rp_deps_access(struct rp_deps *ds, struct rp_dlog **logp, uint64_t lo, uint64_t hi,
		   int write);
/* Drop what an earlier op of the same lane already waited for. */
void rp_deps_finish(struct rp_deps *ds);
void rp_dlog_free(struct rp_dlog *l);

/* --- the shared run state: lanes, rings, barrier ----------------------------- */

/* Pseudo-ops of a lane's stream, beyond enum iotap_op. */
#define RP_OP_NAME	1000		/* forward a NAME record */
#define RP_OP_PHASE	1001		/* phase marker: barrier, then the PHASE record */
#define RP_OP_END	1002		/* the lane is done */

/* rp_op.xflags */
#define RP_X_LAZY	(1u << 0)	/* open path (lazy_flags) if the slot is closed */
#define RP_X_NOPATH	(1u << 1)	/* unreplayable: no path for it */
#define RP_X_NOOP	(1u << 2)	/* pass on as nothing (kernel artefact, daemon) */
#define RP_X_SKIP	(1u << 3)	/* --skip: count only */
#define RP_X_FH_ONLY	(1u << 4)	/* an fh op whose slot is open: no path needed */
#define RP_X_SLOT2_LAZY	(1u << 5)	/* COPY_FILE_RANGE: the output is opened by path2 */

/* One request of a lane's stream. Strings live in the lane's byte ring. */
struct rp_op {
	uint64_t t_ns;			/* scheduled, ns after the replay start (scaled) */
	uint64_t offset, length, aux;
	int64_t result;			/* recorded */
	uint64_t file, file2, fh;	/* recorded ids (the replay's trace keeps them) */
	uint64_t bend;			/* byte ring position after this op's bytes */
	uint32_t flags, mode;		/* recorded */
	uint32_t tid, pid, uid, gid;	/* recorded */
	uint32_t slot, slot2;		/* descriptor slots, RP_NONE */
	uint32_t lazy_flags;		/* open(2) flags for RP_X_LAZY */
	uint32_t path, path2, name;	/* byte ring offsets (RP_NONE: none) */
	uint32_t deps, ndeps;		/* byte ring offset of struct rp_dep[ndeps] */
	uint32_t name_len;
	uint16_t op, xflags;
	uint16_t base, base2;		/* path bases */
};

struct rp_lane {
	/* producer (loader) side */
	_Alignas(64) atomic_uint_fast64_t tail;	/* ops published */
	uint64_t btail;			/* bytes published (loader private) */
	atomic_uint room;		/* futex: the loader waits for room */
	atomic_uint_fast64_t room_at;	/* wake the loader when head reaches it (0: no) */
	/* consumer side */
	_Alignas(64) atomic_uint_fast64_t head;	/* ops finished */
	atomic_uint_fast64_t bhead;	/* bytes released */
	atomic_uint seq;		/* futex: bumped on finish when someone waits */
	atomic_uint waiters;		/* lanes (or the loader) waiting on seq */
	atomic_uint pubq;		/* futex: the lane waits for the loader */
	atomic_uint lane_waits;
	/* fixed after planning */
	_Alignas(64) struct rp_op *ring;
	char *bytes;
	uint64_t cap;			/* ops, power of two */
	uint64_t bcap;			/* bytes, power of two */
	uint32_t proc;			/* replay process (--processes) */
	uint64_t last_t_ns;		/* progress: scheduled time of the last op taken */
};

/* Per-lane results, merged at the end. */
#define RP_LAG_BITS	3		/* log-linear: 8 per power of two */
#define RP_LAG_BUCKETS	512		/* > IOTAP_HIST_BUCKETS_OF(RP_LAG_BITS) */

struct rp_lane_stats {
	struct iotap_replay_opstat op[IOTAP_OP_MAX];
	uint64_t ops;
	uint64_t lag_sum, lag_max, late, dep_waits;
	uint64_t lag_hist[RP_LAG_BUCKETS];	/* lag ns, see rp_lag_bucket() */
	uint64_t t_first, t_last;	/* issue of the first op, end of the last */
	uint64_t diffs;
	char example[2][256];
	unsigned int nexamples;
};

struct rp_shared {
	atomic_int stop;		/* interrupted or failed: lanes leave */
	atomic_int go;			/* futex: the start time is set */
	uint64_t start_ns;		/* CLOCK_MONOTONIC of t_ns = 0 */
	atomic_uint bar_arrived;	/* lanes at the current barrier */
	atomic_uint bar_gen;		/* futex: barrier generation */
	atomic_uint_fast64_t phases;	/* markers written */
	atomic_uint_fast64_t diffs;	/* differences so far (progress) */
	atomic_uint_fast64_t lag_now;	/* largest lag since the last progress report, ns */
	atomic_uint lanes_done;
	uint32_t nlanes;
	struct rp_lane *lanes;		/* [nlanes] */
	struct rp_lane_stats *stats;	/* [nlanes] */
};

/* --- the replay ---------------------------------------------------------------- */

struct iotap_replay {
	struct iotap_replay_opts o;
	struct rp_data data;
	char what[512];			/* subject of the last error */

	/* from the scan */
	struct iotap_replay_plan plan;
	char *trace_workload;		/* header strings kept */
	char *mountpoint;
	char *root_path;
	uint32_t capture_mode;
	uint64_t t_begin, t_end;	/* the slice, ns (recorded clock) */
	int end_marker;			/* the PHASE END at t_end belongs to the slice */
	uint64_t t0;			/* timing origin */
	uint64_t t_last_end;
	uint64_t max_io;		/* largest read/write request, bytes */
	struct rp_thread *threads;
	uint32_t nthreads;
	uint32_t kernel_thread;		/* thread of tid-0 ops with no handle, RP_NONE */
	uint32_t nlanes, nprocs;
	uint32_t *lane_pid;		/* recorded pid of each lane's first thread */
	uint64_t *lane_ops;		/* stream length of each lane */
	uint64_t nbarriers;
	struct rp_entry *entries;
	uint32_t nentries;
	struct rp_absent *absent;
	uint32_t nabsent;
	struct rp_map maps[RP_MAPS_MAX];
	unsigned int nmaps;

	/* the target */
	char *target;			/* realpath */
	char *layout;			/* storage stack under it, for the output header */
	int base_fd[1 + RP_MAPS_MAX];	/* O_PATH directories: target, maps */
	char *base_path[1 + RP_MAPS_MAX];
	int as_root;
	char space_warning[256];	/* the slice may not fit: said before the run */

	/* the run */
	struct rp_shared *sh;
	size_t sh_bytes;
	int sh_mapped;			/* sh is a MAP_SHARED mapping */
	int loader_err;
	uint64_t ops_compiled;
	uint64_t root_id;		/* file id of the captured root */
	pthread_mutex_t pre_lock;	/* the loader filled the rings (or ended): */
	pthread_cond_t pre_cond;
	int preloaded;
};

/* scan.c */
int rp_scan(struct iotap_replay *r);
/*
 * lanes.c: give each recorded thread with ops its lane (rp_thread.lane),
 * set nlanes, lane_pid, lane_ops (+ @per_lane_extra each) and nprocs.
 * 0 or -ENOMEM.
 */
int rp_plan_lanes(struct iotap_replay *r, uint64_t per_lane_extra);
/* Set r->what and return @err. */
int rp_what(struct iotap_replay *r, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* state.c */
int rp_state_check(struct iotap_replay *r, FILE *f, unsigned int max);
int rp_state_changes(struct iotap_replay *r, FILE *f, unsigned int max);
int rp_state_prepare(struct iotap_replay *r, FILE *f);
int rp_state_space(struct iotap_replay *r, int prepare);

/* load.c: the loader thread body; fills the lanes' rings. Return 0 or -errno. */
int rp_load(struct iotap_replay *r);

/* exec.c: run the lanes of replay process @proc (RP_NONE: all) as threads here. */
int rp_exec_lanes(struct iotap_replay *r, uint32_t proc,
		  struct iotap_trace_recorder *rec);
/*
 * Lag histogram bucket of @ns: the shared log-linear scheme (iotap_base.h)
 * at 8 per power of two (within 12.5%), over a flat array because the
 * stats sit in shared memory; its quantiles are iotap_hist_flat_quantile()'s.
 */
static inline unsigned int rp_lag_bucket(uint64_t ns)
{
	return iotap_hist_index(ns, RP_LAG_BITS);
}
/* --- ring.c: the ring protocol (producer: the loader; consumers: the lanes) --- */

/* The loader's side: publications a waiting lane has not been woken for yet. */
struct rp_ring_prod {
	struct iotap_replay *r;
	struct rp_shared *sh;
	uint32_t *pending;		/* per lane: ops published since its wake */
	uint8_t *isdirty;		/* per lane: in dirty[] */
	uint32_t *dirty;		/* lanes that may have pending > 0 */
	uint32_t ndirty;
	uint32_t since_flush;		/* pushes since the last flush */
};

int rp_ring_prod_init(struct rp_ring_prod *p, struct iotap_replay *r);
void rp_ring_prod_release(struct rp_ring_prod *p);
/*
 * rp_ring_push - publish @op to @lane with its strings (@str[i] of
 * @str_len[i] bytes or NULL: path, path2, name) and @ndeps dependencies;
 * waits for room (never for a lane that waits for the loader).
 * Return: 0, -ENAMETOOLONG (does not fit the byte ring), -EINTR (stop).
 */
int rp_ring_push(struct rp_ring_prod *p, uint32_t lane, struct rp_op *op, const char *const str[3],
		 const size_t str_len[3], const struct rp_dep *deps, uint32_t ndeps);
/* Wake every lane with publications it was not woken for (before blocking, at the end). */
void rp_ring_flush(struct rp_ring_prod *p);
/* Lane: op @idx of its ring once published; NULL on stop. */
struct rp_op *rp_ring_next(struct rp_shared *sh, struct rp_lane *ln, uint64_t idx);
/* Lane: op @idx is done; wake who waits for it (other lanes, the loader). */
void rp_ring_finish(struct rp_lane *ln, const struct rp_op *op, uint64_t idx);
/* Wait until lane @m finished op @idx. Return: 1 if it had to wait. */
int rp_ring_wait_done(struct rp_shared *sh, uint32_t m, uint64_t idx);
/* Wake every waiter (stop or interrupt). */
void rp_wake_all(struct rp_shared *sh);

#endif /* IOTAP_REPLAY_I_H */
