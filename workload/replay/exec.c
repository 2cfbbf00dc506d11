// SPDX-License-Identifier: MIT
/*
 * exec.c - the replay threads ("lanes"): issue each op as its
 * system call, in the lane's order, on time, after what it waits for
 *
 * A lane takes the ops the loader published in its ring, one at a time:
 *
 *   1. timing: sleep until the op's scheduled time (recorded, scale), on a
 *      futex with an absolute CLOCK_MONOTONIC timeout and a 1 ns timer
 *      slack, so an interrupt wakes it and wake-ups are precise;
 *   2. dependencies: wait until each lane it depends on has finished the
 *      op it names (spin briefly, then futex on that lane's seq word);
 *      the issue time minus the scheduled time is the op's lag;
 *   3. identity: as root, take the op's recorded fsuid/fsgid (setfsuid(2)
 *      is per thread; only when it changes) as the capture daemon did;
 *   4. the system call, timed, recorded into the replay's trace with the
 *      capture's file ids, handle ids and thread ids (so that
 *      `iotap report --by file|tid` lines up with the capture), the
 *      replay's result and duration;
 *   5. the result against the recorded one, counted per op type;
 *   6. finish: publish head (and the byte ring position) and wake whoever
 *      waits for this lane.
 *
 * How ops are issued is workload/sys/sys.c's (the one traced-syscall
 * layer, shared with the models); what is left here is the replay's side
 * of it: the open flags (O_APPEND dropped: the recorded offset is where
 * the append landed), a handle's descriptor (opened lazily by path when
 * the capture opened it before the slice), the read buffer, the data, and
 * READDIR's shape (rewinding when the recorded cookie is 0, as many
 * entries as the capture's call returned). Descriptor slots are a
 * per-process table of fds, grown in 4096-slot chunks.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/fsuid.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "iotap_base.h"
#include "replay_i.h"
#include "sys.h"

#define SLOT_CHUNK	4096u
#define SLOT_CHUNKS	65536u
#define LATE_NS		1000000ull	/* "late": more than 1 ms behind */

/* fd + 1 per slot (0: closed), per process */
static _Atomic(atomic_int *) slot_chunk[SLOT_CHUNKS];

static atomic_int *slot_ref(uint32_t slot)
{
	uint32_t c = slot / SLOT_CHUNK;
	atomic_int *p, *exp = NULL;

	if (c >= SLOT_CHUNKS)
		return NULL;
	p = atomic_load_explicit(&slot_chunk[c], memory_order_acquire);
	if (p)
		return &p[slot % SLOT_CHUNK];
	p = calloc(SLOT_CHUNK, sizeof(*p));
	if (!p)
		return NULL;
	if (!atomic_compare_exchange_strong(&slot_chunk[c], &exp, p)) {
		free(p);
		p = exp;
	}
	return &p[slot % SLOT_CHUNK];
}

static int slot_fd(uint32_t slot)
{
	atomic_int *s = slot == RP_NONE ? NULL : slot_ref(slot);

	return s ? atomic_load_explicit(s, memory_order_acquire) - 1 : -1;
}

static void slot_set(uint32_t slot, int fd)
{
	atomic_int *s = slot == RP_NONE ? NULL : slot_ref(slot);

	if (s)
		atomic_store_explicit(s, fd + 1, memory_order_release);
	else if (fd >= 0)
		close(fd);
}

/* Close every descriptor still open at the end (handles never released). */
static void slots_close_all(void)
{
	uint32_t c, i;

	for (c = 0; c < SLOT_CHUNKS; c++) {
		atomic_int *p = atomic_load(&slot_chunk[c]);

		if (!p)
			continue;
		for (i = 0; i < SLOT_CHUNK; i++)
			if (atomic_load(&p[i]) > 0)
				close(atomic_load(&p[i]) - 1);
		atomic_store(&slot_chunk[c], NULL);
		free(p);
	}
}

