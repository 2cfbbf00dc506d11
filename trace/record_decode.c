// SPDX-License-Identifier: MIT
/*
 * record_decode.c - decode one record of a chunk's raw payload, and runs
 * of OP records (the reader's loop)
 *
 * The decoder is on the reader's hot path (ten million records a second is
 * the target): it works on local copies of the fields, reads each varint
 * with a one-byte fast path, and never allocates. It must also survive any
 * input: every read is bounds-checked, and a malformed record returns
 * -EBADMSG rather than touching memory outside [p, end). The layouts are
 * FORMAT.md's "Records"; the encoder is record.c.
 */
#include <errno.h>
#include <string.h>

#include "record_i.h"

/*
 * Reads one LEB128 varint. Returns the new position or NULL when the varint
 * runs past @end or does not fit 64 bits (a tenth byte above 1).
 */
static inline const uint8_t *get_varint(const uint8_t *p, const uint8_t *end,
					uint64_t *out)
{
	uint64_t v;
	unsigned int shift;

	if (p < end && *p < 0x80) {
		*out = *p;
		return p + 1;
	}
	if (end - p >= 10) {
		/* room for the longest varint: no bounds check per byte */
		const uint8_t *q = p;
		uint64_t b;

		v = *q++ & 0x7f;
		for (shift = 7; shift < 63; shift += 7) {
			b = *q++;
			v |= (b & 0x7f) << shift;
			if (b < 0x80) {
				*out = v;
				return q;
			}
		}
		b = *q++;		/* the tenth byte: 0 or 1 */
		if (b > 1)
			return NULL;
		*out = v | b << 63;
		return q;
	}
	v = 0;
	for (shift = 0; shift < 64; shift += 7) {
		uint8_t b;

		if (p >= end)
			return NULL;
		b = *p++;
		if (shift == 63 && b > 1)
			return NULL;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*out = v;
			return p;
		}
	}
	return NULL;
}

static inline const uint8_t *get_u32(const uint8_t *p, const uint8_t *end,
				     uint32_t *out)
{
	uint64_t v;

	p = get_varint(p, end, &v);
	if (!p || v > UINT32_MAX)
		return NULL;
	*out = (uint32_t)v;
	return p;
}

static int dec_name(const uint8_t **pp, const uint8_t *end, struct iotap_trace_rec *s,
		    struct rec_extra *x)
{
	const uint8_t *p = *pp;
	uint32_t len;

	p = get_u32(p, end, &len);
	if (!p || len > IOTAP_TRACE_NAME_MAX || len > (size_t)(end - p))
		return -EBADMSG;
	s->name_len = len;
	x->name = p;
	*pp = p + len;
	return 0;
}

/*
 * The fast path of OP records, taken when DEC_FAST_ROOM bytes remain: an
 * OP record's fields before its name take at most 1 + 3 + 3 + 4 x 5 + 9 x
 * 10 = 117 bytes, so none of them can run past the payload and its
 * varints are read without bounds checks, eight bytes at a time. What
 * the checked path refuses it refuses too, at the end (@bad, @wide): the
 * record's bytes are the same, only the moment of the verdict moves.
 */
#define DEC_FAST_ROOM	(117 + 8 + 8)	/* + the 8-byte load at the last varint, + slack */

static inline uint64_t load_le64(const uint8_t *p)
{
	uint64_t w;

	memcpy(&w, p, sizeof(w));
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	w = __builtin_bswap64(w);
#endif
	return w;
}

/* A varint of 5 to 10 bytes at @p (the first four in @v): sets *@bad if it does not fit 64 bits. */
static __attribute__((noinline)) uint64_t fv_long(const uint8_t **pp, uint64_t v,
						  unsigned int *bad)
{
	const uint8_t *p = *pp + 4;
	unsigned int shift;
	uint64_t b;

	for (shift = 28; shift < 63; shift += 7) {
		b = *p++;
		v |= (b & 0x7f) << shift;
		if (b < 0x80) {
			*pp = p;
			return v;
		}
	}
	b = *p++;		/* the tenth byte: 0 or 1 */
	*bad |= b > 1;
	*pp = p;
	return v | b << 63;
}

