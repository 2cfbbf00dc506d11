#!/bin/bash
# SPDX-License-Identifier: MIT
# trace-cost.sh - what does `iotap run bonnie --trace` cost the test it
# traces? (a benchmark, not a test)
#
# usage: tests/bench/trace-cost.sh [--rounds N] [--size MIB] [--char-size MIB]
#                                  [--no-callgrind] [DIR]
#
#   timing     `iotap run bonnie DIR -s SIZE -r SIZE/2 -n 0 --char-size C`
#              without and with --trace, alternating within each round;
#              per test (putc, write, rewrite, getc, read) the median
#              K/sec of each and the ratio traced/untraced.
#   callgrind  one small run of each under valgrind --tool=callgrind
#              (instruction counts: the same on a loaded machine as on a
#              quiet one): instructions per 1-byte write()/read() in the
#              calling thread without and with the trace, and per record
#              in the trace's writer thread (encoding and zstd).
#
# Every per-char call becomes one record; the calling thread builds it and
# the writer thread (another core, if there is one) encodes and compresses
# it. DIR defaults to a directory under /tmp. IOTAP may name the binary.
set -u

ROUNDS=3
SIZE=256
CHAR=8
CG=1
DIR=
while [ $# -gt 0 ]; do
	case $1 in
	--rounds) ROUNDS=$2; shift 2 ;;
	--size) SIZE=$2; shift 2 ;;
	--char-size) CHAR=$2; shift 2 ;;
	--no-callgrind) CG=; shift ;;
	-h|--help) sed -n '3,23p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "trace-cost.sh: unknown option '$1'" >&2; exit 2 ;;
	*) DIR=$1; shift ;;
	esac
done
IOTAP=${IOTAP:-$(cd "$(dirname "$0")/../.." && pwd)/build/tools/iotap}
[ -x "$IOTAP" ] || { echo "trace-cost.sh: no iotap at $IOTAP" >&2; exit 1; }
W=$(mktemp -d /tmp/trace-cost.XXXXXX)
trap 'rm -rf "$W"' EXIT
[ -n "$DIR" ] || { DIR=$W/d; mkdir "$DIR"; }

echo "# trace-cost.sh: $(date -u +%F), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# bonnie -s ${SIZE}M -r $((SIZE / 2)) -n 0 --char-size $CHAR, $ROUNDS rounds, in $DIR"
for r in $(seq "$ROUNDS"); do
	for mode in plain traced; do
		args=()
		[ $mode = traced ] && args=(--trace "$W/t.iotap" --force)
		sync
		"$IOTAP" run bonnie "$DIR" -s "${SIZE}M" -r $((SIZE / 2)) -n 0 --char-size "$CHAR" -q \
			"${args[@]}" 2> /dev/null | tail -n 1 >> "$W/$mode.csv" ||
			{ echo "trace-cost.sh: bonnie ($mode) failed" >&2; exit 1; }
	done
done
python3 - "$W/plain.csv" "$W/traced.csv" <<'PY'
import statistics, sys
# bonnie++ 1.98 CSV: putc 10, put_block 12, rewrite 14, getc 16, get_block 18 (1-based)
cols = [("putc", 9), ("write", 11), ("rewrite", 13), ("getc", 15), ("read", 17)]
def load(p):
    return [l.strip().split(",") for l in open(p) if l.strip()]
plain, traced = load(sys.argv[1]), load(sys.argv[2])
print("%-10s %14s %14s %8s   rounds (traced/untraced)" % ("test", "untraced K/s", "traced K/s", "ratio"))
for name, i in cols:
    a = [float(x[i]) for x in plain if x[i].replace(".", "").isdigit()]
    b = [float(x[i]) for x in traced if x[i].replace(".", "").isdigit()]
    if not a or not b:
        print("%-10s %14s %14s %8s   (too short to time)" % (name, "+++++", "+++++", "-"))
        continue
    ma, mb = statistics.median(a), statistics.median(b)
    rr = " ".join("%.2f" % (y / x) for x, y in zip(a, b) if x)
    print("%-10s %14.0f %14.0f %8.3f   %s" % (name, ma, mb, mb / ma, rr))
PY

[ -n "$CG" ] || exit 0
command -v valgrind > /dev/null && command -v callgrind_annotate > /dev/null ||
	{ echo "# callgrind: valgrind is not installed, skipped"; exit 0; }
mkdir -p "$W/cg"
for mode in plain traced; do
	args=()
	[ $mode = traced ] && args=(--trace "$W/cg.iotap" --force)
	valgrind --tool=callgrind --callgrind-out-file="$W/$mode.cg" "$IOTAP" run bonnie "$W/cg" \
		-s 4M -r 2 -n 0 --char-size 1 -q "${args[@]}" > /dev/null 2>&1 ||
		{ echo "trace-cost.sh: callgrind run ($mode) failed" >&2; exit 1; }
done
recs=$("$IOTAP" info "$W/cg.iotap" | awk '$1 == "records" { print $2 }')
python3 - "$W/plain.cg" "$W/traced.cg" "$recs" <<'PY'
import re, subprocess, sys
def incl(path):
    out = subprocess.run(["callgrind_annotate", "--inclusive=yes", path],
                         capture_output=True, text=True).stdout
    got = {}
    for l in out.splitlines():
        m = re.match(r"\s*([\d,]+) \([ \d.]+%\)\s+(\S+):(\w+) \[", l)
        if m:
            key = m.group(2).rsplit("/", 1)[-1] + ":" + m.group(3)
            got.setdefault(key, int(m.group(1).replace(",", "")))
    return got
def per_call(path, fn):
    # the call site that makes 2^20 calls (--char-size 1): "N (x%)  => file:fn (1,048,576x)"
    out = subprocess.run(["callgrind_annotate", "--inclusive=yes", path],
                         capture_output=True, text=True).stdout
    for l in out.splitlines():
        m = re.match(r"\s*([\d,]+) \([ \d.]+%\)\s+=> \S+:(\w+) \(1,048,576x\)", l)
        if m and m.group(2) == fn:
            return int(m.group(1).replace(",", "")) / 1048576
    return None
t = incl(sys.argv[2])
recs = int(sys.argv[3])
for name, fn in (("write(1 byte)", "wl_write_full"), ("read(1 byte)", "wl_read")):
    a, b = per_call(sys.argv[1], fn), per_call(sys.argv[2], fn)
    if a and b:
        print("callgrind %-14s calling thread: %5.0f instructions untraced, %5.0f traced (+%.0f)"
              % (name, a, b, b - a))
w = t.get("recorder.c:rcd_writer_main")
z = t.get("???:ZSTD_compress2") or 0
if w and recs:
    print("callgrind writer thread: %.0f instructions per record (%d records), zstd %.0f of them"
          % (w / recs, recs, z / recs))
PY
