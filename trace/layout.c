// SPDX-License-Identifier: MIT
/*
 * layout.c - the storage stack under a path, as text for the trace header
 *
 * The seed posts show what decides a result as much as the workload does:
 * read-ahead (`blockdev --setra 8192` took one array from 632 to 959
 * MB/s), the RAID level and chunk, the ext3 stride, XFS or ext4. So every
 * trace carries the stack it ran on (header tag 9, "layout"), probed once
 * when the trace is opened, from /proc/self/mountinfo, /proc/meminfo, the
 * filesystem's superblock and /sys/dev/block. One fact a line, "key:
 * value", in this order:
 *
 *   path: /srv/pgdata
 *   fs: ext4 /dev/md0 on /srv (rw,relatime; rw,stripe=256)     mount; super options
 *   fs geometry: block 4096, stride 16, stripe_width 64 (blocks)      ext2/3/4
 *   fs geometry: block 4096, sunit 16, swidth 64 (blocks)             xfs
 *   dev md0 (9:0): raid10, chunk 512 KiB, 4 members, non-rotational, read_ahead ...
 *   dev  sda1 (8:1): partition of sda
 *   dev   sda (8:0): rotational, read_ahead 128 KiB, scheduler mq-deadline, ...
 *   ram: 24576 MiB
 *
 * Devices are listed from the filesystem's device down (partition, dm,
 * md, loop and their members, indented by depth; a loop device's backing
 * file brings its own filesystem line). Each level shows what the kernel
 * exposes there: read_ahead_kb, scheduler (the one in use), rotational,
 * nr_requests, write_cache, model. Anything that cannot be read is left
 * out, never guessed: a tmpfs has no device line, a superblock that cannot
 * be opened (not root) no geometry line.
 *
 * Context: any thread; reads files only, takes no locks.
 */
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "trace_i.h"

#define LAYOUT_DEPTH	6		/* device levels followed */
#define LAYOUT_MAX	16384		/* bytes of text at most */

struct lbuf {
	char *p;
	size_t len, cap;
	int err;
};

static void lb_printf(struct lbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void lb_printf(struct lbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->err)
		return;
	for (;;) {
		size_t room = b->cap - b->len;

		va_start(ap, fmt);
		n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? room : 0, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->err = -EINVAL;
			return;
		}
		if (b->p && (size_t)n < room) {
			b->len += (size_t)n;
			return;
		}
		if (b->len + (size_t)n + 1 > LAYOUT_MAX) {
			b->err = -E2BIG;
			return;
		} else {
			size_t ncap = b->cap ? b->cap * 2 : 1024;
			char *np;

			while (ncap < b->len + (size_t)n + 1)
				ncap *= 2;
			np = realloc(b->p, ncap);
			if (!np) {
				b->err = -ENOMEM;
				return;
			}
			b->p = np;
			b->cap = ncap;
		}
	}
}

/* First line of a small file, trailing newline cut; "" when it cannot be read. */
static const char *read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");

	buf[0] = '\0';
	if (!f)
		return buf;
	if (!fgets(buf, (int)len, f))
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

/* "[mq-deadline] none" -> "mq-deadline" */
static const char *sched_in_use(char *s)
{
	char *a = strchr(s, '['), *b;

	if (!a)
		return s;
	b = strchr(++a, ']');
	if (b)
		*b = '\0';
	return a;
}

/*
 * The mountinfo line of the mount holding @path (st_dev @dev): the longest
 * mount point that is a prefix of @real with that device.
 */
static int find_mount(const char *real, dev_t dev, char *fstype, char *source, char *mnt,
		      char *opts, char *sopts, size_t len)
{
	char line[4096], best[PATH_MAX] = "";
	FILE *f = fopen("/proc/self/mountinfo", "re");
	int found = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned int ma, mi;
		char mp[PATH_MAX], mo[1024], ty[64], src[PATH_MAX], so[1024] = "", *dash;
		size_t l;

		/* id parent maj:min root mountpoint opts [optional...] - type source superopts */
		if (sscanf(line, "%*u %*u %u:%u %*s %4095s %1023s", &ma, &mi, mp, mo) != 4)
			continue;
		dash = strstr(line, " - ");
		if (!dash || sscanf(dash + 3, "%63s %4095s %1023s", ty, src, so) < 2)
			continue;
		if (makedev(ma, mi) != dev)
			continue;
		l = strlen(mp);
		if (strncmp(real, mp, l) || (real[l] && real[l] != '/' && strcmp(mp, "/")))
			continue;
		if (found && strlen(best) >= l)
			continue;
		found = 1;
		snprintf(best, sizeof(best), "%s", mp);
		snprintf(fstype, len, "%s", ty);
		snprintf(source, len, "%s", src);
		snprintf(mnt, len, "%s", mp);
		snprintf(opts, len, "%s", mo);
		snprintf(sopts, len, "%s", so);
	}
	fclose(f);
	return found;
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[3] | (uint32_t)p[2] << 8 | (uint32_t)p[1] << 16 | (uint32_t)p[0] << 24;
}

