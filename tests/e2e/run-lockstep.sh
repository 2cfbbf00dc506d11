#!/bin/bash
# SPDX-License-Identifier: MIT
# run-lockstep: several directories at once keep their tests in step (as
# bonnie++ -p/-y): with one directory fast (tmpfs) and one slow (an iotap
# capture mount with direct_io), every bonnie test begins on both within
# 30 ms of each other (the traces' PHASE BEGIN times; one clock), while
# with --no-lockstep the fast one's later tests start well ahead. The
# overlap line printed for each directory and test equals the share of
# the test's span (from its trace's markers) during which the other
# directory ran the same test. pgsql and dedup print the overlap too.
. "$(dirname "$0")/lib.sh"
need_fuse
mkdir -p $T/fast $T/slowb $T/slow
mount -t tmpfs -o size=256m tmpfs $T/fast && _mounts="$_mounts $T/fast" || skip "no tmpfs"
iotap_mount $T/slowb $T/slow

for mode in lock nolock; do
	extra=""
	[ $mode = nolock ] && extra=--no-lockstep
	"$IOTAP" run bonnie $T/fast $T/slow -s 8 -n 1 -r 4 -f -q $extra \
		--trace $T/$mode.iotap > $T/$mode.txt 2> $T/$mode.err ||
		{ cat $T/$mode.err; fail "run bonnie ($mode)"; }
	for i in 1 2; do
		"$IOTAP" dump $T/$mode.$i.iotap | awk '$4 == "PHASE"' > $T/$mode.$i.ph ||
			fail "dump $mode.$i"
		"$IOTAP" report --json $T/$mode.$i.iotap > $T/$mode.$i.json || fail "report $mode.$i"
	done
done
grep -q "^lockstep on" $T/lock.txt || { cat $T/lock.txt; fail "no lockstep line"; }
grep -q "^lockstep off (--no-lockstep)" $T/nolock.txt || fail "no 'lockstep off' line"

python3 - $T <<'PY' || fail "lockstep / overlap figures"
import json, re, sys
T = sys.argv[1]
def spans(path, base):
    # dump's "TIME PID TID PHASE begin|end name=...": TIME is from the trace's own start;
    # + its start_realtime puts both traces on one clock
    out, open_ = [], {}
    for line in open(path):
        f = line.split()
        name = re.search(r'name="([^"]*)"', line).group(1)
        if f[4] == "begin":
            open_[name] = base + float(f[0])
        else:
            out.append((name, open_.pop(name), base + float(f[0])))
    return out
def base(path):
    return json.load(open(path))["trace"]["start_realtime"]
bad = []
for mode in ("lock", "nolock"):
    a = spans(f"{T}/{mode}.1.ph", base(f"{T}/{mode}.1.json"))
    b = spans(f"{T}/{mode}.2.ph", base(f"{T}/{mode}.2.json"))
    names = [x[0] for x in a]
    assert names == [x[0] for x in b], (names, [x[0] for x in b])
    d = [abs(x[1] - y[1]) for x, y in zip(a, b)]
    if mode == "lock" and max(d) > 0.03:
        bad.append(f"lockstep: begins differ by up to {max(d):.3f} s: {d}")
    if mode == "nolock" and max(d) < 0.1:
        bad.append(f"--no-lockstep: begins within {max(d):.3f} s; the slow mount is not slower?")
    # the printed overlap of each test, against the spans
    txt = open(f"{T}/{mode}.txt").read()
    for i, (me, other) in enumerate(((a, b), (b, a))):
        line = re.search(r"^  [^:]*%s: (.*)$" % ("fast" if i == 0 else "slow"), txt, re.M).group(1)
        got = dict((m[0], float(m[1])) for m in re.findall(r"(\w+) ([0-9.]+)%", line))
        for (n, t0, t1), (_, o0, o1) in zip(me, other):
            want = 100.0 * max(0.0, min(t1, o1) - max(t0, o0)) / (t1 - t0) if t1 > t0 else 0
            if abs(got[n] - want) > 0.2 + 0.01 * want:
                bad.append(f"{mode} {'fast' if i == 0 else 'slow'} {n}: printed {got[n]}%, spans say {want:.1f}%")
if bad:
    print("\n".join(bad))
    sys.exit(1)
PY

# pgsql and dedup on both: the overlap line
"$IOTAP" run dedup $T/fast $T/slow --image-size 8m --generations 2 --streams 1 -q > $T/dd.txt \
	2> $T/dd.err || { cat $T/dd.err; fail "run dedup on two"; }
grep -Eq "^  .*fast: init [0-9.]+%, backup gen=0 [0-9.]+%" $T/dd.txt || { cat $T/dd.txt; fail "dedup overlap"; }
mkdir -p $T/fast/pg $T/slow/pg
"$IOTAP" run pgsql $T/fast/pg $T/slow/pg -T 2 --warmup 1 --max-wal-size 64MB --min-wal-size 32MB -q > $T/pg.txt \
	2> $T/pg.err || { cat $T/pg.txt $T/pg.err; fail "run pgsql on two"; }
grep -Eq "^  .*fast/pg: init [0-9.]+%, warmup [0-9.]+%, steady [0-9.]+%" $T/pg.txt ||
	{ cat $T/pg.txt; fail "pgsql overlap"; }
iotap_umount $T/slow
exit 0
