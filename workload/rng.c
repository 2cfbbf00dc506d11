// SPDX-License-Identifier: MIT
/*
 * rng.c - seeded, reproducible random numbers, the same ones the imitated
 * tools draw
 *
 * bonnie++ draws everything (seek tickets, file names, file sizes, shuffle
 * order) from rand() after srand(seed) and prints the seed in its CSV;
 * iozone shuffles its random-I/O record order with lrand48() after
 * srand48(0). Keeping those exact generators, per owner instead of
 * process-global, makes a run with bonnie's -z seed touch the very chunks
 * and names bonnie++ touches with that seed, and lets concurrent targets
 * each keep their own sequence. glibc provides both reentrant forms:
 * random_r(3) on a 128-byte state is rand()'s default TYPE_3 generator,
 * nrand48(3) with its own state is lrand48().
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "workload_i.h"

void rng_init(struct rng *r, uint32_t seed)
{
	memset(r, 0, sizeof(*r));
	r->seed = seed;
	/* Cannot fail: the state buffer is large enough and rd is zeroed. */
	initstate_r(seed, r->state, sizeof(r->state), &r->rd);
}

int32_t rng_rand(struct rng *r)
{
	int32_t v;

	random_r(&r->rd, &v);
	return v;
}

void rng_copy(struct rng *dst, const struct rng *src)
{
	const char *sb = src->state;
	char *db = dst->state;

	*dst = *src;
	/* struct random_data points into its state buffer: rebase on ours */
	dst->rd.fptr = (int32_t *)(db + ((const char *)src->rd.fptr - sb));
	dst->rd.rptr = (int32_t *)(db + ((const char *)src->rd.rptr - sb));
	dst->rd.state = (int32_t *)(db + ((const char *)src->rd.state - sb));
	dst->rd.end_ptr = (int32_t *)(db + ((const char *)src->rd.end_ptr - sb));
}

void rng48_init(struct rng48 *r, long seed)
{
	/* srand48(): high 32 bits of X from the seed, low 16 bits 0x330e */
	r->x[0] = 0x330e;
	r->x[1] = (unsigned short)(seed & 0xffff);
	r->x[2] = (unsigned short)((seed >> 16) & 0xffff);
}

long rng48_next(struct rng48 *r)
{
	return nrand48(r->x);
}
