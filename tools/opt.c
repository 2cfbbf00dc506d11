// SPDX-License-Identifier: MIT
/*
 * opt.c - option tables to getopt_long, generated --help, number parsing,
 *         and the rules every output file is opened by
 *
 * Sizes are parsed by iotap_size_parse() (trace/base/include/iotap_base.h), the one
 * size parser of the tree.
 *
 * Every command of the iotap binary parses through here (see opt.h). The
 * getopt_long arrays are built once per call of opt_next() for a new table;
 * commands run once per process, so a small static cache is enough.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "iotap_base.h"
#include "iotap_fs.h"
#include "iotap_trace.h"
#include "opt.h"
#include "traceio.h"

#define OPT_MAX 64

static const struct opt_cmd *built_for;
static struct option longopts[OPT_MAX + 2];
static char shortopts[OPT_MAX * 2 + 4];

static void build(const struct opt_cmd *cmd)
{
	char *s = shortopts;
	int i, n = 0;

	*s++ = ':';	/* report a missing value as ':' rather than '?' */
	for (i = 0; cmd->opts[i].long_name && n < OPT_MAX; i++, n++) {
		const struct opt_desc *d = &cmd->opts[i];

		longopts[n].name = d->long_name;
		longopts[n].has_arg = d->arg ? required_argument : no_argument;
		longopts[n].flag = NULL;
		longopts[n].val = 256 + i;
		if (d->short_name) {
			*s++ = (char)d->short_name;
			if (d->arg)
				*s++ = ':';
		}
	}
	longopts[n].name = "help";
	longopts[n].has_arg = no_argument;
	longopts[n].flag = NULL;
	longopts[n].val = 'h';
	memset(&longopts[n + 1], 0, sizeof(longopts[0]));
	*s++ = 'h';
	*s = '\0';
	built_for = cmd;
	optind = 1;
	opterr = 0;
}

int opt_next(const struct opt_cmd *cmd, int argc, char **argv, int *idx, const char **arg)
{
	const struct opt_desc *d;
	uint64_t v;
	int c, i;

	if (built_for != cmd)
		build(cmd);
again:
	c = getopt_long(argc, argv, shortopts, longopts, NULL);
	if (c == -1)
		return 0;
	if (c == 'h') {
		opt_usage(cmd, stdout);
		return 2;
	}
	if (c == '?') {
		if (optopt)
			opt_error(cmd, "unknown option '-%c'", optopt);
		else
			opt_error(cmd, "unknown option '%s'", argv[optind - 1]);
		return -1;
	}
	if (c == ':') {
		opt_error(cmd, "option '%s' needs a value", argv[optind - 1]);
		return -1;
	}
	if (c >= 256) {
		*idx = c - 256;
	} else {
		for (i = 0; cmd->opts[i].long_name; i++)
			if (cmd->opts[i].short_name == c)
				break;
		if (!cmd->opts[i].long_name) {
			opt_error(cmd, "unknown option '-%c'", c);
			return -1;
		}
		*idx = i;
	}
	d = &cmd->opts[*idx];
	switch (d->type) {
	case OPT_T_CASE:
		*arg = optarg;
		return 1;
	case OPT_T_BOOL:
		*(int *)d->value = 1;
		break;
	case OPT_T_BIT:
		*(unsigned int *)d->value |= (unsigned int)d->defval;
		break;
	case OPT_T_STRING:
		*(const char **)d->value = optarg;
		break;
	case OPT_T_UINT:
		if (parse_u64(optarg, &v) || v < d->defval || v > d->max) {
			opt_error(cmd, d->err, optarg);
			return -1;
		}
		*(unsigned int *)d->value = (unsigned int)v;
		break;
	case OPT_T_U64:
		if (parse_u64(optarg, &v) || v < d->defval || v > d->max) {
			opt_error(cmd, d->err, optarg);
			return -1;
		}
		*(uint64_t *)d->value = v;
		break;
	case OPT_T_CALLBACK:
		if (d->cb(cmd, d, optarg))
			return -1;
		break;
	case OPT_T_SIZE:
	case OPT_T_DURATION:
		if ((d->type == OPT_T_SIZE ? iotap_size_parse(optarg, 1, &v) :
		     parse_duration_ns(optarg, &v)) || v < d->defval || v > d->max ||
		    (d->step && v % d->step)) {
			opt_error(cmd, d->err, optarg);
			return -1;
		}
		*(uint64_t *)d->value = v;
		break;
	case OPT_T_DOUBLE: {
		char *end;
		double x;

		errno = 0;
		x = strtod(optarg, &end);
		if (errno || end == optarg || *end || !(x >= d->dmin && x <= d->dmax)) {
			opt_error(cmd, d->err, optarg);
			return -1;
		}
		*(double *)d->value = x;
		break;
	}
	}
	goto again;
}

