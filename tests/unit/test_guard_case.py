"""Names as the engine folds them (session 23's red team). PostgreSQL reads an unquoted name in lower case and
Snowflake in upper case, and both keep a quoted name as written, so "PG_SHADOW" and PG_SHADOW are two names there.
The guard matched names by their text, whatever their quotes: a quoted CTE hid a real table from every check, one
tenant predicate covered two aliases that differ only in quoting, and a quoted schema in another case passed as the
project's. Snowflake's TABLE('db.schema.table') named a table by a string that no check saw."""

from __future__ import annotations

import pytest

from assay.models import ColumnInfo, TableInfo, TenantFilter
from assay.warehouse.guard import SQLGuard


def catalog(schema="main"):
    cols = lambda *names: [ColumnInfo(name=n, type="INTEGER") for n in names]  # noqa: E731
    return [TableInfo(schema=schema, name="orders", columns=cols("id", "tenant_id", "email", "amount")),
            TableInfo(schema=schema, name="customers", columns=cols("id", "tenant_id", "country"))]


def guard(dialect, **kw):
    return SQLGuard(dialect, tables=catalog(), schemas=["main"], default_schema="main", **kw)


@pytest.mark.parametrize("dialect,sql", [
    ("postgres", 'WITH "PG_SHADOW" AS (SELECT 1 AS x) SELECT usename, passwd FROM PG_SHADOW'),
    ("postgres", 'WITH "PG_STAT_ACTIVITY" AS (SELECT 1 AS x) SELECT query FROM pg_stat_activity'),
    ("postgres", 'WITH "SECRETS" AS (SELECT 1 AS x) SELECT * FROM secrets'),
    ("snowflake", 'WITH "secrets" AS (SELECT 1 AS x) SELECT * FROM SECRETS'),
])
def test_a_quoted_cte_does_not_hide_the_table_the_engine_reads(dialect, sql):
    v = guard(dialect).check(sql)
    assert not v.allowed, (sql, v.sql)


def test_the_table_behind_a_quoted_cte_of_its_name_is_checked_as_read():
    # Snowflake reads the unquoted orders as ORDERS, the project's table, not the CTE "orders": it is checked as
    # read (listed, and filtered by the tenant predicate or refused)
    sql = 'WITH "orders" AS (SELECT 1 AS x) SELECT * FROM orders WHERE tenant_id <> 1'
    assert guard("snowflake").check(sql).tables == ["main.orders"]
    assert not guard("snowflake", tenant=TenantFilter(column="tenant_id", value=1)).check(sql).allowed


def test_a_cte_the_engine_reads_as_the_cte_still_shadows_the_table():
    for dialect, sql, read in [("postgres", 'WITH "pg_shadow" AS (SELECT 1 AS x) SELECT x FROM PG_SHADOW', []),
                               ("postgres", "WITH T AS (SELECT id FROM orders) SELECT id FROM t", ["main.orders"]),
                               ("snowflake", 'WITH "T" AS (SELECT id FROM orders) SELECT id FROM t', ["main.orders"])]:
        v = guard(dialect).check(sql)
        assert v.allowed and v.tables == read, (sql, v.reason)


def test_the_tenant_filter_tells_apart_aliases_that_differ_only_in_quoting():
    tenant = TenantFilter(column="tenant_id", value=1)
    for dialect, sql in [
        ("postgres", 'SELECT o.tenant_id, o.id FROM orders AS "O", orders AS o WHERE "O".tenant_id = 1'),
        ("snowflake", 'SELECT O.tenant_id FROM orders AS "o", orders AS O WHERE "o".tenant_id = 1'),
    ]:
        assert not guard(dialect, tenant=tenant).check(sql).allowed, sql
    # the same alias, quoted or not, as the engine reads it
    ok = guard("postgres", tenant=tenant).check('SELECT o.id FROM orders AS "o" WHERE O.tenant_id = 1')
    assert ok.allowed, ok.reason
    # engines that match names case-insensitively keep matching them so
    assert guard("duckdb", tenant=tenant).check('SELECT o.id FROM orders AS "O" WHERE o.tenant_id = 1').allowed


