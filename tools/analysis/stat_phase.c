// SPDX-License-Identifier: MIT
/*
 * stat_phase.c - what happened during one span of time
 *
 * A struct iotap_pstats is fed the OP and SAMPLE records of one span in time
 * order and keeps only counters and histograms, so a report streams a
 * trace of any length in bounded memory. Spans merge exactly (counters
 * add, histograms add, the thread sketch ORs), which is how a report
 * builds phases out of blocks it has already measured.
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "stat_i.h"

#define ADD_FIRST	offsetof(struct iotap_pstats, ops)
#define ADD_END		offsetof(struct iotap_pstats, m_size)

void pstats_init(struct iotap_pstats *p, const char *name, unsigned int index, uint64_t t_begin)
{
	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "%s", name ? name : "");
	p->index = index;
	p->t_begin = t_begin;
}

void pstats_release(struct iotap_pstats *p)
{
	unsigned int i;

	for (i = 0; i < IOTAP_OP_MAX; i++) {
		if (!p->lat[i])
			continue;
		iotap_hist_delete(p->lat[i]);
		p->lat[i] = NULL;
	}
}

/* The scalars of the additive part, each once: merge adds them, clear zeroes them. */
#define PSTATS_SUMS(X)								\
	X(ops) X(rd.ops) X(rd.bytes) X(rd.errors) X(rd.seeks)			\
	X(wr.ops) X(wr.bytes) X(wr.errors) X(wr.seeks)				\
	X(data_ops) X(seeks) X(rewrites) X(seek_back) X(fsyncs) X(stat_files)	\
	X(wb_writes) X(busy_ns) X(lost)

#define PSTATS_ARRAY_BYTES						\
	(sizeof(((struct iotap_pstats *)0)->op_count) * 2 +			\
	 sizeof(((struct iotap_pstats *)0)->rd.size_hist) * (6 + 4 * IOTAP_SIZE_OTHERS) +			\
	 sizeof(((struct iotap_pstats *)0)->seek_hist) +			\
	 sizeof(((struct iotap_pstats *)0)->tid_bits) * 2)
#define PSTATS_COUNT_(f) + 1
/* every u64 of the additive part is a listed scalar, max_inflight or a masked array */
_Static_assert(ADD_END - ADD_FIRST ==
	       (0 PSTATS_SUMS(PSTATS_COUNT_) + 1) * sizeof(uint64_t) + PSTATS_ARRAY_BYTES,
	       "a field was added to struct iotap_pstats' additive part: list it in PSTATS_SUMS");

static void dir_clear(struct iotap_dir_stats *d, uint64_t m)
{
	while (m) {
		unsigned int i = (unsigned int)__builtin_ctzll(m);

		m &= m - 1;
		d->size_hist[i] = d->size_bytes[i] = d->size_top[i] = 0;
		memset(d->size_oth[i], 0, sizeof(d->size_oth[i]));
		memset(d->size_oth_n[i], 0, sizeof(d->size_oth_n[i]));
	}
}

void pstats_clear(struct iotap_pstats *p)
{
	uint64_t m;
	unsigned int i;

	/* the arrays: only the entries the masks (or op_count) name can be non-zero */
	for (i = 0; i < IOTAP_OP_MAX; i++) {
		if (!p->op_count[i])
			continue;
		p->op_count[i] = p->op_errors[i] = 0;
		if (p->lat[i] && p->lat[i]->n)
			iotap_hist_clear(p->lat[i]);
	}
	dir_clear(&p->rd, p->m_size[0]);
	dir_clear(&p->wr, p->m_size[1]);
	for (m = p->m_seek; m; m &= m - 1)
		p->seek_hist[__builtin_ctzll(m)] = 0;
	for (m = p->m_tid; m; m &= m - 1) {
		i = (unsigned int)__builtin_ctzll(m);
		p->tid_bits[i] = p->data_tid_bits[i] = 0;
	}
	p->m_size[0] = p->m_size[1] = p->m_seek = p->m_tid = 0;
#define PSTATS_ZERO_(f) p->f = 0;
	PSTATS_SUMS(PSTATS_ZERO_)
#undef PSTATS_ZERO_
	p->max_inflight = 0;
	p->t_begin = p->t_end = p->first_op = p->last_end = p->ord_first = 0;
	p->smp_first.valid = p->smp_last.valid = 0;
	p->has_cpu_mark = 0;
	p->gap_before = 0;
	p->blocks = 0;
	p->ends_sync = 0;
}

