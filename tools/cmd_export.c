// SPDX-License-Identifier: MIT
/*
 * cmd_export.c - iotap export TRACE OUT [--events FILE] [--csv | --parquet]
 *
 * A trace as tables for DuckDB, pandas, Spark: OUT gets one row per
 * application call (the pieces of a cut read/write joined, as report
 * counts them) with typed columns -- the absolute time, the host, the
 * file's path when the call ran (trace/paths.c), the errno's name, the
 * marker phase -- and --events FILE one row per other record (names,
 * phases, samples, notes, app units). Parquet (the default, or when OUT
 * ends in .parquet) or CSV (--csv, or OUT ending in .csv), the columns
 * of both from one table (export/export.c). Streaming: memory is the
 * reader's window, the bindings and one Parquet row group.
 *
 * A damaged trace exports what is readable and says what was not, as
 * dump does (exit status 0); a trace that cannot be opened or read, or an
 * output that cannot be written, exits 1 and leaves no partial file.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmds.h"
#include "export/export.h"
#include "iotap_analysis.h"
#include "iotap_base.h"
#include "opt.h"
#include "traceio.h"

static struct {
	const char *events;		/* --events FILE */
	const char *host;		/* --host NAME, else the trace's */
	int csv, parquet, force;
	int progress;			/* 1, -1, 0: read_progress_setup() */
} xopt;

static const struct opt_desc export_opts[] = {
	OPT_STRING(0, "events", &xopt.events, "FILE",
		   "also write the other records (names, phases,\n"
		   "samples, notes, app units) to FILE, in the same format"),
	OPT_BOOL(0, "csv", &xopt.csv, "CSV with a header row (the default for OUT ending in .csv)"),
	OPT_BOOL(0, "parquet", &xopt.parquet, "Apache Parquet, ZSTD pages (the default)"),
	OPT_STRING(0, "host", &xopt.host, "NAME",
		   "NAME in the host column, for the host the trace names\n"
		   "(two mounts of one machine as two hosts)"),
	OPT_BOOL('f', "force", &xopt.force, "replace existing output files"),
	OPT_PROGRESS_INT(&xopt.progress),
	OPT_NO_PROGRESS_INT(&xopt.progress),
	OPT_END(),
};

static void export_columns(FILE *f)
{
	fprintf(f, "calls columns (OUT):\n");
	export_print_columns(f, &export_calls);
	fprintf(f, "events columns (--events):\n");
	export_print_columns(f, &export_events);
}

static const struct opt_cmd export_cmd = {
	.name = "export",
	.usage = "TRACE OUT [--events FILE] [--csv | --parquet] [--host NAME]\n"
		 "       [--force] [--progress | --no-progress]",
	.summary = "Write a trace as tables: OUT gets one row per application call (cut\n"
		   "read/write pieces joined, as report counts them), with the file's path\n"
		   "as it was when the call ran; --events FILE the other records. Parquet\n"
		   "(ZSTD, row groups of 1,048,576 rows, min/max statistics) or CSV with\n"
		   "the same columns. OUT - is stdout.",
	.opts = export_opts,
	.more = export_columns,
	.footer = "examples:\n"
		  "  iotap export cap.iotap cap.parquet --events cap-events.parquet\n"
		  "  duckdb -c \"select op, count(*), avg(latency_ns) from 'cap.parquet' group by op\"\n"
		  "  iotap export cap.iotap - --csv | head\n"
		  "  iotap export web1.iotap web1.parquet --host web1",
};

struct phase_state {
	char *name;
	uint32_t len;
	uint64_t n;			/* phases begun: the name's key */
};

/* The marker phase a record is in: the last begun, until its end. */
static int phase_track(struct phase_state *ph, const struct iotap_trace_rec *r)
{
	if (r->type != IOTAP_REC_PHASE || !r->name)
		return 0;
	if (r->flags == IOTAP_PHASE_END) {
		if (ph->name && ph->len == r->name_len && !memcmp(ph->name, r->name, ph->len)) {
			free(ph->name);
			ph->name = NULL;
			ph->len = 0;
		}
		return 0;
	}
	free(ph->name);
	ph->n++;
	ph->name = strndup(r->name, r->name_len);
	ph->len = ph->name ? r->name_len : 0;
	return ph->name ? 0 : -ENOMEM;
}

