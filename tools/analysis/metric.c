// SPDX-License-Identifier: MIT
/*
 * metric.c - a phase's figures, and the one table of them every output reads
 *
 * A figure is computed here once (fig_*) and named once, as a row of
 * report_metrics[]: its CSV column and compare key, its JSON member, its
 * label, decimals for people (the text table, compare) and for scripts
 * (CSV, JSON), and its getter. The text table, CSV, JSON, the HTML phase
 * table and compare (text, CSV, JSON, HTML) walk the table, so a new
 * column is one row.
 *
 * The rows are in the CSV's and JSON's order, which are contracts (add,
 * never rename or reorder: issue 3): a new row goes at the end. The
 * side-by-side views (compare, the HTML phase table) order their rows by
 * .side, rows without one after the others. A few figures have two rows
 * because two outputs have long printed them under different names or
 * decimals (dev_iops/device.iops, dev_util_pct/device_util_pct).
 */
#include <inttypes.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "analysis_i.h"

/* a getter has the table's signature whether it needs the report, or the flags, or not */
#pragma GCC diagnostic ignored "-Wunused-parameter"

/* --- derived figures ----------------------------------------------------- */

double fig_rate(uint64_t n, double secs)
{
	return secs > 0 ? (double)n / secs : 0.0;
}

double fig_mbps(uint64_t bytes, double secs)
{
	return secs > 0 ? (double)bytes / 1e6 / secs : 0.0;
}

double fig_seq_pct(const struct iotap_pstats *p)
{
	return p->data_ops ? 100.0 * (double)(p->data_ops - p->seeks) / (double)p->data_ops : 0.0;
}

double fig_p99_us(const struct iotap_pstats *p, unsigned int op)
{
	return p->lat[op] && p->lat[op]->n ? iotap_hist_quantile(p->lat[op], 0.99) / 1e3 : NAN;
}

double fig_start_s(const struct iotap_report *rep, const struct iotap_pstats *p)
{
	return p->t_begin >= rep->t0 ? (double)(p->t_begin - rep->t0) / 1e9 : 0.0;
}

double fig_inflight(const struct iotap_pstats *p)
{
	double d = pstats_duration_s(p);

	return d > 0 ? (double)p->busy_ns / 1e9 / d : 0.0;
}

double fig_meta_rate(const struct iotap_pstats *p)
{
	return fig_rate(p->ops - p->data_ops - p->fsyncs, pstats_duration_s(p));
}

int fig_too_short(const struct iotap_pstats *p)
{
	return p->ops && pstats_duration_s(p) < REPORT_MIN_TIMED_S;
}

static int sample_span(const struct iotap_pstats *p, const struct iotap_trace_sample **a,
		       const struct iotap_trace_sample **b, double *dt)
{
	if (!p->smp_first.valid || !p->smp_last.valid || p->smp_last.t_ns <= p->smp_first.t_ns)
		return 0;
	*a = &p->smp_first.s;
	*b = &p->smp_last.s;
	*dt = (double)(p->smp_last.t_ns - p->smp_first.t_ns) / 1e9;
	return 1;
}

int fig_cpu(const struct iotap_pstats *p, struct cpu_fig *c)
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

int fig_cpu_pct(const struct iotap_pstats *p, double *out)
{
	struct cpu_fig c;

	if (!fig_cpu(p, &c))
		return 0;
	*out = c.has_mark ? c.mark_pct : c.system_pct;
	return 1;
}

int fig_device(const struct iotap_pstats *p, struct dev_fig *f)
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

/* --- getters: NAN where the phase has no such figure --------------------- */

#define D(p)	pstats_duration_s(p)

static double g_start(const struct iotap_report *rep, const struct iotap_pstats *p)
{
	return fig_start_s(rep, p);
}

static double g_dur(const struct iotap_report *rep, const struct iotap_pstats *p) { return D(p); }
static double g_ops(const struct iotap_report *rep,
		    const struct iotap_pstats *p) { return (double)p->ops; }
static double g_ops_s(const struct iotap_report *rep, const struct iotap_pstats *p)
{
	return fig_rate(p->ops, D(p));
}

