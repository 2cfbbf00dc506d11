// SPDX-License-Identifier: MIT
/*
 * report.c - stream a trace once into phases, a total, bins and points
 *
 * One pass, one record at a time. Each OP record is measured into the
 * current block (struct iotap_pstats of at most AUTO_BLOCK_OPS ops or
 * AUTO_BLOCK_NS of time), into the time bins, and into the seek-map
 * sample. A finished block goes to whatever makes the phases:
 *
 *   markers      a BEGIN marker ends the open phase and starts the next,
 *                an END marker closes it; ops outside any phase form
 *                "(before marks)" / "(between marks)". A marked phase lasts
 *                from its marker to the next (the last one to its last op).
 *   phases-from  another trace's phases, started at the same op ordinal.
 *   automatic    phase_auto.c judges each block (until a marker shows up,
 *                which turns everything so far into "(before marks)").
 *
 * The total is the sum of the phases (pstats merge exactly), so it costs
 * nothing per record. An automatic phase lasts from its first op's start
 * to the next phase's first op (its last op's end where an idle gap
 * follows, so idle gaps do not dilute its rates); the total lasts from
 * the first op to the last op's end. What happens to the phase list once
 * the stream is read (repeats numbered, negligible spans folded, empty
 * phases dropped), and the lookups of a finished report: report_phases.c.
 *
 * Ops in flight: a min-heap of the end times of ops started so far gives,
 * at each op's start, how many are still running (max_inflight); the
 * time-weighted mean comes from busy_ns.
 *
 * Threads (iotap_report_opts.threads >= 2, report --threads): the reading side
 * (pre_rec: decoding, the join, application figures, names) runs on a
 * pool thread and hands the records to the accumulator (acc_rec) in batches
 * (report_pipe); one thread does both otherwise. The accumulator's state is
 * one thread's either way, so the report is the same to the byte. From 4
 * threads and CPUs, report_par.c computes the same report from time windows
 * read at once, with this file's steps (report_i.h); where it cannot, this
 * one pass reads the trace.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stddef.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>

#include "report_i.h"

/* What pre_op() found for an OP record, for on_op(). */
struct pre {
	int64_t dist;			/* OP: seek_map_update()'s distance (data ops), else 0 */
	unsigned int inf;		/* OP: ops in flight at its start */
	int data;			/* OP: a read or write that did not fail */
};

