"""Detectors for small operational tables (incidents, expenses): dominance, concentration within a
segment, averages by segment (Welch), correlation, trends, and findings of no effect. Each has a
known answer on a small frame and stays silent (or reports no effect) without a signal."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from assay.stats import detectors as D

REF = '"main"."incidents"'


def counts(dim, values):
    return pd.DataFrame({dim: list(values), "n": list(values.values())})


# ---------------------------------------------------------------- dominance


def test_dominant_value_found_with_count_sql():
    df = counts("category", {"Hardware": 336, "Software": 40, "Network": 45, "Database": 39, "Inquiry": 40})
    out = D.dominant_segment(df, "category", {}, 3, "incidents", REF)
    assert len(out) == 1
    c = out[0]
    assert c.kind == "dominant_segment" and c.segment == "category=Hardware"
    assert c.name == "The number of Hardware incidents is significantly higher than other category values"
    assert c.count_sql == 'SELECT count(*) AS count FROM "main"."incidents" WHERE "category" = \'Hardware\''
    assert c.p_value < 1e-50 and "336 of 500" in c.description
    assert c.effect == pytest.approx((336 / 500 - 0.2) / 0.8)


def test_values_well_above_the_typical_one_are_each_reported():
    df = counts("assigned_to", {"Beth": 150, "Luke": 116, "Fred": 60, "Howard": 58, "Charlie": 61})
    out = D.dominant_segment(df, "assigned_to", {}, 1, "incidents", REF)
    assert [c.segment for c in out] == ["assigned_to=Beth", "assigned_to=Luke"]
    assert out[0].name == "Beth has a significantly higher number of incidents than other assigned to values"
    p = stats.binomtest(150, 445, 0.2, alternative="greater").pvalue
    assert out[0].p_value == pytest.approx(p)


def test_even_spread_is_a_finding_of_no_effect():
    df = counts("location", {"UK": 101, "US": 99, "India": 98, "Australia": 102})
    out = D.dominant_segment(df, "location", {}, 1, "incidents", REF)
    assert len(out) == 1 and out[0].kind == D.NO_EFFECT
    assert out[0].name == "The distribution of incidents across location values is uniform"


def test_mild_imbalance_is_neither_dominant_nor_uniform():
    df = counts("k", {"a": 130, "b": 100, "c": 90, "d": 80})
    assert D.dominant_segment(df, "k", {}, 1, "t", REF) == []


# ---------------------------------------------------------------- concentration within a segment


def test_most_of_a_segment_in_one_value_of_another_dimension():
    rows = [("Hardware", "Australia", 250), ("Hardware", "UK", 30), ("Hardware", "US", 26),
            ("Software", "Australia", 20), ("Software", "UK", 60), ("Software", "US", 64),
            ("Network", "Australia", 18), ("Network", "UK", 55), ("Network", "US", 57)]
    df = pd.DataFrame(rows, columns=["category", "location", "n"])
    out = D.crosstab_concentration(df, {"dims": ["category", "location"]}, 2, "incidents", REF)
    top = [c for c in out if c.segment == "category=Hardware"]
    assert len(top) == 1
    assert top[0].name == "Most of the Hardware incidents have location Australia"
    assert "250 of 306" in top[0].description
    assert top[0].count_sql.endswith("WHERE \"category\" = 'Hardware' AND \"location\" = 'Australia'")


def test_dimensions_that_determine_each_other_are_not_news():
    rows = [("Hardware", "Hardware team", 100), ("Software", "Software team", 80), ("Network", "Network team", 90),
            ("Hardware", "Software team", 1)]
    df = pd.DataFrame(rows, columns=["category", "group", "n"])
    assert D.cramers_v(df.pivot_table(index="category", columns="group", values="n", fill_value=0).to_numpy()) > 0.9
    assert D.crosstab_concentration(df, {"dims": ["category", "group"]}, 1, "t", REF) == []


def test_independent_dimensions_are_silent():
    rows = [(a, b, 50) for a in "xyz" for b in "pqr"]
    df = pd.DataFrame(rows, columns=["a", "b", "n"])
    assert D.crosstab_concentration(df, {"dims": ["a", "b"]}, 1, "t", REF) == []


# ---------------------------------------------------------------- averages by segment


def breakdown(means, sds, ns, dim="assigned_to", m="avg_time_to_resolution_days"):
    return pd.DataFrame({dim: list(means), "n": ns, m: list(means.values()), "sd_" + m[4:]: sds})


def test_slow_agent_found_by_welch_test():
    means = {"Fred": 24.0, "Beth": 6.0, "Luke": 6.5, "Howard": 5.8, "Charlie": 6.2}
    df = breakdown(means, [8.0, 3.0, 3.1, 2.9, 3.0], [95, 100, 101, 99, 105])
    meta = {"dim": "assigned_to", "measure": "avg_time_to_resolution_days", "label": "time to resolution",
            "start": "opened_at", "end": "closed_at"}
    out = D.duration_outliers(df, meta, 7, "incidents", REF)
    fred = [c for c in out if c.segment == "assigned_to=Fred"]
    assert len(fred) == 1
    c = fred[0]
    assert c.name == "Fred has a significantly higher average time to resolution than other assigned to values"
    rest_mean = (6.0 * 100 + 6.5 * 101 + 5.8 * 99 + 6.2 * 105) / 405
    assert f"{rest_mean:.3g} days" in c.description
    assert c.count_sql.endswith("\"assigned_to\" = 'Fred' AND \"closed_at\" IS NOT NULL AND "
                                "\"closed_at\" >= \"opened_at\"")
    assert c.p_value < 1e-20


def test_pooled_rest_matches_the_raw_rows():
    """The rest's standard deviation pooled from group statistics equals the raw rows' one."""
    rng = np.random.default_rng(1)
    groups = {k: rng.normal(mu, 2.0, n) for k, mu, n in (("a", 10, 40), ("b", 12, 60), ("c", 9, 50))}
    df = pd.DataFrame({"g": list(groups), "n": [len(v) for v in groups.values()],
                       "avg_x": [v.mean() for v in groups.values()], "sd_x": [v.std(ddof=1) for v in groups.values()]})
    got = D.anova_p(df["n"].to_numpy(float), df["avg_x"].to_numpy(float), df["sd_x"].to_numpy(float))
    assert got == pytest.approx(stats.f_oneway(*groups.values()).pvalue, rel=1e-9)


def test_segments_pulled_by_one_high_segment_are_not_reported_low():
    means = {"HR": 2700.0, "IT": 900.0, "Sales": 880.0, "Legal": 910.0, "Finance": 905.0}
    df = breakdown(means, [900.0, 300, 300, 300, 300], [50] * 5, dim="department", m="avg_amount")
    out = D.mean_outliers(df, "department", "avg_amount", "amount", "", None, 1, "expenses", REF)
    assert [c.segment for c in out] == ["department=HR"]


def test_similar_averages_are_a_finding_of_no_effect():
    means = {"a": 6.0, "b": 6.1, "c": 5.9, "d": 6.05}
    df = breakdown(means, [3.0] * 4, [100] * 4, dim="category", m="avg_x")
    out = D.mean_outliers(df, "category", "avg_x", "x", "", None, 1, "incidents", REF)
    assert len(out) == 1 and out[0].kind == D.NO_EFFECT
    assert out[0].name == "The average x is uniform across category values"


def test_a_segment_of_constant_values_is_a_definition():
    df = breakdown({"a": 5.0, "b": 1.0, "c": 1.1}, [0.0, 0.5, 0.5], [50, 50, 50], dim="k", m="avg_x")
    assert all(c.segment != "k=a" for c in D.mean_outliers(df, "k", "avg_x", "x", "", None, 1, "t", REF))


# ---------------------------------------------------------------- correlation


def test_correlation_p_value_matches_scipy():
    rng = np.random.default_rng(2)
    x = rng.normal(size=80)
    y = 0.4 * x + rng.normal(size=80)
    r, p = stats.pearsonr(x, y)
    assert D.correlation_p(float(r), 80) == pytest.approx(p, rel=1e-9)


def test_correlations_from_the_warehouse_row():
    df = pd.DataFrame({"r0": [0.62], "n0": [500], "r1": [0.05], "n1": [500]})
    meta = {"pairs": [["amount", "processing time"], ["amount", "quantity"]]}
    out = D.correlations(df, meta, 4, "expenses", REF)
    assert len(out) == 1
    assert out[0].name == "There is a positive correlation between amount and processing time"
    assert "r = 0.62 over 500 rows" in out[0].description and out[0].count_sql is None
    assert D.severity(out[0]) == "medium"


# ---------------------------------------------------------------- over time


def months(k):
    return pd.date_range("2023-01-01", periods=k, freq="MS")


def test_interval_trend_and_volume_correlation():
    y = np.array([5.9, 12.0, 20.0, 29.0, 37.0, 46.0, 55.0, 63.0, 71.0, 80.0])
    n = np.array([80, 70, 66, 60, 55, 50, 45, 40, 38, 35])
    df = pd.DataFrame({"month": months(10), "n": n, "avg_ttr_days": y})
    meta = {"measure": "avg_ttr_days", "label": "time to resolution"}
    out = D.duration_series(df, meta, 2, "incidents", REF)
    names = [c.name for c in out]
    assert "The average time to resolution of incidents is increasing over time" in names
    corr = [c for c in out if c.kind == "correlation"]
    assert corr and corr[0].name.startswith("There is a negative correlation between number of incidents")


def test_flat_interval_is_uniform_over_time_and_uncorrelated():
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"month": months(12), "n": rng.integers(40, 60, 12), "avg_ttr_days": 6 + rng.normal(0, .3, 12)})
    out = D.duration_series(df, {"measure": "avg_ttr_days", "label": "time to resolution"}, 2, "incidents", REF)
    assert {c.kind for c in out} == {D.NO_EFFECT}
    assert "The average time to resolution of incidents is uniform over time" in [c.name for c in out]


def test_a_volume_correlation_of_averages_that_barely_move_is_no_finding():
    """A game's sessions (the gaming demo with sessions in time order, session 19's draft): twelve monthly average
    durations within 2.4% of each other (586-601 s), the launch month the highest and with the fewest sessions:
    r = -0.82, p = 0.001, a "strong negative correlation" the scan listed as a lead to a real model. Along the
    months' range of volume the fitted average moves by 2% of itself: no finding."""
    n = np.array([13216, 30217, 37493, 35377, 39880, 38644, 39969, 39798, 42729, 41976, 40846, 37615])
    y = np.array([600.7, 591.6, 590.4, 590.3, 589.9, 587.0, 590.4, 589.3, 593.4, 586.4, 587.2, 592.1]) / 86400
    df = pd.DataFrame({"month": months(12), "n": n, "avg_duration_days": y})
    out = D.duration_series(df, {"measure": "avg_duration_days", "label": "duration"}, 2, "sessions", REF)
    assert abs(np.corrcoef(n, y)[0, 1]) > 0.8  # strong, and significant
    assert not [c for c in out if c.kind == "correlation"], [c.description for c in out]
    # the same volumes with averages that do move with them (by 40% along the range): reported
    moving = 600 * (1 - 0.4 * (n - n.min()) / (n.max() - n.min())) / 86400
    out = D.duration_series(df.assign(avg_duration_days=moving), {"measure": "avg_duration_days", "label": "duration"},
                            2, "sessions", REF)
    assert [c.name for c in out if c.kind == "correlation"] == [
        "There is a negative correlation between number of sessions and average duration"]


