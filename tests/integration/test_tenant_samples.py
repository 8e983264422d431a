"""A table lookup's sample rows under a tenant filter (session 23's red team): the adapter's own sample, a plain
SELECT * ... LIMIT 3, showed the model another tenant's rows ("OTHER TENANT secret deal") while the executor refused
the same read. The sample is now the guard's statement, the tenant predicate written into it."""

from __future__ import annotations

import duckdb
import pytest

from assay.models import TenantFilter, WarehouseConfig
from assay.pii import MASK
from assay.schema.provider import SchemaProvider
from assay.warehouse import open_warehouse, sampler_for


def test_a_lookup_samples_only_the_projects_tenant(tmp_path):
    db = tmp_path / "t.duckdb"
    con = duckdb.connect(str(db))
    con.execute("CREATE TABLE orders AS SELECT i AS id, 2 AS tenant_id, 'OTHER TENANT secret deal' AS note, "
                "'x' || i || '@other.io' AS email FROM range(10) r(i)")
    con.execute("INSERT INTO orders SELECT 100 + i, 1, 'ours', 'y' || i || '@ours.io' FROM range(5) r(i)")
    con.execute("CREATE TABLE regions AS SELECT 'north' AS region")  # no tenant column, not shared
    con.execute("CREATE TABLE plans AS SELECT 'gold' AS plan")  # shared by declaration
    con.execute('CREATE TABLE "order" AS SELECT 1 AS tenant_id, 5 AS n UNION ALL SELECT 2, 6')  # a keyword's name
    con.close()
    cfg = WarehouseConfig(kind="duckdb", settings={"path": str(db)}, pii_columns=["email"],
                          tenant_filter=TenantFilter(column="tenant_id", value=1, shared_tables=["plans"]))
    wh = open_warehouse(cfg)
    try:
        tables = wh.list_tables()
        provider = SchemaProvider(tables, sampler=sampler_for(wh, cfg, tables), pii=cfg.pii_columns)
        by = {t.name: t for t in tables}
        rows = provider.detail(by["orders"])["sample_rows"]
        assert rows and all(r["tenant_id"] == 1 and r["note"] == "ours" and r["email"] == MASK for r in rows), rows
        assert provider.detail(by["regions"])["sample_rows"] == []  # the guard cannot filter it: no sample
        assert provider.detail(by["plans"])["sample_rows"] == [{"plan": "gold"}]
        assert provider.detail(by["order"])["sample_rows"] == [{"tenant_id": 1, "n": 5}]
        # without a tenant filter the adapter samples as before
        plain = WarehouseConfig(kind="duckdb", settings={"path": str(db)})
        assert sampler_for(wh, plain, tables) == wh.sample_rows
    finally:
        wh.close()


