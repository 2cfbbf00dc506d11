// SPDX-License-Identifier: MIT
/*
 * app_dedup.c - a backup media server's figures of a `run dedup` trace
 *
 * From the run's APP BACKUP records (FORMAT.md), one per generation: the
 * logical bytes the clients sent, the segments, the new ones and their
 * bytes, the fingerprint look-ups and cache hits, the backup's time as the
 * run's table takes it. The rest from the trace's ops within the phases
 * the run marks ("backup gen=N", "restore gen=N", "compact"):
 *   - physical: every byte written during the backup (containers, index,
 *     maps), over the backup's time;
 *   - index misses: READs of the file named "index", their latencies;
 *   - a restore: bytes, reads and distinct files read of the containers
 *     (files in data/, or data/XX/ for restic), over the phase's time;
 *   - compaction: its time, bytes read and written, files unlinked.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <json-c/json.h>

#include "app.h"
#include "analysis_i.h"
#include "svg.h"

void app_dedup_init(struct app_dedup *d)
{
	memset(d, 0, sizeof(*d));
	iotap_map_init(&d->files, 1);
	iotap_map_init(&d->data_dirs, 1);
	iotap_map_init(&d->containers, 1);
	d->cur = -1;
}

void app_dedup_release(struct app_dedup *d)
{
	unsigned int i;

	for (i = 0; i < d->ngen; i++)
		iotap_hist_release(&d->gen[i].miss);
	free(d->gen);
	iotap_map_release(&d->files);
	iotap_map_release(&d->data_dirs);
	iotap_map_release(&d->containers);
	memset(d, 0, sizeof(*d));
	d->cur = -1;
}

/* The generation called @name ("gen=2"), made when new; -1: no memory. */
static int gen_at(struct app_dedup *d, const char *name)
{
	unsigned int i;

	for (i = 0; i < d->ngen; i++)
		if (!strcmp(d->gen[i].name, name))
			return (int)i;
	if (d->ngen == d->cap) {
		unsigned int cap = d->cap ? 2 * d->cap : 16;
		struct app_gen *n = realloc(d->gen, cap * sizeof(*n));

		if (!n)
			return -1;
		d->gen = n;
		d->cap = cap;
	}
	memset(&d->gen[d->ngen], 0, sizeof(d->gen[0]));
	snprintf(d->gen[d->ngen].name, sizeof(d->gen[0].name), "%s", name);
	return (int)d->ngen++;
}

static int on_phase(struct app_dedup *d, const struct iotap_trace_rec *r)
{
	int restore;
	const char *g;

	if (!r->name)
		return 0;
	if (!strcmp(r->name, "compact")) {
		d->in_compact = r->flags == IOTAP_PHASE_BEGIN;
		if (d->in_compact) {
			d->c_t0 = r->time_ns;
			d->compact_seen = 1;
		} else {
			d->c_t1 = r->time_ns;
		}
		return 0;
	}
	if (!strncmp(r->name, "backup ", 7))
		restore = 0;
	else if (!strncmp(r->name, "restore ", 8))
		restore = 1;
	else
		return 0;
	g = r->name + (restore ? 8 : 7);
	if (r->flags != IOTAP_PHASE_BEGIN) {
		if (d->cur >= 0 && d->cur_restore)
			d->gen[d->cur].r_t1 = r->time_ns;
		d->cur = -1;
		return 0;
	}
	d->cur = gen_at(d, g);
	if (d->cur < 0)
		return -ENOMEM;
	d->cur_restore = restore;
	if (restore) {
		d->gen[d->cur].have_restore = 1;
		d->gen[d->cur].r_t0 = r->time_ns;
		iotap_map_clear(&d->files);
	}
	return 0;
}

static int on_op(struct app_dedup *d, const struct iotap_trace_rec *r)
{
	uint64_t bytes = r->result > 0 ? (uint64_t)r->result : 0;
	struct app_gen *g = d->cur >= 0 ? &d->gen[d->cur] : NULL;
	void *v;
	int ret;

	if (d->in_compact) {
		if (r->op == IOTAP_OP_READ)
			d->c_read += bytes;
		else if (r->op == IOTAP_OP_WRITE)
			d->c_written += bytes;
		else if (r->op == IOTAP_OP_UNLINK && r->result == 0)
			d->c_unlinks++;
		return 0;
	}
	if (!g)
		return 0;
	if (!d->cur_restore) {
		if (r->op == IOTAP_OP_WRITE)
			g->written += bytes;
		if (r->op == IOTAP_OP_READ && d->index_file && r->file == d->index_file) {
			g->index_reads++;
			if (iotap_hist_add(&g->miss, r->dur_ns))
				return -ENOMEM;
		}
		return 0;
	}
	if (r->op != IOTAP_OP_READ || r->result < 0 || !iotap_map_get(&d->containers, r->file))
		return 0;	/* a restore's figures are its container reads (not the maps) */
	g->r_bytes += bytes;
	g->r_reads++;
	ret = iotap_map_put(&d->files, r->file, &v);
	if (ret < 0)
		return -ENOMEM;
	if (!ret)
		g->r_files++;
	return 0;
}

