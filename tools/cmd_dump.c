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
#include <unistd.h>

#include <json-c/json.h>

#include "cmds.h"
#include "dump_fio.h"
#include "iotap_analysis.h"
#include "opt.h"
#include "traceio.h"

enum { O_OP, O_LIMIT, O_FILE_ORDER, O_NO_HEADER, O_CSV, O_JSON, O_FIO, O_FIO_ROOT, O_PROGRESS,
       O_NO_PROGRESS };
enum dump_fmt { F_TEXT, F_CSV, F_JSON, F_FIO };

static const struct opt_desc dump_opts[] = {
	[O_OP] = { "op", 0, "LIST", "only these ops and record types, comma-separated\n"
		   "(e.g. read,write,fsync or PHASE,LOST)" },
	[O_LIMIT] = { "limit", 'n', "N", "stop after N lines" },
	[O_FILE_ORDER] = { "file-order", 0, NULL, "records as stored, not merged by time" },
	[O_NO_HEADER] = { "no-header", 0, NULL, "omit the column header line" },
	[O_CSV] = { "csv", 0, NULL, "CSV with a header row, one row per record (columns below)" },
	[O_JSON] = { "json", 0, NULL, "one JSON object per record and line (JSON lines)" },
	[O_FIO] = { "fio-iolog", 0, NULL, "fio's iolog version 3 (fio --read_iolog=FILE replays it):\n"
		    "reads, writes, fsyncs, opens and closes; what it cannot\n"
		    "hold is counted on stderr" },
	[O_FIO_ROOT] = { "fio-root", 0, "DIR", "--fio-iolog: name files DIR/PATH, PATH relative to\n"
			 "the capture's root (default DIR: the trace's backing directory)" },
	[O_PROGRESS] = OPT_PROGRESS,
	[O_NO_PROGRESS] = OPT_NO_PROGRESS,
	{ NULL },
};

static const struct opt_cmd dump_cmd = {
	.name = "dump",
	.usage = "TRACE [--csv | --json | --fio-iolog [--fio-root DIR]] [--op LIST] [--limit N]\n"
		 "       [--file-order] [--progress | --no-progress]",
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
		  "  iotap dump cap.iotap --csv > cap.csv    # then: duckdb -c \"from 'cap.csv'\"\n"
		  "  iotap dump cap.iotap --fio-iolog --fio-root /srv/copy > cap.log\n"
		  "  fio --name=replay --read_iolog=cap.log",
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
		if (r->flags) {
			char fn[IOTAP_OPF_NAMES_MAX];

			fprintf(f, " flags=0x%x", r->flags);
			if (*iotap_trace_opf_names(r->op, r->flags, fn, sizeof(fn)))
				fprintf(f, "(%s)", fn);
		}
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
			" uid=%u gid=%u%s", r->file, iotap_trace_name_parent(r), r->mode,
			iotap_trace_name_size(r), r->uid, r->gid,
			iotap_trace_name_is_link(r) ? " link=1" : "");
		print_name(f, "name", r);
		break;
	case IOTAP_REC_PHASE:
		fprintf(f, " %s", r->flags == IOTAP_PHASE_END ? "end" : "begin");
		print_name(f, "name", r);
		fprintf(f, " cpu_user_ns=%" PRIu64 " cpu_sys_ns=%" PRIu64,
			iotap_trace_phase_cpu_user_ns(r), iotap_trace_phase_cpu_sys_ns(r));
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
		fprintf(f, " count=%" PRIu64, iotap_trace_lost_count(r));
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

/*
 * The fast path: OP and NAME lines, CSV rows but SAMPLE ones, and JSON
 * lines of OP records without a name are built
 * in a 64 KiB buffer with iotap_fmt_* instead of fprintf (nine tenths of
 * dump's time went to vfprintf). They print byte for byte what the fprintf
 * code prints; the rest, and times the formatter does not cover, take that
 * code after the buffer is flushed.
 */
#define OB_CAP		(1u << 16)
#define FAST_NS_MAX	4000000000000000ll	/* |time| and latency the formatter covers (46 days) */
/* Room for a text line or CSV row but its name: a SAMPLE row of 20-digit values is ~600 bytes. */
#define FAST_LINE_MAX	1024

