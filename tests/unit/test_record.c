// SPDX-License-Identifier: MIT
/*
 * test_record.c - the record codec (trace/record.c) on its own
 *
 * Encodes sequences of records with one delta state and decodes them with
 * another, as a chunk would, and checks every field of every type comes
 * back bit for bit: edge values (0, 1, UINT64_MAX, INT64_MIN, negative
 * results), every op code, the longest name, empty and absent names, and
 * long random sequences that exercise the tid and file tables (including
 * slot collisions). Then the decoder's defences: truncation at every
 * byte, overlong varints, reserved bits, unknown record types (skipped),
 * and rec_check() on malformed records.
 */
#include <errno.h>

#include <xxhash.h>

#include "tap.h"
#include "trace_test.h"
#include "trace_i.h"

/* test_golden(): XXH64 of the encoder's bytes, from the encoder of commit 7dc92e6 */
#define GOLDEN_RANDOM	0x76a0d43b4bc47ec1ull
#define GOLDEN_OPS	0xef903be75cf21d7cull

static uint8_t buf[64 << 20];
static char names[3][IOTAP_TRACE_NAME_MAX + 1];

static void to_rec(const struct iotap_trace_rec *s, const struct rec_extra *x,
		   struct iotap_trace_rec *r, char *namebuf)
{
	memset(r, 0, sizeof(*r));
	r->type = s->type;
	r->op = s->op;
	r->flags = s->flags;
	r->time_ns = s->time_ns;
	r->dur_ns = s->dur_ns;
	r->tid = s->tid;
	r->pid = s->pid;
	r->uid = s->uid;
	r->gid = s->gid;
	r->file = s->file;
	r->file2 = s->file2;
	r->fh = s->fh;
	r->offset = s->offset;
	r->length = s->length;
	r->result = s->result;
	r->mode = s->mode;
	r->name_len = s->name_len;
	r->aux = s->aux;
	if (x->name) {
		memcpy(namebuf, x->name, s->name_len);
		namebuf[s->name_len] = '\0';
		r->name = namebuf;
	}
	if (s->type == IOTAP_REC_SAMPLE)
		r->sample = x->sample;
}

/* Encode @n records, decode them back; 1 if every field matched. */
static int roundtrip(const struct iotap_trace_rec *recs, size_t n, const char *what)
{
	static struct rec_state enc, dec;
	char why[256], dname[IOTAP_TRACE_NAME_MAX + 1];
	const uint8_t *p, *end;
	size_t i, len = 0;

	rec_state_reset(&enc);
	rec_state_reset(&dec);
	for (i = 0; i < n; i++) {
		if (rec_check(&recs[i])) {
			diag("%s: record %zu refused by rec_check", what, i);
			return 0;
		}
		len += rec_encode(&enc, buf + len, &recs[i]);
	}
	p = buf;
	end = buf + len;
	for (i = 0; i < n; i++) {
		struct iotap_trace_rec out;
		struct rec_extra x;
		struct iotap_trace_rec s;
		int k = rec_decode(&dec, p, end, &s, &x);

		if (k <= 0) {
			diag("%s: record %zu: decode error %d", what, i, k);
			return 0;
		}
		p += k;
		to_rec(&s, &x, &out, dname);
		if (!rec_eq(&recs[i], &out, why, sizeof(why))) {
			diag("%s: record %zu (type %u op %u): %s", what, i, recs[i].type,
			     recs[i].op, why);
			return 0;
		}
	}
	if (p != end) {
		diag("%s: %td bytes left over", what, end - p);
		return 0;
	}
	return 1;
}

static void fill_all(struct iotap_trace_rec *r, uint16_t type, uint64_t v)
{
	memset(r, 0, sizeof(*r));
	r->type = type;
	r->op = (uint16_t)v;
	r->flags = (uint32_t)v;
	r->time_ns = v;
	r->dur_ns = v;
	r->tid = (uint32_t)v;
	r->pid = (uint32_t)v;
	r->uid = (uint32_t)v;
	r->gid = (uint32_t)v;
	r->file = v;
	r->file2 = v;
	r->fh = v;
	r->offset = v;
	r->length = v;
	r->result = (int64_t)v;
	r->mode = (uint32_t)v;
	r->aux = v;
	if (type == IOTAP_REC_SAMPLE) {
		uint64_t *f = &r->sample.rd_ios;
		int i;

		r->sample.dev_major = (uint32_t)v;
		r->sample.dev_minor = (uint32_t)v;
		for (i = 0; i < 14; i++)
			f[i] = v;
	}
}

