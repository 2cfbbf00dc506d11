// SPDX-License-Identifier: MIT
/*
 * recorder_switch.c - the recorder's files: a file's first records, its
 * close, the switch to the next file (rotation, start, stop) and the
 * flight recorder's save
 *
 * A switch is asked for by any thread (iotap_trace_recorder_switch(),
 * _save()) and carried out by the writer thread between two batches
 * (recorder.c's rcd_writer_main), so recording threads never see a file
 * change: they fill buffers, and the writer thread decides which file a
 * batch goes to. The rebind callback's records (iotap_trace_recorder_emit())
 * open the new file at its base, before every record it will get.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include <urcu/system.h>

#include "iotap_base.h"
#include "trace_i.h"
#include "recorder_i.h"

/* The file's first records: the NOTE about sampling, a baseline SAMPLE. */
void rcd_file_start(struct iotap_trace_recorder *r)
{
	if (r->note[0]) {
		struct iotap_trace_rec rec;

		memset(&rec, 0, sizeof(rec));
		rec.type = IOTAP_REC_NOTE;
		rec.time_ns = iotap_trace_now_ns();
		rec.name = r->note;
		rec.name_len = (uint32_t)strlen(r->note);
		rcd_append_own(r, &rec);
	}
	if (r->sampling)
		rcd_sample(r);		/* the baseline: counters are cumulative */
}

/* Close the current file with its END record; its losses stay counted. */
void rcd_close_file(struct iotap_trace_recorder *r)
{
	uint64_t end = iotap_trace_now_ns();
	int ret;

	if (!r->w)
		return;
	if (wr_max_time(r->w) > end)
		end = wr_max_time(r->w);
	rcd_publish(r);
	r->lost_write_base += wr_dropped(r->w);
	ret = wr_close_at(r->w, end);
	r->w = NULL;
	if (ret && !r->err)
		CMM_STORE_SHARED(r->err, ret);
	CMM_STORE_SHARED(r->file_bytes, 0);
}

/* @src with its clock bases moved to the instant @base (CLOCK_MONOTONIC ns). */
static void hdr_at(struct iotap_trace_header *hdr, const struct iotap_trace_header *src,
		   uint64_t base)
{
	*hdr = *src;
	if (hdr->mono_base_ns > base)
		hdr->real_base_ns -= hdr->mono_base_ns - base;
	hdr->mono_base_ns = base;
}

/* The rebind callback's records, into @w at @base (iotap_trace_recorder_emit()). */
static void rebind_into(struct iotap_trace_recorder *r, struct iotap_trace_writer *w,
			uint64_t base)
{
	if (!r->rebind)
		return;
	r->emit_w = w;
	r->emit_time = base;
	r->rebind(r->rebind_arg, r);
	r->emit_time = 0;
	r->emit_w = NULL;
}

/*
 * Carry out a switch (writer thread): everything recorded so far goes to
 * the current file, then the new file opens with a header whose base is
 * the promise just made, so every record it will get starts at or after
 * its base. A rotation (from a file) loses nothing: the records still in
 * flight go to the new file. A start (from no file) discards records that
 * began before it (ops in flight across a stop). If the new file cannot be
 * opened, nothing changes.
 */
void rcd_do_switch(struct iotap_trace_recorder *r, struct rcd_switch *sw)
{
	struct iotap_trace_writer *nw = NULL;
	struct iotap_trace_header hdr;
	uint64_t base;
	int from_file = r->w != NULL;

	rcd_batch(r, 1);
	if (sw->path) {
		base = from_file ? r->last_lw : iotap_trace_now_ns();
		hdr_at(&hdr, sw->hdr, base);
		sw->result = wr_open_level(&nw, sw->path, &hdr, sw->flags, r->zstd_level,
					   &r->perm);
		if (sw->result)
			return;
		rcd_close_file(r);
		r->w = nw;
		r->files++;
		wr_promise(r->w, base);
		r->floor = from_file ? 0 : base;
		rcd_file_start(r);
		rebind_into(r, r->w, base);
		rcd_publish(r);
	} else {
		rcd_close_file(r);
		sw->result = 0;
	}
}

/*
 * Write the flight recorder's window out (writer thread): everything
 * recorded so far goes into the ring, then @sw->path gets a header whose
 * base is the window's earliest record, the rebind callback's NAME
 * records at that base, the ring's chunks as they are, and an END. The
 * ring goes on untouched.
 */
