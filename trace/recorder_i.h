/* SPDX-License-Identifier: MIT */
/*
 * recorder_i.h - what recorder.c (recording, open and close),
 * recorder_writer.c (the writer thread) and recorder_switch.c (closing
 * one file and opening the next) share
 */
#ifndef IOTAP_RECORDER_I_H
#define IOTAP_RECORDER_I_H

#include <pthread.h>
#include <stdint.h>

#include <urcu/wfcqueue.h>

#include "trace_i.h"

/*
 * Writer thread wake-up period. Each wake-up is a context switch on a CPU
 * the application and the FUSE workers need: at 5 ms, 8 KiB random reads
 * through a traced mount ran at 0.61..0.95 of untraced in an A/B run; at
 * 50 ms, 0.78..0.95. The buffer pool (64 MiB) covers far more than 50 ms.
 */
#define RCD_TICK_MS		50
/*
 * zstd level when the caller leaves it at 0. The recorder compresses on
 * the CPUs of the system it traces, at every record's cost: level 1 takes
 * 17-24% fewer instructions than level 3 on capture payloads for 2-5%
 * larger chunks (BENCHMARKS.md, mount-cost, session 5).
 */
#define RCD_ZSTD_LEVEL		1
#define RCD_BUF_MIN		(8u << 10)
#define RCD_BUF_MAX		(16u << 20)
#define RCD_LOST_SLOTS		64		/* LOST records per batch, one per thread */
#define RCD_HOLDS		256		/* ops handed between threads at once */
#define RCD_BUSY		((struct rcd_buf *)1)	/* slot->cur while its owner appends */

/* One buffer of fixed-layout records. */
struct rcd_buf {
	struct cds_wfcq_node node;	/* in r->q once full (or flushed by an exiting thread) */
	struct rcd_buf *next;		/* in r->free */
	uint64_t slot_id;		/* filling slot's id, for ordering a batch */
	uint64_t gen;			/* that slot's buffer sequence number */
	uint32_t len;			/* bytes used in data */
	uint32_t nrec;			/* records in data */
	uint64_t min_time;		/* earliest time_ns in data (owner) */
	uint8_t data[] __attribute__((aligned(8)));
};

/* One recording thread's state for one recorder. */
struct rcd_slot {
	struct rcd_buf *cur;		/* buffer being filled, NULL, or RCD_BUSY (xchg) */
	uint64_t cur_min;		/* oldest time_ns in the owner's buffer (ns), or older */
	uint64_t gen;			/* buffers taken so far (owner) */
	uint64_t inflight;		/* provisional start of the op in flight (ns), 0: none */
	uint64_t last_begin;		/* what iotap_trace_op_begin() last returned (owner) */
	uint64_t recorded;		/* records put in buffers (owner stores) */
	uint64_t lost;			/* records dropped (owner stores) */
	uint64_t lost_reported;		/* of those, already in LOST records (writer) */
	uint64_t id;			/* unique within the recorder, > 0 */
	uint64_t rec_id;		/* the recorder's id */
	uint32_t tid;			/* gettid() of the owner */
	int dead;			/* owner exited, slot waits for the writer to free it (store-release) */
	int detached;			/* recorder closed, slot is its thread's (g_lock) */
	struct iotap_trace_recorder *r;
	struct rcd_slot *next;		/* r->slots (r->slots_lock) */
	struct rcd_slot *tl_next;	/* the owner's tl_slots list */
};

struct iotap_trace_recorder {
	uint64_t id;			/* unique in the process, never reused */
	struct iotap_trace_writer *w;	/* writer thread only, until close */
	size_t buf_bytes;		/* bytes of data per buffer */
	unsigned int nbufs_max;		/* buffers allowed in all */
	unsigned int flush_ms, chunk_ms, sample_ms;

	struct __cds_wfcq_head qhead;	/* full buffers, many enqueuers, the writer dequeues */
	struct cds_wfcq_tail qtail;

