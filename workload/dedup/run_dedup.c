// SPDX-License-Identifier: MIT
/*
 * run_dedup.c - iotap run dedup DIR... [--meta-dir DIR] [options]
 *
 * The dedup model's row of the models table (run.h): its options, bound
 * to struct dedup_cli, the checks made before anything is written (bad
 * figures, a missing or read-only directory, too little free space for the
 * store or for the index and maps, an existing trace: exit 2), one run per
 * DIR (cmd_run.c runs them all at once, one thread each, each phase in
 * step), and the report. Ctrl-C stops every run at its next segment; the
 * files are removed and the partial figures printed.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "iotap_base.h"
#include "iotap_dedup.h"
#include "iotap_workload.h"
#include "opt.h"
#include "run.h"

static struct dedup_cli {
	struct iotap_workload_dedup_opts o;
	int streams_set, cont_set, thr_set, expire_set;
	struct iotap_workload_target meta;
} d;

/* One DIR: its own run's name and options, its results. */
struct dedup_res {
	char name[64];
	struct iotap_workload_dedup_opts o;
	struct iotap_workload_dedup_result res;
};

/* "5%", "5" (percent), "0.5%": a fraction */
static int parse_pct(const char *s, double *out)
{
	char *end;
	double v;

	if (!s || !*s)
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || (*end && strcmp(end, "%")) || !isfinite(v) || v < 0 || v > 100)
		return -EINVAL;
	*out = v / 100.0;
	return 0;
}

static int parse_count(const char *s, unsigned int max, unsigned int *out)
{
	uint64_t v;

	if (parse_u64(s, &v) || v > max)
		return -EINVAL;
	*out = (unsigned int)v;
	return 0;
}

static int opt_flavor(const struct opt_cmd *cmd, const struct opt_desc *od, const char *arg)
{
	(void)od;
	if (!strcmp(arg, "msdp"))
		d.o.flavor = IOTAP_DEDUP_MSDP;
	else if (!strcmp(arg, "restic"))
		d.o.flavor = IOTAP_DEDUP_RESTIC;
	else if (!strcmp(arg, "borg"))
		d.o.flavor = IOTAP_DEDUP_BORG;
	else
		return opt_error(cmd, "unknown flavor '%s' (msdp, restic, borg)", arg);
	return 0;
}

static int opt_streams(const struct opt_cmd *cmd, const struct opt_desc *od, const char *arg)
{
	(void)od;
	if (parse_count(arg, 256, &d.o.streams) || !d.o.streams)
		return opt_error(cmd, "bad stream count '%s' (1..256)", arg);
	d.streams_set = 1;
	return 0;
}

static int opt_image(const struct opt_cmd *cmd, const struct opt_desc *od, const char *arg)
{
	(void)od;
	if (iotap_size_parse(arg, 1, &d.o.image_bytes) || !d.o.image_bytes)
		return opt_error(cmd, "bad image size '%s'", arg);
	return 0;
}

static int opt_gens(const struct opt_cmd *cmd, const struct opt_desc *od, const char *arg)
{
	(void)od;
	if (parse_count(arg, 1000, &d.o.generations) || !d.o.generations)
		return opt_error(cmd, "bad generation count '%s' (1..1000)", arg);
	return 0;
}

/* A share in percent into the double d->value; od->err says what is bad. */
static int opt_pct(const struct opt_cmd *cmd, const struct opt_desc *od, const char *arg)
{
	if (parse_pct(arg, od->value))
		return opt_error(cmd, od->err, arg);
	if (od->value == &d.o.compact_threshold)
		d.thr_set = 1;
	return 0;
}

static int opt_segment(const struct opt_cmd *cmd, const struct opt_desc *od, const char *arg)
{
	uint64_t v;

	(void)od;
	if (iotap_size_parse(arg, 1, &v) || v > UINT32_MAX)
		return opt_error(cmd, "bad segment size '%s'", arg);
	d.o.segment_bytes = (uint32_t)v;
	return 0;
}

static int opt_container(const struct opt_cmd *cmd, const struct opt_desc *od, const char *arg)
{
	(void)od;
	if (iotap_size_parse(arg, 1, &d.o.container_bytes))
		return opt_error(cmd, "bad container size '%s'", arg);
	d.cont_set = 1;
	return 0;
}

