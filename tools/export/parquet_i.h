/* SPDX-License-Identifier: MIT */
/*
 * parquet_i.h - what parquet.c (columns, pages, row groups), parquet_enc.c
 * (the value encodings) and parquet_meta.c (the Thrift structures: page
 * headers, the footer) share
 */
#ifndef IOTAP_PARQUET_I_H
#define IOTAP_PARQUET_I_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parquet.h"

/* --- growable bytes --------------------------------------------------------- */

struct bytes {
	uint8_t *p;
	size_t len, cap;
};

static inline int by_reserve(struct bytes *b, size_t n)
{
	size_t c = b->cap ? b->cap : 4096;
	uint8_t *np;

	if (b->len + n <= b->cap)
		return 0;
	while (c < b->len + n)
		c *= 2;
	np = realloc(b->p, c);
	if (!np)
		return -ENOMEM;
	b->p = np;
	b->cap = c;
	return 0;
}

/* Callers reserve first. */
static inline void by_put(struct bytes *b, const void *p, size_t n)
{
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

static inline void by_u8(struct bytes *b, uint8_t v)
{
	b->p[b->len++] = v;
}

static inline void by_varint(struct bytes *b, uint64_t v)
{
	while (v >= 0x80) {
		b->p[b->len++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	b->p[b->len++] = (uint8_t)v;
}

static inline uint64_t zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline void by_free(struct bytes *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}

/* What the footer says of one column chunk. */
struct chunk_meta {
	int64_t dict_off, data_off, comp, uncomp;
	uint64_t values, nulls;
	bool has_dict, has_minmax;
	struct bytes min, max;
};

/* Bits to hold @max. */
static inline unsigned int pq_width(uint64_t max)
{
	return max ? 64 - (unsigned int)__builtin_clzll(max) : 0;
}

/* @n values of @w bits (w <= 32) in the RLE / bit-packed hybrid onto @b. 0 or -ENOMEM. */
int pq_rle_hybrid(struct bytes *b, const uint32_t *v, size_t n, unsigned int w);
/*
 * @n values DELTA_BINARY_PACKED onto @b; their smallest and largest into
 * @vmin and @vmax, untouched when @n is 0. 0 or -ENOMEM.
 */
int pq_delta_pack(struct bytes *b, const int64_t *v, size_t n, int64_t *vmin, int64_t *vmax);

/*
 * pq_page_header - append a page's Thrift PageHeader to @b
 * @dict:  a dictionary page of @n entries (PLAIN); else a data page of
 *         @n values (nulls included) in encoding @enc
 * Return: 0 or -errno.
 */
int pq_page_header(struct bytes *b, bool dict, uint32_t n, int enc, size_t raw, size_t comp);

/*
 * pq_footer - append the file's Thrift FileMetaData to @b: the schema
 * (@cols), @rows, the row groups (@group_rows[g] rows each, @meta[g *
 * ncols + i] for column i's chunk), @kv and @created_by. Return: 0 or -errno.
 */
int pq_footer(struct bytes *b, const struct pq_col *cols, unsigned int ncols, uint64_t rows,
	      const struct chunk_meta *meta, const uint64_t *group_rows, unsigned int ngroups,
	      const struct pq_kv *kv, unsigned int nkv, const char *created_by);

#endif /* IOTAP_PARQUET_I_H */
