// SPDX-License-Identifier: MIT
/*
 * output.c - a struct report as text for people, CSV and JSON for scripts
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
#include "iotap_analysis.h"

/* --- derived figures --------------------------------------------------- */

double fig_rate(uint64_t n, double secs)
{
	return secs > 0 ? (double)n / secs : 0.0;
}

double fig_mbps(uint64_t bytes, double secs)
{
	return secs > 0 ? (double)bytes / 1e6 / secs : 0.0;
}

double fig_seq_pct(const struct pstats *p)
{
	return p->data_ops ? 100.0 * (double)(p->data_ops - p->seeks) / (double)p->data_ops : 0.0;
}

double fig_p99_us(const struct pstats *p, unsigned int op)
{
	return p->lat[op] && p->lat[op]->n ? iotap_hist_quantile(p->lat[op], 0.99) / 1e3 : NAN;
}

double fig_start_s(const struct report *rep, const struct pstats *p)
{
	return p->t_begin >= rep->t0 ? (double)(p->t_begin - rep->t0) / 1e9 : 0.0;
}

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

static int sample_span(const struct pstats *p, const struct iotap_trace_sample **a,
		       const struct iotap_trace_sample **b, double *dt)
{
	if (!p->smp_first.valid || !p->smp_last.valid || p->smp_last.t_ns <= p->smp_first.t_ns)
		return 0;
	*a = &p->smp_first.s;
	*b = &p->smp_last.s;
	*dt = (double)(p->smp_last.t_ns - p->smp_first.t_ns) / 1e9;
	return 1;
}

int fig_cpu(const struct pstats *p, struct cpu_fig *c)
{
	const struct iotap_trace_sample *a, *b;
	double d = pstats_duration_s(p), dt, all;

	memset(c, 0, sizeof(*c));
	if (d > 0 && p->has_cpu_mark && p->cpu_mark_end_ns >= p->cpu_mark_begin_ns) {
		c->has_mark = 1;
		c->mark_pct = 100.0 * (double)(p->cpu_mark_end_ns - p->cpu_mark_begin_ns) / 1e9 / d;
	}
	if (sample_span(p, &a, &b, &dt)) {
		c->has_sample = 1;
		c->daemon_pct = 100.0 * (double)((b->proc_user_ns + b->proc_sys_ns) -
						 (a->proc_user_ns + a->proc_sys_ns)) / 1e9 / dt;
		all = (double)((b->sys_user_ns + b->sys_sys_ns + b->sys_idle_ns +
				b->sys_iowait_ns) -
			       (a->sys_user_ns + a->sys_sys_ns + a->sys_idle_ns +
				a->sys_iowait_ns));
		if (all > 0) {
			c->system_pct = 100.0 * (double)((b->sys_user_ns + b->sys_sys_ns) -
							 (a->sys_user_ns + a->sys_sys_ns)) / all;
			c->iowait_pct = 100.0 * (double)(b->sys_iowait_ns - a->sys_iowait_ns) / all;
		}
	}
	return c->has_mark || c->has_sample;
}

int fig_cpu_pct(const struct pstats *p, double *out)
{
	struct cpu_fig c;

	if (!fig_cpu(p, &c))
		return 0;
	*out = c.has_mark ? c.mark_pct : c.system_pct;
	return 1;
}

int fig_device(const struct pstats *p, struct dev_fig *f)
{
	const struct iotap_trace_sample *a, *b;
	double dt, d = pstats_duration_s(p);

	memset(f, 0, sizeof(*f));
	f->fs_unseen_pct = -1;
	if (!sample_span(p, &a, &b, &dt))
		return 0;
	if (!b->dev_major && !b->dev_minor)
		return 0;
	f->rd_mbps = (double)(b->rd_sectors - a->rd_sectors) * 512 / 1e6 / dt;
	f->wr_mbps = (double)(b->wr_sectors - a->wr_sectors) * 512 / 1e6 / dt;
	f->rd_iops = (double)(b->rd_ios - a->rd_ios) / dt;
	f->wr_iops = (double)(b->wr_ios - a->wr_ios) / dt;
	f->iops = f->rd_iops + f->wr_iops;
	f->util_pct = (double)(b->io_ticks_ms - a->io_ticks_ms) / 10.0 / dt;
	if (f->util_pct > 100)
		f->util_pct = 100;
	f->queue = (double)(b->queue_ms - a->queue_ms) / 1e3 / dt;
	/* over the phase's own duration, so the two views compare */
	f->rd_bytes = f->rd_mbps * 1e6 * (d > 0 ? d : dt);
	/* a few stray reads are no measure of the page cache */
	if (p->rd.bytes >= 1000000) {
		f->fs_unseen_pct = 100.0 * (1.0 - f->rd_bytes / (double)p->rd.bytes);
		if (f->fs_unseen_pct < 0)
			f->fs_unseen_pct = 0;
	}
	return 1;
}

