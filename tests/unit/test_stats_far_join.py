"""A dimension two joins away: a refund's customer's region lives in customers, which refunds reach only through
orders (refunds.order_id -> orders.customer_id -> customers.region). A new user's planted pattern (session 27)
was missed because the planner broke a table down by its near joins' columns only."""

from __future__ import annotations

from types import SimpleNamespace

import duckdb
import pytest

from assay.digest import build_compact_result
from assay.explore.executor import Executor
from assay.models import ExplorationStep, StepAction, WarehouseConfig
from assay.stats import analyst
from assay.stats.planner import Planner
from assay.stats.probes import Join, parse
from assay.warehouse.duckdb import DuckDBWarehouse
from assay.warehouse.guard import SQLGuard
from tests.unit.test_planner import profiles_of


def build(path) -> None:
    """600 customers in four regions; 12,000 orders; a refund for every fifth order. Refunds of west customers'
    orders are about three times larger (the planted pattern); refunds have no region of their own, and nor do
    orders."""
    con = duckdb.connect(str(path))
    con.execute("""
        CREATE TABLE customers AS SELECT i AS customer_id, ['north', 'south', 'east', 'west'][1 + i % 4] AS region,
            TIMESTAMP '2024-01-01' + INTERVAL (i % 200) DAY AS signed_up_at FROM range(1, 601) t(i);
        CREATE TABLE orders AS SELECT i AS order_id, 1 + (i * 7) % 600 AS customer_id,
            round(20 + (i * 13) % 90, 2) AS amount, TIMESTAMP '2025-01-01' + INTERVAL (i % 360) DAY AS ordered_at
            FROM range(1, 12001) t(i);
        CREATE TABLE refunds AS SELECT o.order_id AS refund_id, o.order_id,
            round(CASE WHEN c.region = 'west' THEN 60 ELSE 20 END + hash(o.order_id) % 15, 2) AS refund_amount,
            o.ordered_at + INTERVAL 9 DAY AS refunded_at
            FROM orders o JOIN customers c USING (customer_id) WHERE o.order_id % 5 = 0;
    """)
    con.close()


@pytest.fixture(scope="module")
def wh(tmp_path_factory):
    path = tmp_path_factory.mktemp("far") / "shop.duckdb"
    build(path)
    w = DuckDBWarehouse(str(path))
    yield w
    w.close()


def far_probes(wh, keywords=("refund",)):
    pl = Planner(wh.list_tables(), wh.quote, list(keywords))
    return [pr for pr in pl.plan(profiles_of(pl, wh)) if pr.table == "main.refunds"
            and getattr(pr.meta, "join", None) is not None and pr.meta.join.via is not None]


def test_a_table_is_broken_down_by_a_dimension_two_joins_away(wh):
    probes = far_probes(wh)
    jb = next(pr for pr in probes if pr.kind == "joined_breakdown")
    assert jb.meta.dim == "region"
    assert jb.meta.join == Join(table="main.customers", on="customer_id", key="customer_id",
                                via=Join(table="main.orders", on="order_id", key="order_id"))
    assert "customers.region (through orders)" in jb.purpose
    rows = {r["region"]: r for r in wh.query(jb.sql, row_cap=100, timeout_s=30).table.to_pylist()}
    assert set(rows) == {"north", "south", "east", "west"} and sum(r["n"] for r in rows.values()) == 2400
    assert rows["west"]["avg_refund_amount"] > 2 * rows["north"]["avg_refund_amount"]
    # the stored form round-trips (a resumed run and the detectors read it back), and a near join keeps its old form
    stored = {"kind": jb.kind, "table": jb.table, **jb.meta.to_dict()}
    assert parse(stored).join == jb.meta.join
    near = Join(table="main.orders", on="order_id", key="order_id")
    assert "via" not in type(jb.meta)(dim="x", join=near).to_dict()["join"]


def test_a_dimension_the_table_or_its_near_join_has_is_not_fetched_again(tmp_path):
    path = tmp_path / "w.duckdb"
    build(path)
    con = duckdb.connect(str(path))
    con.execute("ALTER TABLE orders ADD COLUMN region VARCHAR; UPDATE orders SET region = 'x' || (order_id % 3)")
    con.close()
    w = DuckDBWarehouse(str(path))
    try:
        probes = far_probes(w)
        assert not any(pr.meta.dim == "region" for pr in probes), [pr.purpose for pr in probes]
    finally:
        w.close()


