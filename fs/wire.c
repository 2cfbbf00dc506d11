// SPDX-License-Identifier: MIT
/*
 * wire.c - the FUSE wire shim: what the daemon reads and patches in the
 * raw /dev/fuse messages, for the jobs libfuse cannot do
 *
 * session.c installs fs_wire_read()/fs_wire_writev() as the session's I/O
 * (fuse_session_custom_io) once mounted: they see every request before
 * libfuse parses it and every reply before it goes out. The layouts are
 * the kernel's uapi (<linux/fuse.h>, a stable ABI), never copies.
 *
 * 1. Requests libfuse answers itself (ENOSYS for locks, tmpfile and
 *    opcodes it does not know, given our ops) never reach an op handler,
 *    yet DESIGN says every request is recorded. No libfuse version tells
 *    the filesystem about them, so this part is built everywhere.
 *
 * 2. Killing suid/sgid (only where libfuse cannot: FS_WIRE_KILLPRIV, set
 *    by fs/meson.build when struct fuse_file_info has no kill_suidgid).
 *    The daemon writes as root, so the backing file system never drops a
 *    file's setuid/setgid bits for it (CAP_FSETID); it does drop
 *    security.capability on our write, truncate and chown, as for any
 *    writer. The kernel flags the requests whose caller lacks CAP_FSETID:
 *    FUSE_WRITE_KILL_SUIDGID on direct_io writes always, and with
 *    FUSE_HANDLE_KILLPRIV_V2 also FATTR_KILL_SUIDGID on truncate and chown
 *    and FUSE_OPEN_KILL_SUIDGID on O_TRUNC opens; fs_kill_suidgid() then
 *    does what the VFS would. libfuse up to 3.17 neither negotiates
 *    HANDLE_KILLPRIV_V2 nor passes those flags on (a user's write through
 *    a direct_io mount used to keep a setuid bit), so the shim sets the
 *    flag in the INIT reply and hands each request's flag to its op in a
 *    thread variable: libfuse's worker that reads a request is the one
 *    that serves it. HANDLE_KILLPRIV_V2 also makes the kernel mark the
 *    superblock SB_NOSEC: in cache mode it no longer asks
 *    getxattr("security.capability") before every write(2) -- a round trip
 *    per write that passthrough_ll avoids only by not supporting xattrs.
 *
 * 3. Pages per request (built everywhere). A request carries at most
 *    max_pages pages of the caller's buffer, and libfuse 3.14 asks for
 *    max_write's pages exactly, so a max_write-sized read() or write()
 *    from a buffer that does not start on a page (257 pages for 1 MiB)
 *    arrives as two requests. The INIT reply asks for the pages
 *    session_opts.c planned (one more, up to fs.fuse.max_pages_limit);
 *    the kernel's answer is logged, and a NOTE record follows the header
 *    where it differs from the plan the header holds.
 *
 * 4. Parallel direct writes (built everywhere). In direct_io mode the
 *    kernel holds the file's inode lock exclusively across a whole WRITE
 *    round trip unless the open reply says FOPEN_PARALLEL_DIRECT_WRITES
 *    (protocol 7.36), which libfuse 3.14 cannot set: four threads writing
 *    one file then wait on each other for the daemon, where the backing
 *    file system holds its lock only for the copy. The shim notes each
 *    OPEN and CREATE request in a thread variable (the worker that reads a
 *    request replies to it) and sets the flag in that request's reply when
 *    it opened the file direct_io. The kernel still serialises appends,
 *    writes past the end of the file and files someone opened with the
 *    page cache; each WRITE stays one pwrite(2) on the backing file.
 *
 * 5. The io_uring transport (transport/uring.c): its requests pass through
 *    fs_wire_inspect() as /dev/fuse ones do, the INIT reply is where it
 *    asks for FUSE_OVER_IO_URING (after the patches above: it sizes its
 *    buffers from the final reply), and replies to ring requests leave
 *    through fs_uring_reply() instead of writev(2).
 */
#include <errno.h>
#include <linux/fuse.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fs_i.h"

#ifndef FUSE_OVER_IO_URING
#define FUSE_OVER_IO_URING	(1ULL << 41)	/* protocol 7.42: see transport/uring_i.h */
#endif

/* Opcodes libfuse answers with ENOSYS without calling us, given our ops. */
static bool opcode_unhandled(uint32_t opcode)
{
	switch (opcode) {
	case 7:			/* unused */
	case 19:		/* unused */
	case FUSE_GETLK:
	case FUSE_SETLK:
	case FUSE_SETLKW:
		return true;
	case CUSE_INIT:
		return false;
	default:
		return opcode >= 48;	/* SETUPMAPPING, SYNCFS, TMPFILE, STATX, ... */
	}
}

