#!/bin/bash
# SPDX-License-Identifier: MIT
# trust-silent: no failure goes unsaid (issue 9's fix list, issue 14).
#
#   - syncfs(2) failing (an EIO from writeback, injected with
#     tests/e2e/failsys.c) fails bonnie's create and delete tests, whose
#     timing includes it, and `replay --prepare`, which otherwise says the
#     state was built: exit 1, the message names syncfs;
#   - --drop-caches that cannot drop (a read-only /proc/sys, in a private
#     mount namespace: nothing is dropped) warns, naming the reason, that
#     the run measures the page cache.
. "$(dirname "$0")/lib.sh"
[ -x "$IOTAP" ] || fail "no iotap binary at $IOTAP"
FAILSYS=${IOTAP_FAILSYS:-${IOTAP_BUILD:-$(cd "$(dirname "$0")/../.." && pwd)/build}/tests/failsys.so}
[ -f "$FAILSYS" ] || skip "no failsys.so at $FAILSYS (build the tests)"
D=$T/d
mkdir $D

# --- syncfs -------------------------------------------------------------------
LD_PRELOAD=$FAILSYS IOTAP_FAIL_SYNCFS=5 "$IOTAP" run bonnie $D -s 0 -n 1 -r 8 -q \
	> $T/out 2> $T/err
rc=$?
[ $rc -eq 1 ] || { cat $T/out $T/err; fail "bonnie with a failing syncfs exited $rc, want 1"; }
grep -q "syncfs.*Input/output error" $T/err || { cat $T/err; fail "bonnie: the syncfs error is not said"; }
[ -z "$(ls -A $D)" ] || fail "bonnie left files after the syncfs failure: $(ls $D)"

mkdir $T/src
check "dd trace" "$IOTAP" run dd $T/src --bs 64k --count 4 --trace $T/dd.iotap -q
mkdir $T/r
LD_PRELOAD=$FAILSYS IOTAP_FAIL_SYNCFS=5 "$IOTAP" replay $T/dd.iotap $T/r --prepare-only \
	> $T/out 2> $T/err
rc=$?
[ $rc -eq 1 ] || { cat $T/err; fail "replay --prepare-only with a failing syncfs exited $rc, want 1"; }
grep -q "syncfs.*Input/output error" $T/err || { cat $T/err; fail "replay: the syncfs error is not said"; }
grep -q "initial state built" $T/err && { cat $T/err; fail "replay says the state was built"; }

# --- --drop-caches ----------------------------------------------------------------
if [ "$(id -u)" -eq 0 ] && command -v unshare >/dev/null &&
   unshare -m true 2>/dev/null; then
	unshare -m sh -c 'mount --bind /proc/sys /proc/sys &&
		mount -o remount,bind,ro /proc/sys && exec "$@"' sh \
		"$IOTAP" run dd $D --bs 64k --count 4 --drop-caches -q > $T/out 2> $T/err
	rc=$?
	[ $rc -eq 0 ] || { cat $T/err; fail "dd --drop-caches with a read-only /proc/sys exited $rc"; }
	grep -q "warning: .*drop-caches.*Read-only file system.*page cache" $T/err ||
		{ cat $T/err; fail "--drop-caches failed without a warning naming the reason"; }
else
	note "no private mount namespace: the --drop-caches case is skipped"
fi

echo "trust-silent: ok"