/* one direction's figures: @d is &p->rd or &p->wr */
#define DIR_GETTERS(X, d)								\
static double g_##X##_ops(const struct iotap_report *rep, const struct iotap_pstats *p)		\
{ return (double)p->d.ops; }								\
static double g_##X##_bytes(const struct iotap_report *rep, const struct iotap_pstats *p)		\
{ return (double)p->d.bytes; }								\
static double g_##X##_mbps(const struct iotap_report *rep, const struct iotap_pstats *p)		\
{ return fig_mbps(p->d.bytes, D(p)); }							\
static double g_##X##_kibps(const struct iotap_report *rep, const struct iotap_pstats *p)		\
{ return D(p) > 0 ? (double)p->d.bytes / 1024 / D(p) : 0; }				\
static double g_##X##_iops(const struct iotap_report *rep, const struct iotap_pstats *p)		\
{ return fig_rate(p->d.ops, D(p)); }							\
static double g_##X##_errors(const struct iotap_report *rep, const struct iotap_pstats *p)		\
{ return (double)p->d.errors; }								\
static double g_##X##_typical(const struct iotap_report *rep, const struct iotap_pstats *p)		\
{ return (double)dir_typical_size(&p->d); }						\
static json_object *j_##X##_hist(const struct iotap_report *rep, const struct iotap_pstats *p,	\
				 const struct iotap_flagset *fl)				\
{ return size_hist_json(&p->d); }

/* key: a bucket's upper bound in bytes; sizes in (bound/2, bound] */
static json_object *size_hist_json(const struct iotap_dir_stats *d)
{
	json_object *h = json_object_new_object();
	unsigned int i;
	char key[32];

	for (i = 0; i < IOTAP_SIZE_BUCKETS; i++) {
		if (!d->size_hist[i])
			continue;
		snprintf(key, sizeof(key), "%" PRIu64, (uint64_t)1 << i);
		json_object_object_add(h, key, json_object_new_uint64(d->size_hist[i]));
	}
	return h;
}

DIR_GETTERS(rd, rd)
DIR_GETTERS(wr, wr)

static double g_iops(const struct iotap_report *rep, const struct iotap_pstats *p)
{
	return fig_rate(p->rd.ops + p->wr.ops, D(p));
}

static double g_seeks(const struct iotap_report *rep, const struct iotap_pstats *p)
{
	return (double)p->seeks;
}

static double g_seeks_s(const struct iotap_report *rep, const struct iotap_pstats *p)
{
	return fig_rate(p->seeks, D(p));
}

static double g_seq(const struct iotap_report *rep, const struct iotap_pstats *p)
{
	return p->data_ops ? fig_seq_pct(p) : NAN;
}

/* key: a bucket's upper bound in bytes; |distance| in [bound/2, bound) */
static json_object *j_seek_hist(const struct iotap_report *rep, const struct iotap_pstats *p,
				const struct iotap_flagset *fl)
{
	json_object *h = json_object_new_object();
	unsigned int i;
	char key[32];

	for (i = 0; i < IOTAP_SEEK_BUCKETS; i++) {
		if (!p->seek_hist[i])
			continue;
		snprintf(key, sizeof(key), "%" PRIu64, i < 64 ? (uint64_t)1 << i : UINT64_MAX);
		json_object_object_add(h, key, json_object_new_uint64(p->seek_hist[i]));
	}
	return h;
}

static double g_seek_back(const struct iotap_report *rep, const struct iotap_pstats *p)
{
	return (double)p->seek_back;
}

static double g_rewrites(const struct iotap_report *rep, const struct iotap_pstats *p)
{
	return (double)p->rewrites;
}

/* each metadata op type: its count, rate and errors */
static json_object *j_meta(const struct iotap_report *rep, const struct iotap_pstats *p,
			   const struct iotap_flagset *fl)
{
	json_object *meta = json_object_new_object();
	unsigned int op;

	for (op = 0; op < IOTAP_OP_MAX; op++) {
		json_object *m;

		if (!p->op_count[op] || !pstats_is_meta_op(op))
			continue;
		m = json_object_new_object();
		json_object_object_add(m, "ops", json_object_new_uint64(p->op_count[op]));
		json_object_object_add(m, "ops_per_s",
				       iotap_report_jnum(fig_rate(p->op_count[op], D(p)), 3));
		json_object_object_add(m, "errors", json_object_new_uint64(p->op_errors[op]));
		json_object_object_add(meta, iotap_trace_op_name(op), m);
	}
	return meta;
}

static double g_fsyncs(const struct iotap_report *rep, const struct iotap_pstats *p)
{
	return (double)p->fsyncs;
}

