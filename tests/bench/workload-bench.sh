#!/bin/bash
# SPDX-License-Identifier: MIT
# workload-bench.sh - do iotap's workload models run as fast as the tools
# they imitate? (a benchmark, not a test)
#
# usage: tests/bench/workload-bench.sh [--size MIB] [--rounds N] [--files N]
#                                      [--seeks N] [--mem MIB] [--direct] [DIR]
#
#   bonnie: `iotap run bonnie DIR -s SIZE -r SIZE/2 -n FILES` against the
#           real `bonnie++ -d DIR -s SIZE -r SIZE/2 -n FILES -u USER`, same
#           seed; per-test K/sec (or /sec) from both CSV lines.
#   iozone: `iotap run iozone DIR -s SIZE -r 64 -i 0 -i 1` against fio jobs
#           of the same pattern on one file: write (new file), rewrite
#           (same file again), read, re-read; sync engine, 64 KiB blocks,
#           no fsync in the timing, invalidate=0 (iozone does not drop the
#           cache between its tests either). iozone's KB/s vs fio's bw.
#
# Every figure is the median of --rounds runs (default 3); the two programs
# alternate within each round so that drift on a shared VM hits both alike,
# and each starts after a sync and a 2 s pause.
# Prints per test: median of the tool, median of iotap, the ratio
# iotap/tool and whether it is within ±10%. -r SIZE/2 keeps bonnie++ from
# refusing a file smaller than twice RAM: with a modest SIZE the page cache
# holds the file, so the figures compare the programs, not the disk.
# --mem MIB runs both programs in a memory cgroup of that size (root; v2 or
# v1 memory controller), which caps the page cache they may use, as the
# seed posts' mem=2G boot option did: then the file is larger than the
# cache and the disk is measured, seeks included. --direct adds iozone -I
# and fio --direct=1. --seeks N gives both bonnies N seeks (default 8192,
# which a fast disk finishes in under the half second bonnie++ can time).
#
# Needs bonnie++ (Debian package bonnie++), fio and python3. IOTAP may name
# the iotap binary (default: build/tools/iotap next to this tree).
set -u

SIZE=1024
ROUNDS=3
FILES=64
DIR=
MEM=
DIRECT=
SEEKS=8192
while [ $# -gt 0 ]; do
	case $1 in
	--size) SIZE=$2; shift 2 ;;
	--mem) MEM=$2; shift 2 ;;
	--direct) DIRECT=1; shift ;;
	--seeks) SEEKS=$2; shift 2 ;;
	--rounds) ROUNDS=$2; shift 2 ;;
	--files) FILES=$2; shift 2 ;;
	-h|--help) sed -n '3,36p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "workload-bench.sh: unknown option '$1'" >&2; exit 2 ;;
	*) DIR=$1; shift ;;
	esac
done
IOTAP=${IOTAP:-$(cd "$(dirname "$0")/../.." && pwd)/build/tools/iotap}
for p in bonnie++ fio python3; do
	command -v $p >/dev/null || { echo "workload-bench.sh: $p is not installed" >&2; exit 77; }
done
[ -x "$IOTAP" ] || { echo "workload-bench.sh: no iotap at $IOTAP" >&2; exit 1; }
W=$(mktemp -d "${TMPDIR:-/tmp}/iotap-wlbench.XXXXXX")
CG=
cleanup() {
	rm -rf "$W"
	if [ -n "$CG" ]; then
		echo $$ > "$CG_PARENT/$CG_TASKS" 2>/dev/null
		rmdir "$CG" 2>/dev/null
	fi
}
trap cleanup EXIT
if [ -n "$MEM" ]; then
	# this shell and everything it starts go into a memory cgroup of MEM MiB
	if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
		CG_PARENT=/sys/fs/cgroup CG_TASKS=cgroup.procs
		CG=$CG_PARENT/iotap-wlbench.$$
		mkdir "$CG" && echo $((MEM << 20)) > "$CG/memory.max"
	elif [ -d /sys/fs/cgroup/memory ]; then
		CG_PARENT=/sys/fs/cgroup/memory CG_TASKS=tasks
		CG=$CG_PARENT/iotap-wlbench.$$
		mkdir "$CG" && echo $((MEM << 20)) > "$CG/memory.limit_in_bytes"
	fi
	if [ -z "$CG" ] || ! echo $$ > "$CG/$CG_TASKS"; then
		echo "workload-bench.sh: --mem needs root and a cgroup memory controller" >&2
		exit 1
	fi
fi
[ -n "$DIR" ] || DIR=$W/d
mkdir -p "$DIR"
RAM=$((SIZE / 2))
SEED=4242
USER_NAME=$(id -un)

echo "# workload-bench: $DIR, file ${SIZE} MiB, $SEEKS seeks, -n $FILES, $ROUNDS rounds," \
	"page cache ${MEM:+limited to $MEM MiB}${MEM:-not limited}" \
	"${DIRECT:+, O_DIRECT for iozone/fio}, $(nproc) CPUs, $(uname -r)"
echo "# $(bonnie++ 2>&1 | sed -n 's/^Version: /bonnie++ /p'), $(fio --version), $("$IOTAP" --version)"

