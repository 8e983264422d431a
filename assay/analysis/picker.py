"""Which exploration steps feed an area's prompt. Pure logic; the search is injected.

A step's score is its relevance to the area and, when the run has a goal, the
mean of that and its cosine to the goal. The area part is the cosine to the area's
identity; an area keyword (as words, not inside other words or SQL function names:
``count(*)`` is no keyword hit) lifts it into [floor, 1] without flattening it,
``floor + (1 - floor) * cosine``, so keyword hits still rank among themselves
instead of tying at the floor. A step the explorer's closing summary cites
("step 6") gets the same lift on its whole score when it is relevant to the area
or the goal at all (a keyword hit, or a cosine reaching the minimum score): a
citation says the explorer's conclusion rests on the step, not which area the
conclusion is about. The done tool asks for "the step numbers they come from", so
a summary cites nearly every step (rounds 9-16: 22-29 of 24-30), and lifting them
all made every area of a five-area run read 24 steps (the top K), against the
partition of the run into areas; the summary itself is in every area's prompt.
With one area in the run every step was explored for that area (and the goal):
nothing is filtered, only the budget trims (a cited step is lifted above the
others there, whatever its score). With several areas a step must reach the
minimum score for this area or for the goal (or carry an area keyword), and only
the top K stay candidates.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from .. import limits
from ..models import AnalysisArea, ExplorationStep, StepAction
from .render import estimate_rendered_size

# search(query_text, top_k) -> [(step number, cosine score)], best first
Search = Callable[[str, int], list[tuple[int, float]]]


@dataclass
class Scored:
    step: int
    score: float
    source: str  # vector, keyword, cited (by the explorer's summary), joined by + when several
    area_score: float = 0.0
    goal_score: float | None = None


@dataclass
class Dropped:
    step: int
    score: float
    reason: str  # below_min_score | outside_top_k | over_budget
    area_score: float = 0.0
    goal_score: float | None = None
    source: str = "vector"


_WHY = {
    "below_min_score": "below the minimum score for this area and for the goal; no area keyword (a citation by the "
                       "explorer's summary does not make a step relevant to an area)",
    "outside_top_k": "outside the top {top_k} of a run shared with other areas",
    "over_budget": "the steps ranked above it fill the area's budget",
}


@dataclass
class Pick:
    picked: list[Scored]
    dropped: list[Dropped]
    chars: int
    top_k: int = limits.ANALYSIS_AREA_TOP_K

    def log(self) -> tuple[list[dict], list[dict]]:
        """Per step: the final score, its parts, where it came from and why it was kept or dropped."""
        n = len(self.picked)
        picked = []
        for rank, p in enumerate(self.picked, start=1):
            e = {"step": p.step, "score": round(p.score, 4), "area_score": round(p.area_score, 4)}
            if p.goal_score is not None:
                e["goal_score"] = round(p.goal_score, 4)
            e.update(source=p.source, rank=rank, why=f"kept: rank {rank} of {n}, within the budget")
            picked.append(e)
        dropped = []
        for d in self.dropped:
            e = {"step": d.step, "score": round(d.score, 4), "area_score": round(d.area_score, 4)}
            if d.goal_score is not None:
                e["goal_score"] = round(d.goal_score, 4)
            e.update(source=d.source, reason=d.reason, why=_WHY[d.reason].format(top_k=self.top_k))
            dropped.append(e)
        return picked, dropped


def area_query(area: AnalysisArea) -> str:
    return f"{area.name} — {area.description}. Keywords: {', '.join(area.keywords)}"


_WORDS = re.compile(r"[a-z0-9]+")
_SQL_CALL = re.compile(r"\b[a-z_][a-z0-9_]*\s*\(")
_SQL_WORDS = frozenset(
    "select from where group by order having limit offset join left right inner outer full cross on as and or "
    "not case when then else end with over partition distinct union all asc desc in is null between like ilike "
    "interval cast filter within exists any qualify true false".split()
)
_INFLECTIONS = ("", "s", "es", "ed", "ing", "er", "ers")


def _step_words(step: ExplorationStep) -> list[str]:
    """The words of a step's purpose, thinking and SQL; the SQL without its function names and reserved
    words (``count(*)`` is not the concept "count", ``ORDER BY`` is not "orders")."""
    sql = _SQL_CALL.sub("(", step.query.lower())
    words = _WORDS.findall(f"{step.purpose}\n{step.thinking}".lower())
    return words + [w for w in _WORDS.findall(sql) if w not in _SQL_WORDS]


def _keyword_hit(step: ExplorationStep, keywords: list[str], words: list[str] | None = None) -> bool:
    """A verbatim area keyword, matched as whole words (with plain inflections: churn/churned, ad/ads),
    never inside another word ("ad" in "address", "count" in "country")."""
    words = _step_words(step) if words is None else words
    for k in keywords:
        kw = _WORDS.findall(k.lower())
        if not kw:
            continue
        m = len(kw)
        for i in range(len(words) - m + 1):
            last = words[i + m - 1]
            if words[i:i + m - 1] == kw[:-1] and last.startswith(kw[-1]) and last[len(kw[-1]):] in _INFLECTIONS:
                return True
    return False


def uncovered_areas(areas: list[AnalysisArea], steps: list[ExplorationStep]) -> list[AnalysisArea]:
    """The areas that no query step has looked at yet, judged by the step's stated purpose and thinking (what
    the explorer meant to look at) naming one of the area's keywords or words of its name. The SQL is not read:
    every query of an events table would otherwise "cover" an area keyed on events."""
    said = [_WORDS.findall(f"{s.purpose}\n{s.thinking}".lower()) for s in steps
            if s.action == StepAction.query and not s.refused and not s.error]
    out = []
    for a in areas:
        keys = list(a.keywords) + [w for w in _WORDS.findall(a.name.lower()) if len(w) > 3]
        if not any(_keyword_hit(None, keys, words) for words in said):
            out.append(a)
    return out


_CITED = re.compile(r"\bsteps?\s*#?\s*(\d+(?:\s*(?:,|&|and|to|-|–)\s*#?\d+)*)", re.IGNORECASE)


def cited_steps(summary: str) -> set[int]:
    """Step numbers the explorer's summary cites: "step 6", "steps 2, 4 and 7", "steps 3-5"."""
    out: set[int] = set()
    for m in _CITED.finditer(summary or ""):
        parts = re.split(r"\s*(,|&|and|to|-|–)\s*", m.group(1))
        nums, ops = [int(x.lstrip("#")) for x in parts[0::2]], parts[1::2]
        out.update(nums)
        for a, op, b in zip(nums, ops, nums[1:]):
            if op in ("to", "-", "–") and 0 < b - a <= 50:
                out.update(range(a, b + 1))
    return out


