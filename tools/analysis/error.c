// SPDX-License-Identifier: MIT
/*
 * error.c - what the analyses say when they fail, for the CLI to print
 *
 * The analysis library never writes to stderr: it returns -errno and puts
 * the sentence a person needs into a struct analysis_err (iotap_analysis.h).
 * The trace reader's codes become words here, once, for every analysis
 * and for the CLI's own trace opening (tools/traceio.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "iotap_analysis.h"

int analysis_err_set(struct analysis_err *err, int code, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return code;
	err->code = code;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return code;
}

static void (*open_fn)(void *arg, const char *path, struct iotap_trace_reader *r);
static void *open_arg;

void analysis_on_open(void (*fn)(void *arg, const char *path, struct iotap_trace_reader *r),
		      void *arg)
{
	open_fn = fn;
	open_arg = arg;
}

int analysis_trace_open(const char *path, unsigned int flags, struct iotap_trace_reader **out,
			struct analysis_err *err)
{
	unsigned int major = 0, minor = 0;
	int ret;

	ret = iotap_trace_reader_open(out, path, flags);
	if (!ret) {
		/* decoder threads: IOTAP_READ_THREADS=N, else the main thread alone */
		ret = iotap_trace_reader_set_threads(*out, 0);
		if (ret != -EINVAL) {
			if (open_fn)
				open_fn(open_arg, path, *out);
			return 0;
		}
		iotap_trace_reader_close(*out);
		*out = NULL;
		return analysis_err_set(err, ret, "IOTAP_READ_THREADS='%s': want a thread "
					"count of 1 or more", getenv("IOTAP_READ_THREADS"));
	}
	switch (ret) {
	case -EPROTONOSUPPORT:
		iotap_trace_probe_version(path, &major, &minor);
		return analysis_err_set(err, ret, "cannot read trace '%s': format version %u.%u is "
					"newer than this iotap reads (%u.x); upgrade iotap", path,
					major, minor, IOTAP_TRACE_VERSION_MAJOR);
	case -ENODATA:
	case -EBADMSG:
		return analysis_err_set(err, ret, "cannot read trace '%s': %s", path,
					iotap_trace_strerror(ret));
	default:
		return analysis_err_set(err, ret, "cannot open trace '%s': %s", path,
					strerror(-ret));
	}
}
