"""Significance tests and effect sizes, from the summaries the warehouse returns (counts, means,
standard deviations) or from short series."""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

CHANGE_MIN_SIDE = 3


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


PARTIAL_SHARE = 0.5  # a last period under this share of the median period's base is partial (data ends mid-month)
SPARSE_SHARE = 0.05  # trailing periods under this share are a sparse tail (a few rows dated past the rest; a fall
#                      to 6% of the typical month is a collapse, a finding)


def complete_length(base, min_len: int) -> int:
    """How many leading periods of a series to keep, from ``min_len`` periods on: a sparse tail (trailing periods
    each under a twentieth of the median period's base: a few rows dated months past the rest, even in the future) is
    dropped, then the last period left if it is partial (under half the median). A tail of 36, 20, 9 and 3 invoices
    after months of 2,500 made every payment method's failure rate swing and hid a real rise (a new data set,
    session 28); a fall to 40% for months stays, as it is a finding."""
    b = np.asarray(base, dtype=float)
    if len(b) < min_len:
        return len(b)
    k = sparse_start(b)
    if k > 0 and b[k - 1] < PARTIAL_SHARE * float(np.median(b)):
        k -= 1
    return k


def sparse_start(base) -> int:
    """Where a series' sparse tail begins: the first of the trailing periods each under ``SPARSE_SHARE`` of the
    median period's base (its length when there is none)."""
    b = np.asarray(base, dtype=float)
    med = float(np.median(b)) if len(b) else 0.0
    k = len(b)
    while k > 0 and b[k - 1] < SPARSE_SHARE * med:
        k -= 1
    return k


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


def departs_in_its_direction(rel: float, typical: float, factor: float = 1.6) -> bool:
    """Whether a segment moved further than the typical other segment *in its own direction*: a rise at
    least ``factor`` times the others' (or a rise while they fell), a fall at least as much deeper. A
    segment that rose 5x while the others rose 9x did not rise as a segment: its share fell, and calling it
    "android increased" (with "the others changed +872%" beside it) reports the whole business's growth as
    the segment's."""
    a, b = 1 + rel, 1 + typical
    if a > 0 and b > 0:
        d = math.log(a / b)
        return (d if rel > 0 else -d) >= math.log(factor)
    return (rel - typical) * (1 if rel > 0 else -1) >= factor - 1  # fell to zero or below: compare plainly


def trend(y: np.ndarray) -> tuple[float, float, float] | None:
    """(slope per period, relative change over the window, p)."""
    if len(y) < 6:
        return None
    x = np.arange(len(y), dtype=float)
    r = stats.linregress(x, y)
    base = abs(float(np.mean(y))) or 1.0
    return float(r.slope), float(r.slope * (len(y) - 1) / base), float(r.pvalue)


def common_trend(series: list[np.ndarray]) -> tuple[float, float, float] | None:
    """Whether several series (a segment's monthly values each) share one trend: (pooled relative slope per
    period, its p, p of the slopes' heterogeneity). Each slope is relative to its series' mean (segments of
    different sizes growing in proportion move alike), pooled by inverse variance; heterogeneity is Cochran's Q."""
    b, w = [], []
    for y in series:
        y = np.asarray(y, dtype=float)
        y = y[np.isfinite(y)]
        base = abs(float(np.mean(y))) if len(y) else 0.0
        if len(y) < 6 or not base:
            continue
        r = stats.linregress(np.arange(len(y), dtype=float), y)
        se = float(r.stderr) / base
        if not se > 0:
            continue
        b.append(float(r.slope) / base)
        w.append(1.0 / se ** 2)
    if len(b) < 3:
        return None
    b_, w_ = np.array(b), np.array(w)
    pooled = float((w_ * b_).sum() / w_.sum())
    z = pooled * math.sqrt(float(w_.sum()))
    q = float((w_ * (b_ - pooled) ** 2).sum())
    return pooled, float(2 * stats.norm.sf(abs(z))), float(stats.chi2.sf(q, len(b) - 1))


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