/* The request's node id is ours (locks, tmpfile); for the others it may be anything. */
static bool nodeid_known(uint32_t opcode)
{
	return (opcode >= FUSE_GETLK && opcode <= FUSE_SETLKW) || opcode == 51 /* TMPFILE */;
}

#if FS_WIRE_KILLPRIV
static __thread bool req_kill_suidgid;

bool fs_wire_kill_suidgid(void)
{
	return req_kill_suidgid;
}

/* Read a u32 field of the request body at @off, 0 if the body is shorter. */
static uint32_t arg_u32(const uint8_t *arg, size_t argn, size_t off)
{
	uint32_t v = 0;

	if (argn >= off + sizeof(v))
		memcpy(&v, arg + off, sizeof(v));
	return v;
}

static void note_request(struct fs_ctx *fs, const struct fuse_in_header *in, size_t n)
{
	const uint8_t *arg = (const uint8_t *)(in + 1);
	size_t argn = n - sizeof(*in);

	(void)fs;
	req_kill_suidgid = false;
	switch (in->opcode) {
	case FUSE_WRITE:
		req_kill_suidgid = arg_u32(arg, argn, offsetof(struct fuse_write_in, write_flags)) &
				   FUSE_WRITE_KILL_SUIDGID;
		return;
	case FUSE_OPEN:
		req_kill_suidgid = arg_u32(arg, argn, offsetof(struct fuse_open_in, open_flags)) &
				   FUSE_OPEN_KILL_SUIDGID;
		return;
	case FUSE_SETATTR:
		req_kill_suidgid = arg_u32(arg, argn, offsetof(struct fuse_setattr_in, valid)) &
				   FATTR_KILL_SUIDGID;
		return;
	default:
		return;
	}
}

/* The INIT reply: ask for HANDLE_KILLPRIV_V2 if the kernel offered it. */
static void patch_init_killpriv(struct fs_ctx *fs, const struct fuse_out_header *oh,
				struct iovec *iov)
{
	bool v2 = !oh->error && fs->init_minor >= 33 && (fs->init_flags & FUSE_HANDLE_KILLPRIV_V2);

	if (v2) {
		struct fuse_init_out *io = iov[1].iov_base;

		io->flags |= FUSE_HANDLE_KILLPRIV_V2;
	}
	fs_log(FS_LOG_INFO, "%s", v2 ? "HANDLE_KILLPRIV_V2 on: the daemon drops suid/sgid bits" :
	       "HANDLE_KILLPRIV_V2 not offered by the kernel");
}
#endif /* FS_WIRE_KILLPRIV */

/* OPEN or CREATE being served by this thread: its unique, 0 none. */
static __thread uint64_t open_unique;

/*
 * The reply to this thread's OPEN or CREATE: let direct writes to the file
 * run in parallel. libfuse sends both as one argument iov ending with the
 * struct fuse_open_out (after the fuse_entry_out for CREATE).
 */
static void patch_open_reply(struct fs_ctx *fs, struct iovec *iov, int count)
{
	const struct fuse_out_header *oh;
	struct fuse_open_out *oo;

	if (count != 2 || iov[0].iov_len < sizeof(*oh) || iov[1].iov_len < sizeof(*oo))
		return;
	oh = iov[0].iov_base;
	if (oh->unique != open_unique || oh->error)
		return;
	open_unique = 0;
	oo = (struct fuse_open_out *)((char *)iov[1].iov_base + iov[1].iov_len - sizeof(*oo));
	if (fs->init_minor >= 36 && (oo->open_flags & FOPEN_DIRECT_IO))
		oo->open_flags |= FOPEN_PARALLEL_DIRECT_WRITES;
}

/* The INIT request: what the kernel offers (its reply goes out of this thread). */
static void note_init(struct fs_ctx *fs, const struct fuse_in_header *in, size_t n)
{
	const size_t len = offsetof(struct fuse_init_in, flags) + sizeof(uint32_t);
	struct fuse_init_in ii;

	/* the first four fields are there in every protocol version */
	if (n - sizeof(*in) < len)
		return;
	memcpy(&ii, in + 1, len);
	fs->init_flags = ii.major == 7 ? ii.flags : 0;
	fs->init_minor = ii.major == 7 ? ii.minor : 0;
	/* others only test for 0 */
	CMM_STORE_SHARED(fs->init_unique, in->unique);
}

