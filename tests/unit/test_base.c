// SPDX-License-Identifier: MIT
/*
 * test_base.c - the shared primitives of trace/base/ (iotap_base.h)
 *
 * clock: monotonic and in ns; hash: stable and seed-dependent; map: a
 * random mix of put/get/del against a plain reference array (keys 0 and
 * UINT64_MAX included), growth, equal keys through add/find, iteration;
 * hist: the bucket scheme at 3 and 6 bits (every value inside its bucket's
 * range, ranges contiguous), quantiles within the stated error, merge;
 * sparse histograms (merged into from few buckets) equal grouped ones;
 * hist pool: pooled histograms count alike, reused blocks start from
 * zero, many at once span slabs;
 * size: what both former parsers accepted and refused; argv: joining;
 * bonnie: the CSV line's columns, +++++, rates and latency units;
 * fmt: iotap_fmt_* give printf's bytes for every digit count, the
 * powers of ten and their neighbours, k * 10^i - 1, k * 10^i and
 * (k + 1) * 10^i - 1 for k < 100, the extremes and random values;
 * buf: sizes, 2 MiB alignment and rounding, regrowing, and (where the
 * kernel has transparent huge pages on "madvise" or "always") that a big
 * buffer's mapping is one the kernel may back with huge pages.
 */
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "iotap_base.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void test_clock(void)
{
	uint64_t a = iotap_clock_ns(), b = iotap_clock_ns();
	struct timespec ts = { 0, 2000000 };

	ok(a > 0 && b >= a, "clock: monotonic (%" PRIu64 " then %" PRIu64 ")", a, b);
	nanosleep(&ts, NULL);
	b = iotap_clock_ns();
	ok(b - a >= 2000000 && b - a < 2000000000ull, "clock: a 2 ms sleep is %" PRIu64 " ns",
	   b - a);
}

static void test_hash(void)
{
	ok(iotap_hash_u64(1) == iotap_hash_u64(1) && iotap_hash_u64(1) != iotap_hash_u64(2),
	   "hash: u64 stable, keys differ");
	ok(iotap_hash_str("abc", 0) == iotap_hash_bytes("abc", 3, 0) &&
	   iotap_hash_str("abc", 0) != iotap_hash_str("abc", 1),
	   "hash: str equals bytes, the seed matters");
	ok(iotap_hash_u64x2(1, 2) != iotap_hash_u64x2(2, 1), "hash: u64x2 is ordered");
}

#define NREF	5000

struct val {
	uint64_t a, b;
	char tag;
};

