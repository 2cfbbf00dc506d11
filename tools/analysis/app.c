// SPDX-License-Identifier: MIT
/*
 * app.c - which application a trace is, and its figures (app.h)
 *
 * The one place report.c, output.c, html.c and compare.c call: app_feed()
 * from the report's record loop, app_print_text(), app_print_html() and
 * app_json() from the renderers, app_figs() from compare. Each calls the ops (struct app_ops)
 * of the trace's application, an A row of the models table
 * (iotap_models.h); the figures themselves are in app_NAME.c.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "app.h"
#include "analysis_i.h"
#include "svg.h"

#define APP_ROW(name) &app_##name##_ops,

/* The A rows of the models table: the applications a trace may be. */
static const struct app_ops *const apps[] = {
	IOTAP_MODELS(APP_OPS_NONE, APP_ROW)
	NULL
};

static int first_word(const char *s, const char *w)
{
	size_t n = strlen(w);

	return s && !strncmp(s, w, n) && (s[n] == ' ' || !s[n]);
}

void app_init(struct iotap_app_stats *a, const char *workload)
{
	unsigned int i;

	memset(a, 0, sizeof(*a));
	for (i = 0; apps[i]; i++)
		if (first_word(workload, apps[i]->name))
			break;
	if (!apps[i])
		return;
	a->acc = calloc(1, apps[i]->size);
	if (!a->acc) {
		a->err = -ENOMEM;
		return;
	}
	a->kind = apps[i];
	a->kind->init(a->acc);
}

void app_release(struct iotap_app_stats *a)
{
	if (a->kind)
		a->kind->release(a->acc);
	free(a->acc);
	a->acc = NULL;
	a->kind = NULL;
}

void app_feed(struct iotap_app_stats *a, const struct iotap_trace_rec *r)
{
	int ret;

	if (!a->kind)
		return;
	ret = a->kind->feed(a->acc, r);
	if (ret && !a->err)
		a->err = ret;
}

void app_finish(struct iotap_app_stats *a)
{
	if (a->kind)
		a->kind->finish(a->acc);
}

unsigned int app_figs(const struct iotap_app_stats *a, struct app_fig *out)
{
	return a->kind ? a->kind->figs(a->acc, out) : 0;
}

void app_print_text(const struct iotap_app_stats *a, FILE *f)
{
	if (a->kind)
		a->kind->print_text(a->acc, f);
}

int app_period(const struct iotap_app_stats *a, uint64_t *start_ns, uint64_t *dur_ns)
{
	return a->kind ? a->kind->period(a->acc, start_ns, dur_ns) : 0;
}

void app_print_html(const struct iotap_app_stats *a, FILE *f)
{
	struct app_fig figs[APP_FIGS_MAX];
	unsigned int i, n;

	if (!a->kind)
		return;
	n = app_figs(a, figs);
	fprintf(f, "<section><h2>Application figures (");
	html_esc(f, a->kind->name);
	fprintf(f, ")</h2><table><tr><th class=\"l\">figure</th><th>value</th></tr>\n");
	for (i = 0; i < n; i++) {
		fprintf(f, "<tr><td class=\"l\">");
		html_esc(f, figs[i].label);
		if (isnan(figs[i].value))
			fprintf(f, "</td><td>-</td></tr>\n");
		else
			fprintf(f, "</td><td>%.*f</td></tr>\n", figs[i].decimals, figs[i].value);
	}
	fprintf(f, "</table>\n");
	a->kind->print_html(a->acc, f);
	fprintf(f, "</section>\n");
}

struct json_object *app_json(const struct iotap_app_stats *a)
{
	struct app_fig figs[APP_FIGS_MAX];
	json_object *o, *fo;
	unsigned int i, n;

	if (!a->kind)
		return NULL;
	o = a->kind->json(a->acc);
	n = app_figs(a, figs);
	fo = json_object_new_object();
	for (i = 0; i < n; i++)
		json_object_object_add(fo, figs[i].key, iotap_report_jnum(figs[i].value,
								   figs[i].decimals + 3));
	json_object_object_add(o, "figures", fo);
	return o;
}
