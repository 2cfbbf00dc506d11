// SPDX-License-Identifier: MIT
/*
 * failsys.c - LD_PRELOAD fault injection for the e2e cases
 *
 * IOTAP_FAIL_SYNCFS=N makes every syncfs(2) fail with errno N (5 is EIO),
 * as a filesystem reporting a writeback error would; unset, syncfs(2) is
 * the real system call.
 *
 * IOTAP_SLOW_MS=N makes the daemon's fsync(2) and fdatasync(2) (with
 * IOTAP_SLOW_FSYNC=1) and its pread(2) and preadv2(2) of exactly
 * IOTAP_SLOW_LEN bytes (every one with IOTAP_SLOW_LEN=any) sleep N
 * milliseconds first, and so does its pwrite(2) of exactly
 * IOTAP_SLOW_WLEN bytes: a slow disk, or a read that blocks, for the
 * transport cases (fs-uring). IOTAP_SLOW_WRITE=TEXT makes its write(2)s
 * whose bytes contain TEXT sleep too (a log line: fs-uring-start holds the
 * daemon at a point of its start-up). With IOTAP_SLOW_IF=PATH they are slow only
 * while PATH exists (fs-uring-fsync turns the slow disk on once its
 * filesystem is made). Nothing else is changed.
 */
#include <errno.h>
#include <fcntl.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <sys/syscall.h>
#include <unistd.h>

int syncfs(int fd)
{
	const char *e = getenv("IOTAP_FAIL_SYNCFS");
	int err = e ? atoi(e) : 0;

	if (err > 0) {
		errno = err;
		return -1;
	}
	return (int)syscall(SYS_syncfs, fd);
}

static void slow(void)
{
	const char *e = getenv("IOTAP_SLOW_MS"), *gate = getenv("IOTAP_SLOW_IF");
	long ms = e ? atol(e) : 0;
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	if (gate && syscall(SYS_faccessat, AT_FDCWD, gate, F_OK) != 0)
		return;
	if (ms > 0)
		while (nanosleep(&ts, &ts) && errno == EINTR)
			;
}

static int slow_fsync(void)
{
	const char *e = getenv("IOTAP_SLOW_FSYNC");

	return e && *e == '1';
}

int fsync(int fd)
{
	if (slow_fsync())
		slow();
	return (int)syscall(SYS_fsync, fd);
}

int fdatasync(int fd)
{
	if (slow_fsync())
		slow();
	return (int)syscall(SYS_fdatasync, fd);
}

static int slow_len(size_t count)
{
	const char *e = getenv("IOTAP_SLOW_LEN");

	return e && (!strcmp(e, "any") || (size_t)atol(e) == count);
}

/* pread64 too: _FILE_OFFSET_BITS=64 names it so */
ssize_t pread(int fd, void *buf, size_t count, off_t off)
{
	if (slow_len(count))
		slow();
	return syscall(SYS_pread64, fd, buf, count, off);
}

/* preadv64v2 too (the io_uring transport's RWF_NOWAIT reads) */
ssize_t preadv2(int fd, const struct iovec *iov, int iovcnt, off_t off, int flags)
{
	size_t count = 0;
	int i;

	for (i = 0; i < iovcnt; i++)
		count += iov[i].iov_len;
	if (slow_len(count))
		slow();
	return syscall(SYS_preadv2, fd, iov, iovcnt, (long)off, 0L, flags);
}

ssize_t write(int fd, const void *buf, size_t count)
{
	const char *e = getenv("IOTAP_SLOW_WRITE");

	if (e && *e && memmem(buf, count, e, strlen(e)))
		slow();
	return syscall(SYS_write, fd, buf, count);
}

ssize_t pwrite(int fd, const void *buf, size_t count, off_t off)
{
	const char *e = getenv("IOTAP_SLOW_WLEN");

	if (e && (size_t)atol(e) == count)
		slow();
	return syscall(SYS_pwrite64, fd, buf, count, off);
}
