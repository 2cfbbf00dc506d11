#!/bin/bash
# SPDX-License-Identifier: MIT
# pgsql-vs-postgres.sh - does `iotap run pgsql` load the storage as a real
# PostgreSQL running pgbench does? (a comparison, not a test)
#
# usage: tests/bench/pgsql-vs-postgres.sh [-s SCALE] [-c CLIENTS] [-T SEC] [-R TPS]
#                                         [--checkpoint-timeout SEC] [--cpu-per-txn US]
#                                         [--window SEC] [--sequential] [--keep DIR]
#
# 1. Real: initdb (outside any capture) with pg_wal a symlink into a second
#    directory; both directories captured through their own iotap mount
#    (data as on the seed's RAID10, WAL as on its RAID1); PostgreSQL 15
#    started on the mount with log_checkpoints (checkpoint_timeout 1h, so
#    that no checkpoint runs during the load); phase "init" = pgbench -i -s
#    SCALE, marked on both mounts, alone on the machine.
# 2. Model: `iotap run pgsql DATA --wal-dir WAL -s SCALE -c CLIENTS -T SEC
#    -R TPS --warmup 0 --checkpoint-timeout SEC --cpu-per-txn US` on two
#    more iotap mounts, so both sides are seen at the same level (FUSE
#    requests), started after the real load. Its init runs alone; when its
#    clients start (its history table gets its first page), phase "bench"
#    is marked on all four mounts and the real pgbench -c CLIENTS -j
#    CLIENTS -T SEC -R TPS starts: the two benches run side by side, so
#    both see the same machine (--sequential: the model after PostgreSQL
#    has finished, as before). SEC after the model started (as its first
#    checkpoint), PostgreSQL's checkpoint_timeout becomes SEC (pg_ctl
#    reload): its checkpointer starts a timed checkpoint at once and then
#    every SEC, so both sides' checkpoints cover the same work. The model's
#    own trace gives its phase times, lined up with its mounts by its first
#    create (PG_VERSION).
#    PostgreSQL's own CPU per transaction over its bench (the postmaster
#    and its children from /proc) is printed; US (default 1400, measured
#    1340-1715 on this VM) is what the model spins per transaction.
# 3. Per directory and phase, side by side with the ratio model/real:
#    request-size histograms, read/write op ratio, writes, reads and bytes
#    per transaction (WAL bytes per transaction on the WAL mount),
#    fdatasyncs per transaction, files synced per checkpoint (each
#    checkpoint's log line), WAL fdatasync latency p50/p99 as the mounts
#    saw it, over the whole bench and per --window (default 10 s) window
#    of the common time (the ratio's median and range over the windows),
#    pgbench's latency average and tps. Target: within 15% (tps within 5%).
#
# Defaults: -s 5 -c 4 -T 60 -R 200 --checkpoint-timeout 30. Needs root,
# /dev/fuse, PostgreSQL 15 (initdb, pg_ctl, pgbench under PGBIN, default
# /usr/lib/postgresql/15/bin), the postgres user, setpriv and python3.
# Takes about SEC plus both loads plus a minute.
set -u
S=5
C=4
DUR=60
RATE=200
CKPT=30
CPU_US=1400
WIN=10
SEQ=0
KEEP=
while [ $# -gt 0 ]; do
	case $1 in
	-s) S=$2; shift 2 ;;
	-c) C=$2; shift 2 ;;
	-T) DUR=$2; shift 2 ;;
	-R) RATE=$2; shift 2 ;;
	--checkpoint-timeout) CKPT=$2; shift 2 ;;
	--cpu-per-txn) CPU_US=$2; shift 2 ;;
	--window) WIN=$2; shift 2 ;;
	--sequential) SEQ=1; shift ;;
	--keep) KEEP=$2; shift 2 ;;
	-h|--help) sed -n '3,45p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "pgsql-vs-postgres.sh: unknown argument '$1'" >&2; exit 2 ;;
	esac
done
for v in "$S" "$C" "$DUR" "$RATE" "$CKPT" "$CPU_US" "$WIN"; do
	case $v in ''|*[!0-9]*) echo "pgsql-vs-postgres.sh: '$v' is not a whole number" >&2; exit 2 ;; esac
