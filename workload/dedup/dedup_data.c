// SPDX-License-Identifier: MIT
/*
 * dedup_data.c - what the dedup model's backup images hold
 *
 * An image is a sequence of positions, each holding one content id; a
 * content id's bytes are generated from it and the seed, so equal ids are
 * equal bytes and different ids are different bytes in every 512-byte
 * piece (so no 4 KiB block of one segment equals one of another, and a
 * deduplicating array finds nothing the model did not mean).
 *
 * Exact counts, not probabilities, so the dedup ratio the data shows is
 * the one the options ask for at any size:
 *   - the first generation of a stream: positions in extents of `run`
 *     positions (1 MiB of data); round(dup x extents) extents, chosen by a
 *     seeded shuffle among all but the first, repeat an earlier extent of
 *     the same image (a file that is there twice); every other position is
 *     new content;
 *   - each later generation: round(change x extents) extents, a fresh
 *     shuffle each time, get new content; the rest is as before. The
 *     extents of each later generation start a seeded 0..run-1 positions
 *     into the image, so they straddle the last generation's (and the
 *     restore's 1 MiB reads) as real changes do.
 * So a stream stores N - D + (G - 1) x C positions' worth of segments
 * (D duplicated, C changed per generation), and streams share nothing.
 *
 * Compressibility: each 512 bytes is `rand_per_512` pseudo-random bytes,
 * then those bytes again until the 512 are full: zstd (or an array's LZ
 * compressor) keeps about rand_per_512 / 512 of it. A repeat rather than
 * fio's zeros, because a run of zeros longer than a content-defined
 * chunker's 64-byte window gives one constant fingerprint and a cut at
 * every run: restic would cut every chunk at its 512 KiB minimum.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "dedup_i.h"

#define MIB (1ull << 20)
#define RESTIC_MIN	(512 * 1024)	/* restic chunker MinSize */
#define RESTIC_MAX	(8 * MIB)	/* MaxSize */

/* The flavors by --flavor (dedup_i.h). */
static const struct dd_flavor *const flavors[] = {
	[IOTAP_DEDUP_MSDP] = &dd_msdp,
	[IOTAP_DEDUP_RESTIC] = &dd_restic,
	[IOTAP_DEDUP_BORG] = &dd_borg,
};

static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

