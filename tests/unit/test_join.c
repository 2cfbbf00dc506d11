// SPDX-License-Identifier: MIT
/*
 * test_join.c - trace/join.c: the pieces of a cut read()/write() come back
 * as one record, and nothing else changes
 *
 * Writes a trace as the capture would (header fuse field, max_write 512 KiB)
 * and reads it back through struct iotap_trace_join:
 *  - a 1 MiB write cut in three pieces (524,272 cut + 524,288 + 16) with
 *    another thread's records and a NAME in between: one WRITE of 1 MiB,
 *    start of the first piece, end of the last; the others in order;
 *  - a cut read whose remainder comes after a whole-sized piece that ends
 *    the call (the next op of the thread is not contiguous): joined up to it;
 *  - a cut piece followed by a new cut call of the same thread: not joined;
 *  - a cut piece whose continuation never comes (end of file): as it was;
 *  - without a fuse field, only the next piece is taken;
 *  - with calls=1 (the daemon flags every piece: CUT but the last, CONT
 *    but the first) exactly the flagged pieces fold: a call cut at the
 *    page cap, one longer than max_write, and never an uncut call of the
 *    cut size and the thread's next contiguous call, nor two whole ones.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "tap.h"
#include "trace_test.h"

#define MW 524288u

static uint64_t t_now = 1000000;

static struct iotap_trace_rec data_op(unsigned int op, uint32_t tid, uint64_t fh,
				      uint64_t off, uint64_t len, bool cut)
{
	struct iotap_trace_rec r;

	memset(&r, 0, sizeof(r));
	r.type = IOTAP_REC_OP;
	r.op = (uint16_t)op;
	r.tid = r.pid = tid;
	r.file = 100 + fh;
	r.fh = fh;
	r.offset = off;
	r.length = len;
	r.result = (int64_t)len;
	r.flags = cut ? IOTAP_OPF_CUT : 0;
	r.time_ns = t_now;
	r.dur_ns = 1000;
	t_now += 2000;
	return r;
}

static void put(struct iotap_trace_writer *w, struct iotap_trace_rec r)
{
	if (iotap_trace_writer_append(w, &r))
		ok(0, "append");
}

static const char *write_trace(const char *name, const char *fuse)
{
	const char *path = test_path(name);
	struct iotap_trace_writer *w;
	struct iotap_trace_header h;
	struct iotap_trace_rec nm;

	iotap_trace_header_init(&h, IOTAP_SOURCE_CAPTURE);
	h.fuse = fuse;
	if (iotap_trace_writer_open(&w, path, &h, 0)) {
		ok(0, "open %s", path);
		return path;
	}
	/* 1: 1 MiB write of tid 7 in three pieces, tid 8 in between */
	put(w, data_op(IOTAP_OP_WRITE, 7, 1, 0, MW - 16, true));
	put(w, data_op(IOTAP_OP_READ, 8, 2, 0, 4096, false));
	memset(&nm, 0, sizeof(nm));
	nm.type = IOTAP_REC_NAME;
	nm.file = 555;
	nm.name = "between";
	nm.name_len = 7;
	nm.time_ns = t_now;
	t_now += 10;
	put(w, nm);
	put(w, data_op(IOTAP_OP_WRITE, 7, 1, MW - 16, MW, false));
	put(w, data_op(IOTAP_OP_READ, 8, 2, 4096, 4096, false));
	put(w, data_op(IOTAP_OP_WRITE, 7, 1, 2 * MW - 16, 16, false));
	/* 2: cut read + one whole piece, then a seek elsewhere */
	put(w, data_op(IOTAP_OP_READ, 7, 3, 0, MW - 512, true));
	put(w, data_op(IOTAP_OP_READ, 7, 3, MW - 512, MW, false));
	put(w, data_op(IOTAP_OP_READ, 7, 3, 5 * MW, 4096, false));
	/* 3: a cut piece, then a new cut call: not joined */
	put(w, data_op(IOTAP_OP_WRITE, 9, 4, 0, MW - 16, true));
	put(w, data_op(IOTAP_OP_WRITE, 9, 4, MW - 16, MW - 16, true));
	put(w, data_op(IOTAP_OP_WRITE, 9, 4, 2 * MW - 32, 16, false));
	/* 4: a cut piece at the end of the file */
	put(w, data_op(IOTAP_OP_WRITE, 10, 5, 0, MW - 16, true));
	if (iotap_trace_writer_close(w))
		ok(0, "close");
	return path;
}

