// SPDX-License-Identifier: MIT
/*
 * run_dd.c - iotap run dd DIR|FILE|DEVICE... --bs SIZE --count N [--read|--write]
 *            [--direct] [--fdatasync]
 *
 * The dd model's row of the models table (run.h): its options, bound to
 * struct dd_cli, and GNU dd's report. All targets at once, in step.
 */
#include <inttypes.h>
#include <string.h>

#include "iotap_base.h"
#include "iotap_dd.h"
#include "iotap_workload.h"
#include "opt.h"
#include "run.h"

static struct dd_cli {
	struct iotap_workload_dd_opts o;
	int rd, wr;			/* --read, --write */
} dd;

static int opt_bs(const struct opt_cmd *cmd, const struct opt_desc *d, const char *arg)
{
	(void)d;
	if (iotap_size_parse(arg, 1, &dd.o.bs) || !dd.o.bs || dd.o.bs > (1ull << 30))
		return opt_error(cmd, "bad block size '%s' (1 B to 1 GiB)", arg);
	return 0;
}

static int opt_count(const struct opt_cmd *cmd, const struct opt_desc *d, const char *arg)
{
	(void)d;
	if (parse_u64(arg, &dd.o.count) || !dd.o.count)
		return opt_error(cmd, "bad count '%s'", arg);
	return 0;
}

static int opt_file(const struct opt_cmd *cmd, const struct opt_desc *d, const char *arg)
{
	(void)d;
	if (strchr(arg, '/') || !*arg)
		return opt_error(cmd, "--file takes a name, not a path");
	dd.o.file = arg;
	return 0;
}

static const struct opt_desc dd_opts[] = {
	OPT_CALLBACK(0, "bs", NULL, "SIZE", "bytes per read/write (512, 64k, 1M; powers of 1024)",
		     opt_bs),
	OPT_CALLBACK(0, "count", NULL, "N", "blocks to copy", opt_count),
	OPT_BOOL(0, "read", &dd.rd, "read (a DIR's file is written first if missing or short,\n"
				    "then dropped from the page cache)"),
	OPT_BOOL(0, "write", &dd.wr, "write into DIR (the default)"),
	OPT_BIT(0, "direct", &dd.o.flags, IOTAP_DD_DIRECT, "O_DIRECT (iflag=direct / oflag=direct)"),
	OPT_BIT(0, "fdatasync", &dd.o.flags, IOTAP_DD_FDATASYNC,
		"fdatasync at the end, timed (conv=fdatasync)"),
	OPT_CALLBACK(0, "file", NULL, "NAME", "file name inside DIR (default iotap-dd.dat)", opt_file),
	OPT_BOOL(0, "keep", &dd.o.keep, "keep the file afterwards"),
	OPT_RUN_QUIET('q', OPT_RUN_QUIET_HELP),
	OPT_RUN_SHARED(OPT_RUN_TRACE_HELP, "sync and drop the page cache first (root)",
		       "several targets: do not start them together"),
	OPT_END(),
};

static const struct opt_cmd dd_cmd = {
	.name = "run dd",
	.usage = "DIR|FILE|DEVICE... --bs SIZE --count N [--read | --write] [options]",
	.summary =
		"dd's sequential copy: COUNT reads or writes of BS bytes, timed from the\n"
		"first to the close (and fdatasync), reported as GNU dd does. Writes go\n"
		"to a file in DIR; reads come from DIR's file, a FILE or a DEVICE.",
	.opts = dd_opts,
	.footer = "example:\n  iotap run dd /mnt/array --bs 1M --count 20480 --read",
};

static uint64_t dd_need(struct run *r, struct run_target *t)
{
	(void)r;
	if (!t->info.is_dir)
		return 0;
	return dd.o.bs * dd.o.count;
}

static int dd_check(struct run *r)
{
	unsigned int i;
	int rc;

	if (dd.rd && dd.wr)
		return opt_error(r->cmd, "--read and --write exclude each other");
	if (!dd.o.bs || !dd.o.count)
		return opt_error(r->cmd, "--bs and --count are required");
	if (dd.o.count > UINT64_MAX / dd.o.bs)
		return opt_error(r->cmd, "--bs x --count is too large");
	if (dd.rd)
		dd.o.flags |= IOTAP_DD_READ;
	if ((dd.o.flags & IOTAP_DD_FDATASYNC) && dd.rd)
		return opt_error(r->cmd, "--fdatasync applies to writes");
	rc = run_check_targets(r, !dd.rd, dd_need);
	if (rc)
		return rc;
	for (i = 0; i < r->nt; i++) {
		struct run_target *t = &r->t[i];

		if (!t->info.is_dir && t->info.size < dd.o.bs * dd.o.count)
			warn_msg("'%s' has %" PRIu64 " bytes, less than --bs x --count: dd "
				 "stops at its end", t->path, t->info.size);
	}
	return 0;
}

static int dd_run(struct run *r, struct run_target *t)
{
	(void)r;
	return iotap_workload_dd_run(t->ctx, &dd.o, t->res);
}

static void dd_print(struct run *r, struct run_target *t)
{
	const struct iotap_workload_dd_result *res = t->res;

	run_label(r, t, stdout);
	if (res->ph.ran)
		iotap_workload_dd_print(stdout, res);
}

const struct run_model dd_model = {
	.name = "dd",
	.line = "sequential read or write, GNU dd's report",
	.cmd = &dd_cmd,
	.res_size = sizeof(struct iotap_workload_dd_result),
	.concurrent = 1,
	.check = dd_check,
	.run = dd_run,
	.print = dd_print,
};
