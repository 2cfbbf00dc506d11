// SPDX-License-Identifier: MIT
/*
 * compare.c - runs side by side per phase: mean, sd and ratio to the first
 *
 * Every trace is reported as `iotap report` would (its markers, or
 * automatic phases), then phases are matched across traces by their key:
 * the name plus its occurrence, so a trace's second "create" meets the
 * other's second "create". The row order is the first trace's, with
 * phases only later traces have slotted in after the phase they follow.
 * The whole trace is the last row.
 */
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_i.h"

/* compare's figures: report_metrics[]'s MO_CMP rows, in their .side order */
const struct report_metric *compare_metric(unsigned int m)
{
	const struct report_metric *col[METRIC_MAX];

	return m < metric_view(MO_CMP, col) ? col[m] : NULL;
}

unsigned int compare_nmetrics(void)
{
	const struct report_metric *col[METRIC_MAX];

	return metric_view(MO_CMP, col);
}

/*
 * The name phases are matched by: bonnie++'s test name when most of the
 * trace is bonnie's (so `iotap run bonnie`'s "write" meets a capture's
 * "seq-write-8k"), else the phase's own name; "name#k" for the k-th phase
 * of that name.
 */
#define BONNIE_MIN_TESTS	4

static const char *match_name(const struct iotap_report *rep, unsigned int i)
{
	const char **names;
	const char *n = rep->phases[i].name;

	names = calloc(rep->nphases, sizeof(*names));
	if (names && report_bonnie_names(rep, names) >= BONNIE_MIN_TESTS && names[i])
		n = names[i];
	free(names);
	return n;
}

static void phase_key(const struct iotap_report *rep, unsigned int i, char *buf, size_t len)
{
	const char *name = match_name(rep, i);
	unsigned int j, k = 1;

	for (j = 0; j < i; j++)
		if (!strcmp(match_name(rep, j), name))
			k++;
	if (k == 1)
		snprintf(buf, len, "%s", name);
	else
		snprintf(buf, len, "%s#%u", name, k);
}

static int find_key(const struct iotap_compare *c, const char *key)
{
	unsigned int k;

	for (k = 0; k < c->nphases; k++)
		if (!strcmp(c->phase_names[k], key))
			return (int)k;
	return -1;
}

static int insert_key(struct iotap_compare *c, unsigned int at, const char *key)
{
	char (*nn)[IOTAP_CMP_PHASE_KEY] = realloc(c->phase_names, (c->nphases + 1) * sizeof(*nn));

	if (!nn)
		return -ENOMEM;
	c->phase_names = nn;
	memmove(&nn[at + 1], &nn[at], (c->nphases - at) * sizeof(*nn));
	snprintf(nn[at], IOTAP_CMP_PHASE_KEY, "%s", key);
	c->nphases++;
	return 0;
}

static int *map_at(const struct iotap_compare *c, unsigned int k, unsigned int g, unsigned int t)
{
	return &c->map[(k * c->ngroups + g) * c->max_traces + t];
}

#define PERIOD_KEY	"steady period"

/*
 * A pgsql trace's steady period as one span: the phases whose middle lies
 * in the run's steady SPAN (its checkpoint parts cut it into several).
 * Return: 1 if made, 0 if the trace has none, -ENOMEM.
 */
static int steady_period(const struct iotap_report *rep, struct iotap_pstats *ps)
{
	uint64_t b, e, dur;
	unsigned int i, n = 0;

	if (!app_period(&rep->app, &b, &dur))
		return 0;
	e = b + dur;
	pstats_init(ps, PERIOD_KEY, 0, 0);
	ps->pool = rep->hist_pool;
	for (i = 0; i < rep->nphases; i++) {
		const struct iotap_pstats *p = &rep->phases[i];
		uint64_t mid = p->t_begin + (p->t_end - p->t_begin) / 2;

		if (mid < b || mid >= e)
			continue;
		if (pstats_merge(ps, p))
			return -ENOMEM;
		if (!n++)
			ps->t_begin = p->t_begin;
		ps->t_end = p->t_end;
	}
	if (!n) {
		pstats_release(ps);
		ps->name[0] = '\0';
	}
	return n > 0;
}

