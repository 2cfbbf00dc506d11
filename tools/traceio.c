// SPDX-License-Identifier: MIT
/*
 * traceio.c - opening traces from the CLI, with git-style error messages
 *
 * Library code returns -errno; the words for the trace reader's codes are
 * libiotap-analysis's (analysis_trace_open()), printed here for the
 * commands that read traces themselves (info, dump, replay).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "iotap_analysis.h"
#include "opt.h"
#include "traceio.h"

int open_trace(const char *path, unsigned int flags, struct iotap_trace_reader **out)
{
	struct analysis_err err;
	int ret;

	ret = analysis_trace_open(path, flags, out, &err);
	if (ret)
		die_msg("%s", err.msg);
	return ret;
}

int trace_perm_set(const char *path, const struct iotap_trace_perm *perm)
{
	struct stat st;
	int fd, ret;

	/* the file this command just wrote: never a link, nor someone else's file */
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		goto out;
	}
	if (fstat(fd, &st))
		ret = -errno;
	else if (!S_ISREG(st.st_mode) || st.st_uid != geteuid())
		ret = -EPERM;
	else
		ret = iotap_trace_perm_apply(fd, perm);
	close(fd);
out:
	if (ret)
		die_msg("cannot set the permissions of trace '%s' (--trace-mode, --trace-group): %s",
			path, strerror(-ret));
	return ret;
}

int warn_damage(const char *path, const struct iotap_trace_read_stats *st)
{
	int any = 0;

	if (st->chunks_bad || st->bytes_skipped > st->tail_bytes) {
		warn_msg("trace '%s' is damaged: %" PRIu64 " chunk(s) skipped, %" PRIu64
			 " bytes unreadable from offset %" PRIu64, path, st->chunks_bad,
			 st->bytes_skipped - st->tail_bytes, st->first_bad_offset);
		any = 1;
	}
	if (st->tail_bytes) {
		warn_msg("trace '%s' ends in an incomplete chunk (%" PRIu64
			 " bytes skipped): the writer was killed or the disk filled", path,
			 st->tail_bytes);
		any = 1;
	} else if (!st->has_end) {
		warn_msg("trace '%s' has no end record: the writer did not close it", path);
		any = 1;
	}
	if (st->lost_records) {
		warn_msg("trace '%s' lost %" PRIu64 " records (the recorder fell behind or its "
			 "disk filled)", path, st->lost_records);
		any = 1;
	}
	return any;
}

const char *fmt_bytes(uint64_t b, char *buf, size_t len)
{
	if (b < 1000)
		snprintf(buf, len, "%" PRIu64 " B", b);
	else if (b < 1000 * 1000)
		snprintf(buf, len, "%.1f kB", b / 1e3);
	else if (b < 1000ull * 1000 * 1000)
		snprintf(buf, len, "%.1f MB", b / 1e6);
	else if (b < 1000ull * 1000 * 1000 * 1000)
		snprintf(buf, len, "%.2f GB", b / 1e9);
	else
		snprintf(buf, len, "%.2f TB", b / 1e12);
	return buf;
}
