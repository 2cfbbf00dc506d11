/* SPDX-License-Identifier: MIT */
/*
 * iotap_base.h - the primitives every iotap module shares
 *
 * libiotap-base is the bottom of the dependency graph: trace/ links it, and
 * fs/, workload/ and tools/ reach it through trace_dep, so each primitive
 * below exists once in the tree. It uses libc and libxxhash (header-only,
 * inlined) and nothing of the project.
 *
 *   clock   iotap_clock_ns(): CLOCK_MONOTONIC in ns, the time base of traces
 *           and of every deadline (iotap_cond_wait_until())
 *   cpu     iotap_cpu_ns(), iotap_thread_cpu_ns(): CPU time in ns
 *   hash    iotap_hash_u64() and friends: XXH3, inlined
 *   map     struct iotap_map: open-addressing hash map, u64 keys, inline values
 *   hist    struct iotap_hist: fio-style log-linear histogram
 *   size    iotap_size_parse(): "8k", "64MiB", "1G" to bytes
 *   argv    iotap_argv_join(): a command line as one string
 *   replace iotap_replace_tmp()/_commit(): write a file's successor under a
 *           sibling name, rename it over the file at the end (--force)
 *   live    iotap_live_lock()/_held(): a file being written, which nothing
 *           replaces (live.c)
 *   bonnie  struct iotap_bonnie_csv: bonnie++'s one-line CSV (bonnie.c), for
 *           both `iotap run bonnie` (workload/) and the report (tools/)
 *   fmt     iotap_fmt_u64() and friends: numbers to text without printf (fmt.c)
 *   futex   iotap_futex_wait()/_wake(): sleep on a 32-bit word, wake its sleepers
 *   pool    struct iotap_pool: the tree's thread pool, zstd's POOL_* shape (pool.c)
 *   buf     iotap_buf_alloc(): megabyte scratch buffers in 2 MiB extents that
 *           transparent huge pages may back (buf.c)
 *
 * Objects follow the project's lifecycle words: _init/_release for
 * caller-owned structs. Functions return 0 or -errno unless said otherwise.
 * Nothing here locks: a map or histogram belongs to one thread at a time.
 */
#ifndef IOTAP_BASE_H
#define IOTAP_BASE_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <linux/futex.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>
#undef XXH_INLINE_ALL

/* --- clock ------------------------------------------------------------------ */

/* A struct timespec as ns, and ns as a struct timespec. */
static inline uint64_t iotap_timespec_ns(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * 1000000000ull + (uint64_t)ts->tv_nsec;
}

static inline struct timespec iotap_ns_timespec(uint64_t ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(ns / 1000000000ull),
		.tv_nsec = (long)(ns % 1000000000ull),
	};

	return ts;
}

/*
 * iotap_clock_ns - CLOCK_MONOTONIC now, in ns
 *
 * The clock of every record's time_ns, of every workload's timing and of
 * every deadline (iotap_cond_wait_until()).
 * Context: any thread; never blocks (vDSO).
 */
static inline uint64_t iotap_clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return iotap_timespec_ns(&ts);
}

/*
 * iotap_cond_wait_until - wait on @c until it is signalled or
 * CLOCK_MONOTONIC reaches @at_ns
 * @m: the mutex, held by the caller
 *
 * Any condition variable will do: the clock is passed to
 * pthread_cond_clockwait(), not taken from @c's attributes, so no deadline
 * in the tree follows the wall clock (which may jump).
 * Return: 0, or ETIMEDOUT (pthread's positive code); callers re-check
 * their condition either way.
 */
static inline int iotap_cond_wait_until(pthread_cond_t *c, pthread_mutex_t *m, uint64_t at_ns)
{
	struct timespec ts = iotap_ns_timespec(at_ns);

	return pthread_cond_clockwait(c, m, CLOCK_MONOTONIC, &ts);
}

/* iotap_cond_wait_ns - iotap_cond_wait_until() @ns from now. */
static inline int iotap_cond_wait_ns(pthread_cond_t *c, pthread_mutex_t *m, uint64_t ns)
{
	return iotap_cond_wait_until(c, m, iotap_clock_ns() + ns);
}

