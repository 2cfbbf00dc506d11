#!/bin/bash
# SPDX-License-Identifier: MIT
# capture-report: record real I/O through the mount, then check that
# `iotap dump`, `iotap info` and `iotap report --json` agree with what the
# application did: 8 writes of exactly 1 MiB at consecutive offsets (one
# request per write(): direct_io and max_write 1 MiB), one fsync, 64 KiB
# reads, the phase marker, a clean end record.
. "$(dirname "$0")/lib.sh"
need_fuse
TR=$T/cap.iotap

head -c 8M /dev/urandom > $T/src
iotap_mount "$BACKING" "$MNT" --trace "$TR"
"$IOTAP" mark "$MNT" write-phase || fail "iotap mark failed"
dd if=$T/src of="$MNT/f" bs=1M count=8 conv=fsync status=none || fail "dd write"
"$IOTAP" mark "$MNT" read-phase || fail "iotap mark failed"
dd if="$MNT/f" of=$T/back bs=64k status=none || fail "dd read"
iotap_umount "$MNT"
expect_eq "daemon exit status" "$MOUNT_RC" 0
cmp $T/src "$BACKING/f" || fail "backing data differs from what was written"
cmp $T/src $T/back || fail "data read through the mount differs"

"$IOTAP" info --strict "$TR" > $T/info.txt || { cat $T/info.txt; fail "info --strict"; }
grep -q "^complete *yes" $T/info.txt || fail "trace not complete"
grep -q "^source *capture (direct" $T/info.txt || fail "source/mode missing in info"

"$IOTAP" dump "$TR" > $T/dump.txt || fail "dump"
awk '$4 == "write" && $5 != "" { print $6, $7, $8 }' $T/dump.txt > $T/writes.txt
expect_eq "write records" "$(wc -l < $T/writes.txt)" 8
i=0
while read -r off len res; do
	expect_eq "write $i offset" "$off" $((i * 1048576))
	expect_eq "write $i length" "$len" 1048576
	expect_eq "write $i result" "$res" 1048576
	i=$((i + 1))
done < $T/writes.txt
expect_eq "fsync records" "$(awk '$4 == "fsync"' $T/dump.txt | wc -l)" 1
expect_eq "64k reads" "$(awk '$4 == "read" && $7 == 65536 && $8 == 65536' $T/dump.txt | wc -l)" 128
grep -q ' PHASE begin name="write-phase"' $T/dump.txt || fail "no write-phase marker"
grep -q ' NAME .*name="f"' $T/dump.txt || fail "no NAME record for f"
grep -q ' END ' $T/dump.txt || fail "no END record"

"$IOTAP" report "$TR" --json > $T/r.json || fail "report --json"
python3 - "$T/r.json" <<'PY' || fail "report JSON does not match the I/O done"
import json, sys
r = json.load(open(sys.argv[1]))
t = r["total"]
assert r["trace"]["source"] == "capture", r["trace"]
assert r["trace"]["capture_mode"] == "direct", r["trace"]
assert t["write"]["ops"] == 8 and t["write"]["bytes"] == 8 << 20, t["write"]
assert t["read"]["bytes"] == 8 << 20, t["read"]
assert t["fsyncs"] == 1, t["fsyncs"]
assert t["seeks"] <= 1, t["seeks"]  # the read-back starts at 0, after the write ended at 8 MiB
for k in ("mb_per_s", "iops", "size_hist"):
    assert k in t["write"], k
for k in ("mean", "p50", "p90", "p99", "p999", "max"):
    assert k in t["latency_us"]["write"], k
names = [p["name"] for p in r["phases"]]
assert "write-phase" in names and "read-phase" in names, names
w = [p for p in r["phases"] if p["name"] == "write-phase"][0]
assert w["write"]["ops"] == 8, w
PY
"$IOTAP" report "$TR" > $T/report.txt || fail "report"
grep -q "^total" $T/report.txt || fail "no total row in text report"
exit 0