static int on_app(struct app_dedup *d, const struct iotap_trace_rec *r)
{
	struct iotap_trace_app_backup b;
	struct app_gen *g;
	int i;

	if (!iotap_trace_app_is(r, IOTAP_APP_BACKUP) || !r->name || strncmp(r->name, "backup ", 7))
		return 0;
	i = gen_at(d, r->name + 7);
	if (i < 0)
		return -ENOMEM;
	g = &d->gen[i];
	g->have_backup = 1;
	g->partial = !!(iotap_trace_app_flags(r) & IOTAP_APPF_PARTIAL);
	g->dur_ns = iotap_trace_app_dur_ns(r);
	iotap_trace_app_backup_get(r, &b);
	g->logical = b.logical;
	g->lookups = b.lookups;
	g->hits = b.hits;
	g->segments = b.segments;
	g->fresh = b.fresh;
	g->stored = b.stored;
	g->cpu_ns = b.cpu_ns;
	return 0;
}

int app_dedup_feed(struct app_dedup *d, const struct iotap_trace_rec *r)
{
	switch (r->type) {
	case IOTAP_REC_NAME: {
		void *v;

		if (r->name && !strcmp(r->name, "index") && (r->mode & S_IFMT) != S_IFDIR)
			d->index_file = r->file;
		/* data/ holds the containers (MSDP) or data/XX/ the packs (restic) */
		if ((r->mode & S_IFMT) == S_IFDIR && r->name &&
		    (!strcmp(r->name, "data") || iotap_map_get(&d->data_dirs, r->file2)) &&
		    iotap_map_put(&d->data_dirs, r->file, &v) < 0)
			return -ENOMEM;
		if ((r->mode & S_IFMT) == S_IFREG && iotap_map_get(&d->data_dirs, r->file2) &&
		    iotap_map_put(&d->containers, r->file, &v) < 0)
			return -ENOMEM;
		return 0;
	}
	case IOTAP_REC_PHASE:
		return on_phase(d, r);
	case IOTAP_REC_OP:
		return on_op(d, r);
	case IOTAP_REC_APP:
		return on_app(d, r);
	}
	return 0;
}

void app_dedup_finish(struct app_dedup *d)
{
	(void)d;
}

/* --- figures ------------------------------------------------------------------------------ */

static double rate(uint64_t bytes, double s)
{
	return s > 0 ? (double)bytes / s / 1e6 : 0;
}

static double ratio(uint64_t a, uint64_t b)
{
	return b ? (double)a / (double)b : 0;
}

static double secs(uint64_t ns)
{
	return (double)ns / 1e9;
}

static double restore_s(const struct app_gen *g)
{
	return g->r_t1 > g->r_t0 ? secs(g->r_t1 - g->r_t0) : 0;
}

/*
 * Quantile @q of an index-miss histogram, ms. The run computes its figure
 * from the same histogram of the same reads' durations (the sys layer's
 * dur_ns), as seconds then ms: the same two steps here, the same digits.
 */
static double miss_ms(const struct iotap_hist *h, double q)
{
	return (double)iotap_hist_quantile(h, q) / 1e9 * 1e3;
}

/* A column of the backup or restore table: text and HTML alike. */
struct dd_col {
	const char *top, *unit;		/* the text's header lines (no @unit: one line) */
	const char *th;			/* the HTML heading */
	int w, dec;			/* the text's width; the decimals */
};

/* The sums over the backups so far (the cumulative ratio, the summary line). */
struct dd_sums {
	uint64_t logical, stored;
};

/*
 * A table of generations: its label, its columns, and @row, which gives a
 * generation's values in the columns' order (0: it has no such row).
 */
struct dd_table {
	const char *label;
	const struct dd_col *cols;
	unsigned int ncols;
	int (*row)(const struct app_gen *g, struct dd_sums *sums, double *v);
};

