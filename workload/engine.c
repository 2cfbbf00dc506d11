// SPDX-License-Identifier: MIT
/*
 * engine.c - what every workload model stands on: the run context, the
 * traced system calls, phase markers with timing and CPU accounting,
 * progress reports, helper threads, interruption, and the generic data
 * phase runner the models describe their phases for.
 *
 * Read workload_i.h first: it states the threading, CPU and trace rules.
 * Tracing cost: with a trace, each system call costs two clock reads
 * (vDSO), one memory barrier and one copy into this thread's recorder
 * buffer; the recorder never blocks, it drops and counts instead. Without
 * a trace the wrappers are the bare system calls.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <sys/vfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "workload_i.h"

static atomic_int g_stop;
static __thread uint32_t tl_tid;

void iotap_workload_interrupt(void)
{
	atomic_store_explicit(&g_stop, 1, memory_order_relaxed);
}

int iotap_workload_interrupted(void)
{
	return atomic_load_explicit(&g_stop, memory_order_relaxed);
}

int wl_stopped(void)
{
	return atomic_load_explicit(&g_stop, memory_order_relaxed);
}

uint64_t wl_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint32_t wl_tid(void)
{
	if (!tl_tid)
		tl_tid = (uint32_t)syscall(SYS_gettid);
	return tl_tid;
}

static void thread_cpu(uint64_t *user_ns, uint64_t *sys_ns)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	*user_ns = (uint64_t)ru.ru_utime.tv_sec * 1000000000ull +
		   (uint64_t)ru.ru_utime.tv_usec * 1000;
	*sys_ns = (uint64_t)ru.ru_stime.tv_sec * 1000000000ull +
		  (uint64_t)ru.ru_stime.tv_usec * 1000;
}

void wl_cpu(struct iotap_workload_ctx *c, uint64_t *user_ns, uint64_t *sys_ns)
{
	uint64_t u, s;

	thread_cpu(&u, &s);
	*user_ns = u + atomic_load(&c->helper_user_ns);
	*sys_ns = s + atomic_load(&c->helper_sys_ns);
	/*
	 * Readers take a 0/0 mark for "no CPU figure" (tools/report.c); a
	 * fresh owner thread can read 0 us. One ns is below rusage's 1 us
	 * resolution and cancels out of every difference.
	 */
	if (!*user_ns && !*sys_ns)
		*user_ns = 1;
}

int wl_fail(struct iotap_workload_ctx *c, int err, const char *fmt, ...)
{
	va_list ap;

	/* the first failure is the one worth reporting; cleanup errors follow it */
	if (c->what[0] || err == -EINTR)
		return err;
	va_start(ap, fmt);
	vsnprintf(c->what, sizeof(c->what), fmt, ap);
	va_end(ap);
	return err;
}

const char *iotap_workload_ctx_error(const struct iotap_workload_ctx *c)
{
	return c->what;
}

/* --- targets and contexts ------------------------------------------------ */

int iotap_workload_target_check(const char *path, int need_dir, struct iotap_workload_target *t)
{
	struct statvfs sv;
	struct statfs sf;
	struct stat st;
	long pages, psize;

	memset(t, 0, sizeof(*t));
	if (stat(path, &st))
		return -errno;
	pages = sysconf(_SC_PHYS_PAGES);
	psize = sysconf(_SC_PAGESIZE);
	if (pages > 0 && psize > 0)
		t->ram_bytes = (uint64_t)pages * (uint64_t)psize;
	t->is_dir = S_ISDIR(st.st_mode);
	t->is_blockdev = S_ISBLK(st.st_mode);
	if (S_ISREG(st.st_mode))
		t->size = (uint64_t)st.st_size;
	if (need_dir && !t->is_dir)
		return -ENOTDIR;
	if (t->is_blockdev) {
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		off_t end;

		if (fd < 0)
			return -errno;
		end = lseek(fd, 0, SEEK_END);
		close(fd);
		if (end > 0)
			t->size = (uint64_t)end;
		return 0;
	}
	if (statvfs(path, &sv))
		return -errno;
	if (!statfs(path, &sf))
		t->is_fuse = sf.f_type == 0x65735546;	/* FUSE_SUPER_MAGIC */
	t->avail_bytes = (uint64_t)sv.f_bavail * (uint64_t)sv.f_frsize;
	t->fsid = (uint64_t)sv.f_fsid;
	if (need_dir) {
		if (sv.f_flag & ST_RDONLY)
			return -EROFS;
		if (access(path, W_OK | X_OK))
			return -errno;
	}
	return 0;
}

static void rec_base(struct iotap_workload_ctx *c, struct iotap_trace_rec *r,
		     unsigned int type, uint64_t t0)
{
	memset(r, 0, offsetof(struct iotap_trace_rec, sample));
	r->type = (uint16_t)type;
	r->time_ns = t0;
	r->tid = wl_tid();
	r->pid = c->pid;
	r->uid = c->uid;
	r->gid = c->gid;
}

