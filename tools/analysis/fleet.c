// SPDX-License-Identifier: MIT
/*
 * fleet.c - one report over many hosts' traces: each phase per host and
 * for all hosts together (iotap report A.iotap B.iotap ...)
 *
 * Each trace is reported as alone (iotap_report_build, the same options), so a
 * host's rows are its own report's figures. Phases are matched by name in
 * order of first appearance, a phase only a later trace has slotted in
 * after the phase it follows (compare's order). "All hosts" is the
 * hosts' pstats merged with pstats_merge(): ops, bytes, errors, seeks and
 * the request-size and latency histograms add, so its percentiles are
 * those of every host's ops together (within the histogram's 1/128). Its
 * span is the union of the hosts' spans on the wall clock: from the
 * earliest start to the latest end, each trace's monotonic times moved by
 * its header's realtime - monotonic base; its rates are its sums over
 * that span. Figures that do not add across hosts are left out of it:
 * the device's and the CPU's (samples of different machines), and the
 * flags. Threads are counted from the hosts' sketches together (a
 * thread id two hosts both use counts once); ops in flight at most is
 * the highest host's.
 */
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analysis_i.h"
#include "svg.h"

#define ALL_HOSTS	"(all hosts)"

static int find_name(const struct iotap_fleet *fl, const char *name)
{
	unsigned int k;

	for (k = 0; k < fl->nphases; k++)
		if (!strcmp(fl->names[k], name))
			return (int)k;
	return -1;
}

static int insert_name(struct iotap_fleet *fl, unsigned int at, const char *name)
{
	char (*nn)[128] = realloc(fl->names, (fl->nphases + 1) * sizeof(*nn));

	if (!nn)
		return -ENOMEM;
	fl->names = nn;
	memmove(&nn[at + 1], &nn[at], (fl->nphases - at) * sizeof(*nn));
	snprintf(nn[at], sizeof(nn[at]), "%s", name);
	fl->nphases++;
	return 0;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s && s[1] ? s + 1 : path;
}

/*
 * A host's label: the header's host, unless another trace names the same
 * host (two mounts of one machine): then the file name, and its path
 * where even the file names meet ("#2" on a trace given twice).
 */
static void label_hosts(struct iotap_fleet *fl)
{
	unsigned int i, j;

	for (i = 0; i < fl->nhosts; i++) {
		struct iotap_fleet_host *h = &fl->hosts[i];
		const char *host = h->rep.hdr.host;

		h->by_file = !host || !host[0];
		for (j = 0; j < fl->nhosts && !h->by_file; j++) {
			const char *o = fl->hosts[j].rep.hdr.host;

			h->by_file = j != i && o && !strcmp(o, host);
		}
		snprintf(h->label, sizeof(h->label), "%s", h->by_file ? base_name(h->path) : host);
	}
	for (i = 0; i < fl->nhosts; i++)
		for (j = 0; j < fl->nhosts; j++)
			if (j != i && fl->hosts[i].by_file &&
			    !strcmp(base_name(fl->hosts[i].path), base_name(fl->hosts[j].path)))
				snprintf(fl->hosts[i].label, sizeof(fl->hosts[i].label), "%s",
					 fl->hosts[i].path);
	/* one file given twice: "a.iotap", "a.iotap#2" */
	for (i = fl->nhosts; i-- > 1;) {
		unsigned int k = 1;
		size_t l = strlen(fl->hosts[i].label);

		for (j = 0; j < i; j++)
			k += !strcmp(fl->hosts[j].label, fl->hosts[i].label);
		if (k > 1)
			snprintf(fl->hosts[i].label + l, sizeof(fl->hosts[i].label) - l, "#%u", k);
	}
}

/*
 * Add host @h's span @src to @dst on the wall clock. pstats_merge() adds
 * the counters and histograms; the times are set here (its first_op and
 * last_end are on @src's monotonic clock), and what is one machine's
 * alone (samples, marker CPU) is dropped. A span of no op and no time (a
 * trace with no op: its total is at 0) widens nothing. *@first: no span
 * taken yet.
 */
