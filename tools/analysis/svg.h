/* SPDX-License-Identifier: MIT */
/*
 * svg.h - the four charts of the HTML pages, drawn as inline SVG
 *
 * Pages must open in any browser with no network and no scripts, so every
 * chart is SVG written here: a time line with phase bands, horizontal
 * grouped bars (with ± error bars for repeats), a histogram on a log axis
 * and a scatter plot. Each takes plain arrays; nothing here knows traces.
 * Hover titles (<title>) carry exact values. Coordinates are rounded to
 * 0.1 px and long series are averaged down to about one point per pixel,
 * so a page stays small however long the trace.
 */
#ifndef IOTAP_SVG_H
#define IOTAP_SVG_H

#include <stdio.h>

struct svg_series {
	const char *name;
	const char *color;		/* CSS colour */
	int dashed;
	const double *y;		/* n values, NAN = no data */
};

struct svg_band {
	double x0, x1;			/* in x units */
	const char *label;
};

struct svg_timeline {
	const char *title;
	const char *ylabel;		/* unit, e.g. "MB/s" */
	double x0, dx;			/* x of point i = x0 + i * dx (seconds) */
	unsigned int n;			/* points per series */
	const struct svg_series *series;
	unsigned int nseries;
	const struct svg_band *bands;
	unsigned int nbands;
	int width, height;		/* px */
	int log_y;			/* logarithmic y axis */
};

void svg_timeline(FILE *f, const struct svg_timeline *tl);

struct svg_hbars {
	const char *title;
	const char *unit;
	const char *const *cats;	/* rows (phases) */
	unsigned int ncats;
	const char *const *names;	/* bars per row (directions, runs) */
	const char *const *colors;
	unsigned int nnames;
	const double *v;		/* [ncats][nnames], NAN = none */
	const double *sd;		/* same shape, or NULL */
	int width;
};

void svg_hbars(FILE *f, const struct svg_hbars *hb);

struct svg_hist {
	const char *title;
	const double *lo, *hi;		/* bucket edges, ns (log x axis) */
	const double *pct;		/* share of samples per bucket, % */
	unsigned int n;
	const double *marks;		/* vertical lines at these x (p50, p99, max) */
	const char *const *mark_names;
	unsigned int nmarks;
	const char *color;
	int width, height;
};

void svg_hist(FILE *f, const struct svg_hist *h);

struct svg_scatter {
	const char *title;
	const double *x, *y;		/* seconds, bytes */
	const unsigned char *cls;	/* 0 = read, 1 = write */
	unsigned int n;
	double xmin, xmax;
	const struct svg_band *bands;
	unsigned int nbands;
	int width, height;
};

void svg_scatter(FILE *f, const struct svg_scatter *s);

/* Text for HTML/SVG with & < > " escaped. */
void html_esc(FILE *f, const char *s);
/* html.c's page frame and phase-table rows, for the pages built elsewhere (fleet.c) */
struct iotap_report;
struct iotap_pstats;
struct iotap_flagset;
void html_page_head(FILE *f, const char *title, const char *sub);
void html_page_foot(FILE *f);
/* The table's heading row (@what: the second column's heading) */
void html_metric_head(FILE *f, const char *what);
/* A row of report_metrics[]' MO_HTML figures: @idx, @name, then the figures; @total: bold */
void html_metric_row(FILE *f, const struct iotap_report *rep, const struct iotap_pstats *p,
		     const char *idx,
		     const char *name, const struct iotap_flagset *fl, int total);
/* The report's phases as chart bands (free() them), and its timeline charts
 * (@what 0: throughput, 1: ops and seeks, else concurrency, utilisation and CPU),
 * for html_compare.c */
struct svg_band *html_phase_bands(const struct iotap_report *rep);
void html_timelines(FILE *f, const struct iotap_report *rep, const struct svg_band *bands, int width,
		    int what);
/* 1.23k, 45.6M, 0.012: a number in few characters. */
const char *fmt_si(double v, char *buf, size_t len);

#endif /* IOTAP_SVG_H */
