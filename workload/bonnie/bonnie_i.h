/* SPDX-License-Identifier: MIT */
/*
 * bonnie_i.h - what the three parts of the bonnie++ model share: the
 * step table's types and one run's state
 *
 * bonnie.c holds the tables, the data steps and the run; bonnie_seek.c the
 * competing seekers; bonnie_files.c the create/stat/delete file tests.
 * Private to those files (prefix bon_, as bonnie_out.c's).
 */
#ifndef IOTAP_BONNIE_I_H
#define IOTAP_BONNIE_I_H

#include "workload_i.h"
#include "iotap_bonnie.h"

#define MIB		(1ull << 20)

/* What a step is. */
enum bon_kind {
	BON_DATA,		/* a wl_data_run() phase */
	BON_SEEKS,		/* competing seekers */
	BON_CREATE,		/* create num*1024 files */
	BON_STAT,		/* stat (and read) them */
	BON_DELETE,		/* unlink them */
};

/* How a step opens its file(s). */
enum bon_open {
	BON_OPEN_NONE,
	BON_OPEN_CREATE,	/* unlink, O_RDWR|O_CREAT|O_EXCL (+O_DIRECT with -D) */
	BON_OPEN_RW,		/* O_RDWR */
	BON_OPEN_STDIO_NEW,	/* unlink, fopen(name, "w+") */
	BON_OPEN_STDIO_RW,	/* fopen(name, "r+") */
};

/* Step flags. */
#define BON_CHAR	(1u << 0)	/* per-char test: skipped by -f */
#define BON_DIRTY	(1u << 1)	/* change a byte of the buffer per chunk */
#define BON_RANDOM	(1u << 2)	/* file tests: random names / random order */
#define BON_FSYNC	(1u << 3)	/* close = fsync + close, always (2.x CFileOp::Close) */
#define BON_FSYNC_B	(1u << 4)	/* fsync before close only with -b (1.03) */

struct bon_step {
	enum iotap_bonnie_test test;	/* column */
	const char *name;		/* phase marker */
	enum bon_kind kind;
	enum wl_kind data;		/* BON_DATA: per-unit action */
	enum wl_io io;
	enum bon_open open;
	unsigned int flags;		/* BON_* */
};

/* What else differs between the versions. */
struct bon_version {
	const char *version;		/* "Version" in the tables */
	const struct bon_step *steps;
	unsigned int nsteps;
	unsigned int piece_mib;		/* 1.03 splits the file into 1 GiB pieces; 0: one file */
	int char_whole_file;		/* per-char tests cover the whole file (1.03) */
	int seek_update_by_count;	/* 1.03: each seeker rewrites its 1st, 11th... seek;
					 * 2.x: tickets divisible by ten are rewrites */
	int seeker_unlinks;		/* 2.x: a seeker that ends unlinks the file */
	int hex_names;			/* 2.x: "%010x" names; 1.03: "%07d" */
	int sync_meta;			/* 2.x: sync() ends create and delete phases */
};

/* One run's state. */
struct bon_names {
	uint32_t n;
	char **name;			/* bare names */
	uint32_t *dir;			/* directory index of each */
	uint64_t *ino;			/* st_ino once created (0: unknown) */
	char *buf;
};

struct bon_run {
	struct iotap_workload_ctx *c;
	const struct iotap_workload_bonnie_opts *o;
	const struct bon_version *v;
	struct iotap_workload_bonnie_result *r;
	struct rng rng;			/* bonnie++'s Rand, reseeded every run */
	char base[64];			/* "Bonnie.PID" */
	/* file I/O tests */
	uint64_t chunks;		/* file size in chunks */
	uint64_t char_chunks;		/* per-char size in chunks */
	struct wl_fileset fs;
	char (*piece)[80];		/* piece names */
	void *buf;
	int file_exists;
	/* file tests */
	int topfd;			/* Bonnie.PID directory, or -1 */
	uint64_t top_ino;
	int *subfd;			/* %05d directories (num_dirs > 1) */
	uint64_t *sub_ino;
	struct bon_names names;
	int names_live;			/* files of @names may exist */
	char *fbuf;			/* file_chunk bytes */
};

/* bonnie.c */
/* Open (or create) every piece the way a step asks; files of @fs stay open. */
int bon_fs_open(struct bon_run *b, struct wl_fileset *fs, enum bon_open how);
/* The step closes its files with fsync + close. */
int bon_step_fsync(const struct bon_run *b, const struct bon_step *st);

/* bonnie_seek.c: the seeks test. */
int bon_run_seeks(struct bon_run *b, const struct bon_step *st);

/* bonnie_files.c: the file tests, and their directories. */
int bon_run_create(struct bon_run *b, const struct bon_step *st);
int bon_run_stat(struct bon_run *b, const struct bon_step *st);
int bon_run_delete(struct bon_run *b, const struct bon_step *st);
/* The directory fd and st_ino of file directory @d. */
int bon_dir_fd(const struct bon_run *b, uint32_t d);
uint64_t bon_dir_ino(const struct bon_run *b, uint32_t d);
int bon_remove_dirs(struct bon_run *b);

#endif /* IOTAP_BONNIE_I_H */
