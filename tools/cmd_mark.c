// SPDX-License-Identifier: MIT
/*
 * cmd_mark.c - iotap mark MOUNTPOINT NAME [--end]
 *
 * Writes a phase marker into a live capture: the daemon answers a setxattr
 * of IOTAP_FS_XATTR_MARK on the mount's root itself (it never reaches the
 * backing filesystem) and records a PHASE record with the caller's pid and
 * CPU time. Reports then split the trace at the marker.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/xattr.h>

#include "cmds.h"
#include "iotap_fs.h"
#include "live_mount.h"
#include "opt.h"

static int end_opt;		/* --end */

static const struct opt_desc mark_opts[] = {
	OPT_BOOL(0, "end", &end_opt, "end the phase NAME instead of starting it"),
	OPT_END(),
};

static const struct opt_cmd mark_cmd = {
	.name = "mark",
	.usage = "MOUNTPOINT NAME [--end]",
	.summary = "Start a phase called NAME in the capture running at MOUNTPOINT.\n"
		   "The phase lasts until the next mark or --end.",
	.opts = mark_opts,
	.footer = "example:\n  iotap mark /srv/pgdata checkpoint && psql -c CHECKPOINT",
};

/*
 * Is @mnt the root of a live iotap mount? Only there does the daemon answer
 * the mark itself; anywhere else setxattr would leave a real user.iotap.mark
 * on some directory and the phase would be lost without a word. Says why not.
 */
static int is_iotap_root(const char *mnt)
{
	static const struct live_mount_words words = {
		.verb = "mark", .perm_verb = "mark",
		.perm_tail = ", or the owner of the mount's root when it was mounted with "
			     "--allow-mark-owner",
		.undone = "nothing was marked. ", .not_tail = "; nothing was marked",
	};
	char buf[32];

	return live_mount_get(mnt, IOTAP_FS_XATTR_PID, buf, sizeof(buf), NULL, &words) > 0;
}

int cmd_mark(int argc, char **argv)
{
	const char *mnt, *name;
	size_t i;
	int rc;

	rc = opt_parse(&mark_cmd, argc, argv);
	if (rc >= 0)
		return rc;
	if (argc - optind != 2)
		return opt_error(&mark_cmd, argc - optind < 2 ? "MOUNTPOINT and NAME are required"
							       : "too many arguments");
	mnt = argv[optind];
	name = argv[optind + 1];
	if (!*name || strlen(name) > 255)
		return opt_error(&mark_cmd, "NAME must be 1 to 255 bytes");
	for (i = 0; name[i]; i++)
		if ((unsigned char)name[i] < 0x20)
			return opt_error(&mark_cmd, "NAME must not contain control characters");
	if (!is_iotap_root(mnt))
		return 1;
	if (setxattr(mnt, end_opt ? IOTAP_FS_XATTR_MARK_END : IOTAP_FS_XATTR_MARK, name,
		     strlen(name), 0) < 0) {
		if (errno == ESRCH && end_opt)
			error_msg("phase '%s' is not open on '%s' (never begun, or ended already): "
				"nothing to end", name, mnt);
		else if (errno == ENOENT || errno == EACCES || errno == EPERM)
			error_msg("cannot mark '%s': %s", mnt, strerror(errno));
		else
			error_msg("'%s' is not the root of an iotap mount", mnt);
		return 1;
	}
	return 0;
}
