"""A process work pool on a real `prefect server start`, with workers that share nothing but the code,
`$ASSAY_HOME` and the Prefect server: each has its own `$PREFECT_HOME`, as two hosts would.

- a Retry that lands on the other worker re-runs only the failed area and keeps the earlier insights
  (task results live in shared result storage, not in a worker's `$PREFECT_HOME/storage`);
- `assay runs` and the Prefect UI tell one truth about a run: one id, and a final state that mirrors
  full / partial / failed, kept in step by retries and `assay rerun`;
- a run whose worker and flow process are killed is marked crashed, can be rerun, and is swept.

The analyst is a loopback OpenAI-compatible server (the one thing tests replace): it fails or holds the
requests of chosen areas.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.helpers import small_warehouse
from tests.integration.test_prefect_server import api_get, sh
from tests.prefect_servers import BIN, create_flow_run, stop

pytestmark = pytest.mark.prefect_server

REPO = Path(__file__).resolve().parents[2]
AREA = re.compile(r"Report the (.+?) insights as JSON")


class LoopbackAnalyst:
    """An OpenAI-compatible chat server answering in the JSON-action protocol, by the request's phase."""

    def __init__(self):
        from assay.llm.replay import skeleton

        self.skeleton = skeleton
        self.calls: list[str] = []
        self.fail_once: set[str] = set()  # area names whose next analysis answers HTTP 400 (terminal)
        self.hold: set[str] = set()  # area names whose analysis never answers (until released)
        self.held = threading.Event()
        self.release = threading.Event()
        self.seq: dict[str, int] = {}  # analyses asked of each area so far: a re-analysed area's answer differs
        self.lock = threading.Lock()

    def answer(self, body: dict) -> tuple[int, str]:
        phase = self.skeleton(body)["phase"]
        if phase == "explore-json":
            n = 1 + sum(1 for m in body["messages"] if m["role"] == "assistant")
            self.calls.append("explore")
            if n <= 3:
                return 200, json.dumps({"purpose": f"orders by channel {n} (revenue and conversion check)",
                                        "query": "SELECT c.channel, count(*) AS orders, sum(o.amount) AS revenue "
                                                 "FROM orders o JOIN customers c ON o.customer_id = c.customer_id "
                                                 "GROUP BY 1 ORDER BY 1"})
            return 200, json.dumps({"done": True, "summary": "orders and revenue by channel"})
        if phase == "analyze":
            text = " ".join(str(m.get("content") or "") for m in body["messages"])
            area = AREA.search(text).group(1)
            with self.lock:
                self.calls.append(f"analyze:{area}")
                # numbered per area, not across them: the texts (and so their vectors, seeded in the homes by
                # tests/seeded_vectors.warm_home) do not depend on which area's flow run asks first
                seq = self.seq[area] = self.seq.get(area, 0) + 1
            if area in self.fail_once:
                self.fail_once.discard(area)
                return 400, json.dumps({"error": {"message": f"scripted refusal in {area}"}})
            if area in self.hold:
                self.held.set()
                self.release.wait(600)
                return 500, "{}"
            return 200, json.dumps({"insights": [{
                "name": f"{area}: paid customers order less (answer {seq})", "description": "paid vs organic",
                "severity": "high", "affected_count": 66, "source_steps": [1]}]})
        if phase == "verify":
            self.calls.append("verify")
            return 200, json.dumps({"query": "SELECT count(*) AS count FROM customers WHERE channel = 'paid'"})
        if phase == "recommend":
            self.calls.append("recommend")
            return 200, json.dumps({"recommendations": []})
        self.calls.append(phase)
        return 400, json.dumps({"error": {"message": f"unexpected request ({phase})"}})


@pytest.fixture(scope="module")
def analyst():
    replay = LoopbackAnalyst()

    class H(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            status, text = replay.answer(body)
            payload = text if status != 200 else json.dumps({
                "id": "c", "object": "chat.completion",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 50, "completion_tokens": 7}})
            data = payload.encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except OSError:  # the client was killed while its request was held
                pass

        def log_message(self, *a):
            pass

    srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    replay.url = f"http://127.0.0.1:{srv.server_address[1]}/v1"
    yield replay
    replay.release.set()
    srv.shutdown()


@pytest.fixture(scope="module")
def server(prefect_pool_server, tmp_path_factory):
    """The session's work-pool server (tests/integration/conftest.py, shared with test_prefect_scale_out.py), reset
    to a fresh server's state, and this module's own ASSAY_HOME: (env, root)."""
    root = tmp_path_factory.mktemp("prefect-workers")
    prefect_pool_server.ensure()
    prefect_pool_server.reset()
    return prefect_pool_server.client_env(root / "assay"), root


