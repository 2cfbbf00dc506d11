// SPDX-License-Identifier: MIT
/*
 * bonnie.c - bonnie++ as a table of phases
 *
 * Two versions are modelled, each by a table of steps read from bonnie++'s
 * own source (bonnie++.cpp TestFileOps/TestDirOps, bon_io.cpp, bon_file.cpp):
 *
 *   2.00a (Debian 12's bonnie++, the default) and 1.03 (--bonnie-1.03, what
 *   the seed posts ran).
 *
 * Every step names the test (a column of bonnie++'s tables), the phase
 * marker, what each unit does and how the file is opened and closed; the
 * engine (engine.c) runs the data steps, and the two kinds bonnie++ alone
 * has are in files of their own: the competing seekers (bonnie_seek.c) and
 * the create/stat/delete file tests (bonnie_files.c). Timing follows
 * bonnie++: each file is opened before its timer starts and closed (2.x:
 * fsync + close) before it stops.
 *
 * Differences that are deliberate, each for a reason:
 *   - seekers are threads, as in bonnie++ 1.9x+, for 1.03 too (it forked
 *     processes): threads share the context's trace recorder and CPU
 *     account. Tickets still come through a pipe, as in both versions (see
 *     "the seekers"). 1.03's forked children each got a copy of the
 *     parent's rand() state and so seek the same chunk sequence: each 1.03
 *     seeker gets a copy of the context's generator to keep that.
 *   - bonnie++ sleeps 3 s (1.03: 5 s) after starting its seekers; the
 *     seekers here report ready once their files are open, which is what
 *     the sleep waits for.
 *   - sync(2) at the end of 2.x's create and delete phases is syncfs(2) on
 *     the target, so that concurrent targets do not sync each other.
 *   - no chdir(2): every name is opened relative to a directory fd, so
 *     targets can run concurrently in one process.
 *
 * One oddity is kept because it moves 2.00a's seek figures: each seeker
 * thread's CFileOp destructor unlinks the file as the thread ends, while
 * slower seekers still have it open, and the last of those then frees all
 * its blocks inside its close(2), which is inside the timed seek test
 * (0.6 s for a 2 GiB file on ext4 here). 1.03's forked children never ran
 * that destructor: the parent removes the file after the test.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bonnie_i.h"

/* The file tests, the same in both versions: the rows after the data tests. */
#define BON_FILE_STEPS \
	{ IOTAP_BONNIE_SEQ_CREATE, "seq_create", BON_CREATE, 0, 0, BON_OPEN_NONE, 0 }, \
	{ IOTAP_BONNIE_SEQ_STAT, "seq_stat", BON_STAT, 0, 0, BON_OPEN_NONE, 0 }, \
	{ IOTAP_BONNIE_SEQ_DELETE, "seq_delete", BON_DELETE, 0, 0, BON_OPEN_NONE, 0 }, \
	{ IOTAP_BONNIE_RAND_CREATE, "rand_create", BON_CREATE, 0, 0, BON_OPEN_NONE, BON_RANDOM }, \
	{ IOTAP_BONNIE_RAND_STAT, "rand_stat", BON_STAT, 0, 0, BON_OPEN_NONE, BON_RANDOM }, \
	{ IOTAP_BONNIE_RAND_DELETE, "rand_delete", BON_DELETE, 0, 0, BON_OPEN_NONE, BON_RANDOM }

/*
 * bonnie++ 2.00a: per-char I/O is one write(2)/read(2) of one byte each,
 * over 3 MiB (DefaultByteIO); every close is fsync + close; 5 seekers do
 * 8192 seeks; file names are 10 hex digits plus up to 12 random characters.
 */
