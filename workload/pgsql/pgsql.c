// SPDX-License-Identifier: MIT
/*
 * pgsql.c - `iotap run pgsql`: a PostgreSQL server running pgbench, at the
 * system-call level
 *
 * Read pgsql_i.h first (files, locks). The run:
 *
 *   layout  what initdb leaves (unmarked): DIR/PG_VERSION, global/pg_control
 *           (8 KiB), pg_xact/0000 (pg_clog before 10), pg_logical/, base/DB/,
 *           the first WAL segment (pg_wal, pg_xlog before 10, or --wal-dir)
 *   init    pgbench -i: the four tables created, COPY ... FREEZE of branches,
 *           tellers and accounts through the 16 MiB bulk-write ring (each page
 *           extended with a zero page, logged, written when the ring wraps
 *           after flushing the WAL to it), VACUUM ANALYZE (the 30000-page
 *           sample read), the three primary keys (heap scanned, index pages
 *           written and logged as full pages, the file fsynced)
 *   warmup  the clients' first --warmup of --duration
 *   steady  the rest: the figures pgbench prints are taken here
 *
 * Roles are threads: --clients backends, a WAL writer, a background writer
 * and a checkpointer (wl_threads_run: the owner drives the phases from its
 * on_go callback and loads the database as pgbench -i's one backend).
 *
 * A client runs pgbench's TPC-B transaction (pgsql_client.c).
 *
 * CPU: every role publishes its RUSAGE_THREAD deltas after each
 * transaction or round into one sum, which the PHASE markers carry (any
 * role may cut the marker timeline: the checkpointer's parts do).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "pgsql_i.h"

#define MIB			(1ull << 20)
/* --- options ------------------------------------------------------------------ */

void iotap_workload_pgsql_opts_init(struct iotap_workload_pgsql_opts *o, enum iotap_pgsql_era era)
{
	memset(o, 0, sizeof(*o));
	o->era = era;
	o->scale = 1;
	o->clients = 1;
	o->duration_ns = 60000000000ull;
	o->warmup_ns = o->duration_ns / 10;
	o->shared_buffers = 128 * MIB;
	o->checkpoint_timeout_ns = 300000000000ull;
	o->max_wal_size = 1024 * MIB;
	o->min_wal_size = 80 * MIB;
	o->completion_target = era >= IOTAP_PGSQL_15 ? 0.9 : 0.5;
	o->wal_sync_method = IOTAP_PGSQL_FDATASYNC;
	o->full_page_writes = 1;
	o->sorted_checkpoints = era >= IOTAP_PGSQL_96;
	if (era >= IOTAP_PGSQL_96) {
		o->checkpoint_flush_after = 256u << 10;
		o->bgwriter_flush_after = 512u << 10;
		o->wal_writer_flush_after = 1 * MIB;
	}
	o->bgwriter_delay_ns = 200000000ull;
	o->bgwriter_lru_maxpages = 100;
	o->bgwriter_lru_multiplier = 2.0;
	o->wal_writer_delay_ns = 200000000ull;
	o->io_combine_limit = era >= IOTAP_PGSQL_17 ? 16 : 1;
	o->progress_ns = 5000000000ull;
	if (era == IOTAP_PGSQL_84) {
		o->shared_buffers = 32 * MIB;
		o->wal_buffers = 64u << 10;
		o->checkpoint_segments = 3;
	}
}

const char *iotap_workload_pgsql_era_name(enum iotap_pgsql_era era)
{
	static const char *const n[] = { "8.4", "9.6", "15", "17" };

	return (unsigned int)era < 4 ? n[era] : "?";
}

const char *iotap_workload_pgsql_sync_name(enum iotap_pgsql_sync m)
{
	static const char *const n[] = { "fdatasync", "fsync", "open_datasync", "open_sync" };

	return (unsigned int)m < 4 ? n[m] : "?";
}