def test_one_segment_climbing_while_others_stay_flat():
    rng = np.random.default_rng(4)
    rows = []
    for i, m in enumerate(months(12)):
        rows.append((m, "Beth", 10 + 4 * i))
        for a in ("Luke", "Fred", "Howard"):
            rows.append((m, a, 20 + int(rng.integers(-2, 3))))
    df = pd.DataFrame(rows, columns=["month", "assigned_to", "n"])
    out = D.segment_series_changes(df, {"dim": "assigned_to", "measure": "n", "time": "opened_at", "trend": True},
                                   5, "incidents", REF)
    trends = [c for c in out if c.kind == "trend"]
    assert [c.name for c in trends] == ["The number of incidents for Beth is increasing over time"]


def test_every_segment_flat_is_a_finding_of_no_effect():
    rng = np.random.default_rng(5)
    rows = [(m, a, 20 + int(rng.integers(-3, 4))) for m in months(12) for a in ("a", "b", "c")]
    df = pd.DataFrame(rows, columns=["month", "agent", "n"])
    out = D.segment_series_changes(df, {"dim": "agent", "measure": "n", "time": "t", "trend": True}, 1, "incidents",
                                   REF)
    assert [c.kind for c in out] == [D.NO_EFFECT]
    assert out[0].name == "The number of incidents for each agent value remains uniform over time"


