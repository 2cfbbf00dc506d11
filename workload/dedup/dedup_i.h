/* SPDX-License-Identifier: MIT */
/*
 * dedup_i.h - private declarations of the dedup model (workload/dedup*.c)
 *
 * Module prefix dd_. Files: dedup.c (the run, its phases in order, the
 * segment and container tables, init and cleanup), dedup_stream.c (the
 * backup and restore streams), dedup_compact.c (expiry, compaction),
 * dedup_restic.c and dedup_borg.c (the restic and borg flavors; borg's
 * repository and cache in dedup_borg_repo.c, prefix bg_), dedup_data.c
 * (what the images hold: content ids per position, segment bytes,
 * fingerprints), dedup_index.c (fingerprint cache and on-disk index),
 * dedup_out.c (the tables).
 *
 * Fingerprints are XXH3-128 of the segment bytes. That is not a
 * cryptographic hash (MSDP uses MD5, restic SHA-256): a model only needs
 * fingerprints that do not collide by accident, and XXH3 costs a tenth of
 * SHA-256's CPU, which keeps the model's own work small beside its I/O.
 */
#ifndef IOTAP_DEDUP_I_H
#define IOTAP_DEDUP_I_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "workload_i.h"
#include "iotap_dedup.h"

#define DD_PAGE		4096u		/* index bucket and I/O alignment */
#define DD_SLOTS	127u		/* entries in a bucket after its 32-byte header */
#define DD_ENTRY	32u		/* bytes of an index, map or cache entry */

struct dd_borg;
struct dd_flavor;

struct dd_fp {
	uint64_t lo, hi;
};

/* An index bucket entry and a segment map entry (32 bytes, host order). */
struct dd_entry {
	uint64_t lo, hi;		/* fingerprint */
	uint32_t cont;			/* container id */
	uint32_t off;			/* offset in the container */
	uint32_t len;			/* segment bytes */
	uint32_t flags;			/* 0 */
};

_Static_assert(sizeof(struct dd_entry) == DD_ENTRY, "index entry is 32 bytes");

/* --- dedup_data.c: what the images hold ---------------------------------- */

/*
 * The resolved configuration every dedup file reads.
 */
struct dd_cfg {
	const struct iotap_workload_dedup_opts *o;
	uint64_t positions;		/* segments in one image */
	uint32_t run;			/* positions per changed or duplicated extent */
	uint32_t rand_per_512;		/* random bytes in each 512 (the rest is zeros) */
	uint32_t max_seg;		/* largest segment */
	const struct dd_flavor *fl;	/* --flavor */
};

int dd_cfg_init(struct dd_cfg *cfg, const struct iotap_workload_dedup_opts *o,
		const char **why);

/*
 * The positions of one stream's image in the current generation: a
 * content id each, its length and fingerprint, and whether this is where
 * the content first appears (a new segment: the model generates and
 * hashes it only then; a repeat takes the fingerprint computed when its
 * content first appeared, as a client that fingerprints its data sends it).
 */
struct dd_pos {
	uint64_t n, cap;
	uint64_t *cid;
	uint32_t *len;
	struct dd_fp *fp;
	uint8_t *fresh;			/* DD_* below */
	uint32_t *src;			/* DD_REPEAT: the earlier position it repeats */
	uint64_t serial;		/* next new content id of this stream */
};

#define DD_KNOWN	0		/* fp known (from the last generation) */
#define DD_NEW		1		/* first appearance: generate and hash */
#define DD_REPEAT	2		/* repeats position src[i] of this image */

int dd_pos_alloc(struct dd_pos *p, uint64_t n);
void dd_pos_free(struct dd_pos *p);
/* Generation @gen of stream @stream (0 first: duplicates inside the image; then changes). */
void dd_pos_generation(const struct dd_cfg *cfg, struct dd_pos *p, unsigned int stream,
		       unsigned int gen);
