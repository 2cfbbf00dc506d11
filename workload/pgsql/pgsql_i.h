/* SPDX-License-Identifier: MIT */
/*
 * pgsql_i.h - private declarations of the PostgreSQL model (pgsql*.c)
 *
 * The model is PostgreSQL's own I/O, as its source does it, on the files
 * it lays out (module prefix pg_):
 *
 *   pgsql.c      the run: the clients' TPC-B transaction, the roles as
 *                threads, phases and markers, CPU accounting, results
 *   pgsql_init.c the layout (base/5/<relfilenode>[.N], global/pg_control,
 *                pg_xact/0000, WAL under pg_wal or --wal-dir), the pgbench -i
 *                load, a backend's start, the removal of it all
 *   pgsql_buf.c  shared_buffers (bufmgr.c: clock sweep, usage counts, dirty
 *                victims written by the backend that needs the buffer), the
 *                relation segment files (md.c), the background writer
 *                (bgwriter.c BgBufferSync) and the checkpointer
 *                (checkpointer.c, BufferSync sorted by file and block, paced
 *                by IsCheckpointOnSchedule, writeback hints, then one fsync per
 *                touched segment, pg_control, WAL recycling)
 *   pgsql_wal.c  the WAL (xlog.c): insertion with page headers and full-page
 *                images, XLogWrite (whole pages from the last written page,
 *                the partial tail page rewritten, split at segment ends and
 *                at the wal_buffers ring wrap), XLogFlush with group commit,
 *                segment creation zero-filled (XLogFileInit) and the WAL
 *                writer (walwriter.c XLogBackgroundFlush)
 *
 * Locks, in the order they nest: pool.lock (buffer table) is never held
 * across I/O; wal.write_lock (WALWriteLock) is held across XLogWrite and
 * its sync, as in PostgreSQL, which is what makes group commit: a client
 * that gets it after another one's flush finds its commit already durable;
 * wal.insert_lock (the insert position) nests inside write_lock;
 * wal.seg_lock (which segment files exist) nests inside write_lock too.
 * pg.phase_lock only around markers.
 *
 * Page contents are not modelled: writes send a fixed pattern, reads go
 * into a scratch buffer. Only positions, sizes and order are the model.
 */
#ifndef IOTAP_PGSQL_I_H
#define IOTAP_PGSQL_I_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "workload_i.h"
#include "iotap_pgsql.h"

#define PG_BLCKSZ		8192u
#define PG_RELSEG_BLOCKS	131072u		/* RELSEG_SIZE: 1 GiB segments */
#define PG_WAL_SEG		(16ull << 20)	/* wal_segment_size */
#define PG_WAL_PAGES_PER_SEG	(PG_WAL_SEG / PG_BLCKSZ)
#define PG_WAL_SHORT_PHD	24u		/* SizeOfXLogShortPHD */
#define PG_WAL_LONG_PHD		40u		/* SizeOfXLogLongPHD, first page of a segment */
#define PG_DB_OID		5u		/* the postgres database (15, 17) */
#define PG_CLOG_XACTS_PER_PAGE	32768u		/* 2 bits per transaction */

/* The relations of a pgbench database, their forks as relations of their own. */
enum pg_relid {
	PG_ACCOUNTS, PG_BRANCHES, PG_TELLERS, PG_HISTORY,
	PG_ACCOUNTS_PKEY, PG_BRANCHES_PKEY, PG_TELLERS_PKEY,
	PG_ACCOUNTS_VM, PG_BRANCHES_VM, PG_TELLERS_VM,
	PG_ACCOUNTS_FSM, PG_BRANCHES_FSM, PG_TELLERS_FSM,
	PG_CLOG,				/* pg_xact/0000: SLRU, written at checkpoints */
	PG_HISTORY_FSM,
	PG_NREL
};

/*
 * After them, the system catalogs DDL changes (pgsql.c's table) and the
 * files pgbench -i's TRUNCATE leaves behind: relations too, ids PG_NREL on.
 */
#define PG_NCAT		35
#define PG_NOLD		7
#define PG_NALL		(PG_NREL + PG_NCAT + PG_NOLD)

/* One 1 GiB segment of a relation: its open file and fsync request. */
struct pg_seg {
	struct wl_file f;
	char name[48];			/* base/5/16394.1 (f.name points here) */
	atomic_int need_sync;		/* written since the checkpointer last synced it */
};

