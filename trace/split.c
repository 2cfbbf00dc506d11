// SPDX-License-Identifier: MIT
/*
 * split.c - one trace read as K windows of start time, on K threads at once,
 * each window exactly what the sequential joined reading gives for its times
 *
 * The plan comes from the chunk headers alone (no payload is read): the
 * windows' bounds T_k are chunk watermarks, so that every chunk after the
 * first one whose watermark is >= T_k+1 holds only later records. A
 * window is an ordinary merged reader (reader*.c) started at a chunk
 * (r->off) and told of each chunk it takes (r->on_chunk), with a join
 * (join.c) on it; it drops what starts before its window and stops at the
 * first joined record starting after it.
 *
 * Why it is exact. When every record keeps the promise of the chunks
 * before it (its start >= their watermarks), the sequential reader never
 * finds a late record; when, besides, it never releases a record early
 * (its memory cap), it delivers the records sorted by (start, file
 * position). A reader started at the first chunk whose t_last is >= some
 * time F then delivers every record starting at or after F, in that same
 * order, after the records before F it happens to hold (dropped). The
 * promise is checked on the headers at open (watermarks never decrease,
 * every chunk's t_first at or above the watermarks before it) and each
 * chunk's records against its header when a window decodes it (start >=
 * t_first, end <= t_last); every chunk is decoded by some window, as
 * window k decodes at least up to the first chunk whose watermark is >=
 * T_k+1 and window k+1 starts at or before the chunk after it. The early
 * release is bounded in iotap_trace_split_stats() from each chunk's
 * decoded records and latest start (conservatively: a chunk pending at
 * all counts whole, every batch at the largest size it could have).
 *
 * Cut calls. The join folds a cut piece at position p (in that order)
 * with pieces up to p + JOIN_WINDOW - 2, never further (trace_i.h). So
 * where JOIN_WINDOW - 2 records in a row hold no cut piece, nothing after
 * them was folded by anything before them: a join started fresh there
 * gives what the sequential one gives from there on. Window k > 0 starts
 * its reader at a time F before T_k, reads records from F on until
 * JOIN_WINDOW in a row held no cut piece, and starts its join there; the
 * join's output before T_k is dropped (pieces of a call begun before T_k
 * come folded into it, and not again). F is first one past the latest
 * end (t_last) of the chunks before a chunk i, the one whose watermark is
 * T_k or, where that leaves too few records before T_k, one a little
 * before it, so the reader starts at chunk i, which the window before
 * reads too (its records mostly start before T_k). If T_k comes first,
 * it tries from SPLIT_BACK records back (the watermark of an earlier
 * chunk, read from the first chunk that may hold records after it), then
 * from further back, then refuses. The window's end: once its reader's
 * watermark reaches T_k+1 every record before it was delivered, and
 * where the join holds no piece, the next chunk is not taken (reader_i.h,
 * until); while the join holds one it reads on as far as the join looks
 * ahead. So each window reads its own chunks and one chunk with the
 * next. A joined call counts in the window of its first piece (the join
 * counts calls by their start).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "iotap_base.h"
#include "trace_i.h"
#include "reader_i.h"

#define SPLIT_BYTES	(16ull << 20)		/* windows = 0: one per this much file */
#define SPLIT_BACK	(4ull * JOIN_WINDOW)	/* records a window's join starts before it, about */
#define SPLIT_TRIES	3			/* lookbacks tried, each 16 times further */
#define SPLIT_TIGHT	(16 * SPLIT_BACK)	/* records a tight start looks back over, at most */
#define SPLIT_TIGHT_CHUNKS 64			/* ... and chunks */

/* One chunk of the plan. */
struct sp_chunk {
	uint64_t off;			/* file offset of its header */
	uint64_t t_first, t_last, watermark;
	uint32_t nrec;			/* as its header says */
	uint64_t before;		/* the latest t_last of the chunks before it (0: none) */
	/* set by the windows that decode it (atomically: they agree) */
	uint32_t seen;			/* 1: the fields below hold */
	uint32_t got;			/* records decoded (known types) */
	uint32_t ndata;			/* of them, with a name or sample */
	uint64_t tmax;			/* latest start */
	uint64_t arena;			/* arena bytes its names and samples took */
};

