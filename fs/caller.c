// SPDX-License-Identifier: MIT
/*
 * caller.c - who sent a request: its process, and whether it may control
 * the mount or is iotap's own tool; the /proc lookups behind both
 *
 * The kernel sends the calling thread's id; its process (Tgid from
 * /proc/TID/status) is cached in a direct-mapped table of 64-bit {tid,
 * tgid, epoch} words read and written with single atomic loads and stores,
 * so a thread costs one /proc read per second at most (the epoch is that
 * of the request's start time). A thread id reused by another process
 * within that second is attributed to the previous owner.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fs_i.h"
#include "iotap_base.h"

#define TGID_CACHE_SIZE		4096	/* power of two */

static uint64_t tgid_cache[TGID_CACHE_SIZE];	/* see fs_tgid() */

/* Read a small /proc file into @buf (NUL-terminated); bytes or -errno. */
static ssize_t read_proc(const char *path, char *buf, size_t size)
{
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	if (n < 0)
		n = -errno;
	else
		buf[n] = '\0';
	close(fd);
	return n;
}

/* The text after @key ("\nName:") in /proc/@tid/status, read into @buf; NULL if none. */
static const char *proc_status_field(uint32_t tid, const char *key, char *buf, size_t size)
{
	char path[48];
	const char *p;

	snprintf(path, sizeof(path), "/proc/%u/status", tid);
	if (read_proc(path, buf, size) < 0)
		return NULL;
	p = strstr(buf, key);
	return p ? p + strlen(key) : NULL;
}

static uint32_t read_tgid(uint32_t tid)
{
	char buf[512];
	const char *p = proc_status_field(tid, "\nTgid:", buf, sizeof(buf));

	return p ? (uint32_t)strtoul(p, NULL, 10) : tid;
}

/*
 * Cache entry: tid (22 bits) | tgid (22 bits) | epoch (20 bits), where the
 * epoch counts 2^28 ns (~268 ms) of CLOCK_MONOTONIC_COARSE. An entry is
 * trusted for TGID_TTL epochs (~1 s), so a thread id reused by another
 * process (pid_max is often 32768) is attributed right after at most that.
 */
#define TGID_ID_BITS	22	/* pid_max can be at most 2^22 */
#define TGID_ID_MASK	((1u << TGID_ID_BITS) - 1)
#define TGID_EPOCH_BITS	20
#define TGID_EPOCH_MASK	((1u << TGID_EPOCH_BITS) - 1)
#define TGID_TTL	4

static inline uint32_t tgid_epoch_of(uint64_t mono_ns)
{
	return (uint32_t)(mono_ns >> 28) & TGID_EPOCH_MASK;
}

static uint32_t tgid_epoch(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return tgid_epoch_of(iotap_timespec_ns(&ts));
}

/*
 * Thread-group id of thread @tid, cached; @now is the epoch of a
 * CLOCK_MONOTONIC time read just before (a request's own start time saves
 * the coarse clock read; coarse and fine differ by a tick at most, which
 * at worst makes an entry look stale once).
 */
static uint32_t fs_tgid_at(uint32_t tid, uint32_t now)
{
	uint64_t *slot = &tgid_cache[tid & (TGID_CACHE_SIZE - 1)];
	uint32_t tgid;
	uint64_t e;

	if (!tid || tid > TGID_ID_MASK)
		return tid;
	e = CMM_LOAD_SHARED(*slot);
	if ((uint32_t)(e >> (64 - TGID_ID_BITS)) == tid &&
	    ((now - (uint32_t)e) & TGID_EPOCH_MASK) < TGID_TTL)
		return (uint32_t)(e >> TGID_EPOCH_BITS) & TGID_ID_MASK;
	tgid = read_tgid(tid);
	if (tgid > TGID_ID_MASK)
		return tgid;
	/* One aligned 64-bit store: readers see an old or a new entry, never a mix. */
	CMM_STORE_SHARED(*slot, (uint64_t)tid << (64 - TGID_ID_BITS) |
				(uint64_t)tgid << TGID_EPOCH_BITS | now);
	return tgid;
}

/* Thread-group id of thread @tid, cached. */
static uint32_t fs_tgid(uint32_t tid)
{
	return fs_tgid_at(tid, tgid_epoch());
}

uint32_t fs_caller_tgid(uint32_t tid)
{
	return fs_tgid(tid);
}

uint32_t fs_caller_tgid_at(uint32_t tid, uint64_t mono_ns)
{
	return fs_tgid_at(tid, tgid_epoch_of(mono_ns));
}

bool fs_proc_in_group(uint32_t tid, uint32_t gid)
{
	char buf[4096];
	const char *p = proc_status_field(tid, "\nGroups:", buf, sizeof(buf));
	char *end;

	if (!p)
		return false;	/* unknown: the caller drops the bit, the safe side */
	for (;;) {
		unsigned long g = strtoul(p, &end, 10);

		if (end == p)
			return false;
		if (g == gid)
			return true;
		p = end;
	}
}

/*
 * Control requests. The kernel tells who sent a request (fuse_req_ctx: the
 * caller's fsuid, fsgid and thread id); nobody can forge that through the
 * xattr channel, so the daemon decides here rather than trusting the
 * mount root's permission bits (a 0777 root lets anyone setxattr).
 */
#define CAP_SYS_ADMIN_BIT	21

