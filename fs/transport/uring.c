// SPDX-License-Identifier: MIT
/*
 * uring.c - FUSE over io_uring: the transport behind `--transport uring`
 *
 * Since Linux 6.14 the fuse module can carry requests and replies through
 * io_uring instead of read(2)/writev(2) on /dev/fuse (module parameter
 * enable_uring, root-writable, off by default). The protocol is the
 * kernel's uapi <linux/fuse.h> 7.42 (struct fuse_uring_req_header, struct
 * fuse_uring_cmd_req, FUSE_IO_URING_CMD_REGISTER / COMMIT_AND_FETCH); the
 * references are the kernel's fs/fuse/dev_uring.c and libfuse's
 * lib/fuse_uring.c. libfuse 3.14 has no io_uring support, so iotap does it
 * from the wire shim (wire.c), under libfuse, and libfuse's own request
 * parsing and our op handlers and recorder run unchanged.
 *
 * How it runs:
 *
 *  - The INIT request comes over /dev/fuse as always. Its reply (in the
 *    shim's writev hook) sets FUSE_OVER_IO_URING in flags2 when the kernel
 *    offered it; once that reply is written the kernel is initialised and
 *    the ring threads start (fs_uring_init_reply()).
 *  - One queue per possible CPU (the kernel routes a request to the queue
 *    of the CPU the application runs on and uses the ring only once every
 *    queue has an entry), uring_depth entries per queue (default 16).
 *  - Each queue has one ring (IORING_SETUP_SQE128: the command sits in
 *    the SQE's 80-byte area) holding its entries' commands, each entry a
 *    registered header page and a payload buffer of the connection's
 *    largest request, and threads pinned to its CPU, one of which leads:
 *    it waits for completions and serves them inline, so a busy queue
 *    serves many requests per wake-up. Before it sleeps it spins a little
 *    (-o uring_spin, queue_spin()), while requests keep coming.
 *  - Blocking handlers. The kernel fills an idle entry by task work in
 *    the thread that submitted its COMMIT_AND_FETCH, so a ring thread
 *    asleep uninterruptibly (an fsync waiting for the disk) would hold
 *    every request given to an entry it committed until it woke (stalls
 *    as long as the fsync: tests/bench/fsync-beside.sh). fsync, fsyncdir,
 *    fallocate and copy_file_range therefore run on helper threads of the
 *    queue (queue_offload(), up to one per entry, on any CPU), which put
 *    the reply in the entry, queue its commit and wake the ring with a
 *    MSG_RING; the ring thread submits it, so entries are only ever
 *    committed by threads that sleep nowhere but in io_uring_enter()
 *    (e2e fs-uring-fsync: reads beside a 4 s fsync on a slow disk). The
 *    hand-off costs each fsync the wake-ups of an idle vCPU for the
 *    helper and then the leader (what they cost, and what the stalls
 *    were: BENCHMARKS.md, io_uring sessions 6 and 7).
 *  - Reads and writes that would wait for the disk. A ring thread tries
 *    them with RWF_NOWAIT (fs_uring_nowait(), fs_op_read(),
 *    fs_op_write_buf()); a page-cache miss (or, on XFS, a write that must
 *    read a partial page or is throttled) returns EAGAIN, the handler
 *    drops the request without a reply (fs_capture_handoff(): the op's start
 *    stays held in the recorder) and ent_serve() queues the entry to a
 *    helper, which serves it again from the start, waits for the disk,
 *    records the op timed from the first attempt and replies like a
 *    fsync's helper (e2e fs-uring-coldread: reads beside a 3 s cold read,
 *    an O_DSYNC write and a partial-page write on XFS, on a slow disk).
 *    Reads and writes of O_DIRECT files and O_SYNC writes go to a helper
 *    untried. Where RWF_NOWAIT is refused (tmpfs, FUSE; ext4 for buffered
 *    writes) and for appends the request is served inline (README
 *    Limits).
 *  - Any other handler that stays busy for one to two URING_WATCH_NS (a
 *    read of a FIFO) is handed over by the watchdog, which wakes or starts
 *    another thread of the queue (up to one per entry) to lead, so the
 *    other entries keep serving (e2e fs-uring proves it with an
 *    interruptible delay) -- but not while that handler sleeps
 *    uninterruptibly. While no leader is in a handler the watchdog
 *    sleeps, and the leader that enters one wakes it (e2e
 *    fs-uring-idle). The queue depth an application gets is uring_depth
 *    per CPU, like libfuse's worker threads on /dev/fuse.
 *  - A request (CQE) is rebuilt as the contiguous message libfuse expects
 *    -- fuse_in_header, the op's header, then the payload -- without moving
 *    the payload: the payload buffer has a page of room in front, where the
 *    two headers are copied. fuse_session_process_buf() then runs the
 *    same handler as for /dev/fuse, which replies through the shim's
 *    writev hook: fs_uring_reply() copies the reply into the entry's
 *    buffers (the thread-local current entry; replies from another thread
 *    find their entry by unique id) and the entry's thread sends
 *    COMMIT_AND_FETCH, which also waits for its next request.
 *  - READ and WRITE skip libfuse (unless -o uring_direct=0):
 *    ent_serve_direct() parses them, builds the file info as libfuse
 *    3.14's do_read()/do_write_buf() do and runs the same handler bodies
 *    (ops_file.c's fs_io_read()/fs_io_write(), struct fs_io_req), which
 *    reply through uring_io_reply into the entry. libfuse would
 *    calloc a struct fuse_req and take the session-wide se->lock twice
 *    per request, the only lines every request writes from every CPU
 *    (BENCHMARKS.md, issue 24, session 13).
 *  - What stays on /dev/fuse (the kernel's choice): FORGET and
 *    BATCH_FORGET, INTERRUPT, notify messages and their replies, and every
 *    request sent before the ring was ready. libfuse's loop keeps reading
 *    the device for them; libfuse finds an interrupted request on its list
 *    whichever way the request came -- but for READ and WRITE served
 *    directly, which are on no list: an INTERRUPT for one waits on
 *    libfuse's interrupt list until the next request libfuse parses
 *    answers it EAGAIN, which the kernel, its request gone from the
 *    device, drops (no handler of ours looks at interrupts).
 *
 * The files: uring.c (this one) the ring threads, the helpers and the
 * reply hooks -- the request loop; uring_setup.c choosing the transport,
 * starting the rings after INIT and stopping them; uring_i.h what both
 * share (the uapi, the queue and entry structs).
 */
