// SPDX-License-Identifier: MIT
/*
 * names.c - printable names of the trace's numbers, error texts, and the
 * default file header
 *
 * The tables follow the enums of iotap_trace.h, whose numbers are forever;
 * a number without a name prints as "?". Everything here is read-only and
 * thread-safe except iotap_trace_header_init(), whose strings live in
 * static storage that the next call overwrites.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/utsname.h>
#include <time.h>

#include "config.h"
#include "iotap_base.h"
#include "trace_i.h"

static const char *const op_names[IOTAP_OP_MAX] = {
	[IOTAP_OP_UNKNOWN] = "unknown",
	[IOTAP_OP_LOOKUP] = "lookup",
	[IOTAP_OP_FORGET] = "forget",
	[IOTAP_OP_GETATTR] = "getattr",
	[IOTAP_OP_SETATTR] = "setattr",
	[IOTAP_OP_READLINK] = "readlink",
	[IOTAP_OP_MKNOD] = "mknod",
	[IOTAP_OP_MKDIR] = "mkdir",
	[IOTAP_OP_UNLINK] = "unlink",
	[IOTAP_OP_RMDIR] = "rmdir",
	[IOTAP_OP_SYMLINK] = "symlink",
	[IOTAP_OP_RENAME] = "rename",
	[IOTAP_OP_LINK] = "link",
	[IOTAP_OP_OPEN] = "open",
	[IOTAP_OP_READ] = "read",
	[IOTAP_OP_WRITE] = "write",
	[IOTAP_OP_FLUSH] = "flush",
	[IOTAP_OP_RELEASE] = "release",
	[IOTAP_OP_FSYNC] = "fsync",
	[IOTAP_OP_OPENDIR] = "opendir",
	[IOTAP_OP_READDIR] = "readdir",
	[IOTAP_OP_RELEASEDIR] = "releasedir",
	[IOTAP_OP_FSYNCDIR] = "fsyncdir",
	[IOTAP_OP_STATFS] = "statfs",
	[IOTAP_OP_SETXATTR] = "setxattr",
	[IOTAP_OP_GETXATTR] = "getxattr",
	[IOTAP_OP_LISTXATTR] = "listxattr",
	[IOTAP_OP_REMOVEXATTR] = "removexattr",
	[IOTAP_OP_ACCESS] = "access",
	[IOTAP_OP_CREATE] = "create",
	[IOTAP_OP_GETLK] = "getlk",
	[IOTAP_OP_SETLK] = "setlk",
	[IOTAP_OP_BMAP] = "bmap",
	[IOTAP_OP_IOCTL] = "ioctl",
	[IOTAP_OP_POLL] = "poll",
	[IOTAP_OP_FLOCK] = "flock",
	[IOTAP_OP_FALLOCATE] = "fallocate",
	[IOTAP_OP_READDIRPLUS] = "readdirplus",
	[IOTAP_OP_COPY_FILE_RANGE] = "copy_file_range",
	[IOTAP_OP_LSEEK] = "lseek",
	[IOTAP_OP_TMPFILE] = "tmpfile",
};

static const char *const type_names[IOTAP_REC_TYPE_MAX] = {
	[IOTAP_REC_OP] = "op",
	[IOTAP_REC_NAME] = "name",
	[IOTAP_REC_PHASE] = "phase",
	[IOTAP_REC_SAMPLE] = "sample",
	[IOTAP_REC_LOST] = "lost",
	[IOTAP_REC_END] = "end",
	[IOTAP_REC_NOTE] = "note",
	[IOTAP_REC_APP] = "app",
};

static const char *const source_names[] = {
	[IOTAP_SOURCE_UNKNOWN] = "unknown",
	[IOTAP_SOURCE_CAPTURE] = "capture",
	[IOTAP_SOURCE_WORKLOAD] = "workload",
	[IOTAP_SOURCE_REPLAY] = "replay",
	[IOTAP_SOURCE_SYNTHETIC] = "synthetic",
};

static const char *const mode_names[] = {
	[IOTAP_MODE_NONE] = "none",
	[IOTAP_MODE_DIRECT] = "direct",
	[IOTAP_MODE_CACHE] = "cache",
};

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static const char *lookup(const char *const *tab, size_t n, unsigned int v)
{
	return v < n && tab[v] ? tab[v] : "?";
}

/**
 * iotap_trace_op_name - name of an operation ("read"), "?" if unknown
 * @op: enum iotap_op
 */
const char *iotap_trace_op_name(unsigned int op)
{
	return lookup(op_names, ARRAY_SIZE(op_names), op);
}

/**
 * iotap_trace_opf_names - the IOTAP_OPF_* bits of an OP record by name
 * @op:    the record's op
 * @flags: its flags
 * @buf:   where to write "direct|cut" (32 bytes hold every name)
 *
 * Return: @buf; "" when none is set or when @op's flags are not IOTAP_OPF_*
 * bits (open(2) flags, a setattr mask, a fallocate mode: FORMAT.md's op
 * table). Bits without a name are left out (the hex value has them).
 */
