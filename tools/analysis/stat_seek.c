// SPDX-License-Identifier: MIT
/*
 * stat_seek.c - where the previous data op on each file ended
 *
 * A hash map (iotap_map) keyed by file id. A data op is a seek when its
 * offset is not where the previous data op on the same file ended
 * (bonnie++'s and blktrace's notion); the first op on a file counts from
 * offset 0, so reading a file from its start is sequential, and so do
 * its first read and first write: reading back from the start a file
 * just written is no seek (issue 27: tar's read-back counted 3,204/s). The map also
 * counts each file's data ops, which is how the report finds busy files.
 * A one-entry cache in front of it serves runs of ops on one file, a small
 * direct-mapped one behind that serves clients taking turns on a few files;
 * only an insertion moves entries, and it empties and refills the caches.
 */
#include <stdlib.h>
#include <string.h>

#include "stat_i.h"

void seek_map_init(struct iotap_seek_map *m)
{
	memset(m, 0, sizeof(*m));
	iotap_map_init(&m->map, sizeof(struct iotap_seek_ent));
}

void seek_map_release(struct iotap_seek_map *m)
{
	iotap_map_release(&m->map);
	m->last = NULL;
	memset(m->cache, 0, sizeof(m->cache));
}

/* The cached file is not @file: look it up (or insert it) and cache it. */
int64_t seek_map_update_slow(struct iotap_seek_map *m, uint64_t file, uint64_t off, uint64_t end,
			     unsigned int dir)
{
	unsigned int slot = (unsigned int)(file % IOTAP_SEEK_CACHE);
	struct iotap_seek_ent *e = m->cache[slot].ent;
	uint64_t prev;
	int ret;

	if (!e || m->cache[slot].file != file) {
		uint64_t cap = m->map.cap;

		ret = iotap_map_put(&m->map, file, (void **)&e);
		if (ret < 0)
			return (int64_t)off;	/* out of memory: treat as unknown, count from 0 */
		/* an insert (or the growth a put may do first) moves entries: forget them */
		if (!ret || m->map.cap != cap)
			memset(m->cache, 0, sizeof(m->cache));
		if (!ret) {
			m->cache[slot].file = file;
			m->cache[slot].ent = e;
			m->last_file = file;
			m->last = e;
			e->end = end;
			e->count = 1;
			e->dirs = dir;
			return (int64_t)off;
		}
		m->cache[slot].file = file;
		m->cache[slot].ent = e;
	}
	m->last_file = file;
	m->last = e;
	prev = e->end;
	e->end = end;
	e->count++;
	if (!(e->dirs & dir)) {
		e->dirs |= dir;
		prev = 0;
	}
	return (int64_t)(off - prev);
}

unsigned int seek_map_busiest(const struct iotap_seek_map *m, unsigned int n, uint64_t *files,
			      uint64_t *counts)
{
	const struct iotap_seek_ent *e;
	unsigned int k = 0, i;
	uint64_t pos = 0, file;

	while ((e = iotap_map_next(&m->map, &pos, &file))) {
		/* insertion into a short sorted list; ties: the lower file id first */
		for (i = k; i > 0 && (counts[i - 1] < e->count ||
				      (counts[i - 1] == e->count && files[i - 1] > file)); i--) {
			if (i < n) {
				counts[i] = counts[i - 1];
				files[i] = files[i - 1];
			}
		}
		if (i < n) {
			counts[i] = e->count;
			files[i] = file;
			if (k < n)
				k++;
		}
	}
	return k;
}
