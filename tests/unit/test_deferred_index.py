"""The vector index is off the path to a run's first exploration step (issue #20 item 8): the step index is
opened and made complete by the writer's indexer thread, the boot-time sweep runs on a thread of its own, and
whatever reads them (the analysis, the drop hook) finds them complete."""

from __future__ import annotations

from pathlib import Path

import json
import subprocess
import sys
import threading
import time

import pytest

import assay.vectors.index as vindex
from assay.llm import register_scripted
from assay.llm.scripted import ScriptedLLM
from assay.models import DiscoveryRun, LLMConfig, Project, RunStatus, WarehouseConfig
from assay.run.lifecycle import create_run
from assay.run.phases import context_phase, exploration_phase, init_phase, schema_phase
from assay.run.session import RunSession
from assay.services.maintenance import BackgroundSweep
from assay.settings import load_settings
from assay.store import open_store
from assay.vectors.memory_index import MemoryIndex
from tests.helpers import small_warehouse

STOP = {"at": None}  # a step number at which the scripted model "dies" (a killed worker)


class WorkerKilled(BaseException):
    pass


def handler(req):
    if req.purpose == "explore":
        step = req.meta["step"]
        if STOP["at"] is not None and step >= STOP["at"]:
            raise WorkerKilled()
        if step <= 4:
            return json.dumps(
                {
                    "purpose": f"orders by channel, variant {step}",
                    "query": f"SELECT c.channel, count(*) + {step} AS orders FROM orders o JOIN customers c "
                    "ON o.customer_id = c.customer_id GROUP BY 1 ORDER BY 1",
                }
            )
        return '{"done": true, "summary": "enough"}'
    if req.purpose.startswith("analyze:"):
        return json.dumps(
            {
                "insights": [
                    {
                        "name": "paid customers",
                        "description": "paid vs organic",
                        "severity": "high",
                        "affected_count": 66,
                        "source_steps": [1],
                    }
                ]
            }
        )
    if req.purpose == "verify":
        return '{"query": "SELECT count(*) AS count FROM customers WHERE channel = \'paid\'"}'
    if req.purpose == "recommend":
        return json.dumps(
            {
                "recommendations": [
                    {"title": "Win back paid customers", "priority": 1, "related_insight_ids": req.meta["insight_ids"]}
                ]
            }
        )
    raise AssertionError(req.purpose)


register_scripted("deferredidx", lambda cfg: ScriptedLLM(handler))


@pytest.fixture()
def run(tmp_path):
    STOP["at"] = None
    db = small_warehouse(tmp_path / "w.duckdb")
    store = open_store(load_settings())
    p = Project(
        id="deferredidx",
        pack="ecommerce",
        max_steps=8,
        analyst="llm",
        warehouse=WarehouseConfig(kind="duckdb", settings={"path": str(db)}),
        llm=LLMConfig(provider="scripted", model="deferredidx"),
    )
    store.save_project(p)
    run_id = f"deferred{tmp_path.name[-6:]}"
    create_run(store, p, run_id=run_id, areas=["conversion"])
    return store, run_id


def _session_to_exploration(run_id: str) -> RunSession:
    s = RunSession(run_id)
    init_phase(s)
    context_phase(s)
    schema_phase(s)
    return s


@pytest.mark.parametrize("kind", ["local", "store"])
def test_the_first_step_does_not_wait_for_the_index_and_exploration_ends_with_it_complete(run, monkeypatch, kind):
    """Local mode keeps the step vectors in this process's memory; with the store (or a server) the indexer
    thread opens the shared index. Either way the first step is stored while the index is still opening."""
    monkeypatch.setenv("ASSAY_VECTOR_INDEX", kind)
    store, run_id = run
    real = vindex.open_index
    first_step = threading.Event()
    openers: list[tuple[str, bool]] = []  # (thread, whether a step was stored before it could open)

    def slow_open(settings):
        # every opener of the index waits until the first step is stored: a first step that needed the index
        # would wait here for the whole timeout
        stored = first_step.wait(timeout=60)
        openers.append((threading.current_thread().name, stored))
        return real(settings)

    monkeypatch.setattr(vindex, "open_index", slow_open)
    s = _session_to_exploration(run_id)
    t0 = time.monotonic()
    stepped_at: list[float] = []

    def on_step(step):
        stepped_at.append(time.monotonic() - t0)
        first_step.set()

    exploration_phase(s, on_step=on_step)
    assert stepped_at and stepped_at[0] < 30, stepped_at  # the first step did not sit out the index's wait
    assert openers, "nothing opened the index: the steps were never indexed"
    assert all(stored for _, stored in openers), openers
    assert "MainThread" not in {name for name, _ in openers}, openers
    # the deferred work happened, and exploration returned only once it had: a reader finds every query step
    queries = [st for st in store.steps(run_id) if st.action.value == "query"]
    assert len(queries) == 4
    assert s.step_index.index.count(vindex.run_collection(run_id)) == len(queries)
    if kind == "local":
        assert isinstance(s.step_index.index, MemoryIndex)
        assert not real(load_settings()).exists(vindex.run_collection(run_id))  # no Qdrant collection for steps
    else:
        assert s.step_index.index.resolve() is real(load_settings())
    hits = s.step_index.search("orders by channel", 10)
    assert {h for h, _ in hits} == {st.step for st in queries}
    s.step_index.drop()
    s.close()


