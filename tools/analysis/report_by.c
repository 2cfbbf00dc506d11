// SPDX-License-Identifier: MIT
/*
 * report_by.c - one phase broken down by op type, file or thread
 *
 * --by op needs nothing more than the phase's own counters (seeks are
 * counted per direction there, so the read and write rows have theirs). --by file and
 * --by tid read the trace a second time: the phase is the range of op
 * ordinals the first pass gave it, so the breakdown covers exactly the ops
 * the phase table counted, however the phase was found. Seeks are judged
 * against the whole trace before the phase, as in the first pass. Memory
 * grows with the distinct files or threads in the phase, not with ops;
 * the table shows the busiest TOP rows and sums the rest. A --by file row
 * is one file under one path: its path when the ops ran (trace/paths.c),
 * so a renamed file or a reused inode number makes a row per name.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_i.h"

#define TOP	40

struct by_row {
	uint64_t key;			/* path key (iotap_trace_path) or tid */
	uint64_t file;			/* --by file: the file id */
	char *path;			/* --by file: its path then (malloc'ed) */
	uint64_t ops, rd_ops, wr_ops, rd_bytes, wr_bytes, data_ops, seeks, fsyncs, meta_ops;
	uint64_t busy_ns, lat_max;
};

/* The row of @key in @m (key -> struct by_row), made on first use; NULL: ENOMEM. */
static struct by_row *by_get(struct iotap_map *m, uint64_t key)
{
	struct by_row *row;
	int ret = iotap_map_put(m, key, (void **)&row);

	if (ret < 0)
		return NULL;
	row->key = key;
	return row;
}

static int cmp_rows(const void *a, const void *b)
{
	const struct by_row *x = a, *y = b;

	if (x->ops != y->ops)
		return x->ops < y->ops ? 1 : -1;
	return x->key < y->key ? -1 : x->key > y->key;
}

static void add_row(struct by_row *r, const struct iotap_trace_rec *rec, int is_seek)
{
	r->ops++;
	r->busy_ns += rec->dur_ns;
	if (rec->dur_ns > r->lat_max)
		r->lat_max = rec->dur_ns;
	if (rec->op == IOTAP_OP_READ || rec->op == IOTAP_OP_WRITE) {
		r->data_ops++;
		r->seeks += !!is_seek;
		if (rec->op == IOTAP_OP_READ) {
			r->rd_ops++;
			r->rd_bytes += rec->result > 0 ? (uint64_t)rec->result : 0;
		} else {
			r->wr_ops++;
			r->wr_bytes += rec->result > 0 ? (uint64_t)rec->result : 0;
		}
	} else if (rec->op == IOTAP_OP_FSYNC || rec->op == IOTAP_OP_FSYNCDIR) {
		r->fsyncs++;
	} else {
		r->meta_ops++;
	}
}

static void print_row(FILE *f, int csv, const char *label, const struct by_row *r, double d)
{
	if (csv) {
		fputc('"', f);
		for (; *label; label++) {
			if (*label == '"')
				fputc('"', f);
			fputc(*label, f);
		}
		fprintf(f,
			"\",%" PRIu64 ",%.3f,%" PRIu64 ",%" PRIu64 ",%.3f,%" PRIu64 ",%" PRIu64
			",%.3f,%" PRIu64 ",%.3f,%.2f,%" PRIu64 ",%" PRIu64 ",%.3f,%.3f\n",
			r->ops, fig_rate(r->ops, d), r->rd_ops, r->rd_bytes,
			fig_mbps(r->rd_bytes, d), r->wr_ops, r->wr_bytes, fig_mbps(r->wr_bytes, d),
			r->seeks, fig_rate(r->seeks, d),
			r->data_ops ? 100.0 * (double)(r->data_ops - r->seeks) / (double)r->data_ops
				    : 0,
			r->fsyncs, r->meta_ops, r->ops ? (double)r->busy_ns / r->ops / 1e3 : 0,
			r->lat_max / 1e3);
		return;
	}
	fprintf(f, "%-36.36s %10" PRIu64 " %10.1f %9.2f %9.2f %9" PRIu64 " %9.1f %6.1f %8" PRIu64
		" %9" PRIu64 " %10.1f %11.1f\n", label, r->ops, fig_rate(r->ops, d),
		fig_mbps(r->rd_bytes, d), fig_mbps(r->wr_bytes, d), r->seeks, fig_rate(r->seeks, d),
		r->data_ops ? 100.0 * (double)(r->data_ops - r->seeks) / (double)r->data_ops : 0,
		r->fsyncs, r->meta_ops, r->ops ? (double)r->busy_ns / r->ops / 1e3 : 0,
		r->lat_max / 1e3);
}

