// SPDX-License-Identifier: MIT
/*
 * hist.c - log-linear histogram (struct iotap_hist, iotap_base.h)
 *
 * Values below 64 have a bucket each; above, every power of two is cut
 * into 64 equal sub-buckets (fio's FIO_IO_U_PLAT scheme), so a quantile,
 * reported as the midpoint of its bucket, is off by at most 1/128 of its
 * value and never by more than 1/64. A histogram has 59 groups of 64
 * counters (one per power of two); a group is allocated when a value first
 * falls in it, so the usual few octaves of latencies cost a few KiB, and
 * `used` lets merge and clear touch only those groups; a word after each
 * group's counters marks the ones that may be non-zero, so merging or
 * clearing a histogram of a few hundred samples (a report's block) visits
 * those counters only. A histogram only ever merged into, from few
 * buckets (a report's automatic phase of a block or two, hundreds of which
 * live until the look-back), keeps up to IOTAP_HIST_GROUPS buckets in the
 * group pointers' place instead (sparse): their 520-byte groups were
 * megabytes of fresh pages, each page's first touch a fault (~13 us on
 * a VM). The report's
 * latencies use it; the replayer's lag histogram uses the same bucket
 * scheme at 8 sub-buckets per octave over a flat array in shared memory.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "iotap_base.h"

typedef uint64_t iotap_u64x2 __attribute__((vector_size(16)));

void iotap_hist_range(unsigned int idx, unsigned int bits, uint64_t *lo, uint64_t *hi)
{
	unsigned int group = idx >> bits, sub = idx & ((1u << bits) - 1), shift;

	if (group == 0) {
		*lo = idx;
		*hi = idx + 1ull;
		return;
	}
	shift = group - 1;
	*lo = ((uint64_t)((1u << bits) + sub)) << shift;
	*hi = *lo + (1ull << shift);
	if (*hi < *lo)
		*hi = UINT64_MAX;
}

#define SP_MASK		((1ull << IOTAP_HIST_SP_SHIFT) - 1)
#define SP_COUNT_MAX	(UINT64_MAX >> IOTAP_HIST_SP_SHIFT)

static inline unsigned int sp_bucket(uint64_t e)
{
	return (unsigned int)(e & SP_MASK);
}

static inline uint64_t sp_count(uint64_t e)
{
	return e >> IOTAP_HIST_SP_SHIFT;
}

static uint64_t *group_alloc(struct iotap_hist *h, unsigned int g)
{
	if (!h->grp[g]) {
		h->grp[g] = calloc(IOTAP_HIST_SUB + 1, sizeof(uint64_t));
		if (!h->grp[g])
			return NULL;
	}
	h->grouped = 1;
	h->used |= 1ull << g;
	return h->grp[g];
}

/* A sparse @h's buckets into groups. 0 or -ENOMEM (the buckets not moved are lost). */
static int hist_group_sparse(struct iotap_hist *h)
{
	uint64_t e[IOTAP_HIST_GROUPS];
	unsigned int k, i, n = h->nsp;
	int ret = 0;

	memcpy(e, h->sp, n * sizeof(*e));
	memset(h->sp, 0, sizeof(h->sp));	/* the place of the group pointers */
	h->nsp = 0;
	for (k = 0; k < n; k++) {
		unsigned int b = sp_bucket(e[k]);
		uint64_t *c = group_alloc(h, b / IOTAP_HIST_SUB);

		if (!c) {
			ret = -ENOMEM;
			continue;
		}
		i = b % IOTAP_HIST_SUB;
		c[i] += sp_count(e[k]);
		c[IOTAP_HIST_NZ] |= 1ull << i;
	}
	return ret;
}

uint64_t *iotap_hist_group(struct iotap_hist *h, unsigned int g)
{
	if (h->nsp && hist_group_sparse(h))
		return NULL;
	return group_alloc(h, g);
}

/*
 * @src's non-zero buckets in bucket order into @out (at most
 * IOTAP_HIST_GROUPS, each count below SP_COUNT_MAX): how many, or -1.
 */