static void rec_name(struct iotap_workload_ctx *c, uint64_t file, uint64_t parent,
		     const struct stat *st, const char *name, uint64_t t)
{
	struct iotap_trace_rec r;

	rec_base(c, &r, IOTAP_REC_NAME, t);
	r.file = file;
	r.file2 = parent;
	r.mode = st->st_mode;
	r.uid = st->st_uid;
	r.gid = st->st_gid;
	r.length = (uint64_t)st->st_size;
	r.name = name;
	r.name_len = (uint32_t)strnlen(name, IOTAP_TRACE_NAME_MAX);
	iotap_trace_record(c->rec, &r);
}

int iotap_workload_ctx_open(struct iotap_workload_ctx **out, const struct iotap_workload_env *env)
{
	struct iotap_trace_recorder_opts ropts = { 0 };
	struct iotap_trace_header hdr;
	struct iotap_workload_ctx *c;
	struct stat st;
	int ret;

	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->dir = strdup(env->target);
	if (!c->dir) {
		ret = -ENOMEM;
		goto err_free_ctx;
	}
	c->dirfd = open(env->target, O_RDONLY | O_CLOEXEC);
	if (c->dirfd < 0) {
		ret = -errno;
		goto err_free_dir;
	}
	if (fstat(c->dirfd, &st)) {
		ret = -errno;
		goto err_close_dir;
	}
	c->dir_ino = st.st_ino;
	if (!S_ISDIR(st.st_mode)) {
		/* a file or device target (dd --read, hdparm): opened by path */
		close(c->dirfd);
		c->dirfd = -1;
	}
	c->flags = env->flags;
	c->progress = env->progress;
	c->progress_arg = env->progress_arg;
	c->pid = (uint32_t)getpid();
	c->uid = (uint32_t)geteuid();
	c->gid = (uint32_t)getegid();
	atomic_init(&c->next_fh, 0);
	atomic_init(&c->helper_user_ns, 0);
	atomic_init(&c->helper_sys_ns, 0);
	atomic_init(&c->ph_done, 0);

	if (env->trace_path) {
		iotap_trace_header_init(&hdr, IOTAP_SOURCE_WORKLOAD);
		hdr.capture_mode = IOTAP_MODE_NONE;
		hdr.cmdline = env->cmdline;
		hdr.backing = env->target;
		hdr.workload = env->workload;
		ropts.flags = env->flags & IOTAP_WORKLOAD_TRACE_FORCE ? IOTAP_TRACE_FORCE : 0;
		ropts.sample_path = env->target;
		/*
		 * bonnie++ 2.x's per-char phases issue ~3 million 1-byte calls
		 * in a second or two; a 256 MiB pool lets the writer thread
		 * catch up instead of dropping (memory is taken as used).
		 */
		ropts.max_bytes = 256u << 20;
		ropts.buf_bytes = 1u << 20;
		ret = iotap_trace_recorder_open(&c->rec, env->trace_path, &hdr, &ropts);
		if (ret)
			goto err_close_dir;
		rec_name(c, c->dir_ino, 0, &st, env->target, iotap_trace_op_begin(c->rec));
	}
	*out = c;
	return 0;

err_close_dir:
	if (c->dirfd >= 0)
		close(c->dirfd);
err_free_dir:
	free(c->dir);
err_free_ctx:
	free(c);
	return ret;
}

int iotap_workload_ctx_close(struct iotap_workload_ctx *c)
{
	int ret = 0;

	if (!c)
		return 0;
	if (c->rec)
		ret = iotap_trace_recorder_close(c->rec);
	if (c->dirfd >= 0)
		close(c->dirfd);
	free(c->dir);
	free(c);
	return ret;
}

uint64_t iotap_workload_ctx_lost(struct iotap_workload_ctx *c)
{
	return c->rec ? iotap_trace_recorder_lost(c->rec) : 0;
}

/* --- traced system calls ------------------------------------------------- */

static inline uint64_t op_begin(struct iotap_workload_ctx *c)
{
	return c->rec ? iotap_trace_op_begin(c->rec) : 0;
}

static void rec_op(struct iotap_workload_ctx *c, struct iotap_trace_rec *r, unsigned int op,
		   uint64_t t0, int64_t result)
{
	uint64_t t1 = iotap_trace_now_ns();

	rec_base(c, r, IOTAP_REC_OP, t0);
	r->op = (uint16_t)op;
	r->dur_ns = t1 > t0 ? t1 - t0 : 0;
	r->result = result;
}

static void rec_data(struct iotap_workload_ctx *c, unsigned int op, const struct wl_file *f,
		     uint64_t t0, uint64_t off, size_t len, ssize_t n)
{
	uint64_t t1 = iotap_trace_now_ns();
	struct iotap_trace_rec r;

	/* the hot path: fill only what a data op uses (rec_base clears the rest) */
	rec_base(c, &r, IOTAP_REC_OP, t0);
	r.op = (uint16_t)op;
	r.dur_ns = t1 > t0 ? t1 - t0 : 0;
	r.file = f->ino;
	r.fh = f->fh;
	r.offset = off;
	r.length = len;
	r.result = n;
	r.flags = f->opf;
	iotap_trace_record(c->rec, &r);
}