static void test_edges(void)
{
	static const uint64_t vals[] = {
		0, 1, 127, 128, 0x3fff, 0x4000, UINT32_MAX, (uint64_t)UINT32_MAX + 1,
		INT64_MAX, (uint64_t)INT64_MIN, UINT64_MAX - 1, UINT64_MAX,
	};
	static struct iotap_trace_rec recs[4096];
	unsigned int type, i, n;

	for (type = IOTAP_REC_OP; type < IOTAP_REC_TYPE_MAX; type++) {
		n = 0;
		for (i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
			/* every field at the edge value, alone and after others */
			fill_all(&recs[n++], (uint16_t)type, vals[i]);
			fill_all(&recs[n], (uint16_t)type, vals[i]);
			recs[n].name = names[0];
			recs[n++].name_len = 0;
			fill_all(&recs[n], (uint16_t)type, vals[i]);
			recs[n].result = -(int64_t)(vals[i] & 0xffff) - 1;
			recs[n].name = names[1];
			recs[n++].name_len = IOTAP_TRACE_NAME_MAX;
		}
		ok(roundtrip(recs, n, "edges"),
		   "type %s: every field at 0, 1, 2^32, INT64_MIN, UINT64_MAX... round-trips",
		   iotap_trace_rec_type_name(type));
	}
}

static void test_all_ops(void)
{
	static struct iotap_trace_rec recs[4 * IOTAP_OP_MAX + 8];
	unsigned int op, n = 0;

	for (op = 0; op < IOTAP_OP_MAX; op++) {
		int j;

		for (j = 0; j < 4; j++) {
			struct iotap_trace_rec *r = &recs[n++];

			memset(r, 0, sizeof(*r));
			r->type = IOTAP_REC_OP;
			r->op = (uint16_t)op;
			r->time_ns = 1000000 + n * 1000;
			r->dur_ns = 500 + j;
			r->tid = 10 + j % 2;
			r->pid = 10;
			r->file = 5 + j;
			r->fh = j;
			r->offset = 4096u * j;
			r->length = 4096;
			r->result = j == 3 ? -5 : j == 2 ? 100 : 4096;
		}
	}
	recs[n] = recs[0];
	recs[n++].op = UINT16_MAX;
	ok(roundtrip(recs, n, "ops"), "all %d op codes (and 65535) round-trip", IOTAP_OP_MAX);
}

static void test_random(void)
{
	static struct iotap_trace_rec recs[200000];
	uint64_t seed = 42;
	size_t i, n = sizeof(recs) / sizeof(recs[0]);

	for (i = 0; i < n; i++)
		rec_random(&recs[i], &seed);
	ok(roundtrip(recs, n, "random"), "%zu random mixed records with edge values round-trip", n);

	/* Sequential and interleaved data ops: tid and file tables, collisions. */
	for (i = 0; i < n; i++) {
		struct iotap_trace_rec *r = &recs[i];
		uint64_t f = i % 3 == 0 ? 7 : i % 3 == 1 ? 7 + 256 * (i % 5) : rng_below(&seed,
								      1000);

		memset(r, 0, sizeof(*r));
		r->type = IOTAP_REC_OP;
		r->op = rng_below(&seed, 5) ? IOTAP_OP_READ : IOTAP_OP_WRITE;
		r->tid = (uint32_t)(100 + (i % 7) * 64);	/* same tid slot, different tids */
		r->pid = 100;
		r->time_ns = 1000000000ull + i * 1000 - rng_below(&seed, 3000);
		r->dur_ns = rng_below(&seed, 2000);
		r->file = f;
		r->fh = f + 1;
		r->offset = (i / 3) * 8192 + (rng_below(&seed, 10) ? 0 : rng_next(&seed));
		r->length = rng_below(&seed, 10) ? 8192 : rng_below(&seed, 100000);
		r->result = rng_below(&seed, 20) ? (int64_t)r->length :
			    rng_below(&seed, 2) ? -28 : (int64_t)rng_below(&seed, r->length + 1);
	}
	ok(roundtrip(recs, n, "tables"), "%zu data ops with tid/file slot collisions round-trip",
	   n);
}

