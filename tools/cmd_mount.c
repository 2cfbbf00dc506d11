// SPDX-License-Identifier: MIT
/*
 * cmd_mount.c - iotap mount BACKING MOUNTPOINT [--trace FILE] [options]
 *
 * Serves BACKING's tree at MOUNTPOINT through FUSE and records every
 * request with its timing into FILE. BACKING may equal MOUNTPOINT (mount
 * over in place: the application's paths do not change). Without -f the
 * daemon goes to the background once the mount is up; `iotap umount` or
 * `fusermount3 -u` stops it and closes the trace.
 *
 * A thin wrapper: options become struct iotap_fs_opts for iotap_fs_main().
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmds.h"
#include "iotap_base.h"
#include "iotap_fs.h"
#include "iotap_trace.h"
#include "opt.h"

#define UNDER_MAX	16	/* the daemon's most (fs/fs_i.h FS_UNDER_MAX) */

/* What the options set: the table below binds each to its field. */
static struct mount_args {
	struct iotap_fs_opts o;
	struct iotap_trace_perm perm;	/* --trace-mode, --trace-group */
	uint64_t max_write;		/* --max-write, into o.max_write */
	const char *under[UNDER_MAX];	/* --only-under: the paths, into... */
	char *under_lists[UNDER_MAX];	/* ...these copies of the lists; freed at exit */
	unsigned int nr_under, nr_lists;
} m;

static int transport_opt(const struct opt_cmd *cmd, const struct opt_desc *d, const char *arg);
static int only_ops_opt(const struct opt_cmd *cmd, const struct opt_desc *d, const char *arg);
static int only_uid_opt(const struct opt_cmd *cmd, const struct opt_desc *d, const char *arg);
static int only_pid_opt(const struct opt_cmd *cmd, const struct opt_desc *d, const char *arg);
static int only_under_opt(const struct opt_cmd *cmd, const struct opt_desc *d, const char *arg);
static int save_lat_opt(const struct opt_cmd *cmd, const struct opt_desc *d, const char *arg);
static int fail_opt(const struct opt_cmd *cmd, const struct opt_desc *d, const char *arg);

#define SECONDS_ERR(name) "--" name " wants seconds (0..86400), not '%s'"

