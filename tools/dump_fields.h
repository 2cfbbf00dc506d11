/* SPDX-License-Identifier: MIT */
/*
 * dump_fields.h - what `iotap dump` prints of a record, as one table
 * (dump_fields.c), and the writers it drives; the fast paths beside it
 * (dump_fast.c) print the same bytes for the common records
 *
 * A field is one row: its key (JSON key, CSV column, text key), the
 * record kinds whose JSON object and text line have it, its CSV column,
 * its place on a text line, a getter and how its value prints. A new
 * field is a new row; the writers never name one.
 */
#ifndef IOTAP_DUMP_FIELDS_H
#define IOTAP_DUMP_FIELDS_H

#include <stdint.h>
#include <stdio.h>

#include "iotap_trace.h"

/* A record's text line, CSV row or JSON line (the fields' table). */
void dump_table_text(FILE *f, const struct iotap_trace_rec *r, uint64_t base);
void dump_table_csv(FILE *f, const struct iotap_trace_rec *r, uint64_t base);
void dump_table_json(FILE *f, const struct iotap_trace_rec *r, uint64_t base);
/* The CSV header row: the table's CSV columns in order. */
void dump_table_csv_head(FILE *f);

/* Shared with the fast paths. */
/* An OP's error name (strerrorname_np), "" for none or another record. */
const char *dump_err_name(const struct iotap_trace_rec *r);
/* The op column of CSV and JSON: an OP's op, a PHASE's begin or end, else "". */
const char *dump_op_name(const struct iotap_trace_rec *r);
/* An OP record's flags by name (iotap_trace_opf_names), "" for other records. */
const char *dump_opf_names(const struct iotap_trace_rec *r, char *buf);

#endif /* IOTAP_DUMP_FIELDS_H */
