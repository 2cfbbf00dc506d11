// SPDX-License-Identifier: MIT
/*
 * walk.c - the file model a trace implies, record by record
 *
 * Both passes of a replay (the scan and the loader) feed every record of
 * the trace, in start order, through one struct rp_walk; at any record it
 * says which object (file generation) a file id means, which names it has,
 * its simulated size, which handle an fh id is and which recorded thread an
 * op belongs to. Read replay_i.h first.
 *
 * Rules, from trace/FORMAT.md's Op fields:
 * - A NAME binds a file id to (parent, name); the first NAME of an unknown
 *   id is a file that existed before the capture, with its first-seen size.
 *   flags = 1 adds a name (hard link), otherwise the object moves (rename)
 *   or is named for the first time (create). A name another object held
 *   is taken from it (rename over).
 * - CREATE, MKDIR, MKNOD and SYMLINK make a new generation of their file
 *   id (inode numbers are reused after an unlink); the name comes with the
 *   NAME record that follows.
 * - UNLINK and RMDIR drop one name (the recorded name says which one when
 *   the file had several).
 * - Sizes follow WRITE, SETATTR(size), O_TRUNC, FALLOCATE and
 *   COPY_FILE_RANGE results.
 * - Ops without a caller (tid 0: the kernel's RELEASE, writeback) belong
 *   to the thread that used their handle last.
 *
 * Objects and names are never freed before the walk is: a trace names a
 * bounded number of files, and an object stays reachable from handles and
 * from the loader's dependency logs.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "replay_i.h"

#define SLAB_BYTES	(1u << 20)
#define FUSE_SET_ATTR_SIZE_BIT	(1u << 3)
#define FALLOC_KEEP_SIZE_BIT	0x01u

struct rp_slab {
	struct rp_slab *next;
	size_t used, cap;
	_Alignas(16) char mem[];
};

static void *walk_alloc(struct rp_walk *w, size_t n)
{
	struct rp_slab *s = w->slabs;
	void *p;

	n = (n + 15) & ~(size_t)15;
	if (!s || s->used + n > s->cap) {
		size_t cap = n > SLAB_BYTES ? n : SLAB_BYTES;

		s = malloc(sizeof(*s) + cap);
		if (!s)
			return NULL;
		s->next = w->slabs;
		s->used = 0;
		s->cap = cap;
		w->slabs = s;
	}
	p = s->mem + s->used;
	s->used += n;
	return p;
}

static uint64_t name_hash(const struct rp_obj *parent, const char *name)
{
	return iotap_hash_str(name, (uint64_t)(uintptr_t)parent);
}

int rp_walk_init(struct rp_walk *w, int add_threads)
{
	memset(w, 0, sizeof(*w));
	iotap_map_init(&w->ids, sizeof(struct rp_obj *));
	iotap_map_init(&w->dent, sizeof(struct rp_bind *));
	iotap_map_init(&w->fhs, sizeof(struct rp_fh *));
	iotap_map_init(&w->thr, sizeof(uint32_t));
	w->add_threads = add_threads;
	w->epoch = 1;
	return 0;
}

void rp_walk_release(struct rp_walk *w)
{
	struct rp_slab *s, *n;
	struct rp_fh **hp;
	struct rp_obj *o;
	uint64_t pos = 0;

	for (o = w->objs; o; o = o->all) {
		free(o->path);
		rp_dlog_free(o->log);
	}
	while ((hp = iotap_map_next(&w->fhs, &pos, NULL)))
		rp_dlog_free((*hp)->log);
	for (s = w->slabs; s; s = n) {
		n = s->next;
		free(s);
	}
	iotap_map_release(&w->ids);
	iotap_map_release(&w->dent);
	iotap_map_release(&w->fhs);
	iotap_map_release(&w->thr);
	free(w->threads);
	free(w->root_path);
	memset(w, 0, sizeof(*w));
}

/* --- threads ----------------------------------------------------------------- */

uint32_t rp_walk_thread(struct rp_walk *w, uint32_t pid, uint32_t tid)
{
	uint64_t key = (uint64_t)pid << 32 | tid;
	struct rp_thread *t;
	uint32_t *idx = iotap_map_get(&w->thr, key);

	if (idx)
		return *idx;
	if (!w->add_threads)
		return RP_NONE;
	if (w->nthreads == w->thr_cap) {
		uint32_t cap = w->thr_cap ? 2 * w->thr_cap : 64;
		struct rp_thread *n = realloc(w->threads, cap * sizeof(*n));

		if (!n)
			return RP_NONE;
		w->threads = n;
		w->thr_cap = cap;
	}
	if (iotap_map_put(&w->thr, key, (void **)&idx) < 0)
		return RP_NONE;
	t = &w->threads[w->nthreads];
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->tid = tid;
	t->lane = RP_NONE;
	*idx = w->nthreads++;
	return *idx;
}