static const struct opt_desc mount_opts[] = {
	OPT_STRING('t', "trace", &m.o.trace_path, "FILE",
		   "write the trace to FILE (without it: pass through only)"),
	OPT_BOOL('f', "foreground", &m.o.foreground, "stay in the foreground; log to stderr"),
	OPT_BOOL(0, "cache", &m.o.cache_mode, "page-cache mode: kernel caching and writeback cache;\n"
		 "records what reaches the layer below the cache (default: direct_io,\n"
		 "one application read()/write() = one record)"),
	OPT_BOOL(0, "force", &m.o.force, "overwrite an existing trace file"),
	OPT_STRING('o', "options", &m.o.fuse_opts, "OPTS", "extra FUSE mount options (comma-separated)"),
	OPT_STRING(0, "log", &m.o.log_path, "FILE",
		   "daemon log (default: stderr with -f, else TRACE.log;\n"
		   "needed in the background without --trace: untraced, --ring)"),
	OPT_UINT(0, "threads", &m.o.max_threads, "N",
		 "at most N worker threads serving /dev/fuse requests\n"
		 "(default: libfuse's 10)", 1, 1024, "--threads wants 1..1024, not '%s'"),
	OPT_UINT(0, "sample-interval", &m.o.sample_ms, "MS",
		 "resource sample every MS milliseconds (default 100)", 1, 3600000,
		 "--sample-interval wants milliseconds, not '%s'"),
	OPT_UINT(0, "fd-cache", &m.o.fd_cache, "N", "O_PATH descriptors kept open (default 4096)",
		 16, 1000000, "--fd-cache wants 16..1000000, not '%s'"),
	OPT_BOOL('d', "debug", &m.o.debug, "libfuse debug output (implies -f)"),
	OPT_DOUBLE(0, "attr-timeout", &m.o.attr_timeout, "S",
		   "seconds the kernel may answer stat() from its\n"
		   "attribute cache (default 1; 0: every getattr reaches the trace)", 0, 86400,
		   SECONDS_ERR("attr-timeout")),
	OPT_DOUBLE(0, "entry-timeout", &m.o.entry_timeout, "S",
		   "seconds it may keep a name, or a miss, without a\n"
		   "lookup (default 1; 0: every lookup reaches the trace)", 0, 86400,
		   SECONDS_ERR("entry-timeout")),
	OPT_CALLBACK_ERR(0, "transport", &m.o.transport, "T",
			 "how FUSE requests travel: auto (io_uring where the\n"
			 "kernel's fuse enable_uring is Y, else /dev/fuse), uring, dev;\n"
			 "default auto, or $IOTAP_TRANSPORT. Over io_uring: -o uring_depth=N\n"
			 "entries per CPU queue (default 16), -o uring_spin=USEC a queue\n"
			 "waits before it sleeps (0-1000, default 30, 0: off), -o uring_direct=0\n"
			 "READ and WRITE through libfuse (default 1: served by the ring)",
			 transport_opt,
			 "--transport wants auto, uring or dev, not '%s'"),
	OPT_SIZE(0, "max-write", &m.max_write, "SIZE",
		 "bytes per WRITE request, 4k..1M (default 1M, libfuse\n"
		 "3.14's most over /dev/fuse), up to 4M over io_uring (the\n"
		 "pages need fs.fuse.max_pages_limit >= SIZE/4k + 1): a\n"
		 "write() above it is several requests, flagged cut/cont\n"
		 "and joined by report, replay and dump --fio-iolog", 4096, 4 << 20, 0,
		 "--max-write wants 4k..1M, or up to 4M with --transport uring (libfuse 3.14 "
		 "reads /dev/fuse into 1 MiB + 4 KiB), not '%s'"),
	OPT_TRACE_MODE(&m.perm, "the traces and the log the daemon creates"),
	OPT_TRACE_GROUP(&m.perm),
	OPT_BOOL(0, "allow-mark-owner", &m.o.allow_mark_owner,
		 "let the owner of BACKING's root mark phases too\n"
		 "(iotap mark); otherwise only root or CAP_SYS_ADMIN may"),
	OPT_SIZE(0, "rotate-size", &m.o.rotate_bytes, "SIZE",
		 "close the trace when it reaches about SIZE bytes\n"
		 "(k, M, G suffixes) and go on in the next file: NAME.iotap,\n"
		 "NAME.1.iotap, NAME.2.iotap... or, if FILE has % conversions,\n"
		 "the strftime(3) name of the moment it opens", 4096, UINT64_MAX, 0,
		 "--rotate-size wants a size of at least 4k, not '%s'"),
	OPT_DURATION(0, "rotate-time", &m.o.rotate_ns, "DURATION",
		     "rotate every DURATION too (30s, 10m, 24h)", 10000000ull, UINT64_MAX,
		     "--rotate-time wants a duration of at least 10ms (30s, 10m, 24h), not '%s'"),
	OPT_UINT(0, "rotate-keep", &m.o.rotate_keep, "N",
		 "keep the N newest trace files, delete older ones\n"
		 "(only files this mount wrote; default: keep all)", 1, 1000000,
		 "--rotate-keep wants 1..1000000, not '%s'"),
	OPT_SIZE(0, "ring", &m.o.ring_bytes, "SIZE",
		 "flight recorder: keep only the last SIZE of compressed\n"
		 "trace in memory, no file; `iotap trace MOUNTPOINT save FILE`\n"
		 "writes it out (not with --trace or the rotation options)", 64u << 10, 64ull << 30, 0,
		 "--ring wants a size from 64k to 64G, not '%s'"),
	OPT_STRING(0, "save-to", &m.o.save_to, "FILE",
		   "with --ring: where a trigger saves the window (a\n"
		   "strftime(3) name, or FILE, FILE.1, ... as rotations)"),
	OPT_STRING_NONEMPTY(0, "save-on-mark", &m.o.save_mark, "NAME",
			    "save when a phase NAME begins (iotap mark)",
			    "--save-on-mark wants a phase name"),
	OPT_CALLBACK(0, "save-on-latency", &m.o, "OP:MS", "save when an OP takes longer than MS\n"
		     "milliseconds (fsync:200); at most one save a second", save_lat_opt),
	OPT_CALLBACK(0, "only-ops", &m.o.only_ops, "LIST",
		     "record only these op types (read,write,fsync,...;\n"
		     "names as iotap dump prints them); file names are kept", only_ops_opt),
	OPT_CALLBACK(0, "only-uid", &m.o, "USER", "record only the ops of callers with this fsuid",
		     only_uid_opt),
	OPT_CALLBACK(0, "only-pid", &m.o.only_pid, "PID",
		     "record only the ops of this process (running)", only_pid_opt),
	OPT_CALLBACK(0, "only-under", &m, "PATH",
		     "record only the ops on files and directories under\n"
		     "PATH (relative to the mount root, or absolute below\n"
		     "MOUNTPOINT or BACKING; an existing directory or file,\n"
		     "followed across renames); repeat it or give a comma\n"
		     "list, at most 16; the rest is served but not recorded", only_under_opt),
	/* test only: inject a failure into this op, on its Nth call, with this errno */
	OPT_CALLBACK_HIDDEN("fail-op", &m.o, "OP", fail_opt),
	OPT_CALLBACK_HIDDEN("fail-nth", &m.o, "N", fail_opt),
	OPT_CALLBACK_HIDDEN("fail-errno", &m.o, "E", fail_opt),
	OPT_END(),
};

