/* SPDX-License-Identifier: MIT */
/*
 * stat_i.h - the functions of stat.h's accumulators (stat_seek.c,
 * stat_phase.c, stat_series.c, stat_points.c), private to libiotap-analysis;
 * the types are in include/stat.h.
 */
#ifndef IOTAP_STAT_I_H
#define IOTAP_STAT_I_H

#include <stdint.h>
#include <sys/stat.h>

#include "stat.h"

/* --- seek map ------------------------------------------------------------ */

void seek_map_init(struct iotap_seek_map *m);
void seek_map_release(struct iotap_seek_map *m);
/* seek_map_update() when @file is not the cached one: the map itself. */
int64_t seek_map_update_slow(struct iotap_seek_map *m, uint64_t file, uint64_t off, uint64_t end,
			     unsigned int dir);
/*
 * seek_map_update - note a data op (@dir: IOTAP_SEEK_READ or IOTAP_SEEK_WRITE) on @file
 * from @off to @end
 * Return: the signed distance from where the previous data op on @file
 * ended (0 = sequential); a file's first op counts from offset 0, and so
 * does its first read and its first write: reading a file back from its
 * start, as writing it from its start, is no seek.
 * Inline: a run of ops on one file (the usual case) costs no call.
 */
static inline int64_t seek_map_update(struct iotap_seek_map *m, uint64_t file, uint64_t off,
				      uint64_t end, unsigned int dir)
{
	struct iotap_seek_ent *e = m->last;
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
unsigned int seek_map_busiest(const struct iotap_seek_map *m, unsigned int n, uint64_t *files,
			      uint64_t *counts);

/* --- per-span statistics ------------------------------------------------- */

void pstats_init(struct iotap_pstats *p, const char *name, unsigned int index, uint64_t t_begin);
void pstats_release(struct iotap_pstats *p);
/* Zero the counters and histograms of a block, keeping its allocations. */
void pstats_clear(struct iotap_pstats *p);
/* pstats_add_op(): one OP record (inline, below tid_slot()), as a struct op_in. */
void pstats_add_sample(struct iotap_pstats *p, const struct iotap_trace_rec *r);
/* Add @src (which follows @dst in time) to @dst. Return: 0 or -ENOMEM. */
int pstats_merge(struct iotap_pstats *dst, const struct iotap_pstats *src);

/* Derived figures. Durations in seconds; MB = 10^6 bytes. */
double pstats_duration_s(const struct iotap_pstats *p);
unsigned int pstats_threads(const struct iotap_pstats *p);
unsigned int pstats_data_threads(const struct iotap_pstats *p);
static inline int pstats_is_data_op(unsigned int op)
{
	return op == IOTAP_OP_READ || op == IOTAP_OP_WRITE;
}

int pstats_is_meta_op(unsigned int op);
/* Request size that most requests of @d have, bytes (mean of the fullest bucket). */
uint64_t dir_typical_size(const struct iotap_dir_stats *d);
/* dir_typical_size() of @p's reads (@write 0) or writes, visiting only the buckets in use. */
uint64_t pstats_typical_size(const struct iotap_pstats *p, int write);
/*
 * The size that stands for bucket @i: its commonest size where its sizes
 * are known exactly, else 2^i when most of it is exactly that, else the mean.
 */
uint64_t dir_bucket_size(const struct iotap_dir_stats *d, unsigned int i);
int dir_bucket_exact(const struct iotap_dir_stats *d, unsigned int i);

static inline unsigned int tid_slot(uint32_t tid)
{
	return (unsigned int)((tid * 2654435769u) >> 20);	/* 12 bits, spreads neighbours */
}

/* --- pstats_add_op: one OP record, on every record's path (inline) ------- */

/*
 * struct op_in - what pstats_add_op() and series_add_op() read of an OP
 * record: op_in_of() takes it from a record; report_par.c's windows keep
 * their ops as these, and the pipe (report.c) carries them between CPUs.
 * Of pid, mode and aux the accumulators ask one thing each, of one op
 * each, kept as a bit for that op only: one that reads more of them must
 * carry more here.
 */
#define OPB_PID0	1u		/* a WRITE's pid is 0 (a writeback, pstats_add_op) */
#define OPB_REG		2u		/* a GETATTR's S_ISREG(mode) (pstats_add_op) */
#define OPB_AUX1	4u		/* a WRITE's aux is 1 (a failed writeback, report.c pre_op) */
struct op_in {
	uint64_t t, dur, len;		/* time_ns, dur_ns, length */
	int64_t res;			/* result */
	uint32_t tid;
	uint8_t op;			/* below IOTAP_OP_MAX (else IOTAP_OP_UNKNOWN) */
	uint8_t bits;			/* OPB_* */
};
_Static_assert(IOTAP_OP_MAX <= 256, "struct op_in keeps the op in a byte");

static inline __attribute__((always_inline)) struct op_in
op_in_of(const struct iotap_trace_rec *r)
{
	unsigned int op = r->op < IOTAP_OP_MAX ? r->op : IOTAP_OP_UNKNOWN, bits = 0;

	if (op == IOTAP_OP_WRITE)
		bits = (!r->pid ? OPB_PID0 : 0) | (r->aux == 1 ? OPB_AUX1 : 0);
	else if (op == IOTAP_OP_GETATTR && S_ISREG(r->mode))
		bits = OPB_REG;
	return (struct op_in){ .t = r->time_ns, .dur = r->dur_ns, .len = r->length,
			       .res = r->result, .tid = r->tid, .op = (uint8_t)op,
			       .bits = (uint8_t)bits };
}

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
	return b < IOTAP_SIZE_BUCKETS ? b : IOTAP_SIZE_BUCKETS - 1;
}

