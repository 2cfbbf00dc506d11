# SPDX-License-Identifier: MIT
# lib.sh - shared helpers for the end-to-end cases in tests/e2e/
#
# Source it from a case:   . "$(dirname "$0")/lib.sh"
#
# It makes a private temp dir ($T) with backing/ and mnt/ inside, finds the
# iotap binary ($IOTAP: from the environment, meson sets it), and installs an
# EXIT trap that unmounts every mount started with iotap_mount and kills its
# daemon, pass or fail, then removes $T. Exit codes follow meson: 0 pass,
# 1 fail, 77 skip.
#
#   iotap_mount BACKING MNT [iotap mount options...]   start a capture (foreground
#                                           daemon in the background, waits for the mount)
#   iotap_umount MNT                        unmount and wait for the daemon to exit
#   at_exit "CMD"                           run CMD at exit, pass or fail, before the
#                                           unmounts (last registered runs first); the
#                                           case's exit status is kept (never
#                                           `trap ... EXIT` over lib.sh's own trap)
#   fail "text"                             print and exit 1
#   skip "why"                              print and exit 77
#   check "text" CMD...                     run CMD; fail with text if it fails
#   expect_eq "what" GOT WANT               fail unless equal
#   expect STATUS PATTERN CMD...            CMD exits STATUS (never a crash) and its
#                                           stderr matches PATTERN (case-insensitive);
#                                           its output stays in $T/out and $T/err

set -u

IOTAP=${IOTAP:-$(cd "$(dirname "$0")/../.." && pwd)/build/tools/iotap}
E2E_DIR=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/iotap-e2e.XXXXXX")
chmod 755 "$T"
BACKING=$T/backing
MNT=$T/mnt
mkdir -p "$BACKING" "$MNT"
_mounts=""
_pids=""
_at_exit=()
at_exit() { _at_exit+=("$1"); }

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*" >&2; exit 77; }
note() { echo "# $*" >&2; }
check() { local what=$1; shift; "$@" || fail "$what (command: $*)"; }
expect_eq() { [ "$2" = "$3" ] || fail "$1: got '$2', want '$3'"; }

expect() {
	local want=$1 pat=$2
	shift 2
	"$@" > $T/out 2> $T/err
	local rc=$?
	[ $rc -lt 128 ] || fail "'$*' crashed (status $rc)"
	[ $rc -eq $want ] || { cat $T/err; fail "'$*' exited $rc, want $want"; }
	grep -qi -- "$pat" $T/err || { cat $T/err; fail "'$*': stderr lacks '$pat'"; }
}

# A case that fails or times out shows what its daemons said and, when it
# was killed (meson's timeout), where their threads wait in the kernel.
_diagnose() {
	local rc=$1 f p t
	for f in "$T"/mount-*.log; do
		[ -s "$f" ] || continue
		echo "# --- last lines of $(basename "$f") ---" >&2
		tail -n 25 "$f" >&2
	done
	[ "$rc" -eq 130 ] || return 0
	dump_waits
}

# dump_waits [PID...]: where each thread of the daemons (and of PIDs) waits
# in the kernel, on stderr: for a case that finds something stuck
dump_waits() {
	local p t
	for p in $_pids "$@"; do
		[ -d /proc/$p ] || continue
		for t in /proc/$p/task/*; do
			echo "# pid $p thread ${t##*/} ($(cat $t/comm 2>/dev/null)," \
				"$(awk '{ print $3 }' $t/stat 2>/dev/null)): $(cat $t/wchan 2>/dev/null)" \
				"$(head -n 6 $t/stack 2>/dev/null | awk '{ printf "%s ", $2 }')" >&2
		done
	done
}

