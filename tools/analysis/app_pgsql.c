// SPDX-License-Identifier: MIT
/*
 * app_pgsql.c - pgbench's and log_checkpoints' figures of a `run pgsql` trace
 *
 * From the run's APP records (FORMAT.md): each transaction (TXN: its
 * latency, STEADY when pgbench's "excluding warm-up" figures count it)
 * and the run's periods (SPAN init, warmup, steady: exact start and
 * length), so tps and latency are the run's own figures, computed the way
 * the run computes them.
 *
 * From the trace's ops and markers:
 *   - commit syncs: FSYNC ops (fdatasync under wal_sync_method=fdatasync)
 *     on WAL segment files (NAME: 24 hex digits) within the run's steady
 *     sync window: between the BEGIN and the end of its SPAN "commit",
 *     which the run writes holding WALWriteLock, the lock every WAL sync
 *     is made under, so the trace counts exactly the syncs the run does
 *     (fdatasyncs; full fsyncs of a WAL file are then a new segment's, and
 *     count only when there is no fdatasync: wal_sync_method=fsync);
 *   - a checkpoint: the thread that marks "checkpoint N write" is the
 *     checkpointer; its 8 KiB writes to relation files until "checkpoint N
 *     sync" are the buffers written (pg_xact and pg_logical are not
 *     shared buffers); its fsyncs of files that are neither WAL nor
 *     pg_control in the sync part are the files synced, the sync part
 *     ending with the last of them (what follows, the checkpoint record's
 *     flush and pg_control, is not log_checkpoints' sync time).
 *     A later writer also records each part's time as the run took it
 *     (APP SPAN "checkpoint N write"/"sync"), and that is what is printed:
 *     the run's and the report's figures are then the same numbers.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "app.h"
#include "analysis_i.h"
#include "svg.h"

#define SKIP_CONTROL	1	/* pg_control */
#define SKIP_NONREL	2	/* pg_xact, pg_clog, pg_logical and what is in them */

void app_pgsql_init(struct app_pgsql *p)
{
	memset(p, 0, sizeof(*p));
	iotap_map_init(&p->wal, 1);
	iotap_map_init(&p->skip, sizeof(int));
	p->cur = -1;
}

void app_pgsql_release(struct app_pgsql *p)
{
	iotap_hist_release(&p->lat);
	iotap_hist_release(&p->commit);
	iotap_hist_release(&p->commit_fsync);
	iotap_map_release(&p->wal);
	iotap_map_release(&p->skip);
	free(p->ck);
	memset(p, 0, sizeof(*p));
	p->cur = -1;
}

static int is_wal_name(const char *s, uint32_t len)
{
	uint32_t i;

	if (!s || len != 24)
		return 0;
	for (i = 0; i < len; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'A' && s[i] <= 'F')))
			return 0;
	return 1;
}

static int on_name(struct app_pgsql *p, const struct iotap_trace_rec *r)
{
	int *v, *parent = iotap_map_get(&p->skip, r->file2), flag = 0;
	void *w;

	if (is_wal_name(r->name, r->name_len))
		return iotap_map_put(&p->wal, r->file, &w) < 0 ? -ENOMEM : 0;
	if (r->name && !strcmp(r->name, "pg_control"))
		flag = SKIP_CONTROL;
	else if (r->name && (!strcmp(r->name, "pg_xact") || !strcmp(r->name, "pg_clog") ||
			     !strcmp(r->name, "pg_logical")))
		flag = SKIP_NONREL;
	else if (parent && (*parent & SKIP_NONREL))
		flag = SKIP_NONREL;
	if (!flag)
		return 0;
	if (iotap_map_put(&p->skip, r->file, (void **)&v) < 0)
		return -ENOMEM;
	*v |= flag;
	return 0;
}

static struct app_ckpt *ckpt_find(struct app_pgsql *p, unsigned int seq)
{
	unsigned int i;

	for (i = p->nck; i-- > 0;)
		if (p->ck[i].seq == seq)
			return &p->ck[i];
	return NULL;
}

