// SPDX-License-Identifier: MIT
/*
 * cmd_replay.c - iotap replay TRACE DIR [options]
 *
 *   iotap replay TRACE DIR [--prepare | --prepare-only [--clobber] | --check | --force]
 *                [--trace T2 [--overwrite]] [--timing recorded|asap|scale=X]
 *                [--data random|zero|compressible=R|dedup=R] [--map OLD=NEW]...
 *                [--phase NAME[#k]] [--skip OP,OP...] [--processes] [--no-fsuid]
 *                [--json] [--strict] [-q]
 *
 * Re-issues a captured trace's operations against DIR (workload/replay/,
 * iotap_replay.h): rebuilds the initial file state the trace implies
 * (--prepare; it refuses, listing them, to remove or change what DIR
 * holds unless --clobber), refuses a tree that does not hold it (listing
 * what is missing or in the way) unless --force, then replays with one thread per
 * recorded thread, cross-thread order kept, on the recorded timing or as
 * fast as possible, and writes its own trace for `iotap compare`. The
 * summary goes to stdout (--json: the summary as JSON, the text on
 * stderr), progress to stderr. Exit status: 0 (also with results unlike the capture's, which
 * the summary counts; --strict makes them 1), 1 runtime error or a target
 * that does not match, 2 usage, 130 interrupted.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "cmds.h"
#include "iotap_base.h"
#include "iotap_replay.h"
#include "iotap_trace.h"
#include "opt.h"
#include "traceio.h"

#define CHECK_LINES	20

#define MAPS_MAX	16

/* What the options set: the table below binds each to its field. */
static struct replay_args {
	struct iotap_replay_opts o;
	struct iotap_trace_perm perm;	/* --trace-mode, --trace-group (mode 0: neither) */
	struct iotap_replay_map maps[MAPS_MAX];
	unsigned int nmaps;
	int prepare, prepare_only, check_only, json, strict;
} a;
static int quiet;

static int timing_opt(const struct opt_cmd *cmd, const struct opt_desc *d, const char *arg);
static int data_opt(const struct opt_cmd *cmd, const struct opt_desc *d, const char *arg);
static int map_opt(const struct opt_cmd *cmd, const struct opt_desc *d, const char *arg);
static int skip_opt(const struct opt_cmd *cmd, const struct opt_desc *d, const char *arg);

