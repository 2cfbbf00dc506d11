#!/bin/bash
# SPDX-License-Identifier: MIT
# fs-timeouts: --attr-timeout 0 --entry-timeout 0 send every stat() and
# lookup to the daemon (so a real bonnie++'s stat phases are in the trace
# and the automatic phases find create, stat and unlink twice, in order);
# the default (1 s) lets the kernel answer from its caches, and the report
# of such a capture says stat phases may be missing. Both timeouts are in
# the header's mount options.
. "$(dirname "$0")/lib.sh"
need_fuse
for i in $(seq 50); do : > "$BACKING/f$i"; done

# default: 3 x 50 stats, the kernel answers most of them itself
iotap_mount "$BACKING" "$MNT" --trace $T/d.iotap
for k in 1 2 3; do stat "$MNT"/f* > /dev/null || fail "stat"; done
iotap_umount "$MNT"
nd=$("$IOTAP" dump $T/d.iotap --op getattr,lookup --no-header | wc -l)
"$IOTAP" report $T/d.iotap > $T/d.txt || fail "report"
grep -q "^note: the kernel answered stat() from its cache for 1s and lookups for 1s" $T/d.txt ||
	{ head -8 $T/d.txt; fail "the report of a default capture does not warn about the caches"; }

iotap_mount "$BACKING" "$MNT" --trace $T/z.iotap --attr-timeout 0 --entry-timeout 0
for k in 1 2 3; do stat "$MNT"/f* > /dev/null || fail "stat"; done
iotap_umount "$MNT"
nz=$("$IOTAP" dump $T/z.iotap --op getattr,lookup --no-header | wc -l)
note "getattr+lookup records for 150 stats: $nd with the default, $nz with 0"
[ "$nz" -ge 150 ] || fail "--attr-timeout 0: only $nz getattr/lookup records for 150 stats"
[ "$nd" -lt 100 ] || fail "the default 1 s timeouts sent $nd of 150 stats to the daemon"
"$IOTAP" info $T/z.iotap | grep -q "attr_timeout=0,entry_timeout=0" || fail "header: timeouts"
"$IOTAP" report $T/z.iotap | grep -q "^note: the kernel answered" && fail "warned with 0 timeouts"

expect 2 "attr-timeout wants seconds" "$IOTAP" mount "$BACKING" "$MNT" --attr-timeout -1
expect 2 "entry-timeout wants seconds" "$IOTAP" mount "$BACKING" "$MNT" --entry-timeout x

# a real bonnie++'s file tests, no markers: create, stat, unlink, twice
if command -v bonnie++ > /dev/null; then
	rm -f "$BACKING"/f*
	iotap_mount "$BACKING" "$MNT" --trace $T/b.iotap --attr-timeout 0 --entry-timeout 0
	(cd $T && bonnie++ -d "$MNT" -s 0 -n 1 -u root -q) > $T/b.out 2>&1 || { cat $T/b.out; fail "bonnie++"; }
	iotap_umount "$MNT"
	"$IOTAP" report --json $T/b.iotap > $T/b.json || fail "report"
	python3 - $T/b.json <<'PY' || fail "bonnie++'s stat phases"
import json, sys
names = [p["name"] for p in json.load(open(sys.argv[1]))["phases"]]
print("# phases:", names, file=sys.stderr)
want = ["create", "stat", "unlink", "create#2", "stat#2", "unlink#2"]
assert [n for n in names if n in want] == want, names
PY
fi
exit 0
