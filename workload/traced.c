// SPDX-License-Identifier: MIT
/*
 * traced.c - the system calls of the workload models, traced: each wl_
 * wrapper says in the trace's terms what it does and hands it to the one
 * traced-syscall layer (workload/sys/sys.h), which the replayer uses too
 *
 * Tracing cost: with a trace, each system call costs two clock reads
 * (vDSO), one memory barrier and one copy into this thread's recorder
 * buffer; the recorder never blocks, it drops and counts instead. Without
 * a trace the wrappers are the bare system calls behind one switch. The
 * stdio streams of bonnie++ 1.03's putc/getc phases sit on the same
 * wrappers (a cookie), so their real system calls are what is recorded.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sys.h"
#include "workload_i.h"

/* A call of this context's calling thread, in the trace's terms (sys.h). */
static inline void call_init(struct iotap_workload_ctx *c, struct sys_call *sc, unsigned int op)
{
	*sc = (struct sys_call){
		.op = (uint16_t)op,
		.who = { sys_tid(), c->pid, c->uid, c->gid },
		.fd = -1, .at = AT_FDCWD, .at2 = AT_FDCWD,
	};
}

/* A data call on @f: the hot path (bonnie's per-char phases are one per byte). */
static inline void call_data(struct iotap_workload_ctx *c, struct sys_call *sc, unsigned int op,
			     const struct wl_file *f, size_t len, uint64_t off)
{
	call_init(c, sc, op);
	sc->fd = f->fd;
	sc->file = f->ino;
	sc->fh = f->fh;
	sc->offset = off;
	sc->length = len;
	sc->flags = f->opf;
}

static void rec_name(struct iotap_workload_ctx *c, const struct sys_call *sc, uint64_t file,
		     uint64_t parent, const struct stat *st, const char *name)
{
	sys_record_name(c->rec, &sc->who, file, parent, st->st_mode, st->st_uid, st->st_gid,
			(uint64_t)st->st_size, 0, name, sc->t0);
}

/*
 * A NAME record for a file a workload opened: always when it created it (a
 * new binding, perhaps of a reused inode number), and the first time it
 * opens a file that was there before the run (dd --read of an existing
 * file), so that every file id of the trace is bound, with the size it had.
 */
static int first_seen(struct iotap_workload_ctx *c, uint64_t ino, int oflags)
{
	void *v;
	int had;

	pthread_mutex_lock(&c->named_lock);
	had = iotap_map_put(&c->named, ino, &v);
	pthread_mutex_unlock(&c->named_lock);
	return (oflags & O_CREAT) || had == 0;
}

int wl_open(struct iotap_workload_ctx *c, struct wl_file *f, int dirfd, uint64_t parent,
	    const char *name, int oflags, mode_t mode)
{
	struct sys_call sc;
	struct stat st;
	int named;

	memset(f, 0, sizeof(*f));
	f->fd = -1;
	f->name = name;
	f->c = c;
	f->oflags = oflags;
	f->fh = atomic_fetch_add(&c->next_fh, 1) + 1;
	f->opf = (oflags & O_DIRECT ? IOTAP_OPF_DIRECT : 0) |
		 (oflags & O_DSYNC ? IOTAP_OPF_SYNC : 0);
	call_init(c, &sc, oflags & O_CREAT ? IOTAP_OP_CREATE : IOTAP_OP_OPEN);
	sc.at = dirfd;
	sc.path = name;
	sc.oflags = oflags;
	sc.flags = (uint32_t)oflags;
	if (oflags & O_CREAT) {
		sc.file2 = parent;
		sc.mode = mode;
		sc.name = name;
		sc.how = SYS_NAME_FAILED;
	}
	sys_issue(c->rec, &sc);
	if (c->rec) {
		if (sc.newfd >= 0 && !fstat(sc.newfd, &st))
			f->ino = st.st_ino;
		sc.file = f->ino;
		sc.fh = sc.newfd >= 0 ? f->fh : 0;
		/* an existing file is bound before its open, a new one by its create */
		named = sc.newfd >= 0 && first_seen(c, f->ino, oflags);
		if (named && !(oflags & O_CREAT))
			rec_name(c, &sc, f->ino, parent, &st, name);
		sys_record(c->rec, &sc);
		if (named && (oflags & O_CREAT))
			rec_name(c, &sc, f->ino, parent, &st, name);
	}
	if (sc.newfd < 0)
		return wl_fail(c, (int)sc.result, "%s '%s'", oflags & O_CREAT ? "create" : "open",
			       name);
	f->fd = sc.newfd;
	return 0;
}