/* Metadata ops: everything that is not data, fsync, open/close bookkeeping. */
int pstats_is_meta_op(unsigned int op)
{
	switch (op) {
	case IOTAP_OP_READ:
	case IOTAP_OP_WRITE:
	case IOTAP_OP_FSYNC:
	case IOTAP_OP_FSYNCDIR:
		return 0;
	default:
		return op < IOTAP_OP_MAX;
	}
}

struct iotap_hist *pstats_lat_alloc(struct iotap_pstats *p, unsigned int op)
{
	p->lat[op] = iotap_hist_new(p->pool);
	return p->lat[op];
}

void pstats_add_sample(struct iotap_pstats *p, const struct iotap_trace_rec *r)
{
	struct iotap_sample_pt *s = p->smp_first.valid ? &p->smp_last : &p->smp_first;

	s->valid = 1;
	s->t_ns = r->time_ns;
	s->s = r->sample;
}

static void dir_merge(struct iotap_dir_stats *d, const struct iotap_dir_stats *s, uint64_t m)
{
	unsigned int j;

	while (m) {
		unsigned int i = (unsigned int)__builtin_ctzll(m);

		m &= m - 1;
		d->size_hist[i] += s->size_hist[i];
		d->size_bytes[i] += s->size_bytes[i];
		d->size_top[i] += s->size_top[i];
		/* a size with no slot left makes the bucket a range (the counts fall short) */
		for (j = 0; j < IOTAP_SIZE_OTHERS && s->size_oth_n[i][j]; j++)
			dir_other_size(d, i, s->size_oth[i][j], s->size_oth_n[i][j]);
	}
}

int pstats_merge(struct iotap_pstats *dst, const struct iotap_pstats *src)
{
	uint64_t m;
	unsigned int i;
	int ret = 0;

	if (!src->ops && !src->lost && !src->smp_first.valid)
		return 0;
	if (src->ops) {
		if (!dst->ops || src->first_op < dst->first_op)
			dst->first_op = src->first_op;
		if (src->last_end > dst->last_end)
			dst->last_end = src->last_end;
		if (!dst->ops || src->ord_first < dst->ord_first)
			dst->ord_first = src->ord_first;
		dst->ends_sync = src->ends_sync;	/* @src comes later */
	}
#define PSTATS_ADD_(f) dst->f += src->f;
	PSTATS_SUMS(PSTATS_ADD_)
#undef PSTATS_ADD_
	if (src->max_inflight > dst->max_inflight)
		dst->max_inflight = src->max_inflight;
	/* the arrays: only the entries @src's masks name */
	dir_merge(&dst->rd, &src->rd, src->m_size[0]);
	dir_merge(&dst->wr, &src->wr, src->m_size[1]);
	for (m = src->m_seek; m; m &= m - 1) {
		i = (unsigned int)__builtin_ctzll(m);
		dst->seek_hist[i] += src->seek_hist[i];
	}
	for (m = src->m_tid; m; m &= m - 1) {
		i = (unsigned int)__builtin_ctzll(m);
		dst->tid_bits[i] |= src->tid_bits[i];
		dst->data_tid_bits[i] |= src->data_tid_bits[i];
	}
	dst->m_size[0] |= src->m_size[0];
	dst->m_size[1] |= src->m_size[1];
	dst->m_seek |= src->m_seek;
	dst->m_tid |= src->m_tid;
	for (i = 0; i < IOTAP_OP_MAX; i++) {
		if (!src->op_count[i])
			continue;
		dst->op_count[i] += src->op_count[i];
		dst->op_errors[i] += src->op_errors[i];
		if (!src->lat[i] || !src->lat[i]->n)
			continue;
		if (!dst->lat[i]) {
			dst->lat[i] = iotap_hist_new(dst->pool);
			if (!dst->lat[i])
				return -ENOMEM;
		}
		if (iotap_hist_merge(dst->lat[i], src->lat[i]))
			ret = -ENOMEM;
	}
	/*
	 * samples: keep the earliest first and the latest last (a span that
	 * gets its first sample pair from @src takes both: a total of one
	 * phase lost its CPU and device figures when only the first came)
	 */
	if (src->smp_first.valid) {
		const struct iotap_sample_pt *last =
			src->smp_last.valid ? &src->smp_last : &src->smp_first;

		if (!dst->smp_first.valid)
			dst->smp_first = src->smp_first;
		if (last->t_ns > dst->smp_first.t_ns &&
		    (!dst->smp_last.valid || last->t_ns > dst->smp_last.t_ns))
			dst->smp_last = *last;
	}
	/* marker CPU: the CPU each span's markers account for, summed */
	if (src->has_cpu_mark && src->cpu_mark_end_ns >= src->cpu_mark_begin_ns) {
		if (!dst->has_cpu_mark) {
			dst->has_cpu_mark = 1;
			dst->cpu_mark_begin_ns = src->cpu_mark_begin_ns;
			dst->cpu_mark_end_ns = src->cpu_mark_end_ns;
		} else {
			dst->cpu_mark_end_ns += src->cpu_mark_end_ns - src->cpu_mark_begin_ns;
		}
	}
	return ret;
}

