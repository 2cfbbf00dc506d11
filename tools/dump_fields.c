// SPDX-License-Identifier: MIT
/*
 * dump_fields.c - the fields of `iotap dump`'s text, CSV and JSON: one table
 *
 * Each row of dump_fields[] is one field: its key, the record kinds whose
 * JSON object (jk) and text line (tk) have it, its CSV column (every record
 * has every column; an absent value is an empty cell), its place on a text
 * line, its getter and how it prints. Rows are in JSON order; CSV and text
 * take theirs from the column and place numbers. A key may have two rows
 * where kinds place it differently (uid of an OP and of a NAME).
 *
 * These writers are the reference: the fast paths (dump_fast.c) print the
 * same bytes for the records they take, and test_dump checks that they do
 * on every kind and edge value. The values print as the fprintf code that
 * preceded the table did: %.9f of a double for times, json-c for JSON.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "dump_fields.h"
#include "iotap_analysis.h"

/* The kinds the table tells apart: a record's type, an APP record's kind too. */
enum {
	DK_UNKNOWN = 0,
	DK_OP = IOTAP_REC_OP,
	DK_NAME = IOTAP_REC_NAME,
	DK_PHASE = IOTAP_REC_PHASE,
	DK_SAMPLE = IOTAP_REC_SAMPLE,
	DK_LOST = IOTAP_REC_LOST,
	DK_END = IOTAP_REC_END,
	DK_NOTE = IOTAP_REC_NOTE,
	DK_APP = IOTAP_REC_APP,		/* of an unknown kind; the kinds follow */
	DK_APP_TXN = DK_APP + IOTAP_APP_TXN,
	DK_APP_SPAN = DK_APP + IOTAP_APP_SPAN,
	DK_APP_BACKUP = DK_APP + IOTAP_APP_BACKUP,
	DK_MAX
};

#define K(k)		(1u << DK_##k)
#define K_APP		(K(APP) | K(APP_TXN) | K(APP_SPAN) | K(APP_BACKUP))
#define K_ALL		((1u << DK_MAX) - 1)

static unsigned int dump_kind(const struct iotap_trace_rec *r)
{
	if (r->type == IOTAP_REC_APP)
		return DK_APP + (iotap_trace_app_kind(r) <= IOTAP_APP_BACKUP ?
				 iotap_trace_app_kind(r) : 0);
	return r->type < IOTAP_REC_APP ? r->type : DK_UNKNOWN;
}

/* A value, as its getter found it. */
struct dump_val {
	uint64_t u;			/* V_U64, V_US, V_DEV (major << 32 | minor) */
	int64_t i;			/* V_I64, V_SEC (ns since the trace's base) */
	const char *s;			/* V_STR (NUL-terminated), V_NAME (len bytes) */
	uint32_t len;
	char buf[IOTAP_OPF_NAMES_MAX];	/* room for a getter's string */
};

/* How a value prints in JSON and CSV (and text, but for the t_ styles). */
enum {
	V_U64,		/* decimal */
	V_I64,
	V_SEC,		/* seconds, 9 decimals */
	V_US,		/* ns as microseconds, 3 decimals */
	V_STR,
	V_NAME,		/* text: quoted and escaped; CSV: quoted; JSON: a string */
	V_DEV,		/* major:minor */
	V_TRUE,		/* text 1, JSON true */
};

/* Text styles besides the value's own. */
enum {
	T_SAME,
	T_OCT,		/* 0755 */
	T_HEX,		/* 0x1f */
	T_HEX_OPF,	/* 0x1f(direct|cut): an OP's flags with their names */
};

#define F_TNZ		1	/* text: left out when zero */
#define F_JNZ		2	/* JSON: left out when zero */

typedef int (*dump_get_fn)(const struct iotap_trace_rec *r, uint64_t base, struct dump_val *v);