def test_the_row_counts_the_model_sees_are_the_tenants_own(tmp_path):
    """Session 25 left it: the catalog, a table lookup and ``information_schema.tables`` showed the engine's row
    count, every tenant's rows together (here 10 of another tenant beside our 5). Under a tenant filter each table
    is counted with the predicate; a shared table keeps its total, a table the guard refuses counts 0; the schema
    cache keeps the tenant's counts apart from another tenant's project on the same warehouse."""
    from assay.explore.info_schema import answer
    from assay.models import Project
    from assay.schema.catalog import render_catalog
    from assay.schema.discovery import discover_schema
    from assay.settings import load_settings
    from assay.store import open_store

    db = tmp_path / "t.duckdb"
    con = duckdb.connect(str(db))
    con.execute("CREATE TABLE orders AS SELECT i AS id, 2 AS tenant_id FROM range(10) r(i)")
    con.execute("INSERT INTO orders SELECT 100 + i, 1 FROM range(5) r(i)")
    con.execute("CREATE TABLE regions AS SELECT 'north' AS region FROM range(7)")  # no tenant column, not shared
    con.execute("CREATE TABLE plans AS SELECT 'gold' AS plan FROM range(4)")  # shared by declaration
    con.close()
    store = open_store(load_settings())

    def project(tenant: int) -> Project:
        return Project(id=f"counts{tenant}", warehouse=WarehouseConfig(
            kind="duckdb", settings={"path": str(db)},
            tenant_filter=TenantFilter(column="tenant_id", value=tenant, shared_tables=["plans"])))

    wh = open_warehouse(project(1).warehouse)
    try:
        assert {t.name: t.row_count for t in wh.list_tables()}["orders"] == 15  # the engine's total
        mine = discover_schema(store, project(1), wh)
        assert {t.name: t.row_count for t in mine} == {"orders": 5, "regions": 0, "plans": 4}
        text = render_catalog(mine).text
        assert "~5 rows" in text and "~15" not in text, text
        got = answer("SELECT table_name, row_count FROM information_schema.tables ORDER BY 1", "duckdb", mine)
        assert got.table.to_pylist() == [{"table_name": "orders", "row_count": 5}, {"table_name": "plans",
                                          "row_count": 4}, {"table_name": "regions", "row_count": 0}]
        theirs = discover_schema(store, project(2), wh)  # the same warehouse, another tenant: not the cached 5
        assert {t.name: t.row_count for t in theirs}["orders"] == 10
        assert {t.name: t.row_count for t in discover_schema(store, project(1), wh)}["orders"] == 5  # cached
        # a value the column cannot hold, or one no row has, stops the run's schema phase, `project apply` (a
        # DuckDB file) and doctor: the run refused every read, or read nothing, and ended "Completed, no
        # insights" without a word (a new user, session 27)
        from assay.config import ConfigError, check_warehouse_contents
        from assay.doctor import OK, check_warehouse

        wrong = project(1).model_copy(update={"id": "countsone", "warehouse": project(1).warehouse.model_copy(
            update={"tenant_filter": TenantFilter(column="tenant_id", value="one")})})
        with pytest.raises(ConfigError, match="tenant_filter.value: the tenant value 'one' is no number"):
            discover_schema(store, wrong, wh)
        with pytest.raises(ConfigError, match="^p.yaml: warehouse.tenant_filter.value: the tenant value 'one'"):
            check_warehouse_contents(wrong, "p.yaml")
        with pytest.raises(ConfigError, match="no row of the 1 table.s. with a tenant_id column has tenant_id = 99"):
            discover_schema(store, project(99), wh)
        assert check_warehouse(project(1)) == (OK, f"duckdb {db} · 3 tables in main · tenant 1: 5 rows")
        # ... a column the guard does not judge (a uuid) refuses the value on the engine, in every table
        con2 = duckdb.connect(str(tmp_path / "u.duckdb"))
        con2.execute("CREATE TABLE visits AS SELECT uuid() AS tenant_id, 1 AS n FROM range(3)")
        con2.close()
        uuid_cfg = WarehouseConfig(kind="duckdb", settings={"path": str(tmp_path / "u.duckdb")},
                                   tenant_filter=TenantFilter(column="tenant_id", value="one"))
        uwh = open_warehouse(uuid_cfg)
        try:
            with pytest.raises(ConfigError, match="tenant_id = 'one' failed in every table with that column .main.visits: Conversion Error"):
                from assay.warehouse import tenant_row_counts

                tenant_row_counts(uwh, uuid_cfg, uwh.list_tables())
        finally:
            uwh.close()
    finally:
        wh.close()


