// SPDX-License-Identifier: MIT
/*
 * stat_phase.c - what happened during one span of time
 *
 * A struct pstats is fed the OP and SAMPLE records of one span in time
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

#include "stat.h"

#define ADD_FIRST	offsetof(struct pstats, ops)
#define ADD_END		offsetof(struct pstats, lat)

typedef uint64_t u64x2 __attribute__((vector_size(16)));

void pstats_init(struct pstats *p, const char *name, unsigned int index, uint64_t t_begin)
{
	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "%s", name ? name : "");
	p->index = index;
	p->t_begin = t_begin;
}

void pstats_release(struct pstats *p)
{
	unsigned int i;

	for (i = 0; i < IOTAP_OP_MAX; i++) {
		if (!p->lat[i])
			continue;
		iotap_hist_release(p->lat[i]);
		free(p->lat[i]);
		p->lat[i] = NULL;
	}
}

void pstats_clear(struct pstats *p)
{
	unsigned int i;

	memset((char *)p + ADD_FIRST, 0, ADD_END - ADD_FIRST);
	for (i = 0; i < IOTAP_OP_MAX; i++)
		if (p->lat[i] && p->lat[i]->n)
			iotap_hist_clear(p->lat[i]);
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

static inline unsigned int size_bucket(uint64_t len)
{
	unsigned int b;

	if (len <= 1)
		return 0;
	b = 64 - (unsigned int)__builtin_clzll(len - 1);	/* ceil(log2(len)) */
	return b < SIZE_BUCKETS ? b : SIZE_BUCKETS - 1;
}

void pstats_add_op(struct pstats *p, const struct iotap_trace_rec *r, int is_seek, int64_t dist)
{
	unsigned int op = r->op < IOTAP_OP_MAX ? r->op : IOTAP_OP_UNKNOWN;
	/* nobody waits for a FORGET (it has no reply): it ends where it starts */
	uint64_t end = r->time_ns + (op == IOTAP_OP_FORGET ? 0 : r->dur_ns);
	unsigned int slot = tid_slot(r->tid);
	struct dir_stats *d = NULL;

	if (!p->ops || r->time_ns < p->first_op)
		p->first_op = r->time_ns;
	if (end > p->last_end)
		p->last_end = end;
	p->ops++;
	p->op_count[op]++;
	p->busy_ns += r->dur_ns;
	p->tid_bits[slot / 64] |= 1ull << (slot % 64);
	if (r->result < 0)
		p->op_errors[op]++;
	else if (op == IOTAP_OP_GETATTR && S_ISREG(r->mode))
		p->stat_files++;
	if (op == IOTAP_OP_FSYNC || op == IOTAP_OP_FSYNCDIR)
		p->ends_sync = 1;
	else if (op != IOTAP_OP_FLUSH && op != IOTAP_OP_RELEASE && op != IOTAP_OP_FORGET)
		p->ends_sync = 0;
	if (op == IOTAP_OP_READ) {
		d = &p->rd;
	} else if (op == IOTAP_OP_WRITE) {
		d = &p->wr;
		/* FUSE sends writeback (writepage) requests with pid 0 */
		if (!r->pid)
			p->wb_writes++;
	}
	if (d) {
		unsigned int sb = size_bucket(r->length);

		d->ops++;
		if (r->result > 0)
			d->bytes += (uint64_t)r->result;
		else if (r->result < 0)
			d->errors++;
		d->size_hist[sb]++;
		p->data_tid_bits[slot / 64] |= 1ull << (slot % 64);
		d->size_bytes[sb] += r->length;
		if (r->length == 1ull << sb)
			d->size_top[sb]++;
		p->data_ops++;
		if (is_seek) {
			uint64_t a = dist < 0 ? (uint64_t)-dist : (uint64_t)dist;
			unsigned int b = a ? 64 - (unsigned int)__builtin_clzll(a) : 0;

			p->seeks++;
			d->seeks++;
			p->seek_hist[b < SEEK_BUCKETS ? b : SEEK_BUCKETS - 1]++;
			if (dist < 0) {
				p->seek_back++;
				if (op == IOTAP_OP_WRITE && a == r->length)
					p->rewrites++;
			}
		}
	} else if (op == IOTAP_OP_FSYNC || op == IOTAP_OP_FSYNCDIR) {
		p->fsyncs++;
	}
	if (__builtin_expect(!p->lat[op], 0)) {
		p->lat[op] = calloc(1, sizeof(*p->lat[op]));
		if (!p->lat[op])
			return;
	}
	iotap_hist_add(p->lat[op], r->dur_ns);
}

