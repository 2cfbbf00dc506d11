#!/bin/bash
# SPDX-License-Identifier: MIT
# cli-help: `iotap help COMMAND` is that command's --help (it used to print
# the global help), the global help does not show mount's --trace as
# required, and the help text states which units the outputs use.
. "$(dirname "$0")/lib.sh"

for c in mount umount mark trace status top run replay info dump export report compare; do
	"$IOTAP" help $c > $T/a 2>&1 || fail "iotap help $c exited $?"
	"$IOTAP" $c --help > $T/b 2>&1 || fail "iotap $c --help exited $?"
	cmp -s $T/a $T/b || fail "iotap help $c differs from iotap $c --help"
	grep -q "^usage: iotap $c" $T/a || fail "iotap help $c: no usage line"
done
expect 2 "'nosuch' is not an iotap command" "$IOTAP" help nosuch
"$IOTAP" --help > $T/g || fail "iotap --help"
grep -Eq '^  mount +BACKING MOUNTPOINT \[--trace FILE\]' $T/g || { cat $T/g; fail "mount's --trace shown as required"; }
grep -q "in that tool's units" $T/g || fail "the global help does not say which units"
"$IOTAP" run bonnie --help > $T/bh 2>&1
grep -A3 -- '--files' $T/bh | grep -q 'default 0) in DIRS' && fail "bonnie -n help says 'default 0' for NUM"
exit 0
