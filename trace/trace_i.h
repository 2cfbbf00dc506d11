/* SPDX-License-Identifier: MIT */
/*
 * trace_i.h - private declarations shared by the sources of trace/
 *
 * The byte layouts behind these constants are specified in FORMAT.md; the
 * numbers here must match it. Module prefixes: fhdr_ (file header, chunk.c),
 * chunk_ (chunk framing, chunk.c), rec_ (record codec, record.c and
 * record_decode.c), wr_ (writer internals the recorder uses, writer.c),
 * smp_ (resource sampling, sample.c), rcd_ (recorder test hooks,
 * recorder.c).
 *
 * Nothing here is thread-safe on its own: a struct rec_state, a struct
 * chunk_enc and a struct chunk_dec each belong to one thread at a time.
 */
#ifndef IOTAP_TRACE_I_H
#define IOTAP_TRACE_I_H

#include <stdint.h>
#include <stddef.h>
#include <string.h>

#include "iotap_trace.h"

/* --- file header (FORMAT.md "File header") ---------------------------- */

#define TRACE_MAGIC		IOTAP_TRACE_MAGIC	/* 8 bytes, no NUL on disk */
#define TRACE_MAGIC_LEN		IOTAP_TRACE_MAGIC_LEN
#define TRACE_HDR_FIXED		40		/* bytes before the first TLV field */
#define TRACE_HDR_MIN		(TRACE_HDR_FIXED + 8)
#define TRACE_HDR_MAX		(1u << 20)	/* readers refuse larger headers */
#define TRACE_TLV_MAX		0xffffu		/* longest string field, bytes */

enum fhdr_tag {
	FHDR_TAG_HOST = 1,
	FHDR_TAG_KERNEL = 2,
	FHDR_TAG_MOUNT_OPTS = 3,
	FHDR_TAG_CMDLINE = 4,
	FHDR_TAG_BACKING = 5,
	FHDR_TAG_MOUNTPOINT = 6,
	FHDR_TAG_TOOL = 7,
	FHDR_TAG_WORKLOAD = 8,
	FHDR_TAG_LAYOUT = 9,
	FHDR_TAG_FUSE = 10,
	FHDR_TAG_MAX
};

int fhdr_encode(const struct iotap_trace_header *hdr, uint8_t **out, size_t *len);
int fhdr_probe(const uint8_t *p, size_t len, unsigned int *major,
	       unsigned int *minor, uint32_t *hdr_size);
int fhdr_decode(const uint8_t *p, size_t len, struct iotap_trace_header *hdr,
		char **strings);

/* --- chunks (FORMAT.md "Chunks") --------------------------------------- */

#define CHUNK_MAGIC		"IOTAPCK\n"	/* 8 bytes */
#define CHUNK_MAGIC_LEN		8
#define CHUNK_HDR_SIZE		72		/* what this version writes */
#define CHUNK_HDR_MAX		4096		/* readers refuse larger headers */
#define CHUNK_RAW_MAX		(16u << 20)	/* largest raw payload a reader accepts */
#define CHUNK_REC_MAX		(1u << 20)	/* most records a reader accepts per chunk */
#define CHUNK_RAW_TARGET	(128u << 10)	/* writers close a chunk at this raw size (BENCHMARKS.md "Session 17") */
#define CHUNK_REC_TARGET	(1u << 18)	/* ... or at this many records */
#define CHUNK_FLAGS_REQUIRED	0xffff0000u	/* unknown ones make a chunk unreadable */

/* A chunk header, decoded. */
struct chunk_hdr {
	uint32_t hdr_size;		/* bytes of the header on disk */
	uint32_t flags;
	uint32_t payload_size;		/* compressed bytes after the header */
	uint32_t raw_size;		/* decompressed bytes */
	uint32_t nrec;			/* records in the payload */
	uint32_t index;			/* 0, 1, 2... in writing order */
	uint64_t t_first;		/* smallest time_ns, ns */
	uint64_t t_last;		/* largest time_ns + dur_ns, ns */
	uint64_t watermark;		/* records in later chunks start at or after it */
	uint64_t payload_hash;		/* XXH64 of the payload, seed 0 */
};

/* chunk_hdr_parse() results besides 0 */
#define CHUNK_NEED_MORE		1	/* plausible so far; @avail too short to tell */

void chunk_hdr_pack(uint8_t out[CHUNK_HDR_SIZE], const struct chunk_hdr *h);
int chunk_hdr_parse(const uint8_t *p, size_t avail, struct chunk_hdr *h);

