// SPDX-License-Identifier: MIT
/*
 * pgsql_init.c - the data directory as initdb leaves it, pgbench -i, the
 * start of a backend, and the removal of it all (see pgsql.c for the run
 * and pgsql_i.h for the files and locks)
 *
 * pgbench -i, PostgreSQL 15's way: the catalogs read and changed (one
 * commit per statement), COPY ... FREEZE through the 16 MiB bulk-write
 * ring, VACUUM (free space maps) and ANALYZE (a sample read through a
 * strategy ring, 15: each block hinted 10 blocks ahead), the primary keys
 * (heap scanned; a parallel build's sorted runs spilled to base/pgsql_tmp;
 * index pages logged, written, fsynced).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pgsql_i.h"

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
int pg_layout(struct pg *pg)
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
		ret = wl_open_root(pg->c, pg->o->wal_dir, &pg->wal.dirfd, &pg->wal.dir_ino);
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
void pg_teardown(struct pg *pg)
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
	uint32_t pages = pg_div_up(rows, per_page), b, ring_n, head = 0, fill = 0, ext = 0;
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
		uint32_t vmp = pg_div_up(pages, VM_HEAP_PER_PAGE), i;

		ret = pg_rel_extend(pg, vm, vmp, 1);
		for (i = 0; i < vmp && !ret; i++)
			ret = pg_access(pg, vm, i, 1, 1, NULL);
	}
	free(ring);
	return ret;
}

/*
 * PrefetchBuffer (bufmgr.c PrefetchSharedBuffer): a block not in
 * shared_buffers gets smgrprefetch -> mdprefetch -> FilePrefetch, one
 * posix_fadvise(POSIX_FADV_WILLNEED) of 8 KiB. The kernel reads the page
 * into its cache (on a FUSE mount: one READ request, as PostgreSQL's own
 * hint makes); the trace has no record for a hint, so the model's own
 * trace does not show it.
 */
static void prefetch(struct pg *pg, enum pg_relid id, uint32_t blk)
{
	struct pg_rel *rel = &pg->rel[id];
	struct pg_seg *s;

	if (blk >= rel->nblocks || pg_resident(pg, id, blk))
		return;
	s = &rel->seg[blk / PG_RELSEG_BLOCKS];
	posix_fadvise(s->f.fd, (off_t)(blk % PG_RELSEG_BLOCKS) * PG_BLCKSZ, PG_BLCKSZ,
		      POSIX_FADV_WILLNEED);
	atomic_fetch_add(&pg->cnt.prefetches, 1);
}

/*
 * ANALYZE: a sorted random sample of up to 30000 pages (Knuth's algorithm
 * S), read through the strategy ring. 14 to 16 (acquire_sample_rows with
 * USE_PREFETCH) run a second sampler maintenance_io_concurrency (10)
 * blocks ahead: the first 10 blocks hinted, then after each block read the
 * one 10 further on. 17 reads the sample through a read stream (combined
 * reads, runs of io_combine_limit); before 14 there was no hint.
 */
#define MAINT_IO_CONCURRENCY	10u

static int analyze(struct pg *pg, enum pg_relid id, uint64_t *rnd)
{
	uint32_t n = pg->rel[id].nblocks, want = n < 30000 ? n : 30000, b, k = 0, i;
	int hint = pg->o->era == IOTAP_PGSQL_15, ret = 0;
	uint32_t *sample;

	if (!n)
		return 0;
	sample = malloc((size_t)want * sizeof(*sample));
	if (!sample)
		return -ENOMEM;
	for (b = 0; b < n && k < want; b++) {
		*rnd = *rnd * 6364136223846793005ull + 1442695040888963407ull;
		if ((double)(*rnd >> 11) / 9007199254740992.0 * (n - b) < want - k)
			sample[k++] = b;
	}
	if (pg->o->era >= IOTAP_PGSQL_17) {
		/* runs of consecutive sampled blocks, combined by scan() */
		for (i = 0; i < k && !ret;) {
			uint32_t j = i + 1;

			while (j < k && sample[j] == sample[j - 1] + 1)
				j++;
			ret = scan(pg, id, sample[i], sample[j - 1] - sample[i] + 1, 1);
			i = j;
		}
		free(sample);
		return ret;
	}
	for (i = 0; hint && i < k && i < MAINT_IO_CONCURRENCY; i++)
		prefetch(pg, id, sample[i]);
	for (i = 0; i < k && !ret; i++) {
		ret = scan(pg, id, sample[i], 1, 1);
		if (hint && i + MAINT_IO_CONCURRENCY < k)
			prefetch(pg, id, sample[i + MAINT_IO_CONCURRENCY]);
	}
	free(sample);
	return ret;
}

