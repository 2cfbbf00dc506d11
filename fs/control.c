// SPDX-License-Identifier: MIT
/*
 * control.c - start, stop and rotate the trace of a live mount
 *
 * The request arrives as a setxattr of IOTAP_FS_XATTR_CTL on the mount's
 * root (ops_xattr.c checks the caller first: root or CAP_SYS_ADMIN). Why
 * that channel and not a socket: the kernel tells us who sent the request
 * (fuse_req_ctx), nothing else has to be created, secured and cleaned up
 * beside the mount, it works wherever the mount is visible (containers,
 * bind mounts), and a path that is not an iotap mount cannot answer it.
 * The value is one line: "start|rotate|save FLAGS PATH" or "stop", FLAGS
 * "-" or "force"; rotate's PATH may be empty (the next numbered name).
 * save writes a flight recorder's window (mount --ring) to PATH; a flight
 * recorder has no file to start, stop or rotate.
 *
 * The mount has one recorder for its life once it has traced at all
 * (fs->recorder); fs->rec is the recorder while a trace is being written
 * and NULL otherwise, and each request reads it once (fs_capture_start), so a
 * mount that is not tracing does what an untraced mount does. Start
 * switches the recorder into the new file and then publishes fs->rec;
 * stop clears fs->rec and then closes the file: an op still in flight
 * across the stop records into the recorder, which drops it (no file) or,
 * after the next start, discards it as older than the file. The recorder
 * is only freed at unmount, when no worker is left, so no op ever holds a
 * dangling pointer. Rotation switches files inside the recorder without
 * touching fs->rec: every record goes to exactly one of the two files.
 *
 * Each new file starts with the NAME bindings of every inode the kernel
 * still knows (fs_ctl_rebind(), in the recorder's writer thread at the
 * switch): their current names are read back from the backing fs
 * (/proc/self/fd of an O_PATH fd), so each file stands alone for report
 * and replay even for files opened before it began. An inode forgotten
 * while the walk runs may miss its binding.
 *
 * Trace paths must be absolute and outside the mounted tree: the daemon
 * writing into its own mount would call itself. A parent directory on
 * any FUSE file system is refused, which covers this mount whatever the
 * path says (symlinks, bind mounts).
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "fs_i.h"

#define AUTO_NAME_TRIES		100000

/* --- rebinding ----------------------------------------------------------- */

struct rebind_ent {
	uint64_t ino, parent, size;
	uint32_t mode, uid, gid;
	unsigned int depth;		/* '/' in the relative path: parents first */
	char *name;
};

static int ent_cmp(const void *a, const void *b)
{
	const struct rebind_ent *x = a, *y = b;

	return x->depth < y->depth ? -1 : x->depth > y->depth;
}

/* Fill @e from @inode's current name in the backing fs; false to skip it. */
static bool rebind_one(struct fs_ctx *fs, struct fs_inode *inode, struct rebind_ent *e)
{
	char proc[FS_PROCNAME_MAX], path[PATH_MAX + 16], *rel, *slash;
	size_t blen = strlen(fs->backing);
	struct fs_fdref ref;
	struct stat st, pst;
	ssize_t n;
	bool ok = false;

	if (fs_inode_fd(fs, inode, &ref))
		return false;
	fs_procname(proc, ref.fd);
	n = readlink(proc, path, sizeof(path) - 1);
	if (n <= 0 || fstat(ref.fd, &st))
		goto out;
	path[n] = '\0';
	/* an unlinked file still open keeps the name it had */
	if (n > 10 && !strcmp(path + n - 10, " (deleted)"))
		path[n - 10] = '\0';
	if (blen == 1)
		blen = 0;	/* backing "/" */
	if (strncmp(path, fs->backing, blen) || path[blen] != '/' || !path[blen + 1])
		goto out;	/* not below the backing dir (another mount's view) */
	rel = path + blen + 1;
	slash = strrchr(rel, '/');
	if (slash) {
		*slash = '\0';
		if (fstatat(fs->root_fd, rel, &pst, AT_SYMLINK_NOFOLLOW))
			goto out;
		*slash = '/';
		e->parent = pst.st_ino;
	} else {
		e->parent = fs->root->ino;
	}
	e->name = strdup(slash ? slash + 1 : rel);
	if (!e->name)
		goto out;
	e->depth = 0;
	for (; *rel; rel++)
		e->depth += *rel == '/';
	e->ino = st.st_ino;
	e->mode = st.st_mode;
	e->uid = st.st_uid;
	e->gid = st.st_gid;
	e->size = (uint64_t)st.st_size;
	ok = true;
out:
	fs_fdref_put(&ref);
	return ok;
}

