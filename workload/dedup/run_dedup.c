// SPDX-License-Identifier: MIT
/*
 * run_dedup.c - iotap run dedup DIR... [--meta-dir DIR] [options]
 *
 * The CLI of the dedup model (workload/dedup.c): its option table (so
 * `iotap run dedup --help` is generated), the checks made before anything
 * is written (bad figures, a missing or read-only directory, too little
 * free space for the store or for the index and maps, an existing trace:
 * exit 2), one run per DIR, all at once, one thread each, and the report.
 * Ctrl-C stops every run at its next segment; the files are removed and
 * the partial figures printed. Exit status: 0, 1 (a run failed), 2
 * (usage), 130 (interrupted).
 *
 * cmd_run.c dispatches `iotap run dedup` here. Signals, --drop-caches,
 * trace names and progress lines are cmd_run.c's (run.h); the target
 * checks below still mirror its check_targets().
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "iotap_base.h"
#include "iotap_trace.h"
#include "iotap_dedup.h"
#include "iotap_workload.h"
#include "opt.h"
#include "run.h"
#include "traceio.h"

enum {
	O_META, O_FLAVOR, O_STREAMS, O_IMAGE, O_GENS, O_CHANGE, O_DUP, O_COMPRESS, O_SEGMENT,
	O_CONTAINER, O_CACHE, O_EXPIRE, O_THRESHOLD, O_SEED, O_KEEP, O_QUIET, O_TRACE, O_FORCE,
	O_DROP, O_NOLOCK, O_TRACE_MODE, O_TRACE_GROUP,
};

static const struct opt_desc dedup_opts[] = {
	[O_META] = { "meta-dir", 0, "DIR",
		     "the fingerprint index and the segment maps go here (another\n"
		     "array, as MSDP's guide advises); borg: its client cache\n"
		     "(BORG_CACHE_DIR); default: in DIR" },
	[O_FLAVOR] = { "flavor", 0, "NAME",
		       "msdp (NetBackup MSDP: fixed segments, on-disk index; the\n"
		       "default) or restic (restic 0.14: content-defined chunks,\n"
		       "compressed blobs in 16 MiB packs, the index in RAM; 1 stream,\n"
		       "5% prune threshold by default; no --meta-dir) or borg\n"
		       "(borg 1.2: buzhash chunks of ~2.5 MiB, lz4, a log of 500 MiB\n"
		       "segments, index/hints/integrity per commit, the chunk index\n"
		       "in RAM, the cache in --meta-dir; 1 stream, compact's 10%)" },
	[O_STREAMS] = { "streams", 0, "N", "concurrent backup streams, one thread each (default 4)" },
	[O_IMAGE] = { "image-size", 0, "SIZE", "one stream's backup image (default 1G)" },
	[O_GENS] = { "generations", 0, "N", "full backups of each stream (default 7)" },
	[O_CHANGE] = { "change", 0, "PCT", "new data in each later generation (default 5%)" },
	[O_DUP] = { "dup", 0, "PCT",
		    "duplicates inside the first image: extents that repeat\n"
		    "earlier ones (default 10%)" },
	[O_COMPRESS] = { "compressibility", 0, "PCT",
			 "part of the data a compressor removes, 0..95% (default 50%)" },
	[O_SEGMENT] = { "segment-size", 0, "SIZE", "fixed segment size, 4 KiB steps (default 128k)" },
	[O_CONTAINER] = { "container-size", 0, "SIZE",
			  "container file size (default 64m; restic: pack size, 16m;\n"
			  "borg: max_segment_size, 500m)" },
	[O_CACHE] = { "fp-cache", 0, "SIZE",
		      "fingerprint cache, 32 bytes an entry (default: a quarter of\n"
		      "the index, so the index does not fit)" },
	[O_EXPIRE] = { "expire", 0, "N", "oldest generations expired before compaction (default 1)" },
	[O_THRESHOLD] = { "compact-threshold", 0, "PCT",
			  "rewrite a container once this part of it is dead (default 20%)" },
	[O_SEED] = { "seed", 0, "N", "content seed (default 1): same seed, same bytes" },
	[O_KEEP] = { "keep", 0, NULL, "leave the store on disk afterwards" },
	[O_QUIET] = OPT_RUN_QUIET('q', OPT_RUN_QUIET_HELP),
	[O_TRACE] = OPT_RUN_TRACE(OPT_RUN_TRACE_HELP_N),
	[O_FORCE] = OPT_RUN_FORCE,
	[O_DROP] = OPT_RUN_DROP("sync, drop the page cache before each phase (root)"),
	[O_NOLOCK] = OPT_RUN_NOLOCK("several DIRs: do not start each phase on all together"),
	[O_TRACE_MODE] = OPT_RUN_TRACE_MODE,
	[O_TRACE_GROUP] = OPT_RUN_TRACE_GROUP,
	{ NULL },
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

struct dedup_target {
	const char *path;
	char *trace;
	char name[64];
	struct iotap_workload_target info;
	struct iotap_workload_ctx *ctx;
	struct iotap_workload_dedup_opts o;
	struct iotap_workload_dedup_result res;
	int ret, open_ret;
	struct run_progress prog;	/* its progress lines (cmd_run.c's) */
	pthread_t thread;
};

