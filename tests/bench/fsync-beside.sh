#!/bin/bash
# SPDX-License-Identifier: MIT
# fsync-beside.sh - does a real, blocking fsync in the daemon hold up other
# requests from the same CPU?
#
#   tests/bench/fsync-beside.sh [--rounds N] [--mb MB] [--cold] [--iotap BIN]
#
# For each transport (dev, uring; enable_uring is turned on for the run and
# put back on exit), rounds interleaved: mount iotap (untraced) over a fresh
# backing directory under /var/tmp, then one process pinned to CPU 0 (so
# over io_uring its requests all go to queue 0) runs two threads: one
# pread()s 4 KiB of a small file in a loop, the other writes MB MiB to a new
# file (direct_io: the daemon's pwrite()s leave the data dirty in the
# backing page cache) and fsync()s it, so the daemon's fsync waits for the
# disk in the kernel (not a sleep: e2e fs-uring's injected delay is one).
# Prints per round the write and fsync times, the reads served while the
# fsync ran and their worst latency, and the worst latency overall.
# --cold: instead of the write and fsync, the second thread reads 4 KiB at
# 3000 random offsets of an MB MiB file written beforehand and dropped from
# the page cache (each read waits for the disk in the daemon); printed: the
# small file's reads meanwhile, their 99th percentile and worst latency.
# A benchmark, not a test (BENCHMARKS.md).
set -u
ROUNDS=2 MB=768 COLD=0
IOTAP=$(cd "$(dirname "$0")/../.." && pwd)/build/tools/iotap
while [ $# -gt 0 ]; do
	case $1 in
	--rounds) ROUNDS=$2; shift 2 ;;
	--mb) MB=$2; shift 2 ;;
	--cold) COLD=1; shift ;;
	--iotap) IOTAP=$2; shift 2 ;;
	-h|--help) sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "fsync-beside: unknown argument '$1' (--help)" >&2; exit 2 ;;
	esac
done
[ "$(id -u)" -eq 0 ] || { echo "fsync-beside: needs root" >&2; exit 77; }
[ -x "$IOTAP" ] || { echo "fsync-beside: no iotap binary at $IOTAP" >&2; exit 77; }
P=/sys/module/fuse/parameters/enable_uring
OLD=""
D=$(mktemp -d /var/tmp/fsync-beside.XXXXXX)
PID=""
cleanup() {
	grep -q " $D/m fuse" /proc/mounts && fusermount3 -u "$D/m"
	[ -n "$PID" ] && wait "$PID" 2>/dev/null
	[ -n "$OLD" ] && echo "$OLD" > $P
	rm -rf "$D"
}
trap cleanup EXIT
TRS="dev"
if [ -e $P ]; then
	OLD=$(cat $P)
	echo Y > $P && TRS="dev uring"
fi
echo "# fsync-beside $(date -u '+%F %H:%M') UTC, $(uname -r), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), $MB MiB"
for r in $(seq 1 "$ROUNDS"); do
	for tr in $TRS; do
		rm -rf "$D/b" "$D/m"; mkdir -p "$D/b" "$D/m"
		head -c 65536 /dev/urandom > "$D/b/small"
		if [ $COLD = 1 ]; then
			head -c $((MB << 20)) /dev/urandom > "$D/b/big"
			sync "$D/b/big"
			echo 1 > /proc/sys/vm/drop_caches
		fi
		"$IOTAP" mount "$D/b" "$D/m" -f --transport $tr > "$D/log" 2>&1 &
		PID=$!
		for i in $(seq 100); do grep -q " $D/m fuse" /proc/mounts && break; sleep 0.1; done
		printf "round %d %-5s " "$r" "$tr"
		python3 - "$D/m" "$MB" "$COLD" <<'PY'
import os, random, sys, time, threading
m, mb, cold = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
os.sched_setaffinity(0, {0})
stop, lat = False, []
def reader():
    fd = os.open(m + "/small", os.O_RDONLY)
    while not stop:
        t = time.monotonic()
        os.pread(fd, 4096, 0)
        lat.append((t, time.monotonic() - t))
    os.close(fd)
th = threading.Thread(target=reader)
th.start()
time.sleep(0.5)
if cold:
    fd = os.open(m + "/big", os.O_RDONLY)
    rnd = random.Random(1)
    t1 = time.monotonic()
    for i in range(3000):
        os.pread(fd, 4096, rnd.randrange(mb << 8) << 12)
    t2 = time.monotonic()
    os.close(fd)
    time.sleep(0.3)
    stop = True
    th.join()
    during = sorted(l for t, l in lat if t1 <= t < t2)
    p99 = during[int(len(during) * 0.99)] if during else 0
    print("3000 cold reads %.2f s  small-file reads meanwhile %6d, p99 %6.2f ms, worst %6.1f ms"
          % (t2 - t1, len(during), 1000 * p99, 1000 * (during[-1] if during else 0)))
    sys.exit(0)
fd = os.open(m + "/big", os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
buf = os.urandom(1 << 20)
t0 = time.monotonic()
for i in range(mb):
    os.write(fd, buf)
t1 = time.monotonic()
os.fsync(fd)
t2 = time.monotonic()
os.close(fd)
time.sleep(0.3)
stop = True
th.join()
during = [l for t, l in lat if t1 <= t < t2]
print("write %.2f s  fsync %.2f s  reads during the fsync %6d, worst %6.1f ms  worst overall %6.1f ms"
      % (t1 - t0, t2 - t1, len(during), 1000 * max(during or [0]), 1000 * max(l for t, l in lat)))
PY
		fusermount3 -u "$D/m"; wait "$PID"; PID=""
		grep -o '[0-9]* handed on from a blocked handler' "$D/log" | sed 's/^/    /'
	done
done
