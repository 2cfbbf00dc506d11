#!/bin/bash
# SPDX-License-Identifier: MIT
# fs-bench.sh - what iotap's capture mount costs, measured against the raw
# backing directory and against libfuse's reference passthrough_ll
#
# usage: tests/bench/fs-bench.sh [--quick] [--markdown] [--rounds N] [--size S]
#                                [--runtime S] [options]   (--help for all)
#
# Configurations (each mounted fresh for every job run, foreground daemon in
# the background, unmounted with fusermount3 -u):
#   direct mode: raw           the backing directory itself, no FUSE
#                iotap         iotap mount B M -f --transport dev (no trace)
#                iotap-trace   iotap mount B M -f --transport dev --trace T
#                iotap-stopped iotap mount B M -f --transport dev --trace T, then
#                              `iotap trace M stop` (traced, then stopped)
#                iotap-started iotap mount B M -f --transport dev, then
#                              `iotap trace M start T` (traced from live)
#                iotap-uring   iotap mount B M -f --transport uring (no trace)
#                iotap-uring-trace  iotap mount B M -f --transport uring --trace T
#                iotap-uring-trace-nospin  the same with -o uring_spin=0 (a
#                              ring thread sleeps at once between requests)
#                iotap-uring-trace-libfuse  the same with -o uring_direct=0 (READ
#                              and WRITE through libfuse's request path, as
#                              before session 13's direct path)
#                base-trace    iotap-trace run by --baseline BIN
#                base-uring-trace  iotap-uring-trace run by --baseline BIN (an
#                              older build: before and after in one run)
#                ptll          passthrough_ll -o source=B,cache=never
#                hp-dev        passthrough_hp --nopassthrough --direct-io B M
#                hp-uring      the same with -o io_uring (libfuse's own FUSE over
#                              io_uring: one ring thread per CPU, no spin)
#   (the uring configs need the fuse module's enable_uring: the script
#   turns it on for the run and puts the old value back on exit; where the
#   kernel has no such parameter they are left out)
#   cache mode:  iotap-cache        iotap mount B M -f --cache
#                iotap-cache-trace  iotap mount B M -f --cache --trace T
#                iotap-uring-cache-trace  the same over --transport uring
#                ptll-cache         passthrough_ll -o source=B,cache=always,writeback
#                ptll-cache-same    the same with iotap's own mount options:
#                                   xattr,allow_other,default_permissions
# passthrough_ll is compiled at run time from libfuse3-dev's example source
# into a temp dir that is removed on exit (it is never part of the tree).
# passthrough_hp needs libfuse 3.18 or later with io_uring, which distributions
# do not ship yet: build libfuse's own source outside the tree (meson, with
# -Denable-io-uring=true) and give its example/passthrough_hp in
# $PASSTHROUGH_HP (or --hp PATH); without it the hp configs are left out.
#
# Jobs (fio, psync engine, buffered I/O, JSON output parsed with python3):
#   seqwrite   sequential write 1 MiB, --size, end_fsync=1        MB/s
#   seqread    sequential read 1 MiB of a --size file, caches dropped first  MB/s
#   randread   random read 8 KiB, time-based                      IOPS
#   randwrite  random write 8 KiB, fdatasync=1, time-based        IOPS
#   randread4  random read 8 KiB, 4 jobs, group_reporting          IOPS
#   randwrite4 random write 8 KiB, 4 jobs, group_reporting (no fsync) IOPS
#   rread      random read 8 KiB, N jobs for each N of --threads    IOPS
#   rwrite     random write 8 KiB (no fsync), N jobs for each N     IOPS
#              (the thread axis: jobs rread-tN and rwrite-tN; not in the
#              default job list, --jobs rread,rwrite)
#   fsyncmix   randread4 while a fifth job writes 1 MiB + fsync each:
#              the randread IOPS, i.e. whether a slow fsync holding a
#              request slot caps the other jobs' queue depth      IOPS
#   meta       create/stat/unlink loop (metaloop helper)           ops/s
#
# The VMs this runs on have 2 cores and noisy neighbours, so a single
# config-after-config pass would mostly measure drift. Each round runs every
# job on every config back to back (configs round-robin, the starting config
# rotated per round), and every figure is reported as a median over rounds
# together with its ratio to raw *in the same round*.
#
# ptll-cache-same is the like-for-like reference for --cache. iotap, as root,
# mounts with allow_other,default_permissions (any user may use the mount, the
# kernel checks permissions) and serves xattrs; plain passthrough_ll does
# neither. default_permissions costs a GETATTR of the parent directory after
# every create and unlink (the kernel drops the directory's attributes and
# needs them for the next permission check); xattr support used to cost a
# getxattr(security.capability) per write(2), which iotap now avoids with
# HANDLE_KILLPRIV_V2 (fs/wire.c). ptll-cache keeps the issue's own
# comparison; ptll-cache-same shows what the mount options account for.
#
# For the traced configs it also reports trace bytes per op (trace file size
# / OP records from `iotap info`) for the 1 MiB and the 8 KiB jobs, and the
# daemon's peak RSS (VmHWM just before unmount) for a short and a long run,
# which must be about equal: the recorder must not grow with trace length.
#
# Exit status: 0 done, 1 error or a failed mount/job (the report is still
# printed), 77 skipped (no FUSE), as meson expects.

set -u

# ---------------------------------------------------------------- defaults
SRC_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$SRC_DIR/../.." && pwd)
CMDLINE="$0"
for a in "$@"; do CMDLINE+=" $(printf '%q' "$a")"; done

SIZE=1G            # seq file
RAND_SIZE=256M     # file for the 8 KiB random jobs
RUNTIME=5          # seconds, time-based jobs and metaloop
ROUNDS=3
FILES=1000         # metaloop files per pass (passthrough_ll pins an fd per inode)
RSS_SHORT=5        # seconds of the short and the long RSS run
RSS_LONG=40
RSS=1
MARKDOWN=0
KEEP=0
BASE=/var/tmp      # local disk, not tmpfs: the backing store must be real
OUT=""
REPORT_DIR=""
IOTAP=${IOTAP:-}
BASELINE=""
METALOOP=${METALOOP:-}
PTLL_SRC=/usr/share/doc/libfuse3-dev/examples/passthrough_ll.c
HP=${PASSTHROUGH_HP:-}
ALL_CONFIGS="raw iotap iotap-trace iotap-stopped iotap-started iotap-uring iotap-uring-trace iotap-uring-trace-nospin iotap-uring-trace-libfuse base-trace base-uring-trace ptll hp-dev hp-uring iotap-cache iotap-cache-trace iotap-uring-cache-trace ptll-cache ptll-cache-same"
ALL_JOBS="seqwrite seqread randread randread4 randwrite randwrite4 fsyncmix meta rread rwrite"
DEFAULT_JOBS="seqwrite seqread randread randread4 randwrite randwrite4 fsyncmix meta"
THREADS="1 2 4"    # rread/rwrite thread counts
CONFIGS=""
JOBS=""

