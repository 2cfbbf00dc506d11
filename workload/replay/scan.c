// SPDX-License-Identifier: MIT
/*
 * scan.c - pass 1 of a replay: what the trace implies before any op
 * is replayed
 *
 * One walk over the whole trace (walk.c) finds:
 * - the slice to replay: the whole trace, or one phase (--phase NAME[#k]:
 *   from its BEGIN marker to its END, or to the next BEGIN);
 * - the initial state: every file, directory and symlink alive when the
 *   slice starts, with its name, mode, owner and size then. For the whole
 *   trace that is every file the trace first sees as existing (a NAME for
 *   an unknown id), at its first-seen size; files the capture creates are
 *   not part of it. For a phase, the walk up to the phase start also
 *   counts: files created earlier are part of it, at their simulated size;
 *   handles opened earlier are reopened lazily by the replay threads;
 * - what must be absent: names the slice creates, renames or links to in
 *   a directory of the initial state, and names a lookup did not find;
 * - the recorded threads with their first and last op, which the plan
 *   packs into lanes (replay threads): threads whose lifetimes do not
 *   overlap share a lane, in time order (--processes: only threads of one
 *   process do);
 * - counts (ops per type, phases, NAME records to forward) for the rings,
 *   the largest request (for buffers), the space the state needs and the
 *   largest growth during the slice, the --map hits and the damage.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "replay_i.h"

struct scan {
	struct iotap_replay *r;
	struct rp_walk *w;
	int in_slice;			/* records now are in the slice */
	int started;			/* the slice has begun */
	int done;			/* and ended */
	int phase_k;			/* --phase NAME#k: k */
	int phase_seen;			/* occurrences of NAME so far */
	size_t phase_len;
	uint64_t link_file;		/* a LINK of this id just succeeded in the slice */
	int64_t delta_begin;		/* w->bytes_delta when the slice began */
	int64_t delta_peak;
	/* entries under construction */
	struct rp_entry *e;
	char **ename;			/* name of each entry (its last component) */
	uint32_t ne, ecap;
	/* absent candidates: (parent entry, name) */
	struct {
		int32_t parent;
		char *name;
	} *abs;
	uint32_t nabs, abscap;
	int err;
	char path[RP_PATH_MAX];
};

int rp_what(struct iotap_replay *r, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->what, sizeof(r->what), fmt, ap);
	va_end(ap);
	return err;
}

/* --- maps ------------------------------------------------------------------ */

/* "/a/b/" -> "a/b" relative to @root, or NULL if @p is not under it. */
static const char *under(const char *p, const char *root)
{
	size_t l;

	if (!root || !*root)
		return NULL;
	l = strlen(root);
	while (l > 1 && root[l - 1] == '/')
		l--;
	if (strncmp(p, root, l) || (p[l] && p[l] != '/'))
		return NULL;
	p += l;
	while (*p == '/')
		p++;
	return p;
}

static int map_cmp(const void *a, const void *b)
{
	const struct rp_map *x = a, *y = b;

	return x->old_len < y->old_len ? 1 : x->old_len > y->old_len ? -1 : 0;
}

/* Normalise the --map OLD sides once the root's path is known. */
static int maps_normalise(struct iotap_replay *r, const char *root)
{
	unsigned int i;

	for (i = 0; i < r->nmaps; i++) {
		struct rp_map *m = &r->maps[i];
		const char *rel = m->old_arg;
		char *p;
		size_t l;

		if (rel[0] == '/') {
			rel = under(m->old_arg, root);
			if (!rel)
				rel = under(m->old_arg, r->mountpoint);
			if (!rel)
				return rp_what(r, -ENXIO, "--map '%s' is not under the captured "
					       "directory '%s'%s%s%s", m->old_arg, root,
					       r->mountpoint ? " (mounted at '" : "",
					       r->mountpoint ? r->mountpoint : "",
					       r->mountpoint ? "')" : "");
		}
		while (rel[0] == '.' && rel[1] == '/')
			rel += 2;
		if (!strcmp(rel, "."))
			rel = "";
		p = strdup(rel);
		if (!p)
			return -ENOMEM;
		l = strlen(p);
		while (l && p[l - 1] == '/')
			p[--l] = '\0';
		free(m->old);
		m->old = p;
		m->old_len = l;
	}
	qsort(r->maps, r->nmaps, sizeof(r->maps[0]), map_cmp);
	return 0;
}

