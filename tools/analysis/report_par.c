// SPDX-License-Identifier: MIT
/*
 * report_par.c - the report from time windows, on every thread it is given
 *
 * report.c reads a trace once, record after record, and every figure of a
 * record depends on the ones before it: the seek distance on the file's
 * previous data op, the ops in flight on every op still running, the
 * block it joins on where the block before began. This file cuts the trace
 * into time windows (trace/split.c: windows 0..K-1 one after the other
 * are the sequential reading, record for record) and computes the same
 * report in four steps a window, two of them on any thread and two, short,
 * in window order:
 *
 *   A (any thread)   read the window; keep its ops compact (struct pop) and
 *                    its other records; compute what needs no past: seek
 *                    distances in the window (noting each file's first op and
 *                    first op in a direction, the only ones the past
 *                    changes), ops in flight among its own ops (and the end
 *                    times still running at its end), the ops that may
 *                    follow an idle gap, where runs of tiny requests turn.
 *   S (in order)     with the state the windows before left: correct those
 *                    few seek distances and merge the window's seek map into
 *                    the report's; decide which candidates are gaps and
 *                    tiny-run turns; then where every block starts, by the
 *                    count and time rules (one probe of a start time, or a
 *                    search among the next 256), the gap and tiny rules and
 *                    the markers.
 *   B (any thread)   measure every block that starts in the window (its own
 *                    struct iotap_pstats, its own histogram pool), the ops
 *                    in flight corrected by the end times carried in, and the
 *                    window's time bins (series_init_window()).
 *   M (in order)     hand the blocks to whatever makes the phases
 *                    (report_block_done(): autoseg or markers), in trace
 *                    order with the markers, the samples no block of B took,
 *                    the names and the failed writebacks; the ops of a block
 *                    begun in a window before go into it one by one; the
 *                    bins are appended (series_append()).
 *
 * The result is the one-thread report byte for byte (tests/unit/test_report.c
 * and tests/e2e/report-windows.sh compare them at many window counts and
 * threads). It is used from PAR_MIN_THREADS threads and CPUs; without
 * --threads, on a thread a CPU up to PAR_AUTO_THREADS. Its extra work:
 * 1.07 times the instructions of one pass on report-synth's trace, 1.23
 * on a bonnie++ capture (BENCHMARKS.md, "Session 18"). Where that cannot
 * be promised, report_par() says -EXDEV and the caller reads the trace in
 * one pass: the split's own refusals (damage, broken watermark promises,
 * dense cut calls), LOST records, start times that go back, ops in
 * flight near the heap's cap, many markers, and the
 * options whose state is sequential through and through (--phases-from,
 * the HTML seek map's points, application figures, a gap of 0).
 *
 * Memory: at most threads + 2 windows are held at once, each its ops (56
 * bytes an op), its blocks (those B folds into runs, par_measure(): a
 * scratch block and one a run) and its bins; the report's own state as in
 * one pass; a window reader's batches for each thread.
 */
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "report_i.h"

/*
 * Windows: at least two a thread, at most PAR_WINDOW_RECORDS records each
 * (memory: each held window keeps about 90 bytes an op, its ops and its
 * blocks), at least PAR_MIN_CHUNKS chunks each (each reads one chunk more,
 * the one it shares with the next), of a file of at least PAR_MIN_BYTES.
 * 256 K, not 512 K: with chunks of 128 KiB raw (10,000 to 19,000 records) the
 * reads a window shares cost little, and each held window's ops are fresh
 * memory the first time round, dear on a VM: a 100 M-record report on 2
 * threads took 2.88 s against 3.09 s, system time 0.20 s against 0.47 s
 * (BENCHMARKS.md, "Session 17"; 128 K: 3.03 s). Since the windows are cut
 * by records (split.c), the ops arrays, sized for the largest window, are
 * 15.6 MB there (53 MB when they were cut by bytes; "Session 18").
 */
#define PAR_WINDOW_RECORDS	(256u << 10)
#define PAR_MIN_CHUNKS		4
#define PAR_MIN_BYTES		(1ull << 20)
#define PAR_MIN_THREADS		2		/* --threads and CPUs: fewer read in one pass */
#define PAR_AUTO_THREADS	8		/* no --threads: a CPU each, at most this many (memory) */
#define PAR_KEEP		32		/* huge buffers kept between window readers */
#define PAR_SPARES		64		/* >= the windows held at once (threads + 2) */
#define PAR_BATCH		64		/* records a window hands over a call */
#define PAR_MARKERS_MAX		((REPORT_PHASES_MAX - 4) / 2)	/* more: "(later phases)" may fold */

/*
 * An OP of a window as blocks measure it (pstats_add_op, series_add_op: no
 * file, no offset), with its seek distance and ops in flight: 56 bytes.
 */
struct pop {
	struct op_in in;
	int64_t dist;			/* A: in the window; S: corrected */
	uint32_t inf;			/* A: among the window's ops; B: corrected */
};

#define OTH_WBFAIL	0xffffu		/* an OP: a failed writeback (report_wbfail_note) */

/* A record of a window that is not an OP (or a failed writeback), where it comes. */
struct poth {
	uint32_t pos;			/* ops of the window before it */
	uint16_t type;			/* IOTAP_REC_SAMPLE, _PHASE, _NAME, OTH_WBFAIL */
	uint8_t taken;			/* B: a SAMPLE counted in a block of the window */
	uint64_t ord;			/* ops before it, FORGET not counted (window's) */
	uint64_t parent;		/* NAME: its directory */
	size_t name;			/* PHASE, NAME: offset in .names, SIZE_MAX: none */
	struct iotap_trace_rec rec;	/* SAMPLE whole, the others up to .sample */
};

/* A: an op whose seek distance the windows before may change. */
struct pfix {
	uint32_t i;			/* op index */
	uint32_t first;			/* the file's first data op in the window */
	uint64_t file, off;
	uint64_t prev;			/* !first: where the file's previous op ended */
	unsigned int dir;		/* IOTAP_SEEK_READ, _WRITE */
};

/* A: an op that may follow an idle gap; a data op where tiny requests turn. */
struct pgap {
	uint32_t i, has_lm;
	uint64_t lm;			/* latest end of the window's ops before it */
};

struct ptiny {
	uint32_t i, tiny;
	uint64_t ord;			/* window's ord at it */
};

/* S: a block that starts in the window. */
struct pstart {
	uint32_t i;
	uint64_t gap;			/* idle time before it where that is a gap, else 0 */
};

/* -EXDEV, noting why (the first reason stays) */
#define REFUSE(P, what) ((P)->why = (P)->why ? (P)->why : (what), -EXDEV)

#define VEC(T, name) T *name; size_t n_##name, c_##name

enum { W_NEW, W_READ, W_PLANNED, W_MEASURED };

