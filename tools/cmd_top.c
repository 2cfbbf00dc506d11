// SPDX-License-Identifier: MIT
/*
 * cmd_top.c - iotap top MOUNTPOINT|TRACE [-n COUNT] [--batch] [--interval S] [--speed X]
 *
 * Live: takes the daemon's counters (live_stats.h) every --interval and
 * prints the differences as rates: ops/s, MB/s read and written, fsyncs/s,
 * the p99 latency per op class (from the delta of the log-linear
 * histograms, trace/base's scheme), the busiest processes and files, lost
 * records, and the trace's size and growth. Over a finished TRACE: the same
 * view computed from its records, window by window of trace time.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cmds.h"
#include "iotap_analysis.h"
#include "iotap_base.h"
#include "iotap_fs.h"
#include "iotap_trace.h"
#include "live_stats.h"
#include "opt.h"
#include "traceio.h"

static void comm_of(uint64_t pid, char *out, size_t len, int live)
{
	char path[64];
	FILE *f;

	if (!live) {
		snprintf(out, len, "-");	/* a trace keeps pids, not command names */
		return;
	}
	snprintf(path, sizeof(path), "/proc/%llu/comm", (unsigned long long)pid);
	f = fopen(path, "re");
	if (!f || !fgets(out, (int)len, f))
		snprintf(out, len, "?");
	else
		out[strcspn(out, "\n")] = '\0';
	if (f)
		fclose(f);
}

/* What the options set: the table below binds each to its field. */
static struct top_args {
	uint64_t count;			/* 0: until ^C */
	int batch;
	uint64_t iv_ns;
	double speed;			/* below 0: not given */
} top_args = { .iv_ns = 1000000000ull, .speed = -1 };

static const struct opt_desc top_opts[] = {
	OPT_U64('n', "count", &top_args.count, "COUNT",
		"stop after COUNT refreshes (default: until ^C)", 1, UINT64_MAX,
		"-n wants a count from 1, not '%s'"),
	OPT_BOOL('b', "batch", &top_args.batch, "plain text, one block per refresh, no screen control\n"
		 "(the default when stdout is not a terminal)"),
	OPT_DURATION('i', "interval", &top_args.iv_ns, "SECONDS",
		     "time between refreshes (default 1); over a TRACE,\n"
		     "the window of trace time each refresh shows", 100000000ull, UINT64_MAX,
		     "--interval wants at least 0.1 (seconds), not '%s'"),
	OPT_DOUBLE('s', "speed", &top_args.speed, "X", "over a TRACE: play it X times as fast as it was\n"
		   "recorded (default 1: real time; 0: as fast as it reads)", 0, 1e6,
		   "--speed wants a factor from 0 (as fast as it reads) to 1000000, not '%s'"),
	OPT_END(),
};

static const struct opt_cmd top_cmd = {
	.name = "top",
	.usage = "MOUNTPOINT|TRACE [-n COUNT] [--batch] [--interval SECONDS] [--speed X]",
	.summary = "Watch the mount at MOUNTPOINT live: ops/s, MB/s read and written,\n"
		   "fsyncs/s, p99 latency per op class, the busiest processes and files,\n"
		   "lost records, the trace's size and growth, the daemon's CPU and RSS.\n"
		   "Rates are over the last interval. Root (or CAP_SYS_ADMIN) only.\n"
		   "Given a TRACE file instead, the same view computed from its records,\n"
		   "window by window of trace time, played at --speed (processes show\n"
		   "their pid only; the daemon's CPU and RSS come from the resource samples).",
	.opts = top_opts,
	.footer = "examples:\n  iotap top /srv/pgdata\n  iotap top /srv/pgdata -n 10 --batch > top.log\n"
		  "  iotap top /var/tmp/pg.iotap --speed 10\n"
		  "  iotap top /var/tmp/pg.iotap --speed 0 --batch > windows.txt",
};

/* p99 of the histogram difference @a - @b in µs, or -1 without samples. */
static double p99_us(const uint64_t *a, const uint64_t *b, unsigned int bits)
{
	unsigned int n = IOTAP_HIST_BUCKETS_OF(bits), i;
	uint64_t d[LIVE_LAT_MAX_BUCKETS], total = 0;

	if (bits > 6 || n > LIVE_LAT_MAX_BUCKETS)
		return -1;
	for (i = 0; i < n; i++) {
		d[i] = a[i] >= b[i] ? a[i] - b[i] : 0;
		total += d[i];
	}
	if (!total)
		return -1;
	return (double)iotap_hist_flat_quantile(d, n, bits, 0.99) / 1e3;
}

