/* SPDX-License-Identifier: MIT */
/*
 * iotap_trace.h - the one public header of libiotap-trace
 *
 * The byte layout of a trace file is specified in trace/FORMAT.md and
 * nowhere else; this header gives the in-memory form of a record and the
 * API that writes and reads files of that format.
 *
 * Three ways in:
 *   - struct iotap_trace_writer: single-threaded, synchronous; the caller
 *     appends records and the writer compresses and writes whole chunks.
 *   - struct iotap_trace_recorder: multi-threaded capture. Any thread may
 *     record; each thread fills its own buffer, full buffers go to one
 *     writer thread through a liburcu wait-free queue. A recording thread
 *     never waits on compression or the disk: when no buffer is free the
 *     record is dropped and counted, and a LOST record says so.
 *   - struct iotap_trace_reader: streams a file in bounded memory, merges the
 *     per-thread streams by start time, recovers every complete chunk of a
 *     damaged or truncated file and says what it skipped.
 *
 * All functions return 0 or -errno unless stated otherwise. Nothing here
 * prints, exits or depends on libfuse.
 */
#ifndef IOTAP_TRACE_H
#define IOTAP_TRACE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#define IOTAP_TRACE_VERSION_MAJOR 1
#define IOTAP_TRACE_VERSION_MINOR 0

/* The first 8 bytes of every trace file (FORMAT.md "File header"); no NUL on disk. */
#define IOTAP_TRACE_MAGIC	"IOTAPTR\n"
#define IOTAP_TRACE_MAGIC_LEN	8

/* Record types. Numbers are forever: never renumber, never reuse. */
enum iotap_trace_rec_type {
	IOTAP_REC_OP = 1,	/* one filesystem operation */
	IOTAP_REC_NAME = 2,	/* file id <-> (parent, name) binding, first-seen type and size */
	IOTAP_REC_PHASE = 3,	/* phase marker (begin or end of a named phase) */
	IOTAP_REC_SAMPLE = 4,	/* resource sample: device, daemon CPU, system CPU */
	IOTAP_REC_LOST = 5,	/* N records were dropped */
	IOTAP_REC_END = 6,	/* end of trace: the writer closed the file cleanly */
	IOTAP_REC_NOTE = 7,	/* free-text note from the writer (e.g. "no block device") */
	IOTAP_REC_APP = 8,	/* a unit of the application's own work (1.0, later writers) */
	IOTAP_REC_TYPE_MAX
};

/*
 * APP records (FORMAT.md "APP records"): what only the workload model
 * knows, written when the unit ends. @op is the kind.
 */
enum iotap_app_kind {
	IOTAP_APP_TXN = 1,	/* a transaction: dur_ns = its latency, aux = schedule lag */
	IOTAP_APP_SPAN = 2,	/* a period of the run: name, offset = start ns, dur_ns */
	IOTAP_APP_BACKUP = 3,	/* a backup generation: length = logical bytes, offset = look-ups */
};

#define IOTAP_APPF_STEADY	(1u << 0)	/* TXN: counted in the steady figures */
#define IOTAP_APPF_PARTIAL	(1u << 1)	/* SPAN, BACKUP: interrupted */
#define IOTAP_APPF_BEGIN	(1u << 2)	/* SPAN: its start (dur_ns 0); the end follows */

/*
 * Operation codes. Numbers are forever. Per-op meaning of the generic
 * fields of struct iotap_trace_rec is tabled in FORMAT.md ("Op fields").
 */
enum iotap_op {
	IOTAP_OP_UNKNOWN = 0,	/* an op the daemon does not implement (aux = FUSE opcode) */
	IOTAP_OP_LOOKUP = 1,
	IOTAP_OP_FORGET = 2,
	IOTAP_OP_GETATTR = 3,
	IOTAP_OP_SETATTR = 4,
	IOTAP_OP_READLINK = 5,
	IOTAP_OP_MKNOD = 6,
	IOTAP_OP_MKDIR = 7,
	IOTAP_OP_UNLINK = 8,
	IOTAP_OP_RMDIR = 9,
	IOTAP_OP_SYMLINK = 10,
	IOTAP_OP_RENAME = 11,
	IOTAP_OP_LINK = 12,
	IOTAP_OP_OPEN = 13,
	IOTAP_OP_READ = 14,
	IOTAP_OP_WRITE = 15,
	IOTAP_OP_FLUSH = 16,
	IOTAP_OP_RELEASE = 17,
	IOTAP_OP_FSYNC = 18,
	IOTAP_OP_OPENDIR = 19,
	IOTAP_OP_READDIR = 20,
	IOTAP_OP_RELEASEDIR = 21,
	IOTAP_OP_FSYNCDIR = 22,
	IOTAP_OP_STATFS = 23,
	IOTAP_OP_SETXATTR = 24,
	IOTAP_OP_GETXATTR = 25,
	IOTAP_OP_LISTXATTR = 26,
	IOTAP_OP_REMOVEXATTR = 27,
	IOTAP_OP_ACCESS = 28,
	IOTAP_OP_CREATE = 29,
	IOTAP_OP_GETLK = 30,
	IOTAP_OP_SETLK = 31,
	IOTAP_OP_BMAP = 32,
	IOTAP_OP_IOCTL = 33,
	IOTAP_OP_POLL = 34,
	IOTAP_OP_FLOCK = 35,
	IOTAP_OP_FALLOCATE = 36,
	IOTAP_OP_READDIRPLUS = 37,
	IOTAP_OP_COPY_FILE_RANGE = 38,
	IOTAP_OP_LSEEK = 39,
	IOTAP_OP_TMPFILE = 40,
	IOTAP_OP_MAX
};

