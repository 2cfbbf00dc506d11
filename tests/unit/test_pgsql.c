// SPDX-License-Identifier: MIT
/*
 * test_pgsql.c - iotap run pgsql's trace, op by op, against what
 * PostgreSQL does (workload/pgsql*.c's specification)
 *
 * Small runs (scale 1, a few seconds, 1 s checkpoints) traced into a
 * temporary directory and read back:
 *   - files: relation files named <relfilenode>[_vm|_fsm][.N] in base/DB,
 *     WAL segments of 24 hex digits in pg_wal (pg_xlog for 8.4, or the
 *     --wal-dir), each created zero-filled as xlogtemp.PID (16 MiB in
 *     256 KiB writes, 8.4: 8 KiB) and installed by rename, pg_control;
 *   - every relation read and write is 8 KiB at an 8 KiB-aligned offset
 *     (17's combined reads: a multiple of 8 KiB);
 *   - WAL writes are whole 8 KiB pages, each starting at the page where
 *     the previous one on that segment ended or on that page (the partial
 *     tail page rewritten); every WAL fdatasync follows a WAL write of the
 *     same thread;
 *   - each checkpoint's write part writes relation pages sorted by file and
 *     block (9.6+), its sync part fsyncs every file it wrote and writes
 *     none, and pg_control is rewritten (8 KiB at 0) and fsynced;
 *   - the phases init, warmup, steady and "checkpoint N write/sync" are
 *     marked, BEGIN/END alternating; the directories are empty afterwards;
 *   - the results: transactions, checkpoints with buffers and files synced;
 *   - pgbench -i as 15 does it: ANALYZE hints each sampled block not in
 *     shared_buffers (posix_fadvise, untraced: the result counts them)
 *     and the key build then reads the same blocks; the parallel key
 *     build's two sorted runs (halves) in pgsql_tmpPID.0.fileset, each
 *     read back once more than written, spool2's empty runs in .1.fileset;
 *   - white-box (pgsql_i.h): LogwrtRqst.Write (the WAL writer's target)
 *     moves with records that cross a page; XLogFlush syncs all inserted.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"
#include "iotap_pgsql.h"
#include "iotap_trace.h"
#include "iotap_workload.h"
#include "pgsql_i.h"

#define MAXF 4096

static char tmpdir[] = "/tmp/iotap-test-pgsql.XXXXXX";

enum kind { K_OTHER, K_REL, K_WAL, K_WALTMP, K_CONTROL, K_DIR };

struct file {
	uint64_t ino;
	char name[64];
	uint64_t parent;
	enum kind kind;
	uint64_t relkey;		/* relfilenode << 2 | fork */
	uint32_t seg;
	uint64_t wal_end;		/* end of the last WAL write */
	int ckpt_written, ckpt_synced;
	uint64_t init_reads, init_writes;	/* in the init phase */
};

struct sum {
	struct file f[MAXF];
	unsigned int n;
	uint64_t db_ino, wal_ino;
	int order_ok, phases_ok;
	unsigned int n_init, n_warmup, n_steady, n_ckw, n_cks;
	uint64_t rel_ops, rel_bad, wal_writes, wal_bad, wal_syncs, wal_sync_bad;
	uint64_t zero_bytes, zero_bad, renames;
	uint64_t ckpt_writes, ckpt_unsorted, ckpt_unsynced, ckpt_sync_writes, ckpt_files;
	uint64_t control_writes, control_fsyncs;
	uint64_t steady_reads, steady_writes;
	uint64_t tmpset_ino[2];		/* base/pgsql_tmp/pgsql_tmpPID.{0,1}.fileset */
	uint64_t tmp_w[2][2], tmp_r[2][2];	/* [fileset][participant] blocks written, read */
};

static struct file *find(struct sum *s, uint64_t ino)
{
	unsigned int i;

	for (i = 0; i < s->n; i++)
		if (s->f[i].ino == ino)
			return &s->f[i];
	return NULL;
}