done
[ "$CKPT" -ge 30 ] || { echo "pgsql-vs-postgres.sh: --checkpoint-timeout $CKPT: PostgreSQL's minimum is 30" >&2; exit 2; }
. "$(dirname "$0")/../e2e/lib.sh"
need_fuse
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
[ -x "$PGBIN/initdb" ] && [ -x "$PGBIN/pg_ctl" ] && [ -x "$PGBIN/pgbench" ] ||
	skip "PostgreSQL (initdb, pg_ctl, pgbench in $PGBIN) not installed"
id postgres >/dev/null 2>&1 || skip "no postgres user"
command -v setpriv >/dev/null || skip "setpriv not installed"
as_pg() { setpriv --reuid=postgres --regid="$(id -g postgres)" --init-groups -- "$@"; }
PORT=$((20000 + $$ % 10000))
echo "# start: $(uptime)" >&2

# --- the four mounts and the real server -----------------------------------------
RB_D=$T/real-data RB_W=$T/real-wal RM_D=$T/rm-data RM_W=$T/rm-wal
MB_D=$T/model-data MB_W=$T/model-wal MM_D=$T/mm-data MM_W=$T/mm-wal
mkdir -p $RB_D $RB_W $RM_D $RM_W $MB_D/pg $MB_W/wal $MM_D $MM_W $T/sock $T/log
chown postgres $RB_D $RB_W $T/sock $T/log
as_pg "$PGBIN/initdb" -D $RB_D/data -X $RB_W/wal -A trust > $T/log/initdb.log 2>&1 ||
	{ cat $T/log/initdb.log; fail "initdb"; }
ln -sfn $RM_W/wal $RB_D/data/pg_wal	# WAL through the second mount
# no timed checkpoint during the load: the checkpoint timer starts when the
# model's does (ckpt_timer below), so both sides' checkpoints fall alike
echo "checkpoint_timeout = 3600s" >> $RB_D/data/postgresql.conf
iotap_mount $RB_D $RM_D --trace $T/real-data.iotap
RD_PID=$MOUNT_PID
iotap_mount $RB_W $RM_W --trace $T/real-wal.iotap
RW_PID=$MOUNT_PID
pg_stop() { as_pg "$PGBIN/pg_ctl" -D $RM_D/data -m fast -w stop > /dev/null 2>&1; }
at_exit pg_stop
as_pg "$PGBIN/pg_ctl" -D $RM_D/data -l $T/log/pg.log -w -o "-k $T/sock -c listen_addresses= \
-p $PORT -c log_checkpoints=on" start > /dev/null ||
	{ cat $T/log/pg.log; fail "pg_ctl start"; }
mark() {	# mark MOUNT... -- NAME [--end]
	local m=() a
	while [ "$1" != -- ]; do m+=("$1"); shift; done
	shift
	for a in "${m[@]}"; do "$IOTAP" mark "$a" "$@" || fail "mark $a $*"; done
}
echo "# real: pgbench -i -s $S" >&2
mark $RM_D $RM_W -- init
as_pg "$PGBIN/pgbench" -h $T/sock -p $PORT -i -s $S postgres > $T/log/init.out 2>&1 ||
	{ cat $T/log/init.out; fail "pgbench -i"; }
mark $RM_D $RM_W -- init --end
l0=$(wc -l < $T/log/pg.log)	# the server's log from here on: checkpoints after the load

# PostgreSQL's own CPU (postmaster, its backends and background processes,
# the ones that ended counted in the postmaster's cutime/cstime), clock ticks
pg_cpu() {
	local pm c
	pm=$(head -1 $RB_D/data/postmaster.pid)
	c=$(awk '{ print $14 + $15 + $16 + $17 }' /proc/$pm/stat)
	for k in $(pgrep -P $pm); do
		c=$((c + $(awk '{ print $14 + $15 }' /proc/$k/stat 2>/dev/null || echo 0)))
	done
	echo $c
}
real_bench() {
	echo "# real: pgbench -c $C -j $C -T $DUR -R $RATE" >&2
	cpu0=$(pg_cpu)
	as_pg "$PGBIN/pgbench" -h $T/sock -p $PORT -c $C -j $C -T $DUR -R $RATE -P 5 postgres \
		> $T/log/bench.out 2> $T/log/bench.err || { cat $T/log/bench.err; fail "pgbench"; }
	mark $RM_D $RM_W -- bench --end
	cpu1=$(pg_cpu)
	ntx=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' $T/log/bench.out)
	awk -v d=$((cpu1 - cpu0)) -v hz=$(getconf CLK_TCK) -v n=${ntx:-0} \
		'BEGIN { printf "%.0f\n", n ? d * 1e6 / hz / n : 0 }' > $T/log/pg-cpu-us
	echo "# real: PostgreSQL's CPU per transaction: $(cat $T/log/pg-cpu-us) us" \
		"(all its processes, at $RATE tps)" >&2
}

