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

/*
 * What an option does with its value (git's parse-options shape): a bound
 * option stores into @value itself and opt_next() goes on to the next; an
 * OPT_T_CASE option (the zero, as every table written as a plain
 * initialiser) is returned to the caller's switch.
 */
enum opt_type {
	OPT_T_CASE,		/* returned by opt_next() */
	OPT_T_BOOL,		/* int *value = 1 */
	OPT_T_BIT,		/* unsigned int *value |= defval */
	OPT_T_STRING,		/* const char **value = arg */
	OPT_T_UINT,		/* unsigned int *value: min..max, else opt_error(err, arg) */
	OPT_T_U64,		/* uint64_t *value: min..max, as OPT_T_UINT */
	OPT_T_CALLBACK,		/* cb(cmd, desc, arg): 0, or 2 after the usage error */
	OPT_T_SIZE,		/* uint64_t *value: bytes (iotap_size_parse), min..max, a
				   multiple of step (0: any) */
	OPT_T_DURATION,		/* uint64_t *value: ns (parse_duration_ns), min..max */
	OPT_T_DOUBLE,		/* double *value: dmin..dmax */
};

struct opt_cmd;
struct opt_desc;
typedef int (*opt_cb)(const struct opt_cmd *cmd, const struct opt_desc *d, const char *arg);

struct opt_desc {
	const char *long_name;		/* "trace" for --trace */
	int short_name;			/* 't', or 0 */
	const char *arg;		/* "FILE" if it takes an argument, NULL if a flag */
	const char *help;		/* one line; may contain \n for more */
	int hidden;			/* not shown in --help */
	enum opt_type type;		/* what it does with its value (above) */
	void *value;			/* the field it is bound to */
	uint64_t defval;		/* OPT_T_BIT: the bit; UINT, U64, SIZE, DURATION: the minimum */
	uint64_t max;			/* OPT_T_UINT, U64, SIZE, DURATION: the maximum */
	uint64_t step;			/* OPT_T_SIZE: the value is a multiple of it (0: any) */
	double dmin, dmax;		/* OPT_T_DOUBLE: the range */
	const char *err;		/* message of a bad value ("%s": the value), for
					   the typed values and the callbacks that take one */
	opt_cb cb;			/* OPT_T_CALLBACK */
};

/* The table entries, git's OPT_* macros: short letter (or 0), long name, field, help. */
#define OPT_BOOL(s, l, v, h) \
	{ .long_name = (l), .short_name = (s), .help = (h), .type = OPT_T_BOOL, .value = (v) }
#define OPT_BIT(s, l, v, b, h) \
	{ .long_name = (l), .short_name = (s), .help = (h), .type = OPT_T_BIT, .value = (v), \
	  .defval = (b) }
#define OPT_STRING(s, l, v, a, h) \
	{ .long_name = (l), .short_name = (s), .arg = (a), .help = (h), .type = OPT_T_STRING, \
	  .value = (v) }
#define OPT_UINT(s, l, v, a, h, lo, hi, e) \
	{ .long_name = (l), .short_name = (s), .arg = (a), .help = (h), .type = OPT_T_UINT, \
	  .value = (v), .defval = (lo), .max = (hi), .err = (e) }
#define OPT_U64(s, l, v, a, h, lo, hi, e) \
	{ .long_name = (l), .short_name = (s), .arg = (a), .help = (h), .type = OPT_T_U64, \
	  .value = (v), .defval = (lo), .max = (hi), .err = (e) }
/* The range, bounds included, is table data; @e says it to the user. */
#define OPT_SIZE(s, l, v, a, h, lo, hi, st, e) \
	{ .long_name = (l), .short_name = (s), .arg = (a), .help = (h), .type = OPT_T_SIZE, \
	  .value = (v), .defval = (lo), .max = (hi), .step = (st), .err = (e) }
#define OPT_DURATION(s, l, v, a, h, lo, hi, e) \
	{ .long_name = (l), .short_name = (s), .arg = (a), .help = (h), .type = OPT_T_DURATION, \
	  .value = (v), .defval = (lo), .max = (hi), .err = (e) }
#define OPT_DOUBLE(s, l, v, a, h, lo, hi, e) \
	{ .long_name = (l), .short_name = (s), .arg = (a), .help = (h), .type = OPT_T_DOUBLE, \
	  .value = (v), .dmin = (lo), .dmax = (hi), .err = (e) }