static void emit_name(struct iotap_trace_recorder *r, uint64_t ino, uint64_t parent,
		      const char *name, uint32_t mode, uint32_t uid, uint32_t gid, uint64_t size)
{
	struct iotap_trace_rec rec;
	size_t len = strnlen(name, IOTAP_TRACE_NAME_MAX - 1);

	iotap_trace_name_init(&rec, ino, parent, mode, uid, gid, size, 0, name, (uint32_t)len);
	rec.tid = (uint32_t)gettid();
	rec.pid = (uint32_t)getpid();
	iotap_trace_recorder_emit(r, &rec);
}

bool fs_ctl_name_inode(struct fs_ctx *fs, struct fs_inode *inode, struct iotap_trace_recorder *r,
		       bool emit)
{
	struct rebind_ent e;
	struct iotap_trace_rec rec;

	if (!rebind_one(fs, inode, &e))
		return false;
	if (emit) {
		emit_name(r, e.ino, e.parent, e.name, e.mode, e.uid, e.gid, e.size);
	} else {
		iotap_trace_name_init(&rec, e.ino, e.parent, e.mode, e.uid, e.gid, e.size, 0, e.name,
				      (uint32_t)strnlen(e.name, IOTAP_TRACE_NAME_MAX - 1));
		rec.tid = (uint32_t)gettid();
		rec.pid = (uint32_t)getpid();
		rec.time_ns = iotap_trace_op_begin(r);
		iotap_trace_record(r, &rec);
	}
	free(e.name);
	return true;
}

/**
 * fs_ctl_rebind - the recorder's rebind callback: NAME records for every
 * inode the kernel knows, the root first, then parents before children
 * @arg: struct fs_ctx
 * @r:   the recorder, in its writer thread, right after a switch
 */
void fs_ctl_rebind(void *arg, struct iotap_trace_recorder *r)
{
	struct fs_ctx *fs = arg;
	struct fs_inode **v = NULL;
	struct rebind_ent *ents;
	struct stat st;
	long n, i, k = 0;

	if (fstat(fs->root_fd, &st) == 0)
		emit_name(r, st.st_ino, 0, fs->backing, st.st_mode, st.st_uid, st.st_gid,
			  (uint64_t)st.st_size);
	urcu_memb_register_thread();
	n = fs_inode_collect(fs, &v);
	ents = n > 0 ? calloc((size_t)n, sizeof(*ents)) : NULL;
	for (i = 0; i < n; i++) {
		/* with --only-under: only what is under a subtree, and the dirs above */
		if (ents && v[i] != fs->root && fs_scope(fs, v[i], NULL) != FS_SCOPE_OUT &&
		    rebind_one(fs, v[i], &ents[k]))
			k++;
		fs_inode_forget(fs, v[i], 1);
	}
	urcu_memb_unregister_thread();
	free(v);
	if (n < 0)
		fs_log(FS_LOG_WARN, "no memory to rebind the files in use in the new trace");
	if (!ents)
		return;
	qsort(ents, (size_t)k, sizeof(*ents), ent_cmp);
	for (i = 0; i < k; i++) {
		emit_name(r, ents[i].ino, ents[i].parent, ents[i].name, ents[i].mode, ents[i].uid,
			  ents[i].gid, ents[i].size);
		free(ents[i].name);
	}
	free(ents);
}

/* --- the requests -------------------------------------------------------- */

void fs_trace_header(struct fs_ctx *fs, struct iotap_trace_header *hdr, char **layout)
{
	iotap_trace_header_init(hdr, IOTAP_SOURCE_CAPTURE);
	hdr->capture_mode = fs->cache_mode ? IOTAP_MODE_CACHE : IOTAP_MODE_DIRECT;
	hdr->mount_opts = fs->mount_opts;
	hdr->cmdline = fs->o.cmdline;
	hdr->backing = fs->backing;
	hdr->mountpoint = fs->mountpoint;
	hdr->fuse = fs->fuse_desc;
	if (iotap_trace_layout(fs->backing, layout))
		*layout = NULL;		/* not known: the header goes without it */
	hdr->layout = *layout;
}

