"""Detectors: known answers on small frames, silence on frames with no signal."""

from __future__ import annotations

import numpy as np
import pandas as pd

from assay.stats import detectors as D

REF = '"main"."t"'


def test_outlier_segment_found_and_counted_as_never_succeeded():
    df = pd.DataFrame({"level": range(1, 11), "n": [1000] * 10, "entities": [300] * 10,
                       "won_rate": [0.6, 0.62, 0.58, 0.61, 0.05, 0.6, 0.59, 0.63, 0.6, 0.61]})
    out = D.segment_outliers(df, "level", {"entity": "player_id"}, 4, "attempts", REF)
    assert len(out) == 1 and out[0].segment == "level=5"
    # a number says what it is a value of (the gaming demo's headline read "42 has a much lower won rate ...")
    assert out[0].name == "level 5 has a much lower won rate than other level values"
    assert D.subject("platform", "android") == "android" and D.subject("year", 2024) == "year 2024"
    assert "HAVING max(CASE WHEN \"won\" THEN 1 ELSE 0 END) = 0" in out[0].count_sql


def test_outlier_silent_without_signal():
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"k": list("abcdefgh"), "n": [5000] * 8, "won_rate": 0.5 + rng.normal(0, 0.005, 8)})
    assert D.segment_outliers(df, "k", {}, 1, "t", REF) == []


def test_outlier_ignores_values_fixed_by_the_segment():
    df = pd.DataFrame({"product": list("abcde"), "n": [8000] * 5, "avg_price": [1, 1, 1, 1, 20.0],
                       "sd_price": [0, 0, 0, 0, 0.0]})
    assert D.segment_outliers(df, "product", {}, 1, "t", REF) == []


def test_change_point_known_answer():
    y = np.array([10, 11, 9, 10, 10, 30, 31, 29, 30, 31], dtype=float)
    k, before, after, p = D.change_point(y)
    assert k == 5 and before == 10 and after == 30.2 and p < 1e-6


def test_trend_vs_step():
    line = np.arange(12, dtype=float) * 10 + 100
    assert not D.step_beats_line(line)
    step = np.array([10] * 6 + [30] * 6, dtype=float)
    assert D.step_beats_line(step)
    slope, rel, p = D.trend(line)
    assert slope == 10 and p < 1e-9


def test_rate_series_flags_one_segment_with_date():
    months = pd.date_range("2026-01-01", periods=10, freq="MS")
    rows = []
    for seg in ("web", "ios", "android"):
        for i, m in enumerate(months):
            rows.append({"month": m, "platform": seg, "ev": "cart", "n": 1000})
            rate = 0.5 if (seg != "android" or i < 6) else 0.1
            rows.append({"month": m, "platform": seg, "ev": "buy", "n": int(1000 * rate)})
    out = D.rate_series_changes(pd.DataFrame(rows), {"dim": "platform", "event": "ev", "time": "at",
                                                     "entity": "customer_id"}, 2, "events", REF)
    assert len(out) == 1 and out[0].segment == "platform=android" and "2026-07-01" in out[0].count_sql
    assert "count(DISTINCT" in out[0].count_sql and "'cart'" in out[0].count_sql


def test_rate_series_silent_without_signal():
    months = pd.date_range("2026-01-01", periods=10, freq="MS")
    rows = [{"month": m, "platform": s, "ev": e, "n": n} for m in months for s in ("a", "b", "c")
            for e, n in (("cart", 1000), ("buy", 500))]
    assert D.rate_series_changes(pd.DataFrame(rows), {"dim": "platform", "event": "ev", "time": "at"}, 1, "t",
                                 REF) == []


def test_funnel_pairs_compare_a_negative_event_with_the_one_it_undoes():
    pairs = D.funnel_pairs(["view", "add_to_cart", "purchase", "remove_from_cart"])
    assert ("add_to_cart", "view") in pairs and ("remove_from_cart", "add_to_cart") in pairs


