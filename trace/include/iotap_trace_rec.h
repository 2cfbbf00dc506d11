/* SPDX-License-Identifier: MIT */
/*
 * iotap_trace_rec.h - the record kinds of libiotap-trace: constructors
 * and accessors (part of iotap_trace.h, which includes it; include that)
 */
#ifndef IOTAP_TRACE_REC_H
#define IOTAP_TRACE_REC_H

#include "iotap_trace.h"

/*
 * Record kinds: constructors and accessors
 *
 * Which field of struct iotap_trace_rec carries what, for each kind, is
 * known here (and in record.c, which codes it) only: producers build their
 * records with the _init functions and readers take a kind's values with
 * the accessors, so a kind's encoding can change in one place. An _init
 * zeroes the record and sets the kind's own values; the caller then sets
 * the fields every kind has (time_ns, tid, pid, and uid/gid where the kind
 * says so). Names are not copied: @name must outlive the record's use.
 */

/* Zero @r but for its sample (SAMPLE only) and make it a record of @type. */
static inline void iotap_trace_rec_clear(struct iotap_trace_rec *r, unsigned int type)
{
	memset(r, 0, offsetof(struct iotap_trace_rec, sample));
	r->type = (uint16_t)type;
}

/* An OP record of @op, everything else zero: the caller fills in the call. */
static inline void iotap_trace_op_init(struct iotap_trace_rec *r, unsigned int op)
{
	iotap_trace_rec_clear(r, IOTAP_REC_OP);
	r->op = (uint16_t)op;
}

/*
 * iotap_trace_name_init - a NAME record: @file is called @name in @parent
 * (0: the root, whose name is the backing path)
 * @mode, @uid, @gid, @size: the file's st_mode, owner and st_size
 * @flags: IOTAP_NAME_LINK for an additional name (a hard link), 0 for a
 *         (re)binding
 */
static inline void iotap_trace_name_init(struct iotap_trace_rec *r, uint64_t file, uint64_t parent,
					 uint32_t mode, uint32_t uid, uint32_t gid, uint64_t size,
					 uint32_t flags, const char *name, uint32_t name_len)
{
	iotap_trace_rec_clear(r, IOTAP_REC_NAME);
	r->file = file;
	r->file2 = parent;
	r->mode = mode;
	r->uid = uid;
	r->gid = gid;
	r->length = size;
	r->flags = flags;
	r->name = name;
	r->name_len = name_len;
}

/* A PHASE record's user and system CPU time of the marking process, ns (0, 0: not known). */
static inline void iotap_trace_phase_set_cpu(struct iotap_trace_rec *r, uint64_t user_ns,
					     uint64_t sys_ns)
{
	r->offset = user_ns;
	r->length = sys_ns;
}

/*
 * iotap_trace_phase_init - a PHASE record: @kind (IOTAP_PHASE_BEGIN/END) of
 * the phase @name, with the marking process's CPU time at the mark
 */
static inline void iotap_trace_phase_init(struct iotap_trace_rec *r, unsigned int kind,
					  const char *name, uint32_t name_len,
					  uint64_t cpu_user_ns, uint64_t cpu_sys_ns)
{
	iotap_trace_rec_clear(r, IOTAP_REC_PHASE);
	r->flags = kind;
	r->name = name;
	r->name_len = name_len;
	iotap_trace_phase_set_cpu(r, cpu_user_ns, cpu_sys_ns);
}

/*
 * The accessors, one row a value: iotap_trace_<kind>_<value>(rec) returns
 * the field that carries it.
 */
#define IOTAP_TRACE_GET(kind, value, type, field)					\
	static inline type iotap_trace_##kind##_##value(const struct iotap_trace_rec *r)	\
	{										\
		return (type)r->field;							\
	}

IOTAP_TRACE_GET(name, parent, uint64_t, file2)		/* 0: the root */
IOTAP_TRACE_GET(name, size, uint64_t, length)		/* st_size when named */
IOTAP_TRACE_GET(phase, cpu_user_ns, uint64_t, offset)	/* marking process's user CPU */
IOTAP_TRACE_GET(phase, cpu_sys_ns, uint64_t, length)	/* ... and system CPU */
IOTAP_TRACE_GET(phase, unit_max_ns, uint64_t, aux)	/* END from `iotap run`: longest unit, 0: none */
IOTAP_TRACE_GET(lost, count, uint64_t, length)		/* records dropped since the last LOST */
IOTAP_TRACE_GET(end, records, uint64_t, length)		/* records written before END */
IOTAP_TRACE_GET(end, lost, uint64_t, aux)		/* sum of the LOST counts written */
IOTAP_TRACE_GET(app, kind, unsigned int, op)		/* enum iotap_app_kind */
IOTAP_TRACE_GET(app, flags, uint32_t, flags)		/* IOTAP_APPF_* */
IOTAP_TRACE_GET(app, dur_ns, uint64_t, dur_ns)		/* the unit's length as the model timed it */
IOTAP_TRACE_GET(app, txn_lag_ns, uint64_t, aux)		/* TXN: schedule lag (--rate), else 0 */
IOTAP_TRACE_GET(app, span_start_ns, uint64_t, offset)	/* SPAN: its start, CLOCK_MONOTONIC */
IOTAP_TRACE_GET(app, span_cpu_user_ns, uint64_t, length)	/* SPAN steady: the model's user CPU */
IOTAP_TRACE_GET(app, span_cpu_sys_ns, uint64_t, aux)	/* ... and system CPU */

