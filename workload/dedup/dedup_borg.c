// SPDX-License-Identifier: MIT
/*
 * dedup_borg.c - the dedup model's borg flavor (--flavor borg)
 *
 * The commands of BorgBackup 1.2 (Debian 12: 1.2.4) over its repository
 * and client cache (dedup_borg_repo.c: their files, and where this was
 * read):
 *
 * borg create: the locks; config, the last commit segment, integrity,
 * hints and the whole index read; the cache's chunk index and files cache
 * read and copied into txn.active (begin_txn); the nonce reserved (nonce
 * tmp file, fdatasync, rename); each new chunk (compressed by lz4: what the
 * compressor keeps, plus 2 bytes of compression and 41 of encryption
 * header) PUT; the items and the archive's metadata PUT; the manifest;
 * commit; cache commit (files and chunks rewritten in place, the cache
 * config saved by tmp + fdatasync + rename, txn.active removed). Look-ups
 * are answered by the chunk index in RAM.
 *
 * borg extract: each chunk of the archive read back in order through a
 * 4 KiB buffered reader (a 4 KiB read where the entry starts, then the rest
 * in one read of whole 4 KiB blocks and a 4 KiB read for the tail), after
 * the index, the manifest and the archive metadata.
 *
 * borg prune (--expire: the oldest archives): their metadata read, every
 * chunk whose last reference goes gets a DELETE entry, then a nonce
 * reservation, the manifest, commit, index, cache commit. borg compact: the manifest and a commit,
 * then every segment whose freeable part (everything but the live PUTs) is
 * over --compact-threshold (10%) read front to back and its live PUTs (and
 * the DELETEs whose chunk's PUT is still in a kept segment) appended to
 * the current segment, a final commit, the old segments unlinked, the
 * index written.
 *
 * Not modelled: borg's reads of the source tree, the files cache's effect
 * on what is read there, the lock roster's JSON contents, the
 * chunks.archive.d directory, checkpoints (every 30 minutes), compaction
 * moving the items and archive objects of a compacted data segment (a
 * few bytes per chunk); borg's chunker restarts at each file, the model's
 * image is one stream (its files cache: one entry per 16 MiB), which
 * stores a little more per change (BENCHMARKS.md, the model vs real borg).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "dedup_i.h"

/* --- borg init ------------------------------------------------------------------------- */

