// SPDX-License-Identifier: MIT
/*
 * live.c - is a file being written right now
 *
 * A trace that a mount, a run or a replay is writing must never be
 * replaced or truncated by another writer, not even one given --force:
 * the first writer would go on into a deleted inode (rename) or under a
 * rewritten header (truncate), and its capture would be lost. Every
 * writer of a trace file holds an open file description lock on it
 * (fcntl F_OFD_SETLK, a write lock on the whole file) from open to close;
 * anyone about to replace the file asks whether such a lock is held.
 *
 * Why an OFD lock: it belongs to the open file description, not to the
 * process, so it is neither dropped when the process closes some other
 * descriptor of the same file (a POSIX lock would be, and a daemon may
 * open its own trace through the mount it serves) nor shared with a
 * second open of the same file in the same process (a rotation onto the
 * file being written conflicts with itself). It is held by the kernel, so
 * it goes with the writer however that ends (kill -9 included), and it is
 * on the inode, so hard links and symlinks lead to it too. It is
 * advisory: nothing but iotap's own writers and checks look at it.
 * A file system without locks (lock calls fail with ENOLCK, EINVAL,
 * EOPNOTSUPP) leaves the check blind rather than the writer refused.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "iotap_base.h"

static void whole_file(struct flock *fl)
{
	fl->l_type = F_WRLCK;
	fl->l_whence = SEEK_SET;
	fl->l_start = 0;
	fl->l_len = 0;		/* to the end, however far it grows */
	fl->l_pid = 0;		/* OFD locks want 0 */
}

int iotap_live_lock(int fd)
{
	struct flock fl;

	whole_file(&fl);
	if (!fcntl(fd, F_OFD_SETLK, &fl))
		return 0;
	if (errno == EAGAIN || errno == EACCES)
		return -ETXTBSY;
	return 0;	/* no locks here: the file is written unguarded */
}

int iotap_live_held_fd(int fd)
{
	struct flock fl;

	whole_file(&fl);
	if (fcntl(fd, F_OFD_GETLK, &fl))
		return 0;
	return fl.l_type != F_UNLCK;
}

int iotap_live_held(int dirfd, const char *path)
{
	struct stat st;
	int fd, ret;

	if (fstatat(dirfd, path, &st, 0) || !S_ISREG(st.st_mode))
		return 0;	/* nothing there, or no file a trace is written to */
	fd = openat(dirfd, path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return 0;	/* unreadable to us: not ours to judge */
	ret = iotap_live_held_fd(fd);
	close(fd);
	return ret;
}
