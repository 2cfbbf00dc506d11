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
#include <sys/stat.h>

#include "iotap_base.h"
#include "iotap_trace.h"

/* --- seek map ---------------------------------------------------------- */

struct seek_ent {
	uint64_t end;			/* end offset of the previous data op */
	uint64_t count;			/* data ops on the file */
	unsigned int dirs;		/* SEEK_READ | SEEK_WRITE: directions seen */
};

#define SEEK_READ	1u
#define SEEK_WRITE	2u

#define SEEK_CACHE	16		/* entries of the second-level cache */

struct seek_map {
	struct iotap_map map;		/* file id -> struct seek_ent */
	uint64_t last_file;		/* one-entry cache: runs of ops on one file */
	struct seek_ent *last;		/* its entry, NULL: empty (valid until an insert) */
	/*
	 * Behind it, a direct-mapped cache by file id: clients taking turns
	 * on a few files (a database's relations) skip the hash map. Its
	 * entries are valid until an insert too.
	 */
	struct {
		uint64_t file;
		struct seek_ent *ent;	/* NULL: empty */
	} cache[SEEK_CACHE];
};

void seek_map_init(struct seek_map *m);
void seek_map_release(struct seek_map *m);
/* seek_map_update() when @file is not the cached one: the map itself. */
int64_t seek_map_update_slow(struct seek_map *m, uint64_t file, uint64_t off, uint64_t end,
			     unsigned int dir);
/*
 * seek_map_update - note a data op (@dir: SEEK_READ or SEEK_WRITE) on @file
 * from @off to @end
 * Return: the signed distance from where the previous data op on @file
 * ended (0 = sequential); a file's first op counts from offset 0, and so
 * does its first read and its first write: reading a file back from its
 * start, as writing it from its start, is no seek.
 * Inline: a run of ops on one file (the usual case) costs no call.
 */
static inline int64_t seek_map_update(struct seek_map *m, uint64_t file, uint64_t off,
				      uint64_t end, unsigned int dir)
{
	struct seek_ent *e = m->last;
	uint64_t prev;

	if (__builtin_expect(!e || m->last_file != file, 0))
		return seek_map_update_slow(m, file, off, end, dir);
	prev = e->end;
	e->end = end;
	e->count++;
	if (__builtin_expect(!(e->dirs & dir), 0)) {
		e->dirs |= dir;
		prev = 0;
	}
	return (int64_t)(off - prev);
}
/* The @n files with most data ops, busiest first; returns how many. */
unsigned int seek_map_busiest(const struct seek_map *m, unsigned int n, uint64_t *files,
			      uint64_t *counts);

/* --- per-span statistics ------------------------------------------------- */

#define SIZE_BUCKETS	48	/* request size: bucket i holds sizes in (2^(i-1), 2^i] */
#define SIZE_OTHERS	2	/* exact sizes other than 2^i kept per bucket */
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
	/*
	 * The first two other sizes seen in bucket i and how many requests
	 * had exactly each: when size_top and these counts make the whole
	 * bucket, its sizes are known exactly, else it is a range.
	 */
	uint64_t size_oth[SIZE_BUCKETS][SIZE_OTHERS];
	uint64_t size_oth_n[SIZE_BUCKETS][SIZE_OTHERS];
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
 * rest is per span. The arrays are merged and cleared only where the masks
 * after them (or op_count) say they may be non-zero.
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
/* pstats_add_op(): one OP record (inline, below tid_slot()). */
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
/* dir_typical_size() of @p's reads (@write 0) or writes, visiting only the buckets in use. */
uint64_t pstats_typical_size(const struct pstats *p, int write);
/*
 * The size that stands for bucket @i: its commonest size where its sizes
 * are known exactly, else 2^i when most of it is exactly that, else the mean.
 */
uint64_t dir_bucket_size(const struct dir_stats *d, unsigned int i);
int dir_bucket_exact(const struct dir_stats *d, unsigned int i);

static inline unsigned int tid_slot(uint32_t tid)
{
	return (unsigned int)((tid * 2654435769u) >> 20);	/* 12 bits, spreads neighbours */
}

/* --- pstats_add_op: one OP record, on every record's path (inline) ------- */

/*
 * What each op is to the counters, one byte an op (pstats_op_flags[op]):
 * a table load instead of a chain of compares on every record.
 */
