// SPDX-License-Identifier: MIT
/*
 * svg.c - time lines, bars, histograms and scatter plots as inline SVG
 *
 * Written for the HTML report and compare pages (html.c). Every chart is a
 * <svg> with a viewBox, so it scales with the page; styles come from the
 * page's CSS classes (axis, grid, band, lbl) so the look lives in one
 * place. Ticks are "nice" numbers (1, 2, 5 x 10^k).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "svg.h"

#define ML	70	/* margins, px */
#define MR	18
#define MT	30
#define MB	36

void html_esc(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f); break;
		}
	}
}

static void line(FILE *f, const char *cls, double x1, double y1, double x2, double y2)
{
	fprintf(f, "<line class=\"%s\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", cls,
		x1, y1, x2, y2);
}

/* <text> at (@x, @y); @anchor: NULL (start), "middle" or "end"; @s is escaped. */
static void text(FILE *f, const char *cls, double x, double y, const char *anchor, const char *s)
{
	fprintf(f, "<text class=\"%s\" x=\"%.1f\" y=\"%.1f\"", cls, x, y);
	if (anchor)
		fprintf(f, " text-anchor=\"%s\"", anchor);
	fputc('>', f);
	html_esc(f, s);
	fputs("</text>", f);
}

/* An open <rect>: the caller adds a <title> and closes it, or calls rect_end(). */
static void rect(FILE *f, const char *cls, const char *fill, double x, double y, double w,
		 double h)
{
	fputs("<rect", f);
	if (cls)
		fprintf(f, " class=\"%s\"", cls);
	if (fill)
		fprintf(f, " fill=\"%s\"", fill);
	fprintf(f, " x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\">", x, y, w, h);
}

const char *fmt_si(double v, char *buf, size_t len)
{
	static const char *const suf[] = { "", "k", "M", "G", "T", "P" };
	double a = fabs(v);
	int k = 0;

	if (a == 0) {
		snprintf(buf, len, "0");
		return buf;
	}
	if (a < 1) {
		snprintf(buf, len, a >= 0.01 ? "%.2f" : "%.2g", v);
		return buf;
	}
	while (a >= 1000 && k < 5) {
		a /= 1000;
		v /= 1000;
		k++;
	}
	snprintf(buf, len, a >= 100 ? "%.0f%s" : a >= 10 ? "%.1f%s" : "%.2f%s", v, suf[k]);
	/* "10.0k" -> "10k" */
	{
		char *dot = strchr(buf, '.');

		if (dot) {
			char *e = dot + strspn(dot + 1, "0") + 1;

			if (*e < '0' || *e > '9')
				memmove(dot, e, strlen(e) + 1);
		}
	}
	return buf;
}

static double nice_step(double range, int n)
{
	double raw, mag, r;

	if (!(range > 0))
		return 1;
	raw = range / n;
	mag = pow(10, floor(log10(raw)));
	r = raw / mag;
	return (r < 1.5 ? 1 : r < 3 ? 2 : r < 7 ? 5 : 10) * mag;
}

static void svg_open(FILE *f, int w, int h, const char *title)
{
	fprintf(f, "<svg class=\"chart\" viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" "
		   "xmlns=\"http://www.w3.org/2000/svg\" role=\"img\">", w, h, w, h);
	if (title) {
		text(f, "ttl", ML, 18, NULL, title);
	}
}

static void band_rects(FILE *f, const struct svg_band *b, unsigned int n, double x0, double x1,
		       double px0, double pw, double py0, double ph)
{
	unsigned int i;
	char buf[16];

	for (i = 0; i < n; i++) {
		double a = b[i].x0, z = b[i].x1, xa, xz;
		size_t l = b[i].label ? strlen(b[i].label) : 0;

		if (z <= x0 || a >= x1)
			continue;
		if (a < x0)
			a = x0;
		if (z > x1)
			z = x1;
		xa = px0 + (a - x0) / (x1 - x0) * pw;
		xz = px0 + (z - x0) / (x1 - x0) * pw;
		if (xz - xa < 0.6)
			xz = xa + 0.6;
		rect(f, i % 2 ? "band1" : "band0", NULL, xa, py0, xz - xa, ph);
		fputs("<title>", f);
		html_esc(f, b[i].label);
		fprintf(f, "</title></rect>");
		/* the name if it fits, else the phase number if that fits */
		if (b[i].label && (double)l * 6.2 + 6 < xz - xa) {
			text(f, "bandlbl", xa + 3, py0 + 11, NULL, b[i].label);
		} else if (xz - xa > 14) {
			snprintf(buf, sizeof(buf), "%u", i);
			text(f, "bandlbl", xa + 2, py0 + 11, NULL, buf);
		}
	}
}