#define OPT_CALLBACK(s, l, v, a, h, f) \
	{ .long_name = (l), .short_name = (s), .arg = (a), .help = (h), .type = OPT_T_CALLBACK, \
	  .value = (v), .cb = (f) }
#define OPT_CALLBACK_ERR(s, l, v, a, h, f, e) \
	{ .long_name = (l), .short_name = (s), .arg = (a), .help = (h), .type = OPT_T_CALLBACK, \
	  .value = (v), .cb = (f), .err = (e) }
/* Not listed by --help (the test-only options). */
#define OPT_CALLBACK_HIDDEN(l, v, a, f) \
	{ .long_name = (l), .arg = (a), .hidden = 1, .type = OPT_T_CALLBACK, .value = (v), \
	  .cb = (f) }
/* A string that may not be empty: @e (no "%s") says so. */
#define OPT_STRING_NONEMPTY(s, l, v, a, h, e) OPT_CALLBACK_ERR(s, l, v, a, h, opt_nonempty, e)
int opt_nonempty(const struct opt_cmd *cmd, const struct opt_desc *d, const char *arg);
#define OPT_END() { NULL }

struct opt_cmd {
	const char *name;		/* "mount" */
	const char *usage;		/* "BACKING MOUNTPOINT [options]" */
	const char *summary;		/* paragraph printed under the usage */
	const struct opt_desc *opts;	/* terminated by { NULL } */
	const char *footer;		/* examples, or NULL */
	void (*more)(FILE *f);		/* prints what a table of the command's own
					   says (export's columns) before the footer */
};

/*
 * opt_next - the next option, getopt_long style
 * @idx: set to the index in cmd->opts of the option found
 * @arg: set to its argument or NULL
 *
 * Bound options (OPT_BOOL ...) are stored and passed over; only the
 * OPT_T_CASE ones come back to the caller. opt_parse() is the loop for a
 * table with no OPT_T_CASE entry.
 *
 * Return: 1 with an option, 0 at the end (optind then points at the first
 * operand), -1 after printing a usage error, 2 after printing --help.
 */
int opt_next(const struct opt_cmd *cmd, int argc, char **argv, int *idx, const char **arg);

/*
 * opt_parse - every option of a table of bound options; optind then points
 * at the first operand. Return: -1 to go on, 0 after --help, 2 after a
 * usage error.
 */
int opt_parse(const struct opt_cmd *cmd, int argc, char **argv);

void opt_usage(const struct opt_cmd *cmd, FILE *f);

/* Print "iotap CMD: MSG" and a hint, return 2 (usage error). */
int opt_error(const struct opt_cmd *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * parse_trace_mode - octal permission bits for a trace (--trace-mode):
 * within 0666 and readable and writable by the owner. 0 or -EINVAL.
 */
int parse_trace_mode(const char *s, unsigned int *out);
/* parse_group - a group name or number (--trace-group). 0, -EINVAL or -ENOENT. */
int parse_group(const char *s, uint32_t *out);

/*
 * --trace-mode MODE and --trace-group GROUP, the same for every command
 * that writes traces (mount, run, replay): OPT_TRACE_MODE(perm, what)
 * and OPT_TRACE_GROUP(perm) are their table entries, bound to a struct
 * iotap_trace_perm (@what: "the traces and the log the daemon creates"),
 * opt_trace_perm() their parser, into @perm (@group 0: MODE, 1: GROUP).
 * Return: 0, or 2 after the usage error.
 */
#define OPT_TRACE_MODE_HELP(what) "octal permissions of " what "\n" \
				  "(default 0600: a trace names every file and caller)"
#define OPT_TRACE_GROUP_HELP "give those files to GROUP (with --trace-mode 0640\n" \
			     "to let it read them)"
#define OPT_TRACE_MODE(v, what) OPT_CALLBACK(0, "trace-mode", (v), "MODE", \
					  OPT_TRACE_MODE_HELP(what), opt_trace_perm_opt)
#define OPT_TRACE_GROUP(v) OPT_CALLBACK(0, "trace-group", (v), "GROUP", OPT_TRACE_GROUP_HELP, \
					opt_trace_perm_opt)
struct iotap_trace_perm;
int opt_trace_perm(const struct opt_cmd *cmd, int group, const char *arg,
		   struct iotap_trace_perm *perm);
