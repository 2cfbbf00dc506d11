// SPDX-License-Identifier: MIT
/*
 * ops_attr.c - attributes: getattr, setattr, readlink, access, statfs
 *
 * These work on an inode, usually without an open file: the O_PATH fd is
 * borrowed from the inode table's cache (inode.c) for the duration of the
 * request. Calls that have no *at form accepting an O_PATH fd (chmod,
 * truncate, utimens, access) go through /proc/self/fd/N, as in
 * passthrough_ll. When the kernel sends a file handle (getattr of an open
 * file, ftruncate), the open backing fd is used instead, which also works
 * for a file already unlinked.
 *
 * Same shape as every op: one record, then one reply in one place.
 */
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "fs_i.h"

static int stat_inode(struct fs_ctx *fs, struct fs_inode *inode, struct fs_file *f,
		      struct stat *st)
{
	struct fs_fdref ref;
	int ret;

	if (f)
		return fstat(f->fd, st) < 0 ? -errno : 0;
	ret = fs_inode_fd(fs, inode, &ref);
	if (ret)
		return ret;
	ret = fstatat(ref.fd, "", st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
	fs_fdref_put(&ref);
	return ret;
}

static void fs_op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fs_ctx *fs = fs_req(req);
	struct fs_inode *inode = fs_ino(fs, ino);
	struct fs_file *f = fi ? fs_file(fi) : NULL;
	struct fs_capture op;
	struct stat st;
	int ret;

	fs_capture_start(&op, req, IOTAP_OP_GETATTR, inode);
	if (f)
		op.rec.fh = f->id;
	ret = fs_capture_fault(&op);
	if (!ret) {
		fs_capture_io_begin(&op);
		ret = stat_inode(fs, inode, f, &st);
		fs_capture_io_end(&op);
	}
	if (!ret) {
		op.rec.mode = st.st_mode;
		op.rec.aux = st.st_size;
	}
	fs_capture_end(&op, ret);
	if (ret)
		fuse_reply_err(req, -ret);
	else
		fuse_reply_attr(req, &st, fs->attr_timeout);
}

/* The backing calls of a setattr, in the order the kernel expects. */
static int do_setattr(fuse_req_t req, struct fs_ctx *fs, struct fs_inode *inode,
		      struct fs_file *f, const struct stat *attr, int valid)
{
	char proc[FS_PROCNAME_MAX];
	struct fs_fdref ref = { .fd = -1, .inode = NULL };
	int ret = 0;

	if (!f || (valid & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID))) {
		ret = fs_inode_fd(fs, inode, &ref);
		if (ret)
			return ret;
		fs_procname(proc, ref.fd);
	}
	if (valid & FUSE_SET_ATTR_MODE) {
		ret = f ? fchmod(f->fd, attr->st_mode) : chmod(proc, attr->st_mode);
		if (ret < 0)
			goto out_errno;
	}
	if (valid & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) {
		uid_t uid = (valid & FUSE_SET_ATTR_UID) ? attr->st_uid : (uid_t)-1;
		gid_t gid = (valid & FUSE_SET_ATTR_GID) ? attr->st_gid : (gid_t)-1;

		ret = fchownat(ref.fd, "", uid, gid, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW);
		if (ret < 0)
			goto out_errno;
	}
	if (valid & FUSE_SET_ATTR_SIZE) {
		ret = f ? ftruncate(f->fd, attr->st_size) : truncate(proc, attr->st_size);
		if (ret < 0)
			goto out_errno;
	}
	/*
	 * Under HANDLE_KILLPRIV_V2 the kernel flags a truncate by a caller
	 * without CAP_FSETID (wire.c). It flags every chown of a file too,
	 * but our fchownat() already dropped what the VFS drops there.
	 */
	if ((valid & FUSE_SET_ATTR_SIZE) && fs_req_kill_suidgid(NULL, valid)) {
		ret = f ? fs_kill_suidgid(req, f->fd, NULL) : fs_kill_suidgid(req, ref.fd, proc);
		if (ret)
			goto out;
	}
	if (valid & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME)) {
		struct timespec tv[2] = {
			{ .tv_nsec = UTIME_OMIT },
			{ .tv_nsec = UTIME_OMIT },
		};

		if (valid & FUSE_SET_ATTR_ATIME_NOW)
			tv[0].tv_nsec = UTIME_NOW;
		else if (valid & FUSE_SET_ATTR_ATIME)
			tv[0] = attr->st_atim;
		if (valid & FUSE_SET_ATTR_MTIME_NOW)
			tv[1].tv_nsec = UTIME_NOW;
		else if (valid & FUSE_SET_ATTR_MTIME)
			tv[1] = attr->st_mtim;
		ret = f ? futimens(f->fd, tv) : utimensat(AT_FDCWD, proc, tv, 0);
		if (ret < 0)
			goto out_errno;
	}
	goto out;

