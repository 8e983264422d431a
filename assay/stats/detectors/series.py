"""Detectors over time: level shifts and trends of a table's monthly (or yearly) series, per-segment
series that move while the others do not, and the average interval month by month."""

from __future__ import annotations


import numpy as np
import pandas as pd

from ..probes import DurationSeriesMeta, SegmentSeriesMeta, SeriesMeta
from .candidate import Candidate, Kind, no_effect
from .countsql import Source, eq, quote, since as since_sql
from .relations import MIN_CORRELATION, correlation_candidate
from .significance import (change_point, common_trend, complete_length, correlation_p, departs_in_its_direction,
                           sparse_start, spike, step_beats_line, trend)
from .thresholds import CHANGE_MIN_REL, MATERIAL_REL, MIN_SEGMENT_N, NO_EFFECT_P
from .wording import fmt, grain_word, is_rate, measure_words, p_eq, pct, rate, words

PERIOD_MIN_REL = 0.10  # a goal asking what changed: a steady change of a tenth of the average over the period
SPIKE_MIN_REL = 0.5    # a burst: its periods at least half again above the series' level...
SPIKE_P = 0.001        # ...and unlikely at that level (robust z, Bonferroni over the windows tried)


def _period(ts, grain: str) -> str:
    return pd.Timestamp(ts).strftime("%Y" if grain == "year" else "%Y-%m")


def window_words(periods: list, grain: str = "month") -> str:
    """in 2023-08 / in 2023-07 and 2023-08 / from 2023-06 to 2023-08."""
    names = [_period(x, grain) for x in periods]
    if len(names) == 1:
        return f"in {names[0]}"
    if len(names) == 2:
        return f"in {names[0]} and {names[1]}"
    return f"from {names[0]} to {names[-1]}"


def spike_candidate(y: np.ndarray, periods: list, *, what: str, table: str, step: int, ref: str,
                    time_sql: str | None, counts: bool, area_text: str, measure: str, grain: str = "month",
                    seg: str | None = None, dim: str | None = None, join=None,
                    rows: np.ndarray | None = None) -> Candidate | None:
    """A burst of one to three periods far above the series' level, back at it on both sides (a spike, not
    a level shift: "The number of incidents for Hardware spiked in 2023-07 and 2023-08"). An average or a
    total (not a count) must stand on at least ``MIN_SEGMENT_N`` rows (``rows``: per period) in the burst:
    one large purchase is not a spike of spending."""
    sp = spike(y, counts=counts)
    if sp is None:
        return None
    s, e, level, peak, z, p = sp
    rel = (peak - level) / abs(level) if level else 1.0
    if rel < SPIKE_MIN_REL or p >= SPIKE_P:
        return None
    if not counts and (rows is None or float(np.nansum(rows[s:e])) < MIN_SEGMENT_N):
        return None
    window = window_words(periods[s:e], grain)
    value = rate if is_rate(measure) else fmt  # a rate reads as its claim does (12.5%)
    start, end = (pd.Timestamp(periods[i]).date().isoformat() for i in (s, e))
    src = Source(ref, join)
    conds = [eq(src.dim(dim), seg)] if seg is not None and dim else []
    if time_sql:
        conds += [since_sql(time_sql, start), f"{time_sql} < TIMESTAMP '{end}'"]
    subject = f"{what} for {seg}" if seg is not None else f"{grain_word(grain)} {what}"
    where = f" ({words(dim)})" if seg is not None and dim else ""
    return Candidate(
        kind=Kind.SPIKE, measure="" if counts else measure,  # a count is judged by its headline, as others are
        name=f"The {subject} spiked {window}",
        description=(f"The {grain_word(grain)} {what} for {seg}{where} was {value(peak)} {window}, against a typical "
                     f"{value(level)} in the other {grain}s ({fmt(peak / level) if level else 'n/a'} times; robust z = "
                     f"{z:.1f}, {p_eq(p)}), and back at that level afterwards."
                     if seg is not None else
                     f"The {grain_word(grain)} {what} was {value(peak)} {window}, against a typical {value(level)} in "
                     f"the other {grain}s ({fmt(peak / level) if level else 'n/a'} times; robust z = {z:.1f}, "
                     f"{p_eq(p)}), and back at that level afterwards."),
        table=table, step=step, effect=min(1.0, rel / 2), p_value=p,
        count_sql=src.count(*conds) if time_sql and counts else None,
        segment=f"{dim}={seg}" if seg is not None and dim else f"spike {start}",
        indicators=[f"level = {fmt(level)}", f"peak = {fmt(peak)}", f"window = {window}", f"span = {start}/{end}"],
        area_text=f"{area_text} spike {window}",
    )