int opt_parse(const struct opt_cmd *cmd, int argc, char **argv)
{
	const char *arg;
	int idx, rc;

	while ((rc = opt_next(cmd, argc, argv, &idx, &arg)) == 1)
		;	/* a table for opt_parse() has no OPT_T_CASE entry */
	if (rc == 2)
		return 0;
	return rc < 0 ? 2 : -1;
}

int opt_progress(const struct opt_cmd *cmd, const struct opt_desc *d, const char *arg)
{
	(void)cmd;
	(void)arg;
	*(int *)d->value = strcmp(d->long_name, "progress") ? -1 : 1;
	return 0;
}

void opt_usage(const struct opt_cmd *cmd, FILE *f)
{
	int i;

	fprintf(f, "usage: iotap %s %s\n\n", cmd->name, cmd->usage);
	if (cmd->summary)
		fprintf(f, "%s\n\n", cmd->summary);
	fprintf(f, "options:\n");
	for (i = 0; cmd->opts[i].long_name; i++) {
		const struct opt_desc *d = &cmd->opts[i];
		char left[64];
		const char *h, *nl;

		if (d->hidden)
			continue;
		if (d->short_name)
			snprintf(left, sizeof(left), "-%c, --%s%s%s", d->short_name, d->long_name,
				 d->arg ? " " : "", d->arg ? d->arg : "");
		else
			snprintf(left, sizeof(left), "    --%s%s%s", d->long_name,
				 d->arg ? " " : "", d->arg ? d->arg : "");
		h = d->help ? d->help : "";
		/* continuation lines of the help are indented under the first */
		nl = strchr(h, '\n');
		fprintf(f, "  %-26s %.*s\n", left, nl ? (int)(nl - h) : (int)strlen(h), h);
		while (nl) {
			h = nl + 1;
			nl = strchr(h, '\n');
			fprintf(f, "  %-26s %.*s\n", "", nl ? (int)(nl - h) : (int)strlen(h), h);
		}
	}
	fprintf(f, "  %-26s %s\n", "-h, --help", "show this help");
	if (cmd->more) {
		fputc('\n', f);
		cmd->more(f);
	}
	if (cmd->footer)
		fprintf(f, "\n%s\n", cmd->footer);
}

int opt_error(const struct opt_cmd *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "iotap %s: ", cmd->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nusage: iotap %s %s\n(see 'iotap %s --help')\n", cmd->name,
		cmd->usage, cmd->name);
	return 2;
}

