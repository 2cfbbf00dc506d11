// SPDX-License-Identifier: MIT
/*
 * live_stats.c - asking a live iotap mount for its counters (live_stats.h)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "live_mount.h"
#include "live_stats.h"

/* Fetch and parse the counters of @mnt. 0, or -1 after saying why. */
int live_stats_fetch(const char *mnt, struct live_stats *s, char *buf)
{
	static const struct live_mount_words words = {
		.verb = "read", .perm_verb = "read the counters of", .perm_tail = "",
		.undone = "", .not_tail = " (or its daemon is older than this iotap)",
	};
	ssize_t n;
	char *line, *save = NULL;

	n = live_mount_get(mnt, IOTAP_FS_XATTR_STATS, buf, IOTAP_FS_STATS_MAX - 1, NULL, &words);
	if (n < 0)
		return -1;
	if (strncmp(buf, "iotap-stats 1\n", 14)) {
		live_mount_not_ours(mnt, &words);
		return -1;
	}
	buf[n] = '\0';
	memset(s, 0, sizeof(*s));
	{
		struct timespec rt;

		clock_gettime(CLOCK_REALTIME, &rt);
		s->real_s = rt.tv_sec + rt.tv_nsec / 1e9;
	}
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *sp = strchr(line, ' '), *v;
		unsigned long long a, b, c;
		int k;

		if (!sp)
			continue;
		*sp = '\0';
		v = sp + 1;
#define U(name) if (!strcmp(line, #name)) { s->name = strtoull(v, NULL, 10); continue; }
		U(pid) U(mono_ns) U(uptime_ns) U(tracing) U(records) U(lost) U(discarded)
		U(trace_bytes) U(trace_files) U(cpu_user_ns) U(cpu_sys_ns) U(rss_kb) U(threads)
		U(inodes) U(rd_bytes) U(wr_bytes) U(errors) U(lat_bits) U(ring) U(ring_cap)
#undef U
		if (!strcmp(line, "trace_error")) {
			s->trace_error = strtoll(v, NULL, 10);
		} else if (!strcmp(line, "mode")) {
			snprintf(s->mode, sizeof(s->mode), "%s", v);
		} else if (!strcmp(line, "mountpoint")) {
			snprintf(s->mountpoint, sizeof(s->mountpoint), "%s", v);
		} else if (!strcmp(line, "trace")) {
			snprintf(s->trace, sizeof(s->trace), "%s", v);
		} else if (!strcmp(line, "op")) {
			char *sp2 = strchr(v, ' ');
			int op;

			if (!sp2)
				continue;
			*sp2 = '\0';
			op = iotap_trace_op_from_name(v);
			if (op >= 0 && op < IOTAP_OP_MAX)
				s->ops[op] = strtoull(sp2 + 1, NULL, 10);
		} else if (!strcmp(line, "proc") && s->nprocs < LIVE_MAX_TOP &&
			   sscanf(v, "%llu %llu %llu", &a, &b, &c) == 3) {
			struct top_ent *e = &s->procs[s->nprocs++];

			e->key = a;
			e->ops = b;
			e->bytes = c;
		} else if (!strcmp(line, "file") && s->nfiles < LIVE_MAX_TOP &&
			   sscanf(v, "%llu %llu %llu %n", &a, &b, &c, &k) == 3) {
			struct top_ent *e = &s->files[s->nfiles++];

			e->key = a;
			e->ops = b;
			e->bytes = c;
			snprintf(e->name, sizeof(e->name), "%s", v + k);
		} else if (!strcmp(line, "lat")) {
			char *p = strchr(v, ' '), *item, *s2 = NULL;
			int cls;

			if (p)
				*p++ = '\0';
			for (cls = 0; cls < LIVE_LAT_CLASSES && strcmp(iotap_fs_lat_names[cls], v); cls++)
				;
			if (cls == LIVE_LAT_CLASSES || !p)
				continue;
			for (item = strtok_r(p, ",", &s2); item; item = strtok_r(NULL, ",", &s2)) {
				unsigned int idx;
				unsigned long long cnt;

				if (sscanf(item, "%u:%llu", &idx, &cnt) == 2 && idx < LIVE_LAT_MAX_BUCKETS)
					s->lat[cls][idx] = cnt;
			}
		}
	}
	return 0;
}

uint64_t live_stats_ops(const struct live_stats *s)
{
	uint64_t n = 0;
	unsigned int i;

	for (i = 0; i < IOTAP_OP_MAX; i++)
		n += s->ops[i];
	return n;
}

void live_fmt_size(char *out, size_t len, double b)
{
	if (b >= 1e9)
		snprintf(out, len, "%.2f GB", b / 1e9);
	else if (b >= 1e6)
		snprintf(out, len, "%.2f MB", b / 1e6);
	else if (b >= 1e3)
		snprintf(out, len, "%.1f kB", b / 1e3);
	else
		snprintf(out, len, "%.0f B", b);
}