def test_a_quoted_name_in_another_case_is_not_the_catalogs_table():
    assert not guard("postgres").check('SELECT * FROM "MAIN".orders').allowed  # another schema to PostgreSQL
    assert not guard("postgres").check('SELECT * FROM "Orders"').allowed
    assert not guard("snowflake").check('SELECT * FROM "orders"').allowed  # the adapter reads ORDERS
    assert guard("snowflake").check('SELECT "ID" FROM "MAIN"."ORDERS"').allowed
    assert guard("postgres").check('SELECT "id" FROM "main"."orders"').allowed
    # a catalog table created with a quoted mixed-case name is read as it is spelled
    mixed = SQLGuard("postgres", tables=[TableInfo(schema="main", name="OrderLines", columns=[])],
                     schemas=["main"], default_schema="main")
    assert mixed.check('SELECT * FROM "OrderLines"').allowed
    # without a catalog the guard cannot tell which object a quoted name in the kept case is
    bare = SQLGuard("postgres", schemas=["main"], default_schema="main")
    assert not bare.check('SELECT * FROM "Orders"').allowed and bare.check("SELECT * FROM Orders").allowed


def test_the_statement_sent_keeps_its_unquoted_names_as_written():
    v = guard("snowflake", tenant=TenantFilter(column="tenant_id", value=7), inject_tenant=True).check(
        "SELECT Amount AS Revenue FROM orders o")
    assert v.allowed and v.sql == "SELECT Amount AS Revenue FROM orders AS o WHERE o.tenant_id = 7", v.sql
    v = guard("postgres").check('SELECT Amount AS "Revenue" FROM Orders')
    assert v.allowed and v.sql == 'SELECT Amount AS "Revenue" FROM Orders', v.sql


@pytest.mark.parametrize("dialect", ["snowflake", "postgres", "duckdb", "databricks", "bigquery"])
@pytest.mark.parametrize("sql", ["SELECT k FROM TABLE('MYDB.SECRET.KEYS')",
                                 "SELECT * FROM TABLE('SNOWFLAKE.ACCOUNT_USAGE.QUERY_HISTORY')",
                                 "WITH x AS (SELECT * FROM TABLE('secret.keys')) SELECT * FROM x",
                                 "SELECT * FROM TABLE('orders') WHERE tenant_id <> 1"])
def test_a_table_named_by_a_string_is_refused(dialect, sql):
    v = guard(dialect).check(sql)
    assert not v.allowed and v.reason, (dialect, sql)


# the second red team (session 23), on the fix above

def test_a_parser_directive_in_a_comment_is_refused():
    """sqlglot reads "/* sqlglot.meta case_sensitive */" as a directive that keeps its node's name unfolded, and the
    guard sends the statement without comments: the check would see PG_SHADOW as the CTE, the engine pg_shadow."""
    tenant = TenantFilter(column="tenant_id", value=1)
    for dialect, sql in [
        ("postgres", 'WITH "PG_SHADOW" AS (SELECT 1 AS x) SELECT usename FROM PG_SHADOW /* sqlglot.meta case_sensitive */'),
        ("postgres", 'SELECT "O".amount FROM orders AS "O", customers AS o '
                     "WHERE O.tenant_id /* sqlglot.meta case_sensitive */ = 1 AND o.tenant_id = 1"),
        ("snowflake", 'WITH "secrets" AS (SELECT 1 AS x) SELECT * FROM secrets /* sqlglot.meta case_sensitive */'),
        ("duckdb", "SELECT id FROM orders /* SQLGLOT.META case_sensitive */ WHERE tenant_id = 1"),
    ]:
        v = guard(dialect, tenant=tenant).check(sql)
        assert not v.allowed and "sqlglot.meta" in v.reason, (dialect, sql, v.sql)
    assert guard("postgres").check("SELECT id FROM orders /* the ids */").allowed  # a plain comment is dropped


