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
 * has are below: the competing seekers and the create/stat/delete file
 * tests. Timing follows bonnie++: each file is opened before its timer
 * starts and closed (2.x: fsync + close) before it stops.
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
#include <inttypes.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>

#include "workload_i.h"

#define MIB		(1ull << 20)
#define UPDATE_SEEK	10		/* bonnie.h: one seek in ten rewrites its chunk */
#define RAND_EXTRA_LEN	12		/* bonnie.h: up to 12 random characters per name */

static const char rand_chars[] =
	"abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";

enum bon_kind {
	BON_DATA,		/* a wl_data_run() phase */
	BON_SEEKS,		/* competing seekers */
	BON_CREATE,		/* create num*1024 files */
	BON_STAT,		/* stat (and read) them */
	BON_DELETE,		/* unlink them */
};

/* How a step opens its file(s). */
enum bon_open {
	BON_OPEN_NONE,
	BON_OPEN_CREATE,	/* unlink, O_RDWR|O_CREAT|O_EXCL (+O_DIRECT with -D) */
	BON_OPEN_RW,		/* O_RDWR */
	BON_OPEN_STDIO_NEW,	/* unlink, fopen(name, "w+") */
	BON_OPEN_STDIO_RW,	/* fopen(name, "r+") */
};

/* Step flags. */
#define BON_CHAR	(1u << 0)	/* per-char test: skipped by -f */
#define BON_DIRTY	(1u << 1)	/* change a byte of the buffer per chunk */
#define BON_RANDOM	(1u << 2)	/* file tests: random names / random order */
#define BON_FSYNC	(1u << 3)	/* close = fsync + close, always (2.x CFileOp::Close) */
#define BON_FSYNC_B	(1u << 4)	/* fsync before close only with -b (1.03) */

struct bon_step {
	enum iotap_bonnie_test test;	/* column */
	const char *name;		/* phase marker */
	enum bon_kind kind;
	enum wl_kind data;		/* BON_DATA: per-unit action */
	enum wl_io io;
	enum bon_open open;
	unsigned int flags;		/* BON_* */
};

/* What else differs between the versions. */
struct bon_version {
	const char *version;		/* "Version" in the tables */
	const struct bon_step *steps;
	unsigned int nsteps;
	unsigned int piece_mib;		/* 1.03 splits the file into 1 GiB pieces; 0: one file */
	int char_whole_file;		/* per-char tests cover the whole file (1.03) */
	int seek_update_by_count;	/* 1.03: each seeker rewrites its 1st, 11th... seek;
					 * 2.x: tickets divisible by ten are rewrites */
	int seeker_unlinks;		/* 2.x: a seeker that ends unlinks the file */
	int hex_names;			/* 2.x: "%010x" names; 1.03: "%07d" */
	int sync_meta;			/* 2.x: sync() ends create and delete phases */
};

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
	{ IOTAP_BONNIE_SEQ_CREATE, "seq_create", BON_CREATE, 0, 0, BON_OPEN_NONE, 0 },
	{ IOTAP_BONNIE_SEQ_STAT, "seq_stat", BON_STAT, 0, 0, BON_OPEN_NONE, 0 },
	{ IOTAP_BONNIE_SEQ_DELETE, "seq_delete", BON_DELETE, 0, 0, BON_OPEN_NONE, 0 },
	{ IOTAP_BONNIE_RAND_CREATE, "rand_create", BON_CREATE, 0, 0, BON_OPEN_NONE, BON_RANDOM },
	{ IOTAP_BONNIE_RAND_STAT, "rand_stat", BON_STAT, 0, 0, BON_OPEN_NONE, BON_RANDOM },
	{ IOTAP_BONNIE_RAND_DELETE, "rand_delete", BON_DELETE, 0, 0, BON_OPEN_NONE, BON_RANDOM },
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
	{ IOTAP_BONNIE_SEQ_CREATE, "seq_create", BON_CREATE, 0, 0, BON_OPEN_NONE, 0 },
	{ IOTAP_BONNIE_SEQ_STAT, "seq_stat", BON_STAT, 0, 0, BON_OPEN_NONE, 0 },
	{ IOTAP_BONNIE_SEQ_DELETE, "seq_delete", BON_DELETE, 0, 0, BON_OPEN_NONE, 0 },
	{ IOTAP_BONNIE_RAND_CREATE, "rand_create", BON_CREATE, 0, 0, BON_OPEN_NONE, BON_RANDOM },
	{ IOTAP_BONNIE_RAND_STAT, "rand_stat", BON_STAT, 0, 0, BON_OPEN_NONE, BON_RANDOM },
	{ IOTAP_BONNIE_RAND_DELETE, "rand_delete", BON_DELETE, 0, 0, BON_OPEN_NONE, BON_RANDOM },
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