const char *iotap_trace_opf_names(unsigned int op, uint32_t flags, char *buf, size_t size)
{
	static const char *const names[] = { "datasync", "direct", "sync", "cached", "rejected",
					     "cut", "cont" };
	size_t len = 0;
	unsigned int i;

	if (!size)
		return "";
	buf[0] = '\0';
	switch (op) {
	case IOTAP_OP_SETATTR: case IOTAP_OP_RENAME: case IOTAP_OP_OPEN: case IOTAP_OP_RELEASE:
	case IOTAP_OP_OPENDIR: case IOTAP_OP_SETXATTR: case IOTAP_OP_CREATE:
	case IOTAP_OP_FALLOCATE: case IOTAP_OP_COPY_FILE_RANGE: case IOTAP_OP_LSEEK:
		return buf;
	default:
		break;
	}
	for (i = 0; i < ARRAY_SIZE(names); i++) {
		size_t n = strlen(names[i]);

		if (!(flags & (1u << i)) || len + n + 2 > size)
			continue;
		if (len)
			buf[len++] = '|';
		memcpy(buf + len, names[i], n + 1);
		len += n;
	}
	return buf;
}

/**
 * iotap_trace_rec_type_name - name of a record type ("op"), "?" if unknown
 * @type: enum iotap_trace_rec_type
 */
const char *iotap_trace_rec_type_name(unsigned int type)
{
	return lookup(type_names, ARRAY_SIZE(type_names), type);
}

/**
 * iotap_trace_source_name - name of a header source ("capture")
 * @source: enum iotap_trace_source
 */
const char *iotap_trace_source_name(unsigned int source)
{
	return lookup(source_names, ARRAY_SIZE(source_names), source);
}

/**
 * iotap_trace_mode_name - name of a capture mode ("direct")
 * @mode: enum iotap_capture_mode
 */
const char *iotap_trace_mode_name(unsigned int mode)
{
	return lookup(mode_names, ARRAY_SIZE(mode_names), mode);
}

/**
 * iotap_trace_op_from_name - parse an op name, case-insensitively
 * @name: "read", "GETATTR", ...
 *
 * Return: the enum iotap_op value, or -EINVAL.
 */
int iotap_trace_op_from_name(const char *name)
{
	unsigned int i;

	if (!name)
		return -EINVAL;
	for (i = 0; i < ARRAY_SIZE(op_names); i++)
		if (op_names[i] && !strcasecmp(name, op_names[i]))
			return (int)i;
	return -EINVAL;
}

/**
 * iotap_trace_strerror - text for an error of this library
 * @err: -errno or errno
 *
 * Gives reader-specific texts for the codes iotap_trace_reader_open() uses
 * with a meaning of its own, strerror() for the rest.
 */
const char *iotap_trace_strerror(int err)
{
	if (err < 0)
		err = -err;
	switch (err) {
	case 0:
		return "success";
	case ENODATA:
		return "empty file";
	case EBADMSG:
		return "not an iotap trace, or its header is damaged";
	case EPROTONOSUPPORT:
		return "trace format version is newer than this iotap";
	}
	return strerror(err);
}

/**
 * iotap_trace_header_init - fill @hdr with this host's defaults
 * @hdr:    caller-owned header, zeroed first
 * @source: enum iotap_trace_source
 *
 * Sets the version, both clock bases (CLOCK_MONOTONIC read on both sides
 * of CLOCK_REALTIME, the midpoint kept), host, kernel and tool.
 * Context: not thread-safe; the strings point at static storage valid
 * until the next call.
 */
void iotap_trace_header_init(struct iotap_trace_header *hdr, uint32_t source)
{
	static char host[sizeof(((struct utsname *)0)->nodename)];
	static char kernel[4 * sizeof(((struct utsname *)0)->release) + 4];
	static const char tool[] = "iotap " IOTAP_VERSION;
	struct timespec m1, rt, m2;
	struct utsname u;
	uint64_t a, b;

	memset(hdr, 0, sizeof(*hdr));
	hdr->version_major = IOTAP_TRACE_VERSION_MAJOR;
	hdr->version_minor = IOTAP_TRACE_VERSION_MINOR;
	hdr->source = source;
	hdr->capture_mode = IOTAP_MODE_NONE;

	clock_gettime(CLOCK_MONOTONIC, &m1);
	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_MONOTONIC, &m2);
	a = iotap_timespec_ns(&m1);
	b = iotap_timespec_ns(&m2);
	hdr->mono_base_ns = a + (b - a) / 2;
	hdr->real_base_ns = iotap_timespec_ns(&rt);

	if (uname(&u) == 0) {
		memcpy(host, u.nodename, sizeof(host));
		host[sizeof(host) - 1] = '\0';
		snprintf(kernel, sizeof(kernel), "%s %s %s %s", u.sysname,
			 u.release, u.version, u.machine);
		hdr->host = host;
		hdr->kernel = kernel;
	}
	hdr->tool = tool;
}
