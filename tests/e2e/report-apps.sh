#!/bin/bash
# SPDX-License-Identifier: MIT
# report-apps: `iotap report` and `compare` show the application figures of
# `run pgsql` and `run dedup` traces, in text and JSON, and they are the
# figures the run itself printed: pgbench's tps (with and without
# warm-up), latency average, stddev and percentiles, the steady WAL
# fdatasync count and p50/p99/max, each log_checkpoints line's buffers,
# write and sync time, files synced, longest and average sync; dedup's
# per-generation logical and physical MB/s, dedup ratios, look-ups/s, hit
# %, index reads, index-miss p50/p99 (the same digits: one histogram of the
# same reads), restore MB, MB/s and reads. compare names the layout
# with more tps and lower commit p99 / higher restore MB/s; compare --csv
# (rows of phase "application") and --html (an "Application figures"
# section with the verdicts) carry the same figures as compare --json, for
# pgsql and dedup traces, and so does report --html's application section
# (with the checkpoints, the backups and restores). A trace of another workload has no application
# figures (JSON null, no CSV rows, no HTML section).
. "$(dirname "$0")/lib.sh"
P=$T/pg
mkdir -p $P/d1 $P/w1 $P/d2 $P/w2 $T/dd

# two small pgsql runs (data and WAL apart), a checkpoint in each
for i in 1 2; do
	"$IOTAP" run pgsql $P/d$i --wal-dir $P/w$i -s 1 -c 2 -T 5 --warmup 3 \
		--max-wal-size 32MB --completion-target 0.5 -q --trace $T/pg$i.iotap \
		> $T/pg$i.txt 2> $T/pg$i.err ||
		{ cat $T/pg$i.err; fail "run pgsql $i"; }
	"$IOTAP" report $T/pg$i.iotap > $T/pg$i.rep || fail "report pg$i"
	"$IOTAP" report --json $T/pg$i.iotap > $T/pg$i.json || fail "report --json pg$i"
done
grep -q "^LOG:  checkpoint complete" $T/pg1.txt || { cat $T/pg1.txt; fail "no checkpoint in 4 s"; }

python3 - $T <<'PY' || fail "pgsql: report's application figures differ from the run's"
import json, re, sys
T = sys.argv[1]
bad = []
def check(what, got, want, tol=0.0):
    if got is None or want is None or abs(got - want) > tol:
        bad.append(f"{what}: report {got}, run {want}")
