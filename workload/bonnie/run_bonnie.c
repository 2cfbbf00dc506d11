// SPDX-License-Identifier: MIT
/*
 * run_bonnie.c - iotap run bonnie DIR... [-s SIZE[:CHUNK[:SEEKS[:SEEKERS]]]]
 *                [-n NUM[:MAX[:MIN[:DIRS]]]] [-r RAM] [-f] [-b] [-D] [-x N] [-z SEED]
 *                [-m NAME] [-q] [--bonnie-1.03] [--trace FILE] [--drop-caches]
 *
 * The bonnie model's row of the models table (run.h): its options, bound
 * to struct bonnie_cli, its checks (twice RAM, chunk sizes, -D), -x runs
 * per target, and bonnie++'s tables and CSV. All DIRs at once, in step.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "iotap_base.h"
#include "iotap_bonnie.h"
#include "iotap_workload.h"
#include "opt.h"
#include "run.h"

#define MIB (1ull << 20)

static struct bonnie_cli {
	struct iotap_workload_bonnie_opts o;
	unsigned int repeats;		/* -x */
	int v103, fast;
	int size_set, char_set, ram_set, seed_set;
	uint32_t ram_mib, char_mib, seed;
	const char *machine;
	char host[256];			/* the default -m */
	struct run *run;		/* -d DIR adds a target */
} b;

/* One target's results: a run each (-x). */
struct bonnie_res {
	struct iotap_workload_bonnie_result *runs;
	unsigned int n;			/* runs done */
};

/* Split "a:b:c" (or "a,b" for -s) into at most @max fields, in place. */
static unsigned int split(char *s, const char *seps, char **f, unsigned int max)
{
	unsigned int n = 0;

	while (n < max) {
		f[n++] = s;
		s = strpbrk(s, seps);
		if (!s)
			break;
		*s++ = '\0';
	}
	return n;
}

static int opt_size(const struct opt_cmd *cmd, const struct opt_desc *d, const char *arg)
{
	char buf[256], *f[4] = { NULL };
	unsigned int n;
	uint64_t v;

	(void)d;
	snprintf(buf, sizeof(buf), "%s", arg);
	n = split(buf, ":,", f, 4);
	if (iotap_size_parse(f[0], MIB, &v) || v % MIB || v / MIB > UINT32_MAX)
		return opt_error(cmd, "bad size '%s' (MiB, or with k/m/g/t)", f[0]);
	b.o.file_mib = (uint32_t)(v / MIB);
	b.size_set = 1;
	if (n > 1 && *f[1]) {
		if (iotap_size_parse(f[1], 1, &v) || v > UINT32_MAX)
			return opt_error(cmd, "bad chunk size '%s'", f[1]);
		b.o.chunk = (uint32_t)v;
	}
	if (n > 2 && *f[2]) {
		if (iotap_size_parse(f[2], 1, &v) || !v || v > INT32_MAX)
			return opt_error(cmd, "bad seek count '%s'", f[2]);
		b.o.seeks = (uint32_t)v;
	}
	if (n > 3 && *f[3]) {
		if (parse_u32(f[3], &b.o.seekers) || !b.o.seekers || b.o.seekers > 1000)
			return opt_error(cmd, "bad seeker count '%s' (1..1000)", f[3]);
	}
	return 0;
}

static int opt_files(const struct opt_cmd *cmd, const struct opt_desc *d, const char *arg)
{
	char buf[256], *f[5] = { NULL };
	unsigned int n;
	uint64_t v;

	(void)d;
	snprintf(buf, sizeof(buf), "%s", arg);
	n = split(buf, ":", f, 5);
	if (parse_u32(f[0], &b.o.num_files) || b.o.num_files > 1024)
		return opt_error(cmd, "bad file count '%s' (units of 1024, at most 1024)", f[0]);
	if (n > 1 && *f[1]) {
		if (iotap_size_parse(f[1], 1, &v) || v > INT32_MAX)
			return opt_error(cmd, "bad maximum file size '%s'", f[1]);
		b.o.max_size = (int32_t)v;
	}
	if (n > 2 && *f[2]) {
		if (iotap_size_parse(f[2], 1, &v) || v > INT32_MAX)
			return opt_error(cmd, "bad minimum file size '%s'", f[2]);
		b.o.min_size = (int32_t)v;
	}
	if (n > 3 && *f[3]) {
		if (parse_u32(f[3], &b.o.num_dirs) || !b.o.num_dirs || b.o.num_dirs > 99999)
			return opt_error(cmd, "bad directory count '%s' (1..99999)", f[3]);
	}
	if (n > 4 && *f[4]) {
		if (iotap_size_parse(f[4], 1, &v) || v > UINT32_MAX)
			return opt_error(cmd, "bad file chunk size '%s'", f[4]);
		b.o.file_chunk = (uint32_t)v;
	}
	if (b.o.max_size < b.o.min_size)
		return opt_error(cmd, "-n: maximum file size %d is below the minimum %d",
				 b.o.max_size, b.o.min_size);
	return 0;
}

