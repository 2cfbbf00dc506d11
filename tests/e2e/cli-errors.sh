#!/bin/bash
# SPDX-License-Identifier: MIT
# cli-errors: bad input gets a clear message and the right exit status,
# never a crash: unknown commands and options (2), missing, empty,
# truncated, corrupted, wrong-magic and future-version traces (1 with a
# message naming the problem), a damaged trace still reports what it can.
. "$(dirname "$0")/lib.sh"
need_fuse


expect 2 "not an iotap command" "$IOTAP" frobnicate
expect 2 "usage: iotap" "$IOTAP"
expect 2 "unknown option" "$IOTAP" info --bogus x
expect 2 "TRACE is required" "$IOTAP" report
expect 2 "BACKING and MOUNTPOINT are required" "$IOTAP" mount /tmp
"$IOTAP" --help | grep -q "^  mount" || fail "iotap --help lists no commands"
for c in mount umount mark info dump report; do
	"$IOTAP" $c --help > $T/h.txt || fail "iotap $c --help exited non-zero"
	grep -q "^usage: iotap $c" $T/h.txt || fail "iotap $c --help has no usage line"
done

expect 1 "No such file" "$IOTAP" info $T/missing.iotap
: > $T/empty.iotap
expect 1 "empty" "$IOTAP" info $T/empty.iotap
expect 1 "empty" "$IOTAP" report $T/empty.iotap
head -c 4096 /dev/urandom > $T/random.iotap
expect 1 "not an iotap trace" "$IOTAP" dump $T/random.iotap
expect 1 "is a directory\|cannot" "$IOTAP" info $T

# a real trace with several chunks to damage
TR=$T/good.iotap
iotap_mount "$BACKING" "$MNT" --trace "$TR"
for i in $(seq 1 3); do
	dd if=/dev/zero of="$MNT/f$i" bs=4k count=2000 status=none || fail "dd"
	sleep 1.2	# at least one chunk per second
done
iotap_umount "$MNT"
"$IOTAP" info --strict "$TR" > $T/info.txt || { cat $T/info.txt; fail "good trace not clean"; }
nops=$(count_ops "$TR" write)
expect_eq "writes in good trace" "$nops" 6000
size=$(stat -c %s "$TR")

# wrong magic
cp "$TR" $T/magic.iotap
printf 'XXXX' | dd of=$T/magic.iotap bs=1 seek=0 conv=notrunc status=none
expect 1 "not an iotap trace" "$IOTAP" info $T/magic.iotap

# future major version (bytes 8-9, little-endian)
cp "$TR" $T/future.iotap
printf '\x09\x00' | dd of=$T/future.iotap bs=1 seek=8 conv=notrunc status=none
expect 1 "newer than this iotap" "$IOTAP" report $T/future.iotap

# truncated in the middle: readable, says so, fewer records
cp "$TR" $T/trunc.iotap
truncate -s $((size * 2 / 3)) $T/trunc.iotap
"$IOTAP" info $T/trunc.iotap > $T/i.txt 2>&1 || { cat $T/i.txt; fail "info on truncated trace failed"; }
grep -q "incomplete last chunk\|no end record" $T/i.txt || fail "info does not report the truncation"
"$IOTAP" info --strict $T/trunc.iotap > /dev/null 2>&1 && fail "--strict accepted a truncated trace"
t=$(count_ops $T/trunc.iotap write)
[ "$t" -gt 0 ] && [ "$t" -lt 6000 ] || fail "truncated trace gave $t writes"
"$IOTAP" report $T/trunc.iotap > /dev/null 2>$T/err || fail "report on a truncated trace"

# a zeroed range in the middle: the chunks after it are still read
cp "$TR" $T/zero.iotap
dd if=/dev/zero of=$T/zero.iotap bs=1 seek=$((size / 2)) count=200 conv=notrunc status=none
"$IOTAP" info $T/zero.iotap > $T/i.txt 2>&1 || { cat $T/i.txt; fail "info on zeroed trace failed"; }
grep -q "bad chunk" $T/i.txt || { cat $T/i.txt; fail "info does not report the damage"; }
grep -q "^complete *yes" $T/i.txt || fail "the END record after the damage was not recovered"

# flipped bytes anywhere: never a crash
for i in $(seq 1 40); do
	cp "$TR" $T/flip.iotap
	off=$(( (RANDOM * 32768 + RANDOM) % size ))
	printf "\\x$(printf %02x $((RANDOM % 256)))" | dd of=$T/flip.iotap bs=1 seek=$off conv=notrunc status=none
	timeout 20 "$IOTAP" report $T/flip.iotap > /dev/null 2>&1
	rc=$?
	[ $rc -le 2 ] || fail "report crashed or hung (status $rc) with a byte flipped at $off"
done
exit 0
