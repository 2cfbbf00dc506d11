// SPDX-License-Identifier: MIT
// fleet.js - run fleet.sql over several hosts' `iotap export` Parquet files
// with DuckDB (npm @duckdb/node-api):
//
//   NODE_PATH=.../node_modules node examples/fleet.js [--json] FILE.parquet...
//
// The files are one view, `calls`; each statement of fleet.sql is printed
// under its comment as an aligned table (times in UTC), or with --json as
// one array of {title, rows} (tests/e2e/export-duckdb.sh reads that).
'use strict';
const { DuckDBInstance } = require('@duckdb/node-api');
const fs = require('fs');
const path = require('path');

let args = process.argv.slice(2);
const json = args[0] === '--json';
if (json)
	args = args.slice(1);
if (!args.length) {
	console.error('usage: node fleet.js [--json] FILE.parquet...');
	process.exit(2);
}

// statements end with ';' at the end of a line; a title is the comment
// paragraph right before one
function statements(text) {
	const out = [];
	let title = [], sql = [];
	for (const line of text.split('\n')) {
		if (!sql.length && line.startsWith('--')) {
			title.push(line.replace(/^--\s?/, ''));
		} else if (!sql.length && !line.trim()) {
			title = [];
		} else {
			sql.push(line);
			if (line.trimEnd().endsWith(';')) {
				out.push({ title: title.join(' ').replace(/\s+/g, ' '), sql: sql.join('\n') });
				title = [];
				sql = [];
			}
		}
	}
	return out;
}

function table(cols, rows) {
	const cell = (v) => (v === null ? '' : String(v));
	const w = cols.map((c, i) => Math.max(c.length, ...rows.map((r) => cell(r[i]).length)));
	const line = (vs) => vs.map((v, i) => cell(v).padEnd(w[i])).join('  ').trimEnd();
	return [line(cols), ...rows.map(line)].join('\n');
}

(async () => {
	const c = await (await DuckDBInstance.create(':memory:')).connect();
	const list = args.map((f) => `'${f.replace(/'/g, "''")}'`).join(', ');
	await c.run("set TimeZone = 'UTC'");
	await c.run(`create view calls as from read_parquet([${list}])`);
	const sqlText = fs.readFileSync(path.join(__dirname, 'fleet.sql'), 'utf8');
	const res = [];
	for (const s of statements(sqlText)) {
		const r = await c.runAndReadAll(s.sql);
		if (json) {
			res.push({ title: s.title, rows: r.getRowObjectsJson() });
		} else {
			const cols = r.columnNames();
			const rows = r.getRowsJson().map((row) =>
				row.map((v) => (typeof v === 'string' ? v.replace(/\.000(\+00)?$|\+00$/, '') : v)));
			console.log(`-- ${s.title}\n${table(cols, rows)}\n`);
		}
	}
	if (json)
		console.log(JSON.stringify(res));
})().catch((e) => { console.error('fleet.js: ' + e.message); process.exit(1); });
