// SPDX-License-Identifier: MIT
/*
 * dump_fast.c - iotap dump's fast paths: the text lines of OP, NAME and
 * SAMPLE records, every CSV row, and the JSON lines of OP and NAME
 * records, built in a buffer without printf; and the loop that feeds them
 *
 * They print what the field table (dump_fields.c) prints, byte for byte;
 * tests/unit/test_dump.c renders every record kind and edge value both
 * ways and compares. A record they do not take (0) goes to the table.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "dump_fast.h"
#include "dump_fields.h"
#include "iotap_base.h"

/*
 * Nine tenths of dump's time went to vfprintf: these lines are built in
 * a 64 KiB buffer with iotap_fmt_* instead. Times the formatter does not
 * cover go to the table.
 */
#define FAST_NS_MAX	4000000000000000ll	/* |time| and latency the formatter covers (46 days) */
/* Room for a text line or CSV row but its name: a SAMPLE row of 20-digit values is ~600 bytes. */
#define FAST_LINE_MAX	1024

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

void dump_ob_flush(struct obuf *ob)
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

void dump_fast_init(void)
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
 * A SAMPLE record's fields as dump_table_text() prints them (@keys: " dev=M:m
 * rd_ios=N ...") or dump_table_csv() does (",M:m,N,...": its dev to rss_kb columns).
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

/* dump_table_text() of an OP, NAME or SAMPLE record; 0: not covered, use dump_table_text(). */
static inline __attribute__((always_inline)) int
text_fast(struct obuf *ob, const struct iotap_trace_rec *r, uint64_t base)
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


static inline __attribute__((always_inline)) int
csv_fast(struct obuf *ob, const struct iotap_trace_rec *r, uint64_t base)
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
		p = put_str(p, dump_op_name(r));
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
	p = put_str(p, dump_err_name(r));
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
		p = put_str(p, dump_opf_names(r, fn));
	}
	*p++ = '\n';
	ob->len += (size_t)(p - p0);
	return 1;
}

/*
 * ,"name":"..." with the name escaped as json-c 0.16 escapes a string
 * (json_escape_str(), without JSON_C_TO_STRING_NOSLASHESCAPE): \b \n \r
 * \t \f \" \\ \/, other bytes below 0x20 as \u00xx, the rest as they are.
 */
static char *put_json_name(char *p, const struct iotap_trace_rec *r)
{
	static const char hex[] = "0123456789abcdef";
	uint32_t i;

	p = PUT_LIT(p, ",\"name\":\"");
	for (i = 0; i < r->name_len; i++) {
		unsigned char c = (unsigned char)r->name[i];

		switch (c) {
		case '\b': p = PUT_LIT(p, "\\b"); break;
		case '\n': p = PUT_LIT(p, "\\n"); break;
		case '\r': p = PUT_LIT(p, "\\r"); break;
		case '\t': p = PUT_LIT(p, "\\t"); break;
		case '\f': p = PUT_LIT(p, "\\f"); break;
		case '"': p = PUT_LIT(p, "\\\""); break;
		case '\\': p = PUT_LIT(p, "\\\\"); break;
		case '/': p = PUT_LIT(p, "\\/"); break;
		default:
			if (c < 0x20) {
				p = PUT_LIT(p, "\\u00");
				*p++ = hex[c >> 4];
				*p++ = hex[c & 15];
			} else {
				*p++ = (char)c;
			}
		}
	}
	*p++ = '"';
	return p;
}

/*
 * dump_table_json() of an OP or NAME record; 0: not covered. json-c keeps
 * the keys in insertion order and prints PLAIN without spaces: this writes
 * the same bytes. (A capture's NAME records and named ops took a tenth of
 * dump --json's instructions through json-c.)
 */
