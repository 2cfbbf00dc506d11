// SPDX-License-Identifier: MIT
/*
 * test_parquet.c - tools/export/parquet*.c's encodings, decoded back here
 * from Encodings.md (white box: the files are included)
 *
 *  - the RLE / bit-packed hybrid at every bit width 0-32: runs, short
 *    runs, values that change every time, lengths around the group of 8;
 *  - DELTA_BINARY_PACKED: sorted times, random values, INT64_MIN/MAX
 *    side by side (deltas that wrap), constant columns, lengths around the
 *    block of 128 and the miniblock of 32; the min and max it takes on the
 *    way;
 *  - a whole file: "PAR1" at both ends and a footer length that fits;
 *  - dictionary keys: more keys than the key cache's slots, each row's
 *    index naming its own string, each string in the dictionary once.
 * tests/e2e/export-duckdb.sh has DuckDB read real exports; this runs
 * where DuckDB is not installed.
 */
#include "../../tools/export/parquet.c"
#include "../../tools/export/parquet_enc.c"
#include "../../tools/export/parquet_meta.c"

#include <stdio.h>

#include "tap.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static uint64_t get_varint(const uint8_t **p)
{
	uint64_t v = 0;
	unsigned int s = 0;

	while (**p & 0x80) {
		v |= (uint64_t)(**p & 0x7f) << s;
		s += 7;
		(*p)++;
	}
	v |= (uint64_t)**p << s;
	(*p)++;
	return v;
}

/* Read @w bits at bit @pos of @p, LSB first. */
static uint64_t get_bits(const uint8_t *p, uint64_t pos, unsigned int w)
{
	uint64_t v = 0;
	unsigned int i;

	for (i = 0; i < w; i++, pos++)
		v |= (uint64_t)(p[pos / 8] >> (pos % 8) & 1) << i;
	return v;
}

static int rle_decode(const uint8_t *p, const uint8_t *end, uint32_t *out, size_t n,
		      unsigned int w)
{
	size_t i = 0, k;

	while (i < n) {
		uint64_t h;

		if (p >= end)
			return -1;
		h = get_varint(&p);
		if (h & 1) {
			size_t vals = (h >> 1) * 8;

			for (k = 0; k < vals; k++)
				if (i < n)
					out[i++] = (uint32_t)get_bits(p, k * w, w);
			p += (h >> 1) * w;
		} else {
			uint32_t v = 0;

			memcpy(&v, p, (w + 7) / 8);
			p += (w + 7) / 8;
			for (k = 0; k < (h >> 1) && i < n; k++)
				out[i++] = v;
		}
	}
	return p <= end ? 0 : -1;
}

static int delta_decode(const uint8_t *p, int64_t *out, size_t *n)
{
	uint64_t bs = get_varint(&p), mb = get_varint(&p), total = get_varint(&p);
	uint64_t z = get_varint(&p), per = bs / mb;
	int64_t prev = (int64_t)(z >> 1) ^ -(int64_t)(z & 1);
	size_t i = 0, m;

	*n = total;
	if (total)
		out[i++] = prev;
	while (i < total) {
		uint64_t zm = get_varint(&p);
		int64_t mind = (int64_t)(zm >> 1) ^ -(int64_t)(zm & 1);
		const uint8_t *wd = p;

		p += mb;
		for (m = 0; m < mb && i < total; m++) {
			uint64_t k;

			for (k = 0; k < per; k++) {
				uint64_t x = get_bits(p, k * wd[m], wd[m]);

				if (i < total) {
					prev = (int64_t)((uint64_t)prev + (uint64_t)mind + x);
					out[i++] = prev;
				}
			}
			p += per * wd[m] / 8;
		}
	}
	return 0;
}

static void test_rle(void)
{
	static uint32_t v[1100], back[1100];
	unsigned int w, bad = 0, cases = 0;
	size_t lens[] = { 0, 1, 7, 8, 9, 15, 16, 17, 63, 64, 65, 1000, 1099 }, li, i;

	for (w = 0; w <= 32; w++) {
		uint64_t mask = w == 32 ? 0xffffffffull : (1ull << w) - 1;

		for (li = 0; li < sizeof(lens) / sizeof(lens[0]); li++) {
			int shape;

			for (shape = 0; shape < 3; shape++) {
				struct bytes b = { 0 };
				size_t n = lens[li];

				for (i = 0; i < n; i++) {
					if (shape == 0)		/* random */
						v[i] = (uint32_t)(rnd() & mask);
					else if (shape == 1)	/* runs of 1-20 */
						v[i] = i && rnd() % 20 ? v[i - 1] : (uint32_t)(rnd() & mask);
					else			/* runs of exactly 7 then 9 */
						v[i] = (uint32_t)((i % 16 < 7 ? 1 : 2) & mask);
				}
				cases++;
				if (pq_rle_hybrid(&b, v, n, w) ||
				    rle_decode(b.p, b.p + b.len, back, n, w) ||
				    memcmp(v, back, n * sizeof(*v))) {
					if (!bad)
						diag("rle: width %u, %zu values, shape %d", w, n, shape);
					bad++;
				}
				by_free(&b);
			}
		}
	}
	ok(!bad, "RLE/bit-packed hybrid: %u cases decode back (%u wrong)", cases, bad);
}