static int on_phase(struct app_pgsql *p, const struct iotap_trace_rec *r)
{
	unsigned int seq;
	char part[8];
	struct app_ckpt *k;

	if (!r->name || sscanf(r->name, "checkpoint %u %7s", &seq, part) != 2)
		return 0;
	k = ckpt_find(p, seq);
	if (!strcmp(part, "write") && r->flags == IOTAP_PHASE_BEGIN && !k) {
		if (p->nck == p->cap) {
			unsigned int cap = p->cap ? 2 * p->cap : 16;
			struct app_ckpt *n = realloc(p->ck, cap * sizeof(*n));

			if (!n)
				return -ENOMEM;
			p->ck = n;
			p->cap = cap;
		}
		k = &p->ck[p->nck++];
		memset(k, 0, sizeof(*k));
		k->seq = seq;
		k->tid = r->tid;
		k->t_write = r->time_ns;
	} else if (k && !strcmp(part, "write") && r->flags == IOTAP_PHASE_BEGIN) {
		/* the write part resumes after an empty warmup/steady marker cut it */
		k->t_wend = 0;
	} else if (k && !strcmp(part, "sync")) {
		if (r->flags == IOTAP_PHASE_BEGIN && !k->t_sync)
			k->t_sync = r->time_ns;
		else if (r->flags == IOTAP_PHASE_BEGIN)
			;	/* resumed after an empty warmup/steady marker cut it */
		else if (r->tid == k->tid)
			k->t_end = r->time_ns;
		else
			/* the run's end cut the marker timeline; the checkpointer syncs on */
			k->t_end_other = r->time_ns;
	} else if (k && !strcmp(part, "write") && r->flags != IOTAP_PHASE_BEGIN && !k->t_sync) {
		/* the write part's END (with no sync part after it, the run stopped) */
		k->t_wend = r->time_ns;
	}
	return 0;
}

static void on_op(struct app_pgsql *p, const struct iotap_trace_rec *r)
{
	int is_wal = iotap_map_get(&p->wal, r->file) != NULL;
	int *skip = iotap_map_get(&p->skip, r->file);
	struct app_ckpt *k = p->nck ? &p->ck[p->nck - 1] : NULL;

	if (r->op == IOTAP_OP_FSYNC && is_wal && p->commit_on && r->time_ns >= p->commit_from &&
	    iotap_hist_add(r->flags & IOTAP_OPF_DATASYNC ? &p->commit : &p->commit_fsync,
			   r->dur_ns))
		p->commit_on = 0;	/* out of memory: the figure is then short, not wrong */
	if (!k || r->tid != k->tid || k->t_end || r->result < 0)
		return;
	if (!k->t_sync && !k->t_wend && r->op == IOTAP_OP_WRITE && r->length == 8192 && !is_wal && !skip)
		k->buffers++;
	if (k->t_sync && r->op == IOTAP_OP_FSYNC && !is_wal && !(skip && (*skip & SKIP_CONTROL))) {
		k->sync_files++;
		k->sync_sum_ns += r->dur_ns;
		if (r->dur_ns > k->sync_longest_ns)
			k->sync_longest_ns = r->dur_ns;
		k->last_sync_end = r->time_ns + r->dur_ns;
	}
}