int wl_open(struct iotap_workload_ctx *c, struct wl_file *f, int dirfd, uint64_t parent,
	    const char *name, int oflags, mode_t mode)
{
	struct iotap_trace_rec r;
	struct stat st;
	uint64_t t0;
	int fd, err = 0;

	memset(f, 0, sizeof(*f));
	f->fd = -1;
	f->name = name;
	f->c = c;
	f->oflags = oflags;
	f->fh = atomic_fetch_add(&c->next_fh, 1) + 1;
	f->opf = (oflags & O_DIRECT ? IOTAP_OPF_DIRECT : 0) |
		 (oflags & O_DSYNC ? IOTAP_OPF_SYNC : 0);
	t0 = op_begin(c);
	fd = openat(dirfd, name, oflags | O_CLOEXEC, mode);
	if (fd < 0)
		err = errno;
	if (c->rec) {
		rec_op(c, &r, oflags & O_CREAT ? IOTAP_OP_CREATE : IOTAP_OP_OPEN, t0,
		       fd < 0 ? -err : 0);
		if (fd >= 0 && !fstat(fd, &st))
			f->ino = st.st_ino;
		r.file = f->ino;
		r.fh = fd >= 0 ? f->fh : 0;
		r.flags = (uint32_t)oflags;
		if (oflags & O_CREAT) {
			r.file2 = parent;
			r.mode = mode;
			if (fd < 0) {
				r.name = name;
				r.name_len = (uint32_t)strlen(name);
			}
		}
		iotap_trace_record(c->rec, &r);
		if (fd >= 0 && (oflags & O_CREAT))
			rec_name(c, f->ino, parent, &st, name, r.time_ns);
	}
	if (fd < 0)
		return wl_fail(c, -err, "%s '%s'", oflags & O_CREAT ? "create" : "open", name);
	f->fd = fd;
	return 0;
}

ssize_t wl_write(struct iotap_workload_ctx *c, struct wl_file *f, const void *buf, size_t len)
{
	uint64_t t0, off = f->pos;
	ssize_t n;

	if (!c->rec) {
		n = write(f->fd, buf, len);
		if (n < 0)
			return wl_fail(c, -errno, "write '%s' at %" PRIu64, f->name, off);
		f->pos += (uint64_t)n;
		return n;
	}
	t0 = iotap_trace_op_begin(c->rec);
	n = write(f->fd, buf, len);
	if (n < 0) {
		int err = errno;

		rec_data(c, IOTAP_OP_WRITE, f, t0, off, len, -err);
		return wl_fail(c, -err, "write '%s' at %" PRIu64, f->name, off);
	}
	rec_data(c, IOTAP_OP_WRITE, f, t0, off, len, n);
	f->pos += (uint64_t)n;
	return n;
}

ssize_t wl_read(struct iotap_workload_ctx *c, struct wl_file *f, void *buf, size_t len)
{
	uint64_t t0, off = f->pos;
	ssize_t n;

	if (!c->rec) {
		n = read(f->fd, buf, len);
		if (n < 0)
			return wl_fail(c, -errno, "read '%s' at %" PRIu64, f->name, off);
		f->pos += (uint64_t)n;
		return n;
	}
	t0 = iotap_trace_op_begin(c->rec);
	n = read(f->fd, buf, len);
	if (n < 0) {
		int err = errno;

		rec_data(c, IOTAP_OP_READ, f, t0, off, len, -err);
		return wl_fail(c, -err, "read '%s' at %" PRIu64, f->name, off);
	}
	rec_data(c, IOTAP_OP_READ, f, t0, off, len, n);
	f->pos += (uint64_t)n;
	return n;
}

int wl_seek(struct iotap_workload_ctx *c, struct wl_file *f, uint64_t off)
{
	if (lseek(f->fd, (off_t)off, SEEK_SET) < 0)
		return wl_fail(c, -errno, "seek '%s' to %" PRIu64, f->name, off);
	f->pos = off;
	return 0;
}

int wl_fsync(struct iotap_workload_ctx *c, struct wl_file *f, int datasync)
{
	struct iotap_trace_rec r;
	uint64_t t0 = op_begin(c);
	int ret = datasync ? fdatasync(f->fd) : fsync(f->fd);
	int err = ret ? errno : 0;

	if (c->rec) {
		rec_op(c, &r, IOTAP_OP_FSYNC, t0, -err);
		r.file = f->ino;
		r.fh = f->fh;
		r.flags = datasync ? IOTAP_OPF_DATASYNC : 0;
		iotap_trace_record(c->rec, &r);
	}
	if (ret)
		return wl_fail(c, -err, "%s '%s'", datasync ? "fdatasync" : "fsync", f->name);
	return 0;
}