int iotap_compare_build(struct iotap_compare *c, struct iotap_cmp_group *groups, unsigned int ngroups,
			unsigned int jobs)
{
	unsigned int g, t, i, k, n = 0, f;
	char key[IOTAP_CMP_PHASE_KEY];
	struct iotap_report **reps = NULL;
	const char **paths = NULL;
	int ret;

	memset(c, 0, sizeof(*c));
	c->groups = groups;
	c->ngroups = ngroups;
	for (g = 0; g < ngroups; g++) {
		groups[g].reps = calloc(groups[g].n, sizeof(*groups[g].reps));
		if (!groups[g].reps)
			goto err_nomem;
		if (groups[g].n > c->max_traces)
			c->max_traces = groups[g].n;
		n += groups[g].n;
	}
	/* every run's report, @jobs side by side (report_many.c) */
	reps = calloc(n ? n : 1, sizeof(*reps));
	paths = calloc(n ? n : 1, sizeof(*paths));
	if (!reps || !paths) {
		free(reps);
		free(paths);
		goto err_nomem;
	}
	for (g = 0, n = 0; g < ngroups; g++)
		for (t = 0; t < groups[g].n; t++, n++) {
			reps[n] = &groups[g].reps[t];
			paths[n] = groups[g].paths[t];
		}
	ret = iotap_reports_build(reps, paths, n, NULL, jobs, &f);
	if (ret) {
		struct iotap_analysis_err err = reps[f]->err;

		/* built so far, released by iotap_compare_release: the runs before @f */
		for (g = 0; g < ngroups; g++) {
			t = f < groups[g].n ? f : groups[g].n;
			f -= t;
			groups[g].n = t;
		}
		free(reps);
		free(paths);
		iotap_compare_release(c);
		c->err = err;
		return ret;
	}
	free(reps);
	free(paths);
	/* the union of phase keys, in order of first appearance */
	for (g = 0; g < ngroups; g++) {
		for (t = 0; t < groups[g].n; t++) {
			const struct iotap_report *rep = &groups[g].reps[t];
			unsigned int at = 0;

			for (i = 0; i < rep->nphases; i++) {
				int pos;

				phase_key(rep, i, key, sizeof(key));
				pos = find_key(c, key);
				if (pos < 0) {
					if (insert_key(c, at, key))
						goto err_nomem;
					pos = (int)at;
				}
				at = (unsigned int)pos + 1;
			}
		}
	}
	c->period = calloc((size_t)ngroups * c->max_traces, sizeof(*c->period));
	if (!c->period)
		goto err_nomem;
	for (g = 0, k = 0; g < ngroups; g++) {
		for (t = 0; t < groups[g].n; t++) {
			ret = steady_period(&groups[g].reps[t], &c->period[g * c->max_traces + t]);
			if (ret < 0)
				goto err_nomem;
			k += ret;
		}
	}
	if (k && insert_key(c, c->nphases, PERIOD_KEY))
		goto err_nomem;
	if (insert_key(c, c->nphases, "total"))
		goto err_nomem;
	c->map = malloc((size_t)c->nphases * ngroups * c->max_traces * sizeof(*c->map));
	if (!c->map)
		goto err_nomem;
	for (k = 0; k < (size_t)c->nphases * ngroups * c->max_traces; k++)
		c->map[k] = -1;
	for (g = 0; g < ngroups; g++) {
		for (t = 0; t < groups[g].n; t++) {
			const struct iotap_report *rep = &groups[g].reps[t];

			for (i = 0; i < rep->nphases; i++) {
				phase_key(rep, i, key, sizeof(key));
				*map_at(c, (unsigned int)find_key(c, key), g, t) = (int)i;
			}
			*map_at(c, c->nphases - 1, g, t) = -2;
			if (c->period[g * c->max_traces + t].name[0])
				*map_at(c, c->nphases - 2, g, t) = -3;
		}
	}
	return 0;

err_nomem:
	iotap_compare_release(c);
	return analysis_err_set(&c->err, -ENOMEM, "out of memory");
}