static void classify(struct sum *s, struct file *f)
{
	const char *n = f->name;
	size_t l = strlen(n), i;

	f->kind = K_OTHER;
	if (!strcmp(n, "pg_control")) {
		f->kind = K_CONTROL;
	} else if (!strncmp(n, "xlogtemp.", 9)) {
		f->kind = K_WALTMP;
	} else if (l == 24 && strspn(n, "0123456789ABCDEF") == 24) {
		f->kind = K_WAL;
	} else if (f->parent == s->db_ino && l && n[0] >= '1' && n[0] <= '9') {
		char *e;

		f->kind = K_REL;
		f->relkey = strtoull(n, &e, 10) << 2;
		if (!strncmp(e, "_fsm", 4)) {
			f->relkey |= 1;
			e += 4;
		} else if (!strncmp(e, "_vm", 3)) {
			f->relkey |= 2;
			e += 3;
		}
		f->seg = *e == '.' ? (uint32_t)strtoul(e + 1, NULL, 10) : 0;
	}
	(void)i;
}

/* A sort run file's counts, kept before its inode number names another file. */
static void fold_tmp(struct sum *s, struct file *f)
{
	unsigned int k;

	for (k = 0; k < 2; k++) {
		if (s->tmpset_ino[k] && f->parent == s->tmpset_ino[k] &&
		    (!strcmp(f->name, "0.0") || !strcmp(f->name, "1.0"))) {
			s->tmp_w[k][f->name[0] - '0'] += f->init_writes;
			s->tmp_r[k][f->name[0] - '0'] += f->init_reads;
		}
	}
	f->init_reads = f->init_writes = 0;
}

static void name_rec(struct sum *s, const struct iotap_trace_rec *r)
{
	struct file *f = find(s, r->file);
	char nm[64];

	snprintf(nm, sizeof(nm), "%.*s", (int)r->name_len, r->name ? r->name : "");
	if ((r->mode & S_IFMT) == S_IFDIR) {
		if (!strcmp(nm, "5") || !strcmp(nm, "11564") || !strcmp(nm, "12407"))
			s->db_ino = r->file;
		if (!strcmp(nm, "pg_wal") || !strcmp(nm, "pg_xlog"))
			s->wal_ino = r->file;
		if (!strncmp(nm, "pgsql_tmp", 9) && strstr(nm, ".fileset")) {
			const char *d = strstr(nm, ".fileset");

			if (d[-2] == '.' && (d[-1] == '0' || d[-1] == '1'))
				s->tmpset_ino[d[-1] - '0'] = r->file;
		}
	}
	if (!f) {
		if (s->n >= MAXF)
			return;
		f = &s->f[s->n++];
		memset(f, 0, sizeof(*f));
		f->ino = r->file;
	}
	if (f->parent != r->file2 || strcmp(f->name, nm))
		fold_tmp(s, f);
	snprintf(f->name, sizeof(f->name), "%s", nm);
	f->parent = r->file2;
	f->wal_end = 0;
	classify(s, f);
}