static int opt_ram(const struct opt_cmd *cmd, const struct opt_desc *d, const char *arg)
{
	(void)d;
	if (parse_u32(arg, &b.ram_mib))
		return opt_error(cmd, "bad RAM size '%s' (MiB)", arg);
	b.ram_set = 1;
	return 0;
}

static int opt_char(const struct opt_cmd *cmd, const struct opt_desc *d, const char *arg)
{
	(void)d;
	if (parse_u32(arg, &b.char_mib))
		return opt_error(cmd, "bad per-char size '%s' (MiB)", arg);
	b.char_set = 1;
	return 0;
}

static int opt_seed(const struct opt_cmd *cmd, const struct opt_desc *d, const char *arg)
{
	(void)d;
	if (parse_u32(arg, &b.seed))
		return opt_error(cmd, "bad seed '%s'", arg);
	b.seed_set = 1;
	return 0;
}

static int opt_dir(const struct opt_cmd *cmd, const struct opt_desc *d, const char *arg)
{
	(void)cmd;
	(void)d;
	return run_add_target(b.run, arg) ? 2 : 0;
}

static int opt_ignored(const struct opt_cmd *cmd, const struct opt_desc *d, const char *arg)
{
	(void)cmd;
	(void)arg;
	warn_msg("-%c ignored: iotap runs as the calling user", d->short_name);
	return 0;
}

static const struct opt_desc bonnie_opts[] = {
	OPT_CALLBACK('s', "size", NULL, "SIZE[:...]",
		     "SIZE[:CHUNK[:SEEKS[:SEEKERS]]]: file size (MiB, or 8G), block size\n"
		     "(bytes, 8192; a power of two 256..1M), seeks (8192) and seekers\n"
		     "(5; 1.03: 3); 'SIZE,CHUNK' too; default twice RAM (-r), at least\n"
		     "300 MiB; 0 skips the file I/O tests", opt_size),
	OPT_CALLBACK('n', "files", NULL, "NUM[:...]",
		     "NUM[:MAX[:MIN[:DIRS[:CHUNK]]]]: NUM*1024 files of MIN..MAX bytes\n"
		     "(MAX and MIN default 0: empty files) in DIRS directories (1),\n"
		     "written CHUNK bytes at a time; NUM defaults to 16, 0 skips the\n"
		     "file tests", opt_files),
	OPT_CALLBACK('r', "ram", NULL, "MiB", "RAM for the 'twice RAM' rule (default: this machine's)",
		     opt_ram),
	OPT_BOOL('f', "fast", &b.fast, "skip the per-char tests (putc, getc)"),
	OPT_CALLBACK(0, "char-size", NULL, "MiB", "per-char test size (2.x's -f MiB; default 3)",
		     opt_char),
	OPT_BIT('b', "sync", &b.o.flags, IOTAP_BONNIE_SYNC,
		"fsync where bonnie++ -b does: after each seek rewrite and created\n"
		"file (and its directory); 1.03 mode: also before each close"),
	OPT_BIT('D', "direct", &b.o.flags, IOTAP_BONNIE_DIRECT,
		"O_DIRECT on the files it creates (needs -f)"),
	OPT_UINT('x', "repeat", &b.repeats, "N", "N runs: a CSV line each, then mean ± sd",
		 1, 1000, "bad repeat count '%s' (1..1000)"),
	OPT_CALLBACK('z', "seed", NULL, "N", "random seed (default pid ^ time; 1.03 mode: 1)",
		     opt_seed),
	OPT_STRING('m', "machine", &b.machine, "NAME", "name in the tables and CSV (default: host name)"),
	OPT_RUN_QUIET('q', "no progress; as bonnie++ -q, the text tables go to stderr and\n"
			   "only the CSV to stdout"),
	OPT_BOOL(0, "bonnie-1.03", &b.v103,
		 "bonnie++ 1.03 (the seed posts): stdio putc/getc over the whole file,\n"
		 "3 seekers, 1 GiB pieces, 1.03's tables and CSV"),
	OPT_CALLBACK('d', "directory", NULL, "DIR", "a target directory (as bonnie++ -d)", opt_dir),
	{ .long_name = "user", .short_name = 'u', .arg = "USER", .hidden = 1,
	  .help = "accepted for bonnie++ command lines; ignored",
	  .type = OPT_T_CALLBACK, .cb = opt_ignored },
	{ .long_name = "group", .short_name = 'g', .arg = "GROUP", .hidden = 1,
	  .help = "accepted for bonnie++ command lines; ignored",
	  .type = OPT_T_CALLBACK, .cb = opt_ignored },
	OPT_RUN_SHARED(OPT_RUN_TRACE_HELP_N, OPT_RUN_DROP_TESTS, OPT_RUN_NOLOCK_TESTS),
	OPT_END(),
};

