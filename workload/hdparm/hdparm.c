// SPDX-License-Identifier: MIT
/*
 * hdparm.c - hdparm -T and -t timings on a file or a block device
 *
 * Read from hdparm.c (9.65, as Debian ships it) and checked with strace:
 * both timings read 2 MiB blocks (TIMING_BUF_MB) into a buffer locked in
 * memory and count each as 2 "MB"; after each read hdparm touches one
 * byte in every 512 of the buffer (read_big_block), so the copy is really
 * done, and that touch is part of its timing, hence of ours.
 *
 *   settle    before each timing (prepare_timing_buf): sync(2), then 3 s
 *             for I/O to finish. Without it, back-to-back runs on a loop
 *             device read 2-8x faster than the device (the backing file's
 *             pages are still warm).
 *   -T        (time_cache) read the first 2 MiB once, flush the device's
 *             buffers (flush_buffer_cache: sync, fsync, fdatasync, sync,
 *             BLKFLSBUF, sync) and wait 1 s, then seek to 0 and re-read it
 *             until 2 s have passed; subtract the time the same number of
 *             bare lseek(2)s and clock reads take; flush and wait 1 s again.
 *   -t        (time_device) read sequentially from offset 0 for 3 s or
 *             until the device (here: also the file) ends, then flush
 *             (hdparm's do_flush), so the next run starts cold.
 *
 * One difference, on purpose: -t also flushes before it settles. hdparm
 * relies on the flush that ended the previous run, so after any other
 * reader warmed the device its -t reads the cache; ours reads the disk. A
 * regular file has no buffers of its own for BLKFLSBUF: it gets the
 * page-cache equivalent, fdatasync(2) and posix_fadvise(POSIX_FADV_DONTNEED)
 * over the whole file, so a file's -t reads bypass the page cache as a
 * device's do (hdparm itself would read a file from the page cache). --direct opens with O_DIRECT, as hdparm's
 * --direct, and says "O_DIRECT" in the lines.
 *
 * A directory target gets a file written first (phase "prepare"): --size
 * bytes for -t, just the 2 MiB that -T re-reads when only -T runs. It is
 * removed at the end. The waits are not traced phases; Ctrl-C cuts them.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "workload_i.h"
#include "iotap_hdparm.h"

#define TIMING_MB	2
#define TIMING_BYTES	(TIMING_MB << 20)
#define HDP_FILE	"iotap-hdparm.dat"
#define SETTLE_S	3		/* prepare_timing_buf() */
#define FLUSH_WAIT_S	1		/* after flush_buffer_cache() in time_cache() */

uint64_t iotap_workload_hdparm_file_bytes(const struct iotap_workload_hdparm_opts *o)
{
	return o->flags & IOTAP_HDPARM_DEVICE ? o->file_bytes : TIMING_BYTES;
}

/* sleep(3) that Ctrl-C cuts short: -EINTR once interrupted */
static int wait_s(unsigned int s)
{
	uint64_t end = wl_now() + (uint64_t)s * 1000000000ull;

	while (!wl_stopped()) {
		uint64_t now = wl_now();
		struct timespec ts = { 0, 100000000 };

		if (now >= end)
			return 0;
		if (end - now < 100000000ull)
			ts.tv_nsec = (long)(end - now);
		nanosleep(&ts, NULL);
	}
	return -EINTR;
}

/* hdparm prepare_timing_buf(): what runs before each timing */
static int settle(void)
{
	sync();
	return wait_s(SETTLE_S);
}

/* hdparm read_big_block(): one 2 MiB read, then a touch of every 512th byte */
static int read_block(struct iotap_workload_ctx *c, struct wl_file *f, char *buf)
{
	int ret = wl_read_full(c, f, buf, TIMING_BYTES);
	unsigned int i;

	if (ret)
		return ret;
	for (i = 0; i < TIMING_BYTES; i += 512)
		((volatile char *)buf)[i] &= 1;
	return 0;
}