static int sp_list(const struct iotap_hist *src, uint64_t *out)
{
	uint64_t used = src->used;
	unsigned int n = 0;

	if (src->nsp) {
		memcpy(out, src->sp, src->nsp * sizeof(*out));
		return (int)src->nsp;
	}
	while (used) {
		unsigned int g = (unsigned int)__builtin_ctzll(used);
		const uint64_t *c = src->grp[g];
		uint64_t nz = c[IOTAP_HIST_NZ];

		used &= used - 1;
		while (nz) {
			unsigned int i = (unsigned int)__builtin_ctzll(nz);

			nz &= nz - 1;
			if (!c[i])
				continue;
			if (n == IOTAP_HIST_GROUPS || c[i] >= SP_COUNT_MAX)
				return -1;
			out[n++] = c[i] << IOTAP_HIST_SP_SHIFT | (g * IOTAP_HIST_SUB + i);
		}
	}
	return (int)n;
}

/*
 * Merge @src's buckets into a histogram never grouped, keeping it sparse:
 * 1 done, 0 it would not fit (nothing changed).
 */
static int sp_merge(struct iotap_hist *dst, const struct iotap_hist *src)
{
	uint64_t s[IOTAP_HIST_GROUPS], out[IOTAP_HIST_GROUPS];
	int ns = sp_list(src, s);
	unsigned int a = 0, b = 0, n = 0;

	if (ns < 0)
		return 0;
	while (a < dst->nsp || b < (unsigned int)ns) {
		uint64_t e;

		if (n == IOTAP_HIST_GROUPS)
			return 0;
		if (b == (unsigned int)ns ||
		    (a < dst->nsp && sp_bucket(dst->sp[a]) < sp_bucket(s[b]))) {
			e = dst->sp[a++];
		} else if (a == dst->nsp || sp_bucket(s[b]) < sp_bucket(dst->sp[a])) {
			e = s[b++];
		} else {
			uint64_t c = sp_count(dst->sp[a]) + sp_count(s[b]);

			if (c >= SP_COUNT_MAX)
				return 0;
			e = c << IOTAP_HIST_SP_SHIFT | sp_bucket(s[b]);
			a++;
			b++;
		}
		out[n++] = e;
	}
	memcpy(dst->sp, out, n * sizeof(*out));
	dst->nsp = n;
	return 1;
}

/* At most a quarter of a group's counters set: visit them one by one. */
static int sparse(uint64_t nz)
{
	return __builtin_popcountll(nz) <= (int)IOTAP_HIST_SUB / 4;
}

