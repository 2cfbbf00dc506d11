// SPDX-License-Identifier: MIT
/*
 * export.c - the columns of iotap export's two tables, and their writers
 *
 * Each table is an array of struct xfield: a column is one row here, and
 * the Parquet schema, the CSV header, the values of both formats and the
 * --help list all come from it, so the two formats agree column for
 * column. Getters see one record (struct xrow) and give an integer or a
 * string, or say null.
 *
 * CSV renders a TIMESTAMP as "YYYY-MM-DD HH:MM:SS.nnnnnnnnn" (UTC; DuckDB
 * and Spark read it as a timestamp), integers in decimal, strings quoted
 * when they hold a comma, quote, CR or LF (a quote doubled), null as an
 * empty field.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config.h"
#include "export.h"
#include "iotap_base.h"

/* --- getters ---------------------------------------------------------------- */

static int g_time(const struct xrow *r, struct xval *v)
{
	v->i = (int64_t)(r->real_base + (r->rec->time_ns - r->mono_base));
	return 1;
}

static int g_host(const struct xrow *r, struct xval *v)
{
	v->s = r->host;
	v->len = r->host_len;
	return 1;
}

#define INT_GETTER(fn, expr) \
	static int fn(const struct xrow *r, struct xval *v) \
	{ \
		v->i = (int64_t)(expr); \
		return 1; \
	}

INT_GETTER(g_tid, r->rec->tid)
INT_GETTER(g_pid, r->rec->pid)
INT_GETTER(g_uid, r->rec->uid)
INT_GETTER(g_gid, r->rec->gid)
INT_GETTER(g_file, r->rec->file)
INT_GETTER(g_file2, r->rec->file2)
INT_GETTER(g_offset, r->rec->offset)
INT_GETTER(g_length, r->rec->length)
INT_GETTER(g_result, r->rec->result)
INT_GETTER(g_dur, r->rec->dur_ns)
INT_GETTER(g_flags, r->rec->flags)
INT_GETTER(g_mode, r->rec->mode)
INT_GETTER(g_aux, r->rec->aux)

/* Op names and their lengths, looked up once: a pointer the dictionary knows again. */
static struct {
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

static int g_op(const struct xrow *r, struct xval *v)
{
	unsigned int op = r->rec->op;

	if (op < IOTAP_OP_MAX) {
		v->s = op_str[op].s;
		v->len = op_str[op].len;
	} else {
		v->s = "?";
		v->len = 1;
	}
	return 1;
}

static int g_path(const struct xrow *r, struct xval *v)
{
	if (!r->path->path)
		return 0;
	v->s = r->path->path;
	v->len = r->path->len;
	return 1;
}

static int g_error(const struct xrow *r, struct xval *v)
{
	const char *en;

	if (r->rec->result >= 0 || r->rec->result <= -4096)
		return 0;
	en = strerrorname_np((int)-r->rec->result);
	v->s = en ? en : "?";
	v->len = (uint32_t)strlen(v->s);
	return 1;
}

static int g_flag_names(const struct xrow *r, struct xval *v)
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
	return 1;
}

static int g_phase(const struct xrow *r, struct xval *v)
{
	if (!r->phase)
		return 0;
	v->s = r->phase;
	v->len = r->phase_len;
	return 1;
}

static int g_type(const struct xrow *r, struct xval *v)
{
	unsigned int t = r->rec->type;

	v->s = t < IOTAP_REC_TYPE_MAX ? type_str[t].s : "?";
	v->len = t < IOTAP_REC_TYPE_MAX ? type_str[t].len : 1;
	return 1;
}

static int g_name(const struct xrow *r, struct xval *v)
{
	if (!r->rec->name)
		return 0;
	v->s = r->rec->name;
	v->len = r->rec->name_len;
	return 1;
}

static int g_kind(const struct xrow *r, struct xval *v)
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
	return 1;
}

