// SPDX-License-Identifier: MIT
/*
 * wbfail.c - cache mode: keep the kernel's view true after a failed writeback
 *
 * With the writeback cache the kernel acknowledges write(2) into its page
 * cache and writes back later; when that WRITE fails (ENOSPC on a full
 * disk) the application learns of it only at fsync() or close(), and the
 * kernel keeps the pages it could not write and the size it extended the
 * file to: the mount shows data that is not on disk (a 64 MiB write on a
 * 32 MiB ext4 read back as 64 MiB). Two notifications put it right, sent
 * from a thread of their own, never from the request's path (the kernel
 * waits on the very writeback being answered):
 *
 *  - at once, FUSE_NOTIFY_INVAL_INODE for the whole file: the kernel drops
 *    its pages (writing back what is still dirty) and attributes, so reads
 *    come from the backing file;
 *  - once a handle on the file is released, FUSE_NOTIFY_PRUNE (protocol
 *    7.45, Linux 6.16): the kernel drops the file's unused dentries, and
 *    with them the inode, so the next lookup takes the backing file's size
 *    (a writeback-cache kernel never takes a size from GETATTR: it trusts
 *    its own). A file still open keeps its inode: prune is retried at each
 *    release and a little later (the kernel sends RELEASE before it lets
 *    go of the dentry). Kernels without it answer EINVAL: logged once.
 *
 * The queue holds node ids, never inode pointers: the kernel may forget a
 * node before the thread gets to it, and a notification about a node it no
 * longer has is a no-op. Duplicates are merged, so the writebacks that an
 * invalidation itself triggers (and that fail again) queue it once more at
 * most; the pages are gone after that.
 */
#include <errno.h>
#include <linux/fuse.h>
#include <pthread.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>

#include "fs_i.h"

#ifndef FUSE_NOTIFY_PRUNE_CODE
#define FUSE_NOTIFY_PRUNE_CODE	9	/* uapi 7.45; older headers lack it */
#endif

#define WB_QUEUE	256
/* Prune tries after a release, ms: the kernel lets go of the dentry after RELEASE. */
static const unsigned int prune_delay_ms[] = { 5, 50, 500 };
#define PRUNE_TRIES	(sizeof(prune_delay_ms) / sizeof(prune_delay_ms[0]))

struct wb_item {
	uint64_t nodeid;
	uint64_t due_ns;		/* CLOCK_MONOTONIC */
	unsigned int prune;		/* 0: invalidate; else the prune try (1-based) */
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t thread;
	bool running, stop;
	struct fs_ctx *fs;
	struct wb_item q[WB_QUEUE];
	unsigned int n;
	bool warned_full, warned_prune;
} wb = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };

/* Queue one notification (merged with an equal one). Caller holds wb.lock. */
static void enqueue(uint64_t nodeid, unsigned int prune, uint64_t due_ns)
{
	unsigned int i;

	for (i = 0; i < wb.n; i++)
		if (wb.q[i].nodeid == nodeid && !wb.q[i].prune == !prune) {
			if (prune && prune < wb.q[i].prune) {
				wb.q[i].prune = prune;
				wb.q[i].due_ns = due_ns;
			}
			return;
		}
	if (wb.n == WB_QUEUE) {
		if (!wb.warned_full) {
			wb.warned_full = true;
			fs_log(FS_LOG_WARN, "writeback errors on more than %u files at once: "
			       "some stay in the kernel's cache until their next lookup", WB_QUEUE);
		}
		return;
	}
	wb.q[wb.n++] = (struct wb_item){ .nodeid = nodeid, .prune = prune, .due_ns = due_ns };
	pthread_cond_signal(&wb.cond);
}

static int send_prune(struct fs_ctx *fs, uint64_t nodeid)
{
	struct fuse_out_header oh = { .error = FUSE_NOTIFY_PRUNE_CODE, .unique = 0 };
	struct { uint32_t count, padding; uint64_t spare; } po = { .count = 1 };
	struct iovec iov[3] = {
		{ &oh, sizeof(oh) }, { &po, sizeof(po) }, { &nodeid, sizeof(nodeid) },
	};

	oh.len = sizeof(oh) + sizeof(po) + sizeof(nodeid);
	return writev(fuse_session_fd(fs->se), iov, 3) < 0 ? -errno : 0;
}

