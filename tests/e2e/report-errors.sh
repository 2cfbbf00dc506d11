#!/bin/bash
# SPDX-License-Identifier: MIT
# report-errors: bad input to `iotap report` and `iotap compare` gets a
# clear message and the right exit status, never a crash or a half-written
# file: missing, empty, corrupted and damaged traces, an unknown phase, an
# HTML path in a missing directory, bad option values (2), non-bonnie
# phases for --bonnie-csv, a missing --phases-from trace, an output file
# on a full disk. No FUSE needed.
. "$(dirname "$0")/lib.sh"
SYNTH=${IOTAP_BUILD:-$(cd "$(dirname "$0")/../.." && pwd)/build}/tests/unit/report-synth
[ -x "$SYNTH" ] || skip "no report-synth at $SYNTH (build the tests)"
[ -x "$IOTAP" ] || fail "no iotap binary at $IOTAP"


printf 'a seqwrite ops=200000 rate=20000 bs=8192 lat=20\nb seqread ops=200000 rate=20000 bs=8192\n' |
	"$SYNTH" --samples $T/good.iotap - > /dev/null || fail "synth"
GOOD=$T/good.iotap

# missing, empty, not a trace
expect 1 "cannot open trace '$T/missing.iotap': No such file" "$IOTAP" report $T/missing.iotap
: > $T/empty.iotap
expect 1 "cannot read trace '$T/empty.iotap'.*empty" "$IOTAP" report $T/empty.iotap
head -c 65536 /dev/urandom > $T/random.iotap
expect 1 "not an iotap trace" "$IOTAP" report --json $T/random.iotap
[ -s $T/out ] && fail "report printed output for a file that is not a trace"
expect 1 "No such file" "$IOTAP" compare $GOOD $T/missing.iotap
expect 1 "not an iotap trace" "$IOTAP" compare --label x $GOOD --label y $T/random.iotap
expect 1 "No such file" "$IOTAP" report --phases-from $T/missing.iotap $GOOD

# an output that cannot be written (full disk) is an error, not a silent loss
if [ -w /dev/full ]; then
	expect 1 "cannot write '/dev/full'" "$IOTAP" report -o /dev/full $GOOD
	expect 1 "cannot write '/dev/full'" "$IOTAP" compare -o /dev/full $GOOD $GOOD
fi

# damaged in the middle: the rest is reported, with a warning and a flag
size=$(stat -c %s $GOOD)
cp $GOOD $T/damaged.iotap
dd if=/dev/urandom of=$T/damaged.iotap bs=1 seek=$((size / 2)) count=64 conv=notrunc status=none
expect 0 "damaged" "$IOTAP" report --json $T/damaged.iotap
grep -q "damaged-trace" $T/out || fail "no damaged-trace flag in the JSON"
cp $GOOD $T/cut.iotap
truncate -s $((size * 3 / 4)) $T/cut.iotap
expect 0 "incomplete chunk\|no end record" "$IOTAP" report $T/cut.iotap
grep -q "incomplete\|damaged" $T/out || fail "the table does not say the trace is incomplete"

# unknown phase: the message lists the phases there are
expect 1 "no phase 'nope'" "$IOTAP" report --phase nope $GOOD
grep -q "^  a$" $T/err && grep -q "^  b$" $T/err || fail "unknown phase: phases not listed"
expect 1 "no phase 'a#3'" "$IOTAP" report --phase 'a#3' --by op $GOOD

# HTML where it cannot go: nothing is written, nothing is left behind
expect 1 "cannot write '$T/nodir/r.html': directory '$T/nodir': No such file" \
	"$IOTAP" report $GOOD --html $T/nodir/r.html
[ -e $T/nodir ] && fail "a directory was created"
expect 1 "cannot write '$T/nodir/c.html'" "$IOTAP" compare $GOOD $GOOD --html $T/nodir/c.html
expect 1 "is a directory" "$IOTAP" report $GOOD --html $T
expect 1 "cannot write '$T/nodir/o.txt'" "$IOTAP" report $GOOD -o $T/nodir/o.txt

# usage errors: 2, with the usage line
expect 2 "TRACE is required" "$IOTAP" report
expect 2 "several traces make a fleet report" "$IOTAP" report $GOOD $GOOD --by op
expect 2 "exclude each other" "$IOTAP" report --json --csv $GOOD
expect 2 "bad --by 'bogus'" "$IOTAP" report --by bogus $GOOD
expect 2 "bad --interval 'soon'" "$IOTAP" report --interval soon $GOOD
expect 2 "bad --interval" "$IOTAP" report --interval 0 $GOOD
expect 2 "bad --flag-factor" "$IOTAP" report --flag-factor 0.5 $GOOD
expect 2 "bad --gap" "$IOTAP" report --gap -1 $GOOD
expect 2 "not with --json" "$IOTAP" report --interval 1s --json $GOOD
expect 2 "unknown option" "$IOTAP" report --bogus $GOOD
expect 2 "at least one TRACE" "$IOTAP" compare
expect 2 "at least one TRACE" "$IOTAP" compare --label x
expect 2 "neither a trace nor a label" "$IOTAP" compare --baseline z $GOOD $GOOD

# phases that are not bonnie's
expect 1 "not bonnie++'s" "$IOTAP" report --bonnie-csv $GOOD

# help works for both commands
"$IOTAP" report --help | grep -q "^usage: iotap report" || fail "report --help"
"$IOTAP" report --help | grep -q "10^6 bytes" || fail "report --help does not define MB"
"$IOTAP" compare --help | grep -q "^usage: iotap compare" || fail "compare --help"
"$IOTAP" --help | grep -q "^  compare" || fail "iotap --help lacks compare"
exit 0
