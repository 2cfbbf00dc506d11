#!/bin/bash
# SPDX-License-Identifier: MIT
# replay-errors: bad input to iotap replay, each with a clear message and
# the right exit status (1 runtime, 2 usage):
#   a missing trace (named before a missing target), a file that is not a
#   trace, a missing target;
#   a target that does not hold the initial state (what is missing listed;
#   --check says so too; --force replays anyway and counts the failures);
#   a damaged trace (cut short): said, and what is left is replayed;
#   a target filesystem too small for the initial state: refused before
#   anything is written; a --map that matches nothing; an unknown --phase;
#   bad --timing, --data, --skip values; an existing --trace file.
# TIMEOUT: 60
. "$(dirname "$0")/lib.sh"
need_fuse
TR=$T/cap.iotap
runs() {	# runs WANT_STATUS PATTERN CMD...: CMD exits WANT_STATUS and says PATTERN on stderr
	local want=$1 pat=$2 got
	shift 2
	"$@" > "$T/out" 2> "$T/err"
	got=$?
	[ "$got" = "$want" ] || { cat "$T/err"; fail "'$*' exited $got, want $want"; }
	grep -q -- "$pat" "$T/err" || { cat "$T/err"; fail "'$*' does not say '$pat'"; }
}

# a capture: a tree read back over 3 s (so the trace has several chunks;
# its initial state is the tree), and one new file
mkdir -p "$BACKING/d"
for i in $(seq 40); do head -c $((i * 40000)) /dev/urandom > "$BACKING/d/f$i"; done
iotap_mount "$BACKING" "$MNT" --trace "$TR"
for i in $(seq 40); do cat "$MNT/d/f$i" > /dev/null; sleep 0.08; done
echo new > "$MNT/d/new"
iotap_umount "$MNT"

runs 1 "cannot" "$IOTAP" replay "$T/nonexistent.iotap" "$T"
# the missing trace is named first, not the directory not there yet (issue 27, item 17)
runs 1 "cannot read trace '$T/nonexistent.iotap': No such file" \
	"$IOTAP" replay "$T/nonexistent.iotap" "$T/newdir"
runs 1 "cannot read trace '$T/nonexistent.iotap': No such file" \
	"$IOTAP" replay "$T/nonexistent.iotap" "$T/newdir" --prepare
[ -e "$T/newdir" ] && fail "a replay of no trace made its directory"
echo "not a trace" > "$T/junk.iotap"
runs 1 "not an iotap trace" "$IOTAP" replay "$T/junk.iotap" "$T"
runs 1 "No such file" "$IOTAP" replay "$TR" "$T/nonexistent-dir"
runs 2 "wants a trace and a directory" "$IOTAP" replay "$TR"

mkdir "$T/empty"
runs 1 "missing: '$T/empty/d/f1' (a file of 40000 bytes)" "$IOTAP" replay "$TR" "$T/empty"
grep -q -- "--prepare" "$T/err" || fail "no hint at --prepare"
runs 1 "does not hold the initial state" "$IOTAP" replay "$TR" "$T/empty" --check
runs 0 "replaying anyway" "$IOTAP" replay "$TR" "$T/empty" --force --timing asap
grep -q "results unlike the capture's: [1-9]" "$T/out" || { cat "$T/out"; fail "--force: no failures counted"; }
# the summary is the result: on stdout, saying recorded and replay threads
grep -Eq "^replay of .*: [0-9]+ ops of [0-9]+ recorded threads?, on [0-9]+ replay threads?" \
	"$T/out" || { cat "$T/out"; fail "no summary line on stdout"; }
grep -q "^replay of" "$T/err" && fail "the summary went to stderr as well"
[ -z "$(ls "$T/empty/d" 2>/dev/null | grep -v new)" ] || fail "--force created state files"
rm -rf "$T/empty"/*
runs 0 "initial state built" "$IOTAP" replay "$TR" "$T/empty" --prepare-only
runs 0 "holds the initial state" "$IOTAP" replay "$TR" "$T/empty" --check
expect_eq "size of a prepared file" "$(stat -c %s "$T/empty/d/f7")" 280000
# --prepare makes a DIR that does not exist yet (and takes it away again on failure)
runs 0 "created '$T/fresh'" "$IOTAP" replay "$TR" "$T/fresh" --prepare-only
expect_eq "size of a file prepared in a new DIR" "$(stat -c %s "$T/fresh/d/f7")" 280000
runs 1 "cannot" "$IOTAP" replay "$T/nonexistent.iotap" "$T/fresh2" --prepare
[ -e "$T/fresh2" ] && fail "a failed --prepare left the DIR it made"

# damaged: a third cut off its end (a writer killed mid-chunk)
sz=$(stat -c %s "$TR")
head -c $((sz * 2 / 3)) "$TR" > "$T/cut.iotap"
rm -rf "$T/cut" && mkdir "$T/cut"
runs 0 "damaged\|no end record" "$IOTAP" replay "$T/cut.iotap" "$T/cut" --prepare --timing asap

# too small: a 2 MiB tmpfs for a 33 MB initial state
mkdir "$T/small"
if mount -t tmpfs -o size=2m iotap-test "$T/small" 2>/dev/null; then
	_mounts="$_mounts $T/small"
	runs 1 "needs .* MB more; nothing was written" "$IOTAP" replay "$TR" "$T/small" --prepare
	[ -z "$(ls -A "$T/small")" ] || fail "something was written into the small target"
	umount "$T/small"
else
	note "cannot mount a tmpfs: target-too-small case skipped"
fi

runs 2 "matches nothing" "$IOTAP" replay "$TR" "$T/empty" --map "$BACKING/nothere=$T"
runs 2 "not under the captured directory" "$IOTAP" replay "$TR" "$T/empty" --map "/elsewhere=$T"
runs 1 "has no phase markers" "$IOTAP" replay "$TR" "$T/empty" --phase bench
runs 2 "--timing wants" "$IOTAP" replay "$TR" "$T/empty" --timing fast
runs 2 "--timing wants" "$IOTAP" replay "$TR" "$T/empty" --timing scale=0
runs 2 "--data wants" "$IOTAP" replay "$TR" "$T/empty" --data dedup=0.5
runs 2 "--skip wants" "$IOTAP" replay "$TR" "$T/empty" --skip read,nosuchop
runs 2 "--map wants" "$IOTAP" replay "$TR" "$T/empty" --map foo
touch "$T/exists.iotap"
runs 1 "exists; use --overwrite" "$IOTAP" replay "$TR" "$T/empty" --prepare --trace "$T/exists.iotap"
check "--overwrite replaces a trace" \
	"$IOTAP" replay "$TR" "$T/empty" --prepare --trace "$T/exists.iotap" --overwrite -q
"$IOTAP" info --strict "$T/exists.iotap" > /dev/null || fail "the overwritten trace is not valid"
exit 0
