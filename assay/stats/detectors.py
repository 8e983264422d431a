"""Detectors: candidate facts from probe results, scored by significance and effect size.

Pure functions over pandas frames; each candidate carries the SQL that counts
the entities it is about, so its affected count is computed by the warehouse
and verified by the same verifier as an LLM's claim.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats

MIN_SEGMENT_N = 30
MIN_BEHAVIOUR_ROWS = 5000  # below this a table is a catalogue (products, channels), not behaviour
ROBUST_Z = 3.5
MIN_REL_GAP = 0.25
CHANGE_MIN_SIDE = 3
CHANGE_MIN_REL = 0.30
PERIOD_MIN_REL = 0.10  # a goal asking what changed: a steady change of a tenth of the average over the period
NEGATIVE_OUTCOMES = ("fail", "error", "cancel", "refund", "declin", "reject", "abandon", "remove", "churn", "lost")


@dataclass
class Candidate:
    kind: str
    name: str
    description: str
    table: str
    step: int
    effect: float          # 0..1, relative size of the effect
    p_value: float
    count_sql: str | None
    segment: str | None = None
    indicators: list[str] = field(default_factory=list)
    score: float = 0.0
    q_value: float = 1.0
    area_text: str = ""
    affected: int | None = None
    measure: str = ""      # what a segment finding measures (one fact per segment value and measure)
    support: int | None = None          # rows the finding stands on (with a value of its measure)
    support_share: float | None = None  # their share of the rows it looked at
    relevance: float = 0.0              # similarity to the run's goal (set by the analyst)
    catalogue: bool = False             # about a small reference table (products, airports)
    groups: list[str] = field(default_factory=list)  # a spread effect's highest and lowest groups

    def key(self) -> tuple:
        return (self.kind, self.table, self.segment, self.name)


def _fmt(x: float) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "n/a"
    ax = abs(x)
    if ax >= 1000:
        return f"{x:,.0f}"
    if ax >= 10:
        return f"{x:.1f}"
    return f"{x:.3g}"


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _lit(v) -> str:
    if isinstance(v, (bool, np.bool_)):
        return "TRUE" if v else "FALSE"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        return repr(float(v))
    return "'" + str(v).replace("'", "''") + "'"


def robust_z(values: np.ndarray) -> np.ndarray:
    med = np.median(values)
    mad = np.median(np.abs(values - med)) * 1.4826
    if mad == 0:
        mad = np.mean(np.abs(values - med)) * 1.2533 or 1e-12
    return (values - med) / mad


def two_prop_p(x1: float, n1: float, x2: float, n2: float) -> float:
    if n1 <= 0 or n2 <= 0:
        return 1.0
    p = (x1 + x2) / (n1 + n2)
    se = math.sqrt(max(p * (1 - p) * (1 / n1 + 1 / n2), 1e-18))
    z = (x1 / n1 - x2 / n2) / se
    return float(2 * stats.norm.sf(abs(z)))


# ---------------------------------------------------------------------------- segment outliers


def segment_outliers(df: pd.DataFrame, dim: str, meta: dict, step: int, table: str, ref: str) -> list[Candidate]:
    """A segment whose rate or average is far from the others (robust z-score)."""
    if dim not in df or "n" not in df or len(df) < 3:
        return []
    df = df[df["n"] >= MIN_SEGMENT_N].dropna(subset=[dim])
    if len(df) < 3:
        return []
    out = []
    entity = meta.get("entity")
    metrics = [c for c in df.columns if c.endswith("_rate")
               or (c.startswith("avg_") and float(df["n"].sum()) >= MIN_BEHAVIOUR_ROWS)]
    for m in metrics:
        vals = pd.to_numeric(df[m], errors="coerce").to_numpy(dtype=float)
        ok = np.isfinite(vals)
        if ok.sum() < 3:
            continue
        z = np.full_like(vals, np.nan)
        z[ok] = robust_z(vals[ok])
        med = float(np.median(vals[ok]))
        for i in np.flatnonzero(ok & (np.abs(z) >= ROBUST_Z)):
            v = float(vals[i])
            rel = abs(v - med) / abs(med) if med else 1.0
            if rel < MIN_REL_GAP:
                continue
            seg = df[dim].iloc[i]
            sd_col = "sd_" + m[4:] if m.startswith("avg_") else None
            if sd_col and sd_col in df and not (float(df[sd_col].iloc[i] or 0) > 0):
                continue  # every row of the segment has the same value: a definition, not a finding
            n = float(df["n"].iloc[i])
            rest = df.drop(df.index[i])
            if m.endswith("_rate"):
                n_rest = float(rest["n"].sum())
                x_rest = float((rest[m] * rest["n"]).sum())
                p = two_prop_p(v * n, n, x_rest, n_rest)
            else:
                p = float(2 * stats.norm.sf(abs(z[i])))
            label = m[:-5] + " rate" if m.endswith("_rate") else "average " + m[4:]
            direction = "below" if v < med else "above"
            join = meta.get("join")
            src = f"{ref} f JOIN {join['ref']} o ON f.{_q(join['on'])} = o.{_q(join['key'])}" if join else ref
            pre = "f." if join else ""
            cond = f"{'o.' if join else ''}{_q(dim)} = {_lit(seg)}"
            flag = m[:-5] if m.endswith("_rate") else None
            if flag and v < med and entity:
                # a low success rate: the entities of the segment that never succeeded
                count_sql = (f"SELECT count(*) AS count FROM (SELECT {pre}{_q(entity)} FROM {src} WHERE {cond} "
                             f"GROUP BY {pre}{_q(entity)} HAVING max(CASE WHEN {pre}{_q(flag)} THEN 1 ELSE 0 END) = 0)"
                             f" AS never")
                unit = f"entities that never had {flag}"
            elif entity:
                count_sql = f"SELECT count(DISTINCT {pre}{_q(entity)}) AS count FROM {src} WHERE {cond}"
                unit = "entities"
            else:
                count_sql = f"SELECT count(*) AS count FROM {src} WHERE {cond}"
                unit = "rows"
            out.append(Candidate(
                kind="outlier_segment", measure=m,
                name=f"{seg} has a much {'lower' if v < med else 'higher'} {label} than other {_words(dim)} values",
                description=(f"In {table}, the segment {dim} = {seg} has {'an' if label[0] in 'aeiou' else 'a'} {label} of {_fmt(v)}, "
                             f"{_pct(rel)} {direction} the median of {_fmt(med)} across {len(df)} segments "
                             f"(robust z = {z[i]:.1f}, n = {int(n):,} rows)."),
                table=table, step=step, effect=min(1.0, rel), p_value=p, count_sql=count_sql,
                segment=f"{dim}={seg}",
                indicators=[f"{label}[{seg}] = {_fmt(v)}", f"median {label} = {_fmt(med)}", f"robust z = {z[i]:.1f}",
                            f"unit: {unit}"],
                area_text=f"{table} {dim} {seg} {m}",
            ))
    return out


def _q(col: str) -> str:
    return '"' + str(col).replace('"', '""') + '"'


# ---------------------------------------------------------------------------- change points and trends


def change_point(y: np.ndarray) -> tuple[int, float, float, float] | None:
    """(index of the first 'after' point, before mean, after mean, p) of the best level shift."""
    n = len(y)
    if n < 2 * CHANGE_MIN_SIDE:
        return None
    best = None
    for k in range(CHANGE_MIN_SIDE, n - CHANGE_MIN_SIDE + 1):
        a, b = y[:k], y[k:]
        sse = ((a - a.mean()) ** 2).sum() + ((b - b.mean()) ** 2).sum()
        if best is None or sse < best[0]:
            best = (sse, k)
    k = best[1]
    a, b = y[:k], y[k:]
    if a.std() == 0 and b.std() == 0:
        p = 0.0 if a.mean() != b.mean() else 1.0
    else:
        p = float(stats.ttest_ind(a, b, equal_var=False).pvalue)
    return k, float(a.mean()), float(b.mean()), p if math.isfinite(p) else 1.0


def step_beats_line(y: np.ndarray) -> bool:
    """True when the best level shift fits clearly better than a straight line."""
    n = len(y)
    if n < 2 * CHANGE_MIN_SIDE:
        return False
    x = np.arange(n, dtype=float)
    slope, icpt = np.polyfit(x, y, 1)
    sse_line = float(((y - (slope * x + icpt)) ** 2).sum())
    sse_step = min(
        float(((y[:k] - y[:k].mean()) ** 2).sum() + ((y[k:] - y[k:].mean()) ** 2).sum())
        for k in range(CHANGE_MIN_SIDE, n - CHANGE_MIN_SIDE + 1)
    )
    return sse_step < 0.6 * sse_line


def relative_to_typical(rel: float, typical: float) -> float:
    """How far a segment's change departs from the typical segment's, as |log ratio|."""
    a, b = 1 + rel, 1 + typical
    if a <= 0 or b <= 0:
        return abs(rel - typical)
    return abs(math.log(a / b))


def trend(y: np.ndarray) -> tuple[float, float, float] | None:
    """(slope per period, relative change over the window, p)."""
    if len(y) < 6:
        return None
    x = np.arange(len(y), dtype=float)
    r = stats.linregress(x, y)
    base = abs(float(np.mean(y))) or 1.0
    return float(r.slope), float(r.slope * (len(y) - 1) / base), float(r.pvalue)


def _complete_months(df: pd.DataFrame) -> pd.DataFrame:
    """Drop a trailing partial month (fewer rows than half the median month)."""
    if len(df) >= 4 and "n" in df:
        med = df["n"].median()
        if df["n"].iloc[-1] < 0.5 * med:
            return df.iloc[:-1]
    return df


_GRAIN = {"month": "monthly", "year": "yearly"}


def series_changes(df: pd.DataFrame, meta: dict, step: int, table: str, ref: str) -> list[Candidate]:
    if "month" not in df or len(df) < 6:
        return []
    df = _complete_months(df.sort_values("month").reset_index(drop=True))
    out = []
    time_col = meta.get("time")
    tsql = meta.get("time_sql") or (_q(time_col) if time_col else None)
    grain = meta.get("grain", "month")
    for m in [c for c in df.columns if c not in ("month", "entities") and not c.startswith(("sd_", "nn_"))]:
        y = pd.to_numeric(df[m], errors="coerce").to_numpy(dtype=float)
        if not np.isfinite(y).all() or len(y) < 6:
            continue
        cp = change_point(y) if step_beats_line(y) else None
        if cp:
            k, before, after, p = cp
            rel = (after - before) / abs(before) if before else 0.0
            if abs(rel) >= CHANGE_MIN_REL and p < 0.01:
                since = pd.Timestamp(df["month"].iloc[k]).date().isoformat()
                word = "rose" if rel > 0 else "fell"
                out.append(Candidate(
                    kind="change_point",
                    name=f"The {_GRAIN[grain]} {_measure_words(m, table, meta)} {word} {_pct(abs(rel))} from {since}",
                    description=(f"The {_GRAIN[grain]} {_measure_words(m, table, meta)} {word} from an average of "
                                 f"{_fmt(before)} before {since} to {_fmt(after)} after (Welch t-test p = {p:.2g})."),
                    table=table, step=step, effect=min(1.0, abs(rel)), p_value=p,
                    count_sql=(f"SELECT count(*) AS count FROM {ref} WHERE {tsql} >= TIMESTAMP '{since}'"
                               if tsql else None),
                    segment=f"since {since}", indicators=[f"before = {_fmt(before)}", f"after = {_fmt(after)}"],
                    area_text=f"{table} {m} monthly trend",
                ))
                continue
        tr = trend(y)
        if tr and "entities" in df and m != "entities":
            # volume that only follows the number of active entities is the base growing, not a finding
            per = y / np.maximum(pd.to_numeric(df["entities"], errors="coerce").to_numpy(dtype=float), 1)
            per_tr = trend(per)
            if per_tr is None or abs(per_tr[1]) < CHANGE_MIN_REL or per_tr[2] >= 0.01:
                tr = None
        if tr:
            slope, rel, p = tr
            if abs(rel) >= 0.5 and p < 0.01:
                word = "grew" if slope > 0 else "declined"
                out.append(Candidate(
                    kind="trend", name=(f"The {_GRAIN[grain]} {_measure_words(m, table, meta)} is "
                                        f"{'increasing' if slope > 0 else 'decreasing'} over time"),
                    description=(f"The {_GRAIN[grain]} {_measure_words(m, table, meta)} {word} by {_fmt(slope)} per {grain}, "
                                 f"{_pct(abs(rel))} of its average over {len(y)} {grain}s (p = {p:.2g})."),
                    # steady drift is usually the business growing: worth a line, rarely a headline
                    table=table, step=step, effect=0.4 * min(1.0, abs(rel)), p_value=p, count_sql=None,
                    indicators=[f"slope = {_fmt(slope)} per {grain}"], area_text=f"{table} {m} trend",
                ))
            elif meta.get("period") and m.startswith("avg_") and abs(rel) >= PERIOD_MIN_REL and p < 0.01:
                # a question about change over time: the average measure from the first to the last period
                first, last = (pd.Timestamp(df["month"].iloc[i]) for i in (0, -1))
                fmt = "%Y" if grain == "year" else "%Y-%m"
                word = "rose" if slope > 0 else "fell"
                what = _measure_words(m, table, meta)
                out.append(Candidate(
                    kind="trend", measure=m,
                    name=f"The {what} {word} from {_fmt(y[0])} in {first:{fmt}} to {_fmt(y[-1])} in {last:{fmt}}",
                    description=(f"The {what} {word} steadily over {len(y)} {grain}s, from {_fmt(y[0])} in "
                                 f"{first:{fmt}} to {_fmt(y[-1])} in {last:{fmt}} ({'+' if slope > 0 else ''}"
                                 f"{_fmt(slope)} per {grain}, linear trend p = {p:.2g})."),
                    table=table, step=step, effect=min(1.0, 0.3 + abs(rel)), p_value=p, count_sql=None,
                    indicators=[f"slope = {_fmt(slope)} per {grain}"], area_text=f"{table} {m} change over time",
                ))
    return out


def segment_trends(wide: pd.DataFrame, meta: dict, step: int, table: str, ref: str, skip: set) -> list[Candidate]:
    """A segment whose monthly series climbs (or falls) steadily while the typical segment's does not."""
    fits = {}
    for seg in wide.columns:
        y = wide[seg].to_numpy(dtype=float)
        if meta.get("measure") == "n":
            y = np.nan_to_num(y)
        y = y[np.isfinite(y)]
        tr = trend(y)
        if tr:
            fits[seg] = tr
    out = []
    measure = meta.get("measure") or "n"
    what = _measure_words(measure, table, meta)
    if len(fits) >= 2 and all(v[2] >= NO_EFFECT_P for v in fits.values()):
        dim = _words(meta.get("dim", ""))
        out.append(no_effect(f"The {what} for each {dim} value remains uniform over time",
                             f"None of the {len(fits)} {dim} values shows a trend in its monthly {what} "
                             f"(smallest p = {min(v[2] for v in fits.values()):.2g}).", table, step,
                             min(v[2] for v in fits.values()), f"{meta.get('dim')} {measure} over time",
                             f"{table} {dim} {what} uniform over time"))
    for seg, (slope, rel, p) in fits.items():
        others = [v[1] for s2, v in fits.items() if s2 != seg]
        if seg in skip or not others:
            continue
        typical = float(np.median(others))
        if abs(rel) < 0.5 or p >= 0.001 or abs(rel - typical) < 0.5 or abs(typical) > 0.5 * abs(rel):
            continue
        word = "increasing" if slope > 0 else "decreasing"
        col = wide[seg].dropna()
        first, last = (pd.Timestamp(col.index[i]).strftime("%Y-%m") for i in (0, -1))
        out.append(Candidate(
            kind="trend",
            name=f"The {what} for {seg} is {word} over time",
            description=(f"The monthly {what} for {seg} ({_words(meta.get('dim', ''))}) went from "
                         f"{_fmt(float(col.iloc[0]))} in {first} to {_fmt(float(col.iloc[-1]))} in {last} "
                         f"({'+' if slope > 0 else ''}{_fmt(slope)} per month, p = {p:.2g}), while for the typical "
                         f"other value it changed {_pct(typical)} over the window."),
            table=table, step=step, effect=min(1.0, abs(rel - typical) / 2), p_value=p, count_sql=None,
            segment=f"{meta.get('dim')}={seg}", indicators=[f"slope = {_fmt(slope)} per month"],
            area_text=f"{table} {meta.get('dim')} {seg} {what} trend over time",
        ))
    return out


