#!/bin/bash
# SPDX-License-Identifier: MIT
# run-hdparm-peer: `iotap run hdparm` beside the real hdparm 9.65 on one
# loop device, interleaved, two rounds each of -T -t, in the order real,
# iotap, iotap, real:
#   - -t never reads the page cache: the first iotap run comes right after
#     the real hdparm and the second right after itself; no run may be more
#     than 3x the real tool's best (before hdparm's sync-and-settle was
#     followed, back-to-back runs read 4-8x the device's rate);
#   - the means of -T and -t are the real tool's within 2x either way:
#     -T is a memory-bandwidth test, and on a loaded 2-core box single
#     runs of the real hdparm alone spread 2.5-8.7 GB/s, so a tighter
#     bound here would test the neighbours; tests/bench/hdparm-peer.sh
#     measures the ratio over more rounds (BENCHMARKS.md);
#   - a directory target with -T only writes the 2 MiB it re-reads, so a
#     32 MiB filesystem is enough (it used to need the whole 1 GiB --size).
. "$(dirname "$0")/lib.sh"

command -v hdparm > /dev/null || skip "hdparm is not installed"
command -v losetup > /dev/null || skip "losetup is not installed"

truncate -s 256M $T/disk.img
dd if=/dev/urandom of=$T/disk.img bs=1M count=256 conv=notrunc status=none || fail "fill the image"
# --direct-io: the loop device reads its image with O_DIRECT, so neither
# tool can be served by the image file's own page cache (one buffered run
# of 18 once read 2.3 GB/s from it)
LOOP=$(losetup -f --show --direct-io=on $T/disk.img 2>/dev/null) ||
	LOOP=$(losetup -f --show $T/disk.img) || skip "no loop device"
at_exit 'losetup -d $LOOP 2>/dev/null'

rate() { sed -n "s/^ Timing $1.*= *\([0-9.]*\) MB\/sec$/\1/p" $2; }
run() {	# run real|ours N
	if [ $1 = real ]; then
		hdparm -T -t $LOOP > $T/$1.$2 || fail "hdparm -T -t"
	else
		"$IOTAP" run hdparm $LOOP -T -t -q > $T/$1.$2 || fail "iotap run hdparm"
	fi
	rate cached $T/$1.$2 >> $T/$1.T
	rate buffered $T/$1.$2 >> $T/$1.t
}
run real 1; run ours 1; run ours 2; run real 2
for f in real.T real.t ours.T ours.t; do
	expect_eq "$f: two figures" "$(wc -l < $T/$f)" 2
done
note "hdparm -T: $(tr '\n' ' ' < $T/real.T)  iotap: $(tr '\n' ' ' < $T/ours.T)"
note "hdparm -t: $(tr '\n' ' ' < $T/real.t)  iotap: $(tr '\n' ' ' < $T/ours.t)"

mean() { awk '{ s += $1 } END { print s / NR }' $1; }
ratio() { awk -v a="$(mean $T/ours.$1)" -v b="$(mean $T/real.$1)" 'BEGIN { printf "%.3f", a / b }'; }
within() { awk -v r=$1 -v lo=$2 -v hi=$3 'BEGIN { exit !(r >= lo && r <= hi) }'; }
rT=$(ratio T); rt=$(ratio t)
note "mean ratio iotap/hdparm: -T $rT, -t $rt"
best=$(sort -g $T/real.t | tail -1)
while read -r x; do
	awk -v x=$x -v b=$best 'BEGIN { exit !(x <= 3 * b) }' ||
		fail "-t read the page cache: $x MB/s, hdparm's best $best"
done < $T/ours.t
within $rT 0.5 2 || fail "-T mean $rT x hdparm's"
within $rt 0.5 2 || fail "-t mean $rt x hdparm's"

# -T alone on a directory needs only its 2 MiB
mkdir $T/small
mount -t tmpfs -o size=32m tmpfs $T/small || skip "cannot mount a tmpfs"
at_exit 'umount $T/small 2>/dev/null'
"$IOTAP" run hdparm $T/small -T -q --trace $T/h.iotap > $T/small.txt 2> $T/small.err ||
	{ cat $T/small.err; fail "-T on a 32 MiB directory"; }
grep -q '^ Timing cached reads:' $T/small.txt || fail "-T line"
"$IOTAP" dump $T/h.iotap > $T/hd.txt || fail dump
expect_eq "bytes written for -T alone" \
	"$(awk '$4 == "write" { n += $8 } END { print n + 0 }' $T/hd.txt)" 2097152
exit 0
