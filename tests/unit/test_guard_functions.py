"""The guard's function allow-list: names as the engine resolves them, qualified calls, bounds."""

from __future__ import annotations

import duckdb
import pytest

from assay.models import ColumnInfo, TableInfo
from assay.warehouse.functions import ALLOWED, KEYWORD_CALLS, MAX_PAD, MAX_SERIES
from assay.warehouse.guard import SQLGuard

DIALECTS = ["duckdb", "postgres", "snowflake"]


def guard(dialect: str) -> SQLGuard:
    cols = [ColumnInfo(name=n, type="TEXT") for n in ("id", "tenant_id", "name", "amount")]
    return SQLGuard(dialect, tables=[TableInfo(schema="main", name="orders", columns=cols)], default_schema="main")


# functions that read files, run SQL text, write, signal, lock, sleep or change settings (from the
# attack report); none is on any list, whatever the spelling
DANGEROUS = [
    "pg_read_file('/etc/passwd', 0, 200)", "pg_read_binary_file('/etc/passwd')", "pg_ls_dir('/')",
    "ts_stat('select 1')", "ts_rewrite('a'::tsquery, 'select 1')", "query_to_xml('select 1', true, true, '')",
    "query_to_xml_and_xmlschema('select 1', true, true, '')", "table_to_xml_and_xmlschema('t', true, true, '')",
    "cursor_to_xml('c', 1, true, true, '')", "lo_creat(-1)", "lo_from_bytea(0, 'x')", "lo_export(1, '/tmp/x')",
    "pg_logical_emit_message(true, 'a', 'b')", "pg_notify('c', 'x')", "pg_advisory_lock(1)",
    "pg_try_advisory_xact_lock(1)", "pg_stat_reset()", "pg_stat_reset_shared('bgwriter')",
    "set_config('statement_timeout', '0', false)", "current_setting('data_directory')",
    "pg_terminate_backend(1)", "pg_cancel_backend(1)", "pg_sleep(10)", "dblink('host=x', 'select 1')",
    "nextval('s')", "txid_current()", "getenv('HOME')", "read_csv('/etc/passwd')", "read_text('/etc/shadow')",
    "http_get('http://x')", "sleep_ms(1000)", "write_log('x')", "setseed(0.5)", "format('%999999999s', 'x')",
    "printf('%0999999999d', 1)", "bar(1, 0, 10, 1000000000)", "query('select 1')", "SYSTEM$WAIT(10)",
    "SYSTEM$CANCEL_ALL_QUERIES()", "result_scan(last_query_id())", "xpath('/a', '<a/>')",
    "row_to_json(1)", "has_table_privilege('pg_shadow', 'select')", "pg_get_viewdef('v')", "version()",
    "current_user()", "inet_server_addr()", "gen_random_uuid()", "list_aggregate([1], 'sum')",
]


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("call", DANGEROUS)
def test_functions_off_the_allow_list_are_refused(dialect, call):
    v = guard(dialect).check(f"SELECT {call}")
    assert not v.allowed
    assert "allow-list" in v.reason or "not allowed" in v.reason or "parse" in v.reason


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("call", ["pg_read_file('/etc/passwd')", "lower('x')", "\"lower\"('x')", "abs(1)"])
@pytest.mark.parametrize("qual", ["pg_catalog.", 'pg_catalog."', "public.", "main.", "information_schema."])
def test_qualified_calls_are_refused_even_for_allowed_functions(dialect, call, qual):
    if qual.endswith('"'):
        name, rest = call.split("(", 1)
        call = f'{name.strip(chr(34))}"({rest}'
    v = guard(dialect).check(f"SELECT {qual}{call}")
    assert not v.allowed, v.sql
    assert "qualified" in v.reason or "parse" in v.reason


def test_method_style_call_is_refused():
    v = guard("duckdb").check("SELECT 'abc'.upper()")
    assert not v.allowed and "method-style" in v.reason


@pytest.mark.parametrize("dialect,fn", [("duckdb", "strip_accents"), ("postgres", "num_nulls"),
                                        ("snowflake", "conditional_true_event")])
def test_quoted_names_resolve_as_the_engine_does(dialect, fn):
    """Judged on what is sent: sqlglot renders a quoted unknown name upper-cased ("NUM_NULLS"), which
    is the built-in for Snowflake and DuckDB (case-insensitive) but no built-in for PostgreSQL."""
    g = guard(dialect)
    assert not g.check('SELECT "pg_read_file"(\'/etc/passwd\')').allowed
    assert not g.check('SELECT "PG_READ_FILE"(\'/etc/passwd\')').allowed
    for spelling in (fn, fn.upper()):
        v = g.check(f"SELECT \"{spelling}\"(name) FROM orders")
        assert v.allowed == (dialect != "postgres"), v.reason
        if v.allowed:
            assert f'"{fn.upper()}"(name)' in v.sql


def test_quoted_typed_names_are_sent_unquoted():
    # sqlglot recognises "LOWER" as its Lower node and renders it unquoted: the built-in runs
    v = guard("postgres").check('SELECT "LOWER"(name) FROM orders')
    assert v.allowed and 'LOWER(name)' in v.sql


