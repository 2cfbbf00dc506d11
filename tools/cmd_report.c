// SPDX-License-Identifier: MIT
/*
 * cmd_report.c - iotap report TRACE [--json | --csv | --bonnie-csv] [--html FILE]
 *                [--interval DUR] [--phase NAME --by op|file|tid]
 *                [--phases-from OTHER] [-o FILE]
 *                iotap report TRACE TRACE... [--json | --csv] [--html FILE] [-o FILE]
 *
 * Per phase (from PHASE markers, another trace's phases, or found
 * automatically) and for the whole trace: ops/s, MB/s and IOPS per
 * direction with request-size histograms, seeks/s with a seek-distance
 * histogram and the sequential share, fsyncs, metadata op rates, latency
 * percentiles per op type, ops in flight and threads, CPU%, the backing
 * device's view beside the filesystem's, and flags for odd things.
 * MB = 10^6 bytes.
 *
 * Several traces (one per host of a fleet) make one report: each phase,
 * matched by name, per host and for all hosts together (fleet.c). They
 * are operands, not a flag: one trace or several says which report it
 * is, and the outputs are the report's (text, CSV, JSON, HTML); compare
 * is the command for runs set against a baseline.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "iotap_analysis.h"
#include "iotap_base.h"
#include "opt.h"
#include "traceio.h"

enum {
	O_JSON, O_CSV, O_BONNIE_CSV, O_BONNIE, O_HTML, O_INTERVAL, O_PHASE, O_BY, O_PHASES_FROM,
	O_AUTO, O_GAP, O_FACTOR, O_OUTPUT, O_FORCE, O_DETAIL, O_THREADS, O_PROGRESS, O_NO_PROGRESS,
};

#define THREADS_MAX	64	/* --threads */
static unsigned int opt_threads;

static const struct opt_desc report_opts[] = {
	[O_JSON] = { "json", 0, NULL, "JSON: trace, phases, total (keys are stable)" },
	[O_CSV] = { "csv", 0, NULL,
		    "CSV: one row per phase and a last row for the total\n"
		    "(with --interval: the time series as CSV)" },
	[O_BONNIE_CSV] = { "bonnie-csv", 0, NULL,
			   "bonnie++'s one-line CSV (2.00a layout, for bon_csv2txt)\n"
			   "when the phases are bonnie++'s" },
	[O_BONNIE] = { "bonnie", 0, NULL, "text rates in K/sec (KiB/s) as bonnie++ prints them" },
	[O_HTML] = { "html", 0, "FILE", "write a self-contained HTML report with charts\n"
		     "(instead of the text; -o, --json or --csv print theirs too)" },
	[O_INTERVAL] = { "interval", 'i', "DUR",
			 "print the time series at DUR steps (1s, 500ms)\n"
			 "instead of the phase table" },
	[O_PHASE] = { "phase", 'p', "NAME", "only phase NAME (NAME#2: its second occurrence)" },
	[O_BY] = { "by", 0, "op|file|tid", "break the phase (or the whole trace) down" },
	[O_PHASES_FROM] = { "phases-from", 0, "OTHER",
			    "use OTHER's phases, matched by op order\n"
			    "(a replay lines up with its original)" },
	[O_AUTO] = { "auto-phases", 0, NULL,
		     "find phases automatically even if the trace has markers" },
	[O_GAP] = { "gap", 0, "DUR", "idle gap that starts an automatic phase (default 1s)" },
	[O_FACTOR] = { "flag-factor", 0, "F",
		       "flag a throughput change inside a phase above\n"
		       "F times (default 4)" },
	[O_OUTPUT] = { "output", 'o', "FILE", "write to FILE instead of stdout" },
	[O_FORCE] = { "force", 0, NULL,
		      "replace an existing -o or --html FILE (never a trace\n"
		      "and never an input)" },
	[O_DETAIL] = { "detail", 'v', NULL, "text: every phase's detail (request sizes, seeks,\n"
		       "metadata, concurrency, device, latency), not only\n"
		       "the phase table and the flags" },
	[O_THREADS] = OPT_UINT(0, "threads", &opt_threads, "N",
			       "read the trace in time windows, N at once (a trace\n"
			       "of 1 MiB or more, 2 CPUs or more; else one thread\n"
			       "reads, another analyses) (default: a CPU each, up\n"
			       "to 8, where windows apply; else one analysing thread\n"
			       "and the reader's own; 1: one thread); several\n"
			       "traces: N reports read at once (default: a CPU each);\n"
			       "the report is the same", 1,
			       THREADS_MAX, "bad --threads '%s' (1 to 64)"),
	[O_PROGRESS] = OPT_PROGRESS,
	[O_NO_PROGRESS] = OPT_NO_PROGRESS,
	{ NULL },
};