void iotap_compare_release(struct iotap_compare *c)
{
	unsigned int g, t;

	for (g = 0; c->period && g < c->ngroups; g++)
		for (t = 0; t < c->max_traces; t++)
			if (c->period[g * c->max_traces + t].name[0])
				pstats_release(&c->period[g * c->max_traces + t]);
	free(c->period);
	c->period = NULL;

	for (g = 0; g < c->ngroups; g++) {
		for (t = 0; c->groups[g].reps && t < c->groups[g].n; t++)
			iotap_report_release(&c->groups[g].reps[t]);
		free(c->groups[g].reps);
		c->groups[g].reps = NULL;
	}
	free(c->phase_names);
	free(c->map);
	c->phase_names = NULL;
	c->map = NULL;
}

const struct iotap_pstats *compare_phase(const struct iotap_compare *c, unsigned int k,
					 unsigned int g,
				   unsigned int t)
{
	int i;

	if (t >= c->groups[g].n)
		return NULL;
	i = *map_at(c, k, g, t);
	if (i == -2)
		return &c->groups[g].reps[t].total;
	if (i == -3)
		return &c->period[g * c->max_traces + t];
	return i >= 0 ? &c->groups[g].reps[t].phases[i] : NULL;
}

/* Figure @m of one phase of one trace; *ok = 0 when the trace has no such figure. */
static double metric(const struct iotap_report *rep, const struct iotap_pstats *p, unsigned int m,
		     int *ok)
{
	double v = metric_value(compare_metric(m), MO_CMP, rep, p);

	*ok = !isnan(v);
	return *ok ? v : 0;
}

static void cell_raw(const struct iotap_compare *c, unsigned int k, unsigned int g, unsigned int m,
		     struct cmp_cell *out)
{
	double sum = 0, sq = 0, v;
	unsigned int t;
	int ok;

	memset(out, 0, sizeof(*out));
	out->ratio = NAN;
	for (t = 0; t < c->groups[g].n; t++) {
		const struct iotap_pstats *p = compare_phase(c, k, g, t);

		if (!p)
			continue;
		v = metric(&c->groups[g].reps[t], p, m, &ok);
		if (!ok)
			continue;
		out->too_short += (compare_metric(m)->out & MO_RATE) && fig_too_short(p);
		out->n++;
		sum += v;
		sq += v * v;
	}
	if (!out->n)
		return;
	out->mean = sum / out->n;
	if (out->n > 1) {
		double var = (sq - sum * sum / out->n) / (out->n - 1);

		out->sd = var > 0 ? sqrt(var) : 0;
	}
}

void compare_cell(const struct iotap_compare *c, unsigned int k, unsigned int g, unsigned int m,
		  struct cmp_cell *out)
{
	struct cmp_cell base;

	cell_raw(c, k, g, m, out);
	cell_raw(c, k, 0, m, &base);
	out->base_short = base.too_short;
	if (out->n && base.n && base.mean != 0)
		out->ratio = out->mean / base.mean;
	else if (out->n && base.n && out->mean == 0)
		out->ratio = 1.0;
}

int compare_metric_used(const struct iotap_compare *c, unsigned int k, unsigned int m)
{
	unsigned int g;
	struct cmp_cell cell;

	if (compare_metric(m)->out & MO_ALWAYS)
		return 1;
	for (g = 0; g < c->ngroups; g++) {
		cell_raw(c, k, g, m, &cell);
		if (cell.n && cell.mean != 0)
			return 1;
	}
	return 0;
}

/* --- text ---------------------------------------------------------------- */

static void fmt_cell(const struct cmp_cell *cell, int decimals, int with_sd, char *buf, size_t len)
{
	if (!cell->n)
		snprintf(buf, len, "-");
	else if (cell->too_short)
		snprintf(buf, len, "+++++");
	else if (with_sd && cell->n > 1)
		snprintf(buf, len, "%.*f ± %.*f", decimals, cell->mean, decimals, cell->sd);
	else
		snprintf(buf, len, "%.*f", decimals, cell->mean);
}

static int any_repeats(const struct iotap_compare *c)
{
	unsigned int g;

	for (g = 0; g < c->ngroups; g++)
		if (c->groups[g].n > 1)
			return 1;
	return 0;
}