/*
 * The encoder's output, byte for byte: XXH64 of the raw payloads of
 * test_random()'s two sequences, as the encoder before rec_encode_op()
 * (commit 7dc92e6) wrote them. The format lets an encoder no choice, so
 * a faster encoder must write exactly these bytes.
 */
static uint64_t encode_hash(const struct iotap_trace_rec *recs, size_t n)
{
	static struct rec_state enc;
	size_t i, len = 0;

	rec_state_reset(&enc);
	for (i = 0; i < n; i++)
		len += rec_encode(&enc, buf + len, &recs[i]);
	return XXH64(buf, len, 0);
}

static void test_golden(void)
{
	static struct iotap_trace_rec recs[200000];
	uint64_t seed = 42, h;
	size_t i, n = sizeof(recs) / sizeof(recs[0]);

	for (i = 0; i < n; i++)
		rec_random(&recs[i], &seed);
	h = encode_hash(recs, n);
	ok(h == GOLDEN_RANDOM, "random mixed records encode to the same bytes (%016llx)",
	   (unsigned long long)h);
	for (i = 0; i < n; i++) {
		struct iotap_trace_rec *r = &recs[i];

		memset(r, 0, sizeof(*r));
		r->type = IOTAP_REC_OP;
		r->op = (uint16_t)(i % 9 ? (i % 2 ? IOTAP_OP_READ : IOTAP_OP_WRITE) :
				   rng_below(&seed, 40));
		r->tid = (uint32_t)(100 + rng_below(&seed, 5) * (i % 11 ? 1 : 64));
		r->pid = i % 13 ? 100 : 100 + (uint32_t)rng_below(&seed, 3);
		r->uid = i % 17 ? 0 : 1000;
		r->gid = i % 19 ? 0 : 1000;
		r->time_ns = 1000000000ull + i * 1000 - rng_below(&seed, 3000);
		r->dur_ns = rng_below(&seed, i % 7 ? 2000 : 5000000);
		r->file = i % 4 ? 7 : rng_below(&seed, 600);
		r->file2 = i % 23 ? 0 : rng_below(&seed, 600);
		r->fh = r->file + (i % 29 ? 1 : 2);
		r->offset = (i / 4) * 8192 + (rng_below(&seed, 3) ? 0 : rng_next(&seed) >> 20);
		r->length = rng_below(&seed, 10) ? 8192 : rng_below(&seed, 3000000);
		r->result = rng_below(&seed, 20) ? (int64_t)r->length :
			    rng_below(&seed, 2) ? -28 : (int64_t)rng_below(&seed, r->length + 1);
		r->flags = i % 31 ? 0 : (uint32_t)rng_below(&seed, 1u << 20);
		r->mode = i % 37 ? 0 : 0100644;
		r->aux = i % 41 ? 0 : rng_next(&seed);
		if (i % 43 == 0) {
			r->name = names[i % 86 ? 2 : 0];
			r->name_len = (uint32_t)strlen(r->name);
		}
	}
	h = encode_hash(recs, n);
	ok(h == GOLDEN_OPS, "OP records of every field encode to the same bytes (%016llx)",
	   (unsigned long long)h);
}

static void test_truncation(void)
{
	struct iotap_trace_rec r;
	struct rec_state enc, dec;
	struct rec_extra x;
	struct iotap_trace_rec s;
	unsigned int type;
	int bad = 0;

	for (type = IOTAP_REC_OP; type < IOTAP_REC_TYPE_MAX; type++) {
		size_t len, cut;

		fill_all(&r, (uint16_t)type, UINT64_MAX);
		r.name = names[2];
		r.name_len = 300;
		rec_state_reset(&enc);
		len = rec_encode(&enc, buf, &r);
		for (cut = 0; cut < len; cut++) {
			rec_state_reset(&dec);
			if (rec_decode(&dec, buf, buf + cut, &s, &x) != -EBADMSG)
				bad++;
		}
		rec_state_reset(&dec);
		if (rec_decode(&dec, buf, buf + len, &s, &x) != (int)len)
			bad++;
	}
	ok(!bad, "a record cut at any byte is -EBADMSG, whole it decodes (%d bad)", bad);
}

