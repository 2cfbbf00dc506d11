#!/bin/bash
# SPDX-License-Identifier: MIT
# report-outputs: every output of `iotap report` and `iotap compare` on
# synthetic traces whose figures are known (tests/unit/report-synth):
# the table, --json (golden figures, contract keys), --csv, --bonnie-csv
# (read back by Debian's bon_csv2txt), --interval, --phase --by op|file|tid,
# --phases-from, automatic phases on a bonnie-like trace (each within 1 s
# of its true boundary), compare of a trace with itself (ratio 1.000) and
# of labelled repeats (mean ± sd). No FUSE needed.
. "$(dirname "$0")/lib.sh"
SYNTH=${IOTAP_BUILD:-$(cd "$(dirname "$0")/../.." && pwd)/build}/tests/unit/report-synth
[ -x "$SYNTH" ] || skip "no report-synth at $SYNTH (build the tests)"
[ -x "$IOTAP" ] || fail "no iotap binary at $IOTAP"
command -v python3 >/dev/null || skip "needs python3"

cat > $T/golden.script <<'EOF'
w1 seqwrite ops=1000 rate=100 bs=1048576 lat=5000 fsync=100
r1 strided ops=500 rate=500 bs=4096 stride=65536 lat=100 file=5
c4 seqread ops=1000 rate=1000 bs=8192 lat=2000 threads=4 file=6 devread=20
EOF
cat > $T/bonnie.script <<'EOF'
putc seqwrite ops=100000 rate=50000 bs=1 lat=5 file=1
write seqwrite ops=40000 rate=20000 bs=8192 lat=20 file=2
rewrite rewrite ops=20000 rate=10000 bs=8192 lat=20 file=2
getc seqread ops=100000 rate=50000 bs=1 lat=5 file=3
read seqread ops=40000 rate=20000 bs=8192 lat=20 file=4
seeks randrw ops=6000 rate=3000 bs=8192 lat=100 threads=3 wpct=10 file=10 size=268435456
seq_create create n=1024 rate=5000 lat=100
seq_stat stat n=1024 rate=10000 lat=20
seq_delete unlink n=1024 rate=10000 lat=30
rand_create create n=1024 rate=5000 lat=100
rand_stat stat n=1024 rate=10000 lat=20
rand_delete unlink n=1024 rate=10000 lat=30
EOF
check "synth golden" "$SYNTH" --samples $T/golden.iotap $T/golden.script > /dev/null
check "synth bonnie" "$SYNTH" --samples --no-marks $T/bonnie.iotap $T/bonnie.script > $T/bounds.txt
check "synth bonnie marked" "$SYNTH" --samples $T/bonnie-m.iotap $T/bonnie.script > /dev/null

# the table
"$IOTAP" report $T/golden.iotap > $T/r.txt || fail "report"
grep -q "3 phases (from markers)" $T/r.txt || fail "table header"
grep -Eq "^ +0 w1 .* 104\.86 " $T/r.txt || { cat $T/r.txt; fail "w1 row lacks 104.86 MB/s"; }
"$IOTAP" report --bonnie $T/golden.iotap | grep -Eq "^ +0 w1 .* 102400 " ||
	fail "--bonnie: w1 should write 102400 K/sec"
# the default text is the table and the flags; the per-phase detail on request
grep -Eq "^ +0 w1 .* w 1m 100\.0%$" $T/r.txt || { cat $T/r.txt; fail "w1 row lacks its sizes"; }
grep -q "^\[0\] w1" $T/r.txt && fail "the default report prints the per-phase detail"
grep -q "latency(us)" $T/r.txt && fail "the default report prints latency tables"
grep -q "with --detail, one phase with --phase NAME" $T/r.txt || fail "no pointer to --detail"
"$IOTAP" report --detail $T/golden.iotap > $T/rd.txt || fail "report --detail"
expect_eq "phase blocks with --detail" "$(grep -c '^\[[0-9]\] ' $T/rd.txt)" 3
grep -q "latency(us)" $T/rd.txt || fail "--detail lacks the latency tables"
"$IOTAP" report -v $T/golden.iotap | cmp -s - $T/rd.txt || fail "-v differs from --detail"
"$IOTAP" report --phase w1 $T/golden.iotap > $T/rp.txt || fail "report --phase"
grep -q "^\[0\] w1" $T/rp.txt && grep -q "latency(us)" $T/rp.txt || fail "--phase lacks its detail"
# a 12-phase bonnie++ run: the table and flags, not a wall
"$IOTAP" report $T/bonnie.iotap > $T/rb.txt || fail "report bonnie"
[ "$(wc -l < $T/rb.txt)" -le 50 ] || { cat $T/rb.txt; fail "the bonnie report is $(wc -l < $T/rb.txt) lines"; }

