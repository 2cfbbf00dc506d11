// SPDX-License-Identifier: MIT
/*
 * src.c - a trace's records in start order, with a look-ahead window
 *
 * The replay walks a trace record by record, but an op's new name (CREATE,
 * MKDIR, SYMLINK, RENAME, LINK, and the first LOOKUP of a file) is not in
 * its OP record: the capture writes it in the NAME record that follows the
 * op, a few records later in merged order (FORMAT.md, "Record meanings").
 * This wrapper around struct iotap_trace_reader keeps a ring of decoded
 * records (names copied) so that the loader can look ahead for that NAME
 * while it compiles the op. One thread; bounded by the window size.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "replay_i.h"

struct src_slot {
	struct iotap_trace_rec rec;
	char *name;			/* copy of rec.name */
	size_t name_cap;
};

struct rp_src {
	struct iotap_trace_reader *rd;
	struct iotap_trace_join *jn;	/* a cut read()/write() replays as one call */
	struct src_slot *ring;
	unsigned int n;			/* slots, power of two */
	unsigned int cur;		/* slot of the record returned last */
	unsigned int ahead;		/* records read beyond it */
	int started;
	int eof;			/* the reader is exhausted (or failed: err) */
	int err;
};

int rp_src_open(struct rp_src **out, const char *path, unsigned int window)
{
	struct rp_src *s;
	unsigned int n = 16;
	int ret;

	while (n < window)
		n *= 2;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->ring = calloc(n, sizeof(*s->ring));
	if (!s->ring) {
		ret = -ENOMEM;
		goto err_free_src;
	}
	s->n = n;
	ret = iotap_trace_reader_open(&s->rd, path, 0);
	if (ret)
		goto err_free_ring;
	ret = iotap_trace_join_open(&s->jn, s->rd);
	if (ret)
		goto err_close_reader;
	*out = s;
	return 0;

err_close_reader:
	iotap_trace_reader_close(s->rd);

err_free_ring:
	free(s->ring);
err_free_src:
	free(s);
	return ret;
}

const struct iotap_trace_header *rp_src_header(const struct rp_src *s)
{
	return iotap_trace_reader_header(s->rd);
}

/* Read one more record into the slot after the last buffered one: 1, 0 (end), -errno. */
static int src_fill(struct rp_src *s)
{
	struct src_slot *sl;
	int ret;

	if (s->eof)
		return s->err ? s->err : 0;
	if (s->ahead + 1 >= s->n)
		return 0;
	sl = &s->ring[(s->cur + s->ahead + (s->started ? 1 : 0)) & (s->n - 1)];
	ret = iotap_trace_join_next(s->jn, &sl->rec);
	if (ret <= 0) {
		s->eof = 1;
		s->err = ret;
		return ret;
	}
	if (sl->rec.name) {
		size_t len = sl->rec.name_len;

		if (len + 1 > sl->name_cap) {
			char *p = realloc(sl->name, len + 1);

			if (!p) {
				s->eof = 1;
				s->err = -ENOMEM;
				return -ENOMEM;
			}
			sl->name = p;
			sl->name_cap = len + 1;
		}
		memcpy(sl->name, sl->rec.name, len);
		sl->name[len] = '\0';
		sl->rec.name = sl->name;
	}
	s->ahead++;
	return 1;
}

int rp_src_next(struct rp_src *s, struct iotap_trace_rec *rec)
{
	int ret;

	if (!s->ahead) {
		ret = src_fill(s);
		if (ret <= 0)
			return ret;
	}
	if (s->started)
		s->cur = (s->cur + 1) & (s->n - 1);
	s->started = 1;
	s->ahead--;
	*rec = s->ring[s->cur].rec;
	return 1;
}

const struct iotap_trace_rec *rp_src_find_name(struct rp_src *s, uint64_t file, int link,
					       uint64_t until_ns)
{
	unsigned int i;

	for (i = 1;; i++) {
		const struct iotap_trace_rec *r;

		if (i > s->ahead && src_fill(s) <= 0)
			return NULL;
		r = &s->ring[(s->cur + i) & (s->n - 1)].rec;
		if (r->type == IOTAP_REC_NAME && r->file == file &&
		    (link < 0 || (int)(r->flags & 1) == link))
			return r;
		if (r->time_ns > until_ns)
			return NULL;
	}
}

void rp_src_stats(const struct rp_src *s, struct iotap_trace_read_stats *st)
{
	iotap_trace_reader_stats(s->rd, st);
}

void rp_src_close(struct rp_src *s)
{
	unsigned int i;

	if (!s)
		return;
	iotap_trace_join_close(s->jn);
	iotap_trace_reader_close(s->rd);
	for (i = 0; i < s->n; i++)
		free(s->ring[i].name);
	free(s->ring);
	free(s);
}
