// SPDX-License-Identifier: MIT
/*
 * run_iozone.c - iotap run iozone DIR... [-i 0|1|2]... [-s SIZE] [-r SIZE]
 *                [-a [-n MIN] [-g MAX]] [-t N] [-I] [-e] [-c] [-R] [--trace FILE]
 *
 * The iozone model's row of the models table (run.h): its options, bound
 * to struct iozone_cli, iozone's own refusals (-a with -t, records over
 * 16 MB), and its table, printed as the tests run when there is one DIR.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "iotap_base.h"
#include "iotap_iozone.h"
#include "iotap_workload.h"
#include "opt.h"
#include "run.h"

static struct iozone_cli {
	struct iotap_workload_iozone_opts o;
	uint64_t file_kb, rec_kb;	/* -s, -r as given; 0: not given */
	int report_tables;		/* -R */
	FILE *live;			/* the running table: one target only */
} z;

static int opt_test(const struct opt_cmd *cmd, const struct opt_desc *d, const char *arg)
{
	uint64_t v;

	(void)d;
	if (parse_u64(arg, &v) || v > 2)
		return opt_error(cmd, "-i %s is not modelled (0, 1, 2 are)", arg);
	z.o.tests |= 1u << v;
	return 0;
}

/* A size in KB (or with k/m/g) into the uint64_t d->value; d->err names it. */
static int opt_kb(const struct opt_cmd *cmd, const struct opt_desc *d, const char *arg)
{
	uint64_t v;

	if (iotap_size_parse(arg, 1024, &v) || v < 1024 || v % 1024)
		return opt_error(cmd, "bad %s '%s' (KB, or with k/m/g)", d->err, arg);
	*(uint64_t *)d->value = v / 1024;
	return 0;
}

static const struct opt_desc iozone_opts[] = {
	OPT_CALLBACK('i', "test", NULL, "N", "0: write/rewrite, 1: read/re-read, 2: random read/write\n"
					    "(repeat -i; default all three; 0 always runs)", opt_test),
	OPT_CALLBACK_ERR('s', "size", &z.file_kb, "SIZE",
			 "file size, KB (or 512k, 20480m, 4g); default 512k", opt_kb, "file size"),
	OPT_CALLBACK_ERR('r', "record", &z.rec_kb, "SIZE", "record size, KB (or 64k, 1m); default 4k",
			 opt_kb, "record size"),
	OPT_BOOL('a', "auto", &z.o.automode,
		 "auto mode: records 4k..16m over files 64k..512m (doubling); files\n"
		 "over 16m skip records under 64k, as iozone"),
	OPT_CALLBACK_ERR('n', "min-size", &z.o.min_file_kb, "SIZE",
			 "auto mode: smallest file (default 64k)", opt_kb, "minimum file size"),
	OPT_CALLBACK_ERR('g', "max-size", &z.o.max_file_kb, "SIZE",
			 "auto mode: largest file (default 512m)", opt_kb, "maximum file size"),
	OPT_CALLBACK_ERR('y', "min-record", &z.o.min_rec_kb, "SIZE",
			 "auto mode: smallest record (default 4k)", opt_kb, "minimum record size"),
	OPT_CALLBACK_ERR('q', "max-record", &z.o.max_rec_kb, "SIZE",
			 "auto mode: largest record (default 16m)", opt_kb, "maximum record size"),
	OPT_UINT('t', "threads", &z.o.threads, "N", "throughput mode: N threads, a file each",
		 1, 1024, "bad thread count '%s' (1..1024)"),
	OPT_BIT('I', "direct", &z.o.flags, IOTAP_IOZONE_DIRECT, "O_DIRECT"),
	OPT_BIT('e', "fsync", &z.o.flags, IOTAP_IOZONE_FSYNC, "include fsync in the write timing"),
	OPT_BIT('c', "close", &z.o.flags, IOTAP_IOZONE_CLOSE, "include close in the timing"),
	OPT_BIT('x', "no-stonewall", &z.o.flags, IOTAP_IOZONE_NOSTONEWALL,
		"throughput mode: no stonewalling"),
	OPT_BOOL('R', "report", &z.report_tables, "report tables (file sizes down, records across)"),
	OPT_RUN_QUIET(0, OPT_RUN_QUIET_HELP),
	OPT_RUN_SHARED(OPT_RUN_TRACE_HELP, OPT_RUN_DROP_TESTS, OPT_RUN_NOLOCK_TESTS),
	OPT_END(),
};