static uint64_t prev_of(const struct top_ent *v, unsigned int n, uint64_t key, uint64_t *bytes)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (v[i].key == key) {
			*bytes = v[i].bytes;
			return v[i].ops;
		}
	*bytes = 0;
	return 0;
}

struct rate {
	const struct top_ent *e;
	double ops, mbs;
};

static int rate_cmp(const void *a, const void *b)
{
	const struct rate *x = a, *y = b;

	if (x->mbs != y->mbs)
		return x->mbs > y->mbs ? -1 : 1;
	return x->ops > y->ops ? -1 : x->ops < y->ops;
}

/* Up to 5 busiest of @cur over the interval (entries missing before count from 0). */
static unsigned int busiest(const struct top_ent *cur, unsigned int ncur, const struct top_ent *old,
			    unsigned int nold, double secs, struct rate *out)
{
	unsigned int i, n = 0;

	for (i = 0; i < ncur; i++) {
		uint64_t pb, po = prev_of(old, nold, cur[i].key, &pb);
		double ops = cur[i].ops >= po ? (double)(cur[i].ops - po) : (double)cur[i].ops;
		double by = cur[i].bytes >= pb ? (double)(cur[i].bytes - pb) : (double)cur[i].bytes;

		if (ops <= 0)
			continue;
		out[n].e = &cur[i];
		out[n].ops = ops / secs;
		out[n].mbs = by / secs / 1e6;
		n++;
	}
	qsort(out, n, sizeof(*out), rate_cmp);
	return n < 5 ? n : 5;
}

static void top_frame(const char *mnt, const struct live_stats *c, const struct live_stats *p,
		      int batch)
{
	double secs = (c->mono_ns - p->mono_ns) / 1e9, v;
	uint64_t fs_now = c->ops[IOTAP_OP_FSYNC] + c->ops[IOTAP_OP_FSYNCDIR];
	uint64_t fs_prev = p->ops[IOTAP_OP_FSYNC] + p->ops[IOTAP_OP_FSYNCDIR];
	struct rate r[LIVE_MAX_TOP];
	char tbuf[32], size[32], rate[32];
	time_t now = (time_t)c->real_s;	/* when the counters were read */
	struct tm tm;
	unsigned int i, n;

	if (secs <= 0)
		secs = 1e-9;
	localtime_r(&now, &tm);
	strftime(tbuf, sizeof(tbuf), "%H:%M:%S", &tm);
	/* to the millisecond: the window's end, to set beside another tool's log */
	snprintf(tbuf + strlen(tbuf), sizeof(tbuf) - strlen(tbuf), ".%03d",
		 (int)((c->real_s - (double)now) * 1000) % 1000);
	if (!batch)
		printf("\033[H\033[2J");
	if (c->from_trace) {
		/* the trace's own clock: when this window was recorded */
		printf("iotap top %s  %s  %s, speed %gx%s  (over %.2f s, %.3f to %.3f s "
		       "into the trace)\n", mnt, tbuf, c->mode, c->speed,
		       c->speed ? "" : " (as fast as it reads)", secs, c->t_from, c->t_to);
	} else {
		printf("iotap top %s  %s  %s mode, %s%s  (over %.2f s", mnt, tbuf,
		       !strcmp(c->mode, "cache") ? "cache" : "direct_io",
		       c->tracing ? "tracing into " : "not tracing", c->tracing ? c->trace : "",
		       secs);
		if (batch)
			printf(" to %.3f", c->real_s);	/* the window's end, s since the epoch */
		printf(")\n");
	}
	printf("ops/s %10.1f   read %8.2f MB/s   write %8.2f MB/s   fsyncs/s %8.1f   "
	       "errors/s %.1f\n", (double)(live_stats_ops(c) - live_stats_ops(p)) / secs,
	       (double)(c->rd_bytes - p->rd_bytes) / secs / 1e6,
	       (double)(c->wr_bytes - p->wr_bytes) / secs / 1e6,
	       (double)(fs_now - fs_prev) / secs, (double)(c->errors - p->errors) / secs);
	printf("p99 us  ");
	for (i = 0; i < LIVE_LAT_CLASSES; i++) {
		v = p99_us(c->lat[i], p->lat[i], (unsigned int)c->lat_bits);
		if (v < 0)
			printf("  %s -", iotap_fs_lat_names[i]);
		else
			printf("  %s %.1f", iotap_fs_lat_names[i], v);
	}
	printf("\n");
	live_fmt_size(size, sizeof(size), (double)c->trace_bytes);
	live_fmt_size(rate, sizeof(rate), c->trace_bytes >= p->trace_bytes && c->trace_files ==
				      p->trace_files ? (double)(c->trace_bytes - p->trace_bytes) / secs : 0);
	printf("trace   %s, %s/s, %.0f records/s, lost %llu (%.0f/s)\n", size, rate,
	       (double)(c->records - p->records) / secs, (unsigned long long)c->lost,
	       (double)(c->lost - p->lost) / secs);
	printf("daemon  cpu %.1f%%, rss %.1f MiB",
	       100.0 * ((c->cpu_user_ns + c->cpu_sys_ns) - (p->cpu_user_ns + p->cpu_sys_ns)) /
		       1e9 / secs, c->rss_kb / 1024.0);
	if (c->from_trace)
		printf(" (from the trace's resource samples)\n");
	else
		printf(", %llu threads, %llu inodes\n", (unsigned long long)c->threads,
		       (unsigned long long)c->inodes);
	printf("\n  %-8s %-16s %10s %10s\n", "PID", "COMMAND", "ops/s", "MB/s");
	n = busiest(c->procs, c->nprocs, p->procs, p->nprocs, secs, r);
	for (i = 0; i < n; i++) {
		char comm[64];

		comm_of(r[i].e->key, comm, sizeof(comm), !c->from_trace);
		printf("  %-8llu %-16s %10.1f %10.2f\n", (unsigned long long)r[i].e->key, comm,
		       r[i].ops, r[i].mbs);
	}
	printf("\n  %-36s %10s %10s\n", "FILE", "ops/s", "MB/s");
	n = busiest(c->files, c->nfiles, p->files, p->nfiles, secs, r);
	for (i = 0; i < n; i++)
		printf("  %-36.36s %10.1f %10.2f\n", r[i].e->name, r[i].ops, r[i].mbs);
	if (batch)
		printf("\n");
	fflush(stdout);
}

