"""The command ends without the interpreter's teardown (``assay.cli.exit_now``), and loses nothing by it: its exit
status, everything it printed, the threads Python waits for and every atexit handler (issue #20 item 8)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

SCRIPT = """
import atexit, sys, threading, time
from pathlib import Path
out = Path(sys.argv[1])
def late():
    time.sleep(0.5)
    (out / "thread").write_text("joined")
threading.Thread(target=late).start()  # not a daemon: the interpreter waits for it, so must the command
atexit.register(lambda: (out / "atexit").write_text("ran"))
sys.argv = ["assay"] + sys.argv[2:]
from assay.cli import main
main()
"""


def run(tmp_path, *args, fast="1"):
    env = dict(os.environ, ASSAY_FAST_EXIT=fast, ASSAY_HOME=str(tmp_path / "home"), COLUMNS="200")
    return subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path), *args], env=env, capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize("fast", ["1", "0"])
def test_a_command_that_succeeds_prints_everything_and_runs_its_exit_work(tmp_path, fast):
    r = run(tmp_path, "packs", fast=fast)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "ecommerce" in r.stdout and "gaming" in r.stdout
    assert (tmp_path / "thread").read_text() == "joined"
    assert (tmp_path / "atexit").read_text() == "ran"


@pytest.mark.parametrize("fast", ["1", "0"])
def test_a_command_that_fails_keeps_its_status_and_its_one_line(tmp_path, fast):
    r = run(tmp_path, "discover", "no-such-project", fast=fast)
    assert r.returncode == 2, (r.returncode, r.stderr[-2000:])
    assert "no-such-project" in r.stderr and "Traceback" not in r.stderr
    assert (tmp_path / "atexit").read_text() == "ran"


def test_usage_errors_keep_click_status(tmp_path):
    r = run(tmp_path, "no-such-command")
    assert r.returncode == 2 and "No such command" in r.stderr