/* One varint at *@pp, at least 10 readable bytes there. */
static inline uint64_t fv(const uint8_t **pp, unsigned int *bad)
{
	const uint8_t *p = *pp;
	uint64_t w = load_le64(p), v = w & 0x7f;

	if (!(w & 0x80)) {
		*pp = p + 1;
		return v;
	}
	v |= (w >> 1) & (0x7full << 7);
	if (!(w & 0x8000)) {
		*pp = p + 2;
		return v;
	}
	v |= (w >> 2) & (0x7full << 14);
	if (!(w & 0x800000)) {
		*pp = p + 3;
		return v;
	}
	v |= (w >> 3) & (0x7full << 21);
	if (!(w & 0x80000000)) {
		*pp = p + 4;
		return v;
	}
	return fv_long(pp, v, bad);
}

/*
 * The scalar part of the delta state, which the fast path keeps in
 * registers across a run of records (hot_load() and hot_store() move it
 * from and to struct rec_state).
 */
struct rec_hot {
	uint64_t last_time, prev_file;
	uint32_t prev_tid, prev_pid, prev_uid, prev_gid;
};

static inline void hot_load(struct rec_hot *h, const struct rec_state *st)
{
	h->last_time = st->last_time;
	h->prev_file = st->prev_file;
	h->prev_tid = st->prev_tid;
	h->prev_pid = st->prev_pid;
	h->prev_uid = st->prev_uid;
	h->prev_gid = st->prev_gid;
}

static inline void hot_store(struct rec_state *st, const struct rec_hot *h)
{
	st->last_time = h->last_time;
	st->prev_file = h->prev_file;
	st->prev_tid = h->prev_tid;
	st->prev_pid = h->prev_pid;
	st->prev_uid = h->prev_uid;
	st->prev_gid = h->prev_gid;
}

static inline __attribute__((always_inline)) int
dec_op_rest(struct rec_state *st, struct rec_hot *st0, const uint8_t *p0, const uint8_t *p,
	    const uint8_t *end, struct iotap_trace_rec *s, struct rec_extra *x, uint64_t op,
	    uint64_t bits, unsigned int bad);

/*
 * As dec_op(), the scalar state in @st0 (the tables in @st); @names 0:
 * return 0 for a record with a name, decoding nothing, and take the
 * commonest presence patterns of captures (READ/WRITE records that moved
 * their offset; pgbench's with their thread, process and handle) through
 * copies of the decoder in which the pattern is a constant.
 */
static inline __attribute__((always_inline)) int
dec_op_fast(struct rec_state *st, struct rec_hot *st0, const uint8_t *p0, const uint8_t *end,
	    struct iotap_trace_rec *s, struct rec_extra *x, int names)
{
	const uint8_t *p = p0 + 1;
	uint64_t op, bits, v;
	unsigned int bad = 0;

	v = load_le64(p);
	if (!(v & 0x8080)) {
		/* op and bits one byte each: the common case */
		op = v & 0x7f;
		bits = (v >> 8) & 0x7f;
		p += 2;
	} else {
		op = fv(&p, &bad);
		bits = fv(&p, &bad);
	}
	if (op > UINT16_MAX || (bits & ~(uint64_t)OPB_ALL))
		return -EBADMSG;
	if (names)
		return dec_op_rest(st, st0, p0, p, end, s, x, op, bits, bad);
	if (bits & OPB_NAME)
		return 0;
	switch (bits) {
	case OPB_OFF:
		return dec_op_rest(st, st0, p0, p, end, s, x, op, OPB_OFF, bad);
	case OPB_OFF | OPB_FILE:
		return dec_op_rest(st, st0, p0, p, end, s, x, op, OPB_OFF | OPB_FILE, bad);
	case OPB_OFF | OPB_FH | OPB_TID | OPB_PID:
		return dec_op_rest(st, st0, p0, p, end, s, x, op,
				   OPB_OFF | OPB_FH | OPB_TID | OPB_PID, bad);
	case OPB_OFF | OPB_FH | OPB_FILE | OPB_TID | OPB_PID:
		return dec_op_rest(st, st0, p0, p, end, s, x, op,
				   OPB_OFF | OPB_FH | OPB_FILE | OPB_TID | OPB_PID, bad);
	case 0:
		return dec_op_rest(st, st0, p0, p, end, s, x, op, 0, bad);
	case OPB_FH | OPB_MODE | OPB_AUX:	/* GETATTR on a handle */
		return dec_op_rest(st, st0, p0, p, end, s, x, op, OPB_FH | OPB_MODE | OPB_AUX, bad);
	case OPB_FILE | OPB_FILE2 | OPB_MODE:	/* LOOKUP */
		return dec_op_rest(st, st0, p0, p, end, s, x, op, OPB_FILE | OPB_FILE2 | OPB_MODE,
				   bad);
	default:
		return dec_op_rest(st, st0, p0, p, end, s, x, op, bits, bad);
	}
}

