// SPDX-License-Identifier: MIT
/*
 * parquet_enc.c - the value encodings of parquet.c's pages
 * (apache/parquet-format Encodings.md)
 *
 *   - the RLE / bit-packed hybrid: definition levels and dictionary
 *     indices; runs of 8 or more equal values as RLE, the rest bit-packed
 *     in groups of 8;
 *   - DELTA_BINARY_PACKED: the integers; blocks of 128 deltas in 4
 *     miniblocks of 32, each bit-packed at its own width above the block's
 *     smallest delta, the page's min and max taken in the same pass.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "parquet_i.h"

/* --- RLE / bit-packed hybrid (Encodings.md) ------------------------------ */

/*
 * Bit-pack @n values of @w bits, LSB first; @n a multiple of 8, so the
 * output is whole bytes. Whole 64-bit words are stored as they fill; the
 * caller reserves n * w / 8 + 8 bytes.
 */
static void bitpack(struct bytes *b, const uint64_t *v, size_t n, unsigned int w)
{
	uint64_t acc = 0;
	unsigned int bits = 0;
	size_t i;

	if (!w)
		return;
	if (w == 64) {
		memcpy(b->p + b->len, v, n * 8);
		b->len += n * 8;
		return;
	}
	for (i = 0; i < n; i++) {
		acc |= v[i] << bits;
		bits += w;
		if (bits >= 64) {
			memcpy(b->p + b->len, &acc, 8);
			b->len += 8;
			bits -= 64;
			/* the bits of v[i] that did not fit (none when bits is 0) */
			acc = bits ? v[i] >> (w - bits) : 0;
		}
	}
	/* the last partial word, little-endian: its whole bytes */
	memcpy(b->p + b->len, &acc, 8);
	b->len += (bits + 7) / 8;
}

/*
 * @n values of @w bits (w <= 32) as RLE runs where 8 or more repeat,
 * bit-packed groups of 8 elsewhere (the last group padded with zeros).
 */
int pq_rle_hybrid(struct bytes *b, const uint32_t *v, size_t n, unsigned int w)
{
	size_t i = 0, bw = (w + 7) / 8;
	uint64_t grp[8];

	if (by_reserve(b, n * 5 / 4 + 64 + n * w / 8))
		return -ENOMEM;
	while (i < n) {
		size_t run = 1, end, k;

		while (i + run < n && v[i + run] == v[i])
			run++;
		if (run >= 8) {
			by_varint(b, (uint64_t)run << 1);
			memcpy(b->p + b->len, &v[i], bw);	/* little-endian, bw bytes */
			b->len += bw;
			i += run;
			continue;
		}
		/* bit-packed groups until a run of 8 starts at a group boundary */
		end = i;
		do {
			end += 8;
			run = 0;
			while (end + run < n && v[end + run] == v[end] && run < 8)
				run++;
		} while (end < n && run < 8);
		by_varint(b, (uint64_t)((end - i) / 8) << 1 | 1);
		for (; i < end; i += 8) {
			for (k = 0; k < 8; k++)
				grp[k] = i + k < n ? v[i + k] : 0;
			bitpack(b, grp, 8, w);
		}
	}
	return 0;
}

/* --- DELTA_BINARY_PACKED (Encodings.md) ------------------------------------ */

#define DBP_BLOCK	128
#define DBP_MINI	4
#define DBP_MINI_N	(DBP_BLOCK / DBP_MINI)

/*
 * @n values; their smallest and largest into @vmin and @vmax (the chunk's
 * statistics, taken in the same pass), untouched when @n is 0.
 */
int pq_delta_pack(struct bytes *b, const int64_t *v, size_t n, int64_t *vmin, int64_t *vmax)
{
	uint64_t d[DBP_BLOCK];
	int64_t mn, mx;
	size_t i, k, j;

	if (by_reserve(b, 32 + n * 9 + (n / DBP_BLOCK + 1) * (10 + DBP_MINI)))
		return -ENOMEM;
	by_varint(b, DBP_BLOCK);
	by_varint(b, DBP_MINI);
	by_varint(b, n);
	by_varint(b, zigzag(n ? v[0] : 0));
	if (!n)
		return 0;
	mn = mx = v[0];
	for (i = 1; i < n; i += DBP_BLOCK) {
		size_t m = n - i < DBP_BLOCK ? n - i : DBP_BLOCK;
		unsigned int nmini = (unsigned int)((m + DBP_MINI_N - 1) / DBP_MINI_N);
		uint8_t widths[DBP_MINI] = { 0 };
		int64_t mind = INT64_MAX;

		for (k = 0; k < m; k++) {
			int64_t x = v[i + k];
			int64_t dk = (int64_t)((uint64_t)x - (uint64_t)v[i + k - 1]);

			mind = dk < mind ? dk : mind;
			mn = x < mn ? x : mn;
			mx = x > mx ? x : mx;
			d[k] = (uint64_t)dk;
		}
		for (k = m; k < (size_t)nmini * DBP_MINI_N; k++)
			d[k] = (uint64_t)mind;		/* the last miniblock's padding: 0 below */
		for (k = 0; k < nmini; k++) {
			uint64_t *dm = &d[k * DBP_MINI_N], or = 0;

			for (j = 0; j < DBP_MINI_N; j++) {
				dm[j] -= (uint64_t)mind;
				or |= dm[j];
			}
			widths[k] = (uint8_t)pq_width(or);
		}
		by_varint(b, zigzag(mind));
		memcpy(b->p + b->len, widths, DBP_MINI);
		b->len += DBP_MINI;
		for (k = 0; k < nmini; k++)
			bitpack(b, &d[k * DBP_MINI_N], DBP_MINI_N, widths[k]);
	}
	*vmin = mn;
	*vmax = mx;
	return 0;
}
