// SPDX-License-Identifier: MIT
/*
 * cmd_trace.c - iotap trace MOUNTPOINT start FILE | stop | rotate [FILE]
 *
 * Controls the trace of a live mount without unmounting it: start writing
 * a trace (on a mount made without --trace, or after a stop), stop it, or
 * rotate it (the old file closed complete with its END record, the new
 * one starting with the NAME bindings of every file still in use, so each
 * stands alone). The request is a setxattr of IOTAP_FS_XATTR_CTL on the
 * mount's root, which the daemon answers itself for root or CAP_SYS_ADMIN
 * only (fs/control.c says why that channel).
 *
 * Everything that can be checked here is, before anything is sent, so
 * the user gets a message that names the problem: the path is an iotap
 * mount, FILE's directory exists, FILE does not (without --force), FILE
 * is not the trace being written, by this mount or any other (not even
 * with --force), and FILE is not inside the mounted tree (the daemon
 * would write into its own mount). The daemon checks again and refuses
 * with an errno.
 */
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "cmds.h"
#include "iotap_fs.h"
#include "live_mount.h"
#include "opt.h"

static int force_opt;		/* --force */

static const struct opt_desc trace_opts[] = {
	OPT_BOOL(0, "force", &force_opt, "overwrite FILE if it exists"),
	{ NULL },
};

static const struct opt_cmd trace_cmd = {
	.name = "trace",
	.usage = "MOUNTPOINT start FILE | stop | rotate [FILE] | save FILE [--force]",
	.summary =
		"Control the trace of a live iotap mount without unmounting it.\n"
		"  start FILE    write a trace of every operation into FILE from now on\n"
		"  stop          close the trace (complete, with its END record);\n"
		"                the mount goes on untraced\n"
		"  rotate [FILE] close the trace and go on in FILE (default: the next\n"
		"                numbered name, pg.iotap -> pg.1.iotap, pg.2.iotap...);\n"
		"                nothing is lost or doubled between the two, and the new\n"
		"                file names every file still in use, so it stands alone\n"
		"  save FILE     a mount made with --ring SIZE (flight recorder): write the\n"
		"                last SIZE of trace it keeps in memory to FILE, complete\n"
		"Root (or CAP_SYS_ADMIN) only. FILE must lie outside the mounted tree.",
	.opts = trace_opts,
	.footer =
		"examples:\n"
		"  iotap mount /srv/pgdata /srv/pgdata --log /var/tmp/pg.log\n"
		"  iotap trace /srv/pgdata start /var/tmp/pg.iotap\n"
		"  iotap trace /srv/pgdata rotate\n"
		"  iotap trace /srv/pgdata stop\n"
		"  iotap mount /srv/pgdata /srv/pgdata --ring 256M --log /var/tmp/pg.log\n"
		"  iotap trace /srv/pgdata save /var/tmp/3am.iotap",
};

static const struct live_mount_words trace_words = {
	.verb = "control", .perm_verb = "control the trace of", .perm_tail = "",
	.undone = "", .not_tail = "",
};

/* Is @mnt the root of a live iotap mount that lets us control it? Says why not. */
static int check_mount(const char *mnt, struct stat *mst)
{
	char buf[32];

	return live_mount_get(mnt, IOTAP_FS_XATTR_PID, buf, sizeof(buf), mst, &trace_words) < 0 ?
		-1 : 0;
}

/*
 * FILE as an absolute path the daemon can use (its cwd is /), after
 * checking that its directory exists, that it is not in the mounted tree
 * and that it does not exist (unless @force). Malloc'ed, or NULL after
 * saying why.
 */
static char *check_file(const char *file, const char *mnt, const struct stat *mst, int force)
{
	char *a = strdup(file), *b = strdup(file), *dir, *base, real[PATH_MAX], mreal[PATH_MAX];
	char *out = NULL;
	struct stat st;
	size_t ml;

	if (!a || !b)
		goto out;
	dir = dirname(a);
	base = basename(b);
	if (!*base || !strcmp(base, ".") || !strcmp(base, "..") || file[strlen(file) - 1] == '/') {
		error_msg("'%s' names a directory, not a trace file", file);
		goto out;
	}
	if (!realpath(dir, real)) {
		error_msg("cannot create trace '%s': directory '%s': %s", file, dir, strerror(errno));
		goto out;
	}
	if (stat(real, &st) == 0 && st.st_dev == mst->st_dev) {
		error_msg("trace '%s' lies inside the mounted tree '%s': the daemon would write "
			"into its own mount; put it outside", file, mnt);
		goto out;
	}
	if (realpath(mnt, mreal)) {
		ml = strlen(mreal);
		if (!strncmp(real, mreal, ml) && (real[ml] == '/' || !real[ml])) {
			error_msg("trace '%s' lies inside the mounted tree '%s'; put it outside",
				file, mnt);
			goto out;
		}
	}
	if (asprintf(&out, "%s%s%s", real, strcmp(real, "/") ? "/" : "", base) < 0) {
		out = NULL;
		goto out;
	}
	if (lstat(out, &st) == 0) {
		struct out_rules rules = { .force = 1, .trace = 1 };
		char cur[PATH_MAX];
		struct stat cst, fst;
		ssize_t n = getxattr(mnt, IOTAP_FS_XATTR_TRACE, cur, sizeof(cur) - 1);

		cur[n > 0 ? n : 0] = '\0';
		if (*cur && !stat(cur, &cst) && !stat(out, &fst) && cst.st_dev == fst.st_dev &&
		    cst.st_ino == fst.st_ino) {
			error_msg("'%s' is the trace '%s' is writing now; a rotation goes on in "
				"another file", file, mnt);
			free(out);
			out = NULL;
		} else if (!force) {
			error_msg("trace '%s' exists; use --force to overwrite", file);
			free(out);
			out = NULL;
		} else if (!S_ISREG(st.st_mode)) {
			error_msg("'%s' is not a regular file; not overwriting it", file);
			free(out);
			out = NULL;
		} else if (out_check(out, &rules) < 0) {	/* another mount's live trace */
			free(out);
			out = NULL;
		}
	}
out:
	free(a);
	free(b);
	return out;
}

