// SPDX-License-Identifier: MIT
/*
 * stat_seek.c - where the previous data op on each file ended
 *
 * An open-addressing hash table keyed by file id. A data op is a seek when
 * its offset is not where the previous data op on the same file ended
 * (bonnie++'s and blktrace's notion); the first op on a file counts from
 * offset 0, so reading a file from its start is sequential. The table also
 * counts each file's data ops, which is how the report finds busy files.
 * A one-entry cache in front of it serves runs of ops on one file.
 */
#include <stdlib.h>
#include <string.h>

#include "stat.h"

void seek_map_init(struct seek_map *m)
{
	memset(m, 0, sizeof(*m));
}

void seek_map_release(struct seek_map *m)
{
	free(m->keys);
	free(m->ends);
	free(m->count);
	memset(m, 0, sizeof(*m));
}

static inline uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return x;
}

static int grow(struct seek_map *m)
{
	uint64_t ncap = m->cap ? m->cap * 2 : 1024, i, j;
	uint64_t *nk = calloc(ncap, sizeof(*nk)), *ne = calloc(ncap, sizeof(*ne));
	uint64_t *nc = calloc(ncap, sizeof(*nc));

	if (!nk || !ne || !nc) {
		free(nk);
		free(ne);
		free(nc);
		return -1;
	}
	for (i = 0; i < m->cap; i++) {
		if (!m->keys[i])
			continue;
		for (j = mix(m->keys[i]) & (ncap - 1); nk[j]; j = (j + 1) & (ncap - 1))
			;
		nk[j] = m->keys[i];
		ne[j] = m->ends[i];
		nc[j] = m->count[i];
	}
	free(m->keys);
	free(m->ends);
	free(m->count);
	m->keys = nk;
	m->ends = ne;
	m->count = nc;
	m->cap = ncap;
	m->last_key = 0;
	return 0;
}

int64_t seek_map_update(struct seek_map *m, uint64_t file, uint64_t off, uint64_t end)
{
	uint64_t key = file + 1, j, prev;

	if (key == m->last_key) {
		j = m->last_slot;
		goto found;
	}
	if ((m->used + 1) * 4 > m->cap * 3 && grow(m))
		return (int64_t)off;	/* out of memory: treat as unknown, count from 0 */
	for (j = mix(key) & (m->cap - 1); m->keys[j]; j = (j + 1) & (m->cap - 1)) {
		if (m->keys[j] == key)
			goto found;
	}
	m->keys[j] = key;
	m->ends[j] = end;
	m->count[j] = 1;
	m->used++;
	m->last_key = key;
	m->last_slot = j;
	return (int64_t)off;

found:
	prev = m->ends[j];
	m->ends[j] = end;
	m->count[j]++;
	m->last_key = key;
	m->last_slot = j;
	return (int64_t)(off - prev);
}

unsigned int seek_map_busiest(const struct seek_map *m, unsigned int n, uint64_t *files,
			      uint64_t *counts)
{
	unsigned int k = 0, i;
	uint64_t j;

	for (j = 0; j < m->cap; j++) {
		if (!m->keys[j])
			continue;
		/* insertion into a short sorted list */
		for (i = k; i > 0 && counts[i - 1] < m->count[j]; i--) {
			if (i < n) {
				counts[i] = counts[i - 1];
				files[i] = files[i - 1];
			}
		}
		if (i < n) {
			counts[i] = m->count[j];
			files[i] = m->keys[j] - 1;
			if (k < n)
				k++;
		}
	}
	return k;
}
