"""A run whose process is gone is crashed (not running for ever), and a run's state reads as Prefect's."""

from __future__ import annotations

import datetime as dt
import os
import socket
import subprocess
import time

from assay.liveness import STALE_AFTER, Heartbeat, gone_because, heartbeat_s, reap_gone_runs, state_name
from assay.models import DiscoveryRun, RunStatus, RunType, utcnow
from assay.settings import load_settings
from assay.store import open_store


def dead_pid() -> int:
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


def test_heartbeat_records_host_pid_and_beats():
    store = open_store(load_settings())
    store.create_run(DiscoveryRun(id="beat1", project_id="p", status=RunStatus.running))
    with Heartbeat(store, "beat1", every_s=0.2):
        first = store.get_run("beat1")
        assert first.host == socket.gethostname() and first.pid == os.getpid() and first.heartbeat_s == 0.2
        time.sleep(1.3)  # stored times have whole seconds
        assert store.get_run("beat1").heartbeat_at > first.heartbeat_at
        assert gone_because(store.get_run("beat1")) is None  # this process is alive
    store.update_run("beat1", status=RunStatus.completed)  # as the flow would: no running run left behind


def test_a_run_whose_process_died_on_this_host_is_gone_at_once():
    run = DiscoveryRun(id="x", project_id="p", status=RunStatus.running, host=socket.gethostname(),
                       pid=dead_pid(), heartbeat_at=utcnow())
    assert "stopped without ending it" in gone_because(run)


def test_a_run_on_another_host_is_gone_when_its_heartbeat_is_stale():
    now = utcnow()
    fresh = DiscoveryRun(id="x", project_id="p", status=RunStatus.running, host="elsewhere", pid=1,
                         heartbeat_at=now - dt.timedelta(seconds=heartbeat_s()))
    assert gone_because(fresh, now) is None
    stale = fresh.model_copy(update={"heartbeat_at": now - dt.timedelta(seconds=(STALE_AFTER + 1) * heartbeat_s())})
    assert "no heartbeat from elsewhere" in gone_because(stale, now)
    # silence is judged by the beat the run's own process keeps, not the reader's
    slow = fresh.model_copy(update={"heartbeat_s": 60.0, "heartbeat_at": now - dt.timedelta(seconds=100)})
    assert gone_because(slow, now) is None
    assert gone_because(slow.model_copy(update={"heartbeat_at": now - dt.timedelta(seconds=300)}), now)
    # finished runs, and runs that never wrote a heartbeat, are not judged
    assert gone_because(stale.model_copy(update={"status": RunStatus.completed}), now) is None
    assert gone_because(stale.model_copy(update={"heartbeat_at": None}), now) is None


def test_reap_marks_gone_runs_crashed_and_leaves_live_ones():
    store = open_store(load_settings())
    store.create_run(DiscoveryRun(id="reap-dead", project_id="p", status=RunStatus.running,
                                  host=socket.gethostname(), pid=dead_pid(), heartbeat_at=utcnow()))
    store.create_run(DiscoveryRun(id="reap-live", project_id="p", status=RunStatus.running,
                                  host=socket.gethostname(), pid=os.getpid(), heartbeat_at=utcnow()))
    reaped = [r.id for r in reap_gone_runs(store)]
    assert "reap-dead" in reaped and "reap-live" not in reaped
    dead = store.get_run("reap-dead")
    assert dead.status == RunStatus.crashed and dead.finished_at is not None
    assert "assay rerun reap-dea" in dead.error
    assert "reap-dead" not in store.active_run_ids() and "reap-live" in store.active_run_ids()
    assert "reap-dead" in store.crashed_run_ids()
    store.update_run("reap-live", status=RunStatus.completed)


def test_state_names_mirror_prefect():
    run = DiscoveryRun(id="x", project_id="p", status=RunStatus.completed, run_type=RunType.full)
    assert state_name(run) == "Completed"
    assert state_name(run.model_copy(update={"run_type": RunType.partial})) == "Partial"
    assert state_name(run.model_copy(update={"status": RunStatus.failed, "run_type": RunType.failed})) == "Failed"
    assert state_name(run.model_copy(update={"status": RunStatus.crashed})) == "Crashed"
    assert state_name(run.model_copy(update={"status": RunStatus.running})) == "Running"


