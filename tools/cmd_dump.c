// SPDX-License-Identifier: MIT
/*
 * cmd_dump.c - iotap dump TRACE [--op LIST] [--limit N] [--file-order]
 *
 * One line per record, like blkparse. The first nine columns are fixed so
 * that awk and sort work on them:
 *
 *   TIME_S  TID  PID  OP  FILE  OFFSET  LENGTH  RESULT  LAT_US  [key=value...]
 *
 * TIME_S is seconds since the trace's start (its header clock base). Other
 * record types print their type in upper case in the OP column and their
 * own fields as key=value. Damage is reported on stderr at the end.
 *
 * --csv and --json write the same records for other tools (DuckDB, pandas,
 * Spark, sqlite3): CSV with a header row and one fixed set of columns,
 * JSON as one object a line with the keys that record has. Both stream:
 * nothing is held but the reader's own merge window. What each format
 * prints of a record is one table (dump_fields.c); the common records
 * take a fast path that prints the same bytes (dump_fast.c).
 */
#include <errno.h>
#include <getopt.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cmds.h"
#include "dump_fast.h"
#include "dump_fields.h"
#include "dump_fio.h"
#include "iotap_analysis.h"
#include "opt.h"
#include "traceio.h"

enum { O_OP, O_LIMIT, O_FILE_ORDER, O_NO_HEADER, O_CSV, O_JSON, O_FIO, O_FIO_ROOT, O_PROGRESS,
       O_NO_PROGRESS };
enum dump_fmt { F_TEXT = DUMP_TEXT, F_CSV = DUMP_CSV, F_JSON = DUMP_JSON, F_FIO };

static const struct opt_desc dump_opts[] = {
	[O_OP] = { "op", 0, "LIST", "only these ops and record types, comma-separated\n"
		   "(e.g. read,write,fsync or PHASE,LOST)" },
	[O_LIMIT] = { "limit", 'n', "N", "stop after N lines" },
	[O_FILE_ORDER] = { "file-order", 0, NULL, "records as stored, not merged by time" },
	[O_NO_HEADER] = { "no-header", 0, NULL, "omit the column header line" },
	[O_CSV] = { "csv", 0, NULL, "CSV with a header row, one row per record (columns below)" },
	[O_JSON] = { "json", 0, NULL, "one JSON object per record and line (JSON lines)" },
	[O_FIO] = { "fio-iolog", 0, NULL, "fio's iolog version 3 (fio --read_iolog=FILE replays it):\n"
		    "reads, writes, fsyncs, opens and closes; what it cannot\n"
		    "hold is counted on stderr" },
	[O_FIO_ROOT] = { "fio-root", 0, "DIR", "--fio-iolog: name files DIR/PATH, PATH relative to\n"
			 "the capture's root (default DIR: the trace's backing directory)" },
	[O_PROGRESS] = OPT_PROGRESS,
	[O_NO_PROGRESS] = OPT_NO_PROGRESS,
	{ NULL },
};

static struct opt_cmd dump_cmd = {
	.name = "dump",
	.usage = "TRACE [--csv | --json | --fio-iolog [--fio-root DIR]] [--op LIST] [--limit N]\n"
		 "       [--file-order] [--progress | --no-progress]",
	/* .summary: dump_summary(), the CSV columns from dump_fields.c's table */
	.opts = dump_opts,
	.footer = "examples:\n  iotap dump cap.iotap --op write | awk '{ b += $8 } END { print b }'\n"
		  "  iotap dump cap.iotap --csv > cap.csv    # then: duckdb -c \"from 'cap.csv'\"\n"
		  "  iotap dump cap.iotap --fio-iolog --fio-root /srv/copy > cap.log\n"
		  "  fio --name=replay --read_iolog=cap.log",
};

/*
 * --op LIST: op names (read, fsync) and the record types dump shows in the
 * OP column (NAME, PHASE, SAMPLE, LOST, END, NOTE; any case). 0, or -EINVAL
 * after saying which name is unknown and which are valid.
 */
