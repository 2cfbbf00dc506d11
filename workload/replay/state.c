// SPDX-License-Identifier: MIT
/*
 * state.c - the initial state in the target: check it, build it
 *
 * The scan (scan.c) lists the entries the capture started with
 * (directories, files with their size, symlinks with their target length,
 * fifos, additional hard links; parents before children) and the names
 * that must not exist yet (the slice creates them, or a lookup did not
 * find them). Each is relative to its base: the target directory or a
 * --map directory.
 *
 * check:   every entry there with its type and size, nothing in the way.
 * changes: what prepare would remove or change of what the target holds:
 *          names in the way, entries of the wrong type, files to cut or
 *          extend, hard links and symlinks to replace.
 * prepare: make it so: create what is missing with --data content, extend
 *          or cut files to their size, replace entries of the wrong type,
 *          remove what is in the way (recursively, never leaving the base's
 *          filesystem, never following a symlink), then set modes and, as
 *          root, owners (directories last, so that a read-only directory
 *          does not stop its own filling), then syncfs(2) every base, so
 *          that the replay does not start under the prepare's writeback.
 *          A target that holds anything prepare would remove or change is
 *          refused, untouched, unless IOTAP_REPLAY_CLOBBER; with it, each
 *          removal and change is listed as it is made.
 * space:   before prepare writes anything, the bytes it will add per
 *          filesystem against what is free there; the growth the slice
 *          itself causes is a warning.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "replay_i.h"

#define CHUNK		(1u << 20)
#define BLK		4096u

static uint64_t round_blk(uint64_t n)
{
	return (n + BLK - 1) / BLK * BLK;
}

static const char *type_name(uint32_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFDIR: return "directory";
	case S_IFLNK: return "symlink";
	case S_IFIFO: return "fifo";
	case S_IFSOCK: return "socket";
	case S_IFCHR: return "character device";
	case S_IFBLK: return "block device";
	}
	return "file";
}

static int same_type(uint32_t want, uint32_t have)
{
	if (!(want & S_IFMT))
		want |= S_IFREG;
	return (want & S_IFMT) == (have & S_IFMT);
}

struct report {
	FILE *f;
	unsigned int max, n;
};

static void say(struct iotap_replay *r, struct report *rp, uint32_t base,
		const char *path, const char *fmt, const char *detail)
{
	if (rp->f && rp->n < rp->max) {
		fprintf(rp->f, "  %s: '%s%s%s'", fmt, r->base_path[base],
			strcmp(path, ".") ? "/" : "", strcmp(path, ".") ? path : "");
		if (detail)
			fprintf(rp->f, " (%s)", detail);
		fputc('\n', rp->f);
	}
	rp->n++;
}

int rp_state_check(struct iotap_replay *r, FILE *f, unsigned int max)
{
	struct report rp = { f, max, 0 };
	char detail[128];
	uint32_t i;

	for (i = 0; i < r->nentries; i++) {
		const struct rp_entry *e = &r->entries[i];
		struct stat st;

		if (fstatat(r->base_fd[e->base], e->path, &st, AT_SYMLINK_NOFOLLOW)) {
			if (errno != ENOENT && errno != ENOTDIR)
				return rp_what(r, -errno, "%s/%s", r->base_path[e->base], e->path);
			if (S_ISREG(e->mode) || !(e->mode & S_IFMT))
				snprintf(detail, sizeof(detail), "a file of %" PRIu64 " bytes",
					 e->size);
			else
				snprintf(detail, sizeof(detail), "a %s", type_name(e->mode));
			say(r, &rp, e->base, e->path, e->link_to >= 0 ? "missing hard link"
								      : "missing", detail);
			continue;
		}
		if (e->link_to >= 0) {
			struct stat t;
			const struct rp_entry *to = &r->entries[e->link_to];

			if (fstatat(r->base_fd[to->base], to->path, &t, AT_SYMLINK_NOFOLLOW) ||
			    t.st_ino != st.st_ino || t.st_dev != st.st_dev)
				say(r, &rp, e->base, e->path, "not a hard link", to->path);
			continue;
		}
		if (!same_type(e->mode, st.st_mode)) {
			snprintf(detail, sizeof(detail), "a %s, the capture saw a %s",
				 type_name(st.st_mode), type_name(e->mode));
			say(r, &rp, e->base, e->path, "wrong type", detail);
		} else if ((S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)) &&
			   (uint64_t)st.st_size != e->size) {
			snprintf(detail, sizeof(detail), "%" PRIu64 " bytes, the capture saw %"
				 PRIu64, (uint64_t)st.st_size, e->size);
			say(r, &rp, e->base, e->path, "wrong size", detail);
		}
	}
	for (i = 0; i < r->nabsent; i++) {
		const struct rp_absent *a = &r->absent[i];
		struct stat st;

		if (!fstatat(r->base_fd[a->base], a->path, &st, AT_SYMLINK_NOFOLLOW))
			say(r, &rp, a->base, a->path, "in the way",
			    "the capture creates it or did not find it");
	}
	if (rp.f && rp.n > rp.max)
		fprintf(rp.f, "  ... and %u more\n", rp.n - rp.max);
	return rp.n ? -ENOTEMPTY : 0;
}

/* What @st, about to be removed, is: "a directory with all it holds", "a file". */
static const char *removed_what(const struct stat *st, char *buf, size_t len)
{
	if (S_ISDIR(st->st_mode))
		return "a directory with all it holds";
	snprintf(buf, len, "a %s", type_name(st->st_mode));
	return buf;
}