#include <errno.h>
#include <linux/fuse.h>
#include <linux/membarrier.h>
#include <liburing.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <time.h>
#include <unistd.h>

#include "uring_i.h"

static __thread struct fs_uring_ent *cur_ent;	/* the request this thread serves */
static __thread bool cur_leader;		/* this thread leads its queue's ring */
static __thread bool cur_helper;		/* this thread serves fsyncs off the ring */

/* --- the ring threads ----------------------------------------------------- */

/* Queue @e's command: REGISTER, or COMMIT_AND_FETCH of its request. Under q->sq_lock. */
int uring_ent_prep(struct fs_uring_ent *e, uint32_t cmd_op)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&e->q->ring);
	struct fuse_uring_cmd_req *req;

	if (!sqe)
		return -EBUSY;
	/* a 128-byte SQE: clear it all, the command area included */
	memset(sqe, 0, 128);
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->flags = IOSQE_FIXED_FILE;
	sqe->fd = 0;			/* index of /dev/fuse among the registered files */
	sqe->cmd_op = cmd_op;
	sqe->user_data = (uint64_t)(uintptr_t)e;
	req = (struct fuse_uring_cmd_req *)sqe->cmd;
	req->qid = (uint16_t)e->q->qid;
	if (cmd_op == FUSE_IO_URING_CMD_REGISTER) {
		sqe->addr = (uint64_t)(uintptr_t)e->iov;
		sqe->len = 2;
	} else {
		req->commit_id = e->hdr->ring_ent_in_out.commit_id;
	}
	return 0;
}

/*
 * Send @e's reply and fetch its next request. The leader only queues it
 * (submitted with the others before it waits again); any other thread
 * submits at once.
 */
static void ent_commit(struct fs_uring_ent *e, bool submit)
{
	struct fs_uring_queue *q = e->q;
	int ret;

	CMM_STORE_SHARED(e->unique, 0);
	pthread_mutex_lock(&q->sq_lock);
	ret = uring_ent_prep(e, FUSE_IO_URING_CMD_COMMIT_AND_FETCH);
	if (!ret && submit)
		ret = io_uring_submit(&q->ring) < 0 ? -EIO : 0;
	pthread_mutex_unlock(&q->sq_lock);
	if (ret) {
		fs_log(FS_LOG_ERR, "io_uring: queue %u: cannot commit a reply: %s", q->qid,
		       strerror(-ret));
		e->dead = true;
	}
}

/*
 * Wake whichever ring thread waits on @q's ring: a message posted straight
 * into its completion queue (IORING_REGISTER_SEND_MSG_RING, no ring of our
 * own needed; the kernel posts it without task work, so it arrives even
 * while the thread that armed anything on the ring sleeps). Should the
 * kernel refuse it, submit from here, as a late reply does.
 */
static void queue_kick(struct fs_uring_queue *q)
{
	struct io_uring_sqe sqe;

	memset(&sqe, 0, sizeof(sqe));
	io_uring_prep_msg_ring(&sqe, q->ring.ring_fd, 0, UD_KICK, 0);
	if (syscall(__NR_io_uring_register, -1, IORING_REGISTER_SEND_MSG_RING, &sqe, 1) < 0) {
		pthread_mutex_lock(&q->sq_lock);
		io_uring_submit(&q->ring);
		pthread_mutex_unlock(&q->sq_lock);
	}
}

/*
 * @e's reply is in its buffers: send it with the fetch of its next
 * request. A ring thread commits (the leader only queues: its next submit
 * sends it). A helper queues the commit and kicks the ring, so that the
 * thread submitting it -- the one the kernel runs @e's next request's task
 * work in -- is a ring thread, never a helper that may be asleep in its
 * next fsync.
 */
static void ent_done(struct fs_uring_ent *e)
{
	if (cur_helper) {
		ent_commit(e, false);
		queue_kick(e->q);
	} else {
		ent_commit(e, !cur_leader);
	}
}

static bool queue_offload(struct fs_uring_queue *q, struct fs_uring_ent *e);
static void ent_serve_handed(struct fs_uring_ent *e);

