#!/bin/bash
# SPDX-License-Identifier: MIT
# dump-export: `iotap dump --csv` and `--json` carry every record of a real
# capture, the same ones the text dump shows (count, bytes, per-op counts),
# with a header row and a fixed column count; they stream (a 1-line
# --limit stops early), refuse to be combined, and the README's SQL recipe
# (examples/traces-sql.py, Python's csv + sqlite3) compares two traces per
# phase with the bytes `iotap report` gives.
. "$(dirname "$0")/lib.sh"
command -v python3 > /dev/null || skip "needs python3"
TR=$T/c.iotap
iotap_mount "$BACKING" "$MNT" --trace "$TR"
"$IOTAP" mark "$MNT" write || fail mark
dd if=/dev/urandom of="$MNT/f" bs=64k count=40 status=none || fail "write"
mkdir "$MNT/d" && echo 'x"y' > "$MNT/d/q\"uote,comma" || fail "odd name"
"$IOTAP" mark "$MNT" read || fail mark
cat "$MNT/f" "$MNT/d/q\"uote,comma" > /dev/null || fail "read"
iotap_umount "$MNT"

"$IOTAP" dump "$TR" --no-header > $T/d.txt || fail "dump"
"$IOTAP" dump "$TR" --csv > $T/d.csv || fail "dump --csv"
"$IOTAP" dump "$TR" --json > $T/d.json || fail "dump --json"
python3 - $T/d.txt $T/d.csv $T/d.json <<'PY' || fail "the exports disagree with the dump"
import collections, csv, json, sys
txt = [l.split() for l in open(sys.argv[1])]
rows = list(csv.DictReader(open(sys.argv[2], newline="")))
js = [json.loads(l) for l in open(sys.argv[3])]
assert len(txt) == len(rows) == len(js), (len(txt), len(rows), len(js))
ncol = len(open(sys.argv[2]).readline().split(","))
assert all(None not in r and len(r) == ncol for r in rows), "ragged CSV"
ops = lambda seq: collections.Counter(seq)
t_ops = ops(l[3] for l in txt if l[3].islower())
c_ops = ops(r["op"] for r in rows if r["type"] == "op")
j_ops = ops(o["op"] for o in js if o["type"] == "op")
assert t_ops == c_ops == j_ops, (t_ops, c_ops, j_ops)
wb = sum(int(l[7]) for l in txt if l[3] == "write")
assert wb == sum(int(r["result"]) for r in rows if r["op"] == "write") == \
    sum(o["result"] for o in js if o.get("op") == "write") == 40 * 65536 + 4, wb
names = [r["name"] for r in rows if r["type"] == "name"]
assert 'q"uote,comma' in names, names
assert [o["name"] for o in js if o["type"] == "phase"] == ["write", "read"]
assert all(isinstance(o["time_s"], float) for o in js)
PY
expect_eq "--limit 1 --csv lines" "$("$IOTAP" dump "$TR" --csv --limit 1 | wc -l)" 2
expect 2 "exclude each other" "$IOTAP" dump "$TR" --csv --json

# the SQL recipe: the capture beside a replay of it, per phase
mkdir $T/r
"$IOTAP" replay "$TR" $T/r --prepare --timing asap --trace $T/r.iotap -q > /dev/null 2>&1 || fail "replay"
IOTAP="$IOTAP" python3 "$IOTAP_SRC/examples/traces-sql.py" "$TR" $T/r.iotap > $T/sql.txt ||
	fail "examples/traces-sql.py"
cat $T/sql.txt >&2
for t in c.iotap r.iotap; do
	grep -Eq "^write +$t +[0-9]+ +0\.000 +2\.621 " $T/sql.txt || fail "recipe: $t's write phase"
	grep -Eq "^read +$t +[0-9]+ +2\.621 " $T/sql.txt || fail "recipe: $t's read phase"
done
exit 0
