// SPDX-License-Identifier: MIT
/*
 * stat_latency.c - log-linear latency histogram
 *
 * Values below 64 ns have a bucket each; above, every power of two is cut
 * into 64 equal sub-buckets (fio's FIO_IO_U_PLAT scheme), so a quantile,
 * reported as the midpoint of its bucket, is off by at most 1/128 of its
 * value and never by more than 1/64. A histogram has 59 groups of 64
 * counters (one per power of two); a group is allocated when a value first
 * falls in it, so the usual few octaves of latencies cost a few KiB, and
 * `used` lets merge and clear touch only those groups.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stat.h"

void lat_bucket_range(unsigned int idx, uint64_t *lo, uint64_t *hi)
{
	unsigned int group = idx / LAT_SUB, sub = idx % LAT_SUB, shift;

	if (group == 0) {
		*lo = idx;
		*hi = idx + 1ull;
		return;
	}
	shift = group - 1;
	*lo = ((uint64_t)(LAT_SUB + sub)) << shift;
	*hi = *lo + (1ull << shift);
	if (*hi < *lo)
		*hi = UINT64_MAX;
}

uint64_t *lat_hist_group(struct lat_hist *h, unsigned int g)
{
	if (!h->grp[g]) {
		h->grp[g] = calloc(LAT_SUB, sizeof(uint64_t));
		if (!h->grp[g])
			return NULL;
	}
	h->used |= 1ull << g;
	return h->grp[g];
}

int lat_hist_merge(struct lat_hist *dst, const struct lat_hist *src)
{
	uint64_t used = src->used;
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

		g = (unsigned int)__builtin_ctzll(used);
		used &= used - 1;
		d = lat_hist_group(dst, g);
		if (!d)
			return -ENOMEM;
		for (i = 0; i < LAT_SUB; i++)
			d[i] += src->grp[g][i];
	}
	return 0;
}

void lat_hist_clear(struct lat_hist *h)
{
	uint64_t used = h->used;

	while (used) {
		unsigned int g = (unsigned int)__builtin_ctzll(used);

		used &= used - 1;
		memset(h->grp[g], 0, LAT_SUB * sizeof(uint64_t));
	}
	h->used = 0;
	h->n = h->sum = h->min = h->max = 0;
}

void lat_hist_release(struct lat_hist *h)
{
	unsigned int g;

	for (g = 0; g < LAT_GROUPS; g++)
		free(h->grp[g]);
	memset(h, 0, sizeof(*h));
}

uint64_t lat_hist_count(const struct lat_hist *h, unsigned int idx)
{
	unsigned int g = idx / LAT_SUB;

	if (g >= LAT_GROUPS || !(h->used & (1ull << g)))
		return 0;
	return h->grp[g][idx % LAT_SUB];
}

uint64_t lat_hist_quantile(const struct lat_hist *h, double q)
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
		for (i = 0; i < LAT_SUB; i++) {
			seen += h->grp[g][i];
			if (seen >= want) {
				found = 1;
				break;
			}
		}
	}
	if (!found)
		return h->max;
	lat_bucket_range(g * LAT_SUB + i, &lo, &hi);
	v = lo + (hi - lo) / 2;
	if (v < h->min)
		v = h->min;
	if (v > h->max)
		v = h->max;
	return v;
}
