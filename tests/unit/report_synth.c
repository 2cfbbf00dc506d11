// SPDX-License-Identifier: MIT
/*
 * report_synth.c - write a synthetic trace for the report tests and benchmark
 *
 *   report-synth [--no-marks] [--samples] [--lost] OUT SCRIPT|-
 *   report-synth --records N [--phases K] OUT
 *
 * The first form writes the phases a script describes (see synth.h for the
 * language) and prints each phase's true start in seconds, one per line,
 * so e2e cases can check automatic phase detection. The second writes N
 * records of a dense mixed stream (writes, random reads, getattr, lookup,
 * flush, fsync over 64 files, 8 threads) cut into K marked phases, with
 * samples: the input of tests/bench/report-bench.sh.
 *
 * A test program, not part of iotap: it lives under tests/ because only
 * tests need traces whose every figure is known in advance.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "synth.h"

static char *slurp(FILE *f)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap);
	size_t k;

	while (buf && (k = fread(buf + len, 1, cap - len - 1, f)) > 0) {
		len += k;
		if (cap - len < 2) {
			char *nb = realloc(buf, cap *= 2);

			if (!nb) {
				free(buf);
				return NULL;
			}
			buf = nb;
		}
	}
	if (buf)
		buf[len] = '\0';
	return buf;
}

int main(int argc, char **argv)
{
	unsigned int flags = 0;
	unsigned long long records = 0, nph = 10;
	double bounds[256];
	char *script = NULL, line[256];
	int i, n, ret;
	FILE *f;

	for (i = 1; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
		if (!strcmp(argv[i], "--no-marks"))
			flags |= SYNTH_NO_MARKS;
		else if (!strcmp(argv[i], "--samples"))
			flags |= SYNTH_SAMPLES;
		else if (!strcmp(argv[i], "--lost"))
			flags |= SYNTH_LOST;
		else if (!strcmp(argv[i], "--records") && i + 1 < argc)
			records = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--phases") && i + 1 < argc)
			nph = strtoull(argv[++i], NULL, 0);
		else
			goto usage;
	}
	if (records) {
		size_t cap = 64 * (nph + 1), len = 0;
		unsigned long long k;

		if (i + 1 != argc || !nph || nph > 200)
			goto usage;
		script = malloc(cap);
		if (!script)
			return 1;
		script[0] = '\0';
		for (k = 0; k < nph; k++)
			len += (size_t)snprintf(script + len, cap - len,
						"bench-%llu mixed ops=%llu rate=200000 lat=20 "
						"threads=8 bs=8192\n", k, records / nph);
		flags |= SYNTH_SAMPLES;
	} else {
		if (i + 2 != argc)
			goto usage;
		if (!strcmp(argv[i + 1], "-")) {
			script = slurp(stdin);
		} else {
			f = fopen(argv[i + 1], "r");
			if (!f) {
				perror(argv[i + 1]);
				return 1;
			}
			script = slurp(f);
			fclose(f);
		}
		if (!script)
			return 1;
	}
	n = synth_write(argv[i], script, flags, bounds, 256);
	free(script);
	if (n < 0) {
		fprintf(stderr, "report-synth: cannot write '%s': %s\n", argv[i], strerror(-n));
		return 1;
	}
	for (ret = 0; ret < n && ret < 256; ret++) {
		snprintf(line, sizeof(line), "%.6f", bounds[ret]);
		puts(line);
	}
	return 0;

usage:
	fprintf(stderr, "usage: report-synth [--no-marks] [--samples] [--lost] OUT SCRIPT|-\n"
			"       report-synth --records N [--phases K] OUT\n");
	return 2;
}
