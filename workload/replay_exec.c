// SPDX-License-Identifier: MIT
/*
 * replay_exec.c - the replay threads ("lanes"): issue each op as its
 * system call, in the lane's order, on time, after what it waits for
 *
 * A lane takes the ops the loader published in its ring, one at a time:
 *
 *   1. timing: sleep until the op's scheduled time (recorded, scale), on a
 *      futex with an absolute CLOCK_MONOTONIC timeout and a 1 ns timer
 *      slack, so an interrupt wakes it and wake-ups are precise;
 *   2. dependencies: wait until each lane it depends on has finished the
 *      op it names (spin briefly, then futex on that lane's seq word);
 *      the issue time minus the scheduled time is the op's lag;
 *   3. identity: as root, take the op's recorded fsuid/fsgid (setfsuid(2)
 *      is per thread; only when it changes) as the capture daemon did;
 *   4. the system call, timed, recorded into the replay's trace with the
 *      capture's file ids, handle ids and thread ids (so that
 *      `iotap report --by file|tid` lines up with the capture), the
 *      replay's result and duration;
 *   5. the result against the recorded one, counted per op type;
 *   6. finish: publish head (and the byte ring position) and wake whoever
 *      waits for this lane.
 *
 * How ops are issued: LOOKUP and GETATTR are fstatat(2)/fstat(2); FLUSH is
 * close(dup(fd)), which is what sends a flush to a filesystem; RELEASE is
 * close(2); READ/WRITE are pread(2)/pwrite(2) at the recorded offset (an
 * O_APPEND handle is opened without it: the recorded offset is where the
 * append landed); READDIR is getdents64(2) with the recorded buffer size,
 * rewinding when the recorded cookie is 0, and returning as many entries
 * as the capture's call did (a FUSE entry is larger than a dirent64: the
 * rest is left for the next call); SETATTR's time bits set "now"
 * (the trace does not carry the times); SETXATTR writes a value of the
 * recorded size. Descriptor slots are a per-process table of fds, grown
 * in 4096-slot chunks.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/fsuid.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "iotap_base.h"
#include "replay_i.h"

#define SLOT_CHUNK	4096u
#define SLOT_CHUNKS	65536u
#define SPIN		200
#define LATE_NS		1000000ull	/* "late": more than 1 ms behind */

#define FUSE_SET_ATTR_MODE	(1u << 0)
#define FUSE_SET_ATTR_UID	(1u << 1)
#define FUSE_SET_ATTR_GID	(1u << 2)
#define FUSE_SET_ATTR_SIZE	(1u << 3)
#define FUSE_SET_ATTR_ATIME	(1u << 4)
#define FUSE_SET_ATTR_MTIME	(1u << 5)
#define FUSE_SET_ATTR_ATIME_NOW	(1u << 7)
#define FUSE_SET_ATTR_MTIME_NOW	(1u << 8)

/* fd + 1 per slot (0: closed), per process */
static _Atomic(atomic_int *) slot_chunk[SLOT_CHUNKS];

static atomic_int *slot_ref(uint32_t slot)
{
	uint32_t c = slot / SLOT_CHUNK;
	atomic_int *p, *exp = NULL;

	if (c >= SLOT_CHUNKS)
		return NULL;
	p = atomic_load_explicit(&slot_chunk[c], memory_order_acquire);
	if (p)
		return &p[slot % SLOT_CHUNK];
	p = calloc(SLOT_CHUNK, sizeof(*p));
	if (!p)
		return NULL;
	if (!atomic_compare_exchange_strong(&slot_chunk[c], &exp, p)) {
		free(p);
		p = exp;
	}
	return &p[slot % SLOT_CHUNK];
}

static int slot_fd(uint32_t slot)
{
	atomic_int *s = slot == RP_NONE ? NULL : slot_ref(slot);

	return s ? atomic_load_explicit(s, memory_order_acquire) - 1 : -1;
}

static void slot_set(uint32_t slot, int fd)
{
	atomic_int *s = slot == RP_NONE ? NULL : slot_ref(slot);

	if (s)
		atomic_store_explicit(s, fd + 1, memory_order_release);
	else if (fd >= 0)
		close(fd);
}

/* Close every descriptor still open at the end (handles never released). */
static void slots_close_all(void)
{
	uint32_t c, i;

	for (c = 0; c < SLOT_CHUNKS; c++) {
		atomic_int *p = atomic_load(&slot_chunk[c]);

		if (!p)
			continue;
		for (i = 0; i < SLOT_CHUNK; i++)
			if (atomic_load(&p[i]) > 0)
				close(atomic_load(&p[i]) - 1);
		atomic_store(&slot_chunk[c], NULL);
		free(p);
	}
}