/* Line @i of @s without the "path:" line (into @buf); NULL past the end. */
static const char *layout_line(const char *s, unsigned int i, char *buf, size_t len)
{
	const char *e;

	for (; s && *s; s = *e ? e + 1 : e) {
		e = strchr(s, '\n');
		if (!e)
			e = s + strlen(s);
		if (!strncmp(s, "path: ", 6))
			continue;
		if (!i--) {
			snprintf(buf, len, "%.*s", (int)(e - s), s);
			return buf;
		}
	}
	return NULL;
}

/*
 * What differs between the runs' storage stacks (each group's first
 * trace), line by line, before any figure: a ratio means little until
 * one knows what else changed.
 */
static void print_layouts(const struct iotap_compare *c, FILE *f)
{
	char a[1024], b[1024];
	unsigned int g, i, missing = 0, shown = 0;

	for (g = 0; g < c->ngroups; g++)
		missing += !c->groups[g].reps[0].hdr.layout;
	if (missing) {
		fprintf(f, "storage: not recorded in %u of the %u runs\n", missing, c->ngroups);
		return;
	}
	for (i = 0;; i++) {
		const char *base = layout_line(c->groups[0].reps[0].hdr.layout, i, a, sizeof(a));
		int differs = 0, any = base != NULL;

		for (g = 1; g < c->ngroups; g++) {
			const char *o = layout_line(c->groups[g].reps[0].hdr.layout, i, b, sizeof(b));

			any |= o != NULL;
			if (!base || !o || strcmp(base, o))
				differs = 1;
		}
		if (!any)
			break;
		if (!differs)
			continue;
		if (!shown++)
			fprintf(f, "storage differs:\n");
		for (g = 0; g < c->ngroups; g++) {
			const char *o = layout_line(c->groups[g].reps[0].hdr.layout, i, b, sizeof(b));

			fprintf(f, "  %-20.20s %s\n", c->groups[g].label, o ? o : "-");
		}
	}
	if (!shown && c->ngroups > 1)
		fprintf(f, "storage: the same for every run\n");
}

/*
 * What else a run is besides its storage, as a line of text: compare lists
 * those that differ (after the storage), since a ratio between runs of
 * other workloads, capture modes, tools or lengths measures those too.
 */
struct run_facet {
	const char *label;
	void (*get)(const struct iotap_report *rep, char *buf, size_t len);
	/* NULL: the runs differ when the text does */
	int (*differs)(const struct iotap_report *a, const struct iotap_report *b);
};

static void facet_made(const struct iotap_report *rep, char *buf, size_t len)
{
	const struct iotap_trace_header *h = &rep->hdr;

	snprintf(buf, len, "%s%s%s%s", iotap_trace_source_name(h->source),
		 h->capture_mode ? " (" : "",
		 h->capture_mode ? iotap_trace_mode_name(h->capture_mode) : "",
		 h->capture_mode ? ")" : "");
}

static void facet_str(char *buf, size_t len, const char *s)
{
	snprintf(buf, len, "%s", s && *s ? s : "-");
}

/*
 * The workload's command line less what names files or only changes
 * what is printed (paths, --trace FILE, --force, -q): what it did.
 */
static void facet_workload(const struct iotap_report *rep, char *buf, size_t len)
{
	static const char *const drop[] = { "--force", "-q", "--quiet", "--no-progress" };
	const char *s = rep->hdr.workload, *e;
	size_t off = 0, n, i;
	int skip_next = 0;

	buf[0] = '\0';
	for (; s && *s; s = e) {
		int keep = 1;

		while (*s == ' ')
			s++;
		e = strchr(s, ' ');
		if (!e)
			e = s + strlen(s);
		n = (size_t)(e - s);
		if (!n)
			break;
		if (skip_next || memchr(s, '/', n) || !strncmp(s, "--trace=", 8))
			keep = 0;
		skip_next = n == 7 && !strncmp(s, "--trace", 7);
		keep &= !skip_next;
		for (i = 0; keep && i < sizeof(drop) / sizeof(drop[0]); i++)
			keep = !(strlen(drop[i]) == n && !strncmp(s, drop[i], n));
		if (keep && off + n + 2 < len)
			off += (size_t)snprintf(buf + off, len - off, "%s%.*s", off ? " " : "", (int)n, s);
	}
	if (!off)
		snprintf(buf, len, "-");
}