/* Flags of an OP record (rec.flags holds open(2) flags for OPEN/CREATE). */
#define IOTAP_OPF_DATASYNC	(1u << 0)	/* FSYNC/FSYNCDIR: fdatasync */
#define IOTAP_OPF_DIRECT	(1u << 1)	/* READ/WRITE on an O_DIRECT handle */
#define IOTAP_OPF_SYNC		(1u << 2)	/* WRITE on an O_SYNC/O_DSYNC handle */
#define IOTAP_OPF_CACHED	(1u << 3)	/* READ/WRITE went through the kernel page cache */
#define IOTAP_OPF_REJECTED	(1u << 4)	/* the daemon answered without calling the backing fs */
#define IOTAP_OPF_CUT		(1u << 5)	/* READ/WRITE: the application's call goes on in the next piece */
#define IOTAP_OPF_CONT		(1u << 6)	/* READ/WRITE: continues the thread's previous CUT record */

/* A NAME record's flags: an additional name of the file (link), not a rebinding. */
#define IOTAP_NAME_LINK		1

/* Phase marker kinds (rec.flags of a PHASE record). */
#define IOTAP_PHASE_BEGIN	0
#define IOTAP_PHASE_END		1

/* Where a trace came from (header.source). */
enum iotap_trace_source {
	IOTAP_SOURCE_UNKNOWN = 0,
	IOTAP_SOURCE_CAPTURE = 1,	/* iotap mount */
	IOTAP_SOURCE_WORKLOAD = 2,	/* iotap run */
	IOTAP_SOURCE_REPLAY = 3,	/* iotap replay */
	IOTAP_SOURCE_SYNTHETIC = 4,	/* tests, benchmarks */
};

/* How the capture mount treated the page cache (header.capture_mode). */
enum iotap_capture_mode {
	IOTAP_MODE_NONE = 0,		/* not a capture (workload, replay) */
	IOTAP_MODE_DIRECT = 1,		/* direct_io: one app read()/write() = one record */
	IOTAP_MODE_CACHE = 2,		/* kernel page cache + writeback cache */
};

/*
 * struct iotap_trace_header - the file header, decoded
 *
 * Strings are NUL-terminated; NULL means absent. When passed to an open
 * function the strings are copied; when returned by a reader they belong to
 * the reader.
 */
struct iotap_trace_header {
	uint16_t version_major;		/* format version of the file */
	uint16_t version_minor;
	uint32_t source;		/* enum iotap_trace_source */
	uint32_t capture_mode;		/* enum iotap_capture_mode */
	uint64_t mono_base_ns;		/* CLOCK_MONOTONIC at open, ns */
	uint64_t real_base_ns;		/* CLOCK_REALTIME at the same instant, ns since the epoch */
	const char *host;		/* uname nodename */
	const char *kernel;		/* uname sysname release version machine */
	const char *mount_opts;		/* capture: mount options in force */
	const char *cmdline;		/* the command line that made the trace */
	const char *backing;		/* capture: backing directory; workload/replay: target dir */
	const char *mountpoint;		/* capture: mount point */
	const char *tool;		/* "iotap VERSION" */
	const char *workload;		/* workload: name and arguments; replay: source trace */
	const char *layout;		/* storage stack under backing: iotap_trace_layout() */
	const char *fuse;		/* capture: the FUSE request limits (FORMAT.md, tag 10) */
};

/*
 * struct iotap_trace_sample - payload of a SAMPLE record
 *
 * Device counters are the raw cumulative values of /sys/dev/block/M:m/stat;
 * CPU times are cumulative. Analysis takes differences between samples.
 */
struct iotap_trace_sample {
	uint32_t dev_major;		/* backing device, 0:0 when none */
	uint32_t dev_minor;
	uint64_t rd_ios;		/* completed reads */
	uint64_t rd_sectors;		/* 512-byte sectors read */
	uint64_t wr_ios;		/* completed writes */
	uint64_t wr_sectors;		/* 512-byte sectors written */
	uint64_t io_ticks_ms;		/* ms the device had I/O in flight */
	uint64_t queue_ms;		/* weighted ms of I/O in flight (time_in_queue) */
	uint64_t in_flight;		/* I/Os in flight at the sample */
	uint64_t proc_user_ns;		/* recording process CPU time, user */
	uint64_t proc_sys_ns;		/* recording process CPU time, system */
	uint64_t sys_user_ns;		/* all CPUs: user + nice */
	uint64_t sys_sys_ns;		/* all CPUs: system + irq + softirq */
	uint64_t sys_idle_ns;		/* all CPUs: idle */
	uint64_t sys_iowait_ns;		/* all CPUs: iowait */
	uint64_t proc_rss_kb;		/* recording process resident set, KiB */
};