void fs_describe_limits(struct fs_ctx *fs)
{
	snprintf(fs->fuse_desc, sizeof(fs->fuse_desc),
		 "max_write=%u max_read=%u max_pages=%u max_pages_want=%u max_pages_limit=%u "
		 "page_size=%u max_write_asked=%u calls=1", fs->max_write, fs->max_read, fs->max_pages,
		 fs->max_pages_want, fs->max_pages_limit, fs->page_size, fs->max_write_asked);
}

/*
 * The INIT reply: ask for the planned max_pages, then say what the kernel
 * will use (it takes min(max_pages, its fs.fuse.max_pages_limit)).
 */
static void patch_init_pages(struct fs_ctx *fs, const struct fuse_out_header *oh,
			     struct iovec *iov)
{
	const size_t pages_end = offsetof(struct fuse_init_out, max_pages) + sizeof(uint16_t);
	struct fuse_init_out *io = iov[1].iov_base;
	char planned[sizeof(fs->fuse_desc)];
	unsigned int pages = fs->max_pages, fit, want;

	if (oh->error)
		return;
	memcpy(planned, fs->fuse_desc, sizeof(planned));
	if ((fs->init_flags & FUSE_MAX_PAGES) && iov[1].iov_len >= pages_end &&
	    (io->flags & FUSE_MAX_PAGES)) {
		io->max_pages = (uint16_t)pages;
	} else {
		pages = FS_KERNEL_DEFAULT_PAGES;	/* the kernel's without FUSE_MAX_PAGES */
	}
	if (pages < fs->max_pages)
		fs->max_pages = pages;
	/*
	 * libfuse capped max_write to its /dev/fuse buffer (1 MiB); over
	 * io_uring the ring buffers are ours and sized from this reply. The
	 * device still carries FORGET, INTERRUPT and whatever comes before the
	 * rings are up: libfuse's reads of it go through a larger buffer
	 * (fs_wire_read()), as the kernel refuses reads smaller than max_write.
	 */
	want = fs->max_write_asked;
	if (want > fs->max_pages * fs->page_size)
		want = fs->max_pages * fs->page_size;	/* what the pages allow (session_opts.c) */
	if (want > io->max_write && CMM_LOAD_SHARED(fs->uring_init_unique) &&
	    (fs->uring_init_flags2 & (uint32_t)(FUSE_OVER_IO_URING >> 32))) {
		io->max_write = want;
		/* the kernel refuses a read smaller than this max_write + the headers */
		fs->wire_bounce_size = (size_t)io->max_write + 4096;
		CMM_STORE_SHARED(fs->wire_bounce, 1);
	}
	fs->max_write = io->max_write;
	if (fs->max_write > fs->max_pages * fs->page_size)
		fs->max_write = fs->max_pages * fs->page_size;
	fs_describe_limits(fs);
	/* the largest call that is one request whatever its buffer's alignment */
	fit = (fs->max_pages - 1) * fs->page_size;
	if (fit > fs->max_write)
		fit = fs->max_write;
	if (fs->max_pages >= fs->max_pages_want && fs->max_write >= fs->max_write_asked)
		fs_log(FS_LOG_INFO, "requests: max_write %u, max_pages %u (fs.fuse.max_pages_limit "
		       "%u): one read() or write() of up to %u bytes is one record", fs->max_write,
		       fs->max_pages, fs->max_pages_limit, fs->max_write);
	else if (fs->max_pages_limit && fs->max_pages_limit < fs->max_pages_want)
		fs_log(FS_LOG_WARN, "requests: max_write %u, max_pages %u (fs.fuse.max_pages_limit "
		       "%u): a read() or write() of more than %u bytes from a buffer that does "
		       "not start on a page is cut in two records (flagged cut/cont; report and "
		       "replay join them); 'sysctl -w fs.fuse.max_pages_limit=%u' makes it one",
		       fs->max_write, fs->max_pages, fs->max_pages_limit, fit, fs->max_pages_want);
	else
		fs_log(FS_LOG_WARN, "requests: max_write %u, max_pages %u (the kernel offers no "
		       "more): a read() or write() of more than %u bytes is several records",
		       fs->max_write, fs->max_pages, fit);
	if (strcmp(planned, fs->fuse_desc) && fs->rec) {
		struct iotap_trace_rec rec;
		char note[sizeof(fs->fuse_desc) + 16];

		/* the header holds the plan: the kernel's answer follows it */
		snprintf(note, sizeof(note), "fuse: %s", fs->fuse_desc);
		memset(&rec, 0, sizeof(rec));
		rec.type = IOTAP_REC_NOTE;
		rec.name = note;
		rec.name_len = (uint32_t)strlen(note);
		rec.time_ns = iotap_trace_op_begin(fs->rec);
		iotap_trace_record(fs->rec, &rec);
	}
}