static double g_fsyncs_s(const struct iotap_report *rep, const struct iotap_pstats *p)
{
	return fig_rate(p->fsyncs, D(p));
}

/* each op type's latency distribution, microseconds */
static json_object *j_latency(const struct iotap_report *rep, const struct iotap_pstats *p,
			      const struct iotap_flagset *fl)
{
	json_object *lat = json_object_new_object();
	unsigned int op;

	for (op = 0; op < IOTAP_OP_MAX; op++) {
		const struct iotap_hist *h = p->lat[op];
		json_object *l;

		if (!h || !h->n)
			continue;
		l = json_object_new_object();
		json_object_object_add(l, "count", json_object_new_uint64(h->n));
		json_object_object_add(l, "mean", iotap_report_jnum((double)h->sum / h->n / 1e3, 3));
		json_object_object_add(l, "p50", iotap_report_jnum(iotap_hist_quantile(h, 0.50) / 1e3, 3));
		json_object_object_add(l, "p90", iotap_report_jnum(iotap_hist_quantile(h, 0.90) / 1e3, 3));
		json_object_object_add(l, "p99", iotap_report_jnum(iotap_hist_quantile(h, 0.99) / 1e3, 3));
		json_object_object_add(l, "p999", iotap_report_jnum(iotap_hist_quantile(h, 0.999) / 1e3, 3));
		json_object_object_add(l, "max", iotap_report_jnum(h->max / 1e3, 3));
		json_object_object_add(l, "errors", json_object_new_uint64(p->op_errors[op]));
		json_object_object_add(lat, iotap_trace_op_name(op), l);
	}
	return lat;
}

static double g_cpu(const struct iotap_report *rep, const struct iotap_pstats *p)
{
	double v;

	return fig_cpu_pct(p, &v) ? v : NAN;
}

/* the CPU figures apart; null when none is known */
static json_object *j_cpu(const struct iotap_report *rep, const struct iotap_pstats *p,
			  const struct iotap_flagset *fl)
{
	json_object *c;
	struct cpu_fig cf;

	if (!fig_cpu(p, &cf))
		return NULL;
	c = json_object_new_object();
	json_object_object_add(c, "workload_pct", cf.has_mark ? iotap_report_jnum(cf.mark_pct, 2) : NULL);
	json_object_object_add(c, "system_pct",
			       cf.has_sample ? iotap_report_jnum(cf.system_pct, 2) : NULL);
	json_object_object_add(c, "iowait_pct",
			       cf.has_sample ? iotap_report_jnum(cf.iowait_pct, 2) : NULL);
	json_object_object_add(c, "recorder_pct",
			       cf.has_sample ? iotap_report_jnum(cf.daemon_pct, 2) : NULL);
	return c;
}

static double g_inflight(const struct iotap_report *rep, const struct iotap_pstats *p)
{
	return fig_inflight(p);
}

static double g_max_inflight(const struct iotap_report *rep, const struct iotap_pstats *p)
{
	return (double)p->max_inflight;
}

static double g_threads(const struct iotap_report *rep, const struct iotap_pstats *p)
{
	return pstats_threads(p);
}

static double g_data_threads(const struct iotap_report *rep, const struct iotap_pstats *p)
{
	return pstats_data_threads(p);
}

static double g_rp99(const struct iotap_report *rep, const struct iotap_pstats *p)
{
	return fig_p99_us(p, IOTAP_OP_READ);
}

static double g_wp99(const struct iotap_report *rep, const struct iotap_pstats *p)
{
	return fig_p99_us(p, IOTAP_OP_WRITE);
}

static double g_meta_s(const struct iotap_report *rep, const struct iotap_pstats *p)
{
	return fig_meta_rate(p);
}

/* the backing device's figures: NAN where the trace has no device samples */
#define DEV_GETTER(name, expr)								\
static double g_dev_##name(const struct iotap_report *rep, const struct iotap_pstats *p)		\
{											\
	struct dev_fig dev;								\
											\
	return fig_device(p, &dev) ? (expr) : NAN;					\
}

