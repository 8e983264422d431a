"""Regenerate refuse.json / allow.json (the guard's adversarial and legitimate corpus).

Run: python tests/data/guard/build_corpus.py. The JSON files are the test data;
this script documents how they were built and keeps them reproducible.
"""

import json
from pathlib import Path

HERE = Path(__file__).parent
T = ["orders", "customers", "products"]

writes = [
    "DROP TABLE {t}", "DROP VIEW IF EXISTS {t}", "CREATE TABLE x AS SELECT * FROM {t}", "CREATE VIEW v AS SELECT * FROM {t}",
    "ALTER TABLE {t} ADD COLUMN x INT", "ALTER TABLE {t} RENAME TO y", "TRUNCATE {t}", "TRUNCATE TABLE {t}",
    "INSERT INTO {t} VALUES (1)", "INSERT INTO {t} SELECT * FROM {t}", "UPDATE {t} SET id = 0", "DELETE FROM {t}",
    "DELETE FROM {t} WHERE id > 0", "MERGE INTO {t} USING {t} s ON s.id = {t}.id WHEN MATCHED THEN DELETE",
    "CREATE INDEX i ON {t} (id)", "DROP SCHEMA main CASCADE", "CREATE OR REPLACE TABLE {t} AS SELECT 1 AS id",
    "COPY {t} TO '/tmp/x.csv'", "COPY {t} FROM '/tmp/x.csv'", "SELECT * INTO stolen FROM {t}",
    "SELECT * FROM {t} FOR UPDATE", "CREATE TEMP TABLE t2 AS SELECT * FROM {t}",
]
commands = [
    "PRAGMA table_info('orders')", "PRAGMA enable_profiling", "ATTACH 'other.db' AS o", "DETACH o", "SET threads = 1",
    "SET enable_external_access = true", "RESET ALL", "CALL pragma_version()", "BEGIN", "BEGIN TRANSACTION", "COMMIT",
    "ROLLBACK", "INSTALL httpfs", "LOAD httpfs", "EXPORT DATABASE '/tmp/x'", "IMPORT DATABASE '/tmp/x'", "VACUUM",
    "CHECKPOINT", "GRANT SELECT ON orders TO public", "REVOKE SELECT ON orders FROM public", "USE other",
    "DESCRIBE orders", "SHOW TABLES", "SUMMARIZE orders", "ANALYZE orders", "EXPLAIN ANALYZE DELETE FROM orders",
    "CREATE SECRET s (TYPE S3)", "CREATE MACRO m(a) AS a", "CREATE SEQUENCE s", "LISTEN x", "NOTIFY x",
    "DO $$ BEGIN END $$", "PREPARE p AS SELECT 1", "EXECUTE p", "DEALLOCATE p", "LOCK TABLE orders",
]
duck_funcs_scalar = ["getenv('HOME')", "current_setting('threads')", "pg_sleep(10)", "sleep(5)", "nextval('s')",
                     "setval('s', 1)", "http_get('http://x')"]
duck_funcs_from = ["read_csv('/etc/passwd')", "read_csv_auto('/etc/passwd')", "read_parquet('s3://b/x.parquet')",
                   "parquet_scan('/x.parquet')", "read_json('/x.json')", "read_json_auto('/x.json')",
                   "read_text('/etc/shadow')", "read_blob('/etc/shadow')", "glob('/*')", "sniff_csv('/x.csv')",
                   "sqlite_scan('x.db', 't')", "postgres_scan('host=x', 'public', 't')", "duckdb_settings()",
                   "duckdb_secrets()", "duckdb_extensions()", "pragma_table_info('orders')", "query('select 1')",
                   "query_table('orders')", "read_ndjson('/x')", "parquet_metadata('/x')", "iceberg_scan('/x')",
                   "delta_scan('/x')"]
pg_funcs = ["pg_read_file('/etc/passwd')", "pg_read_binary_file('/etc/passwd')", "pg_ls_dir('/')",
            "pg_stat_file('/etc/passwd')", "lo_import('/etc/passwd')", "lo_export(1, '/tmp/x')",
            "dblink('host=x', 'select 1')", "dblink_exec('host=x', 'drop table t')", "pg_sleep(60)",
            "pg_sleep_for('1 hour')", "set_config('role', 'admin', false)", "pg_terminate_backend(1)",
            "pg_cancel_backend(1)", "pg_reload_conf()", "pg_rotate_logfile()", "nextval('s')",
            "query_to_xml('select * from orders', true, true, '')", "pg_advisory_lock(1)", "txid_current()",
            "current_setting('data_directory')", "pg_ls_logdir()", "pg_notify('c', 'x')"]
