/* SPDX-License-Identifier: MIT */
/*
 * export.h - iotap export's tables: one field table per table, written as
 * Parquet (parquet.c) or CSV from the same rows (export.c)
 *
 * Two tables: "calls", one row per application call (an OP record, the
 * pieces of a cut read/write joined), and "events", one row per other
 * record (NAME, PHASE, SAMPLE, LOST, END, NOTE, APP). A column is a row of
 * its table (name, type, nullable, getter, help): the Parquet schema, the
 * CSV header and `iotap export --help`'s column list are all read from it.
 */
#ifndef IOTAP_EXPORT_H
#define IOTAP_EXPORT_H

#include <stdint.h>
#include <stdio.h>

#include "iotap_trace.h"
#include "parquet.h"

/* A string of a row, with its key (struct pq_val's: 0 or a number naming it). */
struct xstr {
	const char *s;			/* NULL: none */
	uint32_t len;
	uint64_t key;
};

/* What a column sees: the record, the strings around it, the trace's context. */
struct xrow {
	const struct iotap_trace_rec *rec;
	struct xstr host;		/* the traced host */
	struct xstr path;		/* the record's path (trace/paths.c) */
	struct xstr phase;		/* the marker phase the record is in */
	struct xstr name;		/* the record's name */
	uint64_t mono_base, real_base;	/* the header's clock bases, ns */
};

/* Where a column's value comes from. */
enum xsrc {
	XS_U32,			/* an unsigned 32-bit field of the record, at @off */
	XS_U64,			/* a 64-bit field of the record (signed ones: the same bits) */
	XS_TIME,		/* the record's time on the wall clock */
	XS_STR,			/* a struct xstr of the row, at @off; none when NULL */
	XS_SAMPLE,		/* a u64 of a SAMPLE record's sample, at @off; none elsewhere */
	XS_GET,			/* get() */
};

struct xfield {
	const char *name;
	enum pq_type type;
	int optional;			/* none is null; else 0 or "" */
	enum xsrc src;
	size_t off;
	/* XS_GET: 1: the value is in *v; 0: none */
	int (*get)(const struct xrow *r, struct pq_val *v);
	const char *help;
};

struct xtable {
	const char *name;		/* "calls", "events" */
	const struct xfield *f;
	unsigned int n;
};

extern const struct xtable export_calls, export_events;

/* A table being written, as Parquet or CSV. */
struct xout;

enum xformat { X_PARQUET, X_CSV };

int xout_open(struct xout **out, const struct xtable *t, enum xformat fmt, FILE *f);
/* One row. Return: 0 or -errno (a write error). */
int xout_row(struct xout *o, const struct xrow *r);
/* Finish the file (Parquet: its footer with @kv); frees @o. Return: 0 or -errno. */
int xout_close(struct xout *o, const struct pq_kv *kv, unsigned int nkv);
uint64_t xout_rows(const struct xout *o);

/* The columns of @t, one a line, for --help. */
void export_print_columns(FILE *f, const struct xtable *t);

#endif /* IOTAP_EXPORT_H */
