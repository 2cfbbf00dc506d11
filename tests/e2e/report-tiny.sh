#!/bin/bash
# SPDX-License-Identifier: MIT
# report-tiny: figures people can read (issue 27, item 19). A phase too
# short to time (22 ops in 22 us) shows its rates as +++++ (bonnie++'s
# sign) with a too-short flag, not as millions of ops/s; flags print
# rates as numbers (10000, not 1e+04) and no share above 100% (outliers
# of 8 threads against the phase's op time, not its span); compare shows
# no rate and no ratio of such a phase either. No FUSE needed.
. "$(dirname "$0")/lib.sh"
SYNTH=${IOTAP_BUILD:-$(cd "$(dirname "$0")/../.." && pwd)/build}/tests/unit/report-synth
[ -x "$SYNTH" ] || skip "no report-synth at $SYNTH (build the tests)"
[ -x "$IOTAP" ] || fail "no iotap binary at $IOTAP"

cat > $T/s.script <<'EOS'
slowdown stat n=20000 rate=5000 lat=20 slow=8 at=0.5
par seqread ops=4000 rate=2000 bs=4096 lat=100 threads=8 outlier=2000000 every=200
tiny seqwrite ops=22 rate=1000000 bs=4096 lat=5
EOS
"$SYNTH" $T/s.iotap $T/s.script > /dev/null || fail "report-synth"
"$IOTAP" report $T/s.iotap --no-progress > $T/rep.txt || fail "report"
"$IOTAP" report $T/s.iotap --no-progress --html $T/rep.html || fail "report --html"

row=$(awk '$2 == "tiny"' $T/rep.txt)
[ "$(echo "$row" | grep -o '+++++' | wc -l)" -ge 6 ] || { echo "$row"; fail "tiny phase's rates not +++++"; }
grep -q "tiny: too-short: " $T/rep.txt || fail "no too-short flag"
grep -q '+++++</td>' $T/rep.html || fail "HTML shows the tiny phase's rates"
grep -q "ops/s fell 8.0x inside the phase (10000 at" $T/rep.txt ||
	{ grep throughput $T/rep.txt; fail "throughput flag's rates"; }
grep "^  \[" $T/rep.txt | grep -q "e+0" && fail "a flag prints a number as 1e+04"
over=$(grep -o "[0-9.]*% of the phase" $T/rep.txt | awk '$1 + 0 > 100')
[ -z "$over" ] || fail "a share above 100%: $over"
grep -q "latency-outlier: read max 2.00 s" $T/rep.txt || fail "no latency outlier flag"
# compare too: no rate and no ratio of a phase too short to time
"$IOTAP" compare $T/s.iotap $T/s.iotap --no-progress > $T/cmp.txt || fail "compare"
awk '$1 == "tiny" { on = 1 } on && /ops\/s/ { print; exit }' $T/cmp.txt > $T/row.txt
grep -Eq '^ *ops/s +\+\+\+\+\+ +\+\+\+\+\+ +- *$' $T/row.txt ||
	{ cat $T/row.txt; fail "compare shows the tiny phase's ops/s"; }
exit 0
