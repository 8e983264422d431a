"""Which column says what happened to a row, and which outcome rates are findings. From a judge's warehouses of its
own design (session 28): an outpatient clinic's appointments have a visit_type (new_patient, follow_up, telehealth)
and a status (completed, no_show, cancelled); the planner took visit_type for an event log and reported
"telehealth per new_patient" as a conversion rate, while no_show was never measured. Shipments returned at 11%
for enterprise customers against 3% elsewhere were under the ten-point rule."""

from __future__ import annotations

import duckdb
import pandas as pd
import pytest

from assay.stats import detectors as D
from assay.stats.detectors.funnels import is_outcome
from assay.stats.planner import Planner
from assay.warehouse.duckdb import DuckDBWarehouse
from tests.unit.test_planner import profiles_of


@pytest.fixture(scope="module")
def clinic(tmp_path_factory):
    path = tmp_path_factory.mktemp("clinic") / "c.duckdb"
    con = duckdb.connect(str(path))
    con.execute("""
        CREATE TABLE clinics AS SELECT i AS clinic_id, 'clinic ' || i AS clinic_name,
            ['north', 'south', 'east', 'west'][1 + i % 4] AS region FROM range(1, 9) t(i);
        CREATE TABLE patients AS SELECT i AS patient_id, ['F', 'M'][1 + i % 2] AS sex,
            ['public', 'private', 'self_pay'][1 + i % 3] AS insurance_type, 1 + i % 8 AS home_clinic_id
            FROM range(1, 3001) t(i);
        CREATE TABLE appointments AS SELECT i AS appointment_id, 1 + (i * 7) % 3000 AS patient_id,
            ['new_patient', 'follow_up', 'telehealth'][1 + i % 3] AS visit_type,
            ['phone', 'online', 'walk_in'][1 + (i // 3) % 3] AS booking_channel,
            CASE WHEN i % 10 = 0 THEN 'no_show' WHEN i % 13 = 0 THEN 'cancelled' ELSE 'completed' END AS status,
            (i * 11) % 60 AS lead_time_days, TIMESTAMP '2025-01-01' + INTERVAL (i % 400) DAY AS scheduled_for
            FROM range(1, 20001) t(i);
    """)
    con.close()
    wh = DuckDBWarehouse(str(path))
    yield wh
    wh.close()


def test_a_state_column_is_the_event_and_a_kind_of_thing_is_a_dimension(clinic):
    pl = Planner(clinic.list_tables(), clinic.quote, ["appointment", "miss"])
    profiles = profiles_of(pl, clinic)
    assert profiles["main.appointments"].event_col() == "status"
    assert profiles["main.patients"].event_col() is None  # insurance_type: a kind of thing, no medicaid per medicare
    probes = pl.plan(profiles)
    funnels = [pr for pr in probes if pr.kind == "funnel" and pr.table == "main.appointments"]
    assert funnels and all(pr.meta.event == "status" for pr in funnels)
    own = {pr.meta.dim for pr in funnels if pr.meta.join is None}
    assert own == {"visit_type", "booking_channel"}  # every few-valued dimension, not the three most relevant
    # the measures by state stay a breakdown ("no_show has a much higher average lead_time_days")
    assert any(pr.kind == "breakdown" and pr.meta.dim == "status" for pr in probes)


def test_an_event_table_keeps_its_bare_type_column_as_its_steps(tmp_path):
    path = tmp_path / "e.duckdb"
    con = duckdb.connect(str(path))
    con.execute("""CREATE TABLE events AS SELECT i AS event_id, 1 + i % 500 AS user_id,
                   ['view', 'cart', 'purchase'][1 + i % 3] AS type, ['ios', 'web'][1 + i % 2] AS platform,
                   TIMESTAMP '2025-01-01' + INTERVAL (i) HOUR AS at FROM range(1, 5001) t(i)""")
    con.close()
    wh = DuckDBWarehouse(str(path))
    try:
        pl = Planner(wh.list_tables(), wh.quote, [])
        assert profiles_of(pl, wh)["main.events"].event_col() == "type"
    finally:
        wh.close()