static struct iotap_trace_rec piece(unsigned int op, uint32_t tid, uint64_t fh, uint64_t off,
				    uint64_t len, uint32_t flags)
{
	struct iotap_trace_rec r = data_op(op, tid, fh, off, len, false);

	r.flags = flags;
	return r;
}

/* A calls=1 trace: pieces flagged on both sides. */
static const char *write_exact(const char *name)
{
	const char *path = test_path(name);
	const uint32_t cut = IOTAP_OPF_CUT, cont = IOTAP_OPF_CONT;
	struct iotap_trace_writer *w;
	struct iotap_trace_header h;

	iotap_trace_header_init(&h, IOTAP_SOURCE_CAPTURE);
	h.fuse = "max_write=524288 max_pages=128 page_size=4096 calls=1";
	if (iotap_trace_writer_open(&w, path, &h, 0)) {
		ok(0, "open %s", path);
		return path;
	}
	/* 1: page-cap cut 1 MiB write in three pieces, tid 8 in between */
	put(w, piece(IOTAP_OP_WRITE, 7, 1, 0, MW - 16, cut));
	put(w, piece(IOTAP_OP_READ, 8, 2, 0, 4096, 0));
	put(w, piece(IOTAP_OP_WRITE, 7, 1, MW - 16, MW, cut | cont));
	put(w, piece(IOTAP_OP_WRITE, 7, 1, 2 * MW - 16, 16, cont));
	/* 2: an uncut call of the cut size, then the next call: never joined */
	put(w, piece(IOTAP_OP_WRITE, 7, 1, 2 * MW, MW - 16, 0));
	put(w, piece(IOTAP_OP_WRITE, 7, 1, 3 * MW - 16, MW, 0));
	/* 3: a 1.5 MiB read, larger than max_write */
	put(w, piece(IOTAP_OP_READ, 9, 3, 0, MW, cut));
	put(w, piece(IOTAP_OP_READ, 9, 3, MW, MW, cut | cont));
	put(w, piece(IOTAP_OP_READ, 9, 3, 2 * MW, MW, cont));
	/* 4: two whole max_write calls in a row */
	put(w, piece(IOTAP_OP_READ, 9, 3, 3 * MW, MW, 0));
	put(w, piece(IOTAP_OP_READ, 9, 3, 4 * MW, MW, 0));
	/* 5: the next op of the thread is on another handle: the cut one stays */
	put(w, piece(IOTAP_OP_WRITE, 10, 5, 0, MW, cut));
	put(w, piece(IOTAP_OP_WRITE, 10, 6, MW, MW, cont));
	if (iotap_trace_writer_close(w))
		ok(0, "close");
	return path;
}

/* Read @path through the join: records into @out (names dropped), count. */
static int read_joined(const char *path, struct iotap_trace_rec *out, int max, uint64_t *joined,
		       uint64_t *calls)
{
	struct iotap_trace_reader *r;
	struct iotap_trace_join *j;
	struct iotap_trace_rec rec;
	int n = 0, ret;

	if (iotap_trace_reader_open(&r, path, 0))
		return -1;
	if (iotap_trace_join_open(&j, r)) {
		iotap_trace_reader_close(r);
		return -1;
	}
	while ((ret = iotap_trace_join_next(j, &rec)) > 0) {
		if (rec.type == IOTAP_REC_NAME && rec.file == 555)
			ok(rec.name && !strcmp(rec.name, "between"), "a NAME held back keeps its name");
		if (rec.type != IOTAP_REC_OP)
			continue;
		if (n < max)
			out[n] = rec;
		n++;
	}
	iotap_trace_join_stats(j, calls, joined);
	iotap_trace_join_close(j);
	iotap_trace_reader_close(r);
	return ret < 0 ? -1 : n;
}