# ------------------------------------------------------------ state for trap
WORK=""            # per-run directory under $BASE
PTLL_DIR=""        # temp dir holding the compiled passthrough_ll
MNT=""
DAEMON_PID=""      # daemon of the current mount, if any
BG_PIDS=""         # helpers started in the background (RSS runs)
FAILED_CFGS=""     # configs whose mount failed; skipped from then on
URING_OLD=""       # enable_uring before the run, put back on exit

usage() {
	cat <<EOF
usage: $0 [options]

  --quick           ~2-minute smoke run (small sizes, short runtimes, 1 round)
  --rounds N        rounds, each running every job on every config ($ROUNDS)
  --size S          sequential file size, fio syntax ($SIZE)
  --rand-size S     file size for the 8 KiB random jobs ($RAND_SIZE)
  --runtime S       seconds per time-based job and per metaloop run ($RUNTIME)
  --files N         metaloop files per pass ($FILES)
  --rss-runs S,L    seconds of the short and the long peak-RSS run ($RSS_SHORT,$RSS_LONG)
  --no-rss          skip the short/long peak-RSS runs
  --configs LIST    comma-separated subset of: ${ALL_CONFIGS// /,}
                    (raw is always added: every ratio is against it)
  --jobs LIST       comma-separated subset of: ${ALL_JOBS// /,}
  --threads LIST    comma-separated thread counts of rread and rwrite (${THREADS// /,})
  --iotap PATH      iotap binary (default \$IOTAP or build/tools/iotap)
  --baseline PATH   another iotap binary, configs base-trace and base-uring-trace
  --hp PATH         libfuse's passthrough_hp, built with io_uring (default
                    \$PASSTHROUGH_HP; the hp configs are left out without it)
  --dir DIR         where the temporary backing dir goes ($BASE; not tmpfs)
  --out DIR         also keep the raw results (TSV, fio JSON, logs) in DIR
  --keep            keep the work directory (backing files, traces, logs)
  --markdown        print the report as Markdown (for BENCHMARKS.md)
  --report DIR      print the report again from a directory saved with --out
                    (add --markdown for the Markdown form); runs nothing
  -h, --help        this text

Progress goes to stderr, the report to stdout. Needs root (mounts,
drop_caches), fio, python3, fusermount3, cc and pkg-config fuse3.
EOF
}

# squeeze "a  b ": "a b", so lists compare with " $LIST " == *" x "*
squeeze() {
	local -a w
	read -r -a w <<<"$1"
	echo "${w[*]}"
}

die() { echo "fs-bench: $*" >&2; exit 1; }
note() { echo "fs-bench: $*" >&2; }

parse_args() {
	local a
	# --quick only changes defaults, so "--rounds 2 --quick" keeps 2 rounds.
	for a in "$@"; do
		if [ "$a" = --quick ]; then
			SIZE=256M RAND_SIZE=64M RUNTIME=2 ROUNDS=1 FILES=300
			RSS_SHORT=2 RSS_LONG=10
		fi
	done
	while [ $# -gt 0 ]; do
		case $1 in
		--quick) ;;
		--rounds) ROUNDS=${2:?}; shift ;;
		--size) SIZE=${2:?}; shift ;;
		--rand-size) RAND_SIZE=${2:?}; shift ;;
		--runtime) RUNTIME=${2:?}; shift ;;
		--files) FILES=${2:?}; shift ;;
		--rss-runs) RSS_LONG=${2:?}; RSS_SHORT=${2%%,*} RSS_LONG=${2##*,}; shift ;;
		--configs) CONFIGS=${2//,/ }; shift ;;
		--jobs) JOBS=${2//,/ }; shift ;;
		--iotap) IOTAP=${2:?}; shift ;;
		--baseline) BASELINE=${2:?}; shift ;;
		--hp) HP=${2:?}; shift ;;
		--threads) THREADS=${2//,/ }; shift ;;
		--dir) BASE=${2:?}; shift ;;
		--out) OUT=${2:?}; shift ;;
		--keep) KEEP=1 ;;
		--no-rss) RSS=0 ;;
		--markdown) MARKDOWN=1 ;;
		--report) REPORT_DIR=${2:?}; shift ;;
		-h|--help) usage; exit 0 ;;
		*) usage >&2; die "unknown option '$1'" ;;
		esac
		shift
	done
	local n
	for n in "$ROUNDS" "$RUNTIME" "$FILES" "$RSS_SHORT" "$RSS_LONG" $THREADS; do
		[[ $n =~ ^[1-9][0-9]*$ ]] || die "'$n' is not a positive integer"
	done
	local c j
	for c in $CONFIGS; do
		[[ " $ALL_CONFIGS " == *" $c "* ]] || die "unknown config '$c'"
	done
	for j in $JOBS; do
		[[ " $ALL_JOBS " == *" $j "* ]] || die "unknown job '$j'"
	done
	[ -n "$JOBS" ] || JOBS=$DEFAULT_JOBS
	# the thread axis: rread and rwrite once per thread count
	local out="" t
	for j in $JOBS; do
		case $j in
		rread|rwrite) for t in $THREADS; do out+=" $j-t$t"; done ;;
		*) out+=" $j" ;;
		esac
	done
	JOBS=$(squeeze "$out")
	# raw first: it is the baseline every ratio divides by
	[ -n "$CONFIGS" ] || CONFIGS=$ALL_CONFIGS
	CONFIGS=$(squeeze "raw ${CONFIGS//raw/}")
}

# ------------------------------------------------------------- environment

