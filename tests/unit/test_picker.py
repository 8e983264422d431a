"""Step picker (pure, search injected) and the renderer/estimator identity."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.analysis.picker import pick_steps
from assay.analysis.render import estimate_rendered_size, render_query_results
from assay.digest import build_compact_result
from assay.models import AnalysisArea, ExplorationStep, StepAction
from tests.goldens import check_golden

AREA = AnalysisArea(id="churn", name="Churn", description="who leaves", keywords=["churn", "retention"])


def step(n, purpose="p", query="SELECT 1", rows=3, error=None):
    import pandas as pd

    return ExplorationStep(run_id="r", step=n, action=StepAction.query, purpose=purpose, query=query, row_count=rows,
                           error=error, digest=build_compact_result(pd.DataFrame({"x": range(rows)})))


def search_of(scores):
    return lambda text, k: sorted(scores.items(), key=lambda kv: -kv[1])[:k]


def test_vector_only_with_min_score_when_areas_share_the_run():
    steps = [step(1), step(2), step(3)]
    p = pick_steps(AREA, steps, search_of({1: 0.8, 2: 0.31, 3: 0.1}), areas_in_run=2)
    assert [x.step for x in p.picked] == [1, 2]
    assert [(d.step, d.reason) for d in p.dropped] == [(3, "below_min_score")]


def test_one_area_drops_nothing_that_fits():
    """One area: every step was explored for it, so only the budget may drop a step."""
    steps = [step(i) for i in range(1, 31)]
    p = pick_steps(AREA, steps, search_of({i: 0.5 - i / 100 for i in range(1, 31)}))
    assert len(p.picked) == 30 and p.dropped == []
    assert [x.step for x in p.picked] == list(range(1, 31))  # still ranked by relevance


def test_keyword_lift_keeps_relevance_order():
    steps = [step(1, purpose="monthly churn by channel"), step(2), step(3, purpose="churn of payers")]
    p = pick_steps(AREA, steps, search_of({1: 0.1, 2: 0.4, 3: 0.3}))
    assert [(x.step, x.source) for x in p.picked] == [(3, "vector+keyword"), (1, "keyword"), (2, "vector")]
    assert p.picked[0].score == pytest.approx(0.55 + 0.45 * 0.3)
    assert p.picked[1].score == pytest.approx(0.55 + 0.45 * 0.1)
    assert p.picked[2].score == pytest.approx(0.4)
    p2 = pick_steps(AREA, steps, search_of({1: 0.9, 2: 0.4}))
    assert p2.picked[0].step == 1 and p2.picked[0].score >= 0.9 and p2.picked[0].source == "vector+keyword"


def test_generic_keywords_do_not_flatten_the_ranking():
    """The real run: the generic area's keyword "count" matched ``count(*)`` in nearly every query, so
    every kept step scored exactly the 0.55 floor, and a month-by-location step without a keyword was
    dropped for a low vector score. Now SQL function names are no keyword hits, keyword hits keep their
    relevance order, one area drops nothing that fits, and when the budget forces a cut the least
    relevant to the area and the goal go first."""
    area = AnalysisArea(id="overview", name="Overview", description="The most important patterns in this data",
                        keywords=["count", "total", "trend", "segment", "average"])
    steps = [step(n, purpose=f"rows per {w}", query=f"SELECT {w}, count(*) AS n FROM visits GROUP BY 1", rows=12)
             for n, w in enumerate(["status", "weekday", "ward", "hour", "age_band"], start=1)]
    steps.append(step(6, purpose="worst location per month",
                      query="SELECT month, location, avg(wait_min) AS wait FROM visits GROUP BY 1, 2", rows=12))
    steps.append(step(7, purpose="monthly trend of visits",
                      query="SELECT month, count(*) AS visits FROM visits GROUP BY 1", rows=12))
    area_cos = {1: 0.21, 2: 0.18, 3: 0.24, 4: 0.15, 5: 0.12, 6: 0.11, 7: 0.2}
    goal_cos = {1: 0.10, 2: 0.12, 3: 0.35, 4: 0.08, 5: 0.05, 6: 0.62, 7: 0.3}
    goal = "Which location has the longest waits, and is it every month?"

    def search(text, k):
        return sorted((goal_cos if text == goal else area_cos).items(), key=lambda kv: -kv[1])[:k]

    p = pick_steps(area, steps, search)
    assert p.dropped == [] and {x.step for x in p.picked} == set(range(1, 8))
    assert [x.source for x in p.picked].count("keyword") == 1  # "trend" in step 7; count(*) is no hit
    assert len({x.score for x in p.picked}) == 7  # no ties at the floor
    p = pick_steps(area, steps, search, goal=goal)
    assert p.dropped == [] and [x.step for x in p.picked][:3] == [7, 6, 3]
    assert next(x for x in p.picked if x.step == 6).goal_score == 0.62
    # a budget with room for four steps: the three least relevant go, the decisive step stays
    budget = (estimate_rendered_size([steps[6], steps[5], steps[2], steps[0]]) + 3) // 4
    cut = pick_steps(area, steps, search, budget_tokens=budget, goal=goal)
    assert [x.step for x in cut.picked] == [7, 6, 3, 1]
    assert {d.step for d in cut.dropped} == {2, 4, 5} and {d.reason for d in cut.dropped} == {"over_budget"}
    # and the area log says why, with the parts of each score
    kept, gone = cut.log()
    assert kept[1] == {"step": 6, "score": 0.365, "area_score": 0.11, "goal_score": 0.62, "source": "vector",
                       "rank": 2, "why": "kept: rank 2 of 4, within the budget"}
    assert all(g["reason"] == "over_budget" and "budget" in g["why"] for g in gone)


def test_keywords_match_words_not_fragments():
    area = AnalysisArea(id="ads", name="Ads", description="ad revenue", keywords=["ad", "count", "last_seen"])
    miss = step(1, purpose="address book size", query="SELECT country, count(*) FROM accounts GROUP BY 1 "
                                                      "ORDER BY 2")
    assert pick_steps(area, [miss], search_of({1: 0.2})).picked[0].source == "vector"
    for hit in (step(2, purpose="ads per placement"), step(3, query="SELECT ad_id, sum(x) FROM t GROUP BY 1"),
                step(4, query="SELECT max(last_seen) FROM players"), step(5, purpose="the count of players")):
        assert pick_steps(area, [hit], search_of({hit.step: 0.2})).picked[0].source == "keyword", hit


def test_ties_break_by_step_number():
    steps = [step(3), step(1), step(2)]
    p = pick_steps(AREA, steps, search_of({1: 0.5, 2: 0.5, 3: 0.5}))
    assert [x.step for x in p.picked] == [1, 2, 3]


def test_top_k_when_areas_share_the_run():
    steps = [step(i) for i in range(1, 31)]
    p = pick_steps(AREA, steps, search_of({i: 0.9 - i / 100 for i in range(1, 31)}), areas_in_run=3)
    assert len(p.picked) == 24
    assert {d.reason for d in p.dropped} == {"outside_top_k"}


def test_goal_keeps_a_step_another_area_would_lose():
    steps = [step(1), step(2)]
    scores = {"goal": {1: 0.05, 2: 0.5}}

    def search(text, k):
        return sorted(scores.get(text, {1: 0.4, 2: 0.1}).items(), key=lambda kv: -kv[1])[:k]

    p = pick_steps(AREA, steps, search, areas_in_run=2)
    assert [d.step for d in p.dropped] == [2]
    p = pick_steps(AREA, steps, search, areas_in_run=2, goal="goal")
    assert p.dropped == [] and [x.step for x in p.picked] == [2, 1]  # (0.1+0.5)/2 > (0.4+0.05)/2


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
    import pandas as pd

    steps = [step(7, purpose="orders per channel", query="SELECT channel, count(*) FROM orders GROUP BY 1", rows=3),
             ExplorationStep(run_id="r", step=9, action=StepAction.query, purpose="revenue by month",
                             query="SELECT month, sum(amount) FROM orders GROUP BY 1", row_count=24,
                             digest=build_compact_result(pd.DataFrame({
                                 "month": pd.date_range("2025-01-01", periods=24, freq="MS"),
                                 "revenue": [1000.5 + 37 * i for i in range(24)]})))]
    out = render_query_results(steps)
    check_golden("analysis/query_results.txt", out, "two steps' digests as an area prompt renders them")


def test_steps_the_explorer_cited_are_lifted():
    """The explorer's summary names the steps its conclusion rests on; a budget cut takes others first."""
    from assay.analysis.picker import cited_steps

    summary = "Location B is worst in 11 of 12 months (step 4); volume is flat (steps 1 and 2)."
    assert cited_steps(summary) == {1, 2, 4}
    assert cited_steps("steps 3-5 and step #9; 12 steps in all") == {3, 4, 5, 9}
    steps = [step(i, rows=50) for i in range(1, 5)]
    scores = search_of({1: 0.3, 2: 0.25, 3: 0.5, 4: 0.05})
    budget = (estimate_rendered_size(steps[:3]) + 3) // 4
    p = pick_steps(AREA, steps, scores, budget_tokens=budget, cited=cited_steps(summary))
    assert [x.step for x in p.picked] == [1, 2, 4] and [d.step for d in p.dropped] == [3]
    assert [x.source for x in p.picked] == ["vector+cited", "cited", "cited"]
    shared = pick_steps(AREA, steps, scores, areas_in_run=2, cited={1, 4})
    assert [x.step for x in shared.picked] == [1, 3] and shared.picked[0].source == "vector+cited"
    assert [(d.step, d.reason) for d in shared.dropped] == [(2, "below_min_score"), (4, "below_min_score")]


