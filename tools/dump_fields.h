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
#include <string.h>

#include "iotap_trace.h"

/* A record's text line, CSV row or JSON line (the fields' table). */
void dump_table_text(FILE *f, const struct iotap_trace_rec *r, uint64_t base);
void dump_table_csv(FILE *f, const struct iotap_trace_rec *r, uint64_t base);
void dump_table_json(FILE *f, const struct iotap_trace_rec *r, uint64_t base);
/* The CSV header row: the table's CSV columns in order. */
void dump_table_csv_head(FILE *f);
/* The CSV columns for --help: in order, those only SAMPLE records fill marked. */
void dump_table_csv_help(FILE *f);

/* Shared with the fast paths (inline: they are on them). */

/* An OP's error name (strerrorname_np), "" for none or another record. */
static inline const char *dump_err_name(const struct iotap_trace_rec *r)
{
	const char *en;

	if (r->type != IOTAP_REC_OP || r->result >= 0 || r->result <= -4096)
		return "";
	en = strerrorname_np((int)-r->result);
	return en ? en : "";
}

/* The op column of CSV and JSON: an OP's op, a PHASE's begin or end, else "". */
static inline const char *dump_op_name(const struct iotap_trace_rec *r)
{
	if (r->type == IOTAP_REC_OP)
		return iotap_trace_op_name(r->op);
	if (r->type == IOTAP_REC_PHASE)
		return r->flags == IOTAP_PHASE_END ? "end" : "begin";
	return "";
}

/* An OP record's flags by name (iotap_trace_opf_names), "" for other records. */
static inline const char *dump_opf_names(const struct iotap_trace_rec *r, char *buf)
{
	if (r->type != IOTAP_REC_OP || !r->flags)
		return "";
	return iotap_trace_opf_names(r->op, r->flags, buf, IOTAP_OPF_NAMES_MAX);
}

#endif /* IOTAP_DUMP_FIELDS_H */