static const struct opt_desc replay_opts[] = {
	OPT_STRING('t', "trace", &a.o.out_trace, "T2",
		   "write the replay's own trace (source 'replay', with the\n"
		   "capture's phase markers) for `iotap compare TRACE T2`"),
	OPT_BIT(0, "overwrite", &a.o.flags, IOTAP_REPLAY_TRACE_FORCE, "overwrite T2 if it exists"),
	OPT_BOOL('p', "prepare", &a.prepare,
		 "build the initial state in DIR first (directories, files of\n"
		 "their first-seen size, symlinks), then replay; refuses a DIR\n"
		 "holding anything it would remove or change (see --clobber)"),
	OPT_BOOL(0, "prepare-only", &a.prepare_only, "build the initial state and stop"),
	OPT_BIT(0, "clobber", &a.o.flags, IOTAP_REPLAY_CLOBBER,
		"let --prepare remove what is in the way (names the capture\n"
		"creates or did not find, entries of another type) and cut or\n"
		"extend files to their recorded size; each is listed"),
	OPT_BOOL(0, "check", &a.check_only, "only check that DIR holds the initial state"),
	OPT_BIT('f', "force", &a.o.flags, IOTAP_REPLAY_FORCE,
		"replay even if DIR does not hold the initial state"),
	OPT_CALLBACK_ERR(0, "timing", &a.o, "MODE",
			 "recorded: each op at its recorded time, or as soon as the ops\n"
			 "it waits for are done (default; the lag is reported);\n"
			 "asap: as fast as the dependencies allow; scale=X: X times\n"
			 "as fast as recorded", timing_opt,
			 "--timing wants recorded, asap or scale=X (X > 0), not '%s'"),
	OPT_CALLBACK_ERR(0, "data", &a.o, "KIND",
			 "content of written data: random (default; incompressible,\n"
			 "no two 4 KiB blocks alike), zero, compressible=R (about R:1),\n"
			 "dedup=R (one block in R unique)", data_opt,
			 "--data wants random, zero, compressible=R or dedup=R (R >= 1), not '%s'"),
	OPT_CALLBACK('m', "map", &a, "OLD=NEW",
		     "replay the subtree OLD (a path under the captured directory or\n"
		     "mount point, or relative to it) into directory NEW; repeatable", map_opt),
	OPT_STRING(0, "phase", &a.o.phase, "NAME",
		   "replay only phase NAME (NAME#2: its second occurrence);\n"
		   "the initial state is the tree at its start"),
	OPT_CALLBACK_ERR(0, "skip", &a.o.skip_ops, "OP,OP",
			 "do not replay these op types (e.g. lookup,getattr: the kernel's\n"
			 "own path walks and attribute checks in the capture)", skip_opt,
			 "--skip wants op names (read, getattr, lookup...), comma-separated, "
			 "not '%s'"),
	OPT_BIT(0, "processes", &a.o.flags, IOTAP_REPLAY_PROCESSES,
		"one replay process per recorded process (default: threads)"),
	OPT_BIT(0, "no-fsuid", &a.o.flags, IOTAP_REPLAY_NO_FSUID,
		"as root, do not take each op's recorded fsuid/fsgid"),
	OPT_BOOL(0, "json", &a.json, "print the summary as JSON on stdout"),
	OPT_BOOL(0, "strict", &a.strict, "exit 1 if any result differs from the capture's"),
	OPT_BOOL('q', "quiet", &quiet, "no progress on stderr"),
	OPT_TRACE_MODE(&a.perm, "T2"),
	OPT_TRACE_GROUP(&a.perm),
	OPT_END(),
};

static const struct opt_cmd replay_cmd = {
	.name = "replay",
	.usage = "TRACE DIR [options]",
	.summary =
		"Re-issue the operations of TRACE against directory DIR: each recorded\n"
		"thread's ops in its order, on a replay thread of its own (threads that never\n"
		"overlapped share one); an op waits for the ops of other threads\n"
		"it depended on in the capture (same file or directory, completed before it\n"
		"started), so a replay does not fail where the capture succeeded. Every op\n"
		"type is replayed with its recorded flags (O_DIRECT, O_SYNC, datasync), sizes\n"
		"and offsets; LOOKUP and GETATTR are stat(2) calls, FLUSH is close(dup(fd)),\n"
		"FORGET and ops the capture daemon answered itself are passed on as nothing.\n"
		"Results unlike the recorded ones are counted per op type. DIR must hold the\n"
		"initial state the trace implies (--prepare builds it, with synthetic data).",
	.opts = replay_opts,
	.footer =
		"examples:\n"
		"  iotap replay pg.iotap /mnt/candidate --prepare --trace r1.iotap\n"
		"  iotap replay pg.iotap /mnt/candidate --timing asap\n"
		"  iotap replay pg.iotap /mnt/cand --map /srv/pgdata/pg_wal=/mnt/wal --prepare\n"
		"  iotap replay pg.iotap /mnt/cand --phase checkpoint --skip getattr,lookup\n"
		"  iotap compare pg.iotap r1.iotap",
};

static int tty;

static void on_signal(int sig)
{
	(void)sig;
	iotap_replay_interrupt();
}

