"""Statistical analyst, session 10 (#17): the rate of an outcome state (Declined, Completed) by segment, as a share
of the segment's rows, tested for spread (chi-square, Cramér's V) and named for the segments apart from the rest;
several segments apart in one direction are merged before the report is capped."""

from __future__ import annotations

import duckdb
import numpy as np
import pandas as pd
import pytest

from assay.digest import build_compact_result, to_frame
from assay.explore.executor import Executor
from assay.models import ExplorationStep, Insight, MetricKind, StepAction, ValidationStatus, WarehouseConfig
from assay.stats import detectors as D
from assay.stats.analyst import merge_segment_outliers
from assay.stats.claims import candidate_claims
from assay.stats.detectors.funnels import funnel_outliers, is_outcome, outcome_shares
from assay.validate.verify import Verifier
from assay.warehouse.duckdb import DuckDBWarehouse
from assay.warehouse.guard import SQLGuard

REF = '"main"."expenses"'
META = {"dim": "department", "event": "state"}


def frame(counts: dict[str, dict[str, int]], dim: str = "department", ev: str = "state") -> pd.DataFrame:
    return pd.DataFrame([(d, s, n) for d, row in counts.items() for s, n in row.items()], columns=[dim, ev, "n"])


EXPENSES = {  # IT: 44% declined against about 6% elsewhere; Pending and Submitted are stages, not outcomes
    "Customer Support": {"Processed": 187, "Declined": 16, "Pending": 40, "Submitted": 24},
    "Sales": {"Processed": 87, "Declined": 6, "Pending": 20, "Submitted": 9},
    "IT": {"Processed": 16, "Declined": 19, "Pending": 5, "Submitted": 3},
    "Finance": {"Processed": 40, "Declined": 3, "Pending": 8, "Submitted": 5},
}


def test_outcome_values_are_told_from_stages():
    assert all(is_outcome(v) for v in ("Declined", "Completed", "failed", "Closed", "Resolved", "refunded"))
    assert not any(is_outcome(v) for v in ("Pending", "In Progress", "Planned", "Submitted", "New", "Open"))


def test_a_state_column_gets_outcome_rates_not_one_state_per_another():
    out = funnel_outliers(frame(EXPENSES), META, 3, "expenses", REF)
    names = [c.name for c in out]
    assert "IT expenses have a significantly higher Declined rate than other department values" in names
    assert "IT expenses have a significantly lower Processed rate than other department values" in names
    assert not any(" per " in n or "Pending" in n or "Submitted" in n for n in names)  # stages get no rate
    c = next(c for c in out if "Declined" in c.name)
    assert c.kind == D.Kind.OUTLIER_SEGMENT and c.segment == "department=IT" and c.measure == "Declined_rate"
    assert c.count_sql == f"SELECT count(*) AS count FROM {REF} WHERE \"department\" = 'IT' AND \"state\" = 'Declined'"
    assert "44.2% of the 43 expenses with department IT are Declined" in c.description
    assert "Cramér's V" in c.description and c.p_value < 1e-6
    # nothing else stands apart: Customer Support, Sales and Finance hold the typical rates
    assert {c.segment for c in out} == {"department=IT"}


def test_an_event_log_keeps_its_step_conversions():
    """event_type is a log of steps (view, cart, purchase), not one state per row: pairs as before."""
    counts = {
        p: {"view": 1000, "add_to_cart": 300, "purchase": 150 if p != "android" else 30}
        for p in ("android", "ios", "web", "tv")
    }
    out = funnel_outliers(
        frame(counts, "platform", "event_type"),
        {"dim": "platform", "event": "event_type"},
        2,
        "events",
        '"main"."events"',
    )
    assert out and all(" per " in c.name for c in out)
    # a status column of codes nobody can read as outcomes keeps the pairs too
    codes = {d: {"A": 100, "B": 50 if d != "x" else 5} for d in ("x", "y", "z", "w")}
    out = funnel_outliers(frame(codes, "region", "status_cd"), {"dim": "region", "event": "status_cd"}, 2, "t", REF)
    assert out and all(" per " in c.name for c in out)


def test_a_segment_apart_only_because_another_pulls_the_rest_is_not_named():
    # Travel 42% declined; Assets 6% and Services 8%: Assets is below the pooled rest only because of Travel
    counts = {
        "Travel": {"Declined": 61, "Processed": 85},
        "Assets": {"Declined": 17, "Processed": 264},
        "Services": {"Declined": 4, "Processed": 43},
        "Misc": {"Declined": 3, "Processed": 60},
    }
    out = outcome_shares(frame(counts, "category"), {"dim": "category", "event": "state"}, 3, "expenses", REF)
    assert {c.segment for c in out} == {"category=Travel"}


