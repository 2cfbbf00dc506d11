// SPDX-License-Identifier: MIT
/*
 * lockstep.c - several targets' tests kept in step, and the spans they ran
 *
 * bonnie++ -p/-y: with several copies running at once, each test starts
 * on every target together. Here a struct iotap_workload_lockstep is
 * shared by the contexts of one command: every phase begin
 * (wl_phase_begin, and the pgsql model's init and bench start) waits
 * until every member has reached its own next phase begin or left (a
 * target that failed, finished, or never opened). So a target that runs
 * faster waits at the start of each test instead of running its later
 * tests alone.
 *
 * Every context also logs the spans of its phases (name, start, end),
 * which the CLI uses to say how much of each test ran while the others
 * were running the same test (iotap_workload_ctx_spans()).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "workload_i.h"

struct iotap_workload_lockstep {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned int members;		/* still taking part */
	unsigned int arrived;		/* waiting at the current barrier */
	uint64_t gen;			/* barriers passed */
};

int iotap_workload_lockstep_new(struct iotap_workload_lockstep **out, unsigned int members)
{
	struct iotap_workload_lockstep *ls = calloc(1, sizeof(*ls));

	*out = NULL;
	if (!ls)
		return -ENOMEM;
	pthread_mutex_init(&ls->lock, NULL);
	pthread_cond_init(&ls->cond, NULL);
	ls->members = members;
	*out = ls;
	return 0;
}

void iotap_workload_lockstep_free(struct iotap_workload_lockstep *ls)
{
	if (!ls)
		return;
	pthread_mutex_destroy(&ls->lock);
	pthread_cond_destroy(&ls->cond);
	free(ls);
}

/* With the lock: release the waiters if everyone still in has arrived. */
static void release_if_all(struct iotap_workload_lockstep *ls)
{
	if (ls->arrived && ls->arrived >= ls->members) {
		ls->arrived = 0;
		ls->gen++;
		pthread_cond_broadcast(&ls->cond);
	}
}

void iotap_workload_lockstep_leave(struct iotap_workload_lockstep *ls)
{
	if (!ls)
		return;
	pthread_mutex_lock(&ls->lock);
	if (ls->members)
		ls->members--;
	release_if_all(ls);
	pthread_mutex_unlock(&ls->lock);
}

void wl_lockstep_wait(struct iotap_workload_ctx *c)
{
	struct iotap_workload_lockstep *ls = c->lockstep;
	uint64_t gen;

	if (!ls)
		return;
	pthread_mutex_lock(&ls->lock);
	gen = ls->gen;
	ls->arrived++;
	release_if_all(ls);
	/* an interrupt is a signal handler's flag: look every 100 ms */
	while (ls->gen == gen && !wl_stopped())
		iotap_cond_wait_ns(&ls->cond, &ls->lock, 100000000ull);
	if (ls->gen == gen && ls->arrived)
		ls->arrived--;	/* interrupted: no longer waiting */
	pthread_mutex_unlock(&ls->lock);
}

void iotap_workload_ctx_leave(struct iotap_workload_ctx *c)
{
	if (!c || !c->lockstep)
		return;
	iotap_workload_lockstep_leave(c->lockstep);
	c->lockstep = NULL;
}

void wl_span_log(struct iotap_workload_ctx *c, const char *name, uint64_t t0, uint64_t t1)
{
	struct iotap_workload_span *s;

	pthread_mutex_lock(&c->named_lock);
	if (c->nspans == c->spans_cap) {
		unsigned int cap = c->spans_cap ? 2 * c->spans_cap : 32;
		struct iotap_workload_span *n = realloc(c->spans, cap * sizeof(*n));

		if (!n) {
			pthread_mutex_unlock(&c->named_lock);
			return;	/* the overlap figure then lacks it, nothing else does */
		}
		c->spans = n;
		c->spans_cap = cap;
	}
	s = &c->spans[c->nspans++];
	snprintf(s->name, sizeof(s->name), "%s", name ? name : "");
	s->t0 = t0;
	s->t1 = t1;
	pthread_mutex_unlock(&c->named_lock);
}

unsigned int iotap_workload_ctx_spans(const struct iotap_workload_ctx *c,
				      const struct iotap_workload_span **spans)
{
	*spans = c ? c->spans : NULL;
	return c ? c->nspans : 0;
}
