"""Which exploration steps feed an area's prompt. Pure logic; the search is injected."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .. import limits
from ..models import AnalysisArea, ExplorationStep
from .render import estimate_rendered_size

# search(query_text, top_k) -> [(step number, cosine score)], best first
Search = Callable[[str, int], list[tuple[int, float]]]


@dataclass
class Scored:
    step: int
    score: float
    source: str  # vector | keyword | vector+keyword


@dataclass
class Dropped:
    step: int
    score: float
    reason: str  # below_min_score | outside_top_k | over_budget


@dataclass
class Pick:
    picked: list[Scored]
    dropped: list[Dropped]
    chars: int

    def log(self) -> tuple[list[dict], list[dict]]:
        return (
            [{"step": p.step, "score": round(p.score, 4), "source": p.source} for p in self.picked],
            [{"step": d.step, "score": round(d.score, 4), "reason": d.reason} for d in self.dropped],
        )


def area_query(area: AnalysisArea) -> str:
    return f"{area.name} — {area.description}. Keywords: {', '.join(area.keywords)}"


def _keyword_hit(step: ExplorationStep, keywords: list[str]) -> bool:
    text = f"{step.query}\n{step.purpose}\n{step.thinking}".lower()
    return any(k.lower() in text for k in keywords if k)


def pick_steps(
    area: AnalysisArea,
    steps: list[ExplorationStep],
    search: Search,
    budget_tokens: int = limits.ANALYSIS_QUERY_RESULTS_BUDGET_TOKENS,
    *,
    top_k: int = limits.ANALYSIS_AREA_TOP_K,
    min_score: float = limits.ANALYSIS_AREA_MIN_SCORE,
    floor: float = limits.EXACT_MATCH_FLOOR,
) -> Pick:
    """Vector rank + exact-keyword floor + budget trim.

    Errors raised by ``search`` propagate: an area whose ranking failed must
    fail visibly, not silently analyse nothing.
    """
    by_no = {s.step: s for s in steps if s.ok}
    # ask for every step: failed ones may still come back from the index and take slots
    hits = search(area_query(area), max(len(steps), 1)) if by_no else []
    scores: dict[int, float] = {}
    ranked = [(n, sc) for n, sc in hits if n in by_no]
    ranked.sort(key=lambda x: (-x[1], x[0]))
    dropped: list[Dropped] = []
    for i, (n, sc) in enumerate(ranked):
        if sc < min_score:
            dropped.append(Dropped(n, sc, "below_min_score"))
        elif i >= top_k:
            dropped.append(Dropped(n, sc, "outside_top_k"))
        else:
            scores[n] = sc
    source = {n: "vector" for n in scores}
    for n, s in by_no.items():
        if _keyword_hit(s, area.keywords):
            if n in scores:
                source[n] = "vector+keyword"
                scores[n] = max(scores[n], floor)
            else:
                scores[n] = floor
                source[n] = "keyword"
                dropped = [d for d in dropped if d.step != n]
    seen = set(scores) | {d.step for d in dropped}
    for n in by_no:  # steps the search did not return at all
        if n not in seen:
            dropped.append(Dropped(n, 0.0, "below_min_score"))
    order = sorted(scores, key=lambda n: (-scores[n], n))
    picked = [Scored(n, scores[n], source[n]) for n in order]
    budget_chars = budget_tokens * limits.CHARS_PER_TOKEN
    size = estimate_rendered_size([by_no[p.step] for p in picked])
    while picked and size > budget_chars:
        last = picked.pop()
        dropped.append(Dropped(last.step, last.score, "over_budget"))
        size = estimate_rendered_size([by_no[p.step] for p in picked])
    dropped.sort(key=lambda d: (d.reason, -d.score, d.step))
    return Pick(picked=picked, dropped=dropped, chars=size)