# ---------------------------------------------------------------- scoring


def test_findings_of_no_effect_skip_the_correction_and_rank_last():
    sig = D.Candidate("trend", "s", "d", "t", 1, effect=0.5, p_value=1e-6, count_sql=None)
    noise = D.Candidate("trend", "n", "d", "t", 1, effect=0.5, p_value=0.6, count_sql=None)
    null = D.no_effect("u", "d", "t", 1, 0.7, "seg", "")
    out = D.score([null, noise, sig])
    assert [c.name for c in out] == ["s", "u"]
    assert out[1].score == 0.0 and D.severity(out[1]) == "low" and not math.isnan(out[1].q_value)


def test_gini_from_ranks_matches_the_definition():
    v = np.sort(np.random.default_rng(6).pareto(1.5, 500))  # ascending
    ranks = np.arange(1, len(v) + 1)
    mad = np.abs(v[:, None] - v[None, :]).sum()
    expected = mad / (2 * len(v) ** 2 * v.mean())
    assert D.gini_from_ranks(float((ranks * v).sum()), float(v.sum()), len(v)) == pytest.approx(expected)
    assert D.gini_from_ranks(float((ranks * 1.0).sum()), 500.0, 500) == pytest.approx(0.0, abs=1e-12)


def test_a_segment_that_grew_less_than_the_others_did_not_rise_as_a_segment():
    """A real run's "The total amount for android increased from 2026-02-01 ... while for the other
    platform values it changed 871.6%": android rose 6x, the others 10x; the business grew, android's
    share fell. A rise is a segment's only when it beats the others' in its own direction."""
    ms = months(12)

    def frame(other_after: int) -> pd.DataFrame:
        rows = []
        for i, m in enumerate(ms):
            rows.append((m, "android", 100 if i < 4 else 600))
            rows += [(m, p, 100 if i < 4 else other_after) for p in ("ios", "web")]
        return pd.DataFrame(rows, columns=["month", "platform", "sum_amount"])

    meta = {"dim": "platform", "measure": "sum_amount", "time": "ordered_at"}
    assert not [c for c in D.segment_series_changes(frame(1000), meta, 1, "orders", REF)
                if c.segment == "platform=android"]
    flat = [c for c in D.segment_series_changes(frame(100), meta, 1, "orders", REF) if c.segment == "platform=android"]
    assert len(flat) == 1 and flat[0].name == "The total amount for android increased from 2023-05-01"


