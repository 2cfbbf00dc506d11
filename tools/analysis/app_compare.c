// SPDX-License-Identifier: MIT
/*
 * app_compare.c - the application figures of several runs side by side
 *
 * For pgsql and dedup traces (app.h): each headline figure (app_figs) as
 * the mean over a group's traces with its ratio to the baseline group,
 * then one verdict per figure that has a better direction: which layout
 * gives more tps, lower commit p99, a shorter checkpoint sync, a higher
 * restore rate. Groups whose traces are of another application (or none)
 * are left blank.
 */
#include <math.h>
#include <string.h>

#include <json-c/json.h>

#include "app.h"
#include "iotap_analysis.h"

/* Figure @key of group @g: mean over its traces that have it. */
static double group_mean(const struct compare *c, unsigned int g, const char *key, unsigned int *n)
{
	double sum = 0;
	unsigned int t, i;

	*n = 0;
	for (t = 0; t < c->groups[g].n; t++) {
		struct app_fig figs[APP_FIGS_MAX];
		unsigned int k = app_figs(&c->groups[g].reps[t].app, figs);

		for (i = 0; i < k; i++)
			if (!strcmp(figs[i].key, key) && !isnan(figs[i].value)) {
				sum += figs[i].value;
				(*n)++;
			}
	}
	return *n ? sum / *n : NAN;
}

/* The baseline's figures, or the first group's that has an application; its kind in @kind. */
static unsigned int ref_figs(const struct compare *c, struct app_fig *figs, const char **kind)
{
	unsigned int g, t, n;

	for (g = 0; g < c->ngroups; g++)
		for (t = 0; t < c->groups[g].n; t++) {
			n = app_figs(&c->groups[g].reps[t].app, figs);
			if (n) {
				*kind = c->groups[g].reps[t].app.kind == APP_DEDUP ? "dedup" : "pgsql";
				return n;
			}
		}
	return 0;
}

static const char *verdict_word(const struct app_fig *f)
{
	if (!strncmp(f->key, "tps", 3) || strstr(f->key, "mb_per_s") || strstr(f->key, "per_s"))
		return f->better > 0 ? "higher" : "lower";
	return f->better > 0 ? "more" : strstr(f->key, "_s") ? "shorter" : "lower";
}

/* Best group for @f: -1 when fewer than two groups have it. */
static int best_group(const struct compare *c, const struct app_fig *f, double *best)
{
	unsigned int g, n, have = 0;
	int b = -1;

	for (g = 0; g < c->ngroups; g++) {
		double v = group_mean(c, g, f->key, &n);

		if (!n)
			continue;
		have++;
		if (b < 0 || (f->better > 0 ? v > *best : v < *best)) {
			b = (int)g;
			*best = v;
		}
	}
	return have >= 2 ? b : -1;
}

void app_compare_print_text(const struct compare *c, FILE *f)
{
	struct app_fig figs[APP_FIGS_MAX];
	const char *kind = "";
	unsigned int n = ref_figs(c, figs, &kind), i, g, cnt;
	double base, v, best;
	char buf[48];
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
		base = group_mean(c, 0, figs[i].key, &cnt);
		for (g = 0; g < c->ngroups; g++) {
			v = group_mean(c, g, figs[i].key, &cnt);
			if (cnt)
				snprintf(buf, sizeof(buf), "%.*f", figs[i].decimals, v);
			else
				snprintf(buf, sizeof(buf), "-");
			fprintf(f, " %22s", buf);
			if (g) {
				if (cnt && !isnan(base) && base != 0)
					fprintf(f, " %7.3f", v / base);
				else
					fprintf(f, " %7s", "-");
			}
		}
		fprintf(f, "\n");
	}
	for (i = 0; i < n; i++) {
		if (!figs[i].better || (b = best_group(c, &figs[i], &best)) < 0)
			continue;
		fprintf(f, "%s %s: %s (%.*f)\n", verdict_word(&figs[i]), figs[i].label,
			c->groups[b].label, figs[i].decimals, best);
	}
}

struct json_object *app_compare_json(const struct compare *c)
{
	struct app_fig figs[APP_FIGS_MAX];
	const char *kind = "";
	unsigned int n = ref_figs(c, figs, &kind), i, g, cnt;
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
		double base = group_mean(c, 0, figs[i].key, &cnt);

		for (g = 0; g < c->ngroups; g++) {
			json_object *cell = json_object_new_object();
			double v = group_mean(c, g, figs[i].key, &cnt);

			json_object_object_add(cell, "run", json_object_new_string(c->groups[g].label));
			json_object_object_add(cell, "n", json_object_new_int((int)cnt));
			json_object_object_add(cell, "mean", cnt ? report_jnum(v, figs[i].decimals + 3)
							    : NULL);
			json_object_object_add(cell, "ratio", cnt && base != 0 ?
					       report_jnum(v / base, 4) : NULL);
			json_object_array_add(arr, cell);
		}
		json_object_object_add(fo, figs[i].key, arr);
		if (figs[i].better && (b = best_group(c, &figs[i], &best)) >= 0) {
			json_object *v = json_object_new_object();

			json_object_object_add(v, "figure", json_object_new_string(figs[i].key));
			json_object_object_add(v, "better", json_object_new_string(
						       figs[i].better > 0 ? "higher" : "lower"));
			json_object_object_add(v, "best", json_object_new_string(c->groups[b].label));
			json_object_object_add(v, "value", report_jnum(best, figs[i].decimals + 3));
			json_object_array_add(vo, v);
		}
	}
	json_object_object_add(o, "kind", json_object_new_string(kind));
	json_object_object_add(o, "figures", fo);
	json_object_object_add(o, "verdicts", vo);
	return o;
}
