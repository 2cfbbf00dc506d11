// SPDX-License-Identifier: MIT
/*
 * test_replay.c - the replayer (workload/replay/) on synthetic traces
 *
 * Traces are written with trace/'s writer exactly as the capture daemon
 * lays them out (fs/capture.c: NAME after its op, RELEASE with tid 0,
 * first-seen NAMEs from lookups), then replayed through the library into
 * fresh directories under $TMPDIR:
 *
 *   - cross-thread dependencies: thread A creates and fills files, thread
 *     B opens and reads each one right after its create, C renames it and
 *     D opens it by the new name, A unlinks it after D's last use; A is
 *     slowed by large writes, so without the dependencies B, C and D run
 *     ahead (asap) and fail with ENOENT. Replayed 100 times: no error, no
 *     difference, ever;
 *   - a short read caused by reading before another thread's write;
 *   - the initial state: check lists what is missing, prepare builds it
 *     (sizes, symlink length, hard link), check then passes; in the way;
 *   - --phase (state at the phase start, handles opened before it),
 *     --map (a subtree elsewhere; a map matching nothing), --skip;
 *   - a damaged trace (cut in its middle) replays what is left;
 *   - the synthetic data kinds; the lag histogram; phase markers in the
 *     replay's own trace.
 *
 * test_replay --synth-bench FILE OPS THREADS writes the trace that
 * tests/bench/replay-bench.sh replays with --timing asap: THREADS threads,
 * each with 16 files of 256 KiB that exist before the capture, OPS
 * requests in all of 4 KiB reads and writes at random aligned offsets.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"
#include "iotap_replay.h"
#include "iotap_trace.h"
#include "replay_i.h"		/* the data generator and the lag buckets */

#define ROOT	2ull			/* file id of the root */
#define US	1000ull

struct syn {
	struct iotap_trace_writer *w;
	uint64_t t;			/* current time, ns */
	int err;
};

static int syn_open(struct syn *s, const char *path)
{
	struct iotap_trace_header h;
	struct iotap_trace_rec r;

	memset(s, 0, sizeof(*s));
	iotap_trace_header_init(&h, IOTAP_SOURCE_SYNTHETIC);
	h.capture_mode = IOTAP_MODE_DIRECT;
	h.mono_base_ns = 1000000000ull;
	h.mountpoint = "/srv/mnt";
	if (iotap_trace_writer_open(&s->w, path, &h, IOTAP_TRACE_FORCE))
		return -1;
	s->t = 2000000000ull;
	memset(&r, 0, sizeof(r));
	r.type = IOTAP_REC_NAME;
	r.time_ns = s->t;
	r.tid = r.pid = 1;
	r.file = ROOT;
	r.mode = S_IFDIR | 0755;
	r.length = 4096;
	r.name = "/srv/data";
	r.name_len = (uint32_t)strlen(r.name);
	return iotap_trace_writer_append(s->w, &r);
}

static void syn_rec(struct syn *s, const struct iotap_trace_rec *r)
{
	if (!s->err)
		s->err = iotap_trace_writer_append(s->w, r);
}

/* One op at time @t of thread @tid (pid = tid), lasting @dur ns. */
static void op(struct syn *s, uint64_t t, uint32_t tid, unsigned int opc, uint64_t file,
	       uint64_t file2, uint64_t fh, uint64_t off, uint64_t len, int64_t res,
	       uint32_t flags, uint32_t mode, uint64_t aux, const char *name, uint64_t dur)
{
	struct iotap_trace_rec r;

	memset(&r, 0, sizeof(r));
	r.type = IOTAP_REC_OP;
	r.op = (uint16_t)opc;
	r.time_ns = t;
	r.dur_ns = dur;
	r.tid = tid;
	r.pid = tid ? tid : 0;
	r.file = file;
	r.file2 = file2;
	r.fh = fh;
	r.offset = off;
	r.length = len;
	r.result = res;
	r.flags = flags;
	r.mode = mode;
	r.aux = aux;
	if (name) {
		r.name = name;
		r.name_len = (uint32_t)strlen(name);
	}
	syn_rec(s, &r);
}

static void name(struct syn *s, uint64_t t, uint32_t tid, uint64_t file, uint64_t parent,
		 const char *n, uint32_t mode, uint64_t size, uint32_t flags)
{
	struct iotap_trace_rec r;

	memset(&r, 0, sizeof(r));
	r.type = IOTAP_REC_NAME;
	r.time_ns = t;
	r.tid = r.pid = tid;
	r.file = file;
	r.file2 = parent;
	r.mode = mode;
	r.length = size;
	r.flags = flags;
	r.name = n;
	r.name_len = (uint32_t)strlen(n);
	syn_rec(s, &r);
}

