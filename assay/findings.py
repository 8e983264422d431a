"""One insight per finding: the same finding reported by several areas is merged.

After every area is analysed, two insights describe the same finding when their headline claims
measure the same metric on the same segment, when each one's leading comparison (segment against baseline)
is one the other also makes, or when their texts are closer than
``SAME_FINDING_COSINE`` (measured by ``bench/findings.py``). An insight that leads with another's
baseline (``restates_baseline``), or a segment's level that the refuter found confined to the later half beside
that segment's change (``level_of_its_change``), folds into that one. A group keeps the insight of the area
that fits it best (its text against the area's description), never one that only restated a baseline;
the others' areas are listed in ``also_relevant_to``. Pure: the same insights in, the same insights out.
"""

from __future__ import annotations

import re
from typing import Callable, Iterable

import numpy as np

from .models import AnalysisArea, Claim, Insight, MetricKind, Severity, ValidationStatus
from .validate.compare import AFFECTED, NO_EFFECT, ORDER, direction
from .validate.conditions import condition_columns
from .validate.entity import normalize_entity
from .validate.grounding import DATE_TEXT, PROSE_NUMBER, close
from .validate.refute import holds_later_only

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


def _segment_columns(i: Insight) -> set[str]:
    """The column names the headline claim's segment condition reads, or an empty set when the insight has no
    structured segment."""
    c = _headline(i)
    return condition_columns(c.segment_sql) if c else set()


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


_SAME_KIND = {MetricKind.rate.value: "fraction", MetricKind.share.value: "fraction"}


def _kind(c: Claim) -> str:
    return _SAME_KIND.get(c.metric.value, c.metric.value)


def restates_baseline(a: Insight, b: Insight) -> bool:
    """``a`` leads with a number that is one of ``b``'s baselines: its headline claim compares nothing, and its
    segment, period and value are the baseline, period and baseline value of a comparison ``b`` makes (a rate and a
    share are one kind of number). Round 7 (gaming): "week-1 churners: 2,958 non-tiktok players (22.5%) gone by
    day 6" beside "tiktok players churn in week 1: 71% vs 22.5% for the other channels". Directed: ``a`` adds ``b``'s
    reference point, not a finding of its own, and is folded into ``b`` (never the other way round)."""
    h = _headline(a)
    if h is None or h.value is None or h.baseline_sql or h.baseline:
        return False
    seg_sql, seg_words = _norm(h.segment_sql), _norm(h.segment)
    for c in b.claims:
        if c.measure == AFFECTED or c.baseline_value is None or _kind(c) != _kind(h):
            continue
        if seg_sql and c.baseline_sql:
            same_segment = seg_sql == _norm(c.baseline_sql)
        else:
            same_segment = bool(seg_words) and seg_words == _norm(c.baseline)
        if not same_segment:
            continue
        if h.period_sql and c.period_sql and _norm(h.period_sql) != _norm(c.period_sql):
            continue
        if close(h.value, c.baseline_value) or close(c.baseline_value, h.value):
            return True
    return False


def _outcome(measure: str | None) -> str:
    """What a rate counts: "purchase per add_to_cart (monthly rate)", "purchase per add_to_cart" and "purchase
    rate" all count purchases; "failed rate" and "failed per succeeded" failures. Any other measure is itself."""
    m = re.sub(r"\([^)]*\)", "", measure or "").strip().lower()
    hit = re.match(r"^(\w+) (?:per \w+|rate)$", m)
    return _norm(hit.group(1) if hit else m)


def _conjuncts(condition: str | None) -> frozenset[str] | None:
    """The condition's AND-ed parts, each normalised; None when there is none or it does not parse."""
    import sqlglot
    from sqlglot import exp

    if not (condition or "").strip():
        return None
    try:
        where = sqlglot.parse_one(f"SELECT 1 WHERE {condition}").args.get("where")
    except Exception:  # noqa: BLE001 - a condition in words: no structure to compare
        return None
    if where is None:
        return None
    parts = list(where.this.flatten()) if isinstance(where.this, exp.And) else [where.this]
    return frozenset(_norm(p.sql()) for p in parts)


def _bounds_time(part: str) -> bool:
    """A normalised conjunct that compares with a date or timestamp (``month>=TIMESTAMP'2026-07-01'``)."""
    return bool(re.search(r"(<|>)=?", part)) and bool(DATE_TEXT.search(part))


def _change_segment(c: Claim) -> frozenset[str] | None:
    """The segment a change is of: the conditions its segment and baseline share, when all they differ by is the
    split in time (``platform = 'android' AND month >= '2026-07-01'`` against ``... AND month < '2026-07-01'``: the
    segment is android). None for a change of another shape (a cohort against another cohort)."""
    seg, base = _conjuncts(c.segment_sql), _conjuncts(c.baseline_sql)
    if not seg or not base:
        return None
    common = seg & base
    if not common or not all(_bounds_time(p) for p in (seg ^ base)):
        return None
    return common