static const struct dd_col backup_cols[] = {
	{ "time s", "", "time s", 7, 2 },
	{ "logical", "MB/s", "logical MB/s", 9, 1 },
	{ "physical", "MB/s", "physical MB/s", 9, 1 },
	{ "dedup", "ratio", "dedup ratio", 6, 2 },
	{ "cum", "ratio", "cum ratio", 6, 2 },
	{ "lookups", "/s", "lookups/s", 9, 0 },
	{ "hit", "%", "hit %", 6, 1 },
	{ "index", "reads", "index reads", 7, 0 },
	{ "miss p50", "ms", "miss p50 ms", 8, 3 },
	{ "miss p99", "ms", "miss p99 ms", 8, 3 },
};

static int backup_row(const struct app_gen *g, struct dd_sums *sums, double *v)
{
	double t = secs(g->dur_ns);

	if (!g->have_backup)
		return 0;
	sums->logical += g->logical;
	sums->stored += g->stored;
	v[0] = t;
	v[1] = rate(g->logical, t);
	v[2] = rate(g->written, t);
	v[3] = ratio(g->logical, g->stored);
	v[4] = ratio(sums->logical, sums->stored);
	v[5] = t > 0 ? (double)g->lookups / t : 0;
	v[6] = g->lookups ? 100.0 * (double)g->hits / (double)g->lookups : 0;
	v[7] = (double)g->index_reads;
	v[8] = miss_ms(&g->miss, 0.5);
	v[9] = miss_ms(&g->miss, 0.99);
	return 1;
}

static const struct dd_col restore_cols[] = {
	{ "time s", NULL, "time s", 7, 2 },
	{ "MB", NULL, "MB", 9, 1 },
	{ "MB/s", NULL, "MB/s", 9, 1 },
	{ "reads", NULL, "reads", 8, 0 },
	{ "files", NULL, "files", 10, 0 },
};

static int restore_row(const struct app_gen *g, struct dd_sums *sums, double *v)
{
	(void)sums;
	if (!g->have_restore)
		return 0;
	v[0] = restore_s(g);
	v[1] = (double)g->r_bytes / 1e6;
	v[2] = rate(g->r_bytes, restore_s(g));
	v[3] = (double)g->r_reads;
	v[4] = (double)g->r_files;
	return 1;
}

#define DD_TABLE(name) { #name, name##_cols, sizeof(name##_cols) / sizeof(name##_cols[0]), \
			 name##_row }
static const struct dd_table backup_table = DD_TABLE(backup);
static const struct dd_table restore_table = DD_TABLE(restore);
#define DD_COLS_MAX 10

/* Table @t over @d's generations, as text or (@html) an HTML table; *@sums: its rows' sums. */
static void print_table(FILE *f, int html, const struct dd_table *t, const struct app_dedup *d,
			struct dd_sums *sums)
{
	double v[DD_COLS_MAX];
	unsigned int i, k;

	if (html)
		fprintf(f, "<table><tr><th class=\"l\">%s</th>", t->label);
	else
		fprintf(f, "  %-13s", t->label);
	for (k = 0; k < t->ncols; k++)
		if (html)
			fprintf(f, "<th>%s</th>", t->cols[k].th);
		else
			fprintf(f, " %*s", t->cols[k].w, t->cols[k].top);
	fprintf(f, html ? "</tr>\n" : "\n");
	if (!html && t->cols[0].unit) {
		fprintf(f, "  %-13s", "");
		for (k = 0; k < t->ncols; k++)
			fprintf(f, " %*s", t->cols[k].w, t->cols[k].unit);
		fputc('\n', f);
	}
	for (i = 0; i < d->ngen; i++) {
		const struct app_gen *g = &d->gen[i];

		if (!t->row(g, sums, v))
			continue;
		if (html) {
			fprintf(f, "<tr><td class=\"l\">");
			html_esc(f, g->name);
			fprintf(f, "</td>");
		} else {
			fprintf(f, "  %-13s", g->name);
		}
		for (k = 0; k < t->ncols; k++)
			if (html)
				fprintf(f, "<td>%.*f</td>", t->cols[k].dec, v[k]);
			else
				fprintf(f, " %*.*f", t->cols[k].w, t->cols[k].dec, v[k]);
		fprintf(f, html ? "</tr>\n" : "\n");
	}
	if (html)
		fprintf(f, "</table>\n");
}

static int any_restore(const struct app_dedup *d)
{
	unsigned int i;

	for (i = 0; i < d->ngen; i++)
		if (d->gen[i].have_restore)
			return 1;
	return 0;
}