struct lane_ctx {
	struct iotap_replay *r;
	struct rp_shared *sh;
	uint32_t lane;
	struct rp_lane *ln;
	struct rp_lane_stats *st;
	struct iotap_trace_recorder *rec;
	struct rp_wbuf wb;
	unsigned char *rbuf;		/* reads, getdents, readlink, xattrs */
	size_t rcap;
	uint32_t fsuid, fsgid;
	int set_ids;
	int err;
};

/* --- waiting ------------------------------------------------------------------- */

/* Sleep until CLOCK_MONOTONIC @t; rp_wake_all() ends it early. */
static void sleep_until(struct rp_shared *sh, uint64_t t)
{
	struct timespec ts = iotap_ns_timespec(t);

	while (iotap_clock_ns() < t && !atomic_load_explicit(&sh->stop, memory_order_relaxed))
		syscall(SYS_futex, &sh->go, FUTEX_WAIT_BITSET, 1, &ts, NULL,
			FUTEX_BITSET_MATCH_ANY);
}

/* --- the system calls ------------------------------------------------------------- */

static const char *str(const struct lane_ctx *lc, uint32_t off)
{
	return off == RP_NONE ? NULL : lc->ln->bytes + off;
}

static int rbuf_need(struct lane_ctx *lc, size_t len)
{
	unsigned char *n;
	size_t cap = lc->rcap ? lc->rcap : 65536;

	if (len <= lc->rcap)
		return 0;
	while (cap < len)
		cap *= 2;
	n = aligned_alloc(4096, cap);
	if (!n)
		return -ENOMEM;
	free(lc->rbuf);
	lc->rbuf = n;
	lc->rcap = cap;
	return 0;
}

#define OPEN_KEEP (O_ACCMODE | O_TRUNC | O_NONBLOCK | O_DSYNC | O_SYNC | O_DIRECT | \
		   O_LARGEFILE | O_NOATIME | O_DIRECTORY | O_NOFOLLOW)

/* Open a lazy handle; if another lane opened it meanwhile, use theirs. */
static int open_slot(struct lane_ctx *lc, uint32_t slot, uint16_t base, const char *path,
		     uint32_t flags)
{
	int fd = openat(lc->r->base_fd[base], path, (int)flags | O_CLOEXEC);
	atomic_int *s = slot_ref(slot);
	int none = 0;

	if (fd < 0)
		return -errno;
	if (!s) {
		close(fd);
		return -ENOMEM;
	}
	if (!atomic_compare_exchange_strong(s, &none, fd + 1))
		close(fd);
	return 0;
}

/* The descriptor of the op's handle, opening it if it is lazy. */
static int op_fd(struct lane_ctx *lc, const struct rp_op *op)
{
	int fd = slot_fd(op->slot);

	if (fd >= 0 || !(op->xflags & RP_X_LAZY))
		return fd >= 0 ? fd : -EBADF;
	fd = open_slot(lc, op->slot, op->base, str(lc, op->path), op->lazy_flags);
	if (fd < 0 && (op->lazy_flags & O_ACCMODE) == O_RDWR && (fd == -EISDIR || fd == -EACCES))
		fd = open_slot(lc, op->slot, op->base, str(lc, op->path),
			       (op->lazy_flags & ~(uint32_t)O_ACCMODE) | O_RDONLY);
	return fd < 0 ? fd : slot_fd(op->slot);
}

/*
 * The call @op describes, in sys.h's terms: the record carries the
 * capture's ids, thread, owner and fields, the replay's result and time.
 */
static void call_of(const struct lane_ctx *lc, const struct rp_op *op, struct sys_call *sc)
{
	const struct iotap_replay *r = lc->r;

	*sc = (struct sys_call){
		.op = op->op,
		.how = SYS_TIMED,
		.who = { op->tid, op->pid, op->uid, op->gid },
		.flags = op->flags, .mode = op->mode, .name_len = op->name_len,
		.file = op->file, .file2 = op->file2, .fh = op->fh,
		.offset = op->offset, .length = op->length, .aux = op->aux,
		.name = str(lc, op->name),
		.fd = -1,
		.at = r->base_fd[op->base], .at2 = r->base_fd[op->base2],
		.path = str(lc, op->path), .path2 = str(lc, op->path2),
		.base = r->base_path[op->base],
	};
}

