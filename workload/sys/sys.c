// SPDX-License-Identifier: MIT
/*
 * sys.c - issue one system call on a target, time it, and write its OP
 * record per trace/FORMAT.md's per-op field table
 *
 * How each op is issued (the replayer's rules, which the models share):
 * LOOKUP and GETATTR are fstatat(2) (AT_SYMLINK_NOFOLLOW) or fstat(2);
 * FLUSH is close(dup(fd)), which is what sends a flush to a filesystem;
 * RELEASE and RELEASEDIR are close(2); READ/WRITE are pread(2)/pwrite(2)
 * at the offset, or read(2)/write(2) at the descriptor's position
 * (SYS_AT_POS: what bonnie++, iozone and dd do); READDIR is getdents64(2)
 * with the recorded buffer size, optionally rewinding first and returning
 * at most @want entries (a FUSE entry is larger than a dirent64: the rest
 * is left for the next call); SETATTR's time bits set "now" (the trace
 * does not carry the times); calls with no *at() form (statfs, xattrs,
 * truncate by path) use base/path. Open-type ops issue @oflags as given:
 * which flags to drop is the caller's choice (replay drops O_APPEND, the
 * models use their own).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "sys.h"

static atomic_int g_stop;
static __thread uint32_t tl_tid;

/* base + "/" + path for calls with no *at() form, in @buf */
#define ABS_MAX	(2 * PATH_MAX + 2)

void sys_stop(void)
{
	atomic_store_explicit(&g_stop, 1, memory_order_relaxed);
}

int sys_stopped(void)
{
	return atomic_load_explicit(&g_stop, memory_order_relaxed);
}

uint32_t sys_tid(void)
{
	if (!tl_tid)
		tl_tid = (uint32_t)syscall(SYS_gettid);
	return tl_tid;
}

static const char *abs_path(const struct sys_call *sc, char *buf)
{
	snprintf(buf, ABS_MAX, "%s/%s", sc->base ? sc->base : ".", sc->path ? sc->path : "");
	return buf;
}

static int64_t neg(long ret)
{
	return ret < 0 ? -(int64_t)errno : ret;
}

/*
 * The calls by base/path (no *at() form), out of line: their path buffer
 * stays off the stack frame of the data calls.
 */
static __attribute__((noinline)) int64_t by_path(const struct sys_call *sc)
{
	char buf[ABS_MAX];
	const char *p = abs_path(sc, buf);
	struct statfs sf;

	switch (sc->op) {
	case IOTAP_OP_SETATTR:
		return neg(truncate(p, (off_t)sc->offset));
	case IOTAP_OP_STATFS:
		return neg(statfs(p, &sf));
	case IOTAP_OP_SETXATTR:
		return neg(lsetxattr(p, sc->name ? sc->name : "", sc->data, (size_t)sc->length,
				     (int)sc->flags));
	case IOTAP_OP_GETXATTR:
		return neg(lgetxattr(p, sc->name ? sc->name : "", sc->length ? sc->buf : NULL,
				     (size_t)sc->length));
	case IOTAP_OP_LISTXATTR:
		return neg(llistxattr(p, sc->length ? sc->buf : NULL, (size_t)sc->length));
	case IOTAP_OP_REMOVEXATTR:
		return neg(lremovexattr(p, sc->name ? sc->name : ""));
	}
	return -ENOSYS;
}

static int64_t do_setattr(const struct sys_call *sc)
{
	int fd = sc->how & SYS_BY_FD ? sc->fd : -1;
	uint32_t m = sc->flags;
	long ret;

	if (m & SYS_SET_SIZE) {
		ret = fd >= 0 ? ftruncate(fd, (off_t)sc->offset) : by_path(sc);
		if (ret)
			return fd >= 0 ? -(int64_t)errno : ret;
	}
	if (m & SYS_SET_MODE) {
		ret = fd >= 0 ? fchmod(fd, sc->mode & 07777)
			      : fchmodat(sc->at, sc->path, sc->mode & 07777, 0);
		if (ret)
			return -(int64_t)errno;
	}
	if (m & (SYS_SET_UID | SYS_SET_GID)) {
		uint32_t u = (uint32_t)(sc->aux >> 32), g = (uint32_t)sc->aux;
		uid_t uid = (m & SYS_SET_UID) && u != 0xffffffffu ? u : (uid_t)-1;
		gid_t gid = (m & SYS_SET_GID) && g != 0xffffffffu ? g : (gid_t)-1;

		ret = fd >= 0 ? fchown(fd, uid, gid)
			      : fchownat(sc->at, sc->path, uid, gid, AT_SYMLINK_NOFOLLOW);
		if (ret)
			return -(int64_t)errno;
	}
	if (m & (SYS_SET_ATIME | SYS_SET_MTIME | SYS_SET_ATIME_NOW | SYS_SET_MTIME_NOW)) {
		struct timespec ts[2];

		ts[0].tv_sec = ts[1].tv_sec = 0;
		ts[0].tv_nsec = m & (SYS_SET_ATIME | SYS_SET_ATIME_NOW) ? UTIME_NOW : UTIME_OMIT;
		ts[1].tv_nsec = m & (SYS_SET_MTIME | SYS_SET_MTIME_NOW) ? UTIME_NOW : UTIME_OMIT;
		ret = fd >= 0 ? futimens(fd, ts)
			      : utimensat(sc->at, sc->path, ts, AT_SYMLINK_NOFOLLOW);
		if (ret)
			return -(int64_t)errno;
	}
	return 0;
}