int dd_cfg_init(struct dd_cfg *cfg, const struct iotap_workload_dedup_opts *o, const char **why)
{
	double r;

	memset(cfg, 0, sizeof(*cfg));
	cfg->o = o;
	*why = NULL;
	if (o->flavor != IOTAP_DEDUP_MSDP && o->flavor != IOTAP_DEDUP_RESTIC &&
	    o->flavor != IOTAP_DEDUP_BORG)
		*why = "unknown flavor";
	else if (o->flavor == IOTAP_DEDUP_BORG && o->streams != 1)
		*why = "borg writes a repository from one process (an exclusive lock): --streams 1";
	else if (o->flavor == IOTAP_DEDUP_BORG && o->image_bytes < RESTIC_MIN)
		*why = "the image is smaller than one 512 KiB chunk";
	else if (o->flavor == IOTAP_DEDUP_BORG && (o->container_bytes < 8 * MIB ||
						 o->container_bytes > 2047 * MIB))
		*why = "borg segments are 8 MiB to 2047 MiB (max_segment_size)";
	else if (o->flavor == IOTAP_DEDUP_BORG)
		;
	else if (o->flavor == IOTAP_DEDUP_RESTIC && o->meta_dir)
		*why = "restic keeps its index and snapshots in the repository: no --meta-dir";
	else if (o->flavor == IOTAP_DEDUP_RESTIC && o->image_bytes < RESTIC_MIN)
		*why = "the image is smaller than one 512 KiB chunk";
	else if (o->flavor == IOTAP_DEDUP_RESTIC && (o->container_bytes < 4 * MIB ||
						   o->container_bytes > 128 * MIB))
		*why = "restic packs are 4 MiB to 128 MiB";
	else if (o->flavor == IOTAP_DEDUP_RESTIC)
		;
	else if (o->segment_bytes < DD_PAGE || o->segment_bytes > 16 * MIB ||
		 o->segment_bytes % DD_PAGE)
		*why = "the segment size must be a multiple of 4 KiB, 4 KiB to 16 MiB";
	else if (o->image_bytes < o->segment_bytes)
		*why = "the image is smaller than one segment";
	else if (o->image_bytes / o->segment_bytes > (1ull << 32))
		*why = "the image has more than 2^32 segments";
	else if (o->container_bytes < o->segment_bytes || o->container_bytes > (1ull << 32) - 1)
		*why = "the container size must hold a segment and stay below 4 GiB";
	else if (!o->streams || o->streams > 256)
		*why = "streams must be 1..256";
	else if (!o->generations || o->generations > 1000)
		*why = "generations must be 1..1000";
	else if (o->change < 0 || o->change > 1)
		*why = "the change rate must be 0..100%";
	else if (o->dup < 0 || o->dup > 0.9)
		*why = "intra-image duplicates must be 0..90%";
	else if (o->compress < 0 || o->compress > 0.95)
		*why = "compressibility must be 0..95%";
	else if (o->expire >= o->generations && o->expire)
		*why = "--expire must leave at least one generation";
	else if (o->compact_threshold < 0 || o->compact_threshold > 1)
		*why = "the compaction threshold must be 0..100%";
	if (*why)
		return -EINVAL;
	cfg->fl = flavors[o->flavor];
	if (cfg->fl->cdc) {
		/* at most this many chunks; the first generation says how many */
		cfg->positions = o->image_bytes / RESTIC_MIN + 1;
		cfg->max_seg = RESTIC_MAX;
		cfg->run = 1;
	} else {
		cfg->positions = o->image_bytes / o->segment_bytes;
		cfg->max_seg = o->segment_bytes;
		cfg->run = o->segment_bytes >= MIB ? 1 : (uint32_t)(MIB / o->segment_bytes);
	}
	r = ceil(512.0 * (1.0 - o->compress) / 8.0) * 8.0;
	cfg->rand_per_512 = r < 8 ? 8 : r > 512 ? 512 : (uint32_t)r;
	return 0;
}

int dd_pos_alloc(struct dd_pos *p, uint64_t n)
{
	memset(p, 0, sizeof(*p));
	p->n = p->cap = n;
	p->cid = calloc(n, sizeof(*p->cid));
	p->len = calloc(n, sizeof(*p->len));
	p->fp = calloc(n, sizeof(*p->fp));
	p->fresh = calloc(n, 1);
	p->src = calloc(n, sizeof(*p->src));
	if (!p->cid || !p->len || !p->fp || !p->fresh || !p->src) {
		dd_pos_free(p);
		return -ENOMEM;
	}
	return 0;
}

void dd_pos_free(struct dd_pos *p)
{
	free(p->cid);
	free(p->len);
	free(p->fp);
	free(p->fresh);
	free(p->src);
	memset(p, 0, sizeof(*p));
}

/* Mark @k of the extents @first..@nb-1, chosen by a shuffle seeded with @s. */
static void pick(uint8_t *mark, uint64_t first, uint64_t nb, uint64_t k, uint64_t s)
{
	uint64_t n = nb - first, i;
	uint32_t *a;

	memset(mark, 0, nb);
	if (k > n)
		k = n;
	a = malloc((n ? n : 1) * sizeof(*a));
	if (!a) {
		/* no memory for the shuffle: the first k (still exact) */
		memset(mark + first, 1, k);
		return;
	}
	for (i = 0; i < n; i++)
		a[i] = (uint32_t)(first + i);
	for (i = 0; i < k; i++) {
		uint64_t j = i + splitmix(&s) % (n - i);
		uint32_t t = a[i];

		a[i] = a[j];
		a[j] = t;
		mark[a[i]] = 1;
	}
	free(a);
}

