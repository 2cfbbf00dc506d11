#!/bin/bash
# SPDX-License-Identifier: MIT
# replay-fio: capture fio through the mount (phase "layout": 4 jobs lay
# out their files; phase "randrw": 4 jobs of 4 KiB random reads and writes
# with an fdatasync every 32 writes; phase "direct": 2 jobs of O_DIRECT
# 64 KiB random writes), then replay it into fresh directories:
#   --timing recorded (default), --timing asap, --timing scale=2 and
#   --processes: every time the same op counts and bytes per phase and op
#   type, zero differences; recorded timing takes the capture's time (within
#   a wide margin: this is a test, tests/bench/replay-bench.sh measures),
#   scale=2 about half of it.
# TIMEOUT: 90
. "$(dirname "$0")/lib.sh"
need_fuse
command -v fio >/dev/null || skip "fio not installed"
TR=$T/fio.iotap
CMP="python3 $E2E_DIR/replay_compare.py"

iotap_mount "$BACKING" "$MNT" --trace "$TR"
common="--directory=$MNT --ioengine=psync --iomem_align=4096 --numjobs=4 --group_reporting"
"$IOTAP" mark "$MNT" layout || fail "mark"
fio --output="$T/fio-1.out" $common --name=rw --rw=randrw --bs=4k --size=4M --create_only=1 ||
	{ cat "$T/fio-1.out"; fail "fio layout"; }
"$IOTAP" mark "$MNT" randrw || fail "mark"
fio --output="$T/fio-2.out" $common --name=rw --rw=randrw --bs=4k --size=4M --fdatasync=32 ||
	{ cat "$T/fio-2.out"; fail "fio randrw"; }
"$IOTAP" mark "$MNT" direct || fail "mark"
fio --output="$T/fio-3.out" --directory="$MNT" --ioengine=psync --iomem_align=4096 \
	--name=dw --rw=randwrite --bs=64k --size=4M --numjobs=2 --direct=1 ||
	{ cat "$T/fio-3.out"; fail "fio direct"; }
"$IOTAP" mark "$MNT" direct --end || fail "mark"
iotap_umount "$MNT"
"$IOTAP" info --strict "$TR" > "$T/info.txt" || { cat "$T/info.txt"; fail "info"; }
note "capture: $(grep '^records' "$T/info.txt")"

n=0
for opts in "" "--timing asap" "--timing scale=2" "--processes"; do
	n=$((n + 1))
	mkdir "$T/r$n"
	start=$(date +%s.%N)
	"$IOTAP" replay "$TR" "$T/r$n" $opts --trace "$T/r$n.iotap" --json -q > "$T/r$n.json" \
		2> "$T/r$n.err" || { cat "$T/r$n.err"; fail "replay $opts"; }
	$CMP "$IOTAP" "$TR" "$T/r$n.iotap" --replay-json "$T/r$n.json" ||
		fail "replay ${opts:-(recorded)} differs from the capture"
	python3 - "$T/r$n.json" "$opts" <<'PY' || fail "replay ${opts:-(recorded)}: timing"
import json, sys
r = json.load(open(sys.argv[1]))
opts = sys.argv[2]
ratio = r["replay_s"] / r["capture_s"]
print("# %-18s %d ops, %.2f s for %.2f s captured (%.2f), %d replay threads, %d processes" %
      (opts or "recorded", r["ops"], r["replay_s"], r["capture_s"], ratio,
       r["replay_threads"], r["processes"]))
if opts in ("", "--processes") and not 0.8 < ratio < 1.3:
    sys.exit("recorded timing took %.2f of the capture's time" % ratio)
if opts == "--timing scale=2" and not 0.35 < ratio < 0.75:
    sys.exit("scale=2 took %.2f of the capture's time" % ratio)
if opts == "--processes" and r["processes"] < 4:
    sys.exit("--processes used %d processes" % r["processes"])
PY
	rm -rf "$T/r$n"
done
exit 0
