// SPDX-License-Identifier: MIT
/*
 * paths.c - a join's records, each with its file's path at the time it ran
 *
 * NAME records bind a file id to (parent id, entry name); a later NAME for
 * the same id rebinds it: a rename, or the inode number reused for another
 * file after the first was deleted (FORMAT.md "Record meanings"). A path
 * built from the last binding of every id names some ops wrongly: the
 * files of a directory whose inode later became a plain file show under
 * that file's name. Here the bindings are applied as the records stream
 * by, in the reader's (time) order, so each record's path is built from
 * the bindings in force when it started -- with one exception the format
 * forces: an op that makes a binding (LOOKUP, CREATE, MKDIR, MKNOD,
 * SYMLINK) is recorded before its NAME, which follows from the same
 * thread (the daemon writes both before it replies; a workload writes the
 * NAME right after the OP). Such an op waits in a queue until its NAME,
 * the caller thread's next record, or PATHS_WAIT_NS past its end, and
 * takes the path its NAME gives; the records behind it wait with their
 * paths already taken. RENAME and LINK name the file by the path it had
 * (the old name).
 *
 * Paths are relative to the trace's root ("." for the root itself; the
 * root's NAME, the first of parent 0, carries the backing path, left out;
 * a later NAME of parent 0 by an absolute path -- a second directory a
 * workload uses, pgsql's --wal-dir -- keeps that path, and so its files'
 * paths start with it; a NAME of parent 0 with a relative name --
 * synthetic traces, a workload's relative target -- is a top-level name
 * as it is); a component whose id
 * has no binding shows as "#ID". An op with no file id of its own but an
 * entry name (a failed lookup or create, an unlink of a file with several
 * links) gets its parent's path and that name.
 *
 * Cost: each file id keeps its path, built from its parent's, until a
 * binding of an id already bound changes (then every path is rebuilt on
 * its next use); a record that needs no waiting, with the queue empty,
 * passes through without a copy. Memory: the bindings (one per file id)
 * and at most PATHS_QUEUE queued records.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iotap_base.h"
#include "trace_i.h"

/* How long past its end an op waits for its NAME, ns. */
#define PATHS_WAIT_NS	(100 * 1000 * 1000ull)
/* Records queued behind waiting ops at most; beyond, the oldest is resolved. */
#define PATHS_QUEUE	65536u
/* Waiting ops at most (one per caller thread in practice). */
#define PATHS_WAITING	64u
/* Components followed up a chain: deeper (or a loop) shows as "#ID/...". */
#define PATHS_DEPTH	256u

struct bind {
	uint64_t parent;
	char *name;			/* the entry name (the root's: the backing path) */
	char *path;			/* built at @epoch, NULL: not yet */
	uint32_t path_len;
	uint64_t epoch;
	uint64_t key;			/* of @path (iotap_trace_path.key) */
};

struct pslot {
	struct iotap_trace_rec rec;	/* copy (the sample only for SAMPLE) */
	char *buf;			/* rec.name then the path, each NUL-terminated */
	size_t cap;
	uint32_t path_len;
	bool has_path;
	uint64_t key;
	bool waiting;			/* a binding op whose NAME may follow */
};

struct iotap_trace_paths {
	struct iotap_trace_join *j;
	struct iotap_map binds;		/* file id -> struct bind */
	uint64_t epoch;			/* bumped when an existing binding changes */
	uint64_t next_key;
	uint64_t root;			/* the trace's root: the first NAME of parent 0 by a path */
	bool missing;			/* a path was built with an unbound component */
	struct pslot *q;		/* ring of queued records */
	unsigned int qcap, head, n;
	unsigned int waiting[PATHS_WAITING];	/* ring positions of waiting slots */
	unsigned int nwait;
	bool popped;			/* the head slot was returned last call */
	int eof;			/* 1: the join is done; err its last result */
	int err;
	char *tmp;			/* the path of a pass-through record */
	size_t tmp_cap;
	uint32_t tmp_len;
	uint64_t last_file;		/* path_of()'s last file and its binding, */
	struct bind *last;		/* NULL: none (the map changed since) */
};

static int grow(char **buf, size_t *cap, size_t need)
{
	char *n;
	size_t c = *cap ? *cap : 256;

	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	n = realloc(*buf, c);
	if (!n)
		return -ENOMEM;
	*buf = n;
	*cap = c;
	return 0;
}