def _measure_words(measure: str, table: str, meta: dict) -> str:
    if measure == "n":
        return f"number of {table}"
    if meta.get("label") and measure == meta.get("measure"):
        return f"average {meta['label']} in days"
    if measure.startswith("sum_"):
        return "total " + _words(measure[4:])
    if measure.startswith("avg_"):
        return "average " + _words(measure[4:])
    return _words(measure)


def segment_series_changes(df: pd.DataFrame, meta: dict, step: int, table: str, ref: str) -> list[Candidate]:
    """Per-segment monthly series: a segment whose level shifts while others do not."""
    dim = meta.get("dim")
    measure = meta.get("measure") or "n"
    if not dim or dim not in df or "month" not in df or measure not in df:
        return []
    months = sorted(df["month"].unique())
    if len(months) < 6:
        return []
    wide = df.pivot_table(index="month", columns=dim, values=measure, aggfunc="sum").sort_index()
    wide = wide.iloc[:-1] if len(wide) >= 7 and wide.sum(axis=1).iloc[-1] < 0.5 * wide.sum(axis=1).median() else wide
    shifts = {}
    for seg in wide.columns:
        y = wide[seg].fillna(0).to_numpy(dtype=float)
        cp = change_point(y)
        if cp:
            k, before, after, p = cp
            shifts[seg] = ((after - before) / abs(before) if before else 0.0, k, before, after, p)
    out = segment_trends(wide, meta, step, table, ref, skip=set()) if meta.get("trend") else []
    if not shifts:
        return out
    join = meta.get("join")
    time_col = meta.get("time")
    share = wide.sum() / float(wide.values.sum() or 1)
    for seg, (rel, k, before, after, p) in shifts.items():
        others = [s2 for s2 in wide.columns if s2 != seg]
        if not others:
            continue
        # the other segments pooled at the same date, each weighted by its base (an average of their
        # percentage changes would let a tiny segment's 20,000% stand for all of them)
        pooled = wide[others].fillna(0).sum(axis=1).to_numpy(dtype=float)
        base_before, base_after = float(pooled[:k].mean()), float(pooled[k:].mean())
        if base_before <= 0:
            continue  # the others did not exist before: nothing to compare with (a new status, a new series)
        typical = (base_after - base_before) / base_before
        if abs(rel) < CHANGE_MIN_REL or p >= 0.001 or relative_to_typical(rel, typical) < math.log(1.6):
            continue
        if share.get(seg, 0) < 0.05:  # small segments are noisy month to month
            continue
        since = pd.Timestamp(wide.index[k]).date().isoformat()
        word = "rose" if rel > 0 else "fell"
        if join:
            count_sql = (f"SELECT count(*) AS count FROM {ref} f JOIN {join['ref']} o ON f.{_q(join['on'])} = "
                         f"o.{_q(join['key'])} WHERE o.{_q(dim)} = {_lit(seg)} AND f.{_q(time_col)} >= "
                         f"TIMESTAMP '{since}'")
        else:
            count_sql = (f"SELECT count(*) AS count FROM {ref} WHERE {_q(dim)} = {_lit(seg)} AND {_q(time_col)} >= "
                         f"TIMESTAMP '{since}'")
        what = _measure_words(measure, table, meta)
        out.append(Candidate(
            kind="change_point",
            name=f"The {what} for {seg} {'increased' if rel > 0 else 'decreased'} from {since}",
            description=(f"The monthly {what} for {seg} ({_words(dim)}) {word} from {_fmt(before)} to "
                         f"{_fmt(after)} from {since} (p = {p:.2g}), while for the other {_words(dim)} values it "
                         f"changed {_pct(typical)}."),
            table=table, step=step, effect=min(1.0, abs(rel - typical)), p_value=p, count_sql=count_sql,
            segment=f"{dim}={seg}", indicators=[f"before = {_fmt(before)}", f"after = {_fmt(after)}",
                                                 f"typical change = {_pct(typical)}"],
            area_text=f"{table} {dim} {seg} {measure} monthly",
        ))
    return out


