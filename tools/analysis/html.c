// SPDX-License-Identifier: MIT
/*
 * html.c - the report page: one self-contained HTML file (the compare page,
 * html_compare.c, shares its frame and timelines)
 *
 * No scripts, no fonts, no images, no links out: the page is HTML, one
 * <style> block and inline SVG (svg.c), so it opens offline in any browser,
 * survives being mailed or attached to a forum post, and prints. Hover
 * titles give exact values.
 *
 * Report page: header and flags, the phase table, throughput over time
 * (filesystem and device), operations and seeks over time, concurrency and
 * utilisation over time (all with phase bands), per-phase bars of MB/s,
 * seeks/s and ops/s, latency histograms per op type, offset-over-time seek
 * maps of the busiest files, and latency percentiles per phase.
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

#define C_READ		"#2c7fb8"
#define C_WRITE		"#f28e2b"
#define C_DEV_READ	"#1b4f72"
#define C_DEV_WRITE	"#b85c00"
#define MAPS		4	/* seek maps: busiest files */
#define MAP_POINTS	4000	/* points per seek map */
#define HISTS		6	/* latency histograms: commonest op types */

static const char css[] =
	"body{font:14px/1.4 -apple-system,'Segoe UI',Helvetica,Arial,sans-serif;color:#222;"
	"margin:0;background:#f6f7f9}"
	"main{max-width:1180px;margin:0 auto;padding:16px 12px 40px}"
	"header{background:#1f2d3d;color:#fff;padding:18px 20px}"
	"header h1{margin:0 auto;max-width:1140px;font-size:22px;font-weight:600}"
	"header .sub{max-width:1140px;margin:4px auto 0;color:#c9d3de;font-size:13px}"
	"h2{font-size:17px;margin:26px 0 8px;color:#1f2d3d;border-bottom:1px solid #dde2e8;"
	"padding-bottom:4px}"
	"section{background:#fff;border:1px solid #e1e5ea;border-radius:6px;padding:10px 14px;"
	"margin:12px 0}"
	"table{border-collapse:collapse;width:100%;font-size:12px}"
	"th,td{padding:3px 4px;text-align:right;white-space:nowrap}"
	"th{background:#eef1f5;font-weight:600;position:sticky;top:0}"
	"td.l,th.l{text-align:left}tr:nth-child(even) td{background:#f8f9fb}"
	"tr.total td{font-weight:600;border-top:2px solid #c8ced6}"
	".flags{background:#fff8e6;border-color:#f0d48a}.flags li{margin:3px 0}"
	".flags b{color:#8a5a00}.note{color:#667;font-size:12px}"
	".grid2{display:flex;flex-wrap:wrap;gap:8px}.grid2 svg{flex:1 1 520px}"
	"svg.chart{max-width:100%;height:auto;font-size:11px;background:#fff}"
	"svg .ttl{font-weight:600;font-size:13px;fill:#1f2d3d}"
	"svg .lbl{fill:#555}svg .cat{fill:#222;font-size:11.5px}"
	"svg .val{fill:#333;font-size:10.5px}"
	"svg .grid{stroke:#e6e9ee}svg .axis{stroke:#888}svg .tick{stroke:#888}"
	"svg .line{fill:none;stroke-width:1.6}svg .band0{fill:#eef3fa}svg .band1{fill:#f7f7f7}"
	"svg .bandlbl{fill:#6b7a8c;font-size:10px}svg .err{stroke:#222;fill:none}"
	"svg .mark{stroke:#c0392b;stroke-dasharray:3 3}svg .marklbl{fill:#c0392b;font-size:10px}"
	"svg .dots{fill:none;stroke-width:2.2;stroke-linecap:round}"
	".r{color:#1a7f37}.w{color:#b85c00}.bad{color:#b42318;font-weight:600}"
	"footer{color:#778;font-size:12px;margin-top:24px}";

