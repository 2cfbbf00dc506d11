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
#include "opt.h"

enum { O_END };

static const struct opt_desc mark_opts[] = {
	[O_END] = { "end", 0, NULL, "end the phase NAME instead of starting it" },
	{ NULL },
};

static const struct opt_cmd mark_cmd = {
	.name = "mark",
	.usage = "MOUNTPOINT NAME [--end]",
	.summary = "Start a phase called NAME in the capture running at MOUNTPOINT.\n"
		   "The phase lasts until the next mark or --end.",
	.opts = mark_opts,
	.footer = "example:\n  iotap mark /srv/pgdata checkpoint && psql -c CHECKPOINT",
};

int cmd_mark(int argc, char **argv)
{
	const char *arg, *mnt, *name;
	int idx, rc, end = 0;
	size_t i;

	while ((rc = opt_next(&mark_cmd, argc, argv, &idx, &arg)) == 1)
		if (idx == O_END)
			end = 1;
	if (rc == 2)
		return 0;
	if (rc < 0)
		return 2;
	if (argc - optind != 2)
		return opt_error(&mark_cmd, "MOUNTPOINT and NAME are required");
	mnt = argv[optind];
	name = argv[optind + 1];
	if (!*name || strlen(name) > 255)
		return opt_error(&mark_cmd, "NAME must be 1 to 255 bytes");
	for (i = 0; name[i]; i++)
		if ((unsigned char)name[i] < 0x20)
			return opt_error(&mark_cmd, "NAME must not contain control characters");
	if (setxattr(mnt, end ? IOTAP_FS_XATTR_MARK_END : IOTAP_FS_XATTR_MARK, name,
		     strlen(name), 0) < 0) {
		if (errno == ENOENT || errno == EACCES || errno == EPERM)
			die_msg("cannot mark '%s': %s", mnt, strerror(errno));
		else
			die_msg("'%s' is not the root of an iotap mount", mnt);
		return 1;
	}
	return 0;
}