static void test_delta(void)
{
	static int64_t v[700], back[700];
	size_t lens[] = { 0, 1, 2, 31, 32, 33, 127, 128, 129, 130, 256, 257, 699 }, li, i, n2;
	unsigned int bad = 0, cases = 0;
	int shape;

	for (li = 0; li < sizeof(lens) / sizeof(lens[0]); li++) {
		for (shape = 0; shape < 5; shape++) {
			struct bytes b = { 0 };
			size_t n = lens[li];
			int64_t mn = 0, mx = 0, wmn = 0, wmx = 0;

			for (i = 0; i < n; i++) {
				switch (shape) {
				case 0:		/* times: ascending, jittered */
					v[i] = 1700000000000000000ll + (int64_t)i * 45000 +
					       (int64_t)(rnd() % 5000);
					break;
				case 1:		/* anything */
					v[i] = (int64_t)rnd();
					break;
				case 2:		/* the extremes side by side */
					v[i] = i % 2 ? INT64_MAX : INT64_MIN;
					break;
				case 3:		/* constant */
					v[i] = -2;
					break;
				default:	/* small, signed */
					v[i] = (int64_t)(rnd() % 200) - 100;
					break;
				}
			}
			for (i = 0; i < n; i++) {
				wmn = !i || v[i] < wmn ? v[i] : wmn;
				wmx = !i || v[i] > wmx ? v[i] : wmx;
			}
			cases++;
			if (pq_delta_pack(&b, v, n, &mn, &mx) || delta_decode(b.p, back, &n2) || n2 != n ||
			    memcmp(v, back, n * sizeof(*v)) || mn != wmn || mx != wmx) {
				if (!bad)
					diag("delta: %zu values, shape %d", n, shape);
				bad++;
			}
			by_free(&b);
		}
	}
	ok(!bad, "DELTA_BINARY_PACKED: %u cases decode back (%u wrong)", cases, bad);
}

static void test_file(void)
{
	static const struct pq_col cols[] = {
		{ "t", PQ_TIMESTAMP_NS, 0 }, { "s", PQ_STRING, 1 }, { "i", PQ_INT64, 1 },
	};
	char path[] = "/tmp/test_parquet.XXXXXX";
	struct pq_writer *w;
	uint8_t head[4], tail[8];
	uint32_t flen;
	long size;
	FILE *f;
	int fd = mkstemp(path), ret = 0;
	unsigned int r;

	f = fd >= 0 ? fdopen(fd, "w+") : NULL;
	if (!ok(f != NULL, "a temporary file"))
		return;
	unlink(path);
	ok(!pq_open(&w, f, cols, 3, "test"), "open");
	for (r = 0; r < 20000 && !ret; r++) {
		struct pq_val v[3] = { { .i = 1700000000000000000ll + r } };
		char s[16];

		snprintf(s, sizeof(s), "f%u", r % 37);
		v[1].s = s;
		v[1].len = (uint32_t)strlen(s);
		v[1].key = r % 2 ? r % 37 + 1 : 0;	/* keyed and not */
		v[1].null = !(r % 5);
		v[2].i = (int64_t)r - 10000;
		v[2].null = !(r % 3);
		ret = pq_put_row(w, v);
	}
	ok(!ret && pq_rows(w) == 20000, "20000 rows");
	ok(!pq_close(w, NULL, 0), "close");
	fflush(f);
	size = ftell(f);
	rewind(f);
	ok(fread(head, 1, 4, f) == 4 && !memcmp(head, "PAR1", 4), "PAR1 first");
	fseek(f, size - 8, SEEK_SET);
	ok(fread(tail, 1, 8, f) == 8 && !memcmp(tail + 4, "PAR1", 4), "PAR1 last");
	memcpy(&flen, tail, 4);
	ok(flen > 0 && (long)flen < size - 12, "the footer length fits (%u of %ld)", flen, size);
	fclose(f);
}

/*
 * Keyed strings: keys that share a slot of the key cache (more keys than
 * KEY_SLOTS), keys met again after others, unkeyed puts of the same
 * strings between them: every row's index names its own string, and
 * each string is in the dictionary once.
 */
static void test_keys(void)
{
	static const struct pq_col cols[] = { { "s", PQ_STRING, 0 } };
	const unsigned int distinct = 3 * KEY_SLOTS - 72, rows = distinct + 1000;
	struct pq_writer *w;
	unsigned int r, bad = 0;
	FILE *f = tmpfile();

	if (!ok(f && !pq_open(&w, f, cols, 1, "test"), "open (keys)"))
		return;
	for (r = 0; r < rows; r++) {
		unsigned int k = (unsigned int)((r * 7919ull) % distinct);
		const struct column *c = &w->c[0];
		struct pq_val v = { 0 };
		char buf[16];
		const uint8_t *e;
		uint32_t len;

		snprintf(buf, sizeof(buf), "p%u", k);
		v.s = buf;
		v.len = (uint32_t)strlen(buf);
		v.key = r % 5 ? k + 1 : 0;
		if (pq_put_row(w, &v))
			break;
		e = c->d.plain.p + c->d.off[c->sv[c->nv - 1]];
		memcpy(&len, e, 4);
		if (len != v.len || memcmp(e + 4, buf, len)) {
			if (!bad)
				diag("row %u: '%s' put, '%.*s' indexed", r, buf, (int)len, e + 4);
			bad++;
		}
	}
	ok(r == rows && !bad, "keyed strings: %u rows index their own string (%u wrong)", rows, bad);
	ok(w->c[0].d.n == distinct, "each string once in the dictionary (%u of %u)", w->c[0].d.n,
	   distinct);
	pq_abort(w);
	fclose(f);
}

int main(void)
{
	test_rle();
	test_delta();
	test_file();
	test_keys();
	return done_testing();
}
