// SPDX-License-Identifier: MIT
/*
 * phase_auto.c - phases found in a trace that has no markers
 *
 * The report cuts the op stream into blocks (AUTO_BLOCK_OPS ops or
 * AUTO_BLOCK_NS, whichever comes first) and hands each, measured, to
 * autoseg_block(). A block is compared with the open phase on a signature
 * (struct sig): the share of each op class, the typical request size per
 * direction, the sequential share and the rewrite share. Bookkeeping that
 * comes with everything (flush, release, forget, failed lookups before a
 * create) is left out of the signature. A block that differs clearly
 * (sig_dist() >= 1) opens a new phase; otherwise it joins the open one. An
 * idle gap of at least gap_ns, and twenty times the phase's mean time
 * between ops, opens a new phase too. Blocks with fewer than MIN_JUDGE
 * classified ops are pooled until there are enough to judge.
 *
 * A block is too short to judge a whole phase by, so at the end (and when
 * AUTO_SEG_MAX phases pile up) the look-back pass absorbs phases too small
 * to stand alone into their closer neighbour and merges neighbours whose
 * whole-phase signatures turn out alike. A boundary is found to within one
 * block: 100 ms at most, usually far less; where a run of tiny requests
 * (bonnie++'s per-char tests) meets larger ones, to the op (report.c ends
 * the block there: a block's worth of 8 KiB requests would more than
 * double a 1 MiB per-char phase's rate).
 *
 * Writeback: in --cache mode the application's writes stay in the page
 * cache and reach the daemon later, in bursts the kernel's flusher sends
 * (pid 0). A steady random read/write job then shows up as reads, a burst
 * of writes, reads again... every few hundred ms. A phase made (almost)
 * only of writeback writes between two phases that are alike is such a
 * burst inside one steady phase: the look-back merges the three. A
 * writeback-only phase between two different ones (bonnie's block write,
 * whose writes all come as writeback) stays a phase.
 *
 * Time: a phase lasts from its first op's start to the next phase's first
 * op, or to its last op's end where an idle gap (gap_ns) follows: a
 * program's own time after its last request of a phase (a sync() that
 * sends no request, closing, printing) is in the figure it reports.
 *
 * Closing syncs: a block of nothing but fsyncs (and the flush and release
 * around them) joins the open phase, the one that wrote the data, even
 * when it is too small to judge: it would otherwise be pooled with the
 * next phase's first ops and move a long fsync into the wrong phase.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "phase.h"

#define MIN_JUDGE	32	/* classified ops a block needs to be judged alone */
#define TINY_OPS	48	/* a phase with fewer classified ops cannot stand alone */
#define GAP_RATE_MULT	20	/* a gap must be this many mean op spacings long */
#define WB_ONLY		0.8	/* share of writeback writes that makes a writeback burst */

static const char *const class_names[C_NCLS] = {
	[C_READ] = "read", [C_WRITE] = "write", [C_CREATE] = "create", [C_MKDIR] = "mkdir",
	[C_STAT] = "stat", [C_UNLINK] = "unlink", [C_READDIR] = "readdir",
	[C_RENAME] = "rename", [C_SETATTR] = "setattr", [C_OPEN] = "open",
	[C_FSYNC] = "fsync", [C_XATTR] = "xattr", [C_OTHER] = "other", [C_LOOKUP] = "lookup",
};