def test_outcomes_that_end_a_row_badly_are_recognised():
    for v in ("no_show", "No-Show", "missed", "returned", "disputed", "chargeback", "expired", "bounced", "overdue",
              "denied", "voided"):
        assert is_outcome(v), v
    for v in ("scheduled", "in_transit", "pending", "new"):
        assert not is_outcome(v), v


def test_a_rare_outcome_twice_as_common_in_one_segment_is_a_finding():
    from assay.stats.detectors.funnels import material_share_gap

    assert material_share_gap(0.112, 0.03)          # 3% -> 11%: 8 points, 3.7 times
    assert not material_share_gap(0.05, 0.03)       # 2 points
    assert not material_share_gap(0.22, 0.15)       # 7 points, not twice
    assert material_share_gap(0.68, 0.81)           # a common outcome's fall: 13 points
    assert material_share_gap(0.90, 0.96)           # ... or its complement doubling (4% -> 10%)
    df = pd.DataFrame([(seg, st, n) for seg, rate in (("enterprise", 0.112), ("smb", 0.03), ("mid_market", 0.031))
                       for st, n in (("returned", int(4000 * rate)), ("delivered", 4000 - int(4000 * rate)))],
                      columns=["segment", "status", "n"])
    out = D.funnel_outliers(df, {"dim": "segment", "event": "status"}, 1, "shipments", '"main"."shipments"')
    assert [(c.segment, c.measure) for c in out] == [("segment=enterprise", "returned_rate")], [c.name for c in out]
    assert "significantly higher returned rate" in out[0].name


def test_a_common_outcomes_fall_is_measured_on_its_complement():
    """Eastside's completed rate 68% against 81% elsewhere: 13 points, 16% of 81 but 68% of the 19% not completed."""
    rows = []
    for region, completed, no_show in (("Eastside", 0.68, 0.20), ("Central", 0.81, 0.09), ("Northside", 0.80, 0.09),
                                       ("Westside", 0.81, 0.09)):
        n = 10_000
        rows += [(region, "completed", int(n * completed)), (region, "no_show", int(n * no_show)),
                 (region, "cancelled", n - int(n * completed) - int(n * no_show))]
    df = pd.DataFrame(rows, columns=["region", "status", "n"])
    out = D.funnel_outliers(df, {"dim": "region", "event": "status"}, 1, "appointments", '"main"."appointments"')
    found = {(c.segment, c.measure) for c in out}
    assert ("region=Eastside", "no_show_rate") in found and ("region=Eastside", "completed_rate") in found, found
    assert all(c.segment == "region=Eastside" for c in out)