struct iotap_trace_split {
	int fd;
	struct iotap_trace_reader *r0;	/* the header; the resync scan */
	struct sp_chunk *c;
	uint32_t nc;
	uint64_t end;			/* end of the last chunk */
	uint64_t *t;			/* window bounds: t[k] .. t[k + 1], t[nwin] = UINT64_MAX */
	uint32_t *tc;			/* the first chunk whose watermark is t[k] */
	unsigned int nwin;
	struct iotap_trace_read_stats plan;	/* file, chunks, bytes, damage */

	pthread_mutex_t lock;		/* what follows */
	struct iotap_trace_read_stats st;	/* the windows' records */
	uint64_t calls, pieces;
	unsigned char *wdone;		/* window k read to its end */
	unsigned int ndone;
	int inexact;
	/* progress (on r0, iotap_trace_split_reader()): bytes of the windows' own chunks taken */
	uint64_t progress_done;
	struct iotap_trace_split_reads reads;	/* of the windows closed (s->lock) */
	int progress_ended;
};

struct iotap_trace_window {
	struct iotap_trace_split *s;
	unsigned int k;
	uint64_t lo, hi;		/* its start times: [lo, hi) */
	uint64_t from;			/* the reader delivers every record from this start on */
	struct iotap_trace_reader *r;
	struct iotap_trace_join *j;
	const uint64_t *jcalls, *jpieces;	/* its counters (join_counters()) */
	const unsigned int *jidle;	/* 0: its join holds no piece (join_idle_word()) */
	uint32_t next;			/* the chunk its reader takes next */
	struct iotap_trace_split_reads rd;	/* this try's reads; .again: the tries before */
	struct iotap_trace_read_stats st;	/* records of [lo, hi) decoded */
	uint64_t calls, pieces;
	int err;			/* sticky */
	int end;			/* read to its end */
	int run;			/* its join is open, neither end nor error */
};

/* --- the plan ----------------------------------------------------------- */

static ssize_t sp_pread(int fd, uint8_t *buf, size_t n, uint64_t off)
{
	size_t got = 0;

	while (got < n) {
		ssize_t k = pread(fd, buf + got, n - got, (off_t)(off + got));

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -errno;
		if (k == 0)
			break;
		got += (size_t)k;
	}
	return (ssize_t)got;
}

/* Header at @off: 0, CHUNK_NEED_MORE (torn by the end), -EBADMSG, -errno: as reader.c's. */
static int sp_hdr_at(int fd, uint64_t off, struct chunk_hdr *h)
{
	uint8_t p[CHUNK_HDR_MAX];
	ssize_t got = sp_pread(fd, p, CHUNK_HDR_SIZE, off);
	int ret;

	if (got < 0)
		return (int)got;
	ret = chunk_hdr_parse(p, (size_t)got, h);
	if (ret != CHUNK_NEED_MORE || got < CHUNK_HDR_SIZE)
		return ret;
	if (le32_at(p + 8) > CHUNK_HDR_MAX)
		return -EBADMSG;
	got = sp_pread(fd, p, le32_at(p + 8), off);
	if (got < 0)
		return (int)got;
	return chunk_hdr_parse(p, (size_t)got, h);
}

/*
 * Walk the chunk headers as rd_scan() walks the chunks: the tail is
 * counted as it counts it; damage before a valid chunk, or a chunk this
 * version cannot read, is -EXDEV.
 */
static int sp_walk(struct iotap_trace_split *s, uint64_t fsize)
{
	uint64_t off = s->plan.header_bytes;
	uint32_t cap = 0;

	for (;;) {
		struct chunk_hdr h;
		struct sp_chunk *c;
		uint64_t total, at;
		int ret;

		if (off >= fsize)
			break;
		ret = sp_hdr_at(s->fd, off, &h);
		if (ret == CHUNK_NEED_MORE)
			break;
		if (ret == -EBADMSG) {
			ret = rd_resync(s->r0, off + 1, &at);
			if (ret < 0)
				return ret;
			if (ret)
				return -EXDEV;	/* a damaged region, then chunks */
			break;
		}
		if (ret < 0)
			return ret;
		total = (uint64_t)h.hdr_size + h.payload_size;
		if (off + total > fsize)
			break;
		if (!rd_readable(&h))
			return -EXDEV;
		if (s->nc == cap) {
			uint32_t ncap = cap ? 2 * cap : 256;
			void *p = realloc(s->c, ncap * sizeof(*s->c));

			if (!p)
				return -ENOMEM;
			s->c = p;
			cap = ncap;
		}
		c = &s->c[s->nc++];
		memset(c, 0, sizeof(*c));
		if (s->nc > 1)
			c->before = c[-1].nrec && c[-1].t_last > c[-1].before ? c[-1].t_last :
				    c[-1].before;
		c->off = off;
		c->t_first = h.t_first;
		c->t_last = h.t_last;
		c->watermark = h.watermark;
		c->nrec = h.nrec;
		s->plan.chunks++;
		s->plan.compressed_bytes += h.payload_size;
		s->plan.raw_bytes += h.raw_size;
		off += total;
	}
	s->end = off;
	if (fsize > off) {
		s->plan.first_bad_offset = off;
		s->plan.bytes_skipped = s->plan.tail_bytes = fsize - off;
	}
	return 0;
}

