/* SPDX-License-Identifier: MIT */
/*
 * uring_i.h - FUSE over io_uring: what uring.c (the request loop) and
 * uring_setup.c (start and stop) share
 */
#ifndef IOTAP_FS_URING_I_H
#define IOTAP_FS_URING_I_H

#include <linux/fuse.h>
#include <limits.h>
#include <liburing.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

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
#define URING_WATCH_IDLE	8u		/* looks with no request begun and none
						   in a handler before it sleeps */

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
	/* times served (a request handed to a helper: twice), by the entry's thread: logged at stop */
	uint64_t ndirect;			/* READ/WRITE without libfuse (ent_serve_direct) */
	uint64_t nlibfuse;			/* through fuse_session_process_buf() */
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
	uint64_t seen_seq;			/* the watchdog's last look at seq (its own) */
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
	unsigned int hwake;			/* idle helpers sleep on it (futex) while it
						   holds what they read under lock: bumped
						   under lock for new work and at stop */
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
	bool direct;				/* -o uring_direct: READ/WRITE without libfuse */
	size_t payload_sz;
	int evfd;				/* written at stop: wakes every ring */
	int stopping;				/* atomic */
	unsigned int failed;			/* atomic: entries that could not register */
	unsigned int off_busy;			/* atomic: requests handed to helpers, unanswered */
	pthread_t watchdog;
	bool watchdog_up;
	bool wd_can_sleep;			/* membarrier(2) registered: see watchdog_sleep() */
	/*
	 * 1 while the watchdog sleeps until a leader enters a handler
	 * (futex). Every leader reads it per request; it is written only as
	 * the watchdog falls asleep and is woken, so it has a cache line of
	 * its own: off_busy's writes (per fsync) would otherwise take that
	 * line from every CPU's cache.
	 */
	unsigned int wd_asleep __attribute__((aligned(CAA_CACHE_LINE_SIZE)));
	struct fs_uring_queue *queues __attribute__((aligned(CAA_CACHE_LINE_SIZE)));
	struct fs_uring_ent *ents;		/* nr_queues * depth */
};

/* Stop @q: its threads end, the leader and the helpers once idle (q->lock held). */
static inline void queue_stop_locked(struct fs_uring_queue *q)
{
	q->stop = true;
	q->lead = 0;
	pthread_cond_broadcast(&q->follow);
	CMM_STORE_SHARED(q->hwake, q->hwake + 1);
	iotap_futex_wake(&q->hwake, INT_MAX, 0);
}

/* uring.c: queue @e's command (under q->sq_lock) */
int uring_ent_prep(struct fs_uring_ent *e, uint32_t cmd_op);
/* uring.c: start one more ring thread for @q (q->lock held) */
int uring_queue_spawn(struct fs_uring_queue *q);
/* uring.c: the watchdog thread of @arg, a struct fs_uring */
void *uring_watchdog_thread(void *arg);
/* uring.c: wake the watchdog from its sleep (u->wd_asleep seen set) */
void uring_watchdog_wake(struct fs_uring *u);

#endif /* IOTAP_FS_URING_I_H */