struct lane_ctx {
	struct iotap_workload_replay *r;
	struct rp_shared *sh;
	uint32_t lane;
	struct rp_lane *ln;
	struct rp_lane_stats *st;
	struct iotap_trace_recorder *rec;
	struct rp_wbuf wb;
	unsigned char *rbuf;		/* reads, getdents, readlink, xattrs */
	size_t rcap;
	uint32_t fsuid, fsgid;
	int set_ids;
	pthread_t thread;
	char abs[2][2 * RP_PATH_MAX];
	int err;
};

/* --- waiting ------------------------------------------------------------------- */

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

/* Sleep until CLOCK_MONOTONIC @t; rp_exec_wake_all() ends it early. */
static void sleep_until(struct rp_shared *sh, uint64_t t)
{
	struct timespec ts;

	ts.tv_sec = (time_t)(t / 1000000000ull);
	ts.tv_nsec = (long)(t % 1000000000ull);
	while (iotap_clock_ns() < t && !atomic_load_explicit(&sh->stop, memory_order_relaxed))
		syscall(SYS_futex, &sh->go, FUTEX_WAIT_BITSET, 1, &ts, NULL,
			FUTEX_BITSET_MATCH_ANY);
}

/* Wait until lane @m finished op @idx. Return: 1 if it had to wait. */
static int wait_done(struct rp_shared *sh, uint32_t m, uint64_t idx)
{
	struct rp_lane *ln = &sh->lanes[m];
	int i;

	if (atomic_load_explicit(&ln->head, memory_order_acquire) > idx)
		return 0;
	for (i = 0; i < SPIN; i++) {
		cpu_relax();
		if (atomic_load_explicit(&ln->head, memory_order_acquire) > idx)
			return 1;
	}
	while (atomic_load(&ln->head) <= idx && !atomic_load(&sh->stop)) {
		unsigned int seq;

		/* pairs with finish(): head store, then waiters load (both seq_cst) */
		atomic_fetch_add(&ln->waiters, 1);
		seq = atomic_load(&ln->seq);
		if (atomic_load(&ln->head) <= idx && !atomic_load(&sh->stop))
			rp_futex_wait(&ln->seq, seq);
		atomic_fetch_sub(&ln->waiters, 1);
	}
	return 1;
}

/* The next op of this lane once the loader published it; NULL on stop. */
static struct rp_op *next_op(struct lane_ctx *lc, uint64_t idx)
{
	struct rp_lane *ln = lc->ln;
	int i;

	for (i = 0; i < SPIN; i++) {
		if (atomic_load_explicit(&ln->tail, memory_order_acquire) > idx)
			return &ln->ring[idx & (ln->cap - 1)];
		cpu_relax();
	}
	while (atomic_load(&ln->tail) <= idx) {
		unsigned int q;

		if (atomic_load(&lc->sh->stop))
			return NULL;
		/* pairs with push(): tail store, then lane_waits load */
		atomic_fetch_add(&ln->lane_waits, 1);
		q = atomic_load(&ln->pubq);
		if (atomic_load(&ln->tail) <= idx && !atomic_load(&lc->sh->stop))
			rp_futex_wait(&ln->pubq, q);
		atomic_fetch_sub(&ln->lane_waits, 1);
	}
	return &ln->ring[idx & (ln->cap - 1)];
}

static void finish(struct lane_ctx *lc, const struct rp_op *op, uint64_t idx)
{
	struct rp_lane *ln = lc->ln;
	uint64_t at;

	atomic_store(&ln->bhead, op->bend);
	atomic_store(&ln->head, idx + 1);
	/* both loads pair with the waiter's store then re-check of head (seq_cst) */
	if (atomic_load(&ln->waiters)) {
		atomic_fetch_add(&ln->seq, 1);
		rp_futex_wake(&ln->seq);
	}
	at = atomic_load(&ln->room_at);
	if (at && idx + 1 >= at) {
		atomic_store(&ln->room_at, 0);
		atomic_fetch_add(&ln->room, 1);
		rp_futex_wake(&ln->room);
	}
}

