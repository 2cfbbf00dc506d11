// SPDX-License-Identifier: MIT
/*
 * replace.c - replace a file only once its successor is written
 *
 * `--force` over an existing trace must not destroy it before the new one
 * exists: a run or mount that fails, or is killed, keeps the old file. The
 * new file is written under a free sibling name ".NAME.XXXXXX" in the same
 * directory (so rename(2) is atomic) and renamed over the old one at the
 * end. mount (fs/session_trace.c) and run (workload/ctx.c) share this.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "iotap_base.h"

int iotap_replace_tmp(const char *path, char **tmp)
{
	const char *slash = strrchr(path, '/');
	const char *name = slash ? slash + 1 : path;
	int dirlen = slash ? (int)(slash - path) + 1 : 0;
	int fd;

	*tmp = NULL;
	if (!*name)
		return -EINVAL;
	if (asprintf(tmp, "%.*s.%s.XXXXXX", dirlen, path, name) < 0) {
		*tmp = NULL;
		return -ENOMEM;
	}
	fd = mkstemp(*tmp);
	if (fd < 0) {
		int ret = -errno;

		free(*tmp);
		*tmp = NULL;
		return ret;
	}
	close(fd);
	/* the caller creates it again, O_EXCL, with the mode it wants */
	unlink(*tmp);
	return 0;
}

int iotap_replace_commit(const char *tmp, const char *path)
{
	/* another writer's live file is never renamed over (live.c) */
	if (iotap_live_held(AT_FDCWD, path) > 0)
		return -ETXTBSY;
	return rename(tmp, path) ? -errno : 0;
}