/* --- cpu -------------------------------------------------------------------- */

/*
 * iotap_cpu_ns - user and system CPU time of getrusage(@who) in ns
 * @who: RUSAGE_SELF (the process) or RUSAGE_THREAD (the calling thread)
 *
 * Return: 0, or -errno (then both are 0).
 */
static inline int iotap_cpu_ns(int who, uint64_t *user_ns, uint64_t *sys_ns)
{
	struct rusage ru;

	if (getrusage(who, &ru)) {
		*user_ns = *sys_ns = 0;
		return -errno;
	}
	*user_ns = (uint64_t)ru.ru_utime.tv_sec * 1000000000ull + (uint64_t)ru.ru_utime.tv_usec * 1000;
	*sys_ns = (uint64_t)ru.ru_stime.tv_sec * 1000000000ull + (uint64_t)ru.ru_stime.tv_usec * 1000;
	return 0;
}

/*
 * iotap_thread_cpu_ns - the calling thread's CPU time, user and system
 * together, in ns (CLOCK_THREAD_CPUTIME_ID: finer than getrusage's us)
 */
static inline uint64_t iotap_thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return iotap_timespec_ns(&ts);
}

/* --- futex ------------------------------------------------------------------ */

/*
 * iotap_futex_wait - sleep while the 32-bit @word holds @val
 * @shared: 0 if only this process uses @word (FUTEX_WAIT_PRIVATE), else
 *          it lives in memory other processes map (FUTEX_WAIT)
 *
 * Returns at once if *@word != @val; may also return spuriously (a signal,
 * a stale wake): callers re-check their condition in a loop.
 * Context: any thread; sleeps interruptibly.
 */