static void fresh_at(const struct dd_cfg *cfg, struct dd_pos *p, uint64_t i, unsigned int stream)
{
	p->cid[i] = ((uint64_t)(stream + 1) << 40) + p->serial++;
	if (!cfg->fl->cdc)
		p->len[i] = cfg->o->segment_bytes;
	p->fresh[i] = DD_NEW;
}

/*
 * restic's and borg's chunks: MinSize plus a geometric run up to MaxSize.
 * borg 1.2's buzhash chunker with its defaults (19,23,21,4095) starts
 * looking for a cut 512 KiB into a chunk and cuts where the low 21 bits
 * of the rolling hash are 0: 512 KiB + Exp(2 MiB), at most 8 MiB. (Its
 * Chunker on this model's data cuts a little sooner, 2.26-2.35 MiB mean
 * against 2.46 here, but after a change its cuts do not always come back
 * at the next old one; a changed 1 MiB costs 4.76 MiB there and 4.80 under
 * cdc_generation's rule: tests/bench/dedup-borg-chunker.py.) restic
 * 0.14 on this model's data (123 chunks of a 256 MiB file, from its
 * index): mean 2.08 MiB, smallest 0.54, standard deviation 1.47, so
 * 512 KiB + Exp(1.5 MiB), capped at 8 MiB.
 */
static uint32_t cdc_len(const struct dd_cfg *cfg, uint64_t *s)
{
	double u = ((double)(splitmix(s) >> 11) + 0.5) / 9007199254740992.0;
	double extra = -log(u) * cfg->fl->cdc_mean;

	if (extra > RESTIC_MAX - RESTIC_MIN)
		extra = RESTIC_MAX - RESTIC_MIN;
	return RESTIC_MIN + (uint32_t)extra;
}

/*
 * A content-defined generation: changes are 1 MiB extents of the image
 * (round(change x MiBs) of them, a seeded shuffle); every chunk that
 * overlaps one is new content of the same length (the chunker finds the
 * old cut points again after a change).
 */
static void cdc_generation(const struct dd_cfg *cfg, struct dd_pos *p, unsigned int stream,
			   unsigned int gen, uint64_t s)
{
	uint64_t i, total = 0, nb, k;
	uint8_t *mark;

	if (gen == 0) {
		uint64_t left = cfg->o->image_bytes, ls = s ^ 0x6a09e667f3bcc908ull;

		for (i = 0; i < p->cap && left; i++) {
			uint32_t l = cdc_len(cfg, &ls);

			p->len[i] = l < left ? l : (uint32_t)left;
			left -= p->len[i];
		}
		p->n = i;
	}
	for (i = 0; i < p->n; i++)
		total += p->len[i];
	nb = (total + MIB - 1) / MIB;
	mark = malloc(nb ? nb : 1);
	if (gen == 0) {
		k = (uint64_t)llround(cfg->o->dup * (double)p->n);
		if (mark && p->n > 1) {
			uint8_t *dm = malloc(p->n);

			if (dm) {
				pick(dm, 1, p->n, k, s);
				for (i = 0; i < p->n; i++) {
					uint64_t h = s ^ (i * 0x2545f4914f6cdd1dull);

					if (!dm[i]) {
						fresh_at(cfg, p, i, stream);
						continue;
					}
					p->src[i] = (uint32_t)(splitmix(&h) % i);
					p->cid[i] = p->cid[p->src[i]];
					p->len[i] = p->len[p->src[i]];
					p->fresh[i] = DD_REPEAT;
				}
				free(dm);
				free(mark);
				return;
			}
		}
		for (i = 0; i < p->n; i++)
			fresh_at(cfg, p, i, stream);
		free(mark);
		return;
	}
	k = (uint64_t)llround(cfg->o->change * (double)nb);
	if (mark)
		pick(mark, 0, nb, k, s);
	for (i = 0, total = 0; i < p->n; i++) {
		uint64_t a = total >> 20, b = (total + p->len[i] - 1) >> 20, e;
		int hit = 0;

		for (e = a; mark && e <= b && e < nb; e++)
			hit |= mark[e];
		total += p->len[i];
		if (hit)
			fresh_at(cfg, p, i, stream);
		else
			p->fresh[i] = DD_KNOWN;
	}
	free(mark);
}