/* The promise, as the headers tell it: watermarks never decrease, no chunk starts below them. */
static int sp_promised(const struct iotap_trace_split *s)
{
	uint64_t w = 0;
	uint32_t i;

	for (i = 0; i < s->nc; i++) {
		const struct sp_chunk *c = &s->c[i];

		if (c->nrec && (c->t_first < w || c->t_first > c->t_last))
			return 0;
		if (c->watermark < w)
			return 0;
		w = c->watermark;
	}
	return 1;
}

/*
 * Window bounds: watermarks of the chunks where each 1/@k of the records
 * ends. Records, not payload bytes: a window's ops are held while it is
 * measured, and every window's ops array is the largest window's size.
 * Cut by bytes, a 100 M-record trace's 382 windows held 271 K records on
 * average and 952 K at most (records compress unevenly), a 6.5 M-record
 * bonnie++ capture's 25 windows 468 K at most; cut by records, 278 K and
 * 374 K (BENCHMARKS.md, "Session 18"). A bound whose watermark is the
 * last one's (held back by a call in flight) is left out.
 */
static int sp_bounds(struct iotap_trace_split *s, unsigned int k)
{
	uint64_t sum = 0, total = 0;
	unsigned int n = 1, i;
	uint32_t c = 0;

	s->t = calloc((size_t)k + 1, sizeof(*s->t));
	s->tc = calloc((size_t)k + 1, sizeof(*s->tc));
	if (!s->t || !s->tc)
		return -ENOMEM;
	for (c = 0; c < s->nc; c++)
		total += s->c[c].nrec;
	c = 0;
	s->t[0] = 0;
	for (i = 1; i < k; i++) {
		uint64_t want = total / k * i + total % k * i / k;
		uint64_t w;
		uint32_t f;

		while (c < s->nc && sum < want)
			sum += s->c[c++].nrec;
		if (!c)
			continue;
		w = s->c[c - 1].watermark;
		if (w <= s->t[n - 1] || w == UINT64_MAX)
			continue;
		for (f = c - 1; f > 0 && s->c[f - 1].watermark == w; f--)
			;
		s->tc[n] = f;
		s->t[n++] = w;
	}
	s->t[n] = UINT64_MAX;
	s->nwin = n;
	return 0;
}

/*
 * Where window @k's reader starts: about @back records before its start,
 * at *@first, delivering every record from *@from on (0: the file's first
 * chunk, the join from there). @tight: start at a chunk all chunks before
 * which end before *@from (their t_last, so no record of theirs starts at
 * or after it), reading only chunks that can hold such records; else at
 * the watermark of a chunk, from the first chunk whose t_last reaches it.
 * Window k's start T_k is chunk tc[k]'s watermark: that chunk's records
 * mostly start before it and count towards @back.
 *
 * In a capture a watermark is mostly held back by a call in flight and
 * jumps when it ends, so T_k is often just after the end of a chunk before
 * tc[k] (a 6.5 M-record bonnie++ capture: 2 to 5 records between the
 * tight *@from and T_k at every window): the tight start would find no
 * JOIN_WINDOW records before T_k after decoding chunks for nothing (~8 a
 * window there). It is taken only where the chunks' spans, their records
 * spread evenly over them, put twice that many in [*@from, T_k).
 */
