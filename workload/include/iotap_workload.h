/* SPDX-License-Identifier: MIT */
/*
 * iotap_workload.h - the one public header of libiotap-workload
 *
 * Workload models that imitate bonnie++ (2.00a, as Debian ships it, and
 * 1.03), iozone, dd and hdparm -T/-t: the same system calls in the same
 * order, timed and reported in the units and layouts of those tools, and
 * recorded, op by op, into an iotap trace (trace/include/iotap_trace.h) with
 * PHASE markers that carry the workload's own CPU time.
 *
 * Use: check each target with iotap_workload_target_check(), open one
 * struct iotap_workload_ctx per target, run a workload on it (as often as
 * -x repeats ask), print the results, close the context (which closes the
 * trace). Targets may run concurrently, one thread each; a context belongs
 * to the thread that opened it.
 *
 * Every function returns 0 or -errno unless stated otherwise. Nothing here
 * prints except the *_print functions into the FILE they are given, and
 * nothing calls exit() or installs signal handlers: the caller's SIGINT
 * handler calls iotap_workload_interrupt().
 */
#ifndef IOTAP_WORKLOAD_H
#define IOTAP_WORKLOAD_H

#include <stdint.h>
#include <stdio.h>

/* --- targets and run contexts ----------------------------------------- */

/* What iotap_workload_target_check() found. */
struct iotap_workload_target {
	int is_dir;			/* a directory */
	int is_blockdev;		/* a block device */
	uint64_t size;			/* regular file or device: bytes */
	uint64_t avail_bytes;		/* free space for an unprivileged writer */
	uint64_t fsid;			/* filesystem id (statvfs f_fsid), to add up demands */
	uint64_t ram_bytes;		/* physical memory of this machine */
	int is_fuse;			/* on a FUSE filesystem (an iotap mount, say) */
	int is_rdonly;			/* on a read-only filesystem */
};

/*
 * iotap_workload_target_check - can a workload use @path?
 * @need_dir:   1: @path must be a directory we may create files in
 *
 * Writes nothing. Return: 0; -ENOENT, -ENOTDIR (want a directory),
 * -EROFS (read-only filesystem), -EACCES (no write permission), or -errno
 * from stat(2)/statvfs(2).
 */
int iotap_workload_target_check(const char *path, int need_dir,
				struct iotap_workload_target *t);

/*
 * struct iotap_workload_progress - one progress report of a running phase
 *
 * Reports come from the thread that runs the target, about once a second
 * once a phase has run two seconds; a phase that reported ends with one
 * report with @done set.
 */
struct iotap_workload_progress {
	const char *target;		/* the context's directory or file */
	const char *phase;		/* its marker name */
	double fraction;		/* 0..1 done */
	double elapsed_s;		/* since the phase began */
	double mb_per_s;		/* data phases: 10^6 bytes/s since the last report */
	double units_per_s;		/* metadata phases: files (or seeks) per second */
	int done;			/* 1: the phase ended */
	int partial;			/* with done: it was interrupted or failed */
};

typedef void (*iotap_workload_progress_fn)(void *arg, const struct iotap_workload_progress *p);

/* Context flags. */
#define IOTAP_WORKLOAD_DROP_CACHES	(1u << 0)	/* sync, drop_caches before each phase */
#define IOTAP_WORKLOAD_TRACE_FORCE	(1u << 1)	/* overwrite an existing trace file */

/*
 * struct iotap_workload_lockstep - several targets' tests kept in step
 *
 * As bonnie++'s -p/-y semaphores: each context of a command that shares
 * one (env.lockstep) starts each phase only when every other member has
 * reached its next phase begin or left. Make it with @members = the
 * targets; each target leaves once: iotap_workload_ctx_leave() after its
 * run, or iotap_workload_lockstep_leave() if its context never opened.
 * Free it after every target's thread ended.
 */
struct iotap_workload_lockstep;

int iotap_workload_lockstep_new(struct iotap_workload_lockstep **out, unsigned int members);
void iotap_workload_lockstep_leave(struct iotap_workload_lockstep *ls);
void iotap_workload_lockstep_free(struct iotap_workload_lockstep *ls);