static void test_map(void)
{
	static uint64_t ref_key[NREF];
	static uint64_t ref_val[NREF];
	static int ref_in[NREF];
	struct iotap_map m;
	uint64_t i, pos, key, n, bad = 0, seen;
	struct val *v;
	int ret;

	iotap_map_init(&m, sizeof(struct val));
	ok(!iotap_map_get(&m, 5) && iotap_map_count(&m) == 0, "map: empty map finds nothing");
	for (i = 0; i < NREF; i++)
		ref_key[i] = i == 0 ? 0 : i == 1 ? UINT64_MAX : (i & 1 ? rnd() : i * 4096);
	for (n = 0; n < 200000; n++) {
		i = rnd() % NREF;
		switch (rnd() % 3) {
		case 0:
		case 1:
			ret = iotap_map_put(&m, ref_key[i], (void **)&v);
			if (ret != ref_in[i] || (ret == 1 && v->a != ref_val[i]))
				bad++;
			ref_val[i] = rnd();
			v->a = ref_val[i];
			v->b = ~ref_val[i];
			ref_in[i] = 1;
			break;
		default:
			ret = iotap_map_del(&m, ref_key[i]);
			if (ret != (ref_in[i] ? 0 : -ENOENT))
				bad++;
			ref_in[i] = 0;
			break;
		}
	}
	for (i = 0, seen = 0; i < NREF; i++) {
		v = iotap_map_get(&m, ref_key[i]);
		if (!!v != ref_in[i] || (v && (v->a != ref_val[i] || v->b != ~ref_val[i])))
			bad++;
		seen += ref_in[i];
	}
	ok(!bad && iotap_map_count(&m) == seen,
	   "map: 200000 random put/del agree with a reference (%" PRIu64 " keys, 0 and "
	   "UINT64_MAX among them)", seen);
	for (pos = 0, n = 0; (v = iotap_map_next(&m, &pos, &key)); n++) {
		for (i = 0; i < NREF && ref_key[i] != key; i++)
			;
		if (i == NREF || !ref_in[i] || v->a != ref_val[i])
			bad++;
	}
	ok(!bad && n == seen, "map: iteration visits each entry once with its key");
	iotap_map_release(&m);

	/* large tables: in huge-page extents, each grown one beside the last while it fits */
	iotap_map_init(&m, sizeof(struct val));
	for (i = 0; i < 60000; i++) {
		iotap_map_put(&m, i * 13, (void **)&v);
		v->a = i * 3;
		v->b = ~i;
	}
	for (i = 0, bad = 0; i < 60000; i++) {
		v = iotap_map_get(&m, i * 13);
		bad += !v || v->a != i * 3 || v->b != ~i;
	}
	ok(!bad && m.ext && iotap_map_count(&m) == 60000,
	   "map: 60000 entries grown through huge-page extents keep their values");
	iotap_map_release(&m);

	/* equal keys: a hash-keyed map with the full key compared by the caller */
	iotap_map_init(&m, sizeof(struct val));
	for (i = 0; i < 3; i++) {
		iotap_map_add(&m, 42, (void **)&v);
		v->tag = (char)('a' + i);
	}
	iotap_map_put(&m, 43, (void **)&v);
	v->tag = 'z';
	for (n = 0, v = iotap_map_find(&m, 42, &pos); v; v = iotap_map_find_next(&m, 42, &pos))
		n += v->tag >= 'a' && v->tag <= 'c';
	ok(n == 3 && iotap_map_count(&m) == 4, "map: add keeps three entries of one key");
	v = iotap_map_find(&m, 42, &pos);
	iotap_map_del_value(&m, v);
	for (n = 0, v = iotap_map_find(&m, 42, &pos); v; v = iotap_map_find_next(&m, 42, &pos))
		n++;
	v = iotap_map_get(&m, 43);
	ok(n == 2 && v && v->tag == 'z', "map: del_value removes exactly that entry");
	iotap_map_release(&m);

	/* a key set: zero-size values */
	iotap_map_init(&m, 0);
	for (i = 0; i < 100000; i++)
		iotap_map_put(&m, i * 7, (void **)&v);
	for (i = 0, bad = 0; i < 100000; i++)
		bad += !iotap_map_get(&m, i * 7) + !!iotap_map_get(&m, i * 7 + 1);
	ok(!bad && m.cap >= 100000 * 4 / 3, "map: 100000 keys of a set, grown to %" PRIu64
	   " slots", m.cap);
	n = m.cap;
	iotap_map_clear(&m);
	ok(iotap_map_count(&m) == 0 && !iotap_map_get(&m, 7) && m.cap == n &&
	   !iotap_map_put(&m, 7, (void **)&v) && iotap_map_count(&m) == 1,
	   "map: clear empties it and keeps its table");
	iotap_map_release(&m);
}