/*
 * struct iotap_trace_rec - one record, decoded
 *
 * Fields that do not apply to a type are zero. time_ns is the start time on
 * CLOCK_MONOTONIC for every type (the instant of the event for non-ops).
 *
 * OP:     everything; see FORMAT.md for what file, file2, offset, length,
 *         flags, mode and aux mean per op. name is set only when the op's
 *         name argument has no file id of its own (a failed lookup/create, an
 *         xattr name, a symlink target).
 * NAME:   file, file2 = parent id (0 for the root), mode = st_mode, uid, gid,
 *         length = st_size when first seen, name = the entry name (the root
 *         has the backing path). A later NAME for the same file rebinds it
 *         (rename, link adds a name: flags = 1 means "additional name").
 * PHASE:  name, flags = IOTAP_PHASE_BEGIN/END, pid/tid of the marker,
 *         offset = user CPU ns and length = system CPU ns of the marking
 *         process at the mark (for %CP); on END from `iotap run`, aux =
 *         the longest unit timed in the phase, ns (0: none; FORMAT.md).
 * SAMPLE: sample.
 * LOST:   length = records dropped since the previous LOST record,
 *         tid = the thread whose records were lost (0: several).
 * END:    length = records written, aux = records lost in total.
 * NOTE:   name.
 */
struct iotap_trace_rec {
	uint16_t type;			/* enum iotap_trace_rec_type */
	uint16_t op;			/* enum iotap_op (OP) */
	uint32_t flags;			/* IOTAP_OPF_*, open(2) flags, or per-type flags */
	uint64_t time_ns;		/* start, CLOCK_MONOTONIC ns */
	uint64_t dur_ns;		/* duration of the backing call, ns */
	uint32_t tid;			/* caller thread id */
	uint32_t pid;			/* caller process id */
	uint32_t uid;			/* caller fsuid */
	uint32_t gid;			/* caller fsgid */
	uint64_t file;			/* file id: the backing st_ino for captures, opaque otherwise */
	uint64_t file2;			/* second file id: parent, new parent, target */
	uint64_t fh;			/* file handle id */
	uint64_t offset;		/* bytes */
	uint64_t length;		/* bytes (requested) */
	int64_t result;			/* bytes transferred, 0, or -errno */
	uint32_t mode;			/* mode argument or st_mode */
	uint32_t name_len;		/* bytes in name, without the NUL */
	uint64_t aux;			/* per-op extra (FORMAT.md) */
	const char *name;		/* NUL-terminated, or NULL */
	struct iotap_trace_sample sample;	/* SAMPLE only */
};

/* record.c codes the sample fields one by one: change it with them. */
_Static_assert(sizeof(struct iotap_trace_sample) == 8 + 14 * 8,
	       "struct iotap_trace_sample changed: update trace/record.c and FORMAT.md");

/* Longest name a record may carry, bytes (a symlink target can be PATH_MAX). */
#define IOTAP_TRACE_NAME_MAX	4096

/* Names for printing. Never NULL: unknown values give "?". */
const char *iotap_trace_op_name(unsigned int op);
const char *iotap_trace_rec_type_name(unsigned int type);
/* An OP record's IOTAP_OPF_* bits by name ("direct|cut"; "" if none or not OPF bits). */
#define IOTAP_OPF_NAMES_MAX	64
const char *iotap_trace_opf_names(unsigned int op, uint32_t flags, char *buf, size_t size);
const char *iotap_trace_source_name(unsigned int source);
const char *iotap_trace_mode_name(unsigned int mode);
/* Parse an op name ("read", "getattr"); returns the op or -EINVAL. */
int iotap_trace_op_from_name(const char *name);

/* Record kinds: constructors and accessors (one place knows each encoding). */
#include "iotap_trace_rec.h"

/* CLOCK_MONOTONIC now, ns. Safe from any thread. */
uint64_t iotap_trace_now_ns(void);

/*
 * iotap_trace_header_init - fill @hdr with this host's defaults
 * @hdr:    caller-owned header
 * @source: enum iotap_trace_source
 *
 * Sets the version, both clock bases (read back to back), host, kernel and
 * tool. Strings point at static storage valid until the next call.
 */
void iotap_trace_header_init(struct iotap_trace_header *hdr, uint32_t source);

/**
 * iotap_trace_layout - the storage stack under @path, for the header's layout
 * @path: the backing directory or a workload's target
 * @out:  malloc'ed text the caller frees: "key: value" lines (fs, fs geometry,
 *        one dev line per block device level, ram); see trace/FORMAT.md tag 9
 *
 * Reads /proc/self/mountinfo, the superblock (root only; else no geometry
 * line) and /sys/dev/block; never guesses what it cannot read.
 * Context: any thread; blocks on those reads only.
 * Return: 0, -errno of stat(@path), or -ENOMEM.
 */
int iotap_trace_layout(const char *path, char **out);

/* Open flags for writers and recorders. */
#define IOTAP_TRACE_FORCE	(1u << 0)	/* overwrite an existing file */

