// SPDX-License-Identifier: MIT
/*
 * html_compare.c - the compare page: one self-contained HTML file
 *
 * The runs, per-phase bars for each figure side by side (± sd for
 * repeats), the table of means and ratios, and each run's throughput over
 * time; in html.c's page frame (no scripts, one <style> block, inline SVG).
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analysis_i.h"
#include "config.h"
#include "phase.h"
#include "svg.h"

static const char *const run_colors[] = {
	"#2c7fb8", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#b07aa1", "#edc948", "#9c755f",
};

/* --- compare page -------------------------------------------------------- */

static void compare_bars(FILE *f, const struct iotap_compare *c, unsigned int m, const char *title)
{
	unsigned int n = c->nphases, k, g, rows = 0;
	const char **cats = calloc(n, sizeof(*cats));
	const char **names = calloc(c->ngroups, sizeof(*names));
	const char **colors = calloc(c->ngroups, sizeof(*colors));
	double *v = calloc((size_t)n * c->ngroups, sizeof(*v));
	double *sd = calloc((size_t)n * c->ngroups, sizeof(*sd));
	struct svg_hbars hb;

	if (!cats || !names || !colors || !v || !sd)
		goto out;
	for (g = 0; g < c->ngroups; g++) {
		names[g] = c->groups[g].label;
		colors[g] = run_colors[g % (sizeof(run_colors) / sizeof(run_colors[0]))];
	}
	for (k = 0; k < n; k++) {
		if (!compare_metric_used(c, k, m))
			continue;
		cats[rows] = c->phase_names[k];
		for (g = 0; g < c->ngroups; g++) {
			struct cmp_cell cell;

			compare_cell(c, k, g, m, &cell);
			v[rows * c->ngroups + g] = cell.n ? cell.mean : NAN;
			sd[rows * c->ngroups + g] = cell.n > 1 ? cell.sd : NAN;
		}
		rows++;
	}
	if (!rows)
		goto out;
	memset(&hb, 0, sizeof(hb));
	hb.title = title;
	hb.unit = compare_metric(m)->label;
	hb.cats = cats;
	hb.ncats = rows;
	hb.names = names;
	hb.colors = colors;
	hb.nnames = c->ngroups;
	hb.v = v;
	hb.sd = sd;
	svg_hbars(f, &hb);
out:
	free(cats);
	free(names);
	free(colors);
	free(v);
	free(sd);
}

static unsigned int metric_index(const char *key)
{
	unsigned int m;

	for (m = 0; m < compare_nmetrics(); m++)
		if (!strcmp(compare_metric(m)->key, key))
			return m;
	return 0;
}

/*
 * The application figures of pgsql/dedup traces (app_compare.c's cells and
 * verdicts, as compare's text and JSON have them): a ratio is green where
 * the figure is better by more than 10% than the baseline's, orange where
 * worse.
 */
static void compare_app(FILE *f, const struct iotap_compare *c)
{
	struct app_fig figs[APP_FIGS_MAX];
	const char *kind = "";
	unsigned int n = app_compare_figs(c, figs, &kind), i, g;
	char buf[96];
	double best;
	int b;

	if (!n)
		return;
	fprintf(f, "<section><h2>Application figures (%s)</h2><div style=\"overflow-x:auto\">"
		   "<table><tr><th class=\"l\">figure</th>", kind);
	for (g = 0; g < c->ngroups; g++) {
		fprintf(f, "<th>");
		html_esc(f, c->groups[g].label);
		fprintf(f, "</th>%s", g ? "<th>ratio</th>" : "");
	}
	fprintf(f, "</tr>\n");
	for (i = 0; i < n; i++) {
		fprintf(f, "<tr><td class=\"l\">");
		html_esc(f, figs[i].label);
		fprintf(f, "</td>");
		for (g = 0; g < c->ngroups; g++) {
			struct cmp_cell cell;
			double up;

			app_compare_cell(c, g, figs[i].key, &cell);
			if (!cell.n)
				snprintf(buf, sizeof(buf), "-");
			else if (cell.n > 1)
				snprintf(buf, sizeof(buf), "%.*f ± %.*f", figs[i].decimals,
					 cell.mean, figs[i].decimals, cell.sd);
			else
				snprintf(buf, sizeof(buf), "%.*f", figs[i].decimals, cell.mean);
			fprintf(f, "<td>%s</td>", buf);
			if (!g)
				continue;
			if (isnan(cell.ratio)) {
				fprintf(f, "<td>-</td>");
				continue;
			}
			/* the ratio in the figure's better direction */
			up = figs[i].better < 0 ? 1 / cell.ratio : cell.ratio;
			fprintf(f, "<td class=\"%s\">%.3f</td>",
				!figs[i].better ? "" : up > 1.1 ? "r" : up < 1 / 1.1 ? "w" : "",
				cell.ratio);
		}
		fprintf(f, "</tr>\n");
	}
	fprintf(f, "</table></div><ul>");
	for (i = 0; i < n; i++) {
		if (!figs[i].better || (b = app_compare_best(c, &figs[i], &best)) < 0)
			continue;
		fprintf(f, "<li>%s ", app_compare_word(&figs[i]));
		html_esc(f, figs[i].label);
		fprintf(f, ": <b>");
		html_esc(f, c->groups[b].label);
		fprintf(f, "</b> (%.*f)</li>", figs[i].decimals, best);
	}
	fprintf(f, "</ul><p class=\"note\">From the runs' APP records and the traces' ops, as "
		   "<code>iotap report</code> shows them per trace; the mean over a run's "
		   "traces.</p></section>\n");
}

