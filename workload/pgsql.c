// SPDX-License-Identifier: MIT
/*
 * pgsql.c - `iotap run pgsql`: a PostgreSQL server running pgbench, at the
 * system-call level
 *
 * Read pgsql_i.h first (files, locks). The run:
 *
 *   layout  what initdb leaves (unmarked): DIR/PG_VERSION, global/pg_control
 *           (8 KiB), pg_xact/0000 (pg_clog before 10), pg_logical/, base/DB/,
 *           the first WAL segment (pg_wal, pg_xlog before 10, or --wal-dir)
 *   init    pgbench -i: the four tables created, COPY ... FREEZE of branches,
 *           tellers and accounts through the 16 MiB bulk-write ring (each page
 *           extended with a zero page, logged, written when the ring wraps
 *           after flushing the WAL to it), VACUUM ANALYZE (the 30000-page
 *           sample read), the three primary keys (heap scanned, index pages
 *           written and logged as full pages, the file fsynced)
 *   warmup  the clients' first --warmup of --duration
 *   steady  the rest: the figures pgbench prints are taken here
 *
 * Roles are threads: --clients backends, a WAL writer, a background writer
 * and a checkpointer (wl_threads_run: the owner drives the phases from its
 * on_go callback and loads the database as pgbench -i's one backend).
 *
 * A client's transaction is pgbench's TPC-B: accounts_pkey root and leaf,
 * the account's heap page changed (the first update on a page is not HOT:
 * a full page, 116 bytes free, cannot take a 128-byte version, so it goes
 * to the page accounts is filling, extended by one zero page when full,
 * and the key gets an index entry; the dead version is pruned at the next
 * visit, which leaves room for HOT updates there), teller and branch pages
 * changed (HOT), a history row appended (a zero page added every 157
 * rows), the VM bit of a page cleared on its first change, the pg_xact
 * page; WAL records of those sizes (with a full-page image for each page
 * first changed since the last checkpoint's redo point), the commit
 * record, then XLogFlush (pgsql_wal.c). --rate schedules transactions as
 * a Poisson process as pgbench -R does; latency then counts from the
 * scheduled start.
 *
 * CPU: every role publishes its RUSAGE_THREAD deltas after each
 * transaction or round into one sum, which the PHASE markers carry (any
 * role may cut the marker timeline: the checkpointer's parts do).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "pgsql_i.h"

#define MIB			(1ull << 20)
#define ACC_PER_PAGE		61u	/* pgbench_accounts rows per 8 KiB page */
#define TELLERS_PER_PAGE	185u
#define BRANCHES_PER_PAGE	204u
#define HIST_PER_PAGE		157u
#define KEYS_PER_LEAF		367u	/* btree build: 90% full leaves */
#define KEYS_PER_INNER		286u
#define VM_HEAP_PER_PAGE	32672u	/* 2 bits per heap page */
#define BULK_RING		2048u	/* BAS_BULKWRITE: 16 MiB */

/*
 * The system catalogs pgbench -i's DDL reads and changes (relfilenodes as
 * initdb on 15 numbers them): pg_type, pg_attribute, pg_class, pg_depend,
 * pg_index, pg_statistic, pg_constraint and their indexes, with the pages
 * each has and how many of them the DDL dirties; the first checkpoint
 * writes and fsyncs them all, as the capture shows.
 */
static const struct {
	uint32_t node;
	const char *suffix;
	uint16_t pages, dirty;
} catalogs[PG_NCAT] = {
	{ 1247, "", 15, 2 }, { 1247, "_vm", 1, 1 }, { 1249, "", 57, 4 }, { 1249, "_fsm", 3, 1 },
	{ 1249, "_vm", 1, 1 }, { 1259, "", 14, 2 }, { 1259, "_vm", 1, 1 }, { 2579, "", 2, 1 },
	{ 2606, "", 2, 1 }, { 2606, "_vm", 1, 1 }, { 2608, "", 14, 2 }, { 2608, "_fsm", 3, 1 },
	{ 2608, "_vm", 1, 1 }, { 2610, "", 4, 1 }, { 2610, "_fsm", 3, 1 }, { 2610, "_vm", 1, 1 },
	{ 2619, "", 20, 2 }, { 2619, "_fsm", 3, 1 }, { 2619, "_vm", 1, 1 }, { 2658, "", 15, 2 },
	{ 2659, "", 10, 2 }, { 2662, "", 5, 1 }, { 2663, "", 6, 1 }, { 2664, "", 2, 1 },
	{ 2665, "", 2, 1 }, { 2666, "", 2, 1 }, { 2667, "", 2, 1 }, { 2673, "", 12, 2 },
	{ 2674, "", 12, 2 }, { 2678, "", 2, 1 }, { 2679, "", 2, 1 }, { 2696, "", 5, 2 },
	{ 2703, "", 2, 1 }, { 2704, "", 4, 1 }, { 3455, "", 5, 1 },
};

/* CREATE TABLE's files, which TRUNCATE replaces (unlinked after the next checkpoint), and toast */
static const uint32_t old_nodes[PG_NOLD] = { 16384, 16387, 16390, 16393, 16385, 16388, 16391 };
#define PG_OLD_UNLINKED	4

/* WAL record sizes, bytes (pg_waldump of pgbench on 15) */
#define REC_HOT_UPDATE		70u
#define REC_UPDATE		160u
#define REC_BT_INSERT		64u
#define REC_HEAP_INSERT		80u
#define REC_COMMIT		34u
#define REC_NEWPAGE_HDR		50u

/* --- histograms ------------------------------------------------------------ */

static unsigned int hist_idx(uint64_t v)
{
	unsigned int msb;

	if (v < 16)
		return (unsigned int)v;
	msb = 63u - (unsigned int)__builtin_clzll(v);
	return (msb - 3) * 16 + (unsigned int)((v >> (msb - 4)) & 15);
}

static double hist_mid(unsigned int i)
{
	unsigned int msb, sub;
	double lo;

	if (i < 16)
		return i;
	msb = i / 16 + 3;
	sub = i % 16;
	lo = ldexp(16.0 + sub, (int)msb - 4);
	return lo + ldexp(1.0, (int)msb - 4) / 2;
}

void pg_hist_add(struct pg_hist *h, uint64_t v)
{
	h->b[hist_idx(v)]++;
	h->n++;
	h->sum += (double)v;
	h->sumsq += (double)v * (double)v;
	if (v > h->max)
		h->max = v;
}

void pg_hist_merge(struct pg_hist *to, const struct pg_hist *from)
{
	unsigned int i;

	for (i = 0; i < PG_HIST_N; i++)
		to->b[i] += from->b[i];
	to->n += from->n;
	to->sum += from->sum;
	to->sumsq += from->sumsq;
	if (from->max > to->max)
		to->max = from->max;
}

double pg_hist_pct(const struct pg_hist *h, double q)
{
	uint64_t want, seen = 0;
	unsigned int i;

	if (!h->n)
		return 0;
	if (q >= 1)
		return (double)h->max;
	want = (uint64_t)ceil(q * (double)h->n);
	if (!want)
		want = 1;
	for (i = 0; i < PG_HIST_N; i++) {
		seen += h->b[i];
		if (seen >= want) {
			double m = hist_mid(i);

			return m > (double)h->max ? (double)h->max : m;
		}
	}
	return (double)h->max;
}

/* --- options ------------------------------------------------------------------ */

void iotap_workload_pgsql_opts_init(struct iotap_workload_pgsql_opts *o, enum iotap_pgsql_era era)
{
	memset(o, 0, sizeof(*o));
	o->era = era;
	o->scale = 1;
	o->clients = 1;
	o->duration_ns = 60000000000ull;
	o->warmup_ns = o->duration_ns / 10;
	o->shared_buffers = 128 * MIB;
	o->checkpoint_timeout_ns = 300000000000ull;
	o->max_wal_size = 1024 * MIB;
	o->min_wal_size = 80 * MIB;
	o->completion_target = era >= IOTAP_PGSQL_15 ? 0.9 : 0.5;
	o->wal_sync_method = IOTAP_PGSQL_FDATASYNC;
	o->full_page_writes = 1;
	o->sorted_checkpoints = era >= IOTAP_PGSQL_96;
	if (era >= IOTAP_PGSQL_96) {
		o->checkpoint_flush_after = 256u << 10;
		o->bgwriter_flush_after = 512u << 10;
		o->wal_writer_flush_after = 1 * MIB;
	}
	o->bgwriter_delay_ns = 200000000ull;
	o->bgwriter_lru_maxpages = 100;
	o->bgwriter_lru_multiplier = 2.0;
	o->wal_writer_delay_ns = 200000000ull;
	o->io_combine_limit = era >= IOTAP_PGSQL_17 ? 16 : 1;
	o->progress_ns = 5000000000ull;
	if (era == IOTAP_PGSQL_84) {
		o->shared_buffers = 32 * MIB;
		o->wal_buffers = 64u << 10;
		o->checkpoint_segments = 3;
	}
}

