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
 * sizes, encodings and statistics, and the key/value metadata. Here: the
 * values into pages and row groups; the Thrift structures (page headers,
 * the footer) are parquet_meta.c's.
 *
 * Pages are data page v1: for an optional column the definition levels
 * first (u32 LE length, then the RLE/bit-packed hybrid at bit width 1),
 * then the values of the non-null rows (the encodings: parquet_enc.c):
 *   - INT64: DELTA_BINARY_PACKED (Encodings.md): blocks of 128 deltas in
 *     4 miniblocks of 32, each bit-packed at its own width above the
 *     block's smallest delta -- times and sequential offsets take a few
 *     bits a row before ZSTD;
 *   - strings: RLE_DICTIONARY: a byte of bit width, then the row group's
 *     dictionary indices in the RLE/bit-packed hybrid; the dictionary is
 *     one PLAIN page at the head of the chunk.
 * Statistics (min_value, max_value, null_count) are those of the whole
 * chunk.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* ZSTD_initStaticCCtx(), ZSTD_estimateCCtxSize(): in libzstd's exported symbols since 1.3 */
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include "iotap_base.h"
#include "parquet_i.h"

#define ZSTD_LEVEL	1

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

/*
 * The row group's compressed pages, every column's, go into extents of
 * huge pages (iotap_buf_alloc) kept from one group to the next: a fault
 * per 2 MiB where sixteen growing buffers took one per 4 KiB (and copied
 * as they grew), which costs on these VMs. A column keeps where its pages
 * lie; the group's flush writes each column's in turn. A page's header
 * goes right before its payload, which ZSTD compresses in place.
 */
#define EXTENT_SIZE	(2u << 20)
#define HDR_MAX		64u		/* a PageHeader's bytes, at most */

struct extent {
	uint8_t *p;
	size_t size, used;
};

struct page_ref {
	uint32_t ext, off, len;		/* header and payload at ext[ext].p + off */
};

struct column {
	const struct pq_col *desc;
	int64_t *iv;			/* the page's non-null integer values */
	uint32_t *sv;			/* the page's non-null dictionary indices */
	uint32_t *def;			/* the page's definition levels (optional columns) */
	uint32_t nv;			/* values in the page (rows: pq_writer.prow) */
	unsigned int idx;		/* its place in the row */
	struct page_ref *pg;		/* the chunk's data pages */
	uint32_t npg, pgcap;
	struct dict d;
	int64_t imin, imax;		/* the chunk's statistics */
	bool has_minmax;
	uint64_t nulls, values;		/* in the chunk */
	uint64_t uncompressed;		/* pages' uncompressed size with headers */
};

struct pq_writer {
	FILE *f;
	const struct pq_col *cols;
	unsigned int ncols;
	const char *created_by;
	struct column *c;
	char *arrays;			/* ZSTD's workspace, the columns' page arrays
					 * (iv, sv, def) and key caches */
	size_t arrays_size;		/* as iotap_buf_alloc() gave it */
	ZSTD_CCtx *zc;			/* in arrays, made at the first row (pq_start) */
	size_t zsize;
	struct bytes raw, hdr;		/* scratch: a page's payload, its header */
	struct extent *ext;		/* the row group's pages */
	unsigned int next, cur;		/* extents allocated, the one being filled */
	struct column **req_int;	/* the required integer columns (no levels, a value a row) */
	struct column **other;		/* the rest */
	unsigned int nreq_int, nother;
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
	size_t size, zsize;
	char *p;
	int ret = -ENOMEM;

