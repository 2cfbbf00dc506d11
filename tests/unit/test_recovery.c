// SPDX-License-Identifier: MIT
/*
 * test_recovery.c - damaged, truncated and hostile trace files
 *
 * Builds a trace of several chunks, then reads it back (through a memfd,
 * so truncation is cheap):
 *   - cut at every byte of the last chunk and at every chunk boundary: the
 *     reader returns exactly the records of the whole chunks, reports the
 *     rest as tail, and never fails;
 *   - cut inside the header: -ENODATA or -EBADMSG;
 *   - a middle chunk zeroed, its payload or header flipped, two chunks
 *     damaged, garbage inserted between chunks: the chunks after are read,
 *     the damage is counted and located;
 *   - hostile headers whose checksums are right: huge sizes, unknown
 *     required flags: skipped by size without allocating;
 *   - wrong magic -EBADMSG, a newer major version -EPROTONOSUPPORT (and
 *     probe says which), a newer minor version accepted, empty -ENODATA;
 *   - a fuzz loop (IOTAP_FUZZ_ITERS, default 2000, fixed seed) of bit
 *     flips, overwritten, zeroed, copied and cut ranges and planted chunk
 *     magics: no crash, no hang (alarm), no error, and the byte accounting
 *     of the stats always adds up.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <xxhash.h>

#include "tap.h"
#include "trace_test.h"

#define NCHUNK 8
#define CHUNK_HDR 72

static uint8_t *img;		/* the valid trace */
static size_t img_len;
static uint64_t bnd[NCHUNK + 2];	/* bnd[k]: start of chunk k; bnd[NCHUNK] = end */
static uint64_t nrec_in[NCHUNK + 1];	/* records in chunk k */
static uint64_t total_recs;
static int memfd;