void rp_exec_wake_all(struct rp_shared *sh)
{
	uint32_t i;

	atomic_store(&sh->stop, 1);
	atomic_store(&sh->go, 2);
	rp_futex_wake((atomic_uint *)&sh->go);
	for (i = 0; i < sh->nlanes; i++) {
		atomic_fetch_add(&sh->lanes[i].seq, 1);
		rp_futex_wake(&sh->lanes[i].seq);
		atomic_fetch_add(&sh->lanes[i].pubq, 1);
		rp_futex_wake(&sh->lanes[i].pubq);
		atomic_fetch_add(&sh->lanes[i].room, 1);
		rp_futex_wake(&sh->lanes[i].room);
	}
	atomic_fetch_add(&sh->bar_gen, 1);
	rp_futex_wake(&sh->bar_gen);
}

/* --- the system calls ------------------------------------------------------------- */

static const char *str(const struct lane_ctx *lc, uint32_t off)
{
	return off == RP_NONE ? NULL : lc->ln->bytes + off;
}

/* base directory + "/" + relative path, for calls with no *at() form */
static const char *abs_path(struct lane_ctx *lc, int i, uint16_t base, const char *rel)
{
	snprintf(lc->abs[i], sizeof(lc->abs[i]), "%s/%s", lc->r->base_path[base], rel);
	return lc->abs[i];
}

static int rbuf_need(struct lane_ctx *lc, size_t len)
{
	unsigned char *n;
	size_t cap = lc->rcap ? lc->rcap : 65536;

	if (len <= lc->rcap)
		return 0;
	while (cap < len)
		cap *= 2;
	n = aligned_alloc(4096, cap);
	if (!n)
		return -ENOMEM;
	free(lc->rbuf);
	lc->rbuf = n;
	lc->rcap = cap;
	return 0;
}

#define OPEN_KEEP (O_ACCMODE | O_TRUNC | O_NONBLOCK | O_DSYNC | O_SYNC | O_DIRECT | \
		   O_LARGEFILE | O_NOATIME | O_DIRECTORY | O_NOFOLLOW)

/* Open a lazy handle; if another lane opened it meanwhile, use theirs. */
static int open_slot(struct lane_ctx *lc, uint32_t slot, uint16_t base, const char *path,
		     uint32_t flags)
{
	int fd = openat(lc->r->base_fd[base], path, (int)flags | O_CLOEXEC);
	atomic_int *s = slot_ref(slot);
	int none = 0;

	if (fd < 0)
		return -errno;
	if (!s) {
		close(fd);
		return -ENOMEM;
	}
	if (!atomic_compare_exchange_strong(s, &none, fd + 1))
		close(fd);
	return 0;
}

/* The descriptor of the op's handle, opening it if it is lazy. */
static int op_fd(struct lane_ctx *lc, const struct rp_op *op)
{
	int fd = slot_fd(op->slot);

	if (fd >= 0 || !(op->xflags & RP_X_LAZY))
		return fd >= 0 ? fd : -EBADF;
	fd = open_slot(lc, op->slot, op->base, str(lc, op->path), op->lazy_flags);
	if (fd < 0 && (op->lazy_flags & O_ACCMODE) == O_RDWR && (fd == -EISDIR || fd == -EACCES))
		fd = open_slot(lc, op->slot, op->base, str(lc, op->path),
			       (op->lazy_flags & ~(uint32_t)O_ACCMODE) | O_RDONLY);
	return fd < 0 ? fd : slot_fd(op->slot);
}

static int64_t neg(long ret)
{
	return ret < 0 ? -(int64_t)errno : ret;
}

static int64_t do_setattr(struct lane_ctx *lc, const struct rp_op *op, int fd)
{
	int dirfd = lc->r->base_fd[op->base];
	const char *path = str(lc, op->path);
	uint32_t m = op->flags;
	long ret = 0;

	if (m & FUSE_SET_ATTR_SIZE) {
		ret = fd >= 0 ? ftruncate(fd, (off_t)op->offset)
			      : truncate(abs_path(lc, 0, op->base, path), (off_t)op->offset);
		if (ret)
			return -(int64_t)errno;
	}
	if (m & FUSE_SET_ATTR_MODE) {
		ret = fd >= 0 ? fchmod(fd, op->mode & 07777)
			      : fchmodat(dirfd, path, op->mode & 07777, 0);
		if (ret)
			return -(int64_t)errno;
	}
	if (m & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) {
		uint32_t u = (uint32_t)(op->aux >> 32), g = (uint32_t)op->aux;
		uid_t uid = (m & FUSE_SET_ATTR_UID) && u != 0xffffffffu ? u : (uid_t)-1;
		gid_t gid = (m & FUSE_SET_ATTR_GID) && g != 0xffffffffu ? g : (gid_t)-1;

		ret = fd >= 0 ? fchown(fd, uid, gid)
			      : fchownat(dirfd, path, uid, gid, AT_SYMLINK_NOFOLLOW);
		if (ret)
			return -(int64_t)errno;
	}
	if (m & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME | FUSE_SET_ATTR_ATIME_NOW |
		 FUSE_SET_ATTR_MTIME_NOW)) {
		struct timespec ts[2];

		ts[0].tv_sec = ts[1].tv_sec = 0;
		ts[0].tv_nsec = m & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_ATIME_NOW) ? UTIME_NOW
										    : UTIME_OMIT;
		ts[1].tv_nsec = m & (FUSE_SET_ATTR_MTIME | FUSE_SET_ATTR_MTIME_NOW) ? UTIME_NOW
										    : UTIME_OMIT;
		ret = fd >= 0 ? futimens(fd, ts)
			      : utimensat(dirfd, path, ts, AT_SYMLINK_NOFOLLOW);
		if (ret)
			return -(int64_t)errno;
	}
	return 0;
}

