// SPDX-License-Identifier: MIT
/*
 * test_chunk.c - the framing (trace/chunk.c): file header and chunks
 *
 * File header: every field and string round-trips, absent strings stay
 * absent, unknown tags are skipped, long strings are cut at 65535 bytes,
 * any flipped bit is caught. Chunk header: round trip, every flipped bit
 * caught, torn headers are "need more", a longer header from a future
 * minor version is accepted. Payload: compress/decompress round trip, and
 * a flipped byte, a wrong raw size or a second frame are refused.
 */
#include <errno.h>

#include <xxhash.h>

#include "tap.h"
#include "trace_test.h"
#include "trace_i.h"

static int streq(const char *a, const char *b)
{
	if (!a || !b)
		return !a && !b;
	return !strcmp(a, b);
}

static int hdr_eq(const struct iotap_trace_header *a, const struct iotap_trace_header *b)
{
	return a->source == b->source && a->capture_mode == b->capture_mode &&
	       a->mono_base_ns == b->mono_base_ns && a->real_base_ns == b->real_base_ns &&
	       streq(a->host, b->host) && streq(a->kernel, b->kernel) &&
	       streq(a->mount_opts, b->mount_opts) && streq(a->cmdline, b->cmdline) &&
	       streq(a->backing, b->backing) && streq(a->mountpoint, b->mountpoint) &&
	       streq(a->tool, b->tool) && streq(a->workload, b->workload);
}

static void test_file_header(void)
{
	struct iotap_trace_header h, d;
	unsigned int major, minor, bad = 0;
	static char big[70000];
	uint8_t *p, *q;
	size_t len, i;
	uint32_t hs;
	char *str;

	iotap_trace_header_init(&h, IOTAP_SOURCE_CAPTURE);
	ok(h.version_major == 1 && h.version_minor == 0 && h.host && h.kernel && h.tool &&
	   !strncmp(h.tool, "iotap ", 6) && h.mono_base_ns && h.real_base_ns,
	   "header_init: version 1.0, host '%s', tool '%s', both clock bases", h.host, h.tool);
	h.capture_mode = IOTAP_MODE_CACHE;
	h.mount_opts = "allow_other,default_permissions";
	h.cmdline = "iotap mount /data /data --trace t";
	h.backing = "";
	h.mountpoint = "/data";
	h.workload = NULL;
	i = (size_t)fhdr_encode(&h, &p, &len);
	ok(i == 0, "encode (%zu bytes)", len);
	i = (size_t)fhdr_probe(p, len, &major, &minor, &hs);
	ok(i == 0 && major == 1 && minor == 0 && hs == len, "probe: 1.0, header_size %u", hs);
	ok(fhdr_decode(p, len, &d, &str) == 0 && hdr_eq(&h, &d) && d.version_major == 1,
	   "decode: every field and string equal, empty string kept, NULL stays NULL");
	free(str);

	for (i = 0; i < len * 8; i++) {
		p[i / 8] ^= (uint8_t)(1u << (i % 8));
		if (fhdr_decode(p, len, &d, &str) == 0) {
			free(str);
			/* a flip in header_size that still fits cannot pass the checksum either */
			bad++;
		}
		p[i / 8] ^= (uint8_t)(1u << (i % 8));
	}
	ok(!bad, "every one of %zu flipped bits is refused (%u passed)", len * 8, bad);
	ok(fhdr_decode(p, len - 1, &d, &str) == -EBADMSG, "a header cut short is refused");
	free(p);

	/* an unknown tag (99) is skipped */
	memset(&h, 0, sizeof(h));
	h.host = "h";
	ok(fhdr_encode(&h, &p, &len) == 0, "encode a minimal header");
	q = malloc(len + 7);
	memcpy(q, p, len - 8);
	q[len - 8] = 99;
	q[len - 7] = 0;
	q[len - 6] = 3;
	q[len - 5] = 0;
	memcpy(q + len - 4, "abc", 3);
	q[12] = (uint8_t)(len + 7);
	{
		uint64_t x = XXH64(q, len - 1, 0);

		for (i = 0; i < 8; i++)
			q[len - 1 + i] = (uint8_t)(x >> (8 * i));
	}
	ok(fhdr_decode(q, len + 7, &d, &str) == 0 && streq(d.host, "h") && !d.tool,
	   "an unknown tag is skipped");
	free(str);
	free(q);
	free(p);

	memset(big, 'x', sizeof(big) - 1);
	memset(&h, 0, sizeof(h));
	h.cmdline = big;
	ok(fhdr_encode(&h, &p, &len) == 0 && fhdr_decode(p, len, &d, &str) == 0 &&
	   strlen(d.cmdline) == 65535, "a 69999-byte string is cut at 65535");
	free(str);
	free(p);

	ok(fhdr_probe((const uint8_t *)"", 0, &major, &minor, &hs) == -ENODATA,
	   "probe: empty is -ENODATA");
	ok(fhdr_probe((const uint8_t *)"IOTAPTX\n0123456789", 18, &major, &minor, &hs) == -EBADMSG,
	   "probe: wrong magic is -EBADMSG");
	ok(fhdr_probe((const uint8_t *)"IOTAPTR\n", 8, &major, &minor, &hs) == -EBADMSG,
	   "probe: magic alone is -EBADMSG");
}

