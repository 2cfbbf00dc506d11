#!/bin/bash
# SPDX-License-Identifier: MIT
# report-progress: the progress line of the commands that read whole
# traces (report, compare, dump, info). With --progress and stderr a file,
# each trace read ends in one "iotap CMD: TRACE: read SIZE in SECS s"
# line and stdout is byte for byte what it is without; by default, stderr
# not a terminal, nothing is added. On a terminal (a pty from script(1))
# a read that takes over a second (dump into a pipe that stalls 2 s)
# draws "\r\e[Kiotap dump: TRACE  NN% (A of B)" in place and erases it at
# the end; --no-progress draws nothing. No FUSE needed.
. "$(dirname "$0")/lib.sh"
SYNTH=${IOTAP_BUILD:-$(cd "$(dirname "$0")/../.." && pwd)/build}/tests/unit/report-synth
[ -x "$SYNTH" ] || fail "no report-synth at $SYNTH (build the tests)"
[ -x "$IOTAP" ] || fail "no iotap binary at $IOTAP"
command -v python3 > /dev/null || skip "needs python3"
check "report-synth" "$SYNTH" --records 300000 --phases 6 $T/s.iotap > /dev/null
check "report-synth 2" "$SYNTH" --records 100000 --phases 6 $T/s2.iotap > /dev/null

# --progress into a file: one final line per trace read, the output unchanged
same_with_progress() {	# NAME CMD ARGS...: stdout equal, stderr only progress lines
	local name=$1
	shift
	"$IOTAP" "$@" > $T/plain.out 2> $T/plain.err || fail "$name: iotap $* failed"
	[ -s $T/plain.err ] && { cat $T/plain.err; fail "$name: stderr not empty without --progress"; }
	"$IOTAP" "$@" --progress > $T/prog.out 2> $T/prog.err || fail "$name: --progress failed"
	cmp -s $T/plain.out $T/prog.out || fail "$name: --progress changed the output"
	grep -v "^iotap ${1}: " $T/prog.err && fail "$name: stderr has more than progress lines"
	return 0
}
same_with_progress report report $T/s.iotap
grep -Eqx "iotap report: $T/s.iotap: read [0-9.]+ kB in [0-9]+\.[0-9] s" $T/prog.err ||
	{ cat $T/prog.err; fail "report --progress: no final line"; }
expect_eq "report --progress lines" "$(wc -l < $T/prog.err)" 1

same_with_progress "report --json" report $T/s.iotap --json
same_with_progress dump dump $T/s.iotap --csv
grep -Eqx "iotap dump: $T/s.iotap: read [0-9.]+ kB in [0-9]+\.[0-9] s" $T/prog.err ||
	{ cat $T/prog.err; fail "dump --progress: no final line"; }
same_with_progress info info $T/s.iotap
grep -Eqx "iotap info: $T/s.iotap: read [0-9.]+ kB in [0-9]+\.[0-9] s" $T/prog.err ||
	{ cat $T/prog.err; fail "info --progress: no final line"; }

# compare reads each trace: a line each, in order
# compare reads its traces side by side (a CPU each): a line per trace as
# it is read, in the order they end; one after the other with --threads 1
same_with_progress compare compare $T/s.iotap $T/s2.iotap
expect_eq "compare --progress lines" "$(sed 's/: read .*//' $T/prog.err | sort | tr '\n' ' ')" \
	"iotap compare: $T/s.iotap iotap compare: $T/s2.iotap "
same_with_progress "compare --threads 1" compare $T/s.iotap $T/s2.iotap --threads 1
expect_eq "compare --threads 1 --progress lines" "$(sed 's/: read .*//' $T/prog.err | tr '\n' ' ')" \
	"iotap compare: $T/s.iotap iotap compare: $T/s2.iotap "

# --no-progress after --progress: the last one counts
"$IOTAP" report $T/s.iotap --progress --no-progress > /dev/null 2> $T/e || fail "report --no-progress"
[ -s $T/e ] && { cat $T/e; fail "--no-progress after --progress printed"; }

# on a terminal: drawn after 1 s of reading, redrawn in place, erased at the end
command -v script > /dev/null || skip "needs script(1) (util-linux) for a pty"
tty_run() {	# LOG CMD: CMD with stdin, stdout and stderr on a pty, typescript in LOG
	script -qfec "$2" "$1" > /dev/null 2>&1 < /dev/null || fail "under a pty: $2"
}
tty_run $T/tty.log "'$IOTAP' dump $T/s.iotap | (sleep 2; cat > /dev/null)"
python3 - "$T/tty.log" "$T/s.iotap" <<'EOF' || fail "dump on a terminal: no progress line drawn and erased"
import re, sys
log = open(sys.argv[1], 'rb').read().decode('utf-8', 'replace')
path = sys.argv[2]
drawn = [m for m in re.finditer(r'\r\x1b\[Kiotap dump: ' + re.escape(path) +
                                r' +\d+% \([0-9.]+ kB of [0-9.]+ kB\)(, \d+ s left)?', log)]
if not drawn:
    sys.exit("no line drawn: %r" % log[-400:])
# the last line drawn is erased: the next thing after it is "\r\e[K"
if not log[drawn[-1].end():].startswith('\r\x1b[K'):
    sys.exit("last line not erased: %r" % log[drawn[-1].start():][:200])
EOF
tty_run $T/tty2.log "'$IOTAP' dump $T/s.iotap --no-progress | (sleep 2; cat > /dev/null)"
grep -q "iotap dump" $T/tty2.log && fail "--no-progress on a terminal drew a line"
# a read shorter than a second draws nothing
tty_run $T/tty3.log "'$IOTAP' info $T/s.iotap > /dev/null"
grep -q "iotap info" $T/tty3.log && fail "a short read drew a progress line"
exit 0