/* --- the initial state ------------------------------------------------------- */

static int32_t entry_add(struct scan *s, struct rp_obj *o, int32_t parent, const char *name,
			 int32_t link_to)
{
	struct rp_entry *e;

	if (s->ne == s->ecap) {
		uint32_t cap = s->ecap ? 2 * s->ecap : 1024;
		struct rp_entry *ne = realloc(s->e, cap * sizeof(*ne));
		char **nn;

		if (!ne)
			return -1;
		s->e = ne;
		nn = realloc(s->ename, cap * sizeof(*nn));
		if (!nn)
			return -1;
		s->ename = nn;
		s->ecap = cap;
	}
	e = &s->e[s->ne];
	memset(e, 0, sizeof(*e));
	s->ename[s->ne] = strdup(name);
	if (!s->ename[s->ne])
		return -1;
	e->parent = parent;
	e->link_to = link_to;
	e->mode = o->mode;
	e->uid = o->uid;
	e->gid = o->gid;
	e->size = o->size;
	e->depth = parent >= 0 ? s->e[parent].depth + 1 : 0;
	if (link_to < 0) {
		o->entry = (int32_t)s->ne;
		o->flags |= RP_OBJ_STATE;
	}
	return (int32_t)s->ne++;
}

/*
 * A listing of directory @o returned @total entries ("." and ".." too).
 * Entries it never names (a plain READDIR has no NAME records) get
 * placeholders (empty files) in the initial state, so that the replay's
 * listings return as many: those the first full listing had beyond the
 * names known then, less the existing children first seen after it.
 */
static void unnamed_note(struct rp_obj *o, uint64_t total)
{
	if (o->unnamed >= 0 || o->entry < 0)
		return;
	o->unnamed = (int64_t)total - 2 - (int64_t)o->nchild;
	o->unnamed_mark = o->seen_later;
}

static void unnamed_finish(struct scan *s)
{
	struct rp_obj ph, *o;
	char n[64];
	int64_t i, k;

	memset(&ph, 0, sizeof(ph));
	for (o = s->w->objs; o; o = o->all) {
		k = o->unnamed - (int64_t)(o->seen_later - o->unnamed_mark);
		ph.mode = S_IFREG | 0644;
		ph.uid = o->uid;
		ph.gid = o->gid;
		for (i = 0; i < k && o->entry >= 0; i++) {
			snprintf(n, sizeof(n), "iotap-unnamed-%" PRIu64 "-%" PRId64, o->id, i);
			if (entry_add(s, &ph, o->entry, n, -1) < 0) {
				s->err = -ENOMEM;
				return;
			}
			s->r->plan.placeholders++;
		}
	}
}

/* The entry of @o (making its parents' first), -1 if it has no path. */
static int32_t entry_of(struct scan *s, struct rp_obj *o, int depth)
{
	struct rp_bind *b;
	int32_t p;

	if (o->entry >= 0)
		return o->entry;
	if (depth > RP_DEPTH_MAX)
		return -1;
	if (o->flags & RP_OBJ_ROOT)
		return entry_add(s, o, -1, ".", -1);
	b = o->names;
	if (!b || !b->parent)
		return -1;
	p = entry_of(s, b->parent, depth + 1);
	if (p < 0)
		return -1;
	return entry_add(s, o, p, b->name, -1);
}

/* --phase: everything alive now is the initial state. */
static void snapshot(struct scan *s)
{
	struct rp_obj *o;

	if (s->w->root)
		entry_of(s, s->w->root, 0);
	for (o = s->w->objs; o; o = o->all) {
		struct rp_bind *b;

		if (!o->names || entry_of(s, o, 0) < 0)
			continue;
		for (b = o->names->onext; b; b = b->onext) {
			int32_t p = b->parent ? entry_of(s, b->parent, 0) : -1;

			if (p >= 0)
				entry_add(s, o, p, b->name, o->entry);
		}
	}
}

