// SPDX-License-Identifier: MIT
// export_check.js - tests/e2e/export-duckdb.sh's checks, run by DuckDB
// (npm @duckdb/node-api, installed by tests/run into tests/.node):
//
//   node export_check.js CALLS.parquet CALLS.csv EVENTS.parquet REPORT.json PATHS.json
//
// PATHS.json: [[path, op, rows]...], every read and write of the capture.
//
// - the Parquet and CSV calls tables are the same rows, column for column;
// - per op: count, bytes (reads, writes) and mean latency equal report's;
// - the row count is the calls report counts;
// - the paths of the writes and reads are the ones PATHS.json lists,
//   across the renames;
// - the events table has the phases and the names.
// Prints what differs and exits 1, or exits 0.
'use strict';
const { DuckDBInstance } = require('@duckdb/node-api');
const fs = require('fs');

const [pq, csv, ev, repFile, pathsFile] = process.argv.slice(2);
const rep = JSON.parse(fs.readFileSync(repFile, 'utf8'));
const wantPaths = JSON.parse(fs.readFileSync(pathsFile, 'utf8'));
let bad = 0;
const fail = (m) => { console.error('FAIL: ' + m); bad++; };

(async () => {
	const db = await DuckDBInstance.create(':memory:');
	const c = await db.connect();
	const q = async (sql) => (await c.runAndReadAll(sql)).getRowObjectsJson();

	await c.run(`create view p as select * from read_parquet('${pq}')`);
	await c.run(`create view v as select * from read_csv('${csv}', header = true,
		types = {'time': 'TIMESTAMPTZ'})`);
	// the same rows in both (time to the microsecond DuckDB keeps)
	const cols = 'time, host, tid, pid, uid, op, path, file, "offset", length, result, ' +
		'error, latency_ns, flags, flag_names, phase';
	for (const [a, b] of [['p', 'v'], ['v', 'p']]) {
		const d = await q(`select count(*) n from (select ${cols} from ${a}
			except all select ${cols} from ${b})`);
		if (d[0].n !== '0') {
			fail(`${d[0].n} rows of ${a} are not in ${b}`);
			console.error(JSON.stringify(await q(`select ${cols} from ${a}
				except all select ${cols} from ${b} limit 2`)));
		}
	}
	const n = (await q('select count(*) n from p'))[0].n;
	const t = rep.total;
	let calls = 0;
	for (const op of Object.keys(t.latency_us))
		calls += t.latency_us[op].count;
	if (Number(n) !== calls)
		fail(`${n} rows, report counts ${calls} calls`);
	const per = await q(`select op, count(*) n, sum(latency_ns) lat,
		sum(case when result > 0 then result else 0 end) bytes from p group by op`);
	const seen = new Set();
	for (const r of per) {
		const L = t.latency_us[r.op];
		seen.add(r.op);
		if (!L) {
			fail(`op ${r.op}: ${r.n} rows, not in the report`);
			continue;
		}
		if (Number(r.n) !== L.count)
			fail(`op ${r.op}: ${r.n} rows, report ${L.count}`);
		// the report prints the mean in us with 3 decimals
		const mean = Number(BigInt(r.lat) * 1000n / BigInt(r.n)) / 1e6;
		if (Math.abs(mean - L.mean) > 0.0011)
			fail(`op ${r.op}: mean latency ${mean} us, report ${L.mean}`);
		const dir = r.op === 'read' ? t.read : r.op === 'write' ? t.write : null;
		if (dir && String(dir.bytes) !== r.bytes)
			fail(`op ${r.op}: ${r.bytes} bytes, report ${dir.bytes}`);
		if (dir && dir.ops !== Number(r.n))
			fail(`op ${r.op}: ${r.n} rows, report's ${r.op} ops ${dir.ops}`);
	}
	for (const op of Object.keys(t.latency_us))
		if (!seen.has(op))
			fail(`op ${op} in the report, not in the export`);
	// paths as they were
	const got = await q(`select op, path, count(*) n from p where op in ('read', 'write')
		and path is not null group by op, path`);
	const gotMap = {};
	for (const r of got)
		gotMap[r.path + ' ' + r.op] = Number(r.n);
	const wantMap = {};
	for (const [path, op, rows] of wantPaths)
		wantMap[path + ' ' + op] = rows;
	for (const k of new Set([...Object.keys(gotMap), ...Object.keys(wantMap)]))
		if (gotMap[k] !== wantMap[k])
			fail(`'${k}': ${gotMap[k] || 0} rows, want ${wantMap[k] || 0}`);
	// the events table
	const ph = await q(`select name from read_parquet('${ev}') where type = 'phase'
		and kind = 'begin' order by time`);
	if (ph.map((r) => r.name).join(',') !== 'one,two')
		fail(`phases ${JSON.stringify(ph)}`);
	const nm = await q(`select count(*) n from read_parquet('${ev}') where type = 'name'
		and path = 'd/b'`);
	if (nm[0].n === '0')
		fail('no NAME event for d/b');
	// statistics in the footer: DuckDB sees min/max per row group
	const st = await q(`select count(*) n from parquet_metadata('${pq}')
		where stats_min_value is not null and stats_max_value is not null`);
	if (st[0].n === '0') {
		fail('no column statistics');
		console.error(JSON.stringify(await q(`select * from parquet_metadata('${pq}')
			limit 2`)));
	}
	process.exit(bad ? 1 : 0);
})().catch((e) => { console.error('FAIL: ' + e); process.exit(1); });
