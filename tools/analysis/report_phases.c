// SPDX-License-Identifier: MIT
/*
 * report_phases.c - a report's phases once the stream is read
 *
 * What report.c's finish() does to the list of phases the stream made:
 * repeated names numbered, negligible unmarked spans folded into their
 * marked neighbour, empty marked phases dropped, --phases-from's leading
 * ops joined to the first phase; and what the CLI asks of a finished
 * report: a phase by name ("NAME#k"), its phases as a plan for another
 * trace (--phases-from).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_i.h"

/*
 * Phases of the same name get "#2", "#3" (automatic ones of the same kind,
 * marked ones whose name comes back: pgsql's steady after a checkpoint):
 * the table, --phase and compare then know each by one name.
 */
void report_number_repeats(struct iotap_report *rep)
{
	unsigned int i, j, k;
	size_t l;

	/* from the last: the earlier names are still the unnumbered ones */
	for (i = rep->nphases; i-- > 1;) {
		for (j = 0, k = 1; j < i; j++)
			if (!strcmp(rep->phases[j].name, rep->phases[i].name))
				k++;
		if (k > 1) {
			l = strlen(rep->phases[i].name);
			if (l > sizeof(rep->phases[i].name) - 8)
				l = sizeof(rep->phases[i].name) - 8;
			snprintf(rep->phases[i].name + l, sizeof(rep->phases[i].name) - l, "#%u",
				 k);
		}
	}
}

/*
 * A workload closes its files and syncs between an END marker and the next
 * BEGIN: a handful of ops that would each make a row of their own. Such a
 * "(between marks)" or "(before marks)" span is counted in the marked
 * phase before it (after it, for the first) when it is negligible: fewer
 * than FOLD_OPS ops, no data bytes (bytes are never divided by another
 * phase's duration) and no longer than an idle gap. The phase keeps its
 * own time span and its first op ordinal, which its markers define (a
 * --phases-from plan starts it there).
 */
#define FOLD_OPS	64

static int negligible(const struct iotap_pstats *p, uint64_t gap_ns)
{
	return p->ops < FOLD_OPS && !p->rd.bytes && !p->wr.bytes && !p->lost &&
	       p->last_end - p->first_op <= gap_ns;
}

/* Phase @i into phase @to; @i leaves the list. */
static int fold_into(struct iotap_report *rep, unsigned int i, unsigned int to)
{
	struct iotap_pstats *p = &rep->phases[i], *t = &rep->phases[to];
	uint64_t ord = t->ord_first;
	int ret = pstats_merge(t, p);

	t->ord_first = ord;
	pstats_release(p);
	memmove(p, p + 1, (rep->nphases - i - 1) * sizeof(*p));
	rep->nphases--;
	return ret;
}

int report_fold_unmarked(struct iotap_report *rep, uint64_t gap_ns)
{
	unsigned int i = 0;
	int ret = 0;

	while (i < rep->nphases && rep->nphases > 1) {
		struct iotap_pstats *p = &rep->phases[i];
		unsigned int to = i ? i - 1 : 1;

		if (p->name[0] != '(' || !negligible(p, gap_ns) || rep->phases[to].name[0] == '(') {
			i++;
			continue;
		}
		if (fold_into(rep, i, to))
			ret = -ENOMEM;
	}
	return ret;
}

/*
 * A marked phase with no op that lasts no time (pgsql's warmup begun the
 * instant a checkpoint part did: its markers microseconds apart) is no
 * row: nothing in it to show. An idle phase that lasts is kept. The part
 * it cut stays cut there (checkpoint 1 write, then #2 in warmup), so the
 * phases still end where the run's periods do.
 */
#define EMPTY_NS	1000000ull
void report_drop_empty(struct iotap_report *rep)
{
	unsigned int i = 0;

	while (i < rep->nphases) {
		struct iotap_pstats *p = &rep->phases[i];

		if (p->ops || p->lost || p->t_end >= p->t_begin + EMPTY_NS) {
			i++;
			continue;
		}
		pstats_release(p);
		memmove(p, p + 1, (rep->nphases - i - 1) * sizeof(*p));
		rep->nphases--;
	}
}

/*
 * --phases-from: the ops before the plan's first phase are the ones the
 * original folded into its first marked phase; they join it here too.
 */
int report_fold_plan(struct iotap_report *rep, const struct iotap_phase_plan *plan)
{
	if (rep->nphases < 2 || !plan->n || !plan->ord[0] || rep->phases[0].name[0] != '(')
		return 0;
	return fold_into(rep, 0, 1);
}

int iotap_report_find_phase(const struct iotap_report *rep, const char *name)
{
	const char *hash = strrchr(name, '#');
	unsigned int i, want = 1, seen = 0;
	size_t len = strlen(name);

	for (i = 0; i < rep->nphases; i++)
		if (!strcmp(rep->phases[i].name, name))
			return (int)i;
	/* "NAME#k": the k-th phase called NAME (marker names may repeat) */
	if (hash && hash[1]) {
		char *end;

		want = (unsigned int)strtoul(hash + 1, &end, 10);
		if (*end || !want)
			return -1;
		len = (size_t)(hash - name);
		for (i = 0; i < rep->nphases; i++)
			if (strlen(rep->phases[i].name) == len &&
			    !strncmp(rep->phases[i].name, name, len) && ++seen == want)
				return (int)i;
	}
	return -1;
}

int iotap_report_plan(const struct iotap_report *rep, struct iotap_phase_plan *plan)
{
	unsigned int i;

	memset(plan, 0, sizeof(*plan));
	plan->names = calloc(rep->nphases ? rep->nphases : 1, sizeof(*plan->names));
	plan->ord = calloc(rep->nphases ? rep->nphases : 1, sizeof(*plan->ord));
	if (!plan->names || !plan->ord) {
		iotap_phase_plan_release(plan);
		return -ENOMEM;
	}
	for (i = 0; i < rep->nphases; i++) {
		snprintf(plan->names[i], sizeof(plan->names[i]), "%s", rep->phases[i].name);
		plan->ord[i] = rep->phases[i].ord_first;
	}
	plan->n = rep->nphases;
	plan->total_ops = rep->ops_ord;
	plan->from = rep->path;
	return 0;
}

void iotap_phase_plan_release(struct iotap_phase_plan *plan)
{
	free(plan->names);
	free(plan->ord);
	memset(plan, 0, sizeof(*plan));
}
