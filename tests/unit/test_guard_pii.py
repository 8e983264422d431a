"""PII by lineage: which output columns derive from a PII column (the executor masks them)."""

from __future__ import annotations

import json

import duckdb
import pytest

from assay.models import ColumnInfo, TableInfo
from assay.warehouse.guard import SQLGuard

DIALECTS = ["duckdb", "postgres", "snowflake"]


def tables(dialect="duckdb"):
    up = str.upper if dialect == "snowflake" else str  # Snowflake's catalog names are upper case
    cols = lambda *names: [ColumnInfo(name=up(n), type="TEXT") for n in names]  # noqa: E731
    return [
        TableInfo(schema=up("main"), name=up("customers"),
                  columns=cols("id", "country", "email", "full_name", "segment")),
        TableInfo(schema=up("main"), name=up("orders"), columns=cols("id", "customer_id", "amount")),
    ]


def guard(dialect="duckdb", **kw):
    # segment is declared PII by the project; email / full_name are recognised by name
    return SQLGuard(dialect, tables=tables(dialect), default_schema="main", pii_columns=["segment"], **kw)


CASES = [
    ("SELECT email AS contact, country FROM customers", [0]),
    ("SELECT id, lower(email) FROM customers", [1]),
    ("SELECT country, string_agg(email, ',') FROM customers GROUP BY country", [1]),
    ("SELECT min(email), max(full_name), count(*) FROM customers", [0, 1]),
    ("SELECT CASE WHEN id > '1' THEN email ELSE 'x' END FROM customers", [0]),
    ("SELECT concat(country, full_name) FROM customers", [0]),
    ("SELECT segment FROM customers", [0]),
    ("SELECT count(email), count(DISTINCT email), count(*) FROM customers", []),
    ("SELECT country FROM customers WHERE email LIKE 'a%'", []),
    ("SELECT * FROM customers", [2, 3, 4]),
    ("SELECT c.*, o.amount FROM customers c JOIN orders o ON o.customer_id = c.id", [2, 3, 4]),
    ("WITH x AS (SELECT email AS e, country FROM customers) SELECT country, e FROM x", [1]),
    ("WITH x AS (SELECT email FROM customers) SELECT upper(email) FROM (SELECT email FROM x) s", [0]),
    ("SELECT id FROM orders UNION ALL SELECT email FROM customers", [0]),
    ("SELECT email FROM customers UNION SELECT country FROM customers", [0]),
    ("SELECT (SELECT max(email) FROM customers) AS m, 1 AS one", [0]),
    ("SELECT o.id, (SELECT c.full_name FROM customers c WHERE c.id = o.customer_id) FROM orders o", [1]),
    ("SELECT o.amount, c.email FROM orders o JOIN customers c ON c.id = o.customer_id", [1]),
    ("SELECT s.a FROM (SELECT email AS a FROM customers) AS s", [0]),
    ("SELECT id, first_value(email) OVER (PARTITION BY country ORDER BY id) FROM customers", [1]),
    ("SELECT id, count(*) OVER (PARTITION BY email) FROM customers", []),
    ("SELECT EXISTS (SELECT 1 FROM customers WHERE email = 'a@b.c')", []),
    ("SELECT amount FROM orders", []),
    ("(SELECT id, email FROM customers)", [1]),
    ("(SELECT 1) UNION (SELECT email FROM customers)", [0]),
    ("SELECT id FROM customers UNION ALL (SELECT email FROM customers ORDER BY 1 LIMIT 2)", [0]),
    ("(SELECT id FROM customers) UNION ALL (SELECT country FROM customers) UNION (SELECT full_name FROM customers)", [0]),
]


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("sql,masked", CASES)
def test_outputs_derived_from_pii_are_masked(dialect, sql, masked):
    v = guard(dialect).check(sql)
    assert v.allowed, v.reason
    assert v.masked_outputs == masked


@pytest.mark.parametrize("sql,masked", [
    ("SELECT to_json(c) FROM customers c", [0]),
    ("SELECT c FROM customers c", [0]),
    ("SELECT list(email) FROM customers", [0]),
    ("SELECT * EXCLUDE (email) FROM customers", [2, 3]),
    ("SELECT email AS e, lower(e) AS l, country FROM customers", [0, 1]),
    ("SELECT array_agg(full_name ORDER BY id) FROM customers", [0]),
    ("SELECT x.n FROM (SELECT full_name FROM customers) AS x(n)", [0]),
])
def test_duckdb_forms(sql, masked):
    v = guard("duckdb").check(sql)
    assert v.allowed, v.reason
    assert v.masked_outputs == masked