system = ["information_schema.tables", "information_schema.columns", "pg_catalog.pg_user", "pg_catalog.pg_shadow",
          "pg_shadow", "pg_authid", "sqlite_master", "duckdb_tables", "main.duckdb_columns", '"information_schema"."tables"',
          "INFORMATION_SCHEMA.TABLES", "pg_stat_activity"]
unknown = ["secrets", "main.secrets", "other_db.main.orders", "hr.salaries", '"Orders2"', "users_backup"]
tenant_escapes = [
    "SELECT * FROM orders",
    "SELECT * FROM orders WHERE tenant_id = 7 OR 1 = 1",
    "SELECT * FROM orders WHERE tenant_id = 7 OR tenant_id = 8",
    "SELECT * FROM orders WHERE tenant_id <> 7",
    "SELECT * FROM orders WHERE tenant_id IN (7, 8)",
    "SELECT * FROM orders WHERE tenant_id > 6",
    "SELECT * FROM orders WHERE tenant_id = 8",
    "SELECT * FROM orders WHERE tenant_id = '8'",
    "SELECT * FROM orders WHERE NOT tenant_id <> 7",
    "SELECT * FROM orders WHERE customer_id = 7",
    "SELECT * FROM orders o JOIN customers c ON o.customer_id = c.id WHERE o.tenant_id = 7",
    "SELECT * FROM orders o JOIN customers c ON o.customer_id = c.id WHERE c.tenant_id = 7",
    "SELECT * FROM orders o, customers c WHERE o.tenant_id = 7",
    "SELECT * FROM (SELECT * FROM orders) s WHERE s.tenant_id = 7",
    "WITH a AS (SELECT * FROM orders) SELECT * FROM a WHERE tenant_id = 7",
    "SELECT id FROM orders WHERE tenant_id = 7 UNION SELECT id FROM orders",
    "SELECT id FROM orders WHERE tenant_id = 7 UNION ALL SELECT id FROM customers",
    "SELECT * FROM orders WHERE id IN (SELECT id FROM orders)",
    "SELECT * FROM orders WHERE tenant_id = 7 AND id IN (SELECT id FROM customers)",
    "SELECT *, (SELECT count(*) FROM orders) FROM customers WHERE tenant_id = 7",
    "SELECT * FROM orders o LEFT JOIN customers c ON o.customer_id = c.id AND o.tenant_id = 7 AND c.tenant_id = 7",
    "SELECT * FROM customers c RIGHT JOIN orders o ON o.customer_id = c.id AND o.tenant_id = 7 WHERE c.tenant_id = 7",
    "SELECT * FROM orders o FULL JOIN customers c ON c.tenant_id = 7 AND o.tenant_id = 7",
    "SELECT * FROM orders WHERE (tenant_id = 7 OR amount > 0)",
    "SELECT * FROM orders WHERE COALESCE(tenant_id, 7) = 7",
    "SELECT * FROM orders WHERE tenant_id = 7 OR tenant_id IS NULL",
    "SELECT * FROM orders o JOIN orders o2 ON o.id = o2.id WHERE o.tenant_id = 7",
    "SELECT * FROM orders WHERE CASE WHEN tenant_id = 7 THEN TRUE ELSE TRUE END",
    "SELECT * FROM orders WHERE 7 = 7",
    "SELECT * FROM orders WHERE orders.tenant_id = 7 OR orders.amount IS NOT NULL",
]
refuse = []
for t in T:
    for w in writes:
        refuse.append({"sql": w.format(t=t), "kind": "write"})
for w in writes[:12]:
    refuse.append({"sql": "SELECT 1; " + w.format(t="orders"), "kind": "stacked"})
    refuse.append({"sql": "SELECT * FROM orders;\n" + w.format(t="orders") + ";", "kind": "stacked"})
    refuse.append({"sql": "/* SELECT */ " + w.format(t="orders"), "kind": "comment"})
    refuse.append({"sql": "-- just a select\n" + w.format(t="orders").lower(), "kind": "comment"})
    refuse.append({"sql": w.format(t="ORDERS").swapcase(), "kind": "case"})