def pick_steps(
    area: AnalysisArea,
    steps: list[ExplorationStep],
    search: Search,
    budget_tokens: int = limits.ANALYSIS_QUERY_RESULTS_BUDGET_TOKENS,
    *,
    goal: str = "",
    cited: set[int] | frozenset[int] = frozenset(),
    areas_in_run: int = 1,
    top_k: int = limits.ANALYSIS_AREA_TOP_K,
    min_score: float = limits.ANALYSIS_AREA_MIN_SCORE,
    floor: float = limits.EXACT_MATCH_FLOOR,
) -> Pick:
    """Rank by relevance to the area and the goal, lift keyword hits, filter (several areas only), trim
    to the budget (lowest scores first).

    Errors raised by ``search`` propagate: an area whose ranking failed must
    fail visibly, not silently analyse nothing.
    """
    by_no = {s.step: s for s in steps if s.ok}
    k = max(len(steps), 1)  # every step: failed ones may still come back from the index and take slots
    area_hits = dict(search(area_query(area), k)) if by_no else {}
    goal = goal.strip()
    goal_hits = dict(search(goal, k)) if by_no and goal else {}
    scored: list[Scored] = []
    for n, s in by_no.items():
        a = float(area_hits.get(n, 0.0))
        g = float(goal_hits.get(n, 0.0)) if goal else None
        keyword = _keyword_hit(s, area.keywords)
        area_rel = floor + (1 - floor) * max(a, 0.0) if keyword else a  # a keyword speaks for the area
        score = area_rel if g is None else (area_rel + g) / 2
        relevant = keyword or max(a, g or 0.0) >= min_score
        # the explorer's conclusion rests on it: lifted for the area and the goal alike, when it is about either
        # (in a run of one area every step is, and the lift only orders the budget's cut)
        lifted = n in cited and (relevant or areas_in_run <= 1)
        if lifted:
            score = floor + (1 - floor) * max(score, 0.0)
        lifts = [w for w, hit in (("keyword", keyword), ("cited", lifted)) if hit]
        source = "+".join((["vector"] if not lifts or max(a, g or 0.0) >= min_score else []) + lifts)
        scored.append(Scored(n, score, source, a, g))
    scored.sort(key=lambda x: (-x.score, x.step))
    dropped: list[Dropped] = []

    def drop(x: Scored, reason: str) -> None:
        dropped.append(Dropped(x.step, x.score, reason, x.area_score, x.goal_score, x.source))

    picked: list[Scored] = []
    for x in scored:
        if areas_in_run > 1 and "keyword" not in x.source and max(x.area_score, x.goal_score or 0.0) < min_score:
            drop(x, "below_min_score")
        elif areas_in_run > 1 and len(picked) >= top_k:
            drop(x, "outside_top_k")
        else:
            picked.append(x)
    budget_chars = budget_tokens * limits.CHARS_PER_TOKEN
    size = estimate_rendered_size([by_no[p.step] for p in picked])
    while picked and size > budget_chars:
        drop(picked.pop(), "over_budget")
        size = estimate_rendered_size([by_no[p.step] for p in picked])
    dropped.sort(key=lambda d: (d.reason, -d.score, d.step))
    return Pick(picked=picked, dropped=dropped, chars=size, top_k=top_k)