static int read_trace(const char *path, struct sum *s)
{
	struct iotap_trace_reader *rd;
	struct iotap_trace_rec r;
	char phase[64] = "", last_ckw[64] = "";
	uint32_t ck_tid = 0, last_wal_write_tid[64] = { 0 };
	uint64_t last_key = 0;
	int open = 0, ret, in_ckw = 0, in_cks = 0;
	unsigned int i;

	memset(s, 0, sizeof(*s));
	s->order_ok = 1;
	if (iotap_trace_reader_open(&rd, path, 0))
		return -1;
	while ((ret = iotap_trace_reader_next(rd, &r)) > 0) {
		struct file *f;

		if (r.type == IOTAP_REC_NAME) {
			name_rec(s, &r);
			continue;
		}
		if (r.type == IOTAP_REC_PHASE) {
			char nm[64];

			snprintf(nm, sizeof(nm), "%.*s", (int)r.name_len, r.name ? r.name : "");
			if (r.flags == IOTAP_PHASE_BEGIN) {
				if (open)
					s->order_ok = 0;
				open = 1;
				snprintf(phase, sizeof(phase), "%s", nm);
				in_ckw = !strncmp(nm, "checkpoint ", 11) && strstr(nm, " write");
				in_cks = !strncmp(nm, "checkpoint ", 11) && strstr(nm, " sync");
				s->n_init += !strcmp(nm, "init");
				s->n_warmup += !strcmp(nm, "warmup");
				s->n_steady += !strcmp(nm, "steady");
				s->n_ckw += in_ckw;
				s->n_cks += in_cks;
				/*
				 * a new checkpoint's write part; the same name again is the
				 * part resuming after an empty warmup/steady marker (which
				 * the owner thread writes), not a new one
				 */
				if (in_ckw && strcmp(nm, last_ckw)) {
					ck_tid = r.tid;
					last_key = 0;
					for (i = 0; i < s->n; i++)
						s->f[i].ckpt_written = s->f[i].ckpt_synced = 0;
					snprintf(last_ckw, sizeof(last_ckw), "%s", nm);
				}
			} else {
				if (!open || strcmp(phase, nm))
					s->order_ok = 0;
				/* the checkpointer's own END (the owner may cut the part
				 * with an empty warmup/steady marker, then it resumes) */
				if (in_cks && r.tid == ck_tid) {
					for (i = 0; i < s->n; i++)
						if (s->f[i].ckpt_written && !s->f[i].ckpt_synced)
							s->ckpt_unsynced++;
				}
				open = 0;
				in_ckw = in_cks = 0;
			}
			continue;
		}
		if (r.type != IOTAP_REC_OP)
			continue;
		if (r.op == IOTAP_OP_RENAME) {
			s->renames++;
			continue;
		}
		f = find(s, r.file);
		if (!f)
			continue;
		switch (r.op) {
		case IOTAP_OP_READ:
		case IOTAP_OP_WRITE:
			if (!strcmp(phase, "init")) {
				f->init_reads += r.op == IOTAP_OP_READ;
				f->init_writes += r.op == IOTAP_OP_WRITE;
			}
			if (f->kind == K_REL) {
				s->rel_ops++;
				if (r.offset % 8192 || !r.length || r.length % 8192 ||
				    (r.op == IOTAP_OP_WRITE && r.length != 8192))
					s->rel_bad++;
				if (!strcmp(phase, "steady")) {
					s->steady_reads += r.op == IOTAP_OP_READ;
					s->steady_writes += r.op == IOTAP_OP_WRITE;
				}
				if (in_ckw && r.tid == ck_tid && r.op == IOTAP_OP_WRITE) {
					uint64_t key = (f->relkey << 40) |
						       ((uint64_t)f->seg * 131072 + r.offset / 8192);

					s->ckpt_writes++;
					if (key <= last_key)
						s->ckpt_unsorted++;
					last_key = key;
					f->ckpt_written = 1;
				}
				if (in_cks && r.tid == ck_tid && r.op == IOTAP_OP_WRITE)
					s->ckpt_sync_writes++;
			} else if (f->kind == K_WAL && r.op == IOTAP_OP_WRITE) {
				s->wal_writes++;
				if (r.offset % 8192 || !r.length || r.length % 8192 ||
				    (f->wal_end && (r.offset + 8192 < f->wal_end ||
						    r.offset > f->wal_end)) ||
				    (!f->wal_end && r.offset && r.offset % (16u << 20) == 0))
					s->wal_bad++;
				f->wal_end = r.offset + r.length;
				last_wal_write_tid[r.tid % 64] = r.tid;
			} else if (f->kind == K_WALTMP && r.op == IOTAP_OP_WRITE) {
				s->zero_bytes += r.length;
				if (r.offset % r.length)
					s->zero_bad++;
			} else if (f->kind == K_CONTROL && r.op == IOTAP_OP_WRITE) {
				if (r.offset || r.length != 8192)
					s->zero_bad++;
				s->control_writes++;
			}
			break;
		case IOTAP_OP_FSYNC:
			if (f->kind == K_WAL && (r.flags & IOTAP_OPF_DATASYNC)) {
				s->wal_syncs++;
				if (last_wal_write_tid[r.tid % 64] != r.tid)
					s->wal_sync_bad++;
				last_wal_write_tid[r.tid % 64] = 0;
			}
			if (f->kind == K_REL && in_cks && r.tid == ck_tid) {
				if (!f->ckpt_synced)
					s->ckpt_files++;
				f->ckpt_synced = 1;
			}
			if (f->kind == K_CONTROL)
				s->control_fsyncs++;
			break;
		default:
			break;
		}
	}
	iotap_trace_reader_close(rd);
	for (i = 0; i < s->n; i++)
		if (s->f[i].kind != K_REL)
			fold_tmp(s, &s->f[i]);
	s->phases_ok = s->order_ok && !open;
	return ret;
}

