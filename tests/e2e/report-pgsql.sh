#!/bin/bash
# SPDX-License-Identifier: MIT
# report-pgsql: a `run pgsql` trace reported as the run saw it (issue 27,
# items 6-8). With a small max_wal_size a checkpoint starts at the
# instant warmup and steady do: no phase of 0 ops and 0 s; the steady
# phase that resumes after a checkpoint is one name ("steady#2") in the
# table, for --phase and in compare, which adds the whole steady period
# (checkpoint parts included) as one row. `info`'s time span is the run's, not
# a span late (APP records are written when their unit ends). Each
# log_checkpoints line's write= and sync= in the report are the run's.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "needs python3"
TR=$T/pg.iotap
mkdir -p $T/d

"$IOTAP" run pgsql $T/d -s 1 -c 2 -T 6s --max-wal-size 32MB --min-wal-size 32MB \
	-q --trace $TR > $T/run.txt 2> $T/run.err ||
	{ cat $T/run.err; fail "run pgsql"; }
grep -q "^LOG:  checkpoint complete" $T/run.txt || { cat $T/run.txt; fail "no checkpoint"; }
"$IOTAP" report $TR --json --no-progress > $T/r.json || fail "report --json"
"$IOTAP" report $TR --no-progress > $T/r.txt || fail "report"
"$IOTAP" compare $TR $TR --json --no-progress > $T/c.json || fail "compare"
"$IOTAP" info $TR > $T/info.txt || fail "info"

# 6: no empty phase; every name the table shows works for --phase and in compare
python3 - $T/r.json $T/c.json > $T/names.txt <<'PY' || fail "phase names"
import json, sys
r = json.load(open(sys.argv[1]))
c = json.load(open(sys.argv[2]))
names = [p["name"] for p in r["phases"]]
empty = [p["name"] for p in r["phases"] if p["ops"] == 0 and p["duration_s"] == 0]
assert not empty, "empty phases %s" % empty
assert len(set(names)) == len(names), "names repeat: %s" % names
cmp = [p["name"] for p in c["phases"]]
assert cmp[:-2] == names, "compare %s, report %s" % (cmp, names)
# the steady period as one row: as long as the run's steady period
assert cmp[-2] == "steady period", cmp
d = c["phases"][-2]["figures"]["duration_s"][0]["mean"]
st = r["application"]["steady_s"]
assert abs(d - st) < 0.3, "steady period %.3f s, the run's steady %.3f s" % (d, st)
print("\n".join(names))
PY
while read -r n; do
	"$IOTAP" report $TR --phase "$n" --no-progress > $T/one.txt 2>&1 ||
		{ cat $T/one.txt; fail "--phase '$n'"; }
	grep -q "^  0 $n " $T/one.txt || { cat $T/one.txt; fail "--phase '$n' shows another phase"; }
done < $T/names.txt

# 7: the time span is the run's (its duration and the init), not a span late
python3 - $T/r.json $T/info.txt <<'PY' || fail "info's time span"
import json, re, sys
d = json.load(open(sys.argv[1]))["trace"]["duration_s"]
span = float(re.search(r"^time span +([0-9.]+) s", open(sys.argv[2]).read(), re.M).group(1))
assert span < d + 0.5, "time span %.3f s, the report's ops %.3f s" % (span, d)
PY

# 8: the run's and the report's checkpoint times are the same figures
grep -o "checkpoint complete: .*write=[0-9.]* s, sync=[0-9.]* s" $T/run.txt |
	sed 's/.*write=\([0-9.]*\) s, sync=\([0-9.]*\) s/write=\1 sync=\2/' > $T/run.ck
grep -o "^  checkpoint [0-9]*: wrote .*write=[0-9.]* s, sync=[0-9.]* s" $T/r.txt |
	sed 's/.*write=\([0-9.]*\) s, sync=\([0-9.]*\) s/write=\1 sync=\2/' > $T/rep.ck
[ -s $T/run.ck ] || fail "no checkpoint times in the run's output"
cmp -s $T/run.ck $T/rep.ck || { paste $T/run.ck $T/rep.ck; fail "checkpoint times differ"; }
exit 0