/* One phase a context ran: its marker name and CLOCK_MONOTONIC span. */
struct iotap_workload_span {
	char name[64];
	uint64_t t0, t1;
};

struct iotap_workload_env {
	const char *target;		/* directory (or file/device for dd --read and hdparm) */
	const char *trace_path;		/* trace to write, NULL: none */
	const char *cmdline;		/* the command line, for the trace header */
	const char *workload;		/* header.workload: "bonnie -s 64 -n 1" */
	unsigned int flags;		/* IOTAP_WORKLOAD_* */
	iotap_workload_progress_fn progress;	/* NULL: no reports */
	void *progress_arg;
	struct iotap_workload_lockstep *lockstep;	/* NULL: not kept in step */
};

struct iotap_workload_ctx;

/*
 * iotap_workload_ctx_open - start a run on one target
 *
 * Opens the target and, with @env->trace_path, the trace (recorder with
 * one buffer per thread; the header says source "workload", backing = the
 * target, workload = @env->workload) and writes a NAME record for the
 * target. The calling thread owns the context. Return: 0, or -errno of
 * opening the target or the trace (-EEXIST: the trace exists).
 */
int iotap_workload_ctx_open(struct iotap_workload_ctx **out, const struct iotap_workload_env *env);

/* Close the trace (END record) and free @c. Return: 0 or the trace's first write error. */
int iotap_workload_ctx_close(struct iotap_workload_ctx *c);

/* The run on @c is over: leave its lockstep (the others stop waiting for it). */
void iotap_workload_ctx_leave(struct iotap_workload_ctx *c);

/* The phases @c ran so far, in order; valid until the context closes. */
unsigned int iotap_workload_ctx_spans(const struct iotap_workload_ctx *c,
				      const struct iotap_workload_span **spans);

/* What failed last ("write 'Bonnie.123' at 8192"), "" if nothing. */
const char *iotap_workload_ctx_error(const struct iotap_workload_ctx *c);

/* Trace records dropped so far because the trace writer fell behind. */
uint64_t iotap_workload_ctx_lost(struct iotap_workload_ctx *c);

/*
 * With IOTAP_WORKLOAD_DROP_CACHES: 0, or the -errno of the first failure to
 * write /proc/sys/vm/drop_caches (the phases then ran on the page cache).
 */
int iotap_workload_ctx_drop_error(const struct iotap_workload_ctx *c);

/*
 * iotap_workload_interrupt - ask every running workload to stop
 *
 * Async-signal-safe: call it from a SIGINT handler. Running phases end at
 * their next unit, are reported partial, and the files are removed.
 */
void iotap_workload_interrupt(void);
int iotap_workload_interrupted(void);

/* Figures of one phase. */
struct iotap_workload_phase_result {
	int ran;			/* the phase ran (or started, if partial) */
	int partial;			/* interrupted while running */
	double elapsed_s;		/* wall time between its markers */
	double cpu_s;			/* CPU of the workload's threads meanwhile */
	double latency_max_s;		/* longest unit (bonnie++'s latency) */
	uint64_t bytes;			/* data read + written */
	uint64_t units;			/* units done: chunks, files, seeks, records */
};

/* --- bonnie --------------------------------------------------------------- */

/* bonnie++'s tests, in its order (the columns of its tables). */
enum iotap_bonnie_test {
	IOTAP_BONNIE_PUTC,
	IOTAP_BONNIE_WRITE,
	IOTAP_BONNIE_REWRITE,
	IOTAP_BONNIE_GETC,
	IOTAP_BONNIE_READ,
	IOTAP_BONNIE_SEEKS,
	IOTAP_BONNIE_SEQ_CREATE,
	IOTAP_BONNIE_SEQ_STAT,
	IOTAP_BONNIE_SEQ_DELETE,
	IOTAP_BONNIE_RAND_CREATE,
	IOTAP_BONNIE_RAND_STAT,
	IOTAP_BONNIE_RAND_DELETE,
	IOTAP_BONNIE_TESTS
};

