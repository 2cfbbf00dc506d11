// SPDX-License-Identifier: MIT
/*
 * export.c - the columns of iotap export's two tables, and their writers
 *
 * Each table is an array of struct xfield: a column is one row here, and
 * the Parquet schema, the CSV header, the values of both formats and the
 * --help list all come from it, so the two formats agree column for
 * column. A column's value is a field of the record, a string of the row
 * (host, path, phase, name) or what a function computes from the record
 * (op and errno names, ...); one switch (value_of) reads them for both
 * formats.
 *
 * CSV renders a TIMESTAMP as "YYYY-MM-DD HH:MM:SS.nnnnnnnnn" (UTC; DuckDB
 * and Spark read it as a timestamp), integers in decimal, strings quoted
 * when they hold a comma, quote, CR or LF (a quote doubled), null as an
 * empty field.
 */
#include <errno.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config.h"
#include "export.h"
#include "iotap_base.h"

/* --- values computed from the record ----------------------------------------- */

/* Names and their lengths, looked up once: a pointer the dictionary knows again. */
static struct xname {
	const char *s;
	uint32_t len;
} op_str[IOTAP_OP_MAX], type_str[IOTAP_REC_TYPE_MAX];

static void str_tables_init(void)
{
	unsigned int i;

	if (op_str[0].s)
		return;
	for (i = 0; i < IOTAP_OP_MAX; i++) {
		op_str[i].s = iotap_trace_op_name(i);
		op_str[i].len = (uint32_t)strlen(op_str[i].s);
	}
	for (i = 0; i < IOTAP_REC_TYPE_MAX; i++) {
		type_str[i].s = iotap_trace_rec_type_name(i);
		type_str[i].len = (uint32_t)strlen(type_str[i].s);
	}
}

/* Entry @i of @names (@n of them), its key i + 1; "?" beyond. */
static int name_of(const struct xname *names, unsigned int n, unsigned int i, struct pq_val *v)
{
	v->s = i < n ? names[i].s : "?";
	v->len = i < n ? names[i].len : 1;
	v->key = i < n ? i + 1 : 0;
	return 1;
}

static int g_op(const struct xrow *r, struct pq_val *v)
{
	return name_of(op_str, IOTAP_OP_MAX, r->rec->op, v);
}

static int g_type(const struct xrow *r, struct pq_val *v)
{
	return name_of(type_str, IOTAP_REC_TYPE_MAX, r->rec->type, v);
}

static int g_error(const struct xrow *r, struct pq_val *v)
{
	const char *en;

	if (r->rec->result >= 0 || r->rec->result <= -4096)
		return 0;
	en = strerrorname_np((int)-r->rec->result);
	v->s = en ? en : "?";
	v->len = (uint32_t)strlen(v->s);
	v->key = (uint64_t)-r->rec->result;
	return 1;
}

static int g_flag_names(const struct xrow *r, struct pq_val *v)
{
	static char buf[IOTAP_OPF_NAMES_MAX];
	static uint32_t last_flags = 0;
	static unsigned int last_op = ~0u;
	static uint32_t last_len;

	if (!r->rec->flags)
		return 0;
	/* the same flags as the last row (every direct read): the same pointer */
	if (r->rec->flags != last_flags || r->rec->op != last_op) {
		iotap_trace_opf_names(r->rec->op, r->rec->flags, buf, sizeof(buf));
		last_flags = r->rec->flags;
		last_op = r->rec->op;
		last_len = (uint32_t)strlen(buf);
	}
	if (!last_len)
		return 0;
	v->s = buf;
	v->len = last_len;
	v->key = (uint64_t)last_op << 32 | last_flags;
	return 1;
}

static int g_kind(const struct xrow *r, struct pq_val *v)
{
	static const char *const app[] = { NULL, "txn", "span", "backup" };
	const struct iotap_trace_rec *x = r->rec;

	if (x->type == IOTAP_REC_PHASE)
		v->s = x->flags == IOTAP_PHASE_END ? "end" : "begin";
	else if (x->type == IOTAP_REC_APP && iotap_trace_app_kind(x) < 4 &&
		 app[iotap_trace_app_kind(x)])
		v->s = app[iotap_trace_app_kind(x)];
	else if (x->type == IOTAP_REC_NAME)
		v->s = iotap_trace_name_is_link(x) ? "link" : "bind";
	else
		return 0;
	v->len = (uint32_t)strlen(v->s);
	v->key = 0;
	return 1;
}

static int g_dev(const struct xrow *r, struct pq_val *v)
{
	static char buf[32];

	if (r->rec->type != IOTAP_REC_SAMPLE)
		return 0;
	v->len = (uint32_t)snprintf(buf, sizeof(buf), "%u:%u", r->rec->sample.dev_major,
				    r->rec->sample.dev_minor);
	v->s = buf;
	v->key = 0;
	return 1;
}

