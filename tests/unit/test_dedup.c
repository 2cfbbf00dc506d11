// SPDX-License-Identifier: MIT
/*
 * test_dedup.c - workload/dedup*.c: the plan's exact counts, the written
 * data's dedup and compression ratios, and a traced run checked op by op
 *
 * 1. Options that do not fit are refused by the plan; the plan's counts
 *    are the closed form N - D + (G - 1) C per stream.
 * 2. A run kept on disk (no expiry), read back by hashing what is there:
 *    every stored segment and every 4 KiB block is distinct (a
 *    deduplicating array finds nothing more), the logical images rebuilt
 *    from the maps hash to exactly the planned number of distinct
 *    segments (the configured ratio), and zstd keeps the configured share.
 * 3. A traced run with expiry and compaction, every op against the spec:
 *    container appends sequential, whole segments, fdatasync'd before
 *    close; index reads and writes 4 KiB aligned, fdatasync'd before each
 *    backup ends; maps sequential in 32-byte entries; restores read only,
 *    whole segments, at most 1 MiB, every byte of every image; expiry
 *    unlinks the maps; compaction reads old containers front to back,
 *    fsyncs the new one, renames .tmp to .bin and unlinks the old.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>
#include <zstd.h>

#include "tap.h"
#include "iotap_dedup.h"
#include "iotap_trace.h"
#include "iotap_workload.h"
#include "dedup_i.h"	/* dd_cfg_init, dd_pos_generation: the borg chunk plan */

#define SEG	(128 * 1024)
#define MIB	(1024 * 1024)

static char tmpdir[] = "/tmp/iotap-test-dedup.XXXXXX";

struct h128 {
	uint64_t lo, hi;
};

static int cmp_h(const void *a, const void *b)
{
	const struct h128 *x = a, *y = b;

	if (x->hi != y->hi)
		return x->hi < y->hi ? -1 : 1;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static uint64_t distinct(struct h128 *h, uint64_t n)
{
	uint64_t i, d = 0;

	qsort(h, n, sizeof(*h), cmp_h);
	for (i = 0; i < n; i++)
		if (!i || cmp_h(&h[i], &h[i - 1]))
			d++;
	return d;
}

static void hash(const void *p, size_t len, struct h128 *h)
{
	XXH128_hash_t x = XXH3_128bits(p, len);

	h->lo = x.low64;
	h->hi = x.high64;
}

static void *slurp(const char *path, size_t *len)
{
	struct stat st;
	void *p;
	int fd = open(path, O_RDONLY);

	*len = 0;
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || !(p = malloc(st.st_size ? st.st_size : 1))) {
		close(fd);
		return NULL;
	}
	*len = (size_t)st.st_size;
	if (read(fd, p, *len) != (ssize_t)*len) {
		free(p);
		p = NULL;
	}
	close(fd);
	return p;
}

static void rm_rf(const char *dir)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		diag("could not remove %s", dir);
}

static void small_opts(struct iotap_workload_dedup_opts *o)
{
	iotap_workload_dedup_opts_init(o);
	o->name = "store";
	o->streams = 2;
	o->image_bytes = 8 * MIB;	/* 64 segments, 8 extents of 1 MiB */
	o->generations = 3;
	o->change = 0.25;		/* 2 extents a generation */
	o->dup = 0.25;			/* 2 extents of the first image */
	o->compress = 0.5;
	o->segment_bytes = SEG;
	o->container_bytes = MIB;	/* 8 segments: containers roll over */
	o->fp_cache_bytes = 1024;	/* 32 entries: most look-ups miss */
	o->seed = 7;
}

/* --- 1. the plan ------------------------------------------------------------ */

