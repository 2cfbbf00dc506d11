/* SPDX-License-Identifier: MIT */
/*
 * sys.h - libiotap-sys: the one traced-syscall layer of workload/
 *
 * Module prefix sys_. Everything in workload/ that issues a system call on
 * a target and writes its OP record goes through here: the models
 * (bonnie, iozone, dd, hdparm, pgsql: through the wl_ wrappers of
 * workload/traced.c) and the replayer (workload/replay/exec.c), as fio's
 * job engines and its iolog replay feed one I/O interface. So the
 * mapping of a call onto FORMAT.md's per-op field table ("Op fields")
 * lives in this one place, sys_issue() and sys_record().
 *
 * A call is described in the trace's own terms (struct sys_call: the op
 * and the fields its OP record carries), plus how to reach the file (a
 * descriptor, or a directory descriptor and a path). sys_issue() makes the
 * system call, times it and fills in what the table takes from the result
 * (st_mode, st_size, entries returned); sys_record() writes the record.
 * sys_do() is both.
 *
 * Cost: no allocation, no lock. With a recorder (or SYS_TIMED) a call
 * costs two clock reads; sys_record() one copy into the thread's recorder
 * buffer (iotap_trace_record never blocks). Without either it is the bare
 * system call behind one switch.
 *
 * Context: any thread; a struct sys_call belongs to the thread using it.
 */
#ifndef IOTAP_SYS_H
#define IOTAP_SYS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "iotap_trace.h"

/* SETATTR's flags: the FUSE_SET_ATTR_* mask the capture records (<linux/fuse.h>). */
#define SYS_SET_MODE		(1u << 0)
#define SYS_SET_UID		(1u << 1)
#define SYS_SET_GID		(1u << 2)
#define SYS_SET_SIZE		(1u << 3)
#define SYS_SET_ATIME		(1u << 4)
#define SYS_SET_MTIME		(1u << 5)
#define SYS_SET_ATIME_NOW	(1u << 7)
#define SYS_SET_MTIME_NOW	(1u << 8)

/* The caller an OP record names: thread id, process id, fsuid, fsgid. */
struct sys_who {
	uint32_t tid, pid, uid, gid;
};

/* struct sys_call.how */
#define SYS_TIMED	(1u << 0)	/* take t0/t1 even without a recorder */
#define SYS_AT_POS	(1u << 1)	/* READ/WRITE: read(2)/write(2) at the descriptor's
					 * position (@offset says where that is), not p*() */
#define SYS_BY_FD	(1u << 2)	/* LOOKUP, GETATTR, SETATTR: on @fd, not @path */
#define SYS_REWIND	(1u << 3)	/* READDIR: lseek(@fd, 0) first (a listing restarts) */
#define SYS_NAME_FAILED	(1u << 4)	/* record @name only if the call failed */

/*
 * struct sys_call - one system call and the OP record it makes
 *
 * The first group is the record (FORMAT.md "Op fields": what each op
 * puts in file, file2, fh, offset, length, flags, mode, aux, name) and,
 * where the table makes them the call's arguments, what is issued:
 * offset/length of data ops, SETATTR's mask, size, mode and owner,
 * FALLOCATE's mode (flags), RENAME's renameat2 flags, READDIR's buffer
 * size, xattr names and sizes, a symlink's target (name).
 */
struct sys_call {
	uint16_t op;			/* enum iotap_op */
	uint16_t how;			/* SYS_* above */
	uint32_t flags, mode;
	uint32_t name_len;		/* 0: strlen(name) */
	struct sys_who who;		/* the caller the record names */
	uint64_t file, file2, fh;	/* ids the record names */
	uint64_t offset, length, aux;
	const char *name;		/* recorded name, or NULL */

	/* how to reach the file */
	int fd;				/* by-descriptor ops (and SYS_BY_FD) */
	int at, at2;			/* directories @path and @path2 are relative to */
	const char *path, *path2;
	const char *base;		/* @at's path: calls with no *at() form (statfs,
					 * xattrs, truncate) use base/path */
	int oflags;			/* OPEN, CREATE, OPENDIR: open(2) flags (O_CLOEXEC added) */
	void *buf;			/* READ, READDIR, READLINK (@cap), GETXATTR, LISTXATTR */
	const void *data;		/* WRITE, SETXATTR */
	size_t cap;			/* READLINK's buffer */
	uint64_t want;			/* READDIR: return at most this many entries (0: all) */
	struct stat *st;		/* LOOKUP, GETATTR: the result, or NULL */

	/* results */
	int64_t result;			/* bytes, 0 or -errno */
	int newfd;			/* OPEN, CREATE, OPENDIR: the descriptor, or -1 */
	uint64_t t0, t1;		/* CLOCK_MONOTONIC ns around the call (0: not timed) */
};

/*
 * sys_issue - make the system call @sc describes
 * @rec: the recorder the call will be recorded in (its clock starts the
 *       op: iotap_trace_op_begin), or NULL
 *
 * Sets @sc->result, @sc->t0/t1 (with @rec or SYS_TIMED), @sc->newfd, and
 * the record fields the table takes from the outcome: LOOKUP/GETATTR mode
 * = st_mode (GETATTR aux = st_size), READDIR aux = entries returned.
 * Return: @sc->result.
 */
int64_t sys_issue(struct iotap_trace_recorder *rec, struct sys_call *sc);

/*
 * sys_record - write @sc's OP record into @rec (started with
 * sys_issue(@rec), or by the caller's own iotap_trace_op_begin(@rec))
 */
void sys_record(struct iotap_trace_recorder *rec, const struct sys_call *sc);

/*
 * sys_refuse - @sc ends with @err before reaching the kernel (no
 * descriptor for it, no memory): result @err, t0 = t1 (FORMAT.md: an op
 * answered before the backing file system has dur_ns 0); sys_record() it
 * as any call. Return: @err.
 */
int64_t sys_refuse(struct iotap_trace_recorder *rec, struct sys_call *sc, int64_t err);

/* sys_issue, then sys_record when @rec. Return: @sc->result. */
static inline int64_t sys_do(struct iotap_trace_recorder *rec, struct sys_call *sc)
{
	int64_t ret = sys_issue(rec, sc);

	if (rec)
		sys_record(rec, sc);
	return ret;
}

/*
 * sys_record_name - a NAME record: @file is called @name in @parent
 * (@flags 1: an additional name), with the mode, owner and size it has
 */
void sys_record_name(struct iotap_trace_recorder *rec, const struct sys_who *who,
		     uint64_t file, uint64_t parent, uint32_t mode, uint32_t uid, uint32_t gid,
		     uint64_t size, uint32_t flags, const char *name, uint64_t t);

/*
 * sys_record_phase - a PHASE record: @kind IOTAP_PHASE_BEGIN/END of @name
 * at @t, with the cumulative CPU of the marking threads (@user_ns, @sys_ns)
 * and the phase parameter @aux
 */
void sys_record_phase(struct iotap_trace_recorder *rec, const struct sys_who *who,
		      const char *name, unsigned int kind, uint64_t t, uint64_t user_ns,
		      uint64_t sys_ns, uint64_t aux);

/* The calling thread's id (gettid(2), cached). */
uint32_t sys_tid(void);

/*
 * The stop flag every workload loop and replay lane tests:
 * iotap_workload_interrupt() sets it, async-signal-safe.
 */
void sys_stop(void);
int sys_stopped(void);

#endif /* IOTAP_SYS_H */
