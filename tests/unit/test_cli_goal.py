"""First contact: `assay discover --warehouse FILE` with or without --goal, one project per warehouse."""

from __future__ import annotations

import duckdb
from typer.testing import CliRunner

from assay.cli import _goal_project, _store, app


def test_one_project_per_warehouse_whatever_the_goal(tmp_path):
    db = tmp_path / "w.duckdb"
    duckdb.connect(str(db)).close()
    a = _goal_project(None, str(db), "which carriers drive delays?")
    b = _goal_project(None, str(db), "what changed over the year?")
    assert a == b
    p = _store().get_project(a)
    assert p.goal == "what changed over the year?" and p.pack == "goal"
    other = tmp_path / "x.duckdb"
    duckdb.connect(str(other)).close()
    assert _goal_project(None, str(other), "which carriers drive delays?") != a


def test_no_goal_runs_the_generic_pack(tmp_path):
    db = tmp_path / "w.duckdb"
    duckdb.connect(str(db)).close()
    pid = _goal_project(None, str(db), None)
    p = _store().get_project(pid)
    assert p.pack == "generic" and p.goal is None and p.state.value == "ready"
    assert _goal_project(None, str(db), "delays?") == pid  # a goal later reuses the same project


def test_missing_warehouse_file_is_one_line():
    r = CliRunner().invoke(app, ["discover", "--warehouse", "/nonexistent/w.duckdb"], catch_exceptions=False)
    assert r.exit_code != 0 and "Traceback" not in r.output
    assert r.output.strip().startswith("error:") and "no such warehouse file" in r.output