int wl_fsync_dir(struct iotap_workload_ctx *c, int fd, uint64_t ino)
{
	struct iotap_trace_rec r;
	uint64_t t0 = op_begin(c);
	int ret = fsync(fd);
	int err = ret ? errno : 0;

	if (c->rec) {
		rec_op(c, &r, IOTAP_OP_FSYNCDIR, t0, -err);
		r.file = ino;
		iotap_trace_record(c->rec, &r);
	}
	return ret ? wl_fail(c, -err, "fsync of a directory") : 0;
}

int wl_close(struct iotap_workload_ctx *c, struct wl_file *f)
{
	struct iotap_trace_rec r;
	int ret = 0, err = 0;
	uint64_t t0;

	if (f->stream) {
		/* flushes the buffer through the cookie: those writes are recorded */
		if (fclose(f->stream))
			err = errno;
		f->stream = NULL;
		free(f->sbuf);
		f->sbuf = NULL;
	}
	if (f->fd < 0)
		return err ? wl_fail(c, -err, "flush '%s'", f->name) : 0;
	t0 = op_begin(c);
	if (close(f->fd))
		ret = -errno;
	if (c->rec) {
		rec_op(c, &r, IOTAP_OP_RELEASE, t0, ret);
		r.file = f->ino;
		r.fh = f->fh;
		r.flags = (uint32_t)f->oflags;
		iotap_trace_record(c->rec, &r);
	}
	f->fd = -1;
	if (err)
		return wl_fail(c, -err, "flush '%s'", f->name);
	return ret ? wl_fail(c, ret, "close '%s'", f->name) : 0;
}

int wl_stat(struct iotap_workload_ctx *c, int dirfd, const char *name, struct stat *st)
{
	struct iotap_trace_rec r;
	uint64_t t0 = op_begin(c);
	int ret = fstatat(dirfd, name, st, AT_SYMLINK_NOFOLLOW);
	int err = ret ? errno : 0;

	if (c->rec) {
		rec_op(c, &r, IOTAP_OP_GETATTR, t0, -err);
		if (!ret) {
			r.file = st->st_ino;
			r.mode = st->st_mode;
			r.aux = (uint64_t)st->st_size;
		} else {
			r.name = name;
			r.name_len = (uint32_t)strlen(name);
		}
		iotap_trace_record(c->rec, &r);
	}
	return ret ? wl_fail(c, -err, "stat '%s'", name) : 0;
}

static int unlink_common(struct iotap_workload_ctx *c, int dirfd, uint64_t parent,
			 const char *name, uint64_t ino, int flags)
{
	struct iotap_trace_rec r;
	struct stat st;
	uint32_t mode = 0;
	uint64_t t0;
	int ret, err;

	/* the record wants the victim's id and mode: one untraced lookup when tracing */
	if (c->rec && !fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW)) {
		ino = st.st_ino;
		mode = st.st_mode;
	}
	t0 = op_begin(c);
	ret = unlinkat(dirfd, name, flags);
	err = ret ? errno : 0;
	if (c->rec) {
		rec_op(c, &r, flags ? IOTAP_OP_RMDIR : IOTAP_OP_UNLINK, t0, -err);
		r.file = ret ? 0 : ino;
		r.file2 = parent;
		r.mode = mode;
		if (ret || !ino) {
			r.name = name;
			r.name_len = (uint32_t)strlen(name);
		}
		iotap_trace_record(c->rec, &r);
	}
	return ret ? wl_fail(c, -err, "%s '%s'", flags ? "rmdir" : "unlink", name) : 0;
}

int wl_unlink(struct iotap_workload_ctx *c, int dirfd, uint64_t parent, const char *name,
	      uint64_t ino)
{
	return unlink_common(c, dirfd, parent, name, ino, 0);
}

int wl_unlink_old(struct iotap_workload_ctx *c, int dirfd, uint64_t parent, const char *name)
{
	struct stat st;

	/*
	 * bonnie++ and iozone unlink their file before creating it; through a
	 * mount, a missing name is a failed LOOKUP, never an UNLINK.
	 */
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW))
		return 0;
	return unlink_common(c, dirfd, parent, name, st.st_ino, 0);
}

int wl_rmdir(struct iotap_workload_ctx *c, int dirfd, uint64_t parent, const char *name,
	     uint64_t ino)
{
	return unlink_common(c, dirfd, parent, name, ino, AT_REMOVEDIR);
}

int wl_mkdir(struct iotap_workload_ctx *c, int dirfd, uint64_t parent, const char *name,
	     mode_t mode, uint64_t *ino)
{
	struct iotap_trace_rec r;
	struct stat st;
	uint64_t t0 = op_begin(c);
	int ret = mkdirat(dirfd, name, mode);
	int err = ret ? errno : 0;

	*ino = 0;
	if (!ret && !fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW))
		*ino = st.st_ino;
	if (c->rec) {
		rec_op(c, &r, IOTAP_OP_MKDIR, t0, -err);
		r.file = *ino;
		r.file2 = parent;
		r.mode = mode;
		if (ret) {
			r.name = name;
			r.name_len = (uint32_t)strlen(name);
		}
		iotap_trace_record(c->rec, &r);
		if (!ret)
			rec_name(c, *ino, parent, &st, name, r.time_ns);
	}
	return ret ? wl_fail(c, -err, "mkdir '%s'", name) : 0;
}

