"""The statistical analyst answers the question: schema conventions, measures ranked by the goal,
spread effects and seasonality with effect sizes, severity capped by support and relevance."""

from __future__ import annotations

import numpy as np
import pandas as pd

from assay.models import ColumnInfo, TableInfo
from assay.stats import columns as C
from assay.stats import detectors as D
from assay.stats.planner import Planner, Profile

REF = '"main"."flights"'


def table(name, cols, rows=1000):
    return TableInfo(schema="main", name=name, row_count=rows,
                     columns=[ColumnInfo(name=n, type=t) for n, t in cols])


FLIGHT_COLS = [("year", "BIGINT"), ("month", "BIGINT"), ("day", "BIGINT"), ("dep_time", "DOUBLE"),
               ("sched_dep_time", "BIGINT"), ("dep_delay", "DOUBLE"), ("arr_delay", "DOUBLE"),
               ("carrier", "VARCHAR"), ("origin", "VARCHAR"), ("distance", "BIGINT"), ("note", "VARCHAR"),
               ("flight", "BIGINT"), ("sched_arr_time", "BIGINT")]


def flights_profile(rows=300_000):
    p = Profile(table=table("flights", FLIGHT_COLS, rows), rows=rows)
    p.distinct = {"year": 1, "month": 12, "day": 31, "dep_time": 1300, "sched_dep_time": 1000, "dep_delay": 500,
                  "arr_delay": 600, "carrier": 16, "origin": 3, "distance": 200, "note": rows, "flight": 3800,
                  "sched_arr_time": 1100}
    p.nulls = {"dep_time": 8000, "dep_delay": 8000, "arr_delay": 9000}
    p.lo = {"year": 2013, "month": 1, "day": 1, "dep_time": 1, "sched_dep_time": 106, "sched_arr_time": 1, "dep_delay": -43,
            "arr_delay": -86, "distance": 17}
    p.hi = {"year": 2013, "month": 12, "day": 31, "dep_time": 2400, "sched_dep_time": 2359, "sched_arr_time": 2359,
            "dep_delay": 1301,
            "arr_delay": 1272, "distance": 4983}
    p.avg_len = {"carrier": 2, "origin": 3, "note": 80}
    return p


def test_conventions_keys_clock_calendar_text():
    assert all(C.is_key(c) for c in ("id", "customer_id", "c_custkey", "l_orderkey", "order_uuid"))
    assert not any(C.is_key(c) for c in ("keyboard_layout", "carrier", "idle_s"))
    assert C.is_clock_int("dep_time", "number", 1, 2400) and C.is_clock_int("sched_arr_time", "number", 1, 2359)
    assert not C.is_clock_int("dep_delay", "number", -43, 1301)
    assert C.is_calendar_part("month") and C.is_calendar_part("order_year") and not C.is_calendar_part("monthly_fee")
    assert C.is_free_text("o_comment", "string", 1400, 1500, 48.0)
    assert not C.is_free_text("carrier", "string", 16, 300_000, 2.0)
    assert C.is_free_text("short_description", "string", 900, 1000, None)
    assert not C.is_free_text("name", "string", 16, 16, 20.0)  # airline names in a 16-row table: labels
    # 14 labels over 3,000 rows, one of them 300 characters long: still labels (a red team's warehouse, session 23)
    assert not C.is_free_text("select", "string", 14, 3000, 31.0)
    assert C.is_free_text("note", "string", 14, 20, 31.0)  # 14 long values in 20 rows: notes
    assert C.are_twins("dep_time", "sched_dep_time") and not C.are_twins("dep_delay", "arr_delay")
    assert C.expand("dep_delay") == "departure delay" and C.expand("lifeExp") == "life expectancy"


def test_measures_exclude_keys_clock_calendar_and_text():
    p = flights_profile()
    # no clock, year, month, day, and not the flight number
    assert p.measures() == ["dep_delay", "arr_delay", "distance"]
    assert C.names_the_table("flight", "flights") and C.names_the_table("order_number", "orders")
    assert "note" not in p.dims() and "month" not in p.dims()
    assert p.clocks() == ["dep_time", "sched_dep_time", "sched_arr_time"]
    assert p.date_parts() == {"year": "year", "month": "month", "day": "day"}


def fake_embed(texts):
    """Bag of words over a fixed vocabulary: enough to say 'departure delay' is near 'delays'."""
    vocab = ["delay", "departure", "arrival", "distance", "carrier", "origin", "month", "hour", "time"]
    out = np.array([[1.0 if w in t.lower() else 0.0 for w in vocab] + [0.1] for t in texts])
    return out / np.linalg.norm(out, axis=1, keepdims=True)


