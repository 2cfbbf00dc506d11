#!/bin/bash
# SPDX-License-Identifier: MIT
# trust-usage: input that cannot mean what it says is refused, not accepted
# in silence (issue 27, item 15).
#
# `iotap mark MNT x --end` on a phase never begun (or ended already) is an
# error, status 1, and leaves no PHASE record; one begun ends as before.
# `compare --label a T --label b`: a label with no TRACE after it, or an
# empty one, is a usage error (2). `mount --only-pid PID` of no running
# process is a usage error (2): it would record nothing.
. "$(dirname "$0")/lib.sh"
need_fuse

TR=$T/u.iotap
iotap_mount "$BACKING" "$MNT" --trace $TR
expect 1 "phase 'x' is not open on '$MNT' (never begun" "$IOTAP" mark "$MNT" x --end
check "mark y" "$IOTAP" mark "$MNT" y
check "end y" "$IOTAP" mark "$MNT" y --end
expect 1 "phase 'y' is not open" "$IOTAP" mark "$MNT" y --end
iotap_umount "$MNT"
n=$("$IOTAP" dump $TR | awk '$4 == "PHASE"' | wc -l)
expect_eq "PHASE records (y begin, y end)" "$n" 2

check "a trace" "$IOTAP" run dd $T --bs 4k --count 4 --trace $T/c.iotap -q
expect 2 "--label 'b' has no TRACE after it" "$IOTAP" compare --label a $T/c.iotap --label b
expect 2 "--label 'b' has no TRACE after it" "$IOTAP" compare --label=a $T/c.iotap --label=b
expect 2 "--label wants a NAME" "$IOTAP" compare --label "" $T/c.iotap
"$IOTAP" compare -l a $T/c.iotap -l b $T/c.iotap > /dev/null || fail "labels that each have a trace"

# a pid no process has: nothing would ever be recorded
pid=$(sh -c 'echo $$')
while kill -0 $pid 2> /dev/null; do pid=$((pid + 1)); done
expect 2 "--only-pid $pid: no such process" "$IOTAP" mount "$BACKING" "$MNT" --trace $T/p.iotap \
	--only-pid $pid
[ -e $T/p.iotap ] && fail "a refused mount created its trace"
mountpoint -q "$MNT" && fail "a refused mount was made"

echo "trust-usage: ok"