/* --- the tables ------------------------------------------------------------- */

/* A field of the record, 32 or 64 bits wide; a SAMPLE's counter; a string of the row. */
#define REC(f)		sizeof(((struct iotap_trace_rec *)0)->f) == 4 ? XS_U32 : XS_U64, \
			offsetof(struct iotap_trace_rec, f), NULL
#define SAMPLE(f)	XS_SAMPLE, offsetof(struct iotap_trace_sample, f), NULL
#define ROW(f)		XS_STR, offsetof(struct xrow, f), NULL
#define TIME		XS_TIME, 0, NULL
#define GET(fn)		XS_GET, 0, fn

static const struct xfield calls_f[] = {
	{ "time", PQ_TIMESTAMP_NS, 0, TIME, "start of the call, UTC, ns" },
	{ "host", PQ_STRING, 0, ROW(host), "the traced host (the trace header's)" },
	{ "tid", PQ_INT64, 0, REC(tid), "caller's thread id" },
	{ "pid", PQ_INT64, 0, REC(pid), "caller's process id" },
	{ "uid", PQ_INT64, 0, REC(uid), "caller's fsuid" },
	{ "op", PQ_STRING, 0, GET(g_op), "read, write, fsync, lookup, ... (iotap dump's names)" },
	{ "path", PQ_STRING, 1, ROW(path), "the file's path when the call ran, relative to the\n"
	  "capture's root (. is the root); null: the call names no file" },
	{ "file", PQ_INT64, 0, REC(file), "file id (the backing inode number in a capture)" },
	{ "offset", PQ_INT64, 0, REC(offset), "bytes (read, write, fallocate, ...)" },
	{ "length", PQ_INT64, 0, REC(length), "bytes requested" },
	{ "result", PQ_INT64, 0, REC(result), "bytes done, 0, or -errno" },
	{ "error", PQ_STRING, 1, GET(g_error), "the errno's name (ENOENT) when result < 0" },
	{ "latency_ns", PQ_INT64, 0, REC(dur_ns), "time in the backing file system, ns" },
	{ "flags", PQ_INT64, 0, REC(flags), "the record's flags (open(2) flags for open/create)" },
	{ "flag_names", PQ_STRING, 1, GET(g_flag_names), "direct, sync, datasync, cached, rejected" },
	{ "phase", PQ_STRING, 1, ROW(phase), "the marker phase (iotap mark, iotap run) it started in" },
};

static const struct xfield events_f[] = {
	{ "time", PQ_TIMESTAMP_NS, 0, TIME, "when, UTC, ns" },
	{ "host", PQ_STRING, 0, ROW(host), "the traced host" },
	{ "type", PQ_STRING, 0, GET(g_type), "name, phase, sample, lost, end, note or app" },
	{ "kind", PQ_STRING, 1, GET(g_kind), "name: bind or link; phase: begin or end;\n"
	  "app: txn, span or backup" },
	{ "name", PQ_STRING, 1, ROW(name), "the entry name, phase name, note text or app name" },
	{ "path", PQ_STRING, 1, ROW(path), "name: the path the binding gives" },
	{ "tid", PQ_INT64, 0, REC(tid), "thread id" },
	{ "pid", PQ_INT64, 0, REC(pid), "process id" },
	{ "uid", PQ_INT64, 0, REC(uid), "name: owner; phase: marker's uid" },
	{ "gid", PQ_INT64, 0, REC(gid), "name: group" },
	{ "file", PQ_INT64, 0, REC(file), "name: the file id bound" },
	{ "parent", PQ_INT64, 0, REC(file2), "name: its parent's id" },
	{ "mode", PQ_INT64, 0, REC(mode), "name: st_mode" },
	{ "length", PQ_INT64, 0, REC(length), "name: size; phase: system CPU ns; lost: records\n"
	  "dropped; end: records written; app: per kind (iotap dump)" },
	{ "offset", PQ_INT64, 0, REC(offset), "phase: user CPU ns; app: per kind" },
	{ "aux", PQ_INT64, 0, REC(aux), "end: records lost; app: per kind" },
	{ "dur_ns", PQ_INT64, 0, REC(dur_ns), "app: the unit's duration" },
	{ "flags", PQ_INT64, 0, REC(flags), "the record's flags" },
	{ "dev", PQ_STRING, 1, GET(g_dev), "sample: the backing device, MAJOR:MINOR" },
	{ "rd_ios", PQ_INT64, 1, SAMPLE(rd_ios), "sample: /sys/block stat counters, cumulative" },
	{ "rd_sectors", PQ_INT64, 1, SAMPLE(rd_sectors), NULL },
	{ "wr_ios", PQ_INT64, 1, SAMPLE(wr_ios), NULL },
	{ "wr_sectors", PQ_INT64, 1, SAMPLE(wr_sectors), NULL },
	{ "io_ticks_ms", PQ_INT64, 1, SAMPLE(io_ticks_ms), NULL },
	{ "queue_ms", PQ_INT64, 1, SAMPLE(queue_ms), NULL },
	{ "in_flight", PQ_INT64, 1, SAMPLE(in_flight), NULL },
	{ "proc_user_ns", PQ_INT64, 1, SAMPLE(proc_user_ns), "sample: the recorder's CPU, cumulative" },
	{ "proc_sys_ns", PQ_INT64, 1, SAMPLE(proc_sys_ns), NULL },
	{ "sys_user_ns", PQ_INT64, 1, SAMPLE(sys_user_ns), "sample: all CPUs, cumulative" },
	{ "sys_sys_ns", PQ_INT64, 1, SAMPLE(sys_sys_ns), NULL },
	{ "sys_idle_ns", PQ_INT64, 1, SAMPLE(sys_idle_ns), NULL },
	{ "sys_iowait_ns", PQ_INT64, 1, SAMPLE(sys_iowait_ns), NULL },
	{ "rss_kb", PQ_INT64, 1, SAMPLE(proc_rss_kb), "sample: the recorder's resident set, KiB" },
};