# before every measured program: write back what the previous one left dirty
settle() {
	sync
	sleep 2
}

for r in $(seq 1 "$ROUNDS"); do
	# alternate who goes first
	if [ $((r % 2)) -eq 1 ]; then order="real iotap"; else order="iotap real"; fi
	for who in $order; do
		settle
		if [ $who = real ]; then
			bonnie++ -d "$DIR" -s $SIZE:8192:$SEEKS -r $RAM -n $FILES -z $SEED \
				-u "$USER_NAME" -q \
				2>/dev/null | grep '^1\.98,' >> $W/bonnie.real ||
				{ echo "bonnie++ failed" >&2; exit 1; }
		else
			"$IOTAP" run bonnie "$DIR" -s $SIZE:8192:$SEEKS -r $RAM -n $FILES -z $SEED -q \
				2>/dev/null | grep '^1\.98,' >> $W/bonnie.iotap ||
				{ echo "iotap run bonnie failed" >&2; exit 1; }
		fi
	done
	for who in $order; do
		if [ $who = real ]; then
			rm -f "$DIR/fio.dat"
			settle
			for job in write:write rewrite:write read:read reread:read; do
				name=${job%%:*}
				fio --name=$name --filename="$DIR/fio.dat" --rw=${job#*:} --bs=64k \
					--size=${SIZE}m --ioengine=sync --invalidate=0 --fallocate=none \
					${DIRECT:+--direct=1} \
					--output-format=json > $W/fio.$name.$r.json 2>/dev/null ||
					{ echo "fio $name failed" >&2; exit 1; }
			done
			rm -f "$DIR/fio.dat"
		else
			settle
			"$IOTAP" run iozone "$DIR" -s ${SIZE}m -r 64 -i 0 -i 1 ${DIRECT:+-I} --quiet \
				> $W/iozone.$r.txt || { echo "iotap run iozone failed" >&2; exit 1; }
		fi
	done
done

python3 - "$W" "$ROUNDS" <<'PY'
import glob, json, statistics, sys
w, rounds = sys.argv[1], int(sys.argv[2])

def rows(path):
    return [l.strip().split(",") for l in open(path) if l.startswith("1.98,")]

# CSV columns of bonnie++ 2.00a (format 1.98)
cols = {"putc (K/s)": 9, "write (K/s)": 11, "rewrite (K/s)": 13, "getc (K/s)": 15,
        "read (K/s)": 17, "seeks (/s)": 19, "seq_create (/s)": 26, "seq_stat (/s)": 28,
        "seq_delete (/s)": 30, "rand_create (/s)": 32, "rand_stat (/s)": 34,
        "rand_delete (/s)": 36}
target = {"write (K/s)", "rewrite (K/s)", "read (K/s)", "seeks (/s)"}

def med(vals):
    # +++++ (None) means faster than bonnie++ can time: it counts as +inf,
    # and a median that lands on it is +++++ again
    if not vals:
        return None
    m = statistics.median_low([float("inf") if v is None else v for v in vals])
    return None if m == float("inf") else m

def num(s):
    try:
        return float(s)
    except ValueError:
        return None          # +++++: under half a second

def line(name, a, b, vals_a, vals_b, tgt):
    if a is None or b is None:
        print(f"{name:18} {'+++++' if a is None else f'{a:12.1f}':>12} "
              f"{'+++++' if b is None else f'{b:12.1f}':>12} {'-':>7}  (too short to time)")
        return
    ratio = b / a
    flag = ("ok" if abs(ratio - 1) <= 0.10 else "OUTSIDE ±10%") if tgt else ""
    print(f"{name:18} {a:12.1f} {b:12.1f} {ratio:7.3f}  {flag:13} "
          f"tool {' '.join(f'{v:.0f}' for v in vals_a if v is not None)} / "
          f"iotap {' '.join(f'{v:.0f}' for v in vals_b if v is not None)}")

real, ours = rows(f"{w}/bonnie.real"), rows(f"{w}/bonnie.iotap")
print(f"\nbonnie: median of {rounds}          bonnie++        iotap   ratio")
for name, c in cols.items():
    va = [num(r[c]) for r in real]
    vb = [num(r[c]) for r in ours]
    line(name, med(va), med(vb), va, vb, name in target)

print(f"\niozone -i 0 -i 1 -r 64 vs fio: median of {rounds} (KB/s)   fio   iotap   ratio")
tests = ["write", "rewrite", "read", "reread"]
fio = {t: [] for t in tests}
ioz = {t: [] for t in tests}
for t in tests:
    for f in sorted(glob.glob(f"{w}/fio.{t}.*.json")):
        j = json.load(open(f))["jobs"][0]
        bw = j["write"]["bw_bytes"] if t in ("write", "rewrite") else j["read"]["bw_bytes"]
        fio[t].append(bw / 1024)
for f in sorted(glob.glob(f"{w}/iozone.*.txt")):
    for l in open(f):
        p = l.split()
        if len(p) >= 6 and p[0].isdigit() and p[1].isdigit():
            for t, v in zip(tests, p[2:6]):
                ioz[t].append(float(v))
for t in tests:
    line(t + " (KB/s)", med(fio[t]), med(ioz[t]), fio[t], ioz[t], True)
PY
