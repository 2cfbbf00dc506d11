// SPDX-License-Identifier: MIT
/*
 * thread.c - per-worker state: RCU registration and the aligned I/O buffer
 *
 * libfuse starts its worker threads itself (fuse_session_loop_mt), so fs/
 * cannot register them with liburcu up front. Instead every request calls
 * fs_thread_get() (through fs_capture_start()), which on the thread's first
 * request registers it as a reader of the memb flavour and stores a
 * pointer in a pthread key whose destructor unregisters it. libfuse ends
 * workers with pthread_cancel() while they wait in read(2) on /dev/fuse,
 * i.e. never inside an RCU read-side critical section, and cancellation
 * runs key destructors, so every registration is undone.
 *
 * The state itself is thread-local storage, so getting it cannot fail.
 * The I/O buffer (reads, O_DIRECT writes, xattr values) is allocated on
 * first use and kept for the thread's life: no malloc per request.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "fs_i.h"

struct fs_thread_tls {
	struct fs_thread t;
	bool registered;
};

static __thread struct fs_thread_tls tls;
static pthread_key_t thread_key;

static void thread_destructor(void *arg)
{
	struct fs_thread_tls *s = arg;

	if (s->registered) {
		fs_stats_unregister(&s->t);
		urcu_memb_unregister_thread();
		s->registered = false;
	}
	free(s->t.iobuf);
	free(s->t.pend);
	free(s->t.arena);
	free(s->t.refs);
	memset(&s->t, 0, sizeof(s->t));
}

int fs_thread_init(void)
{
	int ret;

	ret = pthread_key_create(&thread_key, thread_destructor);
	return -ret;
}

struct fs_thread *fs_thread_get(void)
{
	if (caa_unlikely(!tls.registered)) {
		urcu_memb_register_thread();
		tls.registered = true;
		pthread_setspecific(thread_key, &tls);
		fs_stats_register(&tls.t);
	}
	return &tls.t;
}

void fs_thread_release(void)
{
	pthread_setspecific(thread_key, NULL);
	thread_destructor(&tls);
}

void *fs_thread_iobuf(struct fs_thread *t, size_t size)
{
	void *buf;

	if (caa_likely(t->iobuf && size <= t->iobuf_size))
		return t->iobuf;
	if (size < FS_MAX_IO)
		size = FS_MAX_IO;
	size = (size + FS_IO_ALIGN - 1) & ~(size_t)(FS_IO_ALIGN - 1);
	if (posix_memalign(&buf, FS_IO_ALIGN, size))
		return NULL;
	free(t->iobuf);
	t->iobuf = buf;
	t->iobuf_size = size;
	return buf;
}

bool fs_thread_ref_push(struct fs_thread *t, struct fs_inode *inode)
{
	if (t->nr_refs == t->refs_cap) {
		unsigned int cap = t->refs_cap ? 2 * t->refs_cap : 256;
		struct fs_inode **r = realloc(t->refs, cap * sizeof(*r));

		if (!r)
			return false;
		t->refs = r;
		t->refs_cap = cap;
	}
	t->refs[t->nr_refs++] = inode;
	return true;
}
