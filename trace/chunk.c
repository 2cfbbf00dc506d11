// SPDX-License-Identifier: MIT
/*
 * chunk.c - the on-disk framing: the file header and the chunks
 *
 * A trace file is a file header followed by chunks; a chunk is a small
 * fixed little-endian header followed by exactly one zstd frame holding the
 * raw record payload (record.c). Both headers end in an XXH64 of their own
 * bytes, and the chunk header carries an XXH64 of the compressed payload, so
 * a reader can tell a whole chunk from a torn or damaged one and can find
 * the next chunk by scanning for CHUNK_MAGIC. FORMAT.md is the spec.
 *
 * A struct chunk_enc (the writer's) and a struct chunk_dec (a reader's)
 * each own one zstd context and one output buffer and serve one thread.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "iotap_base.h"
#include "trace_i.h"

static inline void put_le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static inline void put_le32(uint8_t *p, uint32_t v)
{
	put_le16(p, (uint16_t)v);
	put_le16(p + 2, (uint16_t)(v >> 16));
}

static inline void put_le64(uint8_t *p, uint64_t v)
{
	put_le32(p, (uint32_t)v);
	put_le32(p + 4, (uint32_t)(v >> 32));
}

static inline uint16_t get_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)get_le16(p) | (uint32_t)get_le16(p + 2) << 16;
}

static inline uint64_t get_le64(const uint8_t *p)
{
	return (uint64_t)get_le32(p) | (uint64_t)get_le32(p + 4) << 32;
}

/* --- file header -------------------------------------------------------- */

static const char *hdr_field(const struct iotap_trace_header *hdr, unsigned int tag)
{
	switch (tag) {
	case FHDR_TAG_HOST:
		return hdr->host;
	case FHDR_TAG_KERNEL:
		return hdr->kernel;
	case FHDR_TAG_MOUNT_OPTS:
		return hdr->mount_opts;
	case FHDR_TAG_CMDLINE:
		return hdr->cmdline;
	case FHDR_TAG_BACKING:
		return hdr->backing;
	case FHDR_TAG_MOUNTPOINT:
		return hdr->mountpoint;
	case FHDR_TAG_TOOL:
		return hdr->tool;
	case FHDR_TAG_WORKLOAD:
		return hdr->workload;
	case FHDR_TAG_LAYOUT:
		return hdr->layout;
	case FHDR_TAG_FUSE:
		return hdr->fuse;
	}
	return NULL;
}

static const char **hdr_slot(struct iotap_trace_header *hdr, unsigned int tag)
{
	switch (tag) {
	case FHDR_TAG_HOST:
		return &hdr->host;
	case FHDR_TAG_KERNEL:
		return &hdr->kernel;
	case FHDR_TAG_MOUNT_OPTS:
		return &hdr->mount_opts;
	case FHDR_TAG_CMDLINE:
		return &hdr->cmdline;
	case FHDR_TAG_BACKING:
		return &hdr->backing;
	case FHDR_TAG_MOUNTPOINT:
		return &hdr->mountpoint;
	case FHDR_TAG_TOOL:
		return &hdr->tool;
	case FHDR_TAG_WORKLOAD:
		return &hdr->workload;
	case FHDR_TAG_LAYOUT:
		return &hdr->layout;
	case FHDR_TAG_FUSE:
		return &hdr->fuse;
	}
	return NULL;
}

static size_t tlv_len(const char *s)
{
	size_t n = strlen(s);

	return n > TRACE_TLV_MAX ? TRACE_TLV_MAX : n;
}

/**
 * fhdr_encode - serialise a file header
 * @hdr: header to write; absent strings are omitted, longer than 65535
 *       bytes are cut at 65535; the version fields are ignored (this
 *       library writes IOTAP_TRACE_VERSION_MAJOR.MINOR)
 * @out: malloc'ed bytes, the caller frees
 * @len: their count
 *
 * Return: 0 or -ENOMEM.
 */
