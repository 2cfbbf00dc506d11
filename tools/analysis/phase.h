/* SPDX-License-Identifier: MIT */
/*
 * phase.h - where phases come from when a trace has no markers
 *
 * phase_auto.c cuts a trace into phases by what it does. The report feeds
 * it blocks (a few hundred ops or 100 ms each, measured as struct iotap_pstats);
 * a block that clearly differs from the open phase in op mix, direction,
 * request size, sequentiality or rewriting starts a new phase, and so does
 * an idle gap. Looking back, tiny phases are absorbed and neighbours that
 * turn out alike are merged. Phases are named by what they are:
 * seq-write-8k, rand-read-8k+10%w, rewrite-8k, create, stat, unlink.
 *
 * Memory: at most AUTO_SEG_MAX phases are kept; beyond, the look-back runs
 * early and the most alike neighbours merge.
 */
#ifndef IOTAP_PHASE_H
#define IOTAP_PHASE_H

#include "stat_i.h"

#define AUTO_SEG_MAX	512
#define AUTO_BLOCK_OPS	256		/* a block closes after this many ops ... */
#define AUTO_BLOCK_NS	100000000ull	/* ... or this much time, ns */
#define AUTO_TINY	16		/* ... or where a run of requests of at most this many bytes */
#define AUTO_KIND_RUN	32		/* ... this long meets larger ones (or the reverse) */

/* Op classes that make a phase what it is. */
enum op_class {
	C_READ, C_WRITE, C_CREATE, C_MKDIR, C_STAT, C_UNLINK, C_READDIR, C_RENAME,
	C_SETATTR, C_OPEN, C_FSYNC, C_XATTR, C_OTHER, C_LOOKUP, C_NCLS
};

/* What a span does, as fractions and log sizes. */
struct sig {
	double n;			/* classified ops */
	double cls[C_NCLS];		/* share of each class */
	double data;			/* share of data ops */
	double rsize, wsize;		/* log2 of the typical request size, 0: none */
	double rshare, wshare;		/* reads, writes among data ops */
	double seq;			/* sequential share of data ops */
	double rewrite;			/* rewrites among writes */
};

void sig_of(const struct iotap_pstats *p, struct sig *s);
/* 0: alike ... >= 1: clearly different. */
double sig_dist(const struct sig *a, const struct sig *b);

struct autoseg {
	struct iotap_pstats **seg;		/* phases so far, each out of line; the last is open */
	unsigned int n, cap;
	/*
	 * Where the phases live: slabs of shells (the first small, then
	 * 2 MiB extents from iotap_buf_alloc(), which huge pages back) and
	 * the shells freed by merges. Up to AUTO_SEG_MAX phases of 5.5 KB
	 * each are held at once: malloc'ed one by one they were ~300 page
	 * faults of a 200 k-record pgbench report, a tenth of its CPU time.
	 */
	struct seg_slab *slab;		/* newest first */
	unsigned int slab_used;		/* shells of the newest slab handed out */
	struct iotap_pstats **spare;		/* freed shells */
	unsigned int nspare, spare_cap;
	struct iotap_hist_pool *pool;	/* the phases' histograms (NULL: calloc); set after init */
	struct iotap_pstats pend;		/* small blocks waiting to be judged together */
	int pend_gap;
	uint64_t gap_ns;		/* idle gap that starts a phase */
	int err;
};

void autoseg_init(struct autoseg *a, uint64_t gap_ns);
/*
 * autoseg_block - judge one block and add it to a phase
 * @blk:  the block (read, not kept)
 * @gap:  idle time before the block's first op, ns
 */
void autoseg_block(struct autoseg *a, const struct iotap_pstats *blk, uint64_t gap);
/* Look back over all phases and name them. */
void autoseg_finish(struct autoseg *a);
/*
 * Hand the phases over as one array (caller frees with pstats_release +
 * free); NULL with *@n 0 and a->err set when memory runs out.
 */
struct iotap_pstats *autoseg_take(struct autoseg *a, unsigned int *n);
void autoseg_release(struct autoseg *a);

/* The name of what @p does ("seq-write-8k", "stat", ...), into @buf. */
void phase_auto_name(const struct iotap_pstats *p, char *buf, size_t len);
/* "8k", "1m", "512b" */
void fmt_req_size(uint64_t size, char *buf, size_t len);

#endif /* IOTAP_PHASE_H */
