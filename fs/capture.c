// SPDX-License-Identifier: MIT
/*
 * capture.c - what the daemon writes into the trace, and how
 *
 * Each request the kernel sends produces exactly one OP record (a
 * daemon-answered control xattr produces a PHASE record instead), made by
 * the worker thread that served it, through trace/'s recorder: the
 * recorder keeps one buffer per thread and never blocks us; when it must
 * drop, it counts and writes a LOST record (tracing never changes the I/O
 * result). The OP record is made before the reply, so everything a request
 * produced is in the trace before the application sees the result.
 *
 * Timing: rec.time_ns is taken by iotap_trace_op_begin() right before the
 * backing syscall(s) (fs_capture_io_begin) and rec.dur_ns covers only them
 * (fs_capture_io_end); an op that fails before reaching the backing fs gets
 * dur_ns = 0. Every other record type also takes its time_ns from
 * iotap_trace_op_begin(), so the recorder's watermark stays exact.
 *
 * Names go into NAME records, once per binding: file = child st_ino,
 * file2 = parent st_ino (0 for the root, whose name is the backing path),
 * name, mode = st_mode, uid, gid, length = st_size, flags = 1 for an
 * additional hard-link name. A NAME is queued by the op (fs_capture_name) and
 * written right after its OP record; for lookups it is skipped when the
 * binding is one of the inode's last two emitted (hashes kept in struct
 * fs_inode, two so that a file with two hard links does not flip-flop).
 *
 * Per-op field usage (all OP records: time_ns, dur_ns, tid = the caller's
 * thread id as the kernel sends it, pid = its thread-group id, uid/gid =
 * the caller's fsuid/fsgid, result = bytes or 0 or -errno; "ino" below is
 * always the backing st_ino, never the FUSE node id; fh = a daemon-unique
 * id of the open file or directory, not the fd number; "-" = 0; "name*"
 * = rec.name carries the name only when no file id says it):
 *
 *   op              file      file2      fh    offset   length     flags        mode     aux
 *   LOOKUP          child|0   parent     -     -        -          -            st_mode  -
 *                   name*: on failure
 *   FORGET          ino|0(*1) -          -     -        nlookup    -            -        inodes
 *   GETATTR         ino       -          fh?   -        -          -            st_mode  st_size
 *   SETATTR         ino       -          fh?   new size -          SET_ATTR_*   new mode ids (*2)
 *   READLINK        ino       -          -     -        -          -            -        -
 *   MKNOD           new|0     parent     -     -        -          -            mode     rdev
 *   MKDIR           new|0     parent     -     -        -          -            mode     -
 *                   name*: on failure (MKNOD, MKDIR)
 *   SYMLINK         new|0     parent     -     -        target len -            S_IFLNK  -
 *                   name: the link target, always
 *   UNLINK, RMDIR   victim|0  parent     -     -        -          -            st_mode  -
 *                   name*: see (*3)
 *   RENAME          moved|0   new parent -     -        -          renameat2    st_mode  old dir
 *                   name*: the old name, on failure or when the moved
 *                   file has several hard links
 *   LINK            ino       new parent -     -        -          -            st_mode  -
 *                   name*: on failure
 *   OPEN            ino       -          new   -        -          app's open   -        -
 *   CREATE          new|0     parent     new   -        -          app's open   mode     -
 *                   name*: on failure
 *   READ            ino       -          fh    offset   requested  (*4)         -        -
 *   WRITE           ino       -          fh    offset   requested  (*4)         -        writepage
 *   FLUSH           ino       -          fh    -        -          -            -        -
 *   RELEASE         ino       -          fh    -        -          open flags   -        -
 *   FSYNC           ino       -          fh    -        -          DATASYNC     -        -
 *   OPENDIR         ino       -          new   -        -          open flags   -        -
 *   READDIR(PLUS)   ino       -          fh    cookie   buf size   -            -        entries
 *   RELEASEDIR      ino       -          fh    -        -          -            -        -
 *   FSYNCDIR        ino       -          fh    -        -          DATASYNC     -        -
 *   STATFS          ino       -          -     -        -          -            -        -
 *   SETXATTR        ino       -          -     -        value size XATTR_*      -        -
 *   GETXATTR        ino       -          -     -        buf size   REJECTED(*5) -        -
 *   LISTXATTR       ino       -          -     -        buf size   -            -        -
 *   REMOVEXATTR     ino       -          -     -        -          -            -        -
 *                   name: the attribute name, always (SET/GET/REMOVEXATTR)
 *   ACCESS          ino       -          -     -        -          -            mask     -
 *   FALLOCATE       ino       -          fh    offset   length     mode         -        -
 *   LSEEK           ino       -          fh    offset   -          whence       -        -
 *                   result: the new offset
 *   COPY_FILE_RANGE ino in    ino out    fh in off in   length     flags        -        off out
 *   IOCTL           ino       -          fh    -        in size    REJECTED     -        cmd
 *   POLL            ino       -          fh    -        -          REJECTED     -        events
 *   BMAP            ino       -          -     block    blocksize  REJECTED     -        -
 *   GETLK, SETLK,   ino|0     -          -     -        -          REJECTED     -        opcode
 *   TMPFILE,        libfuse answered ENOSYS without calling us; the request hook in
 *   UNKNOWN         wire.c saw it. ino only for GETLK, SETLK(W) and TMPFILE
 *
 * (*1) FORGET: a single forget has file = ino; a batch (forget_multi) is
 *      one record with file = 0 (or the ino when the batch has one entry),
 *      length = the sum of nlookup and aux = the number of inodes.
 * (*2) SETATTR aux: (uid << 32 | gid) with 0xffffffff for the part not
 *      changed, when the mask has FUSE_SET_ATTR_UID or _GID; else 0.
 *      flags is the FUSE_SET_ATTR_* mask.
 * (*3) UNLINK/RMDIR name: when the victim could not be identified, or when
 *      it has several hard links (its NAME records do not say which goes).
 * RENAME: on success a NAME record rebinds the moved file (two for
 *      RENAME_EXCHANGE); LINK and CREATE/MKNOD/MKDIR/SYMLINK emit the new
 *      binding; LOOKUP and READDIRPLUS emit one when it is new to the daemon.
 * (*4) READ/WRITE flags: IOTAP_OPF_DIRECT for an O_DIRECT handle,
 *      IOTAP_OPF_SYNC (WRITE only) for O_SYNC or O_DSYNC, IOTAP_OPF_CACHED
 *      for every non-O_DIRECT handle in cache mode, IOTAP_OPF_CUT and
 *      IOTAP_OPF_CONT on the pieces of one call in direct mode (calls.c).
 * (*5) GETXATTR of the daemon's control names (iotap_fs.h) on the root.
 * A fault-injected request (hidden option) is recorded with the injected
 * -errno, dur_ns = 0 and IOTAP_OPF_REJECTED.

 *
 * Who the caller is (its process, whether it is iotap's own tool or may
 * control the mount) is caller.c's; which inodes --only-under keeps is
 * under.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fs_i.h"
#include "iotap_base.h"

#define HEALTH_EVERY		4096	/* records per thread between health checks */

