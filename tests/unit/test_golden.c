// SPDX-License-Identifier: MIT
/*
 * test_golden.c - the format-1.0 golden file still reads the same
 *
 * tests/data/golden-v1.0.iotap was written once by this program
 * (`test_golden --write FILE`) with a fixed header and a fixed list of
 * records: every type, every op code, edge values, names, samples,
 * sequential and random data ops (the delta tables), in four chunks. The
 * check reads the committed file and compares the header and every record
 * with the list, in file order and merged. If it fails after a change to
 * trace/, the change broke format 1.0 for files already written: make it
 * a new type or a new version (FORMAT.md "Versions"), do not regenerate.
 *
 * The compressed bytes depend on the zstd version, so regenerating a file
 * with identical content need not give identical bytes.
 */
#include <errno.h>

#include "tap.h"
#include "trace_test.h"

#define NREC 400

static struct iotap_trace_rec recs[NREC];
static char names[NREC][24];

static void header(struct iotap_trace_header *h)
{
	memset(h, 0, sizeof(*h));
	h->version_major = 1;
	h->source = IOTAP_SOURCE_SYNTHETIC;
	h->capture_mode = IOTAP_MODE_DIRECT;
	h->mono_base_ns = 1000000000ull;
	h->real_base_ns = 1717200000000000000ull;
	h->host = "golden-host";
	h->kernel = "Linux 6.1.0 #1 SMP x86_64";
	h->mount_opts = "allow_other";
	h->cmdline = "test_golden --write";
	h->backing = "/srv/backing";
	h->mountpoint = "/mnt/iotap";
	h->tool = "iotap golden";
	h->workload = "";
}

/* The fixed record list: a pure function of nothing. */
static void build(void)
{
	static const uint64_t edge[] = {
		0, 1, 127, 128, UINT32_MAX, UINT64_MAX, (uint64_t)INT64_MIN
	};
	uint64_t seed = 2024, t = 1000000000ull;
	unsigned int i;

	for (i = 0; i < NREC; i++) {
		struct iotap_trace_rec *r = &recs[i];
		uint64_t e = edge[i % 7];

		memset(r, 0, sizeof(*r));
		t += 1000 + rng_below(&seed, 50000);
		r->time_ns = t;
		r->tid = 100 + i % 3;
		r->pid = 100;
		r->uid = 1000;
		r->gid = 1000;
		snprintf(names[i], sizeof(names[i]), "name-%u", i);
		switch (i % 10) {
		case 0:	/* every op code with edge values */
			r->type = IOTAP_REC_OP;
			r->op = (uint16_t)(i / 10 % IOTAP_OP_MAX);
			r->dur_ns = e;
			r->file = e;
			r->file2 = i;
			r->fh = e;
			r->offset = e;
			r->length = e;
			r->result = -(int64_t)(i % 40);
			r->flags = (uint32_t)e;
			r->mode = 0100644;
			r->aux = e;
			if (i % 20 == 0) {
				r->name = names[i];
				r->name_len = (uint32_t)strlen(names[i]);
			}
			break;
		case 1:
			r->type = IOTAP_REC_NAME;
			r->file = 500 + i;
			r->file2 = 1;
			r->mode = 0100644;
			r->length = i * 4096;
			r->name = names[i];
			r->name_len = (uint32_t)strlen(names[i]);
			break;
		case 2:
			r->type = i % 20 == 2 ? IOTAP_REC_PHASE : IOTAP_REC_NOTE;
			r->flags = i % 40 == 2;
			r->offset = i * 1000;
			r->length = i * 100;
			r->name = names[i];
			r->name_len = (uint32_t)strlen(names[i]);
			break;
		case 3:
			if (i % 30 == 3) {
				r->type = IOTAP_REC_SAMPLE;
				r->sample.dev_major = 254;
				r->sample.dev_minor = 0;
				r->sample.rd_ios = i * 7;
				r->sample.wr_sectors = e;
				r->sample.proc_user_ns = i * 1000003;
				r->sample.sys_idle_ns = UINT64_MAX - i;
				r->sample.proc_rss_kb = 20480;
			} else {
				r->type = IOTAP_REC_LOST;
				r->tid = 0;
				r->length = i;
			}
			break;
		default:	/* sequential and random data ops */
			r->type = IOTAP_REC_OP;
			r->op = i % 3 ? IOTAP_OP_WRITE : IOTAP_OP_READ;
			r->file = 7 + i % 2;
			r->fh = r->file;
			r->dur_ns = 20000 + rng_below(&seed, 5000);
			r->length = 8192;
			r->offset = i % 2 ? (uint64_t)i * 8192 : rng_below(&seed, 1 << 17) * 8192;
			r->result = i % 17 ? 8192 : -28;
			r->flags = IOTAP_OPF_DIRECT;
			break;
		}
	}
}