/*
 * A READ or WRITE served without libfuse: what fuse_session_process_buf()
 * does for them in libfuse 3.14 but the session-wide parts -- no struct
 * fuse_req is allocated, and se->lock is taken neither to link it into
 * se->list (where an INTERRUPT would find it: no handler of ours looks
 * for interrupts, and libfuse 3.19 skips the list for its own ring
 * requests alike) nor to unlink it. What stays: the file info
 * do_read()/do_write_buf() build (fh, flags, lock_owner, writepage),
 * their size check, the caller from the header; libfuse's one access
 * check (deny_others, a user's -o allow_root) exempts READ and WRITE.
 * The handler bodies are fs_op_read()'s and fs_op_write_buf()'s
 * (ops_file.c), replying through uring_io_reply (ent_reply_direct()).
 */
static const struct fs_io_reply_ops uring_io_reply;

static void ent_serve_direct(struct fs_uring_ent *e, const struct fuse_in_header *in,
			     size_t opsz, uint32_t psz)
{
	struct fs_io_req r = {
		.fs = e->q->u->fs,
		.reply = &uring_io_reply,
		.to = e,
		.who = { in->pid, in->uid, in->gid },
	};
	struct fuse_file_info fi;

	if (caa_unlikely(r.fs->o.debug))	/* what libfuse's debug output says of each request */
		fs_log(FS_LOG_DEBUG, "unique: %llu, opcode: %s (%u), nodeid: %llu, insize: %u, "
		       "pid: %u (io_uring, without libfuse)", (unsigned long long)in->unique,
		       in->opcode == FUSE_READ ? "READ" : "WRITE", in->opcode,
		       (unsigned long long)in->nodeid, in->len, in->pid);
	memset(&fi, 0, sizeof(fi));
	if (in->opcode == FUSE_READ) {
		const struct fuse_read_in *a = (const struct fuse_read_in *)(in + 1);

		if (opsz < sizeof(*a))
			goto short_arg;
		fi.fh = a->fh;
		fi.lock_owner = a->lock_owner;
		fi.flags = (int)a->flags;
		fs_io_read(&r, a->size, (off_t)a->offset, &fi);
	} else {
		const struct fuse_write_in *a = (const struct fuse_write_in *)(in + 1);
		struct fuse_bufvec bv = FUSE_BUFVEC_INIT(0);

		if (opsz < sizeof(*a))
			goto short_arg;
		fi.fh = a->fh;
		fi.writepage = (a->write_flags & FUSE_WRITE_CACHE) != 0;
		fi.lock_owner = a->lock_owner;
		fi.flags = (int)a->flags;
#if !FS_WIRE_KILLPRIV
		fi.kill_suidgid = (a->write_flags & FUSE_WRITE_KILL_SUIDGID) != 0;
#endif
		if (psz < a->size) {
			fs_log(FS_LOG_ERR, "io_uring: a WRITE of %u bytes carries %u", a->size, psz);
			r.reply->err(&r, EIO);
			return;
		}
		bv.buf[0].mem = e->payload;
		bv.buf[0].size = a->size;
		fs_io_write(&r, &bv, (off_t)a->offset, &fi);
	}
	return;
short_arg:
	fs_log(FS_LOG_ERR, "io_uring: opcode %u with a %zu-byte header", in->opcode, opsz);
	r.reply->err(&r, EIO);
}

/*
 * Serve the request in @e's buffers. false: its handler handed it over
 * (fs_uring_handoff) and a helper serves it now.
 */
static bool ent_serve(struct fs_uring_ent *e)
{
	struct fs_uring *u = e->q->u;
	const struct fuse_in_header *in = (const struct fuse_in_header *)e->hdr->in_out;
	uint32_t psz = e->hdr->ring_ent_in_out.payload_sz;
	struct fuse_in_header *msg;
	struct fuse_buf fb = { 0 };
	size_t opsz;

	if (in->len < sizeof(*in) + (size_t)psz || psz > u->payload_sz ||
	    in->len - sizeof(*in) - psz > FUSE_URING_OP_IN_OUT_SZ) {
		struct fuse_out_header *oh = (struct fuse_out_header *)e->hdr->in_out;
		uint64_t unique = in->unique;

		fs_log(FS_LOG_ERR, "io_uring: malformed request (opcode %u, len %u, payload %u)",
		       in->opcode, in->len, psz);
		memset(oh, 0, sizeof(*oh));
		oh->unique = unique;
		oh->error = -EIO;
		oh->len = sizeof(*oh);
		e->hdr->ring_ent_in_out.payload_sz = 0;
		ent_done(e);
		return true;
	}
	/* the message libfuse parses: both headers just in front of the payload */
	opsz = in->len - sizeof(*in) - psz;
	msg = (struct fuse_in_header *)(e->payload - sizeof(*in) - opsz);
	memcpy((char *)(msg + 1), e->hdr->op_in, opsz);
	memcpy(msg, in, sizeof(*in));
	fs_wire_inspect(u->fs, msg, msg->len);

	e->replied = false;
	CMM_STORE_SHARED(e->unique, msg->unique);
	cur_ent = e;
	if (u->direct && (msg->opcode == FUSE_READ || msg->opcode == FUSE_WRITE)) {
		ent_serve_direct(e, msg, opsz, psz);
		e->ndirect++;
	} else {
		fb.mem = msg;
		fb.size = msg->len;
		fuse_session_process_buf(u->fs->se, &fb);
		e->nlibfuse++;
	}
	cur_ent = NULL;
	if (caa_unlikely(e->handed) && !cur_helper) {
		/* its backing call would wait for the disk: a helper serves it again */
		if (queue_offload(e->q, e))
			return false;
		e->waits = true;	/* no helper can start: wait here, as before */
		ent_serve_handed(e);
		e->waits = false;
		return true;
	}
	/* no reply yet: whoever replies later commits (fs_uring_reply_slow) */
	if (e->replied)
		ent_done(e);
	return true;
}

