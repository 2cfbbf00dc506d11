// SPDX-License-Identifier: MIT
/*
 * buf.c - large scratch buffers in huge-page-sized extents
 *
 * A trace reader's decoded batch is megabytes (112 bytes a record, tens of
 * thousands of records a chunk), touched once from start to end right after
 * it is allocated. Every 4 KiB page of it then costs a page fault, dear on
 * a VM, and most of a report's faults were in its batches. The kernel maps
 * a 2 MiB-aligned extent marked MADV_HUGEPAGE with one transparent huge
 * page on the first touch instead (/sys/kernel/mm/transparent_hugepage/
 * enabled "madvise" or "always"). What a fault costs and what this saved:
 * BENCHMARKS.md, "Reading real captures", session 8. Where huge pages are
 * off or none is free, the same memory takes 4 KiB pages as before. The
 * price: up to 2 MiB more resident per buffer than asked for (bounded,
 * and only for big ones).
 *
 * Which kind is cheaper the first time round depends on the host, not on
 * iotap: on the project's VMs a 4 KiB page's first touch cost 1.4-12 ms
 * a MB and a huge page's 0.07-1.8 (sessions 8, 13, 16), and later, on a
 * guest whose balloon hands free 2 MiB blocks back to the host, 0.38
 * against 2.3 (BENCHMARKS.md, "Session 20"). Huge pages stay: their
 * worst case is the smaller one, and a buffer kept and reused (below)
 * pays it once.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "iotap_base.h"

#define HUGE_EXTENT	(2ull << 20)

static size_t buf_round(size_t size)
{
	return size >= IOTAP_BUF_HUGE ? (size + HUGE_EXTENT - 1) & ~(HUGE_EXTENT - 1) : size;
}

/*
 * Buffers kept for reuse while some caller wants them (iotap_buf_keep):
 * a report that opens a reader per time window (tools/analysis/report_par.c)
 * spent half its reading time zeroing the fresh huge pages of each
 * reader's arrays (perf: clear_page_erms 52% of test_split --bench, 7
 * windows of a 782 k-record capture).
 */
#define KEEP_MAX	64
static pthread_mutex_t keep_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned int keep_cap, nkept;
static struct { void *p; size_t size; } kept[KEEP_MAX];

/* A kept buffer of @n bytes (callers size their buffers the same way each time). */
static void *keep_take(size_t *n)
{
	unsigned int i, best = KEEP_MAX;
	void *p = NULL;

	pthread_mutex_lock(&keep_lock);
	for (i = 0; i < nkept; i++)
		if (kept[i].size == *n) {
			best = i;
			break;
		}
	if (best < KEEP_MAX) {
		p = kept[best].p;
		*n = kept[best].size;
		kept[best] = kept[--nkept];
	}
	pthread_mutex_unlock(&keep_lock);
	return p;
}

static int keep_put(void *p, size_t size)
{
	int ret = 0;

	pthread_mutex_lock(&keep_lock);
	if (nkept < keep_cap) {
		kept[nkept].p = p;
		kept[nkept++].size = size;
		ret = 1;
	}
	pthread_mutex_unlock(&keep_lock);
	return ret;
}

void iotap_buf_keep(int n)
{
	void *drop[KEEP_MAX];
	size_t dsize[KEEP_MAX];
	unsigned int nd = 0, i;
	int cap;

	pthread_mutex_lock(&keep_lock);
	cap = (int)keep_cap + n;
	keep_cap = cap < 0 ? 0 : cap > KEEP_MAX ? KEEP_MAX : (unsigned int)cap;
	while (nkept > keep_cap) {
		nkept--;
		drop[nd] = kept[nkept].p;
		dsize[nd++] = kept[nkept].size;
	}
	pthread_mutex_unlock(&keep_lock);
	for (i = 0; i < nd; i++)
		munmap(drop[i], dsize[i]);
}

void *iotap_buf_alloc(size_t *size)
{
	size_t n = buf_round(*size ? *size : 1);
	uint8_t *m, *p;

	if (n < *size)
		return NULL;	/* overflow */
	if (n < IOTAP_BUF_HUGE) {
		p = malloc(n);
		if (p)
			*size = n;
		return p;
	}
	if (keep_cap && (p = keep_take(&n))) {
		*size = n;
		return p;
	}
	/* map an extent more, keep the aligned part */
	m = mmap(NULL, n + HUGE_EXTENT, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	p = (uint8_t *)(((uintptr_t)m + HUGE_EXTENT - 1) & ~(uintptr_t)(HUGE_EXTENT - 1));
	if (p > m)
		munmap(m, (size_t)(p - m));
	munmap(p + n, (size_t)(m + HUGE_EXTENT - p));
#ifdef MADV_HUGEPAGE
	madvise(p, n, MADV_HUGEPAGE);	/* a hint: without huge pages, 4 KiB pages */
#endif
	*size = n;
	return p;
}

void iotap_buf_free(void *p, size_t size)
{
	if (!p)
		return;
	if (size >= IOTAP_BUF_HUGE) {
		if (!keep_cap || !keep_put(p, size))
			munmap(p, size);
	}
	else
		free(p);
}

void *iotap_buf_grow(void *p, size_t *size, size_t used, size_t want)
{
	size_t n = want;
	void *q = iotap_buf_alloc(&n);

	if (!q)
		return NULL;
	if (used)
		memcpy(q, p, used);
	iotap_buf_free(p, *size);
	*size = n;
	return q;
}

void *iotap_buf_regrow(void *p, size_t *size, size_t want)
{
	void *q;

	/*
	 * Small to small: realloc, which moves a mapped block with mremap()
	 * and so keeps its touched pages (freeing and allocating afresh would
	 * fault them in again); a heap block it copies, a few KiB.
	 */
	if (want < IOTAP_BUF_HUGE && (!p || *size < IOTAP_BUF_HUGE)) {
		q = realloc(p, want ? want : 1);
		if (!q) {
			free(p);
			*size = 0;
			return NULL;
		}
		*size = want ? want : 1;
		return q;
	}
	iotap_buf_free(p, *size);
	*size = want;
	q = iotap_buf_alloc(size);
	if (!q)
		*size = 0;
	return q;
}
