#!/bin/bash
# SPDX-License-Identifier: MIT
# replay-tar: capture a tar extract and a tar read-back through the mount
# (phases marked "extract" and "readback"; the tree has symlinks, hard
# links, a renamed directory and a renamed second name), then replay it:
#   - into an empty directory (the initial state is just the root):
#     per phase and per op type the same op counts, bytes and errors, zero
#     differences, and the replayed tree has the captured tree's names,
#     types and sizes;
#   - into that directory again: refused (what the capture creates is in
#     the way, listed), --prepare refused too (it would remove the
#     capture's creations), then with --prepare --clobber: replayed exactly again;
#   - the readback phase alone (--phase readback --prepare) into a fresh
#     directory: the extracted tree is its initial state, same counts as
#     the capture's readback phase, zero differences.
# TIMEOUT: 90
. "$(dirname "$0")/lib.sh"
need_fuse
SRC=$T/src
mkdir -p "$SRC"
cp -a /usr/include/linux "$SRC/" 2>/dev/null || skip "no /usr/include/linux"
ln -s linux/stddef.h "$SRC/stddef-link.h"
ln -s linux "$SRC/dirlink"
ln "$SRC/linux/types.h" "$SRC/types-hardlink.h"
TR=$T/tar.iotap
CMP="python3 $E2E_DIR/replay_compare.py"
shape() { (cd "$1" && find . -printf '%p %y %s %l\n' | grep -v ' d ' | sort); }

iotap_mount "$BACKING" "$MNT" --trace "$TR"
"$IOTAP" mark "$MNT" extract || fail "mark extract"
tar -C "$SRC" -cf - . | tar -C "$MNT" -xpf - || fail "tar into the mount"
mv "$MNT/linux/netfilter" "$MNT/linux/netfilter.renamed" || fail "rename"
# a second name, then that name moved: the replay must move the same one
ln "$MNT/linux/types.h" "$MNT/linux/types-link.h" || fail "link"
mv "$MNT/linux/types-link.h" "$MNT/linux/types-moved.h" || fail "rename of a link"
"$IOTAP" mark "$MNT" extract --end || fail "mark extract --end"
"$IOTAP" mark "$MNT" readback || fail "mark readback"
tar -C "$MNT" -cf - . | cat > "$T/readback.tar" || fail "tar out of the mount"
"$IOTAP" mark "$MNT" readback --end || fail "mark readback --end"
iotap_umount "$MNT"
"$IOTAP" info --strict "$TR" > "$T/info.txt" || { cat "$T/info.txt"; fail "info"; }
note "capture: $(grep '^records' "$T/info.txt")"

# 1. into an empty directory
mkdir "$T/r1"
"$IOTAP" replay "$TR" "$T/r1" --trace "$T/r1.iotap" --json -q > "$T/r1.json" 2> "$T/r1.err" ||
	{ cat "$T/r1.err"; fail "replay into an empty directory"; }
$CMP "$IOTAP" "$TR" "$T/r1.iotap" --replay-json "$T/r1.json" || fail "replay 1 differs"
shape "$BACKING" > "$T/a.shape"
shape "$T/r1" > "$T/b.shape"
cmp -s "$T/a.shape" "$T/b.shape" ||
	{ diff "$T/a.shape" "$T/b.shape" | head; fail "replayed tree differs from the captured one"; }
[ "$(stat -c %h "$T/r1/types-hardlink.h")" = 3 ] || fail "hard links not replayed"

# 2. again into the same directory: refused, then --prepare
if "$IOTAP" replay "$TR" "$T/r1" -q 2> "$T/r2.err"; then
	fail "a replay over the replayed tree was not refused"
fi
grep -q "in the way" "$T/r2.err" || { cat "$T/r2.err"; fail "refusal does not say what is in the way"; }
grep -q -- "--prepare" "$T/r2.err" || fail "refusal does not mention --prepare"
# --prepare would remove what the capture creates: only with --clobber
"$IOTAP" replay "$TR" "$T/r1" --prepare -q 2> "$T/r2.err" &&
	fail "--prepare over the replayed tree removed its files without --clobber"
grep -q -- "--clobber" "$T/r2.err" || { cat "$T/r2.err"; fail "--prepare refusal does not name --clobber"; }
"$IOTAP" replay "$TR" "$T/r1" --prepare --clobber --trace "$T/r2.iotap" --json -q > "$T/r2.json" \
	2> "$T/r2.err" || { cat "$T/r2.err"; fail "replay --prepare --clobber over the replayed tree"; }
grep -q "removed: " "$T/r2.err" || { cat "$T/r2.err"; fail "--clobber does not list what it removed"; }
$CMP "$IOTAP" "$TR" "$T/r2.iotap" --replay-json "$T/r2.json" || fail "replay 2 differs"

# 3. the readback phase alone
mkdir "$T/r3"
"$IOTAP" replay "$TR" "$T/r3" --phase readback --prepare --timing asap --trace "$T/r3.iotap" \
	--json -q > "$T/r3.json" 2> "$T/r3.err" || { cat "$T/r3.err"; fail "replay --phase readback"; }
python3 - "$IOTAP" "$TR" "$T/r3.iotap" "$T/r3.json" <<'PY' || fail "phase readback differs"
import json, subprocess, sys
iotap, cap, rep, rj = sys.argv[1:]
def phase(trace, name):
    d = json.loads(subprocess.run([iotap, "report", trace, "--json"], check=True,
                                  capture_output=True, text=True).stdout)
    return [p for p in d["phases"] if p["name"] == name][0]
a, b = phase(cap, "readback"), phase(rep, "readback")
keys = [("read", "ops"), ("read", "bytes"), ("write", "ops"), ("write", "bytes")]
bad = [k for k in keys if a[k[0]][k[1]] != b[k[0]][k[1]]]
meta = lambda p: {k: (v["ops"], v["errors"]) for k, v in p["meta"].items()}
if meta(a) != meta(b):
    bad.append(("meta", str(meta(a)), str(meta(b))))
r = json.load(open(rj))
if r["differences"] or r["unreplayable"]:
    bad.append(("replay", r["examples"]))
for x in bad:
    print("readback:", x)
print("# readback phase: %d reads, %d bytes: %s" % (a["read"]["ops"], a["read"]["bytes"],
      "same" if not bad else "differs"))
sys.exit(1 if bad else 0)
PY
exit 0