static const struct opt_cmd iozone_cmd = {
	.name = "run iozone",
	.usage = "DIR... [options]",
	.summary =
		"iozone's write/rewrite, read/re-read and random read/write tests over\n"
		"one file size and record size, an auto sweep (-a) or N threads (-t), with\n"
		"iozone's table, report tables (-R) and throughput summary. kB = 1024 bytes.",
	.opts = iozone_opts,
	.footer =
		"examples:\n"
		"  iotap run iozone /mnt/array -a -g 4G -i 0 -i 1 -R\n"
		"  iotap run iozone /mnt/array -s 20480m -r 64 -i 0 -i 1 -t 1",
};

static int iozone_setup(struct run *r, int argc, char **argv)
{
	(void)r;
	(void)argc;
	(void)argv;
	iotap_workload_iozone_opts_init(&z.o);
	return 0;
}

static uint64_t iozone_need(struct run *r, struct run_target *t)
{
	(void)r;
	(void)t;
	if (z.o.automode)
		return z.o.max_file_kb * 1024;
	return z.o.file_kb * 1024 * (z.o.threads ? z.o.threads : 1);
}

static int is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

static int iozone_check(struct run *r)
{
	struct iotap_workload_iozone_opts *o = &z.o;
	int rc;

	if (z.file_kb)
		o->file_kb = z.file_kb;
	if (z.rec_kb)
		o->rec_kb = z.rec_kb;
	if (o->automode && o->threads)
		return opt_error(r->cmd, "-a and -t exclude each other (as in iozone)");
	if (o->automode) {
		/* iozone: -s and -r pin the sweep to that size */
		if (z.file_kb)
			o->min_file_kb = o->max_file_kb = o->file_kb;
		if (z.rec_kb)
			o->min_rec_kb = o->max_rec_kb = o->rec_kb;
		if (o->min_file_kb > o->max_file_kb)
			return opt_error(r->cmd, "-g (largest file, %" PRIu64 " kB) is below -n "
					 "(smallest file, %" PRIu64 " kB)", o->max_file_kb,
					 o->min_file_kb);
		if (o->min_rec_kb > o->max_rec_kb)
			return opt_error(r->cmd, "-q (largest record, %" PRIu64 " kB) is below -y "
					 "(smallest record, %" PRIu64 " kB)", o->max_rec_kb,
					 o->min_rec_kb);
		if (o->min_rec_kb > o->min_file_kb)
			return opt_error(r->cmd, "record size %" PRIu64 " kB is larger than the "
					 "smallest file, %" PRIu64 " kB", o->min_rec_kb,
					 o->min_file_kb);
		if (!is_pow2(o->min_file_kb) || !is_pow2(o->min_rec_kb))
			warn_msg("sizes double from the minimum; a minimum that is not a "
				 "power of two gives sizes iozone's tables do not have");
	} else if (o->rec_kb > o->file_kb) {
		return opt_error(r->cmd, "record size %" PRIu64 " kB is larger than the file, %"
				 PRIu64 " kB", o->rec_kb, o->file_kb);
	}
	if ((o->automode ? o->max_rec_kb : o->rec_kb) > 16 * 1024)
		return opt_error(r->cmd, "records over 16 MB are not allowed (iozone's maximum)");
	rc = run_check_targets(r, 1, iozone_need);
	if (rc)
		return rc;
	if (r->nt == 1 && !o->threads) {
		z.live = stdout;
		iotap_workload_iozone_print_header(stdout, o, r->cmdline);
	} else if (o->threads && r->nt == 1) {
		iotap_workload_iozone_print_header(stdout, o, r->cmdline);
	}
	return 0;
}

static int iozone_run(struct run *r, struct run_target *t)
{
	(void)r;
	return iotap_workload_iozone_run(t->ctx, &z.o, t->res, z.live);
}

static void iozone_print(struct run *r, struct run_target *t)
{
	const struct iotap_workload_iozone_opts *o = &z.o;
	const struct iotap_workload_iozone_result *res = t->res;

	run_label(r, t, stdout);
	if (r->nt > 1)
		iotap_workload_iozone_print_header(stdout, o, r->cmdline);
	if (!z.live && !o->threads)
		iotap_workload_iozone_print_table(stdout, o, res);
	if (o->threads)
		iotap_workload_iozone_print_tput(stdout, o, res);
	if (z.report_tables)
		iotap_workload_iozone_print_report(stdout, o, res);
	if (res->partial)
		printf("\niozone: interrupted\n\n*** partial results ***\n");
	else if (!t->ret)
		printf("\n\niozone test complete.\n");
}

static void iozone_release(struct run_target *t)
{
	iotap_workload_iozone_result_release(t->res);
}

const struct run_model iozone_model = {
	.name = "iozone",
	.line = "iozone -i 0/1/2, -a sweeps, -t throughput mode",
	.cmd = &iozone_cmd,
	.res_size = sizeof(struct iotap_workload_iozone_result),
	.concurrent = 1,
	.setup = iozone_setup,
	.check = iozone_check,
	.run = iozone_run,
	.print = iozone_print,
	.release = iozone_release,
};
