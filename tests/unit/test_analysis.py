"""The analysis prompts: the goal as given (or none), the explorer's own summary, prompt defects a real
model tripped on."""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest

from assay.analysis.analyze import analyze_area, build_area_prompt
from assay.digest import build_compact_result
from assay.explore.prompt import render_exploration_prompt
from assay.llm.scripted import ReplayLLM
from assay.models import ExplorationStep, Insight, LLMConfig, Project, StepAction, WarehouseConfig
from assay.packs import list_packs, load_pack
from assay.recommend import recommend, recommendation_prompt

GOAL = "Which location has the longest waits, and is it the worst every month?"
SUMMARY = ("Location B is the worst: highest mean wait in 11 of 12 months (step 6), 41 min against 23 overall "
           "(step 2); its share of visits is flat (step 4), so it is not volume.")


def month_by_location(n=6) -> ExplorationStep:
    df = pd.DataFrame({"month": [f"2025-{m:02d}" for m in range(1, 13) for _ in "AB"],
                       "location": list("AB") * 12, "wait": [23.0 + (18 if loc == "B" else 0) for loc in "AB" * 12]})
    return ExplorationStep(run_id="r", step=n, action=StepAction.query, purpose="mean wait per month and location",
                           query="SELECT month, location, avg(wait_min) AS wait FROM visits GROUP BY 1, 2",
                           row_count=24, digest=build_compact_result(df))


def ins(i: str, area: str) -> Insight:
    return Insight(id=i, area=area, name="Location B waits 41 min", description="41 min against 23 overall")


def project(pack="generic", goal=None) -> Project:
    return Project(id="p", pack=pack, goal=goal, warehouse=WarehouseConfig(kind="duckdb", settings={"path": "x"}),
                   llm=LLMConfig(provider="none"))


def three_prompts(pack_name: str, goal: str) -> dict[str, str]:
    pack = load_pack(pack_name, "match3" if pack_name == "gaming" else None)
    area = pack.areas[0]
    return {
        "exploration": render_exploration_prompt(project(pack_name), pack, "- main.visits (3 cols)", 10, goal=goal),
        "analysis": build_area_prompt(pack, area, [month_by_location()], previous_context="", profile="",
                                      dataset="main", goal=goal),
        "recommendations": recommendation_prompt(pack, [ins(f"{area.id}-1", area.id)],
                                                 goal=goal),
    }


@pytest.mark.parametrize("pack_name", ["generic", "gaming"])
def test_no_goal_says_so_and_a_goal_reaches_every_prompt(pack_name):
    """With no goal the generic pack's own description ("Goal-driven discovery on any warehouse (used by
    --goal)") stood in as the goal of every prompt; the other packs never showed a goal at all."""
    pack = load_pack(pack_name, "match3" if pack_name == "gaming" else None)
    for kind, text in three_prompts(pack_name, "").items():
        assert "## Goal of this discovery\nNo goal given" in text, kind
        assert pack.description not in text, kind
    for kind, text in three_prompts(pack_name, GOAL).items():
        assert f"## Goal of this discovery\n{GOAL}" in text, kind
        assert "No goal given" not in text and text.count(GOAL) == 1, kind


def test_explorer_summary_reaches_the_area_prompt_labelled():
    """The explorer's ``done`` summary ties numbers across steps; it reaches the insight prompt as the
    explorer's own reading, after the results and before the claim discipline, to be checked."""
    llm = ReplayLLM({"analyze:": [json.dumps({"insights": [{"name": "Location B waits longest in 11 of 12 months",
                                                            "description": "41 min against 23", "severity": "high",
                                                            "source_steps": [6]}]})]})
    pack = load_pack("generic")
    out = analyze_area(llm, pack, pack.areas[0], [month_by_location()], goal=GOAL, explorer_summary=SUMMARY)
    prompt = llm.calls[0].system[0].text
    head = "## The explorer's own summary (to check, not to trust)"
    assert head in prompt and f"<explorer_summary>\n{SUMMARY}\n</explorer_summary>" in prompt
    assert prompt.index('"step":6') < prompt.index(head) < prompt.index("## Claim discipline")
    assert "not evidence" in prompt and "take every number from the results" in prompt
    assert out.insights[0].source_steps == [6]
    no_summary = build_area_prompt(pack, pack.areas[0], [month_by_location()], previous_context="", profile="",
                                   dataset="main", goal=GOAL)
    assert "explorer's own summary" not in no_summary


