#!/bin/bash
# SPDX-License-Identifier: MIT
# export-duckdb: `iotap export` of a real capture, read by DuckDB (npm
# @duckdb/node-api in tests/.node, which tests/run installs; skipped without
# it or node). The capture writes a file, renames it, renames its directory,
# deletes it and makes a file of the same name again. Checked
# (export_check.js): Parquet and CSV hold the same rows; per op the count,
# bytes and mean latency of `iotap report --json`; a row per call; each
# read and write under the path its file had then; the phases and names in
# --events; statistics in the footer. `report --by file` names the same
# paths. A damaged copy exports what is readable, says what was not, and
# exits as `iotap dump` does. A synthetic trace of more than a row group
# reads back from Parquet exactly as from CSV. examples/fleet.sql's
# queries over this capture and a second one, exported as hosts a and b
# (--host), answer as each one's report does (fleet_check.js).
. "$(dirname "$0")/lib.sh"
NODE_DIR=${IOTAP_NODE_DIR:-$IOTAP_SRC/tests/.node}
command -v node > /dev/null || skip "needs node (Debian's nodejs)"
[ -d "$NODE_DIR/node_modules/@duckdb/node-api" ] ||
	skip "no @duckdb/node-api in $NODE_DIR (tests/run installs it)"
need_fuse
TR=$T/c.iotap
iotap_mount "$BACKING" "$MNT" --trace "$TR"
"$IOTAP" mark "$MNT" one || fail mark
dd if=/dev/urandom of="$MNT/f" bs=64k count=40 status=none || fail "write f"
mkdir "$MNT/d" || fail mkdir
dd if=/dev/zero of="$MNT/d/a" bs=4k count=10 status=none || fail "write d/a"
mv "$MNT/d/a" "$MNT/d/b" || fail "rename d/a"
dd if=/dev/zero of="$MNT/d/b" bs=4k count=5 seek=10 conv=notrunc status=none || fail "write d/b"
mv "$MNT/d" "$MNT/d2" || fail "rename d"
"$IOTAP" mark "$MNT" two || fail mark
dd if="$MNT/d2/b" of=/dev/null bs=4k status=none || fail "read d2/b"
rm "$MNT/d2/b" || fail rm
dd if=/dev/zero of="$MNT/d2/b" bs=8k count=3 status=none || fail "write the new d2/b"
dd if="$MNT/f" of=/dev/null bs=128k status=none || fail "read f"
iotap_umount "$MNT"

check "export parquet" "$IOTAP" export "$TR" $T/c.parquet --events $T/e.parquet
check "export csv" "$IOTAP" export "$TR" $T/c.csv --events $T/e.csv
"$IOTAP" report --json "$TR" > $T/r.json || fail "report --json"
# [path, op, calls]: dd reads until a read returns 0 (one call more than
# the blocks); both files called d2/b (the renamed one, then the new one)
cat > $T/paths.json <<'EOF'
[["f", "write", 40], ["d/a", "write", 10], ["d/b", "write", 5], ["d2/b", "read", 16],
 ["d2/b", "write", 3], ["f", "read", 21]]
EOF
NODE_PATH="$NODE_DIR/node_modules" node "$E2E_DIR/export_check.js" $T/c.parquet $T/c.csv \
	$T/e.parquet $T/r.json $T/paths.json || fail "the export disagrees (above)"
head -c 4 $T/c.parquet | grep -q PAR1 || fail "not a Parquet file"
expect_eq "mode" "$(stat -c %a $T/c.parquet)" 600

# report --by file: a row per path the file had
"$IOTAP" report --by file "$TR" > $T/by.txt || fail "report --by file"
for p in f d/a d/b d2/b; do
	grep -Eq "^$p " $T/by.txt || fail "--by file has no row '$p'"
done

# examples/fleet.sql's three questions over two hosts: this capture as
# host a and a second one as host b (--host names them; without it the
# column is the capturing host's name), checked against each one's report
expect_eq "host without --host" "$(sed -n 2p $T/c.csv | cut -d, -f2)" "$(uname -n)"
expect 2 "--host needs a name" "$IOTAP" export "$TR" $T/z.parquet --host ''
TR2=$T/c2.iotap
iotap_mount "$BACKING" "$MNT" --trace "$TR2"
"$IOTAP" mark "$MNT" two || fail mark
dd if=/dev/zero of="$MNT/g" bs=16k count=30 oflag=dsync status=none || fail "write g"
"$IOTAP" mark "$MNT" three || fail mark
dd if="$MNT/g" of=/dev/null bs=8k status=none || fail "read g"
iotap_umount "$MNT"
check "export --host a" "$IOTAP" export "$TR" $T/a.parquet --host a
check "export --host b" "$IOTAP" export "$TR2" $T/b.parquet --host b
for h in a b; do
	tr=$TR; [ $h = b ] && tr=$TR2
	"$IOTAP" report --json "$tr" > $T/r$h.json || fail "report --json $h"
	"$IOTAP" export "$tr" $T/$h.csv --host $h || fail "export --csv $h"