def test_a_sparse_tail_of_late_dated_rows_is_left_out_of_every_series_and_said_once():
    """68 invoices dated up to four months past the rest (36, 20, 9, 3 a month after months of 2,500) made every
    payment method's failure rate swing, so paypal's real rise from 2026-06-01 was never seen, and made "the total
    amount for finance decreased from 2026-12-01" four times over (a judge's SaaS warehouse, session 28)."""
    from assay.stats.detectors.significance import complete_length

    assert complete_length([2500] * 20 + [36, 20, 9, 3], 7) == 20
    assert complete_length([2500] * 20 + [1100], 7) == 20           # a partial last month, as before
    assert complete_length([2500] * 20 + [1000] * 6, 7) == 25       # a fall to 40% for months stays (but its last)
    assert complete_length([2500] * 5 + [3], 7) == 6                # too short to judge
    months = pd.date_range("2020-01-01", periods=28, freq="MS")
    rows = []
    for i, mo in enumerate(months):
        tail = i >= 24
        for method, fail in (("card", 0.05), ("bank", 0.05), ("paypal", 0.16 if mo >= pd.Timestamp("2021-06-01") else 0.05)):
            total = [9, 5, 2, 1][i - 24] if tail else 800
            failed = (1 if method == "paypal" and i in (24, 26) else 0) if tail else round(total * fail)
            rows += [(mo, method, "failed", failed), (mo, method, "paid", total - failed)]
    df = pd.DataFrame(rows, columns=["month", "payment_method", "status", "n"])
    out = D.rate_series_changes(df, {"dim": "payment_method", "event": "status", "time": "invoice_date"}, 1,
                                "invoices", '"main"."invoices"')
    assert [c.name for c in out] == ["The failed rate of paypal invoices rose from 2021-06-01"], [c.name for c in out]
    whole = df.groupby("month", as_index=False)["n"].sum()
    found = D.series_changes(whole, {"kind": "series", "time": "invoice_date"}, 2, "invoices", '"main"."invoices"')
    tail = [c for c in found if c.kind == "data_quality"]
    assert [c.name for c in tail] == ["51 rows of invoices are dated after the last full month (2021-12)"]
    assert tail[0].affected == 51 and tail[0].count_sql.endswith("\"invoice_date\" >= TIMESTAMP '2022-01-01'")
    assert "from 2022-01 to 2022-04" in tail[0].description and "not happened" not in tail[0].description
    # one thin last month is data that ends a few days into it; the same month in the future is no such thing
    assert not [c for c in D.series_changes(whole.iloc[:25], {"kind": "series", "time": "invoice_date"}, 2, "invoices",
                                            "r") if c.kind == "data_quality"]
    ahead = whole.iloc[:25].copy()
    ahead["month"] = pd.date_range(end=pd.Timestamp.now() + pd.DateOffset(months=2), periods=25, freq="MS")
    future = [c for c in D.series_changes(ahead, {"kind": "series", "time": "invoice_date"}, 2, "invoices", "r")
              if c.kind == "data_quality"]
    assert len(future) == 1 and "are dated in the future" in future[0].name, [c.name for c in future]


def test_a_tables_own_key_repeated_in_a_few_rows_is_a_finding():
    from assay.stats.detectors.quality import quality_from_profile

    row = {"row_count": 40_400, "invoice_id__distinct": 40_000, "invoice_id__nulls": 0,
           "account_id__distinct": 6_000, "account_id__nulls": 0}
    out = quality_from_profile(row, None, 1, "invoices", '"main"."invoices"', ["invoice_id", "account_id"])
    assert [c.name for c in out] == ["400 rows of invoices repeat another row's invoice_id"]
    assert out[0].count_sql == 'SELECT count("invoice_id") - count(DISTINCT "invoice_id") AS count FROM "main"."invoices"'
    # a key that is mostly repeated is a column of another table's keys, not this table's own: no finding
    row = {"row_count": 40_400, "invoice_id__distinct": 30_000, "invoice_id__nulls": 0}
    assert quality_from_profile(row, None, 1, "invoices", '"main"."invoices"', ["invoice_id"]) == []


def test_an_outcomes_rate_is_compared_with_the_goal_as_the_tables_rows_in_it():
    from assay.stats.analyst import measure_text

    def cand(measure, table="appointments"):
        return D.Candidate(kind="outlier_segment", name="x", description="", table=table, step=1, effect=0.5,
                           p_value=1e-6, count_sql=None, measure=measure)

    assert measure_text(cand("no_show_rate")) == "appointments no show"
    assert measure_text(cand("failed_rate", "invoices")) == "invoices failed"
    assert measure_text(cand("avg_lead_time_days")) == "lead time days"