def _complete_months(df: pd.DataFrame) -> pd.DataFrame:
    """Drop a sparse tail of late-dated rows and a partial last month (``complete_length``, by rows per month)."""
    if "n" not in df:
        return df
    return df.iloc[:complete_length(df["n"].to_numpy(dtype=float), 4)]


def sparse_tail(df: pd.DataFrame, meta: SeriesMeta, step: int, table: str, ref: str) -> list[Candidate]:
    """Rows dated past the rest: trailing months each holding under ``SPARSE_SHARE`` of a typical month's rows, two or
    more of them, or any in the future. 68 invoices dated up to four months ahead of the others made "the total amount for
    finance decreased from 2026-12-01" four times over (a new data set, session 28): they are left out of the series
    (``complete_length``) and said once."""
    if "n" not in df or len(df) < 4 or not meta.time:
        return []
    n = df["n"].to_numpy(dtype=float)
    med = float(np.median(n))
    k = sparse_start(n)
    tail = len(n) - k
    if tail == 0 or k == 0:
        return []
    first, end = pd.Timestamp(df["month"].iloc[k]), pd.Timestamp(df["month"].iloc[-1])
    future = first > pd.Timestamp.now(tz=first.tzinfo)  # a timestamptz column's months are zone-aware
    if tail < 2 and not future:
        return []  # one thin last month: data that ends a few days into it
    rows = int(n[k:].sum())
    tsql = meta.time_sql or quote(meta.time)
    since = first.date().isoformat()
    where = "in the future, " if future else ""
    return [Candidate(
        kind=Kind.DATA_QUALITY,
        name=f"{rows:,} rows of {table} are dated {where}after the last full month ({pd.Timestamp(df['month'].iloc[k - 1]):%Y-%m})",
        description=(f"{rows:,} rows of {table} fall in {tail} month{'s' if tail > 1 else ''} from {first:%Y-%m} to "
                     f"{end:%Y-%m}, {fmt(float(n[k:].min()))} to {fmt(float(n[k:].max()))} a month against a typical "
                     f"{fmt(med)}{'; those months have not happened yet' if future else ''}. They are left out of "
                     f"every monthly series."),
        table=table, step=step, effect=min(1.0, 0.4 + tail / 10), p_value=1e-12,
        count_sql=Source(ref).count(since_sql(tsql, since)), segment=f"{meta.time} from {since}", affected=rows,
        indicators=[f"rows = {rows:,}", f"months = {tail}", f"typical month = {fmt(med)}"],
        area_text=f"{table} {meta.time} data quality dates future sparse tail",
    )]


def _label(meta) -> dict:
    return {"label": getattr(meta, "label", None), "label_of": getattr(meta, "measure", None),
            "unit": getattr(meta, "unit", None) or "days"}