	pthread_mutex_t pool_lock;
	struct rcd_buf *free;		/* empty buffers */
	unsigned int nbufs;		/* buffers allocated */

	pthread_mutex_t slots_lock;
	struct rcd_slot *slots;		/* live and dead slots */
	uint64_t next_slot_id;
	uint64_t dead_recorded;		/* counter of freed slots */
	uint64_t lost_total;		/* every record dropped, all threads (uatomic) */
	uint64_t lost_noslot;		/* records of threads whose slot allocation failed */
	uint64_t noslot_reported;	/* of those, already in LOST records (writer thread) */

	pthread_t thread;
	pthread_mutex_t wake_lock;
	pthread_cond_t wake;		/* close only; producers never signal */
	int stop;			/* wake_lock */
	int hold;			/* test hook: the writer thread idles */

	/* writer thread state, published with CMM_STORE_SHARED */
	int err;			/* first write error */
	uint64_t lost_write;		/* records handed over but not written */
	uint64_t lost_write_base;	/* of those, in files closed by a switch */
	uint64_t written;		/* records encoded into files (all of them) */
	uint64_t discarded;		/* records that found no file (stopped) */
	uint64_t file_bytes;		/* bytes in the current file */
	uint64_t files;			/* files opened so far */
	uint64_t floor;			/* records starting before it are discarded */
	uint64_t last_lw;		/* the last promise, also while without a file */

	/* switching files (iotap_trace_recorder_switch), under wake_lock */
	pthread_mutex_t ctl_lock;	/* one switch at a time */
	pthread_cond_t sw_done;
	struct rcd_switch *sw;		/* pending request, NULL: none */
	int zstd_level;
	struct iotap_trace_perm perm;
	iotap_trace_rebind_fn rebind;
	void *rebind_arg;
	uint64_t emit_time;		/* time_ns of rebinding records, 0: not rebinding */
	struct iotap_trace_writer *emit_w;	/* where they go (the new file) */
	int ring;			/* r->w is a ring writer (flight recorder) */

	/* starts of ops handed from one thread to another, 0: free (uatomic) */
	uint64_t holds[RCD_HOLDS];
	unsigned int hold_next;		/* where the next claim starts looking */

	struct rcd_buf **batch;		/* nbufs_max entries, writer thread */
	struct {
		uint32_t tid;
		uint64_t n;
	} lostv[RCD_LOST_SLOTS];	/* LOST records of a batch, writer thread */
	struct smp_state smp;
	int sampling;
	char note[512];			/* NOTE to write first, or "" */
};

/* A request to close the current file and open @path (NULL: none). */
struct rcd_switch {
	int save;			/* write the ring out to @path instead */
	const char *path;
	const struct iotap_trace_header *hdr;
	unsigned int flags;
	int result;			/* -errno of opening @path */
	int done;
};

static inline size_t rcd_align8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/* recorder.c: the buffer pool (any thread) and a slot's end */
void rcd_pool_put(struct iotap_trace_recorder *r, struct rcd_buf *b);
void rcd_slot_free(struct rcd_slot *s);

/* recorder_writer.c: the writer thread and its steps (writer thread only) */
void *rcd_writer_main(void *arg);
void rcd_publish(struct iotap_trace_recorder *r);
void rcd_append_own(struct iotap_trace_recorder *r, const struct iotap_trace_rec *rec);
void rcd_sample(struct iotap_trace_recorder *r);
void rcd_batch(struct iotap_trace_recorder *r, int write_chunk);

/* recorder_switch.c (writer thread) */
void rcd_file_start(struct iotap_trace_recorder *r);
void rcd_close_file(struct iotap_trace_recorder *r);
void rcd_do_switch(struct iotap_trace_recorder *r, struct rcd_switch *sw);
void rcd_do_save(struct iotap_trace_recorder *r, struct rcd_switch *sw);

#endif