def test_a_state_breakdown_says_the_measures_by_state_not_how_rows_split_and_a_mix_is_its_own_fact():
    from assay.stats.analyst import _dedupe

    df = pd.DataFrame({"status": ["completed", "no_show", "cancelled"], "n": [30_000, 4_000, 3_000],
                       "nn_lead_time_days": [30_000, 4_000, 3_000], "avg_lead_time_days": [11.0, 21.0, 12.0],
                       "sd_lead_time_days": [6.0, 6.0, 6.0]})
    plain = D.detect_probe({"kind": "breakdown", "table": "main.appointments", "dim": "status"}, df.copy(), 1,
                           lambda f: f)
    state = D.detect_probe({"kind": "breakdown", "table": "main.appointments", "dim": "status", "state": True},
                           df.copy(), 1, lambda f: f)
    assert any(c.kind == "dominant_segment" for c in plain)
    assert state and not any(c.kind == "dominant_segment" or c.measure in ("", "n") for c in state)
    assert any(c.measure == "avg_lead_time_days" and c.segment == "status=no_show" for c in state)
    # "Completed goals have a higher share of Critical priority" and "Completed goals' average percent complete" are
    # two facts about one segment
    mix = D.Candidate(kind="crosstab", name="Completed goals have a significantly higher share of priority Critical",
                      description="", table="goals", step=2, effect=0.3, p_value=1e-6, count_sql="q1",
                      segment="state=Completed", area_text="goals state Completed priority Critical")
    level = D.Candidate(kind="mean_outlier", name="Completed has a higher average percent complete", description="",
                        table="goals", step=1, effect=0.5, p_value=1e-9, count_sql="q2", segment="state=Completed",
                        measure="avg_percent_complete")
    assert len(_dedupe([level, mix])) == 2


def test_a_question_about_a_measure_runs_its_correlations_with_the_first_probes(tmp_path):
    """A judge's logistics goal "what drives shipping cost?" ended its 40 steps before the correlation probe, and
    the weight and distance that drive the cost were never said."""
    path = tmp_path / "s.duckdb"
    con = duckdb.connect(str(path))
    con.execute("""CREATE TABLE shipments AS SELECT i AS shipment_id, ['DHL', 'UPS', 'GLS'][1 + i % 3] AS carrier,
                   1.0 + i % 40 AS weight_kg, 10.0 + (i * 7) % 900 AS distance_km,
                   5.0 + 0.1 * (i % 40) + 0.01 * ((i * 7) % 900) AS shipping_cost_eur FROM range(1, 6001) t(i)""")
    con.close()
    wh = DuckDBWarehouse(str(path))
    try:
        def correlation(goal):
            pl = Planner(wh.list_tables(), wh.quote, ["shipping", "cost"], goal=goal)
            return next(pr for pr in pl.plan(profiles_of(pl, wh)) if pr.kind == "correlation")

        assert correlation("What drives shipping cost?").meta.core > 0
        assert correlation("").meta.core == 0.0
    finally:
        wh.close()