def test_outcome_rates_rarely_fire_on_noise():
    rng = np.random.default_rng(10)
    hits = 0
    for _ in range(300):
        counts = {
            f"d{i}": {"Declined": int(k), "Processed": 100 - int(k)} for i, k in enumerate(rng.binomial(100, 0.1, 6))
        }
        hits += bool(outcome_shares(frame(counts), META, 1, "expenses", REF))
    assert hits / 300 <= 0.01


def test_rare_or_near_universal_outcomes_get_no_rate():
    counts = {d: {"Processed": 500, "Declined": 1 if d != "IT" else 4} for d in ("IT", "HR", "Sales", "Finance")}
    assert outcome_shares(frame(counts), META, 1, "expenses", REF) == []


def test_an_outcome_rate_is_a_claim_the_warehouse_rederives(tmp_path):
    path = tmp_path / "w.duckdb"
    con = duckdb.connect(str(path))
    rows = [(d, s) for d, row in EXPENSES.items() for s, n in row.items() for _ in range(n)]
    con.execute("CREATE TABLE expenses (department VARCHAR, state VARCHAR)")
    con.executemany("INSERT INTO expenses VALUES (?, ?)", rows)
    con.close()
    wh = DuckDBWarehouse(str(path))
    try:
        sql = "SELECT department, state, count(*) AS n FROM expenses GROUP BY 1, 2 ORDER BY 1, 2"
        table = wh.query(sql, row_cap=1000, timeout_s=30).table
        step = ExplorationStep(
            run_id="r",
            step=3,
            action=StepAction.query,
            purpose="funnel",
            query=sql,
            row_count=table.num_rows,
            digest=build_compact_result(table),
            probe={"kind": "funnel", "table": "main.expenses", **META},
        )
        c = next(c for c in outcome_shares(to_frame(table), META, 3, "expenses", REF) if "Declined" in c.name)
        claims = candidate_claims(c, step, to_frame(table), "duckdb")
        assert len(claims) == 1
        cl = claims[0]
        assert (
            cl.metric == MetricKind.rate and cl.measure == "Declined rate" and cl.segment_sql == "\"department\" = 'IT'"
        )
        assert cl.value == pytest.approx(19 / 43) and cl.baseline_value == pytest.approx(25 / 445)
        ex = Executor(
            wh,
            SQLGuard("duckdb", tables=wh.list_tables(), default_schema="main"),
            WarehouseConfig(kind="duckdb", settings={}),
            None,
        )
        ins = Insight(
            id="x-1",
            area="x",
            name=c.name,
            description=c.description,
            claims=claims,
            source_steps=[3],
            affected_count=19,
            verification_sql=c.count_sql.replace('"main".', ""),
        )
        v = Verifier(llm=None, executor=ex, steps={3: step}).verify(ins)
        assert v.status == ValidationStatus.confirmed, v.notes if hasattr(v, "notes") else v.__dict__
    finally:
        wh.close()


def test_segments_apart_in_one_direction_merge_into_one_outcome_finding():
    counts = {
        "Low": {"Completed": 82, "In Progress": 14},
        "Medium": {"Completed": 79, "In Progress": 14},
        "High": {"Completed": 22, "In Progress": 156},
        "Critical": {"Completed": 25, "In Progress": 158},
    }
    out = outcome_shares(frame(counts, "priority"), {"dim": "priority", "event": "state"}, 4, "goals", '"main"."goals"')
    merged, members = merge_segment_outliers(D.score(out))
    names = sorted(c.name for c in merged)
    assert names == [
        "High and Critical goals have a significantly lower Completed rate than other priority values",
        "Low and Medium goals have a significantly higher Completed rate than other priority values",
    ]
    up = next(c for c in merged if "higher" in c.name)
    assert "IN ('Low', 'Medium')" in up.count_sql and len(members[id(up)]) == 2


def months_frame(series: dict[str, list[float]], measure: str = "n") -> pd.DataFrame:
    months = [pd.Timestamp("2023-01-01") + pd.DateOffset(months=i) for i in range(len(next(iter(series.values()))))]
    return pd.DataFrame(
        [(m, seg, v) for seg, ys in series.items() for m, v in zip(months, ys)], columns=["month", "category", measure]
    )


