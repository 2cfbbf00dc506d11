#!/bin/bash
# SPDX-License-Identifier: MIT
# report-autophase-cache: a steady fio randrw through a --cache mount is one
# automatic phase, as it is in direct mode. In --cache mode the writes
# reach the daemon as the kernel's writeback bursts (pid 0) between runs of
# reads; each burst used to open a phase of its own (a 5 s job gave 117
# phases, 42 of them rand-read-8k#N). Checked both ways: 90% of the ops
# land in one rand-* phase, and the run has at most 4 phases (fio's
# setup lookups, its layout, the job, the last writeback after it).
. "$(dirname "$0")/lib.sh"
command -v fio > /dev/null || skip "fio not installed"

TR=$T/cache.iotap
iotap_mount "$BACKING" "$MNT" --cache --trace "$TR"
fio --output=$T/fio.out --name=rr --directory=$MNT --rw=randrw --bs=8k --size=64m \
	--runtime=4 --time_based --ioengine=psync || { cat $T/fio.out; fail "fio"; }
iotap_umount "$MNT"
"$IOTAP" report "$TR" --auto-phases --json > $T/r.json || fail "report"
python3 - $T/r.json <<'PY' || fail "writeback bursts split the steady phase"
import json, sys
d = json.load(open(sys.argv[1]))
ph = d["phases"]
names = [p["name"] for p in ph]
print("# phases:", names, file=sys.stderr)
total = d["total"]["ops"]
job = max(ph, key=lambda p: p["ops"])
assert len(ph) <= 4, f"{len(ph)} phases"
assert job["name"].startswith("rand-"), f"the biggest phase is {job['name']}"
assert job["ops"] >= 0.9 * total, f"the job phase has {job['ops']} of {total} ops"
PY
exit 0