void fs_recorder_opts(struct fs_ctx *fs, struct iotap_trace_recorder_opts *ro)
{
	memset(ro, 0, sizeof(*ro));
	ro->sample_path = fs->backing;
	ro->sample_ms = fs->o.sample_ms;
	ro->perm = fs->perm;
	ro->rebind = fs_ctl_rebind;
	ro->rebind_arg = fs;
}

/* Is @path one the daemon may create a trace at? 0 or -errno. */
static int check_path(struct fs_ctx *fs, char *path)
{
	size_t mlen = strlen(fs->mountpoint);
	char *slash = strrchr(path, '/');
	struct statfs sf;
	int dfd, ret = 0;

	if (path[0] != '/' || !slash || !slash[1] || strstr(path, "/../") ||
	    strstr(path, "/./"))
		return -EINVAL;
	if (!strncmp(path, fs->mountpoint, mlen) && (path[mlen] == '/' || mlen == 1))
		return -EXDEV;
	*slash = '\0';
	dfd = open(slash == path ? "/" : path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	*slash = '/';
	if (dfd < 0)
		return -errno;
	if (fstatfs(dfd, &sf))
		ret = -errno;
	else if (sf.f_type == FUSE_SUPER_MAGIC)
		ret = -EXDEV;
	close(dfd);
	return ret;
}

/* @pat with strftime(3) conversions of now, or a copy when it has no %. */
static char *expand_time(const char *pat)
{
	char out[PATH_MAX];
	struct tm tm;
	time_t now = time(NULL);

	if (!strchr(pat, '%'))
		return strdup(pat);
	localtime_r(&now, &tm);
	if (!strftime(out, sizeof(out), pat, &tm))
		return NULL;
	return strdup(out);
}

char *fs_ctl_expand(struct fs_ctx *fs, const char *path)
{
	(void)fs;
	return expand_time(path);
}

/* Remember @path among the files written; delete the oldest beyond rotate_keep. */
static void note_file(struct fs_ctx *fs, const char *path)
{
	unsigned int keep = fs->o.rotate_keep;
	char **v, *c;

	if (!keep)
		return;
	c = strdup(path);
	v = c ? realloc(fs->kept, (fs->nkept + 1) * sizeof(*v)) : NULL;
	if (!v) {
		free(c);
		return;
	}
	fs->kept = v;
	fs->kept[fs->nkept++] = c;
	while (fs->nkept > keep) {
		if (unlink(fs->kept[0]) && errno != ENOENT)
			fs_log(FS_LOG_WARN, "cannot remove old trace '%s': %s", fs->kept[0],
			       strerror(errno));
		else
			fs_log(FS_LOG_INFO, "removed old trace '%s' (--rotate-keep %u)",
			       fs->kept[0], keep);
		free(fs->kept[0]);
		memmove(fs->kept, fs->kept + 1, --fs->nkept * sizeof(*fs->kept));
	}
}

void fs_ctl_note_file(struct fs_ctx *fs, const char *path)
{
	pthread_mutex_lock(&fs->ctl_lock);
	fs->file_start_ns = iotap_trace_now_ns();
	note_file(fs, path);
	pthread_mutex_unlock(&fs->ctl_lock);
}

/*
 * The next file of a rotation: a strftime pattern expanded now, else
 * "DIR/NAME.iotap" -> "DIR/NAME.N.iotap" (else PATH.N); the first of
 * those not there yet (a pattern's name gets .N too if it exists).
 */
static char *next_name(struct fs_ctx *fs)
{
	char *base = expand_time(fs->trace_base), *p;
	const char *dot;
	int i;

	if (!base)
		return NULL;
	if (strchr(fs->trace_base, '%') && access(base, F_OK) && errno == ENOENT)
		return base;
	dot = strrchr(base, '.');

	if (!dot || strcmp(dot, ".iotap") || strchr(dot, '/'))
		dot = base + strlen(base);
	for (i = 0; i < AUTO_NAME_TRIES; i++) {
		if (asprintf(&p, "%.*s.%llu%s", (int)(dot - base), base,
			     (unsigned long long)++fs->rot_seq, dot) < 0)
			break;
		if (access(p, F_OK) && errno == ENOENT) {
			free(base);
			return p;
		}
		free(p);
	}
	free(base);
	return NULL;
}

/* Switch the mount's recorder into @path (NULL: stop). ctl_lock held. */
static int do_switch(struct fs_ctx *fs, const char *path, bool force)
{
	struct iotap_trace_header hdr;
	char *layout = NULL;
	int ret;

	if (!path)
		return iotap_trace_recorder_switch(fs->recorder, NULL, NULL, 0);
	fs_trace_header(fs, &hdr, &layout);
	ret = iotap_trace_recorder_switch(fs->recorder, path, &hdr,
					  force ? IOTAP_TRACE_FORCE : 0);
	free(layout);
	return ret;
}

/* Write the flight recorder's window to @path. */
static int ctl_save(struct fs_ctx *fs, char *path, bool force)
{
	struct iotap_trace_header hdr;
	char *layout = NULL, *copy;
	int ret;

	if (!fs->ring)
		return -EOPNOTSUPP;
	ret = check_path(fs, path);
	if (ret)
		return ret;
	copy = expand_time(path);
	if (!copy)
		return -ENOMEM;
	fs_trace_header(fs, &hdr, &layout);
	ret = iotap_trace_recorder_save(fs->recorder, copy, &hdr, force ? IOTAP_TRACE_FORCE : 0);
	free(layout);
	if (!ret)
		fs_log(FS_LOG_INFO, "flight recorder saved to '%s'", copy);
	free(copy);
	return ret;
}

static int ctl_start(struct fs_ctx *fs, char *path, bool force)
{
	struct iotap_trace_recorder_opts ro;
	char *copy;
	int ret;

	if (fs->ring)
		return -EALREADY;
	if (fs->rec)
		return -EBUSY;
	ret = check_path(fs, path);
	if (ret)
		return ret;
	copy = expand_time(path);	/* a strftime pattern: rotations expand it again */
	if (!copy)
		return -ENOMEM;
	if (!fs->recorder) {
		fs_recorder_opts(fs, &ro);
		ret = iotap_trace_recorder_open(&fs->recorder, NULL, NULL, &ro);
		if (ret) {
			free(copy);
			return ret;
		}
	}
	ret = do_switch(fs, copy, force);
	if (ret) {
		free(copy);
		return ret;
	}
	free(fs->trace_base);
	fs->trace_base = strdup(path);
	free(fs->trace_path);
	fs->trace_path = copy;
	fs->rot_seq = 0;
	fs->file_start_ns = iotap_trace_now_ns();
	note_file(fs, copy);
	CMM_STORE_SHARED(fs->rec, fs->recorder);
	return 0;
}

static int ctl_stop(struct fs_ctx *fs)
{
	if (fs->ring)
		return -EALREADY;
	if (!fs->rec)
		return -ENODATA;
	CMM_STORE_SHARED(fs->rec, NULL);
	/* ops still in flight record into the recorder, which has no file for them */
	do_switch(fs, NULL, false);
	free(fs->trace_path);
	fs->trace_path = NULL;
	return 0;
}

static int ctl_rotate(struct fs_ctx *fs, char *path, bool force)
{
	char *next;
	int ret;

	if (fs->ring)
		return -EALREADY;
	if (!fs->rec)
		return -ENODATA;
	if (*path) {
		ret = check_path(fs, path);
		if (ret)
			return ret;
		next = expand_time(path);
	} else {
		if (!fs->trace_base)
			fs->trace_base = strdup(fs->trace_path);
		next = fs->trace_base ? next_name(fs) : NULL;
	}
	if (!next)
		return -ENOMEM;
	ret = do_switch(fs, next, force);
	if (ret) {
		free(next);
		return ret;
	}
	free(fs->trace_path);
	fs->trace_path = next;
	if (*path) {
		free(fs->trace_base);
		fs->trace_base = strdup(path);
		fs->rot_seq = 0;
	}
	fs->file_start_ns = iotap_trace_now_ns();
	note_file(fs, next);
	return 0;
}

/**
 * fs_ctl_request - carry out one control request (the value of a setxattr
 * of IOTAP_FS_XATTR_CTL); the caller is already checked
 * Return: 0 or -errno for the setxattr reply: -EINVAL (malformed),
 * -EBUSY (start while tracing), -ENODATA (stop or rotate while not),
 * -EXDEV (a path in the mounted tree or on FUSE), -EEXIST, and those of
 * creating the file.
 */
int fs_ctl_request(struct fs_ctx *fs, fuse_req_t req, const char *value, size_t size)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	char buf[PATH_MAX + 32], *cmd, *flags, *path, *save = NULL;
	char *old = NULL;
	bool force;
	int ret;

	if (size >= sizeof(buf) || memchr(value, '\0', size) || memchr(value, '\n', size))
		return -EINVAL;
	memcpy(buf, value, size);
	buf[size] = '\0';
	cmd = strtok_r(buf, " ", &save);
	flags = strtok_r(NULL, " ", &save);
	path = save ? save : (char *)"";
	if (!cmd || (strcmp(cmd, "stop") && (!flags || (strcmp(flags, "-") &&
							 strcmp(flags, "force")))))
		return -EINVAL;
	force = flags && !strcmp(flags, "force");

	pthread_mutex_lock(&fs->ctl_lock);
	if (fs->trace_path)
		old = strdup(fs->trace_path);
	if (!strcmp(cmd, "start") && *path)
		ret = ctl_start(fs, path, force);
	else if (!strcmp(cmd, "stop") && !flags)
		ret = ctl_stop(fs);
	else if (!strcmp(cmd, "rotate"))
		ret = ctl_rotate(fs, path, force);
	else if (!strcmp(cmd, "save") && *path)
		ret = ctl_save(fs, path, force);
	else
		ret = -EINVAL;
	if (ret)
		fs_log(FS_LOG_WARN, "trace %s '%s' for uid %u pid %u failed: %s", cmd, path,
		       (unsigned int)ctx->uid, (unsigned int)ctx->pid, strerror(-ret));
	else if (!strcmp(cmd, "save"))
		;	/* logged by ctl_save() */
	else if (!strcmp(cmd, "start"))
		fs_log(FS_LOG_INFO, "trace started: '%s' (uid %u pid %u)", fs->trace_path,
		       (unsigned int)ctx->uid, (unsigned int)ctx->pid);
	else
		fs_log(FS_LOG_INFO, "trace '%s' closed (%s, uid %u pid %u)%s%s%s", old ? old : "?",
		       cmd, (unsigned int)ctx->uid, (unsigned int)ctx->pid,
		       fs->trace_path ? ", now '" : "", fs->trace_path ? fs->trace_path : "",
		       fs->trace_path ? "'" : "");
	pthread_mutex_unlock(&fs->ctl_lock);
	free(old);
	return ret;
}

