// SPDX-License-Identifier: MIT
/*
 * ops_dir.c - the namespace and directory requests
 *
 * lookup, forget, forget_multi, mknod, mkdir, symlink, unlink, rmdir,
 * rename, link, create, opendir, readdir, readdirplus, releasedir and
 * fsyncdir, grouped as in the kernel's fs/fuse/dir.c and readdir.c.
 *
 * Every op has the same shape: fs_capture_start(), fault injection, borrow
 * the O_PATH fds it needs from the inode table, fs_capture_io_begin() /
 * backing call(s) / fs_capture_io_end(), bookkeeping, fs_capture_end()
 * (records the OP and any NAME), then exactly one reply: a success reply
 * or fuse_reply_err(req, -ret). Helpers return 0 or -errno and never reply.
 *
 * Ownership of new objects: creations run as the caller (creds.c).
 *
 * Entries are replied with the backing st_ino as st_ino and a pointer to
 * struct fs_inode as node id. If the reply does not reach the kernel (the
 * request was interrupted), the lookup reference is dropped again.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fs_i.h"

/* --- entries ----------------------------------------------------------- */

static bool is_dot_or_dotdot(const char *name)
{
	return name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'));
}

/* O_PATH fd of @name in @dirfd and its attributes; fd or -errno. */
static int child_open(int dirfd, const char *name, struct stat *st)
{
	int fd, ret;

	fd = openat(dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, st) < 0) {
		ret = -errno;
		close(fd);
		return ret;
	}
	return fd;
}

static void entry_fill(struct fs_ctx *fs, struct fuse_entry_param *e,
		       struct fs_inode *inode, const struct stat *st)
{
	memset(e, 0, sizeof(*e));
	e->ino = fs_nodeid(fs, inode);
	e->attr = *st;
	e->attr_timeout = fs->attr_timeout;
	e->entry_timeout = fs->entry_timeout;
}

/*
 * Bind the object behind O_PATH @fd (consumed) as an entry of @dir: take a
 * lookup reference, fill @e, queue its NAME.
 */
static int entry_bind(struct fs_capture *op, struct fs_inode *dir, const char *name, int fd,
		      const struct stat *st, struct fuse_entry_param *e,
		      struct fs_inode **out, bool created)
{
	struct fs_inode *inode;
	int ret;

	ret = fs_inode_get(op->fs, st, fd, -1, &inode);
	if (ret)
		return ret;
	entry_fill(op->fs, e, inode, st);
	fs_capture_name(op, inode, dir, name, st,
			!created && !S_ISDIR(st->st_mode) && st->st_nlink > 1, created);
	*out = inode;
	return 0;
}

/* Reply @e, or drop the reference if the kernel did not take it. */
static void reply_entry(struct fs_ctx *fs, fuse_req_t req, struct fuse_entry_param *e,
			struct fs_inode *inode)
{
	if (fuse_reply_entry(req, e) && inode)
		fs_inode_forget(fs, inode, 1);
}

static void fs_op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fs_ctx *fs = fs_req(req);
	struct fs_inode *dir = fs_ino(fs, parent), *inode = NULL;
	struct fuse_entry_param e;
	struct fs_fdref dref;
	struct fs_capture op;
	struct stat st;
	int fd, ret;

	fs_capture_start(&op, req, IOTAP_OP_LOOKUP, NULL);
	op.rec.file2 = dir->ino;
	fs_capture_dir(&op, dir);
	ret = fs_capture_fault(&op);
	if (ret)
		goto out;
	ret = fs_inode_fd(fs, dir, &dref);
	if (ret)
		goto out;
	fs_capture_io_begin(&op);
	fd = child_open(dref.fd, name, &st);
	fs_capture_io_end(&op);
	fs_fdref_put(&dref);
	if (fd < 0) {
		ret = fd;
		goto out;
	}
	op.rec.file = st.st_ino;
	op.rec.mode = st.st_mode;
	ret = entry_bind(&op, dir, name, fd, &st, &e, &inode, false);