static enum xformat format_of(const char *path, int csv, int parquet)
{
	size_t n = strlen(path);

	if (csv)
		return X_CSV;
	if (parquet)
		return X_PARQUET;
	return n > 4 && !strcmp(path + n - 4, ".csv") ? X_CSV : X_PARQUET;
}

/* An output: a new file beside @path renamed over it at the end, or stdout. */
struct outfile {
	const char *path;		/* NULL: stdout */
	char *tmp;
	FILE *f;
};

static int outfile_open(struct outfile *o, const char *path)
{
	int ret;

	o->path = strcmp(path, "-") ? path : NULL;
	o->tmp = NULL;
	if (!o->path) {
		o->f = stdout;
		return 0;
	}
	ret = iotap_replace_tmp(o->path, &o->tmp);
	if (ret) {
		error_msg("cannot write '%s': %s", path, strerror(-ret));
		return ret;
	}
	o->f = out_open(o->tmp, NULL);
	if (!o->f) {
		free(o->tmp);
		o->tmp = NULL;
		return -EIO;
	}
	/* it names files, users and processes: as private as the trace */
	if (fchmod(fileno(o->f), 0600)) {
		ret = -errno;
		error_msg("cannot write '%s': %s", path, strerror(errno));
		fclose(o->f);
		unlink(o->tmp);
		free(o->tmp);
		o->tmp = NULL;
		return ret;
	}
	return 0;
}

/* @ok: commit (close, check, rename over the path); else drop the file. 0 or 1. */
static int outfile_close(struct outfile *o, int ok)
{
	int ret;

	if (!o->f)
		return 0;
	if (!o->path) {
		o->f = NULL;
		return ok ? out_close(stdout, NULL) : 1;
	}
	ret = out_close(o->f, o->path);
	o->f = NULL;
	if (ok && !ret) {
		ret = iotap_replace_commit(o->tmp, o->path);
		if (ret) {
			error_msg("cannot write '%s': %s", o->path, strerror(-ret));
			ret = 1;
		}
	} else {
		ret = 1;
	}
	if (ret)
		unlink(o->tmp);
	free(o->tmp);
	o->tmp = NULL;
	return ret;
}

