"""Memory across runs (context, duplicates) and recommendations."""

from __future__ import annotations

import json

import numpy as np

from assay.context import mark_duplicates, render_previous_context
from assay.llm.scripted import ReplayLLM
from assay.models import (DiscoveryResult, Feedback, Insight, Recommendation, Validation, ValidationStatus)
from assay.packs import load_pack
from assay.recommend import recommend, usable


def ins(i, area="churn", name="Tiktok players churn on day 0", status=None):
    v = Validation(status=status) if status else None
    return Insight(id=i, area=area, name=name, description="70% never return", validation=v)


def test_previous_context_sections():
    prev = DiscoveryResult(run_id="r0", project_id="p", domain="gaming", insights=[ins("churn-1")],
                           recommendations=[Recommendation(id="rec-1", title="Fix onboarding for tiktok")])
    fb = [Feedback(project_id="p", run_id="r0", insight_id="churn-1", rating="dislike", comment="we know",
                   insight_name="Tiktok churn", area="churn"),
          Feedback(project_id="p", run_id="r0", insight_id="churn-2", rating="like", insight_name="Level wall",
                   area="levels")]
    text = render_previous_context([prev], fb)
    assert "AVOID similar conclusions" in text and "(comment: we know)" in text
    assert "MONITOR for changes" in text and "Level wall" in text
    assert "do not repeat unless the numbers changed" in text and "Fix onboarding for tiktok" in text
    assert render_previous_context([], []) == ""


def test_duplicates_marked_within_the_same_area_only(embedder):
    prev = DiscoveryResult(run_id="abcdef123", project_id="p", domain="gaming", insights=[ins("churn-1")])
    same = ins("churn-1")
    other_area = ins("levels-1", area="levels")
    different = ins("churn-2", name="Whales bring most revenue")
    n = mark_duplicates([same, other_area, different], [prev], embedder.embed)
    assert n == 1 and same.duplicate_of == "abcdef12/churn-1"
    assert other_area.duplicate_of is None and different.duplicate_of is None


def test_duplicate_threshold():
    prev = DiscoveryResult(run_id="r", project_id="p", domain="g", insights=[ins("churn-1")])
    new = ins("churn-1")

    def fake(texts):
        return np.array([[1.0, 0.0]] * len(texts))  # identical vectors: cosine 1

    assert mark_duplicates([new], [prev], fake, threshold=0.95) == 1


def test_recommendations_exclude_rejected_and_drop_unknown_ids():
    pool = [ins("churn-1", status=ValidationStatus.confirmed), ins("churn-2", status=ValidationStatus.rejected)]
    assert [i.id for i in usable(pool)] == ["churn-1"]
    answer = {"recommendations": [{"title": "Send day-1 push to tiktok cohort", "priority": 2,
                                   "related_insight_ids": ["churn-1", "churn-2", "ghost-1"],
                                   "expected_impact": {"metric": "d1 retention", "estimated_improvement": "+5%"}}]}
    llm = ReplayLLM({"recommend": ["not json", json.dumps(answer)]})  # one correction, then valid
    out = recommend(llm, load_pack("gaming"), pool)
    assert out.recommendations[0].related_insight_ids == ["churn-1"]
    assert {"recommendation": 1, "dropped_unknown_insight_ids": ["churn-2", "ghost-1"]} in out.log
    prompt = llm.calls[0].system_text()
    assert "churn-2" not in prompt.split("Validated insights")[1] and "Claim discipline" in prompt


def test_claim_discipline_survives_overrides():
    from assay.analysis.analyze import build_area_prompt
    from assay.models import Project
    from assay.packs import pack_for_project

    p = Project(id="x", pack="gaming", prompt_overrides={"analysis_churn": "Just say hi. {{ query_results }}"})
    pack = pack_for_project(p)
    area = next(a for a in pack.areas if a.id == "churn")
    prompt = build_area_prompt(pack, area, [], previous_context="", profile="", dataset="d")
    assert prompt.startswith("## Business context") and "Just say hi." in prompt
    assert "Claim discipline (always applies)" in prompt and '"insights"' in prompt


def test_an_llm_cannot_supply_its_own_verification_query():
    from assay.analysis.analyze import analyze_area

    pack = load_pack("gaming")
    area = next(a for a in pack.areas if a.id == "churn")
    answer = {"insights": [{"name": "Everyone churns", "description": "all players leave", "affected_count": 123,
                            "verification_sql": "SELECT 123 AS count"}]}
    out = analyze_area(ReplayLLM({"analyze": [json.dumps(answer)]}), pack, area, [])
    assert out.insights[0].verification_sql is None and out.insights[0].affected_count == 123
