// SPDX-License-Identifier: MIT
/*
 * cmd_status.c - iotap status MOUNTPOINT [--json]
 *
 * What the capture at MOUNTPOINT is doing, from one answer of the daemon's
 * live counters (live_stats.h): mode, trace, records written and lost, the
 * daemon's CPU and RSS, the operations served; as text or one JSON object.
 */
#include <getopt.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "iotap_fs.h"
#include "iotap_trace.h"
#include "live_stats.h"
#include "opt.h"

static void fmt_dur(char *out, size_t len, uint64_t ns)
{
	uint64_t s = ns / 1000000000ull;

	if (s >= 86400)
		snprintf(out, len, "%llud%02lluh%02llum", (unsigned long long)(s / 86400),
			 (unsigned long long)(s / 3600 % 24), (unsigned long long)(s / 60 % 60));
	else if (s >= 3600)
		snprintf(out, len, "%lluh%02llum%02llus", (unsigned long long)(s / 3600),
			 (unsigned long long)(s / 60 % 60), (unsigned long long)(s % 60));
	else
		snprintf(out, len, "%llum%02llus", (unsigned long long)(s / 60),
			 (unsigned long long)(s % 60));
}

/* @s as a JSON string, escaped by json-c as every other JSON iotap writes */
static void json_str(FILE *f, const char *s)
{
	struct json_object *o = json_object_new_string(s);

	fputs(o ? json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
						    JSON_C_TO_STRING_NOSLASHESCAPE) : "null", f);
	json_object_put(o);
}

static int json_opt;	/* --json */

static const struct opt_desc status_opts[] = {
	OPT_BOOL(0, "json", &json_opt, "one JSON object instead of text"),
	OPT_END(),
};

static const struct opt_cmd status_cmd = {
	.name = "status",
	.usage = "MOUNTPOINT [--json]",
	.summary = "What the capture at MOUNTPOINT is doing: mode, trace file, records\n"
		   "written and lost, trace size, uptime, the daemon's CPU and RSS, and\n"
		   "the operations served so far. Root (or CAP_SYS_ADMIN) only.",
	.opts = status_opts,
	.footer = "example:\n  iotap status /srv/pgdata --json | jq .lost",
};

int cmd_status(int argc, char **argv)
{
	static struct live_stats s;
	const char *mnt;
	char *buf, up[32], b1[32], b2[32], b3[32];
	int rc, json;
	double cpu_s, up_s;
	unsigned int i;

	rc = opt_parse(&status_cmd, argc, argv);
	if (rc >= 0)
		return rc;
	json = json_opt;
	if (argc - optind != 1)
		return opt_error(&status_cmd, argc - optind < 1 ? "MOUNTPOINT is required"
							       : "too many arguments");
	mnt = argv[optind];
	buf = malloc(IOTAP_FS_STATS_MAX);
	if (!buf) {
		error_msg("out of memory");
		return 1;
	}
	rc = live_stats_fetch(mnt, &s, buf);
	free(buf);
	if (rc)
		return 1;
	cpu_s = (s.cpu_user_ns + s.cpu_sys_ns) / 1e9;
	up_s = s.uptime_ns / 1e9;
	if (json) {
		printf("{\"mountpoint\": ");
		json_str(stdout, s.mountpoint);
		printf(", \"pid\": %llu, \"mode\": \"%s\", \"uptime_s\": %.3f, \"tracing\": %s, "
		       "\"ring\": %s, \"ring_cap\": %llu, \"trace\": ", (unsigned long long)s.pid,
		       s.mode, up_s, s.tracing ? "true" : "false", s.ring ? "true" : "false",
		       (unsigned long long)s.ring_cap);
		if (s.tracing)
			json_str(stdout, s.trace);
		else
			printf("null");
		printf(", \"records\": %llu, \"lost\": %llu, \"discarded\": %llu, "
		       "\"trace_bytes\": %llu, \"trace_files\": %llu, \"trace_error\": %lld, "
		       "\"cpu_user_s\": %.3f, \"cpu_sys_s\": %.3f, \"rss_kb\": %llu, "
		       "\"threads\": %llu, \"inodes\": %llu, \"ops\": %llu, \"errors\": %llu, "
		       "\"read_bytes\": %llu, \"write_bytes\": %llu, \"ops_by_type\": {",
		       (unsigned long long)s.records, (unsigned long long)s.lost,
		       (unsigned long long)s.discarded, (unsigned long long)s.trace_bytes,
		       (unsigned long long)s.trace_files, (long long)s.trace_error,
		       s.cpu_user_ns / 1e9, s.cpu_sys_ns / 1e9, (unsigned long long)s.rss_kb,
		       (unsigned long long)s.threads, (unsigned long long)s.inodes,
		       (unsigned long long)live_stats_ops(&s), (unsigned long long)s.errors,
		       (unsigned long long)s.rd_bytes, (unsigned long long)s.wr_bytes);
		for (i = 0, rc = 0; i < IOTAP_OP_MAX; i++)
			if (s.ops[i])
				printf("%s\"%s\": %llu", rc++ ? ", " : "", iotap_trace_op_name(i),
				       (unsigned long long)s.ops[i]);
		printf("}}\n");
		return 0;
	}
	fmt_dur(up, sizeof(up), s.uptime_ns);
	printf("mount      %s (%s mode), daemon pid %llu, up %s\n", s.mountpoint,
	       !strcmp(s.mode, "cache") ? "cache" : "direct_io", (unsigned long long)s.pid, up);
	if (s.ring) {
		live_fmt_size(b1, sizeof(b1), (double)s.trace_bytes);
		live_fmt_size(b2, sizeof(b2), (double)s.ring_cap);
		printf("trace      flight recorder: the last %s of %s kept in memory "
		       "(iotap trace MNT save FILE)\n", b1, b2);
	} else if (s.tracing) {
		live_fmt_size(b1, sizeof(b1), (double)s.trace_bytes);
		printf("trace      %s, %s so far (file %llu of this mount)\n", s.trace, b1,
		       (unsigned long long)s.trace_files);
	} else {
		printf("trace      none: not tracing%s\n",
		       s.trace_files ? "" : " (iotap trace MNT start FILE)");
	}
	printf("records    %llu written, %llu lost%s\n", (unsigned long long)s.records,
	       (unsigned long long)s.lost, s.trace_error ? ", WRITE ERROR" : "");
	if (s.trace_error)
		printf("           the trace could not be written: %s\n",
		       strerror((int)-s.trace_error));
	printf("daemon     cpu %.2f s (%.1f%% of uptime), rss %.1f MiB, %llu threads, "
	       "%llu inodes known\n", cpu_s, up_s > 0 ? 100.0 * cpu_s / up_s : 0.0,
	       s.rss_kb / 1024.0, (unsigned long long)s.threads, (unsigned long long)s.inodes);
	live_fmt_size(b2, sizeof(b2), (double)s.rd_bytes);
	live_fmt_size(b3, sizeof(b3), (double)s.wr_bytes);
	printf("served     %llu ops (%llu errors), %s read, %s written\n",
	       (unsigned long long)live_stats_ops(&s), (unsigned long long)s.errors, b2, b3);
	printf("by op     ");
	for (i = 0; i < IOTAP_OP_MAX; i++)
		if (s.ops[i])
			printf(" %s %llu", iotap_trace_op_name(i), (unsigned long long)s.ops[i]);
	printf("\n");
	return 0;
}