static void x_axis_time(FILE *f, double x0, double x1, double px0, double pw, double py1)
{
	double step = nice_step(x1 - x0, 10), t;
	char buf[32];

	for (t = ceil(x0 / step) * step; t <= x1 + 1e-9; t += step) {
		double x = px0 + (t - x0) / (x1 - x0) * pw;

		line(f, "tick", x, py1, x, py1 + 4);
		text(f, "lbl", x, py1 + 16, "middle", fmt_si(t, buf, sizeof(buf)));
	}
	text(f, "lbl", px0 + pw, py1 + 30, "end", "seconds");
}

void svg_timeline(FILE *f, const struct svg_timeline *tl)
{
	int w = tl->width ? tl->width : 1100, h = tl->height ? tl->height : 260;
	double pw = w - ML - MR, ph = h - MT - MB, px0 = ML, py0 = MT, py1 = MT + ph;
	double x1 = tl->x0 + tl->dx * tl->n, ymax = 0, ymin = INFINITY, step, y;
	unsigned int k = 1, s, i, j, npts;
	char buf[32];

	if (tl->n > pw)
		k = (unsigned int)ceil(tl->n / pw);
	npts = (tl->n + k - 1) / k;
	for (s = 0; s < tl->nseries; s++)
		for (i = 0; i < tl->n; i++) {
			double v = tl->series[s].y[i];

			if (isnan(v))
				continue;
			if (v > ymax)
				ymax = v;
			if (v > 0 && v < ymin)
				ymin = v;
		}
	svg_open(f, w, h, tl->title);
	if (tl->nbands)
		band_rects(f, tl->bands, tl->nbands, tl->x0, x1, px0, pw, py0, ph);
	if (tl->log_y) {
		double lo, hi;

		if (!isfinite(ymin))
			ymin = 1;
		lo = floor(log10(ymin));
		hi = ceil(log10(ymax > ymin ? ymax : ymin * 10));
		if (hi <= lo)
			hi = lo + 1;
		for (y = lo; y <= hi; y++) {
			double yy = py1 - (y - lo) / (hi - lo) * ph;

			line(f, "grid", px0, yy, px0 + pw, yy);
			fmt_si(pow(10, y), buf, sizeof(buf));
			text(f, "lbl", px0 - 5, yy + 4, "end", buf);
		}
		ymin = lo;
		ymax = hi;
	} else {
		if (ymax <= 0)
			ymax = 1;
		step = nice_step(ymax, 5);
		ymax = ceil(ymax * 1.02 / step) * step;
		/* a percentage tops out at 100 */
		if (tl->ylabel && !strcmp(tl->ylabel, "%") && ymax > 100) {
			ymax = 100;
			step = 20;
		}
		for (y = 0; y <= ymax + step / 2; y += step) {
			double yy = py1 - y / ymax * ph;

			line(f, "grid", px0, yy, px0 + pw, yy);
			text(f, "lbl", px0 - 5, yy + 4, "end", fmt_si(y, buf, sizeof(buf)));
		}
	}
	fprintf(f, "<text class=\"lbl\" transform=\"translate(14,%.1f) rotate(-90)\" "
		   "text-anchor=\"middle\">", py0 + ph / 2);
	html_esc(f, tl->ylabel);
	fprintf(f, "</text>");
	for (s = 0; s < tl->nseries; s++) {
		const struct svg_series *se = &tl->series[s];
		int pen = 0;

		fprintf(f, "<path class=\"line\" stroke=\"%s\"%s d=\"", se->color,
			se->dashed ? " stroke-dasharray=\"5 3\"" : "");
		for (i = 0; i < npts; i++) {
			double sum = 0, x, yy;
			unsigned int cnt = 0;

			for (j = i * k; j < (i + 1) * k && j < tl->n; j++) {
				if (isnan(se->y[j]))
					continue;
				sum += se->y[j];
				cnt++;
			}
			if (!cnt) {
				pen = 0;
				continue;
			}
			x = px0 + ((double)i + 0.5) / npts * pw;
			if (tl->log_y) {
				double v = sum / cnt;

				yy = v > 0 ? py1 - (log10(v) - ymin) / (ymax - ymin) * ph : py1;
				if (yy > py1)
					yy = py1;
			} else {
				yy = py1 - sum / cnt / ymax * ph;
			}
			fprintf(f, "%s%.1f %.1f", pen ? "L" : "M", x, yy);
			pen = 1;
		}
		fprintf(f, "\"/>");
	}
	/* legend, top right */
	{
		double lx = px0 + pw;

		for (s = tl->nseries; s-- > 0;) {
			const struct svg_series *se = &tl->series[s];
			double tw = strlen(se->name) * 6.3 + 28;

			lx -= tw;
			fprintf(f,
				"<line x1=\"%.1f\" y1=\"14\" x2=\"%.1f\" y2=\"14\" stroke=\"%s\" "
				"stroke-width=\"2.5\"%s/>",
				lx, lx + 18, se->color,
				se->dashed ? " stroke-dasharray=\"5 3\"" : "");
			text(f, "lbl", lx + 22, 18, NULL, se->name);
		}
	}
	line(f, "axis", px0, py1, px0 + pw, py1);
	x_axis_time(f, tl->x0, x1, px0, pw, py1);
	fprintf(f, "</svg>\n");
}

