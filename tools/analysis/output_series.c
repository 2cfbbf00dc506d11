// SPDX-License-Identifier: MIT
/*
 * output_series.c - the time series behind the charts (--interval)
 *
 * One row per interval: filesystem rates by direction, seeks, fsyncs and
 * metadata ops per second, mean ops in flight and threads, the longest op,
 * the device's rates and utilisation and the system's CPU from the samples,
 * and the phase the interval starts in. The interval is a whole number of
 * the report's bins (which the report made as wide as asked, unless the
 * trace was too long for that many bins).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "analysis_i.h"

/* The phase that covers most of [a, z), "-" if none does. */
static const char *phase_at(const struct iotap_report *rep, uint64_t a, uint64_t z)
{
	uint64_t best = 0;
	const char *name = "-";
	unsigned int i;

	for (i = 0; i < rep->nphases; i++) {
		const struct iotap_pstats *p = &rep->phases[i];
		uint64_t lo = p->t_begin > a ? p->t_begin : a, hi = p->t_end < z ? p->t_end : z;

		/* a phase shorter than a bin still owns the bin it falls in */
		if (hi <= lo && !(p->t_begin >= a && p->t_begin < z))
			continue;
		if (hi > lo && hi - lo > best) {
			best = hi - lo;
			name = p->name;
		} else if (!best && name[0] == '-') {
			name = p->name;
		}
	}
	return name;
}

void iotap_report_print_series(const struct iotap_report *rep, uint64_t interval_ns, int csv, FILE *f,
			 struct iotap_analysis_err *warn)
{
	const struct iotap_series *s = &rep->series;
	struct bin_dev *dev = NULL;
	uint64_t k, i, j;

	if (!interval_ns || interval_ns < s->width)
		k = 1;
	else
		k = (interval_ns + s->width / 2) / s->width;
	/* the bins may be a hair off an interval that does not divide evenly */
	if (interval_ns && llabs((long long)(k * s->width) - (long long)interval_ns) > 1000)
		analysis_err_set(warn, 0, "interval is %.3f s: a whole number of the %.3f s "
				 "bins this trace's length allows", (double)(k * s->width) / 1e9,
				 (double)s->width / 1e9);
	if (s->n) {
		dev = calloc(s->n, sizeof(*dev));
		if (dev)
			series_dev(s, dev);
	}
	if (csv)
		fprintf(f,
			"t_s,phase,ops_per_s,read_mb_per_s,write_mb_per_s,read_iops,write_iops,"
			"seeks_per_s,fsyncs_per_s,meta_ops_per_s,mean_inflight,threads,"
			   "max_latency_ms,"
			"dev_read_mb_per_s,dev_write_mb_per_s,dev_util_pct,dev_queue,"
			   "cpu_system_pct\n");
	else
		fprintf(f,
			"%9s %-20s %10s %9s %9s %9s %9s %9s %8s %9s %7s %4s %9s %9s %9s %6s %5s\n",
			"t_s", "phase", "ops/s", "rd_MB/s", "wr_MB/s", "rd_IOPS", "wr_IOPS",
			"seeks/s", "fsync/s", "meta/s", "inflt", "thr", "max_ms", "dev_rMB/s",
			"dev_wMB/s", "util%", "cpu%");
	for (i = 0; i < s->n; i += k) {
		struct iotap_bin sum = { 0 };
		double secs, rmb = 0, wmb = 0, util = 0, q = 0, cpu = 0;
		uint64_t t = s->origin + i * s->width;
		int has_dev = 0;

		for (j = i; j < i + k && j < s->n; j++) {
			const struct iotap_bin *b = &s->bins[j];

			sum.ops += b->ops;
			sum.rd_ops += b->rd_ops;
			sum.wr_ops += b->wr_ops;
			sum.rd_bytes += b->rd_bytes;
			sum.wr_bytes += b->wr_bytes;
			sum.seeks += b->seeks;
			sum.fsyncs += b->fsyncs;
			sum.meta_ops += b->meta_ops;
			sum.busy_ns += b->busy_ns;
			if (b->threads > sum.threads)
				sum.threads = b->threads;
			if (b->lat_max > sum.lat_max)
				sum.lat_max = b->lat_max;
			if (dev && dev[j].valid) {
				has_dev = 1;
				rmb += dev[j].rd_mbps;
				wmb += dev[j].wr_mbps;
				util += dev[j].util_pct;
				q += dev[j].queue;
				cpu += dev[j].cpu_sys_pct;
			}
		}
		secs = (double)((j - i) * s->width) / 1e9;
		if (has_dev) {
			rmb /= (double)(j - i);
			wmb /= (double)(j - i);
			util /= (double)(j - i);
			q /= (double)(j - i);
			cpu /= (double)(j - i);
		}
		if (csv) {
			fprintf(f,
				"%.3f,\"%s\",%.1f,%.3f,%.3f,%.1f,%.1f,%.1f,%.1f,%.1f,%.3f,%u,%.3f,",
				(double)(t - rep->t0) / 1e9, phase_at(rep, t, t + k * s->width), sum.ops / secs,
				sum.rd_bytes / 1e6 / secs, sum.wr_bytes / 1e6 / secs,
				sum.rd_ops / secs, sum.wr_ops / secs, sum.seeks / secs,
				sum.fsyncs / secs, sum.meta_ops / secs, sum.busy_ns / 1e9 / secs,
				sum.threads, sum.lat_max / 1e6);
			if (has_dev)
				fprintf(f, "%.3f,%.3f,%.2f,%.3f,%.2f\n", rmb, wmb, util, q, cpu);
			else
				fprintf(f, ",,,,\n");
		} else {
			fprintf(f,
				"%9.3f %-20.20s %10.1f %9.2f %9.2f %9.1f %9.1f %9.1f %8.1f "
				"%9.1f %7.2f "
				"%4u %9.3f",
				(double)(t - rep->t0) / 1e9, phase_at(rep, t, t + k * s->width), sum.ops / secs,
				sum.rd_bytes / 1e6 / secs, sum.wr_bytes / 1e6 / secs,
				sum.rd_ops / secs, sum.wr_ops / secs, sum.seeks / secs,
				sum.fsyncs / secs, sum.meta_ops / secs, sum.busy_ns / 1e9 / secs,
				sum.threads, sum.lat_max / 1e6);
			if (has_dev)
				fprintf(f, " %9.2f %9.2f %6.1f %5.1f\n", rmb, wmb, util, cpu);
			else
				fprintf(f, " %9s %9s %6s %5s\n", "-", "-", "-", "-");
		}
	}
	free(dev);
}