int rp_state_changes(struct iotap_replay *r, FILE *f, unsigned int max)
{
	struct report rp = { f, max, 0 };
	char detail[160], what[64];
	uint32_t i;

	for (i = 0; i < r->nabsent; i++) {
		const struct rp_absent *a = &r->absent[i];
		struct stat st;

		if (fstatat(r->base_fd[a->base], a->path, &st, AT_SYMLINK_NOFOLLOW))
			continue;
		snprintf(detail, sizeof(detail), "%s; the capture creates it or did not find it",
			 removed_what(&st, what, sizeof(what)));
		say(r, &rp, a->base, a->path, "remove", detail);
	}
	for (i = 0; i < r->nentries; i++) {
		const struct rp_entry *e = &r->entries[i];
		struct stat st, t;

		if (fstatat(r->base_fd[e->base], e->path, &st, AT_SYMLINK_NOFOLLOW)) {
			if (errno != ENOENT && errno != ENOTDIR)
				return rp_what(r, -errno, "%s/%s", r->base_path[e->base], e->path);
			continue;
		}
		if (e->link_to >= 0) {
			const struct rp_entry *to = &r->entries[e->link_to];

			if (fstatat(r->base_fd[to->base], to->path, &t, AT_SYMLINK_NOFOLLOW) ||
			    t.st_ino != st.st_ino || t.st_dev != st.st_dev) {
				snprintf(detail, sizeof(detail), "%s, by a hard link to '%s'",
					 removed_what(&st, what, sizeof(what)), to->path);
				say(r, &rp, e->base, e->path, "replace", detail);
			}
			continue;
		}
		if (!same_type(e->mode, st.st_mode)) {
			snprintf(detail, sizeof(detail), "%s, the capture saw a %s",
				 removed_what(&st, what, sizeof(what)), type_name(e->mode));
			say(r, &rp, e->base, e->path, "remove", detail);
		} else if (S_ISREG(st.st_mode) && (uint64_t)st.st_size != e->size) {
			snprintf(detail, sizeof(detail), "from %" PRIu64 " to %" PRIu64 " bytes",
				 (uint64_t)st.st_size, e->size);
			say(r, &rp, e->base, e->path,
			    (uint64_t)st.st_size > e->size ? "truncate" : "extend", detail);
		} else if (S_ISLNK(st.st_mode) && (uint64_t)st.st_size != e->size) {
			snprintf(detail, sizeof(detail), "a symlink of %" PRIu64 " bytes, the "
				 "capture saw %" PRIu64, (uint64_t)st.st_size, e->size);
			say(r, &rp, e->base, e->path, "replace", detail);
		}
	}
	if (rp.f && rp.n > rp.max)
		fprintf(rp.f, "  ... and %u more\n", rp.n - rp.max);
	return (int)rp.n;
}