static const struct opt_cmd mount_cmd = {
	.name = "mount",
	.usage = "BACKING MOUNTPOINT [--trace FILE] [options]",
	.summary =
		"Mount BACKING's tree at MOUNTPOINT through FUSE, pass every operation\n"
		"through and record each one with its timing into a compressed trace.\n"
		"BACKING may equal MOUNTPOINT to mount over a directory in place.\n"
		"Needs root. `iotap umount MOUNTPOINT` (or fusermount3 -u) closes the trace.",
	.opts = mount_opts,
	.footer =
		"examples:\n"
		"  iotap mount /srv/pgdata /srv/pgdata --trace /var/tmp/pg.iotap\n"
		"  iotap mount /data /mnt/data --trace cap.iotap -f\n"
		"  iotap mount /data /mnt/data --trace cap.iotap --cache\n"
		"  iotap mount /srv/pg /srv/pg --trace /var/tmp/pg-%F.iotap --rotate-time 24h --rotate-keep 7\n"
		"  iotap mount /srv/pg /srv/pg --trace /var/tmp/pg.iotap --only-under base,pg_wal",
};

/*
 * Does the trace @path lie under the mount point @mnt? The file is opened
 * before the mount, so it would be written beneath it: hidden from
 * everyone (report, ls) until the unmount. Says so; 1 if it does.
 */
static int under_mountpoint(const char *path, const char *mnt)
{
	char *copy = strdup(path), dir[PATH_MAX], m[PATH_MAX];
	size_t ml;
	int under = 0;

	if (copy && realpath(dirname(copy), dir) && realpath(mnt, m)) {
		ml = strlen(m);
		under = !strncmp(dir, m, ml) && (!dir[ml] || dir[ml] == '/' || ml == 1);
	}
	if (under)
		error_msg("trace '%s' lies under the mount point '%s': the mount would hide it "
			"until the unmount; put it outside", path, mnt);
	free(copy);
	return under;
}

static int transport_opt(const struct opt_cmd *cmd, const struct opt_desc *d, const char *arg)
{
	int t = iotap_fs_transport_parse(arg);

	if (t < 0)
		return opt_error(cmd, d->err, arg);
	*(int *)d->value = t;
	return 0;
}

static int only_ops_opt(const struct opt_cmd *cmd, const struct opt_desc *d, const char *arg)
{
	char *list = strdup(arg), *tok, *save = NULL;
	uint64_t *ops = d->value;
	int rc;

	if (!list)
		return opt_error(cmd, "out of memory");
	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int op = iotap_trace_op_from_name(tok);

		if (op < 0 || op >= 64) {
			rc = opt_error(cmd, "--only-ops: unknown op '%s'", tok);
			free(list);
			return rc;
		}
		*ops |= 1ull << op;
	}
	free(list);
	if (!*ops)
		return opt_error(cmd, "--only-ops wants op names (read,write,...)");
	return 0;
}

