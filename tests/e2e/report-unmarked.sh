#!/bin/bash
# SPDX-License-Identifier: MIT
# report-unmarked: ops before the first marker (or between an END and the
# next BEGIN) are folded into a marked phase only when negligible: a few
# ops, no data bytes, no longer than an idle gap. 20 MiB written before
# `mark A` are a "(before marks)" row of their own, never A's bytes over
# A's duration (issue 27, item 4). And `report REPLAY --phases-from CAP`
# cuts a replay as its own markers do, where the capture folded a few
# stat calls and a pause before its first marker.
. "$(dirname "$0")/lib.sh"
need_fuse
command -v python3 >/dev/null || skip "needs python3"

# 1: data before the first marker keeps its own row
TR=$T/cap1.iotap
iotap_mount "$BACKING" "$MNT" --trace "$TR"
dd if=/dev/zero of="$MNT/pre" bs=1M count=20 status=none || fail "dd write"
sleep 0.3
"$IOTAP" mark "$MNT" A || fail "mark A"
cat "$MNT/pre" > /dev/null || fail "read back"
"$IOTAP" mark "$MNT" B || fail "mark B"
dd if=/dev/zero of="$MNT/post" bs=64k count=4 status=none || fail "dd write 2"
iotap_umount "$MNT"
"$IOTAP" report "$TR" --json --no-progress > $T/r1.json || fail "report"
python3 - $T/r1.json <<'PY' || fail "unmarked data folded into a phase"
import json, sys
r = json.load(open(sys.argv[1]))
ph = {p["name"]: p for p in r["phases"]}
assert "(before marks)" in ph, [p["name"] for p in r["phases"]]
assert ph["(before marks)"]["write"]["bytes"] == 20 << 20, ph["(before marks)"]["write"]
assert ph["A"]["write"]["bytes"] == 0, ph["A"]["write"]
PY

# 2: a replay cut by --phases-from as by its own markers
rm -rf "$BACKING"/* && mkdir -p "$BACKING/d" && touch "$BACKING/d/x"
TR=$T/cap2.iotap
iotap_mount "$BACKING" "$MNT" --trace "$TR"
ls -l "$MNT/d" > /dev/null && stat "$MNT/d/x" > /dev/null
sleep 0.8
"$IOTAP" mark "$MNT" A || fail "mark A"
dd if=/dev/zero of="$MNT/d/w" bs=1M count=8 conv=fsync status=none || fail "dd write"
"$IOTAP" mark "$MNT" A --end || fail "mark A --end"
iotap_umount "$MNT"
mkdir -p $T/rp
"$IOTAP" replay "$TR" $T/rp --prepare --trace $T/rp.iotap -q > /dev/null 2> $T/rp.err ||
	{ cat $T/rp.err; fail "replay"; }
"$IOTAP" report $T/rp.iotap --csv --no-progress > $T/own.csv || fail "report of the replay"
"$IOTAP" report $T/rp.iotap --phases-from "$TR" --csv --no-progress > $T/from.csv ||
	fail "report --phases-from"
python3 - $T/own.csv $T/from.csv <<'PY' || fail "--phases-from cut the replay unlike its markers"
import csv, sys
def phase(path, name):
    for row in csv.DictReader(open(path)):
        if row["name"] == name:
            return row
    raise SystemExit("%s: no phase %s" % (path, name))
own, frm = phase(sys.argv[1], "A"), phase(sys.argv[2], "A")
d1, d2 = float(own["duration_s"]), float(frm["duration_s"])
print("A: %.3f s by its markers, %.3f s by --phases-from" % (d1, d2))
assert abs(d1 - d2) < 0.25, (d1, d2)
assert own["write_bytes"] == frm["write_bytes"] == str(8 << 20), (own["write_bytes"], frm["write_bytes"])
PY
exit 0
