"""One insight per finding: the same finding reported by several areas is merged.

After every area is analysed, two insights describe the same finding when their headline claims
measure the same metric on the same segment, when each one's leading comparison (segment against baseline)
is one the other also makes, or when their texts are closer than
``SAME_FINDING_COSINE`` (measured by ``bench/findings.py``). A group keeps the insight of the area
that fits it best (its text against the area's description); the others' areas are listed in
``also_relevant_to``. Pure: the same insights in, the same insights out.
"""

from __future__ import annotations

import re
from typing import Callable

import numpy as np

from .models import AnalysisArea, Claim, Insight, MetricKind
from .validate.compare import AFFECTED, NO_EFFECT, ORDER, direction
from .validate.entity import normalize_entity

# all-MiniLM-L6-v2 cosine of two insight texts above which they are one finding. Measured by
# bench/findings.py: paraphrases of one finding score 0.55-0.90 (median 0.74), different findings up
# to 0.856 (the same metric on another table): whole texts do not separate them, so the embedding only
# merges near-identical wordings (0 false merges on the labelled set) and the claims' segment and
# metric do the rest.
SAME_FINDING_COSINE = 0.90


def _norm(text: str) -> str:
    return re.sub(r"[\s'\"`]+", "", (text or "").lower())


def _headline(i: Insight) -> Claim | None:
    return next((c for c in i.claims if c.measure != AFFECTED), None)


def finding_key(i: Insight) -> tuple | None:
    """(segment, metric, measure) of the insight's headline claim; None without one."""
    c = _headline(i)
    if c is None or not (c.segment_sql or c.segment) or not c.measure:
        return None
    return _norm(c.segment_sql or c.segment), c.metric.value, _norm(c.measure)


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SQL_WORDS = {"and", "or", "not", "in", "is", "null", "like", "ilike", "between", "true", "false", "case", "when",
              "then", "else", "end", "select", "from", "where", "cast", "as", "date", "timestamp", "interval"}


def _segment_columns(i: Insight) -> set[str]:
    """The column names the headline claim's segment condition reads (identifiers outside string literals), or
    an empty set when the insight has no structured segment."""
    c = _headline(i)
    sql = re.sub(r"'(?:[^']|'')*'", " ", (c.segment_sql or "") if c else "")
    return {w.lower() for w in _IDENT.findall(sql) if w.lower() not in _SQL_WORDS and not w[0].isdigit()}


def alike_by_text(a: Insight, b: Insight) -> bool:
    """Whether a near-identical wording may merge two insights: not when both state their segment in SQL on
    different columns. The statistical analyst words every profile from one template ("the average X peaks at 19:00
    ... by hour of the day", "... peaks in July ... by month of the year": cosine 0.90-0.93), and a union of such
    pairs folded a flights run's hour, month and day-of-week findings into one."""
    ca, cb = _segment_columns(a), _segment_columns(b)
    return not (ca and cb and not (ca & cb))


def comparisons(i: Insight) -> list[tuple]:
    """(segment, baseline, metric, measure) of each claim that compares a segment with a baseline, in order."""
    return [(_norm(c.segment_sql or c.segment), _norm(c.baseline_sql or c.baseline), c.metric.value, _norm(c.measure))
            for c in i.claims if c.measure != AFFECTED and c.measure and (c.baseline_sql or c.baseline)
            and (c.segment_sql or c.segment)]


def restates(a: Insight, b: Insight) -> bool:
    """Each insight's leading comparison is one the other also makes, or every comparison of one is one the other
    makes: the same effect, reported twice. A leading comparison shared one way only is not enough: an insight may
    cite another finding's comparison as its cause (a usage rise citing a cohort's retention jump) and still be its
    own finding, when it also makes comparisons of its own."""
    ca, cb = comparisons(a), comparisons(b)
    if not (ca and cb):
        return False
    # an insight that makes no comparison the other does not (its periods aside) adds nothing of its own: round 7's
    # "tiktok players play 7 sessions vs 16.8" beside "tiktok players churn in week 1", which made that comparison too
    return (ca[0] in cb and cb[0] in ca) or set(ca) <= set(cb) or set(cb) <= set(ca)


def subjects(i: Insight) -> list[tuple]:
    """(segment, baseline, entity) of each claim that compares a segment with a baseline, in order."""
    return [(_norm(c.segment_sql or c.segment), _norm(c.baseline_sql or c.baseline), normalize_entity(c.entity))
            for c in i.claims if c.measure != AFFECTED and (c.baseline_sql or c.baseline) and (c.segment_sql or c.segment)]


def same_subject(a: Insight, b: Insight) -> bool:
    """One area, one segment against one baseline, one entity: two outcomes of the same segment seen by one area
    ("paid-social buyers rarely come back" and "paid-social signups rarely buy") are one finding about that segment.
    Mutual, as ``restates``: each one's leading comparison has the segment, baseline and entity of one of the
    other's comparisons."""
    if a.area != b.area:
        return False
    sa, sb = subjects(a), subjects(b)
    return bool(sa and sb) and sa[0] in sb and sb[0] in sa


