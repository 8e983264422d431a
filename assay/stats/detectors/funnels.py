"""Detectors over event steps: a segment's conversion between steps (or share of failures) against the
others, statically and month by month."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from ..probes import FunnelMeta, RateSeriesMeta
from .candidate import Candidate, Kind
from .countsql import Source, eq, lit, since as since_sql
from .significance import change_point, complete_length, departs_in_its_direction, two_prop_p
from .thresholds import CHANGE_MIN_REL, MIN_REL_GAP, MIN_SEGMENT_N
from .wording import fmt, p_eq, pct, rates as same_unit, subject, words

NEGATIVE_OUTCOMES = ("fail", "error", "cancel", "refund", "declin", "reject", "abandon", "remove", "churn", "lost",
                     "no_show", "noshow", "no-show", "no show", "missed", "return", "dispute", "chargeback", "expire",
                     "bounce", "overdue", "denied", "denial", "void")
# how a row ends well (a status value that is an outcome, not a stage on the way: pending, in progress, planned)
POSITIVE_OUTCOMES = ("complet", "success", "succeed", "closed", "resolv", "approv", "accept", "done", "won", "paid",
                     "deliver", "fulfil", "processed", "convert")
# a column holding each row's current state (one value per row), not a log of events (view, cart, purchase)
_STATE_COL = re.compile(r"(^|_)(status|state|result|outcome)($|_)", re.I)
MIN_SHARE_GAP = 0.1  # an outcome rate a segment holds apart from the rest by at least this many points ...
RARE_SHARE_GAP = 0.03  # ... or, of a rare outcome, by at least this many points and twice (or half) the rest's rate


def material_share_gap(r: float, base: float) -> bool:
    """Whether an outcome's rate ``r`` stands far enough from ``base`` to matter: ten points, or for a rare outcome
    (or a near-universal one, by its complement) at least three points and double or half the smaller side's rate:
    enterprise shipments returned at 11% against 3% elsewhere is a finding a ten-point rule never saw (a new data set,
    session 28)."""
    gap = abs(r - base)
    if gap >= MIN_SHARE_GAP:
        return True
    if base > 0.5:  # a common good outcome's fall is its complement's rise
        r, base = 1 - r, 1 - base
    eps = 1e-9
    return gap >= RARE_SHARE_GAP - eps and base > 0 and (r >= 2 * base - eps or r <= 0.5 * base + eps)


def _ordered_events(df: pd.DataFrame, ev: str) -> list:
    totals = df.groupby(ev)["n"].sum().sort_values(ascending=False)
    return list(totals.index)


def _is_negative(v) -> bool:
    return any(w in str(v).lower() for w in NEGATIVE_OUTCOMES)


def _tokens(v) -> set[str]:
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


def is_outcome(v) -> bool:
    """A status value that says how a row ended (Declined, Completed, failed), not a stage on the way."""
    return _is_negative(v) or any(w in str(v).lower() for w in POSITIVE_OUTCOMES)


def is_state_column(col: str) -> bool:
    return bool(_STATE_COL.search(str(col)))


def share_outcomes(values: list, totals: pd.Series | None = None) -> list:
    """The state values whose share of the rows is worth a rate: the outcomes, and of two states (failed or
    succeeded) only one, the bad one (else the rarer), as one rate is the other's complement."""
    outcomes = [e for e in values if is_outcome(e)]
    if len(values) == 2:
        neg = [e for e in outcomes if _is_negative(e)]
        rarer = sorted(outcomes, key=lambda e: float(totals[e]) if totals is not None else 0.0)
        return neg[:1] or rarer[:1]
    return outcomes


