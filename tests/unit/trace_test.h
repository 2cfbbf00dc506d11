/* SPDX-License-Identifier: MIT */
/*
 * trace_test.h - helpers shared by the trace unit tests
 *
 * A seeded generator (splitmix64), a field-by-field record comparison that
 * says what differs, a generator of mixed records with edge values, a
 * private temporary directory removed at exit, and the process's thread
 * count. Everything is static: each
 * test is a standalone program.
 */
#ifndef IOTAP_TRACE_TEST_H
#define IOTAP_TRACE_TEST_H

#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "iotap_trace.h"

static inline uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9E3779B97F4A7C15ull);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* Uniform in [0, n). */
static inline uint64_t rng_below(uint64_t *s, uint64_t n)
{
	return n ? rng_next(s) % n : 0;
}

/* An edge value or a random one of a random width. */
static inline uint64_t rng_edge(uint64_t *s)
{
	static const uint64_t edges[] = {
		0, 1, 2, 127, 128, 255, 256, 16383, 16384, UINT32_MAX,
		(uint64_t)UINT32_MAX + 1, INT64_MAX, (uint64_t)INT64_MAX + 1,
		UINT64_MAX - 1, UINT64_MAX,
	};
	uint64_t k = rng_below(s, 3);

	if (k == 0)
		return edges[rng_below(s, sizeof(edges) / sizeof(edges[0]))];
	return rng_next(s) >> rng_below(s, 64);
}