static void absent_add(struct scan *s, struct rp_obj *parent, const char *name)
{
	if (!parent || !(parent->flags & RP_OBJ_STATE) || parent->entry < 0)
		return;
	if (s->nabs == s->abscap) {
		uint32_t cap = s->abscap ? 2 * s->abscap : 256;
		void *n = realloc(s->abs, cap * sizeof(*s->abs));

		if (!n) {
			s->err = -ENOMEM;
			return;
		}
		s->abs = n;
		s->abscap = cap;
	}
	s->abs[s->nabs].parent = parent->entry;
	s->abs[s->nabs].name = strdup(name);
	if (!s->abs[s->nabs].name) {
		s->err = -ENOMEM;
		return;
	}
	s->nabs++;
}

static void count_map_hits(struct scan *s, const struct rp_obj *o)
{
	struct iotap_replay *r = s->r;

	if (!r->nmaps || rp_walk_path(s->w, o, s->path, sizeof(s->path)) < 0)
		return;
	rp_map_apply(r->maps, r->nmaps, s->path, 1);
}

static void scan_on_bind(struct rp_walk *w, struct rp_bind *b, int kind)
{
	struct scan *s = w->arg;
	struct rp_obj *o = b->obj;

	count_map_hits(s, o);
	if (!s->in_slice)
		return;
	switch (kind) {
	case RP_BIND_FIRST:
		/* a file that existed: alive when the slice began */
		if (b->parent && b->parent->entry >= 0 && entry_of(s, o, 0) < 0 && !s->err)
			s->err = -ENOMEM;
		if (b->parent)
			b->parent->seen_later++;
		return;
	case RP_BIND_LINK:
		if (s->link_file != o->id && o->entry >= 0 && b->parent &&
		    b->parent->entry >= 0) {
			/* another name of a file that existed: a hard link of the state */
			entry_add(s, o, b->parent->entry, b->name, o->entry);
			return;
		}
		s->link_file = 0;
		break;
	}
	/* created, renamed to or linked by the slice: must not exist before it */
	absent_add(s, b->parent, b->name);
}

/* --- the walk ---------------------------------------------------------------------- */

static int phase_matches(struct scan *s, const struct iotap_trace_rec *rec)
{
	const char *want = s->r->o.phase;

	return rec->name && rec->name_len == s->phase_len && !memcmp(rec->name, want, s->phase_len);
}

static void slice_begin(struct scan *s, uint64_t t)
{
	struct iotap_replay *r = s->r;

	s->in_slice = 1;
	s->started = 1;
	r->t_begin = t;
	s->delta_begin = s->w->bytes_delta;
	s->delta_peak = 0;
	if (r->o.phase)
		snapshot(s);
}

static void on_phase(struct scan *s, const struct iotap_trace_rec *rec)
{
	struct iotap_replay *r = s->r;

	if (!r->o.phase)
		return;
	if (s->in_slice) {
		/* the slice ends at its END marker or at the next BEGIN */
		if (rec->flags == IOTAP_PHASE_END && !phase_matches(s, rec))
			return;
		r->t_end = rec->time_ns;
		if (rec->flags == IOTAP_PHASE_END) {
			r->nbarriers++;
			r->end_marker = 1;
		}
		s->in_slice = 0;
		s->done = 1;
		return;
	}
	if (s->done || rec->flags != IOTAP_PHASE_BEGIN || !phase_matches(s, rec))
		return;
	if (++s->phase_seen == s->phase_k)
		slice_begin(s, rec->time_ns);
}