def test_goal_ranks_measures_and_dims_not_position():
    goal = "Which carriers and airports drive departure delays?"
    p = flights_profile()
    planner = Planner([p.table], lambda x: f'"{x}"', ["carrier", "departure", "delay"], goal=goal, embed=fake_embed)
    probes = planner.plan({p.table.fqn: p})
    assert p.measures()[0] == "dep_delay"
    assert p.dims()[0] == "carrier"
    first = probes[0]
    assert first.kind == "breakdown" and first.meta.dim == "carrier"
    assert 'avg("dep_delay")' in first.sql
    kinds = [pr.kind for pr in probes[:8]]
    assert "season" in kinds  # month of year, day of week, hour of day come early for the question
    season = {pr.meta.dim: pr.meta.expr for pr in probes if pr.kind == "season"}
    assert season["month_of_year"] == '"month"'
    assert season["day_of_week"] == ('CAST(extract(dow FROM make_date(CAST("year" AS INTEGER), CAST("month" AS INTEGER), '
                                     'CAST("day" AS INTEGER))) AS INTEGER)')
    # the hour of a departure from its HHMM clock: the scheduled one, which cancelled flights keep
    assert season["hour_of_day"] == 'CAST(floor("sched_dep_time" / 100) AS INTEGER)'


def test_no_goal_prefers_business_measures_that_vary():
    p = flights_profile()
    probes = Planner([p.table], lambda x: f'"{x}"', []).plan({p.table.fqn: p})
    assert p.measures()[0] in ("dep_delay", "arr_delay", "distance")
    # the hour of day from a scheduled clock, the first one when nothing tells them apart
    hour = next(pr for pr in probes if pr.kind == "season" and pr.meta.dim == "hour_of_day")
    assert hour.meta.expr == 'CAST(floor("sched_dep_time" / 100) AS INTEGER)'


def frame(groups):
    """groups: value -> (n, mean, sd)"""
    return pd.DataFrame({"carrier": list(groups), "n": [g[0] for g in groups.values()],
                         "nn_dep_delay": [g[0] for g in groups.values()],
                         "avg_dep_delay": [g[1] for g in groups.values()],
                         "sd_dep_delay": [g[2] for g in groups.values()]})


def test_spread_effect_named_with_effect_size_and_best_worst():
    # no single outlier (robust z would stay silent): the effect is spread over the carriers
    df = frame({"AA": (30_000, 8.6, 40), "DL": (48_000, 9.3, 40), "EV": (54_000, 20.0, 45), "UA": (58_000, 12.1, 40),
                "US": (20_000, 3.8, 30), "B6": (54_000, 13.0, 40)})
    assert D.segment_outliers(df.rename(columns={"nn_dep_delay": "x"}), "carrier", {}, 1, "flights", REF) == []
    out = D.group_effects(df, "carrier", {}, 1, "flights", REF)
    assert len(out) == 1
    c = out[0]
    assert c.kind == "group_effect" and c.p_value < 1e-12
    assert c.name.startswith("EV has the highest average dep delay (20.0) and US the lowest (3.8)")
    assert "eta² = " in c.description and "omega² = " in c.description
    assert c.support == 264_000 and c.count_sql == f"SELECT count(*) AS count FROM {REF} WHERE \"carrier\" = 'EV'"


def test_a_significant_spread_that_explains_next_to_nothing_is_not_a_finding():
    """A new user's goal run (session 23) reported "the average revenue peaks in May (12.3)", eta² = 0.001: with
    enough rows a negligible spread is significant, and below a small effect (eta² 0.01) it is no finding."""
    df = frame({"AA": (200_000, 10.0, 10), "DL": (200_000, 10.3, 10), "EV": (200_000, 10.6, 10)})
    eta2, _, p = D.significance.anova_effect(np.full(3, 200_000.0), np.array([10.0, 10.3, 10.6]), np.full(3, 10.0))
    assert p < 1e-12 and eta2 < D.segments.MIN_GROUP_ETA2
    assert D.group_effects(df, "carrier", {}, 1, "flights", REF) == []
    bigger = frame({"AA": (200_000, 10.0, 10), "DL": (200_000, 11.0, 10), "EV": (200_000, 12.5, 10)})
    assert len(D.group_effects(bigger, "carrier", {}, 1, "flights", REF)) == 1


def test_no_spread_is_a_no_effect_finding():
    df = frame({"AA": (3000, 10.0, 40), "DL": (3000, 10.2, 40), "UA": (3000, 9.9, 40)})
    out = D.group_effects(df, "carrier", {}, 1, "flights", REF)
    assert [c.kind for c in out] == [D.NO_EFFECT]