struct pg_rel {
	const char *label;		/* "pgbench_accounts" */
	uint32_t relfilenode;
	const char *suffix;		/* "", "_vm", "_fsm" */
	uint32_t nblocks;		/* size, blocks (pool.lock) */
	uint32_t cap;			/* blocks @epoch has room for */
	uint16_t *epoch;		/* per block: redo epoch of its last change (full-page writes) */
	unsigned int nseg;
	struct pg_seg *seg;		/* nseg, each opened when created */
	int dirfd;			/* base/5 (or pg_xact) */
	uint64_t dir_ino;
	uint32_t fill;			/* bytes of a page a full-page image carries */
	uint8_t *allvis;		/* per block: all-visible in the VM (heaps after COPY FREEZE) */
	uint32_t nallvis;		/* blocks @allvis covers */
	uint64_t sortkey;		/* relfilenode << 2 | fork (main 0, fsm 1, vm 2) */
};

/* Counters, all roles (atomics; snapshots at phase edges give the per-phase figures). */
struct pg_counters {
	atomic_uint_fast64_t txns, wal_bytes, wal_writes, wal_write_bytes, wal_syncs;
	atomic_uint_fast64_t data_reads, data_writes, writes_ckpt, writes_bgwriter, writes_backend;
	atomic_uint_fast64_t extends, fsyncs, writebacks, fpw, prefetches;
};

/* struct pg_buf - one of shared_buffers: which page it holds and its state */
struct pg_buf {
	uint64_t tag;			/* rel << 32 | block, or ~0 */
	uint64_t lsn;			/* end of the last WAL record that changed it */
	uint8_t usage;			/* clock sweep usage count, 0..5 */
	uint8_t flags;			/* PG_BUF_* */
};

#define PG_BUF_VALID	0x01
#define PG_BUF_DIRTY	0x02
#define PG_BUF_CKPT	0x04		/* BM_CHECKPOINT_NEEDED */
#define PG_BUF_IO	0x08		/* read or write in progress */

#define PG_NO_TAG	UINT64_MAX

struct pg_pool {
	pthread_mutex_t lock;
	pthread_cond_t io_done;		/* a PG_BUF_IO flag cleared */
	struct pg_buf *buf;
	uint32_t n;			/* NBuffers */
	struct iotap_map tab;		/* tag -> buffer id (uint32_t) */
	uint32_t hand;			/* clock sweep position */
	uint64_t allocs;		/* buffers allocated (bgwriter's estimate) */
};

/* Writeback hints (bufmgr.c WritebackContext): pending page tags, issued in sorted runs. */
struct pg_wb {
	uint64_t *tag;
	unsigned int n, max;		/* max = *_flush_after / 8 KiB; 0: off */
};

struct pg_wal {
	pthread_mutex_t insert_lock;
	uint64_t insert;		/* next insert position (bytes, with page headers) */
	pthread_mutex_t write_lock;	/* WALWriteLock */
	atomic_uint_fast64_t written, flushed;
	/*
	 * XLogCtl->LogwrtRqst.Write: the end of the last record that crossed a
	 * page boundary (XLogInsertRecord), or of the last write; the WAL
	 * writer's target (XLogBackgroundFlush), backed off to a page boundary
	 */
	atomic_uint_fast64_t rqst_write;
	uint64_t async_lsn;		/* XLogSetAsyncXactLSN (standby snapshots) */
	uint64_t last_flush_ns;		/* the WAL writer's last flush */
	struct wl_file f;		/* the open segment (f.fd < 0: none) */
	uint64_t open_segno;
	char fname[32];
	int dirfd;			/* pg_wal or --wal-dir */
	uint64_t dir_ino;
	pthread_mutex_t seg_lock;	/* which segment files exist: [seg_lo, seg_hi] */
	uint64_t seg_lo, seg_hi;
	uint64_t pages;			/* wal_buffers in pages (the ring) */
	char *data;			/* wal_buffers bytes written from */
	char *zero;			/* zero-fill buffer */
	size_t zero_len;
};

/* Roles: who does an I/O (counted per role). */
enum pg_role { PG_R_BACKEND, PG_R_BGWRITER, PG_R_CKPT };

/* Run states the roles follow. */
enum pg_state { PG_ST_INIT, PG_ST_BENCH, PG_ST_STOP };

