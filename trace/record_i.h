/* SPDX-License-Identifier: MIT */
/*
 * record_i.h - what the record encoder (record.c) and decoder
 * (record_decode.c) share: the presence bits of FORMAT.md "Records" and
 * the delta coding's predictions, which both sides must make alike
 */
#ifndef IOTAP_RECORD_I_H
#define IOTAP_RECORD_I_H

#include <stdint.h>

#include "trace_i.h"

/* Presence bits of an OP record, FORMAT.md "OP record". */
#define OPB_OFF		(1u << 0)
#define OPB_LEN		(1u << 1)
#define OPB_RES		(1u << 2)
#define OPB_FH		(1u << 3)
#define OPB_FILE	(1u << 4)
#define OPB_TID		(1u << 5)
#define OPB_FLAGS	(1u << 6)
#define OPB_PID		(1u << 7)
#define OPB_UID		(1u << 8)
#define OPB_GID		(1u << 9)
#define OPB_FILE2	(1u << 10)
#define OPB_MODE	(1u << 11)
#define OPB_AUX		(1u << 12)
#define OPB_NAME	(1u << 13)
#define OPB_ALL		((1u << 14) - 1)

/* Presence bits of every other record type, FORMAT.md "Other records". */
#define GB_OP		(1u << 0)
#define GB_FLAGS	(1u << 1)
#define GB_DUR		(1u << 2)
#define GB_TID		(1u << 3)
#define GB_PID		(1u << 4)
#define GB_UID		(1u << 5)
#define GB_GID		(1u << 6)
#define GB_FILE		(1u << 7)
#define GB_FILE2	(1u << 8)
#define GB_FH		(1u << 9)
#define GB_OFF		(1u << 10)
#define GB_LEN		(1u << 11)
#define GB_RES		(1u << 12)
#define GB_MODE		(1u << 13)
#define GB_AUX		(1u << 14)
#define GB_NAME		(1u << 15)
#define GB_ALL		((1u << 16) - 1)

#define rec_unlikely(x)	__builtin_expect(!!(x), 0)

static inline uint64_t zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t unzigzag(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

static inline unsigned int file_slot(uint64_t file)
{
	return (unsigned int)((file * 0x9E3779B97F4A7C15ull) >> 56);
}

/* Ops whose offset, fh and length are predicted from the file table. */
static inline int is_data_op(unsigned int op)
{
	return op == IOTAP_OP_READ || op == IOTAP_OP_WRITE;
}

/* Where a READ/WRITE ended: what the next sequential one starts at. */
static inline uint64_t data_end(uint64_t offset, uint64_t length, int64_t result)
{
	return offset + (result >= 0 ? (uint64_t)result : length);
}

#endif /* IOTAP_RECORD_I_H */