static int sp_room(const struct iotap_trace_split *s, unsigned int k, uint32_t i, uint64_t pm)
{
	double est = 0;
	uint32_t j;

	for (j = i; j <= s->tc[k] && j < s->nc; j++) {
		const struct sp_chunk *c = &s->c[j];
		uint64_t lo = c->t_first > pm ? c->t_first : pm;
		uint64_t hi = c->t_last < s->t[k] ? c->t_last : s->t[k];

		if (c->nrec && hi > lo)
			est += (double)c->nrec * (double)(hi - lo) /
			       ((double)(c->t_last - c->t_first) + 1);
	}
	return est >= 2.0 * JOIN_WINDOW;
}

static void sp_lookback(const struct iotap_trace_split *s, unsigned int k, uint64_t back,
			int tight, uint64_t *from, uint32_t *first)
{
	uint32_t i = k ? s->tc[k] + tight : 0;
	uint64_t sum = 0;
	unsigned int n = 0;

	*from = 0;
	*first = 0;
	if (!i)
		return;
	/*
	 * Tight: the latest chunk i before which every chunk ends before T_k
	 * with room for the join in [end, T_k), chunk after chunk back from
	 * tc[k], up to SPLIT_TIGHT records and SPLIT_TIGHT_CHUNKS chunks (each
	 * try sums the chunks up to tc[k]: sp_room()). In a capture the
	 * latest end before a chunk is often a few microseconds short of T_k
	 * (a thread collected late in the round that jumps the watermark), so
	 * the first tries fail and one a chunk or three further back holds:
	 * a 6.5 M-record bonnie++ capture in 25 windows decoded 1.4 M records
	 * before the windows instead of 2.8 M with the watermark's start
	 * (BENCHMARKS.md, "Session 18").
	 */
	while (tight && i > 0 && sum < SPLIT_TIGHT && n++ < SPLIT_TIGHT_CHUNKS) {
		uint64_t pm;

		sum += s->c[--i].nrec;
		pm = s->c[i].before;
		if (i && pm < s->t[k] && sp_room(s, k, i, pm)) {
			*from = pm + 1;
			*first = i;
			return;
		}
	}
	i = s->tc[k] + tight;
	sum = 0;
	while (i > 0 && sum < back)
		sum += s->c[--i].nrec;
	if (sum < back || !i)
		return;
	/* chunks i .. tc[k] - 1 hold sum records, all from watermark(i - 1) on */
	*from = s->c[i - 1].watermark;
	while (*first < s->nc && (!s->c[*first].nrec || s->c[*first].t_last < *from))
		(*first)++;
}

/**
 * iotap_trace_split_open - plan the windows of a trace (iotap_trace.h)
 * @out:  the split
 * @path: the trace
 * @o:    windows wanted and the smallest file to split; NULL: one per 16 MiB
 *
 * Return: 0; -EXDEV where the split could not be exact (read the file
 * whole); -errno as iotap_trace_reader_open().
 */
int iotap_trace_split_open(struct iotap_trace_split **out, const char *path,
			   const struct iotap_trace_split_opts *o)
{
	struct iotap_trace_split *s;
	unsigned int k;
	struct stat st;
	int ret;

	if (!out || !path)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	pthread_mutex_init(&s->lock, NULL);
	s->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (s->fd < 0) {
		ret = -errno;
		free(s);
		return ret;
	}
	ret = iotap_trace_reader_open_fd(&s->r0, s->fd, 0);
	if (ret)
		goto err;
	if (fstat(s->fd, &st) < 0) {
		ret = -errno;
		goto err;
	}
	s->plan.file_bytes = (uint64_t)st.st_size;
	s->plan.header_bytes = s->r0->stats.header_bytes;
	if (o && s->plan.file_bytes < o->min_bytes) {
		ret = -EXDEV;
		goto err;
	}
	ret = sp_walk(s, s->plan.file_bytes);
	if (ret)
		goto err;
	if (!sp_promised(s)) {
		ret = -EXDEV;
		goto err;
	}
	k = o ? o->windows : 0;
	if (!k)
		k = (unsigned int)(s->plan.file_bytes / SPLIT_BYTES) + 1;
	if (o && o->records) {
		uint64_t total = 0, kr;
		uint32_t i;

		for (i = 0; i < s->nc; i++)
			total += s->c[i].nrec;
		kr = (total + o->records - 1) / o->records;
		if (kr > k)
			k = (unsigned int)(kr < 100000 ? kr : 100000);
	}
	if (o && o->min_chunks && k > s->nc / o->min_chunks)
		k = s->nc / o->min_chunks ? s->nc / o->min_chunks : 1;
	if (k > s->nc)
		k = s->nc ? s->nc : 1;
	ret = sp_bounds(s, k);
	if (ret)
		goto err;
	s->wdone = calloc(s->nwin, 1);
	if (!s->wdone) {
		ret = -ENOMEM;
		goto err;
	}
	*out = s;
	return 0;

err:
	iotap_trace_split_close(s);
	return ret;
}