static inline void iotap_futex_wait(void *word, unsigned int val, int shared)
{
	syscall(SYS_futex, word, shared ? FUTEX_WAIT : FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

/* iotap_futex_wake - wake up to @n threads sleeping on @word (@shared as above). */
static inline void iotap_futex_wake(void *word, int n, int shared)
{
	syscall(SYS_futex, word, shared ? FUTEX_WAKE : FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);
}

/* --- pool ------------------------------------------------------------------- */

/*
 * struct iotap_pool - n threads running queued jobs (a function and its
 * argument), first queued first started; the tree's one thread pool
 *
 * A job must not wait for a job queued after it (the queue is FIFO, its
 * threads few). Per-thread state (a decompression context) is the job's
 * business: a job does not know which thread runs it.
 */
struct iotap_pool;

/*
 * iotap_pool_create - start @nthreads threads (all signals blocked) and a
 * queue of @queue jobs
 * Return: 0, -EINVAL (0 threads or queue), -ENOMEM, or -EAGAIN (no thread
 * could start). Fewer than @nthreads may start: iotap_pool_threads().
 */
int iotap_pool_create(struct iotap_pool **out, unsigned int nthreads, unsigned int queue);
unsigned int iotap_pool_threads(const struct iotap_pool *p);

/* The CPUs this process may run on (its affinity mask), at least 1: how many threads pay. */
unsigned int iotap_pool_cpus(void);

/* iotap_pool_add - queue @fn(@arg), waiting while the queue is full. */
void iotap_pool_add(struct iotap_pool *p, void (*fn)(void *arg), void *arg);

/* iotap_pool_try_add - queue @fn(@arg); -EAGAIN at once if the queue is full. */
int iotap_pool_try_add(struct iotap_pool *p, void (*fn)(void *arg), void *arg);

/*
 * iotap_pool_free - run what is queued, stop the threads, free @p (NULL: no-op)
 * Context: not from one of @p's jobs.
 */
void iotap_pool_free(struct iotap_pool *p);

/* --- hash ------------------------------------------------------------------- */

/* XXH3 of one 64-bit key (its 8 bytes in host order). */
static inline uint64_t iotap_hash_u64(uint64_t key)
{
	return XXH3_64bits(&key, sizeof(key));
}

/* XXH3 of two 64-bit words, e.g. (st_dev, st_ino). */
static inline uint64_t iotap_hash_u64x2(uint64_t a, uint64_t b)
{
	uint64_t k[2] = { a, b };

	return XXH3_64bits(k, sizeof(k));
}

/*
 * XXH3 of @len bytes at @p, or of the string @s without its NUL, seeded with
 * @seed (e.g. a parent id). Out of line (map.c): inlined into a caller with a
 * constant length, XXH3's unreachable long-input paths trip -Warray-bounds.
 */
uint64_t iotap_hash_bytes(const void *p, size_t len, uint64_t seed);
uint64_t iotap_hash_str(const char *s, uint64_t seed);

/* --- map -------------------------------------------------------------------- */

/*
 * struct iotap_map - open-addressing hash map from u64 keys to inline values
 *
 * Linear probing on iotap_hash_u64(key), at most 3/4 full, deletion by
 * backward shift (no tombstones). Every key value is allowed. Values are
 * @vsize bytes stored in the table, zeroed on insertion and 8-byte aligned.
 *
 * A pointer to a value stays valid until the next iotap_map_put(),
 * iotap_map_add() or deletion on the same map (they may move entries).
 *
 * Wider keys (strings, (parent, name)) key the map by iotap_hash_bytes() and
 * insert with iotap_map_add(), which allows equal keys; a lookup then walks
 * the candidates with iotap_map_find()/iotap_map_find_next() and compares the
 * full key itself.
 */
struct iotap_map {
	unsigned char *slots;		/* cap slots of esize bytes: u64 key, value */
	unsigned char *full;		/* cap bytes: 1 if the slot holds an entry */
	uint64_t cap;			/* slots, a power of two, or 0 */
	uint64_t used;			/* entries */
	size_t vsize;			/* value bytes */
	size_t esize;			/* slot bytes: 8 + vsize rounded up to 8 */
	unsigned char *ext;		/* a large table's huge-page extent (map.c), or NULL */
	size_t ext_size;		/* as iotap_buf_alloc() gave it */
};

/* Initialize an empty map of @vsize-byte values; allocates nothing. */
void iotap_map_init(struct iotap_map *m, size_t vsize);
/* Free the table; the map is empty (and reusable) afterwards. */
void iotap_map_release(struct iotap_map *m);
/* Remove every entry, keeping the table's memory. */
void iotap_map_clear(struct iotap_map *m);

/* The slow path of insertion: double the table. Return: 0 or -ENOMEM. */
int iotap_map_grow(struct iotap_map *m);

static inline uint64_t *iotap_map_slot_key_(const struct iotap_map *m, uint64_t j)
{
	return (uint64_t *)(m->slots + j * m->esize);
}

/*
 * iotap_map_get - the value of @key
 * Return: a pointer to the value of the first entry with @key, or NULL.
 */
static inline void *iotap_map_get(const struct iotap_map *m, uint64_t key)
{
	uint64_t mask = m->cap - 1, j;

	if (!m->cap)
		return NULL;
	for (j = iotap_hash_u64(key) & mask; m->full[j]; j = (j + 1) & mask) {
		uint64_t *k = iotap_map_slot_key_(m, j);

		if (*k == key)
			return k + 1;
	}
	return NULL;
}

/*
 * iotap_map_put - find @key, or insert it with a zeroed value
 * @val: set to the value's address
 *
 * Return: 1 if @key was there, 0 if it was inserted, -ENOMEM (then the map
 * is unchanged and *@val is NULL).
 */
static inline int iotap_map_put(struct iotap_map *m, uint64_t key, void **val)
{
	uint64_t mask, j, *k;

	if ((m->used + 1) * 4 > m->cap * 3 && iotap_map_grow(m)) {
		*val = NULL;
		return -ENOMEM;
	}
	mask = m->cap - 1;
	for (j = iotap_hash_u64(key) & mask; m->full[j]; j = (j + 1) & mask) {
		k = iotap_map_slot_key_(m, j);
		if (*k == key) {
			*val = k + 1;
			return 1;
		}
	}
	k = iotap_map_slot_key_(m, j);
	*k = key;
	memset(k + 1, 0, m->esize - sizeof(*k));
	m->full[j] = 1;
	m->used++;
	*val = k + 1;
	return 0;
}

/*
 * iotap_map_add - insert an entry for @key even if @key is there already
 * @val: set to the new, zeroed value
 * Return: 0 or -ENOMEM.
 */
int iotap_map_add(struct iotap_map *m, uint64_t key, void **val);

/*
 * iotap_map_find - iterate the entries with @key
 * @pos: cursor, set by iotap_map_find() and advanced by iotap_map_find_next()
 *
 * Return: the value of the next entry with @key, or NULL when there is none.
 * Deleting the entry just returned is allowed only if the walk then stops.
 */
void *iotap_map_find(const struct iotap_map *m, uint64_t key, uint64_t *pos);
void *iotap_map_find_next(const struct iotap_map *m, uint64_t key, uint64_t *pos);

/* Remove the first entry with @key. Return: 0 or -ENOENT. */
int iotap_map_del(struct iotap_map *m, uint64_t key);
/* Remove the entry whose value is at @val (from get, put, add, find or next). */
void iotap_map_del_value(struct iotap_map *m, void *val);

/*
 * iotap_map_next - iterate all entries, in table order
 * @pos: cursor, 0 to start
 * @key: if not NULL, set to the entry's key
 * Return: the next value, or NULL at the end.
 */
void *iotap_map_next(const struct iotap_map *m, uint64_t *pos, uint64_t *key);

/* Number of entries. */
static inline uint64_t iotap_map_count(const struct iotap_map *m)
{
	return m->used;
}

/* --- hist ------------------------------------------------------------------- */

/*
 * Log-linear buckets (fio's FIO_IO_U_PLAT scheme): values below 2^@bits have
 * a bucket each; above, every power of two is cut into 2^@bits equal
 * sub-buckets, so a bucket is at most 1/2^@bits of its values wide.
 * iotap_hist_index() and iotap_hist_range() are the scheme for any @bits
 * (a caller with a flat counter array, e.g. in shared memory, uses them
 * directly); struct iotap_hist is a sparse histogram at IOTAP_HIST_BITS.
 */
#define IOTAP_HIST_GROUPS_OF(bits)	(64 - (bits) + 1)
#define IOTAP_HIST_BUCKETS_OF(bits)	(IOTAP_HIST_GROUPS_OF(bits) << (bits))

static inline unsigned int iotap_hist_index(uint64_t v, unsigned int bits)
{
	unsigned int msb, shift;

	if (v < (1ull << bits))
		return (unsigned int)v;
	msb = 63 - (unsigned int)__builtin_clzll(v);
	shift = msb - bits;
	return ((shift + 1) << bits) + (unsigned int)((v >> shift) & ((1ull << bits) - 1));
}

/* The values [*lo, *hi) of bucket @idx (*hi saturates at UINT64_MAX). */
void iotap_hist_range(unsigned int idx, unsigned int bits, uint64_t *lo, uint64_t *hi);

/*
 * The quantile convention of every histogram in the tree: quantile @q of @n
 * samples is the @rank-th smallest, rank = ceil(q * n) and at least 1
 * (iotap_hist_rank()), reported as the midpoint of the bucket holding it
 * (iotap_hist_mid()).
 */
static inline uint64_t iotap_hist_rank(uint64_t n, double q)
{
	uint64_t want = (uint64_t)(q * (double)n + 0.999999);

	return want < 1 ? 1 : want;
}

static inline uint64_t iotap_hist_mid(unsigned int idx, unsigned int bits)
{
	uint64_t lo, hi;

	iotap_hist_range(idx, bits, &lo, &hi);
	return lo + (hi - lo) / 2;
}

/*
 * iotap_hist_flat_quantile - quantile @q (0..1) of a flat counter array
 * @cnt:  @nb counters, bucket i counting the values iotap_hist_index(v, @bits) == i
 *
 * For histograms kept as plain arrays (in shared memory, or the difference
 * of two snapshots); struct iotap_hist has iotap_hist_quantile().
 * Return: the midpoint of the quantile's bucket, or 0 without samples.
 */
uint64_t iotap_hist_flat_quantile(const uint64_t *cnt, unsigned int nb, unsigned int bits,
				  double q);

#define IOTAP_HIST_BITS		6
#define IOTAP_HIST_SUB		(1u << IOTAP_HIST_BITS)
#define IOTAP_HIST_GROUPS	IOTAP_HIST_GROUPS_OF(IOTAP_HIST_BITS)
#define IOTAP_HIST_BUCKETS	IOTAP_HIST_BUCKETS_OF(IOTAP_HIST_BITS)
/* Largest relative error of a quantile (half a sub-bucket of 1/64). */
#define IOTAP_HIST_REL_ERROR	(1.0 / IOTAP_HIST_SUB)

/*
 * struct iotap_hist - sparse log-linear histogram, 64 sub-buckets per octave
 *
 * A quantile, reported as the midpoint of its bucket, is off by at most
 * 1/128 of its value. A group of 64 counters (one power of two) is allocated
 * when a value first falls in it, so the usual few octaves of latencies cost
 * a few KiB; @used lets merge and clear touch only those groups.
 *
 * A histogram that has only ever been merged into, from at most
 * IOTAP_HIST_GROUPS non-zero buckets in all (a report's automatic phase
 * of a block or two: hundreds of them live until the end), allocates no
 * group: it keeps those buckets in the group pointers' place (@nsp > 0).
 * The first add, or a merge beyond that, makes it grouped for good (until
 * release). Every function gives the same results either way.
 * Zero-initialize (or memset) to init; iotap_hist_release() frees.
 */
struct iotap_hist_pool;

struct iotap_hist {
	struct iotap_hist_pool *pool;	/* where its groups come from (NULL: calloc) */
	uint64_t n;			/* samples */
	uint64_t sum;			/* sum of the values */
	uint64_t min, max;
	uint64_t used;			/* bit g: grp[g] holds counts (0 while sparse) */
	uint32_t nsp;			/* sparse: buckets in sp[] (0: grouped or empty) */
	uint32_t grouped;		/* a group was allocated: never sparse again */
	union {
		/*
		 * IOTAP_HIST_SUB counters each, then one word whose bit i says
		 * counter i may be non-zero: a merge or clear of a sparse group
		 * (a block of a few hundred samples) touches only those.
		 */
		uint64_t *grp[IOTAP_HIST_GROUPS];
		/* sparse: count << IOTAP_HIST_SP_SHIFT | bucket, by bucket */
		uint64_t sp[IOTAP_HIST_GROUPS];
	};
};
#define IOTAP_HIST_SP_SHIFT	12	/* a bucket index fits 12 bits */
_Static_assert(IOTAP_HIST_BUCKETS <= 1u << IOTAP_HIST_SP_SHIFT, "bucket fits a sparse entry");
#define IOTAP_HIST_NZ	IOTAP_HIST_SUB	/* grp[g][IOTAP_HIST_NZ]: the group's non-zero mask */

/*
 * The slow path of iotap_hist_add(): allocate group @g (a sparse histogram
 * moves its buckets into groups first). NULL: -ENOMEM.
 */
uint64_t *iotap_hist_group(struct iotap_hist *h, unsigned int g);

/* Return: 0, or -ENOMEM (the sample is then only in n, sum, min, max). */
static inline int iotap_hist_add(struct iotap_hist *h, uint64_t v)
{
	unsigned int b = iotap_hist_index(v, IOTAP_HIST_BITS), g = b / IOTAP_HIST_SUB;
	uint64_t *c = h->grp[g];

	if (!h->n || v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
	h->n++;
	h->sum += v;
	/*
	 * a used group is allocated (a cleared one may be allocated, not
	 * used); a sparse histogram has none used
	 */
	if (__builtin_expect(!(h->used & (1ull << g)), 0)) {
		c = iotap_hist_group(h, g);
		if (!c)
			return -ENOMEM;
	}
	c[b % IOTAP_HIST_SUB]++;
	c[IOTAP_HIST_NZ] |= 1ull << (b % IOTAP_HIST_SUB);
	return 0;
}

/* Add @src's samples to @dst. Return: 0 or -ENOMEM. */
int iotap_hist_merge(struct iotap_hist *dst, const struct iotap_hist *src);
/* Forget the samples, keep the allocations. */
void iotap_hist_clear(struct iotap_hist *h);
void iotap_hist_release(struct iotap_hist *h);

/*
 * struct iotap_hist_pool - memory for many short-lived histograms of one thread
 *
 * A report's automatic phases hold hundreds of histograms at once, each a
 * 536-byte struct and 520-byte groups: calloc'ed one by one they faulted
 * in a fresh heap page every few (340 of the 766 faults, ~7 ms, of a
 * 50 ms pgbench report). A pool hands out both from slabs (the first 64 KiB malloc'ed,
 * the next 2 MiB extents that huge pages back, iotap_buf_alloc) and takes
 * them back for reuse. A histogram from iotap_hist_new(pool) takes its
 * groups from the pool too. The pool belongs to one thread at a time, and
 * iotap_hist_pool_release() frees everything it handed out at once.
 */
struct iotap_hist_pool {
	void *slab;			/* newest slab, NULL: none */
	size_t used;			/* bytes of it handed out */
	void *free;			/* blocks given back, each linking the next */
};

void iotap_hist_pool_init(struct iotap_hist_pool *p);
void iotap_hist_pool_release(struct iotap_hist_pool *p);
/* A zeroed histogram whose groups come from @p (NULL: calloc'ed, groups too); NULL: -ENOMEM. */
struct iotap_hist *iotap_hist_new(struct iotap_hist_pool *p);
/* iotap_hist_release() and free (into its pool) a histogram of iotap_hist_new(); NULL: nothing. */
void iotap_hist_delete(struct iotap_hist *h);
/* Count in bucket @idx (at IOTAP_HIST_BITS). */
uint64_t iotap_hist_count(const struct iotap_hist *h, unsigned int idx);
/* The value at quantile @q (0..1): the midpoint of its bucket, clamped to min..max. */
uint64_t iotap_hist_quantile(const struct iotap_hist *h, double q);

/* --- size ------------------------------------------------------------------- */

/*
 * iotap_size_parse - a size with an optional binary multiplier
 * @s:    "4096", "8k", "64K", "1M", "2g", "1T"; k/m/g/t are powers of 1024
 *        in either case, optionally followed by "i", "iB" or "B" ("64KiB",
 *        "1MB"); a bare number may end in "B"
 * @unit: what a number without k/m/g/t counts (1: bytes; 1024 for
 *        iozone's KB; 1 MiB for bonnie's -s)
 * @out:  the size in bytes
 *
 * No sign, no space, no fraction. Return: 0, or -EINVAL for anything else
 * or a size above UINT64_MAX (*@out is then unchanged).
 */
int iotap_size_parse(const char *s, uint64_t unit, uint64_t *out);

/* --- argv ------------------------------------------------------------------- */

/*
 * iotap_argv_join - words as one space-separated string
 * @first: a leading word ("iotap"), or NULL
 * @argc, @argv: the words after it
 *
 * Words are joined as they are, unquoted (the trace header's cmdline).
 * Return: a malloc'd string the caller frees, or NULL (ENOMEM).
 */
char *iotap_argv_join(const char *first, int argc, char *const *argv);

/* --- replace ---------------------------------------------------------------- */

/*
 * iotap_replace_tmp - a free sibling name to write @path's successor under
 * @path: the file to be replaced (it may not exist)
 * @tmp:  set to "DIR/.NAME.XXXXXX", malloc'd; the caller frees it
 *
 * The name is free when this returns (created by mkstemp(3), then removed):
 * create it O_EXCL; a lost race gives EEXIST, never a clobbered file. Being
 * in @path's directory, iotap_replace_commit() is one atomic rename(2).
 * Return: 0, or -errno (the directory is not writable, ENOMEM).
 */
int iotap_replace_tmp(const char *path, char **tmp);

/*
 * rename(2) @tmp over @path, unless @path is being written (iotap_live_held()).
 * Return: 0, -ETXTBSY (@path is live: both files are left as they are) or -errno.
 */
int iotap_replace_commit(const char *tmp, const char *path);

/* --- live ------------------------------------------------------------------- */

/*
 * iotap_live_lock - mark the open file @fd as being written, for its life
 * @fd: open for writing; the mark goes when the last descriptor of this
 *      open file description closes (or the process ends)
 *
 * Every trace writer calls it on its file before writing anything; an
 * open that would truncate an existing file calls it first and truncates
 * only after (live.c says why an OFD lock).
 * Return: 0 (marked, or the file system has no locks), or -ETXTBSY when
 * another open of the file holds the mark: it is some writer's live file.
 */
int iotap_live_lock(int fd);

/*
 * iotap_live_held - is the file at @path (relative to @dirfd, or AT_FDCWD)
 * being written, marked by an iotap_live_lock() of another open file
 * description? _fd: the same for an open file, any access mode.
 * Return: 1 when it is, 0 when it is not, is no regular file, does not
 * exist or cannot be opened to ask.
 */
int iotap_live_held(int dirfd, const char *path);
int iotap_live_held_fd(int fd);

/* --- bonnie ----------------------------------------------------------------- */

/*
 * bonnie++'s one-line CSV (format_version 1.98, as Debian's bonnie++ 2.00a
 * writes it and bon_csv2txt / bon_csv2html read it), written in one place
 * for `iotap run bonnie` (from what it measured) and `iotap report
 * --bonnie-csv` (from a trace), so that one run gives one line.
 *
 * The twelve tests in bonnie++'s column order: putc, put_block, rewrite,
 * getc, get_block, seeks, then seq_create, seq_stat, seq_del, ran_create,
 * ran_stat, ran_del.
 */
#define IOTAP_BONNIE_CSV_TESTS	12
#define IOTAP_BONNIE_CSV_IO	6	/* the first six are the I/O tests */
#define IOTAP_BONNIE_MIN_TIME	0.5	/* bonnie.h MinTime: shorter tests print +++++ */

struct iotap_bonnie_csv_test {
	double elapsed_s;		/* 0: not run, blank; < MIN_TIME: "+++++" */
	double units;			/* what the rate counts: KiB, seeks or files */
	double cpu_pct;			/* %CP (iotap_bonnie_cpu_pct()); < 0: blank */
	double latency_s;		/* longest unit, s; 0: blank */
};

struct iotap_bonnie_csv {
	const char *version;		/* bonnie_version: "2.00a" */
	const char *name;		/* machine name */
	int has_seed;			/* 0: the seed column is blank */
	uint32_t seed;
	int io;				/* 1: the I/O tests' parameter columns are filled */
	int has_size;			/* 0: file_size blank */
	uint64_t file_mib;		/* file_size, MiB */
	uint32_t chunk;			/* io_chunk_size, bytes; 0: blank (the default 8192) */
	uint64_t seeks;
	unsigned int seekers;
	int files;			/* 1: the file tests' parameter columns are filled */
	uint32_t num_files;		/* in units of 1024 */
	int32_t max_size, min_size;	/* bytes; 0: blank */
	uint32_t num_dirs;		/* <= 1: blank */
	uint32_t file_chunk;		/* bytes; 0: blank (the default 8192) */
	struct iotap_bonnie_csv_test test[IOTAP_BONNIE_CSV_TESTS];
};

/* %CP as bonnie++ computes it: CPU over wall time of the test, in percent. */
static inline double iotap_bonnie_cpu_pct(double cpu_s, double elapsed_s)
{
	return cpu_s / elapsed_s * 100.0;
}

/* The CSV line of one run, with its newline. */
void iotap_bonnie_csv_print(FILE *f, const struct iotap_bonnie_csv *l);
/* The header line bonnie++ 2.00a prints before -x runs, verbatim (see bonnie.c). */
void iotap_bonnie_csv_print_header(FILE *f);
/*
 * bon_time.cpp print_size(): @size in the first of @units, scaled by 1024
 * while it divides ("MG": 2048 -> "2G"; " km": 8192 -> "8k", 100 -> "100");
 * @units NULL: the plain number.
 */
void iotap_bonnie_size(char *buf, size_t len, uint64_t size, const char *units);

/* --- fmt -------------------------------------------------------------------- */

/*
 * Numbers to text, written at @p with no NUL; each returns the end. What
 * printf gives for %lu, %ld, %o and %x; iotap_fmt_frac(p, v, N) what %.Nf
 * gives for the double v / 10^N wherever that double is within half a unit
 * of the last printed digit (|v| / 10^N below 2^52 / 10^N: for N = 9, times
 * up to 52 days; for N = 3, any latency). Room needed: 21, 20, 22, 16, and
 * 22 + N bytes.
 */
char *iotap_fmt_u64(char *p, uint64_t v);
char *iotap_fmt_i64(char *p, int64_t v);
char *iotap_fmt_oct(char *p, uint64_t v);
char *iotap_fmt_hex(char *p, uint64_t v);
char *iotap_fmt_frac(char *p, int64_t v, unsigned int decimals);

/* --- buf -------------------------------------------------------------------- */

/*
 * Buffers from this size up are mapped in whole 2 MiB extents (up to 1.5 MiB
 * more resident than asked for, against 128 faults saved a 512 KiB),
 * smaller ones malloc'ed.
 */
#define IOTAP_BUF_HUGE		(512u << 10)

/*
 * iotap_buf_alloc - a large scratch buffer, contents undefined
 * @size: bytes wanted; set to the bytes the buffer has (from IOTAP_BUF_HUGE
 *        up: rounded to 2 MiB, the rest is usable too)
 *
 * From IOTAP_BUF_HUGE bytes up, an anonymous mapping aligned to 2 MiB and
 * marked MADV_HUGEPAGE: its first touch faults in a transparent huge page
 * per 2 MiB, not 512 pages (buf.c says why that matters). No realloc: a
 * buffer that must grow is freed and allocated again, which copies nothing.
 * Return: the buffer, NULL when out of memory. Free it with
 * iotap_buf_free(p, *size).
 */
void *iotap_buf_alloc(size_t *size);
/* Free a buffer of iotap_buf_alloc() (NULL: nothing); @size as it returned it. */
void iotap_buf_free(void *p, size_t size);
/*
 * iotap_buf_keep - @n more (or, negative, fewer) huge buffers that
 * iotap_buf_free() keeps for the next iotap_buf_alloc() of their size (up
 * to 64, process-wide), instead of unmapping them: no fault, no zeroing
 * when the same sizes come and go (a reader per time window). Give back
 * what you asked for when done; kept buffers beyond the count are unmapped.
 * Thread-safe.
 */
void iotap_buf_keep(int n);
/*
 * iotap_buf_grow - a buffer of at least @want bytes holding the first @used
 * bytes of @p (a buffer of iotap_buf_alloc(), or NULL), which it frees
 * @size: @p's size as iotap_buf_alloc() set it (any, for NULL); set to the new one
 * Return: the buffer; NULL when out of memory, @p and *@size then untouched.
 */
void *iotap_buf_grow(void *p, size_t *size, size_t used, size_t want);
/*
 * iotap_buf_regrow - a buffer of iotap_buf_alloc() (or NULL) grown to @want bytes
 * @size: its size as iotap_buf_alloc() set it (any, for NULL); set to the new one
 *
 * The contents are not kept (below IOTAP_BUF_HUGE on both sides, realloc()
 * may keep them: it keeps the pages already touched).
 * Return: the buffer, or NULL when out of memory; the old one is then
 * freed and *@size is 0.
 */
void *iotap_buf_regrow(void *p, size_t *size, size_t want);

#endif /* IOTAP_BASE_H */
