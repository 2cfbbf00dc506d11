// SPDX-License-Identifier: MIT
/*
 * log.c - the daemon's log: one line per message, levels ERR..DEBUG
 *
 * Every message of fs/ and of libfuse (installed with fuse_set_log_func())
 * goes through fs_vlog(). A line is formatted on the stack and written
 * with a single write(2) to an O_APPEND fd, so lines from concurrent worker
 * threads never interleave and no lock is taken. During start-up lines are
 * held in memory until the sink is chosen (the log file, or stderr in the
 * foreground once mounted), so a refused mount prints only its one error
 * message; the sink is set before any worker thread exists, and
 * fs_log_level likewise.
 *
 * The last ERR line is kept so that start-up failures inside libfuse
 * (fuse_session_new, fuse_session_mount) can be shown to the user by the
 * parent process; after start-up it is only informative.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "fs_i.h"

int fs_log_level = FS_LOG_INFO;
static int log_fd = -1;
static char last_error[256];
/* lines logged while no sink is chosen yet (start-up only, one thread) */
static bool holding;
static char held[4096];
static size_t held_len;

static const char *level_name(int level)
{
	switch (level) {
	case FUSE_LOG_EMERG:
	case FUSE_LOG_ALERT:
	case FUSE_LOG_CRIT:
	case FUSE_LOG_ERR:
		return "ERR";
	case FUSE_LOG_WARNING:
		return "WARN";
	case FUSE_LOG_NOTICE:
	case FUSE_LOG_INFO:
		return "INFO";
	default:
		return "DEBUG";
	}
}

static void fs_vlog(int level, const char *fmt, va_list ap)
{
	char line[1024];
	struct timespec ts;
	struct tm tm;
	size_t n, msg;
	int len;

	if (!fs_log_on(level))
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	localtime_r(&ts.tv_sec, &tm);
	n = strftime(line, sizeof(line), "%Y-%m-%d %H:%M:%S", &tm);
	len = snprintf(line + n, sizeof(line) - n, ".%03ld iotap[%d] %s: ",
		       ts.tv_nsec / 1000000, (int)getpid(), level_name(level));
	if (len < 0)
		return;
	msg = n += len;
	len = vsnprintf(line + n, sizeof(line) - n, fmt, ap);
	if (len < 0)
		return;
	n += len;
	if (n > sizeof(line) - 2)
		n = sizeof(line) - 2;
	/* libfuse ends its messages with a newline, ours do not */
	while (n > msg && line[n - 1] == '\n')
		n--;
	if (level <= FS_LOG_ERR)
		snprintf(last_error, sizeof(last_error), "%.*s", (int)(n - msg), line + msg);
	line[n++] = '\n';
	if (holding) {
		if (held_len + n <= sizeof(held)) {
			memcpy(held + held_len, line, n);
			held_len += n;
		}
	} else if (log_fd >= 0) {
		ssize_t ret = write(log_fd, line, n);

		(void)ret;	/* a full log disk must not stop the mount */
	}
}

void fs_log(int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fs_vlog(level, fmt, ap);
	va_end(ap);
}

/*
 * libfuse sometimes builds one line from several fuse_log() calls ("fuse:
 * unknown option(s): `" ... "-o x'\n"); pieces without a newline are
 * collected per thread and logged as one line.
 */
static void fuse_log_sink(enum fuse_log_level level, const char *fmt, va_list ap)
{
	static __thread char part[512];
	static __thread size_t part_len;
	size_t n;
	int len;

	len = vsnprintf(part + part_len, sizeof(part) - part_len, fmt, ap);
	if (len < 0)
		return;
	n = part_len + len;
	if (n >= sizeof(part))
		n = sizeof(part) - 1;
	if (n > 0 && part[n - 1] != '\n' && n < sizeof(part) - 1) {
		part_len = n;
		return;
	}
	part_len = 0;
	fs_log(level, "%.*s", (int)n, part);
}

void fs_log_hold(void)
{
	holding = true;
	held_len = 0;
}

void fs_log_set_fd(int fd)
{
	if (holding && fd >= 0 && held_len) {
		ssize_t ret = write(fd, held, held_len);

		(void)ret;
	}
	holding = false;
	held_len = 0;
	log_fd = fd;
}

void fs_log_install_fuse(void)
{
	fuse_set_log_func(fuse_log_sink);
}

const char *fs_log_last_error(void)
{
	return last_error;
}
