// SPDX-License-Identifier: MIT
/*
 * replay.c - iotap replay: open (scan), check or prepare the target, run,
 * report
 *
 * The run, in order:
 *   1. one mapping holds the shared state: struct rp_shared, the lanes
 *      with their rings and byte rings (sized from the scan's per-lane op
 *      counts within a memory budget), the per-lane statistics. With
 *      --processes it is MAP_SHARED and made before any fork;
 *   2. --processes: one child process per recorded process, each running
 *      its lanes as threads and writing its own part of the trace;
 *   3. the loader thread starts filling the rings (load.c); the
 *      replay starts when the rings are full or the trace is loaded, so
 *      that a trace that fits is replayed without the loader competing;
 *   4. the start time is set and every lane released; this thread reports
 *      progress once a second and turns an interrupt into a stop;
 *   5. the lanes end with the loader's END ops; the statistics are merged;
 *      --processes: the parts are merged into the output trace in start
 *      order.
 *
 * The output trace is a normal iotap trace: source "replay", workload =
 * the replayed trace, backing = the target; the root NAME names the
 * target; file, handle, thread and process ids are the capture's, so that
 * `iotap compare` and `report --by` line up capture and replay.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "iotap_base.h"
#include "replay_i.h"

#define RING_BUDGET	(512ull << 20)	/* all op rings together, bytes */
#define RING_MIN	256u		/* ops per lane, at least */
#define RING_MAX	(1u << 22)
#define BYTES_MIN	(256u << 10)	/* byte ring per lane, at least */
#define BYTES_MAX	(64u << 20)
#define BYTES_PER_OP	64u

static uint64_t pow2_at_least(uint64_t v)
{
	uint64_t p = 1;

	while (p < v)
		p *= 2;
	return p;
}

/* --- open ----------------------------------------------------------------------- */

