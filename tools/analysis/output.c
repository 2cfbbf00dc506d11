// SPDX-License-Identifier: MIT
/*
 * output.c - a struct iotap_report as text for people, CSV and JSON for scripts
 *
 * The JSON keys are a contract (issue 3, "JSON contract"): add, never
 * rename. CSV columns likewise only grow at the end. MB is 10^6 bytes
 * everywhere; latencies are in microseconds; K/sec (--bonnie) is KiB/s as
 * bonnie++ prints it.
 */
#include <inttypes.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "phase.h"
#include "analysis_i.h"

/* --- what the text report says of the trace --------------------------- */

/* Seconds of a "key=S" option in a mount option string, or -1. */
static double mount_opt_s(const char *opts, const char *key)
{
	size_t l = strlen(key);
	const char *p;

	for (p = opts; p; p = strchr(p, ',')) {
		if (*p == ',')
			p++;
		if (!strncmp(p, key, l) && p[l] == '=')
			return strtod(p + l + 1, NULL);
	}
	return -1;
}

/*
 * A capture whose kernel kept attributes or names cached: stat() and
 * lookups may never have reached the trace, so say so before the figures.
 */
static void text_cache_note(FILE *f, const struct iotap_trace_header *h)
{
	double a, e;

	if (h->source != IOTAP_SOURCE_CAPTURE || !h->mount_opts)
		return;
	a = mount_opt_s(h->mount_opts, "attr_timeout");
	e = mount_opt_s(h->mount_opts, "entry_timeout");
	if (a < 0 && e < 0)
		a = e = mount_opt_s(h->mount_opts, "timeout");	/* traces before the split */
	if (a <= 0 && e <= 0)
		return;
	fprintf(f, "note: the kernel answered stat() from its cache for %gs and lookups for %gs: "
		   "phases of stat calls may be missing\n      (iotap mount --attr-timeout 0 "
		   "--entry-timeout 0 records every one)\n", a > 0 ? a : 0, e > 0 ? e : 0);
}

/* The storage stack the trace ran on (header "layout"), without its path line. */
static void text_layout(FILE *f, const char *s)
{
	const char *e;
	int first = 1;

	if (!s)
		return;
	for (; *s; s = *e ? e + 1 : e) {
		e = strchr(s, '\n');
		if (!e)
			e = s + strlen(s);
		if (!strncmp(s, "path: ", 6))
			continue;
		fprintf(f, "%-8s %.*s\n", first ? "storage" : "", (int)(e - s), s);
		first = 0;
	}
}

/*
 * "8k 99.9%, 3000b 0.1%": the commonest request sizes. A bucket's sizes
 * are known exactly when they are 2^i and at most IOTAP_SIZE_OTHERS others; otherwise
 * its requests of exactly 2^i are one entry and the rest a range
 * ("4k-8k": above 4 KiB, up to 8 KiB), never a size no request had.
 */
void fig_size_summary(const struct iotap_dir_stats *d, char *buf, size_t len)
{
	struct ent {
		uint64_t n, size;	/* size 0: bucket @b's range */
		unsigned int b;
	} e[IOTAP_SIZE_BUCKETS * (1 + IOTAP_SIZE_OTHERS)];
	unsigned int i, j, k, n = 0;
	size_t l = 0;

	buf[0] = '\0';
	for (i = 0; i < IOTAP_SIZE_BUCKETS; i++) {
		if (!d->size_hist[i])
			continue;
		if (d->size_top[i])
			e[n++] = (struct ent){ d->size_top[i], 1ull << i, i };
		if (!dir_bucket_exact(d, i))
			e[n++] = (struct ent){ d->size_hist[i] - d->size_top[i], 0, i };
		else
			for (j = 0; j < IOTAP_SIZE_OTHERS && d->size_oth_n[i][j]; j++)
				e[n++] = (struct ent){ d->size_oth_n[i][j], d->size_oth[i][j], i };
	}
	for (k = 0; k < 3 && k < n; k++) {
		unsigned int best = k;
		char sz[48], lo[20], hi[20], pct[16];
		double share;
		struct ent t;

		for (i = k + 1; i < n; i++)
			if (e[i].n > e[best].n)
				best = i;
		t = e[best];		/* ties keep their order: by bucket, 2^i first */
		memmove(&e[k + 1], &e[k], (best - k) * sizeof(e[0]));
		e[k] = t;
		if (t.size) {
			fmt_req_size(t.size, sz, sizeof(sz));
		} else {
			fmt_req_size(t.b ? 1ull << (t.b - 1) : 0, lo, sizeof(lo));
			fmt_req_size(1ull << t.b, hi, sizeof(hi));
			snprintf(sz, sizeof(sz), "%s-%s", lo, hi);
		}
		share = 100.0 * (double)t.n / (double)d->ops;
		snprintf(pct, sizeof(pct), share < 0.05 ? "<0.1%%" : "%.1f%%", share);
		l += (size_t)snprintf(buf + l, l < len ? len - l : 0, "%s%s %s", k ? ", " : "", sz,
				      pct);
	}
}