/*
 * Issue @op. Return: the result (bytes, 0 or -errno); *@mode and *@aux
 * get what the record of the replay carries in those fields.
 */
static int64_t issue(struct lane_ctx *lc, const struct rp_op *op, uint32_t *mode, uint64_t *aux)
{
	struct iotap_workload_replay *r = lc->r;
	int dirfd = r->base_fd[op->base];
	const char *path = str(lc, op->path), *path2 = str(lc, op->path2);
	const char *name = str(lc, op->name);
	struct stat st;
	int64_t ret;
	int fd;

	switch (op->op) {
	case IOTAP_OP_LOOKUP:
	case IOTAP_OP_GETATTR:
		if (op->xflags & (RP_X_FH_ONLY | RP_X_LAZY)) {
			fd = op_fd(lc, op);
			ret = fd < 0 ? fd : neg(fstat(fd, &st));
		} else {
			ret = neg(fstatat(dirfd, path, &st, AT_SYMLINK_NOFOLLOW));
		}
		if (!ret) {
			*mode = st.st_mode;
			if (op->op == IOTAP_OP_GETATTR)
				*aux = (uint64_t)st.st_size;
		}
		return ret;
	case IOTAP_OP_SETATTR:
		fd = -1;
		if (op->xflags & (RP_X_FH_ONLY | RP_X_LAZY)) {
			fd = op_fd(lc, op);
			if (fd < 0)
				return fd;
		}
		return do_setattr(lc, op, fd);
	case IOTAP_OP_READLINK:
		if (rbuf_need(lc, PATH_MAX))
			return -ENOMEM;
		return neg(readlinkat(dirfd, path, (char *)lc->rbuf, PATH_MAX));
	case IOTAP_OP_MKNOD:
		return neg(mknodat(dirfd, path, op->mode, (dev_t)op->aux));
	case IOTAP_OP_MKDIR:
		return neg(mkdirat(dirfd, path, op->mode & 07777));
	case IOTAP_OP_UNLINK:
		return neg(unlinkat(dirfd, path, 0));
	case IOTAP_OP_RMDIR:
		return neg(unlinkat(dirfd, path, AT_REMOVEDIR));
	case IOTAP_OP_SYMLINK:
		return neg(symlinkat(name ? name : "", dirfd, path));
	case IOTAP_OP_RENAME:
		return neg(renameat2(dirfd, path, r->base_fd[op->base2], path2, op->flags));
	case IOTAP_OP_LINK:
		return neg(linkat(dirfd, path, r->base_fd[op->base2], path2, 0));
	case IOTAP_OP_OPEN:
	case IOTAP_OP_CREATE:
	case IOTAP_OP_OPENDIR: {
		uint32_t f = op->flags & OPEN_KEEP;

		if (op->op == IOTAP_OP_CREATE)
			f |= O_CREAT | (op->flags & O_EXCL);
		if (op->op == IOTAP_OP_OPENDIR)
			f = O_RDONLY | O_DIRECTORY;
		fd = openat(dirfd, path, (int)f | O_CLOEXEC, (mode_t)(op->mode & 07777));
		if (fd < 0)
			return -(int64_t)errno;
		slot_set(op->slot, fd);
		return 0;
	}
	case IOTAP_OP_READ:
		fd = op_fd(lc, op);
		if (fd < 0)
			return fd;
		if (rbuf_need(lc, op->length))
			return -ENOMEM;
		return neg(pread(fd, lc->rbuf, op->length, (off_t)op->offset));
	case IOTAP_OP_WRITE: {
		const void *buf;

		fd = op_fd(lc, op);
		if (fd < 0)
			return fd;
		buf = rp_data_fill(&r->data, &lc->wb, op->offset, op->length);
		if (!buf)
			return -ENOMEM;
		return neg(pwrite(fd, buf, op->length, (off_t)op->offset));
	}
	case IOTAP_OP_FLUSH: {
		int d;

		fd = op_fd(lc, op);
		if (fd < 0)
			return fd;
		d = dup(fd);
		if (d < 0)
			return -(int64_t)errno;
		return neg(close(d));
	}
	case IOTAP_OP_RELEASE:
	case IOTAP_OP_RELEASEDIR:
		fd = slot_fd(op->slot);
		slot_set(op->slot, -1);
		return fd >= 0 ? neg(close(fd)) : 0;
	case IOTAP_OP_FSYNC:
	case IOTAP_OP_FSYNCDIR:
		fd = op_fd(lc, op);
		if (fd < 0)
			return fd;
		return neg(op->flags & IOTAP_OPF_DATASYNC ? fdatasync(fd) : fsync(fd));
	case IOTAP_OP_READDIR:
	case IOTAP_OP_READDIRPLUS: {
		size_t len = op->length ? op->length : 32768;
		uint64_t n = 0, want = op->result > 0 ? op->aux : 0;
		size_t p;

		fd = op_fd(lc, op);
		if (fd < 0)
			return fd;
		if (rbuf_need(lc, len))
			return -ENOMEM;
		if (!op->offset && lseek(fd, 0, SEEK_SET) < 0)
			return -(int64_t)errno;
		ret = neg(syscall(SYS_getdents64, fd, lc->rbuf, len));
		for (p = 0; ret > 0 && p < (size_t)ret;
		     p += ((struct dirent64 *)(lc->rbuf + p))->d_reclen) {
			const struct dirent64 *d = (const struct dirent64 *)(lc->rbuf + p);

			/*
			 * A FUSE entry is larger than a dirent64: the capture's call
			 * returned fewer entries. Return as many, and continue after
			 * the last one, so that the calls end where the capture's did.
			 */
			if (++n == want && p + d->d_reclen < (size_t)ret) {
				if (lseek(fd, d->d_off, SEEK_SET) < 0)
					return -(int64_t)errno;
				ret = (int64_t)(p + d->d_reclen);
				break;
			}
		}
		*aux = n;
		return ret;
	}
	case IOTAP_OP_STATFS: {
		struct statfs sf;

		return neg(statfs(abs_path(lc, 0, op->base, path), &sf));
	}
	case IOTAP_OP_SETXATTR: {
		const void *buf = rp_data_fill(&r->data, &lc->wb, 0, op->length);

		if (!buf)
			return -ENOMEM;
		return neg(lsetxattr(abs_path(lc, 0, op->base, path), name, buf, op->length,
				     (int)op->flags));
	}
	case IOTAP_OP_GETXATTR:
		if (rbuf_need(lc, op->length))
			return -ENOMEM;
		return neg(lgetxattr(abs_path(lc, 0, op->base, path), name ? name : "",
				     op->length ? lc->rbuf : NULL, op->length));
	case IOTAP_OP_LISTXATTR:
		if (rbuf_need(lc, op->length))
			return -ENOMEM;
		return neg(llistxattr(abs_path(lc, 0, op->base, path),
				      op->length ? (char *)lc->rbuf : NULL, op->length));
	case IOTAP_OP_REMOVEXATTR:
		return neg(lremovexattr(abs_path(lc, 0, op->base, path), name ? name : ""));
	case IOTAP_OP_ACCESS:
		return neg(faccessat(dirfd, path, (int)op->mode, 0));
	case IOTAP_OP_FALLOCATE:
		fd = op_fd(lc, op);
		if (fd < 0)
			return fd;
		return neg(fallocate(fd, (int)op->flags, (off_t)op->offset, (off_t)op->length));
	case IOTAP_OP_LSEEK:
		fd = op_fd(lc, op);
		if (fd < 0)
			return fd;
		return neg(lseek(fd, (off_t)op->offset, (int)op->flags));
	case IOTAP_OP_FLOCK:
		fd = op_fd(lc, op);
		if (fd < 0)
			return fd;
		return neg(flock(fd, (int)op->aux));
	case IOTAP_OP_COPY_FILE_RANGE: {
		loff_t in_off = (loff_t)op->offset, out_off = (loff_t)op->aux;
		int out;

		fd = op_fd(lc, op);
		if (fd < 0)
			return fd;
		out = openat(r->base_fd[op->base2], path2, O_WRONLY | O_CLOEXEC);
		if (out < 0)
			return -(int64_t)errno;
		ret = neg(copy_file_range(fd, &in_off, out, &out_off, op->length, op->flags));
		close(out);
		return ret;
	}
	}
	return -ENOSYS;
}

