#!/bin/bash
# SPDX-License-Identifier: MIT
# ctl-ring: the flight recorder. A mount with --ring 64k keeps only the
# last 64 KiB of compressed trace in memory; fio writes one file
# sequentially under a steady load. `iotap trace MNT save FILE` during the
# run and after it: each saved file passes `iotap info --strict`, names
# fio's file (NAME), and holds a contiguous run of fio's writes; the one
# saved after the run ends at fio's last write and lacks the first ones:
# nothing lost inside the window and nothing from before it. start, stop and
# rotate are refused on a flight recorder, save on a mount without one,
# and an existing FILE without --force. Triggers: --save-on-mark saves the
# window when that phase begins (the file holds the mark), and
# --save-on-latency write:MS when a write takes longer, once a second at
# most, into FILE, FILE.1, ...
# TIMEOUT: 60
. "$(dirname "$0")/lib.sh"
need_fuse
command -v fio >/dev/null || skip "fio not installed"
D=$T/saved
mkdir $D

expect 2 "not with --trace" "$IOTAP" mount "$BACKING" "$MNT" --ring 1M --trace $D/x.iotap
expect 2 "ring wants" "$IOTAP" mount "$BACKING" "$MNT" --ring 1k
iotap_mount "$BACKING" "$MNT" --ring 64k
"$IOTAP" status "$MNT" | grep -q "flight recorder" || fail "status does not show the flight recorder"
expect 1 "flight recorder" "$IOTAP" trace "$MNT" start $D/x.iotap
expect 1 "flight recorder" "$IOTAP" trace "$MNT" rotate

fio --name=w --directory="$MNT" --rw=write --bs=4k --size=64M --ioengine=psync \
	--rate_iops=5000 --fallocate=none >/dev/null 2>$T/fio.err &
FIO=$!
at_exit "kill $FIO 2>/dev/null"
sleep 2
check "save during the run" "$IOTAP" trace "$MNT" save $D/during.iotap
wait $FIO || { cat $T/fio.err; fail "fio failed"; }
check "save after the run" "$IOTAP" trace "$MNT" save $D/after.iotap
expect 1 "exists; use --force" "$IOTAP" trace "$MNT" save $D/after.iotap
check "save --force" "$IOTAP" trace "$MNT" save --force $D/after.iotap
iotap_umount "$MNT"

# window: the writes of fio's file, in start order; contiguous, and (after)
# ending at the last of the 16384 writes, without the first ones
window() {	# window FILE -> "count first last gaps"
	"$IOTAP" dump "$1" | awk '
		$4 == "NAME" && /name="w.0.0"/ { for (i = 5; i <= NF; i++) if ($i ~ /^file=/) f = substr($i, 6) }
		$4 == "write" && $5 == f { o = $6 / 4096; if (n && o != prev + 1) gaps++;
			if (!n) first = o; prev = o; n++ }
		END { printf "%d %d %d %d\n", n, first, prev, gaps }'
}
for f in during after; do
	"$IOTAP" info --strict $D/$f.iotap > $T/info 2>&1 || { cat $T/info; fail "$f.iotap is not clean"; }
	expect_eq "$f.iotap mode" "$(stat -c %a $D/$f.iotap)" 600
done
read n first last gaps <<< "$(window $D/after.iotap)"
note "after: $n writes, blocks $first..$last, $gaps gaps"
[ "$n" -gt 100 ] || fail "the saved window holds $n writes of fio's file (unnamed file?)"
expect_eq "no gap in the window" "$gaps" 0
expect_eq "the window ends at fio's last write" "$last" 16383
[ "$first" -gt 0 ] || fail "the window starts at the first write: nothing was dropped"
read n2 first2 last2 gaps2 <<< "$(window $D/during.iotap)"
note "during: $n2 writes, blocks $first2..$last2, $gaps2 gaps"
# (how much of the start it still holds depends on how far fio got)
[ "$n2" -gt 100 ] && [ "$gaps2" = 0 ] && [ "$last2" -lt 16383 ] ||
	fail "the window saved during the run: $n2 writes, $first2..$last2, $gaps2 gaps"

iotap_mount "$BACKING" "$MNT"
expect 1 "no flight recorder" "$IOTAP" trace "$MNT" save $D/none.iotap
iotap_umount "$MNT"

expect 2 "need --save-to" "$IOTAP" mount "$BACKING" "$MNT" --ring 1M --save-on-mark x
expect 2 "needs --ring" "$IOTAP" mount "$BACKING" "$MNT" --save-to $D/t.iotap --save-on-mark x
expect 2 "OP:MS" "$IOTAP" mount "$BACKING" "$MNT" --ring 1M --save-to $D/t.iotap --save-on-latency nosuchop:3
wait_file() { local i; for ((i = 0; i < 50; i++)); do [ -e "$1" ] && return 0; sleep 0.1; done; return 1; }
iotap_mount "$BACKING" "$MNT" --ring 1M --save-to $D/trig.iotap --save-on-mark boom --log $T/trig.log
echo x > "$MNT/before"
check "mark" "$IOTAP" mark "$MNT" boom
wait_file $D/trig.iotap || { cat $T/trig.log; fail "the mark did not save the window"; }
sleep 0.3
"$IOTAP" info --strict $D/trig.iotap >$T/info 2>&1 || { cat $T/info; fail "triggered save is not clean"; }
"$IOTAP" dump $D/trig.iotap | grep -q 'PHASE.*boom\|boom' || fail "the triggered save lacks the mark"
grep -q "saved to '$D/trig.iotap': mark 'boom'" $T/trig.log || { cat $T/trig.log; fail "the log does not say why it saved"; }
iotap_umount "$MNT"
iotap_mount "$BACKING" "$MNT" --ring 1M --save-to $D/trig.iotap --save-on-latency write:0.001 --log $T/lat.log
dd if=/dev/zero of="$MNT/slow" bs=4k count=200 2>/dev/null
wait_file $D/trig.1.iotap || { cat $T/lat.log; fail "a write over 1 us did not save the window"; }
sleep 0.3
[ -e $D/trig.2.iotap ] && fail "200 slow writes within 0.5 s saved more than once"
"$IOTAP" info --strict $D/trig.1.iotap >$T/info 2>&1 || { cat $T/info; fail "latency save is not clean"; }
grep -q "write took .* ms (more than 0.001 ms)" $T/lat.log || { cat $T/lat.log; fail "the log does not say which op"; }
iotap_umount "$MNT"
exit 0