/* Segment bytes of content id @cid: deterministic from the seed. */
void dd_fill(const struct dd_cfg *cfg, uint64_t cid, void *buf, uint32_t len);
void dd_hash(const void *buf, uint32_t len, struct dd_fp *fp);
/* The bytes a compressor would keep of @in (its random part): length returned. */
uint32_t dd_squeeze(const struct dd_cfg *cfg, const void *in, uint32_t len, void *out);

/* --- dedup_index.c: fingerprint cache and on-disk index ------------------ */

/*
 * The index file holds @nbuckets 4 KiB buckets, a fingerprint's home
 * bucket is fp.lo mod nbuckets; a full bucket spills into the next one
 * (and says so in its header). The cache is set-associative (8 ways,
 * LRU in a set), 32 bytes an entry; dirty buckets wait in memory until a
 * batch is written back (sorted by bucket, one 4 KiB pwrite each, then
 * fdatasync). One mutex covers cache, dirty buckets and figures; it is
 * dropped for an index read.
 */
struct dd_dirty {
	uint64_t b;			/* bucket number */
	uint8_t *page;
};

struct dd_index {
	struct iotap_workload_ctx *c;
	struct wl_file f;
	uint64_t nbuckets;
	pthread_mutex_t lock;
	struct dd_fp *cache;		/* sets * 8 */
	uint64_t *age;
	uint64_t sets, clock;
	struct iotap_map dirty;		/* bucket -> its dirty page (uint8_t *) */
	struct dd_dirty *sorted;	/* 2 * batch: the dirty buckets in order, to write */
	uint64_t ndirty, batch;
	uint8_t *pool;			/* batch pages */
	uint64_t pool_used;
	/* figures since the last dd_index_take() */
	uint64_t lookups, hits, reads, written;
	struct iotap_hist miss;		/* index read latencies, ns */
};

int dd_index_open(struct dd_index *ix, struct iotap_workload_ctx *c, int dirfd,
		  uint64_t parent, uint64_t nbuckets, uint64_t cache_entries);
void dd_index_close(struct dd_index *ix);
/* Put @fp in the cache (a prefetch); no I/O. */
void dd_index_cache(struct dd_index *ix, const struct dd_fp *fp);
/*
 * dd_index_lookup - is @fp stored? 1 yes, 0 no, -errno
 * Cache first; a miss reads the home bucket (and any spill buckets).
 * Either way the fingerprint is in the cache afterwards.
 */
int dd_index_lookup(struct dd_index *ix, const struct dd_fp *fp);
/* Add a new entry (after dd_index_lookup() said 0). 0 or -errno. */
int dd_index_insert(struct dd_index *ix, const struct dd_entry *e);
/* Change an entry's location, or remove it (@e NULL: remove @fp). 0 or -errno. */
int dd_index_update(struct dd_index *ix, const struct dd_fp *fp, const struct dd_entry *e);
/* Write back every dirty bucket and fdatasync. 0 or -errno. */
int dd_index_flush(struct dd_index *ix);
/*
 * Figures since the last take, then reset them; the index reads' latencies
 * are added to @miss. 0, or -ENOMEM (@miss then lacks some).
 */
int dd_index_take(struct dd_index *ix, uint64_t *lookups, uint64_t *hits, uint64_t *reads,
		  uint64_t *written, struct iotap_hist *miss);

/* --- dedup.c: the run, its segment and container tables ------------------ */

#define DD_MIB		(1ull << 20)
#define DD_IO_MAX	DD_MIB		/* restore, compaction and map reads */
#define DD_MAP_BATCH	2048		/* map entries per write: 64 KiB */

enum { CONT_OPEN, CONT_CLOSED, CONT_GONE };

struct dd_seg {
	struct dd_fp fp;
	uint32_t cont, off, len;
	uint32_t refs;			/* map entries that name it */
};

