"""Scoring discoveries against planted ground truth (`assay eval demo`)."""

from __future__ import annotations

import re
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Iterator

from .findings import fold, names_value
from .models import Insight, ValidationStatus
from .validate.compare import AFFECTED, direction
from .settings import Settings
from .validate.entity import normalize_entity

COUNT_TOLERANCE = 0.20
# a concentration ("the top k% bring a large share") is shown by a confirmed share of at least this many times the
# group's own share of the population (k%): the uniform spread is the baseline a top group's share is compared with
CONCENTRATION_FACTOR = 3.0


def _text(i: Insight) -> str:
    """The insight's words: headline, description, segment, and its claims' measures and segments in words. Not
    the claims' SQL: a condition such as ``channel <> 'x'`` names x for the segment that excludes it."""
    claims = " ".join(f"{c.measure} {c.segment}" for c in i.claims)
    return f"{i.name} {i.description} {i.segment or ''} {claims}".lower()


def _close(count: float | None, true: float) -> bool:
    return count is not None and abs(count - true) <= COUNT_TOLERANCE * true


def _entity_counts(insight: Insight, pattern: dict) -> list[float]:
    """The counts the insight's claims state of the pattern's entity (the verified value when there is one)."""
    want = normalize_entity(pattern.get("entity"))
    out = []
    for c in insight.claims:
        if c.metric.value == "count" and want is not None and normalize_entity(c.entity) == want:
            v = c.verified_value if c.verified_value is not None else c.value
            if v is not None:
                out.append(v)
    return out


def _confirmed_counts(insight: Insight, pattern: dict) -> list[float]:
    """The warehouse's counts of the pattern's entity that confirmed what the insight claimed: count claims of that
    entity with a confirmed verdict (their verified value), the affected count's claim among them."""
    want = normalize_entity(pattern.get("entity"))
    out = []
    for c in insight.claims:
        if c.metric.value != "count" or c.verdict != ValidationStatus.confirmed or want is None:
            continue
        entity = insight.affected_entity if c.measure == AFFECTED and not c.entity else c.entity
        v = c.verified_value if c.verified_value is not None else c.value
        if normalize_entity(entity) == want and v is not None:
            out.append(v)
    return out


def _confirmed_effect(insight: Insight, pattern: dict) -> bool:
    """A comparison on the pattern's segment (named in the claim's words) that the warehouse confirmed, with an
    effect: the segment's verified value differs from its baseline's beyond the no-effect margin."""
    for c in insight.claims:
        if c.measure == AFFECTED or c.verdict != ValidationStatus.confirmed:
            continue
        a = c.verified_value if c.verified_value is not None else c.value
        b = c.verified_baseline_value if c.verified_baseline_value is not None else c.baseline_value
        if a is None or b is None or direction(a, b) == 0:
            continue
        if any(names_value(n, fold(c.segment)) for n in pattern.get("names") or [pattern["segment"]]):
            return True
    return False


def another_definition(insight: Insight, pattern: dict) -> bool:
    """The insight counts the pattern's entity, in a cohort cut another way than the truth's, and the warehouse
    confirmed both that count and the segment's effect. A blind re-derivation of the truth's own definition on the
    same warehouse gives the truth's count (a count claim carries the verified value), so a confirmed count that
    differs from it counts another definition of the cohort (a censoring-aware cohort, another outcome of the same
    behaviour), not an inflated count of the truth's; an unconfirmed or corrected count proves nothing and is refused.
    """
    return bool(_confirmed_counts(insight, pattern)) and _confirmed_effect(insight, pattern)


def _top_fraction(segment: str) -> float | None:
    """k/100 of a "top k%" group, None for any other segment."""
    m = re.search(r"top\s+(\d+(?:\.\d+)?)\s*%", segment or "", re.I)
    return float(m.group(1)) / 100 if m else None


def _top_count(segment: str, pattern: dict) -> bool:
    """The segment (or any text) names the truth's top group by its size ("top 241 customers by revenue" for the top
    1% of 24,093 buyers): a top N, not a percentage, within the count tolerance of the truth's group size."""
    true = pattern.get("affected_count")
    return bool(true) and any(_close(float(m.group(1).replace(",", "")), true)
                              for m in re.finditer(r"\btop\s+(\d[\d,]*)(?![\d,.]*\s*%)", segment or "", re.I))


def confirmed_concentration(insight: Insight, pattern: dict) -> bool:
    """A concentration states a top group's share with no baseline: its baseline is the group's own share of the
    population (the top 1% of customers holding 1% of revenue is no concentration). Found when the warehouse
    confirmed a share claim on the pattern's own group (its segment names it, by its words or by its size: "top 241
    customers" for the top 1% of 24,093; its entity is the pattern's) of at
    least CONCENTRATION_FACTOR times that population share. The count of such a group is fixed by its definition
    (ceil(k% of the entities)), so an insight that leads with another group (the top 10%) and states the truth's
    group's share beside it has found it; a share the warehouse did not confirm, of another group or another
    entity, or near the uniform spread, has not."""
    k = _top_fraction(pattern.get("segment") or "")
    want = normalize_entity(pattern.get("entity"))
    if pattern.get("kind") != "concentration" or k is None or want is None:
        return False
    names = pattern.get("names") or [pattern["segment"]]
    for c in insight.claims:
        if c.metric.value != "share" or c.verdict != ValidationStatus.confirmed:
            continue
        # the group's entity: the claim's, or the one its segment's words name (a share of revenue summed over
        # orders is still the share of "the top 241 customers")
        if normalize_entity(c.entity or insight.affected_entity) != want \
                and not _names(str(pattern.get("entity")).rstrip("s"), (c.segment or "").lower()):
            continue
        if not any(names_value(n, fold(c.segment)) for n in names) and not _top_count(c.segment, pattern):
            continue
        v = c.verified_value if c.verified_value is not None else c.value
        if v is not None and v > 1:
            v /= 100  # a share written in percent
        if v is not None and v >= CONCENTRATION_FACTOR * k:
            return True
    return False