static int merge_host(struct iotap_pstats *dst, const struct iotap_pstats *src, uint64_t shift,
		      int *first)
{
	uint64_t fo = dst->first_op, le = dst->last_end, ops = dst->ops;
	uint64_t b = src->t_begin + shift, e = src->t_end + shift;
	int ret = pstats_merge(dst, src);

	if (src->ops || src->t_end > src->t_begin) {
		if (*first || b < dst->t_begin)
			dst->t_begin = b;
		if (*first || e > dst->t_end)
			dst->t_end = e;
		*first = 0;
	}
	if (src->ops) {
		dst->first_op = !ops || src->first_op + shift < fo ? src->first_op + shift : fo;
		dst->last_end = src->last_end + shift > le ? src->last_end + shift : le;
	}
	dst->smp_first.valid = dst->smp_last.valid = 0;
	dst->has_cpu_mark = 0;
	return ret;
}

const struct iotap_pstats *fleet_phase(const struct iotap_fleet *fl, unsigned int k, unsigned int h)
{
	const struct iotap_report *rep = &fl->hosts[h].rep;
	int i;

	if (k == fl->nphases)
		return &rep->total;
	i = fl->map[(size_t)k * fl->nhosts + h];
	return i < 0 ? NULL : &rep->phases[i];
}

static const struct iotap_flagset *host_flags(const struct iotap_fleet *fl, unsigned int k,
					      unsigned int h)
{
	const struct iotap_report *rep = &fl->hosts[h].rep;

	return k == fl->nphases ? &rep->tflags : &rep->flags[fl->map[(size_t)k * fl->nhosts + h]];
}

int iotap_fleet_build(struct iotap_fleet *fl, const char *const *paths, unsigned int n,
		const struct iotap_report_opts *o)
{
	struct iotap_report **reps;
	unsigned int h, i, k;
	int ret;

	memset(fl, 0, sizeof(*fl));
	fl->hosts = calloc(n, sizeof(*fl->hosts));
	fl->view.hist_pool = malloc(sizeof(*fl->view.hist_pool));
	if (!fl->hosts || !fl->view.hist_pool)
		goto nomem;
	iotap_hist_pool_init(fl->view.hist_pool);
	fl->view.path = "(fleet)";
	fl->view.phase_source = "markers";
	reps = calloc(n ? n : 1, sizeof(*reps));
	if (!reps)
		goto nomem;
	for (h = 0; h < n; h++) {
		fl->hosts[h].path = paths[h];
		reps[h] = &fl->hosts[h].rep;
	}
	/* the hosts' reports side by side (o->threads of them; 0: a CPU each) */
	ret = iotap_reports_build(reps, paths, n, o, o ? o->threads : 0, &h);
	free(reps);
	if (ret) {
		struct iotap_analysis_err err = fl->hosts[h].rep.err;

		fl->nhosts = h;
		iotap_fleet_release(fl);
		fl->err = err;
		return ret;
	}
	fl->nhosts = n;
	for (h = 0; h < n; h++) {
		struct iotap_fleet_host *fh = &fl->hosts[h];

		fh->shift = fh->rep.hdr.real_base_ns - fh->rep.hdr.mono_base_ns;
		if (!h || fh->rep.hdr.real_base_ns < fl->view.t0)
			fl->view.t0 = fh->rep.hdr.real_base_ns;
	}
	label_hosts(fl);
	/* the union of phase names, in order of first appearance */
	for (h = 0; h < n; h++) {
		const struct iotap_report *rep = &fl->hosts[h].rep;
		unsigned int at = 0;

		for (i = 0; i < rep->nphases; i++) {
			int pos = find_name(fl, rep->phases[i].name);

			if (pos < 0) {
				if (insert_name(fl, at, rep->phases[i].name))
					goto nomem;
				pos = (int)at;
			}
			at = (unsigned int)pos + 1;
		}
	}
	fl->map = malloc(((size_t)fl->nphases * n + 1) * sizeof(*fl->map));
	fl->all = calloc(fl->nphases + 1, sizeof(*fl->all));
	if (!fl->map || !fl->all)
		goto nomem;
	for (k = 0; k < fl->nphases * n; k++)
		fl->map[k] = -1;
	for (h = 0; h < n; h++)
		for (i = 0; i < fl->hosts[h].rep.nphases; i++)
			fl->map[(size_t)find_name(fl, fl->hosts[h].rep.phases[i].name) * n + h] =
				(int)i;
	for (k = 0; k <= fl->nphases; k++) {
		struct iotap_pstats *a = &fl->all[k];
		int first = 1;

		pstats_init(a, k < fl->nphases ? fl->names[k] : "total", k, 0);
		a->pool = fl->view.hist_pool;
		for (h = 0; h < n; h++) {
			const struct iotap_pstats *p = fleet_phase(fl, k, h);

			if (!p)
				continue;
			if (merge_host(a, p, fl->hosts[h].shift, &first))
				goto nomem;
		}
	}
	return 0;
nomem:
	iotap_fleet_release(fl);
	analysis_err_set(&fl->err, -ENOMEM, "out of memory");
	return -ENOMEM;
}