static void progress(void *arg, const struct iotap_replay_progress *p)
{
	static double last;
	double pct = p->ops_total ? 100.0 * (double)p->ops_done / (double)p->ops_total : 0;

	(void)arg;
	if (tty) {
		fprintf(stderr, "\rreplay: %5.1f%% %" PRIu64 "/%" PRIu64 " ops, %.0f s, "
			"lag %.1f ms, %" PRIu64 " differences ", pct, p->ops_done, p->ops_total,
			p->elapsed_s, p->lag_ms, p->differences);
	} else if (p->elapsed_s - last >= 10) {
		last = p->elapsed_s;
		fprintf(stderr, "iotap replay: %.0f%% (%" PRIu64 " of %" PRIu64 " ops), %.0f s, "
			"lag %.1f ms, %" PRIu64 " differences\n", pct, p->ops_done, p->ops_total,
			p->elapsed_s, p->lag_ms, p->differences);
	}
	fflush(stderr);
}

static int parse_timing(const char *s, enum iotap_replay_timing *t, double *scale)
{
	char *end;

	if (!strcmp(s, "recorded")) {
		*t = IOTAP_REPLAY_RECORDED;
		return 0;
	}
	if (!strcmp(s, "asap")) {
		*t = IOTAP_REPLAY_ASAP;
		return 0;
	}
	if (!strncmp(s, "scale=", 6)) {
		*scale = strtod(s + 6, &end);
		if (end != s + 6 && !*end && *scale > 0 && isfinite(*scale)) {
			*t = IOTAP_REPLAY_SCALE;
			return 0;
		}
	}
	return -EINVAL;
}

static int parse_data(const char *s, enum iotap_replay_data *d, double *ratio)
{
	const char *eq = strchr(s, '=');
	char *end;

	*ratio = 1;
	if (!strcmp(s, "random")) {
		*d = IOTAP_REPLAY_DATA_RANDOM;
		return 0;
	}
	if (!strcmp(s, "zero")) {
		*d = IOTAP_REPLAY_DATA_ZERO;
		return 0;
	}
	if (!eq)
		return -EINVAL;
	if (!strncmp(s, "compressible=", 13))
		*d = IOTAP_REPLAY_DATA_COMPRESSIBLE;
	else if (!strncmp(s, "dedup=", 6))
		*d = IOTAP_REPLAY_DATA_DEDUP;
	else
		return -EINVAL;
	*ratio = strtod(eq + 1, &end);
	if (end == eq + 1 || *end || !(*ratio >= 1) || !isfinite(*ratio))
		return -EINVAL;
	return 0;
}

static int parse_skip(const char *s, uint64_t *mask)
{
	char buf[64];

	while (*s) {
		size_t n = strcspn(s, ",");
		int op;

		if (!n || n >= sizeof(buf))
			return -EINVAL;
		memcpy(buf, s, n);
		buf[n] = '\0';
		op = iotap_trace_op_from_name(buf);
		if (op < 0)
			return -EINVAL;
		*mask |= 1ull << op;
		s += n;
		if (*s == ',')
			s++;
	}
	return 0;
}

static int timing_opt(const struct opt_cmd *cmd, const struct opt_desc *d, const char *arg)
{
	struct iotap_replay_opts *o = d->value;

	return parse_timing(arg, &o->timing, &o->scale) ? opt_error(cmd, d->err, arg) : 0;
}

static int data_opt(const struct opt_cmd *cmd, const struct opt_desc *d, const char *arg)
{
	struct iotap_replay_opts *o = d->value;

	return parse_data(arg, &o->data, &o->data_ratio) ? opt_error(cmd, d->err, arg) : 0;
}

static int skip_opt(const struct opt_cmd *cmd, const struct opt_desc *d, const char *arg)
{
	return parse_skip(arg, d->value) ? opt_error(cmd, d->err, arg) : 0;
}

static int map_opt(const struct opt_cmd *cmd, const struct opt_desc *d, const char *arg)
{
	struct replay_args *ra = d->value;
	const char *eq = strchr(arg, '=');

	if (!eq || eq == arg || !eq[1])
		return opt_error(cmd, "--map wants OLD=NEW, not '%s'", arg);
	if (ra->nmaps == MAPS_MAX)
		return opt_error(cmd, "at most %d --map options", MAPS_MAX);
	ra->maps[ra->nmaps].old_path = strndup(arg, (size_t)(eq - arg));
	ra->maps[ra->nmaps].new_path = eq + 1;
	ra->nmaps++;
	return 0;
}