@pytest.mark.parametrize("dialect", DIALECTS)
def test_typed_nodes_are_checked_by_the_name_they_render(dialect):
    g = guard(dialect)
    # sqlglot types these calls; the name sent to the engine is what is checked
    assert g.check("SELECT sum(amount), avg(amount), coalesce(name, 'x'), upper(name) FROM orders").allowed
    assert not g.check("SELECT * FROM read_csv('/etc/passwd')").allowed
    assert not g.check("SELECT read_parquet('/x.parquet')").allowed


def test_reason_names_the_function_and_what_is_available():
    r = guard("postgres").check("SELECT foo_bar(1)").reason
    assert "foo_bar()" in r and "postgres" in r and "aggregates" in r


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("sql,ok", [
    ("SELECT repeat('-', 40)", True),
    (f"SELECT repeat('ab', {MAX_PAD // 2})", True),
    (f"SELECT repeat('ab', {MAX_PAD})", False),
    ("SELECT repeat('x', 100000000)", False),
    ("SELECT repeat(name, 3) FROM orders", False),
    ("SELECT repeat('x', id) FROM orders", False),
    ("SELECT lpad(name, 10, '0') FROM orders", True),
    (f"SELECT rpad(name, {MAX_PAD + 1}, ' ') FROM orders", False),
    ("SELECT lpad(name, id, '0') FROM orders", False),
    ("SELECT lpad('a', 2147483647, 'b')", False),
])
def test_string_blow_ups_are_bounded(dialect, sql, ok):
    v = guard(dialect).check(sql)
    assert v.allowed == ok, v.reason


@pytest.mark.parametrize("sql,ok", [
    ("SELECT * FROM generate_series(1, 100) g", True),
    (f"SELECT * FROM generate_series(1, {MAX_SERIES + 10}) g", False),
    ("SELECT * FROM generate_series(1, 100000000000, 1) g", False),
    ("SELECT * FROM generate_series(1, 100000000000, 10000000) g", True),
    ("SELECT a FROM generate_series(1, 1000) a, generate_series(1, 1000) b", False),  # joined: a million
    ("SELECT a FROM generate_series(1, 100) a, generate_series(1, 100) b", True),
    ("SELECT * FROM generate_series(1, (SELECT max(id) FROM orders)) g", False),
    ("SELECT * FROM generate_series(DATE '2026-01-01', DATE '2026-12-31', INTERVAL '1 day') g", True),
    ("SELECT * FROM generate_series(DATE '1000-01-01', DATE '9999-12-31', INTERVAL '1 second') g", False),
    ("SELECT generate_series(1, 10)", True),
    ("SELECT generate_series(1, 10000000000)", False),
    # "the last N days/months" from one anchor (the false-refusal audit, session 25)
    ("SELECT * FROM generate_series(current_date - INTERVAL '29 days', current_date, INTERVAL '1 day') g", True),
    ("SELECT * FROM generate_series(date_trunc('month', now()) - interval '11 months', date_trunc('month', now()), "
     "interval '1 month') g", True),
    ("SELECT * FROM generate_series(now() - interval '1 year', now(), interval '1 second') g", False),
    ("SELECT * FROM generate_series(current_date - interval '300000 days', current_date, interval '1 day') g", False),
    ("SELECT * FROM generate_series(current_date - interval '29 days', now(), interval '1 second') g", False),
    ("SELECT * FROM generate_series(random() - 10, random(), 1) g", False),
    ("SELECT d FROM generate_series(current_date - 29, current_date, interval '1 day') AS d", True),
    ("SELECT d FROM generate_series(current_date - 2900000, current_date, interval '1 day') AS d", False),
    ("SELECT d FROM generate_series(now() - 29, now(), interval '1 day') AS d", False),
    # units of different lengths at the two ends: the widest span they allow (red team 11: counted as one value)
    ("SELECT count(*) AS n FROM generate_series(current_timestamp + interval '1000 years', current_timestamp + "
     "interval '366000 days', interval '1 minute') s(x)", False),
    ("SELECT count(*) AS n FROM generate_series(current_date + interval '10000 months', current_date + 310000, "
     "interval '1 second') s(x)", False),
    ("SELECT count(*) AS n FROM generate_series(current_date - interval '12 months', current_date - interval "
     "'1 year', interval '1 day') s(x)", True),
    # session 25's review: a cast moves its anchor (up to a day: 5.8 million values at 0.01 s); two anchors differ;
    # a month may be 31 days (140 months of hours: 94,080 at 28 days, 104,160 at 31)
    ("SELECT count(*) AS n FROM generate_series(CAST(now() AS DATE), now(), interval '0.01 second') AS g(x)", False),
    ("SELECT count(*) AS n FROM generate_series(date_trunc('millennium', now()), now(), interval '1 day') g(x)",
     False),
    ("SELECT count(*) AS n FROM generate_series(current_date - interval '140 months', current_date, "
     "interval '1 hour') g(x)", False),
    ("SELECT count(*) AS n FROM generate_series(current_date - interval '130 months', current_date, "
     "interval '1 hour') g(x)", True),
    ("SELECT * FROM generate_series((SELECT max(created_at) FROM orders) - interval '1 day', "
     "(SELECT max(created_at) FROM orders), interval '1 hour') g", False),
])
@pytest.mark.parametrize("dialect", ["duckdb", "postgres"])
def test_series_need_small_literal_bounds(dialect, sql, ok):
    v = guard(dialect).check(sql)
    assert v.allowed == ok, v.reason