static void phase(struct syn *s, uint64_t t, const char *n, uint32_t kind)
{
	struct iotap_trace_rec r;

	memset(&r, 0, sizeof(r));
	r.type = IOTAP_REC_PHASE;
	r.time_ns = t;
	r.tid = r.pid = 9;
	r.flags = kind;
	r.name = n;
	r.name_len = (uint32_t)strlen(n);
	syn_rec(s, &r);
}

static int syn_close(struct syn *s)
{
	int ret = iotap_trace_writer_close(s->w);

	return s->err ? s->err : ret;
}

/* --- helpers --------------------------------------------------------------------- */

static char tmp_root[256];

static char *fresh_dir(const char *tag, int n)
{
	static char p[512];

	snprintf(p, sizeof(p), "%s/%s.%d", tmp_root, tag, n);
	mkdir(p, 0755);
	return p;
}

static void rm_rf(const char *p)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", p);
	if (system(cmd))
		diag("could not remove %s", p);
}

static int replay(const char *trace, const char *dir, unsigned int flags,
		  enum iotap_replay_timing timing, struct iotap_replay_stats *st,
		  const struct iotap_replay_opts *extra)
{
	struct iotap_replay_opts o;
	struct iotap_replay *r = NULL;
	int ret;

	if (extra)
		o = *extra;
	else
		memset(&o, 0, sizeof(o));
	o.trace = trace;
	o.target = dir;
	o.flags |= flags;
	o.timing = timing;
	o.scale = 1;
	ret = iotap_replay_open(&r, &o);
	if (!ret && (flags & IOTAP_REPLAY_PREPARE))
		ret = iotap_replay_prepare(r, NULL);
	if (!ret && !(flags & (IOTAP_REPLAY_PREPARE | IOTAP_REPLAY_FORCE)))
		ret = iotap_replay_check(r, NULL, 0);
	if (!ret)
		ret = iotap_replay_run(r, st);
	if (ret && r && *iotap_replay_what(r))
		diag("replay: %s: %s", strerror(-ret), iotap_replay_what(r));
	iotap_replay_close(r);
	return ret;
}

static uint64_t fsize(const char *dir, const char *n)
{
	char p[600];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", dir, n);
	return lstat(p, &st) ? UINT64_MAX : (uint64_t)st.st_size;
}

/* --- cross-thread dependencies -------------------------------------------------------- */

#define NFILES		48
#define BIG		(512u << 10)

/*
 * Per file i, on a 300 us grid: A creates f<i> and writes 512 KiB (slow),
 * B opens and reads it, C renames it to g<i>, D opens g<i> and reads, A
 * unlinks it. Each step starts after the previous one ended, on another
 * thread.
 */
static int write_deps_trace(const char *path)
{
	struct syn s;
	int i;

	if (syn_open(&s, path))
		return -1;
	for (i = 0; i < NFILES; i++) {
		uint64_t t = s.t + 1000 * US + (uint64_t)i * 300 * US, id = 1000 + i;
		uint64_t fa = 10 * i + 1, fb = 10 * i + 2, fd = 10 * i + 3;
		char f[32], g[32];

		snprintf(f, sizeof(f), "f%d", i);
		snprintf(g, sizeof(g), "g%d", i);
		op(&s, t, 101, IOTAP_OP_LOOKUP, 0, ROOT, 0, 0, 0, -ENOENT, 0, 0, 0, f, 2 * US);
		op(&s, t + 5 * US, 101, IOTAP_OP_CREATE, id, ROOT, fa, 0, 0, 0,
		   O_CREAT | O_WRONLY | O_TRUNC, S_IFREG | 0644, 0, NULL, 10 * US);
		name(&s, t + 16 * US, 101, id, ROOT, f, S_IFREG | 0644, 0, 0);
		op(&s, t + 20 * US, 101, IOTAP_OP_WRITE, id, 0, fa, 0, BIG, BIG, 0, 0, 0, NULL,
		   40 * US);
		op(&s, t + 62 * US, 101, IOTAP_OP_FLUSH, id, 0, fa, 0, 0, 0, 0, 0, 0, NULL, US);
		op(&s, t + 64 * US, 0, IOTAP_OP_RELEASE, id, 0, fa, 0, 0, 0, O_WRONLY, 0, 0, NULL,
		   US);
		/* B: found by its lookup, opened, read whole */
		op(&s, t + 70 * US, 202, IOTAP_OP_LOOKUP, id, ROOT, 0, 0, 0, 0, 0, S_IFREG | 0644,
		   0, NULL, 2 * US);
		op(&s, t + 75 * US, 202, IOTAP_OP_OPEN, id, 0, fb, 0, 0, 0, O_RDONLY, 0, 0, NULL,
		   3 * US);
		op(&s, t + 80 * US, 202, IOTAP_OP_READ, id, 0, fb, 0, BIG, BIG, 0, 0, 0, NULL,
		   20 * US);
		op(&s, t + 101 * US, 202, IOTAP_OP_READ, id, 0, fb, BIG, 4096, 0, 0, 0, 0, NULL,
		   US);
		op(&s, t + 104 * US, 0, IOTAP_OP_RELEASE, id, 0, fb, 0, 0, 0, O_RDONLY, 0, 0, NULL,
		   US);
		/* C: rename f -> g */
		op(&s, t + 110 * US, 303, IOTAP_OP_LOOKUP, 0, ROOT, 0, 0, 0, -ENOENT, 0, 0, 0, g,
		   2 * US);
		op(&s, t + 115 * US, 303, IOTAP_OP_RENAME, id, ROOT, 0, 0, 0, 0, 0, S_IFREG | 0644,
		   ROOT, NULL, 5 * US);
		name(&s, t + 121 * US, 303, id, ROOT, g, S_IFREG | 0644, BIG, 0);
		/* D: by the new name */
		op(&s, t + 130 * US, 404, IOTAP_OP_GETATTR, id, 0, 0, 0, 0, 0, 0, S_IFREG | 0644,
		   BIG, NULL, US);
		op(&s, t + 135 * US, 404, IOTAP_OP_OPEN, id, 0, fd, 0, 0, 0, O_RDWR, 0, 0, NULL,
		   3 * US);
		op(&s, t + 140 * US, 404, IOTAP_OP_READ, id, 0, fd, 4096, 8192, 8192, 0, 0, 0,
		   NULL, 5 * US);
		op(&s, t + 146 * US, 404, IOTAP_OP_FSYNC, id, 0, fd, 0, 0, 0, IOTAP_OPF_DATASYNC,
		   0, 0, NULL, 5 * US);
		op(&s, t + 152 * US, 0, IOTAP_OP_RELEASE, id, 0, fd, 0, 0, 0, O_RDWR, 0, 0, NULL,
		   US);
		/* A: gone */
		op(&s, t + 160 * US, 101, IOTAP_OP_UNLINK, id, ROOT, 0, 0, 0, 0, 0, S_IFREG | 0644,
		   0, NULL, 5 * US);
	}
	return syn_close(&s);
}

