// SPDX-License-Identifier: MIT
/*
 * inode.c - the inode table: file handles in a cds_lfht, a bounded fd cache
 *
 * libfuse's passthrough examples pin one O_PATH fd per inode the kernel
 * knows, and die with EMFILE near RLIMIT_NOFILE while bonnie++ -n 256
 * creates 262,144 files. Here an inode is held by its file handle
 * (name_to_handle_at) and reopened with open_by_handle_at relative to the
 * backing root fd when an fd is needed; O_PATH fds live in a bounded
 * cache. Only when the backing fs has no handles (EOPNOTSUPP), or is
 * itself FUSE (handles of evicted nodes go stale without export support),
 * the daemon lacks CAP_DAC_READ_SEARCH, or an inode sits on another
 * filesystem below the backing dir, the inode keeps a pinned O_PATH fd
 * (passthrough_ll's way), with a warning in the log.
 *
 * Table. A liburcu lock-free resizable hash table (cds_lfht, memb flavour)
 * keyed by (st_dev, st_ino). Lookups and insertions run under
 * urcu_memb_read_lock() in registered worker threads (thread.c); there is
 * no global lock on the lookup path.
 *
 * Lifetime. nlookup counts the kernel's references (one per entry reply,
 * minus forgets). It is changed with atomic operations only, and a node
 * whose count reached 0 is dead: the match function ignores it, so a
 * concurrent lookup of the same (dev, ino) inserts a fresh node next to it
 * (cds_lfht_add_unique never returns a dead node), and a node is never
 * revived. The forget that brings the count to 0 deletes the node, drops
 * its cached fd and frees it with urcu_memb_call_rcu(), so readers that
 * found it under the read lock never see freed memory. The kernel sends no
 * request for a node id after its last forget, so fs_ino() pointers held
 * by a request are always live.
 *
 * fd cache. inode->fdstate packs the cached fd and its borrower count in
 * one 64-bit word. Borrowing an installed fd is one CAS (the hot path, no
 * lock); returning it is one atomic decrement. Installing and evicting
 * take fdc.lock: a CLOCK hand walks a ring of inodes holding an fd, skips
 * (and clears) referenced ones and evicts the first whose borrower count
 * is 0 by CAS-ing its fdstate to 0 -- that CAS and the borrowers' CAS are
 * the pair that guarantees an fd in use is never closed. When every ring
 * entry is busy the borrower gets a private fd that fs_fdref_put() closes.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <linux/magic.h>
#include <string.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "fs_i.h"
#include "iotap_base.h"

#define FDSTATE_FD(s)		((int)((s) >> 32) - 1)
#define FDSTATE_USERS(s)	((uint32_t)(s))
#define FDSTATE_MAKE(fd, users)	(((uint64_t)((fd) + 1) << 32) | (uint32_t)(users))

/*
 * The identity of a backing object: (dev, ino) and, when held by handle,
 * the handle itself, which carries the inode generation. Inode numbers
 * are reused once a file is gone (and no fd of ours pins it), while the
 * kernel may still hold the dead file's node; without the generation a
 * new file would be taken for the dead one and inherit its stale handle.
 */
struct inode_key {
	uint64_t dev;
	uint64_t ino;
	const struct file_handle *fh;	/* NULL: match on (dev, ino) alone */
};

/* A handle buffer big enough for any filesystem. */
struct fs_handle_buf {
	struct file_handle fh;
	unsigned char bytes[MAX_HANDLE_SZ];
};

static unsigned long inode_hash(uint64_t dev, uint64_t ino)
{
	/* XXH3: consecutive inode numbers spread well */
	return (unsigned long)iotap_hash_u64x2(dev, ino);
}

static bool handle_equal(const struct file_handle *a, const struct file_handle *b)
{
	return a->handle_bytes == b->handle_bytes && a->handle_type == b->handle_type &&
	       !memcmp(a->f_handle, b->f_handle, a->handle_bytes);
}

static int inode_match(struct cds_lfht_node *node, const void *key)
{
	const struct fs_inode *inode = caa_container_of(node, struct fs_inode, node);
	const struct inode_key *k = key;

	if (inode->ino != k->ino || inode->dev != k->dev || !uatomic_read(&inode->nlookup))
		return 0;
	if (k->fh && inode->handle.handle_bytes)
		return handle_equal(&inode->handle, k->fh);
	return 1;
}

