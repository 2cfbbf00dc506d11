// SPDX-License-Identifier: MIT
/*
 * iotap.c - main(): the commands table of the one iotap binary
 *
 * `iotap CMD ARGS...` runs cmd_CMD(argc - 1, argv + 1). Exit status of
 * every command: 0 ok, 1 runtime error, 2 usage error. The table order is
 * the order of `iotap --help`.
 */
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "cmds.h"
#include "opt.h"

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *args;
	const char *help;
};

static const struct command commands[] = {
	{ "mount", cmd_mount, "BACKING MOUNTPOINT [--trace FILE]",
	  "pass-through mount that records every operation" },
	{ "umount", cmd_umount, "MOUNTPOINT", "unmount and wait until the trace is closed" },
	{ "mark", cmd_mark, "MOUNTPOINT NAME", "start a named phase in a live capture" },
	{ "trace", cmd_trace, "MOUNTPOINT start|stop|rotate|save",
	  "start, stop, rotate or save the trace of a live mount" },
	{ "status", cmd_status, "MOUNTPOINT [--json]", "what a live capture is doing, one shot" },
	{ "top", cmd_top, "MOUNTPOINT [-n COUNT]", "a live capture's rates, refreshed every second" },
	{ "run", cmd_run, "WORKLOAD DIR... [options]",
	  "bonnie++, iozone, dd, hdparm, dedup and pgsql workloads, traced" },
	{ "replay", cmd_replay, "TRACE DIR [options]", "re-issue a captured trace against DIR" },
	{ "info", cmd_info, "TRACE", "header, counts, compression, damage found" },
	{ "dump", cmd_dump, "TRACE", "one line per record" },
	{ "export", cmd_export, "TRACE OUT [--csv]",
	  "one row per call, paths as they were: Parquet or CSV" },
	{ "report", cmd_report, "TRACE", "per-phase throughput, seeks, latencies; CSV, JSON, HTML" },
	{ "compare", cmd_compare, "TRACE... | --label NAME TRACE...",
	  "runs side by side per phase, ratios, mean ± sd" },
	{ NULL, NULL, NULL, NULL },
};

static void usage(FILE *f)
{
	const struct command *c;

	fprintf(f, "usage: iotap COMMAND [ARGS...]\n\n"
		   "iotap records every filesystem operation through a FUSE pass-through\n"
		   "mount into a compressed trace, and reports on traces.\n\ncommands:\n");
	for (c = commands; c->name; c++)
		fprintf(f, "  %-8s %-34s %s\n", c->name, c->args, c->help);
	fprintf(f, "\n'iotap COMMAND --help' describes a command and its options.\n"
		   "MB means 10^6 bytes and KiB/MiB/GiB powers of 1024 in iotap's own\n"
		   "outputs; 'iotap run' prints each tool's lines in that tool's units.\n");
}

/*
 * What a command printed on stdout must have been written (git does the
 * same): a full disk or /dev/full is an error, not a silent exit 0. A
 * command that failed has said why already.
 */
static int finish(int status)
{
	if (status)
		return status;
	return out_close(stdout, NULL);
}

int main(int argc, char **argv)
{
	const struct command *c;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "help") && argc > 2) {
		/* iotap help COMMAND: that command's own --help */
		char *args[] = { argv[2], (char *)"--help", NULL };

		for (c = commands; c->name; c++)
			if (!strcmp(argv[2], c->name))
				return finish(c->fn(2, args));
		fprintf(stderr, "iotap: '%s' is not an iotap command; see 'iotap --help'\n",
			argv[2]);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return finish(0);
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		printf("iotap %s\n", IOTAP_VERSION);
		return finish(0);
	}
	for (c = commands; c->name; c++)
		if (!strcmp(argv[1], c->name))
			return finish(c->fn(argc - 1, argv + 1));
	fprintf(stderr, "iotap: '%s' is not an iotap command; see 'iotap --help'\n", argv[1]);
	return 2;
}