/*
 * struct iotap_trace_perm - who may read a trace file the library creates
 *
 * A trace names every file under a mount and each caller's uid, pid and
 * timing, so a file is created 0600 (as perf.data) unless a caller shares
 * it deliberately. The bits are set exactly (fchmod, the umask does not
 * apply), after the group when @has_gid. Zero-initialised: 0600, no chown.
 */
struct iotap_trace_perm {
	unsigned int mode;		/* permission bits (<= 0666), 0: 0600 */
	int has_gid;			/* chown the file to @gid */
	uint32_t gid;
};
#define IOTAP_TRACE_MODE_DEFAULT	0600

/* Apply @perm (NULL: the default) to the open file @fd; 0 or -errno. */
int iotap_trace_perm_apply(int fd, const struct iotap_trace_perm *perm);

/* --- single-threaded writer ------------------------------------------ */

struct iotap_trace_writer;

/*
 * iotap_trace_writer_open - create a trace file and write its header
 * @out:   the new writer
 * @path:  file to create; refused with -EEXIST if it exists and
 *         IOTAP_TRACE_FORCE is not in @flags, and with -ETXTBSY, even
 *         forced, if it is another writer's live trace (iotap_live_held():
 *         every writer marks its file until it closes; the file is left
 *         as it was)
 * @hdr:   header to write (copied)
 * @flags: IOTAP_TRACE_FORCE
 *
 * Context: any thread; the writer is then used by one thread at a time.
 */
int iotap_trace_writer_open(struct iotap_trace_writer **out, const char *path,
			    const struct iotap_trace_header *hdr, unsigned int flags);

/* iotap_trace_writer_open() with the file's permissions (@perm NULL: 0600). */
int iotap_trace_writer_open_perm(struct iotap_trace_writer **out, const char *path,
				 const struct iotap_trace_header *hdr, unsigned int flags,
				 const struct iotap_trace_perm *perm);

/*
 * iotap_trace_writer_append - add one record to the open chunk
 *
 * Compresses and writes the chunk when it is full (may block on write(2)).
 * Return: 0, -EINVAL for a malformed record, -errno from the file.
 */
int iotap_trace_writer_append(struct iotap_trace_writer *w,
			      const struct iotap_trace_rec *rec);

/*
 * iotap_trace_writer_flush - close the open chunk and write it
 * @watermark: every record appended after this call starts at or after
 *             @watermark ns (0: no promise beyond the default rule)
 *
 * The reader never has to look past a chunk to order the records before
 * its watermark. Default rule: until a non-zero @watermark is passed, the
 * writer assumes records are appended in start order and gives every
 * chunk the largest start appended so far. After one is passed, every
 * chunk (also one closed because it was full) carries the largest
 * watermark passed so far. A caller appending out of start order must
 * pass watermarks from its first flush, before 1 MiB of records.
 */
int iotap_trace_writer_flush(struct iotap_trace_writer *w, uint64_t watermark);

/*
 * iotap_trace_writer_close - flush, append END, close and free
 *
 * Always frees @w. Return: 0 or the first error the writer met.
 */
int iotap_trace_writer_close(struct iotap_trace_writer *w);

/* Bytes written to the file so far (header + chunks). */
uint64_t iotap_trace_writer_bytes(const struct iotap_trace_writer *w);

/* --- multi-threaded recorder ----------------------------------------- */

struct iotap_trace_recorder;

/*
 * Called by the writer thread right after a switch opened a new file
 * (iotap_trace_recorder_switch): records it passes to
 * iotap_trace_recorder_emit() go first in the new file (the capture
 * rebinds every file id still in use, so each file stands alone).
 */
typedef void (*iotap_trace_rebind_fn)(void *arg, struct iotap_trace_recorder *r);

struct iotap_trace_recorder_opts {
	size_t buf_bytes;		/* per-thread buffer, bytes (0: 64 KiB) */
	size_t max_bytes;		/* all buffers together, bytes (0: 64 MiB) */
	unsigned int flush_ms;		/* partial buffers collected every N ms (0: 100) */
	unsigned int chunk_ms;		/* a chunk is written at least every N ms (0: 1000) */
	int zstd_level;			/* 0: 1 (the plain writer's default is 3) */
	unsigned int flags;		/* IOTAP_TRACE_FORCE */
	const char *sample_path;	/* if set, the writer thread records a SAMPLE
					 * for the block device holding this path
					 * (or a NOTE that it has none) */
	unsigned int sample_ms;		/* sampling interval (0: 100) */
	struct iotap_trace_perm perm;	/* of every file it creates (0: 0600) */
	iotap_trace_rebind_fn rebind;	/* NULL: none */
	void *rebind_arg;
	size_t ring_bytes;		/* flight recorder: keep the last N bytes of
					 * chunks in memory, no file (path NULL) */
};

/*
 * iotap_trace_recorder_open - create the trace file and start the writer thread
 * @out:  the new recorder
 * @path: trace file (see iotap_trace_writer_open for @opts->flags), or
 *        NULL to start without one (iotap_trace_recorder_switch)
 * @hdr:  header (copied)
 * @opts: NULL for defaults
 *
 * Context: call before any recording thread uses the recorder.
 */