for i in (1, 2):
    run = open(f"{T}/pg{i}.txt").read()
    rep = open(f"{T}/pg{i}.rep").read()
    app = rep[rep.index("\napplication:"):]
    full = json.load(open(f"{T}/pg{i}.json"))
    js = full["application"]
    if full["trace"]["lost_records"]:
        # a loaded machine: the recorder dropped records (LOST), the trace's counts are short
        print(f"pg{i}: {full['trace']['lost_records']} records lost; its trace figures not compared")
        continue
    # text: pgbench's own lines, character for character
    for pat in (r"^tps = .*\(including warm-up\)$", r"^tps = .*\(excluding warm-up\)$",
                r"^latency average = .*$", r"^latency stddev = .*$",
                r"^latency percentiles: .*$",
                r"^model CPU per transaction \(steady, all roles\): .*$"):
        w = re.search(pat, run, re.M).group(0)
        g = re.search(r"^  " + pat[1:], app, re.M)
        if not g or g.group(0).strip() != w:
            bad.append(f"pg{i} text: run '{w}', report '{g.group(0) if g else None}'")
    n = int(re.search(r"actually processed: (\d+)", run).group(1))
    check(f"pg{i} transactions", js["transactions"], n)
    for k, lbl in (("tps_including_warmup", "including"), ("tps_excluding_warmup", "excluding")):
        w = float(re.search(r"^tps = ([0-9.]+) \(%s warm-up\)" % lbl, run, re.M).group(1))
        check(f"pg{i} json {k}", js[k], w, 1e-6)
    w = float(re.search(r"^latency average = ([0-9.]+) ms", run, re.M).group(1))
    check(f"pg{i} json latency avg", js["latency_ms"]["avg"], w, 0.0015)
    pct = dict(re.findall(r"(p[0-9.]+|max) ([0-9.]+) ms", re.search(r"^latency percentiles:.*$", run, re.M).group(0)))
    check(f"pg{i} json latency p99", js["latency_ms"]["p99"], float(pct["p99"]), 0.0015)
    check(f"pg{i} json latency p50", js["latency_ms"]["p50"], float(pct["p50"]), 0.0015)
    # commit: the steady fdatasyncs on the WAL files
    m = re.search(r"^WAL fdatasync latency \(steady\): (\d+) calls, \d+ by committing clients, "
                  r"p50 ([0-9.]+) ms, p99 ([0-9.]+) ms, max ([0-9.]+) ms", run, re.M)
    g = re.search(r"^  commit \(WAL sync, steady\): (\d+) calls, p50 ([0-9.]+) ms, "
                  r"p99 ([0-9.]+) ms, max ([0-9.]+) ms", app, re.M)
    if not g:
        bad.append(f"pg{i}: no commit line")
    else:
        for k in range(4):
            check(f"pg{i} commit text field {k}", float(g.group(k + 1)), float(m.group(k + 1)))
        cs = js["commit_sync"]
        check(f"pg{i} json commit calls", cs["calls"], int(m.group(1)))
        check(f"pg{i} json commit p99", cs["p99_ms"], float(m.group(3)), 0.0015)
        check(f"pg{i} json commit max", cs["max_ms"], float(m.group(4)), 0.0015)
    # checkpoints: log_checkpoints' figures; times within 2 ms (markers vs the run's clock)
    runck = re.findall(r"^LOG:  checkpoint complete: wrote (\d+) buffers .*write=([0-9.]+) s, "
                       r"sync=([0-9.]+) s, .*sync files=(\d+), longest=([0-9.]+) s, "
                       r"average=([0-9.]+) s", run, re.M)
    repck = [c for c in js["checkpoints"] if c["complete"]]
    if len(runck) != len(repck):
        bad.append(f"pg{i}: {len(runck)} complete checkpoints in the run, {len(repck)} in report")
    for w, g in zip(runck, repck):
        check(f"pg{i} ckpt {g['seq']} buffers", g["buffers"], int(w[0]))
        check(f"pg{i} ckpt {g['seq']} files", g["sync_files"], int(w[3]))
        # the trace carries the run's own checkpoint times (APP SPANs,
        # issue 27 item 8): the report prints what the run printed
        check(f"pg{i} ckpt {g['seq']} write_s", g["write_s"], float(w[1]), 0.0021)
        check(f"pg{i} ckpt {g['seq']} sync_s", g["sync_s"], float(w[2]), 0.0021)
        check(f"pg{i} ckpt {g['seq']} longest", g["longest_sync_s"], float(w[4]), 0.0011)
        check(f"pg{i} ckpt {g['seq']} average", g["average_sync_s"], float(w[5]), 0.0011)
        tl = re.search(r"^  checkpoint %d: wrote (\d+) buffers; .*sync files=(\d+)" % g["seq"], app, re.M)
        if not tl or int(tl.group(1)) != int(w[0]) or int(tl.group(2)) != int(w[3]):
            bad.append(f"pg{i} ckpt {g['seq']} text line")
if bad:
    print("\n".join(bad))
    sys.exit(1)
PY