/* --- rotation by size and time, flight recorder triggers --------------- */

void fs_ctl_trigger(struct fs_ctx *fs, const char *fmt, ...)
{
	va_list ap;

	if (!fs->ring || !fs->o.save_to || uatomic_cmpxchg(&fs->trig_state, 0, 1) != 0)
		return;		/* a save is pending already */
	va_start(ap, fmt);
	vsnprintf(fs->trig_why, sizeof(fs->trig_why), fmt, ap);
	va_end(ap);
	cmm_smp_wmb();
	CMM_STORE_SHARED(fs->trig_state, 2);
}

/* Policy thread, ctl_lock held: carry out a pending trigger. */
static void policy_save(struct fs_ctx *fs)
{
	char *path = NULL, *p;
	uint64_t now = iotap_trace_now_ns();
	int ret, i;

	if (CMM_LOAD_SHARED(fs->trig_state) != 2)
		return;
	cmm_smp_rmb();
	if (fs->trig_last_ns && now - fs->trig_last_ns < 1000000000ull) {
		/* at most one save a second: this one is dropped */
		CMM_STORE_SHARED(fs->trig_state, 0);
		return;
	}
	p = expand_time(fs->o.save_to);
	if (p && !access(p, F_OK)) {
		const char *dot = strrchr(p, '.');

		if (!dot || strcmp(dot, ".iotap"))
			dot = p + strlen(p);
		for (i = 0; i < AUTO_NAME_TRIES && !path; i++) {
			if (asprintf(&path, "%.*s.%llu%s", (int)(dot - p), p,
				     (unsigned long long)++fs->save_seq, dot) < 0) {
				path = NULL;
				break;
			}
			if (!access(path, F_OK)) {
				free(path);
				path = NULL;
			}
		}
		free(p);
	} else {
		path = p;
	}
	ret = path ? ctl_save(fs, path, false) : -ENOMEM;
	if (ret)
		fs_log(FS_LOG_WARN, "flight recorder: %s, but saving '%s' failed: %s", fs->trig_why,
		       path ? path : fs->o.save_to, strerror(-ret));
	else
		fs_log(FS_LOG_INFO, "flight recorder saved to '%s': %s", path, fs->trig_why);
	free(path);
	fs->trig_last_ns = iotap_trace_now_ns();
	CMM_STORE_SHARED(fs->trig_state, 0);
}