#undef IOTAP_TRACE_GET

static inline int iotap_trace_name_is_link(const struct iotap_trace_rec *r)
{
	return !!(r->flags & IOTAP_NAME_LINK);
}

/* Whether a PHASE carries its CPU time (a capture may not read it). */
static inline int iotap_trace_phase_has_cpu(const struct iotap_trace_rec *r)
{
	return r->offset || r->length;
}

static inline void iotap_trace_phase_set_unit_max_ns(struct iotap_trace_rec *r, uint64_t ns)
{
	r->aux = ns;
}

/* A LOST record: @count records of thread @tid (0: several) were dropped. */
static inline void iotap_trace_lost_init(struct iotap_trace_rec *r, uint64_t count, uint32_t tid)
{
	iotap_trace_rec_clear(r, IOTAP_REC_LOST);
	r->length = count;
	r->tid = tid;
}

/* An END record: @records written before it, @lost the sum of the LOST counts. */
static inline void iotap_trace_end_init(struct iotap_trace_rec *r, uint64_t records, uint64_t lost)
{
	iotap_trace_rec_clear(r, IOTAP_REC_END);
	r->length = records;
	r->aux = lost;
}

/*
 * APP records (FORMAT.md "APP records"): the workload model's own units.
 * The caller (workload/engine.c's wl_app) sets time, thread and owner.
 */

/* A TXN: its latency @dur_ns, @flags IOTAP_APPF_STEADY or 0, @lag_ns its schedule lag. */
static inline void iotap_trace_app_txn_init(struct iotap_trace_rec *r, uint64_t dur_ns,
					    uint32_t flags, uint64_t lag_ns)
{
	iotap_trace_rec_clear(r, IOTAP_REC_APP);
	r->op = IOTAP_APP_TXN;
	r->dur_ns = dur_ns;
	r->flags = flags;
	r->aux = lag_ns;
}

/*
 * A SPAN @name from @start_ns for @dur_ns; @flags IOTAP_APPF_PARTIAL,
 * IOTAP_APPF_BEGIN (then @dur_ns 0). @name NUL-terminated (name_len 0:
 * wl_app measures it).
 */
static inline void iotap_trace_app_span_init(struct iotap_trace_rec *r, const char *name,
					     uint64_t start_ns, uint64_t dur_ns, uint32_t flags)
{
	iotap_trace_rec_clear(r, IOTAP_REC_APP);
	r->op = IOTAP_APP_SPAN;
	r->name = name;
	r->offset = start_ns;
	r->dur_ns = dur_ns;
	r->flags = flags;
}

/* A SPAN's CPU time of all the model's threads over it, ns. */
static inline void iotap_trace_app_span_set_cpu(struct iotap_trace_rec *r, uint64_t user_ns,
						uint64_t sys_ns)
{
	r->length = user_ns;
	r->aux = sys_ns;
}

/* A BACKUP generation's figures (FORMAT.md, APP kinds). */
struct iotap_trace_app_backup {
	uint64_t logical;		/* logical bytes backed up */
	uint64_t lookups;		/* fingerprint look-ups */
	uint64_t hits;			/* of them answered by the cache */
	uint64_t segments;		/* segments */
	uint64_t fresh;			/* new (stored) segments */
	uint64_t stored;		/* their bytes */
	uint64_t cpu_ns;		/* the model's own CPU for generating and hashing */
};

/* A BACKUP @name (its phase) of @dur_ns; @flags IOTAP_APPF_PARTIAL or 0. */
static inline void iotap_trace_app_backup_init(struct iotap_trace_rec *r, const char *name,
					       uint64_t dur_ns, uint32_t flags,
					       const struct iotap_trace_app_backup *b)
{
	iotap_trace_rec_clear(r, IOTAP_REC_APP);
	r->op = IOTAP_APP_BACKUP;
	r->name = name;
	r->dur_ns = dur_ns;
	r->flags = flags;
	r->length = b->logical;
	r->offset = b->lookups;
	r->aux = b->hits;
	r->file = b->segments;
	r->file2 = b->fresh;
	r->fh = b->stored;
	r->result = (int64_t)b->cpu_ns;
}

/* A BACKUP record's figures (cpu_ns 0 where the record holds a negative). */
static inline void iotap_trace_app_backup_get(const struct iotap_trace_rec *r,
					      struct iotap_trace_app_backup *b)
{
	b->logical = r->length;
	b->lookups = r->offset;
	b->hits = r->aux;
	b->segments = r->file;
	b->fresh = r->file2;
	b->stored = r->fh;
	b->cpu_ns = r->result > 0 ? (uint64_t)r->result : 0;
}

static inline int iotap_trace_app_is(const struct iotap_trace_rec *r, unsigned int kind)
{
	return r->type == IOTAP_REC_APP && r->op == kind;
}

#endif /* IOTAP_TRACE_REC_H */