struct dump_field {
	const char *key;		/* JSON key and CSV column */
	const char *tkey;		/* text key; NULL: key; "": a column without key */
	uint16_t jk, tk;		/* kinds (K()) with it in JSON, in text */
	uint8_t csv;			/* CSV column, from 1; 0: none */
	uint8_t tpos;			/* place on a text line, ascending */
	uint8_t val, tfmt, flags;
	dump_get_fn get;
};

/* --- getters ---------------------------------------------------------------------------- */

#define GET(fn, field, expr)									\
	static int fn(const struct iotap_trace_rec *r, uint64_t base, struct dump_val *v)	\
	{											\
		(void)base;									\
		v->field = (expr);								\
		return 1;									\
	}

GET(g_time, i, (int64_t)(r->time_ns - base))
GET(g_tid, u, r->tid)
GET(g_pid, u, r->pid)
GET(g_uid, u, r->uid)
GET(g_gid, u, r->gid)
GET(g_file, u, r->file)
GET(g_fh, u, r->fh)
GET(g_offset, u, r->offset)
GET(g_length, u, r->length)
GET(g_result, i, r->result)
GET(g_dur, u, r->dur_ns)
GET(g_file2, u, r->file2)
GET(g_flags, u, r->flags)
GET(g_mode, u, r->mode)
GET(g_aux, u, r->aux)
GET(g_type, s, iotap_trace_rec_type_name(r->type))
GET(g_parent, u, iotap_trace_name_parent(r))
GET(g_size, u, iotap_trace_name_size(r))
GET(g_cpu_user, u, iotap_trace_phase_cpu_user_ns(r))
GET(g_cpu_sys, u, iotap_trace_phase_cpu_sys_ns(r))
GET(g_unit_max, u, iotap_trace_phase_unit_max_ns(r))
GET(g_lost_count, u, iotap_trace_lost_count(r))
GET(g_end_records, u, iotap_trace_end_records(r))
GET(g_end_lost, u, iotap_trace_end_lost(r))
GET(g_app_dur, u, iotap_trace_app_dur_ns(r))
GET(g_app_lag, u, iotap_trace_app_txn_lag_ns(r))
GET(g_app_start, i, (int64_t)(iotap_trace_app_span_start_ns(r) - base))

static int g_link(const struct iotap_trace_rec *r, uint64_t base, struct dump_val *v)
{
	(void)base;
	(void)v;
	return iotap_trace_name_is_link(r);
}

static int g_name(const struct iotap_trace_rec *r, uint64_t base, struct dump_val *v)
{
	(void)base;
	v->s = r->name;
	v->len = r->name_len;
	return !!r->name;
}

static int g_op(const struct iotap_trace_rec *r, uint64_t base, struct dump_val *v)
{
	(void)base;
	v->s = dump_op_name(r);
	return !!*v->s;
}

/* The text's fourth column: an OP's op, the TYPE of any other record. */
static int g_op_or_type(const struct iotap_trace_rec *r, uint64_t base, struct dump_val *v)
{
	const char *tn;
	size_t i;

	(void)base;
	if (r->type == IOTAP_REC_OP) {
		v->s = iotap_trace_op_name(r->op);
		return 1;
	}
	tn = iotap_trace_rec_type_name(r->type);
	for (i = 0; tn[i] && i < 15; i++)
		v->buf[i] = (char)(tn[i] >= 'a' && tn[i] <= 'z' ? tn[i] - 32 : tn[i]);
	v->buf[i] = '\0';
	v->s = v->buf;
	return 1;
}

static int g_error(const struct iotap_trace_rec *r, uint64_t base, struct dump_val *v)
{
	(void)base;
	v->s = dump_err_name(r);
	return !!*v->s;
}

/* The text's err=: "?" for a -errno that has no name. */
static int g_text_err(const struct iotap_trace_rec *r, uint64_t base, struct dump_val *v)
{
	(void)base;
	if (r->result >= 0 || r->result <= -4096)
		return 0;
	v->s = strerrorname_np((int)-r->result);
	if (!v->s)
		v->s = "?";
	return 1;
}