def test_a_cited_step_is_lifted_only_for_an_area_or_goal_it_is_about():
    """The explorer's summary cites the steps its numbers come from (the done tool asks for them), nearly every step
    of a long exploration (rounds 14-16: every area of a five-area run read 24 of 24-30); in a run of several
    areas a citation ranks a step among those relevant to the area or the goal, it does not make an unrelated step
    relevant. A keyword hit or a cosine at the minimum score is enough; in a one-area run every cited step is lifted."""
    steps = [step(1, purpose="churn of players by week"), step(2), step(3), step(4), step(5)]
    scores = search_of({1: 0.05, 2: 0.35, 3: 0.5, 4: 0.1, 5: 0.2})
    everything = {1, 2, 3, 4, 5}
    shared = pick_steps(AREA, steps, scores, areas_in_run=5, cited=everything)
    assert [x.step for x in shared.picked] == [1, 3, 2]  # keyword, then the cosines >= 0.30, lifted
    assert {x.source for x in shared.picked} == {"keyword+cited", "vector+cited"}
    assert {d.step: d.reason for d in shared.dropped} == {4: "below_min_score", 5: "below_min_score"}
    assert "does not make a step relevant" in dict((e["step"], e["why"]) for e in shared.log()[1])[4]
    # the goal speaks for a step as the area does
    goal = lambda text, k: [(4, 0.6)] if text == "why do payers leave" else scores(text, k)  # noqa: E731
    with_goal = pick_steps(AREA, steps, goal, areas_in_run=5, cited=everything, goal="why do payers leave")
    assert 4 in {x.step for x in with_goal.picked} and "cited" in next(x for x in with_goal.picked if x.step == 4).source
    # one area: every step is for it; the cited ones rank above the rest whatever their cosine
    alone = pick_steps(AREA, steps, scores, cited={4})
    assert [x.step for x in alone.picked][:2] == [4, 1] and len(alone.picked) == 5
