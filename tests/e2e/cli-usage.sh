#!/bin/bash
# SPDX-License-Identifier: MIT
# cli-usage: what the option tables of mount, replay, umount, mark, trace,
# info, compare, status and top accept and refuse, and in which words:
# every line of tests/data/cli-usage.cases is one command line, run in a
# directory holding d1/, d2/ and an empty file notrace; its stdout, stderr
# and exit status must equal tests/data/cli-usage.golden byte for byte. No
# line mounts anything (each stops at a usage error, a refused output, or
# --help after its options). A change of wording on purpose:
# CLI_USAGE_WRITE=1 rewrites the golden file, and the diff shows what moved.
. "$(dirname "$0")/lib.sh"

cases=$IOTAP_SRC/tests/data/cli-usage.cases
golden=$IOTAP_SRC/tests/data/cli-usage.golden
mkdir $T/w $T/w/d1 $T/w/d2 && : > $T/w/notrace || fail "cannot set up $T/w"
cd $T/w || fail "cd $T/w"
while IFS= read -r line; do
	eval "set -- $line"
	out=$(timeout 10 "$IOTAP" "$@" 2>$T/err </dev/null)
	rc=$?
	[ $rc -lt 124 ] || fail "'iotap $line' crashed or hung (status $rc)"
	printf '=== %s\n%s\n--- stderr\n' "$line" "$out"
	cat $T/err
	echo "--- rc $rc"
done < "$cases" > $T/got
[ -n "${CLI_USAGE_WRITE:-}" ] && cp $T/got "$golden"
diff -u "$golden" $T/got >&2 || fail "the outputs above differ from $golden"
exit 0