/*
 * The policy thread looks every 100 ms (or a tenth of --rotate-time, if
 * shorter): the size is the current file's bytes on disk, which grow a
 * chunk at a time (at least every second), so a file ends within about
 * one chunk of --rotate-size.
 */
static void *policy_main(void *arg)
{
	struct fs_ctx *fs = arg;
	uint64_t tick_ns = 100000000ull;

	if (fs->ring)
		tick_ns = 20000000ull;	/* triggers: save within about 20 ms */
	if (fs->o.rotate_ns && fs->o.rotate_ns / 10 < tick_ns)
		tick_ns = fs->o.rotate_ns / 10 ? fs->o.rotate_ns / 10 : 1000000;
	pthread_mutex_lock(&fs->ctl_lock);
	while (!fs->policy_stop) {
		struct iotap_trace_recorder_stats st;
		uint64_t now;
		char *old;
		int ret;

		iotap_cond_wait_ns(&fs->policy_wake, &fs->ctl_lock, tick_ns);
		if (fs->policy_stop)
			continue;
		if (fs->ring) {
			policy_save(fs);
			continue;
		}
		if (!fs->rec)
			continue;
		iotap_trace_recorder_stats(fs->recorder, &st);
		now = iotap_trace_now_ns();
		if (!(fs->o.rotate_bytes && st.file_bytes >= fs->o.rotate_bytes) &&
		    !(fs->o.rotate_ns && now - fs->file_start_ns >= fs->o.rotate_ns))
			continue;
		old = fs->trace_path ? strdup(fs->trace_path) : NULL;
		ret = ctl_rotate(fs, (char *)"", false);
		if (ret)
			fs_log(FS_LOG_WARN, "cannot rotate trace '%s': %s", old ? old : "?",
			       strerror(-ret));
		else
			fs_log(FS_LOG_INFO, "trace '%s' closed (%s), now '%s'", old ? old : "?",
			       st.file_bytes >= fs->o.rotate_bytes && fs->o.rotate_bytes ?
			       "--rotate-size" : "--rotate-time", fs->trace_path);
		free(old);
	}
	pthread_mutex_unlock(&fs->ctl_lock);
	return NULL;
}