static void test_deps(void)
{
	struct iotap_replay_stats st;
	char trace[512];
	int i, bad = 0, enoent = 0, ret;
	uint64_t ops = 0, waits = 0;

	snprintf(trace, sizeof(trace), "%s/deps.iotap", tmp_root);
	ok(!write_deps_trace(trace), "cross-thread trace written");
	for (i = 0; i < 100; i++) {
		char *dir = fresh_dir("deps", i);

		ret = replay(trace, dir, 0, IOTAP_REPLAY_ASAP, &st, NULL);
		if (ret || st.differences || st.unreplayable) {
			bad++;
			enoent += (int)(st.op[IOTAP_OP_OPEN].failed +
					st.op[IOTAP_OP_RENAME].failed +
					st.op[IOTAP_OP_GETATTR].failed);
			if (bad == 1 && st.nexamples)
				diag("run %d: %s", i, st.example[0]);
		}
		ops += st.ops;
		waits += st.dep_waits;
		rm_rf(dir);
	}
	ok(!bad, "create->open, rename->use, use->unlink across 4 threads: 100 replays, "
	   "%d with errors (%d ENOENT-type failures)", bad, enoent);
	ok(ops == 100ull * NFILES * 18, "every op replayed each time (%" PRIu64 ")", ops);
	diag("dependency waits over 100 replays: %" PRIu64, waits);
}

/* A read that was short because it came before another thread's write. */
static void test_short_read(void)
{
	struct iotap_replay_stats st;
	char trace[512], *dir;
	struct syn s;
	uint64_t t;

	snprintf(trace, sizeof(trace), "%s/short.iotap", tmp_root);
	syn_open(&s, trace);
	t = s.t + 1000 * US;
	/* x exists with 4 KiB; A appends 4 KiB at 4096 at t+100us; B read 8 KiB at t (short) */
	op(&s, t - 50 * US, 11, IOTAP_OP_LOOKUP, 50, ROOT, 0, 0, 0, 0, 0, S_IFREG | 0644, 0,
	   NULL, US);
	name(&s, t - 48 * US, 11, 50, ROOT, "x", S_IFREG | 0644, 4096, 0);
	op(&s, t - 40 * US, 11, IOTAP_OP_OPEN, 50, 0, 1, 0, 0, 0, O_WRONLY, 0, 0, NULL, US);
	op(&s, t - 30 * US, 22, IOTAP_OP_OPEN, 50, 0, 2, 0, 0, 0, O_RDONLY, 0, 0, NULL, US);
	op(&s, t, 22, IOTAP_OP_READ, 50, 0, 2, 0, 8192, 4096, 0, 0, 0, NULL, 5 * US);
	op(&s, t + 100 * US, 11, IOTAP_OP_WRITE, 50, 0, 1, 4096, 4096, 4096, 0, 0, 0, NULL,
	   5 * US);
	op(&s, t + 200 * US, 22, IOTAP_OP_READ, 50, 0, 2, 0, 8192, 8192, 0, 0, 0, NULL, 5 * US);
	op(&s, t + 300 * US, 0, IOTAP_OP_RELEASE, 50, 0, 1, 0, 0, 0, O_WRONLY, 0, 0, NULL, US);
	op(&s, t + 301 * US, 0, IOTAP_OP_RELEASE, 50, 0, 2, 0, 0, 0, O_RDONLY, 0, 0, NULL, US);
	ok(!syn_close(&s), "short-read trace written");
	dir = fresh_dir("short", 0);
	ok(!replay(trace, dir, IOTAP_REPLAY_PREPARE, IOTAP_REPLAY_ASAP, &st, NULL) &&
	   !st.differences, "the read before the write is short, the one after full (%" PRIu64
	   " differences)", st.differences);
	ok(st.op[IOTAP_OP_READ].bytes == 4096 + 8192, "read bytes %" PRIu64,
	   st.op[IOTAP_OP_READ].bytes);
	rm_rf(dir);
}

