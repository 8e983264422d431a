"""One contract for the store, run on tinymongo (embedded) and on a real wire-protocol server."""

from __future__ import annotations

import threading

import pymongo
import pytest
import tinymongo

from assay.errors import NotFound
from assay.models import (AreaLog, DiscoveryResult, DiscoveryRun, ExplorationStep, Feedback, Insight, Project,
                          StepAction, TableInfo)
from assay.store.store import Store


@pytest.fixture(params=["tinymongo", "mongodb"])
def store(request, tmp_path):
    if request.param == "tinymongo":
        client = tinymongo.TinyMongoClient(str(tmp_path / "store"), backend="sqlite")
        yield Store(client["assay"], backend="tinymongo")
    else:
        uri = request.getfixturevalue("mongo_uri")
        client = pymongo.MongoClient(uri, serverSelectionTimeoutMS=5000)
        name = f"t_{tmp_path.name[-20:].replace('-', '_')}"
        yield Store(client[name], backend="mongodb")
        client.drop_database(name)
        client.close()


def test_projects_round_trip(store):
    store.save_project(Project(id="p1", pack="gaming", category="match3"))
    store.save_project(Project(id="p1", pack="gaming", category="idle"))  # upsert
    assert store.get_project("p1").category == "idle"
    assert [p.id for p in store.list_projects()] == ["p1"]
    with pytest.raises(NotFound, match="no project 'p2'"):
        store.get_project("p2")


def test_runs_counters_and_prefix(store):
    store.create_run(DiscoveryRun(id="abcdef123", project_id="p1"))
    store.bump("abcdef123", {"schema_lookup_calls": 2, "steps_by_action.query": 1})
    store.bump("abcdef123", {"schema_lookup_calls": 1, "steps_by_action.query": 1})
    store.update_run("abcdef123", status="running", steps_done=4)
    run = store.get_run("abcd")  # unique prefix
    assert run.telemetry.schema_lookup_calls == 3 and run.telemetry.steps_by_action == {"query": 2}
    assert run.status.value == "running" and run.steps_done == 4
    assert store.active_run_ids() == {"abcdef123"}


def test_concurrent_increments_are_not_lost(store):
    store.create_run(DiscoveryRun(id="r1", project_id="p1"))

    def work():
        for _ in range(20):
            store.bump("r1", {"llm_calls": 1})

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert store.get_run("r1").telemetry.llm_calls == 80


def test_steps_written_once_in_order(store):
    for n in (2, 1, 3):
        store.add_step(ExplorationStep(run_id="r1", step=n, action=StepAction.query, query=f"SELECT {n}"))
    store.add_step(ExplorationStep(run_id="r1", step=2, action=StepAction.query, query="SELECT again"))
    steps = store.steps("r1")
    assert [s.step for s in steps] == [1, 2, 3] and steps[1].query == "SELECT 2"
    assert store.step_count("r1") == 3


def test_areas_results_feedback_schema(store):
    ins = Insight(id="churn-1", area="churn", name="Churn gap", description="tiktok churns")
    store.save_area("r1", "churn", [ins], AreaLog(area="churn", ok=True, insights=1))
    store.save_area("r1", "churn", [ins, ins.model_copy(update={"id": "churn-2"})], AreaLog(area="churn", ok=True))
    assert [i.id for i in store.area_results("r1")["churn"][0]] == ["churn-1", "churn-2"]
    store.save_result(DiscoveryResult(run_id="r1", project_id="p1", domain="gaming", insights=[ins]))
    assert store.get_result("r1").insights[0].name == "Churn gap"
    assert [r.run_id for r in store.recent_results("p1")] == ["r1"]
    assert store.recent_results("p1", exclude="r1") == []
    store.add_feedback(Feedback(project_id="p1", run_id="r1", insight_id="churn-1", rating="like"))
    store.add_feedback(Feedback(project_id="p1", run_id="r1", insight_id="churn-1", rating="dislike", comment="no"))
    fb = store.feedback("p1")
    assert len(fb) == 1 and fb[0].rating == "dislike"
    assert store.put_schema("k1", "p1", [TableInfo(schema="main", name="orders", row_count=5)])
    assert store.get_schema("k1")[0].fqn == "main.orders" and store.get_schema("k2") is None
    # an unchanged re-discovery writes nothing; any change (here the row count) is written
    assert not store.put_schema("k1", "p1", [TableInfo(schema="main", name="orders", row_count=5)])
    assert store.put_schema("k1", "p1", [TableInfo(schema="main", name="orders", row_count=6)])
    assert store.get_schema("k1")[0].row_count == 6
    assert not store.put_schema("k1", "p1", [TableInfo(schema="main", name="orders", row_count=6)])
    assert store.drop_schema_cache("p1") == 1


