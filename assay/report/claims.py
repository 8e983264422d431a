"""One line per checked number: what a claim says, what the warehouse said, the verdict."""

from __future__ import annotations

import re

from ..models import Claim, Insight, MetricKind, ValidationStatus
from ..validate.compare import shown_kind
from ..validate.grounding import DATE_TEXT, PROSE_NUMBER


def fmt(x: float | None, kind: MetricKind) -> str:
    if x is None:
        return "n/a"
    if kind in (MetricKind.rate, MetricKind.share) and abs(x) <= 1:
        return f"{x:.1%}"
    if kind == MetricKind.fit:
        return f"{x:.4g}"
    if float(x).is_integer() or abs(x) >= 100:
        return f"{x:,.0f}"
    return f"{x:.3g}"


def claim_subject(c: Claim) -> str:
    what = f"{c.metric.value} · {c.measure or 'value'}"
    if c.metric == MetricKind.fit:  # "fit r2 of closed at on opened at · ..."
        what = f"fit {c.statistic or 'r'} of {c.y or c.y_sql or 'y'} on {c.x or c.x_sql or 'x'} · {c.measure or 'value'}"
    if c.whole or c.whole_sql:  # a share's whole: "of open incidents"
        what += f" of {c.whole or c.whole_sql}"
    if c.entity:
        what += f" ({c.entity})"
    where = c.segment or c.segment_sql or "all"
    if c.baseline or c.baseline_sql:
        where += f" vs {c.baseline or c.baseline_sql}"
    return f"{what} · {where}" + (f" · {c.period}" if c.period else "")


def claim_values(c: Claim) -> str:
    kind = shown_kind(c)
    said = fmt(c.value, kind) + (f" vs {fmt(c.baseline_value, kind)}" if c.baseline_value is not None else "")
    out = f"claimed {said}"
    if c.verified_value is not None:
        got = fmt(c.verified_value, kind)
        if c.verified_baseline_value is not None:
            got += f" vs {fmt(c.verified_baseline_value, kind)}"
        out += f"; warehouse {got}"
    return out


def claim_line(c: Claim) -> str:
    verdict = c.verdict.value if c.verdict else "unverified"
    flag = " · ungrounded (no cited step shows it)" if c.grounded is False else ""
    refuted = f" · {c.refutation}" if c.refutation else ""
    return f"[{verdict}] {claim_subject(c)}: {claim_values(c)}{flag}{refuted}"


CHECKED = (ValidationStatus.confirmed, ValidationStatus.adjusted, ValidationStatus.rejected)


def _close(written: str, x: float, v: float) -> bool:
    """x, as written (to its decimals), equals v rounded, or within 0.6% of it."""
    decimals = len(written.rstrip("%").split(".")[1]) if "." in written else 0
    return abs(x - v) <= 0.5 * 10 ** -decimals + 1e-9 or abs(x - v) <= 0.006 * abs(v)


def _checked_values(i: Insight) -> list[float]:
    """The numbers the warehouse re-derived for the insight: each checked claim's values, claimed and
    verified, and their change, ratio and difference."""
    out: list[float] = []
    for c in i.claims:
        if c.verdict not in CHECKED:
            continue
        pairs = [(c.value, c.baseline_value), (c.verified_value, c.verified_baseline_value)]
        for v, b in pairs:
            out += [x for x in (v, b) if x is not None]
            if v is not None and b is not None:
                out += [v - b, b - v] + ([v / b, (v - b) / b, (b - v) / b] if b else [])
    return out


def unchecked_numbers(i: Insight) -> list[str]:
    """The numbers of the insight's headline and text that no checked claim states (as written)."""
    checked = _checked_values(i)
    text = DATE_TEXT.sub(" ", f"{i.name} {i.description}")
    # numbers that define what is measured (level 42, the top 5%, a threshold) are not measurements
    defs = " ".join([i.segment or ""] + [f"{c.segment} {c.segment_sql} {c.baseline} {c.baseline_sql} {c.period} "
                                         f"{c.period_sql}" for c in i.claims])
    defined = {float(t.rstrip("%").replace(",", "")) for t in re.findall(r"-?\d+(?:\.\d+)?%?", DATE_TEXT.sub(" ", defs))}
    out = []
    for tok in PROSE_NUMBER.findall(text):
        try:
            x = float(tok.rstrip("%").replace(",", ""))
        except ValueError:
            continue
        if x in defined:
            continue
        scales = (100.0,) if tok.endswith("%") else (1.0, 100.0)  # 14% or 0.14 for a fraction 0.14
        if not any(_close(tok, abs(x), abs(v) * k) for k in scales for v in checked):
            out.append(tok)
    return list(dict.fromkeys(out))


