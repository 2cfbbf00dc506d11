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

enum { O_TRACE, O_FG, O_CACHE, O_FORCE, O_OPTS, O_LOG, O_THREADS, O_SAMPLE, O_FDCACHE,
       O_DEBUG, O_ATTR_TIMEOUT, O_ENTRY_TIMEOUT, O_TRANSPORT, O_MAX_WRITE, O_TRACE_MODE,
       O_TRACE_GROUP, O_MARK_OWNER, O_ROT_SIZE, O_ROT_TIME, O_ROT_KEEP, O_RING, O_SAVE_TO,
       O_SAVE_MARK, O_SAVE_LAT, O_ONLY_OPS, O_ONLY_UID, O_ONLY_PID, O_ONLY_UNDER, O_FAIL_OP, O_FAIL_NTH,
       O_FAIL_ERRNO };

static const struct opt_desc mount_opts[] = {
	[O_TRACE] = { "trace", 't', "FILE", "write the trace to FILE (without it: pass through only)" },
	[O_FG] = { "foreground", 'f', NULL, "stay in the foreground; log to stderr" },
	[O_CACHE] = { "cache", 0, NULL, "page-cache mode: kernel caching and writeback cache;\n"
		      "records what reaches the layer below the cache (default: direct_io,\n"
		      "one application read()/write() = one record)" },
	[O_FORCE] = { "force", 0, NULL, "overwrite an existing trace file" },
	[O_OPTS] = { "options", 'o', "OPTS", "extra FUSE mount options (comma-separated)" },
	[O_LOG] = { "log", 0, "FILE", "daemon log (default: stderr with -f, else TRACE.log;\n"
		    "needed in the background without --trace: untraced, --ring)" },
	[O_THREADS] = { "threads", 0, "N", "at most N worker threads serving /dev/fuse requests\n"
			"(default: libfuse's 10)" },
	[O_SAMPLE] = { "sample-interval", 0, "MS", "resource sample every MS milliseconds (default 100)" },
	[O_FDCACHE] = { "fd-cache", 0, "N", "O_PATH descriptors kept open (default 4096)" },
	[O_DEBUG] = { "debug", 'd', NULL, "libfuse debug output (implies -f)" },
	[O_ATTR_TIMEOUT] = { "attr-timeout", 0, "S", "seconds the kernel may answer stat() from its\n"
			     "attribute cache (default 1; 0: every getattr reaches the trace)" },
	[O_ENTRY_TIMEOUT] = { "entry-timeout", 0, "S", "seconds it may keep a name, or a miss, without a\n"
			      "lookup (default 1; 0: every lookup reaches the trace)" },
	[O_TRANSPORT] = { "transport", 0, "T", "how FUSE requests travel: auto (io_uring where the\n"
			  "kernel's fuse enable_uring is Y, else /dev/fuse), uring, dev;\n"
			  "default auto, or $IOTAP_TRANSPORT. Over io_uring: -o uring_depth=N\n"
			  "entries per CPU queue (default 16), -o uring_spin=USEC a queue\n"
			  "waits before it sleeps (0-1000, default 30, 0: off)" },
	[O_MAX_WRITE] = { "max-write", 0, "SIZE", "bytes per WRITE request, 4k..1M (default 1M, libfuse\n"
			  "3.14's most over /dev/fuse), up to 4M over io_uring (the\n"
			  "pages need fs.fuse.max_pages_limit >= SIZE/4k + 1): a\n"
			  "write() above it is several requests, flagged cut/cont\n"
			  "and joined by report, replay and dump --fio-iolog" },
	[O_TRACE_MODE] = OPT_TRACE_MODE("the traces and the log the daemon creates"),
	[O_TRACE_GROUP] = OPT_TRACE_GROUP,
	[O_MARK_OWNER] = { "allow-mark-owner", 0, NULL, "let the owner of BACKING's root mark phases too\n"
			   "(iotap mark); otherwise only root or CAP_SYS_ADMIN may" },
	[O_ROT_SIZE] = { "rotate-size", 0, "SIZE", "close the trace when it reaches about SIZE bytes\n"
			 "(k, M, G suffixes) and go on in the next file: NAME.iotap,\n"
			 "NAME.1.iotap, NAME.2.iotap... or, if FILE has % conversions,\n"
			 "the strftime(3) name of the moment it opens" },
	[O_ROT_TIME] = { "rotate-time", 0, "DURATION", "rotate every DURATION too (30s, 10m, 24h)" },
	[O_ROT_KEEP] = { "rotate-keep", 0, "N", "keep the N newest trace files, delete older ones\n"
			 "(only files this mount wrote; default: keep all)" },
	[O_RING] = { "ring", 0, "SIZE", "flight recorder: keep only the last SIZE of compressed\n"
		     "trace in memory, no file; `iotap trace MOUNTPOINT save FILE`\n"
		     "writes it out (not with --trace or the rotation options)" },
	[O_SAVE_TO] = { "save-to", 0, "FILE", "with --ring: where a trigger saves the window (a\n"
			"strftime(3) name, or FILE, FILE.1, ... as rotations)" },
	[O_SAVE_MARK] = { "save-on-mark", 0, "NAME", "save when a phase NAME begins (iotap mark)" },
	[O_SAVE_LAT] = { "save-on-latency", 0, "OP:MS", "save when an OP takes longer than MS\n"
			 "milliseconds (fsync:200); at most one save a second" },
	[O_ONLY_OPS] = { "only-ops", 0, "LIST", "record only these op types (read,write,fsync,...;\n"
			 "names as iotap dump prints them); file names are kept" },
	[O_ONLY_UID] = { "only-uid", 0, "USER", "record only the ops of callers with this fsuid" },
	[O_ONLY_PID] = { "only-pid", 0, "PID", "record only the ops of this process (running)" },
	[O_ONLY_UNDER] = { "only-under", 0, "PATH", "record only the ops on files and directories under\n"
			   "PATH (relative to the mount root, or absolute below\n"
			   "MOUNTPOINT or BACKING; an existing directory or file,\n"
			   "followed across renames); repeat it or give a comma\n"
			   "list, at most 16; the rest is served but not recorded" },
	[O_FAIL_OP] = { "fail-op", 0, "OP", "test only: inject a failure into this op", 1 },
	[O_FAIL_NTH] = { "fail-nth", 0, "N", "test only: ...on its Nth call", 1 },
	[O_FAIL_ERRNO] = { "fail-errno", 0, "E", "test only: ...with this errno", 1 },
	{ NULL },
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

#define UNDER_MAX	16	/* the daemon's most (fs/fs_i.h FS_UNDER_MAX) */

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
		die_msg("trace '%s' lies under the mount point '%s': the mount would hide it "
			"until the unmount; put it outside", path, mnt);
	free(copy);
	return under;
}