_BACKED = {ValidationStatus.confirmed: 3, ValidationStatus.adjusted: 2, ValidationStatus.not_verifiable: 1}


def _backed(i: Insight) -> int:
    """How far the warehouse backed the insight: confirmed 3, adjusted 2, not verifiable (or not yet) 1, else 0."""
    return _BACKED.get(i.validation.status, 0) if i.validation is not None else 1


def _sign(v: float | None, base: float | None) -> int:
    return 0 if v is None or base is None or v == base else (1 if v > base else -1)


def level_of_its_change(a: Insight, b: Insight) -> bool:
    """``a`` states a segment's level against a baseline, and the refuter found its comparison holds in the later
    half of the period only; ``b`` states that segment's change over time, in the same direction, of a rate of the
    same outcome (``_outcome``), and is verified at least as well: ``a`` is ``b``'s change seen over the whole period,
    not a finding of its own. The ecommerce demo: "android events have a much lower rate of purchase per add_to_cart
    (... holds in the second half only)" beside "the rate of purchase per add_to_cart for android fell from
    2026-07-01", two insights about one drop; the gaming demo's iOS "failed rate" beside its "failed per succeeded"
    rising. Directed: ``a`` folds into ``b``."""
    ha, hb = _headline(a), _headline(b)
    if ha is None or hb is None or not holds_later_only(ha.refutation):
        return False
    if hb.metric != MetricKind.change or ha.metric not in (MetricKind.rate, MetricKind.share) or ha.period_sql:
        return False
    if not _outcome(ha.measure) or _outcome(ha.measure) != _outcome(hb.measure):
        return False
    level_dir, change_dir = _sign(ha.value, ha.baseline_value), _sign(hb.value, hb.baseline_value)
    if level_dir == 0 or level_dir != change_dir:  # lower than the others, and fell (or higher, and rose)
        return False
    if _backed(b) < _backed(a):  # a confirmed level never hides behind a change the warehouse did not back
        return False
    sa, sb = _conjuncts(ha.segment_sql), _change_segment(hb)
    return bool(sa) and sa == sb


# ---------------------------------------------------------------------------- context, not findings

_WHOLE = {"", "1=1", "true", "(1=1)"}


def _no_difference(c: Claim) -> bool | None:
    """Does the claim, as the analyst stated it, compare two values that do not differ (within the verifier's
    no-effect margin)? None when the claim compares nothing."""
    if c.measure == AFFECTED or c.value is None:
        return None
    if c.baseline_value is not None:
        if c.metric == MetricKind.fit:  # two fits: the verifier's margin for them (0.05 for r and R²)
            from .validate.fit import _apart, statistic_of

            return _apart(statistic_of(c), c.value, c.baseline_value) == 0
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
    compares = flags or any(c.baseline_sql or c.baseline for c in stated)
    # a fit over the whole data (R² of closed_at on opened_at) states a relation, not the data's size or mix
    if stated and not compares and all(map(_whole, stated)) and not any(c.metric == MetricKind.fit for c in stated):
        return "a fact of the data's shape: no comparison, every number is of the whole data"
    if stated and not compares and any(c.metric == MetricKind.count and c.value == 0 for c in stated):
        # round 7 (gaming): "no player is active past day 120": 0 players, no baseline; the model itself called it
        # a caveat. What the data does not hold is a limit of what it can show, not an effect.
        return "a limit of the data: no comparison, and it counts rows the data does not hold (a count of 0)"
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
    # an insight leading with another's baseline folds, with the insights it merged with, into that other one's
    # finding, which keeps its headline: the group that restates a baseline never provides the keeper
    folded: set[int] = set()
    for a in range(len(insights)):
        for b in range(len(insights)):
            if a != b and find(a) != find(b) and (restates_baseline(insights[a], insights[b])
                                                  or level_of_its_change(insights[a], insights[b])):
                ga = find(a)
                folded.update(n for n in range(len(insights)) if find(n) == ga)
                parent[ga] = find(b)
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
        lead = [n for n in g if n not in folded] or g
        best = min(lead, key=lambda n: (-round(fit.get(n, -1.0), 6), _rank(insights[n]), n))
        k = insights[best].model_copy(deep=True)
        others = [insights[n] for n in g if n != best]
        # one finding, as severe as any area (or the folded level of its change) judged it
        k.severity = min([k.severity] + [o.severity for o in others], key=list(Severity).index)
        k.also_relevant_to = list(dict.fromkeys(k.also_relevant_to + [o.area for o in others if o.area != k.area]))
        k.merged_from = list(dict.fromkeys(k.merged_from + [o.id for o in others]))
        k.leads = list(dict.fromkeys(k.leads + [h for o in others for h in o.leads]))
        keep[best] = k
    return [keep[n] for n in sorted(keep)]