def test_a_rise_shared_by_every_segment_is_said_once_as_uniform():
    rng = np.random.default_rng(7)
    base = {"Hardware": 20, "Network": 30, "Software": 25, "Database": 15}
    grow = {k: [v * (1 + 0.15 * i) + rng.normal(0, 0.05 * v) for i in range(12)] for k, v in base.items()}
    out = D.segment_series_changes(
        months_frame(grow),
        {"dim": "category", "time": "opened_at", "measure": "n", "trend": True},
        5,
        "incidents",
        '"main"."incidents"',
    )
    assert [c.name for c in out] == ["The increase in the number of incidents is uniform across category values"]
    assert out[0].kind == D.NO_EFFECT and "Cochran's Q" in out[0].description
    # one segment climbing alone is its own trend, and the rise is then not uniform
    alone = {
        k: ([v * (1 + 0.6 * i) for i in range(12)] if k == "Hardware" else [v + rng.normal(0, 1) for _ in range(12)])
        for k, v in base.items()
    }
    out = D.segment_series_changes(
        months_frame(alone),
        {"dim": "category", "time": "opened_at", "measure": "n", "trend": True},
        5,
        "incidents",
        '"main"."incidents"',
    )
    names = [c.name for c in out]
    assert "The number of incidents for Hardware is increasing over time" in names
    assert not any(n.startswith("The increase in") for n in names)


def test_slopes_that_differ_are_no_shared_trend():
    from assay.stats.detectors.significance import common_trend

    x = np.arange(12, dtype=float)
    same = [10 + 2 * x + np.sin(x + k) for k in range(4)]
    pooled, p, p_het = common_trend(same)
    assert pooled > 0 and p < 1e-6 and p_het > 0.2
    differ = [10 + 2 * x + np.sin(x), 10 + 0.1 * x + np.sin(x + 1), 10 + 4 * x + np.sin(x + 2), 10 - x + np.sin(x)]
    assert common_trend(differ)[2] < 0.01
    assert common_trend(same[:2]) is None  # two segments are a comparison, not a spread


def test_the_interval_is_probed_by_amount_bracket_and_the_sql_runs(tmp_path):
    from assay.models import ColumnInfo, TableInfo
    from assay.stats.planner import Planner, Profile

    cols = [
        ("number", "VARCHAR"),
        ("department", "VARCHAR"),
        ("state", "VARCHAR"),
        ("amount", "BIGINT"),
        ("opened_at", "TIMESTAMP"),
        ("processed_date", "TIMESTAMP"),
    ]
    t = TableInfo(
        schema="main", name="expenses", row_count=400, columns=[ColumnInfo(name=n, type=ty) for n, ty in cols]
    )
    p = Profile(
        table=t,
        rows=400,
        distinct={"number": 400, "department": 4, "state": 3, "amount": 390, "opened_at": 400, "processed_date": 300},
    )
    probes = [x for x in Planner([t], lambda c: '"' + c + '"', []).plan({t.fqn: p}) if x.kind == "bracket"]
    assert len(probes) == 1 and 'ntile(4) OVER (ORDER BY "amount")' in probes[0].sql
    con = duckdb.connect()
    con.execute("CREATE SCHEMA IF NOT EXISTS main")
    con.execute("""CREATE TABLE main.expenses AS SELECT 'E' || i AS number, 'D' || (i % 4) AS department,
                   'Processed' AS state, 100 + i * 20 AS amount, TIMESTAMP '2024-01-01' AS opened_at,
                   TIMESTAMP '2024-01-01' + INTERVAL (1 + i // 40) DAY AS processed_date FROM range(400) t(i)""")
    df = con.execute(probes[0].sql).df()
    out = D.bracket_effects(df, probes[0].meta, 9, "expenses", '"main"."expenses"')
    assert [c.name for c in out] == ["The average processing time rises across amount brackets"]
    assert con.execute(out[0].count_sql).fetchone()[0] == 100  # the top quarter of the rows


def test_no_bracket_probe_without_an_interval():
    """lineitem: quantity beside extended price (its product with the price) is a definition, not a finding."""
    from assay.models import ColumnInfo, TableInfo
    from assay.stats.planner import Planner, Profile

    cols = [("l_orderkey", "BIGINT"), ("l_quantity", "DOUBLE"), ("l_extendedprice", "DOUBLE"), ("l_shipdate", "DATE")]
    t = TableInfo(
        schema="main", name="lineitem", row_count=600_000, columns=[ColumnInfo(name=n, type=ty) for n, ty in cols]
    )
    p = Profile(
        table=t,
        rows=600_000,
        distinct={"l_orderkey": 150_000, "l_quantity": 50, "l_extendedprice": 500_000, "l_shipdate": 2500},
    )
    assert not [x for x in Planner([t], lambda c: '"' + c + '"', []).plan({t.fqn: p}) if x.kind == "bracket"]


