// SPDX-License-Identifier: MIT
/*
 * cmd_compare.c - iotap compare TRACE... | --label NAME TRACE... [--label NAME TRACE...]...
 *                 [--baseline TRACE|NAME] [--json | --csv] [--html FILE] [-o FILE]
 *                 [--force]
 *
 * Runs side by side, phase by phase: every figure as each run's value (or,
 * for a labelled group of repeats, mean ± sample sd), with its ratio to
 * the baseline (the first run unless --baseline says otherwise).
 *
 * A --label applies to the traces after it, up to the next --label; the
 * options are parsed by getopt_long, which reorders argv, so each trace's
 * label is found from its place in the original command line.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "iotap_analysis.h"
#include "opt.h"
#include "traceio.h"

/* What the options set: the table below binds each to its field. */
static struct compare_args {
	const char *out, *html, *baseline;
	int json, csv, force;
	int progress;			/* --progress 1, --no-progress -1 */
	int nlabels;			/* --label: how many (the groups are read from argv) */
	unsigned int threads;		/* --threads: reports read at once (0: a CPU each) */
} args;

/* --label NAME: counted; the traces after it are grouped from argv later */
static int label_opt(const struct opt_cmd *cmd, const struct opt_desc *d, const char *arg)
{
	if (!*arg)
		return opt_error(cmd, "--label wants a NAME");
	(*(int *)d->value)++;
	return 0;
}

static const struct opt_desc compare_opts[] = {
	OPT_CALLBACK('l', "label", &args.nlabels, "NAME",
		     "the traces that follow are repeats of run NAME\n"
		     "(shown as mean ± sd, like bonnie++ -x)", label_opt),
	OPT_STRING('b', "baseline", &args.baseline, "RUN",
		   "ratios are to this trace or label (default: the first)"),
	OPT_BOOL(0, "json", &args.json, "JSON: runs, and per phase each figure's mean, sd, ratio"),
	OPT_BOOL(0, "csv", &args.csv, "CSV: one row per phase, figure and run; then the\n"
		 "pgsql/dedup figures as phase \"application\""),
	OPT_STRING(0, "html", &args.html, "FILE", "also write a self-contained HTML page with bar charts"),
	OPT_STRING('o', "output", &args.out, "FILE", "write to FILE instead of stdout"),
	OPT_BOOL(0, "force", &args.force,
		 "replace an existing -o or --html FILE (never a trace\n"
		 "and never an input)"),
	OPT_UINT(0, "threads", &args.threads, "N",
		 "read N traces at once (default: as many as there are\n"
		 "CPUs; 1: one after the other); the output is the same", 1, 64,
		 "bad --threads '%s' (1 to 64)"),
	OPT_PROGRESS_INT(&args.progress),
	OPT_NO_PROGRESS_INT(&args.progress),
	OPT_END(),
};

static const struct opt_cmd compare_cmd = {
	.name = "compare",
	.usage = "TRACE... | --label NAME TRACE... [--label NAME TRACE...]... [options]",
	.summary =
		"Put runs side by side, phase by phase (phases matched by name and order):\n"
		"duration, ops/s, MB/s and IOPS per direction, seeks/s, sequential share,\n"
		"fsyncs/s, metadata ops/s, read and write p99 latency, ops in flight, CPU% and\n"
		"the device's MB/s and utilisation, each with its ratio to the baseline run.\n"
		"Repeats given under one --label are shown as mean ± sample standard deviation.\n"
		"For `run pgsql` and `run dedup` traces the application's own figures follow\n"
		"(tps, commit p99, restore MB/s, ...) with a verdict each, in every output.\n"
		"MB means 10^6 bytes.",
	.opts = compare_opts,
	.footer =
		"examples:\n"
		"  iotap compare run-ext4.iotap run-xfs.iotap\n"
		"  iotap compare --label raid10 r10-*.iotap --label raid6 r6-*.iotap \\\n"
		"                --html cmp.html\n"
		"  iotap compare cap.iotap replay.iotap --json",
};

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static int find_orig(char **orig, int n, const char *p)
{
	int i;

	for (i = 0; i < n; i++)
		if (orig[i] == p)
			return i;
	return -1;
}

