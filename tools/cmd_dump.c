// SPDX-License-Identifier: MIT
/*
 * cmd_dump.c - iotap dump TRACE [--op LIST] [--limit N] [--file-order]
 *
 * One line per record, like blkparse. The first nine columns are fixed so
 * that awk and sort work on them:
 *
 *   TIME_S  TID  PID  OP  FILE  OFFSET  LENGTH  RESULT  LAT_US  [key=value...]
 *
 * TIME_S is seconds since the trace's start (its header clock base). Other
 * record types print their type in upper case in the OP column and their
 * own fields as key=value. Damage is reported on stderr at the end.
 *
 * --csv and --json write the same records for other tools (DuckDB, pandas,
 * Spark, sqlite3): CSV with a header row and one fixed set of columns
 * (CSV_COLS), JSON as one object a line with the keys that record has.
 * Both stream: nothing is held but the reader's own merge window.
 */
#include <errno.h>
#include <getopt.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <json-c/json.h>

#include "cmds.h"
#include "iotap_analysis.h"
#include "opt.h"
#include "traceio.h"

enum { O_OP, O_LIMIT, O_FILE_ORDER, O_NO_HEADER, O_CSV, O_JSON };
enum dump_fmt { F_TEXT, F_CSV, F_JSON };

static const struct opt_desc dump_opts[] = {
	[O_OP] = { "op", 0, "LIST", "only these ops and record types, comma-separated\n"
		   "(e.g. read,write,fsync or PHASE,LOST)" },
	[O_LIMIT] = { "limit", 'n', "N", "stop after N lines" },
	[O_FILE_ORDER] = { "file-order", 0, NULL, "records as stored, not merged by time" },
	[O_NO_HEADER] = { "no-header", 0, NULL, "omit the column header line" },
	[O_CSV] = { "csv", 0, NULL, "CSV with a header row, one row per record (columns below)" },
	[O_JSON] = { "json", 0, NULL, "one JSON object per record and line (JSON lines)" },
	{ NULL },
};

static const struct opt_cmd dump_cmd = {
	.name = "dump",
	.usage = "TRACE [--csv | --json] [--op LIST] [--limit N] [--file-order]",
	.summary = "Print one line per record:\n"
		   "  TIME_S TID PID OP FILE OFFSET LENGTH RESULT LAT_US [key=value...]\n"
		   "Non-op records show their type (NAME, PHASE, SAMPLE, LOST, END, NOTE) as OP.\n"
		   "--csv columns: time_s,type,op,tid,pid,uid,gid,file,fh,offset,length,result,\n"
		   "error,lat_us,file2,flags,mode,aux,name and, for SAMPLE rows, dev,rd_ios,\n"
		   "rd_sectors,wr_ios,wr_sectors,io_ticks_ms,queue_ms,in_flight,proc_user_ns,\n"
		   "proc_sys_ns,sys_user_ns,sys_sys_ns,sys_idle_ns,sys_iowait_ns,rss_kb. type is\n"
		   "op, name, phase, sample, lost, end or note; a PHASE row has op begin or end\n"
		   "and its CPU in offset (user ns) and length (system ns); a NAME row has the\n"
		   "parent in file2 and the size in length; LOST has the count in length; END\n"
		   "the records in length and the lost in aux; NOTE its text in name.",
	.opts = dump_opts,
	.footer = "examples:\n  iotap dump cap.iotap --op write | awk '{ b += $8 } END { print b }'\n"
		  "  iotap dump cap.iotap --csv > cap.csv    # then: duckdb -c \"from 'cap.csv'\"",
};

