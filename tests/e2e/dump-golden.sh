#!/bin/bash
# SPDX-License-Identifier: MIT
# dump-golden: `iotap dump` of the format-1.0 golden trace (every record
# type and op, edge values up to 2^64 - 1, names to escape, samples) is
# byte for byte the committed text, CSV, JSON lines and file-order text
# (tests/data/golden-v1.0.dump*: what dump printed when its lines were
# built with fprintf), with one decoder thread and with three. dump's fast
# formatter (iotap_fmt_*, tools/cmd_dump.c) must print exactly what
# printf did. No FUSE needed.
. "$(dirname "$0")/lib.sh"
D=$IOTAP_SRC/tests/data
G=$D/golden-v1.0.iotap
[ -x "$IOTAP" ] || fail "no iotap binary at $IOTAP"

for threads in 1 3; do
	for v in "dump.txt:" "dump.csv:--csv" "dump.jsonl:--json" \
		 "dump-file-order.txt:--file-order --no-header"; do
		want=$D/golden-v1.0.${v%%:*}
		IOTAP_READ_THREADS=$threads "$IOTAP" dump ${v#*:} "$G" > $T/out 2> $T/err ||
			fail "dump ${v#*:} (threads $threads)"
		cmp $T/out "$want" || {
			diff $T/out "$want" | head -20 >&2
			fail "dump ${v#*:} (threads $threads) differs from $want"
		}
	done
done
# the loss is said on stderr, not in the output
grep -q "lost 5148 records" $T/err || { cat $T/err >&2; fail "no loss warning"; }
exit 0
