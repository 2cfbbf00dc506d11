/* SPDX-License-Identifier: MIT */
/*
 * opt.h - table-driven option parsing and --help for the iotap commands
 *
 * A command declares one table of struct opt_desc; opt_parse() turns it
 * into getopt_long() arguments, and opt_usage() prints the usage, the
 * description and every option from the same table, so the help can never
 * drift from what is parsed. Errors are printed git-style and reported as
 * exit status 2.
 */
#ifndef IOTAP_OPT_H
#define IOTAP_OPT_H

#include <stdint.h>
#include <stdio.h>

struct opt_desc {
	const char *long_name;		/* "trace" for --trace */
	int short_name;			/* 't', or 0 */
	const char *arg;		/* "FILE" if it takes an argument, NULL if a flag */
	const char *help;		/* one line; may contain \n for more */
	int hidden;			/* not shown in --help */
};

struct opt_cmd {
	const char *name;		/* "mount" */
	const char *usage;		/* "BACKING MOUNTPOINT [options]" */
	const char *summary;		/* paragraph printed under the usage */
	const struct opt_desc *opts;	/* terminated by { NULL } */
	const char *footer;		/* examples, or NULL */
};

/*
 * opt_next - the next option, getopt_long style
 * @idx: set to the index in cmd->opts of the option found
 * @arg: set to its argument or NULL
 *
 * Return: 1 with an option, 0 at the end (optind then points at the first
 * operand), -1 after printing a usage error, 2 after printing --help.
 */
int opt_next(const struct opt_cmd *cmd, int argc, char **argv, int *idx, const char **arg);

void opt_usage(const struct opt_cmd *cmd, FILE *f);

/* Print "iotap CMD: MSG" and a hint, return 2 (usage error). */
int opt_error(const struct opt_cmd *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* parse_u64 - a plain non-negative integer. 0 or -EINVAL. */
int parse_u64(const char *s, uint64_t *out);

/* parse_duration_ns - "1s", "100ms", "250us", "1.5s", "2m", bare = seconds. */
int parse_duration_ns(const char *s, uint64_t *out);

/*
 * The output of report and compare: @path ("-o FILE"), or stdout when NULL.
 * out_open() says why it cannot and returns NULL. out_close() checks every
 * write (the stream's error flag and the last flush) and returns 0, or 1
 * (the exit status) after saying what failed.
 */
FILE *out_open(const char *path);
int out_close(FILE *f, const char *path);

/* Git-style messages: "iotap: <msg>" on stderr. */
void die_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void warn_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* IOTAP_OPT_H */
