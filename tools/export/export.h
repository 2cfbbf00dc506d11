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

/* What a getter sees: the record, its path, and the trace's context. */
struct xrow {
	const struct iotap_trace_rec *rec;
	const struct iotap_trace_path *path;
	const char *host;
	uint32_t host_len;
	uint64_t mono_base, real_base;	/* the header's clock bases, ns */
	const char *phase;		/* the marker phase the record is in, or NULL */
	uint32_t phase_len;
};

/* One value: an integer in @i, or a string in @s/@len. */
struct xval {
	int64_t i;
	const char *s;
	uint32_t len;
};

struct xfield {
	const char *name;
	enum pq_type type;
	int optional;
	/* 1: the value is in *v; 0: null (optional columns only) */
	int (*get)(const struct xrow *r, struct xval *v);
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