#define SAMPLE_GETTER(fn, field) \
	static int fn(const struct xrow *r, struct xval *v) \
	{ \
		if (r->rec->type != IOTAP_REC_SAMPLE) \
			return 0; \
		v->i = (int64_t)r->rec->sample.field; \
		return 1; \
	}

SAMPLE_GETTER(g_rd_ios, rd_ios)
SAMPLE_GETTER(g_rd_sectors, rd_sectors)
SAMPLE_GETTER(g_wr_ios, wr_ios)
SAMPLE_GETTER(g_wr_sectors, wr_sectors)
SAMPLE_GETTER(g_io_ticks, io_ticks_ms)
SAMPLE_GETTER(g_queue, queue_ms)
SAMPLE_GETTER(g_in_flight, in_flight)
SAMPLE_GETTER(g_proc_user, proc_user_ns)
SAMPLE_GETTER(g_proc_sys, proc_sys_ns)
SAMPLE_GETTER(g_sys_user, sys_user_ns)
SAMPLE_GETTER(g_sys_sys, sys_sys_ns)
SAMPLE_GETTER(g_sys_idle, sys_idle_ns)
SAMPLE_GETTER(g_sys_iowait, sys_iowait_ns)
SAMPLE_GETTER(g_rss, proc_rss_kb)

static int g_dev(const struct xrow *r, struct xval *v)
{
	static char buf[32];

	if (r->rec->type != IOTAP_REC_SAMPLE)
		return 0;
	v->len = (uint32_t)snprintf(buf, sizeof(buf), "%u:%u", r->rec->sample.dev_major,
				    r->rec->sample.dev_minor);
	v->s = buf;
	return 1;
}

/* --- the tables ------------------------------------------------------------- */

static const struct xfield calls_f[] = {
	{ "time", PQ_TIMESTAMP_NS, 0, g_time, "start of the call, UTC, ns" },
	{ "host", PQ_STRING, 0, g_host, "the traced host (the trace header's)" },
	{ "tid", PQ_INT64, 0, g_tid, "caller's thread id" },
	{ "pid", PQ_INT64, 0, g_pid, "caller's process id" },
	{ "uid", PQ_INT64, 0, g_uid, "caller's fsuid" },
	{ "op", PQ_STRING, 0, g_op, "read, write, fsync, lookup, ... (iotap dump's names)" },
	{ "path", PQ_STRING, 1, g_path, "the file's path when the call ran, relative to the\n"
	  "capture's root (. is the root); null: the call names no file" },
	{ "file", PQ_INT64, 0, g_file, "file id (the backing inode number in a capture)" },
	{ "offset", PQ_INT64, 0, g_offset, "bytes (read, write, fallocate, ...)" },
	{ "length", PQ_INT64, 0, g_length, "bytes requested" },
	{ "result", PQ_INT64, 0, g_result, "bytes done, 0, or -errno" },
	{ "error", PQ_STRING, 1, g_error, "the errno's name (ENOENT) when result < 0" },
	{ "latency_ns", PQ_INT64, 0, g_dur, "time in the backing file system, ns" },
	{ "flags", PQ_INT64, 0, g_flags, "the record's flags (open(2) flags for open/create)" },
	{ "flag_names", PQ_STRING, 1, g_flag_names, "direct, sync, datasync, cached, rejected" },
	{ "phase", PQ_STRING, 1, g_phase, "the marker phase (iotap mark, iotap run) it started in" },
};