/* --- initial state, maps, phases, skip ------------------------------------------------- */

/*
 * Pre-existing: dir d/, file d/a (10000 bytes), link l -> 11 chars, file b
 * with a second name d/b2; phase "one" creates d/new (3 writes), phase
 * "two" reads d/new through a handle opened in phase one, stats b.
 */
static int write_state_trace(const char *path, int damaged_tail)
{
	struct syn s;
	uint64_t t;
	int i;

	if (syn_open(&s, path))
		return -1;
	t = s.t + 1000 * US;
	op(&s, t, 7, IOTAP_OP_LOOKUP, 60, ROOT, 0, 0, 0, 0, 0, S_IFDIR | 0750, 0, NULL, US);
	name(&s, t + 2 * US, 7, 60, ROOT, "d", S_IFDIR | 0750, 4096, 0);
	op(&s, t + 10 * US, 7, IOTAP_OP_LOOKUP, 61, 60, 0, 0, 0, 0, 0, S_IFREG | 0640, 0, NULL, US);
	name(&s, t + 12 * US, 7, 61, 60, "a", S_IFREG | 0640, 10000, 0);
	op(&s, t + 20 * US, 7, IOTAP_OP_LOOKUP, 62, ROOT, 0, 0, 0, 0, 0, S_IFLNK | 0777, 0, NULL,
	   US);
	name(&s, t + 22 * US, 7, 62, ROOT, "l", S_IFLNK | 0777, 11, 0);
	op(&s, t + 30 * US, 7, IOTAP_OP_READLINK, 62, 0, 0, 0, 0, 11, 0, 0, 0, NULL, US);
	op(&s, t + 40 * US, 7, IOTAP_OP_LOOKUP, 63, ROOT, 0, 0, 0, 0, 0, S_IFREG | 0644, 0, NULL,
	   US);
	name(&s, t + 42 * US, 7, 63, ROOT, "b", S_IFREG | 0644, 777, 1);
	op(&s, t + 50 * US, 7, IOTAP_OP_LOOKUP, 63, 60, 0, 0, 0, 0, 0, S_IFREG | 0644, 0, NULL, US);
	name(&s, t + 52 * US, 7, 63, 60, "b2", S_IFREG | 0644, 777, 1);
	phase(&s, t + 100 * US, "one", IOTAP_PHASE_BEGIN);
	op(&s, t + 110 * US, 7, IOTAP_OP_LOOKUP, 0, 60, 0, 0, 0, -ENOENT, 0, 0, 0, "new", US);
	op(&s, t + 120 * US, 7, IOTAP_OP_CREATE, 64, 60, 5, 0, 0, 0, O_CREAT | O_RDWR,
	   S_IFREG | 0600, 0, NULL, US);
	name(&s, t + 122 * US, 7, 64, 60, "new", S_IFREG | 0600, 0, 0);
	for (i = 0; i < 3; i++)
		op(&s, t + (130 + 10 * i) * US, 7, IOTAP_OP_WRITE, 64, 0, 5, 4096 * i, 4096, 4096,
		   0, 0, 0, NULL, US);
	op(&s, t + 170 * US, 7, IOTAP_OP_READ, 61, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0);
	phase(&s, t + 200 * US, "one", IOTAP_PHASE_END);
	phase(&s, t + 300 * US, "two", IOTAP_PHASE_BEGIN);
	op(&s, t + 310 * US, 8, IOTAP_OP_READ, 64, 0, 5, 0, 16384, 12288, 0, 0, 0, NULL, US);
	op(&s, t + 320 * US, 8, IOTAP_OP_GETATTR, 63, 0, 0, 0, 0, 0, 0, S_IFREG | 0644, 777,
	   NULL, US);
	op(&s, t + 330 * US, 8, IOTAP_OP_GETXATTR, 61, 0, 0, 0, 0, -ENODATA, 0, 0, 0, "user.x",
	   US);
	op(&s, t + 340 * US, 0, IOTAP_OP_RELEASE, 64, 0, 5, 0, 0, 0, O_RDWR, 0, 0, NULL, US);
	phase(&s, t + 400 * US, "two", IOTAP_PHASE_END);
	if (syn_close(&s))
		return -1;
	if (damaged_tail) {
		/* flip bytes in the middle of the single chunk: it is skipped */
		int fd = open(path, O_RDWR);
		struct stat st;
		char junk[64];

		memset(junk, 0x5a, sizeof(junk));
		if (fd < 0 || fstat(fd, &st) ||
		    pwrite(fd, junk, sizeof(junk), st.st_size / 2) != sizeof(junk))
			return -1;
		close(fd);
	}
	return 0;
}

