// SPDX-License-Identifier: MIT
/*
 * parquet.c - a streaming Apache Parquet writer for flat tables
 *
 * The file (apache/parquet-format README.md "File Format"):
 *
 *   "PAR1" | row group 0 | row group 1 | ... | footer | footer length (u32 LE) | "PAR1"
 *
 * A row group holds one column chunk per column, one after the other; a
 * chunk is an optional dictionary page and then data pages, each page a
 * Thrift PageHeader followed by its (here ZSTD-compressed) payload. The
 * footer is a Thrift FileMetaData: the schema, every chunk's offsets,
 * sizes, encodings and statistics, and the key/value metadata. Thrift
 * structures use the compact protocol (thrift's
 * doc/specs/thrift-compact-protocol.md): field headers carry the id delta
 * and the type in one byte, integers are zigzag varints.
 *
 * Pages are data page v1: for an optional column the definition levels
 * first (u32 LE length, then the RLE/bit-packed hybrid at bit width 1),
 * then the values of the non-null rows:
 *   - INT64: DELTA_BINARY_PACKED (Encodings.md): blocks of 128 deltas in
 *     4 miniblocks of 32, each bit-packed at its own width above the
 *     block's smallest delta -- times and sequential offsets take a few
 *     bits a row before ZSTD;
 *   - strings: RLE_DICTIONARY: a byte of bit width, then the row group's
 *     dictionary indices in the RLE/bit-packed hybrid; the dictionary is
 *     one PLAIN page at the head of the chunk.
 * Statistics (min_value, max_value, null_count) are those of the whole
 * chunk, in the order TYPE_ORDER (signed integers, unsigned bytes), which
 * column_orders declares.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <zstd.h>

#include "iotap_base.h"
#include "parquet.h"

#define ZSTD_LEVEL	1

/* --- growable bytes --------------------------------------------------------- */

struct bytes {
	uint8_t *p;
	size_t len, cap;
};

static int by_reserve(struct bytes *b, size_t n)
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

static void by_free(struct bytes *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}

/* --- Thrift compact protocol ------------------------------------------------- */

enum { T_TRUE = 1, T_FALSE = 2, T_BYTE = 3, T_I16 = 4, T_I32 = 5, T_I64 = 6, T_BINARY = 8,
       T_LIST = 9, T_STRUCT = 12 };

#define TH_DEPTH 16

/* A Thrift writer over @b; the caller reserves room (th_room) as it goes. */
struct thrift {
	struct bytes *b;
	int16_t last[TH_DEPTH];		/* last field id per open struct */
	unsigned int depth;
	int err;
};

static void th_room(struct thrift *t, size_t n)
{
	if (!t->err && by_reserve(t->b, n + 32))
		t->err = -ENOMEM;
}

static void th_field(struct thrift *t, int16_t id, unsigned int type)
{
	int16_t d = (int16_t)(id - t->last[t->depth]);

	th_room(t, 16);
	if (t->err)
		return;
	if (d > 0 && d <= 15) {
		by_u8(t->b, (uint8_t)(d << 4 | type));
	} else {
		by_u8(t->b, (uint8_t)type);
		by_varint(t->b, zigzag(id));
	}
	t->last[t->depth] = id;
}

static void th_i64(struct thrift *t, int16_t id, int64_t v)
{
	th_field(t, id, T_I64);
	if (!t->err)
		by_varint(t->b, zigzag(v));
}

static void th_i32(struct thrift *t, int16_t id, int32_t v)
{
	th_field(t, id, T_I32);
	if (!t->err)
		by_varint(t->b, zigzag(v));
}

static void th_bool(struct thrift *t, int16_t id, bool v)
{
	th_field(t, id, v ? T_TRUE : T_FALSE);
}

static void th_bin_raw(struct thrift *t, const void *p, size_t n)
{
	th_room(t, n + 10);
	if (t->err)
		return;
	by_varint(t->b, n);
	by_put(t->b, p, n);
}

static void th_bin(struct thrift *t, int16_t id, const void *p, size_t n)
{
	th_field(t, id, T_BINARY);
	th_bin_raw(t, p, n);
}

static void th_str(struct thrift *t, int16_t id, const char *s)
{
	th_bin(t, id, s, strlen(s));
}

