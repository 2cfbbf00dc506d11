// SPDX-License-Identifier: MIT
/*
 * dump_fio.c - iotap dump --fio-iolog: a trace as fio's iolog version 3
 *
 * fio (iolog.c, read_iolog) reads, after the line "fio version 3 iolog":
 *
 *   TIMESTAMP FILENAME add|open|close
 *   TIMESTAMP FILENAME read|write|sync|datasync OFFSET LENGTH
 *
 * with sscanf("%llu %256s %256s %llu %u"): TIMESTAMP in microseconds from
 * the start of the run (fio's own writer uses utime_since_now()), a file
 * name without white space of at most 256 bytes, the offset and length in
 * bytes (a sync takes "0 0": fewer fields make it a file action, which
 * fio rejects). fio 3.33, Debian 12's, counts no trim in a version 3 log.
 *
 * What maps: successful READ and WRITE (the bytes transferred, not those
 * asked for: fio would resubmit the short rest of a read at end of file),
 * FSYNC (sync, or datasync), OPEN/CREATE and RELEASE as open and close of
 * the file (counted, so fio sees one open per file at a time), every file
 * "add"ed at its first use. A file used before any open in the trace (opened
 * before the capture started) gets an open at its first use. Files are
 * named by the trace's NAME bindings: their path under the backing
 * directory, put under a root (--fio-root DIR, by default the trace's own
 * backing directory: fio 3.33 crashes when --directory is given with
 * --read_iolog, so the names are absolute); a file keeps the name it had
 * at its first use. A CREATE's NAME record follows it: its open is
 * written when the NAME comes. Not representable, counted
 * and said on stderr: every other op (metadata, directories, truncation,
 * fallocate, xattrs), failed ops, reads at end of file (0 bytes), and the
 * ops of files without a NAME binding, with white space in their path or
 * a path longer than 256 bytes.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "iotap_base.h"
#include "dump_fio.h"

#define FIO_NAME_MAX	256		/* fio's %256s */
#define FIO_DEPTH_MAX	256		/* path components followed, at most */

struct fio_name {			/* file id -> its binding */
	uint64_t parent;
	uint32_t mode;
	char *name;
};

enum { FS_NEW, FS_OK, FS_BAD_NAME, FS_NO_NAME, FS_DIR };

struct fio_file {			/* file id -> what the iolog knows of it */
	int state;			/* FS_* */
	unsigned int opens;		/* opens not yet closed */
	unsigned int pending;		/* opens before the NAME that binds it (CREATE) */
	char *path;			/* as written, FS_OK only */
};


static int name_set(struct fio_iolog *c, const struct iotap_trace_rec *r)
{
	struct fio_name *e;
	char *s;
	int ret;

	if (r->flags & 1)
		return 0;	/* an additional (hard link) name: the first one stays */
	s = strndup(r->name ? r->name : "", r->name ? r->name_len : 0);
	if (!s)
		return -ENOMEM;
	ret = iotap_map_put(&c->names, r->file, (void **)&e);
	if (ret < 0) {
		free(s);
		return ret;
	}
	free(e->name);
	e->parent = r->file2;
	e->mode = r->mode;
	e->name = s;
	return 0;
}

static struct fio_file *use_file(struct fio_iolog *c, const struct iotap_trace_rec *r, int open,
				 int *err);

/* A NAME after the CREATE of its file: the open the CREATE made. */
static int name_after_create(struct fio_iolog *c, const struct iotap_trace_rec *r)
{
	struct fio_file *f = iotap_map_get(&c->files, r->file);
	unsigned int n;
	int err = 0;

	if (!f || f->state != FS_NEW || !f->pending)
		return 0;
	n = f->pending;
	f->pending = 0;
	while (n--) {
		if (!use_file(c, r, 1, &err))
			return err;
		f = iotap_map_get(&c->files, r->file);	/* use_file may move it */
	}
	return 0;
}

/* The path of @file under the backing root, or a state saying why not. */
static int resolve(struct fio_iolog *c, uint64_t file, char **out, int dirs)
{
	const char *parts[FIO_DEPTH_MAX];
	const struct fio_name *e = iotap_map_get(&c->names, file);
	size_t len = c->root ? strlen(c->root) + 1 : 0, l;
	unsigned int n = 0, i;
	uint64_t f = file;
	char *p;

	if (!e || !e->parent)
		return e ? FS_DIR : FS_NO_NAME;	/* the root is a directory */
	if (S_ISDIR(e->mode) && !dirs)
		return FS_DIR;
	while (f) {
		const struct fio_name *x = iotap_map_get(&c->names, f);

		if (!x)
			return FS_NO_NAME;
		if (!x->parent)
			break;		/* the root: its name is the backing path */
		if (n == FIO_DEPTH_MAX)
			return FS_BAD_NAME;
		parts[n++] = x->name;
		len += strlen(x->name) + 1;
		f = x->parent;
		if (f == file)
			return FS_NO_NAME;	/* a loop: a damaged binding */
	}
	if (!n || len > FIO_NAME_MAX + 1)
		return FS_BAD_NAME;
	p = malloc(len + 1);
	if (!p)
		return -ENOMEM;
	l = 0;
	if (c->root)
		l = (size_t)sprintf(p, "%s/", strcmp(c->root, "/") ? c->root : "");
	for (i = n; i-- > 0;)
		l += (size_t)sprintf(p + l, "%s%s", parts[i], i ? "/" : "");
	for (i = 0; i < l; i++) {
		unsigned char ch = (unsigned char)p[i];

		if (ch <= ' ' || ch == 0x7f || (!c->root && !i && ch == '/')) {
			free(p);
			return FS_BAD_NAME;
		}
	}
	if (!p[0] || strlen(parts[0]) == 0) {
		free(p);
		return FS_BAD_NAME;
	}
	*out = p;
	return FS_OK;
}

