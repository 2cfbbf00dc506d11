// SPDX-License-Identifier: MIT
/*
 * dedup_borg.c - the dedup model's borg flavor (--flavor borg)
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
 * image is one stream (its files cache: one entry per 16 MiB): with 64 MiB
 * files that stores about 1.4% more per change (BENCHMARKS.md).
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

#define BG_MAGIC	8		/* "BORG_SEG" */
#define BG_PUT_HDR	41		/* crc 4, size 4, tag 1, id 32 */
#define BG_COMMIT	9
#define BG_OBJ_EXTRA	(2 + 41)	/* compressor id; encryption type, MAC, IV */
#define BG_PER_DIR	1000		/* segments_per_dir */
#define BG_WBUF		8192		/* Python's buffered writer */
#define BG_RBUF		4096		/* ... and reader (st_blksize) */
#define BG_FILE		(16 * DD_MIB)	/* the model's files: the image in 16 MiB files */
#define BG_FILE_ENTRY	187		/* files cache bytes per file */
#define BG_ITEM		120		/* items metadata per file */
#define BG_ITEM_CHUNK	48		/* ... and per chunk reference */
#define BG_ARCHIVE	500		/* archive metadata object */
#define BG_MANIFEST	540		/* manifest object (+ 40 per archive) */
#define BG_CONFIG	572		/* cache config */
#define BG_REPO_CONFIG	700
#define BG_INTEGRITY	190
#define BG_LOCK_ROSTER	47

enum { BG_DEL_KEPT, BG_DEL_GONE };

/* A DELETE entry: in segment @seg, for a chunk whose PUT was in segment @put. */
struct bg_del {
	uint32_t seg, put;
	int state;
};

struct dd_borg {
	struct wl_file wf;		/* the segment being written (fd -1: none) */
	uint32_t wseg;			/* its number */
	uint64_t woff;
	uint8_t *wbuf;			/* buffered writer */
	uint32_t wn;
	uint32_t next;			/* next segment number */
	uint32_t txn;			/* the last commit's segment */
	uint64_t manifest;		/* segment holding the manifest PUT (UINT64_MAX: none) */
	uint32_t archives;
	int dir_fd[256];		/* data/K */
	uint64_t dir_ino[256];
	int cache_fd;			/* the cache directory */
	uint64_t cache_ino;
	int cache_own;			/* META/NAME made by us */
	int cache_sub;			/* DIR/NAME/cache made by us */
	uint64_t files_bytes;
	struct bg_del *del;
	uint32_t ndel, delcap;
	uint32_t *arch_seg;		/* per generation: its items/archive objects' segment */
	uint64_t *arch_meta;		/* ... and their bytes */
	uint8_t *obj;			/* one entry */
	uint8_t *sink;			/* restore reads */
	struct dd_entry **tree;		/* per generation: its chunk list */
	uint64_t *ntree;
};