for c in commands:
    refuse.append({"sql": c, "kind": "command"})
    refuse.append({"sql": "SELECT 1; " + c, "kind": "stacked"})
for f in duck_funcs_scalar:
    refuse.append({"sql": f"SELECT {f}", "kind": "function"})
    refuse.append({"sql": f"SELECT id, {f.upper()} FROM orders", "kind": "function"})
for f in duck_funcs_from:
    refuse.append({"sql": f"SELECT * FROM {f}", "kind": "function"})
for f in pg_funcs:
    refuse.append({"sql": f"SELECT {f}", "kind": "function", "dialect": "postgres"})
    refuse.append({"sql": f"SELECT * FROM orders WHERE id = (SELECT 1 FROM (SELECT {f}) x)", "kind": "function",
                   "dialect": "postgres"})
for s in system:
    refuse.append({"sql": f"SELECT * FROM {s}", "kind": "system"})
for u in unknown:
    refuse.append({"sql": f"SELECT * FROM {u}", "kind": "unknown"})
for q in tenant_escapes:
    refuse.append({"sql": q, "kind": "tenant", "tenant": True})
refuse += [
    {"sql": "SELECT * FROM '/etc/passwd'", "kind": "file"},
    {"sql": "SELECT * FROM 'https://example.com/x.csv'", "kind": "file"},
    {"sql": "", "kind": "empty"},
    {"sql": ";;", "kind": "empty"},
    {"sql": "SELEC * FROM orders", "kind": "syntax"},
    {"sql": "WITH x AS (DELETE FROM orders RETURNING *) SELECT * FROM x", "kind": "write", "dialect": "postgres"},
    {"sql": "WITH x AS (UPDATE orders SET id = 1 RETURNING *) SELECT * FROM x", "kind": "write", "dialect": "postgres"},
    {"sql": "SELECT 1 UNION ALL SELECT pg_sleep(100)", "kind": "function", "dialect": "postgres"},
    {"sql": "SELECT * FROM orders WHERE id = 1;--", "kind": "ok-trailing"},
]
refuse = [r for r in refuse if r["kind"] != "ok-trailing"]
# issue 18's classes: quoted/qualified names, functions that run SQL text or write, shadowing,
# blow-ups, tenant renames and pivots (each refused in every dialect)
calls = ["pg_read_file('/etc/passwd', 0, 200)", "ts_stat('select * from orders')",
         "ts_rewrite('a'::tsquery, 'select 1')", "query_to_xml_and_xmlschema('select 1', true, true, '')",
         "table_to_xml('orders', true, true, '')", "lo_creat(-1)", "lo_from_bytea(0, 'x')",
         "pg_logical_emit_message(true, 'p', 'x')", "pg_try_advisory_lock(1)", "pg_stat_reset()",
         "set_config('statement_timeout', '0', false)", "pg_terminate_backend(1)", "current_setting('x')"]
for c in calls:
    name, rest = c.split("(", 1)
    for form in (c, f'"{name}"({rest}', f"pg_catalog.{c}", f'pg_catalog."{name}"({rest}', c.upper()):
        refuse.append({"sql": f"SELECT {form}", "kind": "function"})
    refuse.append({"sql": f"SELECT id FROM orders WHERE id IN (SELECT 1 FROM (SELECT {c}) x)", "kind": "function"})
for q in ["SELECT repeat('x', 100000000)", "SELECT space(100000000)", "SELECT lpad('a', 100000000, 'b')",
          "SELECT rpad('a', 2147483647)", "SELECT repeat(country, 1000000) FROM customers",
          "SELECT * FROM generate_series(1, 1000000000000) g", "SELECT count(*) FROM range(10000000000) r",
          "SELECT 'abc'.upper()", "SELECT main.lower('x')", "SELECT * FROM pg_catalog.generate_series(1, 3) g"]:
    refuse.append({"sql": q, "kind": "function"})