static const struct opt_cmd bonnie_cmd = {
	.name = "run bonnie",
	.usage = "DIR... [options]",
	.summary =
		"bonnie++'s tests, in its order and with its semantics (2.00a, as Debian\n"
		"ships it; --bonnie-1.03 for 1.03): per-char write (1-byte write()s), block\n"
		"write, rewrite, per-char read, block read, random seeks by competing\n"
		"seekers (one in ten rewrites its chunk), then sequential and random\n"
		"create/stat/delete of -n files. Prints bonnie++'s tables and its CSV line,\n"
		"which bon_csv2txt and bon_csv2html read. Several DIRs run at once, one\n"
		"report each. K/sec = KiB/s; %CP = CPU time of the test / wall time.",
	.opts = bonnie_opts,
	.footer =
		"examples:\n"
		"  iotap run bonnie /mnt/array -s 65000:8192 -n 0 -f -x 3\n"
		"  iotap run bonnie /mnt/array -s 8G -n 16 --trace b.iotap\n"
		"  iotap run bonnie /mnt/a /mnt/b /mnt/c -s 4G\n"
		"exit status: 0 ok, 1 a run failed, 2 usage, 130 interrupted (partial results)",
};

/* --bonnie-1.03 changes defaults: find it before the rest */
static int bonnie_setup(struct run *r, int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--bonnie-1.03"))
			b.v103 = 1;
	iotap_workload_bonnie_opts_init(&b.o, b.v103);
	b.repeats = 1;
	b.run = r;
	return 0;
}

static int pow2_ok(uint64_t v)
{
	return v >= 256 && v <= MIB && !(v & (v - 1));
}

static uint64_t bonnie_need(struct run *r, struct run_target *t)
{
	(void)r;
	(void)t;
	/* the I/O file, and the files with a 4 KiB block each for inode and name */
	return (uint64_t)b.o.file_mib * MIB +
	       (uint64_t)b.o.num_files * 1024 * ((uint64_t)b.o.max_size + 4096);
}