# ---------------------------------------------------------------------------- the scan's leads no insight covers

# all-MiniLM-L6-v2 cosine of a lead's headline and an insight's headline or text at or above which the insight covers
# the lead. Measured on round 7's replayed runs (15 leads, session 10; a small set): the 14 leads a reader sees taken
# up scored 0.48-0.86 against their insight (the concentration lead "top 5% of player_id bring 68.8%" the lowest), the
# one not taken up (cross_promo's revenue rise) 0.33; a lead naming its segment ("country = BR") is decided by the name.
LEAD_COVERED_COSINE = 0.45
# ... and it states one of the numbers of the lead's headline (within rounding): close in meaning is not enough. Round
# 10, gaming: "412 rows of sessions end before they start" scored 0.56 against "Sessions after day 7 contain no level
# attempts: 0 of 284,654", another data problem, and the planted one went unreported; ecommerce: the concentration
# lead "Top 1% of customer_id (241) bring 13.4%" stays covered by the insight whose text says "the top 1% of 24,093
# buyers hold 13.39% of revenue" (the model's own judgement: moderate, context for another finding)
# round 7's and round 10's gaming concentration: the scan's "top 5% of player_id (89) bring 68.8%" and the model's
# "85 payers (top 5%) bring 68.1%", the same finding on another cut of the payers (4.5% and 1.0% apart)
SAME_FIGURE = 0.05
_SEGMENT = re.compile(r"\b[A-Za-z_][\w.]* ?= ?'?([^\s,;()'=]+)'?")
_LEAD_HEAD = re.compile(r"^\s*(\S+)")


def lead_segments(lead: str) -> list[str]:
    """The segment values a lead names: "platform = ios" in its numbers, or a statistical insight's segment
    "platform=ios" ("ios")."""
    values = (v.rstrip(".:") for v in _SEGMENT.findall(lead))
    return list(dict.fromkeys(v for v in values if re.search(r"[A-Za-z]", v)))  # not "z = -6.5", "n = 154,148"


def fold(text: str) -> str:
    """Separators folded: 'paid_social', 'paid-social' and 'paid social' name the same segment; so are quotes, so
    that a segment written as a condition ("country = 'BR'") names its value as "country = BR" does."""
    return re.sub(r"[\s_\-'\"`]+", " ", (text or "").lower())


def names_value(value: str, folded_text: str) -> bool:
    """The value as whole words of the (folded) text: 'ios' is not in 'ratios', 'br' not in 'brand'."""
    v = fold(value).strip()
    return bool(v) and re.search(rf"(?<![a-z0-9]){re.escape(v)}(?![a-z0-9])", folded_text) is not None


def stated_numbers(text: str) -> list[float]:
    """The numbers a text states, as values: "13.4%" as 0.134 (and 13.4), "1,127" as 1127. Left out: dates and
    years (a count from 1900 to 2100 written without a thousands comma is read as a year), and whole numbers below
    10 (ranks, "top 5", "3 of them": too common to tie two texts together); "1,2,3" is a list, not 123."""
    out: list[float] = []
    for m in PROSE_NUMBER.finditer(DATE_TEXT.sub(" ", text or "")):
        t = m.group(0)
        pct = t.endswith("%")
        try:
            v = float(t.rstrip("%").replace(",", ""))
        except ValueError:
            continue
        if v.is_integer() and (abs(v) < 10 or (1900 <= v <= 2100 and "," not in t and not pct)):
            continue
        out += [v / 100, v] if pct else [v]
    return out


def shares_a_number(lead: str, insight: Insight) -> bool:
    """The insight states one of the numbers of the lead's headline (its own figures, not the totals its numbers
    quote for context, which every finding of the warehouse shares), within SAME_FIGURE (the same figure computed on
    a slightly other cut), in its text or as a claim's value. A headline with no number: True (its
    meaning decides alone)."""
    mine = stated_numbers(lead.split(": ", 1)[0])
    if not mine:
        return True
    theirs = stated_numbers(f"{insight.name} {insight.description}")
    theirs += [v for c in insight.claims for v in (c.value, c.baseline_value) if v is not None]
    return any(abs(a - b) <= SAME_FIGURE * max(abs(a), abs(b)) for a in mine for b in theirs)


def _claim_sql(i: Insight) -> str:
    return " ".join(f"{c.sum_sql} {c.segment_sql} {c.baseline_sql} {c.whole_sql} {c.y_sql} {c.x_sql} "
                    f"{c.verification_sql or ''}" for c in i.claims)


