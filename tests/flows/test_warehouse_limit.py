"""The per-warehouse query limit under Prefect: a global concurrency limit named after the warehouse, sized
from the project, wraps every query of a run (the explorer's parallel queries, every area's verification).
A limit of 1 serialises them all; a limit of 4 lets the same run overlap them (so the count can see it)."""

from __future__ import annotations

import asyncio
import json
import threading
import time

import pytest

from assay.llm import register_scripted
from assay.llm.base import ToolCall
from assay.llm.scripted import ScriptedLLM
from assay.models import LLMConfig, Project, WarehouseConfig
from assay.settings import load_settings
from assay.store import open_store
from assay.warehouse.duckdb import DuckDBWarehouse
from assay.warehouse.slots import limit_name
from assay_flows.flows.discovery import DiscoveryParams, discovery_flow
from tests.helpers import small_warehouse

AREAS = ["conversion", "revenue", "retention"]


def handler(req):
    if req.purpose == "explore":
        if not any(m.tool_results for m in req.messages):  # first turn: four queries at once
            return [ToolCall(f"q{i}", "query", {"purpose": f"orders by channel {i} (conversion, revenue)",
                                                "sql": "SELECT c.channel, count(*) AS orders, sum(o.amount) AS revenue "
                                                       "FROM orders o JOIN customers c ON o.customer_id = c.customer_id "
                                                       f"WHERE o.order_id > {i} GROUP BY 1 ORDER BY 1"})
                    for i in range(4)]
        return [ToolCall("d", "done", {"summary": "done"})]
    if req.purpose.startswith("analyze:"):
        area = req.purpose.split(":", 1)[1]
        return json.dumps({"insights": [{"name": f"{area}: paid customers {n}", "description": "paid vs organic",
                                         "severity": "high", "affected_count": 66, "source_steps": [1]}
                                        for n in range(2)]})
    if req.purpose == "verify":
        return '{"query": "SELECT count(*) AS count FROM customers WHERE channel = \'paid\'"}'
    if req.purpose == "recommend":
        return json.dumps({"recommendations": []})
    raise AssertionError(req.purpose)


register_scripted("limittest", lambda cfg: ScriptedLLM(handler, tools=True))


class InFlight:
    """Counts the queries DuckDB runs at the same time (the real engine runs each one). With ``meet``, the first
    query waits (up to 20 s) for a second one to start beside it: where the limit allows overlap the count sees
    it for certain (a 0.3-s window alone missed it once on a loaded machine), and where the product serialised
    the run's queries the wait runs out and the peak stays 1."""

    def __init__(self, meet: bool = False):
        self.now = self.peak = self.total = 0
        self.lock = threading.Lock()
        self.met = threading.Event()
        if not meet:
            self.met.set()

    def wrap(self, real):
        def query(wh, sql, **kw):
            with self.lock:
                self.now += 1
                self.total += 1
                self.peak = max(self.peak, self.now)
                if self.now >= 2:
                    self.met.set()
            try:
                self.met.wait(20)
                time.sleep(0.3)  # long enough for concurrent callers to overlap
                return real(wh, sql, **kw)
            finally:
                with self.lock:
                    self.now -= 1

        return query


def project(tmp_path_factory, pid: str, limit: int) -> Project:
    db = small_warehouse(tmp_path_factory.mktemp(pid) / "w.duckdb")
    p = Project(id=pid, pack="ecommerce", max_steps=6, analyst="llm",
                warehouse=WarehouseConfig(kind="duckdb", settings={"path": str(db)}, max_concurrent_queries=limit),
                llm=LLMConfig(provider="scripted", model="limittest"))
    open_store(load_settings()).save_project(p)
    return p


def discover(p: Project, run_id: str):
    return asyncio.run(discovery_flow(DiscoveryParams(project=p.id, areas=AREAS), run_id=run_id, return_state=True))


def read_limit(name: str):
    from prefect.client.orchestration import get_client

    with get_client(sync_client=True) as client:
        return client.read_global_concurrency_limit_by_name(name)


@pytest.mark.parametrize("limit", [1, 4])
def test_warehouse_limit_bounds_every_query_of_a_run(tmp_path_factory, monkeypatch, limit):
    p = project(tmp_path_factory, f"limit{limit}", limit)
    counter = InFlight(meet=limit > 1)
    monkeypatch.setattr(DuckDBWarehouse, "query", counter.wrap(DuckDBWarehouse.query))
    state = discover(p, f"limit{limit}run")
    assert state.is_completed(), state.message
    result = open_store(load_settings()).get_result(f"limit{limit}run")
    assert result.run_type.value == "full"
    assert sum(1 for i in result.insights if i.validation) == len(result.insights) >= len(AREAS)
    assert counter.total >= 4 + len(AREAS)  # the four explored queries and at least one check per area
    gcl = read_limit(limit_name(p.warehouse))  # created on the server with the project's size
    assert gcl.limit == limit and gcl.active_slots == 0  # every slot given back
    if limit == 1:
        assert counter.peak == 1  # nothing ever ran beside another query
    else:
        assert 1 < counter.peak <= limit  # the same run overlaps its queries when the warehouse allows it