int rp_walk_set_threads(struct rp_walk *w, const struct rp_thread *t, uint32_t n)
{
	uint32_t i;

	w->add_threads = 1;
	for (i = 0; i < n; i++)
		if (rp_walk_thread(w, t[i].pid, t[i].tid) != i)
			return -ENOMEM;
	memcpy(w->threads, t, n * sizeof(*t));
	w->add_threads = 0;
	return 0;
}

/* --- objects ----------------------------------------------------------------- */

struct rp_obj *rp_walk_obj(struct rp_walk *w, uint64_t id)
{
	struct rp_obj **op = iotap_map_get(&w->ids, id);

	return op ? *op : NULL;
}

struct rp_bind *rp_walk_dentry(struct rp_walk *w, const struct rp_obj *parent, const char *name)
{
	uint64_t h = name_hash(parent, name), pos;
	struct rp_bind **bp;

	/* equal hashes are allowed: compare the full (parent, name) */
	for (bp = iotap_map_find(&w->dent, h, &pos); bp; bp = iotap_map_find_next(&w->dent, h, &pos))
		if ((*bp)->parent == parent && !strcmp((*bp)->name, name))
			return *bp;
	return NULL;
}

struct rp_bind *rp_walk_bind_in(const struct rp_obj *obj, const struct rp_obj *parent)
{
	struct rp_bind *b;

	if (!parent)
		return obj->names;
	for (b = obj->names; b; b = b->onext)
		if (b->parent == parent)
			return b;
	return obj->names;
}

struct rp_bind *rp_walk_rename_src(struct rp_walk *w, const struct iotap_trace_rec *rec,
				   struct rp_obj *obj, struct rp_obj *oldp)
{
	struct rp_bind *b, *last = NULL;

	if (!obj)
		return NULL;
	if (rec->name && oldp) {
		b = rp_walk_dentry(w, oldp, rec->name);
		if (b && b->obj == obj)
			return b;
	}
	for (b = obj->names; b; b = b->onext)
		if (!oldp || b->parent == oldp)
			last = b;
	return last ? last : obj->names;
}

static int obj_is_reg(const struct rp_obj *o)
{
	return S_ISREG(o->mode) || !(o->mode & S_IFMT);
}

/* An object with no name and no open handle is gone: its bytes are freed. */
static void obj_maybe_gone(struct rp_walk *w, struct rp_obj *o)
{
	if (!o->names && !o->nfh && obj_is_reg(o) && !(o->flags & RP_OBJ_ROOT)) {
		w->bytes_delta -= (int64_t)o->size;
		o->size = 0;
	}
}

static void bind_del(struct rp_walk *w, struct rp_bind *b)
{
	struct rp_bind **pp;
	struct rp_obj *o = b->obj;
	uint64_t pos;

	for (pp = iotap_map_find(&w->dent, b->hash, &pos); pp;
	     pp = iotap_map_find_next(&w->dent, b->hash, &pos))
		if (*pp == b) {
			iotap_map_del_value(&w->dent, pp);
			break;
		}
	for (pp = &o->names; *pp; pp = &(*pp)->onext)
		if (*pp == b) {
			*pp = b->onext;
			break;
		}
	if (b->parent)
		b->parent->nchild--;
	if (S_ISDIR(o->mode))
		w->epoch++;
	free(o->path);
	o->path = NULL;
}

static struct rp_bind *bind_add(struct rp_walk *w, struct rp_obj *o, struct rp_obj *parent,
				const char *name)
{
	size_t len = strlen(name);
	struct rp_bind *b, *old, **pp, **slot;

	old = rp_walk_dentry(w, parent, name);
	if (old) {
		struct rp_obj *victim = old->obj;

		bind_del(w, old);
		if (victim != o)
			obj_maybe_gone(w, victim);
	}
	b = walk_alloc(w, sizeof(*b) + len + 1);
	if (!b)
		return NULL;
	memcpy(b->name, name, len + 1);
	b->parent = parent;
	b->obj = o;
	b->onext = NULL;
	b->hash = name_hash(parent, name);
	if (iotap_map_add(&w->dent, b->hash, (void **)&slot) < 0)
		return NULL;
	*slot = b;
	for (pp = &o->names; *pp; pp = &(*pp)->onext)
		;
	*pp = b;
	if (parent)
		parent->nchild++;
	if (S_ISDIR(o->mode))
		w->epoch++;
	free(o->path);
	o->path = NULL;
	return b;
}