#define IOTAP_BONNIE_103	(1u << 0)	/* 1.03: stdio per-char, 3 seekers, 1 GiB files */
#define IOTAP_BONNIE_SYNC	(1u << 1)	/* -b: fsync where bonnie++ -b does */
#define IOTAP_BONNIE_DIRECT	(1u << 2)	/* -D: O_DIRECT on the files it creates */

struct iotap_workload_bonnie_opts {
	uint32_t file_mib;		/* -s, MiB; 0: no file I/O tests */
	uint32_t chunk;			/* bytes per block I/O, power of two 256..1 MiB */
	uint32_t char_mib;		/* MiB of per-char I/O; 0: skip (-f) */
	uint32_t seeks;			/* random seeks */
	uint32_t seekers;		/* competing seeker threads */
	uint32_t num_files;		/* -n, units of 1024 files; 0: no file tests */
	int32_t max_size, min_size;	/* -n num:max:min, bytes of data per file */
	uint32_t num_dirs;		/* -n num:max:min:dirs */
	uint32_t file_chunk;		/* bytes per write of a created file */
	uint32_t seed;			/* -z */
	uint32_t ram_mib;		/* -r, for the record only */
	unsigned int flags;		/* IOTAP_BONNIE_* */
	const char *machine;		/* -m, the Name column */
};

/* Defaults of bonnie++ 2.00a, or 1.03 with @v103. */
void iotap_workload_bonnie_opts_init(struct iotap_workload_bonnie_opts *o, int v103);

struct iotap_workload_bonnie_result {
	struct iotap_workload_phase_result test[IOTAP_BONNIE_TESTS];
	int partial;			/* interrupted */
	int failed;			/* an operation failed (ctx error says which) */
};

/*
 * iotap_workload_bonnie_run - one bonnie++ run (one of -x repeats)
 *
 * Creates Bonnie.PID (file, then directory) in the target, runs the tests
 * in bonnie++'s order and removes everything, also when interrupted.
 * Return: 0, -EINTR (results partial), or -errno (@r->failed).
 */
int iotap_workload_bonnie_run(struct iotap_workload_ctx *c,
			      const struct iotap_workload_bonnie_opts *o,
			      struct iotap_workload_bonnie_result *r);

/* bonnie++'s two text tables (with 2.x's Latency lines). */
void iotap_workload_bonnie_print_text(FILE *f, const struct iotap_workload_bonnie_opts *o,
				      const struct iotap_workload_bonnie_result *r);
/* The CSV header line bonnie++ prints before -x runs. */
void iotap_workload_bonnie_print_csv_header(FILE *f, const struct iotap_workload_bonnie_opts *o);
/* bonnie++'s one-line CSV (format 1.98 for 2.x; 1.03's layout in 1.03 mode). */
void iotap_workload_bonnie_print_csv(FILE *f, const struct iotap_workload_bonnie_opts *o,
				     const struct iotap_workload_bonnie_result *r);
/* Mean ± sample standard deviation of each figure over @n runs. */
void iotap_workload_bonnie_print_summary(FILE *f, const struct iotap_workload_bonnie_opts *o,
					 const struct iotap_workload_bonnie_result *r,
					 unsigned int n);

/* Marker name of a test ("putc", "seq_create"...). */
const char *iotap_workload_bonnie_test_name(unsigned int test);

/* --- iozone ----------------------------------------------------------------- */

#define IOTAP_IOZONE_T_WRITE	(1u << 0)	/* -i 0: write, rewrite */
#define IOTAP_IOZONE_T_READ	(1u << 1)	/* -i 1: read, re-read */
#define IOTAP_IOZONE_T_RANDOM	(1u << 2)	/* -i 2: random read, random write */

