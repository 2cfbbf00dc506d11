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
#include "iotap_base.h"

static const char digits2[201] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

static inline unsigned int ndigits(uint64_t v)
{
	unsigned int n = 1;

	while (v >= 10000) {
		v /= 10000;
		n += 4;
	}
	return n + (v >= 10) + (v >= 100) + (v >= 1000);
}

/* Digits straight into place, two at a time (no temporary, no memcpy). */
char *iotap_fmt_u64(char *p, uint64_t v)
{
	unsigned int n = ndigits(v);
	char *q = p + n;

	while (v >= 100) {
		unsigned int d = (unsigned int)(v % 100) * 2;

		v /= 100;
		*--q = digits2[d + 1];
		*--q = digits2[d];
	}
	if (v >= 10) {
		*--q = digits2[v * 2 + 1];
		*--q = digits2[v * 2];
	} else {
		*--q = (char)('0' + v);
	}
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
	static const uint64_t pow10[] = {
		1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull,
		100000000ull, 1000000000ull, 10000000000ull, 100000000000ull,
		1000000000000ull, 10000000000000ull, 100000000000000ull,
		1000000000000000ull, 10000000000000000ull, 100000000000000000ull,
		1000000000000000000ull,
	};
	uint64_t a, fp;
	char *q;

	if (decimals > 18)
		decimals = 18;
	if (v < 0)
		*p++ = '-';
	a = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
	p = iotap_fmt_u64(p, a / pow10[decimals]);
	if (!decimals)
		return p;
	fp = a % pow10[decimals];
	*p++ = '.';
	q = p + decimals;
	while (q - p >= 2) {
		unsigned int d = (unsigned int)(fp % 100) * 2;

		fp /= 100;
		*--q = digits2[d + 1];
		*--q = digits2[d];
	}
	if (q > p)
		*--q = (char)('0' + fp);
	return p + decimals;
}
