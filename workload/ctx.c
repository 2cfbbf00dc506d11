// SPDX-License-Identifier: MIT
/*
 * ctx.c - the run context of a workload: its target, its trace, its
 * errors, its CPU time and the interrupt flag
 *
 * Read workload_i.h first: it states the threading, CPU and trace rules.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/magic.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "sys.h"
#include "workload_i.h"

void iotap_workload_interrupt(void)
{
	sys_stop();
}

int iotap_workload_interrupted(void)
{
	return sys_stopped();
}

int wl_stopped(void)
{
	return sys_stopped();
}

void wl_thread_cpu(uint64_t *user_ns, uint64_t *sys_ns)
{
	iotap_cpu_ns(RUSAGE_THREAD, user_ns, sys_ns);
}

void wl_cpu(struct iotap_workload_ctx *c, uint64_t *user_ns, uint64_t *sys_ns)
{
	uint64_t u, s;

	wl_thread_cpu(&u, &s);
	*user_ns = u + atomic_load(&c->helper_user_ns);
	*sys_ns = s + atomic_load(&c->helper_sys_ns);
	/*
	 * Readers take a 0/0 mark for "no CPU figure" (tools/analysis/report.c); a
	 * fresh owner thread can read 0 us. One ns is below rusage's 1 us
	 * resolution and cancels out of every difference.
	 */
	if (!*user_ns && !*sys_ns)
		*user_ns = 1;
}

int wl_fail(struct iotap_workload_ctx *c, int err, const char *fmt, ...)
{
	va_list ap;

	/* the first failure is the one worth reporting; cleanup errors follow it */
	if (c->what[0] || err == -EINTR)
		return err;
	va_start(ap, fmt);
	vsnprintf(c->what, sizeof(c->what), fmt, ap);
	va_end(ap);
	return err;
}

const char *iotap_workload_ctx_error(const struct iotap_workload_ctx *c)
{
	return c->what;
}

/* --- targets and contexts ------------------------------------------------ */

int iotap_workload_target_check(const char *path, int need_dir, struct iotap_workload_target *t)
{
	struct statvfs sv;
	struct statfs sf;
	struct stat st;
	long pages, psize;

	memset(t, 0, sizeof(*t));
	if (stat(path, &st))
		return -errno;
	pages = sysconf(_SC_PHYS_PAGES);
	psize = sysconf(_SC_PAGESIZE);
	if (pages > 0 && psize > 0)
		t->ram_bytes = (uint64_t)pages * (uint64_t)psize;
	t->is_dir = S_ISDIR(st.st_mode);
	t->is_blockdev = S_ISBLK(st.st_mode);
	if (S_ISREG(st.st_mode))
		t->size = (uint64_t)st.st_size;
	if (need_dir && !t->is_dir)
		return -ENOTDIR;
	if (t->is_blockdev) {
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		off_t end;

		if (fd < 0)
			return -errno;
		end = lseek(fd, 0, SEEK_END);
		close(fd);
		if (end > 0)
			t->size = (uint64_t)end;
		return 0;
	}
	if (statvfs(path, &sv))
		return -errno;
	if (!statfs(path, &sf))
		t->is_fuse = sf.f_type == FUSE_SUPER_MAGIC;
	t->avail_bytes = (uint64_t)sv.f_bavail * (uint64_t)sv.f_frsize;
	t->fsid = (uint64_t)sv.f_fsid;
	t->is_rdonly = !!(sv.f_flag & ST_RDONLY);
	if (need_dir) {
		if (sv.f_flag & ST_RDONLY)
			return -EROFS;
		if (access(path, W_OK | X_OK))
			return -errno;
	}
	return 0;
}

/*
 * --force over an existing regular file: the trace is written under a
 * sibling name and renamed over the old one when the run closes, so a run
 * that fails to start or is killed (SIGKILL, a crash) keeps the old trace.
 * A device, a pipe or a symlink is written to as before.
 */
static int trace_target(struct iotap_workload_ctx *c, const struct iotap_workload_env *env)
{
	struct stat st;
	int ret;

	if (!(env->flags & IOTAP_WORKLOAD_TRACE_FORCE) || lstat(env->trace_path, &st) ||
	    !S_ISREG(st.st_mode))
		return 0;
	c->trace_path = strdup(env->trace_path);
	if (!c->trace_path)
		return -ENOMEM;
	ret = iotap_replace_tmp(env->trace_path, &c->trace_tmp);
	if (ret) {
		free(c->trace_path);
		c->trace_path = NULL;
	}
	return ret;
}