struct dedup_run {
	struct dedup_target *t;
	unsigned int nt;
	struct iotap_workload_lockstep *lockstep;	/* several DIRs: phases in step */
	int drop_warned;		/* the page cache cannot be dropped: said */
	char *cmdline, *workload;
	struct iotap_workload_dedup_opts o;
	struct iotap_workload_target meta;
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

/* Every check before anything is written. */
static int check_all(struct dedup_run *r)
{
	const struct iotap_workload_dedup_plan *p = &r->t[0].res.plan;
	unsigned int i, j;
	struct stat st;
	char path[4200];

	if (run_opts.perm_set && !run_opts.trace)
		return opt_error(&dedup_cmd, "--trace-mode and --trace-group need --trace FILE");
	for (i = 0; i < r->nt; i++) {
		struct dedup_target *t = &r->t[i];

		if (check_dir(t->path, &t->info))
			return 2;
		for (j = 0; j < i; j++)
			if (!strcmp(r->t[j].path, t->path))
				return opt_error(&dedup_cmd, "'%s' is given twice", t->path);
		snprintf(path, sizeof(path), "%s/%s", t->path, t->name);
		if (!lstat(path, &st))
			return opt_error(&dedup_cmd, "'%s' exists", path);
	}
	if (r->o.meta_dir) {
		if (check_dir(r->o.meta_dir, &r->meta))
			return 2;
		for (i = 0; i < r->nt; i++) {
			snprintf(path, sizeof(path), "%s/%s", r->o.meta_dir, r->t[i].name);
			if (!lstat(path, &st))
				return opt_error(&dedup_cmd, "'%s' exists", path);
		}
	}
	/* free space: what each filesystem holds at once, targets and meta added up */
	for (i = 0; i < r->nt + 1; i++) {
		const struct iotap_workload_target *fs = i < r->nt ? &r->t[i].info : &r->meta;
		const char *where = i < r->nt ? r->t[i].path : r->o.meta_dir;
		uint64_t sum = 0;

		if (i == r->nt && !r->o.meta_dir)
			break;
		for (j = 0; j < r->nt; j++) {
			if (r->t[j].info.fsid == fs->fsid)
				sum += p->need_data + (r->o.meta_dir ? 0 : p->need_meta);
			if (r->o.meta_dir && r->meta.fsid == fs->fsid)
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
			die_msg("out of memory");
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

static void *run_thread(void *arg)
{
	struct dedup_target *t = arg;

	t->ret = iotap_workload_dedup_run(t->ctx, &t->o, &t->res);
	iotap_workload_ctx_leave(t->ctx);
	return NULL;
}

static int run_all(struct dedup_run *r)
{
	unsigned int i;
	int rc = 0;

	run_install_signals();
	/* bonnie++ -p/-y: each phase starts on every DIR together */
	if (r->nt > 1 && !run_opts.no_lockstep && iotap_workload_lockstep_new(&r->lockstep, r->nt))
		r->lockstep = NULL;
	for (i = 0; i < r->nt; i++) {
		struct dedup_target *t = &r->t[i];
		struct iotap_workload_env env = {
			.target = t->path,
			.trace_path = t->trace,
			.cmdline = r->cmdline,
			.workload = r->workload,
			.flags = (run_opts.force ? IOTAP_WORKLOAD_TRACE_FORCE : 0) |
				 (run_opts.drop_caches ? IOTAP_WORKLOAD_DROP_CACHES : 0),
			.progress = run_opts.quiet ? NULL : run_progress,
			.progress_arg = &t->prog,
			.lockstep = r->lockstep,
		};

		t->open_ret = iotap_workload_ctx_open(&t->ctx, &env);
		if (t->open_ret) {
			iotap_workload_lockstep_leave(r->lockstep);
			continue;
		}
		if (pthread_create(&t->thread, NULL, run_thread, t)) {
			t->ret = -EAGAIN;
			iotap_workload_ctx_leave(t->ctx);
			continue;
		}
		t->open_ret = 1;	/* joined below */
	}
	for (i = 0; i < r->nt; i++) {
		struct dedup_target *t = &r->t[i];

		if (t->open_ret == 1) {
			pthread_join(t->thread, NULL);
			t->open_ret = 0;
		}
	}
	iotap_workload_lockstep_free(r->lockstep);
	r->lockstep = NULL;
	for (i = 0; i < r->nt; i++) {
		struct dedup_target *t = &r->t[i];
		int trc = 0;

		if (t->open_ret) {
			die_msg("cannot start 'run dedup' on '%s'%s%s%s: %s", t->path,
				t->trace ? " (trace '" : "", t->trace ? t->trace : "",
				t->trace ? "')" : "", strerror(-t->open_ret));
			rc = rc ? rc : 1;
			continue;
		}
		if (r->nt > 1)
			printf("%s==> %s <==\n", i ? "\n" : "", t->path);
		if (t->res.gen)
			iotap_workload_dedup_print(stdout, t->path, &t->o, &t->res);
		fflush(stdout);
		if (t->ret == -EINTR) {
			trc = 130;
		} else if (t->ret) {
			const char *what = iotap_workload_ctx_error(t->ctx);

			die_msg("run dedup on '%s': %s%s%s", t->path, what, *what ? ": " : "",
				strerror(-t->ret));
			trc = 1;
		}
		if (run_opts.drop_caches && !r->drop_warned && iotap_workload_ctx_drop_error(t->ctx)) {
			run_drop_warning("run dedup", iotap_workload_ctx_drop_error(t->ctx));
			r->drop_warned = 1;
		}
		if (t->trace && iotap_workload_ctx_lost(t->ctx))
			warn_msg("trace '%s': %" PRIu64 " records dropped (the trace writer fell "
				 "behind; LOST records say where)", t->trace,
				 iotap_workload_ctx_lost(t->ctx));
		iotap_workload_dedup_result_release(&t->res);
		if (trc && (!rc || trc == 130))
			rc = trc;
	}
	if (r->nt > 1) {
		struct iotap_workload_ctx **ctx = calloc(r->nt, sizeof(*ctx));
		const char **paths = calloc(r->nt, sizeof(*paths));

		for (i = 0; ctx && paths && i < r->nt; i++) {
			ctx[i] = r->t[i].open_ret ? NULL : r->t[i].ctx;
			paths[i] = r->t[i].path;
		}
		if (ctx && paths)
			run_print_overlap(stdout, ctx, paths, r->nt, !run_opts.no_lockstep);
		fflush(stdout);
		free(ctx);
		free(paths);
	}
	for (i = 0; i < r->nt; i++) {
		struct dedup_target *t = &r->t[i];

		if (t->open_ret)
			continue;
		if (iotap_workload_ctx_close(t->ctx)) {
			die_msg("cannot write trace '%s'", t->trace);
			rc = rc ? rc : 1;
		} else if (t->trace && run_opts.perm_set && trace_perm_set(t->trace, &run_opts.perm)) {
			/* the trace this run created, complete: shared as asked */
			rc = rc ? rc : 1;
		}
		t->ctx = NULL;
	}
	if (rc == 130)
		fprintf(stderr, "iotap run: interrupted: results above are partial; files removed%s\n",
			run_opts.trace ? ", traces closed" : "");
	return rc;
}

static int add_target(struct dedup_run *r, const char *path)
{
	struct dedup_target *n = realloc(r->t, (r->nt + 1) * sizeof(*n));

	if (!n) {
		die_msg("out of memory");
		return 1;
	}
	r->t = n;
	memset(&n[r->nt], 0, sizeof(*n));
	n[r->nt].prog.path = path;
	n[r->nt++].path = path;
	return 0;
}

static int parse(struct dedup_run *r, int argc, char **argv)
{
	int idx, rc, i, expire_set = 0, streams_set = 0, cont_set = 0, thr_set = 0;
	const char *arg;
	uint64_t v;

	iotap_workload_dedup_opts_init(&r->o);
	while ((rc = opt_next(&dedup_cmd, argc, argv, &idx, &arg)) == 1) {
		switch (idx) {
		case O_META: r->o.meta_dir = arg; break;
		case O_FLAVOR:
			if (!strcmp(arg, "msdp"))
				r->o.flavor = IOTAP_DEDUP_MSDP;
			else if (!strcmp(arg, "restic"))
				r->o.flavor = IOTAP_DEDUP_RESTIC;
			else if (!strcmp(arg, "borg"))
				r->o.flavor = IOTAP_DEDUP_BORG;
			else
				return opt_error(&dedup_cmd, "unknown flavor '%s' (msdp, restic, borg)",
						 arg);
			break;
		case O_STREAMS:
			if (parse_count(arg, 256, &r->o.streams) || !r->o.streams)
				return opt_error(&dedup_cmd, "bad stream count '%s' (1..256)", arg);
			streams_set = 1;
			break;
		case O_IMAGE:
			if (iotap_size_parse(arg, 1, &r->o.image_bytes) || !r->o.image_bytes)
				return opt_error(&dedup_cmd, "bad image size '%s'", arg);
			break;
		case O_GENS:
			if (parse_count(arg, 1000, &r->o.generations) || !r->o.generations)
				return opt_error(&dedup_cmd, "bad generation count '%s' (1..1000)",
						 arg);
			break;
		case O_CHANGE:
			if (parse_pct(arg, &r->o.change))
				return opt_error(&dedup_cmd, "bad change rate '%s' (0..100%%)", arg);
			break;
		case O_DUP:
			if (parse_pct(arg, &r->o.dup))
				return opt_error(&dedup_cmd, "bad duplicate share '%s' (0..90%%)", arg);
			break;
		case O_COMPRESS:
			if (parse_pct(arg, &r->o.compress))
				return opt_error(&dedup_cmd, "bad compressibility '%s' (0..95%%)", arg);
			break;
		case O_SEGMENT:
			if (iotap_size_parse(arg, 1, &v) || v > UINT32_MAX)
				return opt_error(&dedup_cmd, "bad segment size '%s'", arg);
			r->o.segment_bytes = (uint32_t)v;
			break;
		case O_CONTAINER:
			if (iotap_size_parse(arg, 1, &r->o.container_bytes))
				return opt_error(&dedup_cmd, "bad container size '%s'", arg);
			cont_set = 1;
			break;
		case O_CACHE:
			if (iotap_size_parse(arg, 1, &r->o.fp_cache_bytes) || !r->o.fp_cache_bytes)
				return opt_error(&dedup_cmd, "bad fingerprint cache size '%s'", arg);
			break;
		case O_EXPIRE:
			if (parse_count(arg, 1000, &r->o.expire))
				return opt_error(&dedup_cmd, "bad expiry count '%s'", arg);
			expire_set = 1;
			break;
		case O_THRESHOLD:
			if (parse_pct(arg, &r->o.compact_threshold))
				return opt_error(&dedup_cmd, "bad compaction threshold '%s'", arg);
			thr_set = 1;
			break;
		case O_SEED:
			if (parse_u64(arg, &r->o.seed))
				return opt_error(&dedup_cmd, "bad seed '%s'", arg);
			break;
		case O_KEEP: r->o.keep = 1; break;
		}
	}
	if (rc == 2)
		return 0;
	if (rc < 0)
		return 2;
	for (i = optind; i < argc; i++)
		if (add_target(r, argv[i]))
			return 1;
	if (!r->nt)
		return opt_error(&dedup_cmd, "DIR is required");
	if (!expire_set && r->o.generations == 1)
		r->o.expire = 0;
	if (r->o.flavor == IOTAP_DEDUP_RESTIC) {
		/* restic 0.14's own defaults: one backup process, 16 MiB packs, prune's 5% */
		if (!streams_set)
			r->o.streams = 1;
		if (!cont_set)
			r->o.container_bytes = 16ull << 20;
		if (!thr_set)
			r->o.compact_threshold = 0.05;
	}
	if (r->o.flavor == IOTAP_DEDUP_BORG) {
		/* borg 1.2's: one process per repository, 500 MiB segments, compact's 10% */
		if (!streams_set)
			r->o.streams = 1;
		if (!cont_set)
			r->o.container_bytes = 500ull << 20;
		if (!thr_set)
			r->o.compact_threshold = 0.10;
	}
	return -1;
}

static int cmd_run_dedup(int argc, char **argv)
{
	struct dedup_run r;
	const char *why;
	unsigned int i;
	int rc;

	memset(&r, 0, sizeof(r));
	rc = parse(&r, argc, argv);
	if (rc >= 0)
		goto out;
	rc = 2;
	/* bad values first (exit 2 naming them), only then free space */
	if (iotap_workload_dedup_check(&r.o, &why)) {
		opt_error(&dedup_cmd, "%s", why);
		goto out;
	}
	/*
	 * The plan walks every segment of every image: first make sure the
	 * store could fit at all (what it stores, less the rounding of extents).
	 */
	for (i = 0; i < r.nt; i++) {
		double need = (double)r.o.streams * (double)r.o.image_bytes *
			      ((1 - r.o.dup) + r.o.change * (r.o.generations - 1));

		if (check_dir(r.t[i].path, &r.t[i].info))
			goto out;
		if (need * 0.9 > (double)r.t[i].info.avail_bytes) {
			fprintf(stderr, "iotap run dedup: '%s' has %.1f MB free; the run needs "
					"about %.1f MB\n", r.t[i].path,
				r.t[i].info.avail_bytes / 1e6, need / 1e6);
			goto out;
		}
	}
	for (i = 0; i < r.nt; i++) {
		struct dedup_target *t = &r.t[i];

		t->o = r.o;
		/* on an iotap mount, its capture gets the model's phases as marks */
		t->o.mark_capture = r.t[i].info.is_fuse;
		if (r.nt == 1)
			snprintf(t->name, sizeof(t->name), "iotap-dedup.%u", (unsigned int)getpid());
		else
			snprintf(t->name, sizeof(t->name), "iotap-dedup.%u.%u",
				 (unsigned int)getpid(), i + 1);
		t->o.name = t->name;
		if (iotap_workload_dedup_plan(&t->o, &t->res.plan, &why)) {
			opt_error(&dedup_cmd, "%s", why);
			goto out;
		}
	}
	rc = check_all(&r);
	if (rc)
		goto out;
	r.cmdline = iotap_argv_join("iotap run", argc, argv);
	r.workload = iotap_argv_join(NULL, argc, argv);
	if (!r.cmdline || !r.workload) {
		rc = 1;
		goto out;
	}
	rc = run_all(&r);
out:
	for (i = 0; i < r.nt; i++)
		free(r.t[i].trace);
	free(r.t);
	free(r.cmdline);
	free(r.workload);
	return rc;
}

const struct run_model dedup_model = {
	.name = "dedup",
	.line = "a deduplicating backup media server (NetBackup MSDP)",
	.cmd = &dedup_cmd,
	.main = cmd_run_dedup,
};