static void on_app(struct app_pgsql *p, const struct iotap_trace_rec *r)
{
	struct app_span *s = NULL;

	if (iotap_trace_app_kind(r) == IOTAP_APP_TXN) {
		uint64_t lat = iotap_trace_app_dur_ns(r), lag = iotap_trace_app_txn_lag_ns(r);

		p->txns++;
		if (!(iotap_trace_app_flags(r) & IOTAP_APPF_STEADY))
			return;
		p->txns_steady++;
		iotap_hist_add(&p->lat, lat);
		p->lat_sumsq += (double)lat * (double)lat;
		if (lag) {
			p->lag_sum += lag;
			if (lag > p->lag_max)
				p->lag_max = lag;
		}
		p->lag_n++;
		return;
	}
	if (iotap_trace_app_kind(r) != IOTAP_APP_SPAN || !r->name)
		return;
	if (!strncmp(r->name, "checkpoint ", 11)) {
		/* a part's time as the run printed it (later writers) */
		unsigned int seq, i;
		char part[8];

		if (sscanf(r->name + 11, "%u %7s", &seq, part) != 2)
			return;
		for (i = p->nck; i-- > 0;) {
			if (p->ck[i].seq != seq)
				continue;
			if (!strcmp(part, "write"))
				p->ck[i].run_write_ns = iotap_trace_app_dur_ns(r);
			else if (!strcmp(part, "sync"))
				p->ck[i].run_sync_ns = iotap_trace_app_dur_ns(r);
			break;
		}
		return;
	}
	if (!strcmp(r->name, "commit")) {
		/* the run's own sync window, both ends written under WALWriteLock */
		p->commit_on = !!(iotap_trace_app_flags(r) & IOTAP_APPF_BEGIN);
		p->commit_from = iotap_trace_app_span_start_ns(r);
		return;
	}
	if (!strcmp(r->name, "init"))
		s = &p->init;
	else if (!strcmp(r->name, "warmup"))
		s = &p->warmup;
	else if (!strcmp(r->name, "steady"))
		s = &p->steady;
	if (!s)
		return;
	s->seen = 1;
	s->partial = !!(iotap_trace_app_flags(r) & IOTAP_APPF_PARTIAL);
	s->start_ns = iotap_trace_app_span_start_ns(r);
	s->dur_ns = iotap_trace_app_dur_ns(r);
	s->cpu_user_ns = iotap_trace_app_span_cpu_user_ns(r);
	s->cpu_sys_ns = iotap_trace_app_span_cpu_sys_ns(r);
}

int app_pgsql_feed(struct app_pgsql *p, const struct iotap_trace_rec *r)
{
	switch (r->type) {
	case IOTAP_REC_NAME:
		return on_name(p, r);
	case IOTAP_REC_PHASE:
		return on_phase(p, r);
	case IOTAP_REC_OP:
		on_op(p, r);
		return 0;
	case IOTAP_REC_APP:
		on_app(p, r);
		return 0;
	}
	return 0;
}

void app_pgsql_finish(struct app_pgsql *p)
{
	unsigned int i;

	/*
	 * fdatasync (the default wal_sync_method) is the commit's; the full
	 * fsyncs are then a new segment's (XLogFileInit). Without any
	 * fdatasync the method was fsync, and they all count.
	 */
	if (!p->commit.n && iotap_hist_merge(&p->commit, &p->commit_fsync))
		p->commit.n = 0;

	for (i = 0; i < p->nck; i++) {
		struct app_ckpt *k = &p->ck[i];

		if (!k->t_end && k->t_end_other)
			k->t_end = k->t_end_other;
		k->partial = !k->t_sync || !k->t_end;
	}
}

/* --- figures ------------------------------------------------------------------------------ */

static double secs(uint64_t ns)
{
	return (double)ns / 1e9;
}

/* As the run computes them (run_pgsql.c prints the same). */
static double tps_all(const struct app_pgsql *p)
{
	double span = secs(p->warmup.dur_ns) + secs(p->steady.dur_ns);

	return span > 0 ? (double)p->txns / span : 0;
}

static double tps_steady(const struct app_pgsql *p)
{
	double s = secs(p->steady.dur_ns);

	return s > 0 ? (double)p->lat.n / s : 0;
}

/* The run's own times where the trace has them, else the markers' and ops'. */
static double write_s(const struct app_ckpt *k)
{
	if (k->run_write_ns)
		return secs(k->run_write_ns);
	return k->t_sync ? secs(k->t_sync - k->t_write) :
	       k->t_wend ? secs(k->t_wend - k->t_write) : 0;
}

static double sync_s(const struct app_ckpt *k)
{
	if (k->run_sync_ns)
		return secs(k->run_sync_ns);
	return k->t_sync && k->sync_files ? secs(k->last_sync_end - k->t_sync) : 0;
}

static double ms(uint64_t ns)
{
	return (double)ns / 1e6;
}

static const double lat_q[] = { 0.5, 0.9, 0.95, 0.99, 0.999, 1.0 };
static const char *const lat_qname[] = { "p50", "p90", "p95", "p99", "p99.9", "max" };

