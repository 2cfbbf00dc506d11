// SPDX-License-Identifier: MIT
/*
 * run_hdparm.c - iotap run hdparm FILE|DEVICE|DIR... [-T] [-t] [--direct]
 *
 * The hdparm model's row of the models table (run.h): its options, bound
 * to struct hdparm_cli, and hdparm's lines. One target after another, as
 * hdparm does.
 */
#include <string.h>

#include "iotap_base.h"
#include "iotap_hdparm.h"
#include "iotap_workload.h"
#include "opt.h"
#include "run.h"

static struct hdparm_cli {
	struct iotap_workload_hdparm_opts o;
} hp;

static int opt_size(const struct opt_cmd *cmd, const struct opt_desc *d, const char *arg)
{
	(void)d;
	if (iotap_size_parse(arg, 1, &hp.o.file_bytes) || hp.o.file_bytes < (4ull << 20) ||
	    hp.o.file_bytes % (2ull << 20))
		return opt_error(cmd, "bad size '%s' (2 MiB steps, 4M or more)", arg);
	return 0;
}

static const struct opt_desc hdparm_opts[] = {
	OPT_BIT('T', "cached", &hp.o.flags, IOTAP_HDPARM_CACHED,
		"cached reads: the first 2 MiB re-read for 2 s"),
	OPT_BIT('t', "device", &hp.o.flags, IOTAP_HDPARM_DEVICE,
		"disk reads: 2 MiB reads from offset 0 for 3 s,\n"
		"the page cache dropped first"),
	OPT_BIT(0, "direct", &hp.o.flags, IOTAP_HDPARM_DIRECT, "O_DIRECT for both (hdparm --direct)"),
	OPT_CALLBACK(0, "size", NULL, "SIZE", "DIR target: size of the file to read (default 1G)",
		     opt_size),
	OPT_RUN_QUIET('q', OPT_RUN_QUIET_HELP),
	OPT_RUN_TRACE(OPT_RUN_TRACE_HELP),
	OPT_RUN_FORCE,
	OPT_RUN_TRACE_MODE,
	OPT_RUN_TRACE_GROUP,
	OPT_END(),
};

static const struct opt_cmd hdparm_cmd = {
	.name = "run hdparm",
	.usage = "FILE|DEVICE|DIR... [-T] [-t] [options]",
	.summary =
		"hdparm -T and -t timings on a file, a block device or a new file in DIR\n"
		"(neither flag: both), printed as hdparm prints them. MB here is hdparm's:\n"
		"2 MiB per read, counted as 2 MB.",
	.opts = hdparm_opts,
	.footer = "example:\n  iotap run hdparm /mnt/array/bigfile -T -t",
};

static int hdparm_setup(struct run *r, int argc, char **argv)
{
	(void)r;
	(void)argc;
	(void)argv;
	hp.o.file_bytes = 1ull << 30;
	return 0;
}

static uint64_t hdparm_need(struct run *r, struct run_target *t)
{
	(void)r;
	return t->info.is_dir ? iotap_workload_hdparm_file_bytes(&hp.o) : 0;
}

static int hdparm_check(struct run *r)
{
	unsigned int i;
	int rc;

	if (!(hp.o.flags & (IOTAP_HDPARM_CACHED | IOTAP_HDPARM_DEVICE)))
		hp.o.flags |= IOTAP_HDPARM_CACHED | IOTAP_HDPARM_DEVICE;
	rc = run_check_targets(r, 0, hdparm_need);
	if (rc)
		return rc;
	for (i = 0; i < r->nt; i++) {
		struct run_target *t = &r->t[i];

		t->prog.mib = 1;
		if (t->info.is_dir) {
			struct iotap_workload_target tmp;
			int ret = iotap_workload_target_check(t->path, 1, &tmp);

			if (ret)
				return opt_error(r->cmd, "cannot create a file in '%s': %s",
						 t->path, strerror(-ret));
		} else if (t->info.size < (2ull << 20)) {
			return opt_error(r->cmd, "'%s' is smaller than 2 MiB", t->path);
		}
	}
	return 0;
}

static int hdparm_run(struct run *r, struct run_target *t)
{
	(void)r;
	return iotap_workload_hdparm_run(t->ctx, &hp.o, t->res);
}

static void hdparm_print(struct run *r, struct run_target *t)
{
	(void)r;
	iotap_workload_hdparm_print(stdout, t->path, &hp.o, t->res);
}

const struct run_model hdparm_model = {
	.name = "hdparm",
	.line = "hdparm -T / -t timings",
	.cmd = &hdparm_cmd,
	.res_size = sizeof(struct iotap_workload_hdparm_result),
	.setup = hdparm_setup,
	.check = hdparm_check,
	.run = hdparm_run,
	.print = hdparm_print,
};