#define CMP_FIELD(f, fmt)						\
	do {								\
		if (a->f != b->f) {					\
			snprintf(why, n, #f ": " fmt " != " fmt, a->f, b->f); \
			return 0;					\
		}							\
	} while (0)

/* 1 if equal; else 0 and @why says which field differs. */
static inline int rec_eq(const struct iotap_trace_rec *a, const struct iotap_trace_rec *b,
			 char *why, size_t n)
{
	CMP_FIELD(type, "%u");
	CMP_FIELD(op, "%u");
	CMP_FIELD(flags, "%u");
	CMP_FIELD(time_ns, "%" PRIu64);
	CMP_FIELD(dur_ns, "%" PRIu64);
	CMP_FIELD(tid, "%u");
	CMP_FIELD(pid, "%u");
	CMP_FIELD(uid, "%u");
	CMP_FIELD(gid, "%u");
	CMP_FIELD(file, "%" PRIu64);
	CMP_FIELD(file2, "%" PRIu64);
	CMP_FIELD(fh, "%" PRIu64);
	CMP_FIELD(offset, "%" PRIu64);
	CMP_FIELD(length, "%" PRIu64);
	CMP_FIELD(result, "%" PRId64);
	CMP_FIELD(mode, "%u");
	CMP_FIELD(name_len, "%u");
	CMP_FIELD(aux, "%" PRIu64);
	if (!a->name != !b->name) {
		snprintf(why, n, "name: %s != %s", a->name ? "set" : "NULL",
			 b->name ? "set" : "NULL");
		return 0;
	}
	if (a->name && memcmp(a->name, b->name, a->name_len)) {
		snprintf(why, n, "name bytes differ");
		return 0;
	}
	if (b->name && b->name[b->name_len] != '\0') {
		snprintf(why, n, "decoded name not NUL-terminated");
		return 0;
	}
	if (a->type == IOTAP_REC_SAMPLE &&
	    memcmp(&a->sample, &b->sample, sizeof(a->sample))) {
		snprintf(why, n, "sample differs");
		return 0;
	}
	return 1;
}

/* Name bytes for rec_random(): printable, not NUL-terminated in between. */
static char rec_name_pool[1 << 16];

/*
 * Fills @r with a record of a random type whose every field may hold an
 * edge value; names point into rec_name_pool, so they stay valid.
 */
static inline void rec_random(struct iotap_trace_rec *r, uint64_t *s)
{
	uint64_t k;

	if (!rec_name_pool[0]) {
		uint64_t seed = 7;
		size_t i;

		for (i = 0; i < sizeof(rec_name_pool); i++)
			rec_name_pool[i] = (char)('a' + rng_below(&seed, 26));
	}
	memset(r, 0, sizeof(*r));
	r->type = (uint16_t)(IOTAP_REC_OP + rng_below(s, IOTAP_REC_TYPE_MAX - 1));
	if (rng_below(s, 2))
		r->type = IOTAP_REC_OP;
	r->op = (uint16_t)(rng_below(s, 8) ? rng_below(s, IOTAP_OP_MAX) : rng_edge(s));
	r->flags = (uint32_t)(rng_below(s, 2) ? rng_edge(s) : 0);
	r->time_ns = rng_edge(s);
	r->dur_ns = rng_edge(s);
	r->tid = (uint32_t)(rng_below(s, 4) ? rng_below(s, 8) : rng_edge(s));
	r->pid = (uint32_t)(rng_below(s, 4) ? 100 : rng_edge(s));
	r->uid = (uint32_t)(rng_below(s, 4) ? 1000 : rng_edge(s));
	r->gid = (uint32_t)(rng_below(s, 4) ? 1000 : rng_edge(s));
	r->file = rng_below(s, 2) ? rng_below(s, 16) : rng_edge(s);
	r->file2 = rng_below(s, 2) ? 0 : rng_edge(s);
	r->fh = rng_below(s, 2) ? rng_below(s, 4) : rng_edge(s);
	r->offset = rng_edge(s);
	r->length = rng_edge(s);
	k = rng_below(s, 4);
	r->result = k == 0 ? (int64_t)r->length : k == 1 ? -(int64_t)rng_below(s, 134) :
		    (int64_t)rng_edge(s);
	r->mode = (uint32_t)(rng_below(s, 2) ? rng_edge(s) : 0);
	r->aux = rng_below(s, 2) ? rng_edge(s) : 0;
	k = rng_below(s, 64);
	if (k < 16 || r->type == IOTAP_REC_NAME || r->type == IOTAP_REC_NOTE) {
		uint32_t len = (uint32_t)(k == 0 ? IOTAP_TRACE_NAME_MAX : rng_below(s, 40));

		r->name = rec_name_pool + rng_below(s, sizeof(rec_name_pool) - len);
		r->name_len = len;
	}
	if (r->type == IOTAP_REC_SAMPLE) {
		uint64_t *f = &r->sample.rd_ios;
		unsigned int i;

		r->sample.dev_major = (uint32_t)rng_edge(s);
		r->sample.dev_minor = (uint32_t)rng_edge(s);
		for (i = 0; i < 14; i++)
			f[i] = rng_edge(s);
	}
}

static char test_dir[64];

static void test_dir_remove(void)
{
	struct dirent *d;
	char path[512];
	DIR *dir;

	if (!test_dir[0])
		return;
	dir = opendir(test_dir);
	if (dir) {
		while ((d = readdir(dir))) {
			if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, ".."))
				continue;
			snprintf(path, sizeof(path), "%s/%s", test_dir, d->d_name);
			unlink(path);
		}
		closedir(dir);
	}
	rmdir(test_dir);
}

/* A path in a private directory that is removed at exit. */
static inline const char *test_path(const char *name)
{
	static char path[4][512];
	static int i;

	if (!test_dir[0]) {
		const char *tmp = getenv("TMPDIR");

		snprintf(test_dir, sizeof(test_dir), "%s/iotap-test-XXXXXX",
			 tmp && strlen(tmp) < 30 ? tmp : "/tmp");
		if (!mkdtemp(test_dir)) {
			perror("mkdtemp");
			exit(99);
		}
		atexit(test_dir_remove);
	}
	i = (i + 1) % 4;
	snprintf(path[i], sizeof(path[i]), "%s/%s", test_dir, name);
	return path[i];
}

/* Threads of this process now (/proc/self/task), -1 if it cannot be read. */
static inline int task_count(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

#endif /* IOTAP_TRACE_TEST_H */
