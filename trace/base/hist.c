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
 * those counters only. The report's
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

uint64_t *iotap_hist_group(struct iotap_hist *h, unsigned int g)
{
	if (!h->grp[g]) {
		h->grp[g] = calloc(IOTAP_HIST_SUB + 1, sizeof(uint64_t));
		if (!h->grp[g])
			return NULL;
	}
	h->used |= 1ull << g;
	return h->grp[g];
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

	for (g = 0; g < IOTAP_HIST_GROUPS; g++)
		if (h->grp[g])
			free(h->grp[g]);
	memset(h, 0, sizeof(*h));
}

uint64_t iotap_hist_count(const struct iotap_hist *h, unsigned int idx)
{
	unsigned int g = idx / IOTAP_HIST_SUB;

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
