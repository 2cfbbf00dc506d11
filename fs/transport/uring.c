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
 *    queue has an entry), uring_depth entries per queue (default 8).
 *  - Each entry is one thread with its own small ring (IORING_SETUP_SQE128:
 *    the command sits in the SQE's 80-byte area), pinned to its queue's
 *    CPU, with a registered header page and a payload buffer of the
 *    connection's largest request. That is the answer to blocking
 *    handlers: a thread serves one request at a time, synchronously, and
 *    the kernel only hands requests to entries that are waiting, so a slow
 *    fsync holds its own entry and nothing else -- the other entries of
 *    the queue keep serving (tests/bench/fs-bench.sh measures it). The
 *    queue depth an application gets is uring_depth per CPU, like libfuse's
 *    worker threads on /dev/fuse.
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
#define URING_DEFAULT_DEPTH	8u
#define URING_MAX_DEPTH		256u
#define URING_SLACK		4096u	/* room before the payload: in header + op header */
#define UD_CMD			1u	/* user_data of the entry's command */
#define UD_STOP			2u	/* user_data of the eventfd poll */

struct fs_uring_ent {
	struct fs_uring *u;
	unsigned int qid;
	struct io_uring ring;
	bool ring_up;
	struct fuse_uring_req_header *hdr;	/* page-aligned, registered with the kernel */
	char *mem;				/* URING_SLACK + payload_sz bytes */
	char *payload;				/* mem + URING_SLACK, registered */
	struct iovec iov[2];			/* what REGISTER hands the kernel */
	uint64_t unique;			/* request being served, 0: none (atomic) */
	bool replied;				/* under lock when not the entry's thread */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	uint64_t served;			/* requests served, for the log */
	pthread_t tid;
	bool started;
};

struct fs_uring {
	struct fs_ctx *fs;
	int fd;					/* /dev/fuse */
	unsigned int nr_queues, depth, nr_ents;
	size_t payload_sz;
	int evfd;				/* written at stop: wakes every ring */
	int stopping;				/* atomic */
	unsigned int failed;			/* atomic: entries that could not start */
	struct fs_uring_ent ents[];
};

static __thread struct fs_uring_ent *cur_ent;

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

static struct io_uring_sqe *ent_sqe(struct fs_uring_ent *e, uint32_t cmd_op, uint64_t commit_id)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&e->ring);
	struct fuse_uring_cmd_req *req;

	if (!sqe)
		return NULL;
	/* a 128-byte SQE: clear it all, the command area included */
	memset(sqe, 0, 128);
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->flags = IOSQE_FIXED_FILE;
	sqe->fd = 0;			/* index of /dev/fuse among the registered files */
	sqe->cmd_op = cmd_op;
	sqe->user_data = UD_CMD;
	req = (struct fuse_uring_cmd_req *)sqe->cmd;
	req->qid = (uint16_t)e->qid;
	req->commit_id = commit_id;
	if (cmd_op == FUSE_IO_URING_CMD_REGISTER) {
		sqe->addr = (uint64_t)(uintptr_t)e->iov;
		sqe->len = 2;
	}
	return sqe;
}

static int ent_ring_init(struct fs_uring_ent *e)
{
	struct io_uring_params p = { .flags = IORING_SETUP_SQE128 };
	struct io_uring_sqe *sqe;
	int ret, fd = e->u->fd;

	ret = io_uring_queue_init_params(4, &e->ring, &p);
	if (ret)
		return ret;
	e->ring_up = true;
	ret = io_uring_register_files(&e->ring, &fd, 1);
	if (ret)
		return ret;
	sqe = io_uring_get_sqe(&e->ring);
	if (!sqe)
		return -EIO;
	io_uring_prep_poll_add(sqe, e->u->evfd, POLLIN);
	sqe->user_data = UD_STOP;
	return ent_sqe(e, FUSE_IO_URING_CMD_REGISTER, 0) ? 0 : -EIO;
}

/* Wait for a reply another thread sends (the handler returned without one). */
static void ent_wait_reply(struct fs_uring_ent *e)
{
	pthread_mutex_lock(&e->lock);
	while (!e->replied && !CMM_LOAD_SHARED(e->u->stopping))
		pthread_cond_wait(&e->cond, &e->lock);
	pthread_mutex_unlock(&e->lock);
}