/* "<16k 83%, <2m 8%": the commonest seek distances */
void fig_seek_summary(const struct iotap_pstats *p, char *buf, size_t len)
{
	unsigned int k, i, n = 0, used[3] = { 0 };
	size_t l = 0;

	buf[0] = '\0';
	for (k = 0; k < 3; k++) {
		int best = -1;

		for (i = 0; i < IOTAP_SEEK_BUCKETS; i++) {
			unsigned int j, taken = 0;

			for (j = 0; j < n; j++)
				taken |= used[j] == i;
			if (!taken && p->seek_hist[i] &&
			    (best < 0 || p->seek_hist[i] > p->seek_hist[best]))
				best = (int)i;
		}
		if (best < 0)
			break;
		used[n++] = (unsigned int)best;
		{
			char sz[32], pct[16];
			double share = 100.0 * (double)p->seek_hist[best] / (double)p->seeks;

			fmt_req_size(best < 63 ? 1ull << best : UINT64_MAX, sz, sizeof(sz));
			snprintf(pct, sizeof(pct), share < 0.5 ? "<1%%" : "%.0f%%", share);
			l += (size_t)snprintf(buf + l, l < len ? len - l : 0, "%s<%s %s",
					      n > 1 ? ", " : "", sz, pct);
		}
	}
}

/* --- text ---------------------------------------------------------------- */

/* The table's sizes column: each direction's commonest request size ("w 1m 100%"). */
static void text_top_sizes(const struct iotap_pstats *p, char *buf, size_t len)
{
	const struct iotap_dir_stats *dirs[2] = { &p->rd, &p->wr };
	size_t l = 0;
	unsigned int k;

	buf[0] = '\0';
	for (k = 0; k < 2 && l < len; k++) {
		char one[256], *comma;

		if (!dirs[k]->ops)
			continue;
		fig_size_summary(dirs[k], one, sizeof(one));
		comma = strchr(one, ',');
		if (comma)
			*comma = '\0';
		l += (size_t)snprintf(buf + l, len - l, "%s%c %s", l ? ", " : "", k ? 'w' : 'r', one);
	}
	if (!l)
		snprintf(buf, len, "-");
}

void report_text_row(FILE *f, const struct iotap_report *rep, const struct iotap_pstats *p,
		     const char *idx,
		     const char *name, const struct iotap_out_opts *oo)
{
	const struct report_metric *col[METRIC_MAX];
	unsigned int out = oo->bonnie_units ? MO_TEXT_K : MO_TEXT_MB, n, k;
	char sizes[96];

	fprintf(f, "%3s %-24.24s", idx, name);
	n = metric_view(out, col);
	for (k = 0; k < n; k++) {
		double v = metric_value(col[k], out, rep, p);

		if ((col[k]->out & MO_RATE) && fig_too_short(p))
			fprintf(f, " %*s", col[k]->width, "+++++");
		else if (isnan(v))
			fprintf(f, " %*s", col[k]->width, "-");
		else
			fprintf(f, " %*.*f", col[k]->width, col[k]->dec, v);
	}
	text_top_sizes(p, sizes, sizeof(sizes));
	fprintf(f, "  %s\n", sizes);
}

static void text_phase_row(FILE *f, const struct iotap_report *rep, const struct iotap_pstats *p,
			   int idx,
			   const struct iotap_out_opts *oo)
{
	char idxs[16] = "";

	if (idx >= 0)
		snprintf(idxs, sizeof(idxs), "%d", idx);
	report_text_row(f, rep, p, idxs, p->name, oo);
}