/*
 * The blocks of a window, and where their histograms live. A set goes
 * from window to window (struct par's spares): its blocks are cleared
 * (pstats_clear, the entries their masks name), not made anew (5.5 KB
 * each), as one pass reuses its one block.
 */
struct pblocks {
	struct iotap_pstats *blk;
	size_t cap, inited;		/* bytes allocated (big_grow); blocks pstats_init'ed (used since: clear first) */
	struct iotap_pstats cont;	/* the ops of a block begun before (for the bins only) */
	int cont_inited;
	struct iotap_hist_pool pool;
};

struct pwin {
	unsigned int k;
	int state;
	/* A */
	VEC(struct pop, ops);		/* c_ops: bytes (big_grow) */
	VEC(struct poth, oth);
	VEC(struct pfix, fix);
	VEC(struct pgap, gap);
	VEC(struct ptiny, tiny);
	VEC(char, names);
	VEC(uint64_t, hend);		/* end times in flight at the window's end */
	struct iotap_seek_map lmap;
	unsigned int maxheap;
	uint64_t nord, lmax;
	/* S */
	VEC(struct pstart, bs);
	VEC(uint64_t, carry);		/* end times in flight from before, ascending */
	uint64_t ord_off, max_end;	/* ops and the latest end before the window */
	struct iotap_sample_pt smp;	/* the last sample before the window */
	int flag_marks;			/* markers end blocks */
	uint32_t fm;			/* ops before it are in automatic mode (first marker; n + 1: none) */
	/* B */
	struct pblocks *bk;		/* its blocks' struct iotap_pstats */
	uint32_t *bref;			/* block j's in bk->blk for M, UINT32_MAX: folded (par_measure) */
	struct iotap_series ser;
	int last_open;			/* the last block is still open at the window's end */
};

struct par {
	struct iotap_report *rep;
	const struct iotap_report_opts *o;
	struct iotap_trace_split *split;
	struct pwin *win;
	unsigned int nw;
	/* the schedule */
	pthread_mutex_t lock;
	pthread_cond_t cv;
	unsigned int nt, next_a, next_s, next_m, held, held_max;
	int s_busy, m_busy, stop, err;
	/* S's state: what the windows before left */
	int open;			/* a block is open ... */
	uint64_t bt0;			/* ... since this time ... */
	uint64_t bops;			/* ... with this many ops */
	uint64_t ord, max_end, t_last;
	int any;			/* an op seen */
	unsigned int run_tiny;
	uint64_t run_ord;
	int marks;			/* a marker turned the phases to markers */
	unsigned int markers;
	struct iotap_sample_pt smp;
	uint64_t *carry;
	size_t ncarry;
	/* M */
	struct report_acc e;
	/* the ops arrays and in-flight heaps of windows merged, for the next to read into */
	pthread_mutex_t spare_lock;
	struct spare { struct pop *ops; size_t cap; } spare[PAR_SPARES];
	uint64_t *heaps[PAR_SPARES];
	struct pblocks *bks[PAR_SPARES];
	unsigned int nspare, nheaps, nbk;
	size_t ops_bytes;		/* every window's ops array: the largest window's, from the headers */
	uint64_t ns[4];		/* CPU ns in A, S, B, M (IOTAP_REPORT_DEBUG) */
	struct iotap_trace_split_reads reads;	/* the windows' chunk reads (IOTAP_REPORT_DEBUG) */
	const char *why;		/* -EXDEV: why one pass reads it (IOTAP_REPORT_DEBUG) */
};

static int vec_grow(void **v, size_t *c, size_t n, size_t size)
{
	size_t nc;
	void *p;

	if (n < *c)
		return 0;
	nc = *c ? *c * 2 : 256;
	p = realloc(*v, nc * size);
	if (!p)
		return -ENOMEM;
	*v = p;
	*c = nc;
	return 0;
}

/*
 * The same for the big arrays (a window's ops, its blocks): in huge-page
 * extents (iotap_buf_alloc), copied when they grow. In 4 KiB pages their
 * first touch was a fifth of the windowed report's time (perf, a bonnie++
 * capture: page faults under the stores of the ops).
 */
static int big_grow(void **v, size_t *bytes, size_t need)
{
	size_t nb = *bytes ? *bytes * 2 : 4u << 20;
	void *p;

	if (need <= *bytes)
		return 0;
	while (nb < need)
		nb *= 2;
	p = iotap_buf_grow(*v, bytes, *bytes, nb);
	if (!p)
		return -ENOMEM;
	*v = p;
	return 0;
}

