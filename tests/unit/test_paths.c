// SPDX-License-Identifier: MIT
/*
 * test_paths.c - trace/paths.c: each record's path is its file's path when
 * the record started
 *
 * One trace as a capture writes it (OP, then its NAME from the same
 * thread), with another thread's records in between:
 *  - a directory (id 10) "fileset" with a file "0.0" (id 11) in it, later
 *    deleted, and id 10 reused by a plain file "16414" in "base": the
 *    ops on 11 stay "fileset/0.0" (issue 27 item 10: not "16414/0.0");
 *  - a CREATE of a reused id (12, once "old") takes the name its NAME
 *    gives ("new"), though the NAME comes after it and another thread's
 *    op comes in between; that op keeps its own path;
 *  - a rename: the ops before show the old path, those after the new, with
 *    a new key; the RENAME itself the old;
 *  - a failed lookup: its parent's path and its name, key 0;
 *  - a LOOKUP of a known binding (no NAME follows) waits for the thread's
 *    next record only, and records keep their order throughout.
 */
#include <string.h>

#include "tap.h"
#include "trace_test.h"

static uint64_t t_now = 1000000;

struct want {
	unsigned int type, op;
	const char *path;		/* NULL: none */
};

static struct iotap_trace_rec op(unsigned int o, uint32_t tid, uint64_t file, uint64_t file2)
{
	struct iotap_trace_rec r;

	memset(&r, 0, sizeof(r));
	r.type = IOTAP_REC_OP;
	r.op = (uint16_t)o;
	r.tid = r.pid = tid;
	r.file = file;
	r.file2 = file2;
	r.time_ns = t_now;
	r.dur_ns = 1000;
	t_now += 2000;
	return r;
}

static struct iotap_trace_rec name(uint32_t tid, uint64_t file, uint64_t parent, const char *n)
{
	struct iotap_trace_rec r;

	memset(&r, 0, sizeof(r));
	r.type = IOTAP_REC_NAME;
	r.tid = r.pid = tid;
	r.file = file;
	r.file2 = parent;
	r.name = n;
	r.name_len = (uint32_t)strlen(n);
	r.time_ns = t_now;
	t_now += 10;
	return r;
}

static void put(struct iotap_trace_writer *w, struct iotap_trace_rec r)
{
	if (iotap_trace_writer_append(w, &r))
		ok(0, "append");
}

