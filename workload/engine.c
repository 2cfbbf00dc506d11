// SPDX-License-Identifier: MIT
/*
 * engine.c - the generic data phase the models describe their phases
 * for (struct wl_data_phase): sequential, permuted and rewrite passes over
 * a set of files, by block, by byte or through stdio, with the timed
 * syncs and closes a phase asks for
 *
 * The run context is ctx.c's, the traced calls traced.c's, the markers
 * phase.c's and the helper threads threads.c's; read workload_i.h first.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "sys.h"
#include "workload_i.h"

int wl_read_full(struct iotap_workload_ctx *c, struct wl_file *f, void *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = wl_read(c, f, (char *)buf + got, len - got);

		if (n < 0)
			return (int)n;
		if (n == 0)
			return wl_fail(c, -ENODATA, "read '%s' at %" PRIu64 ": end of file",
				       f->name, f->pos);
		got += (size_t)n;
	}
	return 0;
}

int wl_write_full(struct iotap_workload_ctx *c, struct wl_file *f, const void *buf, size_t len)
{
	ssize_t n = wl_write(c, f, buf, len);

	if (n < 0)
		return (int)n;
	if ((size_t)n != len)
		return wl_fail(c, -ENOSPC, "write '%s' at %" PRIu64 ": %zd of %zu bytes written",
			       f->name, f->pos - (uint64_t)n, n, len);
	return 0;
}

static int unit_write(struct iotap_workload_ctx *c, const struct wl_data_phase *p,
		      struct wl_file *f, char *buf)
{
	size_t i;

	switch (p->io) {
	case WL_IO_BLOCK:
		return wl_write_full(c, f, buf, p->unit);
	case WL_IO_BYTE:
		for (i = 0; i < p->unit; i++) {
			char ch = (char)(i & 0x7f);
			int ret = wl_write_full(c, f, &ch, 1);

			if (ret)
				return ret;
		}
		return 0;
	case WL_IO_STDIO:
		for (i = 0; i < p->unit; i++)
			if (putc((int)(i & 0x7f), f->stream) == EOF)
				return wl_fail(c, errno ? -errno : -EIO, "putc to '%s'", f->name);
		return 0;
	}
	return -EINVAL;
}

static int unit_read(struct iotap_workload_ctx *c, const struct wl_data_phase *p,
		     struct wl_file *f, char *buf)
{
	size_t i;

	switch (p->io) {
	case WL_IO_BLOCK:
		return wl_read_full(c, f, buf, p->unit);
	case WL_IO_BYTE:
		for (i = 0; i < p->unit; i++) {
			char ch;
			ssize_t n = wl_read(c, f, &ch, 1);

			if (n < 0)
				return (int)n;
			if (n == 0)
				return wl_fail(c, -ENODATA, "read '%s': end of file", f->name);
			/* as bonnie++: use the byte so that nothing optimises it away */
			buf[(unsigned char)ch]++;
		}
		return 0;
	case WL_IO_STDIO:
		for (i = 0; i < p->unit; i++) {
			int ch = getc(f->stream);

			if (ch == EOF)
				return wl_fail(c, ferror(f->stream) ? -EIO : -ENODATA,
					       "getc from '%s'", f->name);
			buf[ch & 0xff]++;
		}
		return 0;
	}
	return -EINVAL;
}

int wl_data_run(struct iotap_workload_ctx *c, const struct wl_data_phase *p,
		struct wl_fileset *fs, struct iotap_workload_phase_result *r)
{
	char *buf = p->buf;
	struct wl_span s;
	size_t dirty = 0;
	uint64_t i;
	unsigned int k;
	int ret = 0;