int wl_opendir(struct iotap_workload_ctx *c, struct wl_dir *d, int dirfd, const char *name)
{
	struct iotap_trace_rec r;
	struct stat st;
	uint64_t t0;
	int err = 0;

	memset(d, 0, sizeof(*d));
	d->fd = -1;			/* wl_closedir() after a failure is a no-op */
	d->cap = 32768;			/* glibc readdir(3)'s buffer size */
	d->buf = malloc(d->cap);
	if (!d->buf)
		return wl_fail(c, -ENOMEM, "open directory '%s'", name);
	d->fh = atomic_fetch_add(&c->next_fh, 1) + 1;
	t0 = op_begin(c);
	d->fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (d->fd < 0)
		err = errno;
	if (d->fd >= 0 && !fstat(d->fd, &st))
		d->ino = st.st_ino;
	if (c->rec) {
		rec_op(c, &r, IOTAP_OP_OPENDIR, t0, -err);
		r.file = d->ino;
		r.fh = d->fd >= 0 ? d->fh : 0;
		r.flags = O_RDONLY | O_DIRECTORY;
		iotap_trace_record(c->rec, &r);
	}
	if (d->fd < 0) {
		free(d->buf);
		d->buf = NULL;
		return wl_fail(c, -err, "open directory '%s'", name);
	}
	return 0;
}

int wl_readdir(struct iotap_workload_ctx *c, struct wl_dir *d, const char **name, uint64_t *ino)
{
	struct dirent64 *e;

	if (d->pos >= d->len) {
		struct iotap_trace_rec r;
		uint64_t t0 = op_begin(c);
		ssize_t n = getdents64(d->fd, d->buf, d->cap);
		int err = n < 0 ? errno : 0;

		if (c->rec) {
			uint64_t entries = 0;
			size_t p;

			for (p = 0; n > 0 && p < (size_t)n;
			     p += ((struct dirent64 *)(d->buf + p))->d_reclen)
				entries++;
			rec_op(c, &r, IOTAP_OP_READDIR, t0, n < 0 ? -err : n);
			r.file = d->ino;
			r.fh = d->fh;
			r.offset = d->cookie;
			r.length = d->cap;
			r.aux = entries;
			iotap_trace_record(c->rec, &r);
		}
		if (n < 0)
			return wl_fail(c, -err, "read directory");
		if (n == 0)
			return 0;
		d->len = (size_t)n;
		d->pos = 0;
	}
	e = (struct dirent64 *)(d->buf + d->pos);
	d->pos += e->d_reclen;
	d->cookie = (uint64_t)e->d_off;
	*name = e->d_name;
	*ino = e->d_ino;
	return 1;
}

void wl_closedir(struct iotap_workload_ctx *c, struct wl_dir *d)
{
	struct iotap_trace_rec r;
	uint64_t t0;
	int ret;

	if (d->fd < 0)
		return;
	t0 = op_begin(c);
	ret = close(d->fd);
	if (c->rec) {
		rec_op(c, &r, IOTAP_OP_RELEASEDIR, t0, ret ? -errno : 0);
		r.file = d->ino;
		r.fh = d->fh;
		iotap_trace_record(c->rec, &r);
	}
	d->fd = -1;
	free(d->buf);
	d->buf = NULL;
}

/* stdio cookie: buffered putc/getc whose real system calls are recorded */
static ssize_t ck_read(void *cookie, char *buf, size_t size)
{
	struct wl_file *f = cookie;
	ssize_t n = wl_read(f->c, f, buf, size);

	if (n < 0) {
		errno = (int)-n;
		return -1;
	}
	return n;
}

static ssize_t ck_write(void *cookie, const char *buf, size_t size)
{
	struct wl_file *f = cookie;
	ssize_t n = wl_write(f->c, f, buf, size);

	if (n < 0) {
		errno = (int)-n;
		return -1;
	}
	return n;
}

static int ck_seek(void *cookie, off64_t *pos, int whence)
{
	struct wl_file *f = cookie;
	off_t to = lseek(f->fd, *pos, whence);

	if (to < 0)
		return -1;
	f->pos = (uint64_t)to;
	*pos = to;
	return 0;
}

static int ck_close(void *cookie)
{
	(void)cookie;
	return 0;	/* the descriptor is closed (and recorded) by wl_close */
}