out_errno:
	ret = -errno;
out:
	if (ref.fd >= 0)
		fs_fdref_put(&ref);
	return ret;
}

static void fs_op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int valid,
			  struct fuse_file_info *fi)
{
	struct fs_ctx *fs = fs_req(req);
	struct fs_inode *inode = fs_ino(fs, ino);
	struct fs_file *f = fi ? fs_file(fi) : NULL;
	struct fs_capture op;
	struct stat st;
	int ret;

	fs_capture_start(&op, req, IOTAP_OP_SETATTR, inode);
	if (f)
		op.rec.fh = f->id;
	op.rec.flags = valid;
	if (valid & FUSE_SET_ATTR_SIZE)
		op.rec.offset = attr->st_size;
	if (valid & FUSE_SET_ATTR_MODE)
		op.rec.mode = attr->st_mode;
	if (valid & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID))
		op.rec.aux = (uint64_t)((valid & FUSE_SET_ATTR_UID) ? attr->st_uid : 0xffffffffu)
				<< 32 |
			     ((valid & FUSE_SET_ATTR_GID) ? attr->st_gid : 0xffffffffu);
	ret = fs_capture_fault(&op);
	if (!ret) {
		fs_capture_io_begin(&op);
		ret = do_setattr(req, fs, inode, f, attr, valid);
		fs_capture_io_end(&op);
	}
	if (!ret)
		ret = stat_inode(fs, inode, f, &st);
	fs_capture_end(&op, ret);
	if (ret)
		fuse_reply_err(req, -ret);
	else
		fuse_reply_attr(req, &st, fs->attr_timeout);
}

static void fs_op_readlink(fuse_req_t req, fuse_ino_t ino)
{
	struct fs_ctx *fs = fs_req(req);
	struct fs_inode *inode = fs_ino(fs, ino);
	char buf[PATH_MAX + 1];
	struct fs_fdref ref;
	struct fs_capture op;
	ssize_t ret;

	fs_capture_start(&op, req, IOTAP_OP_READLINK, inode);
	ret = fs_capture_fault(&op);
	if (ret)
		goto out;
	ret = fs_inode_fd(fs, inode, &ref);
	if (ret)
		goto out;
	fs_capture_io_begin(&op);
	ret = readlinkat(ref.fd, "", buf, sizeof(buf));
	if (ret < 0)
		ret = -errno;
	fs_capture_io_end(&op);
	fs_fdref_put(&ref);
	if (ret == sizeof(buf))
		ret = -ENAMETOOLONG;
	if (ret >= 0)
		buf[ret] = '\0';
out:
	fs_capture_end(&op, ret);
	if (ret < 0)
		fuse_reply_err(req, (int)-ret);
	else
		fuse_reply_readlink(req, buf);
}

static void fs_op_access(fuse_req_t req, fuse_ino_t ino, int mask)
{
	struct fs_ctx *fs = fs_req(req);
	struct fs_inode *inode = fs_ino(fs, ino);
	char proc[FS_PROCNAME_MAX];
	struct fs_fdref ref;
	struct fs_capture op;
	int ret;

	fs_capture_start(&op, req, IOTAP_OP_ACCESS, inode);
	op.rec.mode = mask;
	ret = fs_capture_fault(&op);
	if (ret)
		goto out;
	ret = fs_inode_fd(fs, inode, &ref);
	if (ret)
		goto out;
	fs_procname(proc, ref.fd);
	fs_capture_io_begin(&op);
	ret = access(proc, mask) < 0 ? -errno : 0;
	fs_capture_io_end(&op);
	fs_fdref_put(&ref);
out:
	fs_capture_end(&op, ret);
	fuse_reply_err(req, -ret);
}

static void fs_op_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct fs_ctx *fs = fs_req(req);
	struct fs_inode *inode = fs_ino(fs, ino);
	struct statvfs sv;
	struct fs_fdref ref;
	struct fs_capture op;
	int ret;

	fs_capture_start(&op, req, IOTAP_OP_STATFS, inode);
	ret = fs_capture_fault(&op);
	if (ret)
		goto out;
	ret = fs_inode_fd(fs, inode, &ref);
	if (ret)
		goto out;
	fs_capture_io_begin(&op);
	ret = fstatvfs(ref.fd, &sv) < 0 ? -errno : 0;
	fs_capture_io_end(&op);
	fs_fdref_put(&ref);
out:
	fs_capture_end(&op, ret);
	if (ret)
		fuse_reply_err(req, -ret);
	else
		fuse_reply_statfs(req, &sv);
}

void fs_ops_attr(struct fuse_lowlevel_ops *ops)
{
	ops->getattr = fs_op_getattr;
	ops->setattr = fs_op_setattr;
	ops->readlink = fs_op_readlink;
	ops->access = fs_op_access;
	ops->statfs = fs_op_statfs;
}