/*
 * Issue @op through the traced-syscall layer: find its descriptor (opening
 * a lazy handle), its buffer or its data, then sys_issue(). Return: the
 * result (bytes, 0 or -errno); @sc holds what its record carries.
 */
static int64_t issue(struct lane_ctx *lc, const struct rp_op *op, struct sys_call *sc)
{
	struct iotap_replay *r = lc->r;
	struct iotap_trace_recorder *rec = lc->rec;
	int64_t ret;
	int fd = -1;

	switch (op->op) {
	case IOTAP_OP_LOOKUP:
	case IOTAP_OP_GETATTR:
	case IOTAP_OP_SETATTR:
		if (op->xflags & (RP_X_FH_ONLY | RP_X_LAZY)) {
			fd = op_fd(lc, op);
			if (fd < 0)
				return sys_refuse(rec, sc, fd);
			sc->fd = fd;
			sc->how |= SYS_BY_FD;
		}
		break;
	case IOTAP_OP_READLINK:
		if (rbuf_need(lc, PATH_MAX))
			return sys_refuse(rec, sc, -ENOMEM);
		sc->buf = lc->rbuf;
		sc->cap = PATH_MAX;
		break;
	case IOTAP_OP_OPEN:
	case IOTAP_OP_CREATE:
		sc->oflags = (int)(op->flags & OPEN_KEEP);
		if (op->op == IOTAP_OP_CREATE)
			sc->oflags |= O_CREAT | (int)(op->flags & O_EXCL);
		ret = sys_issue(rec, sc);
		if (!ret)
			slot_set(op->slot, sc->newfd);
		return ret;
	case IOTAP_OP_OPENDIR:
		sc->oflags = O_RDONLY | O_DIRECTORY;
		ret = sys_issue(rec, sc);
		if (!ret)
			slot_set(op->slot, sc->newfd);
		return ret;
	case IOTAP_OP_RELEASE:
	case IOTAP_OP_RELEASEDIR:
		sc->fd = slot_fd(op->slot);
		slot_set(op->slot, -1);
		break;
	case IOTAP_OP_READ:
	case IOTAP_OP_WRITE:
	case IOTAP_OP_FLUSH:
	case IOTAP_OP_FSYNC:
	case IOTAP_OP_FSYNCDIR:
	case IOTAP_OP_READDIR:
	case IOTAP_OP_READDIRPLUS:
	case IOTAP_OP_FALLOCATE:
	case IOTAP_OP_LSEEK:
	case IOTAP_OP_FLOCK:
	case IOTAP_OP_COPY_FILE_RANGE:
		fd = op_fd(lc, op);
		if (fd < 0)
			return sys_refuse(rec, sc, fd);
		sc->fd = fd;
		break;
	case IOTAP_OP_SETXATTR:
		sc->data = rp_data_fill(&r->data, &lc->wb, 0, op->length);
		if (!sc->data)
			return sys_refuse(rec, sc, -ENOMEM);
		break;
	case IOTAP_OP_GETXATTR:
	case IOTAP_OP_LISTXATTR:
		if (rbuf_need(lc, op->length))
			return sys_refuse(rec, sc, -ENOMEM);
		sc->buf = lc->rbuf;
		break;
	}

	switch (op->op) {
	case IOTAP_OP_READ:
		if (rbuf_need(lc, op->length))
			return sys_refuse(rec, sc, -ENOMEM);
		sc->buf = lc->rbuf;
		break;
	case IOTAP_OP_WRITE:
		sc->data = rp_data_fill(&r->data, &lc->wb, op->offset, op->length);
		if (!sc->data)
			return sys_refuse(rec, sc, -ENOMEM);
		break;
	case IOTAP_OP_READDIR:
	case IOTAP_OP_READDIRPLUS:
		/* as many entries as the capture's call returned, from where it was */
		sc->length = op->length ? op->length : 32768;
		if (rbuf_need(lc, sc->length))
			return sys_refuse(rec, sc, -ENOMEM);
		sc->buf = lc->rbuf;
		sc->want = op->result > 0 ? op->aux : 0;
		if (!op->offset)
			sc->how |= SYS_REWIND;
		ret = sys_issue(rec, sc);
		sc->length = op->length;
		return ret;
	}
	return sys_issue(rec, sc);
}

