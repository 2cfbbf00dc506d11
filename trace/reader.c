// SPDX-License-Identifier: MIT
/*
 * reader.c - stream a trace file in bounded memory: the read window, batches,
 * chunks and damage, open and close
 *
 * The reader walks the file chunk by chunk through one read buffer (a
 * window of the file, grown to the largest chunk met), checks each chunk
 * (chunk.c), decompresses it into one raw buffer and decodes it into a
 * batch: an array of records in the layout of struct iotap_trace_rec without
 * its sample (REC_HEAD bytes each), plus an arena for their names and
 * samples. It never holds the file, only the batches not yet delivered.
 * iotap_trace_reader_next_ref() hands out a pointer into the batch;
 * iotap_trace_reader_next() copies that head and a sample.
 *
 * The reader is cut by job (reader_i.h holds what they share):
 *   reader.c          the read window, batch memory, chunks, damage, open/close
 *   reader_sort.c     a batch's records into (start, position) order
 *   reader_deliver.c  the merge of pending batches and the delivery of records
 *   reader_pool.c     decompression on the tree's thread pool (iotap_pool)
 *
 * Damage. A chunk whose header checks but whose payload does not is
 * skipped by its size; bytes where no valid chunk header starts are
 * skipped by scanning for the next CHUNK_MAGIC whose header checks. What
 * remains after the last valid chunk is the tail. Everything is counted
 * in struct iotap_trace_read_stats; only I/O errors and ENOMEM are errors.
 *
 * One reader serves one thread. A delivered record's name points into the
 * batch it came from, which is recycled only at the next call.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zstd.h>

#include "iotap_base.h"
#include "trace_i.h"
#include "reader_i.h"

/* --- the read window ---------------------------------------------------- */

/*
 * Makes [off, off + n) available at *p. Returns n, fewer bytes only at the
 * end of the file, or -errno.
 */
static ssize_t rb_get(struct iotap_trace_reader *r, uint64_t off, size_t n,
		      const uint8_t **p)
{
	size_t keep = 0;

	if (off >= r->buf_off && off - r->buf_off <= r->buf_len) {
		size_t start = (size_t)(off - r->buf_off);

		if (r->buf_len - start >= n || r->buf_eof) {
			*p = r->buf + start;
			return r->buf_len - start >= n ? (ssize_t)n :
			       (ssize_t)(r->buf_len - start);
		}
		keep = r->buf_len - start;
		if (start)
			memmove(r->buf, r->buf + start, keep);
	}
	if (n > r->buf_cap) {
		size_t cap = r->buf_cap, size;
		uint8_t *nb;

		while (cap < n)
			cap *= 2;
		if (cap > r->buf_size) {
			size = cap;
			nb = iotap_buf_alloc(&size);
			if (!nb)
				return -ENOMEM;
			memcpy(nb, r->buf, keep);
			iotap_buf_free(r->buf, r->buf_size);
			r->buf = nb;
			r->buf_size = size;
		}
		r->buf_cap = cap;
	}
	r->buf_off = off;
	r->buf_len = keep;
	r->buf_eof = 0;
	while (r->buf_len < n) {
		ssize_t k = pread(r->fd, r->buf + r->buf_len, r->buf_cap - r->buf_len,
				  (off_t)(off + r->buf_len));

		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (k == 0) {
			r->buf_eof = 1;
			r->eof_off = off + r->buf_len;
			break;
		}
		r->buf_len += (size_t)k;
	}
	*p = r->buf;
	return r->buf_len >= n ? (ssize_t)n : (ssize_t)r->buf_len;
}

/* --- batches ------------------------------------------------------------ */

/*
 * The arrays of a roomy batch are iotap_buf_alloc()'s (huge pages from
 * 512 KiB); the others' malloc'ed to their size, so that many small
 * batches pending for the merge cost what they hold.
 */
static void *batch_regrow(const struct rd_batch *b, void *p, size_t *size, size_t want)
{
	void *q;

	if (b->roomy)
		return iotap_buf_regrow(p, size, want);
	q = realloc(p, want);
	if (!q) {
		free(p);
		*size = 0;
		return NULL;
	}
	*size = want;
	return q;
}

