// SPDX-License-Identifier: MIT
/*
 * dedup_restic.c - the dedup model's restic flavor (--flavor restic)
 *
 * What restic 0.14 does to a local repository, read from its source and
 * from strace of `restic backup`, `restore` and `forget --prune`:
 *
 *   DIR/NAME/data/XX/ID   packs: blobs (chunks after zstd and encryption),
 *                         then the pack header; 256 XX directories, made at init
 *   DIR/NAME/index/ID     the index: one file per backup (a full one after prune)
 *   DIR/NAME/snapshots/ID one per backup
 *   DIR/NAME/locks/ID     one per command, removed at its end
 *
 * Every file is saved the same way (local backend Save): created as
 * ID-tmp-N (O_EXCL), written front to back in 32 KiB writes (io.Copy from
 * the temporary pack file restic assembles outside the repository), fsync,
 * close, renamed to ID, then its directory is opened and fsync'd.
 *
 * Chunks are content-defined (512 KiB + about 1 MiB, at most 8 MiB; a change
 * renews every chunk that overlaps it, dedup_data.c); a new chunk's blob is
 * what the compressor keeps of it (its random part) plus 32 bytes of nonce
 * and MAC; two packers take the blobs in turn, each pack saved once it
 * holds 16 MiB (--container-size), both at the end of a backup. The
 * index lives in RAM, loaded from restic's local cache (~/.cache/restic,
 * outside the repository): look-ups never read the repository. A backup ends with its tree (the
 * image's blob list, a small pack of its own), its index file and its
 * snapshot. A restore reads the index, the snapshot and the tree, then each
 * pack it needs once, from its first needed blob to its last, in 4 MiB
 * reads. forget unlinks the oldest snapshots; prune reads the remaining
 * snapshots and trees, deletes the packs with nothing live and rewrites
 * the most unused others (read in 4 MiB reads, the live blobs saved into
 * new packs) until what stays unused is at most --compact-threshold of
 * what is used (--max-unused, 5%), saves one new index, and unlinks the
 * old index files and packs.
 *
 * Not modelled: restic's reads of the source tree (outside the
 * repository), config and key reads, the lock refresh every 5 minutes,
 * the local cache under ~/.cache/restic. Restores do not verify the blobs
 * (what is stored is the compressed form, not the hashed plaintext).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dedup_i.h"

#define WRITE_UNIT	(32 * 1024)	/* io.Copy's buffer */
#define READ_UNIT	(4 * DD_MIB)	/* restore and prune reads */
#define BLOB_EXTRA	32		/* nonce + MAC per blob */
#define HDR_ENTRY	(41 + 32)	/* pack header per blob, encrypted */
#define INDEX_ENTRY	180		/* index file bytes per blob (JSON, compressed) */
#define SNAP_BYTES	250
#define LOCK_BYTES	137

static int add_file(struct dd_run *run, uint16_t dir, uint32_t *out)
{
	struct dd_rfile *f;
	uint64_t h;

	pthread_mutex_lock(&run->lock);
	if (run->nrf == run->rfcap) {
		uint32_t cap = run->rfcap ? run->rfcap * 2 : 256;
		struct dd_rfile *n = realloc(run->rf, cap * sizeof(*n));

		if (!n) {
			pthread_mutex_unlock(&run->lock);
			return -ENOMEM;
		}
		run->rf = n;
		run->rfcap = cap;
	}
	h = ++run->name_ctr * 0x9e3779b97f4a7c15ull ^ run->o->seed;
	h ^= h >> 29;
	/* the name's first byte picks the data directory, as a SHA-256 id's does */
	if (dir < 256)
		dir = (uint16_t)(h >> 56);
	f = &run->rf[run->nrf];
	memset(f, 0, sizeof(*f));
	f->dir = dir;
	snprintf(f->name, sizeof(f->name), "%016" PRIx64, h);
	*out = run->nrf++;
	pthread_mutex_unlock(&run->lock);
	return 0;
}