static void test_malformed(void)
{
	struct rec_state dec;
	struct rec_extra x;
	struct iotap_trace_rec s;
	struct iotap_trace_rec r;
	uint8_t b[64];
	int k;

	/* OP with an 11-byte varint op code */
	memset(b, 0x80, sizeof(b));
	b[0] = IOTAP_REC_OP;
	b[11] = 0;
	rec_state_reset(&dec);
	ok(rec_decode(&dec, b, b + 20, &s, &x) == -EBADMSG, "overlong varint is -EBADMSG");

	/* 10-byte varint with a tenth byte of 2 does not fit 64 bits */
	b[0] = IOTAP_REC_NOTE;
	memset(b + 1, 0xff, 9);
	b[10] = 2;
	rec_state_reset(&dec);
	ok(rec_decode(&dec, b, b + 20, &s, &x) == -EBADMSG,
	   "varint overflowing 64 bits is -EBADMSG");

	/* OP with a reserved presence bit (bit 14) */
	b[0] = IOTAP_REC_OP;
	b[1] = IOTAP_OP_READ;
	b[2] = 0x80;
	b[3] = 0x80;
	b[4] = 0x01;
	memset(b + 5, 0, 10);
	rec_state_reset(&dec);
	ok(rec_decode(&dec, b, b + 15, &s, &x) == -EBADMSG, "reserved presence bit is -EBADMSG");

	/* op code above 65535 */
	b[0] = IOTAP_REC_OP;
	b[1] = 0x80;
	b[2] = 0x80;
	b[3] = 0x04;
	memset(b + 4, 0, 10);
	rec_state_reset(&dec);
	ok(rec_decode(&dec, b, b + 14, &s, &x) == -EBADMSG, "op code above 65535 is -EBADMSG");

	/* tid above 2^32 */
	b[0] = IOTAP_REC_PHASE;
	b[1] = 0;
	b[2] = 1 << 3;	/* tid present */
	b[3] = 0x80; b[4] = 0x80; b[5] = 0x80; b[6] = 0x80; b[7] = 0x10;
	rec_state_reset(&dec);
	ok(rec_decode(&dec, b, b + 8, &s, &x) == -EBADMSG, "tid above 2^32 is -EBADMSG");

	/* name longer than IOTAP_TRACE_NAME_MAX */
	b[0] = IOTAP_REC_NOTE;
	b[1] = 0;
	b[2] = 0x80; b[3] = 0x80; b[4] = 0x02;	/* bit 15: name */
	b[5] = 0x81; b[6] = 0x20;		/* 4097 */
	rec_state_reset(&dec);
	ok(rec_decode(&dec, b, b + sizeof(b), &s, &x) == -EBADMSG,
	   "name above the maximum is -EBADMSG");

	/* type 0 */
	b[0] = 0;
	rec_state_reset(&dec);
	ok(rec_decode(&dec, b, b + 8, &s, &x) == -EBADMSG, "type 0 is -EBADMSG");

	/* a future type is skipped by its length */
	b[0] = 42;
	b[1] = 5;
	memset(b + 2, 0xee, 5);
	b[7] = IOTAP_REC_END;
	b[8] = 0;
	b[9] = 0;
	rec_state_reset(&dec);
	k = rec_decode(&dec, b, b + 10, &s, &x);
	ok(k == 7 && s.type == 0, "unknown type 42 is skipped by its length (%d bytes)", k);
	k = rec_decode(&dec, b + 7, b + 10, &s, &x);
	ok(k == 3 && s.type == IOTAP_REC_END, "and the record after it decodes");
	b[1] = 50;
	ok(rec_decode(&dec, b, b + 10, &s, &x) == -EBADMSG,
	   "unknown type longer than the payload is -EBADMSG");

	memset(&r, 0, sizeof(r));
	r.type = 0;
	ok(rec_check(&r) == -EINVAL, "rec_check refuses type 0");
	r.type = IOTAP_REC_TYPE_MAX;
	ok(rec_check(&r) == -EINVAL, "rec_check refuses type %d", IOTAP_REC_TYPE_MAX);
	r.type = IOTAP_REC_NOTE;
	r.name = names[0];
	r.name_len = IOTAP_TRACE_NAME_MAX + 1;
	ok(rec_check(&r) == -EINVAL, "rec_check refuses a name above the maximum");
	r.name = NULL;
	r.name_len = 3;
	ok(rec_check(&r) == -EINVAL, "rec_check refuses name_len without a name");
	r.name_len = 0;
	ok(rec_check(&r) == 0, "rec_check accepts a NOTE without a name");
}