static void batch_buf_free(const struct rd_batch *b, void *p, size_t size)
{
	if (b->roomy)
		iotap_buf_free(p, size);
	else
		free(p);
}

void rd_batch_free(struct rd_batch *b)
{
	batch_buf_free(b, b->recs, b->recs_size);
	free(b->data);
	batch_buf_free(b, b->keys, b->keys_size);
	batch_buf_free(b, b->tmp, b->keys_size);
	free(b->run);
	free(b->arena);
	free(b);
}

struct rd_batch *rd_batch_get(struct iotap_trace_reader *r)
{
	struct rd_batch *b = r->free;

	if (b) {
		r->free = b->next;
		r->nfree--;
		return b;
	}
	b = calloc(1, sizeof(*b));
	if (b)
		b->roomy = ++r->nbatch <= RD_ROOMY;
	return b;
}

/* Bytes a batch holds. */
size_t rd_batch_mem(const struct rd_batch *b)
{
	return sizeof(*b) + b->cap * (REC_STRIDE + 2 * sizeof(*b->keys) + 2 * sizeof(*b->run)) +
	       b->data_cap * sizeof(*b->data) + b->arena_cap;
}

void rd_batch_put(struct iotap_trace_reader *r, struct rd_batch *b)
{
	if (r->nfree >= r->free_max || rd_batch_mem(b) > RD_FREE_MEM) {
		rd_batch_free(b);
		r->nbatch--;
		return;
	}
	b->next = r->free;
	r->free = b;
	r->nfree++;
}

static int batch_reserve(int merge, struct rd_batch *b, uint32_t n)
{
	size_t rs;

	if (b->cap >= n && b->recs)
		return 0;
	if (!n)
		n = 1;
	/*
	 * The batch's records are spent: batch_regrow() need not keep them
	 * (a roomy batch's, from 512 KiB up, are whole 2 MiB extents, whose
	 * rest is used too). b->cap says 0 until every array has the new
	 * size.
	 *
	 * A record handed out is a struct iotap_trace_rec pointer to REC_HEAD
	 * bytes: room after the last for the rest of a struct, so that even a
	 * caller that copies one whole stays inside the allocation.
	 */
	b->cap = 0;
	rs = (size_t)n * REC_STRIDE + sizeof(struct iotap_trace_rec);
	if (b->roomy && rs < IOTAP_BUF_HUGE)
		rs = IOTAP_BUF_HUGE;
	b->recs = batch_regrow(b, b->recs, &b->recs_size, rs);
	rs = b->recs_size;
	if (!b->recs)
		return -ENOMEM;
	n = (uint32_t)((rs - sizeof(struct iotap_trace_rec)) / REC_STRIDE);
	if (n > CHUNK_REC_MAX)
		n = CHUNK_REC_MAX;
	if (merge) {
		/* RD_PREFETCH more: the fast path prefetches that far ahead unchecked */
		size_t want = (n + RD_PREFETCH) * sizeof(*b->keys);
		size_t ks = b->keys_size, ts = b->keys_size;
		void *p;

		b->keys = batch_regrow(b, b->keys, &ks, want);
		b->tmp = batch_regrow(b, b->tmp, &ts, want);
		if (!b->keys || !b->tmp) {
			batch_buf_free(b, b->keys, ks);
			batch_buf_free(b, b->tmp, ts);
			b->keys = b->tmp = NULL;
			b->keys_size = 0;
			return -ENOMEM;
		}
		b->keys_size = ks;	/* = ts: the same request from the same size */
		p = realloc(b->run, (2 * (size_t)n + 1) * sizeof(*b->run));	/* pk_bucket(): 2n */
		if (!p)
			return -ENOMEM;
		b->run = p;
	}
	b->cap = n;
	return 0;
}

/* Room for one more data entry. */
static int data_reserve(struct rd_batch *b)
{
	uint32_t cap = b->data_cap ? 2 * b->data_cap : 16;
	void *p;

	if (b->ndata < b->data_cap)
		return 0;
	p = realloc(b->data, cap * sizeof(*b->data));
	if (!p)
		return -ENOMEM;
	b->data = p;
	b->data_cap = cap;
	return 0;
}