out:
	if (ret)
		op.rec.name = name;
	fs_capture_end(&op, ret);
	if (ret == -ENOENT && fs->entry_timeout > 0) {
		/* a negative entry: the kernel caches the miss like a hit */
		memset(&e, 0, sizeof(e));
		e.entry_timeout = fs->entry_timeout;
		ret = 0;
	}
	if (ret)
		fuse_reply_err(req, -ret);
	else
		reply_entry(fs, req, &e, inode);
}

static void fs_op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	struct fs_ctx *fs = fs_req(req);
	struct fs_inode *inode = fs_ino(fs, ino);
	struct fs_capture op;

	fs_capture_start(&op, req, IOTAP_OP_FORGET, inode);
	op.rec.length = nlookup;
	op.rec.aux = 1;
	fs_capture_io_begin(&op);
	fs_inode_forget(fs, inode, nlookup);
	fs_capture_io_end(&op);
	fs_capture_end(&op, 0);
	fuse_reply_none(req);
}

static void fs_op_forget_multi(fuse_req_t req, size_t count,
			       struct fuse_forget_data *forgets)
{
	struct fs_ctx *fs = fs_req(req);
	struct fs_capture op;
	size_t i;

	fs_capture_start(&op, req, IOTAP_OP_FORGET, count == 1 ? fs_ino(fs, forgets[0].ino) : NULL);
	op.rec.aux = count;
	fs_capture_io_begin(&op);
	for (i = 0; i < count; i++) {
		op.rec.length += forgets[i].nlookup;
		fs_inode_forget(fs, fs_ino(fs, forgets[i].ino), forgets[i].nlookup);
	}
	fs_capture_io_end(&op);
	fs_capture_end(&op, 0);
	fuse_reply_none(req);
}

/* --- creations ------------------------------------------------------- */

/* mknod, mkdir and symlink: create as the caller, then bind the new entry. */
static int make_node(struct fs_capture *op, fuse_req_t req, struct fs_inode *dir,
		     const char *name, mode_t mode, dev_t rdev, const char *link,
		     struct fuse_entry_param *e, struct fs_inode **out)
{
	struct fs_ctx *fs = op->fs;
	struct fs_fdref dref;
	struct fs_creds cr;
	struct stat st;
	int fd, ret;

	ret = fs_inode_fd(fs, dir, &dref);
	if (ret)
		return ret;
	fs_creds_push(fs, req, &cr);
	fs_capture_io_begin(op);
	if (link)
		ret = symlinkat(link, dref.fd, name);
	else if (S_ISDIR(mode))
		ret = mkdirat(dref.fd, name, mode & 07777);
	else
		ret = mknodat(dref.fd, name, mode, rdev);
	if (ret < 0)
		ret = -errno;
	fs_capture_io_end(op);
	fs_creds_pop(&cr);
	if (!ret) {
		fd = child_open(dref.fd, name, &st);
		if (fd < 0) {
			ret = fd;
		} else {
			op->rec.file = st.st_ino;
			ret = entry_bind(op, dir, name, fd, &st, e, out, true);
		}
	}
	fs_fdref_put(&dref);
	return ret;
}

static void make_op(fuse_req_t req, unsigned int opcode, fuse_ino_t parent,
		    const char *name, mode_t mode, dev_t rdev, const char *link)
{
	struct fs_ctx *fs = fs_req(req);
	struct fs_inode *dir = fs_ino(fs, parent), *inode = NULL;
	struct fuse_entry_param e;
	struct fs_capture op;
	int ret;

	fs_capture_start(&op, req, opcode, NULL);
	op.rec.file2 = dir->ino;
	fs_capture_dir(&op, dir);
	op.rec.mode = mode;
	if (opcode == IOTAP_OP_MKNOD)
		op.rec.aux = rdev;
	if (link) {
		/* the target has no file id: it always travels inline */
		op.rec.name = link;
		op.rec.length = strlen(link);
	}
	ret = fs_capture_fault(&op);
	if (!ret)
		ret = make_node(&op, req, dir, name, mode, rdev, link, &e, &inode);
	if (ret && !link)
		op.rec.name = name;
	fs_capture_end(&op, ret);
	if (ret)
		fuse_reply_err(req, -ret);
	else
		reply_entry(fs, req, &e, inode);
}

