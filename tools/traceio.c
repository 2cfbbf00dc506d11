// SPDX-License-Identifier: MIT
/*
 * traceio.c - opening traces from the CLI, with git-style error messages
 *
 * Library code returns -errno; the words for the trace reader's codes are
 * libiotap-analysis's (iotap_analysis_trace_open()), printed here for the
 * commands that read traces themselves (info, dump, replay). And the
 * progress line of the commands that read whole traces (report, compare,
 * dump, info).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "iotap_analysis.h"
#include "iotap_base.h"
#include "opt.h"
#include "traceio.h"

int open_trace_reader(const char *path, unsigned int flags, struct iotap_trace_reader **out)
{
	struct iotap_analysis_err err;
	int ret;

	ret = iotap_analysis_trace_open(path, flags, out, &err);
	if (ret)
		error_msg("%s", err.msg);
	return ret;
}

int trace_perm_set(const char *path, const struct iotap_trace_perm *perm)
{
	struct stat st;
	int fd, ret;

	/* the file this command just wrote: never a link, nor someone else's file */
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		goto out;
	}
	if (fstat(fd, &st))
		ret = -errno;
	else if (!S_ISREG(st.st_mode) || st.st_uid != geteuid())
		ret = -EPERM;
	else
		ret = iotap_trace_perm_apply(fd, perm);
	close(fd);
out:
	if (ret)
		error_msg("cannot set the permissions of trace '%s' (--trace-mode, --trace-group): %s",
			path, strerror(-ret));
	return ret;
}

int warn_damage(const char *path, const struct iotap_trace_read_stats *st)
{
	int any = 0;

	if (st->chunks_bad || st->bytes_skipped > st->tail_bytes) {
		warn_msg("trace '%s' is damaged: %" PRIu64 " chunk(s) skipped, %" PRIu64
			 " bytes unreadable from offset %" PRIu64, path, st->chunks_bad,
			 st->bytes_skipped - st->tail_bytes, st->first_bad_offset);
		any = 1;
	}
	if (!st->has_end && iotap_live_held(AT_FDCWD, path) > 0) {
		/* a writer holds it: no END yet, perhaps a chunk half written */
		warn_msg("trace '%s' is still being written (records up to %.1f s so far, the "
			 "last second or so not on disk yet)", path,
			 st->records ? (st->t_last_ns - st->t_first_ns) / 1e9 : 0.0);
		any = 1;
	} else if (st->tail_bytes) {
		warn_msg("trace '%s' ends in an incomplete chunk (%" PRIu64
			 " bytes skipped): the writer was killed or the disk filled", path,
			 st->tail_bytes);
		any = 1;
	} else if (!st->has_end) {
		warn_msg("trace '%s' has no end record: the writer did not close it", path);
		any = 1;
	}
	if (st->lost_records) {
		warn_msg("trace '%s' lost %" PRIu64 " records (the recorder fell behind or its "
			 "disk filled)", path, st->lost_records);
		any = 1;
	}
	return any;
}

void stop_signals_install(void (*fn)(int), int hup)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = fn;
	sa.sa_flags = 0;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (hup)
		sigaction(SIGHUP, &sa, NULL);
}

const char *fmt_bytes(uint64_t b, char *buf, size_t len)
{
	if (b < 1000)
		snprintf(buf, len, "%" PRIu64 " B", b);
	else if (b < 1000 * 1000)
		snprintf(buf, len, "%.1f kB", b / 1e3);
	else if (b < 1000ull * 1000 * 1000)
		snprintf(buf, len, "%.1f MB", b / 1e6);
	else if (b < 1000ull * 1000 * 1000 * 1000)
		snprintf(buf, len, "%.2f GB", b / 1e9);
	else
		snprintf(buf, len, "%.2f TB", b / 1e12);
	return buf;
}

/* --- progress of long reads ---------------------------------------------- */

/*
 * A billion-record trace takes a minute or more to report. The clock is
 * read once a chunk (thousands to tens of thousands of records).
 */
#define PROGRESS_DELAY_NS	1000000000ull	/* terminal: the first line after 1 s */
#define PROGRESS_TTY_NS		250000000ull	/* terminal: redrawn 4 times a second */
#define PROGRESS_LINE_NS	5000000000ull	/* --progress on a file or pipe: every 5 s */

enum { PROG_OFF, PROG_TTY, PROG_LINES };

/*
 * One trace being read. Several are read at once where a command builds
 * several reports side by side (iotap_reports_build(): fleet, compare),
 * their callbacks on different threads: the line then sums what is read of
 * every trace of the stretch (from one being opened while none was, to
 * none being read) as "N traces", under prog.lock.
 */
struct prog_file {
	const char *path;
	uint64_t t0;			/* opened */
	uint64_t done, total;		/* bytes */
};