struct dd_cont {
	uint64_t size;			/* bytes written */
	uint64_t live;			/* bytes of segments still referenced */
	uint32_t *segs;			/* its segments, in file order */
	uint32_t nseg, cap;
	int state;
	uint32_t rf;			/* restic: its file in run->rf */
};

/* restic: one file of the repository (a pack, index, snapshot or lock file). */
struct dd_rfile {
	uint16_t dir;			/* RS_DIR_* or 0..255: data/XX */
	uint8_t gone;			/* unlinked */
	char name[24];			/* 16 hex digits */
	uint64_t size;
};

#define RS_DIR_INDEX	256
#define RS_DIR_SNAP	257
#define RS_DIR_LOCKS	258
#define RS_DIRS		259

struct dd_stream {
	struct dd_run *run;
	unsigned int i;
	struct dd_pos pos;
	uint8_t *buf;			/* one segment */
	uint8_t *io;			/* DD_IO_MAX + a segment */
	struct dd_entry *map;		/* DD_MAP_BATCH entries */
	uint32_t nmap;
	struct wl_file cont;		/* the open container, fd -1: none */
	uint32_t cont_id;
	/* figures of the running phase */
	uint64_t logical, segs, fresh, stored, written;
	uint64_t gen_ns, hash_ns;
	uint64_t rbytes, rreads, rconts, bad;
	int ret;
	/* restic: the pack being filled, and the other packer's (restic 0.14 fills two) */
	uint8_t *pack;
	uint64_t pfill;
	uint32_t pblobs, pack_id;
	int pack_open;
	struct {
		uint8_t *pack;
		uint64_t pfill;
		uint32_t pblobs, pack_id;
		int pack_open;
	} alt;
	uint64_t blobs_added;
	/* the flavor's own per-backup state (restic: its blob buffer, its lock; borg: the txn) */
	uint8_t *blob;
	uint32_t lock, txn0;
};

struct dd_run {
	struct iotap_workload_ctx *c;
	const struct iotap_workload_dedup_opts *o;
	struct dd_cfg cfg;
	struct iotap_workload_dedup_result *r;
	int top_fd, data_fd, meta_fd, maps_fd;
	uint64_t top_ino, data_ino, meta_ino, maps_ino;
	int meta_own;			/* META/NAME is not DIR/NAME */
	int index_open;
	struct dd_index ix;
	pthread_mutex_t lock;		/* the segment and container tables */
	struct dd_seg *seg;
	uint64_t nseg, segcap;
	struct iotap_map fps;		/* fingerprint's low half -> seg index (uint32_t) */
	struct dd_cont *cont;
	uint32_t ncont, contcap;
	struct dd_stream *st;
	unsigned int gen;		/* of the running phase */
	struct wl_span span;
	char phname[32];		/* the running phase's marker: lives until its END */
	char last_mark[32];		/* the capture's last marker (mark_capture) */
	/* restic */
	int rdir_fd[RS_DIRS];
	uint64_t rdir_ino[RS_DIRS];
	struct dd_rfile *rf;
	uint32_t nrf, rfcap;
	uint64_t name_ctr;
	uint32_t *snap_rf, *tree_cont;	/* per stream x generation */
	struct dd_entry **tree;		/* each image's blob list (in its tree pack) */
	uint64_t *ntree;
	int ret;			/* of the owner's on_done work */
	struct dd_borg *borg;		/* borg: its repository and cache (dedup_borg.c) */
};

/*
 * wl_phase_begin(), and with opts.mark_capture the same name set as a
 * marker of the iotap capture the target is on (user.iotap.mark).
 */
void dd_phase_begin(struct dd_run *run, struct wl_span *s, const char *name, uint64_t total,
		    uint64_t unit);
/*
 * The fingerprint of position @k of the stream's image, into s->pos.fp[k]:
 * a first appearance (DD_NEW) is generated into s->buf and hashed, its CPU
 * counted in s->gen_ns and s->hash_ns; a repeat takes its source's. Any
 * other position keeps the fingerprint it has (s->buf is then not filled).
 */
