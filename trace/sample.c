// SPDX-License-Identifier: MIT
/*
 * sample.c - the clock, and resource samples for SAMPLE records
 *
 * iotap_trace_now_ns() is the one clock of the library (CLOCK_MONOTONIC).
 * A struct smp_state holds open fds on the counters a SAMPLE record copies:
 * the block device holding a path (/sys/dev/block/MAJ:MIN/stat, found from
 * stat(2)'s st_dev), this process's CPU time (getrusage) and resident set
 * (/proc/self/statm), and the system's CPU time (/proc/stat). The recorder's
 * writer thread owns one; nothing here locks. Files are re-read with
 * pread(2) at offset 0, which procfs and sysfs regenerate.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "iotap_base.h"
#include "trace_i.h"

/**
 * iotap_trace_now_ns - CLOCK_MONOTONIC now, ns
 *
 * Context: any thread.
 */
uint64_t iotap_trace_now_ns(void)
{
	return iotap_clock_ns();
}

/* Reads up to @len - 1 bytes of a procfs/sysfs file from its start. */
static ssize_t read_at0(int fd, char *buf, size_t len)
{
	ssize_t n;

	do {
		n = pread(fd, buf, len - 1, 0);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return n;
}

/* Parses up to @max unsigned decimals separated by blanks; returns how many. */
static unsigned int parse_u64s(const char *s, uint64_t *v, unsigned int max)
{
	unsigned int n = 0;
	char *end;

	while (n < max) {
		while (*s == ' ' || *s == '\t')
			s++;
		if (*s < '0' || *s > '9')
			break;
		v[n++] = strtoull(s, &end, 10);
		s = end;
	}
	return n;
}

/**
 * smp_open - find the counters to sample
 * @s:        filled; release with smp_close()
 * @path:     a path on the filesystem whose device to watch, or NULL
 * @note:     where to write a NOTE text when there is no device to watch
 * @note_len: its size
 *
 * Return: 0 when the device counters are available (or @path is NULL), 1
 * when they are not and @note says why (device samples are then 0:0 with
 * zero counters; the CPU fields are still filled).
 */
int smp_open(struct smp_state *s, const char *path, char *note, size_t note_len)
{
	char sysfs[64];
	struct stat st;
	long tck, page;

	memset(s, 0, sizeof(*s));
	s->dev_fd = -1;
	s->stat_fd = open("/proc/stat", O_RDONLY | O_CLOEXEC);
	s->statm_fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
	tck = sysconf(_SC_CLK_TCK);
	s->tick_ns = tck > 0 ? 1000000000ull / (uint64_t)tck : 10000000ull;
	page = sysconf(_SC_PAGESIZE);
	s->page_kb = page >= 1024 ? (uint64_t)page / 1024 : 4;

	if (!path)
		return 0;
	if (stat(path, &st) < 0) {
		snprintf(note, note_len,
			 "sample path '%s': cannot stat: %s; no device counters",
			 path, strerror(errno));
		return 1;
	}
	if (major(st.st_dev) == 0) {
		snprintf(note, note_len,
			 "sample path '%s' is on device %u:%u, which is not a block device "
			 "(tmpfs, overlay, btrfs subvolume...); no device counters",
			 path, major(st.st_dev), minor(st.st_dev));
		return 1;
	}
	snprintf(sysfs, sizeof(sysfs), "/sys/dev/block/%u:%u/stat",
		 major(st.st_dev), minor(st.st_dev));
	s->dev_fd = open(sysfs, O_RDONLY | O_CLOEXEC);
	if (s->dev_fd < 0) {
		snprintf(note, note_len,
			 "sample path '%s' is on device %u:%u, which has no %s; no device counters",
			 path, major(st.st_dev), minor(st.st_dev), sysfs);
		return 1;
	}
	s->major = major(st.st_dev);
	s->minor = minor(st.st_dev);
	return 0;
}

/**
 * smp_read - take one sample
 * @s:   from smp_open()
 * @out: filled; counters that cannot be read are left zero
 */
void smp_read(struct smp_state *s, struct iotap_trace_sample *out)
{
	uint64_t v[11];
	char buf[512];

	memset(out, 0, sizeof(*out));
	if (s->dev_fd >= 0 && read_at0(s->dev_fd, buf, sizeof(buf)) > 0 &&
	    parse_u64s(buf, v, 11) == 11) {
		out->dev_major = s->major;
		out->dev_minor = s->minor;
		out->rd_ios = v[0];
		out->rd_sectors = v[2];
		out->wr_ios = v[4];
		out->wr_sectors = v[6];
		out->in_flight = v[8];
		out->io_ticks_ms = v[9];
		out->queue_ms = v[10];
	}
	iotap_cpu_ns(RUSAGE_SELF, &out->proc_user_ns, &out->proc_sys_ns);
	/* "cpu  user nice system idle iowait irq softirq ..." in USER_HZ */
	if (s->stat_fd >= 0 && read_at0(s->stat_fd, buf, sizeof(buf)) > 0 &&
	    !strncmp(buf, "cpu ", 4) && parse_u64s(buf + 4, v, 7) == 7) {
		out->sys_user_ns = (v[0] + v[1]) * s->tick_ns;
		out->sys_sys_ns = (v[2] + v[5] + v[6]) * s->tick_ns;
		out->sys_idle_ns = v[3] * s->tick_ns;
		out->sys_iowait_ns = v[4] * s->tick_ns;
	}
	/* "size resident shared ..." in pages */
	if (s->statm_fd >= 0 && read_at0(s->statm_fd, buf, sizeof(buf)) > 0 &&
	    parse_u64s(buf, v, 2) == 2)
		out->proc_rss_kb = v[1] * s->page_kb;
}

/**
 * smp_close - close what smp_open() opened
 * @s: sampler
 */
void smp_close(struct smp_state *s)
{
	if (s->dev_fd >= 0)
		close(s->dev_fd);
	if (s->stat_fd >= 0)
		close(s->stat_fd);
	if (s->statm_fd >= 0)
		close(s->statm_fd);
	s->dev_fd = s->stat_fd = s->statm_fd = -1;
}