check_env() {
	[ -c /dev/fuse ] || { echo "SKIP: no /dev/fuse" >&2; exit 77; }
	command -v fusermount3 >/dev/null || { echo "SKIP: no fusermount3" >&2; exit 77; }
	local p
	for p in fio python3 cc pkg-config timeout; do
		command -v $p >/dev/null || die "$p is needed"
	done
	[ "$(id -u)" -eq 0 ] || die "needs root (iotap mounts, drop_caches)"
	if [ -z "$IOTAP" ] && [ -x "$REPO/build/tools/iotap" ]; then
		IOTAP=$REPO/build/tools/iotap
	fi
	# Until the daemon builds, the harness still runs raw vs passthrough_ll.
	if [ -z "$IOTAP" ] || [ ! -x "$IOTAP" ]; then
		note "no iotap binary (${IOTAP:-build/tools/iotap}): iotap configs left out"
		drop_configs iotap iotap-trace iotap-uring iotap-uring-trace iotap-uring-trace-nospin iotap-uring-trace-libfuse \
			iotap-cache iotap-cache-trace iotap-uring-cache-trace
	fi
	if [[ " $CONFIGS " == *" base-"* ]] && { [ -z "$BASELINE" ] || [ ! -x "$BASELINE" ]; }; then
		note "no baseline binary (${BASELINE:-set --baseline}): base-trace and base-uring-trace left out"
		drop_configs base-trace base-uring-trace
	fi
	if [[ " $CONFIGS " == *" hp-"* ]] && { [ -z "$HP" ] || [ ! -x "$HP" ]; }; then
		note "no passthrough_hp (${HP:-set \$PASSTHROUGH_HP or --hp}): hp configs left out"
		drop_configs hp-dev hp-uring
	fi
	# FUSE over io_uring: on for the run (restored by cleanup), where the kernel has it
	if [[ " $CONFIGS " == *" iotap-uring"* || " $CONFIGS " == *" hp-uring "* ||
	      " $CONFIGS " == *" base-uring-trace "* ]]; then
		local p=/sys/module/fuse/parameters/enable_uring
		if [ ! -e $p ]; then
			note "this kernel has no FUSE over io_uring ($p): uring configs left out"
			drop_configs iotap-uring iotap-uring-trace iotap-uring-trace-nospin iotap-uring-trace-libfuse iotap-uring-cache-trace \
				base-uring-trace hp-uring
		else
			URING_OLD=$(cat $p)
			echo Y >$p || die "cannot turn on $p"
		fi
	fi
}

drop_configs() {
	local c out=""
	for c in $CONFIGS; do
		[[ " $* " == *" $c "* ]] || out+=" $c"
	done
	CONFIGS=$(squeeze "$out")
}

setup_workdir() {
	[ -d "$BASE" ] || die "no directory '$BASE'"
	# Page-cache and fsync behaviour on tmpfs says nothing about a disk.
	[ "$(stat -f -c %T "$BASE")" != tmpfs ] || die "'$BASE' is tmpfs; use --dir on a local disk"
	WORK=$(mktemp -d "$BASE/iotap-bench.XXXXXX") || die "cannot make a work dir in '$BASE'"
	# /proc/self/mounts escapes blanks; keep the mount check simple.
	[[ $WORK != *[[:space:]]* ]] || die "work dir '$WORK' contains blanks"
	chmod 755 "$WORK"
	mkdir -p "$WORK/backing" "$WORK/mnt" "$WORK/traces" "$WORK/logs" "$WORK/fio"
	MNT=$WORK/mnt
	RESULTS=$WORK/results.tsv
	RSSRES=$WORK/rss.tsv
	printf 'round\tjob\tconfig\tvalue\trss_kb\ttrace_bytes\top_records\tinfo_bpo\tsecs\tstatus\n' >"$RESULTS"
	printf 'config\trun\tsecs\trss_kb\ttrace_bytes\top_records\tstatus\n' >"$RSSRES"
}

# metaloop: from meson ($METALOOP), the build tree, or compiled here.
# passthrough_ll: always compiled here, into a temp dir removed on exit.
build_helpers() {
	if [ -z "$METALOOP" ] && [ -x "$REPO/build/tests/bench/metaloop" ]; then
		METALOOP=$REPO/build/tests/bench/metaloop
	fi
	if [ -z "$METALOOP" ] || [ ! -x "$METALOOP" ]; then
		METALOOP=$WORK/metaloop
		cc -O2 -std=gnu11 -D_GNU_SOURCE -o "$METALOOP" "$SRC_DIR/metaloop.c" ||
			die "cannot compile metaloop.c"
	fi
	if [[ " $CONFIGS " == *" ptll"* ]]; then
		PTLL_DIR=$(mktemp -d "${TMPDIR:-/tmp}/iotap-ptll.XXXXXX")
		PTLL=$PTLL_DIR/passthrough_ll
		# shellcheck disable=SC2046
		if [ ! -r "$PTLL_SRC" ] ||
		   ! cc -O2 -o "$PTLL" "$PTLL_SRC" $(pkg-config --cflags --libs fuse3) \
			>"$WORK/logs/ptll-build.log" 2>&1; then
			note "cannot build $PTLL_SRC (see below): passthrough_ll configs left out"
			cat "$WORK/logs/ptll-build.log" >&2 2>/dev/null
			drop_configs ptll ptll-cache ptll-cache-same
		fi
	fi
}

# ------------------------------------------------------------------ cleanup

is_mounted() {
	awk -v m="$1" '$2 == m && $3 ~ /^fuse/ { f = 1 } END { exit !f }' /proc/self/mounts
}