/* Does @op, when it succeeds, bind its own file id with a NAME that follows it? */
static bool makes_binding(const struct iotap_trace_rec *r)
{
	if (r->type != IOTAP_REC_OP || r->result < 0 || !r->file)
		return false;
	switch (r->op) {
	case IOTAP_OP_LOOKUP: case IOTAP_OP_CREATE: case IOTAP_OP_MKDIR:
	case IOTAP_OP_MKNOD: case IOTAP_OP_SYMLINK:
		return true;
	default:
		return false;
	}
}

/* The parent of an entry name an OP carries without a file id, 0: none. */
static uint64_t name_parent(const struct iotap_trace_rec *r)
{
	if (r->type != IOTAP_REC_OP || r->file || !r->name || !r->name_len)
		return 0;
	switch (r->op) {
	case IOTAP_OP_LOOKUP: case IOTAP_OP_MKNOD: case IOTAP_OP_MKDIR: case IOTAP_OP_UNLINK:
	case IOTAP_OP_RMDIR: case IOTAP_OP_LINK: case IOTAP_OP_CREATE:
		return r->file2;
	case IOTAP_OP_RENAME:
		return r->aux;		/* the old parent */
	default:
		return 0;
	}
}

static int apply_name(struct iotap_trace_paths *p, const struct iotap_trace_rec *r)
{
	struct bind *b;
	const char *nm = r->name ? r->name : "";
	char *s;
	int had = iotap_map_put(&p->binds, r->file, (void **)&b);

	p->last = NULL;			/* an insertion may have moved the bindings */
	if (had < 0)
		return had;
	if (had) {
		/* an additional name (a hard link) leaves the path as it was */
		if ((r->flags & 1) || (b->parent == r->file2 && b->name && !strcmp(b->name, nm)))
			return 0;
		p->epoch++;
	} else if (p->missing) {
		p->epoch++;		/* it may complete a path built without it */
		p->missing = false;
	}
	s = strdup(nm);
	if (!s)
		return -ENOMEM;
	free(b->name);
	b->name = s;
	b->parent = r->file2;
	b->epoch = 0;		/* stale whatever the epoch */
	if (!p->root && !r->file2 && s[0] == '/')
		p->root = r->file;
	return 0;
}

/*
 * The path of @file now, in @b's cache; NULL on ENOMEM. Built from the
 * parent's (recursion bounded by @depth).
 */
static struct bind *path_of(struct iotap_trace_paths *p, uint64_t file, unsigned int depth)
{
	struct bind *b, *pb = NULL;
	char pre[32];
	const char *ppath = NULL;
	size_t plen = 0, nlen, need;
	bool root;
	char *np;

	/* one file's calls in a row (a read loop): its binding without the lookup */
	if (p->last && file == p->last_file) {
		b = p->last;
	} else {
		b = iotap_map_get(&p->binds, file);
		if (!b)
			return NULL;
		p->last_file = file;
		p->last = b;
	}
	if (b->epoch == p->epoch + 1 && b->path)
		return b;
	if (!b->parent) {
		ppath = NULL;		/* the root */
	} else if (depth < PATHS_DEPTH && b->parent != file &&
		   (pb = path_of(p, b->parent, depth + 1))) {
		ppath = pb->path;
		plen = pb->path_len;
	} else {
		p->missing = true;
		plen = (size_t)snprintf(pre, sizeof(pre), "#%" PRIu64, b->parent);
		ppath = pre;
	}
	nlen = strlen(b->name);
	/* another root (pgsql's --wal-dir) keeps its path: its files are not the root's */
	root = !b->parent && b->name[0] == '/' && file == p->root;
	if (root)
		need = 2;		/* the root, named by the backing path */
	else if (ppath && !(plen == 1 && ppath[0] == '.'))
		need = plen + 1 + nlen + 1;
	else
		need = nlen + 1;
	np = malloc(need);
	if (!np)
		return NULL;
	if (root) {
		memcpy(np, ".", 2);
	} else if (need == nlen + 1) {
		memcpy(np, b->name, nlen + 1);
	} else {
		memcpy(np, ppath, plen);
		np[plen] = '/';
		memcpy(np + plen + 1, b->name, nlen + 1);
	}
	if (!b->path || b->path_len != need - 1 || memcmp(b->path, np, need))
		b->key = ++p->next_key;
	free(b->path);
	b->path = np;
	b->path_len = (uint32_t)(need - 1);
	b->epoch = p->epoch + 1;
	return b;
}

