"""The SQL guard: refusals and passes on the parsed tree, tenant filter, rewrite."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.models import ColumnInfo, TableInfo, TenantFilter
from assay.warehouse.guard import SQLGuard

DATA = Path(__file__).parent.parent / "data" / "guard"


def tables():
    cols = lambda *names: [ColumnInfo(name=n, type="INTEGER") for n in names]  # noqa: E731
    return [
        TableInfo(schema="main", name="orders", columns=cols("id", "tenant_id", "customer_id", "amount", "created_at",
                                                             "status", "payload")),
        TableInfo(schema="main", name="customers", columns=cols("id", "tenant_id", "country", "signup_date")),
        TableInfo(schema="main", name="products", columns=cols("id", "price")),
    ]


@pytest.fixture
def guard():
    return SQLGuard("duckdb", tables=tables(), default_schema="main")


@pytest.fixture
def tenant_guard():
    return SQLGuard("duckdb", tables=tables(), default_schema="main", tenant=TenantFilter(column="tenant_id", value=7, shared_tables=["products"]))


def corpus(name: str) -> list[dict]:
    return json.loads((DATA / name).read_text())


@pytest.mark.parametrize("case", corpus("refuse.json"), ids=lambda c: c["sql"][:60])
@pytest.mark.parametrize("dialect", ["duckdb", "postgres", "snowflake"])
def test_corpus_refused_in_every_dialect(case, dialect):
    # an attack written for one engine must not pass the guard of another
    g = SQLGuard(dialect, tables=tables(), default_schema="main",
                 tenant=TenantFilter(column="tenant_id", value=7, shared_tables=["products"]) if case.get("tenant") else None)
    v = g.check(case["sql"])
    assert not v.allowed, case["sql"]
    assert v.reason  # a refusal always says why


@pytest.mark.parametrize("case", corpus("allow.json"), ids=lambda c: c["sql"][:60])
def test_corpus_allowed(case):
    g = SQLGuard(case.get("dialect", "duckdb"), tables=tables(), default_schema="main",
                 tenant=TenantFilter(column="tenant_id", value=7, shared_tables=["products"]) if case.get("tenant") else None)
    v = g.check(case["sql"])
    assert v.allowed, f"{case['sql']} -> {v.reason}"


def test_corpus_sizes():
    assert len(corpus("refuse.json")) >= 300
    assert len(corpus("allow.json")) >= 150


def test_stacked_statement_reason(guard):
    assert guard.check("SELECT 1; DROP TABLE orders").reason == "exactly one statement is allowed, got 2"


def test_comment_does_not_hide_a_statement(guard):
    assert guard.check("SELECT * FROM orders -- ; DROP TABLE orders").allowed
    assert not guard.check("SELECT * FROM orders /* */; DELETE FROM orders").allowed


def test_unknown_and_system_tables(guard):
    assert "unknown table" in guard.check("SELECT * FROM secrets").reason
    assert "system table" in guard.check("SELECT * FROM information_schema.tables").reason


def test_schema_allow_list():
    g = SQLGuard("postgres", schemas=["sales"])
    assert g.check("SELECT * FROM sales.orders").allowed
    assert "outside the project's schemas" in g.check("SELECT * FROM hr.salaries").reason


def test_tenant_or_widening_refused(tenant_guard):
    assert tenant_guard.check("SELECT * FROM orders WHERE tenant_id = 7").allowed
    assert not tenant_guard.check("SELECT * FROM orders WHERE tenant_id = 7 OR 1 = 1").allowed


def test_tenant_joined_table_needs_its_own_predicate(tenant_guard):
    q = "SELECT * FROM orders o JOIN customers c ON o.customer_id = c.id WHERE o.tenant_id = 7"
    assert "customers" in tenant_guard.check(q).reason
    assert tenant_guard.check(q + " AND c.tenant_id = 7").allowed


def test_tenant_subquery_escape_refused(tenant_guard):
    q = "SELECT * FROM (SELECT * FROM orders) s WHERE s.tenant_id = 7"
    assert not tenant_guard.check(q).allowed
    assert tenant_guard.check("WITH a AS (SELECT * FROM orders WHERE tenant_id = 7) SELECT * FROM a").allowed


def test_tenant_union_branch_refused(tenant_guard):
    q = "SELECT id FROM orders WHERE tenant_id = 7 UNION ALL SELECT id FROM orders"
    assert not tenant_guard.check(q).allowed


def test_tenant_value_type_and_value_must_match(tenant_guard):
    assert not tenant_guard.check("SELECT * FROM orders WHERE tenant_id = 8").allowed
    assert not tenant_guard.check("SELECT * FROM orders WHERE tenant_id = '8'").allowed
    assert not tenant_guard.check("SELECT * FROM orders WHERE tenant_id = '07'").allowed
    # the same digits quoted, on a number column: every engine reads it as 7 (the false-refusal audit, session 25)
    assert tenant_guard.check("SELECT * FROM orders WHERE tenant_id = '7'").allowed


def test_tenant_left_join_on_counts_only_for_joined_table(tenant_guard):
    q = ("SELECT * FROM orders o LEFT JOIN customers c ON o.customer_id = c.id AND c.tenant_id = 7 "
         "AND o.tenant_id = 7")
    assert "orders" in tenant_guard.check(q).reason  # o's predicate in a LEFT JOIN's ON filters nothing


def test_tenant_injection_rewrites_every_scope():
    g = SQLGuard("duckdb", tables=tables(), default_schema="main", tenant=TenantFilter(column="tenant_id", value=7),
                 inject_tenant=True)
    v = g.check("SELECT o.id FROM orders o JOIN customers c ON o.customer_id = c.id WHERE o.amount > 1")
    assert v.allowed
    assert "o.tenant_id = 7" in v.sql and "c.tenant_id = 7" in v.sql
    # the rewritten statement passes the strict guard
    strict = SQLGuard("duckdb", tables=tables(), default_schema="main", tenant=TenantFilter(column="tenant_id", value=7, shared_tables=["products"]))
    assert strict.check(v.sql).allowed


def test_tables_without_the_tenant_column_are_free(tenant_guard):
    assert tenant_guard.check("SELECT * FROM products").allowed


def test_enforce_raises_with_reason(guard):
    from assay.errors import GuardRefusal

    with pytest.raises(GuardRefusal, match="DELETE"):
        guard.enforce("DELETE FROM orders")


def test_database_qualified_names():
    g = SQLGuard("snowflake", tables=tables(), default_schema="main", database="SHOP")
    assert g.check("SELECT * FROM shop.main.orders").allowed
    assert "outside the project's database" in g.check("SELECT * FROM other.main.orders").reason
    assert not SQLGuard("duckdb", tables=tables(), default_schema="main").check("SELECT * FROM x.main.orders").allowed


def test_corpus_allowed_when_columns_are_pii():
    """Lineage must not cost legitimate analytics: with PII declared on columns they read, every statement
    of the allow corpus still passes (values derived from them are masked instead)."""
    refused = []
    for case in corpus("allow.json"):
        g = SQLGuard(case.get("dialect", "duckdb"), tables=tables(), default_schema="main",
                     pii_columns=["country", "status", "amount"],
                     tenant=TenantFilter(column="tenant_id", value=7, shared_tables=["products"])
                     if case.get("tenant") else None)
        v = g.check(case["sql"])
        if not v.allowed:
            refused.append((case["sql"], v.reason))
    assert refused == []


def test_internal_failures_refuse(guard, monkeypatch):
    def boom(*a, **k):
        raise RuntimeError("sqlglot broke")

    monkeypatch.setattr("assay.warehouse.guard.check_call", boom)
    v = guard.check("SELECT count(id) FROM orders")
    assert not v.allowed and v.reason


def test_deeply_nested_statement_is_refused_not_crashed(guard):
    sql = "SELECT " + "(" * 3000 + "1" + ")" * 3000
    assert not guard.check(sql).allowed
    assert not guard.check("SELECT 1 + " + "1 + " * 40_000 + "1").allowed  # too long


@pytest.mark.parametrize("dialect", ["duckdb", "postgres", "snowflake"])
def test_statement_sent_has_no_comments_and_round_trips(dialect):
    g = SQLGuard(dialect, tables=tables(), default_schema="main")
    v = g.check("SELECT id /* c */ FROM orders -- */ , pg_sleep(10) /*")
    assert v.allowed and "/*" not in v.sql and "--" not in v.sql and "sleep" not in v.sql.lower()
    assert g.check(v.sql).sql == v.sql  # what is sent passes the guard again, unchanged


@pytest.mark.parametrize("dialect", ["mysql", "bigquery", "tsql"])
def test_where_names_may_be_case_sensitive_they_are_written_as_the_catalog_spells_them(dialect):
    """Red team 9 (session 25): on MySQL with lower_case_table_names=0, BigQuery and a case-sensitive SQL Server, a
    schema or table named in another case can be another object; the guard matched it to the project's table."""
    tables = [TableInfo(schema="shop", name="Orders", columns=[ColumnInfo(name="id", type="INT")])]
    g = SQLGuard(dialect, tables=tables, schemas=["shop"], default_schema="shop")
    assert g.check("SELECT o.id FROM shop.Orders o").allowed
    assert g.check("SELECT o.id FROM Orders o").allowed
    for sql in ("SELECT o.id FROM SHOP.Orders o", "SELECT o.id FROM shop.orders o", "SELECT o.id FROM orders o"):
        v = g.check(sql)
        assert not v.allowed and "as the catalog spells it (shop.Orders)" in v.reason, (dialect, sql)
    # DuckDB and PostgreSQL read names as before (folded, or matched whatever their case)
    assert SQLGuard("duckdb", tables=tables, schemas=["shop"], default_schema="shop").check(
        "SELECT o.id FROM SHOP.ORDERS o").allowed