/* The label in force at original position @pos: the last --label before it. */
static const char *label_at(char **orig, int pos)
{
	int i;

	for (i = pos - 1; i >= 1; i--) {
		if (!strcmp(orig[i - 1], "--label") || !strcmp(orig[i - 1], "-l"))
			return orig[i];
		if (!strncmp(orig[i], "--label=", 8))
			return orig[i] + 8;
	}
	if (!strncmp(orig[0], "--label=", 8))
		return orig[0] + 8;
	return NULL;
}

/* The runs to compare: the traces, grouped by the --label before them. */
struct runs {
	struct iotap_cmp_group *groups;
	unsigned int n;
	int *labelled;			/* groups[i] is a --label's, not one trace */
	char (*dup_names)[80];		/* "NAME (3)": two unlabelled files of one name */
};

/*
 * Group the traces argv[optind..] by the --label before each in @orig
 * (argv as given: getopt_long moved the traces to the end), name the
 * unlabelled runs, put the --baseline run first. Return: 0, 1 without
 * memory or 2 after a usage error (said).
 */
static int group_runs(struct runs *rs, char **orig, int argc, char **argv)
{
	struct iotap_cmp_group tmp;
	unsigned int g;
	int i;

	rs->groups = calloc((size_t)(argc - optind), sizeof(*rs->groups));
	rs->labelled = calloc((size_t)(argc - optind), sizeof(*rs->labelled));
	if (!rs->groups || !rs->labelled)
		goto nomem;
	/* group the traces by the label before them; unlabelled traces stand alone */
	for (i = optind; i < argc; i++) {
		int pos = find_orig(orig, argc, argv[i]);
		const char *label = pos > 0 && args.nlabels ? label_at(orig, pos) : NULL;
		struct iotap_cmp_group *grp = NULL;
		const char **np;

		for (g = 0; label && g < rs->n; g++)
			if (rs->labelled[g] && !strcmp(rs->groups[g].label, label))
				grp = &rs->groups[g];
		if (!grp) {
			rs->labelled[rs->n] = !!label;
			grp = &rs->groups[rs->n++];
			grp->label = label ? label : base_name(argv[i]);
		}
		np = realloc(grp->paths, (grp->n + 1) * sizeof(*np));
		if (!np)
			goto nomem;
		grp->paths = np;
		grp->paths[grp->n++] = argv[i];
	}
	/* a --label with no TRACE after it is a mistake, not a group to drop */
	for (i = 1; i < argc && args.nlabels; i++) {
		const char *l = NULL;

		if (!strcmp(orig[i - 1], "--label") || !strcmp(orig[i - 1], "-l"))
			l = orig[i];
		else if (!strncmp(orig[i], "--label=", 8))
			l = orig[i] + 8;
		for (g = 0; l && g < rs->n; g++)
			if (rs->labelled[g] && !strcmp(rs->groups[g].label, l))
				break;
		if (l && g == rs->n)
			return opt_error(&compare_cmd, "--label '%s' has no TRACE after it", l);
	}
	/* unlabelled runs are named by their file; two files of one name by their path */
	rs->dup_names = calloc(rs->n, sizeof(*rs->dup_names));
	if (!rs->dup_names)
		goto nomem;
	for (g = 0; g < rs->n; g++) {
		unsigned int h;

		for (h = 0; h < g; h++)
			if (!rs->labelled[g] && !strcmp(rs->groups[h].label, rs->groups[g].label))
				break;
		if (h < g)
			rs->groups[g].label = rs->groups[g].paths[0];
		for (h = 0; h < g; h++)
			if (!rs->labelled[g] && !strcmp(rs->groups[h].label, rs->groups[g].label))
				break;
		if (h < g) {
			snprintf(rs->dup_names[g], sizeof(rs->dup_names[g]), "%.60s (%u)",
				 rs->groups[g].label, g + 1);
			rs->groups[g].label = rs->dup_names[g];
		}
	}
	if (args.baseline) {
		for (g = 0; g < rs->n; g++)
			if (!strcmp(rs->groups[g].label, args.baseline) ||
			    (rs->groups[g].n == 1 && !strcmp(rs->groups[g].paths[0], args.baseline)))
				break;
		if (g == rs->n)
			return opt_error(&compare_cmd,
					 "--baseline '%s' is neither a trace nor a label given",
					 args.baseline);
		tmp = rs->groups[g];
		memmove(&rs->groups[1], &rs->groups[0], g * sizeof(*rs->groups));
		rs->groups[0] = tmp;
	}
	return 0;

nomem:
	error_msg("out of memory");
	return 1;
}

