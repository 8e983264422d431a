"""The refuter: a comparison true in total but confounded is flagged with one sentence of counter-evidence;
a clean one survives; claims it cannot stratify are skipped, never failed."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from assay.explore.executor import Executor
from assay.models import Claim, Insight, MetricKind, ValidationStatus, WarehouseConfig
from assay.validate.refute import Refuter, Stratum, judge_strata, refute_insight
from assay.warehouse import build_guard, open_warehouse

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from refutation_data import build  # noqa: E402


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    path = tmp_path_factory.mktemp("refute") / "r.duckdb"
    cases = build(path, per_kind=3, n=4000, seed=3, leans=(0.8,), vary_size=False)  # strong: always caught
    import duckdb

    con = duckdb.connect(str(path))  # an outcome column that defines the measure (see the last test)
    con.execute(f"CREATE TABLE outcomes AS SELECT *, CASE WHEN converted = 1 THEN 'won' ELSE 'lost' END AS outcome "
                f"FROM {cases[-1].table}")
    con.close()
    cfg = WarehouseConfig(kind="duckdb", settings={"path": str(path)})
    wh = open_warehouse(cfg)
    tables = wh.list_tables()
    yield cases, Refuter(Executor(wh, build_guard(wh, cfg, tables), cfg), tables)
    wh.close()


def test_judge_strata():
    both = lambda lvl, s, b: Stratum(lvl, s, b, 100, 100)  # noqa: E731
    assert judge_strata(0.10, [both("a", 0.20, 0.10), both("b", 0.06, 0.05)]) == "survives"
    assert judge_strata(0.10, [both("a", 0.20, 0.20), both("b", 0.05, 0.05)]) == "vanishes"
    assert judge_strata(0.10, [both("a", 0.17, 0.20), both("b", 0.03, 0.05)]) == "reverses"
    # a level where one side is (nearly) absent says nothing
    assert judge_strata(0.10, [Stratum("a", 0.2, 0.2, 3, 500)]) == "unknown"


def test_confounded_flagged_clean_survive(world):
    cases, ref = world
    for c in cases:
        r = ref.refute(c.claim)
        if c.kind == "clean":
            assert r.outcome == "survives" and r.text == "survives refutation", (c.name, r.text)
        else:
            assert r.caveat and r.text.startswith("but "), (c.name, r.outcome)
        if c.kind in ("mix", "reversal"):
            assert r.dimension == "device" and "within each device" in r.text
        if c.kind == "period":
            assert r.outcome == "period" and "half of the period only" in r.text
    assert ref.queries > len(cases)  # its own guarded queries


def test_small_segment_is_a_caveat(world):
    cases, ref = world
    claim = cases[-1].claim.model_copy(update={
        "segment_sql": "channel = 'paid' AND visit_id < 40",
        "query": cases[-1].claim.query.replace("channel = 'paid'", "channel = 'paid' AND visit_id < 40")})
    r = ref.refute(claim)
    assert r.outcome == "small_sample" and "small sample" in r.text


def test_skipped_when_not_a_confirmed_comparison(world):
    cases, ref = world
    c = cases[0].claim
    assert ref.refute(c.model_copy(update={"metric": MetricKind.count})).outcome == "skipped"
    assert ref.refute(c.model_copy(update={"verdict": ValidationStatus.rejected})).outcome == "skipped"
    scalar = ("SELECT (SELECT avg(converted) FROM mix_0 WHERE channel = 'paid') AS segment_value, "
              "(SELECT avg(converted) FROM mix_0 WHERE channel <> 'paid') AS baseline_value")
    assert ref.refute(c.model_copy(update={"query": scalar})).outcome == "skipped"


def test_insight_summary(world):
    cases, ref = world
    mix = next(c for c in cases if c.kind == "mix")
    clean = next(c for c in cases if c.kind == "clean")
    ins = Insight(id="I1", area="a", name="paid converts better", description="paid converts better",
                  claims=[clean.claim.model_copy(), mix.claim.model_copy()])
    summary = refute_insight(ref, ins)
    assert summary.startswith("but within each device")
    assert ins.claims[0].refutation == "survives refutation" and ins.claims[1].refutation.startswith("but ")
    assert "GROUP BY" in ins.claims[1].refutation_sql.upper()
    alone = Insight(id="I2", area="a", name="a count", description="a count", claims=[Claim(metric=MetricKind.count, value=3)])
    assert refute_insight(ref, alone) is None


def test_nothing_to_stratify_by_is_skipped_not_survived(world):
    cases, ref = world
    c = cases[0].claim
    # a comparison over a derived table: no base-table column to test it within
    derived = ("SELECT avg(CASE WHEN channel = 'paid' THEN converted END) AS segment_value, "
               "avg(CASE WHEN channel <> 'paid' THEN converted END) AS baseline_value "
               "FROM (SELECT channel, converted FROM mix_0) AS t")
    r = ref.refute(c.model_copy(update={"query": derived}))
    assert r.outcome == "skipped" and not r.caveat


def test_never_stratifies_by_the_measures_own_column(world):
    cases, ref = world
    c = cases[-1].claim  # clean
    # conversion defined by an outcome column: within each outcome the rate is 0% or 100%
    sql = ("SELECT count(*) FILTER (WHERE channel = 'paid' AND outcome = 'won') * 1.0 / count(*) FILTER (WHERE "
           "channel = 'paid') AS segment_value, count(*) FILTER (WHERE channel <> 'paid' AND outcome = 'won') * 1.0 "
           "/ count(*) FILTER (WHERE channel <> 'paid') AS baseline_value FROM outcomes")
    r = ref.refute(c.model_copy(update={"query": sql}))
    assert r.outcome == "survives" and "outcome" not in r.text


def test_a_whole_table_aggregate_is_rederived_not_left_unverifiable(tmp_path):
    import json

    import duckdb

    from assay.llm.scripted import ReplayLLM
    from assay.validate.verify import Verifier
    from assay.warehouse.duckdb import DuckDBWarehouse
    from assay.warehouse.guard import SQLGuard
    from tests.helpers import small_warehouse

    db = small_warehouse(tmp_path / "w.duckdb")
    con = duckdb.connect(str(db))
    mean = con.execute("SELECT avg(amount) FROM orders").fetchone()[0]
    con.close()
    wh = DuckDBWarehouse(str(db))
    try:
        tables = wh.list_tables()
        llm = ReplayLLM({"verify": [json.dumps({"query": "SELECT avg(amount) AS segment_value FROM orders"})]})
        ex = Executor(wh, SQLGuard("duckdb", tables=tables, default_schema="main"),
                      WarehouseConfig(kind="duckdb", settings={}), llm)
        ins = Insight(id="I1", area="revenue", name="Average order is about 28", description="across all orders",
                      claims=[Claim(metric=MetricKind.average, measure="order amount", entity="orders",
                                    segment="all orders", value=round(mean, 1))])
        v = Verifier(llm=llm, executor=ex, steps={}, catalog="- main.orders").verify(ins)
        assert v.status == ValidationStatus.confirmed and ins.claims[0].verified_value == pytest.approx(mean)
    finally:
        wh.close()