const char *iotap_workload_pgsql_era_name(enum iotap_pgsql_era era)
{
	static const char *const n[] = { "8.4", "9.6", "15", "17" };

	return (unsigned int)era < 4 ? n[era] : "?";
}

const char *iotap_workload_pgsql_sync_name(enum iotap_pgsql_sync m)
{
	static const char *const n[] = { "fdatasync", "fsync", "open_datasync", "open_sync" };

	return (unsigned int)m < 4 ? n[m] : "?";
}

static uint32_t div_up(uint64_t a, uint64_t b)
{
	return (uint32_t)((a + b - 1) / b);
}

/* Pages of a btree over @keys: meta, leaves, inner levels. */
static uint32_t btree_pages(uint64_t keys, uint32_t *leaves)
{
	uint32_t n = div_up(keys ? keys : 1, KEYS_PER_LEAF), total = n;

	*leaves = n;
	while (n > 1) {
		n = div_up(n, KEYS_PER_INNER);
		total += n;
	}
	return total + 1;
}

void iotap_workload_pgsql_need(const struct iotap_workload_pgsql_opts *o, uint64_t *data_bytes,
			       uint64_t *wal_bytes)
{
	uint64_t acc = (uint64_t)o->scale * 100000, l, pages;
	double tps = o->rate > 0 ? o->rate : 5000;
	uint32_t lv;

	/* accounts twice over (every row's first update moves it), keys, history */
	pages = 2ull * div_up(acc, ACC_PER_PAGE) + btree_pages(acc, &lv) +
		btree_pages(o->scale * 10ull, &lv) + btree_pages(o->scale, &lv) +
		div_up(o->scale * 10ull, TELLERS_PER_PAGE) + div_up(o->scale, BRANCHES_PER_PAGE) + 8;
	l = (uint64_t)(tps * (double)o->duration_ns / 1e9) / HIST_PER_PAGE + 1;
	*data_bytes = (pages + l) * PG_BLCKSZ + 64 * 1024;
	if (o->checkpoint_segments)
		*wal_bytes = (2ull * o->checkpoint_segments + 3) * PG_WAL_SEG;
	else
		*wal_bytes = o->max_wal_size + 3 * PG_WAL_SEG;
}

/* --- roles' shared helpers ------------------------------------------------------ */

void pg_cpu_tick(struct pg *pg, struct pg_cpu *t)
{
	struct rusage ru;
	uint64_t u, s;

	getrusage(RUSAGE_THREAD, &ru);
	u = (uint64_t)ru.ru_utime.tv_sec * 1000000000ull + (uint64_t)ru.ru_utime.tv_usec * 1000;
	s = (uint64_t)ru.ru_stime.tv_sec * 1000000000ull + (uint64_t)ru.ru_stime.tv_usec * 1000;
	if (u > t->u)
		atomic_fetch_add(&pg->cpu_user, u - t->u);
	if (s > t->s)
		atomic_fetch_add(&pg->cpu_sys, s - t->s);
	t->u = u;
	t->s = s;
}

static void cpu_start(struct pg_cpu *t)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	t->u = (uint64_t)ru.ru_utime.tv_sec * 1000000000ull + (uint64_t)ru.ru_utime.tv_usec * 1000;
	t->s = (uint64_t)ru.ru_stime.tv_sec * 1000000000ull + (uint64_t)ru.ru_stime.tv_usec * 1000;
}

void pg_set_error(struct pg *pg, int err)
{
	int zero = 0;

	if (err && err != -EINTR && atomic_compare_exchange_strong(&pg->err, &zero, err)) {
		pthread_mutex_lock(&pg->state_lock);
		atomic_store(&pg->state, PG_ST_STOP);
		pthread_cond_broadcast(&pg->state_cond);
		pthread_mutex_unlock(&pg->state_lock);
	}
}

int pg_stopping(struct pg *pg)
{
	return atomic_load(&pg->state) == PG_ST_STOP || wl_stopped();
}

void pg_nap(struct pg *pg, uint64_t ns)
{
	struct timespec ts;
	uint64_t dl = wl_now() + ns;

	ts.tv_sec = (time_t)(dl / 1000000000ull);
	ts.tv_nsec = (long)(dl % 1000000000ull);
	pthread_mutex_lock(&pg->state_lock);
	if (!pg_stopping(pg))
		pthread_cond_timedwait(&pg->state_cond, &pg->state_lock, &ts);
	pthread_mutex_unlock(&pg->state_lock);
}

static void set_state(struct pg *pg, enum pg_state st)
{
	pthread_mutex_lock(&pg->state_lock);
	atomic_store(&pg->state, st);
	pthread_cond_broadcast(&pg->state_cond);
	pthread_mutex_unlock(&pg->state_lock);
}

void pg_phase_update(struct pg *pg, struct pg_cpu *t)
{
	const char *name;
	uint64_t ts;

	pthread_mutex_lock(&pg->phase_lock);
	name = pg->ckpt_phase[0] ? pg->ckpt_phase : pg->base_phase;
	if (pg->phase_open && name && !strcmp(pg->open_phase, name)) {
		pthread_mutex_unlock(&pg->phase_lock);
		return;
	}
	pg_cpu_tick(pg, t);
	if (pg->phase_open)
		wl_mark(pg->c, pg->open_phase, IOTAP_PHASE_END, atomic_load(&pg->cpu_user),
			atomic_load(&pg->cpu_sys), &ts);
	pg->phase_open = 0;
	if (name) {
		snprintf(pg->open_phase, sizeof(pg->open_phase), "%s", name);
		wl_mark(pg->c, pg->open_phase, IOTAP_PHASE_BEGIN, atomic_load(&pg->cpu_user),
			atomic_load(&pg->cpu_sys), &ts);
		pg->phase_open = 1;
	}
	pthread_mutex_unlock(&pg->phase_lock);
}

/* --- layout ----------------------------------------------------------------------- */

static const char *wal_dir_name(const struct pg *pg)
{
	return pg->o->era >= IOTAP_PGSQL_15 ? "pg_wal" : "pg_xlog";
}

static const char *xact_dir_name(const struct pg *pg)
{
	return pg->o->era >= IOTAP_PGSQL_15 ? "pg_xact" : "pg_clog";
}

static uint32_t db_oid(const struct pg *pg)
{
	return pg->o->era == IOTAP_PGSQL_84 ? 11564u : pg->o->era == IOTAP_PGSQL_96 ? 12407u :
	       PG_DB_OID;
}

static int open_dir(struct pg *pg, int dirfd, const char *name, int *fd, uint64_t *ino)
{
	struct stat st;

	*fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (*fd < 0)
		return wl_fail(pg->c, -errno, "open directory '%s'", name);
	if (fstat(*fd, &st))
		return wl_fail(pg->c, -errno, "stat '%s'", name);
	*ino = st.st_ino;
	return 0;
}

static int mk(struct pg *pg, int dirfd, uint64_t parent, const char *name, int *fd,
	      uint64_t *ino)
{
	uint64_t i;
	int ret = wl_mkdir(pg->c, dirfd, parent, name, 0700, &i);

	if (ret)
		return ret;
	return open_dir(pg, dirfd, name, fd, ino);
}

