"""Step picker (pure, search injected) and the renderer/estimator identity."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.analysis.picker import pick_steps
from assay.analysis.render import estimate_rendered_size, render_query_results
from assay.digest import build_compact_result
from assay.models import AnalysisArea, ExplorationStep, StepAction

AREA = AnalysisArea(id="churn", name="Churn", description="who leaves", keywords=["churn", "retention"])


def step(n, purpose="p", query="SELECT 1", rows=3, error=None):
    import pandas as pd

    return ExplorationStep(run_id="r", step=n, action=StepAction.query, purpose=purpose, query=query, row_count=rows,
                           error=error, digest=build_compact_result(pd.DataFrame({"x": range(rows)})))


def search_of(scores):
    return lambda text, k: sorted(scores.items(), key=lambda kv: -kv[1])[:k]


def test_vector_only_with_min_score():
    steps = [step(1), step(2), step(3)]
    p = pick_steps(AREA, steps, search_of({1: 0.8, 2: 0.31, 3: 0.1}))
    assert [x.step for x in p.picked] == [1, 2]
    assert [(d.step, d.reason) for d in p.dropped] == [(3, "below_min_score")]


def test_keyword_lifts_to_floor():
    steps = [step(1, purpose="monthly churn by channel"), step(2)]
    p = pick_steps(AREA, steps, search_of({1: 0.1, 2: 0.4}))
    assert [(x.step, x.score, x.source) for x in p.picked] == [(1, 0.55, "keyword"), (2, 0.4, "vector")]
    p2 = pick_steps(AREA, steps, search_of({1: 0.9, 2: 0.4}))
    assert p2.picked[0].score == 0.9 and p2.picked[0].source == "vector+keyword"


def test_ties_break_by_step_number():
    steps = [step(3), step(1), step(2)]
    p = pick_steps(AREA, steps, search_of({1: 0.5, 2: 0.5, 3: 0.5}))
    assert [x.step for x in p.picked] == [1, 2, 3]


def test_top_k():
    steps = [step(i) for i in range(1, 31)]
    p = pick_steps(AREA, steps, search_of({i: 0.9 - i / 100 for i in range(1, 31)}))
    assert len(p.picked) == 24
    assert {d.reason for d in p.dropped} == {"outside_top_k"}


def test_budget_trim_drops_lowest_scores():
    steps = [step(i, rows=200) for i in range(1, 6)]
    one = estimate_rendered_size([steps[0]])
    budget_tokens = (one * 2 + one // 2) // 4  # room for two steps
    p = pick_steps(AREA, steps, search_of({i: 1 - i / 10 for i in range(1, 6)}), budget_tokens=budget_tokens)
    assert [x.step for x in p.picked] == [1, 2]
    assert [d.step for d in p.dropped if d.reason == "over_budget"] == [3, 4, 5]
    assert p.chars <= budget_tokens * 4


def test_failed_steps_are_never_picked():
    steps = [step(1, error="boom"), step(2)]
    p = pick_steps(AREA, steps, search_of({1: 0.99, 2: 0.5}))
    assert [x.step for x in p.picked] == [2]


def test_search_errors_propagate():
    def boom(text, k):
        raise RuntimeError("qdrant down")

    with pytest.raises(RuntimeError, match="qdrant down"):
        pick_steps(AREA, [step(1)], boom)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 40), st.text(max_size=80)), max_size=12))
def test_estimator_equals_renderer(specs):
    steps = [step(i + 1, purpose=p, rows=r) for i, (r, p) in enumerate(specs)]
    assert estimate_rendered_size(steps) == len(render_query_results(steps))


def test_render_golden():
    from pathlib import Path

    import pandas as pd

    steps = [step(7, purpose="orders per channel", query="SELECT channel, count(*) FROM orders GROUP BY 1", rows=3),
             ExplorationStep(run_id="r", step=9, action=StepAction.query, purpose="revenue by month",
                             query="SELECT month, sum(amount) FROM orders GROUP BY 1", row_count=24,
                             digest=build_compact_result(pd.DataFrame({
                                 "month": pd.date_range("2025-01-01", periods=24, freq="MS"),
                                 "revenue": [1000.5 + 37 * i for i in range(24)]})))]
    out = render_query_results(steps)
    path = Path(__file__).parent.parent / "data" / "golden" / "query_results.json"
    if not path.exists():  # first run writes the golden file; review it, then commit it
        path.write_text(out + "\n")
    assert out == path.read_text().rstrip("\n")