static void test_hist_scheme(unsigned int bits)
{
	uint64_t lo, hi, prev_hi = 0, bad = 0, v;
	unsigned int i, n = IOTAP_HIST_BUCKETS_OF(bits), k;

	for (i = 0; i < n; i++) {
		iotap_hist_range(i, bits, &lo, &hi);
		if (lo != prev_hi || hi <= lo)
			bad++;
		if (iotap_hist_index(lo, bits) != i || iotap_hist_index(hi - 1, bits) != i)
			bad++;
		/* a bucket is at most 1/2^bits of its values wide */
		if (lo >= (1ull << bits) && (double)(hi - lo) > (double)lo / (1 << bits) * 1.0000001)
			bad++;
		prev_hi = hi;
	}
	ok(!bad && prev_hi == UINT64_MAX, "hist: %u buckets at %u bits tile 0..2^64", n, bits);
	for (k = 0, bad = 0; k < 100000; k++) {
		v = rnd() >> (rnd() % 64);
		iotap_hist_range(iotap_hist_index(v, bits), bits, &lo, &hi);
		bad += v < lo || (v >= hi && hi != UINT64_MAX);
	}
	ok(!bad, "hist: 100000 random values fall inside their bucket at %u bits", bits);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* @a and @b have the same samples: every bucket, n, sum, min, max and quantile. */
static int hist_same(const struct iotap_hist *a, const struct iotap_hist *b)
{
	static const double qs[] = { 0.01, 0.25, 0.5, 0.9, 0.99, 0.999 };
	unsigned int i;

	if (a->n != b->n || a->sum != b->sum || a->min != b->min || a->max != b->max)
		return 0;
	for (i = 0; i < IOTAP_HIST_BUCKETS; i++)
		if (iotap_hist_count(a, i) != iotap_hist_count(b, i))
			return 0;
	for (i = 0; i < sizeof(qs) / sizeof(qs[0]); i++)
		if (iotap_hist_quantile(a, qs[i]) != iotap_hist_quantile(b, qs[i]))
			return 0;
	return 1;
}

/*
 * Histograms only merged into from few buckets stay sparse (no group
 * allocated): merged with each other, with grouped ones, added to,
 * cleared and reused, they must hold exactly what adding every sample
 * to one grouped histogram gives.
 */
static void test_hist_sparse(void)
{
	static struct iotap_hist blk[40], seg[40];
	struct iotap_hist all = { 0 }, tot = { 0 }, big = { 0 }, mix = { 0 };
	unsigned int i, k, sparse = 0, bad = 0;

	memset(blk, 0, sizeof(blk));
	memset(seg, 0, sizeof(seg));
	for (k = 0; k < 40; k++) {
		/* 3 to 120 samples over a few octaves: most fit a sparse histogram */
		for (i = 0; i < 3 + k * 3; i++) {
			uint64_t v = (k % 7 ? 5000 : 1) + rnd() % (k % 5 ? 20000 : 3000000);

			iotap_hist_add(&blk[k], v);
			iotap_hist_add(&all, v);
			if (k >= 20)
				iotap_hist_add(&big, v);
		}
		iotap_hist_merge(&seg[k], &blk[k]);	/* fresh: sparse if it fits */
		sparse += seg[k].nsp > 0;
		bad += !hist_same(&seg[k], &blk[k]);
	}
	ok(sparse >= 10 && sparse < 40 && !bad,
	   "hist: %u of 40 merged-into histograms sparse, all equal to their source", sparse);
	/* sparse into sparse until it no longer fits, then grouped */
	for (k = 0; k < 40; k++)
		iotap_hist_merge(&tot, &seg[k]);
	ok(hist_same(&tot, &all) && !tot.nsp, "hist: sparse ones merged into one equal the whole");
	/* sparse into grouped, grouped into sparse, then an add and a clear */
	for (k = 0; k < 20; k++)
		iotap_hist_merge(&mix, &seg[k]);
	iotap_hist_merge(&mix, &big);
	bad = !hist_same(&mix, &all);
	iotap_hist_merge(&seg[1], &seg[2]);
	iotap_hist_merge(&blk[1], &blk[2]);
	bad += !hist_same(&seg[1], &blk[1]);
	iotap_hist_add(&seg[3], 123456789);
	iotap_hist_add(&blk[3], 123456789);
	bad += !hist_same(&seg[3], &blk[3]) || seg[3].nsp;
	iotap_hist_clear(&seg[0]);
	bad += seg[0].n || seg[0].nsp || iotap_hist_count(&seg[0], 100);
	iotap_hist_merge(&seg[0], &blk[5]);
	bad += !hist_same(&seg[0], &blk[5]);
	ok(!bad, "hist: sparse and grouped merge, add, clear and reuse alike");
	for (k = 0; k < 40; k++) {
		iotap_hist_release(&blk[k]);
		iotap_hist_release(&seg[k]);
	}
	iotap_hist_release(&all);
	iotap_hist_release(&tot);
	iotap_hist_release(&big);
	iotap_hist_release(&mix);
}

/* The smallest value of bucket @idx at IOTAP_HIST_BITS. */
static uint64_t bucket_lo(unsigned int idx)
{
	uint64_t lo, hi;

	iotap_hist_range(idx, IOTAP_HIST_BITS, &lo, &hi);
	return lo;
}

/*
 * Pooled histograms: the same counts as calloc'ed ones, blocks given back
 * are handed out again zeroed (a reused group that kept its counts would
 * show here), and many at once span the slabs.
 */
static void test_hist_pool(void)
{
	struct iotap_hist_pool pool;
	struct iotap_hist plain, *h, *again, *many[400];
	unsigned int i, k, bad = 0;

	iotap_hist_pool_init(&pool);
	memset(&plain, 0, sizeof(plain));
	h = iotap_hist_new(&pool);
	for (i = 0; i < 20000; i++) {
		uint64_t v = rnd() >> (rnd() % 64);

		iotap_hist_add(h, v);
		iotap_hist_add(&plain, v);
	}
	ok(h && h->pool == &pool && hist_same(h, &plain),
	   "hist pool: a pooled histogram counts as a calloc'ed one");
	iotap_hist_delete(h);
	again = iotap_hist_new(&pool);
	ok(again == h && again->n == 0, "hist pool: a deleted histogram's block is handed out again");
	for (i = 0; i < 20000; i++)
		iotap_hist_add(again, bucket_lo(i % IOTAP_HIST_BUCKETS));
	iotap_hist_release(&plain);
	for (i = 0; i < 20000; i++)
		iotap_hist_add(&plain, bucket_lo(i % IOTAP_HIST_BUCKETS));
	ok(hist_same(again, &plain), "hist pool: its reused groups start from zero");
	for (k = 0; k < 400; k++) {
		many[k] = iotap_hist_new(&pool);
		if (!many[k]) {
			bad++;
			continue;
		}
		for (i = 0; i < 64; i++)
			iotap_hist_add(many[k], (uint64_t)(k + 1) << (i % 40));
		if (iotap_hist_merge(many[k], again))
			bad++;
	}
	for (k = 0; k < 400; k++)
		bad += !many[k] || many[k]->n != 64 + again->n || many[k]->max < again->max;
	ok(!bad, "hist pool: 400 histograms at once, merged into, across slabs");
	for (k = 0; k < 400; k++)
		iotap_hist_delete(many[k]);
	iotap_hist_delete(again);
	iotap_hist_release(&plain);
	iotap_hist_pool_release(&pool);
	ok(!pool.slab && !pool.free, "hist pool: released at once");
}

static void test_hist(void)
{
	static uint64_t vals[20000];
	struct iotap_hist a = { 0 }, b = { 0 }, all = { 0 };
	double qs[] = { 0.01, 0.5, 0.9, 0.99, 0.999 };
	unsigned int i, bad = 0;

	test_hist_scheme(3);
	test_hist_scheme(IOTAP_HIST_BITS);
	ok(iotap_hist_index(7, 3) == 7 && iotap_hist_index(8, 3) == 8 &&
	   iotap_hist_index(16, 3) == 16 && iotap_hist_index(17, 3) == 16 &&
	   iotap_hist_index(63, 6) == 63 && iotap_hist_index(64, 6) == 64 &&
	   iotap_hist_index(129, 6) == 128,
	   "hist: exact below 2^bits, then 2^bits per octave");
	for (i = 0; i < 20000; i++) {
		vals[i] = 1000 + rnd() % 5000000;
		iotap_hist_add(i % 2 ? &a : &b, vals[i]);
		iotap_hist_add(&all, vals[i]);
	}
	qsort(vals, 20000, sizeof(vals[0]), cmp_u64);
	for (i = 0; i < 5; i++) {
		double exact = (double)vals[(unsigned int)ceil(qs[i] * 20000) - 1];
		double got = (double)iotap_hist_quantile(&all, qs[i]);

		if (fabs(got - exact) > exact * IOTAP_HIST_REL_ERROR)
			bad++;
	}
	ok(!bad, "hist: quantiles within 1/64 of the exact order statistics");
	ok(iotap_hist_quantile(&all, 0) == vals[0] && iotap_hist_quantile(&all, 1) == vals[19999],
	   "hist: q=0 and q=1 are min and max");
	{
		static uint64_t flat[IOTAP_HIST_BUCKETS];
		unsigned int k;

		for (k = 0; k < IOTAP_HIST_BUCKETS; k++)
			flat[k] = iotap_hist_count(&all, k);
		/* the same bucket; the histogram then clamps to its min and max */
		for (i = 0; i < 5; i++) {
			uint64_t v = iotap_hist_flat_quantile(flat, IOTAP_HIST_BUCKETS,
							      IOTAP_HIST_BITS, qs[i]);

			v = v < all.min ? all.min : v > all.max ? all.max : v;
			bad += v != iotap_hist_quantile(&all, qs[i]);
		}
		memset(flat, 0, sizeof(flat));
		flat[0] = 1;	/* one sample of 0 ns, one of 5 ns: the median is the first */
		flat[5] = 1;
		ok(!bad && iotap_hist_flat_quantile(flat, IOTAP_HIST_BUCKETS, IOTAP_HIST_BITS,
						    0.5) == 0 &&
		   iotap_hist_flat_quantile(flat, IOTAP_HIST_BUCKETS, IOTAP_HIST_BITS, 0.51) == 5 &&
		   iotap_hist_flat_quantile(flat, 1, IOTAP_HIST_BITS, 0.5) == 0,
		   "hist: a flat array's quantiles are the histogram's (rank and midpoint)");
	}
	iotap_hist_merge(&a, &b);
	for (i = 0; i < IOTAP_HIST_BUCKETS; i++)
		bad += iotap_hist_count(&a, i) != iotap_hist_count(&all, i);
	ok(!bad && a.n == all.n && a.sum == all.sum && a.min == all.min && a.max == all.max,
	   "hist: merge of two halves equals the whole");
	iotap_hist_clear(&a);
	ok(a.n == 0 && iotap_hist_quantile(&a, 0.5) == 0, "hist: a cleared histogram is empty");
	iotap_hist_release(&a);
	iotap_hist_release(&b);
	iotap_hist_release(&all);
	test_hist_sparse();
}

static void test_size(void)
{
	static const struct {
		const char *s;
		uint64_t unit, want;	/* want 0: refused */
	} t[] = {
		{ "4096", 1, 4096 }, { "8k", 1, 8192 }, { "64K", 1, 65536 },
		{ "1M", 1, 1 << 20 }, { "2g", 1, 2ull << 30 }, { "1T", 1, 1ull << 40 },
		{ "1MB", 1, 1 << 20 }, { "64KiB", 1, 65536 }, { "1Ki", 1, 1024 },
		{ "100b", 1, 100 }, { "100B", 1, 100 },
		{ "300", 1 << 20, 300ull << 20 }, { "300M", 1 << 20, 300ull << 20 },
		{ "1g", 1 << 20, 1ull << 30 }, { "64", 1024, 65536 }, { "4m", 1024, 4 << 20 },
		{ "16777215T", 1, 16777215ull << 40 },
		{ "", 1, 0 }, { "-1", 1, 0 }, { " 5", 1, 0 }, { "+5", 1, 0 }, { "k", 1, 0 },
		{ "1.5M", 1, 0 }, { "5x", 1, 0 }, { "5i", 1, 0 }, { "5kk", 1, 0 },
		{ "5 k", 1, 0 }, { "5MBx", 1, 0 }, { "16777216T", 1, 0 },
		{ "18446744073709551616", 1, 0 }, { "18446744073709551615", 2, 0 },
	};
	unsigned int i, bad = 0;
	uint64_t v;
	int ret;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		v = 12345;
		ret = iotap_size_parse(t[i].s, t[i].unit, &v);
		if (t[i].want ? (ret || v != t[i].want) : (ret != -EINVAL || v != 12345)) {
			bad++;
			diag("size: '%s' unit %" PRIu64 ": ret %d, %" PRIu64, t[i].s, t[i].unit,
			     ret, v);
		}
	}
	ok(!bad, "size: %u accepted and refused forms", i);
	ok(!iotap_size_parse("0", 1, &v) && v == 0, "size: zero is a size");
	ok(iotap_size_parse(NULL, 1, &v) == -EINVAL, "size: NULL is refused");
}