/* --- results ----------------------------------------------------------------------- */

static int sized(unsigned int op)
{
	return op == IOTAP_OP_READ || op == IOTAP_OP_WRITE || op == IOTAP_OP_READLINK ||
	       op == IOTAP_OP_GETXATTR || op == IOTAP_OP_COPY_FILE_RANGE;
}

static void note_example(struct lane_ctx *lc, const struct rp_op *op, int64_t got)
{
	struct rp_lane_stats *st = lc->st;
	const char *path = str(lc, op->path);
	char g[64], w[64], where[200], line[400];

	if (st->nexamples >= 2)
		return;
	if (got < 0)
		snprintf(g, sizeof(g), "%s", strerror((int)-got));
	else
		snprintf(g, sizeof(g), "%" PRId64, got);
	if (op->result < 0)
		snprintf(w, sizeof(w), "%s", strerror((int)-op->result));
	else
		snprintf(w, sizeof(w), "%" PRId64, op->result);
	if (path)
		snprintf(where, sizeof(where), "'%.80s/%.100s'", lc->r->base_path[op->base], path);
	else
		snprintf(where, sizeof(where), "file %" PRIu64 " (handle %" PRIu64 ")", op->file,
			 op->fh);
	snprintf(line, sizeof(line), "%s %s: %s (capture: %s)", iotap_trace_op_name(op->op),
		 where, g, w);
	snprintf(st->example[st->nexamples++], sizeof(st->example[0]), "%.255s", line);
}

static void compare(struct lane_ctx *lc, const struct rp_op *op, int64_t got, uint64_t aux)
{
	struct iotap_replay_opstat *s = &lc->st->op[op->op];
	int64_t want = op->result;
	int diff = 0;

	if (op->op == IOTAP_OP_READ || op->op == IOTAP_OP_WRITE ||
	    op->op == IOTAP_OP_COPY_FILE_RANGE) {
		s->bytes_recorded += want > 0 ? (uint64_t)want : 0;
		s->bytes += got > 0 ? (uint64_t)got : 0;
	}
	if (want < 0 && got < 0) {
		if (want != got) {
			s->other_error++;
			diff = 1;
		}
	} else if (got < 0) {
		s->failed++;
		diff = 1;
	} else if (want < 0) {
		s->succeeded++;
		diff = 1;
	} else if (sized(op->op) ? got != want
		   : (op->op == IOTAP_OP_READDIR || op->op == IOTAP_OP_READDIRPLUS) &&
		     (!got != !want || (want && op->aux && aux != op->aux))) {
		s->size_diff++;
		diff = 1;
	}
	if (diff) {
		lc->st->diffs++;
		atomic_fetch_add_explicit(&lc->sh->diffs, 1, memory_order_relaxed);
		note_example(lc, op, got);
	}
}

static void set_ids(struct lane_ctx *lc, const struct rp_op *op)
{
	if (!lc->set_ids)
		return;
	/* fsgid first: after setfsuid to a user it could no longer change */
	if (op->gid != lc->fsgid) {
		setfsgid(op->gid);
		lc->fsgid = op->gid;
	}
	if (op->uid != lc->fsuid) {
		setfsuid(op->uid);
		lc->fsuid = op->uid;
	}
}