int iotap_trace_recorder_open(struct iotap_trace_recorder **out, const char *path,
			      const struct iotap_trace_header *hdr,
			      const struct iotap_trace_recorder_opts *opts);

/*
 * iotap_trace_recorder_switch - close the current file (END record) and go
 * on in @path, or with @path NULL stop recording into any file
 *
 * A recorder opened with a NULL path starts without a file. Rotation
 * (file to file) loses and doubles nothing; a start (no file to file)
 * keeps the records that begin after it. The new file's header is @hdr
 * with its clock bases moved to the switch. Blocks until the writer
 * thread has switched. Return: 0 or -errno of creating @path (the
 * current file then goes on).
 */
int iotap_trace_recorder_switch(struct iotap_trace_recorder *r, const char *path,
				const struct iotap_trace_header *hdr, unsigned int flags);
/*
 * iotap_trace_recorder_save - a flight recorder (opts.ring_bytes) writes
 * its window to @path as a complete trace: header, the rebind callback's
 * records, the kept chunks, END. Return: 0 or -errno.
 */
int iotap_trace_recorder_save(struct iotap_trace_recorder *r, const char *path,
			      const struct iotap_trace_header *hdr, unsigned int flags);
/* From the rebind callback only: a record for the head of the new file. */
void iotap_trace_recorder_emit(struct iotap_trace_recorder *r, const struct iotap_trace_rec *rec);

/* Live counters of a recorder (iotap_trace_recorder_stats). */
struct iotap_trace_recorder_stats {
	uint64_t recorded;		/* records handed to the writer thread */
	uint64_t lost;			/* records dropped */
	uint64_t written;		/* records encoded into files */
	uint64_t discarded;		/* records that found no file (stopped) */
	uint64_t file_bytes;		/* bytes in the current file, or in the ring */
	uint64_t files;			/* files opened */
	int error;			/* first write error, -errno */
	int ring;			/* a flight recorder */
};
void iotap_trace_recorder_stats(struct iotap_trace_recorder *r,
				struct iotap_trace_recorder_stats *st);

/*
 * iotap_trace_op_begin - note that the calling thread starts an operation
 *
 * Return: the start time (CLOCK_MONOTONIC ns) to put in the record's
 * time_ns. From begin to the thread's next iotap_trace_record() the thread
 * is "in flight": the writer will not promise a watermark past its start,
 * which keeps the reader's time order exact. Take the time of non-op
 * records (NAME, PHASE, NOTE) here too. One operation in flight per
 * thread; every begin must be followed by a record (until then the
 * watermark waits for it). Wait-free once the thread is registered (its
 * first call allocates its slot); any thread.
 */
uint64_t iotap_trace_op_begin(struct iotap_trace_recorder *r);

/* End the calling thread's in-flight state without a record (a filtered op). */
void iotap_trace_op_cancel(struct iotap_trace_recorder *r);

/*
 * Hand an op in flight to another thread (a request handed to a helper
 * thread half-way): iotap_trace_op_hold() by the thread that began it, with
 * its start, returns a hold (-1: none free, nothing changed) and ends that
 * thread's in-flight state; the other thread records the op with time_ns =
 * that start (no begin of its own), then releases the hold.
 */
int iotap_trace_op_hold(struct iotap_trace_recorder *r, uint64_t start);
void iotap_trace_hold_release(struct iotap_trace_recorder *r, int h);

/*
 * iotap_trace_record - queue one record from the calling thread
 * @rec: copied, including rec->name (up to IOTAP_TRACE_NAME_MAX bytes)
 *
 * Ends the thread's in-flight state, whatever the record's type: record
 * an op's NAME records after its OP record, each with its own begin. A
 * record whose time_ns does not come from iotap_trace_op_begin() should
 * carry iotap_trace_now_ns() taken just before the call; an older time may
 * be delivered late (FORMAT.md "Order and watermarks"). Never blocks on
 * the writer, the compressor or the disk: when the thread's buffer is full
 * and no free one is left, the record is dropped and counted (so is a
 * malformed one). Any thread; the first call from a thread registers it
 * (one allocation).
 */
void iotap_trace_record(struct iotap_trace_recorder *r, const struct iotap_trace_rec *rec);

/*
 * Records dropped so far (no buffer, malformed, or not written after a
 * write error), and records handed to the writer thread so far.
 */
uint64_t iotap_trace_recorder_lost(struct iotap_trace_recorder *r);
uint64_t iotap_trace_recorder_count(struct iotap_trace_recorder *r);

/*
 * iotap_trace_recorder_error - the first write error the writer thread met,
 * as -errno (0 if none). After an error the recorder keeps accepting records
 * and counts them lost; the application is never affected.
 */
int iotap_trace_recorder_error(struct iotap_trace_recorder *r);

/*
 * iotap_trace_recorder_close - collect every thread's buffer, write END,
 * close the file, stop the writer thread and free @r
 *
 * Context: no thread may record concurrently or afterwards.
 * Return: 0 or the first write error.
 */
int iotap_trace_recorder_close(struct iotap_trace_recorder *r);

