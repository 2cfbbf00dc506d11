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
 *    every request given to an entry it committed until it woke
 *    (tests/bench/fsync-beside.sh measured 0.6 s stalls). fsync, fsyncdir,
 *    fallocate and copy_file_range therefore run on helper threads of the
 *    queue (queue_offload(), up to one per entry, on any CPU), which put
 *    the reply in the entry, queue its commit and wake the ring with a
 *    MSG_RING; the ring thread submits it, so entries are only ever
 *    committed by threads that sleep nowhere but in io_uring_enter()
 *    (e2e fs-uring-fsync: reads beside a 4 s fsync on a slow disk). The
 *    hand-off costs 20-35 us per fsync on the project's VMs, the wake-ups
 *    of an idle vCPU for the helper and then the leader (a 4 KiB
 *    write+fdatasync loop on tmpfs, where fsync is free: 16-19 k pairs/s
 *    inline, 11-15 k handed off; BENCHMARKS.md, session 7).
 *  - Reads and writes that would wait for the disk. A ring thread tries
 *    them with RWF_NOWAIT (fs_uring_nowait(), fs_op_read(),
 *    fs_op_write_buf()); a page-cache miss (or, on XFS, a write that must
 *    read a partial page or is throttled) returns EAGAIN, the handler
 *    drops the request without a reply (fs_op_handoff(): the op's start
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
 *    uninterruptibly. The queue depth an application gets is uring_depth
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
 *  - What stays on /dev/fuse (the kernel's choice): FORGET and
 *    BATCH_FORGET, INTERRUPT, notify messages and their replies, and every
 *    request sent before the ring was ready. libfuse's loop keeps reading
 *    the device for them; libfuse finds an interrupted request on its list
 *    whichever way the request came.
 *  - Teardown: at abort or unmount the kernel completes every waiting
 *    command with -ENOTCONN and the threads end; fs_uring_stop() wakes any
 *    that still wait (an eventfd polled by every ring) and joins them.
 *    Rings hold a reference on /dev/fuse, so they must close for the
 *    connection to end.
 *
 * If a ring cannot be set up at run time (the mount is already up, so it
 * cannot be refused any more), the log says so and the kernel keeps using
 * /dev/fuse: it switches only when every queue has registered.
 */
#include <errno.h>
#include <linux/fuse.h>
#include <liburing.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <time.h>
#include <unistd.h>

#include "fs_i.h"

/*
 * The io_uring part of the uapi (protocol 7.42). Debian 12's <linux/fuse.h>
 * is 7.38; these are the kernel's include/uapi/linux/fuse.h definitions,
 * used only where the installed header lacks them.
 */
#if FUSE_KERNEL_MINOR_VERSION < 42
#define FUSE_OVER_IO_URING		(1ULL << 41)
#define FUSE_URING_IN_OUT_HEADER_SZ	128
#define FUSE_URING_OP_IN_OUT_SZ		128

struct fuse_uring_ent_in_out {
	uint64_t flags;
	uint64_t commit_id;		/* to quote in the commit */
	uint32_t payload_sz;		/* bytes of the payload buffer used */
	uint32_t padding;
	uint64_t reserved;
};

struct fuse_uring_req_header {
	char in_out[FUSE_URING_IN_OUT_HEADER_SZ];	/* fuse_in_header / fuse_out_header */
	char op_in[FUSE_URING_OP_IN_OUT_SZ];		/* the op's own header */
	struct fuse_uring_ent_in_out ring_ent_in_out;
};

enum fuse_uring_cmd {
	FUSE_IO_URING_CMD_INVALID = 0,
	FUSE_IO_URING_CMD_REGISTER = 1,
	FUSE_IO_URING_CMD_COMMIT_AND_FETCH = 2,
};

struct fuse_uring_cmd_req {		/* in the SQE's 80-byte command area */
	uint64_t flags;
	uint64_t commit_id;
	uint16_t qid;
	uint8_t padding[6];
};
#endif
_Static_assert(sizeof(struct fuse_uring_req_header) == 288, "fuse_uring_req_header");
_Static_assert(sizeof(struct fuse_uring_cmd_req) <= 80, "fuse_uring_cmd_req");

#define URING_PARAM		"/sys/module/fuse/parameters/enable_uring"
#define URING_DEFAULT_DEPTH	16u
#define URING_DEFAULT_SPIN_US	30u	/* -o uring_spin: see queue_spin() */
#define URING_SPIN_MIN_SCORE	64u
#define URING_SPIN_RAN_NS	8000u	/* a sched_yield() this long ran another thread */
#define URING_MAX_DEPTH		256u
#define URING_SLACK		4096u	/* room before the payload: in header + op header */
#define UD_STOP			1u	/* user_data of the eventfd poll; entries use their address */
#define UD_KICK			2u	/* user_data of a helper's message: a commit is queued */
#ifndef IORING_REGISTER_SEND_MSG_RING
#define IORING_REGISTER_SEND_MSG_RING	31	/* Linux 6.13: MSG_RING without a ring of one's own */
#endif
#define URING_WATCH_NS		1000000ull	/* how often the watchdog looks: a handler
						   busy 1-2 periods hands the ring on */

struct fs_uring_queue;

struct fs_uring_ent {
	struct fs_uring_queue *q;
	struct fuse_uring_req_header *hdr;	/* page-aligned, registered with the kernel */
	char *mem;				/* URING_SLACK + payload_sz bytes */
	char *payload;				/* mem + URING_SLACK, registered */
	struct iovec iov[2];			/* what REGISTER hands the kernel */
	uint64_t unique;			/* request being served, 0: none (atomic) */
	bool replied;				/* the reply is in the buffers */
	bool dead;				/* the kernel will not use it again */
	struct fs_uring_ent *off_next;		/* on the queue's helper list */
	/* a request its handler handed over half-way (fs_uring_handoff) */
	bool handed;				/* for the helper to serve again */
	bool waits;				/* served inline, waiting (no helper at all) */
	int hold;				/* the recorder's hold of its start, -1: none */
	uint64_t start;				/* that start (ns), 0: none */
	struct iotap_trace_recorder *hold_r;
};

/*
 * struct fs_uring_queue - one per possible CPU: a ring, its entries, and
 * the threads that serve it. One thread at a time leads: it waits for
 * completions and serves them inline, so a busy queue serves many
 * requests per wake-up. If it stays in one handler longer than
 * one to two URING_WATCH_NS, the watchdog hands the lead to another thread of the
 * queue (waking an idle one or starting one, up to one per entry) and the
 * old leader, once its handler returns, commits and becomes a follower.
 */
struct fs_uring_queue {
	struct fs_uring *u;
	unsigned int qid;
	struct io_uring ring;
	bool ring_up;
	pthread_mutex_t sq_lock;		/* the SQ: get_sqe, prep, submit */
	pthread_mutex_t lock;			/* what follows */
	pthread_cond_t follow;			/* followers wait here for the lead */
	uint64_t lead;				/* token of the leader, 0: none */
	uint64_t next_token;
	int busy;				/* atomic: the leader is in a handler */
	uint64_t seq;				/* atomic: requests the leaders began */
	uint64_t seen_seq;			/* the watchdog's last look at seq */
	unsigned int nthreads, nidle;
	uint64_t handoffs;			/* leads handed on by the watchdog */
	uint64_t served;
	/* the leader's spin before it sleeps (queue_spin()); leader only */
	unsigned int spin_score;		/* how well spinning pays, 0-256 */
	unsigned int spin_probe;
	uint64_t spins, spin_caught;
	bool stop;
	pthread_t *tids;			/* depth slots */
	struct fs_uring_ent *ents;		/* depth entries */
	/* requests served off the ring threads (fsync): see queue_offload() */
	pthread_cond_t hcond;			/* idle helpers wait here */
	struct fs_uring_ent *off_head, *off_tail;
	unsigned int noff;			/* entries on that list */
	unsigned int nhelpers, nhidle;
	uint64_t offloaded;
	uint64_t waited;			/* of those, reads and writes handed over */
	pthread_t *htids;			/* depth slots */
};

struct fs_uring {
	struct fs_ctx *fs;
	int fd;					/* /dev/fuse */
	unsigned int nr_queues, depth;
	uint64_t spin_ns;			/* -o uring_spin, 0: off */
	size_t payload_sz;
	int evfd;				/* written at stop: wakes every ring */
	int stopping;				/* atomic */
	unsigned int failed;			/* atomic: entries that could not register */
	unsigned int off_busy;			/* atomic: requests handed to helpers, unanswered */
	pthread_t watchdog;
	bool watchdog_up;
	pthread_mutex_t wlock;
	pthread_cond_t wcond;			/* the watchdog sleeps here */
	struct fs_uring_queue *queues;
	struct fs_uring_ent *ents;		/* nr_queues * depth */
};

static __thread struct fs_uring_ent *cur_ent;	/* the request this thread serves */
static __thread bool cur_leader;		/* this thread leads its queue's ring */
static __thread bool cur_helper;		/* this thread serves fsyncs off the ring */

int iotap_fs_transport_parse(const char *s)
{
	if (!s)
		return -1;
	if (!strcmp(s, "auto"))
		return IOTAP_FS_TRANSPORT_AUTO;
	if (!strcmp(s, "dev"))
		return IOTAP_FS_TRANSPORT_DEV;
	if (!strcmp(s, "uring"))
		return IOTAP_FS_TRANSPORT_URING;
	return -1;
}

/* enable_uring: 1 Y, 0 N, -1 the kernel has no such parameter. */
static int uring_param(void)
{
	char c = 0;
	int fd = open(URING_PARAM, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	if (read(fd, &c, 1) != 1)
		c = 0;
	close(fd);
	return c == 'Y' || c == 'y' || c == '1';
}

/* Can this process make a ring as the transport needs it? 0 or -errno. */
static int probe_ring(void)
{
	struct io_uring_params p = { .flags = IORING_SETUP_SQE128 };
	struct io_uring ring;
	int ret = io_uring_queue_init_params(2, &ring, &p);

	if (ret)
		return ret;
	io_uring_queue_exit(&ring);
	return 0;
}

int fs_transport_choose(struct fs_ctx *fs, char *msg, size_t size)
{
	int want = fs->o.transport, param, ret;

	if (want == IOTAP_FS_TRANSPORT_DEV) {
		fs->transport = IOTAP_FS_TRANSPORT_DEV;
		snprintf(fs->transport_why, sizeof(fs->transport_why), "--transport dev");
		return 0;
	}
	param = uring_param();
	ret = param == 1 ? probe_ring() : 0;
	if (want == IOTAP_FS_TRANSPORT_AUTO) {
		fs->transport = param == 1 && !ret ? IOTAP_FS_TRANSPORT_URING : IOTAP_FS_TRANSPORT_DEV;
		if (param < 0)
			snprintf(fs->transport_why, sizeof(fs->transport_why),
				 "auto: this kernel has no FUSE over io_uring (no %s)", URING_PARAM);
		else if (!param)
			snprintf(fs->transport_why, sizeof(fs->transport_why),
				 "auto: %s is N", URING_PARAM);
		else if (ret)
			snprintf(fs->transport_why, sizeof(fs->transport_why),
				 "auto: enable_uring is Y but io_uring is not available: %s",
				 strerror(-ret));
		else
			snprintf(fs->transport_why, sizeof(fs->transport_why),
				 "auto: %s is Y", URING_PARAM);
		return 0;
	}
	if (param < 0) {
		snprintf(msg, size, "cannot mount '%s': --transport uring: this kernel has no "
			 "FUSE over io_uring (no %s; it needs Linux 6.14 or later built with "
			 "CONFIG_FUSE_IO_URING); use --transport dev or auto",
			 fs->o.mountpoint, URING_PARAM);
		return -EOPNOTSUPP;
	}
	if (!param) {
		snprintf(msg, size, "cannot mount '%s': --transport uring: FUSE over io_uring is "
			 "off (%s is N); turn it on as root with 'echo Y > %s' (or 'modprobe fuse "
			 "enable_uring=1' before the module loads), or use --transport auto",
			 fs->o.mountpoint, URING_PARAM, URING_PARAM);
		return -EOPNOTSUPP;
	}
	if (ret) {
		snprintf(msg, size, "cannot mount '%s': --transport uring: cannot create an "
			 "io_uring: %s (is io_uring disabled by the kernel.io_uring_disabled "
			 "sysctl?)", fs->o.mountpoint, strerror(-ret));
		return ret;
	}
	fs->transport = IOTAP_FS_TRANSPORT_URING;
	snprintf(fs->transport_why, sizeof(fs->transport_why), "--transport uring");
	return 0;
}

void fs_uring_note_init(struct fs_ctx *fs, const void *buf, size_t n)
{
	const struct fuse_in_header *in = buf;
	const uint8_t *arg = (const uint8_t *)(in + 1);
	uint32_t major, minor, flags, flags2 = 0;

	if (fs->transport != IOTAP_FS_TRANSPORT_URING ||
	    n < sizeof(*in) + offsetof(struct fuse_init_in, flags) + sizeof(uint32_t))
		return;
	memcpy(&major, arg + offsetof(struct fuse_init_in, major), sizeof(major));
	memcpy(&minor, arg + offsetof(struct fuse_init_in, minor), sizeof(minor));
	memcpy(&flags, arg + offsetof(struct fuse_init_in, flags), sizeof(flags));
	if (major == 7 && minor >= 36 && (flags & FUSE_INIT_EXT) &&
	    n >= sizeof(*in) + offsetof(struct fuse_init_in, flags2) + sizeof(uint32_t))
		memcpy(&flags2, arg + offsetof(struct fuse_init_in, flags2), sizeof(flags2));
	fs->uring_init_flags2 = flags2;
	/* the reply goes out of this thread; others only test for 0 */
	CMM_STORE_SHARED(fs->uring_init_unique, in->unique);
}

/* --- the ring threads ----------------------------------------------------- */

/* Queue @e's command: REGISTER, or COMMIT_AND_FETCH of its request. Under q->sq_lock. */
static int ent_prep(struct fs_uring_ent *e, uint32_t cmd_op)
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
	ret = ent_prep(e, FUSE_IO_URING_CMD_COMMIT_AND_FETCH);
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
	fb.mem = msg;
	fb.size = msg->len;
	fuse_session_process_buf(u->fs->se, &fb);
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
 * from the start held since the first attempt (fs_op_io_begin()), and
 * the hold goes once the op is recorded.
 */
static void ent_serve_handed(struct fs_uring_ent *e)
{
	e->handed = false;
	fs_op_held_r = e->hold_r;
	fs_op_held_ns = e->start;
	ent_serve(e);
	fs_op_held_ns = 0;
	fs_op_held_r = NULL;
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

static void queue_stop_locked(struct fs_uring_queue *q)
{
	q->stop = true;
	q->lead = 0;
	pthread_cond_broadcast(&q->follow);
	pthread_cond_broadcast(&q->hcond);
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
			q->nhidle++;
			pthread_cond_wait(&q->hcond, &q->lock);
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
	pthread_cond_signal(&q->hcond);
	pthread_mutex_unlock(&q->lock);
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
				ent_prep(e, e->hdr->ring_ent_in_out.commit_id ?
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
			/* no clock, no lock: the watchdog sees seq stand still */
			CMM_STORE_SHARED(q->seq, q->seq + 1);
			CMM_STORE_SHARED(q->busy, 1);
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
static int queue_spawn(struct fs_uring_queue *q)
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
 * URING_WATCH_NS
 * (an fsync on a slow disk, a read of a FIFO) loses the lead to another
 * thread, so the queue's other entries keep serving.
 */
static void *watchdog_thread(void *arg)
{
	struct fs_uring *u = arg;
	unsigned int i;

	pthread_mutex_lock(&u->wlock);
	while (!CMM_LOAD_SHARED(u->stopping)) {
		iotap_cond_wait_ns(&u->wcond, &u->wlock, URING_WATCH_NS);
		for (i = 0; i < u->nr_queues; i++) {
			struct fs_uring_queue *q = &u->queues[i];
			uint64_t seq = CMM_LOAD_SHARED(q->seq);

			pthread_mutex_lock(&q->lock);
			/* busy in the same request as a period ago: 1-2 periods */
			if (q->lead && !q->stop && CMM_LOAD_SHARED(q->busy) && seq == q->seen_seq &&
			    (q->nidle || q->nthreads < u->depth)) {
				q->lead = 0;
				CMM_STORE_SHARED(q->busy, 0);
				q->handoffs++;
				if (q->nidle)
					pthread_cond_signal(&q->follow);
				else if (queue_spawn(q))
					q->handoffs--;	/* no thread: the old leader keeps it */
			}
			q->seen_seq = seq;
			pthread_mutex_unlock(&q->lock);
		}
	}
	pthread_mutex_unlock(&u->wlock);
	return NULL;
}

/* --- start and stop ---------------------------------------------------------- */

static unsigned int possible_cpus(void)
{
	char buf[256];
	unsigned int max = 0;
	ssize_t n;
	char *p;
	int fd = open("/sys/devices/system/cpu/possible", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return (unsigned int)get_nprocs_conf();
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return (unsigned int)get_nprocs_conf();
	buf[n] = '\0';
	/* "0-1", "0,2-5": the kernel's num_possible_cpus() is the highest + 1 here */
	for (p = buf; *p;) {
		char *end;
		unsigned long v = strtoul(p, &end, 10);

		if (end == p)
			break;
		if (v + 1 > max)
			max = (unsigned int)v + 1;
		p = *end ? end + 1 : end;
	}
	return max ? max : (unsigned int)get_nprocs_conf();
}

static void *map_buf(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}


static void uring_free(struct fs_uring *u)
{
	unsigned int i;

	for (i = 0; u->queues && i < u->nr_queues; i++) {
		struct fs_uring_queue *q = &u->queues[i];

		if (q->ring_up)
			io_uring_queue_exit(&q->ring);
		pthread_mutex_destroy(&q->sq_lock);
		pthread_mutex_destroy(&q->lock);
		pthread_cond_destroy(&q->follow);
		pthread_cond_destroy(&q->hcond);
		free(q->tids);
		free(q->htids);
	}
	for (i = 0; u->ents && i < u->nr_queues * u->depth; i++) {
		struct fs_uring_ent *e = &u->ents[i];

		if (e->hdr)
			munmap(e->hdr, 4096);
		if (e->mem)
			munmap(e->mem, URING_SLACK + u->payload_sz);
	}
	if (u->evfd >= 0)
		close(u->evfd);
	pthread_mutex_destroy(&u->wlock);
	pthread_cond_destroy(&u->wcond);
	free(u->queues);
	free(u->ents);
	free(u);
}

/* The ring of @q with every entry's REGISTER and the stop poll queued. */
static int queue_ring_init(struct fs_uring_queue *q)
{
	struct fs_uring *u = q->u;
	struct io_uring_params p = { .flags = IORING_SETUP_SQE128 };
	struct io_uring_sqe *sqe;
	unsigned int i;
	int ret, fd = u->fd;

	ret = io_uring_queue_init_params(u->depth + 1, &q->ring, &p);
	if (ret)
		return ret;
	q->ring_up = true;
	ret = io_uring_register_files(&q->ring, &fd, 1);
	if (ret)
		return ret;
	sqe = io_uring_get_sqe(&q->ring);
	if (!sqe)
		return -EIO;
	io_uring_prep_poll_add(sqe, u->evfd, POLLIN);
	sqe->user_data = UD_STOP;
	for (i = 0; i < u->depth; i++) {
		ret = ent_prep(&q->ents[i], FUSE_IO_URING_CMD_REGISTER);
		if (ret)
			return ret;
	}
	return 0;
}

static void uring_start(struct fs_ctx *fs, int fd, size_t payload_sz)
{
	unsigned int nq = possible_cpus(), depth = fs->o.uring_depth ? fs->o.uring_depth :
		URING_DEFAULT_DEPTH, i, started = 0;
	struct fs_uring *u;
	int ret;

	if (depth > URING_MAX_DEPTH)
		depth = URING_MAX_DEPTH;
	u = calloc(1, sizeof(*u));
	if (!u)
		goto enomem;
	u->fs = fs;
	u->fd = fd;
	u->nr_queues = nq;
	u->depth = depth;
	u->spin_ns = (uint64_t)(fs->o.uring_spin_set ? fs->o.uring_spin_us :
				URING_DEFAULT_SPIN_US) * 1000;
	u->payload_sz = payload_sz;
	u->evfd = eventfd(0, EFD_CLOEXEC);
	pthread_mutex_init(&u->wlock, NULL);
	pthread_cond_init(&u->wcond, NULL);
	u->queues = calloc(nq, sizeof(*u->queues));
	u->ents = calloc((size_t)nq * depth, sizeof(*u->ents));
	if (u->evfd < 0 || !u->queues || !u->ents)
		goto enomem_free;
	for (i = 0; i < nq; i++) {
		struct fs_uring_queue *q = &u->queues[i];

		q->u = u;
		q->spin_score = 256;	/* spin until it stops paying */
		q->qid = i;
		q->ents = &u->ents[(size_t)i * depth];
		pthread_mutex_init(&q->sq_lock, NULL);
		pthread_mutex_init(&q->lock, NULL);
		pthread_cond_init(&q->follow, NULL);
		pthread_cond_init(&q->hcond, NULL);
		q->tids = calloc(depth, sizeof(*q->tids));
		q->htids = calloc(depth, sizeof(*q->htids));
		if (!q->tids || !q->htids)
			goto enomem_free;
	}
	for (i = 0; i < nq * depth; i++) {
		struct fs_uring_ent *e = &u->ents[i];

		e->q = &u->queues[i / depth];
		e->hold = -1;
		e->hdr = map_buf(4096);
		e->mem = map_buf(URING_SLACK + payload_sz);
		if (!e->hdr || !e->mem)
			goto enomem_free;
		e->payload = e->mem + URING_SLACK;
		e->iov[0].iov_base = e->hdr;
		e->iov[0].iov_len = sizeof(*e->hdr);
		e->iov[1].iov_base = e->payload;
		e->iov[1].iov_len = payload_sz;
	}
	for (i = 0; i < nq; i++) {
		ret = queue_ring_init(&u->queues[i]);
		if (ret) {
			fs_log(FS_LOG_ERR, "io_uring: queue %u: cannot set up its ring: %s; "
			       "requests stay on /dev/fuse", i, strerror(-ret));
			uring_free(u);
			return;
		}
	}
	/*
	 * Published before any ring thread starts: once every queue has
	 * registered, the kernel sends requests over the rings, and a reply
	 * made while fs->uring was still NULL went to /dev/fuse, which does
	 * not know the request -- lost, its entry never committed, the caller
	 * waiting for good (seen as rare hangs at the first request after a
	 * mount under load: trust-mount and run-dedup in CI's io_uring pass).
	 */
	CMM_STORE_SHARED(fs->uring, u);
	/* one leader per queue to start with; the watchdog adds threads */
	for (i = 0; i < nq; i++) {
		pthread_mutex_lock(&u->queues[i].lock);
		started += !queue_spawn(&u->queues[i]);
		pthread_mutex_unlock(&u->queues[i].lock);
	}
	{
		sigset_t all, old;

		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		u->watchdog_up = !pthread_create(&u->watchdog, NULL, watchdog_thread, u);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	if (started < nq || !u->watchdog_up)
		fs_log(FS_LOG_ERR, "io_uring: cannot start every ring thread; requests stay "
		       "on /dev/fuse unless every queue registered");
	fs_log(FS_LOG_INFO, "io_uring: %u queues (one per possible CPU) x %u entries, "
	       "payload buffers of %zu bytes, spin %llu us", nq, depth, payload_sz,
	       (unsigned long long)(u->spin_ns / 1000));
	return;

enomem_free:
	uring_free(u);
enomem:
	fs_log(FS_LOG_ERR, "io_uring: out of memory; requests stay on /dev/fuse");
}

ssize_t fs_uring_init_reply(struct fs_ctx *fs, int fd, struct iovec *iov, int count)
{
	const struct fuse_out_header *oh = iov[0].iov_base;
	struct fuse_init_out *io;
	size_t payload_sz;
	ssize_t n;
	bool want;

	if (count < 2 || iov[0].iov_len < sizeof(*oh) || oh->unique != fs->uring_init_unique ||
	    iov[1].iov_len < offsetof(struct fuse_init_out, flags2) + sizeof(uint32_t))
		return writev(fd, iov, count);
	CMM_STORE_SHARED(fs->uring_init_unique, 0);
	io = iov[1].iov_base;
	want = !oh->error && (fs->uring_init_flags2 & (FUSE_OVER_IO_URING >> 32));
	if (want) {
		io->flags |= FUSE_INIT_EXT;
		io->flags2 |= (uint32_t)(FUSE_OVER_IO_URING >> 32);
	}
	n = writev(fd, iov, count);
	if (!want) {
		fs_log(FS_LOG_WARN, "io_uring: the kernel did not offer FUSE_OVER_IO_URING in "
		       "INIT (enable_uring turned off since the check?): requests travel over "
		       "/dev/fuse");
		return n;
	}
	if (n < 0)
		return n;
	/* the kernel sizes its ring buffers max(8 KiB, max_write, max_pages pages) */
	payload_sz = io->max_write;
	if ((io->flags & FUSE_MAX_PAGES) && (size_t)io->max_pages * 4096 > payload_sz)
		payload_sz = (size_t)io->max_pages * 4096;
	if (!(io->flags & FUSE_MAX_PAGES) && payload_sz < 32 * 4096)
		payload_sz = 32 * 4096;
	if (payload_sz < 8192)
		payload_sz = 8192;
	payload_sz = (payload_sz + 4095) & ~(size_t)4095;
	uring_start(fs, fd, payload_sz);
	return n;
}


void *fs_uring_read_buf(size_t size)
{
	struct fs_uring_ent *e = cur_ent;

	if (!e || size > e->q->u->payload_sz ||
	    ((const struct fuse_in_header *)e->hdr->in_out)->opcode != FUSE_READ)
		return NULL;
	return e->payload;
}

__thread uint64_t fs_op_held_ns;
__thread struct iotap_trace_recorder *fs_op_held_r;

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

bool fs_uring_reply_slow(struct fs_ctx *fs, const struct iovec *iov, int count, ssize_t *ret)
{
	struct fs_uring *u = CMM_LOAD_SHARED(fs->uring);
	const struct fuse_out_header *oh = iov[0].iov_base;
	struct fuse_out_header *dst;
	struct fs_uring_ent *e = cur_ent;
	bool other = false;
	size_t len = 0, total;
	int i;

	if (count < 1 || iov[0].iov_len < sizeof(*oh) || !oh->unique || (oh->unique & 1))
		return false;	/* notify (unique 0) and interrupt replies (bit 0) */
	if (!e || CMM_LOAD_SHARED(e->unique) != oh->unique) {
		e = find_ent(u, oh->unique);
		if (!e)
			return false;
		other = true;
	}
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
	*ret = (ssize_t)total;
	return true;
}

void fs_uring_stop(struct fs_ctx *fs)
{
	struct fs_uring *u = fs->uring;
	uint64_t one = 1, served = 0, handoffs = 0, offloaded = 0, waited = 0, spins = 0, caught = 0, failed;
	unsigned int i, j, threads = 0;
	bool stuck = false;
	struct timespec dl;

	if (!u)
		return;
	CMM_STORE_SHARED(u->stopping, 1);
	if (write(u->evfd, &one, sizeof(one)) != sizeof(one))
		fs_log(FS_LOG_WARN, "io_uring: cannot wake the ring threads: %s", strerror(errno));
	pthread_mutex_lock(&u->wlock);
	pthread_cond_signal(&u->wcond);
	pthread_mutex_unlock(&u->wlock);
	if (u->watchdog_up)
		pthread_join(u->watchdog, NULL);
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += 5;
	for (i = 0; i < u->nr_queues; i++) {
		struct fs_uring_queue *q = &u->queues[i];

		pthread_mutex_lock(&q->lock);
		queue_stop_locked(q);
		pthread_mutex_unlock(&q->lock);
		/* a handler blocked for good (a FIFO no one writes) is left behind */
		for (j = 0; j < q->nthreads; j++)
			if (pthread_timedjoin_np(q->tids[j], NULL, &dl))
				stuck = true;
		for (j = 0; j < q->nhelpers; j++)
			if (pthread_timedjoin_np(q->htids[j], NULL, &dl))
				stuck = true;
		served += q->served;
		handoffs += q->handoffs;
		offloaded += q->offloaded;
		waited += q->waited;
		spins += q->spins;
		caught += q->spin_caught;
		threads += q->nthreads + q->nhelpers;
	}
	failed = uatomic_read(&u->failed);
	fs_log(FS_LOG_INFO, "io_uring: %llu requests served over io_uring by %u threads "
	       "(%llu fsyncs and the like by helpers), %llu handed on from a blocked handler, "
	       "%llu reads and writes that would wait served by helpers; "
	       "%llu waits spun before sleeping (%llu caught a request)%s",
	       (unsigned long long)served, threads, (unsigned long long)(offloaded - waited),
	       (unsigned long long)handoffs, (unsigned long long)waited,
	       (unsigned long long)spins, (unsigned long long)caught,
	       failed ? " (some entries failed: see above)" : "");
	CMM_STORE_SHARED(fs->uring, NULL);
	if (stuck)
		fs_log(FS_LOG_WARN, "io_uring: a ring thread is still in a handler 5 s after "
		       "the unmount; left behind");
	else
		uring_free(u);
}