static void th_list(struct thrift *t, int16_t id, unsigned int etype, size_t n)
{
	th_field(t, id, T_LIST);
	if (t->err)
		return;
	if (n < 15) {
		by_u8(t->b, (uint8_t)(n << 4 | etype));
	} else {
		by_u8(t->b, (uint8_t)(0xf0 | etype));
		by_varint(t->b, n);
	}
}

/* A struct: as a field (@id > 0) or as a list element (@id 0). */
static void th_begin(struct thrift *t, int16_t id)
{
	if (id)
		th_field(t, id, T_STRUCT);
	if (t->depth + 1 >= TH_DEPTH) {
		t->err = -EINVAL;
		return;
	}
	t->last[++t->depth] = 0;
}

static void th_end(struct thrift *t)
{
	th_room(t, 1);
	if (!t->err)
		by_u8(t->b, 0);		/* stop */
	if (t->depth)
		t->depth--;
}

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

static unsigned int width_of(uint64_t max)
{
	return max ? 64 - (unsigned int)__builtin_clzll(max) : 0;
}

/*
 * @n values of @w bits (w <= 32) as RLE runs where 8 or more repeat,
 * bit-packed groups of 8 elsewhere (the last group padded with zeros).
 */
static int rle_hybrid(struct bytes *b, const uint32_t *v, size_t n, unsigned int w)
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
static int delta_pack(struct bytes *b, const int64_t *v, size_t n, int64_t *vmin, int64_t *vmax)
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
			widths[k] = (uint8_t)width_of(or);
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

/* --- columns ------------------------------------------------------------------ */

/*
 * Keys are small counters (op codes, trace/paths.c's path keys): their
 * low bits index a direct-mapped cache of the row group's recent ones.
 */
#define KEY_SLOTS	1024u

struct kslot {
	uint64_t key;			/* 0: empty */
	uint32_t idx;
};

struct dict {
	struct iotap_map idx;		/* XXH3 of the string -> uint32_t index (+ equals) */
	struct kslot *keys;		/* a caller's key (pq_val.key) -> index, direct-mapped */
	struct bytes plain;		/* the PLAIN dictionary page: u32 LE length, bytes */
	uint32_t *off;			/* each entry's offset in plain */
	uint32_t n, cap;
	uint32_t last_len, last_idx;	/* the last string put: its length, index */
	uint64_t last_key;		/* and its key, 0: none */
};

struct column {
	const struct pq_col *desc;
	int64_t *iv;			/* the page's non-null integer values */
	uint32_t *sv;			/* the page's non-null dictionary indices */
	uint32_t *def;			/* the page's definition levels (optional columns) */
	uint32_t nv;			/* values in the page (rows: pq_writer.prow) */
	struct bytes pages;		/* the chunk's compressed data pages */
	struct dict d;
	int64_t imin, imax;		/* the chunk's statistics */
	bool has_minmax;
	uint64_t nulls, values;		/* in the chunk */
	uint64_t uncompressed;		/* pages' uncompressed size with headers */
	uint32_t npages;
};

/* What the footer says of one column chunk. */
struct chunk_meta {
	int64_t dict_off, data_off, comp, uncomp;
	uint64_t values, nulls;
	bool has_dict, has_minmax;
	struct bytes min, max;
};

struct pq_writer {
	FILE *f;
	const struct pq_col *cols;
	unsigned int ncols;
	const char *created_by;
	struct column *c;
	char *arrays;			/* the columns' page arrays (iv, sv, def) */
	size_t arrays_size;		/* as iotap_buf_alloc() gave it */
	ZSTD_CCtx *zc;
	struct bytes raw, zbuf, hdr;	/* scratch: a page's payload, compressed, header */
	uint64_t off;			/* file offset */
	uint64_t rows, group_rows;
	uint32_t prow;			/* rows in the current page (of every column) */
	struct chunk_meta *meta;	/* [ngroups * ncols] */
	uint64_t *group_nrows;
	unsigned int ngroups, meta_cap;
	int err;
};

static int fwrite_all(struct pq_writer *w, const void *p, size_t n)
{
	if (!n)
		return 0;
	if (fwrite(p, 1, n, w->f) != n)
		return -(errno ? errno : EIO);
	w->off += n;
	return 0;
}

