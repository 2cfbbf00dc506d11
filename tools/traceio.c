// SPDX-License-Identifier: MIT
/*
 * traceio.c - opening traces from the CLI, with git-style error messages
 *
 * Library code returns -errno; this is the one place that turns the trace
 * reader's codes into sentences for people.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "opt.h"
#include "traceio.h"

int open_trace(const char *path, unsigned int flags, struct iotap_trace_reader **out)
{
	unsigned int major = 0, minor = 0;
	int ret;

	ret = iotap_trace_reader_open(out, path, flags);
	if (!ret)
		return 0;
	switch (ret) {
	case -EPROTONOSUPPORT:
		iotap_trace_probe_version(path, &major, &minor);
		die_msg("cannot read trace '%s': format version %u.%u is newer than this iotap "
			"reads (%u.x); upgrade iotap", path, major, minor,
			IOTAP_TRACE_VERSION_MAJOR);
		break;
	case -ENODATA:
	case -EBADMSG:
		die_msg("cannot read trace '%s': %s", path, iotap_trace_strerror(ret));
		break;
	default:
		die_msg("cannot open trace '%s': %s", path, strerror(-ret));
		break;
	}
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