ssize_t wl_write(struct iotap_workload_ctx *c, struct wl_file *f, const void *buf, size_t len)
{
	struct sys_call sc;
	int64_t n;

	call_data(c, &sc, IOTAP_OP_WRITE, f, len, f->pos);
	sc.how = SYS_AT_POS;
	sc.data = buf;
	n = sys_do(c->rec, &sc);
	if (n < 0)
		return wl_fail(c, (int)n, "write '%s' at %" PRIu64, f->name, f->pos);
	f->pos += (uint64_t)n;
	return (ssize_t)n;
}

ssize_t wl_read(struct iotap_workload_ctx *c, struct wl_file *f, void *buf, size_t len)
{
	struct sys_call sc;
	int64_t n;

	call_data(c, &sc, IOTAP_OP_READ, f, len, f->pos);
	sc.how = SYS_AT_POS;
	sc.buf = buf;
	n = sys_do(c->rec, &sc);
	if (n < 0)
		return wl_fail(c, (int)n, "read '%s' at %" PRIu64, f->name, f->pos);
	f->pos += (uint64_t)n;
	return (ssize_t)n;
}

ssize_t wl_pwrite(struct iotap_workload_ctx *c, struct wl_file *f, const void *buf, size_t len,
		  uint64_t off)
{
	struct sys_call sc;
	int64_t n;

	call_data(c, &sc, IOTAP_OP_WRITE, f, len, off);
	sc.data = buf;
	n = sys_do(c->rec, &sc);
	if (n < 0)
		return wl_fail(c, (int)n, "pwrite '%s' at %" PRIu64, f->name, off);
	return (ssize_t)n;
}

/* pread(2) at @off; with @ns also timed without a trace, its dur_ns there. */
static ssize_t pread_at(struct iotap_workload_ctx *c, struct wl_file *f, void *buf, size_t len,
			uint64_t off, uint64_t *ns)
{
	struct sys_call sc;
	int64_t n;

	call_data(c, &sc, IOTAP_OP_READ, f, len, off);
	sc.buf = buf;
	if (ns)
		sc.how |= SYS_TIMED;
	n = sys_do(c->rec, &sc);
	if (ns)
		*ns = sc.t1 > sc.t0 ? sc.t1 - sc.t0 : 0;	/* the record's dur_ns */
	if (n < 0)
		return wl_fail(c, (int)n, "pread '%s' at %" PRIu64, f->name, off);
	return (ssize_t)n;
}

ssize_t wl_pread(struct iotap_workload_ctx *c, struct wl_file *f, void *buf, size_t len,
		 uint64_t off)
{
	return pread_at(c, f, buf, len, off, NULL);
}

ssize_t wl_pread_ns(struct iotap_workload_ctx *c, struct wl_file *f, void *buf, size_t len,
		    uint64_t off, uint64_t *ns)
{
	return pread_at(c, f, buf, len, off, ns);
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
	uint64_t ns;

	return wl_fsync_ns(c, f, datasync, &ns);
}

int wl_fsync_ns(struct iotap_workload_ctx *c, struct wl_file *f, int datasync, uint64_t *ns)
{
	struct sys_call sc;
	int64_t rc;

	call_init(c, &sc, IOTAP_OP_FSYNC);
	sc.fd = f->fd;
	sc.file = f->ino;
	sc.fh = f->fh;
	sc.flags = datasync ? IOTAP_OPF_DATASYNC : 0;
	sc.how |= SYS_TIMED;		/* timed also without a trace */
	rc = sys_do(c->rec, &sc);
	*ns = sc.t1 > sc.t0 ? sc.t1 - sc.t0 : 0;
	if (rc)
		return wl_fail(c, (int)sc.result, "%s '%s'", datasync ? "fdatasync" : "fsync",
			       f->name);
	return 0;
}

