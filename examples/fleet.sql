-- fleet.sql - three questions over many hosts' `iotap export` Parquet files,
-- in DuckDB's SQL. `calls` is every host's calls table as one:
--   create view calls as from read_parquet(['web1.parquet', 'db1.parquet']);
-- examples/fleet.js runs the statements in order, each under the comment
-- before it; examples/fleet.sh is the whole recipe, and
-- tests/e2e/export-duckdb.sh checks the answers against `iotap report`.

-- IOPS per host per minute (reads and writes; a minute the capture only
-- partly covers still divides by 60)
select host, date_trunc('minute', time) as minute,
       count(*) filter (where op = 'read') as reads,
       count(*) filter (where op = 'write') as writes,
       round(count(*) / 60, 1) as iops
from calls where op in ('read', 'write')
group by all order by host, minute;

-- p99 latency per phase and host (microseconds)
select phase, host,
       count(*) filter (where op = 'read') as reads,
       round(quantile_disc(latency_ns, 0.99) filter (where op = 'read') / 1e3, 1) as read_p99_us,
       count(*) filter (where op = 'write') as writes,
       round(quantile_disc(latency_ns, 0.99) filter (where op = 'write') / 1e3, 1) as write_p99_us
from calls where op in ('read', 'write')
group by all order by min(time), host;

-- the 10 slowest files: the most time spent in calls on them (every op:
-- reads, writes, fsyncs, opens ...)
select host, path, count(*) as calls, round(sum(latency_ns) / 1e9, 3) as total_s,
       round(avg(latency_ns) / 1e3, 1) as mean_us, round(max(latency_ns) / 1e3, 1) as max_us
from calls where path is not null and path <> '.'
group by all order by sum(latency_ns) desc, host, path limit 10;
