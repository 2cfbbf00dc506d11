// SPDX-License-Identifier: MIT
/*
 * fmt.c - number formatting without printf (iotap_fmt_*, iotap_base.h)
 *
 * `iotap dump` prints millions of lines a second; vfprintf parsing its
 * format string for every field was nine tenths of its time. These write
 * the digits straight into the caller's buffer and give exactly what
 * printf's %lu, %ld, %o, %x and (within the range said below) %.Nf of
 * v / 10^N print.
 */
#include <string.h>

#include "iotap_base.h"

static const char digits2[201] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

static const uint64_t pow10[20] = {
	1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull,
	100000000ull, 1000000000ull, 10000000000ull, 100000000000ull,
	1000000000000ull, 10000000000000ull, 100000000000000ull,
	1000000000000000ull, 10000000000000000ull, 100000000000000000ull,
	1000000000000000000ull, 10000000000000000000ull,
};

/*
 * Digits left to right without a division a pair (James Anhalt's
 * scheme): f = u * ceil(2^48 / 10^e) holds u / 10^e in its bits above 48
 * and the rest as a binary fraction below; each pair after it is the top
 * of that fraction times 100. Exact for u < 10^(e + 2), e = 2, 4, 6: the
 * rounding error u * (ceil - exact) < 10^(e + 2) stays below the 2^48 /
 * 10^e from one digit to the next since 10^(2e + 2) < 2^48. (Every 32-bit
 * value and every eight-digit put8() were checked against plain division
 * when this was written; tests/unit/test_base.c checks each digit count's
 * edges.)
 */
#define FMT_K		48
#define FMT_MASK	((1ull << FMT_K) - 1)
#define FMT_C2		2814749767107ull	/* ceil(2^48 / 10^2) */
#define FMT_C4		28147497672ull		/* ceil(2^48 / 10^4) */
#define FMT_C6		281474977ull		/* ceil(2^48 / 10^6) */

/* The leading one (@two: two) digits of f = u * FMT_C<e>. */
static inline char *put_lead(char *p, uint64_t f, int two)
{
	uint32_t d = (uint32_t)(f >> FMT_K);

	if (two) {
		memcpy(p, digits2 + d * 2, 2);
		return p + 2;
	}
	*p = (char)('0' + d);
	return p + 1;
}

/* The next two digits of the fraction of @f, which moves on. */
static inline __attribute__((always_inline)) char *put_pair(char *p, uint64_t *f)
{
	*f = (*f & FMT_MASK) * 100;
	memcpy(p, digits2 + (*f >> FMT_K) * 2, 2);
	return p + 2;
}

/* @v < 10^8 as exactly eight digits, leading zeros included. */
static inline char *put8(char *p, uint32_t v)
{
	uint64_t f = v * FMT_C6;

	p = put_lead(p, f, 1);
	p = put_pair(p, &f);
	p = put_pair(p, &f);
	return put_pair(p, &f);
}

/* Written out case by case: a loop over the pairs was one shared, not unrolled, loop. */
static inline __attribute__((always_inline)) char *fmt_u32(char *p, uint32_t u)
{
	uint64_t f;
	uint32_t hi;

	/* most fields of a record are small: ids, counts, results */
	if (u < 10) {
		*p = (char)('0' + u);
		return p + 1;
	}
	if (u < 100) {
		memcpy(p, digits2 + u * 2, 2);
		return p + 2;
	}
	if (u < 10000) {
		f = u * FMT_C2;
		p = put_lead(p, f, u >= 1000);
		return put_pair(p, &f);
	}
	if (u < 1000000) {
		f = u * FMT_C4;
		p = put_lead(p, f, u >= 100000);
		p = put_pair(p, &f);
		return put_pair(p, &f);
	}
	if (u < 100000000) {
		f = u * FMT_C6;
		p = put_lead(p, f, u >= 10000000);
		p = put_pair(p, &f);
		p = put_pair(p, &f);
		return put_pair(p, &f);
	}
	hi = u / 100000000;	/* 1 to 42 */
	if (hi < 10) {
		*p++ = (char)('0' + hi);
	} else {
		memcpy(p, digits2 + hi * 2, 2);
		p += 2;
	}
	return put8(p, u - hi * 100000000);
}

/* @n digits of @v < 10^n into p[0 .. n), leading zeros included. */
static void put_digits(char *p, uint64_t v, unsigned int n)
{
	char *q = p + n;

	while (q - p >= 8) {
		q -= 8;
		put8(q, (uint32_t)(v % 100000000));
		v /= 100000000;
	}
	while (q > p) {
		*--q = (char)('0' + v % 10);
		v /= 10;
	}
}

char *iotap_fmt_u64(char *p, uint64_t v)
{
	uint64_t hi;

	if (v <= UINT32_MAX)
		return fmt_u32(p, (uint32_t)v);
	hi = v / 100000000;
	if (hi < 100000000) {
		p = fmt_u32(p, (uint32_t)hi);
	} else {	/* 17 to 20 digits */
		p = fmt_u32(p, (uint32_t)(hi / 100000000));
		p = put8(p, (uint32_t)(hi % 100000000));
	}
	return put8(p, (uint32_t)(v % 100000000));
}

char *iotap_fmt_i64(char *p, int64_t v)
{
	if (v < 0) {
		*p++ = '-';
		return iotap_fmt_u64(p, (uint64_t)0 - (uint64_t)v);
	}
	return iotap_fmt_u64(p, (uint64_t)v);
}

char *iotap_fmt_oct(char *p, uint64_t v)
{
	char tmp[22], *t = tmp + sizeof(tmp);
	size_t n;

	do {
		*--t = (char)('0' + (v & 7));
		v >>= 3;
	} while (v);
	n = (size_t)(tmp + sizeof(tmp) - t);
	memcpy(p, t, n);
	return p + n;
}

char *iotap_fmt_hex(char *p, uint64_t v)
{
	static const char hex[] = "0123456789abcdef";
	char tmp[16], *t = tmp + sizeof(tmp);
	size_t n;

	do {
		*--t = hex[v & 15];
		v >>= 4;
	} while (v);
	n = (size_t)(tmp + sizeof(tmp) - t);
	memcpy(p, t, n);
	return p + n;
}

char *iotap_fmt_frac(char *p, int64_t v, unsigned int decimals)
{
	uint64_t a, ip, fp;

	if (decimals > 18)
		decimals = 18;
	if (v < 0)
		*p++ = '-';
	a = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
	/* the divisions by a constant compile to multiplications */
	switch (decimals) {
	case 9:
		ip = a / 1000000000ull;
		fp = a % 1000000000ull;
		break;
	case 3:
		ip = a / 1000ull;
		fp = a % 1000ull;
		break;
	default:
		ip = a / pow10[decimals];
		fp = a % pow10[decimals];
		break;
	}
	p = iotap_fmt_u64(p, ip);
	if (!decimals)
		return p;
	*p++ = '.';
	switch (decimals) {
	case 9:		/* seconds of a nanosecond clock */
		*p = (char)('0' + fp / 100000000);
		return put8(p + 1, (uint32_t)(fp % 100000000));
	case 3:		/* microseconds of a nanosecond latency */
		*p = (char)('0' + fp / 100);
		memcpy(p + 1, digits2 + (fp % 100) * 2, 2);
		return p + 3;
	}
	put_digits(p, fp, decimals);
	return p + decimals;
}