void iotap_report_opts_init(struct iotap_report_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->gap_ns = DEFAULT_GAP_NS;
	o->flag_factor = 4.0;
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

static void copy_header(struct iotap_trace_header *dst, const struct iotap_trace_header *src)
{
	*dst = *src;
	dst->host = dup_or_null(src->host);
	dst->kernel = dup_or_null(src->kernel);
	dst->mount_opts = dup_or_null(src->mount_opts);
	dst->cmdline = dup_or_null(src->cmdline);
	dst->backing = dup_or_null(src->backing);
	dst->mountpoint = dup_or_null(src->mountpoint);
	dst->tool = dup_or_null(src->tool);
	dst->workload = dup_or_null(src->workload);
	dst->layout = dup_or_null(src->layout);
	dst->fuse = dup_or_null(src->fuse);
}

static void free_header(struct iotap_trace_header *h)
{
	free((char *)h->host);
	free((char *)h->kernel);
	free((char *)h->mount_opts);
	free((char *)h->cmdline);
	free((char *)h->backing);
	free((char *)h->mountpoint);
	free((char *)h->tool);
	free((char *)h->workload);
	free((char *)h->layout);
	free((char *)h->fuse);
}

/* --- file names ---------------------------------------------------------- */

static int nm_set(struct iotap_map *m, uint64_t file, uint64_t parent, const char *name)
{
	struct iotap_name_ent *e;
	char *s = strdup(name ? name : "");
	int ret;

	if (!s)
		return -ENOMEM;
	ret = iotap_map_put(m, file, (void **)&e);
	if (ret < 0) {
		free(s);
		return ret;
	}
	free(e->name);
	e->parent = parent;
	e->name = s;
	return 0;
}

int report_name_set(struct iotap_report *rep, uint64_t file, uint64_t parent, const char *name)
{
	return nm_set(&rep->names, file, parent, name);
}

static void nm_release(struct iotap_map *m)
{
	struct iotap_name_ent *e;
	uint64_t pos = 0;

	while ((e = iotap_map_next(m, &pos, NULL)))
		free(e->name);
	iotap_map_release(m);
}

const char *iotap_report_file_name(const struct iotap_report *rep, uint64_t file, char *buf, size_t len)
{
	const char *parts[16];
	const struct iotap_name_ent *e;
	uint64_t f = file;
	unsigned int n = 0;
	size_t l = 0;

	while (n < 16 && (e = iotap_map_get(&rep->names, f))) {
		parts[n++] = e->name;
		f = e->parent;
		if (!f || f == file)
			break;
	}
	if (!n) {
		/* file 0: ops on a name that had no file (a failed lookup or create) */
		snprintf(buf, len, file ? "#%" PRIu64 : "(names not found)", file);
		return buf;
	}
	buf[0] = '\0';
	/* the root's NAME carries the backing path: leave it out */
	if (n > 1 && parts[n - 1][0] == '/')
		n--;
	while (n-- > 0 && l < len)
		l += (size_t)snprintf(buf + l, len - l, "%s%s", l ? "/" : "", parts[n]);
	return buf;
}

/* --- phases --------------------------------------------------------------- */

static int new_phase(struct report_acc *e, const char *name, uint64_t t)
{
	struct iotap_report *rep = e->rep;
	struct iotap_pstats *np, *p;

	np = realloc(rep->phases, (rep->nphases + 1) * sizeof(*np));
	if (!np)
		return -ENOMEM;
	rep->phases = np;
	p = &rep->phases[rep->nphases];
	pstats_init(p, name, rep->nphases, t);
	p->pool = rep->hist_pool;
	/* device rates of a short phase need the sample just before it */
	if (e->last_sample.valid)
		p->smp_first = e->last_sample;
	p->ord_first = e->ord;
	e->cur = (int)rep->nphases++;
	return 0;
}

static void close_phase(struct report_acc *e, uint64_t t, const struct iotap_trace_rec *mark)
{
	struct iotap_pstats *p;

	if (e->cur < 0)
		return;
	p = &e->rep->phases[e->cur];
	p->t_end = t > p->t_begin ? t : p->t_begin;
	if (mark && p->has_cpu_mark)
		p->cpu_mark_end_ns = iotap_trace_phase_cpu_user_ns(mark) +
				     iotap_trace_phase_cpu_sys_ns(mark);
	else if (!mark)
		p->has_cpu_mark = 0;	/* no closing mark: its CPU is not known (not 0) */
	if (mark && mark->flags == IOTAP_PHASE_END)
		p->unit_max_ns = iotap_trace_phase_unit_max_ns(mark);
	e->cur = -1;
}

/* Hand the measured block @b to whatever makes the phases. */
void report_block_done(struct report_acc *e, const struct iotap_pstats *b, uint64_t gap)
{
	if (!b->ops && !b->lost)
		return;
	if (e->mode == M_AUTO) {
		autoseg_block(&e->seg, b, gap);
		if (e->seg.err)
			e->err = -ENOMEM;
		return;
	}
	if (e->cur < 0) {
		if (new_phase(e, e->rep->nphases ? "(between marks)" : "(before marks)", b->first_op)) {
			e->err = -ENOMEM;
			return;
		}
		e->rep->phases[e->cur].ord_first = b->ord_first;
	}
	if (pstats_merge(&e->rep->phases[e->cur], b))
		e->err = -ENOMEM;
}

/* End the block being measured, start a fresh one. */
void report_end_block(struct report_acc *e)
{
	struct iotap_pstats *b = &e->blk;

	series_block_end(&e->rep->series);	/* the bins take their counts from the block */
	if (!b->ops && !b->lost)
		return;
	report_block_done(e, b, e->blk_gap);
	pstats_clear(b);
	e->blk_gap = 0;
}

/* The first marker: what was measured so far becomes "(before marks)". */
static int enter_marks(struct report_acc *e)
{
	struct iotap_pstats *segs, *p;
	unsigned int n, i;
	int ret = 0;

	report_end_block(e);
	autoseg_finish(&e->seg);
	segs = autoseg_take(&e->seg, &n);
	e->mode = M_MARKS;
	if (!segs)
		return -ENOMEM;
	if (n) {
		ret = new_phase(e, "(before marks)", segs[0].first_op);
		if (!ret) {
			p = &e->rep->phases[e->cur];
			p->smp_first = segs[0].smp_first;
			p->ord_first = segs[0].ord_first;
			for (i = 0; i < n && !ret; i++)
				ret = pstats_merge(p, &segs[i]);
		}
	}
	for (i = 0; i < n; i++)
		pstats_release(&segs[i]);
	free(segs);
	return ret;
}

/* A writeback WRITE (cache mode) failed: the application did not see it. */
void report_wbfail_note(struct iotap_report *rep, const struct iotap_trace_rec *rec)
{
	unsigned int i;

	for (i = 0; i < rep->nwbfail; i++) {
		struct iotap_wbfail *w = &rep->wbfail[i];

		if (w->file == rec->file && w->err == (int)-rec->result) {
			w->count++;
			w->t_last = rec->time_ns;
			return;
		}
	}
	if (rep->nwbfail == IOTAP_REPORT_WBFAIL_MAX) {
		rep->wbfail_more++;
		return;
	}
	rep->wbfail[rep->nwbfail++] = (struct iotap_wbfail){
		.file = rec->file, .err = (int)-rec->result, .count = 1,
		.t_first = rec->time_ns, .t_last = rec->time_ns,
	};
}

/*
 * The flags name the files whose writebacks failed: without names kept
 * (keep_names), read the NAME records again. Only traces with such
 * failures pay for it.
 */
static int wbfail_names(struct iotap_report *rep)
{
	struct iotap_trace_reader *r;
	struct iotap_trace_rec rec;
	struct iotap_analysis_err err;
	int ret;

	if (!rep->nwbfail || iotap_map_count(&rep->names))
		return 0;
	ret = iotap_analysis_trace_open(rep->path, IOTAP_TRACE_READ_FILE_ORDER, &r, &err);
	if (ret)
		return 0;	/* the flags then say the file id */
	while ((ret = iotap_trace_reader_next(r, &rec)) > 0)
		if (rec.type == IOTAP_REC_NAME && nm_set(&rep->names, rec.file, iotap_trace_name_parent(&rec), rec.name))
			ret = -ENOMEM;
	iotap_trace_reader_close(r);
	return ret == -ENOMEM ? ret : 0;
}

/*
 * What of an OP record depends only on the records before it, not on
 * blocks or phases: the seek distance from the file's previous data op,
 * the seek-map sample, the ops in flight, failed writebacks.
 */
static inline __attribute__((always_inline)) void
pre_op(struct report_acc *e, const struct iotap_trace_rec *rec, struct pre *p)
{
	struct iotap_report *rep = e->rep;
	unsigned int op = rec->op;
	int64_t res = rec->result;

	p->dist = 0;
	p->data = (op == IOTAP_OP_READ || op == IOTAP_OP_WRITE) && res >= 0;
	if (p->data) {
		uint64_t off = rec->offset, len = res > 0 ? (uint64_t)res : rec->length;

		p->dist = seek_map_update(&rep->files, rec->file, off, off + len,
					  op == IOTAP_OP_WRITE ? IOTAP_SEEK_WRITE : IOTAP_SEEK_READ);
		if (rep->points.cap)
			points_add(&rep->points, rec);
	}
	p->inf = inflight_at(e->heap, &e->nheap, rec->time_ns, rec->time_ns + rec->dur_ns);
	if (__builtin_expect(res < 0, 0) && op == IOTAP_OP_WRITE && rec->aux == 1)
		report_wbfail_note(rep, rec);
}

static inline __attribute__((always_inline)) void
on_op(struct report_acc *e, const struct iotap_trace_rec *rec, const struct pre *p)
{
	struct iotap_report *rep = e->rep;
	uint64_t t = rec->time_ns, end = t + rec->dur_ns;
	unsigned int op = rec->op;
	struct op_in in;
	int data;

	if (__builtin_expect(e->mode == M_PLAN, 0)) {
		const struct iotap_phase_plan *pl = e->o->plan;

		while (e->next_plan < pl->n && e->ord >= pl->ord[e->next_plan]) {
			report_end_block(e);
			close_phase(e, t, NULL);
			if (new_phase(e, pl->names[e->next_plan], t)) {
				e->err = -ENOMEM;
				return;
			}
			e->next_plan++;
		}
	}
	/*
	 * Tiny requests meet larger ones (automatic phases): a block holding
	 * the end of a run of reads or writes of at most AUTO_TINY bytes
	 * (bonnie++'s per-char tests) and the start of larger ones, or the
	 * reverse, joins one phase whole, and the 8 KiB reads of up to a block
	 * counted with 1 MiB of 1-byte ones gave that phase 1.1 to 2.5 times
	 * bonnie++'s own per-char rate. So a block also ends where requests
	 * of one kind that have run for AUTO_KIND_RUN ops or more turn into
	 * the other; tiny and larger requests mixed in shorter runs cut
	 * nothing. (A compare a data op: the run is counted in ord.)
	 */
	data = p->data;
	if (data && (rec->length <= AUTO_TINY) != e->run_tiny) {
		if (e->run_tiny < 2 && e->ord - e->run_ord >= AUTO_KIND_RUN && e->blk.ops &&
		    e->mode == M_AUTO)
			report_end_block(e);
		e->run_tiny = rec->length <= AUTO_TINY;
		e->run_ord = e->ord;
	}
	/*
	 * A block ends at AUTO_BLOCK_OPS ops, at its time, or (automatic
	 * phases) after an idle gap: t - max_end >= gap_ns, with max_end set
	 * (any op with gap_ns 0). The unsigned difference is small for an op
	 * that starts just after the last end, the usual case: one compare.
	 */
	if (e->blk.ops && (e->blk.ops >= AUTO_BLOCK_OPS || t >= e->blk_end ||
			   (t - e->max_end >= e->gap_ns &&
			    ((t > e->max_end && e->max_end) || !e->gap_ns) && e->mode == M_AUTO)))
		report_end_block(e);
	if (!e->blk.ops) {
		e->blk.t_begin = t;
		e->blk_end = t + AUTO_BLOCK_NS;
		e->blk.smp_first = e->last_sample;
		e->blk.ord_first = e->ord;
		e->blk_gap = e->max_end && t > e->max_end ? t - e->max_end : 0;
	}
	if (p->inf > e->blk.max_inflight)
		e->blk.max_inflight = p->inf;
	in = op_in_of(rec);
	series_add_op(&rep->series, &in);	/* first: it may fold the block's ops so far */
	pstats_add_op(&e->blk, &in, data && p->dist != 0, p->dist);
	if (end > e->max_end)
		e->max_end = end;
	if (op != IOTAP_OP_FORGET)
		e->ord++;
}

void report_sample_acc(struct report_acc *e, const struct iotap_trace_rec *rec)
{
	if (e->blk.ops)
		pstats_add_sample(&e->blk, rec);
	else if (e->mode != M_AUTO && e->cur >= 0)
		pstats_add_sample(&e->rep->phases[e->cur], rec);
	e->last_sample.valid = 1;
	e->last_sample.t_ns = rec->time_ns;
	e->last_sample.s = rec->sample;
}

static void on_sample(struct report_acc *e, const struct iotap_trace_rec *rec)
{
	series_add_sample(&e->rep->series, rec);
	report_sample_acc(e, rec);
}

void report_on_phase(struct report_acc *e, const struct iotap_trace_rec *rec)
{
	struct iotap_pstats *p;

	e->rep->markers++;
	if (e->o->auto_phases || e->mode == M_PLAN)
		return;
	if (e->mode == M_AUTO && enter_marks(e)) {
		e->err = -ENOMEM;
		return;
	}
	if (e->capped) {
		e->rep->markers_folded++;
		return;
	}
	report_end_block(e);
	if (e->rep->nphases + 2 >= REPORT_PHASES_MAX) {
		/* bounded memory: one last phase takes everything from here on */
		close_phase(e, rec->time_ns, rec);
		if (new_phase(e, "(later phases)", rec->time_ns))
			e->err = -ENOMEM;
		e->capped = 1;
		e->rep->markers_folded++;
		return;
	}
	close_phase(e, rec->time_ns, rec);
	if (rec->flags != IOTAP_PHASE_BEGIN)
		return;
	if (new_phase(e, rec->name ? rec->name : "", rec->time_ns)) {
		e->err = -ENOMEM;
		return;
	}
	p = &e->rep->phases[e->cur];
	p->cpu_mark_begin_ns = iotap_trace_phase_cpu_user_ns(rec) + iotap_trace_phase_cpu_sys_ns(rec);
	p->has_cpu_mark = iotap_trace_phase_has_cpu(rec);
	p->cpu_mark_end_ns = p->cpu_mark_begin_ns;
}

int report_finish(struct report_acc *e)
{
	struct iotap_report *rep = e->rep;
	unsigned int i;
	int ret = 0;

	report_end_block(e);
	if (e->mode == M_AUTO) {
		autoseg_finish(&e->seg);
		rep->phases = autoseg_take(&e->seg, &rep->nphases);
		if (!rep->phases)
			ret = -ENOMEM;
		report_number_repeats(rep);
		rep->phase_source = "automatic";
	} else {
		if (e->cur >= 0) {
			struct iotap_pstats *p = &rep->phases[e->cur];

			close_phase(e, p->last_end > p->t_begin ? p->last_end : p->t_begin, NULL);
		}
		rep->phase_source = e->mode == M_PLAN ? "phases-from" : "markers";
		if (e->mode == M_MARKS) {
			ret = report_fold_unmarked(rep, e->o->gap_ns ? e->o->gap_ns : DEFAULT_GAP_NS);
			report_drop_empty(rep);
			report_number_repeats(rep);
		} else {
			ret = report_fold_plan(rep, e->o->plan);
		}
	}
	pstats_init(&rep->total, "total", 0, 0);
	rep->total.pool = rep->hist_pool;
	for (i = 0; i < rep->nphases; i++) {
		rep->phases[i].index = i;
		if (pstats_merge(&rep->total, &rep->phases[i]))
			ret = -ENOMEM;
	}
	if (rep->nphases && !rep->total.smp_first.valid)
		rep->total.smp_first = rep->phases[0].smp_first;
	rep->total.t_begin = rep->total.first_op;
	rep->total.t_end = rep->total.last_end;
	series_finish(&rep->series);
	if (rep->series.err)
		ret = -ENOMEM;
	rep->flags = calloc(rep->nphases ? rep->nphases : 1, sizeof(*rep->flags));
	if (!rep->flags)
		ret = -ENOMEM;
	return ret;
}

/* --- one record: the reading side, then the accumulator ------------------- */

/*
 * The reading side of any record (application figures, file names): 1
 * when the accumulator (acc_rec) takes it too. Its state is its own (rep->app,
 * rep->names), so with threads it runs on the reading thread while the
 * engine runs on another.
 */
static inline __attribute__((always_inline)) int
pre_rec(struct report_acc *e, const struct iotap_trace_rec *rec)
{
	struct iotap_report *rep = e->rep;

	if (rep->app.kind)
		app_feed(&rep->app, rec);
	if (__builtin_expect(rec->type == IOTAP_REC_OP, 1))
		return 1;
	switch (rec->type) {
	case IOTAP_REC_SAMPLE:
	case IOTAP_REC_PHASE:
	case IOTAP_REC_LOST:
		return 1;
	case IOTAP_REC_NAME:
		if (e->o->keep_names &&
		    nm_set(&rep->names, rec->file, iotap_trace_name_parent(rec), rec->name))
			*e->perr_at = -ENOMEM;
		return 0;
	default:
		return 0;
	}
}

static inline __attribute__((always_inline)) void
acc_rec(struct report_acc *e, const struct iotap_trace_rec *rec)
{
	struct pre p;

	if (__builtin_expect(rec->type == IOTAP_REC_OP, 1)) {
		pre_op(e, rec, &p);
		on_op(e, rec, &p);
		return;
	}
	switch (rec->type) {
	case IOTAP_REC_SAMPLE:
		on_sample(e, rec);
		break;
	case IOTAP_REC_PHASE:
		report_on_phase(e, rec);
		break;
	case IOTAP_REC_LOST:
		e->blk.lost += iotap_trace_lost_count(rec);
		break;
	}
}

/* --- threads: the reading side and the accumulator on two CPUs ------------ */

/*
 * report_pipe - with --threads N >= 2, a thread of the tree's pool
 * (iotap_pool) reads: it decodes (with pipe_read_threads() decoder
 * threads of the reader's own), joins cut calls and runs pre_rec; the
 * calling thread runs the accumulator (acc_rec) over the same records in the
 * same order. Records cross in batches of PIPE_BATCH through a ring of
 * PIPE_RING: memory is bounded by the ring, not by the trace. Each side
 * owns its state (pre_rec's comment), nothing is merged, so every output
 * is the one-thread report's byte for byte.
 */
#define PIPE_BATCH	1024		/* 56 KiB of ops a batch */
#define PIPE_RING	16		/* a side that waits is woken at half a ring: few wake-ups */
#define PIPE_OTHERS	64		/* SAMPLE, PHASE, LOST records a batch holds */

struct pipe_batch {
	unsigned int n, nother;
	struct rop op[PIPE_BATCH];	/* struct rop, report_i.h */
	struct iotap_trace_rec other[PIPE_OTHERS];	/* SAMPLE: whole; others: up to .sample */
	char *names;			/* PHASE names (pre.name_off) */
	unsigned int name_off[PIPE_OTHERS];
	size_t nlen, ncap;
};

struct pipe {
	struct report_acc *e;
	struct iotap_trace_join *jn;
	pthread_mutex_t lock;
	pthread_cond_t cv;
	struct pipe_batch *b[PIPE_RING];
	uint64_t head, tail;		/* batches filled, batches the accumulator is done with */
	int done;			/* the reading side ended ... */
	int ret;			/* ... with this (0: end of trace, -errno) */
	int stop;			/* the accumulator failed: stop reading */
	int r_wait, e_wait;		/* the reading side, the accumulator sleeps on cv */
};

/*
 * Decoder threads for --threads @n >= 2: the reading thread and @n - 1
 * that decompress (iotap_trace_reader_set_threads). With @n 2 that is
 * three threads for two CPUs: the decompressing one does a tenth of the
 * work, and without it the reading side is the longer (callgrind on a
 * 2 M-record report-synth trace: reading 929 M instructions, accumulator 749 M;
 * with it 803 M, 749 M and 156 M; one thread 1,512 M; BENCHMARKS.md).
 */
static unsigned int pipe_read_threads(unsigned int n)
{
	return n;
}

static int pipe_name(struct pipe_batch *b, unsigned int i, const char *name)
{
	size_t l = name ? strlen(name) + 1 : 0;

	if (!name) {
		b->name_off[i] = UINT32_MAX;
		return 0;
	}
	if (b->nlen + l > b->ncap) {
		size_t cap = b->ncap ? b->ncap * 2 : 4096;
		char *n;

		while (cap < b->nlen + l)
			cap *= 2;
		n = realloc(b->names, cap);
		if (!n)
			return -ENOMEM;
		b->names = n;
		b->ncap = cap;
	}
	memcpy(b->names + b->nlen, name, l);
	b->name_off[i] = (unsigned int)b->nlen;
	b->nlen += l;
	return 0;
}

/* Into batch @b: @rec and what pre_rec found (@p). */
static void pipe_put(struct report_acc *e, struct pipe_batch *b, const struct iotap_trace_rec *rec)
{
	struct rop *d = &b->op[b->n++];

	d->type = rec->type;
	if (rec->type == IOTAP_REC_OP) {
		rop_put(d, rec);
		return;
	}
	d->file = b->nother++;
	/* reader_next_ref's rule: only a SAMPLE carries its sample */
	memcpy(&b->other[d->file], rec, rec->type == IOTAP_REC_SAMPLE ? sizeof(*rec)
	       : offsetof(struct iotap_trace_rec, sample));
	if (rec->type == IOTAP_REC_PHASE && pipe_name(b, (unsigned int)d->file, rec->name))
		e->perr = -ENOMEM;
}

/* The accumulator over batch @b, on the accumulator's thread. */
static void pipe_acc(struct report_acc *e, struct pipe_batch *b)
{
	struct iotap_trace_rec r;
	unsigned int i;

	memset(&r, 0, offsetof(struct iotap_trace_rec, sample));
	r.type = IOTAP_REC_OP;
	for (i = 0; i < b->n && !e->err; i++) {
		const struct rop *d = &b->op[i];
		struct iotap_trace_rec *o;

		if (d->type == IOTAP_REC_OP) {
			rop_get(&r, d);
			acc_rec(e, &r);
			continue;
		}
		o = &b->other[d->file];
		if (o->type == IOTAP_REC_PHASE)
			o->name = b->name_off[d->file] == UINT32_MAX ? NULL
				  : b->names + b->name_off[d->file];
		acc_rec(e, o);
	}
}

static void pipe_read(void *arg)
{
	struct pipe *pp = arg;
	struct report_acc *e = pp->e;
	const struct iotap_trace_rec *rec;
	struct pipe_batch *b = NULL;
	int ret = 1, stop = 0, app = !!e->rep->app.kind;

	while (!stop) {
		pthread_mutex_lock(&pp->lock);
		if (pp->head - pp->tail >= PIPE_RING) {
			pp->r_wait = 1;
			while (pp->head - pp->tail > PIPE_RING / 2 && !pp->stop)
				pthread_cond_wait(&pp->cv, &pp->lock);
			pp->r_wait = 0;
		}
		stop = pp->stop;
		pthread_mutex_unlock(&pp->lock);
		if (stop)
			break;
		b = pp->b[pp->head % PIPE_RING];
		b->n = b->nother = 0;
		b->nlen = 0;
		while (b->n < PIPE_BATCH && b->nother < PIPE_OTHERS && !e->perr &&
		       (ret = iotap_trace_join_next_ref(pp->jn, &rec)) > 0) {
			/* an OP of a trace of no application: nothing for pre_rec to do */
			if ((rec->type == IOTAP_REC_OP && !app) || pre_rec(e, rec))
				pipe_put(e, b, rec);
		}
		if (ret <= 0 || e->perr)
			stop = 1;
		pthread_mutex_lock(&pp->lock);
		pp->head++;
		if (stop) {
			pp->done = 1;
			pp->ret = ret < 0 ? ret : 0;
		}
		if (pp->e_wait && (stop || pp->head - pp->tail >= PIPE_RING / 2))
			pthread_cond_broadcast(&pp->cv);
		pthread_mutex_unlock(&pp->lock);
	}
	pthread_mutex_lock(&pp->lock);
	pp->done = 1;
	pthread_cond_broadcast(&pp->cv);
	pthread_mutex_unlock(&pp->lock);
}

static int report_pipe(struct report_acc *e, struct iotap_trace_join *jn, unsigned int threads)
{
	struct iotap_pool *pool = NULL;
	struct pipe pp = { .e = e, .jn = jn };
	unsigned int i;
	int ret = 0, done = 0;

	(void)threads;
	pthread_mutex_init(&pp.lock, NULL);
	pthread_cond_init(&pp.cv, NULL);
	for (i = 0; i < PIPE_RING; i++)
		if (!(pp.b[i] = calloc(1, sizeof(*pp.b[i]))))
			ret = -ENOMEM;
	if (!ret)
		ret = iotap_pool_create(&pool, 1, 1);
	if (!ret && iotap_pool_threads(pool) != 1)
		ret = -EAGAIN;
	if (ret)
		goto out;
	iotap_pool_add(pool, pipe_read, &pp);
	while (!done) {
		struct pipe_batch *b;

		pthread_mutex_lock(&pp.lock);
		if (pp.tail == pp.head && !pp.done) {
			pp.e_wait = 1;
			while (pp.head - pp.tail < PIPE_RING / 2 && !pp.done)
				pthread_cond_wait(&pp.cv, &pp.lock);
			pp.e_wait = 0;
		}
		if (pp.tail == pp.head) {
			pthread_mutex_unlock(&pp.lock);
			break;
		}
		pthread_mutex_unlock(&pp.lock);
		b = pp.b[pp.tail % PIPE_RING];
		pipe_acc(e, b);
		pthread_mutex_lock(&pp.lock);
		pp.tail++;
		if (e->err) {
			pp.stop = 1;
			done = 1;
		}
		if (pp.r_wait && (pp.stop || pp.head - pp.tail <= PIPE_RING / 2))
			pthread_cond_broadcast(&pp.cv);
		pthread_mutex_unlock(&pp.lock);
	}
	iotap_pool_free(pool);	/* waits for pipe_read */
	pool = NULL;
	ret = pp.ret;
out:
	iotap_pool_free(pool);
	for (i = 0; i < PIPE_RING; i++) {
		if (pp.b[i])
			free(pp.b[i]->names);
		free(pp.b[i]);
	}
	pthread_cond_destroy(&pp.cv);
	pthread_mutex_destroy(&pp.lock);
	return ret;
}

int report_setup(struct iotap_report *rep, const char *path, const struct iotap_report_opts *o,
		 const struct iotap_trace_header *hdr)
{
	memset(rep, 0, sizeof(*rep));
	rep->path = path;
	rep->flag_factor = o->flag_factor > 1 ? o->flag_factor : 4.0;
	rep->hist_pool = malloc(sizeof(*rep->hist_pool));
	if (!rep->hist_pool)
		return -ENOMEM;
	iotap_hist_pool_init(rep->hist_pool);
	copy_header(&rep->hdr, hdr);
	rep->t0 = rep->hdr.mono_base_ns;
	seek_map_init(&rep->files);
	iotap_map_init(&rep->names, sizeof(struct iotap_name_ent));
	series_init(&rep->series, rep->t0, o->interval_ns ? o->interval_ns : 100000000ull,
		    o->max_bins ? o->max_bins : 32768);
	points_init(&rep->points, o->points);
	return 0;
}

int report_acc_init(struct report_acc *e, struct iotap_report *rep, const struct iotap_report_opts *o)
{
	memset(e, 0, sizeof(*e));
	e->rep = rep;
	e->o = o;
	e->cur = -1;
	e->mode = o->plan ? M_PLAN : M_AUTO;
	e->run_tiny = 2;
	e->gap_ns = o->gap_ns;
	e->perr_at = &e->err;
	pstats_init(&e->blk, "", 0, 0);
	e->blk.pool = rep->hist_pool;
	autoseg_init(&e->seg, o->gap_ns ? o->gap_ns : DEFAULT_GAP_NS);
	e->seg.pool = e->seg.pend.pool = rep->hist_pool;
	e->heap = malloc(INFLIGHT_MAX * sizeof(*e->heap));
	return e->heap ? 0 : -ENOMEM;
}

void report_acc_release(struct report_acc *e)
{
	free(e->heap);
	e->heap = NULL;
	pstats_release(&e->blk);
	autoseg_release(&e->seg);
}

/* The one pass: every record of @path in order, on one thread or two (report_pipe). */
static int report_seq(struct iotap_report *rep, const char *path, const struct iotap_report_opts *o)
{
	struct iotap_trace_reader *r;
	struct iotap_trace_join *jn = NULL;
	const struct iotap_trace_rec *rec;
	struct report_acc e;
	int ret;

	memset(rep, 0, sizeof(*rep));
	memset(&e, 0, sizeof(e));
	ret = iotap_analysis_trace_open(path, 0, &r, &rep->err);
	if (ret)
		return ret;
	if (o->threads) {
		const char *env = getenv("IOTAP_READ_THREADS");

		/* decoder threads: IOTAP_READ_THREADS if set, else pipe_read_threads() */
		if (!env || !*env)
			iotap_trace_reader_set_threads(r, pipe_read_threads(o->threads));
	}
	ret = report_setup(rep, path, o, iotap_trace_reader_header(r));
	if (!ret)
		ret = report_acc_init(&e, rep, o);
	if (ret)
		goto out;
	series_track(&rep->series, &e.blk);
	/* a read()/write() the kernel cut at its page cap counts once (trace/join.c) */
	ret = iotap_trace_join_open(&jn, r);
	if (ret)
		goto out;

	app_init(&rep->app, rep->hdr.workload);
	/* one thread: the loop tests one error, not two */
	e.perr_at = o->threads >= 2 ? &e.perr : &e.err;
	if (o->threads >= 2)
		ret = report_pipe(&e, jn, o->threads);
	else
		while (!e.err && (ret = iotap_trace_join_next_ref(jn, &rec)) > 0)
			if (pre_rec(&e, rec))
				acc_rec(&e, rec);
	if (e.perr)
		ret = e.perr;
	if (e.err)
		ret = e.err;
	if (ret >= 0 && rep->app.err)
		ret = rep->app.err;
	app_finish(&rep->app);
	if (ret >= 0) {
		ret = report_finish(&e);
		rep->ops_ord = e.ord;
	}
	iotap_trace_reader_stats(r, &rep->rs);
	iotap_trace_join_stats(jn, &rep->split_calls, &rep->joined);
out:
	iotap_trace_join_close(jn);
	iotap_trace_reader_close(r);
	report_acc_release(&e);
	return ret;
}

int iotap_report_build(struct iotap_report *rep, const char *path, const struct iotap_report_opts *o)
{
	struct iotap_report_opts defaults;
	struct iotap_analysis_err err;
	int ret;

	if (!o) {
		iotap_report_opts_init(&defaults);
		o = &defaults;
	}
	ret = report_par(rep, path, o);	/* time windows on threads, where that pays */
	if (ret == -EXDEV)
		ret = report_seq(rep, path, o);
	if (ret >= 0)
		ret = wbfail_names(rep);
	if (ret < 0) {
		if (rep->err.code) {
			err = rep->err;	/* the trace could not be opened: said already */
		} else if (ret == -ENOMEM) {
			analysis_err_set(&err, ret, "out of memory reading '%s'", path);
		} else {
			analysis_err_set(&err, ret, "cannot read trace '%s': %s", path,
					 strerror(-ret));
		}
		iotap_report_release(rep);
		rep->err = err;	/* release cleared it */
		return ret;
	}
	report_flags(rep);
	return 0;
}

void iotap_report_release(struct iotap_report *rep)
{
	unsigned int i;

	pstats_release(&rep->total);
	for (i = 0; i < rep->nphases; i++)
		pstats_release(&rep->phases[i]);
	free(rep->phases);
	free(rep->flags);
	free_header(&rep->hdr);
	series_release(&rep->series);
	points_release(&rep->points);
	seek_map_release(&rep->files);
	nm_release(&rep->names);
	app_release(&rep->app);
	if (rep->hist_pool) {
		/* after every pstats: their histograms live in it */
		iotap_hist_pool_release(rep->hist_pool);
		free(rep->hist_pool);
	}
	memset(rep, 0, sizeof(*rep));
}
