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
#include <sys/xattr.h>

#include "dedup_i.h"

void dd_phase_begin(struct dd_run *run, struct wl_span *s, const char *name, uint64_t total,
		    uint64_t unit)
{
	/* the capture's own marker first: its phase then holds all of ours */
	if (run->o->mark_capture) {
		setxattr(run->c->dir, "user.iotap.mark", name, strlen(name), 0);
		snprintf(run->last_mark, sizeof(run->last_mark), "%s", name);
	}
	wl_phase_begin(run->c, s, name, total, unit);
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
	o->container_bytes = 64 * DD_MIB;
	o->expire = 1;
	o->compact_threshold = 0.20;
	o->seed = 1;
}

int iotap_workload_dedup_check(const struct iotap_workload_dedup_opts *o, const char **why)
{
	struct dd_cfg cfg;

	return dd_cfg_init(&cfg, o, why);
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
	if (cfg.fl->plan) {
		cfg.fl->plan(p, &cfg);
		return 0;
	}
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

void dd_chunk_fp(struct dd_stream *s, uint64_t k)
{
	struct dd_pos *p = &s->pos;
	uint64_t t0;

	if (p->fresh[k] == DD_NEW) {
		t0 = iotap_thread_cpu_ns();
		dd_fill(&s->run->cfg, p->cid[k], s->buf, p->len[k]);
		s->gen_ns += iotap_thread_cpu_ns() - t0;
		t0 = iotap_thread_cpu_ns();
		dd_hash(s->buf, p->len[k], &p->fp[k]);
		s->hash_ns += iotap_thread_cpu_ns() - t0;
		s->fresh++;
	} else if (p->fresh[k] == DD_REPEAT) {
		p->fp[k] = p->fp[p->src[k]];
	}
}

int64_t dd_seg_find(struct dd_run *run, const struct dd_fp *fp)
{
	uint64_t pos;
	uint32_t *v;

	/* keyed by the low half; equal low halves compare the high one */
	for (v = iotap_map_find(&run->fps, fp->lo, &pos); v;
	     v = iotap_map_find_next(&run->fps, fp->lo, &pos))
		if (run->seg[*v].fp.hi == fp->hi)
			return *v;
	return -1;
}

int64_t dd_seg_ref(struct dd_run *run, const struct dd_fp *fp, struct dd_entry *e)
{
	int64_t si;

	pthread_mutex_lock(&run->lock);
	si = dd_seg_find(run, fp);
	if (si >= 0) {
		run->seg[si].refs++;
		e->cont = run->seg[si].cont;
		e->off = run->seg[si].off;
		e->len = run->seg[si].len;
	}
	pthread_mutex_unlock(&run->lock);
	return si;
}

/* Container @id holds segment @si from now on (in file order). */
int dd_seg_add_to(struct dd_run *run, uint32_t id, uint32_t si)
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

int dd_seg_add(struct dd_run *run, const struct dd_seg *s)
{
	uint32_t *v;
	int ret;

	if (run->nseg == run->segcap) {
		uint64_t cap = run->segcap ? run->segcap * 2 : 4096;
		struct dd_seg *n = realloc(run->seg, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		run->seg = n;
		run->segcap = cap;
	}
	run->seg[run->nseg] = *s;
	ret = dd_seg_add_to(run, s->cont, (uint32_t)run->nseg);
	if (ret)
		return ret;
	if (iotap_map_add(&run->fps, s->fp.lo, (void **)&v) < 0)
		return -ENOMEM;
	*v = (uint32_t)run->nseg++;
	return 0;
}

int dd_cont_new(struct dd_run *run, uint32_t *id)
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

void dd_cont_name(char *buf, size_t len, uint32_t id, const char *ext)
{
	snprintf(buf, len, "%08x.%s", id, ext);
}

void dd_map_name(char *buf, size_t len, unsigned int stream, unsigned int gen)
{
	snprintf(buf, len, "s%u-g%u.map", stream, gen);
}

/* Read all of a map (DD_IO_MAX reads) into a new array. */
int dd_map_read(struct dd_run *run, unsigned int stream, unsigned int gen,
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
	dd_map_name(name, sizeof(name), stream, gen);
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
		size_t want = size - got < DD_IO_MAX ? size - got : DD_IO_MAX;
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

	dd_phase_begin(run, &s, "init", 1, 0);
	ret = mkdir_at(run, c->dirfd, c->dir_ino, run->o->name, &run->top_fd, &run->top_ino);
	if (ret)
		goto out;
	ret = mkdir_at(run, run->top_fd, run->top_ino, "data", &run->data_fd, &run->data_ino);
	if (ret)
		goto out;
	if (run->cfg.fl->init) {
		ret = run->cfg.fl->init(run);
		goto out;
	}
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

	if (run->cfg.fl->drop) {
		run->cfg.fl->drop(run);
		return;
	}
	for (id = 0; id < run->ncont; id++) {
		int fd;

		if (run->cont[id].state != CONT_CLOSED)
			continue;
		dd_cont_name(name, sizeof(name), id, "bin");
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
	/* the removal is no phase of the capture either */
	if (run->o->mark_capture && run->last_mark[0])
		setxattr(c->dir, "user.iotap.mark_end", run->last_mark, strlen(run->last_mark), 0);
	if (run->cfg.fl->cleanup)
		run->cfg.fl->cleanup(run);
	if (run->o->keep)
		goto close_fds;
	/* msdp's containers (a flavor with its own store removed it above) */
	for (id = 0; run->data_fd >= 0 && !run->cfg.fl->cleanup && id < run->ncont; id++) {
		if (run->cont[id].state == CONT_GONE)
			continue;
		dd_cont_name(name, sizeof(name), id, "bin");
		wl_unlink_old(c, run->data_fd, run->data_ino, name);
		dd_cont_name(name, sizeof(name), id, "tmp");
		wl_unlink_old(c, run->data_fd, run->data_ino, name);
	}
	for (s = 0; run->maps_fd >= 0 && s < run->o->streams; s++)
		for (g = 0; g < run->o->generations; g++) {
			dd_map_name(name, sizeof(name), s, g);
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
	struct iotap_hist miss = { 0 };
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
	if (run->index_open) {
		/* no memory for a histogram group: quantiles of the rest (as report's would be) */
		dd_index_take(&run->ix, &g->lookups, &g->cache_hits, &g->index_reads, &written,
			      &miss);
		g->written_bytes += written;
	} else {
		/* restic, borg: the index is in RAM, every look-up answered there */
		g->lookups = g->cache_hits = g->segments;
	}
	/* iotap_hist, as report's of the trace's index READs: the same quantiles */
	g->miss_p50_s = (double)iotap_hist_quantile(&miss, 0.50) / 1e9;
	g->miss_p99_s = (double)iotap_hist_quantile(&miss, 0.99) / 1e9;
	iotap_hist_release(&miss);
	g->backup.bytes = g->logical_bytes;
	g->backup.units = g->segments;
	{
		/* the trace's copy of what only the model knows (report, compare) */
		char name[32];
		struct iotap_trace_rec ar;
		struct iotap_trace_app_backup b = {
			.logical = g->logical_bytes, .lookups = g->lookups, .hits = g->cache_hits,
			.segments = g->segments, .fresh = g->new_segments, .stored = g->stored_bytes,
			.cpu_ns = (uint64_t)llround((g->gen_cpu_s + g->hash_cpu_s) * 1e9),
		};

		snprintf(name, sizeof(name), "backup gen=%u", run->gen);
		iotap_trace_app_backup_init(&ar, name, (uint64_t)llround(g->backup.elapsed_s * 1e9),
					    g->backup.partial ? IOTAP_APPF_PARTIAL : 0, &b);
		wl_app(run->c, &ar);
	}
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
	iotap_map_init(&run.fps, sizeof(uint32_t));
	if (!r->gen || !run.st) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < o->streams; i++) {
		struct dd_stream *s = &run.st[i];

		s->run = &run;
		s->i = i;
		s->cont.fd = -1;
		s->buf = wl_buf_alloc(run.cfg.max_seg);
		s->io = wl_buf_alloc(DD_IO_MAX + run.cfg.max_seg);
		s->map = calloc(DD_MAP_BATCH, sizeof(*s->map));
		if (run.cfg.fl->cdc) {
			s->pack = malloc(o->container_bytes + run.cfg.max_seg + 2 * DD_MIB);
			s->alt.pack = malloc(o->container_bytes + run.cfg.max_seg + 2 * DD_MIB);
		}
		if (!s->buf || !s->io || !s->map || (run.cfg.fl->cdc && (!s->pack || !s->alt.pack)) ||
		    dd_pos_alloc(&s->pos, run.cfg.positions)) {
			ret = -ENOMEM;
			goto out;
		}
	}
	ret = init(&run, &r->plan);
	for (g = 0; !ret && g < o->generations; g++) {
		ret = dd_backup(&run, g);
		take_backup(&run);
		r->gens_run = g + 1;
	}
	for (g = 0; !ret && g < o->generations; g++) {
		/* a restore of one generation does not find the last one's in RAM */
		drop_store(&run);
		ret = dd_restore(&run, g);
		take_restore(&run);
		r->restores_run = g + 1;
	}
	if (!ret && o->expire)
		ret = dd_expire(&run);
	if (!ret)
		ret = dd_compact(&run);
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
		free(run.st[i].pack);
		free(run.st[i].alt.pack);
		dd_pos_free(&run.st[i].pos);
	}
	for (i = 0; i < run.ncont; i++)
		free(run.cont[i].segs);
	free(run.cont);
	free(run.seg);
	iotap_map_release(&run.fps);
	free(run.st);
	pthread_mutex_destroy(&run.lock);
	wl_outcome(ret, wl_stopped(), &r->partial, &r->failed);
	return ret;
}

void iotap_workload_dedup_result_release(struct iotap_workload_dedup_result *r)
{
	free(r->gen);
	r->gen = NULL;
}

/* msdp: the model's own fixed segments, containers, on-disk index and maps. */
const struct dd_flavor dd_msdp = {
	.name = "msdp",
};