# ---------------------------------------------------------------------------- funnels


def _ordered_events(df: pd.DataFrame, ev: str) -> list:
    totals = df.groupby(ev)["n"].sum().sort_values(ascending=False)
    return list(totals.index)


def _is_negative(v) -> bool:
    return any(w in str(v).lower() for w in NEGATIVE_OUTCOMES)


def _tokens(v) -> set[str]:
    import re

    return set(re.findall(r"[a-z]+", str(v).lower()))


def funnel_pairs(events: list) -> list[tuple]:
    """(to, from) pairs: each positive step against the one above it; a negative event
    (remove, fail, cancel) against the event it undoes (most shared words), else the one above."""
    pairs = []
    positive = [e for e in events if not _is_negative(e)]
    for i in range(1, len(positive)):
        pairs.append((positive[i], positive[i - 1]))
    for e in events:
        if not _is_negative(e) or len(events) < 2:
            continue
        others = [x for x in positive]
        if not others:
            continue
        best = max(others, key=lambda x: (len(_tokens(x) & _tokens(e)), -events.index(x)))
        if not _tokens(best) & _tokens(e):
            best = others[0]
        pairs.append((e, best))
    return pairs


def funnel_outliers(df: pd.DataFrame, meta: dict, step: int, table: str, ref: str) -> list[Candidate]:
    dim, ev = meta.get("dim"), meta.get("event")
    if not dim or not ev or dim not in df or ev not in df:
        return []
    events = _ordered_events(df, ev)
    if len(events) < 2:
        return []
    wide = df.pivot_table(index=dim, columns=ev, values="n", aggfunc="sum").fillna(0)
    if len(wide) < 3:
        return []
    out = []
    for to, frm in funnel_pairs(events):
        rates = (wide[to] / wide[frm].where(wide[frm] > 0)).dropna()
        if len(rates) < 3:
            continue
        med = float(rates.median())
        for seg, r in rates.items():
            rest = wide.drop(index=seg)
            p = two_prop_p(wide.loc[seg, to], wide.loc[seg, frm], rest[to].sum(), rest[frm].sum())
            rel = abs(r - med) / med if med else 1.0
            others = rates.drop(index=seg)
            spread = float(others.max() - others.min()) if len(others) else 0.0
            if wide.loc[seg, frm] < MIN_SEGMENT_N:  # a handful of events is not a funnel
                continue
            if rel < MIN_REL_GAP or p >= 1e-6 or abs(r - med) < 2 * spread:
                continue
            bad = _is_negative(to) or (r < med and not _is_negative(to))
            join = meta.get("join")
            where = f"o.{_q(dim)} = {_lit(seg)}" if join else f"{_q(dim)} = {_lit(seg)}"
            src = (f"{ref} f JOIN {join['ref']} o ON f.{_q(join['on'])} = o.{_q(join['key'])}" if join else ref)
            evc = f"f.{_q(ev)}" if join else _q(ev)
            flagged = to if _is_negative(to) else frm
            count_sql = f"SELECT count(*) AS count FROM {src} WHERE {where} AND {evc} = {_lit(flagged)}"
            out.append(Candidate(
                kind="funnel_drop" if bad else "funnel_gain",
                name=(f"{seg} {table} have a much {'lower' if r < med else 'higher'} rate of {to} per {frm} than "
                      f"other {_words(dim)} values"),
                description=(f"In {table}, {to} per {frm} for {dim} = {seg} is {_fmt(r)}, against a typical "
                             f"{_fmt(med)} for other values of {dim} ({int(wide.loc[seg, frm]):,} {frm} events)."),
                table=table, step=step, effect=min(1.0, rel), p_value=p, count_sql=count_sql,
                segment=f"{dim}={seg}",
                indicators=[f"{to}/{frm}[{seg}] = {_fmt(r)}", f"typical = {_fmt(med)}"],
                area_text=f"{table} funnel {ev} {to} {frm} {dim} {seg}",
            ))
    return out


