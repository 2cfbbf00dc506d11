// SPDX-License-Identifier: MIT
/*
 * hdparm.c - hdparm -T and -t timings on a file or a block device
 *
 * Read from hdparm.c (9.x): both timings read 2 MiB blocks (TIMING_BUF_MB)
 * and count each as 2 "MB". -T (time_cache) reads the first 2 MiB once,
 * then seeks to 0 and re-reads it until 2 s have passed, and subtracts
 * the time the same number of bare lseek(2)s take. -t (time_device)
 * reads sequentially from offset 0 for 3 s or until the device (here:
 * also the file) ends. hdparm flushes the device's buffer cache before -t
 * with BLKFLSBUF; a regular file gets the equivalent, fdatasync(2) and
 * posix_fadvise(POSIX_FADV_DONTNEED) over the whole file, so -t reads
 * bypass the page cache as on the device (BLKFLSBUF is used too on a
 * block device when allowed). --direct opens with O_DIRECT, as hdparm's
 * --direct, and says "O_DIRECT" in the lines.
 *
 * hdparm's settle sleeps (3 s after mlock, 1 s after flushing) are not
 * kept: they wait for unrelated I/O to finish, which sync(2) here does.
 * A directory target gets a file of --size bytes written first (phase
 * "prepare"), removed at the end.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "workload_i.h"

#define TIMING_MB	2
#define TIMING_BYTES	(TIMING_MB << 20)
#define HDP_FILE	"iotap-hdparm.dat"

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
	fdatasync(f->fd);
	if (!fstat(f->fd, &st) && S_ISBLK(st.st_mode))
		ioctl(f->fd, BLKFLSBUF, NULL);	/* needs CAP_SYS_ADMIN; fadvise below anyway */
	posix_fadvise(f->fd, 0, 0, POSIX_FADV_DONTNEED);
}

static int time_cache(struct iotap_workload_ctx *c, struct wl_file *f, void *buf,
		      struct iotap_workload_hdparm_result *r)
{
	uint64_t iterations = 0, t0, elapsed, lseeks, i;
	struct wl_span s;
	int ret;

	ret = wl_seek(c, f, 0);
	if (!ret)
		ret = wl_read_full(c, f, buf, TIMING_BYTES);
	if (ret)
		return ret;
	sync();
	wl_phase_begin(c, &s, "cached_reads", 0, TIMING_BYTES);
	t0 = s.t0;
	do {
		uint64_t u0 = wl_now();

		if (wl_stopped()) {
			ret = -EINTR;
			break;
		}
		ret = wl_seek(c, f, 0);
		if (!ret)
			ret = wl_read_full(c, f, buf, TIMING_BYTES);
		if (ret)
			break;
		iterations++;
		elapsed = wl_now();
		wl_phase_unit(c, &s, TIMING_BYTES, elapsed - u0);
		wl_progress(c);
		elapsed -= t0;
	} while (elapsed < 2000000000ull);
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
	return 0;
}

static int time_device(struct iotap_workload_ctx *c, struct wl_file *f, uint64_t size, void *buf,
		       struct iotap_workload_hdparm_result *r)
{
	struct wl_fileset fs = { .n = 1, .units_per_file = UINT64_MAX / 2, .f = f };
	struct wl_data_phase p = {
		.name = "disk_reads", .kind = WL_SEQ_READ, .io = WL_IO_BLOCK,
		.flags = WL_PF_TIME_LIMIT, .unit = TIMING_BYTES, .limit_ns = 3000000000ull,
		.buf = buf,
	};
	int ret;

	/* hdparm: max_iterations from the device size, 1024 when it cannot tell */
	p.units = size ? size / TIMING_BYTES : 1024;
	if (!p.units)
		return wl_fail(c, -ENODATA, "'%s' is smaller than %d MiB", f->name, TIMING_MB);
	flush_cache(f);
	ret = wl_seek(c, f, 0);
	if (ret)
		return ret;
	ret = wl_data_run(c, &p, &fs, &r->ph_device);
	if (ret)
		return ret;
	r->ran_device = 1;
	r->device_mb = r->ph_device.units * TIMING_MB;
	r->device_s = r->ph_device.elapsed_s;
	return 0;
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
	buf = wl_buf_alloc(TIMING_BYTES);
	if (!buf)
		return -ENOMEM;
	if (c->dirfd >= 0) {
		if (o->file_bytes < TIMING_BYTES) {
			ret = -EINVAL;
			goto out;
		}
		made = 1;
		ret = prepare(c, o->file_bytes, buf);
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
	free(buf);
	if (ret == -EINTR)
		r->partial = 1;
	else if (ret)
		r->failed = 1;
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