# checkpoint_timeout SEC from now on: the checkpointer, woken by the reload,
# finds more than SEC since its start and begins a timed checkpoint at once,
# then every SEC, as the model's does SEC after it starts
ckpt_timer() {
	sleep $CKPT
	as_pg sh -c "echo 'checkpoint_timeout = ${CKPT}s' >> $RM_D/data/postgresql.conf" &&
		as_pg "$PGBIN/pg_ctl" -D $RM_D/data reload > /dev/null
}

# --- the model, and the two benches side by side ------------------------------------
iotap_mount $MB_D $MM_D --trace $T/model-data.iotap
MD_PID=$MOUNT_PID
iotap_mount $MB_W $MM_W --trace $T/model-wal.iotap
MW_PID=$MOUNT_PID
if [ $SEQ = 1 ]; then
	ckpt_timer &
	CKT=$!
	mark $RM_D $RM_W -- bench
	date +%s.%N > $T/log/bench-t0
	real_bench
	wait $CKT
fi
echo "# model: iotap run pgsql -s $S -c $C -T $DUR -R $RATE --cpu-per-txn ${CPU_US}us" >&2
# in a session of its own, as pg_ctl starts the postmaster: with the
# scheduler's autogroups on, each session gets a fair share of the CPU, and
# the model must not share the script's (the mounts' daemons, pgbench)
setsid "$IOTAP" run pgsql $MM_D/pg --wal-dir $MM_W/wal -s $S -c $C -T $DUR -R $RATE --warmup 0 \
	--cpu-per-txn ${CPU_US}us --checkpoint-timeout ${CKPT}s -q --trace $T/model.iotap \
	> $T/log/model.out 2> $T/log/model.err &
MODEL=$!
if [ $SEQ = 0 ]; then
	ckpt_timer &
	CKT=$!
fi
at_exit 'kill -INT $MODEL 2>/dev/null; wait $MODEL 2>/dev/null' 
# its clients have started when pgbench_history (16397) has its first page
hist=$MB_D/pg/base/5/16397
while kill -0 $MODEL 2>/dev/null && [ "$(stat -c %s $hist 2>/dev/null || echo 0)" = 0 ]; do
	sleep 0.02
done
kill -0 $MODEL 2>/dev/null || { wait $MODEL; cat $T/log/model.err; fail "iotap run pgsql"; }
if [ $SEQ = 1 ]; then
	mark $MM_D $MM_W -- bench
else
	mark $MM_D $MM_W $RM_D $RM_W -- bench
	date +%s.%N > $T/log/bench-t0
	real_bench
fi
wait $MODEL || { cat $T/log/model.err; fail "iotap run pgsql"; }
[ $SEQ = 1 ] || wait $CKT
mark $MM_D $MM_W -- bench --end
echo "# end: $(uptime)" >&2
pg_stop
tail -n +$((l0 + 1)) $T/log/pg.log > $T/log/bench-pg.log
MOUNT_PID=$MW_PID; iotap_umount $MM_W
MOUNT_PID=$MD_PID; iotap_umount $MM_D
MOUNT_PID=$RW_PID; iotap_umount $RM_W
MOUNT_PID=$RD_PID; iotap_umount $RM_D

for t in real-data real-wal model-data model-wal model; do
	"$IOTAP" dump $T/$t.iotap > $T/$t.txt || fail "dump $t"
done
[ -n "$KEEP" ] && mkdir -p "$KEEP" && cp $T/*.txt $T/log/* "$KEEP"/

python3 "$(dirname "$0")/pgsql_compare.py" $T $T/log "$S" "$C" "$DUR" "$RATE" "$WIN" "$SEQ"
