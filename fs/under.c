// SPDX-License-Identifier: MIT
/*
 * under.c - the subtree filter (--only-under): which inodes are in scope
 *
 * The subtrees are resolved below the backing dir before the mount, with
 * the directories above them (their NAMEs are recorded so that paths
 * resolve, their ops are not). After that an inode's scope follows its
 * bindings: it is IN when it is a subtree root or was named in an IN
 * directory. A known directory renamed into or out of a subtree bumps
 * fs->scope_gen, and every inode finds its scope again from its current
 * path (/proc/self/fd) the next time it is asked. Hard links: a
 * non-directory with several links stays IN once one of its names was, so
 * a file is recorded through any of its names.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs_i.h"

static int under_root_idx(const struct fs_under *u, uint64_t dev, uint64_t ino)
{
	unsigned int i;

	for (i = 0; i < u->n; i++)
		if (u->ino[i] == ino && u->dev[i] == dev)
			return (int)i;
	return -1;
}

static bool under_anc(const struct fs_under *u, uint64_t dev, uint64_t ino)
{
	unsigned int i;

	for (i = 0; i < u->nanc; i++)
		if (u->anc_ino[i] == ino && u->anc_dev[i] == dev)
			return true;
	return false;
}

/* The current path of O_PATH @fd into @buf without " (deleted)"; its length or -1. */
static ssize_t fd_path(int fd, char *buf, size_t size)
{
	char proc[FS_PROCNAME_MAX];
	ssize_t n;

	fs_procname(proc, fd);
	n = readlink(proc, buf, size - 1);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	if (n > 10 && !strcmp(buf + n - 10, " (deleted)"))
		buf[n -= 10] = '\0';
	return n;
}

/*
 * The scope of @inode from its current path: IN when it is a subtree root
 * or below one's current path, PATH when it is one of the directories
 * above them, else OUT; -1 when the path cannot be read.
 */
static int scope_by_path(struct fs_ctx *fs, struct fs_inode *inode)
{
	const struct fs_under *u = &fs->under;
	char path[PATH_MAX], rpath[PATH_MAX];
	struct fs_fdref ref;
	unsigned int i;
	ssize_t n, rn;

	if (under_root_idx(u, inode->dev, inode->ino) >= 0)
		return FS_SCOPE_IN;
	if (fs_inode_fd(fs, inode, &ref))
		return -1;
	n = fd_path(ref.fd, path, sizeof(path));
	fs_fdref_put(&ref);
	if (n < 0)
		return -1;
	for (i = 0; i < u->n; i++) {
		rn = fd_path(u->fd[i], rpath, sizeof(rpath));
		if (rn > 0 && n > rn && !strncmp(path, rpath, (size_t)rn) &&
		    (path[rn] == '/' || rn == 1))
			return FS_SCOPE_IN;
	}
	return under_anc(u, inode->dev, inode->ino) ? FS_SCOPE_PATH : FS_SCOPE_OUT;
}

uint8_t fs_scope(struct fs_ctx *fs, struct fs_inode *inode, struct iotap_trace_recorder *r)
{
	uint32_t gen = CMM_LOAD_SHARED(fs->scope_gen);
	uint8_t old = CMM_LOAD_SHARED(inode->scope);
	int s;

	if (!fs->under.n)
		return FS_SCOPE_IN;
	if (caa_likely(CMM_LOAD_SHARED(inode->scope_gen) == gen))
		return old;
	/* a directory changed scope since this inode's was set: its path says */
	s = scope_by_path(fs, inode);
	if (s < 0)
		s = old;
	CMM_STORE_SHARED(inode->scope, (uint8_t)s);
	CMM_STORE_SHARED(inode->scope_gen, gen);
	/* it came into a subtree with a directory: name it before its ops */
	if (r && s == FS_SCOPE_IN && old != FS_SCOPE_IN)
		fs_ctl_name_inode(fs, inode, r, false);
	return (uint8_t)s;
}

/*
 * A binding of @st (@inode, or the live inode of @st, or none) in @dir:
 * set the inode's scope from @dir's and tell whether the binding gets a
 * NAME (its directory is in the trace: in a subtree or above one).
 * Hard links: a non-directory with several links stays IN once one of
 * its names was, so a file is recorded through any of its names. A known
 * directory that changes scope (renamed into or out of a subtree) makes
 * every inode find its scope again (fs->scope_gen).
 */