def rate_series_changes(df: pd.DataFrame, meta: dict, step: int, table: str, ref: str) -> list[Candidate]:
    """A segment whose step conversion (or failure share) shifts over time while others do not."""
    dim, ev, time_col = meta.get("dim"), meta.get("event"), meta.get("time")
    if not dim or not ev or "month" not in df:
        return []
    events = _ordered_events(df, ev)
    if len(events) < 2:
        return []
    out = []
    entity = meta.get("entity")
    join = meta.get("join")
    for to, frm in funnel_pairs(events):
        shifts = {}
        for seg, g in df.groupby(dim):
            w = g.pivot_table(index="month", columns=ev, values="n", aggfunc="sum").sort_index().fillna(0)
            if to not in w or frm not in w or len(w) < 6:
                continue
            w = w.iloc[:-1] if len(w) >= 7 and w[frm].iloc[-1] < 0.5 * w[frm].median() else w
            y = (w[to] / w[frm].where(w[frm] > 0)).fillna(0).to_numpy(dtype=float)
            cp = change_point(y)
            if cp:
                k, before, after, p = cp
                shifts[seg] = (k, before, after, p, w.index[k], float(w[frm].iloc[k:].sum()))
        if len(shifts) < 2:
            continue
        rels = {s: (v[2] - v[1]) / abs(v[1]) if v[1] else 0.0 for s, v in shifts.items()}
        for seg, (_k, before, after, p, since_ts, n_after) in shifts.items():
            rel = rels[seg]
            typical = float(np.median([r for s2, r in rels.items() if s2 != seg]))  # the others only
            if abs(rel) < CHANGE_MIN_REL or p >= 0.001 or relative_to_typical(rel, typical) < math.log(1.6):
                continue
            since = pd.Timestamp(since_ts).date().isoformat()
            negative = _is_negative(to)
            flagged = to if negative else frm
            src = (f"{ref} f JOIN {join['ref']} o ON f.{_q(join['on'])} = o.{_q(join['key'])}" if join else ref)
            pre = "f." if join else ""
            seg_col = f"o.{_q(dim)}" if join else _q(dim)
            what = "count(*)" if negative or not entity else f"count(DISTINCT {pre}{_q(entity)})"
            count_sql = (f"SELECT {what} AS count FROM {src} WHERE {seg_col} = {_lit(seg)} AND {pre}{_q(ev)} = "
                         f"{_lit(flagged)} AND {pre}{_q(time_col)} >= TIMESTAMP '{since}'")
            word = "rose" if rel > 0 else "fell"
            out.append(Candidate(
                kind="change_point",
                name=f"The rate of {to} per {frm} for {seg} {table} {word} from {since}",
                description=(f"In {table}, {to} per {frm} for {dim} = {seg} {word} from {_fmt(before)} to "
                             f"{_fmt(after)} from {since} (Welch t-test p = {p:.2g}); across other values of {dim} "
                             f"it changed by {_pct(typical)}."),
                table=table, step=step, effect=min(1.0, abs(rel - typical)), p_value=p, count_sql=count_sql,
                segment=f"{dim}={seg}",
                indicators=[f"before = {_fmt(before)}", f"after = {_fmt(after)}", f"since {since}",
                            f"{frm} events since then = {int(n_after):,}"],
                area_text=f"{table} {ev} {to} {frm} {dim} {seg} conversion monthly",
            ))
    return out


# ---------------------------------------------------------------------------- concentration, retention, quality


def gini_from_ranks(weighted: float, total: float, n: int) -> float:
    """Gini coefficient from sum(rank_ascending * value), the total and the count (values >= 0)."""
    if n <= 0 or total <= 0:
        return 0.0
    return 2.0 * weighted / (n * total) - (n + 1.0) / n


def concentration(df: pd.DataFrame, meta: dict, step: int, table: str, ref: str) -> list[Candidate]:
    if df.empty or "total" not in df:
        return []
    row = df.iloc[0]
    total = float(row["total"] or 0)
    n = int(row["entities"] or 0)
    if total <= 0 or n < 100:
        return []
    shares = {k: float(row[f"top{k}"] or 0) / total for k in (1, 5, 10)}
    ent, m = meta.get("entity"), meta.get("measure")
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
        kind="concentration",
        name=f"Top {k}% of {ent} ({top_n:,}) bring {_pct(shares[k])} of {m}",
        description=(f"In {table}, the top {k}% of {n:,} {ent} values ({top_n:,}) account for {_pct(shares[k])} of "
                     f"{'' if m.startswith('total') else 'total '}{m} ({_fmt(total)}); the top 1%, 5% and 10% hold {_pct(shares[1])}, {_pct(shares[5])} "
                     f"and {_pct(shares[10])}.{gini_text}"),
        table=table, step=step, effect=min(1.0, shares[k]), p_value=1e-12 if lift >= 5 else 0.01,
        count_sql=f"SELECT CAST(ceil(count(DISTINCT {_q(ent)}) * {k / 100}) AS BIGINT) AS count FROM {ref}",
        segment=f"top {k}% {ent}", indicators=[f"top{k} share = {_pct(shares[k])}", f"lift = {lift:.1f}x"]
        + ([f"gini = {g:.3f}"] if g is not None else []),
        area_text=f"{table} {m} revenue concentration top customers spend",
    )]


def retention_outliers(df: pd.DataFrame, meta: dict, step: int, table: str, ref: str) -> list[Candidate]:
    dim = meta.get("dim")
    if not dim or dim not in df or "entities" not in df or len(df) < 3:
        return []
    df = df[df["entities"] >= MIN_SEGMENT_N].dropna(subset=[dim])
    if len(df) < 3:
        return []
    best: Candidate | None = None
    act, key, created, ats = meta["activity_ref"], meta["key"], meta["created"], meta["activity_time"]
    for m in ("returned_rate", "repeat_rate"):
        vals = df[m].to_numpy(dtype=float)
        for i, v in enumerate(vals):
            rest = np.delete(np.arange(len(df)), i)
            rest_rate = float(np.average(vals[rest], weights=df["entities"].to_numpy()[rest]))
            spread = float(vals[rest].max() - vals[rest].min())
            if v >= rest_rate or rest_rate <= 0:
                continue
            rel = (rest_rate - v) / rest_rate
            n = float(df["entities"].iloc[i])
            p = two_prop_p(v * n, n, rest_rate * df["entities"].iloc[rest].sum(), df["entities"].iloc[rest].sum())
            if rel < MIN_REL_GAP or p >= 1e-6 or (rest_rate - v) < 2 * spread:
                continue
            seg = df[dim].iloc[i]
            if m == "returned_rate":
                count_sql = (f"SELECT count(*) AS count FROM {ref} e WHERE e.{_q(dim)} = {_lit(seg)} AND NOT EXISTS "
                             f"(SELECT 1 FROM {act} a WHERE a.{_q(key)} = e.{_q(key)} AND a.{_q(ats)} >= "
                             f"e.{_q(created)} + INTERVAL 1 DAY)")
                what = "return after their first day"
            else:
                count_sql = (f"SELECT count(*) AS count FROM (SELECT e.{_q(key)} FROM {ref} e JOIN {act} a ON "
                             f"a.{_q(key)} = e.{_q(key)} WHERE e.{_q(dim)} = {_lit(seg)} GROUP BY e.{_q(key)} "
                             f"HAVING count(*) = 1) AS single")
                what = "come back for a second activity"
            cand = Candidate(
                kind="retention_drop",
                name=f"Only {_pct(v)} of {seg} {table} {what}, against {_pct(rest_rate)} for other {_words(dim)} values",
                description=(f"Of {int(n):,} {table} with {dim} = {seg}, {_pct(v)} {what} (judged by their rows in {meta['activity_table']}), "
                             f"against {_pct(rest_rate)} for other values of {dim}: a churn gap of "
                             f"{_pct(rest_rate - v)} points."),
                table=table, step=step, effect=min(1.0, rel), p_value=p, count_sql=count_sql, segment=f"{dim}={seg}",
                indicators=[f"{m}[{seg}] = {_pct(v)}", f"{m}[others] = {_pct(rest_rate)}"],
                area_text=f"{table} {dim} {seg} retention churn cohort returning repeat",
            )
            if best is None or cand.effect > best.effect:
                best = cand
    return [best] if best else []