static int parse_ops(const char *list, struct dump_filter *flt)
{
	char *copy = strdup(list), *save = NULL, *tok;
	unsigned int t;
	int op;

	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		op = iotap_trace_op_from_name(tok);
		if (op >= 0 && op < IOTAP_OP_MAX) {
			flt->op[op] = 1;
			continue;
		}
		for (t = IOTAP_REC_OP + 1; t < IOTAP_REC_TYPE_MAX; t++)
			if (!strcasecmp(tok, iotap_trace_rec_type_name(t)))
				break;
		if (t == IOTAP_REC_TYPE_MAX) {
			opt_error(&dump_cmd, "unknown op or record type '%s' in --op", tok);
			fprintf(stderr, "ops:");
			for (op = 0; op < IOTAP_OP_MAX; op++)
				fprintf(stderr, " %s", iotap_trace_op_name(op));
			fprintf(stderr, "\nrecord types: NAME PHASE SAMPLE LOST END NOTE\n");
			free(copy);
			return -EINVAL;
		}
		flt->type[t] = 1;
	}
	free(copy);
	return 0;
}

/*
 * @s on lines of at most @width columns, broken at a space or after a comma
 * that no space follows (a list's items); a longer word gets its own line.
 */
static void put_wrapped(FILE *f, const char *s, size_t width)
{
	size_t col = 0, sep = 0, n;

	while (*s) {
		for (n = 0; s[n] && s[n] != ' '; n++)
			if (s[n] == ',' && s[n + 1] && s[n + 1] != ' ') {
				n++;
				break;
			}
		if (col && col + sep + n > width) {
			fputc('\n', f);
			col = 0;
		} else if (sep) {
			fputc(' ', f);
			col++;
		}
		fwrite(s, 1, n, f);
		col += n;
		s += n;
		sep = *s == ' ';
		s += sep;
	}
}

/* The --help paragraph, its --csv columns taken from the fields' table. */
static const char *dump_summary(void)
{
	static char text[4096];
	char cols[2048];
	FILE *f;

	f = fmemopen(cols, sizeof(cols), "w");
	if (!f)
		return NULL;
	fputs("--csv columns: ", f);
	dump_table_csv_help(f);
	fputs(". type is op, name, phase, sample, lost, end or note; a PHASE row has op "
	      "begin or end and its CPU in offset (user ns) and length (system ns); a NAME "
	      "row has the parent in file2 and the size in length; LOST has the count in "
	      "length; END the records in length and the lost in aux; NOTE its text in name.",
	      f);
	fputc('\0', f);
	if (fclose(f))
		return NULL;
	f = fmemopen(text, sizeof(text), "w");
	if (!f)
		return NULL;
	fputs("Print one line per record:\n"
	      "  TIME_S TID PID OP FILE OFFSET LENGTH RESULT LAT_US [key=value...]\n"
	      "Non-op records show their type (NAME, PHASE, SAMPLE, LOST, END, NOTE) as OP.\n", f);
	put_wrapped(f, cols, 76);
	fputc('\0', f);
	return fclose(f) ? NULL : text;
}