/*
 * Serve again a request whose handler handed it over: its op is timed
 * from the start held since the first attempt (fs_capture_io_begin()), and
 * the hold goes once the op is recorded.
 */
static void ent_serve_handed(struct fs_uring_ent *e)
{
	e->handed = false;
	fs_capture_held_r = e->hold_r;
	fs_capture_held_ns = e->start;
	ent_serve(e);
	fs_capture_held_ns = 0;
	fs_capture_held_r = NULL;
	if (e->hold >= 0)
		iotap_trace_hold_release(e->hold_r, e->hold);
	e->hold = -1;
	e->hold_r = NULL;
}

static void pin_to_cpu(unsigned int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	/* an offline CPU: no pinning, the queue still serves */
	if (sched_setaffinity(0, sizeof(set), &set))
		fs_log(FS_LOG_DEBUG, "io_uring: cannot pin queue %u to its CPU: %s", cpu,
		       strerror(errno));
}

/*
 * Requests whose handler may sleep uninterruptibly for long (an fsync
 * waiting for a slow array) are served off the ring threads. The kernel
 * hands a request to an idle entry by task work in the thread that
 * submitted the entry's COMMIT_AND_FETCH; a ring thread asleep in fsync
 * runs none, so every entry it committed would hold its request until the
 * fsync returned (tests/bench/fsync-beside.sh measured 0.6 s stalls). A
 * helper runs the handler instead and hands the commit back to the ring
 * (ent_done()), so the ring threads only ever sleep in io_uring_enter().
 */
static bool offload_op(uint32_t opcode)
{
	switch (opcode) {
	case FUSE_FSYNC:
	case FUSE_FSYNCDIR:
	case FUSE_FALLOCATE:		/* a hole punched waits for the range's writeback */
	case FUSE_COPY_FILE_RANGE:	/* reads and writes the whole range */
		return true;
	default:
		return false;
	}
}

static void *helper_thread(void *arg)
{
	struct fs_uring_queue *q = arg;
	bool handed;

	cur_helper = true;
	pthread_mutex_lock(&q->lock);
	for (;;) {
		struct fs_uring_ent *e;

		while (!q->off_head && !q->stop) {
			/*
			 * Not a condition variable: glibc's pthread_cond_wait()
			 * takes the mutex back marked contended, so every
			 * unlock after it was a futex call -- one per fsync.
			 */
			unsigned int w = q->hwake;

			q->nhidle++;
			pthread_mutex_unlock(&q->lock);
			iotap_futex_wait(&q->hwake, w, 0);
			pthread_mutex_lock(&q->lock);
			q->nhidle--;
		}
		e = q->off_head;
		if (!e)
			break;		/* stopped, nothing left to serve */
		q->off_head = e->off_next;
		if (!q->off_head)
			q->off_tail = NULL;
		q->noff--;
		pthread_mutex_unlock(&q->lock);
		handed = e->handed;
		if (handed)
			ent_serve_handed(e);
		else
			ent_serve(e);
		uatomic_dec(&q->u->off_busy);
		pthread_mutex_lock(&q->lock);
		q->served++;
		q->offloaded++;
		q->waited += handed;
	}
	pthread_mutex_unlock(&q->lock);
	return NULL;
}

/*
 * Start one more helper for @q (q->lock held), taking no signals, on any
 * CPU. A thread inherits its creator's pinning, but an fsync can be CPU
 * work (ext4 allocates the delayed blocks of the dirty data in the fsyncing
 * thread): pinned to the queue's CPU it competed with the requests the
 * queue serves meanwhile (one fsync of 768 MiB took 56 s beside a reader
 * on that CPU, fsync-beside.sh). The hand-off costs the same either way.
 */
static int helper_spawn(struct fs_uring_queue *q)
{
	sigset_t all, old;
	pthread_attr_t attr;
	cpu_set_t cpus;
	unsigned int i, n = (unsigned int)get_nprocs_conf();
	int ret;

	if (q->nhelpers >= q->u->depth)
		return -EAGAIN;
	ret = pthread_attr_init(&attr);
	if (ret)
		return -ret;
	CPU_ZERO(&cpus);
	for (i = 0; i < n && i < CPU_SETSIZE; i++)
		CPU_SET(i, &cpus);
	pthread_attr_setaffinity_np(&attr, sizeof(cpus), &cpus);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = pthread_create(&q->htids[q->nhelpers], &attr, helper_thread, q);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (ret)
		return -ret;
	q->nhelpers++;
	return 0;
}

/*
 * Hand @e to a helper of its queue: an idle one, else a new one (up to one
 * per entry), so that fsyncs of several files run side by side. false: no
 * helper could start; the caller serves it inline.
 */
static bool queue_offload(struct fs_uring_queue *q, struct fs_uring_ent *e)
{
	bool wake;

	pthread_mutex_lock(&q->lock);
	/* idle helpers already signalled count down only once they run */
	if (q->noff >= q->nhidle && helper_spawn(q) && !q->nhelpers) {
		pthread_mutex_unlock(&q->lock);
		return false;
	}
	e->off_next = NULL;
	if (q->off_tail)
		q->off_tail->off_next = e;
	else
		q->off_head = e;
	q->off_tail = e;
	q->noff++;
	uatomic_inc(&q->u->off_busy);
	wake = q->nhidle != 0;
	CMM_STORE_SHARED(q->hwake, q->hwake + 1);
	pthread_mutex_unlock(&q->lock);
	/* after the unlock: the helper woken takes the lock without waiting for ours */
	if (wake)
		iotap_futex_wake(&q->hwake, 1, 0);
	return true;
}

