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
 * 3. The io_uring transport (transport/uring.c): its requests pass through
 *    fs_wire_inspect() as /dev/fuse ones do, the INIT reply is where it
 *    asks for FUSE_OVER_IO_URING, and replies to ring requests leave
 *    through fs_uring_reply() instead of writev(2).
 */
#include <errno.h>
#include <linux/fuse.h>
#include <stddef.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fs_i.h"

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

	req_kill_suidgid = false;
	switch (in->opcode) {
	case FUSE_INIT:
		/* the first four fields are there in every protocol version */
		if (argn >= offsetof(struct fuse_init_in, flags) + sizeof(uint32_t)) {
			struct fuse_init_in ii;

			memcpy(&ii, arg, offsetof(struct fuse_init_in, flags) + sizeof(uint32_t));
			fs->init_flags = ii.major == 7 && ii.minor >= 33 ? ii.flags : 0;
			/* the reply goes out of this thread; others only test for 0 */
			CMM_STORE_SHARED(fs->init_unique, in->unique);
		}
		return;
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
static void patch_init_reply(struct fs_ctx *fs, struct iovec *iov, int count)
{
	const size_t init_len = offsetof(struct fuse_init_out, flags) + sizeof(uint32_t);
	const struct fuse_out_header *oh;
	bool v2;

	if (count < 2 || iov[0].iov_len < sizeof(*oh) || iov[1].iov_len < init_len)
		return;
	oh = iov[0].iov_base;
	if (oh->unique != fs->init_unique)
		return;
	v2 = !oh->error && (fs->init_flags & FUSE_HANDLE_KILLPRIV_V2);
	CMM_STORE_SHARED(fs->init_unique, 0);
	if (v2) {
		struct fuse_init_out *io = iov[1].iov_base;

		io->flags |= FUSE_HANDLE_KILLPRIV_V2;
	}
	fs_log(FS_LOG_INFO, "%s", v2 ? "HANDLE_KILLPRIV_V2 on: the daemon drops suid/sgid bits" :
	       "HANDLE_KILLPRIV_V2 not offered by the kernel");
}
#endif /* FS_WIRE_KILLPRIV */

void fs_wire_inspect(struct fs_ctx *fs, const void *buf, size_t n)
{
	const struct fuse_in_header *in = buf;

	if (n < sizeof(*in))
		return;
#if FS_WIRE_KILLPRIV
	note_request(fs, in, n);
#endif
	if (caa_unlikely(in->opcode == FUSE_INIT))
		fs_uring_note_init(fs, in, n);
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

ssize_t fs_wire_read(int fd, void *buf, size_t len, void *userdata)
{
	ssize_t n = read(fd, buf, len);

	if (n > 0)
		fs_wire_inspect(userdata, buf, (size_t)n);
	return n;
}

ssize_t fs_wire_writev(int fd, struct iovec *iov, int count, void *userdata)
{
	struct fs_ctx *fs = userdata;
	ssize_t n;

	/* a reply to a request that came over io_uring goes back the same way */
	if (fs_uring_reply(fs, iov, count, &n))
		return n;
#if FS_WIRE_KILLPRIV
	if (caa_unlikely(CMM_LOAD_SHARED(fs->init_unique)))
		patch_init_reply(fs, iov, count);
#endif
	if (caa_unlikely(CMM_LOAD_SHARED(fs->uring_init_unique)))
		return fs_uring_init_reply(fs, fd, iov, count);
	return writev(fd, iov, count);
}
