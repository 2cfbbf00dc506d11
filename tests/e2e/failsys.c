// SPDX-License-Identifier: MIT
/*
 * failsys.c - LD_PRELOAD fault injection for the e2e cases
 *
 * IOTAP_FAIL_SYNCFS=N makes every syncfs(2) fail with errno N (5 is EIO),
 * as a filesystem reporting a writeback error would; unset, syncfs(2) is
 * the real system call. Nothing else is changed.
 */
#include <errno.h>
#include <stdlib.h>
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