_Static_assert(sizeof(((struct iotap_trace_sample *)0)->rd_ios) == 8 &&
	       sizeof(((struct iotap_trace_sample *)0)->proc_rss_kb) == 8,
	       "XS_SAMPLE reads 64-bit counters");

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

const struct xtable export_calls = { "calls", calls_f, ARRAY_SIZE(calls_f) };
const struct xtable export_events = { "events", events_f, ARRAY_SIZE(events_f) };

void export_print_columns(FILE *f, const struct xtable *t)
{
	static const char *const tn[] = { "BIGINT", "TIMESTAMP_NS", "VARCHAR" };
	unsigned int i;

	for (i = 0; i < t->n; i++) {
		const struct xfield *x = &t->f[i];
		const char *h = x->help ? x->help : "";

		if (!*h) {
			fprintf(f, "  %-14s %s\n", x->name, tn[x->type]);
			continue;
		}
		fprintf(f, "  %-14s %-12s ", x->name, tn[x->type]);
		for (; *h; h++) {
			fputc(*h, f);
			if (*h == '\n')
				fprintf(f, "%30s", "");
		}
		fputc('\n', f);
	}
}

/* --- writers ------------------------------------------------------------------ */

#define CSV_BUF		(1u << 16)
#define CSV_ROW_MAX	(4 * IOTAP_TRACE_NAME_MAX)

struct xout {
	const struct xtable *t;
	enum xformat fmt;
	FILE *f;
	struct pq_writer *pq;
	struct pq_col *cols;
	struct pq_val *vals;		/* a row's values */
	uint64_t rows;
	/* CSV */
	char *buf;
	size_t len;
	int64_t ts_sec;			/* the second ts_text holds */
	char ts_text[24];		/* "YYYY-MM-DD HH:MM:SS." */
	size_t cap;
};

static int csv_flush(struct xout *o)
{
	if (o->len && fwrite(o->buf, 1, o->len, o->f) != o->len)
		return -(errno ? errno : EIO);
	o->len = 0;
	return 0;
}

int xout_open(struct xout **out, const struct xtable *t, enum xformat fmt, FILE *f)
{
	struct xout *o = calloc(1, sizeof(*o));
	unsigned int i;
	int ret;

	if (!o)
		return -ENOMEM;
	str_tables_init();
	o->t = t;
	o->fmt = fmt;
	o->f = f;
	o->ts_sec = INT64_MIN;
	if (fmt == X_PARQUET) {
		o->cols = calloc(t->n, sizeof(*o->cols));
		o->vals = calloc(t->n, sizeof(*o->vals));
		if (!o->cols || !o->vals) {
			free(o->cols);
			free(o->vals);
			free(o);
			return -ENOMEM;
		}
		for (i = 0; i < t->n; i++) {
			o->cols[i].name = t->f[i].name;
			o->cols[i].type = t->f[i].type;
			o->cols[i].optional = t->f[i].optional;
		}
		ret = pq_open(&o->pq, f, o->cols, t->n, "iotap version " IOTAP_VERSION);
		if (ret) {
			free(o->cols);
			free(o->vals);
			free(o);
			return ret;
		}
		*out = o;
		return 0;
	}
	o->cap = CSV_BUF + 2 * (size_t)CSV_ROW_MAX;
	o->buf = malloc(o->cap);
	if (!o->buf) {
		free(o);
		return -ENOMEM;
	}
	for (i = 0; i < t->n; i++) {
		size_t n = strlen(t->f[i].name);

		if (i)
			o->buf[o->len++] = ',';
		memcpy(o->buf + o->len, t->f[i].name, n);
		o->len += n;
	}
	o->buf[o->len++] = '\n';
	*out = o;
	return 0;
}

