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
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "iotap_base.h"
#include "iotap_fs.h"
#include "iotap_trace.h"
#include "opt.h"

enum { O_TRACE, O_FG, O_CACHE, O_FORCE, O_OPTS, O_LOG, O_THREADS, O_SAMPLE, O_FDCACHE,
       O_DEBUG, O_ATTR_TIMEOUT, O_ENTRY_TIMEOUT, O_TRANSPORT, O_MAX_WRITE, O_FAIL_OP, O_FAIL_NTH, O_FAIL_ERRNO };

static const struct opt_desc mount_opts[] = {
	[O_TRACE] = { "trace", 't', "FILE", "write the trace to FILE (without it: pass through only)" },
	[O_FG] = { "foreground", 'f', NULL, "stay in the foreground; log to stderr" },
	[O_CACHE] = { "cache", 0, NULL, "page-cache mode: kernel caching and writeback cache;\n"
		      "records what reaches the layer below the cache (default: direct_io,\n"
		      "one application read()/write() = one record)" },
	[O_FORCE] = { "force", 0, NULL, "overwrite an existing trace file" },
	[O_OPTS] = { "options", 'o', "OPTS", "extra FUSE mount options (comma-separated)" },
	[O_LOG] = { "log", 0, "FILE", "daemon log (default: stderr with -f, else TRACE.log)" },
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
			  "default auto, or $IOTAP_TRANSPORT" },
	[O_MAX_WRITE] = { "max-write", 0, "SIZE", "bytes per WRITE request, 4k..1M (default 1M, libfuse\n"
			  "3.14's most): a write() above it is several records" },
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
		"  iotap mount /data /mnt/data --trace cap.iotap --cache",
};

int cmd_mount(int argc, char **argv)
{
	struct iotap_fs_opts o = { 0 };
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
			if (iotap_size_parse(arg, 1, &v) || v < 4096 || v > 1024 * 1024)
				return opt_error(&mount_cmd, "--max-write wants 4k..1M (libfuse 3.14 "
						 "reads requests into 1 MiB + 4 KiB), not '%s'", arg);
			o.max_write = (unsigned int)v;
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
	if (o.fail_op && (!o.fail_nth || !o.fail_errno))
		return opt_error(&mount_cmd, "--fail-op needs --fail-nth and --fail-errno");
	if (o.trace_path) {
		struct out_rules rules = { .force = o.force, .trace = 1 };

		if (out_check(o.trace_path, &rules) < 0)
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
	cmdline = iotap_argv_join("iotap", argc, argv);
	o.cmdline = cmdline;
	rc = iotap_fs_main(&o);
	free(cmdline);
	return rc;
}