#define IOTAP_IOZONE_DIRECT	(1u << 0)	/* -I: O_DIRECT */
#define IOTAP_IOZONE_FSYNC	(1u << 1)	/* -e: fsync inside the write timing */
#define IOTAP_IOZONE_CLOSE	(1u << 2)	/* -c: close inside the timing */
#define IOTAP_IOZONE_NOSTONEWALL (1u << 3)	/* -x: no stonewalling in -t mode */

/* The six tests in iozone's column order. */
enum iotap_iozone_test {
	IOTAP_IOZONE_WRITE,
	IOTAP_IOZONE_REWRITE,
	IOTAP_IOZONE_READ,
	IOTAP_IOZONE_REREAD,
	IOTAP_IOZONE_RANDOM_READ,
	IOTAP_IOZONE_RANDOM_WRITE,
	IOTAP_IOZONE_TESTS
};

struct iotap_workload_iozone_opts {
	unsigned int tests;		/* IOTAP_IOZONE_T_* (write is implied by the others) */
	unsigned int flags;		/* IOTAP_IOZONE_* */
	int automode;			/* -a */
	uint64_t file_kb;		/* -s (single run, or -a's only size if set) */
	uint64_t rec_kb;		/* -r (single run, or -a's only record size if set) */
	uint64_t min_file_kb, max_file_kb;	/* -a range (-n, -g) */
	uint64_t min_rec_kb, max_rec_kb;	/* -a range (-y, -q) */
	unsigned int threads;		/* -t N: throughput mode; 0: off */
};

void iotap_workload_iozone_opts_init(struct iotap_workload_iozone_opts *o);

/* One row of iozone's table: one (file size, record size) pair. */
struct iotap_workload_iozone_row {
	uint64_t file_kb, rec_kb;
	int skipped;			/* -a skipped this small record for a large file */
	uint64_t kb_per_s[IOTAP_IOZONE_TESTS];	/* 0: not run */
	struct iotap_workload_phase_result ph[IOTAP_IOZONE_TESTS];
};

/* Throughput mode (-t) figures of one test, as iozone prints them. */
struct iotap_workload_iozone_tput {
	int ran;
	double children_kb_s;		/* sum of each thread's KB/s */
	double parent_kb_s;		/* all KB over the wall time */
	double min_kb_s, max_kb_s, avg_kb_s;
	double min_xfer_kb;		/* least KB a thread moved before the stonewall */
	struct iotap_workload_phase_result ph;
};

struct iotap_workload_iozone_result {
	struct iotap_workload_iozone_row *rows;
	unsigned int nrows;
	struct iotap_workload_iozone_tput tput[IOTAP_IOZONE_TESTS];
	int partial, failed;
};

/*
 * iotap_workload_iozone_run - iozone's auto, single or throughput run
 * @live: iozone's running table is printed here row by row (NULL: none)
 *
 * Return: 0, -EINTR, or -errno. Free @r with iotap_workload_iozone_result_release().
 */
int iotap_workload_iozone_run(struct iotap_workload_ctx *c,
			      const struct iotap_workload_iozone_opts *o,
			      struct iotap_workload_iozone_result *r, FILE *live);
void iotap_workload_iozone_result_release(struct iotap_workload_iozone_result *r);
/* iozone's preamble (mode, sizes, units). */
void iotap_workload_iozone_print_header(FILE *f, const struct iotap_workload_iozone_opts *o,
					const char *cmdline);
/* iozone's table (kB, reclen, write, rewrite, read, reread, random read, random write). */
void iotap_workload_iozone_print_table(FILE *f, const struct iotap_workload_iozone_opts *o,
				       const struct iotap_workload_iozone_result *r);
/* -R: "Excel output": one table per test, file sizes down, record sizes across. */
void iotap_workload_iozone_print_report(FILE *f, const struct iotap_workload_iozone_opts *o,
					const struct iotap_workload_iozone_result *r);
/* -t: iozone's per-test throughput lines and its summary table. */
void iotap_workload_iozone_print_tput(FILE *f, const struct iotap_workload_iozone_opts *o,
				      const struct iotap_workload_iozone_result *r);

/* --- dd ----------------------------------------------------------------------- */