static void test_state(void)
{
	struct iotap_replay_opts o;
	struct iotap_replay_stats st;
	struct iotap_replay *r = NULL;
	char trace[512], buf[64], p[600], *dir, *list = NULL;
	size_t len = 0;
	struct stat s1, s2;
	FILE *f;
	int ret;

	snprintf(trace, sizeof(trace), "%s/state.iotap", tmp_root);
	ok(!write_state_trace(trace, 0), "state trace written");
	dir = fresh_dir("state", 0);
	memset(&o, 0, sizeof(o));
	o.trace = trace;
	o.target = dir;
	ret = iotap_replay_open(&r, &o);
	ok(!ret, "open");
	if (ret)
		return;
	f = open_memstream(&list, &len);
	ret = iotap_replay_check(r, f, 100);
	fclose(f);
	ok(ret == -ENOTEMPTY && strstr(list, "missing: ") && strstr(list, "/d/a") &&
	   strstr(list, "10000 bytes") && strstr(list, "/l' (a symlink)"),
	   "an empty target: check lists what is missing");
	free(list);
	ok(iotap_replay_plan(r)->files == 2 && iotap_replay_plan(r)->dirs == 2 &&
	   iotap_replay_plan(r)->symlinks == 1,
	   "plan: 2 dirs (root, d), 2 files, 1 symlink; d/new is not in it");
	ok(!iotap_replay_prepare(r, NULL), "prepare");
	ok(!iotap_replay_check(r, NULL, 0), "check passes after prepare");
	iotap_replay_close(r);
	ok(fsize(dir, "d/a") == 10000 && fsize(dir, "b") == 777 && fsize(dir, "l") == 11 &&
	   fsize(dir, "d/new") == UINT64_MAX, "sizes: d/a 10000, b 777, symlink target 11, "
	   "no d/new");
	snprintf(p, sizeof(p), "%s/b", dir);
	stat(p, &s1);
	snprintf(p, sizeof(p), "%s/d/b2", dir);
	stat(p, &s2);
	ok(s1.st_ino == s2.st_ino && s1.st_nlink == 2, "b and d/b2 are one file");
	snprintf(p, sizeof(p), "%s/d", dir);
	stat(p, &s1);
	ok((s1.st_mode & 07777) == 0750, "d has its mode 0750");

	/* a leftover d/new is in the way */
	snprintf(p, sizeof(p), "%s/d/new", dir);
	close(open(p, O_CREAT | O_WRONLY, 0644));
	memset(&o, 0, sizeof(o));
	o.trace = trace;
	o.target = dir;
	iotap_replay_open(&r, &o);
	list = NULL;
	f = open_memstream(&list, &len);
	ret = iotap_replay_check(r, f, 100);
	fclose(f);
	ok(ret == -ENOTEMPTY && strstr(list, "in the way") && strstr(list, "d/new"),
	   "a leftover of the capture's create is in the way");
	free(list);
	iotap_replay_close(r);

	ok(replay(trace, dir, IOTAP_REPLAY_PREPARE, IOTAP_REPLAY_RECORDED, &st, NULL) == -EEXIST &&
	   fsize(dir, "d/new") == 0, "prepare without CLOBBER refuses, d/new left as it was");
	ok(!replay(trace, dir, IOTAP_REPLAY_PREPARE | IOTAP_REPLAY_CLOBBER, IOTAP_REPLAY_RECORDED,
		   &st, NULL) &&
	   !st.differences && !st.unreplayable && st.phases == 4,
	   "whole trace: prepared (leftover removed), replayed, 0 differences, 4 markers");
	ok(fsize(dir, "d/new") == 12288, "d/new has its 3 writes");
	rm_rf(dir);

	/* phase two alone: d/new exists at its start, its handle is reopened */
	dir = fresh_dir("state", 1);
	memset(&o, 0, sizeof(o));
	o.phase = "two";
	ok(!replay(trace, dir, IOTAP_REPLAY_PREPARE, IOTAP_REPLAY_ASAP, &st, &o) &&
	   !st.differences && st.op[IOTAP_OP_READ].bytes == 12288 && st.phases == 2,
	   "--phase two: state at its start (d/new of 12288 bytes), read through a handle "
	   "opened before it: %" PRIu64 " bytes, %" PRIu64 " differences",
	   st.op[IOTAP_OP_READ].bytes, st.differences);
	ok(st.ops == 4, "--phase two: its 4 ops only (%" PRIu64 ")", st.ops);
	rm_rf(dir);

	/* --map d=OTHER (relative) and /srv/mnt/d (under the mount point) */
	dir = fresh_dir("state", 2);
	{
		struct iotap_replay_map m = { "/srv/mnt/d", NULL };
		char *other = strdup(fresh_dir("other", 2));

		m.new_path = other;
		memset(&o, 0, sizeof(o));
		o.maps = &m;
		o.nmaps = 1;
		ok(!replay(trace, dir, IOTAP_REPLAY_PREPARE, IOTAP_REPLAY_ASAP, &st, &o) &&
		   !st.differences, "--map /srv/mnt/d=OTHER: replayed, 0 differences");
		ok(fsize(other, "a") == 10000 && fsize(other, "new") == 12288 &&
		   fsize(dir, "d/a") == UINT64_MAX && fsize(dir, "b") == 777,
		   "d's files went to OTHER, the rest to the target");
		m.old_path = "nothere";
		memset(&o, 0, sizeof(o));
		o.maps = &m;
		o.nmaps = 1;
		o.trace = trace;
		o.target = dir;
		ret = iotap_replay_open(&r, &o);
		ok(ret == -ENXIO && strstr(iotap_replay_what(r), "matches nothing"),
		   "a --map that matches nothing: %s", iotap_replay_what(r));
		iotap_replay_close(r);
		rm_rf(other);
		free(other);
	}
	rm_rf(dir);

	/* --skip */
	dir = fresh_dir("state", 3);
	memset(&o, 0, sizeof(o));
	o.skip_ops = 1ull << IOTAP_OP_GETXATTR | 1ull << IOTAP_OP_LOOKUP;
	ok(!replay(trace, dir, IOTAP_REPLAY_PREPARE, IOTAP_REPLAY_ASAP, &st, &o) &&
	   !st.op[IOTAP_OP_GETXATTR].replayed && st.op[IOTAP_OP_GETXATTR].skipped == 1 &&
	   st.op[IOTAP_OP_LOOKUP].skipped == 6 && !st.differences,
	   "--skip getxattr,lookup: not replayed, counted as skipped");
	rm_rf(dir);

	/* a damaged trace: replay what is left, and say so */
	snprintf(buf, sizeof(buf), "damaged");
	snprintf(trace, sizeof(trace), "%s/state-damaged.iotap", tmp_root);
	ok(!write_state_trace(trace, 1), "damaged trace written");
	dir = fresh_dir("state", 4);
	memset(&o, 0, sizeof(o));
	o.trace = trace;
	o.target = dir;
	ret = iotap_replay_open(&r, &o);
	ok(ret == -EBADMSG || (ret == 0 && iotap_replay_plan(r)->damage.chunks_bad),
	   "%s: the scan reports the bad chunk (ret %d)", buf, ret);
	iotap_replay_close(r);
	rm_rf(dir);
}