# JSON: golden figures and contract keys
"$IOTAP" report --json $T/golden.iotap > $T/r.json || fail "report --json"
python3 - $T/r.json <<'PY' || fail "JSON figures"
import json, sys
r = json.load(open(sys.argv[1]))
for k in ("path", "format_version", "source", "capture_mode", "start_realtime", "duration_s",
          "records", "lost_records"):
    assert k in r["trace"], k
keys = ("name", "index", "start_s", "duration_s", "ops", "ops_per_s", "read", "write", "seeks",
        "seeks_per_s", "sequential_pct", "meta", "fsyncs", "fsyncs_per_s", "latency_us",
        "cpu_pct", "device", "flags")
for p in r["phases"] + [r["total"]]:
    for k in keys:
        assert k in p, (p["name"], k)
w, s, c = r["phases"]
assert w["name"] == "w1" and w["duration_s"] == 10.0, w["duration_s"]
assert w["write"]["mb_per_s"] == 104.858 and w["write"]["iops"] == 100.0, w["write"]
assert w["write"]["size_hist"] == {"1048576": 1000}, w["write"]["size_hist"]
assert w["fsyncs"] == 10 and w["fsyncs_per_s"] == 1.0
assert abs(w["latency_us"]["write"]["p50"] - 5000) <= 5000 / 64
assert w["cpu_pct"] == 10.0, w["cpu_pct"]
assert abs(w["device"]["write_mb_per_s"] - 104.8576) < 5, w["device"]
assert s["seeks"] == 499 and s["seeks_per_s"] == 499.0 and s["seek_hist"] == {"65536": 499}
assert s["sequential_pct"] == 0.2
assert c["concurrency"]["threads"] == 4 and c["concurrency"]["mean_inflight"] == 2.0
assert abs(c["device"]["fs_reads_not_seen_pct"] - 80) < 4, c["device"]
assert r["total"]["write"]["bytes"] == 1048576000
PY

# CSV: one row per phase and the total, same columns everywhere
"$IOTAP" report --csv $T/golden.iotap > $T/r.csv || fail "report --csv"
expect_eq "CSV rows" "$(wc -l < $T/r.csv)" 5
python3 - $T/r.csv <<'PY' || fail "CSV"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert rows[0]["name"] == "w1" and float(rows[0]["write_mb_per_s"]) == 104.858, rows[0]
assert rows[-1]["name"] == "total"
assert rows[-1]["index"] == "", "the total row is not phase " + rows[-1]["index"]
assert [r["index"] for r in rows[:-1]] == [str(i) for i in range(len(rows) - 1)]
assert all(len(r) == len(rows[0]) for r in rows)
PY

# automatic phases: names and boundaries within 1 s
"$IOTAP" report --json $T/bonnie.iotap > $T/b.json || fail "report on the unmarked bonnie trace"
python3 - $T/b.json $T/bounds.txt <<'PY' || fail "automatic phases"
import json, sys
r = json.load(open(sys.argv[1]))
bounds = [float(x) for x in open(sys.argv[2])]
want = ["seq-write-1b", "seq-write-8k", "rewrite-8k", "seq-read-1b", "seq-read-8k",
        "rand-read-8k+10%w", "create", "stat", "unlink", "create#2", "stat#2", "unlink#2"]
got = [p["name"] for p in r["phases"]]
assert got == want, got
worst = max(abs(p["start_s"] - b) for p, b in zip(r["phases"], bounds))
assert worst < 1.0, worst
print("# worst boundary error %.4f s" % worst)
PY

# bonnie++'s CSV, from the automatic phases and from markers
"$IOTAP" report --bonnie-csv $T/bonnie.iotap > $T/auto.csv || fail "--bonnie-csv (automatic)"
"$IOTAP" report --bonnie-csv $T/bonnie-m.iotap > $T/mark.csv || fail "--bonnie-csv (markers)"
for f in auto mark; do
	expect_eq "$f CSV fields" "$(awk -F, '{ print NF }' $T/$f.csv)" 50
	grep -q "^1\.98,2\.00a," $T/$f.csv || fail "$f CSV does not start with 1.98,2.00a"
