/* SPDX-License-Identifier: MIT */
/*
 * iotap_dd.h - the dd model's API (workload/dd/): dd's sequential copy
 *
 * Over the run context of iotap_workload.h; its conventions hold here.
 */
#ifndef IOTAP_DD_H
#define IOTAP_DD_H

#include <stdint.h>
#include <stdio.h>

#include "iotap_workload.h"

#define IOTAP_DD_READ		(1u << 0)	/* read instead of write */
#define IOTAP_DD_DIRECT		(1u << 1)	/* O_DIRECT (iflag/oflag=direct) */
#define IOTAP_DD_FDATASYNC	(1u << 2)	/* conv=fdatasync: fdatasync at the end, timed */

struct iotap_workload_dd_opts {
	uint64_t bs;			/* bytes per read/write */
	uint64_t count;			/* blocks */
	unsigned int flags;		/* IOTAP_DD_* */
	const char *file;		/* name in a directory target (default iotap-dd.dat) */
	int keep;			/* keep the file afterwards */
};

struct iotap_workload_dd_result {
	uint64_t full_in, partial_in, full_out, partial_out;	/* dd's records in/out */
	uint64_t bytes;
	double seconds;
	int prepared;			/* --read had to write the file first */
	struct iotap_workload_phase_result ph;
	int partial, failed;
};

int iotap_workload_dd_run(struct iotap_workload_ctx *c, const struct iotap_workload_dd_opts *o,
			  struct iotap_workload_dd_result *r);
/* GNU dd's three lines: records in, records out, bytes/seconds/rate. */
void iotap_workload_dd_print(FILE *f, const struct iotap_workload_dd_result *r);

#endif /* IOTAP_DD_H */