bool fs_under_bind(struct fs_capture *op, struct fs_inode *inode, struct fs_inode *dir,
		   const struct stat *st)
{
	struct fs_ctx *fs = op->fs;
	const struct fs_under *u = &fs->under;
	struct fs_inode *found = NULL;
	uint8_t s, bs, old;
	uint32_t gen;

	if (under_root_idx(u, st->st_dev, st->st_ino) >= 0 ||
	    fs_scope(fs, dir, NULL) == FS_SCOPE_IN)
		bs = FS_SCOPE_IN;
	else if (under_anc(u, st->st_dev, st->st_ino))
		bs = FS_SCOPE_PATH;
	else
		bs = FS_SCOPE_OUT;
	s = bs;
	if (!inode)
		inode = found = fs_inode_find(fs, st->st_dev, st->st_ino);
	if (inode) {
		gen = CMM_LOAD_SHARED(fs->scope_gen);
		old = CMM_LOAD_SHARED(inode->scope);
		if (old == FS_SCOPE_IN && !S_ISDIR(st->st_mode) && st->st_nlink > 1)
			s = FS_SCOPE_IN;
		CMM_STORE_SHARED(inode->scope, s);
		if (S_ISDIR(st->st_mode) && CMM_LOAD_SHARED(inode->scope_gen) &&
		    (old == FS_SCOPE_IN) != (s == FS_SCOPE_IN)) {
			gen = uatomic_add_return(&fs->scope_gen, 1);
			fs_log(FS_LOG_INFO, "--only-under: directory inode %llu %s a subtree; "
			       "the files below it follow", (unsigned long long)st->st_ino,
			       s == FS_SCOPE_IN ? "came into" : "left");
		}
		CMM_STORE_SHARED(inode->scope_gen, gen);
		if (found)
			fs_inode_forget(fs, found, 1);
	}
	/* a lookup, creation or rename of something under a subtree is recorded */
	if (s == FS_SCOPE_IN && op->rec.op != IOTAP_OP_READDIRPLUS)
		op->in = true;
	/* named only where the name resolves: in a subtree or above one */
	return bs != FS_SCOPE_OUT;
}

/* Resolve one --only-under @arg into fs->under; 0 or -errno with @msg. */
static int under_add(struct fs_ctx *fs, const char *arg, char *msg, size_t size)
{
	struct fs_under *u = &fs->under;
	size_t blen = strlen(fs->backing), mlen = strlen(fs->mountpoint);
	char *rel, *p, *comp, *save = NULL;
	const char *r = arg;
	struct stat st;
	int fd, nfd, ret;

	if (u->n >= FS_UNDER_MAX) {
		snprintf(msg, size, "--only-under: at most %d subtrees", FS_UNDER_MAX);
		return -E2BIG;
	}
	if (arg[0] == '/') {
		/* absolute: below the mount point or the backing dir */
		if (!strncmp(arg, fs->mountpoint, mlen) && (arg[mlen] == '/' || !arg[mlen]))
			r = arg + mlen;
		else if (!strncmp(arg, fs->backing, blen) && (arg[blen] == '/' || !arg[blen]))
			r = arg + blen;
		else {
			snprintf(msg, size, "--only-under '%s': not below the mount point '%s' "
				 "or the backing directory '%s'", arg, fs->mountpoint, fs->backing);
			return -EINVAL;
		}
	}
	rel = malloc(strlen(r) + 2);
	if (!rel)
		return -ENOMEM;
	/* canonical: components joined by '/', no ".", no "..", no empty ones */
	rel[0] = '\0';
	p = strdup(r);
	if (!p) {
		free(rel);
		return -ENOMEM;
	}
	fd = dup(fs->root_fd);
	ret = fd < 0 ? -errno : 0;
	for (comp = strtok_r(p, "/", &save); comp && !ret; comp = strtok_r(NULL, "/", &save)) {
		if (!strcmp(comp, "."))
			continue;
		if (!strcmp(comp, "..")) {
			snprintf(msg, size, "--only-under '%s': '..' is not allowed", arg);
			ret = -EINVAL;
			break;
		}
		/* the directory walked so far is above the subtree */
		if (fstat(fd, &st) == 0 && u->nanc < FS_UNDER_ANC_MAX &&
		    !under_anc(u, st.st_dev, st.st_ino)) {
			u->anc_dev[u->nanc] = st.st_dev;
			u->anc_ino[u->nanc++] = st.st_ino;
		}
		nfd = openat(fd, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (nfd < 0) {
			ret = -errno;
			snprintf(msg, size, "--only-under '%s': '%s%s%s': %s", arg, rel,
				 *rel ? "/" : "", comp, strerror(-ret));
			break;
		}
		close(fd);
		fd = nfd;
		if (*rel)
			strcat(rel, "/");
		strcat(rel, comp);
	}
	free(p);
	if (!ret && fstat(fd, &st) < 0)
		ret = -errno;
	if (!ret && S_ISLNK(st.st_mode)) {
		snprintf(msg, size, "--only-under '%s': a symbolic link (name its target)", arg);
		ret = -EINVAL;
	}
	if (!ret && !*rel)
		strcpy(rel, ".");
	if (ret) {
		if (!*msg)
			snprintf(msg, size, "--only-under '%s': %s", arg, strerror(-ret));
		if (fd >= 0)
			close(fd);
		free(rel);
		return ret;
	}
	u->fd[u->n] = fd;
	u->dev[u->n] = st.st_dev;
	u->ino[u->n] = st.st_ino;
	u->rel[u->n++] = rel;
	return 0;
}

int fs_under_init(struct fs_ctx *fs, char *msg, size_t size)
{
	unsigned int i;
	int ret;

	fs->scope_gen = 1;
	msg[0] = '\0';
	for (i = 0; i < fs->o.nr_only_under; i++) {
		ret = under_add(fs, fs->o.only_under[i], msg, size);
		if (ret)
			return ret;
	}
	/* a subtree inside another: the outer one holds it, the inner one is harmless */
	return 0;
}

void fs_under_root(struct fs_ctx *fs)
{
	const struct fs_under *u = &fs->under;

	if (!u->n)
		return;
	fs->root->scope = under_root_idx(u, fs->root->dev, fs->root->ino) >= 0 ? FS_SCOPE_IN
										 : FS_SCOPE_PATH;
	fs->root->scope_gen = fs->scope_gen;
}
