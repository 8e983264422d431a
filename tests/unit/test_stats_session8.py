"""Statistical analyst, session 8 (#17): a spike (a burst of a few periods far above the level, then back) is
its own finding with a robust test, not a level shift, and not the segment's level seen again."""

from __future__ import annotations

import numpy as np
import pandas as pd

from assay.stats import detectors as D
from assay.stats.analyst import _dedupe
from assay.stats.detectors.series import SPIKE_MIN_REL, SPIKE_P, segment_series_changes, series_changes, window_words
from assay.stats.detectors.significance import spike

REF = '"main"."incidents"'
HARDWARE = [8, 10, 10, 5, 4, 7, 44, 52, 4, 7, 10, 9, 12]


def months(n):
    return [pd.Timestamp("2023-01-01") + pd.DateOffset(months=i) for i in range(n)]


def test_spike_finds_a_burst_and_not_a_level_shift_or_a_trend():
    s, e, level, peak, z, p = spike(np.array(HARDWARE, dtype=float), counts=True)
    assert (s, e) == (6, 8) and level == 8.0 and peak == 48.0 and p < 1e-4
    # a rise that stays is a level shift; a steady climb is a trend: neither is a spike
    assert spike(np.array([8, 10, 10, 5, 4, 7, 44, 52, 40, 47, 40, 49, 42.]), counts=True) is None
    assert spike(np.arange(1, 13, dtype=float), counts=True) is None
    # too short a series to tell
    assert spike(np.array([1, 1, 9, 1, 1, 1.]), counts=True) is None
    # a burst whose return to the level is only the series' last period, or whose lead-in only its first (both so
    # often partial): no spike to report (a new user's "spiked in December" beside a January of ten days)
    late = spike(np.array([10, 11, 9, 10, 12, 10, 11, 9, 10, 11, 45, 6.]), counts=True)
    early = spike(np.array([6, 45, 10, 11, 9, 10, 12, 10, 11, 9, 10, 11.]), counts=True)
    assert late[:2] != (10, 11) and late[5] == 1.0 and early[:2] != (1, 2) and early[5] == 1.0, (late, early)
    assert spike(np.array([10, 11, 9, 10, 12, 10, 11, 9, 10, 45, 11, 10.]), counts=True)[:2] == (9, 10)


def test_spike_false_alarms_on_noise_are_rare():
    rng = np.random.default_rng(3)
    for lam in (3, 10, 50):  # monthly counts of a segment: Poisson noise, 13 and 24 months
        for n in (13, 24):
            hits = 0
            for _ in range(400):
                r = spike(rng.poisson(lam, n).astype(float), counts=True)
                hits += bool(r and r[5] < SPIKE_P and (r[3] - r[2]) / max(r[2], 1e-9) >= SPIKE_MIN_REL)
            assert hits / 400 <= 0.01, (lam, n, hits)


def segment_frame(series: dict[str, list[int]]) -> pd.DataFrame:
    n = len(next(iter(series.values())))
    return pd.DataFrame([(m, seg, v) for seg, ys in series.items() for m, v in zip(months(n), ys)],
                        columns=["month", "category", "n"])


def test_a_segment_spike_is_reported_with_its_window_and_count():
    df = segment_frame({"Hardware": HARDWARE, "Network": [6, 2, 5, 4, 5, 5, 5, 10, 7, 6, 10, 5, 8],
                        "Software": [15, 8, 13, 9, 12, 8, 9, 10, 11, 10, 5, 10, 10]})
    out = segment_series_changes(df, {"dim": "category", "time": "opened_at", "measure": "n", "trend": True}, 4,
                                 "incidents", REF)
    spikes = [c for c in out if c.kind == D.Kind.SPIKE]
    assert [c.name for c in spikes] == ["The number of incidents for Hardware spiked in 2023-07 and 2023-08"]
    c = spikes[0]
    assert c.segment == "category=Hardware" and "back at that level" in c.description
    assert c.count_sql == ('SELECT count(*) AS count FROM "main"."incidents" WHERE "category" = \'Hardware\' AND '
                           '"opened_at" >= TIMESTAMP \'2023-07-01\' AND "opened_at" < TIMESTAMP \'2023-09-01\'')
    # no level shift reported for the spike, and no "remains uniform over time" beside it
    assert not [x for x in out if x.kind in (D.Kind.CHANGE_POINT, D.NO_EFFECT)]


