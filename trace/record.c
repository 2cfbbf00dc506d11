// SPDX-License-Identifier: MIT
/*
 * record.c - encode one record into a chunk's raw payload
 *
 * Pure functions over memory: no I/O, no allocation, no locks. The layouts
 * are specified in FORMAT.md ("Records"); this file and record_decode.c
 * are their one implementation. Records are delta coded against a struct
 * rec_state that the encoder and the decoder update identically
 * (record_i.h) and that is zeroed at the start of every chunk, so any
 * chunk decodes on its own.
 */
#include <errno.h>
#include <string.h>

#include "record_i.h"

static inline uint8_t *put_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)v | 0x80;
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

/**
 * rec_state_reset - zero the delta state (start of a chunk)
 * @st: encoder or decoder state
 */
void rec_state_reset(struct rec_state *st)
{
	memset(st, 0, sizeof(*st));
}

/**
 * rec_check - can this record be encoded?
 * @rec: record from a caller
 *
 * Return: 0, or -EINVAL for an unknown type, a name longer than
 * IOTAP_TRACE_NAME_MAX, or a name_len without a name.
 */
int rec_check(const struct iotap_trace_rec *rec)
{
	if (rec->type < IOTAP_REC_OP || rec->type >= IOTAP_REC_TYPE_MAX)
		return -EINVAL;
	if (rec->name_len > IOTAP_TRACE_NAME_MAX)
		return -EINVAL;
	if (!rec->name && rec->name_len)
		return -EINVAL;
	return 0;
}

/*
 * One varint, unrolled for the values an OP record mostly holds (one to
 * three bytes: op, bits, time gaps and durations of microseconds).
 */
static inline uint8_t *put_varint_fast(uint8_t *p, uint64_t v)
{
	if (v < 0x80) {
		*p = (uint8_t)v;
		return p + 1;
	}
	if (v < 0x4000) {
		p[0] = (uint8_t)v | 0x80;
		p[1] = (uint8_t)(v >> 7);
		return p + 2;
	}
	if (v < 0x200000) {
		p[0] = (uint8_t)v | 0x80;
		p[1] = (uint8_t)(v >> 7) | 0x80;
		p[2] = (uint8_t)(v >> 14);
		return p + 3;
	}
	return put_varint(p, v);
}

/**
 * rec_encode_op - append one OP record to a raw payload
 * @st:   the chunk's encoder state, updated
 * @out:  at least REC_ENC_MAX bytes of room
 * @e:    the record's fields (type IOTAP_REC_OP; @e->data and @e->pad are
 *        not read)
 * @name: @e->name_len bytes of name, or NULL for no name
 *
 * The one OP encoder: rec_encode() comes here too. The recorder calls it
 * straight on the records its threads buffered, with no struct
 * iotap_trace_rec in between.
 *
 * Return: bytes written.
 */
