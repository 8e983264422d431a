"""Claimed against re-derived values: the verdict of one claim, computed by code.

Tolerances: counts within 20%; rates and shares within 2 percentage points or 10% relative;
averages and the levels of a change within 10% relative (a fit: validate/fit.py). The direction of every comparison
(segment against baseline, later period against earlier) must match, and a comparison the
warehouse shows as no effect (the two sides within 5% of each other) rejects the claim.
"""

from __future__ import annotations

import re

from ..models import Claim, MetricKind, ValidationStatus

COUNT_TOL = 0.20
RATE_ABS_TOL = 0.02
REL_TOL = 0.10
NO_EFFECT = 0.05
AFFECTED = "affected count"  # the measure of the claim the verifier makes of an insight's affected count

# worst first: an insight's verdict is the worst of its claims
ORDER = [ValidationStatus.rejected, ValidationStatus.error, ValidationStatus.adjusted,
         ValidationStatus.confirmed, ValidationStatus.not_verifiable]


def worst(statuses: list[ValidationStatus]) -> ValidationStatus:
    return min(statuses, key=ORDER.index) if statuses else ValidationStatus.not_verifiable


def as_fraction(kind: MetricKind, *values: float | None) -> list[float | None]:
    """Rates and shares written as percents (14 for 14%) become fractions; both sides together."""
    if kind in (MetricKind.rate, MetricKind.share) and any(v is not None and 1 < abs(v) <= 100 for v in values):
        return [None if v is None else v / 100 for v in values]
    return list(values)


def within(kind: MetricKind, claimed: float, verified: float) -> bool:
    diff = abs(verified - claimed)
    if kind == MetricKind.count:
        return diff <= COUNT_TOL * abs(claimed) + 1e-9
    if kind in (MetricKind.rate, MetricKind.share):
        return diff <= RATE_ABS_TOL + 1e-12 or diff <= REL_TOL * abs(claimed) + 1e-12
    if 0 <= claimed <= 1 and 0 <= verified <= 1 and kind == MetricKind.change:
        return diff <= RATE_ABS_TOL + 1e-12 or diff <= REL_TOL * abs(claimed) + 1e-12
    return diff <= REL_TOL * abs(claimed) + 1e-12


def direction(a: float, b: float) -> int:
    """+1 segment above baseline (or later above earlier), -1 below, 0 no effect."""
    if abs(a - b) <= NO_EFFECT * max(abs(a), abs(b)):
        return 0
    return 1 if a > b else -1


_RATE_WORDS = re.compile(r"\b(rate|share|per|conversion|ratio)\b", re.I)


def shown_kind(c: Claim, *values: float | None) -> MetricKind:
    """How a claim's values read: a change of a rate ("purchase per add_to_cart (monthly rate)", every value a
    fraction) as the rate it is (44.9% vs 11.0%), as its insight's text says it; otherwise its metric. ``values``:
    numbers beside the claim's own that must be fractions too (re-derived ones not stored yet)."""
    vals = [v for v in (c.value, c.baseline_value, c.verified_value, c.verified_baseline_value, *values)
            if v is not None]
    if c.metric == MetricKind.change and vals and all(abs(v) <= 1 for v in vals) \
            and _RATE_WORDS.search(c.measure or ""):
        return MetricKind.rate
    return c.metric


def _fmt(x: float | None, kind: MetricKind | None = None) -> str:
    """A value as the reasoning states it: a rate or a share as a percent (14.8%, as the report shows it)."""
    if x is None:
        return "n/a"
    if kind in (MetricKind.rate, MetricKind.share) and abs(x) <= 1:
        return f"{x:.1%}"
    return f"{x:,.0f}" if abs(x) >= 100 or float(x).is_integer() else f"{x:.4g}"


def judge(claim: Claim, seg: float | None, base: float | None) -> tuple[ValidationStatus, str]:
    """The verdict of one claim given the re-derived values (segment, baseline)."""
    if claim.value is None:
        return ValidationStatus.not_verifiable, "the claim states no value"
    if seg is None:
        return ValidationStatus.error, "the verification query returned no value for the segment"
    kind = claim.metric
    if kind == MetricKind.fit:  # a slope, r or R²: its own tolerances (validate/fit.py)
        from .fit import judge_fit

        return judge_fit(claim, seg, base)
    c_val, c_base = as_fraction(kind, claim.value, claim.baseline_value)
    seg, base = as_fraction(kind, seg, base)
    shown = shown_kind(claim, seg, base)  # a rate's change reads as the rates it compares (21.6% vs 3.6%)
    said = f"claimed {_fmt(c_val, shown)}" + (f" vs {_fmt(c_base, shown)}" if c_base is not None else "")
    found = f"warehouse {_fmt(seg, shown)}" + (f" vs {_fmt(base, shown)}" if base is not None else "")
    if c_base is not None:
        if base is None:
            return ValidationStatus.error, f"{said}; the query returned no baseline value"
        cd, vd = direction(c_val, c_base), direction(seg, base)
        if vd == 0 and cd != 0:
            return ValidationStatus.rejected, f"{said}; {found}: no effect"
        if cd != vd:
            return ValidationStatus.rejected, f"{said}; {found}: the direction is wrong"
        if within(kind, c_val, seg) and within(kind, c_base, base):
            return ValidationStatus.confirmed, f"{said}; {found}"
        return ValidationStatus.adjusted, f"{said}; {found}: same direction, different values"
    if kind == MetricKind.change and base is not None:
        # a change stated as one relative number (-0.55 for "fell 55%"): recomputed from the two levels
        if base == 0:
            return ValidationStatus.error, f"{said}; {found}: the earlier level is zero"
        rel = (seg - base) / abs(base)
        cd = 0 if abs(c_val) <= NO_EFFECT else (1 if c_val > 0 else -1)
        vd = direction(seg, base)
        found = f"warehouse change {rel:+.1%} ({_fmt(base)} -> {_fmt(seg)})"
        if vd == 0 and cd != 0:
            return ValidationStatus.rejected, f"{said}; {found}: no effect"
        if cd != vd:
            return ValidationStatus.rejected, f"{said}; {found}: the direction is wrong"
        ok = abs(rel - c_val) <= RATE_ABS_TOL or abs(rel - c_val) <= REL_TOL * abs(c_val)
        return (ValidationStatus.confirmed if ok else ValidationStatus.adjusted), f"{said}; {found}"
    if seg == 0 and c_val != 0:
        return ValidationStatus.rejected, f"{said}; {found}: nothing there"
    if within(kind, c_val, seg):
        return ValidationStatus.confirmed, f"{said}; {found}"
    return ValidationStatus.adjusted, f"{said}; {found}"