static void emit(struct fio_iolog *c, const struct iotap_trace_rec *r, const struct fio_file *f,
		 const char *act, uint64_t off, uint64_t len, int io)
{
	uint64_t us = r->time_ns > c->t0 ? (r->time_ns - c->t0) / 1000 : 0;

	if (io)
		fprintf(c->out, "%" PRIu64 " %s %s %" PRIu64 " %" PRIu64 "\n", us, f->path, act,
			off, len);
	else
		fprintf(c->out, "%" PRIu64 " %s %s\n", us, f->path, act);
	c->sum->lines++;
}

/* The file an op works on, added (and opened if @open) in the iolog; NULL: skip. */
static struct fio_file *use_file(struct fio_iolog *c, const struct iotap_trace_rec *r, int open,
				 int *err)
{
	struct fio_file *f;
	char *path = NULL;
	int ret, st;

	ret = iotap_map_put(&c->files, r->file, (void **)&f);
	if (ret < 0) {
		*err = ret;
		return NULL;
	}
	if (f->state == FS_NEW) {
		st = resolve(c, r->file, &path, 0);
		if (st < 0) {
			*err = st;
			return NULL;
		}
		if (st == FS_NO_NAME && open) {
			/* a CREATE: its NAME record comes right after it */
			f->pending++;
			return NULL;
		}
		f->state = st;
		f->path = path;
		if (st == FS_OK) {
			c->sum->files++;
			emit(c, r, f, "add", 0, 0, 0);
		}
	}
	switch (f->state) {
	case FS_OK:
		break;
	case FS_DIR:
		c->sum->skip_dir++;
		return NULL;
	case FS_BAD_NAME:
		c->sum->skip_bad_name++;
		return NULL;
	default:
		c->sum->skip_no_name++;
		return NULL;
	}
	if (open && !f->opens++) {
		emit(c, r, f, "open", 0, 0, 0);
		c->sum->opens++;
	}
	return f;
}

static int on_op(struct fio_iolog *c, const struct iotap_trace_rec *r)
{
	struct fio_iolog_sum *s = c->sum;
	struct fio_file *f;
	int err = 0;

	if (!c->have_t0) {
		c->t0 = r->time_ns;
		c->have_t0 = 1;
	}
	if (r->result < 0) {
		s->skip_failed++;
		return 0;
	}
	switch (r->op) {
	case IOTAP_OP_READ:
	case IOTAP_OP_WRITE:
		if (!r->result) {
			s->skip_empty++;
			return 0;
		}
		f = use_file(c, r, 0, &err);
		if (!f)
			return err;
		if (!f->opens) {	/* opened before the capture started */
			f->opens = 1;
			emit(c, r, f, "open", 0, 0, 0);
			s->opens++;
		}
		emit(c, r, f, r->op == IOTAP_OP_READ ? "read" : "write", r->offset,
		     (uint64_t)r->result, 1);
		if (r->op == IOTAP_OP_READ) {
			s->reads++;
			s->read_bytes += (uint64_t)r->result;
		} else {
			s->writes++;
			s->write_bytes += (uint64_t)r->result;
		}
		return 0;
	case IOTAP_OP_FSYNC:
		f = use_file(c, r, 0, &err);
		if (!f)
			return err;
		if (!f->opens) {
			f->opens = 1;
			emit(c, r, f, "open", 0, 0, 0);
			s->opens++;
		}
		emit(c, r, f, r->flags & IOTAP_OPF_DATASYNC ? "datasync" : "sync", 0, 0, 1);
		s->syncs++;
		return 0;
	case IOTAP_OP_OPEN:
	case IOTAP_OP_CREATE:
		if (!r->file) {
			s->skip_no_name++;
			return 0;
		}
		f = use_file(c, r, 1, &err);
		return f ? 0 : err;
	case IOTAP_OP_MKDIR:
		/* fio cannot make it: the summary names it */
		if (r->file && s->mkdirs < FIO_MKDIR_SHOW)
			c->mkdir_ids[s->mkdirs] = r->file;
		if (r->file)
			s->mkdirs++;
		break;
	case IOTAP_OP_RELEASE:
		f = iotap_map_get(&c->files, r->file);
		if (!f || f->state != FS_OK || !f->opens) {
			s->skip_op[r->op]++;	/* opened before the capture: nothing to close */
			return 0;
		}
		if (!--f->opens) {
			emit(c, r, f, "close", 0, 0, 0);
			s->closes++;
		}
		return 0;
	}
	s->skip_op[r->op < IOTAP_OP_MAX ? r->op : IOTAP_OP_UNKNOWN]++;
	return 0;
}