/* A failed completion of @e's command. */
static void ent_failed(struct fs_uring_queue *q, struct fs_uring_ent *e, int res)
{
	struct fs_uring *u = q->u;
	bool registered = e->hdr->ring_ent_in_out.commit_id != 0;

	if (res == -ENOTCONN || res == -ECONNABORTED || res == -ENODEV ||
	    CMM_LOAD_SHARED(u->stopping)) {
		/* the connection ended (unmount, abort): the whole queue ends */
		pthread_mutex_lock(&q->lock);
		queue_stop_locked(q);
		pthread_mutex_unlock(&q->lock);
		return;
	}
	e->dead = true;
	if (!registered)
		uatomic_inc(&u->failed);
	fs_log(FS_LOG_ERR, "io_uring: queue %u: %s failed: %s%s", q->qid,
	       registered ? "COMMIT_AND_FETCH" : "REGISTER", strerror(-res),
	       registered ? "; one entry fewer" : "; requests stay on /dev/fuse");
}

/* Requests the queues' leaders have begun, all queues together. */
static uint64_t uring_seq(const struct fs_uring *u)
{
	uint64_t n = 0;
	unsigned int i;

	for (i = 0; i < u->nr_queues; i++)
		n += CMM_LOAD_SHARED(u->queues[i].seq);
	return n;
}

/*
 * The leader has submitted its replies and is about to sleep until the
 * next request. On a VM whose idle vCPUs halt at once (no cpuidle
 * polling: /sys/devices/system/cpu/cpuidle/current_driver "none"), that
 * sleep makes its vCPU idle, and the next request -- a synchronous
 * application's (one thread, one request at a time: a database's page
 * reads) comes a few microseconds after its reply -- must wake a halted
 * vCPU: an exit to the hypervisor and back, on this queue's CPU or on the
 * other one the application has moved to. So for up to u->spin_ns the
 * leader first waits in sched_yield(), which keeps its vCPU awake but
 * hands it at once to anything runnable there (the woken application
 * first), and sleeps only after that -- or as soon as a sched_yield()
 * did run another thread (it took over 8 us): then the CPU is busy, not
 * idle, and a spinning leader would only cost the others its switches
 * (4-job buffered randwrite lost 9-21% to it).
 *
 * It does not spin while a helper serves a request (an fsync, a read from
 * the disk): its application waits for the disk, and a spinning vCPU only
 * slows the threads that do the disk's work (one-job write+fdatasync lost
 * a fifth to it). And it spins only while that pays: spin_score (0-256)
 * rises by an eighth of the way up each time a request arrives on any
 * queue during a spin, and falls by an eighth each time one passes
 * without, or is cut short by another thread; below 64 (a dozen such
 * spins in a row: requests are sparse, an fsync a millisecond, or the
 * CPUs are busy anyway) the leader sleeps at once but for every 64th
 * wait, which spins anyway to notice when they come quickly again.
 * fs-bench, spin 30 us against none (BENCHMARKS.md, session 9): one-job
 * 8 KiB randread 1.41, the 4-job jobs and the metadata loop 1.00-1.04,
 * write+fdatasync within its disk's noise.
 */
static void queue_spin(struct fs_uring_queue *q)
{
	const struct fs_uring *u = q->u;
	struct io_uring_cqe *cqe;
	uint64_t t0, now, seq0;

	if (!u->spin_ns || !io_uring_peek_cqe(&q->ring, &cqe))
		return;		/* off, or a request is there already */
	if (uatomic_read(&u->off_busy))
		return;		/* an application waits for the disk, not for us */
	if (q->spin_score < URING_SPIN_MIN_SCORE && (++q->spin_probe & 63))
		return;
	q->spins++;
	t0 = now = iotap_trace_now_ns();
	seq0 = uring_seq(u);
	for (;;) {
		uint64_t then = now;

		sched_yield();
		if (!io_uring_peek_cqe(&q->ring, &cqe))
			break;
		now = iotap_trace_now_ns();
		if (now - then > URING_SPIN_RAN_NS) {
			/* another thread ran here: this CPU is not idle, spinning does not pay */
			q->spin_score -= q->spin_score / 8;
			return;
		}
		if (now - t0 > u->spin_ns) {
			if (uring_seq(u) == seq0)
				q->spin_score -= q->spin_score / 8;
			else
				q->spin_score += (256 - q->spin_score) / 8;
			return;
		}
	}
	q->spin_caught++;
	q->spin_score += (256 - q->spin_score) / 8;
}

/*
 * Lead the queue: wait for completions and serve them inline until the
 * watchdog hands the lead on (return false) or the queue stops (true).
 */