int fhdr_encode(const struct iotap_trace_header *hdr, uint8_t **out, size_t *len)
{
	size_t size = TRACE_HDR_FIXED + 8, off;
	unsigned int tag;
	uint8_t *p;

	for (tag = 1; tag < FHDR_TAG_MAX; tag++) {
		const char *s = hdr_field(hdr, tag);

		if (s)
			size += 4 + tlv_len(s);
	}
	p = calloc(1, size);
	if (!p)
		return -ENOMEM;
	memcpy(p, TRACE_MAGIC, TRACE_MAGIC_LEN);
	put_le16(p + 8, IOTAP_TRACE_VERSION_MAJOR);
	put_le16(p + 10, IOTAP_TRACE_VERSION_MINOR);
	put_le32(p + 12, (uint32_t)size);
	put_le64(p + 16, hdr->mono_base_ns);
	put_le64(p + 24, hdr->real_base_ns);
	put_le32(p + 32, hdr->source);
	put_le32(p + 36, hdr->capture_mode);
	off = TRACE_HDR_FIXED;
	for (tag = 1; tag < FHDR_TAG_MAX; tag++) {
		const char *s = hdr_field(hdr, tag);
		size_t n;

		if (!s)
			continue;
		n = tlv_len(s);
		put_le16(p + off, (uint16_t)tag);
		put_le16(p + off + 2, (uint16_t)n);
		memcpy(p + off + 4, s, n);
		off += 4 + n;
	}
	put_le64(p + off, XXH64(p, off, 0));
	*out = p;
	*len = size;
	return 0;
}

/**
 * fhdr_probe - look at the first bytes of a file
 * @p:        the file's first bytes
 * @len:      how many (16 are enough)
 * @major:    version_major found
 * @minor:    version_minor found
 * @hdr_size: header_size found
 *
 * Does not check the version or the checksum.
 * Return: 0; -ENODATA for an empty file; -EBADMSG when @p does not start
 * with the magic or is too short to hold the fixed fields.
 */
int fhdr_probe(const uint8_t *p, size_t len, unsigned int *major,
	       unsigned int *minor, uint32_t *hdr_size)
{
	if (!len)
		return -ENODATA;
	if (len < 16 || memcmp(p, TRACE_MAGIC, TRACE_MAGIC_LEN))
		return -EBADMSG;
	*major = get_le16(p + 8);
	*minor = get_le16(p + 10);
	*hdr_size = get_le32(p + 12);
	return 0;
}

/**
 * fhdr_decode - check and decode a whole file header
 * @p:       the file's first bytes
 * @len:     at least the header_size fhdr_probe() returned, or the file size
 * @hdr:     filled; its strings point into *@strings
 * @strings: malloc'ed, the caller frees
 *
 * The caller has checked the version with fhdr_probe(). Unknown tags are
 * skipped; a repeated tag keeps its last value.
 * Return: 0, -EBADMSG (bad size, checksum or field list), or -ENOMEM.
 */
int fhdr_decode(const uint8_t *p, size_t len, struct iotap_trace_header *hdr,
		char **strings)
{
	uint32_t size, off;
	char *str, *sp;

	if (len < TRACE_HDR_MIN || memcmp(p, TRACE_MAGIC, TRACE_MAGIC_LEN))
		return -EBADMSG;
	size = get_le32(p + 12);
	if (size < TRACE_HDR_MIN || size > TRACE_HDR_MAX || size > len)
		return -EBADMSG;
	if (XXH64(p, size - 8, 0) != get_le64(p + size - 8))
		return -EBADMSG;

	memset(hdr, 0, sizeof(*hdr));
	hdr->version_major = get_le16(p + 8);
	hdr->version_minor = get_le16(p + 10);
	hdr->mono_base_ns = get_le64(p + 16);
	hdr->real_base_ns = get_le64(p + 24);
	hdr->source = get_le32(p + 32);
	hdr->capture_mode = get_le32(p + 36);

	/* Every string is shorter than its TLV, so the header size bounds them. */
	str = malloc(size);
	if (!str)
		return -ENOMEM;
	sp = str;
	off = TRACE_HDR_FIXED;
	while (off < size - 8) {
		unsigned int tag, n;
		const char **slot;

		if (size - 8 - off < 4)
			goto err_free_strings;
		tag = get_le16(p + off);
		n = get_le16(p + off + 2);
		if (n > size - 8 - off - 4)
			goto err_free_strings;
		slot = hdr_slot(hdr, tag);
		if (slot) {
			memcpy(sp, p + off + 4, n);
			sp[n] = '\0';
			*slot = sp;
			sp += n + 1;
		}
		off += 4 + n;
	}
	*strings = str;
	return 0;

err_free_strings:
	free(str);
	return -EBADMSG;
}

/* --- chunk header ------------------------------------------------------- */

/**
 * chunk_hdr_pack - serialise a chunk header (CHUNK_HDR_SIZE bytes)
 * @out: destination
 * @h:   header; h->hdr_size is written as CHUNK_HDR_SIZE
 */
