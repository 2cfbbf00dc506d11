#!/bin/bash
# SPDX-License-Identifier: MIT
# mount-cost.sh - the daemon's CPU instructions per request: an untraced
# iotap mount, a traced one, one that traced and stopped, and libfuse's
# passthrough_ll (a benchmark, not a test)
#
# usage: tests/bench/mount-cost.sh [--ops N] [--rounds R] [--configs LIST]
#
# Each config's daemon runs under valgrind --tool=callgrind (foreground,
# /dev/fuse transport, direct_io / cache=never, so each 4 KiB read() or
# write() of dd is one request). After a warm-up (the file created, N
# writes and N reads, each followed by a flush period, so that the trace
# writer's zstd context has grown its tables to the phases' chunk size: a
# one-time cost that would otherwise land in whichever phase first
# writes a larger chunk), callgrind_control dumps the counters at the start and end of
# each phase: N 4 KiB writes over the file, then N 4 KiB reads of it, then
# create/stat/unlink of N/4 files twice (tests/bench/metaloop, the meta job
# of fs-bench: N*3/2 ops, each one or more requests; counted per op). A
# phase's instructions (all the daemon's threads: workers, the trace
# writer's encoding and compression) divided by N are its instructions per
# request; then 2 s idle, whose instructions per second are what the daemon
# does by itself (the trace writer's flush timer). Instruction counts do not depend on the machine's load, which
# is why this complements fs-bench's timings on a shared machine; they do
# not count time in the kernel (the syscalls themselves). The resource
# sampler is set to once an hour (--sample-interval) so that its
# time-driven work does not land in a phase.
#
# configs: iotap (no trace), iotap-trace (--trace), iotap-stopped (--trace,
# then `iotap trace M stop`), ptll (passthrough_ll -o cache=never, built
# from libfuse3-dev's example into a temp dir). Prints one line per config
# and phase, then the ratios to ptll and to the untraced mount.
set -u

OPS=2000
ROUNDS=1
CONFIGS="iotap iotap-trace iotap-stopped ptll"
while [ $# -gt 0 ]; do
	case $1 in
	--ops) OPS=$2; shift 2 ;;
	--rounds) ROUNDS=$2; shift 2 ;;
	--configs) CONFIGS=${2//,/ }; shift 2 ;;
	-h|--help) sed -n '3,31p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "mount-cost.sh: unknown option '$1'" >&2; exit 2 ;;
	esac
done
IOTAP=${IOTAP:-$(cd "$(dirname "$0")/../.." && pwd)/build/tools/iotap}
METALOOP=${METALOOP:-$(cd "$(dirname "$0")/../.." && pwd)/build/tests/bench/metaloop}
[ -x "$METALOOP" ] || { echo "mount-cost.sh: no metaloop at $METALOOP (ninja -C build)" >&2; exit 77; }
MFILES=$((OPS / 4))
PTLL_SRC=/usr/share/doc/libfuse3-dev/examples/passthrough_ll.c
for c in valgrind callgrind_control fusermount3 dd; do
	command -v $c >/dev/null || { echo "mount-cost.sh: $c not installed" >&2; exit 77; }
done
[ "$(id -u)" -eq 0 ] || { echo "mount-cost.sh: needs root (the capture mount)" >&2; exit 77; }

W=$(mktemp -d "${TMPDIR:-/var/tmp}/iotap-mount-cost.XXXXXX")
MNT=$W/mnt
VPID=""
cleanup() {
	grep -q " $MNT fuse" /proc/self/mounts && { fusermount3 -u "$MNT" 2>/dev/null || fusermount3 -uz "$MNT"; }
	[ -n "$VPID" ] && kill "$VPID" 2>/dev/null
	rm -rf "$W"
}
trap cleanup EXIT
mkdir -p $W/backing $MNT $W/cg
if [[ " $CONFIGS " == *" ptll "* ]]; then
	# shellcheck disable=SC2046
	cc -O2 -o $W/passthrough_ll "$PTLL_SRC" $(pkg-config --cflags --libs fuse3) 2>$W/ptll.log ||
		{ cat $W/ptll.log >&2; echo "mount-cost.sh: cannot build passthrough_ll" >&2; exit 1; }
fi

# dump CFG PART: ask callgrind for a dump and wake the daemon so it takes it
dump() {
	callgrind_control -d "$VPID" >/dev/null 2>&1 &
	local c=$!
	sleep 0.5
	stat "$MNT" >/dev/null
	wait $c
}

# total Ir of dump file $1
total() { awk '/^totals:/ { print $2 }' "$1"; }

