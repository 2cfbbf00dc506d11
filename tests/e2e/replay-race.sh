#!/bin/bash
# SPDX-License-Identifier: MIT
# replay-race: cross-process dependencies of a real capture. A producer
# process creates files one by one (and renames each into place); a
# consumer process polls for each name (its lookups fail until the rename
# lands), then opens and reads the file, and a third process deletes what
# was read. Replayed 20 times as fast as possible into fresh directories:
# every replay has the capture's results exactly, so not one ENOENT where
# the capture succeeded, nor one success where its lookup failed.
# (tests/unit/test_replay.c replays a synthetic create->open trace 100
# times.)
# TIMEOUT: 180
. "$(dirname "$0")/lib.sh"
need_fuse
TR=$T/race.iotap
N=150

iotap_mount "$BACKING" "$MNT" --trace "$TR"
mkdir "$MNT/q" || fail "mkdir"
(
	for i in $(seq $N); do
		head -c $((i * 97)) /dev/zero > "$MNT/q/.tmp$i" && mv "$MNT/q/.tmp$i" "$MNT/q/f$i"
	done
) &
prod=$!
(
	for i in $(seq $N); do
		while [ ! -e "$MNT/q/f$i" ]; do :; done
		cat "$MNT/q/f$i" > /dev/null
		echo "$i" > "$T/done.$i"
	done
) &
cons=$!
(
	for i in $(seq $N); do
		while [ ! -e "$T/done.$i" ]; do sleep 0.001; done
		rm "$MNT/q/f$i"
	done
) &
del=$!
wait $prod $cons $del || fail "workload"
iotap_umount "$MNT"
"$IOTAP" info --strict "$TR" > "$T/info.txt" || { cat "$T/info.txt"; fail "info"; }
failed_lookups=$("$IOTAP" dump "$TR" --op lookup | grep -c ENOENT)
note "capture: $(grep '^records' "$T/info.txt"), $failed_lookups failed lookups"

for i in $(seq 20); do
	mkdir "$T/r"
	"$IOTAP" replay "$TR" "$T/r" --timing asap --json -q > "$T/r.json" 2> "$T/r.err" ||
		{ cat "$T/r.err"; fail "replay $i"; }
	python3 - "$T/r.json" "$i" <<'PY' || { cat "$T/r.err"; fail "replay $i differs"; }
import json, sys
r = json.load(open(sys.argv[1]))
if r["differences"] or r["unreplayable"]:
    sys.exit("replay %s: %d differences: %s" % (sys.argv[2], r["differences"], r["examples"]))
PY
	rm -rf "$T/r"
done
note "20 replays, $(python3 -c "import json; r=json.load(open('$T/r.json')); print(r['ops'], 'ops,', r['replay_threads'], 'threads,', r['dep_waits'], 'waits')") each: no difference"
exit 0