static const struct opt_cmd report_cmd = {
	.name = "report",
	.usage =
		"TRACE [--json | --csv | --bonnie-csv] [-v] [--html FILE] [--interval DUR]\n"
		"                    [--phase NAME [--by op|file|tid]] [--phases-from OTHER]\n"
		"                    [--threads N] [-o FILE [--force]] [--progress | --no-progress]\n"
		"       iotap report TRACE TRACE... [--json | --csv] [--html FILE] [--threads N]\n"
		"                    [-o FILE [--force]]",
	.summary =
		"Summarise a trace per phase and in total: ops/s, MB/s and IOPS for reads and\n"
		"writes with request-size histograms, seeks/s (a data op that does not start\n"
		"where the previous data op on the same file ended) with distance histograms\n"
		"and the sequential share, fsyncs, metadata op rates, latency percentiles per op\n"
		"type (us), ops in flight and threads, CPU%, the backing device's MB/s, IOPS and\n"
		"utilisation beside the filesystem's (and the share of reads it never saw), and\n"
		"flags for odd things: throughput changing inside a phase, latency outliers\n"
		"(max > 100 x p99), the device busy while the filesystem is idle, lost records.\n"
		"\n"
		"Phases come from the trace's markers; without markers they are found where the\n"
		"op mix, direction, request size or sequentiality changes, or after an idle gap,\n"
		"and are named by what they do (seq-write-8k, rand-read-8k+10%w, create, stat).\n"
		"\n"
		"MB means 10^6 bytes; K/sec (--bonnie) means KiB/s. Latency percentiles are\n"
		"within 1/128 of their value (log-linear buckets as fio's). The report streams:\n"
		"memory does not grow with the length of the trace.\n"
		"\n"
		"Several traces (a fleet: one per host) make one report: each phase, matched by\n"
		"name, per host and for all hosts together (ops and bytes summed, rates over the\n"
		"union of the hosts' spans on the wall clock, percentiles of the merged\n"
		"histograms). A host is the trace header's host, or the file name where two\n"
		"traces name the same host.",
	.opts = report_opts,
	.footer = "examples:\n"
		  "  iotap report cap.iotap\n"
		  "  iotap report cap.iotap --detail\n"
		  "  iotap report cap.iotap --html report.html\n"
		  "  iotap report cap.iotap --interval 1s --csv > series.csv\n"
		  "  iotap report cap.iotap --phase seeks --by file\n"
		  "  iotap report replay.iotap --phases-from cap.iotap\n"
		  "  iotap report cap.iotap --json | jq '.phases[] | {name, seeks_per_s}'\n"
		  "  iotap report web1.iotap web2.iotap db.iotap --html fleet.html",
};

static int parse_by(const char *s, enum iotap_report_by *by)
{
	if (!strcmp(s, "op"))
		*by = IOTAP_BY_OP;
	else if (!strcmp(s, "file"))
		*by = IOTAP_BY_FILE;
	else if (!strcmp(s, "tid") || !strcmp(s, "thread"))
		*by = IOTAP_BY_TID;
	else
		return -EINVAL;
	return 0;
}

/* Build OTHER's report and take its phases as a plan. */
static int load_plan(const char *other, struct iotap_phase_plan *plan)
{
	struct iotap_report orep;
	int ret;

	ret = iotap_report_build(&orep, other, NULL);
	if (ret) {
		error_msg("%s", orep.err.msg);
		return ret;
	}
	warn_damage(other, &orep.rs);
	ret = iotap_report_plan(&orep, plan);
	iotap_report_release(&orep);
	if (ret)
		error_msg("out of memory");
	return ret;
}

/* Several traces: one fleet report (text, CSV, JSON, HTML). */
static int report_fleet(char **paths, unsigned int n, const struct iotap_report_opts *ro,
			const struct iotap_out_opts *oo, int json, int csv, const char *out,
			const char *html, struct out_rules *rules)
{
	struct iotap_fleet fl;
	FILE *f;
	unsigned int i;
	int ret = 0;

	if (iotap_fleet_build(&fl, (const char *const *)paths, n, ro)) {
		error_msg("%s", fl.err.msg);
		return 1;
	}
	for (i = 0; i < fl.nhosts; i++)
		warn_damage(fl.hosts[i].path, &fl.hosts[i].rep.rs);
	if (html) {
		f = out_open(html, rules);
		if (!f) {
			ret = 1;
			goto out;
		}
		iotap_fleet_write_html(&fl, f);
		if (out_close(f, html)) {
			ret = 1;
			goto out;
		}
		if (!out && !json && !csv) {
			fprintf(stderr, "iotap: wrote %s\n", html);
			goto out;
		}
	}
	f = out_open(out, rules);
	if (!f) {
		ret = 1;
		goto out;
	}
	if (json)
		ret = iotap_fleet_print_json(&fl, f) ? 1 : 0;
	else if (csv)
		iotap_fleet_print_csv(&fl, f);
	else
		iotap_fleet_print_text(&fl, oo, f);
	if (out_close(f, out))
		ret = 1;
	if (html)
		fprintf(stderr, "iotap: wrote %s\n", html);
out:
	iotap_fleet_release(&fl);
	return ret;
}