static void test_plan(void)
{
	struct iotap_workload_dedup_opts o;
	struct iotap_workload_dedup_plan p;
	const char *why;
	int ret;

	small_opts(&o);
	ok(!iotap_workload_dedup_plan(&o, &p, &why), "plan: small options fit");
	/* per stream: 64 - 16 + 2 x 16 = 80 segments; ratio 3 x 64 / 80 = 2.4 */
	ok(p.segments == 2 * 3 * 64 && p.unique_segments == 2 * 80,
	   "plan: %llu segments, %llu unique (want 384, 160)",
	   (unsigned long long)p.segments, (unsigned long long)p.unique_segments);
	ok(fabs(p.dedup_ratio - 2.4) < 1e-9, "plan: dedup ratio 2.4 = G / ((1 - dup) + change (G - 1))");
	o.image_bytes = 64 * 1024;
	why = NULL;
	ret = iotap_workload_dedup_plan(&o, &p, &why);
	ok(ret == -EINVAL && why, "plan: an image smaller than a segment is refused (%s)",
	   why ? why : "");
	small_opts(&o);
	o.segment_bytes = 5000;
	ok(iotap_workload_dedup_plan(&o, &p, &why) == -EINVAL, "plan: 5000-byte segments refused");
	small_opts(&o);
	o.expire = 3;
	ok(iotap_workload_dedup_plan(&o, &p, &why) == -EINVAL, "plan: expiring every generation refused");
	small_opts(&o);
	o.compress = 0.99;
	ok(iotap_workload_dedup_plan(&o, &p, &why) == -EINVAL, "plan: 99%% compressibility refused");
}

/* --- 2. what was written ------------------------------------------------------ */

static int run(const char *dir, const char *trace, struct iotap_workload_dedup_opts *o,
	       struct iotap_workload_dedup_result *r)
{
	struct iotap_workload_env env = { .target = dir, .trace_path = trace };
	struct iotap_workload_ctx *c;
	int ret;

	mkdir(dir, 0755);
	ret = iotap_workload_ctx_open(&c, &env);
	if (ret)
		return ret;
	ret = iotap_workload_dedup_run(c, o, r);
	if (ret)
		diag("dedup run: %s: %s", iotap_workload_ctx_error(c), strerror(-ret));
	iotap_workload_ctx_close(c);
	return ret;
}

static void test_data(void)
{
	struct iotap_workload_dedup_opts o;
	struct iotap_workload_dedup_result r;
	struct h128 *segs = NULL, *blocks = NULL, *logical = NULL;
	uint64_t nseg = 0, nblk = 0, nlog = 0, bad = 0, lbytes = 0, stored = 0, comp = 0;
	char dir[300], path[600];
	struct dirent *de;
	unsigned int s, g;
	DIR *d;
	int ret;

	snprintf(dir, sizeof(dir), "%s/data", tmpdir);
	small_opts(&o);
	o.expire = 0;
	o.keep = 1;
	ret = run(dir, NULL, &o, &r);
	ok(!ret && r.gens_run == 3 && r.restores_run == 3, "kept run: 3 backups, 3 restores");
	snprintf(path, sizeof(path), "%s/store/data", dir);
	d = opendir(path);
	if (!ok(d != NULL, "the containers are there"))
		return;
	while ((de = readdir(d))) {
		size_t len, off;
		uint8_t *p;
		char f[900];
		size_t bound;
		void *z;

		if (!strstr(de->d_name, ".bin"))
			continue;
		snprintf(f, sizeof(f), "%s/%s", path, de->d_name);
		p = slurp(f, &len);
		if (!p || len % SEG) {
			bad++;
			free(p);
			continue;
		}
		segs = realloc(segs, (nseg + len / SEG) * sizeof(*segs));
		blocks = realloc(blocks, (nblk + len / 4096) * sizeof(*blocks));
		for (off = 0; off < len; off += SEG)
			hash(p + off, SEG, &segs[nseg++]);
		for (off = 0; off < len; off += 4096)
			hash(p + off, 4096, &blocks[nblk++]);
		bound = ZSTD_compressBound(len);
		z = malloc(bound);
		comp += ZSTD_compress(z, bound, p, len, 3);
		stored += len;
		free(z);
		free(p);
	}
	closedir(d);
	ok(!bad, "every container holds whole segments");
	ok(nseg == r.plan.unique_segments && distinct(segs, nseg) == nseg,
	   "store: %llu segments, all distinct (planned %llu)", (unsigned long long)nseg,
	   (unsigned long long)r.plan.unique_segments);
	ok(nblk && distinct(blocks, nblk) == nblk,
	   "store: all %llu 4 KiB blocks distinct: an array's dedup finds nothing more",
	   (unsigned long long)nblk);
	ok(stored && fabs((double)comp / (double)stored - 0.5) < 0.03,
	   "zstd -3 keeps %.3f of the store (configured 0.5)", stored ? (double)comp / stored : 0);

	/* the logical images, rebuilt from the maps and the containers, hashed */
	for (s = 0; s < o.streams; s++)
		for (g = 0; g < o.generations; g++) {
			size_t len, k;
			uint64_t *m;

			snprintf(path, sizeof(path), "%s/store/maps/s%u-g%u.map", dir, s, g);
			m = slurp(path, &len);
			if (!m || len != 64 * 32) {
				bad++;
				free(m);
				continue;
			}
			logical = realloc(logical, (nlog + len / 32) * sizeof(*logical));
			for (k = 0; k < len / 32; k++) {
				uint32_t *e = (uint32_t *)(m + 4 * k + 2);
				char f[700];
				uint8_t buf[SEG];
				struct h128 h;
				int fd;

				snprintf(f, sizeof(f), "%s/store/data/%08x.bin", dir, e[0]);
				fd = open(f, O_RDONLY);
				if (fd < 0 || pread(fd, buf, e[2], e[1]) != (ssize_t)e[2] ||
				    e[2] != SEG) {
					bad++;
				} else {
					hash(buf, e[2], &h);
					if (h.lo != m[4 * k] || h.hi != m[4 * k + 1])
						bad++;
					logical[nlog++] = h;
					lbytes += e[2];
				}
				if (fd >= 0)
					close(fd);
			}
			free(m);
		}
	ok(!bad, "every map entry names a segment whose bytes hash to its fingerprint");
	ok(nlog == r.plan.segments, "the maps hold %llu segments (planned %llu)",
	   (unsigned long long)nlog, (unsigned long long)r.plan.segments);
	nseg = distinct(logical, nlog);
	ok(nseg == r.plan.unique_segments && fabs((double)lbytes / ((double)nseg * SEG) - 2.4) < 1e-9,
	   "the logical images hash to %llu distinct segments: dedup ratio %.3f (configured 2.4)",
	   (unsigned long long)nseg, nseg ? (double)lbytes / ((double)nseg * SEG) : 0);
	ok(r.gen[0].logical_bytes == 2 * 8 * MIB && r.gen[2].new_segments == 2 * 16,
	   "result: generation 0 backed up 16 MiB, generation 2 found 32 new segments");
	iotap_workload_dedup_result_release(&r);
	free(segs);
	free(blocks);
	free(logical);
	rm_rf(dir);
}