unsigned int iotap_trace_split_count(const struct iotap_trace_split *s)
{
	return s->nwin;
}

const struct iotap_trace_header *iotap_trace_split_header(const struct iotap_trace_split *s)
{
	return iotap_trace_reader_header(s->r0);
}

void iotap_trace_split_range(const struct iotap_trace_split *s, unsigned int k, uint64_t *lo,
			     uint64_t *hi)
{
	*lo = k < s->nwin ? s->t[k] : UINT64_MAX;
	*hi = k < s->nwin ? s->t[k + 1] : UINT64_MAX;
}

struct iotap_trace_reader *iotap_trace_split_reader(struct iotap_trace_split *s)
{
	return s->r0;
}

void iotap_trace_split_progress_end(struct iotap_trace_split *s, int done)
{
	if (!s->r0 || !s->r0->progress || s->progress_ended)
		return;
	s->progress_ended = 1;
	s->r0->progress(s->r0->progress_arg, s->plan.file_bytes, s->plan.file_bytes, done ? 1 : -1);
}

void iotap_trace_split_reads(struct iotap_trace_split *s, struct iotap_trace_split_reads *out)
{
	pthread_mutex_lock(&s->lock);
	*out = s->reads;
	pthread_mutex_unlock(&s->lock);
	out->chunks = s->nc;
}

uint64_t iotap_trace_split_records(const struct iotap_trace_split *s, unsigned int k)
{
	uint32_t i = k ? s->tc[k] : 0, end = k + 1 < s->nwin ? s->tc[k + 1] + 1 : s->nc;
	uint64_t n = 0;

	if (k >= s->nwin)
		return 0;
	/* chunk tc[k + 1] too: its records mostly start before the window's end */
	for (; i < end && i < s->nc; i++)
		n += s->c[i].nrec;
	return n;
}

void iotap_trace_split_close(struct iotap_trace_split *s)
{
	if (!s)
		return;
	iotap_trace_split_progress_end(s, 0);
	iotap_trace_reader_close(s->r0);
	if (s->fd >= 0)
		close(s->fd);
	pthread_mutex_destroy(&s->lock);
	free(s->c);
	free(s->t);
	free(s->tc);
	free(s->wdone);
	free(s);
}

/* --- windows ------------------------------------------------------------ */

/* The reader took a chunk: is it the plan's next, does it keep its header's word; count ours. */
static int sp_on_chunk(void *arg, const struct chunk_hdr *h, uint64_t at, const struct rd_batch *b)
{
	struct iotap_trace_window *w = arg;
	struct iotap_trace_split *s = w->s;
	struct sp_chunk *c;
	struct rd_bstats part;
	uint32_t i;

	(void)h;
	if (w->next >= s->nc || s->c[w->next].off != at || w->r->stats.chunks_bad)
		return -EXDEV;	/* a chunk before it did not decode */
	c = &s->c[w->next++];
	w->rd.taken++;
	if (w->k && c - s->c < s->tc[w->k])
		w->rd.back++;
	else if (w->k + 1 < s->nwin && c - s->c > s->tc[w->k + 1])
		w->rd.ahead++;
	if (b->nrec && (b->tmin < c->t_first || b->bs.tend > c->t_last))
		return -EXDEV;
	if (!__atomic_load_n(&c->seen, __ATOMIC_ACQUIRE)) {
		__atomic_store_n(&c->got, b->nrec, __ATOMIC_RELAXED);
		__atomic_store_n(&c->ndata, b->ndata, __ATOMIC_RELAXED);
		__atomic_store_n(&c->tmax, b->nrec ? b->tmax : 0, __ATOMIC_RELAXED);
		__atomic_store_n(&c->arena, (uint64_t)b->arena_len, __ATOMIC_RELAXED);
		__atomic_store_n(&c->seen, 1, __ATOMIC_RELEASE);
	}
	if (s->r0->progress && c - s->c >= (w->k ? s->tc[w->k] : 0) &&
	    c - s->c < (w->k + 1 < s->nwin ? s->tc[w->k + 1] : s->nc)) {
		/* the window's own chunks: each counted once, whichever window reads it too */
		uint64_t size = (c + 1 < s->c + s->nc ? c[1].off : s->end) - c->off;

		s->r0->progress(s->r0->progress_arg,
				__atomic_add_fetch(&s->progress_done, size, __ATOMIC_RELAXED),
				s->plan.file_bytes, 0);
	}
	if (!b->nrec || b->tmax < w->lo || b->tmin >= w->hi)
		return 0;
	if (b->tmin >= w->lo && b->tmax < w->hi) {
		rd_stats_add(&w->st, &b->bs);
		return 0;
	}
	memset(&part, 0, sizeof(part));
	for (i = 0; i < b->nrec; i++) {
		const struct iotap_trace_rec *rec = brec(b, i);

		if (rec->time_ns >= w->lo && rec->time_ns < w->hi)
			rd_bstats_rec(&part, rec);
	}
	rd_stats_add(&w->st, &part);
	return 0;
}

