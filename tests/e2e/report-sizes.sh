#!/bin/bash
# SPDX-License-Identifier: MIT
# report-sizes: the request sizes a report shows are sizes requests had,
# with their real shares (issue 27, item 5): 100 writes of 3000 bytes and
# 100 of 4096 share a size bucket, and were shown as "4k 50.0%" (the
# bucket); tar's 10,240-byte writes as "10196b", a bucket's mean. A
# bucket of many sizes shows as a range ("8k-16k").
. "$(dirname "$0")/lib.sh"
need_fuse
TR=$T/cap.iotap

iotap_mount "$BACKING" "$MNT" --trace "$TR"
"$IOTAP" mark "$MNT" two || fail "mark"
dd if=/dev/zero of="$MNT/a" bs=3000 count=100 status=none || fail "dd 3000"
dd if=/dev/zero of="$MNT/b" bs=4096 count=100 status=none || fail "dd 4096"
"$IOTAP" mark "$MNT" tar || fail "mark"
dd if=/dev/zero of="$MNT/c" bs=10240 count=90 status=none || fail "dd 10240"
dd if=/dev/zero of="$MNT/d" bs=9000 count=10 status=none || fail "dd 9000"
"$IOTAP" mark "$MNT" many || fail "mark"
for s in 9000 10000 11000 12000 13000; do
	dd if=/dev/zero of="$MNT/e$s" bs=$s count=10 status=none || fail "dd $s"
done
iotap_umount "$MNT"
"$IOTAP" report "$TR" -v --no-progress > $T/rep.txt || fail "report"
sizes() { awk -v p="$1" '$1 == "[" p "]" || $0 ~ "^\\[[0-9]+\\] " p ":" { on = 1; next }
	on && $1 == "write" { sub(/.*sizes: /, ""); print; exit }' $T/rep.txt; }
expect_eq "two sizes in one bucket" "$(sizes two)" "4k 50.0%, 3000b 50.0%"
expect_eq "tar's 10 KiB writes" "$(sizes tar)" "10k 90.0%, 9000b 10.0%"
expect_eq "five sizes in one bucket" "$(sizes many)" "8k-16k 100.0%"
exit 0