/* Take a kernel reference unless the inode is already dead. */
static bool inode_tryget(struct fs_inode *inode)
{
	unsigned long n = uatomic_read(&inode->nlookup);

	while (n) {
		/* Pairs with the decrement in fs_inode_forget(): 0 is final. */
		unsigned long old = uatomic_cmpxchg(&inode->nlookup, n, n + 1);

		if (old == n)
			return true;
		n = old;
	}
	return false;
}

static void inode_free(struct fs_inode *inode)
{
	free(inode);
}

static void inode_free_rcu(struct rcu_head *head)
{
	inode_free(caa_container_of(head, struct fs_inode, rcu));
}

/* --- fd cache --------------------------------------------------------- */

static int fdcache_init(struct fs_fdcache *c, unsigned int cap)
{
	memset(c, 0, sizeof(*c));
	c->ring = calloc(cap, sizeof(*c->ring));
	c->free = malloc(cap * sizeof(*c->free));
	if (!c->ring || !c->free) {
		free(c->ring);
		free(c->free);
		return -ENOMEM;
	}
	c->cap = cap;
	for (c->nfree = 0; c->nfree < cap; c->nfree++)
		c->free[c->nfree] = cap - 1 - c->nfree;
	pthread_mutex_init(&c->lock, NULL);
	return 0;
}

static void fdcache_release(struct fs_fdcache *c)
{
	pthread_mutex_destroy(&c->lock);
	free(c->ring);
	free(c->free);
	c->ring = NULL;
	c->free = NULL;
}

/* A free ring index, evicting an idle fd if needed; -1 if all are busy. Under c->lock. */
static int fdcache_slot(struct fs_fdcache *c)
{
	unsigned int n, idx;

	if (c->nfree)
		return c->free[--c->nfree];
	for (n = 0; n < 2 * c->cap; n++) {
		struct fs_inode *victim;
		uint64_t s;

		idx = c->hand;
		c->hand = idx + 1 == c->cap ? 0 : idx + 1;
		victim = c->ring[idx];
		if (uatomic_read(&victim->ref_bit)) {
			uatomic_set(&victim->ref_bit, 0);
			continue;
		}
		s = uatomic_read(&victim->fdstate);
		if (FDSTATE_USERS(s))
			continue;
		/*
		 * Pairs with the borrower's CAS in fs_inode_fd(): exactly one
		 * of them wins, so a borrowed fd is never closed here.
		 */
		if (uatomic_cmpxchg(&victim->fdstate, s, 0) != s)
			continue;
		close(FDSTATE_FD(s));
		victim->slot = -1;
		c->ring[idx] = NULL;
		c->evictions++;
		return idx;
	}
	c->overflows++;
	return -1;
}

/*
 * Install @fd (O_PATH, consumed) as @inode's cached fd. With @ref, also
 * borrow it (or hand @fd over privately when the cache is full of busy
 * fds). If another thread installed one first, @fd is closed and that
 * one is used.
 */
static void fdcache_install(struct fs_ctx *fs, struct fs_inode *inode, int fd,
			    struct fs_fdref *ref)
{
	struct fs_fdcache *c = &fs->fdc;
	uint64_t s;
	int slot;

	pthread_mutex_lock(&c->lock);
	s = uatomic_read(&inode->fdstate);
	if (FDSTATE_FD(s) >= 0) {
		/* Installed meanwhile; it cannot be evicted while we hold the lock. */
		if (ref) {
			uatomic_inc(&inode->fdstate);
			ref->fd = FDSTATE_FD(s);
			ref->inode = inode;
		}
		pthread_mutex_unlock(&c->lock);
		close(fd);
		return;
	}
	slot = fdcache_slot(c);
	if (slot < 0) {
		pthread_mutex_unlock(&c->lock);
		if (ref) {
			ref->fd = fd;
			ref->inode = NULL;
		} else {
			close(fd);
		}
		return;
	}
	c->ring[slot] = inode;
	inode->slot = slot;
	/*
	 * No borrower can exist while no fd is installed, and installers are
	 * serialized by c->lock, so a plain atomic store publishes the fd;
	 * borrowers pick it up with the CAS in fs_inode_fd().
	 */
	uatomic_set(&inode->fdstate, FDSTATE_MAKE(fd, ref ? 1 : 0));
	pthread_mutex_unlock(&c->lock);
	if (ref) {
		ref->fd = fd;
		ref->inode = inode;
	}
}

