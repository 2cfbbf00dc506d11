#!/bin/bash
# SPDX-License-Identifier: MIT
# run-errors: bad input to `iotap run` gets a clear message and exit 2
# before anything is written (missing, non-directory or read-only DIR, a
# size that does not fit the free space, a chunk that is not a power of
# two, an unknown option or workload, an existing trace); Ctrl-C in the
# middle of a run removes the files, prints partial results marked as
# such, exits 130 and leaves a complete, readable trace.
. "$(dirname "$0")/lib.sh"
[ -x "$IOTAP" ] || fail "no iotap binary at $IOTAP"
D=$T/d
mkdir -p $D


expect 2 "not a workload" "$IOTAP" run frob $D
expect 2 "usage: iotap run WORKLOAD" "$IOTAP" run
expect 2 "unknown option" "$IOTAP" run bonnie $D --bogus
expect 2 "unknown option" "$IOTAP" run iozone $D -Z
expect 2 "DIR is required" "$IOTAP" run bonnie
expect 2 "No such file" "$IOTAP" run bonnie $T/missing -s 16 -r 8
touch $T/file
expect 2 "not a directory" "$IOTAP" run bonnie $T/file -s 16 -r 8
expect 2 "not a power of two" "$IOTAP" run bonnie $D -s 16:1000 -r 8
expect 2 "not a power of two" "$IOTAP" run bonnie $D -s 16:128 -r 8
expect 2 "not a power of two" "$IOTAP" run bonnie $D -s 16:2M -r 8
expect 2 "free" "$IOTAP" run bonnie $D -s 100000000 -r 8
expect 2 "free" "$IOTAP" run iozone $D -s 100000g
expect 2 "free" "$IOTAP" run dd $D --bs 1G --count 100000
expect 2 "needs -f" "$IOTAP" run bonnie $D -s 16 -r 8 -D
expect 2 "bad size" "$IOTAP" run bonnie $D -s lots
expect 2 "-i 3 is not modelled" "$IOTAP" run iozone $D -i 3
expect 2 "larger than the file" "$IOTAP" run iozone $D -s 64k -r 128k
expect 2 "--bs and --count" "$IOTAP" run dd $D
touch $T/exists.iotap
# an existing file is a runtime refusal (1), as for mount and replay
expect 1 "exists; use --force" "$IOTAP" run bonnie $D -s 16 -r 8 --trace $T/exists.iotap
if [ "$(id -u)" -eq 0 ]; then
	mkdir -p $T/ro
	mount -t tmpfs -o ro,size=1m tmpfs $T/ro && _mounts="$_mounts $T/ro"
	grep -q " $T/ro tmpfs ro" /proc/mounts || fail "could not make a read-only tmpfs"
	expect 2 "read-only" "$IOTAP" run bonnie $T/ro -s 16 -r 8
	umount $T/ro
else
	chmod 555 $D
	expect 2 "no permission" "$IOTAP" run bonnie $D -s 16 -r 8
	chmod 755 $D
fi
for w in bonnie iozone dd hdparm; do
	"$IOTAP" run $w --help > $T/h.txt || fail "run $w --help exited non-zero"
	grep -q "^usage: iotap run $w" $T/h.txt || fail "run $w --help has no usage line"
done

# Ctrl-C: partial results, files removed, exit 130, trace complete
"$IOTAP" run bonnie $D -s 4096 -r 8 -n 0 -f -m intr --trace $T/intr.iotap \
	> $T/intr.out 2> $T/intr.err &
pid=$!
i=0
while [ -z "$(ls -A $D)" ] && [ $i -lt 100 ]; do	# until the run has started writing
	sleep 0.1
	i=$((i + 1))
done
sleep 1
kill -INT $pid
wait $pid
rc=$?
expect_eq "exit status after Ctrl-C" $rc 130
[ -z "$(ls -A $D)" ] || fail "Ctrl-C left files: $(ls -A $D)"
grep -q "partial results: interrupted during" $T/intr.out || { cat $T/intr.out; fail "not marked partial"; }
grep -q "^1\.98,2\.00a,intr," $T/intr.out || fail "no CSV line after Ctrl-C"
grep -q "interrupted" $T/intr.err || fail "no interruption note on stderr"
"$IOTAP" info --strict $T/intr.iotap > $T/info.txt || { cat $T/info.txt; fail "trace damaged"; }
grep -q "^complete *yes" $T/info.txt || fail "trace not closed"
"$IOTAP" dump $T/intr.iotap | awk '$4 == "PHASE"' > $T/ph.txt
[ "$(wc -l < $T/ph.txt)" -ge 2 ] || fail "no phase markers"
[ "$(tail -1 $T/ph.txt | awk '{ print $5 }')" = end ] || fail "the interrupted phase has no END"
exit 0
