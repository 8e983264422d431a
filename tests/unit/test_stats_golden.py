"""Golden fixtures of the statistical analyst: the planner's SQL for a small schema and the detectors'
wording for a small frame, one case each. A change to a probe or a sentence is a readable diff.

A missing or changed fixture fails. To accept a change on purpose, rerun with
``--update-goldens`` (or ``ASSAY_UPDATE_GOLDEN=1``), read the diff of tests/data/golden/stats/, and commit it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from assay.models import ColumnInfo, TableInfo
from assay.stats import detectors as D
from assay.stats.planner import Planner, Profile
from tests.goldens import updating

GOLDEN = Path(__file__).parent.parent / "data" / "golden" / "stats"
REF = '"main"."t"'


def check(name: str, actual) -> None:
    path = GOLDEN / f"{name}.json"
    text = json.dumps(actual, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    if updating():
        GOLDEN.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return
    if not path.exists():
        pytest.fail(f"golden fixture {path.name} is missing: run with ASSAY_UPDATE_GOLDEN=1, review, commit")
    assert json.loads(path.read_text()) == json.loads(text), f"{path.name} changed (ASSAY_UPDATE_GOLDEN=1 to accept)"


def q(x: str) -> str:
    return '"' + x + '"'


def profile(name, cols, rows, distinct, lo=None, hi=None, nulls=None, avg_len=None):
    t = TableInfo(schema="main", name=name, row_count=rows, columns=[ColumnInfo(name=n, type=ty) for n, ty in cols])
    return Profile(table=t, rows=rows, distinct=distinct, lo=lo or {}, hi=hi or {}, nulls=nulls or {},
                   avg_len=avg_len or {})


def plan(profiles, goal="", keywords=()):
    pl = Planner([p.table for p in profiles], q, list(keywords), goal=goal)
    return [{"kind": pr.kind, "sql": pr.sql} for pr in pl.plan({p.table.fqn: p for p in profiles})]


# ---------------------------------------------------------------- planner


def test_planner_flights_integer_date_parts_and_hhmm_clock():
    p = profile("flights", [("year", "BIGINT"), ("month", "BIGINT"), ("day", "BIGINT"), ("sched_dep_time", "BIGINT"),
                            ("dep_delay", "DOUBLE"), ("carrier", "VARCHAR")], 300_000,
                {"year": 1, "month": 12, "day": 31, "sched_dep_time": 1000, "dep_delay": 500, "carrier": 16},
                lo={"year": 2013, "month": 1, "day": 1, "sched_dep_time": 106, "dep_delay": -43},
                hi={"year": 2013, "month": 12, "day": 31, "sched_dep_time": 2359, "dep_delay": 1301})
    check("planner_flights", plan([p], goal="departure delays by carrier", keywords=["delay", "carrier"])[:6])


def test_planner_tpch_keys_and_comments():
    orders = profile("orders", [("o_orderkey", "BIGINT"), ("o_custkey", "BIGINT"), ("o_orderstatus", "VARCHAR"),
                                ("o_totalprice", "DECIMAL(15,2)"), ("o_orderdate", "DATE"), ("o_comment", "VARCHAR")],
                     150_000, {"o_orderkey": 150_000, "o_custkey": 10_000, "o_orderstatus": 3, "o_totalprice": 149_000,
                               "o_orderdate": 2400, "o_comment": 149_000},
                     lo={"o_totalprice": 800.0}, hi={"o_totalprice": 500_000.0}, avg_len={"o_comment": 48.0})
    customer = profile("customer", [("c_custkey", "BIGINT"), ("c_mktsegment", "VARCHAR"), ("c_acctbal", "DECIMAL(15,2)")],
                       15_000, {"c_custkey": 15_000, "c_mktsegment": 5, "c_acctbal": 14_000})
    probes = plan([orders, customer])
    check("planner_tpch", probes[:8])
    assert not any('avg("o_orderkey")' in p["sql"] or 'avg("o_custkey")' in p["sql"] for p in probes)
    assert not any('"o_comment"' in p["sql"] and "GROUP BY" in p["sql"] for p in probes)


# ---------------------------------------------------------------- detectors


def wording(cands):
    return [{"kind": c.kind, "name": c.name, "description": c.description, "count_sql": c.count_sql} for c in cands]


def test_detector_group_effect_wording():
    df = pd.DataFrame({"carrier": ["AA", "EV", "US", "UA"], "n": [3000, 5000, 2000, 6000],
                       "nn_dep_delay": [2900, 4800, 1990, 5900], "avg_dep_delay": [8.6, 20.0, 3.8, 12.1],
                       "sd_dep_delay": [40.0, 45.0, 30.0, 40.0]})
    check("detector_group_effect", wording(D.group_effects(df, "carrier", {}, 4, "flights", REF)))


def test_detector_season_wording():
    df = pd.DataFrame({"hour_of_day": [5, 8, 12, 17, 20], "n": [500] * 5, "avg_dep_delay": [1.0, 4.0, 9.0, 21.0, 24.0],
                       "sd_dep_delay": [20.0] * 5})
    meta = {"calendar": "hour", "expr": 'CAST(floor("sched_dep_time" / 100) AS INTEGER)'}
    check("detector_season", wording(D.group_effects(df, "hour_of_day", meta, 5, "flights", REF)))


def test_detector_status_switch_wording():
    df = pd.DataFrame({"value": ["F", "O"], "first_at": pd.to_datetime(["1992-01-02", "1995-06-18"]),
                       "last_at": pd.to_datetime(["1995-06-17", "1998-12-01"]), "n": [299_856, 300_716]})
    out = D.status_switch(df, {"dim": "l_linestatus", "time": "l_shipdate"}, 6, "lineitem", REF)
    check("detector_status_switch", wording(out))
    # statuses that overlap over the period are the business, not an artifact
    df["first_at"] = pd.to_datetime(["1992-01-02", "1992-03-01"])
    assert D.status_switch(df, {"dim": "l_linestatus", "time": "l_shipdate"}, 6, "lineitem", REF) == []


def test_planner_incidents_label_key_and_crosstab_wording():
    """caller_id holds six callers' names over 500 incidents: a segment (breakdown, monthly series), not a key;
    sys_id (one value a row) stays an identifier."""
    p = profile("incidents", [("number", "VARCHAR"), ("sys_id", "VARCHAR"), ("caller_id", "VARCHAR"),
                              ("category", "VARCHAR"), ("opened_at", "TIMESTAMP"), ("closed_at", "TIMESTAMP")], 500,
                {"number": 500, "sys_id": 500, "caller_id": 6, "category": 5, "opened_at": 500, "closed_at": 490},
                avg_len={"number": 13.0, "sys_id": 32.0, "caller_id": 10.0, "category": 8.0})
    probes = plan([p], goal="incidents raised by callers", keywords=["caller", "incidents"])
    check("planner_incidents", [x for x in probes if '"caller_id"' in x["sql"]][:6])
    assert "caller_id" in p.dims() and "sys_id" not in p.dims()
    assert not any(x["sql"].startswith('SELECT "sys_id"') for x in probes)
    rows = [("Database", "Database", 60), ("Database", "Service Desk", 40), ("Hardware", "Service Desk", 80),
            ("Hardware", "Network", 20), ("Network", "Network", 55), ("Network", "Service Desk", 45)]
    df = pd.DataFrame(rows, columns=["category", "assignment_group", "n"])
    check("detector_crosstab", wording(D.crosstab_concentration(df, {"dims": ["category", "assignment_group"]}, 3,
                                                                "incidents", REF)))


def test_detector_spike_wording():
    """Hardware incidents: 44 and 52 in two months against about 8 in the others, then back (a spike, session 8)."""
    ys = {"Hardware": [8, 10, 10, 5, 4, 7, 44, 52, 4, 7, 10, 9, 12], "Network": [6, 2, 5, 4, 5, 5, 5, 10, 7, 6, 10, 5, 8]}
    months = [pd.Timestamp("2023-01-01") + pd.DateOffset(months=i) for i in range(13)]
    df = pd.DataFrame([(m, seg, v) for seg, y in ys.items() for m, v in zip(months, y)], columns=["month", "category", "n"])
    out = D.segment_series_changes(df, {"dim": "category", "time": "opened_at", "measure": "n", "trend": True}, 4,
                                   "incidents", REF)
    check("detector_spike", wording(out))


def test_detector_outcome_share_wording():
    """Expenses by department and state: IT's Declined rate (44%) against about 6% elsewhere (session 10)."""
    rows = [("Customer Support", "Processed", 187), ("Customer Support", "Declined", 16), ("Customer Support", "Pending", 40),
            ("Sales", "Processed", 87), ("Sales", "Declined", 6), ("Sales", "Pending", 20),
            ("IT", "Processed", 16), ("IT", "Declined", 19), ("IT", "Pending", 5),
            ("Finance", "Processed", 40), ("Finance", "Declined", 3), ("Finance", "Pending", 8)]
    df = pd.DataFrame(rows, columns=["department", "state", "n"])
    check("detector_outcome_share", wording(D.funnel_outliers(df, {"dim": "department", "event": "state"}, 3,
                                                              "expenses", REF)))


def test_detector_bracket_wording():
    """Processing time by quarter of the expenses ranked by amount: rising bracket after bracket (session 10)."""
    df = pd.DataFrame({"bracket": [1, 2, 3, 4], "lo": [101, 1218, 2625, 4969], "hi": [1214, 2584, 4949, 8919],
                       "n": [125] * 4, "nn": [110, 108, 112, 105], "mean": [3.2, 7.4, 14.6, 26.4],
                       "sd": [2.0, 3.1, 5.0, 8.2]})
    meta = {"by": "amount", "measure": "processing_time_days", "label": "processing time"}
    check("detector_bracket", wording(D.bracket_effects(df, meta, 7, "expenses", REF)))
    df["mean"] = [10.8, 10.2, 10.9, 10.5]
    df["sd"] = [9.0, 9.0, 9.0, 9.0]
    assert [c.name for c in D.bracket_effects(df, meta, 7, "expenses", REF)] == [
        "The average processing time is uniform across amount brackets"]
