// SPDX-License-Identifier: MIT
/*
 * app_compare.c - the application figures of several runs side by side
 *
 * For pgsql and dedup traces (app.h): each headline figure (app_figs) as
 * the mean over a group's traces with its ratio to the baseline group,
 * then one verdict per figure that has a better direction: which layout
 * gives more tps, lower commit p99, a shorter checkpoint sync, a higher
 * restore rate. Groups whose traces are of another application (or none)
 * are left blank. Text and JSON here; the CSV rows here too (compare's
 * tidy columns, phase "application"); the HTML section in html.c, from
 * the same cells and verdicts.
 */
#include <math.h>
#include <string.h>

#include <json-c/json.h>

#include "app.h"
#include "analysis_i.h"

/* Figure @key of group @g over its traces that have it: n, mean, sample sd. */
static void cell_raw(const struct iotap_compare *c, unsigned int g, const char *key,
		     struct cmp_cell *out)
{
	double sum = 0, sq = 0;
	unsigned int t, i;

	out->n = 0;
	out->mean = out->sd = out->ratio = NAN;
	for (t = 0; t < c->groups[g].n; t++) {
		struct app_fig figs[APP_FIGS_MAX];
		unsigned int k = app_figs(&c->groups[g].reps[t].app, figs);

		for (i = 0; i < k; i++)
			if (!strcmp(figs[i].key, key) && !isnan(figs[i].value)) {
				sum += figs[i].value;
				sq += figs[i].value * figs[i].value;
				out->n++;
			}
	}
	if (!out->n)
		return;
	out->mean = sum / out->n;
	out->sd = out->n > 1 ? sqrt(fmax(0, (sq - sum * sum / out->n) / (out->n - 1))) : 0;
}

void app_compare_cell(const struct iotap_compare *c, unsigned int g, const char *key,
		      struct cmp_cell *out)
{
	struct cmp_cell base;

	cell_raw(c, g, key, out);
	cell_raw(c, 0, key, &base);
	if (out->n && base.n && base.mean != 0)
		out->ratio = out->mean / base.mean;
}

unsigned int app_compare_figs(const struct iotap_compare *c, struct app_fig *figs, const char **kind)
{
	unsigned int g, t, n;

	for (g = 0; g < c->ngroups; g++)
		for (t = 0; t < c->groups[g].n; t++) {
			n = app_figs(&c->groups[g].reps[t].app, figs);
			if (n) {
				*kind = c->groups[g].reps[t].app.kind->name;
				return n;
			}
		}
	return 0;
}

const char *app_compare_word(const struct app_fig *f)
{
	if (!strncmp(f->key, "tps", 3) || strstr(f->key, "mb_per_s") || strstr(f->key, "per_s"))
		return f->better > 0 ? "higher" : "lower";
	return f->better > 0 ? "more" : strstr(f->key, "_s") ? "shorter" : "lower";
}

int app_compare_best(const struct iotap_compare *c, const struct app_fig *f, double *best)
{
	unsigned int g, have = 0;
	int b = -1;

	for (g = 0; g < c->ngroups; g++) {
		struct cmp_cell cell;

		cell_raw(c, g, f->key, &cell);
		if (!cell.n)
			continue;
		have++;
		if (b < 0 || (f->better > 0 ? cell.mean > *best : cell.mean < *best)) {
			b = (int)g;
			*best = cell.mean;
		}
	}
	return have >= 2 ? b : -1;
}