static void serve(struct wb_item it)
{
	struct fs_ctx *fs = wb.fs;
	int ret;

	if (!it.prune) {
		ret = fuse_lowlevel_notify_inval_inode(fs->se, it.nodeid, 0, 0);
		if (ret && ret != -ENOENT && fs_log_on(FS_LOG_DEBUG))
			fs_log(FS_LOG_DEBUG, "inval_inode after a failed writeback: %s", strerror(-ret));
		return;
	}
	ret = send_prune(fs, it.nodeid);
	if (ret && ret != -ENOENT && !wb.warned_prune) {
		wb.warned_prune = true;
		fs_log(FS_LOG_WARN, "the kernel refuses FUSE_NOTIFY_PRUNE (%s): after a failed "
		       "writeback the mount shows the size the application wrote until the "
		       "file's inode leaves the kernel's cache", strerror(-ret));
	}
}

static void *wb_thread(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&wb.lock);
	while (!wb.stop) {
		uint64_t t = iotap_clock_ns(), next = UINT64_MAX;
		unsigned int i;

		for (i = 0; i < wb.n; i++)
			if (wb.q[i].due_ns <= t)
				break;
		if (i < wb.n) {
			struct wb_item it = wb.q[i];

			wb.q[i] = wb.q[--wb.n];
			if (it.prune && it.prune < PRUNE_TRIES)
				enqueue(it.nodeid, it.prune + 1,
					t + prune_delay_ms[it.prune] * 1000000ull);
			pthread_mutex_unlock(&wb.lock);
			serve(it);
			pthread_mutex_lock(&wb.lock);
			continue;
		}
		for (i = 0; i < wb.n; i++)
			if (wb.q[i].due_ns < next)
				next = wb.q[i].due_ns;
		if (next == UINT64_MAX) {
			pthread_cond_wait(&wb.cond, &wb.lock);
		} else {
			iotap_cond_wait_until(&wb.cond, &wb.lock, next);
		}
	}
	pthread_mutex_unlock(&wb.lock);
	return NULL;
}

int fs_wbfail_start(struct fs_ctx *fs)
{
	int ret;

	if (!fs->cache_mode)
		return 0;
	wb.fs = fs;
	wb.stop = false;
	ret = pthread_create(&wb.thread, NULL, wb_thread, NULL);
	if (ret)
		return -ret;
	wb.running = true;
	return 0;
}

void fs_wbfail_stop(void)
{
	if (!wb.running)
		return;
	pthread_mutex_lock(&wb.lock);
	wb.stop = true;
	wb.n = 0;
	pthread_cond_signal(&wb.cond);
	pthread_mutex_unlock(&wb.lock);
	pthread_join(wb.thread, NULL);
	wb.running = false;
}

void fs_wbfail_write(struct fs_ctx *fs, struct fs_inode *inode)
{
	uint64_t nodeid = fs_nodeid(fs, inode);

	if (!wb.running)
		return;
	uatomic_set(&inode->wb_failed, 1);
	pthread_mutex_lock(&wb.lock);
	enqueue(nodeid, 0, 0);
	/* a writeback after the last release (mmap, a late flush) gets its prune too */
	enqueue(nodeid, 1, iotap_clock_ns() + prune_delay_ms[0] * 1000000ull);
	pthread_mutex_unlock(&wb.lock);
}

void fs_wbfail_release(struct fs_ctx *fs, struct fs_inode *inode)
{
	if (!wb.running || !uatomic_read(&inode->wb_failed))
		return;
	pthread_mutex_lock(&wb.lock);
	enqueue(fs_nodeid(fs, inode), 1, iotap_clock_ns() + prune_delay_ms[0] * 1000000ull);
	pthread_mutex_unlock(&wb.lock);
}