DEV_GETTER(rd, dev.rd_mbps)
DEV_GETTER(wr, dev.wr_mbps)
DEV_GETTER(mbps, dev.rd_mbps + dev.wr_mbps)
DEV_GETTER(kibps, (dev.rd_mbps + dev.wr_mbps) * 1e6 / 1024)
DEV_GETTER(iops, dev.iops)
DEV_GETTER(util, dev.util_pct)
DEV_GETTER(queue, dev.queue)
DEV_GETTER(rd_iops, dev.rd_iops)
DEV_GETTER(wr_iops, dev.wr_iops)
DEV_GETTER(unseen, dev.fs_unseen_pct >= 0 ? dev.fs_unseen_pct : NAN)

/* CSV: the flags' keywords only (the text is in JSON and the table) */
static const char *s_flags(const struct iotap_pstats *p, const struct iotap_flagset *fl, char *buf,
			   size_t len)
{
	unsigned int k;
	size_t l = 0;

	buf[0] = '\0';
	for (k = 0; fl && k < fl->n; k++) {
		const char *colon = strchr(fl->text[k], ':');
		int kl = colon ? (int)(colon - fl->text[k]) : (int)strlen(fl->text[k]);

		l += (size_t)snprintf(buf + l, len - l, "%s%.*s", k ? " " : "", kl, fl->text[k]);
		if (l >= len)
			break;
	}
	return buf;
}

static json_object *j_flags(const struct iotap_report *rep, const struct iotap_pstats *p,
			    const struct iotap_flagset *fl)
{
	json_object *a = json_object_new_array();
	unsigned int i;

	for (i = 0; fl && i < fl->n; i++)
		json_object_array_add(a, json_object_new_string(fl->text[i]));
	return a;
}

/* --- the table ----------------------------------------------------------- */

#define MO_PEOPLE	(MO_TEXT | MO_HTML | MO_CMP)
#define MO_SCRIPTS	(MO_CSV | MO_JSON)

