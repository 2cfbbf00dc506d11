// SPDX-License-Identifier: MIT
/*
 * cmd_run.c - iotap run WORKLOAD DIR... [options]
 *
 *   iotap run bonnie DIR... [-s SIZE[:CHUNK[:SEEKS[:SEEKERS]]]] [-n NUM[:MAX[:MIN[:DIRS]]]]
 *                           [-r RAM] [-f] [-b] [-D] [-x N] [-z SEED] [-m NAME] [-q]
 *                           [--bonnie-1.03] [--trace FILE] [--drop-caches]
 *   iotap run iozone DIR... [-i 0|1|2]... [-s SIZE] [-r SIZE] [-a [-n MIN] [-g MAX]]
 *                           [-t N] [-I] [-e] [-c] [-R] [--trace FILE]
 *   iotap run dd DIR|FILE... --bs SIZE --count N [--read|--write] [--direct] [--fdatasync]
 *   iotap run hdparm FILE|DEVICE|DIR... [-T] [-t] [--direct]
 *   iotap run dedup DIR... [--meta-dir DIR] ...   (tools/run_dedup.c)
 *   iotap run pgsql DIR... [options]       (tools/run_pgsql.c)
 *
 * The workloads live in workload/ (iotap_workload.h); this file parses
 * their options (one opt table each, so `iotap run bonnie --help` is
 * generated), checks every target before anything is written (missing or
 * read-only directory, free space, bad sizes: exit 2), runs one context
 * per target (bonnie, iozone, dd: all targets at once, one thread each;
 * hdparm: one after another, as hdparm does), prints each target's report
 * in the tool's own layout, labelled when there are several, and turns
 * Ctrl-C into an orderly stop: files removed, partial results printed and
 * marked, traces closed. Exit status: 0, 1 (a run failed), 2 (usage),
 * 130 (interrupted).
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cmds.h"
#include "iotap_base.h"
#include "iotap_trace.h"
#include "iotap_workload.h"
#include "opt.h"
#include "traceio.h"
#include "run.h"

#define MIB (1ull << 20)

enum wl_type { WL_BONNIE, WL_IOZONE, WL_DD, WL_HDPARM };

/* One target: its context, its results, its thread. */
struct target {
	const char *path;
	char *trace;
	struct iotap_workload_target info;
	struct iotap_workload_ctx *ctx;
	int ret;			/* workload return */
	int open_ret;			/* iotap_workload_ctx_open return */
	int close_ret;
	unsigned int runs;		/* bonnie -x: runs done */
	struct iotap_workload_bonnie_result *bonnie;
	struct iotap_workload_iozone_result iozone;
	struct iotap_workload_dd_result dd;
	struct iotap_workload_hdparm_result hdparm;
	struct run_progress prog;	/* its progress lines */
	pthread_t thread;
};

struct run {
	enum wl_type type;
	const struct opt_cmd *cmd;
	struct target *t;
	unsigned int nt;
	const char *trace;
	struct iotap_trace_perm perm;	/* --trace-mode, --trace-group */
	int perm_set;
	int force, quiet, drop_caches;
	int no_lockstep;		/* --no-lockstep */
	int concurrent;			/* the targets ran at once */
	int printed;			/* finish_all printed the tables already */
	struct iotap_workload_lockstep *lockstep;	/* several targets at once: in step */
	int drop_warned;		/* the page cache cannot be dropped: said */
	char *cmdline, *workload;
	unsigned int repeats;		/* bonnie -x */
	FILE *live;			/* iozone's running table: one target only */
	struct iotap_workload_bonnie_opts bo;
	struct iotap_workload_iozone_opts io;
	int report_tables;		/* iozone -R */
	struct iotap_workload_dd_opts dd;
	struct iotap_workload_hdparm_opts hp;
};

static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;

/* --- option tables ------------------------------------------------------------ */

enum {
	B_SIZE, B_FILES, B_RAM, B_FAST, B_CHAR, B_SYNC, B_DIRECT, B_REPEAT, B_SEED, B_MACHINE,
	B_QUIET, B_103, B_DIR, B_USER, B_GROUP, B_TRACE, B_FORCE, B_DROP, B_NOLOCK, B_TRACE_MODE, B_TRACE_GROUP,
};

