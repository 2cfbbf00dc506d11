#!/bin/bash
# SPDX-License-Identifier: MIT
# uring-coldread.sh - random reads that miss the page cache, over io_uring
# and /dev/fuse, side by side
#
#   tests/bench/uring-coldread.sh [--rounds N] [--runtime S] [--jobs "1 4"]
#                                 [--size MiB] [--bs 4k] [--warm] [--direct]
#                                 [--iotap BIN] [--baseline BIN]
#
# A file of --size MiB (default 1024) of random bytes under /var/tmp; for
# each round, each job count and each mount -- this iotap over io_uring and
# over /dev/fuse, and with --baseline an older binary over io_uring --
# interleaved: drop the page cache (echo 1 > /proc/sys/vm/drop_caches, so
# every run starts cold; an action, not a setting), mount (traced), run fio
# psync randread of --bs (default 4k) for --runtime s (default 5) with that
# many jobs, unmount. Prints IOPS and p99 completion latency per run, then
# per job count the median IOPS of each mount and the ratios. The fuse
# module's enable_uring is turned on for the run and put back on exit.
# --warm: the whole file is read into the page cache before each run
# instead (what the hand-off costs when nothing misses: nothing, if right).
# --direct: fio opens the file O_DIRECT (so does the daemon: every read
# goes to the disk, and over io_uring to a helper untried).
# Over io_uring a ring thread would sleep in a page-cache miss with its
# queue's entries; iotap hands such reads to helper threads (README
# --transport). A benchmark, not a test (BENCHMARKS.md).
set -u
ROUNDS=3 RUNTIME=5 JOBS="1 4" SIZE=1024 BS=4k BASELINE="" WARM=0 DIRECT=0
IOTAP=$(cd "$(dirname "$0")/../.." && pwd)/build/tools/iotap
while [ $# -gt 0 ]; do
	case $1 in
	--rounds) ROUNDS=$2; shift 2 ;;
	--runtime) RUNTIME=$2; shift 2 ;;
	--jobs) JOBS=$2; shift 2 ;;
	--size) SIZE=$2; shift 2 ;;
	--bs) BS=$2; shift 2 ;;
	--warm) WARM=1; shift ;;
	--direct) DIRECT=1; shift ;;
	--iotap) IOTAP=$2; shift 2 ;;
	--baseline) BASELINE=$2; shift 2 ;;
	-h|--help) sed -n '3,25p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "uring-coldread: unknown argument '$1' (--help)" >&2; exit 2 ;;
	esac
done
[ "$(id -u)" -eq 0 ] || { echo "uring-coldread: needs root" >&2; exit 77; }
for b in "$IOTAP" ${BASELINE:+"$BASELINE"}; do
	[ -x "$b" ] || { echo "uring-coldread: no iotap binary at $b" >&2; exit 77; }
done
command -v fio >/dev/null || { echo "uring-coldread: needs fio" >&2; exit 77; }
P=/sys/module/fuse/parameters/enable_uring
[ -e $P ] || { echo "uring-coldread: this kernel has no FUSE over io_uring" >&2; exit 77; }
OLD=$(cat $P)
D=$(mktemp -d /var/tmp/uring-coldread.XXXXXX)
PID=""
cleanup() {
	grep -q " $D/m fuse" /proc/mounts && fusermount3 -u "$D/m"
	[ -n "$PID" ] && wait "$PID" 2>/dev/null
	echo "$OLD" > $P
	rm -rf "$D"
}
trap cleanup EXIT
echo Y > $P || { echo "uring-coldread: cannot set $P" >&2; exit 77; }
mkdir -p "$D/b" "$D/m"
head -c $((SIZE << 20)) /dev/urandom > "$D/b/f"
sync "$D/b/f"
SPECS="new:uring new:dev"
[ -n "$BASELINE" ] && SPECS="base:uring $SPECS"
echo "# uring-coldread $(date -u '+%F %H:%M') UTC, $(uname -r), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), ${SIZE} MiB, bs $BS, ${RUNTIME} s, $([ $WARM = 1 ] && echo warm || echo cold)$([ $DIRECT = 1 ] && echo ", O_DIRECT")"
echo "# new = $IOTAP${BASELINE:+, base = $BASELINE}"
for r in $(seq 1 "$ROUNDS"); do
	for j in $JOBS; do
		for spec in $SPECS; do
			bin=$IOTAP
			[ "${spec%:*}" = base ] && bin=$BASELINE
			tr=${spec#*:}
			if [ $WARM = 1 ]; then
				cat "$D/b/f" > /dev/null
			else
				echo 1 > /proc/sys/vm/drop_caches
			fi
			"$bin" mount "$D/b" "$D/m" -f --transport "$tr" --trace "$D/t.iotap" --force \
				> "$D/log" 2>&1 &
			PID=$!
			for i in $(seq 100); do grep -q " $D/m fuse" /proc/mounts && break; sleep 0.1; done
			out=$(fio --name=j --filename="$D/m/f" --size=${SIZE}M --rw=randread --bs=$BS \
				--numjobs=$j --group_reporting --time_based --runtime="$RUNTIME" \
				--ioengine=psync --invalidate=0 --direct=$DIRECT --output-format=json 2>/dev/null |
			      python3 -c 'import json,sys; t=sys.stdin.read(); d=json.loads(t[t.index("{"):])["jobs"][0]["read"]; print(int(d["iops"]), "%.0f" % (d["clat_ns"]["percentile"]["99.000000"] / 1000))')
			fusermount3 -u "$D/m"; wait "$PID"; PID=""
			echo "run round=$r jobs=$j $spec iops=${out% *} p99_us=${out#* }"
		done
	done
done | tee "$D/runs"
python3 - "$D/runs" <<'PY'
import re, statistics, sys
runs = {}
for line in open(sys.argv[1]):
    m = re.match(r'run round=\d+ jobs=(\d+) (\S+) iops=(\d+) p99_us=(\d+)', line)
    if m:
        runs.setdefault((int(m[1]), m[2]), []).append((int(m[3]), int(m[4])))
for j in sorted({k[0] for k in runs}):
    med = {s: statistics.median(i for i, _ in v) for (jj, s), v in runs.items() if jj == j}
    print(f"jobs={j}: median IOPS " + ", ".join(f"{s} {int(v)}" for s, v in sorted(med.items())))
    if "new:dev" in med and med["new:dev"]:
        print(f"  new uring / new dev = {med['new:uring'] / med['new:dev']:.2f}")
    if "base:uring" in med and med["base:uring"]:
        print(f"  new uring / base uring = {med['new:uring'] / med['base:uring']:.2f}")
PY
