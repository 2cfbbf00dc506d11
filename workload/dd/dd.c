// SPDX-License-Identifier: MIT
/*
 * dd.c - dd's sequential copy: bs x count, one read(2) or write(2) per
 * block, reported as GNU dd reports it
 *
 * Timing as GNU dd (coreutils 9.1 dd.c): the clock starts after the file
 * is open and stops after conv=fdatasync's fdatasync(2) and the close, so
 * both are inside. A block that comes back short counts as a partial
 * record ("N+M records in"), and the copy stops at end of file.
 *
 * --read in a directory reads a file of that name (iotap-dd.dat); when it
 * is missing or short, it is written first (phase "prepare", not part of
 * dd's figures), synced, and its pages are dropped from the page cache
 * with posix_fadvise(POSIX_FADV_DONTNEED), so the read comes from the
 * device the way dd if=/dev/md0 did in the seed posts. A file or block
 * device target is read as it is. Files dd created are removed at the end
 * unless --keep.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "workload_i.h"
#include "iotap_dd.h"

static int prepare(struct iotap_workload_ctx *c, const struct iotap_workload_dd_opts *o,
		   const char *name, void *buf, struct iotap_workload_dd_result *r)
{
	struct wl_file f;
	struct wl_fileset fs = { .n = 1, .units_per_file = o->count, .f = &f };
	struct wl_data_phase p = {
		.name = "prepare", .kind = WL_SEQ_WRITE, .io = WL_IO_BLOCK,
		.flags = WL_PF_FSYNC_IN | WL_PF_CLOSE_IN, .unit = o->bs, .units = o->count,
		.buf = buf,
	};
	struct iotap_workload_phase_result pr;
	int ret, fd;

	ret = wl_open(c, &f, c->dirfd, c->dir_ino, name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (ret)
		return ret;
	r->prepared = 1;
	ret = wl_data_run(c, &p, &fs, &pr);
	if (f.fd >= 0)
		wl_close(c, &f);
	if (ret)
		return ret;
	/* housekeeping, not part of the workload: drop the file's clean pages */
	fd = openat(c->dirfd, name, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		close(fd);
	}
	return 0;
}

int iotap_workload_dd_run(struct iotap_workload_ctx *c, const struct iotap_workload_dd_opts *o,
			  struct iotap_workload_dd_result *r)
{
	int reading = !!(o->flags & IOTAP_DD_READ);
	const char *name = c->dirfd >= 0 ? (o->file ? o->file : "iotap-dd.dat") : c->dir;
	int dfd = c->dirfd >= 0 ? c->dirfd : AT_FDCWD;
	uint64_t parent = c->dirfd >= 0 ? c->dir_ino : 0, i;
	struct wl_file f = { .fd = -1 };
	struct wl_span s;
	int ret, created = 0, fl;
	struct stat st;
	void *buf;