int pq_open(struct pq_writer **out, FILE *f, const struct pq_col *cols, unsigned int ncols,
	    const char *created_by)
{
	struct pq_writer *w = calloc(1, sizeof(*w));
	unsigned int i;
	size_t size;
	char *p;
	int ret = -ENOMEM;

	if (!w)
		return -ENOMEM;
	w->f = f;
	w->cols = cols;
	w->ncols = ncols;
	w->created_by = created_by;
	w->c = calloc(ncols, sizeof(*w->c));
	w->zc = ZSTD_createCCtx();
	if (!w->c || !w->zc)
		goto err;
	/*
	 * The page arrays of every column in one block: one mapping, not
	 * dozens, in huge pages (iotap_buf_alloc): faults cost on these VMs.
	 */
	for (i = 0, size = 0; i < ncols; i++)
		size += PQ_PAGE_ROWS * (cols[i].type == PQ_STRING ? sizeof(uint32_t) : sizeof(int64_t)) +
			(cols[i].optional ? PQ_PAGE_ROWS * sizeof(uint32_t) : 0);
	w->arrays_size = size;
	w->arrays = iotap_buf_alloc(&w->arrays_size);
	if (!w->arrays)
		goto err;
	for (i = 0, p = w->arrays; i < ncols; i++) {
		struct column *c = &w->c[i];

		c->desc = &cols[i];
		if (cols[i].type == PQ_STRING) {
			c->sv = (uint32_t *)p;
			p += PQ_PAGE_ROWS * sizeof(*c->sv);
			iotap_map_init(&c->d.idx, sizeof(uint32_t));
			c->d.keys = calloc(KEY_SLOTS, sizeof(*c->d.keys));
			if (!c->d.keys)
				goto err;
		} else {
			c->iv = (int64_t *)p;
			p += PQ_PAGE_ROWS * sizeof(*c->iv);
		}
		if (cols[i].optional) {
			c->def = (uint32_t *)p;
			p += PQ_PAGE_ROWS * sizeof(*c->def);
		}
	}
	ZSTD_CCtx_setParameter(w->zc, ZSTD_c_compressionLevel, ZSTD_LEVEL);
	ret = fwrite_all(w, "PAR1", 4);
	if (ret)
		goto err;
	*out = w;
	return 0;
err:
	pq_abort(w);
	return ret;
}

/* --- putting values --------------------------------------------------------- */

static int dict_index(struct dict *d, const char *s, uint32_t len, uint32_t *out)
{
	uint64_t h = iotap_hash_bytes(s, len, 0), pos;
	uint32_t *ip, le;
	int ret;

	for (ip = iotap_map_find(&d->idx, h, &pos); ip; ip = iotap_map_find_next(&d->idx, h, &pos)) {
		const uint8_t *e = d->plain.p + d->off[*ip];

		memcpy(&le, e, 4);
		if (le == len && !memcmp(e + 4, s, len)) {
			*out = *ip;
			return 0;
		}
	}
	if (d->n == d->cap) {
		uint32_t nc = d->cap ? d->cap * 2 : 256, *no = realloc(d->off, nc * sizeof(*no));

		if (!no)
			return -ENOMEM;
		d->off = no;
		d->cap = nc;
	}
	ret = by_reserve(&d->plain, (size_t)len + 4);
	if (ret)
		return ret;
	ret = iotap_map_add(&d->idx, h, (void **)&ip);
	if (ret)
		return ret;
	*ip = d->n;
	d->off[d->n] = (uint32_t)d->plain.len;
	le = len;
	by_put(&d->plain, &le, 4);
	by_put(&d->plain, s, len);
	*out = d->n++;
	return 0;
}

/* put_str()'s slow path: a key met lately in this row group, else the string's hash. */
static uint32_t dict_find(struct pq_writer *w, struct dict *d, const char *s, uint32_t len,
			  uint64_t key)
{
	struct kslot *ks = &d->keys[key & (KEY_SLOTS - 1)];
	uint32_t idx;
	int ret;

	d->last_len = len;
	if (key && ks->key == key)
		return ks->idx;
	ret = dict_index(d, s, len, &idx);
	if (!ret && key) {
		ks->key = key;
		ks->idx = idx;
	}
	if (ret) {
		if (!w->err)
			w->err = ret;
		idx = 0;
	}
	return idx;
}