/* Compressor: one per writer. */
struct chunk_enc {
	void *cctx;			/* ZSTD_CCtx */
	uint8_t *out;			/* header + payload of the chunk being built */
	size_t out_cap;
};

int chunk_enc_init(struct chunk_enc *ce, int level);
void chunk_enc_release(struct chunk_enc *ce);
int chunk_enc_build(struct chunk_enc *ce, struct chunk_hdr *h, const void *raw,
		    size_t raw_len, const uint8_t **out, size_t *out_len);

/* Decompressor: one per reader. */
struct chunk_dec {
	void *dctx;			/* ZSTD_DCtx */
	uint8_t *raw;			/* decompressed payload of the current chunk */
	size_t raw_cap;
};

int chunk_dec_init(struct chunk_dec *cd);
void chunk_dec_release(struct chunk_dec *cd);
int chunk_dec_payload(struct chunk_dec *cd, const struct chunk_hdr *h,
		      const uint8_t *payload);
int chunk_dec_into(struct chunk_dec *cd, const struct chunk_hdr *h, const uint8_t *payload,
		   uint8_t **raw, size_t *raw_cap);

/* --- records (FORMAT.md "Records") ------------------------------------- */

#define REC_TID_SLOTS		64
#define REC_FILE_SLOTS		256
/* Upper bound of one encoded record, bytes. */
#define REC_ENC_MAX		(64 + 20 * 10 + IOTAP_TRACE_NAME_MAX + 16 * 10)

/*
 * The compact in-memory record: the recorder's per-thread buffers hold
 * these (112 bytes instead of the 248 of struct iotap_trace_rec). A name or
 * a sample lives beside it, in the bytes after the entry (@data). (The
 * reader decodes into the head of struct iotap_trace_rec instead: REC_HEAD.)
 */
struct rec_slim {
	uint64_t time_ns;
	uint64_t dur_ns;
	uint64_t file;
	uint64_t file2;
	uint64_t fh;
	uint64_t offset;
	uint64_t length;
	int64_t result;
	uint64_t aux;
	uint32_t flags;
	uint32_t tid;
	uint32_t pid;
	uint32_t uid;
	uint32_t gid;
	uint32_t mode;
	uint32_t name_len;
	uint32_t data;			/* REC_NO_DATA: no name and no sample */
	uint16_t type;
	uint16_t op;
	uint32_t pad;
};
_Static_assert(sizeof(struct rec_slim) == 112, "rec_slim layout");

#define REC_NO_DATA		UINT32_MAX

/*
 * When @s's unit ended, for the read statistics' time span: an APP record
 * is written when its unit ends (time_ns is that end, dur_ns its length),
 * every other record at its start. UINT64_MAX where the sum overflows.
 */
static inline uint64_t rec_end_ns(const struct iotap_trace_rec *s)
{
	uint64_t e = s->type == IOTAP_REC_APP ? s->time_ns : s->time_ns + s->dur_ns;

	return e < s->time_ns ? UINT64_MAX : e;
}

/* @e takes @rec's fields; @e->data says whether there is a name, @e->pad is 0. */
static inline void rec_slim_from(struct rec_slim *e, const struct iotap_trace_rec *rec)
{
	e->time_ns = rec->time_ns;
	e->dur_ns = rec->dur_ns;
	e->file = rec->file;
	e->file2 = rec->file2;
	e->fh = rec->fh;
	e->offset = rec->offset;
	e->length = rec->length;
	e->result = rec->result;
	e->aux = rec->aux;
	e->flags = rec->flags;
	e->tid = rec->tid;
	e->pid = rec->pid;
	e->uid = rec->uid;
	e->gid = rec->gid;
	e->mode = rec->mode;
	e->name_len = rec->name_len;
	e->data = rec->name ? 0 : REC_NO_DATA;
	e->type = rec->type;
	e->op = rec->op;
	e->pad = 0;
}

/* @rec takes @e's fields and @name (NULL: none); rec->sample is left alone. */
static inline void rec_from_slim(struct iotap_trace_rec *rec, const struct rec_slim *e,
				 const char *name)
{
	rec->type = e->type;
	rec->op = e->op;
	rec->flags = e->flags;
	rec->time_ns = e->time_ns;
	rec->dur_ns = e->dur_ns;
	rec->tid = e->tid;
	rec->pid = e->pid;
	rec->uid = e->uid;
	rec->gid = e->gid;
	rec->file = e->file;
	rec->file2 = e->file2;
	rec->fh = e->fh;
	rec->offset = e->offset;
	rec->length = e->length;
	rec->result = e->result;
	rec->mode = e->mode;
	rec->name_len = e->name_len;
	rec->aux = e->aux;
	rec->name = name;
}