struct pg {
	struct iotap_workload_ctx *c;
	const struct iotap_workload_pgsql_opts *o;
	struct iotap_workload_pgsql_result *r;
	int datafd;			/* DIR */
	uint64_t data_ino;
	int basefd, globalfd, xactfd;
	uint64_t base_ino, global_ino, xact_ino, db_ino;
	struct pg_rel rel[PG_NALL];
	int tmpfd;			/* base/pgsql_tmp, or -1 */
	uint64_t tmp_ino;
	int old_created, old_unlinked;	/* TRUNCATE's old files: made, removed after a checkpoint */
	uint32_t naccounts, nbranches, ntellers;
	uint8_t *moved;			/* accounts pages updated once (non-HOT) */
	uint32_t acc_insert_blk;	/* accounts page taking new row versions */
	uint32_t acc_insert_rows;
	uint32_t hist_rows;		/* rows on history's last page */
	uint32_t pkey_leaves[3];	/* leaf pages of the three keys */
	pthread_mutex_t ext_lock;	/* relation extension lock (history, accounts' new versions) */
	atomic_uchar clog_dirty[32];	/* pg_xact/0000 pages changed since the last checkpoint */
	int logicalfd;			/* pg_logical: replorigin_checkpoint */
	uint64_t logical_ino;
	struct pg_pool pool;
	struct pg_wal wal;
	struct pg_counters cnt;
	atomic_uint epoch;		/* redo epoch: bumped at each checkpoint's redo point */
	atomic_uint_fast32_t next_xid;
	atomic_int state;		/* enum pg_state */
	pthread_mutex_t state_lock;
	pthread_cond_t state_cond;	/* state changes, checkpoint requests */
	int ckpt_request;		/* 1: max_wal_size reached (state_lock) */
	uint64_t ckpt_segs;		/* CheckPointSegments */
	uint64_t ckpt_redo;		/* redo position of the running/last checkpoint */
	uint64_t ckpt_start_insert;
	uint64_t ckpt_start_ns;
	double ckpt_distance_est;	/* CheckPointDistanceEstimate, bytes */
	uint64_t t0;			/* run start, ns */
	uint64_t bench_t0;		/* clients' start, ns */
	uint64_t steady_t0;
	/* markers */
	pthread_mutex_t phase_lock;
	const char *base_phase;		/* init, warmup, steady */
	const char *marked_base;	/* the base phase when the open marker began */
	char ckpt_phase[48];		/* "checkpoint 3 write", "" */
	char open_phase[48];
	int phase_open;
	atomic_uint_fast64_t cpu_user, cpu_sys;	/* published by every role */
	/* results of the clients */
	pthread_mutex_t res_lock;
	struct iotap_hist lat;		/* steady latencies */
	struct iotap_hist sync;		/* WAL syncs (write_lock), their traced durations */
	uint64_t sync_commit;		/* of them by a committing client */
	int sync_steady;		/* count syncs into @sync */
	atomic_uint_fast64_t *iv_n, *iv_lat_us;	/* per interval */
	unsigned int niv;
	char *page;			/* 8 KiB pattern written as page content */
	int failed;			/* first error (-errno) of any role */
	atomic_int err;
};

/* Per-thread CPU publishing: the deltas of RUSAGE_THREAD since the last tick. */
struct pg_cpu {
	uint64_t u, s;
};

/* A role's thread starts counting its CPU; pg_cpu_tick() publishes what it took since. */
void pg_cpu_start(struct pg_cpu *t);
void pg_cpu_tick(struct pg *pg, struct pg_cpu *t);
/* Record a role's failure (the first one stops the run). */
void pg_set_error(struct pg *pg, int err);
int pg_stopping(struct pg *pg);
/* Cut the marker timeline: END the open phase, BEGIN the one now current. */
void pg_phase_update(struct pg *pg, struct pg_cpu *t);
/* Sleep up to @ns or until the state changes / a checkpoint is requested. */
void pg_nap(struct pg *pg, uint64_t ns);

/* pgbench's tables, as 15 stores them */
#define ACC_PER_PAGE		61u	/* pgbench_accounts rows per 8 KiB page */
#define TELLERS_PER_PAGE	185u
#define BRANCHES_PER_PAGE	204u
#define HIST_PER_PAGE		157u
#define KEYS_PER_LEAF		367u	/* btree build: 90% full leaves */
#define KEYS_PER_INNER		286u
#define VM_HEAP_PER_PAGE	32672u	/* 2 bits per heap page */
#define BULK_RING		2048u	/* BAS_BULKWRITE: 16 MiB */

/* WAL record sizes, bytes (pg_waldump of pgbench on 15) */
#define REC_HOT_UPDATE		70u
#define REC_UPDATE		160u
#define REC_BT_INSERT		64u
#define REC_HEAP_INSERT		80u
#define REC_COMMIT		34u
#define REC_NEWPAGE_HDR		50u

static inline uint32_t pg_div_up(uint64_t a, uint64_t b)
{
	return (uint32_t)((a + b - 1) / b);
}

/* Pages of a btree over @keys: meta, leaves, inner levels. */
static inline uint32_t pg_btree_pages(uint64_t keys, uint32_t *leaves)
{
	uint32_t n = pg_div_up(keys ? keys : 1, KEYS_PER_LEAF), total = n;

	*leaves = n;
	while (n > 1) {
		n = pg_div_up(n, KEYS_PER_INNER);
		total += n;
	}
	return total + 1;
}