@pytest.mark.parametrize("pack_name", list_packs())
def test_recommendations_prompt_asks_only_for_its_own_fields(pack_name):
    """A real model was told to cite source_steps, which the recommendation format does not have, and not
    to repeat what "the previous context" recommended, a section no prompt has."""
    pack = load_pack(pack_name, "match3" if pack_name == "gaming" else None)
    pool = [ins("a-1", "a")]
    for previous in ("", "Previously found insights:\n- [2026-01-01] a: x (severity high)"):
        text = recommendation_prompt(pack, pool, previous_context=previous)
        assert "source_steps" not in text and "previous context" not in text.lower()
        assert "related_insight_ids" in text
        # round 17 (gaming): six recommendations ranked 1-6; the sixth was refused (priority is at most 5)
        assert "priority is 1 to 5 (1 = do first), not a rank" in text
        if previous:
            assert "What earlier discoveries found" in text and "Do not repeat a recommendation" in text
        else:
            assert "earlier discoveries" not in text


def test_recommend_answer_with_its_format_is_accepted():
    llm = ReplayLLM({"recommend": [json.dumps({"recommendations": [
        {"title": "Staff location B", "priority": 1, "related_insight_ids": ["goal-1"]}]})]})
    out = recommend(llm, load_pack("generic"), [ins("goal-1", "goal")], goal=GOAL)
    assert [r.related_insight_ids for r in out.recommendations] == [["goal-1"]]
    assert GOAL in llm.calls[0].system[0].text


_DOUBLED = re.compile(r"\b([A-Za-z]+)\s+\1\b", re.IGNORECASE)
_ARTICLES = re.compile(r"\b(a|an)\s+(a|an|the)\b", re.IGNORECASE)


@pytest.mark.parametrize("pack_name", list_packs())
def test_no_doubled_words_in_any_prompt(pack_name):
    """The system prompt said "exploring a a data warehouse"."""
    pack = load_pack(pack_name, "match3" if pack_name == "gaming" else None)
    texts = [pack.exploration, pack.base_context, pack.recommendations] + [a.prompt for a in pack.areas]
    texts += list(three_prompts(pack_name, GOAL).values()) if pack_name in ("generic", "gaming") else []
    for text in texts:
        assert not _DOUBLED.search(text), _DOUBLED.search(text).group(0)
        assert not _ARTICLES.search(text), _ARTICLES.search(text).group(0)


def test_recommendations_read_no_empty_fields_and_no_verifier_sql():
    """The recommendation writer was shown `"refutation_sql": ""`, `"verdict_history": []` and the
    verifier's queries of every claim: noise it would try to interpret, and tokens on every run."""
    from assay.models import Claim, MetricKind, Validation, ValidationStatus

    pack = load_pack("ecommerce")
    i = ins("a-1", "a")
    i.claims = [Claim(metric=MetricKind.rate, measure="conversion", segment="android", value=0.1,
                      baseline_value=0.4, query="SELECT 1", refutation_sql="")]
    i.validation = Validation(status=ValidationStatus.confirmed, claimed_count=5, verified_count=5,
                              query="SELECT count(*) FROM t")
    text = recommendation_prompt(pack, [i])
    for noise in ('"refutation_sql"', '"verdict_history"', '"query"', '""', "[]", "SELECT"):
        assert noise not in text, noise
    assert '"measure": "conversion"' in text and '"baseline_value": 0.4' in text  # what the claim says stays


def test_the_recommendations_request_says_what_was_merged_or_left_out_and_why():
    """Round 7's models asked why the recommendations request listed fewer insights than the areas had reported: the
    request now says which insight stands for the merged ones, and which were left out and why."""
    from assay.models import Validation, ValidationStatus

    pack = load_pack("generic")
    keep = ins("churn-1", "churn")
    keep.merged_from = ["churn-2", "engagement-2"]
    wrong = ins("revenue-1", "revenue")
    wrong.validation = Validation(status=ValidationStatus.rejected)
    seen = ins("revenue-2", "revenue")
    seen.duplicate_of = "old-run:revenue-1"
    llm = ReplayLLM({"recommend": [json.dumps({"recommendations": [
        {"title": "Win back channel x", "priority": 1, "related_insight_ids": ["churn-1"]}]})]})
    recommend(llm, pack, [keep, wrong, seen])
    text = llm.calls[0].system[0].text
    assert "Merged, so not listed: churn-1 stands for churn-2, engagement-2" in text
    assert "Left out: revenue-1 (the warehouse rejected its numbers), revenue-2 (already reported by an earlier " \
           "run)" in text
    assert "Merged" not in recommendation_prompt(pack, [ins("a-1", "a")])  # nothing merged: nothing said
    # round 19: the request counted the scan's adopted finding in its area's insights, and the model asked where the
    # third came from (it had written two): the adopted ones are named
    scanned = ins("monetization-scan-1", "monetization")
    scanned.origin = "statistical scan"
    text = recommendation_prompt(pack, [ins("monetization-1", "monetization"), scanned])
    assert "From the statistical scan, not from the exploration: monetization-scan-1 (" in text
    assert "statistical scan" not in recommendation_prompt(pack, [ins("a-1", "a")])