/* --- top over a finished trace ------------------------------------------------ */

struct acc {
	uint64_t ops, bytes;
};

struct acc_ent {
	uint64_t key, ops, bytes;
};

static int acc_cmp(const void *a, const void *b)
{
	const struct acc_ent *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return x->ops > y->ops ? -1 : x->ops < y->ops;
}

/*
 * The interval's busiest of @m (key -> struct acc) into @v, at most
 * LIVE_MAX_TOP, files named from the trace's NAME records; @m is emptied.
 */
static unsigned int acc_take(struct iotap_map *m, struct top_ent *v, const struct iotap_report *names)
{
	uint64_t pos = 0, key, n = 0;
	struct acc_ent *all;
	struct acc *a;
	unsigned int i;

	all = malloc((iotap_map_count(m) + 1) * sizeof(*all));
	if (!all) {
		iotap_map_clear(m);
		return 0;
	}
	while ((a = iotap_map_next(m, &pos, &key))) {
		all[n].key = key;
		all[n].ops = a->ops;
		all[n++].bytes = a->bytes;
	}
	qsort(all, n, sizeof(*all), acc_cmp);
	for (i = 0; i < n && i < LIVE_MAX_TOP; i++) {
		v[i].key = all[i].key;
		v[i].ops = all[i].ops;
		v[i].bytes = all[i].bytes;
		if (names)
			iotap_report_file_name(names, all[i].key, v[i].name, sizeof(v[i].name));
	}
	free(all);
	iotap_map_clear(m);
	return i;
}

static void acc_add(struct iotap_map *m, uint64_t key, uint64_t bytes)
{
	struct acc *a;

	if (iotap_map_put(m, key, (void **)&a) < 0)
		return;		/* out of memory: the busiest lists miss it */
	a->ops++;
	a->bytes += bytes;
}

/*
 * top_trace - `iotap top TRACE`: the live view's block, computed from the
 * records of a finished trace, one frame per @iv_ns of trace time (the
 * windows start at the trace's start, records fall into the window of
 * their start time), shown at @speed times the recorded pace (0: as fast
 * as it reads). Counters accumulate as the daemon's do, so the frame is
 * the live one's top_frame() on two such snapshots; the busiest processes
 * and files are the window's own.
 */
