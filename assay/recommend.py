"""Recommendations: one LLM call over the validated insights."""

from __future__ import annotations

import datetime as dt
import json
from collections import Counter
from dataclasses import dataclass

from .explore.numbering import strip_citations
from .analysis.discipline import RECOMMENDATION_DISCIPLINE, RECOMMENDATIONS_CONTRACT, goal_section, goal_text
from .llm.base import LLM, LLMRequest, Message, SystemBlock
from .llm.contract import ask_contract
from .models import DomainPack, Insight, Recommendation, RecommendationAnswer, TokenUsage, ValidationStatus
from .run.adopt import ORIGIN as ADOPTED
from .packs import render


# step numbers and SQL mean nothing to the recommender, which sees no steps; it cites insight ids
_NOT_FOR_RECOMMENDATIONS = ("discovered_at", "source_steps", "verification_sql", "verdict_history")
_SQL_KEYS = ("sql", "query", "refutation_sql", "verification_sql", "blind_sql")  # the verifier's, not the reader's


def _for_reader(value):
    """What the recommendation writer reads of an insight: no empty fields (``""``, ``[]``, ``{}``), no verifier
    SQL and no step numbers (a claim's source_steps, a description's "[step 3]"), at any depth; an empty
    ``refutation_sql`` is noise the model would try to interpret, and round 14's model read the claims' stored
    step numbers against the ones its text cited."""
    if isinstance(value, dict):
        out = {k: _for_reader(v) for k, v in value.items() if k not in _SQL_KEYS and k != "source_steps"}
        return {k: v for k, v in out.items() if v not in ("", [], {}, None)}
    if isinstance(value, list):
        return [_for_reader(v) for v in value]
    if isinstance(value, str):
        return strip_citations(value)
    return value


def usable(insights: list[Insight]) -> list[Insight]:
    """Rejected insights and duplicates of earlier runs never feed recommendations."""
    return [i for i in insights
            if not (i.validation and i.validation.status == ValidationStatus.rejected) and not i.duplicate_of]


def insights_summary(insights: list[Insight], left_out: list[Insight] | None = None,
                     context_notes: list[Insight] | None = None) -> str:
    """The count by area, and what is not in the list and why: insights merged into another (one finding reported
    more than once) and insights left out (rejected by the warehouse, reported by an earlier run). A model that
    saw fewer insights than the areas reported asked why (round 7). The run's context notes (a comparison that
    showed no effect) are listed too: what the data shows does not matter is what a recommendation should not
    spend effort on, and a model that was not told asked where they went (round 10)."""
    by_area = Counter(i.area for i in insights)
    parts = ", ".join(f"{a}: {n}" for a, n in sorted(by_area.items()))
    lines = [f"Total: {len(insights)} insights ({parts})" if insights else "Total: 0 insights"]
    scanned = [i.id for i in insights if i.origin == ADOPTED]
    if scanned:  # round 19: "the request lists an insight no step of mine looked at" (its area counted 3, it wrote 2)
        lines.append(f"From the statistical scan, not from the exploration: {', '.join(scanned)} (the scan's own "
                     "probes found them, the warehouse re-derived their numbers as it did yours; origin: "
                     f"\"{ADOPTED}\").")
    merged = [f"{i.id} stands for {', '.join(i.merged_from)}" for i in insights if i.merged_from]
    if merged:
        lines.append("Merged, so not listed: " + "; ".join(merged) + ". Each merged insight reported the same "
                     "finding as the one that stands for it (the same segment and metric, the same comparison, "
                     "that one's baseline stated as a finding, or a segment's level that is that one's change seen "
                     "over the whole period); cite the id that stands for it.")
    why = []
    for i in left_out or []:
        if i.validation and i.validation.status == ValidationStatus.rejected:
            why.append(f"{i.id} (the warehouse rejected its numbers)")
        elif i.duplicate_of:
            why.append(f"{i.id} (already reported by an earlier run)")
    if why:
        lines.append("Left out: " + ", ".join(why) + ".")
    notes = [n for n in context_notes or [] if n.name]
    if notes:
        # what a note is, whichever kind it is (findings.context_reason): not only a non-difference
        lines.append("Context notes (not insights, so not citable in related_insight_ids: comparisons that showed no "
                     "effect, facts of the data's shape and limits of the data, each with why; recommend nothing "
                     "that relies on a difference they rule out): "
                     + "; ".join(f"{n.name.rstrip('.')}" + (f" ({n.context_reason})" if n.context_reason else "")
                                 for n in notes) + ".")
    return "\n".join(lines)


@dataclass
class RecommendationOutcome:
    recommendations: list[Recommendation]
    usage: TokenUsage
    log: list[dict]


def recommendation_prompt(pack: DomainPack, pool: list[Insight], *, previous_context: str = "", profile: str = "",
                          today: dt.date | None = None, goal: str = "", left_out: list[Insight] | None = None,
                          context_notes: list[Insight] | None = None) -> str:
    data = json.dumps([
        _for_reader({k: v for k, v in i.model_dump(mode="json", exclude_none=True).items()
                     if k not in _NOT_FOR_RECOMMENDATIONS}) for i in pool
    ], ensure_ascii=False)
    base = render(pack.base_context, f"{pack.name} base_context", profile=profile,
                  previous_context=previous_context, goal=goal_text(goal))
    body = render(pack.recommendations, f"{pack.name} recommendations",
                  discovery_date=(today or dt.date.today()).isoformat(),
                  insights_summary=insights_summary(pool, left_out, context_notes), insights_data=data, goal=goal_text(goal),
                  previous_context=previous_context)
    parts = (base, goal_section(goal), body, RECOMMENDATION_DISCIPLINE, RECOMMENDATIONS_CONTRACT)
    return "\n\n".join(p.strip() for p in parts if p.strip())


# a recommendation set (5-8 recommendations with actions, impact and reasoning) came within a few hundred tokens of
# 4,096 in round 10; an output cap costs nothing until it is used
MAX_TOKENS = 8192


def recommend(llm: LLM, pack: DomainPack, insights: list[Insight], *, previous_context: str = "",
              profile: str = "", today: dt.date | None = None, goal: str = "",
              context_notes: list[Insight] | None = None) -> RecommendationOutcome:
    pool = usable(insights)
    if not pool:
        return RecommendationOutcome([], TokenUsage(), [{"note": "no usable insights"}])
    prompt = recommendation_prompt(pack, pool, previous_context=previous_context, profile=profile, today=today,
                                   goal=goal, left_out=[i for i in insights if i not in pool],
                                   context_notes=context_notes)
    req = LLMRequest(purpose="recommend", system=[SystemBlock(prompt)],
                     messages=[Message("user", content="Write the recommendations as JSON.")], max_tokens=MAX_TOKENS,
                     meta={"insight_ids": [i.id for i in pool]})
    answer, usage, dialog = ask_contract(llm, req, RecommendationAnswer, "recommendations")
    known = {i.id for i in pool}
    recs, log = [], list(dialog)
    for n, r in enumerate(answer.recommendations, start=1):
        unknown = [x for x in r.related_insight_ids if x not in known]
        if unknown:
            log.append({"recommendation": n, "dropped_unknown_insight_ids": unknown})
        data = r.model_dump()
        data["related_insight_ids"] = [x for x in r.related_insight_ids if x in known]
        recs.append(Recommendation(id=f"rec-{n}", **data))
    return RecommendationOutcome(recs, usage, log)