def series_changes(df: pd.DataFrame, meta: SeriesMeta | dict, step: int, table: str, ref: str) -> list[Candidate]:
    meta = SeriesMeta.of(meta)
    if "month" not in df or len(df) < 6:
        return []
    # rows with no month are no month (the claims' SQL leaves them out too)
    df = df.dropna(subset=["month"]).sort_values("month").reset_index(drop=True)
    if len(df) < 6:
        return []
    out = sparse_tail(df, meta, step, table, ref)
    df = _complete_months(df)
    time_col = meta.time
    tsql = meta.time_sql or (quote(time_col) if time_col else None)
    grain = meta.grain or "month"
    for m in [c for c in df.columns if c not in ("month", "entities") and not c.startswith(("sd_", "nn_"))]:
        y = pd.to_numeric(df[m], errors="coerce").to_numpy(dtype=float)
        if not np.isfinite(y).all() or len(y) < 6:
            continue
        what = measure_words(m, table)
        value = rate if is_rate(m) else fmt  # a rate reads as its claim does (12.5%)
        sp = spike_candidate(y, list(df["month"]), what=what, table=table, step=step, ref=ref, time_sql=tsql,
                             counts=m == "n", area_text=f"{table} {m} monthly", measure=m, grain=grain,
                             rows=df["n"].to_numpy(dtype=float) if "n" in df else None)
        if sp is not None:  # a burst that came back is no level shift and no trend
            out.append(sp)
            continue
        cp = change_point(y) if step_beats_line(y) else None
        if cp:
            k, before, after, p = cp
            rel = (after - before) / abs(before) if before else 0.0
            if abs(rel) >= CHANGE_MIN_REL and p < 0.01:
                since = pd.Timestamp(df["month"].iloc[k]).date().isoformat()
                word = "rose" if rel > 0 else "fell"
                out.append(Candidate(
                    kind=Kind.CHANGE_POINT,
                    name=f"The {grain_word(grain)} {what} {word} {pct(abs(rel))} from {since}",
                    description=(f"The {grain_word(grain)} {what} {word} from an average of "
                                 f"{value(before)} before {since} to {value(after)} after (Welch t-test {p_eq(p)})."),
                    table=table, step=step, effect=min(1.0, abs(rel)), p_value=p,
                    count_sql=Source(ref).count(since_sql(tsql, since)) if tsql else None,
                    segment=f"since {since}", indicators=[f"before = {fmt(before)}", f"after = {fmt(after)}"],
                    area_text=f"{table} {m} monthly trend", series=m,
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
                    kind=Kind.TREND, measure=m, name=(f"The {grain_word(grain)} {what} is "
                                           f"{'increasing' if slope > 0 else 'decreasing'} over time"),
                    description=(f"The {grain_word(grain)} {what} {word} by {fmt(slope)} per {grain}, "
                                 f"{pct(abs(rel))} of its average over {len(y)} {grain}s ({p_eq(p)})."),
                    # steady drift is usually the business growing: worth a line, rarely a headline
                    table=table, step=step, effect=0.4 * min(1.0, abs(rel)), p_value=p, count_sql=None,
                    indicators=[f"slope = {fmt(slope)} per {grain}"], area_text=f"{table} {m} trend",
                ))
            elif meta.period and m.startswith("avg_") and abs(rel) >= PERIOD_MIN_REL and p < 0.01:
                # a question about change over time: the average measure from the first to the last period
                first, last = (pd.Timestamp(df["month"].iloc[i]) for i in (0, -1))
                tf = "%Y" if grain == "year" else "%Y-%m"
                word = "rose" if slope > 0 else "fell"
                out.append(Candidate(
                    kind=Kind.TREND, measure=m,
                    name=f"The {what} {word} from {fmt(y[0])} in {first:{tf}} to {fmt(y[-1])} in {last:{tf}}",
                    description=(f"The {what} {word} steadily over {len(y)} {grain}s, from {fmt(y[0])} in "
                                 f"{first:{tf}} to {fmt(y[-1])} in {last:{tf}} ({'+' if slope > 0 else ''}"
                                 f"{fmt(slope)} per {grain}, linear trend {p_eq(p)})."),
                    table=table, step=step, effect=min(1.0, 0.3 + abs(rel)), p_value=p, count_sql=None,
                    indicators=[f"slope = {fmt(slope)} per {grain}"], area_text=f"{table} {m} change over time",
                ))
    return out


def departs_alone(rel: float, typical: float) -> bool:
    """A segment's trend is its own unless the typical other segment moves the same way at least half as
    much (everything grew); the others falling while it climbs is the work moving to it, its finding."""
    return typical * rel <= 0 or abs(typical) <= 0.5 * abs(rel)