void html_page_head(FILE *f, const char *title, const char *sub)
{
	fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
		   "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
		   "<meta name=\"generator\" content=\"iotap %s\"><title>", IOTAP_VERSION);
	html_esc(f, title);
	fprintf(f, "</title><style>%s</style></head>\n<body><header><h1>", css);
	html_esc(f, title);
	fprintf(f, "</h1><div class=\"sub\">");
	html_esc(f, sub);
	fprintf(f, "</div></header><main>\n");
}

void html_page_foot(FILE *f)
{
	fprintf(f,
		"<footer>Made by iotap %s. MB = 10<sup>6</sup> bytes. Latency percentiles are "
		"within 1/128 of their value (log-linear histograms). Seeks: data ops that do not "
		"start where the previous data op on the same file ended.</footer></main></body>"
		"</html>\n",
		IOTAP_VERSION);
}

static void td_num(FILE *f, double v, int dec)
{
	char buf[32];

	if (isnan(v)) {
		fprintf(f, "<td>-</td>");
		return;
	}
	snprintf(buf, sizeof(buf), "%.*f", dec, v);
	fprintf(f, "<td>%s</td>", buf);
}

/* in microseconds, as every other latency in the reports */
void html_metric_row(FILE *f, const struct iotap_report *rep, const struct iotap_pstats *p,
		     const char *idx,
		     const char *name, const struct iotap_flagset *fl, int total)
{
	const struct report_metric *col[METRIC_MAX];
	unsigned int k, n = metric_view(MO_HTML, col);

	fprintf(f, "<tr%s><td>%s</td><td class=\"l\">", total ? " class=\"total\"" : "", idx);
	html_esc(f, name);
	fprintf(f, "</td>");
	for (k = 0; k < n; k++) {
		if ((col[k]->out & MO_RATE) && fig_too_short(p))
			fprintf(f, "<td title=\"too short to time\">+++++</td>");
		else
			td_num(f, metric_value(col[k], MO_HTML, rep, p), col[k]->hdec);
	}
	fprintf(f, "<td>%s</td></tr>\n", fl && fl->n ? "<span class=\"bad\">&#9873;</span>" : "");
}

static void phase_row(FILE *f, const struct iotap_report *rep, const struct iotap_pstats *p,
		      int idx,
		      const struct iotap_flagset *fl)
{
	char idxs[16] = "";

	if (idx >= 0)
		snprintf(idxs, sizeof(idxs), "%d", idx);
	html_metric_row(f, rep, p, idxs, p->name, fl, idx < 0);
}

void html_metric_head(FILE *f, const char *what)
{
	const struct report_metric *col[METRIC_MAX];
	unsigned int i, n = metric_view(MO_HTML, col);

	fprintf(f, "<tr><th>#</th><th class=\"l\">%s</th>", what);
	for (i = 0; i < n; i++)
		fputs(col[i]->th, f);
	fprintf(f, "<th>flag</th></tr>\n");
}

static void phase_table(FILE *f, const struct iotap_report *rep)
{
	unsigned int i;

	fprintf(f, "<section><h2>Phases</h2><div style=\"overflow-x:auto\"><table>");
	html_metric_head(f, "phase");
	for (i = 0; i < rep->nphases; i++)
		phase_row(f, rep, &rep->phases[i], (int)i, &rep->flags[i]);
	phase_row(f, rep, &rep->total, -1, &rep->tflags);
	fprintf(f,
		"</table></div><p class=\"note\">Phases %s. cpu %%: the workload's own CPU where "
		"its markers carry it, else the whole system's. in flight: mean ops in progress. "
		"unseen rd: share of the filesystem's read bytes the device never read (page "
		"cache).</p></section>\n",
		rep->phase_source[0] == 'a'
			? "were found automatically (the trace has no markers): "
			  "a new phase starts where the op mix, direction, request "
			  "size or sequentiality changes, or after an idle gap"
		: rep->phase_source[0] == 'm' ? "come from the trace's markers"
					      : "come from another trace, matched by op order");
}

