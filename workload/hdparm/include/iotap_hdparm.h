/* SPDX-License-Identifier: MIT */
/*
 * iotap_hdparm.h - the hdparm model's API (workload/hdparm/): hdparm -T and -t
 *
 * Over the run context of iotap_workload.h; its conventions hold here.
 */
#ifndef IOTAP_HDPARM_H
#define IOTAP_HDPARM_H

#include <stdint.h>
#include <stdio.h>

#include "iotap_workload.h"

#define IOTAP_HDPARM_CACHED	(1u << 0)	/* -T */
#define IOTAP_HDPARM_DEVICE	(1u << 1)	/* -t */
#define IOTAP_HDPARM_DIRECT	(1u << 2)	/* --direct: O_DIRECT for both */

struct iotap_workload_hdparm_opts {
	unsigned int flags;		/* IOTAP_HDPARM_* */
	uint64_t file_bytes;		/* directory target: size of the file to create */
};

struct iotap_workload_hdparm_result {
	int ran_cached, ran_device;
	uint64_t cached_mb, device_mb;	/* hdparm's MB: 2 MiB per read, counted as 2 */
	double cached_s, device_s;
	struct iotap_workload_phase_result ph_cached, ph_device;
	int partial, failed;
};

/* Bytes a directory target's file gets: --size for -t, 2 MiB when only -T runs. */
uint64_t iotap_workload_hdparm_file_bytes(const struct iotap_workload_hdparm_opts *o);

int iotap_workload_hdparm_run(struct iotap_workload_ctx *c,
			      const struct iotap_workload_hdparm_opts *o,
			      struct iotap_workload_hdparm_result *r);
void iotap_workload_hdparm_print(FILE *f, const char *target,
				 const struct iotap_workload_hdparm_opts *o,
				 const struct iotap_workload_hdparm_result *r);

#endif /* IOTAP_HDPARM_H */
