// SPDX-License-Identifier: MIT
/*
 * test_dump.c - iotap dump's fast paths (tools/dump_fast.c) print what its
 * field table (tools/dump_fields.c) prints, byte for byte
 *
 * Records of every kind (every record type, an unknown one, every APP
 * kind, every op and some past the last) with edge values (negative and
 * out-of-range times, -errno results with and without a name, 2^64 - 1
 * offsets, 32-bit extremes, names with quotes, backslashes, commas,
 * control and high bytes, 4096-byte names) go through both, in text, CSV
 * and JSON; every line a fast path takes must equal the table's. The
 * fast paths must also take what they are there for (OP, NAME and SAMPLE
 * lines; every CSV row; OP and NAME JSON lines), or the comparison
 * would prove nothing.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "dump_fast.h"
#include "dump_fields.h"

#define NREC		60000
#define BASE		1000000000000ull
#define FAST_NS		4000000000000000ull	/* dump_fast.c's FAST_NS_MAX */

static uint64_t rs = 0x9E3779B97F4A7C15ull;

static uint64_t rnd(void)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return rs;
}

#define PICK(a) ((a)[rnd() % (sizeof(a) / sizeof((a)[0]))])

static const uint64_t u64s[] = {
	0, 1, 7, 4096, 1ull << 32, (1ull << 63) - 1, 1ull << 63, UINT64_MAX, 123456789,
};
static const uint32_t u32s[] = { 0, 1, 1000, 0100644, 040755, 0120777, 0x7fffffffu, UINT32_MAX };
static const int64_t results[] = {
	0, 1, 4096, -1, -2, -13, -28, -95, -133, -4095, -4096, -4097, -600, -100000,
	INT64_MIN, INT64_MAX, (int64_t)1 << 40,
};
static char big[IOTAP_TRACE_NAME_MAX];
static const char *const names[] = {
	NULL, "", "plain", "q\"uote", "back\\slash", "nl\nx", "tab\tcr\r", "del\x7f",
	"\x01\x1f", "hi\xc3\xa9\xff\x80", "com,ma", "\"\"", "{\"json\":1}", "/a/b c/d",
	"\b\f\v\x1b", "<\\u0041>",
};

/* Time since the base: around 0, negative, at the fast paths' limits, far out. */
static uint64_t pick_time(void)
{
	switch (rnd() % 12) {
	case 0:
		return BASE - 1 - rnd() % 1000000000;
	case 1:
		return BASE + FAST_NS - 1 + rnd() % 3;
	case 2:
		return BASE - FAST_NS - 1 + rnd() % 3;
	case 3:
		return rnd() % 2 ? UINT64_MAX : 0;
	default:
		return BASE + rnd() % 100000000000ull;
	}
}

static uint64_t pick_dur(void)
{
	switch (rnd() % 8) {
	case 0:
		return FAST_NS - 1 + rnd() % 3;
	case 1:
		return PICK(u64s);
	default:
		return rnd() % 1000000;
	}
}

static void make(struct iotap_trace_rec *r, unsigned int i)
{
	const char *nm;

	memset(r, 0, sizeof(*r));
	/* every type and an unknown one, OP records a third of the time */
	r->type = (uint16_t)(i % 3 ? IOTAP_REC_OP : rnd() % (IOTAP_REC_TYPE_MAX + 1));
	r->op = (uint16_t)(rnd() % 10 ? rnd() % IOTAP_OP_MAX : rnd() % 300);
	if (r->type == IOTAP_REC_APP)
		r->op = (uint16_t)(rnd() % 6);
	switch (rnd() % 4) {
	case 0:
		r->flags = 0;
		break;
	case 1:
		r->flags = (uint32_t)(rnd() & 0x7f);
		break;
	case 2:
		r->flags = PICK(u32s);
		break;
	default:
		r->flags = (uint32_t)rnd();
	}
	if (r->type == IOTAP_REC_PHASE && rnd() % 2)
		r->flags = rnd() % 2 ? IOTAP_PHASE_END : IOTAP_PHASE_BEGIN;
	r->time_ns = pick_time();
	r->dur_ns = pick_dur();
	r->tid = PICK(u32s);
	r->pid = PICK(u32s);
	r->uid = PICK(u32s);
	r->gid = PICK(u32s);
	r->file = PICK(u64s);
	r->file2 = rnd() % 2 ? 0 : PICK(u64s);
	r->fh = rnd() % 2 ? 0 : PICK(u64s);
	r->offset = PICK(u64s);
	if (r->type == IOTAP_REC_APP && rnd() % 2)
		r->offset = pick_time();	/* a SPAN's start */
	r->length = PICK(u64s);
	r->result = rnd() % 3 ? PICK(results) : (int64_t)rnd();
	r->mode = rnd() % 2 ? 0 : PICK(u32s);
	r->aux = rnd() % 2 ? 0 : PICK(u64s);
	nm = rnd() % 3 ? NULL : PICK(names);
	if (nm) {
		r->name = nm;
		r->name_len = (uint32_t)strlen(nm);
	}
	if (rnd() % 200 == 0) {
		r->name = big;
		r->name_len = sizeof(big);
	}
	if (rnd() % 100 == 0) {
		r->name = "nul\0inside";	/* a name_len past a NUL */
		r->name_len = 11;
	}
	if (r->type == IOTAP_REC_SAMPLE) {
		uint64_t *v = &r->sample.rd_ios;
		unsigned int k;

		r->sample.dev_major = PICK(u32s);
		r->sample.dev_minor = PICK(u32s);
		for (k = 0; k < 14; k++)
			v[k] = rnd() % 2 ? PICK(u64s) : rnd();
	}
}

