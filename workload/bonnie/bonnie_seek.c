// SPDX-License-Identifier: MIT
/*
 * bonnie_seek.c - bonnie++'s seeks test: competing seekers that read
 * (and one time in ten rewrite) random chunks of the test file
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bonnie_i.h"

#define UPDATE_SEEK	10		/* bonnie.h: one seek in ten rewrites its chunk */

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
	ret = bon_fs_open(b, &fs, BON_OPEN_RW);
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
	if (wl_fileset_close(c, &fs, bon_step_fsync(b, sk->st)) && !ret)
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

int bon_run_seeks(struct bon_run *b, const struct bon_step *st)
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
