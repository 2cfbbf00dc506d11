#!/bin/bash
# SPDX-License-Identifier: MIT
# pgsql-vs-postgres.sh - does `iotap run pgsql` load the storage as a real
# PostgreSQL running pgbench does? (a comparison, not a test)
#
# usage: tests/bench/pgsql-vs-postgres.sh [-s SCALE] [-c CLIENTS] [-T SEC] [-R TPS]
#                                         [--checkpoint-timeout SEC] [--keep DIR]
#
# 1. Real: initdb (outside any capture) with pg_wal a symlink into a second
#    directory; both directories captured through their own iotap mount
#    (data as on the seed's RAID10, WAL as on its RAID1); PostgreSQL 15
#    started on the mount with log_checkpoints and checkpoint_timeout;
#    phase "init" = pgbench -i -s SCALE, phase "bench" = pgbench -c CLIENTS
#    -j CLIENTS -T SEC -R TPS, both marked on both mounts.
#    PostgreSQL's own CPU per transaction over the bench (the postmaster
#    and its children from /proc, the ended ones in its cutime/cstime).
# 2. Model: `iotap run pgsql DATA --wal-dir WAL -s SCALE -c CLIENTS -T SEC
#    -R TPS --warmup 0 --checkpoint-timeout SEC --cpu-per-txn US` (US: that
#    CPU per transaction) on two fresh iotap mounts,
#    so both sides are seen at the same level (FUSE requests); the model's
#    own trace gives its phase times, lined up with the mounts' captures by
#    its first create (PG_VERSION).
# 3. Per directory and phase, side by side with the ratio model/real:
#    request-size histograms, read/write op ratio, writes, reads and bytes
#    per transaction (WAL bytes per transaction on the WAL mount),
#    fdatasyncs per transaction, fsyncs per checkpoint, WAL fdatasync
#    latency p50/p99 as the mount saw it, pgbench's latency average and
#    tps. Target: within 15% (tps within 5%).
#
# Defaults: -s 5 -c 4 -T 60 -R 200 --checkpoint-timeout 30. Needs root,
# /dev/fuse, PostgreSQL 15 (initdb, pg_ctl, pgbench under PGBIN, default
# /usr/lib/postgresql/15/bin), the postgres user, setpriv and python3.
# Takes about 2 x (SEC + the load) plus a minute.
set -u
S=5
C=4
DUR=60
RATE=200
CKPT=30
KEEP=
while [ $# -gt 0 ]; do
	case $1 in
	-s) S=$2; shift 2 ;;
	-c) C=$2; shift 2 ;;
	-T) DUR=$2; shift 2 ;;
	-R) RATE=$2; shift 2 ;;
	--checkpoint-timeout) CKPT=$2; shift 2 ;;
	--keep) KEEP=$2; shift 2 ;;
	-h|--help) sed -n '3,33p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "pgsql-vs-postgres.sh: unknown argument '$1'" >&2; exit 2 ;;
	esac
done
. "$(dirname "$0")/../e2e/lib.sh"
need_fuse
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
[ -x "$PGBIN/initdb" ] && [ -x "$PGBIN/pg_ctl" ] && [ -x "$PGBIN/pgbench" ] ||
	skip "PostgreSQL (initdb, pg_ctl, pgbench in $PGBIN) not installed"
id postgres >/dev/null 2>&1 || skip "no postgres user"
command -v setpriv >/dev/null || skip "setpriv not installed"
as_pg() { setpriv --reuid=postgres --regid="$(id -g postgres)" --init-groups -- "$@"; }
PORT=$((20000 + $$ % 10000))

# --- the real server --------------------------------------------------------
RB_D=$T/real-data RB_W=$T/real-wal RM_D=$T/rm-data RM_W=$T/rm-wal
mkdir -p $RB_D $RB_W $RM_D $RM_W $T/sock $T/log
chown postgres $RB_D $RB_W $T/sock $T/log
as_pg "$PGBIN/initdb" -D $RB_D/data -X $RB_W/wal -A trust > $T/log/initdb.log 2>&1 ||
	{ cat $T/log/initdb.log; fail "initdb"; }