static void test_argv(void)
{
	char w0[] = "run", w1[] = "bonnie", w2[] = "", w3[] = "-s", w4[] = "300M";
	char *words[] = { w0, w1, w2, w3, w4 };
	char *s;

	s = iotap_argv_join("iotap", 5, words);
	ok(s && !strcmp(s, "iotap run bonnie  -s 300M"), "argv: with a first word: '%s'", s);
	free(s);
	s = iotap_argv_join(NULL, 2, words);
	ok(s && !strcmp(s, "run bonnie"), "argv: without a first word");
	free(s);
	s = iotap_argv_join("iotap", 0, words);
	ok(s && !strcmp(s, "iotap"), "argv: no words");
	free(s);
	s = iotap_argv_join(NULL, 0, words);
	ok(s && !strcmp(s, ""), "argv: nothing at all is the empty string");
	free(s);
}

static const char *csv_of(const struct iotap_bonnie_csv *l)
{
	static char buf[2048];
	FILE *f = fmemopen(buf, sizeof(buf), "w");

	iotap_bonnie_csv_print(f, l);
	fclose(f);
	return buf;
}

static void test_bonnie(void)
{
	struct iotap_bonnie_csv l = { 0 };
	char b[32];
	unsigned int t;

	iotap_bonnie_size(b, sizeof(b), 2048, "MG");
	ok(!strcmp(b, "2G"), "bonnie: size 2048 MG is 2G");
	iotap_bonnie_size(b, sizeof(b), 8192, " km");
	ok(!strcmp(b, "8k"), "bonnie: size 8192 ' km' is 8k");
	iotap_bonnie_size(b, sizeof(b), 100, " km");
	ok(!strcmp(b, "100"), "bonnie: size 100 ' km' is 100 (the unit space is cut)");
	for (t = 0; t < IOTAP_BONNIE_CSV_TESTS; t++)
		l.test[t].cpu_pct = -1;
	l.name = "m";
	ok(!strcmp(csv_of(&l), "1.98,2.00a,m,1,"
			       ",,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,\n"),
	   "bonnie: nothing run is 50 blank columns");
	l.has_seed = 1;
	l.seed = 42;
	l.io = l.has_size = 1;
	l.file_mib = 300;
	l.chunk = 4096;
	l.seeks = 8192;
	l.seekers = 5;
	l.test[0] = (struct iotap_bonnie_csv_test){ 2.0, 3072, 97.5, 0.0295516 };
	l.test[1] = (struct iotap_bonnie_csv_test){ 0.25, 307200, 10, 0.000311 };
	l.test[5] = (struct iotap_bonnie_csv_test){ 1.0, 8192, -1, 123.4 };
	l.files = 1;
	l.num_files = 16;
	l.num_dirs = 1;
	l.test[6] = (struct iotap_bonnie_csv_test){ 0.5, 16384, iotap_bonnie_cpu_pct(0.25, 0.5),
						  0.1 };
	ok(!strcmp(csv_of(&l), "1.98,2.00a,m,1,42,300M,4k,8192,5,1536,97,+++++,+++,,,,,,,"
			       "8192,,16,,,,,32768,50,,,,,,,,,,,29551us,311us,,,,123s,100ms,,,,,\n"),
	   "bonnie: rates truncated, +++++ under 0.5 s, seeks to the unit, latencies' units: %s",
	   csv_of(&l));
	l.test[5].elapsed_s = 4.0;
	ok(strstr(csv_of(&l), ",5,1536,97,+++++,+++,,,,,,,2048,,16,") != NULL,
	   "bonnie: seeks/s >= 1000 without decimals");
	l.test[5].elapsed_s = 16.0;
	ok(strstr(csv_of(&l), ",,,,,512.0,,16,") != NULL, "bonnie: seeks/s < 1000 with one");
}