/* The device node of @dev, opened read-only: /dev/DEVNAME from sysfs, checked by st_rdev. */
static int open_dev(dev_t dev)
{
	char path[PATH_MAX], line[256], name[200] = "";
	struct stat st;
	FILE *f;
	int fd;

	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/uevent", major(dev), minor(dev));
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "DEVNAME=%199s", name) == 1)
			break;
	fclose(f);
	if (!name[0])
		return -1;
	snprintf(path, sizeof(path), "/dev/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && (fstat(fd, &st) || !S_ISBLK(st.st_mode) || st.st_rdev != dev)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* RAID geometry from the superblock of the filesystem on @dev (root only). */
static void fs_geometry(struct lbuf *b, const char *fstype, dev_t dev)
{
	uint8_t sb[1024];
	ssize_t n;
	int fd;

	if (!strcmp(fstype, "ext2") || !strcmp(fstype, "ext3") || !strcmp(fstype, "ext4")) {
		fd = open_dev(dev);
		if (fd < 0)
			return;
		n = pread(fd, sb, sizeof(sb), 1024);
		close(fd);
		/* s_magic 0xEF53 at 0x38; s_log_block_size 0x18; s_raid_stride 0x164 (u16);
		 * s_raid_stripe_width 0x170 (u32) */
		if (n != (ssize_t)sizeof(sb) || sb[0x38] != 0x53 || sb[0x39] != 0xef)
			return;
		lb_printf(b, "fs geometry: block %u, stride %u, stripe_width %u (blocks)\n",
			  1024u << le32(sb + 0x18), (unsigned int)(sb[0x164] | sb[0x165] << 8),
			  le32(sb + 0x170));
	} else if (!strcmp(fstype, "xfs")) {
		fd = open_dev(dev);
		if (fd < 0)
			return;
		n = pread(fd, sb, 512, 0);
		close(fd);
		/* big-endian: sb_magicnum "XFSB", sb_blocksize at 4, sb_unit at 184, sb_width at 188 */
		if (n != 512 || memcmp(sb, "XFSB", 4))
			return;
		lb_printf(b, "fs geometry: block %u, sunit %u, swidth %u (blocks)\n", be32(sb + 4),
			  be32(sb + 184), be32(sb + 188));
	}
}

static void one_dev(struct lbuf *b, const char *sys, const char *name, unsigned int depth);

/* The members of a dm or md device (slaves/), one level down. */
static void members(struct lbuf *b, const char *sys, unsigned int depth)
{
	char dir[PATH_MAX], sub[PATH_MAX];
	struct dirent **ents = NULL;
	int n, i;

	snprintf(dir, sizeof(dir), "%s/slaves", sys);
	n = scandir(dir, &ents, NULL, alphasort);
	for (i = 0; i < n; i++) {
		if (ents[i]->d_name[0] != '.') {
			snprintf(sub, sizeof(sub), "/sys/class/block/%s", ents[i]->d_name);
			one_dev(b, sub, ents[i]->d_name, depth + 1);
		}
		free(ents[i]);
	}
	free(ents);
}

static void layout_fs(struct lbuf *b, const char *path, unsigned int depth);

/* One block device and what lies under it. @sys: its /sys/class/block/NAME directory. */
static void one_dev(struct lbuf *b, const char *sys, const char *name, unsigned int depth)
{
	char p[PATH_MAX], v[512], q[PATH_MAX], disk[PATH_MAX];
	unsigned int ma = 0, mi = 0;
	char *slash;

	if (depth >= LAYOUT_DEPTH || b->err)
		return;
	snprintf(p, sizeof(p), "%s/dev", sys);
	sscanf(read_line(p, v, sizeof(v)), "%u:%u", &ma, &mi);
	lb_printf(b, "dev%*s %s (%u:%u):", (int)depth, "", name, ma, mi);
	snprintf(p, sizeof(p), "%s/partition", sys);
	if (access(p, F_OK) == 0) {
		/* a partition: its disk is the parent directory in /sys */
		if (!realpath(sys, disk)) {
			lb_printf(b, " partition\n");
			return;
		}
		slash = strrchr(disk, '/');
		if (slash)
			*slash = '\0';
		slash = strrchr(disk, '/');
		lb_printf(b, " partition of %s\n", slash ? slash + 1 : disk);
		one_dev(b, disk, slash ? slash + 1 : disk, depth + 1);
		return;
	}
	snprintf(p, sizeof(p), "%s/md/level", sys);
	if (*read_line(p, v, sizeof(v))) {
		lb_printf(b, " %s", v);
		snprintf(p, sizeof(p), "%s/md/chunk_size", sys);
		if (*read_line(p, v, sizeof(v)) && strtoull(v, NULL, 10))
			lb_printf(b, ", chunk %llu KiB", strtoull(v, NULL, 10) / 1024);
		snprintf(p, sizeof(p), "%s/md/raid_disks", sys);
		if (*read_line(p, v, sizeof(v)))
			lb_printf(b, ", %s members", v);
		lb_printf(b, ",");
	}
	snprintf(p, sizeof(p), "%s/dm/name", sys);
	if (*read_line(p, v, sizeof(v)))
		lb_printf(b, " dm %s,", v);
	snprintf(p, sizeof(p), "%s/loop/backing_file", sys);
	if (*read_line(p, q, sizeof(q)))
		lb_printf(b, " loop over %s,", q);
	snprintf(p, sizeof(p), "%s/queue/rotational", sys);
	if (*read_line(p, v, sizeof(v)))
		lb_printf(b, " %s", strcmp(v, "0") ? "rotational" : "non-rotational");
	snprintf(p, sizeof(p), "%s/queue/read_ahead_kb", sys);
	if (*read_line(p, v, sizeof(v)))
		lb_printf(b, ", read_ahead %s KiB", v);
	snprintf(p, sizeof(p), "%s/queue/scheduler", sys);
	if (*read_line(p, v, sizeof(v)))
		lb_printf(b, ", scheduler %s", sched_in_use(v));
	snprintf(p, sizeof(p), "%s/queue/nr_requests", sys);
	if (*read_line(p, v, sizeof(v)))
		lb_printf(b, ", nr_requests %s", v);
	snprintf(p, sizeof(p), "%s/queue/write_cache", sys);
	if (*read_line(p, v, sizeof(v)))
		lb_printf(b, ", write_cache %s", v);
	snprintf(p, sizeof(p), "%s/device/model", sys);
	if (*read_line(p, v, sizeof(v))) {
		char *e = v + strlen(v);

		while (e > v && e[-1] == ' ')
			*--e = '\0';
		lb_printf(b, ", model %s", v);
	}
	lb_printf(b, "\n");
	members(b, sys, depth);
	if (*q)
		layout_fs(b, q, depth + 1);
}

/* The filesystem holding @path, its geometry, and its device chain. */
static void layout_fs(struct lbuf *b, const char *path, unsigned int depth)
{
	char real[PATH_MAX], fstype[PATH_MAX], source[PATH_MAX], mnt[PATH_MAX], opts[PATH_MAX];
	char sopts[PATH_MAX], sys[64];
	int found;
	struct stat st;

	if (depth >= LAYOUT_DEPTH || stat(path, &st) || !realpath(path, real))
		return;
	found = find_mount(real, st.st_dev, fstype, source, mnt, opts, sopts, sizeof(fstype));
	if (found)
		lb_printf(b, "%*sfs: %s %s on %s (%s; %s)\n", (int)depth, "", fstype, source, mnt,
			  opts, sopts);
	else
		lb_printf(b, "%*sfs: device %u:%u (not in mountinfo)\n", (int)depth, "",
			  major(st.st_dev), minor(st.st_dev));
	if (!major(st.st_dev))
		return;			/* tmpfs, overlay, FUSE...: no block device */
	if (found)
		fs_geometry(b, fstype, st.st_dev);
	snprintf(sys, sizeof(sys), "/sys/dev/block/%u:%u", major(st.st_dev), minor(st.st_dev));
	if (access(sys, F_OK) == 0) {
		char rp[PATH_MAX], *name;

		if (!realpath(sys, rp))
			return;
		name = strrchr(rp, '/');
		one_dev(b, rp, name ? name + 1 : rp, depth);
	}
}

/**
 * iotap_trace_layout - describe the storage stack under @path
 * @path: a directory or file (the backing directory, a workload's target)
 * @out:  malloc'ed text, the caller frees; lines "key: value\n"
 *
 * Return: 0, -errno of stat(@path), or -ENOMEM.
 */
int iotap_trace_layout(const char *path, char **out)
{
	struct lbuf b = { 0 };
	char real[PATH_MAX], line[256];
	unsigned long long kb = 0;
	struct stat st;
	FILE *f;

	*out = NULL;
	if (stat(path, &st))
		return -errno;
	lb_printf(&b, "path: %s\n", realpath(path, real) ? real : path);
	layout_fs(&b, path, 0);
	f = fopen("/proc/meminfo", "re");
	if (f) {
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "MemTotal: %llu kB", &kb) == 1)
				break;
		fclose(f);
	}
	if (kb)
		lb_printf(&b, "ram: %llu MiB\n", kb / 1024);
	if (b.err == -ENOMEM) {
		free(b.p);
		return -ENOMEM;
	}
	if (!b.p)
		return -ENOMEM;
	*out = b.p;
	return 0;
}