def test_the_tenant_literal_follows_the_tenant_columns_type():
    """Red team 9 (session 25): a number tenant value on a text tenant column was written as a number, which MySQL
    compares as numbers ('01' and '1-eu' equal 1). On a text column the literal is a string; on a number column a
    number, as before."""
    tables = [TableInfo(schema="main", name="accounts", columns=[ColumnInfo(name="tenant_id", type="VARCHAR(10)"),
                                                                 ColumnInfo(name="id", type="INT")]),
              TableInfo(schema="main", name="orders", columns=[ColumnInfo(name="tenant_id", type="BIGINT"),
                                                               ColumnInfo(name="id", type="INT")])]
    g = SQLGuard("mysql", tables=tables, default_schema="main", tenant=TenantFilter(column="tenant_id", value=1),
                 inject_tenant=True)
    sql = g.enforce("SELECT a.id, o.id AS oid FROM accounts a JOIN orders o ON o.id = a.id")
    assert "a.tenant_id = '1'" in sql and "o.tenant_id = 1" in sql and "o.tenant_id = '1'" not in sql
    strict = SQLGuard("mysql", tables=tables, default_schema="main", tenant=TenantFilter(column="tenant_id", value=1))
    assert not strict.check("SELECT a.id FROM accounts a WHERE a.tenant_id = 1").allowed
    assert strict.check("SELECT a.id FROM accounts a WHERE a.tenant_id = '1'").allowed
    assert strict.check("SELECT o.id FROM orders o WHERE o.tenant_id = 1").allowed
    assert strict.check("SELECT o.id FROM orders o WHERE o.tenant_id = '1'").allowed  # read as 1 everywhere
    # red team 10: binary, blob, SET and ENUM columns compare a number in other ways: the value is a string there
    for typ in ("VARBINARY(10)", "BLOB", "SET('7','1')", "ENUM('1','2')", "binary(4)"):
        t = [TableInfo(schema="main", name="a", columns=[ColumnInfo(name="tenant_id", type=typ)])]
        g = SQLGuard("mysql", tables=t, default_schema="main", tenant=TenantFilter(column="tenant_id", value=1),
                     inject_tenant=True)
        assert "a.tenant_id = '1'" in g.enforce("SELECT a.tenant_id FROM a"), typ
    # a value that is no number on a number column (MySQL reads int_col = 'acme' as 0): refused, said plainly
    named = SQLGuard("mysql", tables=tables, default_schema="main", tenant=TenantFilter(column="tenant_id",
                     value="acme"), inject_tenant=True)
    v = named.check("SELECT o.id FROM orders o")
    assert not v.allowed and "is no number" in v.reason