/* Class of an op, or -1 for bookkeeping that says nothing about a phase. */
static int op_class(unsigned int op)
{
	switch (op) {
	case IOTAP_OP_READ: return C_READ;
	case IOTAP_OP_WRITE: return C_WRITE;
	case IOTAP_OP_CREATE: case IOTAP_OP_MKNOD: case IOTAP_OP_SYMLINK: case IOTAP_OP_LINK:
	case IOTAP_OP_TMPFILE:
		return C_CREATE;
	case IOTAP_OP_MKDIR: return C_MKDIR;
	/*
	 * A lookup is path resolution, a class of its own: with
	 * --entry-timeout 0 every create, stat and unlink brings one, and
	 * counted as stats they made those phases look alike.
	 */
	case IOTAP_OP_LOOKUP: return C_LOOKUP;
	case IOTAP_OP_GETATTR: case IOTAP_OP_ACCESS: case IOTAP_OP_READLINK:
	case IOTAP_OP_STATFS:
		return C_STAT;
	case IOTAP_OP_UNLINK: case IOTAP_OP_RMDIR: return C_UNLINK;
	case IOTAP_OP_READDIR: case IOTAP_OP_READDIRPLUS: return C_READDIR;
	case IOTAP_OP_RENAME: return C_RENAME;
	case IOTAP_OP_SETATTR: case IOTAP_OP_FALLOCATE: return C_SETATTR;
	case IOTAP_OP_OPEN: return C_OPEN;
	case IOTAP_OP_FSYNC: case IOTAP_OP_FSYNCDIR: return C_FSYNC;
	case IOTAP_OP_SETXATTR: case IOTAP_OP_GETXATTR: case IOTAP_OP_LISTXATTR:
	case IOTAP_OP_REMOVEXATTR:
		return C_XATTR;
	case IOTAP_OP_FORGET: case IOTAP_OP_FLUSH: case IOTAP_OP_RELEASE:
	case IOTAP_OP_RELEASEDIR: case IOTAP_OP_OPENDIR:
		return -1;
	default:
		return C_OTHER;
	}
}

static void class_counts(const struct iotap_pstats *p, double *c, int app_only)
{
	unsigned int op;
	int k;

	memset(c, 0, C_NCLS * sizeof(*c));
	for (op = 0; op < IOTAP_OP_MAX; op++) {
		uint64_t n = p->op_count[op];

		if (!n)
			continue;
		k = op_class(op);
		if (k < 0)
			continue;
		/* a failed lookup is how a create starts, not a stat */
		if (op == IOTAP_OP_LOOKUP)
			n -= p->op_errors[op];
		c[k] += (double)n;
	}
	if (app_only)
		c[C_WRITE] -= (double)p->wb_writes;
}

/* The signature of @p; @app_only leaves the kernel's writeback writes out. */
static void sig_calc(const struct iotap_pstats *p, struct sig *s, int app_only)
{
	double c[C_NCLS], data, wr;
	uint64_t sz;
	int k;

	memset(s, 0, sizeof(*s));
	class_counts(p, c, app_only);
	for (k = 0; k < C_NCLS; k++)
		s->n += c[k];
	if (s->n <= 0)
		return;
	for (k = 0; k < C_NCLS; k++)
		s->cls[k] = c[k] / s->n;
	wr = (double)p->wr.ops - (app_only ? (double)p->wb_writes : 0);
	data = (double)p->rd.ops + wr;
	s->data = data / s->n;
	if (data > 0) {
		s->rshare = (double)p->rd.ops / data;
		s->wshare = wr / data;
		s->seq = (double)(p->data_ops - p->seeks) / (double)(p->data_ops ? p->data_ops : 1);
	}
	sz = pstats_typical_size(p, 0);
	s->rsize = sz ? log2((double)sz) + 1 : 0;
	sz = pstats_typical_size(p, 1);
	s->wsize = sz ? log2((double)sz) + 1 : 0;
	if (p->wr.ops)
		s->rewrite = (double)p->rewrites / (double)p->wr.ops;
}

void sig_of(const struct iotap_pstats *p, struct sig *s)
{
	sig_calc(p, s, 0);
}

static double fmax2(double a, double b)
{
	return a > b ? a : b;
}