static const struct opt_desc bonnie_opts[] = {
	[B_SIZE] = { "size", 's', "SIZE[:...]",
		     "SIZE[:CHUNK[:SEEKS[:SEEKERS]]]: file size (MiB, or 8G), block size\n"
		     "(bytes, 8192; a power of two 256..1M), seeks (8192) and seekers\n"
		     "(5; 1.03: 3); 'SIZE,CHUNK' too; default twice RAM (-r), at least\n"
		     "300 MiB; 0 skips the file I/O tests" },
	[B_FILES] = { "files", 'n', "NUM[:...]",
		      "NUM[:MAX[:MIN[:DIRS[:CHUNK]]]]: NUM*1024 files of MIN..MAX bytes\n"
		      "(MAX and MIN default 0: empty files) in DIRS directories (1),\n"
		      "written CHUNK bytes at a time; NUM defaults to 16, 0 skips the\n"
		      "file tests" },
	[B_RAM] = { "ram", 'r', "MiB", "RAM for the 'twice RAM' rule (default: this machine's)" },
	[B_FAST] = { "fast", 'f', NULL, "skip the per-char tests (putc, getc)" },
	[B_CHAR] = { "char-size", 0, "MiB", "per-char test size (2.x's -f MiB; default 3)" },
	[B_SYNC] = { "sync", 'b', NULL,
		     "fsync where bonnie++ -b does: after each seek rewrite and created\n"
		     "file (and its directory); 1.03 mode: also before each close" },
	[B_DIRECT] = { "direct", 'D', NULL, "O_DIRECT on the files it creates (needs -f)" },
	[B_REPEAT] = { "repeat", 'x', "N", "N runs: a CSV line each, then mean ± sd" },
	[B_SEED] = { "seed", 'z', "N", "random seed (default pid ^ time; 1.03 mode: 1)" },
	[B_MACHINE] = { "machine", 'm', "NAME", "name in the tables and CSV (default: host name)" },
	[B_QUIET] = { "quiet", 'q', NULL,
		      "no progress; as bonnie++ -q, the text tables go to stderr and\n"
		      "only the CSV to stdout" },
	[B_103] = { "bonnie-1.03", 0, NULL,
		    "bonnie++ 1.03 (the seed posts): stdio putc/getc over the whole file,\n"
		    "3 seekers, 1 GiB pieces, 1.03's tables and CSV" },
	[B_DIR] = { "directory", 'd', "DIR", "a target directory (as bonnie++ -d)" },
	[B_USER] = { "user", 'u', "USER", "accepted for bonnie++ command lines; ignored", 1 },
	[B_GROUP] = { "group", 'g', "GROUP", "accepted for bonnie++ command lines; ignored", 1 },
	[B_TRACE] = { "trace", 0, "FILE", "record every operation into an iotap trace\n"
					  "(several targets: FILE.1.iotap, FILE.2.iotap...)" },
	[B_FORCE] = { "force", 0, NULL, "overwrite existing trace files" },
	[B_DROP] = { "drop-caches", 0, NULL, "sync, drop the page cache before each test (root)" },
	[B_NOLOCK] = { "no-lockstep", 0, NULL, "several DIRs: do not start each test on all together" },
	[B_TRACE_MODE] = OPT_TRACE_MODE("the trace files"),
	[B_TRACE_GROUP] = OPT_TRACE_GROUP,
	{ NULL },
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

enum {
	Z_TEST, Z_SIZE, Z_REC, Z_AUTO, Z_MINF, Z_MAXF, Z_MINR, Z_MAXR, Z_THREADS, Z_DIRECT,
	Z_FSYNC, Z_CLOSE, Z_NOSTONE, Z_REPORT, Z_QUIET, Z_TRACE, Z_FORCE, Z_DROP, Z_NOLOCK, Z_TRACE_MODE, Z_TRACE_GROUP,
};

static const struct opt_desc iozone_opts[] = {
	[Z_TEST] = { "test", 'i', "N", "0: write/rewrite, 1: read/re-read, 2: random read/write\n"
				       "(repeat -i; default all three; 0 always runs)" },
	[Z_SIZE] = { "size", 's', "SIZE", "file size, KB (or 512k, 20480m, 4g); default 512k" },
	[Z_REC] = { "record", 'r', "SIZE", "record size, KB (or 64k, 1m); default 4k" },
	[Z_AUTO] = { "auto", 'a', NULL,
		     "auto mode: records 4k..16m over files 64k..512m (doubling); files\n"
		     "over 16m skip records under 64k, as iozone" },
	[Z_MINF] = { "min-size", 'n', "SIZE", "auto mode: smallest file (default 64k)" },
	[Z_MAXF] = { "max-size", 'g', "SIZE", "auto mode: largest file (default 512m)" },
	[Z_MINR] = { "min-record", 'y', "SIZE", "auto mode: smallest record (default 4k)" },
	[Z_MAXR] = { "max-record", 'q', "SIZE", "auto mode: largest record (default 16m)" },
	[Z_THREADS] = { "threads", 't', "N", "throughput mode: N threads, a file each" },
	[Z_DIRECT] = { "direct", 'I', NULL, "O_DIRECT" },
	[Z_FSYNC] = { "fsync", 'e', NULL, "include fsync in the write timing" },
	[Z_CLOSE] = { "close", 'c', NULL, "include close in the timing" },
	[Z_NOSTONE] = { "no-stonewall", 'x', NULL, "throughput mode: no stonewalling" },
	[Z_REPORT] = { "report", 'R', NULL, "report tables (file sizes down, records across)" },
	[Z_QUIET] = { "quiet", 0, NULL, "no progress on stderr" },
	[Z_TRACE] = { "trace", 0, "FILE", "record every operation into an iotap trace" },
	[Z_FORCE] = { "force", 0, NULL, "overwrite existing trace files" },
	[Z_DROP] = { "drop-caches", 0, NULL, "sync, drop the page cache before each test (root)" },
	[Z_NOLOCK] = { "no-lockstep", 0, NULL, "several DIRs: do not start each test on all together" },
	[Z_TRACE_MODE] = OPT_TRACE_MODE("the trace files"),
	[Z_TRACE_GROUP] = OPT_TRACE_GROUP,
	{ NULL },
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

enum { D_BS, D_COUNT, D_READ, D_WRITE, D_DIRECT, D_FDATASYNC, D_FILE, D_KEEP, D_QUIET,
       D_TRACE, D_FORCE, D_DROP, D_NOLOCK, D_TRACE_MODE, D_TRACE_GROUP };

static const struct opt_desc dd_opts[] = {
	[D_BS] = { "bs", 0, "SIZE", "bytes per read/write (512, 64k, 1M; powers of 1024)" },
	[D_COUNT] = { "count", 0, "N", "blocks to copy" },
	[D_READ] = { "read", 0, NULL, "read (a DIR's file is written first if missing or short,\n"
					 "then dropped from the page cache)" },
	[D_WRITE] = { "write", 0, NULL, "write into DIR (the default)" },
	[D_DIRECT] = { "direct", 0, NULL, "O_DIRECT (iflag=direct / oflag=direct)" },
	[D_FDATASYNC] = { "fdatasync", 0, NULL, "fdatasync at the end, timed (conv=fdatasync)" },
	[D_FILE] = { "file", 0, "NAME", "file name inside DIR (default iotap-dd.dat)" },
	[D_KEEP] = { "keep", 0, NULL, "keep the file afterwards" },
	[D_QUIET] = { "quiet", 'q', NULL, "no progress on stderr" },
	[D_TRACE] = { "trace", 0, "FILE", "record every operation into an iotap trace" },
	[D_FORCE] = { "force", 0, NULL, "overwrite existing trace files" },
	[D_DROP] = { "drop-caches", 0, NULL, "sync and drop the page cache first (root)" },
	[D_NOLOCK] = { "no-lockstep", 0, NULL, "several targets: do not start them together" },
	[D_TRACE_MODE] = OPT_TRACE_MODE("the trace files"),
	[D_TRACE_GROUP] = OPT_TRACE_GROUP,
	{ NULL },
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

enum { H_CACHED, H_DEVICE, H_DIRECT, H_SIZE, H_QUIET, H_TRACE, H_FORCE, H_TRACE_MODE,
       H_TRACE_GROUP };

static const struct opt_desc hdparm_opts[] = {
	[H_CACHED] = { "cached", 'T', NULL, "cached reads: the first 2 MiB re-read for 2 s" },
	[H_DEVICE] = { "device", 't', NULL, "disk reads: 2 MiB reads from offset 0 for 3 s,\n"
					    "the page cache dropped first" },
	[H_DIRECT] = { "direct", 0, NULL, "O_DIRECT for both (hdparm --direct)" },
	[H_SIZE] = { "size", 0, "SIZE", "DIR target: size of the file to read (default 1G)" },
	[H_QUIET] = { "quiet", 'q', NULL, "no progress on stderr" },
	[H_TRACE] = { "trace", 0, "FILE", "record every operation into an iotap trace" },
	[H_FORCE] = { "force", 0, NULL, "overwrite existing trace files" },
	[H_TRACE_MODE] = OPT_TRACE_MODE("the trace files"),
	[H_TRACE_GROUP] = OPT_TRACE_GROUP,
	{ NULL },
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

static void run_usage(FILE *f)
{
	fprintf(f, "usage: iotap run WORKLOAD DIR... [options]\n\n"
		   "Run a benchmark workload, timed and reported as the tool it imitates,\n"
		   "and recorded into an iotap trace with --trace.\n\n"
		   "workloads:\n"
		   "  bonnie   bonnie++ 2.00a (or 1.03): tables and CSV\n"
		   "  iozone   iozone -i 0/1/2, -a sweeps, -t throughput mode\n"
		   "  dd       sequential read or write, GNU dd's report\n"
		   "  hdparm   hdparm -T / -t timings\n"
		   "  dedup    a deduplicating backup media server (NetBackup MSDP)\n"
		   "  pgsql    PostgreSQL running pgbench: pgbench's summary, checkpoints\n\n"
		   "'iotap run WORKLOAD --help' lists a workload's options.\n");
}

/* --- number parsing -------------------------------------------------------------- */

static int parse_u32(const char *s, uint32_t *out)
{
	uint64_t v;

	if (parse_u64(s, &v) || v > UINT32_MAX)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

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

/* --- the bonnie options ---------------------------------------------------------------- */

static int bonnie_size(struct run *r, const char *arg, int *set)
{
	char buf[256], *f[4] = { NULL };
	unsigned int n;
	uint64_t v;

	snprintf(buf, sizeof(buf), "%s", arg);
	n = split(buf, ":,", f, 4);
	if (iotap_size_parse(f[0], MIB, &v) || v % MIB || v / MIB > UINT32_MAX)
		return opt_error(r->cmd, "bad size '%s' (MiB, or with k/m/g/t)", f[0]);
	r->bo.file_mib = (uint32_t)(v / MIB);
	*set = 1;
	if (n > 1 && *f[1]) {
		if (iotap_size_parse(f[1], 1, &v) || v > UINT32_MAX)
			return opt_error(r->cmd, "bad chunk size '%s'", f[1]);
		r->bo.chunk = (uint32_t)v;
	}
	if (n > 2 && *f[2]) {
		if (iotap_size_parse(f[2], 1, &v) || !v || v > INT32_MAX)
			return opt_error(r->cmd, "bad seek count '%s'", f[2]);
		r->bo.seeks = (uint32_t)v;
	}
	if (n > 3 && *f[3]) {
		if (parse_u32(f[3], &r->bo.seekers) || !r->bo.seekers || r->bo.seekers > 1000)
			return opt_error(r->cmd, "bad seeker count '%s' (1..1000)", f[3]);
	}
	return 0;
}

static int bonnie_files(struct run *r, const char *arg)
{
	char buf[256], *f[5] = { NULL };
	unsigned int n;
	uint64_t v;

	snprintf(buf, sizeof(buf), "%s", arg);
	n = split(buf, ":", f, 5);
	if (parse_u32(f[0], &r->bo.num_files) || r->bo.num_files > 1024)
		return opt_error(r->cmd, "bad file count '%s' (units of 1024, at most 1024)", f[0]);
	if (n > 1 && *f[1]) {
		if (iotap_size_parse(f[1], 1, &v) || v > INT32_MAX)
			return opt_error(r->cmd, "bad maximum file size '%s'", f[1]);
		r->bo.max_size = (int32_t)v;
	}
	if (n > 2 && *f[2]) {
		if (iotap_size_parse(f[2], 1, &v) || v > INT32_MAX)
			return opt_error(r->cmd, "bad minimum file size '%s'", f[2]);
		r->bo.min_size = (int32_t)v;
	}
	if (n > 3 && *f[3]) {
		if (parse_u32(f[3], &r->bo.num_dirs) || !r->bo.num_dirs || r->bo.num_dirs > 99999)
			return opt_error(r->cmd, "bad directory count '%s' (1..99999)", f[3]);
	}
	if (n > 4 && *f[4]) {
		if (iotap_size_parse(f[4], 1, &v) || v > UINT32_MAX)
			return opt_error(r->cmd, "bad file chunk size '%s'", f[4]);
		r->bo.file_chunk = (uint32_t)v;
	}
	if (r->bo.max_size < r->bo.min_size)
		return opt_error(r->cmd, "-n: maximum file size %d is below the minimum %d",
				 r->bo.max_size, r->bo.min_size);
	return 0;
}

static int pow2_ok(uint64_t v)
{
	return v >= 256 && v <= MIB && !(v & (v - 1));
}

/* --- common: targets, traces, free space ------------------------------------------------- */

/* FILE for one target; FILE.N.iotap (or FILE.N) for target N of several */
char *run_trace_name(const char *path, unsigned int i, unsigned int n)
{
	const char *dot = strrchr(path, '.');
	size_t len = strlen(path) + 16;
	char *s = malloc(len);

	if (!s)
		return NULL;
	if (n == 1)
		snprintf(s, len, "%s", path);
	else if (dot && !strcmp(dot, ".iotap") && dot > path)
		snprintf(s, len, "%.*s.%u.iotap", (int)(dot - path), path, i + 1);
	else
		snprintf(s, len, "%s.%u", path, i + 1);
	return s;
}

/* Add DIR to the run; 0, or 1 (the exit status) without memory, said. */
static int add_target(struct run *r, const char *path)
{
	struct target *n = realloc(r->t, (r->nt + 1) * sizeof(*n));

	if (!n) {
		die_msg("out of memory");
		return 1;
	}
	r->t = n;
	memset(&n[r->nt], 0, sizeof(*n));
	n[r->nt].path = path;
	n[r->nt].prog.path = path;
	r->nt++;
	return 0;
}

/*
 * After a command's option loop (@rc from opt_next()): collect the DIR
 * arguments. Return: -1 to go on, else the exit status (0 after --help,
 * 2 on a usage error already printed, 1 without memory).
 */
static int take_targets(struct run *r, int rc, int argc, char **argv)
{
	int i;

	if (rc == 2)
		return 0;
	if (rc < 0)
		return 2;
	for (i = optind; i < argc; i++)
		if (add_target(r, argv[i]))
			return 1;
	return -1;
}

#define DROP_CACHES "/proc/sys/vm/drop_caches"

void run_drop_warning(const char *cmd, int err)
{
	warn_msg("--drop-caches: cannot write %s: %s; the page cache is not dropped, so "
		 "the figures of 'iotap %s' include it", DROP_CACHES, strerror(-err), cmd);
}

int run_drop_check(const char *cmd)
{
	int err;

	if (!access(DROP_CACHES, W_OK))
		return 0;
	err = -errno;
	run_drop_warning(cmd, err);
	return err;
}

/* --trace-mode (@group 0) or --trace-group (1): 0, or 2 after saying why. */
static int run_perm_opt(struct run *r, int group, const char *arg)
{
	r->perm_set = 1;
	return opt_trace_perm(r->cmd, group, arg, &r->perm);
}

/* Name each target's trace and check it may be written; 0 or 1 (said). */
static int check_traces(struct run *r)
{
	/* a target (a FILE or DEVICE that dd or hdparm reads) is an input */
	const char **inputs = calloc(r->nt + 1, sizeof(*inputs));
	struct out_rules rules = { .inputs = inputs, .force = r->force, .trace = 1 };
	unsigned int i;
	int ret = 0;

	if (!inputs) {
		die_msg("out of memory");
		return 1;
	}
	for (i = 0; i < r->nt; i++)
		inputs[i] = r->t[i].path;
	for (i = 0; i < r->nt && !ret; i++) {
		if (!r->t[i].trace)
			r->t[i].trace = run_trace_name(r->trace, i, r->nt);
		if (!r->t[i].trace)
			die_msg("out of memory");
		if (!r->t[i].trace || out_check(r->t[i].trace, &rules) < 0)
			ret = 1;
	}
	free(inputs);
	return ret;
}

/*
 * Check every target and trace before anything is written. @need: bytes
 * each target will write; targets on one filesystem add up.
 */
typedef uint64_t (*need_fn)(struct run *r, struct target *t);

static int check_targets(struct run *r, int need_dir, need_fn need)
{
	unsigned int i, j;

	if (!r->nt)
		return opt_error(r->cmd, "%s is required", need_dir ? "DIR" : "a target");
	for (i = 0; i < r->nt; i++) {
		struct target *t = &r->t[i];
		int ret = iotap_workload_target_check(t->path, need_dir, &t->info);

		if (ret == -ENOTDIR)
			return opt_error(r->cmd, "'%s' is not a directory", t->path);
		if (ret == -EROFS)
			return opt_error(r->cmd, "'%s' is on a read-only filesystem", t->path);
		if (ret == -EACCES)
			return opt_error(r->cmd, "no permission to write in '%s'", t->path);
		if (ret)
			return opt_error(r->cmd, "cannot use '%s': %s", t->path, strerror(-ret));
		for (j = 0; j < i; j++)
			if (!strcmp(r->t[j].path, t->path))
				return opt_error(r->cmd, "'%s' is given twice", t->path);
	}
	for (i = 0; need && i < r->nt; i++) {
		uint64_t sum = 0, avail = r->t[i].info.avail_bytes;

		if (r->t[i].info.is_blockdev)
			continue;
		for (j = 0; j < r->nt; j++)
			if (r->t[j].info.fsid == r->t[i].info.fsid && !r->t[j].info.is_blockdev)
				sum += need(r, &r->t[j]);
		/* a directory the run must write in, not one short of space */
		if (need(r, &r->t[i]) && r->t[i].info.is_rdonly)
			return opt_error(r->cmd, "'%s' is on a read-only filesystem; the run "
					 "writes %.1f MB there", r->t[i].path,
					 need(r, &r->t[i]) / 1e6);
		if (sum > avail) {
			fprintf(stderr,
				"iotap %s: '%s' has %.1f MB free; the run needs %.1f MB%s\n",
				r->cmd->name, r->t[i].path, avail / 1e6, sum / 1e6,
				r->nt > 1 ? " (all targets on that filesystem)" : "");
			return 2;
		}
	}
	if (r->perm_set && !r->trace)
		return opt_error(r->cmd, "--trace-mode and --trace-group need --trace FILE");
	if (r->trace && check_traces(r))
		return 1;
	if (r->drop_caches && geteuid() != 0)
		return opt_error(r->cmd, "--drop-caches needs root");
	if (r->drop_caches && run_drop_check(r->cmd->name))
		r->drop_warned = 1;
	return 0;
}

/* --- progress ---------------------------------------------------------------- */

void run_progress(void *arg, const struct iotap_workload_progress *p)
{
	struct run_progress *t = arg;
	char what[64];

	if (p->mb_per_s > 0 && t->mib)	/* hdparm: its own MB, MiB */
		snprintf(what, sizeof(what), "%8.1f MiB/s", p->mb_per_s * 1e6 / 1048576);
	else if (p->mb_per_s > 0)
		snprintf(what, sizeof(what), "%8.1f MB/s", p->mb_per_s);
	else
		snprintf(what, sizeof(what), "%8.0f /s", p->units_per_s);
	pthread_mutex_lock(&out_lock);
	if (isatty(STDERR_FILENO)) {
		if (p->done)
			fprintf(stderr, "\r%-78s\r", "");
		else
			fprintf(stderr, "\r%-40.40s %-16.16s %5.1f%% %s ", t->path, p->phase,
				p->fraction * 100, what);
	} else if (p->done || p->elapsed_s - t->last_report_ns / 1e9 >= 10) {
		t->last_report_ns = (uint64_t)(p->elapsed_s * 1e9);
		if (p->done)
			fprintf(stderr, "iotap run: '%s' %s: %s, %s average, %.1f s\n", t->path,
				p->phase, p->partial ? "stopped" : "done", what, p->elapsed_s);
		else
			fprintf(stderr, "iotap run: '%s' %s: %.0f%% %s, %.0f s\n", t->path,
				p->phase, p->fraction * 100, what, p->elapsed_s);
		if (p->done)
			t->last_report_ns = 0;
	}
	fflush(stderr);
	pthread_mutex_unlock(&out_lock);
}

static void on_signal(int sig)
{
	(void)sig;
	iotap_workload_interrupt();
}

void run_install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	/*
	 * Every interrupt only asks the run to stop, the second one too: timeout(1)
	 * signals the process and then its group, a user presses Ctrl-C twice, and
	 * either must still remove the files and close the trace (as bonnie++
	 * does). SIGQUIT (Ctrl-\) or SIGKILL end the process without cleanup.
	 */
	sa.sa_flags = 0;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

/* --- running ----------------------------------------------------------------- */

struct job {
	struct run *r;
	struct target *t;
};

static void run_one(struct run *r, struct target *t)
{
	struct iotap_workload_env env = {
		.target = t->path,
		.trace_path = t->trace,
		.cmdline = r->cmdline,
		.workload = r->workload,
		.flags = (r->force ? IOTAP_WORKLOAD_TRACE_FORCE : 0) |
			 (r->drop_caches ? IOTAP_WORKLOAD_DROP_CACHES : 0),
		.progress = r->quiet ? NULL : run_progress,
		.progress_arg = &t->prog,
		.lockstep = r->lockstep,
	};
	unsigned int i;

	t->open_ret = iotap_workload_ctx_open(&t->ctx, &env);
	if (t->open_ret) {
		iotap_workload_lockstep_leave(r->lockstep);	/* the others do not wait for it */
		return;
	}
	switch (r->type) {
	case WL_BONNIE:
		for (i = 0; i < r->repeats; i++) {
			t->ret = iotap_workload_bonnie_run(t->ctx, &r->bo, &t->bonnie[i]);
			t->runs = i + 1;
			if (t->ret)
				break;
		}
		break;
	case WL_IOZONE:
		t->ret = iotap_workload_iozone_run(t->ctx, &r->io, &t->iozone, r->live);
		break;
	case WL_DD:
		t->ret = iotap_workload_dd_run(t->ctx, &r->dd, &t->dd);
		break;
	case WL_HDPARM:
		t->ret = iotap_workload_hdparm_run(t->ctx, &r->hp, &t->hdparm);
		break;
	}
	iotap_workload_ctx_leave(t->ctx);
}

static void *run_thread(void *p)
{
	struct job *j = p;

	run_one(j->r, j->t);
	return NULL;
}

static void run_all(struct run *r, int concurrent)
{
	struct job *jobs;
	unsigned int i, started = 0;

	run_install_signals();
	jobs = calloc(r->nt, sizeof(*jobs));
	if (!concurrent || r->nt == 1 || !jobs) {
		for (i = 0; i < r->nt && !iotap_workload_interrupted(); i++)
			run_one(r, &r->t[i]);
		free(jobs);
		return;
	}
	/* bonnie++ -p/-y: every test starts on all the targets together */
	if (!r->no_lockstep && iotap_workload_lockstep_new(&r->lockstep, r->nt))
		r->lockstep = NULL;
	for (i = 0; i < r->nt; i++) {
		jobs[i].r = r;
		jobs[i].t = &r->t[i];
		if (pthread_create(&r->t[i].thread, NULL, run_thread, &jobs[i])) {
			r->t[i].open_ret = -EAGAIN;
			break;
		}
		started++;
	}
	for (i = started; i < r->nt; i++)
		iotap_workload_lockstep_leave(r->lockstep);
	for (i = 0; i < started; i++)
		pthread_join(r->t[i].thread, NULL);
	iotap_workload_lockstep_free(r->lockstep);
	r->lockstep = NULL;
	r->concurrent = 1;
	free(jobs);
}

/* Print one target's failure or trace problems; return its exit status share. */
static int finish_target(struct run *r, struct target *t)
{
	int rc = 0;

	if (t->open_ret) {
		if (t->open_ret == -EEXIST && t->trace)
			die_msg("cannot create trace '%s': it exists", t->trace);
		else if (t->trace)
			die_msg("cannot start '%s' on '%s' (trace '%s'): %s", r->cmd->name, t->path,
				t->trace, strerror(-t->open_ret));
		else
			die_msg("cannot start '%s' on '%s': %s", r->cmd->name, t->path,
				strerror(-t->open_ret));
		return 1;
	}
	if (t->ret == -EINTR) {
		rc = 130;
	} else if (t->ret) {
		const char *what = iotap_workload_ctx_error(t->ctx);

		die_msg("%s on '%s': %s%s%s", r->cmd->name, t->path, what, *what ? ": " : "",
			strerror(-t->ret));
		rc = 1;
	}
	if (r->drop_caches && !r->drop_warned && iotap_workload_ctx_drop_error(t->ctx)) {
		run_drop_warning(r->cmd->name, iotap_workload_ctx_drop_error(t->ctx));
		r->drop_warned = 1;
	}
	if (t->trace) {
		uint64_t lost = iotap_workload_ctx_lost(t->ctx);

		if (lost)
			warn_msg("trace '%s': %" PRIu64 " records dropped (the trace writer fell "
				 "behind; LOST records say where)", t->trace, lost);
	}
	t->close_ret = iotap_workload_ctx_close(t->ctx);
	t->ctx = NULL;
	if (t->close_ret) {
		die_msg("cannot write trace '%s': %s", t->trace, strerror(-t->close_ret));
		if (!rc)
			rc = 1;
	}
	/* the trace this run created, complete: shared as asked */
	if (t->trace && r->perm_set && trace_perm_set(t->trace, &r->perm) && !rc)
		rc = 1;
	return rc;
}

static void label(struct run *r, struct target *t, FILE *f)
{
	if (r->nt > 1)
		fprintf(f, "%s==> %s <==\n", t == r->t ? "" : "\n", t->path);
}

static void print_bonnie(struct run *r, struct target *t)
{
	const struct iotap_workload_bonnie_result *last = &t->bonnie[t->runs - 1];
	FILE *txt = r->quiet ? stderr : stdout;
	int partial = last->partial || last->failed;
	unsigned int k;

	label(r, t, stdout);
	if (r->quiet && (r->repeats == 1 || partial))
		label(r, t, stderr);
	if (r->repeats == 1) {
		/* bonnie++'s order: the text, then the CSV line */
		iotap_workload_bonnie_print_text(txt, &r->bo, last);
		fflush(txt);
		iotap_workload_bonnie_print_csv(stdout, &r->bo, last);
		return;
	}
	iotap_workload_bonnie_print_csv_header(stdout, &r->bo);
	for (k = 0; k < t->runs; k++)
		iotap_workload_bonnie_print_csv(stdout, &r->bo, &t->bonnie[k]);
	if (partial)
		iotap_workload_bonnie_print_text(txt, &r->bo, last);
	iotap_workload_bonnie_print_summary(stdout, &r->bo, t->bonnie, t->runs);
}

static void print_iozone(struct run *r, struct target *t)
{
	const struct iotap_workload_iozone_opts *o = &r->io;

	label(r, t, stdout);
	if (r->nt > 1)
		iotap_workload_iozone_print_header(stdout, o, r->cmdline);
	if (!r->live && !o->threads)
		iotap_workload_iozone_print_table(stdout, o, &t->iozone);
	if (o->threads)
		iotap_workload_iozone_print_tput(stdout, o, &t->iozone);
	if (r->report_tables)
		iotap_workload_iozone_print_report(stdout, o, &t->iozone);
	if (t->iozone.partial)
		printf("\niozone: interrupted\n\n*** partial results ***\n");
	else if (!t->ret)
		printf("\n\niozone test complete.\n");
}

static void print_target(struct run *r, struct target *t)
{
	switch (r->type) {
	case WL_BONNIE:
		if (t->runs)
			print_bonnie(r, t);
		break;
	case WL_IOZONE:
		print_iozone(r, t);
		break;
	case WL_DD:
		label(r, t, stdout);
		if (t->dd.ph.ran)
			iotap_workload_dd_print(stdout, &t->dd);
		break;
	case WL_HDPARM:
		iotap_workload_hdparm_print(stdout, t->path, &r->hp, &t->hdparm);
		break;
	}
	fflush(stdout);
}

static int finish_all(struct run *r)
{
	unsigned int i;
	int rc = 0, trc;

	if (r->nt > 1 && r->concurrent) {
		struct iotap_workload_ctx **ctx = calloc(r->nt, sizeof(*ctx));
		const char **paths = calloc(r->nt, sizeof(*paths));

		for (i = 0; ctx && paths && i < r->nt; i++) {
			ctx[i] = r->t[i].open_ret ? NULL : r->t[i].ctx;
			paths[i] = r->t[i].path;
		}
		if (ctx && paths) {
			/* after the tables (stdout), before the contexts close */
			for (i = 0; i < r->nt; i++)
				if (!r->t[i].open_ret)
					print_target(r, &r->t[i]);
			run_print_overlap(stdout, ctx, paths, r->nt, !r->no_lockstep);
			fflush(stdout);
			r->printed = 1;
		}
		free(ctx);
		free(paths);
	}
	for (i = 0; i < r->nt; i++) {
		if (!r->t[i].open_ret && !r->printed)
			print_target(r, &r->t[i]);
		trc = finish_target(r, &r->t[i]);
		if (trc && (!rc || trc == 130))
			rc = trc;
	}
	if (rc == 130)
		fprintf(stderr, "iotap run: interrupted: results above are partial; "
				"files removed%s\n", r->trace ? ", traces closed" : "");
	return rc;
}

static void run_release(struct run *r)
{
	unsigned int i;

	for (i = 0; i < r->nt; i++) {
		free(r->t[i].trace);
		free(r->t[i].bonnie);
		iotap_workload_iozone_result_release(&r->t[i].iozone);
	}
	free(r->t);
	free(r->cmdline);
	free(r->workload);
}

/* --- bonnie ------------------------------------------------------------------ */

static uint64_t bonnie_need(struct run *r, struct target *t)
{
	const struct iotap_workload_bonnie_opts *o = &r->bo;

	(void)t;
	/* the I/O file, and the files with a 4 KiB block each for inode and name */
	return (uint64_t)o->file_mib * MIB +
	       (uint64_t)o->num_files * 1024 * ((uint64_t)o->max_size + 4096);
}

static int run_bonnie(struct run *r, int argc, char **argv)
{
	int idx, rc, v103 = 0, size_set = 0, i, fast = 0, char_set = 0, ram_set = 0, seed_set = 0;
	uint32_t ram_mib = 0, char_mib = 0, seed = 0;
	const char *arg, *machine = NULL;
	char host[256];
	uint64_t ram;

	/* --bonnie-1.03 changes defaults: find it before the rest */
	for (i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--bonnie-1.03"))
			v103 = 1;
	iotap_workload_bonnie_opts_init(&r->bo, v103);
	r->repeats = 1;
	while ((rc = opt_next(r->cmd, argc, argv, &idx, &arg)) == 1) {
		switch (idx) {
		case B_SIZE:
			if (bonnie_size(r, arg, &size_set))
				return 2;
			break;
		case B_FILES:
			if (bonnie_files(r, arg))
				return 2;
			break;
		case B_RAM:
			if (parse_u32(arg, &ram_mib))
				return opt_error(r->cmd, "bad RAM size '%s' (MiB)", arg);
			ram_set = 1;
			break;
		case B_FAST: fast = 1; break;
		case B_CHAR:
			if (parse_u32(arg, &char_mib))
				return opt_error(r->cmd, "bad per-char size '%s' (MiB)", arg);
			char_set = 1;
			break;
		case B_SYNC: r->bo.flags |= IOTAP_BONNIE_SYNC; break;
		case B_DIRECT: r->bo.flags |= IOTAP_BONNIE_DIRECT; break;
		case B_REPEAT:
			if (parse_u32(arg, &r->repeats) || !r->repeats || r->repeats > 1000)
				return opt_error(r->cmd, "bad repeat count '%s' (1..1000)", arg);
			break;
		case B_SEED:
			if (parse_u32(arg, &seed))
				return opt_error(r->cmd, "bad seed '%s'", arg);
			seed_set = 1;
			break;
		case B_MACHINE: machine = arg; break;
		case B_QUIET: r->quiet = 1; break;
		case B_103: break;
		case B_DIR:
			if (add_target(r, arg))
				return 1;
			break;
		case B_USER:
		case B_GROUP:
			warn_msg("-%c ignored: iotap runs as the calling user",
				 idx == B_USER ? 'u' : 'g');
			break;
		case B_TRACE: r->trace = arg; break;
		case B_FORCE: r->force = 1; break;
		case B_TRACE_MODE:
		case B_TRACE_GROUP:
			if (run_perm_opt(r, idx == B_TRACE_GROUP, arg))
				return 2;
			break;
		case B_DROP: r->drop_caches = 1; break;
		case B_NOLOCK: r->no_lockstep = 1; break;
		}
	}
	rc = take_targets(r, rc, argc, argv);
	if (rc >= 0)
		return rc;
	if (!r->nt)
		return opt_error(r->cmd, "DIR is required");
	if (!pow2_ok(r->bo.chunk))
		return opt_error(r->cmd, "chunk size %u is not a power of two from 256 to 1048576",
				 r->bo.chunk);
	if (!pow2_ok(r->bo.file_chunk))
		return opt_error(r->cmd, "file chunk size %u is not a power of two from 256 to "
				 "1048576", r->bo.file_chunk);
	if (!r->bo.file_mib && !r->bo.num_files)
		return opt_error(r->cmd, "-s 0 and -n 0 leave nothing to test");
	if (fast)
		r->bo.char_mib = 0;
	else if (char_set)
		r->bo.char_mib = v103 ? (char_mib ? UINT32_MAX : 0) : char_mib;
	if ((r->bo.flags & IOTAP_BONNIE_DIRECT) && r->bo.char_mib && r->bo.file_mib)
		return opt_error(r->cmd, "-D needs -f: 1-byte per-char I/O cannot be O_DIRECT");
	if (seed_set) {
		r->bo.seed = seed;
	} else if (!v103) {
		char *w;

		r->bo.seed = (uint32_t)getpid() ^ (uint32_t)time(NULL);
		/* the trace's workload line names the seed drawn: its report prints it too */
		if (asprintf(&w, "%s -z %" PRIu32, r->workload, r->bo.seed) < 0)
			return 1;
		free(r->workload);
		r->workload = w;
	}
	if (!machine && !gethostname(host, sizeof(host))) {
		host[sizeof(host) - 1] = '\0';
		machine = host;
	}
	r->bo.machine = machine ? machine : "";

	/* first check the targets: they tell the RAM size too */
	rc = check_targets(r, 1, NULL);
	if (rc)
		return rc;
	ram = ram_set ? (uint64_t)ram_mib : r->t[0].info.ram_bytes / MIB;
	r->bo.ram_mib = (uint32_t)ram;
	if (!size_set && ram) {
		/* bonnie++: twice RAM, rounded up to the next GiB above half a GiB over */
		uint64_t fs = r->bo.file_mib < 2 * ram ? 2 * ram : r->bo.file_mib;

		if (fs % 1024 > 512)
			fs += 1024 - fs % 1024;
		r->bo.file_mib = (uint32_t)fs;
	}
	rc = check_targets(r, 1, bonnie_need);
	if (rc)
		return rc;
	if (r->bo.file_mib && ram && (uint64_t)r->bo.file_mib * r->nt < 2 * ram)
		warn_msg("file size %u MiB is less than twice RAM (%" PRIu64 " MiB): the "
			 "figures may show the page cache rather than the disk (bonnie++ "
			 "refuses; -r sets the RAM size)", r->bo.file_mib, ram);
	for (i = 0; i < (int)r->nt; i++) {
		if (r->t[i].info.is_fuse && r->bo.char_mib && r->bo.file_mib && !v103)
			warn_msg("'%s' is on FUSE: the per-char tests make one request per byte "
				 "(bonnie++ 2.x's 1-byte write()s and read()s), slow by nature "
				 "there; -f skips them", r->t[i].path);
		r->t[i].bonnie = calloc(r->repeats, sizeof(*r->t[i].bonnie));
		if (!r->t[i].bonnie)
			return 1;
	}
	run_all(r, 1);
	return finish_all(r);
}

/* --- iozone ------------------------------------------------------------------ */

static int iozone_kb(struct run *r, const char *what, const char *arg, uint64_t *kb)
{
	uint64_t v;

	if (iotap_size_parse(arg, 1024, &v) || v < 1024 || v % 1024)
		return opt_error(r->cmd, "bad %s '%s' (KB, or with k/m/g)", what, arg);
	*kb = v / 1024;
	return 0;
}

static uint64_t iozone_need(struct run *r, struct target *t)
{
	const struct iotap_workload_iozone_opts *o = &r->io;

	(void)t;
	if (o->automode)
		return o->max_file_kb * 1024;
	return o->file_kb * 1024 * (o->threads ? o->threads : 1);
}

static int is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

static int run_iozone(struct run *r, int argc, char **argv)
{
	int idx, rc, s_set = 0, r_set = 0;
	const char *arg;
	uint64_t v;

	iotap_workload_iozone_opts_init(&r->io);
	while ((rc = opt_next(r->cmd, argc, argv, &idx, &arg)) == 1) {
		switch (idx) {
		case Z_TEST:
			if (parse_u64(arg, &v) || v > 2)
				return opt_error(r->cmd, "-i %s is not modelled (0, 1, 2 are)",
						 arg);
			r->io.tests |= 1u << v;
			break;
		case Z_SIZE:
			if (iozone_kb(r, "file size", arg, &r->io.file_kb))
				return 2;
			s_set = 1;
			break;
		case Z_REC:
			if (iozone_kb(r, "record size", arg, &r->io.rec_kb))
				return 2;
			r_set = 1;
			break;
		case Z_AUTO: r->io.automode = 1; break;
		case Z_MINF:
			if (iozone_kb(r, "minimum file size", arg, &r->io.min_file_kb))
				return 2;
			break;
		case Z_MAXF:
			if (iozone_kb(r, "maximum file size", arg, &r->io.max_file_kb))
				return 2;
			break;
		case Z_MINR:
			if (iozone_kb(r, "minimum record size", arg, &r->io.min_rec_kb))
				return 2;
			break;
		case Z_MAXR:
			if (iozone_kb(r, "maximum record size", arg, &r->io.max_rec_kb))
				return 2;
			break;
		case Z_THREADS:
			if (parse_u64(arg, &v) || !v || v > 1024)
				return opt_error(r->cmd, "bad thread count '%s' (1..1024)", arg);
			r->io.threads = (unsigned int)v;
			break;
		case Z_DIRECT: r->io.flags |= IOTAP_IOZONE_DIRECT; break;
		case Z_FSYNC: r->io.flags |= IOTAP_IOZONE_FSYNC; break;
		case Z_CLOSE: r->io.flags |= IOTAP_IOZONE_CLOSE; break;
		case Z_NOSTONE: r->io.flags |= IOTAP_IOZONE_NOSTONEWALL; break;
		case Z_REPORT: r->report_tables = 1; break;
		case Z_QUIET: r->quiet = 1; break;
		case Z_TRACE: r->trace = arg; break;
		case Z_FORCE: r->force = 1; break;
		case Z_TRACE_MODE:
		case Z_TRACE_GROUP:
			if (run_perm_opt(r, idx == Z_TRACE_GROUP, arg))
				return 2;
			break;
		case Z_DROP: r->drop_caches = 1; break;
		case Z_NOLOCK: r->no_lockstep = 1; break;
		}
	}
	rc = take_targets(r, rc, argc, argv);
	if (rc >= 0)
		return rc;
	if (r->io.automode && r->io.threads)
		return opt_error(r->cmd, "-a and -t exclude each other (as in iozone)");
	if (r->io.automode) {
		/* iozone: -s and -r pin the sweep to that size */
		if (s_set)
			r->io.min_file_kb = r->io.max_file_kb = r->io.file_kb;
		if (r_set)
			r->io.min_rec_kb = r->io.max_rec_kb = r->io.rec_kb;
		if (r->io.min_file_kb > r->io.max_file_kb)
			return opt_error(r->cmd, "-g (largest file, %" PRIu64 " kB) is below -n "
					 "(smallest file, %" PRIu64 " kB)", r->io.max_file_kb,
					 r->io.min_file_kb);
		if (r->io.min_rec_kb > r->io.max_rec_kb)
			return opt_error(r->cmd, "-q (largest record, %" PRIu64 " kB) is below -y "
					 "(smallest record, %" PRIu64 " kB)", r->io.max_rec_kb,
					 r->io.min_rec_kb);
		if (r->io.min_rec_kb > r->io.min_file_kb)
			return opt_error(r->cmd, "record size %" PRIu64 " kB is larger than the "
					 "smallest file, %" PRIu64 " kB", r->io.min_rec_kb,
					 r->io.min_file_kb);
		if (!is_pow2(r->io.min_file_kb) || !is_pow2(r->io.min_rec_kb))
			warn_msg("sizes double from the minimum; a minimum that is not a "
				 "power of two gives sizes iozone's tables do not have");
	} else if (r->io.rec_kb > r->io.file_kb) {
		return opt_error(r->cmd, "record size %" PRIu64 " kB is larger than the file, %"
				 PRIu64 " kB", r->io.rec_kb, r->io.file_kb);
	}
	if ((r->io.automode ? r->io.max_rec_kb : r->io.rec_kb) > 16 * 1024)
		return opt_error(r->cmd, "records over 16 MB are not allowed (iozone's maximum)");
	rc = check_targets(r, 1, iozone_need);
	if (rc)
		return rc;
	if (r->nt == 1 && !r->io.threads) {
		r->live = stdout;
		iotap_workload_iozone_print_header(stdout, &r->io, r->cmdline);
	} else if (r->io.threads && r->nt == 1) {
		iotap_workload_iozone_print_header(stdout, &r->io, r->cmdline);
	}
	run_all(r, 1);
	return finish_all(r);
}

/* --- dd ---------------------------------------------------------------------- */

static uint64_t dd_need(struct run *r, struct target *t)
{
	if (!t->info.is_dir)
		return 0;
	return r->dd.bs * r->dd.count;
}

static int run_dd(struct run *r, int argc, char **argv)
{
	int idx, rc, i, rd = 0, wr = 0;
	const char *arg;

	memset(&r->dd, 0, sizeof(r->dd));
	while ((rc = opt_next(r->cmd, argc, argv, &idx, &arg)) == 1) {
		switch (idx) {
		case D_BS:
			if (iotap_size_parse(arg, 1, &r->dd.bs) || !r->dd.bs || r->dd.bs > (1ull << 30))
				return opt_error(r->cmd, "bad block size '%s' (1 B to 1 GiB)",
						 arg);
			break;
		case D_COUNT:
			if (parse_u64(arg, &r->dd.count) || !r->dd.count)
				return opt_error(r->cmd, "bad count '%s'", arg);
			break;
		case D_READ: rd = 1; break;
		case D_WRITE: wr = 1; break;
		case D_DIRECT: r->dd.flags |= IOTAP_DD_DIRECT; break;
		case D_FDATASYNC: r->dd.flags |= IOTAP_DD_FDATASYNC; break;
		case D_FILE:
			if (strchr(arg, '/') || !*arg)
				return opt_error(r->cmd, "--file takes a name, not a path");
			r->dd.file = arg;
			break;
		case D_KEEP: r->dd.keep = 1; break;
		case D_QUIET: r->quiet = 1; break;
		case D_TRACE: r->trace = arg; break;
		case D_FORCE: r->force = 1; break;
		case D_TRACE_MODE:
		case D_TRACE_GROUP:
			if (run_perm_opt(r, idx == D_TRACE_GROUP, arg))
				return 2;
			break;
		case D_DROP: r->drop_caches = 1; break;
		case D_NOLOCK: r->no_lockstep = 1; break;
		}
	}
	rc = take_targets(r, rc, argc, argv);
	if (rc >= 0)
		return rc;
	if (rd && wr)
		return opt_error(r->cmd, "--read and --write exclude each other");
	if (!r->dd.bs || !r->dd.count)
		return opt_error(r->cmd, "--bs and --count are required");
	if (r->dd.count > UINT64_MAX / r->dd.bs)
		return opt_error(r->cmd, "--bs x --count is too large");
	if (rd)
		r->dd.flags |= IOTAP_DD_READ;
	if ((r->dd.flags & IOTAP_DD_FDATASYNC) && rd)
		return opt_error(r->cmd, "--fdatasync applies to writes");
	rc = check_targets(r, !rd, dd_need);
	if (rc)
		return rc;
	for (i = 0; i < (int)r->nt; i++) {
		struct target *t = &r->t[i];

		if (!t->info.is_dir && t->info.size < r->dd.bs * r->dd.count)
			warn_msg("'%s' has %" PRIu64 " bytes, less than --bs x --count: dd "
				 "stops at its end", t->path, t->info.size);
	}
	run_all(r, 1);
	return finish_all(r);
}

/* --- hdparm ------------------------------------------------------------------ */

static uint64_t hdparm_need(struct run *r, struct target *t)
{
	return t->info.is_dir ? iotap_workload_hdparm_file_bytes(&r->hp) : 0;
}

static int run_hdparm(struct run *r, int argc, char **argv)
{
	int idx, rc, i;
	const char *arg;

	memset(&r->hp, 0, sizeof(r->hp));
	r->hp.file_bytes = 1ull << 30;
	while ((rc = opt_next(r->cmd, argc, argv, &idx, &arg)) == 1) {
		switch (idx) {
		case H_CACHED: r->hp.flags |= IOTAP_HDPARM_CACHED; break;
		case H_DEVICE: r->hp.flags |= IOTAP_HDPARM_DEVICE; break;
		case H_DIRECT: r->hp.flags |= IOTAP_HDPARM_DIRECT; break;
		case H_SIZE:
			if (iotap_size_parse(arg, 1, &r->hp.file_bytes) || r->hp.file_bytes < (4ull << 20) ||
			    r->hp.file_bytes % (2ull << 20))
				return opt_error(r->cmd, "bad size '%s' (2 MiB steps, 4M or more)",
						 arg);
			break;
		case H_QUIET: r->quiet = 1; break;
		case H_TRACE: r->trace = arg; break;
		case H_FORCE: r->force = 1; break;
		case H_TRACE_MODE:
		case H_TRACE_GROUP:
			if (run_perm_opt(r, idx == H_TRACE_GROUP, arg))
				return 2;
			break;
		}
	}
	rc = take_targets(r, rc, argc, argv);
	if (rc >= 0)
		return rc;
	if (!(r->hp.flags & (IOTAP_HDPARM_CACHED | IOTAP_HDPARM_DEVICE)))
		r->hp.flags |= IOTAP_HDPARM_CACHED | IOTAP_HDPARM_DEVICE;
	rc = check_targets(r, 0, hdparm_need);
	if (rc)
		return rc;
	for (i = 0; i < (int)r->nt; i++) {
		struct target *t = &r->t[i];

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
	run_all(r, 0);
	return finish_all(r);
}

/* --- entry ------------------------------------------------------------------- */

int cmd_run(int argc, char **argv)
{
	struct run r;
	int rc;

	if (argc < 2) {
		run_usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		run_usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "dedup"))
		return cmd_run_dedup(argc - 1, argv + 1);
	if (!strcmp(argv[1], "pgsql"))
		return cmd_run_pgsql(argc - 1, argv + 1);
	memset(&r, 0, sizeof(r));
	if (!strcmp(argv[1], "bonnie") || !strcmp(argv[1], "bonnie++")) {
		r.type = WL_BONNIE;
		r.cmd = &bonnie_cmd;
	} else if (!strcmp(argv[1], "iozone")) {
		r.type = WL_IOZONE;
		r.cmd = &iozone_cmd;
	} else if (!strcmp(argv[1], "dd")) {
		r.type = WL_DD;
		r.cmd = &dd_cmd;
	} else if (!strcmp(argv[1], "hdparm")) {
		r.type = WL_HDPARM;
		r.cmd = &hdparm_cmd;
	} else {
		fprintf(stderr, "iotap run: '%s' is not a workload (bonnie, iozone, dd, hdparm, "
				"dedup, pgsql); "
				"see 'iotap run --help'\n", argv[1]);
		return 2;
	}
	r.cmdline = iotap_argv_join("iotap run", argc - 1, argv + 1);
	r.workload = iotap_argv_join(NULL, argc - 1, argv + 1);
	if (!r.cmdline || !r.workload) {
		run_release(&r);
		return 1;
	}
	switch (r.type) {
	case WL_BONNIE: rc = run_bonnie(&r, argc - 1, argv + 1); break;
	case WL_IOZONE: rc = run_iozone(&r, argc - 1, argv + 1); break;
	case WL_DD: rc = run_dd(&r, argc - 1, argv + 1); break;
	default: rc = run_hdparm(&r, argc - 1, argv + 1); break;
	}
	run_release(&r);
	return rc;
}