def quality_from_profile(row: dict, meta: dict, step: int, table: str, ref: str,
                         columns: list[str]) -> list[Candidate]:
    out = []
    n = int(row.get("row_count") or 0)
    if n == 0:
        return out
    for c in columns:
        neg = row.get(f"{c}__negative")
        if neg:
            out.append(Candidate(
                kind="data_quality", name=f"{int(neg):,} rows of {table} have a negative {c}",
                description=(f"{int(neg):,} of {n:,} rows in {table} have {c} < 0, which is impossible for this "
                             f"column and distorts every average of it."),
                table=table, step=step, effect=min(1.0, 0.3 + neg / n), p_value=1e-12,
                count_sql=f"SELECT count(*) AS count FROM {ref} WHERE {_q(c)} < 0", segment=c,
                indicators=[f"negative {c} = {int(neg):,}", f"rows = {n:,}"],
                area_text=f"{table} {c} data quality negative",
            ))
        nulls = int(row.get(f"{c}__nulls") or 0)
        if 0 < nulls and nulls / n >= 0.01 and nulls / n < 0.5:
            out.append(Candidate(
                kind="data_quality", name=f"{nulls:,} rows of {table} have no {c} ({_pct(nulls / n)})",
                description=(f"{nulls:,} of {n:,} rows in {table} have an empty {c}; they drop out of every "
                             f"breakdown by {c}."),
                table=table, step=step, effect=min(1.0, 0.2 + nulls / n), p_value=1e-9,
                count_sql=f"SELECT count(*) AS count FROM {ref} WHERE {_q(c)} IS NULL", segment=c,
                indicators=[f"null {c} = {nulls:,}", f"null rate = {_pct(nulls / n)}"],
                area_text=f"{table} {c} data quality missing null",
            ))
    return out


def end_before_start(df: pd.DataFrame, meta: dict, step: int, table: str, ref: str) -> list[Candidate]:
    if df.empty:
        return []
    bad = int(df["bad"].iloc[0] or 0)
    n = int(df["n"].iloc[0] or 0)
    if bad == 0:
        return []
    s, e = meta["start"], meta["end"]
    return [Candidate(
        kind="data_quality", name=f"{bad:,} rows of {table} end before they start",
        description=f"{bad:,} of {n:,} rows in {table} have {e} earlier than {s}: a logging defect.",
        table=table, step=step, effect=min(1.0, 0.3 + bad / max(n, 1)), p_value=1e-12,
        count_sql=f"SELECT count(*) AS count FROM {ref} WHERE {_q(e)} < {_q(s)}", segment=f"{e}<{s}",
        indicators=[f"rows with {e} < {s} = {bad:,}"], area_text=f"{table} {s} {e} data quality duration",
    )]


# ---------------------------------------------------------------------------- shares, intervals, correlation

MIN_DURATION_SEGMENT_N = 10
NO_EFFECT = "no_effect"  # a hypothesis the data does not support: part of the answer to a goal
DESCRIPTIVE_KINDS = ("dominant_segment", "crosstab")  # reported for goals only
NO_EFFECT_P = 0.2        # reported as "uniform" only when the test is far from significant


def no_effect(name: str, description: str, table: str, step: int, p: float, segment: str, area_text: str) -> Candidate:
    return Candidate(kind=NO_EFFECT, name=name, description=description, table=table, step=step, effect=0.0,
                     p_value=p, count_sql=None, segment=segment, area_text=area_text)


def anova_p(n: np.ndarray, mean: np.ndarray, sd: np.ndarray) -> float:
    """One-way ANOVA from each group's count, mean and standard deviation."""
    k, total = len(n), float(n.sum())
    if k < 2 or total <= k:
        return 1.0
    grand = float((n * mean).sum() / total)
    ssb = float((n * (mean - grand) ** 2).sum())
    ssw = float(((n - 1) * sd ** 2).sum())
    if ssw <= 0:
        return 0.0 if ssb > 0 else 1.0
    f = (ssb / (k - 1)) / (ssw / (total - k))
    return float(stats.f.sf(f, k - 1, total - k))
MIN_CORRELATION = 0.3


def _words(col: str) -> str:
    return str(col).replace("_", " ")


def dominant_segment(df: pd.DataFrame, dim: str, meta: dict, step: int, table: str, ref: str) -> list[Candidate]:
    """Values holding far more rows than the others: one dominant value (chi-square goodness of fit
    against an even spread), or values well above the typical one (binomial test against an even share)."""
    if dim not in df or "n" not in df:
        return []
    d = df.dropna(subset=[dim])
    k = len(d)
    if k < 2 or k > 30:
        return []
    n = pd.to_numeric(d["n"], errors="coerce").fillna(0).to_numpy(dtype=float)
    total = float(n.sum())
    if total < 50:
        return []
    order = np.argsort(-n)
    med = float(np.median(n))
    if k >= 3:
        p_even = float(stats.chisquare(n).pvalue)
        if p_even >= NO_EFFECT_P:
            return [no_effect(f"The distribution of {table} across {_words(dim)} values is uniform",
                              f"{table} spread evenly over {k} {_words(dim)} values: {int(n.min()):,} to "
                              f"{int(n.max()):,} each (chi-square p = {p_even:.2g}).", table, step, p_even,
                              f"{dim} uniform", f"{table} {dim} distribution uniform")]
    out = []
    for rank, i in enumerate(order):
        top = float(n[i])
        others = np.delete(n, i)
        typical = float(np.median(others))
        share = top / total
        dominant = rank == 0 and share >= min(2.0 / k, 1.0 / k + 0.25) and top >= 1.5 * float(others.max())
        if not dominant and (k < 4 or top < 1.5 * max(typical, med) or top < 1.3 * total / k):
            break  # counts are sorted: nothing further down stands out either
        p = float(stats.chisquare(n).pvalue) if dominant else \
            float(stats.binomtest(int(top), int(total), 1.0 / k, alternative="greater").pvalue)
        seg = d[dim].iloc[int(i)]
        effect = (share - 1.0 / k) / (1 - 1.0 / k) if dominant else min(1.0, (top - typical) / max(top, 1.0))
        out.append(Candidate(
            kind="dominant_segment",
            name=(f"The number of {seg} {table} is significantly higher than other {_words(dim)} values" if dominant
                  else f"{seg} has a significantly higher number of {table} than other {_words(dim)} values"),
            description=(f"{int(top):,} of {int(total):,} {table} ({_pct(share)}) have {_words(dim)} {seg}, against "
                         f"{_fmt(typical)} for the typical one of the other {k - 1} values "
                         f"({'chi-square' if dominant else 'binomial'} test p = {p:.2g})."),
            table=table, step=step, effect=min(1.0, effect), p_value=p,
            count_sql=f"SELECT count(*) AS count FROM {ref} WHERE {_q(dim)} = {_lit(seg)}",
            segment=f"{dim}={seg}", indicators=[f"share of {seg} = {_pct(share)}", f"values of {dim} = {k}"],
            area_text=f"{table} {dim} {seg} distribution imbalance",
        ))
        if dominant:
            break
    return out


def cramers_v(table: np.ndarray) -> float:
    """Association between two categorical variables, 0 (none) to 1 (one determines the other)."""
    table = table[table.sum(axis=1) > 0][:, table.sum(axis=0) > 0]
    if min(table.shape) < 2:
        return 0.0
    chi2 = stats.chi2_contingency(table, correction=False)[0]
    return float(math.sqrt(chi2 / (table.sum() * (min(table.shape) - 1))))