static void flags_box(FILE *f, const struct iotap_report *rep)
{
	unsigned int i, k, n = rep->tflags.n;

	for (i = 0; i < rep->nphases; i++)
		n += rep->flags[i].n;
	if (!n)
		return;
	fprintf(f, "<section class=\"flags\"><h2>Worth a look</h2><ul>\n");
	for (i = 0; i < rep->nphases; i++) {
		for (k = 0; k < rep->flags[i].n; k++) {
			const char *t = rep->flags[i].text[k], *colon = strchr(t, ':');

			fprintf(f, "<li>[%u] <b>", i);
			html_esc(f, rep->phases[i].name);
			fprintf(f, "</b> ");
			if (colon) {
				fprintf(f, "<i>%.*s</i>", (int)(colon - t), t);
				html_esc(f, colon);
			} else {
				html_esc(f, t);
			}
			fprintf(f, "</li>\n");
		}
	}
	for (k = 0; k < rep->tflags.n; k++) {
		fprintf(f, "<li><b>whole trace</b> ");
		html_esc(f, rep->tflags.text[k]);
		fprintf(f, "</li>\n");
	}
	fprintf(f, "</ul></section>\n");
}

/*
 * The bins to draw: from a little before the first op to a little after the
 * last, leaving out stray ops far from the rest (a stat at unmount, minutes
 * after the workload ended): phases with under a thousandth of the ops at
 * either end do not stretch the time axis.
 */
static void chart_range(const struct iotap_report *rep, uint64_t *lo, uint64_t *hi)
{
	const struct iotap_series *s = &rep->series;
	uint64_t a = rep->total.t_begin, z = rep->total.t_end, m, few;
	unsigned int i, j;

	*lo = 0;
	*hi = s->n;
	if (!rep->total.ops || z <= a)
		return;
	few = rep->total.ops / 1000 > 48 ? rep->total.ops / 1000 : 48;
	for (i = 0; i < rep->nphases && rep->phases[i].ops < few; i++)
		;
	for (j = rep->nphases; j > i && rep->phases[j - 1].ops < few; j--)
		;
	if (i < j) {
		a = rep->phases[i].t_begin;
		z = rep->phases[j - 1].t_end;
	}
	m = (z - a) / 40;
	a = a > s->origin + m ? a - m : s->origin;
	z += m;
	*lo = (a - s->origin) / s->width;
	*hi = (z - s->origin) / s->width + 1;
	if (*hi > s->n)
		*hi = s->n;
	if (*lo >= *hi)
		*lo = 0;
}

struct svg_band *html_phase_bands(const struct iotap_report *rep)
{
	struct svg_band *b = calloc(rep->nphases ? rep->nphases : 1, sizeof(*b));
	unsigned int i;

	if (!b)
		return NULL;
	for (i = 0; i < rep->nphases; i++) {
		b[i].x0 = fig_start_s(rep, &rep->phases[i]);
		b[i].x1 = b[i].x0 + pstats_duration_s(&rep->phases[i]);
		b[i].label = rep->phases[i].name;
	}
	return b;
}