/* The rest of dec_op_fast() after op and bits, up to @p. */
static inline __attribute__((always_inline)) int
dec_op_rest(struct rec_state *st, struct rec_hot *st0, const uint8_t *p0, const uint8_t *p,
	    const uint8_t *end, struct iotap_trace_rec *s, struct rec_extra *x, uint64_t op,
	    uint64_t bits, unsigned int bad)
{
	struct rec_tid_slot *ts;
	struct rec_file_slot *fs;
	uint64_t v, wide = 0, base, time, dur, file, off = 0, fh = 0, len = 0;
	uint32_t tid;
	int64_t res = 0;
	int data;

	tid = st0->prev_tid;
	if (bits & OPB_TID) {
		v = fv(&p, &bad);
		wide |= v;
		tid = (uint32_t)v;
	}
	s->pid = st0->prev_pid;
	s->uid = st0->prev_uid;
	s->gid = st0->prev_gid;
	if (__builtin_expect(bits & (OPB_PID | OPB_UID | OPB_GID), 0)) {
		if (bits & OPB_PID) {
			v = fv(&p, &bad);
			wide |= v;
			s->pid = (uint32_t)v;
		}
		if (bits & OPB_UID) {
			v = fv(&p, &bad);
			wide |= v;
			s->uid = (uint32_t)v;
		}
		if (bits & OPB_GID) {
			v = fv(&p, &bad);
			wide |= v;
			s->gid = (uint32_t)v;
		}
	}
	ts = &st->tids[tid & (REC_TID_SLOTS - 1)];
	base = ts->tid == tid ? ts->end : st0->last_time;
	time = base + (uint64_t)unzigzag(fv(&p, &bad));
	dur = fv(&p, &bad);
	file = st0->prev_file;
	if (bits & OPB_FILE)
		file += (uint64_t)unzigzag(fv(&p, &bad));
	s->file2 = 0;
	if (__builtin_expect(bits & OPB_FILE2, 0))
		s->file2 = file + (uint64_t)unzigzag(fv(&p, &bad));
	data = is_data_op((unsigned int)op);
	fs = &st->files[file_slot(file)];
	if (data && fs->file == file) {
		off = fs->end;
		fh = fs->fh;
		len = fs->length;
	}
	if (bits & OPB_FH)
		fh = fv(&p, &bad);
	if (bits & OPB_OFF)
		off += (uint64_t)unzigzag(fv(&p, &bad));
	if (bits & OPB_LEN)
		len = fv(&p, &bad);
	if (data)
		res = (int64_t)len;
	if (bits & OPB_RES)
		res = unzigzag(fv(&p, &bad));
	s->flags = 0;
	s->mode = 0;
	s->aux = 0;
	s->name_len = 0;
	x->name = NULL;
	if (bits & (OPB_FLAGS | OPB_MODE | OPB_AUX | OPB_NAME)) {
		if (bits & OPB_FLAGS) {
			v = fv(&p, &bad);
			wide |= v;
			s->flags = (uint32_t)v;
		}
		if (bits & OPB_MODE) {
			v = fv(&p, &bad);
			wide |= v;
			s->mode = (uint32_t)v;
		}
		if (bits & OPB_AUX)
			s->aux = fv(&p, &bad);
		if ((bits & OPB_NAME) && dec_name(&p, end, s, x))
			return -EBADMSG;
	}
	if (bad || (wide >> 32))
		return -EBADMSG;

	s->type = IOTAP_REC_OP;
	s->op = (uint16_t)op;
	s->tid = tid;
	s->time_ns = time;
	s->dur_ns = dur;
	s->file = file;
	s->fh = fh;
	s->offset = off;
	s->length = len;
	s->result = res;
	st0->last_time = time;
	st0->prev_file = file;
	st0->prev_tid = tid;
	st0->prev_pid = s->pid;
	st0->prev_uid = s->uid;
	st0->prev_gid = s->gid;
	ts->tid = tid;
	ts->end = time + dur;
	if (data) {
		fs->file = file;
		fs->end = data_end(off, len, res);
		fs->fh = fh;
		fs->length = len;
	}
	return (int)(p - p0);
}

