// SPDX-License-Identifier: MIT
/*
 * dedup.c - a deduplicating backup media server's own I/O (NetBackup MSDP)
 *
 * The store, under the target (DIR/NAME) and the meta directory
 * (META/NAME, the same place without --meta-dir):
 *
 *   DIR/NAME/data/XXXXXXXX.bin   containers: unique segments appended
 *   META/NAME/index              fingerprint index, 4 KiB buckets (dedup_index.c)
 *   META/NAME/maps/sS-gG.map     segment map of stream S's image of generation G:
 *                                one 32-byte entry (fingerprint, container,
 *                                offset, length) per segment, in image order
 *
 * Phases, each between PHASE markers:
 *
 *   init          create the directories; the index file at full size (fallocate)
 *   backup gen=G  every stream at once, one thread each: read the previous
 *                 generation's map and put its fingerprints into the cache (the
 *                 media server's prefetch of the last image); then per segment:
 *                 fingerprint, look-up (cache; on a miss one 4 KiB pread of the
 *                 index); a new segment is appended to the stream's container
 *                 (one write of the segment at the end of the file) and its entry
 *                 goes into the index's write-back batch (256 dirty buckets: sorted
 *                 4 KiB pwrites, fdatasync); every segment gets a map entry (64 KiB
 *                 writes). A container that cannot take the next segment, and the
 *                 open one at the end of the image, is fdatasync'd and closed; the
 *                 map is fdatasync'd; the index batch is written back last.
 *   restore gen=G every stream's image of generation G at once: its map read
 *                 (1 MiB reads), then its segments read back in image order through
 *                 the containers, one pread per run of segments that lie one after
 *                 the other in one container (at most 1 MiB), each segment hashed
 *                 and compared with its fingerprint. Later generations are spread
 *                 over more containers: their reads are shorter and seek more.
 *   expire        the oldest --expire generations: each map read and unlinked, the
 *                 references dropped; dead segments leave the index (bucket read,
 *                 changed, written back in the batch).
 *   compact       a container with no live segment is unlinked; one whose dead part
 *                 is at least --compact-threshold is read front to back (1 MiB
 *                 preads), its live segments written to a new container (NAME.tmp,
 *                 1 MiB writes), fsync'd, renamed to its .bin name, their index
 *                 entries moved, the old container unlinked; then the data
 *                 directory is fsync'd and the index written back.
 *
 * Each restore reads with the page cache dropped for the containers
 * (posix_fadvise DONTNEED before it, not traced): restores measure the
 * array, not the RAM that a small model run fits in, and a generation
 * does not find the segments it shares with the last one in RAM.
 *
 * Bookkeeping the model keeps in memory and a media server keeps on disk
 * (it causes no I/O here): each stored segment's references and location,
 * each container's live bytes.
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

#define MIB		(1ull << 20)
#define IO_MAX		MIB		/* restore, compaction and map reads */
#define MAP_BATCH	2048		/* map entries per write: 64 KiB */
#define MAX_OPEN	64		/* containers a restore keeps open */

enum { CONT_OPEN, CONT_CLOSED, CONT_GONE };

struct dd_seg {
	struct dd_fp fp;
	uint32_t cont, off, len;
	uint32_t refs;			/* map entries that name it */
};

struct dd_cont {
	uint64_t size;			/* bytes written */
	uint64_t live;			/* bytes of segments still referenced */
	uint32_t *segs;			/* its segments, in file order */
	uint32_t nseg, cap;
	int state;
};

struct dd_stream {
	struct dd_run *run;
	unsigned int i;
	struct dd_pos pos;
	uint8_t *buf;			/* one segment */
	uint8_t *io;			/* IO_MAX + a segment */
	struct dd_entry *map;		/* MAP_BATCH entries */
	uint32_t nmap;
	struct wl_file cont;		/* the open container, fd -1: none */
	uint32_t cont_id;
	/* figures of the running phase */
	uint64_t logical, segs, fresh, stored, written;
	uint64_t gen_ns, hash_ns;
	uint64_t rbytes, rreads, rconts, bad;
	int ret;
};