def test_the_analysis_reads_the_scan_s_leads_without_their_sql():
    """Item 4 (#15): a lead of the statistical scan that the explorer's results show is a finding to report; the
    analysis prompt lists the leads (headline and numbers, not the probe SQL, which it cannot cite)."""
    from assay.analysis.analyze import build_area_prompt
    from assay.explore.leads import Lead, headlines, render

    leads = render([Lead(headline="churn of channel (tiktok_ads) is 3.2x the rest", numbers="0.71 vs 0.22 (n=2,206)",
                         sql="SELECT channel, avg(churned) FROM players GROUP BY 1", sql_label="probe SQL",
                         kind="segment_gap", score=0.93),
                    Lead(headline="duration_s < 0 in 412 rows", numbers="412 of 462,777", sql="SELECT 1",
                         sql_label="probe SQL", kind="data_quality", score=0.5)], 40)
    assert headlines(leads) == ["churn of channel (tiktok_ads) is 3.2x the rest: 0.71 vs 0.22 (n=2,206)",
                                "duration_s < 0 in 412 rows: 412 of 462,777"]
    pack = load_pack("generic")
    text = build_area_prompt(pack, pack.areas[0], [], previous_context="", profile="", dataset="d", leads=leads)
    assert "## Leads of the statistical scan" in text and "L1. churn of channel (tiktok_ads) is 3.2x the rest" in text
    assert "avg(churned)" not in text
    assert "## Leads of the statistical scan" not in build_area_prompt(pack, pack.areas[0], [], previous_context="",
                                                                        profile="", dataset="d")


def test_the_recommendations_request_lists_the_context_notes_and_allows_a_long_answer():
    """Round 10's models asked where the run's non-differences went: the recommendations request lists the context
    notes (not citable, not insights), so that no recommendation relies on a difference the data ruled out; the
    answer's output cap leaves room for a full set of recommendations."""
    from assay.recommend import MAX_TOKENS

    pack = load_pack("generic")
    note = ins("pricing-2", "pricing")
    note.name = "Discounted orders repeat at the same rate as full-price ones."
    note.context_reason = "no difference: 0.31 against 0.30"
    llm = ReplayLLM({"recommend": [json.dumps({"recommendations": [
        {"title": "Win back channel x", "priority": 1, "related_insight_ids": ["churn-1", "pricing-2"]}]})]})
    out = recommend(llm, pack, [ins("churn-1", "churn")], context_notes=[note])
    text = llm.calls[0].system[0].text
    assert ("Context notes (not insights, so not citable in related_insight_ids: comparisons that showed no effect, "
            "facts of the data's shape and limits of the data, each with why; recommend nothing that relies on a "
            "difference they rule out): Discounted orders repeat at the same rate as full-price ones (no difference: "
            "0.31 against 0.30).") in text
    assert out.recommendations[0].related_insight_ids == ["churn-1"]  # a note is no insight to cite
    assert llm.calls[0].max_tokens == MAX_TOKENS >= 8192
    assert "Context notes" not in recommendation_prompt(pack, [ins("a-1", "a")])  # no notes: nothing said


def test_the_answer_format_shows_the_affected_count_as_a_claim_of_its_own():
    """Rounds 12-15: four models gave affected_count with no count claim of it, and the verifier checked it against a
    population guessed from another claim's segment (85 top payers re-derived as 1,700 payers: "adjusted"). The
    answer format's own example carries the count claim, says what happens without it, and when to leave it null."""
    from assay.analysis.discipline import INSIGHTS_CONTRACT

    text = " ".join(INSIGHTS_CONTRACT.split())
    fmt = text[text.index("## Answer format"):]
    assert '"affected_count": 1234' in fmt and '{"metric": "count", "measure": "the affected count' in fmt
    assert '"value": 1234' in fmt  # the claim states the same number, so the verifier checks that claim
    assert "leave affected_count null when the finding counts no one" in fmt