void chunk_hdr_pack(uint8_t out[CHUNK_HDR_SIZE], const struct chunk_hdr *h)
{
	memcpy(out, CHUNK_MAGIC, CHUNK_MAGIC_LEN);
	put_le32(out + 8, CHUNK_HDR_SIZE);
	put_le32(out + 12, h->flags);
	put_le32(out + 16, h->payload_size);
	put_le32(out + 20, h->raw_size);
	put_le32(out + 24, h->nrec);
	put_le32(out + 28, h->index);
	put_le64(out + 32, h->t_first);
	put_le64(out + 40, h->t_last);
	put_le64(out + 48, h->watermark);
	put_le64(out + 56, h->payload_hash);
	put_le64(out + 64, XXH64(out, 64, 0));
}

/**
 * chunk_hdr_parse - check and decode a chunk header
 * @p:     bytes at a candidate chunk start
 * @avail: bytes available at @p (up to the end of the file)
 * @h:     filled on success
 *
 * Return: 0 for a header whose magic, size and checksum are right;
 * CHUNK_NEED_MORE when the bytes so far fit a header but @avail is too
 * short to tell (at the end of the file: a torn header); -EBADMSG otherwise.
 * Limits on the sizes it announces are the caller's business.
 */
int chunk_hdr_parse(const uint8_t *p, size_t avail, struct chunk_hdr *h)
{
	uint32_t size;

	if (avail < CHUNK_MAGIC_LEN)
		return memcmp(p, CHUNK_MAGIC, avail) ? -EBADMSG : CHUNK_NEED_MORE;
	if (memcmp(p, CHUNK_MAGIC, CHUNK_MAGIC_LEN))
		return -EBADMSG;
	if (avail < 12)
		return CHUNK_NEED_MORE;
	size = get_le32(p + 8);
	if (size < CHUNK_HDR_SIZE || size > CHUNK_HDR_MAX || size % 8)
		return -EBADMSG;
	if (avail < size)
		return CHUNK_NEED_MORE;
	if (XXH64(p, size - 8, 0) != get_le64(p + size - 8))
		return -EBADMSG;
	h->hdr_size = size;
	h->flags = get_le32(p + 12);
	h->payload_size = get_le32(p + 16);
	h->raw_size = get_le32(p + 20);
	h->nrec = get_le32(p + 24);
	h->index = get_le32(p + 28);
	h->t_first = get_le64(p + 32);
	h->t_last = get_le64(p + 40);
	h->watermark = get_le64(p + 48);
	h->payload_hash = get_le64(p + 56);
	return 0;
}

/* --- compression -------------------------------------------------------- */

/**
 * chunk_enc_init - create a compressor
 * @ce:    caller-owned
 * @level: zstd level (0: 3)
 *
 * Return: 0 or -ENOMEM.
 */
int chunk_enc_init(struct chunk_enc *ce, int level)
{
	ZSTD_CCtx *cctx;

	memset(ce, 0, sizeof(*ce));
	cctx = ZSTD_createCCtx();
	if (!cctx)
		return -ENOMEM;
	if (ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel,
						level ? level : 3)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 1))) {
		ZSTD_freeCCtx(cctx);
		return -EINVAL;
	}
	ce->cctx = cctx;
	return 0;
}

/**
 * chunk_enc_release - free what chunk_enc_init() allocated
 * @ce: compressor
 */
void chunk_enc_release(struct chunk_enc *ce)
{
	ZSTD_freeCCtx(ce->cctx);
	free(ce->out);
	memset(ce, 0, sizeof(*ce));
}

/**
 * chunk_enc_build - compress a raw payload into a whole chunk
 * @ce:      compressor
 * @h:       flags, nrec, index, t_first, t_last and watermark set by the
 *           caller; the sizes and the payload checksum are filled in
 * @raw:     raw payload (records)
 * @raw_len: its bytes, at most CHUNK_RAW_MAX
 * @out:     the chunk, header then payload, valid until the next call
 * @out_len: its bytes
 *
 * Return: 0, -ENOMEM, or -EIO if zstd fails.
 */