int wl_fsync_dir(struct iotap_workload_ctx *c, int fd, uint64_t ino)
{
	struct sys_call sc;

	call_init(c, &sc, IOTAP_OP_FSYNCDIR);
	sc.fd = fd;
	sc.file = ino;
	return sys_do(c->rec, &sc) ? wl_fail(c, (int)sc.result, "fsync of a directory") : 0;
}

int wl_fallocate(struct iotap_workload_ctx *c, struct wl_file *f, int mode, uint64_t off,
		 uint64_t len)
{
	struct sys_call sc;

	call_init(c, &sc, IOTAP_OP_FALLOCATE);
	sc.fd = f->fd;
	sc.file = f->ino;
	sc.fh = f->fh;
	sc.offset = off;
	sc.length = len;
	sc.flags = (uint32_t)mode;
	if (sys_do(c->rec, &sc))
		return wl_fail(c, (int)sc.result, "fallocate '%s' at %" PRIu64, f->name, off);
	return 0;
}

int wl_close(struct iotap_workload_ctx *c, struct wl_file *f)
{
	struct sys_call sc;
	int err = 0;

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
	call_init(c, &sc, IOTAP_OP_RELEASE);
	sc.fd = f->fd;
	sc.file = f->ino;
	sc.fh = f->fh;
	sc.flags = (uint32_t)f->oflags;
	sys_do(c->rec, &sc);
	f->fd = -1;
	if (err)
		return wl_fail(c, -err, "flush '%s'", f->name);
	return sc.result ? wl_fail(c, (int)sc.result, "close '%s'", f->name) : 0;
}

int wl_stat(struct iotap_workload_ctx *c, int dirfd, const char *name, struct stat *st)
{
	struct sys_call sc;

	call_init(c, &sc, IOTAP_OP_GETATTR);
	sc.at = dirfd;
	sc.path = name;
	sc.st = st;
	sc.name = name;
	sc.how = SYS_NAME_FAILED;
	sys_issue(c->rec, &sc);
	if (c->rec) {
		sc.file = sc.result ? 0 : st->st_ino;
		sys_record(c->rec, &sc);
	}
	return sc.result ? wl_fail(c, (int)sc.result, "stat '%s'", name) : 0;
}

static int unlink_common(struct iotap_workload_ctx *c, int dirfd, uint64_t parent,
			 const char *name, uint64_t ino, int rmdir)
{
	struct sys_call sc;
	struct stat st;

	call_init(c, &sc, rmdir ? IOTAP_OP_RMDIR : IOTAP_OP_UNLINK);
	sc.at = dirfd;
	sc.path = name;
	sc.file2 = parent;
	/* the record wants the victim's id and mode: one untraced lookup when tracing */
	if (c->rec && !fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW)) {
		ino = st.st_ino;
		sc.mode = st.st_mode;
	}
	sys_issue(c->rec, &sc);
	if (c->rec) {
		sc.file = sc.result ? 0 : ino;
		if (sc.result || !ino)
			sc.name = name;
		sys_record(c->rec, &sc);
	}
	return sc.result ? wl_fail(c, (int)sc.result, "%s '%s'", rmdir ? "rmdir" : "unlink",
				   name) : 0;
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
	return unlink_common(c, dirfd, parent, name, ino, 1);
}

int wl_rename(struct iotap_workload_ctx *c, int olddirfd, uint64_t oldparent, const char *oldname,
	      int newdirfd, uint64_t newparent, const char *newname)
{
	struct sys_call sc;
	struct stat st;
	int known = 0;

	call_init(c, &sc, IOTAP_OP_RENAME);
	sc.at = olddirfd;
	sc.path = oldname;
	sc.at2 = newdirfd;
	sc.path2 = newname;
	sc.file2 = newparent;
	sc.aux = oldparent;
	/* as for unlink: the moved file's id and mode, by one untraced lookup */
	if (c->rec && !fstatat(olddirfd, oldname, &st, AT_SYMLINK_NOFOLLOW)) {
		known = 1;
		sc.mode = st.st_mode;
	}
	sys_issue(c->rec, &sc);
	if (c->rec) {
		sc.file = sc.result || !known ? 0 : st.st_ino;
		if (!sc.file)
			sc.name = oldname;
		sys_record(c->rec, &sc);
		/* FORMAT.md: a rename is a rebinding NAME after the RENAME op */
		if (sc.file)
			rec_name(c, &sc, sc.file, newparent, &st, newname);
	}
	return sc.result ? wl_fail(c, (int)sc.result, "rename '%s' to '%s'", oldname, newname)
			 : 0;
}