int cmd_export(int argc, char **argv)
{
	struct outfile out = { 0 }, ev = { 0 };
	const char *path, *opath, *events;
	int rc, ret = 0, status = 0;
	struct iotap_trace_reader *r = NULL;
	struct iotap_trace_join *jn = NULL;
	struct iotap_trace_paths *pp = NULL;
	struct iotap_trace_read_stats st;
	const struct iotap_trace_header *h;
	const struct iotap_trace_rec *rec;
	struct iotap_trace_path tp;
	struct xout *xo = NULL, *xe = NULL;
	struct phase_state ph = { 0 };
	struct xrow row;
	enum xformat fmt;
	char *host = NULL;

	rc = opt_parse(&export_cmd, argc, argv);
	if (rc >= 0)
		return rc;
	events = xopt.events;
	if (xopt.csv && xopt.parquet)
		return opt_error(&export_cmd, "--csv and --parquet exclude each other");
	if (argc - optind != 2)
		return opt_error(&export_cmd, argc - optind < 2 ? "TRACE and OUT are required"
								: "too many arguments");
	path = argv[optind];
	opath = argv[optind + 1];
	if (xopt.host && !*xopt.host)
		return opt_error(&export_cmd, "--host needs a name");
	fmt = format_of(opath, xopt.csv, xopt.parquet);
	if (fmt == X_PARQUET && ((!strcmp(opath, "-") && isatty(STDOUT_FILENO)) ||
				 (events && !strcmp(events, "-") && isatty(STDOUT_FILENO))))
		return opt_error(&export_cmd, "Parquet is binary: not onto a terminal (give a file, "
				 "a pipe, or --csv)");
	{
		const char *inputs[] = { path, NULL };
		struct out_rules rules = { .inputs = inputs, .force_opt = "--force",
					  .force = xopt.force };

		if (strcmp(opath, "-") && out_check(opath, &rules) < 0)
			return 1;
		if (events && strcmp(events, "-") && out_check(events, &rules) < 0)
			return 1;
		if (events && (!strcmp(events, opath) || out_same(events, opath)))
			return opt_error(&export_cmd, "--events and OUT name the same file");
		if (events && !strcmp(events, "-") && !strcmp(opath, "-"))
			return opt_error(&export_cmd, "only one of OUT and --events can be stdout");
	}
	read_progress_setup("export", xopt.progress, !strcmp(opath, "-") ||
			    (events && !strcmp(events, "-")));
	iotap_analysis_threads_auto(1);
	if (open_trace_reader(path, 0, &r))
		return 1;
	h = iotap_trace_reader_header(r);
	host = strdup(xopt.host ? xopt.host : h->host ? h->host : "");
	ret = host ? iotap_trace_join_open(&jn, r) : -ENOMEM;
	if (!ret)
		ret = iotap_trace_paths_open(&pp, jn);
	if (ret) {
		error_msg("out of memory");
		status = 1;
		goto out;
	}
	memset(&row, 0, sizeof(row));
	row.host = (struct xstr){ host, (uint32_t)strlen(host), 1 };
	row.mono_base = h->mono_base_ns;
	row.real_base = h->real_base_ns;
	if (outfile_open(&out, opath) || (events && outfile_open(&ev, events))) {
		status = 1;
		goto out;
	}
	ret = xout_open(&xo, &export_calls, fmt, out.f);
	if (!ret && events)
		ret = xout_open(&xe, &export_events, fmt, ev.f);
	if (ret) {
		error_msg("out of memory");
		status = 1;
		goto out;
	}
	while ((ret = iotap_trace_paths_next_ref(pp, &rec, &tp)) > 0) {
		row.rec = rec;
		row.path = (struct xstr){ tp.path, tp.len, tp.key };
		row.name = (struct xstr){ rec->name, rec->name_len, 0 };
		if (rec->type == IOTAP_REC_OP) {
			ret = xout_row(xo, &row);
		} else {
			if (rec->type == IOTAP_REC_PHASE && (ret = phase_track(&ph, rec)))
				break;
			row.phase = (struct xstr){ ph.name, ph.len, ph.n };
			ret = xe ? xout_row(xe, &row) : 0;
		}
		if (ret) {
			error_msg("cannot write '%s': %s", rec->type == IOTAP_REC_OP ? opath : events,
				strerror(-ret));
			status = 1;
			goto out;
		}
	}
	if (ret < 0) {
		error_msg("cannot read trace '%s': %s", path, strerror(-ret));
		status = 1;
		goto out;
	}
	iotap_trace_reader_stats(r, &st);
	{
		char rows_n[32], files_n[32];
		const struct pq_kv kv[] = {
			{ "iotap.trace", path },
			{ "iotap.host", host },
			{ "iotap.table", "calls" },
			{ "iotap.backing", h->backing },
			{ "iotap.mountpoint", h->mountpoint },
			{ "iotap.cmdline", h->cmdline },
			{ "iotap.records", rows_n },
			{ "iotap.chunks_bad", files_n },
		};
		struct pq_kv kve[8];

		snprintf(rows_n, sizeof(rows_n), "%" PRIu64, st.records);
		snprintf(files_n, sizeof(files_n), "%" PRIu64, st.chunks_bad);
		memcpy(kve, kv, sizeof(kv));
		kve[2].value = "events";
		ret = xout_close(xo, kv, 8);
		xo = NULL;
		if (!ret && xe) {
			ret = xout_close(xe, kve, 8);
			xe = NULL;
		}
	}
	if (ret) {
		error_msg("cannot write the export: %s", strerror(-ret));
		status = 1;
		goto out;
	}
	warn_damage(path, &st);
out:
	if (xo)
		xout_close(xo, NULL, 0);
	if (xe)
		xout_close(xe, NULL, 0);
	if (events && ev.f && outfile_close(&ev, !status))
		status = 1;
	if (out.f && outfile_close(&out, !status))
		status = 1;
	iotap_trace_paths_close(pp);
	iotap_trace_join_close(jn);
	if (r)
		iotap_trace_reader_close(r);
	free(ph.name);
	free(host);
	return status;
}