static void print_head(FILE *f, int csv, const char *what)
{
	if (csv)
		fprintf(f,
			"%s,ops,ops_per_s,read_ops,read_bytes,read_mb_per_s,write_ops,write_bytes,"
			"write_mb_per_s,seeks,seeks_per_s,sequential_pct,fsyncs,meta_ops,"
			"mean_latency_us,max_latency_us\n",
			what);
	else
		fprintf(f, "%-36s %10s %10s %9s %9s %9s %9s %6s %8s %9s %10s %11s\n", what, "ops",
			"ops/s", "rd_MB/s", "wr_MB/s", "seeks", "seeks/s", "seq%", "fsyncs",
			"meta_ops", "mean_us", "max_us");
}

static int by_op(const struct iotap_pstats *p, int csv, FILE *f)
{
	double d = pstats_duration_s(p);
	unsigned int op;

	print_head(f, csv, "op");
	for (op = 0; op < IOTAP_OP_MAX; op++) {
		struct by_row r = { 0 };
		const struct iotap_hist *h = p->lat[op];

		if (!p->op_count[op])
			continue;
		r.ops = p->op_count[op];
		if (op == IOTAP_OP_READ) {
			r.rd_ops = p->rd.ops;
			r.rd_bytes = p->rd.bytes;
			r.data_ops = p->rd.ops;
			r.seeks = p->rd.seeks;
		} else if (op == IOTAP_OP_WRITE) {
			r.wr_ops = p->wr.ops;
			r.wr_bytes = p->wr.bytes;
			r.data_ops = p->wr.ops;
			r.seeks = p->wr.seeks;
		} else if (op == IOTAP_OP_FSYNC || op == IOTAP_OP_FSYNCDIR) {
			r.fsyncs = r.ops;
		} else {
			r.meta_ops = r.ops;
		}
		if (h) {
			r.busy_ns = h->sum;
			r.lat_max = h->max;
		}
		print_row(f, csv, iotap_trace_op_name(op), &r, d);
	}
	return 0;
}

int iotap_report_print_by(const struct iotap_report *rep, int phase, enum iotap_report_by by, int csv, FILE *f,
		    struct iotap_analysis_err *err)
{
	const struct iotap_pstats *p = phase >= 0 ? &rep->phases[phase] : &rep->total;
	uint64_t lo = 0, hi = UINT64_MAX, ord = 0, i, n;
	struct iotap_trace_reader *r;
	const struct iotap_trace_rec *rp;
	struct iotap_trace_path tp;
	struct iotap_trace_paths *pp;
	struct iotap_trace_join *jn;
	struct iotap_seek_map seeks;
	struct by_row *rows = NULL, *row, rest = { 0 };
	struct iotap_map m;
	double d = pstats_duration_s(p);
	char label[512];
	int ret;

