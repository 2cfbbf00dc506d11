// SPDX-License-Identifier: MIT
/*
 * session_opts.c - the mount's options: -o parsed, the input checked, the
 * request limits planned, libfuse's arguments and the header's string
 *
 * All of it runs before anything is opened (session.c, step 2): the
 * backing dir and the mount point are directories, the mount point is not
 * already mounted unless it is the backing dir itself, /dev/fuse can be
 * opened, and the transport (transport/uring_setup.c) is settled, so a
 * refused mount has touched nothing.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "session_i.h"

/* Options the daemon takes from -o itself; the rest goes to libfuse. */
struct fs_own_opts {
	unsigned int cache_mode;
	unsigned int fd_cache;
	unsigned int max_read;
	unsigned int uring_depth;
	unsigned int uring_spin;
	int uring_spin_set;
	unsigned int uring_direct;
	unsigned int max_write;
	double timeout;
	int timeout_set;
	double attr_timeout, entry_timeout;
	int attr_set, entry_set;
};

static const struct fuse_opt own_opt_spec[] = {
	{ "cache_mode=%u", offsetof(struct fs_own_opts, cache_mode), 0 },
	{ "fd_cache=%u", offsetof(struct fs_own_opts, fd_cache), 0 },
	{ "max_read=%u", offsetof(struct fs_own_opts, max_read), 0 },
	{ "uring_depth=%u", offsetof(struct fs_own_opts, uring_depth), 0 },
	{ "uring_spin=%u", offsetof(struct fs_own_opts, uring_spin), 0 },
	{ "uring_spin=", offsetof(struct fs_own_opts, uring_spin_set), 1 },
	{ "uring_direct=%u", offsetof(struct fs_own_opts, uring_direct), 0 },
	{ "max_write=%u", offsetof(struct fs_own_opts, max_write), 0 },
	{ "timeout=%lf", offsetof(struct fs_own_opts, timeout), 0 },
	{ "timeout=", offsetof(struct fs_own_opts, timeout_set), 1 },
	{ "attr_timeout=%lf", offsetof(struct fs_own_opts, attr_timeout), 0 },
	{ "attr_timeout=", offsetof(struct fs_own_opts, attr_set), 1 },
	{ "entry_timeout=%lf", offsetof(struct fs_own_opts, entry_timeout), 0 },
	{ "entry_timeout=", offsetof(struct fs_own_opts, entry_set), 1 },
	FUSE_OPT_END
};

/* Undo mountinfo's octal escapes (\040 etc.) in place. */
static void unescape_octal(char *s)
{
	char *d = s;

	while (*s) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*d++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
			s += 4;
		} else {
			*d++ = *s++;
		}
	}
	*d = '\0';
}

/*
 * The filesystem type of the topmost mount at @path ("" if @path is no
 * mount point), in @type. 0 or -errno.
 */
static int mount_type_at(const char *path, char *type, size_t size)
{
	char *line = NULL;
	size_t cap = 0;
	FILE *f;

	type[0] = '\0';
	f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		char *fields[5], *sep, *save = NULL, *p = line;
		int i;

		for (i = 0; i < 5; i++) {
			fields[i] = strtok_r(p, " ", &save);
			p = NULL;
			if (!fields[i])
				break;
		}
		if (i < 5)
			continue;
		unescape_octal(fields[4]);
		if (strcmp(fields[4], path))
			continue;
		sep = save ? strstr(save, " - ") : NULL;
		if (sep) {
			char *t = sep + 3;

			snprintf(type, size, "%.*s", (int)strcspn(t, " "), t);
		} else {
			snprintf(type, size, "?");
		}
	}
	free(line);
	fclose(f);
	return 0;
}