# Runs on every exit, pass or fail: a mount left behind would hang the next
# run (and anything that walks /var/tmp), a daemon left behind holds its fds.
cleanup() {
	local rc=$? p
	trap - EXIT INT TERM
	for p in $BG_PIDS; do
		kill "$p" 2>/dev/null
	done
	if [ -n "$MNT" ] && is_mounted "$MNT"; then
		fusermount3 -u "$MNT" 2>/dev/null || fusermount3 -uz "$MNT" 2>/dev/null ||
			umount -l "$MNT" 2>/dev/null
	fi
	if [ -n "$DAEMON_PID" ]; then
		kill "$DAEMON_PID" 2>/dev/null
		for _ in $(seq 50); do
			kill -0 "$DAEMON_PID" 2>/dev/null || break
			sleep 0.1
		done
		kill -9 "$DAEMON_PID" 2>/dev/null
	fi
	[ -n "$PTLL_DIR" ] && rm -rf "$PTLL_DIR"
	[ -n "$URING_OLD" ] && echo "$URING_OLD" >/sys/module/fuse/parameters/enable_uring
	if [ -n "$WORK" ]; then
		if [ -n "$OUT" ]; then
			mkdir -p "$OUT/traces" && cp -r "$WORK"/*.tsv "$WORK"/*.txt "$WORK/logs" \
				"$WORK/fio" "$OUT"/ 2>/dev/null
			cp "$WORK"/traces/*.info "$OUT/traces/" 2>/dev/null
		fi
		if [ $KEEP -eq 1 ]; then
			note "kept $WORK"
		else
			rm -rf "$WORK"
		fi
	fi
	exit $rc
}

# -------------------------------------------------------------- mounting

cfg_is_fuse() { [ "$1" != raw ]; }
cfg_is_traced() { [[ $1 == *-trace || $1 == *-trace-nospin || $1 == *-trace-libfuse ]]; }

# mount_cfg CFG TRACE LOG: start CFG's daemon in the foreground, in the
# background, and wait until it shows in /proc/self/mounts. Sets DAEMON_PID.
mount_cfg() {
	local cfg=$1 trace=$2 log=$3 i
	local -a cmd
	case $cfg in
	iotap)              cmd=("$IOTAP" mount "$WORK/backing" "$MNT" -f --transport dev) ;;
	iotap-trace)        cmd=("$IOTAP" mount "$WORK/backing" "$MNT" -f --transport dev --trace "$trace") ;;
	iotap-stopped)      cmd=("$IOTAP" mount "$WORK/backing" "$MNT" -f --transport dev --trace "$WORK/traces/stopped.iotap" --force) ;;
	iotap-started)      cmd=("$IOTAP" mount "$WORK/backing" "$MNT" -f --transport dev) ;;
	iotap-uring)        cmd=("$IOTAP" mount "$WORK/backing" "$MNT" -f --transport uring) ;;
	iotap-uring-trace)  cmd=("$IOTAP" mount "$WORK/backing" "$MNT" -f --transport uring --trace "$trace") ;;
	iotap-uring-trace-nospin) cmd=("$IOTAP" mount "$WORK/backing" "$MNT" -f --transport uring --trace "$trace"
			    -o uring_spin=0) ;;
	iotap-uring-trace-libfuse) cmd=("$IOTAP" mount "$WORK/backing" "$MNT" -f --transport uring --trace "$trace"
			    -o uring_direct=0) ;;
	base-trace)         cmd=("$BASELINE" mount "$WORK/backing" "$MNT" -f --transport dev --trace "$trace") ;;
	base-uring-trace)   cmd=("$BASELINE" mount "$WORK/backing" "$MNT" -f --transport uring --trace "$trace") ;;
	iotap-cache)        cmd=("$IOTAP" mount "$WORK/backing" "$MNT" -f --transport dev --cache) ;;
	iotap-cache-trace)  cmd=("$IOTAP" mount "$WORK/backing" "$MNT" -f --transport dev --cache --trace "$trace") ;;
	iotap-uring-cache-trace) cmd=("$IOTAP" mount "$WORK/backing" "$MNT" -f --transport uring --cache --trace "$trace") ;;
	ptll)               cmd=("$PTLL" -f -o "source=$WORK/backing,cache=never" "$MNT") ;;
	ptll-cache)         cmd=("$PTLL" -f -o "source=$WORK/backing,cache=always,writeback" "$MNT") ;;
	ptll-cache-same)    cmd=("$PTLL" -f -o "source=$WORK/backing,cache=always,writeback,xattr,allow_other,default_permissions" "$MNT") ;;
	hp-dev)             cmd=("$HP" --foreground --nopassthrough --direct-io "$WORK/backing" "$MNT") ;;
	hp-uring)           cmd=("$HP" --foreground --nopassthrough --direct-io -o io_uring "$WORK/backing" "$MNT") ;;
	esac
	! is_mounted "$MNT" || die "$MNT is still mounted from an earlier run"
	echo "+ ${cmd[*]}" >"$log"
	"${cmd[@]}" >>"$log" 2>&1 &
	DAEMON_PID=$!
	for ((i = 0; i < 200; i++)); do
		if is_mounted "$MNT"; then
			case $cfg in
			iotap-stopped) "$IOTAP" trace "$MNT" stop >>"$log" 2>&1 || return 1 ;;
			iotap-started) "$IOTAP" trace "$MNT" start --force "$WORK/traces/started.iotap" \
					>>"$log" 2>&1 || return 1 ;;
			esac
			return 0
		fi
		if ! kill -0 "$DAEMON_PID" 2>/dev/null; then
			wait "$DAEMON_PID"
			echo "+ exit status $?" >>"$log"
			DAEMON_PID=""
			return 1
		fi
		sleep 0.1
	done
	echo "+ not mounted after 20 s" >>"$log"
	return 1
}

# umount_cfg LOG: fusermount3 -u, then wait for the daemon to exit (that is
# when the trace is complete). Return: the daemon's exit status, or 1.
umount_cfg() {
	local log=$1 i rc
	for ((i = 0; i < 10; i++)); do
		fusermount3 -u "$MNT" 2>>"$log" && break
		sleep 0.5	# EBUSY while the last fio file closes
	done
	if is_mounted "$MNT"; then
		echo "+ fusermount3 -u failed 10 times; lazy unmount" >>"$log"
		fusermount3 -uz "$MNT" 2>>"$log"
	fi
	for ((i = 0; i < 600; i++)); do
		kill -0 "$DAEMON_PID" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$DAEMON_PID" 2>/dev/null; then
		echo "+ daemon still running 60 s after unmount; killed" >>"$log"
		kill -9 "$DAEMON_PID" 2>/dev/null
	fi
	wait "$DAEMON_PID" 2>/dev/null
	rc=$?
	echo "+ daemon exit status $rc" >>"$log"
	DAEMON_PID=""
	return $rc
}

peak_rss_kb() {
	awk '/^VmHWM:/ { print $2 }' "/proc/$1/status" 2>/dev/null
}

# trace_stats TRACE: prints "FILE_BYTES OP_RECORDS INFO_BYTES_PER_OP"
trace_stats() {
	local trace=$1 info bytes ops bpo
	bytes=$(stat -c %s "$trace" 2>/dev/null) || bytes=NA
	info=$("$IOTAP" info "$trace" 2>&1)
	ops=$(sed -n 's/^records.*[(, ]op \([0-9][0-9]*\).*/\1/p' <<<"$info")
	bpo=$(sed -n 's/.* \([0-9.][0-9.]*\) bytes\/op.*/\1/p' <<<"$info")
	echo "$info" >"$trace.info"
	echo "$bytes ${ops:-NA} ${bpo:-NA}"
}

