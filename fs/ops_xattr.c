// SPDX-License-Identifier: MIT
/*
 * ops_xattr.c - extended attributes, and the daemon's control names
 *
 * setxattr, getxattr, listxattr and removexattr pass through via
 * /proc/self/fd/N of the inode's O_PATH fd (the f*xattr calls refuse O_PATH
 * fds). Values are read into the worker's I/O buffer: no malloc per call.
 *
 * On the mount's root directory the daemon answers a few names itself,
 * without touching the backing fs, so they work even where the backing fs
 * has no user xattrs:
 *   setxattr IOTAP_FS_XATTR_MARK / _MARK_END  -> a PHASE record (begin/end,
 *            name = the value); this is the request's only record. The end
 *            of a phase never begun on this mount is refused with ESRCH
 *   getxattr IOTAP_FS_XATTR_PID / _TRACE      -> the daemon's pid / the
 *            trace path
 *   getxattr IOTAP_FS_XATTR_STATS             -> the live counters (stats.c),
 *            root or CAP_SYS_ADMIN only
 *   setxattr IOTAP_FS_XATTR_CTL               -> start, stop or rotate the
 *            trace (control.c)
 * An answered control request is iotap's own, not the workload's: it
 * reaches neither the trace nor the live counters (fs_capture_quiet()), and
 * neither do the root's STATFS and GETATTR that iotap's control commands
 * cause on the way (fs_caller_is_tool()). A refused one is recorded.
 * Who may use them is the daemon's decision, from the request's caller
 * (fs_caller_admin(), fs_caller_may_mark()): the kernel's write check on
 * the root lets anyone through on a 0777 root. Marks and the pid are for
 * root (or CAP_SYS_ADMIN) and, with allow_mark_owner, the backing root's
 * owner; the trace path for root only. A refused caller gets EPERM, the
 * log says who tried, and the trace has the request as a REJECTED
 * SETXATTR/GETXATTR with result -EPERM.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "fs_i.h"

static bool is_root(fuse_ino_t ino)
{
	return ino == FUSE_ROOT_ID;
}

static bool is_mark(fuse_ino_t ino, const char *name)
{
	return is_root(ino) && (!strcmp(name, IOTAP_FS_XATTR_MARK) ||
				!strcmp(name, IOTAP_FS_XATTR_MARK_END));
}

/* The passed-through setxattr: records its OP, returns 0 or -errno. */
static int do_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
		       const char *value, size_t size, int flags)
{
	struct fs_ctx *fs = fs_req(req);
	struct fs_inode *inode = fs_ino(fs, ino);
	char proc[FS_PROCNAME_MAX];
	struct fs_fdref ref;
	struct fs_capture op;
	int ret;

	fs_capture_start(&op, req, IOTAP_OP_SETXATTR, inode);
	op.rec.name = name;
	op.rec.length = size;
	op.rec.flags = flags;
	ret = fs_capture_fault(&op);
	if (ret)
		goto out;
	ret = fs_inode_fd(fs, inode, &ref);
	if (ret)
		goto out;
	fs_procname(proc, ref.fd);
	fs_capture_io_begin(&op);
	ret = setxattr(proc, name, value, size, flags) < 0 ? -errno : 0;
	fs_capture_io_end(&op);
	fs_fdref_put(&ref);
out:
	fs_capture_end(&op, ret);
	return ret;
}

/* A control request refused: logged, recorded as REJECTED with -EPERM. */
static int refuse(fuse_req_t req, unsigned int opcode, const char *name, size_t size)
{
	struct fs_ctx *fs = fs_req(req);
	char what[96];
	struct fs_capture op;

	snprintf(what, sizeof(what), "%s %s", opcode == IOTAP_OP_SETXATTR ? "setxattr" : "getxattr",
		 name);
	fs_log_refused(req, what);
	fs_capture_start(&op, req, opcode, fs->root);
	op.rec.name = name;
	op.rec.length = size;
	op.rec.flags = IOTAP_OPF_REJECTED;
	fs_capture_end(&op, -EPERM);
	return -EPERM;
}

static void fs_op_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
			   const char *value, size_t size, int flags)
{
	struct fs_ctx *fs = fs_req(req);
	int ret = 0;

	if (is_root(ino) && !strcmp(name, IOTAP_FS_XATTR_CTL)) {
		/* start, stop, rotate (control.c): root or CAP_SYS_ADMIN only */
		if (!fs_caller_admin(req))
			ret = refuse(req, IOTAP_OP_SETXATTR, name, size);
		else
			ret = fs_ctl_request(fs, req, value, size);
	} else if (is_mark(ino, name)) {
		if (!fs_caller_may_mark(fs, req))
			ret = refuse(req, IOTAP_OP_SETXATTR, name, size);
		else
			ret = fs_record_phase(fs, req, value, size,
					      strcmp(name, IOTAP_FS_XATTR_MARK) ?
						      IOTAP_PHASE_END : IOTAP_PHASE_BEGIN);
	} else {
		ret = do_setxattr(req, ino, name, value, size, flags);
	}
	fuse_reply_err(req, -ret);
}

/* May the caller of @req read control name @name? */
static bool may_read(struct fs_ctx *fs, fuse_req_t req, const char *name)
{
	if (!strcmp(name, IOTAP_FS_XATTR_PID))
		return fs_caller_may_mark(fs, req);	/* `iotap mark` checks the mount with it */
	return fs_caller_admin(req);
}

