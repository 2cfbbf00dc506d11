// SPDX-License-Identifier: MIT
/*
 * dedup_stream.c - the dedup model's backup and restore phases: one
 * thread per stream (dedup.c's header comment says what each does)
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dedup_i.h"

#define MAX_OPEN	64		/* containers a restore keeps open */

/* --- backup ------------------------------------------------------------------ */

static int cont_close(struct dd_stream *s)
{
	struct dd_run *run = s->run;
	int ret;

	if (s->cont.fd < 0)
		return 0;
	ret = wl_fsync(run->c, &s->cont, 1);
	if (wl_close(run->c, &s->cont) && !ret)
		ret = -EIO;
	s->cont.fd = -1;
	pthread_mutex_lock(&run->lock);
	run->cont[s->cont_id].state = CONT_CLOSED;
	pthread_mutex_unlock(&run->lock);
	return ret;
}

/* Append @len bytes of s->buf to the stream's container; where it went in @e. */
static int cont_append(struct dd_stream *s, uint32_t len, struct dd_entry *e)
{
	struct dd_run *run = s->run;
	char name[32];
	int ret;

	if (s->cont.fd >= 0 && s->cont.pos + len > run->o->container_bytes) {
		ret = cont_close(s);
		if (ret)
			return ret;
	}
	if (s->cont.fd < 0) {
		pthread_mutex_lock(&run->lock);
		ret = dd_cont_new(run, &s->cont_id);
		pthread_mutex_unlock(&run->lock);
		if (ret)
			return ret;
		dd_cont_name(name, sizeof(name), s->cont_id, "bin");
		ret = wl_open(run->c, &s->cont, run->data_fd, run->data_ino, name,
			      O_WRONLY | O_CREAT | O_EXCL, 0644);
		if (ret)
			return ret;
		/* wl_open keeps a pointer to the name: one that lives as long as the file */
		s->cont.name = "container";
	}
	e->cont = s->cont_id;
	e->off = (uint32_t)s->cont.pos;
	e->len = len;
	ret = wl_write_full(run->c, &s->cont, s->buf, len);
	if (ret)
		return ret;
	pthread_mutex_lock(&run->lock);
	run->cont[s->cont_id].size = s->cont.pos;
	pthread_mutex_unlock(&run->lock);
	s->stored += len;
	s->written += len;
	return 0;
}

static int map_flush(struct dd_stream *s, struct wl_file *f)
{
	int ret;

	if (!s->nmap)
		return 0;
	ret = wl_write_full(s->run->c, f, s->map, s->nmap * sizeof(*s->map));
	if (!ret)
		s->written += s->nmap * sizeof(*s->map);
	s->nmap = 0;
	return ret;
}


/* A generation's backup or restore begins: "@what gen=N", every stream's segments. */
static void gen_phase_begin(struct dd_run *run, const char *what)
{
	snprintf(run->phname, sizeof(run->phname), "%s gen=%u", what, run->gen);
	dd_phase_begin(run, &run->span, run->phname,
		       run->cfg.positions * run->o->streams, run->o->segment_bytes);
}

/* Did a stream of the phase fail (it is then partial)? */
static int streams_failed(const struct dd_run *run)
{
	unsigned int i;

	for (i = 0; i < run->o->streams; i++)
		if (run->st[i].ret)
			return 1;
	return 0;
}

/* ... and ends: its result, and the user CPU it took (the model's own work). */
static void gen_phase_end(struct dd_run *run, struct iotap_workload_phase_result *ph,
			  double *user_s, int partial)
{
	wl_phase_end(run->c, &run->span, ph, partial);
	*user_s = (double)(run->span.u1 - run->span.u0) / 1e9;
}

static void backup_ready(struct wl_threads *t)
{
	gen_phase_begin(t->arg, "backup");
}

static void backup_done(struct wl_threads *t)
{
	struct dd_run *run = t->arg;
	struct iotap_workload_dedup_gen *g = &run->r->gen[run->gen];
	int partial = streams_failed(run);

	/* the batch still in memory is part of the backup */
	if (!partial && run->index_open)
		run->ret = dd_index_flush(&run->ix);
	gen_phase_end(run, &g->backup, &g->backup_user_s, partial || run->ret);
}

