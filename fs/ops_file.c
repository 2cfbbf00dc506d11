// SPDX-License-Identifier: MIT
/*
 * ops_file.c - requests on open files
 *
 * open, read, write_buf, flush, release, fsync, fallocate, lseek and
 * copy_file_range pass through to the backing fd held in struct fs_file
 * (fi->fh); ioctl, poll and bmap are answered ENOSYS and recorded with
 * IOTAP_OPF_REJECTED. getlk/setlk/flock are left undefined so the kernel
 * keeps POSIX and BSD locks local.
 *
 * Capture modes. Direct mode (default) sets direct_io on every open, so
 * one application read()/write() is one request with the application's
 * offset and size. The price: without FUSE_DIRECT_IO_ALLOW_MMAP, which
 * libfuse 3.14 cannot negotiate, the kernel refuses every MAP_SHARED
 * mapping of such a file with ENODEV before any request reaches us.
 * Cache mode uses the page cache, keep_cache and the writeback cache: the
 * kernel may then read a file opened O_WRONLY and handles O_APPEND itself,
 * so the backing file is opened O_RDWR and without O_APPEND (as
 * passthrough_ll does); shared writable mmap works.
 *
 * Data path. Reads pread() into the worker's aligned buffer (thread.c)
 * and reply from it, so the exact result is known and recorded. Writes
 * pwrite() straight from libfuse's request buffer, except on an O_DIRECT
 * backing fd: the request payload is not aligned, so it is copied into the
 * aligned buffer first (outside the timed backing call). fsync and
 * fdatasync are real, unlike libfuse's passthrough.c.
 *
 * struct fs_file lives from open/create to release; the kernel pins the
 * inode meanwhile, so f->inode needs no reference of its own.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fs_i.h"

int fs_backing_flags(struct fs_ctx *fs, int flags)
{
	flags &= ~(O_CREAT | O_EXCL | O_NOCTTY);
	if (fs->cache_mode) {
		if ((flags & O_ACCMODE) == O_WRONLY)
			flags = (flags & ~O_ACCMODE) | O_RDWR;
		flags &= ~O_APPEND;
	}
	return flags | O_CLOEXEC;
}

int fs_file_attach(struct fs_ctx *fs, struct fuse_file_info *fi, int fd,
		   struct fs_inode *inode)
{
	struct fs_file *f;

	f = malloc(sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->fd = fd;
	f->inode = inode;
	f->id = fs_next_fh(fs);
	f->opf = 0;
	f->nowait_no = false;
	/* a retried append would append twice: never tried without waiting */
	f->wnowait_no = (fi->flags & O_APPEND) != 0;
	if (fi->flags & O_DIRECT)
		f->opf |= IOTAP_OPF_DIRECT;
	else if (fs->cache_mode)
		f->opf |= IOTAP_OPF_CACHED;
	if (fi->flags & O_DSYNC)	/* O_SYNC includes O_DSYNC */
		f->opf |= IOTAP_OPF_SYNC;
	fi->fh = (uintptr_t)f;
	if (fs->cache_mode) {
		fi->direct_io = 0;
		fi->keep_cache = 1;
	} else {
		fi->direct_io = 1;
		fi->keep_cache = 0;
	}
	return 0;
}

int fs_kill_suidgid_as(const struct fs_caller *who, int fd, const char *path)
{
	struct stat st;
	mode_t m;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode) || !(st.st_mode & (S_ISUID | S_ISGID)))
		return 0;
	m = st.st_mode & 07777 & ~(mode_t)S_ISUID;
	if ((st.st_mode & S_ISGID) &&
	    ((st.st_mode & S_IXGRP) ||
	     (st.st_gid != who->gid && !fs_proc_in_group(who->pid, st.st_gid))))
		m &= ~(mode_t)S_ISGID;
	if (m == (st.st_mode & 07777))
		return 0;
	if ((path ? chmod(path, m) : fchmod(fd, m)) < 0)
		return -errno;
	return 0;
}

int fs_kill_suidgid(fuse_req_t req, int fd, const char *path)
{
	const struct fs_caller who = fs_req_caller(req);

	return fs_kill_suidgid_as(&who, fd, path);
}

void fs_file_detach(struct fuse_file_info *fi)
{
	struct fs_file *f = fs_file(fi);

	close(f->fd);
	free(f);
	fi->fh = 0;
}