static int borg_init(struct dd_run *run)
{
	struct iotap_workload_ctx *c = run->c;
	struct dd_borg *b;
	unsigned int i;
	struct stat st;
	int ret, mfd;

	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	run->borg = b;
	b->wf.fd = -1;
	b->cache_fd = -1;
	b->txn = UINT32_MAX;
	b->manifest = UINT64_MAX;
	for (i = 0; i < 256; i++)
		b->dir_fd[i] = -1;
	b->wbuf = malloc(BG_WBUF);
	b->obj = malloc(BG_PUT_HDR + BG_OBJ_EXTRA + run->cfg.max_seg);
	b->sink = malloc(run->cfg.max_seg + 2 * BG_PUT_HDR + 2 * BG_RBUF);
	b->tree = calloc(run->o->generations, sizeof(*b->tree));
	b->ntree = calloc(run->o->generations, sizeof(*b->ntree));
	b->arch_seg = calloc(run->o->generations, sizeof(*b->arch_seg));
	b->arch_meta = calloc(run->o->generations, sizeof(*b->arch_meta));
	if (!b->wbuf || !b->obj || !b->sink || !b->tree || !b->ntree || !b->arch_seg ||
	    !b->arch_meta)
		return -ENOMEM;
	b->files_bytes = BG_FILE_ENTRY * ((run->o->image_bytes + BG_FILE - 1) / BG_FILE);
	/* the cache directory: META/NAME, or DIR/NAME/cache */
	if (run->o->meta_dir) {
		mfd = open(run->o->meta_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (mfd < 0 || fstat(mfd, &st)) {
			ret = wl_fail(c, -errno, "open directory '%s'", run->o->meta_dir);
			if (mfd >= 0)
				close(mfd);
			return ret;
		}
		ret = wl_mkdir(c, mfd, st.st_ino, run->o->name, 0700, &b->cache_ino);
		if (!ret) {
			b->cache_own = 1;
			b->cache_fd = openat(mfd, run->o->name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		}
		close(mfd);
	} else {
		ret = wl_mkdir(c, run->top_fd, run->top_ino, "cache", 0700, &b->cache_ino);
		if (!ret) {
			b->cache_sub = 1;
			b->cache_fd = openat(run->top_fd, "cache", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		}
	}
	if (ret)
		return ret;
	if (b->cache_fd < 0)
		return wl_fail(c, -errno, "open the cache directory");
	/* borg init: config, README, nonce; a manifest and the first commit */
	ret = bg_put_file(run, run->top_fd, run->top_ino, "config", BG_REPO_CONFIG, 2, NULL);
	if (!ret)
		ret = bg_put_file(run, run->top_fd, run->top_ino, "README", 73, 0, NULL);
	if (!ret)
		ret = bg_put_file(run, run->top_fd, run->top_ino, "nonce", 16, 2, NULL);
	if (!ret)
		ret = bg_manifest(run, NULL);
	if (!ret)
		ret = bg_commit(run, UINT32_MAX, NULL);
	/* the client cache as the first borg create makes it */
	if (!ret)
		ret = bg_put_file(run, b->cache_fd, b->cache_ino, "config", BG_CONFIG, 0, NULL);
	if (!ret)
		ret = bg_put_file(run, b->cache_fd, b->cache_ino, "chunks",
				  18 + 44 * bg_idx_buckets(0), 0, NULL);
	if (!ret)
		ret = bg_put_file(run, b->cache_fd, b->cache_ino, "files", 0, 0, NULL);
	return ret;
}

/* --- borg create --------------------------------------------------------------------- */

/* The first encryption of a command reserves nonces: nonce read, saved as a SaveFile. */
static int nonce_reserve(struct dd_run *run, uint64_t *written)
{
	int64_t got = bg_get_file(run, run->top_fd, run->top_ino, "nonce", 0, NULL);

	if (got < 0)
		return (int)got;
	return bg_put_file(run, run->top_fd, run->top_ino, "nonce", 16, 2, written);
}

/* PUT of a metadata object of @len bytes (items, archive): into the open segment. */
static int put_meta(struct dd_run *run, uint64_t len, uint32_t *seg, uint64_t *written)
{
	uint8_t *ent = calloc(1, BG_PUT_HDR + len);
	uint32_t off;
	int ret;

	if (!ent)
		return -ENOMEM;
	ret = bg_put(run, ent, len, 0, seg, &off, written);
	if (!ret)
		run->cont[*seg].live += BG_PUT_HDR + len;
	free(ent);
	return ret;
}

/*
 * borg create, through dd_cdc_backup(): the lock, the repository and the
 * cache opened, nonces reserved; the chunk index is in RAM (the cache's
 * chunks file, read at the start).
 */
static int borg_begin(struct dd_stream *s)
{
	struct dd_run *run = s->run;
	int ret;

	s->txn0 = run->borg->txn;
	ret = bg_lock_take(run, run->top_fd, run->top_ino, &s->written);
	if (!ret)
		ret = bg_repo_open(run, 1, NULL);
	if (!ret)
		ret = bg_cache_begin(run, &s->written);
	if (!ret)
		ret = nonce_reserve(run, &s->written);
	return ret;
}

/* A new chunk: lz4'd and encrypted, PUT into the segment log. */
static int borg_store(struct dd_stream *s, uint64_t k, struct dd_entry *e)
{
	struct dd_run *run = s->run;
	struct dd_borg *b = run->borg;
	struct dd_pos *p = &s->pos;
	uint32_t len = p->len[k], n, seg, off;
	struct dd_seg sg;
	int ret;

	/* lz4 keeps the random part; 2 + 41 bytes of headers; the PUT's 41 */
	n = dd_squeeze(&run->cfg, s->buf, len, b->obj + BG_PUT_HDR + BG_OBJ_EXTRA);
	memset(b->obj + BG_PUT_HDR, 0, BG_OBJ_EXTRA);
	memcpy(b->obj + 9, &p->fp[k], sizeof(p->fp[k]));
	ret = bg_put(run, b->obj, n + BG_OBJ_EXTRA, 0, &seg, &off, &s->written);
	if (ret)
		return ret;
	sg.fp = p->fp[k];
	sg.cont = seg;
	sg.off = off;
	sg.len = BG_PUT_HDR + BG_OBJ_EXTRA + n;
	sg.refs = 1;
	pthread_mutex_lock(&run->lock);
	ret = dd_seg_add(run, &sg);
	pthread_mutex_unlock(&run->lock);
	e->cont = seg;
	e->off = off;
	e->len = sg.len;
	s->stored += len;	/* the ratio counts what was sent, not kept */
	return ret;
}

/* The archive's items and metadata, the manifest, the commit, the cache, the lock. */
static int borg_end(struct dd_stream *s, struct dd_entry *tree, int ret)
{
	struct dd_run *run = s->run;
	struct dd_borg *b = run->borg;
	struct dd_pos *p = &s->pos;
	uint32_t old = s->txn0, mseg;
	uint64_t meta;

	/* the items (metadata stream) and the archive's metadata */
	meta = BG_ITEM * ((run->o->image_bytes + BG_FILE - 1) / BG_FILE) + BG_ITEM_CHUNK * p->n;
	if (!ret)
		ret = put_meta(run, meta, &mseg, &s->written);
	if (!ret)
		ret = put_meta(run, BG_ARCHIVE, &mseg, &s->written);
	if (!ret) {
		b->arch_seg[run->gen] = mseg;
		b->arch_meta[run->gen] = meta + BG_ARCHIVE + 2 * BG_PUT_HDR;
		b->archives++;
		ret = bg_manifest(run, &s->written);
	}
	if (!ret)
		ret = bg_commit(run, old, &s->written);
	if (!ret)
		ret = bg_cache_commit(run, &s->written);
	if (!ret)
		ret = bg_lock_release(run, run->top_fd, run->top_ino);
	b->tree[run->gen] = tree;
	b->ntree[run->gen] = p->n;
	return ret;
}

/* --- borg extract -------------------------------------------------------------------- */

/* Python's BufferedReader (4 KiB) over one segment at a time. */
struct bg_rd {
	struct wl_file f;
	uint32_t seg;
	uint64_t b0, b1;		/* what the buffer holds */
	uint64_t pos;
	uint8_t *seen;			/* segments read (restore: distinct count) */
	uint8_t buf[BG_RBUF];
};

static int rd_seek(struct dd_run *run, struct bg_rd *rd, uint32_t seg, uint64_t off,
		   struct dd_stream *s)
{
	struct dd_borg *b = run->borg;
	char name[16];
	int ret;

	if (rd->f.fd < 0 || rd->seg != seg) {
		if (rd->f.fd >= 0)
			wl_close(run->c, &rd->f);
		rd->f.fd = -1;
		bg_seg_name(name, sizeof(name), seg);
		ret = wl_open(run->c, &rd->f, b->dir_fd[seg / BG_PER_DIR],
			      b->dir_ino[seg / BG_PER_DIR], name, O_RDONLY, 0);
		if (ret) {
			rd->f.fd = -1;
			return ret;
		}
		rd->f.name = "segment";
		rd->seg = seg;
		rd->b0 = rd->b1 = 0;
		if (s && rd->seen && !rd->seen[seg]) {
			rd->seen[seg] = 1;
			s->rconts++;
		}
	}
	/* a seek inside the buffer keeps it */
	if (off < rd->b0 || off > rd->b1)
		rd->b0 = rd->b1 = off;
	rd->pos = off;
	return 0;
}

/*
 * read(@n) into @dst (NULL: dropped): the buffer, then whole 4 KiB blocks
 * directly, then a 4 KiB fill for the tail.
 */
static int rd_read(struct dd_run *run, struct bg_rd *rd, uint64_t n, uint8_t *dst,
		   struct dd_stream *s, uint64_t *rbytes)
{
	struct dd_borg *b = run->borg;

	while (n) {
		uint64_t have = rd->b1 > rd->pos ? rd->b1 - rd->pos : 0, d;
		ssize_t got;

		if (have) {
			d = have < n ? have : n;
			if (dst) {
				memcpy(dst, rd->buf + (rd->pos - rd->b0), d);
				dst += d;
			}
			rd->pos += d;
			n -= d;
			continue;
		}
		d = n & ~(uint64_t)(BG_RBUF - 1);
		if (!dst && d > run->cfg.max_seg)
			d = run->cfg.max_seg & ~(uint64_t)(BG_RBUF - 1);	/* the sink's size */
		if (d) {
			got = wl_pread(run->c, &rd->f, dst ? dst : b->sink, d, rd->pos);
			rd->b0 = rd->b1 = rd->pos + (got > 0 ? (uint64_t)got : 0);
		} else {
			got = wl_pread(run->c, &rd->f, rd->buf, BG_RBUF, rd->pos);
			rd->b0 = rd->pos;
			rd->b1 = rd->pos + (got > 0 ? (uint64_t)got : 0);
		}
		if (got < 0)
			return (int)got;
		if (got == 0)
			return wl_fail(run->c, -ENODATA, "read segment %u: end of file", rd->seg);
		if (s) {
			s->rbytes += (uint64_t)got;
			s->rreads++;
		}
		if (rbytes)
			*rbytes += (uint64_t)got;
		if (d) {
			d = (uint64_t)got < n ? (uint64_t)got : n;
			if (dst)
				dst += d;
			rd->pos += d;
			n -= d;
		}
	}
	return 0;
}

/* One entry into @dst (or dropped): header and id, then the data, as LoggedIO._read. */
static int rd_entry(struct dd_run *run, struct bg_rd *rd, uint32_t seg, uint64_t off,
		    uint64_t len, uint8_t *dst, struct dd_stream *s, uint64_t *rbytes)
{
	int ret = rd_seek(run, rd, seg, off, s);
	uint64_t h = len < BG_PUT_HDR ? len : BG_PUT_HDR;

	if (!ret)
		ret = rd_read(run, rd, h, dst, s, rbytes);
	if (!ret && len > h)
		ret = rd_read(run, rd, len - h, dst ? dst + h : NULL, s, rbytes);
	return ret;
}

static void rd_close(struct dd_run *run, struct bg_rd *rd)
{
	if (rd->f.fd >= 0)
		wl_close(run->c, &rd->f);
	rd->f.fd = -1;
	free(rd->seen);
	rd->seen = NULL;
}

static int borg_restore(struct dd_stream *s)
{
	struct dd_run *run = s->run;
	struct dd_borg *b = run->borg;
	struct dd_entry *t = b->tree[run->gen];
	uint64_t n = b->ntree[run->gen], k;
	struct bg_rd rd = { .f = { .fd = -1 } };
	int ret;

	rd.seen = calloc(run->ncont ? run->ncont : 1, 1);
	if (!rd.seen)
		return -ENOMEM;
	/* a shared lock: the roster only */
	ret = bg_put_file(run, run->top_fd, run->top_ino, "lock.roster", BG_LOCK_ROSTER, 0, NULL);
	if (!ret)
		ret = bg_repo_open(run, 0, s);
	/* the last commit segment, read by the open: a file of data/ read */
	if (!ret && b->txn != UINT32_MAX && !rd.seen[b->txn]) {
		rd.seen[b->txn] = 1;
		s->rconts++;
	}
	/* the manifest, the archive and its items */
	if (!ret)
		ret = rd_entry(run, &rd, (uint32_t)b->manifest, BG_MAGIC,
			       BG_PUT_HDR + BG_MANIFEST + 40ull * b->archives, NULL, s, NULL);
	if (!ret)
		ret = rd_entry(run, &rd, b->arch_seg[run->gen],
			       run->cont[b->arch_seg[run->gen]].size - BG_PUT_HDR - BG_ARCHIVE,
			       BG_PUT_HDR + BG_ARCHIVE, NULL, s, NULL);
	for (k = 0; !ret && k < n; k++) {
		if (wl_stopped()) {
			ret = -EINTR;
			break;
		}
		ret = rd_entry(run, &rd, t[k].cont, t[k].off, t[k].len, NULL, s, NULL);
		atomic_fetch_add_explicit(&run->c->ph_done, 1, memory_order_relaxed);
	}
	rd_close(run, &rd);
	if (!ret)
		ret = wl_unlink(run->c, run->top_fd, run->top_ino, "lock.roster", 0);
	return ret;
}

/* --- borg prune ---------------------------------------------------------------------- */

static int borg_expire(struct dd_run *run)
{
	struct iotap_workload_dedup_result *r = run->r;
	struct dd_borg *b = run->borg;
	struct bg_rd rd = { .f = { .fd = -1 } };
	uint32_t old = b->txn;
	uint64_t w = 0;
	unsigned int g;
	int ret;

	ret = bg_lock_take(run, run->top_fd, run->top_ino, &w);
	if (!ret)
		ret = bg_repo_open(run, 1, NULL);
	if (!ret)
		ret = bg_cache_begin(run, &w);
	for (g = 0; !ret && g < run->o->expire; g++) {
		uint64_t k;

		/* the archive's metadata read, then every chunk's reference dropped */
		ret = rd_entry(run, &rd, b->arch_seg[g],
			       run->cont[b->arch_seg[g]].size - b->arch_meta[g], b->arch_meta[g],
			       NULL, NULL, NULL);
		for (k = 0; !ret && k < b->ntree[g]; k++) {
			struct dd_fp fp = { b->tree[g][k].lo, b->tree[g][k].hi };
			int64_t si = dd_seg_find(run, &fp);

			if (si < 0 || !run->seg[si].refs || --run->seg[si].refs)
				continue;
			bg_seg_dead(run, run->seg[si].cont, run->seg[si].len);
			r->dead_segments++;
			r->dead_bytes += run->seg[si].len;
			ret = bg_del_tag(run, run->seg[si].cont, 0, &w);
		}
		/* the items and the archive object go too */
		if (!ret) {
			bg_seg_dead(run, b->arch_seg[g], b->arch_meta[g]);
			ret = bg_del_tag(run, b->arch_seg[g], 0, &w);
		}
		if (!ret)
			ret = bg_del_tag(run, b->arch_seg[g], 0, &w);
		b->archives--;
		r->expired_images++;
	}
	rd_close(run, &rd);
	/* the new manifest is encrypted: a nonce reservation first */
	if (!ret)
		ret = nonce_reserve(run, &w);
	if (!ret)
		ret = bg_manifest(run, &w);
	if (!ret)
		ret = bg_commit(run, old, &w);
	if (!ret)
		ret = bg_cache_commit(run, &w);
	if (!ret)
		ret = bg_lock_release(run, run->top_fd, run->top_ino);
	return ret;
}

/* --- borg compact -------------------------------------------------------------------- */

static int borg_compact(struct dd_run *run)
{
	struct iotap_workload_dedup_result *r = run->r;
	struct dd_borg *b = run->borg;
	struct bg_rd rd = { .f = { .fd = -1 } };
	uint32_t old = b->txn, n, id, j, k;
	uint8_t *unused = NULL;
	uint64_t w = 0;
	int ret;

	ret = bg_lock_take(run, run->top_fd, run->top_ino, &w);
	if (!ret)
		ret = bg_repo_open(run, 1, NULL);
	if (!ret)
		ret = bg_manifest(run, &w);
	if (!ret)
		ret = bg_commit_tag(run, &w);
	n = run->ncont;
	unused = calloc(n ? n : 1, 1);
	if (!unused && !ret)
		ret = -ENOMEM;
	for (id = 0; !ret && id < n; id++) {
		struct dd_cont *ct = &run->cont[id];
		uint64_t freeable, pos = BG_MAGIC;

		if (ct->state != CONT_CLOSED || ct->size <= BG_MAGIC)
			continue;
		freeable = ct->size - BG_MAGIC - (ct->live < ct->size - BG_MAGIC ? ct->live :
						  ct->size - BG_MAGIC);
		if (!((double)freeable / (double)ct->size > run->o->compact_threshold))
			continue;
		if (wl_stopped()) {
			ret = -EINTR;
			break;
		}
		/* iter_objects: the whole segment, entry by entry; live PUTs copied */
		ret = rd_seek(run, &rd, id, 0, NULL);
		if (!ret)
			ret = rd_read(run, &rd, BG_MAGIC, NULL, NULL, &r->compact_read);
		for (j = 0; !ret && j < ct->nseg; j++) {
			struct dd_seg *sg = &run->seg[ct->segs[j]];
			uint32_t seg, off;

			if (sg->cont != id)
				continue;	/* moved away already */
			ret = rd_entry(run, &rd, id, sg->off, sg->len, b->obj, NULL,
				       &r->compact_read);
			pos = sg->off + sg->len;
			if (ret || !sg->refs)
				continue;
			ret = bg_put(run, b->obj, sg->len - BG_PUT_HDR, 0, &seg, &off, &w);
			if (ret)
				break;
			sg->cont = seg;
			sg->off = off;
			ret = dd_seg_add_to(run, seg, ct->segs[j]);
			r->compact_written += sg->len;
		}
		/* the rest: DELETEs, the metadata, commits */
		if (!ret && ct->size > pos)
			ret = rd_entry(run, &rd, id, pos, ct->size - pos, NULL, NULL,
				       &r->compact_read);
		/* a DELETE stays while its chunk's PUT is in a segment that stays */
		for (k = 0; !ret && k < b->ndel; k++)
			if (b->del[k].seg == id && b->del[k].state == BG_DEL_KEPT) {
				b->del[k].state = BG_DEL_GONE;
				if (b->del[k].put != id && !unused[b->del[k].put] &&
				    run->cont[b->del[k].put].state == CONT_CLOSED)
					ret = bg_del_tag(run, b->del[k].put, 0, &w);
			}
		unused[id] = 1;
		ct->live = 0;
		r->compact_freed += freeable;
		if (ct->nseg)
			r->containers_rewritten++;
		wl_phase_unit(run->c, &run->span, 0, 0);
	}
	rd_close(run, &rd);
	/* complete_xfer: the final commit, then the old segments go */
	if (!ret)
		ret = bg_commit_tag(run, &w);
	for (id = 0; !ret && id < n; id++) {
		char name[16];

		if (!unused[id])
			continue;
		bg_seg_name(name, sizeof(name), id);
		ret = wl_unlink(run->c, b->dir_fd[id / BG_PER_DIR], b->dir_ino[id / BG_PER_DIR],
				name, 0);
		run->cont[id].state = CONT_GONE;
		r->containers_removed++;
	}
	if (!ret)
		ret = bg_write_index(run, &w);
	if (!ret && old != UINT32_MAX)
		ret = bg_drop_old_index(run, old);
	if (!ret)
		ret = bg_lock_release(run, run->top_fd, run->top_ino);
	free(unused);
	return ret;
}

/* --- page cache and cleanup ------------------------------------------------------- */

static void borg_drop(struct dd_run *run)
{
	struct dd_borg *b = run->borg;
	char name[16];
	uint32_t id;

	for (id = 0; b && id < run->ncont; id++) {
		int fd;

		if (run->cont[id].state != CONT_CLOSED || b->dir_fd[id / BG_PER_DIR] < 0)
			continue;
		bg_seg_name(name, sizeof(name), id);
		fd = openat(b->dir_fd[id / BG_PER_DIR], name, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
			close(fd);
		}
	}
}

/*
 * Remove everything in @dfd, traced (unlink, rmdir), depth first, whatever
 * a stopped command left (locks, txn.active, .tmp files); @keep: a
 * subdirectory emptied but kept (its owner removes it).
 */
static void empty_dir(struct dd_run *run, int dfd, uint64_t dino, const char *keep)
{
	struct iotap_workload_ctx *c = run->c;
	char **names = NULL;
	size_t n = 0, cap = 0, i;
	struct dirent *de;
	DIR *d;
	int fd = dup(dfd);

	if (fd < 0)
		return;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	rewinddir(d);
	/* the names first: the directory changes under a readdir otherwise */
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (n == cap) {
			char **nn = realloc(names, (cap = cap ? 2 * cap : 64) * sizeof(*nn));

			if (!nn)
				break;
			names = nn;
		}
		names[n] = strdup(de->d_name);
		if (names[n])
			n++;
	}
	closedir(d);
	for (i = 0; i < n; i++) {
		struct stat st;

		if (fstatat(dfd, names[i], &st, AT_SYMLINK_NOFOLLOW))
			goto next;
		if (S_ISDIR(st.st_mode)) {
			int sub = openat(dfd, names[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);

			if (sub >= 0) {
				empty_dir(run, sub, (uint64_t)st.st_ino, NULL);
				close(sub);
			}
			if (!keep || strcmp(names[i], keep))
				wl_rmdir(c, dfd, dino, names[i], (uint64_t)st.st_ino);
		} else {
			wl_unlink_old(c, dfd, dino, names[i]);
		}
next:
		free(names[i]);
	}
	free(names);
}

static void borg_cleanup(struct dd_run *run)
{
	struct dd_borg *b = run->borg;
	struct iotap_workload_ctx *c = run->c;
	unsigned int i, g;

	if (!b)
		return;
	if (b->wf.fd >= 0)
		wl_close(c, &b->wf);
	if (!run->o->keep) {
		/* the repository (data/ itself is dedup.c's) and the cache, whatever they hold */
		if (run->top_fd >= 0)
			empty_dir(run, run->top_fd, run->top_ino, "data");
		if (b->cache_own && b->cache_fd >= 0) {
			int mfd = open(run->o->meta_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			struct stat st;

			empty_dir(run, b->cache_fd, b->cache_ino, NULL);
			if (mfd >= 0 && !fstat(mfd, &st))
				wl_rmdir(c, mfd, st.st_ino, run->o->name, b->cache_ino);
			if (mfd >= 0)
				close(mfd);
		}
	}
	for (i = 0; i < 256; i++)
		if (b->dir_fd[i] >= 0)
			close(b->dir_fd[i]);
	if (b->cache_fd >= 0)
		close(b->cache_fd);
	for (g = 0; b->tree && g < run->o->generations; g++)
		free(b->tree[g]);
	free(b->tree);
	free(b->ntree);
	free(b->arch_seg);
	free(b->arch_meta);
	free(b->del);
	free(b->wbuf);
	free(b->obj);
	free(b->sink);
	free(b);
	run->borg = NULL;
}

/* The plan's figures: the chunk index in RAM; compaction copies before it unlinks. */
static void borg_plan(struct iotap_workload_dedup_plan *p, const struct dd_cfg *cfg)
{
	p->cache_entries = p->unique_segments + 8;
	p->index_bytes = 18 + 40 * (p->unique_segments * 2 + 1031);
	p->need_data = 2 * (uint64_t)((double)p->stored_bytes * cfg->rand_per_512 / 512.0) +
		       2 * p->map_bytes + 2 * p->index_bytes + 16 * DD_MIB;
	p->need_meta = 2 * (44 * (p->unique_segments * 2 + 1031) + DD_MIB);
}

/* borg 1.2: buzhash chunks of 512 KiB + Exp(2 MiB), lz4, a log of segments (dedup_data.c) */
const struct dd_flavor dd_borg = {
	.name = "borg",
	.cdc = 1,
	.cdc_mean = 2 * DD_MIB,
	.plan = borg_plan,
	.init = borg_init,
	.backup = dd_cdc_backup,
	.restore = borg_restore,
	.expire = borg_expire,
	.compact = borg_compact,
	.drop = borg_drop,
	.cleanup = borg_cleanup,
	.begin = borg_begin,
	.store = borg_store,
	.end = borg_end,
};