/* The latency histogram of @op, allocated (NULL: out of memory). */
struct iotap_hist *pstats_lat_alloc(struct iotap_pstats *p, unsigned int op);

/*
 * Account one OP record; @dist is seek_map_update()'s result for data ops.
 * Inline (every record of a report comes here): the op's properties are
 * bits of constant masks, not branches, and the fields are loaded once.
 */
/* @n requests of @len bytes (not 2^@sb) into bucket @sb's exact sizes, if a slot is left. */
static inline void dir_other_size(struct iotap_dir_stats *d, unsigned int sb, uint64_t len,
				  uint64_t n)
{
	unsigned int j;

	for (j = 0; j < IOTAP_SIZE_OTHERS; j++) {
		if (d->size_oth[sb][j] == len || !d->size_oth_n[sb][j]) {
			d->size_oth[sb][j] = len;
			d->size_oth_n[sb][j] += n;
			return;
		}
	}
}

static inline __attribute__((always_inline)) void
pstats_add_op(struct iotap_pstats *p, const struct op_in *r, int is_seek, int64_t dist)
{
	uint64_t t = r->t, dur = r->dur, len = r->len;
	int64_t res = r->res;
	unsigned int op = r->op;
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
	else if (op == IOTAP_OP_GETATTR && (r->bits & OPB_REG))
		p->stat_files++;
	/* ends_sync is 0 or 1: the AND keeps it where PSF_KEEP (bit 1) is set */
	p->ends_sync = (int)(sync | ((unsigned int)p->ends_sync & (f >> 1)));
	p->fsyncs += sync;
	if (f & PSF_DATA) {
		unsigned int w = op == IOTAP_OP_WRITE, sb = pstats_size_bucket(len);
		struct iotap_dir_stats *d = w ? &p->wr : &p->rd;

		/* FUSE sends writeback (writepage) requests with pid 0 */
		if (w && (r->bits & OPB_PID0))
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

			b = b < IOTAP_SEEK_BUCKETS ? b : IOTAP_SEEK_BUCKETS - 1;
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

/* @width: bin width, ns; @max: most bins (the width doubles beyond). */
void series_init(struct iotap_series *s, uint64_t origin, uint64_t width, uint64_t max);
void series_release(struct iotap_series *s);
/*
 * series_bin() when @t is not in the bin of the ops before: folds their
 * counts into it, then finds (opens, widens) @t's bin and makes it theirs.
 */
struct iotap_bin *series_move(struct iotap_series *s, uint64_t t);

/* The bin holding time @t, NULL when out of memory. */
static inline struct iotap_bin *series_bin(struct iotap_series *s, uint64_t t)
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
static inline void series_add_op(struct iotap_series *s, const struct op_in *r)
{
	uint64_t t = r->t, dur = r->dur, end = t + dur;
	unsigned int slot = tid_slot(r->tid);
	struct iotap_bin *b = series_bin(s, t);

	if (end > s->max_end)
		s->max_end = end;
	if (!b)
		return;
	if (dur > s->fold_lat)
		s->fold_lat = dur;
	s->tid_bits[slot / 64] |= 1ull << (slot % 64);
}

/* The ops series_add_op() sees are counted in @src (which starts empty). */
void series_track(struct iotap_series *s, const struct iotap_pstats *src);
/*
 * The block @s->src ends: fold what it gained into its bin. Call it right
 * before @src is cleared (pstats_clear): the bins then count from 0.
 */
void series_block_end(struct iotap_series *s);
void series_add_sample(struct iotap_series *s, const struct iotap_trace_rec *r);
/*
 * A series for one time window of a trace, to append to @whole
 * (series_append) once the windows before are: @max_end is the latest
 * end of an op before the window.
 */
void series_init_window(struct iotap_series *s, const struct iotap_series *whole,
			uint64_t max_end);
/*
 * Append window @w (built by series_init_window with @max_end; its
 * records follow @s's) to @s as if @s had been given its records: bins
 * for bins, byte for byte. @w is left as it was made, to be released.
 * Return: 0, -1 when out of memory (s->err).
 */
int series_append(struct iotap_series *s, struct iotap_series *w, uint64_t max_end);
/* Fold the last counts, close the last bin (its thread count); once, after the last record. */
void series_finish(struct iotap_series *s);

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
void series_dev(const struct iotap_series *s, struct bin_dev *out);

/* --- sampled data ops ---------------------------------------------------- */

void points_init(struct iotap_points *s, uint64_t cap);
void points_release(struct iotap_points *s);
void points_add(struct iotap_points *s, const struct iotap_trace_rec *r);

#endif /* IOTAP_STAT_I_H */