static void fs_op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fs_ctx *fs = fs_req(req);
	struct fs_inode *inode = fs_ino(fs, ino);
	struct fs_capture op;
	int fd = -1, ret;

	fs_capture_start(&op, req, IOTAP_OP_OPEN, inode);
	op.rec.flags = fi->flags;
	ret = fs_capture_fault(&op);
	if (ret)
		goto out;
	fs_capture_io_begin(&op);
	fd = fs_inode_open(fs, inode, fs_backing_flags(fs, fi->flags));
	if (fd >= 0 && fs_req_kill_suidgid(fi, 0)) {
		ret = fs_kill_suidgid(req, fd, NULL);	/* O_TRUNC by a caller without CAP_FSETID */
		if (ret) {
			close(fd);
			fd = ret;
		}
	}
	fs_capture_io_end(&op);
	if (fd < 0) {
		ret = fd;
		goto out;
	}
	ret = fs_file_attach(fs, fi, fd, inode);
	if (ret) {
		close(fd);
		goto out;
	}
	op.rec.fh = fs_file(fi)->id;
out:
	fs_capture_end(&op, ret);
	if (ret)
		fuse_reply_err(req, -ret);
	else if (fuse_reply_open(req, fi))
		fs_file_detach(fi);
}

/*
 * pread/pwrite until @size bytes, end of file (a 0 return) or an error.
 * Return: bytes done, or -errno if nothing was done.
 */
static ssize_t pio_full(int fd, char *buf, size_t size, off_t off, bool write)
{
	size_t done = 0;

	while (done < size) {
		ssize_t n = write ? pwrite(fd, buf + done, size - done, off + done)
				  : pread(fd, buf + done, size - done, off + done);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return done ? (ssize_t)done : -errno;
		}
		if (n == 0)
			break;
		done += n;
	}
	return done;
}

/*
 * pio_full() on a ring thread: without waiting for the disk (RWF_NOWAIT).
 * Return: as pio_full(), or -EAGAIN when some of it would wait (a read not
 * in the page cache, a write that must read a partial page or is held by
 * dirty-page throttling): the helper does it all again, so what was done
 * is done twice, which is harmless but for appends (never tried here).
 * -EOPNOTSUPP: the backing file system cannot say (tmpfs and FUSE for
 * both, ext4 for buffered writes); the caller does it the plain way and
 * marks the file.
 */
static ssize_t pio_nowait(int fd, char *buf, size_t size, off_t off, bool write)
{
	size_t done = 0;

	while (done < size) {
		struct iovec iov = { buf + done, size - done };
		ssize_t n = write ? pwritev2(fd, &iov, 1, off + (off_t)done, RWF_NOWAIT)
				  : preadv2(fd, &iov, 1, off + (off_t)done, RWF_NOWAIT);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EOPNOTSUPP)
				return -errno;
			return done ? (ssize_t)done : -errno;
		}
		if (n == 0)
			break;
		done += n;
	}
	return done;
}

/*
 * Over io_uring a ring thread must not wait for the disk (fs_uring_nowait):
 * a read the page cache holds is served here, one that would wait goes to
 * a helper (timed from here), and one on an O_DIRECT file always waits,
 * so it goes before it starts.
 */
void fs_io_read(struct fs_io_req *r, size_t size, off_t off, struct fuse_file_info *fi)
{
	struct fs_file *f = fs_file(fi);
	struct fs_piece piece;
	struct fs_capture op;
	ssize_t ret;
	char *buf = NULL;
	bool nowait = fs_uring_nowait() && !CMM_LOAD_SHARED(f->nowait_no);

	if (caa_unlikely(nowait && (f->opf & IOTAP_OPF_DIRECT))) {
		fs_uring_handoff(NULL, -1, 0);
		r->reply->none(r);
		return;
	}
	fs_capture_start_as(&op, r->fs, &r->who, IOTAP_OP_READ, f->inode);
	op.rec.fh = f->id;
	op.rec.offset = off;
	op.rec.length = size;
	op.rec.flags = f->opf & (IOTAP_OPF_DIRECT | IOTAP_OPF_CACHED);
	ret = fs_capture_fault(&op);
	if (ret)
		goto out;
	/* over io_uring: straight into the reply buffer the kernel reads */
	buf = fs_uring_read_buf(size);
	if (!buf)
		buf = fs_thread_iobuf(op.t, size);
	if (!buf) {
		ret = -ENOMEM;
		goto out;
	}
	fs_capture_io_begin(&op);
	if (nowait && !op.fs->fail_op) {
		ret = pio_nowait(f->fd, buf, size, off, false);
		if (ret == -EAGAIN && fs_capture_handoff(&op)) {
			r->reply->none(r);	/* the helper replies */
			return;
		}
		if (ret == -EOPNOTSUPP)
			CMM_STORE_SHARED(f->nowait_no, true);
		if (ret == -EAGAIN || ret == -EOPNOTSUPP)
			ret = pio_full(f->fd, buf, size, off, false);
	} else {
		ret = pio_full(f->fd, buf, size, off, false);
	}
	fs_capture_io_end(&op);
out:
	/* after the call: a request handed over above must not take its piece */
	fs_calls_begin(&op, f, size, op.fs->max_read, &piece);
	fs_calls_end(&op, f, size, &piece, ret);
	fs_capture_end(&op, ret);
	if (ret < 0)
		r->reply->err(r, (int)-ret);
	else
		r->reply->data(r, buf, (size_t)ret);
}