def crosstab_concentration(df: pd.DataFrame, meta: dict, step: int, table: str, ref: str) -> list[Candidate]:
    """Within one segment, most rows share a value of another dimension that is rare elsewhere."""
    dims = meta.get("dims") or []
    if len(dims) != 2 or any(x not in df for x in dims) or "n" not in df:
        return []
    df = df.dropna(subset=dims)
    wide = df.pivot_table(index=dims[0], columns=dims[1], values="n", aggfunc="sum", fill_value=0)
    total = float(wide.values.sum())
    if total < 50 or wide.shape[0] < 2 or wide.shape[1] < 2:
        return []
    if cramers_v(wide.to_numpy(dtype=float)) >= 0.8:
        return []  # one dimension all but determines the other (category and assignment group): no news
    out = []
    for outer, inner, w in ((dims[0], dims[1], wide), (dims[1], dims[0], wide.T)):
        for a in w.index:
            row = w.loc[a].astype(float)
            n_a = float(row.sum())
            if n_a < 20:
                continue
            b = row.idxmax()
            x = float(row[b])
            share_in = x / n_a
            n_rest = total - n_a
            x_rest = float(w[b].sum()) - x
            share_rest = x_rest / n_rest if n_rest else 0.0
            most = share_in >= 0.5 and share_in - share_rest >= 0.25
            if not most and w.shape[1] > 6:
                continue  # "a higher share of one of many values" reads as noise; keep it for outcomes
            if not most:  # not most of the segment: the value of the other dimension that is most over-represented
                lift = (w.loc[a].astype(float) / n_a) / ((w.sum() - w.loc[a]).astype(float) / max(n_rest, 1)).clip(
                    lower=1e-9)
                b = lift.idxmax()
                x = float(row[b])
                share_in = x / n_a
                x_rest = float(w[b].sum()) - x
                share_rest = x_rest / n_rest if n_rest else 0.0
            if share_in < 1.5 * share_rest or share_in - share_rest < 0.1 or x < 10:
                continue
            p = two_prop_p(x, n_a, x_rest, n_rest)
            out.append(Candidate(
                kind="crosstab",
                name=(f"Most of the {a} {table} have {_words(inner)} {b}" if most else
                      f"{a} {table} have a significantly higher share of {_words(inner)} {b} than other "
                      f"{_words(outer)} values"),
                description=(f"{int(x):,} of {int(n_a):,} {a} {table} have {_words(inner)} {b} "
                             f"({_pct(share_in)}), against {_pct(share_rest)} of the other {table}."),
                table=table, step=step, effect=min(1.0, share_in - share_rest), p_value=p,
                count_sql=(f"SELECT count(*) AS count FROM {ref} WHERE {_q(outer)} = {_lit(a)} "
                           f"AND {_q(inner)} = {_lit(b)}"),
                segment=f"{outer}={a}", indicators=[f"{inner} = {b} within {a}: {_pct(share_in)}",
                                                    f"elsewhere: {_pct(share_rest)}"],
                area_text=f"{table} {outer} {a} {inner} {b}",
            ))
    return out


def duration_outliers(df: pd.DataFrame, meta: dict, step: int, table: str, ref: str) -> list[Candidate]:
    """A segment whose average interval (time to resolution, processing time) differs from the rest."""
    if not meta.get("measure") or not meta.get("end"):
        return []
    valid = f"{_q(meta['end'])} IS NOT NULL AND {_q(meta['end'])} >= {_q(meta['start'])}"
    return mean_outliers(df, meta.get("dim"), meta["measure"], meta.get("label", "duration"), " days", valid,
                         step, table, ref)


def mean_outliers(df: pd.DataFrame, dim: str | None, m: str, label: str, unit: str, valid: str | None,
                  step: int, table: str, ref: str) -> list[Candidate]:
    """Segments whose average differs from the rest of the table: Welch's t-test from the segment's
    and the rest's count, mean and standard deviation (the rest pooled from the other segments)."""
    sd_col = "sd_" + m[4:]
    if not dim or dim not in df or m not in df or sd_col not in df or "n" not in df:
        return []
    d = df.dropna(subset=[dim, m])
    d = d[d["n"] >= MIN_DURATION_SEGMENT_N]
    if len(d) < 2:
        return []
    n = d["n"].to_numpy(dtype=float)
    mean = pd.to_numeric(d[m], errors="coerce").to_numpy(dtype=float)
    sd = pd.to_numeric(d[sd_col], errors="coerce").fillna(0).to_numpy(dtype=float)
    if len(d) >= 3:
        p_all = anova_p(n, mean, sd)
        if p_all >= NO_EFFECT_P:
            return [no_effect(f"The average {label} is uniform across {_words(dim)} values",
                              f"The average {label} of {table} ranges only from {_fmt(mean.min())}{unit} to "
                              f"{_fmt(mean.max())}{unit} over {len(d)} {_words(dim)} values (ANOVA p = {p_all:.2g}).",
                              table, step, p_all, f"{dim} {label} uniform", f"{table} {dim} {label} uniform")]
    out = []
    for i in range(len(d)):
        rest = np.arange(len(d)) != i
        n_r = n[rest].sum()
        if n_r < MIN_DURATION_SEGMENT_N:
            continue
        mean_r = float((n[rest] * mean[rest]).sum() / n_r)
        ss = ((n[rest] - 1) * sd[rest] ** 2).sum() + (n[rest] * (mean[rest] - mean_r) ** 2).sum()
        sd_r = math.sqrt(ss / max(n_r - 1, 1))
        if not mean_r or sd[i] == 0 or sd_r == 0:
            continue  # a segment whose rows all hold one value is a definition, not a finding
        rel = (mean[i] - mean_r) / abs(mean_r)
        typical = float(np.median(mean[rest]))
        if abs(rel) < MIN_REL_GAP or (typical and abs(mean[i] - typical) / abs(typical) < MIN_REL_GAP):
            continue  # far from the pooled rest only because another segment pulls it: not this one's finding
        p = float(stats.ttest_ind_from_stats(mean[i], sd[i], n[i], mean_r, sd_r, n_r, equal_var=False).pvalue)
        if not math.isfinite(p):
            continue
        seg = d[dim].iloc[i]
        word = "higher" if rel > 0 else "lower"
        cond = f"{_q(dim)} = {_lit(seg)}" + (f" AND {valid}" if valid else "")
        out.append(Candidate(
            kind="mean_outlier", measure=m,
            name=f"{seg} has a significantly {word} average {label} than other {_words(dim)} values",
            description=(f"{table[:1].upper() + table[1:]} with {_words(dim)} {seg} average {_fmt(mean[i])}{unit} of {label}, against "
                         f"{_fmt(mean_r)}{unit} for the rest ({_pct(abs(rel))} {word}; Welch t-test p = {p:.2g}, "
                         f"n = {int(n[i]):,})."),
            table=table, step=step, effect=min(1.0, abs(rel)), p_value=p,
            count_sql=f"SELECT count(*) AS count FROM {ref} WHERE {cond}",
            segment=f"{dim}={seg}", indicators=[f"average {label}[{seg}] = {_fmt(mean[i])}{unit}",
                                                f"rest = {_fmt(mean_r)}{unit}"],
            area_text=f"{table} {dim} {seg} {label}",
        ))
    return out


def correlation_p(r: float, n: float) -> float:
    if n < 4 or not math.isfinite(r):
        return 1.0
    if abs(r) >= 1:
        return 0.0
    t = r * math.sqrt((n - 2) / (1 - r * r))
    return float(2 * stats.t.sf(abs(t), n - 2))


def _correlation_candidate(a: str, b: str, r: float, n: float, p: float, table: str, step: int, unit: str) -> Candidate:
    sign = "positive" if r > 0 else "negative"
    strength = "strong" if abs(r) >= 0.6 else "moderate"
    return Candidate(
        kind="correlation",
        name=f"There is a {sign} correlation between {_words(a)} and {_words(b)}",
        description=(f"There is a {strength} {sign} correlation between {_words(a)} and {_words(b)} in {table} "
                     f"(r = {r:.2f} over {int(n):,} {unit}, p = {p:.2g}): higher {_words(a)} goes with "
                     f"{'higher' if r > 0 else 'lower'} {_words(b)}."),
        table=table, step=step, effect=min(1.0, abs(r)), p_value=p, count_sql=None, segment=f"{a}~{b}",
        indicators=[f"pearson r = {r:.2f}", f"n = {int(n):,}"], area_text=f"{table} {a} {b} correlation relationship",
    )


def correlations(df: pd.DataFrame, meta: dict, step: int, table: str, ref: str) -> list[Candidate]:
    """Pearson correlations computed by the warehouse, with their p-values."""
    out = []
    row = df.iloc[0]
    for k, (a, b) in enumerate(meta.get("pairs") or []):
        r, n = row.get(f"r{k}"), row.get(f"n{k}")
        if r is None or n is None or pd.isna(r) or pd.isna(n):
            continue
        r, n = float(r), float(n)
        if abs(r) < MIN_CORRELATION:
            continue
        out.append(_correlation_candidate(a, b, r, n, correlation_p(r, n), table, step, "rows"))
    return out