static void runs_release(struct runs *rs)
{
	unsigned int g;

	for (g = 0; g < rs->n; g++)
		free(rs->groups[g].paths);
	free(rs->groups);
	free(rs->labelled);
	free(rs->dup_names);
}

int cmd_compare(int argc, char **argv)
{
	const char *out, *html;
	struct runs rs = { 0 };
	unsigned int g;
	int rc, json, csv, ret = 0, progress;
	char **orig;
	struct out_rules rules = { 0 };
	struct iotap_compare c;
	unsigned int t;
	FILE *f = stdout;

	orig = malloc((size_t)(argc + 1) * sizeof(*orig));
	if (!orig)
		return 1;
	memcpy(orig, argv, (size_t)(argc + 1) * sizeof(*orig));
	rc = opt_parse(&compare_cmd, argc, argv);
	if (rc >= 0) {
		free(orig);
		return rc;
	}
	out = args.out;
	html = args.html;
	json = args.json;
	csv = args.csv;
	progress = args.progress;
	rules.force = args.force;
	if (json && csv) {
		free(orig);
		return opt_error(&compare_cmd, "--json and --csv exclude each other");
	}
	if (argc - optind < 1) {
		free(orig);
		return opt_error(&compare_cmd, "at least one TRACE is required");
	}
	if (out && html && out_same(out, html)) {
		free(orig);
		return opt_error(&compare_cmd, "-o and --html name the same file");
	}
	/* getopt_long moved the traces to the end; argv[argc] is NULL */
	rules.inputs = (const char *const *)&argv[optind];
	if ((out && out_check(out, &rules) < 0) || (html && out_check(html, &rules) < 0)) {
		free(orig);
		return 1;
	}
	ret = group_runs(&rs, orig, argc, argv);
	if (ret)
		goto out_groups;
	read_progress_setup("compare", progress, 0);
	iotap_analysis_threads_auto(1);	/* two decoding threads for a big trace */
	if (iotap_compare_build(&c, rs.groups, rs.n, args.threads)) {
		error_msg("%s", c.err.msg);
		ret = 1;
		goto out_groups;
	}
	for (g = 0; g < rs.n; g++)
		for (t = 0; t < rs.groups[g].n; t++)
			warn_damage(rs.groups[g].paths[t], &rs.groups[g].reps[t].rs);
	if (html) {
		f = out_open(html, &rules);
		if (!f) {
			ret = 1;
			goto out_cmp;
		}
		iotap_compare_write_html(&c, f);
		if (out_close(f, html)) {
			ret = 1;
			goto out_cmp;
		}
	}
	/* the page is the output: text only where asked for (-o or a format), as report */
	if (html && !out && !json && !csv) {
		fprintf(stderr, "iotap: wrote %s\n", html);
		goto out_cmp;
	}
	f = out_open(out, &rules);
	if (!f) {
		ret = 1;
		goto out_cmp;
	}
	if (json)
		ret = iotap_compare_print_json(&c, f) ? 1 : 0;
	else if (csv)
		iotap_compare_print_csv(&c, f);
	else
		iotap_compare_print_text(&c, f);
	if (out_close(f, out))
		ret = 1;
out_cmp:
	iotap_compare_release(&c);
out_groups:
	runs_release(&rs);
	free(orig);
	return ret;
}