/* --- one run's state ------------------------------------------------------ */

struct bon_names {
	uint32_t n;
	char **name;			/* bare names */
	uint32_t *dir;			/* directory index of each */
	uint64_t *ino;			/* st_ino once created (0: unknown) */
	char *buf;
};

struct bon_run {
	struct iotap_workload_ctx *c;
	const struct iotap_workload_bonnie_opts *o;
	const struct bon_version *v;
	struct iotap_workload_bonnie_result *r;
	struct rng rng;			/* bonnie++'s Rand, reseeded every run */
	char base[64];			/* "Bonnie.PID" */
	/* file I/O tests */
	uint64_t chunks;		/* file size in chunks */
	uint64_t char_chunks;		/* per-char size in chunks */
	struct wl_fileset fs;
	char (*piece)[80];		/* piece names */
	void *buf;
	int file_exists;
	/* file tests */
	int topfd;			/* Bonnie.PID directory, or -1 */
	uint64_t top_ino;
	int *subfd;			/* %05d directories (num_dirs > 1) */
	uint64_t *sub_ino;
	struct bon_names names;
	int names_live;			/* files of @names may exist */
	char *fbuf;			/* file_chunk bytes */
};

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
static int fs_open(struct bon_run *b, struct wl_fileset *fs, enum bon_open how)
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

static int step_fsync(const struct bon_run *b, const struct bon_step *st)
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
		.flags = WL_PF_CLOSE_IN | (step_fsync(b, st) ? WL_PF_FSYNC_IN : 0) |
			 (st->flags & BON_DIRTY ? WL_PF_DIRTY : 0),
	};
	int ret;

	if (st->flags & BON_DIRTY)
		memset(b->buf, 0, b->o->chunk);
	ret = fs_open(b, &b->fs, st->open);
	if (!ret)
		ret = wl_data_run(b->c, &p, &b->fs, &b->r->test[st->test]);
	wl_fileset_close(b->c, &b->fs, 0);
	return ret;
}

/* --- the seekers ------------------------------------------------------------ */

/*
 * bonnie++ hands out seek tickets through a pipe its seekers compete to
 * read: 2.x writes Seeks int rand() values (negative: rewrite) and one
 * INT_MIN per seeker; 1.03 writes Seeks bytes of 1 and a 0 per seeker,
 * and each child draws its chunk from its own copy of rand(). The parent
 * writes them all at once; the read(2) per ticket is part of what a cached
 * seek costs, so it is kept (it is not a filesystem op: not traced).
 */
#define END_SEEK_2X	INT32_MIN

struct bon_seek {
	struct bon_run *b;
	const struct bon_step *st;
	void *tickets;			/* what goes down the pipe */
	size_t tickets_len;		/* bytes */
	int pipe[2];
	atomic_int failed;		/* a seeker failed or was interrupted */
	atomic_int unlinked;		/* 2.x: a seeker removed the file */
	struct wl_span span;
	struct {
		uint64_t seeks, bytes, lat_max;
	} *per;				/* per seeker */
};

static void seek_ready(struct wl_threads *t)
{
	struct bon_seek *sk = t->arg;

	wl_phase_begin(sk->b->c, &sk->span, sk->st->name, sk->b->o->seeks, sk->b->o->chunk);
}

/* Owner, once the seekers are released: all tickets in one write, as bonnie++. */
static void seek_go(struct wl_threads *t)
{
	struct bon_seek *sk = t->arg;
	const char *p = sk->tickets;
	size_t left = sk->tickets_len;

	/* with no seeker running, a full pipe would never drain */
	while (left && t->started) {
		ssize_t n = write(sk->pipe[1], p, left);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		p += n;
		left -= (size_t)n;
	}
	/* seekers that find no more tickets see end of file and stop */
	close(sk->pipe[1]);
	sk->pipe[1] = -1;
}