static inline void put_str(struct pq_writer *w, struct column *c, const char *s, uint32_t len,
			   uint64_t key)
{
	struct dict *d = &c->d;
	uint32_t idx;

	/*
	 * The same string as the last row's (the host, a phase, one file's
	 * path): no hash. By key, else by content: a caller's buffer may
	 * hold another string at the same address.
	 */
	if (key ? key == d->last_key
		: d->n && len == d->last_len && !memcmp(s, d->plain.p + d->off[d->last_idx] + 4, len))
		idx = d->last_idx;
	else
		idx = dict_find(w, d, s, len, key);
	d->last_idx = idx;
	d->last_key = key;
	c->sv[c->nv++] = idx;
}

/* --- pages ------------------------------------------------------------------ */

/*
 * Compress w->raw, append header + payload to @dst. @dict_n: a dictionary
 * page of that many entries (else a data page of @nvalues, @enc).
 */
static int emit_page(struct pq_writer *w, struct column *c, struct bytes *dst, int dict,
		     uint32_t n, int enc)
{
	struct thrift t = { .b = &w->hdr };
	size_t bound = ZSTD_compressBound(w->raw.len), z;

	w->zbuf.len = 0;
	if (by_reserve(&w->zbuf, bound))
		return -ENOMEM;
	z = ZSTD_compress2(w->zc, w->zbuf.p, bound, w->raw.p, w->raw.len);
	if (ZSTD_isError(z))
		return -EIO;
	w->hdr.len = 0;
	th_begin(&t, 0);
	th_i32(&t, 1, dict ? 2 : 0);			/* type: DICTIONARY_PAGE, DATA_PAGE */
	th_i32(&t, 2, (int32_t)w->raw.len);		/* uncompressed_page_size */
	th_i32(&t, 3, (int32_t)z);			/* compressed_page_size */
	if (dict) {
		th_begin(&t, 7);			/* dictionary_page_header */
		th_i32(&t, 1, (int32_t)n);
		th_i32(&t, 2, 0);			/* PLAIN */
		th_end(&t);
	} else {
		th_begin(&t, 5);			/* data_page_header */
		th_i32(&t, 1, (int32_t)n);		/* num_values, nulls included */
		th_i32(&t, 2, enc);
		th_i32(&t, 3, 3);			/* definition levels: RLE */
		th_i32(&t, 4, 3);			/* repetition levels: RLE */
		th_end(&t);
	}
	th_end(&t);
	if (t.err)
		return t.err;
	if (by_reserve(dst, w->hdr.len + z))
		return -ENOMEM;
	by_put(dst, w->hdr.p, w->hdr.len);
	by_put(dst, w->zbuf.p, z);
	c->uncompressed += w->hdr.len + w->raw.len;
	return 0;
}

static int flush_page(struct pq_writer *w, struct column *c)
{
	int ret, enc;

	if (!w->prow)
		return 0;
	w->raw.len = 0;
	if (c->def) {
		size_t at;
		uint32_t len;

		if (by_reserve(&w->raw, 4))
			return -ENOMEM;
		at = w->raw.len;
		w->raw.len += 4;
		ret = rle_hybrid(&w->raw, c->def, w->prow, 1);
		if (ret)
			return ret;
		len = (uint32_t)(w->raw.len - at - 4);
		memcpy(w->raw.p + at, &len, 4);
	}
	if (c->desc->type == PQ_STRING) {
		unsigned int bw = width_of(c->d.n ? c->d.n - 1 : 0);

		if (by_reserve(&w->raw, 1))
			return -ENOMEM;
		by_u8(&w->raw, (uint8_t)bw);
		ret = rle_hybrid(&w->raw, c->sv, c->nv, bw);
		enc = 8;				/* RLE_DICTIONARY */
	} else {
		int64_t mn = 0, mx = 0;

		ret = delta_pack(&w->raw, c->iv, c->nv, &mn, &mx);
		if (!ret && c->nv) {
			if (!c->has_minmax || mn < c->imin)
				c->imin = mn;
			if (!c->has_minmax || mx > c->imax)
				c->imax = mx;
			c->has_minmax = true;
		}
		enc = 5;				/* DELTA_BINARY_PACKED */
	}
	if (ret)
		return ret;
	ret = emit_page(w, c, &c->pages, 0, w->prow, enc);
	if (ret)
		return ret;
	c->values += w->prow;
	c->npages++;
	c->nv = 0;
	return 0;
}