def test_duckdb_range_is_bounded():
    g = guard("duckdb")
    assert g.check("SELECT * FROM range(10) r").allowed
    assert not g.check("SELECT * FROM range(10000000000) r").allowed
    assert not g.check("SELECT range(10000000000)").allowed


@pytest.mark.parametrize("dialect,sql,ok", [
    # red team 13 (session 26): set-returning functions over generated text escaped the series budget; three splits
    # of a 10,000-character repeat() joined are 10^12 rows (they ran until the engines' timeouts)
    ("postgres", "SELECT count(*) FROM regexp_split_to_table(repeat('a', 10000), '') a, "
     "regexp_split_to_table(repeat('a', 10000), '') b, regexp_split_to_table(repeat('a', 10000), '') c", False),
    ("postgres", "SELECT count(*) FROM unnest(string_to_array(repeat('a,', 5000), ',')) a, "
     "unnest(string_to_array(repeat('a,', 5000), ',')) b", False),
    ("duckdb", "SELECT count(*) FROM unnest(string_split(repeat('a,', 5000), ',')) AS a(x), "
     "unnest(string_split(repeat('a,', 5000), ',')) AS b(x)", False),
    ("duckdb", "SELECT count(*) FROM (SELECT unnest(string_split(repeat('a,', 5000), ',')) AS x) a, "
     "(SELECT unnest(string_split(repeat('a,', 5000), ',')) AS x) b", False),
    ("duckdb", "WITH s AS (SELECT repeat('a,', 5000) AS x) SELECT count(*) FROM s, "
     "unnest(string_split(s.x, ',')) AS a(v), unnest(string_split(s.x, ',')) AS b(v)", False),
    ("duckdb", "SELECT count(*) FROM unnest(string_split(repeat('a,', 5000), ',')) AS a(x), range(100) r", False),
    # what an analyst writes: one split, literal lists beside a spine, a table's own lists
    ("duckdb", "SELECT count(*) FROM unnest(string_split(repeat('a,', 5000), ',')) AS a(x)", True),
    ("duckdb", "SELECT d, c FROM range(DATE '2024-01-01', DATE '2026-10-01', INTERVAL 1 DAY) AS t(d), "
     "unnest(['electronics', 'furniture', 'books', 'toys', 'home', 'sports', 'fashion', 'beauty', 'garden', "
     "'music', 'games', 'tools', 'food', 'pets', 'baby', 'auto']) AS u(c)", True),
    ("duckdb", "SELECT count(*) FROM unnest(string_split('a,b,c', ',')) AS a(x), range(1000) r", True),
    ("duckdb", "SELECT o.id, w.x FROM orders o, unnest(string_split(o.name, ' ')) AS w(x), "
     "unnest(string_split(o.name, ' ')) AS v(x)", True),
    ("postgres", "SELECT count(*) FROM jsonb_array_elements('[1, 2, 3]') a, jsonb_array_elements('[1, 2, 3]') b",
     True),
])
def test_rows_unnested_from_generated_values_count_as_a_series(dialect, sql, ok):
    v = guard(dialect).check(sql)
    assert v.allowed == ok, v.reason
    if ok and dialect == "duckdb":  # what is allowed runs
        con = duckdb.connect()
        con.execute("CREATE TABLE orders (id INT, tenant_id TEXT, name TEXT, amount TEXT)")
        con.execute("INSERT INTO orders VALUES (1, 't', 'a b c', '1')")
        con.sql(v.sql).fetchall()
    if not ok:
        assert "unnested from generated values" in v.reason