void iotap_workload_pgsql_need(const struct iotap_workload_pgsql_opts *o, uint64_t *data_bytes,
			       uint64_t *wal_bytes)
{
	uint64_t acc = (uint64_t)o->scale * 100000, l, pages;
	double tps = o->rate > 0 ? o->rate : 5000;
	uint32_t lv;

	/* accounts twice over (every row's first update moves it), keys, history */
	pages = 2ull * pg_div_up(acc, ACC_PER_PAGE) + pg_btree_pages(acc, &lv) +
		pg_btree_pages(o->scale * 10ull, &lv) + pg_btree_pages(o->scale, &lv) +
		pg_div_up(o->scale * 10ull, TELLERS_PER_PAGE) + pg_div_up(o->scale, BRANCHES_PER_PAGE) + 8;
	l = (uint64_t)(tps * (double)o->duration_ns / 1e9) / HIST_PER_PAGE + 1;
	*data_bytes = (pages + l) * PG_BLCKSZ + 64 * 1024;
	if (o->checkpoint_segments)
		*wal_bytes = (2ull * o->checkpoint_segments + 3) * PG_WAL_SEG;
	else
		*wal_bytes = o->max_wal_size + 3 * PG_WAL_SEG;
}

/* --- roles' shared helpers ------------------------------------------------------ */

void pg_cpu_tick(struct pg *pg, struct pg_cpu *t)
{
	uint64_t u, s;

	wl_thread_cpu(&u, &s);
	if (u > t->u)
		atomic_fetch_add(&pg->cpu_user, u - t->u);
	if (s > t->s)
		atomic_fetch_add(&pg->cpu_sys, s - t->s);
	t->u = u;
	t->s = s;
}

void pg_cpu_start(struct pg_cpu *t)
{
	wl_thread_cpu(&t->u, &t->s);
}

void pg_set_error(struct pg *pg, int err)
{
	int zero = 0;

	if (err && err != -EINTR && atomic_compare_exchange_strong(&pg->err, &zero, err)) {
		pthread_mutex_lock(&pg->state_lock);
		atomic_store(&pg->state, PG_ST_STOP);
		pthread_cond_broadcast(&pg->state_cond);
		pthread_mutex_unlock(&pg->state_lock);
	}
}

int pg_stopping(struct pg *pg)
{
	return atomic_load(&pg->state) == PG_ST_STOP || wl_stopped();
}

void pg_nap(struct pg *pg, uint64_t ns)
{
	uint64_t dl = wl_now() + ns;

	pthread_mutex_lock(&pg->state_lock);
	if (!pg_stopping(pg))
		iotap_cond_wait_until(&pg->state_cond, &pg->state_lock, dl);
	pthread_mutex_unlock(&pg->state_lock);
}

static void set_state(struct pg *pg, enum pg_state st)
{
	pthread_mutex_lock(&pg->state_lock);
	atomic_store(&pg->state, st);
	pthread_cond_broadcast(&pg->state_cond);
	pthread_mutex_unlock(&pg->state_lock);
}

void pg_phase_update(struct pg *pg, struct pg_cpu *t)
{
	const char *name;
	uint64_t ts;

	pthread_mutex_lock(&pg->phase_lock);
	name = pg->ckpt_phase[0] ? pg->ckpt_phase : pg->base_phase;
	if (pg->phase_open && name && !strcmp(pg->open_phase, name) &&
	    pg->ckpt_phase[0] && pg->base_phase && pg->base_phase != pg->marked_base) {
		/*
		 * warmup or steady began while a checkpoint part runs: its marker
		 * still goes in (an empty phase), then the checkpoint part resumes
		 */
		pg_cpu_tick(pg, t);
		wl_mark(pg->c, pg->open_phase, IOTAP_PHASE_END, atomic_load(&pg->cpu_user),
			atomic_load(&pg->cpu_sys), &ts);
		wl_mark(pg->c, pg->base_phase, IOTAP_PHASE_BEGIN, atomic_load(&pg->cpu_user),
			atomic_load(&pg->cpu_sys), &ts);
		wl_mark(pg->c, pg->base_phase, IOTAP_PHASE_END, atomic_load(&pg->cpu_user),
			atomic_load(&pg->cpu_sys), &ts);
		wl_mark(pg->c, pg->open_phase, IOTAP_PHASE_BEGIN, atomic_load(&pg->cpu_user),
			atomic_load(&pg->cpu_sys), &ts);
		pg->marked_base = pg->base_phase;
		pthread_mutex_unlock(&pg->phase_lock);
		return;
	}
	if (pg->phase_open && name && !strcmp(pg->open_phase, name)) {
		pthread_mutex_unlock(&pg->phase_lock);
		return;
	}
	pg_cpu_tick(pg, t);
	if (pg->phase_open)
		wl_mark(pg->c, pg->open_phase, IOTAP_PHASE_END, atomic_load(&pg->cpu_user),
			atomic_load(&pg->cpu_sys), &ts);
	pg->phase_open = 0;
	if (name) {
		snprintf(pg->open_phase, sizeof(pg->open_phase), "%s", name);
		wl_mark(pg->c, pg->open_phase, IOTAP_PHASE_BEGIN, atomic_load(&pg->cpu_user),
			atomic_load(&pg->cpu_sys), &ts);
		pg->phase_open = 1;
		pg->marked_base = pg->base_phase;
	}
	pthread_mutex_unlock(&pg->phase_lock);
}