/* Block @blk of a BufFile (8 KiB blocks), read whole. */
static int read_block(struct iotap_workload_ctx *c, struct wl_file *f, char *buf, uint32_t blk)
{
	ssize_t n = wl_pread(c, f, buf, PG_BLCKSZ, (uint64_t)blk * PG_BLCKSZ);

	return n < 0 ? (int)n : 0;
}

/*
 * A parallel btree build (8 MiB of heap or more; maintenance_work_mem
 * 64 MB allows one worker beside the leader), as nbtsort.c and
 * tuplesort.c/logtape.c do it: each participant sorts its half of the
 * heap scan and writes its run to the shared fileset
 * base/pgsql_tmp/pgsql_tmpPID.0.fileset/ (the leader 0.0, the worker 1.0;
 * 8 KiB BufFile blocks, about 20 bytes per key), then reads the tape's
 * first block back (LogicalTapeFreeze); a unique index also has a second
 * spool for dead tuples (_bt_spools_heapscan's spool2), an empty run per
 * participant in pgsql_tmpPID.1.fileset/ (one block written, read back).
 * The leader then merges the two runs, reading both tapes through
 * (alternately), and the filesets are removed.
 */
static int parallel_sort(struct pg *pg, uint64_t keys)
{
	struct iotap_workload_ctx *c = pg->c;
	uint32_t blocks = pg_div_up(keys * 41 / 2, PG_BLCKSZ), part[2], b[2];
	char set[2][64], *buf = NULL;
	struct wl_file f[2][2] = { { { .fd = -1 }, { .fd = -1 } }, { { .fd = -1 }, { .fd = -1 } } };
	static const char *const name[2] = { "0.0", "1.0" };
	uint64_t set_ino[2] = { 0, 0 };
	int fd[2] = { -1, -1 }, basefd, ret, i, k;
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
	buf = wl_buf_alloc(PG_BLCKSZ);
	if (!buf)
		return -ENOMEM;
	part[1] = blocks / 2;
	part[0] = blocks - part[1];
	for (k = 0; k < 2 && !ret; k++) {
		snprintf(set[k], sizeof(set[k]), "pgsql_tmp%u.%d.fileset", (unsigned int)getpid(), k);
		ret = mk(pg, pg->tmpfd, pg->tmp_ino, set[k], &fd[k], &set_ino[k]);
		/* the sorted runs (spool2's: one empty block), then LogicalTapeFreeze's read */
		for (i = 0; i < 2 && !ret; i++) {
			uint32_t n = k ? 1 : part[i], j;

			ret = wl_open(c, &f[k][i], fd[k], set_ino[k], name[i],
				      O_RDWR | O_CREAT | O_TRUNC, 0600);
			for (j = 0; j < n && !ret; j++)
				ret = wl_write_full(c, &f[k][i], buf, PG_BLCKSZ);
			if (!ret)
				ret = read_block(c, &f[k][i], buf, 0);
		}
	}
	/* the leader's merge: both runs read through, a block of each in turn */
	b[0] = b[1] = 0;
	while (!ret && (b[0] < part[0] || b[1] < part[1])) {
		for (i = 0; i < 2 && !ret; i++) {
			if (b[i] >= part[i])
				continue;
			ret = read_block(c, &f[0][i], buf, b[i]++);
		}
	}
	for (k = 1; k >= 0; k--) {
		for (i = 0; i < 2; i++) {
			if (f[k][i].fd >= 0) {
				wl_close(c, &f[k][i]);
				wl_unlink(c, fd[k], set_ino[k], name[i], f[k][i].ino);
			}
		}
		if (fd[k] >= 0) {
			close(fd[k]);
			if (!fstatat(pg->tmpfd, set[k], &st, AT_SYMLINK_NOFOLLOW))
				wl_rmdir(c, pg->tmpfd, pg->tmp_ino, set[k], st.st_ino);
		}
	}
	free(buf);
	return ret;
}

/* ALTER TABLE ... ADD PRIMARY KEY: scan, write the btree, log it, fsync it. */
static int build_key(struct pg *pg, enum pg_relid heap, enum pg_relid key, uint64_t keys)
{
	struct pg_rel *rel = &pg->rel[key];
	uint32_t leaves, pages = pg_btree_pages(keys, &leaves), b;
	int ret;

	ret = scan(pg, heap, 0, pg->rel[heap].nblocks, pg->rel[heap].nblocks > pg->pool.n / 4);
	/*
	 * parallel builds came with 11 (plan_create_index_workers); 8.4 and 9.6
	 * sort in maintenance_work_mem (an external sort of a larger table's
	 * keys is not modelled)
	 */
	if (!ret && pg->rel[heap].nblocks >= 1024 && pg->o->era >= IOTAP_PGSQL_15)
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

int pg_init_load(struct pg *pg)
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
int pg_backend_start(struct pg *pg)
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