@pytest.mark.parametrize("dialect,sql,ok", [
    # red team 14 (session 26): a CTE's series counted once however often the CTE is read; a list built from a
    # series unnested twice; a recursive CTE counting to a billion, or four copies of one counting to 1,000 (MariaDB)
    ("duckdb", "WITH a AS (SELECT x FROM range(50000) t(x)) SELECT count(*) FROM a a1, a a2", False),
    ("duckdb", "WITH a AS (SELECT x FROM range(50000) t(x)), b AS (SELECT a1.x FROM a a1) SELECT count(*) FROM b b1, "
     "b b2", False),
    ("duckdb", "WITH a AS (SELECT list(x) AS arr FROM range(50000) t(x)) SELECT count(*) FROM a, unnest(a.arr) u1(x), "
     "unnest(a.arr) u2(y)", False),
    ("duckdb", "WITH a AS (SELECT string_agg(CAST(x AS VARCHAR), ',') AS s FROM range(50000) t(x)) SELECT count(*) "
     "FROM a, unnest(string_split(a.s, ',')) u1(x), unnest(string_split(a.s, ',')) u2(y)", False),
    ("postgres", "WITH RECURSIVE r AS (SELECT 1 AS n UNION ALL SELECT n + 1 FROM r WHERE n < 1000000000) "
     "SELECT count(*) FROM r", False),
    ("postgres", "WITH RECURSIVE r AS (SELECT 1 AS n UNION ALL SELECT n + 1 FROM r) SELECT n FROM r LIMIT 10", False),
    ("mysql", "WITH RECURSIVE a AS (SELECT 1 AS n UNION ALL SELECT n + 1 FROM a WHERE n < 1000) SELECT count(*) "
     "FROM a a1, a a2, a a3, a a4", False),
    # what an analyst writes: a CTE of a short series read twice, a counter to 100, a date spine, a hierarchy
    ("duckdb", "WITH a AS (SELECT x FROM range(300) t(x)) SELECT count(*) FROM a a1, a a2", True),
    ("postgres", "WITH RECURSIVE r AS (SELECT 1 AS n UNION ALL SELECT n + 1 FROM r WHERE n < 100) SELECT count(*) "
     "FROM r", True),
    ("mysql", "WITH RECURSIVE d AS (SELECT DATE '2026-01-01' AS d UNION ALL SELECT d + INTERVAL 1 DAY FROM d "
     "WHERE d < '2026-12-31') SELECT d FROM d", True),
    ("snowflake", "WITH RECURSIVE d (day) AS (SELECT '2024-01-01'::DATE UNION ALL SELECT DATEADD(day, 1, day) FROM d "
     "WHERE day < '2024-03-31') SELECT day FROM d", True),
    ("postgres", "WITH RECURSIVE r AS (SELECT o.id, 1 AS depth FROM orders o WHERE o.id = 1 UNION ALL SELECT o.id, "
     "r.depth + 1 FROM orders o JOIN r ON o.amount = CAST(r.id AS TEXT)) SELECT * FROM r", True),
    ("duckdb", "SELECT d, u.t FROM range(DATE '2026-01-01', DATE '2026-12-31', INTERVAL 1 DAY) r(d), orders o, "
     "unnest(string_split(o.name, ' ')) u(t)", True),
    # the session's review: a counter that runs away from its bound, a bound on another column, a decoy bound, a
    # table only in a subquery; a literal array cast, and what must stay allowed (a spine read in a scalar subquery
    # or a UNION's two branches, recursive date spines of every spelling, a counter going down, a pad beside an unnest)
    ("postgres", "WITH RECURSIVE r AS (SELECT 1 AS n UNION ALL SELECT n - 1 FROM r WHERE n < 12) SELECT count(*) "
     "FROM r", False),
    ("postgres", "WITH RECURSIVE r AS (SELECT 999999990 AS k, 1 AS n UNION ALL SELECT k, n + 1 FROM r WHERE "
     "n < 1000000000) SELECT count(*) FROM r", False),
    ("postgres", "WITH RECURSIVE r AS (SELECT 1 AS n UNION ALL SELECT n + 1 FROM r WHERE 1 < 2 AND n < 1000000000) "
     "SELECT count(*) FROM r", False),
    ("postgres", "WITH RECURSIVE r AS (SELECT 1 AS n UNION ALL SELECT n + 1 FROM r WHERE n < 1000000000 AND EXISTS "
     "(SELECT 1 FROM orders)) SELECT count(*) FROM r", False),
    ("postgres", "WITH RECURSIVE r AS (SELECT 1 AS n UNION ALL SELECT n + 1 FROM r WHERE n < 5 OR n > 0) "
     "SELECT count(*) FROM r", False),
    ("postgres", "SELECT count(*) FROM unnest('{" + ",".join(map(str, range(1000))) + "}'::int[]) a, unnest('{"
     + ",".join(map(str, range(1000))) + "}'::int[]) b", False),
    ("postgres", "WITH days AS (SELECT d::date AS d FROM generate_series(DATE '2024-01-01', DATE '2024-12-31', "
     "INTERVAL '1 day') d) SELECT d FROM days WHERE d > (SELECT min(d) FROM days)", True),
    ("postgres", "WITH days AS (SELECT d::date AS d FROM generate_series(DATE '2024-01-01', DATE '2024-12-31', "
     "INTERVAL '1 day') d) SELECT d FROM days UNION ALL SELECT d FROM days", True),
    ("postgres", "WITH RECURSIVE d(d) AS (SELECT DATE '2024-01-01' UNION ALL SELECT d + 1 FROM d WHERE "
     "d < DATE '2024-12-31') SELECT d FROM d", True),
    ("mysql", "WITH RECURSIVE r(t) AS (SELECT DATE '2024-01-01' UNION ALL SELECT DATE_ADD(t, INTERVAL 1 DAY) FROM r "
     "WHERE t < '2024-12-31') SELECT t FROM r", True),
    ("postgres", "WITH RECURSIVE d(n) AS (SELECT 12 UNION ALL SELECT n - 1 FROM d WHERE n > 1) SELECT n FROM d", True),
    ("postgres", "SELECT d::date, lpad(CAST(extract(month FROM d) AS TEXT), 2, '0') AS m, t FROM generate_series("
     "DATE '2024-01-01', DATE '2024-12-31', INTERVAL '1 day') d, orders o, unnest(string_to_array(o.name, ' ')) t",
     True),
])
def test_series_read_more_than_once_or_by_recursion_are_counted(dialect, sql, ok):
    v = guard(dialect).check(sql)
    assert v.allowed == ok, v.reason
    if not ok:
        assert "100,000" in v.reason