static void role_ready(struct wl_threads *t)
{
	(void)t;
}

static int role_main(struct wl_threads *t, unsigned int i)
{
	struct pg_run *run = t->arg;
	struct pg *pg = &run->pg;
	struct pg_cpu cpu;
	int ret;

	pg_cpu_start(&cpu);
	wl_threads_ready(t);
	if (i < pg->o->clients)
		ret = pg_client_main(run, i, &cpu);
	else if (i == pg->o->clients)
		ret = pg_walwriter(pg, &cpu);
	else if (i == pg->o->clients + 1)
		ret = pg_bgwriter(pg, &cpu);
	else
		ret = pg_checkpointer(pg, &cpu);
	pg_cpu_tick(pg, &cpu);
	pg_set_error(pg, ret);
	return 0;
}

/* --- the owner: phases ------------------------------------------------------------------- */

static void snap(struct pg *pg, struct iotap_workload_pgsql_io *io)
{
	io->txns = atomic_load(&pg->cnt.txns);
	io->wal_bytes = atomic_load(&pg->cnt.wal_bytes);
	io->wal_writes = atomic_load(&pg->cnt.wal_writes);
	io->wal_write_bytes = atomic_load(&pg->cnt.wal_write_bytes);
	io->wal_syncs = atomic_load(&pg->cnt.wal_syncs);
	io->data_reads = atomic_load(&pg->cnt.data_reads);
	io->data_writes = atomic_load(&pg->cnt.data_writes);
	io->writes_ckpt = atomic_load(&pg->cnt.writes_ckpt);
	io->writes_bgwriter = atomic_load(&pg->cnt.writes_bgwriter);
	io->writes_backend = atomic_load(&pg->cnt.writes_backend);
	io->extends = atomic_load(&pg->cnt.extends);
	io->fsyncs = atomic_load(&pg->cnt.fsyncs);
	io->writebacks = atomic_load(&pg->cnt.writebacks);
	io->fpw = atomic_load(&pg->cnt.fpw);
	io->prefetches = atomic_load(&pg->cnt.prefetches);
}

static void io_diff(struct iotap_workload_pgsql_io *d, const struct iotap_workload_pgsql_io *a,
		    const struct iotap_workload_pgsql_io *b)
{
	const uint64_t *pa = (const uint64_t *)a, *pb = (const uint64_t *)b;
	uint64_t *pd = (uint64_t *)d;
	size_t i;

	for (i = 0; i < sizeof(*d) / sizeof(uint64_t); i++)
		pd[i] = pb[i] - pa[i];
}

struct span {
	uint64_t t, u, s;
};

static void span_mark(struct pg *pg, struct pg_cpu *cpu, struct span *sp)
{
	pg_cpu_tick(pg, cpu);
	sp->t = wl_now();
	sp->u = atomic_load(&pg->cpu_user);
	sp->s = atomic_load(&pg->cpu_sys);
}