static void facet_tool(const struct iotap_report *rep, char *buf, size_t len)
{
	char v[48];

	snprintf(v, sizeof(v), "%s, format %u.%u", rep->hdr.tool ? rep->hdr.tool : "-",
		 rep->hdr.version_major, rep->hdr.version_minor);
	facet_str(buf, len, v);
}

static void facet_kernel(const struct iotap_report *rep, char *buf, size_t len)
{
	facet_str(buf, len, rep->hdr.kernel);
}

static void facet_mount_opts(const struct iotap_report *rep, char *buf, size_t len)
{
	facet_str(buf, len, rep->hdr.mount_opts);
}

static double run_secs(const struct iotap_report *rep)
{
	const struct iotap_pstats *t = &rep->total;

	return t->t_end > t->t_begin ? (double)(t->t_end - t->t_begin) / 1e9 : 0;
}

static void facet_duration(const struct iotap_report *rep, char *buf, size_t len)
{
	snprintf(buf, len, "%.3f s", run_secs(rep));
}

/* Lengths within 10% or half a second of each other are the same run's length. */
static int duration_differs(const struct iotap_report *a, const struct iotap_report *b)
{
	double x = run_secs(a), y = run_secs(b);

	return fabs(x - y) > 0.1 * (x > y ? x : y) && fabs(x - y) >= 0.5;
}

static const struct run_facet run_facets[] = {
	{ "made by", facet_made, NULL },
	{ "workload", facet_workload, NULL },
	{ "tool", facet_tool, NULL },
	{ "kernel", facet_kernel, NULL },
	{ "mount options", facet_mount_opts, NULL },
	{ "duration", facet_duration, duration_differs },
};

/* The facets in which the runs (each group's first trace) differ. */
static void print_facets(const struct iotap_compare *c, FILE *f)
{
	char a[1024], b[1024];
	unsigned int g, i, shown = 0;

	for (i = 0; i < sizeof(run_facets) / sizeof(run_facets[0]); i++) {
		const struct run_facet *x = &run_facets[i];
		const struct iotap_report *r0 = &c->groups[0].reps[0];
		int differs = 0;

		x->get(r0, a, sizeof(a));
		for (g = 1; g < c->ngroups && !differs; g++) {
			const struct iotap_report *r = &c->groups[g].reps[0];

			if (x->differs) {
				differs = x->differs(r0, r);
			} else {
				x->get(r, b, sizeof(b));
				differs = strcmp(a, b) != 0;
			}
		}
		if (!differs)
			continue;
		if (!shown++)
			fprintf(f, "runs differ besides storage (the ratios measure that too):\n");
		for (g = 0; g < c->ngroups; g++) {
			x->get(&c->groups[g].reps[0], b, sizeof(b));
			fprintf(f, "  %-20.20s %s: %s\n", c->groups[g].label, x->label, b);
		}
	}
}

void iotap_compare_print_text(const struct iotap_compare *c, FILE *f)
{
	unsigned int k, g, m, n = compare_nmetrics();
	int rep = any_repeats(c);
	char buf[96];

	fprintf(f, "compare: %u run%s%s; ratios are to %s\n", c->ngroups,
		c->ngroups == 1 ? "" : "s", rep ? " (mean ± sd over repeats)" : "",
		c->groups[0].label);
	for (g = 0; g < c->ngroups; g++) {
		unsigned int t;

		fprintf(f, "  %-20s", c->groups[g].label);
		for (t = 0; t < c->groups[g].n; t++)
			fprintf(f, " %s", c->groups[g].paths[t]);
		fprintf(f, "\n");
	}
	print_layouts(c, f);
	print_facets(c, f);
	fprintf(f, "MB = 10^6 bytes; latency in microseconds\n\n%-24s %-15s", "phase", "figure");
	for (g = 0; g < c->ngroups; g++) {
		snprintf(buf, sizeof(buf), "%s%s", c->groups[g].label, "");
		fprintf(f, " %22.22s", buf);
		if (g)
			fprintf(f, " %7s", "ratio");
	}
	fprintf(f, "\n");
	for (k = 0; k < c->nphases; k++) {
		int first = 1;

		for (m = 0; m < n; m++) {
			if (!compare_metric_used(c, k, m))
				continue;
			fprintf(f, "%-24.24s %-15s", first ? c->phase_names[k] : "",
				compare_metric(m)->label);
			first = 0;
			for (g = 0; g < c->ngroups; g++) {
				struct cmp_cell cell;

				compare_cell(c, k, g, m, &cell);
				fmt_cell(&cell, compare_metric(m)->dec, 1, buf, sizeof(buf));
				fprintf(f, " %22s", buf);
				if (g) {
					if (isnan(cell.ratio) || cell.too_short || cell.base_short)
						fprintf(f, " %7s", "-");
					else
						fprintf(f, " %7.3f", cell.ratio);
				}
			}
			fprintf(f, "\n");
		}
	}
	app_compare_print_text(c, f);
}