static const struct bon_step steps_2x[] = {
	{ IOTAP_BONNIE_PUTC, "putc", BON_DATA, WL_SEQ_WRITE, WL_IO_BYTE, BON_OPEN_CREATE,
	  BON_CHAR | BON_FSYNC },
	{ IOTAP_BONNIE_WRITE, "write", BON_DATA, WL_SEQ_WRITE, WL_IO_BLOCK, BON_OPEN_CREATE,
	  BON_DIRTY | BON_FSYNC },
	{ IOTAP_BONNIE_REWRITE, "rewrite", BON_DATA, WL_REWRITE, WL_IO_BLOCK, BON_OPEN_RW,
	  BON_FSYNC },
	{ IOTAP_BONNIE_GETC, "getc", BON_DATA, WL_SEQ_READ, WL_IO_BYTE, BON_OPEN_RW,
	  BON_CHAR | BON_FSYNC },
	{ IOTAP_BONNIE_READ, "read", BON_DATA, WL_SEQ_READ, WL_IO_BLOCK, BON_OPEN_RW, BON_FSYNC },
	{ IOTAP_BONNIE_SEEKS, "seeks", BON_SEEKS, 0, WL_IO_BLOCK, BON_OPEN_RW, BON_FSYNC },
	BON_FILE_STEPS,
};

/*
 * bonnie++ 1.03: per-char I/O is putc(3)/getc(3) through stdio over the
 * whole file (so the kernel sees st_blksize writes); the file is split in
 * 1 GiB pieces; files are closed without fsync unless -b; 3 seekers do
 * 8192 seeks; names are 7 decimal digits plus up to 12 random characters.
 */
static const struct bon_step steps_103[] = {
	{ IOTAP_BONNIE_PUTC, "putc", BON_DATA, WL_SEQ_WRITE, WL_IO_STDIO, BON_OPEN_STDIO_NEW,
	  BON_CHAR | BON_FSYNC_B },
	{ IOTAP_BONNIE_WRITE, "write", BON_DATA, WL_SEQ_WRITE, WL_IO_BLOCK, BON_OPEN_CREATE,
	  BON_DIRTY | BON_FSYNC_B },
	{ IOTAP_BONNIE_REWRITE, "rewrite", BON_DATA, WL_REWRITE, WL_IO_BLOCK, BON_OPEN_RW,
	  BON_FSYNC_B },
	{ IOTAP_BONNIE_GETC, "getc", BON_DATA, WL_SEQ_READ, WL_IO_STDIO, BON_OPEN_STDIO_RW,
	  BON_CHAR | BON_FSYNC_B },
	{ IOTAP_BONNIE_READ, "read", BON_DATA, WL_SEQ_READ, WL_IO_BLOCK, BON_OPEN_RW, BON_FSYNC_B },
	{ IOTAP_BONNIE_SEEKS, "seeks", BON_SEEKS, 0, WL_IO_BLOCK, BON_OPEN_RW, BON_FSYNC_B },
	BON_FILE_STEPS,
};

static const struct bon_version bonnie_2x = {
	.version = "2.00a",
	.steps = steps_2x,
	.nsteps = sizeof(steps_2x) / sizeof(steps_2x[0]),
	.hex_names = 1,
	.sync_meta = 1,
	.seeker_unlinks = 1,
};

static const struct bon_version bonnie_103 = {
	.version = "1.03",
	.steps = steps_103,
	.nsteps = sizeof(steps_103) / sizeof(steps_103[0]),
	.piece_mib = 1024,
	.char_whole_file = 1,
	.seek_update_by_count = 1,
};

static const char *const test_names[IOTAP_BONNIE_TESTS] = {
	"putc", "write", "rewrite", "getc", "read", "seeks",
	"seq_create", "seq_stat", "seq_delete", "rand_create", "rand_stat", "rand_delete",
};

const char *iotap_workload_bonnie_test_name(unsigned int test)
{
	return test < IOTAP_BONNIE_TESTS ? test_names[test] : "?";
}

void iotap_workload_bonnie_opts_init(struct iotap_workload_bonnie_opts *o, int v103)
{
	memset(o, 0, sizeof(*o));
	o->file_mib = 300;		/* DefaultFileSize; the CLI raises it to 2 x RAM */
	o->chunk = 8192;
	o->char_mib = v103 ? UINT32_MAX : 3;	/* 1.03: the whole file */
	o->seeks = 8192;
	o->seekers = v103 ? 3 : 5;
	o->num_files = 16;
	o->num_dirs = 1;
	o->file_chunk = 8192;
	o->seed = v103 ? 1 : 0;	/* 1.03 never seeds rand(): its sequence is srand(1)'s */
	o->flags = v103 ? IOTAP_BONNIE_103 : 0;
}

/* --- the data steps -------------------------------------------------------- */