static int meta_grow(struct pq_writer *w)
{
	unsigned int nc = w->meta_cap ? w->meta_cap * 2 : 8;
	struct chunk_meta *m;
	uint64_t *g;

	if (w->ngroups < w->meta_cap)
		return 0;
	m = realloc(w->meta, (size_t)nc * w->ncols * sizeof(*m));
	if (!m)
		return -ENOMEM;
	w->meta = m;
	g = realloc(w->group_nrows, nc * sizeof(*g));
	if (!g)
		return -ENOMEM;
	w->group_nrows = g;
	memset(w->meta + (size_t)w->meta_cap * w->ncols, 0,
	       (size_t)(nc - w->meta_cap) * w->ncols * sizeof(*m));
	w->meta_cap = nc;
	return 0;
}

static int set_bytes(struct bytes *b, const void *p, size_t n)
{
	b->len = 0;
	if (by_reserve(b, n))
		return -ENOMEM;
	by_put(b, p, n);
	return 0;
}

/* The smallest and largest entry of @d, bytewise unsigned. */
static void dict_minmax(const struct dict *d, const uint8_t **mn, uint32_t *mnl,
			const uint8_t **mx, uint32_t *mxl)
{
	uint32_t i, l;

	*mn = *mx = NULL;
	*mnl = *mxl = 0;
	for (i = 0; i < d->n; i++) {
		const uint8_t *e = d->plain.p + d->off[i];
		int c;

		memcpy(&l, e, 4);
		e += 4;
		if (!*mn) {
			*mn = *mx = e;
			*mnl = *mxl = l;
			continue;
		}
		c = memcmp(e, *mn, l < *mnl ? l : *mnl);
		if (c < 0 || (!c && l < *mnl)) {
			*mn = e;
			*mnl = l;
		}
		c = memcmp(e, *mx, l < *mxl ? l : *mxl);
		if (c > 0 || (!c && l > *mxl)) {
			*mx = e;
			*mxl = l;
		}
	}
}

static int flush_group(struct pq_writer *w)
{
	unsigned int i;
	int ret;

	if (!w->group_rows)
		return 0;
	ret = meta_grow(w);
	if (ret)
		return ret;
	for (i = 0; i < w->ncols; i++) {
		struct column *c = &w->c[i];
		struct chunk_meta *m = &w->meta[(size_t)w->ngroups * w->ncols + i];
		uint64_t start;

		ret = flush_page(w, c);
		if (ret)
			return ret;
		m->has_dict = c->desc->type == PQ_STRING;
		start = w->off;
		if (m->has_dict) {
			struct bytes dp = { 0 };

			w->raw.len = 0;
			if (by_reserve(&w->raw, c->d.plain.len))
				return -ENOMEM;
			by_put(&w->raw, c->d.plain.p, c->d.plain.len);
			ret = emit_page(w, c, &dp, 1, c->d.n, 0);
			if (!ret)
				ret = fwrite_all(w, dp.p, dp.len);
			by_free(&dp);
			if (ret)
				return ret;
			m->dict_off = (int64_t)start;
		}
		m->data_off = (int64_t)w->off;
		ret = fwrite_all(w, c->pages.p, c->pages.len);
		if (ret)
			return ret;
		m->comp = (int64_t)(w->off - start);
		m->uncomp = (int64_t)c->uncompressed;
		m->values = c->values;
		m->nulls = c->nulls;
		m->has_minmax = false;
		if (c->desc->type == PQ_STRING && c->d.n) {
			const uint8_t *mn, *mx;
			uint32_t mnl, mxl;

			dict_minmax(&c->d, &mn, &mnl, &mx, &mxl);
			if (set_bytes(&m->min, mn, mnl) || set_bytes(&m->max, mx, mxl))
				return -ENOMEM;
			m->has_minmax = true;
		} else if (c->desc->type != PQ_STRING && c->has_minmax) {
			if (set_bytes(&m->min, &c->imin, 8) || set_bytes(&m->max, &c->imax, 8))
				return -ENOMEM;
			m->has_minmax = true;
		}
		/* the next chunk starts afresh */
		c->pages.len = 0;
		c->uncompressed = 0;
		c->values = c->nulls = 0;
		c->npages = 0;
		c->has_minmax = false;
		if (c->desc->type == PQ_STRING) {
			iotap_map_clear(&c->d.idx);
			memset(c->d.keys, 0, KEY_SLOTS * sizeof(*c->d.keys));
			c->d.plain.len = 0;
			c->d.n = 0;
			c->d.last_key = 0;
		}
	}
	w->prow = 0;
	w->group_nrows[w->ngroups++] = w->group_rows;
	w->group_rows = 0;
	return 0;
}