/* The next ticket: 1 with one, 0 at the end. */
static int take_ticket(struct bon_seek *sk, int32_t *ticket)
{
	size_t size = sk->b->v->seek_update_by_count ? 1 : sizeof(*ticket);
	char one;
	ssize_t n;

	do {
		n = read(sk->pipe[0], size == 1 ? (void *)&one : (void *)ticket, size);
	} while (n < 0 && errno == EINTR);
	if (n != (ssize_t)size)
		return 0;
	if (size == 1)
		return one != 0;
	return *ticket != END_SEEK_2X;
}

static int seeker(struct wl_threads *t, unsigned int i)
{
	struct bon_seek *sk = t->arg;
	struct bon_run *b = sk->b;
	struct iotap_workload_ctx *c = b->c;
	const struct iotap_workload_bonnie_opts *o = b->o;
	size_t chunk = o->chunk;
	struct wl_fileset fs = { .n = b->fs.n, .units_per_file = b->fs.units_per_file };
	struct rng rng;
	uint64_t count = 0;
	int32_t ticket;
	char *buf;
	int ret;

	fs.f = calloc(fs.n, sizeof(*fs.f));
	buf = wl_buf_alloc(chunk);
	if (!fs.f || !buf) {
		wl_threads_ready(t);
		free(fs.f);
		free(buf);
		return -ENOMEM;
	}
	rng_copy(&rng, &b->rng);	/* 1.03: what fork() gave each child */
	ret = fs_open(b, &fs, BON_OPEN_RW);
	wl_threads_ready(t);
	while (take_ticket(sk, &ticket)) {
		uint64_t where, t0;
		struct wl_file *f;
		int update;

		/* after an error or Ctrl-C, drain the pipe so the parent's write ends */
		if (ret)
			continue;
		if (wl_stopped()) {
			ret = -EINTR;
			continue;
		}
		if (b->v->seek_update_by_count) {
			update = count % UPDATE_SEEK == 0;
			where = (uint64_t)rng_rand(&rng) % b->chunks;
		} else {
			update = ticket < 0;
			where = (uint64_t)abs(ticket) % b->chunks;
		}
		count++;
		t0 = wl_now();
		f = &fs.f[where / fs.units_per_file];
		ret = wl_seek(c, f, (where % fs.units_per_file) * chunk);
		if (!ret)
			ret = wl_read_full(c, f, buf, chunk);
		if (!ret && update) {
			/* touch a byte: 2.x the chunk's own index, 1.03 a random one */
			if (b->v->seek_update_by_count)
				buf[(size_t)rng_rand(&rng) % chunk]--;
			else
				buf[where % chunk]--;
			ret = wl_seek(c, f, (where % fs.units_per_file) * chunk);
			if (!ret)
				ret = wl_write_full(c, f, buf, chunk);
			if (!ret && (o->flags & IOTAP_BONNIE_SYNC))
				ret = wl_fsync(c, f, 0);
		}
		if (ret)
			continue;
		t0 = wl_now() - t0;
		sk->per[i].seeks++;
		sk->per[i].bytes += update ? 2 * chunk : chunk;
		if (t0 > sk->per[i].lat_max)
			sk->per[i].lat_max = t0;
		atomic_fetch_add_explicit(&c->ph_done, 1, memory_order_relaxed);
	}
	/* CFileOp::action(): Close() (2.x: fsync + close), then the end time */
	if (wl_fileset_close(c, &fs, step_fsync(b, sk->st)) && !ret)
		ret = -EIO;
	if (ret)
		atomic_store(&sk->failed, 1);
	wl_threads_done(t);
	/* 2.x: ~CFileOp() of this thread's copy, while others may still seek */
	if (b->v->seeker_unlinks && !atomic_exchange(&sk->unlinked, 1)) {
		unsigned int k;

		for (k = 0; k < fs.n; k++)
			wl_unlink_old(c, c->dirfd, c->dir_ino, b->piece[k]);
	}
	free(fs.f);
	free(buf);
	return ret;
}

