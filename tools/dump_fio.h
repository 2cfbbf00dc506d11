/* SPDX-License-Identifier: MIT */
/*
 * dump_fio.h - iotap dump --fio-iolog (dump_fio.c): records in, fio's
 * iolog version 3 out, streaming (memory grows with the files, not the
 * records)
 */
#ifndef IOTAP_DUMP_FIO_H
#define IOTAP_DUMP_FIO_H

#include <stdint.h>
#include <stdio.h>

#include "iotap_base.h"
#include "iotap_trace.h"

/* What was written and what could not be. */
struct fio_iolog_sum {
	uint64_t lines, files, reads, writes, syncs, opens, closes;
	uint64_t read_bytes, write_bytes;
	uint64_t skip_op[IOTAP_OP_MAX];	/* ops with no iolog action, per op */
	uint64_t skip_failed;		/* result < 0 */
	uint64_t skip_empty;		/* reads and writes of 0 bytes */
	uint64_t skip_dir;		/* on a directory (or the root) */
	uint64_t skip_no_name;		/* on a file with no NAME binding */
	uint64_t skip_bad_name;		/* path with white space, or over 256 bytes */
	uint64_t mkdirs;		/* directories made (also in skip_op) */
};

#define FIO_MKDIR_SHOW	20		/* directories the summary names */

struct fio_iolog {
	FILE *out;
	const char *root;		/* --fio-root, or NULL */
	struct iotap_map names;		/* file id -> binding (dump_fio.c) */
	struct iotap_map files;		/* file id -> its state in the iolog */
	uint64_t t0;			/* time of the first op, ns */
	int have_t0;
	struct fio_iolog_sum *sum;
	uint64_t mkdir_ids[FIO_MKDIR_SHOW];
};

/* Writes the version line to @out; @root: --fio-root, or NULL (relative names). */
void fio_iolog_init(struct fio_iolog *w, FILE *out, const char *root,
		    struct fio_iolog_sum *sum);
/* Feed every record in time order. Return: 0 or -ENOMEM. */
int fio_iolog_rec(struct fio_iolog *w, const struct iotap_trace_rec *r);
void fio_iolog_release(struct fio_iolog *w);
uint64_t fio_iolog_skipped(const struct fio_iolog_sum *s);
/*
 * On @f: what was written, the directories the capture made (fio cannot),
 * and what was skipped, by kind. Before fio_iolog_release().
 */
void fio_iolog_summary(FILE *f, const char *path, struct fio_iolog *w);

#endif /* IOTAP_DUMP_FIO_H */