/* --- results ----------------------------------------------------------------------- */

static int sized(unsigned int op)
{
	return op == IOTAP_OP_READ || op == IOTAP_OP_WRITE || op == IOTAP_OP_READLINK ||
	       op == IOTAP_OP_GETXATTR || op == IOTAP_OP_COPY_FILE_RANGE;
}

static void note_example(struct lane_ctx *lc, const struct rp_op *op, int64_t got)
{
	struct rp_lane_stats *st = lc->st;
	const char *path = str(lc, op->path);
	char g[64], w[64], where[200], line[400];

	if (st->nexamples >= 2)
		return;
	if (got < 0)
		snprintf(g, sizeof(g), "%s", strerror((int)-got));
	else
		snprintf(g, sizeof(g), "%" PRId64, got);
	if (op->result < 0)
		snprintf(w, sizeof(w), "%s", strerror((int)-op->result));
	else
		snprintf(w, sizeof(w), "%" PRId64, op->result);
	if (path)
		snprintf(where, sizeof(where), "'%.80s/%.100s'", lc->r->base_path[op->base], path);
	else
		snprintf(where, sizeof(where), "file %" PRIu64 " (handle %" PRIu64 ")", op->file,
			 op->fh);
	snprintf(line, sizeof(line), "%s %s: %s (capture: %s)", iotap_trace_op_name(op->op),
		 where, g, w);
	snprintf(st->example[st->nexamples++], sizeof(st->example[0]), "%.255s", line);
}

