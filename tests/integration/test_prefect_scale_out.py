"""Scale-out (#22) on a real `prefect server start`: a process work pool with TWO workers, MongoDB (nx-27017) as
the store and the vector index (``ASSAY_VECTOR_INDEX=store``, the default with ``MONGODB_URI``: no Qdrant
server here), the `discovery` and `area` deployments of prefect.yaml.

One discovery on the pool (each costs four flow-run processes) proves both, in one test:
- it runs each area as its own flow run of ``assay-area/area``, on both workers, and finds the same insights as
  an in-process run (`assay discover`) of the same project;
- a worker killed while it analyses areas loses nothing: the discovery sees its areas crashed (their
  heartbeat), ends partial, and a Retry of each crashed area's own flow run makes the run whole, without
  analysing again what the other worker finished.

The analyst is the loopback OpenAI-compatible server of ``test_prefect_workers`` answering the same insight
for an area every time; its analysis answers wait until every area of the run asks (a barrier), so that the
three areas run at once and must use both workers (each runs at most two flow runs: the discovery's and
one area, or two areas).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
import uuid
from pathlib import Path

import pymongo
import pytest

from tests.helpers import small_warehouse
from tests.integration.test_prefect_server import sh
from tests.integration.test_prefect_workers import (  # noqa: F401  (fixtures)
    LoopbackAnalyst,
    analyst,
    flow_state,
    server,
)
from tests.prefect_servers import BIN, create_flow_run, stop

pytestmark = pytest.mark.prefect_server  # a real Prefect server, two workers, MongoDB

REPO = Path(__file__).resolve().parents[2]
AREAS = 3  # the ecommerce pack's areas: revenue, conversion, retention


class SameAnswers(LoopbackAnalyst):
    """Each area's insight is the same whichever process asks; analyses wait for each other (a barrier)."""

    def __init__(self):
        super().__init__()
        self.arrived = 0
        self.expect = AREAS
        self.all_in = threading.Event()
        self.hold_after_barrier = False

    def reset(self, *, hold: bool = False, expect: int = AREAS) -> None:
        with self.lock:
            self.arrived = 0
            self.expect = expect
            self.all_in.clear()
            self.held.clear()
            self.release.clear()
            self.hold_after_barrier = hold
            self.calls.clear()

    def answer(self, body: dict):
        from tests.integration.test_prefect_workers import AREA

        if self.skeleton(body)["phase"] != "analyze":
            return super().answer(body)
        text = " ".join(str(m.get("content") or "") for m in body["messages"])
        area = AREA.search(text).group(1)
        with self.lock:
            self.calls.append(f"analyze:{area}")
            self.arrived += 1
            if self.arrived >= self.expect:
                self.all_in.set()
        self.all_in.wait(240)
        if self.hold_after_barrier:
            self.held.set()
            self.release.wait(600)
        return 200, json.dumps({"insights": [{
            "name": f"{area}: paid customers order less", "description": "paid vs organic",
            "severity": "high", "affected_count": 66, "source_steps": [1]}]})


@pytest.fixture(scope="module")
def same_answers(analyst):  # noqa: F811
    """The module's loopback server, answering as ``SameAnswers``."""
    sa = SameAnswers()
    sa.url = analyst.url
    analyst.answer = sa.answer  # the server calls the analyst's answer
    yield sa
    sa.release.set()
    sa.all_in.set()


