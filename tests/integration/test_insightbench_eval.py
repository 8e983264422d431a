"""`assay eval insightbench` end to end on the two tiny tasks shipped under tests/data."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from assay.cli import app
from assay.insightbench import CSV_COLUMNS
from assay.settings import load_settings
from assay.store import open_store
from tests.seeded_vectors import seeded_vectors

TASKS = Path(__file__).resolve().parents[1] / "data" / "insightbench"


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory):
    """One evaluation of the two shipped tasks and of a third with no ground truth (the public benchmark has
    such a task), shared by the tests below: each task's discovery is the expensive part. (root, result, csv)"""
    tmp = tmp_path_factory.mktemp("insightbench")
    root = tmp / "bench"
    shutil.copytree(TASKS, root)
    shutil.copy(TASKS / "csvs" / "flag-1.csv", root / "csvs" / "flag-3.csv")
    flag = json.loads((TASKS / "flags" / "flag-1.json").read_text())
    flag["insights"], flag["insight_list"] = [], []
    (root / "flags" / "flag-3.json").write_text(json.dumps(flag))
    out_csv = tmp / "scores.csv"
    with seeded_vectors(TASKS):  # the discoveries' and the scoring's vectors (tests/seeded_vectors.py)
        r = CliRunner().invoke(app, ["eval", "insightbench", str(root), "--tasks", "1-3", "--csv", str(out_csv)],
                               catch_exceptions=False)
    return root, r, out_csv


def scored(output: str) -> dict[str, str]:
    return dict(x.split(": ", 1) for x in output.splitlines() if ": " in x and not x.startswith("task "))


def test_eval_insightbench_finds_the_planted_insights(evaluated):
    root, r, out_csv = evaluated
    assert r.exit_code == 0, r.output
    lines = scored(r.output)
    assert lines["tasks"] == "2"
    for k in ("rouge1", "rouge1_description", "cosine", "precision", "seconds_per_task"):
        assert float(lines[k]) >= 0
    rows = list(csv.DictReader(out_csv.open()))
    assert [r["task"] for r in rows] == ["1", "2"] and list(rows[0]) == CSV_COLUMNS
    assert all(0 <= float(r["rouge1"]) <= 1 and 0 <= float(r["precision"]) <= 1 for r in rows)

    store = open_store(load_settings())
    names = {pid: [i.name for i in store.get_result(store.list_runs(pid, limit=1)[0].id).insights]
             for pid in ("insightbench-1", "insightbench-2")}
    # the planted facts, in the words the ground truth uses
    assert "The number of Hardware incidents is significantly higher than other category values" in names[
        "insightbench-1"]
    assert ("Fred Luddy has a significantly higher average time to resolution than other assigned to values"
            in names["insightbench-1"])
    assert "There is a positive correlation between amount and processing time" in names["insightbench-2"]
    # one finding per segment: HR's amounts, or the processing time they drive
    assert any(n.startswith("HR has a significantly higher average") for n in names["insightbench-2"])
    # the other departments are not "lower": HR's amounts pull the pooled rest up
    assert not any("significantly lower average amount" in n for n in names["insightbench-2"])
    assert float(rows[0]["rouge1"]) > 0.5 and float(rows[1]["rouge1"]) > 0.5

    # a second evaluation replaces the first attempt instead of treating it as history
    r = CliRunner().invoke(app, ["eval", "insightbench", str(root), "--tasks", "2",
                                 "--csv", str(out_csv.with_name("again.csv"))],
                           catch_exceptions=False)
    assert r.exit_code == 0
    assert len(store.list_runs("insightbench-2", limit=10)) == 1


def test_eval_insightbench_bad_folder_is_one_line(tmp_path):
    r = CliRunner().invoke(app, ["eval", "insightbench", str(tmp_path)])
    assert r.exit_code == 2 and "not an InsightBench folder" in r.output


def test_a_task_without_ground_truth_is_skipped_and_the_rest_scored(evaluated):
    """The public benchmark has a task with no ground truth: it is skipped with a line, not fatal."""
    _, r, out_csv = evaluated
    assert r.exit_code == 0, r.output
    assert "task   3: skipped (no ground-truth insights in its flags file)" in r.output
    lines = scored(r.output)
    assert lines["tasks"] == "2" and lines["tasks_skipped"] == "1"
    assert [row["task"] for row in csv.DictReader(out_csv.open())] == ["1", "2"]
    assert open_store(load_settings()).list_runs("insightbench-3", limit=5) == []  # not run at all