static void compare(struct lane_ctx *lc, const struct rp_op *op, int64_t got, uint64_t aux)
{
	struct iotap_workload_replay_opstat *s = &lc->st->op[op->op];
	int64_t want = op->result;
	int diff = 0;

	if (op->op == IOTAP_OP_READ || op->op == IOTAP_OP_WRITE ||
	    op->op == IOTAP_OP_COPY_FILE_RANGE) {
		s->bytes_recorded += want > 0 ? (uint64_t)want : 0;
		s->bytes += got > 0 ? (uint64_t)got : 0;
	}
	if (want < 0 && got < 0) {
		if (want != got) {
			s->other_error++;
			diff = 1;
		}
	} else if (got < 0) {
		s->failed++;
		diff = 1;
	} else if (want < 0) {
		s->succeeded++;
		diff = 1;
	} else if (sized(op->op) ? got != want
		   : (op->op == IOTAP_OP_READDIR || op->op == IOTAP_OP_READDIRPLUS) &&
		     (!got != !want || (want && op->aux && aux != op->aux))) {
		s->size_diff++;
		diff = 1;
	}
	if (diff) {
		lc->st->diffs++;
		atomic_fetch_add_explicit(&lc->sh->diffs, 1, memory_order_relaxed);
		note_example(lc, op, got);
	}
}

static void set_ids(struct lane_ctx *lc, const struct rp_op *op)
{
	if (!lc->set_ids)
		return;
	/* fsgid first: after setfsuid to a user it could no longer change */
	if (op->gid != lc->fsgid) {
		setfsgid(op->gid);
		lc->fsgid = op->gid;
	}
	if (op->uid != lc->fsuid) {
		setfsuid(op->uid);
		lc->fsuid = op->uid;
	}
}

static void record_op(struct lane_ctx *lc, const struct rp_op *op, uint64_t t0, uint64_t t1,
		      int64_t result, uint32_t mode, uint64_t aux)
{
	struct iotap_trace_rec rec;

	memset(&rec, 0, offsetof(struct iotap_trace_rec, sample));
	rec.type = IOTAP_REC_OP;
	rec.op = op->op;
	rec.time_ns = t0;
	rec.dur_ns = t1 > t0 ? t1 - t0 : 0;
	rec.tid = op->tid;
	rec.pid = op->pid;
	rec.uid = op->uid;
	rec.gid = op->gid;
	rec.file = op->file;
	rec.file2 = op->file2;
	rec.fh = op->fh;
	rec.offset = op->offset;
	rec.length = op->length;
	rec.result = result;
	rec.flags = op->flags;
	rec.mode = mode;
	rec.aux = aux;
	if (op->name != RP_NONE) {
		rec.name = str(lc, op->name);
		rec.name_len = op->name_len ? op->name_len : (uint32_t)strlen(rec.name);
	}
	iotap_trace_record(lc->rec, &rec);
}