def segment_trends(wide: pd.DataFrame, meta: SegmentSeriesMeta | dict, step: int, table: str, ref: str,
                   skip: set) -> list[Candidate]:
    """A segment whose monthly series climbs (or falls) steadily while the typical segment's does not."""
    meta = SegmentSeriesMeta.of(meta)
    fits = {}
    for seg in wide.columns:
        y = wide[seg].to_numpy(dtype=float)
        if meta.measure == "n":
            y = np.nan_to_num(y)
        y = y[np.isfinite(y)]
        tr = trend(y)
        if tr:
            fits[seg] = tr
    out = []
    measure = meta.measure or "n"
    what = measure_words(measure, table, **_label(meta))
    if len(fits) >= 2 and all(v[2] >= NO_EFFECT_P for v in fits.values()):
        dim = words(meta.dim or "")
        out.append(no_effect(f"The {what} for each {dim} value remains uniform over time",
                             f"None of the {len(fits)} {dim} values shows a trend in its monthly {what} "
                             f"(smallest {p_eq(min(v[2] for v in fits.values()))}).", table, step,
                             min(v[2] for v in fits.values()), f"{meta.dim} {measure} over time",
                             f"{table} {dim} {what} uniform over time"))
    departed = False
    for seg, (slope, rel, p) in fits.items():
        others = [v[1] for s2, v in fits.items() if s2 != seg]
        if seg in skip or not others:
            continue
        typical = float(np.median(others))
        if abs(rel) < 0.5 or p >= 0.001 or abs(rel - typical) < 0.5 or not departs_alone(rel, typical):
            continue
        departed = True
        word = "increasing" if slope > 0 else "decreasing"
        col = wide[seg].dropna()
        first, last = (pd.Timestamp(col.index[i]).strftime("%Y-%m") for i in (0, -1))
        out.append(Candidate(
            kind=Kind.TREND,
            name=f"The {what} for {seg} is {word} over time",
            description=(f"The monthly {what} for {seg} ({words(meta.dim or '')}) went from "
                         f"{fmt(float(col.iloc[0]))} in {first} to {fmt(float(col.iloc[-1]))} in {last} "
                         f"({'+' if slope > 0 else ''}{fmt(slope)} per month, {p_eq(p)}), while for the typical "
                         f"other value it changed {pct(typical)} over the window."),
            table=table, step=step, effect=min(1.0, abs(rel - typical) / 2), p_value=p, count_sql=None,
            segment=f"{meta.dim}={seg}", indicators=[f"slope = {fmt(slope)} per month"],
            area_text=f"{table} {meta.dim} {seg} {what} trend over time",
        ))
    if not departed and not any(c.kind == Kind.NO_EFFECT for c in out):
        out += _shared_trend(wide, meta, step, table, what)
    return out


def _shared_trend(wide: pd.DataFrame, meta: SegmentSeriesMeta, step: int, table: str, what: str) -> list[Candidate]:
    """Every segment moving with the whole: the table's measure climbs (or falls) and the segments' relative
    slopes do not differ (Cochran's Q far from significant): "the increase is uniform across categories"."""
    cols = [c for c in wide.columns if wide[c].notna().sum() >= 6]
    ys = [(wide[c].fillna(0) if meta.measure in ("", "n") else wide[c].dropna()).to_numpy(dtype=float) for c in cols]
    ct = common_trend(ys)
    if ct is None:
        return []
    pooled, p_pooled, p_het = ct
    months = max(len(y) for y in ys)
    if p_pooled >= 0.001 or abs(pooled) * (months - 1) < CHANGE_MIN_REL or p_het < NO_EFFECT_P:
        return []
    word, dim = ("increase" if pooled > 0 else "decrease"), words(meta.dim or "")
    return [no_effect(f"The {word} in the {what} is uniform across {dim} values",
                      f"The monthly {what} {'rises' if pooled > 0 else 'falls'} by about {pct(abs(pooled))} of its "
                      f"level a month in each of the {len(ys)} {dim} values alike (pooled trend {p_eq(p_pooled)}; "
                      f"the slopes do not differ, Cochran's Q {p_eq(p_het)}).", table, step, p_het,
                      f"{meta.dim} {meta.measure or 'n'} shared trend", f"{table} {dim} {what} {word} uniform")]