/* The read and write lines of a phase: ops, bytes, rate, IOPS, request sizes. */
static void text_data_lines(FILE *f, const struct iotap_pstats *p, const struct iotap_out_opts *oo)
{
	double d = pstats_duration_s(p);
	const struct iotap_dir_stats *dirs[2] = { &p->rd, &p->wr };
	unsigned int k;
	char buf[256];

	for (k = 0; k < 2; k++) {
		const struct iotap_dir_stats *dr = dirs[k];

		if (!dr->ops)
			continue;
		fig_size_summary(dr, buf, sizeof(buf));
		if (oo->bonnie_units)
			fprintf(f,
				"    %-6s %11" PRIu64 " ops %14" PRIu64
				" bytes %10.0f K/sec %10.1f IOPS"
				"   sizes: %s\n",
				k ? "write" : "read", dr->ops, dr->bytes,
				d > 0 ? (double)dr->bytes / 1024 / d : 0, fig_rate(dr->ops, d),
				buf);
		else
			fprintf(f,
				"    %-6s %11" PRIu64 " ops %14" PRIu64
				" bytes %9.2f MB/s %10.1f IOPS"
				"   sizes: %s\n",
				k ? "write" : "read", dr->ops, dr->bytes, fig_mbps(dr->bytes, d),
				fig_rate(dr->ops, d), buf);
		if (dr->errors)
			fprintf(f, "           %" PRIu64 " failed\n", dr->errors);
	}
}

static void text_detail(FILE *f, const struct iotap_pstats *p, const struct iotap_flagset *fl,
			const struct iotap_out_opts *oo)
{
	double d = pstats_duration_s(p);
	struct dev_fig dev;
	struct cpu_fig cpu;
	unsigned int op, k;
	char buf[256];
	int any = 0;

	text_data_lines(f, p, oo);
	if (p->data_ops) {
		fig_seek_summary(p, buf, sizeof(buf));
		fprintf(f,
			"    seeks  %" PRIu64 " (%.1f/s), sequential %.1f%% of %" PRIu64
			" data ops%s%s\n",
			p->seeks, fig_rate(p->seeks, d), fig_seq_pct(p), p->data_ops,
			p->seeks ? "; distances " : "", buf);
	}
	if (p->fsyncs)
		fprintf(f, "    fsync  %" PRIu64 " (%.1f/s)\n", p->fsyncs, fig_rate(p->fsyncs, d));
	for (op = 0; op < IOTAP_OP_MAX; op++) {
		if (!p->op_count[op] || !pstats_is_meta_op(op))
			continue;
		fprintf(f, "%s %s %" PRIu64 " (%.1f/s)", any ? "," : "    meta  ",
			iotap_trace_op_name(op), p->op_count[op], fig_rate(p->op_count[op], d));
		any = 1;
	}
	if (any)
		fprintf(f, "\n");
	fprintf(f,
		"    concurrency: %.2f ops in flight on average, %" PRIu64 " at most; %u thread%s",
		fig_inflight(p), p->max_inflight, pstats_threads(p),
		pstats_threads(p) == 1 ? "" : "s");
	if (p->data_ops && pstats_data_threads(p) != pstats_threads(p))
		fprintf(f, " (%u doing data ops)", pstats_data_threads(p));
	if (fig_cpu(p, &cpu)) {
		fprintf(f, "; cpu");
		if (cpu.has_mark)
			fprintf(f, " %.1f%% (workload)", cpu.mark_pct);
		if (cpu.has_sample)
			fprintf(f, "%s system %.1f%%, iowait %.1f%%, recorder %.1f%%",
				cpu.has_mark ? "," : "", cpu.system_pct, cpu.iowait_pct,
				cpu.daemon_pct);
	}
	fprintf(f, "\n");
	if (fig_device(p, &dev)) {
		fprintf(f,
			"    device %u:%u: read %.2f MB/s, write %.2f MB/s, %.1f IOPS, "
			"util %.1f%%, "
			"queue %.2f",
			p->smp_last.s.dev_major, p->smp_last.s.dev_minor, dev.rd_mbps, dev.wr_mbps,
			dev.iops, dev.util_pct, dev.queue);
		if (dev.fs_unseen_pct >= 0)
			fprintf(f, "; filesystem reads the device never saw: %.1f%%",
				dev.fs_unseen_pct);
		fprintf(f, "\n");
	}
	fprintf(f, "    %-12s %10s %10s %10s %10s %10s %10s %10s %7s\n", "latency(us)", "count",
		"mean", "p50", "p90", "p99", "p99.9", "max", "errors");
	for (op = 0; op < IOTAP_OP_MAX; op++) {
		const struct iotap_hist *h = p->lat[op];

		if (!h || !h->n)
			continue;
		fprintf(f,
			"    %-12s %10" PRIu64
			" %10.1f %10.1f %10.1f %10.1f %10.1f %10.1f %7" PRIu64 "\n",
			iotap_trace_op_name(op), h->n, (double)h->sum / h->n / 1e3,
			iotap_hist_quantile(h, 0.50) / 1e3, iotap_hist_quantile(h, 0.90) / 1e3,
			iotap_hist_quantile(h, 0.99) / 1e3, iotap_hist_quantile(h, 0.999) / 1e3,
			h->max / 1e3, p->op_errors[op]);
	}
	for (k = 0; fl && k < fl->n; k++)
		fprintf(f, "    FLAG %s\n", fl->text[k]);
}

