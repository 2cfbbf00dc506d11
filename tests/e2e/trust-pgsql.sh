#!/bin/bash
# SPDX-License-Identifier: MIT
# trust-pgsql: `iotap run pgsql` as a new user meets it (issue 27).
#
#   - item 9: with --wal-dir, the WAL directory is named in the trace (a
#     NAME record of its path, as the data directory's), so that `report
#     --by file` names every file, the WAL directory's own fsyncs too;
#   - item 17: an interrupted run prints the time it ran ("duration: 3.1 s
#     of 20 s"), not -T, and says it is partial at the top, as bonnie does.
# No FUSE needed.
. "$(dirname "$0")/lib.sh"
[ -x "$IOTAP" ] || fail "no iotap binary at $IOTAP"
D=$T/d
W=$T/w
mkdir $D $W

# --- item 9: the WAL directory has a name -------------------------------------
"$IOTAP" run pgsql $D --wal-dir $W -s 1 -c 1 -T 2 --warmup 1 -q --trace $T/wal.iotap \
	> $T/out 2> $T/err || { cat $T/err; fail "run pgsql --wal-dir"; }
"$IOTAP" dump $T/wal.iotap > $T/dump.txt || fail "dump"
grep -q "NAME file=$(stat -c %i $W) parent=0 .*name=\"$W\"" $T/dump.txt ||
	fail "no NAME record of --wal-dir '$W'"
"$IOTAP" report $T/wal.iotap --by file --csv > $T/files.csv || fail "report --by file"
grep '^"#' $T/files.csv && fail "report --by file has files without a path"
grep -q "^\"$W\"," $T/files.csv || { cat $T/files.csv; fail "the WAL directory is not named"; }

# --- item 17: an interrupted run: its real duration, the banner on top --------
timeout --preserve-status -s INT 5 "$IOTAP" run pgsql $D -s 1 -c 1 -T 20 --warmup 1 -q > $T/intr.txt 2> $T/intr.err
rc=$?
expect_eq "exit status after SIGINT" $rc 130
head -1 $T/intr.txt | grep -q '^\*\*\* partial results: interrupted during' ||
	{ cat $T/intr.txt; fail "the partial banner is not on top"; }
expect_eq "partial banners" "$(grep -c 'partial results' $T/intr.txt)" 1
d=$(sed -n 's/^duration: \([0-9.]*\) s of 20 s (warm-up [0-9.]* s)$/\1/p' $T/intr.txt)
[ -n "$d" ] || { cat $T/intr.txt; fail "no 'duration: N s of 20 s' line"; }
awk -v d=$d 'BEGIN { exit !(d < 10) }' || fail "duration $d s for a run stopped after 5 s"
[ -z "$(ls -A $D)" ] || fail "files left: $(ls -A $D)"
exit 0
