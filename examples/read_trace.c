// SPDX-License-Identifier: MIT
/*
 * read_trace.c - the smallest useful consumer of iotap_trace.h
 *
 * Reads a trace in time order and prints, per op type, how many requests
 * and bytes it holds: everything a custom analysis needs is in this loop.
 *
 *   build/examples/read_trace cap.iotap
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "iotap_trace.h"

int main(int argc, char **argv)
{
	uint64_t count[IOTAP_OP_MAX] = { 0 }, bytes[IOTAP_OP_MAX] = { 0 };
	struct iotap_trace_reader *r;
	struct iotap_trace_rec rec;
	int ret, op;

	if (argc != 2) {
		fprintf(stderr, "usage: read_trace TRACE\n");
		return 2;
	}
	ret = iotap_trace_reader_open(&r, argv[1], 0);
	if (ret) {
		fprintf(stderr, "read_trace: cannot read '%s': %s\n", argv[1],
			iotap_trace_strerror(ret));
		return 1;
	}
	while ((ret = iotap_trace_reader_next(r, &rec)) > 0) {
		if (rec.type != IOTAP_REC_OP || rec.op >= IOTAP_OP_MAX)
			continue;
		count[rec.op]++;
		if (rec.result > 0 && (rec.op == IOTAP_OP_READ || rec.op == IOTAP_OP_WRITE))
			bytes[rec.op] += (uint64_t)rec.result;
	}
	iotap_trace_reader_close(r);
	if (ret < 0) {
		fprintf(stderr, "read_trace: %s\n", strerror(-ret));
		return 1;
	}
	for (op = 0; op < IOTAP_OP_MAX; op++)
		if (count[op])
			printf("%-16s %10" PRIu64 " ops %14" PRIu64 " bytes\n",
			       iotap_trace_op_name(op), count[op], bytes[op]);
	return 0;
}