static bool lead(struct fs_uring_queue *q, uint64_t token)
{
	for (;;) {
		struct io_uring_cqe *cqe;
		int ret;

		pthread_mutex_lock(&q->sq_lock);
		ret = io_uring_submit(&q->ring);
		pthread_mutex_unlock(&q->sq_lock);
		if (ret >= 0) {
			queue_spin(q);
			ret = io_uring_wait_cqe(&q->ring, &cqe);
		}
		if (ret < 0 && ret != -EINTR && ret != -EAGAIN && ret != -EBUSY) {
			fs_log(FS_LOG_ERR, "io_uring: queue %u: %s", q->qid, strerror(-ret));
			pthread_mutex_lock(&q->lock);
			queue_stop_locked(q);
			pthread_mutex_unlock(&q->lock);
			return true;
		}
		while (!io_uring_peek_cqe(&q->ring, &cqe)) {
			uint64_t ud = cqe->user_data;
			int res = cqe->res;
			struct fs_uring_ent *e = (struct fs_uring_ent *)(uintptr_t)ud;
			bool still, served;

			io_uring_cqe_seen(&q->ring, cqe);
			if (ud == UD_KICK)
				continue;	/* a helper queued a commit: submit it */
			if (ud == UD_STOP) {
				pthread_mutex_lock(&q->lock);
				queue_stop_locked(q);
				pthread_mutex_unlock(&q->lock);
				return true;
			}
			if (res == -EAGAIN || res == -EINTR) {
				/* not taken yet (REGISTER before INIT was processed): again */
				pthread_mutex_lock(&q->sq_lock);
				uring_ent_prep(e, e->hdr->ring_ent_in_out.commit_id ?
					 FUSE_IO_URING_CMD_COMMIT_AND_FETCH :
					 FUSE_IO_URING_CMD_REGISTER);
				pthread_mutex_unlock(&q->sq_lock);
				continue;
			}
			if (res < 0) {
				ent_failed(q, e, res);
				pthread_mutex_lock(&q->lock);
				still = !q->stop;
				pthread_mutex_unlock(&q->lock);
				if (!still)
					return true;
				continue;
			}
			if (offload_op(((const struct fuse_in_header *)e->hdr->in_out)->opcode) &&
			    queue_offload(q, e))
				continue;
			/*
			 * No clock, no lock: the watchdog sees seq stand still.
			 * seq before busy (watchdog_look() reads them the other
			 * way round), and busy before the look at wd_asleep, a
			 * line only written when the watchdog falls asleep or
			 * wakes; that store-load pair needs a full barrier,
			 * which watchdog_sleep()'s membarrier() supplies, so
			 * on x86 both barriers here are the compiler's and the
			 * request costs one read of a line written per sleep.
			 */
			CMM_STORE_SHARED(q->seq, q->seq + 1);
			cmm_smp_wmb();
			CMM_STORE_SHARED(q->busy, 1);
			cmm_barrier();
			if (caa_unlikely(CMM_LOAD_SHARED(q->u->wd_asleep)))
				uring_watchdog_wake(q->u);
			served = ent_serve(e);
			pthread_mutex_lock(&q->lock);
			q->served += served;
			still = q->lead == token;
			if (still)
				CMM_STORE_SHARED(q->busy, 0);
			pthread_mutex_unlock(&q->lock);
			if (!still) {
				/* handed on while serving: the reply goes out now */
				pthread_mutex_lock(&q->sq_lock);
				io_uring_submit(&q->ring);
				pthread_mutex_unlock(&q->sq_lock);
				return false;
			}
		}
	}
}

static void *queue_thread(void *arg)
{
	struct fs_uring_queue *q = arg;

	pin_to_cpu(q->qid);
	pthread_mutex_lock(&q->lock);
	for (;;) {
		uint64_t token;

		while (q->lead && !q->stop) {
			q->nidle++;
			pthread_cond_wait(&q->follow, &q->lock);
			q->nidle--;
		}
		if (q->stop)
			break;
		token = ++q->next_token;
		q->lead = token;
		CMM_STORE_SHARED(q->busy, 0);
		pthread_mutex_unlock(&q->lock);
		cur_leader = true;
		if (lead(q, token)) {
			pthread_mutex_lock(&q->lock);
			break;
		}
		cur_leader = false;
		pthread_mutex_lock(&q->lock);
	}
	pthread_mutex_unlock(&q->lock);
	return NULL;
}

/* Start one more thread for @q (q->lock held). */
int uring_queue_spawn(struct fs_uring_queue *q)
{
	sigset_t all, old;
	int ret;

	if (q->nthreads >= q->u->depth)
		return -EAGAIN;
	/* the ring threads take no signals: the main thread handles them */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = pthread_create(&q->tids[q->nthreads], NULL, queue_thread, q);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret)
		return -ret;
	q->nthreads++;
	return 0;
}

/*
 * The watchdog: a leader that has been in one handler for one to two
 * URING_WATCH_NS (an fsync on a slow disk, a read of a FIFO) loses the
 * lead to another thread, so the queue's other entries keep serving.
 *
 * It looks every URING_WATCH_NS only while there is something to look
 * at: after URING_WATCH_IDLE looks in a row in which no request began and
 * no leader was in a handler it sleeps (watchdog_sleep()) until a leader
 * enters one, so an idle mount costs no wake-ups at all (it cost 1,000 a
 * second: BENCHMARKS.md, session 16). The idle looks before it sleeps keep
 * it awake under a steady load, where a leader would otherwise pay a
 * futex wake for the first request after each sleep.
 */

/*
 * Look at every queue once: hand on the lead of a queue whose leader has
 * been in the same handler since the last look. Return: whether anything
 * moved -- a leader in a handler, or a request begun since the last look.
 * q->lock is taken only where a hand-on is likely (the leaders take it per
 * request: the look does not pull its line from them every period).
 */