static char *csv_time(struct xout *o, char *p, int64_t ns)
{
	int64_t sec = ns >= 0 ? ns / 1000000000 : -((-ns + 999999999) / 1000000000);
	int64_t frac = ns - sec * 1000000000;
	int k;

	if (sec != o->ts_sec) {
		time_t tt = (time_t)sec;
		struct tm tm;

		gmtime_r(&tt, &tm);
		strftime(o->ts_text, sizeof(o->ts_text), "%Y-%m-%d %H:%M:%S.", &tm);
		o->ts_sec = sec;
	}
	p = memcpy(p, o->ts_text, strlen(o->ts_text)) + strlen(o->ts_text);
	for (k = 8; k >= 0; k--, frac /= 10)
		p[k] = (char)('0' + frac % 10);
	return p + 9;
}

static char *csv_str(char *p, const char *s, uint32_t len)
{
	uint32_t i;
	bool quote = false;

	for (i = 0; i < len && !quote; i++)
		quote = s[i] == ',' || s[i] == '"' || s[i] == '\n' || s[i] == '\r';
	if (!quote) {
		memcpy(p, s, len);
		return p + len;
	}
	*p++ = '"';
	for (i = 0; i < len; i++) {
		if (s[i] == '"')
			*p++ = '"';
		*p++ = s[i];
	}
	*p++ = '"';
	return p;
}

/* @x's value for @r into @v; v->null: none in an optional column (else 0 or ""). */
static inline void value_of(const struct xfield *x, const struct xrow *r, struct pq_val *v)
{
	const char *rec = (const char *)r->rec;
	const struct xstr *xs;
	uint64_t u64;
	uint32_t u32;

	v->null = false;
	switch (x->src) {
	case XS_U32:
		memcpy(&u32, rec + x->off, 4);
		v->i = u32;
		return;
	case XS_U64:
		memcpy(&u64, rec + x->off, 8);
		v->i = (int64_t)u64;
		return;
	case XS_TIME:
		v->i = (int64_t)(r->real_base + (r->rec->time_ns - r->mono_base));
		return;
	case XS_STR:
		xs = (const struct xstr *)((const char *)r + x->off);
		v->s = xs->s;
		v->len = xs->len;
		v->key = xs->key;
		if (xs->s)
			return;
		break;
	case XS_SAMPLE:
		if (r->rec->type != IOTAP_REC_SAMPLE)
			break;
		memcpy(&u64, (const char *)&r->rec->sample + x->off, 8);
		v->i = (int64_t)u64;
		return;
	case XS_GET:
		if (x->get(r, v))
			return;
		break;
	}
	if (x->optional) {
		v->null = true;
		return;
	}
	v->i = 0;
	v->s = "";
	v->len = 0;
	v->key = 0;
}

int xout_row(struct xout *o, const struct xrow *r)
{
	const struct xtable *t = o->t;
	const struct xfield *x, *end = t->f + t->n;
	struct pq_val v;
	char *p;
	int ret;

	o->rows++;
	if (o->fmt == X_PARQUET) {
		struct pq_val *pv = o->vals;

		for (x = t->f; x < end; x++, pv++)
			value_of(x, r, pv);
		return pq_put_row(o->pq, o->vals);
	}
	if (o->len > CSV_BUF) {
		ret = csv_flush(o);
		if (ret)
			return ret;
	}
	p = o->buf + o->len;
	for (x = t->f; x < end; x++) {
		if (x > t->f)
			*p++ = ',';
		value_of(x, r, &v);
		if (v.null)
			continue;
		if (x->type == PQ_STRING)
			p = csv_str(p, v.s, v.len < IOTAP_TRACE_NAME_MAX ? v.len
									: IOTAP_TRACE_NAME_MAX);
		else if (x->type == PQ_TIMESTAMP_NS)
			p = csv_time(o, p, v.i);
		else
			p = iotap_fmt_i64(p, v.i);
	}
	*p++ = '\n';
	o->len = (size_t)(p - o->buf);
	return 0;
}

uint64_t xout_rows(const struct xout *o)
{
	return o->rows;
}

int xout_close(struct xout *o, const struct pq_kv *kv, unsigned int nkv)
{
	int ret;

	if (o->fmt == X_PARQUET) {
		ret = pq_close(o->pq, kv, nkv);
		free(o->cols);
		free(o->vals);
	} else {
		ret = csv_flush(o);
		free(o->buf);
	}
	free(o);
	return ret;
}