_cleanup() {
	local rc=$?
	local m p i _ae
	[ $rc -eq 0 ] || [ $rc -eq 77 ] || _diagnose $rc
	# the slow disk (slow_disk_lower) fast again first: after a case that
	# failed beside a slow call, every unmount below would wait for its
	# slow flushes (45 s of them)
	[ -z "${SLOW:-}" ] || rm -f "$SLOW"
	# _ae, not i: the code eval'd here may loop on i of its own
	for ((_ae = ${#_at_exit[@]} - 1; _ae >= 0; _ae--)); do
		eval "${_at_exit[_ae]}"
	done
	for m in $_mounts; do
		# a dead FUSE mount (its daemon killed) fails mountpoint's stat: ask the table
		if mountpoint -q "$m" 2>/dev/null || grep -q " $m fuse" /proc/self/mounts; then
			fusermount3 -u "$m" 2>/dev/null || fusermount3 -uz "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
		fi
	done
	for p in $_pids; do
		kill "$p" 2>/dev/null
	done
	for p in $_pids; do
		local i=0
		while kill -0 "$p" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
		kill -9 "$p" 2>/dev/null
	done
	if [ $rc -ne 0 ] && [ $rc -ne 77 ] && [ -n "${E2E_KEEP:-}" ]; then
		echo "# keeping $T" >&2
	else
		rm -rf "$T" 2>/dev/null
	fi
	exit $rc
}
trap _cleanup EXIT
trap 'exit 130' INT TERM

need_fuse() {
	[ -c /dev/fuse ] || skip "no /dev/fuse"
	command -v fusermount3 >/dev/null || skip "no fusermount3"
	if [ "$(id -u)" -ne 0 ]; then
		[ -u "$(command -v fusermount3)" ] || skip "fusermount3 is not setuid"
		skip "the capture mount needs root (open_by_handle_at)"
	fi
	[ -x "$IOTAP" ] || fail "no iotap binary at $IOTAP"
}

# iotap_mount BACKING MNT [options]: foreground daemon in the background,
# its log in $T/mount-N.log; waits until MNT is a mount point.
_nmount=0
iotap_mount() {
	local b=$1 m=$2
	shift 2
	_nmount=$((_nmount + 1))
	local log=$T/mount-$_nmount.log
	"$IOTAP" mount "$b" "$m" -f "$@" >"$log" 2>&1 &
	local pid=$!
	_pids="$_pids $pid"
	_mounts="$_mounts $m"
	MOUNT_PID=$pid
	MOUNT_LOG=$log
	local i=0
	while ! grep -q " $(realpath "$m") fuse" /proc/self/mounts 2>/dev/null; do
		if ! kill -0 $pid 2>/dev/null; then
			cat "$log" >&2
			if grep -qi "fuse: device not found\|Operation not permitted" "$log"; then
				skip "the kernel refused the mount"
			fi
			fail "iotap mount $b $m exited before mounting"
		fi
		i=$((i + 1))
		[ $i -lt 200 ] || fail "mount of $m did not appear in 20 s"
		sleep 0.1
	done
}

# iotap_umount MNT: unmount and wait for the daemon (trace closed).
iotap_umount() {
	local m=$1 i=0
	fusermount3 -u "$m" || fail "fusermount3 -u $m failed"
	while kill -0 "$MOUNT_PID" 2>/dev/null; do
		i=$((i + 1))
		[ $i -lt 300 ] || fail "daemon $MOUNT_PID still running 30 s after unmount"
		sleep 0.1
	done
	wait "$MOUNT_PID" 2>/dev/null
	MOUNT_RC=$?
}

# count_ops TRACE OP: number of OP records of that op in `iotap dump`
count_ops() {
	"$IOTAP" dump "$1" | awk -v op="$2" '$4 == op { n++ } END { print n + 0 }'
}

# FUSE over io_uring (the fuse module's enable_uring parameter, global):
# uring_param_set Y|N sets it for this case and puts the old value back at
# exit; skips where the kernel has no such parameter. need_uring = set Y.
URING_PARAM=/sys/module/fuse/parameters/enable_uring
uring_param_set() {
	[ -e $URING_PARAM ] || skip "this kernel has no FUSE over io_uring ($URING_PARAM)"
	local old
	old=$(cat $URING_PARAM)
	[ "$old" = "$1" ] && return 0
	echo "$1" > $URING_PARAM 2>/dev/null || skip "cannot set $URING_PARAM"
	at_exit "echo $old > $URING_PARAM"
}
need_uring() { uring_param_set Y; }

# need_failsys: $FAILSYS, the LD_PRELOAD fault injector (failsys.c, built
# with the tests; meson sets IOTAP_FAILSYS); skips without it.
need_failsys() {
	FAILSYS=${IOTAP_FAILSYS:-${IOTAP_BUILD:-$(cd "$(dirname "$0")/../.." && pwd)/build}/tests/failsys.so}
	[ -r "$FAILSYS" ] || skip "no failsys.so at $FAILSYS (build the tests)"
}

# A slow disk for the transport cases (fs-uring-fsync, fs-uring-coldread):
# slow_disk_lower MS VAR=VALUE... mounts an iotap over /dev/fuse at $T/lower-m
# (backing $T/lower-b) whose daemon runs with failsys.so and the given
# failsys variables (IOTAP_SLOW_FSYNC=1, IOTAP_SLOW_LEN=any ...), slow by MS
# ms only while the file $SLOW exists (so mkfs is fast). Skips without
# failsys.so, losetup, taskset.
slow_disk_lower() {
	local ms=$1 c
	shift
	for c in losetup taskset; do
		command -v $c >/dev/null || skip "no $c"
	done
	need_failsys
	SLOW=$T/slow-on LM=$T/lower-m
	mkdir -p $T/lower-b $LM
	_with_env LD_PRELOAD=$FAILSYS IOTAP_SLOW_MS=$ms IOTAP_SLOW_IF=$SLOW "$@" \
		iotap_mount $T/lower-b $LM --transport dev
	# _cleanup removes $SLOW first, before any unmount
}
_with_env() {	# VAR=VALUE... CMD...: CMD with those exported, then unset again
	local -a names=()
	while [ $# -gt 0 ] && [[ $1 == *=* ]]; do
		names+=("${1%%=*}")
		export "$1"
		shift
	done
	"$@"
	unset "${names[@]}"
}

# slow_fs FSTYPE SIZE DIR: a FSTYPE file system (ext4, xfs) of SIZE on a
# loop device whose image lives on the slow lower mount, mounted at DIR
# (noatime) and taken down at exit; skips without mkfs.FSTYPE or a loop
# device.
slow_fs() {
	local fs=$1 size=$2 dir=$3 img=$LM/$(basename "$3").img loop
	command -v mkfs.$fs >/dev/null || skip "no mkfs.$fs"
	mkdir -p "$dir"
	truncate -s "$size" $img || fail "image on the lower mount"
	case $fs in
	ext*) mkfs.$fs -q -F $img >$T/mkfs.out 2>&1 ;;
	*) mkfs.$fs -q -f $img >$T/mkfs.out 2>&1 ;;
	esac || { cat $T/mkfs.out; fail "mkfs.$fs on the lower mount"; }
	loop=$(losetup -f --show $img 2>$T/losetup.err) ||
		{ cat $T/losetup.err; skip "no loop device: $(cat $T/losetup.err)"; }
	at_exit "losetup -d $loop 2>/dev/null"
	mount -o noatime $loop "$dir" || fail "mount the $fs image"
	at_exit "umount $dir 2>/dev/null || umount -l $dir"
}

# slow_upper BACKING MNT [options...]: iotap over io_uring on a slow file
# system; its daemon goes before that file system's unmount at exit.
# Sets UPPER_PID, UPPER_LOG.
slow_upper() {
	local m=$2
	iotap_mount "$@" --transport uring
	UPPER_PID=$MOUNT_PID
	UPPER_LOG=$MOUNT_LOG
	at_exit "_daemon_down $m $UPPER_PID"
}
_daemon_down() {	# MNT PID: unmount, wait up to 10 s for the daemon
	local n
	fusermount3 -u "$1" 2>/dev/null
	for n in $(seq 100); do
		kill -0 $2 2>/dev/null || break
		sleep 0.1
	done
}

# pin_cache FILE...: hold FILE's pages in the page cache until the case ends
# (pin_cache.py: mapped and mlock'ed). This VM pages cold page cache out
# (a DAMON pageout scheme: pin_cache.py), and a "cached" file beside() reads
# that has lost a page must read it from the slow disk, queued behind the slow
# call there: read 1 then stalled (fs-uring-coldread and fs-uring-fsync,
# 1 run in 7-15: 8 KiB of 'small' read from the image 3 s behind the slow
# read before it; the transport had served it right).
pin_cache() {
	local ready i
	_pins=$((${_pins:-0} + 1))
	ready=$T/pinned.$_pins
	python3 "$IOTAP_SRC/tests/e2e/pin_cache.py" $ready "$@" >/dev/null 2>$ready.err &
	at_exit "kill $! 2>/dev/null; wait $! 2>/dev/null"	# before the file system goes
	for i in $(seq 50); do
		[ -e $ready ] && return 0
		kill -0 $! 2>/dev/null || break
		sleep 0.1
	done
	cat $ready.err >&2
	fail "cannot hold $* in the page cache"
}

# beside WHAT FILE LIMIT CMD...: start CMD pinned to CPU 0 with the slow
# disk on; it must still run 0.5 s later; meanwhile 10 reads of FILE from
# CPU 0 must each end within LIMIT s and all within LIMIT s, and before
# CMD ends. Then CMD must succeed. Sets BESIDE_SECS (CMD's time) and notes
# both times. FILE's backing file must be held cached (pin_cache).
beside() {
	local what=$1 file=$2 limit=$3 t0 t1 p0 p1 pid i
	shift 3
	touch $SLOW
	t0=$EPOCHREALTIME
	taskset -c 0 "$@" 2>$T/beside.err &
	pid=$!
	sleep 0.5
	kill -0 $pid 2>/dev/null ||
		{ cat $T/beside.err; fail "the $what ended at once: the slow disk is not slow"; }
	p0=$EPOCHREALTIME
	for i in $(seq 1 10); do
		timeout $limit taskset -c 0 cat "$file" > /dev/null ||
			fail "read $i beside the $what stalled (over $limit s)"
	done
	p1=$EPOCHREALTIME
	wait $pid || { cat $T/beside.err; fail "the $what failed"; }
	t1=$EPOCHREALTIME
	rm -f $SLOW
	BESIDE_SECS=$(awk -v a=$t0 -v b=$t1 'BEGIN { printf "%.2f", b - a }')
	note "$what took $BESIDE_SECS s, 10 reads beside it $(awk -v a=$p0 -v b=$p1 'BEGIN { printf "%.2f", b - a }') s"
	awk -v a=$p0 -v b=$p1 -v l=$limit 'BEGIN { exit !(b - a < l) }' ||
		fail "10 reads beside the $what took $(awk -v a=$p0 -v b=$p1 'BEGIN { print b - a }') s (>= $limit s): held up by it"
	awk -v a=$p1 -v b=$t1 'BEGIN { exit !(a < b) }' || fail "the reads ended after the $what"
}