/* A new generation of @id; the previous one leaves the id table. */
static struct rp_obj *obj_new(struct rp_walk *w, uint64_t id, uint32_t mode)
{
	struct rp_obj *o = rp_walk_obj(w, id), **slot;

	if (o) {
		/* its unlink escaped us: it cannot keep names an id no longer has */
		while (o->names)
			bind_del(w, o->names);
	}
	o = walk_alloc(w, sizeof(*o));
	if (!o)
		return NULL;
	memset(o, 0, sizeof(*o));
	o->id = id;
	o->mode = mode;
	o->entry = -1;
	o->unnamed = -1;
	/* the id's entry now names the new generation */
	if (iotap_map_put(&w->ids, id, (void **)&slot) < 0)
		return NULL;
	*slot = o;
	o->all = w->objs;
	w->objs = o;
	return o;
}

/* --- handles ------------------------------------------------------------------ */

struct rp_fh *rp_walk_fh(struct rp_walk *w, uint64_t fh)
{
	struct rp_fh **hp = iotap_map_get(&w->fhs, fh);

	return hp ? *hp : NULL;
}

static struct rp_fh *fh_add(struct rp_walk *w, uint64_t id, struct rp_obj *o, uint32_t oflags,
			    uint32_t thread, int dir)
{
	struct rp_fh *h = rp_walk_fh(w, id), **slot;

	if (h)
		return h;	/* a handle opened twice: keep the first */
	if (iotap_map_put(&w->fhs, id, (void **)&slot) < 0)
		return NULL;
	if (w->fh_free) {
		h = w->fh_free;
		w->fh_free = h->next_free;
	} else {
		h = walk_alloc(w, sizeof(*h));
		if (!h) {
			iotap_map_del_value(&w->fhs, slot);
			return NULL;
		}
	}
	*slot = h;
	memset(h, 0, sizeof(*h));
	h->fh = id;
	h->obj = o;
	h->oflags = oflags;
	h->user = thread;
	h->slot = RP_NONE;
	h->open_lane = RP_NONE;
	h->dir = (uint8_t)dir;
	h->writable = (oflags & O_ACCMODE) != O_RDONLY;
	if (o)
		o->nfh++;
	return h;
}

static void fh_del(struct rp_walk *w, struct rp_fh *h)
{
	iotap_map_del(&w->fhs, h->fh);
	if (h->obj) {
		h->obj->nfh--;
		obj_maybe_gone(w, h->obj);
	}
	rp_dlog_free(h->log);
	h->log = NULL;
	h->next_free = w->fh_free;
	w->fh_free = h;
}

/* --- records ------------------------------------------------------------------- */

int rp_walk_name(struct rp_walk *w, const struct iotap_trace_rec *rec)
{
	const char *name = rec->name ? rec->name : "";
	struct rp_obj *o, *parent;
	struct rp_bind *b;
	int kind = RP_BIND_LINK;

	if (!rec->file2) {
		/* the root: its name is the captured directory */
		o = rp_walk_obj(w, rec->file);
		if (!o) {
			o = obj_new(w, rec->file, rec->mode);
			if (!o)
				return -ENOMEM;
			o->uid = rec->uid;
			o->gid = rec->gid;
			o->size = rec->length;
		}
		o->flags |= RP_OBJ_ROOT;
		if (!w->root) {
			w->root = o;
			free(w->root_path);
			w->root_path = strdup(name);
			if (!w->root_path)
				return -ENOMEM;
		}
		return 0;
	}
	parent = rp_walk_obj(w, rec->file2);
	if (!parent) {
		/* damaged trace: a parent never named; paths through it fail */
		parent = obj_new(w, rec->file2, S_IFDIR | 0755);
		if (!parent)
			return -ENOMEM;
	}
	o = rp_walk_obj(w, rec->file);
	if (!o) {
		o = obj_new(w, rec->file, rec->mode);
		if (!o)
			return -ENOMEM;
		o->uid = rec->uid;
		o->gid = rec->gid;
		o->size = rec->length;
		kind = RP_BIND_FIRST;
	} else if (!o->names && (o->flags & RP_OBJ_CREATED)) {
		kind = RP_BIND_CREATED;
		o->uid = rec->uid;
		o->gid = rec->gid;
	}
	if (!(o->mode & S_IFMT))
		o->mode = rec->mode;
	b = rp_walk_dentry(w, parent, name);
	if (b && b->obj == o) {
		o->rename_from = 0;
		o->rename_bind = NULL;
		return 0;
	}
	if (!(rec->flags & 1) && o->names && !(o->flags & RP_OBJ_ROOT)) {
		struct rp_bind *old = o->names;

		if (o->rename_bind) {
			struct rp_bind *b2;

			/* still one of its names? */
			for (b2 = o->names; b2 && b2 != o->rename_bind; b2 = b2->onext)
				;
			if (b2)
				old = b2;
		} else if (o->rename_from) {
			old = rp_walk_bind_in(o, rp_walk_obj(w, o->rename_from));
		}
		bind_del(w, old);
		kind = RP_BIND_MOVED;
	}
	o->rename_from = 0;
	o->rename_bind = NULL;
	b = bind_add(w, o, parent, name);
	if (!b)
		return -ENOMEM;
	if (w->on_bind)
		w->on_bind(w, b, kind);
	return 0;
}