def test_recommendations_candidates_and_finished_runs(store):
    store.put_recommendations("r9", {"recommendations": [{"title": "t"}], "log": [], "note": None})
    assert store.get_recommendations("r9")["recommendations"] == [{"title": "t"}]
    assert store.get_recommendations("nope") == {}
    assert store.get_candidates("r9") is None
    store.put_candidates("r9", [{"kind": "trend", "area": "x"}])
    assert store.get_candidates("r9") == [{"kind": "trend", "area": "x"}]
    store.log_candidate_error("r9", 3, "boom")
    assert not store.has_result("r9")
    store.save_result(DiscoveryResult(run_id="r9", project_id="p1", domain="gaming"))
    assert store.has_result("r9")
    store.create_run(DiscoveryRun(id="done1", project_id="p1"))
    store.update_run("done1", status="completed", finished_at="2026-01-01T00:00:00+00:00")
    store.create_run(DiscoveryRun(id="live1", project_id="p1", status="running"))
    finished = store.finished_runs()
    assert finished == {"done1": "2026-01-01T00:00:00+00:00"}


def test_candidates_are_tied_to_the_areas_they_were_assigned_among(store):
    store.put_candidates("r7", [{"kind": "trend", "area": "churn"}], ["churn", "revenue"])
    assert store.get_candidates("r7", ["revenue", "churn"]) == [{"kind": "trend", "area": "churn"}]
    assert store.get_candidates("r7", ["churn", "revenue", "levels"]) is None  # a rerun added an area


def _finished(store, run_id, project, when):
    store.create_run(DiscoveryRun(id=run_id, project_id=project))
    store.update_run(run_id, status="completed", finished_at=when)
    store.add_step(ExplorationStep(run_id=run_id, step=1, turn=1, action=StepAction.query, query="SELECT 1"))
    store.save_area(run_id, "churn", [], AreaLog(area="churn", ok=True))
    store.put_candidates(run_id, [{"kind": "trend"}], ["churn"])
    store.put_recommendations(run_id, {"recommendations": [], "log": [], "note": None})
    store.save_result(DiscoveryResult(run_id=run_id, project_id=project, domain="gaming"))
    store.add_feedback(Feedback(project_id=project, run_id=run_id, insight_id="churn-1", rating="like"))


def test_delete_run_removes_everything_it_wrote(store):
    _finished(store, "gone", "p1", "2026-01-01T00:00:00+00:00")
    _finished(store, "kept", "p1", "2026-01-02T00:00:00+00:00")
    store.delete_run("gone")
    assert store.step_count("gone") == 0 and store.area_results("gone") == {}
    assert store.get_candidates("gone") is None and store.get_recommendations("gone") == {}
    assert not store.has_result("gone") and [f.run_id for f in store.feedback("p1")] == ["kept"]
    assert [r.id for r in store.list_runs("p1")] == ["kept"]
    assert store.step_count("kept") == 1 and store.has_result("kept")


def test_prune_keeps_recent_runs_and_the_latest_of_each_project(store):
    import datetime as dt

    from assay.services.maintenance import prune_runs

    for i in range(5):  # p1: five runs, 100..96 days old
        _finished(store, f"p1-{i}", "p1", f"2026-01-{1 + i:02d}T00:00:00+00:00")
    _finished(store, "p2-old", "p2", "2026-01-01T00:00:00+00:00")  # p2's only run: kept however old
    _finished(store, "p1-new", "p1", "2026-04-09T00:00:00+00:00")  # 1 day old
    now = dt.datetime(2026, 4, 10, tzinfo=dt.timezone.utc)
    deleted = prune_runs(store, keep_days=30, keep_last=3, now=now)
    assert sorted(deleted) == ["p1-0", "p1-1", "p1-2"]  # p1 keeps p1-new, p1-4, p1-3
    assert sorted(r.id for r in store.list_runs("p1")) == ["p1-3", "p1-4", "p1-new"]
    assert [r.id for r in store.list_runs("p2")] == ["p2-old"]
    assert prune_runs(store, keep_days=30, keep_last=3, now=now) == []


def test_area_saves_are_idempotent_and_a_failure_never_erases_a_success(store):
    ins = Insight(id="churn-1", area="churn", name="Churn gap", description="tiktok churns")
    assert store.area_done("r9", "churn") is None
    assert store.save_area("r9", "churn", [], AreaLog(area="churn", ok=False, error="first"))
    assert store.save_area("r9", "churn", [], AreaLog(area="churn", ok=False, error="second"))  # failure over failure
    assert store.area_results("r9")["churn"][1].error == "second" and store.area_done("r9", "churn") is None
    for _ in range(2):  # the same success twice (a duplicated area run): one document, the insight once
        assert store.save_area("r9", "churn", [ins], AreaLog(area="churn", ok=True, insights=1))
    assert not store.save_area("r9", "churn", [], AreaLog(area="churn", ok=False, error="late"))
    kept, log = store.area_results("r9")["churn"]
    assert [i.id for i in kept] == ["churn-1"] and log.ok and store.area_done("r9", "churn").insights == 1
    assert store.db.areas.count_documents({"run_id": "r9"}) == 1