static void add_u64(json_object *o, const char *k, uint64_t v)
{
	json_object_object_add(o, k, json_object_new_int64((int64_t)v));
}

static json_object *opstat_json(const struct iotap_replay_opstat *s)
{
	json_object *o = json_object_new_object();

	add_u64(o, "recorded", s->recorded);
	add_u64(o, "replayed", s->replayed);
	add_u64(o, "failed", s->failed);
	add_u64(o, "other_error", s->other_error);
	add_u64(o, "succeeded", s->succeeded);
	add_u64(o, "size_diff", s->size_diff);
	add_u64(o, "skipped", s->skipped);
	add_u64(o, "unreplayable", s->unreplayable);
	json_object_object_add(o, "bytes_recorded",
			       json_object_new_int64((int64_t)s->bytes_recorded));
	add_u64(o, "bytes", s->bytes);
	return o;
}

static void print_json(const char *trace, const char *dir,
		       const struct iotap_replay_plan *pl,
		       const struct iotap_replay_stats *st)
{
	json_object *root = json_object_new_object(), *ops = json_object_new_object();
	json_object *lag = json_object_new_object(), *ex = json_object_new_array();
	json_object *dmg = json_object_new_object();
	unsigned int i;

	json_object_object_add(root, "trace", json_object_new_string(trace));
	json_object_object_add(root, "target", json_object_new_string(dir));
	json_object_object_add(root, "phase", pl->phase ? json_object_new_string(pl->phase) : NULL);
	add_u64(root, "ops", st->ops);
	add_u64(root, "differences", st->differences);
	json_object_object_add(root, "unreplayable",
			       json_object_new_int64((int64_t)st->unreplayable));
	json_object_object_add(root, "capture_s", json_object_new_double(st->capture_s));
	json_object_object_add(root, "replay_s", json_object_new_double(st->replay_s));
	json_object_object_add(root, "ops_per_s", json_object_new_double(st->ops_per_s));
	add_u64(lag, "mean_ns", st->lag_mean_ns);
	add_u64(lag, "p50_ns", st->lag_p50_ns);
	add_u64(lag, "p99_ns", st->lag_p99_ns);
	add_u64(lag, "max_ns", st->lag_max_ns);
	add_u64(lag, "late_ops", st->late_ops);
	json_object_object_add(root, "lag", lag);
	add_u64(root, "dep_waits", st->dep_waits);
	add_u64(root, "threads", st->threads);
	add_u64(root, "replay_threads", st->lanes);
	add_u64(root, "processes", st->processes);
	add_u64(root, "phases", st->phases);
	json_object_object_add(root, "interrupted", json_object_new_boolean(st->interrupted));
	add_u64(root, "trace_lost", st->trace_lost);
	for (i = 0; i < IOTAP_OP_MAX; i++)
		if (st->op[i].recorded || st->op[i].replayed)
			json_object_object_add(ops, iotap_trace_op_name(i),
					       opstat_json(&st->op[i]));
	json_object_object_add(root, "op", ops);
	for (i = 0; i < st->nexamples; i++)
		json_object_array_add(ex, json_object_new_string(st->example[i]));
	json_object_object_add(root, "examples", ex);
	add_u64(dmg, "chunks_bad", pl->damage.chunks_bad);
	json_object_object_add(dmg, "bytes_skipped",
			       json_object_new_int64((int64_t)pl->damage.bytes_skipped));
	json_object_object_add(dmg, "lost_records",
			       json_object_new_int64((int64_t)pl->damage.lost_records));
	json_object_object_add(dmg, "has_end", json_object_new_boolean(pl->damage.has_end));
	add_u64(dmg, "orphan_ops", pl->damage.orphans);
	json_object_object_add(root, "damage", dmg);
	printf("%s\n", json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY |
							JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(root);
}

static void say_damage(const char *trace, const struct iotap_replay_plan *pl)
{
	const struct iotap_replay_damage *d = &pl->damage;
	char b[32];

	if (d->chunks_bad || d->tail_bytes)
		warn_msg("'%s' is damaged: %" PRIu64 " bad chunk%s, %s skipped%s; replaying "
			 "what could be read", trace, d->chunks_bad, d->chunks_bad == 1 ? "" : "s",
			 fmt_bytes(d->bytes_skipped, b, sizeof(b)),
			 d->tail_bytes ? " (a torn end)" : "");
	else if (!d->has_end)
		warn_msg("'%s' has no end record (its writer did not close it); replaying "
			 "its complete chunks", trace);
	if (d->lost_records)
		warn_msg("the capture lost %" PRIu64 " records (LOST): the replay lacks them",
			 d->lost_records);
	if (d->orphans)
		warn_msg("%" PRIu64 " ops name files the trace never names; they cannot be "
			 "replayed", d->orphans);
}

static int open_error(struct iotap_replay *r, int ret, const char *trace,
		      const char *dir, const char *phase)
{
	const char *what = iotap_replay_what(r);

	switch (ret) {
	case -ENXIO:
		error_msg("%s", what);
		return 2;
	/* what the trace holds is a runtime matter (1), as for report --phase */
	case -ESRCH:
		error_msg("no phase '%s' in '%s' (see `iotap report %s`)", phase, trace, trace);
		return 1;
	case -ENOMSG:
		error_msg("'%s' has no phase markers: --phase needs them", trace);
		return 1;
	case -ENODATA:
		error_msg("nothing to replay in '%s'%s", trace, phase ? " in that phase" : "");
		return 1;
	case -EBADMSG:
		if (strncmp(what, trace, strlen(trace)) || strlen(what) > strlen(trace)) {
			error_msg("%s", what);
			return 1;
		}
		/* fall through */
	case -EPROTONOSUPPORT:
		error_msg("cannot read trace '%s': %s", trace, iotap_trace_strerror(ret));
		return 1;
	}
	if (*what && strcmp(what, trace))
		error_msg("cannot use '%s': %s", what, strerror(-ret));
	else if (*what)
		error_msg("cannot read trace '%s': %s", trace, strerror(-ret));
	else
		error_msg("cannot replay into '%s': %s", dir, strerror(-ret));
	return 1;
}

/* What the trace holds and what DIR must hold first, on stderr. */
static void say_plan(const char *trace, const struct iotap_replay_plan *pl)
{
	fprintf(stderr, "iotap replay: '%s': %" PRIu64 " op%s of %" PRIu64 " thread%s, "
		"%.1f s captured; initial state %" PRIu64 " director%s, %" PRIu64
		" file%s (%.1f MB), %" PRIu64 " symlink%s\n", trace, pl->ops,
		pl->ops == 1 ? "" : "s", pl->threads, pl->threads == 1 ? "" : "s",
		pl->capture_s, pl->dirs, pl->dirs == 1 ? "y" : "ies", pl->files,
		pl->files == 1 ? "" : "s", pl->state_bytes / 1e6, pl->symlinks,
		pl->symlinks == 1 ? "" : "s");
	if (pl->placeholders)
		fprintf(stderr, "iotap replay: %" PRIu64 " of the files are empty "
			"placeholders for directory entries the trace lists but never "
			"names\n", pl->placeholders);
}

/*
 * After the options: the operands and what goes together, the trace
 * readable, T2 writable. -1 to go on, else the exit status (said why).
 */
static int check_args(int argc, char **argv, struct iotap_replay_opts *o, int perm_set)
{
	if (argc - optind != 2)
		return opt_error(&replay_cmd, argc - optind > 2 ? "too many arguments (a trace and "
								 "a directory)"
							       : "wants a trace and a directory");
	if (a.prepare + a.prepare_only + a.check_only > 1)
		return opt_error(&replay_cmd,
				 "--prepare, --prepare-only and --check exclude each other");
	if ((o->flags & IOTAP_REPLAY_CLOBBER) && !a.prepare && !a.prepare_only)
		return opt_error(&replay_cmd, "--clobber goes with --prepare or --prepare-only");
	o->trace = argv[optind];
	o->target = argv[optind + 1];
	/* the trace first: a DIR to be made says nothing of a trace that is not there */
	if (access(o->trace, R_OK)) {
		error_msg("cannot read trace '%s': %s", o->trace, strerror(errno));
		return 1;
	}
	if (perm_set && !o->out_trace)
		return opt_error(&replay_cmd, "--trace-mode and --trace-group need --trace T2");
	if (o->out_trace) {
		/* before anything in DIR is touched; never the trace replayed */
		const char *inputs[] = { o->trace, NULL };
		struct out_rules rules = {
			.inputs = inputs,
			.force_opt = "--overwrite",
			.force = !!(o->flags & IOTAP_REPLAY_TRACE_FORCE),
			.trace = 1,
		};

		if (out_check(o->out_trace, &rules) < 0)
			return 1;
	}
	return -1;
}

/*
 * Before the replay, DIR against the trace's initial state: --prepare
 * builds it (--clobber: over what is in the way), otherwise it must hold
 * it (--force: replay anyway); --prepare-only and --check stop there.
 * Return: -1 to replay, else the exit status (said why).
 */
static int ready_target(struct iotap_replay *r, const struct iotap_replay_opts *o)
{
	int ret;

	if (a.prepare || a.prepare_only) {
		/* a live directory given by mistake is left as it is */
		ret = iotap_replay_changes(r, NULL, 0);
		if (ret < 0) {
			error_msg("cannot check '%s': %s", iotap_replay_what(r),
				strerror(-ret));
			return 1;
		}
		if (ret > 0 && !(o->flags & IOTAP_REPLAY_CLOBBER)) {
			error_msg("'%s' holds what --prepare would remove or change:", o->target);
			iotap_replay_changes(r, stderr, CHECK_LINES);
			fprintf(stderr, "nothing was changed; use --clobber to let --prepare do "
				"it, or prepare an empty directory\n");
			return 1;
		}
		if (ret > 0)
			fprintf(stderr, "iotap replay: --clobber: removing and changing what is "
				"in the way in '%s':\n", o->target);
		ret = iotap_replay_prepare(r, stderr);
		if (ret) {
			if (ret == -ENOSPC)
				error_msg("%s; nothing was written", iotap_replay_what(r));
			else
				error_msg("cannot prepare '%s': %s", iotap_replay_what(r),
					strerror(-ret));
			return 1;
		}
		if (!quiet)
			fprintf(stderr, "iotap replay: initial state built in '%s'\n", o->target);
		if (a.prepare_only)
			return 0;
	} else {
		ret = iotap_replay_check(r, NULL, 0);
		if (ret == -ENOTEMPTY) {
			if (a.check_only || !(o->flags & IOTAP_REPLAY_FORCE)) {
				error_msg("'%s' does not hold the initial state of '%s':", o->target,
					o->trace);
				iotap_replay_check(r, stderr, CHECK_LINES);
				fprintf(stderr, "run with --prepare to build it (with --clobber "
					"where something is in the way), or --force to replay "
					"anyway\n");
				return 1;
			}
			warn_msg("'%s' does not hold the initial state of '%s'; replaying anyway "
				 "(--force)", o->target, o->trace);
		} else if (ret) {
			error_msg("cannot check '%s': %s", iotap_replay_what(r),
				strerror(-ret));
			return 1;
		}
		if (a.check_only) {
			if (!quiet)
				fprintf(stderr, "iotap replay: '%s' holds the initial state\n",
					o->target);
			return 0;
		}
	}
	return -1;
}

int cmd_replay(int argc, char **argv)
{
	struct iotap_replay_opts *o = &a.o;
	struct iotap_replay_stats st;
	const struct iotap_replay_plan *pl;
	struct iotap_replay *r = NULL;
	int made_dir = 0, perm_set, ret;
	const char *arg;
	char *cmdline;
	unsigned int i;

	o->timing = IOTAP_REPLAY_RECORDED;
	o->scale = 1;
	o->data = IOTAP_REPLAY_DATA_RANDOM;
	ret = opt_parse(&replay_cmd, argc, argv);
	if (ret >= 0)
		return ret;
	perm_set = a.perm.mode || a.perm.has_gid;
	ret = check_args(argc, argv, o, perm_set);
	if (ret >= 0)
		return ret;
	o->maps = a.maps;
	o->nmaps = a.nmaps;
	cmdline = iotap_argv_join("iotap", argc, argv);
	o->cmdline = cmdline;
	tty = isatty(STDERR_FILENO);
	if (!quiet)
		o->progress = progress;

	/* --prepare builds the initial state: a DIR that does not exist yet is made */
	if ((a.prepare || a.prepare_only) && access(o->target, F_OK) && errno == ENOENT) {
		if (mkdir(o->target, 0755)) {
			error_msg("cannot create '%s': %s", o->target, strerror(errno));
			ret = 1;
			goto out;
		}
		made_dir = 1;
	}
	/*
	 * Before the scan and the prepare, which take a while on a big trace:
	 * an interrupt then is not lost (a job started with & in a script has
	 * SIGINT ignored until a handler is set) and the replay stops at its
	 * start, trace closed. A second interrupt (timeout(1) signals the
	 * group too) must still close the trace.
	 */
	stop_signals_install(on_signal, 0);
	ret = iotap_replay_open(&r, o);
	if (ret) {
		ret = open_error(r, ret, o->trace, o->target, o->phase);
		goto out;
	}
	if (made_dir && !quiet)
		fprintf(stderr, "iotap replay: created '%s'\n", o->target);
	pl = iotap_replay_plan(r);
	say_damage(o->trace, pl);
	if (!quiet)
		say_plan(o->trace, pl);

	ret = ready_target(r, o);
	if (ret >= 0)
		goto out;
	ret = 0;
	/* the growth the replay itself causes, against the free space */
	arg = iotap_replay_space(r);
	if (arg)
		warn_msg("%s", arg);

	ret = iotap_replay_run(r, &st);
	if (tty && !quiet)
		fprintf(stderr, "\r%-78s\r", "");
	if (ret) {
		if (ret == -EEXIST)
			error_msg("trace '%s' exists; --overwrite replaces it", o->out_trace);
		else
			error_msg("replay failed: %s%s%s", strerror(-ret),
				*iotap_replay_what(r) ? ": " : "",
				iotap_replay_what(r));
		ret = 1;
		goto out;
	}
	/* the summary is the result: stdout (with --json, the JSON is; the text goes to stderr) */
	if (a.json) {
		if (!quiet || st.differences || st.unreplayable)
			iotap_replay_print(stderr, r, &st);
		print_json(o->trace, o->target, pl, &st);
	} else {
		iotap_replay_print(stdout, r, &st);
	}
	if (st.trace_error) {
		error_msg("cannot write trace '%s': %s", o->out_trace, strerror(-st.trace_error));
		ret = 1;
	} else if (st.interrupted) {
		ret = 130;
	} else if (a.strict && (st.differences || st.unreplayable)) {
		ret = 1;
	}
	/* T2, complete: shared as asked */
	if (o->out_trace && perm_set && !st.trace_error && trace_perm_set(o->out_trace, &a.perm) &&
	    !ret)
		ret = 1;
out:
	iotap_replay_close(r);
	if (ret && made_dir)
		rmdir(o->target);	/* only if still empty: what we made, nothing else */
	for (i = 0; i < a.nmaps; i++)
		free((char *)a.maps[i].old_path);
	free(cmdline);
	return ret;
}