static void put_le(uint8_t *p, uint64_t v, int n)
{
	int i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void build(void)
{
	const char *path = test_path("good.iotap");
	struct iotap_trace_writer *w;
	struct iotap_trace_rec rec;
	uint64_t seed = 11, t = 1000000;
	unsigned int k, i;
	struct stat st;
	int fd;

	if (iotap_trace_writer_open(&w, path, NULL, 0))
		exit(99);
	bnd[0] = iotap_trace_writer_bytes(w);
	for (k = 0; k < NCHUNK; k++) {
		unsigned int n = 100 + (unsigned int)rng_below(&seed, 150);

		for (i = 0; i < n; i++) {
			/* mostly ops, some of every other type, short names */
			rec_random(&rec, &seed);
			if (rec.type == IOTAP_REC_END || rng_below(&seed, 4))
				rec.type = IOTAP_REC_OP;
			if (rec.name_len > 24)
				rec.name_len = 24;
			if (rec.type == IOTAP_REC_OP && rng_below(&seed, 4)) {
				rec.op = IOTAP_OP_WRITE;
				rec.file = 3;
				rec.offset = i * 4096;
				rec.length = 4096;
				rec.result = 4096;
				rec.dur_ns = rng_below(&seed, 100000);
				rec.name = NULL;
				rec.name_len = 0;
			}
			t += rng_below(&seed, 10000);
			rec.time_ns = t;
			rec.aux = ++total_recs;		/* identifies the record */
			iotap_trace_writer_append(w, &rec);
		}
		nrec_in[k] = n;
		/* the last chunk is closed by close(), with END in it */
		if (k < NCHUNK - 1)
			iotap_trace_writer_flush(w, 0);
		bnd[k + 1] = iotap_trace_writer_bytes(w);
	}
	nrec_in[NCHUNK - 1]++;		/* END */
	total_recs++;
	if (iotap_trace_writer_close(w))
		exit(99);
	fd = open(path, O_RDONLY);
	fstat(fd, &st);
	img_len = (size_t)st.st_size;
	bnd[NCHUNK] = img_len;
	img = malloc(img_len);
	if (pread(fd, img, img_len, 0) != (ssize_t)img_len)
		exit(99);
	close(fd);
}

static void load(const uint8_t *p, size_t len)
{
	if (ftruncate(memfd, 0) || pwrite(memfd, p, len, 0) != (ssize_t)len)
		exit(99);
}

struct result {
	int open_ret;
	int next_ret;		/* last return of next(): 0, or < 0 */
	uint64_t n;		/* records delivered */
	uint64_t ids_bad;	/* file-order ids not consecutive within a chunk run */
	struct iotap_trace_read_stats st;
};

static void read_all(unsigned int flags, struct result *res)
{
	struct iotap_trace_reader *r;
	struct iotap_trace_rec rec;
	int ret;

	memset(res, 0, sizeof(*res));
	res->open_ret = iotap_trace_reader_open_fd(&r, memfd, flags);
	if (res->open_ret)
		return;
	while ((ret = iotap_trace_reader_next(r, &rec)) == 1) {
		res->n++;
		if (rec.type != IOTAP_REC_END && rec.aux != res->n)
			res->ids_bad++;
	}
	res->next_ret = ret;
	iotap_trace_reader_stats(r, &res->st);
	iotap_trace_reader_close(r);
}

/* header + whole chunks + skipped = file */
static int accounting_ok(const struct result *res)
{
	const struct iotap_trace_read_stats *s = &res->st;

	return s->file_bytes == s->header_bytes + s->compressed_bytes +
				CHUNK_HDR * s->chunks + s->bytes_skipped &&
	       s->tail_bytes <= s->bytes_skipped;
}

static void test_truncation(void)
{
	uint64_t L, bad = 0, want, k;
	struct result res;

	/* every byte of the last chunk, from the end down */
	load(img, img_len);
	for (L = img_len; L + 1 > bnd[NCHUNK - 1] + 1; L--) {
		if (ftruncate(memfd, (off_t)L))
			exit(99);
		read_all((L & 1) ? IOTAP_TRACE_READ_FILE_ORDER : 0, &res);
		want = L == img_len ? total_recs : total_recs - nrec_in[NCHUNK - 1];
		if (res.open_ret || res.next_ret || res.n != want || res.ids_bad ||
		    res.st.chunks_bad ||
		    res.st.tail_bytes != L - (L == img_len ? img_len : bnd[NCHUNK - 1]) ||
		    res.st.has_end != (L == img_len) || !accounting_ok(&res)) {
			if (!bad)
				diag("cut at %" PRIu64 ": open %d next %d n %" PRIu64
				     " (want %" PRIu64 ") tail %" PRIu64,
				     L, res.open_ret, res.next_ret, res.n, want, res.st.tail_bytes);
			bad++;
		}
		if (L == bnd[NCHUNK - 1])
			break;
	}
	ok(!bad,
	   "cut at each of the %" PRIu64 " bytes of the last chunk: the whole chunks' records, "
	   "the rest is tail (%" PRIu64 " bad)",
	   img_len - bnd[NCHUNK - 1] + 1, bad);

	bad = 0;
	for (k = 0; k <= NCHUNK; k++) {
		uint64_t j;

		load(img, (size_t)bnd[k]);
		read_all(0, &res);
		for (want = 0, j = 0; j < k; j++)
			want += nrec_in[j];
		if (res.open_ret || res.next_ret || res.n != want || res.ids_bad ||
		    res.st.bytes_skipped || res.st.chunks != k || res.st.first_bad_offset)
			bad++;
	}
	ok(!bad,
	   "cut at each chunk boundary: exactly the chunks before it, no damage (%" PRIu64 " bad)",
	   bad);

	bad = 0;
	for (L = 0; L < bnd[0]; L++) {
		load(img, (size_t)L);
		read_all(0, &res);
		if (res.open_ret != (L ? -EBADMSG : -ENODATA))
			bad++;
	}
	ok(!bad, "cut inside the header: -ENODATA when empty, -EBADMSG otherwise (%" PRIu64 " bad)",
	   bad);
}

static void expect_damage(const uint8_t *p, size_t len, uint64_t want_n, uint64_t want_bad,
			  uint64_t want_skip, uint64_t want_first, const char *what)
{
	struct result res;

	load(p, len);
	read_all(0, &res);
	ok(!res.open_ret && !res.next_ret && res.n == want_n && res.st.chunks_bad == want_bad &&
	   res.st.bytes_skipped == want_skip && res.st.first_bad_offset == want_first &&
	   res.st.tail_bytes == 0 && res.st.has_end && accounting_ok(&res),
	   "%s: %" PRIu64 "/%" PRIu64 " records, %" PRIu64 " bad, %" PRIu64 " bytes skipped at "
	   "%" PRIu64,
	   what, res.n, want_n, res.st.chunks_bad, res.st.bytes_skipped, res.st.first_bad_offset);
}

static void test_damage(void)
{
	uint8_t *c = malloc(img_len + 4096);
	uint64_t s3 = bnd[4] - bnd[3], s5 = bnd[6] - bnd[5];
	uint64_t seed = 99;
	size_t i;

	memcpy(c, img, img_len);
	memset(c + bnd[3], 0, s3);
	expect_damage(c, img_len, total_recs - nrec_in[3], 1, s3, bnd[3], "chunk 3 zeroed");

	memcpy(c, img, img_len);
	c[bnd[3] + CHUNK_HDR + 10] ^= 0x40;
	expect_damage(c, img_len, total_recs - nrec_in[3], 1, s3, bnd[3],
		      "a payload byte of chunk 3 flipped");

	memcpy(c, img, img_len);
	c[bnd[3] + 20] ^= 0x01;
	expect_damage(c, img_len, total_recs - nrec_in[3], 1, s3, bnd[3],
		      "a header byte of chunk 3 flipped");

	memcpy(c, img, img_len);
	c[bnd[3] + CHUNK_HDR + 3] ^= 0x01;
	memset(c + bnd[5], 0xff, 40);
	expect_damage(c, img_len, total_recs - nrec_in[3] - nrec_in[5], 2, s3 + s5, bnd[3],
		      "chunks 3 and 5 damaged");

	/* 1000 bytes of garbage between chunks 2 and 3 */
	memcpy(c, img, bnd[3]);
	for (i = 0; i < 1000; i++)
		c[bnd[3] + i] = (uint8_t)rng_next(&seed);
	memcpy(c + bnd[3] + 1000, img + bnd[3], img_len - bnd[3]);
	expect_damage(c, img_len + 1000, total_recs, 1, 1000, bnd[3], "garbage between chunks");

	/* garbage holding a chunk magic whose header does not check */
	memcpy(c + bnd[3] + 500, "IOTAPCK\n", 8);
	expect_damage(c, img_len + 1000, total_recs, 1, 1000, bnd[3],
		      "garbage with a false chunk magic");
	free(c);
}

/* A chunk header with a valid checksum, announcing what it likes. */
static void fake_chunk(uint8_t *p, uint32_t flags, uint32_t payload, uint32_t raw, uint32_t nrec)
{
	memset(p, 0, CHUNK_HDR);
	memcpy(p, "IOTAPCK\n", 8);
	put_le(p + 8, CHUNK_HDR, 4);
	put_le(p + 12, flags, 4);
	put_le(p + 16, payload, 4);
	put_le(p + 20, raw, 4);
	put_le(p + 24, nrec, 4);
	put_le(p + 64, XXH64(p, 64, 0), 8);
}

static void test_hostile(void)
{
	uint8_t *c = malloc(img_len + 8192);
	struct result res;
	size_t len;

	/* insert a checked header announcing 1 GiB raw, 100 payload bytes */
	memcpy(c, img, bnd[2]);
	fake_chunk(c + bnd[2], 0, 100, 1u << 30, 5);
	memset(c + bnd[2] + CHUNK_HDR, 0x5a, 100);
	memcpy(c + bnd[2] + CHUNK_HDR + 100, img + bnd[2], img_len - bnd[2]);
	len = img_len + CHUNK_HDR + 100;
	expect_damage(c, len, total_recs, 1, CHUNK_HDR + 100, bnd[2],
		      "a chunk announcing 1 GiB raw is skipped by its size");

	fake_chunk(c + bnd[2], 0x10000, 100, 1000, 5);
	expect_damage(c, len, total_recs, 1, CHUNK_HDR + 100, bnd[2],
		      "a chunk with an unknown required flag is skipped");

	fake_chunk(c + bnd[2], 0, 100, 1000, 900000);
	expect_damage(c, len, total_recs, 1, CHUNK_HDR + 100, bnd[2],
		      "a chunk announcing more records than bytes is skipped");

	/* a checked header announcing 4 GiB of payload, at the end: tail */
	memcpy(c, img, img_len);
	fake_chunk(c + img_len, 0, UINT32_MAX, 1000, 5);
	load(c, img_len + CHUNK_HDR + 10);
	read_all(0, &res);
	ok(!res.open_ret && !res.next_ret && res.n == total_recs &&
	   res.st.tail_bytes == CHUNK_HDR + 10,
	   "a chunk announcing 4 GiB at the end is a tail, nothing allocated for it");
	free(c);
}

static void test_headers(void)
{
	const char *path = test_path("v2.iotap");
	unsigned int major = 0, minor = 0;
	uint8_t *c = malloc(img_len);
	struct iotap_trace_reader *r;
	struct result res;
	uint64_t x;
	int fd, ret;

	memcpy(c, img, img_len);
	c[3] = 'X';
	load(c, img_len);
	read_all(0, &res);
	ok(res.open_ret == -EBADMSG, "wrong magic: -EBADMSG (%d)", res.open_ret);

	memcpy(c, img, img_len);
	c[8] = 2;
	load(c, img_len);
	read_all(0, &res);
	ok(res.open_ret == -EPROTONOSUPPORT, "major version 2: -EPROTONOSUPPORT (%d)",
	   res.open_ret);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, c, img_len) != (ssize_t)img_len)
		exit(99);
	close(fd);
	ret = iotap_trace_probe_version(path, &major, &minor);
	ok(ret == 0 && major == 2 && minor == 0, "and probe_version says 2.0");
	ok(iotap_trace_reader_open(&r, path, 0) == -EPROTONOSUPPORT, "by path too");

	c[8] = 0;
	load(c, img_len);
	read_all(0, &res);
	ok(res.open_ret == -EBADMSG, "major version 0: -EBADMSG");

	/* minor 7: accepted (checksum updated, as a 1.7 writer would) */
	memcpy(c, img, img_len);
	c[10] = 7;
	x = XXH64(c, bnd[0] - 8, 0);
	put_le(c + bnd[0] - 8, x, 8);
	load(c, img_len);
	ret = iotap_trace_reader_open_fd(&r, memfd, 0);
	ok(ret == 0 && iotap_trace_reader_header(r)->version_minor == 7, "minor version 7 is read");
	if (!ret)
		iotap_trace_reader_close(r);

	memcpy(c, img, img_len);
	c[bnd[0] - 20] ^= 0x20;
	load(c, img_len);
	read_all(0, &res);
	ok(res.open_ret == -EBADMSG, "a flipped byte in the header's strings: -EBADMSG");

	memcpy(c, img, img_len);
	put_le(c + 12, 0x7fffffff, 4);
	load(c, img_len);
	read_all(0, &res);
	ok(res.open_ret == -EBADMSG, "a header_size of 2 GiB: -EBADMSG");

	load(img, 0);
	read_all(0, &res);
	ok(res.open_ret == -ENODATA, "empty file: -ENODATA");
	ok(iotap_trace_probe_version(test_path("none"), &major, &minor) == -ENOENT &&
	   iotap_trace_reader_open(&r, test_path("none"), 0) == -ENOENT, "missing file: -ENOENT");

	load(img, bnd[0]);
	read_all(0, &res);
	ok(!res.open_ret && !res.next_ret && res.n == 0 && !res.st.has_end && !res.st.bytes_skipped,
	   "a header without chunks: no records, no damage, no END");
	free(c);
}