# compare: the layout with more tps and lower commit p99, named as the runs say
"$IOTAP" compare $T/pg1.iotap $T/pg2.iotap > $T/cmp.txt || fail "compare"
"$IOTAP" compare --json $T/pg1.iotap $T/pg2.iotap > $T/cmp.json || fail "compare --json"
python3 - $T <<'PY' || { cat $T/cmp.txt; fail "compare's verdicts"; }
import json, re, sys
T = sys.argv[1]
tps = [float(re.search(r"^tps = ([0-9.]+) \(excluding", open(f"{T}/pg{i}.txt").read(), re.M).group(1)) for i in (1, 2)]
p99 = [float(re.search(r"^WAL fdatasync.* p99 ([0-9.]+) ms", open(f"{T}/pg{i}.txt").read(), re.M).group(1)) for i in (1, 2)]
txt = open(f"{T}/cmp.txt").read()
js = json.load(open(f"{T}/cmp.json"))["application"]
best = "pg1.iotap" if tps[0] >= tps[1] else "pg2.iotap"
assert re.search(r"^higher tps \(steady\): %s " % re.escape(best), txt, re.M), "tps verdict"
v = {x["figure"]: x for x in js["verdicts"]}
assert v["tps_excluding_warmup"]["best"] == best, v["tps_excluding_warmup"]
if p99[0] != p99[1]:
    lo = "pg1.iotap" if p99[0] < p99[1] else "pg2.iotap"
    assert v["commit_p99_ms"]["best"] == lo, v["commit_p99_ms"]
    assert re.search(r"^lower commit p99 ms: %s " % re.escape(lo), txt, re.M), "p99 verdict"
cells = js["figures"]["tps_excluding_warmup"]
assert abs(cells[0]["mean"] - tps[0]) < 1e-3 and abs(cells[1]["mean"] - tps[1]) < 1e-3, cells
assert abs(cells[1]["ratio"] - tps[1] / tps[0]) < 1e-3, cells
PY

# compare --csv and --html: the application figures of compare --json, cell by cell
CHECK="python3 $E2E_DIR/app_compare_check.py"
"$IOTAP" compare --csv $T/pg1.iotap $T/pg2.iotap > $T/cmp.csv || fail "compare --csv"
"$IOTAP" compare --html $T/cmp.html $T/pg1.iotap $T/pg2.iotap > /dev/null || fail "compare --html"
$CHECK $T/cmp.json $T/cmp.csv $T/cmp.html pgsql ||
	fail "pgsql: compare --csv/--html application figures differ from --json's"
grep -q "^phase,figure,run,traces,mean,sd,ratio$" $T/cmp.csv || fail "compare --csv header"

# dedup: three generations, two streams, restores
"$IOTAP" run dedup $T/dd --image-size 16m --generations 3 --streams 2 -q \
	--trace $T/dd.iotap > $T/dd.txt 2> $T/dd.err || { cat $T/dd.err; fail "run dedup"; }
"$IOTAP" report $T/dd.iotap > $T/dd.rep || fail "report dedup"
"$IOTAP" report --json $T/dd.iotap > $T/dd.json || fail "report --json dedup"
python3 - $T <<'PY' || { cat $T/dd.txt $T/dd.rep; fail "dedup: report's figures differ from the run's"; }
import json, re, sys
T = sys.argv[1]
run = open(f"{T}/dd.txt").read()
rep = open(f"{T}/dd.rep").read()
app = rep[rep.index("\napplication:"):]
full = json.load(open(f"{T}/dd.json"))
js = full["application"]
bad = []
if full["trace"]["lost_records"]:
    print(f"dd: {full['trace']['lost_records']} records lost; its trace figures not compared")
    sys.exit(0)
def num(s):
    return float(s)
bk = re.findall(r"^(gen=\d+) +([0-9.]+) +([0-9.]+) +([0-9.]+) +[0-9.]+ +([0-9.]+) +([0-9.]+) +"
                r"([0-9.]+) +([0-9.]+) +(\d+) +([0-9.]+) +([0-9.]+) +\d+$", run, re.M)
rbk = {m[0]: m for m in re.findall(r"^  (gen=\d+) +([0-9.]+) +([0-9.]+) +([0-9.]+) +([0-9.]+) +"
                                    r"([0-9.]+) +([0-9.]+) +([0-9.]+) +(\d+) +([0-9.]+) +([0-9.]+)$", app, re.M)}