/* The trace's copy of a period the run's figures are taken over (an APP SPAN). */
static void span_app(struct pg *pg, const char *name, uint64_t t0, uint64_t t1, int partial)
{
	if (strcmp(name, "commit"))
		wl_span_log(pg->c, name, t0, t1);
	struct iotap_trace_rec ar;

	iotap_trace_app_span_init(&ar, name, t0, t1 - t0, partial ? IOTAP_APPF_PARTIAL : 0);
	wl_app(pg->c, &ar);
}

static void span_app_begin(struct pg *pg, const char *name, uint64_t t0)
{
	struct iotap_trace_rec ar;

	iotap_trace_app_span_init(&ar, name, t0, 0, IOTAP_APPF_BEGIN);
	wl_app(pg->c, &ar);
}

static void span_result(const struct span *a, const struct span *b, int partial, uint64_t units,
			struct iotap_workload_phase_result *r)
{
	r->ran = 1;
	r->partial = partial;
	r->elapsed_s = (double)(b->t - a->t) / 1e9;
	r->cpu_s = (double)((b->u - a->u) + (b->s - a->s)) / 1e9;
	r->units = units;
}

static void progress(struct pg *pg, const char *phase, uint64_t t0, uint64_t total,
		     uint64_t *last_t, uint64_t *last_n, int done, int partial)
{
	struct iotap_workload_ctx *c = pg->c;
	struct iotap_workload_progress p = { 0 };
	uint64_t now = wl_now(), n = atomic_load(&pg->cnt.txns);

	if (!c->progress || (!done && now - *last_t < 1000000000ull))
		return;
	p.target = c->dir;
	p.phase = phase;
	p.elapsed_s = (double)(now - t0) / 1e9;
	p.fraction = total ? (double)(now - t0) / (double)total : 1;
	if (p.fraction > 1)
		p.fraction = 1;
	if (now > *last_t)
		p.units_per_s = (double)(n - *last_n) / ((double)(now - *last_t) / 1e9);
	p.done = done;
	p.partial = partial;
	*last_t = now;
	*last_n = n;
	c->progress(c->progress_arg, &p);
}

/* Sleep until @until, reporting progress; 1 if the run stopped meanwhile. */
static int wait_phase(struct pg_run *run, const char *phase, uint64_t t0, uint64_t until)
{
	struct pg *pg = &run->pg;
	uint64_t last_t = t0, last_n = atomic_load(&pg->cnt.txns);

	while (wl_now() < until && !pg_stopping(pg)) {
		uint64_t left = until - wl_now();

		pg_nap(pg, left < 250000000ull ? left : 250000000ull);
		progress(pg, phase, t0, until - t0, &last_t, &last_n, 0, 0);
	}
	progress(pg, phase, t0, until - t0, &last_t, &last_n, 1, pg_stopping(pg) &&
		 wl_now() < until);
	return pg_stopping(pg) && wl_now() < until;
}