void error_msg(const char *fmt, ...)
{
	va_list ap;

	read_progress_clear();
	fprintf(stderr, "iotap: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void warn_msg(const char *fmt, ...)
{
	va_list ap;

	read_progress_clear();
	fprintf(stderr, "iotap: warning: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-' || isspace((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

int parse_trace_mode(const char *s, unsigned int *out)
{
	char *end;
	unsigned long v;

	if (!s || !*s || *s == '-' || isspace((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 8);
	if (errno || *end || v == 0 || (v & ~0666ul) || !(v & 0600))
		return -EINVAL;
	*out = (unsigned int)v;
	return 0;
}

int parse_group(const char *s, uint32_t *out)
{
	struct group *g;
	uint64_t v;

	if (!s || !*s)
		return -EINVAL;
	g = getgrnam(s);
	if (g) {
		*out = (uint32_t)g->gr_gid;
		return 0;
	}
	if (parse_u64(s, &v) || v >= UINT32_MAX)
		return -ENOENT;
	*out = (uint32_t)v;
	return 0;
}

int opt_trace_perm(const struct opt_cmd *cmd, int group, const char *arg,
		   struct iotap_trace_perm *perm)
{
	if (!group) {
		if (parse_trace_mode(arg, &perm->mode))
			return opt_error(cmd, "--trace-mode wants octal bits within 0666 "
					 "including 0600, not '%s'", arg);
		return 0;
	}
	if (parse_group(arg, &perm->gid))
		return opt_error(cmd, "--trace-group: no group '%s'", arg);
	perm->has_gid = 1;
	return 0;
}

int opt_trace_perm_opt(const struct opt_cmd *cmd, const struct opt_desc *d, const char *arg)
{
	return opt_trace_perm(cmd, !strcmp(d->long_name, "trace-group"), arg, d->value);
}

int opt_nonempty(const struct opt_cmd *cmd, const struct opt_desc *d, const char *arg)
{
	if (!*arg)
		return opt_error(cmd, "%s", d->err);
	*(const char **)d->value = arg;
	return 0;
}

int parse_duration_ns(const char *s, uint64_t *out)
{
	char *end;
	double v, mult = 1e9;

	if (!s || !*s || *s == '-')
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !(v >= 0) || isinf(v))
		return -EINVAL;
	if (!strcmp(end, "") || !strcmp(end, "s"))
		mult = 1e9;
	else if (!strcmp(end, "ms"))
		mult = 1e6;
	else if (!strcmp(end, "us"))
		mult = 1e3;
	else if (!strcmp(end, "ns"))
		mult = 1;
	else if (!strcmp(end, "m") || !strcmp(end, "min"))
		mult = 60e9;
	else if (!strcmp(end, "h"))
		mult = 3600e9;
	else
		return -EINVAL;
	if (v * mult > 1.8e19)
		return -EINVAL;
	*out = (uint64_t)(v * mult + 0.5);
	return 0;
}

/* The input of @r that @st is, or NULL. */
static const char *input_of(const struct stat *st, const struct out_rules *r)
{
	const char *const *in;
	struct stat ist;

	for (in = r->inputs; in && *in; in++)
		if (!stat(*in, &ist) && ist.st_dev == st->st_dev && ist.st_ino == st->st_ino)
			return *in;
	return NULL;
}

/* Does the open file @fd start like an iotap trace? */
static int is_trace(int fd)
{
	char m[IOTAP_TRACE_MAGIC_LEN];

	return pread(fd, m, sizeof(m), 0) == (ssize_t)sizeof(m) &&
	       !memcmp(m, IOTAP_TRACE_MAGIC, sizeof(m));
}

/*
 * @path (open as @fd) is a live trace (iotap_live_held_fd()): say whose.
 * A capture's header names its mount point; the mount is asked which
 * trace it writes and its daemon's pid, so the message names the mount
 * only when the mount says the file is its trace.
 */
static void say_live(const char *path, int fd, const struct stat *st)
{
	const struct iotap_trace_header *h;
	struct iotap_trace_reader *r;
	char cur[PATH_MAX], pid[32];
	struct stat cst;
	ssize_t n;

	if (fd < 0 || iotap_trace_reader_open_fd(&r, fd, 0)) {
		error_msg("'%s' is a trace being written now; it is never replaced, not even "
			"with --force", path);
		return;
	}
	h = iotap_trace_reader_header(r);
	if (h->source == IOTAP_SOURCE_CAPTURE && h->mountpoint && *h->mountpoint) {
		n = getxattr(h->mountpoint, IOTAP_FS_XATTR_TRACE, cur, sizeof(cur) - 1);
		cur[n > 0 ? n : 0] = '\0';
		n = n > 0 && !stat(cur, &cst) && cst.st_dev == st->st_dev &&
		    cst.st_ino == st->st_ino ?
			getxattr(h->mountpoint, IOTAP_FS_XATTR_PID, pid, sizeof(pid) - 1) : -1;
		pid[n > 0 ? n : 0] = '\0';
		error_msg("'%s' is the live trace of the mount at '%s'%s%s; it is never replaced, "
			"not even with --force ('iotap trace %s rotate' or 'iotap umount %s' "
			"closes it)", path, h->mountpoint, *pid ? ", pid " : "", pid,
			h->mountpoint, h->mountpoint);
	} else {
		error_msg("'%s' is a trace being written now%s%s%s; it is never replaced, not even "
			"with --force", path, h->cmdline ? " by '" : "",
			h->cmdline ? h->cmdline : "", h->cmdline ? "'" : "");
	}
	iotap_trace_reader_close(r);
}

/*
 * Judge the existing file @path, open as @fd (-1 when it could not be
 * opened for reading: not taken for a trace). Return 1 (may be replaced),
 * or -errno after saying why not.
 */
static int judge(const char *path, int fd, const struct stat *st, const struct out_rules *r)
{
	const char *in = input_of(st, r);
	const char *force = r->force_opt ? r->force_opt : "--force";

	if (S_ISDIR(st->st_mode)) {
		error_msg("cannot write '%s': it is a directory", path);
		return -EISDIR;
	}
	if (in) {
		if (strcmp(in, path))
			error_msg("cannot write '%s': it is '%s', an input of this command", path,
				in);
		else
			error_msg("cannot write '%s': it is an input of this command", path);
		return -EEXIST;
	}
	if (!S_ISREG(st->st_mode))
		return 1;
	if (fd >= 0 && iotap_live_held_fd(fd) > 0) {
		say_live(path, fd, st);
		return -ETXTBSY;
	}
	if (fd >= 0 && is_trace(fd)) {
		if (r->append) {
			error_msg("cannot write '%s': it is an iotap trace, which is never "
				"appended to", path);
			return -EEXIST;
		}
		if (!r->trace) {
			error_msg("cannot write '%s': it is an iotap trace, which only a trace may "
				"replace (remove it or choose another name)", path);
			return -EEXIST;
		}
		if (!r->force) {
			error_msg("trace '%s' exists; use %s to overwrite", path, force);
			return -EEXIST;
		}
		return 1;
	}
	if (!r->force && !r->append) {
		error_msg("%s'%s' exists; use %s to overwrite", r->trace ? "trace " : "", path,
			force);
		return -EEXIST;
	}
	return 1;
}

/* A new file @path: its directory must exist and be writable. */
static int check_dir(const char *path, const struct out_rules *r)
{
	const char *what = r->trace ? "create trace" : "write";
	char *copy = strdup(path), *dir;
	struct stat st;
	int ret = 0;

	if (!copy) {
		error_msg("out of memory");
		return -ENOMEM;
	}
	dir = dirname(copy);
	if (stat(dir, &st)) {
		ret = -errno;
		error_msg("cannot %s '%s': directory '%s': %s", what, path, dir, strerror(-ret));
	} else if (!S_ISDIR(st.st_mode)) {
		ret = -ENOTDIR;
		error_msg("cannot %s '%s': '%s' is not a directory", what, path, dir);
	} else if (access(dir, W_OK)) {
		ret = -errno;
		error_msg("cannot %s '%s': directory '%s': %s", what, path, dir, strerror(-ret));
	}
	free(copy);
	return ret;
}

int out_check(const char *path, const struct out_rules *r)
{
	struct stat st;
	int fd, ret;

	if (lstat(path, &st)) {
		if (errno != ENOENT) {
			ret = -errno;
			error_msg("cannot write '%s': %s", path, strerror(-ret));
			return ret;
		}
		return check_dir(path, r);
	}
	/* O_NONBLOCK: a FIFO without a writer does not hang the check */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT)
		return check_dir(path, r);	/* a dangling symlink: its target is created */
	if (fd >= 0 ? fstat(fd, &st) : stat(path, &st)) {
		ret = -errno;
		error_msg("cannot write '%s': %s", path, strerror(-ret));
	} else {
		ret = judge(path, fd, &st, r);
	}
	if (fd >= 0)
		close(fd);
	return ret;
}

int out_same(const char *a, const char *b)
{
	struct stat sa, sb;

	if (stat(a, &sa))
		return !strcmp(a, b);
	return !stat(b, &sb) && S_ISREG(sa.st_mode) && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

FILE *out_open(const char *path, const struct out_rules *r)
{
	struct stat st;
	const char *in;
	FILE *f;
	int fd, ret;

	if (!path) {
		in = !fstat(STDOUT_FILENO, &st) && S_ISREG(st.st_mode) ? input_of(&st, r) : NULL;
		if (in) {
			error_msg("cannot write the output: stdout is '%s', an input of this command",
				in);
			return NULL;
		}
		return stdout;
	}
	/* 0600 as the trace: reports and pages name its files and callers */
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOCTTY | O_CLOEXEC, 0600);
	if (fd < 0 && errno == EEXIST) {
		/* judge what is there before truncating it */
		fd = open(path, O_RDWR | O_NOCTTY | O_CLOEXEC);
		if (fd < 0 && errno == EACCES)
			fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
		if (fd >= 0) {
			if (fstat(fd, &st)) {
				error_msg("cannot write '%s': %s", path, strerror(errno));
				close(fd);
				return NULL;
			}
			ret = judge(path, fd, &st, r);
			if (ret < 0) {
				close(fd);
				return NULL;
			}
			if (S_ISREG(st.st_mode) && ftruncate(fd, 0)) {
				error_msg("cannot write '%s': %s", path, strerror(errno));
				close(fd);
				return NULL;
			}
		}
	}
	if (fd < 0) {
		error_msg("cannot write '%s': %s", path, strerror(errno));
		return NULL;
	}
	f = fdopen(fd, "w");
	if (!f) {
		error_msg("cannot write '%s': %s", path, strerror(errno));
		close(fd);
	}
	return f;
}

int out_close(FILE *f, const char *path)
{
	int bad = ferror(f);

	if (f == stdout)
		bad |= fflush(f);
	else
		bad |= fclose(f);
	if (bad) {
		error_msg("cannot write %s%s%s: %s", path ? "'" : "", path ? path : "the output",
			path ? "'" : "", errno ? strerror(errno) : "write error");
		return 1;
	}
	return 0;
}
