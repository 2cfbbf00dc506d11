/* SPDX-License-Identifier: MIT */
/*
 * stat.h - the analyses behind report and compare, one per file
 *
 *   stat_seek.c     per-file "where did the last data op end" map, with
 *                   each file's data op count (for "busy files")
 *   stat_phase.c    everything measured over one span of time (a phase, a
 *                   block of a phase, or the whole trace), fed one record at
 *                   a time; spans merge exactly
 *   stat_series.c   the trace cut into time bins (charts, --interval,
 *                   flags): bounded, the bins widen when the trace is long
 *   stat_points.c   a decimated sample of data ops (time, file, offset) for
 *                   the offset-over-time seek maps
 *
 * Latencies go into struct iotap_hist (iotap_base.h: fio's log-linear
 * scheme, 64 sub-buckets per power of two, <= 1/64 relative error).
 *
 * All of it streams: memory grows with the number of distinct files and
 * op types, never with the number of records.
 *
 * This header holds the types (struct iotap_report, in iotap_analysis.h,
 * holds them, so they are public); the functions that fill them are the
 * library's own, in tools/analysis/stat_i.h.
 */
#ifndef IOTAP_STAT_H
#define IOTAP_STAT_H

#include <stdint.h>

#include "iotap_base.h"
#include "iotap_trace.h"

/* --- seek map ---------------------------------------------------------- */

struct iotap_seek_ent {
	uint64_t end;			/* end offset of the previous data op */
	uint64_t count;			/* data ops on the file */
	unsigned int dirs;		/* IOTAP_SEEK_READ | IOTAP_SEEK_WRITE: directions seen */
};

#define IOTAP_SEEK_READ	1u
#define IOTAP_SEEK_WRITE	2u

#define IOTAP_SEEK_CACHE	16		/* entries of the second-level cache */

struct iotap_seek_map {
	struct iotap_map map;		/* file id -> struct iotap_seek_ent */
	uint64_t last_file;		/* one-entry cache: runs of ops on one file */
	struct iotap_seek_ent *last;		/* its entry, NULL: empty (valid until an insert) */
	/*
	 * Behind it, a direct-mapped cache by file id: clients taking turns
	 * on a few files (a database's relations) skip the hash map. Its
	 * entries are valid until an insert too.
	 */
	struct {
		uint64_t file;
		struct iotap_seek_ent *ent;	/* NULL: empty */
	} cache[IOTAP_SEEK_CACHE];
};

/* --- per-span statistics ------------------------------------------------- */

#define IOTAP_SIZE_BUCKETS	48	/* request size: bucket i holds sizes in (2^(i-1), 2^i] */
#define IOTAP_SIZE_OTHERS	2	/* exact sizes other than 2^i kept per bucket */
#define IOTAP_SEEK_BUCKETS	64	/* |seek distance|: bucket i holds [2^(i-1), 2^i) bytes */
#define IOTAP_TID_BITS	4096	/* thread sketch: one bit per hashed thread id */

struct iotap_dir_stats {
	uint64_t ops;
	uint64_t bytes;			/* transferred (result), not requested */
	uint64_t errors;
	uint64_t seeks;			/* of these, seeks (the span's seeks, by direction) */
	uint64_t size_hist[IOTAP_SIZE_BUCKETS];	/* requests per size bucket */
	uint64_t size_bytes[IOTAP_SIZE_BUCKETS];	/* requested bytes per size bucket */
	uint64_t size_top[IOTAP_SIZE_BUCKETS];	/* requests of exactly 2^i bytes */
	/*
	 * The first two other sizes seen in bucket i and how many requests
	 * had exactly each: when size_top and these counts make the whole
	 * bucket, its sizes are known exactly, else it is a range.
	 */
	uint64_t size_oth[IOTAP_SIZE_BUCKETS][IOTAP_SIZE_OTHERS];
	uint64_t size_oth_n[IOTAP_SIZE_BUCKETS][IOTAP_SIZE_OTHERS];
};

struct iotap_sample_pt {
	int valid;
	uint64_t t_ns;
	struct iotap_trace_sample s;
};

/*
 * struct iotap_pstats - one span of time
 *
 * Everything from ops to tid_bits is additive (pstats_merge adds it); the
 * rest is per span. The arrays are merged and cleared only where the masks
 * after them (or op_count) say they may be non-zero.
 */