static void fs_op_mknod(fuse_req_t req, fuse_ino_t parent, const char *name,
			mode_t mode, dev_t rdev)
{
	make_op(req, IOTAP_OP_MKNOD, parent, name, mode, rdev, NULL);
}

static void fs_op_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	make_op(req, IOTAP_OP_MKDIR, parent, name, S_IFDIR | mode, 0, NULL);
}

static void fs_op_symlink(fuse_req_t req, const char *link, fuse_ino_t parent,
			  const char *name)
{
	make_op(req, IOTAP_OP_SYMLINK, parent, name, S_IFLNK | 0777, 0, link);
}

static void fs_op_create(fuse_req_t req, fuse_ino_t parent, const char *name,
			 mode_t mode, struct fuse_file_info *fi)
{
	struct fs_ctx *fs = fs_req(req);
	struct fs_inode *dir = fs_ino(fs, parent), *inode = NULL;
	struct fuse_entry_param e;
	struct fs_fdref dref;
	struct fs_creds cr;
	struct fs_capture op;
	struct stat st;
	int fd = -1, ret;

	fs_capture_start(&op, req, IOTAP_OP_CREATE, NULL);
	op.rec.file2 = dir->ino;
	fs_capture_dir(&op, dir);
	op.rec.flags = fi->flags;
	op.rec.mode = mode;
	ret = fs_capture_fault(&op);
	if (ret)
		goto out;
	ret = fs_inode_fd(fs, dir, &dref);
	if (ret)
		goto out;
	fs_creds_push(fs, req, &cr);
	fs_capture_io_begin(&op);
	/* O_EXCL stays: another path to the backing dir may race with us */
	fd = openat(dref.fd, name, fs_backing_flags(fs, fi->flags) | (fi->flags & O_EXCL) |
		    O_CREAT, mode);
	if (fd < 0)
		ret = -errno;
	fs_capture_io_end(&op);
	fs_creds_pop(&cr);
	fs_fdref_put(&dref);
	if (ret)
		goto out;
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		goto out_close;
	}
	op.rec.file = st.st_ino;
	ret = fs_inode_get(fs, &st, -1, fd, &inode);
	if (ret)
		goto out_close;
	ret = fs_file_attach(fs, fi, fd, inode);
	if (ret)
		goto out_forget;
	op.rec.fh = fs_file(fi)->id;
	entry_fill(fs, &e, inode, &st);
	fs_capture_name(&op, inode, dir, name, &st, 0, true);
	goto out;

out_forget:
	fs_inode_forget(fs, inode, 1);
	inode = NULL;
out_close:
	close(fd);
out:
	if (ret)
		op.rec.name = name;
	fs_capture_end(&op, ret);
	if (ret) {
		fuse_reply_err(req, -ret);
	} else if (fuse_reply_create(req, &e, fi)) {
		/* interrupted: the kernel has neither the entry nor the open file */
		fs_file_detach(fi);
		fs_inode_forget(fs, inode, 1);
	}
}

static void fs_op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent,
		       const char *newname)
{
	struct fs_ctx *fs = fs_req(req);
	struct fs_inode *inode = fs_ino(fs, ino), *dir = fs_ino(fs, newparent);
	char proc[FS_PROCNAME_MAX];
	struct fuse_entry_param e;
	struct fs_fdref iref, dref;
	struct fs_creds cr;
	struct fs_capture op;
	struct stat st;
	int ret;

	fs_capture_start(&op, req, IOTAP_OP_LINK, inode);
	op.rec.file2 = dir->ino;
	fs_capture_dir(&op, dir);
	ret = fs_capture_fault(&op);
	if (ret)
		goto out;
	ret = fs_inode_fd(fs, inode, &iref);
	if (ret)
		goto out;
	ret = fs_inode_fd(fs, dir, &dref);
	if (ret)
		goto out_put_inode;
	fs_procname(proc, iref.fd);
	fs_creds_push(fs, req, &cr);
	fs_capture_io_begin(&op);
	ret = linkat(AT_FDCWD, proc, dref.fd, newname, AT_SYMLINK_FOLLOW);
	if (ret < 0)
		ret = -errno;
	fs_capture_io_end(&op);
	fs_creds_pop(&cr);
	if (!ret && fstat(iref.fd, &st) < 0)
		ret = -errno;
	if (!ret) {
		op.rec.mode = st.st_mode;
		fs_inode_ref(inode);
		entry_fill(fs, &e, inode, &st);
		fs_capture_name(&op, inode, dir, newname, &st, 1, true);
	}
	fs_fdref_put(&dref);
out_put_inode:
	fs_fdref_put(&iref);
out:
	if (ret)
		op.rec.name = newname;
	fs_capture_end(&op, ret);
	if (ret)
		fuse_reply_err(req, -ret);
	else
		reply_entry(fs, req, &e, inode);
}