void iotap_fleet_release(struct iotap_fleet *fl)
{
	unsigned int h, k;

	for (k = 0; fl->all && k <= fl->nphases; k++)
		pstats_release(&fl->all[k]);
	free(fl->all);
	for (h = 0; h < fl->nhosts; h++)
		iotap_report_release(&fl->hosts[h].rep);
	free(fl->hosts);
	free(fl->names);
	free(fl->map);
	if (fl->view.hist_pool) {
		iotap_hist_pool_release(fl->view.hist_pool);
		free(fl->view.hist_pool);
	}
	memset(fl, 0, sizeof(*fl));
}

/* --- text ---------------------------------------------------------------- */

void iotap_fleet_print_text(const struct iotap_fleet *fl, const struct iotap_out_opts *oo, FILE *f)
{
	const struct iotap_pstats *tot = &fl->all[fl->nphases];
	unsigned int h, k, named = 0;
	char buf[64];

	fprintf(f, "fleet of %u traces: %.3f s, %" PRIu64 " ops, %u phase%s matched by name\n",
		fl->nhosts, pstats_duration_s(tot), tot->ops, fl->nphases,
		fl->nphases == 1 ? "" : "s");
	for (h = 0; h < fl->nhosts; h++) {
		const struct iotap_fleet_host *fh = &fl->hosts[h];

		fprintf(f, "host %-16s %s: %s, started %s, %.3f s, %" PRIu64 " ops, %u phase%s\n",
			fh->label, fh->path, iotap_trace_source_name(fh->rep.hdr.source),
			fmt_realtime(fh->rep.hdr.real_base_ns, buf, sizeof(buf)),
			pstats_duration_s(&fh->rep.total), fh->rep.total.ops, fh->rep.nphases,
			fh->rep.nphases == 1 ? "" : "s");
		named += fh->by_file;
	}
	if (named)
		fprintf(f, "note: traces that name the same host are told apart by file name\n");
	fprintf(f, "MB = 10^6 bytes%s; start_s: from the host's own trace start (all hosts: from "
		   "the earliest)\n%s: sums over the union of the hosts' spans; no device or CPU "
		   "figures\n",
		oo->bonnie_units ? ", K/sec = KiB/s as bonnie++" : "", ALL_HOSTS);
	fputc('\n', f);
	report_text_head_row(f, "phase / host", oo);
	for (k = 0; k <= fl->nphases; k++) {
		snprintf(buf, sizeof(buf), "%u", k);
		fprintf(f, "%3s %s\n", k < fl->nphases ? buf : "", fl->all[k].name);
		for (h = 0; h < fl->nhosts; h++) {
			const struct iotap_pstats *p = fleet_phase(fl, k, h);
			char lab[260];

			snprintf(lab, sizeof(lab), "  %s", fl->hosts[h].label);
			if (p)
				report_text_row(f, &fl->hosts[h].rep, p, "", lab, oo);
			else
				fprintf(f, "%3s %-24.24s (no such phase)\n", "", lab);
		}
		report_text_row(f, &fl->view, &fl->all[k], "", "  " ALL_HOSTS, oo);
	}
	for (h = 0; h < fl->nhosts; h++) {
		const struct iotap_report *rep = &fl->hosts[h].rep;

		if (rep->rs.chunks_bad || rep->rs.tail_bytes || !rep->rs.has_end)
			fprintf(f, "\nnote: %s is %s; figures cover what could be read\n",
				fl->hosts[h].path, rep->rs.chunks_bad ? "damaged" : "incomplete");
	}
}