/* Room for @n more arena bytes. */
static int arena_reserve(struct rd_batch *b, size_t n)
{
	size_t cap = b->arena_cap ? b->arena_cap : 256;
	char *p;

	if (b->arena_len + n <= b->arena_cap)
		return 0;
	while (cap < b->arena_len + n)
		cap *= 2;
	p = realloc(b->arena, cap);
	if (!p)
		return -ENOMEM;
	b->arena = p;
	b->arena_cap = cap;
	return 0;
}


/* --- chunks ------------------------------------------------------------- */

/* Header at @off: 0 valid, CHUNK_NEED_MORE torn by the end of the file, -EBADMSG, -errno. */
static int rd_hdr_at(struct iotap_trace_reader *r, uint64_t off, struct chunk_hdr *h)
{
	const uint8_t *p;
	ssize_t got;
	int ret;

	got = rb_get(r, off, CHUNK_HDR_SIZE, &p);
	if (got < 0)
		return (int)got;
	ret = chunk_hdr_parse(p, (size_t)got, h);
	if (ret != CHUNK_NEED_MORE || got < CHUNK_HDR_SIZE)
		return ret;
	/* A longer header than this version writes (checked sane by parse). */
	got = rb_get(r, off, le32_at(p + 8), &p);
	if (got < 0)
		return (int)got;
	return chunk_hdr_parse(p, (size_t)got, h);
}

/* Can this version read a chunk with a valid header @h? */
int rd_readable(const struct chunk_hdr *h)
{
	/* Every record takes at least 2 bytes: nrec bounds what decoding allocates. */
	return h->raw_size <= CHUNK_RAW_MAX && h->nrec <= CHUNK_REC_MAX &&
	       h->nrec <= h->raw_size / 2 &&
	       h->payload_size <= ZSTD_compressBound(CHUNK_RAW_MAX) &&
	       !(h->flags & CHUNK_FLAGS_REQUIRED);
}

/* 1 and *@at: the next valid chunk header at or after @from; 0: none; -errno. */
int rd_resync(struct iotap_trace_reader *r, uint64_t from, uint64_t *at)
{
	uint64_t pos = from;

	for (;;) {
		struct chunk_hdr h;
		const uint8_t *p, *q;
		ssize_t got;
		int ret;

		got = rb_get(r, pos, RD_SCAN, &p);
		if (got < 0)
			return (int)got;
		if (got < CHUNK_MAGIC_LEN)
			return 0;
		q = memmem(p, (size_t)got, CHUNK_MAGIC, CHUNK_MAGIC_LEN);
		if (!q) {
			if (got < RD_SCAN)
				return 0;
			pos += (uint64_t)got - (CHUNK_MAGIC_LEN - 1);
			continue;
		}
		pos += (uint64_t)(q - p);
		ret = rd_hdr_at(r, pos, &h);
		if (ret == 0) {
			*at = pos;
			return 1;
		}
		if (ret == CHUNK_NEED_MORE)
			return 0;
		if (ret != -EBADMSG)
			return ret;
		pos++;
	}
}

static void rd_damage(struct iotap_trace_reader *r, uint64_t off, uint64_t len)
{
	/* the pool reports a bad payload after later damage: keep the smallest */
	if (!r->stats.first_bad_offset || off < r->stats.first_bad_offset)
		r->stats.first_bad_offset = off;
	r->stats.bytes_skipped += len;
}

/* Everything from @off to the end of the file is an incomplete tail. */
static void rd_tail(struct iotap_trace_reader *r, uint64_t off)
{
	struct stat st;
	uint64_t end = r->eof_off;

	if (!r->buf_eof && fstat(r->fd, &st) == 0)
		end = (uint64_t)st.st_size;
	if (end > off) {
		rd_damage(r, off, end - off);
		r->stats.tail_bytes += end - off;
	}
	if (end > r->stats.file_bytes)
		r->stats.file_bytes = end;
	r->off = end > off ? end : off;
	r->scan_eof = 1;
}

/*
 * A record with a name or a sample (or LOST, END): copy them to the arena,
 * note them in b->data (the name pointer is set once the arena stops
 * moving) and in the batch's statistics. 0 or -ENOMEM.
 */
