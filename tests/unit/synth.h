/* SPDX-License-Identifier: MIT */
/*
 * synth.h - synthetic traces with known timing, for report tests and benches
 *
 * A trace is described by a script, one phase per line:
 *
 *	NAME KIND key=value...
 *
 * KIND is one of
 *	seqwrite seqread   sequential requests of bs bytes on one file
 *	strided            reads of bs bytes every stride bytes (each one a seek)
 *	rewrite            read bs, write the same bs back (bonnie's Rewrite)
 *	randrw             random bs-aligned reads, wpct% of them followed by
 *	                   a rewrite of the block (bonnie's seeks)
 *	create stat unlink n files: create+flush+release / lookup+getattr /
 *	                   unlink (bonnie's file tests)
 *	mixed              a cycle of the above, for the benchmark
 *	idle               nothing for dur seconds (devbusy=1: the device works)
 *
 * keys (defaults in brackets):
 *	ops=N [1000]        requests (n=N for the file kinds: files)
 *	rate=R [1000]       requests started per second, evenly spaced
 *	bs=B [8192]         request size, bytes
 *	lat=US [50]         duration of each request, microseconds
 *	jitter=PCT [0]      latency uniformly in lat*(1 +- PCT/100) (seeded)
 *	spread=US [0]       latency lat + (i * 7919 % 1000) * spread / 1000: every
 *	                    1000 requests take each of 1000 evenly spaced values once,
 *	                    so every percentile is known exactly
 *	stride=B [65536]    strided: distance between request starts
 *	fsync=K [0]         seqwrite: an fsync after every K-th write
 *	outlier=US every=K  every K-th request takes US microseconds instead
 *	threads=T [1]       requests round-robin over T thread ids
 *	file=ID [1]         file id of the data kinds (randrw: files ID..ID+T-1)
 *	size=B [64 MiB]     randrw: file size the offsets fall in
 *	wpct=P [10]         randrw: share of blocks rewritten
 *	slow=F at=X [1, 1]  after fraction X of the phase, requests start F
 *	                    times further apart (seed 002's initialising array)
 *	dur=S               idle: seconds
 *	devread=P [100]     percent of the read bytes the device sees
 *	cpu=P [10]          CPU% of the marking process during the phase
 *
 * Flags to synth_write(): SYNTH_NO_MARKS leaves the PHASE markers out (the
 * report must find the phases), SYNTH_SAMPLES adds a SAMPLE record every
 * 100 ms with device and CPU counters consistent with the requests.
 *
 * synth_write() fills @bounds with the true start time of each phase in
 * seconds from the trace start (header mono_base_ns) so tests can check
 * automatic phase detection. Everything is static: each user is one
 * program.
 */
#ifndef IOTAP_SYNTH_H
#define IOTAP_SYNTH_H

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iotap_trace.h"

#define SYNTH_NO_MARKS	(1u << 0)
#define SYNTH_SAMPLES	(1u << 1)
#define SYNTH_LOST	(1u << 2)	/* a LOST record of 5 in the middle of phase 0 */
#define SYNTH_NO_END	(1u << 3)	/* no END marker after the last phase (iotap mark's way) */

#define SYNTH_BASE_NS	1000000000000ull	/* header mono_base_ns */
#define SYNTH_START_NS	(SYNTH_BASE_NS + 1000000000ull)	/* first phase starts 1 s in */
#define SYNTH_SAMPLE_NS	100000000ull

struct synth_phase {
	char name[64];
	char kind[16];
	uint64_t ops, rate, bs, lat_us, jitter, outlier_us, every, threads, file, size;
	uint64_t wpct, devread, cpu, devbusy, spread, stride, fsync;
	double slow, at, dur;
};

struct synth {
	struct iotap_trace_writer *w;
	uint64_t rng;
	int err;
	unsigned int flags;
	uint64_t records;
	/* samples */
	uint64_t next_sample;
	struct iotap_trace_sample smp;
	uint64_t dev_rd_pending, dev_wr_pending;	/* bytes since the last sample */
	uint64_t dev_busy_until;
	uint64_t cpu_ns;			/* marking process CPU, cumulative */
	uint64_t cpu_rate;			/* CPU ns per wall ns, x1000 */
	uint64_t devread;
	uint64_t off[256];			/* next offset per file id (mod 256) */
	uint64_t next_file;			/* file kinds: next file id */
};

