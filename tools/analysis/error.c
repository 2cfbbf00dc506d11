// SPDX-License-Identifier: MIT
/*
 * error.c - what the analyses say when they fail, for the CLI to print
 *
 * The analysis library never writes to stderr: it returns -errno and puts
 * the sentence a person needs into a struct iotap_analysis_err (iotap_analysis.h).
 * The trace reader's codes become words here, once, for every analysis
 * and for the CLI's own trace opening (tools/traceio.c); that opening
 * also picks the decoding threads and calls the CLI's hook (progress).
 */
#include <errno.h>
#include <stdlib.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "analysis_i.h"

int analysis_err_set(struct iotap_analysis_err *err, int code, const char *fmt, ...)
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
static int threads_auto;

void iotap_analysis_on_open(void (*fn)(void *arg, const char *path, struct iotap_trace_reader *r),
		      void *arg)
{
	open_fn = fn;
	open_arg = arg;
}

void iotap_analysis_threads_auto(int on)
{
	threads_auto = on;
}

/*
 * Decoder threads for @r: IOTAP_READ_THREADS if set (0 says so to the
 * reader), else with iotap_analysis_threads_auto() two for a trace of
 * IOTAP_ANALYSIS_AUTO_BYTES or more when this process may run on two CPUs, else
 * one. Measured (BENCHMARKS.md, session 10): a second thread saves a
 * tenth of the wall time on an 11 MB capture and a 24 MB synthetic trace
 * for 5-9% more CPU, nothing on 2-5 MB captures (whose chunks are small)
 * for 14-15% more; more than two gain nothing, the reading thread being
 * the one that waits.
 */
static unsigned int threads_for(struct iotap_trace_reader *r)
{
	struct iotap_trace_read_stats st;
	const char *env = getenv("IOTAP_READ_THREADS");

	if (!threads_auto || (env && *env))
		return 0;
	iotap_trace_reader_stats(r, &st);
	if (st.file_bytes < IOTAP_ANALYSIS_AUTO_BYTES)
		return 1;
	if (iotap_pool_cpus() < 2)
		return 1;
	return 2;
}

void analysis_opened(const char *path, struct iotap_trace_reader *r)
{
	if (open_fn)
		open_fn(open_arg, path, r);
}

int iotap_analysis_trace_open(const char *path, unsigned int flags, struct iotap_trace_reader **out,
			struct iotap_analysis_err *err)
{
	unsigned int major = 0, minor = 0;
	int ret;

	ret = iotap_trace_reader_open(out, path, flags);
	if (!ret) {
		/* decoder threads: IOTAP_READ_THREADS=N, else threads_for()'s */
		ret = iotap_trace_reader_set_threads(*out, threads_for(*out));
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
