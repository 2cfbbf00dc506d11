// SPDX-License-Identifier: MIT
/*
 * app.c - which application a trace is, and its figures (app.h)
 *
 * The one place report.c, output.c and compare.c call: app_feed() from
 * the report's record loop, app_print_text() and app_json() from the
 * renderers, app_figs() from compare. The figures themselves are in
 * app_pgsql.c and app_dedup.c.
 */
#include <string.h>

#include <json-c/json.h>

#include "app.h"
#include "iotap_analysis.h"

static int first_word(const char *s, const char *w)
{
	size_t n = strlen(w);

	return s && !strncmp(s, w, n) && (s[n] == ' ' || !s[n]);
}

void app_init(struct app_stats *a, const char *workload)
{
	memset(a, 0, sizeof(*a));
	if (first_word(workload, "pgsql")) {
		a->kind = APP_PGSQL;
		app_pgsql_init(&a->pg);
	} else if (first_word(workload, "dedup")) {
		a->kind = APP_DEDUP;
		app_dedup_init(&a->dd);
	}
}

void app_release(struct app_stats *a)
{
	if (a->kind == APP_PGSQL)
		app_pgsql_release(&a->pg);
	else if (a->kind == APP_DEDUP)
		app_dedup_release(&a->dd);
	a->kind = APP_NONE;
}

void app_feed(struct app_stats *a, const struct iotap_trace_rec *r)
{
	int ret = 0;

	if (a->kind == APP_PGSQL)
		ret = app_pgsql_feed(&a->pg, r);
	else if (a->kind == APP_DEDUP)
		ret = app_dedup_feed(&a->dd, r);
	if (ret && !a->err)
		a->err = ret;
}

void app_finish(struct app_stats *a)
{
	if (a->kind == APP_PGSQL)
		app_pgsql_finish(&a->pg);
	else if (a->kind == APP_DEDUP)
		app_dedup_finish(&a->dd);
}

unsigned int app_figs(const struct app_stats *a, struct app_fig *out)
{
	if (a->kind == APP_PGSQL)
		return app_pgsql_figs(&a->pg, out);
	if (a->kind == APP_DEDUP)
		return app_dedup_figs(&a->dd, out);
	return 0;
}

void app_print_text(const struct app_stats *a, FILE *f)
{
	if (a->kind == APP_PGSQL)
		app_pgsql_print_text(&a->pg, f);
	else if (a->kind == APP_DEDUP)
		app_dedup_print_text(&a->dd, f);
}

struct json_object *app_json(const struct app_stats *a)
{
	struct app_fig figs[APP_FIGS_MAX];
	json_object *o, *fo;
	unsigned int i, n;

	if (a->kind == APP_PGSQL)
		o = app_pgsql_json(&a->pg);
	else if (a->kind == APP_DEDUP)
		o = app_dedup_json(&a->dd);
	else
		return NULL;
	n = app_figs(a, figs);
	fo = json_object_new_object();
	for (i = 0; i < n; i++)
		json_object_object_add(fo, figs[i].key, report_jnum(figs[i].value,
								   figs[i].decimals + 3));
	json_object_object_add(o, "figures", fo);
	return o;
}
