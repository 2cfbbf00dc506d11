#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""app_compare_check.py JSON CSV HTML KIND - compare's application figures agree

The application figures of `iotap compare --json` (JSON), `--csv` (CSV: the
rows of phase "application") and `--html` (HTML: the "Application figures
(KIND)" section) are the same, cell by cell: traces, mean, ratio to the
baseline, and the verdicts. Exit 1 with each difference named.
"""
import csv
import html
import json
import re
import sys

js, cs, ht, kind = sys.argv[1:5]
app = json.load(open(js))["application"]
rows = [r for r in csv.DictReader(open(cs)) if r["phase"] == "application"]
page = open(ht).read()
bad = []
if not app or app["kind"] != kind:
    sys.exit(f"compare --json: application {app and app['kind']}, want {kind}")
m = re.search(r"<section><h2>Application figures \(%s\)</h2>(.*?)</section>" % kind, page, re.S)
if not m:
    sys.exit("no application section in the HTML page")
sec = m.group(1)
trs = re.findall(r"<tr><td class=\"l\">(.*?)</td>(.*?)</tr>", sec)
if len(trs) != len(app["figures"]):
    bad.append(f"HTML: {len(trs)} figure rows, JSON {len(app['figures'])}")
got = {(r["figure"], r["run"]): r for r in rows}
if len(rows) != sum(len(v) for v in app["figures"].values()):
    bad.append(f"CSV: {len(rows)} application rows")
for (key, cells), (label, tds) in zip(app["figures"].items(), trs):
    vals = re.findall(r"<td[^>]*>(.*?)</td>", tds)
    for i, cell in enumerate(cells):
        r = got.get((key, cell["run"]))
        h = vals[2 * i - 1 if i else 0]         # value cells, each after the first with a ratio
        if r is None:
            bad.append(f"CSV lacks {key} {cell['run']}")
            continue
        if int(r["traces"]) != cell["n"]:
            bad.append(f"CSV {key} {cell['run']} traces {r['traces']}, JSON n {cell['n']}")
        if cell["mean"] is None:
            if r["mean"] != "" or h != "-":
                bad.append(f"{key} {cell['run']}: no value in JSON, CSV '{r['mean']}', HTML {h}")
            continue
        if abs(float(r["mean"]) - cell["mean"]) > 1e-9 + 1e-6 * abs(cell["mean"]):
            bad.append(f"CSV {key} {cell['run']} mean {r['mean']}, JSON {cell['mean']}")
        if (cell["ratio"] is None) != (r["ratio"] == "") or \
           (cell["ratio"] is not None and abs(float(r["ratio"]) - cell["ratio"]) > 1e-4):
            bad.append(f"CSV {key} {cell['run']} ratio '{r['ratio']}', JSON {cell['ratio']}")
        # HTML: the value to the figure's decimals (as compare's text), then its ratio
        dec = len(h.split(".")[1]) if "." in h else 0
        if abs(float(h) - cell["mean"]) > 0.51 * 10 ** -dec:
            bad.append(f"HTML {key} {cell['run']}: {h}, JSON {cell['mean']}")
        if i and cell["ratio"] is not None and abs(float(vals[2 * i]) - cell["ratio"]) > 0.0006:
            bad.append(f"HTML {key} ratio {vals[2 * i]}, JSON {cell['ratio']}")
for v in app["verdicts"]:
    if not re.search(r"<li>\w+ [^<]*: <b>%s</b> \(" % re.escape(html.escape(v["best"])), sec):
        bad.append(f"HTML lacks the verdict {v}")
if len(re.findall(r"<li>", sec)) != len(app["verdicts"]):
    bad.append("HTML verdicts differ in number from JSON's")
if bad:
    print("\n".join(bad))
    sys.exit(1)