int wl_stdio_open(struct iotap_workload_ctx *c, struct wl_file *f, const char *mode)
{
	static const cookie_io_functions_t io = {
		.read = ck_read, .write = ck_write, .seek = ck_seek, .close = ck_close,
	};
	struct stat st;

	f->stream = fopencookie(f, mode, io);
	if (!f->stream)
		return wl_fail(c, -errno, "stdio on '%s'", f->name);
	/*
	 * The buffer fopen() would get, st_blksize bytes (a cookie stream
	 * would get BUFSIZ): so the kernel sees the writes 1.03 made.
	 */
	if (!fstat(f->fd, &st) && st.st_blksize > 0) {
		f->sbuf = malloc((size_t)st.st_blksize);
		if (f->sbuf)
			setvbuf(f->stream, f->sbuf, _IOFBF, (size_t)st.st_blksize);
	}
	return 0;
}

void wl_drop_caches(struct iotap_workload_ctx *c)
{
	int fd;

	if (!(c->flags & IOTAP_WORKLOAD_DROP_CACHES))
		return;
	sync();
	fd = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	/* best effort: the CLI allows the flag only to root */
	if (write(fd, "3\n", 2) < 0) {
		close(fd);
		return;
	}
	close(fd);
}

/* --- phases ---------------------------------------------------------------- */

static void mark(struct iotap_workload_ctx *c, const char *name, unsigned int kind,
		 uint64_t *t, uint64_t *u, uint64_t *s)
{
	struct iotap_trace_rec r;

	/* CPU is read on the inside of the span: after the BEGIN time, before END's */
	if (kind == IOTAP_PHASE_END)
		*t = c->rec ? iotap_trace_op_begin(c->rec) : wl_now();
	wl_cpu(c, u, s);
	if (kind == IOTAP_PHASE_BEGIN)
		*t = c->rec ? iotap_trace_op_begin(c->rec) : wl_now();
	if (!c->rec)
		return;
	rec_base(c, &r, IOTAP_REC_PHASE, *t);
	r.flags = kind;
	r.offset = *u;
	r.length = *s;
	r.name = name;
	r.name_len = (uint32_t)strlen(name);
	iotap_trace_record(c->rec, &r);
}

void wl_phase_begin(struct iotap_workload_ctx *c, struct wl_span *s, const char *name,
		    uint64_t total_units, uint64_t unit_bytes)
{
	wl_drop_caches(c);
	memset(s, 0, sizeof(*s));
	s->name = name;
	c->ph_name = name;
	c->ph_total = total_units;
	c->ph_unit_bytes = unit_bytes;
	atomic_store(&c->ph_done, 0);
	c->ph_reported = 0;
	c->ph_last_done = 0;
	mark(c, name, IOTAP_PHASE_BEGIN, &s->t0, &s->u0, &s->s0);
	c->ph_t0 = s->t0;
	c->ph_last_t = s->t0;
	s->open = 1;
}

void wl_phase_unit(struct iotap_workload_ctx *c, struct wl_span *s, uint64_t bytes,
		   uint64_t lat_ns)
{
	s->bytes += bytes;
	s->units++;
	if (lat_ns > s->lat_max)
		s->lat_max = lat_ns;
	atomic_store_explicit(&c->ph_done, s->units, memory_order_relaxed);
}

static void report(struct iotap_workload_ctx *c, uint64_t now, int done, int partial)
{
	struct iotap_workload_progress p = { 0 };
	uint64_t units = atomic_load_explicit(&c->ph_done, memory_order_relaxed);
	double dt = (double)(now - c->ph_last_t) / 1e9;

	p.target = c->dir;
	p.phase = c->ph_name;
	p.fraction = c->ph_total ? (double)units / (double)c->ph_total : 0;
	if (p.fraction > 1)
		p.fraction = 1;
	p.elapsed_s = (double)(now - c->ph_t0) / 1e9;
	if (done) {
		/* the final report gives the phase's average */
		dt = p.elapsed_s;
		c->ph_last_done = 0;
	}
	if (dt > 0) {
		p.units_per_s = (double)(units - c->ph_last_done) / dt;
		p.mb_per_s = p.units_per_s * (double)c->ph_unit_bytes / 1e6;
	}
	p.done = done;
	p.partial = partial;
	c->ph_last_t = now;
	c->ph_last_done = units;
	c->ph_reported = 1;
	c->progress(c->progress_arg, &p);
}

void wl_progress(struct iotap_workload_ctx *c)
{
	uint64_t now;

	if (!c->progress || !c->ph_name)
		return;
	now = wl_now();
	if (now - c->ph_t0 < 2000000000ull || now - c->ph_last_t < 1000000000ull)
		return;
	report(c, now, 0, 0);
}

void wl_phase_end(struct iotap_workload_ctx *c, struct wl_span *s,
		  struct iotap_workload_phase_result *r, int partial)
{
	if (!s->open)
		return;
	mark(c, s->name, IOTAP_PHASE_END, &s->t1, &s->u1, &s->s1);
	s->open = 0;
	if (c->progress && c->ph_reported)
		report(c, s->t1, 1, partial);
	c->ph_name = NULL;
	memset(r, 0, sizeof(*r));
	r->ran = 1;
	r->partial = partial;
	r->elapsed_s = (double)(s->t1 - s->t0) / 1e9;
	r->cpu_s = (double)((s->u1 - s->u0) + (s->s1 - s->s0)) / 1e9;
	r->latency_max_s = (double)s->lat_max / 1e9;
	r->bytes = s->bytes;
	r->units = s->units;
}