def test_postgres_json_builders_carry_taint():
    g = guard("postgres")
    assert g.check("SELECT to_json(c) FROM customers c").masked_outputs == [0]
    assert g.check("SELECT json_build_object('e', email) FROM customers").masked_outputs == [0]
    assert g.check("SELECT json_agg(full_name) FROM customers").masked_outputs == [0]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_touches_pii(dialect):
    g = guard(dialect)
    assert g.check("SELECT country FROM customers WHERE email LIKE 'a%'").touches_pii
    assert g.check("SELECT count(DISTINCT email) FROM customers").touches_pii
    assert g.check("SELECT email FROM customers").touches_pii
    assert not g.check("SELECT country FROM customers").touches_pii
    assert not g.check("SELECT amount FROM orders").touches_pii


@pytest.mark.parametrize("sql", [
    "SELECT * FROM customers PIVOT (count(*) FOR email IN ('a@b.c'))",
    "PIVOT customers ON email USING count(*)",
    "SELECT * FROM customers UNPIVOT (v FOR k IN (email, full_name))",
])
def test_pivot_on_pii_relations_is_refused(sql):
    assert not guard("duckdb").check(sql).allowed


@pytest.mark.parametrize("sql", [
    "SELECT customers FROM customers",  # whole-row reference without an alias
    "SELECT (SELECT 1) AS x, c.* FROM customers AS c, customers",  # ambiguous, cannot be traced
])
def test_untraceable_statements_over_pii_are_refused(sql):
    v = guard("duckdb").check(sql)
    assert not v.allowed or v.masked_outputs, v


def test_catalog_less_mode_uses_declared_names_and_refuses_stars():
    g = SQLGuard("postgres", pii_columns=["email"])
    v = g.check("SELECT lower(email), id FROM people")
    assert v.allowed and v.masked_outputs == [0]
    assert not g.check("SELECT * FROM people").allowed
    assert SQLGuard("postgres").check("SELECT * FROM people").allowed  # no PII declared


def test_declared_qualified_pii_column_applies_to_its_table_only():
    g = SQLGuard("duckdb", tables=tables(), default_schema="main", pii_columns=["orders.amount"])
    assert g.check("SELECT amount FROM orders").masked_outputs == [0]
    assert g.check("SELECT country FROM customers").masked_outputs == []


@pytest.mark.parametrize("dialect,sql,masked", [
    ("postgres", "SELECT x.e, c.id FROM customers c, LATERAL (SELECT c.email AS e) x", [0]),
    ("postgres", "SELECT x.e FROM customers c CROSS JOIN LATERAL (SELECT upper(c.full_name) AS e) x", [0]),
    ("postgres", "SELECT u.x FROM customers, unnest(ARRAY[email]) AS u(x)", [0]),
    ("duckdb", "SELECT u.x FROM customers, unnest([email]) AS u(x)", [0]),
    ("duckdb", "SELECT * REPLACE (lower(email) AS email) FROM customers", [2, 3, 4]),
    ("duckdb", "SELECT {'e': email} AS s FROM customers", [0]),
    ("duckdb", "SELECT id IN (SELECT email FROM customers) FROM orders", [0]),
    ("duckdb", "SELECT * FROM customers JOIN orders USING (id)", [2, 3, 4]),
])
def test_lateral_unnest_and_star_forms(dialect, sql, masked):
    v = guard(dialect).check(sql)
    assert v.allowed, v.reason
    assert v.masked_outputs == masked


def test_output_count_is_the_traced_width():
    g = guard("duckdb")
    assert g.check("SELECT * FROM customers").output_count == 5
    assert g.check("SELECT c.*, o.amount FROM customers c JOIN orders o ON o.customer_id = c.id").output_count == 6
    assert g.check("SELECT amount FROM orders").output_count is None  # no PII relation: not traced


def test_columns_the_cached_catalog_does_not_know_are_judged_by_name():
    g = guard("duckdb")
    assert g.check("SELECT backup_email, id FROM customers").masked_outputs == [0]
    v = g.check("SELECT c.phone_number FROM customers c")  # qualified: sqlglot knows it is unknown
    assert not v.allowed and "phone_number" in v.reason
    assert g.check("SELECT nickname FROM customers").masked_outputs == []