def test_a_statistical_run_under_a_tenant_filter_finds_its_tenants_pattern(tmp_path):
    """A new user's project with a tenant filter (session 24): every probe of the statistical analyst was refused
    for lacking the predicate, and the run ended "Completed, no insights" without a word. The product's own SQL
    now gets the predicate written in; what it finds is the tenant's own pattern, never another tenant's."""
    from assay.models import Project
    from assay.run.lifecycle import new_run_id, run_discovery_inline
    from assay.settings import load_settings
    from assay.store import open_store

    db = tmp_path / "shop.duckdb"
    con = duckdb.connect(str(db))
    # two tenants, 12 months of orders in four regions; tenant 1's south refunds jump from July, tenant 2's north
    con.execute("""CREATE TABLE orders AS
        SELECT i AS order_id, 1 + i % 2 AS tenant_id, ['north', 'south', 'east', 'west'][1 + (i // 2) % 4] AS region,
               TIMESTAMP '2025-01-01' + INTERVAL (i % 360) DAY AS ordered_at, 20 + (i * 7) % 50 AS amount,
               CASE WHEN ['north', 'south', 'east', 'west'][1 + (i // 2) % 4] = (CASE WHEN i % 2 = 0 THEN 'south'
                         ELSE 'north' END) AND i % 360 >= 181 THEN (i * 13) % 100 < 30 ELSE (i * 13) % 100 < 4 END
                 AS refunded
        FROM range(0, 24000) r(i)""")
    con.close()
    store = open_store(load_settings())
    store.save_project(Project(
        id="tenantstat", pack="goal", goal="Why do refunds rise in some regions?", analyst="statistical", max_steps=15,
        warehouse=WarehouseConfig(kind="duckdb", settings={"path": str(db)},
                                  tenant_filter=TenantFilter(column="tenant_id", value=1))))
    run_id = new_run_id()
    result = run_discovery_inline("tenantstat", run_id)
    steps = store.steps(run_id)
    assert steps and not [st.error for st in steps if not st.ok], [st.error for st in steps if not st.ok][:3]
    # a step keeps the statement that ran, with the predicate the guard wrote in; so does a verification: a reader
    # who runs the report's SQL gets the report's number (a new user got every tenant's count: session 27)
    assert all("tenant_id" in st.query for st in steps if st.query), [st.query for st in steps][:3]
    checked = [i.validation for i in result.insights if i.validation and i.validation.query
               and i.validation.verified_count is not None]
    assert checked
    con = duckdb.connect(str(db), read_only=True)
    for v in checked:
        assert con.execute(v.query).fetchone()[0] == v.verified_count, v.query
    con.close()
    text = " ".join(f"{i.name} {i.description} {i.segment or ''}" for i in result.insights)
    assert "south" in text and "north" not in text, text
    # `assay verify` re-derives the same numbers under the filter (its statements were refused: session 24's review)
    from assay.reverify import reverify

    rows = reverify(store, run_id, None)
    assert rows and all(r.now == "confirmed" for r in rows), [(r.insight, r.now, r.reasoning[:120]) for r in rows]


def test_a_resumed_statistical_exploration_under_a_tenant_filter_runs_no_probe_twice(tmp_path):
    """The session's review: a step keeps the statement as sent (the tenant predicate written in), and a resumed
    run compared the product's own SQL with it, so every probe ran again."""
    from types import SimpleNamespace

    from assay.explore.executor import Executor
    from assay.packs import load_pack
    from assay.stats.planner import explore_statistically
    from assay.warehouse import build_guard

    db = tmp_path / "r.duckdb"
    con = duckdb.connect(str(db))
    con.execute("""CREATE TABLE orders AS SELECT i AS order_id, 1 + i % 2 AS tenant_id, (i % 17) * 3.5 AS amount,
        CASE WHEN i % 3 = 0 THEN 'paid' ELSE 'organic' END AS channel,
        TIMESTAMP '2026-01-01' + INTERVAL (i) HOUR AS ordered_at FROM range(1, 4001) t(i)""")
    con.close()
    cfg = WarehouseConfig(kind="duckdb", settings={"path": str(db)},
                          tenant_filter=TenantFilter(column="tenant_id", value=1))
    wh = open_warehouse(cfg)
    try:
        tables = wh.list_tables()
        s = SimpleNamespace(tables=tables, warehouse=wh, pack=load_pack("ecommerce"), run_id="r",
                            run=SimpleNamespace(max_steps=6, goal=None), project=SimpleNamespace(warehouse=cfg),
                            executor=Executor(wh, build_guard(wh, cfg.model_copy(update={"inject_tenant_filter": True}),
                                                              tables), cfg))
        first: list = []
        explore_statistically(s, [], first.append)
        assert len(first) == 6 and all("tenant_id" in st.query for st in first)
        more: list = []
        explore_statistically(s, first, more.append, max_steps=40)
        assert more and not {st.query for st in more} & {st.query for st in first}
    finally:
        wh.close()
