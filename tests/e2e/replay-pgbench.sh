#!/bin/bash
# SPDX-License-Identifier: MIT
# replay-pgbench: a small PostgreSQL pgbench run captured through the mount
# (initdb outside it; server start, pgbench -i, phase "bench": 4 clients
# for 5 s, shutdown checkpoint inside it), replayed into fresh directories
# with --prepare (the data directory as the capture first saw it, owned by
# postgres, and the replay takes postgres' fsuid as the capture did):
#   - as fast as possible: per phase and per op type the same op counts,
#     bytes and errors as the capture, zero differences;
#   - with --map DATA/pg_wal=WALDIR: the same, and the WAL segments are
#     written under WALDIR (WAL on its own array).
# Skips (77) without PostgreSQL 15's initdb/pg_ctl or the postgres user.
# TIMEOUT: 120
. "$(dirname "$0")/lib.sh"
need_fuse
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
[ -x "$PGBIN/initdb" ] && [ -x "$PGBIN/pg_ctl" ] && [ -x "$PGBIN/pgbench" ] ||
	skip "PostgreSQL (initdb, pg_ctl, pgbench in $PGBIN) not installed"
id postgres >/dev/null 2>&1 || skip "no postgres user"
command -v setpriv >/dev/null || skip "setpriv not installed"
as_pg() { setpriv --reuid=postgres --regid="$(id -g postgres)" --init-groups -- "$@"; }
PORT=$((20000 + $$ % 10000))
TR=$T/pg.iotap
CMP="python3 $E2E_DIR/replay_compare.py"
mkdir -p "$BACKING/pg" "$T/sock" "$T/log"
chown postgres "$BACKING/pg" "$T/sock" "$T/log"
as_pg "$PGBIN/initdb" -D "$BACKING/pg/data" --no-sync -A trust > "$T/log/initdb.log" 2>&1 ||
	{ cat "$T/log/initdb.log"; fail "initdb"; }

pg_stop() { as_pg "$PGBIN/pg_ctl" -D "$MNT/pg/data" -m fast -w stop > /dev/null 2>&1; }
iotap_mount "$BACKING" "$MNT" --trace "$TR"
at_exit pg_stop
as_pg "$PGBIN/pg_ctl" -D "$MNT/pg/data" -l "$T/log/pg.log" -w \
	-o "-k $T/sock -c listen_addresses= -p $PORT -c shared_buffers=16MB" start > /dev/null ||
	{ cat "$T/log/pg.log"; fail "pg_ctl start"; }
as_pg "$PGBIN/pgbench" -h "$T/sock" -p $PORT -i -s 1 postgres > "$T/log/init.out" 2>&1 ||
	{ cat "$T/log/init.out"; fail "pgbench -i"; }
"$IOTAP" mark "$MNT" bench || fail "mark"
as_pg "$PGBIN/pgbench" -h "$T/sock" -p $PORT -c 4 -j 2 -T 5 postgres > "$T/log/bench.out" 2>&1 ||
	{ cat "$T/log/bench.out"; fail "pgbench"; }
pg_stop || fail "pg_ctl stop"
"$IOTAP" mark "$MNT" bench --end || fail "mark"
iotap_umount "$MNT"
_at_exit=()		# stopped: nothing left to stop at exit
note "pgbench: $(grep -E '^tps' "$T/log/bench.out")"
"$IOTAP" info --strict "$TR" > "$T/info.txt" || { cat "$T/info.txt"; fail "info"; }
note "capture: $(grep '^records' "$T/info.txt")"

mkdir "$T/r1"
"$IOTAP" replay "$TR" "$T/r1" --prepare --timing asap --trace "$T/r1.iotap" --json -q \
	> "$T/r1.json" 2> "$T/r1.err" || { cat "$T/r1.err"; fail "replay"; }
$CMP "$IOTAP" "$TR" "$T/r1.iotap" --replay-json "$T/r1.json" || fail "replay differs"
expect_eq "owner of the replayed data directory" "$(stat -c %U "$T/r1/pg/data")" postgres

mkdir "$T/r2" "$T/wal"
"$IOTAP" replay "$TR" "$T/r2" --prepare --timing asap --map "$BACKING/pg/data/pg_wal=$T/wal" \
	--trace "$T/r2.iotap" --json -q > "$T/r2.json" 2> "$T/r2.err" ||
	{ cat "$T/r2.err"; fail "replay --map"; }
$CMP "$IOTAP" "$TR" "$T/r2.iotap" --replay-json "$T/r2.json" || fail "replay --map differs"
ls "$T/wal" | grep -q '^0000' || fail "no WAL segment under the --map directory"
[ -z "$(ls "$T/r2/pg/data/pg_wal" 2>/dev/null)" ] || fail "WAL written into the data directory"
exit 0
