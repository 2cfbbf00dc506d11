// SPDX-License-Identifier: MIT
/*
 * parquet_meta.c - the Thrift structures of a Parquet file: page headers
 * and the footer (FileMetaData)
 *
 * Thrift structures use the compact protocol (thrift's
 * doc/specs/thrift-compact-protocol.md): field headers carry the id delta
 * and the type in one byte, integers are zigzag varints. The field ids
 * are those of apache/parquet-format's parquet.thrift, named beside each
 * use. The footer holds the schema, every column chunk's offsets, sizes,
 * encodings and statistics (min_value, max_value, null_count, in the
 * order TYPE_ORDER: signed integers, unsigned bytes, which column_orders
 * declares), and the key/value metadata.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "parquet_i.h"

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

/* --- page header ------------------------------------------------------------ */

int pq_page_header(struct bytes *b, bool dict, uint32_t n, int enc, size_t raw, size_t comp)
{
	struct thrift t = { .b = b };

	th_begin(&t, 0);
	th_i32(&t, 1, dict ? 2 : 0);			/* type: DICTIONARY_PAGE, DATA_PAGE */
	th_i32(&t, 2, (int32_t)raw);			/* uncompressed_page_size */
	th_i32(&t, 3, (int32_t)comp);			/* compressed_page_size */
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
	return t.err;
}

/* --- footer ------------------------------------------------------------------ */

int pq_footer(struct bytes *b, const struct pq_col *cols, unsigned int ncols, uint64_t rows,
	      const struct chunk_meta *meta, const uint64_t *group_rows, unsigned int ngroups,
	      const struct pq_kv *kv, unsigned int nkv, const char *created_by)
{
	struct thrift th = { .b = b }, *t = &th;
	unsigned int g, i;

	th_begin(t, 0);					/* FileMetaData */
	th_i32(t, 1, 1);				/* version */
	th_list(t, 2, T_STRUCT, ncols + 1);		/* schema */
	th_begin(t, 0);
	th_str(t, 4, "schema");
	th_i32(t, 5, (int32_t)ncols);		/* num_children */
	th_end(t);
	for (i = 0; i < ncols; i++) {
		const struct pq_col *c = &cols[i];

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
	th_i64(t, 3, (int64_t)rows);			/* num_rows */
	th_list(t, 4, T_STRUCT, ngroups);		/* row_groups */
	for (g = 0; g < ngroups; g++) {
		int64_t total = 0, comp = 0, first = 0;

		th_begin(t, 0);
		th_list(t, 1, T_STRUCT, ncols);	/* columns */
		for (i = 0; i < ncols; i++) {
			const struct chunk_meta *m = &meta[(size_t)g * ncols + i];
			const struct pq_col *c = &cols[i];
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
		th_i64(t, 3, (int64_t)group_rows[g]);
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
	th_str(t, 6, created_by);
	th_list(t, 7, T_STRUCT, ncols);			/* column_orders */
	for (i = 0; i < ncols; i++) {
		th_begin(t, 0);
		th_begin(t, 1);					/* TYPE_ORDER */
		th_end(t);
		th_end(t);
	}
	th_end(t);
	return t->err;
}