/* Serve the request in the entry's buffers; the reply is there afterwards. */
static void ent_serve(struct fs_uring_ent *e)
{
	struct fs_uring *u = e->u;
	const struct fuse_in_header *in = (const struct fuse_in_header *)e->hdr->in_out;
	uint32_t psz = e->hdr->ring_ent_in_out.payload_sz;
	struct fuse_buf fb = { 0 };
	size_t opsz;
	char *msg;

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
		return;
	}
	opsz = in->len - sizeof(*in) - psz;
	msg = e->payload - sizeof(*in) - opsz;
	memcpy(msg + sizeof(*in), e->hdr->op_in, opsz);
	memcpy(msg, in, sizeof(*in));
	fs_wire_inspect(u->fs, msg, ((struct fuse_in_header *)msg)->len);

	e->replied = false;
	CMM_STORE_SHARED(e->unique, ((struct fuse_in_header *)msg)->unique);
	cur_ent = e;
	fb.mem = msg;
	fb.size = ((struct fuse_in_header *)msg)->len;
	fuse_session_process_buf(u->fs->se, &fb);
	cur_ent = NULL;
	if (!CMM_LOAD_SHARED(e->replied))
		ent_wait_reply(e);
	CMM_STORE_SHARED(e->unique, 0);
	e->served++;
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

static void *ent_thread(void *arg)
{
	struct fs_uring_ent *e = arg;
	struct fs_uring *u = e->u;
	uint32_t last = FUSE_IO_URING_CMD_REGISTER;
	uint64_t commit_id = 0;
	bool reg = false;
	int ret;

	pin_to_cpu(e->qid);
	ret = ent_ring_init(e);
	if (ret) {
		fs_log(FS_LOG_ERR, "io_uring: queue %u: cannot set up a ring: %s; requests "
		       "stay on /dev/fuse", e->qid, strerror(-ret));
		uatomic_inc(&u->failed);
		return NULL;
	}
	for (;;) {
		struct io_uring_cqe *cqe;
		bool stop = false, again = false;

		ret = io_uring_submit_and_wait(&e->ring, 1);
		if (ret < 0 && ret != -EINTR && ret != -EAGAIN) {
			fs_log(FS_LOG_ERR, "io_uring: queue %u: %s", e->qid, strerror(-ret));
			break;
		}
		while (!io_uring_peek_cqe(&e->ring, &cqe)) {
			uint64_t ud = cqe->user_data;
			int res = cqe->res;

			io_uring_cqe_seen(&e->ring, cqe);
			if (ud == UD_STOP) {
				stop = true;
				continue;
			}
			if (res == -EAGAIN || res == -EINTR) {
				/* REGISTER before the kernel has processed INIT */
				again = true;
				continue;
			}
			if (res < 0) {
				/* -ENOTCONN, -ECONNABORTED: the connection ended */
				if (res != -ENOTCONN && res != -ECONNABORTED && res != -ENODEV &&
				    !CMM_LOAD_SHARED(u->stopping)) {
					fs_log(FS_LOG_ERR, "io_uring: queue %u: %s failed: %s%s",
					       e->qid, last == FUSE_IO_URING_CMD_REGISTER ?
					       "REGISTER" : "COMMIT_AND_FETCH", strerror(-res),
					       reg ? "" : "; requests stay on /dev/fuse");
					if (!reg)
						uatomic_inc(&u->failed);
				}
				stop = true;
				continue;
			}
			reg = true;
			ent_serve(e);
			commit_id = e->hdr->ring_ent_in_out.commit_id;
			last = FUSE_IO_URING_CMD_COMMIT_AND_FETCH;
			if (!ent_sqe(e, last, commit_id)) {
				fs_log(FS_LOG_ERR, "io_uring: queue %u: no SQE", e->qid);
				stop = true;
			}
		}
		if (stop)
			break;
		if (again) {
			struct timespec ts = { 0, 1000000 };

			nanosleep(&ts, NULL);
			if (!ent_sqe(e, last, commit_id))
				break;
		}
	}
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

	for (i = 0; i < u->nr_ents; i++) {
		struct fs_uring_ent *e = &u->ents[i];

		if (e->ring_up)
			io_uring_queue_exit(&e->ring);
		if (e->hdr)
			munmap(e->hdr, 4096);
		if (e->mem)
			munmap(e->mem, URING_SLACK + u->payload_sz);
		pthread_mutex_destroy(&e->lock);
		pthread_cond_destroy(&e->cond);
	}
	if (u->evfd >= 0)
		close(u->evfd);
	free(u);
}

