"""Every DuckDB column type we can create comes through adapter -> executor -> explorer -> digest
-> stored step as digestible values; the statistical analyst reads a table with a list column."""

from __future__ import annotations

import json
from types import SimpleNamespace

import duckdb

from assay.models import WarehouseConfig
from assay.warehouse import open_warehouse
from bench.type_fuzz import corpus, fuzz


def test_every_duckdb_type_is_digestible():
    r = fuzz("duckdb")
    assert r["types_total"] == len(corpus("duckdb")) >= 40
    assert r["run_failures"] == [] and r["step_errors"] == []
    res = r["results"]
    def rows(t):
        return res[t]["digest"]["all_rows"]

    assert [x["c"] for x in rows("INTEGER[]")][:2] == ["[1,2,null]", "[]"]  # nested: JSON text
    assert json.loads(rows("STRUCT(a INTEGER[], b STRUCT(c DATE))")[0]["c"]) == {"a": [1], "b": {"c": "infinity"}}
    assert [x["c"] for x in rows("DATE")][:3] == ["2024-02-29", "infinity", "-infinity"]
    assert rows("INTERVAL")[0]["c"] == "1 year 2 months 3 days 04:05:06.789"
    assert rows("BIT")[0]["c"] == "0101" and rows("mood")[0]["c"] == "ok"
    assert res["HUGEINT"]["digest"]["columns"][0]["kind"] == "number"  # sum() of integers stays a number


def test_the_statistical_analyst_reads_a_table_with_a_list_column(tmp_path):
    from assay.explore.executor import Executor
    from assay.packs import load_pack
    from assay.stats.analyst import detect
    from assay.stats.planner import explore_statistically
    from assay.warehouse import build_guard

    db = tmp_path / "lists.duckdb"
    con = duckdb.connect(str(db))
    con.execute("""CREATE TABLE orders AS SELECT i AS order_id, 1 + (i % 50) AS customer_id, (i % 17) * 3.5 AS amount,
        CASE WHEN i % 3 = 0 THEN 'paid' ELSE 'organic' END AS channel, [i % 5, i % 7] AS tags, {'a': i} AS meta,
        TIMESTAMP '2026-01-01' + INTERVAL (i) HOUR AS ordered_at FROM range(1, 2001) t(i)""")
    con.close()
    cfg = WarehouseConfig(kind="duckdb", settings={"path": str(db)})
    wh = open_warehouse(cfg)
    tables = wh.list_tables()
    s = SimpleNamespace(tables=tables, warehouse=wh, pack=load_pack("ecommerce"), run=SimpleNamespace(max_steps=12, goal=None),
                        run_id="r", executor=Executor(wh, build_guard(wh, cfg, tables), cfg),
                        project=SimpleNamespace(warehouse=cfg))
    steps = []
    explore_statistically(s, [], steps.append)
    assert len(steps) >= 3 and [st.error for st in steps if not st.ok] == []
    for st in steps:
        detect(s, st)  # no detector trips over the list or struct column
