/* SPDX-License-Identifier: MIT */
/*
 * report_i.h - what report.c (one pass, one record at a time) shares with
 * report_par.c (the same report from time windows on several threads):
 * the accumulator's state, the compact OP record that crosses between
 * threads, the in-flight heap, and the accumulator's steps that the
 * windowed report runs in trace order.
 */
#ifndef IOTAP_REPORT_I_H
#define IOTAP_REPORT_I_H

#include <stddef.h>
#include <sys/stat.h>

#include "analysis_i.h"

#define INFLIGHT_MAX	(1u << 16)	/* heap entries; beyond, the count saturates */
#define DEFAULT_GAP_NS	1000000000ull

enum { M_AUTO, M_MARKS, M_PLAN };

/*
 * struct report_acc - what iotap_report_build() accumulates while it reads:
 * the block being measured, the phases (automatic, marked or planned), the
 * ops in flight; what it finds goes into @rep.
 */
struct report_acc {
	struct iotap_report *rep;
	const struct iotap_report_opts *o;
	struct iotap_pstats blk;		/* the block being measured */
	uint64_t blk_end;		/* the block closes at this time, ns */
	uint64_t blk_gap;		/* idle time before the block, ns */
	struct autoseg seg;
	int mode;
	int capped;			/* REPORT_PHASES_MAX reached: markers are only counted */
	int cur;			/* marks/plan: open phase index, -1: none */
	unsigned int next_plan;		/* plan: next phase to start */
	struct iotap_sample_pt last_sample;
	uint64_t max_end;		/* latest op end so far, ns */
	uint64_t gap_ns;		/* idle time that ends a block (automatic phases) */
	uint64_t ord;			/* ops so far, FORGET not counted */
	unsigned int run_tiny;		/* the last data op was tiny (1) or not (0), 2: none yet ... */
	uint64_t run_ord;		/* ... and the ord of the first of that run */
	uint64_t *heap;			/* end times of ops maybe in flight */
	unsigned int nheap;
	int err;			/* the accumulator's (the analysing thread's) */
	int perr;			/* the reading side's, with threads */
	int *perr_at;			/* where the reading side says it failed: &perr, or &err alone */
};

/*
 * struct rop - a record as report_pipe hands it to the accumulator: an OP
 * as the accumulator reads it (pre_op, on_op: struct op_in, stat_i.h, with
 * its file and offset), 64 bytes, not the record's 104, as records cross
 * between CPUs; another record by its index.
 */
struct rop {
	struct op_in in;
	uint64_t file;			/* not an OP: its index in the batch's .other */
	uint64_t off;
	uint16_t type;
};

/* The fields of an OP record the accumulators read, back into @r (whose others are zero). */
static inline void rop_fill(struct iotap_trace_rec *r, const struct op_in *in)
{
	r->time_ns = in->t;
	r->dur_ns = in->dur;
	r->length = in->len;
	r->result = in->res;
	r->tid = in->tid;
	r->op = in->op;
	r->pid = in->bits & OPB_PID0 ? 0 : 1;
	r->mode = in->bits & OPB_REG ? S_IFREG : 0;
	r->aux = in->bits & OPB_AUX1 ? 1 : 0;
}

static inline void rop_put(struct rop *d, const struct iotap_trace_rec *rec)
{
	d->type = rec->type;
	d->in = op_in_of(rec);
	d->file = rec->file;
	d->off = rec->offset;
}

/* @r (an OP record whose other fields are zero) from @d. */
static inline void rop_get(struct iotap_trace_rec *r, const struct rop *d)
{
	rop_fill(r, &d->in);
	r->file = d->file;
	r->offset = d->off;
}

/*
 * inflight_at - the ops in flight at @start, the op ending at @end included:
 * the min-heap @h (*@n entries, at most INFLIGHT_MAX) of the end times of the
 * ops before loses those that ended by @start and gains @end.
 */
static inline __attribute__((always_inline)) unsigned int
inflight_at(uint64_t *h, unsigned int *n, uint64_t start, uint64_t end)
{
	uint64_t x;
	unsigned int i, c, m;

	/* one op in flight that ended by @start (ops one after the other): replace it */
	if (*n == 1 && h[0] <= start) {
		h[0] = end;
		return 1;
	}
	/* pop every op that ended by @start */
	while (*n && h[0] <= start) {
		m = --*n;
		x = h[m];
		i = 0;
		while ((c = 2 * i + 1) < m) {
			if (c + 1 < m && h[c + 1] < h[c])
				c++;
			if (h[c] >= x)
				break;
			h[i] = h[c];
			i = c;
		}
		h[i] = x;
	}
	if (*n < INFLIGHT_MAX) {
		i = (*n)++;
		while (i && h[(i - 1) / 2] > end) {
			h[i] = h[(i - 1) / 2];
			i = (i - 1) / 2;
		}
		h[i] = end;
	}
	return *n;
}

/* --- report.c: the accumulator's steps ---------------------------------- */

/* @rep ready to be filled: its header a copy of @hdr. Return: 0, -ENOMEM. */
int report_setup(struct iotap_report *rep, const char *path, const struct iotap_report_opts *o,
		 const struct iotap_trace_header *hdr);
/* @e over @rep (report_setup'ed); report_acc_release() frees it. Return: 0, -ENOMEM. */
int report_acc_init(struct report_acc *e, struct iotap_report *rep, const struct iotap_report_opts *o);
void report_acc_release(struct report_acc *e);
/* Hand the finished block @b (idle @gap ns before it) to whatever makes the phases. */
void report_block_done(struct report_acc *e, const struct iotap_pstats *b, uint64_t gap);
/* The same for e->blk, then clear it (end_block). */
void report_end_block(struct report_acc *e);
/* A PHASE record (on_phase); e->ord and e->last_sample as at the record. */
void report_on_phase(struct report_acc *e, const struct iotap_trace_rec *rec);
/* A SAMPLE record, the time bins left out (on_sample without series_add_sample). */
void report_sample_acc(struct report_acc *e, const struct iotap_trace_rec *rec);
/* A failed writeback WRITE (pre_op). */
void report_wbfail_note(struct iotap_report *rep, const struct iotap_trace_rec *rec);
/* A NAME record kept (keep_names). Return: 0, -ENOMEM. */
int report_name_set(struct iotap_report *rep, uint64_t file, uint64_t parent, const char *name);
/* After the last record: the phase list, the total, the bins (finish). */
int report_finish(struct report_acc *e);

/* --- report_par.c --------------------------------------------------------- */

/*
 * report_par - iotap_report_build() from time windows on @o->threads threads.
 * Return: 0 (@rep built, as the one-thread report to the byte); -EXDEV: the
 * trace or the options need the one pass (@rep released, nothing said);
 * another -errno with @rep->err set.
 */
int report_par(struct iotap_report *rep, const char *path, const struct iotap_report_opts *o);

#endif /* IOTAP_REPORT_I_H */