void html_timelines(FILE *f, const struct iotap_report *rep, const struct svg_band *bands, int width,
		    int what)
{
	const struct iotap_series *s = &rep->series;
	struct bin_dev *dev;
	uint64_t lo, hi, i, n;
	double *y[6];
	double w = (double)s->width / 1e9;
	struct svg_series se[6];
	struct svg_timeline tl;
	int has_dev = 0, has_cpu = 0, k;

	chart_range(rep, &lo, &hi);
	n = hi - lo;
	if (!n)
		return;
	dev = calloc(s->n, sizeof(*dev));
	for (k = 0; k < 6; k++)
		y[k] = calloc(n, sizeof(double));
	if (!dev || !y[0] || !y[1] || !y[2] || !y[3] || !y[4] || !y[5])
		goto out;
	series_dev(s, dev);
	for (i = lo; i < hi; i++) {
		has_dev |= dev[i].valid && dev[i].has_dev;
		has_cpu |= dev[i].valid;
	}
	memset(&tl, 0, sizeof(tl));
	tl.x0 = (double)(s->origin + lo * s->width - rep->t0) / 1e9;
	tl.dx = w;
	tl.n = (unsigned int)n;
	tl.series = se;
	tl.bands = bands;
	tl.nbands = rep->nphases;
	tl.width = width;
	memset(se, 0, sizeof(se));
	if (what == 0) {
		for (i = lo; i < hi; i++) {
			const struct iotap_bin *b = &s->bins[i];

			y[0][i - lo] = b->rd_bytes / 1e6 / w;
			y[1][i - lo] = b->wr_bytes / 1e6 / w;
			y[2][i - lo] = dev[i].valid && dev[i].has_dev ? dev[i].rd_mbps : NAN;
			y[3][i - lo] = dev[i].valid && dev[i].has_dev ? dev[i].wr_mbps : NAN;
		}
		se[0] = (struct svg_series){ "FS read", C_READ, 0, y[0] };
		se[1] = (struct svg_series){ "FS write", C_WRITE, 0, y[1] };
		se[2] = (struct svg_series){ "device read", C_DEV_READ, 1, y[2] };
		se[3] = (struct svg_series){ "device write", C_DEV_WRITE, 1, y[3] };
		tl.nseries = has_dev ? 4 : 2;
		tl.title = "Throughput: filesystem and device";
		tl.ylabel = "MB/s";
		tl.height = 300;
	} else if (what == 1) {
		for (i = lo; i < hi; i++) {
			const struct iotap_bin *b = &s->bins[i];

			y[0][i - lo] = b->ops / w;
			y[1][i - lo] = (b->rd_ops + b->wr_ops) / w;
			y[2][i - lo] = b->seeks / w;
			y[3][i - lo] = b->meta_ops / w;
			y[4][i - lo] = b->fsyncs / w;
		}
		se[0] = (struct svg_series){ "all ops", "#7f7f7f", 0, y[0] };
		se[1] = (struct svg_series){ "data ops (IOPS)", "#2c7fb8", 0, y[1] };
		se[2] = (struct svg_series){ "seeks", "#8e44ad", 0, y[2] };
		se[3] = (struct svg_series){ "metadata", "#59a14f", 0, y[3] };
		se[4] = (struct svg_series){ "fsync", "#e15759", 0, y[4] };
		tl.nseries = 5;
		tl.title = "Operations and seeks per second (log scale)";
		tl.ylabel = "per second";
		tl.log_y = 1;
		tl.height = 280;
	} else {
		for (i = lo; i < hi; i++) {
			const struct iotap_bin *b = &s->bins[i];

			y[0][i - lo] = b->busy_ns / 1e9 / w;
			y[1][i - lo] = b->threads;
			y[2][i - lo] = dev[i].valid && dev[i].has_dev ? dev[i].util_pct : NAN;
			y[3][i - lo] = dev[i].valid ? dev[i].cpu_sys_pct : NAN;
		}
		se[0] = (struct svg_series){ "ops in flight", "#34495e", 0, y[0] };
		se[1] = (struct svg_series){ "threads", "#9aa5b1", 1, y[1] };
		tl.nseries = 2;
		tl.title = "Concurrency: ops in flight (mean) and threads issuing ops";
		tl.ylabel = "count";
		tl.height = 220;
		svg_timeline(f, &tl);
		if (!has_cpu)
			goto out;
		se[0] = (struct svg_series){ "device utilisation", "#e15759", 0, y[2] };
		se[1] = (struct svg_series){ "system CPU busy", "#59a14f", 0, y[3] };
		tl.series = has_dev ? se : se + 1;
		tl.nseries = has_dev ? 2 : 1;
		tl.title = "Device utilisation and CPU";
		tl.ylabel = "%";
	}
	svg_timeline(f, &tl);
out:
	free(dev);
	for (k = 0; k < 6; k++)
		free(y[k]);
}

