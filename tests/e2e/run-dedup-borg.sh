#!/bin/bash
# SPDX-License-Identifier: MIT
# run-dedup-borg: `iotap run dedup --flavor borg` lays a repository out as
# borg 1.2 does and issues its op pattern: data/0/N segments that start
# with BORG_SEG, the last commit a 17-byte segment of its own with
# index.T, hints.T and integrity.T beside it (T its number), the cache
# (config, chunks, files) in --meta-dir; in the trace, every segment
# written is fdatasync'd before its close and its directory fsync'd, each
# index/hints/integrity .tmp fsync'd before its rename; chunks of 512 KiB
# to 8 MiB written once each (a chunk's id and contents appear once in the
# log) as one PUT write (41 + 43 bytes of headers
# and what lz4 keeps: half of a 50% compressible chunk, which zlib cannot
# shrink further; twice what the backups wrote is what the run says it
# stored); later backups write only the chunks a change touched; the
# restore reads the segments; prune + compact unlink segments; report
# shows the dedup figures. Bad input (several streams) refused with exit
# 2; Ctrl-C mid-backup (locks and txn.active on disk) removes everything;
# two directories at once.
. "$(dirname "$0")/lib.sh"
[ -x "$IOTAP" ] || fail "no iotap binary at $IOTAP"
A=$T/a
M=$T/meta
mkdir -p $A $M
expect 2 "one process" "$IOTAP" run dedup $A --flavor borg --streams 2
expect 2 "segments are 8 MiB" "$IOTAP" run dedup $A --flavor borg --container-size 1m
[ -z "$(find $A $M -mindepth 1)" ] || fail "a refused run left files"

"$IOTAP" run dedup $A --flavor borg --meta-dir $M --image-size 48m --generations 3 \
	--change 10% --dup 0 --compressibility 50% --container-size 16m --keep -q \
	--trace $T/b.iotap > $T/out.txt 2> $T/err.txt || { cat $T/err.txt; fail "run dedup --flavor borg"; }
grep -q "^dedup borg on" $T/out.txt || { cat $T/out.txt; fail "no borg header"; }
"$IOTAP" dump $T/b.iotap > $T/dump.txt || fail "dump"
python3 - $T $A/iotap-dedup.* $M/iotap-dedup.* <<'PY' || fail "borg layout or op pattern"
import collections, os, re, sys, zlib
T, repo, cache = sys.argv[1:4]
bad = []
segs = sorted(int(n) for n in os.listdir(f"{repo}/data/0"))
for n in segs:
    with open(f"{repo}/data/0/{n}", "rb") as f:
        if f.read(8) != b"BORG_SEG":
            bad.append(f"segment {n} lacks BORG_SEG")
last = segs[-1]
if os.path.getsize(f"{repo}/data/0/{last}") != 17:
    bad.append(f"the last segment {last} is not a 17-byte commit")
for k in ("index", "hints", "integrity"):
    have = [x for x in os.listdir(repo) if x.startswith(k + ".")]
    if have != [f"{k}.{last}"]:
        bad.append(f"{k}: {have}, want {k}.{last}")
if sorted(os.listdir(cache)) != ["chunks", "config", "files"]:
    bad.append(f"cache: {sorted(os.listdir(cache))}")
idx = os.path.getsize(f"{repo}/index.{last}")
if (idx - 18) % 40:
    bad.append(f"index.{last}: {idx} bytes is not 18 + 40 per bucket")
# the trace: names, then per file its ops in order
name, parent, ops = {}, {}, collections.defaultdict(list)
phase = None
for line in open(f"{T}/dump.txt"):
    f = line.split()
    if len(f) < 5 or line.startswith("#"):
        continue
    if f[3] == "NAME":
        m = re.search(r'file=(\d+) parent=(\d+).* name="([^"]*)"', line)
        name[m.group(1)] = m.group(3)
        parent[m.group(1)] = m.group(2)
        continue
    if f[3] == "PHASE":
        m = re.search(r'name="([^"]*)"', line)
        phase = m.group(1) if f[4] == "begin" else None
        continue
    if f[3].isupper():
        continue
    # a file is its inode under the name it has now (inodes are reused)
    key = (f[4], name.get(f[4]), parent.get(f[4]))
    ops[key].append((phase, f[3], int(f[6]) if f[6].lstrip("-").isdigit() else 0,
                     int(f[7]) if f[7].lstrip("-").isdigit() else 0))