static int dir_empty(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	int n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return !n;
}

static int run(const char *label, struct iotap_workload_pgsql_opts *o, const char *dir,
	       const char *trace, struct iotap_workload_pgsql_result *r)
{
	struct iotap_workload_env env = {
		.target = dir, .trace_path = trace, .cmdline = label, .workload = label,
		.flags = IOTAP_WORKLOAD_TRACE_FORCE,
	};
	struct iotap_workload_ctx *c;
	int ret;

	ret = iotap_workload_ctx_open(&c, &env);
	if (ret)
		return ret;
	ret = iotap_workload_pgsql_run(c, o, r);
	if (ret)
		diag("%s: %s: %s", label, iotap_workload_ctx_error(c), strerror(-ret));
	if (iotap_workload_ctx_close(c) && !ret)
		ret = -EIO;
	return ret;
}

static void small(struct iotap_workload_pgsql_opts *o, enum iotap_pgsql_era era)
{
	iotap_workload_pgsql_opts_init(o, era);
	o->scale = 1;
	o->clients = 3;
	o->duration_ns = 3500000000ull;
	o->warmup_ns = 500000000ull;
	o->checkpoint_timeout_ns = 1000000000ull;
	o->seed = 7;
}

/* pgbench -i's reads: ANALYZE's hints, the parallel key build's sorted runs. */
static void check_init(const struct sum *s, const struct iotap_workload_pgsql_result *r,
		       enum iotap_pgsql_era era, uint64_t sb, const char *label)
{
	uint64_t acc_reads = 0, hints = r->io_init.prefetches;
	const uint64_t (*w)[2] = s->tmp_w, (*rd)[2] = s->tmp_r;
	unsigned int i;

	for (i = 0; i < s->n; i++) {
		const struct file *f = &s->f[i];

		if (f->kind == K_REL && f->relkey == 16403ull << 2 && !f->seg)
			acc_reads = f->init_reads;
	}
	if (era == IOTAP_PGSQL_15 && sb) {
		/*
		 * scale 1 (1640 accounts pages) through 256 buffers: ANALYZE hints
		 * and reads every block its 32-page ring did not leave behind; the
		 * key build reads the same ones (a few more, evicted meanwhile)
		 */
		ok(hints > 1500 && acc_reads >= 2 * hints && acc_reads <= 2 * hints + 64,
		   "%s: ANALYZE hints %" PRIu64 " blocks ahead of reading them; init reads "
		   "accounts %" PRIu64 " times (ANALYZE + key build)", label, hints, acc_reads);
	} else if (!sb) {
		ok(hints == 0, "%s: no hints when the table is in shared_buffers (%" PRIu64 ")",
		   label, hints);
	}
	if (era < IOTAP_PGSQL_15) {
		ok(!s->tmpset_ino[0] && !s->tmpset_ino[1],
		   "%s: no parallel key build before 11: no sort runs in pgsql_tmp", label);
		return;
	}
	ok(s->tmpset_ino[0] && s->tmpset_ino[1] && w[0][0] && w[0][1] &&
	   (w[0][0] > w[0][1] ? w[0][0] - w[0][1] : w[0][1] - w[0][0]) <= 1 &&
	   rd[0][0] == w[0][0] + 1 && rd[0][1] == w[0][1] + 1 &&
	   w[1][0] == 1 && w[1][1] == 1 && rd[1][0] == 1 && rd[1][1] == 1,
	   "%s: parallel key build: runs of %" PRIu64 " and %" PRIu64 " blocks, read back %"
	   PRIu64 " and %" PRIu64 " times; spool2's runs %" PRIu64 "/%" PRIu64 " written, %"
	   PRIu64 "/%" PRIu64 " read", label, w[0][0], w[0][1], rd[0][0], rd[0][1], w[1][0],
	   w[1][1], rd[1][0], rd[1][1]);
}

