// SPDX-License-Identifier: MIT
/*
 * live_mount.c - asking a live iotap mount (live_mount.h)
 *
 * statfs first: a mount whose daemon is gone answers ENOTCONN, which gets
 * its own message with the way out. The xattr is asked only of a FUSE
 * mount: on any other file system a user.iotap.* name could be a real
 * attribute that someone set. EPERM from a FUSE mount is the daemon
 * refusing a caller that is not root, not a file system without the name.
 */
#include <errno.h>
#include <linux/magic.h>
#include <string.h>
#include <sys/vfs.h>
#include <sys/xattr.h>

#include "live_mount.h"
#include "opt.h"

void live_mount_not_ours(const char *mnt, const struct live_mount_words *w)
{
	error_msg("'%s' is not the root of an iotap mount%s", mnt, w->not_tail);
}

ssize_t live_mount_get(const char *mnt, const char *name, char *buf, size_t size,
		       struct stat *st, const struct live_mount_words *w)
{
	struct statfs sf;
	ssize_t n;

	if (statfs(mnt, &sf) || (st && stat(mnt, st))) {
		if (errno == ENOTCONN)
			error_msg("the daemon of the mount at '%s' is gone (killed or crashed); "
				"%s'iotap umount %s' removes the dead mount", mnt, w->undone, mnt);
		else
			error_msg("cannot %s '%s': %s", w->verb, mnt, strerror(errno));
		return -1;
	}
	n = sf.f_type == FUSE_SUPER_MAGIC ? getxattr(mnt, name, buf, size) : -1;
	if (n < 0 && sf.f_type == FUSE_SUPER_MAGIC && errno == EPERM) {
		error_msg("cannot %s '%s': only root (or CAP_SYS_ADMIN) may%s", w->perm_verb, mnt,
			w->perm_tail);
		return -1;
	}
	if (n <= 0) {
		live_mount_not_ours(mnt, w);
		return -1;
	}
	return n;
}
