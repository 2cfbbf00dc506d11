#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""replay_compare.py - do a capture and its replay hold the same work?

usage: replay_compare.py IOTAP CAPTURE REPLAY [--replay-json FILE]

Reads `iotap report --json` of both traces and requires, per phase (when
the capture has phase markers: the replay places them at the same ops)
and in total, exactly the same: read and write op counts and bytes,
errors, fsyncs, and for every metadata op type its count and its errors.
Automatic phases of an unmarked capture are cut by time or op order,
which a replay with other timing changes: then only the totals count. With --replay-json (the output
of `iotap replay --json`) it also requires zero differences and zero
unreplayable ops. Prints one line per mismatch; exit 0 if none, 1 if any.
Used by tests/e2e/replay-*.sh.
"""
import json
import subprocess
import sys


def report(iotap, trace, phases_from=None):
    cmd = [iotap, "report", trace, "--json"]
    if phases_from:
        cmd += ["--phases-from", phases_from]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def figures(ph):
    f = {}
    for d in ("read", "write"):
        x = ph.get(d) or {}
        f[d + ".ops"] = x.get("ops", 0)
        f[d + ".bytes"] = x.get("bytes", 0)
        f[d + ".errors"] = x.get("errors", 0)
    f["fsyncs"] = ph.get("fsyncs", 0)
    for op, x in (ph.get("meta") or {}).items():
        f["meta." + op + ".ops"] = x.get("ops", 0)
        f["meta." + op + ".errors"] = x.get("errors", 0)
    return f


def diff(where, a, b, out):
    fa, fb = figures(a), figures(b)
    for k in sorted(set(fa) | set(fb)):
        if fa.get(k, 0) != fb.get(k, 0):
            out.append("%s: %s capture %s, replay %s" % (where, k, fa.get(k, 0), fb.get(k, 0)))


def main():
    args = sys.argv[1:]
    rjson = None
    if "--replay-json" in args:
        i = args.index("--replay-json")
        rjson = args[i + 1]
        del args[i:i + 2]
    if len(args) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    iotap, cap, rep = args
    a = report(iotap, cap)
    marked = a["trace"].get("phase_source") == "markers"
    b = report(iotap, rep)
    out = []
    pa, pb = (a["phases"], b["phases"]) if marked else ([], [])
    if len(pa) != len(pb):
        out.append("phases: capture %d, replay %d" % (len(pa), len(pb)))
    for i, (x, y) in enumerate(zip(pa, pb)):
        if x["name"] != y["name"]:
            out.append("phase %d: capture '%s', replay '%s'" % (i, x["name"], y["name"]))
        diff("phase %d '%s'" % (i, x["name"]), x, y, out)
    diff("total", a["total"], b["total"], out)
    if rjson:
        with open(rjson) as fh:
            r = json.load(fh)
        if r["differences"] or r["unreplayable"]:
            out.append("replay: %d differences, %d unreplayable: %s" %
                       (r["differences"], r["unreplayable"], "; ".join(r["examples"])))
        if r.get("trace_lost"):
            out.append("replay trace lost %d records" % r["trace_lost"])
    for line in out:
        print(line)
    n_ops = sum(v for k, v in figures(a["total"]).items() if k.endswith(".ops"))
    print("# %s, %d ops per type compared: %s" %
          ("%d marked phases and the total" % len(pa) if marked else "the total (no markers)",
           n_ops, "same" if not out else "%d mismatches" % len(out)))
    return 1 if out else 0


if __name__ == "__main__":
    sys.exit(main())