void pstats_add_sample(struct pstats *p, const struct iotap_trace_rec *r)
{
	struct sample_pt *s = p->smp_first.valid ? &p->smp_last : &p->smp_first;

	s->valid = 1;
	s->t_ns = r->time_ns;
	s->s = r->sample;
}

int pstats_merge(struct pstats *dst, const struct pstats *src)
{
	const uint64_t *s = (const uint64_t *)((const char *)src + ADD_FIRST);
	uint64_t *d = (uint64_t *)((char *)dst + ADD_FIRST);
	size_t i, n = (ADD_END - ADD_FIRST) / sizeof(uint64_t);
	uint64_t mx = dst->max_inflight > src->max_inflight ? dst->max_inflight : src->max_inflight;
	int ret = 0;

	_Static_assert((ADD_END - ADD_FIRST) % sizeof(uint64_t) == 0, "additive part is u64s");
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
	/* two u64 a step, an odd last one alone */
	for (i = 0; i + 1 < n; i += 2) {
		u64x2 a, b;

		memcpy(&a, d + i, sizeof(a));
		memcpy(&b, s + i, sizeof(b));
		a += b;
		memcpy(d + i, &a, sizeof(a));
	}
	for (; i < n; i++)
		d[i] += s[i];
	/* the non-sums inside the additive part: undo the sum, then max / OR */
	dst->max_inflight = mx;
	for (i = 0; i < TID_BITS / 64; i++) {
		dst->tid_bits[i] = (dst->tid_bits[i] - src->tid_bits[i]) | src->tid_bits[i];
		dst->data_tid_bits[i] = (dst->data_tid_bits[i] - src->data_tid_bits[i]) |
					src->data_tid_bits[i];
	}
	for (i = 0; i < IOTAP_OP_MAX; i++) {
		if (!src->lat[i] || !src->lat[i]->n)
			continue;
		if (!dst->lat[i]) {
			dst->lat[i] = calloc(1, sizeof(*dst->lat[i]));
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
		const struct sample_pt *last =
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

double pstats_duration_s(const struct pstats *p)
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

	for (i = 0; i < TID_BITS / 64; i++)
		set += (unsigned int)__builtin_popcountll(bits[i]);
	if (set < 64)
		return set;	/* neighbouring ids never share a slot: exact */
	/* linear counting estimate */
	zero = (double)(TID_BITS - set) / TID_BITS;
	if (zero <= 0)
		return TID_BITS * 8;
	return (unsigned int)(-(double)TID_BITS * log(zero) + 0.5);
}

unsigned int pstats_threads(const struct pstats *p)
{
	return sketch_count(p->tid_bits);
}

unsigned int pstats_data_threads(const struct pstats *p)
{
	return sketch_count(p->data_tid_bits);
}

/*
 * A bucket's mean says "1020k" for a run of 1 MiB writes with a few short
 * ones at the end; when most of the bucket is exactly its upper bound (the
 * usual power-of-two I/O size), name that instead.
 */
uint64_t dir_bucket_size(const struct dir_stats *d, unsigned int i)
{
	if (!d->size_hist[i])
		return 0;
	if (2 * d->size_top[i] >= d->size_hist[i])
		return 1ull << i;
	return (d->size_bytes[i] + d->size_hist[i] / 2) / d->size_hist[i];
}

uint64_t dir_typical_size(const struct dir_stats *d)
{
	unsigned int i, best = 0;

	for (i = 1; i < SIZE_BUCKETS; i++)
		if (d->size_hist[i] > d->size_hist[best])
			best = i;
	return dir_bucket_size(d, best);
}