int iotap_hist_merge(struct iotap_hist *dst, const struct iotap_hist *src)
{
	uint64_t used = src->used, nz;
	unsigned int g, i;

	if (!src->n)
		return 0;
	if (!dst->n || src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
	dst->n += src->n;
	dst->sum += src->sum;
	if (!dst->grouped) {
		if (sp_merge(dst, src))
			return 0;
		if (dst->nsp && hist_group_sparse(dst))
			return -ENOMEM;
	}
	if (src->nsp) {
		unsigned int k;

		for (k = 0; k < src->nsp; k++) {
			unsigned int b = sp_bucket(src->sp[k]), i = b % IOTAP_HIST_SUB;
			uint64_t *d = group_alloc(dst, b / IOTAP_HIST_SUB);

			if (!d)
				return -ENOMEM;
			d[i] += sp_count(src->sp[k]);
			d[IOTAP_HIST_NZ] |= 1ull << i;
		}
		return 0;
	}
	while (used) {
		uint64_t *d;
		const uint64_t *s;

		g = (unsigned int)__builtin_ctzll(used);
		used &= used - 1;
		d = iotap_hist_group(dst, g);
		if (!d)
			return -ENOMEM;
		s = src->grp[g];
		nz = s[IOTAP_HIST_NZ];
		d[IOTAP_HIST_NZ] |= nz;
		if (sparse(nz)) {
			/* a block's few samples: only the counters they hit */
			while (nz) {
				i = (unsigned int)__builtin_ctzll(nz);
				nz &= nz - 1;
				d[i] += s[i];
			}
			continue;
		}
		/* two u64 a step (SSE2 is in every x86-64; elsewhere the compiler splits it) */
		for (i = 0; i < IOTAP_HIST_SUB; i += 2) {
			iotap_u64x2 a, b;

			memcpy(&a, d + i, sizeof(a));
			memcpy(&b, s + i, sizeof(b));
			a += b;
			memcpy(d + i, &a, sizeof(a));
		}
	}
	return 0;
}

void iotap_hist_clear(struct iotap_hist *h)
{
	uint64_t used = h->used;

	if (h->nsp) {
		/* the place of the group pointers: NULL again */
		memset(h->sp, 0, h->nsp * sizeof(h->sp[0]));
		h->nsp = 0;
	}

	while (used) {
		unsigned int g = (unsigned int)__builtin_ctzll(used);

		uint64_t *c = h->grp[g], nz = c[IOTAP_HIST_NZ];

		used &= used - 1;
		if (!sparse(nz)) {
			memset(c, 0, (IOTAP_HIST_SUB + 1) * sizeof(uint64_t));
			continue;
		}
		while (nz) {
			c[__builtin_ctzll(nz)] = 0;
			nz &= nz - 1;
		}
		c[IOTAP_HIST_NZ] = 0;
	}
	h->used = 0;
	h->n = h->sum = h->min = h->max = 0;
}

void iotap_hist_release(struct iotap_hist *h)
{
	unsigned int g;

	if (!h->nsp)	/* sparse: no group, sp[] holds buckets */
		for (g = 0; g < IOTAP_HIST_GROUPS; g++)
			if (h->grp[g])
				free(h->grp[g]);
	memset(h, 0, sizeof(*h));
}

uint64_t iotap_hist_count(const struct iotap_hist *h, unsigned int idx)
{
	unsigned int g = idx / IOTAP_HIST_SUB;

	if (h->nsp) {
		unsigned int lo = 0, hi = h->nsp;

		while (lo < hi) {
			unsigned int mid = (lo + hi) / 2;

			if (sp_bucket(h->sp[mid]) < idx)
				lo = mid + 1;
			else
				hi = mid;
		}
		return lo < h->nsp && sp_bucket(h->sp[lo]) == idx ? sp_count(h->sp[lo]) : 0;
	}
	if (g >= IOTAP_HIST_GROUPS || !(h->used & (1ull << g)))
		return 0;
	return h->grp[g][idx % IOTAP_HIST_SUB];
}

uint64_t iotap_hist_quantile(const struct iotap_hist *h, double q)
{
	uint64_t want, seen = 0, lo, hi, v;
	uint64_t used = h->used;
	unsigned int g = 0, i = 0;
	int found = 0;

	if (!h->n)
		return 0;
	if (q <= 0)
		return h->min;
	if (q >= 1)
		return h->max;
	/* the smallest value with at least q*n samples at or below it */
	want = (uint64_t)(q * (double)h->n + 0.999999);
	if (want < 1)
		want = 1;
	for (i = 0; i < h->nsp; i++) {
		seen += sp_count(h->sp[i]);
		if (seen >= want) {
			g = sp_bucket(h->sp[i]) / IOTAP_HIST_SUB;
			i = sp_bucket(h->sp[i]) % IOTAP_HIST_SUB;
			found = 1;
			break;
		}
	}
	while (used && !found) {
		g = (unsigned int)__builtin_ctzll(used);
		used &= used - 1;
		for (i = 0; i < IOTAP_HIST_SUB; i++) {
			seen += h->grp[g][i];
			if (seen >= want) {
				found = 1;
				break;
			}
		}
	}
	if (!found)
		return h->max;
	iotap_hist_range(g * IOTAP_HIST_SUB + i, IOTAP_HIST_BITS, &lo, &hi);
	v = lo + (hi - lo) / 2;
	if (v < h->min)
		v = h->min;
	if (v > h->max)
		v = h->max;
	return v;
}
