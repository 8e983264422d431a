"""Table names resolved by scope, as the engine resolves them: a CTE shadows a name only where visible."""

from __future__ import annotations

import pytest

from assay.models import ColumnInfo, TableInfo
from assay.warehouse.guard import SQLGuard

DIALECTS = ["duckdb", "postgres", "snowflake"]


def guard(dialect: str, catalog: bool = True) -> SQLGuard:
    cols = [ColumnInfo(name=n, type="INTEGER") for n in ("id", "amount")]
    tables = [TableInfo(schema="main", name="orders", columns=cols)] if catalog else None
    return SQLGuard(dialect, tables=tables, default_schema="main")


SHADOW_ESCAPES = [
    # a CTE inside a derived table does not shadow the outer FROM
    "SELECT * FROM {t}, (WITH {t} AS (SELECT 1 AS a) SELECT 1 AS b) x",
    "SELECT * FROM (WITH {t} AS (SELECT 1 AS a) SELECT * FROM {t}) x, {t}",
    # a CTE in a scalar subquery or in one union branch is not visible elsewhere
    "SELECT (WITH {t} AS (SELECT 1 AS a) SELECT a FROM {t}) AS s, * FROM {t}",
    "WITH q AS (SELECT 1 AS a) SELECT a FROM q UNION ALL SELECT 1 FROM {t}",
    "SELECT 1 FROM orders WHERE id IN (WITH {t} AS (SELECT 1 AS a) SELECT a FROM {t}) AND EXISTS (SELECT 1 FROM {t})",
    # a CTE defined later in the list cannot be seen by an earlier one (the engine reads the real table)
    "WITH a AS (SELECT * FROM {t}), {t} AS (SELECT 1 AS x) SELECT * FROM a",
]


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("template", SHADOW_ESCAPES)
@pytest.mark.parametrize("name", ["pg_shadow", "secrets", "information_schema.tables"])
def test_a_cte_shadows_only_where_the_engine_would(dialect, template, name):
    sql = template.format(t=name)
    # without a catalog an unknown name such as "secrets" may be a real table: only system names are refused
    for catalog in (True, False) if name != "secrets" else (True,):
        v = guard(dialect, catalog).check(sql)
        assert not v.allowed, (sql, v.sql)


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("sql", [
    "WITH pg_shadow AS (SELECT 1 AS a) SELECT * FROM pg_shadow",
    "WITH secrets AS (SELECT id FROM orders) SELECT * FROM secrets",
    "WITH a AS (SELECT id FROM orders), b AS (SELECT * FROM a) SELECT * FROM b",
    "SELECT * FROM (WITH secrets AS (SELECT id FROM orders) SELECT * FROM secrets) x",
    "WITH secrets AS (SELECT id FROM orders) SELECT * FROM (SELECT * FROM secrets) x WHERE id IN (SELECT id FROM secrets)",
    "WITH RECURSIVE n AS (SELECT 1 AS i UNION ALL SELECT i + 1 FROM n WHERE i < 5) SELECT * FROM n",
])
def test_visible_ctes_are_not_tables(dialect, sql):
    v = guard(dialect).check(sql)
    assert v.allowed, v.reason


def test_system_relations_are_refused_with_a_clear_reason():
    g = guard("postgres")
    for t in ("information_schema.tables", "pg_catalog.pg_class", "pg_shadow", '"information_schema"."columns"'):
        r = g.check(f"SELECT * FROM {t}").reason
        assert "system table" in r and "lookup_schema" in r


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("name", ['"/etc/passwd"', '"data.csv"', '"s3://bucket/x.parquet"', '"~/x.json"'])
def test_catalog_less_mode_refuses_file_like_names(dialect, name):
    assert not guard(dialect, catalog=False).check(f"SELECT * FROM {name}").allowed


def test_unknown_table_in_catalog_mode():
    assert "not in the project's catalog" in guard("duckdb").check("SELECT * FROM users_backup").reason


def test_bare_names_resolve_in_the_engines_search_order():
    cols = [ColumnInfo(name=n, type="INTEGER") for n in ("id", "tenant_id")]
    tabs = [TableInfo(schema="sales", name="orders", columns=cols),
            TableInfo(schema="archive", name="orders", columns=cols[:1])]
    # PostgreSQL searches the configured schemas in order (the adapter's search_path)
    g = SQLGuard("postgres", tables=tabs, schemas=["archive", "sales"], default_schema="archive")
    assert g.check("SELECT * FROM orders").tables == ["archive.orders"]
    g = SQLGuard("postgres", tables=tabs, schemas=["sales", "archive"], default_schema="sales")
    assert g.check("SELECT * FROM orders").tables == ["sales.orders"]
    # without configured schemas "$user" may precede public: an ambiguous bare name is refused
    v = SQLGuard("postgres", tables=tabs, default_schema="public").check("SELECT * FROM orders")
    assert not v.allowed and "ambiguous" in v.reason
    assert SQLGuard("postgres", tables=tabs, default_schema="public").check("SELECT * FROM sales.orders").allowed
