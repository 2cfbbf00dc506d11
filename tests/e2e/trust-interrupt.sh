#!/bin/bash
# SPDX-License-Identifier: MIT
# trust-interrupt: a second interrupt still cleans up (issue 14 item 3).
#
# `timeout -s INT 2 iotap run bonnie D ...` signals iotap, then its whole
# process group: two SIGINTs. Each time: partial results are printed,
# no Bonnie.NNNNN is left in D, and the trace ends with its END record
# (`iotap info --strict`). The same for two SIGINTs sent 50 ms apart
# (the second after the handler has run once), for SIGINT then SIGTERM,
# and for replay (exit 130, its own trace closed). No FUSE needed.
. "$(dirname "$0")/lib.sh"
[ -x "$IOTAP" ] || fail "no iotap binary at $IOTAP"
command -v timeout >/dev/null || skip "needs timeout (coreutils)"
D=$T/d
mkdir $D

# after_stop N: the checks every interrupted run must pass
after_stop() {
	local n=$1
	[ -z "$(ls -A $D)" ] || { ls -la $D; fail "run $n: files left in D: $(ls $D)"; }
	grep -q "partial results" $T/out$n || { cat $T/out$n $T/err$n; fail "run $n: no partial results"; }
	grep -q "files removed, traces closed" $T/err$n || { cat $T/err$n; fail "run $n: no cleanup message"; }
	"$IOTAP" info --strict $T/t$n.iotap > $T/info$n 2>&1 ||
		{ cat $T/err$n $T/info$n; fail "run $n: the trace is not complete (no END record?)"; }
}

# exactly the reported pattern, several times
for n in 1 2 3 4 5; do
	timeout -s INT 2 "$IOTAP" run bonnie $D -s 300M -n 1 -r 100 --trace $T/t$n.iotap \
		> $T/out$n 2> $T/err$n
	rc=$?
	[ $rc -eq 124 ] || { cat $T/err$n; fail "run $n: timeout exited $rc (iotap killed by a signal?), want 124"; }
	after_stop $n
done

# two signals 50 ms apart: the second arrives while the first is being handled
for sig2 in INT TERM; do
	n=2$sig2
	"$IOTAP" run bonnie $D -s 300M -n 1 -r 100 --trace $T/t$n.iotap > $T/out$n 2> $T/err$n &
	pid=$!
	sleep 1
	kill -INT $pid
	sleep 0.05
	kill -$sig2 $pid
	wait $pid
	rc=$?
	expect_eq "run $n: exit status" $rc 130
	after_stop $n
done

# dedup: the same double signal, its store removed
for n in d1 d2 d3; do
	"$IOTAP" run dedup $D --image-size 256M --streams 2 --trace $T/t$n.iotap -q \
		> $T/out$n 2> $T/err$n &
	pid=$!
	sleep 1
	kill -INT $pid
	sleep 0.05
	kill -INT $pid
	wait $pid
	rc=$?
	expect_eq "dedup $n: exit status" $rc 130
	[ -z "$(ls -A $D)" ] || { ls -la $D; fail "dedup $n: files left in D: $(ls $D)"; }
	grep -q "files removed, traces closed" $T/err$n || { cat $T/err$n; fail "dedup $n: no cleanup message"; }
	"$IOTAP" info --strict $T/t$n.iotap > $T/info$n 2>&1 ||
		{ cat $T/err$n $T/info$n; fail "dedup $n: the trace is not complete"; }
done

# replay: the same double signal; its summary and its own trace are written
for n in 1 2 3; do
	rm -rf $T/r $T/r.iotap
	mkdir $T/r
	# ten times slower than recorded, so that it is still running when signalled
	"$IOTAP" replay $T/t1.iotap $T/r --prepare --timing scale=0.1 --trace $T/r.iotap \
		> $T/out.r 2> $T/err.r &
	pid=$!
	# its own trace appears once the replay runs, with the handlers in place
	i=0
	while [ ! -e $T/r.iotap ] && [ $i -lt 200 ]; do sleep 0.1; i=$((i + 1)); done
	sleep 0.3
	kill -INT $pid
	sleep 0.05
	kill -INT $pid
	wait $pid
	rc=$?
	[ $rc -eq 130 ] || { cat $T/err.r; fail "replay $n: exit status $rc, want 130"; }
	grep -q "interrupted" $T/out.r || { cat $T/out.r $T/err.r; fail "replay $n: no summary saying interrupted"; }
	"$IOTAP" info --strict $T/r.iotap > $T/info.r 2>&1 ||
		{ cat $T/err.r $T/info.r; fail "replay $n: its trace is not complete"; }
done

echo "trust-interrupt: ok"
