// SPDX-License-Identifier: MIT
/*
 * dedup_compact.c - the dedup model's expiry and compaction phases
 * (dedup.c's header comment says what each does)
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dedup_i.h"

/* --- expiry and compaction ------------------------------------------------------ */

/* A phase a flavor runs itself: @fn between the markers. */
static int flavor_phase(struct dd_run *run, const char *name,
			struct iotap_workload_phase_result *pr, int (*fn)(struct dd_run *))
{
	int ret;

	dd_phase_begin(run, &run->span, name, run->ncont, 0);
	ret = fn(run);
	wl_phase_end(run->c, &run->span, pr, ret != 0);
	return ret;
}

int dd_expire(struct dd_run *run)
{
	struct iotap_workload_dedup_result *r = run->r;
	struct iotap_workload_ctx *c = run->c;
	unsigned int g, i;
	int ret = 0;

	if (run->cfg.fl->expire)
		return flavor_phase(run, "expire", &r->expire, run->cfg.fl->expire);
	dd_phase_begin(run, &run->span, "expire", (uint64_t)run->o->expire * run->o->streams, 0);
	for (g = 0; !ret && g < run->o->expire; g++) {
		for (i = 0; !ret && i < run->o->streams; i++) {
			struct dd_entry *m;
			char name[48];
			uint64_t n, k;

			if (wl_stopped()) {
				ret = -EINTR;
				break;
			}
			ret = dd_map_read(run, i, g, &m, &n);
			for (k = 0; !ret && k < n; k++) {
				struct dd_fp fp = { m[k].lo, m[k].hi };
				struct dd_seg *sg = NULL;
				int64_t si;

				pthread_mutex_lock(&run->lock);
				si = dd_seg_find(run, &fp);
				if (si >= 0 && run->seg[si].refs && !--run->seg[si].refs) {
					sg = &run->seg[si];
					run->cont[sg->cont].live -= sg->len;
					r->dead_segments++;
					r->dead_bytes += sg->len;
				}
				pthread_mutex_unlock(&run->lock);
				if (sg)
					ret = dd_index_update(&run->ix, &fp, NULL);
			}
			free(m);
			if (ret)
				break;
			dd_map_name(name, sizeof(name), i, g);
			ret = wl_unlink(c, run->maps_fd, run->maps_ino, name, 0);
			if (!ret)
				r->expired_images++;
			wl_phase_unit(c, &run->span, 0, 0);
		}
	}
	if (!ret)
		ret = dd_index_flush(&run->ix);
	wl_phase_end(c, &run->span, &r->expire, ret != 0);
	return ret;
}

