// SPDX-License-Identifier: MIT
/*
 * uring_setup.c - FUSE over io_uring: choosing the transport, starting
 * the rings after INIT, stopping them (uring.c says how they run)
 *
 * Teardown: at abort or unmount the kernel completes every waiting
 * command with -ENOTCONN and the threads end; fs_uring_stop() wakes any
 * that still wait (an eventfd polled by every ring) and joins them.
 * Rings hold a reference on /dev/fuse, so they must close for the
 * connection to end.
 *
 * If a ring cannot be set up at run time (the mount is already up, so it
 * cannot be refused any more), the log says so and the kernel keeps using
 * /dev/fuse: it switches only when every queue has registered.
 */
#include <errno.h>
#include <linux/fuse.h>
#include <linux/membarrier.h>
#include <liburing.h>
#include <poll.h>
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

#include "uring_i.h"

/* --- the transport ---------------------------------------------------------- */

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
		ret = uring_ent_prep(&q->ents[i], FUSE_IO_URING_CMD_REGISTER);
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
	/* aligned: u->wd_asleep has a cache line of its own */
	u = aligned_alloc(CAA_CACHE_LINE_SIZE, (sizeof(*u) + CAA_CACHE_LINE_SIZE - 1) &
			  ~(size_t)(CAA_CACHE_LINE_SIZE - 1));
	if (!u)
		goto enomem;
	memset(u, 0, sizeof(*u));
	u->fs = fs;
	u->fd = fd;
	u->nr_queues = nq;
	u->depth = depth;
	u->spin_ns = (uint64_t)(fs->o.uring_spin_set ? fs->o.uring_spin_us :
				URING_DEFAULT_SPIN_US) * 1000;
	u->direct = fs->uring_direct != 0;
	u->payload_sz = payload_sz;
	u->evfd = eventfd(0, EFD_CLOEXEC);
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
		started += !uring_queue_spawn(&u->queues[i]);
		pthread_mutex_unlock(&u->queues[i].lock);
	}
	/*
	 * The watchdog sleeps while no leader is in a handler only if it can
	 * order its sleep against them with membarrier(2) (uring.c,
	 * watchdog_sleep()); otherwise it looks every period, as it did.
	 */
	u->wd_can_sleep = !syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0);
	if (!u->wd_can_sleep)
		fs_log(FS_LOG_DEBUG, "io_uring: no membarrier(2) (%s): the watchdog looks every "
		       "%llu us, also while idle", strerror(errno),
		       (unsigned long long)(URING_WATCH_NS / 1000));
	{
		sigset_t all, old;

		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		u->watchdog_up = !pthread_create(&u->watchdog, NULL, uring_watchdog_thread, u);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		/* by name in /proc/PID/task/ (its wake-ups: e2e fs-uring-idle) */
		if (u->watchdog_up)
			pthread_setname_np(u->watchdog, "iotap-watchdog");
	}
	if (started < nq || !u->watchdog_up)
		fs_log(FS_LOG_ERR, "io_uring: cannot start every ring thread; requests stay "
		       "on /dev/fuse unless every queue registered");
	fs_log(FS_LOG_INFO, "io_uring: %u queues (one per possible CPU) x %u entries, "
	       "payload buffers of %zu bytes, spin %llu us, READ and WRITE served %s", nq, depth,
	       payload_sz, (unsigned long long)(u->spin_ns / 1000),
	       u->direct ? "without libfuse (uring_direct=1)" : "through libfuse (uring_direct=0)");
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

void fs_uring_stop(struct fs_ctx *fs)
{
	struct fs_uring *u = fs->uring;
	uint64_t one = 1, served = 0, handoffs = 0, offloaded = 0, waited = 0, spins = 0, caught = 0, failed;
	uint64_t direct = 0, libfuse = 0;
	unsigned int i, j, threads = 0;
	bool stuck = false;
	struct timespec dl;

	if (!u)
		return;
	CMM_STORE_SHARED(u->stopping, 1);
	if (write(u->evfd, &one, sizeof(one)) != sizeof(one))
		fs_log(FS_LOG_WARN, "io_uring: cannot wake the ring threads: %s", strerror(errno));
	/*
	 * The watchdog ends at its next look (a period at most), or, asleep
	 * till a leader enters a handler, once woken: stopping, then
	 * wd_asleep, as a leader does busy (uring.c, watchdog_sleep()).
	 */
	cmm_smp_mb();
	if (CMM_LOAD_SHARED(u->wd_asleep))
		uring_watchdog_wake(u);
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
	/* after the joins (a thread left behind in a handler: a racy read, for the log only) */
	for (i = 0; i < u->nr_queues * u->depth; i++) {
		direct += u->ents[i].ndirect;
		libfuse += u->ents[i].nlibfuse;
	}
	failed = uatomic_read(&u->failed);
	fs_log(FS_LOG_INFO, "io_uring: %llu requests served over io_uring by %u threads "
	       "(%llu fsyncs and the like by helpers), %llu handed on from a blocked handler, "
	       "%llu reads and writes that would wait served by helpers; "
	       "%llu waits spun before sleeping (%llu caught a request); "
	       "%llu served without libfuse, %llu through it%s",
	       (unsigned long long)served, threads, (unsigned long long)(offloaded - waited),
	       (unsigned long long)handoffs, (unsigned long long)waited,
	       (unsigned long long)spins, (unsigned long long)caught,
	       (unsigned long long)direct, (unsigned long long)libfuse,
	       failed ? " (some entries failed: see above)" : "");
	CMM_STORE_SHARED(fs->uring, NULL);
	if (stuck)
		fs_log(FS_LOG_WARN, "io_uring: a ring thread is still in a handler 5 s after "
		       "the unmount; left behind");
	else
		uring_free(u);
}