double sig_dist(const struct sig *a, const struct sig *b)
{
	double d = 0, tv = 0;
	int k;

	if (a->n <= 0 || b->n <= 0)
		return a->n <= 0 && b->n <= 0 ? 0 : 1;
	for (k = 0; k < C_NCLS; k++)
		tv += fabs(a->cls[k] - b->cls[k]);
	d = tv / 2 / 0.35;		/* a third of the ops changed class */
	/*
	 * What a metadata phase changes: a create or unlink phase whose
	 * every op also brings getattrs and lookups (--attr-timeout 0) is
	 * still not a stat phase
	 */
	d = fmax2(d, fabs(a->cls[C_CREATE] - b->cls[C_CREATE]) / 0.12);
	d = fmax2(d, fabs(a->cls[C_UNLINK] - b->cls[C_UNLINK]) / 0.12);
	if (a->data > 0.2 && b->data > 0.2) {
		/* request size by a factor of three in a direction both do */
		if (a->rshare > 0.2 && b->rshare > 0.2 && a->rsize && b->rsize)
			d = fmax2(d, fabs(a->rsize - b->rsize) / 1.58);
		if (a->wshare > 0.2 && b->wshare > 0.2 && a->wsize && b->wsize)
			d = fmax2(d, fabs(a->wsize - b->wsize) / 1.58);
		d = fmax2(d, fabs(a->seq - b->seq) / 0.5);
		if (a->wshare > 0.2 && b->wshare > 0.2)
			d = fmax2(d, fabs(a->rewrite - b->rewrite) / 0.5);
	}
	return d;
}

void autoseg_init(struct autoseg *a, uint64_t gap_ns)
{
	memset(a, 0, sizeof(*a));
	a->gap_ns = gap_ns;
	pstats_init(&a->pend, "", 0, 0);
}

/* A slab of phase shells (struct autoseg). */
struct seg_slab {
	struct seg_slab *next;
	size_t size;			/* iotap_buf_alloc() size */
	unsigned int n;			/* shells in it */
	struct iotap_pstats shell[];
};

#define SLAB_FIRST	16		/* shells of the first slab: most traces need no more */

/* A shell for a phase (uninitialised), NULL when out of memory. */
static struct iotap_pstats *shell_get(struct autoseg *a)
{
	struct seg_slab *sl = a->slab;
	size_t size;

	if (a->nspare)
		return a->spare[--a->nspare];
	if (!sl || a->slab_used == sl->n) {
		/* the first slab is malloc'ed (small), the next ones are 2 MiB extents */
		size = sizeof(*sl) + (sl ? (2u << 20) - sizeof(*sl) :
				      SLAB_FIRST * sizeof(struct iotap_pstats));
		sl = iotap_buf_alloc(&size);
		if (!sl)
			return NULL;
		sl->size = size;
		sl->n = (unsigned int)((size - sizeof(*sl)) / sizeof(struct iotap_pstats));
		sl->next = a->slab;
		a->slab = sl;
		a->slab_used = 0;
	}
	return &sl->shell[a->slab_used++];
}

/* Give back a shell of shell_get() (its histograms released or handed on). */
static void shell_put(struct autoseg *a, struct iotap_pstats *s)
{
	if (a->nspare == a->spare_cap) {
		unsigned int ncap = a->spare_cap ? a->spare_cap * 2 : 16;
		struct iotap_pstats **ns = realloc(a->spare, ncap * sizeof(*ns));

		if (!ns)
			return;	/* the shell stays in its slab, unused */
		a->spare = ns;
		a->spare_cap = ncap;
	}
	a->spare[a->nspare++] = s;
}

static void slabs_release(struct autoseg *a)
{
	struct seg_slab *sl, *next;

	for (sl = a->slab; sl; sl = next) {
		next = sl->next;
		iotap_buf_free(sl, sl->size);
	}
	free(a->spare);
	a->slab = NULL;
	a->spare = NULL;
	a->slab_used = a->nspare = a->spare_cap = 0;
}

static struct iotap_pstats *new_seg(struct autoseg *a, const struct iotap_pstats *blk, int gap)
{
	struct iotap_pstats *s;