const struct report_metric report_metrics[] = {
	{ .key = "start_s", .get = g_start, .dec = 3, .sdec = 6, .hdec = 2, .side = 1,
	  .out = MO_SCRIPTS | MO_TEXT | MO_HTML, .head = "start_s", .width = 9,
	  .th = "<th>start s</th>" },
	{ .key = "duration_s", .label = "secs", .get = g_dur, .dec = 3, .sdec = 6, .hdec = 2,
	  .side = 2, .out = MO_SCRIPTS | MO_PEOPLE | MO_ALWAYS, .head = "secs", .width = 9,
	  .th = "<th>secs</th>" },
	{ .key = "ops", .get = g_ops, .out = MO_SCRIPTS | MO_TEXT, .head = "ops", .width = 11 },
	{ .key = "ops_per_s", .label = "ops/s", .get = g_ops_s, .dec = 1, .sdec = 3, .side = 3,
	  .out = MO_RATE | MO_SCRIPTS | MO_PEOPLE, .head = "ops/s", .width = 10, .th = "<th>ops/s</th>" },

	{ .key = "read_ops", .json = "read.ops", .get = g_rd_ops, .out = MO_SCRIPTS },
	{ .key = "read_bytes", .json = "read.bytes", .get = g_rd_bytes, .out = MO_SCRIPTS },
	{ .key = "read_mb_per_s", .json = "read.mb_per_s", .label = "read MB/s",
	  .get = g_rd_mbps, .dec = 2, .sdec = 3, .hdec = 2, .side = 4,
	  .out = MO_RATE | MO_SCRIPTS | MO_TEXT_MB | MO_HTML | MO_CMP, .head = "rd_MB/s", .width = 9,
	  .th = "<th class=\"r\">read MB/s</th>" },
	{ .key = "read_kib_per_s", .get = g_rd_kibps, .out = MO_RATE | MO_TEXT_K, .head = "rd_K/sec",
	  .width = 10 },
	{ .key = "read_iops", .json = "read.iops", .label = "read IOPS", .get = g_rd_iops,
	  .dec = 1, .sdec = 3, .side = 6, .out = MO_RATE | MO_SCRIPTS | MO_CMP },
	{ .key = "read_errors", .json = "read.errors", .get = g_rd_errors, .out = MO_JSON },
	{ .key = "read_size_hist", .json = "read.size_hist", .jget = j_rd_hist, .out = MO_JSON },
	{ .key = "read_typical_size", .json = "read.typical_size", .get = g_rd_typical,
	  .out = MO_JSON },

	{ .key = "write_ops", .json = "write.ops", .get = g_wr_ops, .out = MO_SCRIPTS },
	{ .key = "write_bytes", .json = "write.bytes", .get = g_wr_bytes, .out = MO_SCRIPTS },
	{ .key = "write_mb_per_s", .json = "write.mb_per_s", .label = "write MB/s",
	  .get = g_wr_mbps, .dec = 2, .sdec = 3, .hdec = 2, .side = 5,
	  .out = MO_RATE | MO_SCRIPTS | MO_TEXT_MB | MO_HTML | MO_CMP, .head = "wr_MB/s", .width = 9,
	  .th = "<th class=\"w\">write MB/s</th>" },
	{ .key = "write_kib_per_s", .get = g_wr_kibps, .out = MO_RATE | MO_TEXT_K, .head = "wr_K/sec",
	  .width = 10 },
	{ .key = "write_iops", .json = "write.iops", .label = "write IOPS", .get = g_wr_iops,
	  .dec = 1, .sdec = 3, .side = 7, .out = MO_RATE | MO_SCRIPTS | MO_CMP },
	{ .key = "write_errors", .json = "write.errors", .get = g_wr_errors, .out = MO_JSON },
	{ .key = "write_size_hist", .json = "write.size_hist", .jget = j_wr_hist,
	  .out = MO_JSON },
	{ .key = "write_typical_size", .json = "write.typical_size", .get = g_wr_typical,
	  .out = MO_JSON },
	{ .key = "iops", .get = g_iops, .hdec = 0, .side = 8, .out = MO_RATE | MO_HTML,
	  .th = "<th>IOPS</th>" },

	{ .key = "seeks", .get = g_seeks, .out = MO_SCRIPTS },
	{ .key = "seeks_per_s", .label = "seeks/s", .get = g_seeks_s, .dec = 1, .sdec = 3,
	  .hdec = 1, .side = 9, .out = MO_RATE | MO_SCRIPTS | MO_PEOPLE, .head = "seeks/s", .width = 9,
	  .th = "<th>seeks/s</th>" },
	{ .key = "sequential_pct", .label = "sequential %", .get = g_seq, .dec = 1, .sdec = 2,
	  .hdec = 1, .side = 10, .out = MO_SCRIPTS | MO_PEOPLE | MO_ZERO, .head = "seq%",
	  .width = 5, .th = "<th>seq %</th>" },
	{ .key = "seek_hist", .jget = j_seek_hist, .out = MO_JSON },
	{ .key = "seeks_backward", .get = g_seek_back, .out = MO_JSON },
	{ .key = "rewrites", .get = g_rewrites, .out = MO_JSON },
	{ .key = "meta", .jget = j_meta, .out = MO_JSON },
	{ .key = "fsyncs", .get = g_fsyncs, .out = MO_SCRIPTS },
	{ .key = "fsyncs_per_s", .label = "fsyncs/s", .get = g_fsyncs_s, .dec = 1, .sdec = 3,
	  .hdec = 1, .side = 11, .out = MO_RATE | MO_SCRIPTS | MO_PEOPLE, .head = "fsync/s", .width = 8,
	  .th = "<th>fsync/s</th>" },
	{ .key = "latency_us", .jget = j_latency, .out = MO_JSON },

	{ .key = "cpu_pct", .label = "cpu %", .get = g_cpu, .dec = 1, .sdec = 2, .hdec = 1,
	  .side = 16, .out = MO_SCRIPTS | MO_PEOPLE, .head = "cpu%", .width = 6,
	  .th = "<th>cpu %</th>" },
	{ .key = "cpu", .jget = j_cpu, .out = MO_JSON },
	{ .key = "mean_inflight", .json = "concurrency.mean_inflight", .label = "ops in flight",
	  .get = g_inflight, .dec = 2, .sdec = 3, .hdec = 2, .side = 15,
	  .out = MO_SCRIPTS | MO_HTML | MO_CMP, .th = "<th>in flight</th>" },
	{ .key = "max_inflight", .json = "concurrency.max_inflight", .get = g_max_inflight,
	  .out = MO_SCRIPTS },
	{ .key = "threads", .json = "concurrency.threads", .get = g_threads, .out = MO_SCRIPTS },
	{ .key = "data_threads", .json = "concurrency.data_threads", .get = g_data_threads,
	  .out = MO_JSON },
	{ .key = "read_p99_us", .label = "read p99 us", .get = g_rp99, .dec = 1, .sdec = 3,
	  .hdec = 1, .side = 13, .out = MO_CSV | MO_HTML | MO_CMP | MO_ZERO,
	  .th = "<th>read p99 us</th>" },
	{ .key = "write_p99_us", .label = "write p99 us", .get = g_wp99, .dec = 1, .sdec = 3,
	  .hdec = 1, .side = 14, .out = MO_CSV | MO_HTML | MO_CMP | MO_ZERO,
	  .th = "<th>write p99 us</th>" },
	{ .key = "meta_ops_per_s", .label = "metadata ops/s", .get = g_meta_s, .dec = 1,
	  .sdec = 3, .side = 12, .out = MO_RATE | MO_CSV | MO_CMP },

	{ .key = "dev_read_mb_per_s", .json = "device.read_mb_per_s", .get = g_dev_rd, .sdec = 3,
	  .out = MO_SCRIPTS | MO_GATE },
	{ .key = "dev_write_mb_per_s", .json = "device.write_mb_per_s", .get = g_dev_wr,
	  .sdec = 3, .out = MO_SCRIPTS },
	{ .key = "device_mb_per_s", .label = "device MB/s", .get = g_dev_mbps, .dec = 2,
	  .hdec = 2, .side = 17, .out = MO_RATE | MO_TEXT_MB | MO_HTML | MO_CMP, .head = "dev_MB/s",
	  .width = 9, .th = "<th>dev MB/s</th>" },
	{ .key = "device_kib_per_s", .get = g_dev_kibps, .out = MO_RATE | MO_TEXT_K, .head = "dev_K/s",
	  .width = 10 },
	{ .key = "dev_iops", .get = g_dev_iops, .sdec = 1, .out = MO_CSV },
	{ .key = "device_iops", .json = "device.iops", .get = g_dev_iops, .sdec = 3,
	  .out = MO_JSON },
	{ .key = "dev_util_pct", .json = "device.util_pct", .get = g_dev_util, .dec = 1,
	  .sdec = 2, .hdec = 1, .side = 18, .out = MO_SCRIPTS | MO_TEXT | MO_HTML,
	  .head = "util%", .width = 6, .th = "<th>util %</th>" },
	{ .key = "device_util_pct", .label = "device util %", .get = g_dev_util, .dec = 1,
	  .side = 18, .out = MO_CMP },
	{ .key = "device_queue_depth", .json = "device.queue_depth", .get = g_dev_queue,
	  .sdec = 3, .out = MO_JSON },
	{ .key = "device_read_iops", .json = "device.read_iops", .get = g_dev_rd_iops,
	  .sdec = 3, .out = MO_JSON },
	{ .key = "device_write_iops", .json = "device.write_iops", .get = g_dev_wr_iops,
	  .sdec = 3, .out = MO_JSON },
	{ .key = "fs_reads_not_seen_pct", .json = "device.fs_reads_not_seen_pct",
	  .get = g_dev_unseen, .sdec = 2, .hdec = 1, .side = 19, .out = MO_SCRIPTS | MO_HTML,
	  .th = "<th title=\"share of filesystem reads the device never saw\">unseen rd %</th>" },
	{ .key = "flags", .str = s_flags, .jget = j_flags, .out = MO_SCRIPTS },
};

#define NMETRICS	(sizeof(report_metrics) / sizeof(report_metrics[0]))
_Static_assert(NMETRICS <= METRIC_MAX, "METRIC_MAX is too small for report_metrics[]");

unsigned int metric_view(unsigned int out, const struct report_metric **list)
{
	unsigned int i, j, n = 0;

	for (i = 0; i < NMETRICS; i++) {
		const struct report_metric *m = &report_metrics[i];

		if (!(m->out & out))
			continue;
		/* the side-by-side views by .side, unnumbered rows last; stable */
		j = n++;
		if (out & (MO_HTML | MO_CMP))
			for (; j && (!list[j - 1]->side || list[j - 1]->side > m->side) && m->side;
			     j--)
				list[j] = list[j - 1];
		list[j] = m;
	}
	return n;
}

double metric_value(const struct report_metric *m, unsigned int out, const struct iotap_report *rep,
		    const struct iotap_pstats *p)
{
	double v = m->get ? m->get(rep, p) : NAN;

	return isnan(v) && (m->out & MO_ZERO) && (out & (MO_TEXT | MO_CSV | MO_JSON)) ? 0 : v;
}
