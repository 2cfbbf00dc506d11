// SPDX-License-Identifier: MIT
/*
 * deps.c - which ops of other threads an op must wait for
 *
 * The capture shows one order between two ops of different threads only
 * when one had completed before the other started. The replay keeps that
 * order where it can change a result: for two accesses of the same object
 * (a file generation, a directory, a handle, or the directory tree) whose
 * byte ranges overlap and of which one writes. Metadata is the byte
 * RP_META, past any data, so "create before open" (the create writes all
 * of the new file, the open reads its metadata), "write before read of the
 * same range", "rename before use", "the lookup that found nothing before
 * the create" and "the last read before the unlink" all fall out of one
 * rule.
 *
 * Each object keeps its last RP_DLOG_N accesses (range, writing or not,
 * recorded completion, lane and index); an older access is folded into a
 * per-lane "latest evicted" list that every later access waits for, which
 * is conservative: it can only add waits for ops that started earlier,
 * never cycles (a read waits for the evicted writes, a write for both).
 * Per op and lane only the latest op to wait for is kept, and a lane's
 * matrix of "already waited for" (vector clock, up to 1024 lanes)
 * drops what an earlier op of the same lane waited for already.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "replay_i.h"

#define VC_MAX_LANES	1024

int rp_deps_init(struct rp_deps *ds, uint32_t nlanes)
{
	memset(ds, 0, sizeof(*ds));
	ds->nlanes = nlanes;
	ds->cap = 16;
	ds->d = malloc(ds->cap * sizeof(*ds->d));
	if (!ds->d)
		return -ENOMEM;
	if (nlanes <= VC_MAX_LANES) {
		ds->vc = calloc((size_t)nlanes * nlanes, sizeof(*ds->vc));
		if (!ds->vc) {
			free(ds->d);
			return -ENOMEM;
		}
	}
	return 0;
}

void rp_deps_release(struct rp_deps *ds)
{
	free(ds->d);
	free(ds->vc);
	memset(ds, 0, sizeof(*ds));
}

void rp_deps_begin(struct rp_deps *ds, uint32_t lane, uint64_t idx, uint64_t start_ns,
		   uint64_t end_ns)
{
	ds->n = 0;
	ds->lane = lane;
	ds->idx = idx;
	ds->start_ns = start_ns;
	ds->end_ns = end_ns;
}

static int dep_add(struct rp_deps *ds, uint32_t lane, uint64_t idx)
{
	uint32_t i;

	if (lane == ds->lane)
		return 0;
	/* vc holds index + 1 of the latest op waited for (0: none) */
	if (ds->vc && ds->vc[(size_t)ds->lane * ds->nlanes + lane] > idx)
		return 0;
	for (i = 0; i < ds->n; i++)
		if (ds->d[i].lane == lane) {
			if (idx > ds->d[i].idx)
				ds->d[i].idx = idx;
			return 0;
		}
	if (ds->n == ds->cap) {
		struct rp_dep *n = realloc(ds->d, 2 * ds->cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		ds->d = n;
		ds->cap *= 2;
	}
	ds->d[ds->n].lane = lane;
	ds->d[ds->n].pad = 0;
	ds->d[ds->n].idx = idx;
	ds->n++;
	return 0;
}

static int old_note(struct rp_dlog *l, uint32_t lane, uint64_t idx, int write)
{
	struct rp_dold *o;
	uint32_t i;

	for (i = 0; i < l->nold; i++)
		if (l->old[i].lane == lane)
			break;
	if (i < l->nold) {
		o = &l->old[i];
		if (write && idx + 1 > o->wr)
			o->wr = idx + 1;
		if (!write && idx + 1 > o->rd)
			o->rd = idx + 1;
		return 0;
	}
	if (l->nold == l->old_cap) {
		uint32_t cap = l->old_cap ? 2 * l->old_cap : 4;
		struct rp_dold *n = realloc(l->old, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		l->old = n;
		l->old_cap = cap;
	}
	o = &l->old[l->nold++];
	o->lane = lane;
	o->rd = write ? 0 : idx + 1;
	o->wr = write ? idx + 1 : 0;
	return 0;
}

int rp_deps_access(struct rp_deps *ds, struct rp_dlog **logp, uint64_t lo, uint64_t hi,
		   int write)
{
	struct rp_dlog *l = *logp;
	struct rp_acc *a;
	uint32_t i;

	if (!l) {
		l = calloc(1, sizeof(*l));
		if (!l)
			return -ENOMEM;
		*logp = l;
	}
	if (hi <= lo)
		hi = lo + 1;
	for (i = 0; i < l->n; i++) {
		a = &l->e[i];
		if (a->lane == ds->lane || a->end_ns > ds->start_ns)
			continue;
		if (!(a->write || write) || a->hi <= lo || hi <= a->lo)
			continue;
		if (dep_add(ds, a->lane, a->idx))
			return -ENOMEM;
	}
	for (i = 0; i < l->nold; i++) {
		const struct rp_dold *o = &l->old[i];
		uint64_t w = o->wr > (write ? o->rd : 0) ? o->wr : (write ? o->rd : 0);

		if (w && dep_add(ds, o->lane, w - 1))
			return -ENOMEM;
	}
	/* log this access, evicting the oldest */
	if (l->n < RP_DLOG_N) {
		a = &l->e[l->n++];
	} else {
		a = &l->e[l->pos];
		l->pos = (l->pos + 1) % RP_DLOG_N;
		if (old_note(l, a->lane, a->idx, (int)a->write))
			return -ENOMEM;
	}
	a->lo = lo;
	a->hi = hi;
	a->end_ns = ds->end_ns;
	a->idx = ds->idx;
	a->lane = ds->lane;
	a->write = (uint32_t)!!write;
	return 0;
}

void rp_deps_finish(struct rp_deps *ds)
{
	uint32_t i;

	if (!ds->vc)
		return;
	for (i = 0; i < ds->n; i++)
		ds->vc[(size_t)ds->lane * ds->nlanes + ds->d[i].lane] = ds->d[i].idx + 1;
}

void rp_dlog_free(struct rp_dlog *l)
{
	if (!l)
		return;
	free(l->old);
	free(l);
}