static void drive(struct wl_threads *t)
{
	struct pg_run *run = t->arg;
	struct pg *pg = &run->pg;
	const struct iotap_workload_pgsql_opts *o = pg->o;
	struct iotap_workload_pgsql_result *r = pg->r;
	struct iotap_workload_pgsql_io a, b;
	struct span s0, s1, s2, s3;
	struct pg_cpu cpu;
	uint64_t sync_from = 0;
	int stopped;

	pg_cpu_start(&cpu);
	wl_lockstep_wait(pg->c);	/* several targets: the loads start together */
	pthread_mutex_lock(&pg->phase_lock);
	pg->base_phase = "init";
	pthread_mutex_unlock(&pg->phase_lock);
	pg_phase_update(pg, &cpu);
	span_mark(pg, &cpu, &s0);
	snap(pg, &a);
	run->ret = pg_init_load(pg);
	snap(pg, &b);
	io_diff(&r->io_init, &a, &b);
	span_mark(pg, &cpu, &s1);
	span_result(&s0, &s1, run->ret != 0, 0, &r->init);
	span_app(pg, "init", s0.t, s1.t, run->ret != 0);
	if (run->ret) {
		pg_set_error(pg, run->ret);
		goto out;
	}
	/* the clients start (on every target together): warm-up, then steady */
	wl_lockstep_wait(pg->c);
	pg->bench_t0 = wl_now();
	pg->steady_t0 = pg->bench_t0 + o->warmup_ns;
	run->end_ns = pg->bench_t0 + o->duration_ns;
	run->next_ns = (double)pg->bench_t0;
	snap(pg, &a);
	/* the connections are part of the run, as pgbench's are of -T */
	pthread_mutex_lock(&pg->phase_lock);
	pg->base_phase = o->warmup_ns ? "warmup" : "steady";
	pthread_mutex_unlock(&pg->phase_lock);
	pg_phase_update(pg, &cpu);
	/* pgbench's own first connection (it asks pgbench_branches for the scale) */
	run->ret = pg_backend_start(pg);
	if (run->ret) {
		pg_set_error(pg, run->ret);
		goto out;
	}
	set_state(pg, PG_ST_BENCH);
	stopped = o->warmup_ns ? wait_phase(run, "warmup", pg->bench_t0, pg->steady_t0) : 0;
	span_mark(pg, &cpu, &s2);
	snap(pg, &b);
	io_diff(&r->io_warmup, &a, &b);
	if (o->warmup_ns)
		span_result(&s1, &s2, stopped, r->io_warmup.txns, &r->warmup);
	r->warmup.elapsed_s = (double)(s2.t - pg->bench_t0) / 1e9;
	span_app(pg, "warmup", pg->bench_t0, s2.t, stopped);
	if (!stopped) {
		pthread_mutex_lock(&pg->phase_lock);
		pg->base_phase = "steady";
		pthread_mutex_unlock(&pg->phase_lock);
		pg_phase_update(pg, &cpu);
		pthread_mutex_lock(&pg->wal.write_lock);
		pg->sync_steady = 1;
		sync_from = wl_now();
		span_app_begin(pg, "commit", sync_from);
		pthread_mutex_unlock(&pg->wal.write_lock);
		stopped = wait_phase(run, "steady", s2.t, run->end_ns);
		pthread_mutex_lock(&pg->wal.write_lock);
		pg->sync_steady = 0;
		span_app(pg, "commit", sync_from, wl_now(), stopped);
		pthread_mutex_unlock(&pg->wal.write_lock);
		span_mark(pg, &cpu, &s3);
		snap(pg, &a);
		io_diff(&r->io_steady, &b, &a);
		span_result(&s2, &s3, stopped, r->io_steady.txns, &r->steady);
		wl_span_log(pg->c, "steady", s2.t, s3.t);
		{
			/* with the model's own CPU over it: report prints CPU per transaction */
			struct iotap_trace_rec ar;

			iotap_trace_app_span_init(&ar, "steady", s2.t, s3.t - s2.t,
						  stopped ? IOTAP_APPF_PARTIAL : 0);
			iotap_trace_app_span_set_cpu(&ar, s3.u - s2.u, s3.s - s2.s);
			wl_app(pg->c, &ar);
		}
		/* the steady CPU in us; results() divides by the steady transactions */
		r->cpu_user_us_per_txn = (double)(s3.u - s2.u) / 1e3;
		r->cpu_sys_us_per_txn = (double)(s3.s - s2.s) / 1e3;
	}
out:
	set_state(pg, PG_ST_STOP);
	pthread_mutex_lock(&pg->phase_lock);
	pg->base_phase = NULL;
	pg->ckpt_phase[0] = '\0';
	pthread_mutex_unlock(&pg->phase_lock);
	pg_phase_update(pg, &cpu);
}

/* --- the run ------------------------------------------------------------------------------ */