def test_a_table_spike_is_one_finding_not_a_change_point():
    df = pd.DataFrame({"month": months(13), "n": [42, 33, 41, 37, 37, 36, 80, 97, 34, 37, 40, 38, 45]})
    out = series_changes(df, {"time": "opened_at"}, 2, "incidents", REF)
    assert [c.kind for c in out] == [D.Kind.SPIKE]
    assert out[0].name == "The monthly number of incidents spiked in 2023-07 and 2023-08"


def test_the_spike_is_its_own_finding_beside_the_segment_level():
    level = D.Candidate(kind="dominant_segment", name="Hardware has a significantly higher number of incidents",
                        description="", table="incidents", step=1, effect=0.9, p_value=1e-9,
                        count_sql="SELECT 1", segment="category=Hardware")
    burst = D.Candidate(kind="spike", name="The number of incidents for Hardware spiked in 2023-07 and 2023-08",
                        description="", table="incidents", step=2, effect=1.0, p_value=1e-5, count_sql="SELECT 2",
                        segment="category=Hardware", indicators=["window = in 2023-07 and 2023-08"])
    table = D.Candidate(kind="spike", name="The monthly number of incidents spiked in 2023-07 and 2023-08",
                        description="", table="incidents", step=3, effect=0.7, p_value=1e-5, count_sql=None,
                        segment="spike 2023-07-01", indicators=["window = in 2023-07 and 2023-08"])
    kept = _dedupe([level, burst, table])
    assert kept == [level, burst]  # the table's burst in the same months is the segment's, seen again


def test_window_words():
    ms = months(3)
    assert window_words(ms[:1]) == "in 2023-01"
    assert window_words(ms[:2]) == "in 2023-01 and 2023-02"
    assert window_words(ms) == "from 2023-01 to 2023-03"
    assert window_words(ms[:1], "year") == "in 2023"


def test_a_burst_of_a_total_needs_rows_behind_it():
    """One large purchase is not a spike of spending: an average or total spikes only on enough rows."""
    cost = [900, 1100, 1000, 950, 1050, 1000, 9000, 1000, 980, 1020, 1000, 990, 1010]
    one = [3, 3, 3, 3, 3, 3, 1, 3, 3, 3, 3, 3, 3]
    df = pd.DataFrame([(m, "Rack", c, n) for m, c, n in zip(months(13), cost, one)],
                      columns=["month", "model_category", "sum_cost", "n"])
    meta = {"dim": "model_category", "time": "purchased_on", "measure": "sum_cost"}
    assert not [c for c in segment_series_changes(df, meta, 1, "assets", REF) if c.kind == D.Kind.SPIKE]
    df["n"] = [40] * 13  # the same burst over forty purchases is one
    names = [c.name for c in segment_series_changes(df, meta, 1, "assets", REF) if c.kind == D.Kind.SPIKE]
    assert names == ["The total cost for Rack spiked in 2023-07"]


def test_a_segment_trend_is_its_own_finding_beside_its_level():
    level = D.Candidate(kind="mean_outlier", name="Fred Luddy has a significantly higher average time to resolution",
                        description="", table="incidents", step=1, effect=0.9, p_value=1e-9, count_sql="SELECT 1",
                        segment="assigned_to=Fred Luddy", measure="avg_time_to_resolution_days")
    rising = D.Candidate(kind="trend", name="The average time to resolution in days for Fred Luddy is increasing over "
                         "time", description="", table="incidents", step=2, effect=0.8, p_value=1e-6, count_sql=None,
                         segment="assigned_to=Fred Luddy")
    again = D.Candidate(kind="mean_outlier", name="Fred Luddy has a higher average time to resolution (by closed by)",
                        description="", table="incidents", step=3, effect=0.5, p_value=1e-5, count_sql="SELECT 3",
                        segment="assigned_to=Fred Luddy", measure="avg_time_to_resolution_days")
    assert _dedupe([level, rising, again]) == [level, rising]  # the level once, its trend beside it