	if (by == IOTAP_BY_OP)
		return by_op(p, csv, f);
	if (phase >= 0) {
		lo = p->ord_first;
		hi = (unsigned int)phase + 1 < rep->nphases ? rep->phases[phase + 1].ord_first
							    : UINT64_MAX;
	}
	ret = iotap_analysis_trace_open(rep->path, 0, &r, err);
	if (ret)
		return ret;
	/* the records as report_read() counted them: cut calls joined */
	ret = iotap_trace_join_open(&jn, r);
	if (!ret) {
		/* each op under the path its file had then (trace/paths.c) */
		ret = iotap_trace_paths_open(&pp, jn);
		if (ret)
			iotap_trace_join_close(jn);
	}
	if (ret) {
		iotap_trace_reader_close(r);
		return analysis_err_set(err, ret, "out of memory");
	}
	iotap_map_init(&m, sizeof(struct by_row));
	seek_map_init(&seeks);
	while ((ret = iotap_trace_paths_next_ref(pp, &rp, &tp)) > 0) {
		int64_t dist = 0;
		uint64_t my = ord;

		if (rp->type != IOTAP_REC_OP)
			continue;
		if (rp->op != IOTAP_OP_FORGET)
			ord++;
		if (my >= hi)
			break;
		if ((rp->op == IOTAP_OP_READ || rp->op == IOTAP_OP_WRITE) && rp->result >= 0) {
			uint64_t len = rp->result > 0 ? (uint64_t)rp->result : rp->length;

			dist = seek_map_update(&seeks, rp->file, rp->offset, rp->offset + len,
					       rp->op == IOTAP_OP_WRITE ? IOTAP_SEEK_WRITE : IOTAP_SEEK_READ);
		}
		if (my < lo)
			continue;
		row = by_get(&m, by == IOTAP_BY_FILE ? tp.key : rp->tid);
		if (!row) {
			ret = -ENOMEM;
			break;
		}
		if (by == IOTAP_BY_FILE && !row->path) {
			row->file = rp->file;
			row->path = strdup(tp.key && tp.path ? tp.path : "(names not found)");
			if (!row->path) {
				ret = -ENOMEM;
				break;
			}
		}
		add_row(row, rp, dist != 0);
	}
	iotap_trace_paths_close(pp);
	iotap_trace_join_close(jn);
	iotap_trace_reader_close(r);
	seek_map_release(&seeks);
	if (ret < 0) {
		analysis_err_set(err, ret, "cannot read trace '%s': %s", rep->path, strerror(-ret));
		for (i = 0; (row = iotap_map_next(&m, &i, NULL)); )
			free(row->path);
		iotap_map_release(&m);
		return ret;
	}
	/* copy the rows out and sort them busiest first */
	n = iotap_map_count(&m);
	rows = malloc((n ? n : 1) * sizeof(*rows));
	if (!rows) {
		for (i = 0; (row = iotap_map_next(&m, &i, NULL)); )
			free(row->path);
		iotap_map_release(&m);
		return analysis_err_set(err, -ENOMEM, "out of memory");
	}
	for (i = 0, n = 0; (row = iotap_map_next(&m, &i, NULL)); )
		rows[n++] = *row;
	iotap_map_release(&m);
	qsort(rows, n, sizeof(*rows), cmp_rows);
	if (!csv)
		fprintf(f, "phase %s: %.3f s, %" PRIu64 " ops in %" PRIu64 " %s%s\n",
			phase >= 0 ? p->name : "(whole trace)", d, p->ops, n,
			by == IOTAP_BY_FILE ? "file" : "thread", n == 1 ? "" : "s");
	print_head(f, csv, by == IOTAP_BY_FILE ? "file" : "tid");
	for (i = 0; i < n; i++) {
		if (i >= TOP && !csv) {
			struct by_row *r2 = &rows[i];

			rest.ops += r2->ops;
			rest.rd_ops += r2->rd_ops;
			rest.wr_ops += r2->wr_ops;
			rest.rd_bytes += r2->rd_bytes;
			rest.wr_bytes += r2->wr_bytes;
			rest.data_ops += r2->data_ops;
			rest.seeks += r2->seeks;
			rest.fsyncs += r2->fsyncs;
			rest.meta_ops += r2->meta_ops;
			rest.busy_ns += r2->busy_ns;
			if (r2->lat_max > rest.lat_max)
				rest.lat_max = r2->lat_max;
			continue;
		}
		if (by == IOTAP_BY_FILE) {
			uint64_t j;

			snprintf(label, sizeof(label), "%s", rows[i].path);
			/* two rows of one name (a file deleted and made again): add the id */
			for (j = 0; j < n && j < TOP; j++) {
				if (j != i && !strcmp(rows[j].path, rows[i].path)) {
					size_t l = strlen(label);

					snprintf(label + l, sizeof(label) - l, " [%" PRIu64 "]",
						 rows[i].file);
					break;
				}
			}
		} else {
			snprintf(label, sizeof(label), "%" PRIu64, rows[i].key);
		}
		print_row(f, csv, label, &rows[i], d);
	}
	if (n > TOP && !csv) {
		snprintf(label, sizeof(label), "(%" PRIu64 " more)", n - TOP);
		print_row(f, csv, label, &rest, d);
	}
	for (i = 0; i < n; i++)
		free(rows[i].path);
	free(rows);
	return 0;
}