#define IOTAP_DD_READ		(1u << 0)	/* read instead of write */
#define IOTAP_DD_DIRECT		(1u << 1)	/* O_DIRECT (iflag/oflag=direct) */
#define IOTAP_DD_FDATASYNC	(1u << 2)	/* conv=fdatasync: fdatasync at the end, timed */

struct iotap_workload_dd_opts {
	uint64_t bs;			/* bytes per read/write */
	uint64_t count;			/* blocks */
	unsigned int flags;		/* IOTAP_DD_* */
	const char *file;		/* name in a directory target (default iotap-dd.dat) */
	int keep;			/* keep the file afterwards */
};

struct iotap_workload_dd_result {
	uint64_t full_in, partial_in, full_out, partial_out;	/* dd's records in/out */
	uint64_t bytes;
	double seconds;
	int prepared;			/* --read had to write the file first */
	struct iotap_workload_phase_result ph;
	int partial, failed;
};

int iotap_workload_dd_run(struct iotap_workload_ctx *c, const struct iotap_workload_dd_opts *o,
			  struct iotap_workload_dd_result *r);
/* GNU dd's three lines: records in, records out, bytes/seconds/rate. */
void iotap_workload_dd_print(FILE *f, const struct iotap_workload_dd_result *r);

/* --- hdparm --------------------------------------------------------------------- */

#define IOTAP_HDPARM_CACHED	(1u << 0)	/* -T */
#define IOTAP_HDPARM_DEVICE	(1u << 1)	/* -t */
#define IOTAP_HDPARM_DIRECT	(1u << 2)	/* --direct: O_DIRECT for both */

struct iotap_workload_hdparm_opts {
	unsigned int flags;		/* IOTAP_HDPARM_* */
	uint64_t file_bytes;		/* directory target: size of the file to create */
};

struct iotap_workload_hdparm_result {
	int ran_cached, ran_device;
	uint64_t cached_mb, device_mb;	/* hdparm's MB: 2 MiB per read, counted as 2 */
	double cached_s, device_s;
	struct iotap_workload_phase_result ph_cached, ph_device;
	int partial, failed;
};

/* Bytes a directory target's file gets: --size for -t, 2 MiB when only -T runs. */
uint64_t iotap_workload_hdparm_file_bytes(const struct iotap_workload_hdparm_opts *o);

int iotap_workload_hdparm_run(struct iotap_workload_ctx *c,
			      const struct iotap_workload_hdparm_opts *o,
			      struct iotap_workload_hdparm_result *r);
void iotap_workload_hdparm_print(FILE *f, const char *target,
				 const struct iotap_workload_hdparm_opts *o,
				 const struct iotap_workload_hdparm_result *r);

/* --- dedup ---------------------------------------------------------------------- */

/*
 * A backup media server's own I/O (workload/dedup.c): backup images of N
 * concurrent streams cut into segments, fingerprint look-ups against a
 * cache and an on-disk index, unique segments appended to container
 * files, a segment map per image, then a restore of each generation
 * through its containers, expiry of the oldest generations and compaction.
 */
enum iotap_dedup_flavor {
	IOTAP_DEDUP_MSDP,		/* NetBackup MSDP: fixed segments, 64 MiB containers */
	IOTAP_DEDUP_RESTIC,		/* restic 0.14: content-defined chunks, packs */
	IOTAP_DEDUP_BORG,		/* borg 1.2: content-defined chunks, segment log */
};

struct iotap_workload_dedup_opts {
	enum iotap_dedup_flavor flavor;
	const char *name;		/* the run's directory name in DIR and meta dir */
	const char *meta_dir;		/* index and maps here; NULL: in the target */
	unsigned int streams;		/* concurrent backup streams (1..256) */
	uint64_t image_bytes;		/* logical size of one image (one stream, one generation) */
	unsigned int generations;	/* full backups of every stream (1..1000) */
	double change;			/* fraction of an image new in each later generation */
	double dup;			/* fraction of the first image that repeats earlier parts of it */
	double compress;		/* fraction of each segment a compressor removes (0..0.95) */
	uint32_t segment_bytes;		/* fixed segment size (MSDP) */
	uint64_t container_bytes;	/* a container is closed when the next segment does not fit */
	uint64_t fp_cache_bytes;	/* fingerprint cache, 32 bytes an entry; 0: a quarter of the index */
	unsigned int expire;		/* oldest generations expired before compaction */
	double compact_threshold;	/* rewrite a container once this fraction of it is dead */
	uint64_t seed;			/* content seed */
	int keep;			/* leave the store on disk (tests inspect it) */
	int mark_capture;		/* on an iotap mount: mark its capture's phases too */
};