/* --- removals and rename ---------------------------------------------- */

static void remove_op(fuse_req_t req, fuse_ino_t parent, const char *name, bool isdir)
{
	struct fs_ctx *fs = fs_req(req);
	struct fs_inode *dir = fs_ino(fs, parent);
	struct fs_fdref dref;
	struct fs_capture op;
	struct stat st;
	int ret;

	fs_capture_start(&op, req, isdir ? IOTAP_OP_RMDIR : IOTAP_OP_UNLINK, NULL);
	op.rec.file2 = dir->ino;
	fs_capture_dir(&op, dir);
	ret = fs_capture_fault(&op);
	if (ret)
		goto out;
	ret = fs_inode_fd(fs, dir, &dref);
	if (ret)
		goto out;
	/* which file goes: its NAME record already says where it lived */
	if (fstatat(dref.fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		op.rec.file = st.st_ino;
		op.rec.mode = st.st_mode;
		/* with several hard links the name says which one */
		if (!S_ISDIR(st.st_mode) && st.st_nlink > 1)
			op.rec.name = name;
	}
	fs_capture_io_begin(&op);
	ret = unlinkat(dref.fd, name, isdir ? AT_REMOVEDIR : 0);
	if (ret < 0)
		ret = -errno;
	fs_capture_io_end(&op);
	fs_fdref_put(&dref);
out:
	if (!op.rec.file)
		op.rec.name = name;
	fs_capture_end(&op, ret);
	fuse_reply_err(req, -ret);
}

static void fs_op_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	remove_op(req, parent, name, false);
}

static void fs_op_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	remove_op(req, parent, name, true);
}