static int sp_fail(struct iotap_trace_window *w, int err)
{
	w->run = 0;
	w->err = err;
	return err;
}

/*
 * Start the reader @back records or so before the window (@tight:
 * sp_lookback()), read to where JOIN_WINDOW records in a row held no cut
 * piece, start the join there. 0, 1: T_k came first (try from further
 * back), -errno.
 */
static int sp_start(struct iotap_trace_window *w, uint64_t back, int tight)
{
	struct iotap_trace_split *s = w->s;
	const struct iotap_trace_rec *p;
	uint64_t run = 0;
	uint32_t first;
	int ret;

	iotap_trace_join_close(w->j);
	w->j = NULL;
	iotap_trace_reader_close(w->r);
	w->r = NULL;
	memset(&w->st, 0, sizeof(w->st));
	/* a try before this one: its chunks were taken for nothing */
	w->rd.again += w->rd.taken;
	w->rd.taken = w->rd.back = w->rd.ahead = 0;
	sp_lookback(s, w->k, back, tight, &w->from, &first);
	ret = iotap_trace_reader_open_fd(&w->r, s->fd, 0);
	if (ret)
		return ret;
	w->r->off = first < s->nc ? s->c[first].off : s->end;
	w->r->on_chunk = sp_on_chunk;
	w->r->on_chunk_arg = w;
	w->next = first;
	while (first) {		/* the file's first chunk: the join from the start */
		ret = iotap_trace_reader_next_ref(w->r, &p);
		if (ret < 0)
			return ret;
		if (ret == 0)
			break;
		if (p->time_ns < w->from)
			continue;
		if (p->time_ns >= w->lo)
			return 1;
		run = rec_is_cut(p) ? 0 : run + 1;
		if (run >= JOIN_WINDOW)
			break;
	}
	ret = iotap_trace_join_open(&w->j, w->r);
	if (ret)
		return ret;
	join_counters(w->j, &w->jcalls, &w->jpieces);
	w->jidle = join_idle_word(w->j);
	join_count_range(w->j, w->lo, w->hi);
	if (w->hi != UINT64_MAX) {
		/* stop at the window's end without the chunks after it, where the join allows */
		w->r->until = w->hi;
		w->r->until_idle = join_idle_word(w->j);
	}
	w->run = 1;
	return 0;
}

/**
 * iotap_trace_split_window_open - window @k of @s, to read on any thread
 * @s: split
 * @k: 0 .. iotap_trace_split_count() - 1
 * @w: the window
 *
 * Return: 0, -EINVAL, -ENOMEM.
 */
int iotap_trace_split_window_open(struct iotap_trace_split *s, unsigned int k,
				  struct iotap_trace_window **w)
{
	struct iotap_trace_window *x;

	if (!s || !w || k >= s->nwin)
		return -EINVAL;
	x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	x->s = s;
	x->k = k;
	x->lo = s->t[k];
	x->hi = s->t[k + 1];
	*w = x;
	return 0;
}