/* --- 3. the trace, op by op ----------------------------------------------------- */

enum kind { K_OTHER, K_CONT, K_TMP, K_INDEX, K_MAP };

struct file {
	uint64_t ino;
	enum kind kind;
	uint64_t end;			/* next sequential offset */
	int dirty;			/* written since its last fsync */
	int fsyncs, full_fsync;
};

struct phase_sum {
	char name[32];
	uint64_t writes, reads, bad, rbytes, renames, unlinks, fsyncs;
};

struct tsum {
	struct file f[512];
	unsigned int nf;
	struct phase_sum ph[16];
	unsigned int nph;
	int order_ok;
};

static struct file *file_of(struct tsum *t, uint64_t ino)
{
	unsigned int i;

	for (i = 0; i < t->nf; i++)
		if (t->f[i].ino == ino)
			return &t->f[i];
	if (t->nf == 512)
		return &t->f[0];
	memset(&t->f[t->nf], 0, sizeof(t->f[0]));
	t->f[t->nf].ino = ino;
	return &t->f[t->nf++];
}

static void check_op(struct phase_sum *p, struct file *f, const struct iotap_trace_rec *rec,
		     const struct iotap_workload_dedup_opts *o)
{
	int backup = !strncmp(p->name, "backup", 6), restore = !strncmp(p->name, "restore", 7);
	int compact = !strcmp(p->name, "compact");

	switch (rec->op) {
	case IOTAP_OP_WRITE:
		p->writes++;
		if (restore)
			p->bad++;
		if (rec->result != (int64_t)rec->length)
			p->bad++;
		if (f->kind == K_CONT && backup &&
		    (rec->length != o->segment_bytes || rec->offset != f->end ||
		     rec->offset + rec->length > o->container_bytes))
			p->bad++;
		if (f->kind == K_TMP && (rec->offset != f->end || rec->length > MIB))
			p->bad++;
		if (f->kind == K_INDEX && (rec->length != 4096 || rec->offset % 4096))
			p->bad++;
		if (f->kind == K_MAP && (rec->length % 32 || rec->length > 65536 ||
					 rec->offset != f->end))
			p->bad++;
		f->end = rec->offset + rec->length;
		f->dirty = 1;
		break;
	case IOTAP_OP_READ:
		p->reads++;
		if (rec->result != (int64_t)rec->length)
			p->bad++;
		if (f->kind == K_INDEX && (rec->length != 4096 || rec->offset % 4096))
			p->bad++;
		if (f->kind == K_CONT && restore) {
			if (rec->length % o->segment_bytes || rec->length > MIB)
				p->bad++;
			p->rbytes += rec->length;
		}
		if (f->kind == K_CONT && compact) {
			if (rec->offset != f->end || rec->length > MIB)
				p->bad++;
			f->end = rec->offset + rec->length;
		}
		if (f->kind == K_MAP && rec->offset != f->end)
			p->bad++;
		if (f->kind == K_MAP)
			f->end = rec->offset + rec->length;
		break;
	case IOTAP_OP_FSYNC:
		p->fsyncs++;
		f->dirty = 0;
		f->fsyncs++;
		if (!(rec->flags & IOTAP_OPF_DATASYNC))
			f->full_fsync = 1;
		/* appends and batches are fdatasync'd; a compacted container fsync'd */
		if ((f->kind == K_TMP) != !(rec->flags & IOTAP_OPF_DATASYNC))
			p->bad++;
		break;
	case IOTAP_OP_RELEASE:
		if (f->dirty)
			p->bad++;	/* closed with unsynced writes */
		f->end = 0;
		break;
	case IOTAP_OP_RENAME:
		p->renames++;
		if (f->kind != K_TMP || !f->full_fsync || f->dirty)
			p->bad++;
		break;
	case IOTAP_OP_UNLINK:
		p->unlinks++;
		break;
	default:
		break;
	}
}