	if (a->n == a->cap) {
		unsigned int ncap = a->cap ? a->cap * 2 : 16;
		struct iotap_pstats **ns = realloc(a->seg, ncap * sizeof(*ns));

		if (!ns) {
			a->err = 1;
			return NULL;
		}
		a->seg = ns;
		a->cap = ncap;
	}
	s = shell_get(a);
	if (!s) {
		a->err = 1;
		return NULL;
	}
	a->seg[a->n++] = s;
	pstats_init(s, "", 0, blk->t_begin);
	s->pool = a->pool;
	s->smp_first = blk->smp_first;
	s->gap_before = gap;
	s->blocks = blk->blocks ? blk->blocks : 1;
	if (pstats_merge(s, blk))
		a->err = 1;
	return s;
}

static double classified(const struct iotap_pstats *p)
{
	struct sig s;

	sig_of(p, &s);
	return s.n;
}

/*
 * Merge seg[i + 1] into seg[i]. The phases are held out of line: only the
 * pointers after it move (a phase is 6 KB; moving the whole array on every
 * merge was a fifth of a report's instructions).
 */
static void merge_next(struct autoseg *a, unsigned int i)
{
	struct iotap_pstats *gone = a->seg[i + 1];

	a->seg[i]->blocks += gone->blocks;
	if (pstats_merge(a->seg[i], gone))
		a->err = 1;
	pstats_release(gone);
	shell_put(a, gone);
	memmove(&a->seg[i + 1], &a->seg[i + 2], (a->n - i - 2) * sizeof(*a->seg));
	a->n--;
}

static double seg_dist(struct autoseg *a, unsigned int i)
{
	struct sig x, y;

	sig_of(a->seg[i], &x);
	sig_of(a->seg[i + 1], &y);
	return sig_dist(&x, &y);
}

/*
 * seg[i] is a writeback burst inside one steady phase: (almost) only
 * writeback writes, right between two phases (no idle gap on either side)
 * whose own requests are alike (writeback left out: a neighbour may
 * already hold bursts merged before).
 */
static int wb_burst(struct autoseg *a, unsigned int i, unsigned int upto)
{
	const struct iotap_pstats *s = a->seg[i];
	double n = classified(s);
	struct sig l, r;

	if (!i || i + 1 >= upto || s->gap_before || a->seg[i + 1]->gap_before)
		return 0;
	if (n <= 0 || (double)s->wb_writes < WB_ONLY * n)
		return 0;
	sig_calc(a->seg[i - 1], &l, 1);
	sig_calc(a->seg[i + 1], &r, 1);
	return l.n > 0 && r.n > 0 && sig_dist(&l, &r) < 1.0;
}

/*
 * The look-back over seg[0 .. upto): absorb tiny phases, then writeback
 * bursts inside a steady phase (see the top of the file), then merge the most
 * alike neighbours while they are alike (or, with @force, until at most
 * @target phases are left, gaps or not). Merging only grows phases, so one
 * absorbing pass is enough; the merging keeps each phase's signature and
 * each neighbour distance, recomputing only around a merge.
 */