size_t rec_encode_op(struct rec_state *st, uint8_t *out, const struct rec_slim *e,
		     const char *name)
{
	struct rec_tid_slot *ts = &st->tids[e->tid & (REC_TID_SLOTS - 1)];
	struct rec_file_slot *fs = &st->files[file_slot(e->file)];
	uint64_t base = ts->tid == e->tid ? ts->end : st->last_time;
	uint64_t p_off = 0, p_fh = 0, p_len = 0;
	int64_t p_res = 0;
	int data = is_data_op(e->op);
	unsigned int bits = 0;
	uint8_t *p = out;

	if (data) {
		if (fs->file == e->file) {
			p_off = fs->end;
			p_fh = fs->fh;
			p_len = fs->length;
		}
		p_res = (int64_t)e->length;
	}
	if (e->offset != p_off)
		bits |= OPB_OFF;
	if (e->length != p_len)
		bits |= OPB_LEN;
	if (e->result != p_res)
		bits |= OPB_RES;
	if (e->fh != p_fh)
		bits |= OPB_FH;
	if (e->file != st->prev_file)
		bits |= OPB_FILE;
	if (e->tid != st->prev_tid)
		bits |= OPB_TID;
	if (e->flags)
		bits |= OPB_FLAGS;
	if (e->pid != st->prev_pid)
		bits |= OPB_PID;
	if (e->uid != st->prev_uid)
		bits |= OPB_UID;
	if (e->gid != st->prev_gid)
		bits |= OPB_GID;
	if (e->file2)
		bits |= OPB_FILE2;
	if (e->mode)
		bits |= OPB_MODE;
	if (e->aux)
		bits |= OPB_AUX;
	if (name)
		bits |= OPB_NAME;

	*p++ = IOTAP_REC_OP;
	p = put_varint_fast(p, e->op);
	p = put_varint_fast(p, bits);
	if (bits & OPB_TID)
		p = put_varint_fast(p, e->tid);
	if (rec_unlikely(bits & (OPB_PID | OPB_UID | OPB_GID))) {
		if (bits & OPB_PID)
			p = put_varint(p, e->pid);
		if (bits & OPB_UID)
			p = put_varint(p, e->uid);
		if (bits & OPB_GID)
			p = put_varint(p, e->gid);
	}
	p = put_varint_fast(p, zigzag((int64_t)(e->time_ns - base)));
	p = put_varint_fast(p, e->dur_ns);
	if (bits & OPB_FILE)
		p = put_varint(p, zigzag((int64_t)(e->file - st->prev_file)));
	if (bits & OPB_FILE2)
		p = put_varint(p, zigzag((int64_t)(e->file2 - e->file)));
	if (bits & OPB_FH)
		p = put_varint(p, e->fh);
	if (bits & OPB_OFF)
		p = put_varint(p, zigzag((int64_t)(e->offset - p_off)));
	if (bits & OPB_LEN)
		p = put_varint_fast(p, e->length);
	if (bits & OPB_RES)
		p = put_varint_fast(p, zigzag(e->result));
	if (rec_unlikely(bits & (OPB_FLAGS | OPB_MODE | OPB_AUX | OPB_NAME))) {
		if (bits & OPB_FLAGS)
			p = put_varint(p, e->flags);
		if (bits & OPB_MODE)
			p = put_varint(p, e->mode);
		if (bits & OPB_AUX)
			p = put_varint(p, e->aux);
		if (bits & OPB_NAME) {
			p = put_varint(p, e->name_len);
			memcpy(p, name, e->name_len);
			p += e->name_len;
		}
	}

	st->last_time = e->time_ns;
	st->prev_file = e->file;
	st->prev_tid = e->tid;
	st->prev_pid = e->pid;
	st->prev_uid = e->uid;
	st->prev_gid = e->gid;
	ts->tid = e->tid;
	ts->end = e->time_ns + e->dur_ns;
	if (data) {
		fs->file = e->file;
		fs->end = data_end(e->offset, e->length, e->result);
		fs->fh = e->fh;
		fs->length = e->length;
	}
	return (size_t)(p - out);
}

/* An OP record of the API: its fields in a struct rec_slim, then rec_encode_op(). */
static size_t enc_op(struct rec_state *st, uint8_t *out, const struct iotap_trace_rec *rec)
{
	struct rec_slim e;

	rec_slim_from(&e, rec);
	return rec_encode_op(st, out, &e, rec->name);
}