/* pgsql_init.c */
int pg_layout(struct pg *pg);
/* Remove what the run made (also after a failure or Ctrl-C). */
void pg_teardown(struct pg *pg);
/* pgbench -i. */
int pg_init_load(struct pg *pg);
/* A backend's start: PG_VERSION, relation maps, relcache init files read. */
int pg_backend_start(struct pg *pg);

/* pgsql_buf.c */
int pg_pool_init(struct pg *pg);
void pg_pool_release(struct pg *pg);
int pg_rel_open_seg(struct pg *pg, struct pg_rel *rel, unsigned int segno);
int pg_rel_extend(struct pg *pg, enum pg_relid id, uint32_t nblocks, int zero_write);
/*
 * pg_access - a backend uses a page: looked up in shared_buffers, read on
 * a miss (after writing the dirty victim, WAL flushed first); @dirty marks
 * it dirty and sets its LSN; @fpw_bytes gets the size of the full-page
 * image the change must log (0: none needed). @is_new: the block was just
 * added by extension (no read).
 */
int pg_access(struct pg *pg, enum pg_relid id, uint32_t blk, int dirty, int is_new,
	      uint32_t *fpw_bytes);
/* 1: the page is in shared_buffers. */
int pg_resident(struct pg *pg, enum pg_relid id, uint32_t blk);
/* Give a dirty page its LSN after its record was inserted. */
void pg_set_lsn(struct pg *pg, enum pg_relid id, uint32_t blk, uint64_t lsn);
int pg_write_page(struct pg *pg, enum pg_role role, enum pg_relid id, uint32_t blk,
		  struct pg_wb *wb);
/* Writeback hints: one every @flush_after bytes written (0: none). 0 or -ENOMEM. */
int pg_wb_init(struct pg_wb *wb, uint64_t flush_after);
int pg_wb_add(struct pg *pg, struct pg_wb *wb, uint64_t tag);
/*
 * Write buffer @i if it is still dirty (and, with @need_ckpt, still flagged
 * for the checkpoint; with @only_unused, not recently used). Return: 1
 * written, 0 skipped, -errno.
 */
int pg_sync_buf(struct pg *pg, enum pg_role role, uint32_t i, int need_ckpt, int only_unused,
		struct pg_wb *wb);
int pg_wb_issue(struct pg *pg, struct pg_wb *wb);
int pg_bgwriter(struct pg *pg, struct pg_cpu *t);
int pg_checkpointer(struct pg *pg, struct pg_cpu *t);

/* pgsql_wal.c */
int pg_wal_init(struct pg *pg);
void pg_wal_release(struct pg *pg);
/* Reserve @len bytes of WAL (MAXALIGNed); returns the end position. */
uint64_t pg_wal_insert(struct pg *pg, uint32_t len);
/* XLogFlush: durable up to @lsn (and whatever else is inserted). @commit: a client's. */
int pg_wal_flush(struct pg *pg, uint64_t lsn, int commit);
int pg_walwriter(struct pg *pg, struct pg_cpu *t);
/* Segment @segno exists (created zero-filled and installed if not). Needs seg_lock. */
int pg_wal_seg_create(struct pg *pg, uint64_t segno, int *added);
void pg_wal_seg_name(uint64_t segno, char *buf, size_t len);
/* Checkpoint end: recycle or remove segments before @redo, preallocate. */
int pg_wal_recycle(struct pg *pg, uint64_t redo, uint32_t *added, uint32_t *removed,
		   uint32_t *recycled);
/* fsync_fname() of @name in @dirfd (open, fsync, close), as fd.c does. */
int pg_fsync_fname(struct pg *pg, int dirfd, uint64_t parent, const char *name, int isdir);

/* --- the run: its clients (pgsql_client.c) and the owner (pgsql.c) ------------ */

struct pg_client {
	uint64_t rnd;
	struct iotap_hist lat;		/* steady */
	uint64_t n_all, n_steady;
	double lag_sum;
	uint64_t lag_max, lag_n, late;
	double lat_sq_steady;		/* sum of squares, ns^2 (stddev) */
	uint64_t own_cpu_ns;		/* --cpu-per-txn: the model's CPU in the last transaction */
};

struct pg_run {
	struct pg pg;
	struct pg_client *cl;
	pthread_mutex_t sched_lock;
	double next_ns;			/* the Poisson schedule (-R) */
	uint64_t sched_rnd;
	uint64_t end_ns;
	int ret;			/* the owner's */
};

/* Client @i of @run: wait for the benchmark, then transactions until the run stops. */
int pg_client_main(struct pg_run *run, unsigned int i, struct pg_cpu *cpu);

#endif /* IOTAP_PGSQL_I_H */
