// SPDX-License-Identifier: MIT
/*
 * lanes.c - the end of pass 1: the recorded threads packed into lanes
 *
 * A lane is one replay thread. A recorded thread takes the first lane (of
 * its process, with --processes) whose last thread had finished before it
 * started, in the order the threads started; each lane then counts the
 * ops it will play (its ring's size) and --processes the processes.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "replay_i.h"

static int thr_cmp(const void *a, const void *b)
{
	const struct rp_thread *x = *(const struct rp_thread * const *)a;
	const struct rp_thread *y = *(const struct rp_thread * const *)b;

	if (x->first_ns != y->first_ns)
		return x->first_ns < y->first_ns ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

int rp_plan_lanes(struct iotap_replay *r, uint64_t per_lane_extra)
{
	struct rp_thread **order;
	uint64_t *free_at;
	uint32_t i, l, n = 0;
	int procs = !!(r->o.flags & IOTAP_REPLAY_PROCESSES);

	order = malloc((r->nthreads + 1) * sizeof(*order));
	free_at = malloc((r->nthreads + 1) * sizeof(*free_at));
	r->lane_pid = malloc((r->nthreads + 1) * sizeof(*r->lane_pid));
	r->lane_ops = calloc(r->nthreads + 1, sizeof(*r->lane_ops));
	if (!order || !free_at || !r->lane_pid || !r->lane_ops) {
		free(order);
		free(free_at);
		return -ENOMEM;
	}
	for (i = 0; i < r->nthreads; i++)
		if (r->threads[i].ops)
			order[n++] = &r->threads[i];
	qsort(order, n, sizeof(*order), thr_cmp);
	r->nlanes = 0;
	for (i = 0; i < n; i++) {
		struct rp_thread *t = order[i];

		for (l = 0; l < r->nlanes; l++)
			if (free_at[l] < t->first_ns && (!procs || r->lane_pid[l] == t->pid))
				break;
		if (l == r->nlanes) {
			r->lane_pid[l] = t->pid;
			r->nlanes++;
		}
		free_at[l] = t->last_end_ns;
		t->lane = l;
		r->lane_ops[l] += t->ops;
	}
	for (l = 0; l < r->nlanes; l++)
		r->lane_ops[l] += per_lane_extra;
	r->nprocs = 1;
	if (procs) {
		/* lanes of one pid are contiguous after a stable sort by pid */
		uint32_t *pids = malloc((r->nlanes + 1) * sizeof(*pids));
		uint32_t np = 0, j;

		if (!pids) {
			free(order);
			free(free_at);
			return -ENOMEM;
		}
		for (l = 0; l < r->nlanes; l++) {
			for (j = 0; j < np; j++)
				if (pids[j] == r->lane_pid[l])
					break;
			if (j == np)
				pids[np++] = r->lane_pid[l];
		}
		r->nprocs = np;
		free(pids);
	}
	free(order);
	free(free_at);
	return 0;
}