static int only_uid_opt(const struct opt_cmd *cmd, const struct opt_desc *d, const char *arg)
{
	struct iotap_fs_opts *o = d->value;
	struct passwd *pw = getpwnam(arg);
	uint64_t v;

	if (pw) {
		o->only_uid = (uint32_t)pw->pw_uid;
	} else if (parse_u64(arg, &v) || v >= UINT32_MAX) {
		return opt_error(cmd, "--only-uid: no user '%s'", arg);
	} else {
		o->only_uid = (uint32_t)v;
	}
	o->only_uid_set = 1;
	return 0;
}

static int only_pid_opt(const struct opt_cmd *cmd, const struct opt_desc *d, const char *arg)
{
	uint64_t v;

	if (parse_u64(arg, &v) || !v || v >= UINT32_MAX)
		return opt_error(cmd, "--only-pid wants a process id, not '%s'", arg);
	/* a process to come cannot be named: its pid is not known yet */
	if (kill((pid_t)v, 0) && errno == ESRCH)
		return opt_error(cmd, "--only-pid %s: no such process (start it first, then mount)",
				 arg);
	*(uint32_t *)d->value = (uint32_t)v;
	return 0;
}

static int only_under_opt(const struct opt_cmd *cmd, const struct opt_desc *d, const char *arg)
{
	struct mount_args *a = d->value;
	char *list = strdup(arg), *tok, *save = NULL;

	if (!list)
		return opt_error(cmd, "out of memory");
	if (a->nr_lists == UNDER_MAX) {
		free(list);
		return opt_error(cmd, "--only-under: at most %d paths", UNDER_MAX);
	}
	a->under_lists[a->nr_lists++] = list;	/* the paths point into it; freed at exit */
	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (a->nr_under == UNDER_MAX)
			return opt_error(cmd, "--only-under: at most %d paths", UNDER_MAX);
		if (!strcmp(tok, "..") || !strncmp(tok, "../", 3) || strstr(tok, "/../") ||
		    (strlen(tok) >= 3 && !strcmp(tok + strlen(tok) - 3, "/..")))
			return opt_error(cmd, "--only-under '%s': '..' is not allowed (name the "
					 "subtree below the mount root)", tok);
		a->under[a->nr_under++] = tok;
	}
	if (!a->nr_under)
		return opt_error(cmd, "--only-under wants a path");
	return 0;
}

static int save_lat_opt(const struct opt_cmd *cmd, const struct opt_desc *d, const char *arg)
{
	struct iotap_fs_opts *o = d->value;
	const char *colon = strchr(arg, ':');
	char opname[32], *end;
	double ms;

	if (!colon || (size_t)(colon - arg) >= sizeof(opname))
		return opt_error(cmd, "--save-on-latency wants OP:MS, not '%s'", arg);
	memcpy(opname, arg, (size_t)(colon - arg));
	opname[colon - arg] = '\0';
	o->save_lat_op = iotap_trace_op_from_name(opname);
	errno = 0;
	ms = strtod(colon + 1, &end);
	if (o->save_lat_op <= 0 || errno || end == colon + 1 || *end || !(ms > 0) || ms > 3600e3)
		return opt_error(cmd, "--save-on-latency wants OP:MS (an op name such as fsync, "
				 "and milliseconds above 0), not '%s'", arg);
	o->save_lat_ns = (uint64_t)(ms * 1e6);
	if (!o->save_lat_ns)
		o->save_lat_ns = 1;
	return 0;
}

/* --fail-op OP, --fail-nth N, --fail-errno E */
static int fail_opt(const struct opt_cmd *cmd, const struct opt_desc *d, const char *arg)
{
	struct iotap_fs_opts *o = d->value;
	uint64_t v;

	if (!strcmp(d->long_name, "fail-op")) {
		o->fail_op = iotap_trace_op_from_name(arg);
		if (o->fail_op <= 0)
			return opt_error(cmd, "unknown op '%s'", arg);
	} else if (!strcmp(d->long_name, "fail-nth")) {
		if (parse_u64(arg, &v) || v == 0)
			return opt_error(cmd, "--fail-nth wants a count from 1");
		o->fail_nth = v;
	} else {
		if (parse_u64(arg, &v) || v == 0 || v > 4095)
			return opt_error(cmd, "--fail-errno wants a positive errno");
		o->fail_errno = (int)v;
	}
	return 0;
}