static bool watchdog_look(struct fs_uring *u)
{
	bool moved = false;
	unsigned int i;

	for (i = 0; i < u->nr_queues; i++) {
		struct fs_uring_queue *q = &u->queues[i];
		int busy = CMM_LOAD_SHARED(q->busy);
		uint64_t seq;

		/* seq no older than that busy: the leader bumps seq, then sets busy */
		cmm_smp_rmb();
		seq = CMM_LOAD_SHARED(q->seq);
		if (busy || seq != q->seen_seq)
			moved = true;
		/* busy in the same request as a period ago: 1-2 periods */
		if (busy && seq == q->seen_seq) {
			pthread_mutex_lock(&q->lock);
			/* again under the lock: the handler may have returned since */
			if (q->lead && !q->stop && q->busy && CMM_LOAD_SHARED(q->seq) == seq &&
			    (q->nidle || q->nthreads < u->depth)) {
				q->lead = 0;
				CMM_STORE_SHARED(q->busy, 0);
				q->handoffs++;
				if (q->nidle)
					pthread_cond_signal(&q->follow);
				else if (uring_queue_spawn(q))
					q->handoffs--;	/* no thread: the old leader keeps it */
			}
			pthread_mutex_unlock(&q->lock);
		}
		q->seen_seq = seq;
	}
	return moved;
}

static bool uring_any_busy(const struct fs_uring *u)
{
	unsigned int i;

	for (i = 0; i < u->nr_queues; i++)
		if (CMM_LOAD_SHARED(u->queues[i].busy))
			return true;
	return false;
}

/*
 * Sleep until a leader enters a handler (or the transport stops). The
 * race: the watchdog decides to sleep just as a leader enters a slow
 * handler. It is Dekker's:
 *
 *	leader (lead())			watchdog (here)
 *	store q->busy = 1		store u->wd_asleep = 1
 *	(barrier)			membarrier()
 *	load u->wd_asleep		load every q->busy
 *
 * With a full barrier on both sides, at least one of them sees the
 * other's store: either the leader sees wd_asleep and wakes the watchdog
 * (uring_watchdog_wake(): it clears the word first, so the FUTEX_WAIT
 * below returns at once if it comes later), or the watchdog sees busy
 * and does not sleep -- never both miss, so no leader stays in a handler
 * unwatched. The leader's barrier is per request, the watchdog's once
 * per sleep, so the leader's is only a compiler barrier and the watchdog
 * pays for both: membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) runs a full
 * barrier on every CPU that runs a thread of this process (those that
 * run none passed one in the scheduler), the asymmetric fence of the
 * membarrier(2) man page and of liburcu's memb flavour. Both may see
 * each other (a leader entering its handler between the watchdog's
 * store and its look): then the watchdog stays awake and the leader's
 * FUTEX_WAKE finds no one, the only cost. fs_uring_stop() is the same
 * dance with u->stopping for q->busy, with a full barrier.
 * Where membarrier(2) is refused (u->wd_can_sleep false) it never sleeps
 * and looks every period as before.
 */
static void watchdog_sleep(struct fs_uring *u)
{
	uatomic_set(&u->wd_asleep, 1);
	if (syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0)) {
		uatomic_set(&u->wd_asleep, 0);
		u->wd_can_sleep = false;
		return;
	}
	if (!uring_any_busy(u) && !CMM_LOAD_SHARED(u->stopping))
		while (CMM_LOAD_SHARED(u->wd_asleep) && !CMM_LOAD_SHARED(u->stopping))
			iotap_futex_wait(&u->wd_asleep, 1, 0);
	/* not slept, or stopping: a leader may be clearing it too, one of us does */
	uatomic_cmpxchg(&u->wd_asleep, 1, 0);
}

/*
 * A leader entering a handler, or fs_uring_stop(), saw u->wd_asleep set:
 * wake the watchdog. Whoever clears the word wakes it, once a sleep.
 */
void uring_watchdog_wake(struct fs_uring *u)
{
	if (uatomic_cmpxchg(&u->wd_asleep, 1, 0) == 1)
		iotap_futex_wake(&u->wd_asleep, 1, 0);
}

void *uring_watchdog_thread(void *arg)
{
	/*
	 * Between looks a plain sleep, no condition variable: glibc's timed
	 * wait takes its mutex back marked contended, so it cost a
	 * FUTEX_WAKE per look besides the wait. fs_uring_stop() waits for
	 * the look in progress, at most a period.
	 */
	const struct timespec period = {
		URING_WATCH_NS / 1000000000, URING_WATCH_NS % 1000000000
	};
	struct fs_uring *u = arg;
	unsigned int idle = 0;

	while (!CMM_LOAD_SHARED(u->stopping)) {
		if (watchdog_look(u)) {
			idle = 0;
		} else if (++idle >= URING_WATCH_IDLE && u->wd_can_sleep) {
			watchdog_sleep(u);
			idle = 0;
			/*
			 * Look at once: it notes the seq of the request that
			 * woke us, so a handler busy since is handed on at the
			 * next look, one period on, as when awake.
			 */
			continue;
		}
		clock_nanosleep(CLOCK_MONOTONIC, 0, &period, NULL);
	}
	return NULL;
}

void *fs_uring_read_buf(size_t size)
{
	struct fs_uring_ent *e = cur_ent;

	if (!e || size > e->q->u->payload_sz ||
	    ((const struct fuse_in_header *)e->hdr->in_out)->opcode != FUSE_READ)
		return NULL;
	return e->payload;
}

