"""Detectors of how measures and entities relate: correlations, concentration of a measure on the top
entities, and retention gaps between segments."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..probes import ConcentrationMeta, CorrelationMeta, RetentionMeta
from .candidate import Candidate, Kind
from .countsql import Source, lit, quote
from .significance import correlation_p, gini_from_ranks, two_prop_p
from .thresholds import MIN_REL_GAP, MIN_SEGMENT_N
from .wording import fmt, p_eq, pct, words

MIN_CORRELATION = 0.3


def correlation_candidate(a: str, b: str, r: float, n: float, p: float, table: str, step: int,
                          unit: str) -> Candidate:
    sign = "positive" if r > 0 else "negative"
    strength = "strong" if abs(r) >= 0.6 else "moderate"
    return Candidate(
        kind=Kind.CORRELATION,
        name=f"There is a {sign} correlation between {words(a)} and {words(b)}",
        description=(f"There is a {strength} {sign} correlation between {words(a)} and {words(b)} in {table} "
                     f"(r = {r:.2f} over {int(n):,} {unit}, {p_eq(p)}): higher {words(a)} goes with "
                     f"{'higher' if r > 0 else 'lower'} {words(b)}."),
        table=table, step=step, effect=min(1.0, abs(r)), p_value=p, count_sql=None, segment=f"{a}~{b}",
        indicators=[f"pearson r = {r:.2f}", f"n = {int(n):,}"], area_text=f"{table} {a} {b} correlation relationship",
    )


def correlations(df: pd.DataFrame, meta: CorrelationMeta | dict, step: int, table: str, ref: str) -> list[Candidate]:
    """Pearson correlations computed by the warehouse, with their p-values."""
    meta = CorrelationMeta.of(meta)
    out = []
    row = df.iloc[0]
    for k, (a, b) in enumerate(meta.pairs or []):
        r, n = row.get(f"r{k}"), row.get(f"n{k}")
        if r is None or n is None or pd.isna(r) or pd.isna(n):
            continue
        r, n = float(r), float(n)
        if abs(r) < MIN_CORRELATION:
            continue
        out.append(correlation_candidate(a, b, r, n, correlation_p(r, n), table, step, "rows"))
    return out


def concentration(df: pd.DataFrame, meta: ConcentrationMeta | dict, step: int, table: str,
                  ref: str) -> list[Candidate]:
    meta = ConcentrationMeta.of(meta)
    if df.empty or "total" not in df:
        return []
    row = df.iloc[0]
    total = float(row["total"] or 0)
    n = int(row["entities"] or 0)
    if total <= 0 or n < 100:
        return []
    shares = {k: float(row[f"top{k}"] or 0) / total for k in (1, 5, 10)}
    ent, m = meta.entity, meta.measure
    if shares[5] >= 0.5:
        k = 5
    elif shares[1] >= 0.10:
        k = 1
    else:
        return []
    lift = shares[k] / (k / 100)
    top_n = math.ceil(n * k / 100)
    g = gini_from_ranks(float(row["weighted"]), total, n) if "weighted" in df and row["weighted"] is not None else None
    gini_text = f" Gini coefficient {g:.2f}." if g is not None else ""
    return [Candidate(
        kind=Kind.CONCENTRATION,
        name=f"Top {k}% of {ent} ({top_n:,}) bring {pct(shares[k])} of {m}",
        description=(f"In {table}, the top {k}% of {n:,} {ent} values ({top_n:,}) account for {pct(shares[k])} of "
                     f"{'' if m.startswith('total') else 'total '}{m} ({fmt(total)}); the top 1%, 5% and 10% hold {pct(shares[1])}, {pct(shares[5])} "
                     f"and {pct(shares[10])}.{gini_text}"),
        table=table, step=step, effect=min(1.0, shares[k]), p_value=1e-12 if lift >= 5 else 0.01,
        count_sql=Source(ref).count(what=f"CAST(ceil(count(DISTINCT {quote(ent)}) * {k / 100}) AS BIGINT)"),
        segment=f"top {k}% {ent}", indicators=[f"top{k} share = {pct(shares[k])}", f"lift = {lift:.1f}x"]
        + ([f"gini = {g:.3f}"] if g is not None else []),
        area_text=f"{table} {m} revenue concentration top customers spend",
    )]


def retention_base(rate: str, columns) -> str:
    """The probe column a retention rate is of: a repeat rate of the entities with a first activity ("active": one
    that never had one cannot come back), the return rate of every entity (activity after day 0, of all who signed
    up). The detector weighs the other segments by it, and the claim's SQL as the detector does."""
    return "active" if rate == "repeat_rate" and "active" in columns else "entities"


