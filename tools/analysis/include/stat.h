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
 */
#ifndef IOTAP_STAT_H
#define IOTAP_STAT_H

#include <stdint.h>

#include "iotap_base.h"
#include "iotap_trace.h"

/* --- seek map ---------------------------------------------------------- */

struct seek_ent {
	uint64_t end;			/* end offset of the previous data op */
	uint64_t count;			/* data ops on the file */
};

struct seek_map {
	struct iotap_map map;		/* file id -> struct seek_ent */
	uint64_t last_file;		/* one-entry cache: runs of ops on one file */
	struct seek_ent *last;		/* its entry, NULL: empty (valid until an insert) */
};

void seek_map_init(struct seek_map *m);
void seek_map_release(struct seek_map *m);
/*
 * seek_map_update - note a data op on @file from @off to @end
 * Return: the signed distance from where the previous data op on @file
 * ended (0 = sequential); a file's first op counts from offset 0.
 */
int64_t seek_map_update(struct seek_map *m, uint64_t file, uint64_t off, uint64_t end);
/* The @n files with most data ops, busiest first; returns how many. */
unsigned int seek_map_busiest(const struct seek_map *m, unsigned int n, uint64_t *files,
			      uint64_t *counts);

/* --- per-span statistics ------------------------------------------------- */

#define SIZE_BUCKETS	48	/* request size: bucket i holds sizes in (2^(i-1), 2^i] */
#define SEEK_BUCKETS	64	/* |seek distance|: bucket i holds [2^(i-1), 2^i) bytes */
#define TID_BITS	4096	/* thread sketch: one bit per hashed thread id */

struct dir_stats {
	uint64_t ops;
	uint64_t bytes;			/* transferred (result), not requested */
	uint64_t errors;
	uint64_t seeks;			/* of these, seeks (the span's seeks, by direction) */
	uint64_t size_hist[SIZE_BUCKETS];	/* requests per size bucket */
	uint64_t size_bytes[SIZE_BUCKETS];	/* requested bytes per size bucket */
	uint64_t size_top[SIZE_BUCKETS];	/* requests of exactly 2^i bytes */
};

struct sample_pt {
	int valid;
	uint64_t t_ns;
	struct iotap_trace_sample s;
};

/*
 * struct pstats - one span of time
 *
 * Everything from ops to tid_bits is additive (pstats_merge adds it); the
 * rest is per span. Kept in this order so clearing a block is one memset.
 */
struct pstats {
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
	struct dir_stats rd, wr;
	uint64_t data_ops, seeks;
	uint64_t rewrites;		/* writes over what the previous op on the file read */
	uint64_t seek_hist[SEEK_BUCKETS];
	uint64_t seek_back;		/* seeks towards the start of the file */
	uint64_t fsyncs;
	uint64_t stat_files;		/* successful GETATTRs of regular files (files stat'ed) */
	uint64_t wb_writes;		/* writes the kernel's writeback sent (pid 0, --cache) */
	uint64_t busy_ns;		/* sum of op durations (mean in flight = busy / span) */
	uint64_t max_inflight;		/* most ops in flight at any op's start */
	uint64_t lost;			/* records the recorder dropped */
	uint64_t tid_bits[TID_BITS / 64];
	uint64_t data_tid_bits[TID_BITS / 64];	/* threads that issued data ops */
	/* end of the additive part */
	struct iotap_hist *lat[IOTAP_OP_MAX];	/* allocated on first use */
	struct sample_pt smp_first, smp_last;	/* last sample before the span, last in it */
	uint64_t cpu_mark_begin_ns;	/* marking process CPU at begin (PHASE offset+length) */
	uint64_t cpu_mark_end_ns;
	int has_cpu_mark;
	uint64_t unit_max_ns;		/* END marker's aux: the workload's longest unit, ns (0: none) */
	int gap_before;			/* automatic phases: an idle gap comes first */
	unsigned int blocks;		/* automatic phases: blocks merged into this span */
	int ends_sync;			/* the last op but flush/release/forget is an fsync */
};