# Executed on a real DuckDB seeded with PII values: every result column that carries a seeded value
# (raw or transformed) must be among masked_outputs, and the traced width must be the result's.
ENGINE_QUERIES = [q for q, _ in CASES] + [
    "SELECT o.*, c.* FROM orders o JOIN customers c ON o.customer_id = c.id",
    "SELECT * FROM customers JOIN orders USING (id)", "SELECT * FROM orders JOIN customers USING (id)",
    "SELECT * FROM customers NATURAL JOIN orders", "SELECT t.* FROM (SELECT * FROM customers) t",
    "SELECT * FROM (SELECT email, id FROM customers) s(a, b)", "SELECT to_json(c) FROM customers c",
    "SELECT reverse(email), replace(full_name, 'e', 'E') FROM customers",
    "SELECT * EXCLUDE (id) FROM customers", "SELECT * REPLACE (upper(email) AS email) FROM customers",
    "SELECT c FROM customers c", "SELECT list(email) FROM customers", "SELECT {'e': email} FROM customers",
    "SELECT email AS e, lower(e) FROM customers", "SELECT unnest([email, full_name]) FROM customers",
    "SELECT count(email), email FROM customers GROUP BY email",
    "WITH x AS (SELECT id, email FROM customers) SELECT y.b, y.a FROM x AS y(a, b)",
    "WITH RECURSIVE r(n, e) AS (SELECT 1, email FROM customers UNION ALL SELECT n + 1, e FROM r WHERE n < 3) "
    "SELECT n, e FROM r",
    # taint rotates through the columns: only a fixpoint finds that all three end up carrying the email
    "WITH RECURSIVE r(a, b, c, n) AS (SELECT email, '1', '2', 1 FROM customers UNION ALL SELECT c, a, b, n + 1 "
    "FROM r WHERE n < 3) SELECT a, b, c FROM r",
]


def test_masked_outputs_cover_every_seeded_value_on_duckdb():
    con = duckdb.connect()
    con.execute("CREATE SCHEMA IF NOT EXISTS main")
    con.execute("CREATE TABLE customers (id TEXT, country TEXT, email TEXT, full_name TEXT, segment TEXT)")
    con.execute("CREATE TABLE orders (id TEXT, customer_id TEXT, amount TEXT)")
    con.execute("INSERT INTO customers VALUES ('1', 'DE', 'seed@pii.test', 'Seedy Name', 'vipseed')")
    con.execute("INSERT INTO orders VALUES ('1', '1', '5')")
    g = guard("duckdb")
    leaks = []
    for q in ENGINE_QUERIES:
        v = g.check(q)
        assert v.allowed, (q, v.reason)
        cur = con.execute(v.sql)
        rows, width = cur.fetchall(), len(cur.description)
        seeded = {i for r in rows for i, val in enumerate(r)
                  if any(s in json.dumps(val, default=str).lower() for s in ("seed", "ydees", "tset.iip"))}
        if seeded - set(v.masked_outputs) or (v.output_count is not None and v.output_count != width):
            leaks.append((q, sorted(seeded), v.masked_outputs, width, v.output_count))
    assert leaks == []


@pytest.mark.parametrize("dialect,sql", [
    ("duckdb", "SELECT #3 FROM customers"),
    ("duckdb", "SELECT id FROM customers ORDER BY #3"),
    ("snowflake", "SELECT $3 FROM customers"),
    ("postgres", "SELECT $1"),
    ("duckdb", "SELECT ? FROM customers"),
])
def test_positional_column_references_are_refused(dialect, sql):
    v = guard(dialect).check(sql)
    assert not v.allowed and "positional" in v.reason


@pytest.mark.parametrize("dialect", DIALECTS)
def test_recursive_ctes_are_traced_to_a_fixpoint(dialect):
    g = guard(dialect)
    q = ("WITH RECURSIVE r(a, b, c, n) AS (SELECT email, 1, 2, 1 FROM customers UNION ALL SELECT c, a, b, n + 1 "
         "FROM r WHERE n < 3) SELECT a, b, c FROM r")  # (a counter bounds it: a recursion with none is refused)
    assert g.check(q).masked_outputs == [0, 1, 2]
    q = ("WITH RECURSIVE d(day) AS (SELECT 1 UNION ALL SELECT day + 1 FROM d WHERE day < 5) "
         "SELECT d.day, count(c.id), max(c.email) FROM d LEFT JOIN customers c ON true GROUP BY 1")
    assert g.check(q).masked_outputs == [2]


def test_table_functions_carry_their_arguments_taint():
    g = guard("postgres")
    assert g.check("SELECT e.key, e.value, c.id FROM customers c, jsonb_each(c.email::jsonb) AS e").masked_outputs \
        == [0, 1]
    assert g.check("SELECT x FROM customers c, jsonb_array_elements_text(c.full_name::jsonb) AS x").masked_outputs \
        == [0]
    assert g.check("SELECT k FROM customers c, jsonb_object_keys(c.country::jsonb) AS k").masked_outputs == []
    assert g.check("SELECT json_object_agg(email, id) FROM customers").masked_outputs == [0]


def test_alias_lists_on_ctes_are_traced():
    g = guard("duckdb")
    v = g.check("WITH x AS (SELECT id, email FROM customers) SELECT y.b, y.a FROM x AS y(a, b)")
    assert v.allowed and v.masked_outputs == [0]
    assert not g.check("SELECT c.x FROM customers AS c(id, country, x)").allowed  # a real table: refused