static int rd_store_rare(struct rd_batch *b, uint32_t n, const struct iotap_trace_rec *s,
			 const struct rec_extra *x)
{
	struct rd_data *dt;

	if (s->type == IOTAP_REC_LOST)
		b->bs.lost += s->length;
	else if (s->type == IOTAP_REC_END)
		b->bs.has_end = 1;
	if (!x->name && s->type != IOTAP_REC_SAMPLE)
		return 0;
	if (data_reserve(b) || arena_reserve(b, 7 + s->name_len + 1 + 7 + sizeof(x->sample)))
		return -ENOMEM;
	dt = &b->data[b->ndata++];
	dt->idx = n;
	dt->name = dt->sample = RD_NONE;
	b->arena_len = align8(b->arena_len);
	if (x->name) {
		dt->name = (uint32_t)b->arena_len;
		memcpy(b->arena + b->arena_len, x->name, s->name_len);
		b->arena[b->arena_len + s->name_len] = '\0';
		b->arena_len += s->name_len + 1;
	}
	if (s->type == IOTAP_REC_SAMPLE) {
		b->arena_len = align8(b->arena_len);
		dt->sample = (uint32_t)b->arena_len;
		memcpy(b->arena + b->arena_len, &x->sample, sizeof(x->sample));
		b->arena_len += sizeof(x->sample);
	}
	return 0;
}

/* Decode the chunk in d->cd.raw into a batch. -EBADMSG or -ENOMEM. */
int rd_decode(int merge, struct rd_dec *d, const struct chunk_hdr *h, struct rd_batch *b)
{
	const uint8_t *p = d->cd.raw, *end = d->cd.raw + h->raw_size;
	struct rec_sum sum = { .tmin = UINT64_MAX };
	uint32_t n = 0, total = 0, nops = 0, i;
	struct rec_extra x;
	int ret;

	ret = batch_reserve(merge, b, h->nrec);
	if (ret)
		return ret;
	b->arena_len = 0;
	b->ndata = 0;
	memset(&b->bs, 0, sizeof(b->bs));
	rec_state_reset(&d->st);
	while (p < end) {
		struct iotap_trace_rec *s;
		uint64_t t, e;
		int k;

		if (*p == IOTAP_REC_OP) {
			/* the bulk: OP records without names, in one loop */
			k = rec_decode_ops(&d->st, &p, end, b->recs + (size_t)n * REC_STRIDE,
					   h->nrec - total, &sum);
			if (k < 0)
				return -EBADMSG;
			n += (uint32_t)k;
			nops += (uint32_t)k;
			total += (uint32_t)k;
			if (p >= end)
				break;
		}
		/* one record of any other kind */
		s = brec(b, n);
		if (total == h->nrec)
			return -EBADMSG;
		k = rec_decode(&d->st, p, end, s, &x);
		if (k < 0)
			return -EBADMSG;
		p += k;
		total++;
		if (!s->type)
			continue;
		s->name = NULL;
		if ((s->type != IOTAP_REC_OP || x.name) && rd_store_rare(b, n, s, &x))
			return -ENOMEM;
		b->bs.by_type[s->type]++;
		t = s->time_ns;
		e = rec_end_ns(s);
		if (e > sum.tend)
			sum.tend = e;
		/*
		 * Keys only once the chunk turns out not to be in start order
		 * (most are: the keys were a sixth of the memory traffic);
		 * rd_batch_sort() builds them from the records.
		 */
		sum.desc += t < sum.last;
		sum.last = t;
		if (t < sum.tmin)
			sum.tmin = t;
		if (t > sum.tmax)
			sum.tmax = t;
		n++;
	}
	if (total != h->nrec)
		return -EBADMSG;
	for (i = 0; i < b->ndata; i++)
		if (b->data[i].name != RD_NONE)
			brec(b, b->data[i].idx)->name = b->arena + b->data[i].name;
	b->nrec = n;
	b->pos = 0;
	b->sorted = !merge || !sum.desc;
	b->desc = sum.desc;
	b->packed = 0;
	b->tmin = n ? sum.tmin : 0;
	b->tmax = sum.tmax;
	b->bs.n = n;
	b->bs.by_type[IOTAP_REC_OP] += nops;
	b->bs.tmin = b->tmin;
	b->bs.tend = sum.tend;
	return 0;
}

/*
 * Walks to the next chunk whose header is valid and readable, counting
 * damage and unreadable chunks on the way. Returns 1 with its header in
 * *@h, its offset in *@at and its whole bytes at *@p (valid until the next
 * window call), 0 at the end of the file (the tail counted), or -errno.
 */