if len(bk) != 3:
    bad.append(f"run's backup table: {len(bk)} rows")
for w in bk:
    g = rbk.get(w[0])
    if not g:
        bad.append(f"report lacks backup {w[0]}")
        continue
    # time, logical, physical, dedup, cum, lookups/s, hit %, index reads: as printed
    for k, (a, b) in enumerate(zip(g[1:9], w[1:9])):
        if a != b:
            bad.append(f"backup {w[0]} column {k}: report {a}, run {b}")
    # index-miss p50/p99: one histogram (iotap_hist) of the same reads' dur_ns, so the
    # same digits; and there were misses to time
    for a, b in zip(g[9:11], w[9:11]):
        if a != b:
            bad.append(f"backup {w[0]} miss: report {a}, run {b}")
    if int(w[8]) == 0 or num(w[10]) == 0:
        bad.append(f"backup {w[0]}: no index misses to compare")
jb = {b["generation"]: b for b in js["backups"]}
for w in bk:
    b = jb[w[0]]
    if abs(b["logical_mb_per_s"] - num(w[2])) > 0.051 or abs(b["dedup_ratio"] - num(w[4])) > 0.0051:
        bad.append(f"json backup {w[0]}: {b}")
    if abs(b["miss_p50_ms"] - num(w[9])) > 0.00051 or abs(b["miss_p99_ms"] - num(w[10])) > 0.00051:
        bad.append(f"json backup {w[0]} miss: {b['miss_p50_ms']} {b['miss_p99_ms']}, run {w[9]} {w[10]}")
rs = re.findall(r"^(gen=\d+) +([0-9.]+) +([0-9.]+) +([0-9.]+) +(\d+) +[0-9.]+ +(\d+) +\d+$", run, re.M)
rrs = {m[0]: m for m in re.findall(r"^  (gen=\d+) +([0-9.]+) +([0-9.]+) +([0-9.]+) +(\d+) +(\d+)$", app, re.M)}
if len(rs) != 3:
    bad.append(f"run's restore table: {len(rs)} rows")
jr = {r["generation"]: r for r in js["restores"]}
for w in rs:
    g = rrs.get(w[0])
    if not g:
        bad.append(f"report lacks restore {w[0]}")
        continue
    # MB and reads exactly; time and MB/s from the markers (within 1%)
    if g[2] != w[2] or g[4] != w[4] or g[5] != w[5]:
        bad.append(f"restore {w[0]}: report {g}, run {w}")
    if abs(num(g[3]) - num(w[3])) > 0.01 * num(w[3]) + 0.1:
        bad.append(f"restore {w[0]} MB/s: report {g[3]}, run {w[3]}")
    if jr[w[0]]["reads"] != int(w[4]) or abs(jr[w[0]]["mb_per_s"] - num(w[3])) > 0.01 * num(w[3]) + 0.1:
        bad.append(f"json restore {w[0]}: {jr[w[0]]}")
m = re.search(r"dedup ratio ([0-9.]+):1 \(planned", run)
if abs(js["dedup_ratio"] - num(m.group(1))) > 0.0051:
    bad.append(f"dedup ratio: report {js['dedup_ratio']}, run {m.group(1)}")
if js["compact"] is None:
    bad.append("no compaction figures")
m = re.search(r"^model CPU: ([0-9.]+) us content \+ ([0-9.]+) us hash per new segment", run, re.M)
want = float(m.group(1)) + float(m.group(2))
if abs(js["model_cpu_us_per_new_segment"] - want) > 0.15:
    bad.append(f"model CPU per new segment: report {js['model_cpu_us_per_new_segment']}, run {want}")
if bad:
    print("\n".join(bad))
    sys.exit(1)
PY