static void mutate(uint8_t *c, size_t *len, uint64_t *seed)
{
	unsigned int m = 1 + (unsigned int)rng_below(seed, 4);

	while (m--) {
		size_t n = *len, pos, cnt, i;

		if (n < 2)
			return;
		/* mostly after the file header, so that reading gets going */
		pos = rng_below(seed, 10) ? bnd[0] + rng_below(seed, n - bnd[0]) : rng_below(seed,
				n);
		if (pos >= n)
			pos = n - 1;
		cnt = 1 + rng_below(seed, rng_below(seed, 2) ? 8 : 300);
		if (pos + cnt > n)
			cnt = n - pos;
		switch (rng_below(seed, 7)) {
		case 0:
			c[pos] ^= (uint8_t)(1u << rng_below(seed, 8));
			break;
		case 1:
			for (i = 0; i < cnt; i++)
				c[pos + i] = (uint8_t)rng_next(seed);
			break;
		case 2:
			memset(c + pos, 0, cnt);
			break;
		case 3:
			*len = pos;
			break;
		case 4: {
			size_t src = rng_below(seed, n - cnt + 1);

			memmove(c + pos, c + src, cnt);
			break;
		}
		case 5:
			if (pos + 8 <= n)
				memcpy(c + pos, "IOTAPCK\n", 8);
			break;
		case 6:
			/* a chunk header field: sizes, counts, watermark */
			for (i = 0; i < NCHUNK; i++) {
				if (rng_below(seed, 2)) {
					size_t off = bnd[i] + 8 + rng_below(seed, 56);

					if (off < n)
						c[off] = (uint8_t)rng_next(seed);
					break;
				}
			}
			break;
		}
	}
}