struct tt {
	const char *path;
	const struct iotap_trace_header *h;
	struct iotap_trace_reader *r;
	struct live_stats *c, *p;
	struct iotap_report *names;
	struct iotap_map procs, files;
	uint64_t t0;
	double speed;
	int batch;
	struct timespec w0;		/* wall clock when the replay began */
};

/* Show the window from the previous frame to trace time @end. */
static void tt_frame(struct tt *t, uint64_t end)
{
	struct live_stats *c = t->c, *p = t->p;
	struct iotap_trace_read_stats rs;
	struct timespec now;

	iotap_trace_reader_stats(t->r, &rs);
	c->mono_ns = end;
	c->t_from = (p->mono_ns - t->t0) / 1e9;
	c->t_to = (end - t->t0) / 1e9;
	c->real_s = (t->h->real_base_ns + (end - t->t0)) / 1e9;
	c->trace_bytes = rs.header_bytes + rs.compressed_bytes;
	c->lost = rs.lost_records;
	c->nprocs = acc_take(&t->procs, c->procs, NULL);
	c->nfiles = acc_take(&t->files, c->files, t->names);
	p->nprocs = p->nfiles = 0;	/* the lists are the window's already */
	if (t->speed > 0) {
		/* the window's end on the replay's wall clock */
		double at = (end - t->t0) / 1e9 / t->speed, el;

		clock_gettime(CLOCK_MONOTONIC, &now);
		el = (now.tv_sec - t->w0.tv_sec) + (now.tv_nsec - t->w0.tv_nsec) / 1e9;
		if (at > el) {
			struct timespec ts;

			ts.tv_sec = (time_t)(at - el);
			ts.tv_nsec = (long)((at - el - (double)ts.tv_sec) * 1e9);
			nanosleep(&ts, NULL);
		}
	}
	top_frame(t->path, c, p, t->batch);
	*p = *c;
}

/* Count @rec into the snapshot and the window's lists. */
static void tt_account(struct tt *t, const struct iotap_trace_rec *rec)
{
	struct live_stats *c = t->c;

	c->records++;
	if (rec->type == IOTAP_REC_NAME) {
		struct iotap_name_ent *e;
		char *nm = strndup(rec->name ? rec->name : "", rec->name_len);

		if (nm && iotap_map_put(&t->names->names, rec->file, (void **)&e) >= 0) {
			free(e->name);
			e->parent = rec->file2;
			e->name = nm;
		} else {
			free(nm);
		}
	} else if (rec->type == IOTAP_REC_SAMPLE) {
		c->cpu_user_ns = rec->sample.proc_user_ns;
		c->cpu_sys_ns = rec->sample.proc_sys_ns;
		c->rss_kb = rec->sample.proc_rss_kb;
	} else if (rec->type == IOTAP_REC_OP) {
		unsigned int op = rec->op < IOTAP_OP_MAX ? rec->op : IOTAP_OP_UNKNOWN;
		uint64_t bytes = 0;

		c->ops[op]++;
		if (rec->result < 0)
			c->errors++;
		else if (op == IOTAP_OP_READ || op == IOTAP_OP_WRITE)
			bytes = (uint64_t)rec->result;
		if (op == IOTAP_OP_READ)
			c->rd_bytes += bytes;
		else if (op == IOTAP_OP_WRITE)
			c->wr_bytes += bytes;
		c->lat[iotap_fs_lat_class(op)][iotap_hist_index(rec->dur_ns, IOTAP_FS_LAT_BITS)]++;
		acc_add(&t->procs, rec->pid, bytes);
		if (rec->file)
			acc_add(&t->files, rec->file, bytes);
	}
}

/*
 * top_trace - `iotap top TRACE`: the live view's block computed from the
 * records of a finished trace, one frame per @iv_ns of trace time. The
 * windows start at the trace's start (TIME_S 0 of iotap dump) and a
 * record counts in the window of its start time, so a frame's figures are
 * what its window of the trace holds; the last window ends with the last
 * record. Shown at @speed times the recorded pace (0: as fast as it
 * reads). The counters accumulate as the daemon's do and the frame is
 * the live one's top_frame(); the busiest lists are the window's own.
 */