# -------------------------------------------------------------------- jobs

drop_caches() {
	sync
	if ! echo 3 >/proc/sys/vm/drop_caches 2>/dev/null; then
		[ -n "${WARNED_DROP:-}" ] || note "cannot drop caches: seqread runs warm"
		WARNED_DROP=1
	fi
}

# Files the jobs read or overwrite are written once, straight into the
# backing directory, so laying them out costs no config anything and never
# shows up in a trace.
prepare_files() {
	local f size
	note "writing the job files into $WORK/backing"
	for f in seqr.dat:$SIZE rand.dat:$RAND_SIZE randw.dat:$RAND_SIZE; do
		size=${f#*:}
		fio --name=prep --filename="$WORK/backing/${f%%:*}" --rw=write --bs=1M \
			--size="$size" --ioengine=psync --end_fsync=1 --output=/dev/null ||
			die "cannot write ${f%%:*}"
	done
	mkdir -p "$WORK/backing/meta"
	# The virtual disk keeps flushing for a while after a burst of writes;
	# without a pause the first run of round 1 pays for it.
	sync
	sleep 3
}

# fio_value JSON KIND: KIND bw (MB/s, 10^6 B/s) or iops, of the read or write
# side that did the work; group_reporting folds numjobs into jobs[0].
fio_value() {
	python3 - "$1" "$2" <<'EOF'
import json, sys
text = open(sys.argv[1]).read()
doc = json.loads(text[text.index('{'):])	# fio may print notes before the JSON
job = doc['jobs'][0]
if job.get('error'):
    sys.exit(1)
side = job['read'] if job['read']['io_bytes'] > 0 else job['write']
print('%.3f' % (side['bw_bytes'] / 1e6 if sys.argv[2] == 'bw' else side['iops']))
EOF
}

# job_prepare JOB: outside the measurement, before the mount.
job_prepare() {
	case $1 in
	seqwrite) rm -f "$WORK/backing/seqw.dat" ;;
	# The backing file sits in the page cache for every config alike.
	randread|randread4|fsyncmix|rread-t*) cat "$WORK/backing/rand.dat" >/dev/null
		rm -f "$WORK/backing/fsync.dat" ;;
	meta) rm -rf "$WORK/backing/meta" && mkdir "$WORK/backing/meta" ;;
	esac
	sync
}

# run_job JOB DIR TAG: runs JOB against DIR, prints its figure.
run_job() {
	local job=$1 dir=$2 tag=$3 json=$WORK/fio/$3.json kind=iops
	local limit=$((RUNTIME * 3 + 120))
	local -a a=(--ioengine=psync --invalidate=0 --fallocate=none
		--output-format=json --output="$json" --name="$job")
	local -a rnd=(--bs=8k --size="$RAND_SIZE" --time_based --runtime="$RUNTIME")
	case $job in
	seqwrite)  a+=(--filename="$dir/seqw.dat" --rw=write --bs=1M --size="$SIZE" --end_fsync=1)
		   kind=bw limit=1200 ;;
	seqread)   a+=(--filename="$dir/seqr.dat" --rw=read --bs=1M --size="$SIZE")
		   kind=bw limit=1200
		   drop_caches ;;
	randread)  a+=(--filename="$dir/rand.dat" --rw=randread "${rnd[@]}") ;;
	randread4) a+=(--filename="$dir/rand.dat" --rw=randread "${rnd[@]}" --numjobs=4
		       --group_reporting) ;;
	randwrite) a+=(--filename="$dir/randw.dat" --rw=randwrite "${rnd[@]}" --fdatasync=1) ;;
	randwrite4) a+=(--filename="$dir/randw.dat" --rw=randwrite "${rnd[@]}" --numjobs=4
			--group_reporting) ;;
	rread-t*)  a+=(--filename="$dir/rand.dat" --rw=randread "${rnd[@]}" --numjobs="${job#rread-t}"
		       --group_reporting) ;;
	rwrite-t*) a+=(--filename="$dir/randw.dat" --rw=randwrite "${rnd[@]}" --numjobs="${job#rwrite-t}"
		       --group_reporting) ;;
	fsyncmix)
		# jobs[0] is the randread group, the figure; the fsync writer is group 2
		a+=(--filename="$dir/rand.dat" --rw=randread "${rnd[@]}" --numjobs=4
		    --group_reporting
		    --name=fsync --new_group --filename="$dir/fsync.dat" --rw=write --bs=1M
		    --size=64M --fsync=1 --time_based --runtime="$RUNTIME") ;;
	meta)
		local out
		out=$(timeout -k 10 "$limit" "$METALOOP" -n "$FILES" -t "$RUNTIME" \
			"$dir/meta" 2>>"$WORK/logs/$tag.err") || return 1
		echo "$out" >"$WORK/fio/$tag.txt"
		sed -n 's/.* ops_per_s=\([0-9.]*\).*/\1/p' <<<"$out"
		return 0 ;;
	esac
	# A hung daemon would leave fio waiting forever; bound it.
	timeout -k 10 "$limit" fio "${a[@]}" 2>>"$WORK/logs/$tag.err" >/dev/null || return 1
	fio_value "$json" $kind
}

# run_one ROUND JOB CFG: one measurement, one fresh mount; appends a row.
run_one() {
	local round=$1 job=$2 cfg=$3 tag="r$1-$2-$3" dir=$WORK/backing
	local log=$WORK/logs/r$1-$2-$3.log trace="" value rss=NA ts="NA NA NA"
	local status=ok t0 t1

	job_prepare "$job"
	if cfg_is_fuse "$cfg"; then
		cfg_is_traced "$cfg" && trace=$WORK/traces/$tag.iotap
		if ! mount_cfg "$cfg" "$trace" "$log"; then
			note "MOUNT FAILED: $cfg (left out from here on). Log:"
			sed 's/^/    /' "$log" >&2
			FAILED_CFGS+=" $cfg"
			printf '%s\t%s\t%s\tNA\tNA\tNA\tNA\tNA\tNA\tmount-failed\n' \
				"$round" "$job" "$cfg" >>"$RESULTS"
			return
		fi
		dir=$MNT
	fi
	t0=$EPOCHREALTIME
	if ! value=$(run_job "$job" "$dir" "$tag") || [ -z "$value" ]; then
		value=NA status=job-failed
		note "$job on $cfg failed; see $WORK/logs/$tag.err:"
		tail -n 5 "$WORK/logs/$tag.err" 2>/dev/null | sed 's/^/    /' >&2
	fi
	t1=$EPOCHREALTIME
	if cfg_is_fuse "$cfg"; then
		rss=$(peak_rss_kb "$DAEMON_PID")
		umount_cfg "$log" || status+=",daemon-exit-$?"
		[ -n "$trace" ] && ts=$(trace_stats "$trace")
	fi
	[ "$job" = seqwrite ] && rm -f "$WORK/backing/seqw.dat"
	# shellcheck disable=SC2086
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.1f\t%s\n' "$round" "$job" "$cfg" "$value" \
		"${rss:-NA}" $ts "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" "$status" \
		>>"$RESULTS"
	printf '%-10s %-18s %12s %s\n' "$job" "$cfg" "$value" "$(job_unit "$job")" >&2
}

