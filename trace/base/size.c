// SPDX-License-Identifier: MIT
/*
 * size.c - sizes and command lines as the CLI and the workloads write them
 *
 * iotap_size_parse() is the one reading of "8k", "64MiB" or "1G" for every
 * option that takes a size (report and compare through tools/opt.c, and
 * iotap run's bonnie -s, iozone -r/-s/-y/-q ... with their own units), so
 * that "1M" means 2^20 bytes everywhere. iotap_argv_join() builds the
 * command line a trace header records.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "iotap_base.h"

int iotap_size_parse(const char *s, uint64_t unit, uint64_t *out)
{
	unsigned long long v;
	uint64_t mult = unit;
	int scaled = 1;
	char *end;

	/* strtoull() would skip spaces and accept a sign: refuse both */
	if (!s || !isdigit((unsigned char)*s) || !unit)
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	switch (tolower((unsigned char)*end)) {
	case 'k': mult = 1ull << 10; break;
	case 'm': mult = 1ull << 20; break;
	case 'g': mult = 1ull << 30; break;
	case 't': mult = 1ull << 40; break;
	default: scaled = 0; break;
	}
	if (scaled) {
		end++;
		if (*end == 'i' || *end == 'I')
			end++;
	}
	if (*end == 'b' || *end == 'B')
		end++;
	if (*end)
		return -EINVAL;
	if (v && mult > UINT64_MAX / v)
		return -EINVAL;
	*out = v * mult;
	return 0;
}

char *iotap_argv_join(const char *first, int argc, char *const *argv)
{
	size_t len = first ? strlen(first) + 1 : 1, n;
	char *s, *p;
	int i;

	for (i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	s = malloc(len);
	if (!s)
		return NULL;
	p = s;
	if (first) {
		n = strlen(first);
		memcpy(p, first, n);
		p += n;
	}
	for (i = 0; i < argc; i++) {
		if (p != s)
			*p++ = ' ';
		n = strlen(argv[i]);
		memcpy(p, argv[i], n);
		p += n;
	}
	*p = '\0';
	return s;
}