def test_a_total_that_rose_because_a_few_spent_big_is_no_rise_of_the_segment():
    """Round 19's adopted "The total price usd for cross_promo increased from 2026-04-01": cross_promo's revenue
    quadrupled because about five whales started buying coins_large; its other payers spent as before. The probe
    carries each segment's total without its 5 largest entities; the change must hold there too."""
    ms = months(12)

    def frame(rest_after: int) -> pd.DataFrame:
        rows = []
        for i, m in enumerate(ms):
            rows.append((m, "cross_promo", 100 if i < 4 else 400, 100 if i < 4 else rest_after))
            rows += [(m, c, 1000, 900) for c in ("organic", "google_ads")]
        return pd.DataFrame(rows, columns=["month", "channel", "sum_price", "without_top_sum_price"])

    meta = {"dim": "channel", "measure": "sum_price", "time": "purchased_at"}
    whales = [c for c in D.segment_series_changes(frame(100), meta, 1, "purchases", REF)
              if c.segment == "channel=cross_promo"]
    assert whales == []
    broad = [c for c in D.segment_series_changes(frame(380), meta, 1, "purchases", REF)
             if c.segment == "channel=cross_promo"]
    assert len(broad) == 1 and broad[0].name == "The total price for cross_promo increased from 2023-05-01"
    # a fall because the largest buyers left is the segment's news: kept
    left = frame(100)
    promo = left["channel"] == "cross_promo"
    left.loc[promo, "sum_price"] = [400 if i < 4 else 100 for i in range(len(ms))]  # 400 a month, then 100
    assert [c.name for c in D.segment_series_changes(left, meta, 1, "purchases", REF)] == \
        ["The total price for cross_promo decreased from 2023-05-01"]
    # a probe without the column (no entity to rank) keeps its finding
    no_entity = frame(100).drop(columns=["without_top_sum_price"])
    assert [c.segment for c in D.segment_series_changes(no_entity, meta, 1, "purchases", REF)] == ["channel=cross_promo"]


def test_departs_in_its_direction():
    from assay.stats.detectors.significance import departs_in_its_direction as departs

    assert departs(4.0, 0.0) and departs(-0.7, 0.0) and departs(9.2, -0.56)  # a rise while the others fell
    assert not departs(4.97, 8.72) and not departs(-0.3, -0.6)  # the others moved further the same way
    assert departs(-1.0, 0.1)  # fell to nothing
    from assay.stats.detectors.wording import measure_words

    assert measure_words("sum_total_amount", "orders") == "total amount"  # not "total total amount"
    assert measure_words("sum_price", "orders") == "total price"