static double mean_inflight(const struct pstats *p)
{
	double d = pstats_duration_s(p);

	return d > 0 ? (double)p->busy_ns / 1e9 / d : 0.0;
}

/* "8k 99.9%, 4k 0.1%": the fullest size buckets */
void fig_size_summary(const struct dir_stats *d, char *buf, size_t len)
{
	unsigned int used[3] = { 0 }, k, i, n = 0;
	size_t l = 0;

	buf[0] = '\0';
	for (k = 0; k < 3; k++) {
		int best = -1;

		for (i = 0; i < SIZE_BUCKETS; i++) {
			unsigned int j, taken = 0;

			for (j = 0; j < n; j++)
				taken |= used[j] == i;
			if (!taken && d->size_hist[i] &&
			    (best < 0 || d->size_hist[i] > d->size_hist[best]))
				best = (int)i;
		}
		if (best < 0)
			break;
		used[n++] = (unsigned int)best;
		{
			char sz[32], pct[16];
			uint64_t bsz = dir_bucket_size(d, (unsigned int)best);
			double share = 100.0 * (double)d->size_hist[best] / (double)d->ops;

			fmt_req_size(bsz, sz, sizeof(sz));
			snprintf(pct, sizeof(pct), share < 0.05 ? "<0.1%%" : "%.1f%%", share);
			l += (size_t)snprintf(buf + l, l < len ? len - l : 0, "%s%s %s",
					      n > 1 ? ", " : "", sz, pct);
		}
	}
}

