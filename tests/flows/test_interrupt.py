"""Ctrl-C during `assay discover` (a new user, session 24): the exploration went on from step 5 to 40 in the flow's
thread while Prefect's teardown printed tracebacks for seconds, and the run ended Crashed with no word on how to go
on. Now the run is cancelled where it stands, one line says so and how to go on, and the process ends at once."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time

import pytest

from assay.demo import generate
from assay.models import Project, WarehouseConfig
from assay.settings import load_settings
from assay.store import open_store


@pytest.mark.timeout(600)
def test_ctrl_c_cancels_the_run_in_one_line_and_ends_the_process(tmp_path):
    from prefect.settings import PREFECT_API_URL

    db, _ = generate("ecommerce", tmp_path, scale=0.3)
    settings = load_settings()
    open_store(settings).save_project(Project(id="interrupted", pack="ecommerce", analyst="statistical",
                                              max_steps=60,
                                              warehouse=WarehouseConfig(kind="duckdb", settings={"path": str(db)})))
    env = dict(os.environ, PREFECT_API_URL=PREFECT_API_URL.value(), ASSAY_PREFECT_SERVER="ephemeral")
    logs = settings.home / "logs"
    before = set(logs.glob("*.log")) if logs.is_dir() else set()
    p = subprocess.Popen([sys.executable, "-c", "from assay.cli import main; main()", "discover", "interrupted"],
                         env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         start_new_session=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    # the run's log is named by its id once its flow run exists: the exploration is under way soon after
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and p.poll() is None:
        if {x for x in logs.glob("*.log") if re.fullmatch(r"[0-9a-f]{32}\.log", x.name)} - before:
            break
        time.sleep(0.1)
    time.sleep(3.0)  # its context and schema take about a second
    assert p.poll() is None, "the run ended before it could be interrupted"
    t0 = time.monotonic()
    os.killpg(p.pid, signal.SIGINT)
    out, _ = p.communicate(timeout=60)
    took = time.monotonic() - t0
    assert p.returncode == 130, out
    assert took < 10, (took, out)
    assert "Traceback" not in out and "RuntimeError" not in out, out
    (line,) = [x for x in out.splitlines() if x.startswith("interrupted:")]
    assert re.match(r"interrupted: run [0-9a-f]{8} cancelled during \w+ \(\d+/60 steps\); ", line), line
    run = open_store(load_settings()).list_runs("interrupted", 1)[0]
    assert run.status.value == "cancelled" and run.error.startswith("interrupted (Ctrl-C) during"), run
    assert line.startswith(f"interrupted: run {run.id[:8]} cancelled during ")
    # the flow run on the server says so too
    import asyncio

    from prefect import get_client

    async def read():
        async with get_client() as c:
            return (await c.read_flow_run(run.flow_run_id)).state

    assert asyncio.run(read()).is_cancelled()
    steps = run.steps_done
    time.sleep(1.5)  # nothing goes on exploring after the process ended
    assert open_store(load_settings()).get_run(run.id).steps_done == steps