void fs_io_write(struct fs_io_req *r, struct fuse_bufvec *in, off_t off,
		 struct fuse_file_info *fi)
{
	struct fs_file *f = fs_file(fi);
	size_t size = fuse_buf_size(in), asked = size;
	struct fs_piece piece;
	const char *data;
	struct fs_capture op;
	ssize_t ret;
	bool nowait = fs_uring_nowait();

	if (caa_unlikely(nowait && (f->opf & (IOTAP_OPF_DIRECT | IOTAP_OPF_SYNC)))) {
		/* over io_uring: it waits for the disk by its nature (fs_io_read) */
		fs_uring_handoff(NULL, -1, 0);
		r->reply->none(r);
		return;
	}
	fs_capture_start_as(&op, r->fs, &r->who, IOTAP_OP_WRITE, f->inode);
	op.rec.fh = f->id;
	op.rec.offset = off;
	op.rec.length = size;
	op.rec.flags = f->opf;
	op.rec.aux = fi->writepage;
	ret = fs_capture_fault(&op);
	if (ret)
		goto out;
	if (in->count == 1 && !(in->buf[0].flags & FUSE_BUF_IS_FD) &&
	    !(f->opf & IOTAP_OPF_DIRECT)) {
		data = (const char *)in->buf[0].mem + in->off;
	} else {
		struct fuse_bufvec dst = FUSE_BUFVEC_INIT(size);

		dst.buf[0].mem = fs_thread_iobuf(op.t, size);
		if (!dst.buf[0].mem) {
			ret = -ENOMEM;
			goto out;
		}
		ret = fuse_buf_copy(&dst, in, 0);
		if (ret < 0)
			goto out;
		size = ret;
		data = dst.buf[0].mem;
	}
	/* a caller without CAP_FSETID (wire.c); outside the timed call */
	if (fs_req_kill_suidgid(fi, 0)) {
		ret = fs_kill_suidgid_as(&r->who, f->fd, NULL);
		if (ret)
			goto out;
	}
	fs_capture_io_begin(&op);
	if (nowait && !CMM_LOAD_SHARED(f->wnowait_no) && !op.fs->fail_op) {
		/* as fs_op_read(): a write that would wait goes to a helper */
		ret = pio_nowait(f->fd, (char *)data, size, off, true);
		if (ret == -EAGAIN && fs_capture_handoff(&op)) {
			r->reply->none(r);	/* the helper writes it all and replies */
			return;
		}
		if (ret == -EOPNOTSUPP)
			CMM_STORE_SHARED(f->wnowait_no, true);
		if (ret == -EAGAIN || ret == -EOPNOTSUPP)
			ret = pio_full(f->fd, (char *)data, size, off, true);
	} else {
		ret = pio_full(f->fd, (char *)data, size, off, true);	/* pwrite only reads it */
	}
	fs_capture_io_end(&op);
out:
	if (ret < 0 && fi->writepage)
		fs_wbfail_write(op.fs, f->inode);
	/* after the call: a request handed over above must not take its piece */
	fs_calls_begin(&op, f, asked, op.fs->max_write, &piece);
	fs_calls_end(&op, f, asked, &piece, ret);
	fs_capture_end(&op, ret);
	if (ret < 0)
		r->reply->err(r, (int)-ret);
	else
		r->reply->written(r, (size_t)ret);
}

/* libfuse's READ and WRITE: the bodies above, replying through libfuse */
static void fuse_io_err(struct fs_io_req *r, int err)
{
	fuse_reply_err(r->to, err);
}