void iotap_workload_dedup_opts_init(struct iotap_workload_dedup_opts *o);

/*
 * What the options imply, computed without I/O from the same generator
 * the run uses: exact segment counts, the dedup ratio the data must show.
 */
struct iotap_workload_dedup_plan {
	uint64_t segments;		/* logical segments of all images */
	uint64_t logical_bytes;		/* bytes of all images */
	uint64_t unique_segments;	/* segments stored (all generations, before expiry) */
	uint64_t stored_bytes;		/* their bytes */
	double dedup_ratio;		/* logical_bytes / stored_bytes */
	uint64_t index_bytes;		/* the on-disk index */
	uint64_t map_bytes;		/* all segment maps */
	uint64_t cache_entries;		/* fingerprint cache capacity */
	uint64_t need_data;		/* bytes the run may hold in the target at once */
	uint64_t need_meta;		/* and in the meta directory */
};

/*
 * iotap_workload_dedup_check - are the option values themselves valid?
 *
 * Cheap (no walk over the images): what iotap_workload_dedup_plan()
 * refuses before it walks, so a CLI can refuse bad values with exit 2
 * before it estimates free space. Return: 0, or -EINVAL with @why set.
 */
int iotap_workload_dedup_check(const struct iotap_workload_dedup_opts *o, const char **why);

/* Return: 0, or -EINVAL (with @why set to a static message) for options that do not fit. */
int iotap_workload_dedup_plan(const struct iotap_workload_dedup_opts *o,
			      struct iotap_workload_dedup_plan *p, const char **why);

/* The figures of one generation: its backup and its restore. */
struct iotap_workload_dedup_gen {
	struct iotap_workload_phase_result backup, restore;
	double backup_user_s;		/* user CPU of the backup: the model's own work */
	uint64_t logical_bytes;		/* bytes backed up */
	uint64_t segments, new_segments;
	uint64_t stored_bytes;		/* bytes of the new segments (container appends) */
	uint64_t written_bytes;		/* everything written: containers, index, maps */
	uint64_t lookups, cache_hits, index_reads;
	double miss_p50_s, miss_p99_s;	/* index read latency */
	double gen_cpu_s, hash_cpu_s;	/* content generation and hashing, thread CPU */
	uint64_t restore_bytes, restore_reads, restore_containers;
	double restore_user_s;
	uint64_t verify_errors;		/* restored segments whose hash is not their fingerprint */
};

struct iotap_workload_dedup_result {
	struct iotap_workload_phase_result init;
	struct iotap_workload_dedup_gen *gen;	/* opts.generations entries */
	unsigned int gens_run;		/* backups done */
	unsigned int restores_run;
	struct iotap_workload_phase_result expire, compact;
	uint64_t expired_images, dead_segments, dead_bytes;
	uint64_t containers, containers_removed, containers_rewritten;
	uint64_t compact_read, compact_written, compact_freed;
	uint64_t stored_bytes;		/* segment bytes in containers at the end */
	struct iotap_workload_dedup_plan plan;
	int partial, failed;
};

/*
 * iotap_workload_dedup_run - backups, restores, expiry and compaction
 *
 * Creates opts.name in the target (and in the meta directory), runs the
 * phases and removes everything (unless opts.keep), also when interrupted.
 * Return: 0, -EINTR (results partial), -EIO (a restore read back data that
 * is not what was stored), or -errno. Free @r with
 * iotap_workload_dedup_result_release().
 */
