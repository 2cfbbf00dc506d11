// SPDX-License-Identifier: MIT
/*
 * stats.c - live counters of the daemon, for `iotap status` and `iotap top`
 *
 * Every worker thread counts what it serves in its own struct fs_stats
 * (inside its struct fs_thread): ops per type, errors, bytes read and
 * written, a latency histogram per op class (the log-linear scheme of
 * trace/base, iotap_hist_index() at FS_LAT_BITS, as flat counters), and
 * two small direct-mapped tables of the busiest processes and files. Only
 * the owner writes them, with plain stores (CMM_STORE_SHARED); nothing is
 * shared and nothing is locked on the request path, traced or not.
 *
 * A stats request (getxattr IOTAP_FS_XATTR_STATS on the root, root or
 * CAP_SYS_ADMIN only) sums every live thread's counters with those of the
 * threads gone (folded in by the thread's exit destructor) under
 * stats_lock, which only registration, exit and this request take. The
 * reader may see a thread mid-update: counters are cumulative and read
 * one by one, so a figure can be one op behind, never torn (aligned 64-bit
 * loads). A table slot another process or file took over shows as a new
 * entry: top shows the busiest, not an exact ranking.
 *
 * The answer is text, one "key value" line each, figures cumulative since
 * the mount; `iotap top` takes differences between two answers.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "fs_i.h"
#include "iotap_base.h"

static pthread_mutex_t stats_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t text_lock = PTHREAD_MUTEX_INITIALIZER;	/* one answer at a time */
static struct fs_thread *threads;	/* live, registered (stats_lock) */
static struct fs_stats gone;		/* of the threads that exited (stats_lock) */
static unsigned int nthreads;

_Static_assert(FS_LAT_N == IOTAP_FS_LAT_CLASSES && FS_LAT_BITS == IOTAP_FS_LAT_BITS,
	       "iotap_fs.h's latency classes are these");

const char *const iotap_fs_lat_names[IOTAP_FS_LAT_CLASSES] = {
	[FS_LAT_READ] = "read", [FS_LAT_WRITE] = "write", [FS_LAT_FSYNC] = "fsync",
	[FS_LAT_OPEN] = "open", [FS_LAT_LOOKUP] = "lookup", [FS_LAT_GETATTR] = "getattr",
	[FS_LAT_META] = "meta",
};

unsigned int iotap_fs_lat_class(unsigned int op)
{
	switch (op) {
	case IOTAP_OP_READ: return FS_LAT_READ;
	case IOTAP_OP_WRITE: return FS_LAT_WRITE;
	case IOTAP_OP_FSYNC: case IOTAP_OP_FSYNCDIR: return FS_LAT_FSYNC;
	case IOTAP_OP_OPEN: case IOTAP_OP_CREATE: case IOTAP_OP_OPENDIR: return FS_LAT_OPEN;
	case IOTAP_OP_LOOKUP: return FS_LAT_LOOKUP;
	case IOTAP_OP_GETATTR: return FS_LAT_GETATTR;
	default: return FS_LAT_META;
	}
}

#define ADD(field, v)	CMM_STORE_SHARED(field, (field) + (v))

void fs_stats_op(struct fs_thread *t, const struct fs_capture *op, int64_t result)
{
	struct fs_stats *s = &t->stats;
	unsigned int o = op->rec.op < IOTAP_OP_MAX ? op->rec.op : IOTAP_OP_UNKNOWN;
	uint64_t bytes = 0;
	struct fs_top_ent *e;
	uint32_t pid = op->pid;

	ADD(s->ops[o], 1);
	if (result < 0)
		ADD(s->errors, 1);
	else if (o == IOTAP_OP_READ || o == IOTAP_OP_WRITE)
		bytes = (uint64_t)result;
	if (bytes) {
		if (o == IOTAP_OP_READ)
			ADD(s->rd_bytes, bytes);
		else
			ADD(s->wr_bytes, bytes);
	}
	if (op->begun) {
		unsigned int b = iotap_hist_index(op->rec.dur_ns, FS_LAT_BITS);

		ADD(s->lat[iotap_fs_lat_class(o)][b], 1);
	}
	e = &s->procs[iotap_hash_u64(pid) & (FS_TOP_SLOTS - 1)];
	if (e->key != pid) {
		CMM_STORE_SHARED(e->ops, 0);
		CMM_STORE_SHARED(e->bytes, 0);
		CMM_STORE_SHARED(e->key, pid);
	}
	ADD(e->ops, 1);
	ADD(e->bytes, bytes);
	if (op->rec.file) {
		uint64_t dev = op->dev ? op->dev : op->fs->root_dev;
		uint64_t key = iotap_hash_u64x2(dev, op->rec.file) | 1;

		e = &s->files[key & (FS_TOP_SLOTS - 1)];
		if (e->key != key) {
			CMM_STORE_SHARED(e->ops, 0);
			CMM_STORE_SHARED(e->bytes, 0);
			CMM_STORE_SHARED(e->dev, dev);
			CMM_STORE_SHARED(e->ino, op->rec.file);
			CMM_STORE_SHARED(e->key, key);
		}
		ADD(e->ops, 1);
		ADD(e->bytes, bytes);
	}
}