static int dec_op(struct rec_state *st, const uint8_t *p0, const uint8_t *end,
		  struct iotap_trace_rec *s, struct rec_extra *x)
{
	const uint8_t *p = p0 + 1;
	struct rec_tid_slot *ts;
	struct rec_file_slot *fs;
	uint64_t v, bits, base, p_off = 0, p_fh = 0, p_len = 0;
	int64_t p_res = 0;
	int data;

	p = get_varint(p, end, &v);
	if (!p || v > UINT16_MAX)
		return -EBADMSG;
	s->op = (uint16_t)v;
	p = get_varint(p, end, &bits);
	if (!p || (bits & ~(uint64_t)OPB_ALL))
		return -EBADMSG;

	s->tid = st->prev_tid;
	s->pid = st->prev_pid;
	s->uid = st->prev_uid;
	s->gid = st->prev_gid;
	if ((bits & OPB_TID) && !(p = get_u32(p, end, &s->tid)))
		return -EBADMSG;
	if ((bits & OPB_PID) && !(p = get_u32(p, end, &s->pid)))
		return -EBADMSG;
	if ((bits & OPB_UID) && !(p = get_u32(p, end, &s->uid)))
		return -EBADMSG;
	if ((bits & OPB_GID) && !(p = get_u32(p, end, &s->gid)))
		return -EBADMSG;

	ts = &st->tids[s->tid & (REC_TID_SLOTS - 1)];
	base = ts->tid == s->tid ? ts->end : st->last_time;
	p = get_varint(p, end, &v);
	if (!p)
		return -EBADMSG;
	s->time_ns = base + (uint64_t)unzigzag(v);
	p = get_varint(p, end, &s->dur_ns);
	if (!p)
		return -EBADMSG;

	s->file = st->prev_file;
	if (bits & OPB_FILE) {
		p = get_varint(p, end, &v);
		if (!p)
			return -EBADMSG;
		s->file += (uint64_t)unzigzag(v);
	}
	s->file2 = 0;
	if (bits & OPB_FILE2) {
		p = get_varint(p, end, &v);
		if (!p)
			return -EBADMSG;
		s->file2 = s->file + (uint64_t)unzigzag(v);
	}

	data = is_data_op(s->op);
	fs = &st->files[file_slot(s->file)];
	if (data) {
		if (fs->file == s->file) {
			p_off = fs->end;
			p_fh = fs->fh;
			p_len = fs->length;
		}
	}
	s->fh = p_fh;
	if ((bits & OPB_FH) && !(p = get_varint(p, end, &s->fh)))
		return -EBADMSG;
	s->offset = p_off;
	if (bits & OPB_OFF) {
		p = get_varint(p, end, &v);
		if (!p)
			return -EBADMSG;
		s->offset += (uint64_t)unzigzag(v);
	}
	s->length = p_len;
	if ((bits & OPB_LEN) && !(p = get_varint(p, end, &s->length)))
		return -EBADMSG;
	if (data)
		p_res = (int64_t)s->length;
	s->result = p_res;
	if (bits & OPB_RES) {
		p = get_varint(p, end, &v);
		if (!p)
			return -EBADMSG;
		s->result = unzigzag(v);
	}
	s->flags = 0;
	if ((bits & OPB_FLAGS) && !(p = get_u32(p, end, &s->flags)))
		return -EBADMSG;
	s->mode = 0;
	if ((bits & OPB_MODE) && !(p = get_u32(p, end, &s->mode)))
		return -EBADMSG;
	s->aux = 0;
	if ((bits & OPB_AUX) && !(p = get_varint(p, end, &s->aux)))
		return -EBADMSG;
	s->name_len = 0;
	x->name = NULL;
	if ((bits & OPB_NAME) && dec_name(&p, end, s, x))
		return -EBADMSG;

	s->type = IOTAP_REC_OP;
	st->last_time = s->time_ns;
	st->prev_file = s->file;
	st->prev_tid = s->tid;
	st->prev_pid = s->pid;
	st->prev_uid = s->uid;
	st->prev_gid = s->gid;
	ts->tid = s->tid;
	ts->end = s->time_ns + s->dur_ns;
	if (data) {
		fs->file = s->file;
		fs->end = data_end(s->offset, s->length, s->result);
		fs->fh = s->fh;
		fs->length = s->length;
	}
	return (int)(p - p0);
}

static int dec_body(struct rec_state *st, uint8_t type, const uint8_t *p0, const uint8_t *p,
		    const uint8_t *end, struct iotap_trace_rec *s, struct rec_extra *x);