int iotap_workload_dedup_run(struct iotap_workload_ctx *c,
			     const struct iotap_workload_dedup_opts *o,
			     struct iotap_workload_dedup_result *r);
void iotap_workload_dedup_result_release(struct iotap_workload_dedup_result *r);
/* The per-phase tables. */
void iotap_workload_dedup_print(FILE *f, const char *target,
				const struct iotap_workload_dedup_opts *o,
				const struct iotap_workload_dedup_result *r);

/* --- pgsql ---------------------------------------------------------------------- */

/* The PostgreSQL generation whose defaults and I/O paths --era picks. */
enum iotap_pgsql_era {
	IOTAP_PGSQL_84,		/* checkpoint_segments=3, unsorted checkpoints, pg_xlog, no flush hints */
	IOTAP_PGSQL_96,		/* max_wal_size, sorted checkpoints, *_flush_after, pg_xlog */
	IOTAP_PGSQL_15,		/* completion_target 0.9, pg_wal, 256 KiB zero-fill (Debian 12) */
	IOTAP_PGSQL_17,		/* + io_combine_limit reads, fallocate'd bulk extension */
};

enum iotap_pgsql_sync {
	IOTAP_PGSQL_FDATASYNC,	/* wal_sync_method = fdatasync (Linux default) */
	IOTAP_PGSQL_FSYNC,	/* fsync */
	IOTAP_PGSQL_OPEN_DATASYNC,	/* WAL opened O_DSYNC, no separate sync */
	IOTAP_PGSQL_OPEN_SYNC,	/* O_SYNC */
};

struct iotap_workload_pgsql_opts {
	enum iotap_pgsql_era era;
	uint32_t scale;			/* pgbench -s: 100000 accounts each */
	uint32_t clients;		/* pgbench -c */
	uint64_t duration_ns;		/* pgbench -T: warm-up + steady */
	uint64_t warmup_ns;		/* first part of it not counted as steady */
	double rate;			/* pgbench -R, transactions/s over all clients; 0: flat out */
	uint64_t shared_buffers;	/* bytes (multiple of 8 KiB) */
	uint64_t wal_buffers;		/* bytes; 0: shared_buffers / 32, 64 KiB..16 MiB */
	uint64_t checkpoint_timeout_ns;
	uint64_t max_wal_size;		/* bytes (9.5+) */
	uint64_t min_wal_size;		/* bytes (9.5+) */
	uint32_t checkpoint_segments;	/* 8.4; 0: derived from max_wal_size */
	double completion_target;	/* checkpoint_completion_target */
	enum iotap_pgsql_sync wal_sync_method;
	int full_page_writes;
	int sorted_checkpoints;		/* 9.6+: BufferSync sorts by file and block */
	uint64_t checkpoint_flush_after;	/* bytes; 0: no sync_file_range */
	uint64_t bgwriter_flush_after;
	uint64_t backend_flush_after;
	uint64_t wal_writer_flush_after;
	uint64_t bgwriter_delay_ns;
	uint32_t bgwriter_lru_maxpages;
	double bgwriter_lru_multiplier;
	uint64_t wal_writer_delay_ns;
	uint32_t io_combine_limit;	/* blocks per read of a sequential scan (17: 16) */
	uint64_t progress_ns;		/* pgbench -P interval for the per-interval figures */
	uint64_t cpu_per_txn_ns;	/* CPU a client spends per transaction (the statements'
					 * execution, the model's own included); 0: none */
	uint32_t seed;
	const char *wal_dir;		/* WAL segments here (initdb -X); NULL: DIR/pg_wal */
};

/* PostgreSQL's and pgbench's defaults for @era. */
void iotap_workload_pgsql_opts_init(struct iotap_workload_pgsql_opts *o,
				    enum iotap_pgsql_era era);

/*
 * Bytes a run puts on the data directory and on the WAL directory, before
 * the WAL that recycling keeps within max_wal_size (the CLI checks both).
 */
void iotap_workload_pgsql_need(const struct iotap_workload_pgsql_opts *o, uint64_t *data_bytes,
			       uint64_t *wal_bytes);