static int fs_alloc(struct bon_run *b)
{
	const struct iotap_workload_bonnie_opts *o = b->o;
	uint64_t per_file = b->chunks;
	unsigned int n, k;

	if (b->v->piece_mib)
		per_file = (uint64_t)b->v->piece_mib * MIB / o->chunk;
	n = (unsigned int)((b->chunks + per_file - 1) / per_file);

	b->fs.n = n;
	b->fs.units_per_file = per_file;
	b->fs.f = calloc(n, sizeof(*b->fs.f));
	b->piece = calloc(n, sizeof(*b->piece));
	if (!b->fs.f || !b->piece)
		return -ENOMEM;
	for (k = 0; k < n; k++) {
		b->fs.f[k].fd = -1;
		if (b->v->piece_mib)
			snprintf(b->piece[k], sizeof(b->piece[k]), "%s.%03u", b->base, k);
		else
			snprintf(b->piece[k], sizeof(b->piece[k]), "%s", b->base);
	}
	return 0;
}

/* Open (or create) every piece the way a step asks; files of @fs stay open. */
int bon_fs_open(struct bon_run *b, struct wl_fileset *fs, enum bon_open how)
{
	struct iotap_workload_ctx *c = b->c;
	unsigned int k;
	int ret = 0;

	for (k = 0; k < fs->n && !ret; k++) {
		const char *name = b->piece[k];
		int fl = O_RDWR;

		if (how == BON_OPEN_CREATE || how == BON_OPEN_STDIO_NEW) {
			/* CFileOp::m_open(): unlink, then O_EXCL */
			ret = wl_unlink_old(c, c->dirfd, c->dir_ino, name);
			if (ret)
				break;
			fl |= O_CREAT | (how == BON_OPEN_CREATE ? O_EXCL : O_TRUNC);
			if (how == BON_OPEN_CREATE && (b->o->flags & IOTAP_BONNIE_DIRECT))
				fl |= O_DIRECT;
		}
		/* fopen's "w+" creates with 0666 & ~umask; bonnie++'s open uses 0600 */
		ret = wl_open(c, &fs->f[k], c->dirfd, c->dir_ino, name, fl,
			      how == BON_OPEN_STDIO_NEW ? 0666 : 0600);
		if (!ret && fl & O_CREAT)
			b->file_exists = 1;
		if (!ret && (how == BON_OPEN_STDIO_NEW || how == BON_OPEN_STDIO_RW))
			ret = wl_stdio_open(c, &fs->f[k], how == BON_OPEN_STDIO_NEW ? "w+" : "r+");
	}
	return ret;
}

int bon_step_fsync(const struct bon_run *b, const struct bon_step *st)
{
	return (st->flags & BON_FSYNC) ||
	       ((st->flags & BON_FSYNC_B) && (b->o->flags & IOTAP_BONNIE_SYNC));
}

static int run_data(struct bon_run *b, const struct bon_step *st)
{
	struct wl_data_phase p = {
		.name = st->name,
		.kind = st->data,
		.io = st->io,
		.unit = b->o->chunk,
		.units = (st->flags & BON_CHAR) ? b->char_chunks : b->chunks,
		.buf = b->buf,
		.flags = WL_PF_CLOSE_IN | (bon_step_fsync(b, st) ? WL_PF_FSYNC_IN : 0) |
			 (st->flags & BON_DIRTY ? WL_PF_DIRTY : 0),
	};
	int ret;

	if (st->flags & BON_DIRTY)
		memset(b->buf, 0, b->o->chunk);
	ret = bon_fs_open(b, &b->fs, st->open);
	if (!ret)
		ret = wl_data_run(b->c, &p, &b->fs, &b->r->test[st->test]);
	wl_fileset_close(b->c, &b->fs, 0);
	return ret;
}