/* --- helper threads -------------------------------------------------------- */

struct thr_one {
	struct wl_threads *t;
	unsigned int i;
	int was_ready, was_done;
	pthread_t tid;
};

static __thread struct thr_one *tl_self;

void wl_threads_ready(struct wl_threads *t)
{
	pthread_mutex_lock(&t->lock);
	if (tl_self && !tl_self->was_ready) {
		tl_self->was_ready = 1;
		t->ready++;
		pthread_cond_signal(&t->cond);
	}
	while (!t->go)
		pthread_cond_wait(&t->go_cond, &t->lock);
	pthread_mutex_unlock(&t->lock);
}

/* Count the calling helper's CPU into the context and it as finished (once). */
static void thr_finish(struct thr_one *o)
{
	struct wl_threads *t = o->t;
	uint64_t u, s;

	if (o->was_done)
		return;
	thread_cpu(&u, &s);
	atomic_fetch_add(&t->c->helper_user_ns, u);
	atomic_fetch_add(&t->c->helper_sys_ns, s);
	pthread_mutex_lock(&t->lock);
	o->was_done = 1;
	if (!o->was_ready) {
		/* failed before getting ready: do not keep the others waiting */
		o->was_ready = 1;
		t->ready++;
	}
	t->finished++;
	pthread_cond_signal(&t->cond);
	pthread_mutex_unlock(&t->lock);
}

void wl_threads_done(struct wl_threads *t)
{
	(void)t;
	if (tl_self)
		thr_finish(tl_self);
}

static void *thr_main(void *p)
{
	struct thr_one *o = p;
	struct wl_threads *t = o->t;
	int rc;

	tl_self = o;
	rc = t->fn(t, o->i);
	thr_finish(o);
	pthread_mutex_lock(&t->lock);
	if (rc && !t->rc)
		t->rc = rc;
	pthread_mutex_unlock(&t->lock);
	tl_self = NULL;
	return NULL;
}

/* Owner: wait (with progress reports) until @count says stop waiting. */
static void thr_wait(struct iotap_workload_ctx *c, struct wl_threads *t, unsigned int *count)
{
	while (*count < t->started) {
		struct timespec ts;
		uint64_t dl = wl_now() + 250000000ull;

		ts.tv_sec = (time_t)(dl / 1000000000ull);
		ts.tv_nsec = (long)(dl % 1000000000ull);
		pthread_cond_timedwait(&t->cond, &t->lock, &ts);
		if (*count < t->started) {
			pthread_mutex_unlock(&t->lock);
			wl_progress(c);
			pthread_mutex_lock(&t->lock);
		}
	}
}

int wl_threads_run(struct iotap_workload_ctx *c, struct wl_threads *t)
{
	pthread_condattr_t ca;
	struct thr_one *one;
	unsigned int i;
	int ret;

	one = calloc(t->n, sizeof(*one));
	if (!one)
		return -ENOMEM;
	t->c = c;
	t->ready = t->finished = t->started = 0;
	t->go = !t->on_ready;
	t->rc = 0;
	pthread_mutex_init(&t->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&t->cond, &ca);
	pthread_condattr_destroy(&ca);
	pthread_cond_init(&t->go_cond, NULL);
	for (i = 0; i < t->n; i++) {
		one[i].t = t;
		one[i].i = i;
		ret = pthread_create(&one[i].tid, NULL, thr_main, &one[i]);
		if (ret) {
			t->rc = wl_fail(c, -ret, "start a thread");
			break;
		}
		pthread_mutex_lock(&t->lock);
		t->started++;
		pthread_mutex_unlock(&t->lock);
	}
	pthread_mutex_lock(&t->lock);
	if (t->on_ready) {
		thr_wait(c, t, &t->ready);
		/* every helper has its files open: the phase starts now */
		pthread_mutex_unlock(&t->lock);
		t->on_ready(t);
		pthread_mutex_lock(&t->lock);
		t->go = 1;
		pthread_cond_broadcast(&t->go_cond);
		if (t->on_go) {
			pthread_mutex_unlock(&t->lock);
			t->on_go(t);
			pthread_mutex_lock(&t->lock);
		}
	}
	thr_wait(c, t, &t->finished);
	pthread_mutex_unlock(&t->lock);
	if (t->on_done)
		t->on_done(t);
	for (i = 0; i < t->started; i++)
		pthread_join(one[i].tid, NULL);
	pthread_cond_destroy(&t->go_cond);
	pthread_cond_destroy(&t->cond);
	pthread_mutex_destroy(&t->lock);
	free(one);
	return t->rc;
}

/* --- the generic data phase ------------------------------------------------ */

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

