// SPDX-License-Identifier: MIT
/*
 * join.c - a reader's records with the pieces of one cut read()/write() joined
 *
 * In direct_io mode the kernel sends one application read() or write() as
 * one request unless it does not fit: a request holds at most max_write
 * (max_read) bytes and max_pages pages of the caller's buffer, so a longer
 * call, or one from a buffer that needs one page more than max_pages,
 * arrives in pieces, one after the other from the caller's thread, each
 * where the previous one ended.
 *
 * Traces whose header's fuse field says calls=1 (fs/calls.c) say which
 * records are pieces: every piece but the last is flagged IOTAP_OPF_CUT,
 * every piece but the first IOTAP_OPF_CONT, from the call the daemon saw
 * the thread blocked in. This filter folds exactly those: a CUT READ or
 * WRITE takes the same thread's next record if it is a CONT piece of the
 * same op, file and handle that starts where the call so far ends, and
 * goes on while the piece taken is CUT itself. Two independent calls are
 * never joined (neither side is flagged).
 *
 * Older traces (no calls field) flagged only the first piece of a call cut
 * at the page cap, by its size alone (more than max_pages - 1 pages, less
 * than max_write): there a CUT record takes the thread's next contiguous
 * READ/WRITE on the handle, and more while each piece before was whole
 * (max_write bytes), as the kernel sends them -- an uncut call of just
 * such a size was joined with the next one by mistake.
 *
 * The joined record keeps the first piece's start and ends with the last
 * piece; its length is the pieces' sum and its result what the kernel
 * returns to the caller (the bytes done, or the first piece's error);
 * CUT and CONT are cleared. Records in between (other threads) keep their
 * order after it. Memory: a ring of JOIN_WINDOW records with copied names.
 * A record that is not a cut piece while the ring is empty -- almost all
 * of them -- passes through without a copy (iotap_trace_join_next_ref).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "trace_i.h"

struct join_slot {
	struct iotap_trace_rec rec;
	char *name;			/* copy of rec.name */
	size_t name_cap;
	bool dead;			/* folded into an earlier record */
};

struct iotap_trace_join {
	struct iotap_trace_reader *r;
	struct rd_run *run;		/* the reader's fast path */
	unsigned int head, n;		/* live slots: head .. head + n - 1 */
	/*
	 * Slots at and above it were never written, nor set: the ring is
	 * 1.1 MB that a capture without cut calls never touches. Freeing the
	 * names of all of it at close faulted every page in (~270 page faults,
	 * a few ms of a short report); so did calloc() clearing it where it
	 * came from the heap, once a join for each time window of a report
	 * (report_par.c: 72% of a 39-window report's page faults, 43 MB).
	 * Slots are taken in ring order, so those below it are all set.
	 */
	unsigned int touched;
	uint64_t max_write;		/* from the header, 0: not known */
	bool exact;			/* the header says calls=1: pieces are flagged CONT */
	uint64_t joined;		/* pieces folded into an earlier record */
	uint64_t calls;			/* records that took at least one piece */
	uint64_t count_lo, count_hi;	/* ... of those starting in [lo, hi) (join_count_range()) */
	int eof;			/* 1: the reader is done; err its last result */
	int err;
	struct join_slot ring[JOIN_WINDOW];	/* last: not cleared (touched) */
};

uint64_t iotap_trace_fuse_field(const char *fuse, const char *key)
{
	size_t klen = strlen(key);
	const char *p = fuse;

	while (p && *p) {
		while (*p == ' ' || *p == ',')
			p++;
		if (!strncmp(p, key, klen) && p[klen] == '=')
			return strtoull(p + klen + 1, NULL, 10);
		p += strcspn(p, " ,");
	}
	return 0;
}