def holds_without_top(df: pd.DataFrame, dim: str, seg, measure: str, months, k: int, typical: float) -> bool:
    """Whether a segment's rise of a monthly total holds without its largest entities (the probe's
    ``without_top_<measure>``, planner.TOP_CONTRIBUTORS of them over the whole span): measured the same way at
    the same month, it must still be a change of at least CHANGE_MIN_REL that departs from the other segments'.
    A probe without that column (no entity to rank) holds."""
    col = f"without_top_{measure}"
    if col not in df:
        return True
    rest = df[df[dim] == seg].groupby("month")[col].sum(min_count=1).reindex(months).fillna(0).to_numpy(dtype=float)
    before, after = float(rest[:k].mean()), float(rest[k:].mean())
    if before <= 0:
        return False  # nothing left before the change: the top spenders were all of it
    rel = (after - before) / before
    return abs(rel) >= CHANGE_MIN_REL and departs_in_its_direction(rel, typical)


def segment_series_changes(df: pd.DataFrame, meta: SegmentSeriesMeta | dict, step: int, table: str,
                           ref: str) -> list[Candidate]:
    """Per-segment monthly series: a segment whose level shifts while others do not."""
    meta = SegmentSeriesMeta.of(meta)
    dim = meta.dim
    measure = meta.measure or "n"
    if not dim or dim not in df or "month" not in df or measure not in df:
        return []
    months = sorted(df["month"].unique())
    if len(months) < 6:
        return []
    wide = df.pivot_table(index="month", columns=dim, values=measure, aggfunc="sum").sort_index()
    wide = wide.iloc[:complete_length(wide.sum(axis=1).to_numpy(dtype=float), 7)]
    shifts = {}
    spikes = []
    ramps: set[str] = set()
    what = measure_words(measure, table, **_label(meta))
    rows = df.pivot_table(index="month", columns=dim, values="n", aggfunc="sum") if "n" in df else None
    for seg in wide.columns:
        col = wide[seg].fillna(0) if measure == "n" else wide[seg].dropna()
        sp = spike_candidate(col.to_numpy(dtype=float), list(col.index), what=what, table=table, step=step, ref=ref,
                             time_sql=Source(ref, meta.join).fact(meta.time) if meta.time else None,
                             counts=measure == "n", area_text=f"{table} {dim} {seg} {measure} monthly",
                             measure=measure, seg=seg, dim=dim, join=meta.join,
                             rows=rows[seg].reindex(col.index).to_numpy(dtype=float) if rows is not None else None)
        if sp is not None:
            spikes.append(sp)
            continue  # a burst that came back is no level shift
        y = wide[seg].fillna(0).to_numpy(dtype=float)
        cp = change_point(y)
        if cp and not step_beats_line(y):
            ramps.add(f"{meta.dim}={seg}")  # a steady climb is a trend, not a shift at one month (as for a table)
        elif cp:
            k, before, after, p = cp
            shifts[seg] = ((after - before) / abs(before) if before else 0.0, k, before, after, p)
    if meta.trend:
        out = segment_trends(wide, meta, step, table, ref, skip=set())
    else:  # a total's series is read for shifts; a segment's steady climb there is its trend
        out = [c for c in segment_trends(wide, meta, step, table, ref, skip=set()) if c.kind == Kind.TREND
               and c.segment in ramps] if ramps else []
    if spikes:  # a segment that spiked did not "remain uniform over time"
        out = [c for c in out if c.kind != Kind.NO_EFFECT] + spikes
    if not shifts:
        return out
    src = Source(ref, meta.join)
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
        if abs(rel) < CHANGE_MIN_REL or p >= 0.001 or not departs_in_its_direction(rel, typical):
            continue
        if share.get(seg, 0) < 0.05:  # small segments are noisy month to month
            continue
        if rel > 0 and not holds_without_top(df, dim, seg, measure, wide.index, k, typical):
            continue  # a handful of big spenders raised the total, not the segment (their leaving is news: kept)
        since = pd.Timestamp(wide.index[k]).date().isoformat()
        word = "rose" if rel > 0 else "fell"
        count_sql = src.count(eq(src.dim(dim), seg), since_sql(src.fact(meta.time), since))
        what = measure_words(measure, table, **_label(meta))
        out.append(Candidate(
            kind=Kind.CHANGE_POINT,
            name=f"The {what} for {seg} {'increased' if rel > 0 else 'decreased'} from {since}",
            description=(f"The monthly {what} for {seg} ({words(dim)}) {word} from {fmt(before)} to "
                         f"{fmt(after)} from {since} ({p_eq(p)}), while for the other {words(dim)} values it "
                         f"changed {pct(typical)}."),
            table=table, step=step, effect=min(1.0, abs(rel - typical)), p_value=p, count_sql=count_sql,
            segment=f"{dim}={seg}", indicators=[f"before = {fmt(before)}", f"after = {fmt(after)}",
                                                 f"typical change = {pct(typical)}"],
            area_text=f"{table} {dim} {seg} {measure} monthly",
        ))
    return out