static struct {
	const char *cmd;
	int mode;
	pthread_mutex_t lock;
	struct prog_file *f;		/* every trace opened, in order */
	unsigned int nf, cap;
	unsigned int first;		/* the stretch's first trace */
	unsigned int active;		/* traces being read */
	uint64_t next;			/* the next line's earliest time */
	int drawn;			/* a line is on the terminal */
} prog = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void clear_locked(void)
{
	if (prog.drawn) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
		prog.drawn = 0;
	}
}

void read_progress_clear(void)
{
	pthread_mutex_lock(&prog.lock);
	clear_locked();
	pthread_mutex_unlock(&prog.lock);
}

static void progress_cb(void *arg, uint64_t done, uint64_t total, int end)
{
	struct prog_file *pf;
	uint64_t now = iotap_clock_ns(), el, t0;
	char a[32], b[32], left[48] = "", what[64];
	const char *name;
	unsigned int i, n;
	double frac;

	pthread_mutex_lock(&prog.lock);
	pf = &prog.f[(uintptr_t)arg];
	/* a trace still being written: shown as its size at open */
	pf->done = done > total ? total : done;
	pf->total = total;
	if (end) {
		prog.active--;
		clear_locked();
		/* < 0: abandoned (a windowed report that reads in one pass after all) */
		if (prog.mode == PROG_LINES && end > 0)
			fprintf(stderr, "iotap %s: %s: read %s in %.1f s\n", prog.cmd, pf->path,
				fmt_bytes(done, a, sizeof(a)), (now - pf->t0) / 1e9);
		goto out;
	}
	if (now < prog.next)
		goto out;
	prog.next = now + (prog.mode == PROG_TTY ? PROGRESS_TTY_NS : PROGRESS_LINE_NS);
	n = prog.nf - prog.first;
	t0 = prog.f[prog.first].t0;
	done = total = 0;
	for (i = prog.first; i < prog.nf; i++) {
		done += prog.f[i].done;
		total += prog.f[i].total;
	}
	if (n == 1) {
		name = pf->path;
	} else {
		snprintf(what, sizeof(what), "%u traces", n);
		name = what;
	}
	el = now - t0;
	frac = total ? (double)done / (double)total : 1.0;
	if (frac >= 0.01 && el / 1e9 * (1.0 - frac) / frac >= 1.0)
		snprintf(left, sizeof(left), ", %.0f s left", el / 1e9 * (1.0 - frac) / frac);
	fmt_bytes(done, a, sizeof(a));
	fmt_bytes(total, b, sizeof(b));
	if (prog.mode == PROG_TTY) {
		fprintf(stderr, "\r\033[Kiotap %s: %s %3.0f%% (%s of %s)%s", prog.cmd, name,
			frac * 100, a, b, left);
		fflush(stderr);
		prog.drawn = 1;
	} else {
		fprintf(stderr, "iotap %s: %s: %.0f%% (%s of %s)%s\n", prog.cmd, name,
			frac * 100, a, b, left);
	}
out:
	pthread_mutex_unlock(&prog.lock);
}

static void progress_attach(void *arg, const char *path, struct iotap_trace_reader *r)
{
	uint64_t now = iotap_clock_ns();
	unsigned int i;

	(void)arg;
	pthread_mutex_lock(&prog.lock);
	if (prog.nf == prog.cap) {
		unsigned int cap = prog.cap ? prog.cap * 2 : 8;
		struct prog_file *f = realloc(prog.f, cap * sizeof(*f));

		if (!f) {
			pthread_mutex_unlock(&prog.lock);
			return;		/* no line for this trace */
		}
		prog.f = f;
		prog.cap = cap;
	}
	clear_locked();
	if (!prog.active) {
		/* a new stretch: the first line after the delay */
		prog.first = prog.nf;
		prog.next = now + (prog.mode == PROG_TTY ? PROGRESS_DELAY_NS : PROGRESS_LINE_NS);
	}
	i = prog.nf++;
	prog.f[i] = (struct prog_file){ .path = path, .t0 = now };
	prog.active++;
	pthread_mutex_unlock(&prog.lock);
	iotap_trace_reader_on_progress(r, progress_cb, (void *)(uintptr_t)i);
}

void read_progress_setup(const char *cmd, int want, int streams)
{
	int tty = isatty(STDERR_FILENO);

	prog.cmd = cmd;
	if (want < 0)
		prog.mode = PROG_OFF;
	else if (want > 0)
		prog.mode = tty ? PROG_TTY : PROG_LINES;
	else
		prog.mode = tty && !(streams && isatty(STDOUT_FILENO)) ? PROG_TTY : PROG_OFF;
	iotap_analysis_on_open(prog.mode != PROG_OFF ? progress_attach : NULL, NULL);
	if (prog.mode == PROG_TTY)
		atexit(read_progress_clear);	/* a read left before its end (dump --limit) */
}