static int dec_other(struct rec_state *st, const uint8_t *p0, const uint8_t *end,
		     struct iotap_trace_rec *s, struct rec_extra *x)
{
	return dec_body(st, *p0, p0, p0 + 1, end, s, x);
}

/* The layout of the other records from @p on (after the type byte at @p0). */
static int dec_body(struct rec_state *st, uint8_t type, const uint8_t *p0, const uint8_t *p,
		    const uint8_t *end, struct iotap_trace_rec *s, struct rec_extra *x)
{
	uint64_t v, bits;

	memset(s, 0, REC_HEAD);
	s->type = type;
	x->name = NULL;
	p = get_varint(p, end, &v);
	if (!p)
		return -EBADMSG;
	s->time_ns = st->last_time + (uint64_t)unzigzag(v);
	p = get_varint(p, end, &bits);
	if (!p || (bits & ~(uint64_t)GB_ALL))
		return -EBADMSG;
	if (bits & GB_OP) {
		p = get_varint(p, end, &v);
		if (!p || v > UINT16_MAX)
			return -EBADMSG;
		s->op = (uint16_t)v;
	}
	if ((bits & GB_FLAGS) && !(p = get_u32(p, end, &s->flags)))
		return -EBADMSG;
	if ((bits & GB_DUR) && !(p = get_varint(p, end, &s->dur_ns)))
		return -EBADMSG;
	if ((bits & GB_TID) && !(p = get_u32(p, end, &s->tid)))
		return -EBADMSG;
	if ((bits & GB_PID) && !(p = get_u32(p, end, &s->pid)))
		return -EBADMSG;
	if ((bits & GB_UID) && !(p = get_u32(p, end, &s->uid)))
		return -EBADMSG;
	if ((bits & GB_GID) && !(p = get_u32(p, end, &s->gid)))
		return -EBADMSG;
	if ((bits & GB_FILE) && !(p = get_varint(p, end, &s->file)))
		return -EBADMSG;
	if ((bits & GB_FILE2) && !(p = get_varint(p, end, &s->file2)))
		return -EBADMSG;
	if ((bits & GB_FH) && !(p = get_varint(p, end, &s->fh)))
		return -EBADMSG;
	if ((bits & GB_OFF) && !(p = get_varint(p, end, &s->offset)))
		return -EBADMSG;
	if ((bits & GB_LEN) && !(p = get_varint(p, end, &s->length)))
		return -EBADMSG;
	if (bits & GB_RES) {
		p = get_varint(p, end, &v);
		if (!p)
			return -EBADMSG;
		s->result = unzigzag(v);
	}
	if ((bits & GB_MODE) && !(p = get_u32(p, end, &s->mode)))
		return -EBADMSG;
	if ((bits & GB_AUX) && !(p = get_varint(p, end, &s->aux)))
		return -EBADMSG;
	if ((bits & GB_NAME) && dec_name(&p, end, s, x))
		return -EBADMSG;
	if (s->type == IOTAP_REC_SAMPLE) {
		struct iotap_trace_sample *m = &x->sample;

		if (!(p = get_u32(p, end, &m->dev_major)) ||
		    !(p = get_u32(p, end, &m->dev_minor)) ||
		    !(p = get_varint(p, end, &m->rd_ios)) ||
		    !(p = get_varint(p, end, &m->rd_sectors)) ||
		    !(p = get_varint(p, end, &m->wr_ios)) ||
		    !(p = get_varint(p, end, &m->wr_sectors)) ||
		    !(p = get_varint(p, end, &m->io_ticks_ms)) ||
		    !(p = get_varint(p, end, &m->queue_ms)) ||
		    !(p = get_varint(p, end, &m->in_flight)) ||
		    !(p = get_varint(p, end, &m->proc_user_ns)) ||
		    !(p = get_varint(p, end, &m->proc_sys_ns)) ||
		    !(p = get_varint(p, end, &m->sys_user_ns)) ||
		    !(p = get_varint(p, end, &m->sys_sys_ns)) ||
		    !(p = get_varint(p, end, &m->sys_idle_ns)) ||
		    !(p = get_varint(p, end, &m->sys_iowait_ns)) ||
		    !(p = get_varint(p, end, &m->proc_rss_kb)))
			return -EBADMSG;
	}
	st->last_time = s->time_ns;
	return (int)(p - p0);
}