int cmd_report(int argc, char **argv)
{
	struct iotap_report_opts ro;
	struct iotap_out_opts oo = { 0 };
	struct iotap_phase_plan plan = { 0 };
	struct iotap_analysis_err err = { 0 };
	struct iotap_report rep;
	const char *arg, *out = NULL, *html = NULL, *phase = NULL, *from = NULL;
	int idx, rc, json = 0, csv = 0, bcsv = 0, ret = 0, ph = -1, have_rep = 0, progress = 0;
	enum iotap_report_by by = IOTAP_BY_NONE;
	const char *inputs[3] = { NULL };
	struct out_rules rules = { .inputs = inputs };
	uint64_t interval = 0;
	FILE *f = stdout;

	iotap_report_opts_init(&ro);
	opt_threads = 0;
	while ((rc = opt_next(&report_cmd, argc, argv, &idx, &arg)) == 1) {
		switch (idx) {
		case O_JSON: json = 1; break;
		case O_CSV: csv = 1; break;
		case O_BONNIE_CSV: bcsv = 1; break;
		case O_BONNIE: oo.bonnie_units = 1; break;
		case O_DETAIL: oo.detail = 1; break;
		case O_HTML: html = arg; break;
		case O_INTERVAL:
			if (parse_duration_ns(arg, &interval) || interval < 1000000)
				return opt_error(&report_cmd,
						 "bad --interval '%s' (want e.g. 1s, 250ms; "
						 "at least 1ms)",
						 arg);
			break;
		case O_PHASE: phase = arg; break;
		case O_BY:
			if (parse_by(arg, &by))
				return opt_error(&report_cmd, "bad --by '%s' (op, file or tid)",
						 arg);
			break;
		case O_PHASES_FROM: from = arg; break;
		case O_AUTO: ro.auto_phases = 1; break;
		case O_GAP:
			if (parse_duration_ns(arg, &ro.gap_ns) || !ro.gap_ns)
				return opt_error(&report_cmd, "bad --gap '%s'", arg);
			break;
		case O_FACTOR: {
			char *end;

			ro.flag_factor = strtod(arg, &end);
			if (*end || !(ro.flag_factor > 1))
				return opt_error(&report_cmd,
						 "bad --flag-factor '%s' (a number above 1)", arg);
			break;
		}
		case O_OUTPUT: out = arg; break;
		case O_FORCE: rules.force = 1; break;
		case O_PROGRESS: progress = 1; break;
		case O_NO_PROGRESS: progress = -1; break;
		}
	}
	if (rc == 2)
		return 0;
	if (rc < 0)
		return 2;
	ro.threads = opt_threads;	/* 0: the reader as for every command */
	if (json + csv + bcsv > 1)
		return opt_error(&report_cmd, "--json, --csv and --bonnie-csv exclude each other");
	if (interval && (json || bcsv || by))
		return opt_error(&report_cmd, "--interval prints a time series: not with --json, "
					      "--bonnie-csv or --by");
	if (by && (json || bcsv))
		return opt_error(&report_cmd, "--by prints a table (text, or --csv)");
	if (from && ro.auto_phases)
		return opt_error(&report_cmd, "--phases-from and --auto-phases exclude each other");
	if (argc - optind < 1)
		return opt_error(&report_cmd, "TRACE is required");
	if (out && html && out_same(out, html))
		return opt_error(&report_cmd, "-o and --html name the same file");
	if (argc - optind > 1) {
		if (interval || phase || by || from || bcsv || oo.detail)
			return opt_error(&report_cmd,
					 "several traces make a fleet report: not with "
					 "--interval, --phase, --by, --phases-from, "
					 "--bonnie-csv or --detail");
		rules.inputs = (const char *const *)&argv[optind];
		if ((out && out_check(out, &rules) < 0) || (html && out_check(html, &rules) < 0))
			return 1;
		read_progress_setup("report", progress, 0);
		iotap_analysis_threads_auto(1);
		return report_fleet(&argv[optind], (unsigned int)(argc - optind), &ro, &oo, json,
				    csv, out, html, &rules);
	}
	/* fail before a long pass when an output cannot or must not be written */
	inputs[0] = argv[optind];
	inputs[1] = from;
	if ((out && out_check(out, &rules) < 0) || (html && out_check(html, &rules) < 0))
		return 1;
	if (html) {
		ro.points = 65536;
		ro.keep_names = 1;
	}
	if (by == IOTAP_BY_FILE)
		ro.keep_names = 1;
	if (interval) {
		/* bins of at most 100 ms that add up to the interval exactly */
		uint64_t k = (interval + 99999999ull) / 100000000ull;

		ro.interval_ns = interval / k;
	}
	read_progress_setup("report", progress, 0);
	iotap_analysis_threads_auto(1);	/* two decoding threads for a big trace */
	if (from) {
		if (load_plan(from, &plan))
			return 1;
		ro.plan = &plan;
	}
	if (iotap_report_build(&rep, argv[optind], &ro)) {
		error_msg("%s", rep.err.msg);
		ret = 1;
		goto out_plan;
	}
	have_rep = 1;
	warn_damage(argv[optind], &rep.rs);
	if (!rep.ops_ord && !rep.rs.has_end && iotap_live_held(AT_FDCWD, argv[optind]) > 0) {
		/* not "0 ops": the ops are there, only not on disk yet */
		error_msg("'%s' holds no operation yet: report it once it is closed (iotap umount, "
			"or iotap trace MOUNTPOINT rotate/stop), or a few seconds into the capture",
			argv[optind]);
		ret = 1;
		goto out_rep;
	}
	if (from && plan.total_ops != rep.ops_ord) {
		double diff = (double)rep.ops_ord - (double)plan.total_ops;

		if (diff < 0)
			diff = -diff;
		if (diff > 0.01 * (double)plan.total_ops)
			warn_msg("'%s' has %" PRIu64 " ops, '%s' %" PRIu64
				 ": phase boundaries taken by op "
				 "order may drift",
				 argv[optind], rep.ops_ord, from, plan.total_ops);
	}
	if (phase) {
		ph = iotap_report_find_phase(&rep, phase);
		if (ph < 0) {
			unsigned int i;

			error_msg("no phase '%s' in '%s'; its phases are:", phase, argv[optind]);
			for (i = 0; i < rep.nphases; i++)
				fprintf(stderr, "  %s\n", rep.phases[i].name);
			ret = 1;
			goto out_rep;
		}
	}
	if (html) {
		f = out_open(html, &rules);
		if (!f) {
			ret = 1;
			goto out_rep;
		}
		iotap_report_write_html(&rep, f);
		if (out_close(f, html)) {
			ret = 1;
			goto out_rep;
		}
	}
	/* the page is the output: text only where asked for (-o or a format) */
	if (html && !out && !json && !csv && !bcsv && !by && !interval && !phase) {
		fprintf(stderr, "iotap: wrote %s\n", html);
		goto out_rep;
	}
	f = out_open(out, &rules);
	if (!f) {
		ret = 1;
		goto out_rep;
	}
	if (by) {
		ret = iotap_report_print_by(&rep, ph, by, csv, f, &err) ? 1 : 0;
	} else if (interval) {
		iotap_report_print_series(&rep, interval, csv, f, &err);
		if (err.msg[0])
			warn_msg("%s", err.msg);
	} else if (phase) {
		/* one phase: a report whose only phase is that one */
		struct iotap_report one = rep;

		one.phases = &rep.phases[ph];
		one.flags = &rep.flags[ph];
		one.nphases = 1;
		if (json)
			ret = iotap_report_print_json(&one, f) ? 1 : 0;
		else if (csv)
			iotap_report_print_csv(&one, f);
		else if (bcsv)
			ret = iotap_report_print_bonnie_csv(&rep, f, &err) ? 1 : 0;
		else {
			oo.detail = 1;	/* one phase: its detail is what was asked for */
			iotap_report_print_text(&one, &oo, f);
		}
	} else if (json) {
		ret = iotap_report_print_json(&rep, f) ? 1 : 0;
	} else if (csv) {
		iotap_report_print_csv(&rep, f);
	} else if (bcsv) {
		ret = iotap_report_print_bonnie_csv(&rep, f, &err) ? 1 : 0;
	} else {
		iotap_report_print_text(&rep, &oo, f);
	}
	if (ret && err.msg[0])
		error_msg("%s", err.msg);
	if (html)
		fprintf(stderr, "iotap: wrote %s\n", html);
	if (out_close(f, out))
		ret = 1;
out_rep:
	if (have_rep)
		iotap_report_release(&rep);
out_plan:
	iotap_phase_plan_release(&plan);
	return ret;
}