static int open_base(struct iotap_replay *r, unsigned int i, const char *path)
{
	struct stat st;
	char *real;

	real = realpath(path, NULL);
	if (!real)
		return rp_what(r, -errno, "%s", path);
	r->base_path[i] = real;
	r->base_fd[i] = open(real, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (r->base_fd[i] < 0)
		return rp_what(r, errno == ENOTDIR ? -ENOTDIR : -errno, "%s", path);
	if (fstat(r->base_fd[i], &st))
		return rp_what(r, -errno, "%s", path);
	return 0;
}

int iotap_replay_open(struct iotap_replay **out,
			       const struct iotap_replay_opts *o)
{
	struct iotap_replay *r;
	unsigned int i;
	int ret;

	*out = NULL;
	if (o->nmaps > RP_MAPS_MAX)
		return -E2BIG;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->o = *o;
	for (i = 0; i <= RP_MAPS_MAX; i++)
		r->base_fd[i] = -1;
	pthread_mutex_init(&r->pre_lock, NULL);
	pthread_cond_init(&r->pre_cond, NULL);
	r->data.mode = o->data;
	r->data.ratio = o->data_ratio >= 1 ? o->data_ratio : 1;
	r->as_root = geteuid() == 0;
	r->nmaps = o->nmaps;
	for (i = 0; i < o->nmaps; i++) {
		r->maps[i].old_arg = o->maps[i].old_path;
		r->maps[i].new_path = strdup(o->maps[i].new_path);
		if (!r->maps[i].new_path) {
			ret = -ENOMEM;
			goto err;
		}
	}
	ret = open_base(r, 0, o->target);
	if (ret)
		goto err;
	r->target = r->base_path[0];
	ret = rp_scan(r);
	if (ret)
		goto err;
	/* the scan sorted the maps: their directories follow that order */
	for (i = 0; i < r->nmaps; i++) {
		ret = open_base(r, 1 + i, r->maps[i].new_path);
		if (ret)
			goto err;
	}
	*out = r;
	return 0;
err:
	*out = r;	/* so that the caller can read what failed; close frees it */
	return ret;
}

const struct iotap_replay_plan *
iotap_replay_plan(const struct iotap_replay *r)
{
	return &r->plan;
}

const char *iotap_replay_what(const struct iotap_replay *r)
{
	return r ? r->what : "";
}

int iotap_replay_check(struct iotap_replay *r, FILE *f, unsigned int max)
{
	return rp_state_check(r, f, max);
}

int iotap_replay_changes(struct iotap_replay *r, FILE *f, unsigned int max)
{
	return rp_state_changes(r, f, max);
}

int iotap_replay_prepare(struct iotap_replay *r, FILE *f)
{
	return rp_state_prepare(r, f);
}

const char *iotap_replay_space(struct iotap_replay *r)
{
	if (!r->space_warning[0] && rp_state_space(r, 0))
		return NULL;
	return r->space_warning[0] ? r->space_warning : NULL;
}

/* --- the shared state ------------------------------------------------------------ */

static int shared_alloc(struct iotap_replay *r)
{
	uint64_t ops_total = 0, budget_ops = RING_BUDGET / sizeof(struct rp_op), total;
	size_t off;
	uint32_t i, np = 0;
	uint32_t *pids;
	char *base;

	for (i = 0; i < r->nlanes; i++)
		ops_total += r->lane_ops[i];
	total = pow2_at_least(sizeof(struct rp_shared));
	total += (uint64_t)r->nlanes * (sizeof(struct rp_lane) + sizeof(struct rp_lane_stats));
	/* the budget shared in proportion to each lane's ops */
	for (i = 0; i < r->nlanes; i++) {
		uint64_t cap = r->lane_ops[i] + 1, bcap;
		uint64_t share = ops_total <= budget_ops ? cap
				 : (uint64_t)((double)budget_ops * (double)r->lane_ops[i] / (double)ops_total);

		if (cap > share)
			cap = share;
		if (cap > RING_MAX)
			cap = RING_MAX;
		cap = pow2_at_least(cap < RING_MIN ? RING_MIN : cap);
		bcap = cap * BYTES_PER_OP;
		if (bcap < BYTES_MIN)
			bcap = BYTES_MIN;
		if (bcap < (uint64_t)r->nlanes * sizeof(struct rp_dep) * 4 + 3 * RP_PATH_MAX)
			bcap = (uint64_t)r->nlanes * sizeof(struct rp_dep) * 4 + 3 * RP_PATH_MAX;
		bcap = pow2_at_least(bcap > BYTES_MAX ? BYTES_MAX : bcap);
		r->lane_ops[i] = cap;		/* reused: now the ring size */
		total += cap * sizeof(struct rp_op) + bcap + 128;
	}
	total = (total + 4095) & ~4095ull;
	base = mmap(NULL, total, PROT_READ | PROT_WRITE,
		    (r->o.flags & IOTAP_REPLAY_PROCESSES ? MAP_SHARED : MAP_PRIVATE) |
		    MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (base == MAP_FAILED)
		return -ENOMEM;
	r->sh = (struct rp_shared *)base;
	r->sh_bytes = total;
	off = pow2_at_least(sizeof(struct rp_shared));
	r->sh->nlanes = r->nlanes;
	r->sh->lanes = (struct rp_lane *)(base + off);
	off += (size_t)r->nlanes * sizeof(struct rp_lane);
	r->sh->stats = (struct rp_lane_stats *)(base + off);
	off += (size_t)r->nlanes * sizeof(struct rp_lane_stats);
	pids = calloc(r->nlanes + 1, sizeof(*pids));
	if (!pids)
		return -ENOMEM;
	for (i = 0; i < r->nlanes; i++) {
		struct rp_lane *ln = &r->sh->lanes[i];
		uint64_t bcap;
		uint32_t p;

		off = (off + 63) & ~(size_t)63;
		ln->cap = r->lane_ops[i];
		ln->ring = (struct rp_op *)(base + off);
		off += ln->cap * sizeof(struct rp_op);
		bcap = ln->cap * BYTES_PER_OP;
		if (bcap < BYTES_MIN)
			bcap = BYTES_MIN;
		if (bcap < (uint64_t)r->nlanes * sizeof(struct rp_dep) * 4 + 3 * RP_PATH_MAX)
			bcap = (uint64_t)r->nlanes * sizeof(struct rp_dep) * 4 + 3 * RP_PATH_MAX;
		ln->bcap = pow2_at_least(bcap > BYTES_MAX ? BYTES_MAX : bcap);
		off = (off + 63) & ~(size_t)63;
		ln->bytes = base + off;
		off += ln->bcap;
		ln->proc = 0;
		if (r->o.flags & IOTAP_REPLAY_PROCESSES) {
			for (p = 0; p < np; p++)
				if (pids[p] == r->lane_pid[i])
					break;
			if (p == np)
				pids[np++] = r->lane_pid[i];
			ln->proc = p;
		}
	}
	free(pids);
	r->nprocs = np ? np : 1;
	return 0;
}

/* --- the output trace ------------------------------------------------------------ */

static void header_fill(struct iotap_replay *r, struct iotap_trace_header *h)
{
	iotap_trace_header_init(h, IOTAP_SOURCE_REPLAY);
	h->capture_mode = IOTAP_MODE_NONE;
	h->cmdline = r->o.cmdline;
	h->backing = r->target;
	h->workload = r->o.trace;
	if (!r->layout && iotap_trace_layout(r->target, &r->layout))
		r->layout = NULL;	/* not known: the header goes without it */
	h->layout = r->layout;
}

static void root_name(struct iotap_replay *r, struct iotap_trace_rec *rec, uint64_t t)
{
	const struct rp_entry *e = r->nentries ? &r->entries[0] : NULL;

	iotap_trace_name_init(rec, r->root_id, 0, e ? e->mode : S_IFDIR | 0755, e ? e->uid : 0,
			      e ? e->gid : 0, 0, 0, r->target, (uint32_t)strlen(r->target));
	rec->time_ns = t;
	rec->pid = (uint32_t)getpid();
	rec->tid = rec->pid;
}

static int recorder_open(struct iotap_replay *r, const char *path,
			 struct iotap_trace_recorder **out)
{
	struct iotap_trace_recorder_opts ro = { 0 };
	struct iotap_trace_header h;
	struct iotap_trace_rec rec;
	int ret;

	header_fill(r, &h);
	ro.flags = r->o.flags & IOTAP_REPLAY_TRACE_FORCE ? IOTAP_TRACE_FORCE : 0;
	ro.sample_path = r->target;
	ro.max_bytes = 256u << 20;
	ro.buf_bytes = 1u << 20;
	ret = iotap_trace_recorder_open(out, path, &h, &ro);
	if (ret)
		return ret;
	root_name(r, &rec, iotap_trace_op_begin(*out));
	iotap_trace_record(*out, &rec);
	return 0;
}

/*
 * --processes: every child wrote PATH.part.N; merge them in start order
 * into the output trace (the reader gives each part in start order).
 */
static int merge_parts(struct iotap_replay *r, uint32_t nparts)
{
	struct iotap_trace_reader **rd;
	struct iotap_trace_rec *cur;
	struct iotap_trace_writer *w;
	struct iotap_trace_header h;
	struct iotap_trace_rec rec;
	char path[PATH_MAX];
	int *live, ret, ret2;
	uint32_t i;

	rd = calloc(nparts, sizeof(*rd));
	cur = calloc(nparts, sizeof(*cur));
	live = calloc(nparts, sizeof(*live));
	if (!rd || !cur || !live) {
		ret = -ENOMEM;
		goto out_free;
	}
	header_fill(r, &h);
	ret = iotap_trace_writer_open(&w, r->o.out_trace, &h, r->o.flags & IOTAP_REPLAY_TRACE_FORCE
						      ? IOTAP_TRACE_FORCE : 0);
	if (ret)
		goto out_free;
	for (i = 0; i < nparts; i++) {
		snprintf(path, sizeof(path), "%s.part.%u", r->o.out_trace, i);
		if (iotap_trace_reader_open(&rd[i], path, 0))
			continue;
		live[i] = iotap_trace_reader_next(rd[i], &cur[i]) > 0;
	}
	root_name(r, &rec, 0);
	/* the earliest record of all parts */
	for (i = 0; i < nparts; i++)
		if (live[i] && (!rec.time_ns || cur[i].time_ns < rec.time_ns))
			rec.time_ns = cur[i].time_ns;
	ret = iotap_trace_writer_append(w, &rec);
	for (;;) {
		uint32_t best = nparts;

		for (i = 0; i < nparts; i++)
			if (live[i] && (best == nparts || cur[i].time_ns < cur[best].time_ns))
				best = i;
		if (best == nparts || ret)
			break;
		/* every part has its own root NAME and END: the merged file has one */
		if (cur[best].type != IOTAP_REC_END &&
		    !(cur[best].type == IOTAP_REC_NAME && !cur[best].file2))
			ret = iotap_trace_writer_append(w, &cur[best]);
		live[best] = iotap_trace_reader_next(rd[best], &cur[best]) > 0;
	}
	ret2 = iotap_trace_writer_close(w);
	if (!ret)
		ret = ret2;
	for (i = 0; i < nparts; i++) {
		if (rd[i])
			iotap_trace_reader_close(rd[i]);
		snprintf(path, sizeof(path), "%s.part.%u", r->o.out_trace, i);
		unlink(path);
	}
out_free:
	free(rd);
	free(cur);
	free(live);
	return ret;
}

/* --- run ---------------------------------------------------------------------------- */

struct runner {
	struct iotap_replay *r;
	struct iotap_trace_recorder *rec;
	pthread_t thread;
	int ret;
};

static void *loader_main(void *arg)
{
	struct runner *ru = arg;

	ru->ret = rp_load(ru->r);
	if (ru->ret && ru->ret != -EINTR)
		rp_wake_all(ru->r->sh);
	pthread_mutex_lock(&ru->r->pre_lock);
	ru->r->preloaded = 1;
	pthread_cond_broadcast(&ru->r->pre_cond);
	pthread_mutex_unlock(&ru->r->pre_lock);
	return NULL;
}

static void *lanes_main(void *arg)
{
	struct runner *ru = arg;

	ru->ret = rp_exec_lanes(ru->r, RP_NONE, ru->rec);
	return NULL;
}

static uint64_t lanes_ops(const struct rp_shared *sh)
{
	uint64_t n = 0;
	uint32_t i;

	for (i = 0; i < sh->nlanes; i++)
		n += __atomic_load_n(&sh->stats[i].ops, __ATOMIC_RELAXED) +
		     __atomic_load_n(&sh->stats[i].op[0].unreplayable, __ATOMIC_RELAXED);
	return n;
}

static void progress(struct iotap_replay *r, uint64_t t_start)
{
	struct iotap_replay_progress p = { 0 };

	if (!r->o.progress)
		return;
	p.ops_done = lanes_ops(r->sh);
	p.ops_total = r->plan.ops;
	p.elapsed_s = (double)(iotap_clock_ns() - t_start) / 1e9;
	p.trace_s = r->o.timing == IOTAP_REPLAY_ASAP ? 0 : p.elapsed_s *
		    (r->o.timing == IOTAP_REPLAY_SCALE ? r->o.scale : 1.0);
	p.lag_ms = (double)atomic_exchange(&r->sh->lag_now, 0) / 1e6;
	p.differences = atomic_load(&r->sh->diffs);
	r->o.progress(r->o.progress_arg, &p);
}

/* Fork one child per replay process; each runs its lanes and writes its part. */
static int fork_children(struct iotap_replay *r, pid_t *kids)
{
	uint32_t p;

	for (p = 0; p < r->nprocs; p++) {
		pid_t pid = fork();

		if (pid < 0) {
			rp_wake_all(r->sh);
			return -errno;
		}
		if (!pid) {
			struct iotap_trace_recorder *rec = NULL;
			char path[PATH_MAX];
			int ret = 0;

			signal(SIGINT, SIG_IGN);
			if (r->o.out_trace) {
				snprintf(path, sizeof(path), "%s.part.%u", r->o.out_trace, p);
				unlink(path);
				ret = recorder_open(r, path, &rec);
			}
			if (!ret)
				ret = rp_exec_lanes(r, p, rec);
			if (rec)
				iotap_trace_recorder_close(rec);
			_exit(ret ? 1 : 0);
		}
		kids[p] = pid;
	}
	return 0;
}

static void merge_stats(struct iotap_replay *r, struct iotap_replay_stats *st)
{
	struct rp_shared *sh = r->sh;
	uint64_t hist[RP_LAG_BUCKETS] = { 0 }, lagged = 0, t_first = 0, t_last = 0;
	uint32_t i, j, b;

	for (i = 0; i < sh->nlanes; i++) {
		const struct rp_lane_stats *ls = &sh->stats[i];

		for (j = 0; j < IOTAP_OP_MAX; j++) {
			struct iotap_replay_opstat *d = &st->op[j];
			const struct iotap_replay_opstat *s = &ls->op[j];

			d->replayed += s->replayed;
			d->unreplayable += s->unreplayable;
			d->failed += s->failed;
			d->other_error += s->other_error;
			d->succeeded += s->succeeded;
			d->size_diff += s->size_diff;
			d->bytes_recorded += s->bytes_recorded;
			d->bytes += s->bytes;
		}
		st->ops += ls->ops;
		st->lag_mean_ns += ls->lag_sum;
		if (ls->lag_max > st->lag_max_ns)
			st->lag_max_ns = ls->lag_max;
		st->late_ops += ls->late;
		st->dep_waits += ls->dep_waits;
		for (b = 0; b < RP_LAG_BUCKETS; b++) {
			hist[b] += ls->lag_hist[b];
			lagged += ls->lag_hist[b];
		}
		if (ls->t_first && (!t_first || ls->t_first < t_first))
			t_first = ls->t_first;
		if (ls->t_last > t_last)
			t_last = ls->t_last;
		for (j = 0; j < ls->nexamples && st->nexamples < IOTAP_REPLAY_EXAMPLES; j++)
			memcpy(st->example[st->nexamples++], ls->example[j],
			       sizeof(st->example[0]));
	}
	for (j = 0; j < IOTAP_OP_MAX; j++) {
		struct iotap_replay_opstat *d = &st->op[j];

		d->recorded = r->plan.ops_by_type[j];
		if (r->o.skip_ops & (1ull << j))
			d->skipped = d->recorded;
		st->unreplayable += d->unreplayable;
		st->differences += d->failed + d->other_error + d->succeeded + d->size_diff;
	}
	if (lagged) {
		st->lag_mean_ns /= lagged;
		st->lag_p50_ns = iotap_hist_flat_quantile(hist, RP_LAG_BUCKETS, RP_LAG_BITS, 0.50);
		st->lag_p99_ns = iotap_hist_flat_quantile(hist, RP_LAG_BUCKETS, RP_LAG_BITS, 0.99);
	}
	if (t_last > t_first)
		st->replay_s = (double)(t_last - t_first) / 1e9;
	if (st->replay_s > 0)
		st->ops_per_s = (double)st->ops / st->replay_s;
	st->capture_s = r->plan.capture_s;
	st->threads = r->plan.threads;
	st->lanes = r->nlanes;
	st->processes = r->nprocs;
	st->phases = atomic_load(&sh->phases);
}

static int replay_run(struct iotap_replay *r, struct iotap_replay_stats *st)
{
	struct runner loader = { .r = r }, lanes = { .r = r };
	int procs = !!(r->o.flags & IOTAP_REPLAY_PROCESSES);
	pid_t *kids = NULL;
	uint64_t t_start, next_report;
	uint32_t p;
	int ret;

	memset(st, 0, sizeof(*st));
	if (r->sh)
		return -EALREADY;
	ret = shared_alloc(r);
	if (ret)
		return ret;
	if (r->o.out_trace && !(r->o.flags & IOTAP_REPLAY_TRACE_FORCE) &&
	    !access(r->o.out_trace, F_OK))
		return rp_what(r, -EEXIST, "%s", r->o.out_trace);
	if (procs) {
		kids = calloc(r->nprocs, sizeof(*kids));
		if (!kids)
			return -ENOMEM;
		ret = fork_children(r, kids);
		if (ret)
			goto out_kids;
	} else if (r->o.out_trace) {
		ret = recorder_open(r, r->o.out_trace, &lanes.rec);
		if (ret) {
			rp_what(r, ret, "%s", r->o.out_trace);
			goto out_kids;
		}
	}
	ret = -pthread_create(&loader.thread, NULL, loader_main, &loader);
	if (ret) {
		rp_wake_all(r->sh);
		goto out_wait;
	}
	if (!procs) {
		ret = -pthread_create(&lanes.thread, NULL, lanes_main, &lanes);
		if (ret) {
			rp_wake_all(r->sh);
			pthread_join(loader.thread, NULL);
			goto out_wait;
		}
	}
	pthread_mutex_lock(&r->pre_lock);
	while (!r->preloaded)
		pthread_cond_wait(&r->pre_cond, &r->pre_lock);
	pthread_mutex_unlock(&r->pre_lock);

	/* go: t_ns = 0 is a moment from now, for every lane alike */
	t_start = iotap_clock_ns();
	r->sh->start_ns = t_start + 2000000;
	atomic_store(&r->sh->go, 1);
	iotap_futex_wake((atomic_uint *)&r->sh->go, INT_MAX, 1);
	next_report = t_start + 1000000000ull;
	while (atomic_load(&r->sh->lanes_done) < r->nlanes) {
		struct timespec ts = { 0, 50000000 };
		uint64_t now;

		nanosleep(&ts, NULL);
		if (sys_stopped() && !atomic_load(&r->sh->stop)) {
			st->interrupted = 1;
			rp_wake_all(r->sh);
		}
		if (procs) {
			int status;
			pid_t k = waitpid(-1, &status, WNOHANG);

			/* a child that died leaves its lanes undone: stop the others */
			if (k > 0 && (!WIFEXITED(status) || WEXITSTATUS(status))) {
				for (p = 0; p < r->nprocs; p++)
					if (kids[p] == k)
						kids[p] = 0;
				rp_wake_all(r->sh);
				ret = -ECHILD;
			} else if (k > 0) {
				for (p = 0; p < r->nprocs; p++)
					if (kids[p] == k)
						kids[p] = 0;
			}
		}
		now = iotap_clock_ns();
		if (now >= next_report) {
			progress(r, t_start);
			next_report = now + 1000000000ull;
		}
		if (atomic_load(&r->sh->stop) && procs)
			break;
	}
	pthread_join(loader.thread, NULL);
	if (!procs)
		pthread_join(lanes.thread, NULL);
	if (!ret)
		ret = loader.ret == -EINTR ? 0 : loader.ret;
	if (!ret)
		ret = lanes.ret;
out_wait:
	if (procs) {
		for (p = 0; p < r->nprocs; p++)
			if (kids[p] > 0)
				waitpid(kids[p], NULL, 0);
	}
	merge_stats(r, st);
	if (lanes.rec) {
		st->trace_lost = iotap_trace_recorder_lost(lanes.rec);
		st->trace_error = iotap_trace_recorder_close(lanes.rec);
		lanes.rec = NULL;
	}
	if (procs && r->o.out_trace && !ret)
		st->trace_error = merge_parts(r, r->nprocs);
	if (sys_stopped())
		st->interrupted = 1;
out_kids:
	if (lanes.rec)
		iotap_trace_recorder_close(lanes.rec);
	free(kids);
	return ret;
}

/* --- printing ------------------------------------------------------------------------ */

static void fmt_ns(char *buf, size_t n, uint64_t ns)
{
	if (ns >= 1000000000ull)
		snprintf(buf, n, "%.2f s", ns / 1e9);
	else if (ns >= 1000000)
		snprintf(buf, n, "%.2f ms", ns / 1e6);
	else
		snprintf(buf, n, "%.1f us", ns / 1e3);
}

void iotap_replay_print(FILE *f, const struct iotap_replay *r,
				 const struct iotap_replay_stats *st)
{
	char a[32], b[32], c[32], d[32];
	unsigned int i;

	/*
	 * Recorded threads that never ran at the same time share a replay
	 * thread (the lanes of scan.c), so bonnie++'s 15 short-lived seekers
	 * after its long writer need not be 15 threads: say both numbers.
	 */
	fprintf(f, "replay of '%s' into '%s'%s%s%s: %" PRIu64 " ops of %" PRIu64
		" recorded thread%s, on %" PRIu64 " replay thread%s", r->o.trace, r->target,
		r->o.phase ? ", phase '" : "", r->o.phase ? r->o.phase : "",
		r->o.phase ? "'" : "", st->ops, st->threads, st->threads == 1 ? "" : "s",
		st->lanes, st->lanes == 1 ? "" : "s");
	if (st->lanes < st->threads)
		fprintf(f, " (threads that never overlapped share one)");
	if (st->processes > 1)
		fprintf(f, " in %" PRIu64 " processes", st->processes);
	fprintf(f, "%s\n", st->interrupted ? ", interrupted" : "");
	fprintf(f, "  time: %.3f s replayed, %.3f s captured (%.1f%%), %.0f ops/s, timing %s",
		st->replay_s, st->capture_s,
		st->capture_s > 0 ? 100.0 * st->replay_s / st->capture_s : 0.0, st->ops_per_s,
		r->o.timing == IOTAP_REPLAY_ASAP ? "asap" :
		r->o.timing == IOTAP_REPLAY_SCALE ? "scaled" : "recorded");
	if (r->o.timing == IOTAP_REPLAY_SCALE)
		fprintf(f, " x%g", r->o.scale);
	fputc('\n', f);
	if (r->o.timing != IOTAP_REPLAY_ASAP) {
		fmt_ns(a, sizeof(a), st->lag_mean_ns);
		fmt_ns(b, sizeof(b), st->lag_p50_ns);
		fmt_ns(c, sizeof(c), st->lag_p99_ns);
		fmt_ns(d, sizeof(d), st->lag_max_ns);
		fprintf(f, "  lag behind schedule: mean %s, p50 %s, p99 %s, max %s; %" PRIu64
			" ops more than 1 ms late\n", a, b, c, d, st->late_ops);
	}
	fprintf(f, "  waits for other threads: %" PRIu64 " ops; phase markers: %" PRIu64 "\n",
		st->dep_waits, st->phases);
	fprintf(f, "  results unlike the capture's: %" PRIu64 "; not replayable: %" PRIu64 "\n",
		st->differences, st->unreplayable);
	fprintf(f, "  %-16s %10s %10s %8s %8s %8s %8s %8s %8s\n", "op", "recorded", "replayed",
		"failed", "other", "ok-now", "size", "skipped", "unrepl");
	for (i = 0; i < IOTAP_OP_MAX; i++) {
		const struct iotap_replay_opstat *s = &st->op[i];

		if (!s->recorded && !s->replayed)
			continue;
		fprintf(f, "  %-16s %10" PRIu64 " %10" PRIu64 " %8" PRIu64 " %8" PRIu64 " %8"
			PRIu64 " %8" PRIu64 " %8" PRIu64 " %8" PRIu64 "\n",
			iotap_trace_op_name(i), s->recorded, s->replayed, s->failed,
			s->other_error, s->succeeded, s->size_diff, s->skipped, s->unreplayable);
	}
	for (i = IOTAP_OP_READ; i <= IOTAP_OP_WRITE; i++)
		if (st->op[i].bytes_recorded || st->op[i].bytes)
			fprintf(f, "  %s bytes: %" PRIu64 " replayed, %" PRIu64 " captured\n",
				iotap_trace_op_name(i), st->op[i].bytes, st->op[i].bytes_recorded);
	for (i = 0; i < st->nexamples; i++)
		fprintf(f, "  e.g. %s\n", st->example[i]);
	if (st->trace_lost)
		fprintf(f, "  the replay's trace dropped %" PRIu64 " records\n", st->trace_lost);
}

void iotap_replay_interrupt(void)
{
	sys_stop();
}

void iotap_replay_close(struct iotap_replay *r)
{
	uint32_t i;

	if (!r)
		return;
	if (r->sh)
		munmap(r->sh, r->sh_bytes);
	for (i = 0; i <= RP_MAPS_MAX; i++) {
		if (r->base_fd[i] >= 0)
			close(r->base_fd[i]);
		free(r->base_path[i]);
	}
	for (i = 0; i < r->nmaps; i++) {
		free(r->maps[i].old);
		free(r->maps[i].new_path);
	}
	for (i = 0; i < r->nentries; i++)
		free(r->entries[i].path);
	free(r->entries);
	for (i = 0; i < r->nabsent; i++)
		free(r->absent[i].path);
	free(r->absent);
	free(r->threads);
	free(r->lane_pid);
	free(r->lane_ops);
	free(r->trace_workload);
	free(r->mountpoint);
	free(r->root_path);
	free(r->layout);
	pthread_mutex_destroy(&r->pre_lock);
	pthread_cond_destroy(&r->pre_cond);
	free(r);
}

/*
 * --overwrite over an existing trace file: the replay's trace is written
 * under a sibling name and renamed over the old one once the replay ran
 * (also an interrupted one), so a replay that cannot start, or is killed,
 * keeps the old trace. Devices and symlinks are written to as they are.
 */
int iotap_replay_run(struct iotap_replay *r, struct iotap_replay_stats *st)
{
	const char *path = r->o.out_trace;
	char *tmp = NULL;
	struct stat sb;
	int ret, err;

	if (path && (r->o.flags & IOTAP_REPLAY_TRACE_FORCE) && !lstat(path, &sb) &&
	    S_ISREG(sb.st_mode)) {
		ret = iotap_replace_tmp(path, &tmp);
		if (ret)
			return rp_what(r, ret, "%s", path);
		r->o.out_trace = tmp;
	}
	ret = replay_run(r, st);
	if (!tmp)
		return ret;
	r->o.out_trace = path;
	if (access(tmp, F_OK)) {
		free(tmp);	/* nothing written: the old trace stays */
		return ret;
	}
	if (ret && !st->ops) {
		unlink(tmp);	/* the replay never ran */
	} else {
		err = iotap_replace_commit(tmp, path);
		if (err) {
			unlink(tmp);
			if (!st->trace_error)
				st->trace_error = err;
		}
	}
	free(tmp);
	return ret;
}
