// SPDX-License-Identifier: MIT
/*
 * reader_sort.c - a decoded batch's records into merge order
 *
 * Each batch's records are sorted by (start, position) -- often they
 * already are; a capture's chunk is dozens of interleaved sorted runs (one
 * per recording thread buffer), which rd_batch_sort() orders on packed
 * 64-bit keys: bucket + insertion sort, a natural merge for few runs, LSD
 * radix when the buckets crowd. The merge of the batches is
 * reader_deliver.c's.
 */
#include <stdint.h>
#include <string.h>

#include "iotap_base.h"
#include "trace_i.h"
#include "reader_i.h"

/* --- ordering ----------------------------------------------------------- */

static inline int key_lt(const struct rd_key *a, const struct rd_key *b)
{
	return a->time < b->time || (a->time == b->time && a->idx < b->idx);
}

static uint32_t run_end(const struct rd_key *a, uint32_t i, uint32_t n)
{
	for (i++; i < n && !key_lt(&a[i], &a[i - 1]); i++)
		;
	return i;
}

/*
 * A packed key: the start less the chunk's earliest, above the record's
 * index (PK_IDX_BITS: a chunk holds at most CHUNK_REC_MAX records). One
 * 64-bit compare orders (start, position), and a merge moves half the
 * bytes of a struct rd_key. Used when the chunk's starts span less than
 * 2^44 ns (4.8 hours), which every chunk a recorder writes does.
 */
_Static_assert(CHUNK_REC_MAX <= 1u << PK_IDX_BITS, "index fits a packed key");

/*
 * Natural merge sort of packed keys (all distinct: the index is in them).
 * @run holds the @nrun run starts and n after them (n + 1 entries at
 * most); each pass merges neighbouring pairs and keeps every other start.
 * Returns the array that holds the result, @src or @dst.
 */
static uint64_t *pk_merge(uint64_t *src, uint64_t *dst, uint32_t *run, uint32_t nrun,
			  uint32_t n)
{
	uint32_t i, r;
	uint64_t *t;

	while (nrun > 1) {
		for (r = 0; r + 1 < nrun; r += 2) {
			uint32_t x = run[r], m = run[r + 1], e = run[r + 2], y = m, o = x;

			/* branchless: which side wins is data, not a pattern */
			while (x < m && y < e) {
				uint64_t a = src[x], c = src[y];
				int left = a < c;

				dst[o++] = left ? a : c;
				x += left;
				y += !left;
			}
			memcpy(dst + o, src + x, (m - x) * sizeof(*src));
			o += m - x;
			memcpy(dst + o, src + y, (e - y) * sizeof(*src));
		}
		if (r < nrun)	/* an odd run out: copied as it is */
			memcpy(dst + run[r], src + run[r], (n - run[r]) * sizeof(*src));
		for (i = 0; 2 * i < nrun; i++)
			run[i] = run[2 * i];
		nrun = (nrun + 1) / 2;
		run[nrun] = n;
		t = src;
		src = dst;
		dst = t;
	}
	return src;
}

#define RADIX_BITS	11	/* widest digit: 2^11 counters a pass */
#define RADIX_PASSES	((64 - PK_IDX_BITS + RADIX_BITS - 1) / RADIX_BITS)

/*
 * Build the packed keys of @b's records into @k and count the digits of
 * @rp radix passes of @d bits each (counters of pass p at @cnt + (p << d)).
 * Inlined with a constant @rp into each case of pk_build(), its counting
 * loop unrolled: one loop per pass count.
 */
static inline __attribute__((always_inline)) void
pk_build_rp(const struct rd_batch *b, uint64_t *k, uint32_t n, const unsigned int rp,
	    unsigned int d, uint32_t *cnt)
{
	const unsigned char *rec = b->recs + offsetof(struct iotap_trace_rec, time_ns);
	uint64_t m = (1u << d) - 1, base = b->tmin, t;
	unsigned int p;
	uint32_t i;

	for (i = 0; i < n; i++, rec += REC_STRIDE) {
		memcpy(&t, rec, sizeof(t));
		t -= base;
		k[i] = t << PK_IDX_BITS | i;
#pragma GCC unroll 4
		for (p = 0; p < rp; p++)
			cnt[(p << d) + ((t >> (p * d)) & m)]++;
	}
}