def funnel_outliers(df: pd.DataFrame, meta: FunnelMeta | dict, step: int, table: str, ref: str) -> list[Candidate]:
    meta = FunnelMeta.of(meta)
    dim, ev = meta.dim, meta.event
    if not dim or not ev or dim not in df or ev not in df:
        return []
    events = _ordered_events(df, ev)
    if len(events) < 2:
        return []
    if is_state_column(ev) and any(is_outcome(e) for e in events):
        # each row is in one state: the rate of an outcome is its share of the rows, not one state per another
        return outcome_shares(df, meta, step, table, ref)
    wide = df.pivot_table(index=dim, columns=ev, values="n", aggfunc="sum").fillna(0)
    if len(wide) < 3:
        return []
    src = Source(ref, meta.join)
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
            shown, typical_shown = same_unit(r, med)
            flagged = to if _is_negative(to) else frm
            out.append(Candidate(
                kind=Kind.FUNNEL_DROP if bad else Kind.FUNNEL_GAIN,
                name=(f"{seg} {table} have a much {'lower' if r < med else 'higher'} rate of {to} per {frm} than "
                      f"other {words(dim)} values"),
                description=(f"In {table}, {to} per {frm} for {dim} = {seg} is {shown}, against a typical "
                             f"{typical_shown} for other values of {dim} ({int(wide.loc[seg, frm]):,} {frm} events)."),
                table=table, step=step, effect=min(1.0, rel), p_value=p,
                count_sql=src.count(eq(src.dim(dim), seg), eq(src.fact(ev), flagged)),
                segment=f"{dim}={seg}",
                indicators=[f"{to}/{frm}[{seg}] = {fmt(r)}", f"typical = {fmt(med)}"],
                area_text=f"{table} funnel {ev} {to} {frm} {dim} {seg}",
            ))
    return out


def outcome_shares(df: pd.DataFrame, meta: FunnelMeta | dict, step: int, table: str, ref: str) -> list[Candidate]:
    """The share of rows in an outcome state (Declined, Completed) by segment: whether it differs between
    the values of a dimension (chi-square test of independence, Cramér's V), and the segments whose rate
    stands apart from the rest of the rows (two-proportion test), worded as the outcome's rate."""
    meta = FunnelMeta.of(meta)
    dim, ev = meta.dim, meta.event
    wide = df.dropna(subset=[dim, ev]).pivot_table(index=dim, columns=ev, values="n", aggfunc="sum").fillna(0)
    sizes = wide.sum(axis=1)
    wide = wide[sizes >= 1]
    total = float(wide.to_numpy().sum())
    if len(wide) < 2 or total < 50:
        return []
    src = Source(ref, meta.join)
    out = []
    outcomes = share_outcomes(list(wide.columns), totals=wide.sum())
    # two segments: each against the other is one comparison, said once by the higher rate
    two = int((wide.sum(axis=1) >= MIN_SEGMENT_N).sum()) == 2
    for v in outcomes:
        x = wide[v].to_numpy(dtype=float)
        n = wide.sum(axis=1).to_numpy(dtype=float)
        overall = float(x.sum() / total)
        if x.sum() < 10 or not 0.02 <= overall <= 0.98:
            continue  # a rare or near-universal outcome has no rate worth comparing
        table2 = np.column_stack([x, n - x])
        chi2, p_all = stats.chi2_contingency(table2, correction=False)[:2]
        v_eff = float(np.sqrt(chi2 / total))  # Cramér's V of a k x 2 table
        if p_all >= 0.001:
            continue
        for i, seg in enumerate(wide.index):
            if n[i] < MIN_SEGMENT_N:
                continue
            r = x[i] / n[i]
            x_rest, n_rest = x.sum() - x[i], n.sum() - n[i]
            if n_rest < MIN_SEGMENT_N:
                continue
            r_rest = x_rest / n_rest
            gap = r - r_rest
            side = min(r_rest, 1 - r_rest)  # relative to the smaller side: a common outcome's fall is its complement's rise
            rel = abs(gap) / side if side else 1.0
            p = two_prop_p(x[i], n[i], x_rest, n_rest)
            if not material_share_gap(r, r_rest) or rel < MIN_REL_GAP or p >= 0.001 or (two and gap < 0):
                continue
            typical = float(np.median([x[j] / n[j] for j in range(len(n)) if n[j] >= MIN_SEGMENT_N]))
            if not material_share_gap(r, typical):
                continue  # apart from the pooled rest only because another segment pulls it: not this one's finding
            word = "higher" if gap > 0 else "lower"
            out.append(Candidate(
                kind=Kind.OUTLIER_SEGMENT, measure=f"{v}_rate",
                name=f"{subject(dim, seg)} {table} have a significantly {word} {v} rate than other {words(dim)} values",
                description=(f"{pct(r)} of the {int(n[i]):,} {table} with {words(dim)} {seg} are {v}, against "
                             f"{pct(r_rest)} of the other {table} (two-proportion test {p_eq(p)}); the {v} rate "
                             f"differs across {len(wide)} {words(dim)} values (chi-square {p_eq(p_all)}, "
                             f"Cramér's V = {v_eff:.2f})."),
                table=table, step=step, effect=min(1.0, rel), p_value=p,
                count_sql=src.count(eq(src.dim(dim), seg), eq(src.fact(ev), v)),
                segment=f"{dim}={seg}", support=int(n[i]),
                indicators=[f"{v} rate[{seg}] = {pct(r)}", f"{v} rate elsewhere = {pct(r_rest)}",
                            f"cramér's v = {v_eff:.2f}", f"unit: {v} {table}"],
                area_text=f"{table} {ev} {v} rate {dim} {seg}",
            ))
    return out