void svg_hbars(FILE *f, const struct svg_hbars *hb)
{
	int w = hb->width ? hb->width : 1100;
	double lw = 60, barh = 12, rowh, pw, px0, py0 = MT + 8, ph, xmax = 0, step, x;
	unsigned int c, s;
	int h;
	char buf[32];

	for (c = 0; c < hb->ncats; c++) {
		double l = strlen(hb->cats[c]) * 6.6 + 12;

		if (l > lw)
			lw = l;
		for (s = 0; s < hb->nnames; s++) {
			double v = hb->v[c * hb->nnames + s];
			double e = hb->sd ? hb->sd[c * hb->nnames + s] : 0;

			if (!isnan(v) && v + (isnan(e) ? 0 : e) > xmax)
				xmax = v + (isnan(e) ? 0 : e);
		}
	}
	if (lw > 260)
		lw = 260;
	rowh = hb->nnames * barh + 10;
	ph = rowh * hb->ncats;
	h = (int)(py0 + ph + MB);
	px0 = lw;
	pw = w - px0 - 70;
	if (xmax <= 0)
		xmax = 1;
	step = nice_step(xmax, 6);
	xmax = ceil(xmax * 1.05 / step) * step;
	svg_open(f, w, h, hb->title);
	for (x = 0; x <= xmax + step / 2; x += step) {
		double xx = px0 + x / xmax * pw;

		line(f, "grid", xx, py0, xx, py0 + ph);
		text(f, "lbl", xx, py0 + ph + 16, "middle", fmt_si(x, buf, sizeof(buf)));
	}
	text(f, "lbl", px0 + pw, py0 + ph + 30, "end", hb->unit);
	for (c = 0; c < hb->ncats; c++) {
		double ry = py0 + c * rowh;

		if (c % 2) {
			rect(f, "band1", NULL, 0, ry, w, rowh);
			fputs("</rect>", f);
		}
		text(f, "cat", px0 - 6, ry + rowh / 2 + 4, "end", hb->cats[c]);
		for (s = 0; s < hb->nnames; s++) {
			double v = hb->v[c * hb->nnames + s];
			double e = hb->sd ? hb->sd[c * hb->nnames + s] : NAN;
			double by = ry + 5 + s * barh, bw;

			if (isnan(v))
				continue;
			bw = v / xmax * pw;
			rect(f, NULL, hb->colors[s], px0, by, bw, barh - 2);
			fputs("<title>", f);
			html_esc(f, hb->cats[c]);
			fprintf(f, ", ");
			html_esc(f, hb->names[s]);
			fprintf(f, ": %.6g", v);
			if (!isnan(e) && e > 0)
				fprintf(f, " ± %.3g", e);
			fprintf(f, " ");
			html_esc(f, hb->unit);
			fprintf(f, "</title></rect>");
			if (!isnan(e) && e > 0) {
				double a = px0 + (v - e > 0 ? v - e : 0) / xmax * pw,
				       z = px0 + (v + e) / xmax * pw;
				double my = by + (barh - 2) / 2;

				/* the whisker and its two caps */
				fprintf(f, "<path class=\"err\" d=\"M%.1f %.1fH%.1fM%.1f %.1fV%.1f"
					   "M%.1f %.1fV%.1f\"/>", a, my, z, a, my - 3, my + 3, z,
					my - 3, my + 3);
				bw = z - px0;
			}
			fmt_si(v, buf, sizeof(buf));
			text(f, "val", px0 + bw + 4, by + barh - 3, NULL, buf);
		}
	}
	line(f, "axis", px0, py0, px0, py0 + ph);
	/* legend */
	{
		double lx = w - MR;

		for (s = hb->nnames; s-- > 0;) {
			double tw = strlen(hb->names[s]) * 6.3 + 26;

			lx -= tw;
			rect(f, NULL, hb->colors[s], lx, 8, 14, 10);
			fputs("</rect>", f);
			text(f, "lbl", lx + 18, 17, NULL, hb->names[s]);
		}
	}
	fprintf(f, "</svg>\n");
}

