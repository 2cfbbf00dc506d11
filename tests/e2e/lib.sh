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