static inline __attribute__((always_inline)) int
json_fast(struct obuf *ob, const struct iotap_trace_rec *r, uint64_t base)
{
	const char *en;
	char fn[IOTAP_OPF_NAMES_MAX];
	char *p, *p0;
	int64_t t;

	if ((r->type != IOTAP_REC_OP && r->type != IOTAP_REC_NAME) || !fast_range(r, base, &t))
		return 0;
	p = p0 = ob_room(ob, 640 + 6 * (size_t)r->name_len);
	if (!p)
		return 0;
	p = PUT_LIT(p, "{\"time_s\":");
	p = iotap_fmt_frac(p, t, 9);
	if (r->type == IOTAP_REC_NAME) {
		p = PUT_LIT(p, ",\"type\":\"name\",\"tid\":");
		p = iotap_fmt_u64(p, r->tid);
		p = PUT_LIT(p, ",\"pid\":");
		p = iotap_fmt_u64(p, r->pid);
		p = PUT_LIT(p, ",\"file\":");
		p = iotap_fmt_u64(p, r->file);
		p = PUT_LIT(p, ",\"parent\":");
		p = iotap_fmt_u64(p, iotap_trace_name_parent(r));
		p = PUT_LIT(p, ",\"mode\":");
		p = iotap_fmt_u64(p, r->mode);
		p = PUT_LIT(p, ",\"size\":");
		p = iotap_fmt_u64(p, iotap_trace_name_size(r));
		p = PUT_LIT(p, ",\"uid\":");
		p = iotap_fmt_u64(p, r->uid);
		p = PUT_LIT(p, ",\"gid\":");
		p = iotap_fmt_u64(p, r->gid);
		if (iotap_trace_name_is_link(r))
			p = PUT_LIT(p, ",\"link\":true");
		if (r->name)
			p = put_json_name(p, r);
		p = PUT_LIT(p, "}\n");
		ob->len += (size_t)(p - p0);
		return 1;
	}
	en = dump_err_name(r);
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
	if (*dump_opf_names(r, fn)) {
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
	if (r->name)
		p = put_json_name(p, r);
	p = PUT_LIT(p, "}\n");
	ob->len += (size_t)(p - p0);
	return 1;
}


/* The fast paths on their own, for tests/unit/test_dump.c. */
int dump_text_fast(struct obuf *ob, const struct iotap_trace_rec *r, uint64_t base)
{
	return text_fast(ob, r, base);
}

int dump_csv_fast(struct obuf *ob, const struct iotap_trace_rec *r, uint64_t base)
{
	return csv_fast(ob, r, base);
}

int dump_json_fast(struct obuf *ob, const struct iotap_trace_rec *r, uint64_t base)
{
	return json_fast(ob, r, base);
}

/*
 * One loop per format, the format a constant in each: its fast path is
 * inlined there (a call per record through a pointer cost dump 2-6% more
 * instructions).
 */
static inline __attribute__((always_inline)) int
lines_loop(struct obuf *ob, struct iotap_trace_reader *r, const struct dump_filter *flt,
	   uint64_t limit, uint64_t *lines, uint64_t base, const enum dump_format fmt)
{
	const struct iotap_trace_rec *rec;
	uint64_t n = *lines;
	int ret = 0, taken;

	/*
	 * Stop at the first failed write: the rest would fail the same way.
	 * (Unlocked: only this thread writes the file, and once the reader has
	 * started its decoder threads a locked ferror() is an atomic a record.)
	 */
	while (n < limit && !ferror_unlocked(ob->f) && !ob->err &&
	       (ret = iotap_trace_reader_next_ref(r, &rec)) > 0) {
		if (flt->on && !dump_filter_wants(flt, rec))
			continue;
		taken = fmt == DUMP_TEXT ? text_fast(ob, rec, base) :
			fmt == DUMP_CSV ? csv_fast(ob, rec, base) : json_fast(ob, rec, base);
		if (!taken) {
			dump_ob_flush(ob);
			if (fmt == DUMP_TEXT)
				dump_table_text(ob->f, rec, base);
			else if (fmt == DUMP_CSV)
				dump_table_csv(ob->f, rec, base);
			else
				dump_table_json(ob->f, rec, base);
		}
		n++;
	}
	*lines = n;
	return ret < 0 ? ret : 0;
}

int dump_lines(struct obuf *ob, struct iotap_trace_reader *r, enum dump_format fmt,
	       const struct dump_filter *flt, uint64_t limit, uint64_t *lines, uint64_t base)
{
	switch (fmt) {
	case DUMP_CSV:
		return lines_loop(ob, r, flt, limit, lines, base, DUMP_CSV);
	case DUMP_JSON:
		return lines_loop(ob, r, flt, limit, lines, base, DUMP_JSON);
	default:
		return lines_loop(ob, r, flt, limit, lines, base, DUMP_TEXT);
	}
}
