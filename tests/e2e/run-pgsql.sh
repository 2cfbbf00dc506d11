#!/bin/bash
# SPDX-License-Identifier: MIT
# run-pgsql: `iotap run pgsql` refuses bad input with exit 2 before
# anything is written (missing, non-directory, read-only or already
# PostgreSQL's directory, --wal-dir count, bad era, scale, rate, sizes,
# no room); runs through two capture mounts, data on one and --wal-dir on
# the other, printing pgbench's summary and log_checkpoints lines while
# the captures see the data files' writes and fsyncs on one array and the
# WAL's writes and fdatasyncs on the other, and ANALYZE's prefetch hints
# (posix_fadvise, not in the model's trace) as reads of their own on the
# data mount, as a real PostgreSQL 15's; runs two data directories at
# once; Ctrl-C removes the files, prints partial results, exits 130 and
# leaves a complete trace whose last phase has its END.
. "$(dirname "$0")/lib.sh"
need_fuse
D=$T/d
mkdir -p $D

expect 2 "DIR is required" "$IOTAP" run pgsql
expect 2 "No such file" "$IOTAP" run pgsql $T/missing
touch $T/file
expect 2 "not a directory" "$IOTAP" run pgsql $T/file
expect 2 "unknown option" "$IOTAP" run pgsql $D --bogus
expect 2 "not modelled" "$IOTAP" run pgsql $D --era 12
expect 2 "bad scale" "$IOTAP" run pgsql $D -s 0
expect 2 "more than the model" "$IOTAP" run pgsql $D -R 1000000
expect 2 "bad shared_buffers" "$IOTAP" run pgsql $D --shared-buffers lots
expect 2 "multiple of 8kB" "$IOTAP" run pgsql $D --shared-buffers 1000000
expect 2 "wal_sync_method" "$IOTAP" run pgsql $D --wal-sync-method fsync_writethrough
expect 2 "one --wal-dir per DIR" "$IOTAP" run pgsql $D $T/file --wal-dir $T
expect 2 "shorter than the duration" "$IOTAP" run pgsql $D -T 5 --warmup 5
mkdir $T/old $T/old/base
expect 2 "already holds 'base'" "$IOTAP" run pgsql $T/old
mkdir -p $T/small
mount -t tmpfs -o size=4m tmpfs $T/small && _mounts="$_mounts $T/small"
expect 2 "free" "$IOTAP" run pgsql $T/small -s 10
mkdir -p $T/ro
mount -t tmpfs -o ro,size=1m tmpfs $T/ro && _mounts="$_mounts $T/ro"
expect 2 "read-only" "$IOTAP" run pgsql $T/ro
expect 2 "read-only" "$IOTAP" run pgsql $D --wal-dir $T/ro
[ -z "$(ls -A $D)" ] || fail "a refused run wrote into $D"
"$IOTAP" run pgsql --help > $T/h.txt || fail "run pgsql --help"
grep -q "^usage: iotap run pgsql" $T/h.txt || fail "no usage line"
grep -q -- "--checkpoint-timeout" $T/h.txt || fail "help lacks --checkpoint-timeout"

# data on one capture mount, WAL on another (the seed's RAID10 + RAID1);
# a 2 MB pool, so that pgbench_accounts does not stay in it
mkdir -p $T/b2 $T/m2
iotap_mount "$BACKING" "$MNT" --trace $T/data.iotap
DATA_PID=$MOUNT_PID
iotap_mount $T/b2 $T/m2 --trace $T/wal.iotap
WAL_PID=$MOUNT_PID
mkdir $MNT/pg $T/m2/wal
"$IOTAP" run pgsql $MNT/pg --wal-dir $T/m2/wal -s 1 -c 2 -T 4 --warmup 1 \
	--max-wal-size 32MB --shared-buffers 2MB -q --trace $T/model.iotap \
	> $T/run.txt 2> $T/run.err ||
	{ cat $T/run.err; fail "run pgsql through the mounts"; }
grep -Eq '^tps = [0-9.]+ \(including warm-up\)$' $T/run.txt || { cat $T/run.txt; fail "no tps line"; }
grep -Eq '^tps = [0-9.]+ \(excluding warm-up\)$' $T/run.txt || fail "no steady tps line"
grep -Eq '^latency average = [0-9.]+ ms$' $T/run.txt || fail "no latency line"
grep -Eq '^done in [0-9.]+ s \(create tables' $T/run.txt || fail "no pgbench -i line"
grep -Eq '^LOG:  checkpoint complete: wrote [0-9]+ buffers \([0-9.]+%\); [0-9]+ WAL file\(s\) added, [0-9]+ removed, [0-9]+ recycled; write=[0-9.]+ s, sync=[0-9.]+ s, total=[0-9.]+ s; sync files=[0-9]+, longest=[0-9.]+ s, average=[0-9.]+ s; distance=[0-9]+ kB, estimate=[0-9]+ kB$' \
	$T/run.txt || { cat $T/run.txt; fail "no log_checkpoints line"; }