int pq_put_row(struct pq_writer *w, const struct pq_val *v)
{
	struct column *c = w->c, *end = w->c + w->ncols;
	uint32_t row = w->prow;
	unsigned int i;

	if (w->err)
		return w->err;
	for (; c < end; c++, v++) {
		if (c->def) {
			c->def[row] = !v->null;
			if (v->null) {
				c->nulls++;
				continue;
			}
		}
		if (c->sv)
			put_str(w, c, v->s, v->len, v->key);
		else
			c->iv[c->nv++] = v->i;
	}
	w->rows++;
	w->prow++;
	if (++w->group_rows >= PQ_GROUP_ROWS) {
		w->err = flush_group(w);
		return w->err;
	}
	if (w->prow >= PQ_PAGE_ROWS) {
		for (i = 0; i < w->ncols && !w->err; i++)
			w->err = flush_page(w, &w->c[i]);
		w->prow = 0;
	}
	return w->err;
}

uint64_t pq_rows(const struct pq_writer *w)
{
	return w->rows;
}

/* --- footer ------------------------------------------------------------------ */

static void footer(struct pq_writer *w, struct thrift *t, const struct pq_kv *kv, unsigned int nkv)
{
	unsigned int g, i;

	th_begin(t, 0);					/* FileMetaData */
	th_i32(t, 1, 1);				/* version */
	th_list(t, 2, T_STRUCT, w->ncols + 1);		/* schema */
	th_begin(t, 0);
	th_str(t, 4, "schema");
	th_i32(t, 5, (int32_t)w->ncols);		/* num_children */
	th_end(t);
	for (i = 0; i < w->ncols; i++) {
		const struct pq_col *c = &w->cols[i];

		th_begin(t, 0);
		th_i32(t, 1, c->type == PQ_STRING ? 6 : 2);	/* BYTE_ARRAY, INT64 */
		th_i32(t, 3, c->optional ? 1 : 0);		/* OPTIONAL, REQUIRED */
		th_str(t, 4, c->name);
		if (c->type == PQ_STRING)
			th_i32(t, 6, 0);			/* converted_type UTF8 */
		else if (c->type == PQ_INT64)
			th_i32(t, 6, 18);			/* INT_64 */
		th_begin(t, 10);				/* logicalType */
		if (c->type == PQ_STRING) {
			th_begin(t, 1);				/* STRING */
			th_end(t);
		} else if (c->type == PQ_TIMESTAMP_NS) {
			th_begin(t, 8);				/* TIMESTAMP */
			th_bool(t, 1, true);			/* isAdjustedToUTC */
			th_begin(t, 2);				/* unit */
			th_begin(t, 3);				/* NANOS */
			th_end(t);
			th_end(t);
			th_end(t);
		} else {
			th_begin(t, 10);			/* INTEGER */
			th_field(t, 1, T_BYTE);
			th_room(t, 1);
			if (!t->err)
				by_u8(t->b, 64);		/* bitWidth */
			th_bool(t, 2, true);			/* isSigned */
			th_end(t);
		}
		th_end(t);
		th_end(t);
	}
	th_i64(t, 3, (int64_t)w->rows);			/* num_rows */
	th_list(t, 4, T_STRUCT, w->ngroups);		/* row_groups */
	for (g = 0; g < w->ngroups; g++) {
		int64_t total = 0, comp = 0, first = 0;

		th_begin(t, 0);
		th_list(t, 1, T_STRUCT, w->ncols);	/* columns */
		for (i = 0; i < w->ncols; i++) {
			const struct chunk_meta *m = &w->meta[(size_t)g * w->ncols + i];
			const struct pq_col *c = &w->cols[i];
			int64_t head = m->has_dict ? m->dict_off : m->data_off;

			if (!i)
				first = head;
			total += m->uncomp;
			comp += m->comp;
			th_begin(t, 0);				/* ColumnChunk */
			th_i64(t, 2, head);			/* file_offset (deprecated) */
			th_begin(t, 3);				/* meta_data */
			th_i32(t, 1, c->type == PQ_STRING ? 6 : 2);
			if (c->type == PQ_STRING) {
				th_list(t, 2, T_I32, 3);
				th_room(t, 8);
				if (!t->err) {
					by_varint(t->b, zigzag(0));	/* PLAIN (dictionary) */
					by_varint(t->b, zigzag(3));	/* RLE (levels) */
					by_varint(t->b, zigzag(8));	/* RLE_DICTIONARY */
				}
			} else {
				th_list(t, 2, T_I32, 2);
				th_room(t, 8);
				if (!t->err) {
					by_varint(t->b, zigzag(3));
					by_varint(t->b, zigzag(5));	/* DELTA_BINARY_PACKED */
				}
			}
			th_list(t, 3, T_BINARY, 1);		/* path_in_schema */
			th_bin_raw(t, c->name, strlen(c->name));
			th_i32(t, 4, 6);			/* ZSTD */
			th_i64(t, 5, (int64_t)m->values);
			th_i64(t, 6, m->uncomp);
			th_i64(t, 7, m->comp);
			th_i64(t, 9, m->data_off);
			if (m->has_dict)
				th_i64(t, 11, m->dict_off);
			th_begin(t, 12);			/* statistics */
			th_i64(t, 3, (int64_t)m->nulls);
			if (m->has_minmax) {
				th_bin(t, 5, m->max.p, m->max.len);
				th_bin(t, 6, m->min.p, m->min.len);
				th_bool(t, 7, true);
				th_bool(t, 8, true);
			}
			th_end(t);
			th_end(t);
			th_end(t);
		}
		th_i64(t, 2, total);				/* total_byte_size */
		th_i64(t, 3, (int64_t)w->group_nrows[g]);
		th_i64(t, 5, first);				/* file_offset */
		th_i64(t, 6, comp);				/* total_compressed_size */
		th_field(t, 7, T_I16);				/* ordinal */
		th_room(t, 4);
		if (!t->err)
			by_varint(t->b, zigzag(g));
		th_end(t);
	}
	if (nkv) {
		th_list(t, 5, T_STRUCT, nkv);			/* key_value_metadata */
		for (i = 0; i < nkv; i++) {
			th_begin(t, 0);
			th_str(t, 1, kv[i].key);
			th_str(t, 2, kv[i].value ? kv[i].value : "");
			th_end(t);
		}
	}
	th_str(t, 6, w->created_by);
	th_list(t, 7, T_STRUCT, w->ncols);			/* column_orders */
	for (i = 0; i < w->ncols; i++) {
		th_begin(t, 0);
		th_begin(t, 1);					/* TYPE_ORDER */
		th_end(t);
		th_end(t);
	}
	th_end(t);
}