int cmd_dump(int argc, char **argv)
{
	struct dump_filter flt = { 0 };
	struct iotap_trace_reader *r;
	struct iotap_trace_join *jn = NULL;
	struct iotap_trace_read_stats st;
	const struct iotap_trace_rec *rec;
	const char *arg, *path;
	unsigned int flags = 0;
	uint64_t limit = UINT64_MAX, lines = 0, base;
	int idx, rc, header = 1, ret = 0, werr = 0, progress = 0;
	enum dump_fmt fmt = F_TEXT;
	const char *fio_root = NULL;
	struct obuf *ob;
	char fio_dir[256];
	struct fio_iolog fio;
	struct fio_iolog_sum fio_sum;
	static char obuf[1 << 16];

	dump_cmd.summary = dump_summary();
	while ((rc = opt_next(&dump_cmd, argc, argv, &idx, &arg)) == 1) {
		switch (idx) {
		case O_OP:
			if (parse_ops(arg, &flt))
				return 2;
			flt.on = 1;
			break;
		case O_LIMIT:
			if (parse_u64(arg, &limit))
				return opt_error(&dump_cmd, "--limit wants a count, not '%s'", arg);
			break;
		case O_FILE_ORDER: flags |= IOTAP_TRACE_READ_FILE_ORDER; break;
		case O_NO_HEADER: header = 0; break;
		case O_CSV: fmt = fmt != F_TEXT && fmt != F_CSV ? -1 : F_CSV; break;
		case O_JSON: fmt = fmt != F_TEXT && fmt != F_JSON ? -1 : F_JSON; break;
		case O_FIO: fmt = fmt != F_TEXT && fmt != F_FIO ? -1 : F_FIO; break;
		case O_FIO_ROOT:
			if (!*arg || strpbrk(arg, " \t\n") || strlen(arg) > 200)
				return opt_error(&dump_cmd, "--fio-root wants a directory without "
					"white space (fio reads names up to 256 bytes), not '%s'", arg);
			fio_root = arg;
			break;
		case O_PROGRESS: progress = 1; break;
		case O_NO_PROGRESS: progress = -1; break;
		}
	}
	if (rc == 2)
		return 0;
	if (rc < 0)
		return 2;
	if ((int)fmt < 0)
		return opt_error(&dump_cmd, "--csv, --json and --fio-iolog exclude each other");
	if (fio_root && fmt != F_FIO)
		return opt_error(&dump_cmd, "--fio-root goes with --fio-iolog");
	if (argc - optind != 1)
		return opt_error(&dump_cmd, argc - optind ? "too many arguments (one TRACE "
							    "at a time)"
							  : "one TRACE is required");
	path = argv[optind];
	/* the lines go to stdout as it reads: no line on a terminal that shows them */
	read_progress_setup("dump", progress, 1);
	iotap_analysis_threads_auto(1);	/* two decoding threads for a big trace */
	if (open_trace_reader(path, flags, &r))
		return 1;
	setvbuf(stdout, obuf, _IOFBF, sizeof(obuf));
	ob = malloc(sizeof(*ob));
	if (!ob) {
		iotap_trace_reader_close(r);
		error_msg("out of memory");
		return 1;
	}
	ob->f = stdout;
	ob->len = 0;
	ob->err = 0;
	dump_fast_init();
	base = iotap_trace_reader_header(r)->mono_base_ns;
	if (header && fmt == F_TEXT)
		printf("# TIME_S TID PID OP FILE OFFSET LENGTH RESULT LAT_US\n");
	else if (header && fmt == F_CSV)
		dump_table_csv_head(stdout);
	if (fmt == F_FIO) {
		/* absolute names: fio 3.33 crashes on --directory with --read_iolog */
		const char *bk = iotap_trace_reader_header(r)->backing;

		if (!fio_root && bk && *bk && !strpbrk(bk, " \t\n") && strlen(bk) < 200)
			fio_root = bk;
		snprintf(fio_dir, sizeof(fio_dir), "%s", fio_root ? fio_root : "");
		while (strlen(fio_dir) > 1 && fio_dir[strlen(fio_dir) - 1] == '/')
			fio_dir[strlen(fio_dir) - 1] = '\0';
		fio_iolog_init(&fio, stdout, *fio_dir ? fio_dir : NULL, &fio_sum);
	}
	/* fio replays application calls: the pieces of a cut one as one (trace/join.c) */
	if (fmt == F_FIO && (ret = iotap_trace_join_open(&jn, r)) < 0) {
		dump_ob_flush(ob);
		free(ob);
		iotap_trace_reader_close(r);
		fio_iolog_release(&fio);
		error_msg("out of memory");
		return 1;
	}
	if (fmt != F_FIO)
		ret = dump_lines(ob, r, (enum dump_format)fmt, &flt, limit, &lines, base);
	/* Stop at the first failed write: the rest would fail the same way. */
	while (fmt == F_FIO && lines < limit && !ferror_unlocked(stdout) &&
	       (ret = iotap_trace_join_next_ref(jn, &rec)) > 0) {
		/* NAME records build the file names whatever --op says */
		if (rec->type != IOTAP_REC_NAME && flt.on &&
		    (rec->type != IOTAP_REC_OP || !dump_filter_wants(&flt, rec)))
			continue;
		if (fio_iolog_rec(&fio, rec)) {
			ret = -ENOMEM;
			break;
		}
		lines = fio_sum.lines;
	}
	dump_ob_flush(ob);
	werr = ob->err;
	free(ob);
	iotap_trace_join_close(jn);
	iotap_trace_reader_stats(r, &st);
	iotap_trace_reader_close(r);
	if (fmt == F_FIO) {
		if (ret >= 0)
			fio_iolog_summary(stderr, path, &fio);
		fio_iolog_release(&fio);
	}
	if (werr) {
		fflush(stdout);
		error_msg("cannot write the output: %s", strerror(werr));
		return 1;
	}
	if (out_close(stdout, NULL))
		return 1;
	if (ret < 0) {
		error_msg("cannot read trace '%s': %s", path, strerror(-ret));
		return 1;
	}
	if (lines < limit)
		warn_damage(path, &st);
	return 0;
}