static int small_file(struct pg *pg, int dirfd, uint64_t parent, const char *name,
		      const void *buf, size_t len, int do_fsync)
{
	struct wl_file f;
	ssize_t n;
	int ret;

	ret = wl_open(pg->c, &f, dirfd, parent, name, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (ret)
		return ret;
	n = wl_write(pg->c, &f, buf, len);
	ret = n < 0 ? (int)n : (size_t)n != len ? wl_fail(pg->c, -ENOSPC, "write '%s'", name) : 0;
	if (!ret && do_fsync)
		ret = wl_fsync(pg->c, &f, 0);
	if (wl_close(pg->c, &f) && !ret)
		ret = -EIO;
	return ret;
}

static void rel_def(struct pg *pg, enum pg_relid id, const char *label, uint32_t node,
		    const char *suffix, uint32_t fill)
{
	struct pg_rel *r = &pg->rel[id];

	r->label = label;
	r->relfilenode = node;
	r->suffix = suffix;
	r->fill = fill;
	r->sortkey = (uint64_t)node << 2 | (!strcmp(suffix, "_fsm") ? 1 : !strcmp(suffix, "_vm") ? 2 : 0);
	r->dirfd = pg->basefd;
	r->dir_ino = pg->db_ino;
}

/* What initdb leaves: directories, PG_VERSION, pg_control, pg_xact/0000, one WAL segment. */
static int layout(struct pg *pg)
{
	struct iotap_workload_ctx *c = pg->c;
	char v[8], dbname[16];
	int ret, fd, added;
	unsigned int i;
	uint64_t ino;

	pg->datafd = c->dirfd;
	pg->data_ino = c->dir_ino;
	snprintf(v, sizeof(v), "%s\n", iotap_workload_pgsql_era_name(pg->o->era));
	ret = small_file(pg, pg->datafd, pg->data_ino, "PG_VERSION", v, strlen(v), 0);
	if (!ret)
		ret = mk(pg, pg->datafd, pg->data_ino, "global", &pg->globalfd, &pg->global_ino);
	if (!ret)
		ret = small_file(pg, pg->globalfd, pg->global_ino, "pg_control", pg->page,
				 PG_BLCKSZ, 1);
	if (!ret)
		ret = mk(pg, pg->datafd, pg->data_ino, xact_dir_name(pg), &pg->xactfd,
			 &pg->xact_ino);
	if (!ret && pg->o->era >= IOTAP_PGSQL_96)
		ret = mk(pg, pg->datafd, pg->data_ino, "pg_logical", &pg->logicalfd,
			 &pg->logical_ino);
	if (!ret)
		ret = mk(pg, pg->datafd, pg->data_ino, "base", &pg->basefd, &pg->base_ino);
	if (ret)
		return ret;
	snprintf(dbname, sizeof(dbname), "%u", db_oid(pg));
	ret = mk(pg, pg->basefd, pg->base_ino, dbname, &fd, &ino);
	if (ret)
		return ret;
	close(pg->basefd);
	pg->basefd = fd;
	pg->db_ino = ino;
	if (pg->o->wal_dir) {
		ret = open_dir(pg, AT_FDCWD, pg->o->wal_dir, &pg->wal.dirfd, &pg->wal.dir_ino);
	} else {
		ret = mk(pg, pg->datafd, pg->data_ino, wal_dir_name(pg), &pg->wal.dirfd,
			 &pg->wal.dir_ino);
	}
	/* what the first backends leave: relation maps and relcache init files */
	if (!ret)
		ret = small_file(pg, pg->globalfd, pg->global_ino, "pg_filenode.map",
				 pg->page, 512, 0);
	if (!ret)
		ret = small_file(pg, pg->globalfd, pg->global_ino, "pg_internal.init",
				 pg->wal.zero, 7 * 4096 + 1500, 0);
	if (!ret)
		ret = small_file(pg, pg->basefd, pg->db_ino, "pg_filenode.map", pg->page, 512, 0);
	if (!ret)
		ret = small_file(pg, pg->basefd, pg->db_ino, "pg_internal.init", pg->wal.zero,
				 40 * 4096 + 2000, 0);
	if (ret)
		return ret;
	/* pgbench's relations: heaps, keys, visibility maps (relfilenodes as 15 numbers them) */
	rel_def(pg, PG_HISTORY, "pgbench_history", 16397, "", 4000);
	rel_def(pg, PG_TELLERS, "pgbench_tellers", 16400, "", 2000);
	rel_def(pg, PG_ACCOUNTS, "pgbench_accounts", 16403, "", 8076);
	rel_def(pg, PG_BRANCHES, "pgbench_branches", 16406, "", 1000);
	rel_def(pg, PG_BRANCHES_PKEY, "pgbench_branches_pkey", 16410, "", 7400);
	rel_def(pg, PG_TELLERS_PKEY, "pgbench_tellers_pkey", 16412, "", 7400);
	rel_def(pg, PG_ACCOUNTS_PKEY, "pgbench_accounts_pkey", 16414, "", 7400);
	rel_def(pg, PG_ACCOUNTS_VM, "pgbench_accounts", 16403, "_vm", 0);
	rel_def(pg, PG_TELLERS_VM, "pgbench_tellers", 16400, "_vm", 0);
	rel_def(pg, PG_BRANCHES_VM, "pgbench_branches", 16406, "_vm", 0);
	rel_def(pg, PG_ACCOUNTS_FSM, "pgbench_accounts", 16403, "_fsm", 0);
	rel_def(pg, PG_TELLERS_FSM, "pgbench_tellers", 16400, "_fsm", 0);
	rel_def(pg, PG_BRANCHES_FSM, "pgbench_branches", 16406, "_fsm", 0);
	rel_def(pg, PG_HISTORY_FSM, "pgbench_history", 16397, "_fsm", 0);
	rel_def(pg, PG_CLOG, "pg_xact", 0, "", 0);
	pg->rel[PG_CLOG].dirfd = pg->xactfd;
	pg->rel[PG_CLOG].dir_ino = pg->xact_ino;
	/* the catalogs as initdb leaves them (synced) */
	for (i = 0; i < PG_NCAT && !ret; i++) {
		struct pg_rel *rel = &pg->rel[PG_NREL + i];

		rel_def(pg, PG_NREL + i, "catalog", catalogs[i].node, catalogs[i].suffix, 4000);
		ret = pg_rel_extend(pg, PG_NREL + i, catalogs[i].pages, 1);
		if (!ret)
			atomic_store(&rel->seg[0].need_sync, 0);
	}
	for (i = 0; i < PG_NOLD; i++)
		rel_def(pg, PG_NREL + PG_NCAT + i, "pgbench", old_nodes[i], "", 0);
	if (ret)
		return ret;
	/* pg_xact/0000 with its first page, as initdb leaves it */
	ret = pg_rel_extend(pg, PG_CLOG, 1, 0);
	if (!ret)
		ret = pg_write_page(pg, PG_R_BACKEND, PG_CLOG, 0, NULL);
	if (ret)
		return ret;
	atomic_store(&pg->rel[PG_CLOG].seg[0].need_sync, 0);
	/* initdb's WAL segment: created as XLogFileInit creates any */
	pg->wal.seg_hi = 0;
	pthread_mutex_lock(&pg->wal.seg_lock);
	ret = pg_wal_seg_create(pg, 1, &added);
	pthread_mutex_unlock(&pg->wal.seg_lock);
	return ret;
}

static void rm_name(struct pg *pg, int dirfd, uint64_t parent, const char *name)
{
	struct stat st;

	if (!fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW))
		wl_unlink(pg->c, dirfd, parent, name, st.st_ino);
}

static void rm_dir(struct pg *pg, int dirfd, uint64_t parent, const char *name, int *fd)
{
	struct stat st;

	if (*fd >= 0) {
		close(*fd);
		*fd = -1;
	}
	if (!fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW))
		wl_rmdir(pg->c, dirfd, parent, name, st.st_ino);
}

