/* SPDX-License-Identifier: MIT */
/*
 * iotap_pgsql.h - the pgsql model's API (workload/pgsql/): PostgreSQL running pgbench
 *
 * Over the run context of iotap_workload.h; its conventions hold here.
 */
#ifndef IOTAP_PGSQL_H
#define IOTAP_PGSQL_H

#include <stdint.h>
#include <stdio.h>

#include "iotap_workload.h"

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

#endif /* IOTAP_PGSQL_H */