static void phase_bars(FILE *f, const struct iotap_report *rep)
{
	unsigned int n = rep->nphases, i;
	const char **cats = calloc(n ? n : 1, sizeof(*cats));
	double *v = calloc(3 * (n ? n : 1), sizeof(*v));
	static const char *const mb_names[] = { "FS read", "FS write", "device" };
	static const char *const mb_colors[] = { C_READ, C_WRITE, "#7f7f7f" };
	static const char *const sk_names[] = { "seeks/s" };
	static const char *const sk_colors[] = { "#8e44ad" };
	static const char *const op_names[] = { "data ops/s", "metadata ops/s" };
	static const char *const op_colors[] = { "#2c7fb8", "#59a14f" };
	struct svg_hbars hb;
	int has_dev = 0;

	if (!cats || !v || !n)
		goto out;
	for (i = 0; i < n; i++) {
		const struct iotap_pstats *p = &rep->phases[i];
		double d = pstats_duration_s(p);
		struct dev_fig dev;

		cats[i] = p->name;
		v[3 * i] = fig_mbps(p->rd.bytes, d);
		v[3 * i + 1] = fig_mbps(p->wr.bytes, d);
		v[3 * i + 2] = NAN;
		if (fig_device(p, &dev)) {
			v[3 * i + 2] = dev.rd_mbps + dev.wr_mbps;
			has_dev = 1;
		}
	}
	memset(&hb, 0, sizeof(hb));
	hb.cats = cats;
	hb.ncats = n;
	hb.title = "MB/s per phase";
	hb.unit = "MB/s";
	hb.names = mb_names;
	hb.colors = mb_colors;
	hb.nnames = has_dev ? 3 : 2;
	if (!has_dev) {
		for (i = 0; i < n; i++) {
			v[2 * i] = v[3 * i];
			v[2 * i + 1] = v[3 * i + 1];
		}
	}
	hb.v = v;
	fprintf(f, "<section><h2>Per phase</h2>");
	svg_hbars(f, &hb);
	for (i = 0; i < n; i++)
		v[i] = fig_rate(rep->phases[i].seeks, pstats_duration_s(&rep->phases[i]));
	hb.title = "Seeks per second per phase";
	hb.unit = "seeks/s";
	hb.names = sk_names;
	hb.colors = sk_colors;
	hb.nnames = 1;
	svg_hbars(f, &hb);
	for (i = 0; i < n; i++) {
		const struct iotap_pstats *p = &rep->phases[i];
		double d = pstats_duration_s(p);

		v[2 * i] = fig_rate(p->data_ops, d);
		v[2 * i + 1] = fig_meta_rate(p);
	}
	hb.title = "Operations per second per phase";
	hb.unit = "ops/s";
	hb.names = op_names;
	hb.colors = op_colors;
	hb.nnames = 2;
	svg_hbars(f, &hb);
	fprintf(f, "</section>\n");
out:
	free(cats);
	free(v);
}