static inline uint64_t synth_rng(uint64_t *s)
{
	uint64_t z = (*s += 0x9E3779B97F4A7C15ull);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static int synth_put(struct synth *s, const struct iotap_trace_rec *r)
{
	int ret;

	if (s->err)
		return s->err;
	ret = iotap_trace_writer_append(s->w, r);
	if (ret)
		s->err = ret;
	s->records++;
	return ret;
}

/* Emit every sample due before @t. */
static void synth_samples_until(struct synth *s, uint64_t t)
{
	struct iotap_trace_rec r;

	if (!(s->flags & SYNTH_SAMPLES))
		return;
	while (s->next_sample <= t) {
		uint64_t ts = s->next_sample, busy_ms = 0;

		s->smp.dev_major = 8;
		s->smp.dev_minor = 0;
		if (s->dev_rd_pending || s->dev_wr_pending || s->dev_busy_until >= ts)
			busy_ms = 100;
		s->smp.rd_sectors += s->dev_rd_pending / 512;
		s->smp.rd_ios += s->dev_rd_pending / 65536 + !!s->dev_rd_pending;
		s->smp.wr_sectors += s->dev_wr_pending / 512;
		s->smp.wr_ios += s->dev_wr_pending / 65536 + !!s->dev_wr_pending;
		if (s->dev_busy_until >= ts && !s->dev_wr_pending) {
			s->smp.wr_sectors += 20000;	/* 10 MB per 100 ms of writeback */
			s->smp.wr_ios += 80;
		}
		s->smp.io_ticks_ms += busy_ms;
		s->smp.queue_ms += busy_ms * 2;
		s->smp.proc_user_ns += 2000000;
		s->smp.proc_sys_ns += 3000000;
		s->smp.sys_user_ns += 10000000;
		s->smp.sys_sys_ns += 10000000;
		s->smp.sys_idle_ns += 170000000;
		s->dev_rd_pending = s->dev_wr_pending = 0;
		memset(&r, 0, sizeof(r));
		r.type = IOTAP_REC_SAMPLE;
		r.time_ns = ts;
		r.sample = s->smp;
		synth_put(s, &r);
		s->next_sample += SYNTH_SAMPLE_NS;
	}
}

static void synth_op(struct synth *s, unsigned int op, uint64_t t, uint64_t dur, uint32_t tid,
		     uint64_t file, uint64_t off, uint64_t len, int64_t res)
{
	struct iotap_trace_rec r;

	synth_samples_until(s, t);
	memset(&r, 0, sizeof(r));
	r.type = IOTAP_REC_OP;
	r.op = (uint16_t)op;
	r.time_ns = t;
	r.dur_ns = dur;
	r.tid = tid;
	r.pid = tid;
	r.file = file;
	r.fh = file;
	r.offset = off;
	r.length = len;
	r.result = res;
	if (op == IOTAP_OP_READ && res > 0)
		s->dev_rd_pending += (uint64_t)res * s->devread / 100;
	else if (op == IOTAP_OP_WRITE && res > 0)
		s->dev_wr_pending += (uint64_t)res;
	synth_put(s, &r);
}

static void synth_name(struct synth *s, uint64_t t, uint64_t file, const char *name)
{
	struct iotap_trace_rec r;

	memset(&r, 0, sizeof(r));
	r.type = IOTAP_REC_NAME;
	r.time_ns = t;
	r.file = file;
	r.file2 = 0;
	r.mode = 0100644;
	r.name = name;
	r.name_len = (uint32_t)strlen(name);
	synth_put(s, &r);
}

static void synth_mark(struct synth *s, uint64_t t, const char *name)
{
	struct iotap_trace_rec r;

	synth_samples_until(s, t);
	if (s->flags & SYNTH_NO_MARKS)
		return;
	memset(&r, 0, sizeof(r));
	r.type = IOTAP_REC_PHASE;
	r.flags = IOTAP_PHASE_BEGIN;
	r.time_ns = t;
	r.tid = r.pid = 1;
	r.offset = s->cpu_ns * 2 / 5;		/* user */
	r.length = s->cpu_ns - r.offset;	/* system */
	r.name = name;
	r.name_len = (uint32_t)strlen(name);
	synth_put(s, &r);
}

static uint64_t synth_lat(struct synth *s, const struct synth_phase *p, uint64_t i)
{
	uint64_t l = p->lat_us * 1000;

	if (p->every && p->outlier_us && i % p->every == p->every - 1)
		return p->outlier_us * 1000;
	if (p->spread)
		l += (i * 7919 % 1000) * p->spread;	/* spread us / 1000 steps = ns */
	if (p->jitter) {
		double u = (double)(synth_rng(&s->rng) >> 11) / 9007199254740992.0;

		l = (uint64_t)((double)l * (1.0 + (2 * u - 1) * (double)p->jitter / 100.0));
	}
	return l;
}

/* Start time of request @i of @p, which starts at @t0. */
static uint64_t synth_when(const struct synth_phase *p, uint64_t t0, uint64_t i)
{
	double gap = 1e9 / (double)p->rate, x = (double)i, k = p->at * (double)p->ops;

	if (p->slow > 1 && x > k)
		return t0 + (uint64_t)(k * gap + (x - k) * gap * p->slow);
	return t0 + (uint64_t)(x * gap);
}

/* Length of @p in ns when it starts requests at its rate. */
static uint64_t synth_span(const struct synth_phase *p)
{
	if (!strcmp(p->kind, "idle"))
		return (uint64_t)(p->dur * 1e9);
	return synth_when(p, 0, p->ops);
}

static void synth_run_phase(struct synth *s, const struct synth_phase *p, uint64_t t0)
{
	uint64_t i, n = p->ops, bs = p->bs, t, l;
	unsigned int k;
	char nm[32];

	s->devread = p->devread;
	if (!strcmp(p->kind, "idle")) {
		s->dev_busy_until = p->devbusy ? t0 + synth_span(p) : 0;
		return;
	}
	for (i = 0; i < n && !s->err; i++) {
		uint32_t tid = 100 + (uint32_t)(i % p->threads);
		uint64_t f = p->file;

		t = synth_when(p, t0, i);
		l = synth_lat(s, p, i);
		if ((s->flags & SYNTH_LOST) && i == n / 2 && t0 == SYNTH_START_NS) {
			struct iotap_trace_rec r;

			memset(&r, 0, sizeof(r));
			r.type = IOTAP_REC_LOST;
			r.time_ns = t;
			r.length = 5;
			synth_put(s, &r);
		}
		if (!strcmp(p->kind, "seqwrite") || !strcmp(p->kind, "seqread")) {
			unsigned int op = p->kind[3] == 'w' ? IOTAP_OP_WRITE : IOTAP_OP_READ;

			synth_op(s, op, t, l, tid, f, s->off[f & 255], bs, (int64_t)bs);
			s->off[f & 255] += bs;
			if (p->fsync && i % p->fsync == p->fsync - 1)
				synth_op(s, IOTAP_OP_FSYNC, t + (synth_when(p, t0, i + 1) - t) / 2,
					 l, tid, f, 0, 0, 0);
		} else if (!strcmp(p->kind, "fsync")) {
			synth_op(s, IOTAP_OP_FSYNC, t, l, tid, f, 0, 0, 0);
		} else if (!strcmp(p->kind, "strided")) {
			synth_op(s, IOTAP_OP_READ, t, l, tid, f, i * p->stride, bs, (int64_t)bs);
		} else if (!strcmp(p->kind, "rewrite")) {
			uint64_t o = s->off[f & 255];

			/* one read and one write per request slot, half a gap apart */
			synth_op(s, IOTAP_OP_READ, t, l, tid, f, o, bs, (int64_t)bs);
			synth_op(s, IOTAP_OP_WRITE, t + (synth_when(p, t0, i + 1) - t) / 2, l, tid,
				 f, o, bs, (int64_t)bs);
			s->off[f & 255] += bs;
		} else if (!strcmp(p->kind, "randrw")) {
			uint64_t blocks = p->size / bs, o;

			f = p->file + i % p->threads;
			o = (synth_rng(&s->rng) % (blocks ? blocks : 1)) * bs;
			synth_op(s, IOTAP_OP_READ, t, l, tid, f, o, bs, (int64_t)bs);
			if (synth_rng(&s->rng) % 100 < p->wpct)
				synth_op(s, IOTAP_OP_WRITE, t + (synth_when(p, t0, i + 1) - t) / 2,
					 l, tid, f, o, bs, (int64_t)bs);
		} else if (!strcmp(p->kind, "create")) {
			uint64_t id = 1000000 + s->next_file++;

			snprintf(nm, sizeof(nm), "%010" PRIx64, id);
			synth_op(s, IOTAP_OP_LOOKUP, t, l / 4, tid, 0, 0, 0, -2);
			synth_op(s, IOTAP_OP_CREATE, t + l / 4, l, tid, id, 0, 0, 0);
			synth_name(s, t + l / 4, id, nm);
			synth_op(s, IOTAP_OP_FLUSH, t + l + l / 4, l / 4, tid, id, 0, 0, 0);
			synth_op(s, IOTAP_OP_RELEASE, t + l + l / 2, l / 4, tid, id, 0, 0, 0);
		} else if (!strcmp(p->kind, "stat")) {
			uint64_t id = 1000000 + (s->next_file ? i % s->next_file : i);

			synth_op(s, IOTAP_OP_LOOKUP, t, l, tid, id, 0, 0, 0);
			synth_op(s, IOTAP_OP_GETATTR, t + l, l, tid, id, 0, 0, 0);
		} else if (!strcmp(p->kind, "unlink")) {
			uint64_t id = 1000000 + i;

			synth_op(s, IOTAP_OP_UNLINK, t, l, tid, id, 0, 0, 0);
		} else if (!strcmp(p->kind, "mixed")) {
			/* 8 kinds of request in turn: a dense stream for the benchmark */
			k = (unsigned int)(i & 7);
			f = 1 + (i >> 16) % 64;
			if (k < 3) {
				synth_op(s, IOTAP_OP_WRITE, t, l, tid, f, s->off[f & 255], bs,
					 (int64_t)bs);
				s->off[f & 255] += bs;
			} else if (k < 5) {
				uint64_t o = (synth_rng(&s->rng) % 8192) * bs;

				synth_op(s, IOTAP_OP_READ, t, l, tid, f, o, bs, (int64_t)bs);
			} else if (k == 5) {
				synth_op(s, IOTAP_OP_GETATTR, t, l / 2, tid, f, 0, 0, 0);
			} else if (k == 6) {
				synth_op(s, IOTAP_OP_LOOKUP, t, l / 2, tid, f, 0, 0, 0);
			} else {
				synth_op(s, i % 4096 == 7 ? IOTAP_OP_FSYNC : IOTAP_OP_FLUSH, t, l,
					 tid, f, 0, 0, 0);
			}
		}
	}
}

static int synth_parse_line(const char *line, struct synth_phase *p)
{
	char buf[512], *tok, *save = NULL, *eq;
	int n = 0;

	memset(p, 0, sizeof(*p));
	p->ops = 1000;
	p->rate = 1000;
	p->bs = 8192;
	p->lat_us = 50;
	p->threads = 1;
	p->file = 1;
	p->size = 64ull << 20;
	p->wpct = 10;
	p->devread = 100;
	p->cpu = 10;
	p->slow = 1;
	p->at = 1;
	p->stride = 65536;
	snprintf(buf, sizeof(buf), "%s", line);
	for (tok = strtok_r(buf, " \t\n", &save); tok; tok = strtok_r(NULL, " \t\n", &save), n++) {
		if (n == 0) {
			snprintf(p->name, sizeof(p->name), "%s", tok);
			continue;
		}
		if (n == 1) {
			snprintf(p->kind, sizeof(p->kind), "%s", tok);
			continue;
		}
		eq = strchr(tok, '=');
		if (!eq)
			return -EINVAL;
		*eq++ = '\0';
#define SYNTH_KEY(k, field) if (!strcmp(tok, k)) { p->field = strtoull(eq, NULL, 0); continue; }
		SYNTH_KEY("ops", ops);
		SYNTH_KEY("n", ops);
		SYNTH_KEY("rate", rate);
		SYNTH_KEY("bs", bs);
		SYNTH_KEY("lat", lat_us);
		SYNTH_KEY("jitter", jitter);
		SYNTH_KEY("outlier", outlier_us);
		SYNTH_KEY("every", every);
		SYNTH_KEY("threads", threads);
		SYNTH_KEY("file", file);
		SYNTH_KEY("size", size);
		SYNTH_KEY("wpct", wpct);
		SYNTH_KEY("devread", devread);
		SYNTH_KEY("cpu", cpu);
		SYNTH_KEY("spread", spread);
		SYNTH_KEY("stride", stride);
		SYNTH_KEY("fsync", fsync);
#undef SYNTH_KEY
		if (!strcmp(tok, "slow")) {
			p->slow = strtod(eq, NULL);
			continue;
		}
		if (!strcmp(tok, "at")) {
			p->at = strtod(eq, NULL);
			continue;
		}
		if (!strcmp(tok, "dur")) {
			p->dur = strtod(eq, NULL);
			continue;
		}
		if (!strcmp(tok, "devbusy")) {
			p->devbusy = 1;
			continue;
		}
		return -EINVAL;
	}
	if (n < 2 || !p->rate || !p->threads)
		return -EINVAL;
	return 0;
}

/* The header's realtime base: a test of several hosts' traces moves it. */
static uint64_t synth_real_base_ns = 1700000000ull * 1000000000ull;

/*
 * synth_write - write the trace @script describes to @path
 * @bounds: if not NULL, filled with each phase's start, s from trace start
 * @max:    entries in @bounds
 * Return: number of phases, or -errno.
 */
__attribute__((unused))	/* a test may take only synth_rng() */
static int synth_write(const char *path, const char *script, unsigned int flags,
		       double *bounds, int max)
{
	struct iotap_trace_header hdr;
	struct synth s;
	struct synth_phase p;
	const char *line = script, *nl;
	uint64_t t = SYNTH_START_NS, last_end = t;
	char buf[512];
	int ret, n = 0;

	memset(&s, 0, sizeof(s));
	s.flags = flags;
	s.rng = 42;
	s.cpu_ns = 1000000;	/* the workload has run a little before its first marker */
	s.next_sample = SYNTH_BASE_NS + SYNTH_SAMPLE_NS;
	iotap_trace_header_init(&hdr, IOTAP_SOURCE_SYNTHETIC);
	hdr.mono_base_ns = SYNTH_BASE_NS;
	hdr.real_base_ns = synth_real_base_ns;
	hdr.workload = "synthetic";
	ret = iotap_trace_writer_open(&s.w, path, &hdr, IOTAP_TRACE_FORCE);
	if (ret)
		return ret;
	synth_name(&s, SYNTH_BASE_NS, 1, "Bonnie.1234");
	synth_name(&s, SYNTH_BASE_NS, 2, "Bonnie.1234.001");
	while (line && *line) {
		nl = strchr(line, '\n');
		snprintf(buf, sizeof(buf), "%.*s", nl ? (int)(nl - line) : (int)strlen(line), line);
		line = nl ? nl + 1 : NULL;
		if (!buf[0] || buf[0] == '#')
			continue;
		if (synth_parse_line(buf, &p)) {
			fprintf(stderr, "synth: bad script line '%s'\n", buf);
			iotap_trace_writer_close(s.w);
			return -EINVAL;
		}
		if (bounds && n < max)
			bounds[n] = (double)(t - SYNTH_BASE_NS) / 1e9;
		n++;
		if (strcmp(p.kind, "idle"))
			synth_mark(&s, t, p.name);
		synth_run_phase(&s, &p, t);
		s.cpu_ns += synth_span(&p) * p.cpu / 100;
		t += synth_span(&p);
		if (t > last_end)
			last_end = t;
	}
	if (!(flags & (SYNTH_NO_MARKS | SYNTH_NO_END))) {
		struct iotap_trace_rec r;

		synth_samples_until(&s, t);
		memset(&r, 0, sizeof(r));
		r.type = IOTAP_REC_PHASE;
		r.flags = IOTAP_PHASE_END;
		r.time_ns = t;
		r.tid = r.pid = 1;
		r.offset = s.cpu_ns * 2 / 5;
		r.length = s.cpu_ns - r.offset;
		synth_put(&s, &r);
	}
	synth_samples_until(&s, last_end + SYNTH_SAMPLE_NS);
	ret = iotap_trace_writer_close(s.w);
	if (s.err)
		return s.err;
	return ret ? ret : n;
}

#endif /* IOTAP_SYNTH_H */