static void uring_start(struct fs_ctx *fs, int fd, size_t payload_sz)
{
	unsigned int nq = possible_cpus(), depth = fs->o.uring_depth ? fs->o.uring_depth :
		URING_DEFAULT_DEPTH, i, started = 0;
	struct fs_uring *u;
	sigset_t all, old;

	if (depth > URING_MAX_DEPTH)
		depth = URING_MAX_DEPTH;
	u = calloc(1, sizeof(*u) + (size_t)nq * depth * sizeof(u->ents[0]));
	if (!u) {
		fs_log(FS_LOG_ERR, "io_uring: out of memory; requests stay on /dev/fuse");
		return;
	}
	u->fs = fs;
	u->fd = fd;
	u->nr_queues = nq;
	u->depth = depth;
	u->nr_ents = nq * depth;
	u->payload_sz = payload_sz;
	u->evfd = eventfd(0, EFD_CLOEXEC);
	for (i = 0; i < u->nr_ents; i++) {
		struct fs_uring_ent *e = &u->ents[i];

		e->u = u;
		e->qid = i / depth;
		pthread_mutex_init(&e->lock, NULL);
		pthread_cond_init(&e->cond, NULL);
		e->hdr = map_buf(4096);
		e->mem = map_buf(URING_SLACK + payload_sz);
		if (!e->hdr || !e->mem || u->evfd < 0) {
			fs_log(FS_LOG_ERR, "io_uring: out of memory; requests stay on /dev/fuse");
			uring_free(u);
			return;
		}
		e->payload = e->mem + URING_SLACK;
		e->iov[0].iov_base = e->hdr;
		e->iov[0].iov_len = sizeof(*e->hdr);
		e->iov[1].iov_base = e->payload;
		e->iov[1].iov_len = payload_sz;
	}
	/* the ring threads take no signals: the main thread handles them */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (i = 0; i < u->nr_ents; i++) {
		struct fs_uring_ent *e = &u->ents[i];

		if (pthread_create(&e->tid, NULL, ent_thread, e) == 0) {
			e->started = true;
			started++;
		}
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (started < u->nr_ents)
		fs_log(FS_LOG_ERR, "io_uring: only %u of %u ring threads started; requests "
		       "stay on /dev/fuse unless every queue registered", started, u->nr_ents);
	fs_log(FS_LOG_INFO, "io_uring: %u queues (one per possible CPU) x %u entries, one "
	       "thread each, payload buffers of %zu bytes", nq, depth, payload_sz);
	CMM_STORE_SHARED(fs->uring, u);
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

static struct fs_uring_ent *find_ent(struct fs_uring *u, uint64_t unique)
{
	unsigned int i;

	for (i = 0; i < u->nr_ents; i++)
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
		pthread_mutex_lock(&e->lock);
		e->replied = true;
		pthread_cond_signal(&e->cond);
		pthread_mutex_unlock(&e->lock);
	} else {
		e->replied = true;
	}
	*ret = (ssize_t)total;
	return true;
}

void fs_uring_stop(struct fs_ctx *fs)
{
	struct fs_uring *u = fs->uring;
	uint64_t one = 1, served = 0, failed;
	unsigned int i;

	if (!u)
		return;
	CMM_STORE_SHARED(u->stopping, 1);
	if (write(u->evfd, &one, sizeof(one)) != sizeof(one))
		fs_log(FS_LOG_WARN, "io_uring: cannot wake the ring threads: %s", strerror(errno));
	for (i = 0; i < u->nr_ents; i++) {
		struct fs_uring_ent *e = &u->ents[i];

		pthread_mutex_lock(&e->lock);
		pthread_cond_broadcast(&e->cond);
		pthread_mutex_unlock(&e->lock);
	}
	for (i = 0; i < u->nr_ents; i++) {
		if (u->ents[i].started)
			pthread_join(u->ents[i].tid, NULL);
		served += u->ents[i].served;
	}
	failed = uatomic_read(&u->failed);
	fs_log(FS_LOG_INFO, "io_uring: %llu requests served over io_uring%s",
	       (unsigned long long)served, failed ? " (some entries failed: see above)" : "");
	CMM_STORE_SHARED(fs->uring, NULL);
	uring_free(u);
}