# ---------------------------------------------------------------------------- context, not findings

_WHOLE = {"", "1=1", "true", "(1=1)"}


def _no_difference(c: Claim) -> bool | None:
    """Does the claim, as the analyst stated it, compare two values that do not differ (within the verifier's
    no-effect margin)? None when the claim compares nothing."""
    if c.measure == AFFECTED or c.value is None:
        return None
    if c.baseline_value is not None:
        return direction(c.value, c.baseline_value) == 0
    if c.metric == MetricKind.change and (c.baseline_sql or c.baseline):
        return abs(c.value) <= NO_EFFECT  # a change stated as one relative number
    return None


def _whole(c: Claim) -> bool:
    words = (c.segment or "").strip().lower()
    return _norm(c.segment_sql) in _WHOLE and (not words or words.split()[0] in ("all", "every", "each"))


def context_reason(i: Insight) -> str | None:
    """Why an insight is context rather than a finding, or None. A non-difference: every comparison it makes is
    within the verifier's no-effect margin of its baseline ("X does not change Y", "no daily rhythm"). A fact of
    the data's shape: it compares nothing and every number is of the whole data ("every session holds one
    product", "the table has 256,570 sessions"). A data problem (rows with a defect) is a segment, not the whole,
    and stays a finding."""
    flags = [f for f in (_no_difference(c) for c in i.claims) if f is not None]
    if flags and all(flags):
        return "no difference: every comparison is within the no-effect margin of its baseline"
    stated = [c for c in i.claims if c.measure != AFFECTED and c.value is not None]
    if stated and not flags and not any(c.baseline_sql or c.baseline for c in stated) and all(map(_whole, stated)):
        return "a fact of the data's shape: no comparison, every number is of the whole data"
    return None


def split_context(insights: list[Insight]) -> tuple[list[Insight], list[Insight]]:
    """(findings, context notes): the insights that are context go to the report's notes, with their reason."""
    findings, notes = [], []
    for i in insights:
        why = context_reason(i)
        if why is None:
            findings.append(i)
        else:
            n = i.model_copy(deep=True)
            n.context_reason = why
            notes.append(n)
    return findings, notes


def insight_text(i: Insight) -> str:
    return f"{i.name}. {i.description}"


def _rank(i: Insight) -> int:
    return ORDER.index(i.validation.status) if i.validation else len(ORDER)


def merge_findings(insights: list[Insight], areas: list[AnalysisArea], embed: Callable[[list[str]], np.ndarray],
                   threshold: float = SAME_FINDING_COSINE) -> list[Insight]:
    """The insights with every finding once; merged ones are gone, the keeper lists their areas."""
    if len(insights) < 2:
        return list(insights)
    vecs = embed([insight_text(i) for i in insights])
    sims = vecs @ vecs.T
    keys = [finding_key(i) for i in insights]
    parent = list(range(len(insights)))

    def find(a: int) -> int:
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    for a in range(len(insights)):
        for b in range(a + 1, len(insights)):
            if (keys[a] is not None and keys[a] == keys[b]) \
                    or (sims[a, b] >= threshold and alike_by_text(insights[a], insights[b])) \
                    or restates(insights[a], insights[b]) or same_subject(insights[a], insights[b]):
                parent[find(b)] = find(a)
    groups: dict[int, list[int]] = {}
    for n in range(len(insights)):
        groups.setdefault(find(n), []).append(n)
    if all(len(g) == 1 for g in groups.values()):
        return list(insights)
    by_id = {a.id: a for a in areas}
    fit_areas = sorted({insights[n].area for g in groups.values() if len(g) > 1 for n in g} & set(by_id))
    fit = {}
    if fit_areas:
        from .analysis.picker import area_query

        av = embed([area_query(by_id[a]) for a in fit_areas])
        for g in groups.values():
            if len(g) > 1:
                for n in g:
                    if insights[n].area in by_id:
                        fit[n] = float(vecs[n] @ av[fit_areas.index(insights[n].area)])
    keep: dict[int, Insight] = {}
    for g in groups.values():
        if len(g) == 1:
            keep[g[0]] = insights[g[0]]
            continue
        best = min(g, key=lambda n: (-round(fit.get(n, -1.0), 6), _rank(insights[n]), n))
        k = insights[best].model_copy(deep=True)
        others = [insights[n] for n in g if n != best]
        k.also_relevant_to = list(dict.fromkeys(k.also_relevant_to + [o.area for o in others if o.area != k.area]))
        k.merged_from = list(dict.fromkeys(k.merged_from + [o.id for o in others]))
        keep[best] = k
    return [keep[n] for n in sorted(keep)]