__thread uint64_t fs_capture_held_ns;
__thread struct iotap_trace_recorder *fs_capture_held_r;

bool fs_uring_nowait(void)
{
	struct fs_uring_ent *e = cur_ent;

	return e && !cur_helper && !e->waits;
}

void fs_uring_handoff(struct iotap_trace_recorder *r, int hold, uint64_t start)
{
	struct fs_uring_ent *e = cur_ent;

	e->handed = true;
	e->hold = hold;
	e->hold_r = r;
	e->start = start;
}

static struct fs_uring_ent *find_ent(struct fs_uring *u, uint64_t unique)
{
	unsigned int i;

	for (i = 0; i < u->nr_queues * u->depth; i++)
		if (CMM_LOAD_SHARED(u->ents[i].unique) == unique)
			return &u->ents[i];
	return NULL;
}

/*
 * Put reply @iov (out header, then the payload) into @e's buffers. @other:
 * from another thread than the one serving @e (a late reply), which has
 * moved on: a ring thread commits it. Return: what writev(2) would have.
 */
static ssize_t ent_reply(struct fs_uring_ent *e, const struct iovec *iov, int count, bool other)
{
	struct fs_uring *u = e->q->u;
	const struct fuse_out_header *oh = iov[0].iov_base;
	struct fuse_out_header *dst;
	size_t len = 0, total;
	int i;

	for (i = 1; i < count; i++)
		len += iov[i].iov_len;
	total = iov[0].iov_len + len;
	dst = (struct fuse_out_header *)e->hdr->in_out;
	if (len > u->payload_sz) {
		fs_log(FS_LOG_ERR, "io_uring: a %zu-byte reply exceeds the %zu-byte buffer",
		       len, u->payload_sz);
		dst->unique = oh->unique;
		dst->error = -EIO;
		dst->len = sizeof(*dst);
		len = 0;
	} else {
		size_t off = 0;

		for (i = 1; i < count; i++) {
			if (iov[i].iov_base != e->payload + off)
				memcpy(e->payload + off, iov[i].iov_base, iov[i].iov_len);
			off += iov[i].iov_len;
		}
		memcpy(dst, oh, sizeof(*dst));
		dst->len = (uint32_t)(sizeof(*dst) + len);
	}
	e->hdr->ring_ent_in_out.payload_sz = (uint32_t)len;
	if (other) {
		/* a late reply: its serving thread has moved on; a ring thread submits it */
		ent_commit(e, false);
		queue_kick(e->q);
	} else
		e->replied = true;
	return (ssize_t)total;
}

bool fs_uring_reply_slow(struct fs_ctx *fs, const struct iovec *iov, int count, ssize_t *ret)
{
	struct fs_uring *u = CMM_LOAD_SHARED(fs->uring);
	const struct fuse_out_header *oh = iov[0].iov_base;
	struct fs_uring_ent *e = cur_ent;
	bool other = false;

	if (count < 1 || iov[0].iov_len < sizeof(*oh) || !oh->unique || (oh->unique & 1))
		return false;	/* notify (unique 0) and interrupt replies (bit 0) */
	if (!e || CMM_LOAD_SHARED(e->unique) != oh->unique) {
		e = find_ent(u, oh->unique);
		if (!e)
			return false;
		other = true;
	}
	*ret = ent_reply(e, iov, count, other);
	return true;
}

/*
 * The reply to ring request @e served without libfuse: @error (0 or
 * -errno) and, without an error, @len bytes of @data.
 */
static void ent_reply_direct(struct fs_uring_ent *e, int error, const void *data, size_t len)
{
	struct fuse_out_header oh;
	struct iovec iov[2];

	/* as libfuse's send_reply(): an error carries no payload, a bad one is ERANGE */
	if (error <= -1000 || error > 0) {
		fs_log(FS_LOG_ERR, "io_uring: bad error value %d in a reply", error);
		error = -ERANGE;
	}
	if (error)
		len = 0;
	memset(&oh, 0, sizeof(oh));
	oh.unique = CMM_LOAD_SHARED(e->unique);
	oh.error = error;
	oh.len = (uint32_t)(sizeof(oh) + len);
	iov[0].iov_base = &oh;
	iov[0].iov_len = sizeof(oh);
	iov[1].iov_base = (void *)data;
	iov[1].iov_len = len;
	ent_reply(e, iov, len ? 2 : 1, e != cur_ent);
}

/* fs_io_read()'s and fs_io_write()'s replies, for a request served by ent_serve_direct() */
static void ring_io_err(struct fs_io_req *r, int err)
{
	ent_reply_direct(r->to, -err, NULL, 0);
}

static void ring_io_data(struct fs_io_req *r, const void *buf, size_t size)
{
	ent_reply_direct(r->to, 0, buf, size);
}

static void ring_io_written(struct fs_io_req *r, size_t count)
{
	struct fuse_write_out wo = { .size = (uint32_t)count };

	ent_reply_direct(r->to, 0, &wo, sizeof(wo));
}

static void ring_io_none(struct fs_io_req *r)
{
	(void)r;	/* handed over: the helper serves it again and replies */
}

static const struct fs_io_reply_ops uring_io_reply = {
	.err = ring_io_err,
	.data = ring_io_data,
	.written = ring_io_written,
	.none = ring_io_none,
};
