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

/* What @ob holds to its file, before a line printed with stdio. */
void dump_ob_flush(struct obuf *ob);

#endif /* IOTAP_DUMP_FAST_H */