static void print_name(FILE *f, const char *key, const struct iotap_trace_rec *r)
{
	unsigned int i;

	if (!r->name)
		return;
	fprintf(f, " %s=\"", key);
	for (i = 0; i < r->name_len; i++) {
		unsigned char c = (unsigned char)r->name[i];

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			fprintf(f, "\\x%02x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void dump_rec(FILE *f, const struct iotap_trace_rec *r, uint64_t base)
{
	double t = ((int64_t)(r->time_ns - base)) / 1e9;
	char up[16];
	const char *tn;
	int i;

	if (r->type == IOTAP_REC_OP) {
		fprintf(f, "%.9f %u %u %s %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRId64 " %.3f", t,
			r->tid, r->pid, iotap_trace_op_name(r->op), r->file, r->offset, r->length,
			r->result, r->dur_ns / 1e3);
		if (r->result < 0 && r->result > -4096) {
			const char *en = strerrorname_np((int)-r->result);

			fprintf(f, " err=%s", en ? en : "?");
		}
		if (r->fh)
			fprintf(f, " fh=%" PRIu64, r->fh);
		if (r->file2)
			fprintf(f, " file2=%" PRIu64, r->file2);
		if (r->flags)
			fprintf(f, " flags=0x%x", r->flags);
		if (r->mode)
			fprintf(f, " mode=0%o", r->mode);
		if (r->aux)
			fprintf(f, " aux=%" PRIu64, r->aux);
		fprintf(f, " uid=%u gid=%u", r->uid, r->gid);
		print_name(f, "name", r);
		fputc('\n', f);
		return;
	}
	tn = iotap_trace_rec_type_name(r->type);
	for (i = 0; tn[i] && i < (int)sizeof(up) - 1; i++)
		up[i] = (char)(tn[i] >= 'a' && tn[i] <= 'z' ? tn[i] - 32 : tn[i]);
	up[i] = '\0';
	fprintf(f, "%.9f %u %u %s", t, r->tid, r->pid, up);
	switch (r->type) {
	case IOTAP_REC_NAME:
		fprintf(f, " file=%" PRIu64 " parent=%" PRIu64 " mode=0%o size=%" PRIu64
			" uid=%u gid=%u%s", r->file, r->file2, r->mode, r->length, r->uid, r->gid,
			r->flags & 1 ? " link=1" : "");
		print_name(f, "name", r);
		break;
	case IOTAP_REC_PHASE:
		fprintf(f, " %s", r->flags == IOTAP_PHASE_END ? "end" : "begin");
		print_name(f, "name", r);
		fprintf(f, " cpu_user_ns=%" PRIu64 " cpu_sys_ns=%" PRIu64, r->offset, r->length);
		if (r->aux)
			fprintf(f, " aux=%" PRIu64, r->aux);
		break;
	case IOTAP_REC_SAMPLE: {
		const struct iotap_trace_sample *s = &r->sample;

		fprintf(f, " dev=%u:%u rd_ios=%" PRIu64 " rd_sectors=%" PRIu64 " wr_ios=%" PRIu64
			" wr_sectors=%" PRIu64 " io_ticks_ms=%" PRIu64 " queue_ms=%" PRIu64
			" in_flight=%" PRIu64 " proc_user_ns=%" PRIu64 " proc_sys_ns=%" PRIu64
			" sys_user_ns=%" PRIu64 " sys_sys_ns=%" PRIu64 " sys_idle_ns=%" PRIu64
			" sys_iowait_ns=%" PRIu64 " rss_kb=%" PRIu64,
			s->dev_major, s->dev_minor, s->rd_ios, s->rd_sectors, s->wr_ios,
			s->wr_sectors, s->io_ticks_ms, s->queue_ms, s->in_flight, s->proc_user_ns,
			s->proc_sys_ns, s->sys_user_ns, s->sys_sys_ns, s->sys_idle_ns,
			s->sys_iowait_ns, s->proc_rss_kb);
		break;
	}
	case IOTAP_REC_LOST:
		fprintf(f, " count=%" PRIu64, r->length);
		break;
	case IOTAP_REC_END:
		fprintf(f, " records=%" PRIu64 " lost=%" PRIu64, r->length, r->aux);
		break;
	case IOTAP_REC_NOTE:
		print_name(f, "text", r);
		break;
	case IOTAP_REC_APP: {
		static const char *const kinds[] = { "?", "txn", "span", "backup" };

		fprintf(f, " kind=%s dur_us=%.3f flags=0x%x", kinds[r->op < 4 ? r->op : 0],
			(double)r->dur_ns / 1e3, r->flags);
		if (r->op == IOTAP_APP_TXN && r->aux)
			fprintf(f, " lag_us=%.3f", (double)r->aux / 1e3);
		if (r->op == IOTAP_APP_SPAN)
			fprintf(f, " start_s=%.9f", ((int64_t)(r->offset - base)) / 1e9);
		if (r->op == IOTAP_APP_BACKUP)
			fprintf(f, " logical=%" PRIu64 " lookups=%" PRIu64 " hits=%" PRIu64
				" segments=%" PRIu64 " new=%" PRIu64 " stored=%" PRIu64, r->length,
				r->offset, r->aux, r->file, r->file2, r->fh);
		if (r->name)
			print_name(f, "name", r);
		break;
	}
	}
	fputc('\n', f);
}

static const char *const csv_sample_cols =
	",dev,rd_ios,rd_sectors,wr_ios,wr_sectors,io_ticks_ms,queue_ms,in_flight,proc_user_ns,"
	"proc_sys_ns,sys_user_ns,sys_sys_ns,sys_idle_ns,sys_iowait_ns,rss_kb";

static void csv_head(FILE *f)
{
	fprintf(f, "time_s,type,op,tid,pid,uid,gid,file,fh,offset,length,result,error,lat_us,"
		   "file2,flags,mode,aux,name%s\n", csv_sample_cols);
}

/* A quoted CSV field (RFC 4180: quotes doubled). */
static void csv_name(FILE *f, const struct iotap_trace_rec *r)
{
	unsigned int i;

	if (!r->name)
		return;
	fputc('"', f);
	for (i = 0; i < r->name_len; i++) {
		if (r->name[i] == '"')
			fputc('"', f);
		fputc(r->name[i], f);
	}
	fputc('"', f);
}

static const char *err_name(const struct iotap_trace_rec *r)
{
	const char *en;

	if (r->type != IOTAP_REC_OP || r->result >= 0 || r->result <= -4096)
		return "";
	en = strerrorname_np((int)-r->result);
	return en ? en : "";
}

static const char *rec_op_name(const struct iotap_trace_rec *r)
{
	if (r->type == IOTAP_REC_OP)
		return iotap_trace_op_name(r->op);
	if (r->type == IOTAP_REC_PHASE)
		return r->flags == IOTAP_PHASE_END ? "end" : "begin";
	return "";
}

static void csv_rec(FILE *f, const struct iotap_trace_rec *r, uint64_t base)
{
	double t = ((int64_t)(r->time_ns - base)) / 1e9;
	const struct iotap_trace_sample *s = &r->sample;

	fprintf(f, "%.9f,%s,%s,%u,%u,%u,%u,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
		",%" PRId64 ",%s,%.3f,%" PRIu64 ",%u,%u,%" PRIu64 ",", t,
		iotap_trace_rec_type_name(r->type), rec_op_name(r), r->tid, r->pid, r->uid, r->gid,
		r->file, r->fh, r->offset, r->length, r->result, err_name(r), r->dur_ns / 1e3,
		r->file2, r->flags, r->mode, r->aux);
	csv_name(f, r);
	if (r->type == IOTAP_REC_SAMPLE)
		fprintf(f, ",%u:%u,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
			",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
			",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n",
			s->dev_major, s->dev_minor, s->rd_ios, s->rd_sectors, s->wr_ios,
			s->wr_sectors, s->io_ticks_ms, s->queue_ms, s->in_flight, s->proc_user_ns,
			s->proc_sys_ns, s->sys_user_ns, s->sys_sys_ns, s->sys_idle_ns,
			s->sys_iowait_ns, s->proc_rss_kb);
	else
		fputs(",,,,,,,,,,,,,,,\n", f);
}

static void jadd_u64(json_object *o, const char *k, uint64_t v)
{
	json_object_object_add(o, k, json_object_new_uint64(v));
}

/* One JSON object a line, with the keys that record type has. */
static void json_rec(FILE *f, const struct iotap_trace_rec *r, uint64_t base)
{
	json_object *o = json_object_new_object();
	const struct iotap_trace_sample *s = &r->sample;
	char dev[32];

	json_object_object_add(o, "time_s", report_jnum(((int64_t)(r->time_ns - base)) / 1e9, 9));
	json_object_object_add(o, "type", json_object_new_string(iotap_trace_rec_type_name(r->type)));
	if (*rec_op_name(r))
		json_object_object_add(o, "op", json_object_new_string(rec_op_name(r)));
	jadd_u64(o, "tid", r->tid);
	jadd_u64(o, "pid", r->pid);
	switch (r->type) {
	case IOTAP_REC_OP:
		jadd_u64(o, "uid", r->uid);
		jadd_u64(o, "gid", r->gid);
		jadd_u64(o, "file", r->file);
		jadd_u64(o, "fh", r->fh);
		jadd_u64(o, "offset", r->offset);
		jadd_u64(o, "length", r->length);
		json_object_object_add(o, "result", json_object_new_int64(r->result));
		if (*err_name(r))
			json_object_object_add(o, "error", json_object_new_string(err_name(r)));
		json_object_object_add(o, "lat_us", report_jnum(r->dur_ns / 1e3, 3));
		if (r->file2)
			jadd_u64(o, "file2", r->file2);
		jadd_u64(o, "flags", r->flags);
		if (r->mode)
			jadd_u64(o, "mode", r->mode);
		if (r->aux)
			jadd_u64(o, "aux", r->aux);
		break;
	case IOTAP_REC_NAME:
		jadd_u64(o, "file", r->file);
		jadd_u64(o, "parent", r->file2);
		jadd_u64(o, "mode", r->mode);
		jadd_u64(o, "size", r->length);
		jadd_u64(o, "uid", r->uid);
		jadd_u64(o, "gid", r->gid);
		if (r->flags & 1)
			json_object_object_add(o, "link", json_object_new_boolean(1));
		break;
	case IOTAP_REC_PHASE:
		jadd_u64(o, "cpu_user_ns", r->offset);
		jadd_u64(o, "cpu_sys_ns", r->length);
		if (r->aux)
			jadd_u64(o, "aux", r->aux);
		break;
	case IOTAP_REC_SAMPLE:
		snprintf(dev, sizeof(dev), "%u:%u", s->dev_major, s->dev_minor);
		json_object_object_add(o, "dev", json_object_new_string(dev));
		jadd_u64(o, "rd_ios", s->rd_ios);
		jadd_u64(o, "rd_sectors", s->rd_sectors);
		jadd_u64(o, "wr_ios", s->wr_ios);
		jadd_u64(o, "wr_sectors", s->wr_sectors);
		jadd_u64(o, "io_ticks_ms", s->io_ticks_ms);
		jadd_u64(o, "queue_ms", s->queue_ms);
		jadd_u64(o, "in_flight", s->in_flight);
		jadd_u64(o, "proc_user_ns", s->proc_user_ns);
		jadd_u64(o, "proc_sys_ns", s->proc_sys_ns);
		jadd_u64(o, "sys_user_ns", s->sys_user_ns);
		jadd_u64(o, "sys_sys_ns", s->sys_sys_ns);
		jadd_u64(o, "sys_idle_ns", s->sys_idle_ns);
		jadd_u64(o, "sys_iowait_ns", s->sys_iowait_ns);
		jadd_u64(o, "rss_kb", s->proc_rss_kb);
		break;
	case IOTAP_REC_LOST:
		jadd_u64(o, "count", r->length);
		break;
	case IOTAP_REC_END:
		jadd_u64(o, "records", r->length);
		jadd_u64(o, "lost", r->aux);
		break;
	}
	if (r->name)
		json_object_object_add(o, r->type == IOTAP_REC_NOTE ? "text" : "name",
				       json_object_new_string_len(r->name, (int)r->name_len));
	fputs(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN), f);
	fputc('\n', f);
	json_object_put(o);
}

/*
 * --op LIST: op names (read, fsync) and the record types dump shows in the
 * OP column (NAME, PHASE, SAMPLE, LOST, END, NOTE; any case). 0, or -EINVAL
 * after saying which name is unknown and which are valid.
 */
static int parse_ops(const char *list, unsigned char *want, unsigned char *want_type)
{
	char *copy = strdup(list), *save = NULL, *tok;
	unsigned int t;
	int op;

	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		op = iotap_trace_op_from_name(tok);
		if (op >= 0 && op < IOTAP_OP_MAX) {
			want[op] = 1;
			continue;
		}
		for (t = IOTAP_REC_OP + 1; t < IOTAP_REC_TYPE_MAX; t++)
			if (!strcasecmp(tok, iotap_trace_rec_type_name(t)))
				break;
		if (t == IOTAP_REC_TYPE_MAX) {
			opt_error(&dump_cmd, "unknown op or record type '%s' in --op", tok);
			fprintf(stderr, "ops:");
			for (op = 0; op < IOTAP_OP_MAX; op++)
				fprintf(stderr, " %s", iotap_trace_op_name(op));
			fprintf(stderr, "\nrecord types: NAME PHASE SAMPLE LOST END NOTE\n");
			free(copy);
			return -EINVAL;
		}
		want_type[t] = 1;
	}
	free(copy);
	return 0;
}

int cmd_dump(int argc, char **argv)
{
	unsigned char want[IOTAP_OP_MAX] = { 0 }, want_type[IOTAP_REC_TYPE_MAX] = { 0 };
	struct iotap_trace_reader *r;
	struct iotap_trace_read_stats st;
	struct iotap_trace_rec rec;
	const char *arg, *path;
	unsigned int flags = 0;
	uint64_t limit = UINT64_MAX, lines = 0, base;
	int idx, rc, filter = 0, header = 1, ret = 0;
	enum dump_fmt fmt = F_TEXT;
	static char obuf[1 << 16];

	while ((rc = opt_next(&dump_cmd, argc, argv, &idx, &arg)) == 1) {
		switch (idx) {
		case O_OP:
			if (parse_ops(arg, want, want_type))
				return 2;
			filter = 1;
			break;
		case O_LIMIT:
			if (parse_u64(arg, &limit))
				return opt_error(&dump_cmd, "--limit wants a count, not '%s'", arg);
			break;
		case O_FILE_ORDER: flags |= IOTAP_TRACE_READ_FILE_ORDER; break;
		case O_NO_HEADER: header = 0; break;
		case O_CSV: fmt = fmt == F_JSON ? -1 : F_CSV; break;
		case O_JSON: fmt = fmt == F_CSV ? -1 : F_JSON; break;
		}
	}
	if (rc == 2)
		return 0;
	if (rc < 0)
		return 2;
	if ((int)fmt < 0)
		return opt_error(&dump_cmd, "--csv and --json exclude each other");
	if (argc - optind != 1)
		return opt_error(&dump_cmd, argc - optind ? "too many arguments (one TRACE "
							    "at a time)"
							  : "one TRACE is required");
	path = argv[optind];
	if (open_trace(path, flags, &r))
		return 1;
	setvbuf(stdout, obuf, _IOFBF, sizeof(obuf));
	base = iotap_trace_reader_header(r)->mono_base_ns;
	if (header && fmt == F_TEXT)
		printf("# TIME_S TID PID OP FILE OFFSET LENGTH RESULT LAT_US\n");
	else if (header && fmt == F_CSV)
		csv_head(stdout);
	/* stop at the first failed write: the rest would fail the same way */
	while (lines < limit && !ferror(stdout) && (ret = iotap_trace_reader_next(r, &rec)) > 0) {
		if (filter && (rec.type == IOTAP_REC_OP ? rec.op >= IOTAP_OP_MAX || !want[rec.op]
							 : rec.type >= IOTAP_REC_TYPE_MAX ||
							   !want_type[rec.type]))
			continue;
		if (fmt == F_CSV)
			csv_rec(stdout, &rec, base);
		else if (fmt == F_JSON)
			json_rec(stdout, &rec, base);
		else
			dump_rec(stdout, &rec, base);
		lines++;
	}
	iotap_trace_reader_stats(r, &st);
	iotap_trace_reader_close(r);
	if (out_close(stdout, NULL))
		return 1;
	if (ret < 0) {
		die_msg("cannot read trace '%s': %s", path, strerror(-ret));
		return 1;
	}
	if (lines < limit)
		warn_damage(path, &st);
	return 0;
}