static void on_op(struct scan *s, const struct iotap_trace_rec *rec)
{
	struct iotap_replay *r = s->r;
	struct rp_walk *w = s->w;
	struct rp_ctx c;
	int ret;

	rp_walk_op_pre(w, rec, &c);
	if (s->in_slice && rec->op < IOTAP_OP_MAX) {
		uint64_t end = rec->time_ns + rec->dur_ns;

		r->plan.ops_by_type[rec->op]++;
		if (!(r->o.skip_ops & (1ull << rec->op)))
			r->plan.ops++;
		if (c.thread != RP_NONE) {
			struct rp_thread *t = &w->threads[c.thread];

			if (!t->ops)
				t->first_ns = rec->time_ns;
			if (end > t->last_end_ns)
				t->last_end_ns = end;
			t->ops++;
		}
		if (!r->t0)
			r->t0 = rec->time_ns;
		if (end > r->t_last_end)
			r->t_last_end = end;
		if ((rec->op == IOTAP_OP_READ || rec->op == IOTAP_OP_WRITE) &&
		    rec->length > r->max_io)
			r->max_io = rec->length;
		if (rec->op == IOTAP_OP_LOOKUP && rec->result == -ENOENT && rec->name && c.obj2)
			absent_add(s, c.obj2, rec->name);
		if (rec->op == IOTAP_OP_LINK && c.ok)
			s->link_file = rec->file;
		if ((rec->op == IOTAP_OP_READDIR || rec->op == IOTAP_OP_READDIRPLUS) && c.fh &&
		    c.obj && c.ok) {
			if (!rec->offset) {
				c.fh->listing = 1;
				c.fh->listed = 0;
			}
			c.fh->listed += rec->aux;
			if (!rec->result && c.fh->listing) {
				c.fh->listing = 0;
				unnamed_note(c.obj, c.fh->listed);
			}
		}
	}
	ret = rp_walk_op_post(w, &c);
	if (ret)
		s->err = ret;
	if (s->in_slice && c.obj && (c.obj->flags & RP_OBJ_CREATED) &&
	    c.obj->id == rec->file && c.ok &&
	    (rec->op == IOTAP_OP_CREATE || rec->op == IOTAP_OP_MKDIR ||
	     rec->op == IOTAP_OP_MKNOD || rec->op == IOTAP_OP_SYMLINK))
		c.obj->flags |= RP_OBJ_INSLICE;
	if (s->in_slice && w->bytes_delta - s->delta_begin > s->delta_peak)
		s->delta_peak = w->bytes_delta - s->delta_begin;
}

/* Forwarded NAME records are pseudo-ops of their thread's lane. */
static void on_name(struct scan *s, const struct iotap_trace_rec *rec)
{
	struct iotap_replay *r = s->r;
	struct rp_walk *w = s->w;
	int ret;

	if (!rec->file2 && !w->root) {
		ret = rp_walk_name(w, rec);
		if (ret) {
			s->err = ret;
			return;
		}
		ret = maps_normalise(r, w->root_path);
		if (ret)
			s->err = ret;
		if (s->in_slice)
			entry_of(s, w->root, 0);
		return;
	}
	if (s->in_slice && rec->file2) {
		uint32_t t = rp_walk_thread(w, rec->pid, rec->tid);

		if (t != RP_NONE && rec->tid)
			w->threads[t].ops++;
	}
	ret = rp_walk_name(w, rec);
	if (ret)
		s->err = ret;
}

/* Paths of the entries, from their parents; maps applied. */
static int entries_finish(struct scan *s)
{
	struct iotap_replay *r = s->r;
	uint32_t i;

	for (i = 0; i < s->ne; i++) {
		struct rp_entry *e = &s->e[i];
		char *p;
		size_t l;

		if (e->parent < 0) {
			p = strdup("");
		} else {
			const char *pp = s->e[e->parent].path;

			l = strlen(pp) + strlen(s->ename[i]) + 2;
			p = malloc(l);
			if (p)
				snprintf(p, l, "%s%s%s", pp, *pp ? "/" : "", s->ename[i]);
		}
		if (!p)
			return -ENOMEM;
		e->path = p;
	}
	/* now relative to their bases */
	for (i = 0; i < s->ne; i++) {
		struct rp_entry *e = &s->e[i];
		size_t l = strlen(e->path);
		char *p = malloc(l + 2);

		if (!p)
			return -ENOMEM;
		memcpy(p, e->path, l + 1);
		e->base = rp_map_apply(r->maps, r->nmaps, p, 1);
		/* keep the root-relative path for the absent list below */
		free(s->ename[i]);
		s->ename[i] = e->path;
		e->path = p;
	}
	return 0;
}

/*
 * A set of strings for the absent list: a map from each string's hash to
 * the string (equal hashes allowed, so the strings themselves decide).
 * 1 if @p was in the set, 0 if added, -ENOMEM.
 */
