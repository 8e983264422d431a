"""Idempotent, resumable area runs: an area analysed twice (a retried or duplicated area run, a worker that
died after saving) holds its insights once; a failed attempt never erases what an earlier one saved; an area
that died mid-way is analysed again from scratch and saved once."""

from __future__ import annotations

import json

import pytest

from assay.errors import LLMError
from assay.llm import register_scripted
from assay.llm.scripted import ScriptedLLM
from assay.models import LLMConfig, Project, WarehouseConfig
from assay.run.lifecycle import run_discovery_inline
from assay.run.phases import area_phase, recommendations_phase, save_phase
from assay.run.session import RunSession
from assay.settings import load_settings
from assay.store import open_store
from tests.helpers import small_warehouse

CALLS: list[str] = []
MODE = {"analyze": "ok", "verify": "ok"}


class WorkerKilled(BaseException):
    """What a killed worker looks like to the code it was running: nothing after it runs."""


def handler(req):
    CALLS.append(req.purpose)
    if req.purpose == "explore":
        if req.meta["step"] <= 2:
            return json.dumps({"purpose": f"orders by channel {req.meta['step']} (conversion, revenue)",
                               "query": "SELECT c.channel, count(*) AS orders FROM orders o JOIN customers c "
                                        "ON o.customer_id = c.customer_id GROUP BY 1 ORDER BY 1"})
        return '{"done": true, "summary": "enough"}'
    if req.purpose.startswith("analyze:"):
        if MODE["analyze"] == "fail":
            raise LLMError("scripted: the model refused")
        area = req.purpose.split(":", 1)[1]
        return json.dumps({"insights": [{"name": f"{area}: paid customers {n}", "description": "paid vs organic",
                                         "severity": "high", "affected_count": 66, "source_steps": [1]}
                                        for n in range(2)]})
    if req.purpose == "verify":
        if MODE["verify"] == "kill":
            raise WorkerKilled()
        return '{"query": "SELECT count(*) AS count FROM customers WHERE channel = \'paid\'"}'
    if req.purpose == "recommend":
        return json.dumps({"recommendations": [{"title": "Win back paid customers", "priority": 1,
                                                "related_insight_ids": req.meta["insight_ids"]}]})
    raise AssertionError(req.purpose)


register_scripted("resumetest", lambda cfg: ScriptedLLM(handler))


@pytest.fixture()
def finished(tmp_path):
    CALLS.clear()
    MODE.update(analyze="ok", verify="ok")
    db = small_warehouse(tmp_path / "w.duckdb")
    store = open_store(load_settings())
    store.save_project(Project(id="resumetest", pack="ecommerce", max_steps=4, analyst="llm",
                               warehouse=WarehouseConfig(kind="duckdb", settings={"path": str(db)}),
                               llm=LLMConfig(provider="scripted", model="resumetest")))
    run_id = f"resume{tmp_path.name[-6:]}"
    result = run_discovery_inline("resumetest", run_id, areas=["conversion", "revenue"])
    assert result.run_type.value == "full"
    return store, run_id, result


def ids(store, run_id, area):
    return [i.id for i in store.area_results(run_id)[area][0]]


def test_an_area_run_twice_writes_its_insights_once(finished):
    store, run_id, first = finished
    before = ids(store, run_id, "revenue")
    assert len(before) == 2
    CALLS.clear()
    s = RunSession(run_id)
    try:
        again = area_phase(s, "revenue")  # a retried or duplicated area run, after the first one saved
        assert again.ok and again.insights == 2
        assert not [c for c in CALLS if c.startswith(("analyze", "verify"))]  # resumed: no model call, no query
        recommendations_phase(s)
        result = save_phase(s)
    finally:
        s.close()
    assert ids(store, run_id, "revenue") == before
    assert sorted(i.id for i in result.insights) == sorted(i.id for i in first.insights)
    assert len({i.id for i in result.insights}) == len(result.insights)


def test_a_failed_duplicate_never_erases_saved_insights(finished):
    store, run_id, first = finished
    before = store.area_results(run_id)["revenue"][0]
    MODE["analyze"] = "fail"
    s = RunSession(run_id)
    try:
        attempt = area_phase(s, "revenue", redo=True)  # analysed again, and this time it fails
        assert not attempt.ok and "refused" in attempt.error
        result = save_phase(s)
    finally:
        s.close()
    kept, log = store.area_results(run_id)["revenue"]
    assert [i.id for i in kept] == [i.id for i in before] and log.ok
    assert result.run_type.value == "full" and len(result.insights) == len(first.insights)


def test_a_worker_killed_mid_area_then_retried_saves_once(finished):
    store, run_id, first = finished
    store.db.areas.delete_one({"_id": f"{run_id}:revenue"})  # as if the first attempt never saved it
    MODE["verify"] = "kill"
    s = RunSession(run_id)
    try:
        with pytest.raises(WorkerKilled):
            area_phase(s, "revenue")  # dies between the analysis and its save
    finally:
        s.close()
    assert "revenue" not in store.area_results(run_id)  # nothing half-written
    MODE["verify"] = "ok"
    CALLS.clear()
    s = RunSession(run_id)
    try:
        retry = area_phase(s, "revenue")
        assert retry.ok and sum(c.startswith("analyze") for c in CALLS) == 1
        result = save_phase(s)
    finally:
        s.close()
    assert ids(store, run_id, "revenue") == ["revenue-1", "revenue-2"]
    assert sorted(i.id for i in result.insights) == sorted(i.id for i in first.insights)


def test_a_rerun_that_succeeds_replaces_the_area(finished):
    store, run_id, _ = finished
    CALLS.clear()
    s = RunSession(run_id)
    try:
        assert area_phase(s, "revenue", redo=True).ok
    finally:
        s.close()
    assert sum(c.startswith("analyze") for c in CALLS) == 1  # redo analyses again, even though it was done
    assert ids(store, run_id, "revenue") == ["revenue-1", "revenue-2"]


def test_a_rerun_days_later_adds_its_own_time_to_the_duration_not_the_days_between(finished):
    """Session 15, a new user: each `assay rerun --area` grew the run's duration (22 s -> 274 s -> 298 s -> 335 s): it
    was the time since the first start. The saved duration is the earlier attempts' plus the rerun's own."""
    import datetime as dt

    from assay.run.lifecycle import rerun_areas_inline

    store, run_id, first = finished
    assert first.duration_s < 120
    run = store.get_run(run_id)
    # the same run, as if it had started and ended three days ago
    store.update_run(run_id, started_at=run.started_at - dt.timedelta(days=3),
                     finished_at=run.finished_at - dt.timedelta(days=3))
    again = rerun_areas_inline(run_id, ["revenue"])
    assert first.duration_s <= again.duration_s < first.duration_s + 120, (first.duration_s, again.duration_s)
    assert store.get_run(run_id).earlier_s == first.duration_s
    third = rerun_areas_inline(run_id, ["conversion"])
    assert again.duration_s <= third.duration_s < again.duration_s + 120