ln -sfn $RM_W/wal $RB_D/data/pg_wal	# WAL through the second mount
iotap_mount $RB_D $RM_D --trace $T/real-data.iotap
RD_PID=$MOUNT_PID
iotap_mount $RB_W $RM_W --trace $T/real-wal.iotap
RW_PID=$MOUNT_PID
pg_stop() { as_pg "$PGBIN/pg_ctl" -D $RM_D/data -m fast -w stop > /dev/null 2>&1; }
trap 'pg_stop; _cleanup' EXIT
as_pg "$PGBIN/pg_ctl" -D $RM_D/data -l $T/log/pg.log -w -o "-k $T/sock -c listen_addresses= \
-p $PORT -c log_checkpoints=on -c checkpoint_timeout=${CKPT}s" start > /dev/null ||
	{ cat $T/log/pg.log; fail "pg_ctl start"; }
mark() { "$IOTAP" mark $RM_D "$@" && "$IOTAP" mark $RM_W "$@" || fail "mark $*"; }
echo "# real: pgbench -i -s $S" >&2
mark init
as_pg "$PGBIN/pgbench" -h $T/sock -p $PORT -i -s $S postgres > $T/log/init.out 2>&1 ||
	{ cat $T/log/init.out; fail "pgbench -i"; }
mark init --end
echo "# real: pgbench -c $C -j $C -T $DUR -R $RATE" >&2
l0=$(wc -l < $T/log/pg.log)
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
cpu0=$(pg_cpu)
mark bench
as_pg "$PGBIN/pgbench" -h $T/sock -p $PORT -c $C -j $C -T $DUR -R $RATE -P 5 postgres \
	> $T/log/bench.out 2> $T/log/bench.err || { cat $T/log/bench.err; fail "pgbench"; }
mark bench --end
cpu1=$(pg_cpu)
ntx=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' $T/log/bench.out)
CPU_US=$(awk -v d=$((cpu1 - cpu0)) -v hz=$(getconf CLK_TCK) -v n=${ntx:-0} \
	'BEGIN { printf "%.0f", n ? d * 1e6 / hz / n : 0 }')
echo "# real: PostgreSQL's CPU per transaction: $CPU_US us (all its processes, at $RATE tps)" >&2
echo "$CPU_US" > $T/log/pg-cpu-us
tail -n +$((l0 + 1)) $T/log/pg.log > $T/log/bench-pg.log
pg_stop
trap _cleanup EXIT
MOUNT_PID=$RW_PID; iotap_umount $RM_W
MOUNT_PID=$RD_PID; iotap_umount $RM_D

# --- the model ----------------------------------------------------------------
MB_D=$T/model-data MB_W=$T/model-wal MM_D=$T/mm-data MM_W=$T/mm-wal
mkdir -p $MB_D/pg $MB_W/wal $MM_D $MM_W
iotap_mount $MB_D $MM_D --trace $T/model-data.iotap
MD_PID=$MOUNT_PID
iotap_mount $MB_W $MM_W --trace $T/model-wal.iotap
MW_PID=$MOUNT_PID
echo "# model: iotap run pgsql -s $S -c $C -T $DUR -R $RATE --cpu-per-txn ${CPU_US}us" >&2
"$IOTAP" run pgsql $MM_D/pg --wal-dir $MM_W/wal -s $S -c $C -T $DUR -R $RATE --warmup 0 \
	--cpu-per-txn ${CPU_US}us \
	--checkpoint-timeout ${CKPT}s -q --trace $T/model.iotap > $T/log/model.out 2> $T/log/model.err ||
	{ cat $T/log/model.err; fail "iotap run pgsql"; }
MOUNT_PID=$MW_PID; iotap_umount $MM_W
MOUNT_PID=$MD_PID; iotap_umount $MM_D

for t in real-data real-wal model-data model-wal model; do
	"$IOTAP" dump $T/$t.iotap > $T/$t.txt || fail "dump $t"
done
[ -n "$KEEP" ] && mkdir -p "$KEEP" && cp $T/*.txt $T/log/* "$KEEP"/

python3 "$(dirname "$0")/pgsql_compare.py" $T $T/log "$S" "$C" "$DUR" "$RATE"
