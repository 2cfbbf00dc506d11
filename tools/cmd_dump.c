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
 */
#include <errno.h>
#include <getopt.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cmds.h"
#include "opt.h"
#include "traceio.h"

enum { O_OP, O_LIMIT, O_FILE_ORDER, O_NO_HEADER };

static const struct opt_desc dump_opts[] = {
	[O_OP] = { "op", 0, "LIST", "only these ops and record types, comma-separated\n"
		   "(e.g. read,write,fsync or PHASE,LOST)" },
	[O_LIMIT] = { "limit", 'n', "N", "stop after N lines" },
	[O_FILE_ORDER] = { "file-order", 0, NULL, "records as stored, not merged by time" },
	[O_NO_HEADER] = { "no-header", 0, NULL, "omit the column header line" },
	{ NULL },
};

static const struct opt_cmd dump_cmd = {
	.name = "dump",
	.usage = "TRACE [--op LIST] [--limit N] [--file-order]",
	.summary = "Print one line per record:\n"
		   "  TIME_S TID PID OP FILE OFFSET LENGTH RESULT LAT_US [key=value...]\n"
		   "Non-op records show their type (NAME, PHASE, SAMPLE, LOST, END, NOTE) as OP.",
	.opts = dump_opts,
	.footer = "example:\n  iotap dump cap.iotap --op write | awk '{ b += $8 } END { print b }'",
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
	}
	fputc('\n', f);
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
		}
	}
	if (rc == 2)
		return 0;
	if (rc < 0)
		return 2;
	if (argc - optind != 1)
		return opt_error(&dump_cmd, argc - optind ? "too many arguments (one TRACE at a time)"
							  : "one TRACE is required");
	path = argv[optind];
	if (open_trace(path, flags, &r))
		return 1;
	setvbuf(stdout, obuf, _IOFBF, sizeof(obuf));
	base = iotap_trace_reader_header(r)->mono_base_ns;
	if (header)
		printf("# TIME_S TID PID OP FILE OFFSET LENGTH RESULT LAT_US\n");
	/* stop at the first failed write: the rest would fail the same way */
	while (lines < limit && !ferror(stdout) && (ret = iotap_trace_reader_next(r, &rec)) > 0) {
		if (filter && (rec.type == IOTAP_REC_OP ? rec.op >= IOTAP_OP_MAX || !want[rec.op]
							 : rec.type >= IOTAP_REC_TYPE_MAX ||
							   !want_type[rec.type]))
			continue;
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
