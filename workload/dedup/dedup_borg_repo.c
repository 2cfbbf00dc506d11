// SPDX-License-Identifier: MIT
/*
 * dedup_borg_repo.c - the borg flavor's repository and client cache
 * (dedup_borg.c runs borg's commands over them)
 *
 * What BorgBackup 1.2 (Debian 12: 1.2.4) does to a local repository and
 * its client cache, read from its source (repository.py LoggedIO, cache.py,
 * platform/base.py SyncFile/SaveFile) and from strace of `borg create`,
 * `extract`, `prune` and `compact`:
 *
 *   DIR/NAME/data/K/N         segments: a log. "BORG_SEG", then entries:
 *                             PUT (crc, size, tag, 32-byte id, data: 41 bytes
 *                             + the object), DELETE (41 bytes), COMMIT (9)
 *   DIR/NAME/index.T, hints.T, integrity.T   written at each commit T
 *   DIR/NAME/config, nonce, lock.exclusive/, lock.roster
 *   META/NAME/                the client cache (BORG_CACHE_DIR; without
 *                             --meta-dir DIR/NAME/cache): config, chunks
 *                             (the chunk index), files, txn.active/
 *
 * Segments are written through a buffered file (8 KiB: a chunk's entry is
 * one write, small entries gather), segment N in data/N/1000; the open
 * segment is closed when it has passed max_segment_size (--container-size,
 * 500 MiB): fdatasync, close, fsync of its directory. The manifest's
 * DELETE and its new PUT each start a segment of their own, and a commit
 * is a COMMIT entry alone in a new segment (17 bytes), so each command
 * that writes ends with three small segments. Then write_index: hints,
 * index (18 + 40 bytes per hash bucket) and integrity written as NAME.tmp
 * with fsync each, integrity renamed, directory fsync, the other two
 * renamed, directory fsync, the last commit's three unlinked.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "dedup_i.h"

uint64_t bg_idx_buckets(uint64_t entries)
{
	/* hashindex: 1031 buckets, grown (about x2) past 93% load */
	uint64_t b = 1031;

	while ((double)entries > 0.93 * (double)b)
		b = b * 2 + 1;
	return b;
}

/* --- directories and small files --------------------------------------------------- */