def _nested(fn: str, inner: str, n: int) -> str:
    for _ in range(n):
        inner = fn.format(inner)
    return inner


@pytest.mark.parametrize("dialect,sql,ok", [
    # red team 14 (session 26): each escape can double a value, nested they multiply: 27 regexp_escape of a
    # backslash made 1 GiB in the process, 20 to_json casts 10 MB on PostgreSQL from 300 characters
    ("duckdb", "SELECT length(" + _nested("regexp_escape({})", "'\\\\'", 27) + ")", False),
    ("postgres", "SELECT " + _nested("CAST(to_json({}) AS TEXT)", "o.name", 8) + " FROM orders o", False),
    ("postgres", "SELECT " + _nested("CAST(CAST({} AS BYTEA) AS TEXT)", "o.name", 16) + " FROM orders o", False),
    ("duckdb", "SELECT regexp_escape(o.name), to_json(o.name) FROM orders o", True),
    ("postgres", "SELECT to_json(o.name), lpad(o.name, 20, '0') FROM orders o", True),
    ("postgres", "SELECT " + ", ".join(["to_json(o.id)", "to_json(o.name)", "to_json(o.amount)"] * 2) + " FROM orders o",
     True),  # side by side, not nested (the session's review)
])
def test_escapes_and_encodings_count_as_growth(dialect, sql, ok):
    v = guard(dialect).check(sql)
    assert v.allowed == ok, v.reason
    if not ok:
        assert "escapes and encodings" in v.reason


def test_json_element_readers_may_stand_in_from():
    g = guard("postgres")
    assert g.check("SELECT k, count(*) FROM orders o, jsonb_object_keys(o.name::jsonb) AS k GROUP BY k").allowed
    assert g.check("SELECT e.key FROM orders o, jsonb_each(o.name::jsonb) AS e").allowed
    assert guard("duckdb").check("SELECT j.key FROM orders o, json_each(o.name) AS j").allowed


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("fn", ["upper('x')", "abs(1)", "read_csv('/x')", "pragma_table_info('orders')"])
def test_only_series_and_unnest_may_stand_in_from(dialect, fn):
    assert not guard(dialect).check(f"SELECT * FROM {fn} AS t").allowed


@pytest.mark.parametrize("cast", ["'pg_shadow'::regclass", "'f'::regproc", "1::regrole", "x::my_type",
                                  "'<!DOCTYPE a SYSTEM \"file:///etc/passwd\">'::xml"])
def test_casts_to_catalog_or_user_types_are_refused(cast):
    assert not guard("postgres").check(f"SELECT {cast} FROM orders AS x").allowed


def test_duckdb_allow_list_is_pure_and_exists():
    """Every DuckDB name on the list is a built-in without side effects (random excepted: it only reads)."""
    con = duckdb.connect()
    rows = con.sql("SELECT function_name, bool_or(has_side_effects) FROM duckdb_functions() GROUP BY 1").fetchall()
    effects = dict(rows)
    # ordered-set syntax in DuckDB; GROUPING(col) is grammar there too (not in duckdb_functions())
    syntax = KEYWORD_CALLS | {"percentile_cont", "percentile_disc", "grouping"}
    missing = sorted(n for n in ALLOWED["duckdb"] if n not in effects and n not in syntax)
    assert missing == []
    impure = sorted(n for n in ALLOWED["duckdb"] if effects.get(n) and n != "random")
    assert impure == []


@pytest.mark.parametrize("sql", [
    "SELECT o.to_json FROM orders o",  # PostgreSQL: to_json(o), the whole row
    "SELECT orders.row_to_json FROM orders",
    "SELECT main.orders.to_jsonb FROM main.orders",
    "SELECT (o).to_json FROM orders o",
    "SELECT (o.*).name FROM orders o",
    "SELECT s.to_json FROM (SELECT name FROM orders) s",
    "WITH s AS (SELECT name FROM orders) SELECT s.row_to_json FROM s",
    "SELECT o.id FROM orders o WHERE o.to_json::text LIKE '%x%'",
])
@pytest.mark.parametrize("catalog", [True, False])
def test_postgres_field_notation_calls_are_refused(sql, catalog):
    g = guard("postgres") if catalog else SQLGuard("postgres", default_schema="main")
    v = g.check(sql)
    assert not v.allowed, v.sql


def test_postgres_real_columns_in_field_notation_pass():
    g = guard("postgres")
    assert g.check("SELECT o.name, o.amount FROM orders o").allowed
    assert g.check("SELECT s.n FROM (SELECT name AS n FROM orders) s").allowed
    assert g.check("SELECT s.x FROM (SELECT name FROM orders) s(x)").allowed


@pytest.mark.parametrize("sql", [
    "SELECT * FROM pg_catalog.generate_series(1, 3) g",
    "SELECT * FROM public.generate_series(1, 3) g",
    "SELECT 1 OPERATOR(pg_catalog.+) 2",
    "SELECT 1 OPERATOR(public.+) 2",
])
def test_qualified_table_functions_and_operators_are_refused(sql):
    assert not guard("postgres").check(sql).allowed