int pq_close(struct pq_writer *w, const struct pq_kv *kv, unsigned int nkv)
{
	struct bytes fb = { 0 };
	struct thrift t = { .b = &fb };
	uint32_t len;
	int ret = w->err;

	/* a table without rows still has one (empty) row group's schema: none needed */
	if (!ret)
		ret = flush_group(w);
	if (!ret) {
		footer(w, &t, kv, nkv);
		ret = t.err;
	}
	if (!ret)
		ret = fwrite_all(w, fb.p, fb.len);
	len = (uint32_t)fb.len;
	if (!ret)
		ret = fwrite_all(w, &len, 4);
	if (!ret)
		ret = fwrite_all(w, "PAR1", 4);
	by_free(&fb);
	pq_abort(w);
	return ret;
}

void pq_abort(struct pq_writer *w)
{
	unsigned int i;

	if (!w)
		return;
	for (i = 0; w->c && i < w->ncols; i++) {
		struct column *c = &w->c[i];

		by_free(&c->pages);
		if (c->desc && c->desc->type == PQ_STRING) {
			iotap_map_release(&c->d.idx);
			free(c->d.keys);
		}
		by_free(&c->d.plain);
		free(c->d.off);
	}
	for (i = 0; i < w->ngroups * w->ncols; i++) {
		by_free(&w->meta[i].min);
		by_free(&w->meta[i].max);
	}
	free(w->meta);
	free(w->group_nrows);
	iotap_buf_free(w->arrays, w->arrays_size);
	free(w->c);
	ZSTD_freeCCtx(w->zc);
	by_free(&w->raw);
	by_free(&w->zbuf);
	by_free(&w->hdr);
	free(w);
}