struct obuf {
	FILE *f;
	size_t len;
	int err;			/* errno of the first failed write, 0: none */
	char buf[OB_CAP];
};

/*
 * A buffer at least half full goes out with write(2), after what
 * stdio holds (the header, slow-path lines): fwrite only copied it into
 * stdio's own buffer first. Less (before a slow-path line that follows
 * soon after the last: names in --json) still goes through stdio: a
 * system call for each would cost more than the copy.
 */
static void ob_write(struct obuf *ob)
{
	const char *p = ob->buf;
	size_t left = ob->len;

	ob->len = 0;
	if (!left || ob->err)
		return;
	if (fflush(ob->f)) {
		ob->err = errno ? errno : EIO;
		return;
	}
	while (left) {
		ssize_t k = write(fileno(ob->f), p, left);

		if (k < 0) {
			if (errno == EINTR)
				continue;
			ob->err = errno;
			return;
		}
		p += k;
		left -= (size_t)k;
	}
}

static void ob_flush(struct obuf *ob)
{
	if (ob->len >= OB_CAP / 2) {	/* worth a system call of its own */
		ob_write(ob);
		return;
	}
	if (ob->len && !ob->err)
		fwrite(ob->buf, 1, ob->len, ob->f);
	ob->len = 0;
}

/* Op names and their lengths, looked up once (strlen was per field). */
static struct op_str {
	const char *s;
	size_t len;
} op_str[IOTAP_OP_MAX];

static void op_str_init(void)
{
	unsigned int i;

	for (i = 0; i < IOTAP_OP_MAX; i++) {
		op_str[i].s = iotap_trace_op_name(i);
		op_str[i].len = strlen(op_str[i].s);
	}
}

static char *put_op(char *p, unsigned int op)
{
	const char *s;
	size_t n;

	if (op < IOTAP_OP_MAX) {
		s = op_str[op].s;
		n = op_str[op].len;
	} else {
		s = iotap_trace_op_name(op);
		n = strlen(s);
	}
	memcpy(p, s, n);
	return p + n;
}

/* Room for @n bytes; NULL when a line that long does not fit the buffer. */
static char *ob_room(struct obuf *ob, size_t n)
{
	if (n > OB_CAP)
		return NULL;
	if (ob->len + n > OB_CAP)
		ob_write(ob);
	return ob->buf + ob->len;
}

static char *put_str(char *p, const char *s)
{
	size_t n = strlen(s);

	memcpy(p, s, n);
	return p + n;
}

#define PUT_LIT(p, lit) (memcpy((p), (lit), sizeof(lit) - 1), (p) + sizeof(lit) - 1)

static char *put_name_esc(char *p, const char *key, const struct iotap_trace_rec *r)
{
	static const char hex[] = "0123456789abcdef";
	unsigned int i;

	*p++ = ' ';
	p = put_str(p, key);
	*p++ = '=';
	*p++ = '"';
	for (i = 0; i < r->name_len; i++) {
		unsigned char c = (unsigned char)r->name[i];

		if (c == '"' || c == '\\') {
			*p++ = '\\';
			*p++ = (char)c;
		} else if (c < 0x20 || c == 0x7f) {
			*p++ = '\\';
			*p++ = 'x';
			*p++ = hex[c >> 4];
			*p++ = hex[c & 15];
		} else {
			*p++ = (char)c;
		}
	}
	*p++ = '"';
	return p;
}

static int fast_range(const struct iotap_trace_rec *r, uint64_t base, int64_t *t)
{
	*t = (int64_t)(r->time_ns - base);
	return *t < FAST_NS_MAX && *t > -FAST_NS_MAX && r->dur_ns < (uint64_t)FAST_NS_MAX;
}

/*
 * A SAMPLE record's fields as dump_rec() prints them (@keys: " dev=M:m
 * rd_ios=N ...") or csv_rec() does (",M:m,N,...": its dev to rss_kb columns).
 */
