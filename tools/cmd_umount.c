// SPDX-License-Identifier: MIT
/*
 * cmd_umount.c - iotap umount MOUNTPOINT [--lazy] [--timeout S]
 *
 * Unmounts an iotap capture and waits until its daemon has exited, so that
 * when the command returns the trace is complete and closed. The daemon's
 * pid is asked of the mount itself (getxattr IOTAP_FS_XATTR_PID on the
 * root) before unmounting.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "cmds.h"
#include "iotap_fs.h"
#include "opt.h"

enum { O_LAZY, O_TIMEOUT };

static const struct opt_desc umount_opts[] = {
	[O_LAZY] = { "lazy", 'z', NULL, "lazy unmount (detach now, finish when no longer busy)" },
	[O_TIMEOUT] = { "timeout", 0, "SECONDS", "wait at most this long for the trace (default 60)" },
	{ NULL },
};

static const struct opt_cmd umount_cmd = {
	.name = "umount",
	.usage = "MOUNTPOINT [--lazy] [--timeout SECONDS]",
	.summary = "Unmount an iotap capture and wait until its trace is written and closed.",
	.opts = umount_opts,
};

static int run_fusermount(const char *mnt, int lazy)
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		if (lazy)
			execlp("fusermount3", "fusermount3", "-u", "-z", "--", mnt, (char *)NULL);
		else
			execlp("fusermount3", "fusermount3", "-u", "--", mnt, (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) < 0)
		return -errno;
	if (!WIFEXITED(st))
		return -EINTR;
	return WEXITSTATUS(st) == 127 ? -ENOENT : WEXITSTATUS(st) ? -EBUSY : 0;
}

int cmd_umount(int argc, char **argv)
{
	const char *arg, *mnt;
	int idx, rc, lazy = 0;
	uint64_t timeout_s = 60, waited_ms = 0;
	char buf[32];
	ssize_t n;
	pid_t daemon = 0;

	while ((rc = opt_next(&umount_cmd, argc, argv, &idx, &arg)) == 1) {
		switch (idx) {
		case O_LAZY: lazy = 1; break;
		case O_TIMEOUT:
			if (parse_u64(arg, &timeout_s))
				return opt_error(&umount_cmd, "--timeout wants seconds, not '%s'", arg);
			break;
		}
	}
	if (rc == 2)
		return 0;
	if (rc < 0)
		return 2;
	if (argc - optind != 1)
		return opt_error(&umount_cmd, argc - optind ? "too many arguments"
							    : "MOUNTPOINT is required");
	mnt = argv[optind];

	n = getxattr(mnt, IOTAP_FS_XATTR_PID, buf, sizeof(buf) - 1);
	if (n > 0) {
		buf[n] = '\0';
		daemon = (pid_t)atoi(buf);
	} else if (errno == ENOENT || errno == ENOTDIR) {
		die_msg("cannot unmount '%s': %s", mnt, strerror(errno));
		return 1;
	} else {
		die_msg("'%s' is not an iotap mount", mnt);
		return 1;
	}
	rc = run_fusermount(mnt, lazy);
	if (rc == -ENOENT) {
		die_msg("cannot unmount '%s': fusermount3 not found (install fuse3)", mnt);
		return 1;
	}
	if (rc) {
		die_msg("cannot unmount '%s': it is busy (try --lazy)", mnt);
		return 1;
	}
	while (daemon > 0 && kill(daemon, 0) == 0) {
		struct timespec ts = { 0, 50 * 1000 * 1000 };

		if (waited_ms >= timeout_s * 1000) {
			die_msg("daemon %d still running after %llu s; the trace may be incomplete",
				(int)daemon, (unsigned long long)timeout_s);
			return 1;
		}
		nanosleep(&ts, NULL);
		waited_ms += 50;
	}
	return 0;
}