static void fuse_io_data(struct fs_io_req *r, const void *buf, size_t size)
{
	fuse_reply_buf(r->to, buf, size);
}

static void fuse_io_written(struct fs_io_req *r, size_t count)
{
	fuse_reply_write(r->to, count);
}

static void fuse_io_none(struct fs_io_req *r)
{
	fuse_reply_none(r->to);
}

static const struct fs_io_reply_ops fuse_io_reply = {
	.err = fuse_io_err,
	.data = fuse_io_data,
	.written = fuse_io_written,
	.none = fuse_io_none,
};

static void fs_op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	struct fs_io_req r = { fs_req(req), &fuse_io_reply, req, fs_req_caller(req) };

	(void)ino;
	fs_io_read(&r, size, off, fi);
}

static void fs_op_write_buf(fuse_req_t req, fuse_ino_t ino, struct fuse_bufvec *in,
			    off_t off, struct fuse_file_info *fi)
{
	struct fs_io_req r = { fs_req(req), &fuse_io_reply, req, fs_req_caller(req) };

	(void)ino;
	fs_io_write(&r, in, off, fi);
}

static void fs_op_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fs_file *f = fs_file(fi);
	struct fs_capture op;
	int ret;

	(void)ino;
	fs_capture_start(&op, req, IOTAP_OP_FLUSH, f->inode);
	op.rec.fh = f->id;
	ret = fs_capture_fault(&op);
	if (!ret) {
		/* what close(2) of the application's fd would do to the backing file */
		fs_capture_io_begin(&op);
		ret = close(dup(f->fd)) < 0 ? -errno : 0;
		fs_capture_io_end(&op);
	}
	fs_capture_end(&op, ret);
	fuse_reply_err(req, -ret);
}

static void fs_op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fs_file *f = fs_file(fi);
	struct fs_capture op;
	int ret;

	(void)ino;
	fs_capture_start(&op, req, IOTAP_OP_RELEASE, f->inode);
	op.rec.fh = f->id;
	op.rec.flags = fi->flags;
	fs_capture_io_begin(&op);
	ret = close(f->fd) < 0 ? -errno : 0;
	fs_capture_io_end(&op);
	fs_wbfail_release(op.fs, f->inode);
	free(f);
	fs_capture_end(&op, ret);
	/* the kernel ignores release errors; the record keeps the real one */
	fuse_reply_err(req, 0);
}

static void fs_op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync,
			struct fuse_file_info *fi)
{
	struct fs_file *f = fs_file(fi);
	struct fs_capture op;
	int ret;

	(void)ino;
	fs_capture_start(&op, req, IOTAP_OP_FSYNC, f->inode);
	op.rec.fh = f->id;
	op.rec.flags = datasync ? IOTAP_OPF_DATASYNC : 0;
	ret = fs_capture_fault(&op);
	if (!ret) {
		fs_capture_io_begin(&op);
		ret = datasync ? fdatasync(f->fd) : fsync(f->fd);
		if (ret < 0)
			ret = -errno;
		fs_capture_io_end(&op);
	}
	fs_capture_end(&op, ret);
	fuse_reply_err(req, -ret);
}

static void fs_op_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t offset,
			    off_t length, struct fuse_file_info *fi)
{
	struct fs_file *f = fs_file(fi);
	struct fs_capture op;
	int ret;

	(void)ino;
	fs_capture_start(&op, req, IOTAP_OP_FALLOCATE, f->inode);
	op.rec.fh = f->id;
	op.rec.offset = offset;
	op.rec.length = length;
	op.rec.flags = mode;
	ret = fs_capture_fault(&op);
	if (!ret) {
		fs_capture_io_begin(&op);
		ret = fallocate(f->fd, mode, offset, length);
		if (ret < 0)
			ret = -errno;
		fs_capture_io_end(&op);
	}
	fs_capture_end(&op, ret);
	fuse_reply_err(req, -ret);
}

static void fs_op_lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence,
			struct fuse_file_info *fi)
{
	struct fs_file *f = fs_file(fi);
	struct fs_capture op;
	off_t ret;

	(void)ino;
	fs_capture_start(&op, req, IOTAP_OP_LSEEK, f->inode);
	op.rec.fh = f->id;
	op.rec.offset = off;
	op.rec.flags = whence;
	ret = fs_capture_fault(&op);
	if (!ret) {
		fs_capture_io_begin(&op);
		ret = lseek(f->fd, off, whence);
		if (ret < 0)
			ret = -errno;
		fs_capture_io_end(&op);
	}
	fs_capture_end(&op, ret);
	if (ret < 0)
		fuse_reply_err(req, (int)-ret);
	else
		fuse_reply_lseek(req, ret);
}