#define PUSH(w, name) (vec_grow((void **)&(w)->name, &(w)->c_##name, (w)->n_##name, \
				sizeof(*(w)->name)) ? NULL : &(w)->name[(w)->n_##name++])

static int name_add(struct pwin *w, const char *s, size_t *off)
{
	size_t l = strlen(s) + 1;

	while (w->n_names + l > w->c_names)
		if (vec_grow((void **)&w->names, &w->c_names, w->c_names, 1))
			return -ENOMEM;
	*off = w->n_names;
	memcpy(w->names + w->n_names, s, l);
	w->n_names += l;
	return 0;
}

static void bk_free(struct pblocks *bk)
{
	size_t i;

	if (!bk)
		return;
	for (i = 0; i < bk->inited; i++)
		pstats_release(&bk->blk[i]);
	iotap_buf_free(bk->blk, bk->cap);
	if (bk->cont_inited)
		pstats_release(&bk->cont);
	iotap_hist_pool_release(&bk->pool);	/* after every pstats: their histograms live in it */
	free(bk);
}

/* Block @j of @bk, empty, its histograms from @bk's pool. */
static struct iotap_pstats *bk_block(struct pblocks *bk, size_t j)
{
	struct iotap_pstats *b;

	if (big_grow((void **)&bk->blk, &bk->cap, (j + 1) * sizeof(*b)))
		return NULL;
	b = &bk->blk[j];
	if (j < bk->inited) {
		pstats_clear(b);
		return b;
	}
	/* blocks are taken in order: the first not inited is @j */
	pstats_init(b, "", 0, 0);
	b->pool = &bk->pool;
	bk->inited = j + 1;
	return b;
}

static void win_free(struct par *P, struct pwin *w)
{
	/* a window's ops array is most of its memory: the next window reads into it */
	pthread_mutex_lock(&P->spare_lock);
	if (w->ops && P->nspare < PAR_SPARES) {
		P->spare[P->nspare].ops = w->ops;
		P->spare[P->nspare++].cap = w->c_ops;
		w->ops = NULL;
	}
	pthread_mutex_unlock(&P->spare_lock);
	iotap_buf_free(w->ops, w->c_ops);	/* c_ops: its bytes */
	free(w->oth);
	free(w->fix);
	free(w->gap);
	free(w->tiny);
	free(w->names);
	free(w->hend);
	free(w->bs);
	free(w->bref);
	free(w->carry);
	seek_map_release(&w->lmap);
	if (w->bk) {
		pthread_mutex_lock(&P->spare_lock);
		if (P->nbk < PAR_SPARES) {
			P->bks[P->nbk++] = w->bk;
			w->bk = NULL;
		}
		pthread_mutex_unlock(&P->spare_lock);
		bk_free(w->bk);
	}
	series_release(&w->ser);
	memset(w, 0, sizeof(*w));
}

/* --- A: the window alone ------------------------------------------------- */

/* seek_map_update() on the window's map, noting the ops S may correct. */
static int64_t a_seek(struct pwin *w, uint32_t i, uint64_t file, uint64_t off, uint64_t end,
		      unsigned int dir, int *err)
{
	struct iotap_seek_map *m = &w->lmap;
	struct iotap_seek_ent *e = m->last;
	struct pfix *f;

	if (!e || m->last_file != file)
		e = iotap_map_get(&m->map, file);
	if (!e || !(e->dirs & dir)) {
		if (!(f = PUSH(w, fix))) {
			*err = -ENOMEM;
			return 0;
		}
		*f = (struct pfix){ .i = i, .first = !e, .file = file, .off = off,
				    .prev = e ? e->end : 0, .dir = dir };
	}
	return seek_map_update(m, file, off, end, dir);
}

static int a_other(struct pwin *w, const struct iotap_trace_rec *rec, unsigned int type)
{
	struct poth *p = PUSH(w, oth);

	if (!p)
		return -ENOMEM;
	p->pos = (uint32_t)w->n_ops;
	p->type = (uint16_t)type;
	p->taken = 0;
	p->ord = w->nord;
	p->parent = 0;
	p->name = SIZE_MAX;
	/* reader_next_ref's rule: only a SAMPLE carries its sample */
	memcpy(&p->rec, rec, rec->type == IOTAP_REC_SAMPLE ? sizeof(*rec)
	       : offsetof(struct iotap_trace_rec, sample));
	if (type == IOTAP_REC_NAME)
		p->parent = iotap_trace_name_parent(rec);
	if ((type == IOTAP_REC_PHASE || type == IOTAP_REC_NAME) && rec->name)
		return name_add(w, rec->name, &p->name);
	return 0;
}

static void heap_put(struct par *P, uint64_t *heap)
{
	pthread_mutex_lock(&P->spare_lock);
	if (P->nheaps < PAR_SPARES) {
		P->heaps[P->nheaps++] = heap;
		heap = NULL;
	}
	pthread_mutex_unlock(&P->spare_lock);
	free(heap);
}

/*
 * The window's next record, from @rv, refilled PAR_BATCH at a time
 * (iotap_trace_window_next_refs(): one call a batch, not one a record);
 * *@bi and *@nb 0 at first. Return: 1, 0 at the end, -errno.
 */
static inline int win_next(struct iotap_trace_window *tw, const struct iotap_trace_rec **rv,
			   int *bi, int *nb, const struct iotap_trace_rec **rec)
{
	if (*bi == *nb) {
		*bi = 0;
		*nb = iotap_trace_window_next_refs(tw, rv, PAR_BATCH);
		if (*nb <= 0)
			return *nb;
	}
	*rec = rv[(*bi)++];
	return 1;
}

static int par_read(struct par *P, struct pwin *w)
{
	const struct iotap_report_opts *o = P->o;
	struct iotap_trace_window *tw;
	const struct iotap_trace_rec *rec, *rv[PAR_BATCH];
	uint64_t *heap, tprev = 0, lm = 0, nord = 0, gap_ns = o->gap_ns;
	unsigned int nheap = 0, run = 2, maxheap = 0;
	struct pop *ops;
	size_t nops = 0, cap;
	int ret, bi = 0, nb = 0, any = 0, err = 0;

	seek_map_init(&w->lmap);
	pthread_mutex_lock(&P->spare_lock);
	if (P->nspare) {
		w->ops = P->spare[--P->nspare].ops;
		w->c_ops = P->spare[P->nspare].cap;
	}
	heap = P->nheaps ? P->heaps[--P->nheaps] : NULL;
	pthread_mutex_unlock(&P->spare_lock);
	if (!heap && !(heap = malloc(INFLIGHT_MAX * sizeof(*heap))))
		return -ENOMEM;
	/*
	 * One size for all, from the chunk headers: every window reuses the
	 * arrays of those merged (fresh pages cost more than the work on a VM:
	 * BENCHMARKS.md "Session 16"), and none grows by copying.
	 */
	if (w->c_ops < P->ops_bytes) {
		iotap_buf_free(w->ops, w->c_ops);
		w->c_ops = P->ops_bytes;
		if (!(w->ops = iotap_buf_alloc(&w->c_ops))) {
			w->c_ops = 0;
			heap_put(P, heap);
			return -ENOMEM;
		}
	}
	ret = iotap_trace_split_window_open(P->split, w->k, &tw);
	if (ret) {
		heap_put(P, heap);
		return ret;
	}
	/* the loop's state in locals, not loads and stores through @w beside the ops' stores */
	ops = w->ops;
	cap = w->c_ops / sizeof(*ops);
	while (!err && (ret = win_next(tw, rv, &bi, &nb, &rec)) > 0) {
		if (__builtin_expect(rec->type == IOTAP_REC_OP, 1)) {
			uint64_t t = rec->time_ns, end = t + rec->dur_ns;
			unsigned int op = rec->op;
			int64_t res = rec->result;
			uint32_t i = (uint32_t)nops;
			struct pop *d;

			if (__builtin_expect(nops >= cap, 0)) {
				/* more than the headers said: grow, copying */
				if (nops >= UINT32_MAX - 1 ||
				    big_grow((void **)&w->ops, &w->c_ops, (nops + 1) * sizeof(*d))) {
					err = -ENOMEM;
					break;
				}
				ops = w->ops;
				cap = w->c_ops / sizeof(*ops);
			}
			d = &ops[nops++];
			if (any && t < tprev) {
				/* in-flight counts and the time rule need start times in order */
				err = REFUSE(P, "a start time goes back");
				break;
			}
			d->in = op_in_of(rec);
			d->dist = 0;
			if ((op == IOTAP_OP_READ || op == IOTAP_OP_WRITE) && res >= 0) {
				uint64_t off = rec->offset, len = res > 0 ? (uint64_t)res : rec->length;
				struct ptiny *tn;
				unsigned int tiny = rec->length <= AUTO_TINY;

				d->dist = a_seek(w, i, rec->file, off, off + len, op == IOTAP_OP_WRITE ?
						 IOTAP_SEEK_WRITE : IOTAP_SEEK_READ, &err);
				if (tiny != run) {
					if (!(tn = PUSH(w, tiny)))
						err = -ENOMEM;
					else
						*tn = (struct ptiny){ .i = i, .tiny = tiny, .ord = nord };
					run = tiny;
				}
			} else if (__builtin_expect(res < 0, 0) && op == IOTAP_OP_WRITE && rec->aux == 1) {
				w->n_ops = nops;
				w->nord = nord;
				if (a_other(w, rec, OTH_WBFAIL))
					err = -ENOMEM;
			}
			d->inf = inflight_at(heap, &nheap, t, end);
			if (nheap > maxheap)
				maxheap = nheap;
			if (!any || (t > lm && t - lm >= gap_ns)) {
				struct pgap *g = PUSH(w, gap);

				if (!g)
					err = -ENOMEM;
				else
					*g = (struct pgap){ .i = i, .has_lm = (uint32_t)any, .lm = lm };
			}
			if (end > lm)
				lm = end;
			any = 1;
			tprev = t;
			if (op != IOTAP_OP_FORGET)
				nord++;
			continue;
		}
		w->n_ops = nops;	/* where the record comes (a_other) */
		w->nord = nord;
		switch (rec->type) {
		case IOTAP_REC_SAMPLE:
		case IOTAP_REC_PHASE:
			err = a_other(w, rec, rec->type);
			break;
		case IOTAP_REC_NAME:
			if (o->keep_names)
				err = a_other(w, rec, rec->type);
			break;
		case IOTAP_REC_LOST:
			/* counted into whatever block is open, ops or none */
			err = REFUSE(P, "LOST records");
			break;
		}
	}
	iotap_trace_window_close(tw);
	w->n_ops = nops;
	w->nord = nord;
	w->maxheap = maxheap;
	if (!err && ret < 0)
		err = ret != -EXDEV ? ret : REFUSE(P, "a window found damage or a broken promise");
	w->lmax = lm;
	if (!err && nheap) {
		w->hend = malloc(nheap * sizeof(*w->hend));
		if (!w->hend)
			err = -ENOMEM;
		else
			memcpy(w->hend, heap, nheap * sizeof(*heap));
		w->n_hend = nheap;
	}
	heap_put(P, heap);
	return err;
}

/* --- S: in window order --------------------------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* First index in [lo, hi) whose op starts at @t or later. */
static uint32_t first_at(const struct pwin *w, uint32_t lo, uint32_t hi, uint64_t t)
{
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (w->ops[mid].in.t < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The seek distances the windows before change, and the window's files into the report's map. */
static int plan_seek(struct par *P, struct pwin *w)
{
	struct iotap_seek_map *g = &P->rep->files;
	size_t i;

	for (i = 0; i < w->n_fix; i++) {
		const struct pfix *f = &w->fix[i];
		const struct iotap_seek_ent *ge = iotap_map_get(&g->map, f->file);

		if (ge && (ge->dirs & f->dir))
			w->ops[f->i].dist = (int64_t)(f->off - (f->first ? ge->end : f->prev));
	}
	/* in the order the files first came, as one pass inserts them */
	for (i = 0; i < w->n_fix; i++) {
		const struct pfix *f = &w->fix[i];
		uint64_t file = f->file;
		const struct iotap_seek_ent *le;
		struct iotap_seek_ent *ge;
		int ret;

		if (!f->first)
			continue;
		le = iotap_map_get(&w->lmap.map, file);
		ret = iotap_map_put(&g->map, file, (void **)&ge);
		if (ret < 0)
			return ret;
		if (!ret) {
			*ge = *le;
		} else {
			ge->end = le->end;
			ge->count += le->count;
			ge->dirs |= le->dirs;
		}
	}
	/* the map's cache points into a table that may have moved */
	g->last = NULL;
	memset(g->cache, 0, sizeof(g->cache));
	return 0;
}

/* The end times still in flight after the window: the carry into the next. */
static int plan_carry(struct par *P, struct pwin *w)
{
	uint64_t tl = w->n_ops ? w->ops[w->n_ops - 1].in.t : 0, *nc;
	size_t a = 0, b = 0, n = 0;

	if (!w->n_ops)
		return 0;	/* the carry goes on as it is */
	if (P->ncarry + w->maxheap >= INFLIGHT_MAX)
		/* one pass's heap would have saturated: its counts are its own */
		return REFUSE(P, "ops in flight near the heap's cap");
	qsort(w->hend, w->n_hend, sizeof(*w->hend), cmp_u64);
	nc = malloc((P->ncarry + w->n_hend + 1) * sizeof(*nc));
	if (!nc)
		return -ENOMEM;
	while (a < P->ncarry && P->carry[a] <= tl)
		a++;
	while (b < w->n_hend && w->hend[b] <= tl)
		b++;
	while (a < P->ncarry || b < w->n_hend) {
		if (b == w->n_hend || (a < P->ncarry && P->carry[a] <= w->hend[b]))
			nc[n++] = P->carry[a++];
		else
			nc[n++] = w->hend[b++];
	}
	/* the window's copy of the carry in stays with it (B reads it) */
	w->carry = P->carry;
	w->n_carry = P->ncarry;
	P->carry = nc;
	P->ncarry = n;
	return 0;
}

static int par_plan(struct par *P, struct pwin *w)
{
	const struct iotap_report_opts *o = P->o;
	uint32_t n = (uint32_t)w->n_ops, p = 0, fm = n + 1;
	uint32_t *brk = NULL, *mpos = NULL;
	uint64_t *bgap = NULL;
	size_t nb = 0, nm = 0, bi = 0, mi = 0, gi = 0, ti = 0, i;
	int ret;

	if (n && P->any && w->ops[0].in.t < P->t_last)
		return REFUSE(P, "a start time goes back");
	w->ord_off = P->ord;
	w->max_end = P->max_end;
	w->smp = P->smp;
	w->flag_marks = !o->auto_phases;
	ret = plan_seek(P, w);
	if (!ret)
		ret = plan_carry(P, w);
	if (ret)
		return ret;
	/* markers: which end blocks, where the first turns the phases to markers */
	for (i = 0; i < w->n_oth; i++) {
		if (w->oth[i].type != IOTAP_REC_PHASE)
			continue;
		if (!w->flag_marks)
			continue;	/* --auto-phases: markers are only counted */
		if (++P->markers > PAR_MARKERS_MAX)
			return REFUSE(P, "too many markers");
		if (nm == 0 && !(mpos = malloc(w->n_oth * sizeof(*mpos))))
			return -ENOMEM;
		mpos[nm++] = w->oth[i].pos;
		if (!P->marks) {
			P->marks = 1;
			fm = w->oth[i].pos;
		}
	}
	if (P->marks && fm == n + 1)
		fm = 0;	/* a window before turned them */
	w->fm = fm;
	/* gap and tiny-run turns, in automatic mode (ops before the first marker) */
	brk = malloc((w->n_gap + w->n_tiny + 1) * sizeof(*brk));
	bgap = malloc((w->n_gap + w->n_tiny + 1) * sizeof(*bgap));
	ret = -ENOMEM;
	if (!brk || !bgap)
		goto out;
	while (gi < w->n_gap || ti < w->n_tiny) {
		uint32_t at = UINT32_MAX, isb = 0;
		uint64_t gv = 0;

		if (gi < w->n_gap)
			at = w->gap[gi].i;
		if (ti < w->n_tiny && w->tiny[ti].i < at)
			at = w->tiny[ti].i;
		if (gi < w->n_gap && w->gap[gi].i == at) {
			const struct pgap *g = &w->gap[gi++];
			uint64_t m = g->has_lm && g->lm > P->max_end ? g->lm : P->max_end;
			uint64_t t = w->ops[at].in.t;

			if (m && t > m && t - m >= o->gap_ns) {
				isb = 1;
				gv = t - m;
			}
		}
		if (ti < w->n_tiny && w->tiny[ti].i == at) {
			const struct ptiny *tn = &w->tiny[ti++];
			uint64_t ord = w->ord_off + tn->ord;

			if (tn->tiny != P->run_tiny) {
				if (P->run_tiny < 2 && ord - P->run_ord >= AUTO_KIND_RUN)
					isb = 1;
				P->run_tiny = tn->tiny;
				P->run_ord = ord;
			}
		}
		if (isb && at < fm) {
			brk[nb] = at;
			bgap[nb++] = gv;
		}
	}
	/* the blocks: where each starts */
	for (;;) {
		struct pstart *s;

		while (mi < nm && mpos[mi] <= p) {
			P->open = 0;
			mi++;
		}
		if (p >= n)
			break;
		if (P->open) {
			uint64_t q = p + (AUTO_BLOCK_OPS - P->bops);

			/*
			 * the time rule, where it comes before the count rule: one
			 * probe where it does not (dense ops), else a search near @p;
			 * none where the block is full already (q == p: a block
			 * carried in with AUTO_BLOCK_OPS ops ends before op 0)
			 */
			if (q > p && (q > n || w->ops[q - 1].in.t >= P->bt0 + AUTO_BLOCK_NS))
				q = first_at(w, p, (uint32_t)(q < n ? q : n), P->bt0 + AUTO_BLOCK_NS);
			while (bi < nb && brk[bi] < p)
				bi++;
			if (bi < nb && brk[bi] < q)
				q = brk[bi];
			if (mi < nm && mpos[mi] < q)
				q = mpos[mi];
			if (q > n)
				q = n;
			P->bops += q - p;
			p = (uint32_t)q;
			if (p >= n || (mi < nm && mpos[mi] == p))
				continue;
		}
		while (bi < nb && brk[bi] < p)
			bi++;
		if (!(s = PUSH(w, bs)))
			goto out;
		s->i = p;
		s->gap = bi < nb && brk[bi] == p ? bgap[bi] : 0;
		P->open = 1;
		P->bt0 = w->ops[p].in.t;
		P->bops = 1;
		p++;
	}
	/* what the next window starts from */
	if (n) {
		P->t_last = w->ops[n - 1].in.t;
		P->any = 1;
	}
	P->ord += w->nord;
	if (w->lmax > P->max_end)
		P->max_end = w->lmax;
	for (i = w->n_oth; i-- > 0;)
		if (w->oth[i].type == IOTAP_REC_SAMPLE) {
			P->smp.valid = 1;
			P->smp.t_ns = w->oth[i].rec.time_ns;
			P->smp.s = w->oth[i].rec.sample;
			break;
		}
	ret = 0;
out:
	free(brk);
	free(bgap);
	free(mpos);
	return ret;
}

/* --- B: the window's blocks and bins ------------------------------------- */

/*
 * Blocks that M would merge one by one into the same phase -- after the
 * first marker, with no marker between them, not the window's last block
 * if it goes on in the next -- are folded here instead: each measured in
 * one scratch block while it runs, then merged into the run's own block,
 * which M merges once (pstats_merge() of blocks that follow one another
 * adds up the same either way). M's serial work and the window's block
 * memory then grow with its markers, not with its ops.
 */
struct pfold {
	struct pblocks *bk;
	uint32_t nslot;			/* bk->blk in use */
	struct iotap_pstats *scratch;	/* the folding block being measured */
	long run;			/* the open run's slot, -1: none */
	uint32_t run_last;		/* the last block folded into it */
};

/* The folding block measured in the scratch block ended: into the run. */
static int fold_end(struct pfold *f)
{
	struct iotap_pstats *r;

	if (f->run < 0) {
		if (!bk_block(f->bk, f->nslot))
			return -ENOMEM;
		f->run = f->nslot++;
	}
	r = &f->bk->blk[f->run];
	if (pstats_merge(r, f->scratch))
		return -ENOMEM;
	pstats_clear(f->scratch);
	return 0;
}

/* The run ends: M merges it where it merged the run's last block. */
static void fold_close(struct pfold *f, uint32_t *bref)
{
	if (f->run >= 0)
		bref[f->run_last] = (uint32_t)f->run;
	f->run = -1;
}

static int par_measure(struct par *P, struct pwin *w)
{
	struct iotap_pstats *cur = NULL;
	struct iotap_sample_pt smp = w->smp;
	size_t oi = 0, bj = 0, cj = 0, ncarry = w->n_carry, nslots, i;
	const uint64_t *carry = w->carry;
	struct pop *ops = w->ops;
	uint64_t ord = w->ord_off;
	uint32_t p, n = (uint32_t)w->n_ops, opos, bpos, last_phase = 0;
	struct pfold f = { .run = -1 };
	size_t nphase = 0;		/* markers that end blocks here: a run ends at each */
	int cur_fold = 0, ret;

	pthread_mutex_lock(&P->spare_lock);
	w->bk = P->nbk ? P->bks[--P->nbk] : NULL;
	pthread_mutex_unlock(&P->spare_lock);
	if (!w->bk) {
		if (!(w->bk = calloc(1, sizeof(*w->bk))))
			return -ENOMEM;
		iotap_hist_pool_init(&w->bk->pool);
	}
	f.bk = w->bk;
	if (!(w->bref = malloc((w->n_bs + 1) * sizeof(*w->bref))))
		return -ENOMEM;
	/* a folding window's last block folds only where a marker ends it */
	for (i = 0; w->flag_marks && i < w->n_oth; i++)
		if (w->oth[i].type == IOTAP_REC_PHASE) {
			nphase++;
			last_phase = w->oth[i].pos;
		}
	/*
	 * Room for every block at once (blocks, runs and the scratch: at most
	 * the blocks, the markers and two), and a quarter more for the next
	 * windows, so that no pointer into it moves: growing one at a time
	 * (doubling) copied them all, twice or more, and left arrays twice the
	 * size needed.
	 */
	nslots = w->n_bs + nphase + 2;
	if (nslots * sizeof(*w->bk->blk) > w->bk->cap) {
		size_t want = nslots * sizeof(*w->bk->blk) / 4 * 5;
		void *q = iotap_buf_grow(w->bk->blk, &w->bk->cap,
					 w->bk->inited * sizeof(*w->bk->blk), want);

		if (!q)
			return -ENOMEM;
		w->bk->blk = q;
	}
	if (w->bk->cont_inited) {
		pstats_clear(&w->bk->cont);
	} else {
		pstats_init(&w->bk->cont, "", 0, 0);
		w->bk->cont.pool = &w->bk->pool;
		w->bk->cont_inited = 1;
	}
	series_init_window(&w->ser, &P->rep->series, w->max_end);
	if (!w->n_bs || w->bs[0].i > 0 || !w->n_ops) {
		/* the ops (or none) of a block begun before: counted for the bins alone */
		cur = &w->bk->cont;
		series_track(&w->ser, cur);
	}
	/*
	 * The ops in flight from before: they end in time order, so only the
	 * ops before the last of them ends need the count corrected.
	 */
	for (p = 0; p < n && cj < ncarry; p++) {
		while (cj < ncarry && carry[cj] <= ops[p].in.t)
			cj++;
		ops[p].inf += (uint32_t)(ncarry - cj);
	}
	/* where the next other record and the next block come: locals, not loads through @w */
	opos = w->n_oth ? w->oth[0].pos : UINT32_MAX;
	bpos = w->n_bs ? w->bs[0].i : UINT32_MAX;
	for (p = 0;;) {
		uint32_t stop;

		/* the other records before op @p */
		for (; __builtin_expect(opos <= p, 0); opos = ++oi < w->n_oth ? w->oth[oi].pos : UINT32_MAX) {
			struct poth *o = &w->oth[oi];

			if (o->type == IOTAP_REC_SAMPLE) {
				series_add_sample(&w->ser, &o->rec);
				if (cur && cur != &w->bk->cont && cur->ops) {
					pstats_add_sample(cur, &o->rec);
					o->taken = 1;
				}
				smp.valid = 1;
				smp.t_ns = o->rec.time_ns;
				smp.s = o->rec.sample;
			} else if (o->type == IOTAP_REC_PHASE && w->flag_marks) {
				/* the block ends: the bins stop counting it (one pass clears it) */
				series_block_end(&w->ser);
				series_track(&w->ser, NULL);
				if (cur_fold && (ret = fold_end(&f)))
					return ret;
				fold_close(&f, w->bref);
				cur = NULL;
				cur_fold = 0;
				if (p < n && p != bpos)
					return -EXDEV;	/* S left an op outside every block: never */
			}
		}
		if (p == n)
			break;
		if (p == bpos) {
			const struct pop *d = &ops[p];

			series_block_end(&w->ser);
			if (cur_fold && (ret = fold_end(&f)))
				return ret;
			cur_fold = w->flag_marks && p >= w->fm &&
				   (bj + 1 < w->n_bs || (nphase && last_phase > p));
			if (cur_fold) {
				if (!f.scratch && !(f.scratch = bk_block(w->bk, f.nslot++)))
					return -ENOMEM;
				cur = f.scratch;
				w->bref[bj] = UINT32_MAX;
				f.run_last = (uint32_t)bj;
			} else {
				fold_close(&f, w->bref);
				if (!(cur = bk_block(w->bk, f.nslot)))
					return -ENOMEM;
				w->bref[bj] = f.nslot++;
			}
			bj++;
			bpos = bj < w->n_bs ? w->bs[bj].i : UINT32_MAX;
			cur->t_begin = d->in.t;
			cur->smp_first = smp;
			cur->ord_first = ord;
			series_track(&w->ser, cur);
		}
		/* the ops up to the next block or other record: nothing else to look at */
		stop = opos < bpos ? opos : bpos;
		stop = stop < n ? stop : n;
		for (; p < stop; p++) {
			const struct pop *d = &ops[p];

			if (d->inf > cur->max_inflight)
				cur->max_inflight = d->inf;
			series_add_op(&w->ser, &d->in);	/* first: it may fold the block's ops so far */
			/* a seek: only data ops that succeeded have a distance (A, plan_seek) */
			pstats_add_op(cur, &d->in, d->dist != 0, d->dist);
			if (d->in.op != IOTAP_OP_FORGET)
				ord++;
		}
	}
	series_block_end(&w->ser);
	if (cur_fold)
		return -EXDEV;	/* a folding block open at the end: never (the test above) */
	fold_close(&f, w->bref);
	w->last_open = cur && cur != &w->bk->cont;
	return w->ser.err ? -ENOMEM : 0;
}

/* --- M: in window order, into the report -------------------------------- */

/* The last block of a window goes on in the next: it becomes e->blk (empty), histograms copied. */
static int take_block(struct iotap_pstats *dst, const struct iotap_pstats *src)
{
	struct iotap_hist *lat[IOTAP_OP_MAX];
	struct iotap_hist_pool *pool = dst->pool;
	unsigned int i;
	int ret = 0;

	memcpy(lat, dst->lat, sizeof(lat));
	*dst = *src;
	dst->pool = pool;
	memcpy(dst->lat, lat, sizeof(lat));
	for (i = 0; i < IOTAP_OP_MAX; i++) {
		if (dst->lat[i] && dst->lat[i]->n)
			iotap_hist_clear(dst->lat[i]);
		if (!src->lat[i] || !src->lat[i]->n)
			continue;
		if (!dst->lat[i] && !(dst->lat[i] = iotap_hist_new(pool)))
			return -ENOMEM;
		if (iotap_hist_merge(dst->lat[i], src->lat[i]))
			ret = -ENOMEM;
	}
	return ret;
}

/* Block @ob of @w ends: to the phases, or its run where it is a run's last (folded: nothing). */
static void m_block_done(struct report_acc *e, const struct pwin *w, long ob)
{
	uint32_t s = w->bref[ob];

	if (s == UINT32_MAX)
		return;
	/*
	 * The next block, written by B on another CPU, is cold here: fetch it
	 * while this one is merged (its lines are read at scattered places).
	 */
	if ((size_t)ob + 1 < w->n_bs && w->bref[ob + 1] != UINT32_MAX) {
		const char *nb = (const char *)&w->bk->blk[w->bref[ob + 1]];
		size_t i;

		for (i = 0; i < sizeof(struct iotap_pstats); i += 64)
			__builtin_prefetch(nb + i);
	}
	report_block_done(e, &w->bk->blk[s], w->bs[ob].gap);
}

static int par_merge(struct par *P, struct pwin *w)
{
	struct report_acc *e = &P->e;
	struct iotap_report *rep = P->rep;
	size_t oi, bj = 0;
	long ob = -1;			/* the block of B open */
	uint32_t p = 0;

	for (oi = 0; oi <= w->n_oth && !e->err; oi++) {
		uint32_t pos = oi < w->n_oth ? w->oth[oi].pos : (uint32_t)w->n_ops;
		struct poth *o;

		while (p < pos) {
			if (bj < w->n_bs && w->bs[bj].i == p) {
				if (ob >= 0)
					m_block_done(e, w, ob);
				else
					report_end_block(e);
				ob = (long)bj++;
				p++;
			} else if (ob >= 0) {
				uint32_t nx = bj < w->n_bs ? w->bs[bj].i : (uint32_t)w->n_ops;

				p = nx < pos ? nx : pos;
			} else {
				/* an op of the block begun before: into it, as one pass adds it */
				const struct pop *d = &w->ops[p++];
				unsigned int op = d->in.op;
				int data = (op == IOTAP_OP_READ || op == IOTAP_OP_WRITE) && d->in.res >= 0;

				if (d->inf > e->blk.max_inflight)
					e->blk.max_inflight = d->inf;
				pstats_add_op(&e->blk, &d->in, data && d->dist != 0, d->dist);
			}
		}
		if (oi == w->n_oth)
			break;
		o = &w->oth[oi];
		switch (o->type) {
		case IOTAP_REC_SAMPLE:
			if (o->taken) {
				e->last_sample.valid = 1;
				e->last_sample.t_ns = o->rec.time_ns;
				e->last_sample.s = o->rec.sample;
			} else {
				report_sample_acc(e, &o->rec);
			}
			break;
		case IOTAP_REC_PHASE:
			if (w->flag_marks && ob >= 0) {
				m_block_done(e, w, ob);
				ob = -1;
			}
			e->ord = w->ord_off + o->ord;
			o->rec.name = o->name == SIZE_MAX ? NULL : w->names + o->name;
			report_on_phase(e, &o->rec);
			break;
		case IOTAP_REC_NAME:
			if (report_name_set(rep, o->rec.file, o->parent,
					    o->name == SIZE_MAX ? "" : w->names + o->name))
				e->err = -ENOMEM;
			break;
		case OTH_WBFAIL:
			report_wbfail_note(rep, &o->rec);
			break;
		}
	}
	if (e->err)
		return e->err;
	if (ob >= 0) {
		if (!w->last_open || w->bref[ob] == UINT32_MAX)
			return -EXDEV;	/* B and M disagree: never */
		if (take_block(&e->blk, &w->bk->blk[w->bref[ob]]))
			return -ENOMEM;
		e->blk_gap = w->bs[ob].gap;
	}
	e->ord = w->ord_off + w->nord;
	if (w->lmax > e->max_end)
		e->max_end = w->lmax;
	if (series_append(&rep->series, &w->ser, w->max_end))
		return -ENOMEM;
	return 0;
}

/* --- the schedule ---------------------------------------------------------- */

static void par_fail(struct par *P, int err)
{
	if (err == -EXDEV)
		(void)REFUSE(P, "the split found a window inexact");	/* where no step said why */
	if (!P->err)
		P->err = err;
	P->stop = 1;
	pthread_cond_broadcast(&P->cv);
}

/*
 * Every thread runs this until the windows are done: M of the next window
 * when B has measured it, else S of the next when A has read it (then B
 * of it at once), else A of a new window while fewer than held_max are held.
 */
static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void par_work(void *arg)
{
	uint64_t t0;
	struct par *P = arg;
	struct pwin *w;
	int ret;

	pthread_mutex_lock(&P->lock);
	while (!P->stop && P->next_m < P->nw) {
		if (!P->m_busy && P->win[P->next_m].state == W_MEASURED) {
			w = &P->win[P->next_m];
			P->m_busy = 1;
			pthread_mutex_unlock(&P->lock);
			t0 = cpu_ns();
			ret = par_merge(P, w);
			__atomic_add_fetch(&P->ns[3], cpu_ns() - t0, __ATOMIC_RELAXED);
			win_free(P, w);
			pthread_mutex_lock(&P->lock);
			P->m_busy = 0;
			P->next_m++;
			P->held--;
			if (ret)
				par_fail(P, ret);
			pthread_cond_broadcast(&P->cv);
			continue;
		}
		if (!P->s_busy && P->next_s < P->nw && P->win[P->next_s].state == W_READ) {
			w = &P->win[P->next_s];
			P->s_busy = 1;
			pthread_mutex_unlock(&P->lock);
			t0 = cpu_ns();
			ret = par_plan(P, w);
			__atomic_add_fetch(&P->ns[1], cpu_ns() - t0, __ATOMIC_RELAXED);
			pthread_mutex_lock(&P->lock);
			P->s_busy = 0;
			P->next_s++;
			w->state = W_PLANNED;
			if (ret) {
				par_fail(P, ret);
				continue;
			}
			pthread_cond_broadcast(&P->cv);
			pthread_mutex_unlock(&P->lock);
			t0 = cpu_ns();
			ret = par_measure(P, w);
			__atomic_add_fetch(&P->ns[2], cpu_ns() - t0, __ATOMIC_RELAXED);
			pthread_mutex_lock(&P->lock);
			w->state = W_MEASURED;
			if (ret)
				par_fail(P, ret);
			pthread_cond_broadcast(&P->cv);
			continue;
		}
		if (P->next_a < P->nw && P->held < P->held_max) {
			w = &P->win[P->next_a++];
			P->held++;
			pthread_mutex_unlock(&P->lock);
			t0 = cpu_ns();
			ret = par_read(P, w);
			__atomic_add_fetch(&P->ns[0], cpu_ns() - t0, __ATOMIC_RELAXED);
			pthread_mutex_lock(&P->lock);
			w->state = W_READ;
			if (ret)
				par_fail(P, ret);
			pthread_cond_broadcast(&P->cv);
			continue;
		}
		pthread_cond_wait(&P->cv, &P->lock);
	}
	pthread_mutex_unlock(&P->lock);
}

/*
 * The windows wanted: IOTAP_REPORT_WINDOWS=K (tests: K windows, at any
 * thread count and file size), else as PAR_WINDOW_RECORDS says. Return:
 * 0, -EXDEV: one pass.
 */
static int par_windows(struct par *P, const char *path, unsigned int threads,
		       struct iotap_trace_split_opts *so)
{
	const char *env = getenv("IOTAP_REPORT_WINDOWS");
	struct stat st;

	memset(so, 0, sizeof(*so));
	if (env && *env) {
		char *end;
		unsigned long v = strtoul(env, &end, 10);

		if (*end || !v || v > 100000)
			return REFUSE(P, "IOTAP_REPORT_WINDOWS is not a count");
		so->windows = (unsigned int)v;
		return 0;
	}
	if (threads < PAR_MIN_THREADS)
		return REFUSE(P, "fewer threads than it pays for");
	if (iotap_pool_cpus() < PAR_MIN_THREADS)
		return REFUSE(P, "fewer CPUs than it pays for");
	if (stat(path, &st))
		return REFUSE(P, "no file");	/* the one pass says why */
	if ((uint64_t)st.st_size < PAR_MIN_BYTES)
		return REFUSE(P, "a trace under 1 MiB");
	so->windows = threads < 50000 ? 2 * threads : 100000;
	so->records = PAR_WINDOW_RECORDS;
	so->min_bytes = PAR_MIN_BYTES;
	so->min_chunks = PAR_MIN_CHUNKS;
	return 0;
}

static int par_run(struct par *P, struct iotap_report *rep, const char *path,
		   const struct iotap_report_opts *o);

int report_par(struct iotap_report *rep, const char *path, const struct iotap_report_opts *o)
{
	struct par P;
	int ret;

	memset(&P, 0, sizeof(P));
	ret = par_run(&P, rep, path, o);
	if (getenv("IOTAP_REPORT_DEBUG")) {
		if (ret == -EXDEV)
			fprintf(stderr, "iotap report: %s: one pass (%s)\n", path,
				P.why ? P.why : "?");
		else
			fprintf(stderr, "iotap report: %s: %u time windows on %u threads, "
				"%" PRIu64 " chunk reads of %u chunks (%" PRIu64 " before their "
				"window, %" PRIu64 " after, %" PRIu64 " again), CPU ms: read %.0f, "
				"plan %.0f, measure %.0f, merge %.0f\n",
				path, P.nw, P.nt, P.reads.taken, P.reads.chunks, P.reads.back,
				P.reads.ahead, P.reads.again,
				P.ns[0] / 1e6, P.ns[1] / 1e6,
				P.ns[2] / 1e6, P.ns[3] / 1e6);
	}
	return ret;
}

/*
 * Every window's reader, join and vectors are malloc'ed and freed again,
 * window after window, on several threads; glibc hands blocks from 128 KiB
 * up (mmap) and a heap's free top (trim) back to the kernel, and the next
 * window faults them in anew. On a 6.5 M-record bonnie++ capture, 13
 * windows on 2 threads, these settings took 40,000-53,000 page faults to
 * 11,400-11,600 and system time from 0.10-0.34 s to 0.02-0.05 s (BENCHMARKS.md,
 * "Session 17"). The process keeps what its largest windows held, as one
 * pass does; it is iotap's report, not a long-lived library user.
 */
static void par_malloc_setup(void)
{
	mallopt(M_MMAP_THRESHOLD, 32 << 20);
	mallopt(M_TRIM_THRESHOLD, 1 << 30);
}

static int par_run(struct par *P, struct iotap_report *rep, const char *path,
		   const struct iotap_report_opts *o)
{
	static pthread_once_t malloc_once = PTHREAD_ONCE_INIT;
	struct iotap_trace_split_opts so;
	struct iotap_pool *pool = NULL;
	unsigned int i, nt, threads = o->threads;
	int ret;

	if (!threads) {
		/*
		 * No --threads: a CPU each, up to PAR_AUTO_THREADS (each holds a
		 * window more: 15-35 MB on a dense trace). Where the windows do not
		 * apply, the one pass reads as it does without --threads.
		 */
		threads = iotap_pool_cpus();
		threads = threads < PAR_AUTO_THREADS ? threads : PAR_AUTO_THREADS;
	}
	/* state one pass carries from every record to the next: not split */
	if (o->plan)
		return REFUSE(P, "--phases-from");
	if (o->points)
		return REFUSE(P, "the HTML seek map's points");
	if (!o->gap_ns)
		return REFUSE(P, "a gap of 0");
	if (threads < 2)
		return REFUSE(P, "one thread");
	if (par_windows(P, path, threads, &so))
		return -EXDEV;
	pthread_once(&malloc_once, par_malloc_setup);
	memset(rep, 0, sizeof(*rep));
	P->rep = rep;
	P->o = o;
	P->run_tiny = 2;
	ret = iotap_trace_split_open(&P->split, path, &so);
	if (ret)
		/* any failure: the one pass reads it and says what is wrong */
		return REFUSE(P, "the split refused (damage, small, or watermarks)");
	ret = report_setup(rep, path, o, iotap_trace_split_header(P->split));
	if (!ret)
		ret = report_acc_init(&P->e, rep, o);
	if (ret)
		goto out;
	app_init(&rep->app, rep->hdr.workload);
	if (rep->app.kind) {
		ret = REFUSE(P, "application figures");	/* app.c reads every record in order */
		goto out;
	}
	analysis_opened(path, iotap_trace_split_reader(P->split));	/* progress lines */
	P->nw = iotap_trace_split_count(P->split);
	P->win = calloc(P->nw, sizeof(*P->win));
	if (!P->win) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < P->nw; i++) {
		size_t b = (iotap_trace_split_records(P->split, i) + 1024) * sizeof(struct pop);

		P->win[i].k = i;
		if (b > P->ops_bytes)
			P->ops_bytes = b;
	}
	nt = threads < P->nw ? threads : P->nw;
	P->nt = nt;
	P->held_max = nt + 2;
	pthread_mutex_init(&P->lock, NULL);
	pthread_mutex_init(&P->spare_lock, NULL);
	pthread_cond_init(&P->cv, NULL);
	iotap_buf_keep(PAR_KEEP);	/* each window's reader: the arrays of the one before */
	if (nt > 1 && iotap_pool_create(&pool, nt - 1, nt) == 0)
		for (i = 0; i + 1 < nt && i < iotap_pool_threads(pool); i++)
			iotap_pool_add(pool, par_work, P);
	par_work(P);
	iotap_pool_free(pool);	/* waits for the others */
	iotap_buf_keep(-PAR_KEEP);
	pthread_cond_destroy(&P->cv);
	pthread_mutex_destroy(&P->lock);
	ret = P->err;
	for (i = 0; i < P->nw; i++)
		win_free(P, &P->win[i]);
	for (i = 0; i < P->nspare; i++)
		iotap_buf_free(P->spare[i].ops, P->spare[i].cap);
	for (i = 0; i < P->nheaps; i++)
		free(P->heaps[i]);
	for (i = 0; i < P->nbk; i++)
		bk_free(P->bks[i]);
	pthread_mutex_destroy(&P->spare_lock);
	iotap_trace_split_reads(P->split, &P->reads);
	if (!ret && iotap_trace_split_stats(P->split, &rep->rs, &rep->split_calls, &rep->joined))
		ret = REFUSE(P, "the one-pass reader may release early here (split_stats)");
	if (!ret) {
		app_finish(&rep->app);
		ret = report_finish(&P->e);
		rep->ops_ord = P->e.ord;
		rep->par_windows = P->nw;
	}
out:
	free(P->win);
	free(P->carry);
	report_acc_release(&P->e);
	if (P->split)
		iotap_trace_split_progress_end(P->split, ret >= 0);
	iotap_trace_split_close(P->split);
	if (ret == -EXDEV)
		iotap_report_release(rep);
	return ret;
}