/* A NAME record to emit after the OP record of the same request. */
struct fs_pending_name {
	uint64_t ino;
	uint64_t parent;
	size_t name_off;		/* in the thread's arena */
	uint32_t mode;
	uint32_t uid;
	uint32_t gid;
	uint64_t size;
	uint32_t flags;			/* 1: an additional name (hard link) */
};

void fs_capture_start_as(struct fs_capture *op, struct fs_ctx *fs, const struct fs_caller *who,
			 unsigned int opcode, struct fs_inode *inode)
{
	op->fs = fs;
	op->r = CMM_LOAD_SHARED(fs->rec);
	op->t = fs_thread_get();
	op->begun = false;
	op->nr_names = 0;
	op->t->arena_used = 0;
	iotap_trace_op_init(&op->rec, opcode);
	op->rec.file = inode ? inode->ino : 0;
	op->dev = inode ? inode->dev : 0;
	op->in = !fs->under.n || (inode && fs_scope(fs, inode, op->r) == FS_SCOPE_IN);
	op->quiet = false;
	/* the live counters count per thread, processes found on request (stats.c) */
	op->pid = who->pid;
	if (!op->r)
		return;
	/* rec.pid: fs_capture_end() (from the tid and the op's clock read) */
	op->rec.tid = who->pid;
	op->rec.uid = who->uid;
	op->rec.gid = who->gid;
}