int chunk_enc_build(struct chunk_enc *ce, struct chunk_hdr *h, const void *raw,
		    size_t raw_len, const uint8_t **out, size_t *out_len)
{
	size_t need = CHUNK_HDR_SIZE + ZSTD_compressBound(raw_len), z;

	if (raw_len > CHUNK_RAW_MAX)
		return -EINVAL;
	if (ce->out_cap < need) {
		uint8_t *n = realloc(ce->out, need);

		if (!n)
			return -ENOMEM;
		ce->out = n;
		ce->out_cap = need;
	}
	z = ZSTD_compress2(ce->cctx, ce->out + CHUNK_HDR_SIZE,
			   ce->out_cap - CHUNK_HDR_SIZE, raw, raw_len);
	if (ZSTD_isError(z))
		return ZSTD_getErrorCode(z) == ZSTD_error_memory_allocation ? -ENOMEM : -EIO;
	h->hdr_size = CHUNK_HDR_SIZE;
	h->payload_size = (uint32_t)z;
	h->raw_size = (uint32_t)raw_len;
	h->payload_hash = XXH64(ce->out + CHUNK_HDR_SIZE, z, 0);
	chunk_hdr_pack(ce->out, h);
	*out = ce->out;
	*out_len = CHUNK_HDR_SIZE + z;
	return 0;
}

/* --- decompression ------------------------------------------------------ */

/**
 * chunk_dec_init - create a decompressor
 * @cd: caller-owned
 *
 * Return: 0 or -ENOMEM.
 */
int chunk_dec_init(struct chunk_dec *cd)
{
	memset(cd, 0, sizeof(*cd));
	cd->dctx = ZSTD_createDCtx();
	return cd->dctx ? 0 : -ENOMEM;
}

/**
 * chunk_dec_release - free what chunk_dec_init() allocated
 * @cd: decompressor
 */
void chunk_dec_release(struct chunk_dec *cd)
{
	ZSTD_freeDCtx(cd->dctx);
	iotap_buf_free(cd->raw, cd->raw_cap);
	memset(cd, 0, sizeof(*cd));
}

/**
 * chunk_dec_into - check and decompress a chunk's payload into a caller's buffer
 * @cd:      decompressor (its zstd context; cd->raw is not touched)
 * @h:       the chunk's header, h->raw_size at most CHUNK_RAW_MAX
 * @payload: h->payload_size bytes
 * @raw:     the destination, an iotap_buf_alloc() buffer of *@raw_cap bytes
 *           or NULL; regrown (its old contents spent) when too small
 * @raw_cap: its size
 *
 * So a decoder thread can decompress into a buffer that then travels to
 * another thread (reader_pool.c) while it goes on with the next chunk.
 * Return: as chunk_dec_payload().
 */
int chunk_dec_into(struct chunk_dec *cd, const struct chunk_hdr *h, const uint8_t *payload,
		   uint8_t **raw, size_t *raw_cap)
{
	unsigned long long content;
	size_t z;

	if (h->raw_size > CHUNK_RAW_MAX)
		return -EBADMSG;
	if (XXH64(payload, h->payload_size, 0) != h->payload_hash)
		return -EBADMSG;
	z = ZSTD_findFrameCompressedSize(payload, h->payload_size);
	if (ZSTD_isError(z) || z != h->payload_size)
		return -EBADMSG;
	content = ZSTD_getFrameContentSize(payload, h->payload_size);
	if (content != ZSTD_CONTENTSIZE_UNKNOWN && content != h->raw_size)
		return -EBADMSG;
	if (*raw_cap < h->raw_size || !*raw) {
		/*
		 * The last payload is spent: regrown, not kept, and at least
		 * one 2 MiB extent a huge page backs (a writer's chunks are up
		 * to 128 KiB raw, older files' 1 MiB), so that it does not regrow chunk by chunk,
		 * copying and faulting pages in anew each time.
		 */
		*raw = iotap_buf_regrow(*raw, raw_cap,
					h->raw_size > IOTAP_BUF_HUGE ? h->raw_size : IOTAP_BUF_HUGE);
		if (!*raw)
			return -ENOMEM;
	}
	z = ZSTD_decompressDCtx(cd->dctx, *raw, h->raw_size, payload, h->payload_size);
	if (ZSTD_isError(z)) {
		if (ZSTD_getErrorCode(z) == ZSTD_error_memory_allocation)
			return -ENOMEM;
		return -EBADMSG;
	}
	if (z != h->raw_size)
		return -EBADMSG;
	return 0;
}

/**
 * chunk_dec_payload - check and decompress a chunk's payload into cd->raw
 * @cd:      decompressor
 * @h:       the chunk's header, h->raw_size at most CHUNK_RAW_MAX
 * @payload: h->payload_size bytes
 *
 * Return: 0; -EBADMSG when the checksum does not match, the payload is not
 * exactly one zstd frame, or it does not decompress to exactly
 * h->raw_size bytes; -ENOMEM.
 */
int chunk_dec_payload(struct chunk_dec *cd, const struct chunk_hdr *h,
		      const uint8_t *payload)
{
	return chunk_dec_into(cd, h, payload, &cd->raw, &cd->raw_cap);
}
