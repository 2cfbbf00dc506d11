// SPDX-License-Identifier: MIT
/*
 * opt.c - option tables to getopt_long, generated --help, number parsing
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
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "opt.h"

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
	int c, i;

	if (built_for != cmd)
		build(cmd);
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
	*arg = optarg;
	return 1;
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

void die_msg(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "iotap: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void warn_msg(const char *fmt, ...)
{
	va_list ap;

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

FILE *out_open(const char *path)
{
	FILE *f;

	if (!path)
		return stdout;
	f = fopen(path, "w");
	if (!f)
		die_msg("cannot write '%s': %s", path, strerror(errno));
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
		die_msg("cannot write %s%s%s: %s", path ? "'" : "", path ? path : "the output",
			path ? "'" : "", errno ? strerror(errno) : "write error");
		return 1;
	}
	return 0;
}