for q in ["SELECT * FROM pg_shadow, (WITH pg_shadow AS (SELECT 1) SELECT 1) x",
          "SELECT * FROM (WITH secrets AS (SELECT 1 AS a) SELECT * FROM secrets) x, secrets",
          "WITH a AS (SELECT * FROM pg_authid), pg_authid AS (SELECT 1 AS x) SELECT * FROM a",
          "SELECT (WITH information_schema AS (SELECT 1) SELECT 1), * FROM information_schema.tables"]:
    refuse.append({"sql": q, "kind": "shadow"})
for q in ["SELECT * FROM orders AS o(id, amount, customer_id, tenant_id) WHERE o.tenant_id = 7",
          "SELECT * FROM orders o(a, tenant_id) WHERE tenant_id = 7",
          "SELECT * FROM orders PIVOT (sum(amount) FOR customer_id IN (1, 2)) WHERE tenant_id = 7",
          "SELECT 7 AS tenant_id, id FROM orders WHERE tenant_id = 7",
          "SELECT * FROM (SELECT id, 7 AS tenant_id FROM orders) s WHERE s.tenant_id = 7",
          "SELECT o.id FROM orders o JOIN customers c ON c.id = o.customer_id WHERE tenant_id = 7 AND c.tenant_id = 7",
          "SELECT * FROM orders o WHERE EXISTS (SELECT 1 FROM customers c WHERE o.tenant_id = 7 AND c.tenant_id = 7)",
          "SELECT * FROM unknown_orders WHERE tenant_id = 7"]:
    refuse.append({"sql": q, "kind": "tenant", "tenant": True})