def test_a_run_is_found_by_its_flow_run_id_as_prefect_shows_it():
    store = open_store(load_settings())
    rid = "0f1e2d3c4b5a69788796a5b4c3d2e1f0"
    store.create_run(DiscoveryRun(id=rid, project_id="p", status=RunStatus.completed))
    dashed = f"{rid[:8]}-{rid[8:12]}-{rid[12:16]}-{rid[16:20]}-{rid[20:]}"
    assert store.get_run(dashed).id == rid
    assert store.resolve_run_id(dashed[:13]) == rid


def test_assay_runs_shows_prefects_state_names_and_watch_ends_when_the_process_is_gone(monkeypatch):
    """`assay runs --watch` waited for ever on a run whose process was killed; now it marks it crashed and ends."""
    import json

    from typer.testing import CliRunner

    from assay.cli import app

    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    store = open_store(load_settings())
    store.create_run(DiscoveryRun(id="cli-partial-0001", project_id="runs-cli", status=RunStatus.completed,
                                  run_type=RunType.partial, flow_run_id="f1"))
    store.create_run(DiscoveryRun(id="cli-killed-0002", project_id="runs-cli", status=RunStatus.running,
                                  host=socket.gethostname(), pid=dead_pid(), heartbeat_at=utcnow(), flow_run_id="f2"))
    r = CliRunner().invoke(app, ["runs", "--project", "runs-cli", "--watch"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    assert "Partial" in r.output and "Crashed" in r.output
    # off a terminal, not squeezed into 80 columns (the error column had no room: session 24's new user)
    assert "error" in r.output and "crashed: its process" in r.output, r.output
    r = CliRunner().invoke(app, ["runs", "--project", "runs-cli", "--json"], catch_exceptions=False)
    rows = {x["run"]: x for x in map(json.loads, r.output.strip().splitlines())}
    assert rows["cli-partial-0001"]["state"] == "Partial" and rows["cli-killed-0002"]["state"] == "Crashed"
    assert rows["cli-killed-0002"]["flow_run"] == "f2" and "assay rerun cli-kill" in rows["cli-killed-0002"]["error"]


def test_ctrl_c_during_a_rerun_gives_the_run_back_its_saved_state(monkeypatch, tmp_path, capsys):
    """Session 24's review: Ctrl-C during `assay rerun` marked a finished run cancelled (and its discovery flow run
    too), and its hint suggested a rerun that had nothing left to do. A rerun never erases an area's analysis, so
    the run goes back to what its saved discovery says."""
    import pytest

    from assay import cli
    from assay.models import DiscoveryResult, Phase, RunType

    store = open_store(load_settings())
    store.create_run(DiscoveryRun(id="ctrlc-redo-1", project_id="runs-cli", status=RunStatus.completed,
                                  run_type=RunType.full))
    store.save_result(DiscoveryResult(run_id="ctrlc-redo-1", project_id="runs-cli", domain="ecommerce",
                                      run_type=RunType.full))
    store.update_run("ctrlc-redo-1", status=RunStatus.running, phase=Phase.analysis)  # as prepare_rerun does

    def exit_(code):
        raise SystemExit(code)
    monkeypatch.setattr(cli.os, "_exit", exit_)
    monkeypatch.setattr(cli.logging, "shutdown", lambda: None)  # the process would end: pytest's must not
    with pytest.raises(SystemExit) as e:
        cli._interrupted(store, "ctrlc-redo-1", tmp_path / "x.log", rerun=True)
    assert e.value.code == 130
    run = store.get_run("ctrlc-redo-1")
    assert run.status == RunStatus.completed and run.run_type == RunType.full and run.phase == Phase.done
    assert run.error is None
    assert "the rerun of run ctrlc-re stopped; its earlier analysis is kept" in " ".join(capsys.readouterr().err.split())