void *wl_buf_alloc(size_t len)
{
	void *p;

	if (posix_memalign(&p, 4096, len ? len : 1))
		return NULL;
	memset(p, 0, len);
	return p;
}

const char *wl_size_name(uint64_t bytes, char *buf, size_t len)
{
	if (bytes && !(bytes % (1ull << 30)))
		snprintf(buf, len, "%" PRIu64 "g", bytes >> 30);
	else if (bytes && !(bytes % (1ull << 20)))
		snprintf(buf, len, "%" PRIu64 "m", bytes >> 20);
	else if (bytes && !(bytes % 1024))
		snprintf(buf, len, "%" PRIu64 "k", bytes >> 10);
	else
		snprintf(buf, len, "%" PRIu64, bytes);
	return buf;
}

/* pgsql: temporary until the sys layer lands */

/*
 * pwrite(2)/pread(2), fallocate(2) and renameat(2), recorded as the
 * capture daemon records WRITE/READ, FALLOCATE and RENAME (fs/capture.c's
 * table); sync_file_range(2) is issued but not recorded (FUSE has no
 * request for it, so a capture never sees it either, as with lseek(2));
 * wl_mark() writes a PHASE marker from any thread with the CPU figure its
 * caller measured (pgsql's roles run across phases, so the owner's
 * RUSAGE_THREAD alone would miss them).
 */
ssize_t wl_pwrite(struct iotap_workload_ctx *c, struct wl_file *f, const void *buf, size_t len,
		  uint64_t off)
{
	uint64_t t0 = op_begin(c);
	ssize_t n = pwrite(f->fd, buf, len, (off_t)off);
	int err = n < 0 ? errno : 0;

	if (c->rec)
		rec_data(c, IOTAP_OP_WRITE, f, t0, off, len, n < 0 ? -err : n);
	if (n < 0)
		return wl_fail(c, -err, "write '%s' at %" PRIu64, f->name, off);
	return n;
}

ssize_t wl_pread(struct iotap_workload_ctx *c, struct wl_file *f, void *buf, size_t len,
		 uint64_t off)
{
	uint64_t t0 = op_begin(c);
	ssize_t n = pread(f->fd, buf, len, (off_t)off);
	int err = n < 0 ? errno : 0;

	if (c->rec)
		rec_data(c, IOTAP_OP_READ, f, t0, off, len, n < 0 ? -err : n);
	if (n < 0)
		return wl_fail(c, -err, "read '%s' at %" PRIu64, f->name, off);
	return n;
}

int wl_fallocate(struct iotap_workload_ctx *c, struct wl_file *f, int mode, uint64_t off,
		 uint64_t len)
{
	struct iotap_trace_rec r;
	uint64_t t0 = op_begin(c);
	int ret = fallocate(f->fd, mode, (off_t)off, (off_t)len);
	int err = ret ? errno : 0;

	if (c->rec) {
		rec_op(c, &r, IOTAP_OP_FALLOCATE, t0, -err);
		r.file = f->ino;
		r.fh = f->fh;
		r.offset = off;
		r.length = len;
		r.flags = (uint32_t)mode;
		iotap_trace_record(c->rec, &r);
	}
	return ret ? wl_fail(c, -err, "fallocate '%s' at %" PRIu64, f->name, off) : 0;
}

int wl_rename(struct iotap_workload_ctx *c, int olddirfd, uint64_t oldparent, const char *oldname,
	      int newdirfd, uint64_t newparent, const char *newname)
{
	struct iotap_trace_rec r;
	struct stat st;
	uint64_t t0 = op_begin(c);
	int ret = renameat(olddirfd, oldname, newdirfd, newname);
	int err = ret ? errno : 0;

	if (c->rec) {
		rec_op(c, &r, IOTAP_OP_RENAME, t0, -err);
		r.file2 = newparent;
		r.aux = oldparent;
		if (!ret && !fstatat(newdirfd, newname, &st, AT_SYMLINK_NOFOLLOW)) {
			r.file = st.st_ino;
			r.mode = st.st_mode;
		}
		if (!r.file) {
			r.name = oldname;
			r.name_len = (uint32_t)strlen(oldname);
		}
		iotap_trace_record(c->rec, &r);
		if (r.file)
			rec_name(c, r.file, newparent, &st, newname, r.time_ns);
	}
	return ret ? wl_fail(c, -err, "rename '%s' to '%s'", oldname, newname) : 0;
}

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
	struct iotap_trace_rec r;

	*t = c->rec ? iotap_trace_op_begin(c->rec) : wl_now();
	if (!c->rec)
		return;
	rec_base(c, &r, IOTAP_REC_PHASE, *t);
	r.flags = kind;
	/* 0/0 reads as "no CPU figure" (see wl_cpu) */
	r.offset = user_ns || sys_ns ? user_ns : 1;
	r.length = sys_ns;
	r.name = name;
	r.name_len = (uint32_t)strlen(name);
	iotap_trace_record(c->rec, &r);
}
