"""Detectors over one dimension's segments: outliers, spread effects (ANOVA), averages against the
rest (Welch), dominant values, and the mix of one dimension within another."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import stats

from ..probes import BracketMeta, CrosstabMeta, DurationBreakdownMeta, GroupMeta, RankBreakdownMeta
from .candidate import Candidate, Kind, no_effect
from .countsql import Source, eq, lit, quote
from .significance import anova_effect, anova_p, cramers_v, robust_z, two_prop_p
from .thresholds import MIN_BEHAVIOUR_ROWS, MIN_REL_GAP, MIN_SEGMENT_N, NO_EFFECT_P
from .wording import fmt, group_label, is_rate, p_eq, pct, rate, subject, words

ROBUST_Z = 3.5
MIN_EFFECT_GROUP_N = 5
DEFINITION_ETA2 = 0.98  # a dimension that explains all of a measure's spread defines it
MIN_UNASKED_EFFECT = 0.3  # unasked, a spread effect must be about medium (omega² ≈ 0.06, Cohen) to be reported
# asked (a goal), a smaller one is reported when its p-value is at most this: "the average amount peaks at 11:00"
# (eta² 0.014, p = 0.019) over uniformly random hours topped a new user's goal run (session 27); a run tests dozens
# of spreads, and a real small effect on thousands of rows is far clearer than that
SMALL_SPREAD_P = 0.001
# below a small effect (Cohen: eta² 0.01) a dimension explains next to none of a measure's spread: significant only
# through the number of rows ("the average revenue peaks in May", eta² = 0.001, in a goal run), not a finding
MIN_GROUP_ETA2 = 0.01
MIN_DURATION_SEGMENT_N = 10


def segment_outliers(df: pd.DataFrame, dim: str, meta: GroupMeta | dict, step: int, table: str,
                     ref: str) -> list[Candidate]:
    """A segment whose rate or average is far from the others (robust z-score)."""
    meta = GroupMeta.of(meta)
    if dim not in df or "n" not in df or len(df) < 3:
        return []
    df = df[df["n"] >= MIN_SEGMENT_N].dropna(subset=[dim])
    if len(df) < 3:
        return []
    out = []
    entity = meta.entity
    src = Source(ref, meta.join, getattr(meta, "flags", None) or {})
    metrics = [c for c in df.columns if is_rate(c)
               or (c.startswith("avg_") and float(df["n"].sum()) >= MIN_BEHAVIOUR_ROWS)]
    for m in metrics:
        share = is_rate(m)  # a share of rows (tested as a proportion, written as a percentage), else an average
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
            if share:
                n_rest = float(rest["n"].sum())
                x_rest = float((rest[m] * rest["n"]).sum())
                p = two_prop_p(v * n, n, x_rest, n_rest)
            else:
                p = float(2 * stats.norm.sf(abs(z[i])))
            label = m[:-5] + " rate" if share else "average " + m[4:]
            value = rate if share else fmt  # a rate reads as its claim does; an average as a number
            direction = "below" if v < med else "above"
            cond = eq(src.dim(dim), seg)
            flag = m[:-5] if share else None
            if flag and v < med and entity:
                # a low success rate: the entities of the segment that never succeeded
                count_sql = src.count_never(entity, flag, cond)
                unit = f"entities that never had {flag}"
            elif flag and v > med:
                # a high rate: the segment's rows (or entities) that had it, not all of the segment's (a judge's
                # "4,233 affected" were every order SwiftFreight shipped, of which 1,376 arrived late)
                count_sql = src.count_distinct(entity, cond, src.fact(flag)) if entity else src.count(cond,
                                                                                                    src.fact(flag))
                unit = f"{'entities' if entity else 'rows'} with {flag}"
            elif entity:
                count_sql = src.count_distinct(entity, cond)
                unit = "entities"
            else:
                count_sql = src.count(cond)
                unit = "rows"
            # a rate's gap beside two rates in percent reads as points ("2.1%, 96.6% below the median of 62.9%"
            # puzzled a new user): the median first, the relative gap after it
            gap = (f"against a median of {value(med)} across {len(df)} segments ({pct(rel)} "
                   f"{'lower' if v < med else 'higher'}; " if share else
                   f"{pct(rel)} {direction} the median of {value(med)} across {len(df)} segments (")
            out.append(Candidate(
                kind=Kind.OUTLIER_SEGMENT, measure=m,
                name=f"{subject(dim, seg)} has a much {'lower' if v < med else 'higher'} {label} than other "
                     f"{words(dim)} values",
                description=(f"In {table}, the segment {dim} = {seg} has {'an' if label[0] in 'aeiou' else 'a'} "
                             f"{label}{_flag_words(src, flag)} of {value(v)}, {gap}robust z = {z[i]:.1f}, "
                             f"n = {int(n):,} rows)."),
                table=table, step=step, effect=min(1.0, rel), p_value=p, count_sql=count_sql,
                segment=f"{dim}={seg}",
                indicators=[f"{label}[{seg}] = {fmt(v)}", f"median {label} = {fmt(med)}", f"robust z = {z[i]:.1f}",
                            f"unit: {unit}"] + ([f"{flag}: {src.flags[flag][1]} > {src.flags[flag][0]}"]
                                                if flag in src.flags else []),
                area_text=f"{table} {dim} {seg} {m}",
            ))
    return out


def _span(lo: float, hi: float, k: int, dim_words: str, unit: str = "") -> str:
    """How little a measure moves across a dimension's values: "ranges only from 13.2 to 13.5 over 4 channel
    values", or, when every value has the same one, "is 9 for each of the 5 visit type values" (not "from 9 to 9")."""
    if fmt(lo) == fmt(hi):
        return f"is {fmt(lo)}{unit} for each of the {k} {dim_words} values"
    return f"ranges only from {fmt(lo)}{unit} to {fmt(hi)}{unit} over {k} {dim_words} values"