bool fs_caller_admin(fuse_req_t req)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	char buf[2048];
	const char *p;

	if (ctx->uid == 0)
		return true;
	p = proc_status_field((uint32_t)ctx->pid, "\nCapEff:", buf, sizeof(buf));
	return p && (strtoull(p, NULL, 16) >> CAP_SYS_ADMIN_BIT & 1);
}

bool fs_caller_may_mark(struct fs_ctx *fs, fuse_req_t req)
{
	struct stat st;

	if (fs_caller_admin(req))
		return true;
	return fs->o.allow_mark_owner && fstat(fs->root_fd, &st) == 0 &&
	       fuse_req_ctx(req)->uid == st.st_uid;
}

/*
 * iotap's own control commands (status, top, mark, trace, umount) reach the
 * mount's root not only with their control xattrs: a STATFS to see a FUSE
 * mount, and the GETATTR the kernel sends first whenever the root's
 * attributes are older than attr_timeout (its permission check on the
 * getxattr, with default_permissions). Such a caller runs the daemon's own
 * executable (same inode as /proc/self/exe) with one of those commands as
 * argv[1]; its requests then neither reach the trace nor the live
 * counters. The verdict is cached per thread id for TGID_TTL epochs, as
 * fs_tgid() caches: one entry is tid (22 bits) | verdict (1) | epoch (20).
 */
static const char *const tool_cmds[] = { "status", "top", "mark", "trace", "umount" };
static uint64_t tool_cache[TGID_CACHE_SIZE];
static dev_t self_dev;
static ino_t self_ino;
static pthread_once_t self_once = PTHREAD_ONCE_INIT;

static void self_exe(void)
{
	struct stat st;

	if (!stat("/proc/self/exe", &st)) {
		self_dev = st.st_dev;
		self_ino = st.st_ino;
	}
}

static bool read_is_tool(uint32_t tgid)
{
	char path[48], buf[256];
	struct stat st;
	const char *arg1;
	ssize_t n;
	size_t i;

	pthread_once(&self_once, self_exe);
	snprintf(path, sizeof(path), "/proc/%u/exe", tgid);
	if (!self_ino || stat(path, &st) || st.st_dev != self_dev || st.st_ino != self_ino)
		return false;
	snprintf(path, sizeof(path), "/proc/%u/cmdline", tgid);
	n = read_proc(path, buf, sizeof(buf));
	if (n <= 0)
		return false;
	arg1 = memchr(buf, '\0', (size_t)n);
	if (!arg1 || ++arg1 >= buf + n)
		return false;
	for (i = 0; i < sizeof(tool_cmds) / sizeof(tool_cmds[0]); i++)
		if (!strcmp(arg1, tool_cmds[i]))
			return true;
	return false;
}

bool fs_caller_is_tool(fuse_req_t req)
{
	uint32_t tid = (uint32_t)fuse_req_ctx(req)->pid, now = tgid_epoch();
	uint64_t *slot = &tool_cache[tid & (TGID_CACHE_SIZE - 1)];
	uint64_t e;
	bool yes;

	if (!tid || tid > TGID_ID_MASK)
		return false;
	e = CMM_LOAD_SHARED(*slot);
	if ((uint32_t)(e >> (64 - TGID_ID_BITS)) == tid &&
	    ((now - (uint32_t)e) & TGID_EPOCH_MASK) < TGID_TTL)
		return e >> TGID_EPOCH_BITS & 1;
	yes = read_is_tool(fs_tgid(tid));
	CMM_STORE_SHARED(*slot, (uint64_t)tid << (64 - TGID_ID_BITS) |
				(uint64_t)yes << TGID_EPOCH_BITS | now);
	return yes;
}

void fs_log_refused(fuse_req_t req, const char *what)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	char path[48], comm[64] = "?";
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%u/comm", (unsigned int)ctx->pid);
	n = read_proc(path, comm, sizeof(comm));
	if (n > 0 && comm[n - 1] == '\n')
		comm[n - 1] = '\0';
	fs_log(FS_LOG_WARN, "refused %s from uid %u pid %u (%s): not root or CAP_SYS_ADMIN%s",
	       what, (unsigned int)ctx->uid, fs_tgid((uint32_t)ctx->pid), comm,
	       strstr(what, "mark") ? ", nor the owner allowed by --allow-mark-owner" : "");
}

/* CPU time of process @pid, ns; 0 or -errno. */
int fs_proc_cpu(struct fs_ctx *fs, uint32_t pid, uint64_t *user_ns, uint64_t *sys_ns)
{
	unsigned long long ut, st;
	char path[48], buf[1024];
	const char *p;
	ssize_t n;
	int i;

	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	n = read_proc(path, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	/* comm may hold spaces and parentheses: fields restart after the last ')' */
	p = strrchr(buf, ')');
	if (!p)
		return -EINVAL;
	p++;
	/* fields 3 (state) .. 13 precede utime (14) and stime (15) */
	for (i = 3; i <= 13; i++) {
		p = strchr(p + 1, ' ');
		if (!p)
			return -EINVAL;
	}
	if (sscanf(p, " %llu %llu", &ut, &st) != 2)
		return -EINVAL;
	*user_ns = ut * (1000000000ull / fs->clk_tck);
	*sys_ns = st * (1000000000ull / fs->clk_tck);
	return 0;
}