static int op_creates(unsigned int op)
{
	return op == IOTAP_OP_CREATE || op == IOTAP_OP_MKDIR || op == IOTAP_OP_MKNOD ||
	       op == IOTAP_OP_SYMLINK;
}

static int op_has_file2(unsigned int op)
{
	switch (op) {
	case IOTAP_OP_LOOKUP: case IOTAP_OP_MKNOD: case IOTAP_OP_MKDIR: case IOTAP_OP_UNLINK:
	case IOTAP_OP_RMDIR: case IOTAP_OP_SYMLINK: case IOTAP_OP_RENAME: case IOTAP_OP_LINK:
	case IOTAP_OP_CREATE: case IOTAP_OP_COPY_FILE_RANGE:
		return 1;
	}
	return 0;
}

/* Ops whose fh field names a handle being opened, not one in use. */
static int op_opens(unsigned int op)
{
	return op == IOTAP_OP_OPEN || op == IOTAP_OP_CREATE || op == IOTAP_OP_OPENDIR;
}

void rp_walk_op_pre(struct rp_walk *w, const struct iotap_trace_rec *rec, struct rp_ctx *c)
{
	unsigned int op = rec->op;

	memset(c, 0, sizeof(*c));
	c->rec = rec;
	c->ok = rec->result >= 0;
	if (rec->fh && !op_opens(op))
		c->fh = rp_walk_fh(w, rec->fh);
	if (rec->tid)
		c->thread = rp_walk_thread(w, rec->pid, rec->tid);
	else if (c->fh)
		c->thread = c->fh->user;
	else
		c->thread = rp_walk_thread(w, 0, 0);
	if (op_has_file2(op) && rec->file2)
		c->obj2 = rp_walk_obj(w, rec->file2);
	if (op == IOTAP_OP_RENAME && rec->aux)
		c->oldp = rp_walk_obj(w, rec->aux);
	if ((op == IOTAP_OP_UNLINK || op == IOTAP_OP_RMDIR) && rec->name && c->obj2) {
		struct rp_bind *b = rp_walk_dentry(w, c->obj2, rec->name);

		if (b)
			c->obj = b->obj;
	}
	if (!c->obj && rec->file && !op_creates(op))
		c->obj = rp_walk_obj(w, rec->file);
	if (!c->obj && c->fh)
		c->obj = c->fh->obj;
	/* a file never named can only be reached through a handle */
	if (rec->file && !c->obj && !c->fh && !op_creates(op) && op != IOTAP_OP_FORGET &&
	    op != IOTAP_OP_LOOKUP)
		w->orphans++;
	c->size = c->obj ? c->obj->size : 0;
}

static void size_to(struct rp_walk *w, struct rp_obj *o, uint64_t size)
{
	if (!o || !obj_is_reg(o))
		return;
	w->bytes_delta += (int64_t)(size - o->size);
	o->size = size;
}