/* The application's part of the report, as text or (@html) the report page's. */
static void print_app(const struct app_dedup *d, FILE *f, int html)
{
	const char *pre = html ? "<p>" : "  ", *post = html ? "</p>" : "";
	struct dd_sums sums = { 0 };
	uint64_t cpu, fresh;
	unsigned int i;

	if (html)
		fprintf(f, "<p class=\"note\">Backup media server model (dedup): logical bytes and "
			   "look-ups from the run's APP records, the rest from the trace's ops.</p>\n");
	else
		fprintf(f, "\napplication: backup media server model (dedup); logical bytes and "
			   "look-ups from the run's APP records, the rest from the trace's ops\n");
	print_table(f, html, &backup_table, d, &sums);
	if (any_restore(d))
		print_table(f, html, &restore_table, d, &sums);
	if (d->compact_seen)
		fprintf(f, "%scompact: %.2f s; read %.1f MB, wrote %.1f MB, %" PRIu64 " files "
			   "unlinked%s\n", pre, d->c_t1 > d->c_t0 ? secs(d->c_t1 - d->c_t0) : 0,
			(double)d->c_read / 1e6, (double)d->c_written / 1e6, d->c_unlinks, post);
	if (sums.logical)
		fprintf(f, "%sstored %.1f MB of %.1f MB logical: dedup ratio %.2f:1%s\n", pre,
			(double)sums.stored / 1e6, (double)sums.logical / 1e6,
			ratio(sums.logical, sums.stored), post);
	if (html)
		return;
	for (i = 0, cpu = 0, fresh = 0; i < d->ngen; i++) {
		cpu += d->gen[i].cpu_ns;
		fresh += d->gen[i].fresh;
	}
	if (fresh && cpu)
		fprintf(f, "  model CPU: %.1f us content + hash per new segment\n",
			(double)cpu / 1e3 / (double)fresh);
}

void app_dedup_print_text(const struct app_dedup *d, FILE *f)
{
	print_app(d, f, 0);
}

/* The report page's part: the backups and restores, as the text has them. */
void app_dedup_print_html(const struct app_dedup *d, FILE *f)
{
	print_app(d, f, 1);
}

struct json_object *app_dedup_json(const struct app_dedup *d)
{
	json_object *o = json_object_new_object(), *bk = json_object_new_array();
	json_object *rs = json_object_new_array();
	uint64_t logical = 0, stored = 0;
	unsigned int i;

	json_object_object_add(o, "kind", json_object_new_string("dedup"));
	for (i = 0; i < d->ngen; i++) {
		const struct app_gen *g = &d->gen[i];
		double t = secs(g->dur_ns);
		json_object *b;

		if (g->have_restore) {
			json_object *r = json_object_new_object();

			json_object_object_add(r, "generation", json_object_new_string(g->name));
			json_object_object_add(r, "time_s", iotap_report_jnum(restore_s(g), 6));
			json_object_object_add(r, "bytes", json_object_new_uint64(g->r_bytes));
			json_object_object_add(r, "mb_per_s", iotap_report_jnum(rate(g->r_bytes,
									       restore_s(g)), 3));
			json_object_object_add(r, "reads", json_object_new_uint64(g->r_reads));
			json_object_object_add(r, "files", json_object_new_uint64(g->r_files));
			json_object_array_add(rs, r);
		}
		if (!g->have_backup)
			continue;
		logical += g->logical;
		stored += g->stored;
		b = json_object_new_object();
		json_object_object_add(b, "generation", json_object_new_string(g->name));
		json_object_object_add(b, "partial", json_object_new_boolean(g->partial));
		json_object_object_add(b, "time_s", iotap_report_jnum(t, 6));
		json_object_object_add(b, "logical_bytes", json_object_new_uint64(g->logical));
		json_object_object_add(b, "stored_bytes", json_object_new_uint64(g->stored));
		json_object_object_add(b, "written_bytes", json_object_new_uint64(g->written));
		json_object_object_add(b, "logical_mb_per_s", iotap_report_jnum(rate(g->logical, t), 3));
		json_object_object_add(b, "physical_mb_per_s", iotap_report_jnum(rate(g->written, t), 3));
		json_object_object_add(b, "dedup_ratio", iotap_report_jnum(ratio(g->logical, g->stored), 4));
		json_object_object_add(b, "cumulative_dedup_ratio",
				       iotap_report_jnum(ratio(logical, stored), 4));
		json_object_object_add(b, "segments", json_object_new_uint64(g->segments));
		json_object_object_add(b, "new_segments", json_object_new_uint64(g->fresh));
		json_object_object_add(b, "lookups", json_object_new_uint64(g->lookups));
		json_object_object_add(b, "lookups_per_s", iotap_report_jnum(t > 0 ? (double)g->lookups / t
									     : 0, 1));
		json_object_object_add(b, "cache_hits", json_object_new_uint64(g->hits));
		json_object_object_add(b, "index_reads", json_object_new_uint64(g->index_reads));
		json_object_object_add(b, "miss_p50_ms", g->miss.n ? iotap_report_jnum(miss_ms(&g->miss,
									0.5), 3) : NULL);
		json_object_object_add(b, "miss_p99_ms", g->miss.n ? iotap_report_jnum(miss_ms(&g->miss,
									0.99), 3) : NULL);
		json_object_array_add(bk, b);
	}
	json_object_object_add(o, "backups", bk);
	json_object_object_add(o, "restores", rs);
	json_object_object_add(o, "dedup_ratio", logical ? iotap_report_jnum(ratio(logical, stored), 4)
							 : NULL);
	{
		uint64_t cpu = 0, fresh = 0;

		for (i = 0; i < d->ngen; i++) {
			cpu += d->gen[i].cpu_ns;
			fresh += d->gen[i].fresh;
		}
		json_object_object_add(o, "model_cpu_us_per_new_segment", fresh && cpu ?
				       iotap_report_jnum((double)cpu / 1e3 / (double)fresh, 1) : NULL);
	}
	if (d->compact_seen) {
		json_object *c = json_object_new_object();

		json_object_object_add(c, "time_s", iotap_report_jnum(d->c_t1 > d->c_t0 ?
							       secs(d->c_t1 - d->c_t0) : 0, 6));
		json_object_object_add(c, "read_bytes", json_object_new_uint64(d->c_read));
		json_object_object_add(c, "written_bytes", json_object_new_uint64(d->c_written));
		json_object_object_add(c, "unlinks", json_object_new_uint64(d->c_unlinks));
		json_object_object_add(o, "compact", c);
	} else {
		json_object_object_add(o, "compact", NULL);
	}
	return o;
}