def correlation_p(r: float, n: float) -> float:
    if n < 4 or not math.isfinite(r):
        return 1.0
    if abs(r) >= 1:
        return 0.0
    t = r * math.sqrt((n - 2) / (1 - r * r))
    return float(2 * stats.t.sf(abs(t), n - 2))


def cramers_v(table: np.ndarray) -> float:
    """Association between two categorical variables, 0 (none) to 1 (one determines the other)."""
    table = table[table.sum(axis=1) > 0][:, table.sum(axis=0) > 0]
    if min(table.shape) < 2:
        return 0.0
    chi2 = stats.chi2_contingency(table, correction=False)[0]
    return float(math.sqrt(chi2 / (table.sum() * (min(table.shape) - 1))))


def gini_from_ranks(weighted: float, total: float, n: int) -> float:
    """Gini coefficient from sum(rank_ascending * value), the total and the count (values >= 0)."""
    if n <= 0 or total <= 0:
        return 0.0
    return 2.0 * weighted / (n * total) - (n + 1.0) / n


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


SPIKE_MAX_LEN = 3   # a burst of at most this many periods; longer is a level shift or a trend
SPIKE_MIN_POINTS = 8


def spike(y: np.ndarray, counts: bool = False, max_len: int = SPIKE_MAX_LEN) -> tuple[int, int, float, float, float, float] | None:
    """The strongest burst of a series: a run of 1-``max_len`` consecutive periods, each far above the
    other periods, with the series back at its level on both sides (not a level shift: two periods at least lie
    on each side of the run). Robust: the level is the median of the other periods and the scale
    their MAD (floored at a tenth of the level, so a near-constant series does not make every wiggle a
    spike). Returns (start, end exclusive, level, the run's mean, its smallest robust z, p) or None; p is
    Student's t tail of that z (n - run - 1 degrees of freedom) times the number of windows tried (Bonferroni); for
    ``counts`` (rows per period) the larger of that and the exact Poisson tail of the run's total at the level."""
    y = np.asarray(y, dtype=float)
    n = len(y)
    if n < SPIKE_MIN_POINTS or not np.isfinite(y).all():
        return None
    best, tried = None, 0
    idx = np.arange(n)
    for length in range(1, min(max_len, n // 4) + 1):
        # every window of this length at once (starts 2 .. n-length-2): the run, and the rest of the series; two
        # periods on each side, so that "back at its level" never rests on the series' first or last period alone,
        # which is so often partial (data that starts mid-month; refunds dated weeks after the orders of the last
        # month: a new user's "spiked in December and back afterwards" was a January holding ten days of refunds)
        starts = np.arange(2, n - length - 1)
        inside = (idx[None, :] >= starts[:, None]) & (idx[None, :] < starts[:, None] + length)
        rest = y[np.nonzero(~inside)[1]].reshape(len(starts), n - length)  # each row in the series' order
        run = y[np.nonzero(inside)[1]].reshape(len(starts), length)
        med = np.median(rest, axis=1)
        scale = np.maximum(np.maximum(np.median(np.abs(rest - med[:, None]), axis=1) * 1.4826, 0.1 * np.abs(med)),
                           1e-9)
        z = ((run - med[:, None]) / scale[:, None]).min(axis=1)
        # both neighbours back near the level: a burst, not the start or the end of a longer episode
        back = np.maximum(y[starts - 1], y[starts + length]) <= med + 0.5 * (run.min(axis=1) - med)
        tried += len(starts)
        for k in np.flatnonzero(back):  # in the order of the starts: the first of equal z's is kept
            if best is None or z[k] > best[4]:
                s0 = int(starts[k])
                best = (s0, s0 + length, float(med[k]), float(run[k].mean()), float(z[k]))
    if best is None or best[4] <= 0:
        return None
    # Student's t tail (the scale comes from a dozen points, not from a population), Bonferroni over windows
    length = best[1] - best[0]
    p = float(stats.t.sf(best[4], df=n - length - 1))
    if counts:  # counts of rows: the run's total must also be unlikely under a Poisson at the level
        p = max(p, float(stats.poisson.sf(round(best[3] * length) - 1, max(best[2], 0.5) * length)))
    return (*best, min(1.0, p * tried))