/* The INIT reply goes out: each patch is a function of its own. */
static void patch_init_reply(struct fs_ctx *fs, struct iovec *iov, int count)
{
	const size_t init_len = offsetof(struct fuse_init_out, max_write) + sizeof(uint32_t);
	const struct fuse_out_header *oh;

	if (count < 2 || iov[0].iov_len < sizeof(*oh) || iov[1].iov_len < init_len)
		return;
	oh = iov[0].iov_base;
	if (oh->unique != fs->init_unique)
		return;
	CMM_STORE_SHARED(fs->init_unique, 0);
#if FS_WIRE_KILLPRIV
	patch_init_killpriv(fs, oh, iov);
#endif
	patch_init_pages(fs, oh, iov);
	if (!oh->error && !fs->cache_mode)
		fs_log(FS_LOG_INFO, "%s", fs->init_minor >= 36 ?
		       "direct writes to one file run in parallel (FOPEN_PARALLEL_DIRECT_WRITES)" :
		       "the kernel serialises direct writes to one file (protocol before 7.36)");
}

void fs_wire_inspect(struct fs_ctx *fs, const void *buf, size_t n)
{
	const struct fuse_in_header *in = buf;

	if (n < sizeof(*in))
		return;
	if (caa_unlikely(in->opcode == FUSE_INIT)) {
		note_init(fs, in, n);
		fs_uring_note_init(fs, in, n);
	}
#if FS_WIRE_KILLPRIV
	note_request(fs, in, n);
#endif
	open_unique = in->opcode == FUSE_OPEN || in->opcode == FUSE_CREATE ? in->unique : 0;
	if (caa_unlikely(opcode_unhandled(in->opcode))) {
		int saved = errno, cancel;

		/*
		 * libfuse lets its loop cancel a worker while it reads; not in
		 * the middle of a record (its /proc read is a cancellation point).
		 */
		pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
		fs_record_unhandled(fs, in->opcode, nodeid_known(in->opcode) ? in->nodeid : 0,
				    in->pid, in->uid, in->gid);
		pthread_setcancelstate(cancel, NULL);
		errno = saved;
	}
}

/*
 * libfuse's read of /dev/fuse when max_write is larger than its buffer:
 * through a thread's buffer of the kernel's max_write + a page. A request that does not
 * fit libfuse's buffer (a WRITE over 1 MiB sent before the rings were up)
 * is answered EIO here, as the kernel would have.
 */
static ssize_t bounce_read(struct fs_ctx *fs, int fd, void *buf, size_t len)
{
	static __thread char *big;
	size_t size = fs->wire_bounce_size;
	ssize_t n;

	if (!big && posix_memalign((void **)&big, 4096, size))
		return -1;	/* errno ENOMEM: libfuse ends the loop and says so */
	for (;;) {
		const struct fuse_in_header *in = (const void *)big;

		n = read(fd, big, size);
		if (n <= 0)
			return n;
		if ((size_t)n <= len) {
			memcpy(buf, big, (size_t)n);
			return n;
		}
		if ((size_t)n >= sizeof(*in)) {
			struct fuse_out_header oh = { sizeof(oh), -EIO, in->unique };

			fs_log(FS_LOG_WARN, "a %zd-byte request (opcode %u) came over /dev/fuse, "
			       "larger than libfuse's buffer: answered EIO", n, in->opcode);
			if (write(fd, &oh, sizeof(oh)) < 0)
				return -1;
		}
	}
}

ssize_t fs_wire_read(int fd, void *buf, size_t len, void *userdata)
{
	struct fs_ctx *fs = userdata;
	ssize_t n = caa_unlikely(CMM_LOAD_SHARED(fs->wire_bounce)) ? bounce_read(fs, fd, buf, len)
								   : read(fd, buf, len);

	if (n > 0)
		fs_wire_inspect(userdata, buf, (size_t)n);
	return n;
}

ssize_t fs_wire_writev(int fd, struct iovec *iov, int count, void *userdata)
{
	struct fs_ctx *fs = userdata;
	ssize_t n;

	if (open_unique)
		patch_open_reply(fs, iov, count);
	/* a reply to a request that came over io_uring goes back the same way */
	if (fs_uring_reply(fs, iov, count, &n))
		return n;
	if (caa_unlikely(CMM_LOAD_SHARED(fs->init_unique)))
		patch_init_reply(fs, iov, count);
	if (caa_unlikely(CMM_LOAD_SHARED(fs->uring_init_unique)))
		return fs_uring_init_reply(fs, fd, iov, count);
	return writev(fd, iov, count);
}
