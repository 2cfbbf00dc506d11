#!/bin/bash
# SPDX-License-Identifier: MIT
# stress-ng: filesystem stressors through the mount (hdd with verify, dir,
# rename, link, seek), zero failures, and a readable trace afterwards.
. "$(dirname "$0")/lib.sh"
need_fuse
command -v stress-ng >/dev/null || skip "stress-ng not installed"
TR=$T/stress.iotap
iotap_mount "$BACKING" "$MNT" --trace "$TR"
chmod 1777 "$MNT"
cd "$MNT" || fail "cd"
# all five stressors at once, one run of 6 s: they also meet each other on
# the mount (and the suite's time is spent once, not five times)
s="--hdd 2 --hdd-bytes 16M --verify --dir 2 --rename 2 --link 2 --symlink 1 --seek 2 --seek-size 16M"
stress-ng $s --timeout 6s --temp-path "$MNT" --metrics-brief > $T/sng.out 2>&1
rc=$?
[ $rc -eq 0 ] || { cat $T/sng.out; fail "stress-ng $s exited $rc"; }
grep -E "failed: [1-9]|FAILED" $T/sng.out && fail "stress-ng reported failures"
for w in hdd dir rename link symlink seek; do	# each did some work
	awk -v w=$w '$2 == "metrc:" && $4 == w && $5 ~ /^[0-9]+$/ && $5 > 0 { ok = 1 } END { exit !ok }' \
		$T/sng.out || { cat $T/sng.out; fail "stress-ng's $w did no work"; }
done
cd /
iotap_umount "$MNT"
"$IOTAP" info --strict "$TR" > $T/info.txt || { cat $T/info.txt; fail "info --strict"; }
exit 0