static int top_trace(const char *path, uint64_t iv_ns, double speed, uint64_t count, int batch)
{
	static struct live_stats s[2];
	static struct iotap_report names;	/* only .names: iotap_report_file_name() */
	struct iotap_trace_rec rec;
	uint64_t wend, k = 0, pending = 0, t_last = 0, pos = 0;
	struct iotap_name_ent *e;
	struct tt t;
	int ret, rc = 0;

	memset(&t, 0, sizeof(t));
	if (open_trace_reader(path, 0, &t.r))
		return 1;
	t.path = path;
	t.h = iotap_trace_reader_header(t.r);
	t.t0 = t.h->mono_base_ns;
	t.c = &s[0];
	t.p = &s[1];
	t.names = &names;
	t.speed = speed;
	t.batch = batch;
	iotap_map_init(&names.names, sizeof(struct iotap_name_ent));
	iotap_map_init(&t.procs, sizeof(struct acc));
	iotap_map_init(&t.files, sizeof(struct acc));
	memset(t.c, 0, sizeof(*t.c));
	/* what made it: a capture's mode, or the run or replay that wrote it */
	snprintf(t.c->mode, sizeof(t.c->mode), "%s",
		 t.h->source == IOTAP_SOURCE_WORKLOAD ? "iotap run" :
		 t.h->source == IOTAP_SOURCE_REPLAY ? "iotap replay" :
		 t.h->capture_mode == IOTAP_MODE_CACHE ? "cache mode" : "direct_io mode");
	snprintf(t.c->trace, sizeof(t.c->trace), "%s", path);
	t.c->tracing = 1;
	t.c->trace_files = 1;
	t.c->from_trace = 1;
	t.c->speed = speed;
	t.c->lat_bits = IOTAP_FS_LAT_BITS;
	t.c->mono_ns = t.t0;
	*t.p = *t.c;
	wend = t.t0 + iv_ns;
	clock_gettime(CLOCK_MONOTONIC, &t.w0);
	while ((ret = iotap_trace_reader_next(t.r, &rec)) > 0) {
		while (rec.time_ns >= wend) {
			tt_frame(&t, wend);
			pending = 0;
			wend += iv_ns;
			if (count && ++k >= count)
				goto out;
		}
		tt_account(&t, &rec);
		pending++;
		if (rec.time_ns + rec.dur_ns > t_last)
			t_last = rec.time_ns + rec.dur_ns;
	}
	if (ret < 0) {
		error_msg("cannot read trace '%s': %s", path, strerror(-ret));
		rc = 1;
	} else if (pending || !k) {
		/* the last window: to the end of the last record */
		tt_frame(&t, t_last > t.p->mono_ns ? (t_last < wend ? t_last : wend)
						   : t.p->mono_ns + 1);
	}
out:
	while ((e = iotap_map_next(&names.names, &pos, NULL)))
		free(e->name);
	iotap_map_release(&names.names);
	iotap_map_release(&t.procs);
	iotap_map_release(&t.files);
	iotap_trace_reader_close(t.r);
	return rc;
}

int cmd_top(int argc, char **argv)
{
	static struct live_stats s[2];
	const char *mnt;
	uint64_t count, k, iv_ns;
	int rc, batch, cur = 0, speed_set;
	double speed;
	struct timespec ts;
	struct stat st;
	char *buf;

	top_args.batch = !isatty(STDOUT_FILENO);
	rc = opt_parse(&top_cmd, argc, argv);
	if (rc >= 0)
		return rc;
	count = top_args.count;
	batch = top_args.batch;
	iv_ns = top_args.iv_ns;
	speed_set = top_args.speed >= 0;
	speed = speed_set ? top_args.speed : 1;
	if (argc - optind != 1)
		return opt_error(&top_cmd, argc - optind < 1 ? "MOUNTPOINT or TRACE is required"
							    : "too many arguments");
	mnt = argv[optind];
	if (!stat(mnt, &st) && S_ISREG(st.st_mode))
		return top_trace(mnt, iv_ns, speed, count, batch);
	if (speed_set)
		return opt_error(&top_cmd, "--speed plays a TRACE file; '%s' is not one", mnt);
	buf = malloc(IOTAP_FS_STATS_MAX);
	if (!buf) {
		error_msg("out of memory");
		return 1;
	}
	if (live_stats_fetch(mnt, &s[cur], buf)) {
		free(buf);
		return 1;
	}
	for (k = 0; !count || k < count; k++) {
		ts = iotap_ns_timespec(iv_ns);
		nanosleep(&ts, NULL);
		if (live_stats_fetch(mnt, &s[!cur], buf)) {
			free(buf);
			return 1;
		}
		cur = !cur;
		top_frame(mnt, &s[cur], &s[!cur], batch);
	}
	free(buf);
	return 0;
}
