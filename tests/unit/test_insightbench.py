"""InsightBench scoring and task loading, against hand-computed examples."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from assay import insightbench as ib
from assay.errors import UserError

TASKS = Path(__file__).resolve().parents[1] / "data" / "insightbench"


def test_rouge1_hand_computed():
    # 3 shared unigrams of 4 predicted and 7 reference tokens: P 3/4, R 3/7, F = 2PR/(P+R) = 6/11
    assert ib.rouge1("hardware incidents are higher", "hardware incidents are far more frequent here") == \
        pytest.approx(6 / 11)
    assert ib.rouge1("", "anything") == 0.0
    # stemming: "incidents"/"incident", "increasing"/"increase"
    assert ib.rouge1("incident increase", "incidents increasing") == pytest.approx(1.0)


def onehot(vocab):
    def embed(texts):
        v = np.array([[1.0 if w in t.lower() else 0.0 for w in vocab] for t in texts])
        return v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)
    return embed


def test_insight_level_score_takes_the_best_prediction_per_truth():
    truths = ["hardware incidents are higher", "printer errors"]
    preds = ["hardware incidents are higher", "network is slow", "unrelated words"]
    s = ib.score_task(1, preds, truths, onehot(["hardware", "printer", "network", "slow"]))
    # truth 1: exact match (1.0); truth 2: no shared unigram with any prediction (0.0)
    assert s.rouge1 == pytest.approx(0.5)
    # cosine: truth 1 -> pred 1 = 1.0; truth 2 ("printer") -> 0 with every prediction
    assert s.cosine == pytest.approx(0.5)
    # precision: pred 1 matches a truth (cosine 1.0); preds 2 and 3 match none
    assert s.precision == pytest.approx(1 / 3)
    assert s.best[0] == preds[0] and (s.predictions, s.truths) == (3, 2)


def test_no_predictions_scores_zero():
    s = ib.score_task(2, [], ["a truth"], onehot(["truth"]))
    assert (s.rouge1, s.cosine, s.precision) == (0.0, 0.0, 0.0)


@pytest.mark.parametrize("spec,ids", [("1-3", [1, 2, 3]), ("1,4,9-10", [1, 4, 9, 10]), ("2, 2,1", [2, 1])])
def test_task_ranges(spec, ids):
    assert ib.parse_task_ids(spec) == ids


@pytest.mark.parametrize("spec", ["a", "3-1", "", "1-"])
def test_bad_task_ranges_are_one_line_errors(spec):
    with pytest.raises(UserError, match="--tasks"):
        ib.parse_task_ids(spec)


def test_table_names_from_the_description():
    assert ib.table_name({"dataset_description": "500 entries simulating ServiceNow incidents table"}) == "incidents"
    two = {"dataset_description": "two key tables: the `sys_user` table and the `fm_expense_line`."}
    assert ib.table_name(two, second_table=True) == "expenses"
    assert ib.table_name({"dataset_description": "the `sys_user` table."}) == "users"
    assert ib.table_name({}) == "data"


def test_empty_truth_strings_fall_back_to_the_insight_list():
    task = ib.load_task(TASKS, 1)
    assert task.truth[2] == "Hardware incidents make up most of the incidents"
    assert len(task.truth) == 4 and task.tables == {"incidents": TASKS / "csvs" / "flag-1.csv"}
    two = ib.load_task(TASKS, 2)
    assert set(two.tables) == {"expenses", "users"}


def test_bad_folder_and_bad_task(tmp_path):
    with pytest.raises(UserError, match="not an InsightBench folder"):
        ib.load_tasks(tmp_path, [1])
    (tmp_path / "flags").mkdir()
    (tmp_path / "csvs").mkdir()
    with pytest.raises(UserError, match="task 1 needs"):
        ib.load_tasks(tmp_path, [1])
    (tmp_path / "csvs" / "flag-1.csv").write_text("a\n1\n")
    (tmp_path / "flags" / "flag-1.json").write_text(json.dumps({"metadata": {}}))
    with pytest.raises(UserError, match="not an InsightBench task"):
        ib.load_tasks(tmp_path, [1])


def _no_truth_task(root: Path, n: int) -> None:
    (root / "flags").mkdir(exist_ok=True)
    (root / "csvs").mkdir(exist_ok=True)
    (root / "csvs" / f"flag-{n}.csv").write_text("category,count\nHardware,3\n")
    (root / "flags" / f"flag-{n}.json").write_text(json.dumps(
        {"metadata": {"goal": "find trends", "dataset_description": "ServiceNow incidents table"},
         "insights": ["", ""], "insight_list": []}))


def test_a_task_without_ground_truth_loads_and_is_not_scorable(tmp_path):
    _no_truth_task(tmp_path, 7)
    task = ib.load_task(tmp_path, 7)
    assert task.truth == [] and ib.skip_reason(task) == "no ground-truth insights in its flags file"
    assert ib.scorable([ib.load_task(TASKS, 1), task]) == [ib.load_task(TASKS, 1)]


def test_evaluation_with_only_tasks_without_truth_is_one_line_and_runs_nothing(tmp_path):
    _no_truth_task(tmp_path, 7)
    _no_truth_task(tmp_path, 8)
    with pytest.raises(UserError, match=r"^no task to score: task\(s\) 7, 8 have no ground-truth insights$"):
        ib.evaluate(tmp_path, [7, 8], settings=None, store=None, embed=None)


def test_the_report_s_context_notes_are_scored_with_its_insights():
    """A non-difference that answers the goal ("the increase in TTR is uniform across categories", a ground-truth
    insight of task 2) is a context note of the report (findings.split_context), not an insight; the benchmark
    scores what the report states, so both are predictions. The contract asks for such answers when the goal asks."""
    from assay.analysis.discipline import INSIGHTS_CONTRACT
    from assay.insightbench import reported
    from assay.models import DiscoveryResult, Insight

    i = Insight(id="goal-1", area="goal", name="TTR rises over time", description="TTR rises")
    n = Insight(id="goal-2", area="goal", name="The TTR increase is uniform across categories", description="uniform",
                context_reason="no difference")
    r = DiscoveryResult(run_id="r", project_id="p", domain="goal", insights=[i], context_notes=[n])
    assert [x.id for x in reported(r)] == ["goal-1", "goal-2"]
    assert "that a non-difference answers" in INSIGHTS_CONTRACT and "the message, as one short plain sentence" in INSIGHTS_CONTRACT and "no figures" in INSIGHTS_CONTRACT