void dd_pos_generation(const struct dd_cfg *cfg, struct dd_pos *p, unsigned int stream,
		       unsigned int gen)
{
	uint64_t nb = (p->n + cfg->run - 1) / cfg->run, i, b;
	uint64_t s = cfg->o->seed ^ ((uint64_t)stream << 32) ^ ((uint64_t)gen << 48);
	uint8_t *mark;

	splitmix(&s);
	if (cfg->fl->cdc) {
		cdc_generation(cfg, p, stream, gen, s);
		return;
	}
	mark = malloc(nb);
	if (gen == 0) {
		uint64_t k = (uint64_t)llround(cfg->o->dup * (double)nb);

		if (mark)
			pick(mark, 1, nb, nb > 1 ? k : 0, s);
		for (i = 0; i < p->n; i++) {
			b = i / cfg->run;
			if (mark && mark[b]) {
				uint64_t h = s ^ (b * 0x2545f4914f6cdd1dull);
				uint64_t q = (splitmix(&h) % b) * cfg->run + i % cfg->run;

				p->cid[i] = p->cid[q];
				p->len[i] = p->len[q];
				p->src[i] = (uint32_t)q;
				p->fresh[i] = DD_REPEAT;
			} else {
				fresh_at(cfg, p, i, stream);
			}
		}
	} else {
		uint64_t k = (uint64_t)llround(cfg->o->change * (double)nb);
		/*
		 * this generation's extents start @shift positions in: changes do
		 * not line up with the last ones, nor with a restore's reads
		 */
		uint64_t shift = p->n > cfg->run ? splitmix(&s) % cfg->run : 0;
		uint64_t full = (p->n - shift) / cfg->run;

		if (mark)
			pick(mark, 0, full, k, s);
		for (i = 0; i < p->n; i++) {
			uint64_t b = (i - shift) / cfg->run;

			if (mark && i >= shift && b < full && mark[b])
				fresh_at(cfg, p, i, stream);
			else
				p->fresh[i] = 0;
		}
	}
	free(mark);
}

void dd_fill(const struct dd_cfg *cfg, uint64_t cid, void *buf, uint32_t len)
{
	uint64_t s = XXH64(&cid, sizeof(cid), cfg->o->seed);
	uint32_t r = cfg->rand_per_512, off, k;
	uint8_t *p = buf;

	for (off = 0; off < len; off += 512) {
		uint32_t piece = len - off < 512 ? len - off : 512;
		uint32_t nr = r < piece ? r : piece;
		uint64_t w;

		for (k = 0; k + 8 <= nr; k += 8) {
			w = splitmix(&s);
			memcpy(p + off + k, &w, 8);
		}
		if (k < nr) {
			w = splitmix(&s);
			memcpy(p + off + k, &w, nr - k);
		}
		/* the rest repeats them: an LZ match, never a constant run */
		for (k = nr; k < piece; k += nr)
			memcpy(p + off + k, p + off, piece - k < nr ? piece - k : nr);
	}
}

uint32_t dd_squeeze(const struct dd_cfg *cfg, const void *in, uint32_t len, void *out)
{
	uint32_t r = cfg->rand_per_512, off, n = 0;
	const uint8_t *p = in;

	/* what a compressor keeps: the random bytes of each 512 */
	for (off = 0; off < len; off += 512) {
		uint32_t piece = len - off < 512 ? len - off : 512;
		uint32_t nr = r < piece ? r : piece;

		memcpy((uint8_t *)out + n, p + off, nr);
		n += nr;
	}
	return n;
}

void dd_hash(const void *buf, uint32_t len, struct dd_fp *fp)
{
	XXH128_hash_t h = XXH3_128bits(buf, len);

	fp->lo = h.low64;
	fp->hi = h.high64;
}