const char *fmt_realtime(uint64_t ns, char *buf, size_t len)
{
	time_t t = (time_t)(ns / 1000000000ull);
	struct tm tm;

	if (!ns || !localtime_r(&t, &tm) || !strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm))
		snprintf(buf, len, "?");
	return buf;
}

/* What the trace is, where it ran, the units. */
static void text_head(FILE *f, const struct iotap_report *rep, const struct iotap_out_opts *oo)
{
	const struct iotap_trace_header *h = &rep->hdr;
	char when[64];

	fprintf(f, "trace %s: %s", rep->path, iotap_trace_source_name(h->source));
	if (h->capture_mode)
		fprintf(f, " (%s)", iotap_trace_mode_name(h->capture_mode));
	fprintf(f, ", %.3f s, %" PRIu64 " ops, %u phase%s (%s)\n", pstats_duration_s(&rep->total),
		rep->total.ops, rep->nphases, rep->nphases == 1 ? "" : "s",
		rep->phase_source[0] == 'a' ? "found automatically: no markers" :
		rep->phase_source[0] == 'm' ? "from markers" : "from another trace");
	fprintf(f, "host %s, started %s", h->host ? h->host : "?",
		fmt_realtime(h->real_base_ns, when, sizeof(when)));
	if (h->workload)
		fprintf(f, ", workload: %s", h->workload);
	fputc('\n', f);
	text_layout(f, h->layout);
	text_cache_note(f, h);
	fprintf(f, "MB = 10^6 bytes%s; latency in microseconds\n",
		oo->bonnie_units ? ", K/sec = KiB/s as bonnie++" : "");
}

void report_text_head_row(FILE *f, const char *what, const struct iotap_out_opts *oo)
{
	const struct report_metric *col[METRIC_MAX];
	unsigned int i, n = metric_view(oo->bonnie_units ? MO_TEXT_K : MO_TEXT_MB, col);

	fprintf(f, "%3s %-24s", "#", what);
	for (i = 0; i < n; i++)
		fprintf(f, " %*s", col[i]->width, col[i]->head);
	fprintf(f, "  %s\n", "sizes");
}

/* One row per phase, then the total. */
static void text_table(FILE *f, const struct iotap_report *rep, const struct iotap_out_opts *oo)
{
	unsigned int i;

	fputc('\n', f);
	report_text_head_row(f, "phase", oo);
	for (i = 0; i < rep->nphases; i++)
		text_phase_row(f, rep, &rep->phases[i], (int)i, oo);
	text_phase_row(f, rep, &rep->total, -1, oo);
}

/* Every flag, by phase, then the whole trace's. */
static void text_flags(FILE *f, const struct iotap_report *rep)
{
	unsigned int i, k, nflags = rep->tflags.n;

	for (i = 0; i < rep->nphases; i++)
		nflags += rep->flags[i].n;
	if (!nflags)
		return;
	fprintf(f, "\nflags:\n");
	for (i = 0; i < rep->nphases; i++)
		for (k = 0; k < rep->flags[i].n; k++)
			fprintf(f, "  [%u] %s: %s\n", i, rep->phases[i].name, rep->flags[i].text[k]);
	for (k = 0; k < rep->tflags.n; k++)
		fprintf(f, "  total: %s\n", rep->tflags.text[k]);
}