/* One value through every formatter, against snprintf. */
static int fmt_one(uint64_t v, char *why, size_t len)
{
	char want[64], got[64], *e;
	unsigned int dec;
	int64_t s = (int64_t)v;

	snprintf(want, sizeof(want), "%" PRIu64, v);
	e = iotap_fmt_u64(got, v);
	*e = '\0';
	if (strcmp(want, got))
		return snprintf(why, len, "u64 %s: %s", want, got), 0;
	snprintf(want, sizeof(want), "%" PRId64, s);
	e = iotap_fmt_i64(got, s);
	*e = '\0';
	if (strcmp(want, got))
		return snprintf(why, len, "i64 %s: %s", want, got), 0;
	snprintf(want, sizeof(want), "%" PRIo64, v);
	e = iotap_fmt_oct(got, v);
	*e = '\0';
	if (strcmp(want, got))
		return snprintf(why, len, "oct %s: %s", want, got), 0;
	snprintf(want, sizeof(want), "%" PRIx64, v);
	e = iotap_fmt_hex(got, v);
	*e = '\0';
	if (strcmp(want, got))
		return snprintf(why, len, "hex %s: %s", want, got), 0;
	/* what %.Nf prints of s / 10^N, taken exactly: integer part, N digits */
	for (dec = 0; dec <= 18; dec++) {
		uint64_t a = s < 0 ? 0 - (uint64_t)s : (uint64_t)s, pw = 1;
		unsigned int k;

		for (k = 0; k < dec; k++)
			pw *= 10;
		if (dec)
			snprintf(want, sizeof(want), "%s%" PRIu64 ".%0*" PRIu64, s < 0 ? "-" : "",
				 a / pw, (int)dec, a % pw);
		else
			snprintf(want, sizeof(want), "%" PRId64, s);
		e = iotap_fmt_frac(got, s, dec);
		*e = '\0';
		if (strcmp(want, got))
			return snprintf(why, len, "frac %" PRId64 " /10^%u %s: %s", s, dec, want,
					got), 0;
	}
	/* and, where a double holds it exactly, what printf itself says */
	if (s < 1000000 && s > -1000000) {
		snprintf(want, sizeof(want), "%.3f", (double)s / 1e3);
		e = iotap_fmt_frac(got, s, 3);
		*e = '\0';
		if (strcmp(want, got))
			return snprintf(why, len, "frac %" PRId64 " /1e3 %s: %s", s, want, got), 0;
	}
	return 1;
}