/* The kernel's cap on pages per request, 0 if it has none to read (then 256, compiled in). */
static unsigned int read_max_pages_limit(void)
{
	unsigned int v = 0;
	FILE *f = fopen("/proc/sys/fs/fuse/max_pages_limit", "re");

	if (f) {
		if (fscanf(f, "%u", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v;
}

/*
 * Plan max_write and max_pages before mounting (the header is written
 * before the INIT request comes): one call of up to max_write bytes needs
 * max_write / page + 1 pages when its buffer does not start on a page;
 * ask for that, up to fs.fuse.max_pages_limit (never changed here). Where
 * the limit is lower, max_write shrinks to what the pages hold, so aligned
 * calls stay whole and only unaligned ones are cut (marked IOTAP_OPF_CUT).
 */
static void plan_request_limits(struct fs_ctx *fs)
{
	unsigned int page = (unsigned int)sysconf(_SC_PAGESIZE), limit, cap;

	fs->page_size = page;
	fs->max_pages_want = (fs->max_write_asked + page - 1) / page + 1;
	fs->max_pages_limit = read_max_pages_limit();
	limit = fs->max_pages_limit ? fs->max_pages_limit : FS_KERNEL_MAX_PAGES;
	fs->max_pages = fs->max_pages_want < limit ? fs->max_pages_want : limit;
	cap = fs->max_pages * page;
	fs->max_write = fs->max_write_asked < cap ? fs->max_write_asked : cap;
	fs_describe_limits(fs);
}

/*
 * Check the input and parse our -o options. On failure @msg gets the text
 * to print after "iotap: ".
 */
int fs_check_input(struct fs_daemon *d, char *msg)
{
	struct fs_ctx *fs = &d->fs;
	const struct iotap_fs_opts *o = &fs->o;
	struct fs_own_opts own = { .cache_mode = o->cache_mode, .fd_cache = o->fd_cache,
				   .uring_direct = 1 };
	char type[64];
	struct stat st;
	size_t len;
	int ret;

	if (o->fuse_opts && *o->fuse_opts) {
		if (fuse_opt_add_arg(&d->args, "-o") || fuse_opt_add_arg(&d->args, o->fuse_opts))
			goto enomem;
		if (fuse_opt_parse(&d->args, &own, own_opt_spec, NULL) < 0) {
			snprintf(msg, MSG_MAX, "cannot mount '%s': bad -o options '%s'",
				 o->mountpoint, o->fuse_opts);
			return -EINVAL;
		}
	}
	fs->cache_mode = own.cache_mode ? 1 : 0;
	fs->perm.mode = o->trace_mode;
	fs->perm.has_gid = o->trace_gid_set;
	fs->perm.gid = o->trace_gid;
	if (own.uring_depth)
		fs->o.uring_depth = own.uring_depth;
	if (own.uring_spin_set) {
		if (own.uring_spin > FS_URING_SPIN_MAX_US) {
			snprintf(msg, MSG_MAX, "cannot mount '%s': uring_spin %u out of range: "
				 "0 (off) to %u microseconds", o->mountpoint, own.uring_spin,
				 FS_URING_SPIN_MAX_US);
			return -EINVAL;
		}
		fs->o.uring_spin_us = own.uring_spin;
		fs->o.uring_spin_set = 1;
	}
	/* READ and WRITE ring requests served without libfuse (transport/uring.c) */
	if (own.uring_direct > 1) {
		snprintf(msg, MSG_MAX, "cannot mount '%s': uring_direct %u out of range: 0 (READ "
			 "and WRITE through libfuse) or 1 (without it, the default)", o->mountpoint,
			 own.uring_direct);
		return -EINVAL;
	}
	fs->uring_direct = (int)own.uring_direct;
	fs->max_read = own.max_read && own.max_read < FS_MAX_IO ? own.max_read : FS_MAX_IO;
	fs->max_write_asked = o->max_write ? o->max_write : own.max_write ? own.max_write : FS_MAX_IO;
	if (fs->max_write_asked < FS_MIN_WRITE || fs->max_write_asked > FS_MAX_WRITE_URING) {
		snprintf(msg, MSG_MAX, "cannot mount '%s': max_write %u out of range: %u to %u bytes "
			 "(%u over /dev/fuse: libfuse %s reads requests into a buffer of 1 MiB + "
			 "4 KiB)", o->mountpoint, fs->max_write_asked, FS_MIN_WRITE,
			 FS_MAX_WRITE_URING, FS_MAX_IO, fuse_pkgversion());
		return -EINVAL;
	}
	plan_request_limits(fs);
	fs->o.fd_cache = own.fd_cache ? own.fd_cache : FS_DEFAULT_FD_CACHE;
	/* timeout= sets both; attr_timeout= and entry_timeout= one each */
	fs->attr_timeout = own.timeout_set ? own.timeout : FS_DEFAULT_TIMEOUT;
	fs->entry_timeout = fs->attr_timeout;
	if (own.attr_set)
		fs->attr_timeout = own.attr_timeout;
	if (own.entry_set)
		fs->entry_timeout = own.entry_timeout;
	/* --attr-timeout, --entry-timeout over -o */
	if (o->attr_set)
		fs->attr_timeout = o->attr_timeout;
	if (o->entry_set)
		fs->entry_timeout = o->entry_timeout;
	if (fs->attr_timeout < 0 || fs->entry_timeout < 0) {
		snprintf(msg, MSG_MAX, "cannot mount '%s': negative timeout", o->mountpoint);
		return -EINVAL;
	}

	if (stat(o->backing, &st) < 0) {
		snprintf(msg, MSG_MAX, "cannot mount '%s': backing directory '%s': %s",
			 o->mountpoint, o->backing, strerror(errno));
		return -errno;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(msg, MSG_MAX, "cannot mount '%s': backing '%s' is not a directory",
			 o->mountpoint, o->backing);
		return -ENOTDIR;
	}
	if (stat(o->mountpoint, &st) < 0) {
		if (errno == ENOTCONN)
			snprintf(msg, MSG_MAX, "cannot mount '%s': the daemon of the mount there "
				 "is gone (killed or crashed); 'iotap umount %s' removes the dead "
				 "mount", o->mountpoint, o->mountpoint);
		else
			snprintf(msg, MSG_MAX, "cannot mount '%s': %s", o->mountpoint,
				 strerror(errno));
		return -errno;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(msg, MSG_MAX, "cannot mount '%s': not a directory", o->mountpoint);
		return -ENOTDIR;
	}
	fs->backing = realpath(o->backing, NULL);
	fs->mountpoint = realpath(o->mountpoint, NULL);
	if (!fs->backing || !fs->mountpoint)
		goto enomem;
	len = strlen(fs->backing);
	if (!strncmp(fs->mountpoint, fs->backing, len) &&
	    (fs->mountpoint[len] == '/' || (len == 1 && fs->mountpoint[1]))) {
		/* the daemon's own lookups would walk into its mount */
		snprintf(msg, MSG_MAX, "cannot mount '%s': it is inside the backing directory "
			 "'%s'", o->mountpoint, o->backing);
		return -ELOOP;
	}
	if (mount_type_at(fs->mountpoint, type, sizeof(type)) == 0 && type[0]) {
		if (!strcmp(type, "fuse.iotap")) {
			char pid[24];

			/* stat may still answer from the kernel's cache: ask the daemon */
			if (getxattr(fs->mountpoint, IOTAP_FS_XATTR_PID, pid, sizeof(pid)) < 0 &&
			    errno == ENOTCONN)
				snprintf(msg, MSG_MAX, "cannot mount '%s': the daemon of the iotap "
					 "mount there is gone (killed or crashed); 'iotap umount "
					 "%s' removes the dead mount", o->mountpoint,
					 o->mountpoint);
			else
				snprintf(msg, MSG_MAX, "cannot mount '%s': already an iotap mount",
					 o->mountpoint);
			return -EBUSY;
		}
		/* mounting over a mount point is fine when it is the backing dir itself */
		if (strcmp(fs->mountpoint, fs->backing)) {
			snprintf(msg, MSG_MAX, "cannot mount '%s': already mounted (%s); only "
				 "the backing directory itself may be mounted over",
				 o->mountpoint, type);
			return -EBUSY;
		}
	}
	if (access("/dev/fuse", R_OK | W_OK) < 0) {
		snprintf(msg, MSG_MAX, "cannot mount '%s': /dev/fuse: %s", o->mountpoint,
			 strerror(errno));
		return -errno;
	}
	ret = fs_transport_choose(fs, msg, MSG_MAX);
	if (ret)
		return ret;
	/* libfuse reads /dev/fuse into 1 MiB + 4 KiB: only the rings can take more */
	if (fs->max_write_asked > FS_MAX_IO && fs->transport != IOTAP_FS_TRANSPORT_URING) {
		snprintf(msg, MSG_MAX, "cannot mount '%s': --max-write %u needs FUSE over io_uring "
			 "(--transport uring, with 'echo Y > /sys/module/fuse/parameters/"
			 "enable_uring'): over /dev/fuse libfuse %s reads requests into a buffer "
			 "of 1 MiB + 4 KiB, so %u is the most", o->mountpoint, fs->max_write_asked,
			 fuse_pkgversion(), FS_MAX_IO);
		return -EINVAL;
	}
	return 0;

enomem:
	snprintf(msg, MSG_MAX, "cannot mount '%s': %s", o->mountpoint, strerror(ENOMEM));
	return -ENOMEM;
}

void fs_describe_opts(struct fs_daemon *d)
{
	struct fs_ctx *fs = &d->fs;
	int i, n;

	n = snprintf(d->mount_opts, sizeof(d->mount_opts),
		     "%s,attr_timeout=%g,entry_timeout=%g,max_write=%u,max_read=%u,fd_cache=%u%s",
		     fs->cache_mode ? "cache_mode=1,writeback_cache,keep_cache" : "direct_io",
		     fs->attr_timeout, fs->entry_timeout, fs->max_write, fs->max_read, fs->o.fd_cache,
		     fs->privileged ? ",allow_other,default_permissions" : "");
	/* capture filters: the trace holds only what passed them */
	if (fs->o.only_ops && n > 0 && (size_t)n < sizeof(d->mount_opts)) {
		const char *sep = ",only_ops=";

		for (i = 0; i < 64 && n > 0 && (size_t)n < sizeof(d->mount_opts); i++)
			if (fs->o.only_ops >> i & 1) {
				n += snprintf(d->mount_opts + n, sizeof(d->mount_opts) - n, "%s%s",
					      sep, iotap_trace_op_name((unsigned int)i));
				sep = "+";
			}
	}
	if (fs->o.only_uid_set && n > 0 && (size_t)n < sizeof(d->mount_opts))
		n += snprintf(d->mount_opts + n, sizeof(d->mount_opts) - n, ",only_uid=%u",
			      fs->o.only_uid);
	if (fs->o.only_pid && n > 0 && (size_t)n < sizeof(d->mount_opts))
		n += snprintf(d->mount_opts + n, sizeof(d->mount_opts) - n, ",only_pid=%u",
			      fs->o.only_pid);
	/* one only_under= per subtree (a path may hold '+'), relative to the mount root */
	for (i = 0; i < (int)fs->under.n && n > 0 && (size_t)n < sizeof(d->mount_opts); i++)
		n += snprintf(d->mount_opts + n, sizeof(d->mount_opts) - n, ",only_under=%s",
			      fs->under.rel[i]);
	/* the transport and why (transport/uring_setup.c), then what is left of -o */
	if (n > 0 && (size_t)n < sizeof(d->mount_opts))
		n += snprintf(d->mount_opts + n, sizeof(d->mount_opts) - n,
			      ",transport=%s,transport_why=%s",
			      fs->transport == IOTAP_FS_TRANSPORT_URING ? "uring" : "dev",
			      fs->transport_why);
	for (i = 1; i < d->args.argc && n > 0 && (size_t)n < sizeof(d->mount_opts); i++) {
		const char *a = d->args.argv[i];

		if (!strcmp(a, "-o"))
			continue;
		if (!strncmp(a, "-o", 2))
			a += 2;
		n += snprintf(d->mount_opts + n, sizeof(d->mount_opts) - n, ",%s", a);
	}
}

int fs_build_args(struct fs_daemon *d)
{
	struct fs_ctx *fs = &d->fs;
	char *mo = NULL, *fsname = NULL, buf[32];
	int ret = -ENOMEM;

	if (asprintf(&fsname, "fsname=%s", fs->backing) < 0)
		return -ENOMEM;
	if (fuse_opt_add_opt_escaped(&mo, fsname) || fuse_opt_add_opt(&mo, "subtype=iotap"))
		goto out;
	snprintf(buf, sizeof(buf), "max_read=%u", fs->max_read);
	if (fuse_opt_add_opt(&mo, buf))
		goto out;
	if (fs->privileged && (fuse_opt_add_opt(&mo, "allow_other") ||
			       fuse_opt_add_opt(&mo, "default_permissions")))
		goto out;
	if (fuse_opt_insert_arg(&d->args, 1, "-o") || fuse_opt_insert_arg(&d->args, 2, mo))
		goto out;
	if (fs->o.debug && fuse_opt_add_arg(&d->args, "-d"))
		goto out;
	ret = 0;
out:
	free(mo);
	free(fsname);
	return ret;
}
