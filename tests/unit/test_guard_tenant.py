"""The tenant filter fails closed: predicates bind to source columns, unprovable relations are refused."""

from __future__ import annotations

import pytest

from assay.models import ColumnInfo, TableInfo, TenantFilter
from assay.warehouse.guard import SQLGuard

DIALECTS = ["duckdb", "postgres", "snowflake"]


def tables():
    cols = lambda *names: [ColumnInfo(name=n, type="INTEGER") for n in names]  # noqa: E731
    return [
        TableInfo(schema="main", name="orders", columns=cols("id", "tenant_id", "customer_id", "amount")),
        TableInfo(schema="main", name="customers", columns=cols("id", "tenant_id", "country")),
        TableInfo(schema="main", name="products", columns=cols("id", "price")),
        TableInfo(schema="main", name="order_view", columns=cols("id", "amount")),  # a view without the column
    ]


def guard(dialect="duckdb", *, catalog=True, inject=False, shared=("products",)):
    return SQLGuard(dialect, tables=tables() if catalog else None, default_schema="main", inject_tenant=inject,
                    tenant=TenantFilter(column="tenant_id", value=7, shared_tables=list(shared)))


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("inject", [False, True])
@pytest.mark.parametrize("sql", [
    "SELECT * FROM orders AS o(id, amount, customer_id, tenant_id) WHERE o.tenant_id = 7",
    "SELECT * FROM orders o(a, b, c, tenant_id) WHERE tenant_id = 7",
    "SELECT x.id FROM (SELECT 1 AS id) x JOIN customers AS c(tenant_id, id) ON c.id = x.id WHERE c.tenant_id = 7",
])
def test_column_alias_lists_on_tables_are_refused(dialect, inject, sql):
    v = guard(dialect, inject=inject).check(sql)
    assert not v.allowed and "column-alias" in v.reason


@pytest.mark.parametrize("sql", [
    "SELECT * FROM orders PIVOT (sum(amount) FOR customer_id IN (1, 2)) WHERE tenant_id = 7",
    "SELECT * FROM orders UNPIVOT (v FOR k IN (amount, customer_id)) WHERE tenant_id = 7",
    "PIVOT orders ON customer_id USING sum(amount)",
])
@pytest.mark.parametrize("inject", [False, True])
def test_pivot_over_a_tenant_relation_is_refused(sql, inject):
    assert not guard("duckdb", inject=inject).check(sql).allowed


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("inject", [False, True])
def test_relation_without_the_tenant_column_is_refused_unless_shared(dialect, inject):
    g = guard(dialect, inject=inject)
    v = g.check("SELECT * FROM order_view")
    assert not v.allowed and "shared_tables" in v.reason
    assert g.check("SELECT * FROM products").allowed  # declared shared
    assert guard(dialect, shared=("main.order_view",)).check("SELECT * FROM order_view").allowed
    assert not guard(dialect, shared=()).check("SELECT * FROM products").allowed


@pytest.mark.parametrize("dialect", DIALECTS)
def test_unknown_table_is_refused_with_a_catalog(dialect):
    assert not guard(dialect).check("SELECT * FROM shadow_orders WHERE tenant_id = 7").allowed