static void look_back(struct autoseg *a, unsigned int upto, int force, unsigned int target)
{
	struct sig *sg;
	double *dist, bd;
	unsigned int i, best;

	for (i = 0; i < upto && upto <= a->n;) {
		double ci = classified(a->seg[i]), dl = 1e9, dr = 1e9;
		int left = i > 0 && !a->seg[i]->gap_before;
		int right = i + 1 < upto && !a->seg[i + 1]->gap_before;

		/*
		 * Too few ops to stand alone, or one block that matches neither
		 * side: the turnover between two phases. (Not a share of the
		 * neighbours: a 64 MiB block phase is small next to a million
		 * 1-byte calls, and still a phase.)
		 */
		if ((ci >= TINY_OPS && !(a->seg[i]->blocks <= 1 && left && right)) ||
		    (!left && !right)) {
			i++;
			continue;
		}
		if (left)
			dl = seg_dist(a, i - 1);
		if (right)
			dr = seg_dist(a, i);
		if (left && dl <= dr) {
			merge_next(a, i - 1);
			i--;
		} else {
			a->seg[i + 1]->gap_before = a->seg[i]->gap_before;
			merge_next(a, i);
		}
		upto--;
	}
	/* then writeback bursts: each merges with both its neighbours */
	for (i = 1; i + 1 < upto && upto <= a->n;) {
		if (!wb_burst(a, i, upto)) {
			i++;
			continue;
		}
		merge_next(a, i - 1);
		merge_next(a, i - 1);
		upto -= 2;
	}
	if (upto < 2)
		return;
	sg = malloc(upto * sizeof(*sg));
	dist = malloc(upto * sizeof(*dist));
	if (!sg || !dist) {
		a->err = 1;
		goto out;
	}
	for (i = 0; i < upto; i++)
		sig_of(a->seg[i], &sg[i]);
	for (i = 0; i + 1 < upto; i++)
		dist[i] = sig_dist(&sg[i], &sg[i + 1]);
	for (;;) {
		int forcing = force && a->n > target;

		best = UINT32_MAX;
		bd = 1e18;
		for (i = 0; i + 1 < upto; i++) {
			if (a->seg[i + 1]->gap_before && !forcing)
				continue;
			if (dist[i] < bd) {
				bd = dist[i];
				best = i;
			}
		}
		if (best == UINT32_MAX || !(bd < 1.0 || forcing))
			break;
		merge_next(a, best);
		upto--;
		memmove(&sg[best + 1], &sg[best + 2], (upto - best - 1) * sizeof(*sg));
		memmove(&dist[best + 1], &dist[best + 2],
			(upto > best + 2 ? upto - best - 2 : 0) * sizeof(*dist));
		sig_of(a->seg[best], &sg[best]);
		if (best > 0)
			dist[best - 1] = sig_dist(&sg[best - 1], &sg[best]);
		if (best + 1 < upto)
			dist[best] = sig_dist(&sg[best], &sg[best + 1]);
	}
out:
	free(sg);
	free(dist);
}

/* @sb: @blk's signature (the caller has it already: computed once a block). */
static void judge(struct autoseg *a, const struct iotap_pstats *blk, const struct sig *sb, int gap)
{
	struct iotap_pstats *open = a->n ? a->seg[a->n - 1] : NULL;
	struct sig so;

	if (!open || gap) {
		new_seg(a, blk, gap);
		return;
	}
	sig_of(open, &so);
	if (sb->n >= MIN_JUDGE && sig_dist(sb, &so) >= 1.0) {
		new_seg(a, blk, 0);
		return;
	}
	open->blocks += blk->blocks ? blk->blocks : 1;
	if (pstats_merge(open, blk))
		a->err = 1;
}

/* @sp: the pending blocks' signature, NULL: not computed yet. */
static void flush_pend(struct autoseg *a, const struct sig *sp)
{
	struct sig own;

	if (!a->pend.ops && !a->pend.lost)
		return;
	if (!sp) {
		sig_of(&a->pend, &own);
		sp = &own;
	}
	judge(a, &a->pend, sp, a->pend_gap);
	pstats_clear(&a->pend);
	a->pend_gap = 0;
}

/* @p's ops are of @q's kinds (what judge() would join to it). */
static int like(const struct iotap_pstats *p, const struct iotap_pstats *q)
{
	struct sig sp, sq;

	sig_of(p, &sp);
	sig_of(q, &sq);
	return sig_dist(&sp, &sq) < 1.0;
}

/* Only fsyncs (and bookkeeping: flush, release, forget) in @p. */
static int sync_only(const struct iotap_pstats *p)
{
	double c[C_NCLS], n = 0;
	int k;

	class_counts(p, c, 0);
	for (k = 0; k < C_NCLS; k++)
		n += c[k];
	return n > 0 && c[C_FSYNC] == n;
}