def duration_series(df: pd.DataFrame, meta: dict, step: int, table: str, ref: str) -> list[Candidate]:
    """The average interval month by month: a trend, and whether it moves with volume."""
    m = meta.get("measure")
    if "month" not in df or m not in df or "n" not in df:
        return []
    df = _complete_months(df.dropna(subset=["month"]).sort_values("month").reset_index(drop=True))
    df = df.dropna(subset=[m])
    if len(df) < 6:
        return []
    label = meta.get("label", "duration")
    y = pd.to_numeric(df[m], errors="coerce").to_numpy(dtype=float)
    vol = df["n"].to_numpy(dtype=float)
    first, last = (pd.Timestamp(df["month"].iloc[i]).strftime("%Y-%m") for i in (0, -1))
    out = []
    tr = trend(y)
    if tr and tr[2] >= NO_EFFECT_P:
        out.append(no_effect(f"The average {label} of {table} is uniform over time",
                             f"The average {label} of {table} stays between {_fmt(y.min())} and {_fmt(y.max())} days "
                             f"a month from {first} to {last}, with no significant trend (p = {tr[2]:.2g}).",
                             table, step, tr[2], f"{label} over time", f"{table} {label} uniform over time"))
    if tr:
        slope, rel, p = tr
        if abs(rel) >= CHANGE_MIN_REL and p < 0.01:
            word = "increasing" if slope > 0 else "decreasing"
            out.append(Candidate(
                kind="trend", name=f"The average {label} of {table} is {word} over time",
                description=(f"The average {label} of {table} is {word} over time: from {_fmt(y[0])} days in {first} "
                             f"to {_fmt(y[-1])} days in {last} ({'+' if slope > 0 else ''}{_fmt(slope)} days per "
                             f"month, p = {p:.2g})."),
                table=table, step=step, effect=min(1.0, abs(rel)), p_value=p,
                count_sql=None, segment=f"{label} trend", indicators=[f"slope = {_fmt(slope)} days per month"],
                area_text=f"{table} {label} trend over time",
            ))
    if np.std(vol) > 0 and np.std(y) > 0:
        r = float(np.corrcoef(vol, y)[0, 1])
        p_r = correlation_p(r, len(y))
        if abs(r) < MIN_CORRELATION and p_r >= NO_EFFECT_P:
            out.append(no_effect(f"There is no correlation between the number of {table} and the average {label}",
                                 f"Month by month, the number of {table} and their average {label} do not move "
                                 f"together (r = {r:.2f} over {len(y)} months, p = {p_r:.2g}).", table, step, p_r,
                                 f"volume~{label}", f"{table} volume {label} correlation"))
        if abs(r) >= 0.5:
            out.append(_correlation_candidate(f"number of {table}", f"average {label}", r, len(y),
                                              correlation_p(r, len(y)), table, step, "months"))
    return out


# ---------------------------------------------------------------------------- scoring


def benjamini_hochberg(ps: list[float]) -> list[float]:
    n = len(ps)
    if n == 0:
        return []
    order = np.argsort(ps)
    q = np.empty(n)
    prev = 1.0
    for rank, idx in reversed(list(enumerate(order, start=1))):
        prev = min(prev, ps[idx] * n / rank)
        q[idx] = prev
    return [float(x) for x in q]


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


_LEVELS = ["low", "medium", "high", "critical"]
LOW_SUPPORT_ROWS = 100


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


GOAL_RELEVANT = 0.3  # cosine of a finding's headline to the goal below which it is not about the question
NO_EFFECT_RELEVANT = 0.2  # "X is uniform across Y" carries fewer of the goal's words: a lower bar


def _base_severity(c: Candidate) -> str:
    if c.kind == NO_EFFECT:
        return "low"
    if c.kind == "trend":  # a steady drift is worth watching, rarely an emergency
        return "medium" if c.effect >= 0.2 else "low"
    if c.kind == "correlation":  # an association, never proof on its own
        return "high" if c.effect >= 0.7 else "medium" if c.effect >= 0.4 else "low"
    if c.kind == "data_quality":
        return "medium" if c.effect >= 0.3 else "low"
    if c.effect >= 0.7 and c.q_value < 1e-6:
        return "critical"
    if c.effect >= 0.4:
        return "high"
    if c.effect >= 0.2:
        return "medium"
    return "low"


# ---------------------------------------------------------------------------- spread effects and seasonality

MIN_EFFECT_GROUP_N = 5
DEFINITION_ETA2 = 0.98  # a dimension that explains all of a measure's spread defines it
MIN_UNASKED_EFFECT = 0.3  # unasked, a spread effect must be about medium (omega² ≈ 0.06, Cohen) to be reported
_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December"]
_DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]  # dayofweek: 0 = Sunday


def calendar_label(value, calendar: str | None) -> str:
    """7 -> July (month of year), 0 -> Sunday (day of week), 17 -> 17:00 (hour of day)."""
    try:
        v = int(value)
    except (TypeError, ValueError):
        return str(value)
    if calendar == "month" and 1 <= v <= 12:
        return _MONTHS[v - 1]
    if calendar == "dow" and 0 <= v <= 6:
        return _DAYS[v]
    if calendar == "hour" and 0 <= v <= 24:
        return f"{v:02d}:00"
    return str(value)


def anova_effect(n: np.ndarray, mean: np.ndarray, sd: np.ndarray) -> tuple[float, float, float]:
    """(eta squared, omega squared, p) of a one-way ANOVA from each group's count, mean and sd."""
    k, total = len(n), float(n.sum())
    if k < 2 or total <= k:
        return 0.0, 0.0, 1.0
    grand = float((n * mean).sum() / total)
    ssb = float((n * (mean - grand) ** 2).sum())
    ssw = float(((n - 1) * sd ** 2).sum())
    sst = ssb + ssw
    if sst <= 0:
        return 0.0, 0.0, 1.0
    msw = ssw / (total - k)
    eta2 = ssb / sst
    omega2 = max(0.0, (ssb - (k - 1) * msw) / (sst + msw))
    if ssw <= 0:
        return eta2, omega2, 0.0 if ssb > 0 else 1.0
    f = (ssb / (k - 1)) / msw
    return eta2, omega2, float(stats.f.sf(f, k - 1, total - k))


def _with_measure(m: str, c: Candidate) -> Candidate:
    c.measure = m
    return c


