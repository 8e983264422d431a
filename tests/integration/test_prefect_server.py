"""The deployments against a real `prefect server start` on loopback: `assay serve` serves them, a flow run of
each (made over the REST API, as the UI's Run button or `run_deployment` make one) runs a discovery, a one-area
rerun of it, and maintenance; all complete."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

from tests.helpers import small_warehouse
from tests.prefect_servers import BIN, create_flow_run, retrying, stop, wait_flow_run

pytestmark = pytest.mark.prefect_server

@pytest.fixture
def server(prefect_serve_server, tmp_path):
    """The session's served-paths server (tests/integration/conftest.py), reset to a fresh server's state, and
    this test's own ASSAY_HOME: (env, root)."""
    prefect_serve_server.ensure()
    prefect_serve_server.reset()
    return prefect_serve_server.client_env(tmp_path / "assay"), tmp_path


def sh(env, *args, timeout=300):
    r = subprocess.run(list(args), env=env, capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    return r.stdout


# what the tests poll for, read over the server's REST API in this process: a `python -c` with the Prefect
# client per poll cost ~2 s of CPU (importing prefect), every 2-3 s, for minutes
def api_post(env, path: str, body: dict | None = None):
    """A filter (a read by POST) of the server's REST API, asked again as ``api_get`` asks (session 13: a whole-suite
    run at load ~6 failed the schedule test on one 30-s ReadTimeout of its poll)."""
    import httpx

    return retrying(lambda: httpx.post(env["PREFECT_API_URL"] + path, json=body or {}, timeout=30))


def api_get(env, path: str, attempts: int = 5):
    """A read of the server's REST API. The tests' polls go through it: a read that times out, or a 503 from a
    SQLite-backed server busy with the workers' writes, is asked again (1, 2, 4, 8 s later) instead of failing
    the test on one slow answer (seen in CI: a ReadTimeout in the middle of a retry test's poll)."""
    import httpx

    return retrying(lambda: httpx.get(env["PREFECT_API_URL"] + path, timeout=30), attempts)


def deployment_names(env) -> list[str]:
    """Every deployment on the server, as flow/deployment (deployments read first: a deployment's flow exists
    before it does, so the flows read next name them all even while `assay serve` registers more)."""
    deployments = api_post(env, "/deployments/filter")
    flows = {f["id"]: f["name"] for f in api_post(env, "/flows/filter")}
    return [f"{flows[d['flow_id']]}/{d['name']}" for d in deployments]

def trigger(env, name, params=None, timeout=400):
    """Run a deployment and wait for its flow run to end (tests/prefect_servers.py: over the REST API)."""
    return wait_flow_run(env["PREFECT_API_URL"], create_flow_run(env["PREFECT_API_URL"], name, params), timeout)


def test_served_deployments_run_to_completion(server):
    env, root = server
    db = small_warehouse(root / "w.duckdb")
    (root / "p.yaml").write_text(f"id: srvtest\npack: ecommerce\nanalyst: statistical\nmax_steps: 12\n"
                                 f"schedule: '0 6 * * 1'\nwarehouse:\n  kind: duckdb\n  settings:\n    path: {db}\n")
    sh(env, str(BIN / "assay"), "project", "apply", "-f", str(root / "p.yaml"))
    serve_log = open(root / "serve.log", "w")
    serving = subprocess.Popen([str(BIN / "assay"), "serve"], env=env, stdout=serve_log, stderr=subprocess.STDOUT,
                               start_new_session=True)
    try:
        names = []
        deadline = time.time() + 120
        while time.time() < deadline and len(names) < 5:
            time.sleep(1)
            assert serving.poll() is None, (root / "serve.log").read_text()[-2000:]
            names = deployment_names(env)
        assert sorted(names) == ["assay-area/area", "assay-discovery/discover-srvtest", "assay-maintenance/maintenance",
                                 "assay-rerun-areas/rerun-areas", "assay-reverify/reverify"], names

        done = trigger(env, "assay-discovery/discover-srvtest")
        assert done["state"] == "COMPLETED", done
        run_id = done["id"].replace("-", "")
        shown = json.loads(sh(env, str(BIN / "assay"), "show", run_id, "--json"))
        assert shown["run_type"] in ("full", "partial") and shown["total_steps"] > 0

        again = trigger(env, "assay-rerun-areas/rerun-areas", {"params": {"run": run_id, "areas": ["revenue"]}})
        assert again["state"] == "COMPLETED", again
        rerun = json.loads(sh(env, str(BIN / "assay"), "show", run_id, "--json"))
        assert rerun["total_steps"] == shown["total_steps"]  # the exploration was re-used, not repeated

        maint = trigger(env, "assay-maintenance/maintenance", {"params": {"keep_days": 30, "keep_last": 1}})
        assert maint["state"] == "COMPLETED", maint
    finally:
        stop(serving)


def test_prefect_deploy_all_with_a_work_pool(server):
    """The users' path with work pools: `prefect deploy --all` from prefect.yaml, then a worker runs one."""
    env, root = server
    repo = Path(__file__).resolve().parents[2]
    env = {**env, "ASSAY_CODE_DIR": str(repo)}
    db = small_warehouse(root / "w2.duckdb")
    (root / "p2.yaml").write_text(f"id: demo-ecommerce\npack: ecommerce\nanalyst: statistical\nmax_steps: 8\n"
                                  f"warehouse:\n  kind: duckdb\n  settings:\n    path: {db}\n")
    sh(env, str(BIN / "assay"), "project", "apply", "-f", str(root / "p2.yaml"))
    sh(env, str(BIN / "prefect"), "work-pool", "create", "assay", "--type", "process")
    r = subprocess.run([str(BIN / "prefect"), "--no-prompt", "deploy", "--all"], cwd=repo, env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    names = deployment_names(env)
    assert {"assay-discovery/discovery", "assay-area/area", "assay-rerun-areas/rerun-areas",
            "assay-maintenance/maintenance"} <= set(names)

    worker_log = open(root / "worker.log", "w")
    worker = subprocess.Popen([str(BIN / "prefect"), "worker", "start", "--pool", "assay"], cwd=repo, env=env,
                              stdout=worker_log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        done = trigger(env, "assay-discovery/discovery")
        assert done["state"] == "COMPLETED", (done, (root / "worker.log").read_text()[-3000:])
    finally:
        stop(worker)


def deployment_runs(env, deployment: str) -> list[dict]:
    """The flow runs of a deployment (by its name): their state type and whether the scheduler made them."""
    runs = api_post(env, "/flow_runs/filter", {"deployments": {"name": {"any_": [deployment]}}})
    return [{"state": r["state"]["type"] if r.get("state") else None, "auto": r["auto_scheduled"]} for r in runs]


def deployment_limits(env, name: str) -> dict:
    """A deployment's concurrency limit, its collision strategy and its cron schedules, as the server has them."""
    d = api_get(env, f"/deployments/name/{name}")
    gcl, opts = d.get("global_concurrency_limit"), d.get("concurrency_options")
    return {"limit": gcl["limit"] if gcl else d.get("concurrency_limit"),
            "strategy": opts["collision_strategy"] if opts else None,
            "crons": [s["schedule"].get("cron") for s in d.get("schedules") or []]}


def test_a_project_schedule_creates_flow_runs_that_run(server):
    """The scheduler service really schedules a project's cron (it created none with SQLAlchemy 2.1), and the
    served deployment runs one of those scheduled runs to completion. The cron has a seconds field (croniter's
    sixth: every 15 s), which Prefect's Cron schedule and the project's check accept: the first run is due within
    15 s, where `* * * * *` waited for the next whole minute (0-60 s by the clock)."""
    env, root = server
    db = small_warehouse(root / "w3.duckdb")
    (root / "p3.yaml").write_text(f"id: cronjob\npack: ecommerce\nanalyst: statistical\nmax_steps: 6\n"
                                  f"schedule: '* * * * * */15'\nwarehouse:\n  kind: duckdb\n  settings:\n    path: {db}\n")
    sh(env, str(BIN / "assay"), "project", "apply", "-f", str(root / "p3.yaml"))
    serve_log = open(root / "serve-cron.log", "w")
    serving = subprocess.Popen([str(BIN / "assay"), "serve"], env=env, stdout=serve_log, stderr=subprocess.STDOUT,
                               start_new_session=True)
    try:
        runs: list[dict] = []
        deadline = time.time() + 200
        while time.time() < deadline:
            time.sleep(1)
            assert serving.poll() is None, (root / "serve-cron.log").read_text()[-2000:]
            runs = deployment_runs(env, "discover-cronjob")
            if any(r["state"] == "COMPLETED" for r in runs):
                break
        assert any(r["auto"] for r in runs), f"the scheduler created no run: {runs}"
        # one discovery of a project at a time: the next scheduled or manual run queues
        dep = deployment_limits(env, "assay-discovery/discover-cronjob")
        assert dep == {"limit": 1, "strategy": "ENQUEUE", "crons": ["* * * * * */15"]}, dep  # a cron schedule
        assert any(r["state"] == "COMPLETED" and r["auto"] for r in runs), (runs, (root / "serve-cron.log").read_text()[-3000:])
    finally:
        stop(serving)