void iotap_compare_write_html(const struct iotap_compare *c, FILE *f)
{
	static const char *const charts[][2] = {
		{ "read_mb_per_s", "Read MB/s per phase" },
		{ "write_mb_per_s", "Write MB/s per phase" },
		{ "seeks_per_s", "Seeks per second per phase" },
		{ "ops_per_s", "Operations per second per phase" },
		{ "meta_ops_per_s", "Metadata operations per second per phase" },
		{ "write_p99_us", "Write p99 latency (us) per phase" },
		{ "read_p99_us", "Read p99 latency (us) per phase" },
	};
	unsigned int g, t, k, m, i;
	char sub[1024], buf[96];
	size_t l = 0;

	for (g = 0; g < c->ngroups && l < sizeof(sub); g++)
		l += (size_t)snprintf(sub + l, sizeof(sub) - l, "%s%s (%u trace%s)",
				      g ? " vs " : "", c->groups[g].label, c->groups[g].n,
				      c->groups[g].n == 1 ? "" : "s");
	html_page_head(f, "iotap compare", sub);
	fprintf(f, "<section><h2>Runs</h2><table><tr><th class=\"l\">run</th><th class=\"l\">traces"
		   "</th></tr>");
	for (g = 0; g < c->ngroups; g++) {
		fprintf(f, "<tr><td class=\"l\"><span style=\"color:%s\">&#9632;</span> ",
			run_colors[g % (sizeof(run_colors) / sizeof(run_colors[0]))]);
		html_esc(f, c->groups[g].label);
		fprintf(f, "%s</td><td class=\"l\">", g ? "" : " (baseline)");
		for (t = 0; t < c->groups[g].n; t++) {
			html_esc(f, c->groups[g].paths[t]);
			fputs(t + 1 < c->groups[g].n ? ", " : "", f);
		}
		fprintf(f, "</td></tr>");
	}
	fprintf(f, "</table><p class=\"note\">Each bar is a run's value for the phase; for "
		   "repeats the mean, with a whisker of ± one sample standard deviation. Ratios "
		   "are to the baseline.</p></section>\n<section><h2>Per phase, side by side</h2>");
	for (i = 0; i < sizeof(charts) / sizeof(charts[0]); i++)
		compare_bars(f, c, metric_index(charts[i][0]), charts[i][1]);
	fprintf(f, "</section>\n<section><h2>All figures</h2><div style=\"overflow-x:auto\"><table>"
		   "<tr><th class=\"l\">phase</th><th class=\"l\">figure</th>");
	for (g = 0; g < c->ngroups; g++) {
		fprintf(f, "<th>");
		html_esc(f, c->groups[g].label);
		fprintf(f, "</th>%s", g ? "<th>ratio</th>" : "");
	}
	fprintf(f, "</tr>\n");
	for (k = 0; k < c->nphases; k++) {
		int first = 1;

		for (m = 0; m < compare_nmetrics(); m++) {
			if (!compare_metric_used(c, k, m))
				continue;
			fprintf(f, "<tr%s><td class=\"l\">",
				k + 1 == c->nphases && first ? " class=\"total\"" : "");
			if (first)
				html_esc(f, c->phase_names[k]);
			first = 0;
			fprintf(f, "</td><td class=\"l\">%s</td>", compare_metric(m)->label);
			for (g = 0; g < c->ngroups; g++) {
				struct cmp_cell cell;

				compare_cell(c, k, g, m, &cell);
				if (!cell.n)
					snprintf(buf, sizeof(buf), "-");
				else if (cell.too_short)
					snprintf(buf, sizeof(buf), "+++++");
				else if (cell.n > 1)
					snprintf(buf, sizeof(buf), "%.*f ± %.*f",
						 compare_metric(m)->dec, cell.mean,
						 compare_metric(m)->dec, cell.sd);
				else
					snprintf(buf, sizeof(buf), "%.*f", compare_metric(m)->dec,
						 cell.mean);
				fprintf(f, "<td>%s</td>", buf);
				if (g) {
					if (isnan(cell.ratio) || cell.too_short || cell.base_short)
						fprintf(f, "<td>-</td>");
					else
						fprintf(f, "<td class=\"%s\">%.3f</td>",
							cell.ratio > 1.1   ? "r"
							: cell.ratio < 0.9 ? "w"
									   : "",
							cell.ratio);
				}
			}
			fprintf(f, "</tr>\n");
		}
	}
	fprintf(f, "</table></div></section>\n");
	compare_app(f, c);
	fprintf(f, "<section><h2>Throughput over time, run by run</h2>");
	for (g = 0; g < c->ngroups; g++) {
		const struct iotap_report *rep = &c->groups[g].reps[0];
		struct svg_band *bands = html_phase_bands(rep);

		fprintf(f, "<h3>");
		html_esc(f, c->groups[g].label);
		fprintf(f, " <span class=\"note\">");
		html_esc(f, rep->path);
		fprintf(f, "</span></h3>");
		html_timelines(f, rep, bands, 1100, 0);
		free(bands);
	}
	fprintf(f, "</section>\n");
	html_page_foot(f);
}