void fio_iolog_init(struct fio_iolog *w, FILE *out, const char *root,
		    struct fio_iolog_sum *sum)
{
	struct fio_iolog *c = w;

	memset(w, 0, sizeof(*w));
	memset(sum, 0, sizeof(*sum));
	c->out = out;
	c->root = root;
	c->sum = sum;
	iotap_map_init(&c->names, sizeof(struct fio_name));
	iotap_map_init(&c->files, sizeof(struct fio_file));
	fputs("fio version 3 iolog\n", out);
}

int fio_iolog_rec(struct fio_iolog *w, const struct iotap_trace_rec *r)
{
	struct fio_iolog *c = w;

	switch (r->type) {
	case IOTAP_REC_NAME: {
		int ret = name_set(c, r);

		return ret ? ret : name_after_create(c, r);
	}
	case IOTAP_REC_OP:
		return on_op(c, r);
	}
	return 0;
}

void fio_iolog_release(struct fio_iolog *w)
{
	struct fio_iolog *c = w;
	struct fio_name *n;
	struct fio_file *f;
	uint64_t pos = 0;

	while ((n = iotap_map_next(&c->names, &pos, NULL)))
		free(n->name);
	pos = 0;
	while ((f = iotap_map_next(&c->files, &pos, NULL)))
		free(f->path);
	iotap_map_release(&c->names);
	iotap_map_release(&c->files);
}

uint64_t fio_iolog_skipped(const struct fio_iolog_sum *s)
{
	uint64_t n = s->skip_failed + s->skip_empty + s->skip_dir + s->skip_bad_name +
		     s->skip_no_name;
	unsigned int i;

	for (i = 0; i < IOTAP_OP_MAX; i++)
		n += s->skip_op[i];
	return n;
}

void fio_iolog_summary(FILE *f, const char *path, struct fio_iolog *c)
{
	const struct fio_iolog_sum *s = c->sum;
	unsigned int i, shown = 0, order[IOTAP_OP_MAX], n = 0, j;

	fprintf(f, "iotap dump: fio iolog of '%s': %" PRIu64 " lines, %" PRIu64 " files, %" PRIu64
		" reads (%" PRIu64 " bytes), %" PRIu64 " writes (%" PRIu64 " bytes), %" PRIu64
		" syncs, %" PRIu64 " opens, %" PRIu64 " closes\n", path, s->lines, s->files,
		s->reads, s->read_bytes, s->writes, s->write_bytes, s->syncs, s->opens, s->closes);
	if (s->mkdirs) {
		fprintf(f, "iotap dump: the capture made %" PRIu64 " director%s, which fio cannot: "
			"make %s before the replay:", s->mkdirs, s->mkdirs == 1 ? "y" : "ies",
			s->mkdirs == 1 ? "it" : "them");
		for (i = 0; i < s->mkdirs && i < FIO_MKDIR_SHOW; i++) {
			char *p = NULL;

			if (resolve(c, c->mkdir_ids[i], &p, 1) == FS_OK)
				fprintf(f, " %s", p);
			free(p);
		}
		fprintf(f, "%s\n", s->mkdirs > FIO_MKDIR_SHOW ? " ..." : "");
	}
	if (!fio_iolog_skipped(s))
		return;
	fprintf(f, "iotap dump: %" PRIu64 " op records not representable in a fio iolog:",
		fio_iolog_skipped(s));
	for (i = 0; i < IOTAP_OP_MAX; i++)
		if (s->skip_op[i])
			order[n++] = i;
	for (i = 1; i < n; i++)	/* most first */
		for (j = i; j > 0 && s->skip_op[order[j]] > s->skip_op[order[j - 1]]; j--) {
			unsigned int t = order[j];

			order[j] = order[j - 1];
			order[j - 1] = t;
		}
	for (i = 0; i < n; i++)
		fprintf(f, "%s %" PRIu64 " %s", shown++ ? "," : "", s->skip_op[order[i]],
			iotap_trace_op_name(order[i]));
	if (s->skip_failed)
		fprintf(f, "%s %" PRIu64 " failed", shown++ ? "," : "", s->skip_failed);
	if (s->skip_empty)
		fprintf(f, "%s %" PRIu64 " reads/writes of 0 bytes", shown++ ? "," : "",
			s->skip_empty);
	if (s->skip_dir)
		fprintf(f, "%s %" PRIu64 " on directories", shown++ ? "," : "", s->skip_dir);
	if (s->skip_no_name)
		fprintf(f, "%s %" PRIu64 " on files the trace never named", shown++ ? "," : "",
			s->skip_no_name);
	if (s->skip_bad_name)
		fprintf(f, "%s %" PRIu64 " on paths fio cannot read (white space, over %d bytes)",
			shown++ ? "," : "", s->skip_bad_name, FIO_NAME_MAX);
	fputc('\n', f);
}
