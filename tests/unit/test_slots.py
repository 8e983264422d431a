"""Query slots: every statement of an opened warehouse runs in the installed slot (none by default), in
the explorer's parallel queries too; the limit's name says which warehouse, never where or who."""

from __future__ import annotations

import threading
from contextlib import contextmanager

from assay.explore.executor import Executor
from assay.llm.base import ToolCall
from assay.llm.scripted import ScriptedLLM
from assay.models import WarehouseConfig
from assay.warehouse import build_guard, open_warehouse
from assay.warehouse.slots import (
    connection_identity,
    limit_name,
    limit_size,
    slot,
    use_slots,
)
from tests.helpers import make_explorer, small_warehouse


class Recorder:
    def __init__(self):
        self.entered: list[str] = []
        self.inside = 0
        self.peak = 0
        self.lock = threading.Lock()

    @contextmanager
    def __call__(self, cfg):
        with self.lock:
            self.entered.append(limit_name(cfg))
            self.inside += 1
            self.peak = max(self.peak, self.inside)
        try:
            yield
        finally:
            with self.lock:
                self.inside -= 1


def test_limit_name_is_the_warehouse_not_the_project(tmp_path):
    a = WarehouseConfig(kind="duckdb", settings={"path": str(tmp_path / "w.duckdb")}, row_cap=5)
    b = WarehouseConfig(kind="duckdb", settings={"path": str(tmp_path / "." / "w.duckdb"), "threads": 2},
                        schemas=["main"], max_concurrent_queries=5)
    other = WarehouseConfig(kind="duckdb", settings={"path": str(tmp_path / "v.duckdb")})
    assert limit_name(a) == limit_name(b)  # two projects on one file share one limit
    assert limit_name(a) != limit_name(other)
    assert limit_name(a).startswith("assay-warehouse-duckdb-") and str(tmp_path) not in limit_name(a)
    assert limit_size(a) == 2 and limit_size(b) == 5  # default small


def test_limit_name_never_carries_credentials():
    with_user = WarehouseConfig(kind="postgres", settings={"dsn": "postgresql://bob:hunter2@db.example:5432/sales"})
    other_user = WarehouseConfig(kind="postgres", settings={"dsn": "postgresql://ann@db.example:5432/sales",
                                                            "password_env": "PGPASS"})
    other_db = WarehouseConfig(kind="postgres", settings={"dsn": "postgresql://bob@db.example:5432/hr"})
    assert limit_name(with_user) == limit_name(other_user) != limit_name(other_db)
    assert "hunter2" not in str(connection_identity(with_user)) and "bob" not in str(connection_identity(with_user))
    kv = WarehouseConfig(kind="postgres", settings={"dsn": "host=DB.example port=5432 dbname=sales user=bob"})
    assert "bob" not in str(connection_identity(kv)) and "dbname=sales" in str(connection_identity(kv))
    sf = WarehouseConfig(kind="snowflake", settings={"account": "XY123", "database": "D", "user": "u"})
    assert connection_identity(sf) == {"kind": "snowflake", "account": "xy123", "database": "D"}


def test_no_slot_installed_is_a_no_op(tmp_path):
    db = small_warehouse(tmp_path / "w.duckdb")
    cfg = WarehouseConfig(kind="duckdb", settings={"path": str(db)})
    wh = open_warehouse(cfg)
    try:
        with slot(cfg):
            res = wh.query("SELECT count(*) AS n FROM orders", row_cap=10, timeout_s=10)
        assert res.table.column("n").to_pylist() == [1000]
        assert wh.kind == "duckdb" and wh.concurrent_queries  # the adapter's attributes show through
    finally:
        wh.close()


def test_every_statement_takes_a_slot(tmp_path):
    db = small_warehouse(tmp_path / "w.duckdb")
    cfg = WarehouseConfig(kind="duckdb", settings={"path": str(db)})
    rec = Recorder()
    wh = open_warehouse(cfg)
    try:
        with use_slots(rec):
            tables = wh.list_tables()
            wh.sample_rows(tables[0], 2)
            wh.explain_cost("SELECT 1")
            ex = Executor(wh, build_guard(wh, cfg, tables), cfg)
            assert ex.run("SELECT count(*) FROM customers").ok
        assert len(rec.entered) == 4 and set(rec.entered) == {limit_name(cfg)}
        wh.query("SELECT 1", row_cap=1, timeout_s=5)  # outside the block: no slot
        assert len(rec.entered) == 4
    finally:
        wh.close()


def test_parallel_explorer_queries_take_slots_in_their_threads(tmp_path):
    db = small_warehouse(tmp_path / "w.duckdb")
    turns = iter([
        [ToolCall(c, "query", {"sql": f"SELECT count(*) AS n{c} FROM orders", "purpose": c}) for c in "abc"],
        [ToolCall("d", "done", {"summary": "fin"})],
    ])
    llm = ScriptedLLM(lambda req: next(turns), tools=True)
    ex = make_explorer(db, llm)
    cfg = ex.executor.cfg
    ex.executor.warehouse = open_warehouse(cfg)  # the explorer runs a turn's queries on a thread pool
    rec = Recorder()
    try:
        with use_slots(rec):
            out = ex.run()
    finally:
        ex.executor.warehouse.close()
    assert [s.action.value for s in out.steps] == ["query", "query", "query", "done"]
    assert all(s.error is None for s in out.steps[:3])
    assert len(rec.entered) == 3  # each query of the pool took the slot its caller installed