def test_season_profile_names_months_and_hours():
    df = pd.DataFrame({"month_of_year": range(1, 13), "n": [1000] * 12,
                       "avg_dep_delay": [10, 11, 13, 14, 13, 21, 22, 12, 7, 6, 5, 17],
                       "sd_dep_delay": [30] * 12})
    c = D.group_effects(df, "month_of_year", {"calendar": "month", "expr": 'month("t")'}, 1, "flights", REF)[0]
    assert c.name.startswith("The average dep delay peaks in July (22.0) and is lowest in November (5) by month of the year")
    assert c.count_sql.endswith('WHERE month("t") = 7')
    assert D.calendar_label(0, "dow") == "Sunday" and D.calendar_label(17, "hour") == "17:00"


def test_low_support_said_and_severity_capped():
    df = frame({"a": (20, 5.0, 10.0), "b": (20, 50.0, 10.0), "c": (20, 9.0, 10.0)})
    df["n"] = [1000, 1000, 1000]  # 60 of 3,000 rows have a value
    c = D.group_effects(df, "carrier", {}, 1, "flights", REF)[0]
    assert "Only 2.0% of the rows" in c.description and "Low support" in c.description
    c.q_value = 1e-20
    assert D._base_severity(c) == "high" and D.severity(c) == "medium"
    c.support, c.support_share, c.catalogue = 10_000, 1.0, True
    assert D.severity(c) == "low"  # a small reference table's fact is never a headline
    c.catalogue, c.relevance = False, 0.1
    assert D.severity(c, goal=True) == "medium" and D.severity(c) == "high"
    # a segment's level against the others' is at most high (often what the segment is: a category's price);
    # the same effect as a worse conversion or a churn gap is critical
    c.kind = D.Kind.FUNNEL_DROP
    assert D.severity(c) == "critical"


def test_empty_measure_explained_by_a_column_empty_on_the_same_rows():
    df = pd.DataFrame({"n": [336_776], "missing": [8_255], "both_dep_time": [8_255], "both_tailnum": [2_500]})
    meta = {"measure": "dep_delay", "others": ["dep_time", "tailnum"]}
    c = D.null_reason(df, meta, 3, "flights", REF)[0]
    assert c.name == ("8,255 flights (2.5%) have no dep delay because they have no dep time: "
                      "cancelled or not applicable")
    assert c.count_sql == f'SELECT count(*) AS count FROM {REF} WHERE "dep_delay" IS NULL'
    df["both_dep_time"] = [4_000]  # half of them: no reason found, nothing claimed
    assert D.null_reason(df, meta, 3, "flights", REF) == []


def test_planner_asks_why_the_top_measure_is_empty():
    p = flights_profile()
    probes = Planner([p.table], lambda x: f'"{x}"', ["delay"], goal="departure delays", embed=fake_embed).plan(
        {p.table.fqn: p})
    nr = [pr for pr in probes if pr.kind == "null_reason"]
    assert len(nr) == 1 and nr[0].meta.measure == "dep_delay"
    assert 'sum(CASE WHEN "dep_delay" IS NULL AND "dep_time" IS NULL THEN 1 ELSE 0 END)' in nr[0].sql


def test_season_sql_runs_on_postgres_dialect():
    from assay.stats.portable import portable

    p = flights_profile()
    probes = Planner([p.table], lambda x: f'"{x}"', [], goal="delays", embed=fake_embed).plan({p.table.fqn: p})
    dow = next(pr for pr in probes if pr.kind == "season" and pr.meta.dim == "day_of_week")
    sql = portable(dow.sql, "postgres")
    assert "MAKE_DATE(" in sql and "EXTRACT(DOW FROM" in sql and "DATE_FROM_PARTS" not in sql


class _Embedder:
    def embed(self, texts):
        return fake_embed(texts)


class _Session:
    embedder = _Embedder()


def cand(name, score, kind="group_effect", measure="", area_text=""):
    return D.Candidate(kind=kind, name=name, description="", table="flights", step=1, effect=score, p_value=1e-9,
                       count_sql=None, score=score, measure=measure, area_text=area_text)