void app_pgsql_print_text(const struct app_pgsql *p, FILE *f)
{
	unsigned int i;

	fprintf(f, "\napplication: PostgreSQL model (pgbench TPC-B); transactions from the run's "
		   "APP records, commit syncs and checkpoints from the trace's ops\n");
	fprintf(f, "  number of transactions actually processed: %" PRIu64 " (steady %" PRIu64
		   ")\n", p->txns, p->txns_steady);
	if (p->lat.n) {
		double m = (double)p->lat.sum / (double)p->lat.n;

		fprintf(f, "  latency average = %.3f ms\n  latency stddev = %.3f ms\n", m / 1e6,
			sqrt(fmax(0, p->lat_sumsq / (double)p->lat.n - m * m)) / 1e6);
		fprintf(f, "  latency percentiles:");
		for (i = 0; i < 6; i++)
			fprintf(f, " %s %.3f ms%s", lat_qname[i],
				ms(iotap_hist_quantile(&p->lat, lat_q[i])), i < 5 ? "," : "\n");
	}
	fprintf(f, "  tps = %.6f (including warm-up)\n  tps = %.6f (excluding warm-up)%s\n",
		tps_all(p), tps_steady(p), p->steady.partial || !p->steady.seen ? " [partial]" : "");
	if (p->commit.n)
		fprintf(f, "  commit (WAL sync, steady): %" PRIu64 " calls, p50 %.3f ms, p99 %.3f ms, "
			   "max %.3f ms\n", p->commit.n, ms(iotap_hist_quantile(&p->commit, 0.5)),
			ms(iotap_hist_quantile(&p->commit, 0.99)), ms(p->commit.max));
	if (p->steady.seen && p->txns_steady && (p->steady.cpu_user_ns || p->steady.cpu_sys_ns))
		fprintf(f, "  model CPU per transaction (steady, all roles): %.1f us user, %.1f us "
			   "system\n", (double)p->steady.cpu_user_ns / 1e3 / (double)p->txns_steady,
			(double)p->steady.cpu_sys_ns / 1e3 / (double)p->txns_steady);
	for (i = 0; i < p->nck; i++) {
		const struct app_ckpt *k = &p->ck[i];

		if (k->partial) {
			fprintf(f, "  checkpoint %u not complete: wrote %" PRIu64 " buffers; "
				   "write=%.3f s\n", k->seq, k->buffers, write_s(k));
			continue;
		}
		fprintf(f, "  checkpoint %u: wrote %" PRIu64 " buffers; write=%.3f s, sync=%.3f s; "
			   "sync files=%" PRIu64 ", longest=%.3f s, average=%.3f s\n", k->seq,
			k->buffers, write_s(k), sync_s(k), k->sync_files, secs(k->sync_longest_ns),
			k->sync_files ? secs(k->sync_sum_ns) / (double)k->sync_files : 0);
	}
}