/* --- CSV ----------------------------------------------------------------- */

void iotap_fleet_print_csv(const struct iotap_fleet *fl, FILE *f)
{
	unsigned int h, k;

	fprintf(f, "host,");
	report_csv_head(f);
	for (k = 0; k <= fl->nphases; k++) {
		int idx = k < fl->nphases ? (int)k : -1;

		for (h = 0; h < fl->nhosts; h++) {
			const struct iotap_pstats *p = fleet_phase(fl, k, h);

			if (!p)
				continue;
			report_csv_str(f, fl->hosts[h].label);
			fputc(',', f);
			report_csv_row(f, &fl->hosts[h].rep, p, host_flags(fl, k, h), idx);
		}
		report_csv_str(f, ALL_HOSTS);
		fputc(',', f);
		report_csv_row(f, &fl->view, &fl->all[k], NULL, idx);
	}
}

/* --- JSON ---------------------------------------------------------------- */

/* A phase: its name, each host's own report phase (null: none), and all hosts. */
static json_object *json_fphase(const struct iotap_fleet *fl, unsigned int k)
{
	json_object *o = json_object_new_object(), *hosts = json_object_new_array();
	unsigned int h;

	json_object_object_add(o, "name", json_object_new_string(fl->all[k].name));
	if (k < fl->nphases)
		json_object_object_add(o, "index", json_object_new_int((int)k));
	for (h = 0; h < fl->nhosts; h++) {
		const struct iotap_pstats *p = fleet_phase(fl, k, h);
		json_object *hp = NULL;

		if (p) {
			hp = report_json_phase(&fl->hosts[h].rep, p, host_flags(fl, k, h));
			json_object_object_add(hp, "host",
					       json_object_new_string(fl->hosts[h].label));
		}
		json_object_array_add(hosts, hp);
	}
	json_object_object_add(o, "hosts", hosts);
	json_object_object_add(o, "all_hosts", report_json_phase(&fl->view, &fl->all[k], NULL));
	return o;
}