void autoseg_block(struct autoseg *a, const struct iotap_pstats *blk, uint64_t gap)
{
	struct iotap_pstats *open;
	struct sig sb;
	int is_gap = 0;

	if (!blk->ops && !blk->lost)
		return;
	open = a->n ? a->seg[a->n - 1] : NULL;
	if (gap >= a->gap_ns && gap && (a->n || a->pend.ops)) {
		const struct iotap_pstats *ref = a->pend.ops ? &a->pend : open;
		double span = ref ? (double)(ref->last_end - ref->first_op) : 0;
		double spacing = ref && ref->ops > 1 ? span / (double)(ref->ops - 1) : 0;

		if (!ref || (double)gap >= GAP_RATE_MULT * spacing)
			is_gap = 1;
	}
	if (is_gap)
		flush_pend(a, NULL);
	/*
	 * The fsync (and close) that ends a file's writing belongs to the
	 * phase that dirtied the data: bonnie++ times its rewrite with it.
	 * A block of nothing else joins what came before, never what follows;
	 * so does a block too small to judge that ends with an fsync and
	 * looks like the open phase (its last ops and the sync that closes
	 * them), rather than being pooled with the next phase's first ops.
	 */
	if (!is_gap && !a->pend.ops && open &&
	    (sync_only(blk) || (blk->ends_sync && classified(blk) < MIN_JUDGE && like(blk, open)))) {
		open->blocks += blk->blocks ? blk->blocks : 1;
		if (pstats_merge(open, blk))
			a->err = 1;
		return;
	}
	if (!a->pend.ops)
		sig_of(blk, &sb);
	if (a->pend.ops || sb.n < MIN_JUDGE) {
		if (!a->pend.ops) {
			a->pend.t_begin = blk->t_begin;
			a->pend.smp_first = blk->smp_first;
			a->pend_gap = is_gap;
		}
		a->pend.blocks++;
		if (pstats_merge(&a->pend, blk))
			a->err = 1;
		sig_of(&a->pend, &sb);
		if (sb.n >= MIN_JUDGE)
			flush_pend(a, &sb);
	} else {
		judge(a, blk, &sb, is_gap);
	}
	if (a->n >= AUTO_SEG_MAX) {
		look_back(a, a->n - 1, 0, 0);
		if (a->n >= AUTO_SEG_MAX * 3 / 4)
			look_back(a, a->n - 1, 1, AUTO_SEG_MAX / 2);
	}
}

void autoseg_finish(struct autoseg *a)
{
	unsigned int i;

	flush_pend(a, NULL);
	look_back(a, a->n, 0, 0);
	for (i = 0; i < a->n; i++) {
		const struct iotap_pstats *next = i + 1 < a->n ? a->seg[i + 1] : NULL;

		a->seg[i]->index = i;
		a->seg[i]->t_begin = a->seg[i]->first_op;
		a->seg[i]->t_end = a->seg[i]->last_end;
		/*
		 * Up to the next phase's first op, unless an idle gap comes
		 * between: what a program does after its last request of a
		 * phase (bonnie++'s sync() after its creates and deletes,
		 * closing, printing) is in the time it reports for it.
		 */
		if (next && next->first_op > a->seg[i]->t_end &&
		    next->first_op - a->seg[i]->t_end < a->gap_ns)
			a->seg[i]->t_end = next->first_op;
		phase_auto_name(a->seg[i], a->seg[i]->name, sizeof(a->seg[i]->name));
	}
}

struct iotap_pstats *autoseg_take(struct autoseg *a, unsigned int *n)
{
	struct iotap_pstats *s = malloc((a->n ? a->n : 1) * sizeof(*s));
	unsigned int i;

	*n = 0;
	if (!s) {
		a->err = 1;
		return NULL;
	}
	/* the copies own the histograms now: free only the shells */
	for (i = 0; i < a->n; i++)
		s[i] = *a->seg[i];
	*n = a->n;
	free(a->seg);
	a->seg = NULL;
	a->n = a->cap = 0;
	slabs_release(a);
	return s;
}