def test_findings_on_the_goal_come_first_and_few_others_stay():
    from assay.stats.analyst import cap_off_goal, rank_by_goal

    on = cand("EV has the highest average dep delay across carrier values", 0.3, measure="avg_dep_delay")
    offs = [cand(f"Group {i} has the highest average distance", 0.9, measure="avg_distance") for i in range(5)]
    ranked = rank_by_goal(_Session(), "Which carriers drive departure delays?", offs + [on])
    assert ranked[0] is on and on.relevance >= D.GOAL_RELEVANT
    assert all(c.relevance < D.GOAL_RELEVANT for c in offs)
    assert cap_off_goal(ranked) == ranked  # one finding on the question is no answer: everything stays
    ons = [cand(f"{x} has the highest average dep delay across carrier values", 0.3, measure="avg_dep_delay")
           for x in ("EV", "FL", "WN")]
    ranked = rank_by_goal(_Session(), "Which carriers drive departure delays?", offs + ons)
    kept = cap_off_goal(ranked)
    assert kept[:3] == ons and len(kept) == 3 + 3
    artifact = cand("l linestatus switches from F to O on 1995-06-18 for every row", 0.5, kind=D.ARTIFACT)
    artifact.relevance = 0.0
    assert artifact in cap_off_goal(ranked + [artifact])  # how the data was made bears on every answer


def test_goal_acronyms_spelled_out_by_the_findings_words():
    texts = ["The average time to resolution is uniform across category values", "Fred has a higher average time "
             "to resolution"]
    assert C.expand_acronyms("What drives the increase in TTR?", texts) == \
        "What drives the increase in TTR (time to resolution)?"
    assert C.expand_acronyms("Why do HR expenses rise?", ["HR has a higher rate"]) == "Why do HR expenses rise?"


def test_spread_effect_gives_way_to_the_outlier_of_its_top_group():
    from assay.stats.analyst import _dedupe

    df = frame({"furniture": (3000, 281.5, 40), "books": (3000, 18.3, 5), "toys": (3000, 30.0, 8),
                "garden": (3000, 35.0, 9)})
    effect = D.group_effects(df, "carrier", {}, 1, "flights", REF)[0]
    outlier = cand("furniture has a much higher average dep_delay than other carrier values", 0.5,
                   kind="outlier_segment", measure="avg_dep_delay")
    outlier.segment, outlier.count_sql = "carrier=furniture", "SELECT 1"
    effect.score = 0.9
    assert _dedupe([effect, outlier]) == [outlier]
    low = cand("books has a much lower average dep_delay", 0.5, kind="outlier_segment", measure="avg_dep_delay")
    low.segment, low.count_sql = "carrier=books", "SELECT 2"
    assert _dedupe([effect, low]) == [low]  # its lowest group is that outlier's fact too
    other = cand("toys has a much lower average dep_delay", 0.5, kind="outlier_segment", measure="avg_dep_delay")
    other.segment, other.count_sql = "carrier=toys", "SELECT 3"
    assert _dedupe([effect, other]) == [effect, other]


def test_a_dimension_that_defines_the_measure_is_no_finding():
    df = frame({"coins_small": (500, 0.99, 0.0), "coins_large": (300, 20.0, 0.0), "gems": (200, 5.0, 0.0)})
    assert [c for c in D.group_effects(df, "carrier", {}, 1, "flights", REF) if c.kind == "group_effect"] == []


def test_spread_effect_stays_when_the_outlier_of_its_group_was_itself_dropped():
    from assay.stats.analyst import _dedupe

    df = frame({"furniture": (3000, 281.5, 40), "books": (3000, 18.3, 5), "toys": (3000, 30.0, 8),
                "garden": (3000, 35.0, 9)})
    effect = D.group_effects(df, "carrier", {}, 1, "flights", REF)[0]
    first = cand("furniture has the most returns", 0.9, kind="outlier_segment", measure="return_rate")
    first.segment, first.count_sql = "carrier=furniture", "SELECT 0"
    second = cand("furniture has a much higher average dep_delay", 0.5, kind="outlier_segment",
                  measure="avg_dep_delay")
    second.segment, second.count_sql = "carrier=furniture", "SELECT 1"  # one finding per segment: dropped
    assert _dedupe([first, effect, second]) == [first, effect]


def test_findings_of_no_effect_merge_per_measure():
    from assay.stats.analyst import merge_no_effects

    a = D.no_effect("The average l tax is uniform across l shipmode values", "A.", "lineitem", 1, 0.4, "s", "")
    b = D.no_effect("The average l tax is uniform across l shipinstruct values", "B.", "lineitem", 2, 0.6, "s", "")
    c = D.no_effect("The average price is uniform across brand values", "C.", "part", 3, 0.7, "s", "")
    out = merge_no_effects([a, b, c])
    assert [x.name for x in out] == ["The average l tax is uniform across l shipmode and l shipinstruct values",
                                     "The average price is uniform across brand values"]
    assert out[0].description == "A. B." and a.name.endswith("l shipmode values")  # inputs untouched