static void test_sizes(void)
{
	struct iotap_trace_rec r;
	struct rec_state enc;
	size_t len;

	/* The sequential case the format is built for: one byte of bits, no fields. */
	rec_state_reset(&enc);
	memset(&r, 0, sizeof(r));
	r.type = IOTAP_REC_OP;
	r.op = IOTAP_OP_WRITE;
	r.tid = 7;
	r.pid = 7;
	r.file = 12;
	r.fh = 3;
	r.length = 1 << 20;
	r.result = 1 << 20;
	r.time_ns = 5000000000ull;
	r.dur_ns = 250000;
	rec_encode(&enc, buf, &r);
	r.offset += 1 << 20;
	r.time_ns += 300000;
	len = rec_encode(&enc, buf, &r);
	ok(len == 9,
	   "a sequential write after the first costs 9 raw bytes (%zu): type, op, bits, 3+3 "
	   "time/dur",
	   len);
}

/*
 * An APP record is an extension record: it leaves the delta state alone,
 * so the records after it decode the same for a reader that skips it as
 * an unknown type (an older reader) and for one that knows it.
 */
static void test_app_extension(void)
{
	struct iotap_trace_rec r[3];
	struct rec_state enc, dec;
	struct rec_extra x;
	struct iotap_trace_rec s;
	size_t len = 0, app_at, i;
	int n, pass;

	memset(r, 0, sizeof(r));
	r[0].type = IOTAP_REC_NOTE;
	r[0].time_ns = 1000;
	r[1].type = IOTAP_REC_APP;
	r[1].op = IOTAP_APP_TXN;
	r[1].time_ns = 900000;
	r[1].dur_ns = 2500000;
	r[1].flags = IOTAP_APPF_STEADY;
	r[1].aux = 77;
	r[2].type = IOTAP_REC_PHASE;
	r[2].time_ns = 2000;
	r[2].name = "steady";
	r[2].name_len = 6;
	rec_state_reset(&enc);
	len = rec_encode(&enc, buf, &r[0]);
	app_at = len;
	len += rec_encode(&enc, buf + len, &r[1]);
	len += rec_encode(&enc, buf + len, &r[2]);
	for (pass = 0; pass < 2; pass++) {
		const uint8_t *p = buf, *end = buf + len;

		if (pass)
			buf[app_at] = 200;	/* as a type this reader does not know */
		rec_state_reset(&dec);
		for (i = 0; i < 3; i++) {
			n = rec_decode(&dec, p, end, &s, &x);
			if (n <= 0)
				break;
			p += n;
			if (i == 1 && !pass)
				ok(s.type == IOTAP_REC_APP && s.op == IOTAP_APP_TXN &&
				   s.time_ns == 900000 && s.dur_ns == 2500000 &&
				   s.flags == IOTAP_APPF_STEADY && s.aux == 77,
				   "APP record round-trips");
			if (i == 1 && pass)
				ok(s.type == 0, "an unknown extension type decodes as skipped");
		}
		ok(i == 3 && p == end && s.type == IOTAP_REC_PHASE && s.time_ns == 2000,
		   "the record after an APP decodes the same %s", pass ? "skipped" : "known");
	}
}

/*
 * Each record kind's constructor and accessors (iotap_trace_rec.h): what
 * goes in comes back, through the codec too, at edge values.
 */