static int read_trace(const char *path, struct tsum *t, const struct iotap_workload_dedup_opts *o)
{
	struct iotap_trace_reader *r;
	struct iotap_trace_rec rec;
	struct phase_sum *cur = NULL;
	int ret;

	memset(t, 0, sizeof(*t));
	t->order_ok = 1;
	if (iotap_trace_reader_open(&r, path, 0))
		return -1;
	while ((ret = iotap_trace_reader_next(r, &rec)) > 0) {
		if (rec.type == IOTAP_REC_NAME && rec.name) {
			struct file *f = file_of(t, rec.file);
			const char *n = rec.name;
			size_t l = strlen(n);

			f->kind = l > 4 && !strcmp(n + l - 4, ".bin") ? K_CONT :
				  l > 4 && !strcmp(n + l - 4, ".tmp") ? K_TMP :
				  !strcmp(n, "index") ? K_INDEX :
				  l > 4 && !strcmp(n + l - 4, ".map") ? K_MAP : K_OTHER;
			continue;
		}
		if (rec.type == IOTAP_REC_PHASE) {
			if (rec.flags == IOTAP_PHASE_BEGIN) {
				if (cur || t->nph == 16) {
					t->order_ok = 0;
					continue;
				}
				cur = &t->ph[t->nph++];
				snprintf(cur->name, sizeof(cur->name), "%s", rec.name ? rec.name : "");
			} else {
				unsigned int i;

				if (!cur || strcmp(cur->name, rec.name ? rec.name : ""))
					t->order_ok = 0;
				/* a backup ends with its index batch on disk */
				for (i = 0; cur && !strncmp(cur->name, "backup", 6) && i < t->nf; i++)
					if (t->f[i].kind == K_INDEX && t->f[i].dirty)
						cur->bad++;
				cur = NULL;
			}
			continue;
		}
		if (rec.type != IOTAP_REC_OP || !cur)
			continue;
		check_op(cur, file_of(t, rec.file), &rec, o);
	}
	iotap_trace_reader_close(r);
	return ret;
}

static struct phase_sum *phase(struct tsum *t, const char *name)
{
	unsigned int i;

	for (i = 0; i < t->nph; i++)
		if (!strcmp(t->ph[i].name, name))
			return &t->ph[i];
	return NULL;
}

