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

/* --- pool --- */

/* A pool block holds a struct iotap_hist or a group, whichever is larger. */
#define GROUP_BYTES	((IOTAP_HIST_SUB + 1) * sizeof(uint64_t))
#define BLOCK_BYTES	((sizeof(struct iotap_hist) > GROUP_BYTES ? sizeof(struct iotap_hist) : \
			  GROUP_BYTES + 7) & ~(size_t)7)
#define SLAB_FIRST	(64u << 10)

/* A slab: this header, then blocks. */
struct pool_slab {
	struct pool_slab *next;		/* older */
	size_t size;			/* iotap_buf_alloc() size */
};
#define SLAB_HEAD	((sizeof(struct pool_slab) + 15) & ~(size_t)15)

void iotap_hist_pool_init(struct iotap_hist_pool *p)
{
	memset(p, 0, sizeof(*p));
}

void iotap_hist_pool_release(struct iotap_hist_pool *p)
{
	struct pool_slab *sl = p->slab, *next;

	for (; sl; sl = next) {
		next = sl->next;
		iotap_buf_free(sl, sl->size);
	}
	memset(p, 0, sizeof(*p));
}

/* A zeroed block of @p, NULL: -ENOMEM. */
static void *pool_get(struct iotap_hist_pool *p)
{
	struct pool_slab *sl = p->slab;
	void *b = p->free;
	size_t size;

	if (b) {
		memcpy(&p->free, b, sizeof(void *));
		memset(b, 0, BLOCK_BYTES);
		return b;
	}
	if (!sl || p->used + BLOCK_BYTES > sl->size) {
		size = sl ? 2u << 20 : SLAB_FIRST;
		sl = iotap_buf_alloc(&size);
		if (!sl)
			return NULL;
		sl->next = p->slab;
		sl->size = size;
		p->slab = sl;
		p->used = SLAB_HEAD;
	}
	/* zeroed here, not by the mapping: a kept buffer (iotap_buf_keep) is not */
	b = (char *)sl + p->used;
	p->used += BLOCK_BYTES;
	memset(b, 0, BLOCK_BYTES);
	return b;
}

static void pool_put(struct iotap_hist_pool *p, void *b)
{
	memcpy(b, &p->free, sizeof(void *));
	p->free = b;
}

struct iotap_hist *iotap_hist_new(struct iotap_hist_pool *p)
{
	struct iotap_hist *h = p ? pool_get(p) : calloc(1, sizeof(*h));

	if (h)
		h->pool = p;
	return h;
}

void iotap_hist_delete(struct iotap_hist *h)
{
	struct iotap_hist_pool *p;

	if (!h)
		return;
	p = h->pool;
	iotap_hist_release(h);
	if (p)
		pool_put(p, h);
	else
		free(h);
}

static uint64_t *group_alloc(struct iotap_hist *h, unsigned int g)
{
	if (!h->grp[g]) {
		h->grp[g] = h->pool ? pool_get(h->pool) :
				      calloc(IOTAP_HIST_SUB + 1, sizeof(uint64_t));
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
	struct iotap_hist_pool *p = h->pool;
	unsigned int g;

	if (!h->nsp)	/* sparse: no group, sp[] holds buckets */
		for (g = 0; g < IOTAP_HIST_GROUPS; g++) {
			if (!h->grp[g])
				continue;
			if (p)
				pool_put(p, h->grp[g]);
			else
				free(h->grp[g]);
		}
	memset(h, 0, sizeof(*h));
	h->pool = p;	/* still its pool's: a released histogram may be used again */
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
	uint64_t want, seen = 0, v;
	uint64_t used = h->used;
	unsigned int g = 0, i = 0;
	int found = 0;

	if (!h->n)
		return 0;
	if (q <= 0)
		return h->min;
	if (q >= 1)
		return h->max;
	want = iotap_hist_rank(h->n, q);
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
	v = iotap_hist_mid(g * IOTAP_HIST_SUB + i, IOTAP_HIST_BITS);
	if (v < h->min)
		v = h->min;
	if (v > h->max)
		v = h->max;
	return v;
}

uint64_t iotap_hist_flat_quantile(const uint64_t *cnt, unsigned int nb, unsigned int bits,
				  double q)
{
	uint64_t n = 0, seen = 0, want;
	unsigned int i;

	for (i = 0; i < nb; i++)
		n += cnt[i];
	if (!n)
		return 0;
	want = iotap_hist_rank(n, q);
	for (i = 0; i < nb; i++) {
		seen += cnt[i];
		if (seen >= want)
			break;
	}
	return iotap_hist_mid(i < nb ? i : nb - 1, bits);
}