def test_a_tenant_predicate_on_a_quoted_column_in_another_case_does_not_count():
    """Red team 10 (session 25): PostgreSQL keeps a quoted name's case, so ``e."TENANT_ID" = 1`` filters another
    column than tenant_id, and tenant 2's rows came back. The predicate's column must be the catalog's tenant column
    as the engine spells it."""
    def g(*cols, dialect="postgres"):
        t = [TableInfo(schema="public", name="events", columns=[ColumnInfo(name=c, type="INT") for c in cols])]
        return SQLGuard(dialect, tables=t, schemas=["public"], default_schema="public",
                        tenant=TenantFilter(column="tenant_id", value=1))

    both = g("id", "tenant_id", "TENANT_ID")
    assert not both.check('SELECT e.id FROM events e WHERE e."TENANT_ID" = 1').allowed
    one = g("id", "tenant_id")
    assert not one.check('SELECT e.id FROM events e WHERE e."TENANT_ID" = 1').allowed
    assert one.check('SELECT e.id FROM events e WHERE e.tenant_id = 1').allowed
    assert one.check('SELECT e.id FROM events e WHERE e."tenant_id" = 1').allowed
    assert one.check('SELECT e.id FROM events e WHERE e.TENANT_ID = 1').allowed  # unquoted: folded to tenant_id
    # DuckDB matches column names whatever their case: unchanged
    assert g("id", "tenant_id", dialect="duckdb").check('SELECT e.id FROM events e WHERE e."TENANT_ID" = 1').allowed


