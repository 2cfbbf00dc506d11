// SPDX-License-Identifier: MIT
/*
 * load.c - pass 2 of a replay: the loader thread
 *
 * Walks the trace again with the same file model as the scan and turns
 * every op of the slice into a struct rp_op in the ring of its recorded
 * thread's lane: the path(s) it needs, relative to the target or a --map
 * directory; the descriptor slot of its handle; the ops of other lanes it
 * must wait for (deps.c); its scheduled time. NAME records are
 * forwarded to the same lane (the replay's trace names files as the
 * capture did), PHASE markers go to every lane as barriers. The loader is
 * the only producer of every ring; when a ring is full it waits for that
 * lane (never for a lane that waits for it: every wait points to an op
 * already published); the ring protocol is ring.c's. Read replay_i.h first.
 *
 * What each op becomes:
 * - data ops and everything with a handle use the handle's slot; a handle
 *   opened before the slice (--phase), in a damaged region, or in another
 *   replay process (--processes) is opened on first use ("lazy", with the
 *   recorded flags less O_CREAT, O_EXCL and O_TRUNC);
 * - CREATE, MKDIR, MKNOD, SYMLINK, RENAME and LINK take their new name from
 *   the NAME record the capture wrote after them (looked ahead for); a
 *   failed RENAME keeps the old name in the new directory (the trace does
 *   not say which name it wanted);
 * - FORGET (a kernel cache eviction), and ops the capture daemon answered
 *   itself (flag REJECTED: ENOSYS for locks and ioctls, its control
 *   names, injected faults) are passed on as nothing and recorded as they
 *   were, so op counts line up;
 * - an op whose file the trace never names cannot be replayed: counted.
 *
 * Descriptor slots: a slot freed by a RELEASE returns to the free list of
 * the lane that releases, so it is reused only after the close ran.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "replay_i.h"

#define LOOKAHEAD	65536		/* records kept to find an op's NAME */
#define FUSE_SET_ATTR_MODE_BIT	(1u << 0)
#define FUSE_SET_ATTR_SIZE_BIT	(1u << 3)

/* Loader-only state of a slot owner lane's free list. */
struct slot_list {
	uint32_t *v;
	uint32_t n, cap;
};

/* Handles the trace uses but never opened (damage): fh id -> slot. */
struct orphan_fh {
	uint64_t fh;
	uint32_t slot;
};

struct load {
	struct iotap_replay *r;
	struct rp_ring_prod ring;	/* the producer side of every lane's ring */
	struct rp_shared *sh;
	struct rp_src *src;
	struct rp_walk w;
	struct rp_deps ds;
	struct rp_dlog *tree;		/* the directory tree: dir renames write it */
	struct slot_list *free;		/* per lane */
	uint32_t next_slot;
	struct orphan_fh *orph;
	uint32_t norph, orph_cap;
	/* the op being built */
	struct rp_op op;
	const char *str[3];		/* path, path2, name */
	size_t str_len[3];
	char pbuf[2][RP_PATH_MAX + 2];
	double scale;
};

/* The op being built, to the ring of @lane. */
static int push(struct load *l, uint32_t lane, const struct rp_dep *deps, uint32_t ndeps)
{
	int ret = rp_ring_push(&l->ring, lane, &l->op, l->str, l->str_len, deps, ndeps);

	l->str[0] = l->str[1] = l->str[2] = NULL;
	return ret;
}

/* Index the next op pushed to @lane will have. */
static uint64_t next_idx(struct load *l, uint32_t lane)
{
	return atomic_load_explicit(&l->sh->lanes[lane].tail, memory_order_relaxed);
}

/* --- slots ---------------------------------------------------------------------- */

static uint32_t slot_new(struct load *l, uint32_t lane)
{
	struct slot_list *s = &l->free[lane];

	if (s->n)
		return s->v[--s->n];
	return l->next_slot++;
}

