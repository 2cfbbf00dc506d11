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
#include <mntent.h>
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

/* What the options set. */
static struct umount_args {
	int lazy;			/* --lazy */
	uint64_t timeout_s;		/* --timeout */
} args = { .timeout_s = 60 };

static const struct opt_desc umount_opts[] = {
	OPT_BOOL('z', "lazy", &args.lazy, "lazy unmount (detach now, finish when no longer busy)"),
	OPT_U64(0, "timeout", &args.timeout_s, "SECONDS",
		"wait at most this long for the trace (default 60)", 0, UINT64_MAX,
		"--timeout wants seconds, not '%s'"),
	OPT_END(),
};

static const struct opt_cmd umount_cmd = {
	.name = "umount",
	.usage = "MOUNTPOINT [--lazy] [--timeout SECONDS]",
	.summary = "Unmount an iotap capture and wait until its trace is written and closed.",
	.opts = umount_opts,
};

/*
 * Does the mount table list an iotap mount at @mnt? For a mount whose daemon
 * is gone, where every stat(2) fails with ENOTCONN: the path is made
 * absolute from its parent's realpath, never by a stat of @mnt itself.
 */
static int listed_as_iotap(const char *mnt)
{
	char *copy = strdup(mnt), *base, *parent = NULL, *path = NULL;
	const char *dir;
	struct mntent *me;
	size_t len;
	FILE *f;
	int found = 0;

	if (!copy)
		return 0;
	for (len = strlen(copy); len > 1 && copy[len - 1] == '/'; len--)
		copy[len - 1] = '\0';
	base = strrchr(copy, '/');
	if (base) {
		*base++ = '\0';
		dir = *copy ? copy : "/";
	} else {
		base = copy;
		dir = ".";
	}
	parent = realpath(dir, NULL);
	if (!parent || asprintf(&path, "%s%s%s", parent, strcmp(parent, "/") ? "/" : "",
				base) < 0)
		path = NULL;
	f = path ? setmntent("/proc/self/mounts", "re") : NULL;
	/* the last mount at @path is the one on top */
	while (f && (me = getmntent(f)))
		if (!strcmp(me->mnt_dir, path))
			found = !strcmp(me->mnt_type, "fuse.iotap");
	if (f)
		endmntent(f);
	free(path);
	free(parent);
	free(copy);
	return found;
}

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
	const char *mnt;
	uint64_t waited_ms = 0;
	int rc;
	char buf[32];
	ssize_t n;
	pid_t daemon = 0;

	rc = opt_parse(&umount_cmd, argc, argv);
	if (rc >= 0)
		return rc;
	if (argc - optind != 1)
		return opt_error(&umount_cmd, argc - optind ? "too many arguments"
							    : "MOUNTPOINT is required");
	mnt = argv[optind];

	n = getxattr(mnt, IOTAP_FS_XATTR_PID, buf, sizeof(buf) - 1);
	if (n > 0) {
		buf[n] = '\0';
		daemon = (pid_t)atoi(buf);
	} else if (errno == ENOTCONN && listed_as_iotap(mnt)) {
		/* killed (kill -9, the OOM killer) or crashed: nothing to wait for */
		warn_msg("the daemon of iotap mount '%s' is gone (killed or crashed); removing "
			 "the dead mount. Its trace holds what the daemon had written, without "
			 "an end record ('iotap info TRACE' says what is left)", mnt);
	} else if (errno == ENOTCONN) {
		error_msg("'%s' is a dead FUSE mount that is not iotap's; 'fusermount3 -u %s' "
			"removes it", mnt, mnt);
		return 1;
	} else if (errno == ENOENT || errno == ENOTDIR) {
		error_msg("cannot unmount '%s': %s", mnt, strerror(errno));
		return 1;
	} else {
		error_msg("'%s' is not an iotap mount", mnt);
		return 1;
	}
	rc = run_fusermount(mnt, args.lazy);
	if (rc == -ENOENT) {
		error_msg("cannot unmount '%s': fusermount3 not found (install fuse3)", mnt);
		return 1;
	}
	if (rc) {
		error_msg("cannot unmount '%s': it is busy (try --lazy)", mnt);
		return 1;
	}
	while (daemon > 0 && kill(daemon, 0) == 0) {
		struct timespec ts = { 0, 50 * 1000 * 1000 };

		if (waited_ms >= args.timeout_s * 1000) {
			error_msg("daemon %d still running after %llu s; the trace may be incomplete",
				(int)daemon, (unsigned long long)args.timeout_s);
			return 1;
		}
		nanosleep(&ts, NULL);
		waited_ms += 50;
	}
	return 0;
}