allow = []
base = [
    "SELECT count(*) FROM orders",
    "SELECT customer_id, sum(amount) AS revenue FROM orders GROUP BY 1 ORDER BY 2 DESC LIMIT 10",
    "SELECT c.country, count(DISTINCT o.customer_id) FROM orders o JOIN customers c ON o.customer_id = c.id GROUP BY 1",
    "WITH t AS (SELECT customer_id, count(*) AS n FROM orders GROUP BY 1) SELECT n, count(*) FROM t GROUP BY 1",
    "SELECT id, amount, rank() OVER (PARTITION BY customer_id ORDER BY amount DESC) AS r FROM orders",
    "SELECT id, sum(amount) OVER (ORDER BY id ROWS BETWEEN 6 PRECEDING AND CURRENT ROW) FROM orders",
    "SELECT id, lag(amount) OVER (ORDER BY id) AS prev FROM orders",
    "SELECT CASE WHEN amount > 100 THEN 'big' ELSE 'small' END AS size, count(*) FROM orders GROUP BY 1",
    "SELECT * FROM orders WHERE customer_id IN (SELECT id FROM customers WHERE country = 'DE')",
    "SELECT id FROM orders UNION SELECT id FROM customers",
    "SELECT id FROM orders INTERSECT SELECT id FROM customers",
    "SELECT id FROM orders EXCEPT SELECT id FROM customers",
    "SELECT avg(price), min(price), max(price) FROM products",
    "SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY amount) FROM orders",
    "SELECT count(*) FILTER (WHERE amount > 10) FROM orders",
    "SELECT coalesce(country, 'unknown') AS c, count(*) FROM customers GROUP BY 1 HAVING count(*) > 5",
    "SELECT o.id FROM orders o LEFT JOIN customers c ON c.id = o.customer_id WHERE c.id IS NULL",
    "SELECT EXISTS (SELECT 1 FROM orders)",
    "SELECT ntile(4) OVER (ORDER BY amount) AS q, amount FROM orders",
    "SELECT main.orders.id FROM main.orders",
    "select count(*) from ORDERS",
    "SELECT 1",
    "SELECT id, amount / NULLIF(customer_id, 0) AS ratio FROM orders",
    "SELECT stddev_samp(amount), var_pop(amount), corr(amount, customer_id) FROM orders",
]
duck = [
    "SELECT id FROM orders QUALIFY row_number() OVER (PARTITION BY customer_id ORDER BY id) = 1",
    "SELECT date_trunc('month', DATE '2026-01-15') AS m",
    "SELECT DATE '2026-01-01' + INTERVAL 7 DAY",
    "SELECT datediff('day', DATE '2026-01-01', DATE '2026-02-01')",
    "SELECT strftime(DATE '2026-01-01', '%Y-%m')",
    "SELECT approx_count_distinct(customer_id) FROM orders",
    "SELECT list(id) FROM orders",
    "SELECT id // 2 FROM orders",
    "SELECT epoch_ms(1700000000000)",
    "SELECT * FROM orders USING SAMPLE 10%",
    "SELECT arg_max(id, amount) FROM orders",
    "SELECT histogram(customer_id) FROM orders",
    "SELECT regexp_matches(country, '^D') FROM customers",
    "SELECT id, amount FROM orders ORDER BY amount DESC NULLS LAST LIMIT 5 OFFSET 5",
    "SELECT year(DATE '2026-03-01'), month(DATE '2026-03-01')",
]
pg = [
    "SELECT date_trunc('month', now()) - interval '1 month'",
    "SELECT extract(epoch FROM now() - timestamp '2026-01-01')",
    "SELECT id::text FROM orders",
    "SELECT to_char(now(), 'YYYY-MM')",
    "SELECT generate_series(1, 10)",
    "SELECT age(timestamp '2026-01-01', timestamp '2025-01-01')",
    "SELECT string_agg(country, ',') FROM customers",
    "SELECT array_agg(id ORDER BY id) FROM orders",
    "SELECT id FROM orders WHERE amount > ALL (SELECT price FROM products)",
    "SELECT DISTINCT ON (customer_id) customer_id, id FROM orders ORDER BY customer_id, id DESC",
    "SELECT sum(amount)::numeric / count(*) FROM orders",
    "SELECT now()::date - 30",
    "SELECT percent_rank() OVER (ORDER BY amount) FROM orders",
    "SELECT mode() WITHIN GROUP (ORDER BY country) FROM customers",
    "SELECT greatest(1, 2), least(1, 2)",
]
snow = [
    "SELECT DATEADD(day, -7, CURRENT_DATE())",
    "SELECT DATEDIFF('day', '2026-01-01'::date, '2026-02-01'::date)",
    "SELECT IFF(amount > 10, 'big', 'small') FROM orders",
    "SELECT COUNT_IF(amount > 10) FROM orders",
    "SELECT id FROM orders QUALIFY ROW_NUMBER() OVER (ORDER BY id) = 1",
    "SELECT DATE_TRUNC('MONTH', CURRENT_DATE())",
    "SELECT TO_VARCHAR(CURRENT_DATE(), 'YYYY-MM')",
    "SELECT APPROX_COUNT_DISTINCT(customer_id) FROM orders",
    "SELECT MEDIAN(amount) FROM orders",
    "SELECT LISTAGG(country, ',') FROM customers",
]
# analytics an analyst writes every day (columns: orders.created_at/status/payload, customers.signup_date)
common_more = [
    "SELECT date_trunc('month', created_at) AS m, count(*) AS n, sum(amount) AS revenue FROM orders GROUP BY 1 ORDER BY 1",
    "SELECT status, count(*) * 100.0 / sum(count(*)) OVER () AS pct FROM orders GROUP BY status",
    "SELECT customer_id, amount, amount - avg(amount) OVER (PARTITION BY customer_id) AS diff FROM orders",
    "SELECT id, sum(amount) OVER (PARTITION BY customer_id ORDER BY created_at ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS running FROM orders",
    "SELECT id, lead(created_at) OVER (PARTITION BY customer_id ORDER BY created_at) AS next_at FROM orders",
    "SELECT id, first_value(amount) OVER (PARTITION BY customer_id ORDER BY created_at) AS first_amount FROM orders",
    "SELECT id, dense_rank() OVER (ORDER BY amount DESC) AS dr, cume_dist() OVER (ORDER BY amount) AS cd FROM orders",
    "WITH firsts AS (SELECT customer_id, min(created_at) AS first_at FROM orders GROUP BY 1) SELECT date_trunc('month', first_at) AS cohort, count(*) FROM firsts GROUP BY 1 ORDER BY 1",
    "WITH a AS (SELECT customer_id, sum(amount) AS total FROM orders GROUP BY 1), b AS (SELECT avg(total) AS mean FROM a) SELECT count(*) FROM a, b WHERE a.total > b.mean",
    "SELECT c.country, avg(o.amount) AS aov FROM orders o JOIN customers c ON c.id = o.customer_id WHERE o.status = 'paid' GROUP BY c.country HAVING count(*) >= 10 ORDER BY aov DESC",
    "SELECT CASE WHEN amount < 10 THEN '0-10' WHEN amount < 100 THEN '10-100' ELSE '100+' END AS bucket, count(*) FROM orders GROUP BY 1",
    "SELECT status, min(created_at), max(created_at) FROM orders GROUP BY status",
    "SELECT extract(year FROM created_at) AS y, extract(month FROM created_at) AS mo, count(*) FROM orders GROUP BY 1, 2",
    "SELECT count(DISTINCT customer_id) AS buyers, count(*) AS orders, sum(amount) / count(DISTINCT customer_id) AS per_buyer FROM orders",
    "SELECT round(avg(amount), 2), round(stddev_pop(amount), 2) FROM orders",
    "SELECT upper(country), lower(country), length(country), substr(country, 1, 2) FROM customers",
    "SELECT trim(country), replace(country, 'a', 'b'), concat(country, '-', id) FROM customers",
    "SELECT coalesce(status, 'none'), nullif(amount, 0) FROM orders",
    "SELECT cast(amount AS integer), cast(created_at AS date) FROM orders",
    "SELECT abs(amount), ceil(amount), floor(amount), sqrt(abs(amount)), ln(1 + abs(amount)), power(amount, 2) FROM orders",
    "SELECT o.id FROM orders o WHERE NOT EXISTS (SELECT 1 FROM customers c WHERE c.id = o.customer_id)",
    "SELECT * FROM (SELECT customer_id, count(*) AS n FROM orders GROUP BY 1) t WHERE n > 3 ORDER BY n DESC LIMIT 20",
    "SELECT customer_id FROM orders GROUP BY customer_id HAVING sum(amount) > (SELECT avg(amount) * 10 FROM orders)",
    "SELECT a.customer_id, a.n, b.total FROM (SELECT customer_id, count(*) AS n FROM orders GROUP BY 1) a JOIN (SELECT customer_id, sum(amount) AS total FROM orders GROUP BY 1) b ON a.customer_id = b.customer_id",
    "SELECT status, sum(CASE WHEN amount > 100 THEN 1 ELSE 0 END) AS big, avg(CASE WHEN status = 'refunded' THEN 1.0 ELSE 0.0 END) AS refund_rate FROM orders GROUP BY 1",
    "SELECT p.id, p.price, (SELECT count(*) FROM orders o WHERE o.amount > p.price) AS above FROM products p",
    "SELECT country FROM customers WHERE country LIKE 'D%' OR country IN ('FR', 'IT') OR country BETWEEN 'A' AND 'C'",
    "SELECT min(amount), max(amount), percentile_disc(0.9) WITHIN GROUP (ORDER BY amount) FROM orders",
    "SELECT greatest(amount, 0), least(amount, 100) FROM orders",
    "SELECT id, row_number() OVER w AS rn FROM orders WINDOW w AS (PARTITION BY customer_id ORDER BY created_at)",
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10) SELECT i FROM n",
    "SELECT v.x FROM (VALUES (1), (2), (3)) AS v(x)",
]
duck_more = [
    "SELECT date_diff('day', min(created_at), max(created_at)) FROM orders",
    "SELECT customer_id, arg_min(status, created_at) AS first_status FROM orders GROUP BY ALL",
    "SELECT status, count(*) FROM orders GROUP BY ALL ORDER BY ALL",
    "SELECT quantile_cont(amount, [0.25, 0.5, 0.75]) FROM orders",
    "SELECT median(amount), mode(status), approx_quantile(amount, 0.9) FROM orders",
    "SELECT json_extract_string(payload, '$.channel') AS channel, count(*) FROM orders GROUP BY 1",
    "SELECT payload->>'$.device' AS device FROM orders",
    "SELECT json_extract(payload, '$.items[0].sku') FROM orders",
    "SELECT regexp_extract(country, '([A-Z]+)', 1), regexp_replace(country, '[0-9]', '', 'g') FROM customers",
    "SELECT string_split(country, ' ')[1] FROM customers",
    "SELECT list_sort(list_distinct(list(status))) FROM orders",
    "SELECT unnest([1, 2, 3]) AS x",
    "SELECT * FROM unnest([1, 2, 3]) AS t(x)",
    "SELECT * FROM range(0, 12) AS r(m)",
    "SELECT time_bucket(INTERVAL '1 week', created_at) AS wk, count(*) FROM orders GROUP BY 1",
    "SELECT dayname(created_at), dayofweek(created_at), count(*) FROM orders GROUP BY 1, 2",
    "SELECT strftime(created_at, '%Y-%W') AS yw, count(*) FROM orders GROUP BY 1",
    "SELECT count(*) FILTER (WHERE status = 'paid') * 1.0 / count(*) AS paid_rate FROM orders",
    "SELECT id FROM orders QUALIFY rank() OVER (PARTITION BY customer_id ORDER BY amount DESC) <= 3",
    "SELECT * EXCLUDE (tenant_id) FROM orders LIMIT 5",
    "SELECT max_by(id, amount), min_by(id, amount) FROM orders",
    "SELECT kurtosis(amount), skewness(amount), entropy(status) FROM orders",
    "SELECT try_cast(status AS INTEGER) FROM orders",
    "SELECT created_at::DATE - INTERVAL 30 DAY FROM orders",
    "SELECT last_day(created_at), make_date(2026, 1, 1) FROM orders",
    "SELECT if(amount > 10, 'big', 'small') FROM orders",
    "SELECT list_transform([1, 2, 3], lambda x: x * 2)",
    "SELECT struct_pack(a := 1, b := 'x')",
    "SELECT {'a': 1, 'b': 2} AS s",
    "SELECT count_if(amount > 10), bool_or(amount < 0) FROM orders",
    "SELECT hash(status), md5(status) FROM orders",
    "SELECT contains(country, 'erm'), starts_with(country, 'G') FROM customers",
    "FROM orders SELECT id, amount LIMIT 3",
    "SELECT repeat('*', 20) AS bar",
    "SELECT lpad(cast(id AS VARCHAR), 8, '0') FROM orders",
]
pg_more = [
    "SELECT payload->>'channel' AS channel, count(*) FROM orders GROUP BY 1",
    "SELECT payload->'items'->0->>'sku' FROM orders",
    "SELECT jsonb_array_length(payload->'items') FROM orders",
    "SELECT jsonb_extract_path_text(payload, 'device', 'os') FROM orders",
    "SELECT jsonb_typeof(payload) , jsonb_object_keys(payload) FROM orders",
    "SELECT json_build_object('n', count(*)) FROM orders",
    "SELECT date_part('dow', created_at), count(*) FROM orders GROUP BY 1",
    "SELECT created_at::date, count(*) FROM orders GROUP BY 1 ORDER BY 1",
    "SELECT created_at + interval '1 day' * 7 FROM orders",
    "SELECT to_char(created_at, 'YYYY-\"W\"IW') FROM orders",
    "SELECT date_bin('15 minutes', created_at, timestamp '2026-01-01') AS slot, count(*) FROM orders GROUP BY 1",
    "SELECT regexp_replace(country, '\\s+', ' ', 'g'), regexp_match(country, '^([A-Z])') FROM customers",
    "SELECT country ~ '^D', country ILIKE 'de%' FROM customers",
    "SELECT split_part(country, '-', 1), strpos(country, 'a'), initcap(country) FROM customers",
    "SELECT array_length(array_agg(id), 1) FROM orders",
    "SELECT unnest(string_to_array(country, ' ')) FROM customers",
    "SELECT * FROM generate_series(date '2026-01-01', date '2026-03-01', interval '1 month') AS d(month)",
    "SELECT count(*) FILTER (WHERE status = 'paid') FROM orders",
    "SELECT width_bucket(amount, 0, 1000, 10), count(*) FROM orders GROUP BY 1",
    "SELECT corr(amount, extract(epoch FROM created_at)) FROM orders",
    "SELECT regr_slope(amount, customer_id), regr_r2(amount, customer_id) FROM orders",
    "SELECT bool_and(amount > 0), every(amount > 0) FROM orders",
    "SELECT id, amount FROM orders ORDER BY amount DESC FETCH FIRST 10 ROWS ONLY",
    "SELECT justify_interval(max(created_at) - min(created_at)) FROM orders",
    "SELECT o.id, x.n FROM orders o CROSS JOIN LATERAL (SELECT count(*) AS n FROM customers c WHERE c.id = o.customer_id) x",
    "SELECT num_nulls(status, amount) FROM orders",
    "SELECT md5(country) FROM customers",
    "SELECT make_date(2026, 1, 1), make_interval(days => 3)",
    "SELECT trunc(amount::numeric, 1), div(7, 2), mod(7, 2) FROM orders",
    "SELECT lpad(id::text, 8, '0') FROM orders",
]
snow_more = [
    "SELECT payload:channel::string AS channel, COUNT(*) FROM orders GROUP BY 1",
    "SELECT GET_PATH(payload, 'device.os') FROM orders",
    "SELECT DATE_TRUNC('week', created_at), COUNT(*) FROM orders GROUP BY 1",
    "SELECT DATEDIFF('day', MIN(created_at), MAX(created_at)) FROM orders",
    "SELECT NVL(status, 'none'), ZEROIFNULL(amount) FROM orders",
    "SELECT DIV0(SUM(amount), COUNT(*)) FROM orders",
    "SELECT ARRAY_SIZE(ARRAY_AGG(id)) FROM orders",
    "SELECT TRY_TO_NUMBER(status) FROM orders",
    "SELECT RATIO_TO_REPORT(amount) OVER () FROM orders",
    "SELECT PERCENTILE_CONT(0.5) WITHIN GROUP (ORDER BY amount) FROM orders",
    "SELECT REGEXP_SUBSTR(country, '[A-Z]+') FROM customers",
    "SELECT SPLIT_PART(country, ' ', 1) FROM customers",
    "SELECT YEAR(created_at), MONTH(created_at), DAYOFWEEK(created_at) FROM orders",
    "SELECT id FROM orders QUALIFY ROW_NUMBER() OVER (PARTITION BY customer_id ORDER BY created_at DESC) = 1",
    "SELECT OBJECT_CONSTRUCT('n', COUNT(*)) FROM orders",
    # Snowflake keeps a quoted name's case and reads an unquoted one in upper case: "orders" is another table
    "SELECT \"ID\" FROM \"ORDERS\"",
]
for q in common_more + ["SELECT \"id\" FROM \"orders\""]:  # quoted as the catalog spells them
    for d in ("duckdb", "postgres"):
        allow.append({"sql": q, "dialect": d})