/* --- reader ---------------------------------------------------------- */

struct iotap_trace_reader;

/* Reader open flags. */
#define IOTAP_TRACE_READ_FILE_ORDER (1u << 0)	/* no merge: records as stored */

/* What the reader found, for `iotap info`. */
struct iotap_trace_read_stats {
	uint64_t file_bytes;		/* size of the file */
	uint64_t header_bytes;
	uint64_t chunks;		/* valid chunks read */
	uint64_t chunks_bad;		/* chunks skipped (bad checksum, undecodable)
					 * and damaged regions resynchronised over;
					 * the tail is not one */
	uint64_t bytes_skipped;		/* bytes in no valid chunk (damage and tail) */
	uint64_t tail_bytes;		/* of those, what follows the last valid chunk
					 * with no valid chunk after it (torn write) */
	uint64_t first_bad_offset;	/* file offset of the first skipped byte (0: none) */
	uint64_t compressed_bytes;	/* payload bytes of valid chunks */
	uint64_t raw_bytes;		/* their decompressed size */
	uint64_t records;		/* records delivered */
	uint64_t records_by_type[IOTAP_REC_TYPE_MAX];
	uint64_t lost_records;		/* sum of LOST records */
	uint64_t late_records;		/* delivered out of start order (watermark broken) */
	uint64_t early_records;		/* released before their watermark: the reader's
					 * memory cap (about 512 K records); may make
					 * later records late */
	uint64_t t_first_ns;		/* smallest start time */
	uint64_t t_last_ns;		/* largest start + duration (an APP record's time: its end) */
	int has_end;			/* an END record was found */
};

/*
 * iotap_trace_reader_open - open a trace file and check its header
 * @flags: IOTAP_TRACE_READ_FILE_ORDER
 *
 * Return: 0; -ENOENT etc. from open(2); -ENODATA for an empty file;
 * -EBADMSG when the file is not an iotap trace (bad magic) or its header is
 * damaged or truncated; -EPROTONOSUPPORT for a format version newer than this library
 * (iotap_trace_probe_version() says which, even then).
 */
int iotap_trace_reader_open(struct iotap_trace_reader **out, const char *path,
			    unsigned int flags);

/*
 * iotap_trace_reader_open_fd - like iotap_trace_reader_open on an open,
 * seekable fd, which the reader does not close.
 */
int iotap_trace_reader_open_fd(struct iotap_trace_reader **out, int fd,
			       unsigned int flags);

/*
 * iotap_trace_reader_set_threads - decode chunks on @n threads (default 1)
 *
 * Call before the first iotap_trace_reader_next(). The calling thread is
 * one of the @n: @n - 1 threads are started, which check and decompress
 * the next chunks while the calling thread decodes and works through the
 * current one (it decompresses a chunk itself when none is ready).
 * @n = 0: the IOTAP_READ_THREADS environment variable if set, else 1 (on
 * the 2-CPU VMs measured a second thread saves a tenth of the wall time
 * on a 2 M-record capture, none on smaller ones, for 9-15% more CPU).
 * Records, order and statistics are the same for any @n; memory grows by
 * @n - 1 chunks' compressed and decompressed payloads.
 * Return: 0, -EBUSY (reading started), -EINVAL (bad IOTAP_READ_THREADS),
 * -ENOMEM / -EAGAIN (no thread started: decoding stays on the caller's).
 */
int iotap_trace_reader_set_threads(struct iotap_trace_reader *r, unsigned int n);

/*
 * iotap_trace_reader_on_progress - follow a reader through its file
 * @fn: called on the reading thread after each chunk it takes (@done:
 *      bytes of the file behind that chunk, @total: the file's size when it
 *      was opened; a file still being written may pass it), and once more
 *      at the end of the file with @end 1 (-1: the reading was abandoned,
 *      another reads the file: no final word); NULL: no more calls
 *
 * For progress lines on long reads (the CLI's, tools/traceio.c): one
 * call per chunk of thousands of records.
 */
typedef void (*iotap_trace_progress_fn)(void *arg, uint64_t done, uint64_t total, int end);
void iotap_trace_reader_on_progress(struct iotap_trace_reader *r, iotap_trace_progress_fn fn,
				    void *arg);

/* The decoded header; valid until close. */
const struct iotap_trace_header *iotap_trace_reader_header(const struct iotap_trace_reader *r);

/*
 * iotap_trace_reader_next - the next record
 * @rec: filled; rec->name points into reader memory valid until the next call
 *
 * In start-time order (ties keep file order) unless opened with
 * IOTAP_TRACE_READ_FILE_ORDER. Damaged chunks are skipped and counted.
 * Memory stays bounded by the span between chunk watermarks, and in any
 * case by about 512 K pending records or 128 MiB (beyond that the earliest
 * are released early; a record that then turns out earlier still is
 * delivered late and counted in late_records).
 *
 * Return: 1 with a record, 0 at the end, -errno on a read error.
 */
int iotap_trace_reader_next(struct iotap_trace_reader *r, struct iotap_trace_rec *rec);