def test_a_flag_s_usual_value_is_no_dominant_segment():
    """The session-16 new user's goal run: "The number of False orders is significantly higher than other refunded
    values" (27,352 of 28,820 orders not refunded). A flag's usual value is what a flag is."""
    for values in ([False, True], ["false", "true"], [0, 1], ["N", "Y"]):
        df = pd.DataFrame({"refunded": values, "n": [27_352, 1_468]})
        assert D.dominant_segment(df, "refunded", {}, 1, "orders", REF) == [], values
    df = pd.DataFrame({"status": ["delivered", "returned"], "n": [27_352, 1_468]})  # a two-valued category is no flag
    assert D.dominant_segment(df, "status", {}, 1, "orders", REF)


# ---------------------------------------------------------------- data quality


def test_rows_that_end_before_they_start_and_their_negative_duration_are_one_fact():
    # the gaming scan's leads listed the same 412 sessions twice: ended_at < started_at, and duration_s < 0
    from assay.stats.analyst import _dedupe

    ref = '"main"."sessions"'
    profile = {"row_count": 50_000, "duration_s__negative": 412, "duration_s__nulls": 0}
    negative = D.quality_from_profile(profile, None, 1, "sessions", ref, ["duration_s"])
    ends = D.end_before_start(pd.DataFrame({"n": [50_000], "bad": [412]}),
                              {"start": "started_at", "end": "ended_at"}, 2, "sessions", ref)
    assert [c.affected for c in negative + ends] == [412, 412]
    kept = _dedupe(D.score(negative + ends))
    assert len(kept) == 1 and "412" in kept[0].name
    # a different defect of the same table stays its own fact
    other = D.quality_from_profile({"row_count": 50_000, "price__negative": 9}, None, 1, "sessions", ref, ["price"])
    assert len(_dedupe(D.score(negative + ends + other))) == 2


def test_a_table_of_acts_beside_one_of_presence_judges_only_whether_the_act_was_repeated():
    df = pd.DataFrame({"channel": ["tiktok", "organic", "paid", "email"], "entities": [4000, 9000, 8000, 7000],
                       "returned_rate": [0.28, 0.74, 0.75, 0.73], "repeat_rate": [0.90, 0.91, 0.90, 0.92],
                       "active": [3900, 8900, 7900, 6900]})
    meta = {"dim": "channel", "entity_table": "main.players", "key": "player_id", "created": "installed_at",
            "activity_table": "main.level_attempts", "activity_time": "attempted_at",
            "activity_ref": '"main"."level_attempts"'}
    [gap] = D.retention_outliers(df, meta, 1, "players", '"main"."players"')
    assert gap.segment == "channel=tiktok" and "return after their first day" in gap.name
    assert D.retention_outliers(df, {**meta, "returns": False}, 1, "players", '"main"."players"') == []


def test_what_a_new_user_read_is_worded_as_a_reader_names_it():
    """Session 21's new user, on the gaming demo with a goal: "2 has the highest median moves left (3) and 42 the
    lowest (0) across level values", "p = 0", and "-1.2e-14 within its levels against +1.49 in total". A numeric
    group carries its dimension, an underflowed p-value is a bound, and float noise beside a total is 0."""
    from assay.models import MetricKind
    from assay.stats.detectors.wording import group_label, p_eq
    from assay.validate.refute import _difference

    assert group_label(2, None, "level") == "level 2" and group_label("42", None, "level") == "level 42"
    assert group_label(2.5, None, "discount") == "discount 2.5"
    assert group_label("furniture", None, "category") == "furniture"  # a name stays a name
    assert group_label(7, "month", "month of year") == "July"  # a calendar value by its name
    assert group_label(True, None, "won") == "True"
    assert p_eq(0.0) == "p < 1e-300" and p_eq(6.9e-10) == "p = 6.9e-10" and p_eq(0.0093) == "p = 0.0093"
    assert p_eq(float("nan")) == "p = nan"
    assert _difference(-1.2e-14, MetricKind.average, 1.49) == "0"
    assert _difference(-0.4, MetricKind.average, 1.49) == "-0.4"
    assert _difference(-1.2e-14, MetricKind.average) == "-1.2e-14"  # no total to weigh it against: as it is