@pytest.mark.parametrize("dialect", DIALECTS)
def test_catalog_less_mode_requires_the_predicate_on_every_relation(dialect):
    g = guard(dialect, catalog=False)
    assert not g.check("SELECT * FROM anything").allowed
    assert not g.check("SELECT * FROM a JOIN b ON a.id = b.id WHERE a.tenant_id = 7").allowed
    assert g.check("SELECT * FROM a JOIN b ON a.id = b.id WHERE a.tenant_id = 7 AND b.tenant_id = 7").allowed
    assert g.check("SELECT * FROM products").allowed  # shared by declaration
    inj = SQLGuard(dialect, tenant=TenantFilter(column="tenant_id", value=7), inject_tenant=True)
    v = inj.check("SELECT * FROM a JOIN b ON a.id = b.id")
    assert v.allowed and "a.tenant_id = 7" in v.sql and "b.tenant_id = 7" in v.sql


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("sql", [
    # unqualified column in a join: the engine binds it to whichever relation has it (or errors)
    "SELECT o.id FROM orders o JOIN customers c ON c.id = o.customer_id WHERE tenant_id = 7 AND c.tenant_id = 7",
    # a predicate on another alias, or on an outer relation from inside a subquery
    "SELECT * FROM orders o WHERE EXISTS (SELECT 1 FROM customers c WHERE o.tenant_id = 7 AND c.tenant_id = 7)",
    # a SELECT alias of the tenant column's name is not the column
    "SELECT 7 AS tenant_id, id FROM orders WHERE tenant_id = 7",
    # a derived table's column named tenant_id is not the source column
    "SELECT * FROM (SELECT id, 7 AS tenant_id FROM orders) s WHERE s.tenant_id = 7",
    # the predicate in the wrong scope
    "SELECT * FROM orders WHERE id IN (SELECT id FROM orders WHERE tenant_id = 7)",
    # a table function relation cannot be proved
    "SELECT * FROM orders o, generate_series(1, 3) g WHERE g.tenant_id = 7",
])
def test_predicates_bind_to_source_columns(dialect, sql):
    v = guard(dialect).check(sql)
    assert not v.allowed, v.sql


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("sql", [
    "SELECT o.id FROM orders o JOIN products p ON p.id = o.id WHERE tenant_id = 7",  # only orders has it
    "SELECT id FROM orders WHERE tenant_id = 7",
    "SELECT o.id, g.x FROM orders o, (SELECT 1 AS x) g WHERE o.tenant_id = 7",
    "WITH t AS (SELECT * FROM orders WHERE tenant_id = 7) SELECT count(*) FROM t JOIN products p ON p.id = t.id",
])
def test_provable_filters_pass(dialect, sql):
    v = guard(dialect).check(sql)
    assert v.allowed, v.reason


def test_injection_rewrites_unfiltered_relations_and_result_passes_strict_mode():
    inj = guard("duckdb", inject=True)
    v = inj.check("SELECT o.id FROM orders o JOIN customers c ON o.customer_id = c.id "
                  "WHERE o.id IN (SELECT id FROM orders)")
    assert v.allowed
    assert guard("duckdb").check(v.sql).allowed
    assert v.sql.count("tenant_id = 7") == 3


def test_injection_keeps_left_join_semantics():
    v = guard("postgres", inject=True).check(
        "SELECT o.id, c.country FROM orders o LEFT JOIN customers c ON c.id = o.customer_id")
    assert v.allowed
    assert "c.tenant_id = 7" in v.sql.split("WHERE")[0]  # in the ON, not the WHERE
    assert "o.tenant_id = 7" in v.sql.split("WHERE")[1]
    assert guard("postgres").check(v.sql).allowed


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("inject", [False, True])
def test_a_shared_name_shares_one_table_and_never_one_with_the_tenant_column(dialect, inject):
    """Red team 7: ``shared_tables: [plans]`` exempted ``sales.plans`` of another schema, tenant column and all
    (PostgreSQL: another tenant's discount notes read unfiltered)."""
    cols = lambda *names: [ColumnInfo(name=n, type="INTEGER") for n in names]  # noqa: E731
    two = tables() + [TableInfo(schema="main", name="plans", columns=cols("id", "fee")),
                      TableInfo(schema="sales", name="plans", columns=cols("id", "tenant_id", "note"))]

    def g(shared, catalog=two):
        return SQLGuard(dialect, tables=catalog, schemas=["main", "sales"], default_schema="main",
                        inject_tenant=inject, tenant=TenantFilter(column="tenant_id", value=7,
                                                                  shared_tables=list(shared)))
    leak = "SELECT p.tenant_id, p.note FROM sales.plans AS p"
    v = g(["plans"]).check(leak)
    assert (v.allowed and "tenant_id = 7" in v.sql) if inject else not v.allowed, v
    # a table with the tenant column is filtered even when listed by its own name
    v = g(["sales.plans"]).check(leak)
    assert (v.allowed and "tenant_id = 7" in v.sql) if inject else not v.allowed, v
    # the bare name is ambiguous: only a qualified entry shares main.plans
    assert not g(["plans"]).check("SELECT p.fee FROM main.plans AS p").allowed
    assert g(["main.plans"]).check("SELECT p.fee FROM main.plans AS p").allowed
    # one table of that name: the bare name shares it, as before
    assert g(["plans"], catalog=tables() + two[-2:-1]).check("SELECT p.fee FROM plans AS p").allowed
    # no catalog: a bare name is the default schema's table only
    v = g(["plans"], catalog=None).check(leak)
    assert (v.allowed and "tenant_id = 7" in v.sql) if inject else not v.allowed, v