/*
 * iotap_trace_reader_next_ref - the next record, without copying it
 * @rec: set to the record in reader memory, valid until the next call on
 *       the reader (any call: next, next_ref, close)
 *
 * The same records, order and statistics as iotap_trace_reader_next(),
 * for readers that go through billions of them. Only a SAMPLE record comes
 * with its sample: for every other type *rec is the fields before
 * `sample`, and reading rec->sample or copying *rec whole is not allowed.
 * Return: as iotap_trace_reader_next().
 */
int iotap_trace_reader_next_ref(struct iotap_trace_reader *r, const struct iotap_trace_rec **rec);

/* Statistics so far (complete after next() returned 0). */
void iotap_trace_reader_stats(const struct iotap_trace_reader *r,
			      struct iotap_trace_read_stats *st);

void iotap_trace_reader_close(struct iotap_trace_reader *r);

/*
 * struct iotap_trace_join - records of a reader with the pieces of a cut
 * read()/write() joined into one (trace/join.c)
 *
 * The kernel sends a direct_io call larger than max_write, or whose buffer
 * needs more pages than max_pages, in pieces; the capture flags every
 * piece but the last IOTAP_OPF_CUT and every piece but the first
 * IOTAP_OPF_CONT (FORMAT.md). iotap_trace_join_next() returns what
 * iotap_trace_reader_next() would, except that a CUT READ or WRITE comes
 * back as the whole call (length, result and duration of all its pieces,
 * the flags cleared) and the later pieces not at all. rec->name is valid until the next call. The reader
 * stays the caller's: close it after the join.
 */
struct iotap_trace_join;

int iotap_trace_join_open(struct iotap_trace_join **out, struct iotap_trace_reader *r);
int iotap_trace_join_next(struct iotap_trace_join *j, struct iotap_trace_rec *rec);
/*
 * The same without copying: *rec is valid until the next call on @j or its
 * reader, with iotap_trace_reader_next_ref()'s rule on rec->sample.
 */
int iotap_trace_join_next_ref(struct iotap_trace_join *j, const struct iotap_trace_rec **rec);
/* So far: calls joined from pieces, and the pieces folded into them. */
void iotap_trace_join_stats(const struct iotap_trace_join *j, uint64_t *calls, uint64_t *pieces);
void iotap_trace_join_close(struct iotap_trace_join *j);

/*
 * struct iotap_trace_split - one trace read as K windows of start time, on
 * K threads at once (trace/split.c)
 *
 * Window k holds the records whose start lies in [T_k, T_k+1), the T_k
 * chosen among the chunk watermarks from the chunk headers alone; it
 * delivers what iotap_trace_join_next_ref() over a merged reader of the
 * whole file delivers for those times, in the same order (cut calls
 * joined; a call belongs to the window of its first piece), so windows
 * 0..K-1 one after the other are the sequential reading.
 *
 * Where that cannot be guaranteed the split refuses with -EXDEV and the
 * caller reads the file whole: iotap_trace_split_open() for damage before
 * the tail, unreadable chunks, chunk headers whose watermarks and times
 * break the promise, a file under min_bytes; a window, while read, for a
 * chunk that does not check or decode, a chunk whose records contradict
 * its header, a late record, or dense cut calls at its start (no 4096
 * records without a cut piece to join from); iotap_trace_split_stats() for
 * a file on which the sequential reader could have released records
 * before their watermark (its memory cap, a conservative bound). The
 * records of the windows are right only when every window returned 0 at
 * its end and iotap_trace_split_stats() returned 0: on -EXDEV from any of
 * them, discard what the windows gave.
 */
struct iotap_trace_split;
struct iotap_trace_window;

struct iotap_trace_split_opts {
	unsigned int windows;		/* wanted, of about equal records (fewer where watermarks
					   repeat); 0: one per 16 MiB */
	uint64_t min_bytes;		/* smaller files: -EXDEV */
	/*
	 * Fewer windows where each would hold fewer chunks than this (0: no
	 * floor): a window decodes about one chunk beyond its own (the one it
	 * shares with the next).
	 */
	unsigned int min_chunks;
	/* More windows where each would hold more records than this (the headers' counts; 0: no cap). */
	uint64_t records;
};

/* Plan from the chunk headers. Return: 0, -EXDEV (read it whole), -errno as iotap_trace_reader_open(). */
int iotap_trace_split_open(struct iotap_trace_split **out, const char *path,
			   const struct iotap_trace_split_opts *o);
unsigned int iotap_trace_split_count(const struct iotap_trace_split *s);
const struct iotap_trace_header *iotap_trace_split_header(const struct iotap_trace_split *s);
/* Start time range of window @k: [*lo, *hi), *hi UINT64_MAX for the last. */
void iotap_trace_split_range(const struct iotap_trace_split *s, unsigned int k, uint64_t *lo,
			     uint64_t *hi);
/*
 * The split's own reader (the header; nothing else to read): progress set
 * on it (iotap_trace_reader_on_progress) follows the windows together,
 * called on their threads (so the function must be thread-safe) with
 * the bytes of the chunks read so far, each counted once.
 * iotap_trace_split_progress_end() makes the last call: @done 1 (the
 * windows were read and used: @end 1), 0 (abandoned: @end -1); close
 * makes it with 0 if nothing did.
 */