int rd_scan(struct iotap_trace_reader *r, struct chunk_hdr *h, uint64_t *at, const uint8_t **p)
{
	for (;;) {
		uint64_t total, next = 0;
		ssize_t got;
		int ret;

		if (r->scan_eof)
			return 0;
		got = rb_get(r, r->off, 1, p);
		if (got < 0)
			return (int)got;
		if (got == 0) {
			rd_tail(r, r->off);
			return 0;
		}
		ret = rd_hdr_at(r, r->off, h);
		if (ret == CHUNK_NEED_MORE) {
			rd_tail(r, r->off);
			return 0;
		}
		if (ret == -EBADMSG) {
			ret = rd_resync(r, r->off + 1, &next);
			if (ret < 0)
				return ret;
			if (ret == 0) {
				rd_tail(r, r->off);
				return 0;
			}
			r->stats.chunks_bad++;
			rd_damage(r, r->off, next - r->off);
			r->off = next;
			continue;
		}
		if (ret < 0)
			return ret;

		total = (uint64_t)h->hdr_size + h->payload_size;
		if (!rd_readable(h)) {
			struct stat st;

			/* Skip it by its size without reading it. */
			if (fstat(r->fd, &st) < 0)
				return -errno;
			if (r->off + total > (uint64_t)st.st_size) {
				rd_tail(r, r->off);
				return 0;
			}
			r->stats.chunks_bad++;
			rd_damage(r, r->off, total);
			r->off += total;
			continue;
		}
		got = rb_get(r, r->off, (size_t)total, p);
		if (got < 0)
			return (int)got;
		if ((uint64_t)got < total) {
			rd_tail(r, r->off);
			return 0;
		}
		*at = r->off;
		r->off += total;
		return 1;
	}
}

/* Check, decompress, decode and (merged reading) sort one chunk's payload. */
static int rd_decode_payload(int merge, struct rd_dec *d, const struct chunk_hdr *h,
			     const uint8_t *payload, struct rd_batch *b)
{
	int ret = chunk_dec_payload(&d->cd, h, payload);

	if (!ret)
		ret = rd_decode(merge, d, h, b);
	if (!ret && merge && b->nrec && !b->sorted)
		rd_batch_sort(b);
	return ret;
}

/*
 * The outcome of one chunk, in file order: 1 with *@out for a chunk that
 * decoded, 0 for one that did not (counted as damage), -ENOMEM.
 */
int rd_take(struct iotap_trace_reader *r, const struct chunk_hdr *h, uint64_t at, int ret,
	    struct rd_batch *b, struct rd_batch **out)
{
	uint64_t total = (uint64_t)h->hdr_size + h->payload_size;

	if (ret == -ENOMEM) {
		rd_batch_put(r, b);
		return ret;
	}
	if (r->progress)
		r->progress(r->progress_arg, at + total, r->stats.file_bytes, 0);
	if (ret) {
		rd_batch_put(r, b);
		r->stats.chunks_bad++;
		rd_damage(r, at, total);
		return 0;
	}
	r->stats.chunks++;
	r->stats.compressed_bytes += h->payload_size;
	r->stats.raw_bytes += h->raw_size;
	if (r->on_chunk) {
		ret = r->on_chunk(r->on_chunk_arg, h, at, b);
		if (ret) {
			rd_batch_put(r, b);
			return ret;
		}
	}
	if (h->watermark > r->watermark)
		r->watermark = h->watermark;
	b->seq = r->seq++;
	*out = b;
	return 1;
}

/* The end of the file: no more chunks. */
static void rd_end(struct iotap_trace_reader *r)
{
	if (!r->eof && r->progress)
		r->progress(r->progress_arg, r->stats.file_bytes, r->stats.file_bytes, 1);
	r->eof = 1;
}

/*
 * Reads chunks until one decodes. Returns 1 with *@out (possibly holding
 * no records; merged reading: sorted), 0 at the end of the file (r->eof
 * set), or -errno.
 */