/* --- space -------------------------------------------------------------------------- */

/* Bytes prepare adds for entry @e (0 if it is there already). */
static uint64_t entry_need(struct iotap_replay *r, const struct rp_entry *e)
{
	struct stat st;
	int there = !fstatat(r->base_fd[e->base], e->path, &st, AT_SYMLINK_NOFOLLOW);

	if (e->link_to >= 0)
		return 0;
	if (S_ISDIR(e->mode))
		return there ? 0 : BLK;
	if (!S_ISREG(e->mode) && (e->mode & S_IFMT))
		return 0;
	if (there && S_ISREG(st.st_mode))
		return round_blk(e->size) > round_blk((uint64_t)st.st_size)
		       ? round_blk(e->size) - round_blk((uint64_t)st.st_size) : 0;
	return round_blk(e->size);
}

int rp_state_space(struct iotap_replay *r, int prepare)
{
	uint64_t need[1 + RP_MAPS_MAX] = { 0 }, fsid[1 + RP_MAPS_MAX];
	uint64_t avail[1 + RP_MAPS_MAX];
	uint64_t growth = r->plan.peak_bytes > r->plan.state_bytes
			  ? r->plan.peak_bytes - r->plan.state_bytes : 0;
	unsigned int i, j, nb = 1 + r->nmaps;

	for (i = 0; i < nb; i++) {
		struct statvfs sv;

		if (fstatvfs(r->base_fd[i], &sv))
			return rp_what(r, -errno, "%s", r->base_path[i]);
		fsid[i] = (uint64_t)sv.f_fsid;
		avail[i] = (uint64_t)sv.f_bavail * (uint64_t)sv.f_frsize;
	}
	if (prepare)
		for (i = 0; i < r->nentries; i++)
			need[r->entries[i].base] += entry_need(r, &r->entries[i]);
	/* bases on one filesystem share its free space */
	for (i = 0; i < nb; i++) {
		uint64_t sum = 0;

		for (j = 0; j < nb; j++)
			if (fsid[j] == fsid[i])
				sum += need[j];
		if (sum > avail[i])
			return rp_what(r, -ENOSPC, "'%s' has %.1f MB free, the initial state "
				       "needs %.1f MB more", r->base_path[i], avail[i] / 1e6,
				       sum / 1e6);
		if (sum + growth > avail[i] && !r->space_warning[0])
			snprintf(r->space_warning, sizeof(r->space_warning),
				 "'%s' has %.1f MB free; the replay grows the files by up to "
				 "%.1f MB and may run out of space", r->base_path[i],
				 (avail[i] - sum) / 1e6, growth / 1e6);
	}
	return 0;
}

/* --- prepare -------------------------------------------------------------------------- */

/* Remove @name in @dirfd, recursively, staying on @dev. 0 or -errno. */
static int remove_tree(int dirfd, const char *name, dev_t dev, int depth)
{
	struct dirent *d;
	struct stat st;
	DIR *dir;
	int fd, ret = 0;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW))
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISDIR(st.st_mode))
		return unlinkat(dirfd, name, 0) ? -errno : 0;
	if (st.st_dev != dev)
		return -EXDEV;
	if (depth > RP_DEPTH_MAX)
		return -ELOOP;
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	dir = fdopendir(fd);
	if (!dir) {
		close(fd);
		return -errno;
	}
	while ((d = readdir(dir))) {
		if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, ".."))
			continue;
		ret = remove_tree(fd, d->d_name, dev, depth + 1);
		if (ret)
			break;
	}
	closedir(dir);
	if (ret)
		return ret;
	return unlinkat(dirfd, name, AT_REMOVEDIR) ? -errno : 0;
}