static void lag_note(struct lane_ctx *lc, uint64_t lag)
{
	struct rp_lane_stats *st = lc->st;
	unsigned int b = rp_lag_bucket(lag);

	st->lag_sum += lag;
	if (lag > st->lag_max)
		st->lag_max = lag;
	if (lag > LATE_NS)
		st->late++;
	st->lag_hist[b < RP_LAG_BUCKETS ? b : RP_LAG_BUCKETS - 1]++;
	if (lag > atomic_load_explicit(&lc->sh->lag_now, memory_order_relaxed))
		atomic_store_explicit(&lc->sh->lag_now, lag, memory_order_relaxed);
}

static void exec_op(struct lane_ctx *lc, const struct rp_op *op)
{
	struct rp_shared *sh = lc->sh;
	struct iotap_workload_replay_opstat *s = &lc->st->op[op->op];
	int timed = lc->r->o.timing != IOTAP_REPLAY_ASAP;
	uint64_t target = sh->start_ns + op->t_ns, t0, t1, aux = op->aux;
	uint32_t mode = op->mode, i;
	int64_t res;
	int waited = 0;

	if (op->xflags & RP_X_NOPATH) {
		s->unreplayable++;
		return;
	}
	if (timed && iotap_clock_ns() < target)
		sleep_until(sh, target);
	if (op->ndeps) {
		const struct rp_dep *d = (const struct rp_dep *)(lc->ln->bytes + op->deps);

		for (i = 0; i < op->ndeps; i++)
			waited |= wait_done(sh, d[i].lane, d[i].idx);
		if (waited)
			lc->st->dep_waits++;
	}
	if (atomic_load_explicit(&sh->stop, memory_order_relaxed))
		return;
	if (op->xflags & RP_X_NOOP) {
		t0 = lc->rec ? iotap_trace_op_begin(lc->rec) : iotap_clock_ns();
		if (lc->rec)
			record_op(lc, op, t0, t0, op->result, op->mode, op->aux);
		t1 = t0;
		res = op->result;
	} else {
		set_ids(lc, op);
		t0 = lc->rec ? iotap_trace_op_begin(lc->rec) : iotap_clock_ns();
		res = issue(lc, op, &mode, &aux);
		t1 = iotap_clock_ns();
		if (lc->rec)
			record_op(lc, op, t0, t1, res, mode, aux);
		if (op->slot2 != RP_NONE)
			slot_set(op->slot2, -1);
	}
	if (timed)
		lag_note(lc, t0 > target ? t0 - target : 0);
	if (!lc->st->t_first || t0 < lc->st->t_first)
		lc->st->t_first = t0;
	if (t1 > lc->st->t_last)
		lc->st->t_last = t1;
	lc->st->ops++;
	s->replayed++;
	if (!(op->xflags & RP_X_NOOP))
		compare(lc, op, res, aux);
}

static void exec_name(struct lane_ctx *lc, const struct rp_op *op)
{
	struct iotap_trace_rec rec;

	if (!lc->rec)
		return;
	memset(&rec, 0, offsetof(struct iotap_trace_rec, sample));
	rec.type = IOTAP_REC_NAME;
	rec.time_ns = iotap_trace_op_begin(lc->rec);
	rec.tid = op->tid;
	rec.pid = op->pid;
	rec.file = op->file;
	rec.file2 = op->file2;
	rec.mode = op->mode;
	rec.uid = op->uid;
	rec.gid = op->gid;
	rec.length = op->length;
	rec.flags = op->flags;
	rec.name = str(lc, op->name);
	rec.name_len = rec.name ? (uint32_t)strlen(rec.name) : 0;
	if (!rec.name)
		rec.name = "";
	iotap_trace_record(lc->rec, &rec);
}

static void process_cpu(uint64_t *user_ns, uint64_t *sys_ns)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	*user_ns = (uint64_t)ru.ru_utime.tv_sec * 1000000000ull +
		   (uint64_t)ru.ru_utime.tv_usec * 1000;
	*sys_ns = (uint64_t)ru.ru_stime.tv_sec * 1000000000ull +
		  (uint64_t)ru.ru_stime.tv_usec * 1000;
	if (!*user_ns && !*sys_ns)
		*user_ns = 1;
}

