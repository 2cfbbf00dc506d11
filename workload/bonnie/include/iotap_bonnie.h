/* SPDX-License-Identifier: MIT */
/*
 * iotap_bonnie.h - the bonnie model's API (workload/bonnie/): bonnie++'s tests (2.00a and 1.03)
 *
 * Over the run context of iotap_workload.h; its conventions hold here.
 */
#ifndef IOTAP_BONNIE_H
#define IOTAP_BONNIE_H

#include <stdint.h>
#include <stdio.h>

#include "iotap_workload.h"

/* bonnie++'s tests, in its order (the columns of its tables). */
enum iotap_bonnie_test {
	IOTAP_BONNIE_PUTC,
	IOTAP_BONNIE_WRITE,
	IOTAP_BONNIE_REWRITE,
	IOTAP_BONNIE_GETC,
	IOTAP_BONNIE_READ,
	IOTAP_BONNIE_SEEKS,
	IOTAP_BONNIE_SEQ_CREATE,
	IOTAP_BONNIE_SEQ_STAT,
	IOTAP_BONNIE_SEQ_DELETE,
	IOTAP_BONNIE_RAND_CREATE,
	IOTAP_BONNIE_RAND_STAT,
	IOTAP_BONNIE_RAND_DELETE,
	IOTAP_BONNIE_TESTS
};

#define IOTAP_BONNIE_103	(1u << 0)	/* 1.03: stdio per-char, 3 seekers, 1 GiB files */
#define IOTAP_BONNIE_SYNC	(1u << 1)	/* -b: fsync where bonnie++ -b does */
#define IOTAP_BONNIE_DIRECT	(1u << 2)	/* -D: O_DIRECT on the files it creates */

struct iotap_workload_bonnie_opts {
	uint32_t file_mib;		/* -s, MiB; 0: no file I/O tests */
	uint32_t chunk;			/* bytes per block I/O, power of two 256..1 MiB */
	uint32_t char_mib;		/* MiB of per-char I/O; 0: skip (-f) */
	uint32_t seeks;			/* random seeks */
	uint32_t seekers;		/* competing seeker threads */
	uint32_t num_files;		/* -n, units of 1024 files; 0: no file tests */
	int32_t max_size, min_size;	/* -n num:max:min, bytes of data per file */
	uint32_t num_dirs;		/* -n num:max:min:dirs */
	uint32_t file_chunk;		/* bytes per write of a created file */
	uint32_t seed;			/* -z */
	uint32_t ram_mib;		/* -r, for the record only */
	unsigned int flags;		/* IOTAP_BONNIE_* */
	const char *machine;		/* -m, the Name column */
};

/* Defaults of bonnie++ 2.00a, or 1.03 with @v103. */
void iotap_workload_bonnie_opts_init(struct iotap_workload_bonnie_opts *o, int v103);

struct iotap_workload_bonnie_result {
	struct iotap_workload_phase_result test[IOTAP_BONNIE_TESTS];
	int partial;			/* interrupted */
	int failed;			/* an operation failed (ctx error says which) */
};

/*
 * iotap_workload_bonnie_run - one bonnie++ run (one of -x repeats)
 *
 * Creates Bonnie.PID (file, then directory) in the target, runs the tests
 * in bonnie++'s order and removes everything, also when interrupted.
 * Return: 0, -EINTR (results partial), or -errno (@r->failed).
 */
int iotap_workload_bonnie_run(struct iotap_workload_ctx *c,
			      const struct iotap_workload_bonnie_opts *o,
			      struct iotap_workload_bonnie_result *r);

/* bonnie++'s two text tables (with 2.x's Latency lines). */
void iotap_workload_bonnie_print_text(FILE *f, const struct iotap_workload_bonnie_opts *o,
				      const struct iotap_workload_bonnie_result *r);
/* The CSV header line bonnie++ prints before -x runs. */
void iotap_workload_bonnie_print_csv_header(FILE *f, const struct iotap_workload_bonnie_opts *o);
/* bonnie++'s one-line CSV (format 1.98 for 2.x; 1.03's layout in 1.03 mode). */
void iotap_workload_bonnie_print_csv(FILE *f, const struct iotap_workload_bonnie_opts *o,
				     const struct iotap_workload_bonnie_result *r);
/* Mean ± sample standard deviation of each figure over @n runs. */
void iotap_workload_bonnie_print_summary(FILE *f, const struct iotap_workload_bonnie_opts *o,
					 const struct iotap_workload_bonnie_result *r,
					 unsigned int n);

/* Marker name of a test ("putc", "seq_create"...). */
const char *iotap_workload_bonnie_test_name(unsigned int test);

#endif /* IOTAP_BONNIE_H */