static void test_fmt(void)
{
	uint64_t p = 1;
	char why[512] = "";
	int good = 1;
	unsigned int i, k;

	for (i = 0; i < 20 && good; i++, p *= 10) {
		/* around each power of ten, and minus/plus */
		for (k = 0; k < 3 && good; k++) {
			uint64_t v = p + k - 1;

			good = fmt_one(v, why, sizeof(why)) && fmt_one(0 - v, why, sizeof(why));
		}
		if (i == 19)
			break;
	}
	/* each digit count's edges, where the fixed-point digits (fmt.c) err first */
	for (i = 0, p = 1; i < 19 && good; i++, p *= 10)
		for (k = 1; k < 100 && good; k++) {
			uint64_t v = p * k;

			if (v / k != p)
				break;
			good = fmt_one(v - 1, why, sizeof(why)) && fmt_one(v, why, sizeof(why)) &&
			       fmt_one(v + p - 1, why, sizeof(why));
		}
	for (i = 0; i < 64 && good; i++)
		good = fmt_one(1ull << i, why, sizeof(why)) &&
		       fmt_one((1ull << i) - 1, why, sizeof(why));
	for (i = 0; i < 1000 && good; i++)
		good = fmt_one(i, why, sizeof(why));
	good = good && fmt_one(UINT64_MAX, why, sizeof(why)) &&
	       fmt_one((uint64_t)INT64_MAX, why, sizeof(why)) &&
	       fmt_one((uint64_t)INT64_MIN, why, sizeof(why));
	for (i = 0; i < 200000 && good; i++) {
		uint64_t v = rnd();

		good = fmt_one(v >> (rnd() % 64), why, sizeof(why));
	}
	ok(good, "fmt: u64, i64, oct, hex and frac give printf's bytes %s", why);
}

