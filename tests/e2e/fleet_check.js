// SPDX-License-Identifier: MIT
// fleet_check.js - examples/fleet.sql's answers (examples/fleet.js --json)
// against each host's own `iotap report`, for tests/e2e/export-duckdb.sh:
//
//   node fleet_check.js FLEET.json HOST=REPORT.json=CALLS.csv...
//
// CALLS.csv: that host's calls exported as CSV (--host HOST).
// - IOPS per host per minute: every host has rows; its reads and writes
//   summed over the minutes are the report's read and write ops; iops is
//   the minute's calls / 60;
// - p99 per phase and host: a row per phase of each host's report, with
//   its read and write counts, and p99s within the histogram's 1/128 (and
//   the 0.1 us the query rounds to) of the report's;
// - the 10 slowest files: the paths with the most latency summed over
//   their calls, their calls and slowest call, as summed here from the
//   CSV rows.
// Prints what differs and exits 1, or exits 0.
'use strict';
const fs = require('fs');

const [fleetFile, ...hostArgs] = process.argv.slice(2);
const [iops, p99, slow] = JSON.parse(fs.readFileSync(fleetFile, 'utf8')).map((s) => s.rows);
let bad = 0;
const fail = (m) => { console.error('FAIL: ' + m); bad++; };
const near = (a, b) => a !== null && Math.abs(a - b) <= b / 128 + 0.05;
const files = new Map();

// one CSV line's fields ("..." quoted, "" a quote inside)
function csvSplit(line) {
	const out = [];
	let i = 0;
	while (i <= line.length) {
		let v = '';
		if (line[i] === '"') {
			for (i++; i < line.length; i++) {
				if (line[i] === '"' && line[i + 1] === '"')
					v += '"', i++;
				else if (line[i] === '"')
					break;
				else
					v += line[i];
			}
			i++;
		} else {
			const j = line.indexOf(',', i);
			v = line.slice(i, j < 0 ? line.length : j);
			i = j < 0 ? line.length : j;
		}
		out.push(v);
		i++;
	}
	return out;
}

for (const arg of hostArgs) {
	const [host, repFile, csvFile] = arg.split('=');
	const rep = JSON.parse(fs.readFileSync(repFile, 'utf8'));

	const mins = iops.filter((r) => r.host === host);
	if (!mins.length)
		fail(`IOPS: no rows for host ${host}`);
	let rd = 0, wr = 0;
	for (const r of mins) {
		rd += Number(r.reads);
		wr += Number(r.writes);
		const want = Math.round((Number(r.reads) + Number(r.writes)) / 60 * 10) / 10;
		if (Math.abs(r.iops - want) > 0.051)
			fail(`IOPS: ${host} ${r.minute}: iops ${r.iops}, ${r.reads}+${r.writes} calls / 60 is ${want}`);
	}
	if (rd !== rep.total.read.ops || wr !== rep.total.write.ops)
		fail(`IOPS: ${host}: ${rd} reads, ${wr} writes; report ${rep.total.read.ops}, ${rep.total.write.ops}`);

	for (const ph of rep.phases) {
		const r = p99.find((x) => x.host === host && x.phase === ph.name);
		if (!r) {
			fail(`p99: no row for phase ${ph.name} of ${host}`);
			continue;
		}
		for (const op of ['read', 'write']) {
			const L = ph.latency_us[op] || { count: 0 };
			const n = Number(r[op + 's']), v = r[op + '_p99_us'];
			if (n !== L.count)
				fail(`p99: ${ph.name} ${host}: ${n} ${op}s, report ${L.count}`);
			else if (n && !near(v, L.p99))
				fail(`p99: ${ph.name} ${host}: ${op} p99 ${v} us, report ${L.p99}`);
		}
	}

	// the calls as CSV (the same rows as the Parquet file, export_check.js)
	const lines = fs.readFileSync(csvFile, 'utf8').split('\n').filter((l) => l);
	const head = csvSplit(lines[0]);
	const col = (n) => head.indexOf(n);
	for (const l of lines.slice(1)) {
		const f = csvSplit(l);
		const p = f[col('path')], lat = BigInt(f[col('latency_ns')]);
		if (p === '' || p === '.')
			continue;
		const k = host + '\0' + p;
		const o = files.get(k) || { host, path: p, calls: 0, sum: 0n, max: null };
		o.calls++;
		o.sum += lat;
		o.max = o.max === null || lat > o.max ? lat : o.max;
		files.set(k, o);
	}
}

// the 10 slowest, summed here from the CSV rows
const want = [...files.values()].sort((x, y) => (x.sum > y.sum ? -1 : x.sum < y.sum ? 1 :
	x.host < y.host ? -1 : x.host > y.host ? 1 : x.path < y.path ? -1 : 1)).slice(0, 10);
if (slow.length !== want.length)
	fail(`slowest: ${slow.length} rows, want ${want.length}`);
want.forEach((w, i) => {
	const r = slow[i] || {};
	const tot = Math.round(Number(w.sum) / 1e6) / 1e3, max = Math.round(Number(w.max) / 100) / 10;
	if (r.host !== w.host || r.path !== w.path || Number(r.calls) !== w.calls ||
	    Math.abs(r.total_s - tot) > 0.0011 || Math.abs(r.max_us - max) > 0.11)
		fail(`slowest: row ${i + 1} ${JSON.stringify(r)}, want ${w.host} ${w.path} ` +
		     `${w.calls} calls, ${tot} s, max ${max} us`);
});
const hosts = new Set(iops.map((r) => r.host));
if (hosts.size !== hostArgs.length)
	fail(`IOPS: hosts ${[...hosts].join(', ')}`);
process.exit(bad ? 1 : 0);