void fs_stats_register(struct fs_thread *t)
{
	pthread_mutex_lock(&stats_lock);
	t->stats_next = threads;
	threads = t;
	nthreads++;
	pthread_mutex_unlock(&stats_lock);
}

/* @dst += @src (the counters, not the tables). */
static void stats_sum(struct fs_stats *dst, const struct fs_stats *src)
{
	unsigned int i, c;

	for (i = 0; i < IOTAP_OP_MAX; i++)
		dst->ops[i] += CMM_LOAD_SHARED(src->ops[i]);
	dst->errors += CMM_LOAD_SHARED(src->errors);
	dst->rd_bytes += CMM_LOAD_SHARED(src->rd_bytes);
	dst->wr_bytes += CMM_LOAD_SHARED(src->wr_bytes);
	for (c = 0; c < FS_LAT_N; c++)
		for (i = 0; i < FS_LAT_BUCKETS; i++)
			dst->lat[c][i] += CMM_LOAD_SHARED(src->lat[c][i]);
}

void fs_stats_unregister(struct fs_thread *t)
{
	struct fs_thread **pp;

	pthread_mutex_lock(&stats_lock);
	for (pp = &threads; *pp; pp = &(*pp)->stats_next) {
		if (*pp == t) {
			*pp = t->stats_next;
			nthreads--;
			stats_sum(&gone, &t->stats);
			break;
		}
	}
	pthread_mutex_unlock(&stats_lock);
}

/* The answer under construction: cut (never overrun) at its size. */
struct out {
	char *buf;
	size_t size, len;
	bool full;
};

static void put(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (o->full)
		return;
	va_start(ap, fmt);
	n = vsnprintf(o->buf + o->len, o->size - o->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= o->size - o->len) {
		o->buf[o->len] = '\0';	/* drop the line that did not fit */
		o->full = true;
		return;
	}
	o->len += (size_t)n;
}

/* Merge @n table entries from every thread into @m (key -> struct fs_top_ent). */
static void top_merge(struct iotap_map *m, const struct fs_top_ent *tab)
{
	unsigned int i;

	for (i = 0; i < FS_TOP_SLOTS; i++) {
		struct fs_top_ent *d, e;

		e.key = CMM_LOAD_SHARED(tab[i].key);
		if (!e.key)
			continue;
		e.ops = CMM_LOAD_SHARED(tab[i].ops);
		e.bytes = CMM_LOAD_SHARED(tab[i].bytes);
		e.dev = CMM_LOAD_SHARED(tab[i].dev);
		e.ino = CMM_LOAD_SHARED(tab[i].ino);
		if (iotap_map_put(m, e.key, (void **)&d) < 0)
			continue;
		if (d->key != e.key) {
			*d = e;
		} else {
			d->ops += e.ops;
			d->bytes += e.bytes;
		}
	}
}

static int ent_busier(const void *a, const void *b)
{
	const struct fs_top_ent *x = *(const struct fs_top_ent *const *)a;
	const struct fs_top_ent *y = *(const struct fs_top_ent *const *)b;

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return x->ops > y->ops ? -1 : x->ops < y->ops;
}

/* The busiest @max entries of @m, most first; malloc'ed, count in *@n. */
static struct fs_top_ent **top_sorted(struct iotap_map *m, unsigned int max, unsigned int *n)
{
	struct fs_top_ent **v, *e;
	uint64_t pos = 0, key;
	size_t k = 0, cnt = iotap_map_count(m);

	v = cnt ? malloc(cnt * sizeof(*v)) : NULL;
	*n = 0;
	if (!v)
		return NULL;
	while ((e = iotap_map_next(m, &pos, &key)))
		v[k++] = e;
	qsort(v, k, sizeof(*v), ent_busier);
	*n = k < max ? (unsigned int)k : max;
	return v;
}

/* RSS of this process, KiB (0: unknown). */
static uint64_t self_rss_kb(void)
{
	unsigned long long size, res;
	FILE *f = fopen("/proc/self/statm", "re");
	int n;

	if (!f)
		return 0;
	n = fscanf(f, "%llu %llu", &size, &res);
	fclose(f);
	return n == 2 ? res * (uint64_t)(sysconf(_SC_PAGESIZE) / 1024) : 0;
}