def duration_series(df: pd.DataFrame, meta: DurationSeriesMeta | dict, step: int, table: str,
                    ref: str) -> list[Candidate]:
    """The average interval month by month: a trend, and whether it moves with volume."""
    meta = DurationSeriesMeta.of(meta)
    m = meta.measure
    if "month" not in df or m not in df or "n" not in df:
        return []
    df = _complete_months(df.dropna(subset=["month"]).sort_values("month").reset_index(drop=True))
    df = df.dropna(subset=[m])
    if len(df) < 6:
        return []
    label, unit = meta.label or "duration", meta.unit or "days"
    y = pd.to_numeric(df[m], errors="coerce").to_numpy(dtype=float)
    vol = df["n"].to_numpy(dtype=float)
    first, last = (pd.Timestamp(df["month"].iloc[i]).strftime("%Y-%m") for i in (0, -1))
    out = []
    tr = trend(y)
    if tr and tr[2] >= NO_EFFECT_P:
        out.append(no_effect(f"The average {label} of {table} is uniform over time",
                             f"The average {label} of {table} stays between {fmt(y.min())} and {fmt(y.max())} {unit} "
                             f"a month from {first} to {last}, with no significant trend ({p_eq(tr[2])}).",
                             table, step, tr[2], f"{label} over time", f"{table} {label} uniform over time"))
    if tr:
        slope, rel, p = tr
        if abs(rel) >= CHANGE_MIN_REL and p < 0.01:
            word = "increasing" if slope > 0 else "decreasing"
            out.append(Candidate(
                kind=Kind.TREND, name=f"The average {label} of {table} is {word} over time",
                description=(f"The average {label} of {table} is {word} over time: from {fmt(y[0])} {unit} in "
                             f"{first} to {fmt(y[-1])} {unit} in {last} ({'+' if slope > 0 else ''}{fmt(slope)} {unit} per "
                             f"month, {p_eq(p)})."),
                table=table, step=step, effect=min(1.0, abs(rel)), p_value=p,
                count_sql=None, segment=f"{label} trend", indicators=[f"slope = {fmt(slope)} {unit} per month"],
                area_text=f"{table} {label} trend over time",
            ))
    if np.std(vol) > 0 and np.std(y) > 0:
        r = float(np.corrcoef(vol, y)[0, 1])
        p_r = correlation_p(r, len(y))
        if abs(r) < MIN_CORRELATION and p_r >= NO_EFFECT_P:
            out.append(no_effect(f"There is no correlation between the number of {table} and the average {label}",
                                 f"Month by month, the number of {table} and their average {label} do not move "
                                 f"together (r = {r:.2f} over {len(y)} months, {p_eq(p_r)}).", table, step, p_r,
                                 f"volume~{label}", f"{table} volume {label} correlation"))
        # material too: along the months' range of volume the fitted average moves by MATERIAL_REL of its mean at
        # least (twelve monthly averages within 2% of each other correlate "strongly" with volume when the launch
        # month, with few rows, happens to be the highest)
        swing = abs(r) * float(np.std(y)) / float(np.std(vol)) * float(vol.max() - vol.min())
        if abs(r) >= 0.5 and swing >= MATERIAL_REL * (abs(float(np.mean(y))) or 1.0):
            out.append(correlation_candidate(f"number of {table}", f"average {label}", r, len(y),
                                             correlation_p(r, len(y)), table, step, "months"))
    return out