@pytest.fixture(scope="module")
def pool(server, same_answers, mongo_uri):  # noqa: F811
    env, root = server
    db_uri = mongo_uri.rsplit("/", 1)[0] + f"/scale_{uuid.uuid4().hex[:8]}"
    env = {**env, "ASSAY_CODE_DIR": str(REPO), "PYTHONPATH": str(REPO), "MONGODB_URI": db_uri,
           "PREFECT_WORKER_QUERY_SECONDS": "1", "PREFECT_LOGGING_LEVEL": "INFO", "ASSAY_AREA_POLL_S": "0.5"}
    env.pop("ASSAY_VECTOR_INDEX", None)
    db = small_warehouse(root / "scale.duckdb")
    (root / "scale.yaml").write_text(
        f"id: xscale\npack: ecommerce\nmax_steps: 3\nllm:\n  provider: openai-json\n  model: loop\n"
        f"  base_url: {same_answers.url}\nanalysis:\n  leads_probes: 0\nwarehouse:\n  kind: duckdb\n  settings:\n    path: {db}\n")
    sh(env, str(BIN / "assay"), "project", "apply", "-f", str(root / "scale.yaml"))
    sh(env, str(BIN / "prefect"), "work-pool", "create", "assay", "--type", "process")
    r = subprocess.run([str(BIN / "prefect"), "--no-prompt", "deploy", "--name", "discovery", "--name", "area"],
                       cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    client = pymongo.MongoClient(db_uri, serverSelectionTimeoutMS=5000)
    yield env, root, client.get_default_database()
    client.close()


class Worker:
    """`prefect worker start --pool assay --limit 2` with its own PREFECT_HOME (as on its own host)."""

    def __init__(self, env: dict, root: Path, name: str):
        self.name = name
        self.log = root / f"worker-{name}.log"
        self.env = {**env, "PREFECT_HOME": str(root / f"prefect-{name}")}
        self.proc = subprocess.Popen([str(BIN / "prefect"), "worker", "start", "--pool", "assay", "--name", name,
                                      "--limit", "2"], cwd=REPO, env=self.env, stdout=open(self.log, "w"),
                                     stderr=subprocess.STDOUT, start_new_session=True)

    def kill(self) -> None:
        os.killpg(self.proc.pid, signal.SIGKILL)  # the worker and the flow processes it started
        self.proc.wait(30)

    def stop(self) -> None:
        stop(self.proc)


def ppid(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def wait_final(env, frid: str, workers, timeout: float = 600, after_count: int = 0) -> dict:
    deadline = time.time() + timeout
    st = {}
    while time.time() < deadline:
        st = flow_state(env, frid)
        if st["type"] in ("COMPLETED", "FAILED", "CRASHED", "CANCELLED") and st["run_count"] > after_count:
            return st
        for w in workers:
            assert w.proc.poll() is None, w.log.read_text()[-3000:]
        time.sleep(1)
    raise AssertionError(f"flow run {frid} did not end: {st}\n" + "\n".join(w.log.read_text()[-2000:]
                                                                            for w in workers))


def start_discovery(env) -> str:
    return create_flow_run(env["PREFECT_API_URL"], "assay-discovery/discovery", {"params": {"project": "xscale"}})


def insights(env, run_id: str) -> list[tuple]:
    shown = json.loads(sh(env, str(BIN / "assay"), "show", run_id, "--json"))
    return sorted((i["area"], i["name"], i["description"], (i.get("validation") or {}).get("status"))
                  for i in shown["insights"]), shown


@pytest.fixture(scope="module")
def in_process(pool, same_answers):
    """The same project discovered by `assay discover` (no work pool: areas are subflows in its process)."""
    env, _, db = pool
    same_answers.reset()
    r = subprocess.run([str(BIN / "assay"), "discover", "xscale"], env=env, capture_output=True, text=True,
                       timeout=900)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    run = next(db.runs.find({"project_id": "xscale"}).sort("started_at", -1))
    assert run.get("area_runs") in (None, {}), run["area_runs"]  # no area flow runs
    return insights(env, run["_id"])


@pytest.mark.timeout(1800)
def test_areas_run_on_both_workers_a_killed_one_loses_nothing_and_the_run_finds_what_in_process_finds(
        pool, same_answers, in_process):
    """One discovery on the pool (each one costs four flow-run processes, ~30 s of CPU): its areas run as flow
    runs of their own on both workers; the worker that does not run the discovery is killed while
    they are analysed; the run ends partial; a Retry of each lost area's flow run makes it whole, and then it
    holds the insights (verdicts included) of an in-process run of the same project."""
    env, root, db = pool
    same_answers.reset(hold=True)
    a, b = Worker(env, root, "ka"), Worker(env, root, "kb")
    try:
        frid = start_discovery(env)
        run_id = frid.replace("-", "")
        assert same_answers.held.wait(600), a.log.read_text()[-2000:] + b.log.read_text()[-2000:]
        assert same_answers.all_in.is_set()  # every area is being analysed
        # each area in a flow run of its own (none is the discovery's), in a process of one of the two workers,
        # and both workers run areas
        beats = {d["area"]: d for d in db.area_runs.find({"run_id": run_id})}
        assert sorted(beats) == ["conversion", "retention", "revenue"], beats
        assert frid not in {d["flow_run"] for d in beats.values()}
        assert {d["ppid"] for d in beats.values()} == {a.proc.pid, b.proc.pid}, (beats, a.proc.pid, b.proc.pid)
        parent_worker = ppid(db.runs.find_one({"_id": run_id})["pid"])
        victim = b if parent_worker == a.proc.pid else a
        survivor = a if victim is b else b
        on_victim = list(db.area_runs.find({"run_id": run_id, "ppid": victim.proc.pid}))
        lost = sorted(d["area"] for d in on_victim)
        assert lost, "the other worker runs no area"
        # the host goes: the worker and the flow processes it started (each in its own session)
        for d in on_victim:
            os.kill(d["pid"], signal.SIGKILL)
        victim.kill()
        same_answers.hold_after_barrier = False
        same_answers.release.set()
        first = wait_final(env, frid, [survivor])
        run = db.runs.find_one({"_id": run_id})
        assert (first["type"], first["name"]) == ("COMPLETED", "Partial"), first
        assert sorted(a for a, v in run["area_runs"].items() if v["state"] == "Crashed") == lost, run["area_runs"]
        kept = [i for i in insights(env, run_id)[0] if i[0] not in lost]
        assert len(kept) == AREAS - len(lost)

        # Retry each crashed area on its own flow run (as from the UI): the run is made whole
        same_answers.reset(expect=1)
        for area in lost:
            sh(env, str(BIN / "prefect"), "flow-run", "retry", run["area_runs"][area]["flow_run"])
        for area in lost:
            st = wait_final(env, run["area_runs"][area]["flow_run"], [survivor], after_count=1)
            assert st["type"] == "COMPLETED", st
        deadline = time.time() + 120
        while time.time() < deadline and flow_state(env, frid)["name"] != "Completed":
            time.sleep(1)
    finally:
        same_answers.release.set()
        a.stop()
        b.stop()
    # only the lost areas were analysed again; nothing of the other worker's areas was lost or redone
    assert sorted(c.split(":")[1].lower() for c in same_answers.calls if c.startswith("analyze:")) == lost
    got, shown = insights(env, run_id)
    assert shown["run_type"] == "full" and len(got) == AREAS, shown["errors"]
    assert got == in_process[0]  # the same insights, verdicts included, as the in-process run
    assert [i for i in got if i[0] not in lost] == kept
    st = flow_state(env, frid)
    assert (st["type"], st["name"]) == ("COMPLETED", "Completed"), st  # the discovery's flow run says so too
    run = db.runs.find_one({"_id": run_id})
    assert {v["state"] for v in run["area_runs"].values()} == {"Completed"}, run["area_runs"]
    assert {v["flow_run"] for v in run["area_runs"].values()} == {d["flow_run"] for d in beats.values()}
    # the flow hook dropped the run's step vectors from the store; the project's schema vectors stay
    assert db.vector_sets.find_one({"_id": f"assay_run_{run_id}"}) is None
    assert db.vector_sets.find_one({"_id": "assay_schema_xscale"}) is not None