/* Remove what the run made (also after a failure or Ctrl-C). */
static void teardown(struct pg *pg)
{
	char name[48];
	unsigned int r, s;
	uint64_t g;

	if (pg->wal.f.fd >= 0)
		wl_close(pg->c, &pg->wal.f);
	for (r = 0; r < PG_NALL; r++) {
		struct pg_rel *rel = &pg->rel[r];

		for (s = 0; s < rel->nseg; s++) {
			if (rel->seg[s].f.fd >= 0)
				wl_close(pg->c, &rel->seg[s].f);
			wl_unlink(pg->c, rel->dirfd, rel->dir_ino, rel->seg[s].name, 0);
		}
		free(rel->seg);
		free(rel->epoch);
		free(rel->allvis);
		rel->seg = NULL;
		rel->nseg = 0;
	}
	if (pg->wal.dirfd >= 0) {
		for (g = pg->wal.seg_lo; g <= pg->wal.seg_hi; g++) {
			pg_wal_seg_name(g, name, sizeof(name));
			rm_name(pg, pg->wal.dirfd, pg->wal.dir_ino, name);
		}
		snprintf(name, sizeof(name), "xlogtemp.%u", (unsigned int)getpid());
		rm_name(pg, pg->wal.dirfd, pg->wal.dir_ino, name);
	}
	if (pg->logicalfd >= 0) {
		rm_name(pg, pg->logicalfd, pg->logical_ino, "replorigin_checkpoint");
		rm_name(pg, pg->logicalfd, pg->logical_ino, "replorigin_checkpoint.tmp");
	}
	if (pg->globalfd >= 0)
		rm_name(pg, pg->globalfd, pg->global_ino, "pg_control");
	rm_name(pg, pg->datafd, pg->data_ino, "PG_VERSION");
	if (pg->globalfd >= 0) {
		rm_name(pg, pg->globalfd, pg->global_ino, "pg_filenode.map");
		rm_name(pg, pg->globalfd, pg->global_ino, "pg_internal.init");
	}
	if (pg->basefd >= 0 && pg->db_ino) {
		rm_name(pg, pg->basefd, pg->db_ino, "pg_filenode.map");
		rm_name(pg, pg->basefd, pg->db_ino, "pg_internal.init");
	}
	if (pg->basefd >= 0 && pg->db_ino) {
		snprintf(name, sizeof(name), "%u", db_oid(pg));
		close(pg->basefd);
		pg->basefd = openat(pg->datafd, "base", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (pg->basefd >= 0)
			rm_dir(pg, pg->basefd, pg->base_ino, name, &(int){ -1 });
	}
	if (pg->tmpfd >= 0) {
		int bfd = openat(pg->datafd, "base", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		if (bfd >= 0) {
			rm_dir(pg, bfd, pg->base_ino, "pgsql_tmp", &pg->tmpfd);
			close(bfd);
		}
	}
	rm_dir(pg, pg->datafd, pg->data_ino, "base", &pg->basefd);
	rm_dir(pg, pg->datafd, pg->data_ino, "global", &pg->globalfd);
	rm_dir(pg, pg->datafd, pg->data_ino, xact_dir_name(pg), &pg->xactfd);
	rm_dir(pg, pg->datafd, pg->data_ino, "pg_logical", &pg->logicalfd);
	if (!pg->o->wal_dir)
		rm_dir(pg, pg->datafd, pg->data_ino, wal_dir_name(pg), &pg->wal.dirfd);
	else if (pg->wal.dirfd >= 0)
		close(pg->wal.dirfd);
	pg->wal.dirfd = -1;
}

/* --- pgbench -i ---------------------------------------------------------------------- */

/*
 * Reads of blocks @first..@first+@n of a relation, combined up to
 * io_combine_limit (17). @ring: through a strategy ring (VACUUM/ANALYZE's
 * 256 KiB, a seq scan of a table over a quarter of shared_buffers), so
 * what was not in shared_buffers is read but does not stay there.
 */
static int scan(struct pg *pg, enum pg_relid id, uint32_t first, uint32_t n, int ring)
{
	struct pg_rel *rel = &pg->rel[id];
	uint32_t lim = pg->o->io_combine_limit ? pg->o->io_combine_limit : 1, b = first;
	char *buf = malloc((size_t)lim * PG_BLCKSZ);
	int ret = 0;

	if (!buf)
		return -ENOMEM;
	while (b < first + n && b < rel->nblocks && !ret) {
		uint32_t k = 0, i;

		if (wl_stopped()) {
			ret = -EINTR;
			break;
		}
		/* the run of blocks not in shared_buffers, up to the limit, in one segment */
		while (k < lim && b + k < first + n && b + k < rel->nblocks &&
		       (!k || (b + k) % PG_RELSEG_BLOCKS) && !pg_resident(pg, id, b + k))
			k++;
		if (k && (ring || k > 1)) {
			uint64_t off = (uint64_t)(b % PG_RELSEG_BLOCKS) * PG_BLCKSZ;
			struct pg_seg *s = &rel->seg[b / PG_RELSEG_BLOCKS];
			ssize_t got;

			for (i = 0; i < k && !ret && !ring; i++)
				ret = pg_access(pg, id, b + i, 0, 1, NULL);
			got = ret ? 0 : wl_pread(pg->c, &s->f, buf, (size_t)k * PG_BLCKSZ, off);
			if (got < 0)
				ret = (int)got;
			atomic_fetch_add(&pg->cnt.data_reads, k);
			b += k;
			continue;
		}
		ret = pg_access(pg, id, b, 0, 0, NULL);
		b++;
	}
	free(buf);
	return ret;
}

/* COPY ... FREEZE into @id: @rows rows, @per_page a page, @tuple WAL bytes each. */
static int copy_table(struct pg *pg, enum pg_relid id, enum pg_relid vm, uint64_t rows,
		      uint32_t per_page, uint32_t tuple)
{
	struct pg_rel *rel = &pg->rel[id];
	uint32_t pages = div_up(rows, per_page), b, ring_n, head = 0, fill = 0, ext = 0;
	uint32_t ring_cap = pg->pool.n / 8 < BULK_RING ? pg->pool.n / 8 : BULK_RING;
	struct { uint32_t blk; uint64_t lsn; } *ring;
	int ret = 0;

	if (ring_cap < 1)
		ring_cap = 1;
	ring = calloc(ring_cap, sizeof(*ring));
	rel->allvis = calloc(pages + 1, 1);
	if (!ring || !rel->allvis) {
		free(ring);
		return -ENOMEM;
	}
	memset(rel->allvis, 1, pages);
	rel->nallvis = pages;
	for (b = 0; b < pages && !ret; b++) {
		uint32_t on_page = b + 1 < pages ? per_page : (uint32_t)(rows - (uint64_t)b * per_page);
		uint64_t lsn;

		if (pg_stopping(pg)) {
			/* Ctrl-C, or a failed WAL write (pg_wal_insert reports it so) */
			ret = atomic_load(&pg->err) ? atomic_load(&pg->err) : -EINTR;
			break;
		}
		if (!ext) {
			/* 17 extends the bulk insert 64 pages at a time; before, page by page */
			ext = pg->o->era >= IOTAP_PGSQL_17 ? (pages - b < 64 ? pages - b : 64) : 1;
			ret = pg_rel_extend(pg, id, ext, 1);
			if (ret)
				break;
		}
		ext--;
		lsn = pg_wal_insert(pg, on_page * tuple + 60);
		/* the ring is full: its oldest buffer goes out (WAL first) */
		if (fill == ring_cap) {
			ret = pg_wal_flush(pg, ring[head].lsn, 0);
			if (!ret)
				ret = pg_write_page(pg, PG_R_BACKEND, id, ring[head].blk, NULL);
			fill--;
			head = (head + 1) % ring_cap;
		}
		ring_n = (head + fill) % ring_cap;
		ring[ring_n].blk = b;
		ring[ring_n].lsn = lsn;
		fill++;
	}
	/* what the ring still holds stays in shared_buffers, dirty */
	while (!ret && fill) {
		ret = pg_access(pg, id, ring[head].blk, 1, 1, NULL);
		if (!ret)
			pg_set_lsn(pg, id, ring[head].blk, ring[head].lsn);
		head = (head + 1) % ring_cap;
		fill--;
	}
	/* the visibility map: all-visible, all-frozen bits set */
	if (!ret) {
		uint32_t vmp = div_up(pages, VM_HEAP_PER_PAGE), i;

		ret = pg_rel_extend(pg, vm, vmp, 1);
		for (i = 0; i < vmp && !ret; i++)
			ret = pg_access(pg, vm, i, 1, 1, NULL);
	}
	free(ring);
	return ret;
}

/* ANALYZE: a sorted random sample of up to 30000 pages (Knuth's algorithm S). */
static int analyze(struct pg *pg, enum pg_relid id, uint64_t *rnd)
{
	uint32_t n = pg->rel[id].nblocks, want = n < 30000 ? n : 30000, b, run = 0, first = 0;
	int ret = 0;

	for (b = 0; b < n && want && !ret; b++) {
		*rnd = *rnd * 6364136223846793005ull + 1442695040888963407ull;
		if ((double)(*rnd >> 11) / 9007199254740992.0 * (n - b) < want) {
			want--;
			if (run && first + run == b) {
				run++;
				continue;
			}
			if (run)
				ret = scan(pg, id, first, run, 1);
			first = b;
			run = 1;
		}
	}
	if (!ret && run)
		ret = scan(pg, id, first, run, 1);
	return ret;
}

/*
 * A parallel btree build (8 MiB of heap or more): two participants spill
 * their sorted runs to a shared fileset, base/pgsql_tmp/pgsql_tmpPID.0.fileset/
 * 0.0 and 1.0, 8 KiB BufFile blocks (about 20 bytes per key), read back to
 * merge, then removed.
 */
static int parallel_sort(struct pg *pg, uint64_t keys)
{
	struct iotap_workload_ctx *c = pg->c;
	uint32_t blocks = div_up(keys * 41 / 2, PG_BLCKSZ), part[2], b;
	char set[64], *buf = NULL;
	struct wl_file f[2] = { { .fd = -1 }, { .fd = -1 } };
	static const char *const name[2] = { "0.0", "1.0" };
	uint64_t set_ino = 0;
	int fd = -1, basefd, ret, i;
	struct stat st;

	basefd = openat(pg->datafd, "base", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (basefd < 0)
		return wl_fail(c, -errno, "open directory 'base'");
	ret = 0;
	if (pg->tmpfd < 0) {
		ret = mk(pg, basefd, pg->base_ino, "pgsql_tmp", &pg->tmpfd, &pg->tmp_ino);
	}
	close(basefd);
	if (ret)
		return ret;
	snprintf(set, sizeof(set), "pgsql_tmp%u.0.fileset", (unsigned int)getpid());
	ret = mk(pg, pg->tmpfd, pg->tmp_ino, set, &fd, &set_ino);
	buf = wl_buf_alloc(PG_BLCKSZ);
	if (!ret && !buf)
		ret = -ENOMEM;
	part[0] = blocks / 3;
	part[1] = blocks - part[0];
	for (i = 0; i < 2 && !ret; i++) {
		ret = wl_open(c, &f[i], fd, set_ino, name[i], O_RDWR | O_CREAT | O_TRUNC, 0600);
		for (b = 0; b < part[i] && !ret; b++)
			ret = wl_write_full(c, &f[i], buf, PG_BLCKSZ);
	}
	for (i = 0; i < 2 && !ret; i++) {
		ret = wl_seek(c, &f[i], 0);
		for (b = 0; b < part[i] && !ret; b++)
			ret = wl_read_full(c, &f[i], buf, PG_BLCKSZ);
	}
	for (i = 0; i < 2; i++) {
		if (f[i].fd >= 0) {
			wl_close(c, &f[i]);
			wl_unlink(c, fd, set_ino, name[i], f[i].ino);
		}
	}
	free(buf);
	if (fd >= 0) {
		close(fd);
		if (!fstatat(pg->tmpfd, set, &st, AT_SYMLINK_NOFOLLOW))
			wl_rmdir(c, pg->tmpfd, pg->tmp_ino, set, st.st_ino);
	}
	return ret;
}

/* ALTER TABLE ... ADD PRIMARY KEY: scan, write the btree, log it, fsync it. */
static int build_key(struct pg *pg, enum pg_relid heap, enum pg_relid key, uint64_t keys)
{
	struct pg_rel *rel = &pg->rel[key];
	uint32_t leaves, pages = btree_pages(keys, &leaves), b;
	int ret;

	ret = scan(pg, heap, 0, pg->rel[heap].nblocks, pg->rel[heap].nblocks > pg->pool.n / 4);
	if (!ret && pg->rel[heap].nblocks >= 1024)
		ret = parallel_sort(pg, keys);
	if (!ret)
		ret = pg_rel_extend(pg, key, 0, 0);
	if (ret)
		return ret;
	pg->pkey_leaves[key - PG_ACCOUNTS_PKEY] = leaves;
	/* _bt_blwritepage: block 0 (the metapage) reserved with a zero page first */
	for (b = 0; b < pages && !ret; b++) {
		if (pg_stopping(pg))
			return atomic_load(&pg->err) ? atomic_load(&pg->err) : -EINTR;
		ret = pg_rel_extend(pg, key, 1, b == 0);
		if (ret)
			break;
		if (b == 0)
			continue;
		/* log_newpage, then smgrextend with the page (no shared buffer) */
		pg_wal_insert(pg, REC_NEWPAGE_HDR + rel->fill);
		ret = pg_write_page(pg, PG_R_BACKEND, key, b, NULL);
	}
	if (!ret) {
		pg_wal_insert(pg, REC_NEWPAGE_HDR + 200);	/* the metapage */
		ret = pg_write_page(pg, PG_R_BACKEND, key, 0, NULL);
	}
	if (ret)
		return ret;
	if (pg->o->era >= IOTAP_PGSQL_17)
		return 0;	/* 17's bulk_write leaves the fsync to the next checkpoint */
	/* smgrimmedsync */
	atomic_store(&rel->seg[0].need_sync, 0);
	atomic_fetch_add(&pg->cnt.fsyncs, 1);
	return wl_fsync(pg->c, &rel->seg[0].f, 0);
}

static int commit_now(struct pg *pg)
{
	return pg_wal_flush(pg, pg_wal_insert(pg, REC_COMMIT), 1);
}

static int init_load(struct pg *pg)
{
	struct iotap_workload_pgsql_result *r = pg->r;
	uint64_t t, rnd = 0x9e3779b97f4a7c15ull ^ pg->o->seed;
	unsigned int i;
	int ret = 0;

	t = wl_now();
	/* creating tables: the catalogs read and changed, one commit per table */
	for (i = 0; i < PG_NCAT && !ret; i++) {
		uint32_t b;

		ret = scan(pg, PG_NREL + i, 0, catalogs[i].pages, 0);
		for (b = 0; b < catalogs[i].dirty && !ret; b++)
			ret = pg_access(pg, PG_NREL + i, b, 1, 0, NULL);
	}
	for (i = 0; i < PG_NOLD && !ret; i++) {
		ret = pg_rel_extend(pg, PG_NREL + PG_NCAT + i, 0, 0);
		if (!ret)
			atomic_store(&pg->rel[PG_NREL + PG_NCAT + i].seg[0].need_sync, 1);
		if (!ret && i < 4)
			ret = commit_now(pg);
	}
	pg->old_created = !ret;
	/* TRUNCATE: the tables get new files */
	if (!ret)
		ret = pg_rel_extend(pg, PG_HISTORY, 0, 0);
	if (!ret)
		ret = pg_rel_extend(pg, PG_TELLERS, 0, 0);
	if (!ret)
		ret = pg_rel_extend(pg, PG_ACCOUNTS, 0, 0);
	if (!ret)
		ret = pg_rel_extend(pg, PG_BRANCHES, 0, 0);
	r->init_tables_s = (double)(wl_now() - t) / 1e9;
	if (ret)
		return ret;
	/* generating data (client-side): one transaction */
	t = wl_now();
	ret = copy_table(pg, PG_BRANCHES, PG_BRANCHES_VM, pg->nbranches, BRANCHES_PER_PAGE, 40);
	if (!ret)
		ret = copy_table(pg, PG_TELLERS, PG_TELLERS_VM, pg->ntellers, TELLERS_PER_PAGE, 44);
	if (!ret)
		ret = copy_table(pg, PG_ACCOUNTS, PG_ACCOUNTS_VM, pg->naccounts, ACC_PER_PAGE, 106);
	if (!ret)
		ret = commit_now(pg);
	r->init_generate_s = (double)(wl_now() - t) / 1e9;
	if (ret)
		return ret;
	/*
	 * vacuuming: all-frozen pages are skipped, the free space map made
	 * (3 pages), ANALYZE reads its sample; VACUUM and ANALYZE commit each
	 */
	t = wl_now();
	for (i = 0; i < 4 && !ret; i++) {
		static const enum pg_relid heap[4] = { PG_BRANCHES, PG_TELLERS, PG_ACCOUNTS,
						       PG_HISTORY };
		static const enum pg_relid fsm[4] = { PG_BRANCHES_FSM, PG_TELLERS_FSM,
						      PG_ACCOUNTS_FSM, 0 };
		uint32_t b;

		if (fsm[i]) {
			ret = pg_rel_extend(pg, fsm[i], 3, 1);
			for (b = 0; b < 3 && !ret; b++)
				ret = pg_access(pg, fsm[i], b, 1, 0, NULL);
		}
		if (!ret)
			ret = commit_now(pg);
		if (!ret)
			ret = analyze(pg, heap[i], &rnd);
		if (!ret)
			ret = pg_access(pg, PG_NREL + 16, i, 1, 0, NULL);	/* pg_statistic */
		if (!ret)
			ret = commit_now(pg);
	}
	r->init_vacuum_s = (double)(wl_now() - t) / 1e9;
	if (ret)
		return ret;
	/* primary keys, one transaction each */
	t = wl_now();
	ret = build_key(pg, PG_BRANCHES, PG_BRANCHES_PKEY, pg->nbranches);
	if (!ret)
		ret = commit_now(pg);
	if (!ret)
		ret = build_key(pg, PG_TELLERS, PG_TELLERS_PKEY, pg->ntellers);
	if (!ret)
		ret = commit_now(pg);
	if (!ret)
		ret = build_key(pg, PG_ACCOUNTS, PG_ACCOUNTS_PKEY, pg->naccounts);
	if (!ret)
		ret = commit_now(pg);
	r->init_keys_s = (double)(wl_now() - t) / 1e9;
	return ret;
}

/* --- the clients ------------------------------------------------------------------------ */

/* Read @name whole in @chunk-byte read()s, as AllocateFile + fread do. */
static int read_whole(struct pg *pg, int dirfd, uint64_t parent, const char *name, size_t chunk)
{
	struct wl_file f;
	struct stat st;
	uint64_t got = 0;
	char buf[4096];
	int ret;

	ret = wl_open(pg->c, &f, dirfd, parent, name, O_RDONLY, 0);
	if (ret)
		return ret;
	if (fstat(f.fd, &st))
		st.st_size = 0;
	do {
		ssize_t n = wl_read(pg->c, &f, buf, chunk);

		if (n <= 0) {
			ret = (int)n;
			break;
		}
		got += (uint64_t)n;
	} while (got < (uint64_t)st.st_size);
	if (wl_close(pg->c, &f) && !ret)
		ret = -EIO;
	return ret;
}

/*
 * A backend's start (InitPostgres): PG_VERSION checked, the shared and the
 * database's relation map, the relcache init files read in 4 KiB freads.
 */
static int backend_start(struct pg *pg)
{
	int ret = read_whole(pg, pg->datafd, pg->data_ino, "PG_VERSION", 4096);

	if (!ret)
		ret = read_whole(pg, pg->globalfd, pg->global_ino, "pg_filenode.map", 512);
	if (!ret)
		ret = read_whole(pg, pg->globalfd, pg->global_ino, "pg_internal.init", 4096);
	if (!ret)
		ret = read_whole(pg, pg->basefd, pg->db_ino, "pg_filenode.map", 512);
	if (!ret)
		ret = read_whole(pg, pg->basefd, pg->db_ino, "pg_internal.init", 4096);
	return ret;
}

struct pg_client {
	uint64_t rnd;
	struct pg_hist lat;		/* steady */
	uint64_t n_all, n_steady;
	double lag_sum;
	uint64_t lag_max, lag_n, late;
	double lat_sum_steady, lat_sq_steady;
};

struct pg_run {
	struct pg pg;
	struct pg_client *cl;
	pthread_mutex_t sched_lock;
	double next_ns;			/* the Poisson schedule (-R) */
	uint64_t sched_rnd;
	uint64_t end_ns;
	int ret;			/* the owner's */
};

static uint64_t rnd_next(uint64_t *s)
{
	/* xorshift64* */
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ull;
}

static double rnd_unit(uint64_t *s)
{
	return ((double)(rnd_next(s) >> 11) + 0.5) / 9007199254740992.0;
}

/* The pages a transaction changed, to give them its records' LSN. */
struct touched {
	enum pg_relid id[12];
	uint32_t blk[12];
	unsigned int n;
};

static int touch(struct pg *pg, struct touched *t, enum pg_relid id, uint32_t blk, int is_new,
		 uint32_t *rec)
{
	uint32_t fpw = 0;
	int ret = pg_access(pg, id, blk, 1, is_new, &fpw);

	*rec += fpw;
	if (t->n < 12) {
		t->id[t->n] = id;
		t->blk[t->n++] = blk;
	}
	return ret;
}

/* heap_update's visibilitymap_clear: the VM page changes once per all-visible page. */
static int vm_clear(struct pg *pg, struct touched *t, enum pg_relid heap, enum pg_relid vm,
		    uint32_t blk)
{
	struct pg_rel *rel = &pg->rel[heap];
	uint32_t dummy = 0;

	if (blk >= rel->nallvis || !__atomic_exchange_n(&rel->allvis[blk], 0, __ATOMIC_RELAXED))
		return 0;
	return touch(pg, t, vm, blk / VM_HEAP_PER_PAGE, 0, &dummy);
}

/* The page new rows go to (history's last page, accounts' new versions). */
static int row_page(struct pg *pg, enum pg_relid id, uint32_t *rows, uint32_t per_page,
		    uint32_t *blk, int *is_new)
{
	int ret = 0;

	pthread_mutex_lock(&pg->ext_lock);
	*is_new = 0;
	if (!*rows || *rows >= per_page) {
		ret = pg_rel_extend(pg, id, 1, 1);
		*rows = 0;
		*is_new = 1;
		if (!ret && id == PG_HISTORY && pg->rel[id].nblocks == 2) {
			/* the second page: the free space map gets made (3 pages) */
			uint32_t b;

			ret = pg_rel_extend(pg, PG_HISTORY_FSM, 3, 1);
			for (b = 0; b < 3 && !ret; b++)
				ret = pg_access(pg, PG_HISTORY_FSM, b, 1, 0, NULL);
		}
	}
	(*rows)++;
	*blk = pg->rel[id].nblocks - 1;
	pthread_mutex_unlock(&pg->ext_lock);
	return ret;
}

static uint32_t key_root(const struct pg *pg, enum pg_relid key)
{
	return pg->rel[key].nblocks ? pg->rel[key].nblocks - 1 : 0;
}

/* pgbench's TPC-B transaction. */
static int tpcb(struct pg *pg, struct pg_client *cl)
{
	uint32_t aid = (uint32_t)(rnd_next(&cl->rnd) % pg->naccounts);
	uint32_t tid = (uint32_t)(rnd_next(&cl->rnd) % pg->ntellers);
	uint32_t bid = (uint32_t)(rnd_next(&cl->rnd) % pg->nbranches);
	uint32_t xid = (uint32_t)atomic_fetch_add(&pg->next_xid, 1);
	uint32_t rec = 0, ablk = aid / ACC_PER_PAGE, blk, leaf, i;
	struct touched t = { .n = 0 };
	uint64_t lsn;
	int ret, is_new, first;

	atomic_store(&pg->clog_dirty[(xid / PG_CLOG_XACTS_PER_PAGE) % 32], 1);
	/* UPDATE pgbench_accounts ... WHERE aid = :aid; SELECT abalance ... */
	leaf = 1 + aid / KEYS_PER_LEAF;
	ret = pg_access(pg, PG_ACCOUNTS_PKEY, key_root(pg, PG_ACCOUNTS_PKEY), 0, 0, NULL);
	if (!ret)
		ret = pg_access(pg, PG_ACCOUNTS_PKEY, leaf, 0, 0, NULL);
	if (!ret)
		ret = touch(pg, &t, PG_ACCOUNTS, ablk, 0, &rec);
	if (!ret)
		ret = vm_clear(pg, &t, PG_ACCOUNTS, PG_ACCOUNTS_VM, ablk);
	first = !(__atomic_fetch_or(&pg->moved[ablk / 8], (uint8_t)(1u << (ablk % 8)),
				    __ATOMIC_RELAXED) & (1u << (ablk % 8)));
	if (!ret && first) {
		/* no room on a full page: the new version goes elsewhere, and into the key */
		rec += REC_UPDATE + REC_BT_INSERT;
		ret = row_page(pg, PG_ACCOUNTS, &pg->acc_insert_rows, ACC_PER_PAGE, &blk, &is_new);
		if (!ret)
			ret = touch(pg, &t, PG_ACCOUNTS, blk, is_new, &rec);
		if (!ret)
			ret = touch(pg, &t, PG_ACCOUNTS_PKEY, leaf, 0, &rec);
	} else {
		rec += REC_HOT_UPDATE;
	}
	/* UPDATE pgbench_tellers; UPDATE pgbench_branches (HOT) */
	if (!ret)
		ret = pg_access(pg, PG_TELLERS_PKEY, key_root(pg, PG_TELLERS_PKEY), 0, 0, NULL);
	if (!ret)
		ret = touch(pg, &t, PG_TELLERS, tid / TELLERS_PER_PAGE, 0, &rec);
	if (!ret)
		ret = vm_clear(pg, &t, PG_TELLERS, PG_TELLERS_VM, tid / TELLERS_PER_PAGE);
	if (!ret)
		ret = pg_access(pg, PG_BRANCHES_PKEY, key_root(pg, PG_BRANCHES_PKEY), 0, 0, NULL);
	if (!ret)
		ret = touch(pg, &t, PG_BRANCHES, bid / BRANCHES_PER_PAGE, 0, &rec);
	if (!ret)
		ret = vm_clear(pg, &t, PG_BRANCHES, PG_BRANCHES_VM, bid / BRANCHES_PER_PAGE);
	rec += 2 * REC_HOT_UPDATE;
	/* INSERT INTO pgbench_history */
	if (!ret)
		ret = row_page(pg, PG_HISTORY, &pg->hist_rows, HIST_PER_PAGE, &blk, &is_new);
	if (!ret)
		ret = touch(pg, &t, PG_HISTORY, blk, is_new, &rec);
	rec += REC_HEAP_INSERT;
	if (ret)
		return ret;
	lsn = pg_wal_insert(pg, rec);
	for (i = 0; i < t.n; i++)
		pg_set_lsn(pg, t.id[i], t.blk[i], lsn);
	/* END: the commit record, then XLogFlush */
	lsn = pg_wal_insert(pg, REC_COMMIT);
	return pg_wal_flush(pg, lsn, 1);
}

/* pgbench -R: the next start of the Poisson schedule (all clients share it). */
static uint64_t next_start(struct pg_run *run)
{
	const struct iotap_workload_pgsql_opts *o = run->pg.o;
	uint64_t at;

	pthread_mutex_lock(&run->sched_lock);
	run->next_ns += -log(rnd_unit(&run->sched_rnd)) * 1e9 / o->rate;
	at = (uint64_t)run->next_ns;
	pthread_mutex_unlock(&run->sched_lock);
	return at;
}

static void sleep_until(struct pg *pg, uint64_t at)
{
	for (;;) {
		uint64_t now = wl_now();
		struct timespec ts;
		uint64_t d;

		if (now >= at || pg_stopping(pg))
			return;
		d = at - now < 100000000ull ? at - now : 100000000ull;
		ts.tv_sec = (time_t)(d / 1000000000ull);
		ts.tv_nsec = (long)(d % 1000000000ull);
		nanosleep(&ts, NULL);
	}
}

static int client_main(struct pg_run *run, unsigned int i, struct pg_cpu *cpu)
{
	struct pg *pg = &run->pg;
	struct pg_client *cl = &run->cl[i];
	const struct iotap_workload_pgsql_opts *o = pg->o;
	int ret = 0;

	pthread_mutex_lock(&pg->state_lock);
	while (atomic_load(&pg->state) == PG_ST_INIT && !wl_stopped())
		pthread_cond_wait(&pg->state_cond, &pg->state_lock);
	pthread_mutex_unlock(&pg->state_lock);
	cpu_start(cpu);
	if (!pg_stopping(pg))
		ret = backend_start(pg);
	while (!ret && !pg_stopping(pg)) {
		uint64_t sched, t0, t1, lat;
		unsigned int iv;

		sched = o->rate > 0 ? next_start(run) : wl_now();
		if (sched >= run->end_ns)
			break;
		sleep_until(pg, sched);
		if (pg_stopping(pg))
			break;
		t0 = wl_now();
		if (t0 >= run->end_ns)
			break;
		ret = tpcb(pg, cl);
		if (ret)
			break;
		t1 = wl_now();
		lat = t1 - (o->rate > 0 ? sched : t0);
		if (t1 <= run->end_ns) {
			atomic_fetch_add(&pg->cnt.txns, 1);
			cl->n_all++;
			iv = (unsigned int)((t1 - pg->bench_t0) / o->progress_ns);
			if (iv < pg->niv) {
				atomic_fetch_add(&pg->iv_n[iv], 1);
				atomic_fetch_add(&pg->iv_lat_us[iv], lat / 1000);
			}
			if (t1 >= pg->steady_t0) {
				cl->n_steady++;
				pg_hist_add(&cl->lat, lat);
				if (o->rate > 0) {
					uint64_t lag = t0 > sched ? t0 - sched : 0;

					cl->lag_sum += (double)lag;
					cl->lag_n++;
					if (lag > cl->lag_max)
						cl->lag_max = lag;
					if (lag > 1000000000ull)
						cl->late++;
				}
			}
		}
		pg_cpu_tick(pg, cpu);
	}
	return ret;
}

static void role_ready(struct wl_threads *t)
{
	(void)t;
}

static int role_main(struct wl_threads *t, unsigned int i)
{
	struct pg_run *run = t->arg;
	struct pg *pg = &run->pg;
	struct pg_cpu cpu;
	int ret;

	cpu_start(&cpu);
	wl_threads_ready(t);
	if (i < pg->o->clients)
		ret = client_main(run, i, &cpu);
	else if (i == pg->o->clients)
		ret = pg_walwriter(pg, &cpu);
	else if (i == pg->o->clients + 1)
		ret = pg_bgwriter(pg, &cpu);
	else
		ret = pg_checkpointer(pg, &cpu);
	pg_cpu_tick(pg, &cpu);
	pg_set_error(pg, ret);
	return 0;
}

/* --- the owner: phases ------------------------------------------------------------------- */

static void snap(struct pg *pg, struct iotap_workload_pgsql_io *io)
{
	io->txns = atomic_load(&pg->cnt.txns);
	io->wal_bytes = atomic_load(&pg->cnt.wal_bytes);
	io->wal_writes = atomic_load(&pg->cnt.wal_writes);
	io->wal_write_bytes = atomic_load(&pg->cnt.wal_write_bytes);
	io->wal_syncs = atomic_load(&pg->cnt.wal_syncs);
	io->data_reads = atomic_load(&pg->cnt.data_reads);
	io->data_writes = atomic_load(&pg->cnt.data_writes);
	io->writes_ckpt = atomic_load(&pg->cnt.writes_ckpt);
	io->writes_bgwriter = atomic_load(&pg->cnt.writes_bgwriter);
	io->writes_backend = atomic_load(&pg->cnt.writes_backend);
	io->extends = atomic_load(&pg->cnt.extends);
	io->fsyncs = atomic_load(&pg->cnt.fsyncs);
	io->writebacks = atomic_load(&pg->cnt.writebacks);
	io->fpw = atomic_load(&pg->cnt.fpw);
}

static void io_diff(struct iotap_workload_pgsql_io *d, const struct iotap_workload_pgsql_io *a,
		    const struct iotap_workload_pgsql_io *b)
{
	const uint64_t *pa = (const uint64_t *)a, *pb = (const uint64_t *)b;
	uint64_t *pd = (uint64_t *)d;
	size_t i;

	for (i = 0; i < sizeof(*d) / sizeof(uint64_t); i++)
		pd[i] = pb[i] - pa[i];
}

struct span {
	uint64_t t, u, s;
};

static void span_mark(struct pg *pg, struct pg_cpu *cpu, struct span *sp)
{
	pg_cpu_tick(pg, cpu);
	sp->t = wl_now();
	sp->u = atomic_load(&pg->cpu_user);
	sp->s = atomic_load(&pg->cpu_sys);
}

static void span_result(const struct span *a, const struct span *b, int partial, uint64_t units,
			struct iotap_workload_phase_result *r)
{
	r->ran = 1;
	r->partial = partial;
	r->elapsed_s = (double)(b->t - a->t) / 1e9;
	r->cpu_s = (double)((b->u - a->u) + (b->s - a->s)) / 1e9;
	r->units = units;
}

static void progress(struct pg *pg, const char *phase, uint64_t t0, uint64_t total,
		     uint64_t *last_t, uint64_t *last_n, int done, int partial)
{
	struct iotap_workload_ctx *c = pg->c;
	struct iotap_workload_progress p = { 0 };
	uint64_t now = wl_now(), n = atomic_load(&pg->cnt.txns);

	if (!c->progress || (!done && now - *last_t < 1000000000ull))
		return;
	p.target = c->dir;
	p.phase = phase;
	p.elapsed_s = (double)(now - t0) / 1e9;
	p.fraction = total ? (double)(now - t0) / (double)total : 1;
	if (p.fraction > 1)
		p.fraction = 1;
	if (now > *last_t)
		p.units_per_s = (double)(n - *last_n) / ((double)(now - *last_t) / 1e9);
	p.done = done;
	p.partial = partial;
	*last_t = now;
	*last_n = n;
	c->progress(c->progress_arg, &p);
}

/* Sleep until @until, reporting progress; 1 if the run stopped meanwhile. */
static int wait_phase(struct pg_run *run, const char *phase, uint64_t t0, uint64_t until)
{
	struct pg *pg = &run->pg;
	uint64_t last_t = t0, last_n = atomic_load(&pg->cnt.txns);

	while (wl_now() < until && !pg_stopping(pg)) {
		uint64_t left = until - wl_now();

		pg_nap(pg, left < 250000000ull ? left : 250000000ull);
		progress(pg, phase, t0, until - t0, &last_t, &last_n, 0, 0);
	}
	progress(pg, phase, t0, until - t0, &last_t, &last_n, 1, pg_stopping(pg) &&
		 wl_now() < until);
	return pg_stopping(pg) && wl_now() < until;
}

static void drive(struct wl_threads *t)
{
	struct pg_run *run = t->arg;
	struct pg *pg = &run->pg;
	const struct iotap_workload_pgsql_opts *o = pg->o;
	struct iotap_workload_pgsql_result *r = pg->r;
	struct iotap_workload_pgsql_io a, b;
	struct span s0, s1, s2, s3;
	struct pg_cpu cpu;
	int stopped;

	cpu_start(&cpu);
	pthread_mutex_lock(&pg->phase_lock);
	pg->base_phase = "init";
	pthread_mutex_unlock(&pg->phase_lock);
	pg_phase_update(pg, &cpu);
	span_mark(pg, &cpu, &s0);
	run->ret = init_load(pg);
	span_mark(pg, &cpu, &s1);
	span_result(&s0, &s1, run->ret != 0, 0, &r->init);
	if (run->ret) {
		pg_set_error(pg, run->ret);
		goto out;
	}
	/* the clients start: warm-up, then steady */
	pg->bench_t0 = wl_now();
	pg->steady_t0 = pg->bench_t0 + o->warmup_ns;
	run->end_ns = pg->bench_t0 + o->duration_ns;
	run->next_ns = (double)pg->bench_t0;
	snap(pg, &a);
	/* the connections are part of the run, as pgbench's are of -T */
	pthread_mutex_lock(&pg->phase_lock);
	pg->base_phase = o->warmup_ns ? "warmup" : "steady";
	pthread_mutex_unlock(&pg->phase_lock);
	pg_phase_update(pg, &cpu);
	/* pgbench's own first connection (it asks pgbench_branches for the scale) */
	run->ret = backend_start(pg);
	if (run->ret) {
		pg_set_error(pg, run->ret);
		goto out;
	}
	set_state(pg, PG_ST_BENCH);
	stopped = o->warmup_ns ? wait_phase(run, "warmup", pg->bench_t0, pg->steady_t0) : 0;
	span_mark(pg, &cpu, &s2);
	snap(pg, &b);
	io_diff(&r->io_warmup, &a, &b);
	if (o->warmup_ns)
		span_result(&s1, &s2, stopped, r->io_warmup.txns, &r->warmup);
	r->warmup.elapsed_s = (double)(s2.t - pg->bench_t0) / 1e9;
	if (!stopped) {
		pthread_mutex_lock(&pg->phase_lock);
		pg->base_phase = "steady";
		pthread_mutex_unlock(&pg->phase_lock);
		pg_phase_update(pg, &cpu);
		pthread_mutex_lock(&pg->wal.write_lock);
		pg->sync_steady = 1;
		pthread_mutex_unlock(&pg->wal.write_lock);
		stopped = wait_phase(run, "steady", s2.t, run->end_ns);
		pthread_mutex_lock(&pg->wal.write_lock);
		pg->sync_steady = 0;
		pthread_mutex_unlock(&pg->wal.write_lock);
		span_mark(pg, &cpu, &s3);
		snap(pg, &a);
		io_diff(&r->io_steady, &b, &a);
		span_result(&s2, &s3, stopped, r->io_steady.txns, &r->steady);
		if (r->io_steady.txns) {
			r->cpu_user_us_per_txn = (double)(s3.u - s2.u) / 1e3 /
						 (double)r->io_steady.txns;
			r->cpu_sys_us_per_txn = (double)(s3.s - s2.s) / 1e3 /
						(double)r->io_steady.txns;
		}
	}
out:
	set_state(pg, PG_ST_STOP);
	pthread_mutex_lock(&pg->phase_lock);
	pg->base_phase = NULL;
	pg->ckpt_phase[0] = '\0';
	pthread_mutex_unlock(&pg->phase_lock);
	pg_phase_update(pg, &cpu);
}

/* --- the run ------------------------------------------------------------------------------ */

static void results(struct pg_run *run)
{
	struct pg *pg = &run->pg;
	const struct iotap_workload_pgsql_opts *o = pg->o;
	struct iotap_workload_pgsql_result *r = pg->r;
	static const double q[IOTAP_PGSQL_PCT] = { 0.5, 0.9, 0.95, 0.99, 0.999, 1.0 };
	double lag = 0, span_all;
	uint64_t lag_n = 0, i;
	unsigned int k;

	for (k = 0; k < o->clients; k++) {
		struct pg_client *cl = &run->cl[k];

		pg_hist_merge(&pg->lat, &cl->lat);
		r->txns_all += cl->n_all;
		lag += cl->lag_sum;
		lag_n += cl->lag_n;
		if (cl->lag_max / 1e6 > r->lag_max_ms)
			r->lag_max_ms = (double)cl->lag_max / 1e6;
		r->late += cl->late;
	}
	if (pg->lat.n) {
		double m = pg->lat.sum / (double)pg->lat.n;

		r->lat_avg_ms = m / 1e6;
		r->lat_stddev_ms = sqrt(fmax(0, pg->lat.sumsq / (double)pg->lat.n - m * m)) / 1e6;
		for (k = 0; k < IOTAP_PGSQL_PCT; k++)
			r->lat_pct_ms[k] = pg_hist_pct(&pg->lat, q[k]) / 1e6;
	}
	r->lag_avg_ms = lag_n ? lag / (double)lag_n / 1e6 : 0;
	span_all = r->warmup.elapsed_s + r->steady.elapsed_s;
	r->tps_all = span_all > 0 ? (double)r->txns_all / span_all : 0;
	r->tps_steady = r->steady.elapsed_s > 0 ? (double)pg->lat.n / r->steady.elapsed_s : 0;
	r->sync_n = pg->sync.n;
	r->sync_commit_n = pg->sync_commit;
	r->sync_p50_ms = pg_hist_pct(&pg->sync, 0.5) / 1e6;
	r->sync_p99_ms = pg_hist_pct(&pg->sync, 0.99) / 1e6;
	r->sync_max_ms = (double)pg->sync.max / 1e6;
	r->nintervals = 0;
	if (pg->niv) {
		r->interval_tps = calloc(pg->niv, sizeof(double));
		r->interval_lat_ms = calloc(pg->niv, sizeof(double));
		if (r->interval_tps && r->interval_lat_ms) {
			uint64_t last = (uint64_t)(span_all * 1e9) / o->progress_ns;

			for (i = 0; i < pg->niv && i < last; i++) {
				uint64_t n = atomic_load(&pg->iv_n[i]);

				r->interval_tps[i] = (double)n / ((double)o->progress_ns / 1e9);
				r->interval_lat_ms[i] = n ? (double)atomic_load(&pg->iv_lat_us[i]) /
							    (double)n / 1e3 : 0;
				r->nintervals++;
			}
		}
	}
	for (k = 0; k < PG_NREL && k < 7; k++)
		r->rel_pages[k] = pg->rel[k].nblocks;
}

static int check_opts(const struct iotap_workload_pgsql_opts *o)
{
	if (!o->scale || !o->clients || o->clients > 1000 || !o->duration_ns ||
	    o->warmup_ns >= o->duration_ns || o->shared_buffers < 16 * PG_BLCKSZ ||
	    o->shared_buffers / PG_BLCKSZ > UINT32_MAX / 4 || !o->checkpoint_timeout_ns ||
	    o->completion_target <= 0 || o->completion_target > 1 || !o->progress_ns ||
	    o->rate < 0 || (uint64_t)o->scale * 100000 > UINT32_MAX / 2)
		return -EINVAL;
	return 0;
}

int iotap_workload_pgsql_run(struct iotap_workload_ctx *c,
			     const struct iotap_workload_pgsql_opts *o,
			     struct iotap_workload_pgsql_result *r)
{
	struct pg_run *run;
	struct pg *pg;
	unsigned int i;
	int ret;

	memset(r, 0, sizeof(*r));
	if (c->dirfd < 0)
		return -ENOTDIR;
	ret = check_opts(o);
	if (ret)
		return ret;
	run = calloc(1, sizeof(*run));
	if (!run)
		return -ENOMEM;
	pg = &run->pg;
	pg->c = c;
	pg->o = o;
	pg->r = r;
	pg->basefd = pg->globalfd = pg->xactfd = pg->logicalfd = pg->wal.dirfd = pg->tmpfd = -1;
	pg->wal.f.fd = -1;
	pthread_mutex_init(&pg->state_lock, NULL);
	{
		pthread_condattr_t ca;

		/* pg_nap's deadlines are CLOCK_MONOTONIC (wl_now) */
		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&pg->state_cond, &ca);
		pthread_condattr_destroy(&ca);
	}
	pthread_mutex_init(&pg->phase_lock, NULL);
	pthread_mutex_init(&pg->res_lock, NULL);
	pthread_mutex_init(&pg->ext_lock, NULL);
	pthread_mutex_init(&run->sched_lock, NULL);
	atomic_init(&pg->state, PG_ST_INIT);
	atomic_init(&pg->epoch, 1);
	atomic_init(&pg->next_xid, 735);
	pg->naccounts = o->scale * 100000u;
	pg->ntellers = o->scale * 10u;
	pg->nbranches = o->scale;
	if (o->checkpoint_segments) {
		pg->ckpt_segs = o->checkpoint_segments;
	} else {
		pg->ckpt_segs = (uint64_t)((double)(o->max_wal_size / PG_WAL_SEG) /
					   (1.0 + o->completion_target));
		if (pg->ckpt_segs < 1)
			pg->ckpt_segs = 1;
	}
	pg->niv = (unsigned int)(o->duration_ns / o->progress_ns) + 2;
	pg->page = wl_buf_alloc(PG_BLCKSZ);
	pg->moved = calloc(pg->naccounts / ACC_PER_PAGE / 8 + 1, 1);
	pg->iv_n = calloc(pg->niv, sizeof(*pg->iv_n));
	pg->iv_lat_us = calloc(pg->niv, sizeof(*pg->iv_lat_us));
	run->cl = calloc(o->clients, sizeof(*run->cl));
	if (!pg->page || !pg->moved || !pg->iv_n || !pg->iv_lat_us || !run->cl) {
		ret = -ENOMEM;
		goto out_free;
	}
	memset(pg->page, 0x3c, PG_BLCKSZ);
	run->sched_rnd = 0x2545f4914f6cdd1dull ^ ((uint64_t)o->seed << 1);
	for (i = 0; i < o->clients; i++)
		run->cl[i].rnd = 0x9e3779b97f4a7c15ull * (i + 1) ^ ((uint64_t)o->seed << 17) ^ 1;
	ret = pg_pool_init(pg);
	if (!ret)
		ret = pg_wal_init(pg);
	if (ret)
		goto out_free;
	pg->t0 = wl_now();
	ret = layout(pg);
	if (!ret) {
		struct wl_threads t = {
			.n = o->clients + 3, .fn = role_main, .arg = run,
			.on_ready = role_ready, .on_go = drive,
		};

		ret = wl_threads_run(c, &t);
		if (!ret)
			ret = run->ret;
		if (!ret)
			ret = atomic_load(&pg->err);
		results(run);
	}
	teardown(pg);
	if (!ret && wl_stopped())
		ret = -EINTR;
	if (ret == -EINTR)
		r->partial = 1;
	else if (ret)
		r->failed = 1;
out_free:
	pg_wal_release(pg);
	pg_pool_release(pg);
	free(pg->page);
	free(pg->moved);
	free(pg->iv_n);
	free(pg->iv_lat_us);
	free(run->cl);
	free(run);
	return ret;
}

void iotap_workload_pgsql_result_release(struct iotap_workload_pgsql_result *r)
{
	free(r->interval_tps);
	free(r->interval_lat_ms);
	free(r->ckpt);
	r->interval_tps = r->interval_lat_ms = NULL;
	r->ckpt = NULL;
	r->nckpt = r->nintervals = 0;
}