struct rec_tid_slot {
	uint32_t tid;
	uint32_t pad;
	uint64_t end;			/* time_ns + dur_ns of this tid's last OP */
};

struct rec_file_slot {
	uint64_t file;
	uint64_t end;			/* where the last READ/WRITE on file ended */
	uint64_t fh;
	uint64_t length;
};

/* Delta state: identical in encoder and decoder, zeroed at every chunk start. */
struct rec_state {
	uint64_t last_time;		/* time_ns of the previous record of any type */
	uint64_t prev_file;		/* file of the previous OP */
	uint32_t prev_tid, prev_pid, prev_uid, prev_gid;	/* of the previous OP */
	struct rec_tid_slot tids[REC_TID_SLOTS];
	struct rec_file_slot files[REC_FILE_SLOTS];
};

/*
 * The reader's decoded records are the fields of struct iotap_trace_rec
 * before its sample, in its own layout (REC_HEAD bytes each, no sample), so
 * that delivering one is a pointer or one fixed-size copy. Only these
 * fields of such a record may be touched.
 */
#define REC_HEAD		offsetof(struct iotap_trace_rec, sample)
_Static_assert(REC_HEAD == 112, "the head of struct iotap_trace_rec");
/*
 * Bytes between two decoded records: the head, no padding. (128, two
 * whole cache lines, cost an eighth more memory and page faults for
 * nothing: a report of the bonnie++ capture ran 3-10% faster at 112.)
 */
#define REC_STRIDE		112

/* Copy a record handed out by next_ref() (a head, or whole if SAMPLE) into a whole struct. */
static inline void rec_copy_out(struct iotap_trace_rec *dst, const struct iotap_trace_rec *src)
{
	/* a copy of a zero struct, not memset: that compiled to rep stos */
	static const struct iotap_trace_sample zero_sample;

	memcpy(dst, src, REC_HEAD);
	if (src->type == IOTAP_REC_SAMPLE)
		memcpy(&dst->sample, &src->sample, sizeof(dst->sample));
	else
		memcpy(&dst->sample, &zero_sample, sizeof(dst->sample));
}

/* The next() of a next_ref() that returned @ret with @src: copy a record out, pass @ret on. */
static inline int rec_next_copy(int ret, struct iotap_trace_rec *dst,
				const struct iotap_trace_rec *src)
{
	if (ret == 1)
		rec_copy_out(dst, src);
	return ret;
}

/* What rec_decode() found besides the fixed fields. */
struct rec_extra {
	const uint8_t *name;		/* in the raw payload, no NUL; NULL: no name */
	struct iotap_trace_sample sample;	/* SAMPLE only */
};

/* Starts and ends of a chunk's records so far (the reader's sort and statistics). */
struct rec_sum {
	uint64_t last;			/* start of the last record */
	uint64_t tmin, tmax;		/* smallest and largest start (tmin: UINT64_MAX at first) */
	uint64_t tend;			/* largest start + duration, saturated */
	uint32_t desc;			/* records starting before the one before them */
};

void rec_state_reset(struct rec_state *st);
int rec_check(const struct iotap_trace_rec *rec);
size_t rec_encode(struct rec_state *st, uint8_t *out, const struct iotap_trace_rec *rec);
size_t rec_encode_op(struct rec_state *st, uint8_t *out, const struct rec_slim *e,
		     const char *name);
int rec_decode(struct rec_state *st, const uint8_t *p, const uint8_t *end,
	       struct iotap_trace_rec *s, struct rec_extra *x);
int rec_decode_ops(struct rec_state *st, const uint8_t **pp, const uint8_t *end,
		   unsigned char *out, uint32_t max, struct rec_sum *sum);

/* --- the reader's fast path (reader_deliver.c sets it up; join.c reads it too) --- */

#define RD_PREFETCH		8	/* records fetched ahead of delivery */
#define PK_IDX_BITS		20	/* a packed sort key's index bits */

/*
 * Merged reading: the records of the batch at the top of the reader's heap
 * that start before a limit come before every other pending record and
 * are released (the watermark or the end of the file says so), so they
 * go without the heap, the checks and the statistics of the slow path,
 * which sets this up after each record it delivers and takes it down
 * (pos back into the batch) when it runs again.
 */
struct rd_run {
	unsigned char *recs;		/* the batch's records */
	const uint64_t *keys;		/* its packed keys (RD_PREFETCH more readable), NULL: sorted */
	uint64_t lim;			/* keys (sorted: starts) below it go */
	uint32_t pos;			/* next position in merge order */
	uint32_t end;			/* fast up to here (excluded); 0: no run */
};