def test_concentration_tiers():
    df = pd.DataFrame([{"entities": 1000, "total": 100.0, "top1": 5.0, "top5": 60.0, "top10": 70.0}])
    out = D.concentration(df, {"entity": "player_id", "measure": "price"}, 1, "purchases", REF)
    assert "Top 5%" in out[0].name and "0.05" in out[0].count_sql
    flat = pd.DataFrame([{"entities": 1000, "total": 100.0, "top1": 1.2, "top5": 6.0, "top10": 11.0}])
    assert D.concentration(flat, {"entity": "c", "measure": "m"}, 1, "t", REF) == []


def test_retention_gap():
    df = pd.DataFrame({"channel": ["a", "b", "c", "tiktok"], "entities": [1000] * 4,
                       "returned_rate": [0.75, 0.76, 0.74, 0.3], "repeat_rate": [0.5] * 4})
    meta = {"dim": "channel", "activity_ref": '"main"."sessions"', "key": "player_id", "created": "installed_at",
            "activity_time": "started_at", "activity_table": "main.sessions"}
    out = D.retention_outliers(df, meta, 1, "players", REF)
    assert len(out) == 1 and out[0].segment == "channel=tiktok" and "NOT EXISTS" in out[0].count_sql


def test_a_repeat_rate_is_of_the_entities_with_a_first_activity():
    """The ecommerce demo said "Of 10,036 paid_social customers, 2.4% come back for a second activity" and counted
    1,795 affected (buyers with one order): the rate counted the 7,997 who never ordered, who cannot come back. The
    probe's repeat rate is now of the entities with a first activity ("active"), and the finding says so."""
    df = pd.DataFrame({"channel": ["email", "organic", "paid_social", "referral"],
                       "entities": [5000, 6000, 10036, 3000], "active": [4000, 5000, 2039, 2500],
                       "returned_rate": [0.5, 0.5, 0.5, 0.5], "repeat_rate": [0.35, 0.36, 0.12, 0.34]})
    meta = {"dim": "channel", "activity_ref": '"main"."orders"', "key": "customer_id", "created": "signed_up_at",
            "activity_time": "ordered_at", "activity_table": "main.orders"}
    out = D.retention_outliers(df, meta, 1, "customers", REF)
    assert len(out) == 1 and out[0].segment == "channel=paid_social"
    assert out[0].description.startswith("Of 2,039 customers with channel = paid_social and a first activity, 12.0% "
                                         "come back for a second activity")
    assert "HAVING count(*) = 1" in out[0].count_sql  # the affected: its buyers with one order
    # the gap is that of the two figures shown, in percentage points (a new
    # user read "12.0% ... against 35.0% ...: a churn gap of 23.1% points")
    assert "against 35.2% for other values of channel: a churn gap of 23.2 percentage points." in out[0].description


def test_quality_from_profile():
    row = {"row_count": 1000, "category__nulls": 40, "duration__negative": 12, "name__nulls": 0}
    kinds = {c.segment for c in D.quality_from_profile(row, {}, 1, "t", REF, ["category", "duration", "name"])}
    assert kinds == {"category", "duration"}


def test_benjamini_hochberg_known_values():
    q = D.benjamini_hochberg([0.01, 0.04, 0.03, 0.005])
    assert np.allclose(q, [0.02, 0.04, 0.04, 0.02])


def test_volume_trend_explained_by_a_growing_base_is_silent():
    months = pd.date_range("2026-01-01", periods=12, freq="MS")
    entities = np.arange(12) * 100 + 1000
    grows_with_base = pd.DataFrame({"month": months, "entities": entities, "n": entities * 3})
    assert D.series_changes(grows_with_base, {"time": "at"}, 1, "orders", REF) == []
    per_entity_up = pd.DataFrame({"month": months, "entities": [1000] * 12, "n": np.arange(12) * 400 + 3000})
    assert [c.kind for c in D.series_changes(per_entity_up, {"time": "at"}, 1, "orders", REF)] == ["trend"]