static int g_flag_names(const struct iotap_trace_rec *r, uint64_t base, struct dump_val *v)
{
	(void)base;
	v->s = dump_opf_names(r, v->buf);
	return !!*v->s;
}

static int g_app_kind(const struct iotap_trace_rec *r, uint64_t base, struct dump_val *v)
{
	static const char *const kinds[] = { "?", "txn", "span", "backup" };
	unsigned int k = iotap_trace_app_kind(r);

	(void)base;
	v->s = kinds[k < 4 ? k : 0];
	return 1;
}

#define GET_BACKUP(fn, field)									\
	static int fn(const struct iotap_trace_rec *r, uint64_t base, struct dump_val *v)	\
	{											\
		struct iotap_trace_app_backup b;						\
												\
		(void)base;									\
		iotap_trace_app_backup_get(r, &b);						\
		v->u = b.field;									\
		return 1;									\
	}

GET_BACKUP(g_bk_logical, logical)
GET_BACKUP(g_bk_lookups, lookups)
GET_BACKUP(g_bk_hits, hits)
GET_BACKUP(g_bk_segments, segments)
GET_BACKUP(g_bk_fresh, fresh)
GET_BACKUP(g_bk_stored, stored)

/* A SAMPLE's values; other records have none (and no sample to read). */
static int g_dev(const struct iotap_trace_rec *r, uint64_t base, struct dump_val *v)
{
	(void)base;
	if (r->type != IOTAP_REC_SAMPLE)
		return 0;
	v->u = (uint64_t)r->sample.dev_major << 32 | r->sample.dev_minor;
	return 1;
}

#define GET_SAMPLE(fn, field)									\
	static int fn(const struct iotap_trace_rec *r, uint64_t base, struct dump_val *v)	\
	{											\
		(void)base;									\
		if (r->type != IOTAP_REC_SAMPLE)						\
			return 0;								\
		v->u = r->sample.field;								\
		return 1;									\
	}

GET_SAMPLE(g_rd_ios, rd_ios)
GET_SAMPLE(g_rd_sectors, rd_sectors)
GET_SAMPLE(g_wr_ios, wr_ios)
GET_SAMPLE(g_wr_sectors, wr_sectors)
GET_SAMPLE(g_io_ticks, io_ticks_ms)
GET_SAMPLE(g_queue, queue_ms)
GET_SAMPLE(g_in_flight, in_flight)
GET_SAMPLE(g_proc_user, proc_user_ns)
GET_SAMPLE(g_proc_sys, proc_sys_ns)
GET_SAMPLE(g_sys_user, sys_user_ns)
GET_SAMPLE(g_sys_sys, sys_sys_ns)
GET_SAMPLE(g_sys_idle, sys_idle_ns)
GET_SAMPLE(g_sys_iowait, sys_iowait_ns)
GET_SAMPLE(g_rss, proc_rss_kb)

/* --- the table -------------------------------------------------------------------------- */

#define K_OP_NAME_PHASE_APP	(K(OP) | K(NAME) | K(PHASE) | K_APP)