/* The value of a control name, or NULL if @name is none. */
static const char *control_value(struct fs_ctx *fs, fuse_ino_t ino, const char *name,
				 char *buf, size_t size)
{
	if (!is_root(ino))
		return NULL;
	if (!strcmp(name, IOTAP_FS_XATTR_PID)) {
		snprintf(buf, size, "%d", (int)getpid());
		return buf;
	}
	if (!strcmp(name, IOTAP_FS_XATTR_TRACE)) {
		fs_ctl_trace_path(fs, buf, size);
		return buf;
	}
	if (!strcmp(name, IOTAP_FS_XATTR_STATS))
		return "";	/* answered by answer_stats() */
	return NULL;
}

/* getxattr of the live counters: built in the worker's I/O buffer. */
static void answer_stats(struct fs_ctx *fs, fuse_req_t req, struct fs_capture *op, size_t size)
{
	char *buf = fs_thread_iobuf(op->t, IOTAP_FS_STATS_MAX);
	ssize_t ret;

	ret = buf ? fs_stats_text(fs, buf, IOTAP_FS_STATS_MAX) : -ENOMEM;
	if (ret >= 0 && size && (size_t)ret > size)
		ret = -ERANGE;
	fs_capture_end(op, ret);
	if (ret < 0)
		fuse_reply_err(req, (int)-ret);
	else if (size)
		fuse_reply_buf(req, buf, (size_t)ret);
	else
		fuse_reply_xattr(req, (size_t)ret);
}

static void fs_op_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	struct fs_ctx *fs = fs_req(req);
	struct fs_inode *inode = fs_ino(fs, ino);
	char proc[FS_PROCNAME_MAX], pidbuf[PATH_MAX];
	const char *value;
	struct fs_fdref ref;
	struct fs_capture op;
	char *buf = NULL;
	ssize_t ret;

	fs_capture_start(&op, req, IOTAP_OP_GETXATTR, inode);
	op.rec.name = name;
	op.rec.length = size;
	value = control_value(fs, ino, name, pidbuf, sizeof(pidbuf));
	if (value && !may_read(fs, req, name)) {
		fuse_reply_err(req, -refuse(req, IOTAP_OP_GETXATTR, name, size));
		return;
	}
	if (value)
		fs_capture_quiet(&op);	/* answered here: iotap's own, not the workload's */
	if (value && !strcmp(name, IOTAP_FS_XATTR_STATS)) {
		answer_stats(fs, req, &op, size);
		return;
	}
	if (value) {
		ret = strlen(value);
		if (size && (size_t)ret > size)
			ret = -ERANGE;
		goto out;
	}
	ret = fs_capture_fault(&op);
	if (ret)
		goto out;
	if (size) {
		buf = fs_thread_iobuf(op.t, size);
		if (!buf) {
			ret = -ENOMEM;
			goto out;
		}
	}
	ret = fs_inode_fd(fs, inode, &ref);
	if (ret)
		goto out;
	fs_procname(proc, ref.fd);
	fs_capture_io_begin(&op);
	ret = getxattr(proc, name, buf, size);
	if (ret < 0)
		ret = -errno;
	fs_capture_io_end(&op);
	fs_fdref_put(&ref);
out:
	fs_capture_end(&op, ret);
	if (ret < 0)
		fuse_reply_err(req, (int)-ret);
	else if (size)
		fuse_reply_buf(req, value ? value : buf, ret);
	else
		fuse_reply_xattr(req, ret);
}

static void fs_op_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	struct fs_ctx *fs = fs_req(req);
	struct fs_inode *inode = fs_ino(fs, ino);
	char proc[FS_PROCNAME_MAX];
	struct fs_fdref ref;
	struct fs_capture op;
	char *buf = NULL;
	ssize_t ret;

	fs_capture_start(&op, req, IOTAP_OP_LISTXATTR, inode);
	op.rec.length = size;
	ret = fs_capture_fault(&op);
	if (ret)
		goto out;
	if (size) {
		buf = fs_thread_iobuf(op.t, size);
		if (!buf) {
			ret = -ENOMEM;
			goto out;
		}
	}
	ret = fs_inode_fd(fs, inode, &ref);
	if (ret)
		goto out;
	fs_procname(proc, ref.fd);
	fs_capture_io_begin(&op);
	ret = listxattr(proc, buf, size);
	if (ret < 0)
		ret = -errno;
	fs_capture_io_end(&op);
	fs_fdref_put(&ref);
out:
	fs_capture_end(&op, ret);
	if (ret < 0)
		fuse_reply_err(req, (int)-ret);
	else if (size)
		fuse_reply_buf(req, buf, ret);
	else
		fuse_reply_xattr(req, ret);
}

static void fs_op_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	struct fs_ctx *fs = fs_req(req);
	struct fs_inode *inode = fs_ino(fs, ino);
	char proc[FS_PROCNAME_MAX];
	struct fs_fdref ref;
	struct fs_capture op;
	int ret;

	fs_capture_start(&op, req, IOTAP_OP_REMOVEXATTR, inode);
	op.rec.name = name;
	ret = fs_capture_fault(&op);
	if (ret)
		goto out;
	ret = fs_inode_fd(fs, inode, &ref);
	if (ret)
		goto out;
	fs_procname(proc, ref.fd);
	fs_capture_io_begin(&op);
	ret = removexattr(proc, name) < 0 ? -errno : 0;
	fs_capture_io_end(&op);
	fs_fdref_put(&ref);
out:
	fs_capture_end(&op, ret);
	fuse_reply_err(req, -ret);
}

void fs_ops_xattr(struct fuse_lowlevel_ops *ops)
{
	ops->setxattr = fs_op_setxattr;
	ops->getxattr = fs_op_getxattr;
	ops->listxattr = fs_op_listxattr;
	ops->removexattr = fs_op_removexattr;
}