def test_a_lateral_function_on_postgresql_is_checked_as_the_same_call_without_the_keyword():
    """The false-refusal audit (session 25): ``CROSS JOIN LATERAL jsonb_each_text(e.properties)`` was refused while
    the comma form passed; PostgreSQL reads a function in FROM as lateral either way. Lineage still masks what a PII
    column feeds, and a function off the allow-list is still refused."""
    t = [TableInfo(schema="public", name="events", columns=[ColumnInfo(name="id", type="int"),
                                                             ColumnInfo(name="properties", type="jsonb"),
                                                             ColumnInfo(name="email", type="text")])]
    g = SQLGuard("postgres", tables=t, schemas=["public"], default_schema="public", pii_columns=["email"])
    v = g.check("SELECT kv.key, count(*) AS n FROM events e CROSS JOIN LATERAL jsonb_each_text(e.properties) AS kv "
                "GROUP BY 1")
    assert v.allowed and "CROSS JOIN JSONB_EACH_TEXT(e.properties) AS kv" in v.sql
    assert g.check("SELECT kv.key FROM events e LEFT JOIN LATERAL jsonb_each_text(e.properties) kv ON true").allowed
    v = g.check("SELECT kv.value FROM events e CROSS JOIN LATERAL jsonb_array_elements_text(to_jsonb(ARRAY[e.email])) kv")
    assert v.allowed and v.masked_outputs == [0]
    assert not g.check("SELECT x FROM events e CROSS JOIN LATERAL pg_read_file('/etc/passwd') x").allowed
    assert not g.check("SELECT kv.key FROM events e CROSS JOIN LATERAL jsonb_each_text(e.properties) "
                       "WITH ORDINALITY kv").allowed
    # MySQL's REGEXP goes as REGEXP_INSTR (MariaDB has no REGEXP_LIKE); a call with match flags stays as written
    m = SQLGuard("mysql", tables=t, default_schema="public")
    assert "(REGEXP_INSTR(e.email, '^a') > 0)" in m.enforce("SELECT e.id FROM events e WHERE e.email REGEXP '^a'")
    assert "REGEXP_LIKE(e.email, '^a', 'i')" in m.enforce("SELECT e.id FROM events e WHERE "
                                                          "REGEXP_LIKE(e.email, '^a', 'i')")
    assert "SELECT * FROM (PIVOT" in SQLGuard("duckdb", tables=t).check("PIVOT events ON id USING count(*)").reason