/* Each phase's detail (sizes, seeks, metadata, concurrency, device, latency). */
static void text_details(FILE *f, const struct iotap_report *rep, const struct iotap_out_opts *oo)
{
	unsigned int i;

	for (i = 0; i < rep->nphases; i++) {
		const struct iotap_pstats *p = &rep->phases[i];

		fprintf(f, "\n[%u] %s: %.3f s from %.3f s\n", i, p->name, pstats_duration_s(p),
			fig_start_s(rep, p));
		text_detail(f, p, &rep->flags[i], oo);
	}
	fprintf(f, "\ntotal: %.3f s\n", pstats_duration_s(&rep->total));
	text_detail(f, &rep->total, &rep->tflags, oo);
}

/* Without --detail: the total's data lines and where the rest is. */
static void text_brief(FILE *f, const struct iotap_report *rep, const struct iotap_out_opts *oo)
{
	fprintf(f, "\ntotal: %.3f s\n", pstats_duration_s(&rep->total));
	text_data_lines(f, &rep->total, oo);
	if (rep->nphases)
		fprintf(f, "\n(per phase: sizes, seeks, metadata, concurrency, device and latency "
			"with --detail, one phase with --phase NAME)\n");
}

/*
 * The text report: the head, the phase table and the flags, then the
 * detail (every phase's with oo->detail, else the total's data lines and a
 * pointer to --detail). A section of its own (application figures) goes
 * between the flags and the detail.
 */
void iotap_report_print_text(const struct iotap_report *rep, const struct iotap_out_opts *oo, FILE *f)
{
	struct iotap_out_opts defaults = { 0 };

	if (!oo)
		oo = &defaults;
	text_head(f, rep, oo);
	text_table(f, rep, oo);
	text_flags(f, rep);
	/* pgsql and dedup traces: the application's own figures (app.h) */
	app_print_text(&rep->app, f);
	if (oo->detail)
		text_details(f, rep, oo);
	else
		text_brief(f, rep, oo);
	if (rep->rs.chunks_bad || rep->rs.tail_bytes || !rep->rs.has_end)
		fprintf(f, "\nnote: the trace is %s; figures cover what could be read\n",
			rep->rs.chunks_bad ? "damaged" : "incomplete");
}

/* --- CSV --------------------------------------------------------------- */

void report_csv_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

void report_csv_row(FILE *f, const struct iotap_report *rep, const struct iotap_pstats *p,
		    const struct iotap_flagset *fl, int index)
{
	const struct report_metric *col[METRIC_MAX];
	unsigned int k, n = metric_view(MO_CSV, col);
	char buf[IOTAP_REPORT_FLAGS_MAX * 24];

	report_csv_str(f, p->name);
	if (index >= 0)
		fprintf(f, ",%d", index);
	else
		fputc(',', f);
	for (k = 0; k < n; k++) {
		double v;

		fputc(',', f);
		if (col[k]->str) {
			report_csv_str(f, col[k]->str(p, fl, buf, sizeof(buf)));
			continue;
		}
		v = metric_value(col[k], MO_CSV, rep, p);
		if (!isnan(v))
			fprintf(f, "%.*f", col[k]->sdec, v);
	}
	fputc('\n', f);
}

void iotap_report_print_csv(const struct iotap_report *rep, FILE *f)
{
	unsigned int i;

	report_csv_head(f);
	for (i = 0; i < rep->nphases; i++)
		report_csv_row(f, rep, &rep->phases[i], &rep->flags[i],
			       (int)rep->phases[i].index);
	/* the total row has no index: it is not a phase */
	report_csv_row(f, rep, &rep->total, &rep->tflags, -1);
}

void report_csv_head(FILE *f)
{
	const struct report_metric *col[METRIC_MAX];
	unsigned int i, n = metric_view(MO_CSV, col);

	fprintf(f, "name,index");
	for (i = 0; i < n; i++)
		fprintf(f, ",%s", col[i]->key);
	fputc('\n', f);
}

/* --- JSON -------------------------------------------------------------- */

json_object *iotap_report_jnum(double v, int decimals)
{
	char buf[64];

	if (!isfinite(v))
		return NULL;
	snprintf(buf, sizeof(buf), "%.*f", decimals, v);
	return json_object_new_double_s(v, buf);
}

/*
 * The object a member "group.name" goes into: @o itself, or its member
 * "group" (made on first use). NULL: the group is null (its MO_GATE figure
 * is absent), so the member is left out; @gate_absent makes it so.
 */
