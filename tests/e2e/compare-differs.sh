#!/bin/bash
# SPDX-License-Identifier: MIT
# compare-differs: compare lists what differs between the runs besides
# their storage (issue 27, item 13): the workload's parameters (paths,
# --trace and -q left out), how the trace was made, the tool, and a
# length more than 10% (and half a second) apart. Runs alike in all of it
# print no such block. No FUSE needed.
. "$(dirname "$0")/lib.sh"
[ -x "$IOTAP" ] || fail "no iotap binary at $IOTAP"

mkdir -p $T/d1 $T/d2
check "dd 4k" "$IOTAP" run dd $T/d1 --bs 4k --count 64 --trace $T/a.iotap -q
check "dd 8k" "$IOTAP" run dd $T/d2 --bs 8k --count 64 --trace $T/b.iotap -q
check "dd 4k again" "$IOTAP" run dd $T/d2 --bs 4k --count 64 --trace $T/c.iotap -q

"$IOTAP" compare --no-progress $T/a.iotap $T/b.iotap > $T/ab.txt || fail "compare a b"
grep -q "^runs differ besides storage" $T/ab.txt || { cat $T/ab.txt; fail "no 'runs differ' block"; }
grep -q "^  a.iotap  *workload: dd --bs 4k --count 64\$" $T/ab.txt ||
	{ cat $T/ab.txt; fail "a's workload line"; }
grep -q "^  b.iotap  *workload: dd --bs 8k --count 64\$" $T/ab.txt ||
	{ cat $T/ab.txt; fail "b's workload line"; }
grep -q "duration:" $T/ab.txt && { cat $T/ab.txt; fail "two short runs shown as of other lengths"; }

"$IOTAP" compare --no-progress $T/a.iotap $T/c.iotap > $T/ac.txt || fail "compare a c"
grep -q "runs differ" $T/ac.txt && { cat $T/ac.txt; fail "alike runs (other dirs and traces) said to differ"; }

# a capture against a workload run: how each was made differs
cp "$IOTAP_SRC/tests/data/golden-v1.0.iotap" $T/g.iotap 2> /dev/null ||
	skip "no golden trace"
"$IOTAP" compare --no-progress $T/a.iotap $T/g.iotap > $T/ag.txt || fail "compare a golden"
grep -q "^  a.iotap  *made by: workload" $T/ag.txt || { cat $T/ag.txt; fail "no 'made by' line"; }
echo "compare-differs: ok"