def test_whether_a_row_was_late_is_a_rate_the_plan_computes_from_its_due_and_actual_dates(tmp_path):
    """A judge's shipments: SwiftFreight delivered after the promised date 32% of the time against 9% for the other
    carriers; no column said "late", so no probe compared the two dates. The rate counts only the rows with both
    dates (an undelivered shipment is not on time), and the affected count is the carrier's late shipments, not all
    of its shipments."""
    path = tmp_path / "l.duckdb"
    con = duckdb.connect(str(path))
    con.execute("""CREATE TABLE shipments AS SELECT i AS shipment_id, 1 + i % 2000 AS order_id,
                   ['SwiftFreight', 'DHL', 'UPS', 'GLS', 'DPD'][1 + i % 5] AS carrier,
                   DATE '2025-01-01' + INTERVAL (i % 300) DAY AS ship_date,
                   DATE '2025-01-04' + INTERVAL (i % 300) DAY AS promised_date,
                   CASE WHEN i % 50 = 0 THEN NULL
                        ELSE DATE '2025-01-01' + INTERVAL (i % 300) DAY + INTERVAL (CASE WHEN i % 5 = 0
                             THEN (CASE WHEN (i // 5) % 10 < 3 THEN 5 ELSE 2 END)
                             ELSE (CASE WHEN (i // 5) % 10 < 1 THEN 5 ELSE 2 END) END) DAY END AS delivered_date,
                   5.0 + i % 17 AS shipping_cost_eur FROM range(0, 10000) t(i)""")
    con.close()
    wh = DuckDBWarehouse(str(path))
    try:
        pl = Planner(wh.list_tables(), wh.quote, ["late", "delivery"])
        profiles = profiles_of(pl, wh)
        assert profiles["main.shipments"].flags() == {"late": ["promised_date", "delivered_date"]}
        probe = next(pr for pr in pl.plan(profiles) if pr.kind == "breakdown" and pr.meta.dim == "carrier")
        assert '"late_rate"' in probe.sql and probe.meta.flags == {"late": ["promised_date", "delivered_date"]}
        df = wh.query(probe.sql, row_cap=100, timeout_s=30).table.to_pandas()
        stored = {"kind": probe.kind, "table": probe.table, **probe.meta.to_dict()}
        out = [c for c in D.detect_probe(stored, df, 1, lambda f: '"main"."shipments"') if c.measure == "late_rate"]
        assert [c.name for c in out] == ["SwiftFreight has a much higher late rate than other carrier values"]
        assert "delivered_date > promised_date" in out[0].description
        late = wh.query(out[0].count_sql, row_cap=10, timeout_s=30).table.to_pylist()[0]["count"]
        truth = wh.query("""SELECT count(DISTINCT order_id) AS c FROM shipments WHERE carrier = 'SwiftFreight'
                            AND delivered_date > promised_date""", row_cap=10, timeout_s=30).table.to_pylist()
        assert late == truth[0]["c"] > 0
    finally:
        wh.close()


def test_a_measure_the_same_for_every_value_reads_as_one_number():
    from assay.stats.detectors.segments import _span

    assert _span(9.0, 9.0, 5, "visit type") == "is 9 for each of the 5 visit type values"
    assert _span(13.2, 13.5, 4, "channel") == "ranges only from 13.2 to 13.5 over 4 channel values"


def test_late_and_impossible_values_from_how_columns_are_named():
    """A second judge's warehouses (session 28): deliveries with promised_minutes and actual_minutes (late is a
    comparison of two numbers of one unit), meters with negative kwh_consumed, claims settled before the incident."""
    from assay.models import ColumnInfo, TableInfo
    from assay.stats.planner import _NONNEG, due_pair, main_interval

    def table(*cols):
        return TableInfo(schema="main", name="t", row_count=10, columns=[ColumnInfo(name=n, type=ty) for n, ty in cols])

    assert due_pair(table(("promised_minutes", "INTEGER"), ("actual_minutes", "INTEGER"), ("tip_eur", "DOUBLE"))) == \
        ("promised_minutes", "actual_minutes")
    assert due_pair(table(("promised_minutes", "INTEGER"), ("actual_hours", "INTEGER"))) is None  # two units
    assert all(_NONNEG.search(c) for c in ("kwh_consumed", "weight_kg", "distance_km"))
    assert main_interval(table(("incident_date", "DATE"), ("settled_date", "DATE")))[:2] == \
        ("incident_date", "settled_date")


