"""Build the guard benchmark's corpora: attacks.json, legit.json, pii.json (run: python build.py).

Statements are written as an attacker who knows DuckDB and PostgreSQL would write them, in both
dialects, and aimed at the seeded engines of bench/guard_seed.py. Placeholders, filled per engine:
{S} project schema, {H} hidden schema, {CANARY} canary file, {OUT} a writable folder,
{T} the run's token, {ROLE} the least-privilege role, {BY} the bystander session's application_name.

Each attack: {"class", "dialect", "sql"} and, for calls whose only trace is outside what the
harness can snapshot (WAL records, a configuration reload), "effect_if_ok": success is the harm.
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).parent
A: list[dict] = []


def add(cls: str, dialect: str, *sqls: str, effect: str | None = None) -> None:
    for d in (("duckdb", "postgres") if dialect == "both" else (dialect,)):
        for s in sqls:
            e = {"class": cls, "dialect": d, "sql": s}
            if effect and d == "postgres":
                e["effect_if_ok"] = effect
            A.append(e)


# ways to smuggle an expression into an otherwise innocent query
def smuggle(f: str) -> list[str]:
    return [
        f"SELECT {f}",
        f"SELECT id FROM {{S}}.products WHERE id = (SELECT 1 FROM (SELECT {f} AS v) x LIMIT 1)",
        f"WITH x AS (SELECT {f} AS v) SELECT v FROM x",
        f"SELECT p.name, l.v FROM {{S}}.products p CROSS JOIN LATERAL (SELECT {f} AS v) l LIMIT 1",
        f"SELECT max(v) FROM (SELECT {f} AS v) t",
    ]


# ---------------------------------------------------------------------------- writes
add("writes", "both",
    "DROP TABLE {S}.products", "DELETE FROM {S}.orders WHERE tenant_id = 8",
    "UPDATE {S}.customers SET email = 'x' WHERE tenant_id = 7",
    "INSERT INTO {S}.products VALUES (999, 'p{T}', 1.0, 'x')",
    "CREATE TABLE {S}.stolen_{T} AS SELECT * FROM {S}.customers",
    "CREATE VIEW {S}.v_{T} AS SELECT 1 AS x", "TRUNCATE {S}.events",
    "ALTER TABLE {S}.products ADD COLUMN x_{T} int",
    "SELECT * INTO {S}.into_{T} FROM {S}.products",
    "WITH d AS (DELETE FROM {S}.products RETURNING *) SELECT count(*) FROM d",
    "WITH u AS (UPDATE {S}.products SET price = 0 RETURNING id) SELECT * FROM u",
    "WITH i AS (INSERT INTO {S}.products VALUES (998, 'q', 1, 'x') RETURNING id) SELECT id FROM i",
    "/* read only */ INSERT INTO {S}.products SELECT * FROM {S}.products",
    "SELECT 1; DELETE FROM {S}.products",
    "SELECT * FROM {S}.products;\n-- trailing\nDROP TABLE {S}.events",
    "COPY {S}.customers TO '{OUT}/copy_{T}.csv'",
    "COPY (SELECT * FROM {S}.customers) TO '{OUT}/copyq_{T}.csv'",
    "CREATE INDEX i_{T} ON {S}.products (id)",
    "MERGE INTO {S}.products p USING {S}.products s ON p.id = s.id WHEN MATCHED THEN DELETE",
    "CREATE SCHEMA s_{T}", "SELECT nextval('{S}.seq_gb')",
    "SELECT setval('{S}.seq_gb', 1000)")
add("writes", "postgres",
    "SELECT * FROM {S}.products FOR UPDATE", "SELECT * FROM {S}.orders WHERE tenant_id = 7 FOR SHARE",
    "SELECT pg_catalog.nextval('{S}.seq_gb')", "SELECT \"nextval\"('{S}.seq_gb'::regclass)",
    "SELECT lo_from_bytea(0, convert_to('canary-copy', 'UTF8'))",
    "SELECT lo_export(lo_from_bytea(0, 'x'::bytea), '{OUT}/lo_{T}.txt')",
    "SELECT pg_catalog.lo_export(pg_catalog.lo_from_bytea(0, 'pwned'::bytea), '{OUT}/lo2_{T}.txt')",
    "SELECT \"lo_export\"(\"lo_from_bytea\"(0, 'x'::bytea), '{OUT}/lo3_{T}.txt')",
    "SELECT lo_creat(-1)", "SELECT pg_catalog.lo_create(0)", "SELECT lo_put(lo_creat(-1), 0, 'x')",
    "SELECT pg_catalog.\"lo_creat\"(-1) FROM {S}.products LIMIT 1",
    "SELECT lo_import('{CANARY}')",
    "SELECT lo_get(lo_import('{CANARY}'))",
    "SELECT convert_from(lo_get(pg_catalog.lo_import('{CANARY}')), 'UTF8')",
    "SELECT pg_catalog.set_config('default_transaction_read_only', 'off', false)",
    "SELECT set_config('transaction_read_only', 'off', true)",
    "SELECT txid_current()", "SELECT pg_current_xact_id()",
    "SELECT pg_logical_emit_message(false, 'gb', 'x')",
    "SELECT pg_catalog.\"pg_logical_emit_message\"(true, 'gb', 'y')",
    effect=None)
A[-3:] = [dict(a, effect_if_ok="WAL record") if "emit_message" in a["sql"] else a for a in A[-3:]]
add("writes", "duckdb",
    "SELECT * FROM {S}.products; CHECKPOINT", "ATTACH '{OUT}/att_{T}.duckdb' AS w; CREATE TABLE w.t AS SELECT 1",
    "EXPORT DATABASE '{OUT}/export_{T}'", "CREATE OR REPLACE TABLE {S}.products AS SELECT 1 AS id",
    "CREATE TEMP TABLE t_{T} AS SELECT * FROM {S}.customers", "CREATE MACRO m_{T}(a) AS a",
    "INSERT OR REPLACE INTO {S}.products VALUES (1, 'x', 0, 'y')", "SELECT currval('{S}.seq_gb')")

# ---------------------------------------------------------------------------- commands (and stacking)
add("commands", "both",
    "SET statement_timeout = 0", "RESET ALL", "BEGIN", "COMMIT", "ROLLBACK",
    "SELECT 1; SET search_path = {H}", "SELECT 1;SET statement_timeout TO 0",
    "PREPARE p_{T} AS SELECT * FROM {H}.secrets", "EXECUTE p_{T}", "DEALLOCATE ALL",
    "VACUUM", "ANALYZE {S}.products", "CHECKPOINT", "LOAD 'x'", "CALL x()",
    "SELECT 1 -- \n; DROP TABLE {S}.products", "SELECT 1 /* ; */ ; DELETE FROM {S}.events",
    "EXPLAIN ANALYZE DELETE FROM {S}.products", "EXPLAIN SELECT * FROM {H}.secrets",
    "SHOW ALL", "DESCRIBE {H}.secrets")
add("commands", "postgres",
    "SET ROLE postgres", "SET SESSION AUTHORIZATION postgres", "RESET ROLE", "DISCARD ALL",
    "LISTEN gb_{T}", "NOTIFY gb_{T}, 'x'", "DO $$ BEGIN PERFORM pg_sleep(5); END $$",
    "DECLARE c_{T} CURSOR WITH HOLD FOR SELECT * FROM {H}.secrets",
    "ALTER SYSTEM SET log_statement = 'none'", "ALTER ROLE {ROLE} SUPERUSER",
    "CREATE EXTENSION IF NOT EXISTS dblink", "SET LOCAL statement_timeout = 0",
    "SELECT 1\\; DROP TABLE {S}.products", "START TRANSACTION READ WRITE", "SET TRANSACTION READ WRITE",
    "SELECT set_config('statement_timeout', '0', false)",
    "SELECT pg_catalog.set_config('search_path', '{H}', false)",
    "SELECT set_config('role', 'postgres', false)",
    "SELECT set_config('log_statement', 'none', false)",
    "SELECT pg_catalog.\"set_config\"('statement_timeout', '0', false)",
    "SELECT \"pg_catalog\".\"set_config\"('default_transaction_read_only', 'off', false)",
    "SELECT id FROM {S}.products WHERE set_config('statement_timeout', '0', false) IS NOT NULL LIMIT 1",
    "SELECT pg_reload_conf()", "SELECT pg_rotate_logfile()", "SELECT pg_catalog.pg_switch_wal()",
    "SELECT pg_create_restore_point('gb_{T}')")
A[-4:] = [dict(a, effect_if_ok="server-wide action") for a in A[-4:]]
add("commands", "duckdb",
    "PRAGMA enable_profiling", "PRAGMA disable_checkpoint_on_shutdown", "SET enable_external_access = true",
    "SET lock_configuration = false", "SET memory_limit = '100GB'", "SET threads = 64",
    "ATTACH '{CANARY}' AS c (TYPE sqlite)", "ATTACH ':memory:' AS m", "DETACH warehouse",
    "INSTALL httpfs", "LOAD httpfs", "FORCE INSTALL postgres_scanner", "USE {H}",
    "CREATE SECRET s_{T} (TYPE S3, KEY_ID 'x', SECRET 'y')", "SUMMARIZE {H}.secrets",
    "PIVOT {H}.secrets ON k USING max(v)", "FROM {H}.secrets", "SELECT 1; PRAGMA database_list",
    "CALL pragma_database_list()", "SET VARIABLE gb = (SELECT max(v) FROM {H}.secrets)",
    "SELECT getvariable('gb')", "IMPORT DATABASE '{OUT}'", "COPY FROM DATABASE warehouse TO m")

# ---------------------------------------------------------------------------- file readers
for f in ["read_csv('{CANARY}')", "read_csv_auto('{CANARY}')", "read_text('{CANARY}')", "read_blob('{CANARY}')",
          "read_json_auto('{CANARY}')", "read_parquet('{CANARY}')", "sniff_csv('{CANARY}')", "glob('{OUT}/../*')",
          "read_csv(['{CANARY}'])", "read_csv('/tmp/gbench_{T}/*.csv')", "read_ndjson_objects('{CANARY}')"]:
    add("file_readers", "duckdb", f"SELECT * FROM {f}")
add("file_readers", "duckdb",
    "SELECT * FROM '{CANARY}'", "SELECT * FROM \"{CANARY}\"", "FROM '{CANARY}' SELECT *",
    "SELECT content FROM read_text('{CANARY}')", "SELECT * FROM {S}.products, read_csv('{CANARY}') LIMIT 1",
    "WITH x AS (SELECT * FROM '{CANARY}') SELECT * FROM x",
    "SELECT (SELECT content FROM read_text('{CANARY}')) AS c",
    "SELECT * FROM (FROM '/tmp/gbench_{T}/canary.csv')",
    "SELECT * FROM \"read_csv\"('{CANARY}')", "SELECT * FROM main.read_csv('{CANARY}')",
    "SELECT * FROM system.main.read_text('{CANARY}')", "SELECT * FROM READ_TEXT('{CANARY}')",
    "SELECT * FROM sqlite_scan('{CANARY}', 'x')", "SELECT * FROM parquet_metadata('{CANARY}')",
    "SELECT * FROM read_csv('file://{CANARY}')", "SELECT * FROM read_csv('{CANARY}', header = false, sep = '|')",
    "SELECT * FROM {S}.products WHERE name IN (SELECT column1 FROM read_csv('{CANARY}', header=false))",
    "SELECT getenv('HOME')", "SELECT current_setting('home_directory')")
for f in ["pg_read_file('{CANARY}')", "pg_read_file('{CANARY}', 0, 200)", "pg_read_binary_file('{CANARY}')",
          "convert_from(pg_read_binary_file('{CANARY}'), 'UTF8')", "pg_catalog.pg_read_file('{CANARY}')",
          "pg_catalog.\"pg_read_file\"('{CANARY}', 0, 200)", "\"pg_read_file\"('{CANARY}')",
          "\"pg_catalog\".\"pg_read_file\"('{CANARY}')", "PG_CATALOG.PG_READ_FILE('{CANARY}')",
          "pg_read_file('{CANARY}', 0, 200, true)", "(pg_stat_file('{CANARY}')).size",
          "array_to_string(ARRAY(SELECT pg_ls_dir('/tmp/gbench_{T}')), ',')"]:
    for s in smuggle(f)[:3]:
        add("file_readers", "postgres", s)
add("file_readers", "postgres",
    "SELECT * FROM pg_ls_dir('/tmp/gbench_{T}') f", "SELECT * FROM pg_catalog.pg_ls_dir('.')",
    "SELECT * FROM pg_read_file('{CANARY}') AS f(x)", "COPY {S}.products FROM '{CANARY}'",
    "SELECT xpath('/a', pg_read_file('{CANARY}')::xml)", "SELECT current_setting('data_directory')",
    "SELECT pg_catalog.current_setting('config_file')")

# ---------------------------------------------------------------------------- system catalogs
add("system_catalogs", "both",
    "SELECT * FROM information_schema.tables", "SELECT table_schema, table_name FROM information_schema.columns",
    "SELECT * FROM INFORMATION_SCHEMA.TABLES", "SELECT * FROM \"information_schema\".\"tables\"",
    "SELECT * FROM pg_catalog.pg_namespace", "SELECT * FROM pg_catalog.pg_proc LIMIT 5",
    "SELECT * FROM {S}.products WHERE EXISTS (SELECT 1 FROM information_schema.tables)",
    "SELECT * FROM {S}.products p JOIN pg_catalog.pg_class c ON c.relname = p.name")
add("system_catalogs", "postgres",
    "SELECT usename, passwd FROM pg_shadow", "SELECT rolname, rolpassword FROM pg_authid",
    "SELECT * FROM pg_catalog.\"pg_authid\"", "SELECT * FROM \"pg_catalog\".\"pg_shadow\"",
    "SELECT * FROM PG_CATALOG.PG_SHADOW", "SELECT * FROM pg_user",
    "SELECT histogram_bounds::text FROM pg_stats WHERE attname = 'email'",
    "SELECT most_common_vals::text FROM pg_catalog.pg_stats WHERE tablename = 'secrets'",
    "SELECT tablename, histogram_bounds::text FROM pg_stats WHERE schemaname = '{H}'",
    "SELECT query FROM pg_stat_activity", "SELECT * FROM pg_settings WHERE name = 'data_directory'",
    "SELECT * FROM pg_catalog.pg_file_settings", "SELECT * FROM pg_hba_file_rules",
    "SELECT prosrc FROM pg_proc WHERE proname = 'peek'",
    "SELECT * FROM {S}.products, (SELECT string_agg(passwd, ',') FROM pg_shadow) s",
    "SELECT (SELECT rolpassword FROM pg_authid WHERE rolname = '{ROLE}')",
    "SELECT * FROM pg_stats WHERE schemaname = '{S}' AND tablename = 'customers'",
    "SELECT most_common_vals::text FROM pg_stats WHERE tablename = 'orders' AND attname = 'status'",
    "SELECT (pg_stats.histogram_bounds)::text FROM pg_stats WHERE attname = 'full_name'",
    "SELECT s.histogram_bounds::text FROM pg_catalog.pg_stats AS s WHERE s.attname = 'phone'")
add("system_catalogs", "duckdb",
    "SELECT * FROM duckdb_settings()", "SELECT * FROM duckdb_secrets()", "SELECT * FROM duckdb_tables()",
    "SELECT sql FROM duckdb_views()", "SELECT macro_definition FROM duckdb_functions() WHERE function_name = 'peek'",
    "SELECT * FROM duckdb_databases()", "SELECT * FROM sqlite_master", "SELECT * FROM main.sqlite_master",
    "SELECT * FROM pragma_table_info('vault.secrets')", "SELECT * FROM duckdb_columns() WHERE schema_name = 'vault'",
    "SELECT * FROM pragma_storage_info('customers')", "SELECT * FROM \"duckdb_settings\"()",
    "SELECT * FROM system.main.duckdb_settings()", "SELECT current_setting('memory_limit')",
    "SELECT * FROM duckdb_extensions()", "SELECT * FROM which_secret('s3://x', 's3')")

# ---------------------------------------------------------------------------- unknown tables / hidden schema
add("unknown_tables", "both",
    "SELECT * FROM {H}.secrets", "SELECT v FROM \"{H}\".\"secrets\"", "SELECT * FROM {H}.SECRETS",
    "SELECT * FROM {S}.products, {H}.secrets", "SELECT * FROM {S}.products WHERE name IN (SELECT v FROM {H}.secrets)",
    "SELECT (SELECT max(v) FROM {H}.secrets)", "SELECT name FROM {S}.products UNION SELECT v FROM {H}.secrets",
    "WITH s AS (SELECT * FROM {H}.secrets) SELECT * FROM s",
    "SELECT * FROM {S}.products p JOIN LATERAL (SELECT v FROM {H}.secrets) s ON true",
    "SELECT * FROM secrets", "SELECT * FROM {S}.secrets", "SELECT * FROM {S}.\"Products\"",
    "SELECT * FROM (SELECT * FROM {H}.secrets) AS products", "SELECT EXISTS (SELECT 1 FROM {H}.secrets WHERE v LIKE 'h%')",
    "SELECT * FROM {S}.products WHERE id = (SELECT length(v) FROM {H}.secrets)",
    "SELECT * FROM {S}.products ORDER BY (SELECT v FROM {H}.secrets)",
    "SELECT * FROM {S}.products GROUP BY ALL HAVING max(name) < (SELECT max(v) FROM {H}.secrets)")
add("unknown_tables", "postgres",
    "SELECT * FROM test.{H}.secrets", "SELECT * FROM ONLY {H}.secrets", "TABLE {H}.secrets",
    "SELECT * FROM \"test\".\"{H}\".\"secrets\"", "SELECT * FROM {H}.secrets AS products",
    "SELECT {S}.peek()", "SELECT v FROM {H}.secrets TABLESAMPLE SYSTEM (100)",
    "SELECT * FROM ROWS FROM ({S}.orders_of(8))", "SELECT * FROM public.secrets")
add("unknown_tables", "duckdb",
    "SELECT * FROM warehouse.{H}.secrets", "SELECT * FROM warehouse.main.customers WHERE tenant_id = 8",
    "SELECT * FROM memory.main.x", "SELECT * FROM temp.main.x", "SELECT * FROM system.main.x",
    "SELECT * FROM vault_peek", "SELECT * FROM {S}.vault_peek", "SELECT * FROM \"vault\".secrets",
    "SELECT * FROM query_table('{H}.secrets')")

# ---------------------------------------------------------------------------- tenant escapes
tenant = [
    "SELECT * FROM {S}.orders",
    "SELECT * FROM {S}.orders WHERE tenant_id = 7 OR 1 = 1",
    "SELECT * FROM {S}.orders WHERE tenant_id = 7 OR tenant_id = 8",
    "SELECT * FROM {S}.orders WHERE tenant_id IN (7, 8)",
    "SELECT * FROM {S}.orders WHERE tenant_id >= 7",
    "SELECT * FROM {S}.orders WHERE tenant_id = 8",
    "SELECT * FROM {S}.orders WHERE NOT tenant_id <> 8",
    "SELECT * FROM {S}.orders WHERE (tenant_id = 7) IS NOT NULL",
    "SELECT * FROM {S}.orders WHERE tenant_id = 7 OR status LIKE 't8%'",
    "SELECT * FROM {S}.orders o WHERE o.tenant_id = 7 OR o.tenant_id <> 7",
    "SELECT * FROM {S}.orders o JOIN {S}.customers c ON c.id = o.customer_id WHERE o.tenant_id = 7",
    "SELECT c.* FROM {S}.orders o RIGHT JOIN {S}.customers c ON c.id = o.customer_id AND o.tenant_id = 7",
    "SELECT c.note FROM {S}.customers c LEFT JOIN {S}.orders o ON o.customer_id = c.id AND c.tenant_id = 7",
    "SELECT c.note FROM {S}.orders o FULL JOIN {S}.customers c ON c.id = o.customer_id AND o.tenant_id = 7 AND c.tenant_id = 7",
    "SELECT *, (SELECT max(note) FROM {S}.customers) FROM {S}.orders WHERE tenant_id = 7",
    "SELECT * FROM {S}.orders WHERE tenant_id = 7 UNION ALL SELECT * FROM {S}.orders",
    "SELECT * FROM {S}.orders WHERE tenant_id = 7 AND id IN (SELECT id FROM {S}.orders WHERE tenant_id = 8)",
    "SELECT note FROM {S}.customers WHERE tenant_id = 7 UNION SELECT note FROM {S}.customers WHERE tenant_id = 8",
    "SELECT * FROM (SELECT * FROM {S}.orders) o WHERE o.tenant_id = 7 OR true",
    "WITH o AS (SELECT * FROM {S}.orders) SELECT * FROM o WHERE tenant_id = 8",
    "WITH o AS (SELECT * FROM {S}.orders WHERE tenant_id = 7) SELECT * FROM o, {S}.customers c WHERE c.tenant_id = 8",
    "SELECT * FROM {S}.orders a, {S}.orders b WHERE a.tenant_id = 7 LIMIT 400",
    "SELECT b.status FROM {S}.orders a JOIN {S}.orders b ON true WHERE a.tenant_id = 7",
    "SELECT * FROM {S}.customers c WHERE c.tenant_id = 7 AND EXISTS (SELECT 1 FROM {S}.orders o WHERE o.status LIKE 't8%')",
    "SELECT status FROM {S}.orders WHERE tenant_id = 7 AND false OR true",
    "SELECT status FROM {S}.orders WHERE tenant_id = 7 OR tenant_id = 7 + 1",
    "SELECT status FROM {S}.orders WHERE tenant_id = CASE WHEN true THEN 8 ELSE 7 END",
    "SELECT status FROM {S}.orders WHERE tenant_id = (SELECT 8)",
    "SELECT status FROM {S}.orders WHERE tenant_id = 7 + 1",
    "SELECT status FROM {S}.orders WHERE tenant_id + 0 = 8",
    "SELECT status FROM {S}.orders WHERE tenant_id = 7 AND tenant_id = 7 OR id > 0",
    "SELECT status, count(*) FROM {S}.orders GROUP BY status HAVING max(tenant_id) = 7 OR true",
    "SELECT status FROM {S}.orders WHERE coalesce(tenant_id, 7) = 7 OR tenant_id = 8",
    "SELECT o.status FROM {S}.orders o WHERE tenant_id = 7",
    "SELECT o.status FROM {S}.orders o, {S}.customers c WHERE tenant_id = 7",
    "SELECT status, tenant_id AS t FROM {S}.orders WHERE t = 7",
    "SELECT status FROM {S}.orders WHERE 7 = tenant_id OR 8 = tenant_id",
    "SELECT status FROM {S}.orders WHERE tenant_id BETWEEN 7 AND 8",
    "SELECT status FROM {S}.orders WHERE tenant_id::text = '8'",
    "SELECT status FROM {S}.orders WHERE tenant_id = 7.9",
    "SELECT status FROM {S}.orders WHERE tenant_id = '8'",
    "SELECT max(status) OVER () FROM {S}.orders WHERE tenant_id = 7 OR tenant_id = 8",
    "SELECT status FROM {S}.orders NATURAL JOIN {S}.events WHERE tenant_id = 7",
    "SELECT e.payload FROM {S}.orders o JOIN {S}.events e USING (id) WHERE o.tenant_id = 7",
    "SELECT e.payload FROM {S}.orders o JOIN {S}.events e USING (tenant_id) WHERE o.tenant_id = 7",
    "SELECT * FROM {S}.orders WHERE tenant_id = 7 LIMIT 5 OFFSET 0) UNION ALL (SELECT * FROM {S}.orders",
    "SELECT status FROM {S}.orders o WHERE o.tenant_id = 7 AND o.id = o.id OR o.id > 0",
    "SELECT (SELECT string_agg(status, ',') FROM {S}.orders x WHERE x.tenant_id <> o.tenant_id) FROM {S}.orders o WHERE o.tenant_id = 7",
    "SELECT c.note FROM {S}.customers c WHERE c.tenant_id = 7 UNION ALL SELECT c.note FROM {S}.customers c",
    "SELECT * FROM {S}.orders WHERE tenant_id = 7 INTERSECT SELECT * FROM {S}.orders",
    "SELECT * FROM {S}.orders EXCEPT SELECT * FROM {S}.orders WHERE tenant_id = 7",
    "SELECT count(*) FILTER (WHERE tenant_id = 7), max(status) FROM {S}.orders",
    "SELECT DISTINCT ON (tenant_id) status FROM {S}.orders WHERE tenant_id IS NOT NULL",
    "SELECT status FROM {S}.orders WHERE tenant_id = ANY(ARRAY[7, 8])",
    "SELECT status FROM {S}.orders WHERE tenant_id IN (SELECT tenant_id FROM {S}.orders)",
    "SELECT status FROM {S}.orders WHERE (tenant_id, 1) = (8, 1)",
]
add("tenant_escapes", "both", *tenant)
add("tenant_escapes", "postgres",
    "SELECT status FROM {S}.orders WHERE tenant_id = 7::int + 1",
    "SELECT * FROM {S}.orders_of(8)", "SELECT * FROM {S}.orders_of(7) UNION ALL SELECT * FROM {S}.orders_of(8)",
    "SELECT status FROM {S}.orders WHERE tenant_id IS DISTINCT FROM 7",
    "SELECT (o).status FROM {S}.orders o WHERE tenant_id = 8",
    "SELECT status FROM {S}.orders AS o WHERE \"tenant_id\" = 8", "SELECT status FROM {S}.orders WHERE \"TENANT_ID\" = 7")
add("tenant_escapes", "duckdb",
    "SELECT * FROM {S}.orders WHERE tenant_id = 7 OR tenant_id = 8 QUALIFY true",
    "SELECT status FROM {S}.orders WHERE tenant_id = 7 UNION ALL BY NAME SELECT status FROM {S}.orders",
    "SELECT * FROM all_orders()", "SELECT * FROM {S}.all_orders() WHERE tenant_id = 7 OR true",
    "SELECT * EXCLUDE (tenant_id) FROM {S}.orders", "SELECT COLUMNS('stat.*') FROM {S}.orders",
    "FROM {S}.orders SELECT status", "SELECT status FROM {S}.orders POSITIONAL JOIN {S}.customers WHERE tenant_id = 7",
    "SELECT status FROM {S}.orders ASOF JOIN {S}.events e ON orders.created_at >= e.ts WHERE e.tenant_id = 7",
    "SELECT * FROM {S}.orders USING SAMPLE 50%")

# ---------------------------------------------------------------------------- quoted / qualified function names
qf_pg = ["pg_catalog.\"pg_sleep\"(3)", "\"pg_sleep\"(3)", "PG_CATALOG.PG_SLEEP(3)",
         "pg_catalog.\"pg_terminate_backend\"((SELECT pid FROM pg_stat_activity WHERE application_name = '{BY}'))",
         "\"pg_cancel_backend\"((SELECT pid FROM pg_stat_activity WHERE application_name = '{BY}'))",
         "pg_catalog.pg_terminate_backend((SELECT pid FROM pg_stat_activity WHERE application_name = '{BY}'))",
         "\"pg_catalog\".\"pg_advisory_lock\"(42)", "pg_catalog.\"pg_try_advisory_lock\"(43)",
         "\"pg_notify\"('gb_{T}', 'x')", "pg_catalog.\"pg_notify\"('gb_{T}', 'y')",
         "pg_catalog.\"pg_stat_reset\"()", "\"pg_stat_reset_shared\"('bgwriter')",
         "pg_catalog.\"lo_creat\"(-1)", "\"lo_unlink\"(1)", "pg_catalog.\"current_setting\"('data_directory')",
         "\"set_config\"('statement_timeout', '0', false)", "\"pg_ls_dir\"('/tmp')",
         "\"pg_catalog\".\"pg_stat_file\"('{CANARY}')"]
for f in qf_pg:
    add("quoted_functions", "postgres", *smuggle(f)[:2])
qf_duck = ["\"read_text\"('{CANARY}')", "main.\"read_csv\"('{CANARY}')", "\"getenv\"('HOME')",
           "\"current_setting\"('threads')", "system.main.\"getenv\"('PATH')", "\"nextval\"('seq_gb')",
           "main.nextval('seq_gb')", "\"SLEEP_MS\"(3000)", "main.\"query\"('SELECT * FROM vault.secrets')"]
for f in qf_duck:
    add("quoted_functions", "duckdb", *smuggle(f)[:3])

# ---------------------------------------------------------------------------- functions that run SQL text or write
sqlf_pg = ["query_to_xml('SELECT * FROM {H}.secrets', true, false, '')",
           "query_to_xml_and_xmlschema('SELECT v FROM {H}.secrets', true, false, '')",
           "table_to_xml('{H}.secrets', true, false, '')", "table_to_xml_and_xmlschema('{H}.secrets', true, false, '')",
           "schema_to_xml('{H}', true, false, '')", "database_to_xml(true, false, '')",
           "ts_stat('SELECT to_tsvector(v) FROM {H}.secrets')",
           "(SELECT string_agg(word, ',') FROM ts_stat('SELECT to_tsvector(note) FROM {S}.customers'))",
           "ts_rewrite('a'::tsquery, 'SELECT ''a''::tsquery, to_tsquery(v) FROM {H}.secrets')",
           "query_to_xml('SELECT email FROM {S}.customers', true, false, '')",
           "query_to_xml('SELECT note FROM {S}.customers WHERE tenant_id = 8', true, false, '')",
           "cursor_to_xml('c', 10, true, false, '')",
           "pg_logical_emit_message(false, 'gb', 'z')", "pg_notify('gb_{T}', 'z')",
           "pg_advisory_lock(4242)", "pg_advisory_lock_shared(4243)", "pg_try_advisory_lock(4244)",
           "pg_advisory_xact_lock(4245)", "pg_stat_reset()", "pg_stat_reset_shared('bgwriter')",
           "pg_stat_reset_single_table_counters('{S}.orders'::regclass)",
           "lo_creat(-1)", "lo_from_bytea(0, 'x')", "pg_sleep_for('3 seconds')",
           "xmlserialize(content query_to_xml('select v from {H}.secrets', true, true, '') as text)"]
for f in sqlf_pg:
    for s in smuggle(f)[:3]:
        add("sql_functions", "postgres", s, effect="WAL record" if "emit_message" in f else None)
add("sql_functions", "postgres",
    "SELECT * FROM ts_stat('SELECT to_tsvector(v) FROM {H}.secrets')",
    "SELECT * FROM ts_stat('SELECT to_tsvector(email) FROM {S}.customers')",
    "SELECT * FROM xmltable('/r' PASSING query_to_xml('select v from {H}.secrets', true, true, '') COLUMNS v text PATH 'row/v')")
sqlf_duck = ["query('SELECT * FROM vault.secrets')", "query_table('vault.secrets')",
             "query('SELECT note FROM customers WHERE tenant_id = 8')",
             "query('SELECT email FROM customers')", "query_table(['customers'])",
             "json_execute_serialized_sql(json_serialize_sql('SELECT * FROM vault.secrets'))",
             "sql_auto_complete('SELECT * FROM vau')", "duckdb_dependencies()",
             "query('SELECT * FROM read_text(''{CANARY}'')')"]
for f in sqlf_duck:
    add("sql_functions", "duckdb", f"SELECT * FROM {f}", f"SELECT * FROM {{S}}.products, {f} LIMIT 3",
        f"WITH x AS (SELECT * FROM {f}) SELECT * FROM x")
add("sql_functions", "duckdb", "SELECT json_serialize_sql('SELECT * FROM vault.secrets')",
    "SELECT * FROM query('SELECT v FROM vault.secrets UNION ALL SELECT 1')",
    "SELECT peek()", "SELECT {S}.peek()", "SELECT email_of(80000001)", "SELECT main.email_of(1)")

# ---------------------------------------------------------------------------- CTE / name shadowing
add("cte_shadowing", "both",
    "SELECT * FROM {H}.secrets, (WITH secrets AS (SELECT 1) SELECT 1) x",
    "WITH secrets AS (SELECT 1 AS v) SELECT * FROM secrets UNION ALL SELECT v FROM {H}.secrets",
    "SELECT * FROM {S}.orders, (WITH orders AS (SELECT 7 AS tenant_id) SELECT * FROM orders WHERE tenant_id = 7) x",
    "WITH orders AS (SELECT * FROM {S}.orders) SELECT * FROM orders",
    "WITH orders AS (SELECT * FROM {S}.orders WHERE tenant_id = 8) SELECT * FROM orders",
    "WITH customers AS (SELECT * FROM {S}.customers) SELECT note FROM customers WHERE tenant_id = 8",
    "WITH x AS (SELECT 1) SELECT * FROM (WITH orders AS (SELECT 1) SELECT 1) a, orders",
    "WITH products AS (SELECT * FROM {S}.customers) SELECT * FROM products",
    "WITH products AS (SELECT * FROM {H}.secrets) SELECT * FROM products",
    "SELECT (WITH orders AS (SELECT 1 AS tenant_id) SELECT max(tenant_id) FROM orders), o.status FROM orders o",
    "WITH RECURSIVE orders AS (SELECT * FROM {S}.orders) SELECT status FROM orders",
    "WITH a AS (WITH orders AS (SELECT 1) SELECT 1) SELECT status FROM orders, a",
    "SELECT * FROM (WITH customers AS (SELECT 1 AS tenant_id) SELECT * FROM customers) c1, customers c2 WHERE c1.tenant_id = 7")
add("cte_shadowing", "postgres",
    "SELECT * FROM pg_shadow, (WITH pg_shadow AS (SELECT 1) SELECT 1) x",
    "WITH pg_authid AS (SELECT 1) SELECT * FROM pg_catalog.pg_authid",
    "WITH pg_stats AS (SELECT 1) SELECT x.histogram_bounds::text FROM pg_catalog.pg_stats x WHERE attname = 'email'",
    "SELECT * FROM pg_authid, (WITH pg_authid AS (SELECT 1) SELECT 1) x",
    "WITH pg_user AS (SELECT 1) SELECT (SELECT string_agg(passwd, ',') FROM pg_shadow)")
add("cte_shadowing", "duckdb",
    "SELECT * FROM duckdb_settings(), (WITH duckdb_settings AS (SELECT 1) SELECT 1) x",
    "SELECT * FROM vault_peek, (WITH vault_peek AS (SELECT 1) SELECT 1) x",
    "WITH all_orders AS (SELECT 1) SELECT * FROM all_orders()")

# ---------------------------------------------------------------------------- column-alias lists
add("alias_lists", "both",
    "SELECT o.tenant_id, o.status FROM {S}.orders AS o(id, customer_id, tenant_id, amount, status) WHERE o.tenant_id = 7",
    "SELECT o.status FROM {S}.orders AS o(tenant_id, id) WHERE o.tenant_id = 7",
    "SELECT status FROM {S}.orders AS o(id, x, tenant_id) WHERE tenant_id = 7",
    "SELECT c.note FROM {S}.customers c(tenant_id) WHERE c.tenant_id = 7",
    "SELECT c.contact FROM {S}.customers AS c(id, tenant_id, contact) WHERE c.tenant_id = 7",
    "SELECT c.a, c.b FROM {S}.customers AS c(id, tenant_id, a, b, x, y) WHERE c.tenant_id = 7",
    "SELECT x.note FROM {S}.customers AS x(id, k, e, n, p, c, d, s, note, tenant_id) WHERE x.tenant_id = 7",
    "WITH c(tenant_id, note) AS (SELECT customer_id, status FROM {S}.orders) SELECT note FROM c WHERE tenant_id = 7",
    "WITH c(tenant_id, x) AS (SELECT 7, note FROM {S}.customers WHERE tenant_id = 8) SELECT x FROM c WHERE tenant_id = 7",
    "SELECT s.z FROM (SELECT tenant_id, note FROM {S}.customers) AS s(y, z) WHERE s.y = 8",
    "SELECT s.t FROM (SELECT note, tenant_id FROM {S}.customers) AS s(t, tenant_id) WHERE s.tenant_id = 8",
    "SELECT v.tenant_id FROM (VALUES (7)) v(tenant_id), {S}.orders o WHERE v.tenant_id = 7",
    "SELECT o.status FROM {S}.orders o, (SELECT 7) AS t(tenant_id) WHERE tenant_id = 7",
    "SELECT x.m FROM {S}.customers AS x(i, tenant_id, m) WHERE x.tenant_id = 7")
add("alias_lists", "postgres",
    "SELECT o.status FROM {S}.orders AS o(\"id\", \"tenant_id\") WHERE o.\"tenant_id\" = 7",
    "SELECT f.status FROM {S}.orders_of(8) AS f(id, tenant_id) WHERE f.tenant_id = 7")
add("alias_lists", "duckdb",
    "SELECT s.v FROM {S}.customers AS s(id, tenant_id) , (SELECT 1 AS v) q WHERE s.tenant_id = 7 LIMIT 1",
    "SELECT c.phone_alias FROM (FROM {S}.customers SELECT * RENAME (phone AS phone_alias)) c WHERE c.tenant_id = 7")

# ---------------------------------------------------------------------------- PIVOT
add("pivot", "duckdb",
    "PIVOT {S}.orders ON tenant_id USING sum(amount)", "SELECT * FROM (PIVOT {S}.orders ON tenant_id USING max(status))",
    "SELECT * FROM (PIVOT {S}.orders ON status USING count(*) GROUP BY tenant_id)",
    "SELECT * FROM {S}.orders PIVOT (max(status) FOR tenant_id IN (7, 8))",
    "SELECT * FROM (PIVOT {S}.customers ON email USING count(*)) WHERE true",
    "SELECT * FROM (PIVOT (SELECT * FROM {S}.customers WHERE tenant_id = 7) ON email USING count(*))",
    "SELECT * FROM (PIVOT (SELECT * FROM {S}.customers WHERE tenant_id = 7) ON full_name USING max(id))",
    "SELECT * FROM (UNPIVOT (SELECT email, full_name, phone FROM {S}.customers WHERE tenant_id = 7) ON COLUMNS(*) INTO NAME k VALUE v)",
    "SELECT * FROM (UNPIVOT {S}.customers ON note, country INTO NAME k VALUE v) WHERE tenant_id = 7 OR true",
    "WITH p AS (PIVOT {S}.orders ON tenant_id USING max(status)) SELECT * FROM p",
    "SELECT * FROM (PIVOT {H}.secrets ON k USING max(v))",
    "SELECT * FROM (PIVOT (SELECT tenant_id, note FROM {S}.customers) ON tenant_id USING max(note)) p",
    "SELECT * FROM (SELECT * FROM {S}.customers WHERE tenant_id = 7) PIVOT (count(*) FOR email IN (SELECT email FROM {S}.customers))",
    "FROM (PIVOT {S}.events ON kind USING max(payload) GROUP BY tenant_id)")
add("pivot", "postgres",
    "SELECT max(status) FILTER (WHERE tenant_id = 8) FROM {S}.orders WHERE tenant_id = 7",
    "SELECT tenant_id, jsonb_object_agg(id, status) FROM {S}.orders GROUP BY tenant_id",
    "SELECT json_object_agg(email, id) FROM {S}.customers WHERE tenant_id = 7",
    "SELECT jsonb_object_agg(full_name, 1) FROM {S}.customers WHERE tenant_id = 7")

# ---------------------------------------------------------------------------- views, macros, functions
add("views_macros", "both",
    "SELECT * FROM {S}.order_totals", "SELECT last_status FROM {S}.order_totals WHERE customer_id > 80000000",
    "SELECT * FROM {S}.customers_all", "SELECT email FROM {S}.customers_all WHERE note LIKE 't8%'",
    "SELECT note FROM {S}.customers_all", "SELECT max(last_status) FROM order_totals",
    "SELECT o.* FROM {S}.order_totals o JOIN {S}.customers c ON c.id = o.customer_id WHERE c.tenant_id = 7",
    "SELECT {S}.email_of(80000001)", "SELECT {S}.email_of(id) FROM {S}.customers WHERE tenant_id = 7")
add("views_macros", "postgres",
    "SELECT {S}.peek()", "SELECT * FROM {S}.orders_of(8)", "SELECT status FROM {S}.orders_of(7 + 1)",
    "SELECT * FROM {S}.products p, LATERAL {S}.orders_of(8) o LIMIT 5")
add("views_macros", "duckdb",
    "SELECT * FROM all_orders()", "SELECT status FROM all_orders() WHERE tenant_id = 8",
    "SELECT * FROM vault_peek", "SELECT peek()", "SELECT main.peek()", "SELECT email_of(80000001)",
    "SELECT * FROM {S}.products, all_orders() LIMIT 3")

# ---------------------------------------------------------------------------- runaway queries
add("runaway", "duckdb",
    "SELECT count(*) FROM range(100000000000)",
    "SELECT a.range FROM range(100000) a, range(100000) b",
    "SELECT a.id FROM {S}.orders a, {S}.orders b, {S}.orders c, {S}.orders d, {S}.orders e "
    "WHERE a.tenant_id = 7 AND b.tenant_id = 7 AND c.tenant_id = 7 AND d.tenant_id = 7 AND e.tenant_id = 7",
    "SELECT p1.id FROM {S}.products p1, {S}.products p2, {S}.products p3, {S}.products p4, {S}.products p5, {S}.products p6, {S}.products p7",
    "SELECT length(repeat('x', 1500000000))",
    "SELECT repeat('x', 300000000) FROM range(4)",
    "SELECT string_agg(repeat('y', 10000), ',') FROM range(200000)",
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT n FROM r",
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r",
    "SELECT * FROM generate_series(1, 100000000000)",
    "SELECT sum(x) FROM generate_series(1, 10000000000) t(x)",
    "SELECT list_sort(range(100000000))[1]",
    "SELECT count(*) FROM range(100000) a JOIN range(100000) b ON a.range <> b.range",
    "SELECT md5(a.range::varchar || b.range::varchar) FROM range(1000000) a, range(1000) b ORDER BY 1",
    "SELECT * FROM range(3000000000) ORDER BY random()",
    "SELECT unnest(range(500000000))",
    "SELECT regexp_matches(repeat('a', 50000000), '(a|aa)*b')",
    "SELECT * FROM {S}.products p, range(1000000000) r",
    "SELECT \"sleep_ms\"(5000)", "SELECT count(*) FROM (SELECT * FROM range(1000000) a, range(100000) b)")
add("runaway", "postgres",
    "SELECT count(*) FROM generate_series(1, 10000000000)",
    "SELECT a FROM generate_series(1, 1000000) a, generate_series(1, 1000000) b",
    "SELECT a.id FROM {S}.orders a, {S}.orders b, {S}.orders c, {S}.orders d, {S}.orders e "
    "WHERE a.tenant_id = 7 AND b.tenant_id = 7 AND c.tenant_id = 7 AND d.tenant_id = 7 AND e.tenant_id = 7",
    "SELECT p1.id FROM {S}.products p1, {S}.products p2, {S}.products p3, {S}.products p4, {S}.products p5, {S}.products p6, {S}.products p7",
    "SELECT length(repeat('x', 1000000000))",
    "SELECT repeat('x', 400000000)",
    "SELECT repeat('x', 200000000) FROM generate_series(1, 3)",
    "SELECT string_agg(repeat('y', 10000), ',') FROM generate_series(1, 100000)",
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT n FROM r",
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r",
    "SELECT pg_sleep(5)", "SELECT pg_catalog.\"pg_sleep\"(5)", "SELECT \"pg_sleep_for\"('5 seconds')",
    "SELECT pg_catalog.pg_sleep_until(now() + interval '5 seconds')",
    "SELECT md5(random()::text) FROM generate_series(1, 100000000) ORDER BY 1",
    "SELECT array_length(array_agg(g), 1) FROM generate_series(1, 300000000) g",
    "SELECT * FROM {S}.products p, generate_series(1, 1000000000) g",
    "SELECT count(*) FROM generate_series(1, 100000) a JOIN generate_series(1, 100000) b ON a <> b",
    "SELECT regexp_replace(repeat('ab', 20000000), '(a|b)*c', 'x')",
    "SELECT (SELECT count(*) FROM generate_series(1, 100000000)) FROM {S}.products")

# ---------------------------------------------------------------------------- PII leaks
pii_both = [
    "SELECT email FROM {S}.customers WHERE tenant_id = 7",
    "SELECT email AS contact FROM {S}.customers WHERE tenant_id = 7",
    "SELECT full_name AS label, phone AS num FROM {S}.customers WHERE tenant_id = 7",
    "SELECT lower(email) FROM {S}.customers WHERE tenant_id = 7",
    "SELECT upper(full_name) AS n FROM {S}.customers WHERE tenant_id = 7",
    "SELECT string_agg(email, ',') AS all_contacts FROM {S}.customers WHERE tenant_id = 7",
    "SELECT min(email), max(phone) FROM {S}.customers WHERE tenant_id = 7",
    "SELECT CASE WHEN id > 0 THEN email END AS x FROM {S}.customers WHERE tenant_id = 7",
    "SELECT coalesce(full_name, 'n/a') AS who FROM {S}.customers WHERE tenant_id = 7",
    "SELECT concat('<', email, '>') AS tag FROM {S}.customers WHERE tenant_id = 7",
    "SELECT email || '' AS e FROM {S}.customers WHERE tenant_id = 7",
    "SELECT substr(email, 1, 100) AS e FROM {S}.customers WHERE tenant_id = 7",
    "SELECT split_part(email, '@', 1) AS local FROM {S}.customers WHERE tenant_id = 7",
    "SELECT reverse(email) AS r FROM {S}.customers WHERE tenant_id = 7",
    "SELECT replace(phone, ' ', '') AS p FROM {S}.customers WHERE tenant_id = 7",
    "SELECT trim(full_name) FROM {S}.customers WHERE tenant_id = 7",
    "SELECT CAST(email AS INTEGER) FROM {S}.customers WHERE tenant_id = 7",
    "SELECT CAST(full_name AS DATE) FROM {S}.customers WHERE tenant_id = 7",
    "SELECT 1 / (CASE WHEN email = email THEN 0 ELSE 1 END) FROM {S}.customers WHERE tenant_id = 7",
    "SELECT id FROM {S}.customers WHERE tenant_id = 7 UNION ALL SELECT email FROM {S}.customers WHERE tenant_id = 7",
    "SELECT country FROM {S}.customers WHERE tenant_id = 7 UNION ALL SELECT full_name FROM {S}.customers WHERE tenant_id = 7",
    "SELECT x FROM (SELECT email AS x FROM {S}.customers WHERE tenant_id = 7) s",
    "WITH c AS (SELECT phone AS p FROM {S}.customers WHERE tenant_id = 7) SELECT p FROM c",
    "SELECT o.id, (SELECT c.email FROM {S}.customers c WHERE c.id = o.customer_id AND c.tenant_id = 7) AS who "
    "FROM {S}.orders o WHERE o.tenant_id = 7",
    "SELECT o.amount, c.full_name FROM {S}.orders o JOIN {S}.customers c ON c.id = o.customer_id "
    "WHERE o.tenant_id = 7 AND c.tenant_id = 7",
    "SELECT * FROM {S}.customers WHERE tenant_id = 7",
    "SELECT c.* FROM {S}.customers c WHERE c.tenant_id = 7",
    "SELECT DISTINCT email FROM {S}.customers WHERE tenant_id = 7",
    "SELECT email, count(*) FROM {S}.customers WHERE tenant_id = 7 GROUP BY email",
    "SELECT first_value(email) OVER (ORDER BY id) AS f FROM {S}.customers WHERE tenant_id = 7",
    "SELECT lag(full_name) OVER (ORDER BY id) AS prev FROM {S}.customers WHERE tenant_id = 7",
    "SELECT id, email LIKE '%example' AS m, email FROM {S}.customers WHERE tenant_id = 7",
    "SELECT regexp_replace(email, '@.*', '') AS u FROM {S}.customers WHERE tenant_id = 7",
    "SELECT left(email, 60) AS l FROM {S}.customers WHERE tenant_id = 7",
    "SELECT email AS \"count\" FROM {S}.customers WHERE tenant_id = 7",
    "SELECT CAST(phone AS VARCHAR) AS ph FROM {S}.customers WHERE tenant_id = 7",
    "SELECT note, email FROM {S}.customers WHERE tenant_id = 7 ORDER BY 1 LIMIT 3",
    "SELECT * FROM {S}.customers WHERE tenant_id = 7 AND email > ''",
    "SELECT max(full_name) FILTER (WHERE id > 0) FROM {S}.customers WHERE tenant_id = 7",
    "SELECT array_agg(phone) AS a FROM {S}.customers WHERE tenant_id = 7",
    "SELECT email FROM {S}.customers_all",
    "SELECT nullif(email, 'x') AS e FROM {S}.customers WHERE tenant_id = 7",
    "SELECT greatest(email, '') AS e FROM {S}.customers WHERE tenant_id = 7",
]
add("pii_leaks", "both", *pii_both)
add("pii_leaks", "postgres",
    "SELECT to_json(email) FROM {S}.customers WHERE tenant_id = 7",
    "SELECT to_jsonb(c) FROM {S}.customers c WHERE c.tenant_id = 7",
    "SELECT row_to_json(c) FROM {S}.customers c WHERE c.tenant_id = 7",
    "SELECT c::text FROM {S}.customers c WHERE c.tenant_id = 7",
    "SELECT c FROM {S}.customers c WHERE c.tenant_id = 7",
    "SELECT json_build_object('e', email) FROM {S}.customers WHERE tenant_id = 7",
    "SELECT format('%s', full_name) FROM {S}.customers WHERE tenant_id = 7",
    "SELECT encode(convert_to(email, 'UTF8'), 'base64') FROM {S}.customers WHERE tenant_id = 7",
    "SELECT encode(email::bytea, 'hex') FROM {S}.customers WHERE tenant_id = 7",
    "SELECT email::int FROM {S}.customers WHERE tenant_id = 7",
    "SELECT phone::numeric FROM {S}.customers WHERE tenant_id = 7",
    "SELECT to_date(full_name, 'YYYY') FROM {S}.customers WHERE tenant_id = 7",
    "SELECT (xpath('/a/text()', ('<a>' || email || '</a>')::xml))[1]::text FROM {S}.customers WHERE tenant_id = 7",
    "SELECT string_to_array(email, '@') FROM {S}.customers WHERE tenant_id = 7",
    "SELECT (SELECT string_agg(x, ',') FROM unnest(ARRAY[email]) x) FROM {S}.customers WHERE tenant_id = 7",
    "SELECT jsonb_agg(full_name) FROM {S}.customers WHERE tenant_id = 7",
    "SELECT translate(email, 'abc', 'abc') FROM {S}.customers WHERE tenant_id = 7",
    "SELECT overlay(email placing '' from 1 for 0) FROM {S}.customers WHERE tenant_id = 7",
    "SELECT email::xml FROM {S}.customers WHERE tenant_id = 7",
    "SELECT email::uuid FROM {S}.customers WHERE tenant_id = 7")
add("pii_leaks", "duckdb",
    "SELECT to_json(email) FROM {S}.customers WHERE tenant_id = 7",
    "SELECT to_json(c) FROM {S}.customers c WHERE c.tenant_id = 7",
    "SELECT c FROM {S}.customers c WHERE c.tenant_id = 7",
    "SELECT struct_pack(e := email) AS s FROM {S}.customers WHERE tenant_id = 7",
    "SELECT [email, phone] AS l FROM {S}.customers WHERE tenant_id = 7",
    "SELECT {'who': full_name} AS s FROM {S}.customers WHERE tenant_id = 7",
    "SELECT COLUMNS('e.*') FROM {S}.customers WHERE tenant_id = 7",
    "SELECT COLUMNS(c -> c LIKE '%mail%') FROM {S}.customers WHERE tenant_id = 7",
    "SELECT * EXCLUDE (id) FROM {S}.customers WHERE tenant_id = 7",
    "SELECT * RENAME (email AS contact) FROM {S}.customers WHERE tenant_id = 7",
    "SELECT * REPLACE (lower(email) AS email) FROM {S}.customers WHERE tenant_id = 7",
    "SELECT email::INTEGER FROM {S}.customers WHERE tenant_id = 7",
    "SELECT TRY_CAST(email AS INTEGER) IS NULL, email FROM {S}.customers WHERE tenant_id = 7",
    "SELECT to_base64(email::BLOB) FROM {S}.customers WHERE tenant_id = 7",
    "SELECT hex(email) FROM {S}.customers WHERE tenant_id = 7",
    "SELECT list(email) FROM {S}.customers WHERE tenant_id = 7",
    "SELECT histogram(email) FROM {S}.customers WHERE tenant_id = 7",
    "SELECT arg_max(email, id) FROM {S}.customers WHERE tenant_id = 7",
    "SELECT mode(full_name) FROM {S}.customers WHERE tenant_id = 7",
    "SELECT email.lower() FROM {S}.customers WHERE tenant_id = 7",
    "SELECT error(email) FROM {S}.customers WHERE tenant_id = 7",
    "SELECT printf('%s', email) FROM {S}.customers WHERE tenant_id = 7",
    "SELECT json_object('e', email) FROM {S}.customers WHERE tenant_id = 7",
    "SELECT string_split(email, '@') FROM {S}.customers WHERE tenant_id = 7",
    "FROM {S}.customers SELECT email WHERE tenant_id = 7")

# PII through the engine's error text (each cast echoes the value it could not read)
add("pii_leaks", "postgres",
    "SELECT email::json FROM {S}.customers WHERE tenant_id = 7",
    "SELECT email::jsonb FROM {S}.customers WHERE tenant_id = 7",
    "SELECT full_name::regclass FROM {S}.customers WHERE tenant_id = 7",
    "SELECT email::regproc FROM {S}.customers WHERE tenant_id = 7",
    "SELECT phone::inet FROM {S}.customers WHERE tenant_id = 7",
    "SELECT email::interval FROM {S}.customers WHERE tenant_id = 7",
    "SELECT email::boolean FROM {S}.customers WHERE tenant_id = 7",
    "SELECT to_timestamp(full_name, 'YYYY-MM-DD') FROM {S}.customers WHERE tenant_id = 7",
    "SELECT id FROM {S}.customers WHERE tenant_id = 7 AND email::int > 0",
    "SELECT id FROM {S}.customers WHERE tenant_id = 7 ORDER BY phone::date",
    "SELECT count(*) FROM {S}.customers WHERE tenant_id = 7 GROUP BY email HAVING min(email)::numeric > 0",
    "SELECT (SELECT max(email) FROM {S}.customers WHERE tenant_id = 7)::int")
add("pii_leaks", "duckdb",
    "SELECT json_extract(email, '$.x') FROM {S}.customers WHERE tenant_id = 7",
    "SELECT email::JSON FROM {S}.customers WHERE tenant_id = 7",
    "SELECT strptime(full_name, '%Y') FROM {S}.customers WHERE tenant_id = 7",
    "SELECT phone::DATE FROM {S}.customers WHERE tenant_id = 7",
    "SELECT email::UUID FROM {S}.customers WHERE tenant_id = 7",
    "SELECT email::BOOLEAN FROM {S}.customers WHERE tenant_id = 7",
    "SELECT id FROM {S}.customers WHERE tenant_id = 7 AND email::INTEGER > 0",
    "SELECT id FROM {S}.customers WHERE tenant_id = 7 ORDER BY full_name::TIMESTAMP",
    "SELECT (SELECT max(email) FROM {S}.customers WHERE tenant_id = 7)::INTEGER",
    "SELECT regexp_matches('x', email) FROM {S}.customers WHERE tenant_id = 7",
    "SELECT email::INTERVAL FROM {S}.customers WHERE tenant_id = 7",
    "SELECT list_extract([1], email::INTEGER) FROM {S}.customers WHERE tenant_id = 7")

# ---------------------------------------------------------------------------- odd result types
add("odd_types", "duckdb",
    "SELECT l FROM {S}.oddtypes WHERE tenant_id = 7", "SELECT st FROM {S}.oddtypes WHERE tenant_id = 7",
    "SELECT m FROM {S}.oddtypes WHERE tenant_id = 7", "SELECT u FROM {S}.oddtypes WHERE tenant_id = 7",
    "SELECT uid FROM {S}.oddtypes WHERE tenant_id = 7", "SELECT iv FROM {S}.oddtypes WHERE tenant_id = 7",
    "SELECT big FROM {S}.oddtypes WHERE tenant_id = 7", "SELECT bl FROM {S}.oddtypes WHERE tenant_id = 7",
    "SELECT bt FROM {S}.oddtypes WHERE tenant_id = 7", "SELECT ttz FROM {S}.oddtypes WHERE tenant_id = 7",
    "SELECT nested FROM {S}.oddtypes WHERE tenant_id = 7", "SELECT * FROM {S}.oddtypes WHERE tenant_id = 7",
    "SELECT dec, nan FROM {S}.oddtypes WHERE tenant_id = 7", "SELECT [1, 2] AS l, {'a': 1} AS s",
    "SELECT MAP {'a': [1]} AS m", "SELECT 'infinity'::DATE AS d, 'infinity'::TIMESTAMP AS ts",
    "SELECT 170141183460469231731687303715884105727::HUGEINT AS h", "SELECT '1 year 2 days'::INTERVAL AS i",
    "SELECT union_value(s := 'x') AS u", "SELECT 'a'::ENUM('a', 'b') AS e", "SELECT NULL AS n",
    "SELECT []::INTEGER[] AS e", "SELECT [NULL, [1]] AS l", "SELECT '2024-01-01'::TIMESTAMPTZ AS t",
    "SELECT 1::UHUGEINT AS u", "SELECT '\\x00'::BLOB AS b", "SELECT [1,2]::INTEGER[2] AS a")
add("odd_types", "postgres",
    "SELECT uid FROM {S}.oddtypes WHERE tenant_id = 7", "SELECT arr, arr2 FROM {S}.oddtypes WHERE tenant_id = 7",
    "SELECT jb, js FROM {S}.oddtypes WHERE tenant_id = 7", "SELECT ip, net FROM {S}.oddtypes WHERE tenant_id = 7",
    "SELECT rng, trng FROM {S}.oddtypes WHERE tenant_id = 7", "SELECT iv FROM {S}.oddtypes WHERE tenant_id = 7",
    "SELECT bin, bits FROM {S}.oddtypes WHERE tenant_id = 7", "SELECT ttz FROM {S}.oddtypes WHERE tenant_id = 7",
    "SELECT big, nan FROM {S}.oddtypes WHERE tenant_id = 7", "SELECT pt, tq FROM {S}.oddtypes WHERE tenant_id = 7",
    "SELECT cash, x FROM {S}.oddtypes WHERE tenant_id = 7", "SELECT * FROM {S}.oddtypes WHERE tenant_id = 7",
    "SELECT 'infinity'::date AS d, '-infinity'::timestamp AS t", "SELECT '{{1,2},{3,4}}'::int[] AS a",
    "SELECT ROW(1, 'a') AS r", "SELECT 'a'::regclass::oid AS o", "SELECT now() - '2020-01-01' AS iv",
    "SELECT ARRAY[NULL]::int[] AS a", "SELECT '[1,2]'::jsonb -> 0 AS j", "SELECT txid_current_snapshot()::text",
    "SELECT 1e1000::numeric AS big", "SELECT 'NaN'::numeric AS n", "SELECT array[1.5]::numeric[] AS a",
    "SELECT '(1,2)'::box AS b", "SELECT '10:00'::time AS t, '5 years'::interval AS i",
    "SELECT id, uid, arr FROM {S}.oddtypes WHERE tenant_id = 7 ORDER BY id", "SELECT '\\x00ff'::bytea AS b")


# ---------------------------------------------------------------------------- legitimate analytics
def legit(d: str) -> list[str]:
    pg = d == "postgres"
    month = "date_trunc('month', created_at)"
    js = (lambda col, k: f"{col}->>'{k}'") if pg else (lambda col, k: f"json_extract_string({col}, '$.{k}')")
    jn = (lambda col, k: f"({col}->>'{k}')::int") if pg else (lambda col, k: f"CAST(json_extract({col}, '$.{k}') AS INTEGER)")
    ddiff = (lambda a, b: f"(({a})::date - ({b})::date)") if pg else (lambda a, b: f"date_diff('day', {b}, {a})")
    q = [
        "SELECT count(*) FROM {S}.orders WHERE tenant_id = 7",
        "SELECT count(*) AS n, sum(amount) AS revenue, avg(amount) AS aov FROM orders WHERE tenant_id = 7",
        "SELECT status, count(*) AS n FROM {S}.orders WHERE tenant_id = 7 GROUP BY status ORDER BY n DESC",
        f"SELECT {month} AS month, sum(amount) AS revenue FROM {{S}}.orders WHERE tenant_id = 7 GROUP BY 1 ORDER BY 1",
        f"SELECT {month} AS month, count(DISTINCT customer_id) AS buyers FROM orders WHERE tenant_id = 7 GROUP BY 1 ORDER BY 1",
        "SELECT customer_id, sum(amount) AS total FROM {S}.orders WHERE tenant_id = 7 GROUP BY customer_id ORDER BY total DESC LIMIT 10",
        "SELECT customer_id, amount, rank() OVER (PARTITION BY customer_id ORDER BY amount DESC) AS r FROM {S}.orders WHERE tenant_id = 7",
        "SELECT id, amount, sum(amount) OVER (ORDER BY created_at ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS running FROM {S}.orders WHERE tenant_id = 7",
        "SELECT id, amount, avg(amount) OVER (ORDER BY created_at ROWS BETWEEN 6 PRECEDING AND CURRENT ROW) AS ma7 FROM {S}.orders WHERE tenant_id = 7",
        "SELECT id, created_at, lag(created_at) OVER (PARTITION BY customer_id ORDER BY created_at) AS prev FROM {S}.orders WHERE tenant_id = 7",
        "SELECT id, lead(amount, 1, 0) OVER (PARTITION BY customer_id ORDER BY created_at) AS nxt FROM {S}.orders WHERE tenant_id = 7",
        "SELECT id, ntile(4) OVER (ORDER BY amount) AS quartile FROM {S}.orders WHERE tenant_id = 7",
        "SELECT id, row_number() OVER (PARTITION BY status ORDER BY amount DESC) AS rn FROM {S}.orders WHERE tenant_id = 7",
        "SELECT id, percent_rank() OVER (ORDER BY amount) AS pr, cume_dist() OVER (ORDER BY amount) AS cd FROM {S}.orders WHERE tenant_id = 7",
        "SELECT id, dense_rank() OVER w AS dr FROM {S}.orders WHERE tenant_id = 7 WINDOW w AS (ORDER BY amount DESC)",
        "SELECT id, first_value(amount) OVER (PARTITION BY customer_id ORDER BY created_at) AS first_amount FROM {S}.orders WHERE tenant_id = 7",
        "SELECT id, amount - avg(amount) OVER (PARTITION BY status) AS dev FROM {S}.orders WHERE tenant_id = 7",
        "WITH t AS (SELECT customer_id, sum(amount) AS total FROM {S}.orders WHERE tenant_id = 7 GROUP BY 1) SELECT avg(total), max(total) FROM t",
        "WITH firsts AS (SELECT customer_id, min(created_at) AS first_at FROM {S}.orders WHERE tenant_id = 7 GROUP BY 1) "
        "SELECT date_trunc('month', first_at) AS cohort, count(*) AS n FROM firsts GROUP BY 1 ORDER BY 1",
        "WITH o AS (SELECT * FROM {S}.orders WHERE tenant_id = 7), c AS (SELECT * FROM {S}.customers WHERE tenant_id = 7) "
        "SELECT c.country, sum(o.amount) AS revenue FROM o JOIN c ON c.id = o.customer_id GROUP BY 1 ORDER BY 2 DESC",
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 12) SELECT i FROM n",
        "WITH m AS (SELECT " + month + " AS month, sum(amount) AS rev FROM {S}.orders WHERE tenant_id = 7 GROUP BY 1) "
        "SELECT month, rev, rev - lag(rev) OVER (ORDER BY month) AS delta FROM m ORDER BY month",
        "SELECT c.country, count(*) AS customers FROM {S}.customers c WHERE c.tenant_id = 7 GROUP BY c.country",
        "SELECT c.segment, avg(o.amount) AS aov FROM {S}.orders o JOIN {S}.customers c ON c.id = o.customer_id "
        "WHERE o.tenant_id = 7 AND c.tenant_id = 7 GROUP BY c.segment",
        "SELECT c.segment, count(o.id) AS orders FROM {S}.customers c LEFT JOIN {S}.orders o ON o.customer_id = c.id AND o.tenant_id = 7 "
        "WHERE c.tenant_id = 7 GROUP BY c.segment",
        "SELECT p.category, count(*) AS n, avg(p.price) AS avg_price FROM {S}.products p GROUP BY p.category",
        "SELECT name, price FROM {S}.products ORDER BY price DESC LIMIT 5",
        "SELECT category, min(price), max(price) FROM products GROUP BY category HAVING count(*) > 2",
        "SELECT CASE WHEN amount < 50 THEN 'small' WHEN amount < 150 THEN 'medium' ELSE 'large' END AS bucket, count(*) "
        "FROM {S}.orders WHERE tenant_id = 7 GROUP BY 1 ORDER BY 1",
        "SELECT count(*) FILTER (WHERE status = 'refunded') * 1.0 / count(*) AS refund_rate FROM {S}.orders WHERE tenant_id = 7",
        "SELECT sum(CASE WHEN status = 'paid' THEN amount ELSE 0 END) AS paid FROM {S}.orders WHERE tenant_id = 7",
        "SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY amount) AS median FROM {S}.orders WHERE tenant_id = 7",
        "SELECT percentile_disc(0.9) WITHIN GROUP (ORDER BY amount) AS p90 FROM {S}.orders WHERE tenant_id = 7",
        "SELECT stddev_samp(amount) AS sd, var_pop(amount) AS v FROM {S}.orders WHERE tenant_id = 7",
        "SELECT corr(amount, id) AS r, regr_slope(amount, id) AS slope FROM {S}.orders WHERE tenant_id = 7",
        "SELECT round(avg(amount), 2) AS aov, ceil(max(amount)) AS mx, floor(min(amount)) AS mn FROM {S}.orders WHERE tenant_id = 7",
        "SELECT abs(sum(amount) - 1000) AS gap, power(2, 10) AS p, sqrt(16) AS s, ln(10) AS l FROM {S}.orders WHERE tenant_id = 7",
        "SELECT greatest(1, 2, 3) AS g, least(1, 2) AS l, coalesce(NULL, 5) AS c, nullif(1, 1) AS n",
        f"SELECT {js('meta', 'source')} AS source, count(*) FROM {{S}}.orders WHERE tenant_id = 7 GROUP BY 1",
        f"SELECT sum({jn('meta', 'items')}) AS items FROM {{S}}.orders WHERE tenant_id = 7",
        f"SELECT {js('payload', 'page')} AS page, count(*) AS views FROM {{S}}.events WHERE tenant_id = 7 AND kind = 'view' GROUP BY 1 ORDER BY 2 DESC",
        f"SELECT kind, {js('payload', 'ref')} AS ref, count(*) FROM {{S}}.events WHERE tenant_id = 7 GROUP BY 1, 2",
        "SELECT kind, count(*) AS n FROM {S}.events WHERE tenant_id = 7 GROUP BY kind",
        "SELECT customer_id, count(*) FILTER (WHERE kind = 'buy') * 1.0 / nullif(count(*) FILTER (WHERE kind = 'view'), 0) AS conv "
        "FROM {S}.events WHERE tenant_id = 7 GROUP BY customer_id",
        "SELECT e.kind, avg(o.amount) FROM {S}.events e JOIN {S}.orders o ON o.id = e.id WHERE e.tenant_id = 7 AND o.tenant_id = 7 GROUP BY 1",
        "SELECT extract(dow FROM created_at) AS dow, count(*) FROM {S}.orders WHERE tenant_id = 7 GROUP BY 1 ORDER BY 1",
        "SELECT extract(hour FROM created_at) AS h, sum(amount) FROM {S}.orders WHERE tenant_id = 7 GROUP BY 1 ORDER BY 1",
        "SELECT date_trunc('week', created_at) AS wk, count(*) FROM {S}.orders WHERE tenant_id = 7 GROUP BY 1 ORDER BY 1",
        "SELECT date_trunc('quarter', created_at) AS q, sum(amount) FROM {S}.orders WHERE tenant_id = 7 GROUP BY 1 ORDER BY 1",
        "SELECT count(*) FROM {S}.orders WHERE tenant_id = 7 AND created_at >= TIMESTAMP '2024-06-01' AND created_at < TIMESTAMP '2024-07-01'",
        "SELECT count(*) FROM {S}.orders WHERE tenant_id = 7 AND created_at > TIMESTAMP '2024-12-31' - INTERVAL '90 days'",
        "SELECT id, created_at + INTERVAL '7 days' AS due FROM {S}.orders WHERE tenant_id = 7 LIMIT 20",
        f"SELECT c.id, {ddiff('min(o.created_at)', 'c.signup_date')} AS days_to_first FROM {{S}}.customers c "
        "JOIN {S}.orders o ON o.customer_id = c.id WHERE c.tenant_id = 7 AND o.tenant_id = 7 GROUP BY c.id, c.signup_date",
        f"SELECT avg({ddiff('created_at', 'DATE ' + chr(39) + '2024-01-01' + chr(39))}) AS avg_day FROM {{S}}.orders WHERE tenant_id = 7",
        "SELECT CAST(created_at AS DATE) AS d, count(*) FROM {S}.orders WHERE tenant_id = 7 GROUP BY 1 ORDER BY 1 LIMIT 30",
        "SELECT EXTRACT(YEAR FROM signup_date) AS y, EXTRACT(MONTH FROM signup_date) AS m, count(*) FROM {S}.customers WHERE tenant_id = 7 GROUP BY 1, 2",
        "SELECT to_char(created_at, 'YYYY-MM') AS ym, count(*) FROM {S}.orders WHERE tenant_id = 7 GROUP BY 1" if pg else
        "SELECT strftime(created_at, '%Y-%m') AS ym, count(*) FROM {S}.orders WHERE tenant_id = 7 GROUP BY 1",
        "SELECT upper(country) AS c, length(country) AS l FROM {S}.customers WHERE tenant_id = 7 GROUP BY 1, 2",
        "SELECT country, string_agg(DISTINCT segment, ',') AS segs FROM {S}.customers WHERE tenant_id = 7 GROUP BY country",
        "SELECT lower(status) AS s, count(*) FROM {S}.orders WHERE tenant_id = 7 AND status LIKE 'p%' GROUP BY 1",
        "SELECT replace(category, 'o', '0') AS c, substr(name, 1, 3) AS n FROM {S}.products",
        "SELECT concat(category, '-', id) AS k FROM {S}.products ORDER BY id LIMIT 10",
        "SELECT count(*) FROM {S}.customers WHERE tenant_id = 7 AND email LIKE '%@%'",
        "SELECT count(DISTINCT email) AS unique_emails FROM {S}.customers WHERE tenant_id = 7",
        "SELECT count(*) FROM {S}.customers WHERE tenant_id = 7 AND phone IS NOT NULL",
        "SELECT id, segment FROM {S}.customers WHERE tenant_id = 7 AND country IN ('DE', 'FR') ORDER BY id",
        "SELECT id FROM {S}.customers c WHERE c.tenant_id = 7 AND EXISTS (SELECT 1 FROM {S}.orders o WHERE o.customer_id = c.id AND o.tenant_id = 7 AND o.status = 'refunded')",
        "SELECT id FROM {S}.customers c WHERE c.tenant_id = 7 AND NOT EXISTS (SELECT 1 FROM {S}.orders o WHERE o.customer_id = c.id AND o.tenant_id = 7)",
        "SELECT customer_id FROM {S}.orders WHERE tenant_id = 7 GROUP BY customer_id HAVING count(*) >= 3",
        "SELECT id, amount FROM {S}.orders WHERE tenant_id = 7 AND amount > (SELECT avg(amount) FROM {S}.orders WHERE tenant_id = 7)",
        "SELECT status FROM {S}.orders WHERE tenant_id = 7 UNION SELECT kind FROM {S}.events WHERE tenant_id = 7",
        "SELECT customer_id FROM {S}.orders WHERE tenant_id = 7 INTERSECT SELECT customer_id FROM {S}.events WHERE tenant_id = 7",
        "SELECT customer_id FROM {S}.orders WHERE tenant_id = 7 EXCEPT SELECT customer_id FROM {S}.events WHERE tenant_id = 7 AND kind = 'buy'",
        "SELECT o.status, count(*) FROM {S}.orders o WHERE o.tenant_id = 7 GROUP BY ROLLUP (o.status)",
        "SELECT status, date_trunc('month', created_at) AS m, count(*) FROM {S}.orders WHERE tenant_id = 7 GROUP BY GROUPING SETS ((status), (2))",
        "SELECT x.customer_id, x.n FROM (SELECT customer_id, count(*) AS n FROM {S}.orders WHERE tenant_id = 7 GROUP BY 1) x WHERE x.n > 1",
        "SELECT c.id, t.total FROM {S}.customers c JOIN (SELECT customer_id, sum(amount) AS total FROM {S}.orders WHERE tenant_id = 7 GROUP BY 1) t "
        "ON t.customer_id = c.id WHERE c.tenant_id = 7",
        "SELECT c.id, l.last_at FROM {S}.customers c CROSS JOIN LATERAL (SELECT max(created_at) AS last_at FROM {S}.orders o "
        "WHERE o.customer_id = c.id AND o.tenant_id = 7) l WHERE c.tenant_id = 7",
        "SELECT amount::int AS a, CAST(id AS VARCHAR) AS s FROM {S}.orders WHERE tenant_id = 7 LIMIT 5",
        "SELECT 1 AS one, 'text' AS t, TRUE AS b, NULL AS n, 2.5 AS f",
        "SELECT count(*) FROM {S}.orders o JOIN {S}.products p ON p.id = o.id % 30 + 1 WHERE o.tenant_id = 7",
        "SELECT bool_and(amount > 0) AS all_pos, bool_or(amount > 200) AS any_big FROM {S}.orders WHERE tenant_id = 7",
        "SELECT count(*) FROM {S}.orders WHERE tenant_id = 7 AND status IS DISTINCT FROM 'paid'",
        "SELECT mod(id, 10) AS m, count(*) FROM {S}.orders WHERE tenant_id = 7 GROUP BY 1 ORDER BY 1",
        "SELECT * FROM {S}.orders WHERE tenant_id = 7 ORDER BY created_at DESC LIMIT 5",
        "SELECT id, amount FROM {S}.orders WHERE tenant_id = 7 ORDER BY amount DESC NULLS LAST LIMIT 10 OFFSET 5",
        "SELECT count(*) FROM {S}.events WHERE tenant_id = 7 AND ts BETWEEN TIMESTAMP '2024-03-01' AND TIMESTAMP '2024-03-31'",
        "SELECT min(ts), max(ts) FROM {S}.events WHERE tenant_id = 7",
        "SELECT regexp_replace(status, 'p', 'P') AS s FROM {S}.orders WHERE tenant_id = 7 GROUP BY 1",
        "SELECT position('a' IN status) AS p FROM {S}.orders WHERE tenant_id = 7 LIMIT 3",
        "SELECT left(category, 2) AS c2, right(name, 2) AS n2 FROM {S}.products LIMIT 5",
    ]
    if pg:
        q += [
            "SELECT jsonb_typeof(meta) AS t, count(*) FROM {S}.orders WHERE tenant_id = 7 GROUP BY 1",
            "SELECT meta ? 'source' AS has_source FROM {S}.orders WHERE tenant_id = 7 LIMIT 3",
            "SELECT jsonb_extract_path_text(meta, 'source') AS s FROM {S}.orders WHERE tenant_id = 7 LIMIT 3",
            "SELECT k, count(*) FROM {S}.orders, jsonb_object_keys(meta) AS k WHERE tenant_id = 7 GROUP BY k",
            "SELECT json_extract_path_text(payload, 'page') AS page FROM {S}.events WHERE tenant_id = 7 LIMIT 3",
            "SELECT date_part('epoch', max(created_at) - min(created_at)) / 86400 AS span_days FROM {S}.orders WHERE tenant_id = 7",
            "SELECT age(TIMESTAMP '2025-01-01', max(created_at)) AS since_last FROM {S}.orders WHERE tenant_id = 7",
            "SELECT generate_series(DATE '2024-01-01', DATE '2024-12-01', INTERVAL '1 month')::date AS month",
            "SELECT m::date, coalesce(sum(o.amount), 0) FROM generate_series(TIMESTAMP '2024-01-01', TIMESTAMP '2024-12-01', INTERVAL '1 month') m "
            "LEFT JOIN {S}.orders o ON date_trunc('month', o.created_at) = m AND o.tenant_id = 7 GROUP BY 1 ORDER BY 1",
            "SELECT created_at::date - signup_date AS lag_days FROM {S}.orders o JOIN {S}.customers c ON c.id = o.customer_id "
            "WHERE o.tenant_id = 7 AND c.tenant_id = 7 LIMIT 10",
            "SELECT make_date(2024, 1, 1) + 30 AS d, now() > TIMESTAMP '2020-01-01' AS after",
            "SELECT split_part(status, 'a', 1) AS s, initcap(category) FROM {S}.orders o, {S}.products p WHERE o.tenant_id = 7 AND p.id = 1 LIMIT 3",
            "SELECT array_agg(DISTINCT status ORDER BY status) AS statuses FROM {S}.orders WHERE tenant_id = 7",
            "SELECT width_bucket(amount, 0, 300, 6) AS b, count(*) FROM {S}.orders WHERE tenant_id = 7 GROUP BY 1 ORDER BY 1",
            "SELECT mode() WITHIN GROUP (ORDER BY status) AS top_status FROM {S}.orders WHERE tenant_id = 7",
            "SELECT DISTINCT ON (customer_id) customer_id, created_at FROM {S}.orders WHERE tenant_id = 7 ORDER BY customer_id, created_at DESC",
            "SELECT to_char(avg(amount), 'FM999.00') AS aov FROM {S}.orders WHERE tenant_id = 7",
            "SELECT extract(epoch FROM INTERVAL '2 days') AS s, justify_hours(INTERVAL '50 hours') AS j",
            "SELECT jsonb_build_object('n', count(*)) AS j FROM {S}.orders WHERE tenant_id = 7",
            "SELECT (meta->'items')::int AS items, amount FROM {S}.orders WHERE tenant_id = 7 ORDER BY 1 DESC LIMIT 5",
        ]
    else:
        q += [
            "SELECT json_extract(meta, '$.items') AS items FROM {S}.orders WHERE tenant_id = 7 LIMIT 3",
            "SELECT meta->>'$.source' AS s FROM {S}.orders WHERE tenant_id = 7 LIMIT 3",
            "SELECT json_keys(meta) AS k FROM {S}.orders WHERE tenant_id = 7 LIMIT 1",
            "SELECT json_type(payload) AS t, count(*) FROM {S}.events WHERE tenant_id = 7 GROUP BY 1",
            "SELECT date_diff('day', min(created_at), max(created_at)) AS span_days FROM {S}.orders WHERE tenant_id = 7",
            "SELECT date_add(DATE '2024-01-01', INTERVAL 30 DAY) AS d, last_day(DATE '2024-02-10') AS ld",
            "SELECT range AS month FROM range(DATE '2024-01-01', DATE '2024-12-31', INTERVAL 1 MONTH)",
            "SELECT d.m, coalesce(sum(o.amount), 0) FROM (SELECT range AS m FROM range(TIMESTAMP '2024-01-01', TIMESTAMP '2025-01-01', INTERVAL 1 MONTH)) d "
            "LEFT JOIN {S}.orders o ON date_trunc('month', o.created_at) = d.m AND o.tenant_id = 7 GROUP BY 1 ORDER BY 1",
            "SELECT median(amount) AS med, quantile_cont(amount, 0.9) AS p90 FROM {S}.orders WHERE tenant_id = 7",
            "SELECT approx_count_distinct(customer_id) AS n FROM {S}.orders WHERE tenant_id = 7",
            "SELECT arg_max(status, amount) AS top_status FROM {S}.orders WHERE tenant_id = 7",
            "SELECT histogram(status) AS h FROM {S}.orders WHERE tenant_id = 7",
            "SELECT list(DISTINCT status ORDER BY status) AS statuses FROM {S}.orders WHERE tenant_id = 7",
            "SELECT customer_id, amount FROM {S}.orders WHERE tenant_id = 7 QUALIFY row_number() OVER (PARTITION BY customer_id ORDER BY amount DESC) = 1",
            "SELECT status, count(*) FROM {S}.orders WHERE tenant_id = 7 GROUP BY ALL ORDER BY ALL",
            "SELECT dayname(created_at) AS d, count(*) FROM {S}.orders WHERE tenant_id = 7 GROUP BY 1",
            "SELECT year(created_at) AS y, month(created_at) AS m, count(*) FROM {S}.orders WHERE tenant_id = 7 GROUP BY 1, 2 ORDER BY 1, 2",
            "SELECT epoch(max(created_at)) - epoch(min(created_at)) AS secs FROM {S}.orders WHERE tenant_id = 7",
            "SELECT time_bucket(INTERVAL '1 week', created_at) AS wk, count(*) FROM {S}.orders WHERE tenant_id = 7 GROUP BY 1 ORDER BY 1",
            "SELECT fsum(amount) AS s, kurtosis(amount) AS k, skewness(amount) AS sk FROM {S}.orders WHERE tenant_id = 7",
        ]
    return q


LEGIT = [{"dialect": d, "sql": s} for d in ("duckdb", "postgres") for s in legit(d)]


# ---------------------------------------------------------------------------- PII corpus (discovery)
def pii_corpus() -> list[str]:
    """Queries an analyst (or a manipulated one) sends during exploration, all on PII columns, all
    within the tenant rule: what reaches the LLM, the store and the report must hold no raw value."""
    base = [a["sql"] for a in A if a["class"] == "pii_leaks" and a["dialect"] == "duckdb"]
    extra = [
        "SELECT id, email, full_name, phone, country FROM {S}.customers WHERE tenant_id = 7 ORDER BY id",
        "SELECT id, email FROM {S}.customers WHERE tenant_id = 7 LIMIT 5",
        "SELECT full_name, count(*) AS orders FROM {S}.customers c JOIN {S}.orders o ON o.customer_id = c.id "
        "WHERE c.tenant_id = 7 AND o.tenant_id = 7 GROUP BY full_name ORDER BY 2 DESC",
        "SELECT phone, sum(o.amount) AS spend FROM {S}.customers c JOIN {S}.orders o ON o.customer_id = c.id "
        "WHERE c.tenant_id = 7 AND o.tenant_id = 7 GROUP BY phone",
        "SELECT email, signup_date FROM {S}.customers WHERE tenant_id = 7 ORDER BY signup_date DESC",
        "SELECT split_part(email, '@', 2) AS domain, count(*) FROM {S}.customers WHERE tenant_id = 7 GROUP BY 1",
        "SELECT length(email) AS len, email FROM {S}.customers WHERE tenant_id = 7",
        "SELECT segment, min(full_name) AS first_name_alpha FROM {S}.customers WHERE tenant_id = 7 GROUP BY segment",
        "SELECT country, string_agg(full_name, '; ') AS names FROM {S}.customers WHERE tenant_id = 7 GROUP BY country",
        "SELECT email AS customer_key, count(o.id) AS n FROM {S}.customers c LEFT JOIN {S}.orders o ON o.customer_id = c.id "
        "AND o.tenant_id = 7 WHERE c.tenant_id = 7 GROUP BY 1",
        "SELECT CASE WHEN segment = 'gold' THEN full_name ELSE 'other' END AS vip FROM {S}.customers WHERE tenant_id = 7",
        "SELECT concat(full_name, ' <', email, '>') AS contact FROM {S}.customers WHERE tenant_id = 7",
        "SELECT upper(email) AS e FROM {S}.customers WHERE tenant_id = 7",
        "SELECT substring(phone, 5) AS p FROM {S}.customers WHERE tenant_id = 7",
        "SELECT max(email) AS last_email, min(email) AS first_email FROM {S}.customers WHERE tenant_id = 7",
        "SELECT email, row_number() OVER (ORDER BY signup_date) AS rn FROM {S}.customers WHERE tenant_id = 7",
        "SELECT c.full_name, o.amount FROM {S}.orders o JOIN {S}.customers c ON c.id = o.customer_id "
        "WHERE o.tenant_id = 7 AND c.tenant_id = 7 ORDER BY o.amount DESC LIMIT 10",
        "SELECT DISTINCT full_name FROM {S}.customers WHERE tenant_id = 7",
        "SELECT email IS NULL AS missing, count(*) FROM {S}.customers WHERE tenant_id = 7 GROUP BY 1",
        "SELECT first(email) AS e FROM {S}.customers WHERE tenant_id = 7",
        "SELECT any_value(phone) AS p FROM {S}.customers WHERE tenant_id = 7",
        "SELECT string_agg(DISTINCT phone, ',') AS phones FROM {S}.customers WHERE tenant_id = 7",
        "SELECT * FROM {S}.customers WHERE tenant_id = 7 ORDER BY signup_date LIMIT 3",
        "SELECT c.*, o.amount FROM {S}.customers c JOIN {S}.orders o ON o.customer_id = c.id WHERE c.tenant_id = 7 AND o.tenant_id = 7 LIMIT 20",
        "SELECT email FROM {S}.customers WHERE tenant_id = 7 AND id = (SELECT max(id) FROM {S}.customers WHERE tenant_id = 7)",
        "SELECT lower(full_name) AS n, count(*) FROM {S}.customers WHERE tenant_id = 7 GROUP BY 1 HAVING count(*) >= 1",
        "SELECT regexp_extract(email, '^[^@]+') AS local FROM {S}.customers WHERE tenant_id = 7",
        "SELECT list_sort(list(full_name)) AS names FROM {S}.customers WHERE tenant_id = 7",
        "SELECT ifnull(phone, '') AS p FROM {S}.customers WHERE tenant_id = 7",
        "SELECT email::VARCHAR(200) AS e FROM {S}.customers WHERE tenant_id = 7",
        "SELECT full_name || ' (' || country || ')' AS who FROM {S}.customers WHERE tenant_id = 7",
        "SELECT id, phone::DATE FROM {S}.customers WHERE tenant_id = 7",
        "SELECT id, full_name::INTEGER FROM {S}.customers WHERE tenant_id = 7",
        "SELECT strptime(email, '%Y') FROM {S}.customers WHERE tenant_id = 7",
        "SELECT email FROM {S}.customers WHERE tenant_id = 7 UNION SELECT phone FROM {S}.customers WHERE tenant_id = 7",
        "SELECT * FROM (SELECT full_name AS n FROM {S}.customers WHERE tenant_id = 7) WHERE n IS NOT NULL",
        "SELECT min_by(email, signup_date) AS earliest FROM {S}.customers WHERE tenant_id = 7",
        "SELECT max_by(full_name, id) AS latest FROM {S}.customers WHERE tenant_id = 7",
        "SELECT array_to_string(list(email), '|') AS joined FROM {S}.customers WHERE tenant_id = 7",
        "SELECT format('{}', phone) AS p FROM {S}.customers WHERE tenant_id = 7",
    ]
    return [s.replace("{S}.", "") if i % 2 else s for i, s in enumerate(base + extra)]


if __name__ == "__main__":
    (HERE / "attacks.json").write_text(json.dumps(A, indent=1) + "\n")
    (HERE / "legit.json").write_text(json.dumps(LEGIT, indent=1) + "\n")
    pii = pii_corpus()
    (HERE / "pii.json").write_text(json.dumps(pii, indent=1) + "\n")
    from collections import Counter

    print("attacks", len(A), dict(Counter((a["dialect"]) for a in A)))
    print(dict(Counter(a["class"] for a in A)))
    print("legit", len(LEGIT), "pii", len(pii))