/* Remove whatever an interrupted or failed run left (recorded: real operations). */
static void cleanup(struct bon_run *b)
{
	struct iotap_workload_ctx *c = b->c;
	unsigned int k;
	uint32_t i;

	wl_fileset_close(c, &b->fs, 0);
	if (b->file_exists) {
		for (k = 0; k < b->fs.n; k++)
			if (faccessat(c->dirfd, b->piece[k], F_OK, AT_SYMLINK_NOFOLLOW) == 0)
				wl_unlink(c, c->dirfd, c->dir_ino, b->piece[k], 0);
		b->file_exists = 0;
	}
	if (b->names_live && b->topfd >= 0) {
		for (i = 0; i < b->names.n; i++) {
			int dfd = bon_dir_fd(b, b->names.dir[i]);

			if (dfd < 0 || faccessat(dfd, b->names.name[i], F_OK, AT_SYMLINK_NOFOLLOW))
				continue;
			wl_unlink(c, dfd, bon_dir_ino(b, b->names.dir[i]), b->names.name[i],
				  b->names.ino[i]);
		}
		b->names_live = 0;
	}
	bon_remove_dirs(b);
}

int iotap_workload_bonnie_run(struct iotap_workload_ctx *c,
			      const struct iotap_workload_bonnie_opts *o,
			      struct iotap_workload_bonnie_result *r)
{
	const struct bon_version *v = o->flags & IOTAP_BONNIE_103 ? &bonnie_103 : &bonnie_2x;
	struct bon_run b = { .c = c, .o = o, .v = v, .r = r, .topfd = -1 };
	uint32_t d;
	unsigned int i;
	int ret = 0;

	memset(r, 0, sizeof(*r));
	if (c->dirfd < 0)
		return -ENOTDIR;
	if (o->chunk < 256 || o->chunk > MIB || (o->chunk & (o->chunk - 1)) ||
	    o->file_chunk < 256 || o->file_chunk > MIB || (o->file_chunk & (o->file_chunk - 1)) ||
	    o->num_dirs < 1 || o->num_dirs > 99999 || o->min_size < 0 ||
	    o->max_size < o->min_size || (o->file_mib && !o->seekers))
		return -EINVAL;
	rng_init(&b.rng, o->seed);
	snprintf(b.base, sizeof(b.base), "Bonnie.%u", (unsigned int)getpid());
	b.chunks = (uint64_t)o->file_mib * (MIB / o->chunk);
	if (o->char_mib)
		b.char_chunks = v->char_whole_file || o->char_mib >= o->file_mib ? b.chunks :
				(uint64_t)o->char_mib * (MIB / o->chunk);
	b.buf = wl_buf_alloc(o->chunk);
	b.fbuf = wl_buf_alloc(o->file_chunk);
	b.subfd = malloc(o->num_dirs * sizeof(*b.subfd));
	b.sub_ino = calloc(o->num_dirs, sizeof(*b.sub_ino));
	if (!b.buf || !b.fbuf || !b.subfd || !b.sub_ino) {
		ret = -ENOMEM;
		goto out;
	}
	for (d = 0; d < o->num_dirs; d++)
		b.subfd[d] = -1;
	if (o->file_mib) {
		ret = fs_alloc(&b);
		if (ret)
			goto out;
	}
	for (i = 0; i < v->nsteps && !ret; i++) {
		const struct bon_step *st = &v->steps[i];

		if (wl_stopped()) {
			ret = -EINTR;
			break;
		}
		switch (st->kind) {
		case BON_DATA:
			if (!o->file_mib || ((st->flags & BON_CHAR) && !b.char_chunks))
				continue;
			ret = run_data(&b, st);
			break;
		case BON_SEEKS:
			if (!o->file_mib)
				continue;
			ret = bon_run_seeks(&b, st);
			/* the I/O file goes before the file tests (~CFileOp; 2.x: gone already) */
			for (d = 0; !ret && d < b.fs.n; d++)
				ret = wl_unlink_old(c, c->dirfd, c->dir_ino, b.piece[d]);
			if (!ret)
				b.file_exists = 0;
			break;
		case BON_CREATE:
			if (o->num_files)
				ret = bon_run_create(&b, st);
			break;
		case BON_STAT:
			if (o->num_files)
				ret = bon_run_stat(&b, st);
			break;
		case BON_DELETE:
			if (o->num_files)
				ret = bon_run_delete(&b, st);
			break;
		}
	}
out:
	cleanup(&b);
	wl_outcome(ret, 0, &r->partial, &r->failed);
	free(b.names.buf);
	free(b.names.name);
	free(b.names.dir);
	free(b.names.ino);
	free(b.fs.f);
	free(b.piece);
	free(b.buf);
	free(b.fbuf);
	free(b.subfd);
	free(b.sub_ino);
	return ret;
}
