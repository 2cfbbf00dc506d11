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
/*
 * A slot array of this many bytes or more lies in an extent of huge pages
 * (iotap_buf_alloc), and the next, twice its size, goes into the same
 * extent beside it while it fits: growth copies every entry into memory
 * the process has never touched, and a 4 KiB page's first touch costs
 * 10-20 us on these VMs (a fault), a 2 MiB page's some 300 us. The path
 * bindings of a 6,400-file capture (16 K slots of 56 bytes): 437 faults
 * in growth, 57 now (BENCHMARKS.md, export, session 13).
 */
#define MAP_HUGE_MIN	(IOTAP_BUF_HUGE / 4)

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

static void slots_free(struct iotap_map *m)
{
	if (m->ext)
		iotap_buf_free(m->ext, m->ext_size);
	else
		free(m->slots);
	m->ext = NULL;
	m->ext_size = 0;
}

void iotap_map_release(struct iotap_map *m)
{
	slots_free(m);
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

/*
 * Room for a slot array of @need bytes: in the extent of the current one,
 * before or after it, when it fits there (*@ext then NULL); else a new
 * extent (*@ext, *@ext_size) for a large one, the heap for a small one.
 */
static unsigned char *slots_alloc(const struct iotap_map *m, size_t need, unsigned char **ext,
				  size_t *ext_size)
{
	unsigned char *p;

	*ext = NULL;
	*ext_size = 0;
	if (need < MAP_HUGE_MIN)
		return malloc(need);
	if (m->ext) {
		size_t lo = (size_t)(m->slots - m->ext), hi = lo + m->cap * m->esize;

		if (need <= lo)
			return m->ext;
		if (need <= m->ext_size - hi)
			return m->ext + hi;
	}
	*ext_size = need < IOTAP_BUF_HUGE ? IOTAP_BUF_HUGE : need;
	p = iotap_buf_alloc(ext_size);
	*ext = p;
	return p;
}

int iotap_map_grow(struct iotap_map *m)
{
	uint64_t ncap = m->cap ? m->cap * 2 : MAP_MIN_CAP, mask = ncap - 1, i, j;
	unsigned char *ns, *nf, *next;
	size_t next_size;

	ns = slots_alloc(m, ncap * m->esize, &next, &next_size);
	nf = calloc(ncap, 1);
	if (!ns || !nf) {
		if (next)
			iotap_buf_free(next, next_size);
		else if (ns && !m->ext)
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
	if (next || !m->ext) {		/* not beside the old one in its extent */
		slots_free(m);
		m->ext = next;
		m->ext_size = next_size;
	}
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