	if (!w)
		return -ENOMEM;
	w->f = f;
	w->cols = cols;
	w->ncols = ncols;
	w->created_by = created_by;
	w->c = calloc(ncols, sizeof(*w->c));
	w->req_int = calloc(ncols, sizeof(*w->req_int));
	w->other = calloc(ncols, sizeof(*w->other));
	if (!w->c || !w->req_int || !w->other)
		goto err;
	/*
	 * ZSTD's workspace, the page arrays and the key caches of every
	 * column in one block: one mapping, not dozens, in huge pages
	 * (iotap_buf_alloc): faults cost on these VMs. A ZSTD context left
	 * to itself allocates its tables for each page's size as it comes,
	 * and frees and allocates them again as the sizes change (a quarter
	 * of a small export's page faults); sized once here for the largest
	 * (the level's estimate covers every source size) it never does. The
	 * same parameters: the same bytes. Nothing here touches the block: a
	 * table without rows (the calls of an empty trace) never faults it in.
	 */
	zsize = (ZSTD_estimateCCtxSize(ZSTD_LEVEL) + 63) & ~(size_t)63;
	w->zsize = zsize;
	for (i = 0, size = zsize; i < ncols; i++)
		size += PQ_PAGE_ROWS * (cols[i].type == PQ_STRING ? sizeof(uint32_t) : sizeof(int64_t)) +
			(cols[i].optional ? PQ_PAGE_ROWS * sizeof(uint32_t) : 0) +
			(cols[i].type == PQ_STRING ? KEY_SLOTS * sizeof(struct kslot) : 0);
	w->arrays_size = size;
	w->arrays = iotap_buf_alloc(&w->arrays_size);
	if (!w->arrays)
		goto err;
	for (i = 0, p = w->arrays + zsize; i < ncols; i++) {
		struct column *c = &w->c[i];

		c->desc = &cols[i];
		c->idx = i;
		if (cols[i].type != PQ_STRING && !cols[i].optional)
			w->req_int[w->nreq_int++] = c;
		else
			w->other[w->nother++] = c;
		if (cols[i].type == PQ_STRING) {
			c->sv = (uint32_t *)p;
			p += PQ_PAGE_ROWS * sizeof(*c->sv);
			iotap_map_init(&c->d.idx, sizeof(uint32_t));
			c->d.keys = (struct kslot *)p;
			p += KEY_SLOTS * sizeof(*c->d.keys);
		} else {
			c->iv = (int64_t *)p;
			p += PQ_PAGE_ROWS * sizeof(*c->iv);
		}
		if (cols[i].optional) {
			c->def = (uint32_t *)p;
			p += PQ_PAGE_ROWS * sizeof(*c->def);
		}
	}
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

/*
 * Room for @n more bytes in a dictionary page. From 64 KiB on (the path
 * column of a capture of thousands of files) it lies in an extent of huge
 * pages (iotap_buf_alloc) and grows there: realloc()'s doublings copied
 * it into fresh 4 KiB pages, a fault each (~70 for the quick-start
 * capture's 300 KiB of paths).
 */
#define PLAIN_HUGE	(64u << 10)

static int plain_reserve(struct bytes *b, size_t n)
{
	size_t need = b->len + n, size;
	uint8_t *np;

	if (need <= b->cap)
		return 0;
	if (need < PLAIN_HUGE)
		return by_reserve(b, n);
	size = need * 2 > IOTAP_BUF_HUGE ? need * 2 : IOTAP_BUF_HUGE;
	/* b->p: by_reserve()'s (below IOTAP_BUF_HUGE, malloc'ed) or an extent */
	np = iotap_buf_grow(b->p, &b->cap, b->len, size);
	if (!np)
		return -ENOMEM;
	b->p = np;
	return 0;
}

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
	ret = plain_reserve(&d->plain, (size_t)len + 4);
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

/* Room for @need bytes in the extent being filled, or the next. */
static int extent_room(struct pq_writer *w, size_t need)
{
	struct extent *e;

	while (w->cur < w->next && w->ext[w->cur].used + need > w->ext[w->cur].size)
		w->cur++;
	if (w->cur < w->next)
		return 0;
	e = realloc(w->ext, (w->next + 1) * sizeof(*e));
	if (!e)
		return -ENOMEM;
	w->ext = e;
	e = &w->ext[w->next];
	e->size = need > EXTENT_SIZE ? need : EXTENT_SIZE;
	e->used = 0;
	e->p = iotap_buf_alloc(&e->size);
	if (!e->p)
		return -ENOMEM;
	w->next++;
	return 0;
}

/*
 * Compress @raw into the extents, its header before it; where it lies
 * into *@out. @dict: a dictionary page of @n entries (else a data page of
 * @n values, @enc).
 */
static int emit_page(struct pq_writer *w, struct column *c, const struct bytes *raw, bool dict,
		     uint32_t n, int enc, struct page_ref *out)
{
	size_t bound = ZSTD_compressBound(raw->len), z;
	struct extent *e;
	int ret;

	ret = extent_room(w, HDR_MAX + bound);
	if (ret)
		return ret;
	e = &w->ext[w->cur];
	z = ZSTD_compress2(w->zc, e->p + e->used + HDR_MAX, bound, raw->p, raw->len);
	if (ZSTD_isError(z))
		return -EIO;
	w->hdr.len = 0;
	ret = pq_page_header(&w->hdr, dict, n, enc, raw->len, z);
	if (ret)
		return ret;
	if (w->hdr.len > HDR_MAX)
		return -EOVERFLOW;
	out->ext = w->cur;
	out->off = (uint32_t)(e->used + HDR_MAX - w->hdr.len);
	out->len = (uint32_t)(w->hdr.len + z);
	memcpy(e->p + out->off, w->hdr.p, w->hdr.len);
	e->used += HDR_MAX + z;
	c->uncompressed += w->hdr.len + raw->len;
	return 0;
}

static int write_page(struct pq_writer *w, const struct page_ref *pr)
{
	return fwrite_all(w, w->ext[pr->ext].p + pr->off, pr->len);
}

static int flush_page(struct pq_writer *w, struct column *c)
{
	int ret, enc;

	if (!w->prow)
		return 0;
	if (!c->def && !c->sv)
		c->nv = w->prow;		/* pq_put_row counts only the others */
	w->raw.len = 0;
	if (c->def) {
		size_t at;
		uint32_t len;

		if (by_reserve(&w->raw, 4))
			return -ENOMEM;
		at = w->raw.len;
		w->raw.len += 4;
		ret = pq_rle_hybrid(&w->raw, c->def, w->prow, 1);
		if (ret)
			return ret;
		len = (uint32_t)(w->raw.len - at - 4);
		memcpy(w->raw.p + at, &len, 4);
	}
	if (c->desc->type == PQ_STRING) {
		unsigned int bw = pq_width(c->d.n ? c->d.n - 1 : 0);

		if (by_reserve(&w->raw, 1))
			return -ENOMEM;
		by_u8(&w->raw, (uint8_t)bw);
		ret = pq_rle_hybrid(&w->raw, c->sv, c->nv, bw);
		enc = 8;				/* RLE_DICTIONARY */
	} else {
		int64_t mn = 0, mx = 0;

		ret = pq_delta_pack(&w->raw, c->iv, c->nv, &mn, &mx);
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
	if (c->npg == c->pgcap) {
		uint32_t nc = c->pgcap ? c->pgcap * 2 : 64;
		struct page_ref *np = realloc(c->pg, nc * sizeof(*np));

		if (!np)
			return -ENOMEM;
		c->pg = np;
		c->pgcap = nc;
	}
	ret = emit_page(w, c, &w->raw, false, w->prow, enc, &c->pg[c->npg]);
	if (ret)
		return ret;
	c->npg++;
	c->values += w->prow;
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

/* A statistic: its size, not by_reserve()'s 4 KiB (32 of them a row group). */
static int set_bytes(struct bytes *b, const void *p, size_t n)
{
	uint8_t *np;

	if (n > b->cap || !b->p) {
		np = realloc(b->p, n ? n : 1);
		if (!np)
			return -ENOMEM;
		b->p = np;
		b->cap = n ? n : 1;
	}
	if (n)
		memcpy(b->p, p, n);
	b->len = n;
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
	unsigned int i, k;
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
			struct page_ref dp;

			/* the dictionary as it is: no copy of it to fault in */
			ret = emit_page(w, c, &c->d.plain, true, c->d.n, 0, &dp);
			if (!ret)
				ret = write_page(w, &dp);
			if (ret)
				return ret;
			m->dict_off = (int64_t)start;
		}
		m->data_off = (int64_t)w->off;
		for (k = 0; k < c->npg; k++) {
			ret = write_page(w, &c->pg[k]);
			if (ret)
				return ret;
		}
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
		c->npg = 0;
		c->uncompressed = 0;
		c->values = c->nulls = 0;
		c->has_minmax = false;
		if (c->desc->type == PQ_STRING) {
			iotap_map_clear(&c->d.idx);
			memset(c->d.keys, 0, KEY_SLOTS * sizeof(*c->d.keys));
			c->d.plain.len = 0;
			c->d.n = 0;
			c->d.last_key = 0;
		}
	}
	for (k = 0; k < w->next; k++)
		w->ext[k].used = 0;
	w->cur = 0;
	w->prow = 0;
	w->group_nrows[w->ngroups++] = w->group_rows;
	w->group_rows = 0;
	return 0;
}

/* The first row: the ZSTD context and the key caches in the block pq_open() left untouched. */
static int pq_start(struct pq_writer *w)
{
	unsigned int i;

	w->zc = ZSTD_initStaticCCtx(w->arrays, w->zsize);
	if (!w->zc)
		return -ENOMEM;
	/* a static context starts with its parameters zeroed (no content size in the frame) */
	ZSTD_CCtx_reset(w->zc, ZSTD_reset_parameters);
	ZSTD_CCtx_setParameter(w->zc, ZSTD_c_compressionLevel, ZSTD_LEVEL);
	for (i = 0; i < w->ncols; i++)
		if (w->c[i].d.keys)
			memset(w->c[i].d.keys, 0, KEY_SLOTS * sizeof(*w->c[i].d.keys));
	return 0;
}

int pq_put_row(struct pq_writer *w, const struct pq_val *v)
{
	uint32_t row = w->prow;
	unsigned int i;

	if (w->err)
		return w->err;
	if (!w->zc && (w->err = pq_start(w)))
		return w->err;
	/* most columns: a value a row, nothing to decide */
	for (i = 0; i < w->nreq_int; i++) {
		struct column *c = w->req_int[i];

		c->iv[row] = v[c->idx].i;
	}
	for (i = 0; i < w->nother; i++) {
		struct column *c = w->other[i];
		const struct pq_val *x = &v[c->idx];

		if (c->def) {
			c->def[row] = !x->null;
			if (x->null) {
				c->nulls++;
				continue;
			}
		}
		if (c->sv)
			put_str(w, c, x->s, x->len, x->key);
		else
			c->iv[c->nv++] = x->i;
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

int pq_close(struct pq_writer *w, const struct pq_kv *kv, unsigned int nkv)
{
	struct bytes fb = { 0 };
	uint32_t len;
	int ret = w->err;

	/* a table without rows still has one (empty) row group's schema: none needed */
	if (!ret)
		ret = flush_group(w);
	if (!ret)
		ret = pq_footer(&fb, w->cols, w->ncols, w->rows, w->meta, w->group_nrows, w->ngroups,
				kv, nkv, w->created_by);
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

		free(c->pg);
		if (c->desc && c->desc->type == PQ_STRING)
			iotap_map_release(&c->d.idx);
		iotap_buf_free(c->d.plain.p, c->d.plain.cap);
		free(c->d.off);
	}
	for (i = 0; i < w->ngroups * w->ncols; i++) {
		by_free(&w->meta[i].min);
		by_free(&w->meta[i].max);
	}
	free(w->meta);
	free(w->group_nrows);
	iotap_buf_free(w->arrays, w->arrays_size);	/* the ZSTD context's too */
	free(w->c);
	free(w->req_int);
	free(w->other);
	by_free(&w->raw);
	by_free(&w->hdr);
	for (i = 0; i < w->next; i++)
		iotap_buf_free(w->ext[i].p, w->ext[i].size);
	free(w->ext);
	free(w);
}