/* Close @inode's cached or pinned fd; the inode is dead (no borrowers). */
static void fdcache_drop(struct fs_ctx *fs, struct fs_inode *inode)
{
	struct fs_fdcache *c = &fs->fdc;
	uint64_t s;

	pthread_mutex_lock(&c->lock);
	if (inode->slot >= 0) {
		c->ring[inode->slot] = NULL;
		c->free[c->nfree++] = inode->slot;
		inode->slot = -1;
	}
	s = uatomic_xchg(&inode->fdstate, 0);
	pthread_mutex_unlock(&c->lock);
	if (FDSTATE_USERS(s)) {
		/* The kernel forgot a node a request still uses: leak, never close under it. */
		fs_log(FS_LOG_ERR, "bug: inode %llu forgotten with %u fd borrowers",
		       (unsigned long long)inode->ino, FDSTATE_USERS(s));
		return;
	}
	if (FDSTATE_FD(s) >= 0 && FDSTATE_FD(s) != fs->root_fd)
		close(FDSTATE_FD(s));
}

int fs_inode_fd(struct fs_ctx *fs, struct fs_inode *inode, struct fs_fdref *ref)
{
	uint64_t s;
	int fd;

	for (;;) {
		s = uatomic_read(&inode->fdstate);
		if (FDSTATE_FD(s) < 0)
			break;
		/* Pairs with the evictor's CAS in fdcache_slot(). */
		if (uatomic_cmpxchg(&inode->fdstate, s, s + 1) == s) {
			if (!CMM_LOAD_SHARED(inode->ref_bit))
				CMM_STORE_SHARED(inode->ref_bit, 1);
			ref->fd = FDSTATE_FD(s);
			ref->inode = inode;
			return 0;
		}
	}
	if (inode->pinned)
		return -EBADF;	/* a pinned fd is never taken away */
	fd = open_by_handle_at(fs->root_fd, &inode->handle, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	uatomic_inc(&fs->fdc_misses);
	fdcache_install(fs, inode, fd, ref);
	return 0;
}

void fs_fdref_put(struct fs_fdref *ref)
{
	if (!ref->inode) {
		if (ref->fd >= 0)
			close(ref->fd);
	} else {
		/*
		 * Our use of the fd happens before the count drops; pairs with
		 * the evictor's CAS, for which a zero count means evictable.
		 */
		cmm_smp_mb__before_uatomic_dec();
		uatomic_dec(&ref->inode->fdstate);
	}
	ref->fd = -1;
	ref->inode = NULL;
}

int fs_inode_open(struct fs_ctx *fs, struct fs_inode *inode, int flags)
{
	char proc[FS_PROCNAME_MAX];
	struct fs_fdref ref;
	int fd, ret;

	flags &= ~(O_CREAT | O_EXCL | O_NOCTTY | O_NOFOLLOW);
	flags |= O_CLOEXEC;
	if (inode->handle.handle_bytes) {
		fd = open_by_handle_at(fs->root_fd, &inode->handle, flags);
		return fd < 0 ? -errno : fd;
	}
	ret = fs_inode_fd(fs, inode, &ref);
	if (ret)
		return ret;
	fs_procname(proc, ref.fd);
	fd = open(proc, flags);
	ret = fd < 0 ? -errno : fd;
	fs_fdref_put(&ref);
	return ret;
}

/* --- lookup, insertion, forget ---------------------------------------- */

/*
 * The handle of the object behind @fd into @hb: 0, 1 when the inode is to
 * be held by a pinned fd instead (no usable handle), or -errno.
 */
static int inode_handle(struct fs_ctx *fs, const struct stat *st, int fd,
			struct fs_handle_buf *hb)
{
	int mount_id;

	if (!fs->handles || (uint64_t)st->st_dev != fs->root_dev)
		goto pin;
	hb->fh.handle_bytes = MAX_HANDLE_SZ;
	if (name_to_handle_at(fd, "", &hb->fh, &mount_id, AT_EMPTY_PATH) == 0)
		return 0;
	if (errno != EOPNOTSUPP && errno != EOVERFLOW)
		return -errno;
pin:
	if (!uatomic_xchg(&fs->warned_nohandle, 1))
		fs_log(FS_LOG_WARN, "inode %llu (dev %llu) has no usable file handle; holding "
		       "an fd per such inode, so RLIMIT_NOFILE bounds how many the kernel may know",
		       (unsigned long long)st->st_ino, (unsigned long long)st->st_dev);
	return 1;
}

/*
 * A new, unpublished inode for @st, held by @fh, or (@fh NULL) by a pinned
 * O_PATH fd: *@opath if set (consumed), else one reopened from @fd.
 */
static int inode_new(const struct stat *st, const struct file_handle *fh, int *opath,
		     int fd, struct fs_inode **out)
{
	struct fs_inode *inode;
	int pfd, ret;

	inode = calloc(1, sizeof(*inode) + (fh ? fh->handle_bytes : 0));
	if (!inode)
		return -ENOMEM;
	inode->ino = st->st_ino;
	inode->dev = st->st_dev;
	inode->nlookup = 1;
	inode->slot = -1;
	if (fh) {
		memcpy(&inode->handle, fh, sizeof(*fh) + fh->handle_bytes);
		*out = inode;
		return 0;
	}
	if (*opath >= 0) {
		pfd = *opath;
		*opath = -1;
	} else {
		char proc[FS_PROCNAME_MAX];

		fs_procname(proc, fd);
		/* follows the magic link to the file itself */
		pfd = open(proc, O_PATH | O_CLOEXEC);
		if (pfd < 0) {
			ret = -errno;
			free(inode);
			return ret;
		}
	}
	inode->pinned = 1;
	inode->fdstate = FDSTATE_MAKE(pfd, 0);
	*out = inode;
	return 0;
}

static void inode_discard(struct fs_ctx *fs, struct fs_inode *inode)
{
	uint64_t s = inode->fdstate;

	if (FDSTATE_FD(s) >= 0 && FDSTATE_FD(s) != fs->root_fd)
		close(FDSTATE_FD(s));
	inode_free(inode);
}

int fs_inode_get(struct fs_ctx *fs, const struct stat *st, int opath, int anyfd,
		 struct fs_inode **out)
{
	struct inode_key key = { .dev = st->st_dev, .ino = st->st_ino };
	unsigned long hash = inode_hash(key.dev, key.ino);
	struct fs_inode *inode = NULL, *fresh = NULL;
	struct cds_lfht_iter iter;
	struct cds_lfht_node *node;
	struct fs_handle_buf hb;
	int ret;

	ret = inode_handle(fs, st, opath >= 0 ? opath : anyfd, &hb);
	if (ret < 0) {
		if (opath >= 0)
			close(opath);
		return ret;
	}
	key.fh = ret ? NULL : &hb.fh;

	urcu_memb_read_lock();
	cds_lfht_lookup(fs->itable, hash, inode_match, &key, &iter);
	node = cds_lfht_iter_get_node(&iter);
	if (node) {
		inode = caa_container_of(node, struct fs_inode, node);
		if (!inode_tryget(inode))
			inode = NULL;
	}
	urcu_memb_read_unlock();

	if (!inode) {
		ret = inode_new(st, key.fh, &opath, opath >= 0 ? opath : anyfd, &fresh);
		if (ret) {
			if (opath >= 0)
				close(opath);
			return ret;
		}
		urcu_memb_read_lock();
		for (;;) {
			node = cds_lfht_add_unique(fs->itable, hash, inode_match, &key,
						   &fresh->node);
			if (node == &fresh->node) {
				inode = fresh;
				fresh = NULL;
				break;
			}
			inode = caa_container_of(node, struct fs_inode, node);
			if (inode_tryget(inode))
				break;
			/* It died after matching; the next add_unique skips it. */
		}
		urcu_memb_read_unlock();
		if (fresh)
			inode_discard(fs, fresh);
		else
			uatomic_inc(&fs->ninodes);
	}

	if (opath >= 0) {
		/*
		 * Keep the lookup's O_PATH fd for directories and symlinks:
		 * they are the parents of the next lookups and readlink needs
		 * it. Regular files are reopened by handle with real flags.
		 */
		if (!S_ISREG(st->st_mode) && !inode->pinned &&
		    FDSTATE_FD(uatomic_read(&inode->fdstate)) < 0)
			fdcache_install(fs, inode, opath, NULL);
		else
			close(opath);
	}
	*out = inode;
	return 0;
}

void fs_inode_note_binding(struct fs_ctx *fs, uint64_t dev, uint64_t ino, uint64_t b,
			   uint32_t flags)
{
	struct inode_key key = { .dev = dev, .ino = ino, .fh = NULL };
	struct cds_lfht_iter iter;
	struct cds_lfht_node *node;

	urcu_memb_read_lock();
	cds_lfht_lookup(fs->itable, inode_hash(dev, ino), inode_match, &key, &iter);
	node = cds_lfht_iter_get_node(&iter);
	if (node)
		fs_binding_note(caa_container_of(node, struct fs_inode, node), b, flags);
	urcu_memb_read_unlock();
}

void fs_inode_ref(struct fs_inode *inode)
{
	uatomic_inc(&inode->nlookup);
}

void fs_inode_forget(struct fs_ctx *fs, struct fs_inode *inode, uint64_t n)
{
	unsigned long left;

	left = uatomic_sub_return(&inode->nlookup, n);
	if (left)
		return;
	if (inode == fs->root) {
		/* The kernel never forgets the root for good; keep it alive. */
		uatomic_inc(&inode->nlookup);
		return;
	}
	urcu_memb_read_lock();
	cds_lfht_del(fs->itable, &inode->node);
	urcu_memb_read_unlock();
	fdcache_drop(fs, inode);
	uatomic_dec(&fs->ninodes);
	/* Readers that found the node under the read lock may still look at it. */
	urcu_memb_call_rcu(&inode->rcu, inode_free_rcu);
}

/* --- setup and teardown ----------------------------------------------- */

int fs_itable_init(struct fs_ctx *fs)
{
	unsigned int cap = fs->o.fd_cache ? fs->o.fd_cache : FS_DEFAULT_FD_CACHE;
	int ret;

	ret = fdcache_init(&fs->fdc, cap);
	if (ret)
		return ret;
	fs->itable = cds_lfht_new_flavor(1024, 1024, 0,
					 CDS_LFHT_AUTO_RESIZE | CDS_LFHT_ACCOUNTING,
					 &urcu_memb_flavor, NULL);
	if (!fs->itable) {
		fdcache_release(&fs->fdc);
		return -ENOMEM;
	}
	return 0;
}

int fs_inode_root_init(struct fs_ctx *fs)
{
	struct fs_handle_buf hb;
	struct fs_inode *root;
	struct cds_lfht_node *node;
	struct inode_key key;
	struct statfs sfs;
	struct stat st;
	int mount_id, fd;

	if (fstat(fs->root_fd, &st) < 0 || fstatfs(fs->root_fd, &sfs) < 0)
		return -errno;
	fs->root_dev = st.st_dev;
	fs->handles = 0;
	hb.fh.handle_bytes = MAX_HANDLE_SZ;
	if (sfs.f_type == FUSE_SUPER_MAGIC) {
		/* without export support a FUSE fs cannot resolve an evicted node's handle */
		fs_log(FS_LOG_WARN, "'%s' is a FUSE filesystem, whose file handles may go stale; "
		       "holding one fd per inode", fs->backing);
	} else if (name_to_handle_at(fs->root_fd, "", &hb.fh, &mount_id, AT_EMPTY_PATH) == 0) {
		fd = open_by_handle_at(fs->root_fd, &hb.fh, O_PATH | O_CLOEXEC);
		if (fd >= 0) {
			close(fd);
			fs->handles = 1;
		} else {
			fs_log(FS_LOG_WARN, "open_by_handle_at on '%s' failed (%s); holding "
			       "one fd per inode instead of file handles", fs->backing,
			       strerror(errno));
		}
	} else {
		fs_log(FS_LOG_WARN, "'%s' does not support file handles (%s); holding one fd "
		       "per inode", fs->backing, strerror(errno));
	}
	if (!fs->handles) {
		fs->warned_nohandle = 1;
		hb.fh.handle_bytes = 0;
	}

	root = calloc(1, sizeof(*root) + hb.fh.handle_bytes);
	if (!root)
		return -ENOMEM;
	root->ino = st.st_ino;
	root->dev = st.st_dev;
	root->nlookup = 1;
	root->slot = -1;
	root->pinned = 1;
	root->fdstate = FDSTATE_MAKE(fs->root_fd, 0);
	memcpy(&root->handle, &hb.fh, sizeof(hb.fh) + hb.fh.handle_bytes);

	key.dev = root->dev;
	key.ino = root->ino;
	key.fh = root->handle.handle_bytes ? &root->handle : NULL;
	urcu_memb_read_lock();
	node = cds_lfht_add_unique(fs->itable, inode_hash(key.dev, key.ino), inode_match,
				   &key, &root->node);
	urcu_memb_read_unlock();
	assert(node == &root->node);
	(void)node;
	fs->root = root;
	fs->ninodes = 1;
	return 0;
}

struct fs_inode *fs_inode_find(struct fs_ctx *fs, uint64_t dev, uint64_t ino)
{
	struct inode_key key = { .dev = dev, .ino = ino, .fh = NULL };
	struct fs_inode *inode = NULL;
	struct cds_lfht_iter iter;
	struct cds_lfht_node *node;

	urcu_memb_read_lock();
	cds_lfht_lookup(fs->itable, inode_hash(dev, ino), inode_match, &key, &iter);
	node = cds_lfht_iter_get_node(&iter);
	if (node && inode_tryget(caa_container_of(node, struct fs_inode, node)))
		inode = caa_container_of(node, struct fs_inode, node);
	urcu_memb_read_unlock();
	return inode;
}

int fs_inode_name(struct fs_ctx *fs, uint64_t dev, uint64_t ino, char *buf, size_t size)
{
	struct fs_inode *inode = fs_inode_find(fs, dev, ino);
	char proc[FS_PROCNAME_MAX], path[PATH_MAX];
	size_t blen = strlen(fs->backing);
	struct fs_fdref ref;
	ssize_t n;
	int ret;

	if (!inode)
		return -ENOENT;
	ret = fs_inode_fd(fs, inode, &ref);
	if (!ret) {
		fs_procname(proc, ref.fd);
		n = readlink(proc, path, sizeof(path) - 1);
		fs_fdref_put(&ref);
		if (n < 0) {
			ret = -errno;
		} else {
			path[n] = '\0';
			if (blen == 1)
				blen = 0;
			if (!strncmp(path, fs->backing, blen) && path[blen] == '/')
				snprintf(buf, size, "%s", path + blen + 1);
			else if (!strcmp(path, fs->backing))
				snprintf(buf, size, ".");
			else
				snprintf(buf, size, "%s", path);
		}
	}
	fs_inode_forget(fs, inode, 1);
	return ret;
}

long fs_inode_collect(struct fs_ctx *fs, struct fs_inode ***out)
{
	struct cds_lfht_iter iter;
	struct fs_inode *inode, **v = NULL, **nv;
	size_t n = 0, cap = 0;
	bool oom = false;

	urcu_memb_read_lock();
	cds_lfht_for_each_entry(fs->itable, &iter, inode, node) {
		if (n == cap) {
			cap = cap ? 2 * cap : 256;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				oom = true;
				break;
			}
			v = nv;
		}
		if (inode_tryget(inode))
			v[n++] = inode;
	}
	urcu_memb_read_unlock();
	if (!oom) {
		*out = v;
		return (long)n;
	}
	/* out of memory half-way: give the references back */
	while (n)
		fs_inode_forget(fs, v[--n], 1);
	free(v);
	return -ENOMEM;
}

void fs_itable_destroy(struct fs_ctx *fs)
{
	struct cds_lfht_iter iter;
	struct fs_inode *inode;

	if (!fs->itable)
		return;
	/* No worker is left: every remaining node goes, fds closed now. */
	urcu_memb_read_lock();
	cds_lfht_for_each_entry(fs->itable, &iter, inode, node) {
		cds_lfht_del(fs->itable, &inode->node);
		fdcache_drop(fs, inode);
		urcu_memb_call_rcu(&inode->rcu, inode_free_rcu);
	}
	urcu_memb_read_unlock();
	urcu_memb_barrier();
	cds_lfht_destroy(fs->itable, NULL);
	fs->itable = NULL;
	fs->root = NULL;
	fdcache_release(&fs->fdc);
}