/* The callback of both, bound to a struct iotap_trace_perm (its mode is 0 until given). */
int opt_trace_perm_opt(const struct opt_cmd *cmd, const struct opt_desc *d, const char *arg);

/*
 * --progress and --no-progress, the same for every command that reads
 * whole traces (report, compare, dump, info): OPT_PROGRESS and
 * OPT_NO_PROGRESS are their table entries, read_progress_setup()
 * (traceio.h) takes 1 or -1 for them, 0 for neither.
 */
#define OPT_PROGRESS_HELP "progress on stderr also when it is not a terminal\n" \
			  "(a line every 5 s, and one as each trace is read)"
#define OPT_NO_PROGRESS_HELP "no progress line (on a terminal it shows after\n" \
			     "1 s of reading: share read, time left)"
#define OPT_PROGRESS { "progress", 0, NULL, OPT_PROGRESS_HELP }
#define OPT_NO_PROGRESS { "no-progress", 0, NULL, OPT_NO_PROGRESS_HELP }
/* The same two bound to an int (1 or -1, the last one given wins). */
#define OPT_PROGRESS_INT(v) OPT_CALLBACK(0, "progress", (v), NULL, OPT_PROGRESS_HELP, opt_progress)
#define OPT_NO_PROGRESS_INT(v) OPT_CALLBACK(0, "no-progress", (v), NULL, OPT_NO_PROGRESS_HELP, \
					    opt_progress)
int opt_progress(const struct opt_cmd *cmd, const struct opt_desc *d, const char *arg);

/* parse_u64 - a plain non-negative integer. 0 or -EINVAL. */
int parse_u64(const char *s, uint64_t *out);

/* parse_duration_ns - "1s", "100ms", "250us", "1.5s", "2m", bare = seconds. */
int parse_duration_ns(const char *s, uint64_t *out);

/*
 * Every output file of every command goes through here, so that no command
 * destroys what the user did not ask it to. The rules, in this order, for a
 * path that exists:
 *   - a directory is refused;
 *   - the same file as one of the command's inputs (same st_dev and st_ino:
 *     also through a hard link or a symlink) is refused, even when forced;
 *   - a device, FIFO or socket is written to (nothing is replaced);
 *   - a live trace, one a mount, run or replay is writing now
 *     (iotap_live_held()), is refused, even when forced, naming the mount
 *     (and its daemon's pid) or the command that writes it;
 *   - an iotap trace (IOTAP_TRACE_MAGIC) is replaced only by a trace, and
 *     only when forced: a report or a page never replaces one;
 *   - any other file is replaced only when forced.
 * An output that is appended to (a log) may be any existing file but an
 * input or a trace. A path that does not exist needs a writable directory.
 */
struct out_rules {
	const char *const *inputs;	/* the command's input files, NULL-terminated, or NULL */
	const char *force_opt;		/* the option that forces, for messages ("--force") */
	unsigned int force : 1;		/* that option was given */
	unsigned int trace : 1;		/* the output is a trace */
	unsigned int append : 1;	/* appended to (a log): an existing file is kept,
					   but never a trace or an input */
};

/*
 * out_check - may @path be written under @r? Call it for every output
 * before any work, so that a long pass or a change to the disk is not
 * wasted on an output that will be refused.
 * Return: 0 when @path does not exist, 1 when it exists and may be
 * replaced (a trace writer then needs IOTAP_TRACE_FORCE), or -errno after
 * saying why not.
 */
int out_check(const char *path, const struct out_rules *r);

/* Do two outputs name one file (a regular file, or one path not yet there)? */
int out_same(const char *a, const char *b);

/*
 * The text output of report and compare: @path ("-o FILE", "--html FILE"),
 * or stdout when NULL. out_open() applies out_check()'s rules to the file
 * it actually opens (it creates with O_EXCL, mode 0600 as a trace's, or
 * opens without truncating
 * and judges the open file before truncating it), so a file swapped in
 * since the check is not lost either; on stdout it refuses a redirection
 * into an input. It says why it cannot and returns NULL. out_close()
 * checks every write (the stream's error flag and the last flush) and
 * returns 0, or 1 (the exit status) after saying what failed.
 */
FILE *out_open(const char *path, const struct out_rules *r);
int out_close(FILE *f, const char *path);

/*
 * Git-style messages: "iotap: <msg>" (error_msg) or "iotap: warning: <msg>"
 * on stderr. Both return: the caller says the exit status.
 */
void error_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void warn_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* IOTAP_OPT_H */