static const char *fmt_ns(double ns, char *buf, size_t len)
{
	if (ns >= 1e9)
		snprintf(buf, len, "%.3gs", ns / 1e9);
	else if (ns >= 1e6)
		snprintf(buf, len, "%.3gms", ns / 1e6);
	else if (ns >= 1e3)
		snprintf(buf, len, "%.3gus", ns / 1e3);
	else
		snprintf(buf, len, "%.3gns", ns);
	return buf;
}

void svg_hist(FILE *f, const struct svg_hist *hg)
{
	int w = hg->width ? hg->width : 540, h = hg->height ? hg->height : 200;
	double pw = w - ML - MR, ph = h - MT - MB, px0 = ML, py1 = MT + ph;
	double lo = INFINITY, hi = 0, ymax = 0, a, z, step, y, d;
	unsigned int i;
	char buf[32];

	for (i = 0; i < hg->n; i++) {
		if (hg->pct[i] <= 0)
			continue;
		if (hg->lo[i] < lo)
			lo = hg->lo[i];
		if (hg->hi[i] > hi)
			hi = hg->hi[i];
		if (hg->pct[i] > ymax)
			ymax = hg->pct[i];
	}
	svg_open(f, w, h, hg->title);
	if (!(hi > lo)) {
		fprintf(f, "</svg>\n");
		return;
	}
	a = floor(log10(lo > 1 ? lo : 1));
	z = ceil(log10(hi));
	if (z <= a)
		z = a + 1;
	step = nice_step(ymax, 4);
	ymax = ceil(ymax * 1.05 / step) * step;
	for (y = 0; y <= ymax + step / 2; y += step) {
		double yy = py1 - y / ymax * ph;

		line(f, "grid", px0, yy, px0 + pw, yy);
		snprintf(buf, sizeof(buf), "%g%%", y);
		text(f, "lbl", px0 - 5, yy + 4, "end", buf);
	}
	for (d = a; d <= z; d++) {
		double xx = px0 + (d - a) / (z - a) * pw;

		line(f, "tick", xx, py1, xx, py1 + 4);
		text(f, "lbl", xx, py1 + 16, "middle", fmt_ns(pow(10, d), buf, sizeof(buf)));
	}
	for (i = 0; i < hg->n; i++) {
		double x0, x1, yy;

		if (hg->pct[i] <= 0)
			continue;
		x0 = px0 + (log10(hg->lo[i] > 1 ? hg->lo[i] : 1) - a) / (z - a) * pw;
		x1 = px0 + (log10(hg->hi[i]) - a) / (z - a) * pw;
		yy = py1 - hg->pct[i] / ymax * ph;
		if (x1 - x0 < 1)
			x1 = x0 + 1;
		rect(f, NULL, hg->color, x0, yy, x1 - x0, py1 - yy);
		fprintf(f, "<title>%s", fmt_ns(hg->lo[i], buf, sizeof(buf)));
		fprintf(f, " .. %s: %.3g%%</title></rect>", fmt_ns(hg->hi[i], buf, sizeof(buf)),
			hg->pct[i]);
	}
	for (i = 0; i < hg->nmarks; i++) {
		double xx = px0 + (log10(hg->marks[i] > 1 ? hg->marks[i] : 1) - a) / (z - a) * pw;

		line(f, "mark", xx, MT, xx, py1);
		/* labels near the right edge go to the left of their line */
		fprintf(f, "<text class=\"marklbl\" x=\"%.1f\" y=\"%.1f\"%s>%s %s</text>",
			xx > px0 + pw - 80 ? xx - 3 : xx + 3, (double)MT + 10 + 11 * i,
			xx > px0 + pw - 80 ? " text-anchor=\"end\"" : "", hg->mark_names[i],
			fmt_ns(hg->marks[i], buf, sizeof(buf)));
	}
	line(f, "axis", px0, py1, px0 + pw, py1);
	text(f, "lbl", px0 + pw, py1 + 30, "end", "latency (log)");
	fprintf(f, "</svg>\n");
}