static void lag_note(struct lane_ctx *lc, uint64_t lag)
{
	struct rp_lane_stats *st = lc->st;
	unsigned int b = rp_lag_bucket(lag);

	st->lag_sum += lag;
	if (lag > st->lag_max)
		st->lag_max = lag;
	if (lag > LATE_NS)
		st->late++;
	st->lag_hist[b < RP_LAG_BUCKETS ? b : RP_LAG_BUCKETS - 1]++;
	if (lag > atomic_load_explicit(&lc->sh->lag_now, memory_order_relaxed))
		atomic_store_explicit(&lc->sh->lag_now, lag, memory_order_relaxed);
}

static void exec_op(struct lane_ctx *lc, const struct rp_op *op)
{
	struct rp_shared *sh = lc->sh;
	struct iotap_replay_opstat *s = &lc->st->op[op->op];
	int timed = lc->r->o.timing != IOTAP_REPLAY_ASAP;
	uint64_t target = sh->start_ns + op->t_ns, t0, t1, aux;
	struct sys_call sc;
	int64_t res;
	uint32_t i;
	int waited = 0;

	if (op->xflags & RP_X_NOPATH) {
		s->unreplayable++;
		return;
	}
	if (timed && iotap_clock_ns() < target)
		sleep_until(sh, target);
	if (op->ndeps) {
		const struct rp_dep *d = (const struct rp_dep *)(lc->ln->bytes + op->deps);

		for (i = 0; i < op->ndeps; i++)
			waited |= rp_ring_wait_done(sh, d[i].lane, d[i].idx);
		if (waited)
			lc->st->dep_waits++;
	}
	if (atomic_load_explicit(&sh->stop, memory_order_relaxed))
		return;
	call_of(lc, op, &sc);
	if (op->xflags & RP_X_NOOP) {
		/* passed on as the capture had it, taking no time */
		sys_refuse(lc->rec, &sc, op->result);
	} else {
		set_ids(lc, op);
		issue(lc, op, &sc);
		if (op->slot2 != RP_NONE)
			slot_set(op->slot2, -1);
	}
	if (lc->rec)
		sys_record(lc->rec, &sc);
	t0 = sc.t0;
	t1 = sc.t1;
	res = sc.result;
	aux = sc.aux;
	if (timed)
		lag_note(lc, t0 > target ? t0 - target : 0);
	if (!lc->st->t_first || t0 < lc->st->t_first)
		lc->st->t_first = t0;
	if (t1 > lc->st->t_last)
		lc->st->t_last = t1;
	lc->st->ops++;
	s->replayed++;
	if (!(op->xflags & RP_X_NOOP))
		compare(lc, op, res, aux);
}

static void exec_name(struct lane_ctx *lc, const struct rp_op *op)
{
	struct sys_who who = { op->tid, op->pid, op->uid, op->gid };

	if (lc->rec)
		sys_record_name(lc->rec, &who, op->file, op->file2, op->mode, op->uid, op->gid,
				op->length, op->flags, str(lc, op->name),
				iotap_trace_op_begin(lc->rec));
}

static void process_cpu(uint64_t *user_ns, uint64_t *sys_ns)
{
	iotap_cpu_ns(RUSAGE_SELF, user_ns, sys_ns);
	if (!*user_ns && !*sys_ns)
		*user_ns = 1;
}

/* A phase marker: every lane arrives; the last one writes it and lets all go. */
static void exec_phase(struct lane_ctx *lc, const struct rp_op *op)
{
	struct rp_shared *sh = lc->sh;
	unsigned int gen = atomic_load(&sh->bar_gen);

	if (atomic_fetch_add(&sh->bar_arrived, 1) + 1 == sh->nlanes) {
		if (lc->r->o.timing != IOTAP_REPLAY_ASAP)
			sleep_until(sh, sh->start_ns + op->t_ns);
		if (lc->rec) {
			struct sys_who who = { op->tid, op->pid, op->uid, op->gid };
			uint64_t u, sy;

			process_cpu(&u, &sy);
			/* 0, not op->aux: a captured END's aux is its run's unit latency */
			sys_record_phase(lc->rec, &who, str(lc, op->name), op->flags,
					 iotap_trace_op_begin(lc->rec), u, sy, 0);
		}
		atomic_fetch_add(&sh->phases, 1);
		atomic_store(&sh->bar_arrived, 0);
		/* the marker is written before anyone goes on: pairs with the load below */
		atomic_fetch_add(&sh->bar_gen, 1);
		iotap_futex_wake(&sh->bar_gen, INT_MAX, 1);
		return;
	}
	while (atomic_load(&sh->bar_gen) == gen && !atomic_load(&sh->stop))
		iotap_futex_wait(&sh->bar_gen, gen, 1);
}

