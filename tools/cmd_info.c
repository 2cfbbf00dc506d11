// SPDX-License-Identifier: MIT
/*
 * cmd_info.c - iotap info TRACE... [--strict]
 *
 * The structural verifier (blkrawverify's job): reads every chunk of the
 * trace and prints the header, record counts by type, time span,
 * compression, lost records and the damage found. With --strict any
 * damage, lost record or missing end record makes the exit status 1.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cmds.h"
#include "iotap_analysis.h"
#include "opt.h"
#include "traceio.h"

/* What the options set (--progress 1, --no-progress -1). */
static struct info_args {
	int strict, progress;
} args;

static const struct opt_desc info_opts[] = {
	OPT_BOOL(0, "strict", &args.strict, "exit 1 if the trace is damaged, incomplete or lost records"),
	OPT_PROGRESS_INT(&args.progress),
	OPT_NO_PROGRESS_INT(&args.progress),
	OPT_END(),
};

static const struct opt_cmd info_cmd = {
	.name = "info",
	.usage = "TRACE... [--strict] [--progress | --no-progress]",
	.summary = "Read a whole trace and print its header, record counts, time span,\n"
		   "compression and any damage (skipped chunks, a torn tail, lost records).",
	.opts = info_opts,
};

static void line(const char *k, const char *v)
{
	if (v && *v)
		printf("%-14s %s\n", k, v);
}

/*
 * The value of KEY=VALUE in the comma-separated mount options into @out
 * ("" if absent).
 */
static void mount_opt(const char *opts, const char *key, char *out, size_t size)
{
	size_t klen = strlen(key);
	const char *p = opts;

	out[0] = '\0';
	while (p && *p) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);

		if (len > klen && !strncmp(p, key, klen) && p[klen] == '=')
			snprintf(out, size, "%.*s", (int)(len - klen - 1), p + klen + 1);
		p = e ? e + 1 : NULL;
	}
}

/* The transport line of a capture: from mount_opts (older traces: /dev/fuse). */
static void transport_line(const struct iotap_trace_header *h)
{
	char t[64], why[256], buf[340];

	if (h->source != IOTAP_SOURCE_CAPTURE)
		return;
	mount_opt(h->mount_opts, "transport", t, sizeof(t));
	mount_opt(h->mount_opts, "transport_why", why, sizeof(why));
	if (!t[0])
		snprintf(buf, sizeof(buf), "dev (not recorded: written before iotap had a choice)");
	else
		snprintf(buf, sizeof(buf), "%s%s%s%s", t, why[0] ? " (" : "", why, why[0] ? ")" : "");
	line("transport", buf);
}

/*
 * The FUSE request limits of a capture (header tag fuse, or the NOTE the
 * daemon wrote when the kernel's INIT answer differed from it) and what
 * they did to the records: calls that arrived in pieces (larger than
 * max_write, or cut at the page cap), and the sysctl that would have kept
 * each max_write-sized one whole.
 */