/* The report page's part: pgbench's summary and the checkpoints, as the text has them. */
void app_pgsql_print_html(const struct app_pgsql *p, FILE *f)
{
	unsigned int i;

	fprintf(f, "<p class=\"note\">PostgreSQL model (pgbench TPC-B): transactions from the "
		   "run's APP records, commit syncs and checkpoints from the trace's ops.</p>\n"
		   "<table><tr><th class=\"l\">pgbench</th><th>value</th></tr>\n");
	fprintf(f, "<tr><td class=\"l\">transactions (steady)</td><td>%" PRIu64 " (%" PRIu64
		   ")</td></tr>\n", p->txns, p->txns_steady);
	fprintf(f, "<tr><td class=\"l\">tps (including warm-up)</td><td>%.6f</td></tr>\n"
		   "<tr><td class=\"l\">tps (excluding warm-up)</td><td>%.6f%s</td></tr>\n",
		tps_all(p), tps_steady(p), p->steady.partial || !p->steady.seen ? " (partial)" : "");
	if (p->lat.n) {
		double m = (double)p->lat.sum / (double)p->lat.n;

		fprintf(f, "<tr><td class=\"l\">latency average ms</td><td>%.3f</td></tr>\n"
			   "<tr><td class=\"l\">latency stddev ms</td><td>%.3f</td></tr>\n",
			m / 1e6, sqrt(fmax(0, p->lat_sumsq / (double)p->lat.n - m * m)) / 1e6);
		for (i = 0; i < 6; i++)
			fprintf(f, "<tr><td class=\"l\">latency %s ms</td><td>%.3f</td></tr>\n",
				lat_qname[i], ms(iotap_hist_quantile(&p->lat, lat_q[i])));
	}
	if (p->commit.n)
		fprintf(f, "<tr><td class=\"l\">commit (WAL sync, steady)</td><td>%" PRIu64
			   " calls, p50 %.3f ms, p99 %.3f ms, max %.3f ms</td></tr>\n", p->commit.n,
			ms(iotap_hist_quantile(&p->commit, 0.5)),
			ms(iotap_hist_quantile(&p->commit, 0.99)), ms(p->commit.max));
	if (p->steady.seen && p->txns_steady && (p->steady.cpu_user_ns || p->steady.cpu_sys_ns))
		fprintf(f, "<tr><td class=\"l\">model CPU per transaction (steady)</td><td>%.1f us "
			   "user, %.1f us system</td></tr>\n",
			(double)p->steady.cpu_user_ns / 1e3 / (double)p->txns_steady,
			(double)p->steady.cpu_sys_ns / 1e3 / (double)p->txns_steady);
	fprintf(f, "</table>\n");
	if (!p->nck)
		return;
	fprintf(f, "<table><tr><th>checkpoint</th><th>buffers</th><th>write s</th><th>sync s</th>"
		   "<th>sync files</th><th>longest s</th><th>average s</th></tr>\n");
	for (i = 0; i < p->nck; i++) {
		const struct app_ckpt *k = &p->ck[i];

		fprintf(f, "<tr><td>%u</td><td>%" PRIu64 "</td><td>%.3f</td>", k->seq, k->buffers,
			write_s(k));
		if (k->partial)
			fprintf(f, "<td colspan=\"4\" class=\"l\">not complete</td></tr>\n");
		else
			fprintf(f, "<td>%.3f</td><td>%" PRIu64 "</td><td>%.3f</td><td>%.3f</td></tr>\n",
				sync_s(k), k->sync_files, secs(k->sync_longest_ns),
				k->sync_files ? secs(k->sync_sum_ns) / (double)k->sync_files : 0);
	}
	fprintf(f, "</table>\n");
}

struct json_object *app_pgsql_json(const struct app_pgsql *p)
{
	json_object *o = json_object_new_object(), *lat = json_object_new_object();
	json_object *cm = json_object_new_object(), *cks = json_object_new_array();
	static const char *const keys[] = { "p50", "p90", "p95", "p99", "p99_9", "max" };
	unsigned int i;

	json_object_object_add(o, "kind", json_object_new_string("pgsql"));
	json_object_object_add(o, "transactions", json_object_new_uint64(p->txns));
	json_object_object_add(o, "transactions_steady", json_object_new_uint64(p->txns_steady));
	json_object_object_add(o, "tps_including_warmup", iotap_report_jnum(tps_all(p), 6));
	json_object_object_add(o, "tps_excluding_warmup", iotap_report_jnum(tps_steady(p), 6));
	json_object_object_add(o, "steady_s", p->steady.seen ? iotap_report_jnum(secs(p->steady.dur_ns), 9)
							      : NULL);
	json_object_object_add(o, "partial",
			       json_object_new_boolean(p->steady.partial || !p->steady.seen));
	if (p->lat.n) {
		double m = (double)p->lat.sum / (double)p->lat.n;

		json_object_object_add(lat, "avg", iotap_report_jnum(m / 1e6, 3));
		json_object_object_add(lat, "stddev", iotap_report_jnum(sqrt(fmax(0, p->lat_sumsq /
						(double)p->lat.n - m * m)) / 1e6, 3));
		for (i = 0; i < 6; i++)
			json_object_object_add(lat, keys[i],
					       iotap_report_jnum(ms(iotap_hist_quantile(&p->lat, lat_q[i])), 3));
	}
	json_object_object_add(o, "latency_ms", lat);
	json_object_object_add(o, "model_cpu_user_us_per_txn", p->txns_steady ?
			       iotap_report_jnum((double)p->steady.cpu_user_ns / 1e3 /
					   (double)p->txns_steady, 1) : NULL);
	json_object_object_add(o, "model_cpu_sys_us_per_txn", p->txns_steady ?
			       iotap_report_jnum((double)p->steady.cpu_sys_ns / 1e3 /
					   (double)p->txns_steady, 1) : NULL);
	json_object_object_add(cm, "calls", json_object_new_uint64(p->commit.n));
	json_object_object_add(cm, "p50_ms", p->commit.n ? iotap_report_jnum(
				       ms(iotap_hist_quantile(&p->commit, 0.5)), 3) : NULL);
	json_object_object_add(cm, "p99_ms", p->commit.n ? iotap_report_jnum(
				       ms(iotap_hist_quantile(&p->commit, 0.99)), 3) : NULL);
	json_object_object_add(cm, "max_ms", p->commit.n ? iotap_report_jnum(ms(p->commit.max), 3) : NULL);
	json_object_object_add(o, "commit_sync", cm);
	for (i = 0; i < p->nck; i++) {
		const struct app_ckpt *k = &p->ck[i];
		json_object *c = json_object_new_object();

		json_object_object_add(c, "seq", json_object_new_int((int)k->seq));
		json_object_object_add(c, "complete", json_object_new_boolean(!k->partial));
		json_object_object_add(c, "buffers", json_object_new_uint64(k->buffers));
		json_object_object_add(c, "write_s", iotap_report_jnum(write_s(k), 3));
		json_object_object_add(c, "sync_s", k->partial ? NULL : iotap_report_jnum(sync_s(k), 3));
		json_object_object_add(c, "sync_files", json_object_new_uint64(k->sync_files));
		json_object_object_add(c, "longest_sync_s", iotap_report_jnum(secs(k->sync_longest_ns), 3));
		json_object_object_add(c, "average_sync_s", iotap_report_jnum(k->sync_files ?
				       secs(k->sync_sum_ns) / (double)k->sync_files : 0, 3));
		json_object_array_add(cks, c);
	}
	json_object_object_add(o, "checkpoints", cks);
	return o;
}