static void test_era(enum iotap_pgsql_era era, uint64_t sb, const char *wal_dir, int segs)
{
	struct iotap_workload_pgsql_opts o;
	struct iotap_workload_pgsql_result r;
	static struct sum s;
	char dir[300], wal[300], tr[300], label[64];
	const char *e = iotap_workload_pgsql_era_name(era);
	unsigned int i;
	int ret;

	snprintf(label, sizeof(label), "pgsql --era %s%s%s", e, wal_dir ? " --wal-dir" : "",
		 sb ? " small shared_buffers" : "");
	snprintf(dir, sizeof(dir), "%s/data", tmpdir);
	snprintf(wal, sizeof(wal), "%s/wal", tmpdir);
	snprintf(tr, sizeof(tr), "%s/pg.iotap", tmpdir);
	mkdir(dir, 0755);
	mkdir(wal, 0755);
	small(&o, era);
	if (sb)
		o.shared_buffers = sb;
	if (wal_dir)
		o.wal_dir = wal;
	if (segs)
		o.checkpoint_segments = (uint32_t)segs;
	ret = run(label, &o, dir, tr, &r);
	ok(!ret, "%s: runs", label);
	ok(r.txns_all > 100 && r.tps_all > 0 && r.tps_steady > 0 && r.lat_avg_ms > 0,
	   "%s: %" PRIu64 " transactions, %.0f tps", label, r.txns_all, r.tps_all);
	ok(r.nckpt >= 1 && r.ckpt[0].buffers > 0 && r.ckpt[0].sync_files > 0,
	   "%s: %u checkpoints, the first wrote %" PRIu64 " buffers and synced %u files", label,
	   r.nckpt, r.nckpt ? r.ckpt[0].buffers : 0, r.nckpt ? r.ckpt[0].sync_files : 0);
	if (segs) {
		for (i = 0; i < r.nckpt && !r.ckpt[i].by_wal; i++)
			;
		ok(i < r.nckpt, "%s: checkpoint_segments %d starts checkpoints by WAL volume",
		   label, segs);
	}
	ok(r.io_steady.wal_syncs > 0 && r.io_steady.wal_bytes > 100 * r.io_steady.txns,
	   "%s: %.0f WAL bytes and %.2f syncs per transaction", label,
	   (double)r.io_steady.wal_bytes / (double)(r.io_steady.txns + !r.io_steady.txns),
	   (double)r.io_steady.wal_syncs / (double)(r.io_steady.txns + !r.io_steady.txns));
	ok(dir_empty(dir) && dir_empty(wal), "%s: data and WAL directories empty afterwards",
	   label);
	ok(!read_trace(tr, &s), "%s: trace reads back", label);
	/*
	 * a checkpoint (by WAL volume, say) may cut init or warmup too: init#2.
	 * With checkpoint_segments 1 they follow each other, and on a loaded
	 * machine one may span the whole 0.5 s warm-up: its phase is then the
	 * checkpoint's, and no "warmup" phase opens.
	 */
	ok(s.phases_ok && s.n_init >= 1 && (s.n_warmup >= 1 || segs) && s.n_steady >= 1 &&
	   s.n_ckw >= 1 &&
	   s.n_cks >= 1, "%s: phases init (x%u), warmup (x%u), steady (x%u), checkpoint write "
	   "(x%u) and sync (x%u), BEGIN/END alternating", label, s.n_init, s.n_warmup,
	   s.n_steady, s.n_ckw, s.n_cks);
	ok(s.rel_ops > 1000 && !s.rel_bad, "%s: %" PRIu64 " relation reads/writes, all 8 KiB "
	   "pages at 8 KiB offsets (%" PRIu64 " not)", label, s.rel_ops, s.rel_bad);
	ok(s.wal_writes > 100 && !s.wal_bad, "%s: %" PRIu64 " WAL writes, whole pages from the "
	   "last written page on (%" PRIu64 " not)", label, s.wal_writes, s.wal_bad);
	ok(s.wal_syncs > 100 && s.wal_sync_bad * 200 <= s.wal_syncs,
	   "%s: %" PRIu64 " WAL fdatasyncs, each after the thread's WAL write (%" PRIu64 " not)",
	   label, s.wal_syncs, s.wal_sync_bad);
	ok(s.zero_bytes && s.zero_bytes % (16u << 20) == 0 && !s.zero_bad && s.renames,
	   "%s: WAL segments zero-filled (%" PRIu64 " MiB) and installed by rename", label,
	   s.zero_bytes >> 20);
	ok(s.wal_ino || wal_dir, "%s: WAL in %s", label,
	   wal_dir ? "--wal-dir" : era >= IOTAP_PGSQL_15 ? "pg_wal" : "pg_xlog");
	if (o.sorted_checkpoints)
		ok(s.ckpt_writes && !s.ckpt_unsorted, "%s: checkpoint writes (%" PRIu64 ") sorted "
		   "by file and block (%" PRIu64 " out of order)", label, s.ckpt_writes,
		   s.ckpt_unsorted);
	ok(s.ckpt_files && !s.ckpt_unsynced && !s.ckpt_sync_writes,
	   "%s: each sync part fsyncs every file its write part wrote (%" PRIu64 " files, %"
	   PRIu64 " missed, %" PRIu64 " writes in sync parts)", label, s.ckpt_files,
	   s.ckpt_unsynced, s.ckpt_sync_writes);
	ok(s.control_writes >= r.nckpt && s.control_fsyncs >= s.control_writes,
	   "%s: pg_control rewritten (8 KiB at 0) and fsynced per checkpoint", label);
	if (sb)
		ok(s.steady_reads > 0 && r.io_steady.writes_backend + r.io_steady.writes_bgwriter > 0,
		   "%s: a small pool reads pages back (%" PRIu64 ") and evicts dirty ones", label,
		   s.steady_reads);
	check_init(&s, &r, era, sb, label);
	iotap_workload_pgsql_result_release(&r);
	unlink(tr);
}