static int write_golden(const char *path)
{
	struct iotap_trace_header h;
	struct iotap_trace_writer *w;
	unsigned int i;
	int ret;

	header(&h);
	ret = iotap_trace_writer_open(&w, path, &h, IOTAP_TRACE_FORCE);
	if (ret)
		return ret;
	for (i = 0; i < NREC; i++) {
		ret = iotap_trace_writer_append(w, &recs[i]);
		if (!ret && i % 100 == 99 && i < NREC - 1)
			ret = iotap_trace_writer_flush(w, recs[i].time_ns);
		if (ret)
			return ret;
	}
	return iotap_trace_writer_close(w);
}

static int streq(const char *a, const char *b)
{
	if (!a || !b)
		return !a && !b;
	return !strcmp(a, b);
}

static void check(const char *path, unsigned int flags, const char *what)
{
	const struct iotap_trace_header *d;
	struct iotap_trace_read_stats st;
	struct iotap_trace_reader *r;
	struct iotap_trace_header h;
	struct iotap_trace_rec rec;
	unsigned int i, bad = 0;
	char why[256];
	int ret;

	ret = iotap_trace_reader_open(&r, path, flags);
	ok(ret == 0, "%s: open %s: %s", what, path, iotap_trace_strerror(ret));
	if (ret)
		return;
	header(&h);
	d = iotap_trace_reader_header(r);
	ok(d->version_major == 1 && d->version_minor == 0 && d->source == h.source &&
	   d->capture_mode == h.capture_mode && d->mono_base_ns == h.mono_base_ns &&
	   d->real_base_ns == h.real_base_ns && streq(d->host, h.host) &&
	   streq(d->kernel, h.kernel) && streq(d->mount_opts, h.mount_opts) &&
	   streq(d->cmdline, h.cmdline) && streq(d->backing, h.backing) &&
	   streq(d->mountpoint, h.mountpoint) && streq(d->tool, h.tool) &&
	   streq(d->workload, h.workload), "%s: header fields as written", what);
	for (i = 0; i < NREC; i++) {
		ret = iotap_trace_reader_next(r, &rec);
		if (ret != 1 || !rec_eq(&recs[i], &rec, why, sizeof(why))) {
			if (!bad)
				diag("%s: record %u: ret %d: %s", what, i, ret,
				     ret == 1 ? why : "");
			bad++;
			if (ret != 1)
				break;
		}
	}
	ok(!bad, "%s: all %d records, every field as written", what, NREC);
	ret = iotap_trace_reader_next(r, &rec);
	ok(ret == 1 && rec.type == IOTAP_REC_END && rec.length == NREC &&
	   iotap_trace_reader_next(r,
				   &rec) == 0, "%s: then END (%d records) and the end", what, NREC);
	iotap_trace_reader_stats(r, &st);
	ok(st.chunks == 4 && st.chunks_bad == 0 && st.bytes_skipped == 0 && st.has_end &&
	   st.late_records == 0, "%s: 4 chunks, no damage", what);
	iotap_trace_reader_close(r);
}

int main(int argc, char **argv)
{
	build();
	if (argc == 3 && !strcmp(argv[1], "--write")) {
		int ret = write_golden(argv[2]);

		fprintf(stderr, "test_golden: %s: %s\n", argv[2], iotap_trace_strerror(ret));
		return ret ? 1 : 0;
	}
	if (argc != 2) {
		fprintf(stderr, "usage: test_golden GOLDEN-FILE | --write FILE\n");
		return 2;
	}
	check(argv[1], IOTAP_TRACE_READ_FILE_ORDER, "file order");
	check(argv[1], 0, "merged");
	return done_testing();
}
