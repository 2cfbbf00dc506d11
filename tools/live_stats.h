/* SPDX-License-Identifier: MIT */
/*
 * live_stats.h - the live counters of an iotap mount, as status and top read them
 *
 * A getxattr of IOTAP_FS_XATTR_STATS on the mount's root, which the daemon
 * answers itself (root or CAP_SYS_ADMIN only) with "key value" lines, every
 * figure cumulative since the mount (fs/stats.c); live_stats_fetch() asks
 * and parses it into a struct live_stats. `iotap top` over a finished trace
 * fills the same struct from the records.
 */
#ifndef IOTAP_LIVE_STATS_H
#define IOTAP_LIVE_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "iotap_base.h"
#include "iotap_fs.h"
#include "iotap_trace.h"

#define LIVE_LAT_CLASSES	IOTAP_FS_LAT_CLASSES
#define LIVE_MAX_TOP		64
#define LIVE_LAT_MAX_BUCKETS	IOTAP_HIST_BUCKETS_OF(6)	/* lat_bits up to 6 */

/* A process (key: its pid) or a file (key: its node id, @name) and what it did. */
struct top_ent {
	uint64_t key, ops, bytes;
	char name[256];
};

struct live_stats {
	char mode[16], mountpoint[4096], trace[4096];
	uint64_t pid, mono_ns, uptime_ns, tracing, records, lost, discarded, trace_bytes;
	uint64_t trace_files, cpu_user_ns, cpu_sys_ns, rss_kb, threads, inodes;
	uint64_t rd_bytes, wr_bytes, errors, lat_bits, ring, ring_cap;
	double real_s;			/* CLOCK_REALTIME when fetched, s */
	/* over a finished trace (top_trace()): the window, s into the trace */
	int from_trace;
	double t_from, t_to, speed;
	int64_t trace_error;
	uint64_t ops[IOTAP_OP_MAX];
	uint64_t lat[LIVE_LAT_CLASSES][LIVE_LAT_MAX_BUCKETS];
	struct top_ent procs[LIVE_MAX_TOP], files[LIVE_MAX_TOP];
	unsigned int nprocs, nfiles;
};

/*
 * live_stats_fetch - fetch and parse the counters of the mount @mnt into @s;
 * @buf: IOTAP_FS_STATS_MAX bytes to read them into. 0, or -1 after saying why.
 */
int live_stats_fetch(const char *mnt, struct live_stats *s, char *buf);

/* Every op served, all types. */
uint64_t live_stats_ops(const struct live_stats *s);

/* @b bytes as "1.23 MB", "4.5 kB", "12 B" (10^3 units). */
void live_fmt_size(char *out, size_t len, double b);

#endif /* IOTAP_LIVE_STATS_H */