static void fs_op_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
			 fuse_ino_t newparent, const char *newname, unsigned int flags)
{
	struct fs_ctx *fs = fs_req(req);
	struct fs_inode *dir = fs_ino(fs, parent), *newdir = fs_ino(fs, newparent);
	struct fs_fdref dref, nref;
	struct fs_capture op;
	struct stat st;
	int ret;

	fs_capture_start(&op, req, IOTAP_OP_RENAME, NULL);
	op.rec.file2 = newdir->ino;
	fs_capture_dir(&op, dir);
	fs_capture_dir(&op, newdir);
	op.rec.aux = dir->ino;
	op.rec.flags = flags;
	ret = fs_capture_fault(&op);
	if (ret)
		goto out;
	ret = fs_inode_fd(fs, dir, &dref);
	if (ret)
		goto out;
	ret = fs_inode_fd(fs, newdir, &nref);
	if (ret)
		goto out_put_dir;
	fs_capture_io_begin(&op);
	ret = renameat2(dref.fd, name, nref.fd, newname, flags);
	if (ret < 0)
		ret = -errno;
	fs_capture_io_end(&op);
	if (!ret && fstatat(nref.fd, newname, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		op.rec.file = st.st_ino;
		op.rec.mode = st.st_mode;
		/* with several hard links the old name says which one moved */
		if (!S_ISDIR(st.st_mode) && st.st_nlink > 1)
			op.rec.name = name;
		fs_capture_name(&op, NULL, newdir, newname, &st, 0, true);
	}
	if (!ret && (flags & RENAME_EXCHANGE) &&
	    fstatat(dref.fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
		fs_capture_name(&op, NULL, dir, name, &st, 0, true);
	fs_fdref_put(&nref);
out_put_dir:
	fs_fdref_put(&dref);
out:
	if (!op.rec.file)
		op.rec.name = name;
	fs_capture_end(&op, ret);
	fuse_reply_err(req, -ret);
}

/* --- directories -------------------------------------------------------- */

static void fs_op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fs_ctx *fs = fs_req(req);
	struct fs_inode *inode = fs_ino(fs, ino);
	struct fs_dir *d;
	struct fs_capture op;
	int fd, ret;

	fs_capture_start(&op, req, IOTAP_OP_OPENDIR, inode);
	op.rec.flags = fi->flags;
	ret = fs_capture_fault(&op);
	if (ret)
		goto out;
	d = calloc(1, sizeof(*d));
	if (!d) {
		ret = -ENOMEM;
		goto out;
	}
	fs_capture_io_begin(&op);
	fd = fs_inode_open(fs, inode, O_RDONLY | O_DIRECTORY);
	fs_capture_io_end(&op);
	if (fd < 0) {
		ret = fd;
		goto out_free;
	}
	d->dp = fdopendir(fd);
	if (!d->dp) {
		ret = -errno;
		close(fd);
		goto out_free;
	}
	d->inode = inode;
	d->id = fs_next_fh(fs);
	op.rec.fh = d->id;
	fi->fh = (uintptr_t)d;
	goto out;

out_free:
	free(d);
out:
	fs_capture_end(&op, ret);
	if (ret) {
		fuse_reply_err(req, -ret);
	} else if (fuse_reply_open(req, fi)) {
		closedir(d->dp);
		free(d);
	}
}

/*
 * Fill @buf with entries from @d's position on. For readdirplus, each
 * entry but . and .. is looked up (one kernel reference each) and NAMEs
 * are queued. Returns the bytes filled; *@err gets the error that stopped
 * it early, if any.
 */
static size_t fill_dir(struct fs_capture *op, fuse_req_t req, struct fs_dir *d, char *buf,
		       size_t size, off_t offset, bool plus, int *err, uint64_t *entries)
{
	struct fs_ctx *fs = op->fs;
	size_t rem = size;
	char *p = buf;

	*err = 0;
	if (offset != d->offset) {
		seekdir(d->dp, offset);
		d->entry = NULL;
		d->offset = offset;
	}
	for (;;) {
		struct fs_inode *inode = NULL;
		const char *name;
		size_t entsize;
		off_t nextoff;

		if (!d->entry) {
			errno = 0;
			d->entry = readdir(d->dp);
			if (!d->entry) {
				*err = -errno;
				break;
			}
		}
		nextoff = d->entry->d_off;
		name = d->entry->d_name;
		if (plus) {
			struct fuse_entry_param e;
			struct stat st;

			if (is_dot_or_dotdot(name)) {
				memset(&e, 0, sizeof(e));
				e.attr.st_ino = d->entry->d_ino;
				e.attr.st_mode = d->entry->d_type << 12;
			} else {
				int fd = child_open(dirfd(d->dp), name, &st);

				if (fd == -ENOENT) {
					/* removed since readdir saw it */
					d->entry = NULL;
					d->offset = nextoff;
					continue;
				}
				if (fd < 0) {
					*err = fd;
					break;
				}
				*err = fs_inode_get(fs, &st, fd, -1, &inode);
				if (*err)
					break;
				entry_fill(fs, &e, inode, &st);
			}
			entsize = fuse_add_direntry_plus(req, p, rem, name, &e, nextoff);
			if (entsize > rem || (inode && !fs_thread_ref_push(op->t, inode))) {
				if (inode)
					fs_inode_forget(fs, inode, 1);
				break;
			}
			if (inode)
				fs_capture_name(op, inode, d->inode, name, &e.attr,
						!S_ISDIR(e.attr.st_mode) &&
						e.attr.st_nlink > 1, false);
		} else {
			struct stat st = {
				.st_ino = d->entry->d_ino,
				.st_mode = d->entry->d_type << 12,
			};

			entsize = fuse_add_direntry(req, p, rem, name, &st, nextoff);
			if (entsize > rem)
				break;
		}
		p += entsize;
		rem -= entsize;
		(*entries)++;
		d->entry = NULL;
		d->offset = nextoff;
	}
	return size - rem;
}

static void readdir_op(fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset,
		       struct fuse_file_info *fi, bool plus)
{
	struct fs_dir *d = fs_dir(fi);
	struct fs_capture op;
	uint64_t entries = 0;
	size_t filled = 0;
	char *buf = NULL;
	int ret;

	(void)ino;
	fs_capture_start(&op, req, plus ? IOTAP_OP_READDIRPLUS : IOTAP_OP_READDIR, d->inode);
	op.rec.fh = d->id;
	op.rec.offset = offset;
	op.rec.length = size;
	ret = fs_capture_fault(&op);
	if (ret)
		goto out;
	buf = fs_thread_iobuf(op.t, size);
	if (!buf) {
		ret = -ENOMEM;
		goto out;
	}
	op.t->nr_refs = 0;
	fs_capture_io_begin(&op);
	filled = fill_dir(&op, req, d, buf, size, offset, plus, &ret, &entries);
	fs_capture_io_end(&op);
	/*
	 * An error after some entries were filled cannot be reported without
	 * losing their lookup references: return what we have (passthrough_ll).
	 */
	if (filled)
		ret = 0;
	op.rec.aux = entries;
out:
	fs_capture_end(&op, ret ? ret : (int64_t)filled);
	if (ret) {
		fuse_reply_err(req, -ret);
	} else if (fuse_reply_buf(req, buf, filled) && plus) {
		unsigned int i;

		/* interrupted: the kernel never saw these entries */
		for (i = 0; i < op.t->nr_refs; i++)
			fs_inode_forget(op.fs, op.t->refs[i], 1);
	}
}

static void fs_op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset,
			  struct fuse_file_info *fi)
{
	readdir_op(req, ino, size, offset, fi, false);
}

static void fs_op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset,
			      struct fuse_file_info *fi)
{
	readdir_op(req, ino, size, offset, fi, true);
}