static void latency_hists(FILE *f, const struct iotap_report *rep)
{
	const struct iotap_pstats *p = &rep->total;
	unsigned int ops[HISTS], nops = 0, op, k, i, g;
	static const char *const mark_names[] = { "p50", "p99", "max" };

	/* the commonest op types */
	for (k = 0; k < HISTS; k++) {
		int best = -1;

		for (op = 0; op < IOTAP_OP_MAX; op++) {
			unsigned int j, taken = 0;

			for (j = 0; j < nops; j++)
				taken |= ops[j] == op;
			if (!taken && p->lat[op] && p->lat[op]->n &&
			    (best < 0 || p->lat[op]->n > p->lat[best]->n))
				best = (int)op;
		}
		if (best < 0)
			break;
		ops[nops++] = (unsigned int)best;
	}
	if (!nops)
		return;
	fprintf(f, "<section><h2>Latency histograms</h2><div class=\"grid2\">");
	for (k = 0; k < nops; k++) {
		const struct iotap_hist *h = p->lat[ops[k]];
		double lo[IOTAP_HIST_GROUPS * 8], hi[IOTAP_HIST_GROUPS * 8], pct[IOTAP_HIST_GROUPS * 8], marks[3];
		unsigned int n = 0;
		struct svg_hist sh;
		char title[96];

		/* eight bars per power of two */
		for (g = 0; g < IOTAP_HIST_GROUPS; g++) {
			unsigned int part;

			for (part = 0; part < 8; part++) {
				uint64_t c = 0, a, b, x, y;

				for (i = part * 8; i < part * 8 + 8; i++)
					c += iotap_hist_count(h, g * IOTAP_HIST_SUB + i);
				if (!c)
					continue;
				iotap_hist_range(g * IOTAP_HIST_SUB + part * 8, IOTAP_HIST_BITS, &a, &x);
				iotap_hist_range(g * IOTAP_HIST_SUB + part * 8 + 7, IOTAP_HIST_BITS, &y, &b);
				lo[n] = (double)a;
				hi[n] = (double)b;
				pct[n] = 100.0 * (double)c / (double)h->n;
				n++;
			}
		}
		marks[0] = (double)iotap_hist_quantile(h, 0.5);
		marks[1] = (double)iotap_hist_quantile(h, 0.99);
		marks[2] = (double)h->max;
		snprintf(title, sizeof(title), "%s: %" PRIu64 " ops, mean %.1f us",
			 iotap_trace_op_name(ops[k]), h->n, (double)h->sum / h->n / 1e3);
		memset(&sh, 0, sizeof(sh));
		sh.title = title;
		sh.lo = lo;
		sh.hi = hi;
		sh.pct = pct;
		sh.n = n;
		sh.marks = marks;
		sh.mark_names = mark_names;
		sh.nmarks = 3;
		sh.color = ops[k] == IOTAP_OP_WRITE  ? C_WRITE
			   : ops[k] == IOTAP_OP_READ ? C_READ
						     : "#59a14f";
		sh.width = 550;
		svg_hist(f, &sh);
	}
	fprintf(f, "</div></section>\n");
}