void dd_chunk_fp(struct dd_stream *s, uint64_t k);
/* The tables (run->lock held): a stored segment by fingerprint (-1: none), a new one. */
int64_t dd_seg_find(struct dd_run *run, const struct dd_fp *fp);
/*
 * A map entry @e names the stored segment @fp: its reference taken, its
 * place copied into @e. Takes run->lock. Return: its index, -1: not stored.
 */
int64_t dd_seg_ref(struct dd_run *run, const struct dd_fp *fp, struct dd_entry *e);
int dd_seg_add(struct dd_run *run, const struct dd_seg *s);
/* Container @id holds segment @si from now on (in file order). */
int dd_seg_add_to(struct dd_run *run, uint32_t id, uint32_t si);
int dd_cont_new(struct dd_run *run, uint32_t *id);
void dd_cont_name(char *buf, size_t len, uint32_t id, const char *ext);
void dd_map_name(char *buf, size_t len, unsigned int stream, unsigned int gen);
/* Read all of a map (1 MiB reads) into a new array of @n entries. 0 or -errno. */
int dd_map_read(struct dd_run *run, unsigned int stream, unsigned int gen,
		struct dd_entry **out, uint64_t *n);

/* --- dedup_stream.c: the backup and restore phases ---------------------- */

/* One generation's backup or restore: every stream at once. 0, -EINTR or -errno. */
int dd_backup(struct dd_run *run, unsigned int gen);
int dd_restore(struct dd_run *run, unsigned int gen);

/*
 * A flavor of the model (--flavor), a row each: msdp (dedup.c, the
 * model's own fixed segments, containers, on-disk index and maps: its
 * hooks are NULL), restic (dedup_restic.c) and borg (dedup_borg.c), which
 * chunk by content, keep the index in RAM and run each phase through
 * their hooks. Both back up through one chunk loop, dd_cdc_backup()
 * (dedup_stream.c): @begin, @store for each chunk the index lacks (its
 * bytes in s->buf), @end with the image's blob list and the loop's status.
 */
struct iotap_workload_dedup_plan;
struct dd_flavor {
	const char *name;		/* "msdp", "restic", "borg" */
	int cdc;			/* content-defined chunks, not fixed segments */
	double cdc_mean;		/* their mean length beyond the minimum (bytes) */
	/* the plan's index, cache and space figures, from the counts */
	void (*plan)(struct iotap_workload_dedup_plan *p, const struct dd_cfg *cfg);
	int (*init)(struct dd_run *run);
	int (*backup)(struct dd_stream *s);
	int (*restore)(struct dd_stream *s);
	int (*expire)(struct dd_run *run);
	int (*compact)(struct dd_run *run);
	/* posix_fadvise DONTNEED on the store (not traced) */
	void (*drop)(struct dd_run *run);
	void (*cleanup)(struct dd_run *run);
	int (*begin)(struct dd_stream *s);
	int (*store)(struct dd_stream *s, uint64_t k, struct dd_entry *e);
	int (*end)(struct dd_stream *s, struct dd_entry *tree, int ret);
};

extern const struct dd_flavor dd_msdp, dd_restic, dd_borg;

/* The backup of one stream through its flavor's begin, store and end. */
int dd_cdc_backup(struct dd_stream *s);

/* --- dedup_compact.c: expiry and compaction ------------------------------ */

int dd_expire(struct dd_run *run);
int dd_compact(struct dd_run *run);

/* --- dedup_borg_repo.c: the borg flavor's repository and client cache -- */