/* pk_build_rp() for @rp (1 to 4) passes. */
static void pk_build(const struct rd_batch *b, uint64_t *k, uint32_t n, unsigned int rp,
		     unsigned int dbits, uint32_t *cnt)
{
	switch (rp) {
	case 1:
		pk_build_rp(b, k, n, 1, dbits, cnt);
		break;
	case 2:
		pk_build_rp(b, k, n, 2, dbits, cnt);
		break;
	case 3:
		pk_build_rp(b, k, n, 3, dbits, cnt);
		break;
	default:
		pk_build_rp(b, k, n, 4, dbits, cnt);
		break;
	}
}

/*
 * Bucket sort for chunks of many interleaved runs: the keys are built and
 * spread by the top bits of their start over 1 to 2 buckets a key, which
 * leaves records of different runs a few places out of order at most, and
 * an insertion sort finishes. It gives up (returns NULL) when the
 * insertion sort would move more than @budget keys (bursts: many starts in
 * one bucket), so it never costs more than a bounded detour. The counts
 * are b->run's (2 x cap + 1 entries; the merge's run starts otherwise).
 * With at most 8 K buckets (32 KiB on the stack, until session 10), the
 * per-char bonnie++ capture's 17 K-key chunks had two keys a bucket and
 * 45% of its keys moved, most at a mispredicted branch: batch_sort was a
 * sixth of that report's cycles. Now 15% move (its report: -6% CPU).
 */
static uint64_t *pk_bucket(struct rd_batch *b, uint64_t *k, uint64_t *tmp, uint32_t n,
			   unsigned int tbits, uint64_t budget)
{
	const unsigned char *rec = b->recs + offsetof(struct iotap_trace_rec, time_ns);
	unsigned int d = 64 - (unsigned int)__builtin_clzll(n), shift;	/* 2^d <= 2n */
	uint32_t *cnt = b->run, sum = 0, x, i, j;
	uint64_t base = b->tmin, t, moves = 0;

	if (d > tbits)
		d = tbits;
	shift = tbits - d;
	memset(cnt, 0, sizeof(*cnt) << d);
	for (i = 0; i < n; i++, rec += REC_STRIDE) {
		memcpy(&t, rec, sizeof(t));
		t -= base;
		k[i] = t << PK_IDX_BITS | i;
		cnt[t >> shift]++;
	}
	for (i = 0; i < 1u << d; i++) {
		x = cnt[i];
		cnt[i] = sum;
		sum += x;
	}
	for (i = 0; i < n; i++)
		tmp[cnt[k[i] >> (PK_IDX_BITS + shift)]++] = k[i];
	for (i = 1; i < n; i++) {
		uint64_t v = tmp[i];

		if (v > tmp[i - 1])
			continue;
		j = i;
		do {
			tmp[j] = tmp[j - 1];
			j--;
		} while (j && tmp[j - 1] > v);
		tmp[j] = v;
		moves += i - j;
		if (moves > budget)
			return NULL;
	}
	return tmp;
}

/*
 * LSD radix sort of packed keys on their start bits, @rp passes of @dbits
 * whose counts @cnt holds: each pass is stable, and the keys start in
 * index order, so the result is in (start, index) order. A pass whose
 * keys all share the digit is skipped. Returns the array that holds it.
 */
static uint64_t *pk_radix(uint64_t *src, uint64_t *dst, uint32_t n, unsigned int rp,
			  unsigned int dbits, uint32_t *cnt)
{
	uint64_t mask = (1u << dbits) - 1;
	unsigned int p, shift;
	uint64_t *t;
	uint32_t i;

	for (p = 0; p < rp; p++) {
		uint32_t *c = cnt + (p << dbits), sum = 0, x;

		shift = PK_IDX_BITS + p * dbits;
		if (c[(src[0] >> shift) & mask] == n)
			continue;
		for (i = 0; i <= mask; i++) {
			x = c[i];
			c[i] = sum;
			sum += x;
		}
		for (i = 0; i < n; i++)
			dst[c[(src[i] >> shift) & mask]++] = src[i];
		t = src;
		src = dst;
		dst = t;
	}
	return src;
}