static const struct dump_field dump_fields[] = {
	/* key		tkey	JSON kinds	text kinds	CSV text value	text style flags getter */
	{ "time_s",	"",	K_ALL,		K_ALL,		1,  1,  V_SEC,	T_SAME,	0, g_time },
	{ "type",	NULL,	K_ALL,		0,		2,  0,  V_STR,	T_SAME,	0, g_type },
	{ "op",		"",	K_ALL,		K(PHASE),	3,  5,  V_STR,	T_SAME,	0, g_op },
	{ "tid",	"",	K_ALL,		K_ALL,		4,  2,  V_U64,	T_SAME,	0, g_tid },
	{ "pid",	"",	K_ALL,		K_ALL,		5,  3,  V_U64,	T_SAME,	0, g_pid },
	{ "op",		"",	0,		K_ALL,		0,  4,  V_STR,	T_SAME,	0, g_op_or_type },
	{ "uid",	NULL,	K(OP),		K(OP),		6,  18, V_U64,	T_SAME,	0, g_uid },
	{ "gid",	NULL,	K(OP),		K(OP),		7,  19, V_U64,	T_SAME,	0, g_gid },
	{ "file",	"",	K(OP),		K(OP),		8,  6,  V_U64,	T_SAME,	0, g_file },
	{ "file",	NULL,	K(NAME),	K(NAME),	0,  20, V_U64,	T_SAME,	0, g_file },
	{ "parent",	NULL,	K(NAME),	K(NAME),	0,  21, V_U64,	T_SAME,	0, g_parent },
	{ "mode",	NULL,	K(NAME),	K(NAME),	0,  22, V_U64,	T_OCT,	0, g_mode },
	{ "size",	NULL,	K(NAME),	K(NAME),	0,  23, V_U64,	T_SAME,	0, g_size },
	{ "uid",	NULL,	K(NAME),	K(NAME),	0,  24, V_U64,	T_SAME,	0, g_uid },
	{ "gid",	NULL,	K(NAME),	K(NAME),	0,  25, V_U64,	T_SAME,	0, g_gid },
	{ "link",	NULL,	K(NAME),	K(NAME),	0,  26, V_TRUE,	T_SAME,	0, g_link },
	{ "fh",		NULL,	K(OP),		K(OP),		9,  13, V_U64,	T_SAME,	F_TNZ, g_fh },
	{ "offset",	"",	K(OP),		K(OP),		10, 7,  V_U64,	T_SAME,	0, g_offset },
	{ "length",	"",	K(OP),		K(OP),		11, 8,  V_U64,	T_SAME,	0, g_length },
	{ "result",	"",	K(OP),		K(OP),		12, 9,  V_I64,	T_SAME,	0, g_result },
	{ "error",	NULL,	K(OP),		0,		13, 0,  V_STR,	T_SAME,	0, g_error },
	{ "lat_us",	"",	K(OP),		K(OP),		14, 10, V_US,	T_SAME,	0, g_dur },
	{ "err",	NULL,	0,		K(OP),		0,  12, V_STR,	T_SAME,	0, g_text_err },
	{ "file2",	NULL,	K(OP),		K(OP),		15, 14, V_U64,	T_SAME,	F_TNZ | F_JNZ, g_file2 },
	{ "flags",	NULL,	K(OP),		K(OP),		16, 15, V_U64,	T_HEX_OPF, F_TNZ, g_flags },
	{ "flag_names",	NULL,	K(OP),		0,		35, 0,  V_STR,	T_SAME,	0, g_flag_names },
	{ "mode",	NULL,	K(OP),		K(OP),		17, 16, V_U64,	T_OCT,	F_TNZ | F_JNZ, g_mode },
	{ "aux",	NULL,	K(OP),		K(OP),		18, 17, V_U64,	T_SAME,	F_TNZ | F_JNZ, g_aux },
	{ "kind",	NULL,	0,		K_APP,		0,  30, V_STR,	T_SAME,	0, g_app_kind },
	{ "dur_us",	NULL,	0,		K_APP,		0,  31, V_US,	T_SAME,	0, g_app_dur },
	{ "flags",	NULL,	0,		K_APP,		0,  32, V_U64,	T_HEX,	0, g_flags },
	{ "lag_us",	NULL,	0,		K(APP_TXN),	0,  33, V_US,	T_SAME,	F_TNZ, g_app_lag },
	{ "start_s",	NULL,	0,		K(APP_SPAN),	0,  34, V_SEC,	T_SAME,	0, g_app_start },
	{ "logical",	NULL,	0,		K(APP_BACKUP),	0,  35, V_U64,	T_SAME,	0, g_bk_logical },
	{ "lookups",	NULL,	0,		K(APP_BACKUP),	0,  36, V_U64,	T_SAME,	0, g_bk_lookups },
	{ "hits",	NULL,	0,		K(APP_BACKUP),	0,  37, V_U64,	T_SAME,	0, g_bk_hits },
	{ "segments",	NULL,	0,		K(APP_BACKUP),	0,  38, V_U64,	T_SAME,	0, g_bk_segments },
	{ "new",	NULL,	0,		K(APP_BACKUP),	0,  39, V_U64,	T_SAME,	0, g_bk_fresh },
	{ "stored",	NULL,	0,		K(APP_BACKUP),	0,  40, V_U64,	T_SAME,	0, g_bk_stored },
	{ "cpu_user_ns", NULL,	K(PHASE),	K(PHASE),	0,  61, V_U64,	T_SAME,	0, g_cpu_user },
	{ "cpu_sys_ns",	NULL,	K(PHASE),	K(PHASE),	0,  62, V_U64,	T_SAME,	0, g_cpu_sys },
	{ "aux",	NULL,	K(PHASE),	K(PHASE),	0,  63, V_U64,	T_SAME,	F_TNZ | F_JNZ, g_unit_max },
	{ "dev",	NULL,	K(SAMPLE),	K(SAMPLE),	20, 41, V_DEV,	T_SAME,	0, g_dev },
	{ "rd_ios",	NULL,	K(SAMPLE),	K(SAMPLE),	21, 42, V_U64,	T_SAME,	0, g_rd_ios },
	{ "rd_sectors",	NULL,	K(SAMPLE),	K(SAMPLE),	22, 43, V_U64,	T_SAME,	0, g_rd_sectors },
	{ "wr_ios",	NULL,	K(SAMPLE),	K(SAMPLE),	23, 44, V_U64,	T_SAME,	0, g_wr_ios },
	{ "wr_sectors",	NULL,	K(SAMPLE),	K(SAMPLE),	24, 45, V_U64,	T_SAME,	0, g_wr_sectors },
	{ "io_ticks_ms", NULL,	K(SAMPLE),	K(SAMPLE),	25, 46, V_U64,	T_SAME,	0, g_io_ticks },
	{ "queue_ms",	NULL,	K(SAMPLE),	K(SAMPLE),	26, 47, V_U64,	T_SAME,	0, g_queue },
	{ "in_flight",	NULL,	K(SAMPLE),	K(SAMPLE),	27, 48, V_U64,	T_SAME,	0, g_in_flight },
	{ "proc_user_ns", NULL,	K(SAMPLE),	K(SAMPLE),	28, 49, V_U64,	T_SAME,	0, g_proc_user },
	{ "proc_sys_ns", NULL,	K(SAMPLE),	K(SAMPLE),	29, 50, V_U64,	T_SAME,	0, g_proc_sys },
	{ "sys_user_ns", NULL,	K(SAMPLE),	K(SAMPLE),	30, 51, V_U64,	T_SAME,	0, g_sys_user },
	{ "sys_sys_ns",	NULL,	K(SAMPLE),	K(SAMPLE),	31, 52, V_U64,	T_SAME,	0, g_sys_sys },
	{ "sys_idle_ns", NULL,	K(SAMPLE),	K(SAMPLE),	32, 53, V_U64,	T_SAME,	0, g_sys_idle },
	{ "sys_iowait_ns", NULL, K(SAMPLE),	K(SAMPLE),	33, 54, V_U64,	T_SAME,	0, g_sys_iowait },
	{ "rss_kb",	NULL,	K(SAMPLE),	K(SAMPLE),	34, 55, V_U64,	T_SAME,	0, g_rss },
	{ "count",	NULL,	K(LOST),	K(LOST),	0,  56, V_U64,	T_SAME,	0, g_lost_count },
	{ "records",	NULL,	K(END),		K(END),		0,  57, V_U64,	T_SAME,	0, g_end_records },
	{ "lost",	NULL,	K(END),		K(END),		0,  58, V_U64,	T_SAME,	0, g_end_lost },
	{ "name",	NULL,	K_ALL & ~K(NOTE), K_OP_NAME_PHASE_APP, 19, 60, V_NAME, T_SAME, 0, g_name },
	{ "text",	NULL,	K(NOTE),	K(NOTE),	0,  64, V_NAME,	T_SAME,	0, g_name },
};