struct dd_run {
	struct iotap_workload_ctx *c;
	const struct iotap_workload_dedup_opts *o;
	struct dd_cfg cfg;
	struct iotap_workload_dedup_result *r;
	int top_fd, data_fd, meta_fd, maps_fd;
	uint64_t top_ino, data_ino, meta_ino, maps_ino;
	int meta_own;			/* META/NAME is not DIR/NAME */
	int index_open;
	struct dd_index ix;
	pthread_mutex_t lock;		/* the segment and container tables */
	struct dd_seg *seg;
	uint64_t nseg, segcap;
	uint32_t *slot;			/* fingerprint -> seg + 1, open addressing */
	uint64_t slotcap;
	struct dd_cont *cont;
	uint32_t ncont, contcap;
	struct dd_stream *st;
	unsigned int gen;		/* of the running phase */
	struct wl_span span;
	char phname[32];		/* the running phase's marker: lives until its END */
	int ret;			/* of the owner's on_done work */
};

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void iotap_workload_dedup_opts_init(struct iotap_workload_dedup_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->flavor = IOTAP_DEDUP_MSDP;
	o->name = "iotap-dedup";
	o->streams = 4;
	o->image_bytes = 1ull << 30;
	o->generations = 7;
	o->change = 0.05;
	o->dup = 0.10;
	o->compress = 0.50;
	o->segment_bytes = 128 * 1024;
	o->container_bytes = 64 * MIB;
	o->expire = 1;
	o->compact_threshold = 0.20;
	o->seed = 1;
}

int iotap_workload_dedup_plan(const struct iotap_workload_dedup_opts *o,
			      struct iotap_workload_dedup_plan *p, const char **why)
{
	struct dd_cfg cfg;
	struct dd_pos pos;
	unsigned int s, g;
	uint64_t i;
	int ret;

	memset(p, 0, sizeof(*p));
	ret = dd_cfg_init(&cfg, o, why);
	if (ret)
		return ret;
	ret = dd_pos_alloc(&pos, cfg.positions);
	if (ret) {
		*why = "no memory for the image's positions";
		return ret;
	}
	/* the run's own generator, without content: exact counts */
	for (s = 0; s < o->streams; s++) {
		pos.serial = 0;
		for (g = 0; g < o->generations; g++) {
			dd_pos_generation(&cfg, &pos, s, g);
			for (i = 0; i < pos.n; i++) {
				p->segments++;
				p->logical_bytes += pos.len[i];
				if (pos.fresh[i] == DD_NEW) {
					p->unique_segments++;
					p->stored_bytes += pos.len[i];
				}
			}
		}
	}
	dd_pos_free(&pos);
	p->dedup_ratio = p->stored_bytes ? (double)p->logical_bytes / (double)p->stored_bytes : 0;
	/* buckets at most half full on average */
	p->index_bytes = ((p->unique_segments + DD_SLOTS / 2 - 1) / (DD_SLOTS / 2)) * DD_PAGE;
	if (p->index_bytes < 16 * DD_PAGE)
		p->index_bytes = 16 * DD_PAGE;
	p->map_bytes = p->segments * DD_ENTRY;
	p->cache_entries = o->fp_cache_bytes ? o->fp_cache_bytes / DD_ENTRY :
			   p->unique_segments / 4;
	if (p->cache_entries < 8) {
		*why = "the fingerprint cache holds fewer than 8 entries";
		return -EINVAL;
	}
	/* compaction writes a container's live part before the old one goes */
	p->need_data = p->stored_bytes + o->container_bytes;
	p->need_meta = p->index_bytes + p->map_bytes;
	return 0;
}

/* --- the segment and container tables (run->lock held) ----------------------- */

static int64_t seg_find(struct dd_run *run, const struct dd_fp *fp)
{
	uint64_t i = (fp->lo * 0x9e3779b97f4a7c15ull) & (run->slotcap - 1);

	for (;; i = (i + 1) & (run->slotcap - 1)) {
		uint32_t v = run->slot[i];

		if (!v)
			return -1;
		if (run->seg[v - 1].fp.lo == fp->lo && run->seg[v - 1].fp.hi == fp->hi)
			return v - 1;
	}
}