/* A phase marker: every lane arrives; the last one writes it and lets all go. */
static void exec_phase(struct lane_ctx *lc, const struct rp_op *op)
{
	struct rp_shared *sh = lc->sh;
	unsigned int gen = atomic_load(&sh->bar_gen);

	if (atomic_fetch_add(&sh->bar_arrived, 1) + 1 == sh->nlanes) {
		if (lc->r->o.timing != IOTAP_REPLAY_ASAP)
			sleep_until(sh, sh->start_ns + op->t_ns);
		if (lc->rec) {
			struct iotap_trace_rec rec;

			memset(&rec, 0, offsetof(struct iotap_trace_rec, sample));
			rec.type = IOTAP_REC_PHASE;
			process_cpu(&rec.offset, &rec.length);
			rec.time_ns = iotap_trace_op_begin(lc->rec);
			rec.flags = op->flags;
			rec.tid = op->tid;
			rec.pid = op->pid;
			rec.uid = op->uid;
			rec.gid = op->gid;
			rec.aux = op->aux;
			rec.name = str(lc, op->name);
			rec.name_len = rec.name ? (uint32_t)strlen(rec.name) : 0;
			iotap_trace_record(lc->rec, &rec);
		}
		atomic_fetch_add(&sh->phases, 1);
		atomic_store(&sh->bar_arrived, 0);
		/* the marker is written before anyone goes on: pairs with the load below */
		atomic_fetch_add(&sh->bar_gen, 1);
		rp_futex_wake(&sh->bar_gen);
		return;
	}
	while (atomic_load(&sh->bar_gen) == gen && !atomic_load(&sh->stop))
		rp_futex_wait(&sh->bar_gen, gen);
}

static void *lane_main(void *arg)
{
	struct lane_ctx *lc = arg;
	struct rp_shared *sh = lc->sh;
	uint64_t idx = 0;

	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	while (atomic_load(&sh->go) == 0)
		rp_futex_wait((atomic_uint *)&sh->go, 0);
	for (;;) {
		struct rp_op *op = next_op(lc, idx);

		if (!op || atomic_load_explicit(&sh->stop, memory_order_relaxed))
			break;
		lc->ln->last_t_ns = op->t_ns;
		switch (op->op) {
		case RP_OP_END:
			finish(lc, op, idx);
			atomic_fetch_add(&sh->lanes_done, 1);
			return NULL;
		case RP_OP_NAME:
			exec_name(lc, op);
			break;
		case RP_OP_PHASE:
			exec_phase(lc, op);
			break;
		default:
			if (op->op < IOTAP_OP_MAX)
				exec_op(lc, op);
		}
		finish(lc, op, idx);
		idx++;
	}
	atomic_fetch_add(&sh->lanes_done, 1);
	return NULL;
}

int rp_exec_lanes(struct iotap_workload_replay *r, uint32_t proc,
		  struct iotap_trace_recorder *rec)
{
	struct lane_ctx *lcs;
	struct rlimit rl;
	uint32_t i, l, n = 0, started = 0;
	int ret = 0;

	/* descriptors: a capture may hold many files open at once */
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	lcs = calloc(r->nlanes, sizeof(*lcs));
	if (!lcs)
		return -ENOMEM;
	for (l = 0; l < r->nlanes; l++) {
		struct lane_ctx *lc = &lcs[n];

		if (proc != RP_NONE && r->sh->lanes[l].proc != proc)
			continue;
		n++;
		lc->r = r;
		lc->sh = r->sh;
		lc->lane = l;
		lc->ln = &r->sh->lanes[l];
		lc->st = &r->sh->stats[l];
		lc->rec = rec;
		lc->set_ids = r->as_root && !(r->o.flags & IOTAP_REPLAY_NO_FSUID);
		lc->fsuid = lc->fsgid = 0;
		ret = rp_wbuf_init(&lc->wb, &r->data, l + 1,
				   r->max_io ? r->max_io : 65536);
		if (ret)
			break;
		ret = rbuf_need(lc, r->max_io ? r->max_io : 65536);
		if (ret)
			break;
		ret = -pthread_create(&lc->thread, NULL, lane_main, lc);
		if (ret)
			break;
		started++;
	}
	if (ret) {
		uint32_t mine = 0;

		/* the lanes that never ran count as done, or the run waits for them */
		for (l = 0; l < r->nlanes; l++)
			mine += proc == RP_NONE || r->sh->lanes[l].proc == proc;
		atomic_fetch_add(&r->sh->lanes_done, mine - started);
		rp_exec_wake_all(r->sh);
	}
	for (i = 0; i < started; i++)
		pthread_join(lcs[i].thread, NULL);
	for (i = 0; i < n; i++) {
		rp_wbuf_release(&lcs[i].wb);
		free(lcs[i].rbuf);
	}
	free(lcs);
	slots_close_all();
	return ret;
}
