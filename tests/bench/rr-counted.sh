#!/bin/bash
# SPDX-License-Identifier: MIT
# rr-counted.sh FILE THREADS SECONDS r|w - the transport bundle's rr, with
# what each request cost the FUSE daemon serving FILE
#
# many-core.sh puts this in the bundle as bin/rr (the real one becomes
# bin/rr.real), so that the bundle's bench.sh, unchanged, counts every run
# it makes. It runs rr.real with the same arguments and prints what it
# prints (the IOPS bench.sh records), then appends one line to $RR_COUNTS
# (default /dev/null) -- for the daemon serving the mount (iotap mount or
# passthrough_hp from the same bundle; none for raw), over the run, per
# request (IOPS x the run's seconds):
#   cfg      the daemon's configuration, read from its command line
#   cpu_us   its CPU time, all threads (/proc/PID/stat: exited ones too)
#   vol inv  its voluntary and involuntary context switches (the threads
#            alive at both ends: /proc/PID/task/*/status)
#   thr      its threads; busiest: the busiest one's CPU, % of the run;
#            active: its threads that ran 1% of the run or more (at one
#            application thread: how many queues its requests went to)
#   mig      its migrations (/proc/PID/task/*/sched, se.nr_migrations)
#   rr_us    rr's own CPU time (the application side of the round trip)
#   rr_mig   rr's migrations, read SECONDS - 0.5 s into its run (they are
#            gone with it) and divided by the requests until then: a woken
#            application put on another CPU, whose queue then serves its
#            next request (BENCHMARKS.md, issue 24, sessions 11 and 21)
# Only /proc and bash: the many-core host has nothing else (no perf, fio).
# On the issue 24 host these say where 16 threads' requests go: more CPU a
# request, more sleeps and wake-ups a request, or a thread at 100%.
set -u
B=$(cd "$(dirname "$0")" && pwd)
OUTF=${RR_COUNTS:-/dev/null}

# daemon PID for this bundle (the newest), or nothing
daemon() { pgrep -n -f "$B/(iotap mount|passthrough_hp) " 2>/dev/null; }
# cfg of PID, the names of the bundle's bench.sh
cfg_of() {
	local a
	a=$(tr '\0' ' ' < /proc/$1/cmdline 2>/dev/null)
	case $a in
	*passthrough_hp*--nopassthrough*io_uring*) echo hp-uring ;;
	*passthrough_hp*--nopassthrough*) echo hp-dev ;;
	*passthrough_hp*) echo hp-passthrough ;;
	*"--transport dev"*) echo iotap-dev ;;
	*uring_spin=0*) echo iotap-uring-nospin ;;
	*--trace*) echo iotap-uring ;;
	*) echo iotap-uring-untraced ;;
	esac
}
# PID: "TICKS" (utime + stime of every thread, exited ones too)
ticks() { awk '{ sub(/.*\) /, ""); print $12 + $13 }' /proc/$1/stat 2>/dev/null; }
# PID: one line "TID NS VOL INV MIG" a thread
threads() {
	local t tid ns vol inv mig k v
	for t in /proc/$1/task/*; do
		tid=${t##*/}
		read -r ns _ < $t/schedstat 2>/dev/null || continue
		vol=0 inv=0
		while read -r k v; do
			case $k in
			voluntary_ctxt_switches:) vol=$v ;;
			nonvoluntary_ctxt_switches:) inv=$v ;;
			esac
		done < $t/status 2>/dev/null
		mig=$(migrations $t)
		echo "$tid $ns $vol $inv ${mig/-/0}"
	done
}
# TASKDIR...: their se.nr_migrations summed (tests/bench/uring-counts.sh's
# tsum; this file goes into the bundle alone), "-" where the kernel shows
# none (no CONFIG_SCHED_DEBUG)
migrations() {
	local t
	for t in "$@"; do cat "$t/sched"; done 2>/dev/null |
		awk '$1 == "se.nr_migrations" { s += $3; n++ } END { if (n) print s; else print "-" }'
}

F=${TMPDIR:-/tmp}/rr-counted.$$	# F: the threads before; F.out, F.err, F.time: rr's
pid=$(daemon)
[ -n "$pid" ] && { t0=$(ticks $pid); threads $pid > "$F"; }
s0=$(date +%s.%N)
TIMEFORMAT='%3U %3S'
{ time "$B/rr.real" "$@" > "$F.out" 2> "$F.err"; } 2> "$F.time" &
bg=$!
# rr's migrations, all its threads, half a second before it ends
rmig=- rt=0
snap=$(awk -v s="$3" 'BEGIN { printf "%.3f", (s > 1 ? s - 0.5 : s / 2) }')
sleep "$snap"
rpid=$(pgrep -n -f "^$B/rr.real " 2>/dev/null)
[ -z "$rpid" ] || { rt=$(date +%s.%N); rmig=$(migrations /proc/$rpid/task/*); }
wait $bg
rc=$?
s1=$(date +%s.%N)
cat "$F.out"
cat "$F.err" >&2
iops=$(tail -1 "$F.out")
read -r ru rs < "$F.time"
if [ -n "$pid" ] && [ -e /proc/$pid ] && [ "$rc" -eq 0 ]; then
	t1=$(ticks $pid)
	threads $pid | awk -v hz="$(getconf CLK_TCK)" -v t0="$t0" -v t1="$t1" -v s0="$s0" -v s1="$s1" \
		-v iops="$iops" -v ru="$ru" -v rs="$rs" -v cfg="$(cfg_of $pid)" -v jobs="$2" -v rw="$4" \
		-v rmig="$rmig" -v rt="$rt" '
		FNR == NR { ns[$1] = $2; vo[$1] = $3; iv[$1] = $4; mg[$1] = $5; next }
		($1 in ns) {
			d = $2 - ns[$1]; if (d > top) top = d
			if (d >= (s1 - s0) * 1e7) act++
			vol += $3 - vo[$1]; inv += $4 - iv[$1]; mig += $5 - mg[$1]
		}
		{ n++ }
		END {
			wall = s1 - s0; req = iops * wall
			if (req < 1) exit
			rm = rmig == "-" || rt <= s0 ? "-" : sprintf("%.3f", rmig / (iops * (rt - s0)))
			printf "cfg=%s jobs=%s rw=%s iops=%s cpu_us=%.2f vol=%.3f inv=%.3f mig=%.3f thr=%d active=%d busiest=%.0f%% rr_us=%.2f rr_mig=%s\n",
				cfg, jobs, rw, iops,
				(t1 - t0) / hz * 1e6 / req, vol / req, inv / req, mig / req, n, act,
				top / 1e9 / wall * 100, (ru + rs) * 1e6 / req, rm
		}' "$F" - >> "$OUTF"
fi
rm -f "$F" "$F".{out,err,time}
exit $rc
