/* SPDX-License-Identifier: MIT */
/*
 * compare.h - several runs side by side, phase by phase
 *
 * A run group is one label and the traces of its repeats (seed 001's
 * bonnie++ -x 3): each figure is shown as the mean over the group's traces
 * and their sample standard deviation, and as the ratio of that mean to
 * the baseline group's (the first). Without labels each trace is a group
 * of one. Phases are matched by name (and occurrence: the second "create"
 * matches the second "create"); a phase one run lacks is left blank.
 */
#ifndef IOTAP_COMPARE_H
#define IOTAP_COMPARE_H

#include <stdio.h>

#include "report.h"

#define CMP_PHASE_KEY	160

struct cmp_group {
	const char *label;		/* --label NAME, or the trace's file name */
	unsigned int n;			/* traces (repeats) */
	const char **paths;
	struct report *reps;		/* n built reports */
};

/* One figure of one phase in every group. */
struct cmp_cell {
	unsigned int n;			/* traces that have it */
	double mean, sd;		/* sd: sample standard deviation, 0 for one trace */
	double ratio;			/* mean / baseline mean; NAN when not comparable */
};

struct cmp_metric {
	const char *key;		/* JSON/CSV name: "write_mb_per_s" */
	const char *label;		/* text: "write MB/s" */
	int decimals;
};

extern const struct cmp_metric cmp_metrics[];
extern const unsigned int cmp_nmetrics;

struct compare {
	struct cmp_group *groups;
	unsigned int ngroups;
	unsigned int nphases;		/* matched phases (the last row is the total) */
	char (*phase_names)[CMP_PHASE_KEY];
	/* for group g, trace t, phase k: index into reps[t].phases, -1 if absent,
	 * -2 for the total */
	int *map;			/* [nphases][ngroups][max traces] */
	unsigned int max_traces;
};

/* Build every report and match phases. Return: 0 or -errno (message printed). */
int compare_build(struct compare *c, struct cmp_group *groups, unsigned int ngroups);
void compare_release(struct compare *c);
/* The pstats of phase @k in trace @t of group @g, or NULL. */
const struct pstats *compare_phase(const struct compare *c, unsigned int k, unsigned int g,
				   unsigned int t);
/* Figure @m of phase @k for group @g. */
void compare_cell(const struct compare *c, unsigned int k, unsigned int g, unsigned int m,
		  struct cmp_cell *out);
/* 1 if figure @m means anything for phase @k (non-zero somewhere). */
int compare_metric_used(const struct compare *c, unsigned int k, unsigned int m);

void compare_print_text(const struct compare *c, FILE *f);
void compare_print_csv(const struct compare *c, FILE *f);
int compare_print_json(const struct compare *c, FILE *f);
/* The compare page into @f (out_open()); write errors show in ferror(@f). */
void compare_write_html(const struct compare *c, FILE *f);

#endif /* IOTAP_COMPARE_H */