@dataclass(frozen=True)
class ShareShift:
    """A segment's change of an outcome's share at its change month, beside the other rows' pooled share at the
    same month: each side's share before and after, from the rows' counts."""
    seg_before: float
    seg_after: float
    rest_before: float
    rest_after: float
    log_odds: float  # the segment's change in log-odds minus the rest's (a difference in differences)
    z: float         # that difference over its standard error

    def apart(self) -> bool:
        """The segment changed as a segment: its odds moved at least SHARE_ODDS_RATIO times further than the
        rest's, beyond chance (z of SHARE_Z). A share that rose from 1.7% to 20% while the rest rose from 3% to
        17% is everyone's rise (a platform's failures seen through each product); a failure rate that went from
        1% to 6% in one region while the others stayed at 1% is the region's, however few points it moved."""
        return abs(self.log_odds) >= math.log(SHARE_ODDS_RATIO) and abs(self.z) >= SHARE_Z


SHARE_ODDS_RATIO = 1.5  # how much further (as an odds ratio) a segment's share must move than the rest's
SHARE_Z = 3.0           # standard errors that difference must exceed (one test per segment and outcome)


def share_shift(df: pd.DataFrame, dim: str, seg, ev: str, to, months, since_ts) -> ShareShift | None:
    """The segment's and the rest's share of ``to`` before and after ``since_ts`` over the segment's months, and
    the difference of their changes in log-odds with its z (None: a side without rows)."""
    def counts(frame: pd.DataFrame) -> tuple[float, float, float, float] | None:
        w = frame.pivot_table(index="month", columns=ev, values="n", aggfunc="sum").reindex(months).fillna(0)
        if to not in w:
            return None
        total, hit = w.sum(axis=1), w[to]
        early, late = w.index < since_ts, w.index >= since_ts
        return float(hit[early].sum()), float(total[early].sum()), float(hit[late].sum()), float(total[late].sum())

    mine, rest = counts(df[df[dim] == seg]), counts(df[(df[dim] != seg) & df[dim].notna()])
    if mine is None or rest is None or min(mine[1], mine[3], rest[1], rest[3]) <= 0:
        return None

    def logit_var(x: float, n: float) -> tuple[float, float]:
        p = (x + 0.5) / (n + 1.0)  # half a count each side: a share of 0 or 1 has finite log-odds
        return math.log(p / (1 - p)), 1.0 / ((n + 1.0) * p * (1 - p))

    (b, vb), (a, va) = logit_var(mine[0], mine[1]), logit_var(mine[2], mine[3])
    (rb, vrb), (ra, vra) = logit_var(rest[0], rest[1]), logit_var(rest[2], rest[3])
    did = (a - b) - (ra - rb)
    return ShareShift(mine[0] / mine[1], mine[2] / mine[3], rest[0] / rest[1], rest[2] / rest[3], did,
                      did / math.sqrt(vb + va + vrb + vra))


