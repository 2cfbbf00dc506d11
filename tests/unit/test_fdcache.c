// SPDX-License-Identifier: MIT
/*
 * test_fdcache.c - fs/inode.c's fd cache under contention: the
 * compare-and-swap protocol between borrowers and the evictor
 *
 * inode->fdstate packs an inode's cached O_PATH fd and its borrower count
 * in one word. A borrower takes the fd with one CAS (count + 1) and gives
 * it back with one decrement; the evictor, walking the CLOCK ring under
 * the cache lock, may close an fd only by CAS-ing a state with zero
 * borrowers to 0. Exactly one of two racing CASes wins, so an fd in use is
 * never closed.
 *
 * Here four threads borrow the fds of 24 files through a 3-entry cache,
 * so nearly every borrow of one thread evicts what another just used.
 * Each holds its fd across a yield and checks, before and after, that it
 * still names its own file (fstat st_ino): an fd closed under a borrower
 * fails that check, either as EBADF or as another file's fd reusing the
 * number. At the end every borrower count is 0, at most 3 fds are cached,
 * the cache really evicted and overflowed to private fds, and after the
 * table is destroyed no descriptor is left open. Tried while writing it:
 * the evictor's CAS replaced by a plain store fails checks 7-8 (a few
 * fds closed under their borrowers per run), the borrower's CAS replaced
 * by a plain store fails 7, 8, 10 and 12 by the thousands.
 *
 * Needs root (open_by_handle_at wants CAP_DAC_READ_SEARCH) and a backing
 * file system with file handles: otherwise the test is skipped.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"
#include "fs_i.h"

#define NFILES		24
#define CACHE		3
#define NTHREADS	4
#define ITER		150000

static struct fs_ctx fs;
static struct fs_inode *inodes[NFILES];
static atomic_uint wrong_file, bad_fd, borrow_err;
static atomic_uint_fast64_t borrows;

static unsigned int count_fds(void)
{
	unsigned int n = 0;
	struct dirent *e;
	DIR *d = opendir("/proc/self/fd");

	if (!d)
		return 0;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1;		/* the DIR's own */
}

/* @fd still names inode @i's file. */
static void check_fd(int fd, unsigned int i)
{
	struct stat st;

	if (fstat(fd, &st))
		atomic_fetch_add(&bad_fd, 1);
	else if (st.st_ino != inodes[i]->ino || st.st_dev != inodes[i]->dev)
		atomic_fetch_add(&wrong_file, 1);
}

static void *borrower(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg * 2654435761u + 1, k;

	urcu_memb_register_thread();
	for (k = 0; k < ITER; k++) {
		unsigned int i = (unsigned int)rand_r(&seed) % NFILES;
		struct fs_fdref ref;

		if (fs_inode_fd(&fs, inodes[i], &ref)) {
			atomic_fetch_add(&borrow_err, 1);
			continue;
		}
		check_fd(ref.fd, i);
		if (!(k & 3))
			sched_yield();	/* let the others evict meanwhile */
		check_fd(ref.fd, i);
		fs_fdref_put(&ref);
		atomic_fetch_add_explicit(&borrows, 1, memory_order_relaxed);
	}
	urcu_memb_unregister_thread();
	return NULL;
}

int main(void)
{
	char dir[] = "/tmp/iotap-test-fdcache.XXXXXX", name[32];
	pthread_t t[NTHREADS];
	unsigned int i, users = 0, cached = 0, fds0;
	int ret;

	if (geteuid() != 0) {
		printf("1..0 # SKIP open_by_handle_at needs root\n");
		return 0;
	}
	if (!mkdtemp(dir)) {
		printf("Bail out! no temporary directory\n");
		return 1;
	}
	fds0 = count_fds();
	urcu_memb_register_thread();
	fs_log_level = FS_LOG_ERR;
	fs.backing = dir;
	fs.o.fd_cache = CACHE;
	fs.root_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ok(fs.root_fd >= 0, "open the backing directory");
	ret = fs_itable_init(&fs);
	ok(!ret, "fs_itable_init with a %u-entry fd cache", CACHE);
	ret = ret ? ret : fs_inode_root_init(&fs);
	ok(!ret, "fs_inode_root_init");
	if (ret || !fs.handles) {
		printf("# SKIP %s has no usable file handles\n", dir);
		goto out;
	}
	for (i = 0; i < NFILES; i++) {
		struct stat st;
		int fd;

		snprintf(name, sizeof(name), "f%u", i);
		fd = openat(fs.root_fd, name, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
		if (fd < 0 || fstat(fd, &st))
			break;
		close(fd);
		fd = openat(fs.root_fd, name, O_PATH | O_CLOEXEC);
		if (fs_inode_get(&fs, &st, fd, -1, &inodes[i]))
			break;
	}
	ok(i == NFILES, "%u files, each an inode held by its handle", NFILES);
	if (i < NFILES)
		goto out;

	for (i = 0; i < NTHREADS; i++)
		pthread_create(&t[i], NULL, borrower, (void *)(uintptr_t)i);
	for (i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);

	ok(!borrow_err, "every borrow succeeded (%u failed)", atomic_load(&borrow_err));
	ok(atomic_load(&borrows) == (uint64_t)NTHREADS * ITER, "%u threads borrowed %u times each",
	   NTHREADS, ITER);
	ok(!bad_fd, "no borrowed fd was closed under its borrower (%u EBADF)",
	   atomic_load(&bad_fd));
	ok(!wrong_file, "no borrowed fd changed file under its borrower (%u)",
	   atomic_load(&wrong_file));
	for (i = 0; i < NFILES; i++) {
		uint64_t s = inodes[i]->fdstate;

		users += (uint32_t)s;
		cached += (s >> 32) != 0;
	}
	ok(!users, "every borrower count is back to 0 (%u left)", users);
	ok(cached <= CACHE, "%u fds cached, at most %u", cached, CACHE);
	ok(fs.fdc.evictions > 0, "the CLOCK hand evicted (%llu times)",
	   (unsigned long long)fs.fdc.evictions);
	diag("%llu misses, %llu evictions, %llu overflows to private fds",
	     (unsigned long long)fs.fdc_misses, (unsigned long long)fs.fdc.evictions,
	     (unsigned long long)fs.fdc.overflows);
out:
	fs_itable_destroy(&fs);
	if (fs.root_fd >= 0)
		close(fs.root_fd);
	ok(count_fds() == fds0, "no descriptor left open (%u before, %u after)", fds0,
	   count_fds());
	urcu_memb_unregister_thread();
	snprintf(name, sizeof(name), "rm -rf %s", dir);
	if (system(name))
		diag("could not remove %s", dir);
	return done_testing();
}