int iotap_trace_join_open(struct iotap_trace_join **out, struct iotap_trace_reader *r)
{
	struct iotap_trace_join *j = malloc(sizeof(*j));

	if (!j)
		return -ENOMEM;
	memset(j, 0, offsetof(struct iotap_trace_join, ring));
	j->r = r;
	j->run = rd_run_of(r);
	j->max_write = iotap_trace_fuse_field(iotap_trace_reader_header(r)->fuse, "max_write");
	j->exact = iotap_trace_fuse_field(iotap_trace_reader_header(r)->fuse, "calls") == 1;
	j->count_hi = UINT64_MAX;
	*out = j;
	return 0;
}

void iotap_trace_join_close(struct iotap_trace_join *j)
{
	unsigned int i;

	if (!j)
		return;
	for (i = 0; i < j->touched; i++)
		free(j->ring[i].name);
	free(j);
}

void join_counters(const struct iotap_trace_join *j, const uint64_t **calls, const uint64_t **pieces)
{
	*calls = &j->calls;
	*pieces = &j->joined;
}

void join_count_range(struct iotap_trace_join *j, uint64_t lo, uint64_t hi)
{
	j->count_lo = lo;
	j->count_hi = hi;
}

const unsigned int *join_idle_word(const struct iotap_trace_join *j)
{
	return &j->n;
}

void iotap_trace_join_stats(const struct iotap_trace_join *j, uint64_t *calls, uint64_t *pieces)
{
	*calls = j ? j->calls : 0;
	*pieces = j ? j->joined : 0;
}

static struct join_slot *slot_at(struct iotap_trace_join *j, unsigned int k)
{
	return &j->ring[(j->head + k) % JOIN_WINDOW];
}

/* Copy @rec (and its name) to the tail of the ring: 0 or -ENOMEM. */
static int push(struct iotap_trace_join *j, const struct iotap_trace_rec *rec)
{
	unsigned int at = (j->head + j->n) % JOIN_WINDOW;
	struct join_slot *s = &j->ring[at];

	if (at >= j->touched) {
		/* the first time round the ring: @at is j->touched */
		s->name = NULL;
		s->name_cap = 0;
		j->touched = at + 1;
	}
	rec_copy_out(&s->rec, rec);	/* @rec may be a head only (next_ref) */
	s->dead = false;
	if (rec->name) {
		if (rec->name_len + 1 > s->name_cap) {
			char *p = realloc(s->name, rec->name_len + 1);

			if (!p)
				return -ENOMEM;
			s->name = p;
			s->name_cap = rec->name_len + 1;
		}
		memcpy(s->name, rec->name, rec->name_len);
		s->name[rec->name_len] = '\0';
		s->rec.name = s->name;
	}
	j->n++;
	return 0;
}

/* Read one more record into the ring: 1, 0 (end or window full), -errno. */
static int fill(struct iotap_trace_join *j)
{
	const struct iotap_trace_rec *rec;
	int ret;

	if (j->eof || j->n >= JOIN_WINDOW - 1)
		return 0;
	ret = iotap_trace_reader_next_ref(j->r, &rec);
	if (ret <= 0) {
		j->eof = 1;
		j->err = ret;
		return ret;
	}
	ret = push(j, rec);
	return ret ? ret : 1;
}

/* Does @h's call count in @j's counters (join_count_range())? */
static bool counted(const struct iotap_trace_join *j, const struct iotap_trace_rec *h)
{
	return h->time_ns >= j->count_lo && h->time_ns < j->count_hi;
}

/* Fold @c, the next piece of @h's call, into @h. */
static void fold(struct iotap_trace_rec *h, const struct iotap_trace_rec *c)
{
	uint64_t end = c->time_ns + c->dur_ns;

	h->length += c->length;
	if (c->result > 0)
		h->result += c->result;
	if (end > h->time_ns + h->dur_ns)
		h->dur_ns = end - h->time_ns;
	h->flags &= ~(IOTAP_OPF_CUT | IOTAP_OPF_CONT);
}

