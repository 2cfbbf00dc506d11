#!/bin/bash
# SPDX-License-Identifier: MIT
# trust-pgsql: `iotap run pgsql` as a new user meets it (issue 27).
#
#   - item 9: with --wal-dir, the WAL directory is named in the trace (a
#     NAME record of its path, as the data directory's), so that `report
#     --by file` names every file, the WAL directory's own fsyncs too;
#   - item 16: the options' ranges are PostgreSQL 15's both ways: what
#     `postgres` refuses is refused (checkpoint_timeout under 30 s, a
#     max_wal_size under two 16 MB segments, bgwriter_delay over 10 s),
#     what it accepts is accepted (max_wal_size 32MB with the default
#     min_wal_size of 80MB: a real run; a completion target of 0, 8kB of
#     wal_buffers, a 4MB wal_writer_flush_after, -P over an hour);
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

# --- item 16: PostgreSQL's ranges -------------------------------------------------
# refused, exit 2, naming the setting and its range
expect 2 "bad checkpoint_timeout '5s' (30s..24h)" "$IOTAP" run pgsql $D -T 2 --checkpoint-timeout 5s
expect 2 "bad checkpoint_timeout '29s'" "$IOTAP" run pgsql $D -T 2 --checkpoint-timeout 29s
expect 2 "bad checkpoint_timeout '25h'" "$IOTAP" run pgsql $D -T 2 --checkpoint-timeout 25h
expect 2 "bad max_wal_size '16MB' (at least 32MB" "$IOTAP" run pgsql $D -T 2 --max-wal-size 16MB
expect 2 "bad min_wal_size '31MB'" "$IOTAP" run pgsql $D -T 2 --min-wal-size 31MB
expect 2 "bad bgwriter_delay '20s' (10ms..10s)" "$IOTAP" run pgsql $D -T 2 --bgwriter-delay 20s
expect 2 "bad wal_writer_delay '11s'" "$IOTAP" run pgsql $D -T 2 --wal-writer-delay 11s
expect 2 "bad completion target '1.5' (0..1)" "$IOTAP" run pgsql $D -T 2 --completion-target 1.5
expect 2 "bad wal_buffers '12kB'" "$IOTAP" run pgsql $D -T 2 --wal-buffers 12kB
expect 2 "bad checkpoint-flush-after '4MB'" "$IOTAP" run pgsql $D -T 2 --checkpoint-flush-after 4MB
# accepted: the options pass, the missing DIR is what is refused
for o in "--checkpoint-timeout 30s" "--checkpoint-timeout 24h" "--completion-target 0" \
	 "--wal-buffers 8kB" "--wal-writer-flush-after 4MB" "-P 7200" \
	 "--min-wal-size 2GB --max-wal-size 32MB" "--bgwriter-delay 10s"; do
	expect 2 "cannot use '$T/missing': No such file" "$IOTAP" run pgsql $T/missing $o
done
# max_wal_size 32MB alone (min_wal_size's default 80MB above it) runs
"$IOTAP" run pgsql $D -s 1 -c 1 -T 2 --warmup 1 --max-wal-size 32MB -q > $T/out 2> $T/err ||
	{ cat $T/err; fail "--max-wal-size 32MB alone refused"; }
grep -q "max_wal_size = 32MB" $T/out || { cat $T/out; fail "max_wal_size not 32MB"; }
grep -q "^LOG:  checkpoint starting: wal" $T/out || { cat $T/out; fail "no checkpoint by WAL"; }

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