def _names(word: str, text: str) -> bool:
    """The word (or a word starting with it) in the text, not as part of an identifier (order != order_items)."""
    return re.search(rf"(?<![a-z0-9_]){re.escape(word.lower())}(?!_)", text) is not None


def entities_agree(insight: Insight, pattern: dict) -> bool:
    a, b = normalize_entity(insight.affected_entity), normalize_entity(pattern.get("entity"))
    return a is not None and a == b


_TOP_LIST = re.compile(r"\btop\s+(\d+(?:\.\d+)?\s*%(?:\s*(?:,\s*and|,\s*or|,|and|or)\s*\d+(?:\.\d+)?\s*%)*)", re.I)


def _lists_top_share(text: str, pattern: dict) -> bool:
    """The text names the pattern's "top k%" group inside a list of groups: "the top 1%, 5% and 10% of payers
    bring 20.4%, 64.9% and 70.3%" names the top 5% (round 21, gaming: the model's whale finding, its only mention
    of the group, was scored as not naming it)."""
    k = _top_fraction(pattern.get("segment") or "")
    if pattern.get("kind") != "concentration" or k is None:
        return False
    return any(abs(float(v) / 100 - k) < 1e-9 for m in _TOP_LIST.finditer(text or "")
               for v in re.findall(r"\d+(?:\.\d+)?", m.group(1)))


def _names_top_group(insight: Insight, pattern: dict) -> bool:
    """A concentration's top group named by its size anywhere in the insight's words or its claims' segments ("the
    top 85 payers" for the top 5% of 1,700 payers), within the count tolerance of the truth's group."""
    if pattern.get("kind") != "concentration":
        return False
    texts = [insight.name, insight.description, insight.segment or ""] + [c.segment or "" for c in insight.claims]
    return any(_top_count(t, pattern) for t in texts)


def matches(insight: Insight, pattern: dict) -> bool:
    """Names the pattern's segment (as words, separators folded; the claims' segments count) and its metric; its
    count is compared with the true one (within 20%) only when both count the same entity, and a count
    claim of that entity counts as well as the affected count. A count of the same entity that is not the truth's
    matches only as a confirmed count of another cut of the cohort beside a confirmed effect on the segment
    (``another_definition``), or, for a concentration, as a confirmed share of the truth's own top group
    (``confirmed_concentration``). A concentration's segment is also named by its group's size (``_names_top_group``:
    "the top 85 payers" is the top 5% of 1,700). A pattern that states no metric or no entity needs the affected count
    to match."""
    text = _text(insight)
    folded = fold(text)
    if not any(names_value(n, folded) for n in pattern.get("names") or [pattern["segment"]]) \
            and not _names_top_group(insight, pattern) and not _lists_top_share(text, pattern):
        return False
    metric = pattern.get("metric") or []
    if metric and not any(_names(w, text) for w in metric):
        return False
    true = pattern["affected_count"]
    count_ok = _close(insight.affected_count, true)
    if not metric or not pattern.get("entity"):
        return count_ok
    # the same entity: some count of it must be right, the affected count or a count claim (a finding may size
    # the segment as its affected count and state the affected subset as a claim, or the other way round)
    if count_ok and entities_agree(insight, pattern) or any(_close(v, true) for v in _entity_counts(insight, pattern)):
        return True
    if not entities_agree(insight, pattern):
        return True  # another entity: its count says nothing about the truth's
    # the same entity, no count near the truth's: found only as a confirmed count of another cut of the cohort, or
    # as a confirmed share of the truth's own top group (a concentration)
    return another_definition(insight, pattern) or confirmed_concentration(insight, pattern)


def is_wrong(insight: Insight) -> bool:
    """The warehouse did not back the insight's number."""
    v = insight.validation
    return v is not None and v.status in (ValidationStatus.rejected, ValidationStatus.error,
                                          ValidationStatus.adjusted)


@dataclass
class Score:
    patterns: int
    found: list[str] = field(default_factory=list)
    missed: list[str] = field(default_factory=list)
    insights: int = 0
    matching_insights: int = 0
    critical_wrong: int = 0

    @property
    def recall(self) -> float:
        return len(self.found) / self.patterns if self.patterns else 0.0

    @property
    def precision(self) -> float:
        return self.matching_insights / self.insights if self.insights else 0.0


def score_demo(insights: list[Insight], patterns: list[dict]) -> Score:
    s = Score(patterns=len(patterns), insights=len(insights))
    for p in patterns:
        (s.found if any(matches(i, p) for i in insights) else s.missed).append(p["id"])
    s.matching_insights = sum(1 for i in insights if any(matches(i, p) for p in patterns))
    s.critical_wrong = sum(1 for i in insights if i.severity.value == "critical" and is_wrong(i))
    return s


@contextmanager
def scratch_store(settings: Settings) -> Iterator[Settings]:
    """Settings whose store and vector index live in a temporary folder, closed and removed at the end: an
    evaluation's projects and runs are not the user's (``eval-*`` showed in `assay project list` and `assay runs`),
    its runs read none of the user's history, and they wait for no local index another assay process holds."""
    from .store.store import close_store
    from .vectors.index import close_index

    with tempfile.TemporaryDirectory(prefix="assay-eval-") as tmp:
        scratch = replace(settings, home=Path(tmp), mongodb_uri=None, qdrant_url=None, qdrant_api_key=None,
                          result_storage=None, vector_index=None)
        try:
            yield scratch
        finally:
            close_index(scratch)
            close_store(scratch)