/* Owner, once every seeker has closed its files: the test ends there. */
static void seek_done(struct wl_threads *t)
{
	struct bon_seek *sk = t->arg;
	unsigned int i;

	for (i = 0; i < t->n; i++) {
		sk->span.units += sk->per[i].seeks;
		sk->span.bytes += sk->per[i].bytes;
		if (sk->per[i].lat_max > sk->span.lat_max)
			sk->span.lat_max = sk->per[i].lat_max;
	}
	wl_phase_end(sk->b->c, &sk->span, &sk->b->r->test[sk->st->test],
		     atomic_load(&sk->failed));
}

/* The pipe's contents (CFileOp::seek_test): the parent draws every 2.x ticket. */
static int make_tickets(struct bon_seek *sk)
{
	struct bon_run *b = sk->b;
	uint32_t seeks = b->o->seeks, n = seeks + b->o->seekers, i;
	int32_t *t32;
	char *t8;

	if (b->v->seek_update_by_count) {
		t8 = malloc(n);
		if (!t8)
			return -ENOMEM;
		memset(t8, 1, seeks);
		memset(t8 + seeks, 0, b->o->seekers);
		sk->tickets = t8;
		sk->tickets_len = n;
		return 0;
	}
	t32 = malloc((size_t)n * sizeof(*t32));
	if (!t32)
		return -ENOMEM;
	for (i = 0; i < seeks; i++) {
		int32_t v = rng_rand(&b->rng);

		t32[i] = v % UPDATE_SEEK == 0 ? -v : v;
	}
	for (; i < n; i++)
		t32[i] = END_SEEK_2X;
	sk->tickets = t32;
	sk->tickets_len = (size_t)n * sizeof(*t32);
	return 0;
}

static int run_seeks(struct bon_run *b, const struct bon_step *st)
{
	const struct iotap_workload_bonnie_opts *o = b->o;
	struct bon_seek sk = { .b = b, .st = st, .pipe = { -1, -1 } };
	struct wl_threads t = {
		.n = o->seekers, .fn = seeker, .arg = &sk, .on_ready = seek_ready,
		.on_go = seek_go, .on_done = seek_done,
	};
	int ret;

	atomic_init(&sk.failed, 0);
	atomic_init(&sk.unlinked, 0);
	sk.per = calloc(o->seekers, sizeof(*sk.per));
	if (!sk.per)
		return -ENOMEM;
	ret = make_tickets(&sk);
	if (ret)
		goto out;
	if (pipe2(sk.pipe, O_CLOEXEC)) {
		ret = wl_fail(b->c, -errno, "pipe for the seek tickets");
		goto out;
	}
	ret = wl_threads_run(b->c, &t);
	/* threads that never started: the phase still needs its END */
	wl_phase_end(b->c, &sk.span, &b->r->test[st->test], 1);
out:
	if (sk.pipe[1] >= 0)
		close(sk.pipe[1]);
	if (sk.pipe[0] >= 0)
		close(sk.pipe[0]);
	free(sk.tickets);
	free(sk.per);
	return ret;
}

/* --- the file tests ----------------------------------------------------------- */

/* bonnie++'s COpenTest::make_names(), names and directory assignment alike. */
static int make_names(struct bon_run *b, int random)
{
	const struct iotap_workload_bonnie_opts *o = b->o;
	struct bon_names *nm = &b->names;
	uint32_t n = o->num_files * 1024, per_dir = n / o->num_dirs, in_dir = 0, dir = 0, i;
	char *p;

	free(nm->buf);
	free(nm->name);
	free(nm->dir);
	free(nm->ino);
	nm->n = n;
	nm->buf = malloc((size_t)n * 24);
	nm->name = malloc((size_t)n * sizeof(*nm->name));
	nm->dir = malloc((size_t)n * sizeof(*nm->dir));
	nm->ino = calloc(n, sizeof(*nm->ino));
	if (!nm->buf || !nm->name || !nm->dir || !nm->ino)
		return -ENOMEM;
	p = nm->buf;
	for (i = 0; i < n; i++) {
		char extra[RAND_EXTRA_LEN + 1];
		int len = rng_rand(&b->rng) % (RAND_EXTRA_LEN + 1), j;

		for (j = 0; j < len; j++)
			extra[j] = rand_chars[rng_rand(&b->rng) % (int)(sizeof(rand_chars) - 1)];
		extra[j] = '\0';
		nm->name[i] = p;
		nm->dir[i] = dir;
		/* bonnie++ moves on after per_dir + 1 names: kept, it decides who goes where */
		if (++in_dir > per_dir) {
			in_dir = 0;
			dir++;
		}
		if (random && b->v->hex_names)
			p += sprintf(p, "%s%010x", extra, i) + 1;
		else if (random)
			p += sprintf(p, "%s%07u", extra, i) + 1;
		else if (b->v->hex_names)
			p += sprintf(p, "%010x%s", i, extra) + 1;
		else
			p += sprintf(p, "%07u%s", i, extra) + 1;
		if (wl_stopped())
			return -EINTR;
	}
	return 0;
}

