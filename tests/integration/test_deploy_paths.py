"""Both deploy paths on one real `prefect server`: `assay deploy --pool` puts each project's scheduled discovery
(cron in the project's time zone), rerun-areas and maintenance on a work pool; `assay serve` on the same server
leaves those alone and, when it stops, pauses only what it served (it paused the pool's maintenance before)."""

from __future__ import annotations

import os
import signal
import subprocess
import time

import httpx
import pytest

from tests.helpers import small_warehouse
from tests.integration.test_prefect_server import BIN, server, sh  # noqa: F401, F811  (server: the fixture)

pytestmark = pytest.mark.prefect_server

def state(env, name):
    """A deployment as the server has it (read over its REST API: no Prefect import per poll)."""
    d = httpx.get(f"{env['PREFECT_API_URL']}/deployments/name/{name}", timeout=30).json()
    return {"pool": d.get("work_pool_name"), "paused": d.get("paused"),
            "schedules": [{"cron": s["schedule"].get("cron"), "tz": s["schedule"].get("timezone"), "active": s["active"]}
                          for s in d.get("schedules") or []]}


def polled(env, name) -> bool:
    """Whether a runner or worker has asked the server for this deployment's scheduled runs."""
    return httpx.get(f"{env['PREFECT_API_URL']}/deployments/name/{name}", timeout=30).json().get("last_polled") is not None


def names(env):
    api = env["PREFECT_API_URL"]
    # deployments first: a deployment's flow exists before it does, so the flows read next name them all
    deployments = httpx.post(f"{api}/deployments/filter", json={}, timeout=30).json()
    flows = {f["id"]: f["name"] for f in httpx.post(f"{api}/flows/filter", json={}, timeout=30).json()}
    return [f"{flows[d['flow_id']]}/{d['name']}" for d in deployments]


def _project(env, root, pid, extra=""):
    db = small_warehouse(root / f"{pid}.duckdb")
    (root / f"{pid}.yaml").write_text(f"id: {pid}\npack: ecommerce\nanalyst: statistical\nmax_steps: 6\n{extra}"
                                      f"warehouse:\n  kind: duckdb\n  settings:\n    path: {db}\n")
    sh(env, str(BIN / "assay"), "project", "apply", "-f", str(root / f"{pid}.yaml"))


def test_pool_and_serve_share_names_and_serve_never_pauses_the_pool(server):  # noqa: F811
    env, root = server
    _project(env, root, "berlin", "schedule: '0 6 * * 1'\ntimezone: Europe/Berlin\n")
    r = subprocess.run([str(BIN / "assay"), "deploy", "--pool", "nopool"], env=env, capture_output=True, text=True)
    assert r.returncode != 0 and "prefect work-pool create nopool --type process" in r.stderr, r.stderr
    sh(env, str(BIN / "prefect"), "work-pool", "create", "assay", "--type", "process")
    out = sh(env, str(BIN / "assay"), "deploy", "--pool", "assay")
    assert "assay-discovery/discover-berlin on work pool assay" in out, out
    disc = state(env, "assay-discovery/discover-berlin")
    assert disc["pool"] == "assay"
    assert disc["schedules"] == [{"cron": "0 6 * * 1", "tz": "Europe/Berlin", "active": True}]
    assert state(env, "assay-maintenance/maintenance")["pool"] == "assay"

    # a second project, not on the pool yet: `assay serve` serves that one and leaves the pool's alone
    _project(env, root, "laptop", "schedule: '30 7 * * *'\n")
    log_path = root / "serve-paths.log"
    # Ctrl-C stops it only where SIGINT is not ignored: a pytest started in the background of a shell without job
    # control (`cmd &`, nohup, some CI runners) ignores it, and so would `assay serve`, inheriting that
    serving = subprocess.Popen([str(BIN / "assay"), "serve"], env=env, stdout=open(log_path, "w"),
                               stderr=subprocess.STDOUT, start_new_session=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.time() + 240
        served: list[str] = []
        while time.time() < deadline and "assay-discovery/discover-laptop" not in served:
            time.sleep(2)
            assert serving.poll() is None, log_path.read_text()[-2000:]
            served = names(env)
        assert "assay-discovery/discover-laptop" in served, log_path.read_text()[-2000:]
        # stop it once its runner runs (it registers the deployments before it starts polling; a stop before
        # that pauses nothing, whatever it served): once it has asked the server for the served deployment's
        # scheduled runs (the server notes when, `last_polled`), it is inside the runner, whose exit pauses
        # what it served. Before: a fixed 10 s after the "being served" line.
        while time.time() < deadline and "deployments on the Prefect server at" not in log_path.read_text():
            time.sleep(1)
        assert "deployments on the Prefect server at" in log_path.read_text(), log_path.read_text()[-2000:]
        while time.time() < deadline and not polled(env, "assay-discovery/discover-laptop"):
            time.sleep(0.5)
        assert polled(env, "assay-discovery/discover-laptop"), log_path.read_text()[-2000:]
    finally:
        os.killpg(serving.pid, signal.SIGINT)  # Ctrl-C, as a person stops it
        try:
            serving.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(serving.pid, signal.SIGKILL)
    log = log_path.read_text()
    # what it serves, each with its schedule, how to run one, and on Ctrl-C what became of them (it printed
    # Prefect's link to a UI the local server has not, and nothing at Ctrl-C: a new user, session 26)
    assert "assay-discovery/discover-laptop (30 7 * * *)" in log and "Ctrl-C stops and pauses them" in log, log[-2000:]
    assert "/deployments" not in log and "stopped serving;" in log and "deployments paused" in log, log[-2000:]
    for name in ("assay-maintenance/maintenance", "assay-discovery/discover-berlin", "assay-rerun-areas/rerun-areas",
                 "assay-area/area"):
        s = state(env, name)
        assert s["pool"] == "assay" and not s["paused"], (name, s)
    assert "assay-maintenance/maintenance: runs on work pool 'assay'; not served here" in log, log[-2000:]
    assert state(env, "assay-maintenance/maintenance")["schedules"][0]["active"] is True
    served = state(env, "assay-discovery/discover-laptop")
    assert served["pool"] is None and served["paused"] is True  # what it served stops with it
    assert served["schedules"][0]["cron"] == "30 7 * * *" and served["schedules"][0]["tz"] == "UTC"