	wl_phase_begin(c, &s, p->name, p->units, p->unit);
	for (i = 0; i < p->units; i++) {
		uint64_t un = p->perm ? p->perm[i] : p->first + i;
		struct wl_file *f = &fs->f[un / fs->units_per_file];
		uint64_t off = (un % fs->units_per_file) * p->unit;
		uint64_t t = wl_now();

		if (wl_stopped()) {
			ret = -EINTR;
			break;
		}
		if (f->pos != off && !f->stream) {
			ret = wl_seek(c, f, off);
			if (ret)
				break;
		}
		switch (p->kind) {
		case WL_SEQ_WRITE:
		case WL_PERM_WRITE:
			if (p->flags & WL_PF_DIRTY) {
				/* bonnie++: one byte changes per chunk, walking the buffer */
				buf[dirty]++;
				dirty = (dirty + 1) % p->unit;
			}
			ret = unit_write(c, p, f, buf);
			break;
		case WL_SEQ_READ:
		case WL_PERM_READ:
			ret = unit_read(c, p, f, buf);
			break;
		case WL_REWRITE:
			ret = wl_read_full(c, f, buf, p->unit);
			if (ret)
				break;
			dirty %= p->unit;
			buf[dirty++]++;
			ret = wl_seek(c, f, off);
			if (ret)
				break;
			ret = wl_write_full(c, f, buf, p->unit);
			break;
		}
		if (ret)
			break;
		t = wl_now() - t;
		wl_phase_unit(c, &s, p->kind == WL_REWRITE ? 2 * p->unit : p->unit, t);
		wl_progress(c);
		if ((p->flags & WL_PF_TIME_LIMIT) && wl_now() - s.t0 >= p->limit_ns)
			break;
	}
	for (k = 0; !ret && k < fs->n; k++) {
		if (fs->f[k].stream && fflush(fs->f[k].stream))
			ret = wl_fail(c, -errno, "flush '%s'", fs->f[k].name);
		if (!ret && (p->flags & (WL_PF_FSYNC_IN | WL_PF_FDATASYNC_IN)))
			ret = wl_fsync(c, &fs->f[k], !(p->flags & WL_PF_FSYNC_IN));
		if (!ret && (p->flags & WL_PF_CLOSE_IN))
			ret = wl_close(c, &fs->f[k]);
	}
	wl_phase_end(c, &s, r, ret != 0);
	for (k = 0; !ret && (p->flags & WL_PF_FSYNC_AFTER) && k < fs->n; k++)
		ret = wl_fsync(c, &fs->f[k], 0);
	return ret;
}

int wl_fileset_close(struct iotap_workload_ctx *c, struct wl_fileset *fs, int do_fsync)
{
	unsigned int k;
	int ret = 0, r;

	for (k = 0; k < fs->n; k++) {
		if (fs->f[k].fd < 0)
			continue;
		if (do_fsync) {
			if (fs->f[k].stream)
				fflush(fs->f[k].stream);
			r = wl_fsync(c, &fs->f[k], 0);
			if (r && !ret)
				ret = r;
		}
		r = wl_close(c, &fs->f[k]);
		if (r && !ret)
			ret = r;
	}
	return ret;
}

/* --- beside the data phase: sync_file_range and markers (pgsql), APP records --- */

/*
 * sync_file_range(2) is issued but not recorded: FUSE has no request for
 * it, so a capture never sees one either (as with lseek(2)). wl_mark()
 * writes a PHASE marker from any thread with the CPU figure its caller
 * measured (pgsql's roles run across phases, so the owner's RUSAGE_THREAD
 * alone would miss them).
 */
int wl_sync_file_range(struct iotap_workload_ctx *c, struct wl_file *f, uint64_t off,
		       uint64_t len, unsigned int flags)
{
	if (sync_file_range(f->fd, (off_t)off, (off_t)len, flags))
		return wl_fail(c, -errno, "sync_file_range '%s' at %" PRIu64, f->name, off);
	return 0;
}

void wl_mark(struct iotap_workload_ctx *c, const char *name, unsigned int kind,
	     uint64_t user_ns, uint64_t sys_ns, uint64_t *t)
{
	struct sys_who who;

	*t = c->rec ? iotap_trace_op_begin(c->rec) : wl_now();
	if (!c->rec)
		return;
	who = (struct sys_who){ sys_tid(), c->pid, c->uid, c->gid };
	/* 0/0 reads as "no CPU figure" (see wl_cpu) */
	sys_record_phase(c->rec, &who, name, kind, *t, user_ns || sys_ns ? user_ns : 1, sys_ns, 0);
}

void wl_app(struct iotap_workload_ctx *c, struct iotap_trace_rec *rec)
{
	if (!c->rec)
		return;
	rec->type = IOTAP_REC_APP;
	rec->time_ns = iotap_trace_op_begin(c->rec);
	rec->tid = sys_tid();
	rec->pid = c->pid;
	rec->uid = c->uid;
	rec->gid = c->gid;
	if (rec->name && !rec->name_len)
		rec->name_len = (uint32_t)strnlen(rec->name, IOTAP_TRACE_NAME_MAX);
	iotap_trace_record(c->rec, rec);
}