static int bonnie_check(struct run *r)
{
	uint64_t ram;
	unsigned int i;
	int rc;

	if (!r->nt)
		return opt_error(r->cmd, "DIR is required");
	if (!pow2_ok(b.o.chunk))
		return opt_error(r->cmd, "chunk size %u is not a power of two from 256 to 1048576",
				 b.o.chunk);
	if (!pow2_ok(b.o.file_chunk))
		return opt_error(r->cmd, "file chunk size %u is not a power of two from 256 to "
				 "1048576", b.o.file_chunk);
	if (!b.o.file_mib && !b.o.num_files)
		return opt_error(r->cmd, "-s 0 and -n 0 leave nothing to test");
	if (b.fast)
		b.o.char_mib = 0;
	else if (b.char_set)
		b.o.char_mib = b.v103 ? (b.char_mib ? UINT32_MAX : 0) : b.char_mib;
	if ((b.o.flags & IOTAP_BONNIE_DIRECT) && b.o.char_mib && b.o.file_mib)
		return opt_error(r->cmd, "-D needs -f: 1-byte per-char I/O cannot be O_DIRECT");
	if (b.seed_set) {
		b.o.seed = b.seed;
	} else if (!b.v103) {
		char *w;

		b.o.seed = (uint32_t)getpid() ^ (uint32_t)time(NULL);
		/* the trace's workload line names the seed drawn: its report prints it too */
		if (asprintf(&w, "%s -z %" PRIu32, r->workload, b.o.seed) < 0)
			return 1;
		free(r->workload);
		r->workload = w;
	}
	if (!b.machine && !gethostname(b.host, sizeof(b.host))) {
		b.host[sizeof(b.host) - 1] = '\0';
		b.machine = b.host;
	}
	b.o.machine = b.machine ? b.machine : "";

	/* first check the targets: they tell the RAM size too */
	rc = run_check_targets(r, 1, NULL);
	if (rc)
		return rc;
	ram = b.ram_set ? (uint64_t)b.ram_mib : r->t[0].info.ram_bytes / MIB;
	b.o.ram_mib = (uint32_t)ram;
	if (!b.size_set && ram) {
		/* bonnie++: twice RAM, rounded up to the next GiB above half a GiB over */
		uint64_t fs = b.o.file_mib < 2 * ram ? 2 * ram : b.o.file_mib;

		if (fs % 1024 > 512)
			fs += 1024 - fs % 1024;
		b.o.file_mib = (uint32_t)fs;
	}
	rc = run_check_targets(r, 1, bonnie_need);
	if (rc)
		return rc;
	if (b.o.file_mib && ram && (uint64_t)b.o.file_mib * r->nt < 2 * ram)
		warn_msg("file size %u MiB is less than twice RAM (%" PRIu64 " MiB): the "
			 "figures may show the page cache rather than the disk (bonnie++ "
			 "refuses; -r sets the RAM size)", b.o.file_mib, ram);
	for (i = 0; i < r->nt; i++) {
		struct bonnie_res *res = r->t[i].res;

		if (r->t[i].info.is_fuse && b.o.char_mib && b.o.file_mib && !b.v103)
			warn_msg("'%s' is on FUSE: the per-char tests make one request per byte "
				 "(bonnie++ 2.x's 1-byte write()s and read()s), slow by nature "
				 "there; -f skips them", r->t[i].path);
		res->runs = calloc(b.repeats, sizeof(*res->runs));
		if (!res->runs)
			return 1;
	}
	return 0;
}

static int bonnie_run(struct run *r, struct run_target *t)
{
	struct bonnie_res *res = t->res;
	unsigned int i;
	int ret = 0;

	(void)r;
	for (i = 0; i < b.repeats; i++) {
		ret = iotap_workload_bonnie_run(t->ctx, &b.o, &res->runs[i]);
		res->n = i + 1;
		if (ret)
			break;
	}
	return ret;
}

static void bonnie_print(struct run *r, struct run_target *t)
{
	const struct bonnie_res *res = t->res;
	const struct iotap_workload_bonnie_result *last;
	FILE *txt = run_opts.quiet ? stderr : stdout;
	unsigned int k;
	int partial;

	if (!res->n)
		return;
	last = &res->runs[res->n - 1];
	partial = last->partial || last->failed;
	run_label(r, t, stdout);
	if (run_opts.quiet && (b.repeats == 1 || partial))
		run_label(r, t, stderr);
	if (b.repeats == 1) {
		/* bonnie++'s order: the text, then the CSV line */
		iotap_workload_bonnie_print_text(txt, &b.o, last);
		fflush(txt);
		iotap_workload_bonnie_print_csv(stdout, &b.o, last);
		return;
	}
	iotap_workload_bonnie_print_csv_header(stdout, &b.o);
	for (k = 0; k < res->n; k++)
		iotap_workload_bonnie_print_csv(stdout, &b.o, &res->runs[k]);
	if (partial)
		iotap_workload_bonnie_print_text(txt, &b.o, last);
	iotap_workload_bonnie_print_summary(stdout, &b.o, res->runs, res->n);
}

static void bonnie_release(struct run_target *t)
{
	struct bonnie_res *res = t->res;

	free(res->runs);
}

const struct run_model bonnie_model = {
	.name = "bonnie",
	.alias = "bonnie++",
	.line = "bonnie++ 2.00a (or 1.03): tables and CSV",
	.cmd = &bonnie_cmd,
	.res_size = sizeof(struct bonnie_res),
	.concurrent = 1,
	.setup = bonnie_setup,
	.check = bonnie_check,
	.run = bonnie_run,
	.print = bonnie_print,
	.release = bonnie_release,
};