/*
 * The WAL's positions (white-box, on pgsql_wal.c): a commit that stays on
 * its page leaves LogwrtRqst.Write (the WAL writer's target) where it was,
 * a record crossing pages moves it to its end; XLogFlush of the first of
 * two commits writes and syncs both (what is inserted when it takes the
 * lock), so the second's flush finds it durable: one fdatasync.
 */
static void test_wal_flush(void)
{
	struct iotap_workload_pgsql_opts o;
	struct iotap_workload_pgsql_result r;
	struct iotap_workload_ctx *c;
	static struct pg pg;
	char dir[300];
	struct iotap_workload_env env = { .target = dir };
	uint64_t a, b, big, d, w0, got;
	int added = 0, ret;

	snprintf(dir, sizeof(dir), "%s/walflush", tmpdir);
	mkdir(dir, 0755);
	small(&o, IOTAP_PGSQL_15);
	memset(&pg, 0, sizeof(pg));
	memset(&r, 0, sizeof(r));
	if (iotap_workload_ctx_open(&c, &env)) {
		ok(0, "WAL positions: context");
		return;
	}
	pg.c = c;
	pg.o = &o;
	pg.r = &r;
	pg.ckpt_segs = 64;
	pthread_mutex_init(&pg.state_lock, NULL);
	pthread_cond_init(&pg.state_cond, NULL);
	ok(!pg_wal_init(&pg), "WAL positions: WAL buffers");
	pg.wal.dirfd = c->dirfd;
	pg.wal.dir_ino = c->dir_ino;
	pg.wal.seg_hi = 0;
	ok(!pg_wal_seg_create(&pg, 1, &added) && added, "WAL positions: segment 1 created");
	/* start on a fresh page, so that neither commit crosses one */
	pthread_mutex_lock(&pg.wal.insert_lock);
	pg.wal.insert += PG_BLCKSZ - pg.wal.insert % PG_BLCKSZ + 100;
	atomic_store(&pg.wal.written, pg.wal.insert);
	atomic_store(&pg.wal.flushed, pg.wal.insert);
	atomic_store(&pg.wal.rqst_write, pg.wal.insert);
	pthread_mutex_unlock(&pg.wal.insert_lock);
	w0 = pg.wal.insert;
	a = pg_wal_insert(&pg, REC_COMMIT);
	b = pg_wal_insert(&pg, REC_COMMIT);
	got = atomic_load(&pg.wal.rqst_write);
	ok(got == w0, "commits within a page leave LogwrtRqst.Write at %" PRIu64 " (got %"
	   PRIu64 ")", (uint64_t)0, got - w0);
	big = pg_wal_insert(&pg, 3 * PG_BLCKSZ);
	d = pg_wal_insert(&pg, REC_COMMIT);
	got = atomic_load(&pg.wal.rqst_write);
	ok(got == big, "a record crossing pages moves LogwrtRqst.Write to its end (%" PRIu64
	   ", not the commit after it %" PRIu64 "; got %" PRIu64 ")", big - w0, d - w0, got - w0);
	ret = pg_wal_flush(&pg, a, 1);
	got = atomic_load(&pg.wal.flushed);
	ok(!ret && got == d, "XLogFlush of the first commit writes and syncs all inserted (%"
	   PRIu64 "; got %" PRIu64 ")", d - w0, got - w0);
	ret = pg_wal_flush(&pg, b, 1);
	ok(!ret && atomic_load(&pg.cnt.wal_syncs) == 1,
	   "the second commit finds it durable: one fdatasync (%" PRIu64 ")",
	   (uint64_t)atomic_load(&pg.cnt.wal_syncs));
	pg.wal.seg_lo = 1;
	pg.wal.seg_hi = 1;
	{
		char name[32];

		if (pg.wal.f.fd >= 0)
			wl_close(c, &pg.wal.f);
		pg_wal_seg_name(1, name, sizeof(name));
		unlinkat(c->dirfd, name, 0);
	}
	pg_wal_release(&pg);
	iotap_workload_ctx_close(c);
	rmdir(dir);
}

