#!/bin/bash
# SPDX-License-Identifier: MIT
# many-core.sh DIR - issue 24's and issue 26's many-core runs, one after the other
#
# On this host, from the source tree after a build:
#   ../shared/bench-bundle/pack.sh DIR build/tools/iotap PASSTHROUGH_HP
#   tests/bench/report-bundle.sh DIR/report
# then on the many-core host, as root, in a copy of the tree with DIR:
#   OUT=RESULTS bash tests/bench/many-core.sh DIR
#
# 1. The transport (issue 24): DIR/bench.sh -- 8 KiB random pread and pwrite
#    on one 1 GiB tmpfs file at FS_JOBS threads (default "1 4 16"), raw,
#    iotap over /dev/fuse and io_uring (traced, untraced, and traced with
#    -o uring_spin=0: the spin hypothesis of BENCHMARKS.md, issue 24,
#    session 11, added to the bundle's bench.sh here), passthrough_hp over
#    /dev/fuse and io_uring, FS_ROUNDS rounds (default 2) of FS_SECS
#    (default 3) interleaved. Results in OUT/fs/results.txt, and each
#    daemon's log of the last round (iotap's: requests served, waits spun
#    and caught, helpers) in OUT/fs/CONFIG.log. Each run counted
#    (rr-counted.sh, put in as the bundle's bin/rr; COUNTS=0: not): the
#    daemon's CPU, context switches, migrations and threads per request,
#    and rr's CPU and migrations, in OUT/fs/counts.txt -- what issue 24
#    asks to compare at 16 threads.
# 2. The report (issue 26): DIR/report/run.sh -- report-threads.sh on a
#    REPORT_RECORDS-record synthetic trace (default 100000000, written to
#    TRACE_DIR, default /var/tmp: about 115 MB) at REPORT_THREADS (default
#    "1 2 4 8 16"), REPORT_ROUNDS rounds (default 3), with CONTROL=1 (N
#    one-pass reports at once: the host's own ceiling). Output in
#    OUT/report-threads.txt.
# Each part runs under a time limit (FS_LIMIT, REPORT_LIMIT seconds,
# defaults 330 and 200) so that one that hangs leaves the other its time
# and both end within a device call's 10 minutes: the transport part takes
# about 4.5 minutes (252 s of runs), the report's about 1.5 (report-synth
# wrote the 100 M records in 6.5 s on the 2-CPU VM).
set -u
D=${1:?usage: many-core.sh DIR (made by pack.sh and report-bundle.sh)}
D=$(cd "$D" && pwd) || exit 1
OUT=${OUT:-/tmp/many-core}
mkdir -p "$OUT/fs"
echo "# $(date -u '+%F %T UTC'), $(uname -r), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)" |
	tee "$OUT/host.txt"
rc=0
# bench.sh stopped by its time limit leaves its mount, daemons and tmpfs,
# and enable_uring as it set it: take them back before the report runs
W=${WORK:-/var/tmp/iotap-bench} P=/sys/module/fuse/parameters/enable_uring
uring_old=$(cat $P 2>/dev/null)
fs_cleanup() {
	pkill -f "$D/bin/rr(.real)? " 2>/dev/null
	pkill -f "$D/bin/iotap mount" 2>/dev/null
	pkill -f "$D/bin/passthrough_hp" 2>/dev/null
	sleep 1
	umount "$W/mnt" 2>/dev/null || umount -l "$W/mnt" 2>/dev/null
	umount "$W/back" 2>/dev/null || umount -l "$W/back" 2>/dev/null
	[ -z "$uring_old" ] || echo "$uring_old" > $P 2>/dev/null
}
if [ -x "$D/bin/rr" ]; then
	# the counting rr in, this tree's (or the bundle's own rr back: COUNTS=0)
	if [ "${COUNTS:-1}" = 1 ]; then
		[ -e "$D/bin/rr.real" ] || mv "$D/bin/rr" "$D/bin/rr.real"
		cp "$(dirname "$0")/rr-counted.sh" "$D/bin/rr" && chmod +x "$D/bin/rr"
	elif [ -e "$D/bin/rr.real" ]; then
		mv "$D/bin/rr.real" "$D/bin/rr"
	fi
	grep -q 'iotap-uring-nospin)' "$D/bench.sh" ||
		sed -i '/^\tiotap-uring) /{p;s/^\tiotap-uring) /\tiotap-uring-nospin) /;s/--transport uring/--transport uring -o uring_spin=0/}' \
			"$D/bench.sh"
	: > "$OUT/fs/counts.txt"	# rr-counted.sh appends: this run's only
	RR_COUNTS=$OUT/fs/counts.txt OUT=$OUT/fs JOBS=${FS_JOBS:-1 4 16} ROUNDS=${FS_ROUNDS:-2} SECS=${FS_SECS:-3} \
		CFGS="raw iotap-dev iotap-uring iotap-uring-nospin iotap-uring-untraced hp-dev hp-uring" \
		timeout "${FS_LIMIT:-330}" bash "$D/bench.sh" ||
		{ echo "# the transport run failed or ran out of time" >&2; rc=1; fs_cleanup; }
	cp "$W"/*.log "$OUT/fs/" 2>/dev/null
else
	echo "# no transport bundle in $D (pack.sh)" >&2
	rc=1
fi
if [ -f "$D/report/run.sh" ]; then
	OUT=$OUT THREADS=${REPORT_THREADS:-1 2 4 8 16} RECORDS=${REPORT_RECORDS:-100000000} \
		ROUNDS=${REPORT_ROUNDS:-3} CONTROL=1 \
		timeout "${REPORT_LIMIT:-200}" bash "$D/report/run.sh" "${TRACE_DIR:-/var/tmp}" ||
		{ echo "# the report run failed or ran out of time" >&2; rc=1; }
else
	echo "# no report bundle in $D/report (report-bundle.sh)" >&2
	rc=1
fi
exit $rc