int cmd_mount(int argc, char **argv)
{
	struct iotap_fs_opts o = { 0 };
	struct iotap_trace_perm perm = { 0 };
	const char *under[UNDER_MAX];
	char *under_lists[UNDER_MAX];
	unsigned int nr_under = 0, nr_lists = 0, i;
	const char *arg;
	uint64_t v;
	int idx, rc;
	char *cmdline;
	const char *env = getenv("IOTAP_TRANSPORT");

	if (env && *env) {
		o.transport = iotap_fs_transport_parse(env);
		if (o.transport < 0)
			return opt_error(&mount_cmd, "IOTAP_TRANSPORT wants auto, uring or dev, "
					 "not '%s'", env);
	}
	while ((rc = opt_next(&mount_cmd, argc, argv, &idx, &arg)) == 1) {
		switch (idx) {
		case O_TRACE: o.trace_path = arg; break;
		case O_FG: o.foreground = 1; break;
		case O_CACHE: o.cache_mode = 1; break;
		case O_FORCE: o.force = 1; break;
		case O_OPTS: o.fuse_opts = arg; break;
		case O_LOG: o.log_path = arg; break;
		case O_DEBUG: o.debug = 1; o.foreground = 1; break;
		case O_ATTR_TIMEOUT:
		case O_ENTRY_TIMEOUT: {
			char *end;
			double s;

			errno = 0;
			s = strtod(arg, &end);
			if (errno || end == arg || *end || !(s >= 0 && s <= 86400))
				return opt_error(&mount_cmd, "--%s wants seconds (0..86400), not '%s'",
						 mount_opts[idx].long_name, arg);
			if (idx == O_ATTR_TIMEOUT) {
				o.attr_timeout = s;
				o.attr_set = 1;
			} else {
				o.entry_timeout = s;
				o.entry_set = 1;
			}
			break;
		}
		case O_TRANSPORT:
			o.transport = iotap_fs_transport_parse(arg);
			if (o.transport < 0)
				return opt_error(&mount_cmd, "--transport wants auto, uring or dev, "
						 "not '%s'", arg);
			break;
		case O_THREADS:
			if (parse_u64(arg, &v) || v == 0 || v > 1024)
				return opt_error(&mount_cmd, "--threads wants 1..1024, not '%s'", arg);
			o.max_threads = (unsigned int)v;
			break;
		case O_SAMPLE:
			if (parse_u64(arg, &v) || v == 0 || v > 3600000)
				return opt_error(&mount_cmd, "--sample-interval wants milliseconds, not '%s'", arg);
			o.sample_ms = (unsigned int)v;
			break;
		case O_FDCACHE:
			if (parse_u64(arg, &v) || v < 16 || v > 1000000)
				return opt_error(&mount_cmd, "--fd-cache wants 16..1000000, not '%s'", arg);
			o.fd_cache = (unsigned int)v;
			break;
		case O_MAX_WRITE:
			if (iotap_size_parse(arg, 1, &v) || v < 4096 || v > 4 * 1024 * 1024)
				return opt_error(&mount_cmd, "--max-write wants 4k..1M, or up to 4M "
						 "with --transport uring (libfuse 3.14 reads /dev/fuse "
						 "into 1 MiB + 4 KiB), not '%s'", arg);
			o.max_write = (unsigned int)v;
			break;
		case O_TRACE_MODE:
		case O_TRACE_GROUP:
			if (opt_trace_perm(&mount_cmd, idx == O_TRACE_GROUP, arg, &perm))
				return 2;
			o.trace_mode = perm.mode;
			o.trace_gid = perm.gid;
			o.trace_gid_set = perm.has_gid;
			break;
		case O_MARK_OWNER: o.allow_mark_owner = 1; break;
		case O_ROT_SIZE:
			if (iotap_size_parse(arg, 1, &v) || v < 4096)
				return opt_error(&mount_cmd, "--rotate-size wants a size of at least 4k, "
						 "not '%s'", arg);
			o.rotate_bytes = v;
			break;
		case O_ROT_TIME:
			if (parse_duration_ns(arg, &v) || v < 10000000ull)
				return opt_error(&mount_cmd, "--rotate-time wants a duration of at least "
						 "10ms (30s, 10m, 24h), not '%s'", arg);
			o.rotate_ns = v;
			break;
		case O_RING:
			if (iotap_size_parse(arg, 1, &v) || v < (64u << 10) || v > (64ull << 30))
				return opt_error(&mount_cmd, "--ring wants a size from 64k to 64G, not '%s'",
						 arg);
			o.ring_bytes = v;
			break;
		case O_SAVE_TO: o.save_to = arg; break;
		case O_ONLY_OPS: {
			char *list = strdup(arg), *tok, *save = NULL;

			if (!list)
				return opt_error(&mount_cmd, "out of memory");
			for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
				int op = iotap_trace_op_from_name(tok);

				if (op < 0 || op >= 64) {
					rc = opt_error(&mount_cmd, "--only-ops: unknown op '%s'", tok);
					free(list);
					return rc;
				}
				o.only_ops |= 1ull << op;
			}
			free(list);
			if (!o.only_ops)
				return opt_error(&mount_cmd, "--only-ops wants op names (read,write,...)");
			break;
		}
		case O_ONLY_UID: {
			struct passwd *pw = getpwnam(arg);

			if (pw) {
				o.only_uid = (uint32_t)pw->pw_uid;
			} else if (parse_u64(arg, &v) || v >= UINT32_MAX) {
				return opt_error(&mount_cmd, "--only-uid: no user '%s'", arg);
			} else {
				o.only_uid = (uint32_t)v;
			}
			o.only_uid_set = 1;
			break;
		}
		case O_ONLY_UNDER: {
			char *list = strdup(arg), *tok, *save = NULL;

			if (!list)
				return opt_error(&mount_cmd, "out of memory");
			if (nr_lists == UNDER_MAX) {
				free(list);
				return opt_error(&mount_cmd, "--only-under: at most %d paths", UNDER_MAX);
			}
			under_lists[nr_lists++] = list;	/* the paths point into it; freed at exit */
			for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
				if (nr_under == UNDER_MAX) {
					return opt_error(&mount_cmd, "--only-under: at most %d paths",
							 UNDER_MAX);
				}
				if (!strcmp(tok, "..") || !strncmp(tok, "../", 3) || strstr(tok, "/../") ||
				    (strlen(tok) >= 3 && !strcmp(tok + strlen(tok) - 3, "/..")))
					return opt_error(&mount_cmd, "--only-under '%s': '..' is not "
							 "allowed (name the subtree below the mount "
							 "root)", tok);
				under[nr_under++] = tok;
			}
			if (!nr_under)
				return opt_error(&mount_cmd, "--only-under wants a path");
			break;
		}
		case O_ONLY_PID:
			if (parse_u64(arg, &v) || !v || v >= UINT32_MAX)
				return opt_error(&mount_cmd, "--only-pid wants a process id, not '%s'", arg);
			/* a process to come cannot be named: its pid is not known yet */
			if (kill((pid_t)v, 0) && errno == ESRCH)
				return opt_error(&mount_cmd, "--only-pid %s: no such process "
						 "(start it first, then mount)", arg);
			o.only_pid = (uint32_t)v;
			break;
		case O_SAVE_MARK:
			if (!*arg)
				return opt_error(&mount_cmd, "--save-on-mark wants a phase name");
			o.save_mark = arg;
			break;
		case O_SAVE_LAT: {
			char opname[32], *end;
			const char *colon = strchr(arg, ':');
			double ms;

			if (!colon || (size_t)(colon - arg) >= sizeof(opname))
				return opt_error(&mount_cmd, "--save-on-latency wants OP:MS, not '%s'", arg);
			memcpy(opname, arg, (size_t)(colon - arg));
			opname[colon - arg] = '\0';
			o.save_lat_op = iotap_trace_op_from_name(opname);
			errno = 0;
			ms = strtod(colon + 1, &end);
			if (o.save_lat_op <= 0 || errno || end == colon + 1 || *end || !(ms > 0) ||
			    ms > 3600e3)
				return opt_error(&mount_cmd, "--save-on-latency wants OP:MS (an op name "
						 "such as fsync, and milliseconds above 0), not '%s'", arg);
			o.save_lat_ns = (uint64_t)(ms * 1e6);
			if (!o.save_lat_ns)
				o.save_lat_ns = 1;
			break;
		}
		case O_ROT_KEEP:
			if (parse_u64(arg, &v) || v == 0 || v > 1000000)
				return opt_error(&mount_cmd, "--rotate-keep wants 1..1000000, not '%s'", arg);
			o.rotate_keep = (unsigned int)v;
			break;
		case O_FAIL_OP:
			o.fail_op = iotap_trace_op_from_name(arg);
			if (o.fail_op <= 0)
				return opt_error(&mount_cmd, "unknown op '%s'", arg);
			break;
		case O_FAIL_NTH:
			if (parse_u64(arg, &v) || v == 0)
				return opt_error(&mount_cmd, "--fail-nth wants a count from 1");
			o.fail_nth = v;
			break;
		case O_FAIL_ERRNO:
			if (parse_u64(arg, &v) || v == 0 || v > 4095)
				return opt_error(&mount_cmd, "--fail-errno wants a positive errno");
			o.fail_errno = (int)v;
			break;
		}
	}
	if (rc == 2)
		return 0;
	if (rc < 0)
		return 2;
	if (argc - optind != 2)
		return opt_error(&mount_cmd, argc - optind < 2 ? "BACKING and MOUNTPOINT are required"
							       : "too many arguments");
	if (o.ring_bytes && (o.trace_path || o.rotate_bytes || o.rotate_ns))
		return opt_error(&mount_cmd, "--ring keeps the trace in memory: not with --trace "
				 "or --rotate-size/--rotate-time");
	if ((o.save_mark || o.save_lat_op) && !o.save_to)
		return opt_error(&mount_cmd, "--save-on-mark and --save-on-latency need --save-to FILE");
	if (o.save_to && !o.ring_bytes)
		return opt_error(&mount_cmd, "--save-to saves a flight recorder: it needs --ring SIZE");
	if (o.save_to && !o.save_mark && !o.save_lat_op)
		return opt_error(&mount_cmd, "--save-to needs a trigger: --save-on-mark or "
				 "--save-on-latency");
	if (o.save_to) {
		/* an existing FILE is kept: saves go to FILE.1, FILE.2, ... */
		char *d = strdup(o.save_to);

		if (!d || access(dirname(d), W_OK)) {
			die_msg("--save-to '%s': cannot write in its directory: %s", o.save_to,
				strerror(d ? errno : ENOMEM));
			free(d);
			return 1;
		}
		free(d);
	}
	if (o.rotate_keep && !o.rotate_bytes && !o.rotate_ns)
		return opt_error(&mount_cmd, "--rotate-keep needs --rotate-size or --rotate-time");
	if (o.fail_op && (!o.fail_nth || !o.fail_errno))
		return opt_error(&mount_cmd, "--fail-op needs --fail-nth and --fail-errno");
	if (o.trace_path) {
		struct out_rules rules = { .force = o.force, .trace = 1 };

		if (out_check(o.trace_path, &rules) < 0)
			return 1;
		if (under_mountpoint(o.trace_path, argv[optind + 1]))
			return 1;
	}
	if (o.log_path) {
		/* appended to, so an existing log is kept, but never a trace */
		struct out_rules rules = { .append = 1 };

		if (o.trace_path && out_same(o.trace_path, o.log_path))
			return opt_error(&mount_cmd, "--trace and --log name the same file");
		if (out_check(o.log_path, &rules) < 0)
			return 1;
	}
	o.backing = argv[optind];
	o.mountpoint = argv[optind + 1];
	o.only_under = under;
	o.nr_only_under = nr_under;
	cmdline = iotap_argv_join("iotap", argc, argv);
	o.cmdline = cmdline;
	rc = iotap_fs_main(&o);
	free(cmdline);
	for (i = 0; i < nr_lists; i++)
		free(under_lists[i]);
	return rc;
}