void fs_capture_start(struct fs_capture *op, fuse_req_t req, unsigned int opcode,
		      struct fs_inode *inode)
{
	struct fs_ctx *fs = fs_req(req);
	const struct fs_caller who = fs_req_caller(req);

	fs_capture_start_as(op, fs, &who, opcode, inode);
	if (caa_unlikely(inode == fs->root) && inode &&
	    (opcode == IOTAP_OP_GETATTR || opcode == IOTAP_OP_STATFS) && fs_caller_is_tool(req))
		fs_capture_quiet(op);
}

bool fs_capture_handoff(struct fs_capture *op)
{
	int h = -1;

	if (op->r && op->begun) {
		h = iotap_trace_op_hold(op->r, op->rec.time_ns);
		if (h < 0)
			return false;
	}
	fs_uring_handoff(op->begun ? op->r : NULL, h, op->begun ? op->rec.time_ns : 0);
	return true;
}

int fs_capture_fault(struct fs_capture *op)
{
	struct fs_ctx *fs = op->fs;
	uint64_t n;

	if (caa_likely(!fs->fail_op) || op->rec.op != fs->fail_op)
		return 0;
	n = uatomic_add_return(&fs->fail_count, 1);
	if (n != fs->fail_nth)
		return 0;
	op->rec.flags |= IOTAP_OPF_REJECTED;
	fs_log(FS_LOG_INFO, "fault injection: %s request #%llu fails with %s",
	       iotap_trace_op_name(op->rec.op), (unsigned long long)n, strerror(fs->fail_errno));
	return -fs->fail_errno;
}

static uint64_t binding_hash(uint64_t parent, const char *name)
{
	uint64_t h = iotap_hash_str(name, parent);

	return h ? h : 1;	/* 0: no binding */
}

/* Room for one more pending name of @len bytes (+ NUL) in @t; false without memory. */
static bool pend_reserve(struct fs_thread *t, unsigned int n, size_t len)
{
	if (n >= t->pend_cap) {
		unsigned int cap = t->pend_cap ? 2 * t->pend_cap : 64;
		struct fs_pending_name *p = realloc(t->pend, cap * sizeof(*p));

		if (!p)
			return false;
		t->pend = p;
		t->pend_cap = cap;
	}
	if (t->arena_used + len + 1 > t->arena_cap) {
		size_t cap = t->arena_cap ? 2 * t->arena_cap : 16384;
		char *a;

		while (cap < t->arena_used + len + 1)
			cap *= 2;
		a = realloc(t->arena, cap);
		if (!a)
			return false;
		t->arena = a;
		t->arena_cap = cap;
	}
	return true;
}

void fs_capture_name(struct fs_capture *op, struct fs_inode *inode, struct fs_inode *dir,
		     const char *name, const struct stat *st, uint32_t flags, bool force)
{
	struct fs_thread *t = op->t;
	struct fs_pending_name *pn;
	uint64_t parent = dir->ino;
	uint64_t b = binding_hash(parent, name);
	size_t len;

	if (caa_unlikely(op->fs->under.n)) {
		/* the subtree filter: the binding sets the scope, and whether it is named */
		if (!fs_under_bind(op, inode, dir, st))
			return;
	}
	if (inode) {
		if (!force && fs_binding_known(inode, b))
			return;
		fs_binding_note(inode, b, flags);
	} else {
		fs_inode_note_binding(op->fs, st->st_dev, st->st_ino, b, flags);
	}
	if (!op->r)
		return;
	len = strlen(name);
	if (!pend_reserve(t, op->nr_names, len))
		return;
	pn = &t->pend[op->nr_names++];
	pn->ino = st->st_ino;
	pn->parent = parent;
	pn->name_off = t->arena_used;
	memcpy(t->arena + t->arena_used, name, len + 1);
	t->arena_used += len + 1;
	pn->mode = st->st_mode;
	pn->uid = st->st_uid;
	pn->gid = st->st_gid;
	pn->size = st->st_size;
	pn->flags = flags;
}

static uint32_t name_len(const char *name)
{
	size_t n = strnlen(name, IOTAP_TRACE_NAME_MAX);

	return n < IOTAP_TRACE_NAME_MAX ? (uint32_t)n : IOTAP_TRACE_NAME_MAX - 1;
}