int iotap_fleet_print_json(const struct iotap_fleet *fl, FILE *f)
{
	json_object *root = json_object_new_object(), *fo = json_object_new_object();
	json_object *hosts = json_object_new_array(), *phases = json_object_new_array();
	unsigned int h, k;

	if (!root || !fo || !hosts || !phases)
		return -ENOMEM;
	for (h = 0; h < fl->nhosts; h++) {
		const struct iotap_fleet_host *fh = &fl->hosts[h];
		const struct iotap_report *rep = &fh->rep;
		json_object *o = json_object_new_object();

		json_object_object_add(o, "host", json_object_new_string(fh->label));
		json_object_object_add(o, "named_by",
				       json_object_new_string(fh->by_file ? "file" : "host"));
		json_object_object_add(o, "header_host", rep->hdr.host ?
					       json_object_new_string(rep->hdr.host) : NULL);
		json_object_object_add(o, "path", json_object_new_string(fh->path));
		json_object_object_add(o, "source", json_object_new_string(
						  iotap_trace_source_name(rep->hdr.source)));
		json_object_object_add(o, "start_realtime",
				       iotap_report_jnum((double)rep->hdr.real_base_ns / 1e9, 6));
		json_object_object_add(o, "duration_s",
				       iotap_report_jnum(pstats_duration_s(&rep->total), 6));
		json_object_object_add(o, "records", json_object_new_uint64(rep->rs.records));
		json_object_object_add(o, "lost_records",
				       json_object_new_uint64(rep->rs.lost_records));
		json_object_object_add(o, "complete", json_object_new_boolean(rep->rs.has_end));
		json_object_object_add(o, "damaged_chunks",
				       json_object_new_uint64(rep->rs.chunks_bad));
		json_object_object_add(o, "phase_source",
				       json_object_new_string(rep->phase_source));
		json_object_array_add(hosts, o);
	}
	json_object_object_add(fo, "hosts", hosts);
	json_object_object_add(fo, "phase_match", json_object_new_string("name"));
	json_object_object_add(fo, "start_realtime", iotap_report_jnum((double)fl->view.t0 / 1e9, 6));
	json_object_object_add(fo, "duration_s",
			       iotap_report_jnum(pstats_duration_s(&fl->all[fl->nphases]), 6));
	json_object_object_add(root, "fleet", fo);
	for (k = 0; k < fl->nphases; k++)
		json_object_array_add(phases, json_fphase(fl, k));
	json_object_object_add(root, "phases", phases);
	json_object_object_add(root, "total", json_fphase(fl, fl->nphases));
	fprintf(f, "%s\n", json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY |
							      JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(root);
	return 0;
}

/* --- HTML ---------------------------------------------------------------- */

void iotap_fleet_write_html(const struct iotap_fleet *fl, FILE *f)
{
	unsigned int h, k;
	char sub[1024], buf[64];
	size_t l = 0;

	for (h = 0; h < fl->nhosts && l < sizeof(sub); h++)
		l += (size_t)snprintf(sub + l, sizeof(sub) - l, "%s%s", h ? ", " : "",
				      fl->hosts[h].label);
	html_page_head(f, "iotap fleet report", sub);
	fprintf(f, "<section><h2>Hosts</h2><table><tr><th class=\"l\">host</th>"
		   "<th class=\"l\">trace</th><th>started</th><th>secs</th><th>ops</th>"
		   "<th>phases</th></tr>\n");
	for (h = 0; h < fl->nhosts; h++) {
		const struct iotap_fleet_host *fh = &fl->hosts[h];

		fprintf(f, "<tr><td class=\"l\">");
		html_esc(f, fh->label);
		fprintf(f, "%s</td><td class=\"l\">", fh->by_file ? " (by file name)" : "");
		html_esc(f, fh->path);
		fprintf(f, "</td><td>%s</td><td>%.2f</td><td>%" PRIu64 "</td><td>%u</td></tr>\n",
			fmt_realtime(fh->rep.hdr.real_base_ns, buf, sizeof(buf)),
			pstats_duration_s(&fh->rep.total), fh->rep.total.ops, fh->rep.nphases);
	}
	fprintf(f, "</table><p class=\"note\">Phases are matched by name. A host named by two "
		   "traces is told apart by file name. %s: the hosts' ops together over the "
		   "union of their spans (wall clock); its percentiles come from the merged "
		   "histograms; it has no device or CPU figures. start s: from the host's own "
		   "trace start (%s: from the earliest).</p></section>\n",
		ALL_HOSTS, ALL_HOSTS);
	fprintf(f, "<section><h2>Phases, hosts side by side</h2><div style=\"overflow-x:auto\">"
		   "<table>");
	html_metric_head(f, "phase / host");
	for (k = 0; k <= fl->nphases; k++) {
		snprintf(buf, sizeof(buf), "%u", k);
		fprintf(f, "<tr class=\"total\"><td>%s</td><td class=\"l\" colspan=\"30\">",
			k < fl->nphases ? buf : "");
		html_esc(f, fl->all[k].name);
		fprintf(f, "</td></tr>\n");
		for (h = 0; h < fl->nhosts; h++) {
			const struct iotap_pstats *p = fleet_phase(fl, k, h);

			if (p)
				html_metric_row(f, &fl->hosts[h].rep, p, "", fl->hosts[h].label,
						host_flags(fl, k, h), 0);
		}
		html_metric_row(f, &fl->view, &fl->all[k], "", ALL_HOSTS, NULL, 0);
	}
	fprintf(f, "</table></div></section>\n");
	html_page_foot(f);
}
