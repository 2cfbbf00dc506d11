/* SPDX-License-Identifier: MIT */
/*
 * dump_fast.h - iotap dump's fast paths (dump_fast.c): what the field
 * table (dump_fields.h) prints, built in a buffer without printf
 */
#ifndef IOTAP_DUMP_FAST_H
#define IOTAP_DUMP_FAST_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "iotap_trace.h"

#define OB_CAP		(1u << 16)

/* The output buffer: lines go to @f (write(2) when half full, else stdio). */
struct obuf {
	FILE *f;
	size_t len;
	int err;			/* errno of the first failed write, 0: none */
	char buf[OB_CAP];
};

enum dump_format { DUMP_TEXT, DUMP_CSV, DUMP_JSON };

/* --op: the ops and record types wanted (@on 0: all). */
struct dump_filter {
	int on;
	unsigned char op[IOTAP_OP_MAX];
	unsigned char type[IOTAP_REC_TYPE_MAX];
};

static inline int dump_filter_wants(const struct dump_filter *f, const struct iotap_trace_rec *r)
{
	if (r->type == IOTAP_REC_OP)
		return r->op < IOTAP_OP_MAX && f->op[r->op];
	return r->type < IOTAP_REC_TYPE_MAX && f->type[r->type];
}

/* Once, before the first line. */
void dump_fast_init(void);

/*
 * A record's text line, CSV row or JSON line appended to @ob, exactly as
 * dump_table_text(), _csv() and _json() print it; 0: not taken (nothing
 * appended), the caller flushes @ob and uses the table.
 */
int dump_text_fast(struct obuf *ob, const struct iotap_trace_rec *r, uint64_t base);
int dump_csv_fast(struct obuf *ob, const struct iotap_trace_rec *r, uint64_t base);
int dump_json_fast(struct obuf *ob, const struct iotap_trace_rec *r, uint64_t base);

/*
 * dump_lines - @r's records (as many as make @lines reach @limit) that @flt
 * wants, as @fmt, into @ob; @lines counts them
 * (stopping at @limit or at a write error: @ob->err, ferror(@ob->f))
 * Return: 0, or -errno from the reader.
 */
int dump_lines(struct obuf *ob, struct iotap_trace_reader *r, enum dump_format fmt,
	       const struct dump_filter *flt, uint64_t limit, uint64_t *lines, uint64_t base);

/* What @ob holds to its file, before a line printed with stdio. */
void dump_ob_flush(struct obuf *ob);

#endif /* IOTAP_DUMP_FAST_H */