int cmd_mount(int argc, char **argv)
{
	struct iotap_fs_opts *o = &m.o;
	const char *env = getenv("IOTAP_TRANSPORT");
	char *cmdline;
	unsigned int i;
	int rc;

	if (env && *env) {
		o->transport = iotap_fs_transport_parse(env);
		if (o->transport < 0)
			return opt_error(&mount_cmd, "IOTAP_TRANSPORT wants auto, uring or dev, "
					 "not '%s'", env);
	}
	/* below 0: not given (0 is a value) */
	o->attr_timeout = -1;
	o->entry_timeout = -1;
	rc = opt_parse(&mount_cmd, argc, argv);
	if (rc >= 0)
		return rc;
	o->attr_set = o->attr_timeout >= 0;
	o->entry_set = o->entry_timeout >= 0;
	if (!o->attr_set)
		o->attr_timeout = 0;
	if (!o->entry_set)
		o->entry_timeout = 0;
	if (o->debug)
		o->foreground = 1;
	o->max_write = (unsigned int)m.max_write;
	o->trace_mode = m.perm.mode;
	o->trace_gid = m.perm.gid;
	o->trace_gid_set = m.perm.has_gid;
	if (argc - optind != 2)
		return opt_error(&mount_cmd, argc - optind < 2 ? "BACKING and MOUNTPOINT are required"
							       : "too many arguments");
	if (o->ring_bytes && (o->trace_path || o->rotate_bytes || o->rotate_ns))
		return opt_error(&mount_cmd, "--ring keeps the trace in memory: not with --trace "
				 "or --rotate-size/--rotate-time");
	if ((o->save_mark || o->save_lat_op) && !o->save_to)
		return opt_error(&mount_cmd, "--save-on-mark and --save-on-latency need --save-to FILE");
	if (o->save_to && !o->ring_bytes)
		return opt_error(&mount_cmd, "--save-to saves a flight recorder: it needs --ring SIZE");
	if (o->save_to && !o->save_mark && !o->save_lat_op)
		return opt_error(&mount_cmd, "--save-to needs a trigger: --save-on-mark or "
				 "--save-on-latency");
	if (o->save_to) {
		/* an existing FILE is kept: saves go to FILE.1, FILE.2, ... */
		char *d = strdup(o->save_to);

		if (!d || access(dirname(d), W_OK)) {
			error_msg("--save-to '%s': cannot write in its directory: %s", o->save_to,
				strerror(d ? errno : ENOMEM));
			free(d);
			return 1;
		}
		free(d);
	}
	if (o->rotate_keep && !o->rotate_bytes && !o->rotate_ns)
		return opt_error(&mount_cmd, "--rotate-keep needs --rotate-size or --rotate-time");
	if (o->fail_op && (!o->fail_nth || !o->fail_errno))
		return opt_error(&mount_cmd, "--fail-op needs --fail-nth and --fail-errno");
	if (o->trace_path) {
		struct out_rules rules = { .force = o->force, .trace = 1 };

		if (out_check(o->trace_path, &rules) < 0)
			return 1;
		if (under_mountpoint(o->trace_path, argv[optind + 1]))
			return 1;
	}
	if (o->log_path) {
		/* appended to, so an existing log is kept, but never a trace */
		struct out_rules rules = { .append = 1 };

		if (o->trace_path && out_same(o->trace_path, o->log_path))
			return opt_error(&mount_cmd, "--trace and --log name the same file");
		if (out_check(o->log_path, &rules) < 0)
			return 1;
	}
	o->backing = argv[optind];
	o->mountpoint = argv[optind + 1];
	o->only_under = m.under;
	o->nr_only_under = m.nr_under;
	cmdline = iotap_argv_join("iotap", argc, argv);
	o->cmdline = cmdline;
	rc = iotap_fs_main(o);
	free(cmdline);
	for (i = 0; i < m.nr_lists; i++)
		free(m.under_lists[i]);
	return rc;
}