static void test_trace(void)
{
	static const char *const order[] = {
		"init", "backup gen=0", "backup gen=1", "backup gen=2", "restore gen=0",
		"restore gen=1", "restore gen=2", "expire", "compact",
	};
	struct iotap_workload_dedup_opts o;
	struct iotap_workload_dedup_result r;
	char dir[300], meta[300], trace[300];
	struct phase_sum *p;
	struct tsum *t = calloc(1, sizeof(*t));
	unsigned int i, bad = 0, ok_order;
	int ret;

	snprintf(dir, sizeof(dir), "%s/t", tmpdir);
	snprintf(meta, sizeof(meta), "%s/m", tmpdir);
	snprintf(trace, sizeof(trace), "%s/d.iotap", tmpdir);
	mkdir(meta, 0755);
	small_opts(&o);
	o.meta_dir = meta;
	o.expire = 1;
	o.compact_threshold = 0.1;
	/* 12 segments: containers straddle the 1 MiB extents, so some die only in part */
	o.container_bytes = 3 * MIB / 2;
	ret = run(dir, trace, &o, &r);
	ok(!ret && !r.partial && !r.failed, "traced run with --meta-dir, expiry and compaction");
	ok(r.expired_images == 2 && r.dead_segments > 0 && r.containers_rewritten > 0,
	   "expiry: 2 images, %llu segments dead; compaction rewrote %llu containers, removed %llu",
	   (unsigned long long)r.dead_segments, (unsigned long long)r.containers_rewritten,
	   (unsigned long long)r.containers_removed);
	for (i = 0; i < 3; i++)
		bad += r.gen[i].verify_errors;
	ok(!bad, "restores: every segment read back hashes to its fingerprint");
	ok(r.gen[1].index_reads > 0 && r.gen[1].lookups == 128 && r.gen[1].miss_p99_s > 0,
	   "generation 1: 128 look-ups, %llu index reads, miss p99 %.3f ms",
	   (unsigned long long)r.gen[1].index_reads, r.gen[1].miss_p99_s * 1e3);
	if (!ok(read_trace(trace, t, &o) == 0, "the trace reads back")) {
		free(t);
		return;
	}
	ok_order = t->order_ok && t->nph == 9;
	for (i = 0; ok_order && i < 9; i++)
		ok_order = !strcmp(t->ph[i].name, order[i]);
	ok(ok_order, "phases: init, backup gen=0..2, restore gen=0..2, expire, compact");
	for (i = 0, bad = 0; i < t->nph; i++)
		if (t->ph[i].bad) {
			diag("phase '%s': %llu ops against the spec", t->ph[i].name,
			     (unsigned long long)t->ph[i].bad);
			bad++;
		}
	ok(!bad, "every op as specified: appends, fdatasyncs, 4 KiB index I/O, maps, restores");
	p = phase(t, "backup gen=1");
	ok(p && p->writes && p->reads && p->fsyncs, "backup gen=1: index reads, appends, syncs");
	for (i = 0, bad = 0; i < 3; i++) {
		char name[32];

		snprintf(name, sizeof(name), "restore gen=%u", i);
		p = phase(t, name);
		if (!p || p->writes || p->rbytes != 2 * 8 * MIB)
			bad++;
	}
	ok(!bad, "restores: no writes, every byte of both images read from the containers");
	p = phase(t, "expire");
	ok(p && p->unlinks == 2, "expire: the two oldest maps unlinked");
	p = phase(t, "compact");
	ok(p && p->renames == r.containers_rewritten && p->unlinks >= r.containers_rewritten,
	   "compact: one fsync'd .tmp renamed per rewritten container, old ones unlinked");
	iotap_workload_dedup_result_release(&r);
	free(t);
	ok(rmdir(dir) == 0 && rmdir(meta) == 0, "the run left nothing behind, in DIR or meta");
}

/* --- 4. the restic flavor ---------------------------------------------------------- */

struct rsum {
	uint64_t writes, max_write, reads, max_read, renames, bad, fsyncdirs;
};

