// SPDX-License-Identifier: MIT
/*
 * run_overlap.c - how much of each test ran while the others ran it too
 *
 * Seed 001 ran bonnie++ on three arrays at once; one finished first, so
 * the others' later tests ran alone, and the table compared figures taken
 * under different contention. After a run on several directories, every
 * `iotap run` says, per directory and test, the share of the test's time
 * during which every other directory was running the same test (matched
 * by name and occurrence): 100% in lockstep on equal arrays, less where
 * one array is slower (its test goes on alone after the others finished
 * theirs) or without lockstep.
 */
#include <stdio.h>
#include <string.h>

#include "iotap_workload.h"
#include "run.h"

/* The @occ-th span called @name of @sp (0-based), or NULL. */
static const struct iotap_workload_span *find(const struct iotap_workload_span *sp, unsigned int n,
					      const char *name, unsigned int occ)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (!strcmp(sp[i].name, name) && !occ--)
			return &sp[i];
	return NULL;
}

double run_overlap_pct(struct iotap_workload_ctx *const *ctx, unsigned int n, unsigned int t,
		       unsigned int k)
{
	const struct iotap_workload_span *sp, *o;
	unsigned int ns = iotap_workload_ctx_spans(ctx[t], &sp), occ = 0, i, j, no;
	uint64_t lo, hi;

	if (k >= ns || sp[k].t1 <= sp[k].t0)
		return 0;
	for (i = 0; i < k; i++)
		occ += !strcmp(sp[i].name, sp[k].name);
	lo = sp[k].t0;
	hi = sp[k].t1;
	for (j = 0; j < n; j++) {
		const struct iotap_workload_span *osp;

		if (j == t)
			continue;
		no = iotap_workload_ctx_spans(ctx[j], &osp);
		o = find(osp, no, sp[k].name, occ);
		if (!o)
			return 0;
		if (o->t0 > lo)
			lo = o->t0;
		if (o->t1 < hi)
			hi = o->t1;
	}
	return hi > lo ? 100.0 * (double)(hi - lo) / (double)(sp[k].t1 - sp[k].t0) : 0;
}

void run_print_overlap(FILE *f, struct iotap_workload_ctx *const *ctx, const char *const *paths,
		       unsigned int n, int lockstep)
{
	unsigned int t, k, ns;

	for (t = 0; t < n; t++)
		if (!ctx[t])
			return;	/* a target that did not run: nothing to compare */
	fprintf(f, "\nlockstep %s; overlap: the share of each test that ran while every other "
		   "directory ran it too\n", lockstep ? "on (each test started on every directory "
		   "together)" : "off (--no-lockstep)");
	for (t = 0; t < n; t++) {
		const struct iotap_workload_span *sp;

		ns = iotap_workload_ctx_spans(ctx[t], &sp);
		fprintf(f, "  %s:", paths[t]);
		for (k = 0; k < ns; k++)
			fprintf(f, " %s %.1f%%%s", sp[k].name, run_overlap_pct(ctx, n, t, k),
				k + 1 < ns ? "," : "");
		fprintf(f, "\n");
	}
}