/* --- CSV: one row per phase, figure and run (tidy); then the application's --- */

void iotap_compare_print_csv(const struct iotap_compare *c, FILE *f)
{
	unsigned int k, g, m, n = compare_nmetrics();

	fprintf(f, "phase,figure,run,traces,mean,sd,ratio\n");
	for (k = 0; k < c->nphases; k++) {
		for (m = 0; m < n; m++) {
			if (!compare_metric_used(c, k, m))
				continue;
			for (g = 0; g < c->ngroups; g++) {
				struct cmp_cell cell;

				compare_cell(c, k, g, m, &cell);
				fprintf(f, "\"%s\",%s,\"%s\",%u,", c->phase_names[k],
					compare_metric(m)->key, c->groups[g].label, cell.n);
				if (cell.n)
					fprintf(f, "%.*f,%.*f,", compare_metric(m)->dec + 3,
						cell.mean, compare_metric(m)->dec + 3, cell.sd);
				else
					fprintf(f, ",,");
				if (!isnan(cell.ratio))
					fprintf(f, "%.4f", cell.ratio);
				fprintf(f, "\n");
			}
		}
	}
	app_compare_print_csv(c, f);
}

/* --- JSON ---------------------------------------------------------------- */

int iotap_compare_print_json(const struct iotap_compare *c, FILE *f)
{
	json_object *root = json_object_new_object(), *runs = json_object_new_array();
	json_object *phases = json_object_new_array();
	unsigned int k, g, m, t, n = compare_nmetrics();

	if (!root || !runs || !phases)
		return -ENOMEM;
	for (g = 0; g < c->ngroups; g++) {
		json_object *r = json_object_new_object(), *tr = json_object_new_array();

		json_object_object_add(r, "label", json_object_new_string(c->groups[g].label));
		for (t = 0; t < c->groups[g].n; t++)
			json_object_array_add(tr, json_object_new_string(c->groups[g].paths[t]));
		json_object_object_add(r, "traces", tr);
		json_object_array_add(runs, r);
	}
	json_object_object_add(root, "runs", runs);
	json_object_object_add(root, "baseline", json_object_new_string(c->groups[0].label));
	for (k = 0; k < c->nphases; k++) {
		json_object *ph = json_object_new_object(), *figs = json_object_new_object();

		json_object_object_add(ph, "name", json_object_new_string(c->phase_names[k]));
		for (m = 0; m < n; m++) {
			json_object *arr;

			if (!compare_metric_used(c, k, m))
				continue;
			arr = json_object_new_array();
			for (g = 0; g < c->ngroups; g++) {
				json_object *cell = json_object_new_object();
				struct cmp_cell cl;

				compare_cell(c, k, g, m, &cl);
				json_object_object_add(cell, "run",
						       json_object_new_string(c->groups[g].label));
				json_object_object_add(cell, "n", json_object_new_int((int)cl.n));
				json_object_object_add(cell, "mean",
						       cl.n ? iotap_report_jnum(cl.mean, 6) : NULL);
				json_object_object_add(cell, "sd", cl.n ? iotap_report_jnum(cl.sd, 6) : NULL);
				json_object_object_add(cell, "ratio", iotap_report_jnum(cl.ratio, 4));
				json_object_array_add(arr, cell);
			}
			json_object_object_add(figs, compare_metric(m)->key, arr);
		}
		json_object_object_add(ph, "figures", figs);
		json_object_array_add(phases, ph);
	}
	json_object_object_add(root, "phases", phases);
	json_object_object_add(root, "application", app_compare_json(c));
	fprintf(f, "%s\n", json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY |
							      JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(root);
	return 0;
}