double pstats_duration_s(const struct iotap_pstats *p)
{
	uint64_t b = p->t_begin, e = p->t_end;

	if (e <= b)
		return 0.0;
	return (double)(e - b) / 1e9;
}

static unsigned int sketch_count(const uint64_t *bits)
{
	unsigned int i, set = 0;
	double zero;

	for (i = 0; i < IOTAP_TID_BITS / 64; i++)
		set += (unsigned int)__builtin_popcountll(bits[i]);
	if (set < 64)
		return set;	/* neighbouring ids never share a slot: exact */
	/* linear counting estimate */
	zero = (double)(IOTAP_TID_BITS - set) / IOTAP_TID_BITS;
	if (zero <= 0)
		return IOTAP_TID_BITS * 8;
	return (unsigned int)(-(double)IOTAP_TID_BITS * log(zero) + 0.5);
}

unsigned int pstats_threads(const struct iotap_pstats *p)
{
	return sketch_count(p->tid_bits);
}

unsigned int pstats_data_threads(const struct iotap_pstats *p)
{
	return sketch_count(p->data_tid_bits);
}

/*
 * A bucket's mean says "1020k" for a run of 1 MiB writes with a few short
 * ones at the end; when most of the bucket is exactly its upper bound (the
 * usual power-of-two I/O size), name that instead.
 */
/* Bucket @i's sizes are known exactly: 2^i and at most IOTAP_SIZE_OTHERS others. */
int dir_bucket_exact(const struct iotap_dir_stats *d, unsigned int i)
{
	uint64_t n = d->size_top[i];
	unsigned int j;

	for (j = 0; j < IOTAP_SIZE_OTHERS; j++)
		n += d->size_oth_n[i][j];
	return n == d->size_hist[i];
}

uint64_t dir_bucket_size(const struct iotap_dir_stats *d, unsigned int i)
{
	uint64_t best = 1ull << i, n;
	unsigned int j;

	if (!d->size_hist[i])
		return 0;
	if (dir_bucket_exact(d, i)) {
		for (j = 0, n = d->size_top[i]; j < IOTAP_SIZE_OTHERS; j++) {
			if (d->size_oth_n[i][j] > n) {
				n = d->size_oth_n[i][j];
				best = d->size_oth[i][j];
			}
		}
		return best;
	}
	if (2 * d->size_top[i] >= d->size_hist[i])
		return 1ull << i;
	return (d->size_bytes[i] + d->size_hist[i] / 2) / d->size_hist[i];
}

uint64_t dir_typical_size(const struct iotap_dir_stats *d)
{
	unsigned int i, best = 0;

	for (i = 1; i < IOTAP_SIZE_BUCKETS; i++)
		if (d->size_hist[i] > d->size_hist[best])
			best = i;
	return dir_bucket_size(d, best);
}

uint64_t pstats_typical_size(const struct iotap_pstats *p, int write)
{
	const struct iotap_dir_stats *d = write ? &p->wr : &p->rd;
	unsigned int i, best = 0;
	uint64_t m;

	/* dir_typical_size() over the buckets in use only (the same ties: the lowest) */
	for (m = p->m_size[write] & ~1ull; m; m &= m - 1) {
		i = (unsigned int)__builtin_ctzll(m);
		if (d->size_hist[i] > d->size_hist[best])
			best = i;
	}
	return dir_bucket_size(d, best);
}
