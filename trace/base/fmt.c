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

/* Decimal digits of @v >= 1: from its bit length (1233/4096 ~ log10 2), then one compare. */
static inline unsigned int ndigits(uint64_t v)
{
	unsigned int t = ((64 - (unsigned int)__builtin_clzll(v)) * 1233) >> 12;

	return t + 1 - (v < pow10[t]);
}

/* @n digits of @v into p[0 .. n), four at a time from the right. */
static inline void put_digits(char *p, uint64_t v, unsigned int n)
{
	char *q = p + n;
	uint32_t w;

	while (v > UINT32_MAX) {
		uint32_t r = (uint32_t)(v % 10000);

		v /= 10000;
		q -= 4;
		memcpy(q, digits2 + (r / 100) * 2, 2);
		memcpy(q + 2, digits2 + (r % 100) * 2, 2);
	}
	w = (uint32_t)v;	/* the rest in 32-bit arithmetic: cheaper divisions */
	while (q - p >= 4) {
		uint32_t r = w % 10000;

		w /= 10000;
		q -= 4;
		memcpy(q, digits2 + (r / 100) * 2, 2);
		memcpy(q + 2, digits2 + (r % 100) * 2, 2);
	}
	if (q - p >= 2) {
		q -= 2;
		memcpy(q, digits2 + (w % 100) * 2, 2);
		w /= 100;
	}
	if (q > p)
		*--q = (char)('0' + w);
}

/* Digits straight into place, two at a time (no temporary, no memcpy). */
char *iotap_fmt_u64(char *p, uint64_t v)
{
	unsigned int n;

	/* most fields of a record are small: ids, counts, results */
	if (v < 10) {
		*p = (char)('0' + v);
		return p + 1;
	}
	if (v < 100) {
		p[0] = digits2[v * 2];
		p[1] = digits2[v * 2 + 1];
		return p + 2;
	}
	n = ndigits(v);
	put_digits(p, v, n);
	return p + n;
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
	put_digits(p, fp, decimals);
	return p + decimals;
}