def test_an_injected_tenant_predicate_filters_the_alias_it_is_for():
    inject = dict(tenant=TenantFilter(column="tenant_id", value=1), inject_tenant=True)
    v = guard("postgres", **inject).check('SELECT "O".id, "O".amount FROM orders AS "O", customers AS o')
    assert v.allowed and '"O".tenant_id = 1' in v.sql and "o.tenant_id = 1" in v.sql, v.sql
    v = guard("snowflake", **inject).check('SELECT "o".id FROM orders AS "o", customers AS O')
    # the unquoted o of the second predicate is O to Snowflake: the customers alias
    assert v.sql == 'SELECT "o".id FROM orders AS "o", customers AS O WHERE "o".tenant_id = 1 AND o.tenant_id = 1'
    v = guard("postgres", **inject).check('SELECT 1 FROM orders AS "Orders" JOIN customers AS orders ON TRUE')
    assert v.allowed and '"Orders".tenant_id = 1' in v.sql and "orders.tenant_id = 1" in v.sql, v.sql


@pytest.mark.parametrize("dialect", ["duckdb", "bigquery", "databricks", "tsql"])
def test_an_alias_in_another_case_is_the_same_alias_where_the_engine_says_so(dialect):
    # (the review of the fix: these engines match aliases whatever their case, and refuse two that differ only so)
    assert guard(dialect, tenant=TenantFilter(column="tenant_id", value=7)).check(
        "SELECT O.id FROM orders o WHERE O.tenant_id = 7").allowed


@pytest.mark.parametrize("dialect", ["mysql", "snowflake", "postgres"])
def test_two_aliases_that_differ_only_in_case_are_two_aliases(dialect):
    # MySQL/MariaDB on Linux (and a case-sensitive collation) tell C from c: one predicate covers one of them
    sql = "SELECT C.id, C.amount FROM orders AS C, orders AS c WHERE c.tenant_id = 1"
    if dialect in ("snowflake", "postgres"):  # folded, C and c are one name there: quoted, two
        sql = 'SELECT "C".id FROM orders AS "C", orders AS c WHERE c.tenant_id = 1'
    assert not guard(dialect, tenant=TenantFilter(column="tenant_id", value=1)).check(sql).allowed


def test_redshift_is_checked_as_postgresql_whatever_its_case_setting():
    # with enable_case_sensitive_identifier on, Redshift keeps a quoted name's case as PostgreSQL does
    tenant = TenantFilter(column="tenant_id", value=1)
    for sql in ['WITH "PG_USER" AS (SELECT 1 AS x) SELECT usename FROM PG_USER',
                'WITH "ORDERS" AS (SELECT 1 AS tenant_id) SELECT id, email FROM ORDERS',
                'SELECT "C".country FROM customers AS "C", customers AS c WHERE c.tenant_id = 1']:
        assert not guard("redshift", tenant=tenant).check(sql).allowed, sql
    assert guard("redshift", tenant=tenant).check("SELECT count(*) FROM Orders o WHERE O.tenant_id = 1").allowed


def test_catalog_tables_whose_names_differ_only_in_case_are_refused():
    cols = [ColumnInfo(name="id", type="INTEGER"), ColumnInfo(name="tenant_id", type="INTEGER")]
    tables = [TableInfo(schema="shop", name="orders", columns=cols),
              TableInfo(schema="shop", name="ORDERS", columns=[ColumnInfo(name="id", type="INTEGER")])]
    for dialect in ("mysql", "bigquery"):
        g = SQLGuard(dialect, tables=tables, schemas=["shop"], default_schema="shop")
        for sql in ("SELECT id FROM ORDERS", "SELECT id FROM shop.orders"):
            v = g.check(sql)
            assert not v.allowed and "differ only in case" in v.reason, (dialect, sql, v.reason)