/* Does OP record @rec pass the mount's capture filters? */
static bool filter_pass(const struct fs_ctx *fs, const struct iotap_trace_rec *rec)
{
	const struct iotap_fs_opts *o = &fs->o;

	if (o->only_ops && (rec->op >= 64 || !(o->only_ops >> rec->op & 1)))
		return false;
	if (o->only_uid_set && rec->uid != o->only_uid)
		return false;
	return !o->only_pid || rec->pid == o->only_pid;
}

static void check_health(struct fs_ctx *fs, struct iotap_trace_recorder *r)
{
	int err = iotap_trace_recorder_error(r);

	if (err && !uatomic_xchg(&fs->warned_trace, 1)) {
		char path[PATH_MAX];

		fs_ctl_trace_path(fs, path, sizeof(path));
		fs_log(FS_LOG_WARN, "cannot write trace '%s': %s; the mount keeps serving and "
		       "further records are counted as lost", path, strerror(-err));
	}
	if (!CMM_LOAD_SHARED(fs->warned_lost) && iotap_trace_recorder_lost(r) &&
	    !uatomic_xchg(&fs->warned_lost, 1))
		fs_log(FS_LOG_WARN, "trace records are being dropped (writer behind or trace "
		       "not writable); the trace counts them in LOST records");
}

void fs_capture_end(struct fs_capture *op, int64_t result)
{
	struct iotap_trace_recorder *r = op->r;
	struct iotap_trace_rec nr;
	unsigned int i;

	if (op->quiet)
		return;
	fs_stats_op(op->t, op, result);
	if (!r)
		return;
	if (caa_unlikely(op->fs->o.save_lat_ns) && op->rec.op == op->fs->o.save_lat_op &&
	    op->rec.dur_ns > op->fs->o.save_lat_ns)
		fs_ctl_trigger(op->fs, "%s took %.3f ms (more than %.3f ms)",
			       iotap_trace_op_name(op->rec.op), op->rec.dur_ns / 1e6,
			       op->fs->o.save_lat_ns / 1e6);
	op->rec.result = result;
	op->rec.pid = op->begun ? fs_caller_tgid_at(op->rec.tid, op->rec.time_ns) :
				  fs_caller_tgid(op->rec.tid);
	if (caa_likely(!op->fs->filter) || (op->in && filter_pass(op->fs, &op->rec))) {
		if (!op->begun)
			op->rec.time_ns = iotap_trace_op_begin(r);
		if (op->rec.name)
			op->rec.name_len = name_len(op->rec.name);
		iotap_trace_record(r, &op->rec);
	} else if (op->begun) {
		iotap_trace_op_cancel(r);	/* filtered out: no record follows the begin */
	}

	for (i = 0; i < op->nr_names; i++) {
		const struct fs_pending_name *pn = &op->t->pend[i];
		const char *name = op->t->arena + pn->name_off;

		iotap_trace_name_init(&nr, pn->ino, pn->parent, pn->mode, pn->uid, pn->gid,
				      pn->size, pn->flags, name, name_len(name));
		nr.tid = op->rec.tid;
		nr.pid = op->rec.pid;
		nr.time_ns = iotap_trace_op_begin(r);
		iotap_trace_record(r, &nr);
	}
	op->t->arena_used = 0;
	if (caa_unlikely(++op->t->nr_records % HEALTH_EVERY == 0))
		check_health(op->fs, r);
}

static pthread_mutex_t phase_lock = PTHREAD_MUTEX_INITIALIZER;

/*
 * Note phase @name begun, or ended: false for the end of one never begun
 * (or begun more than FS_PHASES_OPEN other phases ago and forgotten).
 */
static bool phase_note(struct fs_ctx *fs, const char *name, uint32_t kind)
{
	unsigned int i;
	bool found = false;
	char *c;

	pthread_mutex_lock(&phase_lock);
	for (i = 0; i < fs->nr_phase_open && strcmp(fs->phase_open[i], name); i++)
		;
	found = i < fs->nr_phase_open;
	if (found && kind == IOTAP_PHASE_END) {
		free(fs->phase_open[i]);
		memmove(fs->phase_open + i, fs->phase_open + i + 1,
			(--fs->nr_phase_open - i) * sizeof(*fs->phase_open));
	} else if (!found && kind == IOTAP_PHASE_BEGIN && (c = strdup(name))) {
		if (fs->nr_phase_open == FS_PHASES_OPEN) {
			free(fs->phase_open[0]);
			memmove(fs->phase_open, fs->phase_open + 1,
				--fs->nr_phase_open * sizeof(*fs->phase_open));
		}
		fs->phase_open[fs->nr_phase_open++] = c;
	}
	pthread_mutex_unlock(&phase_lock);
	return found || kind != IOTAP_PHASE_END;
}

