#!/bin/bash
# SPDX-License-Identifier: MIT
# ctl-trace-perm: who may read the traces of `iotap run` (every model,
# pgsql and dedup included) and `iotap replay`. Without options they are 0600 whatever the umask (user nobody
# cannot read them); --trace-mode 0640 --trace-group GROUP (the parser
# mount uses) gives each finished file that mode and group, every file of
# a several-target run too, and then a member of GROUP reads it while
# others still cannot; a bad mode, an unknown group, or either without
# --trace are usage errors (exit 2) that leave nothing behind.
# TIMEOUT: 60
. "$(dirname "$0")/lib.sh"
command -v setpriv >/dev/null || skip "setpriv not installed"
U=$(id -u nobody 2>/dev/null) || skip "no user nobody"
[ "$(id -u)" -eq 0 ] || skip "needs root (chgrp to another group, setpriv)"
G=$(getent group daemon | cut -d: -f3) || skip "no group daemon"
[ -n "$G" ] || skip "no group daemon"
chmod 0755 $T
mkdir $T/d1 $T/d2 $T/r1 $T/r2 $T/tr
chmod 0755 $T/tr
umask 022
mode() { stat -c %a "$1"; }
group() { stat -c %g "$1"; }
reads_as() { setpriv --reuid=$U --regid=$1 --groups=$1 cat "$2" >/dev/null 2>&1; }

check "run dd" "$IOTAP" run dd $T/d1 --bs 4k --count 16 --write --trace $T/tr/plain.iotap -q
expect_eq "default mode of a run trace" "$(mode $T/tr/plain.iotap)" 600
reads_as $G $T/tr/plain.iotap && fail "a 0600 run trace is readable by others"

check "run dd, shared" "$IOTAP" run dd $T/d1 $T/d2 --bs 4k --count 16 --write \
	--trace $T/tr/shared.iotap --trace-mode 0640 --trace-group daemon -q
for f in $T/tr/shared.1.iotap $T/tr/shared.2.iotap; do
	expect_eq "mode of $f" "$(mode $f)" 640
	expect_eq "group of $f" "$(group $f)" $G
	reads_as $G $f || fail "a member of the group cannot read $f"
	reads_as 65534 $f && fail "a non-member reads $f"
	check "$f is clean" "$IOTAP" info --strict $f
done

check "replay" "$IOTAP" replay $T/tr/plain.iotap $T/r1 --prepare --trace $T/tr/rp.iotap -q >/dev/null
expect_eq "default mode of a replay trace" "$(mode $T/tr/rp.iotap)" 600
check "replay, shared" "$IOTAP" replay $T/tr/plain.iotap $T/r2 --prepare \
	--trace $T/tr/rp2.iotap --trace-mode 0644 --trace-group $G -q >/dev/null
expect_eq "mode of the replay's trace" "$(mode $T/tr/rp2.iotap)" 644
expect_eq "group of the replay's trace" "$(group $T/tr/rp2.iotap)" $G
reads_as 65534 $T/tr/rp2.iotap || fail "a 0644 trace is not readable"

# the application models take the same options
mkdir $T/pg $T/dd
check "run pgsql, shared" "$IOTAP" run pgsql $T/pg -s 1 -c 1 -T 1 --warmup 0 \
	--trace $T/tr/pg.iotap --trace-mode 0640 --trace-group daemon -q
check "run dedup, shared" "$IOTAP" run dedup $T/dd --image-size 8M --generations 2 \
	--trace $T/tr/dd.iotap --trace-mode 0640 --trace-group daemon -q
for f in $T/tr/pg.iotap $T/tr/dd.iotap; do
	expect_eq "mode of $f" "$(mode $f)" 640
	expect_eq "group of $f" "$(group $f)" $G
	reads_as 65534 $f && fail "a non-member reads $f"
done
expect 2 "need --trace" "$IOTAP" run pgsql $T/pg --trace-group daemon
expect 2 "need --trace" "$IOTAP" run dedup $T/dd --trace-mode 0640

expect 2 "--trace-mode wants octal" "$IOTAP" run dd $T/d1 --bs 4k --count 1 --write \
	--trace $T/tr/bad.iotap --trace-mode 0777
expect 2 "no group" "$IOTAP" run dd $T/d1 --bs 4k --count 1 --write \
	--trace $T/tr/bad.iotap --trace-group no-such-group-xyz
expect 2 "need --trace" "$IOTAP" run dd $T/d1 --bs 4k --count 1 --write --trace-mode 0640
expect 2 "--trace-mode wants octal" "$IOTAP" replay $T/tr/plain.iotap $T/r1 \
	--trace $T/tr/bad.iotap --trace-mode 0700
expect 2 "need --trace" "$IOTAP" replay $T/tr/plain.iotap $T/r1 --trace-group daemon
[ -e $T/tr/bad.iotap ] && fail "a refused command left a trace"
exit 0