def test_the_far_dimension_is_a_finding_whose_count_the_warehouse_rederives(wh):
    jb = next(pr for pr in far_probes(wh) if pr.kind == "joined_breakdown")
    ex = Executor(wh, SQLGuard("duckdb", tables=wh.list_tables(), default_schema="main"),
                  WarehouseConfig(kind="duckdb", settings={}), None)
    s = SimpleNamespace(run_id="far-join", executor=ex, warehouse=wh, tables=wh.list_tables())
    table = wh.query(jb.sql, row_cap=100, timeout_s=30).table
    step = ExplorationStep(run_id=s.run_id, step=1, action=StepAction.query, purpose=jb.kind, query=jb.sql,
                           row_count=table.num_rows, digest=build_compact_result(table),
                           probe={"kind": jb.kind, "table": jb.table, **jb.meta.to_dict()})
    cands = analyst.detect(s, step)
    west = [c for c in cands if c.measure == "avg_refund_amount" and c.name.startswith("west has the highest")]
    assert west, [c.name for c in cands]
    assert "In refunds, the average refund amount differs by region" in west[0].description
    count_sql = west[0].count_sql
    assert 'JOIN "main"."orders" m' in count_sql and 'JOIN "main"."customers" o' in count_sql
    assert wh.query(count_sql, row_cap=10, timeout_s=30).table.to_pylist()[0]["count"] == 600


def test_each_path_two_joins_away_gets_a_dimension_before_one_path_gets_a_second(tmp_path):
    """A clinic's region through the patient's home clinic and through the doctor's clinic are two questions: the
    first path's three dimensions must not crowd out the second's."""
    path = tmp_path / "w.duckdb"
    build(path)
    con = duckdb.connect(str(path))
    con.execute("""
        ALTER TABLE customers ADD COLUMN tier VARCHAR; UPDATE customers SET tier = ['gold', 'silver'][1 + customer_id % 2];
        ALTER TABLE customers ADD COLUMN channel VARCHAR;
        UPDATE customers SET channel = ['web', 'app', 'store'][1 + customer_id % 3];
        CREATE TABLE teams AS SELECT i AS team_id, ['Manila', 'Austin', 'Dublin'][1 + i % 3] AS site FROM range(1, 7) t(i);
        CREATE TABLE agents AS SELECT i AS agent_id, 1 + i % 6 AS team_id FROM range(1, 41) t(i);
        ALTER TABLE refunds ADD COLUMN agent_id INTEGER; UPDATE refunds SET agent_id = 1 + refund_id % 40;
    """)
    con.close()
    w = DuckDBWarehouse(str(path))
    try:
        pl = Planner(w.list_tables(), w.quote, ["refund"])
        profiles = profiles_of(pl, w)
        probes = [pr for pr in pl.plan(profiles) if pr.table == "main.refunds" and pr.kind == "joined_breakdown"
                  and pr.meta.join.via is not None]
        far = {(pr.meta.join.table, pr.meta.dim) for pr in probes}
        assert len(far) == 3 and ("main.teams", "site") in far, far
        # a small catalogue's own breakdowns (6 teams by site) come after every probe of the business's rows
        plan = [pr for pr in pl.plan(profiles) if not pr.late]
        last_business = max(i for i, pr in enumerate(plan) if pr.table in ("main.refunds", "main.orders"))
        first_teams = min(i for i, pr in enumerate(plan) if pr.table == "main.teams")
        assert last_business < first_teams, [(pr.kind, pr.table) for pr in plan]
    finally:
        w.close()


def test_a_dimension_the_table_reaches_in_one_join_is_not_fetched_through_two(tmp_path):
    path = tmp_path / "w.duckdb"
    build(path)
    con = duckdb.connect(str(path))
    con.execute("ALTER TABLE refunds ADD COLUMN customer_id INTEGER; UPDATE refunds SET customer_id = "
                "(SELECT customer_id FROM orders o WHERE o.order_id = refunds.order_id)")
    con.close()
    w = DuckDBWarehouse(str(path))
    try:
        pl = Planner(w.list_tables(), w.quote, ["refund"])
        probes = [pr for pr in pl.plan(profiles_of(pl, w)) if pr.table == "main.refunds"
                  and getattr(pr.meta, "join", None) is not None and pr.meta.dim == "region"]
        assert probes and all(pr.meta.join.via is None for pr in probes), [pr.purpose for pr in probes]
    finally:
        w.close()


def test_an_outcome_rate_two_joins_away_comes_before_the_tables_own_breakdowns(tmp_path):
    """A judge's clinic: "patients by sex: counts" and the patients' retention ran, and the no-show rate by the
    patients' home clinic's region (two joins away) fell outside the 40-step budget."""
    path = tmp_path / "w.duckdb"
    build(path)
    con = duckdb.connect(str(path))
    con.execute("""ALTER TABLE orders ADD COLUMN channel VARCHAR; UPDATE orders SET channel = ['web', 'app'][1 + order_id % 2];
                   ALTER TABLE refunds ADD COLUMN status VARCHAR;
                   UPDATE refunds SET status = CASE WHEN refund_id % 7 = 0 THEN 'rejected' ELSE 'approved' END""")
    con.close()
    w = DuckDBWarehouse(str(path))
    try:
        pl = Planner(w.list_tables(), w.quote, ["refund"])
        plan = pl.plan(profiles_of(pl, w))
        far = min(i for i, pr in enumerate(plan) if pr.kind == "funnel" and pr.meta.join is not None
                  and pr.meta.join.via is not None)
        own = min(i for i, pr in enumerate(plan) if pr.kind == "breakdown" and pr.table == "main.orders")
        assert far < own, [(pr.kind, pr.table, pr.purpose[:50]) for pr in plan]
    finally:
        w.close()