struct iotap_pstats {
	char name[128];
	unsigned int index;
	uint64_t t_begin;		/* span start, ns (marker, or first op) */
	uint64_t t_end;			/* span end, ns (next marker, or last op end) */
	uint64_t first_op, last_end;	/* first op start, last op end, ns */
	uint64_t ord_first;		/* ordinal of the first op (phase plans) */
	/* additive part */
	uint64_t ops;
	uint64_t op_count[IOTAP_OP_MAX];
	uint64_t op_errors[IOTAP_OP_MAX];
	struct iotap_dir_stats rd, wr;
	uint64_t data_ops, seeks;
	uint64_t rewrites;		/* writes over what the previous op on the file read */
	uint64_t seek_hist[IOTAP_SEEK_BUCKETS];
	uint64_t seek_back;		/* seeks towards the start of the file */
	uint64_t fsyncs;
	uint64_t stat_files;		/* successful GETATTRs of regular files (files stat'ed) */
	uint64_t wb_writes;		/* writes the kernel's writeback sent (pid 0, --cache) */
	uint64_t busy_ns;		/* sum of op durations (mean in flight = busy / span) */
	uint64_t max_inflight;		/* most ops in flight at any op's start */
	uint64_t lost;			/* records the recorder dropped */
	uint64_t tid_bits[IOTAP_TID_BITS / 64];
	uint64_t data_tid_bits[IOTAP_TID_BITS / 64];	/* threads that issued data ops */
	/* end of the additive part */
	/*
	 * Which array entries of the additive part may be non-zero: merging
	 * and clearing touch only those (a block uses a few sizes and threads
	 * of arrays 5 KB long). Bit i of m_size[0]/[1]: rd/wr's size_* [i];
	 * of m_seek: seek_hist[i]; of m_tid: word i of tid_bits and
	 * data_tid_bits. (The per-op arrays are short: op_count[i] == 0 says
	 * op_errors[i] and lat[i] are empty.)
	 */
	uint64_t m_size[2], m_seek, m_tid;
	struct iotap_hist *lat[IOTAP_OP_MAX];	/* allocated on first use */
	struct iotap_hist_pool *pool;	/* where lat[] come from (NULL: calloc); set after init */
	struct iotap_sample_pt smp_first, smp_last;	/* last sample before the span, last in it */
	uint64_t cpu_mark_begin_ns;	/* marking process CPU at begin (PHASE offset+length) */
	uint64_t cpu_mark_end_ns;
	int has_cpu_mark;
	uint64_t unit_max_ns;		/* END marker's aux: the workload's longest unit, ns (0: none) */
	int gap_before;			/* automatic phases: an idle gap comes first */
	unsigned int blocks;		/* automatic phases: blocks merged into this span */
	int ends_sync;			/* the last op but flush/release/forget is an fsync */
};

/* --- time series --------------------------------------------------------- */

struct iotap_bin {
	uint64_t ops, rd_ops, wr_ops, data_ops, seeks, fsyncs, meta_ops;
	uint64_t rd_bytes, wr_bytes;
	uint64_t busy_ns;		/* op time started in the bin, ns */
	uint32_t threads;		/* distinct threads that started ops */
	uint32_t inflight;		/* an op was in flight at some point of the bin */
	uint64_t lat_max;		/* longest op started in the bin, ns */
	int has_smp;
	uint64_t smp_t;			/* time of the last sample in the bin */
	struct iotap_trace_sample smp;	/* the last sample in the bin (cumulative) */
};

struct iotap_series {
	uint64_t origin;		/* time of bin 0's start, ns */
	uint64_t width;			/* bin width, ns */
	uint64_t base_width;		/* width asked for */
	struct iotap_bin *bins;		/* iotap_buf_alloc()'s, bins_size bytes */
	size_t bins_size;
	uint64_t n, cap;		/* bins in use, allocated; cap never exceeds max */
	uint64_t max;			/* most bins kept: beyond, pairs merge */
	uint64_t cur_end;		/* end of the last bin in use, ns */
	uint64_t max_end;		/* latest end of an op added, ns */
	uint64_t tid_bits[IOTAP_TID_BITS / 64];	/* threads of the last bin */
	/*
	 * The counters of a bin are not counted twice: the ops are counted in
	 * a struct iotap_pstats (@src, the report's current block), and what @src
	 * gained since @snap is folded into bin @fold_idx when the ops move
	 * to another bin or the block ends (series_fold). Per op only the
	 * bin test, the longest op and the thread bit remain.
	 */
	const struct iotap_pstats *src;	/* NULL: nothing to fold */
	struct iotap_bin snap;		/* @src's sums at the last fold */
	uint64_t fold_idx;		/* the bin the ops since then went to (UINT64_MAX: none) */
	uint64_t fold_lo, fold_w;	/* its start and width (fold_w 0: none) */
	uint64_t fold_lat;		/* longest of those ops, ns */
	int err;
	/*
	 * A window's series (series_init_window): the bins of one time window
	 * of a trace, built on its own and appended to the whole trace's
	 * (series_append). bins[0] is bin @first of the whole series; what
	 * the append needs of the seam is kept here.
	 */
	uint64_t first;			/* index of bins[0] in the whole series (0: not a window) */
	int window;
	int seam_closed;		/* its first bin was closed: @seam_bits hold its threads */
	uint32_t open_flag;		/* the first bin's in-flight flag as the whole series would open it */
	uint64_t t0, w0;		/* its first record's time, the width then */
	uint64_t seam_bits[IOTAP_TID_BITS / 64];
};

/* --- sampled data ops, for seek maps ----------------------------------- */

struct iotap_point {
	uint64_t t;			/* ns */
	uint64_t file;
	uint64_t off;			/* bytes */
	uint32_t len;			/* bytes, capped */
	uint32_t write;			/* 1 = write */
};

struct iotap_points {
	struct iotap_point *p;
	uint64_t n, cap;
	uint64_t every;			/* keep one data op in every */
	uint64_t skip;			/* ops until the next kept one */
};

#endif /* IOTAP_STAT_H */