static void test_fuzz(void)
{
	const char *env = getenv("IOTAP_FUZZ_ITERS");
	unsigned long iters = env ? strtoul(env, NULL, 10) : 2000, it;
	uint8_t *c = malloc(img_len);
	uint64_t seed = 20240601, errs = 0, acct = 0, opened = 0, recs = 0;
	struct result res;

	alarm(120);	/* a hang ends the test with SIGALRM */
	for (it = 0; it < iters; it++) {
		size_t len = img_len;

		memcpy(c, img, img_len);
		mutate(c, &len, &seed);
		load(c, len);
		read_all(it & 1 ? IOTAP_TRACE_READ_FILE_ORDER : 0, &res);
		if (res.open_ret == 0) {
			opened++;
			recs += res.n;
			if (res.next_ret)
				errs++;
			if (!accounting_ok(&res) || res.n > total_recs * 2)
				acct++;
		} else if (res.open_ret != -EBADMSG && res.open_ret != -ENODATA &&
			   res.open_ret != -EPROTONOSUPPORT) {
			errs++;
		}
	}
	alarm(0);
	ok(!errs,
	   "fuzz: %lu damaged files, %" PRIu64 " opened, %" PRIu64 " records read, no error "
	   "(%" PRIu64 ")",
	   iters, opened, recs, errs);
	ok(!acct,
	   "fuzz: header + whole chunks + skipped bytes = file size every time (%" PRIu64 " off)",
	   acct);
	free(c);
}

int main(void)
{
	memfd = memfd_create("iotap-recovery", 0);
	if (memfd < 0) {
		perror("memfd_create");
		return 99;
	}
	build();
	diag("trace: %zu bytes, header %" PRIu64 ", %d chunks, %" PRIu64 " records",
	     img_len, bnd[0], NCHUNK, total_recs);
	test_truncation();
	test_damage();
	test_hostile();
	test_headers();
	test_fuzz();
	close(memfd);
	free(img);
	return done_testing();
}