int dd_cdc_backup(struct dd_stream *s)
{
	struct dd_run *run = s->run;
	const struct dd_flavor *fl = run->cfg.fl;
	struct dd_pos *p = &s->pos;
	struct dd_entry *tree;
	uint64_t k;
	int ret;

	tree = calloc(p->n ? p->n : 1, sizeof(*tree));
	if (!tree)
		return -ENOMEM;
	ret = fl->begin(s);
	for (k = 0; !ret && k < p->n; k++) {
		struct dd_entry *e = &tree[k];
		uint32_t len = p->len[k];

		if (wl_stopped()) {
			ret = -EINTR;
			break;
		}
		dd_chunk_fp(s, k);
		e->lo = p->fp[k].lo;
		e->hi = p->fp[k].hi;
		/* the index is in RAM: every look-up is answered there */
		if (dd_seg_ref(run, &p->fp[k], e) < 0) {
			if (p->fresh[k] != DD_NEW)
				dd_fill(&run->cfg, p->cid[k], s->buf, len);
			ret = fl->store(s, k, e);
		}
		s->segs++;
		s->logical += len;
		atomic_fetch_add_explicit(&run->c->ph_done, 1, memory_order_relaxed);
	}
	return fl->end(s, tree, ret);
}

static int backup_stream(struct wl_threads *t, unsigned int i)
{
	struct dd_run *run = t->arg;
	struct dd_stream *s = &run->st[i];
	struct iotap_workload_ctx *c = run->c;
	struct dd_pos *p = &s->pos;
	struct wl_file mf = { .fd = -1 };
	char name[48];
	uint64_t k;
	int ret;

	if (run->cfg.fl->backup) {
		wl_threads_ready(t);
		s->ret = run->cfg.fl->backup(s);
		return s->ret;
	}
	dd_map_name(name, sizeof(name), i, run->gen);
	ret = wl_open(c, &mf, run->maps_fd, run->maps_ino, name, O_WRONLY | O_CREAT | O_EXCL,
		      0644);
	wl_threads_ready(t);
	if (ret)
		goto out;
	mf.name = "map";
	if (run->gen > 0) {
		struct dd_entry *prev;
		uint64_t n;

		/* the last image's fingerprints: the look-ups most likely to hit */
		ret = dd_map_read(run, i, run->gen - 1, &prev, &n);
		if (ret)
			goto out;
		for (k = 0; k < n; k++) {
			struct dd_fp fp = { prev[k].lo, prev[k].hi };

			dd_index_cache(&run->ix, &fp);
		}
		free(prev);
	}
	for (k = 0; k < p->n; k++) {
		struct dd_entry *e = &s->map[s->nmap];
		uint32_t len = p->len[k];
		int found;

		if (wl_stopped()) {
			ret = -EINTR;
			goto out;
		}
		dd_chunk_fp(s, k);
		memset(e, 0, sizeof(*e));
		e->lo = p->fp[k].lo;
		e->hi = p->fp[k].hi;
		found = dd_index_lookup(&run->ix, &p->fp[k]);
		if (found < 0) {
			ret = wl_fail(c, found, "index look-up");
			goto out;
		}
		if (!found) {
			struct dd_seg sg;

			if (p->fresh[k] != DD_NEW) {
				/* cannot happen before expiry; regenerate rather than lie */
				dd_fill(&run->cfg, p->cid[k], s->buf, len);
			}
			ret = cont_append(s, len, e);
			if (ret)
				goto out;
			sg.fp = p->fp[k];
			sg.cont = e->cont;
			sg.off = e->off;
			sg.len = len;
			sg.refs = 1;
			pthread_mutex_lock(&run->lock);
			ret = dd_seg_add(run, &sg);
			pthread_mutex_unlock(&run->lock);
			if (!ret)
				ret = dd_index_insert(&run->ix, e);
			if (ret) {
				ret = wl_fail(c, ret, "index insert");
				goto out;
			}
		} else {
			int64_t si;

			si = dd_seg_ref(run, &p->fp[k], e);
			if (si < 0) {
				ret = wl_fail(c, -EIO, "index has a segment the store does not");
				goto out;
			}
		}
		s->segs++;
		s->logical += len;
		if (++s->nmap == DD_MAP_BATCH) {
			ret = map_flush(s, &mf);
			if (ret)
				goto out;
		}
		atomic_fetch_add_explicit(&c->ph_done, 1, memory_order_relaxed);
	}
	ret = map_flush(s, &mf);
	if (!ret)
		ret = wl_fsync(c, &mf, 1);
out:
	if (mf.fd >= 0 && wl_close(c, &mf) && !ret)
		ret = -EIO;
	if (cont_close(s) && !ret)
		ret = -EIO;
	s->ret = ret;
	return ret;
}

/* --- restore ------------------------------------------------------------------ */

struct open_cont {
	uint32_t id;
	uint64_t used;
	struct wl_file f;
};