dirs = {k for k, v in name.items() if v == "0"}
seg_files = [k for k in ops if k[2] in dirs and (k[1] or "").isdigit()]
if not seg_files:
    bad.append("no segment files in the trace")
puts = collections.Counter()
for k in seg_files:
    o = [x[1] for x in ops[k]]
    if "write" not in o:
        continue
    # written: the last write, then fdatasync, then the close
    lw = max(i for i, x in enumerate(o) if x == "write")
    rest = o[lw + 1:]
    if rest[:2] != ["fsync", "release"]:
        bad.append(f"segment {k[1]}: after its last write {rest[:3]}")
    for ph, op, ln, res in ops[k]:
        if op == "write" and ph and ph.startswith("backup") and ln > 64 * 1024:
            if not (512 * 1024 // 2 <= ln - 84 <= 8 * 1024 * 1024 // 2 + 16):
                bad.append(f"a PUT of {ln} bytes")
            puts[ph] += ln
# each .tmp fsync'd before its rename
for k in ops:
    if re.fullmatch(r"(index|hints|integrity)\.\d+\.tmp", k[1] or ""):
        v = k[1]
        o = [x[1] for x in ops[k]]
        if "fsync" not in o or "rename" not in o or "rename" in o[:o.index("fsync")]:
            bad.append(f"{v}: {o}")
# bytes: gen 0 stores half of 48 MiB (lz4 keeps the random half); later ones the
# chunks that overlap the 10% changed 1 MiB extents (each renews ~2.5 MiB chunks)
g0 = puts["backup gen=0"]
if not (0.49 * 48 * 2**20 <= g0 <= 0.52 * 48 * 2**20):
    bad.append(f"backup gen=0 PUT bytes {g0}, want about half of 48 MiB")
for g in ("backup gen=1", "backup gen=2"):
    if not (0.05 * g0 <= puts[g] <= 0.6 * g0):
        bad.append(f"{g}: PUT bytes {puts[g]} for a 10% change of {g0}")
# what was written does not compress further (it is what lz4 kept)
big = max(segs, key=lambda n: os.path.getsize(f"{repo}/data/0/{n}"))
data = open(f"{repo}/data/0/{big}", "rb").read()
r = len(zlib.compress(data, 1)) / len(data)
if r < 0.97:
    bad.append(f"segment {big} compresses to {r:.2f} with zlib: not what lz4 keeps")
# the log parses: entries of (crc, size, tag, id); a chunk is stored once (ids and
# contents distinct) and what the backups wrote, uncompressed (x2), is what the run
# says it stored: the written data dedups at the run's ratio
import hashlib, struct
ids, sums, nput = set(), set(), 0
for n in segs:
    d = open(f"{repo}/data/0/{n}", "rb").read()
    o = 8
    while o < len(d):
        size, tag = struct.unpack_from("<IB", d, o + 4)
        if size < 9 or o + size > len(d) or tag > 2:
            bad.append(f"segment {n}: a bad entry at {o}")
            break
        if tag == 0 and any(d[o + 9:o + 41]):
            nput += 1
            ids.add(d[o + 9:o + 41])
            sums.add(hashlib.sha256(d[o + 41:o + size]).digest())
        o += size
if not nput or len(ids) != nput or len(sums) != nput:
    bad.append(f"{nput} chunk PUTs, {len(ids)} ids, {len(sums)} contents: a chunk stored twice")
m = re.search(r"stored ([0-9.]+) MB of ([0-9.]+) MB logical", open(f"{T}/out.txt").read())
stored = float(m.group(1)) * 1e6
wrote = 2 * sum(v for k, v in puts.items() if k.startswith("backup"))
if abs(wrote - stored) > 0.03 * stored:
    bad.append(f"backups wrote {wrote / 1e6:.1f} MB uncompressed, the run stored {stored / 1e6:.1f} MB")
ph = collections.Counter(x[0] for k in seg_files for x in ops[k] if x[1] == "read")
if not ph.get("restore gen=2"):
    bad.append("the restore read no segment")
un = [x for k in seg_files for x in ops[k] if x[1] == "unlink"]
if not any(x[0] == "compact" for x in un):
    bad.append("compact unlinked no segment")
if bad:
    print("\n".join(bad))
    sys.exit(1)
PY
"$IOTAP" report $T/b.iotap > $T/rep.txt || fail "report of the borg trace"
grep -q "^application: backup media server" $T/rep.txt || fail "report has no dedup figures"
# the report's figures from the trace are the run's own: backup logical and physical
# MB/s, ratios, look-ups; restore MB, reads and segment files read
python3 - $T/out.txt $T/rep.txt <<'PY' || fail "report's borg figures differ from the run's"
import re, sys
run, rep = open(sys.argv[1]).read(), open(sys.argv[2]).read()
app = rep[rep.index("\napplication:"):]
rbk = run[run.index("\nbackup "):run.index("\nrestore ")]
rrs = run[run.index("\nrestore "):]
bk = re.findall(r"^(gen=\d+) +([0-9.]+) +([0-9.]+) +([0-9.]+) +[0-9.]+ +([0-9.]+) +([0-9.]+) +([0-9.]+)", rbk, re.M)
rb = {m[0]: m for m in re.findall(r"^  (gen=\d+) +([0-9.]+) +([0-9.]+) +([0-9.]+) +([0-9.]+) +([0-9.]+) +([0-9.]+)", app, re.M)}
rs = re.findall(r"^(gen=\d+) +[0-9.]+ +([0-9.]+) +[0-9.]+ +(\d+) +[0-9.]+ +(\d+) +\d+$", rrs, re.M)
rr = {m[0]: m for m in re.findall(r"^  (gen=\d+) +[0-9.]+ +([0-9.]+) +[0-9.]+ +(\d+) +(\d+)$", app, re.M)}
bad = [w for w in bk if rb.get(w[0]) != w] + [w for w in rs if rr.get(w[0]) != w]
if len(bk) != 3 or len(rs) != 3 or bad:
    print(len(bk), len(rs), bad, rb, rr)
    sys.exit(1)
PY
rm -rf $A/iotap-dedup.* $M/iotap-dedup.*

# Ctrl-C in the middle of a backup (locks held, txn.active in the cache): exit 130,
# everything removed
"$IOTAP" run dedup $A --flavor borg --meta-dir $M --image-size 2g --generations 2 \
	> $T/int.txt 2> $T/interr.txt &
pid=$!
for i in $(seq 100); do
	ls $M/iotap-dedup.*/txn.active > /dev/null 2>&1 && break
	sleep 0.1
done
sleep 0.3
kill -INT $pid
wait $pid
expect_eq "exit status after Ctrl-C" $? 130
grep -q "partial" $T/int.txt || { cat $T/int.txt; fail "no partial marker"; }
[ -z "$(find $A $M -mindepth 1)" ] || fail "Ctrl-C left files: $(find $A $M -mindepth 1)"

# two directories at once: a repository each, nothing left
mkdir -p $T/b
"$IOTAP" run dedup $A $T/b --flavor borg --image-size 8m --generations 2 -q > $T/two.txt ||
	fail "two directories"
[ "$(grep -c '^dedup borg on' $T/two.txt)" = 2 ] || { cat $T/two.txt; fail "not two reports"; }
[ -z "$(find $A $T/b -mindepth 1)" ] || fail "left files: $(find $A $T/b -mindepth 1)"
exit 0
