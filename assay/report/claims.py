"""One line per checked number: what a claim says, what the warehouse said, the verdict."""

from __future__ import annotations

from ..models import Claim, Insight, MetricKind


def fmt(x: float | None, kind: MetricKind) -> str:
    if x is None:
        return "n/a"
    if kind in (MetricKind.rate, MetricKind.share) and abs(x) <= 1:
        return f"{x:.1%}"
    if float(x).is_integer() or abs(x) >= 100:
        return f"{x:,.0f}"
    return f"{x:.3g}"


def claim_subject(c: Claim) -> str:
    what = f"{c.metric.value} · {c.measure or 'value'}"
    if c.entity:
        what += f" ({c.entity})"
    where = c.segment or c.segment_sql or "all"
    if c.baseline or c.baseline_sql:
        where += f" vs {c.baseline or c.baseline_sql}"
    return f"{what} · {where}" + (f" · {c.period}" if c.period else "")


def claim_values(c: Claim) -> str:
    said = fmt(c.value, c.metric) + (f" vs {fmt(c.baseline_value, c.metric)}" if c.baseline_value is not None else "")
    out = f"claimed {said}"
    if c.verified_value is not None:
        got = fmt(c.verified_value, c.metric)
        if c.verified_baseline_value is not None:
            got += f" vs {fmt(c.verified_baseline_value, c.metric)}"
        out += f"; warehouse {got}"
    return out


def claim_line(c: Claim) -> str:
    verdict = c.verdict.value if c.verdict else "unverified"
    flag = " · ungrounded (no cited step shows it)" if c.grounded is False else ""
    refuted = f" · {c.refutation}" if c.refutation else ""
    return f"[{verdict}] {claim_subject(c)}: {claim_values(c)}{flag}{refuted}"


def insight_notes(i: Insight) -> list[str]:
    """Flags of the insight as a whole (ungrounded numbers, merged findings)."""
    notes = []
    if i.ungrounded:
        notes.append("ungrounded: a number traces to no cited step's result")
    if i.also_relevant_to:
        notes.append(f"also relevant to: {', '.join(i.also_relevant_to)}")
    if i.affected_count is not None:
        notes.append(f"affected counts {i.affected_entity or 'an unstated entity'}")
    return notes
