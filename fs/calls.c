// SPDX-License-Identifier: MIT
/*
 * calls.c - which READ/WRITE requests are pieces of one application call
 *
 * In direct_io mode the kernel sends one read()/write() as one request
 * unless it does not fit one: a request holds at most max_write (max_read)
 * bytes and max_pages pages of the caller's buffer. A longer call, or one
 * whose buffer needs one page more than max_pages, goes out in pieces
 * (fs/fuse/file.c, fuse_direct_io()): from the caller's thread, one after
 * the other -- the next piece is sent when the previous one's reply came
 * back full -- each at the offset where the previous one ended. Nothing in
 * the request says so: FUSE_READ/FUSE_WRITE carry no "more follows" bit,
 * and a piece has the same thread id, file handle, lock owner and flags as
 * the same thread's next call would. Sizes and timing cannot tell either
 * (an application may well write 1 MiB twice in a row).
 *
 * What does tell is the call itself: the thread is blocked in it while we
 * serve the piece, and /proc/TID/syscall shows its number and arguments
 * (the daemon runs as root: reading it needs ptrace access). For a request
 * that may be the first piece of a longer call (more than half the
 * largest request: every cut piece is, see fs_calls_begin()) we read the
 * call's byte count (the sum of the iovec lengths for readv/writev/...,
 * read with process_vm_readv); if it asks for more than this request, the
 * call goes on, and the thread's state here remembers where (file handle,
 * next offset, bytes still to come). The following pieces are then known
 * without another look: the thread's next request on that handle at that
 * offset, up to the bytes left. A piece that comes back short, fails, or
 * completes the count ends the call, as the kernel's loop does.
 *
 * Records: every piece but the last is flagged IOTAP_OPF_CUT ("the call
 * goes on"), every piece but the first IOTAP_OPF_CONT ("continues the
 * thread's previous CUT record"); trace/join.c folds exactly those.
 *
 * Where it cannot know, it does not flag: async submissions (io_submit,
 * io_uring: the thread is not blocked in the call, or the call is not a
 * read/write) and calls that are not read/write-family syscalls (sendfile,
 * splice, copy_file_range, exec) stay one record per request. Cache mode
 * is not concerned (its records are page-cache requests), nor are O_DIRECT
 * handles there (not direct_io: the kernel sends their pieces at once).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fs_i.h"

#define CALLS_IOV_MAX	128		/* iovecs read of a vectored call */
#define CALLS_STALE_NS	(60ull * 1000000000ull)	/* a state nobody continued */

void fs_calls_init(struct fs_ctx *fs)
{
	pthread_mutex_init(&fs->calls.lock, NULL);
}

/* Remove and return @tid's open call, if any (the caller's next piece). */
static bool take(struct fs_ctx *fs, uint32_t tid, struct fs_call *out)
{
	struct fs_calls *c = &fs->calls;
	uint64_t now;
	bool found = false;
	unsigned int i;

	if (!CMM_LOAD_SHARED(c->n))
		return false;
	now = iotap_trace_now_ns();
	pthread_mutex_lock(&c->lock);
	for (i = 0; i < FS_CALLS_MAX; i++) {
		struct fs_call *s = &c->slot[i];

		if (!s->tid)
			continue;
		if (s->tid == tid) {
			*out = *s;
			found = true;
		} else if (now - s->when_ns < CALLS_STALE_NS) {
			continue;
		}
		/* taken, or a call whose thread never came back (killed) */
		s->tid = 0;
		CMM_STORE_SHARED(c->n, c->n - 1);
	}
	pthread_mutex_unlock(&c->lock);
	return found;
}

/* Remember that @s->tid's call goes on (replacing the oldest if full). */
static void put(struct fs_ctx *fs, const struct fs_call *s)
{
	struct fs_calls *c = &fs->calls;
	struct fs_call *dst = NULL;
	unsigned int i;

	pthread_mutex_lock(&c->lock);
	for (i = 0; i < FS_CALLS_MAX; i++) {
		struct fs_call *e = &c->slot[i];

		if (!e->tid) {
			dst = e;
			break;
		}
		if (!dst || e->when_ns < dst->when_ns)
			dst = e;
	}
	if (!dst->tid)
		CMM_STORE_SHARED(c->n, c->n + 1);
	*dst = *s;
	pthread_mutex_unlock(&c->lock);
}

/* Once: why the pieces of a long call cannot be told here. */
static void warn_proc(struct fs_ctx *fs, const char *path, int err)
{
	if (uatomic_xchg(&fs->calls.warned, 1))
		return;
	fs_log(FS_LOG_WARN, "cannot read %s (%s): a read() or write() the kernel sends in "
	       "several requests is several records, not flagged cut", path, strerror(err));
}