static void test_errors(void)
{
	struct iotap_workload_pgsql_opts o;
	struct iotap_workload_pgsql_result r;
	struct iotap_workload_ctx *c;
	char dir[300];
	struct iotap_workload_env env = { .target = dir };

	snprintf(dir, sizeof(dir), "%s/data", tmpdir);
	small(&o, IOTAP_PGSQL_15);
	o.warmup_ns = o.duration_ns;
	ok(!iotap_workload_ctx_open(&c, &env), "context without a trace");
	ok(iotap_workload_pgsql_run(c, &o, &r) == -EINVAL && dir_empty(dir),
	   "a warm-up as long as the run is refused, nothing written");
	iotap_workload_ctx_close(c);
}

int main(void)
{
	if (!mkdtemp(tmpdir)) {
		printf("Bail out! mkdtemp\n");
		return 1;
	}
	test_era(IOTAP_PGSQL_15, 0, NULL, 0);
	test_era(IOTAP_PGSQL_15, 2u << 20, "wal", 0);
	test_era(IOTAP_PGSQL_84, 0, NULL, 1);
	test_era(IOTAP_PGSQL_17, 0, NULL, 0);
	test_errors();
	test_wal_flush();
	{
		char cmd[400];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (system(cmd))
			diag("could not remove %s", tmpdir);
	}
	return done_testing();
}