#define NFIELDS		(sizeof(dump_fields) / sizeof(dump_fields[0]))

/*
 * Each kind's rows in JSON and in text order, and the rows in CSV order
 * (dump_fields_order()), NULL-terminated: a line visits only its rows.
 */
static const struct dump_field *json_rows[DK_MAX][NFIELDS + 1], *text_rows[DK_MAX][NFIELDS + 1];
static const struct dump_field *csv_order[NFIELDS + 1];

static int by_tpos(const void *a, const void *b)
{
	const struct dump_field *x = *(const struct dump_field *const *)a;
	const struct dump_field *y = *(const struct dump_field *const *)b;

	return (x->tpos > y->tpos) - (x->tpos < y->tpos);
}

static int by_csv(const void *a, const void *b)
{
	const struct dump_field *x = *(const struct dump_field *const *)a;
	const struct dump_field *y = *(const struct dump_field *const *)b;

	return (x->csv > y->csv) - (x->csv < y->csv);
}

static void dump_fields_order(void)
{
	static int done;
	size_t i, k, nj, nt, nc = 0;

	if (done)
		return;
	done = 1;
	for (k = 0; k < DK_MAX; k++) {
		nj = nt = 0;
		for (i = 0; i < NFIELDS; i++) {
			if (dump_fields[i].jk & (1u << k))
				json_rows[k][nj++] = &dump_fields[i];
			if (dump_fields[i].tk & (1u << k))
				text_rows[k][nt++] = &dump_fields[i];
		}
		qsort(text_rows[k], nt, sizeof(text_rows[k][0]), by_tpos);
	}
	for (i = 0; i < NFIELDS; i++)
		if (dump_fields[i].csv)
			csv_order[nc++] = &dump_fields[i];
	qsort(csv_order, nc, sizeof(csv_order[0]), by_csv);
}