static void test_chunk_header(void)
{
	struct chunk_hdr h, d;
	uint8_t b[CHUNK_HDR_SIZE + 8], big[80];
	unsigned int i, bad = 0;
	uint64_t x;

	memset(&h, 0, sizeof(h));
	h.flags = 0x5;
	h.payload_size = 12345;
	h.raw_size = 1 << 20;
	h.nrec = 99999;
	h.index = 7;
	h.t_first = 1;
	h.t_last = UINT64_MAX;
	h.watermark = 0x123456789abcdefull;
	h.payload_hash = 0xfedcba9876543210ull;
	chunk_hdr_pack(b, &h);
	ok(chunk_hdr_parse(b, CHUNK_HDR_SIZE, &d) == 0 && d.hdr_size == CHUNK_HDR_SIZE &&
	   d.flags == h.flags && d.payload_size == h.payload_size && d.raw_size == h.raw_size &&
	   d.nrec == h.nrec && d.index == h.index && d.t_first == h.t_first &&
	   d.t_last == h.t_last && d.watermark == h.watermark && d.payload_hash == h.payload_hash,
	   "chunk header round-trips");
	for (i = 0; i < CHUNK_HDR_SIZE * 8; i++) {
		b[i / 8] ^= (uint8_t)(1u << (i % 8));
		if (chunk_hdr_parse(b, CHUNK_HDR_SIZE, &d) == 0)
			bad++;
		b[i / 8] ^= (uint8_t)(1u << (i % 8));
	}
	ok(!bad, "every one of %d flipped bits is refused (%u passed)", CHUNK_HDR_SIZE * 8, bad);
	for (i = 0; i < CHUNK_HDR_SIZE; i++)
		if (chunk_hdr_parse(b, i, &d) != CHUNK_NEED_MORE)
			bad++;
	ok(!bad, "a valid header cut at any byte is 'need more'");
	ok(chunk_hdr_parse((const uint8_t *)"IOTAPCX", 7, &d) == -EBADMSG,
	   "a wrong magic prefix is refused at once");

	/* A minor version may append fields; the checksum stays last. */
	memcpy(big, b, 64);
	big[8] = 80;
	memset(big + 64, 0xab, 8);
	x = XXH64(big, 72, 0);
	for (i = 0; i < 8; i++)
		big[72 + i] = (uint8_t)(x >> (8 * i));
	ok(chunk_hdr_parse(big, 80, &d) == 0 && d.hdr_size == 80 && d.nrec == h.nrec,
	   "an 80-byte header from a newer minor version is accepted");
	ok(chunk_hdr_parse(big, 72, &d) == CHUNK_NEED_MORE, "and needs all its 80 bytes");
	big[8] = 76;
	ok(chunk_hdr_parse(big, 80, &d) == -EBADMSG,
	   "a header size not a multiple of 8 is refused");
}