/*
 * Natural merge sort: merges neighbouring sorted runs until one is left.
 * The result is in b->keys.
 */
static void batch_sort_wide(struct rd_batch *b)
{
	struct rd_key *src = b->keys, *dst = b->tmp, *t;
	uint32_t n = b->nrec;

	if (run_end(src, 0, n) >= n)
		return;
	for (;;) {
		uint32_t i = 0, runs = 0;

		while (i < n) {
			uint32_t m = run_end(src, i, n), e, x, y, o;

			runs++;
			if (m >= n) {
				memcpy(dst + i, src + i, (n - i) * sizeof(*src));
				break;
			}
			e = run_end(src, m, n);
			for (x = i, y = m, o = i; x < m && y < e;)
				dst[o++] = key_lt(&src[y], &src[x]) ? src[y++] : src[x++];
			memcpy(dst + o, src + x, (m - x) * sizeof(*src));
			o += m - x;
			memcpy(dst + o, src + y, (e - y) * sizeof(*src));
			i = e;
		}
		t = src;
		src = dst;
		dst = t;
		if (runs <= 1)
			break;
	}
	b->keys = src;
	b->tmp = dst;
}

/* Put a batch whose records are not in start order into merge order. */
void rd_batch_sort(struct rd_batch *b)
{
	uint64_t *k = (uint64_t *)b->keys, *res, span;
	uint32_t i, n = b->nrec;
	unsigned int tbits, rp, mp;

	if ((b->tmax - b->tmin) >> (64 - PK_IDX_BITS)) {
		for (i = 0; i < n; i++) {
			b->keys[i].time = brec(b, i)->time_ns;
			b->keys[i].idx = i;
		}
		b->packed = 0;
		batch_sort_wide(b);
		return;
	}
	span = b->tmax - b->tmin;
	tbits = span ? 64 - (unsigned int)__builtin_clzll(span) : 0;
	rp = (tbits + RADIX_BITS - 1) / RADIX_BITS;
	/*
	 * Merging the runs (desc + 1 of them) costs about 11 instructions a
	 * key a pass, log2(runs) passes, after a pass that finds them; radix
	 * about 4 a key a pass to count (with the key building) and 8 to
	 * move, and 3 a counter. (Captures: ~100 runs of ~30 keys over 27
	 * bits: 3 radix passes of 9 bits instead of 7 merges.)
	 */
	mp = 64 - (unsigned int)__builtin_clzll(b->desc);
	/* many runs: bucket and insertion sort, ~40 a key unless it gives up */
	res = NULL;
	if (tbits && 11ull * mp + 14 > 40)
		res = pk_bucket(b, k, (uint64_t *)b->tmp, n, tbits, 8ull * n);
	if (res) {
		;
	} else if (rp && (uint64_t)rp * (12ull * n + (3ull << ((tbits + rp - 1) / rp))) <
		  (uint64_t)mp * 11 * n + 6ull * n) {
		uint32_t cnt[RADIX_PASSES << RADIX_BITS];
		unsigned int dbits = (tbits + rp - 1) / rp;

		memset(cnt, 0, (size_t)(rp << dbits) * sizeof(*cnt));
		pk_build(b, k, n, rp, dbits, cnt);
		res = pk_radix(k, (uint64_t *)b->tmp, n, rp, dbits, cnt);
	} else {
		uint32_t nrun = 0;

		for (i = 0; i < n; i++)
			k[i] = (brec(b, i)->time_ns - b->tmin) << PK_IDX_BITS | i;
		b->run[nrun++] = 0;
		for (i = 1; i < n; i++)
			if (k[i] < k[i - 1])
				b->run[nrun++] = i;
		b->run[nrun] = n;
		res = pk_merge(k, (uint64_t *)b->tmp, b->run, nrun, n);
	}
	memset(res + n, 0, RD_PREFETCH * sizeof(*res));	/* what the fast path prefetches past the end */
	if (res != k) {
		b->tmp = b->keys;
		b->keys = (struct rd_key *)res;
	}
	b->packed = 1;
	b->kbase = b->tmin;
}
