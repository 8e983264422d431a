"""Scoring and severity: one multiple-testing correction over every candidate of a run, then effect
and significance; severity capped by support, by small reference tables and by relevance to a goal."""

from __future__ import annotations

import math

from .candidate import DESCRIPTIVE_KINDS, NO_EFFECT, Candidate, Kind
from .significance import benjamini_hochberg

_LEVELS = ["low", "medium", "high", "critical"]
LOW_SUPPORT_ROWS = 100
GOAL_RELEVANT = 0.3  # cosine of a finding's headline to the goal below which it is not about the question
NO_EFFECT_RELEVANT = 0.2  # "X is uniform across Y" carries fewer of the goal's words: a lower bar
# a segment's level of a measure against the others' (furniture's unit price, July's delays, a country's session
# length): often what the segment is, so at most high; critical is kept for what goes wrong (a worse conversion, a
# churn gap, a change, failures), the demo's new user read a price difference ranked above the planted churn
LEVEL_KINDS = (Kind.OUTLIER_SEGMENT, Kind.MEAN_OUTLIER, Kind.GROUP_EFFECT)


def score(cands: list[Candidate], alpha: float = 0.05) -> list[Candidate]:
    """Multiple-testing correction across candidates, then effect x significance. Findings of no effect
    (kind ``no_effect``) are kept apart: their test failed to reject, which is what they report."""
    nulls = [c for c in cands if c.kind == NO_EFFECT]
    cands = [c for c in cands if c.kind != NO_EFFECT]
    qs = benjamini_hochberg([c.p_value for c in cands])
    kept = []
    for c, q in zip(cands, qs):
        c.q_value = q
        if q > alpha:
            continue
        sig = min(1.0, -math.log10(max(q, 1e-300)) / 12)
        c.score = round(0.7 * c.effect + 0.3 * sig, 4)
        kept.append(c)
    for c in nulls:
        c.q_value, c.score = 1.0, 0.0
    return sorted(kept, key=lambda c: (-c.score, c.name)) + sorted(nulls, key=lambda c: (-c.p_value, c.name))


def severity(c: Candidate, goal: bool = False) -> str:
    """Severity from the effect and its significance, capped by support (few rows, mostly empty
    measure), by a small reference table, and by relevance when the run answers a question."""
    level = _base_severity(c)
    cap = "critical"
    if c.catalogue:
        cap = "low"
    elif (c.support is not None and c.support < LOW_SUPPORT_ROWS) or \
            (c.support_share is not None and c.support_share < 0.5):
        cap = "medium"
    if goal and (c.relevance < GOAL_RELEVANT or c.kind in DESCRIPTIVE_KINDS):
        cap = min(cap, "medium", key=_LEVELS.index)  # off the question, or only how rows are spread
    return min(level, cap, key=_LEVELS.index)


def _base_severity(c: Candidate) -> str:
    if c.kind == NO_EFFECT:
        return "low"
    if c.kind == Kind.TREND:  # a steady drift is worth watching, rarely an emergency
        return "medium" if c.effect >= 0.2 else "low"
    if c.kind == Kind.CORRELATION:  # an association, never proof on its own
        return "high" if c.effect >= 0.7 else "medium" if c.effect >= 0.4 else "low"
    if c.kind == Kind.DATA_QUALITY:
        return "medium" if c.effect >= 0.3 else "low"
    if c.effect >= 0.7 and c.q_value < 1e-6 and c.kind in LEVEL_KINDS:
        return "high"
    if c.effect >= 0.7 and c.q_value < 1e-6:
        return "critical"
    if c.effect >= 0.4:
        return "high"
    if c.effect >= 0.2:
        return "medium"
    return "low"