static void requests(const char *fuse, uint32_t mode, uint64_t cut)
{
	uint64_t mw = iotap_trace_fuse_field(fuse, "max_write");
	uint64_t pages = iotap_trace_fuse_field(fuse, "max_pages");
	uint64_t want = iotap_trace_fuse_field(fuse, "max_pages_want");
	uint64_t limit = iotap_trace_fuse_field(fuse, "max_pages_limit");
	uint64_t page = iotap_trace_fuse_field(fuse, "page_size");
	int exact = iotap_trace_fuse_field(fuse, "calls") == 1;
	uint64_t fit;

	if (!mw || !pages || !page)
		return;
	printf("%-14s max_write %" PRIu64 ", max_pages %" PRIu64 " (%" PRIu64 " wanted",
	       "requests", mw, pages, want);
	if (limit)
		printf(", fs.fuse.max_pages_limit %" PRIu64, limit);
	printf(")\n");
	if (mode == IOTAP_MODE_CACHE) {
		printf("%-14s (cache mode: records are the kernel's page-cache requests, not the "
		       "application's calls)\n", "");
		return;
	}
	fit = (pages - 1) * page < mw ? (pages - 1) * page : mw;
	if (pages >= want)
		printf("%-14s one read() or write() of up to %" PRIu64 " bytes is one record\n",
		       "", mw);
	else
		printf("%-14s a read() or write() of more than %" PRIu64 " bytes from a buffer "
		       "that does not start on a page is cut in two records\n", "", fit);
	if (exact)
		printf("%-14s a larger call is several records, flagged "
		       "cut/cont, report and replay join them\n", "");
	if (cut && exact)
		printf("%-14s %" PRIu64 " call(s) arrived in pieces: flagged cut (all but the "
		       "last) and cont (all but the first), report and replay join them\n",
		       "split", cut);
	else if (cut)
		printf("%-14s %" PRIu64 " call(s) were cut: their first piece is flagged cut, "
		       "report and replay join the pieces\n", "split", cut);
	if (pages < want && limit && limit < want)
		printf("%-14s 'sysctl -w fs.fuse.max_pages_limit=%" PRIu64 "' before mounting "
		       "keeps each call of up to %" PRIu64 " bytes one request\n", "", want, mw);
}

