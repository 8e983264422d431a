"""Test helpers: a small DuckDB warehouse and explorer wiring (real engine, scripted LLM)."""

from __future__ import annotations

from pathlib import Path

import duckdb

from assay.explore.executor import Executor
from assay.explore.loop import Explorer
from assay.models import WarehouseConfig
from assay.schema.catalog import join_hints
from assay.schema.provider import SchemaProvider
from assay.warehouse.duckdb import DuckDBWarehouse
from assay.warehouse.guard import SQLGuard


def small_warehouse(path: Path) -> Path:
    if path.exists():
        return path
    con = duckdb.connect(str(path))
    con.execute("""
        CREATE TABLE customers AS SELECT i AS customer_id, 'user' || i || '@x.io' AS email,
            CASE WHEN i % 3 = 0 THEN 'paid' ELSE 'organic' END AS channel FROM range(1, 201) t(i);
        CREATE TABLE orders AS SELECT i AS order_id, 1 + (i % 200) AS customer_id, (i % 17) * 3.5 AS amount,
            TIMESTAMP '2026-01-01' + INTERVAL (i) HOUR AS ordered_at FROM range(1, 1001) t(i);
        CREATE TABLE ord_bkp_20240101 AS SELECT * FROM orders LIMIT 5;
    """)
    con.close()
    return path


def make_explorer(db: Path, llm, *, max_steps=5, min_steps=0, sink=None, cfg=None, run_id="r1", prior_fetched=None,
                  areas=None):
    wh = DuckDBWarehouse(str(db))
    tables = wh.list_tables()
    cfg = cfg or WarehouseConfig(kind="duckdb", settings={"path": str(db)})
    guard = SQLGuard("duckdb", tables=tables, default_schema="main")
    provider = SchemaProvider(tables, sampler=wh.sample_rows, searcher=lambda q, k: [(t.fqn, 0.5) for t in tables][:k],
                              joins=join_hints(tables))
    counters: dict = {}

    def bump(c):
        for k, v in c.items():
            counters[k] = counters.get(k, 0) + v

    ex = Explorer(llm=llm, executor=Executor(wh, guard, cfg, llm), provider=provider, run_id=run_id,
                  system_prompt="You explore.", max_steps=max_steps, min_steps=min_steps, sink=sink, tables=tables,
                  bump=bump, areas=areas)
    ex.counters = counters
    return ex
