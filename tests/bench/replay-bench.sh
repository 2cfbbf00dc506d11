#!/bin/bash
# SPDX-License-Identifier: MIT
# replay-bench.sh - how faithful and how fast is iotap replay? (a benchmark,
# not a test)
#
# usage: tests/bench/replay-bench.sh [--rounds N] [--size MIB] [--secs S] [--ops N] [DIR]
#
# 1. Fidelity. fio runs through an iotap mount of DIR (default: a directory
#    in /var/tmp) in four marked phases: seqwrite (--size MiB, 1 MiB blocks,
#    fdatasync at the end), randread (2 jobs, 4 KiB, --secs s), randrw
#    (4 jobs, 4 KiB, fdatasync every 16 writes, --secs s) and seqread
#    (128 KiB blocks). The capture is replayed on the same filesystem,
#    into a fresh directory with --prepare and --timing recorded, after a
#    sync (the capture's writeback must not slow the replay). Compared,
#    replay over capture: the total duration (goal within 5%) and each
#    phase's MB/s (read + write, from `iotap report --json` of both traces;
#    goal within 10%); also the replay's lag.
# 2. Rate. A synthetic trace of --ops (default 2,000,000) 4 KiB reads and
#    writes on 16 small files per thread (tests/unit's test_replay
#    --synth-bench), with 1, 2 and 4 threads, replayed --timing asap into a
#    tmpfs, without and with the replay's own trace: ops/s (goal >= 500,000).
#
# Each round (default 3) captures and replays afresh and runs every rate
# configuration once, in turn; tables give every round and the median.
# The load average before and after is printed: these 2-core VMs are
# shared. Exit 1 if a median misses a goal. Needs root (FUSE, tmpfs), fio,
# python3. IOTAP and IOTAP_BUILD may name the binary and build directory.
set -u
ROUNDS=3
SIZE=256
SECS=5
OPS=2000000
DIR=
while [ $# -gt 0 ]; do
	case $1 in
	--rounds) ROUNDS=$2; shift 2 ;;
	--size) SIZE=$2; shift 2 ;;
	--secs) SECS=$2; shift 2 ;;
	--ops) OPS=$2; shift 2 ;;
	-h|--help) sed -n '3,27p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "replay-bench: unknown option $1" >&2; exit 2 ;;
	*) DIR=$1; shift ;;
	esac
done
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${IOTAP_BUILD:-$SRC/build}
IOTAP=${IOTAP:-$BUILD/tools/iotap}
SYNTH=$BUILD/tests/unit/test_replay
[ -x "$IOTAP" ] || { echo "replay-bench: no iotap at $IOTAP" >&2; exit 2; }
[ -x "$SYNTH" ] || { echo "replay-bench: no $SYNTH (build the tests)" >&2; exit 2; }
command -v fio >/dev/null || { echo "replay-bench: fio not installed" >&2; exit 77; }
[ "$(id -u)" = 0 ] || { echo "replay-bench: needs root" >&2; exit 77; }

W=$(mktemp -d "${DIR:-/var/tmp}/iotap-replay-bench.XXXXXX")
chmod 755 "$W"
MOUNT_PID=
cleanup() {
	mountpoint -q "$W/mnt" && fusermount3 -u "$W/mnt"
	[ -n "$MOUNT_PID" ] && wait "$MOUNT_PID" 2>/dev/null
	mountpoint -q "$W/tmpfs" && umount "$W/tmpfs"
	rm -rf "$W"
}
trap cleanup EXIT
mkdir "$W/mnt" "$W/tmpfs"
mount -t tmpfs -o size=4g iotap-bench "$W/tmpfs" || exit 1

echo "# replay-bench $(date -u '+%F %H:%M') UTC, $(uname -r), $(nproc) CPUs; load average before:" \
	"$(cut -d' ' -f1-3 /proc/loadavg)"
echo "# fidelity: $(df --output=fstype "$W" | tail -1) ($W), fio $SIZE MiB, ${SECS} s phases;" \
	"rate: $OPS ops on tmpfs; $ROUNDS rounds"

capture_and_replay() {	# capture_and_replay ROUND
	local r=$1 F
	rm -rf "$W/backing" "$W/replay" && mkdir "$W/backing" "$W/replay"
	"$IOTAP" mount "$W/backing" "$W/mnt" --trace "$W/cap$r.iotap" -f > "$W/mount.log" 2>&1 &
	MOUNT_PID=$!
	for i in $(seq 100); do mountpoint -q "$W/mnt" && break; sleep 0.1; done
	mountpoint -q "$W/mnt" || { cat "$W/mount.log"; exit 1; }
	F="fio --directory=$W/mnt --ioengine=psync --iomem_align=4096 --group_reporting --output=/dev/null"
	"$IOTAP" mark "$W/mnt" seqwrite
	$F --name=data --rw=write --bs=1M --size=${SIZE}M --end_fsync=1
	"$IOTAP" mark "$W/mnt" randread
	$F --name=data --rw=randread --bs=4k --size=${SIZE}M --numjobs=2 --time_based \
		--runtime=$SECS --filename=data.0.0
	"$IOTAP" mark "$W/mnt" randrw
	$F --name=rw --rw=randrw --bs=4k --size=16M --numjobs=4 --fdatasync=16 --time_based \
		--runtime=$SECS
	"$IOTAP" mark "$W/mnt" seqread
	$F --name=data --rw=read --bs=128k --size=${SIZE}M --filename=data.0.0
	"$IOTAP" mark "$W/mnt" seqread --end
	fusermount3 -u "$W/mnt"
	wait "$MOUNT_PID"
	MOUNT_PID=
	sync; sleep 2
	"$IOTAP" replay "$W/cap$r.iotap" "$W/replay" --prepare --trace "$W/rep$r.iotap" --json -q \
		> "$W/rep$r.json" 2> "$W/rep$r.err" || { cat "$W/rep$r.err"; exit 1; }
	"$IOTAP" report "$W/cap$r.iotap" --json > "$W/cap$r.report.json"
	"$IOTAP" report "$W/rep$r.iotap" --json > "$W/rep$r.report.json"
	rm -f "$W/cap$r.iotap" "$W/rep$r.iotap"
}