/* The THPeligible line of /proc/self/smaps for the mapping holding @p: 0, 1, or -1 (not found). */
static int thp_eligible(const void *p)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	int in = 0, ret = -1;
	unsigned long lo, hi;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
			in = (uintptr_t)p >= lo && (uintptr_t)p < hi;
			continue;
		}
		if (in && !strncmp(line, "THPeligible:", 12)) {
			ret = atoi(line + 12);
			break;
		}
	}
	fclose(f);
	return ret;
}

static void test_buf(void)
{
	size_t sz = 1000, big = (3u << 20) + 1, n;
	char *p = iotap_buf_alloc(&sz), *q, mode[128] = "";
	FILE *f;

	ok(p && sz == 1000, "buf: a small buffer has the size asked for (%zu)", sz);
	memcpy(p, "kept", 5);
	p = iotap_buf_regrow(p, &sz, 2000);
	ok(p && sz == 2000 && !strcmp(p, "kept"), "buf: small to small is a realloc (%zu)", sz);
	p = iotap_buf_regrow(p, &sz, IOTAP_BUF_HUGE);
	ok(p && sz == 2u << 20 && !((uintptr_t)p & ((2u << 20) - 1)),
	   "buf: regrown to IOTAP_BUF_HUGE, one aligned 2 MiB extent (%zu)", sz);
	memset(p, 1, sz);
	p = iotap_buf_regrow(p, &sz, 100);
	ok(p && sz == 100, "buf: and back to a small one (%zu)", sz);
	iotap_buf_free(p, sz);
	q = iotap_buf_alloc(&big);
	ok(q && big == 4u << 20 && !((uintptr_t)q & ((2u << 20) - 1)),
	   "buf: 3 MiB + 1 byte take two aligned 2 MiB extents (%zu)", big);
	memset(q, 2, big);	/* all of it is usable */
	n = 0;
	p = iotap_buf_regrow(NULL, &n, 5u << 20);
	ok(p && n == 6u << 20, "buf: regrowing NULL allocates (%zu)", n);
	iotap_buf_free(p, n);
	iotap_buf_free(NULL, 0);
	f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
	if (f && fgets(mode, sizeof(mode), f) && !strstr(mode, "[never]"))
		ok(thp_eligible(q) == 1, "buf: the kernel may back a big buffer with huge pages");
	else
		ok(1, "# SKIP buf: no transparent huge pages here (%s)", mode);
	if (f)
		fclose(f);
	iotap_buf_free(q, big);
}

