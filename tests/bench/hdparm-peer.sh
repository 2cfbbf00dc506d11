#!/bin/bash
# SPDX-License-Identifier: MIT
# hdparm-peer.sh - does `iotap run hdparm -T -t` give the real hdparm's
# figures on the same device? (a benchmark, not a test)
#
# usage: tests/bench/hdparm-peer.sh [--rounds N] [--size MIB] [DEVICE]
#
# Without DEVICE it makes a loop device over a --size MiB file (default
# 512) of random data in $TMPDIR and removes it at the end. Each round runs
# `hdparm -T -t DEV` then `iotap run hdparm DEV -T -t`, alternating which
# goes first, so drift on a shared VM hits both alike. Prints every round,
# then per timing the median of each tool, the ratio iotap/hdparm and
# whether it is within ±10%. Needs root, hdparm (Debian package hdparm)
# and losetup. IOTAP may name the iotap binary.
set -u

ROUNDS=5
SIZE=512
DEV=
while [ $# -gt 0 ]; do
	case $1 in
	--rounds) ROUNDS=$2; shift 2 ;;
	--size) SIZE=$2; shift 2 ;;
	-h|--help) sed -n '3,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "hdparm-peer.sh: unknown option '$1'" >&2; exit 2 ;;
	*) DEV=$1; shift ;;
	esac
done
IOTAP=${IOTAP:-$(cd "$(dirname "$0")/../.." && pwd)/build/tools/iotap}
command -v hdparm > /dev/null || { echo "hdparm-peer.sh: hdparm is not installed" >&2; exit 77; }
[ -x "$IOTAP" ] || { echo "hdparm-peer.sh: no iotap binary at $IOTAP" >&2; exit 2; }

W=$(mktemp -d "${TMPDIR:-/tmp}/hdparm-peer.XXXXXX")
LOOP=
cleanup() { [ -n "$LOOP" ] && losetup -d "$LOOP"; rm -rf "$W"; }
trap cleanup EXIT
trap 'exit 130' INT TERM
if [ -z "$DEV" ]; then
	dd if=/dev/urandom of=$W/disk.img bs=1M count=$SIZE status=none || exit 1
	LOOP=$(losetup -f --show $W/disk.img) || exit 1
	DEV=$LOOP
fi

rate() { sed -n "s/^ Timing $1.*= *\([0-9.]*\) MB\/sec$/\1/p" $2; }
real() { hdparm -T -t $DEV > $W/out || exit 1; rate cached $W/out >> $W/real.T; rate buffered $W/out >> $W/real.t; }
ours() { "$IOTAP" run hdparm $DEV -T -t -q > $W/out || exit 1; rate cached $W/out >> $W/ours.T; rate buffered $W/out >> $W/ours.t; }

echo "device $DEV, $ROUNDS rounds, $(uname -r), $(hdparm -V)"
for ((i = 1; i <= ROUNDS; i++)); do
	if [ $((i % 2)) = 1 ]; then real; ours; else ours; real; fi
	printf 'round %d: -T hdparm %s iotap %s   -t hdparm %s iotap %s\n' $i \
		"$(tail -1 $W/real.T)" "$(tail -1 $W/ours.T)" "$(tail -1 $W/real.t)" "$(tail -1 $W/ours.t)"
done
med() { sort -g $1 | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
printf '\n%-22s %10s %10s %7s\n' timing "hdparm" "iotap" ratio
for t in T t; do
	a=$(med $W/real.$t); b=$(med $W/ours.$t)
	awk -v n="-$t (MB/sec, median)" -v a=$a -v b=$b 'BEGIN {
		r = b / a; printf "%-22s %10.1f %10.1f %7.3f %s\n", n, a, b, r,
			(r >= 0.9 && r <= 1.1) ? "within 10%" : "OUTSIDE 10%" }'
done