static int info_one(const char *path, int strict)
{
	struct iotap_trace_reader *r;
	struct iotap_trace_read_stats st;
	const struct iotap_trace_header *h;
	struct iotap_trace_rec rec;
	char buf[256], b1[32], b2[32];
	char fuse_note[256] = "";
	uint64_t ops, cut = 0;
	int ret, t, damaged;
	time_t secs;
	struct tm tm;

	if (open_trace_reader(path, IOTAP_TRACE_READ_FILE_ORDER, &r))
		return 1;
	while ((ret = iotap_trace_reader_next(r, &rec)) > 0) {
		/* a call's first piece: the only one flagged cut alone */
		if (rec.type == IOTAP_REC_OP &&
		    (rec.flags & (IOTAP_OPF_CUT | IOTAP_OPF_CONT)) == IOTAP_OPF_CUT &&
		    (rec.op == IOTAP_OP_READ || rec.op == IOTAP_OP_WRITE))
			cut++;
		else if (rec.type == IOTAP_REC_NOTE && rec.name && !strncmp(rec.name, "fuse: ", 6))
			snprintf(fuse_note, sizeof(fuse_note), "%s", rec.name + 6);
	}
	iotap_trace_reader_stats(r, &st);
	h = iotap_trace_reader_header(r);

	line("trace", path);
	snprintf(buf, sizeof(buf), "%u.%u", h->version_major, h->version_minor);
	line("format", buf);
	snprintf(buf, sizeof(buf), "%s%s%s%s", iotap_trace_source_name(h->source),
		 h->capture_mode ? " (" : "",
		 h->capture_mode ? iotap_trace_mode_name(h->capture_mode) : "",
		 h->capture_mode ? ")" : "");
	line("source", buf);
	line("host", h->host);
	line("kernel", h->kernel);
	line("tool", h->tool);
	line("command", h->cmdline);
	line("workload", h->workload);
	line(h->source == IOTAP_SOURCE_CAPTURE ? "backing" : "directory", h->backing);
	line("mountpoint", h->mountpoint);
	line("mount options", h->mount_opts);
	transport_line(h);
	requests(*fuse_note ? fuse_note : h->fuse, h->capture_mode, cut);
	if (h->layout) {
		/* the storage stack, one fact a line, under one label */
		const char *s = h->layout, *e;
		int first = 1;

		for (; *s; s = *e ? e + 1 : e) {
			e = strchr(s, '\n');
			if (!e)
				e = s + strlen(s);
			printf("%-14s %.*s\n", first ? "storage" : "", (int)(e - s), s);
			first = 0;
		}
	}
	secs = (time_t)(h->real_base_ns / 1000000000ull);
	gmtime_r(&secs, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S UTC", &tm);
	line("started", buf);
	if (st.records && st.t_last_ns >= st.t_first_ns) {
		snprintf(buf, sizeof(buf), "%.3f s", (st.t_last_ns - st.t_first_ns) / 1e9);
		line("time span", buf);
	}
	ops = st.records_by_type[IOTAP_REC_OP];
	printf("%-14s %" PRIu64 " (", "records", st.records);
	for (t = 1; t < IOTAP_REC_TYPE_MAX; t++)
		printf("%s%s %" PRIu64, t > 1 ? ", " : "", iotap_trace_rec_type_name(t),
		       st.records_by_type[t]);
	printf(")\n");
	printf("%-14s %" PRIu64 "%s\n", "lost records", st.lost_records,
	       st.lost_records ? "  (the recorder fell behind or its disk filled)" : "");
	printf("%-14s %s (header %" PRIu64 " B, %" PRIu64 " chunks)\n", "file size",
	       fmt_bytes(st.file_bytes, b1, sizeof(b1)), st.header_bytes, st.chunks);
	if (st.compressed_bytes) {
		printf("%-14s %s -> %s (%.1fx), %.2f bytes/record", "compression",
		       fmt_bytes(st.raw_bytes, b1, sizeof(b1)),
		       fmt_bytes(st.compressed_bytes, b2, sizeof(b2)),
		       (double)st.raw_bytes / st.compressed_bytes,
		       st.records ? (double)st.compressed_bytes / st.records : 0.0);
		if (ops)
			printf(", %.2f bytes/op", (double)st.compressed_bytes / ops);
		printf("\n");
	}
	line("complete", st.has_end ? "yes (end record present)"
				    : "no (no end record: the writer was killed or is still running)");
	if (!st.has_end) {
		/* what a killed writer lost: everything after its last whole chunk */
		if (st.records && st.t_last_ns >= h->mono_base_ns) {
			secs = (time_t)((h->real_base_ns + (st.t_last_ns - h->mono_base_ns)) /
					1000000000ull);
			gmtime_r(&secs, &tm);
			strftime(buf, sizeof(buf), "%H:%M:%S UTC", &tm);
			printf("%-14s the records end at %s, %.3f s after the start: what "
			       "happened later is not in the trace\n", "", buf,
			       (st.t_last_ns - h->mono_base_ns) / 1e9);
		} else {
			printf("%-14s no record reached the file: all of it is lost\n", "");
		}
	}
	damaged = st.chunks_bad || st.bytes_skipped;
	if (!damaged) {
		line("damage", "none");
	} else {
		printf("%-14s %" PRIu64 " bad chunk(s) skipped, %" PRIu64 " bytes unreadable",
		       "damage", st.chunks_bad, st.bytes_skipped);
		if (st.first_bad_offset)
			printf(" from offset %" PRIu64, st.first_bad_offset);
		if (st.tail_bytes)
			printf("; incomplete last chunk (%" PRIu64 " bytes)", st.tail_bytes);
		printf("\n");
	}
	if (st.late_records)
		printf("%-14s %" PRIu64 " records out of time order\n", "order", st.late_records);
	iotap_trace_reader_close(r);
	if (ret < 0) {
		error_msg("cannot read trace '%s': %s", path, strerror(-ret));
		return 1;
	}
	if (strict && (damaged || !st.has_end || st.lost_records))
		return 1;
	return 0;
}

int cmd_info(int argc, char **argv)
{
	int rc, i, status = 0;

	rc = opt_parse(&info_cmd, argc, argv);
	if (rc >= 0)
		return rc;
	if (optind >= argc)
		return opt_error(&info_cmd, "TRACE is required");
	read_progress_setup("info", args.progress, 0);
	iotap_analysis_threads_auto(1);	/* two decoding threads for a big trace */
	for (i = optind; i < argc; i++) {
		if (i > optind)
			printf("\n");
		if (info_one(argv[i], args.strict))
			status = 1;
	}
	return status;
}
