#!/bin/bash
# SPDX-License-Identifier: MIT
# report-fleet: one report over several hosts' traces (issue 26 item 4).
# Two mounts captured at once stand for two hosts; their headers name the
# same host, so the fleet report tells them apart by file name. Per host,
# every phase (and the total) is that capture's own report, member for
# member; all hosts together add ops, bytes, seeks and latency counts,
# last from the earliest start to the latest end of the two (the wall
# clock), and their percentiles (from the merged histograms) lie between
# the hosts' (within the histogram's 1/128). A trace reported beside a
# copy of itself has exactly its own percentiles and twice its counts.
# The CSV, text and HTML carry the same rows.
. "$(dirname "$0")/lib.sh"
need_fuse
command -v python3 >/dev/null || skip "needs python3"
B1=$T/backing1 B2=$T/backing2 M1=$T/mnt1 M2=$T/mnt2
mkdir -p $B1 $B2 $M1 $M2
mkdir -p $T/h1 $T/h2

iotap_mount $B1 $M1 --trace $T/h1/web.iotap
PID1=$MOUNT_PID
iotap_mount $B2 $M2 --trace $T/h2/db.iotap
PID2=$MOUNT_PID
"$IOTAP" mark $M1 write || fail "mark"
"$IOTAP" mark $M2 write || fail "mark"
for i in $(seq 12); do
	dd if=/dev/urandom of=$M1/f$i bs=64k count=4 status=none || fail "dd 1 $i"
done
for i in $(seq 5); do
	dd if=/dev/urandom of=$M2/g$i bs=128k count=3 conv=fsync status=none || fail "dd 2 $i"
done
"$IOTAP" mark $M1 read || fail "mark"
"$IOTAP" mark $M2 read || fail "mark"
cat $M1/f* > /dev/null || fail "read 1"
dd if=$M2/g2 of=/dev/null bs=4k skip=7 count=20 status=none || fail "read 2"
# a phase only the second host has
"$IOTAP" mark $M2 meta || fail "mark"
for i in $(seq 30); do
	stat $M2/g1 > /dev/null && touch $M2/t$i || fail "meta"
done
MOUNT_PID=$PID1 iotap_umount $M1
MOUNT_PID=$PID2 iotap_umount $M2

A=$T/h1/web.iotap
Bt=$T/h2/db.iotap
rep() { "$IOTAP" report "$@" --no-progress || fail "iotap report $* failed"; }
rep $A --json > $T/a.json
rep $Bt --json > $T/b.json
rep $A $Bt --json > $T/fleet.json
rep $A $Bt --csv > $T/fleet.csv
rep $A $Bt > $T/fleet.txt
rep $A $Bt --html $T/fleet.html 2> $T/html.err
cp $A $T/h2/web.iotap
rep $A $T/h2/web.iotap --json > $T/twice.json

python3 - $T <<'PY' || fail "the fleet report does not add up"
import json, sys
T = sys.argv[1]
a, b, fl = (json.load(open(f"{T}/{n}.json")) for n in ("a", "b", "fleet"))
own = [a, b]
hosts = fl["fleet"]["hosts"]
# one host name in both headers: told apart by file name
assert [h["host"] for h in hosts] == ["web.iotap", "db.iotap"], hosts
assert all(h["named_by"] == "file" for h in hosts), hosts
assert hosts[0]["header_host"] == hosts[1]["header_host"] == a["trace"]["host"]

names = [p["name"] for p in fl["phases"]]
for r in own:
    for p in r["phases"]:
        assert p["name"] in names, (p["name"], names)
assert "meta" in names and "meta" not in [p["name"] for p in a["phases"]]

def strip(o):
    o = dict(o)
    o.pop("host")
    return o

def close(x, y, rel=1e-3, ab=2e-6):
    return abs(x - y) <= max(ab, rel * max(abs(x), abs(y)))

