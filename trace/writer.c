// SPDX-License-Identifier: MIT
/*
 * writer.c - the single-threaded trace writer
 *
 * A writer owns the trace file's fd, one compressor and the raw payload of
 * the open chunk. Appending encodes a record into that payload (record.c);
 * when the payload reaches CHUNK_RAW_TARGET bytes (or CHUNK_REC_TARGET
 * records), or when the caller flushes, the chunk is compressed into one
 * zstd frame and written with one write(2) loop (chunk.c). Nothing reaches
 * the file that is not a whole chunk, so a reader can use every chunk
 * written before a crash.
 *
 * Watermarks (FORMAT.md "Order and watermarks"): until a caller passes a
 * non-zero watermark, the writer assumes records arrive in start order and
 * gives every chunk the largest start time appended so far. Once a caller
 * passes one (the recorder does, from its writer thread), every chunk
 * carries the last watermark given.
 *
 * Errors: when a chunk cannot be written (ENOSPC, EIO) the writer cuts the
 * file back to its last whole chunk and counts the chunk's records as lost;
 * it keeps going, and the next chunk it does write starts with a LOST record
 * for them, so a disk that fills up and frees again leaves a readable trace
 * that says what it misses. The first error is remembered (wr_error()) and
 * returned by close. One thread at a time; no locks.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "iotap_base.h"
#include "trace_i.h"

/* A whole chunk kept in memory by a ring writer (flight recorder). */
struct ring_chunk {
	struct ring_chunk *next;
	size_t len;			/* header + payload */
	uint32_t nrec;
	uint64_t lost;			/* LOST lengths it holds */
	uint64_t t_first;
	uint8_t data[];
};

struct iotap_trace_writer {
	int fd;				/* -1: a ring writer (no file) */
	size_t ring_cap;		/* ring: most bytes of chunks kept */
	size_t ring_used;
	struct ring_chunk *ring_head, *ring_tail;	/* oldest first */
	int err;			/* first error, -errno; remembered */
	uint64_t bytes;			/* header + whole chunks in the file */
	struct chunk_enc ce;
	struct rec_state st;		/* delta state of the open chunk */
	uint8_t *raw;			/* raw payload of the open chunk */
	size_t raw_len;			/* bytes */
	uint32_t nrec;			/* records in the open chunk */
	uint32_t index;			/* index of the next chunk */
	uint64_t t_first;		/* open chunk: smallest start, ns */
	uint64_t t_last;		/* open chunk: largest start + duration, ns */
	uint64_t watermark;		/* promise the next chunk carries, ns */
	int explicit_wm;		/* the caller gives watermarks */
	uint64_t max_time;		/* largest time_ns appended, ns */
	uint64_t mono_base;		/* header mono_base_ns */
	uint64_t records;		/* records appended, all types */
	uint64_t lost;			/* sum of the LOST lengths appended */
	uint32_t own;			/* records in the open chunk appended as "own" */
	uint64_t dropped;		/* callers' records discarded because of an error */
	uint64_t chunk_lost;		/* LOST lengths appended to the open chunk */
	uint64_t pending_lost;		/* lost in unwritten chunks, not yet in a LOST record */
};