def test_with_three_segments_the_one_pulled_below_the_rest_is_not_named():
    """ios fails far more often; android and web fail alike: android is below the pooled rest only because of ios."""
    counts = {
        "ios": {"failed": 300, "succeeded": 700},
        "android": {"failed": 40, "succeeded": 960},
        "web": {"failed": 55, "succeeded": 945},
    }
    out = outcome_shares(
        frame(counts, "platform", "status"), {"dim": "platform", "event": "status"}, 3, "purchases", REF
    )
    assert {c.segment for c in out} == {"platform=ios"}
    assert "ios purchases have a significantly higher failed rate than other platform values" in [c.name for c in out]


def test_two_segments_and_two_outcomes_are_one_finding():
    """ios against android, failed or succeeded: one comparison, said once by the higher failed rate."""
    counts = {"ios": {"failed": 870, "succeeded": 2836}, "android": {"failed": 143, "succeeded": 4778}}
    out = outcome_shares(
        frame(counts, "platform", "status"), {"dim": "platform", "event": "status"}, 3, "purchases", REF
    )
    assert [c.name for c in out] == ["ios purchases have a significantly higher failed rate than other platform values"]


def test_a_spread_closer_to_the_goal_than_its_host_is_not_folded_away():
    from assay.stats.analyst import fold_spreads_into_outliers

    def cands():
        host = D.Candidate(
            kind="mean_outlier",
            name="Oceania has a significantly higher average gdpPercap than other continent values",
            description="",
            table="gapminder",
            step=1,
            effect=0.9,
            p_value=1e-9,
            count_sql=None,
            segment="continent=Oceania",
            measure="avg_gdpPercap",
        )
        spread = D.Candidate(
            kind="group_effect",
            name="Oceania has the highest average lifeExp (74.3) and Africa the lowest (48.9) across continent values",
            description="",
            table="gapminder",
            step=2,
            effect=0.7,
            p_value=1e-12,
            count_sql=None,
            segment="lifeExp by continent",
            measure="avg_lifeExp",
            groups=["continent=Oceania", "continent=Africa"],
        )
        return host, spread

    host, spread = cands()
    assert fold_spreads_into_outliers([host, spread]) == [host]  # no goal: one finding about Oceania
    host, spread = cands()
    host.relevance, spread.relevance = 0.31, 0.62  # the question asks about life expectancy
    assert fold_spreads_into_outliers([host, spread]) == [host, spread] and "Also" not in host.description


def test_a_segments_level_and_its_change_point_are_two_findings():
    """The ask evaluation's gaming run: "ios purchases have a higher failed rate" (a level, p 3e-50) and "ios
    failures rose from 0.058 to 0.59 from June" (its change point) shared one per-segment key, and the change point,
    what a reader asks ("since when?"), was dropped. A change point is a movement over time, as a trend is; a trend
    and a change point of one segment are still one movement."""
    from assay.stats.analyst import _dedupe

    def cand(kind, name, p):
        return D.Candidate(kind=kind, name=name, description=name, table="main.purchases", step=1, effect=0.9,
                           p_value=p, count_sql=f"SELECT {len(name)}", segment="platform=ios", measure="failed rate")

    level = cand("outlier_segment", "ios purchases have a higher failed rate", 3e-50)
    moved = cand(D.Kind.CHANGE_POINT, "The rate of failed per succeeded for ios purchases rose from 2026-06-01", 4e-4)
    trend = cand(D.Kind.TREND, "The failed rate for ios is increasing over time", 1e-3)
    assert [c.name for c in _dedupe([level, moved])] == [level.name, moved.name]
    assert [c.name for c in _dedupe([level, moved, trend])] == [level.name, moved.name]  # one movement kept


def test_a_segments_row_count_stepping_up_stays_one_fact_with_its_level():
    """The other side of the rule above (InsightBench task 29): "the number of goals for Low increased from July"
    beside "Low goals have a higher Completed rate" is mostly the table's own growth; keeping it pushed the level
    finding out. A change point of a segment's row count still shares the segment's key."""
    from assay.stats.analyst import _dedupe

    level = D.Candidate(kind="outlier_segment", name="Low goals have a higher Completed rate", description="",
                        table="main.goals", step=1, effect=0.9, p_value=1e-9, count_sql="SELECT 1",
                        segment="priority=Low", measure="completed rate")
    volume = D.Candidate(kind=D.Kind.CHANGE_POINT, name="The number of goals for Low increased from 2022-07-01",
                         description="", table="main.goals", step=2, effect=0.9, p_value=1e-4, count_sql="SELECT 2",
                         segment="priority=Low", area_text="main.goals priority Low n monthly")
    assert [c.name for c in _dedupe([level, volume])] == [level.name]