static void test_restic(void)
{
	static const char *const order[] = {
		"init", "backup gen=0", "backup gen=1", "backup gen=2", "restore gen=0",
		"restore gen=1", "restore gen=2", "expire", "compact",
	};
	struct iotap_workload_dedup_opts o;
	struct iotap_workload_dedup_result r;
	struct iotap_trace_reader *rd;
	struct iotap_trace_rec rec;
	struct rsum ph[16];
	struct {
		uint64_t ino;
		int dirty;
	} files[1024];
	unsigned int nph = 0, nf = 0, i, bad = 0, names_ok = 1;
	char dir[300], trace[300];
	int ret, cur = -1;

	memset(ph, 0, sizeof(ph));
	snprintf(dir, sizeof(dir), "%s/r", tmpdir);
	snprintf(trace, sizeof(trace), "%s/r.iotap", tmpdir);
	iotap_workload_dedup_opts_init(&o);
	o.flavor = IOTAP_DEDUP_RESTIC;
	o.name = "repo";
	o.streams = 1;
	o.image_bytes = 24 * MIB;
	o.generations = 3;
	o.change = 0.10;
	o.dup = 0;
	o.container_bytes = 4 * MIB;
	o.compact_threshold = 0.05;
	ret = run(dir, trace, &o, &r);
	ok(!ret && r.gens_run == 3 && r.restores_run == 3 && r.compact.ran,
	   "restic flavor: 3 backups, 3 restores, forget and prune");
	ok(r.gens_run == 3 && r.gen[0].new_segments == r.gen[0].segments &&
	   r.gen[1].new_segments > 0 && r.gen[1].new_segments < r.gen[1].segments / 2,
	   "restic: all chunks new at first, a few after a 10%% change (%llu of %llu)",
	   (unsigned long long)(r.gens_run == 3 ? r.gen[1].new_segments : 0),
	   (unsigned long long)(r.gens_run == 3 ? r.gen[1].segments : 0));
	ok(r.gens_run == 3 && r.gen[0].segments >= 24 / 8 && r.gen[0].segments <= 24 * 2,
	   "restic: chunks of 512 KiB to 8 MiB (%llu for 24 MiB)",
	   (unsigned long long)(r.gens_run == 3 ? r.gen[0].segments : 0));
	if (!ok(!iotap_trace_reader_open(&rd, trace, 0), "restic: the trace reads back"))
		return;
	while (iotap_trace_reader_next(rd, &rec) > 0) {
		struct rsum *p = cur >= 0 ? &ph[cur] : NULL;
		unsigned int k;

		if (rec.type == IOTAP_REC_PHASE) {
			if (rec.flags == IOTAP_PHASE_BEGIN && nph < 16) {
				if (nph >= 9 || strcmp(rec.name ? rec.name : "", order[nph]))
					names_ok = 0;
				cur = (int)nph++;
			} else {
				cur = -1;
			}
			continue;
		}
		if (rec.type != IOTAP_REC_OP || !p)
			continue;
		for (k = 0; k < nf && files[k].ino != rec.file; k++)
			;
		if (k == nf && nf < 1024) {
			files[nf].ino = rec.file;
			files[nf++].dirty = 0;
		}
		switch (rec.op) {
		case IOTAP_OP_WRITE:
			p->writes++;
			if (rec.length > p->max_write)
				p->max_write = rec.length;
			if (k < nf)
				files[k].dirty = 1;
			break;
		case IOTAP_OP_READ:
			p->reads++;
			if (rec.length > p->max_read)
				p->max_read = rec.length;
			break;
		case IOTAP_OP_FSYNC:
			if (rec.flags & IOTAP_OPF_DATASYNC)
				p->bad++;	/* restic's Sync() is fsync */
			if (k < nf)
				files[k].dirty = 0;
			break;
		case IOTAP_OP_RENAME:
			p->renames++;
			if (k < nf && files[k].dirty)
				p->bad++;	/* renamed before its fsync */
			break;
		case IOTAP_OP_FSYNCDIR:
			p->fsyncdirs++;
			break;
		default:
			break;
		}
	}
	iotap_trace_reader_close(rd);
	ok(names_ok && nph == 9, "restic: phases init, backup, restore, expire, compact");
	for (i = 0; i < nph; i++)
		bad += ph[i].bad || ph[i].max_write > 32768 || ph[i].max_read > 4 * MIB ||
		       ph[i].renames != ph[i].fsyncdirs;
	ok(!bad, "restic: 32 KiB writes, every file fsync'd, renamed, its directory fsync'd; "
	   "reads of at most 4 MiB");
	ok(nph == 9 && ph[1].renames >= 5 && ph[4].reads > 0 && ph[4].renames == 1 &&
	   ph[8].renames > 0, "restic: a backup saves packs, tree, index, snapshot and lock; a "
	   "restore only its lock; prune new packs");
	iotap_workload_dedup_result_release(&r);
	ok(rmdir(dir) == 0, "restic: the run left nothing behind");
}