int rp_walk_op_post(struct rp_walk *w, struct rp_ctx *c)
{
	const struct iotap_trace_rec *rec = c->rec;
	struct rp_obj *o = c->obj;
	uint64_t end;

	if (c->fh && c->thread != RP_NONE)
		c->fh->user = c->thread;
	if (!c->ok)
		return 0;
	switch (rec->op) {
	case IOTAP_OP_CREATE:
	case IOTAP_OP_MKDIR:
	case IOTAP_OP_MKNOD:
	case IOTAP_OP_SYMLINK: {
		uint32_t mode = rec->mode & 07777;

		if (!rec->file)
			return 0;
		if (rec->op == IOTAP_OP_MKDIR)
			mode |= S_IFDIR;
		else if (rec->op == IOTAP_OP_SYMLINK)
			mode |= S_IFLNK;
		else if (rec->op == IOTAP_OP_CREATE)
			mode |= S_IFREG;
		else
			mode = rec->mode ? rec->mode : S_IFREG | 0644;
		o = obj_new(w, rec->file, mode);
		if (!o)
			return -ENOMEM;
		o->flags |= RP_OBJ_CREATED;
		o->uid = rec->uid;
		o->gid = rec->gid;
		if (rec->op == IOTAP_OP_SYMLINK)
			o->size = rec->length;
		c->obj = o;
		if (rec->op == IOTAP_OP_CREATE && rec->fh &&
		    !fh_add(w, rec->fh, o, rec->flags, c->thread, 0))
			return -ENOMEM;
		return 0;
	}
	case IOTAP_OP_OPEN:
	case IOTAP_OP_OPENDIR:
		if (rec->fh && !fh_add(w, rec->fh, o, rec->flags, c->thread,
				       rec->op == IOTAP_OP_OPENDIR))
			return -ENOMEM;
		if (rec->op == IOTAP_OP_OPEN && (rec->flags & O_TRUNC))
			size_to(w, o, 0);
		return 0;
	case IOTAP_OP_RELEASE:
	case IOTAP_OP_RELEASEDIR:
		if (c->fh)
			fh_del(w, c->fh);
		return 0;
	case IOTAP_OP_UNLINK:
	case IOTAP_OP_RMDIR: {
		struct rp_bind *b;

		if (!o)
			return 0;
		b = rec->name && c->obj2 ? rp_walk_dentry(w, c->obj2, rec->name) : NULL;
		if (!b || b->obj != o)
			b = rp_walk_bind_in(o, c->obj2);
		if (b)
			bind_del(w, b);
		obj_maybe_gone(w, o);
		return 0;
	}
	case IOTAP_OP_RENAME:
		if (o) {
			o->rename_from = rec->aux;
			o->rename_bind = rp_walk_rename_src(w, rec, o, c->oldp);
		}
		return 0;
	case IOTAP_OP_WRITE:
		end = rec->offset + (uint64_t)rec->result;
		if (o && end > o->size)
			size_to(w, o, end);
		return 0;
	case IOTAP_OP_SETATTR:
		if (rec->flags & FUSE_SET_ATTR_SIZE_BIT)
			size_to(w, o, rec->offset);
		return 0;
	case IOTAP_OP_FALLOCATE:
		end = rec->offset + rec->length;
		if (o && !(rec->flags & FALLOC_KEEP_SIZE_BIT) && end > o->size)
			size_to(w, o, end);
		return 0;
	case IOTAP_OP_COPY_FILE_RANGE:
		end = rec->aux + (uint64_t)rec->result;
		if (c->obj2 && end > c->obj2->size)
			size_to(w, c->obj2, end);
		return 0;
	}
	return 0;
}

/* --- paths -------------------------------------------------------------------- */

int rp_walk_path(const struct rp_walk *w, const struct rp_obj *obj, char *buf, size_t size)
{
	const struct rp_bind *stack[RP_DEPTH_MAX];
	const struct rp_obj *o = obj;
	size_t len = 0;
	int n = 0, i;

	(void)w;
	while (!(o->flags & RP_OBJ_ROOT)) {
		const struct rp_bind *b = o->names;

		if (!b || !b->parent)
			return -ENOENT;
		if (n == RP_DEPTH_MAX)
			return -ELOOP;
		stack[n++] = b;
		o = b->parent;
	}
	for (i = n - 1; i >= 0; i--) {
		size_t l = strlen(stack[i]->name);

		if (len + l + 2 > size)
			return -ENAMETOOLONG;
		memcpy(buf + len, stack[i]->name, l);
		len += l;
		if (i)
			buf[len++] = '/';
	}
	buf[len] = '\0';
	return (int)len;
}

unsigned int rp_map_apply(struct rp_map *maps, unsigned int nmaps, char *path, int count)
{
	size_t len = strlen(path);
	unsigned int i;

	for (i = 0; i < nmaps; i++) {
		struct rp_map *m = &maps[i];

		if (m->old_len && (len < m->old_len || memcmp(path, m->old, m->old_len) ||
				   (path[m->old_len] && path[m->old_len] != '/')))
			continue;
		if (count)
			m->hits++;
		if (!m->old_len)
			break;
		if (path[m->old_len])
			memmove(path, path + m->old_len + 1, len - m->old_len);
		else
			strcpy(path, ".");
		return 1 + i;
	}
	if (i < nmaps) {
		if (!path[0])
			strcpy(path, ".");
		return 1 + i;
	}
	if (!path[0])
		strcpy(path, ".");
	return 0;
}