static int opt_cache(const struct opt_cmd *cmd, const struct opt_desc *od, const char *arg)
{
	(void)od;
	if (iotap_size_parse(arg, 1, &d.o.fp_cache_bytes) || !d.o.fp_cache_bytes)
		return opt_error(cmd, "bad fingerprint cache size '%s'", arg);
	return 0;
}

static int opt_expire(const struct opt_cmd *cmd, const struct opt_desc *od, const char *arg)
{
	(void)od;
	if (parse_count(arg, 1000, &d.o.expire))
		return opt_error(cmd, "bad expiry count '%s'", arg);
	d.expire_set = 1;
	return 0;
}

static int opt_seed(const struct opt_cmd *cmd, const struct opt_desc *od, const char *arg)
{
	(void)od;
	if (parse_u64(arg, &d.o.seed))
		return opt_error(cmd, "bad seed '%s'", arg);
	return 0;
}

static const struct opt_desc dedup_opts[] = {
	OPT_STRING(0, "meta-dir", &d.o.meta_dir, "DIR",
		   "the fingerprint index and the segment maps go here (another\n"
		   "array, as MSDP's guide advises); borg: its client cache\n"
		   "(BORG_CACHE_DIR); default: in DIR"),
	OPT_CALLBACK(0, "flavor", NULL, "NAME",
		     "msdp (NetBackup MSDP: fixed segments, on-disk index; the\n"
		     "default) or restic (restic 0.14: content-defined chunks,\n"
		     "compressed blobs in 16 MiB packs, the index in RAM; 1 stream,\n"
		     "5% prune threshold by default; no --meta-dir) or borg\n"
		     "(borg 1.2: buzhash chunks of ~2.5 MiB, lz4, a log of 500 MiB\n"
		     "segments, index/hints/integrity per commit, the chunk index\n"
		     "in RAM, the cache in --meta-dir; 1 stream, compact's 10%)", opt_flavor),
	OPT_CALLBACK(0, "streams", NULL, "N", "concurrent backup streams, one thread each (default 4)",
		     opt_streams),
	OPT_CALLBACK(0, "image-size", NULL, "SIZE", "one stream's backup image (default 1G)", opt_image),
	OPT_CALLBACK(0, "generations", NULL, "N", "full backups of each stream (default 7)", opt_gens),
	OPT_CALLBACK_ERR(0, "change", &d.o.change, "PCT",
			 "new data in each later generation (default 5%)", opt_pct,
			 "bad change rate '%s' (0..100%%)"),
	OPT_CALLBACK_ERR(0, "dup", &d.o.dup, "PCT",
			 "duplicates inside the first image: extents that repeat\n"
			 "earlier ones (default 10%)", opt_pct, "bad duplicate share '%s' (0..90%%)"),
	OPT_CALLBACK_ERR(0, "compressibility", &d.o.compress, "PCT",
			 "part of the data a compressor removes, 0..95% (default 50%)", opt_pct,
			 "bad compressibility '%s' (0..95%%)"),
	OPT_CALLBACK(0, "segment-size", NULL, "SIZE", "fixed segment size, 4 KiB steps (default 128k)",
		     opt_segment),
	OPT_CALLBACK(0, "container-size", NULL, "SIZE",
		     "container file size (default 64m; restic: pack size, 16m;\n"
		     "borg: max_segment_size, 500m)", opt_container),
	OPT_CALLBACK(0, "fp-cache", NULL, "SIZE",
		     "fingerprint cache, 32 bytes an entry (default: a quarter of\n"
		     "the index, so the index does not fit)", opt_cache),
	OPT_CALLBACK(0, "expire", NULL, "N", "oldest generations expired before compaction (default 1)",
		     opt_expire),
	OPT_CALLBACK_ERR(0, "compact-threshold", &d.o.compact_threshold, "PCT",
			 "rewrite a container once this part of it is dead (default 20%)", opt_pct,
			 "bad compaction threshold '%s'"),
	OPT_CALLBACK(0, "seed", NULL, "N", "content seed (default 1): same seed, same bytes", opt_seed),
	OPT_BOOL(0, "keep", &d.o.keep, "leave the store on disk afterwards"),
	OPT_RUN_QUIET('q', OPT_RUN_QUIET_HELP),
	OPT_RUN_SHARED(OPT_RUN_TRACE_HELP_N, "sync, drop the page cache before each phase (root)",
		       "several DIRs: do not start each phase on all together"),
	OPT_END(),
};