job_unit() {
	case $1 in
	seq*) echo MB/s ;;
	meta) echo ops/s ;;
	*) echo IOPS ;;
	esac
}

# Rounds: jobs in order, and inside each job every config once, starting one
# config further along each round so no config always runs first or last.
run_rounds() {
	local r j i n k cfg
	local -a cfgs
	read -r -a cfgs <<<"$CONFIGS"
	n=${#cfgs[@]}
	for ((r = 1; r <= ROUNDS; r++)); do
		note "round $r of $ROUNDS ($(date +%T))"
		for j in $JOBS; do
			for ((i = 0; i < n; i++)); do
				k=$(((i + r - 1) % n))
				cfg=${cfgs[$k]}
				[[ " $FAILED_CFGS " == *" $cfg "* ]] && continue
				run_one "$r" "$j" "$cfg"
			done
		done
	done
}

# Peak RSS of each traced daemon after a short and a long run of the same
# mixed load (8 KiB random reads plus the metadata loop): if the recorder's
# memory grew with the trace, the long run would show it.
run_rss() {
	local cfg run secs log trace rss ts status pid_meta
	[ $RSS -eq 1 ] || return 0
	for cfg in iotap-trace iotap-uring-trace iotap-cache-trace iotap-uring-cache-trace; do
		[[ " $CONFIGS " == *" $cfg "* ]] || continue
		[[ " $FAILED_CFGS " == *" $cfg "* ]] && continue
		for run in short long; do
			secs=$RSS_SHORT
			[ $run = long ] && secs=$RSS_LONG
			note "peak RSS: $cfg, $run run ($secs s)"
			log=$WORK/logs/rss-$cfg-$run.log
			trace=$WORK/traces/rss-$cfg-$run.iotap
			status=ok
			job_prepare meta
			if ! mount_cfg "$cfg" "$trace" "$log"; then
				note "MOUNT FAILED: $cfg (peak RSS run). Log:"
				sed 's/^/    /' "$log" >&2
				printf '%s\t%s\t%s\tNA\tNA\tNA\tmount-failed\n' "$cfg" $run "$secs" >>"$RSSRES"
				continue
			fi
			"$METALOOP" -n "$FILES" -t "$secs" "$MNT/meta" >"$WORK/fio/rss-$cfg-$run.txt" \
				2>>"$log" &
			pid_meta=$!
			BG_PIDS=$pid_meta
			timeout -k 10 $((secs + 300)) fio --name=rss --filename="$MNT/rand.dat" \
				--rw=randread --bs=8k --size="$RAND_SIZE" --time_based --runtime="$secs" \
				--ioengine=psync --invalidate=0 --output=/dev/null 2>>"$log" || status=fio-failed
			wait $pid_meta || status+=",metaloop-failed"
			BG_PIDS=""
			rss=$(peak_rss_kb "$DAEMON_PID")
			umount_cfg "$log" || status+=",daemon-exit-$?"
			ts=$(trace_stats "$trace")
			# shellcheck disable=SC2086
			set -- $ts
			printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$cfg" $run "$secs" "${rss:-NA}" "$1" "$2" \
				"$status" >>"$RSSRES"
			note "  VmHWM ${rss:-NA} kB, $2 op records, $1 trace bytes"
		done
	done
}

# ------------------------------------------------------------------ report

write_header() {
	local iov fs
	iov=$("$IOTAP" --version 2>/dev/null | head -n 1)
	fs=$(df -T "$BASE" | awk 'NR == 2 { print $2 " on " $1 }')
	{
		printf 'command\t%s\n' "$CMDLINE"
		printf 'date\t%s\n' "$DATE_START"
		printf 'kernel\t%s\n' "$(uname -srm)"
		printf 'machine\t%s CPUs (%s), MemTotal %s\n' "$(nproc)" \
			"$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)" \
			"$(awk '/^MemTotal:/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)"
		printf 'backing\t%s (%s)\n' "$BASE" "$fs"
		printf 'software\t%s, libfuse %s%s\n' "$(fio --version)" \
			"$(pkg-config --modversion fuse3)" "${iov:+, $iov}"
		printf 'params\tseq file %s, random file %s, runtime %s s, %s round(s), metaloop %s files/pass, RSS runs %s s / %s s\n' \
			"$SIZE" "$RAND_SIZE" "$RUNTIME" "$ROUNDS" "$FILES" "$RSS_SHORT" "$RSS_LONG"
		# Other work on a 2-core VM moves every figure; say how busy it was.
		printf 'load\t%s at start, %s at end (1/5/15-min load average; the end includes this run)\n' "$LOAD_START" \
			"$(cut -d' ' -f1-3 /proc/loadavg)"
		printf 'configs\t%s\n' "$CONFIGS"
		printf 'jobs\t%s\n' "$JOBS"
	} >"$WORK/header.txt"
}

# Medians, ratios, and the tables. python3 because medians of per-round
# ratios with missing cells are painful in awk.
# report DIR: DIR holds header.txt, results.tsv and rss.tsv.
report() {
	python3 - "$1/header.txt" "$1/results.tsv" "$1/rss.tsv" "$MARKDOWN" <<'EOF'
import csv, statistics, sys

header_path, res_path, rss_path, markdown = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == '1'
hdr = dict(l.rstrip('\n').split('\t', 1) for l in open(header_path) if '\t' in l)
rows = list(csv.DictReader(open(res_path), delimiter='\t'))
rss_rows = list(csv.DictReader(open(rss_path), delimiter='\t'))

JOBS = {
    'seqwrite': ('seq write 1M, end_fsync', 'MB/s'),
    'seqread': ('seq read 1M, cold cache', 'MB/s'),
    'randread': ('randread 8k', 'IOPS'),
    'randread4': ('randread 8k, 4 jobs', 'IOPS'),
    'randwrite': ('randwrite 8k, fdatasync', 'IOPS'),
    'randwrite4': ('randwrite 8k, 4 jobs', 'IOPS'),
    'fsyncmix': ('randread 8k 4 jobs + 1M fsync writer', 'IOPS'),
    'meta': ('create/stat/unlink', 'ops/s'),
}
for j in hdr.get('jobs', '').split():
    if j.startswith(('rread-t', 'rwrite-t')):
        n = j.split('-t')[1]
        JOBS[j] = ('rand%s 8k, %s thread%s' % ('read' if j[1] == 'r' else 'write', n,
                                             '' if n == '1' else 's'), 'IOPS')
CFG = {
    'raw': 'backing directory, no FUSE',
    'iotap': 'iotap mount B M -f --transport dev',
    'iotap-trace': 'iotap mount B M -f --transport dev --trace T',
    'iotap-stopped': 'iotap mount B M -f --transport dev --trace T; iotap trace M stop',
    'iotap-started': 'iotap mount B M -f --transport dev; iotap trace M start T',
    'iotap-uring': 'iotap mount B M -f --transport uring',
    'iotap-uring-trace': 'iotap mount B M -f --transport uring --trace T',
    'iotap-uring-trace-nospin': 'iotap mount B M -f --transport uring --trace T -o uring_spin=0',
    'iotap-uring-trace-libfuse': 'iotap mount B M -f --transport uring --trace T -o uring_direct=0',
    'base-trace': 'BASELINE mount B M -f --transport dev --trace T (--baseline)',
    'base-uring-trace': 'BASELINE mount B M -f --transport uring --trace T (--baseline)',
    'ptll': 'passthrough_ll -o source=B,cache=never',
    'iotap-cache': 'iotap mount B M -f --transport dev --cache',
    'iotap-cache-trace': 'iotap mount B M -f --transport dev --cache --trace T',
    'iotap-uring-cache-trace': 'iotap mount B M -f --transport uring --cache --trace T',
    'ptll-cache': 'passthrough_ll -o source=B,cache=always,writeback',
    'ptll-cache-same': 'passthrough_ll -o source=B,cache=always,writeback,xattr,allow_other,default_permissions',
    'hp-dev': 'passthrough_hp --nopassthrough --direct-io B M',
    'hp-uring': 'passthrough_hp --nopassthrough --direct-io -o io_uring B M',
}
MODES = [('Direct mode', ['iotap', 'iotap-trace', 'iotap-stopped', 'iotap-started', 'iotap-uring',
                         'iotap-uring-trace', 'iotap-uring-trace-nospin', 'iotap-uring-trace-libfuse', 'base-trace',
                         'base-uring-trace',
                         'ptll', 'hp-dev', 'hp-uring'],
          [('iotap', 'ptll', 0.97), ('iotap-trace', 'iotap', 0.95), ('iotap-trace', 'ptll', 0.97),
           ('iotap-stopped', 'iotap', 0.95), ('iotap-started', 'iotap-trace', 0.95),
           ('iotap-uring-trace', 'iotap-trace', 0.97), ('iotap-uring-trace', 'iotap-uring', 0.95),
           ('iotap-uring-trace', 'ptll', 1.5), ('iotap-uring-trace', 'iotap-uring-trace-nospin', 0.97),
           ('iotap-uring-trace', 'iotap-uring-trace-libfuse', 1.0),
           ('iotap-trace', 'hp-dev', 1.0), ('iotap-uring-trace', 'hp-uring', 1.0),
           ('base-uring-trace', 'hp-uring', 1.0), ('iotap-uring-trace', 'base-uring-trace', 1.0),
           ('iotap-trace', 'base-trace', 1.0)]),
         ('Cache mode', ['iotap-cache', 'iotap-cache-trace', 'iotap-uring-cache-trace', 'ptll-cache',
                         'ptll-cache-same'],
          [('iotap-cache-trace', 'iotap-cache', 0.95), ('iotap-cache-trace', 'ptll-cache', 0.97),
           ('iotap-cache-trace', 'ptll-cache-same', 0.97),
           ('iotap-uring-cache-trace', 'iotap-cache-trace', 0.97)])]

def num(s):
    try:
        return float(s)
    except (TypeError, ValueError):
        return None

jobs = [j for j in hdr['jobs'].split() if any(r['job'] == j for r in rows)]
configs = hdr['configs'].split()
val = {}   # (job, cfg) -> {round: value}
for r in rows:
    v = num(r['value'])
    if v is not None:
        val.setdefault((r['job'], r['config']), {})[r['round']] = v

def fmt(v):
    if v is None:
        return '-'
    return '%.0f' % v if v >= 1000 else '%.1f' % v if v >= 10 else '%.2f' % v

def ratios(job, a, b):
    va, vb = val.get((job, a), {}), val.get((job, b), {})
    return [va[k] / vb[k] for k in va if k in vb and vb[k] > 0]

def med(xs):
    return statistics.median(xs) if xs else None

out = []
def table(head, body, left=1):
    if markdown:
        out.append('| ' + ' | '.join(head) + ' |')
        out.append('|' + '|'.join(':---' if i < left else '---:' for i in range(len(head))) + '|')
        for b in body:
            out.append('| ' + ' | '.join(b) + ' |')
    else:
        w = [max(len(x[i]) for x in [head] + body) for i in range(len(head))]
        line = lambda cells: '  '.join(c.ljust(w[i]) if i < left else c.rjust(w[i])
                                       for i, c in enumerate(cells)).rstrip()
        out.append(line(head))
        out.append(line(['-' * x for x in w]))
        out.extend(line(b) for b in body)
    out.append('')

def title(t):
    out.append(('### ' + t) if markdown else t)
    out.append('')

def para(t):
    out.append(t)
    out.append('')

# ---- header
KEYS = ['command', 'date', 'kernel', 'machine', 'backing', 'software', 'params', 'load']
if markdown:
    out.append('## iotap fs-bench')
    out.append('')
    for k in KEYS:
        if k not in hdr:
            continue
        v = '`%s`' % hdr[k] if k == 'command' else hdr[k]
        out.append('- %s: %s' % (k, v))
    out.append('')
else:
    out.append('iotap fs-bench')
    for k in KEYS:
        if k in hdr:
            out.append('  %-9s %s' % (k, hdr[k]))
    out.append('')
nrounds = len({r['round'] for r in rows})
try:
    ncpu = int(hdr['machine'].split()[0])
    # Only the load before the run started is other people's: ours adds to the rest.
    load = max(float(x) for x in hdr['load'].split(' at start')[0].split())
    if load > ncpu / 2:
        para('WARNING: the load average was %.1f on %d CPUs before the run started: other '
             'work shared the machine, so these figures are noisy at best.' % (load, ncpu))
except (KeyError, ValueError, IndexError):
    pass
para('Each cell: median over %d round(s) (ratio to raw measured in the same round, median '
     'over rounds). MB/s = 10^6 bytes/s.' % nrounds)

# ---- throughput tables and targets
for mode, cfgs, targets in MODES:
    cfgs = [c for c in cfgs if c in configs]
    if not cfgs:
        continue
    title('%s: throughput (ratio to raw)' % mode)
    head = ['job', 'unit', 'raw'] + cfgs
    body = []
    for j in jobs:
        b = [JOBS[j][0], JOBS[j][1], fmt(med(list(val.get((j, 'raw'), {}).values())))]
        for c in cfgs:
            m = med(list(val.get((j, c), {}).values()))
            rr = med(ratios(j, c, 'raw'))
            b.append('-' if m is None else '%s (%s)' % (fmt(m), '%.2f' % rr if rr else '-'))
        body.append(b)
    table(head, body)
    targets = [t for t in targets if t[0] in cfgs and t[1] in cfgs]
    if targets:
        title('%s: targets (median of per-round ratios [min..max])' % mode)
        head = ['job'] + ['%s / %s >= %.2f' % t for t in targets]
        body, below = [], 0
        for j in jobs:
            b = [JOBS[j][0]]
            for a, c, goal in targets:
                rs = ratios(j, a, c)
                if not rs:
                    b.append('-')
                    continue
                m = med(rs)
                ok = m >= goal
                below += not ok
                b.append('%.3f [%.2f..%.2f] %s' % (m, min(rs), max(rs), 'ok' if ok else 'BELOW'))
            body.append(b)
        table(head, body)

# ---- trace size per op
traced = [c for c in ['iotap-trace', 'iotap-uring-trace', 'iotap-cache-trace', 'iotap-uring-cache-trace']
          if c in configs]
GROUPS = [('seq 1 MiB jobs', ['seqwrite', 'seqread']),
          ('random 8 KiB jobs', ['randread', 'randread4', 'randwrite', 'randwrite4', 'fsyncmix'] +
           [j for j in jobs if j.startswith(('rread-t', 'rwrite-t'))]),
          ('metadata loop', ['meta'])]
if traced:
    title('Trace size per op (trace file bytes / OP records, all rounds)')
    body = []
    for c in traced:
        for g, js in GROUPS:
            sel = [r for r in rows if r['config'] == c and r['job'] in js
                   and num(r['trace_bytes']) is not None and num(r['op_records'])]
            if not sel:
                continue
            tb = sum(num(r['trace_bytes']) for r in sel)
            ops = sum(num(r['op_records']) for r in sel)
            ib = [num(r['info_bpo']) for r in sel if num(r['info_bpo']) is not None]
            body.append([c, g, '%d' % len(sel), '%d' % ops, '%d' % tb, '%.2f' % (tb / ops),
                         '%.2f' % med(ib) if ib else '-'])
    if body:
        table(['config', 'jobs', 'runs', 'op records', 'trace bytes', 'bytes/op',
               'info bytes/op (median)'], body, left=2)
        para('bytes/op counts the whole file (header, samples, names) against the OP '
             'records; `iotap info` bytes/op is its own figure (compressed chunk bytes).')
    else:
        para('(no trace statistics: `iotap info` gave no OP count)')

# ---- RSS
fuse_cfgs = [c for c in configs if c != 'raw']
if fuse_cfgs:
    title('Daemon peak RSS (VmHWM before unmount, over all job runs)')
    body = []
    for c in fuse_cfgs:
        xs = [num(r['rss_kb']) for r in rows if r['config'] == c and num(r['rss_kb'])]
        if xs:
            body.append([c, '%d' % len(xs), '%.0f' % med(xs), '%.0f' % max(xs)])
    table(['config', 'runs', 'median kB', 'max kB'], body)
if rss_rows:
    title('Peak RSS of the traced daemon, short vs long run (8k randread + metaloop)')
    body = []
    for r in rss_rows:
        body.append([r['config'], r['run'], r['secs'], r['op_records'], r['trace_bytes'],
                     r['rss_kb'], r['status']])
    table(['config', 'run', 'seconds', 'op records', 'trace bytes', 'VmHWM kB', 'status'],
          body, left=2)
    for c in dict.fromkeys(r['config'] for r in rss_rows):
        s = {r['run']: num(r['rss_kb']) for r in rss_rows if r['config'] == c}
        o = {r['run']: num(r['op_records']) for r in rss_rows if r['config'] == c}
        if s.get('short') and s.get('long'):
            para('%s: long/short VmHWM %.2f for %s times the op records' %
                 (c, s['long'] / s['short'],
                  '%.1f' % (o['long'] / o['short']) if o.get('short') and o.get('long') else '?'))

# ---- legend and failures
title('Configurations')
table(['config', 'mount'], [[c, CFG[c]] for c in configs], left=2)
bad = [r for r in rows if r['status'] != 'ok'] + [r for r in rss_rows if r['status'] != 'ok']
if bad:
    title('Problems')
    for r in bad:
        out.append('- %s %s: %s' % (r.get('job', 'rss ' + r.get('run', '')), r['config'], r['status']))
    out.append('')
print('\n'.join(out).rstrip())
EOF
}

# -------------------------------------------------------------------- main

main() {
	parse_args "$@"
	if [ -n "$REPORT_DIR" ]; then
		report "$REPORT_DIR"
		exit
	fi
	check_env
	trap cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	setup_workdir
	build_helpers
	note "configs: $CONFIGS"
	note "jobs: $JOBS; $ROUNDS round(s); work dir $WORK"
	DATE_START=$(date -u '+%Y-%m-%d %H:%M UTC')
	LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
	prepare_files
	run_rounds
	run_rss
	write_header
	report "$WORK" | tee "$WORK/report.txt"
	# Figures are printed either way; a failed mount or job still fails the run.
	! grep -q -v -P '\tok$' <(tail -n +2 "$RESULTS"; tail -n +2 "$RSSRES")
}

main "$@"