void autoseg_release(struct autoseg *a)
{
	unsigned int i;

	for (i = 0; i < a->n; i++)
		pstats_release(a->seg[i]);
	free(a->seg);
	slabs_release(a);
	pstats_release(&a->pend);
	memset(a, 0, sizeof(*a));
}

void fmt_req_size(uint64_t size, char *buf, size_t len)
{
	if (size >= (1u << 20) && size % (1u << 20) == 0)
		snprintf(buf, len, "%" PRIu64 "m", size >> 20);
	else if (size >= 1024 && size % 1024 == 0)
		snprintf(buf, len, "%" PRIu64 "k", size >> 10);
	else if (size >= 10240)
		snprintf(buf, len, "%.0fk", (double)size / 1024);
	else
		snprintf(buf, len, "%" PRIu64 "b", size);
}

void phase_auto_name(const struct iotap_pstats *p, char *buf, size_t len)
{
	double c[C_NCLS], total = 0, data, mut;
	int k, best = -1, second = -1;
	size_t l;

	class_counts(p, c, 0);
	/* named, a lookup is a look at a file: a stat */
	c[C_STAT] += c[C_LOOKUP];
	c[C_LOOKUP] = 0;
	for (k = 0; k < C_NCLS; k++)
		total += c[k];
	if (total <= 0) {
		snprintf(buf, len, "%s", p->ops ? "open-close" : "idle");
		return;
	}
	data = c[C_READ] + c[C_WRITE];
	if (data >= 0.25 * total) {
		const struct iotap_dir_stats *d = c[C_WRITE] > c[C_READ] ? &p->wr : &p->rd;
		const char *dir = d == &p->wr ? "write" : "read";
		double seq = p->data_ops ? (double)(p->data_ops - p->seeks) / p->data_ops : 1;
		double dom = d == &p->wr ? c[C_WRITE] : c[C_READ];
		double other = (d == &p->wr ? c[C_READ] : c[C_WRITE]) / (dom > 0 ? dom : 1);
		char sz[32];

		fmt_req_size(dir_typical_size(d), sz, sizeof(sz));
		if (p->wr.ops && p->rd.ops && other >= 0.5 &&
		    (double)p->rewrites >= 0.8 * (double)p->wr.ops) {
			snprintf(buf, len, "rewrite-%s", sz);
		} else {
			snprintf(buf, len, "%s-%s-%s",
				 seq >= 0.8   ? "seq"
				 : seq <= 0.2 ? "rand"
					      : "mixed",
				 dir, sz);
			l = strlen(buf);
			if (other >= 0.03)
				snprintf(buf + l, len - l, "+%.0f%%%c", other * 100,
					 d == &p->wr ? 'r' : 'w');
		}
		l = strlen(buf);
		if (c[C_FSYNC] >= 0.05 * (d == &p->wr ? c[C_WRITE] : c[C_READ]))
			snprintf(buf + l, len - l, "+fsync");
		return;
	}
	/* metadata: name it by what it changes, else by what it looks at */
	mut = c[C_CREATE] + c[C_MKDIR] + c[C_UNLINK] + c[C_RENAME] + c[C_SETATTR];
	for (k = 0; k < C_NCLS; k++) {
		int is_mut = k == C_CREATE || k == C_MKDIR || k == C_UNLINK || k == C_RENAME ||
			     k == C_SETATTR;

		if (k == C_READ || k == C_WRITE || (mut >= 0.2 * total && !is_mut))
			continue;
		if (best < 0 || c[k] > c[best]) {
			second = best;
			best = k;
		} else if (second < 0 || c[k] > c[second]) {
			second = k;
		}
	}
	snprintf(buf, len, "%s", class_names[best]);
	if (second >= 0 && c[second] >= 0.3 * c[best]) {
		l = strlen(buf);
		snprintf(buf + l, len - l, "+%s", class_names[second]);
	}
}