static void results(struct pg_run *run)
{
	struct pg *pg = &run->pg;
	const struct iotap_workload_pgsql_opts *o = pg->o;
	struct iotap_workload_pgsql_result *r = pg->r;
	static const double q[IOTAP_PGSQL_PCT] = { 0.5, 0.9, 0.95, 0.99, 0.999, 1.0 };
	double lag = 0, span_all;
	uint64_t lag_n = 0, i;
	unsigned int k;

	double sumsq = 0;

	for (k = 0; k < o->clients; k++) {
		struct pg_client *cl = &run->cl[k];

		if (iotap_hist_merge(&pg->lat, &cl->lat))
			r->failed = 1;
		sumsq += cl->lat_sq_steady;
		r->txns_all += cl->n_all;
		lag += cl->lag_sum;
		lag_n += cl->lag_n;
		if (cl->lag_max / 1e6 > r->lag_max_ms)
			r->lag_max_ms = (double)cl->lag_max / 1e6;
		r->late += cl->late;
	}
	if (pg->lat.n) {
		double m = (double)pg->lat.sum / (double)pg->lat.n;

		r->lat_avg_ms = m / 1e6;
		r->lat_stddev_ms = sqrt(fmax(0, sumsq / (double)pg->lat.n - m * m)) / 1e6;
		for (k = 0; k < IOTAP_PGSQL_PCT; k++)
			r->lat_pct_ms[k] = (double)iotap_hist_quantile(&pg->lat, q[k]) / 1e6;
	}
	r->lag_avg_ms = lag_n ? lag / (double)lag_n / 1e6 : 0;
	span_all = r->warmup.elapsed_s + r->steady.elapsed_s;
	r->tps_all = span_all > 0 ? (double)r->txns_all / span_all : 0;
	r->tps_steady = r->steady.elapsed_s > 0 ? (double)pg->lat.n / r->steady.elapsed_s : 0;
	/*
	 * per transaction counted as tps (excluding warm-up) counts them, the
	 * trace's STEADY TXN records, so that report prints the same figure
	 */
	r->cpu_user_us_per_txn = pg->lat.n ? r->cpu_user_us_per_txn / (double)pg->lat.n : 0;
	r->cpu_sys_us_per_txn = pg->lat.n ? r->cpu_sys_us_per_txn / (double)pg->lat.n : 0;
	r->sync_n = pg->sync.n;
	r->sync_commit_n = pg->sync_commit;
	r->sync_p50_ms = (double)iotap_hist_quantile(&pg->sync, 0.5) / 1e6;
	r->sync_p99_ms = (double)iotap_hist_quantile(&pg->sync, 0.99) / 1e6;
	r->sync_max_ms = (double)pg->sync.max / 1e6;
	r->nintervals = 0;
	if (pg->niv) {
		r->interval_tps = calloc(pg->niv, sizeof(double));
		r->interval_lat_ms = calloc(pg->niv, sizeof(double));
		if (r->interval_tps && r->interval_lat_ms) {
			uint64_t last = (uint64_t)(span_all * 1e9) / o->progress_ns;

			for (i = 0; i < pg->niv && i < last; i++) {
				uint64_t n = atomic_load(&pg->iv_n[i]);

				r->interval_tps[i] = (double)n / ((double)o->progress_ns / 1e9);
				r->interval_lat_ms[i] = n ? (double)atomic_load(&pg->iv_lat_us[i]) /
							    (double)n / 1e3 : 0;
				r->nintervals++;
			}
		}
	}
	for (k = 0; k < PG_NREL && k < 7; k++)
		r->rel_pages[k] = pg->rel[k].nblocks;
}

static int check_opts(const struct iotap_workload_pgsql_opts *o)
{
	if (!o->scale || !o->clients || o->clients > 1000 || !o->duration_ns ||
	    o->warmup_ns >= o->duration_ns || o->shared_buffers < 16 * PG_BLCKSZ ||
	    o->shared_buffers / PG_BLCKSZ > UINT32_MAX / 4 || !o->checkpoint_timeout_ns ||
	    o->completion_target < 0 || o->completion_target > 1 || !o->progress_ns ||
	    o->rate < 0 || (uint64_t)o->scale * 100000 > UINT32_MAX / 2)
		return -EINVAL;
	return 0;
}

int iotap_workload_pgsql_run(struct iotap_workload_ctx *c,
			     const struct iotap_workload_pgsql_opts *o,
			     struct iotap_workload_pgsql_result *r)
{
	struct pg_run *run;
	struct pg *pg;
	unsigned int i;
	int ret;

