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
for s in "--hdd 2 --hdd-bytes 16M --verify" "--dir 2" "--rename 2" "--link 2 --symlink 1" \
	 "--seek 2 --seek-size 16M"; do
	stress-ng $s --timeout 4s --temp-path "$MNT" --metrics-brief > $T/sng.out 2>&1
	rc=$?
	[ $rc -eq 0 ] || { cat $T/sng.out; fail "stress-ng $s exited $rc"; }
	grep -qi "fail" $T/sng.out && grep -E "failed: [1-9]|FAILED" $T/sng.out && fail "stress-ng $s reported failures"
done
cd /
iotap_umount "$MNT"
"$IOTAP" info --strict "$TR" > $T/info.txt || { cat $T/info.txt; fail "info --strict"; }
exit 0