def test_what_a_review_found_in_the_sessions_rules():
    """A review of the session's diff: each of these went wrong before its fix."""
    from assay.models import ColumnInfo, TableInfo
    from assay.stats.detectors.funnels import material_share_gap
    from assay.stats.detectors.significance import complete_length
    from assay.stats.planner import Profile, due_pair

    def table(name, *cols):
        return TableInfo(schema="main", name=name, row_count=10,
                         columns=[ColumnInfo(name=n, type=ty) for n, ty in cols])

    # a rare outcome at half the others' rate is as much a finding as at twice (a carrier with half the returns)
    assert material_share_gap(0.04, 0.08) and material_share_gap(0.92, 0.96)
    # a fall to 6% of a typical month is a collapse, not a tail of late-dated rows (its last month, partial, goes)
    assert complete_length([1000] * 24 + [60, 55, 50], 7) == 26
    # a cost over its estimate is not lateness; "translation_date" is due by nothing; the last delivered column is
    # the delivery (the carrier's hand-over comes before it)
    assert due_pair(table("jobs", ("estimated_cost", "DOUBLE"), ("actual_cost", "DOUBLE"))) is None
    assert due_pair(table("docs", ("translation_date", "DATE"), ("delivered_at", "TIMESTAMP"))) is None
    assert due_pair(table("orders", ("order_estimated_delivery_date", "TIMESTAMP"),
                          ("order_delivered_carrier_date", "TIMESTAMP"),
                          ("order_delivered_customer_date", "TIMESTAMP"))) == \
        ("order_estimated_delivery_date", "order_delivered_customer_date")
    # an event log's steps before its rows' status
    log = Profile(table=table("events", ("event_type", "VARCHAR"), ("status", "VARCHAR"), ("user_id", "INTEGER")),
                  rows=5000, distinct={"event_type": 3, "status": 2, "user_id": 400})
    assert log.event_col() == "event_type"


def test_late_on_a_due_day_is_a_later_day(tmp_path):
    """A shipment due on a DATE and delivered at 10:00 that day is on time: compared as timestamps it was late."""
    path = tmp_path / "d.duckdb"
    con = duckdb.connect(str(path))
    con.execute("""CREATE TABLE deliveries AS SELECT i AS delivery_id, ['a', 'b', 'c'][1 + i % 3] AS courier,
                   CAST(DATE '2025-01-01' + INTERVAL (i % 200) DAY AS DATE) AS promised_date,
                   TIMESTAMP '2025-01-01 10:00' + INTERVAL (i % 200) DAY + INTERVAL (CASE WHEN i % 3 = 0 AND i % 2 = 0
                   THEN 1 ELSE 0 END) DAY AS delivered_at FROM range(0, 6000) t(i)""")
    con.close()
    wh = DuckDBWarehouse(str(path))
    try:
        pl = Planner(wh.list_tables(), wh.quote, ["late"])
        profiles = profiles_of(pl, wh)
        assert profiles["main.deliveries"].flags() == {"late": ["promised_date", "delivered_at", "date"]}
        probe = next(pr for pr in pl.plan(profiles) if pr.kind == "breakdown" and pr.meta.dim == "courier")
        rates = {r["courier"]: r["late_rate"] for r in wh.query(probe.sql, row_cap=10, timeout_s=30).table.to_pylist()}
        assert rates == {"a": 0.5, "b": 0.0, "c": 0.0}
        from assay.stats.detectors.countsql import Source

        src = Source('"main"."deliveries"', None, probe.meta.flags)  # what a late rate's affected count reads
        sql = src.count("\"courier\" = 'a'", src.fact("late"))
        assert "CAST(" in sql and wh.query(sql, row_cap=10, timeout_s=30).table.to_pylist()[0]["count"] == 1000
    finally:
        wh.close()


def test_a_series_with_zone_aware_months_or_a_row_without_a_month_is_read():
    """The review: a timestamptz column's months are zone-aware (comparing them with a naive "now" raised, and the
    whole series probe was lost); a row of rows without a date sorted last and read as a month."""
    months = pd.date_range("2023-01-01", periods=24, freq="MS", tz="UTC")
    df = pd.DataFrame({"month": list(months) + [pd.Timestamp("2025-01-01", tz="UTC")], "n": [1000] * 24 + [20]})
    out = D.series_changes(df, {"kind": "series", "time": "created_at"}, 1, "orders", '"main"."orders"')
    assert all(c.kind != "data_quality" for c in out)  # one thin last month: data that ends early in it
    df = pd.DataFrame({"month": list(months.tz_localize(None)) + [pd.NaT], "n": [1000] * 24 + [30]})
    assert D.series_changes(df, {"kind": "series", "time": "created_at"}, 1, "orders", '"main"."orders"') == []