#define PSF_SYNC	1u	/* fsync, fsyncdir: the span "ends with a sync" */
#define PSF_KEEP	2u	/* flush, release, forget: leave ends_sync as it is */
#define PSF_DATA	4u	/* read, write */
#define PSF_QUIET	8u	/* a time bin counts it in no op class (sync: in fsyncs) */

static const uint8_t pstats_op_flags[IOTAP_OP_MAX] = {
	[IOTAP_OP_READ] = PSF_DATA,
	[IOTAP_OP_WRITE] = PSF_DATA,
	[IOTAP_OP_FSYNC] = PSF_SYNC | PSF_QUIET,
	[IOTAP_OP_FSYNCDIR] = PSF_SYNC | PSF_QUIET,
	[IOTAP_OP_FLUSH] = PSF_KEEP | PSF_QUIET,
	[IOTAP_OP_RELEASE] = PSF_KEEP | PSF_QUIET,
	[IOTAP_OP_FORGET] = PSF_KEEP | PSF_QUIET,
	[IOTAP_OP_RELEASEDIR] = PSF_QUIET,
};

/* Request size bucket: sizes in (2^(i-1), 2^i] go to bucket i (<= 1: 0). */
static inline unsigned int pstats_size_bucket(uint64_t len)
{
	unsigned int b;

	if (len <= 1)
		return 0;
	b = 64 - (unsigned int)__builtin_clzll(len - 1);	/* ceil(log2(len)) */
	return b < SIZE_BUCKETS ? b : SIZE_BUCKETS - 1;
}

/* The latency histogram of @op, allocated (NULL: out of memory). */
struct iotap_hist *pstats_lat_alloc(struct pstats *p, unsigned int op);

/*
 * Account one OP record; @dist is seek_map_update()'s result for data ops.
 * Inline (every record of a report comes here): the op's properties are
 * bits of constant masks, not branches, and the fields are loaded once.
 */
/* @n requests of @len bytes (not 2^@sb) into bucket @sb's exact sizes, if a slot is left. */
static inline void dir_other_size(struct dir_stats *d, unsigned int sb, uint64_t len, uint64_t n)
{
	unsigned int j;

	for (j = 0; j < SIZE_OTHERS; j++) {
		if (d->size_oth[sb][j] == len || !d->size_oth_n[sb][j]) {
			d->size_oth[sb][j] = len;
			d->size_oth_n[sb][j] += n;
			return;
		}
	}
}