int wl_open_root(struct iotap_workload_ctx *c, const char *path, int *fd, uint64_t *ino)
{
	struct sys_who who = { sys_tid(), c->pid, c->uid, c->gid };
	struct stat st;

	*fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (*fd < 0)
		return wl_fail(c, -errno, "open directory '%s'", path);
	if (fstat(*fd, &st)) {
		int err = -errno;

		close(*fd);
		*fd = -1;
		return wl_fail(c, err, "stat '%s'", path);
	}
	*ino = st.st_ino;
	/* as ctx.c binds the target: the path as given, under no parent */
	if (c->rec)
		sys_record_name(c->rec, &who, st.st_ino, 0, st.st_mode, st.st_uid, st.st_gid,
				(uint64_t)st.st_size, 0, path, iotap_trace_op_begin(c->rec));
	return 0;
}

int wl_mkdir(struct iotap_workload_ctx *c, int dirfd, uint64_t parent, const char *name,
	     mode_t mode, uint64_t *ino)
{
	struct sys_call sc;
	struct stat st;

	call_init(c, &sc, IOTAP_OP_MKDIR);
	sc.at = dirfd;
	sc.path = name;
	sc.file2 = parent;
	sc.mode = mode;
	sc.name = name;
	sc.how = SYS_NAME_FAILED;
	sys_issue(c->rec, &sc);
	*ino = 0;
	if (!sc.result && !fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW))
		*ino = st.st_ino;
	if (c->rec) {
		sc.file = *ino;
		sys_record(c->rec, &sc);
		if (!sc.result)
			rec_name(c, &sc, *ino, parent, &st, name);
	}
	return sc.result ? wl_fail(c, (int)sc.result, "mkdir '%s'", name) : 0;
}

int wl_opendir(struct iotap_workload_ctx *c, struct wl_dir *d, int dirfd, const char *name)
{
	struct sys_call sc;
	struct stat st;

	memset(d, 0, sizeof(*d));
	d->fd = -1;			/* wl_closedir() after a failure is a no-op */
	d->cap = 32768;			/* glibc readdir(3)'s buffer size */
	d->buf = malloc(d->cap);
	if (!d->buf)
		return wl_fail(c, -ENOMEM, "open directory '%s'", name);
	d->fh = atomic_fetch_add(&c->next_fh, 1) + 1;
	call_init(c, &sc, IOTAP_OP_OPENDIR);
	sc.at = dirfd;
	sc.path = name;
	sc.oflags = O_RDONLY | O_DIRECTORY;
	sc.flags = O_RDONLY | O_DIRECTORY;
	sys_issue(c->rec, &sc);
	d->fd = sc.newfd;
	if (d->fd >= 0 && !fstat(d->fd, &st))
		d->ino = st.st_ino;
	if (c->rec) {
		sc.file = d->ino;
		sc.fh = d->fd >= 0 ? d->fh : 0;
		sys_record(c->rec, &sc);
	}
	if (d->fd < 0) {
		free(d->buf);
		d->buf = NULL;
		return wl_fail(c, (int)sc.result, "open directory '%s'", name);
	}
	return 0;
}

int wl_readdir(struct iotap_workload_ctx *c, struct wl_dir *d, const char **name, uint64_t *ino)
{
	struct dirent64 *e;

	if (d->pos >= d->len) {
		struct sys_call sc;
		int64_t n;

		call_init(c, &sc, IOTAP_OP_READDIR);
		sc.fd = d->fd;
		sc.buf = d->buf;
		sc.file = d->ino;
		sc.fh = d->fh;
		sc.offset = d->cookie;
		sc.length = d->cap;
		n = sys_do(c->rec, &sc);
		if (n < 0)
			return wl_fail(c, (int)n, "read directory");
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
	struct sys_call sc;

	if (d->fd < 0)
		return;
	call_init(c, &sc, IOTAP_OP_RELEASEDIR);
	sc.fd = d->fd;
	sc.file = d->ino;
	sc.fh = d->fh;
	sys_do(c->rec, &sc);
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