static int restore_get(struct dd_stream *s, struct open_cont *oc, unsigned int *noc,
		       uint32_t id, uint64_t tick, struct wl_file **out)
{
	struct dd_run *run = s->run;
	unsigned int k, victim = 0;
	char name[32];
	int ret;

	for (k = 0; k < *noc; k++) {
		if (oc[k].id == id) {
			oc[k].used = tick;
			*out = &oc[k].f;
			return 0;
		}
		if (oc[k].used < oc[victim].used)
			victim = k;
	}
	if (*noc < MAX_OPEN) {
		victim = (*noc)++;
	} else {
		ret = wl_close(run->c, &oc[victim].f);
		if (ret)
			return ret;
	}
	dd_cont_name(name, sizeof(name), id, "bin");
	ret = wl_open(run->c, &oc[victim].f, run->data_fd, run->data_ino, name, O_RDONLY, 0);
	oc[victim].f.name = "container";
	if (ret) {
		oc[victim] = oc[--(*noc)];
		return ret;
	}
	oc[victim].id = id;
	oc[victim].used = tick;
	s->rconts++;
	*out = &oc[victim].f;
	return 0;
}

static int restore_stream(struct wl_threads *t, unsigned int i)
{
	struct dd_run *run = t->arg;
	struct dd_stream *s = &run->st[i];
	struct iotap_workload_ctx *c = run->c;
	struct open_cont *oc;
	struct dd_entry *m = NULL;
	unsigned int noc = 0, k;
	uint64_t n = 0, a, b;
	int ret;

	if (run->cfg.fl->restore) {
		wl_threads_ready(t);
		s->ret = run->cfg.fl->restore(s);
		return s->ret;
	}
	oc = calloc(MAX_OPEN, sizeof(*oc));
	wl_threads_ready(t);
	if (!oc)
		return s->ret = -ENOMEM;
	ret = dd_map_read(run, i, run->gen, &m, &n);
	for (a = 0; !ret && a < n;) {
		uint64_t len = m[a].len, off;
		struct wl_file *f;
		ssize_t got;

		if (wl_stopped()) {
			ret = -EINTR;
			break;
		}
		/* one read for segments that follow each other in one container */
		for (b = a + 1; b < n && m[b].cont == m[a].cont && m[b].off == m[a].off + len &&
				len + m[b].len <= DD_IO_MAX; b++)
			len += m[b].len;
		ret = restore_get(s, oc, &noc, m[a].cont, a, &f);
		if (ret)
			break;
		got = wl_pread(c, f, s->io, len, m[a].off);
		if (got < 0) {
			ret = (int)got;
			break;
		}
		if ((uint64_t)got != len) {
			ret = wl_fail(c, -ENODATA, "read container %08x at %u: %zd of %" PRIu64
				      " bytes", m[a].cont, m[a].off, got, len);
			break;
		}
		s->rreads++;
		s->rbytes += len;
		atomic_fetch_add_explicit(&c->ph_done, b - a, memory_order_relaxed);
		for (off = 0; a < b; a++) {
			struct dd_fp fp;

			dd_hash(s->io + off, m[a].len, &fp);
			if (fp.lo != m[a].lo || fp.hi != m[a].hi)
				s->bad++;
			off += m[a].len;
		}
	}
	for (k = 0; k < noc; k++)
		if (wl_close(c, &oc[k].f) && !ret)
			ret = -EIO;
	free(oc);
	free(m);
	if (!ret && s->bad)
		ret = wl_fail(c, -EIO, "restore of stream %u generation %u: %" PRIu64
			      " segments differ from their fingerprints", i, run->gen, s->bad);
	s->ret = ret;
	return ret;
}

static void restore_ready(struct wl_threads *t)
{
	gen_phase_begin(t->arg, "restore");
}

static void restore_done(struct wl_threads *t)
{
	struct dd_run *run = t->arg;
	struct iotap_workload_dedup_gen *g = &run->r->gen[run->gen];

	gen_phase_end(run, &g->restore, &g->restore_user_s, streams_failed(run));
}

static int first_error(struct dd_run *run, int ret)
{
	unsigned int i;

	if (ret)
		return ret;
	for (i = 0; i < run->o->streams; i++)
		if (run->st[i].ret == -EINTR)
			return -EINTR;
	for (i = 0; i < run->o->streams; i++)
		if (run->st[i].ret)
			return run->st[i].ret;
	return run->ret;
}

int dd_backup(struct dd_run *run, unsigned int gen)
{
	struct wl_threads t = {
		.n = run->o->streams, .fn = backup_stream, .arg = run,
		.on_ready = backup_ready, .on_done = backup_done,
	};
	unsigned int i;

	/* the images' contents: the model's bookkeeping, before the phase */
	for (i = 0; i < run->o->streams; i++)
		dd_pos_generation(&run->cfg, &run->st[i].pos, i, gen);
	run->gen = gen;
	return first_error(run, wl_threads_run(run->c, &t));
}

int dd_restore(struct dd_run *run, unsigned int gen)
{
	struct wl_threads t = {
		.n = run->o->streams, .fn = restore_stream, .arg = run,
		.on_ready = restore_ready, .on_done = restore_done,
	};

	run->gen = gen;
	return first_error(run, wl_threads_run(run->c, &t));
}