static char *put_sample(char *p, const struct iotap_trace_sample *s, int keys)
{
	static const char *const key[] = {
		" rd_ios=", " rd_sectors=", " wr_ios=", " wr_sectors=", " io_ticks_ms=",
		" queue_ms=", " in_flight=", " proc_user_ns=", " proc_sys_ns=", " sys_user_ns=",
		" sys_sys_ns=", " sys_idle_ns=", " sys_iowait_ns=", " rss_kb=",
	};
	const uint64_t v[] = {
		s->rd_ios, s->rd_sectors, s->wr_ios, s->wr_sectors, s->io_ticks_ms, s->queue_ms,
		s->in_flight, s->proc_user_ns, s->proc_sys_ns, s->sys_user_ns, s->sys_sys_ns,
		s->sys_idle_ns, s->sys_iowait_ns, s->proc_rss_kb,
	};
	unsigned int i;

	p = keys ? PUT_LIT(p, " dev=") : PUT_LIT(p, ",");
	p = iotap_fmt_u64(p, s->dev_major);
	*p++ = ':';
	p = iotap_fmt_u64(p, s->dev_minor);
	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		if (keys)
			p = put_str(p, key[i]);
		else
			*p++ = ',';
		p = iotap_fmt_u64(p, v[i]);
	}
	return p;
}

/* dump_rec() of an OP, NAME or SAMPLE record; 0: not covered, use dump_rec(). */
static int text_fast(struct obuf *ob, const struct iotap_trace_rec *r, uint64_t base)
{
	char *p, *p0;
	int64_t t;

	if ((r->type != IOTAP_REC_OP && r->type != IOTAP_REC_NAME &&
	     r->type != IOTAP_REC_SAMPLE) || !fast_range(r, base, &t))
		return 0;
	p = p0 = ob_room(ob, FAST_LINE_MAX + 4 * (size_t)r->name_len);
	if (!p)
		return 0;
	p = iotap_fmt_frac(p, t, 9);
	*p++ = ' ';
	p = iotap_fmt_u64(p, r->tid);
	*p++ = ' ';
	p = iotap_fmt_u64(p, r->pid);
	*p++ = ' ';
	if (r->type == IOTAP_REC_SAMPLE) {
		/*
		 * A capture samples resources ten times a second: on the slow
		 * path each such line flushed the buffer through stdio.
		 */
		p = PUT_LIT(p, "SAMPLE");
		p = put_sample(p, &r->sample, 1);
		*p++ = '\n';
		ob->len += (size_t)(p - p0);
		return 1;
	}
	if (r->type == IOTAP_REC_NAME) {
		p = PUT_LIT(p, "NAME file=");
		p = iotap_fmt_u64(p, r->file);
		p = PUT_LIT(p, " parent=");
		p = iotap_fmt_u64(p, iotap_trace_name_parent(r));
		p = PUT_LIT(p, " mode=0");
		p = iotap_fmt_oct(p, r->mode);
		p = PUT_LIT(p, " size=");
		p = iotap_fmt_u64(p, iotap_trace_name_size(r));
		p = PUT_LIT(p, " uid=");
		p = iotap_fmt_u64(p, r->uid);
		p = PUT_LIT(p, " gid=");
		p = iotap_fmt_u64(p, r->gid);
		if (iotap_trace_name_is_link(r))
			p = PUT_LIT(p, " link=1");
		if (r->name)
			p = put_name_esc(p, "name", r);
		*p++ = '\n';
		ob->len += (size_t)(p - p0);
		return 1;
	}
	p = put_op(p, r->op);
	*p++ = ' ';
	p = iotap_fmt_u64(p, r->file);
	*p++ = ' ';
	p = iotap_fmt_u64(p, r->offset);
	*p++ = ' ';
	p = iotap_fmt_u64(p, r->length);
	*p++ = ' ';
	p = iotap_fmt_i64(p, r->result);
	*p++ = ' ';
	p = iotap_fmt_frac(p, (int64_t)r->dur_ns, 3);
	if (r->result < 0 && r->result > -4096) {
		const char *en = strerrorname_np((int)-r->result);

		p = PUT_LIT(p, " err=");
		p = put_str(p, en ? en : "?");
	}
	if (r->fh) {
		p = PUT_LIT(p, " fh=");
		p = iotap_fmt_u64(p, r->fh);
	}
	if (r->file2) {
		p = PUT_LIT(p, " file2=");
		p = iotap_fmt_u64(p, r->file2);
	}
	if (r->flags) {
		char fn[IOTAP_OPF_NAMES_MAX];

		p = PUT_LIT(p, " flags=0x");
		p = iotap_fmt_hex(p, r->flags);
		if (*iotap_trace_opf_names(r->op, r->flags, fn, sizeof(fn))) {
			*p++ = '(';
			p = put_str(p, fn);
			*p++ = ')';
		}
	}
	if (r->mode) {
		p = PUT_LIT(p, " mode=0");
		p = iotap_fmt_oct(p, r->mode);
	}
	if (r->aux) {
		p = PUT_LIT(p, " aux=");
		p = iotap_fmt_u64(p, r->aux);
	}
	p = PUT_LIT(p, " uid=");
	p = iotap_fmt_u64(p, r->uid);
	p = PUT_LIT(p, " gid=");
	p = iotap_fmt_u64(p, r->gid);
	if (r->name)
		p = put_name_esc(p, "name", r);
	*p++ = '\n';
	ob->len += (size_t)(p - p0);
	return 1;
}