def test_monthly_series_by_more_dimensions_come_last_in_the_plan():
    from assay.models import ColumnInfo, TableInfo
    from assay.stats.planner import LATE_SERIES_DIMS, SERIES_DIMS, Planner, Profile

    dims = ["category", "priority", "assignment_group", "state", "assigned_to", "location", "caller"]
    cols = [(d, "VARCHAR") for d in dims] + [("opened_at", "TIMESTAMP"), ("closed_at", "TIMESTAMP")]
    t = TableInfo(schema="main", name="incidents", row_count=500, columns=[ColumnInfo(name=n, type=ty) for n, ty in cols])
    p = Profile(table=t, rows=500, distinct={**{d: 5 for d in dims}, "opened_at": 500, "closed_at": 490},
                avg_len={d: 8.0 for d in dims})
    probes = Planner([t], lambda x: '"' + x + '"', ["incidents"], goal="").plan({t.fqn: p})
    series = [i for i, pr in enumerate(probes) if pr.kind == "segment_series"]
    late = [i for i in series if probes[i].late]
    # two series per dimension (the count and the time to resolution): the first dimensions in the plan's body,
    # the next ones after every other probe
    assert len(series) == 2 * (SERIES_DIMS + LATE_SERIES_DIMS) and len(late) == 2 * LATE_SERIES_DIMS
    assert late == list(range(len(probes) - len(late), len(probes)))
    # a status is left out of the later ones (the state mix over time has its own probe)
    assert {probes[i].meta.dim for i in late} == {"assigned_to", "location", "caller"}


def test_a_trend_and_a_level_shift_of_one_segment_are_one_movement():
    rising = D.Candidate(kind="trend", name="The number of orders for rain is decreasing over time", description="",
                         table="w", step=1, effect=0.8, p_value=1e-8, count_sql=None, segment="weather=rain")
    shift = D.Candidate(kind="change_point", name="The number of orders for rain decreased from 2013-04-01",
                        description="", table="w", step=2, effect=0.7, p_value=1e-7, count_sql="SELECT 2",
                        segment="weather=rain")
    assert _dedupe([rising, shift]) == [rising]


def test_remains_uniform_over_time_is_one_line_per_measure():
    from assay.stats.analyst import merge_still_over_time

    def still(dim, p):
        return D.no_effect(f"The number of incidents for each {dim} value remains uniform over time", f"{dim}.",
                           "incidents", 1, p, f"{dim} n over time", "")
    ttr = D.no_effect("The average time to resolution of incidents is uniform over time", "ttr.", "incidents", 2, 0.6,
                      "ttr over time", "")
    out = merge_still_over_time([still("closed by", 0.5), ttr, still("sys updated by", 0.3)])
    assert [c.name for c in out] == [
        "The number of incidents for each closed by and sys updated by value remains uniform over time",
        "The average time to resolution of incidents is uniform over time"]
    assert out[0].p_value == 0.3


def _spike_by_loop(y, counts=False, max_len=3):
    """The burst search written window by window (the definition ``spike`` vectorises): its oracle."""
    from scipy import stats

    from assay.stats.detectors.significance import SPIKE_MIN_POINTS

    y = np.asarray(y, dtype=float)
    n = len(y)
    if n < SPIKE_MIN_POINTS:
        return None
    best, tried = None, 0
    for length in range(1, min(max_len, n // 4) + 1):
        for s in range(2, n - length - 1):
            tried += 1
            rest = np.concatenate([y[:s], y[s + length:]])
            med = float(np.median(rest))
            scale = max(float(np.median(np.abs(rest - med))) * 1.4826, 0.1 * abs(med), 1e-9)
            z = float(((y[s:s + length] - med) / scale).min())
            if max(y[s - 1], y[s + length]) > med + 0.5 * (float(y[s:s + length].min()) - med):
                continue
            if best is None or z > best[4]:
                best = (s, s + length, med, float(y[s:s + length].mean()), z)
    if best is None or best[4] <= 0:
        return None
    length = best[1] - best[0]
    p = float(stats.t.sf(best[4], df=n - length - 1))
    if counts:
        p = max(p, float(stats.poisson.sf(round(best[3] * length) - 1, max(best[2], 0.5) * length)))
    return (*best, min(1.0, p * tried))


def test_the_vectorised_spike_search_is_the_window_by_window_one():
    """``spike`` tries every window at once per length (5.8x faster on 3,000 series); on noise, plateaus, ties and
    planted bursts it returns exactly what the window-by-window search returns (same window, level, z and p)."""
    rng = np.random.default_rng(5)
    for i in range(300):
        n = int(rng.integers(6, 40))
        kind = i % 4
        if kind == 0:
            y = rng.poisson(rng.choice([0.5, 3, 10, 50]), n).astype(float)
        elif kind == 1:
            y = np.full(n, float(rng.integers(0, 5)))  # flat: every window ties
        elif kind == 2:
            y = rng.integers(0, 3, n).astype(float)
        else:
            y = rng.poisson(10, n).astype(float)
            s = int(rng.integers(1, max(2, n - 3)))
            y[s:s + int(rng.integers(1, 4))] += rng.integers(5, 60)
        for counts in (False, True):
            assert spike(y, counts=counts) == _spike_by_loop(y, counts=counts), (y.tolist(), counts)