/* Sum of the iovec lengths of @tid's vectored call (@n iovecs at @addr); 0: unknown. */
static uint64_t iov_bytes(pid_t tid, unsigned long addr, unsigned long n)
{
	struct iovec iv[CALLS_IOV_MAX];
	struct iovec local = { iv, 0 }, remote = { (void *)addr, 0 };
	uint64_t sum = 0;
	unsigned long i;

	if (!n || n > CALLS_IOV_MAX)
		return 0;
	local.iov_len = remote.iov_len = n * sizeof(iv[0]);
	if (process_vm_readv(tid, &local, 1, &remote, 1, 0) != (ssize_t)local.iov_len)
		return 0;
	for (i = 0; i < n; i++)
		sum += iv[i].iov_len;
	return sum;
}

/*
 * The call @tid is blocked in: its byte count and, for the positioned
 * calls, its file offset (-1 for the file position). 0 if it is not a
 * read-family (@write false) or write-family syscall, or not known.
 */
static uint64_t call_bytes(struct fs_ctx *fs, uint32_t tid, bool write, int64_t *pos)
{
	char path[40], buf[256];
	unsigned long a[6];
	long nr;
	ssize_t n;
	int fd;

	*pos = -1;
	snprintf(path, sizeof(path), "/proc/%u/syscall", tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno != ENOENT && errno != ESRCH)
			warn_proc(fs, path, errno);
		return 0;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	if (n < 0 && errno != ESRCH)
		warn_proc(fs, path, errno);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* "NR ARG1 .. ARG6 SP PC"; "running", or "-1 SP PC" outside a syscall */
	if (sscanf(buf, "%ld %lx %lx %lx %lx %lx %lx", &nr, &a[0], &a[1], &a[2], &a[3], &a[4],
		   &a[5]) != 7)
		return 0;
	switch (nr) {
	case SYS_read:
		return write ? 0 : a[2];
	case SYS_write:
		return write ? a[2] : 0;
	case SYS_pread64:
		*pos = (int64_t)a[3];
		return write ? 0 : a[2];
	case SYS_pwrite64:
		*pos = (int64_t)a[3];
		return write ? a[2] : 0;
	case SYS_readv:
		return write ? 0 : iov_bytes((pid_t)tid, a[1], a[2]);
	case SYS_writev:
		return write ? iov_bytes((pid_t)tid, a[1], a[2]) : 0;
	case SYS_preadv:
	case SYS_preadv2:
		*pos = (int64_t)a[3];	/* pos_l: all of it on a 64-bit kernel */
		return write ? 0 : iov_bytes((pid_t)tid, a[1], a[2]);
	case SYS_pwritev:
	case SYS_pwritev2:
		*pos = (int64_t)a[3];
		return write ? iov_bytes((pid_t)tid, a[1], a[2]) : 0;
	default:
		return 0;
	}
}

void fs_calls_begin(struct fs_capture *op, const struct fs_file *f, size_t size, size_t max,
		    struct fs_piece *p)
{
	struct fs_ctx *fs = op->fs;
	bool write = op->rec.op == IOTAP_OP_WRITE;
	size_t cap = (size_t)fs->max_pages * fs->page_size;
	struct fs_call s;
	uint64_t want;
	int64_t pos;

	p->state = FS_PIECE_WHOLE;
	p->rest = 0;
	if (fs->cache_mode || !op->pid)
		return;
	if (take(fs, op->pid, &s)) {
		if (s.fh == f->id && s.op == op->rec.op && s.next == op->rec.offset &&
		    size <= s.rest) {
			p->state = FS_PIECE_CONT;
			p->rest = s.rest - size;
			return;
		}
		/* the kernel's loop ended where we could not see it: a new call */
	}
	/*
	 * A piece that is not the last is max bytes, or what max_pages pages
	 * of the buffer hold (more than max_pages - 1 pages unless an iovec
	 * list wastes pages at each boundary): look only at the large ones.
	 */
	if (max > cap)
		max = cap;
	if (size <= max / 2)
		return;
	want = call_bytes(fs, op->pid, write, &pos);
	if (want <= size || (pos >= 0 && pos != (int64_t)op->rec.offset))
		return;		/* one request, or not what the thread is doing */
	p->state = FS_PIECE_FIRST;
	p->rest = want - size;
}

void fs_calls_end(struct fs_capture *op, const struct fs_file *f, size_t size,
		  const struct fs_piece *p, ssize_t ret)
{
	struct fs_call s;

	if (p->state == FS_PIECE_WHOLE)
		return;
	if (p->state == FS_PIECE_CONT)
		op->rec.flags |= IOTAP_OPF_CONT;
	/* the kernel sends the next piece only after a full one */
	if (ret != (ssize_t)size || !p->rest)
		return;
	op->rec.flags |= IOTAP_OPF_CUT;
	s.tid = op->pid;
	s.op = (uint8_t)op->rec.op;
	s.fh = f->id;
	s.next = op->rec.offset + size;
	s.rest = p->rest;
	s.when_ns = iotap_trace_now_ns();
	put(op->fs, &s);
}