	memset(r, 0, sizeof(*r));
	if (!o->bs || !o->count)
		return -EINVAL;
	if (c->dirfd < 0 && !reading)
		return -ENOTDIR;	/* writes go into a directory, never onto a device */
	buf = wl_buf_alloc(o->bs);
	if (!buf)
		return -ENOMEM;
	if (reading && c->dirfd >= 0 &&
	    (fstatat(dfd, name, &st, 0) || (uint64_t)st.st_size < o->bs * o->count)) {
		ret = prepare(c, o, name, buf, r);
		created = 1;
		if (ret)
			goto out;
	}
	fl = reading ? O_RDONLY : O_WRONLY | O_CREAT | O_TRUNC;
	if (o->flags & IOTAP_DD_DIRECT)
		fl |= O_DIRECT;
	if (!reading && fstatat(dfd, name, &st, 0))
		created = 1;
	ret = wl_open(c, &f, dfd, parent, name, fl, 0666);
	if (ret)
		goto out;
	wl_phase_begin(c, &s, reading ? "read" : "write", o->count, o->bs);
	for (i = 0; i < o->count; i++) {
		uint64_t t0 = wl_now();
		ssize_t n;

		if (wl_stopped()) {
			ret = -EINTR;
			break;
		}
		n = reading ? wl_read(c, &f, buf, o->bs) : wl_write(c, &f, buf, o->bs);
		if (n < 0) {
			ret = (int)n;
			break;
		}
		if (n == 0)
			break;		/* end of file */
		/* in: the read side (/dev/zero when writing); out: the write side (/dev/null) */
		if ((uint64_t)n == o->bs) {
			r->full_in++;
			r->full_out++;
		} else if (reading) {
			r->partial_in++;
			r->partial_out++;
		} else {
			r->full_in++;
			r->partial_out++;
		}
		r->bytes += (uint64_t)n;
		wl_phase_unit(c, &s, (uint64_t)n, wl_now() - t0);
		wl_progress(c);
	}
	if (!ret && !reading && (o->flags & IOTAP_DD_FDATASYNC))
		ret = wl_fsync(c, &f, 1);
	if (wl_close(c, &f) && !ret)
		ret = -EIO;
	wl_phase_end(c, &s, &r->ph, ret != 0);
	r->seconds = r->ph.elapsed_s;
out:
	if (f.fd >= 0)
		wl_close(c, &f);
	if (created && !o->keep && c->dirfd >= 0 && !faccessat(dfd, name, F_OK, 0))
		wl_unlink(c, dfd, parent, name, 0);
	free(buf);
	wl_outcome(ret, 0, &r->partial, &r->failed);
	return ret;
}

/*
 * gnulib human_readable() as dd calls it (autoscale, round to nearest,
 * SI or IEC, "B" suffix): below the base, integers; otherwise one decimal
 * under 10 and none above. @scale_small: the rate form, which dd always
 * scales at least once ("0.3 kB/s").
 */
static void human(char *buf, size_t len, double v, unsigned int base, int scale_small)
{
	static const char si[] = "kMGTPEZY", iec[] = "KMGTPEZY";
	char num[32];
	int e = 0;

	if (v >= base || scale_small) {
		do {
			v /= base;
			e++;
		} while (v >= base && e < 8);
	}
	if (!e) {
		snprintf(buf, len, "%.0f B", v);
		return;
	}
	if (v < 9.95) {
		snprintf(num, sizeof(num), "%.1f", v);
	} else {
		snprintf(num, sizeof(num), "%.0f", v);
		if (atof(num) >= base && e < 8) {
			e++;
			snprintf(num, sizeof(num), "1.0");
		}
	}
	snprintf(buf, len, "%s %c%sB", num, base == 1024 ? iec[e - 1] : si[e - 1],
		 base == 1024 ? "i" : "");
}

void iotap_workload_dd_print(FILE *f, const struct iotap_workload_dd_result *r)
{
	char si[32], iec[32], rate[40];

	fprintf(f, "%" PRIu64 "+%" PRIu64 " records in\n", r->full_in, r->partial_in);
	fprintf(f, "%" PRIu64 "+%" PRIu64 " records out\n", r->full_out, r->partial_out);
	human(si, sizeof(si), (double)r->bytes, 1000, 0);
	human(iec, sizeof(iec), (double)r->bytes, 1024, 0);
	if (r->seconds > 0) {
		human(rate, sizeof(rate), (double)r->bytes / r->seconds, 1000, 1);
		strcat(rate, "/s");
	} else {
		snprintf(rate, sizeof(rate), "Infinity B/s");
	}
	if (r->bytes < 1000)
		fprintf(f, "%" PRIu64 " byte%s copied, %g s, %s\n", r->bytes,
			r->bytes == 1 ? "" : "s", r->seconds, rate);
	else if (r->bytes < 1024)
		fprintf(f, "%" PRIu64 " bytes (%s) copied, %g s, %s\n", r->bytes, si, r->seconds,
			rate);
	else
		fprintf(f, "%" PRIu64 " bytes (%s, %s) copied, %g s, %s\n", r->bytes, si, iec,
			r->seconds, rate);
}