static const char *const csv_sample_cols =
	",dev,rd_ios,rd_sectors,wr_ios,wr_sectors,io_ticks_ms,queue_ms,in_flight,proc_user_ns,"
	"proc_sys_ns,sys_user_ns,sys_sys_ns,sys_idle_ns,sys_iowait_ns,rss_kb";

static void csv_head(FILE *f)
{
	fprintf(f, "time_s,type,op,tid,pid,uid,gid,file,fh,offset,length,result,error,lat_us,"
		   "file2,flags,mode,aux,name%s,flag_names\n", csv_sample_cols);
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

/* An OP record's flags by name (iotap_trace_opf_names), "" for other records. */
static const char *opf_names(const struct iotap_trace_rec *r, char *buf)
{
	if (r->type != IOTAP_REC_OP || !r->flags)
		return "";
	return iotap_trace_opf_names(r->op, r->flags, buf, IOTAP_OPF_NAMES_MAX);
}

static void csv_rec(FILE *f, const struct iotap_trace_rec *r, uint64_t base)
{
	char fn[IOTAP_OPF_NAMES_MAX];
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
			",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",\n",
			s->dev_major, s->dev_minor, s->rd_ios, s->rd_sectors, s->wr_ios,
			s->wr_sectors, s->io_ticks_ms, s->queue_ms, s->in_flight, s->proc_user_ns,
			s->proc_sys_ns, s->sys_user_ns, s->sys_sys_ns, s->sys_idle_ns,
			s->sys_iowait_ns, s->proc_rss_kb);
	else
		fprintf(f, ",,,,,,,,,,,,,,,,%s\n", opf_names(r, fn));
}