def _flag_words(src: Source, flag: str | None) -> str:
    """What a computed flag is, after its rate's name: " (delivered_date > promised_date, of the rows with both)"."""
    if flag is None or flag not in src.flags:
        return ""
    due, actual = src.flags[flag][:2]
    return f" ({actual} > {due}, of the rows with both)"


def _with_measure(m: str, c: Candidate) -> Candidate:
    c.measure = m
    return c


def group_effects(df: pd.DataFrame, dim: str, meta: GroupMeta | dict, step: int, table: str,
                  ref: str) -> list[Candidate]:
    """How much of a measure's spread lies between the values of a dimension (eta squared / omega
    squared with a one-way ANOVA from group counts, means and standard deviations), naming the highest
    and lowest groups with their averages. Effects spread over many groups count, not only outliers."""
    meta = GroupMeta.of(meta)
    if dim not in df or "n" not in df:
        return []
    out = []
    cal = meta.calendar
    src = Source(ref, meta.join)
    col = src.dim(dim) if meta.join else (meta.expr or quote(dim))
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
        label = "average " + words(base)
        dim_words = words(dim)
        if p >= NO_EFFECT_P:
            if not meta.small:
                out.append(_with_measure(m, no_effect(f"The {label} is uniform across {dim_words} values",
                                     f"The {label} of {table} {_span(mean.min(), mean.max(), len(d), dim_words)} "
                                     f"(ANOVA {p_eq(p)}, "
                                     f"eta\u00b2 = {eta2:.3f}).", table, step, p, f"{dim} {base} uniform",
                                     f"{table} {dim} {base} uniform")))
            continue
        named = d["_n"].to_numpy(dtype=float) >= max(MIN_EFFECT_GROUP_N, 0.005 * total)
        idx = np.flatnonzero(named) if named.sum() >= 2 else np.arange(len(d))
        order = idx[np.argsort(mean[idx])]
        hi, lo = int(order[-1]), int(order[0])
        if sd[hi] == 0 or sd[lo] == 0 or eta2 >= DEFINITION_ETA2:
            continue  # every row of a group holds one value: the dimension defines the measure (a price list)
        if eta2 < MIN_GROUP_ETA2:
            continue
        hi_v, lo_v = d[dim].iloc[hi], d[dim].iloc[lo]
        hi_l, lo_l = group_label(hi_v, cal, dim_words), group_label(lo_v, cal, dim_words)
        gap = (mean[hi] - mean[lo]) / abs(grand) if grand else 0.0
        effect = min(1.0, 0.6 * min(1.0, math.sqrt(omega2) / 0.5) + 0.4 * min(1.0, abs(gap) / 2))
        share = total / rows_all if rows_all else 1.0
        top = [group_label(d[dim].iloc[i], cal, dim_words) for i in order[::-1][:3]]
        caveat = ""
        if share < 0.5:
            caveat = f" Only {pct(share)} of the rows have a {words(base)}: the rest are not counted."
        if total < 100:
            caveat += f" Low support: {int(total)} rows."
        if cal:
            what = {"month": "month of the year", "dow": "day of the week", "hour": "hour of the day"}[cal]
            at = {"month": "in", "dow": "on", "hour": "at"}[cal]
            name = (f"The {label} peaks {at} {hi_l} ({fmt(mean[hi])}) and is lowest {at} {lo_l} ({fmt(mean[lo])}) "
                    f"by {what}")
        else:
            name = (f"{hi_l} has the highest {label} ({fmt(mean[hi])}) and {lo_l} the lowest ({fmt(mean[lo])}) "
                    f"across {dim_words} values")
        out.append(Candidate(
            kind=Kind.GROUP_EFFECT, measure=m,
            name=name,
            description=(f"In {table}, the {label} differs by {dim_words} (ANOVA {p_eq(p)}, eta\u00b2 = {eta2:.3f}, "
                         f"omega\u00b2 = {omega2:.3f} over {len(d)} values and {int(total):,} rows): highest for "
                         f"{', '.join(top)} ({fmt(mean[hi])} for {hi_l}, n = {int(n[hi]):,}), lowest for {lo_l} "
                         f"({fmt(mean[lo])}, n = {int(n[lo]):,}), against {fmt(grand)} overall.{caveat}"),
            table=table, step=step, effect=round(effect, 4), p_value=p,
            count_sql=Source(ref, meta.join).count(eq(col, hi_v)),
            segment=f"{base} by {dim}", support=int(total), support_share=round(share, 4),
            groups=[f"{dim}={hi_v}", f"{dim}={lo_v}"],
            catalogue=bool(meta.catalogue),
            indicators=[f"eta\u00b2 = {eta2:.3f}", f"omega\u00b2 = {omega2:.3f}", f"{label}[{hi_l}] = {fmt(mean[hi])}",
                        f"{label}[{lo_l}] = {fmt(mean[lo])}", f"overall = {fmt(grand)}", f"rows = {int(total):,}"],
            area_text=f"{table} {dim} {base} {label} differs by {dim_words} {hi_l} {lo_l}",
        ))
    return out


