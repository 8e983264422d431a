"""A measure that is an attribute of a joined key (an order line's unit price is its product's list price) is not a
finding of the fact table when averaged by a dimension of the key's table: "furniture has a higher average
unit_price" describes the price list. A measure that varies within a key's rows (how many units a line buys) stays."""

from __future__ import annotations

from types import SimpleNamespace

import duckdb
import pytest

from assay.digest import build_compact_result
from assay.explore.executor import Executor
from assay.models import ExplorationStep, StepAction, WarehouseConfig
from assay.stats import analyst
from assay.warehouse.duckdb import DuckDBWarehouse
from assay.warehouse.guard import SQLGuard

CATEGORIES = ["furniture", "toys", "books", "garden", "beauty", "sports", "food", "music"]
PROBE = ('SELECT o."category", count(*) AS n, count(DISTINCT f."order_id") AS entities, '
         'avg(f."quantity") AS "avg_quantity", stddev_samp(f."quantity") AS "sd_quantity", '
         'avg(f."unit_price") AS "avg_unit_price", stddev_samp(f."unit_price") AS "sd_unit_price" '
         'FROM "main"."order_items" f JOIN "main"."products" o ON f."product_id" = o."product_id" '
         'GROUP BY 1 ORDER BY 1')
META = {"kind": "joined_breakdown", "table": "main.order_items", "catalogue": False, "core": 0.0, "dim": "category",
        "entity": "order_id", "join": {"table": "main.products", "on": "product_id", "key": "product_id", "ref": ""},
        "small": False}


def _build(path, discount: float) -> None:
    """40 products, 5 per category, furniture priced 300 and the rest 40-60; 8,000 order lines; toys lines buy 8
    units, the others 1-3. ``discount``: the share of a line's price that varies from line to line."""
    con = duckdb.connect(str(path))
    values = ", ".join(f"('{c}')" for c in CATEGORIES)
    con.execute(f"""CREATE TABLE products AS
        SELECT row_number() OVER () AS product_id, c AS category,
               CASE WHEN c = 'furniture' THEN 300.0 ELSE 30.0 + 5 * (i % 5) + length(c) END AS price
        FROM (VALUES {values}) t(c), range(0, 5) r(i)""")
    con.execute(f"""CREATE TABLE order_items AS
        SELECT i AS line_id, i // 3 AS order_id, 1 + i % 40 AS product_id,
               CASE WHEN p.category = 'toys' THEN 8 + i % 3 ELSE 1 + i % (2 + i % 5) END AS quantity,
               p.price * (1 - {discount} * (((i // 40) * 7) % 10) / 10.0) AS unit_price
        FROM range(0, 8000) r(i) JOIN products p ON p.product_id = 1 + i % 40""")
    con.close()


@pytest.fixture(params=[0.0, 0.9], ids=["list-price", "negotiated-price"])
def session(request, tmp_path):
    path = tmp_path / "w.duckdb"
    _build(path, request.param)
    wh = DuckDBWarehouse(str(path))
    ex = Executor(wh, SQLGuard("duckdb", tables=wh.list_tables(), default_schema="main"),
                  WarehouseConfig(kind="duckdb", settings={}), None)
    yield SimpleNamespace(run_id=f"key-attr-{request.param}", executor=ex, warehouse=wh, tables=wh.list_tables()), \
        request.param
    wh.close()


def test_an_average_of_the_joined_keys_attribute_is_no_finding(session):
    s, discount = session
    table = s.warehouse.query(PROBE, row_cap=100, timeout_s=30).table
    step = ExplorationStep(run_id=s.run_id, step=1, action=StepAction.query, purpose="joined_breakdown", query=PROBE,
                           row_count=table.num_rows, digest=build_compact_result(table), probe=META)
    found = {(c.measure, c.segment) for c in analyst.detect(s, step)}
    assert ("avg_quantity", "category=toys") in found  # lines of toys buy more units: behaviour
    if discount:  # a price negotiated line by line: how lines were priced, a finding like any other
        assert ("avg_unit_price", "category=furniture") in found
    else:  # the product's list price: the catalogue, weighted by how often each product sold
        assert not any(m == "avg_unit_price" for m, _ in found), found
    assert analyst.key_attributes(s, "main.order_items", "product_id", ["quantity", "unit_price"]) == \
        (frozenset() if discount else frozenset({"unit_price"}))


def test_keys_that_rarely_repeat_are_not_judged(tmp_path):
    """Session 24's review: with 97% of customers placing one order, no spread within a customer is left, and
    "premium customers spend more per order" was dropped as if amount were the customer's attribute."""
    path = tmp_path / "o.duckdb"
    con = duckdb.connect(str(path))
    con.execute("""CREATE TABLE orders AS SELECT i AS order_id, CASE WHEN i % 33 = 0 THEN i - 1 ELSE i END AS
                   customer_id, (CASE WHEN i % 5 = 0 THEN 300 ELSE 100 END) + i % 7 AS amount FROM range(5000) r(i)""")
    con.close()
    wh = DuckDBWarehouse(str(path))
    try:
        ex = Executor(wh, SQLGuard("duckdb", tables=wh.list_tables(), default_schema="main"),
                      WarehouseConfig(kind="duckdb", settings={}), None)
        s = SimpleNamespace(run_id="rare-keys", executor=ex, warehouse=wh, tables=wh.list_tables())
        assert analyst.key_attributes(s, "main.orders", "customer_id", ["amount"]) == frozenset()
    finally:
        wh.close()