/*
 * Remove what is at @path (in the way, or of the wrong type) and say so on
 * @log with @why; nothing there is not an error.
 */
static int clear(struct iotap_replay *r, struct report *log, uint32_t base,
		 const char *path, const char *why)
{
	struct stat st, bst;
	char detail[160], what[64];
	int ret;

	if (!strcmp(path, "."))
		return -EEXIST;		/* a base itself is never removed */
	if (fstatat(r->base_fd[base], path, &st, AT_SYMLINK_NOFOLLOW))
		return errno == ENOENT ? 0 : -errno;
	if (fstat(r->base_fd[base], &bst))
		return -errno;
	ret = remove_tree(r->base_fd[base], path, bst.st_dev, 0);
	if (!ret) {
		snprintf(detail, sizeof(detail), "%s%s%s", removed_what(&st, what, sizeof(what)),
			 why ? "; " : "", why ? why : "");
		say(r, log, base, path, "removed", detail);
	}
	return ret;
}

static int fill_file(struct iotap_replay *r, struct report *log, struct rp_wbuf *wb,
		     const struct rp_entry *e, int there)
{
	int dirfd = r->base_fd[e->base];
	char detail[96];
	struct stat st;
	uint64_t off;
	int fd, ret = 0;

	fd = openat(dirfd, e->path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		ret = -errno;
		goto out;
	}
	off = (uint64_t)st.st_size;
	if (there && off != e->size) {
		snprintf(detail, sizeof(detail), "from %" PRIu64 " to %" PRIu64 " bytes", off,
			 e->size);
		say(r, log, e->base, e->path, off > e->size ? "truncated" : "extended", detail);
	}
	if (off > e->size) {
		if (ftruncate(fd, (off_t)e->size))
			ret = -errno;
		goto out;
	}
	while (off < e->size) {
		size_t n = e->size - off < CHUNK ? (size_t)(e->size - off) : CHUNK;
		const void *buf = rp_data_fill(&r->data, wb, off, n);
		ssize_t w;

		if (!buf) {
			ret = -ENOMEM;
			break;
		}
		w = pwrite(fd, buf, n, (off_t)off);
		if (w < 0) {
			ret = -errno;
			break;
		}
		if (!w) {
			ret = -ENOSPC;
			break;
		}
		off += (uint64_t)w;
	}
out:
	if (close(fd) && !ret)
		ret = -errno;
	return ret;
}

static int make_symlink(struct iotap_replay *r, struct report *log,
			const struct rp_entry *e)
{
	static const char pat[] = "iotap-replay-symlink-";
	char target[RP_PATH_MAX];
	size_t n = e->size < sizeof(target) - 1 ? (size_t)e->size : sizeof(target) - 1, i;
	struct stat st;
	int ret;

	if (!fstatat(r->base_fd[e->base], e->path, &st, AT_SYMLINK_NOFOLLOW)) {
		if (S_ISLNK(st.st_mode) && (uint64_t)st.st_size == e->size)
			return 0;
		ret = clear(r, log, e->base, e->path, "replaced by a symlink of the recorded length");
		if (ret)
			return ret;
	}
	/* the trace has the length of the target, not the target */
	if (!n)
		n = 1;
	for (i = 0; i < n; i++)
		target[i] = pat[i % (sizeof(pat) - 1)];
	target[n] = '\0';
	return symlinkat(target, r->base_fd[e->base], e->path) ? -errno : 0;
}