def duration_outliers(df: pd.DataFrame, meta: DurationBreakdownMeta | dict, step: int, table: str,
                      ref: str) -> list[Candidate]:
    """A segment whose average interval (time to resolution, processing time) differs from the rest."""
    meta = DurationBreakdownMeta.of(meta)
    if not meta.measure or not meta.end:
        return []
    valid = f"{quote(meta.end)} IS NOT NULL AND {quote(meta.end)} >= {quote(meta.start)}"
    return mean_outliers(df, meta.dim or None, meta.measure, meta.label or "duration", " " + (meta.unit or "days"), valid,
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
            return [no_effect(f"The average {label} is uniform across {words(dim)} values",
                              f"The average {label} of {table} "
                              f"{_span(mean.min(), mean.max(), len(d), words(dim), unit)} (ANOVA {p_eq(p_all)}).",
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
        cond = eq(quote(dim), seg) + (f" AND {valid}" if valid else "")
        out.append(Candidate(
            kind=Kind.MEAN_OUTLIER, measure=m,
            name=f"{subject(dim, seg)} has a significantly {word} average {label} than other {words(dim)} values",
            description=(f"{table[:1].upper() + table[1:]} with {words(dim)} {seg} average {fmt(mean[i])}{unit} of {label}, against "
                         f"{fmt(mean_r)}{unit} for the rest ({pct(abs(rel))} {word}; Welch t-test {p_eq(p)}, "
                         f"n = {int(n[i]):,})."),
            table=table, step=step, effect=min(1.0, abs(rel)), p_value=p,
            count_sql=Source(ref).count(cond),
            segment=f"{dim}={seg}", indicators=[f"average {label}[{seg}] = {fmt(mean[i])}{unit}",
                                                f"rest = {fmt(mean_r)}{unit}"],
            area_text=f"{table} {dim} {seg} {label}",
        ))
    return out


_FLAG_VALUES = {"true", "false", "t", "f", "0", "1", "yes", "no", "y", "n"}


def dominant_segment(df: pd.DataFrame, dim: str, meta, step: int, table: str, ref: str) -> list[Candidate]:
    """Values holding far more rows than the others: one dominant value (chi-square goodness of fit
    against an even spread), or values well above the typical one (binomial test against an even share)."""
    if dim not in df or "n" not in df:
        return []
    d = df.dropna(subset=[dim])
    k = len(d)
    if k < 2 or k > 30:
        return []
    if {str(v).strip().lower() for v in d[dim]} <= _FLAG_VALUES:
        return []  # a flag's usual value (most orders are not refunded) is what a flag is, no finding
    n = pd.to_numeric(d["n"], errors="coerce").fillna(0).to_numpy(dtype=float)
    total = float(n.sum())
    if total < 50:
        return []
    order = np.argsort(-n)
    med = float(np.median(n))
    if k >= 3:
        p_even = float(stats.chisquare(n).pvalue)
        if p_even >= NO_EFFECT_P:
            return [no_effect(f"The distribution of {table} across {words(dim)} values is uniform",
                              f"{table} spread evenly over {k} {words(dim)} values: {int(n.min()):,} to "
                              f"{int(n.max()):,} each (chi-square {p_eq(p_even)}).", table, step, p_even,
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
            kind=Kind.DOMINANT_SEGMENT,
            name=(f"The number of {seg} {table} is significantly higher than other {words(dim)} values" if dominant
                  else f"{subject(dim, seg)} has a significantly higher number of {table} than other {words(dim)} "
                       "values"),
            description=(f"{int(top):,} of {int(total):,} {table} ({pct(share)}) have {words(dim)} {seg}, against "
                         f"{fmt(typical)} for the typical one of the other {k - 1} values "
                         f"({'chi-square' if dominant else 'binomial'} test {p_eq(p)})."),
            table=table, step=step, effect=min(1.0, effect), p_value=p,
            count_sql=Source(ref).count(eq(quote(dim), seg)),
            segment=f"{dim}={seg}", indicators=[f"share of {seg} = {pct(share)}", f"values of {dim} = {k}"],
            area_text=f"{table} {dim} {seg} distribution imbalance",
        ))
        if dominant:
            break
    return out


def crosstab_concentration(df: pd.DataFrame, meta: CrosstabMeta | dict, step: int, table: str,
                           ref: str) -> list[Candidate]:
    """Within one segment, most rows share a value of another dimension that is rare elsewhere."""
    dims = CrosstabMeta.of(meta).dims or []
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
            most = share_in > 0.5 and share_in - share_rest >= 0.25  # exactly half is not most
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
            if same_label(a, b):
                continue  # Database incidents in the Database group: two columns naming one thing, a tautology
            p = two_prop_p(x, n_a, x_rest, n_rest)
            out.append(Candidate(
                kind=Kind.CROSSTAB,
                name=(f"Most of the {a} {table} have {words(inner)} {b}" if most else
                      f"{a} {table} have a significantly higher share of {words(inner)} {b} than other "
                      f"{words(outer)} values"),
                description=(f"{int(x):,} of {int(n_a):,} {a} {table} have {words(inner)} {b} "
                             f"({pct(share_in)}), against {pct(share_rest)} of the other {table}."),
                table=table, step=step, effect=min(1.0, share_in - share_rest), p_value=p,
                count_sql=Source(ref).count(eq(quote(outer), a), eq(quote(inner), b)),
                segment=f"{outer}={a}", indicators=[f"{inner} = {b} within {a}: {pct(share_in)}",
                                                    f"elsewhere: {pct(share_rest)}"],
                area_text=f"{table} {outer} {a} {inner} {b}",
            ))
    return out


def same_label(a, b) -> bool:
    """Two dimensions' values that are one label (category Database, assignment group Database)."""
    x, y = str(a).strip().lower(), str(b).strip().lower()
    return bool(x) and x == y


SKEWED = 0.5  # |Pearson's second skewness| 3 (mean - median) / sd from which a mean misleads


def kruskal_from_ranks(n: np.ndarray, rank_sum: np.ndarray, ties: float) -> tuple[float, float, float]:
    """(H, epsilon squared, p) of a Kruskal-Wallis test from each group's count and sum of mid-ranks,
    corrected for ties (``ties`` = the sum of t^3 - t over groups of tied values)."""
    k, total = len(n), float(n.sum())
    if k < 2 or total <= k:
        return 0.0, 0.0, 1.0
    h = 12.0 / (total * (total + 1)) * float((rank_sum ** 2 / n).sum()) - 3 * (total + 1)
    c = 1.0 - ties / (total ** 3 - total)
    if c <= 0:
        return 0.0, 0.0, 1.0  # every value tied: no ranking
    h = max(0.0, h / c)
    return h, min(1.0, h / (total - 1)), float(stats.chi2.sf(h, k - 1))


def kruskal_effects(df: pd.DataFrame, meta: RankBreakdownMeta | dict, step: int, table: str,
                    ref: str) -> list[Candidate]:
    """For a skewed measure (delays, amounts: a long tail pulls the mean), whether its typical value
    differs between the values of a dimension: Kruskal-Wallis on mid-ranks computed by the warehouse,
    with epsilon squared, naming the groups with the highest and lowest medians. A measure that is not
    skewed is left to the ANOVA of its breakdown."""
    meta = RankBreakdownMeta.of(meta)
    dim, m = meta.dim, meta.measure
    need = {dim, "n", "rank_sum", "ties", "mean", "median", "sd"}
    if not dim or not m or not need <= set(df.columns):
        return []
    d = df.dropna(subset=[dim, "rank_sum"]).copy()
    for c in ("n", "rank_sum", "ties", "mean", "median", "sd"):
        d[c] = pd.to_numeric(d[c], errors="coerce")
    d = d[d["n"] >= MIN_EFFECT_GROUP_N]
    if len(d) < 2:
        return []
    n = d["n"].to_numpy(dtype=float)
    mean, median = d["mean"].to_numpy(dtype=float), d["median"].to_numpy(dtype=float)
    sd = d["sd"].fillna(0).to_numpy(dtype=float)
    ok = sd > 0
    if not ok.any():
        return []
    skew = float(np.average(3 * (mean[ok] - median[ok]) / sd[ok], weights=n[ok]))
    if abs(skew) < SKEWED:
        return []
    h, eps2, p = kruskal_from_ranks(n, d["rank_sum"].to_numpy(dtype=float), float(df["ties"].fillna(0).sum()))
    total = float(n.sum())
    label, dim_words = "median " + words(m), words(dim)
    cal = meta.calendar
    if p >= NO_EFFECT_P:
        return [_with_measure("avg_" + m, no_effect(
            f"The {label} is uniform across {dim_words} values",
            f"The {label} of {table} {_span(median.min(), median.max(), len(d), dim_words)} "
            f"(Kruskal-Wallis {p_eq(p)}; the measure is skewed, so ranks rather than means "
            f"are compared).", table, step, p, f"{m} by {dim} uniform", f"{table} {dim} {m} uniform median"))]
    mean_rank = d["rank_sum"].to_numpy(dtype=float) / n
    named = n >= max(MIN_EFFECT_GROUP_N, 0.005 * total)
    idx = np.flatnonzero(named) if named.sum() >= 2 else np.arange(len(d))
    order = idx[np.argsort(mean_rank[idx])]
    hi, lo = int(order[-1]), int(order[0])
    hi_v, lo_v = d[dim].iloc[hi], d[dim].iloc[lo]
    hi_l, lo_l = group_label(hi_v, cal, dim_words), group_label(lo_v, cal, dim_words)
    grand = float(np.average(median, weights=n))
    gap = (median[hi] - median[lo]) / abs(grand) if grand else 0.0
    effect = min(1.0, 0.6 * min(1.0, math.sqrt(eps2) / 0.5) + 0.4 * min(1.0, abs(gap) / 2))
    top = [group_label(d[dim].iloc[i], cal, dim_words) for i in order[::-1][:3]]
    src = Source(ref, meta.join)
    col = src.dim(dim) if meta.join else (meta.expr or quote(dim))
    caveat = f" Low support: {int(total)} rows." if total < 100 else ""
    return [Candidate(
        kind=Kind.GROUP_EFFECT, measure="avg_" + m,
        name=(f"{hi_l} has the highest {label} ({fmt(median[hi])}) and {lo_l} the lowest ({fmt(median[lo])}) "
              f"across {dim_words} values"),
        description=(f"In {table}, the typical {words(m)} differs by {dim_words} (Kruskal-Wallis H = {h:.1f}, "
                     f"{p_eq(p)}, epsilon\u00b2 = {eps2:.3f} over {len(d)} values and {int(total):,} rows): the "
                     f"median is highest for {', '.join(top)} ({fmt(median[hi])} for {hi_l}, n = {int(n[hi]):,}) and "
                     f"lowest for {lo_l} ({fmt(median[lo])}, n = {int(n[lo]):,}). The {words(m)} is skewed (mean "
                     f"{fmt(float(np.average(mean, weights=n)))} against a typical median of {fmt(grand)}), so ranks "
                     f"are compared rather than means.{caveat}"),
        table=table, step=step, effect=round(effect, 4), p_value=p,
        count_sql=src.count(eq(col, hi_v)),
        segment=f"{m} by {dim}", support=int(total), groups=[f"{dim}={hi_v}", f"{dim}={lo_v}"],
        catalogue=bool(meta.catalogue),
        indicators=[f"kruskal-wallis H = {h:.1f}", f"epsilon\u00b2 = {eps2:.3f}", f"{label}[{hi_l}] = {fmt(median[hi])}",
                    f"{label}[{lo_l}] = {fmt(median[lo])}", f"skewness = {skew:.2f}", f"rows = {int(total):,}"],
        area_text=f"{table} {dim} {m} {label} differs by {dim_words} {hi_l} {lo_l}",
    )]


def bracket_effects(df: pd.DataFrame, meta: BracketMeta | dict, step: int, table: str, ref: str) -> list[Candidate]:
    """A measure across quarters of the rows ranked by an amount: rising (or falling) bracket after bracket
    (one-way ANOVA from the brackets' counts, means and sds, and every step in one direction), or uniform."""
    meta = BracketMeta.of(meta)
    need = {"bracket", "lo", "hi", "nn", "mean", "sd"}
    if not meta.by or not need <= set(df.columns):
        return []
    d = df.sort_values("bracket")
    d = d[pd.to_numeric(d["nn"], errors="coerce").fillna(0) >= MIN_EFFECT_GROUP_N]
    if len(d) < 3:
        return []
    n = d["nn"].to_numpy(dtype=float)
    mean = pd.to_numeric(d["mean"], errors="coerce").to_numpy(dtype=float)
    sd = pd.to_numeric(d["sd"], errors="coerce").fillna(0).to_numpy(dtype=float)
    lo, hi = d["lo"].to_numpy(dtype=float), d["hi"].to_numpy(dtype=float)
    if not np.isfinite(mean).all():
        return []
    eta2, omega2, p = anova_effect(n, mean, sd)
    label, by = meta.label or words(meta.measure), words(meta.by)
    ranges = ", ".join(f"{fmt(a)}-{fmt(b)}: {fmt(m)}" for a, b, m in zip(lo, hi, mean))
    if p >= NO_EFFECT_P:
        return [_with_measure("avg_" + meta.measure, no_effect(
            f"The average {label} is uniform across {by} brackets",
            f"The average {label} of {table} by quarter of {meta.by} ({ranges}) does not differ (ANOVA {p_eq(p)}, "
            f"eta\u00b2 = {eta2:.3f}).", table, step, p, f"{meta.measure} by {meta.by} bracket uniform",
            f"{table} {meta.by} bracket {label} uniform"))]
    steps = np.diff(mean)
    if not ((steps > 0).all() or (steps < 0).all()):
        return []  # not one direction: the spread says little about the amount itself
    if eta2 < MIN_GROUP_ETA2:
        return []  # a trend through the brackets that explains next to none of the spread
    up = bool(steps[0] > 0)
    total = float(n.sum())
    grand = float((n * mean).sum() / total)
    gap = (mean.max() - mean.min()) / abs(grand) if grand else 0.0
    effect = min(1.0, 0.6 * min(1.0, math.sqrt(max(omega2, 0.0)) / 0.5) + 0.4 * min(1.0, abs(gap) / 2))
    top = int(np.argmax(mean))
    cond = f"{quote(meta.by)} BETWEEN {lit(float(lo[top]))} AND {lit(float(hi[top]))}"
    return [Candidate(
        kind=Kind.GROUP_EFFECT, measure="avg_" + meta.measure,
        name=f"The average {label} {'rises' if up else 'falls'} across {by} brackets",
        description=(f"In {table}, the average {label} {'rises' if up else 'falls'} with {by}: by quarter of the rows "
                     f"ranked by {meta.by}, {ranges} (ANOVA {p_eq(p)}, eta\u00b2 = {eta2:.3f}, omega\u00b2 = "
                     f"{omega2:.3f} over {int(total):,} rows)."),
        table=table, step=step, effect=round(effect, 4), p_value=p,
        count_sql=f"SELECT count(*) AS count FROM {ref} WHERE {cond}",
        segment=f"{meta.measure} by {meta.by} bracket", support=int(total),
        indicators=[f"eta\u00b2 = {eta2:.3f}", f"omega\u00b2 = {omega2:.3f}"] +
                   [f"average {label}[{fmt(a)}-{fmt(b)}] = {fmt(m)}" for a, b, m in zip(lo, hi, mean)],
        area_text=f"{table} {meta.by} bracket {label} {'rises' if up else 'falls'}",
    )]