void fs_ctl_policy_start(struct fs_ctx *fs)
{
	sigset_t all, old;

	if (!fs->o.rotate_bytes && !fs->o.rotate_ns && !(fs->ring && fs->o.save_to))
		return;
	pthread_cond_init(&fs->policy_wake, NULL);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	fs->policy_on = pthread_create(&fs->policy, NULL, policy_main, fs) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (fs->policy_on)
		pthread_setname_np(fs->policy, "iotap-rotate");
	else
		fs_log(FS_LOG_WARN, "cannot start the rotation thread: traces will not rotate "
		       "by size or time");
}

void fs_ctl_policy_stop(struct fs_ctx *fs)
{
	unsigned int i;

	if (fs->policy_on) {
		pthread_mutex_lock(&fs->ctl_lock);
		fs->policy_stop = 1;
		pthread_cond_signal(&fs->policy_wake);
		pthread_mutex_unlock(&fs->ctl_lock);
		pthread_join(fs->policy, NULL);
		pthread_cond_destroy(&fs->policy_wake);
		fs->policy_on = 0;
	}
	for (i = 0; i < fs->nkept; i++)
		free(fs->kept[i]);
	free(fs->kept);
	fs->kept = NULL;
	fs->nkept = 0;
}

/* The current trace path into @buf ("" when not tracing). */
void fs_ctl_trace_path(struct fs_ctx *fs, char *buf, size_t size)
{
	pthread_mutex_lock(&fs->ctl_lock);
	snprintf(buf, size, "%s", fs->trace_path ? fs->trace_path : "");
	pthread_mutex_unlock(&fs->ctl_lock);
}