static inline void pstats_add_op(struct pstats *p, const struct iotap_trace_rec *r, int is_seek,
				 int64_t dist)
{
	uint64_t t = r->time_ns, dur = r->dur_ns, len = r->length;
	int64_t res = r->result;
	unsigned int op = r->op < IOTAP_OP_MAX ? r->op : IOTAP_OP_UNKNOWN;
	unsigned int f = pstats_op_flags[op], sync = f & PSF_SYNC;
	/* nobody waits for a FORGET (it has no reply): it ends where it starts */
	uint64_t end = t + (op == IOTAP_OP_FORGET ? 0 : dur);
	unsigned int slot = tid_slot(r->tid), word = slot / 64;
	uint64_t tbit = 1ull << (slot % 64);
	struct iotap_hist *h;

	if (!p->ops || t < p->first_op)
		p->first_op = t;
	if (end > p->last_end)
		p->last_end = end;
	p->ops++;
	p->op_count[op]++;
	p->busy_ns += dur;
	p->tid_bits[word] |= tbit;
	p->m_tid |= 1ull << word;
	if (res < 0)
		p->op_errors[op]++;
	else if (op == IOTAP_OP_GETATTR && S_ISREG(r->mode))
		p->stat_files++;
	/* ends_sync is 0 or 1: the AND keeps it where PSF_KEEP (bit 1) is set */
	p->ends_sync = (int)(sync | ((unsigned int)p->ends_sync & (f >> 1)));
	p->fsyncs += sync;
	if (f & PSF_DATA) {
		unsigned int w = op == IOTAP_OP_WRITE, sb = pstats_size_bucket(len);
		struct dir_stats *d = w ? &p->wr : &p->rd;

		/* FUSE sends writeback (writepage) requests with pid 0 */
		if (w && !r->pid)
			p->wb_writes++;
		d->ops++;
		if (res > 0)
			d->bytes += (uint64_t)res;
		else if (res < 0)
			d->errors++;
		d->size_hist[sb]++;
		d->size_bytes[sb] += len;
		if (len == 1ull << sb)
			d->size_top[sb]++;
		else
			dir_other_size(d, sb, len, 1);
		p->m_size[w] |= 1ull << sb;
		p->data_tid_bits[word] |= tbit;
		p->data_ops++;
		if (is_seek) {
			uint64_t a = dist < 0 ? (uint64_t)-dist : (uint64_t)dist;
			unsigned int b = a ? 64 - (unsigned int)__builtin_clzll(a) : 0;

			b = b < SEEK_BUCKETS ? b : SEEK_BUCKETS - 1;
			p->seeks++;
			d->seeks++;
			p->seek_hist[b]++;
			p->m_seek |= 1ull << b;
			if (dist < 0) {
				p->seek_back++;
				if (w && a == len)
					p->rewrites++;
			}
		}
	}
	h = p->lat[op];
	if (__builtin_expect(!h, 0) && !(h = pstats_lat_alloc(p, op)))
		return;
	iotap_hist_add(h, dur);
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
	struct bin *bins;		/* iotap_buf_alloc()'s, bins_size bytes */
	size_t bins_size;
	uint64_t n, cap;		/* bins in use, allocated; cap never exceeds max */
	uint64_t max;			/* most bins kept: beyond, pairs merge */
	uint64_t cur_end;		/* end of the last bin in use, ns */
	uint64_t max_end;		/* latest end of an op added, ns */
	uint64_t tid_bits[TID_BITS / 64];	/* threads of the last bin */
	/*
	 * The counters of a bin are not counted twice: the ops are counted in
	 * a struct pstats (@src, the report's current block), and what @src
	 * gained since @snap is folded into bin @fold_idx when the ops move
	 * to another bin or the block ends (series_fold). Per op only the
	 * bin test, the longest op and the thread bit remain.
	 */
	const struct pstats *src;	/* NULL: nothing to fold */
	struct bin snap;		/* @src's sums at the last fold */
	uint64_t fold_idx;		/* the bin the ops since then went to (UINT64_MAX: none) */
	uint64_t fold_lo, fold_w;	/* its start and width (fold_w 0: none) */
	uint64_t fold_lat;		/* longest of those ops, ns */
	int err;
};

/* @width: bin width, ns; @max: most bins (the width doubles beyond). */
void series_init(struct series *s, uint64_t origin, uint64_t width, uint64_t max);
void series_release(struct series *s);
/*
 * series_bin() when @t is not in the bin of the ops before: folds their
 * counts into it, then finds (opens, widens) @t's bin and makes it theirs.
 */
struct bin *series_move(struct series *s, uint64_t t);

/* The bin holding time @t, NULL when out of memory. */
static inline struct bin *series_bin(struct series *s, uint64_t t)
{
	/* nearly every record falls in the bin of the one before: one compare, no call */
	if (__builtin_expect(t - s->fold_lo < s->fold_w, 1))
		return &s->bins[s->fold_idx];
	return series_move(s, t);
}

/*
 * Count the OP record @r in the bin where it starts. Its counters (ops,
 * bytes, seeks...) come from @s->src, so @r must be added to @s->src
 * after this call and before the next fold (series_track()).
 */
static inline void series_add_op(struct series *s, const struct iotap_trace_rec *r)
{
	uint64_t t = r->time_ns, dur = r->dur_ns, end = t + dur;
	unsigned int slot = tid_slot(r->tid);
	struct bin *b = series_bin(s, t);

	if (end > s->max_end)
		s->max_end = end;
	if (!b)
		return;
	if (dur > s->fold_lat)
		s->fold_lat = dur;
	s->tid_bits[slot / 64] |= 1ull << (slot % 64);
}

/* The ops series_add_op() sees are counted in @src (which starts empty). */
void series_track(struct series *s, const struct pstats *src);
/*
 * The block @s->src ends: fold what it gained into its bin. Call it right
 * before @src is cleared (pstats_clear): the bins then count from 0.
 */
void series_block_end(struct series *s);
void series_add_sample(struct series *s, const struct iotap_trace_rec *r);
/* Fold the last counts, close the last bin (its thread count); once, after the last record. */
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