/*
 * @r's path into @buf/@cap (path at @*buf + @off); 0, -ENOMEM. *@has: 0
 * when the record names no file.
 */
static int resolve(struct iotap_trace_paths *p, const struct iotap_trace_rec *r, char **buf,
		   size_t *cap, size_t off, uint32_t *len, uint64_t *key, bool *has)
{
	struct bind *b;
	uint64_t f = r->file, par = 0;
	char num[32];
	const char *s;
	size_t n, extra = 0;

	*has = false;
	*key = 0;
	*len = 0;
	if (r->type != IOTAP_REC_OP && r->type != IOTAP_REC_NAME)
		return 0;
	if (!f) {
		par = name_parent(r);
		if (!par)
			return 0;
		f = par;
		extra = 1 + r->name_len;
	}
	b = path_of(p, f, 0);
	if (b) {
		s = b->path;
		n = b->path_len;
		*key = par ? 0 : b->key;
	} else {
		n = (size_t)snprintf(num, sizeof(num), "#%" PRIu64, f);
		s = num;
		p->missing = true;
	}
	if (par && n == 1 && s[0] == '.')
		n = 0, extra--;		/* an entry of the root: no "./" */
	if (grow(buf, cap, off + n + extra + 1))
		return -ENOMEM;
	memcpy(*buf + off, s, n);
	if (par) {
		if (n)
			(*buf)[off + n++] = '/';
		memcpy(*buf + off + n, r->name, r->name_len);
		n += r->name_len;
	}
	(*buf)[off + n] = '\0';
	*len = (uint32_t)n;
	*has = true;
	return 0;
}

static int slot_resolve(struct iotap_trace_paths *p, struct pslot *s)
{
	size_t off = s->rec.name ? s->rec.name_len + 1 : 0;
	int ret = resolve(p, &s->rec, &s->buf, &s->cap, off, &s->path_len, &s->key, &s->has_path);

	s->rec.name = s->rec.name ? s->buf : NULL;	/* grow() may have moved it */
	s->waiting = false;
	return ret;
}

/* Copy @r to the tail of the queue; NULL: ENOMEM. */
static struct pslot *enqueue(struct iotap_trace_paths *p, const struct iotap_trace_rec *r)
{
	struct pslot *s;

	if (p->n == p->qcap) {
		unsigned int nc = p->qcap ? p->qcap * 2 : 64, i;
		struct pslot *nq = calloc(nc, sizeof(*nq));

		if (!nq)
			return NULL;
		for (i = 0; i < p->n; i++)
			nq[i] = p->q[(p->head + i) % p->qcap];
		for (i = 0; i < p->nwait; i++)
			p->waiting[i] = (p->waiting[i] + p->qcap - p->head) % p->qcap;
		/* the slots not in use keep their buffers */
		for (i = p->n; i < p->qcap; i++)
			nq[i] = p->q[(p->head + i) % p->qcap];
		free(p->q);
		p->q = nq;
		p->head = 0;
		p->qcap = nc;
	}
	s = &p->q[(p->head + p->n) % p->qcap];
	if (r->type == IOTAP_REC_SAMPLE)
		s->rec = *r;
	else
		memcpy(&s->rec, r, offsetof(struct iotap_trace_rec, sample));
	if (r->name) {
		if (grow(&s->buf, &s->cap, (size_t)r->name_len + 1))
			return NULL;
		memcpy(s->buf, r->name, r->name_len);
		s->buf[r->name_len] = '\0';
		s->rec.name = s->buf;
	}
	s->has_path = false;
	s->waiting = false;
	p->n++;
	return s;
}

static void unwait(struct iotap_trace_paths *p, unsigned int k)
{
	p->waiting[k] = p->waiting[--p->nwait];
}

/*
 * The waiting slots @r settles: its thread's NAME of the op's file, or
 * any other record of that thread; and those waited for too long.
 */