	memset(r, 0, sizeof(*r));
	if (c->dirfd < 0)
		return -ENOTDIR;
	ret = check_opts(o);
	if (ret)
		return ret;
	run = calloc(1, sizeof(*run));
	if (!run)
		return -ENOMEM;
	pg = &run->pg;
	pg->c = c;
	pg->o = o;
	pg->r = r;
	pg->basefd = pg->globalfd = pg->xactfd = pg->logicalfd = pg->wal.dirfd = pg->tmpfd = -1;
	pg->wal.f.fd = -1;
	pthread_mutex_init(&pg->state_lock, NULL);
	pthread_cond_init(&pg->state_cond, NULL);
	pthread_mutex_init(&pg->phase_lock, NULL);
	pthread_mutex_init(&pg->res_lock, NULL);
	pthread_mutex_init(&pg->ext_lock, NULL);
	pthread_mutex_init(&run->sched_lock, NULL);
	atomic_init(&pg->state, PG_ST_INIT);
	atomic_init(&pg->epoch, 1);
	atomic_init(&pg->next_xid, 735);
	pg->naccounts = o->scale * 100000u;
	pg->ntellers = o->scale * 10u;
	pg->nbranches = o->scale;
	if (o->checkpoint_segments) {
		pg->ckpt_segs = o->checkpoint_segments;
	} else {
		pg->ckpt_segs = (uint64_t)((double)(o->max_wal_size / PG_WAL_SEG) /
					   (1.0 + o->completion_target));
		if (pg->ckpt_segs < 1)
			pg->ckpt_segs = 1;
	}
	pg->niv = (unsigned int)(o->duration_ns / o->progress_ns) + 2;
	pg->page = wl_buf_alloc(PG_BLCKSZ);
	pg->moved = calloc(pg->naccounts / ACC_PER_PAGE / 8 + 1, 1);
	pg->iv_n = calloc(pg->niv, sizeof(*pg->iv_n));
	pg->iv_lat_us = calloc(pg->niv, sizeof(*pg->iv_lat_us));
	run->cl = calloc(o->clients, sizeof(*run->cl));
	if (!pg->page || !pg->moved || !pg->iv_n || !pg->iv_lat_us || !run->cl) {
		ret = -ENOMEM;
		goto out_free;
	}
	memset(pg->page, 0x3c, PG_BLCKSZ);
	run->sched_rnd = 0x2545f4914f6cdd1dull ^ ((uint64_t)o->seed << 1);
	for (i = 0; i < o->clients; i++)
		run->cl[i].rnd = 0x9e3779b97f4a7c15ull * (i + 1) ^ ((uint64_t)o->seed << 17) ^ 1;
	ret = pg_pool_init(pg);
	if (!ret)
		ret = pg_wal_init(pg);
	if (ret)
		goto out_free;
	pg->t0 = wl_now();
	ret = pg_layout(pg);
	if (!ret) {
		struct wl_threads t = {
			.n = o->clients + 3, .fn = role_main, .arg = run,
			.on_ready = role_ready, .on_go = drive,
		};

		ret = wl_threads_run(c, &t);
		if (!ret)
			ret = run->ret;
		if (!ret)
			ret = atomic_load(&pg->err);
		results(run);
	}
	pg_teardown(pg);
	if (!ret && wl_stopped())
		ret = -EINTR;
	wl_outcome(ret, 0, &r->partial, &r->failed);
out_free:
	pg_wal_release(pg);
	pg_pool_release(pg);
	free(pg->page);
	free(pg->moved);
	free(pg->iv_n);
	free(pg->iv_lat_us);
	for (i = 0; run->cl && i < o->clients; i++)
		iotap_hist_release(&run->cl[i].lat);
	iotap_hist_release(&pg->lat);
	iotap_hist_release(&pg->sync);
	free(run->cl);
	free(run);
	return ret;
}

void iotap_workload_pgsql_result_release(struct iotap_workload_pgsql_result *r)
{
	free(r->interval_tps);
	free(r->interval_lat_ms);
	free(r->ckpt);
	r->interval_tps = r->interval_lat_ms = NULL;
	r->ckpt = NULL;
	r->nckpt = r->nintervals = 0;
}