/* csv_rec() of any record; 0: not covered, use csv_rec(). */
static int csv_fast(struct obuf *ob, const struct iotap_trace_rec *r, uint64_t base)
{
	char fn[IOTAP_OPF_NAMES_MAX];
	char *p, *p0;
	unsigned int i;
	int64_t t;

	if (!fast_range(r, base, &t))
		return 0;
	p = p0 = ob_room(ob, FAST_LINE_MAX + 2 * (size_t)r->name_len);
	if (!p)
		return 0;
	p = iotap_fmt_frac(p, t, 9);
	*p++ = ',';
	if (r->type == IOTAP_REC_OP) {
		p = PUT_LIT(p, "op,");
		p = put_op(p, r->op);
	} else {
		p = put_str(p, iotap_trace_rec_type_name(r->type));
		*p++ = ',';
		p = put_str(p, rec_op_name(r));
	}
	*p++ = ',';
	p = iotap_fmt_u64(p, r->tid);
	*p++ = ',';
	p = iotap_fmt_u64(p, r->pid);
	*p++ = ',';
	p = iotap_fmt_u64(p, r->uid);
	*p++ = ',';
	p = iotap_fmt_u64(p, r->gid);
	*p++ = ',';
	p = iotap_fmt_u64(p, r->file);
	*p++ = ',';
	p = iotap_fmt_u64(p, r->fh);
	*p++ = ',';
	p = iotap_fmt_u64(p, r->offset);
	*p++ = ',';
	p = iotap_fmt_u64(p, r->length);
	*p++ = ',';
	p = iotap_fmt_i64(p, r->result);
	*p++ = ',';
	p = put_str(p, err_name(r));
	*p++ = ',';
	p = iotap_fmt_frac(p, (int64_t)r->dur_ns, 3);
	*p++ = ',';
	p = iotap_fmt_u64(p, r->file2);
	*p++ = ',';
	p = iotap_fmt_u64(p, r->flags);
	*p++ = ',';
	p = iotap_fmt_u64(p, r->mode);
	*p++ = ',';
	p = iotap_fmt_u64(p, r->aux);
	*p++ = ',';
	if (r->name) {
		*p++ = '"';
		for (i = 0; i < r->name_len; i++) {
			if (r->name[i] == '"')
				*p++ = '"';
			*p++ = r->name[i];
		}
		*p++ = '"';
	}
	if (r->type == IOTAP_REC_SAMPLE) {
		p = put_sample(p, &r->sample, 0);
		*p++ = ',';
	} else {
		p = PUT_LIT(p, ",,,,,,,,,,,,,,,,");
		p = put_str(p, opf_names(r, fn));
	}
	*p++ = '\n';
	ob->len += (size_t)(p - p0);
	return 1;
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
	char fn[IOTAP_OPF_NAMES_MAX];
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
		if (*opf_names(r, fn))
			json_object_object_add(o, "flag_names", json_object_new_string(fn));
		if (r->mode)
			jadd_u64(o, "mode", r->mode);
		if (r->aux)
			jadd_u64(o, "aux", r->aux);
		break;
	case IOTAP_REC_NAME:
		jadd_u64(o, "file", r->file);
		jadd_u64(o, "parent", iotap_trace_name_parent(r));
		jadd_u64(o, "mode", r->mode);
		jadd_u64(o, "size", iotap_trace_name_size(r));
		jadd_u64(o, "uid", r->uid);
		jadd_u64(o, "gid", r->gid);
		if (iotap_trace_name_is_link(r))
			json_object_object_add(o, "link", json_object_new_boolean(1));
		break;
	case IOTAP_REC_PHASE:
		jadd_u64(o, "cpu_user_ns", iotap_trace_phase_cpu_user_ns(r));
		jadd_u64(o, "cpu_sys_ns", iotap_trace_phase_cpu_sys_ns(r));
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
 * json_rec() of an OP record without a name (json-c's escaping of names
 * is left to json-c); 0: not covered. json-c keeps the keys in insertion
 * order and prints PLAIN without spaces: this writes the same bytes.
 */
static int json_fast(struct obuf *ob, const struct iotap_trace_rec *r, uint64_t base)
{
	const char *en = err_name(r);
	char fn[IOTAP_OPF_NAMES_MAX];
	char *p, *p0;
	int64_t t;

	if (r->type != IOTAP_REC_OP || r->name || !fast_range(r, base, &t))
		return 0;
	p = p0 = ob_room(ob, 640);
	if (!p)
		return 0;
	p = PUT_LIT(p, "{\"time_s\":");
	p = iotap_fmt_frac(p, t, 9);
	p = PUT_LIT(p, ",\"type\":\"op\",\"op\":\"");
	p = put_op(p, r->op);
	p = PUT_LIT(p, "\",\"tid\":");
	p = iotap_fmt_u64(p, r->tid);
	p = PUT_LIT(p, ",\"pid\":");
	p = iotap_fmt_u64(p, r->pid);
	p = PUT_LIT(p, ",\"uid\":");
	p = iotap_fmt_u64(p, r->uid);
	p = PUT_LIT(p, ",\"gid\":");
	p = iotap_fmt_u64(p, r->gid);
	p = PUT_LIT(p, ",\"file\":");
	p = iotap_fmt_u64(p, r->file);
	p = PUT_LIT(p, ",\"fh\":");
	p = iotap_fmt_u64(p, r->fh);
	p = PUT_LIT(p, ",\"offset\":");
	p = iotap_fmt_u64(p, r->offset);
	p = PUT_LIT(p, ",\"length\":");
	p = iotap_fmt_u64(p, r->length);
	p = PUT_LIT(p, ",\"result\":");
	p = iotap_fmt_i64(p, r->result);
	if (*en) {
		p = PUT_LIT(p, ",\"error\":\"");
		p = put_str(p, en);
		*p++ = '"';
	}
	p = PUT_LIT(p, ",\"lat_us\":");
	p = iotap_fmt_frac(p, (int64_t)r->dur_ns, 3);
	if (r->file2) {
		p = PUT_LIT(p, ",\"file2\":");
		p = iotap_fmt_u64(p, r->file2);
	}
	p = PUT_LIT(p, ",\"flags\":");
	p = iotap_fmt_u64(p, r->flags);
	if (*opf_names(r, fn)) {
		p = PUT_LIT(p, ",\"flag_names\":\"");
		p = put_str(p, fn);
		*p++ = '"';
	}
	if (r->mode) {
		p = PUT_LIT(p, ",\"mode\":");
		p = iotap_fmt_u64(p, r->mode);
	}
	if (r->aux) {
		p = PUT_LIT(p, ",\"aux\":");
		p = iotap_fmt_u64(p, r->aux);
	}
	p = PUT_LIT(p, "}\n");
	ob->len += (size_t)(p - p0);
	return 1;
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
	struct iotap_trace_join *jn = NULL;
	struct iotap_trace_read_stats st;
	const struct iotap_trace_rec *rec;
	const char *arg, *path;
	unsigned int flags = 0;
	uint64_t limit = UINT64_MAX, lines = 0, base;
	int idx, rc, filter = 0, header = 1, ret = 0, werr = 0, progress = 0;
	enum dump_fmt fmt = F_TEXT;
	const char *fio_root = NULL;
	struct obuf *ob;
	char fio_dir[256];
	struct fio_iolog fio;
	struct fio_iolog_sum fio_sum;
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
		case O_CSV: fmt = fmt != F_TEXT && fmt != F_CSV ? -1 : F_CSV; break;
		case O_JSON: fmt = fmt != F_TEXT && fmt != F_JSON ? -1 : F_JSON; break;
		case O_FIO: fmt = fmt != F_TEXT && fmt != F_FIO ? -1 : F_FIO; break;
		case O_FIO_ROOT:
			if (!*arg || strpbrk(arg, " \t\n") || strlen(arg) > 200)
				return opt_error(&dump_cmd, "--fio-root wants a directory without "
					"white space (fio reads names up to 256 bytes), not '%s'", arg);
			fio_root = arg;
			break;
		case O_PROGRESS: progress = 1; break;
		case O_NO_PROGRESS: progress = -1; break;
		}
	}
	if (rc == 2)
		return 0;
	if (rc < 0)
		return 2;
	if ((int)fmt < 0)
		return opt_error(&dump_cmd, "--csv, --json and --fio-iolog exclude each other");
	if (fio_root && fmt != F_FIO)
		return opt_error(&dump_cmd, "--fio-root goes with --fio-iolog");
	if (argc - optind != 1)
		return opt_error(&dump_cmd, argc - optind ? "too many arguments (one TRACE "
							    "at a time)"
							  : "one TRACE is required");
	path = argv[optind];
	/* the lines go to stdout as it reads: no line on a terminal that shows them */
	read_progress_setup("dump", progress, 1);
	analysis_threads_auto(1);	/* two decoding threads for a big trace */
	if (open_trace_reader(path, flags, &r))
		return 1;
	setvbuf(stdout, obuf, _IOFBF, sizeof(obuf));
	ob = malloc(sizeof(*ob));
	if (!ob) {
		iotap_trace_reader_close(r);
		error_msg("out of memory");
		return 1;
	}
	ob->f = stdout;
	ob->len = 0;
	ob->err = 0;
	op_str_init();
	base = iotap_trace_reader_header(r)->mono_base_ns;
	if (header && fmt == F_TEXT)
		printf("# TIME_S TID PID OP FILE OFFSET LENGTH RESULT LAT_US\n");
	else if (header && fmt == F_CSV)
		csv_head(stdout);
	if (fmt == F_FIO) {
		/* absolute names: fio 3.33 crashes on --directory with --read_iolog */
		const char *bk = iotap_trace_reader_header(r)->backing;

		if (!fio_root && bk && *bk && !strpbrk(bk, " \t\n") && strlen(bk) < 200)
			fio_root = bk;
		snprintf(fio_dir, sizeof(fio_dir), "%s", fio_root ? fio_root : "");
		while (strlen(fio_dir) > 1 && fio_dir[strlen(fio_dir) - 1] == '/')
			fio_dir[strlen(fio_dir) - 1] = '\0';
		fio_iolog_init(&fio, stdout, *fio_dir ? fio_dir : NULL, &fio_sum);
	}
	/* fio replays application calls: the pieces of a cut one as one (trace/join.c) */
	if (fmt == F_FIO && (ret = iotap_trace_join_open(&jn, r)) < 0) {
		ob_flush(ob);
		free(ob);
		iotap_trace_reader_close(r);
		fio_iolog_release(&fio);
		error_msg("out of memory");
		return 1;
	}
	/*
	 * Stop at the first failed write: the rest would fail the same way.
	 * (Unlocked: only this thread writes stdout, and once the reader has
	 * started its decoder threads a locked ferror() is an atomic a record.)
	 */
	while (lines < limit && !ferror_unlocked(stdout) && !ob->err &&
	       (ret = jn ? iotap_trace_join_next_ref(jn, &rec) :
			   iotap_trace_reader_next_ref(r, &rec)) > 0) {
		if (fmt == F_FIO) {
			if (rec->type != IOTAP_REC_NAME && filter &&
			    (rec->type != IOTAP_REC_OP || rec->op >= IOTAP_OP_MAX || !want[rec->op]))
				continue;
		} else if (filter && (rec->type == IOTAP_REC_OP ? rec->op >= IOTAP_OP_MAX || !want[rec->op]
							 : rec->type >= IOTAP_REC_TYPE_MAX ||
							   !want_type[rec->type]))
			continue;
		if (fmt == F_FIO) {
			/* NAME records build the file names whatever --op says */
			if (fio_iolog_rec(&fio, rec)) {
				ret = -ENOMEM;
				break;
			}
			lines = fio_sum.lines;
			continue;
		}
		if (fmt == F_CSV) {
			if (!csv_fast(ob, rec, base)) {
				ob_flush(ob);
				csv_rec(stdout, rec, base);
			}
		} else if (fmt == F_JSON) {
			if (!json_fast(ob, rec, base)) {
				ob_flush(ob);
				json_rec(stdout, rec, base);
			}
		} else if (!text_fast(ob, rec, base)) {
			ob_flush(ob);
			dump_rec(stdout, rec, base);
		}
		lines++;
	}
	ob_flush(ob);
	werr = ob->err;
	free(ob);
	iotap_trace_join_close(jn);
	iotap_trace_reader_stats(r, &st);
	iotap_trace_reader_close(r);
	if (fmt == F_FIO) {
		if (ret >= 0)
			fio_iolog_summary(stderr, path, &fio);
		fio_iolog_release(&fio);
	}
	if (werr) {
		fflush(stdout);
		error_msg("cannot write the output: %s", strerror(werr));
		return 1;
	}
	if (out_close(stdout, NULL))
		return 1;
	if (ret < 0) {
		error_msg("cannot read trace '%s': %s", path, strerror(-ret));
		return 1;
	}
	if (lines < limit)
		warn_damage(path, &st);
	return 0;
}