static int settle(struct iotap_trace_paths *p, const struct iotap_trace_rec *r)
{
	unsigned int k = 0;
	int ret;

	while (k < p->nwait) {
		struct pslot *s = &p->q[p->waiting[k]];
		bool same = s->rec.tid == r->tid;
		bool late = r->time_ns > s->rec.time_ns + s->rec.dur_ns + PATHS_WAIT_NS;

		if (r->type == IOTAP_REC_NAME && same && r->file != s->rec.file) {
			k++;		/* another NAME of the same op */
			continue;
		}
		if (!same && !late) {
			k++;
			continue;
		}
		/* a NAME of its own file is applied (by the caller) before this */
		ret = slot_resolve(p, s);
		if (ret)
			return ret;
		unwait(p, k);
	}
	return 0;
}

int iotap_trace_paths_open(struct iotap_trace_paths **out, struct iotap_trace_join *j)
{
	struct iotap_trace_paths *p = calloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	p->j = j;
	iotap_map_init(&p->binds, sizeof(struct bind));
	*out = p;
	return 0;
}

static void fill(struct iotap_trace_path *out, const char *path, uint32_t len, uint64_t key,
		 bool has)
{
	out->path = has ? path : NULL;
	out->len = has ? len : 0;
	out->key = key;
}

int iotap_trace_paths_next_ref(struct iotap_trace_paths *p, const struct iotap_trace_rec **rec,
			       struct iotap_trace_path *path)
{
	const struct iotap_trace_rec *r;
	struct pslot *s;
	bool has;
	int ret;

	if (p->popped) {
		p->head = (p->head + 1) % p->qcap;
		p->n--;
		p->popped = false;
	}
	for (;;) {
		if (p->n && !p->q[p->head].waiting) {
			s = &p->q[p->head];
			p->popped = true;
			*rec = &s->rec;
			fill(path, s->buf + (s->rec.name ? s->rec.name_len + 1 : 0), s->path_len,
			     s->key, s->has_path);
			return 1;
		}
		if (p->eof) {
			if (!p->n)
				return p->err;
			/* the end: the waiting ones take what they have */
			while (p->nwait) {
				ret = slot_resolve(p, &p->q[p->waiting[0]]);
				if (ret)
					return ret;
				unwait(p, 0);
			}
			continue;
		}
		ret = iotap_trace_join_next_ref(p->j, &r);
		if (ret <= 0) {
			p->eof = 1;
			p->err = ret;
			continue;
		}
		if (r->type == IOTAP_REC_NAME && r->file) {
			ret = apply_name(p, r);
			if (ret)
				return ret;
		}
		if (p->nwait) {
			ret = settle(p, r);
			if (ret)
				return ret;
		}
		if (!p->n && !makes_binding(r)) {
			struct bind *b;

			/*
			 * The common case: nothing queued, nothing to wait for;
			 * most often a bound file's own path, returned as the
			 * binding holds it (kept until a later call rebuilds it).
			 */
			if ((r->type == IOTAP_REC_OP || r->type == IOTAP_REC_NAME) && r->file &&
			    (b = path_of(p, r->file, 0))) {
				*rec = r;
				fill(path, b->path, b->path_len, b->key, true);
				return 1;
			}
			ret = resolve(p, r, &p->tmp, &p->tmp_cap, 0, &p->tmp_len, &path->key, &has);
			if (ret)
				return ret;
			*rec = r;
			fill(path, p->tmp, p->tmp_len, path->key, has);
			return 1;
		}
		if (p->n >= PATHS_QUEUE || p->nwait >= PATHS_WAITING) {
			/* too long a wait: the head (waiting) takes what it has */
			unsigned int k = 0;

			while (p->waiting[k] != p->head)
				k++;
			ret = slot_resolve(p, &p->q[p->head]);
			if (ret)
				return ret;
			unwait(p, k);
		}
		s = enqueue(p, r);
		if (!s)
			return -ENOMEM;
		if (makes_binding(r)) {
			s->waiting = true;
			p->waiting[p->nwait++] = (unsigned int)(s - p->q);
		} else {
			ret = slot_resolve(p, s);
			if (ret)
				return ret;
		}
	}
}

void iotap_trace_paths_close(struct iotap_trace_paths *p)
{
	struct bind *b;
	uint64_t pos = 0;
	unsigned int i;

	if (!p)
		return;
	while ((b = iotap_map_next(&p->binds, &pos, NULL))) {
		free(b->name);
		free(b->path);
	}
	iotap_map_release(&p->binds);
	for (i = 0; i < p->qcap; i++)
		free(p->q[i].buf);
	free(p->q);
	free(p->tmp);
	free(p);
}