int iotap_workload_ctx_open(struct iotap_workload_ctx **out, const struct iotap_workload_env *env)
{
	struct iotap_trace_recorder_opts ropts = { 0 };
	struct iotap_trace_header hdr;
	char *layout;
	struct iotap_workload_ctx *c;
	struct stat st;
	int ret;

	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->dir = strdup(env->target);
	if (!c->dir) {
		ret = -ENOMEM;
		goto err_free_ctx;
	}
	c->dirfd = open(env->target, O_RDONLY | O_CLOEXEC);
	if (c->dirfd < 0) {
		ret = -errno;
		goto err_free_dir;
	}
	if (fstat(c->dirfd, &st)) {
		ret = -errno;
		goto err_close_dir;
	}
	c->dir_ino = st.st_ino;
	if (!S_ISDIR(st.st_mode)) {
		/* a file or device target (dd --read, hdparm): opened by path */
		close(c->dirfd);
		c->dirfd = -1;
	}
	c->flags = env->flags;
	c->progress = env->progress;
	c->progress_arg = env->progress_arg;
	c->lockstep = env->lockstep;
	c->pid = (uint32_t)getpid();
	c->uid = (uint32_t)geteuid();
	c->gid = (uint32_t)getegid();
	atomic_init(&c->next_fh, 0);
	atomic_init(&c->helper_user_ns, 0);
	atomic_init(&c->helper_sys_ns, 0);
	atomic_init(&c->ph_done, 0);
	pthread_mutex_init(&c->named_lock, NULL);
	iotap_map_init(&c->named, 0);

	if (env->trace_path) {
		iotap_trace_header_init(&hdr, IOTAP_SOURCE_WORKLOAD);
		hdr.capture_mode = IOTAP_MODE_NONE;
		hdr.cmdline = env->cmdline;
		hdr.backing = env->target;
		hdr.workload = env->workload;
		if (iotap_trace_layout(env->target, &layout))
			layout = NULL;	/* not known: the header goes without it */
		hdr.layout = layout;
		ret = trace_target(c, env);
		if (ret)
			goto err_close_dir;
		ropts.flags = env->flags & IOTAP_WORKLOAD_TRACE_FORCE ? IOTAP_TRACE_FORCE : 0;
		ropts.sample_path = env->target;
		/*
		 * bonnie++ 2.x's per-char phases issue ~3 million 1-byte calls
		 * in a second or two; a 256 MiB pool lets the writer thread
		 * catch up instead of dropping (memory is taken as used).
		 */
		ropts.max_bytes = 256u << 20;
		ropts.buf_bytes = 1u << 20;
		if (c->trace_tmp)
			ropts.flags &= ~IOTAP_TRACE_FORCE;	/* a new name: O_EXCL */
		ret = iotap_trace_recorder_open(&c->rec, c->trace_tmp ? c->trace_tmp : env->trace_path,
						&hdr, &ropts);
		free(layout);
		if (ret)
			goto err_free_trace;
		struct sys_who who = { sys_tid(), c->pid, c->uid, c->gid };

		sys_record_name(c->rec, &who, c->dir_ino, 0, st.st_mode, st.st_uid, st.st_gid,
				(uint64_t)st.st_size, 0, env->target, iotap_trace_op_begin(c->rec));
	}
	*out = c;
	return 0;

err_free_trace:
	free(c->trace_tmp);
	free(c->trace_path);
err_close_dir:
	if (c->dirfd >= 0)
		close(c->dirfd);
err_free_dir:
	iotap_map_release(&c->named);
	pthread_mutex_destroy(&c->named_lock);
	free(c->dir);
err_free_ctx:
	free(c);
	return ret;
}

int iotap_workload_ctx_close_kept(struct iotap_workload_ctx *c, char **kept)
{
	int ret = 0;

	if (kept)
		*kept = NULL;
	if (!c)
		return 0;
	iotap_workload_ctx_leave(c);
	if (c->rec)
		ret = iotap_trace_recorder_close(c->rec);
	if (c->trace_tmp) {
		/* the run happened: its trace replaces the old one, even a partial one */
		int err = iotap_replace_commit(c->trace_tmp, c->trace_path);

		if (err && !ret)
			ret = err;
		/*
		 * Not renamed (@trace_path became another writer's live file,
		 * or rename(2) failed): the run's trace stays under its
		 * temporary name, which the caller is told.
		 */
		if (err && kept) {
			*kept = c->trace_tmp;
			c->trace_tmp = NULL;
		}
		free(c->trace_tmp);
		free(c->trace_path);
	}
	if (c->dirfd >= 0)
		close(c->dirfd);
	iotap_map_release(&c->named);
	pthread_mutex_destroy(&c->named_lock);
	free(c->spans);
	free(c->dir);
	free(c);
	return ret;
}

int iotap_workload_ctx_close(struct iotap_workload_ctx *c)
{
	return iotap_workload_ctx_close_kept(c, NULL);
}

uint64_t iotap_workload_ctx_lost(struct iotap_workload_ctx *c)
{
	return c->rec ? iotap_trace_recorder_lost(c->rec) : 0;
}

int iotap_workload_ctx_drop_error(const struct iotap_workload_ctx *c)
{
	return c ? c->drop_err : 0;
}

void *wl_buf_alloc(size_t len)
{
	void *p;

	if (posix_memalign(&p, 4096, len ? len : 1))
		return NULL;
	memset(p, 0, len);
	return p;
}

const char *wl_size_name(uint64_t bytes, char *buf, size_t len)
{
	if (bytes && !(bytes % (1ull << 30)))
		snprintf(buf, len, "%" PRIu64 "g", bytes >> 30);
	else if (bytes && !(bytes % (1ull << 20)))
		snprintf(buf, len, "%" PRIu64 "m", bytes >> 20);
	else if (bytes && !(bytes % 1024))
		snprintf(buf, len, "%" PRIu64 "k", bytes >> 10);
	else
		snprintf(buf, len, "%" PRIu64, bytes);
	return buf;
}