static const struct opt_cmd dedup_cmd = {
	.name = "run dedup",
	.usage = "DIR... [--meta-dir DIR] [options]",
	.summary =
		"A deduplicating backup media server's own I/O (NetBackup MSDP): N\n"
		"streams back up images of fixed segments; each segment is fingerprinted\n"
		"and looked up (fingerprint cache, then a random 4 KiB read of the\n"
		"on-disk index); new segments are appended to container files\n"
		"(fdatasync per container), new index entries written back in batches,\n"
		"a segment map written per image. Then every generation is restored\n"
		"through its containers (read back and checked against its\n"
		"fingerprints), the oldest generations expire and the containers are\n"
		"compacted (read, live segments rewritten, fsync, rename, unlink).\n"
		"The data is generated from the seed and really deduplicates and\n"
		"compresses at the configured ratios. MB = 10^6 bytes.",
	.opts = dedup_opts,
	.footer =
		"examples:\n"
		"  iotap run dedup /mnt/r50/store --meta-dir /mnt/r1/meta --streams 4 \\\n"
		"      --image-size 20G --generations 7 --change 5%\n"
		"  iotap run dedup /mnt/a /mnt/b --image-size 2G --trace d.iotap\n"
		"exit status: 0 ok, 1 a run failed, 2 usage, 130 interrupted (partial results)",
};

static int dedup_setup(struct run *r, int argc, char **argv)
{
	(void)r;
	(void)argc;
	(void)argv;
	iotap_workload_dedup_opts_init(&d.o);
	return 0;
}

static int check_dir(const char *path, struct iotap_workload_target *info)
{
	int ret = iotap_workload_target_check(path, 1, info);

	if (ret == -ENOTDIR)
		return opt_error(&dedup_cmd, "'%s' is not a directory", path);
	if (ret == -EROFS)
		return opt_error(&dedup_cmd, "'%s' is on a read-only filesystem", path);
	if (ret == -EACCES)
		return opt_error(&dedup_cmd, "no permission to write in '%s'", path);
	if (ret)
		return opt_error(&dedup_cmd, "cannot use '%s': %s", path, strerror(-ret));
	return 0;
}

/* Every check before anything is written, once each target has its plan. */
static int check_all(struct run *r)
{
	const struct dedup_res *r0 = r->t[0].res;
	const struct iotap_workload_dedup_plan *p = &r0->res.plan;
	unsigned int i, j;
	struct stat st;
	char path[4200];

	if (run_opts.perm_set && !run_opts.trace)
		return opt_error(&dedup_cmd, "--trace-mode and --trace-group need --trace FILE");
	for (i = 0; i < r->nt; i++) {
		struct run_target *t = &r->t[i];
		const struct dedup_res *res = t->res;

		if (check_dir(t->path, &t->info))
			return 2;
		for (j = 0; j < i; j++)
			if (!strcmp(r->t[j].path, t->path))
				return opt_error(&dedup_cmd, "'%s' is given twice", t->path);
		snprintf(path, sizeof(path), "%s/%s", t->path, res->name);
		if (!lstat(path, &st))
			return opt_error(&dedup_cmd, "'%s' exists", path);
	}
	if (d.o.meta_dir) {
		if (check_dir(d.o.meta_dir, &d.meta))
			return 2;
		for (i = 0; i < r->nt; i++) {
			const struct dedup_res *res = r->t[i].res;

			snprintf(path, sizeof(path), "%s/%s", d.o.meta_dir, res->name);
			if (!lstat(path, &st))
				return opt_error(&dedup_cmd, "'%s' exists", path);
		}
	}
	/* free space: what each filesystem holds at once, targets and meta added up */
	for (i = 0; i < r->nt + 1; i++) {
		const struct iotap_workload_target *fs = i < r->nt ? &r->t[i].info : &d.meta;
		const char *where = i < r->nt ? r->t[i].path : d.o.meta_dir;
		uint64_t sum = 0;

		if (i == r->nt && !d.o.meta_dir)
			break;
		for (j = 0; j < r->nt; j++) {
			if (r->t[j].info.fsid == fs->fsid)
				sum += p->need_data + (d.o.meta_dir ? 0 : p->need_meta);
			if (d.o.meta_dir && d.meta.fsid == fs->fsid)
				sum += p->need_meta;
		}
		if (sum > fs->avail_bytes) {
			fprintf(stderr, "iotap run dedup: '%s' has %.1f MB free; the run needs %.1f MB\n",
				where, fs->avail_bytes / 1e6, sum / 1e6);
			return 2;
		}
	}
	for (i = 0; run_opts.trace && i < r->nt; i++) {
		struct out_rules rules = { .force = run_opts.force, .trace = 1 };

		r->t[i].trace = run_trace_name(run_opts.trace, i, r->nt);
		if (!r->t[i].trace) {
			error_msg("out of memory");
			return 1;
		}
		if (out_check(r->t[i].trace, &rules) < 0)
			return 1;
	}
	if (run_opts.drop_caches && geteuid() != 0)
		return opt_error(&dedup_cmd, "--drop-caches needs root");
	if (run_opts.drop_caches && run_drop_check("run dedup"))
		r->drop_warned = 1;
	return 0;
}