# two dedup runs side by side (one stream against two): csv and html as json
"$IOTAP" run dedup $T/dd --image-size 16m --generations 3 --streams 1 -q \
	--trace $T/dd1.iotap > /dev/null 2> $T/dd1.err || { cat $T/dd1.err; fail "run dedup 1"; }
"$IOTAP" compare --json $T/dd.iotap $T/dd1.iotap > $T/dcmp.json || fail "compare --json dedup"
"$IOTAP" compare --csv $T/dd.iotap $T/dd1.iotap > $T/dcmp.csv || fail "compare --csv dedup"
"$IOTAP" compare --html $T/dcmp.html $T/dd.iotap $T/dd1.iotap > /dev/null ||
	fail "compare --html dedup"
$CHECK $T/dcmp.json $T/dcmp.csv $T/dcmp.html dedup ||
	fail "dedup: compare --csv/--html application figures differ from --json's"
grep -q '^"application",restore_mb_per_s,"dd1.iotap",1,' $T/dcmp.csv || fail "dedup CSV restore row"

# report --html: the application section, the figures of --json (issue 27 item 12)
"$IOTAP" report --html $T/pg1.html $T/pg1.iotap > /dev/null || fail "report --html pgsql"
"$IOTAP" report --html $T/dd.html $T/dd.iotap > /dev/null || fail "report --html dedup"
python3 - $T <<'PY' || fail "report --html: the application section differs from --json"
import html, json, re, sys
T = sys.argv[1]
bad = []
for name, kind, keys in (("pg1", "pgsql", ("tps_excluding_warmup", "latency_avg_ms")),
                         ("dd", "dedup", ("dedup_ratio", "logical_mb_per_s"))):
    page = open(f"{T}/{name}.html").read()
    m = re.search(r"<section><h2>Application figures \(%s\)</h2>(.*?)</section>" % kind, page, re.S)
    if not m:
        bad.append(f"{name}: no application section")
        continue
    sec = m.group(1)
    figs = json.load(open(f"{T}/{name}.json"))["application"]["figures"]
    rows = dict((html.unescape(a), b) for a, b in
                re.findall(r'<tr><td class="l">([^<]*)</td><td>([^<]*)</td></tr>', sec))
    for k in keys:
        got = [v for v in rows.values() if re.fullmatch(r"[0-9.]+", v) and
               abs(float(v) - figs[k]) <= 0.051]
        if not got:
            bad.append(f"{name}: {k} {figs[k]} not in the section's figures {rows}")
    if kind == "pgsql" and "<th>checkpoint</th>" not in sec:
        bad.append(f"{name}: no checkpoint table")
    if kind == "dedup" and "<th class=\"l\">restore</th>" not in sec:
        bad.append(f"{name}: no restore table")
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY

# a trace of another workload: no application figures
"$IOTAP" run dd $T/dd --bs 64k --count 16 -q --trace $T/plain.iotap > /dev/null 2>&1 ||
	fail "run dd"
"$IOTAP" run dd $T/dd --bs 64k --count 16 -q --trace $T/plain2.iotap > /dev/null 2>&1 ||
	fail "run dd 2"
"$IOTAP" compare --csv $T/plain.iotap $T/plain2.iotap | grep -q '^"application"' &&
	fail "a dd compare has application CSV rows"
"$IOTAP" compare --html $T/plain.html $T/plain.iotap $T/plain2.iotap > /dev/null ||
	fail "compare --html dd"
grep -q "Application figures" $T/plain.html && fail "a dd compare page has application figures"
"$IOTAP" report --html $T/plainr.html $T/plain.iotap > /dev/null || fail "report --html dd"
grep -q "Application figures" $T/plainr.html && fail "a dd report page has application figures"
"$IOTAP" report --json $T/plain.iotap > $T/plain.json || fail "report plain"
python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["application"] is not None)' \
	$T/plain.json || fail "a dd trace has application figures"
"$IOTAP" report $T/plain.iotap | grep -q "^application:" && fail "a dd trace prints application figures"
exit 0