static void test_payload(void)
{
	static uint8_t raw[300000];
	struct chunk_enc ce;
	struct chunk_dec cd;
	struct chunk_hdr h, d;
	const uint8_t *out;
	uint8_t *copy;
	size_t len, i;
	uint64_t seed = 9;

	for (i = 0; i < sizeof(raw); i++)
		raw[i] = (uint8_t)(i % 251 < 200 ? i % 7 : rng_next(&seed));
	ok(chunk_enc_init(&ce, 0) == 0 && chunk_dec_init(&cd) == 0, "contexts");
	memset(&h, 0, sizeof(h));
	h.nrec = 3;
	i = (size_t)chunk_enc_build(&ce, &h, raw, sizeof(raw), &out, &len);
	ok(i == 0 && len == CHUNK_HDR_SIZE + h.payload_size && h.raw_size == sizeof(raw),
	   "build: %zu raw bytes -> %u compressed", sizeof(raw), h.payload_size);
	copy = malloc(len + 64);
	memcpy(copy, out, len);
	ok(chunk_hdr_parse(copy, len, &d) == 0 &&
	   chunk_dec_payload(&cd, &d, copy + CHUNK_HDR_SIZE) == 0 &&
	   !memcmp(cd.raw, raw, sizeof(raw)), "decompress gives the raw bytes back");

	copy[CHUNK_HDR_SIZE + d.payload_size / 2] ^= 0x10;
	ok(chunk_dec_payload(&cd, &d, copy + CHUNK_HDR_SIZE) == -EBADMSG,
	   "a flipped payload byte is refused");
	copy[CHUNK_HDR_SIZE + d.payload_size / 2] ^= 0x10;

	d.raw_size--;
	ok(chunk_dec_payload(&cd, &d, copy + CHUNK_HDR_SIZE) == -EBADMSG,
	   "a wrong raw size is refused");
	d.raw_size++;

	/* two frames in one payload: checksum made to match, still refused */
	{
		struct chunk_hdr h2;
		const uint8_t *o2;
		size_t l2, p1 = d.payload_size;
		uint8_t *two = malloc(len + 4096);

		memcpy(two, copy + CHUNK_HDR_SIZE, p1);
		memset(&h2, 0, sizeof(h2));
		chunk_enc_build(&ce, &h2, raw, 100, &o2, &l2);
		memcpy(two + p1, o2 + CHUNK_HDR_SIZE, h2.payload_size);
		d.payload_size = (uint32_t)(p1 + h2.payload_size);
		d.payload_hash = XXH64(two, d.payload_size, 0);
		ok(chunk_dec_payload(&cd, &d, two) == -EBADMSG,
		   "a payload of two zstd frames is refused");
		free(two);
	}

	memset(&h, 0, sizeof(h));
	ok(chunk_enc_build(&ce, &h, raw, 0, &out, &len) == 0 &&
	   chunk_hdr_parse(out, len, &d) == 0 &&
	   chunk_dec_payload(&cd, &d, out + CHUNK_HDR_SIZE) == 0, "an empty payload round-trips");
	free(copy);
	chunk_enc_release(&ce);
	chunk_dec_release(&cd);
}

static void test_names(void)
{
	unsigned int op, bad = 0;

	for (op = 0; op < IOTAP_OP_MAX; op++)
		if (iotap_trace_op_from_name(iotap_trace_op_name(op)) != (int)op)
			bad++;
	ok(!bad, "every op name parses back to its op");
	ok(!strcmp(iotap_trace_op_name(IOTAP_OP_MAX), "?") &&
	   !strcmp(iotap_trace_rec_type_name(0), "?") &&
	   !strcmp(iotap_trace_source_name(99), "?") && !strcmp(iotap_trace_mode_name(99), "?"),
	   "unknown numbers print as '?'");
	ok(iotap_trace_op_from_name("READ") == IOTAP_OP_READ &&
	   iotap_trace_op_from_name("nope") == -EINVAL,
	   "op names parse case-insensitively, unknown is -EINVAL");
	ok(!strcmp(iotap_trace_rec_type_name(IOTAP_REC_LOST), "lost") &&
	   !strcmp(iotap_trace_source_name(IOTAP_SOURCE_REPLAY), "replay") &&
	   !strcmp(iotap_trace_mode_name(IOTAP_MODE_DIRECT), "direct"),
	   "type, source and mode names");
	ok(strstr(iotap_trace_strerror(-EBADMSG), "not an iotap trace") &&
	   strstr(iotap_trace_strerror(-EPROTONOSUPPORT), "newer") &&
	   strstr(iotap_trace_strerror(ENODATA), "empty") &&
	   !strcmp(iotap_trace_strerror(-ENOENT), strerror(ENOENT)), "strerror texts");
}

int main(void)
{
	test_file_header();
	test_chunk_header();
	test_payload();
	test_names();
	return done_testing();
}