def group_effects(df: pd.DataFrame, dim: str, meta: dict, step: int, table: str, ref: str) -> list[Candidate]:
    """How much of a measure's spread lies between the values of a dimension (eta squared / omega
    squared with a one-way ANOVA from group counts, means and standard deviations), naming the highest
    and lowest groups with their averages. Effects spread over many groups count, not only outliers."""
    if dim not in df or "n" not in df:
        return []
    out = []
    cal = meta.get("calendar")
    expr = meta.get("expr") or _q(dim)
    join = meta.get("join")
    src = f"{ref} f JOIN {join['ref']} o ON f.{_q(join['on'])} = o.{_q(join['key'])}" if join else ref
    col = f"o.{_q(dim)}" if join else expr
    rows_all = float(pd.to_numeric(df["n"], errors="coerce").fillna(0).sum())
    for m in [c for c in df.columns if c.startswith("avg_")]:
        base = m[4:]
        sd_col, nn_col = "sd_" + base, "nn_" + base
        if sd_col not in df:
            continue
        d = df.dropna(subset=[dim, m]).copy()
        ncol = nn_col if nn_col in d else "n"
        d["_n"] = pd.to_numeric(d[ncol], errors="coerce").fillna(0)
        d = d[d["_n"] >= MIN_EFFECT_GROUP_N]
        if len(d) < 2:
            continue
        n = d["_n"].to_numpy(dtype=float)
        mean = pd.to_numeric(d[m], errors="coerce").to_numpy(dtype=float)
        sd = pd.to_numeric(d[sd_col], errors="coerce").fillna(0).to_numpy(dtype=float)
        if not np.isfinite(mean).all():
            continue
        eta2, omega2, p = anova_effect(n, mean, sd)
        total = float(n.sum())
        grand = float((n * mean).sum() / total)
        label = "average " + _words(base)
        dim_words = _words(dim)
        if p >= NO_EFFECT_P:
            if not meta.get("small"):
                out.append(_with_measure(m, no_effect(f"The {label} is uniform across {dim_words} values",
                                     f"The {label} of {table} ranges only from {_fmt(mean.min())} to "
                                     f"{_fmt(mean.max())} over {len(d)} {dim_words} values (ANOVA p = {p:.2g}, "
                                     f"eta\u00b2 = {eta2:.3f}).", table, step, p, f"{dim} {base} uniform",
                                     f"{table} {dim} {base} uniform")))
            continue
        named = d["_n"].to_numpy(dtype=float) >= max(MIN_EFFECT_GROUP_N, 0.005 * total)
        idx = np.flatnonzero(named) if named.sum() >= 2 else np.arange(len(d))
        order = idx[np.argsort(mean[idx])]
        hi, lo = int(order[-1]), int(order[0])
        if sd[hi] == 0 or sd[lo] == 0 or eta2 >= DEFINITION_ETA2:
            continue  # every row of a group holds one value: the dimension defines the measure (a price list)
        hi_v, lo_v = d[dim].iloc[hi], d[dim].iloc[lo]
        hi_l, lo_l = calendar_label(hi_v, cal), calendar_label(lo_v, cal)
        gap = (mean[hi] - mean[lo]) / abs(grand) if grand else 0.0
        effect = min(1.0, 0.6 * min(1.0, math.sqrt(omega2) / 0.5) + 0.4 * min(1.0, abs(gap) / 2))
        share = total / rows_all if rows_all else 1.0
        top = [calendar_label(d[dim].iloc[i], cal) for i in order[::-1][:3]]
        caveat = ""
        if share < 0.5:
            caveat = f" Only {_pct(share)} of the rows have a {_words(base)}: the rest are not counted."
        if total < 100:
            caveat += f" Low support: {int(total)} rows."
        if cal:
            what = {"month": "month of the year", "dow": "day of the week", "hour": "hour of the day"}[cal]
            at = {"month": "in", "dow": "on", "hour": "at"}[cal]
            name = (f"The {label} peaks {at} {hi_l} ({_fmt(mean[hi])}) and is lowest {at} {lo_l} ({_fmt(mean[lo])}) "
                    f"by {what}")
        else:
            name = (f"{hi_l} has the highest {label} ({_fmt(mean[hi])}) and {lo_l} the lowest ({_fmt(mean[lo])}) "
                    f"across {dim_words} values")
        out.append(Candidate(
            kind="group_effect", measure=m,
            name=name,
            description=(f"In {table}, the {label} differs by {dim_words} (ANOVA p = {p:.2g}, eta\u00b2 = {eta2:.3f}, "
                         f"omega\u00b2 = {omega2:.3f} over {len(d)} values and {int(total):,} rows): highest for "
                         f"{', '.join(top)} ({_fmt(mean[hi])} for {hi_l}, n = {int(n[hi]):,}), lowest for {lo_l} "
                         f"({_fmt(mean[lo])}, n = {int(n[lo]):,}), against {_fmt(grand)} overall.{caveat}"),
            table=table, step=step, effect=round(effect, 4), p_value=p,
            count_sql=f"SELECT count(*) AS count FROM {src} WHERE {col} = {_lit(hi_v)}",
            segment=f"{base} by {dim}", support=int(total), support_share=round(share, 4),
            groups=[f"{dim}={hi_v}", f"{dim}={lo_v}"],
            catalogue=bool(meta.get("catalogue")),
            indicators=[f"eta\u00b2 = {eta2:.3f}", f"omega\u00b2 = {omega2:.3f}", f"{label}[{hi_l}] = {_fmt(mean[hi])}",
                        f"{label}[{lo_l}] = {_fmt(mean[lo])}", f"overall = {_fmt(grand)}", f"rows = {int(total):,}"],
            area_text=f"{table} {dim} {base} {label} differs by {dim_words} {hi_l} {lo_l}",
        ))
    return out


# ---------------------------------------------------------------------------- artifacts

SWITCH_TOLERANCE_DAYS = 31
ARTIFACT = "artifact"


def status_switch(df: pd.DataFrame, meta: dict, step: int, table: str, ref: str) -> list[Candidate]:
    """A status whose values split the timeline at one date for every row (F before 1995-06-17, O
    after): how the data was generated or loaded, not many changes in the business. Reported once."""
    dim, time_col = meta.get("dim"), meta.get("time")
    need = {"value", "first_at", "last_at", "n"}
    if not dim or not time_col or not need <= set(df.columns):
        return []
    d = df.dropna(subset=["value", "first_at", "last_at"]).copy()
    if len(d) < 2:
        return []
    d["first_at"], d["last_at"] = pd.to_datetime(d["first_at"]), pd.to_datetime(d["last_at"])
    total = float(d["n"].sum())
    start, end = d["first_at"].min(), d["last_at"].max()
    tol = pd.Timedelta(days=SWITCH_TOLERANCE_DAYS)
    if end - start < 6 * tol or total <= 0:
        return []
    for cut in sorted(d["last_at"].unique())[:-1]:
        cut = pd.Timestamp(cut)
        before = d[d["last_at"] <= cut + tol]
        after = d[(d["first_at"] >= cut - tol) & ~d.index.isin(before.index)]
        nb, na = float(before["n"].sum()), float(after["n"].sum())
        if before.empty or after.empty or nb + na < 0.95 * total or min(nb, na) < 0.05 * total:
            continue
        switch = pd.Timestamp(after["first_at"].min()).date().isoformat()
        old = ", ".join(str(v) for v in before["value"])
        new = ", ".join(str(v) for v in after["value"])
        return [Candidate(
            kind=ARTIFACT,
            name=f"{_words(dim)} switches from {old} to {new} on {switch} for every row: a data-generation or ETL pattern",
            description=(f"In {table}, every row before {switch} has {dim} {old} ({int(nb):,} rows) and every row "
                         f"from {switch} has {new} ({int(na):,} rows). A status that flips at one date for all rows "
                         f"comes from how the data was generated or loaded, not from the business: changes of other "
                         f"measures dated at {switch} are this pattern, not separate findings."),
            table=table, step=step, effect=0.5, p_value=1e-12,
            count_sql=f"SELECT count(*) AS count FROM {ref} WHERE {_q(time_col)} >= TIMESTAMP '{switch}'",
            segment=f"switch at {switch}", indicators=[f"switch date = {switch}", f"before: {old}", f"after: {new}"],
            area_text=f"{table} {dim} status switch data generation etl pattern",
        )]
    return []


# ---------------------------------------------------------------------------- why a measure is empty

NULL_EXPLAINED = 0.95  # share of the measure's empty rows that another column's emptiness must cover


def null_reason(df: pd.DataFrame, meta: dict, step: int, table: str, ref: str) -> list[Candidate]:
    """A measure empty on exactly the rows where another column is empty too (no departure time, no
    delay): those rows are events that did not happen (cancelled) or where the measure does not apply,
    not missing data."""
    m, others = meta.get("measure"), meta.get("others") or []
    if not m or df.empty or "missing" not in df or "n" not in df:
        return []
    row = df.iloc[0]
    n, missing = int(row["n"] or 0), int(row["missing"] or 0)
    if n <= 0 or missing <= 0:
        return []
    cover = {c: int(row.get("both_" + c) or 0) for c in others}
    best = max(cover, key=lambda c: (cover[c], c), default=None)
    if best is None or cover[best] < NULL_EXPLAINED * missing:
        return []
    share = missing / n
    return [Candidate(
        kind="null_reason", measure=m,
        name=(f"{missing:,} {table} ({_pct(share)}) have no {_words(m)} because they have no {_words(best)}: "
              f"cancelled or not applicable"),
        description=(f"{missing:,} of {n:,} rows in {table} have an empty {m}; {cover[best]:,} of them also have no "
                     f"{best}. These rows never took place (cancelled) or the measure does not apply to them: they "
                     f"are left out of every average of {_words(m)}, not lost data."),
        table=table, step=step, effect=min(1.0, 0.3 + share), p_value=1e-9,
        count_sql=f"SELECT count(*) AS count FROM {ref} WHERE {_q(m)} IS NULL", segment=m,
        support=n, support_share=1.0,
        indicators=[f"empty {m} = {missing:,}", f"also empty {best} = {cover[best]:,}", f"rows = {n:,}"],
        area_text=f"{table} {m} missing cancelled not applicable {best}",
    )]