static void fs_op_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fs_dir *d = fs_dir(fi);
	struct fs_capture op;
	int ret;

	(void)ino;
	fs_capture_start(&op, req, IOTAP_OP_RELEASEDIR, d->inode);
	op.rec.fh = d->id;
	fs_capture_io_begin(&op);
	ret = closedir(d->dp) < 0 ? -errno : 0;
	fs_capture_io_end(&op);
	free(d);
	fs_capture_end(&op, ret);
	fuse_reply_err(req, 0);
}

static void fs_op_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync,
			   struct fuse_file_info *fi)
{
	struct fs_dir *d = fs_dir(fi);
	struct fs_capture op;
	int ret;

	(void)ino;
	fs_capture_start(&op, req, IOTAP_OP_FSYNCDIR, d->inode);
	op.rec.fh = d->id;
	op.rec.flags = datasync ? IOTAP_OPF_DATASYNC : 0;
	ret = fs_capture_fault(&op);
	if (!ret) {
		fs_capture_io_begin(&op);
		ret = datasync ? fdatasync(dirfd(d->dp)) : fsync(dirfd(d->dp));
		if (ret < 0)
			ret = -errno;
		fs_capture_io_end(&op);
	}
	fs_capture_end(&op, ret);
	fuse_reply_err(req, -ret);
}

void fs_ops_dir(struct fuse_lowlevel_ops *ops)
{
	ops->lookup = fs_op_lookup;
	ops->forget = fs_op_forget;
	ops->forget_multi = fs_op_forget_multi;
	ops->mknod = fs_op_mknod;
	ops->mkdir = fs_op_mkdir;
	ops->symlink = fs_op_symlink;
	ops->create = fs_op_create;
	ops->link = fs_op_link;
	ops->unlink = fs_op_unlink;
	ops->rmdir = fs_op_rmdir;
	ops->rename = fs_op_rename;
	ops->opendir = fs_op_opendir;
	ops->readdir = fs_op_readdir;
	ops->readdirplus = fs_op_readdirplus;
	ops->releasedir = fs_op_releasedir;
	ops->fsyncdir = fs_op_fsyncdir;
}
