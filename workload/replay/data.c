// SPDX-License-Identifier: MIT
/*
 * data.c - synthetic file content for the initial state and writes
 *
 * A trace has no data, so the replay makes some, of a kind that does not
 * flatter storage that compresses or deduplicates (--data):
 *
 *   random          random bytes; the first 8 bytes of every 4 KiB block
 *                   (aligned to the file offset, as a filesystem block is)
 *                   carry a stamp unique in the run (a bijective mix of a
 *                   per-writer counter), so no two blocks are equal.
 *                   Incompressible, nothing to deduplicate.
 *   zero            zeros (the flattering case, on purpose).
 *   compressible=R  each 4 KiB block is 4096/R random bytes then zeros: a
 *                   compressor gets about R:1; blocks stamped unique.
 *   dedup=R         one 4 KiB block in R is unique (random, stamped), the
 *                   others copies of one of 256 fixed random blocks: about
 *                   R:1 for block-level deduplication.
 *
 * The buffer of a writer is filled once; a write costs one 8-byte store
 * per 4 KiB block (random, compressible) or a 4 KiB copy per block (dedup
 * only), so content never limits the replay rate.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "replay_i.h"

#define BLK		4096u
#define DUP_BLOCKS	256u

static unsigned char *dup_pool;		/* DUP_BLOCKS blocks, made once */
static pthread_once_t dup_once = PTHREAD_ONCE_INIT;

static inline uint64_t xs_next(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dull;
}

/* A bijection of 64-bit values (splitmix64's finaliser): unique stamps that look random. */
static inline uint64_t stamp_next(struct rp_wbuf *b)
{
	uint64_t z = ++b->stamp;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void fill_random(unsigned char *p, size_t len, uint64_t *s)
{
	size_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		uint64_t v = xs_next(s);

		memcpy(p + i, &v, 8);
	}
	for (; i < len; i++)
		p[i] = (unsigned char)xs_next(s);
}

static void dup_pool_make(void)
{
	uint64_t s = 0x9e3779b97f4a7c15ull;

	dup_pool = aligned_alloc(BLK, (size_t)DUP_BLOCKS * BLK);
	if (dup_pool)
		fill_random(dup_pool, (size_t)DUP_BLOCKS * BLK, &s);
}

/* Lay the mode's pattern over @p (buffer positions, not file offsets). */
static void fill_pattern(const struct rp_data *d, struct rp_wbuf *b, unsigned char *p,
			 size_t len)
{
	size_t i, keep;

	switch (d->mode) {
	case IOTAP_REPLAY_DATA_ZERO:
		memset(p, 0, len);
		break;
	case IOTAP_REPLAY_DATA_COMPRESSIBLE:
		keep = (size_t)((double)BLK / (d->ratio >= 1 ? d->ratio : 1));
		if (keep < 16)
			keep = 16;
		for (i = 0; i < len; i += BLK) {
			size_t n = len - i < BLK ? len - i : BLK;

			fill_random(p + i, n < keep ? n : keep, &b->rng);
			if (n > keep)
				memset(p + i + keep, 0, n - keep);
		}
		break;
	default:
		fill_random(p, len, &b->rng);
		break;
	}
}

static int grow(const struct rp_data *d, struct rp_wbuf *b, size_t len)
{
	unsigned char *n;
	size_t cap = b->cap ? b->cap : 64u << 10;

	while (cap < len)
		cap *= 2;
	n = aligned_alloc(BLK, cap);
	if (!n)
		return -ENOMEM;
	if (b->buf)
		memcpy(n, b->buf, b->cap);
	fill_pattern(d, b, n + b->cap, cap - b->cap);
	free(b->buf);
	b->buf = n;
	b->cap = cap;
	return 0;
}

int rp_wbuf_init(struct rp_wbuf *b, const struct rp_data *d, uint64_t seed, size_t cap)
{
	memset(b, 0, sizeof(*b));
	b->rng = seed * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull;
	if (!b->rng)
		b->rng = 1;
	b->stamp = seed << 40;
	if (d->mode == IOTAP_REPLAY_DATA_DEDUP) {
		pthread_once(&dup_once, dup_pool_make);
		if (!dup_pool)
			return -ENOMEM;
	}
	return grow(d, b, cap ? cap : BLK);
}

void rp_wbuf_release(struct rp_wbuf *b)
{
	free(b->buf);
	memset(b, 0, sizeof(*b));
}

const void *rp_data_fill(const struct rp_data *d, struct rp_wbuf *b, uint64_t off, size_t len)
{
	size_t first, i;

	if (len > b->cap && grow(d, b, len))
		return NULL;
	if (d->mode == IOTAP_REPLAY_DATA_ZERO)
		return b->buf;
	/* buffer position of the first block boundary of the file */
	first = (size_t)((BLK - off % BLK) % BLK);
	if (d->mode == IOTAP_REPLAY_DATA_DEDUP) {
		double p_unique = d->ratio > 1 ? 1.0 / d->ratio : 1.0;

		for (i = first; i + BLK <= len; i += BLK) {
			uint64_t v = xs_next(&b->rng);

			if ((double)(v >> 11) * 0x1.0p-53 < p_unique) {
				uint64_t st = stamp_next(b);

				fill_random(b->buf + i, BLK, &b->rng);
				memcpy(b->buf + i, &st, 8);
			} else {
				memcpy(b->buf + i, dup_pool + (v % DUP_BLOCKS) * BLK, BLK);
			}
		}
		return b->buf;
	}
	for (i = first; i + 8 <= len; i += BLK) {
		uint64_t st = stamp_next(b);

		memcpy(b->buf + i, &st, 8);
	}
	return b->buf;
}