int rd_next_chunk(struct iotap_trace_reader *r, struct rd_batch **out)
{
	int merge = !(r->flags & IOTAP_TRACE_READ_FILE_ORDER);

	for (;;) {
		struct chunk_hdr h;
		const uint8_t *p;
		struct rd_batch *b;
		uint64_t at;
		int ret;

		if (r->pool) {
			ret = rd_next_chunk_pool(r, out);
			if (ret == 0)
				rd_end(r);
			return ret;
		}
		ret = rd_scan(r, &h, &at, &p);
		if (ret < 0)
			return ret;
		if (ret == 0) {
			rd_end(r);
			return 0;
		}
		b = rd_batch_get(r);
		if (!b)
			return -ENOMEM;
		ret = rd_decode_payload(merge, &r->dec, &h, p + h.hdr_size, b);
		ret = rd_take(r, &h, at, ret, b, out);
		if (ret)
			return ret;
	}
}

/* --- open / close ------------------------------------------------------- */

/**
 * iotap_trace_reader_open_fd - open a trace on a seekable fd
 * @out:   the new reader
 * @fd:    open for reading; the reader uses pread(2) and does not close it
 * @flags: IOTAP_TRACE_READ_FILE_ORDER
 *
 * Return: as iotap_trace_reader_open().
 */
int iotap_trace_reader_open_fd(struct iotap_trace_reader **out, int fd,
			       unsigned int flags)
{
	struct iotap_trace_reader *r;
	unsigned int major, minor;
	const uint8_t *p;
	struct stat st;
	uint32_t hsize;
	ssize_t got;
	int ret;

	if (!out || fd < 0)
		return -EINVAL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->fd = fd;
	r->flags = flags;
	r->free_max = RD_FREE_BATCHES;
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		goto err_free_reader;
	}
	r->stats.file_bytes = (uint64_t)st.st_size;
	/*
	 * A file that fills the window gets it in a 2 MiB extent: one
	 * huge-page fault, not the 64 of 4 KiB pages its first reads took
	 * (the quick-start capture's export). It still reads RD_BUF_INIT at
	 * a time; a smaller file's window is malloc'ed.
	 */
	r->buf_cap = RD_BUF_INIT;
	r->buf_size = r->stats.file_bytes >= RD_BUF_INIT ? IOTAP_BUF_HUGE : RD_BUF_INIT;
	r->buf = iotap_buf_alloc(&r->buf_size);
	if (!r->buf) {
		ret = -ENOMEM;
		goto err_free_reader;
	}

	got = rb_get(r, 0, 16, &p);
	if (got < 0) {
		ret = (int)got;
		goto err_free_buf;
	}
	ret = fhdr_probe(p, (size_t)got, &major, &minor, &hsize);
	if (ret)
		goto err_free_buf;
	if (major == 0) {
		ret = -EBADMSG;
		goto err_free_buf;
	}
	if (major > IOTAP_TRACE_VERSION_MAJOR) {
		ret = -EPROTONOSUPPORT;
		goto err_free_buf;
	}
	if (hsize < TRACE_HDR_MIN || hsize > TRACE_HDR_MAX) {
		ret = -EBADMSG;
		goto err_free_buf;
	}
	got = rb_get(r, 0, hsize, &p);
	if (got < 0) {
		ret = (int)got;
		goto err_free_buf;
	}
	ret = fhdr_decode(p, (size_t)got, &r->hdr, &r->hdr_strings);
	if (ret)
		goto err_free_buf;
	ret = chunk_dec_init(&r->dec.cd);
	if (ret)
		goto err_free_strings;
	r->off = hsize;
	r->stats.header_bytes = hsize;
	*out = r;
	return 0;

err_free_strings:
	free(r->hdr_strings);
err_free_buf:
	iotap_buf_free(r->buf, r->buf_size);
err_free_reader:
	free(r);
	return ret;
}

/**
 * iotap_trace_reader_open - open a trace file and check its header
 * @out:   the new reader
 * @path:  the trace
 * @flags: IOTAP_TRACE_READ_FILE_ORDER
 *
 * Return: 0; -errno from open(2); -ENODATA for an empty file; -EBADMSG
 * when the file is not an iotap trace or its header is damaged;
 * -EPROTONOSUPPORT for a newer major version (iotap_trace_probe_version()
 * says which).
 */