for q in duck_more:
    allow.append({"sql": q, "dialect": "duckdb"})
for q in pg_more:
    allow.append({"sql": q, "dialect": "postgres"})
for q in snow_more:
    allow.append({"sql": q, "dialect": "snowflake"})
for q in base:
    for d in ("duckdb", "postgres", "snowflake"):
        allow.append({"sql": q, "dialect": d})
for q in duck:
    allow.append({"sql": q, "dialect": "duckdb"})
for q in pg:
    allow.append({"sql": q, "dialect": "postgres"})
for q in snow:
    allow.append({"sql": q, "dialect": "snowflake"})
tenant_ok = [
    "SELECT * FROM orders WHERE tenant_id = 7",
    "SELECT * FROM orders WHERE amount > 1 AND tenant_id = 7",
    "SELECT * FROM orders WHERE (tenant_id = 7 AND amount > 1)",
    "SELECT * FROM orders WHERE 7 = tenant_id",
    "SELECT * FROM orders o JOIN customers c ON o.customer_id = c.id AND c.tenant_id = 7 WHERE o.tenant_id = 7",
    "SELECT * FROM orders o JOIN customers c ON o.customer_id = c.id WHERE o.tenant_id = 7 AND c.tenant_id = 7",
    "WITH a AS (SELECT * FROM orders WHERE tenant_id = 7) SELECT count(*) FROM a",
    "SELECT * FROM (SELECT * FROM orders WHERE tenant_id = 7) s",
    "SELECT id FROM orders WHERE tenant_id = 7 UNION ALL SELECT id FROM customers WHERE tenant_id = 7",
    "SELECT * FROM products",
    "SELECT * FROM orders o LEFT JOIN customers c ON o.customer_id = c.id AND c.tenant_id = 7 WHERE o.tenant_id = 7",
    "SELECT count(*) FROM orders WHERE tenant_id = 7 AND customer_id IN (SELECT id FROM customers WHERE tenant_id = 7)",
]
for q in tenant_ok:
    allow.append({"sql": q, "tenant": True})

(HERE / "refuse.json").write_text(json.dumps(refuse, indent=1) + "\n")
(HERE / "allow.json").write_text(json.dumps(allow, indent=1) + "\n")
print(len(refuse), len(allow))