/* A copy of file @rfi: another stream may be growing the table. */
static struct dd_rfile file_at(struct dd_run *run, uint32_t rfi)
{
	struct dd_rfile f;

	pthread_mutex_lock(&run->lock);
	f = run->rf[rfi];
	pthread_mutex_unlock(&run->lock);
	return f;
}

static void dir_name(char *buf, size_t len, uint16_t dir)
{
	if (dir < 256)
		snprintf(buf, len, "%02x", dir);
	else
		snprintf(buf, len, "%s", dir == RS_DIR_INDEX ? "index" :
			 dir == RS_DIR_SNAP ? "snapshots" : "locks");
}

/* The local backend's Save: ID-tmp, 32 KiB writes, fsync, rename, directory fsync. */
static int save(struct dd_run *run, uint32_t rfi, const uint8_t *buf, uint64_t len)
{
	struct iotap_workload_ctx *c = run->c;
	struct dd_rfile f = file_at(run, rfi);
	int dfd = run->rdir_fd[f.dir];
	uint64_t dino = run->rdir_ino[f.dir], off;
	struct wl_file wf;
	struct wl_dir d;
	char tmp[40], dn[16];
	int ret, pfd;

	snprintf(tmp, sizeof(tmp), "%s-tmp", f.name);
	ret = wl_open(c, &wf, dfd, dino, tmp, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (ret)
		return ret;
	wf.name = "repository file";
	for (off = 0; off < len && !ret; off += WRITE_UNIT)
		ret = wl_write_full(c, &wf, buf + off, len - off < WRITE_UNIT ? len - off :
			     WRITE_UNIT);
	if (!ret)
		ret = wl_fsync(c, &wf, 0);
	if (wl_close(c, &wf) && !ret)
		ret = -EIO;
	if (!ret)
		ret = wl_rename(c, dfd, dino, tmp, dfd, dino, f.name);
	if (ret)
		return ret;
	pthread_mutex_lock(&run->lock);
	run->rf[rfi].size = len;
	pthread_mutex_unlock(&run->lock);
	pfd = f.dir < 256 ? run->data_fd : run->top_fd;
	dir_name(dn, sizeof(dn), f.dir);
	ret = wl_opendir(c, &d, pfd, dn);
	if (ret)
		return ret;
	ret = wl_fsync_dir(c, d.fd, d.ino);
	wl_closedir(c, &d);
	return ret;
}

/* A file of @size zero bytes saved (index, snapshot, lock: small, content immaterial). */
static int save_small(struct dd_run *run, uint16_t dir, uint64_t size, uint32_t *rfi)
{
	uint8_t *buf = calloc(1, size ? size : 1);
	int ret;

	if (!buf)
		return -ENOMEM;
	ret = add_file(run, dir, rfi);
	if (!ret)
		ret = save(run, *rfi, buf, size);
	free(buf);
	return ret;
}

/*
 * Read @len bytes (UINT64_MAX: all) of a repository file from @off in
 * 4 MiB reads: into @buf one after the other with @whole, else each into
 * @buf (at least 4 MiB) over the last.
 */
static int load(struct dd_run *run, uint32_t rfi, uint64_t off, uint64_t len, uint8_t *buf,
		int whole, struct dd_stream *s)
{
	struct iotap_workload_ctx *c = run->c;
	struct dd_rfile f = file_at(run, rfi);
	struct wl_file rf;
	uint64_t done = 0;
	int ret;

	ret = wl_open(c, &rf, run->rdir_fd[f.dir], run->rdir_ino[f.dir], f.name, O_RDONLY, 0);
	if (ret)
		return ret;
	rf.name = "repository file";
	if (len == UINT64_MAX)
		len = f.size;
	while (done < len) {
		uint64_t want = len - done < READ_UNIT ? len - done : READ_UNIT;
		ssize_t n = wl_pread(c, &rf, whole ? buf + done : buf, want, off + done);

		if (n <= 0) {
			ret = n < 0 ? (int)n : wl_fail(c, -ENODATA, "read '%s': end of file",
						       f.name);
			break;
		}
		done += (uint64_t)n;
		if (s) {
			s->rreads++;
			s->rbytes += (uint64_t)n;
		}
	}
	if (wl_close(c, &rf) && !ret)
		ret = -EIO;
	return ret;
}

static int unlink_file(struct dd_run *run, uint32_t rfi)
{
	struct dd_rfile f = file_at(run, rfi);
	int ret;

	if (f.gone)
		return 0;
	ret = wl_unlink(run->c, run->rdir_fd[f.dir], run->rdir_ino[f.dir], f.name, 0);
	if (!ret) {
		pthread_mutex_lock(&run->lock);
		run->rf[rfi].gone = 1;
		pthread_mutex_unlock(&run->lock);
	}
	return ret;
}

static int restic_init(struct dd_run *run)
{
	struct iotap_workload_ctx *c = run->c;
	unsigned int i;
	char name[16];
	int ret;

	for (i = 0; i < RS_DIRS; i++)
		run->rdir_fd[i] = -1;
	run->snap_rf = calloc((size_t)run->o->streams * run->o->generations, sizeof(uint32_t));
	run->tree_cont = calloc((size_t)run->o->streams * run->o->generations, sizeof(uint32_t));
	run->tree = calloc((size_t)run->o->streams * run->o->generations, sizeof(*run->tree));
	run->ntree = calloc((size_t)run->o->streams * run->o->generations, sizeof(uint64_t));
	if (!run->snap_rf || !run->tree_cont || !run->tree || !run->ntree)
		return -ENOMEM;
	/* restic init: the 256 data directories and the others */
	for (i = 0; i < RS_DIRS; i++) {
		int pfd = i < 256 ? run->data_fd : run->top_fd;
		uint64_t pino = i < 256 ? run->data_ino : run->top_ino;

		dir_name(name, sizeof(name), (uint16_t)i);
		ret = wl_mkdir(c, pfd, pino, name, 0700, &run->rdir_ino[i]);
		if (ret)
			return ret;
		run->rdir_fd[i] = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (run->rdir_fd[i] < 0)
			return wl_fail(c, -errno, "open directory '%s'", name);
	}
	return 0;
}

/* --- backup --------------------------------------------------------------------- */

/* Save the stream's pack (blobs, then the header). */
static int pack_flush(struct dd_stream *s)
{
	struct dd_run *run = s->run;
	uint64_t hdr = (uint64_t)s->pblobs * HDR_ENTRY + 4;
	struct dd_cont *ct;
	uint32_t rfi;
	int ret;

	if (!s->pack_open)
		return 0;
	memset(s->pack + s->pfill, 0, hdr);
	pthread_mutex_lock(&run->lock);
	rfi = run->cont[s->pack_id].rf;
	pthread_mutex_unlock(&run->lock);
	ret = save(run, rfi, s->pack, s->pfill + hdr);
	pthread_mutex_lock(&run->lock);
	ct = &run->cont[s->pack_id];
	ct->size = s->pfill + hdr;
	ct->live += hdr;		/* the header lives as long as the pack */
	ct->state = CONT_CLOSED;
	pthread_mutex_unlock(&run->lock);
	s->written += s->pfill + hdr;
	s->pack_open = 0;
	s->pfill = 0;
	s->pblobs = 0;
	return ret;
}

static int pack_start(struct dd_stream *s)
{
	struct dd_run *run = s->run;
	uint32_t rfi;
	int ret;

	ret = add_file(run, 0, &rfi);
	if (ret)
		return ret;
	pthread_mutex_lock(&run->lock);
	ret = dd_cont_new(run, &s->pack_id);
	if (!ret)
		run->cont[s->pack_id].rf = rfi;
	pthread_mutex_unlock(&run->lock);
	s->pack_open = !ret;
	return ret;
}

/* Make the other packer the current one. */
static void pack_swap(struct dd_stream *s)
{
	uint8_t *pack = s->pack;
	uint64_t pfill = s->pfill;
	uint32_t pblobs = s->pblobs, pack_id = s->pack_id;
	int pack_open = s->pack_open;

	s->pack = s->alt.pack;
	s->pfill = s->alt.pfill;
	s->pblobs = s->alt.pblobs;
	s->pack_id = s->alt.pack_id;
	s->pack_open = s->alt.pack_open;
	s->alt.pack = pack;
	s->alt.pfill = pfill;
	s->alt.pblobs = pblobs;
	s->alt.pack_id = pack_id;
	s->alt.pack_open = pack_open;
}

/* Add a blob of @len bytes at @src to the pack; where it went in @e. */
static int pack_add(struct dd_stream *s, const uint8_t *src, uint32_t len, uint32_t plain,
		    const struct dd_fp *fp, struct dd_entry *e)
{
	struct dd_run *run = s->run;
	struct dd_seg sg;
	int ret;

	if (!s->pack_open) {
		ret = pack_start(s);
		if (ret)
			return ret;
	}
	memcpy(s->pack + s->pfill, src, len);
	sg.fp = *fp;
	sg.cont = s->pack_id;
	sg.off = (uint32_t)s->pfill;
	sg.len = len;
	sg.refs = 1;
	pthread_mutex_lock(&run->lock);
	ret = dd_seg_add(run, &sg);
	pthread_mutex_unlock(&run->lock);
	if (ret)
		return ret;
	e->cont = sg.cont;
	e->off = sg.off;
	e->len = len;
	s->pfill += len;
	s->pblobs++;
	s->stored += plain;	/* the dedup ratio counts what was sent, not what was kept */
	s->blobs_added++;
	if (s->pfill >= run->o->container_bytes)
		return pack_flush(s);
	return 0;
}

/* restic backup, through dd_cdc_backup(): the lock first */
static int restic_begin(struct dd_stream *s)
{
	s->blob = malloc(s->run->cfg.max_seg + BLOB_EXTRA);
	if (!s->blob)
		return -ENOMEM;
	s->blobs_added = 0;
	/* the index comes from restic's cache (~/.cache/restic), not the repository */
	return save_small(s->run, RS_DIR_LOCKS, LOCK_BYTES, &s->lock);
}

/* A new chunk: compressed, encrypted, into a pack. */
static int restic_store(struct dd_stream *s, uint64_t k, struct dd_entry *e)
{
	struct dd_pos *p = &s->pos;
	uint32_t len = p->len[k], n;
	int ret;

	n = dd_squeeze(&s->run->cfg, s->buf, len, s->blob);
	memset(s->blob + n, 0, BLOB_EXTRA);
	ret = pack_add(s, s->blob, n + BLOB_EXTRA, len, &p->fp[k], e);
	/* restic's two packers take the blobs in turn */
	pack_swap(s);
	return ret;
}

/* The packs flushed, the tree, the index and the snapshot saved, the lock gone. */
static int restic_end(struct dd_stream *s, struct dd_entry *tree, int ret)
{
	struct dd_run *run = s->run;
	struct iotap_workload_ctx *c = run->c;
	struct dd_pos *p = &s->pos;
	unsigned int slot = s->i * run->o->generations + run->gen;
	uint32_t rfi;

	if (!s->blob)
		goto out;
	if (!ret)
		ret = pack_flush(s);
	pack_swap(s);
	if (!ret)
		ret = pack_flush(s);
	/* the tree: the image's blob list, a pack of its own */
	if (!ret)
		ret = pack_start(s);
	if (!ret && p->n * sizeof(*tree) > run->o->container_bytes)
		ret = wl_fail(c, -EFBIG, "the image's tree is larger than a pack");
	if (!ret) {
		uint64_t len = p->n * sizeof(*tree);

		run->tree_cont[slot] = s->pack_id;
		memcpy(s->pack, tree, len);
		s->pfill = len;
		s->pblobs = 1;
		pthread_mutex_lock(&run->lock);
		run->cont[s->pack_id].live = len;
		pthread_mutex_unlock(&run->lock);
		ret = pack_flush(s);
	}
	if (!ret)
		ret = save_small(run, RS_DIR_INDEX, 64 + INDEX_ENTRY * (s->blobs_added + 1), &rfi);
	if (!ret)
		ret = save_small(run, RS_DIR_SNAP, SNAP_BYTES, &run->snap_rf[slot]);
	if (!ret)
		s->written += 64 + INDEX_ENTRY * (s->blobs_added + 1) + SNAP_BYTES + LOCK_BYTES;
	if (!ret)
		ret = unlink_file(run, s->lock);
out:
	run->tree[slot] = tree;
	run->ntree[slot] = p->n;
	free(s->blob);
	s->blob = NULL;
	return ret;
}

/* --- restore --------------------------------------------------------------------- */

static int restic_restore(struct dd_stream *s)
{
	struct dd_run *run = s->run;
	unsigned int slot = s->i * run->o->generations + run->gen;
	struct dd_entry *t = run->tree[slot];
	uint64_t n = run->ntree[slot], k, j;
	uint32_t lock;
	uint8_t *seen;
	int ret;

	seen = calloc(run->ncont ? run->ncont : 1, 1);
	if (!seen)
		return -ENOMEM;
	ret = save_small(run, RS_DIR_LOCKS, LOCK_BYTES, &lock);
	if (!ret)
		ret = load(run, run->snap_rf[slot], 0, UINT64_MAX, s->io, 0, NULL);
	if (!ret)
		ret = load(run, run->cont[run->tree_cont[slot]].rf, 0, UINT64_MAX, s->io, 0, s);
	/* each pack once, in order of first use, from its first needed blob to its last */
	for (k = 0; !ret && k < n; k++) {
		uint64_t lo = t[k].off, hi = t[k].off + t[k].len;
		uint32_t pk = t[k].cont;

		if (seen[pk])
			continue;
		if (wl_stopped()) {
			ret = -EINTR;
			break;
		}
		seen[pk] = 1;
		s->rconts++;
		for (j = k + 1; j < n; j++)
			if (t[j].cont == pk) {
				if (t[j].off < lo)
					lo = t[j].off;
				if (t[j].off + t[j].len > hi)
					hi = t[j].off + t[j].len;
			}
		ret = load(run, run->cont[pk].rf, lo, hi - lo, s->io, 0, s);
		atomic_fetch_add_explicit(&run->c->ph_done, 1, memory_order_relaxed);
	}
	if (!ret)
		ret = unlink_file(run, lock);
	free(seen);
	return ret;
}

/* --- forget and prune ------------------------------------------------------------- */

static int restic_expire(struct dd_run *run)
{
	struct iotap_workload_dedup_result *r = run->r;
	unsigned int g, i;
	uint32_t lock;
	int ret;

	ret = save_small(run, RS_DIR_LOCKS, LOCK_BYTES, &lock);
	for (g = 0; !ret && g < run->o->expire; g++)
		for (i = 0; !ret && i < run->o->streams; i++) {
			unsigned int slot = i * run->o->generations + g;
			struct dd_cont *tc = &run->cont[run->tree_cont[slot]];
			uint64_t k;

			ret = unlink_file(run, run->snap_rf[slot]);
			for (k = 0; k < run->ntree[slot]; k++) {
				struct dd_fp fp = { run->tree[slot][k].lo, run->tree[slot][k].hi };
				int64_t si = dd_seg_find(run, &fp);

				if (si >= 0 && run->seg[si].refs && !--run->seg[si].refs) {
					run->cont[run->seg[si].cont].live -= run->seg[si].len;
					r->dead_segments++;
					r->dead_bytes += run->seg[si].len;
				}
			}
			/* the forgotten snapshot's tree is garbage for prune */
			tc->live = 0;
			r->expired_images++;
		}
	if (!ret)
		ret = unlink_file(run, lock);
	return ret;
}

/* most unused first (qsort_r: several targets sort at once) */
static int cmp_unused(const void *a, const void *b, void *arg)
{
	const struct dd_run *run = arg;
	const struct dd_cont *x = &run->cont[*(const uint32_t *)a];
	const struct dd_cont *y = &run->cont[*(const uint32_t *)b];
	double fx = (double)(x->size - x->live) / (double)x->size;
	double fy = (double)(y->size - y->live) / (double)y->size;

	return fx < fy ? 1 : fx > fy ? -1 : 0;
}

static int restic_compact(struct dd_run *run)
{
	struct iotap_workload_dedup_result *r = run->r;
	struct dd_stream *s = &run->st[0];
	uint32_t lock, n = run->ncont, id, k, rfi;
	uint8_t *in = NULL, *drop = NULL;
	uint64_t live_blobs = 0, used = 0, unused = 0;
	uint32_t *order = NULL, nord = 0;
	unsigned int g, i;
	int ret;

	in = malloc(run->o->container_bytes + run->cfg.max_seg + DD_MIB);
	drop = calloc(n ? n : 1, 1);
	if (!in || !drop) {
		ret = -ENOMEM;
		goto out;
	}
	ret = save_small(run, RS_DIR_LOCKS, LOCK_BYTES, &lock);
	/* the remaining snapshots and their trees (the index: from the cache) */
	for (g = run->o->expire; !ret && g < run->o->generations; g++)
		for (i = 0; !ret && i < run->o->streams; i++) {
			unsigned int slot = i * run->o->generations + g;

			ret = load(run, run->snap_rf[slot], 0, UINT64_MAX, in, 0, NULL);
			if (!ret)
				ret = load(run, run->cont[run->tree_cont[slot]].rf, 0, UINT64_MAX,
					   in, 0, NULL);
		}
	/*
	 * prune's --max-unused: packs with nothing live go; of the others, the
	 * most unused are repacked until what stays unused is at most the
	 * threshold of what is used
	 */
	order = calloc(n ? n : 1, sizeof(*order));
	if (!order)
		ret = -ENOMEM;
	for (id = 0; !ret && id < n; id++) {
		struct dd_cont *ct = &run->cont[id];

		if (ct->state != CONT_CLOSED)
			continue;
		used += ct->live;
		if (ct->live == ct->size)
			continue;
		if (!ct->live) {
			drop[id] = 1;
			r->containers_removed++;
			r->compact_freed += ct->size;
			continue;
		}
		unused += ct->size - ct->live;
		order[nord++] = id;
	}
	qsort_r(order, nord, sizeof(*order), cmp_unused, run);
	for (k = 0; !ret && k < nord &&
		    (double)unused > run->o->compact_threshold * (double)used; k++) {
		struct dd_cont *ct = &run->cont[order[k]];
		uint32_t j;

		if (wl_stopped()) {
			ret = -EINTR;
			break;
		}
		/* repack: read it, the live blobs into new packs */
		ret = load(run, ct->rf, 0, ct->size, in, 1, NULL);
		r->compact_read += ct->size;
		for (j = 0; !ret && j < ct->nseg; j++) {
			struct dd_seg *sg = &run->seg[ct->segs[j]];

			if (!sg->refs)
				continue;
			if (!s->pack_open)
				ret = pack_start(s);
			if (ret)
				break;
			memcpy(s->pack + s->pfill, in + sg->off, sg->len);
			sg->cont = s->pack_id;
			sg->off = (uint32_t)s->pfill;
			ret = dd_seg_add_to(run, s->pack_id, ct->segs[j]);
			s->pfill += sg->len;
			s->pblobs++;
			r->compact_written += sg->len;
			if (!ret && s->pfill >= run->o->container_bytes)
				ret = pack_flush(s);
		}
		drop[order[k]] = 1;
		unused -= ct->size - ct->live;
		r->containers_rewritten++;
		r->compact_freed += ct->size - ct->live;
		wl_phase_unit(run->c, &run->span, 0, 0);
	}
	free(order);
	if (!ret)
		ret = pack_flush(s);
	/* one new index for everything, then the old index files and packs go */
	for (k = 0; k < run->nseg; k++)
		live_blobs += run->seg[k].refs > 0;
	if (!ret)
		ret = save_small(run, RS_DIR_INDEX, 64 + INDEX_ENTRY * live_blobs, &rfi);
	for (k = 0; !ret && k + 1 < run->nrf; k++)
		if (run->rf[k].dir == RS_DIR_INDEX)
			ret = unlink_file(run, k);
	for (id = 0; !ret && id < n; id++)
		if (drop[id]) {
			ret = unlink_file(run, run->cont[id].rf);
			run->cont[id].state = CONT_GONE;
		}
	if (!ret)
		ret = unlink_file(run, lock);
out:
	free(in);
	free(drop);
	return ret;
}

static void restic_cleanup(struct dd_run *run)
{
	unsigned int i, n = run->o->streams * run->o->generations;
	char name[16];
	uint32_t k;

	if (!run->o->keep) {
		for (k = 0; k < run->nrf; k++) {
			char tmp[40];

			if (run->rf[k].gone || run->rdir_fd[run->rf[k].dir] < 0)
				continue;
			wl_unlink_old(run->c, run->rdir_fd[run->rf[k].dir],
				      run->rdir_ino[run->rf[k].dir], run->rf[k].name);
			snprintf(tmp, sizeof(tmp), "%s-tmp", run->rf[k].name);
			wl_unlink_old(run->c, run->rdir_fd[run->rf[k].dir],
				      run->rdir_ino[run->rf[k].dir], tmp);
		}
		for (i = 0; i < RS_DIRS; i++) {
			if (run->rdir_fd[i] < 0)
				continue;
			dir_name(name, sizeof(name), (uint16_t)i);
			wl_rmdir(run->c, i < 256 ? run->data_fd : run->top_fd,
				 i < 256 ? run->data_ino : run->top_ino, name, run->rdir_ino[i]);
		}
	}
	for (i = 0; i < RS_DIRS; i++)
		if (run->rdir_fd[i] >= 0) {
			close(run->rdir_fd[i]);
			run->rdir_fd[i] = -1;
		}
	for (i = 0; run->tree && i < n; i++)
		free(run->tree[i]);
	free(run->tree);
	free(run->ntree);
	free(run->snap_rf);
	free(run->tree_cont);
	free(run->rf);
	run->tree = NULL;
	run->rf = NULL;
}

/* The plan's figures: the index in RAM, the maps are the trees in the data. */
static void restic_plan(struct iotap_workload_dedup_plan *p, const struct dd_cfg *cfg)
{
	p->cache_entries = p->unique_segments + 8;
	p->index_bytes = p->unique_segments * 180;
	p->need_data = (uint64_t)((double)p->stored_bytes * cfg->rand_per_512 / 512.0) +
		       p->map_bytes + p->index_bytes + 2 * cfg->o->container_bytes;
	p->need_meta = 0;
}

/* posix_fadvise DONTNEED on every pack (not traced): restores read from the array. */
static void restic_drop(struct dd_run *run)
{
	uint32_t id;

	for (id = 0; id < run->ncont; id++) {
		int fd;

		if (run->cont[id].state != CONT_CLOSED)
			continue;
		fd = openat(run->rdir_fd[run->rf[run->cont[id].rf].dir],
			    run->rf[run->cont[id].rf].name, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
			close(fd);
		}
	}
}

/* restic 0.14: content-defined chunks of 512 KiB + Exp(1.5 MiB) (dedup_data.c) */
const struct dd_flavor dd_restic = {
	.name = "restic",
	.cdc = 1,
	.cdc_mean = 3 * DD_MIB / 2,
	.plan = restic_plan,
	.init = restic_init,
	.backup = dd_cdc_backup,
	.restore = restic_restore,
	.expire = restic_expire,
	.compact = restic_compact,
	.drop = restic_drop,
	.cleanup = restic_cleanup,
	.begin = restic_begin,
	.store = restic_store,
	.end = restic_end,
};