void rcd_do_save(struct iotap_trace_recorder *r, struct rcd_switch *sw)
{
	struct iotap_trace_writer *fw = NULL;
	struct iotap_trace_header hdr;
	uint64_t base, end;

	rcd_batch(r, 1);
	base = wr_ring_start(r->w);
	if (!base)
		base = iotap_trace_now_ns();
	hdr_at(&hdr, sw->hdr, base);
	sw->result = wr_open_level(&fw, sw->path, &hdr, sw->flags, r->zstd_level, &r->perm);
	if (sw->result)
		return;
	wr_promise(fw, base);
	rebind_into(r, fw, base);
	sw->result = wr_save_ring(fw, r->w);
	end = iotap_trace_now_ns();
	if (wr_max_time(fw) > end)
		end = wr_max_time(fw);
	if (!sw->result)
		sw->result = wr_close_at(fw, end);
	else
		wr_close_at(fw, end);
}

/**
 * iotap_trace_recorder_emit - a record from the rebind callback
 * @r:   recorder, in its rebind callback (writer thread)
 * @rec: a NAME record (or any); its time_ns is replaced by the new file's
 *       base, so it comes before every record the file will hold
 */
void iotap_trace_recorder_emit(struct iotap_trace_recorder *r, const struct iotap_trace_rec *rec)
{
	struct iotap_trace_rec c;

	if (!r->emit_w || !r->emit_time)
		return;
	c = *rec;
	c.time_ns = r->emit_time;
	wr_append(r->emit_w, &c, 1);
}


/**
 * iotap_trace_recorder_switch - close the current file and go on in @path
 * @r:     recorder
 * @path:  the next file (created as iotap_trace_recorder_open does, with
 *         the recorder's permissions), or NULL to stop: close the current
 *         file and record nothing until the next switch
 * @hdr:   the new file's header (copied; its clock bases are moved to the
 *         instant of the switch)
 * @flags: IOTAP_TRACE_FORCE
 *
 * The writer thread collects every record made so far into the current
 * file, closes it with its END record, opens @path and calls the rebind
 * callback (opts.rebind), whose iotap_trace_recorder_emit() records go
 * first. A switch from one file to the next (a rotation) loses and
 * doubles nothing; one from no file (a start) keeps only records that
 * begin after it. Blocks until done (one writer-thread wake-up).
 * Context: any thread but the writer's; switches are serialised.
 * Return: 0, or -errno of creating @path (-EEXIST without
 * IOTAP_TRACE_FORCE; -ETXTBSY when @path is a live trace, the current file
 * included): the current file then goes on untouched.
 */
static int rcd_request(struct iotap_trace_recorder *r, int save, const char *path,
		       const struct iotap_trace_header *hdr, unsigned int flags)
{
	struct rcd_switch sw = { .save = save, .path = path, .hdr = hdr, .flags = flags };
	struct iotap_trace_header def;

	if (!r)
		return -EINVAL;
	if (path && !hdr) {
		iotap_trace_header_init(&def, IOTAP_SOURCE_UNKNOWN);
		sw.hdr = &def;
	}
	pthread_mutex_lock(&r->ctl_lock);
	pthread_mutex_lock(&r->wake_lock);
	r->sw = &sw;
	pthread_cond_signal(&r->wake);
	while (!sw.done)
		pthread_cond_wait(&r->sw_done, &r->wake_lock);
	pthread_mutex_unlock(&r->wake_lock);
	pthread_mutex_unlock(&r->ctl_lock);
	return sw.result;
}

int iotap_trace_recorder_switch(struct iotap_trace_recorder *r, const char *path,
				const struct iotap_trace_header *hdr, unsigned int flags)
{
	if (r && r->ring)
		return -EALREADY;	/* a flight recorder has no file to switch */
	return rcd_request(r, 0, path, hdr, flags);
}

/**
 * iotap_trace_recorder_save - write a flight recorder's window to @path
 * @r:     a recorder opened with opts.ring_bytes
 * @path:  the file, created as a switch's (IOTAP_TRACE_FORCE in @flags)
 * @hdr:   its header; the clock bases are moved to the window's start
 *
 * The file is a complete trace: header, the rebind callback's NAME
 * records, the ring's chunks (the last opts.ring_bytes of compressed
 * trace, the newest included), END. The ring goes on.
 * Return: 0, -EINVAL (not a flight recorder), or -errno of the file.
 */
int iotap_trace_recorder_save(struct iotap_trace_recorder *r, const char *path,
			      const struct iotap_trace_header *hdr, unsigned int flags)
{
	if (!r || !r->ring || !path)
		return -EINVAL;
	return rcd_request(r, 1, path, hdr, flags);
}