def insight_notes(i: Insight) -> list[str]:
    """Flags of the insight as a whole (ungrounded numbers, merged findings, numbers nobody re-derived)."""
    notes = []
    if i.origin:
        notes.append(f"origin: {i.origin} (a finding of the statistical scan that no LLM insight covered; built "
                     "and verified as the statistical analyst's)")
    if i.leads:  # why the scan's finding of it is not listed again beside it
        notes.append(f"reports the statistical scan's lead{'s' if len(i.leads) > 1 else ''}: {'; '.join(i.leads)}")
    if not any(c.verdict in CHECKED for c in i.claims):
        notes.append("no number of this insight was re-derived in the warehouse")
    elif rest := unchecked_numbers(i):
        notes.append(f"not re-derived in the warehouse: {', '.join(rest)}")
    if i.ungrounded:
        notes.append("ungrounded: a number traces to no cited step's result")
    if i.also_relevant_to:
        notes.append(f"also relevant to: {', '.join(i.also_relevant_to)}")
    if i.affected_count is not None:
        notes.append(f"what the affected count counts: {counted(i)}")
    return notes


def counted(i: Insight) -> str:
    """Which rows an insight's affected count counts: its entity, and the conditions of its count query (the
    statistical analyst's, an adopted finding's) or else its count claim's segment. "customer" alone did not say
    that 1,795 were the paid_social customers who never came back."""
    entity = i.affected_entity or "not stated"
    if i.verification_sql:
        conditions = count_conditions(i.verification_sql)
        return f"{entity} where {conditions}" if conditions else entity
    n = i.affected_count
    claim = next((c for c in i.claims if c.metric == MetricKind.count and c.value is not None and n is not None
                  and round(c.value) == n and c.segment), None)
    return f"{entity} · {claim.segment}" if claim else entity


def count_conditions(sql: str) -> str:
    """The WHERE and HAVING conditions of a count query, without table aliases or quotes ("" when it has none, or
    cannot be read)."""
    import sqlglot
    from sqlglot import exp

    try:
        tree = sqlglot.parse_one(sql, read="duckdb")
    except Exception:
        return ""
    out = []
    for sel in tree.find_all(exp.Select):
        for key in ("where", "having"):
            part = sel.args.get(key)
            if part is None:
                continue
            cond = part.this.copy()
            for col in cond.find_all(exp.Column):
                col.set("table", None)
            for ident in cond.find_all(exp.Identifier):
                ident.set("quoted", False)
            for cast in list(cond.find_all(exp.Cast)):
                if isinstance(cast.this, exp.Literal):
                    cast.replace(cast.this)
            out.append(cond.sql(dialect="duckdb"))
    return " AND ".join(out)


def checked_summary(insights: list[Insight]) -> str:
    """What the warehouse checked in a run, in one line; empty when the run has no insight (a failed run's report
    said "0 numbers of 0 insights (0 confirmed, 0 adjusted, 0 rejected)")."""
    if not insights:
        return ""
    claims = [c for i in insights for c in i.claims if c.verdict is not None]
    checked = [c for c in claims if c.verdict in CHECKED]
    by = {v: sum(1 for c in checked if c.verdict == v) for v in CHECKED}
    none = sum(1 for i in insights if not any(c.verdict in CHECKED for c in i.claims))
    partly = sum(1 for i in insights if any(c.verdict in CHECKED for c in i.claims) and unchecked_numbers(i))
    n, k = len(checked), len(insights) - none
    out = (f"Re-derived in the warehouse: {n} number{'s' if n != 1 else ''} of {k} insight{'s' if k != 1 else ''} "
           f"({by[ValidationStatus.confirmed]} confirmed, {by[ValidationStatus.adjusted]} adjusted, "
           f"{by[ValidationStatus.rejected]} rejected)")
    if len(claims) > len(checked):
        out += f"; {len(claims) - len(checked)} could not be checked"
    if none:
        out += f"; {none} insight{'s' if none != 1 else ''} with no number checked"
    if partly:
        out += f"; {partly} with numbers in the text not re-derived (listed under each)"
    return out + "."
