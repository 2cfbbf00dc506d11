// SPDX-License-Identifier: MIT
/*
 * phase.c - phase markers: the BEGIN/END records with their time and CPU,
 * the figures of a phase, and progress reports while it runs (owner only)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sys.h"
#include "workload_i.h"

/*
 * sync and drop the page cache if IOTAP_WORKLOAD_DROP_CACHES (root). A
 * failure does not stop the run, which then measures the page cache: the
 * first one is kept for iotap_workload_ctx_drop_error(), and the caller
 * says so.
 */
static void wl_drop_caches(struct iotap_workload_ctx *c)
{
	int fd, err = 0;

	if (!(c->flags & IOTAP_WORKLOAD_DROP_CACHES))
		return;
	sync();
	fd = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		err = -errno;
	else if (write(fd, "3\n", 2) < 0)
		err = -errno;
	if (fd >= 0 && close(fd) && !err)
		err = -errno;
	if (err && !c->drop_err)
		c->drop_err = err;
}

static void mark(struct iotap_workload_ctx *c, const char *name, unsigned int kind,
		 uint64_t *t, uint64_t *u, uint64_t *s, uint64_t aux)
{
	struct sys_who who;

	/* CPU is read on the inside of the span: after the BEGIN time, before END's */
	if (kind == IOTAP_PHASE_END)
		*t = c->rec ? iotap_trace_op_begin(c->rec) : wl_now();
	wl_cpu(c, u, s);
	if (kind == IOTAP_PHASE_BEGIN)
		*t = c->rec ? iotap_trace_op_begin(c->rec) : wl_now();
	if (!c->rec)
		return;
	who = (struct sys_who){ sys_tid(), c->pid, c->uid, c->gid };
	sys_record_phase(c->rec, &who, name, kind, *t, *u, *s, aux);
}

void wl_phase_begin(struct iotap_workload_ctx *c, struct wl_span *s, const char *name,
		    uint64_t total_units, uint64_t unit_bytes)
{
	wl_drop_caches(c);
	/* several targets: every one starts this test together (after its cache drop) */
	wl_lockstep_wait(c);
	memset(s, 0, sizeof(*s));
	s->name = name;
	c->ph_name = name;
	c->ph_total = total_units;
	c->ph_unit_bytes = unit_bytes;
	atomic_store(&c->ph_done, 0);
	c->ph_reported = 0;
	c->ph_last_done = 0;
	mark(c, name, IOTAP_PHASE_BEGIN, &s->t0, &s->u0, &s->s0, 0);
	c->ph_t0 = s->t0;
	c->ph_last_t = s->t0;
	s->open = 1;
}

void wl_phase_unit(struct iotap_workload_ctx *c, struct wl_span *s, uint64_t bytes,
		   uint64_t lat_ns)
{
	s->bytes += bytes;
	s->units++;
	if (lat_ns > s->lat_max)
		s->lat_max = lat_ns;
	atomic_store_explicit(&c->ph_done, s->units, memory_order_relaxed);
}

static void report(struct iotap_workload_ctx *c, uint64_t now, int done, int partial)
{
	struct iotap_workload_progress p = { 0 };
	uint64_t units = atomic_load_explicit(&c->ph_done, memory_order_relaxed);
	double dt = (double)(now - c->ph_last_t) / 1e9;

	p.target = c->dir;
	p.phase = c->ph_name;
	p.fraction = c->ph_total ? (double)units / (double)c->ph_total : 0;
	if (p.fraction > 1)
		p.fraction = 1;
	p.elapsed_s = (double)(now - c->ph_t0) / 1e9;
	if (done) {
		/* the final report gives the phase's average */
		dt = p.elapsed_s;
		c->ph_last_done = 0;
	}
	if (dt > 0) {
		p.units_per_s = (double)(units - c->ph_last_done) / dt;
		p.mb_per_s = p.units_per_s * (double)c->ph_unit_bytes / 1e6;
	}
	p.done = done;
	p.partial = partial;
	c->ph_last_t = now;
	c->ph_last_done = units;
	c->ph_reported = 1;
	c->progress(c->progress_arg, &p);
}

void wl_progress(struct iotap_workload_ctx *c)
{
	uint64_t now;

	if (!c->progress || !c->ph_name)
		return;
	now = wl_now();
	if (now - c->ph_t0 < 2000000000ull || now - c->ph_last_t < 1000000000ull)
		return;
	report(c, now, 0, 0);
}

void wl_phase_end(struct iotap_workload_ctx *c, struct wl_span *s,
		  struct iotap_workload_phase_result *r, int partial)
{
	if (!s->open)
		return;
	/* END's aux: the longest unit, the latency the run reports (FORMAT.md) */
	mark(c, s->name, IOTAP_PHASE_END, &s->t1, &s->u1, &s->s1, s->lat_max);
	s->open = 0;
	wl_span_log(c, s->name, s->t0, s->t1);
	if (c->progress && c->ph_reported)
		report(c, s->t1, 1, partial);
	c->ph_name = NULL;
	memset(r, 0, sizeof(*r));
	r->ran = 1;
	r->partial = partial;
	r->elapsed_s = (double)(s->t1 - s->t0) / 1e9;
	r->cpu_s = (double)((s->u1 - s->u0) + (s->s1 - s->s0)) / 1e9;
	r->latency_max_s = (double)s->lat_max / 1e9;
	r->bytes = s->bytes;
	r->units = s->units;
}