/* "<16k 83%, <2m 8%": the commonest seek distances */
void fig_seek_summary(const struct pstats *p, char *buf, size_t len)
{
	unsigned int k, i, n = 0, used[3] = { 0 };
	size_t l = 0;

	buf[0] = '\0';
	for (k = 0; k < 3; k++) {
		int best = -1;

		for (i = 0; i < SEEK_BUCKETS; i++) {
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
static void text_top_sizes(const struct pstats *p, char *buf, size_t len)
{
	const struct dir_stats *dirs[2] = { &p->rd, &p->wr };
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

static void text_phase_row(FILE *f, const struct report *rep, const struct pstats *p, int idx,
			   const struct out_opts *oo)
{
	double d = pstats_duration_s(p), cpu;
	char cpus[48] = "-", devs[48] = "-", utils[48] = "-", idxs[16] = "", sizes[96];
	struct dev_fig dev;

	if (fig_cpu_pct(p, &cpu))
		snprintf(cpus, sizeof(cpus), "%.1f", cpu);
	if (fig_device(p, &dev)) {
		snprintf(devs, sizeof(devs), oo->bonnie_units ? "%.0f" : "%.2f",
			 oo->bonnie_units ? (dev.rd_mbps + dev.wr_mbps) * 1e6 / 1024
					  : dev.rd_mbps + dev.wr_mbps);
		snprintf(utils, sizeof(utils), "%.1f", dev.util_pct);
	}
	if (idx >= 0)
		snprintf(idxs, sizeof(idxs), "%d", idx);
	text_top_sizes(p, sizes, sizeof(sizes));
	if (oo->bonnie_units)
		fprintf(f,
			"%3s %-24.24s %9.3f %9.3f %11" PRIu64 " %10.1f %10.0f %10.0f %9.1f %5.1f "
			"%8.1f %6s %10s %6s  %s\n",
			idxs, p->name, fig_start_s(rep, p), d, p->ops, fig_rate(p->ops, d),
			d > 0 ? (double)p->rd.bytes / 1024 / d : 0,
			d > 0 ? (double)p->wr.bytes / 1024 / d : 0, fig_rate(p->seeks, d),
			fig_seq_pct(p), fig_rate(p->fsyncs, d), cpus, devs, utils, sizes);
	else
		fprintf(f,
			"%3s %-24.24s %9.3f %9.3f %11" PRIu64 " %10.1f %9.2f %9.2f %9.1f %5.1f "
			"%8.1f %6s %9s %6s  %s\n",
			idxs, p->name, fig_start_s(rep, p), d, p->ops, fig_rate(p->ops, d),
			fig_mbps(p->rd.bytes, d), fig_mbps(p->wr.bytes, d), fig_rate(p->seeks, d),
			fig_seq_pct(p), fig_rate(p->fsyncs, d), cpus, devs, utils, sizes);
}

/* The read and write lines of a phase: ops, bytes, rate, IOPS, request sizes. */
static void text_data_lines(FILE *f, const struct pstats *p, const struct out_opts *oo)
{
	double d = pstats_duration_s(p);
	const struct dir_stats *dirs[2] = { &p->rd, &p->wr };
	unsigned int k;
	char buf[256];

	for (k = 0; k < 2; k++) {
		const struct dir_stats *dr = dirs[k];

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

static void text_detail(FILE *f, const struct pstats *p, const struct flagset *fl,
			const struct out_opts *oo)
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
		mean_inflight(p), p->max_inflight, pstats_threads(p),
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

static const char *fmt_realtime(uint64_t ns, char *buf, size_t len)
{
	time_t t = (time_t)(ns / 1000000000ull);
	struct tm tm;

	if (!ns || !localtime_r(&t, &tm) || !strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm))
		snprintf(buf, len, "?");
	return buf;
}

/* What the trace is, where it ran, the units. */
static void text_head(FILE *f, const struct report *rep, const struct out_opts *oo)
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

/* One row per phase, then the total. */
static void text_table(FILE *f, const struct report *rep, const struct out_opts *oo)
{
	int w = oo->bonnie_units ? 10 : 9;	/* a K/sec cell is one wider than MB/s */
	unsigned int i;

	fprintf(f, "\n%3s %-24s %9s %9s %11s %10s %*s %*s %9s %5s %8s %6s %*s %6s  %s\n", "#",
		"phase", "start_s", "secs", "ops", "ops/s", w,
		oo->bonnie_units ? "rd_K/sec" : "rd_MB/s", w,
		oo->bonnie_units ? "wr_K/sec" : "wr_MB/s", "seeks/s", "seq%", "fsync/s", "cpu%", w,
		oo->bonnie_units ? "dev_K/s" : "dev_MB/s", "util%", "sizes");
	for (i = 0; i < rep->nphases; i++)
		text_phase_row(f, rep, &rep->phases[i], (int)i, oo);
	text_phase_row(f, rep, &rep->total, -1, oo);
}

/* Every flag, by phase, then the whole trace's. */
static void text_flags(FILE *f, const struct report *rep)
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
static void text_details(FILE *f, const struct report *rep, const struct out_opts *oo)
{
	unsigned int i;

	for (i = 0; i < rep->nphases; i++) {
		const struct pstats *p = &rep->phases[i];

		fprintf(f, "\n[%u] %s: %.3f s from %.3f s\n", i, p->name, pstats_duration_s(p),
			fig_start_s(rep, p));
		text_detail(f, p, &rep->flags[i], oo);
	}
	fprintf(f, "\ntotal: %.3f s\n", pstats_duration_s(&rep->total));
	text_detail(f, &rep->total, &rep->tflags, oo);
}

/* Without --detail: the total's data lines and where the rest is. */
static void text_brief(FILE *f, const struct report *rep, const struct out_opts *oo)
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
void report_print_text(const struct report *rep, const struct out_opts *oo, FILE *f)
{
	struct out_opts defaults = { 0 };

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

static void csv_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

/* CSV: an op type the span lacks has p99 0, as always */
static double p99_us(const struct pstats *p, unsigned int op)
{
	double v = fig_p99_us(p, op);

	return isnan(v) ? 0 : v;
}

static void csv_row(FILE *f, const struct report *rep, const struct pstats *p,
		    const struct flagset *fl)
{
	double d = pstats_duration_s(p), cpu = 0;
	int has_cpu = fig_cpu_pct(p, &cpu);
	struct dev_fig dev;
	unsigned int k;
	char flags[REPORT_FLAGS_MAX * 24] = "";
	size_t l = 0;

	csv_str(f, p->name);
	if (p != &rep->total)		/* the total row has no index: it is not a phase */
		fprintf(f, ",%u", p->index);
	else
		fputc(',', f);
	fprintf(f, ",%.6f,%.6f,%" PRIu64 ",%.3f,%" PRIu64 ",%" PRIu64 ",%.3f,%.3f,%" PRIu64
		",%" PRIu64 ",%.3f,%.3f,%" PRIu64 ",%.3f,%.2f,%" PRIu64 ",%.3f,",
		fig_start_s(rep, p), d, p->ops, fig_rate(p->ops, d), p->rd.ops, p->rd.bytes,
		fig_mbps(p->rd.bytes, d), fig_rate(p->rd.ops, d), p->wr.ops, p->wr.bytes,
		fig_mbps(p->wr.bytes, d), fig_rate(p->wr.ops, d), p->seeks, fig_rate(p->seeks, d),
		fig_seq_pct(p), p->fsyncs, fig_rate(p->fsyncs, d));
	if (has_cpu)
		fprintf(f, "%.2f", cpu);
	fprintf(f, ",%.3f,%" PRIu64 ",%u,%.3f,%.3f,%.3f", mean_inflight(p), p->max_inflight,
		pstats_threads(p), p99_us(p, IOTAP_OP_READ), p99_us(p, IOTAP_OP_WRITE),
		fig_rate(p->ops - p->data_ops - p->fsyncs, d));
	if (fig_device(p, &dev)) {
		fprintf(f, ",%.3f,%.3f,%.1f,%.2f,", dev.rd_mbps, dev.wr_mbps, dev.iops,
			dev.util_pct);
		if (dev.fs_unseen_pct >= 0)
			fprintf(f, "%.2f", dev.fs_unseen_pct);
	} else {
		fprintf(f, ",,,,,");
	}
	/* flag keywords only: the text is in --json and the table */
	for (k = 0; fl && k < fl->n; k++) {
		const char *colon = strchr(fl->text[k], ':');
		int kl = colon ? (int)(colon - fl->text[k]) : (int)strlen(fl->text[k]);

		l += (size_t)snprintf(flags + l, sizeof(flags) - l, "%s%.*s", k ? " " : "", kl,
				      fl->text[k]);
		if (l >= sizeof(flags))
			break;
	}
	fputc(',', f);
	csv_str(f, flags);
	fputc('\n', f);
}

void report_print_csv(const struct report *rep, FILE *f)
{
	unsigned int i;

	fprintf(f, "name,index,start_s,duration_s,ops,ops_per_s,read_ops,read_bytes,read_mb_per_s,"
		   "read_iops,write_ops,write_bytes,write_mb_per_s,write_iops,seeks,seeks_per_s,"
		   "sequential_pct,fsyncs,fsyncs_per_s,cpu_pct,mean_inflight,max_inflight,threads,"
		   "read_p99_us,write_p99_us,meta_ops_per_s,dev_read_mb_per_s,dev_write_mb_per_s,"
		   "dev_iops,dev_util_pct,fs_reads_not_seen_pct,flags\n");
	for (i = 0; i < rep->nphases; i++)
		csv_row(f, rep, &rep->phases[i], &rep->flags[i]);
	csv_row(f, rep, &rep->total, &rep->tflags);
}

/* --- JSON -------------------------------------------------------------- */

json_object *report_jnum(double v, int decimals)
{
	char buf[64];

	if (!isfinite(v))
		return NULL;
	snprintf(buf, sizeof(buf), "%.*f", decimals, v);
	return json_object_new_double_s(v, buf);
}

static json_object *jdir(const struct dir_stats *d, double secs)
{
	json_object *o = json_object_new_object(), *h = json_object_new_object();
	unsigned int i;
	char key[32];

	json_object_object_add(o, "ops", json_object_new_uint64(d->ops));
	json_object_object_add(o, "bytes", json_object_new_uint64(d->bytes));
	json_object_object_add(o, "mb_per_s", report_jnum(fig_mbps(d->bytes, secs), 3));
	json_object_object_add(o, "iops", report_jnum(fig_rate(d->ops, secs), 3));
	json_object_object_add(o, "errors", json_object_new_uint64(d->errors));
	for (i = 0; i < SIZE_BUCKETS; i++) {
		if (!d->size_hist[i])
			continue;
		/* key: the bucket's upper bound in bytes; sizes in (bound/2, bound] */
		snprintf(key, sizeof(key), "%" PRIu64, (uint64_t)1 << i);
		json_object_object_add(h, key, json_object_new_uint64(d->size_hist[i]));
	}
	json_object_object_add(o, "size_hist", h);
	json_object_object_add(o, "typical_size", json_object_new_uint64(dir_typical_size(d)));
	return o;
}

json_object *report_json_phase(const struct report *rep, const struct pstats *p,
			       const struct flagset *fl)
{
	json_object *o = json_object_new_object(), *meta = json_object_new_object();
	json_object *lat = json_object_new_object(), *flags = json_object_new_array();
	json_object *sh = json_object_new_object(), *conc = json_object_new_object();
	double d = pstats_duration_s(p), cpu;
	struct dev_fig dev;
	struct cpu_fig cf;
	unsigned int op, i;
	char key[32];

	json_object_object_add(o, "name", json_object_new_string(p->name));
	json_object_object_add(o, "index", json_object_new_int((int)p->index));
	json_object_object_add(o, "start_s", report_jnum(fig_start_s(rep, p), 6));
	json_object_object_add(o, "duration_s", report_jnum(d, 6));
	json_object_object_add(o, "ops", json_object_new_uint64(p->ops));
	json_object_object_add(o, "ops_per_s", report_jnum(fig_rate(p->ops, d), 3));
	json_object_object_add(o, "read", jdir(&p->rd, d));
	json_object_object_add(o, "write", jdir(&p->wr, d));
	json_object_object_add(o, "seeks", json_object_new_uint64(p->seeks));
	json_object_object_add(o, "seeks_per_s", report_jnum(fig_rate(p->seeks, d), 3));
	json_object_object_add(o, "sequential_pct", report_jnum(fig_seq_pct(p), 2));
	for (i = 0; i < SEEK_BUCKETS; i++) {
		if (!p->seek_hist[i])
			continue;
		/* key: the bucket's upper bound in bytes; |distance| in [bound/2, bound) */
		snprintf(key, sizeof(key), "%" PRIu64, i < 64 ? (uint64_t)1 << i : UINT64_MAX);
		json_object_object_add(sh, key, json_object_new_uint64(p->seek_hist[i]));
	}
	json_object_object_add(o, "seek_hist", sh);
	json_object_object_add(o, "seeks_backward", json_object_new_uint64(p->seek_back));
	json_object_object_add(o, "rewrites", json_object_new_uint64(p->rewrites));
	for (op = 0; op < IOTAP_OP_MAX; op++) {
		json_object *m;

		if (!p->op_count[op] || !pstats_is_meta_op(op))
			continue;
		m = json_object_new_object();
		json_object_object_add(m, "ops", json_object_new_uint64(p->op_count[op]));
		json_object_object_add(m, "ops_per_s", report_jnum(fig_rate(p->op_count[op], d), 3));
		json_object_object_add(m, "errors", json_object_new_uint64(p->op_errors[op]));
		json_object_object_add(meta, iotap_trace_op_name(op), m);
	}
	json_object_object_add(o, "meta", meta);
	json_object_object_add(o, "fsyncs", json_object_new_uint64(p->fsyncs));
	json_object_object_add(o, "fsyncs_per_s", report_jnum(fig_rate(p->fsyncs, d), 3));
	for (op = 0; op < IOTAP_OP_MAX; op++) {
		const struct iotap_hist *h = p->lat[op];
		json_object *l;

		if (!h || !h->n)
			continue;
		l = json_object_new_object();
		json_object_object_add(l, "count", json_object_new_uint64(h->n));
		json_object_object_add(l, "mean", report_jnum((double)h->sum / h->n / 1e3, 3));
		json_object_object_add(l, "p50", report_jnum(iotap_hist_quantile(h, 0.50) / 1e3, 3));
		json_object_object_add(l, "p90", report_jnum(iotap_hist_quantile(h, 0.90) / 1e3, 3));
		json_object_object_add(l, "p99", report_jnum(iotap_hist_quantile(h, 0.99) / 1e3, 3));
		json_object_object_add(l, "p999", report_jnum(iotap_hist_quantile(h, 0.999) / 1e3, 3));
		json_object_object_add(l, "max", report_jnum(h->max / 1e3, 3));
		json_object_object_add(l, "errors", json_object_new_uint64(p->op_errors[op]));
		json_object_object_add(lat, iotap_trace_op_name(op), l);
	}
	json_object_object_add(o, "latency_us", lat);
	json_object_object_add(o, "cpu_pct", fig_cpu_pct(p, &cpu) ? report_jnum(cpu, 2) : NULL);
	if (fig_cpu(p, &cf)) {
		json_object *c = json_object_new_object();

		json_object_object_add(c, "workload_pct",
				       cf.has_mark ? report_jnum(cf.mark_pct, 2) : NULL);
		json_object_object_add(c, "system_pct",
				       cf.has_sample ? report_jnum(cf.system_pct, 2) : NULL);
		json_object_object_add(c, "iowait_pct",
				       cf.has_sample ? report_jnum(cf.iowait_pct, 2) : NULL);
		json_object_object_add(c, "recorder_pct",
				       cf.has_sample ? report_jnum(cf.daemon_pct, 2) : NULL);
		json_object_object_add(o, "cpu", c);
	} else {
		json_object_object_add(o, "cpu", NULL);
	}
	json_object_object_add(conc, "mean_inflight", report_jnum(mean_inflight(p), 3));
	json_object_object_add(conc, "max_inflight", json_object_new_uint64(p->max_inflight));
	json_object_object_add(conc, "threads", json_object_new_int((int)pstats_threads(p)));
	json_object_object_add(conc, "data_threads",
			       json_object_new_int((int)pstats_data_threads(p)));
	json_object_object_add(o, "concurrency", conc);
	if (fig_device(p, &dev)) {
		json_object *dv = json_object_new_object();

		json_object_object_add(dv, "read_mb_per_s", report_jnum(dev.rd_mbps, 3));
		json_object_object_add(dv, "write_mb_per_s", report_jnum(dev.wr_mbps, 3));
		json_object_object_add(dv, "iops", report_jnum(dev.iops, 3));
		json_object_object_add(dv, "util_pct", report_jnum(dev.util_pct, 2));
		json_object_object_add(dv, "queue_depth", report_jnum(dev.queue, 3));
		json_object_object_add(dv, "read_iops", report_jnum(dev.rd_iops, 3));
		json_object_object_add(dv, "write_iops", report_jnum(dev.wr_iops, 3));
		json_object_object_add(dv, "fs_reads_not_seen_pct",
				       dev.fs_unseen_pct >= 0 ? report_jnum(dev.fs_unseen_pct, 2) : NULL);
		json_object_object_add(o, "device", dv);
	} else {
		json_object_object_add(o, "device", NULL);
	}
	for (i = 0; fl && i < fl->n; i++)
		json_object_array_add(flags, json_object_new_string(fl->text[i]));
	json_object_object_add(o, "flags", flags);
	return o;
}

int report_print_json(const struct report *rep, FILE *f)
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
	json_object_object_add(t, "start_realtime", report_jnum((double)h->real_base_ns / 1e9, 6));
	json_object_object_add(t, "duration_s", report_jnum(pstats_duration_s(&rep->total), 6));
	json_object_object_add(t, "records", json_object_new_uint64(rep->rs.records));
	json_object_object_add(t, "lost_records", json_object_new_uint64(rep->rs.lost_records));
	json_object_object_add(t, "complete", json_object_new_boolean(rep->rs.has_end));
	json_object_object_add(t, "damaged_chunks", json_object_new_uint64(rep->rs.chunks_bad));
	json_object_object_add(t, "phase_source", json_object_new_string(rep->phase_source));
	json_object_object_add(t, "markers", json_object_new_uint64(rep->markers));
	json_object_object_add(t, "host", h->host ? json_object_new_string(h->host) : NULL);
	json_object_object_add(t, "workload",
			       h->workload ? json_object_new_string(h->workload) : NULL);
	json_object_object_add(t, "bin_s", report_jnum((double)rep->series.width / 1e9, 3));
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
