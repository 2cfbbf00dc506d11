/* SPDX-License-Identifier: MIT */
/*
 * parquet.h - a streaming Apache Parquet writer for flat tables (parquet.c)
 *
 * Written from the format's specification (apache/parquet-format:
 * README.md, Encodings.md, parquet.thrift) because Debian has no C
 * library that writes Parquet. Flat schemas only: each column an INT64
 * (optionally a nanosecond UTC timestamp) or a UTF-8 string, required or
 * optional (null). Strings are dictionary encoded (RLE_DICTIONARY),
 * integers DELTA_BINARY_PACKED; every page is compressed with ZSTD. Rows
 * go into row groups of PQ_GROUP_ROWS; each column chunk carries min/max
 * and null-count statistics in the footer so engines skip row groups.
 *
 * Memory: one row group's compressed pages and its dictionaries, plus a
 * page of values per column; never the whole table.
 *
 * Use: pq_open(), then pq_put_row() with every column's value for each
 * row, then pq_close(). All return 0 or -errno; after an error every
 * call returns it again.
 */
#ifndef IOTAP_PARQUET_H
#define IOTAP_PARQUET_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Rows per row group, and values per data page. */
#define PQ_GROUP_ROWS	(1u << 20)
#define PQ_PAGE_ROWS	(1u << 13)

enum pq_type {
	PQ_INT64,		/* signed 64-bit */
	PQ_TIMESTAMP_NS,	/* INT64, ns since the epoch, UTC */
	PQ_STRING,		/* UTF-8 BYTE_ARRAY, dictionary encoded */
};

struct pq_col {
	const char *name;
	enum pq_type type;
	int optional;		/* may be null */
};

/*
 * One value of a row: @i for an integer column; @s/@len for a string,
 * with @key a nonzero number that names that string in its column (equal
 * keys, equal strings: an op code, a path's key) so that it finds its
 * dictionary entry without hashing, or 0; @null for none (optional
 * columns only).
 */
struct pq_val {
	int64_t i;
	const char *s;
	uint32_t len;
	bool null;
	uint64_t key;
};

struct pq_kv {
	const char *key;
	const char *value;
};

struct pq_writer;

/*
 * pq_open - start a Parquet file on @f (written from its current position,
 * which should be 0; @f stays the caller's)
 * @cols:  the schema, @ncols columns (kept by pointer until close)
 */
int pq_open(struct pq_writer **out, FILE *f, const struct pq_col *cols, unsigned int ncols,
	    const char *created_by);
/* A row: @v[i] is column i's value. May write a row group. */
int pq_put_row(struct pq_writer *w, const struct pq_val *v);
/*
 * pq_close - write the last row group and the footer (with @kv: @nkv
 * key/value pairs of file metadata), free @w. Return: 0 or the first error.
 */
int pq_close(struct pq_writer *w, const struct pq_kv *kv, unsigned int nkv);
/* Free @w without finishing the file (after an error). */
void pq_abort(struct pq_writer *w);
/* Rows so far. */
uint64_t pq_rows(const struct pq_writer *w);

#endif /* IOTAP_PARQUET_H */