unsigned int app_dedup_figs(const struct app_dedup *d, struct app_fig *out)
{
	uint64_t logical = 0, stored = 0, written = 0, lookups = 0, rbytes = 0, dur = 0;
	double rs = 0, last = NAN, p99 = NAN;
	struct iotap_hist miss = { 0 };
	unsigned int i, n = 0;

	for (i = 0; i < d->ngen; i++) {
		const struct app_gen *g = &d->gen[i];

		if (g->have_backup) {
			logical += g->logical;
			stored += g->stored;
			written += g->written;
			lookups += g->lookups;
			dur += g->dur_ns;
			iotap_hist_merge(&miss, &g->miss);
		}
		if (g->have_restore) {
			rbytes += g->r_bytes;
			rs += restore_s(g);
			last = rate(g->r_bytes, restore_s(g));
		}
	}
	if (miss.n)
		p99 = miss_ms(&miss, 0.99);
	iotap_hist_release(&miss);
	out[n++] = (struct app_fig){ "logical_mb_per_s", "backup logical MB/s", 1, 1,
		dur ? rate(logical, secs(dur)) : NAN };
	out[n++] = (struct app_fig){ "physical_mb_per_s", "backup physical MB/s", 1, 1,
		dur ? rate(written, secs(dur)) : NAN };
	out[n++] = (struct app_fig){ "dedup_ratio", "dedup ratio", 2, 0,
		stored ? ratio(logical, stored) : NAN };
	out[n++] = (struct app_fig){ "lookups_per_s", "index look-ups/s", 0, 1,
		dur ? (double)lookups / secs(dur) : NAN };
	out[n++] = (struct app_fig){ "index_miss_p99_ms", "index miss p99 ms", 3, -1, p99 };
	out[n++] = (struct app_fig){ "restore_mb_per_s", "restore MB/s (all)", 1, 1,
		rs > 0 ? rate(rbytes, rs) : NAN };
	out[n++] = (struct app_fig){ "restore_last_mb_per_s", "restore MB/s (last gen)", 1, 1,
		last };
	out[n++] = (struct app_fig){ "compact_s", "compaction s", 3, -1,
		d->compact_seen && d->c_t1 > d->c_t0 ? secs(d->c_t1 - d->c_t0) : NAN };
	return n;
}

/* the model's analysis ops (app.h), for its row of the models table */
/* A dedup run's generations are phases of their own: no period across them. */
int app_dedup_period(const struct app_dedup *d, uint64_t *start_ns, uint64_t *dur_ns)
{
	(void)d;
	(void)start_ns;
	(void)dur_ns;
	return 0;
}

APP_OPS(dedup);
