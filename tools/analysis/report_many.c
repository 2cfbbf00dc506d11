// SPDX-License-Identifier: MIT
/*
 * report_many.c - several traces' reports at once (the fleet report, compare)
 *
 * Each trace's report is iotap_report_build()'s alone: its state is its
 * own and the library keeps none between reports (the open hook and the
 * decoding-thread rule are set before and only read), so building them
 * side by side on threads of the tree's pool (struct iotap_pool) changes
 * no byte of any of them. What differs is only when: @jobs reports are
 * read at once, each with one reading thread (a report's own decoding
 * threads would only compete for the CPUs the other reports use), the
 * first queued first started. Memory is that of @jobs readers at a time,
 * plus the finished reports, which the caller keeps in either case.
 *
 * Errors come in the order of the traces, as one after the other: the
 * first trace that failed is the one named, whichever thread read it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_i.h"

struct many_job {
	struct iotap_report *rep;
	const char *path;
	const struct iotap_report_opts *o;
	int ret;
};

static void many_run(void *arg)
{
	struct many_job *j = arg;

	j->ret = iotap_report_build(j->rep, j->path, j->o);
}

/* How many reports are read at once for @jobs (0: a CPU each) and @n traces. */
static unsigned int reports_jobs(unsigned int jobs, unsigned int n)
{
	if (!jobs)
		jobs = iotap_pool_cpus();
	return jobs < n ? jobs : (n ? n : 1);
}

int iotap_reports_build(struct iotap_report *const *reps, const char *const *paths, unsigned int n,
			const struct iotap_report_opts *o, unsigned int jobs, unsigned int *failed)
{
	struct iotap_report_opts one;
	struct iotap_pool *pool = NULL;
	struct many_job *job;
	unsigned int i, f = n;
	int ret = 0;

	jobs = reports_jobs(jobs, n);
	if (jobs < 2 || iotap_pool_create(&pool, jobs, n)) {
		/* one after the other (also when no thread can start) */
		for (i = 0; i < n; i++) {
			ret = iotap_report_build(reps[i], paths[i], o);
			if (ret) {
				*failed = i;
				return ret;
			}
		}
		return 0;
	}
	if (o)
		one = *o;
	else
		iotap_report_opts_init(&one);
	one.threads = 1;	/* one reading thread each: the reports share the CPUs */
	job = calloc(n, sizeof(*job));
	if (!job) {
		iotap_pool_free(pool);
		memset(reps[0], 0, sizeof(*reps[0]));
		analysis_err_set(&reps[0]->err, -ENOMEM, "out of memory");
		*failed = 0;
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		job[i] = (struct many_job){ .rep = reps[i], .path = paths[i], .o = &one };
		iotap_pool_add(pool, many_run, &job[i]);
	}
	iotap_pool_free(pool);	/* runs what is queued, then joins */
	for (i = 0; i < n; i++) {
		if (f == n && job[i].ret) {
			f = i;
			ret = job[i].ret;
		} else if (f < n && !job[i].ret) {
			iotap_report_release(reps[i]);	/* after the first failure: as if never read */
		}
	}
	free(job);
	if (f < n)
		*failed = f;
	return ret;
}