static int64_t do_readdir(struct sys_call *sc)
{
	char *buf = sc->buf;
	uint64_t n = 0;
	int64_t ret;
	size_t p;

	if ((sc->how & SYS_REWIND) && lseek(sc->fd, 0, SEEK_SET) < 0)
		return -(int64_t)errno;
	ret = neg(syscall(SYS_getdents64, sc->fd, buf, (size_t)sc->length));
	for (p = 0; ret > 0 && p < (size_t)ret; p += ((struct dirent64 *)(buf + p))->d_reclen) {
		const struct dirent64 *d = (const struct dirent64 *)(buf + p);

		/* return as many entries as asked, and continue after the last one */
		if (++n == sc->want && p + d->d_reclen < (size_t)ret) {
			if (lseek(sc->fd, d->d_off, SEEK_SET) < 0)
				return -(int64_t)errno;
			ret = (int64_t)(p + d->d_reclen);
			break;
		}
	}
	sc->aux = n;
	return ret;
}

static int64_t do_call(struct sys_call *sc)
{
	struct stat stbuf, *st = sc->st ? sc->st : &stbuf;
	int64_t ret;

	switch (sc->op) {
	case IOTAP_OP_READ:
		if (sc->how & SYS_AT_POS)
			return neg(read(sc->fd, sc->buf, (size_t)sc->length));
		return neg(pread(sc->fd, sc->buf, (size_t)sc->length, (off_t)sc->offset));
	case IOTAP_OP_WRITE:
		if (sc->how & SYS_AT_POS)
			return neg(write(sc->fd, sc->data, (size_t)sc->length));
		return neg(pwrite(sc->fd, sc->data, (size_t)sc->length, (off_t)sc->offset));
	case IOTAP_OP_LOOKUP:
	case IOTAP_OP_GETATTR:
		if (sc->how & SYS_BY_FD)
			ret = neg(fstat(sc->fd, st));
		else
			ret = neg(fstatat(sc->at, sc->path, st, AT_SYMLINK_NOFOLLOW));
		if (!ret) {
			sc->mode = st->st_mode;
			if (sc->op == IOTAP_OP_GETATTR)
				sc->aux = (uint64_t)st->st_size;
		}
		return ret;
	case IOTAP_OP_SETATTR:
		return do_setattr(sc);
	case IOTAP_OP_READLINK:
		return neg(readlinkat(sc->at, sc->path, sc->buf, sc->cap));
	case IOTAP_OP_MKNOD:
		return neg(mknodat(sc->at, sc->path, sc->mode, (dev_t)sc->aux));
	case IOTAP_OP_MKDIR:
		return neg(mkdirat(sc->at, sc->path, sc->mode & 07777));
	case IOTAP_OP_UNLINK:
		return neg(unlinkat(sc->at, sc->path, 0));
	case IOTAP_OP_RMDIR:
		return neg(unlinkat(sc->at, sc->path, AT_REMOVEDIR));
	case IOTAP_OP_SYMLINK:
		return neg(symlinkat(sc->name ? sc->name : "", sc->at, sc->path));
	case IOTAP_OP_RENAME:
		return neg(renameat2(sc->at, sc->path, sc->at2, sc->path2, sc->flags));
	case IOTAP_OP_LINK:
		return neg(linkat(sc->at, sc->path, sc->at2, sc->path2, 0));
	case IOTAP_OP_OPEN:
	case IOTAP_OP_CREATE:
	case IOTAP_OP_OPENDIR:
		sc->newfd = openat(sc->at, sc->path, sc->oflags | O_CLOEXEC,
				   (mode_t)(sc->mode & 07777));
		return sc->newfd < 0 ? -(int64_t)errno : 0;
	case IOTAP_OP_FLUSH: {
		int d = dup(sc->fd);

		if (d < 0)
			return -(int64_t)errno;
		return neg(close(d));
	}
	case IOTAP_OP_RELEASE:
	case IOTAP_OP_RELEASEDIR:
		return sc->fd >= 0 ? neg(close(sc->fd)) : 0;
	case IOTAP_OP_FSYNC:
	case IOTAP_OP_FSYNCDIR:
		return neg(sc->flags & IOTAP_OPF_DATASYNC ? fdatasync(sc->fd) : fsync(sc->fd));
	case IOTAP_OP_READDIR:
	case IOTAP_OP_READDIRPLUS:
		return do_readdir(sc);
	case IOTAP_OP_STATFS:
		if (sc->how & SYS_BY_FD) {
			struct statfs sf;

			return neg(fstatfs(sc->fd, &sf));
		}
		return by_path(sc);
	case IOTAP_OP_SETXATTR:
	case IOTAP_OP_GETXATTR:
	case IOTAP_OP_LISTXATTR:
	case IOTAP_OP_REMOVEXATTR:
		return by_path(sc);
	case IOTAP_OP_ACCESS:
		return neg(faccessat(sc->at, sc->path, (int)sc->mode, 0));
	case IOTAP_OP_FALLOCATE:
		return neg(fallocate(sc->fd, (int)sc->flags, (off_t)sc->offset,
				     (off_t)sc->length));
	case IOTAP_OP_LSEEK:
		return neg(lseek(sc->fd, (off_t)sc->offset, (int)sc->flags));
	case IOTAP_OP_FLOCK:
		return neg(flock(sc->fd, (int)sc->aux));
	case IOTAP_OP_COPY_FILE_RANGE: {
		loff_t in_off = (loff_t)sc->offset, out_off = (loff_t)sc->aux;
		int out = openat(sc->at2, sc->path2, O_WRONLY | O_CLOEXEC);

		if (out < 0)
			return -(int64_t)errno;
		ret = neg(copy_file_range(sc->fd, &in_off, out, &out_off, (size_t)sc->length,
					  sc->flags));
		close(out);
		return ret;
	}
	}
	return -ENOSYS;
}

