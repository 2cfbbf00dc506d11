#!/bin/bash
# SPDX-License-Identifier: MIT
# uring-counts.sh - what one request costs over io_uring, counted: iotap
# beside libfuse's passthrough_hp (and an older iotap), side by side
#
#   tests/bench/uring-counts.sh [--rounds N] [--runtime S] [--jobs "1 4"]
#                               [--rw "read write"] [--iotap BIN]
#                               [--baseline BIN] [--hp BIN] [--dev]
#                               [--untraced] [--nospin]
#
# A 256 MiB file on a tmpfs backing directory; for each round, each mount
# -- iotap over io_uring traced (this build, and with --baseline an older
# binary), passthrough_hp --nopassthrough --direct-io -o io_uring (--hp, or
# $PASSTHROUGH_HP: libfuse's own source built outside the tree), with --dev
# also this iotap over /dev/fuse (traced), with --untraced this iotap over
# io_uring without a trace, with --nospin traced with -o uring_spin=0 -- and each
# job count, interleaved: fio psync 8 KiB random reads or writes (no
# fsync), or with --rw sync writes each followed by fdatasync, for
# --runtime s (default 5). Per request (fio's I/O count; per write+fdatasync
# pair with sync, so that a wake-up per request counts 2 there) it
# prints, for the daemon (all its threads, /proc/PID/task/*/sched) and for
# fio (perf stat): context switches, CPU migrations and CPU time; the
# daemon's system calls (all, io_uring_enter, sched_yield, futex); and,
# where perf can record sched:sched_wakeup, the wake-ups of daemon threads
# and of fio, split into those on the waker's own CPU and those on another
# one (a cross-CPU wake-up: an IPI, on a VM the wake of a halted vCPU).
# These counts move far less with a neighbour's load than throughput does
# (issue 24: the 2-core VMs are shared). The fuse module's enable_uring is
# turned on for the run and put back on exit.
# A benchmark, not a test (BENCHMARKS.md).
set -u
ROUNDS=2 RUNTIME=5 JOBS="1 4" RW="read write" BASELINE="" HP=${PASSTHROUGH_HP:-} DEV=0
UNTRACED=0 NOSPIN=0
IOTAP=$(cd "$(dirname "$0")/../.." && pwd)/build/tools/iotap
while [ $# -gt 0 ]; do
	case $1 in
	--rounds) ROUNDS=$2; shift 2 ;;
	--runtime) RUNTIME=$2; shift 2 ;;
	--jobs) JOBS=$2; shift 2 ;;
	--rw) RW=$2; shift 2 ;;
	--iotap) IOTAP=$2; shift 2 ;;
	--baseline) BASELINE=$2; shift 2 ;;
	--hp) HP=$2; shift 2 ;;
	--dev) DEV=1; shift ;;
	--untraced) UNTRACED=1; shift ;;
	--nospin) NOSPIN=1; shift ;;
	-h|--help) sed -n '3,30p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "uring-counts: unknown option '$1'" >&2; exit 2 ;;
	esac
done
P=/sys/module/fuse/parameters/enable_uring
[ "$(id -u)" -eq 0 ] || { echo "uring-counts: needs root" >&2; exit 1; }
[ -e $P ] || { echo "uring-counts: this kernel has no FUSE over io_uring" >&2; exit 77; }
for c in fio perf python3; do
	command -v $c >/dev/null || { echo "uring-counts: needs $c" >&2; exit 1; }
done
[ -x "$IOTAP" ] || { echo "uring-counts: no iotap binary at $IOTAP" >&2; exit 1; }
CFGS="iotap"
[ -n "$BASELINE" ] && CFGS+=" baseline"
[ $DEV -eq 1 ] && CFGS+=" dev"
[ $UNTRACED -eq 1 ] && CFGS+=" untraced"
[ $NOSPIN -eq 1 ] && CFGS+=" nospin"
if [ -n "$HP" ] && [ -x "$HP" ]; then
	CFGS+=" hp"
else
	echo "uring-counts: no passthrough_hp (--hp or \$PASSTHROUGH_HP): iotap only" >&2