/* A trace cut short (its writer killed): complete chunks are replayed. */
static void test_truncated(void)
{
	struct iotap_replay_opts o;
	struct iotap_replay_stats st;
	struct iotap_replay *r = NULL;
	char trace[512], *dir;
	struct syn s;
	struct stat sb;
	int i, ret;

	snprintf(trace, sizeof(trace), "%s/cut.iotap", tmp_root);
	syn_open(&s, trace);
	op(&s, s.t + US, 5, IOTAP_OP_LOOKUP, 0, ROOT, 0, 0, 0, -ENOENT, 0, 0, 0, "c", US);
	op(&s, s.t + 2 * US, 5, IOTAP_OP_CREATE, 70, ROOT, 1, 0, 0, 0, O_CREAT | O_WRONLY,
	   S_IFREG | 0644, 0, NULL, US);
	name(&s, s.t + 4 * US, 5, 70, ROOT, "c", S_IFREG | 0644, 0, 0);
	/* enough records for several chunks (1 MiB of raw records each) */
	for (i = 0; i < 400000; i++)
		op(&s, s.t + (10 + i) * US, 5, IOTAP_OP_WRITE, 70, 0, 1, (uint64_t)(i % 16) * 512,
		   512, 512, 0, 0, 0, NULL, US / 2);
	ok(!syn_close(&s), "long trace written");
	stat(trace, &sb);
	ok(!truncate(trace, sb.st_size - sb.st_size / 3), "cut a third off its end");
	dir = fresh_dir("cut", 0);
	memset(&o, 0, sizeof(o));
	o.trace = trace;
	o.target = dir;
	o.timing = IOTAP_REPLAY_ASAP;
	ret = iotap_replay_open(&r, &o);
	ok(!ret && iotap_replay_plan(r)->damage.tail_bytes &&
	   !iotap_replay_plan(r)->damage.has_end,
	   "the scan sees the torn end (%" PRIu64 " bytes)",
	   r ? iotap_replay_plan(r)->damage.tail_bytes : 0);
	ret = ret ? ret : iotap_replay_run(r, &st);
	ok(!ret && !st.differences && st.ops > 1000 && st.ops < 400002,
	   "what is left is replayed: %" PRIu64 " ops, %" PRIu64 " differences", st.ops,
	   st.differences);
	iotap_replay_close(r);
	rm_rf(dir);
}