int fs_record_phase(struct fs_ctx *fs, fuse_req_t req, const char *name,
		    size_t len, uint32_t kind)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	struct iotap_trace_recorder *r;
	char buf[256];
	struct iotap_trace_rec rec;
	uint64_t user_ns = 0, sys_ns = 0;
	uint32_t pid;

	if (len >= sizeof(buf))
		len = sizeof(buf) - 1;
	memcpy(buf, name, len);
	buf[len] = '\0';
	if (!phase_note(fs, buf, kind))
		return -ESRCH;
	pid = fs_caller_tgid(ctx->pid);
	if (!pid || fs_proc_cpu(fs, pid, &user_ns, &sys_ns))
		user_ns = sys_ns = 0;
	iotap_trace_phase_init(&rec, kind, buf, (uint32_t)len, user_ns, sys_ns);
	rec.tid = ctx->pid;
	rec.pid = pid;
	rec.uid = ctx->uid;
	rec.gid = ctx->gid;
	fs_log(FS_LOG_INFO, "phase %s '%s' (pid %u)", kind == IOTAP_PHASE_BEGIN ? "begin" : "end",
	       buf, rec.pid);
	r = CMM_LOAD_SHARED(fs->rec);
	if (!r)
		return 0;
	rec.time_ns = iotap_trace_op_begin(r);
	iotap_trace_record(r, &rec);
	if (fs->o.save_mark && kind == IOTAP_PHASE_BEGIN && !strcmp(buf, fs->o.save_mark))
		fs_ctl_trigger(fs, "mark '%s' by pid %u", buf, rec.pid);
	return 0;
}

void fs_record_root(struct fs_ctx *fs, const struct stat *st)
{
	struct iotap_trace_rec rec;

	fs_binding_note(fs->root, binding_hash(0, fs->backing), 0);
	if (!fs->rec)
		return;
	iotap_trace_name_init(&rec, st->st_ino, 0, st->st_mode, st->st_uid, st->st_gid,
			      st->st_size, 0, fs->backing, name_len(fs->backing));
	rec.tid = (uint32_t)gettid();
	rec.pid = (uint32_t)getpid();
	rec.time_ns = iotap_trace_op_begin(fs->rec);
	iotap_trace_record(fs->rec, &rec);	/* before the mount: fs->rec is settled */
}

void fs_record_unhandled(struct fs_ctx *fs, uint32_t opcode, uint64_t nodeid,
			 uint32_t pid, uint32_t uid, uint32_t gid)
{
	struct iotap_trace_recorder *r = CMM_LOAD_SHARED(fs->rec);
	struct iotap_trace_rec rec;
	unsigned int op;

	if (fs_log_on(FS_LOG_DEBUG))
		fs_log(FS_LOG_DEBUG, "FUSE opcode %u answered ENOSYS by libfuse", opcode);
	if (!r)
		return;
	switch (opcode) {
	case 31:	/* FUSE_GETLK */
		op = IOTAP_OP_GETLK;
		break;
	case 32:	/* FUSE_SETLK */
	case 33:	/* FUSE_SETLKW */
		op = IOTAP_OP_SETLK;
		break;
	case 51:	/* FUSE_TMPFILE */
		op = IOTAP_OP_TMPFILE;
		break;
	default:
		op = IOTAP_OP_UNKNOWN;
		break;
	}
	iotap_trace_op_init(&rec, op);
	rec.aux = opcode;
	rec.flags = IOTAP_OPF_REJECTED;
	rec.tid = pid;
	rec.pid = fs_caller_tgid(pid);
	rec.uid = uid;
	rec.gid = gid;
	if (nodeid)
		rec.file = fs_ino(fs, nodeid)->ino;
	rec.result = -ENOSYS;
	if (fs->under.n && (!nodeid || fs_scope(fs, fs_ino(fs, nodeid), NULL) != FS_SCOPE_IN))
		return;
	if (fs->filter && !filter_pass(fs, &rec))
		return;
	rec.time_ns = iotap_trace_op_begin(r);
	iotap_trace_record(r, &rec);
}