static void seek_maps(FILE *f, const struct iotap_report *rep, const struct svg_band *bands)
{
	uint64_t files[MAPS], counts[MAPS], i;
	unsigned int nf, k, n;
	double xmin, xmax;
	double *x, *y;
	unsigned char *cls;
	char title[600], name[512];

	if (!rep->points.n)
		return;
	nf = seek_map_busiest(&rep->files, MAPS, files, counts);
	x = malloc(MAP_POINTS * sizeof(*x));
	y = malloc(MAP_POINTS * sizeof(*y));
	cls = malloc(MAP_POINTS);
	if (!x || !y || !cls || !nf)
		goto out;
	fprintf(f, "<section><h2>Seek maps: where in the busiest files the I/O went</h2>"
		   "<div class=\"grid2\">");
	for (k = 0; k < nf; k++) {
		uint64_t have = 0, every, seen = 0;
		struct svg_scatter sc;

		if (counts[k] < 16)
			continue;
		for (i = 0; i < rep->points.n; i++)
			have += rep->points.p[i].file == files[k];
		every = have > MAP_POINTS ? (have + MAP_POINTS - 1) / MAP_POINTS : 1;
		n = 0;
		for (i = 0; i < rep->points.n && n < MAP_POINTS; i++) {
			const struct iotap_point *pt = &rep->points.p[i];

			if (pt->file != files[k] || seen++ % every)
				continue;
			x[n] = (double)(pt->t - rep->t0) / 1e9;
			y[n] = (double)pt->off;
			cls[n] = (unsigned char)pt->write;
			n++;
		}
		iotap_report_file_name(rep, files[k], name, sizeof(name));
		xmin = INFINITY;
		xmax = -INFINITY;
		for (i = 0; i < n; i++) {
			if (x[i] < xmin)
				xmin = x[i];
			if (x[i] > xmax)
				xmax = x[i];
		}
		if (!(xmax > xmin)) {
			xmin = fig_start_s(rep, &rep->total);
			xmax = xmin + pstats_duration_s(&rep->total);
		}
		snprintf(title, sizeof(title), "%.60s: %" PRIu64 " data ops (%u shown)", name,
			 counts[k], n);
		memset(&sc, 0, sizeof(sc));
		sc.title = title;
		sc.x = x;
		sc.y = y;
		sc.cls = cls;
		sc.n = n;
		sc.xmin = xmin - (xmax - xmin) / 50;
		sc.xmax = xmax + (xmax - xmin) / 50;
		sc.bands = bands;
		sc.nbands = rep->nphases;
		sc.width = 550;
		sc.height = 250;
		svg_scatter(f, &sc);
	}
	fprintf(f, "</div><p class=\"note\">Offset in the file over the time the file was in use, "
		   "one dot per sampled data op (1 in %" PRIu64 " of all data ops, evenly spread). "
		   "Diagonal lines are sequential runs, scatter is random access.</p></section>\n",
		rep->points.every);
out:
	free(x);
	free(y);
	free(cls);
}

static void shape_table(FILE *f, const struct iotap_report *rep)
{
	unsigned int i;
	char buf[256];

	fprintf(f, "<section><h2>Request sizes, seek distances and concurrency per phase</h2>"
		   "<div style=\"overflow-x:auto\"><table><tr><th class=\"l\">phase</th>"
		   "<th class=\"l\">read sizes</th><th class=\"l\">write sizes</th>"
		   "<th class=\"l\">seek distances</th><th>seq %%</th><th>in flight</th>"
		   "<th>max in flight</th><th>threads</th><th>fsyncs</th></tr>\n");
	for (i = 0; i <= rep->nphases; i++) {
		const struct iotap_pstats *p = i < rep->nphases ? &rep->phases[i] : &rep->total;

		fprintf(f, "<tr%s><td class=\"l\">", i == rep->nphases ? " class=\"total\"" : "");
		html_esc(f, p->name);
		fig_size_summary(&p->rd, buf, sizeof(buf));
		fprintf(f, "</td><td class=\"l\">%s</td>", p->rd.ops ? buf : "-");
		fig_size_summary(&p->wr, buf, sizeof(buf));
		fprintf(f, "<td class=\"l\">%s</td>", p->wr.ops ? buf : "-");
		fig_seek_summary(p, buf, sizeof(buf));
		fprintf(f, "<td class=\"l\">%s</td>", p->seeks ? buf : "-");
		td_num(f, p->data_ops ? fig_seq_pct(p) : NAN, 1);
		td_num(f, fig_inflight(p), 2);
		fprintf(f, "<td>%" PRIu64 "</td><td>%u</td><td>%" PRIu64 "</td></tr>\n",
			p->max_inflight, pstats_threads(p), p->fsyncs);
	}
	fprintf(f, "</table></div><p class=\"note\">Sizes: the three commonest request sizes and "
		   "their share. Seek distances: how far from where the previous data op on the "
		   "file ended (&lt;64k: under 64 KiB), the three commonest.</p></section>\n");
}