fi
W=$(mktemp -d /var/tmp/uring-counts.XXXXXX)
OLD=$(cat $P)
DPID=""
cleanup() {
	grep -q " $W/mnt fuse" /proc/mounts && { umount "$W/mnt" 2>/dev/null || umount -l "$W/mnt"; }
	[ -n "$DPID" ] && wait "$DPID" 2>/dev/null
	grep -q " $W/back tmpfs" /proc/mounts && umount "$W/back"
	echo "$OLD" >$P
	rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
echo Y >$P || exit 1
mkdir -p "$W/back" "$W/mnt"
mount -t tmpfs -o size=512m tmpfs "$W/back" || exit 1
head -c 256M /dev/urandom >"$W/back/f"

start() {	# start CFG: mounts $W/mnt, sets DPID
	local -a cmd
	case $1 in
	iotap) cmd=("$IOTAP" mount "$W/back" "$W/mnt" -f --transport uring --trace "$W/t.iotap" --force) ;;
	dev) cmd=("$IOTAP" mount "$W/back" "$W/mnt" -f --transport dev --trace "$W/t.iotap" --force) ;;
	untraced) cmd=("$IOTAP" mount "$W/back" "$W/mnt" -f --transport uring) ;;
	nospin) cmd=("$IOTAP" mount "$W/back" "$W/mnt" -f --transport uring --trace "$W/t.iotap" --force -o uring_spin=0) ;;
	baseline) cmd=("$BASELINE" mount "$W/back" "$W/mnt" -f --transport uring --trace "$W/t.iotap" --force) ;;
	hp) cmd=("$HP" --foreground --nopassthrough --direct-io -o io_uring "$W/back" "$W/mnt") ;;
	esac
	"${cmd[@]}" >"$W/$1.log" 2>&1 &
	DPID=$!
	for _ in $(seq 100); do
		grep -q " $W/mnt fuse" /proc/mounts && { sleep 0.5; return 0; }
		sleep 0.1
	done
	echo "uring-counts: $1 did not mount:" >&2
	cat "$W/$1.log" >&2
	return 1
}
tsum() {	# tsum PID FIELD: FIELD of /proc/PID/sched summed over its threads
	cat /proc/"$1"/task/*/sched 2>/dev/null | awk -v k="$2" '$1 == k { s += $3 } END { printf "%.3f", s }'
}
one() {		# one ROUND CFG RW JOBS: one run, one line
	local sw0 cpu0 mig0 sw1 cpu1 mig1 n
	sw0=$(tsum $DPID nr_switches) cpu0=$(tsum $DPID se.sum_exec_runtime) mig0=$(tsum $DPID se.nr_migrations)
	perf stat -x, -e raw_syscalls:sys_enter,syscalls:sys_enter_io_uring_enter,syscalls:sys_enter_sched_yield,syscalls:sys_enter_futex \
		-p "$DPID" -o "$W/dstat.txt" &
	local spid=$!
	perf stat -x, -e context-switches,cpu-migrations,task-clock -o "$W/stat.txt" -- \
		perf record -q -e sched:sched_wakeup -a -o "$W/wake.data" -- \
		fio --name=c --filename="$W/mnt/f" --rw=rand"${3/sync/write}" --fdatasync=$([ "$3" = sync ] && echo 1 || echo 0) --bs=8k --numjobs="$4" --group_reporting \
			--time_based --runtime="$RUNTIME" --ioengine=psync --invalidate=0 \
			--output-format=json --output="$W/fio.json" >/dev/null 2>"$W/fio.err" ||
		{ cat "$W/fio.err" >&2; kill -INT $spid; wait $spid; return 1; }
	kill -INT $spid; wait $spid
	sw1=$(tsum $DPID nr_switches) cpu1=$(tsum $DPID se.sum_exec_runtime) mig1=$(tsum $DPID se.nr_migrations)
	perf script -i "$W/wake.data" -F cpu,trace 2>/dev/null >"$W/wake.txt"
	python3 - "$W/fio.json" "$W/stat.txt" "$W/wake.txt" "$DPID" "$1 $2 $3 $4" \
		"$sw0 $sw1 $cpu0 $cpu1 $mig0 $mig1" "$W/dstat.txt" <<'PY'
import json, os, re, sys
fj, st, wk, dpid, tag, d, dst = sys.argv[1:8]
text = open(fj).read()
job = json.loads(text[text.index('{'):])['jobs'][0]
side = job['read'] if job['read']['total_ios'] else job['write']
n = side['total_ios']
sw0, sw1, cpu0, cpu1, mig0, mig1 = map(float, d.split())
app = {}
for l in open(st):
    f = l.strip().split(',')
    if len(f) > 2 and f[0].replace('.', '').isdigit():
        app[f[2]] = float(f[0])
sc = {}
for l in open(dst):
    f = l.strip().split(',')
    if len(f) > 2 and f[0].isdigit():
        sc[f[2].split(':')[-1]] = float(f[0])
tids = set(os.listdir('/proc/%s/task' % dpid))
dw, aw = [0, 0], [0, 0]
for l in open(wk):
    m = re.search(r'\[(\d+)\].*comm=(\S+) pid=(\d+) .*target_cpu=(\d+)', l)
    if not m:
        continue
    cross = int(m.group(1)) != int(m.group(4))
    if m.group(3) in tids:
        dw[cross] += 1
    elif m.group(2).startswith('fio'):
        aw[cross] += 1
r, cfg, rw, jobs = tag.split()
print('%s %-8s %-5s %s %8.0f  %5.3f %5.3f %6.2f  %5.3f %5.3f %6.2f  %5.3f %5.3f  %5.3f %5.3f  %5.2f %5.2f %5.2f %5.2f' % (
    r, cfg, rw, jobs, side['iops'],
    (sw1 - sw0) / n, (mig1 - mig0) / n, (cpu1 - cpu0) * 1000 / n,
    app.get('context-switches', 0) / n, app.get('cpu-migrations', 0) / n,
    app.get('task-clock', 0) * 1000 / n,
    dw[0] / n, dw[1] / n, aw[0] / n, aw[1] / n,
    sc.get('sys_enter', 0) / n, sc.get('sys_enter_io_uring_enter', 0) / n,
    sc.get('sys_enter_sched_yield', 0) / n, sc.get('sys_enter_futex', 0) / n))
PY
}

echo "# $(uname -r), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg); per request:"
echo "#                             daemon              fio             daemon wake   fio wake      daemon syscalls"
echo "# r cfg      rw    j     IOPS     cs   migr cpu_us     cs   migr cpu_us   same cross  same cross    all  enter yield futex"
for r in $(seq "$ROUNDS"); do
	for c in $CFGS; do
		start "$c" || continue
		for rw in $RW; do
			for j in $JOBS; do
				one "$r" "$c" "$rw" "$j"
			done
		done
		umount "$W/mnt" 2>/dev/null || umount -l "$W/mnt"
		wait "$DPID" 2>/dev/null
		DPID=""
	done
done