ssize_t fs_stats_text(struct fs_ctx *fs, char *buf, size_t size)
{
	static struct fs_stats sum;	/* text_lock: too big for a worker's stack */
	struct out o = { buf, size, 0, false };
	struct iotap_trace_recorder_stats rs;
	struct iotap_map procs, files;
	struct fs_top_ent **v;
	struct fs_thread *t;
	uint64_t cpu_user, cpu_sys;
	char path[PATH_MAX];
	unsigned int i, c, n, nth;

	if (!size)
		return -ERANGE;
	buf[0] = '\0';
	pthread_mutex_lock(&text_lock);
	iotap_map_init(&procs, sizeof(struct fs_top_ent));
	iotap_map_init(&files, sizeof(struct fs_top_ent));
	pthread_mutex_lock(&stats_lock);
	memcpy(&sum, &gone, sizeof(sum));
	for (t = threads; t; t = t->stats_next) {
		stats_sum(&sum, &t->stats);
		top_merge(&procs, t->stats.procs);
		top_merge(&files, t->stats.files);
	}
	nth = nthreads;
	pthread_mutex_unlock(&stats_lock);

	put(&o, "iotap-stats 1\n");
	put(&o, "pid %d\n", (int)getpid());
	put(&o, "mode %s\n", fs->cache_mode ? "cache" : "direct");
	put(&o, "mountpoint %s\n", fs->mountpoint);
	put(&o, "lat_bits %u\n", FS_LAT_BITS);
	put(&o, "mono_ns %llu\n", (unsigned long long)iotap_trace_now_ns());
	put(&o, "uptime_ns %llu\n", (unsigned long long)(iotap_trace_now_ns() - fs->start_ns));
	fs_ctl_trace_path(fs, path, sizeof(path));
	put(&o, "tracing %d\n", *path ? 1 : 0);
	put(&o, "trace %s\n", path);
	if (fs->recorder) {
		iotap_trace_recorder_stats(fs->recorder, &rs);
		put(&o, "ring %d\nring_cap %llu\n", rs.ring,
		    (unsigned long long)fs->o.ring_bytes);
		put(&o, "records %llu\nlost %llu\ndiscarded %llu\ntrace_bytes %llu\n"
		    "trace_files %llu\ntrace_error %d\n", (unsigned long long)rs.written,
		    (unsigned long long)rs.lost, (unsigned long long)rs.discarded,
		    (unsigned long long)rs.file_bytes, (unsigned long long)rs.files, rs.error);
	} else {
		put(&o, "records 0\nlost 0\ndiscarded 0\ntrace_bytes 0\ntrace_files 0\n"
		    "trace_error 0\n");
	}
	if (iotap_cpu_ns(RUSAGE_SELF, &cpu_user, &cpu_sys) == 0)
		put(&o, "cpu_user_ns %llu\ncpu_sys_ns %llu\n", (unsigned long long)cpu_user,
		    (unsigned long long)cpu_sys);
	put(&o, "rss_kb %llu\nthreads %u\ninodes %llu\n", (unsigned long long)self_rss_kb(), nth,
	    (unsigned long long)uatomic_read(&fs->ninodes));
	put(&o, "rd_bytes %llu\nwr_bytes %llu\nerrors %llu\n", (unsigned long long)sum.rd_bytes,
	    (unsigned long long)sum.wr_bytes, (unsigned long long)sum.errors);
	for (i = 0; i < IOTAP_OP_MAX; i++)
		if (sum.ops[i])
			put(&o, "op %s %llu\n", iotap_trace_op_name(i), (unsigned long long)sum.ops[i]);

	/* threads to their processes */
	{
		struct iotap_map byproc;
		uint64_t pos = 0, key;
		struct fs_top_ent *e, *d;

		iotap_map_init(&byproc, sizeof(struct fs_top_ent));
		while ((e = iotap_map_next(&procs, &pos, &key))) {
			uint64_t pid = fs_caller_tgid((uint32_t)e->key);

			if (iotap_map_put(&byproc, pid, (void **)&d) < 0)
				continue;
			d->key = pid;
			d->ops += e->ops;
			d->bytes += e->bytes;
		}
		iotap_map_release(&procs);
		procs = byproc;
	}
	v = top_sorted(&procs, FS_TOP_SHOW, &n);
	for (i = 0; i < n; i++)
		put(&o, "proc %llu %llu %llu\n", (unsigned long long)v[i]->key,
		    (unsigned long long)v[i]->ops, (unsigned long long)v[i]->bytes);
	free(v);
	v = top_sorted(&files, FS_TOP_SHOW, &n);
	for (i = 0; i < n; i++) {
		char name[PATH_MAX];

		if (fs_inode_name(fs, v[i]->dev, v[i]->ino, name, sizeof(name)))
			snprintf(name, sizeof(name), "?");
		put(&o, "file %llu %llu %llu %s\n", (unsigned long long)v[i]->ino,
		    (unsigned long long)v[i]->ops, (unsigned long long)v[i]->bytes, name);
	}
	free(v);
	iotap_map_release(&procs);
	iotap_map_release(&files);
	/* histograms last: they are the biggest, and a cut one only loses buckets */
	for (c = 0; c < FS_LAT_N; c++) {
		const char *sep = " ";

		put(&o, "lat %s", iotap_fs_lat_names[c]);
		for (i = 0; i < FS_LAT_BUCKETS; i++) {
			if (sum.lat[c][i]) {
				put(&o, "%s%u:%llu", sep, i, (unsigned long long)sum.lat[c][i]);
				sep = ",";
			}
		}
		put(&o, "\n");
	}
	pthread_mutex_unlock(&text_lock);
	return (ssize_t)strlen(buf);
}