#define BG_MAGIC	8		/* "BORG_SEG" */
#define BG_PUT_HDR	41		/* crc 4, size 4, tag 1, id 32 */
#define BG_COMMIT	9
#define BG_OBJ_EXTRA	(2 + 41)	/* compressor id; encryption type, MAC, IV */
#define BG_PER_DIR	1000		/* segments_per_dir */
#define BG_WBUF		8192		/* Python's buffered writer */
#define BG_RBUF		4096		/* ... and reader (st_blksize) */
#define BG_FILE		(16 * DD_MIB)	/* the model's files: the image in 16 MiB files */
#define BG_FILE_ENTRY	187		/* files cache bytes per file */
#define BG_ITEM		120		/* items metadata per file */
#define BG_ITEM_CHUNK	48		/* ... and per chunk reference */
#define BG_ARCHIVE	500		/* archive metadata object */
#define BG_MANIFEST	540		/* manifest object (+ 40 per archive) */
#define BG_CONFIG	572		/* cache config */
#define BG_REPO_CONFIG	700
#define BG_INTEGRITY	190
#define BG_LOCK_ROSTER	47

enum { BG_DEL_KEPT, BG_DEL_GONE };

/* A DELETE entry: in segment @seg, for a chunk whose PUT was in segment @put. */
struct bg_del {
	uint32_t seg, put;
	int state;
};

struct dd_borg {
	struct wl_file wf;		/* the segment being written (fd -1: none) */
	uint32_t wseg;			/* its number */
	uint64_t woff;
	uint8_t *wbuf;			/* buffered writer */
	uint32_t wn;
	uint32_t next;			/* next segment number */
	uint32_t txn;			/* the last commit's segment */
	uint64_t manifest;		/* segment holding the manifest PUT (UINT64_MAX: none) */
	uint32_t archives;
	int dir_fd[256];		/* data/K */
	uint64_t dir_ino[256];
	int cache_fd;			/* the cache directory */
	uint64_t cache_ino;
	int cache_own;			/* META/NAME made by us */
	int cache_sub;			/* DIR/NAME/cache made by us */
	uint64_t files_bytes;
	struct bg_del *del;
	uint32_t ndel, delcap;
	uint32_t *arch_seg;		/* per generation: its items/archive objects' segment */
	uint64_t *arch_meta;		/* ... and their bytes */
	uint8_t *obj;			/* one entry */
	uint8_t *sink;			/* restore reads */
	struct dd_entry **tree;		/* per generation: its chunk list */
	uint64_t *ntree;
};

uint64_t bg_idx_buckets(uint64_t entries);
int bg_put_file(struct dd_run *run, int dfd, uint64_t dino, const char *name, uint64_t len,
		int how, uint64_t *written);
int64_t bg_get_file(struct dd_run *run, int dfd, uint64_t dino, const char *name,
		    int index, struct dd_stream *cnt);
int bg_lock_take(struct dd_run *run, int dfd, uint64_t dino, uint64_t *written);
int bg_lock_release(struct dd_run *run, int dfd, uint64_t dino);
int bg_seg_name(char *buf, size_t len, uint32_t seg);
int bg_put(struct dd_run *run, uint8_t *ent, uint64_t len, int want_new, uint32_t *seg,
	   uint32_t *off, uint64_t *written);
int bg_del_tag(struct dd_run *run, uint32_t put_seg, int want_new, uint64_t *written);
void bg_seg_dead(struct dd_run *run, uint32_t seg, uint64_t len);
int bg_manifest(struct dd_run *run, uint64_t *written);
int bg_write_index(struct dd_run *run, uint64_t *written);
int bg_drop_old_index(struct dd_run *run, uint32_t old);
int bg_commit_tag(struct dd_run *run, uint64_t *written);
int bg_commit(struct dd_run *run, uint32_t old, uint64_t *written);
int bg_repo_open(struct dd_run *run, int with_hints, struct dd_stream *cnt);
int bg_cache_begin(struct dd_run *run, uint64_t *written);
int bg_cache_commit(struct dd_run *run, uint64_t *written);

#endif /* IOTAP_DEDUP_I_H */
