// SPDX-License-Identifier: MIT
/*
 * pool.c - the tree's thread pool (struct iotap_pool, iotap_base.h)
 *
 * zstd's lib/common/pool.c shape: n threads take jobs, each a function
 * and its argument, from one bounded FIFO under one mutex; adding blocks
 * while the queue is full (iotap_pool_add) or says so (iotap_pool_try_add);
 * iotap_pool_free() lets the threads finish what was queued, then joins
 * them. A job that needs per-thread state (a decompression context) takes
 * it from a small stock of its own: a job never knows its thread.
 *
 * The threads start with every signal blocked, so signals go to the
 * threads that handle them (the tree's rule for threads it starts).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>

#include "iotap_base.h"

struct pool_job {
	void (*fn)(void *arg);
	void *arg;
};

struct iotap_pool {
	pthread_mutex_t lock;
	pthread_cond_t added;		/* a job was queued, or shutdown */
	pthread_cond_t taken;		/* a job left the queue */
	struct pool_job *q;		/* ring of qcap jobs */
	unsigned int qcap, head, n;	/* oldest job, jobs queued */
	int stop;			/* iotap_pool_free(): exit once the queue is empty */
	unsigned int nthreads;
	pthread_t tid[];
};

static void *pool_thread(void *arg)
{
	struct iotap_pool *p = arg;

	pthread_mutex_lock(&p->lock);
	for (;;) {
		struct pool_job j;

		while (!p->n && !p->stop)
			pthread_cond_wait(&p->added, &p->lock);
		if (!p->n)
			break;		/* stopping, and nothing left */
		j = p->q[p->head];
		p->head = (p->head + 1) % p->qcap;
		p->n--;
		pthread_cond_signal(&p->taken);
		pthread_mutex_unlock(&p->lock);
		j.fn(j.arg);
		pthread_mutex_lock(&p->lock);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

int iotap_pool_create(struct iotap_pool **out, unsigned int nthreads, unsigned int queue)
{
	struct iotap_pool *p;
	sigset_t all, old;
	unsigned int i;

	*out = NULL;
	if (!nthreads || !queue)
		return -EINVAL;
	p = calloc(1, sizeof(*p) + nthreads * sizeof(p->tid[0]));
	if (!p)
		return -ENOMEM;
	p->q = calloc(queue, sizeof(*p->q));
	if (!p->q) {
		free(p);
		return -ENOMEM;
	}
	p->qcap = queue;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->added, NULL);
	pthread_cond_init(&p->taken, NULL);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (i = 0; i < nthreads; i++) {
		if (pthread_create(&p->tid[i], NULL, pool_thread, p))
			break;
		p->nthreads++;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!p->nthreads) {
		iotap_pool_free(p);
		return -EAGAIN;
	}
	*out = p;
	return 0;
}

unsigned int iotap_pool_threads(const struct iotap_pool *p)
{
	return p->nthreads;
}

unsigned int iotap_pool_cpus(void)
{
	cpu_set_t cpus;
	int n;

	if (sched_getaffinity(0, sizeof(cpus), &cpus))
		return 1;
	n = CPU_COUNT(&cpus);
	return n > 1 ? (unsigned int)n : 1;
}

static int pool_push(struct iotap_pool *p, void (*fn)(void *arg), void *arg, int wait)
{
	pthread_mutex_lock(&p->lock);
	while (p->n == p->qcap && wait)
		pthread_cond_wait(&p->taken, &p->lock);
	if (p->n == p->qcap) {
		pthread_mutex_unlock(&p->lock);
		return -EAGAIN;
	}
	p->q[(p->head + p->n) % p->qcap] = (struct pool_job){ fn, arg };
	p->n++;
	pthread_cond_signal(&p->added);
	pthread_mutex_unlock(&p->lock);
	return 0;
}

void iotap_pool_add(struct iotap_pool *p, void (*fn)(void *arg), void *arg)
{
	pool_push(p, fn, arg, 1);
}

int iotap_pool_try_add(struct iotap_pool *p, void (*fn)(void *arg), void *arg)
{
	return pool_push(p, fn, arg, 0);
}

void iotap_pool_free(struct iotap_pool *p)
{
	unsigned int i;

	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stop = 1;
	pthread_cond_broadcast(&p->added);
	pthread_mutex_unlock(&p->lock);
	for (i = 0; i < p->nthreads; i++)
		pthread_join(p->tid[i], NULL);
	pthread_cond_destroy(&p->added);
	pthread_cond_destroy(&p->taken);
	pthread_mutex_destroy(&p->lock);
	free(p->q);
	free(p);
}