def check(fp, ownp):
    present = [p for p in ownp if p is not None]
    # per host: the capture's own report, every member
    for h, p in enumerate(ownp):
        if p is None:
            assert fp["hosts"][h] is None, (fp["name"], h)
        else:
            assert strip(fp["hosts"][h]) == p, (fp["name"], h)
    al = fp["all_hosts"]
    # totals: the sum
    for key in ("ops", "seeks", "fsyncs"):
        assert al[key] == sum(p[key] for p in present), (fp["name"], key)
    for d in ("read", "write"):
        for key in ("ops", "bytes", "errors"):
            assert al[d][key] == sum(p[d][key] for p in present), (fp["name"], d, key)
    ops = set(k for p in present for k in p["latency_us"])
    assert set(al["latency_us"]) == ops, fp["name"]
    for op in ops:
        hl = [p["latency_us"][op] for p in present if op in p["latency_us"]]
        l = al["latency_us"][op]
        assert l["count"] == sum(x["count"] for x in hl), (fp["name"], op)
        mean = sum(x["mean"] * x["count"] for x in hl) / l["count"]
        assert close(l["mean"], mean, 1e-3, 2e-3), (fp["name"], op, l["mean"], mean)
        assert l["max"] == max(x["max"] for x in hl), (fp["name"], op)
        # a quantile of the hosts' ops together lies between the hosts' own
        for q in ("p50", "p90", "p99", "p999"):
            lo = min(x[q] for x in hl) * (1 - 1 / 128) - 1e-3
            hi = max(x[q] for x in hl) * (1 + 1 / 128) + 1e-3
            assert lo <= l[q] <= hi, (fp["name"], op, q, l[q], lo, hi)
    # the span: the union of the hosts' on the wall clock
    starts = [h["start_realtime"] + p["start_s"] for h, p in zip(hosts, ownp) if p]
    ends = [s + p["duration_s"] for s, p in zip(starts, present)]
    assert close(al["duration_s"], max(ends) - min(starts), 0, 5e-6), \
        (fp["name"], al["duration_s"], max(ends) - min(starts))
    assert close(al["start_s"], min(starts) - fl["fleet"]["start_realtime"], 0, 5e-6)
    d = al["duration_s"]
    if d > 0:
        assert close(al["ops_per_s"], al["ops"] / d), (fp["name"], al["ops_per_s"])
        assert close(al["write"]["mb_per_s"], al["write"]["bytes"] / 1e6 / d)
        assert close(al["read"]["mb_per_s"], al["read"]["bytes"] / 1e6 / d)
    # no device or CPU figures for several machines together
    assert al["device"] is None and al["cpu"] is None, fp["name"]

for fp in fl["phases"]:
    ownp = []
    for r in own:
        m = [p for p in r["phases"] if p["name"] == fp["name"]]
        ownp.append(m[0] if m else None)
    check(fp, ownp)
check(fl["total"], [a["total"], b["total"]])
assert fl["total"]["all_hosts"]["ops"] == a["total"]["ops"] + b["total"]["ops"] > 0
assert fl["total"]["all_hosts"]["write"]["bytes"] == 12 * 256 * 1024 + 5 * 384 * 1024

# beside a copy of itself: its own percentiles exactly, twice its counts
tw = json.load(open(f"{T}/twice.json"))
for x in tw["phases"] + [tw["total"]]:
    one, al = x["hosts"][0], x["all_hosts"]
    assert al["ops"] == 2 * one["ops"]
    for op, l in one["latency_us"].items():
        for q in ("p50", "p90", "p99", "p999", "max", "mean"):
            assert al["latency_us"][op][q] == l[q], (x["name"], op, q)
        assert al["latency_us"][op]["count"] == 2 * l["count"]

# CSV: the report's columns after a host column; the same figures
import csv
rows = list(csv.reader(open(f"{T}/fleet.csv")))
head = rows[0]
assert head[:3] == ["host", "name", "index"], head[:3]
tot = [r for r in rows[1:] if r[1] == "total"]
assert [r[0] for r in tot] == ["web.iotap", "db.iotap", "(all hosts)"], tot
ops = head.index("ops")
assert int(tot[2][ops]) == fl["total"]["all_hosts"]["ops"]
assert int(tot[0][ops]) == a["total"]["ops"]
wb = head.index("write_bytes")
assert int(tot[2][wb]) == int(tot[0][wb]) + int(tot[1][wb])
assert len(rows) == 1 + sum(1 + sum(h is not None for h in p["hosts"])
                            for p in fl["phases"] + [fl["total"]])
PY

# the same rows for people; the page has the hosts side by side
grep -q "^host web.iotap .*web.iotap: capture" $T/fleet.txt || fail "text: no host line"
grep -q "told apart by file name" $T/fleet.txt || fail "text: the file-name note"
grep -q "^      (all hosts) " $T/fleet.txt || fail "text: no all-hosts row"
grep -q "(no such phase)" $T/fleet.txt || fail "text: a phase one host lacks"
grep -q "wrote $T/fleet.html" $T/html.err || fail "html: not said"
for s in "web.iotap" "db.iotap" "(all hosts)" "Phases, hosts side by side"; do
	grep -qF "$s" $T/fleet.html || fail "html: no '$s'"
done

# what a fleet report cannot do, and a trace that is not there
expect 2 "several traces make a fleet report" "$IOTAP" report $A $Bt --interval 1s
expect 2 "several traces make a fleet report" "$IOTAP" report $A $Bt --phase write
expect 1 "$T/none.iotap" "$IOTAP" report $A $T/none.iotap
exit 0