def retention_outliers(df: pd.DataFrame, meta: RetentionMeta | dict, step: int, table: str,
                       ref: str) -> list[Candidate]:
    meta = RetentionMeta.of(meta)
    dim = meta.dim
    if not dim or dim not in df or "entities" not in df or len(df) < 3:
        return []
    df = df[df["entities"] >= MIN_SEGMENT_N].dropna(subset=[dim])
    if len(df) < 3:
        return []
    best: Candidate | None = None
    act, key, created, ats = meta.activity_ref, meta.key, meta.created, meta.activity_time
    for m in ("returned_rate", "repeat_rate") if meta.returns else ("repeat_rate",):
        weights = pd.to_numeric(df[retention_base(m, df)], errors="coerce").fillna(0).to_numpy(dtype=float)
        vals = pd.to_numeric(df[m], errors="coerce").to_numpy(dtype=float)
        for i, v in enumerate(vals):
            rest = np.delete(np.arange(len(df)), i)
            ok = rest[(weights[rest] > 0) & ~np.isnan(vals[rest])]
            if np.isnan(v) or weights[i] < MIN_SEGMENT_N or len(ok) < 2:
                continue
            rest_rate = float(np.average(vals[ok], weights=weights[ok]))
            spread = float(vals[ok].max() - vals[ok].min())
            if v >= rest_rate or rest_rate <= 0:
                continue
            rel = (rest_rate - v) / rest_rate
            n = float(weights[i])
            p = two_prop_p(v * n, n, rest_rate * weights[ok].sum(), weights[ok].sum())
            if rel < MIN_REL_GAP or p >= 1e-6 or (rest_rate - v) < 2 * spread:
                continue
            seg = df[dim].iloc[i]
            if m == "returned_rate":
                count_sql = (f"SELECT count(*) AS count FROM {ref} e WHERE e.{quote(dim)} = {lit(seg)} AND NOT EXISTS "
                             f"(SELECT 1 FROM {act} a WHERE a.{quote(key)} = e.{quote(key)} AND a.{quote(ats)} >= "
                             f"e.{quote(created)} + INTERVAL 1 DAY)")
                what = "return after their first day"
            else:
                count_sql = (f"SELECT count(*) AS count FROM (SELECT e.{quote(key)} FROM {ref} e JOIN {act} a ON "
                             f"a.{quote(key)} = e.{quote(key)} WHERE e.{quote(dim)} = {lit(seg)} GROUP BY e.{quote(key)} "
                             f"HAVING count(*) = 1) AS single")
                what = "come back for a second activity"
            of = (f"{table} with {dim} = {seg}" if m == "returned_rate" else
                  f"{table} with {dim} = {seg} and a first activity")
            cand = Candidate(
                kind=Kind.RETENTION_DROP,
                name=f"Only {pct(v)} of {seg} {table} {what}, against {pct(rest_rate)} for other {words(dim)} values",
                description=(f"Of {int(n):,} {of}, {pct(v)} {what} (judged by their rows in {meta.activity_table}), "
                             f"against {pct(rest_rate)} for other values of {dim}: a churn gap of "
                             f"{round(100 * rest_rate, 1) - round(100 * v, 1):.1f} percentage points."),
                table=table, step=step, effect=min(1.0, rel), p_value=p, count_sql=count_sql, segment=f"{dim}={seg}",
                indicators=[f"{m}[{seg}] = {pct(v)}", f"{m}[others] = {pct(rest_rate)}"],
                area_text=f"{table} {dim} {seg} retention churn cohort returning repeat",
            )
            if best is None or cand.effect > best.effect:
                best = cand
    return [best] if best else []