int iotap_trace_reader_open(struct iotap_trace_reader **out, const char *path,
			    unsigned int flags)
{
	int fd, ret;

	if (!out || !path)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = iotap_trace_reader_open_fd(out, fd, flags);
	if (ret) {
		close(fd);
		return ret;
	}
	(*out)->own_fd = 1;
	return 0;
}

/**
 * iotap_trace_reader_set_threads - decompress chunks on @n threads
 * @r: reader, before its first iotap_trace_reader_next()
 * @n: threads that decompress, the calling thread included (it decodes
 *     every chunk, and decompresses one when it would otherwise wait):
 *     @n - 1 are started; 1: everything on the calling thread; 0:
 *     IOTAP_READ_THREADS from the environment if set, else 1 (a second
 *     thread was not faster in wall time on the 2-CPU VMs measured:
 *     BENCHMARKS.md)
 *
 * The records, their order and the statistics do not depend on @n.
 * Return: 0; -EBUSY after the first next(); -EINVAL for a bad
 * IOTAP_READ_THREADS; -ENOMEM or -EAGAIN when no thread could start (the
 * reader then decodes on the calling thread).
 */
int iotap_trace_reader_set_threads(struct iotap_trace_reader *r, unsigned int n)
{
	if (r->started)
		return -EBUSY;
	if (!n) {
		const char *env = getenv("IOTAP_READ_THREADS");

		n = 1;
		if (env && *env) {
			char *end;
			unsigned long v = strtoul(env, &end, 10);

			if (*end || !v)
				return -EINVAL;
			n = v > RD_THREADS_MAX ? RD_THREADS_MAX : (unsigned int)v;
		}
	}
	if (n > RD_THREADS_MAX)
		n = RD_THREADS_MAX;
	rd_pool_stop(r);
	if (n <= 1)
		return 0;
	return rd_pool_start(r, n - 1);	/* the calling thread is the n-th */
}

/**
 * iotap_trace_reader_header - the decoded header, valid until close
 * @r: reader
 */
const struct iotap_trace_header *iotap_trace_reader_header(const struct iotap_trace_reader *r)
{
	return &r->hdr;
}

/**
 * iotap_trace_reader_on_progress - follow @r through its file (iotap_trace.h)
 * @r:   reader
 * @fn:  called after each chunk taken and once at the end, NULL: none
 * @arg: its first argument
 */
void iotap_trace_reader_on_progress(struct iotap_trace_reader *r, iotap_trace_progress_fn fn,
				    void *arg)
{
	r->progress = fn;
	r->progress_arg = arg;
}

/**
 * iotap_trace_reader_close - free the reader (and close its fd if it
 * opened it)
 * @r: reader, or NULL
 */
void iotap_trace_reader_close(struct iotap_trace_reader *r)
{
	struct rd_batch *b;
	unsigned int i;

	if (!r)
		return;
	for (i = 0; i < r->nheap; i++)
		rd_batch_free(r->heap[i]);
	free(r->heap);
	if (r->cur)
		rd_batch_free(r->cur);
	if (r->retire)
		rd_batch_free(r->retire);
	while ((b = r->free)) {
		r->free = b->next;
		rd_batch_free(b);
	}
	rd_pool_stop(r);
	chunk_dec_release(&r->dec.cd);
	if (r->own_fd)
		close(r->fd);
	free(r->hdr_strings);
	iotap_buf_free(r->buf, r->buf_size);
	free(r);
}

/**
 * iotap_trace_probe_version - read a file's format version without
 * accepting it
 * @path:  the file
 * @major: version_major found
 * @minor: version_minor found
 *
 * Return: 0; -errno from open(2)/read(2); -ENODATA for an empty file;
 * -EBADMSG when the file does not start like an iotap trace.
 */
int iotap_trace_probe_version(const char *path, unsigned int *major, unsigned int *minor)
{
	uint8_t buf[16];
	uint32_t hsize;
	ssize_t got = 0;
	int fd, ret;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while ((size_t)got < sizeof(buf)) {
		ssize_t k = pread(fd, buf + got, sizeof(buf) - (size_t)got, got);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			ret = -errno;
			close(fd);
			return ret;
		}
		if (k == 0)
			break;
		got += k;
	}
	close(fd);
	return fhdr_probe(buf, (size_t)got, major, minor, &hsize);
}
