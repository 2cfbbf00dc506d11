#!/bin/bash
# SPDX-License-Identifier: MIT
# ctl-top-trace: `iotap top TRACE` over a finished trace. fio writes 4 KiB
# blocks at a fixed rate through a traced mount for a few seconds; top
# over the trace (--speed 0 --batch) shows one frame per second of trace
# time, and each full window's ops/s, write MB/s and read MB/s are exactly
# what `iotap dump` of the same trace holds in that second (ops by start
# time), and the busiest file is fio's. --speed paces the frames (4 windows
# at --speed 4 take about a second), -n stops after COUNT frames, and bad
# input is refused.
# TIMEOUT: 60
. "$(dirname "$0")/lib.sh"
need_fuse
command -v fio >/dev/null || skip "fio not installed"

iotap_mount "$BACKING" "$MNT" --trace $T/t.iotap
fio --name=w --directory="$MNT" --rw=write --bs=4k --size=16M --rate_iops=400 --runtime=4 \
	--time_based --ioengine=psync --fallocate=none >/dev/null 2>$T/fio.err ||
	{ cat $T/fio.err; fail "fio failed"; }
iotap_umount "$MNT"

check "top over the trace" "$IOTAP" top $T/t.iotap --speed 0 --batch > $T/top
"$IOTAP" dump $T/t.iotap > $T/dump
# per second of trace time: ops, MB/s written and read, as top prints them
awk '$1 !~ /^#/ && $4 ~ /^[a-z_]+$/ { s = int($1); n[s]++; if (s > m) m = s
	if ($4 == "write" && $8 > 0) w[s] += $8; if ($4 == "read" && $8 > 0) r[s] += $8 }
	END { for (i = 0; i <= m; i++) printf "%d %.1f %.2f %.2f\n", i, n[i], w[i] / 1e6, r[i] / 1e6 }' \
	$T/dump > $T/want
awk '/^iotap top/ { match($0, /over [0-9.]+ s, [0-9.]+ to/); split(substr($0, RSTART, RLENGTH), a, /[ ,]+/)
		full = (a[2] == "1.00"); from = a[4] }
	/^ops\/s/ && full { printf "%d %s %s %s\n", from, $2, $7, $4 }' $T/top > $T/got
nfull=$(wc -l < $T/got)
[ "$nfull" -ge 4 ] || { cat $T/top; fail "top showed $nfull full one-second windows, want at least 4"; }
while read -r sec ops wmb rmb; do
	want=$(awk -v s=$sec '$1 == s { print $2, $3, $4 }' $T/want)
	expect_eq "second $sec: ops/s, write MB/s, read MB/s" "$ops $wmb $rmb" "$want"
done < $T/got
# the seconds after the first hold fio's rate on average (400 writes of 4 KiB =
# 1.64 MB/s; fio's pacing lags and catches up in bursts on a loaded machine)
awk '$1 >= 1 { n++; o += $2; w += $3 } END { exit !(n && o / n >= 300 && o / n <= 500 &&
	w / n >= 1.2 && w / n <= 2.1) }' $T/got || { cat $T/got; fail "the windows do not average fio's 400 writes/s"; }
grep -A2 'FILE ' $T/top | grep -q 'w\.0\.0' || fail "fio's file is not the busiest"

# pacing and -n
start=$(date +%s.%N)
check "top --speed 4 -n 4" "$IOTAP" top $T/t.iotap --speed 4 -n 4 --batch > $T/top4
el=$(awk -v a=$start -v b=$(date +%s.%N) 'BEGIN { printf "%.2f", b - a }')
expect_eq "frames with -n 4" "$(grep -c '^iotap top' $T/top4)" 4
awk -v e=$el 'BEGIN { exit !(e >= 0.9) }' || fail "4 windows at --speed 4 took $el s, want about 1"
note "4 windows at --speed 4: $el s"

# refusals
expect 2 "--speed wants" "$IOTAP" top $T/t.iotap --speed -1
expect 2 "--speed plays a TRACE" "$IOTAP" top "$BACKING" --speed 2
echo "not a trace" > $T/notes.txt
expect 1 "cannot read trace" "$IOTAP" top $T/notes.txt --batch
exit 0