/* Container @id holds segment @si from now on (in file order). */
static int seg_add_to(struct dd_run *run, uint32_t id, uint32_t si)
{
	struct dd_cont *ct = &run->cont[id];

	if (ct->nseg == ct->cap) {
		uint32_t cap = ct->cap ? ct->cap * 2 : 256;
		uint32_t *n = realloc(ct->segs, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		ct->segs = n;
		ct->cap = cap;
	}
	ct->segs[ct->nseg++] = si;
	ct->live += run->seg[si].len;
	return 0;
}

static int seg_add(struct dd_run *run, const struct dd_seg *s)
{
	uint64_t i;
	int ret;

	if (run->nseg + 1 > run->slotcap / 2) {
		uint64_t cap = run->slotcap * 2, k;
		uint32_t *n = calloc(cap, sizeof(*n));

		if (!n)
			return -ENOMEM;
		for (k = 0; k < run->slotcap; k++) {
			uint32_t v = run->slot[k];

			if (!v)
				continue;
			i = (run->seg[v - 1].fp.lo * 0x9e3779b97f4a7c15ull) & (cap - 1);
			while (n[i])
				i = (i + 1) & (cap - 1);
			n[i] = v;
		}
		free(run->slot);
		run->slot = n;
		run->slotcap = cap;
	}
	if (run->nseg == run->segcap) {
		uint64_t cap = run->segcap ? run->segcap * 2 : 4096;
		struct dd_seg *n = realloc(run->seg, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		run->seg = n;
		run->segcap = cap;
	}
	run->seg[run->nseg] = *s;
	ret = seg_add_to(run, s->cont, (uint32_t)run->nseg);
	if (ret)
		return ret;
	i = (s->fp.lo * 0x9e3779b97f4a7c15ull) & (run->slotcap - 1);
	while (run->slot[i])
		i = (i + 1) & (run->slotcap - 1);
	run->slot[i] = (uint32_t)++run->nseg;
	return 0;
}

static int cont_new(struct dd_run *run, uint32_t *id)
{
	if (run->ncont == run->contcap) {
		uint32_t cap = run->contcap ? run->contcap * 2 : 64;
		struct dd_cont *n = realloc(run->cont, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		memset(n + run->contcap, 0, (cap - run->contcap) * sizeof(*n));
		run->cont = n;
		run->contcap = cap;
	}
	*id = run->ncont++;
	run->cont[*id].state = CONT_OPEN;
	return 0;
}

static void cont_name(char *buf, size_t len, uint32_t id, const char *ext)
{
	snprintf(buf, len, "%08x.%s", id, ext);
}

static void map_name(char *buf, size_t len, unsigned int stream, unsigned int gen)
{
	snprintf(buf, len, "s%u-g%u.map", stream, gen);
}

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
		ret = cont_new(run, &s->cont_id);
		pthread_mutex_unlock(&run->lock);
		if (ret)
			return ret;
		cont_name(name, sizeof(name), s->cont_id, "bin");
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

/* Read all of a map (IO_MAX reads) into a new array. */
static int map_read(struct dd_run *run, unsigned int stream, unsigned int gen,
		    struct dd_entry **out, uint64_t *n)
{
	struct wl_file f;
	char name[48];
	struct stat st;
	uint64_t size, got = 0;
	uint8_t *buf;
	int ret;

	*out = NULL;
	*n = 0;
	map_name(name, sizeof(name), stream, gen);
	ret = wl_open(run->c, &f, run->maps_fd, run->maps_ino, name, O_RDONLY, 0);
	if (ret)
		return ret;
	if (fstat(f.fd, &st)) {
		ret = wl_fail(run->c, -errno, "fstat '%s'", name);
		goto out_close;
	}
	size = (uint64_t)st.st_size;
	buf = malloc(size ? size : 1);
	if (!buf) {
		ret = -ENOMEM;
		goto out_close;
	}
	while (got < size) {
		size_t want = size - got < IO_MAX ? size - got : IO_MAX;
		ssize_t k = wl_read(run->c, &f, buf + got, want);

		if (k <= 0) {
			ret = k < 0 ? (int)k : wl_fail(run->c, -ENODATA, "read '%s': end of file",
						       name);
			free(buf);
			goto out_close;
		}
		got += (uint64_t)k;
	}
	*out = (struct dd_entry *)buf;
	*n = size / sizeof(struct dd_entry);
out_close:
	f.name = "map";
	if (wl_close(run->c, &f) && !ret)
		ret = -EIO;
	return ret;
}

static void backup_ready(struct wl_threads *t)
{
	struct dd_run *run = t->arg;

	snprintf(run->phname, sizeof(run->phname), "backup gen=%u", run->gen);
	wl_phase_begin(run->c, &run->span, run->phname,
		       run->cfg.positions * run->o->streams, run->o->segment_bytes);
}

static void backup_done(struct wl_threads *t)
{
	struct dd_run *run = t->arg;
	struct iotap_workload_dedup_gen *g = &run->r->gen[run->gen];
	int partial = 0;
	unsigned int i;

	for (i = 0; i < run->o->streams; i++)
		if (run->st[i].ret)
			partial = 1;
	/* the batch still in memory is part of the backup */
	if (!partial)
		run->ret = dd_index_flush(&run->ix);
	wl_phase_end(run->c, &run->span, &g->backup, partial || run->ret);
	g->backup_user_s = (double)(run->span.u1 - run->span.u0) / 1e9;
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

	map_name(name, sizeof(name), i, run->gen);
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
		ret = map_read(run, i, run->gen - 1, &prev, &n);
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
		uint64_t t0;
		int found;

		if (wl_stopped()) {
			ret = -EINTR;
			goto out;
		}
		if (p->fresh[k] == DD_NEW) {
			t0 = cpu_ns();
			dd_fill(&run->cfg, p->cid[k], s->buf, len);
			s->gen_ns += cpu_ns() - t0;
			t0 = cpu_ns();
			dd_hash(s->buf, len, &p->fp[k]);
			s->hash_ns += cpu_ns() - t0;
			s->fresh++;
		} else if (p->fresh[k] == DD_REPEAT) {
			p->fp[k] = p->fp[p->src[k]];
		}
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
			ret = seg_add(run, &sg);
			pthread_mutex_unlock(&run->lock);
			if (!ret)
				ret = dd_index_insert(&run->ix, e);
			if (ret) {
				ret = wl_fail(c, ret, "index insert");
				goto out;
			}
		} else {
			int64_t si;

			pthread_mutex_lock(&run->lock);
			si = seg_find(run, &p->fp[k]);
			if (si >= 0) {
				run->seg[si].refs++;
				e->cont = run->seg[si].cont;
				e->off = run->seg[si].off;
				e->len = run->seg[si].len;
			}
			pthread_mutex_unlock(&run->lock);
			if (si < 0) {
				ret = wl_fail(c, -EIO, "index has a segment the store does not");
				goto out;
			}
		}
		s->segs++;
		s->logical += len;
		if (++s->nmap == MAP_BATCH) {
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
	cont_name(name, sizeof(name), id, "bin");
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

	oc = calloc(MAX_OPEN, sizeof(*oc));
	wl_threads_ready(t);
	if (!oc)
		return s->ret = -ENOMEM;
	ret = map_read(run, i, run->gen, &m, &n);
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
				len + m[b].len <= IO_MAX; b++)
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
	struct dd_run *run = t->arg;

	snprintf(run->phname, sizeof(run->phname), "restore gen=%u", run->gen);
	wl_phase_begin(run->c, &run->span, run->phname,
		       run->cfg.positions * run->o->streams, run->o->segment_bytes);
}

static void restore_done(struct wl_threads *t)
{
	struct dd_run *run = t->arg;
	struct iotap_workload_dedup_gen *g = &run->r->gen[run->gen];
	int partial = 0;
	unsigned int i;

	for (i = 0; i < run->o->streams; i++)
		if (run->st[i].ret)
			partial = 1;
	wl_phase_end(run->c, &run->span, &g->restore, partial);
	g->restore_user_s = (double)(run->span.u1 - run->span.u0) / 1e9;
}

/* --- expiry and compaction ------------------------------------------------------ */

static int expire(struct dd_run *run)
{
	struct iotap_workload_dedup_result *r = run->r;
	struct iotap_workload_ctx *c = run->c;
	unsigned int g, i;
	int ret = 0;

	wl_phase_begin(c, &run->span, "expire", (uint64_t)run->o->expire * run->o->streams, 0);
	for (g = 0; !ret && g < run->o->expire; g++) {
		for (i = 0; !ret && i < run->o->streams; i++) {
			struct dd_entry *m;
			char name[48];
			uint64_t n, k;

			if (wl_stopped()) {
				ret = -EINTR;
				break;
			}
			ret = map_read(run, i, g, &m, &n);
			for (k = 0; !ret && k < n; k++) {
				struct dd_fp fp = { m[k].lo, m[k].hi };
				struct dd_seg *sg = NULL;
				int64_t si;

				pthread_mutex_lock(&run->lock);
				si = seg_find(run, &fp);
				if (si >= 0 && run->seg[si].refs && !--run->seg[si].refs) {
					sg = &run->seg[si];
					run->cont[sg->cont].live -= sg->len;
					r->dead_segments++;
					r->dead_bytes += sg->len;
				}
				pthread_mutex_unlock(&run->lock);
				if (sg)
					ret = dd_index_update(&run->ix, &fp, NULL);
			}
			free(m);
			if (ret)
				break;
			map_name(name, sizeof(name), i, g);
			ret = wl_unlink(c, run->maps_fd, run->maps_ino, name, 0);
			if (!ret)
				r->expired_images++;
			wl_phase_unit(c, &run->span, 0, 0);
		}
	}
	if (!ret)
		ret = dd_index_flush(&run->ix);
	wl_phase_end(c, &run->span, &r->expire, ret != 0);
	return ret;
}

/* Rewrite container @id's live segments into a new container; unlink the old. */
static int repack(struct dd_run *run, uint32_t id, uint8_t *in, uint8_t *out)
{
	struct iotap_workload_dedup_result *r = run->r;
	struct iotap_workload_ctx *c = run->c;
	struct wl_file old = { .fd = -1 }, nf = { .fd = -1 };
	char oname[32], tname[32], nname[32];
	struct dd_cont *ct;
	uint64_t size, got = 0, fill = 0, woff = 0;
	uint32_t nid, k;
	int ret;

	pthread_mutex_lock(&run->lock);
	ret = cont_new(run, &nid);
	ct = &run->cont[id];
	size = ct->size;
	pthread_mutex_unlock(&run->lock);
	if (ret)
		return ret;
	cont_name(oname, sizeof(oname), id, "bin");
	cont_name(tname, sizeof(tname), nid, "tmp");
	cont_name(nname, sizeof(nname), nid, "bin");
	ret = wl_open(c, &old, run->data_fd, run->data_ino, oname, O_RDONLY, 0);
	if (ret)
		goto out;
	ret = wl_open(c, &nf, run->data_fd, run->data_ino, tname, O_WRONLY | O_CREAT | O_EXCL,
		      0644);
	if (ret)
		goto out;
	while (got < size) {
		size_t want = size - got < IO_MAX ? size - got : IO_MAX;
		ssize_t n = wl_pread(c, &old, in + got, want, got);

		if (n <= 0) {
			ret = n < 0 ? (int)n : wl_fail(c, -ENODATA, "read '%s': end of file", oname);
			goto out;
		}
		got += (uint64_t)n;
		r->compact_read += (uint64_t)n;
	}
	/* live segments in file order, out in IO_MAX writes */
	for (k = 0; k < ct->nseg; k++) {
		struct dd_seg *sg = &run->seg[ct->segs[k]];
		struct dd_fp fp;

		if (!sg->refs)
			continue;
		dd_hash(in + sg->off, sg->len, &fp);
		if (fp.lo != sg->fp.lo || fp.hi != sg->fp.hi) {
			ret = wl_fail(c, -EIO, "container %08x at %u: the segment is not what was "
				      "stored", id, sg->off);
			goto out;
		}
		if (fill + sg->len > IO_MAX && fill) {
			ret = wl_write_full(c, &nf, out, fill);
			if (ret)
				goto out;
			r->compact_written += fill;
			fill = 0;
		}
		memcpy(out + fill, in + sg->off, sg->len);
		fill += sg->len;
	}
	if (fill) {
		ret = wl_write_full(c, &nf, out, fill);
		if (ret)
			goto out;
		r->compact_written += fill;
	}
	ret = wl_fsync(c, &nf, 0);
	if (ret)
		goto out;
	ret = wl_close(c, &nf);
	if (ret)
		goto out;
	ret = wl_rename(c, run->data_fd, run->data_ino, tname, run->data_fd, run->data_ino, nname);
	if (ret)
		goto out;
	/* the moved segments: their new home, in the table and the index */
	for (k = 0; k < ct->nseg && !ret; k++) {
		struct dd_seg *sg = &run->seg[ct->segs[k]];
		struct dd_entry e;

		if (!sg->refs)
			continue;
		pthread_mutex_lock(&run->lock);
		sg->cont = nid;
		sg->off = (uint32_t)woff;
		ret = seg_add_to(run, nid, ct->segs[k]);
		pthread_mutex_unlock(&run->lock);
		woff += sg->len;
		memset(&e, 0, sizeof(e));
		e.lo = sg->fp.lo;
		e.hi = sg->fp.hi;
		e.cont = nid;
		e.off = sg->off;
		e.len = sg->len;
		if (!ret)
			ret = dd_index_update(&run->ix, &sg->fp, &e);
	}
	if (ret)
		goto out;
	wl_close(c, &old);
	ret = wl_unlink(c, run->data_fd, run->data_ino, oname, 0);
	if (ret)
		goto out;
	pthread_mutex_lock(&run->lock);
	run->cont[nid].size = woff;
	run->cont[nid].state = CONT_CLOSED;
	run->cont[id].state = CONT_GONE;
	pthread_mutex_unlock(&run->lock);
	r->containers_rewritten++;
	r->compact_freed += size - woff;
out:
	if (old.fd >= 0)
		wl_close(c, &old);
	if (nf.fd >= 0)
		wl_close(c, &nf);
	return ret;
}

static int compact(struct dd_run *run)
{
	struct iotap_workload_dedup_result *r = run->r;
	struct iotap_workload_ctx *c = run->c;
	uint8_t *in = NULL, *out = NULL;
	uint32_t id, n;
	int ret = 0;

	in = wl_buf_alloc(run->o->container_bytes);
	out = wl_buf_alloc(IO_MAX + run->cfg.max_seg);
	if (!in || !out) {
		ret = -ENOMEM;
		goto out;
	}
	n = run->ncont;
	wl_phase_begin(c, &run->span, "compact", n, 0);
	for (id = 0; id < n && !ret; id++) {
		struct dd_cont *ct = &run->cont[id];
		char name[32];

		if (wl_stopped()) {
			ret = -EINTR;
			break;
		}
		if (ct->state != CONT_CLOSED || ct->live == ct->size)
			continue;
		if (!ct->live) {
			cont_name(name, sizeof(name), id, "bin");
			ret = wl_unlink(c, run->data_fd, run->data_ino, name, 0);
			if (ret)
				break;
			ct->state = CONT_GONE;
			r->containers_removed++;
			r->compact_freed += ct->size;
		} else if ((double)(ct->size - ct->live) >=
			   run->o->compact_threshold * (double)ct->size) {
			ret = repack(run, id, in, out);
		}
		wl_phase_unit(c, &run->span, 0, 0);
	}
	if (!ret && (r->containers_removed || r->containers_rewritten))
		ret = wl_fsync_dir(c, run->data_fd, run->data_ino);
	if (!ret)
		ret = dd_index_flush(&run->ix);
	wl_phase_end(c, &run->span, &r->compact, ret != 0);
	r->compact.bytes = r->compact_read + r->compact_written;
out:
	free(in);
	free(out);
	return ret;
}

/* --- the run ----------------------------------------------------------------- */

static int mkdir_at(struct dd_run *run, int pfd, uint64_t pino, const char *name, int *fd,
		    uint64_t *ino)
{
	int ret = wl_mkdir(run->c, pfd, pino, name, 0755, ino);

	if (ret)
		return ret;
	*fd = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (*fd < 0)
		return wl_fail(run->c, -errno, "open directory '%s'", name);
	return 0;
}

static int init(struct dd_run *run, const struct iotap_workload_dedup_plan *plan)
{
	struct iotap_workload_ctx *c = run->c;
	struct wl_span s;
	int ret, mfd = -1;
	struct stat st;

	wl_phase_begin(c, &s, "init", 1, 0);
	ret = mkdir_at(run, c->dirfd, c->dir_ino, run->o->name, &run->top_fd, &run->top_ino);
	if (ret)
		goto out;
	ret = mkdir_at(run, run->top_fd, run->top_ino, "data", &run->data_fd, &run->data_ino);
	if (ret)
		goto out;
	if (run->o->meta_dir) {
		mfd = open(run->o->meta_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (mfd < 0 || fstat(mfd, &st)) {
			ret = wl_fail(c, -errno, "open directory '%s'", run->o->meta_dir);
			goto out;
		}
		ret = mkdir_at(run, mfd, st.st_ino, run->o->name, &run->meta_fd, &run->meta_ino);
		if (ret)
			goto out;
		run->meta_own = 1;
	} else {
		run->meta_fd = run->top_fd;
		run->meta_ino = run->top_ino;
	}
	ret = mkdir_at(run, run->meta_fd, run->meta_ino, "maps", &run->maps_fd, &run->maps_ino);
	if (ret)
		goto out;
	ret = dd_index_open(&run->ix, c, run->meta_fd, run->meta_ino,
			    plan->index_bytes / DD_PAGE, plan->cache_entries);
	if (ret)
		goto out;
	run->index_open = 1;
out:
	if (mfd >= 0)
		close(mfd);
	wl_phase_end(c, &s, &run->r->init, ret != 0);
	return ret;
}

/* posix_fadvise DONTNEED on the store (not traced): restores read from the array. */
static void drop_store(struct dd_run *run)
{
	char name[48];
	uint32_t id;

	for (id = 0; id < run->ncont; id++) {
		int fd;

		if (run->cont[id].state != CONT_CLOSED)
			continue;
		cont_name(name, sizeof(name), id, "bin");
		fd = openat(run->data_fd, name, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
			close(fd);
		}
	}
}

/* Remove what the run made: traced, outside every phase, also after a failure. */
static void cleanup(struct dd_run *run)
{
	struct iotap_workload_ctx *c = run->c;
	unsigned int s, g;
	char name[48];
	uint32_t id;

	if (run->index_open) {
		dd_index_close(&run->ix);
		run->index_open = 0;
	}
	if (run->o->keep)
		goto close_fds;
	for (id = 0; run->data_fd >= 0 && id < run->ncont; id++) {
		if (run->cont[id].state == CONT_GONE)
			continue;
		cont_name(name, sizeof(name), id, "bin");
		wl_unlink_old(c, run->data_fd, run->data_ino, name);
		cont_name(name, sizeof(name), id, "tmp");
		wl_unlink_old(c, run->data_fd, run->data_ino, name);
	}
	for (s = 0; run->maps_fd >= 0 && s < run->o->streams; s++)
		for (g = 0; g < run->o->generations; g++) {
			map_name(name, sizeof(name), s, g);
			wl_unlink_old(c, run->maps_fd, run->maps_ino, name);
		}
	if (run->meta_fd >= 0)
		wl_unlink_old(c, run->meta_fd, run->meta_ino, "index");
	if (run->maps_fd >= 0)
		wl_rmdir(c, run->meta_fd, run->meta_ino, "maps", run->maps_ino);
	if (run->data_fd >= 0)
		wl_rmdir(c, run->top_fd, run->top_ino, "data", run->data_ino);
	if (run->meta_own && run->meta_fd >= 0) {
		int mfd = open(run->o->meta_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		struct stat st;

		if (mfd >= 0 && !fstat(mfd, &st))
			wl_rmdir(c, mfd, st.st_ino, run->o->name, run->meta_ino);
		if (mfd >= 0)
			close(mfd);
	}
	if (run->top_fd >= 0)
		wl_rmdir(c, c->dirfd, c->dir_ino, run->o->name, run->top_ino);
close_fds:
	if (run->maps_fd >= 0)
		close(run->maps_fd);
	if (run->meta_own && run->meta_fd >= 0)
		close(run->meta_fd);
	if (run->data_fd >= 0)
		close(run->data_fd);
	if (run->top_fd >= 0)
		close(run->top_fd);
	run->maps_fd = run->meta_fd = run->data_fd = run->top_fd = -1;
}

/* Sum the streams' figures of generation run->gen's backup into the result. */
static void take_backup(struct dd_run *run)
{
	struct iotap_workload_dedup_gen *g = &run->r->gen[run->gen];
	struct dd_hist miss;
	uint64_t written;
	unsigned int i;

	for (i = 0; i < run->o->streams; i++) {
		struct dd_stream *s = &run->st[i];

		g->logical_bytes += s->logical;
		g->segments += s->segs;
		g->new_segments += s->fresh;
		g->stored_bytes += s->stored;
		g->written_bytes += s->written;
		g->gen_cpu_s += (double)s->gen_ns / 1e9;
		g->hash_cpu_s += (double)s->hash_ns / 1e9;
		s->logical = s->segs = s->fresh = s->stored = s->written = 0;
		s->gen_ns = s->hash_ns = 0;
	}
	dd_index_take(&run->ix, &g->lookups, &g->cache_hits, &g->index_reads, &written, &miss);
	g->written_bytes += written;
	g->miss_p50_s = dd_hist_quantile(&miss, 0.50);
	g->miss_p99_s = dd_hist_quantile(&miss, 0.99);
	g->backup.bytes = g->logical_bytes;
	g->backup.units = g->segments;
}

static void take_restore(struct dd_run *run)
{
	struct iotap_workload_dedup_gen *g = &run->r->gen[run->gen];
	unsigned int i;

	for (i = 0; i < run->o->streams; i++) {
		struct dd_stream *s = &run->st[i];

		g->restore_bytes += s->rbytes;
		g->restore_reads += s->rreads;
		g->restore_containers += s->rconts;
		g->verify_errors += s->bad;
		s->rbytes = s->rreads = s->rconts = s->bad = 0;
	}
	g->restore.bytes = g->restore_bytes;
	g->restore.units = g->restore_reads;
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

int iotap_workload_dedup_run(struct iotap_workload_ctx *c,
			     const struct iotap_workload_dedup_opts *o,
			     struct iotap_workload_dedup_result *r)
{
	struct dd_run run;
	const char *why;
	unsigned int i, g;
	int ret;

	memset(r, 0, sizeof(*r));
	memset(&run, 0, sizeof(run));
	run.top_fd = run.data_fd = run.meta_fd = run.maps_fd = -1;
	if (c->dirfd < 0)
		return -ENOTDIR;
	ret = iotap_workload_dedup_plan(o, &r->plan, &why);
	if (ret)
		return ret;
	dd_cfg_init(&run.cfg, o, &why);
	run.c = c;
	run.o = o;
	run.r = r;
	pthread_mutex_init(&run.lock, NULL);
	r->gen = calloc(o->generations, sizeof(*r->gen));
	run.st = calloc(o->streams, sizeof(*run.st));
	run.slotcap = 1024;
	run.slot = calloc(run.slotcap, sizeof(*run.slot));
	if (!r->gen || !run.st || !run.slot) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < o->streams; i++) {
		struct dd_stream *s = &run.st[i];

		s->run = &run;
		s->i = i;
		s->cont.fd = -1;
		s->buf = wl_buf_alloc(run.cfg.max_seg);
		s->io = wl_buf_alloc(IO_MAX + run.cfg.max_seg);
		s->map = calloc(MAP_BATCH, sizeof(*s->map));
		if (!s->buf || !s->io || !s->map || dd_pos_alloc(&s->pos, run.cfg.positions)) {
			ret = -ENOMEM;
			goto out;
		}
	}
	ret = init(&run, &r->plan);
	for (g = 0; !ret && g < o->generations; g++) {
		struct wl_threads t = {
			.n = o->streams, .fn = backup_stream, .arg = &run,
			.on_ready = backup_ready, .on_done = backup_done,
		};

		/* the images' contents: the model's bookkeeping, before the phase */
		for (i = 0; i < o->streams; i++)
			dd_pos_generation(&run.cfg, &run.st[i].pos, i, g);
		run.gen = g;
		ret = first_error(&run, wl_threads_run(c, &t));
		take_backup(&run);
		r->gens_run = g + 1;
	}
	for (g = 0; !ret && g < o->generations; g++) {
		struct wl_threads t = {
			.n = o->streams, .fn = restore_stream, .arg = &run,
			.on_ready = restore_ready, .on_done = restore_done,
		};

		/* a restore of one generation does not find the last one's in RAM */
		drop_store(&run);
		run.gen = g;
		ret = first_error(&run, wl_threads_run(c, &t));
		take_restore(&run);
		r->restores_run = g + 1;
	}
	if (!ret && o->expire)
		ret = expire(&run);
	if (!ret)
		ret = compact(&run);
	for (i = 0; i < run.ncont; i++)
		if (run.cont[i].state == CONT_CLOSED) {
			r->containers++;
			r->stored_bytes += run.cont[i].size;
		}
out:
	cleanup(&run);
	for (i = 0; run.st && i < o->streams; i++) {
		free(run.st[i].buf);
		free(run.st[i].io);
		free(run.st[i].map);
		dd_pos_free(&run.st[i].pos);
	}
	for (i = 0; i < run.ncont; i++)
		free(run.cont[i].segs);
	free(run.cont);
	free(run.seg);
	free(run.slot);
	free(run.st);
	pthread_mutex_destroy(&run.lock);
	if (ret == -EINTR || wl_stopped())
		r->partial = 1;
	else if (ret)
		r->failed = 1;
	return ret;
}

void iotap_workload_dedup_result_release(struct iotap_workload_dedup_result *r)
{
	free(r->gen);
	r->gen = NULL;
}
