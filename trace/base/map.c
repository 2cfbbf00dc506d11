// SPDX-License-Identifier: MIT
/*
 * map.c - the slow paths of struct iotap_map, and the byte hashes (iotap_base.h)
 *
 * Lookup and find-or-insert are inline in the header: they sit on the
 * report's per-record path. Here: growth, insertion of equal keys, the walk
 * over equal keys, deletion by backward shift, and iteration.
 *
 * The table is two arrays: slots (key then value, esize bytes each) and a
 * byte per slot saying whether it is full, so that every 64-bit key,
 * 0 and UINT64_MAX included, is a valid key.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "iotap_base.h"

#define MAP_MIN_CAP	64

uint64_t iotap_hash_bytes(const void *p, size_t len, uint64_t seed)
{
	return XXH3_64bits_withSeed(p, len, seed);
}

uint64_t iotap_hash_str(const char *s, uint64_t seed)
{
	return XXH3_64bits_withSeed(s, strlen(s), seed);
}

void iotap_map_init(struct iotap_map *m, size_t vsize)
{
	memset(m, 0, sizeof(*m));
	m->vsize = vsize;
	m->esize = sizeof(uint64_t) + ((vsize + 7) & ~(size_t)7);
}

void iotap_map_release(struct iotap_map *m)
{
	free(m->slots);
	free(m->full);
	m->slots = NULL;
	m->full = NULL;
	m->cap = 0;
	m->used = 0;
}

void iotap_map_clear(struct iotap_map *m)
{
	if (m->cap)
		memset(m->full, 0, m->cap);
	m->used = 0;
}

static inline unsigned char *slot(const struct iotap_map *m, uint64_t j)
{
	return m->slots + j * m->esize;
}

int iotap_map_grow(struct iotap_map *m)
{
	uint64_t ncap = m->cap ? m->cap * 2 : MAP_MIN_CAP, mask = ncap - 1, i, j;
	unsigned char *ns, *nf;

	ns = malloc(ncap * m->esize);
	nf = calloc(ncap, 1);
	if (!ns || !nf) {
		free(ns);
		free(nf);
		return -ENOMEM;
	}
	for (i = 0; i < m->cap; i++) {
		const unsigned char *s;

		if (!m->full[i])
			continue;
		s = slot(m, i);
		for (j = iotap_hash_u64(*(const uint64_t *)s) & mask; nf[j]; j = (j + 1) & mask)
			;
		memcpy(ns + j * m->esize, s, m->esize);
		nf[j] = 1;
	}
	free(m->slots);
	free(m->full);
	m->slots = ns;
	m->full = nf;
	m->cap = ncap;
	return 0;
}

int iotap_map_add(struct iotap_map *m, uint64_t key, void **val)
{
	uint64_t mask, j, *k;

	if ((m->used + 1) * 4 > m->cap * 3 && iotap_map_grow(m)) {
		*val = NULL;
		return -ENOMEM;
	}
	mask = m->cap - 1;
	for (j = iotap_hash_u64(key) & mask; m->full[j]; j = (j + 1) & mask)
		;
	k = (uint64_t *)slot(m, j);
	*k = key;
	memset(k + 1, 0, m->esize - sizeof(*k));
	m->full[j] = 1;
	m->used++;
	*val = k + 1;
	return 0;
}

static void *walk(const struct iotap_map *m, uint64_t key, uint64_t j, uint64_t *pos)
{
	uint64_t mask = m->cap - 1;

	for (; m->full[j]; j = (j + 1) & mask) {
		uint64_t *k = (uint64_t *)slot(m, j);

		if (*k == key) {
			*pos = j;
			return k + 1;
		}
	}
	return NULL;
}

void *iotap_map_find(const struct iotap_map *m, uint64_t key, uint64_t *pos)
{
	if (!m->cap)
		return NULL;
	return walk(m, key, iotap_hash_u64(key) & (m->cap - 1), pos);
}

void *iotap_map_find_next(const struct iotap_map *m, uint64_t key, uint64_t *pos)
{
	if (!m->cap)
		return NULL;
	return walk(m, key, (*pos + 1) & (m->cap - 1), pos);
}

/*
 * Empty slot @i and close the gap: an entry further along the run moves back
 * into it unless its home slot lies cyclically in (i, j], where a lookup
 * would no longer reach it across the gap. Lookups stop at the first empty
 * slot, so no tombstones are needed.
 */
static void del_slot(struct iotap_map *m, uint64_t i)
{
	uint64_t mask = m->cap - 1, j = i, h;

	for (;;) {
		j = (j + 1) & mask;
		if (!m->full[j])
			break;
		h = iotap_hash_u64(*(const uint64_t *)slot(m, j)) & mask;
		if (i <= j ? (i < h && h <= j) : (i < h || h <= j))
			continue;
		memcpy(slot(m, i), slot(m, j), m->esize);
		i = j;
	}
	m->full[i] = 0;
	m->used--;
}

int iotap_map_del(struct iotap_map *m, uint64_t key)
{
	uint64_t pos;

	if (!iotap_map_find(m, key, &pos))
		return -ENOENT;
	del_slot(m, pos);
	return 0;
}

void iotap_map_del_value(struct iotap_map *m, void *val)
{
	uint64_t j = (uint64_t)((unsigned char *)val - sizeof(uint64_t) - m->slots) / m->esize;

	del_slot(m, j);
}

void *iotap_map_next(const struct iotap_map *m, uint64_t *pos, uint64_t *key)
{
	uint64_t j;

	for (j = *pos; j < m->cap; j++) {
		if (m->full[j]) {
			uint64_t *k = (uint64_t *)slot(m, j);

			*pos = j + 1;
			if (key)
				*key = *k;
			return k + 1;
		}
	}
	*pos = m->cap;
	return NULL;
}
