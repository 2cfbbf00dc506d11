// SPDX-License-Identifier: MIT
/*
 * creds.c - creations as the caller: fsuid, fsgid and the capabilities kept
 *
 * When the daemon runs as root, creations run with the caller's
 * fsuid/fsgid (setfsuid/setfsgid act on the calling thread only) so the
 * backing file belongs to the caller, as it would without the mount.
 * Changing the fsuid away from 0 drops the thread's file-system
 * capabilities; CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH are raised again
 * for the call, because the kernel has already checked the caller's
 * permissions on the mount (default_permissions, with the caller's
 * supplementary groups, which the daemon thread does not have). Both are
 * restored before the thread serves anything else.
 */
#include <errno.h>
#include <linux/capability.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fs_i.h"

static struct __user_cap_data_struct caller_caps[_LINUX_CAPABILITY_U32S_3];
static bool caller_caps_ok;

/* Once, at start-up: the effective set to use while acting as a caller. */
void fs_creds_init(struct fs_ctx *fs)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };

	if (!fs->privileged)
		return;
	if (syscall(SYS_capget, &hdr, caller_caps) < 0) {
		fs_log(FS_LOG_WARN, "capget: %s; files are created as the caller without "
		       "CAP_DAC_OVERRIDE", strerror(errno));
		return;
	}
	/* the effective set after setfsuid(non-zero): keep only the DAC overrides */
	caller_caps[0].effective &= ~((1u << CAP_CHOWN) | (1u << CAP_FOWNER) |
				      (1u << CAP_FSETID) | (1u << CAP_LINUX_IMMUTABLE) |
				      (1u << CAP_MKNOD));
	caller_caps[1].effective &= ~(1u << (CAP_MAC_OVERRIDE - 32));
	caller_caps[0].effective |= caller_caps[0].permitted &
				    ((1u << CAP_DAC_OVERRIDE) | (1u << CAP_DAC_READ_SEARCH));
	caller_caps_ok = true;
}

void fs_creds_push(struct fs_ctx *fs, fuse_req_t req, struct fs_creds *c)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };

	c->switched = false;
	if (!fs->privileged || (ctx->uid == 0 && ctx->gid == 0))
		return;
	setfsgid(ctx->gid);
	setfsuid(ctx->uid);
	c->switched = true;
	if (caller_caps_ok && ctx->uid != 0 &&
	    syscall(SYS_capset, &hdr, caller_caps) < 0 && fs_log_on(FS_LOG_DEBUG))
		fs_log(FS_LOG_DEBUG, "capset: %s", strerror(errno));
}

void fs_creds_pop(struct fs_creds *c)
{
	if (!c->switched)
		return;
	/* fsuid 0 gives the thread its permitted file capabilities back */
	setfsuid(0);
	setfsgid(0);
}