static const struct xfield events_f[] = {
	{ "time", PQ_TIMESTAMP_NS, 0, g_time, "when, UTC, ns" },
	{ "host", PQ_STRING, 0, g_host, "the traced host" },
	{ "type", PQ_STRING, 0, g_type, "name, phase, sample, lost, end, note or app" },
	{ "kind", PQ_STRING, 1, g_kind, "name: bind or link; phase: begin or end;\n"
	  "app: txn, span or backup" },
	{ "name", PQ_STRING, 1, g_name, "the entry name, phase name, note text or app name" },
	{ "path", PQ_STRING, 1, g_path, "name: the path the binding gives" },
	{ "tid", PQ_INT64, 0, g_tid, "thread id" },
	{ "pid", PQ_INT64, 0, g_pid, "process id" },
	{ "uid", PQ_INT64, 0, g_uid, "name: owner; phase: marker's uid" },
	{ "gid", PQ_INT64, 0, g_gid, "name: group" },
	{ "file", PQ_INT64, 0, g_file, "name: the file id bound" },
	{ "parent", PQ_INT64, 0, g_file2, "name: its parent's id" },
	{ "mode", PQ_INT64, 0, g_mode, "name: st_mode" },
	{ "length", PQ_INT64, 0, g_length, "name: size; phase: system CPU ns; lost: records\n"
	  "dropped; end: records written; app: per kind (iotap dump)" },
	{ "offset", PQ_INT64, 0, g_offset, "phase: user CPU ns; app: per kind" },
	{ "aux", PQ_INT64, 0, g_aux, "end: records lost; app: per kind" },
	{ "dur_ns", PQ_INT64, 0, g_dur, "app: the unit's duration" },
	{ "flags", PQ_INT64, 0, g_flags, "the record's flags" },
	{ "dev", PQ_STRING, 1, g_dev, "sample: the backing device, MAJOR:MINOR" },
	{ "rd_ios", PQ_INT64, 1, g_rd_ios, "sample: /sys/block stat counters, cumulative" },
	{ "rd_sectors", PQ_INT64, 1, g_rd_sectors, NULL },
	{ "wr_ios", PQ_INT64, 1, g_wr_ios, NULL },
	{ "wr_sectors", PQ_INT64, 1, g_wr_sectors, NULL },
	{ "io_ticks_ms", PQ_INT64, 1, g_io_ticks, NULL },
	{ "queue_ms", PQ_INT64, 1, g_queue, NULL },
	{ "in_flight", PQ_INT64, 1, g_in_flight, NULL },
	{ "proc_user_ns", PQ_INT64, 1, g_proc_user, "sample: the recorder's CPU, cumulative" },
	{ "proc_sys_ns", PQ_INT64, 1, g_proc_sys, NULL },
	{ "sys_user_ns", PQ_INT64, 1, g_sys_user, "sample: all CPUs, cumulative" },
	{ "sys_sys_ns", PQ_INT64, 1, g_sys_sys, NULL },
	{ "sys_idle_ns", PQ_INT64, 1, g_sys_idle, NULL },
	{ "sys_iowait_ns", PQ_INT64, 1, g_sys_iowait, NULL },
	{ "rss_kb", PQ_INT64, 1, g_rss, "sample: the recorder's resident set, KiB" },
};

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
		if (!o->cols) {
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

/* @x's value for @r; 0: null. A required column has none: 0 or "" then. */
static inline int value_of(const struct xfield *x, const struct xrow *r, struct xval *v)
{
	if (x->get(r, v))
		return 1;
	if (x->optional)
		return 0;
	v->i = 0;
	v->s = "";
	v->len = 0;
	return 1;
}

int xout_row(struct xout *o, const struct xrow *r)
{
	const struct xtable *t = o->t;
	struct xval v;
	unsigned int i;
	char *p;
	int ret;

	o->rows++;
	if (o->fmt == X_PARQUET) {
		for (i = 0; i < t->n; i++) {
			const struct xfield *x = &t->f[i];

			if (!value_of(x, r, &v))
				pq_put_null(o->pq, i);
			else if (x->type == PQ_STRING)
				pq_put_str(o->pq, i, v.s, v.len);
			else
				pq_put_i64(o->pq, i, v.i);
		}
		return pq_row(o->pq);
	}
	if (o->len > CSV_BUF) {
		ret = csv_flush(o);
		if (ret)
			return ret;
	}
	p = o->buf + o->len;
	for (i = 0; i < t->n; i++) {
		const struct xfield *x = &t->f[i];

		if (i)
			*p++ = ',';
		if (!value_of(x, r, &v))
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
	} else {
		ret = csv_flush(o);
		free(o->buf);
	}
	free(o);
	return ret;
}