@pytest.mark.parametrize("dialect", DIALECTS)
def test_padding_inside_an_aggregate_is_bounded_per_row(dialect):
    g = guard(dialect)
    assert not g.check("SELECT string_agg(repeat('y', 10000), ',') FROM orders").allowed
    assert not g.check("SELECT max(lpad(name, 5000, ' ')) FROM orders").allowed
    assert g.check("SELECT max(lpad(name, 12, '0')) FROM orders").allowed
    assert g.check("SELECT repeat('y', 10000)").allowed  # one value, outside an aggregate


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("cond", ["NOT (amount = '1') AND name = 'x'", "(amount = '1') OR name = 'x'",
                                  "NOT (amount = '1') AND NOT (name = 'x') AND id = '3'"])
def test_an_operator_whose_left_operand_starts_with_a_parenthesis_is_not_a_call(dialect, cond):
    """`FILTER (WHERE NOT (a = 1) AND b = 2)` was refused as a call of `not()`: the AND's rendering starts with its
    left operand's text, which looks like a call. The operand is checked as a node of its own."""
    for sql in (f"SELECT count(*) FILTER (WHERE {cond}) FROM orders", f"SELECT count(*) FROM orders WHERE {cond}"):
        v = guard(dialect).check(sql)
        assert v.allowed, (sql, v.reason)


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_refused_call_as_an_operators_left_operand_is_still_refused(dialect):
    for call in ("pg_sleep(10)", "pg_read_file('/etc/passwd')", "getenv('HOME')"):
        v = guard(dialect).check(f"SELECT count(*) FROM orders WHERE {call} = '1' AND name = 'x'")
        assert not v.allowed and call.split("(")[0] in v.reason.lower(), (call, v.reason)


@pytest.mark.parametrize("dialect", DIALECTS + ["bigquery", "mysql"])
def test_grouping_of_a_rollup_is_allowed(dialect):
    """Round 9: both real models wrote GROUPING(col) to label a ROLLUP's subtotal rows and were refused (a step each).
    GROUPING reads only its GROUP BY column: pure, and on every engine's list of aggregates."""
    v = guard(dialect).check("SELECT name, GROUPING(name) AS is_total, sum(amount) FROM orders GROUP BY ROLLUP (name)")
    assert v.allowed, v.reason


def test_grouping_of_a_rollup_runs_on_duckdb():
    con = duckdb.connect()
    con.execute("CREATE TABLE orders (id INT, tenant_id INT, name TEXT, amount INT)")
    con.execute("INSERT INTO orders VALUES (1, 1, 'a', 2), (2, 1, 'b', 3)")
    sql = guard("duckdb").enforce("SELECT name, GROUPING(name) AS g, sum(amount) AS s FROM orders GROUP BY ROLLUP (name)")
    rows = sorted(con.execute(sql).fetchall(), key=lambda r: r[1])
    assert rows[-1][1:] == (1, 5)  # the grand total, flagged by GROUPING


@pytest.mark.parametrize("dialect, small, large", [
    ("bigquery", "SELECT * FROM UNNEST(GENERATE_ARRAY(1, 10))", "SELECT * FROM UNNEST(GENERATE_ARRAY(1, 100000000))"),
    ("bigquery", "SELECT GENERATE_DATE_ARRAY(DATE '2024-01-01', DATE '2024-12-31')",
     "SELECT GENERATE_DATE_ARRAY(DATE '2024-01-01', DATE '2924-12-31')"),
    ("databricks", "SELECT sequence(1, 10)", "SELECT sequence(1, 100000000)"),
    ("tsql", "SELECT replicate('x', 10)", "SELECT replicate('x', 100000000)"),
    ("tsql", "SELECT space(10)", "SELECT space(100000000)"),
    ("mysql", "SELECT space(10)", "SELECT space(100000000)"),
    ("databricks", "SELECT space(10)", "SELECT space(100000000)"),
])
def test_every_dialects_generators_are_bounded(dialect, small, large):
    """The docstring says generators are bounded; BigQuery's generate_array, Databricks' sequence and T-SQL's
    replicate and space were not (session 23's red team)."""
    assert SQLGuard(dialect).check(small).allowed, (dialect, small, SQLGuard(dialect).check(small).reason)
    v = SQLGuard(dialect).check(large)
    assert not v.allowed and "at most" in v.reason, (dialect, large, v.reason)