/* One checkpoint, as log_checkpoints says it. */
struct iotap_workload_pgsql_ckpt {
	unsigned int seq;		/* 1, 2, ... */
	int by_wal;			/* started by max_wal_size (else: time) */
	int partial;			/* interrupted */
	double start_s;			/* since the run began */
	uint64_t buffers;		/* buffers written by it */
	uint32_t added, removed, recycled;	/* WAL files */
	double write_s, sync_s, total_s;
	uint32_t sync_files;
	double sync_longest_s, sync_average_s;
	uint64_t distance_kb, estimate_kb;
};

/* Figures of one part of the run (warm-up or steady). */
struct iotap_workload_pgsql_io {
	uint64_t txns;
	uint64_t wal_bytes;		/* WAL inserted */
	uint64_t wal_writes, wal_write_bytes, wal_syncs;
	uint64_t data_reads, data_writes;	/* 8 KiB page reads and writes (all roles) */
	uint64_t writes_ckpt, writes_bgwriter, writes_backend;
	uint64_t extends;		/* relation extensions */
	uint64_t fsyncs;		/* fsync of data files, pg_control, directories */
	uint64_t writebacks;		/* sync_file_range calls */
	uint64_t fpw;			/* full-page images logged */
	uint64_t prefetches;		/* posix_fadvise(WILLNEED) hints (PrefetchBuffer); untraced */
};

#define IOTAP_PGSQL_PCT	6		/* 50, 90, 95, 99, 99.9, 100 */

struct iotap_workload_pgsql_result {
	struct iotap_workload_phase_result init, warmup, steady;
	double init_tables_s, init_generate_s, init_vacuum_s, init_keys_s;
	struct iotap_workload_pgsql_io io_init, io_warmup, io_steady;
	double tps_all;			/* all transactions / (warm-up + steady) */
	double tps_steady;		/* steady transactions / steady time */
	uint64_t txns_all;
	double lat_avg_ms, lat_stddev_ms;	/* steady */
	double lat_pct_ms[IOTAP_PGSQL_PCT];
	double lag_avg_ms, lag_max_ms;	/* --rate: schedule lag */
	uint64_t late;			/* --rate: transactions more than 1 s behind schedule */
	uint64_t sync_n;		/* WAL syncs in steady */
	double sync_p50_ms, sync_p99_ms, sync_max_ms;
	uint64_t sync_commit_n;		/* of them issued by a committing client */
	double cpu_user_us_per_txn;	/* the model's own CPU per transaction, steady */
	double cpu_sys_us_per_txn;	/* system CPU of its threads (issuing the I/O) */
	unsigned int nintervals;
	double *interval_tps;		/* per progress_ns interval over warm-up + steady */
	double *interval_lat_ms;
	struct iotap_workload_pgsql_ckpt *ckpt;
	unsigned int nckpt;
	uint64_t rel_pages[7];		/* final sizes, pages: accounts, branches, tellers, history, 3 keys */
	int partial, failed;
};

/*
 * iotap_workload_pgsql_run - initialise a pgbench database as PostgreSQL
 * lays it out, run the TPC-B transaction, remove everything
 *
 * Phases (markers): init (pgbench -i), warmup, steady; each checkpoint's
 * write and sync parts cut them as "checkpoint N write" and "checkpoint N
 * sync". Return: 0, -EINTR (results partial), or -errno (@r->failed).
 * Free @r with iotap_workload_pgsql_result_release().
 */
int iotap_workload_pgsql_run(struct iotap_workload_ctx *c,
			     const struct iotap_workload_pgsql_opts *o,
			     struct iotap_workload_pgsql_result *r);
void iotap_workload_pgsql_result_release(struct iotap_workload_pgsql_result *r);
const char *iotap_workload_pgsql_era_name(enum iotap_pgsql_era era);
const char *iotap_workload_pgsql_sync_name(enum iotap_pgsql_sync m);

#endif /* IOTAP_WORKLOAD_H */