static void slot_free(struct load *l, uint32_t lane, uint32_t slot)
{
	struct slot_list *s = &l->free[lane];

	if (slot == RP_NONE)
		return;
	if (s->n == s->cap) {
		uint32_t cap = s->cap ? 2 * s->cap : 16;
		uint32_t *v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return;		/* the slot is never reused: harmless */
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = slot;
}

static uint32_t orphan_slot(struct load *l, uint64_t fh, uint32_t lane)
{
	uint32_t i;

	for (i = 0; i < l->norph; i++)
		if (l->orph[i].fh == fh)
			return l->orph[i].slot;
	if (l->norph == l->orph_cap) {
		uint32_t cap = l->orph_cap ? 2 * l->orph_cap : 16;
		struct orphan_fh *n = realloc(l->orph, cap * sizeof(*n));

		if (!n)
			return slot_new(l, lane);
		l->orph = n;
		l->orph_cap = cap;
	}
	l->orph[l->norph].fh = fh;
	l->orph[l->norph].slot = slot_new(l, lane);
	return l->orph[l->norph++].slot;
}

/* --- paths ------------------------------------------------------------------------ */

/* Root-relative path of @o into @buf (cached per object). Length or -errno. */
static int obj_rpath(struct load *l, struct rp_obj *o, char *buf)
{
	int n;

	if (o->path && o->path_epoch == l->w.epoch) {
		n = (int)strlen(o->path);
		memcpy(buf, o->path, (size_t)n + 1);
		return n;
	}
	n = rp_walk_path(&l->w, o, buf, RP_PATH_MAX);
	if (n < 0)
		return n;
	free(o->path);
	o->path = strdup(buf);
	o->path_epoch = l->w.epoch;
	return n;
}

/* Set string @i of the op to @buf mapped; its base in *@base. 0 or -ENOENT. */
static int set_path(struct load *l, int i, char *buf, uint16_t *base)
{
	*base = (uint16_t)rp_map_apply(l->r->maps, l->r->nmaps, buf, 0);
	l->str[i] = buf;
	l->str_len[i] = strlen(buf);
	return 0;
}

static int path_obj(struct load *l, int i, struct rp_obj *o, uint16_t *base)
{
	if (!o || obj_rpath(l, o, l->pbuf[i]) < 0)
		return -ENOENT;
	return set_path(l, i, l->pbuf[i], base);
}

/* @parent's path + "/" + @name. */
static int path_child(struct load *l, int i, struct rp_obj *parent, const char *name,
		      uint16_t *base)
{
	size_t nl;
	int n;

	if (!parent || !name)
		return -ENOENT;
	n = obj_rpath(l, parent, l->pbuf[i]);
	if (n < 0)
		return n;
	nl = strlen(name);
	if ((size_t)n + nl + 2 > RP_PATH_MAX)
		return -ENAMETOOLONG;
	if (n)
		l->pbuf[i][n++] = '/';
	memcpy(l->pbuf[i] + n, name, nl + 1);
	return set_path(l, i, l->pbuf[i], base);
}

/* The path of @o as a child of @parent (the name it has there). */
static int path_in(struct load *l, int i, struct rp_obj *o, struct rp_obj *parent,
		   uint16_t *base)
{
	struct rp_bind *b;

	if (!o)
		return -ENOENT;
	b = rp_walk_bind_in(o, parent);
	if (b && b->parent)
		return path_child(l, i, b->parent, b->name, base);
	return path_obj(l, i, o, base);
}

/* The name an op gave @file, from the NAME record that follows it. */
static int path_new(struct load *l, int i, const struct iotap_trace_rec *rec, int link,
		    uint16_t *base)
{
	const struct iotap_trace_rec *n;
	struct rp_obj *parent;

	n = rp_src_find_name(l->src, rec->file, link, rec->time_ns + rec->dur_ns + 1000000000ull);
	if (!n || !n->name)
		return -ENOENT;
	parent = rp_walk_obj(&l->w, n->file2);
	return path_child(l, i, parent, n->name, base);
}

/* --- dependencies ------------------------------------------------------------------ */

static int acc(struct load *l, struct rp_dlog **log, uint64_t lo, uint64_t hi, int write)
{
	return rp_deps_access(&l->ds, log, lo, hi, write);
}

static int acc_meta(struct load *l, struct rp_obj *o, int write)
{
	return o ? acc(l, &o->log, RP_META, RP_META + 1, write) : 0;
}

static int acc_all(struct load *l, struct rp_obj *o)
{
	return o ? acc(l, &o->log, 0, RP_META + 1, 1) : 0;
}

static int acc_fh(struct load *l, struct rp_fh *h, int write)
{
	return h ? acc(l, &h->log, RP_META, RP_META + 1, write) : 0;
}

/* --- compiling one op ------------------------------------------------------------------- */

static uint32_t lazy_flags_of(const struct rp_fh *h, const struct iotap_trace_rec *rec, int dir)
{
	uint32_t f;

	if (dir)
		return O_RDONLY | O_DIRECTORY;
	if (h && h->oflags != RP_NONE)
		f = h->oflags & ~(uint32_t)(O_CREAT | O_EXCL | O_TRUNC | O_APPEND | O_NOCTTY);
	else
		f = rec->op == IOTAP_OP_READ ? O_RDONLY : O_RDWR;
	if (rec->flags & IOTAP_OPF_DIRECT)
		f |= O_DIRECT;
	if (rec->op == IOTAP_OP_WRITE && (rec->flags & IOTAP_OPF_SYNC))
		f |= O_DSYNC;
	return f;
}

/* The slot of the op's handle; lazy (with the file's path) unless this lane's process opened it. */
static int use_fh(struct load *l, struct rp_ctx *c, uint32_t lane, int dir)
{
	struct iotap_replay *r = l->r;
	struct rp_op *op = &l->op;
	struct rp_fh *h = c->fh;

	if (h && h->slot != RP_NONE && h->open_lane != RP_NONE &&
	    l->sh->lanes[h->open_lane].proc == l->sh->lanes[lane].proc) {
		op->slot = h->slot;
		op->xflags |= RP_X_FH_ONLY;
		return 0;
	}
	if (h) {
		if (h->slot == RP_NONE)
			h->slot = slot_new(l, lane);
		op->slot = h->slot;
	} else {
		op->slot = orphan_slot(l, c->rec->fh, lane);
	}
	op->lazy_flags = lazy_flags_of(h, c->rec, dir);
	op->xflags |= RP_X_LAZY;
	(void)r;
	return path_obj(l, 0, c->obj, &op->base);
}

static int compile(struct load *l, struct rp_ctx *c, uint32_t lane)
{
	const struct iotap_trace_rec *rec = c->rec;
	struct rp_op *op = &l->op;
	struct rp_obj *o = c->obj;
	uint64_t off = rec->offset, len = rec->length;
	int ret = 0;

	switch (rec->op) {
	case IOTAP_OP_LOOKUP:
		if (c->ok && rec->file)
			ret = o && o->names ? path_in(l, 0, o, c->obj2, &op->base)
					    : path_new(l, 0, rec, -1, &op->base);
		else
			ret = path_child(l, 0, c->obj2, rec->name, &op->base);
		if (!ret)
			ret = acc_meta(l, c->obj2, 0) ?: acc_meta(l, o, 0);
		return ret ?: acc(l, &l->tree, RP_META, RP_META + 1, 0);

	case IOTAP_OP_GETATTR:
	case IOTAP_OP_SETATTR:
		if (c->fh && c->fh->slot != RP_NONE) {
			ret = use_fh(l, c, lane, c->fh->dir);
			if (!ret)
				ret = acc_fh(l, c->fh, 0);
		} else {
			ret = path_obj(l, 0, o, &op->base);
		}
		if (ret)
			return ret;
		if (rec->op == IOTAP_OP_GETATTR)
			return acc_meta(l, o, 0);
		if (rec->flags & FUSE_SET_ATTR_SIZE_BIT) {
			uint64_t lo = off < c->size ? off : c->size;

			ret = o ? acc(l, &o->log, lo, RP_DMAX, 1) : 0;
		}
		if (!ret && (rec->flags & ~FUSE_SET_ATTR_SIZE_BIT))
			ret = acc_meta(l, o, 1);
		return ret ?: acc(l, &l->tree, RP_META, RP_META + 1, 0);

	case IOTAP_OP_READLINK:
	case IOTAP_OP_STATFS:
	case IOTAP_OP_GETXATTR:
	case IOTAP_OP_LISTXATTR:
	case IOTAP_OP_ACCESS:
		ret = path_obj(l, 0, o, &op->base);
		if (!ret && rec->name && rec->op == IOTAP_OP_GETXATTR) {
			l->str[2] = rec->name;
			l->str_len[2] = rec->name_len;
		}
		return ret ?: acc_meta(l, o, 0) ?: acc(l, &l->tree, RP_META, RP_META + 1, 0);

	case IOTAP_OP_SETXATTR:
	case IOTAP_OP_REMOVEXATTR:
		ret = path_obj(l, 0, o, &op->base);
		if (ret)
			return ret;
		l->str[2] = rec->name ? rec->name : "";
		l->str_len[2] = rec->name ? rec->name_len : 0;
		return acc_meta(l, o, 1) ?: acc(l, &l->tree, RP_META, RP_META + 1, 0);

	case IOTAP_OP_MKNOD:
	case IOTAP_OP_MKDIR:
	case IOTAP_OP_SYMLINK:
	case IOTAP_OP_CREATE:
		if (c->ok && rec->file)
			ret = path_new(l, 0, rec, 0, &op->base);
		else if (rec->op != IOTAP_OP_SYMLINK)
			ret = path_child(l, 0, c->obj2, rec->name, &op->base);
		else
			ret = -ENOENT;
		if (ret)
			return ret;
		if (rec->op == IOTAP_OP_SYMLINK) {
			l->str[2] = rec->name ? rec->name : "";
			l->str_len[2] = rec->name ? rec->name_len : 0;
		}
		return acc_meta(l, c->obj2, 1) ?: acc(l, &l->tree, RP_META, RP_META + 1, 0);

	case IOTAP_OP_UNLINK:
	case IOTAP_OP_RMDIR:
		if (rec->name && c->obj2)
			ret = path_child(l, 0, c->obj2, rec->name, &op->base);
		else
			ret = path_in(l, 0, o, c->obj2, &op->base);
		if (ret)
			return ret;
		return acc_meta(l, c->obj2, 1) ?: acc_all(l, o) ?:
		       acc(l, &l->tree, RP_META, RP_META + 1, 0);

	case IOTAP_OP_RENAME: {
		struct rp_bind *target = NULL;

		if (c->ok) {
			struct rp_bind *src = rp_walk_rename_src(&l->w, rec, o, c->oldp);

			ret = src && src->parent ? path_child(l, 0, src->parent, src->name, &op->base)
						 : path_obj(l, 0, o, &op->base);
		} else {
			ret = path_child(l, 0, c->oldp, rec->name, &op->base);
		}
		if (ret)
			return ret;
		if (c->ok) {
			const struct iotap_trace_rec *n =
				rp_src_find_name(l->src, rec->file, 0,
						 rec->time_ns + rec->dur_ns + 1000000000ull);

			if (!n || !n->name)
				return -ENOENT;
			ret = path_child(l, 1, rp_walk_obj(&l->w, n->file2), n->name, &op->base2);
			if (!ret && c->obj2)
				target = rp_walk_dentry(&l->w, c->obj2, n->name);
		} else {
			ret = path_child(l, 1, c->obj2, rec->name, &op->base2);
		}
		if (ret)
			return ret;
		ret = acc_meta(l, o, 1) ?: acc_meta(l, c->oldp, 1) ?: acc_meta(l, c->obj2, 1);
		if (!ret && target && target->obj != o)
			ret = acc_all(l, target->obj);
		return ret ?: acc(l, &l->tree, RP_META, RP_META + 1, o && S_ISDIR(o->mode));
	}

	case IOTAP_OP_LINK:
		ret = path_obj(l, 0, o, &op->base);
		if (ret)
			return ret;
		if (c->ok)
			ret = path_new(l, 1, rec, 1, &op->base2);
		else
			ret = path_child(l, 1, c->obj2, rec->name, &op->base2);
		if (ret)
			return ret;
		return acc_meta(l, o, 1) ?: acc_meta(l, c->obj2, 1) ?:
		       acc(l, &l->tree, RP_META, RP_META + 1, 0);

	case IOTAP_OP_OPEN:
	case IOTAP_OP_OPENDIR:
		ret = path_obj(l, 0, o, &op->base);
		if (ret)
			return ret;
		if (rec->op == IOTAP_OP_OPEN && (rec->flags & O_TRUNC))
			ret = acc_all(l, o);
		else
			ret = acc_meta(l, o, 0);
		return ret ?: acc(l, &l->tree, RP_META, RP_META + 1, 0);

	case IOTAP_OP_READ:
		ret = use_fh(l, c, lane, 0) ?: acc_fh(l, c->fh, 0);
		if (ret || !o)
			return ret;
		/* a short read saw the end of the file: later growth changes it */
		if (rec->result >= 0 && (uint64_t)rec->result < len)
			return acc(l, &o->log, off, RP_DMAX, 0);
		return acc(l, &o->log, off, off + len, 0);

	case IOTAP_OP_WRITE:
	case IOTAP_OP_FALLOCATE:
		ret = use_fh(l, c, lane, 0) ?: acc_fh(l, c->fh, 0);
		if (ret || !o)
			return ret;
		return acc(l, &o->log, off < c->size ? off : c->size, off + len, 1);

	case IOTAP_OP_FLUSH:
	case IOTAP_OP_FSYNC:
	case IOTAP_OP_LSEEK:
	case IOTAP_OP_FLOCK:
		ret = use_fh(l, c, lane, 0) ?: acc_fh(l, c->fh, 0);
		if (ret || !o || rec->op == IOTAP_OP_FLUSH)
			return ret;
		if (rec->op == IOTAP_OP_FLOCK)
			return acc_meta(l, o, 1);
		return acc(l, &o->log, 0, RP_DMAX, 0);

	case IOTAP_OP_READDIR:
	case IOTAP_OP_READDIRPLUS:
	case IOTAP_OP_FSYNCDIR:
		return use_fh(l, c, lane, 1) ?: acc_fh(l, c->fh, 0) ?: acc_meta(l, o, 0);

	case IOTAP_OP_RELEASE:
	case IOTAP_OP_RELEASEDIR:
		/* a handle never opened in this process needs no close */
		if (c->fh && c->fh->slot != RP_NONE) {
			op->slot = c->fh->slot;
			op->xflags |= RP_X_FH_ONLY;
		} else if (!c->fh) {
			op->slot = orphan_slot(l, rec->fh, lane);
			op->xflags |= RP_X_FH_ONLY;
		} else {
			/* opened before the slice and never used in it: nothing to close */
			op->xflags |= RP_X_NOOP;
		}
		return acc_fh(l, c->fh, 1);

	case IOTAP_OP_COPY_FILE_RANGE:
		ret = use_fh(l, c, lane, 0) ?: acc_fh(l, c->fh, 0);
		if (ret)
			return ret;
		/* the output handle is not in the trace: open the output file */
		if (!c->obj2 || obj_rpath(l, c->obj2, l->pbuf[1]) < 0)
			return -ENOENT;
		set_path(l, 1, l->pbuf[1], &op->base2);
		op->slot2 = slot_new(l, lane);
		op->xflags |= RP_X_SLOT2_LAZY;
		ret = o ? acc(l, &o->log, off, off + len, 0) : 0;
		return ret ?: acc(l, &c->obj2->log, rec->aux, rec->aux + len, 1);
	}
	op->xflags |= RP_X_NOOP;
	return 0;
}

static int noop_op(const struct iotap_trace_rec *rec)
{
	switch (rec->op) {
	case IOTAP_OP_FORGET:
	case IOTAP_OP_UNKNOWN:
	case IOTAP_OP_GETLK:
	case IOTAP_OP_SETLK:
	case IOTAP_OP_BMAP:
	case IOTAP_OP_IOCTL:
	case IOTAP_OP_POLL:
	case IOTAP_OP_TMPFILE:
		return 1;
	}
	return rec->op >= IOTAP_OP_MAX || (rec->flags & IOTAP_OPF_REJECTED);
}

static uint64_t sched(struct load *l, uint64_t t)
{
	struct iotap_replay *r = l->r;

	if (r->o.timing == IOTAP_REPLAY_ASAP || t < r->t0)
		return 0;
	return (uint64_t)((double)(t - r->t0) / l->scale);
}

static void op_from_rec(struct load *l, const struct iotap_trace_rec *rec)
{
	struct rp_op *op = &l->op;

	memset(op, 0, sizeof(*op));
	op->op = rec->op;
	op->t_ns = sched(l, rec->time_ns);
	op->offset = rec->offset;
	op->length = rec->length;
	op->aux = rec->aux;
	op->result = rec->result;
	op->file = rec->file;
	op->file2 = rec->file2;
	op->fh = rec->fh;
	op->flags = rec->flags;
	op->mode = rec->mode;
	op->tid = rec->tid;
	op->pid = rec->pid;
	op->uid = rec->uid;
	op->gid = rec->gid;
	op->slot = op->slot2 = RP_NONE;
	l->str[0] = l->str[1] = l->str[2] = NULL;
}

static int on_op(struct load *l, const struct iotap_trace_rec *rec)
{
	struct iotap_replay *r = l->r;
	struct rp_ctx c;
	uint32_t lane;
	uint64_t idx;
	int ret;

	rp_walk_op_pre(&l->w, rec, &c);
	if (rec->time_ns < r->t_begin || c.thread == RP_NONE ||
	    (rec->op < IOTAP_OP_MAX && (r->o.skip_ops & (1ull << rec->op))))
		return rp_walk_op_post(&l->w, &c);
	lane = l->w.threads[c.thread].lane;
	if (lane == RP_NONE)
		return rp_walk_op_post(&l->w, &c);
	op_from_rec(l, rec);
	idx = next_idx(l, lane);
	rp_deps_begin(&l->ds, lane, idx, rec->time_ns, rec->time_ns + rec->dur_ns);
	if (noop_op(rec)) {
		l->op.xflags |= RP_X_NOOP;
	} else {
		ret = compile(l, &c, lane);
		if (ret == -ENOMEM)
			return ret;
		if (ret) {
			/* nothing to issue it on: counted as unreplayable */
			l->op.xflags = RP_X_NOPATH;
			l->str[0] = l->str[1] = l->str[2] = NULL;
			l->ds.n = 0;
		}
	}
	ret = rp_walk_op_post(&l->w, &c);
	if (ret)
		return ret;
	/* what the op created is written by it: later users wait for it */
	if (c.ok && !(l->op.xflags & (RP_X_NOOP | RP_X_NOPATH))) {
		switch (rec->op) {
		case IOTAP_OP_CREATE:
		case IOTAP_OP_MKDIR:
		case IOTAP_OP_MKNOD:
		case IOTAP_OP_SYMLINK:
			ret = acc_all(l, c.obj);
			if (ret)
				return ret;
			if (rec->op != IOTAP_OP_CREATE)
				break;
			/* fall through - CREATE opens a handle */
		case IOTAP_OP_OPEN:
		case IOTAP_OP_OPENDIR: {
			struct rp_fh *h = rec->fh ? rp_walk_fh(&l->w, rec->fh) : NULL;

			if (h) {
				h->slot = slot_new(l, lane);
				h->open_lane = lane;
				l->op.slot = h->slot;
				ret = acc_fh(l, h, 1);
				if (ret)
					return ret;
			}
			break;
		}
		}
	}
	if ((rec->op == IOTAP_OP_RELEASE || rec->op == IOTAP_OP_RELEASEDIR) &&
	    l->op.slot != RP_NONE) {
		uint32_t i;

		slot_free(l, lane, l->op.slot);
		for (i = 0; i < l->norph; i++)
			if (l->orph[i].fh == rec->fh)
				l->orph[i] = l->orph[--l->norph];
	}
	rp_deps_finish(&l->ds);
	r->ops_compiled++;
	ret = push(l, lane, l->ds.d, l->ds.n);
	/* the output of a copy is opened and closed by the op itself */
	if (!ret && l->op.slot2 != RP_NONE)
		slot_free(l, lane, l->op.slot2);
	return ret;
}

static int on_name(struct load *l, const struct iotap_trace_rec *rec)
{
	struct iotap_replay *r = l->r;
	uint32_t t, lane;
	int ret;

	if (rec->time_ns >= r->t_begin && rec->file2 && rec->tid) {
		t = rp_walk_thread(&l->w, rec->pid, rec->tid);
		lane = t != RP_NONE ? l->w.threads[t].lane : RP_NONE;
		if (lane != RP_NONE) {
			op_from_rec(l, rec);
			l->op.op = RP_OP_NAME;
			l->op.t_ns = 0;
			l->op.length = rec->length;
			if (rec->name) {
				l->str[2] = rec->name;
				l->str_len[2] = rec->name_len;
			}
			ret = push(l, lane, NULL, 0);
			if (ret)
				return ret;
		}
	}
	return rp_walk_name(&l->w, rec);
}

static int to_all_lanes(struct load *l, const struct iotap_trace_rec *rec, uint16_t what)
{
	uint32_t i;
	int ret;

	for (i = 0; i < l->r->nlanes; i++) {
		op_from_rec(l, rec);
		l->op.op = what;
		if (rec && rec->name) {
			l->str[2] = rec->name;
			l->str_len[2] = rec->name_len;
		}
		ret = push(l, i, NULL, 0);
		if (ret)
			return ret;
	}
	return 0;
}

static int in_slice_phase(struct load *l, const struct iotap_trace_rec *rec)
{
	struct iotap_replay *r = l->r;

	if (rec->time_ns < r->t_begin)
		return 0;
	if (rec->time_ns < r->t_end)
		return 1;
	return rec->time_ns == r->t_end && r->end_marker && rec->flags == IOTAP_PHASE_END;
}

int rp_load(struct iotap_replay *r)
{
	struct iotap_trace_rec rec, end_rec;
	struct load l;
	int ret;

	memset(&l, 0, sizeof(l));
	l.r = r;
	l.sh = r->sh;
	l.scale = r->o.timing == IOTAP_REPLAY_SCALE && r->o.scale > 0 ? r->o.scale : 1.0;
	l.free = calloc(r->nlanes, sizeof(*l.free));
	if (!l.free) {
		ret = -ENOMEM;
		goto out_free;
	}
	ret = rp_ring_prod_init(&l.ring, r);
	if (ret)
		goto out_free;
	ret = rp_src_open(&l.src, r->o.trace, LOOKAHEAD);
	if (ret)
		goto out_free;
	ret = rp_walk_init(&l.w, 0);
	if (ret)
		goto out_src;
	ret = rp_walk_set_threads(&l.w, r->threads, r->nthreads);
	if (ret)
		goto out_walk;
	ret = rp_deps_init(&l.ds, r->nlanes);
	if (ret)
		goto out_walk;

	while ((ret = rp_src_next(l.src, &rec)) > 0) {
		if (atomic_load(&r->sh->stop)) {
			ret = -EINTR;
			break;
		}
		if (rec.time_ns > r->t_end)
			break;
		switch (rec.type) {
		case IOTAP_REC_OP:
			ret = rec.time_ns < r->t_end ? on_op(&l, &rec) : 0;
			break;
		case IOTAP_REC_NAME:
			ret = on_name(&l, &rec);
			break;
		case IOTAP_REC_PHASE:
			ret = in_slice_phase(&l, &rec) ? to_all_lanes(&l, &rec, RP_OP_PHASE) : 0;
			break;
		default:
			ret = 0;
		}
		if (ret)
			break;
	}
	if (ret >= 0) {
		memset(&end_rec, 0, sizeof(end_rec));
		ret = to_all_lanes(&l, &end_rec, RP_OP_END);
	}
	rp_ring_flush(&l.ring);
	pthread_mutex_lock(&r->pre_lock);
	r->preloaded = 1;
	pthread_cond_broadcast(&r->pre_cond);
	pthread_mutex_unlock(&r->pre_lock);
	rp_deps_release(&l.ds);
out_walk:
	rp_walk_release(&l.w);
	rp_dlog_free(l.tree);
out_src:
	rp_src_close(l.src);
out_free:
	if (l.free) {
		uint32_t i;

		for (i = 0; i < r->nlanes; i++)
			free(l.free[i].v);
		free(l.free);
	}
	free(l.orph);
	rp_ring_prod_release(&l.ring);
	return ret < 0 ? ret : 0;
}