done
# putc: 100000 bytes in 2 s = 48 K/sec; write: 40000 x 8 KiB in 2 s = 160000 K/sec
expect_eq "putc K/sec" "$(cut -d, -f10 $T/mark.csv)" 48
expect_eq "put_block K/sec" "$(cut -d, -f12 $T/mark.csv)" 160000
if command -v bon_csv2txt >/dev/null; then
	bon_csv2txt < $T/mark.csv > $T/b.txt 2>&1 || fail "bon_csv2txt"
	grep -q "160000\|156m" $T/b.txt || { cat $T/b.txt; fail "bon_csv2txt lost put_block"; }
	grep -qi "expected" $T/b.txt && fail "bon_csv2txt rejected the line"
fi
"$IOTAP" report --bonnie-csv $T/golden.iotap > /dev/null 2>$T/err && fail "--bonnie-csv on non-bonnie phases"
grep -q "not bonnie++'s" $T/err || fail "--bonnie-csv error text"

# time series
"$IOTAP" report --interval 1s --csv $T/golden.iotap > $T/s.csv || fail "--interval"
head -1 $T/s.csv | grep -q "^t_s,phase,ops_per_s,read_mb_per_s,write_mb_per_s" || fail "series header"
rows=$(($(wc -l < $T/s.csv) - 1))
[ $rows -ge 13 ] && [ $rows -le 15 ] || fail "series has $rows rows for a 13 s trace"
awk -F, 'NR > 1 && $1 >= 2 && $1 < 10 && $2 != "\"w1\"" { bad = 1 } END { exit bad }' $T/s.csv ||
	fail "series rows inside w1 are not labelled w1"
awk -F, 'NR > 1 && $1 >= 2 && $1 < 10 && ($5 < 104 || $5 > 106) { bad = 1 } END { exit bad }' $T/s.csv ||
	fail "series: w1 writes 104.9 MB/s every second"
"$IOTAP" report --interval 250ms $T/golden.iotap | grep -q "^ *t_s" || fail "--interval text"

# one phase, broken down
"$IOTAP" report --phase c4 --by tid $T/golden.iotap > $T/by.txt || fail "--by tid"
expect_eq "threads in c4" "$(grep -Ec '^10[0-3] ' $T/by.txt)" 4
"$IOTAP" report --phase c4 --by op --csv $T/golden.iotap | grep -q '^"read",1000,' || fail "--by op"
"$IOTAP" report --phase w1 --by file $T/golden.iotap | grep -q "^Bonnie.1234 .* 1010 " ||
	fail "--by file shows the file's name"
"$IOTAP" report --phase 'create#2' --json $T/bonnie.iotap | grep -q '"name": *"create#2"' ||
	fail "--phase create#2"

# phases from another trace
"$IOTAP" report --phases-from $T/bonnie-m.iotap --csv $T/bonnie.iotap > $T/pf.csv || fail "--phases-from"
"$IOTAP" report --csv $T/bonnie-m.iotap > $T/m.csv
cut -d, -f1,5 $T/pf.csv > $T/pf.cut
cut -d, -f1,5 $T/m.csv > $T/m.cut
cmp -s $T/pf.cut $T/m.cut || { diff $T/pf.cut $T/m.cut; fail "--phases-from: names and op counts differ"; }

# compare: a trace with itself, and labelled repeats
"$IOTAP" compare --json $T/golden.iotap $T/golden.iotap > $T/c.json || fail "compare"
python3 - $T/c.json <<'PY' || fail "compare with itself"
import json, sys
c = json.load(open(sys.argv[1]))
n = 0
for p in c["phases"]:
    for k, cells in p["figures"].items():
        assert cells[1]["ratio"] == 1.0, (p["name"], k, cells)
        n += 1
assert n > 20 and [p["name"] for p in c["phases"]] == ["w1", "r1", "c4", "total"]
PY
"$IOTAP" compare $T/golden.iotap $T/golden.iotap > $T/c.txt || fail "compare text"
grep -E "^ +write MB/s +104\.86 +104\.86 +1\.000" $T/c.txt > /dev/null || { cat $T/c.txt; fail "compare table"; }
"$IOTAP" compare --label a $T/golden.iotap $T/golden.iotap --label b $T/golden.iotap > $T/l.txt ||
	fail "compare --label"
grep -E "^ +write MB/s +104\.86 ± 0\.00 +104\.86 +1\.000" $T/l.txt > /dev/null ||
	{ cat $T/l.txt; fail "compare --label mean ± sd"; }
"$IOTAP" compare --csv --baseline b --label a $T/golden.iotap --label b $T/bonnie-m.iotap > $T/l.csv ||
	fail "compare --baseline"
grep -q '^"total",duration_s,"b",1,' $T/l.csv || fail "--baseline b comes first"
exit 0