typedef int (*fast_fn)(struct obuf *ob, const struct iotap_trace_rec *r, uint64_t base);
typedef void (*table_fn)(FILE *f, const struct iotap_trace_rec *r, uint64_t base);

static const struct {
	const char *name;
	fast_fn fast;
	table_fn table;
} fmts[] = {
	{ "text", dump_text_fast, dump_table_text },
	{ "csv", dump_csv_fast, dump_table_csv },
	{ "json", dump_json_fast, dump_table_json },
};

int main(void)
{
	static struct obuf ob;
	uint64_t taken[3][IOTAP_REC_TYPE_MAX + 1] = { { 0 } }, json_named = 0;
	unsigned int f, i, k, bad[3] = { 0 };
	struct iotap_trace_rec r;
	char *tab = NULL;
	size_t tab_len = 0;
	FILE *mf;

	for (i = 0; i < sizeof(big); i++)
		big[i] = (char)(i % 7 == 3 ? '"' : i % 11 == 5 ? 1 : 'a' + i % 26);
	dump_fast_init();
	ob.f = stdout;
	for (i = 0; i < NREC; i++) {
		make(&r, i);
		for (f = 0; f < 3; f++) {
			ob.len = 0;
			if (!fmts[f].fast(&ob, &r, BASE))
				continue;
			taken[f][r.type <= IOTAP_REC_TYPE_MAX ? r.type : 0]++;
			if (f == 2 && r.name)
				json_named++;
			mf = open_memstream(&tab, &tab_len);
			if (!mf)
				return 1;
			fmts[f].table(mf, &r, BASE);
			fclose(mf);
			if ((tab_len != ob.len || memcmp(tab, ob.buf, ob.len)) && bad[f]++ < 3) {
				diag("%s, record %u (type %u op %u): table and fast path differ",
				     fmts[f].name, i, r.type, r.op);
				diag("table: %.*s", (int)(tab_len < 400 ? tab_len : 400), tab);
				diag("fast:  %.*s", (int)(ob.len < 400 ? ob.len : 400), ob.buf);
			}
			free(tab);
			tab = NULL;
		}
	}
	for (f = 0; f < 3; f++)
		ok(!bad[f], "%s: every line the fast path takes is the table's (%u differ)",
		   fmts[f].name, bad[f]);
	ok(taken[0][IOTAP_REC_OP] > NREC / 2 && taken[0][IOTAP_REC_NAME] > 100 &&
	   taken[0][IOTAP_REC_SAMPLE] > 100,
	   "text: the fast path took OP, NAME and SAMPLE lines (%" PRIu64 ", %" PRIu64 ", %" PRIu64 ")",
	   taken[0][IOTAP_REC_OP], taken[0][IOTAP_REC_NAME], taken[0][IOTAP_REC_SAMPLE]);
	for (k = IOTAP_REC_OP; k < IOTAP_REC_TYPE_MAX; k++)
		if (taken[1][k] < 100)
			break;
	ok(k == IOTAP_REC_TYPE_MAX, "csv: the fast path took rows of every record type");
	ok(taken[2][IOTAP_REC_OP] > NREC / 3 && taken[2][IOTAP_REC_NAME] > 100 && json_named > 1000,
	   "json: the fast path took OP and NAME lines, with names (%" PRIu64 ", %" PRIu64
	   ", %" PRIu64 ")", taken[2][IOTAP_REC_OP], taken[2][IOTAP_REC_NAME], json_named);
	return done_testing();
}