/* The ring's first record is a cut piece: fold its continuation into it. */
static int resolve(struct iotap_trace_join *j)
{
	struct iotap_trace_rec *h = &slot_at(j, 0)->rec;
	unsigned int k = 1;
	int ret;

	for (;;) {
		struct join_slot *s;
		const struct iotap_trace_rec *c;

		if (k >= j->n) {
			ret = fill(j);
			if (ret < 0)
				return ret;
			if (!ret)
				return 0;
			h = &slot_at(j, 0)->rec;
		}
		s = slot_at(j, k++);
		c = &s->rec;
		if (s->dead || c->type != IOTAP_REC_OP || c->tid != h->tid)
			continue;
		if (j->exact) {
			/* the thread's next op: its flagged next piece, or the call ended */
			bool more = c->flags & IOTAP_OPF_CUT;

			if (!(c->flags & IOTAP_OPF_CONT) || c->op != h->op || c->fh != h->fh ||
			    c->file != h->file || c->offset != h->offset + h->length)
				return 0;
			if (counted(j, h)) {
				j->calls += !!(h->flags & IOTAP_OPF_CUT);
				j->joined++;
			}
			fold(h, c);
			s->dead = true;
			if (!more)
				return 0;
			continue;
		}
		/* the thread's next op: the next piece, or something else */
		if (c->op != h->op || c->fh != h->fh || c->file != h->file || rec_is_cut(c) ||
		    c->offset != h->offset + h->length || h->result != (int64_t)h->length)
			return 0;
		if (counted(j, h)) {
			j->calls += !!(h->flags & IOTAP_OPF_CUT);
			j->joined++;
		}
		fold(h, c);
		s->dead = true;
		if (!j->max_write || c->length != j->max_write || c->result != (int64_t)c->length)
			return 0;
	}
}

/*
 * Everything but a record passed through. @have: the fast path read @ret
 * and @p from the (empty-ringed) reader: the end, an error or a cut piece.
 */
static __attribute__((noinline)) int join_slow(struct iotap_trace_join *j, int have, int ret,
					       const struct iotap_trace_rec *p,
					       const struct iotap_trace_rec **rec)
{
	struct join_slot *s;

	if (have) {
		if (ret <= 0)
			return ret;
		ret = push(j, p);
		if (ret)
			return ret;
	}
	for (;;) {
		if (!j->n) {
			if (j->eof)
				return j->err;
			ret = iotap_trace_reader_next_ref(j->r, &p);
			if (ret <= 0)
				return ret;
			if (!rec_is_cut(p)) {
				*rec = p;
				return 1;
			}
			ret = push(j, p);
			if (ret)
				return ret;
		}
		s = slot_at(j, 0);
		if (!s->dead)
			break;
		j->head = (j->head + 1) % JOIN_WINDOW;
		j->n--;
	}
	if (rec_is_cut(&s->rec)) {
		ret = resolve(j);
		if (ret < 0)
			return ret;
	}
	*rec = &s->rec;		/* the slot is not reused before the next call */
	j->head = (j->head + 1) % JOIN_WINDOW;
	j->n--;
	return 1;
}

int iotap_trace_join_next_ref(struct iotap_trace_join *j, const struct iotap_trace_rec **rec)
{
	const struct iotap_trace_rec *p;

	/* the common case: the reader's fast path has a record, not a cut piece: no copy */
	if (!j->n && (p = rd_run_next(j->run))) {
		if (!rec_is_cut(p)) {
			*rec = p;
			return 1;
		}
		return join_slow(j, 1, 1, p, rec);
	}
	return join_slow(j, 0, 0, NULL, rec);
}

int iotap_trace_join_next(struct iotap_trace_join *j, struct iotap_trace_rec *rec)
{
	const struct iotap_trace_rec *p;
	int ret = iotap_trace_join_next_ref(j, &p);

	return rec_next_copy(ret, rec, p);
}