@pytest.mark.parametrize("dialect, small, large", [
    # one node that renders as two calls: UNNEST(GENERATE_SERIES(...)) (a 300,000,000 series killed the process)
    ("duckdb", "SELECT count(*) FROM (SELECT exploding_generate_series(1, 10) AS x) s",
     "SELECT count(*) FROM (SELECT exploding_generate_series(1, 10000000000) AS x) s"),
    # replacements that multiply a value's length when nested (3,000,000,000 characters in 44 s, 6.3 GB)
    ("duckdb", "SELECT replace(replace(lower(name), 'a', 'b'), ',', '') FROM customers",
     "SELECT length(replace(replace(repeat('a',10000),'a',repeat('a',10000)),'a',repeat('a',30)))"),
    ("duckdb", "SELECT replace(repeat('ab', 100), 'a', 'xy')",
     "SELECT length(replace(replace(repeat('a',10000),'a','aaaa'),'a','aaaa'))"),
    # a " BC" timestamp read as the year 2020 counted one value for 1.5 million
    ("postgres", "SELECT count(*) FROM generate_series(TIMESTAMP '2020-01-01 00:00:00', "
                 "TIMESTAMP '2020-03-01 00:00:00', INTERVAL '1 day') g",
     "SELECT count(*) FROM generate_series(TIMESTAMP '2020-01-01 00:00:00 BC', "
     "TIMESTAMP '2020-01-01 00:00:00', INTERVAL '1 day') g"),
    # a format's width pads in one call
    ("databricks", "SELECT format_string('%.2f', 1.5)", "SELECT length(format_string('%2000000000s', 'x'))"),
])
def test_growth_hidden_in_one_call_is_bounded(dialect, small, large):
    """The sixth red team (session 23): generators and growth the bounds did not see."""
    from assay.models import ColumnInfo, TableInfo

    tables = [TableInfo(schema="main", name="customers", columns=[ColumnInfo(name="name", type="VARCHAR")])]
    g = SQLGuard(dialect, tables=tables, default_schema="main")
    assert g.check(small).allowed, (dialect, small, g.check(small).reason)
    v = g.check(large)
    assert not v.allowed and "at most" in v.reason, (dialect, large, v.reason)


def test_the_reviews_cases_of_growth_formats_and_time_zones():
    """A review of the bounds above (session 23): replacements chained through || or concat escaped the chain's
    bound; a positional width (%1$100000000s) or a format that is not a literal escaped the width's; a zone name in a
    series bound was refused with ' BC'."""
    big = "a" * 5000
    assert not SQLGuard("duckdb").check(
        f"SELECT replace(concat('', replace(status, 'a', '{big}')), 'a', '{big}') FROM orders").allowed
    assert not SQLGuard("duckdb").check(
        f"SELECT replace('x' || replace(status, 'a', '{big}'), 'a', '{big}') FROM orders").allowed
    assert SQLGuard("duckdb").check("SELECT replace(status, 'a', 'bb'), replace(name, ',', '') FROM orders").allowed
    for sql in ("SELECT printf('%1$100000000s', status) FROM orders", "SELECT printf(status, id) FROM orders",
                "SELECT format_string('%.100000000f', 1.5)", "SELECT format_string('%*s', 100000000, 'x')"):
        assert not SQLGuard("databricks").check(sql).allowed, sql
    assert SQLGuard("databricks").check("SELECT format_string('%5d %.2f %s', 1, 1.5, 'a')").allowed
    assert SQLGuard("postgres").check(
        "SELECT count(*) FROM generate_series('2024-01-01 00:00:00 UTC'::timestamptz, "
        "'2024-12-31 00:00:00 UTC'::timestamptz, interval '1 day') g").allowed


def _doubling(levels: int, concat: str = "a.s || b.s") -> str:
    ctes = ["a0 AS (SELECT lpad('x', 10000, 'y') AS s)"]
    ctes += [f"a{i} AS (SELECT {concat} AS s FROM a{i - 1} AS a, a{i - 1} AS b)" for i in range(1, levels + 1)]
    return f"WITH {', '.join(ctes)} SELECT length(a{levels}.s) AS n FROM a{levels}"