static int prepare(struct iotap_workload_ctx *c, uint64_t bytes, void *buf)
{
	struct wl_file f;
	struct wl_fileset fs = { .n = 1, .f = &f };
	struct wl_data_phase p = {
		.name = "prepare", .kind = WL_SEQ_WRITE, .io = WL_IO_BLOCK,
		.flags = WL_PF_FSYNC_IN | WL_PF_CLOSE_IN, .unit = TIMING_BYTES,
		.units = bytes / TIMING_BYTES, .buf = buf,
	};
	struct iotap_workload_phase_result pr;
	int ret;

	fs.units_per_file = p.units;
	ret = wl_open(c, &f, c->dirfd, c->dir_ino, HDP_FILE, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (ret)
		return ret;
	ret = wl_data_run(c, &p, &fs, &pr);
	if (f.fd >= 0)
		wl_close(c, &f);
	return ret;
}

static int open_target(struct iotap_workload_ctx *c, const struct iotap_workload_hdparm_opts *o,
		       struct wl_file *f)
{
	int fl = O_RDONLY | (o->flags & IOTAP_HDPARM_DIRECT ? O_DIRECT : 0);

	if (c->dirfd >= 0)
		return wl_open(c, f, c->dirfd, c->dir_ino, HDP_FILE, fl, 0);
	return wl_open(c, f, AT_FDCWD, 0, c->dir, fl, 0);
}

/* hdparm flush_buffer_cache(), and for a file the page-cache equivalent */
static void flush_cache(struct wl_file *f)
{
	struct stat st;

	sync();
	fsync(f->fd);
	fdatasync(f->fd);
	sync();
	if (!fstat(f->fd, &st) && S_ISBLK(st.st_mode))
		ioctl(f->fd, BLKFLSBUF, NULL);	/* needs CAP_SYS_ADMIN; fadvise below anyway */
	posix_fadvise(f->fd, 0, 0, POSIX_FADV_DONTNEED);
	sync();
}

/*
 * hdparm's timing loop: read TIMING_BYTES blocks (each after a seek to 0
 * when @rewind: the cached test) until @limit_ns have passed since @s
 * began or @max blocks were read (0: no limit), counted in *@iterations.
 * Return: 0, -EINTR (interrupted), -errno.
 */
static int timed_reads(struct iotap_workload_ctx *c, struct wl_file *f, void *buf,
		       struct wl_span *s, int rewind, uint64_t limit_ns, uint64_t max,
		       uint64_t *iterations)
{
	uint64_t elapsed;
	int ret = 0;

	do {
		uint64_t u0 = wl_now();

		if (wl_stopped())
			return -EINTR;
		if (rewind)
			ret = wl_seek(c, f, 0);
		if (!ret)
			ret = read_block(c, f, buf);
		if (ret)
			return ret;
		(*iterations)++;
		elapsed = wl_now();
		wl_phase_unit(c, s, TIMING_BYTES, elapsed - u0);
		wl_progress(c);
		elapsed -= s->t0;
	} while (elapsed < limit_ns && (!max || *iterations < max));
	return 0;
}

static int time_cache(struct iotap_workload_ctx *c, struct wl_file *f, void *buf,
		      struct iotap_workload_hdparm_result *r)
{
	uint64_t iterations = 0, t0, lseeks, i;
	struct wl_span s;
	int ret;

	ret = settle();
	if (!ret)
		ret = wl_seek(c, f, 0);
	if (!ret)
		ret = read_block(c, f, buf);
	if (ret)
		return ret;
	flush_cache(f);
	ret = wait_s(FLUSH_WAIT_S);
	if (ret)
		return ret;
	wl_phase_begin(c, &s, "cached_reads", 0, TIMING_BYTES);
	ret = timed_reads(c, f, buf, &s, 1, 2000000000ull, 0, &iterations);
	wl_phase_end(c, &s, &r->ph_cached, ret != 0);
	if (ret)
		return ret;
	/* hdparm: take away what the lseek()s and the clock cost */
	t0 = wl_now();
	for (i = 0; i < iterations; i++) {
		ret = wl_seek(c, f, 0);
		if (ret)
			return ret;
		wl_now();
	}
	lseeks = wl_now() - t0;
	r->ran_cached = 1;
	r->cached_mb = iterations * TIMING_MB;
	r->cached_s = r->ph_cached.elapsed_s - (double)lseeks / 1e9;
	flush_cache(f);
	wait_s(FLUSH_WAIT_S);		/* the figures stand even if Ctrl-C cuts this */
	return 0;
}

static int time_device(struct iotap_workload_ctx *c, struct wl_file *f, uint64_t size, void *buf,
		       struct iotap_workload_hdparm_result *r)
{
	uint64_t iterations = 0, max_iterations;
	struct wl_span s;
	int ret;

	/* hdparm: max_iterations from the device size, 1024 when it cannot tell */
	max_iterations = size ? size / TIMING_BYTES : 1024;
	if (!max_iterations)
		return wl_fail(c, -ENODATA, "'%s' is smaller than %d MiB", f->name, TIMING_MB);
	flush_cache(f);
	ret = settle();
	if (!ret)
		ret = wl_seek(c, f, 0);
	if (ret)
		return ret;
	wl_phase_begin(c, &s, "disk_reads", max_iterations, TIMING_BYTES);
	ret = timed_reads(c, f, buf, &s, 0, 3000000000ull, max_iterations, &iterations);
	wl_phase_end(c, &s, &r->ph_device, ret != 0);
	if (ret)
		return ret;
	r->ran_device = 1;
	r->device_mb = iterations * TIMING_MB;
	r->device_s = r->ph_device.elapsed_s;
	flush_cache(f);			/* hdparm's do_flush after -t */
	return 0;
}

/* hdparm prepare_timing_buf(): an anonymous mapping, present and locked */
static void *timing_buf(void)
{
	void *p = mmap(NULL, TIMING_BYTES, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	mlock(p, TIMING_BYTES);		/* best effort: hdparm needs it, we do not */
	return p;
}

int iotap_workload_hdparm_run(struct iotap_workload_ctx *c,
			      const struct iotap_workload_hdparm_opts *o,
			      struct iotap_workload_hdparm_result *r)
{
	struct wl_file f = { .fd = -1 };
	uint64_t size = 0;
	struct stat st;
	int ret, made = 0;
	void *buf;

	memset(r, 0, sizeof(*r));
	buf = timing_buf();
	if (!buf)
		return -ENOMEM;
	if (c->dirfd >= 0) {
		uint64_t bytes = iotap_workload_hdparm_file_bytes(o);

		if (bytes < TIMING_BYTES) {
			ret = -EINVAL;
			goto out;
		}
		made = 1;
		ret = prepare(c, bytes, buf);
		if (ret)
			goto out;
	}
	ret = open_target(c, o, &f);
	if (ret)
		goto out;
	if (!fstat(f.fd, &st) && S_ISBLK(st.st_mode))
		size = (uint64_t)lseek(f.fd, 0, SEEK_END);
	else if (!fstat(f.fd, &st))
		size = (uint64_t)st.st_size;
	if (size < TIMING_BYTES) {
		ret = wl_fail(c, -ENODATA, "'%s' is smaller than %d MiB", c->dir, TIMING_MB);
		goto out;
	}
	if (o->flags & IOTAP_HDPARM_CACHED)
		ret = time_cache(c, &f, buf, r);
	if (!ret && (o->flags & IOTAP_HDPARM_DEVICE))
		ret = time_device(c, &f, size, buf, r);
out:
	if (f.fd >= 0)
		wl_close(c, &f);
	if (made && !faccessat(c->dirfd, HDP_FILE, F_OK, 0))
		wl_unlink(c, c->dirfd, c->dir_ino, HDP_FILE, 0);
	munmap(buf, TIMING_BYTES);
	wl_outcome(ret, 0, &r->partial, &r->failed);
	return ret;
}

static void line(FILE *f, double mb, double s)
{
	if (s <= 0)
		s = 1e-9;
	if (mb / s > 1.0)
		fprintf(f, "%3.0f MB in %5.2f seconds = %6.2f MB/sec\n", mb, s, mb / s);
	else
		fprintf(f, "%3.0f MB in %5.2f seconds = %6.2f kB/sec\n", mb, s, mb / s * 1024);
}

void iotap_workload_hdparm_print(FILE *f, const char *target,
				 const struct iotap_workload_hdparm_opts *o,
				 const struct iotap_workload_hdparm_result *r)
{
	int direct = !!(o->flags & IOTAP_HDPARM_DIRECT);

	fprintf(f, "\n%s:\n", target);
	if (r->ran_cached) {
		fprintf(f, " Timing %scached reads:   ", direct ? "O_DIRECT " : "");
		line(f, (double)r->cached_mb, r->cached_s);
	}
	if (r->ran_device) {
		fprintf(f, " Timing %s disk reads: ", direct ? "O_DIRECT" : "buffered");
		line(f, (double)r->device_mb, r->device_s);
	}
	if (r->partial)
		fprintf(f, " (interrupted: partial results)\n");
}