static int write_all(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t k = write(fd, p, n);

		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (k == 0)
			return -EIO;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

/*
 * The open chunk could not be written: its records are lost. The callers'
 * records count as dropped; they and the LOST counts the chunk carried are
 * owed to the next chunk's LOST record (wr_append()).
 */
static int wr_fail(struct iotap_trace_writer *w, int err)
{
	if (!w->err)
		w->err = err;
	w->dropped += w->nrec - w->own;
	w->pending_lost += (w->nrec - w->own) + w->chunk_lost;
	w->lost -= w->chunk_lost;
	w->records -= w->nrec;
	w->chunk_lost = 0;
	w->nrec = 0;
	w->own = 0;
	w->raw_len = 0;
	rec_state_reset(&w->st);
	return err;
}

/*
 * Keep a built chunk in the ring, dropping the oldest beyond ring_cap (the
 * newest always stays). The ring's records stay counted in w->records
 * until dropped.
 */
static int ring_push(struct iotap_trace_writer *w, const uint8_t *p, size_t len)
{
	struct ring_chunk *c = malloc(sizeof(*c) + len);

	if (!c)
		return -ENOMEM;
	c->next = NULL;
	c->len = len;
	c->nrec = w->nrec;
	c->lost = w->chunk_lost;
	c->t_first = w->t_first;
	memcpy(c->data, p, len);
	if (w->ring_tail)
		w->ring_tail->next = c;
	else
		w->ring_head = c;
	w->ring_tail = c;
	w->ring_used += len;
	while (w->ring_used > w->ring_cap && w->ring_head != w->ring_tail) {
		struct ring_chunk *o = w->ring_head;

		w->ring_head = o->next;
		w->ring_used -= o->len;
		w->records -= o->nrec;
		w->lost -= o->lost;
		free(o);
	}
	w->bytes = w->ring_used;
	return 0;
}

static void ring_free(struct iotap_trace_writer *w)
{
	struct ring_chunk *c, *n;

	for (c = w->ring_head; c; c = n) {
		n = c->next;
		free(c);
	}
	w->ring_head = w->ring_tail = NULL;
	w->ring_used = 0;
}

/* Compress and write the open chunk, if it holds anything. */
static int wr_write_chunk(struct iotap_trace_writer *w)
{
	struct chunk_hdr h;
	const uint8_t *out;
	size_t len;
	int ret;

	if (!w->nrec)
		return 0;
	if (!w->explicit_wm && w->max_time > w->watermark)
		w->watermark = w->max_time;
	memset(&h, 0, sizeof(h));
	h.nrec = w->nrec;
	h.index = w->index;
	h.t_first = w->t_first;
	h.t_last = w->t_last;
	h.watermark = w->watermark;
	ret = chunk_enc_build(&w->ce, &h, w->raw, w->raw_len, &out, &len);
	if (ret)
		return wr_fail(w, ret);
	if (w->fd < 0) {
		ret = ring_push(w, out, len);
		if (ret)
			return wr_fail(w, ret);
		goto done;
	}
	ret = write_all(w->fd, out, len);
	if (ret) {
		/*
		 * Cut a partial chunk off so the file ends on a whole one;
		 * if even that fails the reader reports the rest as a tail.
		 */
		if (ftruncate(w->fd, (off_t)w->bytes) == 0)
			lseek(w->fd, (off_t)w->bytes, SEEK_SET);
		return wr_fail(w, ret);
	}
	w->bytes += len;
done:
	w->index++;
	w->raw_len = 0;
	w->nrec = 0;
	w->own = 0;
	w->chunk_lost = 0;
	rec_state_reset(&w->st);
	return 0;
}

/*
 * wr_open - iotap_trace_writer_open() with a compression level
 * (the recorder passes its zstd_level; 0 means 3)
 */
static int wr_open(struct iotap_trace_writer **out, const char *path,
		   const struct iotap_trace_header *hdr, unsigned int flags, int level,
		   const struct iotap_trace_perm *perm)
{
	struct iotap_trace_header def;
	struct iotap_trace_writer *w;
	struct stat st;
	uint8_t *hbuf;
	size_t hlen;
	int ret, oflags;

	if (!out)
		return -EINVAL;
	if (!hdr) {
		iotap_trace_header_init(&def, IOTAP_SOURCE_UNKNOWN);
		hdr = &def;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->fd = -1;
	w->mono_base = hdr->mono_base_ns;
	rec_state_reset(&w->st);
	w->raw = malloc(CHUNK_RAW_TARGET + REC_ENC_MAX);
	if (!w->raw) {
		ret = -ENOMEM;
		goto err_free_writer;
	}
	ret = chunk_enc_init(&w->ce, level);
	if (ret)
		goto err_free_raw;
	ret = fhdr_encode(hdr, &hbuf, &hlen);
	if (ret)
		goto err_release_enc;

	if (!path) {
		/* a ring writer: chunks stay in memory (wr_open_ring) */
		free(hbuf);
		*out = w;
		return 0;
	}
	/* forced: truncated only once we hold the live mark, never another writer's file */
	oflags = O_WRONLY | O_CREAT | O_CLOEXEC;
	oflags |= (flags & IOTAP_TRACE_FORCE) ? 0 : O_EXCL;
	w->fd = open(path, oflags, 0600);
	if (w->fd < 0) {
		ret = -errno;
		goto err_free_hbuf;
	}
	ret = iotap_live_lock(w->fd);
	if (ret) {
		close(w->fd);	/* another writer's live file: left as it is */
		goto err_free_hbuf;
	}
	if (fstat(w->fd, &st) ||
	    ((flags & IOTAP_TRACE_FORCE) && S_ISREG(st.st_mode) && ftruncate(w->fd, 0))) {
		ret = -errno;
		goto err_close_fd;
	}
	/* a device written to (/dev/null) keeps its owner and mode */
	ret = S_ISREG(st.st_mode) ? iotap_trace_perm_apply(w->fd, perm) : 0;
	if (ret)
		goto err_close_fd;
	ret = write_all(w->fd, hbuf, hlen);
	if (ret)
		goto err_close_fd;
	w->bytes = hlen;
	free(hbuf);
	*out = w;
	return 0;

err_close_fd:
	close(w->fd);
	if (!(flags & IOTAP_TRACE_FORCE))
		unlink(path);	/* O_EXCL: the file is ours */
err_free_hbuf:
	free(hbuf);
err_release_enc:
	chunk_enc_release(&w->ce);
err_free_raw:
	free(w->raw);
err_free_writer:
	free(w);
	return ret;
}

/**
 * iotap_trace_writer_open - create a trace file and write its header
 * @out:   the new writer
 * @path:  file to create; -EEXIST if it exists without IOTAP_TRACE_FORCE
 * @hdr:   header to write (copied); NULL: iotap_trace_header_init() defaults
 * @flags: IOTAP_TRACE_FORCE
 *
 * Context: any thread; the writer is then used by one thread at a time.
 * The file holds the live mark (iotap_live_lock()) until the writer closes.
 * Return: 0, -EINVAL, -ENOMEM, -ETXTBSY (@path is another writer's live
 * file: left untouched, even with IOTAP_TRACE_FORCE), or -errno from
 * open(2)/write(2). A file created here whose header could not be written
 * is removed again.
 */
int iotap_trace_writer_open(struct iotap_trace_writer **out, const char *path,
			    const struct iotap_trace_header *hdr, unsigned int flags)
{
	if (!path)
		return -EINVAL;
	return wr_open(out, path, hdr, flags, 0, NULL);
}

/**
 * wr_open_ring - a writer that keeps its last @cap bytes of chunks in
 * memory instead of writing a file (the recorder's flight recorder)
 * @out:   the new writer
 * @level: zstd level, 0 for 3
 * @cap:   bytes of whole chunks kept; the oldest go first (the newest
 *         chunk always stays)
 *
 * wr_save_ring() writes the window out as a complete trace.
 * Return: 0, -EINVAL or -ENOMEM.
 */
int wr_open_ring(struct iotap_trace_writer **out, int level, size_t cap)
{
	struct iotap_trace_header hdr;
	int ret;

	if (!cap)
		return -EINVAL;
	iotap_trace_header_init(&hdr, IOTAP_SOURCE_CAPTURE);
	ret = wr_open(out, NULL, &hdr, 0, level, NULL);
	if (!ret) {
		(*out)->fd = -1;
		(*out)->ring_cap = cap;
	}
	return ret;
}

/**
 * wr_ring_start - the earliest record start of the ring's window
 * @ring: a ring writer
 *
 * Return: ns, or 0 when the ring holds no chunk.
 */
uint64_t wr_ring_start(const struct iotap_trace_writer *ring)
{
	const struct ring_chunk *c;
	uint64_t t = 0;

	for (c = ring->ring_head; c; c = c->next)
		if (!t || c->t_first < t)
			t = c->t_first;
	return t;
}

/**
 * wr_save_ring - write the chunks of @ring into file writer @w
 * @w:    a file writer, its own records (the NAME bindings) flushed first
 * @ring: a ring writer; unchanged
 *
 * Each chunk is written as it was built, its index renumbered to follow
 * @w's (and its header checksum with it); its records and LOST counts
 * join @w's, so @w's END counts them. Return: 0 or -errno (w's error).
 */
int wr_save_ring(struct iotap_trace_writer *w, const struct iotap_trace_writer *ring)
{
	const struct ring_chunk *c;
	struct chunk_hdr h;
	uint8_t hb[CHUNK_HDR_SIZE];
	int ret;

	ret = wr_write_chunk(w);
	if (ret)
		return ret;
	for (c = ring->ring_head; c; c = c->next) {
		if (chunk_hdr_parse(c->data, c->len, &h) || h.hdr_size != CHUNK_HDR_SIZE)
			return -EINVAL;
		h.index = w->index;
		chunk_hdr_pack(hb, &h);
		ret = write_all(w->fd, hb, sizeof(hb));
		if (!ret)
			ret = write_all(w->fd, c->data + CHUNK_HDR_SIZE, c->len - CHUNK_HDR_SIZE);
		if (ret) {
			if (!w->err)
				w->err = ret;
			return ret;
		}
		w->bytes += c->len;
		w->index++;
		w->records += c->nrec;
		w->lost += c->lost;
		if (h.watermark > w->watermark)
			w->watermark = h.watermark;
		if (h.t_last > w->max_time)
			w->max_time = h.t_last;
	}
	w->explicit_wm = 1;
	return 0;
}

/**
 * iotap_trace_writer_open_perm - iotap_trace_writer_open() with the file's
 * permissions
 * @perm: mode and group (NULL: 0600, no chown); see struct iotap_trace_perm
 *
 * Return: as iotap_trace_writer_open(), or -errno of fchown/fchmod (the
 * file is then removed again, as for a failed header).
 */
int iotap_trace_writer_open_perm(struct iotap_trace_writer **out, const char *path,
				 const struct iotap_trace_header *hdr, unsigned int flags,
				 const struct iotap_trace_perm *perm)
{
	return wr_open(out, path, hdr, flags, 0, perm);
}

/**
 * iotap_trace_perm_apply - give the open file @fd the permissions @perm
 * @fd:   a file the caller created
 * @perm: NULL or zero mode: 0600; the group first when @perm->has_gid
 *
 * The bits are set exactly, whatever the umask: sharing is deliberate.
 * Return: 0, -EINVAL for bits outside 0666, or -errno of fchown/fchmod.
 */
int iotap_trace_perm_apply(int fd, const struct iotap_trace_perm *perm)
{
	unsigned int mode = perm && perm->mode ? perm->mode : IOTAP_TRACE_MODE_DEFAULT;

	if (mode & ~0666u)
		return -EINVAL;
	if (perm && perm->has_gid && fchown(fd, (uid_t)-1, (gid_t)perm->gid))
		return -errno;
	if (fchmod(fd, (mode_t)mode))
		return -errno;
	return 0;
}

/**
 * wr_open_level - iotap_trace_writer_open() with a zstd level (recorder)
 * @out:   the new writer
 * @path:  file to create
 * @hdr:   header (copied)
 * @flags: IOTAP_TRACE_FORCE
 * @level: zstd level, 0 for 3
 * @perm:  the file's permissions (NULL: 0600)
 *
 * Return: as iotap_trace_writer_open().
 */
int wr_open_level(struct iotap_trace_writer **out, const char *path,
		  const struct iotap_trace_header *hdr, unsigned int flags, int level,
		  const struct iotap_trace_perm *perm)
{
	return wr_open(out, path, hdr, flags, level, perm);
}

/* Account a record just encoded into the open chunk; write the chunk when full. */
static inline int wr_appended(struct iotap_trace_writer *w, uint64_t time_ns, uint64_t dur_ns,
			      int own)
{
	uint64_t end = time_ns + dur_ns;

	if (end < time_ns)
		end = UINT64_MAX;
	if (!w->nrec || time_ns < w->t_first)
		w->t_first = time_ns;
	if (!w->nrec || end > w->t_last)
		w->t_last = end;
	if (time_ns > w->max_time)
		w->max_time = time_ns;
	w->nrec++;
	w->own += !!own;
	w->records++;
	if (w->raw_len >= CHUNK_RAW_TARGET || w->nrec >= CHUNK_REC_TARGET)
		return wr_write_chunk(w);
	return 0;
}

/**
 * wr_append - iotap_trace_writer_append(), telling the writer's own
 * records apart
 * @w:   writer
 * @rec: record
 * @own: the record is the recorder's own (SAMPLE, LOST, NOTE it made):
 *       not counted in wr_dropped() if an error discards it
 *
 * Return: as iotap_trace_writer_append().
 */
int wr_append(struct iotap_trace_writer *w, const struct iotap_trace_rec *rec, int own)
{
	int ret;

	ret = rec_check(rec);
	if (ret)
		return ret;
	if (w->pending_lost && !w->nrec && rec->type != IOTAP_REC_END) {
		/* a new chunk after a failed one: say first what is missing */
		struct iotap_trace_rec lost;

		iotap_trace_lost_init(&lost, w->pending_lost, 0);
		lost.time_ns = rec->time_ns;
		w->pending_lost = 0;
		ret = wr_append(w, &lost, 1);
		if (ret)
			return ret;
	}
	w->raw_len += rec_encode(&w->st, w->raw + w->raw_len, rec);
	if (rec->type == IOTAP_REC_LOST) {
		w->lost += rec->length;
		w->chunk_lost += rec->length;
	}
	return wr_appended(w, rec->time_ns, rec->dur_ns, own);
}

/**
 * wr_append_op - wr_append() of an OP record the recorder buffered
 * @w:    writer
 * @e:    the record (passed rec_check() when it was buffered)
 * @name: its name bytes, or NULL
 *
 * The recorder's path for the records of its threads (not "own"): encodes
 * @e as it is, with no struct iotap_trace_rec in between.
 *
 * Return: as iotap_trace_writer_append().
 */
int wr_append_op(struct iotap_trace_writer *w, const struct rec_slim *e, const char *name)
{
	if (__builtin_expect(w->pending_lost && !w->nrec, 0)) {
		/* a new chunk after a failed one: wr_append() says first what is missing */
		struct iotap_trace_rec rec;

		memset(&rec, 0, sizeof(rec));
		rec_from_slim(&rec, e, name);
		return wr_append(w, &rec, 0);
	}
	w->raw_len += rec_encode_op(&w->st, w->raw + w->raw_len, e, name);
	return wr_appended(w, e->time_ns, e->dur_ns, 0);
}

/**
 * iotap_trace_writer_append - add one record to the open chunk
 * @w:   writer
 * @rec: record (copied, name included)
 *
 * Compresses and writes the chunk when it is full (may block on write(2)).
 * Context: the writer's thread.
 * Return: 0, -EINVAL for a malformed record, or the writer's first error
 * (the record is then dropped).
 */
int iotap_trace_writer_append(struct iotap_trace_writer *w,
			      const struct iotap_trace_rec *rec)
{
	return wr_append(w, rec, 0);
}

/**
 * wr_promise - set the watermark the next chunk carries, without writing
 * @w:         writer
 * @watermark: every record appended from now on starts at or after it, ns
 *
 * Switches the writer to caller-given watermarks. A smaller value than
 * the current one is ignored: promises only grow.
 */
void wr_promise(struct iotap_trace_writer *w, uint64_t watermark)
{
	w->explicit_wm = 1;
	if (watermark > w->watermark)
		w->watermark = watermark;
}

/**
 * iotap_trace_writer_flush - close the open chunk and write it
 * @w:         writer
 * @watermark: every record appended after this call starts at or after
 *             @watermark ns; 0: no new promise
 *
 * Without any non-zero @watermark ever given, the writer assumes start
 * order and uses the largest start appended so far (FORMAT.md).
 * Context: the writer's thread; may block on write(2).
 * Return: 0 or the writer's first error.
 */
int iotap_trace_writer_flush(struct iotap_trace_writer *w, uint64_t watermark)
{
	if (watermark)
		wr_promise(w, watermark);
	return wr_write_chunk(w);
}

/**
 * wr_close_at - iotap_trace_writer_close() with the END record's time
 * @w:        writer, always freed
 * @end_time: time_ns of the END record
 *
 * Return: 0 or the first error the writer met.
 */
int wr_close_at(struct iotap_trace_writer *w, uint64_t end_time)
{
	struct iotap_trace_rec end;
	int ret;

	if (!w)
		return -EINVAL;
	if (w->pending_lost) {
		/* what the last failed chunks held, in a chunk of its own */
		wr_write_chunk(w);
		iotap_trace_lost_init(&end, w->pending_lost, 0);
		end.time_ns = end_time;
		w->pending_lost = 0;
		wr_append(w, &end, 1);
	}
	iotap_trace_end_init(&end, w->records, w->lost + w->pending_lost);
	end.time_ns = end_time;
	if (!wr_append(w, &end, 1))
		wr_write_chunk(w);
	if (w->fd >= 0 && close(w->fd) && !w->err)
		w->err = -errno;
	ring_free(w);
	ret = w->err;
	chunk_enc_release(&w->ce);
	free(w->raw);
	free(w);
	return ret;
}

/**
 * iotap_trace_writer_close - flush, append END, close the file and free @w
 * @w: writer, always freed
 *
 * The END record starts at the largest start time appended (the header's
 * mono_base_ns for an empty trace), or at the last watermark promised if
 * that is later, so that it comes last; it carries the records written and
 * the records lost.
 * Return: 0 or the first error the writer met.
 */
int iotap_trace_writer_close(struct iotap_trace_writer *w)
{
	uint64_t t;

	if (!w)
		return -EINVAL;
	t = w->records ? w->max_time : w->mono_base;
	return wr_close_at(w, t > w->watermark ? t : w->watermark);
}

/**
 * iotap_trace_writer_bytes - bytes in the file so far (header + chunks)
 * @w: writer
 */
uint64_t iotap_trace_writer_bytes(const struct iotap_trace_writer *w)
{
	return w->bytes;
}

/**
 * wr_error - the writer's first error, 0 if none
 * @w: writer
 */
int wr_error(const struct iotap_trace_writer *w)
{
	return w->err;
}

/**
 * wr_dropped - callers' records appended but not written because of an
 * error (own records excluded, see wr_append())
 * @w: writer
 */
uint64_t wr_dropped(const struct iotap_trace_writer *w)
{
	return w->dropped;
}

/**
 * wr_max_time - the largest time_ns appended so far
 * @w: writer
 */
uint64_t wr_max_time(const struct iotap_trace_writer *w)
{
	return w->max_time;
}