/* --- 5. borg: what one changed extent stores --------------------------------- */

/*
 * A later generation of the borg flavor keeps every cut of the last one
 * (borg's buzhash chunker finds its old cuts again after a change) and
 * stores anew exactly the chunks that overlap the changed 1 MiB extent. On
 * average that is what borg's own chunker stores for a 1 MiB change of
 * this content: 4.75 MiB (sd 2.4 over 240 changes; Debian's borgbackup
 * 1.2.4 Chunker(seed, 19, 23, 21, 4095), tests/bench/dedup-borg-chunker.py).
 * Cuts re-drawn after a change, or chunks of the wrong size, move the mean.
 */
static void test_borg_change(void)
{
	struct iotap_workload_dedup_opts o;
	struct dd_cfg cfg;
	struct dd_pos p;
	uint32_t *len0 = NULL;
	uint64_t seed, i, n0 = 0, bad_keep = 0, bad_set = 0, runs = 2000;
	double sum = 0;
	const char *why;

	iotap_workload_dedup_opts_init(&o);
	o.flavor = IOTAP_DEDUP_BORG;
	o.streams = 1;
	o.image_bytes = 64ull * MIB;
	o.generations = 2;
	o.change = 1.0 / 64;		/* one 1 MiB extent */
	o.dup = 0;
	o.compress = 0.5;
	if (dd_cfg_init(&cfg, &o, &why) || dd_pos_alloc(&p, cfg.positions)) {
		ok(0, "borg change: set-up (%s)", why ? why : "no memory");
		return;
	}
	len0 = malloc(p.cap * sizeof(*len0));
	for (seed = 1; len0 && seed <= runs; seed++) {
		uint64_t a = UINT64_MAX, b = 0, off = 0, lo = 0, hi = 0, stored = 0, e;
		int found;

		o.seed = seed;
		p.n = p.cap;
		p.serial = 0;
		dd_pos_generation(&cfg, &p, 0, 0);
		n0 = p.n;
		memcpy(len0, p.len, n0 * sizeof(*len0));
		dd_pos_generation(&cfg, &p, 0, 1);
		for (i = 0; i < p.n; i++) {
			if (p.n != n0 || p.len[i] != len0[i])
				bad_keep++;
			if (p.fresh[i] == DD_NEW) {
				if (a == UINT64_MAX) {
					a = i;
					lo = off;
				}
				b = i;
				hi = off + p.len[i];
				stored += p.len[i];
			}
			off += p.len[i];
		}
		/*
		 * new: one run of chunks [a, b] (bytes lo..hi), and an extent e that
		 * each of them overlaps and neither neighbour does
		 */
		found = 0;
		for (e = 0; a != UINT64_MAX && e < 64 && !found; e++)
			found = lo <= e * MIB && hi >= (e + 1) * MIB && lo + len0[a] > e * MIB &&
				hi - len0[b] < (e + 1) * MIB;
		if (!found || (a != UINT64_MAX && memchr(p.fresh + a, DD_KNOWN, b - a + 1)))
			bad_set++;
		sum += (double)stored / MIB;
	}
	ok(len0 && !bad_keep, "borg change: a later generation keeps every cut (%llu differ)",
	   (unsigned long long)bad_keep);
	ok(!bad_set, "borg change: the new chunks are one run overlapping one 1 MiB extent "
	   "(%llu runs not)", (unsigned long long)bad_set);
	ok(fabs(sum / runs / 4.75 - 1) < 0.06, "borg change: %.3f MiB stored per 1 MiB change, "
	   "borg's chunker 4.75 (within 6%%)", sum / runs);
	free(len0);
	dd_pos_free(&p);
}

int main(void)
{
	if (!mkdtemp(tmpdir)) {
		printf("Bail out! mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	test_plan();
	test_data();
	test_trace();
	test_restic();
	test_borg_change();
	rm_rf(tmpdir);
	return done_testing();
}