static void test_kinds(void)
{
	static const uint64_t v[] = { 0, 1, 1ull << 40, UINT64_MAX };
	struct iotap_trace_rec r[8], *x;
	struct iotap_trace_app_backup b, g;
	unsigned int i, bad = 0;

	for (i = 0; i < 4; i++) {
		memset(r, 0, sizeof(r));
		b = (struct iotap_trace_app_backup){ v[i], v[(i + 1) % 4], v[(i + 2) % 4],
						     v[(i + 3) % 4], v[i] / 3, v[i] / 5, v[i] >> 1 };
		iotap_trace_lost_init(&r[0], v[i], 7);
		iotap_trace_end_init(&r[1], v[i], v[(i + 1) % 4]);
		iotap_trace_app_txn_init(&r[2], v[i], IOTAP_APPF_STEADY, v[(i + 2) % 4]);
		iotap_trace_app_span_init(&r[3], "steady", v[i], v[(i + 3) % 4], IOTAP_APPF_PARTIAL);
		r[3].name_len = 6;
		iotap_trace_app_span_set_cpu(&r[3], v[(i + 1) % 4], v[(i + 2) % 4]);
		iotap_trace_app_backup_init(&r[4], "backup gen=1", v[i], 0, &b);
		r[4].name_len = 12;
		iotap_trace_phase_init(&r[5], IOTAP_PHASE_END, "p", 1, v[i], v[(i + 1) % 4]);
		iotap_trace_name_init(&r[6], v[i], v[(i + 1) % 4], 0100644, 1, 2, v[(i + 2) % 4],
				      IOTAP_NAME_LINK, "n", 1);
		iotap_trace_op_init(&r[7], IOTAP_OP_READ);
		for (x = r; x < r + 8; x++)
			x->time_ns = 1000 + (uint64_t)(x - r);
		if (!roundtrip(r, 8, "kinds"))
			bad++;
		iotap_trace_app_backup_get(&r[4], &g);
		b.cpu_ns = (int64_t)b.cpu_ns > 0 ? b.cpu_ns : 0;
		bad += r[0].type != IOTAP_REC_LOST || iotap_trace_lost_count(&r[0]) != v[i] ||
		       r[0].tid != 7;
		bad += r[1].type != IOTAP_REC_END || iotap_trace_end_records(&r[1]) != v[i] ||
		       iotap_trace_end_lost(&r[1]) != v[(i + 1) % 4];
		bad += !iotap_trace_app_is(&r[2], IOTAP_APP_TXN) ||
		       iotap_trace_app_dur_ns(&r[2]) != v[i] ||
		       iotap_trace_app_txn_lag_ns(&r[2]) != v[(i + 2) % 4] ||
		       iotap_trace_app_flags(&r[2]) != IOTAP_APPF_STEADY;
		bad += iotap_trace_app_kind(&r[3]) != IOTAP_APP_SPAN ||
		       iotap_trace_app_flags(&r[3]) != IOTAP_APPF_PARTIAL ||
		       iotap_trace_app_span_start_ns(&r[3]) != v[i] ||
		       iotap_trace_app_dur_ns(&r[3]) != v[(i + 3) % 4] ||
		       iotap_trace_app_span_cpu_user_ns(&r[3]) != v[(i + 1) % 4] ||
		       iotap_trace_app_span_cpu_sys_ns(&r[3]) != v[(i + 2) % 4];
		bad += !iotap_trace_app_is(&r[4], IOTAP_APP_BACKUP) || memcmp(&b, &g, sizeof(b)) ||
		       iotap_trace_app_flags(&r[4]) != 0;
		bad += iotap_trace_phase_cpu_user_ns(&r[5]) != v[i] ||
		       iotap_trace_phase_cpu_sys_ns(&r[5]) != v[(i + 1) % 4];
		bad += iotap_trace_name_parent(&r[6]) != v[(i + 1) % 4] ||
		       iotap_trace_name_size(&r[6]) != v[(i + 2) % 4] || !iotap_trace_name_is_link(&r[6]);
	}
	ok(!bad, "each kind's constructor and accessors agree, through the codec too (%u bad)", bad);
}

int main(void)
{
	unsigned int i;

	for (i = 0; i < IOTAP_TRACE_NAME_MAX; i++)
		names[1][i] = (char)('A' + i % 26);
	for (i = 0; i < 300; i++)
		names[2][i] = 'x';
	test_edges();
	test_all_ops();
	test_random();
	test_golden();
	test_truncation();
	test_malformed();
	test_sizes();
	test_app_extension();
	test_kinds();
	return done_testing();
}