static void latency_table(FILE *f, const struct iotap_report *rep)
{
	unsigned int i, op;

	fprintf(f, "<section><h2>Latency per phase and op (microseconds)</h2>"
		   "<div style=\"overflow-x:auto\"><table><tr><th class=\"l\">phase</th>"
		   "<th class=\"l\">op</th><th>count</th><th>mean</th><th>p50</th><th>p90</th>"
		   "<th>p99</th><th>p99.9</th><th>max</th><th>errors</th></tr>\n");
	for (i = 0; i <= rep->nphases; i++) {
		const struct iotap_pstats *p = i < rep->nphases ? &rep->phases[i] : &rep->total;
		int first = 1;

		for (op = 0; op < IOTAP_OP_MAX; op++) {
			const struct iotap_hist *h = p->lat[op];

			/* ops that make up under 1% of a phase clutter the table */
			if (!h || !h->n || (h->n * 100 < p->ops && h->n < 100))
				continue;
			fprintf(f, "<tr%s><td class=\"l\">",
				i == rep->nphases && first ? " class=\"total\"" : "");
			if (first)
				html_esc(f, p->name);
			first = 0;
			fprintf(f, "</td><td class=\"l\">%s</td><td>%" PRIu64 "</td>",
				iotap_trace_op_name(op), h->n);
			td_num(f, (double)h->sum / h->n / 1e3, 1);
			td_num(f, iotap_hist_quantile(h, 0.5) / 1e3, 1);
			td_num(f, iotap_hist_quantile(h, 0.9) / 1e3, 1);
			td_num(f, iotap_hist_quantile(h, 0.99) / 1e3, 1);
			td_num(f, iotap_hist_quantile(h, 0.999) / 1e3, 1);
			td_num(f, h->max / 1e3, 1);
			fprintf(f, "<td>%" PRIu64 "</td></tr>\n", p->op_errors[op]);
		}
	}
	fprintf(f, "</table></div></section>\n");
}

static void subtitle(const struct iotap_report *rep, char *buf, size_t len)
{
	const struct iotap_trace_header *h = &rep->hdr;
	time_t t = (time_t)(h->real_base_ns / 1000000000ull);
	char when[64] = "?";
	struct tm tm;

	if (h->real_base_ns && localtime_r(&t, &tm))
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M", &tm);
	snprintf(buf, len,
		 "%s · %s%s%s · host %s · %s · %.1f s · %" PRIu64 " ops · %u phases%s%s",
		 rep->path, iotap_trace_source_name(h->source), h->capture_mode ? " " : "",
		 h->capture_mode ? iotap_trace_mode_name(h->capture_mode) : "",
		 h->host ? h->host : "?", when, pstats_duration_s(&rep->total), rep->total.ops,
		 rep->nphases, h->workload ? " · " : "", h->workload ? h->workload : "");
}

static void report_body(FILE *f, const struct iotap_report *rep, const struct svg_band *bands)
{
	flags_box(f, rep);
	phase_table(f, rep);
	app_print_html(&rep->app, f);
	fprintf(f, "<section><h2>Over time</h2>");
	html_timelines(f, rep, bands, 1100, 0);
	html_timelines(f, rep, bands, 1100, 1);
	html_timelines(f, rep, bands, 1100, 2);
	fprintf(f, "<p class=\"note\">Time bins of %.3g s. Dashed: the backing device as its "
		   "counters saw it; solid: the filesystem requests.</p></section>\n",
		(double)rep->series.width / 1e9);
	phase_bars(f, rep);
	latency_hists(f, rep);
	seek_maps(f, rep, bands);
	shape_table(f, rep);
	latency_table(f, rep);
}

void iotap_report_write_html(const struct iotap_report *rep, FILE *f)
{
	struct svg_band *bands;
	char title[512], sub[1024];
	const char *b = strrchr(rep->path, '/');

	bands = html_phase_bands(rep);
	snprintf(title, sizeof(title), "iotap report: %s", b ? b + 1 : rep->path);
	subtitle(rep, sub, sizeof(sub));
	html_page_head(f, title, sub);
	report_body(f, rep, bands);
	html_page_foot(f);
	free(bands);
}