/* bonnie++'s random_sort(): n swaps with rand() % n. */
static void random_sort(struct bon_run *b)
{
	struct bon_names *nm = &b->names;
	uint32_t i;

	for (i = 0; i < nm->n; i++) {
		uint32_t j = (uint32_t)rng_rand(&b->rng) % nm->n;
		char *tn = nm->name[i];
		uint32_t td = nm->dir[i];
		uint64_t ti = nm->ino[i];

		nm->name[i] = nm->name[j];
		nm->name[j] = tn;
		nm->dir[i] = nm->dir[j];
		nm->dir[j] = td;
		nm->ino[i] = nm->ino[j];
		nm->ino[j] = ti;
	}
}

static int dir_fd(const struct bon_run *b, uint32_t d)
{
	return b->o->num_dirs > 1 ? b->subfd[d] : b->topfd;
}

static uint64_t dir_ino(const struct bon_run *b, uint32_t d)
{
	return b->o->num_dirs > 1 ? b->sub_ino[d] : b->top_ino;
}

/* mkdir Bonnie.PID (and its %05d subdirectories): before the timer, as bonnie++ */
static int make_dirs(struct bon_run *b)
{
	struct iotap_workload_ctx *c = b->c;
	uint32_t d;
	int ret;

	ret = wl_mkdir(c, c->dirfd, c->dir_ino, b->base, 0700, &b->top_ino);
	if (ret)
		return ret;
	b->topfd = openat(c->dirfd, b->base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (b->topfd < 0)
		return wl_fail(c, -errno, "open directory '%s'", b->base);
	for (d = 0; b->o->num_dirs > 1 && d < b->o->num_dirs; d++) {
		char name[16];

		snprintf(name, sizeof(name), "%05u", d);
		ret = wl_mkdir(c, b->topfd, b->top_ino, name, 0700, &b->sub_ino[d]);
		if (ret)
			return ret;
		b->subfd[d] = openat(b->topfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (b->subfd[d] < 0)
			return wl_fail(c, -errno, "open directory '%s'", name);
	}
	return 0;
}

/* rmdir the %05d directories and Bonnie.PID: inside the delete timer */
static int remove_dirs(struct bon_run *b)
{
	struct iotap_workload_ctx *c = b->c;
	uint32_t d;
	int ret = 0;

	for (d = 0; b->subfd && b->o->num_dirs > 1 && d < b->o->num_dirs; d++) {
		char name[16];

		if (b->subfd[d] < 0)
			continue;
		close(b->subfd[d]);
		b->subfd[d] = -1;
		snprintf(name, sizeof(name), "%05u", d);
		if (!ret)
			ret = wl_rmdir(c, b->topfd, b->top_ino, name, b->sub_ino[d]);
	}
	if (b->topfd >= 0) {
		close(b->topfd);
		b->topfd = -1;
		if (!ret)
			ret = wl_rmdir(c, c->dirfd, c->dir_ino, b->base, b->top_ino);
	}
	return ret;
}

/* One file of a create phase (COpenTest::create_a_file). */
static int create_one(struct bon_run *b, uint32_t i, int32_t size)
{
	struct iotap_workload_ctx *c = b->c;
	const struct iotap_workload_bonnie_opts *o = b->o;
	struct bon_names *nm = &b->names;
	int dfd = dir_fd(b, nm->dir[i]);
	struct wl_file f;
	int32_t done;
	int ret;

	ret = wl_open(c, &f, dfd, dir_ino(b, nm->dir[i]), nm->name[i],
		      O_CREAT | O_EXCL | O_WRONLY, 0600);
	if (ret)
		return ret;
	nm->ino[i] = f.ino;
	for (done = 0; !ret && o->max_size && done < size; done += (int32_t)o->file_chunk) {
		size_t n = (size_t)(size - done);

		if (n > o->file_chunk)
			n = o->file_chunk;
		ret = wl_write_full(c, &f, b->fbuf, n);
	}
	if (!ret && (o->flags & IOTAP_BONNIE_SYNC)) {
		ret = wl_fsync(c, &f, 0);
		if (!ret)
			ret = wl_fsync_dir(c, dfd, dir_ino(b, nm->dir[i]));
	}
	if (wl_close(c, &f) && !ret)
		ret = -EIO;
	return ret;
}

/* stat one file and read it if it has data (COpenTest::stat_file). */
static int stat_one(struct bon_run *b, int dfd, const char *name)
{
	struct iotap_workload_ctx *c = b->c;
	struct stat st;
	struct wl_file f;
	off_t done;
	int ret;

	ret = wl_stat(c, dfd, name, &st);
	if (ret || !st.st_size)
		return ret;
	ret = wl_open(c, &f, dfd, 0, name, O_RDONLY, 0);
	if (ret)
		return ret;
	for (done = 0; !ret && done < st.st_size; done += (off_t)b->o->file_chunk) {
		size_t n = (size_t)(st.st_size - done) < b->o->file_chunk ?
			   (size_t)(st.st_size - done) : b->o->file_chunk;
		ssize_t r = wl_read(c, &f, b->fbuf, n);

		ret = r < 0 ? (int)r : (size_t)r != n ? wl_fail(c, -ENODATA, "read '%s'", name) : 0;
	}
	if (wl_close(c, &f) && !ret)
		ret = -EIO;
	return ret;
}

static int run_create(struct bon_run *b, const struct bon_step *st)
{
	const struct iotap_workload_bonnie_opts *o = b->o;
	struct iotap_workload_ctx *c = b->c;
	int32_t range = o->max_size - o->min_size;
	struct wl_span s;
	uint32_t i;
	int ret;

	ret = make_names(b, !!(st->flags & BON_RANDOM));
	if (!ret)
		ret = make_dirs(b);
	if (ret)
		return ret;
	b->names_live = 1;
	wl_phase_begin(c, &s, st->name, b->names.n, 0);
	for (i = 0; i < b->names.n && !ret; i++) {
		uint64_t t0 = wl_now();
		int32_t size = range ? o->min_size + rng_rand(&b->rng) % (range + 1) : o->max_size;

		if (wl_stopped()) {
			ret = -EINTR;
			break;
		}
		ret = create_one(b, i, size);
		if (!ret) {
			wl_phase_unit(c, &s, (uint64_t)(o->max_size ? size : 0), wl_now() - t0);
			wl_progress(c);
		}
	}
	if (!ret && b->v->sync_meta && syncfs(c->dirfd))
		ret = wl_fail(c, -errno, "create: syncfs");
	wl_phase_end(c, &s, &b->r->test[st->test], ret != 0);
	return ret;
}

/* What run_stat() and run_delete() do to one file of directory @d. */
typedef int (*bon_file_fn)(struct bon_run *b, uint32_t d, const char *name, uint64_t ino);

/*
 * Begin @st's phase in @s and apply @fn to every file: for a random test in
 * shuffled b->names order, else directory by directory as readdir returns
 * them, as bonnie++ does; each success is a unit of @s, counted in @count.
 * Return: 0 or -errno.
 */
static int for_each_file(struct bon_run *b, const struct bon_step *st, struct wl_span *s,
			 bon_file_fn fn, uint32_t *count)
{
	struct iotap_workload_ctx *c = b->c;
	struct bon_names *nm = &b->names;
	uint32_t i, d;
	int ret = 0;

	if (st->flags & BON_RANDOM)
		random_sort(b);
	wl_phase_begin(c, s, st->name, nm->n, 0);
	if (st->flags & BON_RANDOM) {
		for (i = 0; i < nm->n && !ret; i++) {
			uint64_t t0 = wl_now();

			if (wl_stopped())
				return -EINTR;
			ret = fn(b, nm->dir[i], nm->name[i], nm->ino[i]);
			if (!ret) {
				(*count)++;
				wl_phase_unit(c, s, 0, wl_now() - t0);
				wl_progress(c);
			}
		}
		return ret;
	}
	for (d = 0; d < b->o->num_dirs && !ret; d++) {
		struct wl_dir dir;

		ret = wl_opendir(c, &dir, dir_fd(b, d), ".");
		while (!ret) {
			uint64_t t0 = wl_now(), ino;
			const char *name;
			int got = wl_readdir(c, &dir, &name, &ino);

			if (got <= 0) {
				ret = got;
				break;
			}
			if (wl_stopped()) {
				ret = -EINTR;
				break;
			}
			if (name[0] == '.')
				continue;
			ret = fn(b, d, name, ino);
			if (!ret) {
				(*count)++;
				wl_phase_unit(c, s, 0, wl_now() - t0);
				wl_progress(c);
			}
		}
		wl_closedir(c, &dir);
	}
	return ret;
}

static int stat_file(struct bon_run *b, uint32_t d, const char *name, uint64_t ino)
{
	(void)ino;
	return stat_one(b, dir_fd(b, d), name);
}

static int run_stat(struct bon_run *b, const struct bon_step *st)
{
	struct iotap_workload_ctx *c = b->c;
	uint32_t count = 0;
	struct wl_span s;
	int ret;

	ret = for_each_file(b, st, &s, stat_file, &count);
	/* every file must have turned up in readdir order */
	if (!ret && !(st->flags & BON_RANDOM) && count != b->names.n)
		ret = wl_fail(c, -ENOENT, "stat: expected %u files, found %u", b->names.n, count);
	wl_phase_end(c, &s, &b->r->test[st->test], ret != 0);
	return ret;
}

static int delete_file(struct bon_run *b, uint32_t d, const char *name, uint64_t ino)
{
	int ret = wl_unlink(b->c, dir_fd(b, d), dir_ino(b, d), name, ino);

	if (!ret && (b->o->flags & IOTAP_BONNIE_SYNC))
		ret = wl_fsync_dir(b->c, dir_fd(b, d), dir_ino(b, d));
	return ret;
}

static int run_delete(struct bon_run *b, const struct bon_step *st)
{
	struct iotap_workload_ctx *c = b->c;
	uint32_t count = 0;
	struct wl_span s;
	int ret;

	ret = for_each_file(b, st, &s, delete_file, &count);
	if (!ret) {
		b->names_live = 0;
		ret = remove_dirs(b);
	}
	if (!ret && count != b->names.n)
		ret = wl_fail(c, -ENOENT, "delete: expected %u files, found %u", b->names.n, count);
	if (!ret && b->v->sync_meta && syncfs(c->dirfd))
		ret = wl_fail(c, -errno, "delete: syncfs");
	wl_phase_end(c, &s, &b->r->test[st->test], ret != 0);
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
			int dfd = dir_fd(b, b->names.dir[i]);

			if (dfd < 0 || faccessat(dfd, b->names.name[i], F_OK, AT_SYMLINK_NOFOLLOW))
				continue;
			wl_unlink(c, dfd, dir_ino(b, b->names.dir[i]), b->names.name[i],
				  b->names.ino[i]);
		}
		b->names_live = 0;
	}
	remove_dirs(b);
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
			ret = run_seeks(&b, st);
			/* the I/O file goes before the file tests (~CFileOp; 2.x: gone already) */
			for (d = 0; !ret && d < b.fs.n; d++)
				ret = wl_unlink_old(c, c->dirfd, c->dir_ino, b.piece[d]);
			if (!ret)
				b.file_exists = 0;
			break;
		case BON_CREATE:
			if (o->num_files)
				ret = run_create(&b, st);
			break;
		case BON_STAT:
			if (o->num_files)
				ret = run_stat(&b, st);
			break;
		case BON_DELETE:
			if (o->num_files)
				ret = run_delete(&b, st);
			break;
		}
	}
out:
	cleanup(&b);
	if (ret == -EINTR)
		r->partial = 1;
	else if (ret)
		r->failed = 1;
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