int64_t sys_issue(struct iotap_trace_recorder *rec, struct sys_call *sc)
{
	int timed = rec || (sc->how & SYS_TIMED);

	sc->newfd = -1;
	sc->t0 = rec ? iotap_trace_op_begin(rec) : timed ? iotap_trace_now_ns() : 0;
	sc->result = do_call(sc);
	sc->t1 = timed ? iotap_trace_now_ns() : 0;
	return sc->result;
}

int64_t sys_refuse(struct iotap_trace_recorder *rec, struct sys_call *sc, int64_t err)
{
	sc->newfd = -1;
	sc->t0 = rec ? iotap_trace_op_begin(rec) :
		 sc->how & SYS_TIMED ? iotap_trace_now_ns() : 0;
	sc->t1 = sc->t0;
	sc->result = err;
	return err;
}

void sys_record(struct iotap_trace_recorder *rec, const struct sys_call *sc)
{
	struct iotap_trace_rec r;

	iotap_trace_op_init(&r, sc->op);
	r.time_ns = sc->t0;
	r.dur_ns = sc->t1 > sc->t0 ? sc->t1 - sc->t0 : 0;
	r.tid = sc->who.tid;
	r.pid = sc->who.pid;
	r.uid = sc->who.uid;
	r.gid = sc->who.gid;
	r.file = sc->file;
	r.file2 = sc->file2;
	r.fh = sc->fh;
	r.offset = sc->offset;
	r.length = sc->length;
	r.result = sc->result;
	r.flags = sc->flags;
	r.mode = sc->mode;
	r.aux = sc->aux;
	if (sc->name && (!(sc->how & SYS_NAME_FAILED) || sc->result < 0)) {
		r.name = sc->name;
		r.name_len = sc->name_len ? sc->name_len
					  : (uint32_t)strnlen(sc->name, IOTAP_TRACE_NAME_MAX);
	}
	iotap_trace_record(rec, &r);
}

void sys_record_name(struct iotap_trace_recorder *rec, const struct sys_who *who,
		     uint64_t file, uint64_t parent, uint32_t mode, uint32_t uid, uint32_t gid,
		     uint64_t size, uint32_t flags, const char *name, uint64_t t)
{
	struct iotap_trace_rec r;

	name = name ? name : "";
	iotap_trace_name_init(&r, file, parent, mode, uid, gid, size, flags, name,
			      (uint32_t)strnlen(name, IOTAP_TRACE_NAME_MAX));
	r.time_ns = t;
	r.tid = who->tid;
	r.pid = who->pid;
	iotap_trace_record(rec, &r);
}

void sys_record_phase(struct iotap_trace_recorder *rec, const struct sys_who *who,
		      const char *name, unsigned int kind, uint64_t t, uint64_t user_ns,
		      uint64_t sys_ns, uint64_t aux)
{
	struct iotap_trace_rec r;

	iotap_trace_phase_init(&r, kind, name, name ? (uint32_t)strnlen(name, IOTAP_TRACE_NAME_MAX) : 0,
			       user_ns, sys_ns);
	iotap_trace_phase_set_unit_max_ns(&r, aux);
	r.time_ns = t;
	r.tid = who->tid;
	r.pid = who->pid;
	r.uid = who->uid;
	r.gid = who->gid;
	iotap_trace_record(rec, &r);
}