void svg_scatter(FILE *f, const struct svg_scatter *s)
{
	int w = s->width ? s->width : 540, h = s->height ? s->height : 240;
	double pw = w - ML - MR, ph = h - MT - MB, px0 = ML, py0 = MT, py1 = MT + ph;
	double ymax = 0, step, y, x1 = s->xmax > s->xmin ? s->xmax : s->xmin + 1;
	static const char *const colors[2] = { "#2c7fb8", "#f28e2b" };
	unsigned int i, c;
	char buf[32];

	for (i = 0; i < s->n; i++)
		if (s->y[i] > ymax)
			ymax = s->y[i];
	if (ymax <= 0)
		ymax = 1;
	step = nice_step(ymax, 4);
	ymax = ceil(ymax * 1.02 / step) * step;
	svg_open(f, w, h, s->title);
	if (s->nbands)
		band_rects(f, s->bands, s->nbands, s->xmin, x1, px0, pw, py0, ph);
	for (y = 0; y <= ymax + step / 2; y += step) {
		double yy = py1 - y / ymax * ph;

		line(f, "grid", px0, yy, px0 + pw, yy);
		fmt_si(y, buf, sizeof(buf) - 1);
		strcat(buf, "B");
		text(f, "lbl", px0 - 5, yy + 4, "end", buf);
	}
	for (c = 0; c < 2; c++) {
		int any = 0;

		for (i = 0; i < s->n; i++) {
			double xx, yy;

			if (s->cls[i] != c)
				continue;
			if (!any)
				fprintf(f, "<path class=\"dots\" stroke=\"%s\" d=\"", colors[c]);
			any = 1;
			xx = px0 + (s->x[i] - s->xmin) / (x1 - s->xmin) * pw;
			yy = py1 - s->y[i] / ymax * ph;
			fprintf(f, "M%.1f %.1fh.1", xx, yy);
		}
		if (any)
			fprintf(f, "\"/>");
	}
	rect(f, NULL, colors[0], w - MR - 110.0, 8, 10, 10);
	fputs("</rect>", f);
	text(f, "lbl", w - MR - 96.0, 17, NULL, "read");
	rect(f, NULL, colors[1], w - MR - 54.0, 8, 10, 10);
	fputs("</rect>", f);
	text(f, "lbl", w - MR - 40.0, 17, NULL, "write");
	line(f, "axis", px0, py1, px0 + pw, py1);
	x_axis_time(f, s->xmin, x1, px0, pw, py1);
	fprintf(f, "</svg>\n");
}