/* --- the writers ------------------------------------------------------------------------ */

static int val_zero(const struct dump_field *d, const struct dump_val *v)
{
	switch (d->val) {
	case V_I64:
	case V_SEC:
		return !v->i;
	case V_STR:
	case V_NAME:
		return !v->s || !*v->s;
	default:
		return !v->u;
	}
}

/* A number as text and in CSV (and the text's quoted names, CSV's). */
static void put_num(FILE *f, const struct dump_field *d, const struct dump_val *v)
{
	switch (d->val) {
	case V_U64:
		fprintf(f, "%" PRIu64, v->u);
		break;
	case V_I64:
		fprintf(f, "%" PRId64, v->i);
		break;
	case V_SEC:
		fprintf(f, "%.9f", v->i / 1e9);
		break;
	case V_US:
		fprintf(f, "%.3f", (double)v->u / 1e3);
		break;
	case V_STR:
		fputs(v->s, f);
		break;
	case V_DEV:
		fprintf(f, "%u:%u", (unsigned int)(v->u >> 32), (unsigned int)v->u);
		break;
	case V_TRUE:
		fputc('1', f);
		break;
	}
}

/* A name in a text line: quoted, '"' and '\' escaped, control bytes as \xNN. */
static void put_text_name(FILE *f, const struct dump_val *v)
{
	uint32_t i;

	fputc('"', f);
	for (i = 0; i < v->len; i++) {
		unsigned char c = (unsigned char)v->s[i];

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			fprintf(f, "\\x%02x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

void dump_table_text(FILE *f, const struct iotap_trace_rec *r, uint64_t base)
{
	const struct dump_field *const *dp;
	struct dump_val v;
	int first = 1;

	dump_fields_order();
	for (dp = text_rows[dump_kind(r)]; *dp; dp++) {
		const struct dump_field *d = *dp;
		const char *key = d->tkey ? d->tkey : d->key;

		if (!d->get(r, base, &v) || ((d->flags & F_TNZ) && val_zero(d, &v)))
			continue;
		if (!first)
			fputc(' ', f);
		first = 0;
		if (*key)
			fprintf(f, "%s=", key);
		if (d->val == V_NAME)
			put_text_name(f, &v);
		else if (d->tfmt == T_OCT)
			fprintf(f, "0%o", (unsigned int)v.u);
		else if (d->tfmt == T_HEX || d->tfmt == T_HEX_OPF) {
			char fn[IOTAP_OPF_NAMES_MAX];

			fprintf(f, "0x%x", (unsigned int)v.u);
			if (d->tfmt == T_HEX_OPF &&
			    *iotap_trace_opf_names(r->op, (uint32_t)v.u, fn, sizeof(fn)))
				fprintf(f, "(%s)", fn);
		} else
			put_num(f, d, &v);
	}
	fputc('\n', f);
}

void dump_table_csv_head(FILE *f)
{
	const struct dump_field *const *dp;

	dump_fields_order();
	for (dp = csv_order; *dp; dp++)
		fprintf(f, "%s%s", dp == csv_order ? "" : ",", (*dp)->key);
	fputc('\n', f);
}

/*
 * The same columns as a phrase: comma-separated, a run of the columns only
 * SAMPLE records fill after "and, for SAMPLE rows, ", the columns after
 * such a run after ", then ".
 */
void dump_table_csv_help(FILE *f)
{
	const struct dump_field *const *dp;
	int sample = 0;

	dump_fields_order();
	for (dp = csv_order; *dp; dp++) {
		int s = (*dp)->jk == K(SAMPLE);

		if (dp != csv_order)
			fputs(s == sample ? "," : s ? " and, for SAMPLE rows, " : ", then ", f);
		fputs((*dp)->key, f);
		sample = s;
	}
}

void dump_table_csv(FILE *f, const struct iotap_trace_rec *r, uint64_t base)
{
	const struct dump_field *const *dp;
	struct dump_val v;
	uint32_t i;

	dump_fields_order();
	for (dp = csv_order; *dp; dp++) {
		const struct dump_field *d = *dp;

		if (dp != csv_order)
			fputc(',', f);
		if (!d->get(r, base, &v))
			continue;
		if (d->val != V_NAME) {
			put_num(f, d, &v);
			continue;
		}
		/* RFC 4180: quoted, quotes doubled */
		fputc('"', f);
		for (i = 0; i < v.len; i++) {
			if (v.s[i] == '"')
				fputc('"', f);
			fputc(v.s[i], f);
		}
		fputc('"', f);
	}
	fputc('\n', f);
}

/* One JSON object a line, with the keys that record's kind has, in the table's order. */
void dump_table_json(FILE *f, const struct iotap_trace_rec *r, uint64_t base)
{
	json_object *o = json_object_new_object();
	const struct dump_field *const *dp;
	struct dump_val v;
	char dev[32];

	dump_fields_order();
	for (dp = json_rows[dump_kind(r)]; *dp; dp++) {
		const struct dump_field *d = *dp;
		json_object *j = NULL;

		if (!d->get(r, base, &v) || ((d->flags & F_JNZ) && val_zero(d, &v)))
			continue;
		switch (d->val) {
		case V_U64:
			j = json_object_new_uint64(v.u);
			break;
		case V_I64:
			j = json_object_new_int64(v.i);
			break;
		case V_SEC:
			j = iotap_report_jnum(v.i / 1e9, 9);
			break;
		case V_US:
			j = iotap_report_jnum((double)v.u / 1e3, 3);
			break;
		case V_STR:
			j = json_object_new_string(v.s);
			break;
		case V_NAME:
			j = json_object_new_string_len(v.s, (int)v.len);
			break;
		case V_DEV:
			snprintf(dev, sizeof(dev), "%u:%u", (unsigned int)(v.u >> 32),
				 (unsigned int)v.u);
			j = json_object_new_string(dev);
			break;
		case V_TRUE:
			j = json_object_new_boolean(1);
			break;
		}
		json_object_object_add(o, d->key, j);
	}
	fputs(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN), f);
	fputc('\n', f);
	json_object_put(o);
}