int main(void)
{
	const char *path = test_path("paths.iotap");
	static const struct want want[] = {
		{ IOTAP_REC_NAME, 0, "." },
		{ IOTAP_REC_NAME, 0, "base" },
		{ IOTAP_REC_OP, IOTAP_OP_MKDIR, "fileset" },
		{ IOTAP_REC_NAME, 0, "fileset" },
		{ IOTAP_REC_OP, IOTAP_OP_CREATE, "fileset/0.0" },
		{ IOTAP_REC_NAME, 0, "fileset/0.0" },
		{ IOTAP_REC_OP, IOTAP_OP_WRITE, "fileset/0.0" },
		{ IOTAP_REC_OP, IOTAP_OP_UNLINK, "fileset/0.0" },
		{ IOTAP_REC_OP, IOTAP_OP_RMDIR, "fileset" },
		{ IOTAP_REC_OP, IOTAP_OP_CREATE, "base/16414" },
		{ IOTAP_REC_NAME, 0, "base/16414" },
		{ IOTAP_REC_OP, IOTAP_OP_WRITE, "base/16414" },
		{ IOTAP_REC_NAME, 0, "old" },
		{ IOTAP_REC_OP, IOTAP_OP_READ, "old" },
		{ IOTAP_REC_OP, IOTAP_OP_CREATE, "new" },
		{ IOTAP_REC_OP, IOTAP_OP_READ, "base" },
		{ IOTAP_REC_NAME, 0, "new" },
		{ IOTAP_REC_OP, IOTAP_OP_WRITE, "new" },
		{ IOTAP_REC_OP, IOTAP_OP_RENAME, "new" },
		{ IOTAP_REC_NAME, 0, "base/moved" },
		{ IOTAP_REC_OP, IOTAP_OP_WRITE, "base/moved" },
		{ IOTAP_REC_OP, IOTAP_OP_LOOKUP, "base/nosuch" },
		{ IOTAP_REC_OP, IOTAP_OP_LOOKUP, "base/moved" },
		{ IOTAP_REC_OP, IOTAP_OP_GETATTR, "." },
		{ IOTAP_REC_OP, IOTAP_OP_OPEN, "base/moved" },
		{ IOTAP_REC_OP, IOTAP_OP_STATFS, NULL },
		{ IOTAP_REC_END, 0, NULL },
	};
	struct iotap_trace_writer *w;
	struct iotap_trace_header h;
	struct iotap_trace_reader *r;
	struct iotap_trace_join *j;
	struct iotap_trace_paths *p;
	const struct iotap_trace_rec *rec;
	struct iotap_trace_path tp;
	struct iotap_trace_rec x;
	uint64_t key_new = 0, key_moved = 0, key_set = 0, key_reuse = 0;
	unsigned int i = 0, bad = 0;
	int ret;

	iotap_trace_header_init(&h, IOTAP_SOURCE_CAPTURE);
	if (iotap_trace_writer_open(&w, path, &h, 0)) {
		ok(0, "open %s", path);
		return done_testing();
	}
	put(w, name(1, 1, 0, "/srv/backing"));
	put(w, name(1, 2, 1, "base"));
	put(w, op(IOTAP_OP_MKDIR, 5, 10, 1));
	put(w, name(5, 10, 1, "fileset"));
	put(w, op(IOTAP_OP_CREATE, 5, 11, 10));
	put(w, name(5, 11, 10, "0.0"));
	put(w, op(IOTAP_OP_WRITE, 5, 11, 0));
	put(w, op(IOTAP_OP_UNLINK, 5, 11, 10));
	put(w, op(IOTAP_OP_RMDIR, 5, 10, 1));
	/* id 10 again: a plain file in base */
	put(w, op(IOTAP_OP_CREATE, 5, 10, 2));
	put(w, name(5, 10, 2, "16414"));
	put(w, op(IOTAP_OP_WRITE, 5, 10, 0));
	/* id 12 "old", then created again as "new" with tid 6 in between */
	put(w, name(5, 12, 1, "old"));
	put(w, op(IOTAP_OP_READ, 5, 12, 0));
	put(w, op(IOTAP_OP_CREATE, 5, 12, 1));
	put(w, op(IOTAP_OP_READ, 6, 2, 0));
	put(w, name(5, 12, 1, "new"));
	put(w, op(IOTAP_OP_WRITE, 5, 12, 0));
	/* rename new -> base/moved */
	x = op(IOTAP_OP_RENAME, 5, 12, 2);
	x.aux = 1;
	put(w, x);
	put(w, name(5, 12, 2, "moved"));
	put(w, op(IOTAP_OP_WRITE, 5, 12, 0));
	/* a failed lookup of base/nosuch */
	x = op(IOTAP_OP_LOOKUP, 5, 0, 2);
	x.result = -2;
	x.name = "nosuch";
	x.name_len = 6;
	put(w, x);
	/* a lookup of a known binding: no NAME; tid 6's getattr waits behind it */
	put(w, op(IOTAP_OP_LOOKUP, 5, 12, 2));
	put(w, op(IOTAP_OP_GETATTR, 6, 1, 0));
	put(w, op(IOTAP_OP_OPEN, 5, 12, 0));
	put(w, op(IOTAP_OP_STATFS, 6, 0, 0));
	if (iotap_trace_writer_close(w)) {
		ok(0, "close");
		return done_testing();
	}

	ok(!iotap_trace_reader_open(&r, path, 0), "open");
	ok(!iotap_trace_join_open(&j, r), "join");
	ok(!iotap_trace_paths_open(&p, j), "paths");
	while ((ret = iotap_trace_paths_next_ref(p, &rec, &tp)) > 0) {
		const struct want *wt;

		if (i >= sizeof(want) / sizeof(want[0])) {
			ok(0, "more records than written");
			break;
		}
		wt = &want[i];
		if (rec->type != wt->type || (wt->type == IOTAP_REC_OP && rec->op != wt->op) ||
		    !tp.path != !wt->path || (wt->path && strcmp(tp.path, wt->path)) ||
		    (tp.path && tp.len != strlen(tp.path))) {
			diag("record %u: %s %s path '%s', want '%s'", i,
			     iotap_trace_rec_type_name(rec->type), iotap_trace_op_name(rec->op),
			     tp.path ? tp.path : "(none)", wt->path ? wt->path : "(none)");
			bad++;
		}
		if (rec->type == IOTAP_REC_OP && rec->op == IOTAP_OP_WRITE && rec->file == 11)
			key_set = tp.key;
		if (rec->type == IOTAP_REC_OP && rec->op == IOTAP_OP_WRITE && rec->file == 10)
			key_reuse = tp.key;
		if (rec->type == IOTAP_REC_OP && rec->file == 12 && tp.path &&
		    !strcmp(tp.path, "new"))
			key_new = tp.key;
		if (rec->type == IOTAP_REC_OP && rec->file == 12 && tp.path &&
		    !strcmp(tp.path, "base/moved"))
			key_moved = tp.key;
		if (rec->type == IOTAP_REC_OP && rec->op == IOTAP_OP_LOOKUP && !rec->file)
			ok(tp.key == 0, "a failed lookup has key 0");
		i++;
	}
	ok(ret == 0, "the end (%d)", ret);
	ok(i == sizeof(want) / sizeof(want[0]), "every record, in order (%u)", i);
	ok(!bad, "every path as it was when the record started (%u wrong)", bad);
	ok(key_set && key_reuse && key_set != key_reuse, "a reused id gets a new key");
	ok(key_new && key_moved && key_new != key_moved, "a renamed file gets a new key");
	iotap_trace_paths_close(p);
	iotap_trace_join_close(j);
	iotap_trace_reader_close(r);
	return done_testing();
}