/* The window's end: the reader's stream was exact throughout. */
static int sp_end(struct iotap_trace_window *w)
{
	w->run = 0;
	if (w->r->stats.late_records || w->r->stats.chunks_bad)
		return sp_fail(w, -EXDEV);
	w->end = 1;
	w->calls = *w->jcalls;
	w->pieces = *w->jpieces;
	return 0;
}

/* The first call, or after the end or an error. */
static __attribute__((noinline)) int sp_next_slow(struct iotap_trace_window *w)
{
	uint64_t back = SPLIT_BACK;
	int i, ret;

	if (w->err)
		return w->err;
	if (w->end)
		return 0;
	/* a chunk's worth first, then further back each time */
	ret = sp_start(w, back, 1);
	for (i = 0; i < SPLIT_TRIES && ret == 1; i++, back *= 16)
		ret = sp_start(w, back, 0);
	if (ret)
		return sp_fail(w, ret == 1 ? -EXDEV : ret);
	return 1;
}

/*
 * The common path takes what the join's own fast path would pass through
 * (iotap_trace_join_next_ref(): the join holds no piece, the reader's run
 * has a record that is no cut piece) straight from the reader's run, while
 * the records stay inside the window; the run's records all lie in one
 * batch, valid until the reader's next slow step, i.e. the next call.
 * Anything else goes one record through iotap_trace_window_next_ref().
 */
int iotap_trace_window_next_refs(struct iotap_trace_window *w, const struct iotap_trace_rec **recs,
				 unsigned int max)
{
	const struct iotap_trace_rec *p;
	unsigned int n = 0;

	if (!max)
		return -EINVAL;
	if (__builtin_expect(w->run && !*w->jidle, 1)) {
		struct rd_run *run = rd_run_of(w->r);

		while (n < max && (p = rd_run_next(run))) {
			if (__builtin_expect(rec_is_cut(p) || p->time_ns >= w->hi ||
					     p->time_ns < w->lo, 0)) {
				run->pos--;	/* not taken: the slow path decides */
				break;
			}
			recs[n++] = p;
		}
		if (n)
			return (int)n;
	}
	return iotap_trace_window_next_ref(w, &recs[0]);
}

int iotap_trace_window_next_ref(struct iotap_trace_window *w, const struct iotap_trace_rec **rec)
{
	const struct iotap_trace_rec *p;
	int ret;

	if (__builtin_expect(!w->run, 0)) {
		ret = sp_next_slow(w);
		if (ret <= 0)
			return ret;
	}
	for (;;) {
		ret = iotap_trace_join_next_ref(w->j, &p);
		if (__builtin_expect(ret <= 0 || p->time_ns >= w->hi, 0)) {
			if (ret < 0)
				return sp_fail(w, ret);
			return sp_end(w);
		}
		if (p->time_ns >= w->lo) {
			*rec = p;
			return 1;
		}
	}
}

/* Add the records of @a to @st. */
static void sp_stats_add(struct iotap_trace_read_stats *st, const struct iotap_trace_read_stats *a)
{
	unsigned int i;

	if (!a->records)
		return;
	if (!st->records || a->t_first_ns < st->t_first_ns)
		st->t_first_ns = a->t_first_ns;
	if (a->t_last_ns > st->t_last_ns)
		st->t_last_ns = a->t_last_ns;
	st->records += a->records;
	for (i = 0; i < IOTAP_REC_TYPE_MAX; i++)
		st->records_by_type[i] += a->records_by_type[i];
	st->lost_records += a->lost_records;
	st->has_end |= a->has_end;
}

void iotap_trace_window_close(struct iotap_trace_window *w)
{
	struct iotap_trace_split *s;

	if (!w)
		return;
	s = w->s;
	pthread_mutex_lock(&s->lock);
	if (w->err == -EXDEV)
		s->inexact = 1;
	s->reads.taken += w->rd.taken + w->rd.again;
	s->reads.back += w->rd.back;
	s->reads.ahead += w->rd.ahead;
	s->reads.again += w->rd.again;
	if (w->end && !s->wdone[w->k]) {
		s->wdone[w->k] = 1;
		s->ndone++;
		sp_stats_add(&s->st, &w->st);
		s->calls += w->calls;
		s->pieces += w->pieces;
	}
	pthread_mutex_unlock(&s->lock);
	iotap_trace_join_close(w->j);
	iotap_trace_reader_close(w->r);
	free(w);
}

/* --- the sequential reader's memory cap --------------------------------- */