static int dedup_check(struct run *r)
{
	const char *why;
	unsigned int i;

	if (!r->nt)
		return opt_error(&dedup_cmd, "DIR is required");
	if (!d.expire_set && d.o.generations == 1)
		d.o.expire = 0;
	if (d.o.flavor == IOTAP_DEDUP_RESTIC) {
		/* restic 0.14's own defaults: one backup process, 16 MiB packs, prune's 5% */
		if (!d.streams_set)
			d.o.streams = 1;
		if (!d.cont_set)
			d.o.container_bytes = 16ull << 20;
		if (!d.thr_set)
			d.o.compact_threshold = 0.05;
	}
	if (d.o.flavor == IOTAP_DEDUP_BORG) {
		/* borg 1.2's: one process per repository, 500 MiB segments, compact's 10% */
		if (!d.streams_set)
			d.o.streams = 1;
		if (!d.cont_set)
			d.o.container_bytes = 500ull << 20;
		if (!d.thr_set)
			d.o.compact_threshold = 0.10;
	}
	/* bad values first (exit 2 naming them), only then free space */
	if (iotap_workload_dedup_check(&d.o, &why))
		return opt_error(&dedup_cmd, "%s", why);
	/*
	 * The plan walks every segment of every image: first make sure the
	 * store could fit at all (what it stores, less the rounding of extents).
	 */
	for (i = 0; i < r->nt; i++) {
		double need = (double)d.o.streams * (double)d.o.image_bytes *
			      ((1 - d.o.dup) + d.o.change * (d.o.generations - 1));

		if (check_dir(r->t[i].path, &r->t[i].info))
			return 2;
		if (need * 0.9 > (double)r->t[i].info.avail_bytes) {
			fprintf(stderr, "iotap run dedup: '%s' has %.1f MB free; the run needs "
					"about %.1f MB\n", r->t[i].path,
				r->t[i].info.avail_bytes / 1e6, need / 1e6);
			return 2;
		}
	}
	for (i = 0; i < r->nt; i++) {
		struct run_target *t = &r->t[i];
		struct dedup_res *res = t->res;

		res->o = d.o;
		/* on an iotap mount, its capture gets the model's phases as marks */
		res->o.mark_capture = t->info.is_fuse;
		if (r->nt == 1)
			snprintf(res->name, sizeof(res->name), "iotap-dedup.%u", (unsigned int)getpid());
		else
			snprintf(res->name, sizeof(res->name), "iotap-dedup.%u.%u",
				 (unsigned int)getpid(), i + 1);
		res->o.name = res->name;
		if (iotap_workload_dedup_plan(&res->o, &res->res.plan, &why))
			return opt_error(&dedup_cmd, "%s", why);
	}
	return check_all(r);
}

static int dedup_run(struct run *r, struct run_target *t)
{
	struct dedup_res *res = t->res;

	(void)r;
	return iotap_workload_dedup_run(t->ctx, &res->o, &res->res);
}

static void dedup_print(struct run *r, struct run_target *t)
{
	const struct dedup_res *res = t->res;

	run_label(r, t, stdout);
	if (res->res.gen)
		iotap_workload_dedup_print(stdout, t->path, &res->o, &res->res);
}

static void dedup_release(struct run_target *t)
{
	struct dedup_res *res = t->res;

	iotap_workload_dedup_result_release(&res->res);
}

const struct run_model dedup_model = {
	.name = "dedup",
	.line = "a deduplicating backup media server (NetBackup MSDP)",
	.cmd = &dedup_cmd,
	.res_size = sizeof(struct dedup_res),
	.concurrent = 1,
	.setup = dedup_setup,
	.check = dedup_check,
	.run = dedup_run,
	.print = dedup_print,
	.release = dedup_release,
};