@pytest.fixture(scope="module")
def pool(server, analyst):
    """The project, a process work pool `assay` and the discovery deployment from prefect.yaml."""
    env, root = server
    env = {**env, "ASSAY_CODE_DIR": str(REPO), "PYTHONPATH": str(REPO),
           "PREFECT_WORKER_QUERY_SECONDS": "1", "PREFECT_LOGGING_LEVEL": "INFO"}
    db = small_warehouse(root / "wk.duckdb")
    (root / "pw.yaml").write_text(
        f"id: xworker\npack: ecommerce\nmax_steps: 6\nllm:\n  provider: openai-json\n  model: loop\n"
        f"  base_url: {analyst.url}\nanalysis:\n  leads_probes: 0\nwarehouse:\n  kind: duckdb\n  settings:\n    path: {db}\n")
    sh(env, str(BIN / "assay"), "project", "apply", "-f", str(root / "pw.yaml"))
    sh(env, str(BIN / "prefect"), "work-pool", "create", "assay", "--type", "process")
    r = subprocess.run([str(BIN / "prefect"), "--no-prompt", "deploy", "--name", "discovery"], cwd=REPO, env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return env, root


class Worker:
    """`prefect worker start --pool assay` with its own PREFECT_HOME (as on its own host)."""

    def __init__(self, env: dict, root: Path, name: str):
        self.home = root / f"prefect-{name}"
        self.log = root / f"worker-{name}.log"
        self.env = {**env, "PREFECT_HOME": str(self.home)}
        self.proc = subprocess.Popen([str(BIN / "prefect"), "worker", "start", "--pool", "assay", "--name", name],
                                     cwd=REPO, env=self.env, stdout=open(self.log, "w"), stderr=subprocess.STDOUT,
                                     start_new_session=True)

    def stop(self) -> None:
        stop(self.proc)

    def tail(self) -> str:
        return self.log.read_text()[-3000:]



def flow_state(env, flow_run_id: str) -> dict:
    """A flow run's state as the server has it (its REST API, in this process: wait_final polls it every second)."""
    fr = api_get(env, f"/flow_runs/{flow_run_id}")
    return {"type": fr["state"]["type"], "name": fr["state"]["name"], "message": fr["state"]["message"],
            "run_count": fr["run_count"]}


def wait_final(env, flow_run_id: str, worker: Worker, timeout: float = 300, after_count: int = 0) -> dict:
    deadline = time.time() + timeout
    while time.time() < deadline:
        st = flow_state(env, flow_run_id)
        if st["type"] in ("COMPLETED", "FAILED", "CRASHED", "CANCELLED") and st["run_count"] > after_count:
            return st
        assert worker.proc.poll() is None, worker.tail()
        time.sleep(1)
    raise AssertionError(f"flow run {flow_run_id} did not end: {st}\n{worker.tail()}")


def start_discovery(env) -> str:
    return create_flow_run(env["PREFECT_API_URL"], "assay-discovery/discovery", {"params": {"project": "xworker"}})


def assay_json(env, *args) -> dict:
    return json.loads(sh(env, str(BIN / "assay"), *args, "--json"))


def runs(env) -> dict[str, dict]:
    out = sh(env, str(BIN / "assay"), "runs", "--json")
    return {r["run"]: r for r in map(json.loads, out.strip().splitlines())}


@pytest.fixture(scope="module")
def partial_run(pool, analyst):
    """A discovery on worker A whose revenue area fails (a terminal LLM error): a partial run."""
    env, root = pool
    analyst.fail_once.add("Revenue")
    a = Worker(env, root, "a")
    try:
        frid = start_discovery(env)
        first = wait_final(env, frid, a)
    finally:
        a.stop()
    return frid, first


@pytest.mark.timeout(1200)
def test_a_partial_run_is_partial_in_prefect_and_in_assay_under_one_id(pool, partial_run):
    env, _ = pool
    frid, first = partial_run
    # Prefect: a Completed state named Partial (the discovery is saved; Retry redoes the failed area)
    assert (first["type"], first["name"]) == ("COMPLETED", "Partial"), first
    assert "revenue" in first["message"] and "assay rerun" in first["message"]
    # assay: the same id (the flow run's, dashes aside) and the same state
    run = runs(env)[frid.replace("-", "")]
    assert run["flow_run"] == frid and run["state"] == "Partial"
    assert assay_json(env, "show", frid)["run_type"] == "partial"  # the UI's id finds the run


@pytest.mark.timeout(1200)
def test_a_retry_on_another_worker_reruns_only_the_failed_area(pool, partial_run, analyst):
    env, root = pool
    frid, first = partial_run
    run_id = frid.replace("-", "")
    before = assay_json(env, "show", run_id)
    assert before["run_type"] == "partial" and before["summary"]["areas_failed"] == ["revenue"], before["errors"]
    kept = sorted(i["name"] for i in before["insights"])
    assert len(kept) == 2 and not any(n.startswith("Revenue") for n in kept)

    analyst.calls.clear()
    b = Worker(env, root, "b")
    try:
        sh(env, str(BIN / "prefect"), "flow-run", "retry", frid)
        final = wait_final(env, frid, b, timeout=900, after_count=1)
    finally:
        b.stop()
    after = assay_json(env, "show", run_id)
    assert after["run_type"] == "full", after["errors"]
    # worker B found the phases and areas worker A finished: no exploration, one area analysed again
    assert "explore" not in analyst.calls, analyst.calls
    assert [c for c in analyst.calls if c.startswith("analyze:")] == ["analyze:Revenue"], analyst.calls
    names = sorted(i["name"] for i in after["insights"])
    assert [n for n in names if not n.startswith("Revenue")] == kept  # the earlier insights are kept as they were
    assert after["total_steps"] == before["total_steps"]
    # the results live in the shared storage, not in either worker's PREFECT_HOME
    assert any((root / "assay" / "results").iterdir())
    assert not (b.home / "storage").exists() or not any((b.home / "storage").iterdir())
    # the retry made the run whole: both say so
    assert (final["type"], final["name"]) == ("COMPLETED", "Completed"), final
    assert runs(env)[run_id]["state"] == "Completed"


@pytest.mark.timeout(900)
def test_assay_rerun_updates_the_flow_run_too(pool, partial_run, analyst):
    env, _ = pool
    frid, _ = partial_run
    analyst.fail_once.add("Conversion")
    r = subprocess.run([str(BIN / "assay"), "rerun", frid[:8], "--area", "conversion"], env=env,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 1 and "conversion" in r.stdout + r.stderr, r.stdout[-2000:] + r.stderr[-2000:]
    # a failed rerun keeps the area's earlier insights (areas are written once, a failure never erases a
    # success: #22), so the run stays whole; assay and the Prefect UI still say the same
    st = flow_state(env, frid)
    assert runs(env)[frid.replace("-", "")]["state"] == st["name"], st
    assert st["type"] == "COMPLETED", st


SWEEP = """
import json, sys
from assay.services.maintenance import sweep_run_collections
from assay.settings import load_settings
from assay.store import open_store
from assay.vectors.index import open_index, run_collection
s = load_settings(); index = open_index(s); name = run_collection(sys.argv[1])
before = index.exists(name)
dropped = sweep_run_collections(open_store(s), index)
print(json.dumps({"before": before, "dropped": name in dropped, "after": index.exists(name)}))
"""


@pytest.mark.timeout(1500)
def test_a_killed_run_is_crashed_in_both_ends_watch_is_swept_and_reruns(pool, analyst):
    env, root = pool
    analyst.hold.add("Retention")
    c = Worker(env, root, "c")
    try:
        frid = start_discovery(env)
        run_id = frid.replace("-", "")
        assert analyst.held.wait(900), c.tail()  # the run is analysing its areas; retention's answer never comes
        watch = subprocess.Popen([str(BIN / "assay"), "runs", "--watch"], env=env, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, text=True)
        run = runs(env)[run_id]
        assert run["state"] == "Running" and run["pid"], run
        os.killpg(c.proc.pid, signal.SIGKILL)  # the worker and the flow process die without a word
        os.kill(run["pid"], signal.SIGKILL)
        c.proc.wait(30)
    finally:
        analyst.hold.clear()
        analyst.release.set()
        c.stop()
    assert watch.wait(120) == 0, watch.stderr.read()[-2000:]  # `runs --watch` ends: nothing runs any more
    run = runs(env)[run_id]
    assert run["state"] == "Crashed" and "assay rerun" in run["error"], run
    st = flow_state(env, frid)
    assert st["type"] == "CRASHED", st  # the Prefect server is told, not left Running
    swept = json.loads(sh(env, sys.executable, "-c", SWEEP, run_id).strip().splitlines()[-1])
    # nothing of the killed run is left in the index folder. With Qdrant local mode (this pool's) a run's step
    # vectors live in the memory of its process since session 10 (issue #20 item 8), so the kill took them along
    # and the sweep finds nothing of it to drop; a crashed run's collection in a shared index is still dropped at
    # the first sweep (tests/integration/test_sweep.py::test_a_crashed_run_loses_its_collection_at_once)
    assert swept == {"before": False, "dropped": False, "after": False}, swept

    # the kill may come before the other areas are saved (their verification waits on the warehouse's query
    # slots, #22): the rerun names every area, as the crash message tells a user to
    analyst.fail_once.clear()
    r = subprocess.run([str(BIN / "assay"), "rerun", run_id[:8], "--area", "retention", "--area", "revenue",
                        "--area", "conversion"], env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert runs(env)[run_id]["state"] == "Completed"
    st = flow_state(env, frid)
    assert (st["type"], st["name"]) == ("COMPLETED", "Completed"), st