rate_round() {	# rate_round ROUND
	local r=$1 th tr extra
	for th in 1 2 4; do
		for tr in none own; do
			rm -rf "$W/tmpfs"/* "$W/t.iotap"
			extra=
			[ $tr = own ] && extra="--trace $W/t.iotap"
			"$IOTAP" replay "$W/synth$th.iotap" "$W/tmpfs" --prepare --timing asap --json -q \
				$extra > "$W/rate-$r-$th-$tr.json" 2> "$W/rate.err" ||
				{ cat "$W/rate.err"; exit 1; }
		done
	done
}

for th in 1 2 4; do
	"$SYNTH" --synth-bench "$W/synth$th.iotap" "$OPS" $th || exit 1
done
for r in $(seq "$ROUNDS"); do
	capture_and_replay "$r"
	rate_round "$r"
done
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

python3 - "$W" "$ROUNDS" <<'PY'
import json, statistics, sys
w, rounds = sys.argv[1], int(sys.argv[2])
ok = True
rows = {}
lags = []
for r in range(1, rounds + 1):
    rep = json.load(open("%s/rep%d.json" % (w, r)))
    a = json.load(open("%s/cap%d.report.json" % (w, r)))["phases"]
    b = json.load(open("%s/rep%d.report.json" % (w, r)))["phases"]
    rows.setdefault("total duration", []).append(
        (rep["capture_s"], rep["replay_s"], rep["replay_s"] / rep["capture_s"], "s"))
    for x, y in zip(a, b):
        if x["read"]["ops"] + x["write"]["ops"] == 0:
            continue
        mx = x["read"]["mb_per_s"] + x["write"]["mb_per_s"]
        my = y["read"]["mb_per_s"] + y["write"]["mb_per_s"]
        rows.setdefault(x["name"] + " MB/s", []).append((mx, my, my / mx if mx else 0, "MB/s"))
    lags.append((rep["lag"], rep["ops"], rep["differences"]))
print()
print("| fidelity | goal | " + " | ".join("round %d (capture, replay, ratio)" % r
                                            for r in range(1, rounds + 1)) + " | median ratio |")
print("|---|---|" + "---|" * rounds + "---|")
for name, vals in rows.items():
    goal = 0.05 if name == "total duration" else 0.10
    med = statistics.median(v[2] for v in vals)
    ok &= abs(med - 1) <= goal
    cells = ["%.3g, %.3g, %.4f" % (v[0], v[1], v[2]) for v in vals]
    print("| %s | ±%d%% | %s | **%.4f** |" % (name, goal * 100, " | ".join(cells), med))
print()
for r, (lag, ops, diffs) in enumerate(lags, 1):
    print("round %d lag: mean %.3f ms, p50 %.3f ms, p99 %.3f ms, max %.1f ms; %d of %d ops "
          "> 1 ms late; %d differences" % (r, lag["mean_ns"] / 1e6, lag["p50_ns"] / 1e6,
          lag["p99_ns"] / 1e6, lag["max_ns"] / 1e6, lag["late_ops"], ops, diffs))
    ok &= diffs == 0
print("fidelity: %s" % ("PASS" if ok else "FAIL"))
print()
print("| rate (asap, tmpfs) | " + " | ".join("round %d ops/s" % r for r in range(1, rounds + 1))
      + " | median ops/s |")
print("|---|" + "---|" * rounds + "---|")
rate_ok = True
for th in (1, 2, 4):
    for tr in ("none", "own"):
        v = [json.load(open("%s/rate-%d-%d-%s.json" % (w, r, th, tr)))
             for r in range(1, rounds + 1)]
        med = statistics.median(x["ops_per_s"] for x in v)
        rate_ok &= med >= 500000 and all(x["differences"] == 0 for x in v)
        print("| %d thread%s, %s trace | %s | **%d** |" % (th, "s" if th > 1 else "",
              "no" if tr == "none" else "own", " | ".join("%d" % x["ops_per_s"] for x in v), med))
print("rate: %s (goal: median >= 500000 ops/s)" % ("PASS" if rate_ok else "FAIL"))
open(w + "/ok", "w").write("1" if ok and rate_ok else "0")
PY
[ "$(cat "$W/ok" 2>/dev/null)" = 1 ]