def rate_series_changes(df: pd.DataFrame, meta: RateSeriesMeta | dict, step: int, table: str,
                        ref: str) -> list[Candidate]:
    """A segment whose step conversion (or failure share) shifts over time while others do not."""
    meta = RateSeriesMeta.of(meta)
    dim, ev, time_col = meta.dim, meta.event, meta.time
    if not dim or not ev or "month" not in df:
        return []
    events = _ordered_events(df, ev)
    if len(events) < 2:
        return []
    out = []
    entity = meta.entity
    src = Source(ref, meta.join)
    # each row in one state (an order completed or refunded): an outcome's rate is its share of the month's rows,
    # as funnel_outliers says it; a log of events (view, cart, purchase) converts one step into the next
    shares = is_state_column(ev) and any(is_outcome(e) for e in events)
    pairs = ([(v, None) for v in share_outcomes(events, totals=df.groupby(ev)["n"].sum())] if shares
             else funnel_pairs(events))
    for to, frm in pairs:
        shifts = {}
        for seg, g in df.groupby(dim):
            w = g.pivot_table(index="month", columns=ev, values="n", aggfunc="sum").sort_index().fillna(0)
            if to not in w or (frm is not None and frm not in w) or len(w) < 6:
                continue
            base = w.sum(axis=1) if frm is None else w[frm]
            keep = complete_length(base.to_numpy(dtype=float), 7)
            w, base = w.iloc[:keep], base.iloc[:keep]
            y = (w[to] / base.where(base > 0)).fillna(0).to_numpy(dtype=float)
            cp = change_point(y)
            if cp:
                k, before, after, p = cp
                shifts[seg] = (k, before, after, p, w.index[k], float(base.iloc[k:].sum()), w.index)
        if len(shifts) < 2:
            continue
        rels = {s: (v[2] - v[1]) / abs(v[1]) if v[1] else 0.0 for s, v in shifts.items()}
        for seg, (_k, before, after, p, since_ts, n_after, months) in shifts.items():
            rel = rels[seg]
            typical = float(np.median([r for s2, r in rels.items() if s2 != seg]))  # the others only
            if p >= 0.001:
                continue
            if frm is None:
                # a share is judged on the odds, against the other rows at the same month: a relative change
                # flatters a low start (1.7% -> 20%) and hides a high one's fall (completed 92% -> 62%)
                sh = share_shift(df, dim, seg, ev, to, months, since_ts)
                if sh is None or not sh.apart():
                    continue
            elif abs(rel) < CHANGE_MIN_REL or not departs_in_its_direction(rel, typical):
                continue
            since = pd.Timestamp(since_ts).date().isoformat()
            negative = _is_negative(to)
            word = "rose" if rel > 0 else "fell"
            if frm is None:
                # the segment's rows since the change in the outcome, or, when a good outcome fell, not in it
                state = f"{src.fact(ev)} <> {lit(to)}" if not negative and rel < 0 else eq(src.fact(ev), to)
                conds = (eq(src.dim(dim), seg), state, since_sql(src.fact(time_col), since))
                out.append(Candidate(
                    kind=Kind.CHANGE_POINT, measure=f"{to}_rate",
                    name=f"The {to} rate of {subject(dim, seg)} {table} {word} from {since}",
                    description=(f"In {table}, the share of those with {words(dim)} {seg} that are {to} {word} from "
                                 f"{pct(before)} to {pct(after)} from {since} (Welch t-test {p_eq(p)}); for the other "
                                 f"{words(dim)} values it went from {pct(sh.rest_before)} to {pct(sh.rest_after)} "
                                 f"over the same months."),
                    table=table, step=step, effect=min(1.0, math.expm1(abs(sh.log_odds))), p_value=p,  # odds ratio - 1
                    count_sql=src.count(*conds), segment=f"{dim}={seg}",
                    indicators=[f"before = {pct(before)}", f"after = {pct(after)}", f"since {since}",
                                f"{table} since then = {int(n_after):,}"],
                    area_text=f"{table} {ev} {to} rate {dim} {seg} monthly",
                ))
                continue
            flagged = to if negative else frm
            conds = (eq(src.dim(dim), seg), eq(src.fact(ev), flagged), since_sql(src.fact(time_col), since))
            count_sql = src.count(*conds) if negative or not entity else src.count_distinct(entity, *conds)
            was, now = same_unit(before, after)
            out.append(Candidate(
                kind=Kind.CHANGE_POINT,
                name=f"The rate of {to} per {frm} for {seg} {table} {word} from {since}",
                description=(f"In {table}, {to} per {frm} for {dim} = {seg} {word} from {was} to {now} from {since} "
                             f"(Welch t-test {p_eq(p)}); across other values of {dim} it changed by {pct(typical)} "
                             f"(relative)."),
                table=table, step=step, effect=min(1.0, abs(rel - typical)), p_value=p, count_sql=count_sql,
                segment=f"{dim}={seg}",
                indicators=[f"before = {fmt(before)}", f"after = {fmt(after)}", f"since {since}",
                            f"{frm} events since then = {int(n_after):,}"],
                area_text=f"{table} {ev} {to} {frm} {dim} {seg} conversion monthly",
            ))
    return out