/* --- pieces --------------------------------------------------------------------------- */

static void test_lag_buckets(void)
{
	uint64_t v, bad = 0;

	for (v = 1; v < (1ull << 40); v = v * 3 / 2 + 1) {
		uint64_t mid = iotap_hist_mid(rp_lag_bucket(v), RP_LAG_BITS);

		if ((mid > v ? mid - v : v - mid) * 16 > v)
			bad++;
	}
	ok(!bad, "lag buckets: every value within 6.25%% of its bucket's midpoint");
}

static void test_trace_markers(void)
{
	struct iotap_replay_opts o;
	struct iotap_replay_stats st;
	struct iotap_trace_reader *rd;
	struct iotap_trace_rec rec;
	char trace[512], out[512], *dir;
	int phases = 0, ops_in_one = 0, in_one = 0, src = 0;

	snprintf(trace, sizeof(trace), "%s/state.iotap", tmp_root);
	snprintf(out, sizeof(out), "%s/state-replay.iotap", tmp_root);
	dir = fresh_dir("markers", 0);
	memset(&o, 0, sizeof(o));
	o.out_trace = out;
	o.cmdline = "test_replay";
	ok(!replay(trace, dir, IOTAP_REPLAY_PREPARE | IOTAP_REPLAY_TRACE_FORCE,
		   IOTAP_REPLAY_ASAP, &st, &o), "replay with its own trace");
	if (!iotap_trace_reader_open(&rd, out, 0)) {
		src = iotap_trace_reader_header(rd)->source == IOTAP_SOURCE_REPLAY &&
		      !strcmp(iotap_trace_reader_header(rd)->workload, trace);
		while (iotap_trace_reader_next(rd, &rec) > 0) {
			if (rec.type == IOTAP_REC_PHASE) {
				phases++;
				in_one = rec.name && !strcmp(rec.name, "one") &&
					 rec.flags == IOTAP_PHASE_BEGIN;
			}
			if (rec.type == IOTAP_REC_OP && in_one)
				ops_in_one++;
		}
		iotap_trace_reader_close(rd);
	}
	ok(src, "its header: source replay, workload = the replayed trace");
	ok(phases == 4 && ops_in_one == 6, "4 phase markers, phase 'one' holds its 6 ops (%d)",
	   ops_in_one);
	rm_rf(dir);
}

/* Blocks of 4 KiB at file offset @off..+len: distinct ones, and zero bytes. */
static void blocks(uint64_t *seen, const unsigned char *p, uint64_t off, size_t len,
		   uint64_t *distinct, uint64_t *zeros, uint64_t *nblk)
{
	size_t i, first = (size_t)((4096 - off % 4096) % 4096);

	for (i = 0; i < len; i++)
		*zeros += !p[i];
	for (i = first; i + 4096 <= len; i += 4096) {
		uint64_t h = 0xcbf29ce484222325ull;
		size_t j;
		uint32_t k;

		for (j = 0; j < 4096; j++)
			h = (h ^ p[i + j]) * 0x100000001b3ull;
		h |= 1;
		for (k = (uint32_t)(h >> 48); seen[k] && seen[k] != h; k = (k + 1) & 0xffff)
			;
		if (!seen[k]) {
			seen[k] = h;
			(*distinct)++;
		}
		(*nblk)++;
	}
}