def test_a_function_in_from_gives_only_its_own_columns_on_postgresql():
    """Red team 12 (session 25): PostgreSQL reads ``g.f`` as ``f(g)``, and over a function in FROM the guard checked
    no such name: ``SELECT g.ts_stat FROM unnest(ARRAY['SELECT ... email FROM app.customers']) AS g`` ran the SQL in
    the string (every tenant's e-mail, unmasked), ``g.pg_terminate_backend`` ended another session. Only the
    function's own columns pass: its alias, the alias's column list, the JSON readers' key and value."""
    t = [TableInfo(schema="app", name="customers", columns=[ColumnInfo(name="id", type="int"),
                                                             ColumnInfo(name="properties", type="jsonb"),
                                                             ColumnInfo(name="email", type="text")])]
    g = SQLGuard("postgres", tables=t, schemas=["app"], default_schema="app", pii_columns=["email"])
    for sql in ("SELECT g.ts_stat FROM unnest(ARRAY['SELECT array_to_tsvector(ARRAY[email]) FROM app.customers']) "
                "AS g", "SELECT g.pg_terminate_backend FROM unnest(ARRAY[1]) AS g",
                "SELECT g.pg_terminate_backend FROM generate_series(1, 10) AS g",
                "SELECT kv.to_json FROM app.customers c, jsonb_each_text(c.properties) kv",
                "SELECT g.pg_advisory_lock FROM generate_series(1, 3) AS g(x)",
                "SELECT x.to_json FROM app.customers c, LATERAL (SELECT c.email AS e) x",
                # red team 13 (session 26): over a column list the alias is no column; nor over the JSON readers
                "SELECT ts_stat.ts_stat FROM unnest(ARRAY['SELECT array_to_tsvector(ARRAY[email]) FROM "
                "app.customers']) AS ts_stat(q)", "SELECT pg_sleep.pg_sleep FROM generate_series(3, 3) AS pg_sleep(s)",
                "SELECT ts_stat.ts_stat FROM app.customers c CROSS JOIN LATERAL jsonb_array_elements_text("
                "c.properties) AS ts_stat(q)", "SELECT kv.to_json FROM app.customers c, jsonb_each_text(c.properties) "
                "AS kv(k, v)", "SELECT kv.key FROM app.customers c, jsonb_each_text(c.properties) AS kv(k, v)",
                "SELECT to_json.to_json FROM app.customers c, jsonb_each_text(c.properties) AS to_json"):
        v = g.check(sql)
        assert not v.allowed and "is not a column of" in v.reason, sql
    # red team 14 (session 26): a field of any value but a name is a call, ``(ARRAY['SELECT ...'])[1].ts_stat`` ran the
    # text (every tenant's e-mail, unmasked), ``(ARRAY[2])[1].pg_sleep`` slept
    for sql in ("SELECT (ARRAY['SELECT array_to_tsvector(ARRAY[email]) FROM app.customers'])[1].ts_stat",
                "SELECT (SELECT 'SELECT email FROM app.customers').ts_stat", "SELECT (ARRAY[2])[1].pg_sleep",
                "SELECT g.q[1].ts_stat FROM (SELECT ARRAY['SELECT email FROM app.customers'] AS q) g",
                "SELECT (ARRAY['log_connections'])[1].current_setting", "SELECT (c.properties).to_json FROM "
                "app.customers c"):
        v = g.check(sql)
        assert not v.allowed and "field selection" in v.reason, sql
    for sql in ("SELECT g.g FROM generate_series(1, 10) AS g", "SELECT g.x FROM generate_series(1, 10) AS g(x)",
                "SELECT g.u FROM unnest(ARRAY[1, 2]) AS g(u)", "SELECT g FROM unnest(ARRAY[1, 2]) AS g",
                "SELECT kv.key, kv.value FROM app.customers c, jsonb_each_text(c.properties) kv",
                "SELECT e.value FROM app.customers c, jsonb_array_elements(c.properties) e"):
        assert g.check(sql).allowed, sql