static uint64_t idx_buckets(uint64_t entries)
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
static int put_file(struct dd_run *run, int dfd, uint64_t dino, const char *name, uint64_t len,
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
static int64_t get_file(struct dd_run *run, int dfd, uint64_t dino, const char *name,
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
static int lock_take(struct dd_run *run, int dfd, uint64_t dino, uint64_t *written)
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
		ret = put_file(run, dfd, dino, "lock.roster", BG_LOCK_ROSTER, 0, written);
	return ret;
}

static int lock_release(struct dd_run *run, int dfd, uint64_t dino)
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

static int seg_name(char *buf, size_t len, uint32_t seg)
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
	seg_name(name, sizeof(name), id);
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
static int put(struct dd_run *run, uint8_t *ent, uint64_t len, int want_new, uint32_t *seg,
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

static int del_tag(struct dd_run *run, uint32_t put_seg, int want_new, uint64_t *written)
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
static void seg_dead(struct dd_run *run, uint32_t seg, uint64_t len)
{
	struct dd_cont *ct = &run->cont[seg];

	ct->live = ct->live > len ? ct->live - len : 0;
}

/* The manifest: DELETE of the old one and the new PUT, each in a new segment. */
static int manifest(struct dd_run *run, uint64_t *written)
{
	struct dd_borg *b = run->borg;
	uint64_t len = BG_MANIFEST + 40ull * b->archives;
	uint8_t *ent = calloc(1, BG_PUT_HDR + len);
	uint32_t seg, off;
	int ret = 0;

	if (!ent)
		return -ENOMEM;
	if (b->manifest != UINT64_MAX) {
		seg_dead(run, (uint32_t)b->manifest, BG_PUT_HDR + len);
		ret = del_tag(run, (uint32_t)b->manifest, 1, written);
	}
	if (!ret)
		ret = put(run, ent, len, 1, &seg, &off, written);
	if (!ret) {
		run->cont[seg].live += BG_PUT_HDR + len;
		b->manifest = seg;
	}
	free(ent);
	return ret;
}

/* write_index: hints, index, integrity as .tmp + fsync; renames; the last ones unlinked. */
static int write_index(struct dd_run *run, uint64_t *written)
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
	ret = put_file(run, run->top_fd, run->top_ino, t, 20 + 6 * segs, 1, written);
	snprintf(t, sizeof(t), "%s.tmp", n2);
	if (!ret)
		ret = put_file(run, run->top_fd, run->top_ino, t,
			       18 + 40 * idx_buckets(live + 2 + b->archives), 1, written);
	snprintf(t, sizeof(t), "%s.tmp", n3);
	if (!ret)
		ret = put_file(run, run->top_fd, run->top_ino, t, BG_INTEGRITY, 1, written);
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
static int drop_old_index(struct dd_run *run, uint32_t old)
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
static int commit_tag(struct dd_run *run, uint64_t *written)
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
static int commit(struct dd_run *run, uint32_t old, uint64_t *written)
{
	int ret = commit_tag(run, written);

	if (!ret)
		ret = write_index(run, written);
	if (!ret && old != UINT32_MAX)
		ret = drop_old_index(run, old);
	return ret;
}

/* Repository.open: config, the last commit segment, integrity, hints, index. */
static int repo_open(struct dd_run *run, int with_hints, struct dd_stream *cnt)
{
	struct dd_borg *b = run->borg;
	char n[32];
	int64_t got;
	int dfd;
	uint64_t dino;

	got = get_file(run, run->top_fd, run->top_ino, "config", 0, NULL);
	if (got >= 0 && b->txn != UINT32_MAX && !seg_dir(run, b->txn, &dfd, &dino)) {
		seg_name(n, sizeof(n), b->txn);
		got = get_file(run, dfd, dino, n, 0, cnt);
	}
	if (got >= 0 && b->txn != UINT32_MAX) {
		snprintf(n, sizeof(n), "integrity.%u", b->txn);
		got = get_file(run, run->top_fd, run->top_ino, n, 0, NULL);
	}
	if (got >= 0 && b->txn != UINT32_MAX && with_hints) {
		snprintf(n, sizeof(n), "hints.%u", b->txn);
		got = get_file(run, run->top_fd, run->top_ino, n, 0, NULL);
	}
	if (got >= 0 && b->txn != UINT32_MAX) {
		snprintf(n, sizeof(n), "index.%u", b->txn);
		got = get_file(run, run->top_fd, run->top_ino, n, 1, NULL);
	}
	return got < 0 ? (int)got : 0;
}

/* The cache: config, chunks, files read; begin_txn copies them into txn.active. */
static int cache_begin(struct dd_run *run, uint64_t *written)
{
	static const char *const names[] = { "config", "chunks", "files" };
	struct dd_borg *b = run->borg;
	struct iotap_workload_ctx *c = run->c;
	uint64_t tino;
	unsigned int i;
	int ret, tfd;

	ret = lock_take(run, b->cache_fd, b->cache_ino, written);
	for (i = 0; i < 3 && !ret; i++) {
		int64_t got = get_file(run, b->cache_fd, b->cache_ino, names[i],
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
		got = get_file(run, b->cache_fd, b->cache_ino, names[i], 0, NULL);
		if (got < 0)
			ret = (int)got;
		else
			ret = put_file(run, tfd, tino, names[i], (uint64_t)st.st_size, 0, written);
	}
	close(tfd);
	if (!ret)
		ret = wl_rename(c, b->cache_fd, b->cache_ino, "txn.tmp", b->cache_fd, b->cache_ino,
				"txn.active");
	return ret;
}

/* Cache.commit: files and chunks rewritten, config saved, txn.active removed. */
static int cache_commit(struct dd_run *run, uint64_t *written)
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
	ret = put_file(run, b->cache_fd, b->cache_ino, "files", b->files_bytes, 0, written);
	if (!ret)
		ret = put_file(run, b->cache_fd, b->cache_ino, "chunks",
			       18 + 44 * idx_buckets(live + 2 * b->archives), 0, written);
	if (!ret)
		ret = put_file(run, b->cache_fd, b->cache_ino, "config", BG_CONFIG, 2, written);
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
		ret = lock_release(run, b->cache_fd, b->cache_ino);
	return ret;
}

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
	ret = put_file(run, run->top_fd, run->top_ino, "config", BG_REPO_CONFIG, 2, NULL);
	if (!ret)
		ret = put_file(run, run->top_fd, run->top_ino, "README", 73, 0, NULL);
	if (!ret)
		ret = put_file(run, run->top_fd, run->top_ino, "nonce", 16, 2, NULL);
	if (!ret)
		ret = manifest(run, NULL);
	if (!ret)
		ret = commit(run, UINT32_MAX, NULL);
	/* the client cache as the first borg create makes it */
	if (!ret)
		ret = put_file(run, b->cache_fd, b->cache_ino, "config", BG_CONFIG, 0, NULL);
	if (!ret)
		ret = put_file(run, b->cache_fd, b->cache_ino, "chunks", 18 + 44 * idx_buckets(0), 0,
			       NULL);
	if (!ret)
		ret = put_file(run, b->cache_fd, b->cache_ino, "files", 0, 0, NULL);
	return ret;
}

/* --- borg create --------------------------------------------------------------------- */

/* The first encryption of a command reserves nonces: nonce read, saved as a SaveFile. */
static int nonce_reserve(struct dd_run *run, uint64_t *written)
{
	int64_t got = get_file(run, run->top_fd, run->top_ino, "nonce", 0, NULL);

	if (got < 0)
		return (int)got;
	return put_file(run, run->top_fd, run->top_ino, "nonce", 16, 2, written);
}

/* PUT of a metadata object of @len bytes (items, archive): into the open segment. */
static int put_meta(struct dd_run *run, uint64_t len, uint32_t *seg, uint64_t *written)
{
	uint8_t *ent = calloc(1, BG_PUT_HDR + len);
	uint32_t off;
	int ret;

	if (!ent)
		return -ENOMEM;
	ret = put(run, ent, len, 0, seg, &off, written);
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
	ret = lock_take(run, run->top_fd, run->top_ino, &s->written);
	if (!ret)
		ret = repo_open(run, 1, NULL);
	if (!ret)
		ret = cache_begin(run, &s->written);
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
	ret = put(run, b->obj, n + BG_OBJ_EXTRA, 0, &seg, &off, &s->written);
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
		ret = manifest(run, &s->written);
	}
	if (!ret)
		ret = commit(run, old, &s->written);
	if (!ret)
		ret = cache_commit(run, &s->written);
	if (!ret)
		ret = lock_release(run, run->top_fd, run->top_ino);
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
		seg_name(name, sizeof(name), seg);
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
	ret = put_file(run, run->top_fd, run->top_ino, "lock.roster", BG_LOCK_ROSTER, 0, NULL);
	if (!ret)
		ret = repo_open(run, 0, s);
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

	ret = lock_take(run, run->top_fd, run->top_ino, &w);
	if (!ret)
		ret = repo_open(run, 1, NULL);
	if (!ret)
		ret = cache_begin(run, &w);
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
			seg_dead(run, run->seg[si].cont, run->seg[si].len);
			r->dead_segments++;
			r->dead_bytes += run->seg[si].len;
			ret = del_tag(run, run->seg[si].cont, 0, &w);
		}
		/* the items and the archive object go too */
		if (!ret) {
			seg_dead(run, b->arch_seg[g], b->arch_meta[g]);
			ret = del_tag(run, b->arch_seg[g], 0, &w);
		}
		if (!ret)
			ret = del_tag(run, b->arch_seg[g], 0, &w);
		b->archives--;
		r->expired_images++;
	}
	rd_close(run, &rd);
	/* the new manifest is encrypted: a nonce reservation first */
	if (!ret)
		ret = nonce_reserve(run, &w);
	if (!ret)
		ret = manifest(run, &w);
	if (!ret)
		ret = commit(run, old, &w);
	if (!ret)
		ret = cache_commit(run, &w);
	if (!ret)
		ret = lock_release(run, run->top_fd, run->top_ino);
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

	ret = lock_take(run, run->top_fd, run->top_ino, &w);
	if (!ret)
		ret = repo_open(run, 1, NULL);
	if (!ret)
		ret = manifest(run, &w);
	if (!ret)
		ret = commit_tag(run, &w);
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
			ret = put(run, b->obj, sg->len - BG_PUT_HDR, 0, &seg, &off, &w);
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
					ret = del_tag(run, b->del[k].put, 0, &w);
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
		ret = commit_tag(run, &w);
	for (id = 0; !ret && id < n; id++) {
		char name[16];

		if (!unused[id])
			continue;
		seg_name(name, sizeof(name), id);
		ret = wl_unlink(run->c, b->dir_fd[id / BG_PER_DIR], b->dir_ino[id / BG_PER_DIR],
				name, 0);
		run->cont[id].state = CONT_GONE;
		r->containers_removed++;
	}
	if (!ret)
		ret = write_index(run, &w);
	if (!ret && old != UINT32_MAX)
		ret = drop_old_index(run, old);
	if (!ret)
		ret = lock_release(run, run->top_fd, run->top_ino);
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
		seg_name(name, sizeof(name), id);
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
