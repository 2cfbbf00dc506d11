/* SPDX-License-Identifier: MIT */
/*
 * live_mount.h - asking a live iotap mount, the one check that it is one
 *
 * The daemon answers getxattr/setxattr of the IOTAP_FS_XATTR_* names on
 * its mount's root itself (fs/control.c). A command that talks to it
 * first asks the root for one of them: only a FUSE mount whose daemon
 * answers is an iotap mount. Each command says what it could not do in
 * its own words: one struct live_mount_words row per command.
 */
#ifndef IOTAP_LIVE_MOUNT_H
#define IOTAP_LIVE_MOUNT_H

#include <sys/stat.h>
#include <sys/types.h>

/*
 * struct live_mount_words - how a command's messages name what was not done
 * @verb:      "cannot VERB 'MNT': REASON" ("control", "mark", "read")
 * @perm_verb: "cannot PERM_VERB 'MNT': only root (or CAP_SYS_ADMIN) may..."
 * @perm_tail: said after "may" (who else may), or ""
 * @undone:    said after "is gone (killed or crashed); " when the daemon
 *             is gone ("nothing was marked. "), or ""
 * @not_tail:  said after "'MNT' is not the root of an iotap mount", or ""
 */
struct live_mount_words {
	const char *verb, *perm_verb, *perm_tail, *undone, *not_tail;
};

/*
 * live_mount_get - read the xattr @name of the live iotap mount @mnt
 * @buf, @size: as getxattr(2)'s
 * @st:         if not NULL, filled with stat(2) of @mnt
 * @w:          the calling command's words
 *
 * Return: the length read (> 0), or -1 after saying why not: the daemon
 * is gone, @mnt cannot be reached, only root may ask, or @mnt is not the
 * root of an iotap mount.
 */
ssize_t live_mount_get(const char *mnt, const char *name, char *buf, size_t size,
		       struct stat *st, const struct live_mount_words *w);

/* Say that @mnt is not the root of an iotap mount, in @w's words. */
void live_mount_not_ours(const char *mnt, const struct live_mount_words *w);

#endif