def test_a_resumed_exploration_indexes_the_steps_stored_before_it(run):
    """A worker dies after two steps; the retry runs on a host whose index never saw them (the collection is
    gone): the indexer thread rebuilds them before it adds the new ones."""
    store, run_id = run
    STOP["at"] = 3
    s = _session_to_exploration(run_id)
    with pytest.raises(WorkerKilled):
        exploration_phase(s)
    assert len(store.steps(run_id)) == 2
    s.step_index.drop()  # another host: its index holds nothing of this run
    STOP["at"] = None
    s2 = RunSession(run_id)
    exploration_phase(s2)
    queries = [st for st in store.steps(run_id) if st.action.value == "query"]
    assert len(queries) == 4
    assert s2.step_index.index.count(vindex.run_collection(run_id)) == 4
    s2.step_index.drop()
    s2.close()


def test_a_session_imports_no_qdrant_client_until_vectors_are_used():
    code = (
        "import sys; from assay.run.session import RunSession; import assay_flows.flows.discovery; "
        "s = RunSession('x'); _ = s.step_index; _ = s.index; print('qdrant_client' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_the_boot_sweep_runs_beside_the_caller_and_drops_orphans(monkeypatch):
    settings = load_settings()
    store = open_store(settings)
    real = vindex.open_index
    index = real(settings)
    store.create_run(DiscoveryRun(id="bgsweep-active", project_id="p", status=RunStatus.running))
    for r in ("bgsweep-active", "bgsweep-orphan"):
        index.ensure(vindex.run_collection(r), 4)
    release = threading.Event()

    def slow_open(s):
        assert release.wait(timeout=60)
        return real(s)

    monkeypatch.setattr(vindex, "open_index", slow_open)
    t0 = time.monotonic()
    sweep = BackgroundSweep(store, settings)
    assert time.monotonic() - t0 < 5  # the caller goes on while the sweep waits for the index
    assert index.exists(vindex.run_collection("bgsweep-orphan"))
    release.set()
    dropped = sweep.join(timeout=60)
    assert vindex.run_collection("bgsweep-orphan") in dropped
    assert not index.exists(vindex.run_collection("bgsweep-orphan"))
    assert index.exists(vindex.run_collection("bgsweep-active"))
    index.drop(vindex.run_collection("bgsweep-active"))


def test_a_failed_boot_sweep_is_logged_not_raised(monkeypatch, caplog):
    def broken(s):
        raise RuntimeError("index unreachable")

    monkeypatch.setattr(vindex, "open_index", broken)
    sweep = BackgroundSweep(open_store(load_settings()), load_settings())
    import logging

    log = logging.getLogger("test-sweep")
    with caplog.at_level(logging.WARNING, logger="test-sweep"):
        assert sweep.join(timeout=30, log=log) == []
    assert "index unreachable" in caplog.text


def test_a_one_area_rerun_in_local_mode_imports_no_qdrant_client(run, tmp_path):
    """Local mode: a rerun's areas read the steps' vectors back from the embedding cache into this process's
    memory; Qdrant's client (two seconds of import) is never loaded, and the hook's drop needs none either."""

    store, run_id = run
    s = _session_to_exploration(run_id)
    exploration_phase(s)
    s.store.update_run(run_id, status=RunStatus.completed)
    s.step_index.drop()  # the run ended: its hook dropped the collection
    s.close()
    code = (
        "import sys, json\n"
        "from assay.run.lifecycle import rerun_areas_inline\n"
        "from tests.unit.test_deferred_index import handler  # registers the scripted model\n"
        f"r = rerun_areas_inline({run_id!r}, ['conversion'])\n"
        "from assay_flows.flows.hooks import drop_run_collection_of\n"
        f"drop_run_collection_of({run_id!r})\n"
        "print(json.dumps({'qdrant': 'qdrant_client' in sys.modules, 'areas': [(a.area, a.ok, a.selected_steps) "
        "for a in r.analysis_log]}))\n"
    )
    import os

    root = str(Path(__file__).resolve().parents[2])  # `tests` is imported by the child: the checkout's root on its path
    env = dict(os.environ, ASSAY_VECTOR_INDEX="local",
               PYTHONPATH=os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH", "")) if p))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=str(tmp_path))
    assert out.returncode == 0, out.stderr[-2000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["qdrant"] is False, got
    [(area, ok, picked)] = got["areas"]
    assert area == "conversion" and ok and picked, got  # the area read its steps back through the index


def test_the_local_step_index_is_searched_like_the_shared_one():
    m = MemoryIndex()
    m.ensure("c", 3)
    m.upsert(
        "c",
        [("a", [1.0, 0.0, 0.0], {"step": 1}), ("b", [0.0, 2.0, 0.0], {"step": 2}), ("c", [1.0, 1.0, 0.0], {"step": 3})],
    )
    hits = m.search("c", [0.0, 1.0, 0.0], top_k=2)
    assert [h.key for h in hits] == ["b", "c"] and hits[0].score == pytest.approx(1.0)
    assert hits[1].score == pytest.approx(2**-0.5, rel=1e-5) and hits[0].payload["step"] == 2
    assert m.count("c") == 3 and m.collections("c") == ["c"]
    m.upsert("c", [("a", [0.0, 1.0, 0.0], {"step": 1})])  # same key: replaced
    assert m.count("c") == 3 and m.search("c", [0.0, 1.0, 0.0], top_k=1, min_score=0.99)[0].key in ("a", "b")
    assert m.drop("c") and not m.exists("c") and m.search("c", [1.0, 0.0, 0.0], 3) == []