grep -Eq '^progress: 5.0 s|^WAL fdatasync latency \(steady\): [0-9]+ calls' $T/run.txt ||
	fail "no WAL sync latency line"
grep -Eq '^model CPU per transaction \(steady, all roles\): [0-9.]+ us user' $T/run.txt ||
	fail "no CPU per transaction line"
[ -z "$(ls -A $MNT/pg)" ] && [ -z "$(ls -A $T/m2/wal)" ] || fail "files left behind"
MOUNT_PID=$WAL_PID
iotap_umount $T/m2
MOUNT_PID=$DATA_PID
iotap_umount "$MNT"
"$IOTAP" dump $T/wal.iotap > $T/wal.txt || fail "dump wal capture"
"$IOTAP" dump $T/data.iotap > $T/data.txt || fail "dump data capture"
nw=$(awk '$4 == "write"' $T/wal.txt | wc -l)
ns=$(awk '$4 == "fsync" && /flags=0x1/' $T/wal.txt | wc -l)
[ "$nw" -gt 100 ] && [ "$ns" -gt 100 ] || fail "WAL mount saw $nw writes, $ns fdatasyncs"
awk '$4 == "write" && ($6 % 8192 || $7 % 8192) { bad++ } END { exit bad > 0 }' $T/wal.txt ||
	fail "WAL writes not in whole 8 KiB pages"
nd=$(awk '$4 == "write"' $T/data.txt | wc -l)
nf=$(awk '$4 == "fsync" && !/flags=0x1/' $T/data.txt | wc -l)
[ "$nd" -gt 100 ] && [ "$nf" -gt 3 ] || fail "data mount saw $nd writes, $nf fsyncs"
awk '$4 == "fsync" && /flags=0x1/ { n++ } END { exit n > 0 }' $T/data.txt ||
	fail "fdatasync on the data mount: the WAL went to the wrong array"
# reads of pgbench_accounts (16403): the mount sees the model's own reads
# and one more per block ANALYZE hinted (1608 at scale 1 through 256 buffers)
acc_reads() {
	"$IOTAP" dump "$1" | awk '$4 == "NAME" && /name="16403"/ {
		sub(/.*file=/, ""); sub(/ .*/, ""); id[$0] = 1; next }
		$4 == "read" && ($5 in id) { n++ } END { print n + 0 }'
}
ra_model=$(acc_reads $T/model.iotap)
ra_mount=$(acc_reads $T/data.iotap); echo "# accounts reads: mount $ra_mount, model $ra_model" >&2
[ $((ra_mount - ra_model)) -ge 1500 ] && [ $((ra_mount - ra_model)) -le 1700 ] ||
	fail "accounts: the mount saw $ra_mount reads, the model's trace $ra_model (want ~1608 hints more)"
"$IOTAP" report $T/model.iotap > $T/rep.txt || fail "report of the model's trace"
grep -q "steady" $T/rep.txt && grep -q "checkpoint 1 write" $T/rep.txt ||
	{ cat $T/rep.txt; fail "report lacks the steady and checkpoint phases"; }

# two data directories at once, one report each
mkdir $T/a $T/b
"$IOTAP" run pgsql $T/a $T/b -T 2 --warmup 0 -q > $T/two.txt || fail "two directories"
expect_eq "reports" "$(grep -c '^==> ' $T/two.txt)" 2
expect_eq "tps lines" "$(grep -c '^tps = .*(excluding' $T/two.txt)" 2

# Ctrl-C: partial results, files removed, exit 130, trace complete
"$IOTAP" run pgsql $D -T 60 -c 2 --trace $T/intr.iotap > $T/intr.out 2> $T/intr.err &
pid=$!
i=0
while [ ! -d $D/base ] && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
sleep 2
kill -INT $pid
wait $pid
rc=$?
expect_eq "exit status after Ctrl-C" $rc 130
[ -z "$(ls -A $D)" ] || fail "Ctrl-C left files: $(ls -A $D)"
grep -q "partial results" $T/intr.out || { cat $T/intr.out; fail "not marked partial"; }
grep -q "^tps = " $T/intr.out || fail "no tps after Ctrl-C"
grep -q "interrupted" $T/intr.err || fail "no interruption note on stderr"
"$IOTAP" info --strict $T/intr.iotap > $T/info.txt || { cat $T/info.txt; fail "trace damaged"; }
grep -q "^complete *yes" $T/info.txt || fail "trace not closed"
"$IOTAP" dump $T/intr.iotap | awk '$4 == "PHASE"' > $T/ph.txt
[ "$(tail -1 $T/ph.txt | awk '{ print $5 }')" = end ] || fail "the interrupted phase has no END"
exit 0