static void fs_op_copy_file_range(fuse_req_t req, fuse_ino_t ino_in, off_t off_in,
				  struct fuse_file_info *fi_in, fuse_ino_t ino_out,
				  off_t off_out, struct fuse_file_info *fi_out,
				  size_t len, int flags)
{
	struct fs_file *fin = fs_file(fi_in), *fout = fs_file(fi_out);
	struct fs_capture op;
	ssize_t ret;

	(void)ino_in;
	(void)ino_out;
	fs_capture_start(&op, req, IOTAP_OP_COPY_FILE_RANGE, fin->inode);
	op.rec.file2 = fout->inode->ino;
	op.rec.fh = fin->id;
	op.rec.offset = off_in;
	op.rec.length = len;
	op.rec.flags = flags;
	op.rec.aux = off_out;
	ret = fs_capture_fault(&op);
	if (!ret) {
		fs_capture_io_begin(&op);
#ifdef HAVE_COPY_FILE_RANGE
		ret = copy_file_range(fin->fd, &off_in, fout->fd, &off_out, len, flags);
		if (ret < 0)
			ret = -errno;
#else
		ret = -ENOSYS;
#endif
		fs_capture_io_end(&op);
	}
	fs_capture_end(&op, ret);
	if (ret < 0)
		fuse_reply_err(req, (int)-ret);
	else
		fuse_reply_write(req, ret);
}

/* --- requests we do not serve, recorded all the same ------------------- */

static void fs_op_ioctl(fuse_req_t req, fuse_ino_t ino, unsigned int cmd, void *arg,
			struct fuse_file_info *fi, unsigned int flags, const void *in_buf,
			size_t in_bufsz, size_t out_bufsz)
{
	struct fs_ctx *fs = fs_req(req);
	struct fs_capture op;

	(void)arg;
	(void)in_buf;
	(void)out_bufsz;
	fs_capture_start(&op, req, IOTAP_OP_IOCTL, fs_ino(fs, ino));
	if (fi && fi->fh)
		op.rec.fh = (flags & FUSE_IOCTL_DIR) ? fs_dir(fi)->id : fs_file(fi)->id;
	op.rec.length = in_bufsz;
	op.rec.aux = cmd;
	op.rec.flags = IOTAP_OPF_REJECTED;
	fs_capture_end(&op, -ENOSYS);
	fuse_reply_err(req, ENOSYS);
}

static void fs_op_poll(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi,
		       struct fuse_pollhandle *ph)
{
	struct fs_ctx *fs = fs_req(req);
	struct fs_capture op;

	fs_capture_start(&op, req, IOTAP_OP_POLL, fs_ino(fs, ino));
	if (fi)
		op.rec.fh = fs_file(fi)->id;
	op.rec.aux = fi ? fi->poll_events : 0;
	op.rec.flags = IOTAP_OPF_REJECTED;
	if (ph)
		fuse_pollhandle_destroy(ph);
	fs_capture_end(&op, -ENOSYS);
	fuse_reply_err(req, ENOSYS);
}

static void fs_op_bmap(fuse_req_t req, fuse_ino_t ino, size_t blocksize, uint64_t idx)
{
	struct fs_ctx *fs = fs_req(req);
	struct fs_capture op;

	fs_capture_start(&op, req, IOTAP_OP_BMAP, fs_ino(fs, ino));
	op.rec.offset = idx;
	op.rec.length = blocksize;
	op.rec.flags = IOTAP_OPF_REJECTED;
	fs_capture_end(&op, -ENOSYS);
	fuse_reply_err(req, ENOSYS);
}

void fs_ops_file(struct fuse_lowlevel_ops *ops)
{
	ops->open = fs_op_open;
	ops->read = fs_op_read;
	ops->write_buf = fs_op_write_buf;
	ops->flush = fs_op_flush;
	ops->release = fs_op_release;
	ops->fsync = fs_op_fsync;
	ops->fallocate = fs_op_fallocate;
	ops->lseek = fs_op_lseek;
	ops->copy_file_range = fs_op_copy_file_range;
	ops->ioctl = fs_op_ioctl;
	ops->poll = fs_op_poll;
	ops->bmap = fs_op_bmap;
}