/* Rewrite container @id's live segments into a new container; unlink the old. */
static int repack(struct dd_run *run, uint32_t id, uint8_t *in, uint8_t *out)
{
	struct iotap_workload_dedup_result *r = run->r;
	struct iotap_workload_ctx *c = run->c;
	struct wl_file old = { .fd = -1 }, nf = { .fd = -1 };
	char oname[32], tname[32], nname[32];
	struct dd_cont *ct;
	uint64_t size, got = 0, fill = 0, woff = 0;
	uint32_t nid, k;
	int ret;

	pthread_mutex_lock(&run->lock);
	ret = dd_cont_new(run, &nid);
	ct = &run->cont[id];
	size = ct->size;
	pthread_mutex_unlock(&run->lock);
	if (ret)
		return ret;
	dd_cont_name(oname, sizeof(oname), id, "bin");
	dd_cont_name(tname, sizeof(tname), nid, "tmp");
	dd_cont_name(nname, sizeof(nname), nid, "bin");
	ret = wl_open(c, &old, run->data_fd, run->data_ino, oname, O_RDONLY, 0);
	if (ret)
		goto out;
	ret = wl_open(c, &nf, run->data_fd, run->data_ino, tname, O_WRONLY | O_CREAT | O_EXCL,
		      0644);
	if (ret)
		goto out;
	while (got < size) {
		size_t want = size - got < DD_IO_MAX ? size - got : DD_IO_MAX;
		ssize_t n = wl_pread(c, &old, in + got, want, got);

		if (n <= 0) {
			ret = n < 0 ? (int)n : wl_fail(c, -ENODATA, "read '%s': end of file", oname);
			goto out;
		}
		got += (uint64_t)n;
		r->compact_read += (uint64_t)n;
	}
	/* live segments in file order, out in DD_IO_MAX writes */
	for (k = 0; k < ct->nseg; k++) {
		struct dd_seg *sg = &run->seg[ct->segs[k]];
		struct dd_fp fp;

		if (!sg->refs)
			continue;
		dd_hash(in + sg->off, sg->len, &fp);
		if (fp.lo != sg->fp.lo || fp.hi != sg->fp.hi) {
			ret = wl_fail(c, -EIO, "container %08x at %u: the segment is not what was "
				      "stored", id, sg->off);
			goto out;
		}
		if (fill + sg->len > DD_IO_MAX && fill) {
			ret = wl_write_full(c, &nf, out, fill);
			if (ret)
				goto out;
			r->compact_written += fill;
			fill = 0;
		}
		memcpy(out + fill, in + sg->off, sg->len);
		fill += sg->len;
	}
	if (fill) {
		ret = wl_write_full(c, &nf, out, fill);
		if (ret)
			goto out;
		r->compact_written += fill;
	}
	ret = wl_fsync(c, &nf, 0);
	if (ret)
		goto out;
	ret = wl_close(c, &nf);
	if (ret)
		goto out;
	ret = wl_rename(c, run->data_fd, run->data_ino, tname, run->data_fd, run->data_ino, nname);
	if (ret)
		goto out;
	/* the moved segments: their new home, in the table and the index */
	for (k = 0; k < ct->nseg && !ret; k++) {
		struct dd_seg *sg = &run->seg[ct->segs[k]];
		struct dd_entry e;

		if (!sg->refs)
			continue;
		pthread_mutex_lock(&run->lock);
		sg->cont = nid;
		sg->off = (uint32_t)woff;
		ret = dd_seg_add_to(run, nid, ct->segs[k]);
		pthread_mutex_unlock(&run->lock);
		woff += sg->len;
		memset(&e, 0, sizeof(e));
		e.lo = sg->fp.lo;
		e.hi = sg->fp.hi;
		e.cont = nid;
		e.off = sg->off;
		e.len = sg->len;
		if (!ret)
			ret = dd_index_update(&run->ix, &sg->fp, &e);
	}
	if (ret)
		goto out;
	wl_close(c, &old);
	ret = wl_unlink(c, run->data_fd, run->data_ino, oname, 0);
	if (ret)
		goto out;
	pthread_mutex_lock(&run->lock);
	run->cont[nid].size = woff;
	run->cont[nid].state = CONT_CLOSED;
	run->cont[id].state = CONT_GONE;
	pthread_mutex_unlock(&run->lock);
	r->containers_rewritten++;
	r->compact_freed += size - woff;
out:
	if (old.fd >= 0)
		wl_close(c, &old);
	if (nf.fd >= 0)
		wl_close(c, &nf);
	return ret;
}

int dd_compact(struct dd_run *run)
{
	struct iotap_workload_dedup_result *r = run->r;
	struct iotap_workload_ctx *c = run->c;
	uint8_t *in = NULL, *out = NULL;
	uint32_t id, n;
	int ret = 0;

	if (run->cfg.fl->compact) {
		ret = flavor_phase(run, "compact", &r->compact, run->cfg.fl->compact);
		r->compact.bytes = r->compact_read + r->compact_written;
		return ret;
	}
	in = wl_buf_alloc(run->o->container_bytes);
	out = wl_buf_alloc(DD_IO_MAX + run->cfg.max_seg);
	if (!in || !out) {
		ret = -ENOMEM;
		goto out;
	}
	n = run->ncont;
	dd_phase_begin(run, &run->span, "compact", n, 0);
	for (id = 0; id < n && !ret; id++) {
		struct dd_cont *ct = &run->cont[id];
		char name[32];

		if (wl_stopped()) {
			ret = -EINTR;
			break;
		}
		if (ct->state != CONT_CLOSED || ct->live == ct->size)
			continue;
		if (!ct->live) {
			dd_cont_name(name, sizeof(name), id, "bin");
			ret = wl_unlink(c, run->data_fd, run->data_ino, name, 0);
			if (ret)
				break;
			ct->state = CONT_GONE;
			r->containers_removed++;
			r->compact_freed += ct->size;
		} else if ((double)(ct->size - ct->live) >=
			   run->o->compact_threshold * (double)ct->size) {
			ret = repack(run, id, in, out);
		}
		wl_phase_unit(c, &run->span, 0, 0);
	}
	if (!ret && (r->containers_removed || r->containers_rewritten))
		ret = wl_fsync_dir(c, run->data_fd, run->data_ino);
	if (!ret)
		ret = dd_index_flush(&run->ix);
	wl_phase_end(c, &run->span, &r->compact, ret != 0);
	r->compact.bytes = r->compact_read + r->compact_written;
out:
	free(in);
	free(out);
	return ret;
}