static size_t enc_other(struct rec_state *st, uint8_t *out, const struct iotap_trace_rec *rec)
{
	unsigned int bits = 0;
	uint8_t *p = out;

	if (rec->op)
		bits |= GB_OP;
	if (rec->flags)
		bits |= GB_FLAGS;
	if (rec->dur_ns)
		bits |= GB_DUR;
	if (rec->tid)
		bits |= GB_TID;
	if (rec->pid)
		bits |= GB_PID;
	if (rec->uid)
		bits |= GB_UID;
	if (rec->gid)
		bits |= GB_GID;
	if (rec->file)
		bits |= GB_FILE;
	if (rec->file2)
		bits |= GB_FILE2;
	if (rec->fh)
		bits |= GB_FH;
	if (rec->offset)
		bits |= GB_OFF;
	if (rec->length)
		bits |= GB_LEN;
	if (rec->result)
		bits |= GB_RES;
	if (rec->mode)
		bits |= GB_MODE;
	if (rec->aux)
		bits |= GB_AUX;
	if (rec->name)
		bits |= GB_NAME;

	*p++ = (uint8_t)rec->type;
	p = put_varint(p, zigzag((int64_t)(rec->time_ns - st->last_time)));
	p = put_varint(p, bits);
	if (bits & GB_OP)
		p = put_varint(p, rec->op);
	if (bits & GB_FLAGS)
		p = put_varint(p, rec->flags);
	if (bits & GB_DUR)
		p = put_varint(p, rec->dur_ns);
	if (bits & GB_TID)
		p = put_varint(p, rec->tid);
	if (bits & GB_PID)
		p = put_varint(p, rec->pid);
	if (bits & GB_UID)
		p = put_varint(p, rec->uid);
	if (bits & GB_GID)
		p = put_varint(p, rec->gid);
	if (bits & GB_FILE)
		p = put_varint(p, rec->file);
	if (bits & GB_FILE2)
		p = put_varint(p, rec->file2);
	if (bits & GB_FH)
		p = put_varint(p, rec->fh);
	if (bits & GB_OFF)
		p = put_varint(p, rec->offset);
	if (bits & GB_LEN)
		p = put_varint(p, rec->length);
	if (bits & GB_RES)
		p = put_varint(p, zigzag(rec->result));
	if (bits & GB_MODE)
		p = put_varint(p, rec->mode);
	if (bits & GB_AUX)
		p = put_varint(p, rec->aux);
	if (bits & GB_NAME) {
		p = put_varint(p, rec->name_len);
		memcpy(p, rec->name, rec->name_len);
		p += rec->name_len;
	}
	if (rec->type == IOTAP_REC_SAMPLE) {
		const struct iotap_trace_sample *s = &rec->sample;

		p = put_varint(p, s->dev_major);
		p = put_varint(p, s->dev_minor);
		p = put_varint(p, s->rd_ios);
		p = put_varint(p, s->rd_sectors);
		p = put_varint(p, s->wr_ios);
		p = put_varint(p, s->wr_sectors);
		p = put_varint(p, s->io_ticks_ms);
		p = put_varint(p, s->queue_ms);
		p = put_varint(p, s->in_flight);
		p = put_varint(p, s->proc_user_ns);
		p = put_varint(p, s->proc_sys_ns);
		p = put_varint(p, s->sys_user_ns);
		p = put_varint(p, s->sys_sys_ns);
		p = put_varint(p, s->sys_idle_ns);
		p = put_varint(p, s->sys_iowait_ns);
		p = put_varint(p, s->proc_rss_kb);
	}
	st->last_time = rec->time_ns;
	return (size_t)(p - out);
}

/**
 * rec_encode - append one record to a raw payload
 * @st:  the chunk's encoder state, updated
 * @out: at least REC_ENC_MAX bytes of room
 * @rec: a record that passed rec_check()
 *
 * Return: bytes written.
 */
/*
 * An APP record is in the extension framing (type, varint length, body) so
 * that readers older than it skip it; its body is the layout of the other
 * records without their type byte, and, like any extension record, it
 * leaves the delta state as it found it.
 */
static size_t enc_app(struct rec_state *st, uint8_t *out, const struct iotap_trace_rec *rec)
{
	uint8_t body[REC_ENC_MAX];
	uint64_t last = st->last_time;
	size_t n = enc_other(st, body, rec) - 1;
	uint8_t *p = out;

	st->last_time = last;
	*p++ = (uint8_t)rec->type;
	p = put_varint(p, n);
	memcpy(p, body + 1, n);
	return (size_t)(p + n - out);
}

size_t rec_encode(struct rec_state *st, uint8_t *out, const struct iotap_trace_rec *rec)
{
	if (rec->type == IOTAP_REC_OP)
		return enc_op(st, out, rec);
	if (rec->type == IOTAP_REC_APP)
		return enc_app(st, out, rec);
	return enc_other(st, out, rec);
}
