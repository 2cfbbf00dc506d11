// SPDX-License-Identifier: MIT
/*
 * threads.c - the helper threads of a phase (bonnie's seekers, iozone -t):
 * start together after getting ready, CPU time added to the context, progress
 * reports from the owner while they run (the contract is in workload_i.h)
 *
 * The helpers run on a pool of their own (iotap_pool) with one thread each,
 * made and freed per run: they wait for each other, so each needs a thread,
 * and their CPU time is their thread's (RUSAGE_THREAD) from its start.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "workload_i.h"

struct thr_one {
	struct wl_threads *t;
	unsigned int i;
	int was_ready, was_done;
};

static __thread struct thr_one *tl_self;

void wl_threads_ready(struct wl_threads *t)
{
	pthread_mutex_lock(&t->lock);
	if (tl_self && !tl_self->was_ready) {
		tl_self->was_ready = 1;
		t->ready++;
		pthread_cond_signal(&t->cond);
	}
	while (!t->go)
		pthread_cond_wait(&t->go_cond, &t->lock);
	pthread_mutex_unlock(&t->lock);
}

/* Count the calling helper's CPU into the context and it as finished (once). */
static void thr_finish(struct thr_one *o)
{
	struct wl_threads *t = o->t;
	uint64_t u, s;

	if (o->was_done)
		return;
	wl_thread_cpu(&u, &s);
	atomic_fetch_add(&t->c->helper_user_ns, u);
	atomic_fetch_add(&t->c->helper_sys_ns, s);
	pthread_mutex_lock(&t->lock);
	o->was_done = 1;
	if (!o->was_ready) {
		/* failed before getting ready: do not keep the others waiting */
		o->was_ready = 1;
		t->ready++;
	}
	t->finished++;
	pthread_cond_signal(&t->cond);
	pthread_mutex_unlock(&t->lock);
}

void wl_threads_done(struct wl_threads *t)
{
	(void)t;
	if (tl_self)
		thr_finish(tl_self);
}

static void thr_main(void *p)
{
	struct thr_one *o = p;
	struct wl_threads *t = o->t;
	int rc;

	tl_self = o;
	rc = t->fn(t, o->i);
	thr_finish(o);
	pthread_mutex_lock(&t->lock);
	if (rc && !t->rc)
		t->rc = rc;
	pthread_mutex_unlock(&t->lock);
	tl_self = NULL;
}

/* Owner: wait (with progress reports) until @count says stop waiting. */
static void thr_wait(struct iotap_workload_ctx *c, struct wl_threads *t, unsigned int *count)
{
	while (*count < t->started) {
		iotap_cond_wait_ns(&t->cond, &t->lock, 250000000ull);
		if (*count < t->started) {
			pthread_mutex_unlock(&t->lock);
			wl_progress(c);
			pthread_mutex_lock(&t->lock);
		}
	}
}

int wl_threads_run(struct iotap_workload_ctx *c, struct wl_threads *t)
{
	struct iotap_pool *pool;
	struct thr_one *one;
	unsigned int i, nthr;
	int ret;

	one = calloc(t->n, sizeof(*one));
	if (!one)
		return -ENOMEM;
	pool = NULL;
	ret = t->n ? iotap_pool_create(&pool, t->n, t->n) : 0;
	t->c = c;
	t->ready = t->finished = t->started = 0;
	t->go = !t->on_ready;
	t->rc = 0;
	pthread_mutex_init(&t->lock, NULL);
	pthread_cond_init(&t->cond, NULL);
	pthread_cond_init(&t->go_cond, NULL);
	/* a helper without a thread of its own would keep the others waiting */
	nthr = pool ? iotap_pool_threads(pool) : 0;
	if (nthr < t->n)
		t->rc = wl_fail(c, ret ? ret : -EAGAIN, "start a thread");
	for (i = 0; i < nthr; i++) {
		one[i].t = t;
		one[i].i = i;
		pthread_mutex_lock(&t->lock);
		t->started++;
		pthread_mutex_unlock(&t->lock);
		iotap_pool_add(pool, thr_main, &one[i]);
	}
	pthread_mutex_lock(&t->lock);
	if (t->on_ready) {
		thr_wait(c, t, &t->ready);
		/* every helper has its files open: the phase starts now */
		pthread_mutex_unlock(&t->lock);
		t->on_ready(t);
		pthread_mutex_lock(&t->lock);
		t->go = 1;
		pthread_cond_broadcast(&t->go_cond);
		if (t->on_go) {
			pthread_mutex_unlock(&t->lock);
			t->on_go(t);
			pthread_mutex_lock(&t->lock);
		}
	}
	thr_wait(c, t, &t->finished);
	pthread_mutex_unlock(&t->lock);
	if (t->on_done)
		t->on_done(t);
	iotap_pool_free(pool);
	pthread_cond_destroy(&t->go_cond);
	pthread_cond_destroy(&t->cond);
	pthread_mutex_destroy(&t->lock);
	free(one);
	return t->rc;
}