static void say_errno(const char *what, const char *mnt, const char *file, int err)
{
	switch (err) {
	case EBUSY:
		error_msg("'%s' is already writing a trace; 'iotap trace %s rotate' switches files",
			mnt, mnt);
		break;
	case ENODATA:
		error_msg("'%s' is not writing a trace ('iotap trace %s start FILE')", mnt, mnt);
		break;
	case EEXIST:
		error_msg("trace '%s' exists; use --force to overwrite", file);
		break;
	case ETXTBSY:
		error_msg("'%s' is a live trace, being written by this or another mount or a run; "
			"it is never replaced, not even with --force", file);
		break;
	case EALREADY:
		error_msg("'%s' keeps a flight recorder (--ring): 'iotap trace %s save FILE' writes "
			"it out; start, stop and rotate do not apply", mnt, mnt);
		break;
	case EOPNOTSUPP:
		error_msg("'%s' keeps no flight recorder; mount it with --ring SIZE to save one",
			mnt);
		break;
	case EXDEV:
		error_msg("the daemon refused '%s': it lies in the mounted tree or on a FUSE file "
			"system", file);
		break;
	case EPERM:
		error_msg("cannot %s the trace of '%s': only root (or CAP_SYS_ADMIN) may", what, mnt);
		break;
	default:
		error_msg("cannot %s the trace of '%s'%s%s%s: %s", what, mnt, file ? " into '" : "",
			file ? file : "", file ? "'" : "", strerror(err));
	}
}

int cmd_trace(int argc, char **argv)
{
	const char *mnt, *what, *file = NULL;
	char *abs = NULL, *req = NULL, now[PATH_MAX];
	int rc, force, nargs;
	struct stat mst;
	ssize_t n;

	rc = opt_parse(&trace_cmd, argc, argv);
	if (rc >= 0)
		return rc;
	force = force_opt;
	nargs = argc - optind;
	if (nargs < 2)
		return opt_error(&trace_cmd, "MOUNTPOINT and a command (start, stop, rotate) are required");
	mnt = argv[optind];
	what = argv[optind + 1];
	if (!strcmp(what, "start")) {
		if (nargs != 3)
			return opt_error(&trace_cmd, "start wants one FILE");
		file = argv[optind + 2];
	} else if (!strcmp(what, "stop")) {
		if (nargs != 2)
			return opt_error(&trace_cmd, "stop takes no argument");
		if (force)
			return opt_error(&trace_cmd, "stop takes no --force");
	} else if (!strcmp(what, "save")) {
		if (nargs != 3)
			return opt_error(&trace_cmd, "save wants one FILE");
		file = argv[optind + 2];
	} else if (!strcmp(what, "rotate")) {
		if (nargs > 3)
			return opt_error(&trace_cmd, "rotate wants at most one FILE");
		file = nargs == 3 ? argv[optind + 2] : NULL;
	} else {
		return opt_error(&trace_cmd, "unknown command '%s' (start, stop, rotate, save)", what);
	}
	if (check_mount(mnt, &mst))
		return 1;
	if (file) {
		abs = check_file(file, mnt, &mst, force);
		if (!abs)
			return 1;
	}
	if (asprintf(&req, "%s%s%s%s%s", what, strcmp(what, "stop") ? " " : "",
		     strcmp(what, "stop") ? (force ? "force" : "-") : "", abs ? " " : "",
		     abs ? abs : "") < 0) {
		free(abs);
		error_msg("out of memory");
		return 1;
	}
	rc = setxattr(mnt, IOTAP_FS_XATTR_CTL, req, strlen(req), 0);
	free(req);
	if (rc < 0) {
		say_errno(what, mnt, file ? file : "(next numbered name)", errno);
		free(abs);
		return 1;
	}
	if (!strcmp(what, "save")) {
		printf("%s: flight recorder saved to %s\n", mnt, abs);
		free(abs);
		return 0;
	}
	free(abs);
	n = getxattr(mnt, IOTAP_FS_XATTR_TRACE, now, sizeof(now) - 1);
	now[n > 0 ? n : 0] = '\0';
	if (*now)
		printf("%s: tracing into %s\n", mnt, now);
	else
		printf("%s: not tracing\n", mnt);
	return 0;
}