run_cfg() {
	local cfg=$1 round=$2 out=$W/cg/$1.$2 i
	local -a cmd
	case $cfg in
	iotap) cmd=("$IOTAP" mount $W/backing $MNT -f --transport dev --sample-interval 3600000) ;;
	iotap-trace|iotap-stopped)
		cmd=("$IOTAP" mount $W/backing $MNT -f --transport dev --sample-interval 3600000
		     --trace $W/$cfg.$round.iotap) ;;
	ptll) cmd=($W/passthrough_ll -f -o "source=$W/backing,cache=never" $MNT) ;;
	esac
	valgrind --tool=callgrind --callgrind-out-file=$out "${cmd[@]}" >$W/$cfg.$round.log 2>&1 &
	VPID=$!
	for ((i = 0; i < 300; i++)); do
		grep -q " $MNT fuse" /proc/self/mounts && break
		sleep 0.1
	done
	grep -q " $MNT fuse" /proc/self/mounts || { cat $W/$cfg.$round.log >&2; exit 1; }
	[ $cfg = iotap-stopped ] && "$IOTAP" trace $MNT stop >/dev/null
	dd if=/dev/zero of=$MNT/f bs=4k count=$OPS 2>/dev/null
	sleep 1.2	# the trace writer flushes at least once a second
	dd if=$MNT/f of=/dev/null bs=4k count=$OPS 2>/dev/null
	sleep 1.2
	dump
	dd if=/dev/zero of=$MNT/f bs=4k count=$OPS conv=notrunc 2>/dev/null
	sleep 1.2
	dump
	dd if=$MNT/f of=/dev/null bs=4k count=$OPS 2>/dev/null
	sleep 1.2
	dump
	mkdir -p $MNT/d
	"$METALOOP" -n $MFILES -p 2 $MNT/d >/dev/null || exit 1
	sleep 1.2
	dump
	sleep 2		# idle: what the daemon does by itself (timers), per second
	dump
	fusermount3 -u $MNT
	wait $VPID
	VPID=""
	# parts: .1 start-up and warm-up, .2 the writes, .3 the reads, .4 meta, .5 idle (2.5 s)
	printf '%s\t%s\twrite\t%s\n' $cfg $round "$(total $out.2)" >> $W/results
	printf '%s\t%s\tread\t%s\n' $cfg $round "$(total $out.3)" >> $W/results
	printf '%s\t%s\tmeta\t%s\n' $cfg $round "$(total $out.4)" >> $W/results
	printf '%s\t%s\tidle\t%s\n' $cfg $round "$(total $out.5)" >> $W/results
}

echo "# mount-cost: $OPS requests a phase, $ROUNDS round(s); load: $(cut -d' ' -f1-3 /proc/loadavg)"
for ((r = 1; r <= ROUNDS; r++)); do
	for cfg in $CONFIGS; do
		run_cfg $cfg $r
	done
done
echo "# load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - $W/results $OPS $((MFILES * 6)) <<'PY'
import sys, statistics
ops, mops = int(sys.argv[2]), int(sys.argv[3])
per = {}
for line in open(sys.argv[1]):
    cfg, rnd, phase, ir = line.split()
    # idle: 2 s of sleep plus the 0.5 s before the dump, per second
    div = {"idle": 2.5, "meta": mops}.get(phase, ops)
    per.setdefault((cfg, phase), []).append(int(ir) / div)
cfgs = []
for cfg, _ in per:
    if cfg not in cfgs:
        cfgs.append(cfg)
print("| config | 4 KiB write: instr/request | 4 KiB read: instr/request | create/stat/unlink: instr/op | idle: instr/s |")
print("|:---|---:|---:|---:|---:|")
for c in cfgs:
    cells = []
    for ph in ("write", "read", "meta", "idle"):
        v = per.get((c, ph), [])
        s = "%.0f" % statistics.median(v)
        if len(v) > 1:
            s += " [%.0f..%.0f]" % (min(v), max(v))
        cells.append(s)
    print("| %s | %s | %s | %s | %s |" % (c, cells[0], cells[1], cells[2], cells[3]))
def ratio(a, b):
    out = []
    for ph in ("write", "read", "meta"):
        if (a, ph) in per and (b, ph) in per:
            out.append("%s %.2f" % (ph, statistics.median(per[(a, ph)]) / statistics.median(per[(b, ph)])))
    return ", ".join(out)
for a, b in (("iotap", "ptll"), ("iotap-stopped", "iotap"), ("iotap-trace", "iotap"),
             ("iotap-trace", "ptll")):
    if any(k[0] == a for k in per) and any(k[0] == b for k in per):
        print("%s / %s: %s" % (a, b, ratio(a, b)))
PY