/**
 * rec_decode - decode one record of a raw payload
 * @st:  the chunk's decoder state, updated
 * @p:   first byte of the record
 * @end: end of the raw payload
 * @s:   its first REC_HEAD bytes filled but for s->name, which is the
 *       caller's (x->name says where the name is); s->type is 0 for a
 *       record of a type this version does not know, which the caller skips
 * @x:   name pointer and sample
 *
 * Return: bytes consumed (> 0), or -EBADMSG for a malformed record.
 */
int rec_decode(struct rec_state *st, const uint8_t *p, const uint8_t *end,
	       struct iotap_trace_rec *s, struct rec_extra *x)
{
	const uint8_t *q;
	uint64_t len;

	if (p >= end)
		return -EBADMSG;
	if (*p == IOTAP_REC_OP && end - p >= DEC_FAST_ROOM) {
		struct rec_hot h;
		int n;

		hot_load(&h, st);
		n = dec_op_fast(st, &h, p, end, s, x, 1);
		hot_store(st, &h);
		return n;
	}
	if (*p == IOTAP_REC_OP)
		return dec_op(st, p, end, s, x);
	if (*p > IOTAP_REC_OP && *p < IOTAP_REC_APP)
		return dec_other(st, p, end, s, x);
	if (*p == 0)
		return -EBADMSG;
	/* The extension framing: length-prefixed; a type this version does not know is skipped. */
	q = get_varint(p + 1, end, &len);
	if (!q || len > (uint64_t)(end - q))
		return -EBADMSG;
	if (*p == IOTAP_REC_APP) {
		uint64_t last = st->last_time;
		int n = dec_body(st, IOTAP_REC_APP, p, q, q + len, s, x);

		st->last_time = last;
		if (n < 0)
			return n;
		/* a later version may append fields to the body: skipped */
		return (int)(q + len - p);
	}
	s->type = 0;
	x->name = NULL;
	return (int)(q + len - p);
}

/**
 * rec_decode_ops - decode a run of OP records without names
 * @st:  the chunk's decoder state, updated
 * @pp:  first byte of the run; advanced past what was decoded
 * @end: end of the raw payload
 * @out: the records go here, REC_STRIDE bytes apart, as rec_decode() fills
 *       them, with name NULL
 * @max: records to decode at most
 * @sum: their starts and ends are added to it
 *
 * The reader's loop for what most of a chunk is, without a call and the
 * checks of the general case per record. It stops before a record of
 * another type, one with a name, or one within DEC_FAST_ROOM bytes of
 * @end: rec_decode() takes those.
 *
 * Aligned to a cache line: a third or more of a report's CPU is this loop,
 * and its speed moved with where the linker happened to put it. The same
 * code 32 bytes past a 64-byte line took 4% more of a 100 M-record
 * report's user time than at 48 bytes or at 0 (3.98 s against 3.83, one
 * thread, 13 interleaved rounds; BENCHMARKS.md "Session 20"). Aligned, it
 * is the fast case and does not move when unrelated code changes.
 *
 * Return: records decoded, or -EBADMSG for a malformed one.
 */
__attribute__((aligned(64)))
int rec_decode_ops(struct rec_state *st, const uint8_t **pp, const uint8_t *end,
		   unsigned char *out, uint32_t max, struct rec_sum *sum)
{
	const uint8_t *p = *pp;
	uint64_t last = sum->last, tmin = sum->tmin, tmax = sum->tmax, tend = sum->tend;
	uint32_t n = 0, desc = sum->desc;
	struct rec_extra x;
	struct rec_hot h;

	hot_load(&h, st);
	while (n < max && end - p >= DEC_FAST_ROOM && *p == IOTAP_REC_OP) {
		struct iotap_trace_rec *s = (struct iotap_trace_rec *)(out + (size_t)n * REC_STRIDE);
		int k = dec_op_fast(st, &h, p, end, s, &x, 0);
		uint64_t t, e;

		if (k <= 0) {
			if (k < 0)
				return k;	/* the chunk is bad: the state does not matter */
			break;
		}
		p += k;
		s->name = NULL;
		t = s->time_ns;
		e = t + s->dur_ns;
		if (e < t)
			e = UINT64_MAX;
		if (e > tend)
			tend = e;
		desc += t < last;
		last = t;
		if (t < tmin)
			tmin = t;
		if (t > tmax)
			tmax = t;
		n++;
	}
	hot_store(st, &h);
	sum->last = last;
	sum->tmin = tmin;
	sum->tmax = tmax;
	sum->tend = tend;
	sum->desc = desc;
	*pp = p;
	return (int)n;
}
