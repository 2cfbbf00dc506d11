#!/bin/bash
# SPDX-License-Identifier: MIT
# report-readback: reading files back from their start is sequential
# (issue 27, item 11). tar-out's whole-file reads of files tar-in had
# written showed 3,204 seeks/s and 71.5% sequential: each file's first
# read at offset 0 was counted from where its writing had ended. A
# file's first read, like its first write, counts from offset 0.
. "$(dirname "$0")/lib.sh"
need_fuse
command -v python3 >/dev/null || skip "needs python3"
TR=$T/cap.iotap

iotap_mount "$BACKING" "$MNT" --trace "$TR"
"$IOTAP" mark "$MNT" create || fail "mark"
for i in $(seq 20); do
	dd if=/dev/zero of="$MNT/f$i" bs=64k count=4 status=none || fail "dd write $i"
done
"$IOTAP" mark "$MNT" readback || fail "mark"
for i in $(seq 20); do
	cat "$MNT/f$i" > /dev/null || fail "read back $i"
done
"$IOTAP" mark "$MNT" again || fail "mark"
dd if="$MNT/f1" of=/dev/null bs=64k skip=2 count=1 status=none || fail "dd read"
iotap_umount "$MNT"
"$IOTAP" report "$TR" --json --no-progress > $T/r.json || fail "report"
python3 - $T/r.json <<'PY' || fail "seeks counted on first reads from offset 0"
import json, sys
ph = {p["name"]: p for p in json.load(open(sys.argv[1]))["phases"]}
assert ph["create"]["seeks"] == 0, ph["create"]["seeks"]
assert ph["readback"]["read"]["ops"] >= 20, ph["readback"]["read"]
assert ph["readback"]["seeks"] == 0, ph["readback"]["seeks"]
assert ph["readback"]["sequential_pct"] == 100, ph["readback"]["sequential_pct"]
# a read that does not start where the previous one ended is still a seek
assert ph["again"]["seeks"] == 1, ph["again"]["seeks"]
PY
exit 0