/* --- pool --- */

struct pool_gate {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int open;			/* jobs wait until the test opens the gate */
	int ran;			/* jobs run */
	uint64_t order[8];		/* job numbers in the order they ran */
};

static struct pool_gate gate = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER };

static void gated_job(void *arg)
{
	pthread_mutex_lock(&gate.lock);
	while (!gate.open)
		pthread_cond_wait(&gate.cond, &gate.lock);
	if (gate.ran < 8)
		gate.order[gate.ran] = (uint64_t)(uintptr_t)arg;
	gate.ran++;
	pthread_mutex_unlock(&gate.lock);
}

static void test_pool(void)
{
	struct iotap_pool *p;
	int full, i, fifo = 1;

	ok(iotap_pool_create(&p, 0, 1) == -EINVAL && !p, "pool: no threads is refused");
	ok(iotap_pool_create(&p, 1, 2) == 0 && iotap_pool_threads(p) == 1, "pool: one thread");
	/* the thread takes job 0 and waits at the gate; 1 and 2 fill the queue */
	for (i = 0; i < 3; i++)
		iotap_pool_add(p, gated_job, (void *)(uintptr_t)i);
	full = iotap_pool_try_add(p, gated_job, (void *)(uintptr_t)3);
	ok(full == -EAGAIN, "pool: try_add says a full queue is full");
	pthread_mutex_lock(&gate.lock);
	gate.open = 1;
	pthread_cond_broadcast(&gate.cond);
	pthread_mutex_unlock(&gate.lock);
	iotap_pool_add(p, gated_job, (void *)(uintptr_t)3);
	iotap_pool_free(p);
	for (i = 0; i < 4; i++)
		fifo &= gate.order[i] == (uint64_t)i;
	ok(gate.ran == 4 && fifo, "pool: free runs every queued job, first queued first run");
}

int main(void)
{
	test_clock();
	test_hash();
	test_map();
	test_hist();
	test_hist_pool();
	test_size();
	test_argv();
	test_bonnie();
	test_fmt();
	test_buf();
	test_pool();
	return done_testing();
}