void app_compare_print_text(const struct iotap_compare *c, FILE *f)
{
	struct app_fig figs[APP_FIGS_MAX];
	const char *kind = "";
	unsigned int n = app_compare_figs(c, figs, &kind), i, g;
	struct cmp_cell cell;
	char buf[48];
	double best;
	int b;

	if (!n)
		return;
	fprintf(f, "\n%-24s %-22s", "application", "figure");
	for (g = 0; g < c->ngroups; g++) {
		fprintf(f, " %22.22s", c->groups[g].label);
		if (g)
			fprintf(f, " %7s", "ratio");
	}
	fprintf(f, "\n");
	for (i = 0; i < n; i++) {
		fprintf(f, "%-24s %-22.22s", i ? "" : kind, figs[i].label);
		for (g = 0; g < c->ngroups; g++) {
			app_compare_cell(c, g, figs[i].key, &cell);
			if (cell.n)
				snprintf(buf, sizeof(buf), "%.*f", figs[i].decimals, cell.mean);
			else
				snprintf(buf, sizeof(buf), "-");
			fprintf(f, " %22s", buf);
			if (g) {
				if (!isnan(cell.ratio))
					fprintf(f, " %7.3f", cell.ratio);
				else
					fprintf(f, " %7s", "-");
			}
		}
		fprintf(f, "\n");
	}
	for (i = 0; i < n; i++) {
		if (!figs[i].better || (b = app_compare_best(c, &figs[i], &best)) < 0)
			continue;
		fprintf(f, "%s %s: %s (%.*f)\n", app_compare_word(&figs[i]), figs[i].label,
			c->groups[b].label, figs[i].decimals, best);
	}
}

struct json_object *app_compare_json(const struct iotap_compare *c)
{
	struct app_fig figs[APP_FIGS_MAX];
	const char *kind = "";
	unsigned int n = app_compare_figs(c, figs, &kind), i, g;
	json_object *o, *fo, *vo;
	double best;
	int b;

	if (!n)
		return NULL;
	o = json_object_new_object();
	fo = json_object_new_object();
	vo = json_object_new_array();
	for (i = 0; i < n; i++) {
		json_object *arr = json_object_new_array();

		for (g = 0; g < c->ngroups; g++) {
			json_object *cell = json_object_new_object();
			struct cmp_cell cl;

			app_compare_cell(c, g, figs[i].key, &cl);
			json_object_object_add(cell, "run", json_object_new_string(c->groups[g].label));
			json_object_object_add(cell, "n", json_object_new_int((int)cl.n));
			json_object_object_add(cell, "mean", cl.n ? iotap_report_jnum(cl.mean,
										 figs[i].decimals + 3)
							      : NULL);
			json_object_object_add(cell, "ratio", iotap_report_jnum(cl.ratio, 4));
			json_object_array_add(arr, cell);
		}
		json_object_object_add(fo, figs[i].key, arr);
		if (figs[i].better && (b = app_compare_best(c, &figs[i], &best)) >= 0) {
			json_object *v = json_object_new_object();

			json_object_object_add(v, "figure", json_object_new_string(figs[i].key));
			json_object_object_add(v, "better", json_object_new_string(
						       figs[i].better > 0 ? "higher" : "lower"));
			json_object_object_add(v, "best", json_object_new_string(c->groups[b].label));
			json_object_object_add(v, "value", iotap_report_jnum(best, figs[i].decimals + 3));
			json_object_array_add(vo, v);
		}
	}
	json_object_object_add(o, "kind", json_object_new_string(kind));
	json_object_object_add(o, "figures", fo);
	json_object_object_add(o, "verdicts", vo);
	return o;
}

/* --- CSV: compare's tidy rows, phase "application" ----------------------------------- */

void app_compare_print_csv(const struct iotap_compare *c, FILE *f)
{
	struct app_fig figs[APP_FIGS_MAX];
	const char *kind = "";
	unsigned int n = app_compare_figs(c, figs, &kind), i, g;

	for (i = 0; i < n; i++)
		for (g = 0; g < c->ngroups; g++) {
			struct cmp_cell cell;

			app_compare_cell(c, g, figs[i].key, &cell);
			fprintf(f, "\"application\",%s,\"%s\",%u,", figs[i].key, c->groups[g].label,
				cell.n);
			if (cell.n)
				fprintf(f, "%.*f,%.*f,", figs[i].decimals + 3, cell.mean,
					figs[i].decimals + 3, cell.sd);
			else
				fprintf(f, ",,");
			if (!isnan(cell.ratio))
				fprintf(f, "%.4f", cell.ratio);
			fprintf(f, "\n");
		}
}
