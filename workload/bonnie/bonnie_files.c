// SPDX-License-Identifier: MIT
/*
 * bonnie_files.c - bonnie++'s file tests: create, stat and delete
 * num_files x 1024 files, in name order or random order, in one or
 * num_dirs directories
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bonnie_i.h"

#define RAND_EXTRA_LEN	12		/* bonnie.h: up to 12 random characters per name */

static const char rand_chars[] =
	"abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";

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

int bon_dir_fd(const struct bon_run *b, uint32_t d)
{
	return b->o->num_dirs > 1 ? b->subfd[d] : b->topfd;
}

uint64_t bon_dir_ino(const struct bon_run *b, uint32_t d)
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
int bon_remove_dirs(struct bon_run *b)
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
	int dfd = bon_dir_fd(b, nm->dir[i]);
	struct wl_file f;
	int32_t done;
	int ret;

	ret = wl_open(c, &f, dfd, bon_dir_ino(b, nm->dir[i]), nm->name[i],
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
			ret = wl_fsync_dir(c, dfd, bon_dir_ino(b, nm->dir[i]));
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

int bon_run_create(struct bon_run *b, const struct bon_step *st)
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

/* What bon_run_stat() and bon_run_delete() do to one file of directory @d. */
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

		ret = wl_opendir(c, &dir, bon_dir_fd(b, d), ".");
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
	return stat_one(b, bon_dir_fd(b, d), name);
}

int bon_run_stat(struct bon_run *b, const struct bon_step *st)
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
	int ret = wl_unlink(b->c, bon_dir_fd(b, d), bon_dir_ino(b, d), name, ino);

	if (!ret && (b->o->flags & IOTAP_BONNIE_SYNC))
		ret = wl_fsync_dir(b->c, bon_dir_fd(b, d), bon_dir_ino(b, d));
	return ret;
}

int bon_run_delete(struct bon_run *b, const struct bon_step *st)
{
	struct iotap_workload_ctx *c = b->c;
	uint32_t count = 0;
	struct wl_span s;
	int ret;

	ret = for_each_file(b, st, &s, delete_file, &count);
	if (!ret) {
		b->names_live = 0;
		ret = bon_remove_dirs(b);
	}
	if (!ret && count != b->names.n)
		ret = wl_fail(c, -ENOENT, "delete: expected %u files, found %u", b->names.n, count);
	if (!ret && b->v->sync_meta && syncfs(c->dirfd))
		ret = wl_fail(c, -errno, "delete: syncfs");
	wl_phase_end(c, &s, &b->r->test[st->test], ret != 0);
	return ret;
}