@pytest.mark.parametrize("dialect", ["duckdb", "postgres"])  # (MySQL's || is OR: its concat() below)
@pytest.mark.parametrize("sql, ok", [
    # red team 8: 13 levels made 10,000 characters 82 MB a row (PostgreSQL's backend at 2.7 GB)
    (_doubling(13), False),
    (_doubling(5), False),
    (_doubling(4), True),  # 16 copies: 160,000 characters
    ("WITH a AS (SELECT lpad('x', 10000, 'y') AS s) SELECT x.s || y.s || z.s AS s FROM (SELECT * FROM a) AS x, "
     "(SELECT * FROM a) AS y, (SELECT * FROM a) AS z", True),
    ("WITH RECURSIVE t(s) AS (SELECT 'x' UNION ALL SELECT s || s FROM t WHERE length(s) < 300000000) SELECT s FROM t",
     False),
    ("WITH RECURSIVE t(s, n) AS (SELECT 'x', 1 UNION ALL SELECT t.s || t.s, t.n + 1 FROM t WHERE t.n < 40) "
     "SELECT length(s) AS l FROM t", False),
    # distinct columns, and a recursion that appends a label: one copy each
    ("SELECT " + " || ".join(f"c.c{i}" for i in range(40)) + " AS line FROM customers AS c", True),
    ("WITH RECURSIVE d(day, label) AS (SELECT 1, 'day 1' UNION ALL SELECT day + 1, 'day ' || CAST(day + 1 AS "
     "VARCHAR(10)) FROM d WHERE day < 5) SELECT * FROM d", True),
    ("WITH x AS (SELECT c.first || ' ' || c.last AS name FROM customers AS c) SELECT x.name || ' (' || x.name || ')' "
     "AS label FROM x", True),
    # session 24's review: doubling through functions, lists and aggregates, level after level
    (_doubling(13, "array_to_string([a.s, b.s], '')"), False),
    (_doubling(13, "list_aggr([a.s, b.s], 'string_agg', '')"), False),
    ("WITH a0 AS (SELECT c.note AS s FROM customers AS c), " + ", ".join(
        f"a{i} AS (SELECT string_agg(x.s, '') AS s FROM a{i - 1} AS x, (SELECT 1 AS k UNION ALL SELECT 2) AS v)"
        for i in range(1, 8)) + " SELECT length(a7.s) AS l FROM a7", False),
    ("WITH RECURSIVE r(n, s) AS (SELECT 1, c.note FROM customers AS c UNION ALL SELECT n + 1, array_to_string([s, s], "
     "'') FROM r WHERE n < 30) SELECT max(length(s)) AS l FROM r", False),
    ("SELECT string_agg(p.s, '') AS s FROM (SELECT lpad(c.note, 10000, 'x') AS s FROM customers AS c) AS p", False),
    # ... and what an analyst writes: a label grown by one column each pass, a list of values aggregated once
    ("WITH RECURSIVE r(n, s) AS (SELECT 1, 'x' UNION ALL SELECT n + 1, s || ',' || CAST(n + 1 AS VARCHAR(10)) FROM r "
     "WHERE n < 5) SELECT s FROM r", True),
    ("WITH x AS (SELECT c.country, string_agg(c.note, ', ') AS notes FROM customers AS c GROUP BY 1) "
     "SELECT x.country, length(x.notes) AS l FROM x", True),
])
def test_a_value_concatenated_with_itself_level_after_level_is_refused(dialect, sql, ok):
    v = SQLGuard(dialect).check(sql)
    assert v.allowed == ok, v.reason
    if not ok:
        assert any(w in v.reason for w in ("copies", "recursive CTE", "an aggregate of", "not on the allow-list",
                                           "100,000")), \
            v.reason


@pytest.mark.parametrize("dialect", ["mysql", "postgres", "duckdb"])
def test_concat_doubling_is_refused_as_the_operator_is(dialect):
    assert not SQLGuard(dialect).check(_doubling(13, "concat(a.s, b.s)")).allowed
    assert SQLGuard(dialect).check(_doubling(4, "concat(a.s, b.s)")).allowed


@pytest.mark.parametrize("sql, why", [
    # red team 8: one range of 99,999 and a repeat of 10,000 characters, the repeat run once per element (10^9)
    ("SELECT length(array_to_string(list_transform(range(99999), lambda x: repeat('ab', 5000)), '')) AS n",
     "inside an aggregate, a window or a lambda"),
    # ... a lambda over a 90,000 list inside a lambda over the same list: 8.1e9 elements
    ("WITH r AS (SELECT range(90000) AS l) SELECT list_sum(list_transform(l, lambda x: list_sum(list_transform(l, "
     "lambda y: x * y)))) AS s FROM r", "a lambda "),  # (inside a lambda, and reading l from outside it)
    # session 24's review: a value read from outside a lambda is repeated once per element; a list comprehension is
    # a lambda too
    ("SELECT list_transform(range(99999), lambda x: p.s) AS l FROM (SELECT repeat('ab', 5000) AS s) AS p",
     "a lambda may read only its own parameters"),
    ("SELECT [repeat('ab', 5000) for x in range(99999)] AS l", "inside an aggregate, a window or a lambda"),
    ("SELECT list_transform(range(3), lambda x: range(2)) AS l", "inside a lambda"),
])
def test_generators_and_padding_inside_lambdas_are_bounded(sql, why):
    v = SQLGuard("duckdb").check(sql)
    assert not v.allowed and why in v.reason, v.reason
    assert SQLGuard("duckdb").check("SELECT list_transform([1, 2, 3], lambda x: x * 2) AS l").allowed
    assert SQLGuard("duckdb").check("SELECT [x * 2 for x in [1, 2, 3] if x > 1] AS l").allowed
    assert SQLGuard("duckdb").check("SELECT list_filter([{'a': 1}], lambda x: x.a > 0) AS l").allowed


@pytest.mark.parametrize("dialect, names, absent", [
    ("mysql", "ROW_NUMBER() OVER (ORDER BY x)", "percentile_cont"),  # MySQL has none: the hint says how instead
    ("postgres", "percentile_cont", None),
    ("duckdb", "percentile_cont", None),
])
def test_a_refusals_hint_names_only_what_the_dialect_allows(dialect, names, absent):
    """The false-refusal corpus (session 27): refusing percentile_cont() on MySQL, the hint said "use aggregates
    (count, sum, avg, min, max, percentile_cont, ...)"."""
    cols = [ColumnInfo(name=n, type="TEXT") for n in ("id", "amount")]
    g = SQLGuard(dialect, tables=[TableInfo(schema="shop", name="orders", columns=cols)], default_schema="shop")
    v = g.check("SELECT frobnicate(amount) AS h FROM shop.orders")
    assert not v.allowed and "allow-list" in v.reason and names in v.reason, v.reason
    assert absent is None or absent not in v.reason, v.reason