done
NODE_PATH="$NODE_DIR/node_modules" node "$IOTAP_SRC/examples/fleet.js" --json $T/a.parquet \
	$T/b.parquet > $T/fleet.json || fail "examples/fleet.js"
NODE_PATH="$NODE_DIR/node_modules" node "$E2E_DIR/fleet_check.js" $T/fleet.json \
	a=$T/ra.json=$T/a.csv b=$T/rb.json=$T/b.csv || fail "fleet.sql's answers disagree (above)"

# a damaged copy: a chunk in the middle overwritten
cp "$TR" $T/bad.iotap
sz=$(stat -c %s $T/bad.iotap)
dd if=/dev/zero of=$T/bad.iotap bs=1 seek=$((sz / 2)) count=64 conv=notrunc status=none
"$IOTAP" dump $T/bad.iotap > /dev/null 2> $T/dump.err
dump_rc=$?
"$IOTAP" export $T/bad.iotap $T/bad.parquet 2> $T/exp.err
expect_eq "damaged: exit status as dump's" "$?" "$dump_rc"
cat $T/exp.err >&2
grep -qi "damaged\|skipped\|bad" $T/exp.err || fail "damage not reported"
[ -s $T/bad.parquet ] || fail "nothing exported from the damaged trace"

# more than a row group (1,048,576 rows) of report-synth's mixed stream:
# the Parquet pages (8192 rows), dictionaries and row groups decode to
# the CSV's values, row for row
SYNTH=${IOTAP_BUILD:-$IOTAP_SRC/build}/tests/unit/report-synth
if [ -x "$SYNTH" ]; then
	"$SYNTH" --records 1100000 $T/s.iotap > /dev/null || fail "report-synth"
	check "export synth parquet" "$IOTAP" export $T/s.iotap $T/s.parquet --events $T/se.parquet
	check "export synth csv" "$IOTAP" export $T/s.iotap $T/s.csv --events $T/se.csv
	cat > $T/s.js <<'EOF'
// the CSV read into the Parquet file's column types, then both tables'
// row count and order-independent sum of row hashes compared
const { DuckDBInstance } = require('@duckdb/node-api');
const [dir] = process.argv.slice(2);
(async () => {
	const c = await (await DuckDBInstance.create(':memory:')).connect();
	const q = async (s) => (await c.runAndReadAll(s)).getRowObjectsJson();
	const fp = async (t) => JSON.stringify(await q(`select count(*) n,
		sum(hash(t)::hugeint) h from ${t} t`));
	let bad = 0;
	for (const [p, v, t] of [['s.parquet', 's.csv', 'a'], ['se.parquet', 'se.csv', 'b']]) {
		await c.run(`create table ${t} as from '${dir}/${p}' limit 0`);
		await c.run(`insert into ${t} from read_csv('${dir}/${v}', header = true)`);
		const x = await fp(`'${dir}/${p}'`), y = await fp(t);
		if (x !== y) { console.error(`FAIL: ${p} ${x}, ${v} ${y}`); bad++; }
	}
	const g = await q(`select count(distinct row_group_id) g, sum(num_values) v
		from parquet_metadata('${dir}/s.parquet') where column_id = 0`);
	if (g[0].g !== '2' || g[0].v !== '1100000') {
		console.error(`FAIL: row groups ${JSON.stringify(g)}`); bad++;
	}
	process.exit(bad ? 1 : 0);
})().catch((e) => { console.error('FAIL: ' + e); process.exit(1); });
EOF
	NODE_PATH="$NODE_DIR/node_modules" node $T/s.js $T || fail "Parquet and CSV differ (above)"
	rm -f $T/s.csv $T/se.csv
fi

# errors: no partial file, a trace never replaced
expect 1 "cannot open trace" "$IOTAP" export $T/nosuch.iotap $T/x.parquet
[ ! -e $T/x.parquet ] || fail "a file left behind"
expect 1 "" "$IOTAP" export "$TR" "$TR"
expect 2 "exclude" "$IOTAP" export "$TR" $T/y --csv --parquet
exit 0