struct iotap_trace_reader *iotap_trace_split_reader(struct iotap_trace_split *s);
void iotap_trace_split_progress_end(struct iotap_trace_split *s, int done);
/*
 * The chunks the windows took, once they are closed (IOTAP_REPORT_DEBUG):
 * a chunk taken by two windows counts twice, as each window shares one
 * with the next. The three kinds the window's join adds are counted apart.
 */
struct iotap_trace_split_reads {
	uint32_t chunks;		/* the file's */
	uint64_t taken;			/* chunk reads, every try of every window */
	/*
	 * ... before a window's own chunks, where its join starts: none where
	 * the chunk it shares holds the join's lookback (16 K records); more
	 * where chunks are small, a call in flight held the watermark back
	 * (the chunks before the window's start end just short of it), or
	 * dense cut calls send the join further back
	 */
	uint64_t back;
	uint64_t ahead;			/* ... after its own and the shared one: a call's pieces go on */
	uint64_t again;			/* ... by a join start that came too late, tried again further back */
};
void iotap_trace_split_reads(struct iotap_trace_split *s, struct iotap_trace_split_reads *out);
/*
 * About how many records window @k holds at most (the counts of the chunks
 * that may hold them, from the headers): for sizing.
 */
uint64_t iotap_trace_split_records(const struct iotap_trace_split *s, unsigned int k);
/* Window @k (each at most once); thread-safe: the windows may be read on K threads at once. */
int iotap_trace_split_window_open(struct iotap_trace_split *s, unsigned int k,
				  struct iotap_trace_window **w);
/*
 * The next record: *rec valid until the next call (iotap_trace_join_next_ref()'s rules).
 * Return: 1, 0 at the window's end, -errno; -EXDEV: the split is not exact (sticky).
 */
int iotap_trace_window_next_ref(struct iotap_trace_window *w, const struct iotap_trace_rec **rec);
/*
 * Up to @max next records at once (one call, not one per record, on the
 * common path): @recs[0..n-1], each valid until the next call on @w.
 * Return: n >= 1, 0 at the window's end, -errno as iotap_trace_window_next_ref().
 */
int iotap_trace_window_next_refs(struct iotap_trace_window *w, const struct iotap_trace_rec **recs,
				 unsigned int max);
/* Free the window; one read to its end adds its share of the statistics to its split. */
void iotap_trace_window_close(struct iotap_trace_window *w);
/*
 * After every window was read to its end and closed: what iotap_trace_reader_stats()
 * and iotap_trace_join_stats() give after a sequential reading.
 * Return: 0; -EBUSY: a window not read to its end; -EXDEV: the windows are not exact.
 */
int iotap_trace_split_stats(const struct iotap_trace_split *s, struct iotap_trace_read_stats *st,
			    uint64_t *join_calls, uint64_t *join_pieces);
void iotap_trace_split_close(struct iotap_trace_split *s);

/*
 * struct iotap_trace_paths - a join's records, each with the path its file
 * had when the record started (trace/paths.c)
 *
 * NAME bindings change over time (a rename; an inode number reused by
 * another file): the path of an op is built from the bindings in force
 * at its start, except that an op that binds its own file (LOOKUP,
 * CREATE, MKDIR, MKNOD, SYMLINK) takes the binding its NAME gives.
 * Paths are relative to the trace's root ("." is the root, "#ID" an id
 * without a binding). The records are the join's, in its order. The
 * join stays the caller's: close it after.
 */
struct iotap_trace_paths;

struct iotap_trace_path {
	const char *path;		/* NUL-terminated; NULL: the record names no file */
	uint32_t len;			/* bytes in path */
	uint64_t key;			/* one number per (file id, path) seen; 0: an op
					 * with no file id (its parent's path and its name) */
};

int iotap_trace_paths_open(struct iotap_trace_paths **out, struct iotap_trace_join *j);
/*
 * The next record and its path: both valid until the next call on @p, its
 * join or its reader (iotap_trace_reader_next_ref()'s rule on rec->sample).
 * Return: 1, 0 at the end, -errno (the join's, or -ENOMEM).
 */
int iotap_trace_paths_next_ref(struct iotap_trace_paths *p, const struct iotap_trace_rec **rec,
			       struct iotap_trace_path *path);
void iotap_trace_paths_close(struct iotap_trace_paths *p);

/*
 * iotap_trace_fuse_field - a number from the header's fuse field
 * ("max_write=1048576 max_pages=256 ..."), 0 when @fuse is NULL or has no @key.
 */
uint64_t iotap_trace_fuse_field(const char *fuse, const char *key);

/*
 * iotap_trace_probe_version - read a file's format version from its header
 * without accepting it. Return: 0 and the version in @major and @minor,
 * or -errno as for
 * iotap_trace_reader_open (never -EPROTONOSUPPORT).
 */
int iotap_trace_probe_version(const char *path, unsigned int *major, unsigned int *minor);

/* Text for this library's -errno codes in reader context ("not an iotap trace"). */
const char *iotap_trace_strerror(int err);

#endif /* IOTAP_TRACE_H */
