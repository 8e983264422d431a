"""The refuter: after a comparison is confirmed, look for the strongest counter-evidence the data offers.

A claim that a segment differs from its baseline (a rate, share, average or change) can be true in total
and still mislead: the difference may come from the mix of another dimension (within each of its levels
the difference vanishes, or reverses: Simpson's paradox), or hold in one period only. The refuter asks the
warehouse, with its own guarded queries, and records what it found beside the verdict:
``survives refutation``, or ``but <one sentence of counter-evidence>``.

Its queries are the claim's own verification query, stratified: the same SELECT (same FROM, joins,
filters and aggregates) grouped by one more column, with the number of segment and baseline rows per
level. Candidate strata are the other low-cardinality columns of the tables the query reads (never the
ones its segment, baseline, measure or filters are defined by, never keys) and the two halves of the
query's time span.
The statistical analyst's claims are computed over its probe's result (the probe's SQL as a derived table
``p``); their strata come from the probe itself: the probe grouped by one more column of its tables, the
level carried through the claim's query, and each side's rows per level counted from the probe's own count
column (the rate's denominator when the claim divides by one), so the effect is tested within each level of
the other dimensions exactly as the detector measured it.
Everything is judged by code: per level, segment against baseline; pooled across levels with weights
that favour levels where both sides are well represented (the harmonic mean of their sizes, as a
Mantel-Haenszel difference weights them). No LLM is involved, so the statistical analyst's claims and the
LLM analyst's get the same treatment.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from dataclasses import dataclass, field

import sqlglot
from sqlglot import exp

from ..models import Claim, MetricKind, TableInfo, ValidationStatus

MIN_LEVEL_ROWS = 10        # a level counts only when both sides have at least this many rows
SMALL_SEGMENT = 30         # fewer segment rows than this: a small-sample caveat
MAX_LEVELS = 12            # a stratum column with more levels is not a mix dimension
MIN_LEVELS = 2
MAX_CANDIDATES = 6         # stratum columns tried per claim (lowest cardinality first)
VANISH = 0.25              # pooled within-level difference below this share of the total: it vanishes
SHARED = 0.5              # the rest changed by at least this share of the segment's change: not specific
PERIOD_SHARE = 1 / 3       # one half's difference below this share of the other's: confined to a period
LATER_ONLY = "but it holds in the second half of the period only"  # how a gap confined to the later half starts
# how the counter-evidence that undermines a comparison starts (the mix of another column explains it, a small
# sample, a change every value shared); a gap confined to one half of the period is a fact about the finding, not
# against it
MIX_START = "but within each"
SMALL_START = "but it rests on only"
SHARED_START = "but the other values changed as much"
WEAKENING_STARTS = (MIX_START, SMALL_START, SHARED_START)
WEAKENED_SEVERITY = "medium"  # the most an insight whose comparison was undermined is (severity)


def holds_later_only(refutation: str | None) -> bool:
    """The refuter found the comparison confined to the second half of the time span (a change, seen whole)."""
    return (refutation or "").startswith(LATER_ONLY)
Z_SIGNIFICANT = 3.0        # standard errors a mix departure must exceed (proportions; up to 6 columns are tried)
Z_PERIOD = 2.5             # standard errors between the halves' differences (proportions; one test per claim)
COMPARISONS = (MetricKind.rate, MetricKind.share, MetricKind.average, MetricKind.change)

_KEYISH = re.compile(r"(^id$|_id$|_key$|key$|^uuid|_uuid$|_at$|_ts$|_date$|^date$|email|name$|phone|address)",
                     re.I)
_CATEGORICAL = ("char", "text", "string", "bool", "enum", "varchar")
_TEMPORAL = ("date", "time")


@dataclass
class Stratum:
    level: str
    segment: float | None
    baseline: float | None
    n_segment: int
    n_baseline: int


@dataclass
class Refutation:
    outcome: str                       # survives | reverses | vanishes | period | small_sample | shared | skipped
    text: str                          # "survives refutation" | "but ..." | why it was skipped
    dimension: str = ""
    sql: str = ""
    strata: list[Stratum] = field(default_factory=list)

    @property
    def caveat(self) -> bool:
        return self.outcome in ("reverses", "vanishes", "period", "small_sample", "shared")


def _num(v) -> float | None:
    if v is None or isinstance(v, bool):
        return None
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def _fmt(x: float | None, kind: MetricKind) -> str:
    if x is None:
        return "n/a"
    if kind in (MetricKind.rate, MetricKind.share) and abs(x) <= 1:
        return f"{x:.1%}"
    return f"{x:,.0f}" if abs(x) >= 100 else f"{x:.3g}"


def _difference(x: float | None, kind: MetricKind, scale: float | None = None) -> str:
    """A segment-minus-baseline difference, signed, in the measure's units (points for a proportion). Against
    ``scale`` (the total difference it is weighed with), a difference a millionth of it is float noise: 0 (a new
    user read "-1.2e-14 within its levels against +1.49 in total")."""
    if x is None:
        return ""
    if scale and abs(x) < 1e-6 * abs(scale):
        return "0"
    if kind in (MetricKind.rate, MetricKind.share) and abs(x) <= 1:
        return f"{x * 100:+.1f} points"
    return f"{x:+,.0f}" if abs(x) >= 100 else f"{x:+.3g}"


def overall_of(claim: Claim) -> float | None:
    """The claim's segment-minus-baseline difference, the warehouse's values where it gave them."""
    seg = claim.verified_value if claim.verified_value is not None else claim.value
    base = claim.verified_baseline_value if claim.verified_baseline_value is not None else claim.baseline_value
    return None if seg is None or base is None else seg - base


def _variance(s: Stratum) -> float | None:
    """The sampling variance of a level's segment-minus-baseline difference when both are proportions
    (rates, shares); None for other measures (an average's spread is not in the result)."""
    if s.segment is None or s.baseline is None or not (0 <= s.segment <= 1 and 0 <= s.baseline <= 1):
        return None
    if s.n_segment <= 0 or s.n_baseline <= 0:
        return None
    return s.segment * (1 - s.segment) / s.n_segment + s.baseline * (1 - s.baseline) / s.n_baseline


def _usable(strata: list[Stratum]) -> list[Stratum]:
    return [s for s in strata if s.segment is not None and s.baseline is not None
            and s.n_segment >= MIN_LEVEL_ROWS and s.n_baseline >= MIN_LEVEL_ROWS]


def pooled_difference(strata: list[Stratum]) -> tuple[float | None, float | None]:
    """The segment-minus-baseline difference within levels, pooled; and its standard error when the
    values are proportions (else None)."""
    num = den = var = 0.0
    proportions = True
    for s in _usable(strata):
        w = 2 * s.n_segment * s.n_baseline / (s.n_segment + s.n_baseline)
        num += w * (s.segment - s.baseline)
        den += w
        v = _variance(s)
        if v is None:
            proportions = False
        else:
            var += w * w * v
    if not den:
        return None, None
    return num / den, (math.sqrt(var) / den if proportions else None)


def judge_strata(overall: float, strata: list[Stratum]) -> str:
    """survives | reverses | vanishes | unknown (no level has both sides). For proportions the departure
    from the total must also be beyond sampling noise (Z_SIGNIFICANT standard errors)."""
    pooled, se = pooled_difference(strata)
    if pooled is None or overall == 0:
        return "unknown"
    if se is not None and abs(overall - pooled) < Z_SIGNIFICANT * se:
        return "survives"
    if pooled * overall < 0 and abs(pooled) >= VANISH * abs(overall):
        return "reverses"
    if abs(pooled) < VANISH * abs(overall):
        return "vanishes"
    return "survives"


# ---------------------------------------------------------------------------- SQL

def _outer_select(sql: str, dialect: str) -> exp.Select | None:
    try:
        tree = sqlglot.parse_one(sql, read=dialect)
    except Exception:  # noqa: BLE001 - odd input raises other types too (the compiled parser a TypeError)
        return None
    if not isinstance(tree, exp.Select):
        return None
    if tree.args.get("group") or tree.args.get("distinct") or tree.find(exp.Window):
        return None
    projections = tree.expressions
    if not projections or not any(p.find(exp.AggFunc) for p in projections):
        return None
    if any(p.find(exp.Subquery) for p in projections):  # scalar subqueries per side: not stratifiable
        return None
    return tree


def _sources(sel: exp.Select) -> list[tuple[str, str]]:
    """(alias or name, table name) of the base tables the outer SELECT reads directly."""
    out = []
    nodes = [sel.args.get("from_") or sel.args.get("from")] + list(sel.args.get("joins") or [])
    for node in nodes:
        if node is None:
            continue
        t = node.this if not isinstance(node, exp.Table) else node
        if isinstance(t, exp.Table):
            out.append((t.alias_or_name, t.name))
    return out


def _condition(text: str, dialect: str) -> exp.Expression | None:
    if not text or not text.strip():
        return None
    try:
        return sqlglot.parse_one(text, read=dialect)
    except Exception:  # noqa: BLE001 - odd input raises other types too (the compiled parser a TypeError)
        return None


def _columns_in(*nodes: exp.Expression | None) -> set[str]:
    return {c.name.lower() for n in nodes if n is not None for c in n.find_all(exp.Column)}


def _with_counts(sel: exp.Select, seg: exp.Expression, base: exp.Expression | None) -> exp.Select:
    q = sel.copy()
    n_seg = exp.Count(this=exp.Case(ifs=[exp.If(this=seg.copy(), true=exp.Literal.number(1))]))
    base_cond = base.copy() if base is not None else exp.Not(this=exp.Paren(this=seg.copy()))
    n_base = exp.Count(this=exp.Case(ifs=[exp.If(this=base_cond, true=exp.Literal.number(1))]))
    return q.select(exp.alias_(n_seg, "refute_n_segment"), exp.alias_(n_base, "refute_n_baseline"), copy=False)


def _stratified(sel: exp.Select, stratum: exp.Expression, seg, base, dialect: str) -> str:
    q = _with_counts(sel, seg, base)
    q = q.select(exp.alias_(stratum.copy(), "refute_level"), copy=False)
    q.set("order", None)
    q.set("limit", None)
    if isinstance(stratum, exp.Literal):  # one level, the whole: PostgreSQL refuses GROUP BY 'all' (red team 7)
        return q.sql(dialect=dialect)
    return q.group_by(stratum.copy(), copy=False).sql(dialect=dialect)


def _values(row: dict, skip: set[str]) -> tuple[float | None, float | None]:
    low = {k.lower(): v for k, v in row.items()}
    if "segment_value" in low:
        return _num(low["segment_value"]), _num(low.get("baseline_value"))
    nums = [_num(v) for k, v in low.items() if k not in skip]
    nums = [v for v in nums if v is not None]
    return (nums[0] if nums else None), (nums[1] if len(nums) > 1 else None)


_SKIP = {"refute_level", "refute_n_segment", "refute_n_baseline"}


def _is_total(sel: exp.Select) -> bool:
    """The compared values are totals (sums, counts), not ratios or averages."""
    named = {e.alias_or_name.lower(): e for e in sel.expressions}
    target = named.get("segment_value") or sel.expressions[0]
    return not (target.find(exp.Div) or target.find(exp.Avg) or target.find(exp.Median)
                or target.find(exp.Quantile) or target.find(exp.PercentileCont))


def _defines_measure(strata: list[Stratum]) -> bool:
    """A column with a level where the measure is zero on both sides (moves left when a level was lost, a
    failure rate within the succeeded), or a proportion at its other bound, 100% on both sides (a closure
    rate within the rows that name who closed them): the column is part of the measure's definition, not a
    mix."""
    usable = _usable(strata)
    proportions = all(_variance(s) is not None for s in usable)
    return any(s.segment == s.baseline and (s.segment == 0 or (proportions and s.segment == 1)) for s in usable)


class Refuter:
    """Counter-evidence for confirmed comparisons, through the guarded executor."""

    def __init__(self, executor, tables: list[TableInfo]):
        self.executor = executor
        self.dialect = executor.warehouse.dialect
        self.tables = {t.name.lower(): t for t in tables}
        self.queries = 0

    def _run(self, sql: str):
        self.queries += 1
        out = self.executor.run(sql, fix=False, purpose="refute")
        if out.refused or out.error or out.result is None:
            return None
        return out.result.table.to_pylist()

    def _strata(self, sql: str) -> list[Stratum] | None:
        rows = self._run(sql)
        if rows is None:
            return None
        out = []
        for r in rows:
            seg, base = _values(r, _SKIP)
            out.append(Stratum(str(r.get("refute_level")), seg, base, int(r.get("refute_n_segment") or 0),
                               int(r.get("refute_n_baseline") or 0)))
        return out

    def _candidates(self, sel: exp.Select, exclude: set[str]) -> tuple[list[tuple[str, exp.Column]],
                                                                      list[exp.Column]]:
        cats, times = [], []
        for alias, name in _sources(sel):
            t = self.tables.get(name.lower())
            if t is None:
                continue
            for c in t.columns:
                low, typ = c.name.lower(), c.type.lower()
                col = exp.column(c.name, table=alias, quoted=True)
                if low in exclude:
                    continue
                if any(k in typ for k in _TEMPORAL) and "interval" not in typ:
                    times.append(col)
                elif any(k in typ for k in _CATEGORICAL) and not _KEYISH.search(low):
                    cats.append((f"{c.name}", col))
        return cats, times

    def _levels(self, sel: exp.Select, cats: list[tuple[str, exp.Column]]) -> dict[str, int]:
        if not cats:
            return {}
        q = sel.copy()
        q.set("expressions", [exp.alias_(exp.Count(this=exp.Distinct(expressions=[col.copy()])), f"c{i}")
                              for i, (_, col) in enumerate(cats)])
        q.set("order", None)
        q.set("limit", None)
        rows = self._run(q.sql(dialect=self.dialect))
        if not rows:
            return {}
        return {name: int(rows[0].get(f"c{i}") or 0) for i, (name, _) in enumerate(cats)}

    def refute(self, claim: Claim) -> Refutation:
        if claim.metric not in COMPARISONS:
            return Refutation("skipped", "not a comparison")
        if claim.verdict not in (ValidationStatus.confirmed, ValidationStatus.adjusted):
            return Refutation("skipped", "not confirmed")
        seg_v = claim.verified_value if claim.verified_value is not None else claim.value
        base_v = claim.verified_baseline_value if claim.verified_baseline_value is not None else claim.baseline_value
        if seg_v is None or base_v is None or not claim.query:
            return Refutation("skipped", "no baseline to compare with")
        overall = seg_v - base_v
        if overall == 0:
            return Refutation("skipped", "no difference to refute")
        if claim.verification_sql:
            tree = _parse(claim.query, self.dialect)
            probe = _probe_of(tree) if tree is not None else None
            if probe is not None:
                return self._refute_probe(claim, tree, probe, overall)
        sel = _outer_select(claim.query, self.dialect)
        seg = _condition(claim.segment_sql, self.dialect)
        if sel is None or seg is None:
            return Refutation("skipped", "the verification query cannot be stratified")
        base = _condition(claim.baseline_sql, self.dialect)
        # support of the segment
        if _is_total(sel):
            # a total (a sum, a count) adds up over the levels of any column: a mix of levels cannot explain it
            # away, and a change of a total between periods is not a comparison within one period
            return Refutation("skipped", "a total, not a rate or an average: no mix to test")
        counted = self._strata(_stratified(sel, exp.Literal.string("all"), seg, base, self.dialect))
        if counted and counted[0].n_segment == 0:
            return Refutation("skipped", "the segment has no rows (a claim of absence)")
        if counted and counted[0].n_segment < SMALL_SEGMENT:
            n = counted[0].n_segment
            return Refutation("small_sample", f"{SMALL_START} {n} row{'s' if n != 1 else ''} in the "
                                              "segment: a small sample")
        # never stratify by a column the measure or the filters are defined by: within each status, a failure
        # rate is 0% or 100%, which says nothing about the segment
        exclude = _columns_in(seg, base, _condition(claim.period_sql, self.dialect), sel.args.get("where"),
                              *sel.expressions)
        cats, times = self._candidates(sel, exclude)
        levels = self._levels(sel, cats)
        usable = sorted((n, name, col) for (name, col) in cats if MIN_LEVELS <= (n := levels.get(name, 0)) <= MAX_LEVELS)
        worst: Refutation | None = None
        worst_attenuation = -1.0
        tested = 0  # strata tests that had levels with both sides: "survives" means nothing without one
        for _, name, col in usable[:MAX_CANDIDATES]:
            sql = _stratified(sel, col, seg, base, self.dialect)
            strata = self._strata(sql)
            if not strata:
                continue
            if _defines_measure(strata):
                continue
            verdict = judge_strata(overall, strata)
            tested += verdict != "unknown"
            pooled, _ = pooled_difference(strata)
            if pooled is None:
                continue
            attenuation = 1 - pooled / overall
            if verdict in ("reverses", "vanishes") and attenuation > worst_attenuation:
                worst_attenuation = attenuation
                worst = Refutation(verdict, self._mix_text(claim, name, verdict, strata), name, sql, strata)
        if worst is not None:
            return worst
        for col in times[:1]:
            period, ran = self._period(sel, col, claim, overall,
                                       lambda half: self._stratified_strata(sel, half, seg, base))
            tested += ran
            if period is not None:
                return period
        if not tested:
            return Refutation("skipped", "no other column or period to test the comparison within")
        return Refutation("survives", "survives refutation")

    def _probe_strata(self, ps: _ProbeStrata, stratum: exp.Expression) -> tuple[list[Stratum] | None, str]:
        sql = ps.values_sql(stratum)
        if sql is None:
            return None, ""
        values, counts = self._run(sql), self._run(ps.counts_sql(stratum))
        if values is None or counts is None:
            return None, sql
        n = {str(r.get("refute_level")): r for r in counts}
        out = []
        for r in values:
            lvl = str(r.get("refute_level"))
            seg, base = _values(r, _SKIP)
            c = n.get(lvl, {})
            out.append(Stratum(lvl, seg, base, int(_num(c.get("refute_n_segment")) or 0),
                               int(_num(c.get("refute_n_baseline")) or 0)))
        return out, sql

    def _refute_probe(self, claim: Claim, tree: exp.Expression, probe: exp.Subquery, overall: float) -> Refutation:
        """A statistical claim: its probe re-run within each level of another column of the probe's tables."""
        if _probe_total(tree, probe):
            return Refutation("skipped", "a total, not a rate or an average: no mix to test")
        ps = _ProbeStrata(claim, tree, probe, self.dialect)
        if ps.count_col is None or ps.seg is None:
            return Refutation("skipped", "the probe has no row count to weigh its levels with")
        counted, _ = self._probe_strata(ps, exp.Literal.string("all"))
        if counted is None:
            return Refutation("skipped", "the probe cannot be stratified")
        if counted and sum(s.n_segment for s in counted) < SMALL_SEGMENT:
            n = sum(s.n_segment for s in counted)
            return Refutation("small_sample", f"{SMALL_START} {n} row{'s' if n != 1 else ''} in the "
                                              "segment: a small sample")
        base_sel = ps.levels_select()
        exclude = _columns_in(ps.seg, ps.base, *probe.this.expressions, probe.this.args.get("where"),
                              probe.this.args.get("group"), probe.this.args.get("having"))
        for j in probe.this.args.get("joins") or []:
            exclude |= _columns_in(j.args.get("on"))
        cats, _ = self._candidates(base_sel, exclude)
        seen: set[str] = set()
        cats = [(n, c) for n, c in cats if not (n.lower() in seen or seen.add(n.lower()))]  # one per column name
        levels = self._levels(base_sel, cats)
        usable = sorted((n, name, col) for (name, col) in cats if MIN_LEVELS <= (n := levels.get(name, 0)) <= MAX_LEVELS)
        worst: Refutation | None = None
        worst_attenuation = -1.0
        tested = 0
        for _, name, col in usable[:MAX_CANDIDATES]:
            strata, sql = self._probe_strata(ps, col)
            if not strata or _defines_measure(strata):
                continue
            verdict = judge_strata(overall, strata)
            tested += verdict != "unknown"
            pooled, _ = pooled_difference(strata)
            if pooled is None:
                continue
            attenuation = 1 - pooled / overall
            if verdict in ("reverses", "vanishes") and attenuation > worst_attenuation:
                worst_attenuation = attenuation
                worst = Refutation(verdict, self._mix_text(claim, name, verdict, strata), name, sql, strata)
        if worst is not None:
            return worst
        if claim.metric == MetricKind.change:
            shared, ran = self._shared_change(claim, tree, probe, ps)
            tested += ran
            if shared is not None:
                return shared
        else:  # a change is a comparison of periods already
            _, times = self._candidates(base_sel, exclude)
            for col in times[:1]:
                period, ran = self._period(base_sel, col, claim, overall, lambda half: self._probe_strata(ps, half))
                tested += ran
                if period is not None:
                    return period
        if not tested:
            return Refutation("skipped", "no other column of the probe's tables to test the comparison within")
        return Refutation("survives", "survives refutation")

    def _shared_change(self, claim: Claim, tree: exp.Expression, probe: exp.Subquery,
                       ps: _ProbeStrata) -> tuple[Refutation | None, bool]:
        """A segment's change that the other values of its dimension share (they moved as much over the same
        split) is not the segment's: the same query over the complement of the segment condition."""
        if ps.seg is None or ps.base is None:
            return None, False
        seg_parts = {c.sql(dialect=self.dialect): c for c in ps.seg.flatten()} if isinstance(ps.seg, exp.And) \
            else {ps.seg.sql(dialect=self.dialect): ps.seg}
        base_parts = {c.sql(dialect=self.dialect) for c in (ps.base.flatten() if isinstance(ps.base, exp.And)
                                                            else [ps.base])}
        common = [k for k in seg_parts if k in base_parts]  # the segment's own condition, without the period
        if len(common) != 1:
            return None, False
        rest = tree.copy()
        inner = _probe_of(rest)
        hits = [n for n in rest.find_all(type(seg_parts[common[0]]))
                if n.sql(dialect=self.dialect) == common[0] and not _inside(n, inner)]
        if not hits:
            return None, False
        for n in hits:
            n.replace(exp.Not(this=exp.Paren(this=n.copy())))
        sql = rest.sql(dialect=self.dialect)
        rows = self._run(sql)
        if not rows:
            return None, False
        after, before = _values(rows[0], _SKIP)
        seg_after = claim.verified_value if claim.verified_value is not None else claim.value
        seg_before = claim.verified_baseline_value if claim.verified_baseline_value is not None else claim.baseline_value
        if None in (after, before, seg_after, seg_before):
            return None, False
        # in the measure's own units (percentage points for a rate): a relative change inflates whichever
        # side starts nearer zero
        seg_change, rest_change = seg_after - seg_before, after - before
        if seg_change * rest_change > 0 and abs(rest_change) >= SHARED * abs(seg_change):
            k = claim.metric
            return Refutation("shared", f"{SHARED_START} over the same split ({_fmt(before, k)} "
                                        f"to {_fmt(after, k)}, against {_fmt(seg_before, k)} to {_fmt(seg_after, k)}): "
                                        f"the change is not specific to {common[0].replace(chr(34), '')}",
                              common[0], sql), True
        return None, True

    def _mix_text(self, claim: Claim, dim: str, verdict: str, strata: list[Stratum]) -> str:
        k = claim.metric
        # the levels the pooled figure rests on (the heaviest by its weights), not merely the largest: a big
        # level with few segment rows showed a gap that the verdict had weighed as little
        shown = sorted(_usable(strata), key=lambda s: -(s.n_segment * s.n_baseline / (s.n_segment + s.n_baseline)))[:3]
        parts = ", ".join(f"{s.level}: {_fmt(s.segment, k)} vs {_fmt(s.baseline, k)}" for s in shown)
        what = "reverses" if verdict == "reverses" else "mostly vanishes"
        pooled, _ = pooled_difference(strata)
        total = _difference(overall_of(claim), k)
        weighed = (f"{_difference(pooled, k, overall_of(claim))} within its levels against {total} in total; "
                   if total else "")
        return (f"{MIX_START} {dim} the difference {what} ({weighed}{parts}): it comes from the mix of {dim} "
                "between segment and baseline")

    def _stratified_strata(self, sel, stratum, seg, base) -> tuple[list[Stratum] | None, str]:
        sql = _stratified(sel, stratum, seg, base, self.dialect)
        return self._strata(sql), sql

    def _period(self, sel, col, claim: Claim, overall: float, strata_of) -> tuple[Refutation | None, bool]:
        """Counter-evidence from the two halves of the time span, and whether the halves could be compared."""
        q = sel.copy()
        q.set("expressions", [exp.alias_(exp.Min(this=col.copy()), "lo"), exp.alias_(exp.Max(this=col.copy()), "hi")])
        q.set("order", None)
        q.set("limit", None)
        rows = self._run(q.sql(dialect=self.dialect))
        if not rows or rows[0].get("lo") is None or rows[0].get("hi") is None:
            return None, False
        lo, hi = rows[0]["lo"], rows[0]["hi"]
        if not isinstance(lo, (dt.date, dt.datetime)) or lo == hi:
            return None, False
        mid = lo + (hi - lo) / 2
        if isinstance(mid, dt.datetime):
            lit = exp.cast(exp.Literal.string(mid.replace(tzinfo=None).isoformat(sep=" ")), "TIMESTAMP")
        else:
            lit = exp.cast(exp.Literal.string(mid.isoformat()), "DATE")
        half = exp.Case(ifs=[exp.If(this=exp.LT(this=col.copy(), expression=lit),
                                    true=exp.Literal.string("first half"))],
                        default=exp.Literal.string("second half"))
        strata, sql = strata_of(half)
        if not strata or len(strata) < 2:
            return None, False
        usable = {s.level: s for s in strata if s.segment is not None and s.baseline is not None
                  and s.n_segment >= MIN_LEVEL_ROWS and s.n_baseline >= MIN_LEVEL_ROWS}
        if len(usable) < 2:
            return None, False
        diffs = {lvl: s.segment - s.baseline for lvl, s in usable.items()}
        strong = max(diffs, key=lambda lvl: abs(diffs[lvl]) if diffs[lvl] * overall > 0 else -1)
        weak = [lvl for lvl, d in diffs.items() if lvl != strong
                and (d * overall <= 0 or abs(d) < PERIOD_SHARE * abs(diffs[strong]))]
        v_strong, v_weak = (_variance(usable[strong]), _variance(usable[weak[0]])) if weak else (None, None)
        if weak and v_strong is not None and v_weak is not None and \
                abs(diffs[strong] - diffs[weak[0]]) < Z_PERIOD * math.sqrt(v_strong + v_weak):
            return None, True  # the halves differ by no more than sampling noise
        if len(weak) == 1 and diffs[strong] * overall > 0:
            k = claim.metric
            s_w, s_s = usable[weak[0]], usable[strong]
            when = f"{lo:%Y-%m-%d}..{mid:%Y-%m-%d}" if weak[0] == "first half" else f"{mid:%Y-%m-%d}..{hi:%Y-%m-%d}"
            return Refutation("period", f"but it holds in the {strong} of the period only: in the {weak[0]} "
                                        f"({when}) the segment is at {_fmt(s_w.segment, k)} against "
                                        f"{_fmt(s_w.baseline, k)} (the {strong}: {_fmt(s_s.segment, k)} against "
                                        f"{_fmt(s_s.baseline, k)})", col.name, sql, list(usable.values())), True
        return None, True


def _parse(sql: str, dialect: str) -> exp.Expression | None:
    try:
        return sqlglot.parse_one(sql, read=dialect)
    except Exception:  # noqa: BLE001 - odd input raises other types too (the compiled parser a TypeError)
        return None


def _probe_of(tree: exp.Expression) -> exp.Subquery | None:
    """The statistical analyst's probe inside its claim's query: the grouped derived table aliased p."""
    for sq in tree.find_all(exp.Subquery):
        if sq.alias_or_name == "p" and isinstance(sq.this, exp.Select) and sq.this.args.get("group") \
                and isinstance(sq.parent, (exp.From, exp.Join)):
            return sq
    return None


def _inside(node: exp.Expression, ancestor: exp.Expression | None) -> bool:
    while node is not None:
        if node is ancestor:
            return True
        node = node.parent
    return False


def _from_name(sel: exp.Select) -> str | None:
    node = sel.args.get("from_") or sel.args.get("from")
    t = node.this if node is not None else None
    return t.alias_or_name if isinstance(t, (exp.Table, exp.Subquery)) else None


def _carry_level(tree: exp.Select) -> bool:
    """Carry ``refute_level`` from the probe (p) through every CTE that reads it to the outer SELECT: each
    such SELECT returns the level and groups by it. False when a reader cannot (it joins)."""
    with_ = tree.args.get("with_") or tree.args.get("with")
    readers = [(cte.this, cte.alias_or_name) for cte in (with_.expressions if with_ else [])]
    readers.append((tree, ""))
    derived = {"p"}
    carried = False
    for sel, name in readers:
        if not isinstance(sel, exp.Select) or _from_name(sel) not in derived:
            continue
        if sel.args.get("joins"):
            return False
        if not any(isinstance(e, exp.Star) for e in sel.expressions):
            sel.select(exp.column("refute_level"), copy=False)
            if sel.args.get("group") or any(e.find(exp.AggFunc) for e in sel.expressions):
                sel.group_by(exp.column("refute_level"), copy=False)
        if name:
            derived.add(name)
        carried = carried or not name
    return carried


def _probe_aliases(probe: exp.Select) -> dict[str, exp.Expression]:
    return {e.alias_or_name.lower(): (e.this if isinstance(e, exp.Alias) else e) for e in probe.expressions}


def _probe_total(tree: exp.Expression, probe: exp.Subquery) -> bool:
    """The claim's values are totals of the probe (sums, counts), not ratios or averages."""
    aliases = _probe_aliases(probe.this)
    outside = tree.copy()
    inner = _probe_of(outside)
    inner.replace(exp.to_table("p"))
    if outside.find(exp.Div):
        return False
    used = {c.name.lower() for c in outside.find_all(exp.Column)}
    return not any(aliases[u].find(exp.Avg) or aliases[u].find(exp.Div) for u in used if u in aliases)


def _denominator(tree: exp.Expression, count_col: str) -> exp.Expression | None:
    """The condition of the rate's denominator, when the claim divides by a filtered sum of the probe's
    count column (purchase per add_to_cart: the add_to_cart rows)."""
    for nf in tree.find_all(exp.Nullif):
        f = nf.this.find(exp.Filter)
        if f is not None and isinstance(f.this, exp.Sum) and isinstance(f.this.this, exp.Column) \
                and f.this.this.name.lower() == count_col and f.expression is not None:
            return f.expression.this
    return None


class _ProbeStrata:
    """The SQL that stratifies one statistical claim's probe."""

    def __init__(self, claim: Claim, tree: exp.Expression, probe: exp.Subquery, dialect: str):
        self.claim, self.tree, self.dialect = claim, tree, dialect
        self.probe = probe.this
        aliases = _probe_aliases(self.probe)
        self.count_col = next((c for c in ("n", "entities") if c in aliases), None)
        self.seg = _condition(claim.segment_sql, dialect)
        base = _condition(claim.baseline_sql, dialect)
        self.base = base if base is not None and base.sql().upper() != "TRUE" else None
        den = _denominator(tree, self.count_col) if self.count_col else None
        # a filtered sum over one side (the baseline's rows) weighs that side; a rate's denominator names
        # neither side's columns
        sides = _columns_in(self.seg, self.base)
        self.denominator = den if den is not None and not (_columns_in(den) & sides) else None

    def _stratified_probe(self, stratum: exp.Expression) -> exp.Select:
        q = self.probe.copy()
        q.select(exp.alias_(stratum.copy(), "refute_level"), copy=False)
        return q.group_by(stratum.copy(), copy=False)

    def values_sql(self, stratum: exp.Expression) -> str | None:
        tree = self.tree.copy()
        sq = _probe_of(tree)
        sq.set("this", self._stratified_probe(stratum))
        if not _carry_level(tree):
            return None
        return tree.sql(dialect=self.dialect)

    def counts_sql(self, stratum: exp.Expression) -> str:
        n = exp.column(self.count_col)
        seg = self.seg.copy()
        base = self.base.copy() if self.base is not None else exp.Not(this=exp.Paren(this=self.seg.copy()))
        if self.denominator is not None:
            seg = exp.and_(exp.Paren(this=seg), exp.Paren(this=self.denominator.copy()))
            base = exp.and_(exp.Paren(this=base), exp.Paren(this=self.denominator.copy()))
        sides = [exp.alias_(exp.Filter(this=exp.Sum(this=n.copy()), expression=exp.Where(this=cond)), alias)
                 for cond, alias in ((seg, "refute_n_segment"), (base, "refute_n_baseline"))]
        q = exp.select(exp.column("refute_level"), *sides).from_(
            exp.Subquery(this=self._stratified_probe(stratum), alias=exp.TableAlias(this=exp.to_identifier("p"))))
        return q.group_by(exp.column("refute_level")).sql(dialect=self.dialect)

    def levels_select(self) -> exp.Select:
        """The probe's rows ungrouped, for counting a column's levels."""
        q = self.probe.copy()
        for k in ("group", "having", "order", "limit"):
            q.set(k, None)
        return q


def weakens(refutation: str | None) -> bool:
    """The refuter's summary undermines the insight's comparison (see WEAKENING_STARTS)."""
    return (refutation or "").startswith(WEAKENING_STARTS)


def weigh_severity(insight) -> None:
    """An insight whose headline comparison the refuter undermined is at most WEAKENED_SEVERITY: "critical, confirmed,
    but the other values changed as much" ranked a change every product shared among the run's headlines (the gaming
    demo's coins_small failures). The headline claim's own outcome decides (the insight's summary is only the first
    caveat of any claim); a supporting comparison's caveat is shown beside it and leaves the severity."""
    from ..models import Severity
    from .compare import AFFECTED

    head = next((c for c in insight.claims if c.measure != AFFECTED), None)
    order = [x.value for x in Severity]  # critical first
    if head is not None and weakens(head.refutation) and \
            order.index(insight.severity.value) < order.index(WEAKENED_SEVERITY):
        insight.severity = Severity(WEAKENED_SEVERITY)


def refute_insight(refuter: Refuter, insight) -> str | None:
    """Refute every confirmed comparison of an insight, recording the result on each claim; return the
    insight's summary: the first counter-evidence found, "survives refutation", or None (nothing to refute)."""
    found = []
    for c in insight.claims:
        try:
            r = refuter.refute(c)
        except Exception as exc:  # counter-evidence is a bonus: a failure here never costs the verdict
            c.refutation = None
            found.append(Refutation("skipped", f"refuter failed: {type(exc).__name__}"))
            continue
        if r.outcome == "skipped":
            continue
        c.refutation, c.refutation_sql = r.text, r.sql
        found.append(r)
    caveats = [r.text for r in found if r.caveat]
    if caveats:
        return caveats[0]
    return "survives refutation" if any(r.outcome == "survives" for r in found) else None
