// SPDX-License-Identifier: MIT
/*
 * stat_points.c - a systematic sample of data ops for the seek maps
 *
 * An offset-over-time picture needs points, not counters, but a trace may
 * hold billions of data ops. Keep one op in every `every`; when the buffer
 * fills, drop every other point and double `every`. The sample stays evenly
 * spread over the trace and the buffer never grows past its first size, so
 * a busy file's sequential runs and random scatter both stay visible.
 */
#include <stdlib.h>
#include <string.h>

#include "stat_i.h"

void points_init(struct iotap_points *s, uint64_t cap)
{
	memset(s, 0, sizeof(*s));
	s->cap = cap;
	s->every = 1;
	s->skip = 1;
}

void points_release(struct iotap_points *s)
{
	free(s->p);
	memset(s, 0, sizeof(*s));
}

void points_add(struct iotap_points *s, const struct iotap_trace_rec *r)
{
	struct iotap_point *pt;
	uint64_t i;

	if (--s->skip)
		return;
	s->skip = s->every;
	if (!s->p) {
		if (!s->cap)
			return;
		s->p = malloc(s->cap * sizeof(*s->p));
		if (!s->p) {
			s->cap = 0;
			return;
		}
	}
	if (s->n == s->cap) {
		for (i = 0; i < s->n / 2; i++)
			s->p[i] = s->p[2 * i + 1];
		s->n /= 2;
		s->every *= 2;
		s->skip = s->every;
	}
	pt = &s->p[s->n++];
	pt->t = r->time_ns;
	pt->file = r->file;
	pt->off = r->offset;
	pt->len = r->length > UINT32_MAX ? UINT32_MAX : (uint32_t)r->length;
	pt->write = r->op == IOTAP_OP_WRITE;
}