unsigned int app_pgsql_figs(const struct app_pgsql *p, struct app_fig *out)
{
	double sync_sum = 0, longest = 0;
	unsigned int n = 0, i, done = 0;

	for (i = 0; i < p->nck; i++) {
		if (p->ck[i].partial)
			continue;
		done++;
		sync_sum += sync_s(&p->ck[i]);
		if (secs(p->ck[i].sync_longest_ns) > longest)
			longest = secs(p->ck[i].sync_longest_ns);
	}
	out[n++] = (struct app_fig){ "tps_excluding_warmup", "tps (steady)", 1, 1, tps_steady(p) };
	out[n++] = (struct app_fig){ "tps_including_warmup", "tps (all)", 1, 1, tps_all(p) };
	out[n++] = (struct app_fig){ "latency_avg_ms", "latency avg ms", 3, -1,
		p->lat.n ? (double)p->lat.sum / (double)p->lat.n / 1e6 : NAN };
	out[n++] = (struct app_fig){ "latency_p99_ms", "latency p99 ms", 3, -1,
		p->lat.n ? ms(iotap_hist_quantile(&p->lat, 0.99)) : NAN };
	out[n++] = (struct app_fig){ "commit_p50_ms", "commit p50 ms", 3, -1,
		p->commit.n ? ms(iotap_hist_quantile(&p->commit, 0.5)) : NAN };
	out[n++] = (struct app_fig){ "commit_p99_ms", "commit p99 ms", 3, -1,
		p->commit.n ? ms(iotap_hist_quantile(&p->commit, 0.99)) : NAN };
	out[n++] = (struct app_fig){ "commit_max_ms", "commit max ms", 3, -1,
		p->commit.n ? ms(p->commit.max) : NAN };
	out[n++] = (struct app_fig){ "checkpoint_sync_s", "ckpt sync s (mean)", 3, -1,
		done ? sync_sum / done : NAN };
	out[n++] = (struct app_fig){ "checkpoint_longest_sync_s", "ckpt longest fsync s", 3, -1,
		done ? longest : NAN };
	return n;
}

/* the model's analysis ops (app.h), for its row of the models table */
/* pgsql's period is its steady one (the run's STEADY span). */
int app_pgsql_period(const struct app_pgsql *p, uint64_t *start_ns, uint64_t *dur_ns)
{
	if (!p->steady.seen || !p->steady.dur_ns)
		return 0;
	*start_ns = p->steady.start_ns;
	*dur_ns = p->steady.dur_ns;
	return 1;
}

APP_OPS(pgsql);