void pstats_init(struct pstats *p, const char *name, unsigned int index, uint64_t t_begin);
void pstats_release(struct pstats *p);
/* Zero the counters and histograms of a block, keeping its allocations. */
void pstats_clear(struct pstats *p);
/* Account one OP record; @dist is seek_map_update()'s result for data ops. */
void pstats_add_op(struct pstats *p, const struct iotap_trace_rec *r, int is_seek, int64_t dist);
void pstats_add_sample(struct pstats *p, const struct iotap_trace_rec *r);
/* Add @src (which follows @dst in time) to @dst. Return: 0 or -ENOMEM. */
int pstats_merge(struct pstats *dst, const struct pstats *src);

/* Derived figures. Durations in seconds; MB = 10^6 bytes. */
double pstats_duration_s(const struct pstats *p);
unsigned int pstats_threads(const struct pstats *p);
unsigned int pstats_data_threads(const struct pstats *p);
static inline int pstats_is_data_op(unsigned int op)
{
	return op == IOTAP_OP_READ || op == IOTAP_OP_WRITE;
}

int pstats_is_meta_op(unsigned int op);
/* Request size that most requests of @d have, bytes (mean of the fullest bucket). */
uint64_t dir_typical_size(const struct dir_stats *d);
/* The size that stands for bucket @i: 2^i when most of it is exactly that, else the mean. */
uint64_t dir_bucket_size(const struct dir_stats *d, unsigned int i);

static inline unsigned int tid_slot(uint32_t tid)
{
	return (unsigned int)((tid * 2654435769u) >> 20);	/* 12 bits, spreads neighbours */
}

/* --- time series --------------------------------------------------------- */

struct bin {
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

struct series {
	uint64_t origin;		/* time of bin 0's start, ns */
	uint64_t width;			/* bin width, ns */
	uint64_t base_width;		/* width asked for */
	struct bin *bins;
	uint64_t n, cap;		/* bins in use, allocated; cap never exceeds max */
	uint64_t max;			/* most bins kept: beyond, pairs merge */
	uint64_t cur_end;		/* end of the last bin in use, ns */
	uint64_t max_end;		/* latest end of an op added, ns */
	uint64_t tid_bits[TID_BITS / 64];	/* threads of the last bin */
	int err;
};

/* @width: bin width, ns; @max: most bins (the width doubles beyond). */
void series_init(struct series *s, uint64_t origin, uint64_t width, uint64_t max);
void series_release(struct series *s);
/* The bin holding time @t, NULL when @t is before the origin or out of memory. */
struct bin *series_bin(struct series *s, uint64_t t);
void series_add_op(struct series *s, const struct iotap_trace_rec *r, int is_seek);
void series_add_sample(struct series *s, const struct iotap_trace_rec *r);
/* Close the last bin (its thread count); call once after the last record. */
void series_finish(struct series *s);

/* Device and CPU figures of each bin, from the samples around it. */
struct bin_dev {
	int valid;			/* a sample pair spans the bin */
	int has_dev;			/* ... and names a block device */
	double rd_mbps, wr_mbps;	/* device, MB/s */
	double iops, util_pct, queue;
	double cpu_sys_pct;		/* all CPUs busy, % of all */
	double cpu_daemon_pct;		/* recording process, % of one CPU */
};

/* Fill @out[0 .. s->n). */
void series_dev(const struct series *s, struct bin_dev *out);

/* --- sampled data ops, for seek maps ----------------------------------- */

struct point {
	uint64_t t;			/* ns */
	uint64_t file;
	uint64_t off;			/* bytes */
	uint32_t len;			/* bytes, capped */
	uint32_t write;			/* 1 = write */
};

struct points {
	struct point *p;
	uint64_t n, cap;
	uint64_t every;			/* keep one data op in every */
	uint64_t skip;			/* ops until the next kept one */
};

void points_init(struct points *s, uint64_t cap);
void points_release(struct points *s);
void points_add(struct points *s, const struct iotap_trace_rec *r);

#endif /* IOTAP_STAT_H */