static int strset_add(struct iotap_map *ss, const char *p)
{
	uint64_t h = iotap_hash_str(p, 0), pos;
	const char **v;

	for (v = iotap_map_find(ss, h, &pos); v; v = iotap_map_find_next(ss, h, &pos))
		if (!strcmp(*v, p))
			return 1;
	if (iotap_map_add(ss, h, (void **)&v) < 0)
		return -ENOMEM;
	*v = p;
	return 0;
}

static int absent_finish(struct scan *s)
{
	struct iotap_replay *r = s->r;
	struct iotap_map ss;
	uint32_t i, n = 0;
	int ret = 0;

	iotap_map_init(&ss, sizeof(const char *));
	r->absent = calloc(s->nabs + 1, sizeof(*r->absent));
	if (!r->absent)
		return -ENOMEM;
	for (i = 0; i < s->ne; i++)
		if (strset_add(&ss, s->ename[i]) < 0) {
			ret = -ENOMEM;
			goto out;
		}
	for (i = 0; i < s->nabs; i++) {
		const char *pp = s->ename[s->abs[i].parent];
		size_t l = strlen(pp) + strlen(s->abs[i].name) + 2;
		char *p = malloc(l + 2);

		if (!p) {
			ret = -ENOMEM;
			goto out;
		}
		snprintf(p, l, "%s%s%s", pp, *pp ? "/" : "", s->abs[i].name);
		/* a name of the state, or listed already: not absent */
		ret = strset_add(&ss, p);
		if (ret) {
			free(p);
			if (ret < 0)
				goto out;
			ret = 0;
			continue;
		}
		r->absent[n].path = p;
		n++;
	}
	/* the set points into the paths: map them only now */
	for (i = 0; i < n; i++)
		r->absent[i].base = rp_map_apply(r->maps, r->nmaps, r->absent[i].path, 0);
out:
	r->nabsent = n;
	iotap_map_release(&ss);
	return ret;
}