def measures_the_same(lead: str, insight: Insight, columns: set[str]) -> bool:
    """The insight's claims read every column of the warehouse that the lead's headline names (the scan writes
    its columns as they are: "Top 5% of player_id bring 66.0% of price_usd"), in their SQL. Round 21, gaming: the
    model's "Revenue is concentrated in a few whales" summed ``pu.price_usd`` by ``player_id`` and stated 64.9%
    for the top 5%; the scan's lead scored 0.41 against it in meaning (its words are column names) and was adopted
    beside it."""
    head = lead.split(": ", 1)[0].lower()
    named = {c for c in columns if re.search(rf"(?<![a-z0-9_]){re.escape(c)}(?![a-z0-9_])", head)}
    if not named:
        return False
    sql = _claim_sql(insight).lower()
    return all(re.search(rf"(?<![a-z0-9_]){re.escape(c)}(?![a-z0-9_])", sql) for c in named)


_LINKS = {"has", "have", "is", "are", "and"}


def _words(text: str) -> set[str]:
    return set(fold(text).replace(",", " ").split()) - _LINKS


def lists_lead(lead: str, listed: Iterable[str]) -> bool:
    """Is the lead ("headline: numbers", as ``explore.leads.headlines`` or ``run.adopt.lead_line`` writes one) among
    the listed headlines (``Insight.leads``, whole)? Its line starts with one of them; or its headline's words are all
    in one of them: the scan merges segments apart in one direction across the warehouse ("furniture and
    electronics have a much higher average unit_price ..."), the adoption per area ("furniture has ..."), and
    the listed merged lead covers each of its members."""
    line = fold(lead).strip()
    # a member's headline is read only where the line holds one ": " (else where its headline ends is unknown)
    head = _words(lead.split(": ", 1)[0]) if lead.count(": ") == 1 else set()
    for h in listed:
        fh = fold(h).strip()
        if fh and (line == fh or line.startswith(fh + ":")):
            return True
        # a merged lead names its segments "a, b and c have ..." (stats.analyst.merge_segment_outliers)
        if head and " and " in fh and " have " in fh and head <= _words(h):
            return True
    return False


def uncovered_leads(leads: list[str], reported: list[Insight], embed: Callable[[list[str]], np.ndarray],
                    threshold: float = LEAD_COVERED_COSINE, *, columns: Iterable[str] = ()) -> list[str]:
    """The leads of the statistical scan (``explore.leads.headlines``) that no reported insight or context note
    covers: none lists it among the leads it reports (``Insight.leads``), none names the lead's segment, none is
    close to it in meaning while stating one of the numbers of its headline, and none measures the columns its
    headline names (``columns``: the warehouse's column names) while stating one of those numbers. The report lists
    them, so that a statistically flagged candidate the analysis did not take up is not lost (issue #15, item 4)."""
    if not leads:
        return []
    # the leads an insight says it reports (the analysis prompt's "leads": the model's own judgement, whatever its
    # words and figures; round 21, gaming: "So the revenue growth and the higher average price come mostly from a
    # small group of heavy coins_large buyers" explained the scan's two leads with figures of its own window, and
    # both were adopted beside it)
    # ... by an insight the warehouse did not reject (a rejected one's figures are wrong: its say covers nothing)
    listed = [h for i in reported for h in i.leads
              if not (i.validation and i.validation.status == ValidationStatus.rejected)]
    if listed:
        leads = [lead for lead in leads if not lists_lead(lead, listed)]
    cols = {c.lower() for c in columns if len(c) > 2 and "_" in c}  # "price_usd", "player_id": not "level"
    if cols:
        leads = [lead for lead in leads  # a figure of its own in the headline: a column read is not enough alone
                 if not (stated_numbers(lead.split(": ", 1)[0])
                         and any(measures_the_same(lead, i, cols) and shares_a_number(lead, i) for i in reported))]
    texts = [fold(f"{i.name} {i.description} {i.segment or ''} " + " ".join(c.segment for c in i.claims))
             for i in reported]
    left = []
    for lead in leads:
        segs = lead_segments(lead)
        if segs and any(all(names_value(v, t) for v in segs) for t in texts):
            continue
        left.append(lead)
    if not left or not reported:
        return left
    lv = embed([lead.split(": ", 1)[0] for lead in left])
    iv = embed([insight_text(i) for i in reported] + [i.name for i in reported])
    n = len(reported)
    out = []
    for lead, row in zip(left, lv @ iv.T):
        near = {int(j) % n for j in np.flatnonzero(row >= threshold)}
        if not any(shares_a_number(lead, reported[j]) for j in near):
            out.append(lead)
    return out
