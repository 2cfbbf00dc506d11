/* SPDX-License-Identifier: MIT */
/*
 * iotap_dedup.h - the dedup model's API (workload/dedup/): a deduplicating backup media server
 *
 * Over the run context of iotap_workload.h; its conventions hold here.
 */
#ifndef IOTAP_DEDUP_H
#define IOTAP_DEDUP_H

#include <stdint.h>
#include <stdio.h>

#include "iotap_workload.h"

/*
 * A backup media server's own I/O (workload/dedup.c): backup images of N
 * concurrent streams cut into segments, fingerprint look-ups against a
 * cache and an on-disk index, unique segments appended to container
 * files, a segment map per image, then a restore of each generation
 * through its containers, expiry of the oldest generations and compaction.
 */
enum iotap_dedup_flavor {
	IOTAP_DEDUP_MSDP,		/* NetBackup MSDP: fixed segments, 64 MiB containers */
	IOTAP_DEDUP_RESTIC,		/* restic 0.14: content-defined chunks, packs */
	IOTAP_DEDUP_BORG,		/* borg 1.2: content-defined chunks, segment log */
};

struct iotap_workload_dedup_opts {
	enum iotap_dedup_flavor flavor;
	const char *name;		/* the run's directory name in DIR and meta dir */
	const char *meta_dir;		/* index and maps here; NULL: in the target */
	unsigned int streams;		/* concurrent backup streams (1..256) */
	uint64_t image_bytes;		/* logical size of one image (one stream, one generation) */
	unsigned int generations;	/* full backups of every stream (1..1000) */
	double change;			/* fraction of an image new in each later generation */
	double dup;			/* fraction of the first image that repeats earlier parts of it */
	double compress;		/* fraction of each segment a compressor removes (0..0.95) */
	uint32_t segment_bytes;		/* fixed segment size (MSDP) */
	uint64_t container_bytes;	/* a container is closed when the next segment does not fit */
	uint64_t fp_cache_bytes;	/* fingerprint cache, 32 bytes an entry; 0: a quarter of the index */
	unsigned int expire;		/* oldest generations expired before compaction */
	double compact_threshold;	/* rewrite a container once this fraction of it is dead */
	uint64_t seed;			/* content seed */
	int keep;			/* leave the store on disk (tests inspect it) */
	int mark_capture;		/* on an iotap mount: mark its capture's phases too */
};

void iotap_workload_dedup_opts_init(struct iotap_workload_dedup_opts *o);

/*
 * What the options imply, computed without I/O from the same generator
 * the run uses: exact segment counts, the dedup ratio the data must show.
 */
struct iotap_workload_dedup_plan {
	uint64_t segments;		/* logical segments of all images */
	uint64_t logical_bytes;		/* bytes of all images */
	uint64_t unique_segments;	/* segments stored (all generations, before expiry) */
	uint64_t stored_bytes;		/* their bytes */
	double dedup_ratio;		/* logical_bytes / stored_bytes */
	uint64_t index_bytes;		/* the on-disk index */
	uint64_t map_bytes;		/* all segment maps */
	uint64_t cache_entries;		/* fingerprint cache capacity */
	uint64_t need_data;		/* bytes the run may hold in the target at once */
	uint64_t need_meta;		/* and in the meta directory */
};

/*
 * iotap_workload_dedup_check - are the option values themselves valid?
 *
 * Cheap (no walk over the images): what iotap_workload_dedup_plan()
 * refuses before it walks, so a CLI can refuse bad values with exit 2
 * before it estimates free space. Return: 0, or -EINVAL with @why set.
 */
int iotap_workload_dedup_check(const struct iotap_workload_dedup_opts *o, const char **why);

/* Return: 0, or -EINVAL (with @why set to a static message) for options that do not fit. */
int iotap_workload_dedup_plan(const struct iotap_workload_dedup_opts *o,
			      struct iotap_workload_dedup_plan *p, const char **why);

/* The figures of one generation: its backup and its restore. */
struct iotap_workload_dedup_gen {
	struct iotap_workload_phase_result backup, restore;
	double backup_user_s;		/* user CPU of the backup: the model's own work */
	uint64_t logical_bytes;		/* bytes backed up */
	uint64_t segments, new_segments;
	uint64_t stored_bytes;		/* bytes of the new segments (container appends) */
	uint64_t written_bytes;		/* everything written: containers, index, maps */
	uint64_t lookups, cache_hits, index_reads;
	double miss_p50_s, miss_p99_s;	/* index read latency */
	double gen_cpu_s, hash_cpu_s;	/* content generation and hashing, thread CPU */
	uint64_t restore_bytes, restore_reads, restore_containers;
	double restore_user_s;
	uint64_t verify_errors;		/* restored segments whose hash is not their fingerprint */
};

struct iotap_workload_dedup_result {
	struct iotap_workload_phase_result init;
	struct iotap_workload_dedup_gen *gen;	/* opts.generations entries */
	unsigned int gens_run;		/* backups done */
	unsigned int restores_run;
	struct iotap_workload_phase_result expire, compact;
	uint64_t expired_images, dead_segments, dead_bytes;
	uint64_t containers, containers_removed, containers_rewritten;
	uint64_t compact_read, compact_written, compact_freed;
	uint64_t stored_bytes;		/* segment bytes in containers at the end */
	struct iotap_workload_dedup_plan plan;
	int partial, failed;
};

/*
 * iotap_workload_dedup_run - backups, restores, expiry and compaction
 *
 * Creates opts.name in the target (and in the meta directory), runs the
 * phases and removes everything (unless opts.keep), also when interrupted.
 * Return: 0, -EINTR (results partial), -EIO (a restore read back data that
 * is not what was stored), or -errno. Free @r with
 * iotap_workload_dedup_result_release().
 */
int iotap_workload_dedup_run(struct iotap_workload_ctx *c,
			     const struct iotap_workload_dedup_opts *o,
			     struct iotap_workload_dedup_result *r);
void iotap_workload_dedup_result_release(struct iotap_workload_dedup_result *r);
/* The per-phase tables. */
void iotap_workload_dedup_print(FILE *f, const char *target,
				const struct iotap_workload_dedup_opts *o,
				const struct iotap_workload_dedup_result *r);

#endif /* IOTAP_DEDUP_H */