static void test_data(void)
{
	static const struct {
		enum iotap_replay_data mode;
		double ratio;
		const char *what;
	} kinds[] = {
		{ IOTAP_REPLAY_DATA_RANDOM, 1, "random" },
		{ IOTAP_REPLAY_DATA_ZERO, 1, "zero" },
		{ IOTAP_REPLAY_DATA_COMPRESSIBLE, 4, "compressible=4" },
		{ IOTAP_REPLAY_DATA_DEDUP, 5, "dedup=5" },
	};
	unsigned int k;

	for (k = 0; k < 4; k++) {
		struct rp_data d = { kinds[k].mode, kinds[k].ratio };
		struct rp_wbuf wb;
		uint64_t distinct = 0, zeros = 0, nblk = 0, off = 12345, i;
		uint64_t *seen = calloc(1 << 16, sizeof(*seen));
		double zfrac, dfrac;

		if (!seen || rp_wbuf_init(&wb, &d, 3, 65536)) {
			ok(0, "%s: buffer", kinds[k].what);
			continue;
		}
		/* 2000 writes of 64 KiB (some unaligned): 32000 blocks */
		for (i = 0; i < 2000; i++) {
			const unsigned char *p = rp_data_fill(&d, &wb, off, 65536);

			blocks(seen, p, off, 65536, &distinct, &zeros, &nblk);
			off += i % 3 ? 65536 : 65536 + 512;
		}
		rp_wbuf_release(&wb);
		free(seen);
		zfrac = (double)zeros / (2000.0 * 65536);
		dfrac = (double)distinct / (double)nblk;
		switch (kinds[k].mode) {
		case IOTAP_REPLAY_DATA_RANDOM:
			ok(dfrac == 1.0 && zfrac < 0.01, "random: every block unique (%.4f), "
			   "%.4f zero bytes", dfrac, zfrac);
			break;
		case IOTAP_REPLAY_DATA_ZERO:
			ok(zfrac == 1.0, "zero: all zeros");
			break;
		case IOTAP_REPLAY_DATA_COMPRESSIBLE:
			ok(dfrac == 1.0 && zfrac > 0.73 && zfrac < 0.77,
			   "compressible=4: blocks unique, %.3f zero bytes (3/4 wanted)", zfrac);
			break;
		default:
			ok(dfrac > 0.18 && dfrac < 0.22, "dedup=5: %.3f of the blocks distinct "
			   "(1/5 wanted)", dfrac);
		}
	}
}

/* --- the benchmark trace ----------------------------------------------------------------- */

static int synth_bench(const char *path, uint64_t nops, unsigned int threads)
{
	struct syn s;
	uint64_t rng = 88172645463325252ull, i;
	unsigned int t, f;

	if (syn_open(&s, path))
		return 1;
	for (t = 0; t < threads; t++) {
		for (f = 0; f < 16; f++) {
			uint64_t id = 100 + t * 16 + f, tt = s.t + (t * 16 + f) * 10 * US;
			char n[32];

			snprintf(n, sizeof(n), "t%u-f%u", t, f);
			op(&s, tt, 10 + t, IOTAP_OP_LOOKUP, id, ROOT, 0, 0, 0, 0, 0, S_IFREG | 0644,
			   0, NULL, US);
			name(&s, tt + 2 * US, 10 + t, id, ROOT, n, S_IFREG | 0644, 256 << 10, 0);
			op(&s, tt + 4 * US, 10 + t, IOTAP_OP_OPEN, id, 0, id, 0, 0, 0, O_RDWR, 0, 0,
			   NULL, US);
		}
	}
	/* threads interleaved, each request 1 us after its thread's previous one ended */
	for (i = 0; i < nops; i++) {
		uint64_t tt = s.t + 10000 * US + i * 2 * US / threads;

		t = (unsigned int)(i % threads);
		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		f = (unsigned int)(rng % 16);
		op(&s, tt, 10 + t, i & 1 ? IOTAP_OP_WRITE : IOTAP_OP_READ, 100 + t * 16 + f, 0,
		   100 + t * 16 + f, ((rng >> 8) % 64) * 4096, 4096, 4096, 0, 0, 0, NULL, US);
	}
	for (t = 0; t < threads; t++)
		for (f = 0; f < 16; f++)
			op(&s, s.t + 10000 * US + (nops + 10) * 2 * US / threads, 0,
			   IOTAP_OP_RELEASE, 100 + t * 16 + f, 0, 100 + t * 16 + f, 0, 0, 0, O_RDWR,
			   0, 0, NULL, US);
	return syn_close(&s) ? 1 : 0;
}

int main(int argc, char **argv)
{
	const char *tmp = getenv("TMPDIR");

	if (argc == 5 && !strcmp(argv[1], "--synth-bench"))
		return synth_bench(argv[2], strtoull(argv[3], NULL, 10),
				   (unsigned int)strtoul(argv[4], NULL, 10));
	snprintf(tmp_root, sizeof(tmp_root), "%s/iotap-test-replay.XXXXXX", tmp ? tmp : "/tmp");
	if (!mkdtemp(tmp_root)) {
		printf("Bail out! no temporary directory\n");
		return 1;
	}
	test_lag_buckets();
	test_data();
	test_short_read();
	test_state();
	test_trace_markers();
	test_truncated();
	test_deps();
	rm_rf(tmp_root);
	return done_testing();
}