int main(void)
{
	struct iotap_trace_rec o[32];
	uint64_t joined, calls;
	const char *p;
	int n;

	ok(iotap_trace_fuse_field("max_write=524288 max_pages=128", "max_pages") == 128,
	   "fuse field parsed");
	ok(iotap_trace_fuse_field("max_write=524288 max_pages=128", "max") == 0 &&
	   iotap_trace_fuse_field(NULL, "max_write") == 0, "absent fuse keys are 0");

	p = write_trace("joined.iotap", "max_write=524288 max_pages=128 page_size=4096");
	n = read_joined(p, o, 32, &joined, &calls);
	ok(n == 8, "8 ops after joining (got %d)", n);
	ok(joined == 4 && calls == 3, "4 pieces folded into 3 calls (got %" PRIu64 ", %" PRIu64 ")",
	   joined, calls);
	if (n == 8) {
		ok(o[0].op == IOTAP_OP_WRITE && o[0].length == 2 * MW && o[0].result == 2 * MW &&
		   !(o[0].flags & IOTAP_OPF_CUT), "three pieces are one 1 MiB write, unflagged");
		ok(o[0].dur_ns == 4 * 2000 + 1000 + 10, "it ends with its last piece (dur %" PRIu64 ")",
		   o[0].dur_ns);
		ok(o[1].op == IOTAP_OP_READ && o[1].tid == 8 && o[2].tid == 8 &&
		   o[1].offset == 0 && o[2].offset == 4096, "the other thread's ops keep their order");
		ok(o[3].op == IOTAP_OP_READ && o[3].length == 2 * MW - 512,
		   "a cut read joins its whole-sized continuation");
		ok(o[4].offset == 5 * MW && o[4].length == 4096, "...and not the op after it");
		ok(o[5].length == MW - 16 && (o[5].flags & IOTAP_OPF_CUT),
		   "a cut piece followed by a new cut call stays");
		ok(o[6].length == MW, "the new call joins its own remainder");
		ok(o[7].tid == 10 && o[7].length == MW - 16 && (o[7].flags & IOTAP_OPF_CUT),
		   "a cut piece at the end of the file stays");
	}

	p = write_exact("exact.iotap");
	n = read_joined(p, o, 32, &joined, &calls);
	ok(n == 9, "calls=1: 9 ops after joining (got %d)", n);
	ok(joined == 4 && calls == 2, "calls=1: 4 pieces folded into 2 calls (got %" PRIu64
	   ", %" PRIu64 ")", joined, calls);
	if (n == 9) {
		ok(o[0].length == 2 * MW && o[0].result == 2 * MW &&
		   !(o[0].flags & (IOTAP_OPF_CUT | IOTAP_OPF_CONT)) && o[1].tid == 8,
		   "calls=1: a page-cap cut write is one record, unflagged");
		ok(o[2].length == MW - 16 && o[3].length == MW && o[3].offset == 3 * MW - 16,
		   "calls=1: an uncut call of the cut size is not joined with the next");
		ok(o[4].length == 3 * MW && o[4].op == IOTAP_OP_READ,
		   "calls=1: a read longer than max_write is one record");
		ok(o[5].length == MW && o[6].length == MW, "calls=1: two whole calls stay two");
		ok((o[7].flags & IOTAP_OPF_CUT) && (o[8].flags & IOTAP_OPF_CONT),
		   "calls=1: pieces on different handles are not joined");
	}

	p = write_trace("nofuse.iotap", NULL);
	n = read_joined(p, o, 32, &joined, &calls);
	ok(n == 9 && o[0].length == 2 * MW - 16, "without max_write only the next piece joins "
	   "(%d ops, first %" PRIu64 ")", n, n > 0 ? o[0].length : 0);
	return done_testing();
}