/*
 * Could the sequential reader have released a record early? After chunk j
 * it holds the records of chunks i <= j that start at or after watermark
 * W_j, at most those of the chunks whose latest start is >= W_j (chunk
 * i's for j in [i, e_i], the watermarks never decreasing), in batches of
 * at most rd_batch_mem() of the largest batch any chunk could leave
 * (batches are recycled: the largest record, data and arena arrays met).
 */
static int sp_early(const struct iotap_trace_split *s)
{
	uint64_t maxn = 0, maxd = 0, maxa = 0, bmem, n = 0, nb = 0;
	int64_t *dn, *db;
	struct rd_batch fake;
	uint32_t i;
	int early = 0;

	if (!s->nc)
		return 0;
	dn = calloc((size_t)s->nc + 1, sizeof(*dn));
	db = calloc((size_t)s->nc + 1, sizeof(*db));
	if (!dn || !db) {
		free(dn);
		free(db);
		return -ENOMEM;
	}
	for (i = 0; i < s->nc; i++) {
		const struct sp_chunk *c = &s->c[i];
		int seen = __atomic_load_n(&c->seen, __ATOMIC_ACQUIRE);
		uint64_t got = seen ? c->got : c->nrec;
		uint64_t tmax = seen ? c->tmax : c->t_last;
		uint32_t lo = i, hi = s->nc;

		if (got > maxn)
			maxn = got;
		if (seen && c->ndata > maxd)
			maxd = c->ndata;
		if (seen && c->arena > maxa)
			maxa = c->arena;
		if (!seen)
			maxd = maxa = UINT32_MAX / 4;	/* not decoded: no bound but the cap's */
		if (!got || c->watermark > tmax)
			continue;
		while (hi - lo > 1) {	/* the last j >= i with W_j <= tmax */
			uint32_t mid = lo + (hi - lo) / 2;

			if (s->c[mid].watermark <= tmax)
				lo = mid;
			else
				hi = mid;
		}
		dn[i] += (int64_t)got;
		dn[lo + 1] -= (int64_t)got;
		db[i]++;
		db[lo + 1]--;
	}
	memset(&fake, 0, sizeof(fake));
	maxn += (2u << 20) / REC_STRIDE + 2;	/* a roomy batch: whole 2 MiB extents */
	fake.cap = (uint32_t)(maxn < CHUNK_REC_MAX ? maxn : CHUNK_REC_MAX);
	fake.data_cap = (uint32_t)(maxd * 2 + 16 < UINT32_MAX ? maxd * 2 + 16 : UINT32_MAX);
	fake.arena_cap = 2 * (maxa + UINT16_MAX + 16 + sizeof(struct iotap_trace_sample)) + 256;
	bmem = rd_batch_mem(&fake);
	for (i = 0; i < s->nc && !early; i++) {
		n += (uint64_t)dn[i];
		nb += (uint64_t)db[i];
		early = n > RD_PENDING_MAX || nb * bmem > RD_PENDING_MEM;
	}
	free(dn);
	free(db);
	return early;
}

/**
 * iotap_trace_split_stats - the sequential reading's statistics
 * @s:           split, every window read to its end and closed
 * @st:          filled as iotap_trace_reader_stats() after a sequential reading
 * @join_calls:  as iotap_trace_join_stats()'s @calls
 * @join_pieces: and @pieces
 *
 * Return: 0; -EBUSY: a window was not read to its end; -EXDEV: the
 * windows may differ from the sequential reading (discard them).
 */
int iotap_trace_split_stats(const struct iotap_trace_split *s, struct iotap_trace_read_stats *st,
			    uint64_t *join_calls, uint64_t *join_pieces)
{
	struct iotap_trace_split *m = (struct iotap_trace_split *)s;
	int inexact, ret;
	unsigned int done;

	pthread_mutex_lock(&m->lock);
	*st = s->plan;
	sp_stats_add(st, &s->st);
	*join_calls = s->calls;
	*join_pieces = s->pieces;
	inexact = s->inexact;
	done = s->ndone;
	pthread_mutex_unlock(&m->lock);
	if (inexact)
		return -EXDEV;
	if (done < s->nwin)
		return -EBUSY;
	ret = sp_early(s);
	if (ret < 0)
		return ret;
	return ret ? -EXDEV : 0;
}