int rp_scan(struct iotap_replay *r)
{
	struct iotap_trace_read_stats st;
	const struct iotap_trace_header *h;
	struct iotap_trace_rec rec;
	struct rp_src *src;
	struct rp_walk w;
	struct scan s;
	uint32_t i;
	int ret;
	const char *hash;

	memset(&s, 0, sizeof(s));
	s.r = r;
	s.w = &w;
	s.phase_k = 1;
	if (r->o.phase) {
		hash = strrchr(r->o.phase, '#');
		s.phase_len = strlen(r->o.phase);
		if (hash && hash[1]) {
			char *end;
			long k = strtol(hash + 1, &end, 10);

			if (!*end && k > 0) {
				s.phase_k = (int)k;
				s.phase_len = (size_t)(hash - r->o.phase);
			}
		}
	}
	ret = rp_src_open(&src, r->o.trace, 16);
	if (ret)
		return rp_what(r, ret, "%s", r->o.trace);
	h = rp_src_header(src);
	r->capture_mode = h->capture_mode;
	if (h->workload)
		r->trace_workload = strdup(h->workload);
	if (h->mountpoint)
		r->mountpoint = strdup(h->mountpoint);
	ret = rp_walk_init(&w, 1);
	if (ret)
		goto out_close;
	w.on_bind = scan_on_bind;
	w.arg = &s;
	r->t_end = UINT64_MAX;
	if (!r->o.phase)
		slice_begin(&s, 0);

	while ((ret = rp_src_next(src, &rec)) > 0) {
		switch (rec.type) {
		case IOTAP_REC_OP:
			if (s.done)
				break;
			if (s.in_slice && rec.time_ns >= r->t_end)
				break;
			on_op(&s, &rec);
			break;
		case IOTAP_REC_NAME:
			on_name(&s, &rec);
			break;
		case IOTAP_REC_PHASE:
			if (s.in_slice && !r->o.phase)
				r->nbarriers++;
			if (r->o.phase) {
				int was = s.in_slice;

				on_phase(&s, &rec);
				if (!was && s.in_slice)
					r->nbarriers++;
			}
			if (s.in_slice && !r->t0)
				r->t0 = rec.time_ns;
			break;
		case IOTAP_REC_LOST:
			r->plan.damage.lost_records += iotap_trace_lost_count(&rec);
			break;
		}
		if (s.err) {
			ret = s.err;
			break;
		}
	}
	if (ret < 0) {
		if (!r->what[0])
			rp_what(r, ret, "%s", r->o.trace);
		goto out_walk;
	}
	rp_src_stats(src, &st);
	r->plan.damage.chunks_bad = st.chunks_bad;
	r->plan.damage.bytes_skipped = st.bytes_skipped;
	r->plan.damage.tail_bytes = st.tail_bytes;
	r->plan.damage.has_end = st.has_end;
	r->plan.damage.orphans = w.orphans;

	if (r->o.phase && !s.started) {
		ret = st.records_by_type[IOTAP_REC_PHASE] ? -ESRCH : -ENOMSG;
		rp_what(r, ret, "%s", r->o.phase);
		goto out_walk;
	}
	if (!w.root) {
		ret = rp_what(r, -EBADMSG, "'%s' names no root directory (no NAME record with "
			      "parent 0)", r->o.trace);
		goto out_walk;
	}
	r->root_path = w.root_path ? strdup(w.root_path) : strdup("");
	r->root_id = w.root->id;
	r->plan.root = r->root_path;
	r->plan.phase = r->o.phase;
	unnamed_finish(&s);
	ret = s.err ? s.err : entries_finish(&s);
	if (ret)
		goto out_walk;
	for (i = 0; i < r->nmaps; i++) {
		/* entries count twice: what matters is zero or not */
		r->plan.map_hits[i] = r->maps[i].hits;
		if (!r->maps[i].hits) {
			ret = rp_what(r, -ENXIO, "--map '%s' matches nothing in the trace "
				      "(no file under '%s%s%s')", r->maps[i].old_arg, w.root_path,
				      r->maps[i].old_len ? "/" : "", r->maps[i].old);
			goto out_walk;
		}
	}
	ret = absent_finish(&s);
	if (ret)
		goto out_walk;
	r->entries = s.e;
	r->nentries = s.ne;
	s.e = NULL;
	for (i = 0; i < r->nentries; i++) {
		const struct rp_entry *e = &r->entries[i];

		if (e->link_to >= 0)
			continue;
		if (S_ISDIR(e->mode))
			r->plan.dirs++;
		else if (S_ISLNK(e->mode))
			r->plan.symlinks++;
		else if (S_ISREG(e->mode) || !(e->mode & S_IFMT))
			r->plan.files++, r->plan.state_bytes += e->size;
		else
			r->plan.others++;
	}
	r->plan.peak_bytes = r->plan.state_bytes + (uint64_t)(s.delta_peak > 0 ? s.delta_peak : 0);

	/* threads: hand the table over */
	r->threads = w.threads;
	r->nthreads = w.nthreads;
	w.threads = NULL;
	r->kernel_thread = RP_NONE;
	for (i = 0; i < r->nthreads; i++)
		if (!r->threads[i].pid && !r->threads[i].tid)
			r->kernel_thread = i;
	ret = rp_plan_lanes(r, r->nbarriers + 1);
	if (ret)
		goto out_walk;
	for (i = 0; i < r->nthreads; i++)
		if (r->threads[i].ops)
			r->plan.threads++;
	r->plan.lanes = r->nlanes;
	r->plan.processes = r->nprocs;
	if (!r->t0)
		r->t0 = r->t_begin;
	if (r->t_last_end > r->t0)
		r->plan.capture_s = (double)(r->t_last_end - r->t0) / 1e9;
	if (!r->plan.ops && !r->nbarriers) {
		ret = rp_what(r, -ENODATA, "%s", r->o.trace);
		goto out_walk;
	}
	ret = 0;

out_walk:
	if (s.e) {
		for (i = 0; i < s.ne; i++)
			free(s.e[i].path);
		free(s.e);
	}
	for (i = 0; i < s.ne; i++)
		free(s.ename[i]);
	free(s.ename);
	for (i = 0; i < s.nabs; i++)
		free(s.abs[i].name);
	free(s.abs);
	rp_walk_release(&w);
out_close:
	rp_src_close(src);
	return ret;
}