static int make_entry(struct iotap_replay *r, struct report *log, struct rp_wbuf *wb,
		      const struct rp_entry *e)
{
	int dirfd = r->base_fd[e->base];
	struct stat st;
	int there = !fstatat(dirfd, e->path, &st, AT_SYMLINK_NOFOLLOW);
	int ret;

	if (e->link_to >= 0) {
		const struct rp_entry *to = &r->entries[e->link_to];
		struct stat t;

		if (there && !fstatat(r->base_fd[to->base], to->path, &t, AT_SYMLINK_NOFOLLOW) &&
		    t.st_ino == st.st_ino && t.st_dev == st.st_dev)
			return 0;
		if (there && (ret = clear(r, log, e->base, e->path, "replaced by a hard link")))
			return ret;
		return linkat(r->base_fd[to->base], to->path, dirfd, e->path, 0) ? -errno : 0;
	}
	if (there && !same_type(e->mode, st.st_mode)) {
		ret = clear(r, log, e->base, e->path, "the capture saw another type");
		if (ret)
			return ret;
		there = 0;
	}
	switch (e->mode & S_IFMT) {
	case S_IFDIR:
		if (!there && mkdirat(dirfd, e->path, 0700))
			return -errno;
		return 0;
	case S_IFLNK:
		return make_symlink(r, log, e);
	case S_IFIFO:
	case S_IFSOCK:
	case S_IFCHR:
	case S_IFBLK:
		if (there)
			return 0;
		return mknodat(dirfd, e->path, (e->mode & S_IFMT) | 0600, 0) ? -errno : 0;
	}
	return fill_file(r, log, wb, e, there);
}

static int set_attrs(struct iotap_replay *r, const struct rp_entry *e)
{
	int dirfd = r->base_fd[e->base];

	if (e->link_to >= 0)
		return 0;
	if (!S_ISLNK(e->mode) && fchmodat(dirfd, e->path, e->mode & 07777, 0))
		return -errno;
	if (r->as_root && fchownat(dirfd, e->path, e->uid, e->gid, AT_SYMLINK_NOFOLLOW))
		return -errno;
	return 0;
}

int rp_state_prepare(struct iotap_replay *r, FILE *f)
{
	struct report log = { f, UINT_MAX, 0 };
	struct rp_wbuf wb;
	mode_t old_umask;
	uint32_t i;
	int ret;

	if (!(r->o.flags & IOTAP_REPLAY_CLOBBER)) {
		ret = rp_state_changes(r, NULL, 0);
		if (ret < 0)
			return ret;
		if (ret)
			return rp_what(r, -EEXIST, "%s", r->base_path[0]);
	}
	ret = rp_state_space(r, 1);
	if (ret)
		return ret;
	ret = rp_wbuf_init(&wb, &r->data, 0x70726570ull, CHUNK);
	if (ret)
		return ret;
	old_umask = umask(0);
	for (i = 0; i < r->nabsent; i++) {
		ret = clear(r, &log, r->absent[i].base, r->absent[i].path,
			    "the capture creates it or did not find it");
		if (ret && ret != -ENOENT && ret != -ENOTDIR) {
			rp_what(r, ret, "%s/%s", r->base_path[r->absent[i].base],
				r->absent[i].path);
			goto out;
		}
	}
	for (i = 0; i < r->nentries; i++) {
		const struct rp_entry *e = &r->entries[i];

		ret = make_entry(r, &log, &wb, e);
		if (ret) {
			rp_what(r, ret, "%s/%s", r->base_path[e->base], e->path);
			goto out;
		}
	}
	/* modes and owners, children before parents */
	for (i = r->nentries; i-- > 0;) {
		const struct rp_entry *e = &r->entries[i];

		ret = set_attrs(r, e);
		if (ret) {
			rp_what(r, ret, "%s/%s", r->base_path[e->base], e->path);
			goto out;
		}
	}
	/* the tree must be on the disk, not only in the page cache */
	for (i = 0; i <= r->nmaps; i++) {
		if (syncfs(r->base_fd[i])) {
			ret = rp_what(r, -errno, "syncfs '%s'", r->base_path[i]);
			goto out;
		}
	}
	ret = 0;
out:
	umask(old_umask);
	rp_wbuf_release(&wb);
	return ret;
}