static json_object *json_parent(json_object *o, const char *path, const char **name,
				 int gate_absent)
{
	const char *dot = strchr(path, '.');
	json_object *g;
	char grp[64];

	*name = dot ? dot + 1 : path;
	if (!dot)
		return o;
	snprintf(grp, sizeof(grp), "%.*s", (int)(dot - path), path);
	if (json_object_object_get_ex(o, grp, &g))
		return g;
	g = gate_absent ? NULL : json_object_new_object();
	json_object_object_add(o, grp, g);
	return g;
}

json_object *report_json_phase(const struct iotap_report *rep, const struct iotap_pstats *p,
			       const struct iotap_flagset *fl)
{
	const struct report_metric *col[METRIC_MAX];
	json_object *o = json_object_new_object();
	unsigned int k, n = metric_view(MO_JSON, col);

	json_object_object_add(o, "name", json_object_new_string(p->name));
	json_object_object_add(o, "index", json_object_new_int((int)p->index));
	for (k = 0; k < n; k++) {
		const struct report_metric *m = col[k];
		double v = m->jget ? 0 : metric_value(m, MO_JSON, rep, p);
		const char *name;
		json_object *parent = json_parent(o, m->json ? m->json : m->key, &name,
						  (m->out & MO_GATE) && isnan(v));

		if (!parent)
			continue;
		json_object_object_add(parent, name,
				       m->jget ? m->jget(rep, p, fl) : iotap_report_jnum(v, m->sdec));
	}
	return o;
}

int iotap_report_print_json(const struct iotap_report *rep, FILE *f)
{
	json_object *root = json_object_new_object(), *t = json_object_new_object();
	json_object *phases = json_object_new_array();
	const struct iotap_trace_header *h = &rep->hdr;
	char ver[16];
	unsigned int i;

	if (!root || !t || !phases)
		return -1;
	json_object_object_add(t, "path", json_object_new_string(rep->path));
	snprintf(ver, sizeof(ver), "%u.%u", h->version_major, h->version_minor);
	json_object_object_add(t, "format_version", json_object_new_string(ver));
	json_object_object_add(t, "source",
			       json_object_new_string(iotap_trace_source_name(h->source)));
	json_object_object_add(
		t, "capture_mode",
		h->capture_mode ? json_object_new_string(iotap_trace_mode_name(h->capture_mode))
				: NULL);
	json_object_object_add(t, "start_realtime", iotap_report_jnum((double)h->real_base_ns / 1e9, 6));
	json_object_object_add(t, "duration_s", iotap_report_jnum(pstats_duration_s(&rep->total), 6));
	json_object_object_add(t, "records", json_object_new_uint64(rep->rs.records));
	json_object_object_add(t, "lost_records", json_object_new_uint64(rep->rs.lost_records));
	json_object_object_add(t, "complete", json_object_new_boolean(rep->rs.has_end));
	json_object_object_add(t, "damaged_chunks", json_object_new_uint64(rep->rs.chunks_bad));
	json_object_object_add(t, "phase_source", json_object_new_string(rep->phase_source));
	json_object_object_add(t, "markers", json_object_new_uint64(rep->markers));
	json_object_object_add(t, "host", h->host ? json_object_new_string(h->host) : NULL);
	json_object_object_add(t, "workload",
			       h->workload ? json_object_new_string(h->workload) : NULL);
	json_object_object_add(t, "bin_s", iotap_report_jnum((double)rep->series.width / 1e9, 3));
	if (h->layout) {
		json_object *lay = json_object_new_array();
		const char *s = h->layout, *e;

		for (; *s; s = *e ? e + 1 : e) {
			e = strchr(s, '\n');
			if (!e)
				e = s + strlen(s);
			json_object_array_add(lay, json_object_new_string_len(s, (int)(e - s)));
		}
		json_object_object_add(t, "layout", lay);
	} else {
		json_object_object_add(t, "layout", NULL);
	}
	json_object_object_add(root, "trace", t);
	for (i = 0; i < rep->nphases; i++)
		json_object_array_add(phases,
				      report_json_phase(rep, &rep->phases[i], &rep->flags[i]));
	json_object_object_add(root, "phases", phases);
	json_object_object_add(root, "total", report_json_phase(rep, &rep->total, &rep->tflags));
	/* pgsql and dedup traces: the application's own figures (app.h); null otherwise */
	json_object_object_add(root, "application", app_json(&rep->app));
	fprintf(f, "%s\n", json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY |
							      JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(root);
	return 0;
}