/*
 * The run's next record, or NULL (nothing taken) when the slow path must
 * decide: the run's end, the limit, or a SAMPLE record (whose sample is
 * not in the batch's records).
 */
static inline const struct iotap_trace_rec *rd_run_next(struct rd_run *c)
{
	const struct iotap_trace_rec *s;
	uint32_t i = c->pos, idx;

	if (i >= c->end)
		return NULL;
	if (c->keys) {
		uint64_t k = c->keys[i];

		if (k >= c->lim)
			return NULL;
		idx = (uint32_t)(k & ((1u << PK_IDX_BITS) - 1));
		__builtin_prefetch(c->recs + (size_t)(c->keys[i + RD_PREFETCH] &
						       ((1u << PK_IDX_BITS) - 1)) * REC_STRIDE);
	} else {
		idx = i;
		if (((const struct iotap_trace_rec *)(c->recs + (size_t)idx * REC_STRIDE))->time_ns >=
		    c->lim)
			return NULL;
		__builtin_prefetch(c->recs + (size_t)(i + RD_PREFETCH) * REC_STRIDE);
	}
	s = (const struct iotap_trace_rec *)(c->recs + (size_t)idx * REC_STRIDE);
	if (__builtin_expect(s->type == IOTAP_REC_SAMPLE, 0))
		return NULL;
	c->pos = i + 1;
	return s;
}

/*
 * join.c: records looked through for a piece's continuation (other
 * threads' records in between); a cut piece at position p folds pieces
 * up to p + JOIN_WINDOW - 2 at most (split.c relies on it).
 */
#define JOIN_WINDOW	4096u

/* A piece join.c folds its continuation into. */
static inline int rec_is_cut(const struct iotap_trace_rec *rec)
{
	return rec->type == IOTAP_REC_OP && (rec->flags & IOTAP_OPF_CUT) &&
	       (rec->op == IOTAP_OP_READ || rec->op == IOTAP_OP_WRITE);
}

/* Where @j counts (iotap_trace_join_stats()): split.c reads them at a window's end. */
void join_counters(const struct iotap_trace_join *j, const uint64_t **calls,
		   const uint64_t **pieces);
/* split.c: count only the calls that start in [@lo, @hi) (default: all) */
void join_count_range(struct iotap_trace_join *j, uint64_t lo, uint64_t hi);
/* split.c: 0 while @j holds no record (the reader's until_idle) */
const unsigned int *join_idle_word(const struct iotap_trace_join *j);

/* The reader's fast-path cursor, for join.c to take records from without a call. */
struct rd_run *rd_run_of(struct iotap_trace_reader *r);

/* --- writer internals used by the recorder ----------------------------- */

int wr_open_level(struct iotap_trace_writer **out, const char *path,
		  const struct iotap_trace_header *hdr, unsigned int flags, int level,
		  const struct iotap_trace_perm *perm);
int wr_append(struct iotap_trace_writer *w, const struct iotap_trace_rec *rec, int own);
int wr_append_op(struct iotap_trace_writer *w, const struct rec_slim *e, const char *name);
void wr_promise(struct iotap_trace_writer *w, uint64_t watermark);
int wr_close_at(struct iotap_trace_writer *w, uint64_t end_time);
int wr_error(const struct iotap_trace_writer *w);
uint64_t wr_dropped(const struct iotap_trace_writer *w);
uint64_t wr_max_time(const struct iotap_trace_writer *w);
int wr_open_ring(struct iotap_trace_writer **out, int level, size_t cap);
uint64_t wr_ring_start(const struct iotap_trace_writer *ring);
int wr_save_ring(struct iotap_trace_writer *w, const struct iotap_trace_writer *ring);

/* --- resource sampling (sample.c) -------------------------------------- */

struct smp_state {
	int dev_fd;			/* /sys/dev/block/M:m/stat, -1: none */
	int stat_fd;			/* /proc/stat, -1: unreadable */
	int statm_fd;			/* /proc/self/statm, -1: unreadable */
	uint32_t major, minor;		/* st_dev of the sample path */
	uint64_t tick_ns;		/* ns per USER_HZ tick */
	uint64_t page_kb;		/* page size, KiB */
};

int smp_open(struct smp_state *s, const char *path, char *note, size_t note_len);
void smp_read(struct smp_state *s, struct iotap_trace_sample *out);
void smp_close(struct smp_state *s);

/* --- recorder test hooks ----------------------------------------------- */

void rcd_test_hold(struct iotap_trace_recorder *r, int hold);

#endif /* IOTAP_TRACE_I_H */