static void lane_main(void *arg)
{
	struct lane_ctx *lc = arg;
	struct rp_shared *sh = lc->sh;
	uint64_t idx = 0;

	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	while (atomic_load(&sh->go) == 0)
		iotap_futex_wait((atomic_uint *)&sh->go, 0, 1);
	for (;;) {
		struct rp_op *op = rp_ring_next(sh, lc->ln, idx);

		if (!op || atomic_load_explicit(&sh->stop, memory_order_relaxed))
			break;
		lc->ln->last_t_ns = op->t_ns;
		switch (op->op) {
		case RP_OP_END:
			rp_ring_finish(lc->ln, op, idx);
			atomic_fetch_add(&sh->lanes_done, 1);
			return;
		case RP_OP_NAME:
			exec_name(lc, op);
			break;
		case RP_OP_PHASE:
			exec_phase(lc, op);
			break;
		default:
			if (op->op < IOTAP_OP_MAX)
				exec_op(lc, op);
		}
		rp_ring_finish(lc->ln, op, idx);
		idx++;
	}
	atomic_fetch_add(&sh->lanes_done, 1);
}

int rp_exec_lanes(struct iotap_replay *r, uint32_t proc,
		  struct iotap_trace_recorder *rec)
{
	struct iotap_pool *pool = NULL;
	struct lane_ctx *lcs;
	struct rlimit rl;
	uint32_t i, l, n = 0, started = 0, mine = 0;
	int ret = 0;

	/* descriptors: a capture may hold many files open at once */
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	lcs = calloc(r->nlanes, sizeof(*lcs));
	if (!lcs)
		return -ENOMEM;
	/* a thread a lane: the lanes wait for each other's ops */
	for (l = 0; l < r->nlanes; l++)
		mine += proc == RP_NONE || r->sh->lanes[l].proc == proc;
	if (mine)
		ret = iotap_pool_create(&pool, mine, mine);
	for (l = 0; l < r->nlanes && !ret; l++) {
		struct lane_ctx *lc = &lcs[n];

		if (proc != RP_NONE && r->sh->lanes[l].proc != proc)
			continue;
		n++;
		lc->r = r;
		lc->sh = r->sh;
		lc->lane = l;
		lc->ln = &r->sh->lanes[l];
		lc->st = &r->sh->stats[l];
		lc->rec = rec;
		lc->set_ids = r->as_root && !(r->o.flags & IOTAP_REPLAY_NO_FSUID);
		lc->fsuid = lc->fsgid = 0;
		ret = rp_wbuf_init(&lc->wb, &r->data, l + 1,
				   r->max_io ? r->max_io : 65536);
		if (ret)
			break;
		ret = rbuf_need(lc, r->max_io ? r->max_io : 65536);
		if (ret)
			break;
		if (started == iotap_pool_threads(pool)) {
			ret = -EAGAIN;
			break;
		}
		iotap_pool_add(pool, lane_main, lc);
		started++;
	}
	if (ret) {
		/* the lanes that never ran count as done, or the run waits for them */
		atomic_fetch_add(&r->sh->lanes_done, mine - started);
		rp_wake_all(r->sh);
	}
	iotap_pool_free(pool);
	for (i = 0; i < n; i++) {
		rp_wbuf_release(&lcs[i].wb);
		free(lcs[i].rbuf);
	}
	free(lcs);
	slots_close_all();
	return ret;
}