static int seg_dir(struct dd_run *run, uint32_t seg, int *fd, uint64_t *ino)
{
	struct dd_borg *b = run->borg;
	uint32_t k = seg / BG_PER_DIR;
	char name[16];
	int ret;

	if (k >= 256)
		return wl_fail(run->c, -EFBIG, "more than 256000 borg segments");
	if (b->dir_fd[k] < 0) {
		snprintf(name, sizeof(name), "%u", k);
		ret = wl_mkdir(run->c, run->data_fd, run->data_ino, name, 0700, &b->dir_ino[k]);
		if (ret)
			return ret;
		b->dir_fd[k] = openat(run->data_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (b->dir_fd[k] < 0)
			return wl_fail(run->c, -errno, "open directory '%s'", name);
	}
	*fd = b->dir_fd[k];
	*ino = b->dir_ino[k];
	return 0;
}

/*
 * Write @len zero bytes to @name in @dfd in one write (a small buffered
 * file); @how: 0 plain (O_TRUNC, close), 1 fsync before close (write_index's
 * NAME.tmp), 2 SaveFile (NAME-tmp O_EXCL, fdatasync, close, directory
 * fsync, rename, directory fsync).
 */
int bg_put_file(struct dd_run *run, int dfd, uint64_t dino, const char *name, uint64_t len,
		int how, uint64_t *written)
{
	struct iotap_workload_ctx *c = run->c;
	char tmp[64];
	struct wl_file f;
	uint8_t *buf;
	int ret;

	buf = calloc(1, len ? len : 1);
	if (!buf)
		return -ENOMEM;
	snprintf(tmp, sizeof(tmp), "%s-tmp", name);
	ret = wl_open(c, &f, dfd, dino, how == 2 ? tmp : name,
		      how == 2 ? O_RDWR | O_CREAT | O_EXCL : O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (ret)
		goto out;
	f.name = name;
	ret = wl_write_full(c, &f, buf, len);
	if (!ret && how)
		ret = wl_fsync(c, &f, how == 2);
	if (wl_close(c, &f) && !ret)
		ret = -EIO;
	if (written)
		*written += len;
	if (!ret && how == 2) {
		ret = wl_fsync_dir(c, dfd, dino);
		if (!ret)
			ret = wl_rename(c, dfd, dino, tmp, dfd, dino, name);
		if (!ret)
			ret = wl_fsync_dir(c, dfd, dino);
	}
out:
	free(buf);
	return ret;
}

/*
 * Read @name in @dfd whole, as borg's code does: one read, or with @index
 * (a hashindex) a 4 KiB read of the header, then the buckets from byte 18
 * in one read. With @cnt, the reads count as a restore's. Return: its size
 * or -errno.
 */
int64_t bg_get_file(struct dd_run *run, int dfd, uint64_t dino, const char *name,
		    int index, struct dd_stream *cnt)
{
	struct iotap_workload_ctx *c = run->c;
	struct wl_file f;
	struct stat st;
	uint64_t size = 0;
	uint8_t *buf = NULL;
	ssize_t n = 0;
	int ret;

	ret = wl_open(c, &f, dfd, dino, name, O_RDONLY, 0);
	if (ret)
		return ret;
	f.name = name;
	if (fstat(f.fd, &st)) {
		ret = wl_fail(c, -errno, "fstat '%s'", name);
		goto out;
	}
	size = (uint64_t)st.st_size;
	buf = malloc(size + BG_RBUF);
	if (!buf) {
		ret = -ENOMEM;
		goto out;
	}
	if (index && size > 18) {
		n = wl_pread(c, &f, buf, BG_RBUF, 0);
		if (n >= 0)
			n = wl_pread(c, &f, buf, size - 18, 18);
	} else if (size) {
		n = wl_pread(c, &f, buf, size, 0);
		if (n >= 0 && cnt) {
			cnt->rbytes += (uint64_t)n;
			cnt->rreads++;
		}
	}
	if (n < 0)
		ret = (int)n;
out:
	free(buf);
	if (wl_close(c, &f) && !ret)
		ret = -EIO;
	return ret ? ret : (int64_t)size;
}

/* mkdir lock.exclusive.tmp, its owner file, rename; lock.roster; @dfd the repo or cache. */
int bg_lock_take(struct dd_run *run, int dfd, uint64_t dino, uint64_t *written)
{
	struct iotap_workload_ctx *c = run->c;
	struct wl_file f;
	uint64_t ino;
	int ret, lfd;

	ret = wl_mkdir(c, dfd, dino, "lock.exclusive.tmp", 0700, &ino);
	if (ret)
		return ret;
	lfd = openat(dfd, "lock.exclusive.tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (lfd < 0)
		return wl_fail(c, -errno, "open directory 'lock.exclusive.tmp'");
	ret = wl_open(c, &f, lfd, ino, "iotap@host-0", O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (!ret)
		wl_close(c, &f);
	close(lfd);
	if (!ret)
		ret = wl_rename(c, dfd, dino, "lock.exclusive.tmp", dfd, dino, "lock.exclusive");
	if (!ret)
		ret = bg_put_file(run, dfd, dino, "lock.roster", BG_LOCK_ROSTER, 0, written);
	return ret;
}

int bg_lock_release(struct dd_run *run, int dfd, uint64_t dino)
{
	struct iotap_workload_ctx *c = run->c;
	int ret, lfd;
	struct stat st;

	ret = wl_unlink(c, dfd, dino, "lock.roster", 0);
	lfd = openat(dfd, "lock.exclusive", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (lfd < 0)
		return ret ? ret : wl_fail(c, -errno, "open directory 'lock.exclusive'");
	if (!ret && fstat(lfd, &st))
		ret = wl_fail(c, -errno, "fstat 'lock.exclusive'");
	if (!ret)
		ret = wl_unlink(c, lfd, st.st_ino, "iotap@host-0", 0);
	close(lfd);
	if (!ret)
		ret = wl_rmdir(c, dfd, dino, "lock.exclusive", st.st_ino);
	return ret;
}

/* --- the segment log ------------------------------------------------------------------ */

int bg_seg_name(char *buf, size_t len, uint32_t seg)
{
	return snprintf(buf, len, "%u", seg);
}

/* An entry's header: crc32 (0 here), size (u32 LE, header included), tag. */
static void hdr(uint8_t *ent, uint64_t size, uint8_t tag)
{
	unsigned int i;

	memset(ent, 0, 4);
	for (i = 0; i < 4; i++)
		ent[4 + i] = (uint8_t)(size >> (8 * i));
	ent[8] = tag;
}

static int wflush(struct dd_run *run, uint64_t *written)
{
	struct dd_borg *b = run->borg;
	int ret;

	if (!b->wn)
		return 0;
	ret = wl_write_full(run->c, &b->wf, b->wbuf, b->wn);
	if (written)
		*written += b->wn;
	b->wn = 0;
	return ret;
}

/* Python's BufferedWriter: gather what fits, else flush and write a large piece directly. */
static int wput(struct dd_run *run, const uint8_t *p, uint64_t len, uint64_t *written)
{
	struct dd_borg *b = run->borg;
	int ret;

	b->woff += len;
	if (b->wn + len <= BG_WBUF) {
		memcpy(b->wbuf + b->wn, p, len);
		b->wn += (uint32_t)len;
		return 0;
	}
	ret = wflush(run, written);
	if (ret)
		return ret;
	if (len >= BG_WBUF) {
		if (written)
			*written += len;
		return wl_write_full(run->c, &b->wf, p, len);
	}
	memcpy(b->wbuf, p, len);
	b->wn = (uint32_t)len;
	return 0;
}

/* close_segment: flush, fdatasync, close, fsync of data/K. */
static int seg_close(struct dd_run *run, uint64_t *written)
{
	struct dd_borg *b = run->borg;
	struct dd_cont *ct;
	int ret;

	if (b->wf.fd < 0)
		return 0;
	ret = wflush(run, written);
	if (!ret)
		ret = wl_fsync(run->c, &b->wf, 1);
	if (wl_close(run->c, &b->wf) && !ret)
		ret = -EIO;
	b->wf.fd = -1;
	pthread_mutex_lock(&run->lock);
	ct = &run->cont[b->wseg];
	ct->size = b->woff;
	ct->state = CONT_CLOSED;
	pthread_mutex_unlock(&run->lock);
	if (!ret)
		ret = wl_fsync_dir(run->c, b->dir_fd[b->wseg / BG_PER_DIR],
				   b->dir_ino[b->wseg / BG_PER_DIR]);
	return ret;
}

/* get_write_fd: a new segment when asked, or when the open one has passed the limit. */
static int seg_want(struct dd_run *run, int want_new, uint64_t *written)
{
	struct dd_borg *b = run->borg;
	char name[16];
	uint32_t id;
	uint64_t dino;
	int ret, dfd;

	if (b->wf.fd >= 0 && !want_new && b->woff <= run->o->container_bytes)
		return 0;
	ret = seg_close(run, written);
	if (ret)
		return ret;
	pthread_mutex_lock(&run->lock);
	ret = dd_cont_new(run, &id);
	pthread_mutex_unlock(&run->lock);
	if (ret)
		return ret;
	/* a segment's number is its place in the table */
	b->wseg = id;
	b->next = id + 1;
	ret = seg_dir(run, id, &dfd, &dino);
	if (ret)
		return ret;
	bg_seg_name(name, sizeof(name), id);
	ret = wl_open(run->c, &b->wf, dfd, dino, name, O_WRONLY | O_CREAT | O_EXCL, 0600);
	if (ret) {
		b->wf.fd = -1;
		return ret;
	}
	b->wf.name = "segment";
	b->woff = 0;
	return wput(run, (const uint8_t *)"BORG_SEG", BG_MAGIC, written);
}

/* A PUT of @len object bytes at @obj + BG_PUT_HDR (the header is filled here). */
int bg_put(struct dd_run *run, uint8_t *ent, uint64_t len, int want_new, uint32_t *seg,
	   uint32_t *off, uint64_t *written)
{
	struct dd_borg *b = run->borg;
	int ret = seg_want(run, want_new, written);

	if (ret)
		return ret;
	hdr(ent, len + BG_PUT_HDR, 0);	/* TAG_PUT */
	*seg = b->wseg;
	*off = (uint32_t)b->woff;
	return wput(run, ent, len + BG_PUT_HDR, written);
}

int bg_del_tag(struct dd_run *run, uint32_t put_seg, int want_new, uint64_t *written)
{
	struct dd_borg *b = run->borg;
	uint8_t ent[BG_PUT_HDR] = { 0 };
	int ret = seg_want(run, want_new, written);

	if (ret)
		return ret;
	hdr(ent, BG_PUT_HDR, 1);	/* TAG_DELETE */
	if (b->ndel == b->delcap) {
		uint32_t cap = b->delcap ? 2 * b->delcap : 256;
		struct bg_del *n = realloc(b->del, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		b->del = n;
		b->delcap = cap;
	}
	b->del[b->ndel++] = (struct bg_del){ b->wseg, put_seg, BG_DEL_KEPT };
	return wput(run, ent, BG_PUT_HDR, written);
}

/* A segment's live bytes changed (a PUT superseded or deleted). */
void bg_seg_dead(struct dd_run *run, uint32_t seg, uint64_t len)
{
	struct dd_cont *ct = &run->cont[seg];

	ct->live = ct->live > len ? ct->live - len : 0;
}

/* The manifest: DELETE of the old one and the new PUT, each in a new segment. */
int bg_manifest(struct dd_run *run, uint64_t *written)
{
	struct dd_borg *b = run->borg;
	uint64_t len = BG_MANIFEST + 40ull * b->archives;
	uint8_t *ent = calloc(1, BG_PUT_HDR + len);
	uint32_t seg, off;
	int ret = 0;

	if (!ent)
		return -ENOMEM;
	if (b->manifest != UINT64_MAX) {
		bg_seg_dead(run, (uint32_t)b->manifest, BG_PUT_HDR + len);
		ret = bg_del_tag(run, (uint32_t)b->manifest, 1, written);
	}
	if (!ret)
		ret = bg_put(run, ent, len, 1, &seg, &off, written);
	if (!ret) {
		run->cont[seg].live += BG_PUT_HDR + len;
		b->manifest = seg;
	}
	free(ent);
	return ret;
}

/* write_index: hints, index, integrity as .tmp + fsync; renames; the last ones unlinked. */
int bg_write_index(struct dd_run *run, uint64_t *written)
{
	struct dd_borg *b = run->borg;
	uint64_t live = 0, k, segs = 0;
	char n1[32], n2[32], n3[32], t[40];
	int ret;

	for (k = 0; k < run->nseg; k++)
		live += run->seg[k].refs > 0;
	for (k = 0; k < run->ncont; k++)
		segs += run->cont[k].state == CONT_CLOSED;
	snprintf(n1, sizeof(n1), "hints.%u", b->txn);
	snprintf(n2, sizeof(n2), "index.%u", b->txn);
	snprintf(n3, sizeof(n3), "integrity.%u", b->txn);
	snprintf(t, sizeof(t), "%s.tmp", n1);
	ret = bg_put_file(run, run->top_fd, run->top_ino, t, 20 + 6 * segs, 1, written);
	snprintf(t, sizeof(t), "%s.tmp", n2);
	if (!ret)
		ret = bg_put_file(run, run->top_fd, run->top_ino, t,
				  18 + 40 * bg_idx_buckets(live + 2 + b->archives), 1, written);
	snprintf(t, sizeof(t), "%s.tmp", n3);
	if (!ret)
		ret = bg_put_file(run, run->top_fd, run->top_ino, t, BG_INTEGRITY, 1, written);
	if (!ret)
		ret = wl_rename(run->c, run->top_fd, run->top_ino, t, run->top_fd, run->top_ino, n3);
	if (!ret)
		ret = wl_fsync_dir(run->c, run->top_fd, run->top_ino);
	snprintf(t, sizeof(t), "%s.tmp", n1);
	if (!ret)
		ret = wl_rename(run->c, run->top_fd, run->top_ino, t, run->top_fd, run->top_ino, n1);
	snprintf(t, sizeof(t), "%s.tmp", n2);
	if (!ret)
		ret = wl_rename(run->c, run->top_fd, run->top_ino, t, run->top_fd, run->top_ino, n2);
	if (!ret)
		ret = wl_fsync_dir(run->c, run->top_fd, run->top_ino);
	return ret;
}

/* The old commit's index files go once the new one is in place. */
int bg_drop_old_index(struct dd_run *run, uint32_t old)
{
	static const char *const kinds[] = { "hints", "integrity", "index" };
	char n[32];
	unsigned int i;
	int ret = 0;

	for (i = 0; i < 3 && !ret; i++) {
		snprintf(n, sizeof(n), "%s.%u", kinds[i], old);
		ret = wl_unlink(run->c, run->top_fd, run->top_ino, n, 0);
	}
	return ret;
}

/* write_commit: a COMMIT alone in a new segment, closed; it is the transaction now. */
int bg_commit_tag(struct dd_run *run, uint64_t *written)
{
	struct dd_borg *b = run->borg;
	uint8_t ent[BG_COMMIT] = { 0 };
	int ret = seg_want(run, 1, written);

	if (!ret) {
		hdr(ent, BG_COMMIT, 2);	/* TAG_COMMIT */
		b->txn = b->wseg;
		ret = wput(run, ent, BG_COMMIT, written);
	}
	if (!ret)
		ret = seg_close(run, written);
	return ret;
}

/* commit: write_commit, then write_index and the last commit's files unlinked. */
int bg_commit(struct dd_run *run, uint32_t old, uint64_t *written)
{
	int ret = bg_commit_tag(run, written);

	if (!ret)
		ret = bg_write_index(run, written);
	if (!ret && old != UINT32_MAX)
		ret = bg_drop_old_index(run, old);
	return ret;
}

/* Repository.open: config, the last commit segment, integrity, hints, index. */
int bg_repo_open(struct dd_run *run, int with_hints, struct dd_stream *cnt)
{
	struct dd_borg *b = run->borg;
	char n[32];
	int64_t got;
	int dfd;
	uint64_t dino;

	got = bg_get_file(run, run->top_fd, run->top_ino, "config", 0, NULL);
	if (got >= 0 && b->txn != UINT32_MAX && !seg_dir(run, b->txn, &dfd, &dino)) {
		bg_seg_name(n, sizeof(n), b->txn);
		got = bg_get_file(run, dfd, dino, n, 0, cnt);
	}
	if (got >= 0 && b->txn != UINT32_MAX) {
		snprintf(n, sizeof(n), "integrity.%u", b->txn);
		got = bg_get_file(run, run->top_fd, run->top_ino, n, 0, NULL);
	}
	if (got >= 0 && b->txn != UINT32_MAX && with_hints) {
		snprintf(n, sizeof(n), "hints.%u", b->txn);
		got = bg_get_file(run, run->top_fd, run->top_ino, n, 0, NULL);
	}
	if (got >= 0 && b->txn != UINT32_MAX) {
		snprintf(n, sizeof(n), "index.%u", b->txn);
		got = bg_get_file(run, run->top_fd, run->top_ino, n, 1, NULL);
	}
	return got < 0 ? (int)got : 0;
}

/* The cache: config, chunks, files read; begin_txn copies them into txn.active. */
int bg_cache_begin(struct dd_run *run, uint64_t *written)
{
	static const char *const names[] = { "config", "chunks", "files" };
	struct dd_borg *b = run->borg;
	struct iotap_workload_ctx *c = run->c;
	uint64_t tino;
	unsigned int i;
	int ret, tfd;

	ret = bg_lock_take(run, b->cache_fd, b->cache_ino, written);
	for (i = 0; i < 3 && !ret; i++) {
		int64_t got = bg_get_file(run, b->cache_fd, b->cache_ino, names[i],
					  i == 1, NULL);

		ret = got < 0 ? (int)got : 0;
	}
	if (!ret)
		ret = wl_mkdir(c, b->cache_fd, b->cache_ino, "txn.tmp", 0700, &tino);
	if (ret)
		return ret;
	tfd = openat(b->cache_fd, "txn.tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (tfd < 0)
		return wl_fail(c, -errno, "open directory 'txn.tmp'");
	/* shutil.copy: each file read and written whole */
	for (i = 0; i < 3 && !ret; i++) {
		struct stat st;
		int64_t got;

		if (fstatat(b->cache_fd, names[i], &st, 0)) {
			ret = wl_fail(c, -errno, "stat '%s'", names[i]);
			break;
		}
		got = bg_get_file(run, b->cache_fd, b->cache_ino, names[i], 0, NULL);
		if (got < 0)
			ret = (int)got;
		else
			ret = bg_put_file(run, tfd, tino, names[i], (uint64_t)st.st_size, 0,
					  written);
	}
	close(tfd);
	if (!ret)
		ret = wl_rename(c, b->cache_fd, b->cache_ino, "txn.tmp", b->cache_fd, b->cache_ino,
				"txn.active");
	return ret;
}

/* Cache.commit: files and chunks rewritten, config saved, txn.active removed. */
int bg_cache_commit(struct dd_run *run, uint64_t *written)
{
	static const char *const names[] = { "config", "chunks", "files" };
	struct dd_borg *b = run->borg;
	struct iotap_workload_ctx *c = run->c;
	uint64_t live = 0, k;
	unsigned int i;
	struct stat st;
	int ret, tfd;

	for (k = 0; k < run->nseg; k++)
		live += run->seg[k].refs > 0;
	ret = bg_put_file(run, b->cache_fd, b->cache_ino, "files", b->files_bytes, 0, written);
	if (!ret)
		ret = bg_put_file(run, b->cache_fd, b->cache_ino, "chunks",
				  18 + 44 * bg_idx_buckets(live + 2 * b->archives), 0, written);
	if (!ret)
		ret = bg_put_file(run, b->cache_fd, b->cache_ino, "config", BG_CONFIG, 2, written);
	if (!ret)
		ret = wl_rename(c, b->cache_fd, b->cache_ino, "txn.active", b->cache_fd,
				b->cache_ino, "txn.tmp");
	if (ret)
		return ret;
	tfd = openat(b->cache_fd, "txn.tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (tfd < 0 || fstat(tfd, &st)) {
		ret = wl_fail(c, -errno, "open directory 'txn.tmp'");
		goto out;
	}
	for (i = 0; i < 3 && !ret; i++)
		ret = wl_unlink(c, tfd, st.st_ino, names[i], 0);
	if (!ret)
		ret = wl_rmdir(c, b->cache_fd, b->cache_ino, "txn.tmp", st.st_ino);
out:
	if (tfd >= 0)
		close(tfd);
	if (!ret)
		ret = bg_lock_release(run, b->cache_fd, b->cache_ino);
	return ret;
}
