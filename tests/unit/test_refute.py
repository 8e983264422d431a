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


def test_real_model_claims_that_are_not_mixes_are_skipped(world):
    """From a real-model run: a revenue total's change was 'explained by the mix of platform', a purchase cut-off
    (no rows after day 90) was 'a small sample of 0 rows', and moves-left was stratified by the won flag it is
    defined by. None of these is counter-evidence."""
    cases, ref = world
    c = cases[-1].claim
    total = ("SELECT sum(CASE WHEN channel = 'paid' THEN amount END) AS segment_value, "
             "sum(CASE WHEN channel <> 'paid' THEN amount END) AS baseline_value FROM clean_0")
    assert ref.refute(c.model_copy(update={"query": total, "metric": MetricKind.change})).outcome == "skipped"
    absent = c.model_copy(update={"segment_sql": "channel = 'nobody'",
                                  "query": c.query.replace("channel = 'paid'", "channel = 'nobody'")})
    r = ref.refute(absent)
    assert r.outcome == "skipped" and not r.caveat
    # amount counted only for converted visits: within converted = 0 it is 0 on both sides
    defined = ("SELECT avg(CASE WHEN channel = 'paid' THEN amount * converted END) AS segment_value, "
               "avg(CASE WHEN channel <> 'paid' THEN amount * converted END) AS baseline_value FROM outcomes")
    r = ref.refute(c.model_copy(update={"query": defined}))
    assert "outcome" not in r.text  # the outcome column (= converted) defines the measure: never a stratum


def test_no_difference_is_skipped(world):
    cases, ref = world
    c = cases[-1].claim
    r = ref.refute(c.model_copy(update={"verified_value": 0.1, "verified_baseline_value": 0.1}))
    assert r.outcome == "skipped"


# ------------------------------------------------------------------ the statistical analyst's claims (generated probes)

@pytest.fixture(scope="module")
def stats_world(tmp_path_factory):
    from refutation_data import stats_form

    path = tmp_path_factory.mktemp("refute-stats") / "r.duckdb"
    cases = build(path, per_kind=3, n=4000, seed=3, leans=(0.8,), vary_size=False)
    claims = [(c, stats_form(path, c)) for c in cases]
    cfg = WarehouseConfig(kind="duckdb", settings={"path": str(path)})
    wh = open_warehouse(cfg)
    tables = wh.list_tables()
    yield claims, Refuter(Executor(wh, build_guard(wh, cfg, tables), cfg), tables)
    wh.close()


def test_statistical_claims_are_refuted_through_their_probe(stats_world):
    claims, ref = stats_world
    for case, claim in claims:
        assert claim is not None and "FROM (SELECT" in claim.query  # the probe inlined, as the verifier ran it
        r = ref.refute(claim)
        if case.kind == "clean":
            assert r.outcome == "survives", (case.name, r.text)
        else:
            assert r.caveat and r.text.startswith("but "), (case.name, r.outcome, r.text)
        if case.kind in ("mix", "reversal"):
            assert r.dimension == "device" and "within each device" in r.text
            assert "refute_level" in r.sql and "GROUP BY" in r.sql  # the probe re-run per level
        if case.kind == "period":
            assert r.outcome == "period"


def _purchases(path):
    """Failures rise from June on ios for every product alike (an ios effect, not coins_large's)."""
    import datetime as dt

    import duckdb
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(5)
    n = 12000
    platform = rng.choice(["ios", "android"], n)
    product = rng.choice(["coins_large", "coins_small", "lives"], n, p=[0.5, 0.3, 0.2])
    day = rng.integers(0, 330, n)
    at = [dt.datetime(2026, 1, 1) + dt.timedelta(days=int(d)) for d in day]
    month = np.array([a.month for a in at])
    p_fail = np.where((platform == "ios") & (month >= 6), 0.45, 0.05)
    status = np.where(rng.random(n) < p_fail, "failed", "succeeded")
    df = pd.DataFrame({"purchase_id": np.arange(n), "platform": platform, "product": product, "status": status,
                       "purchased_at": at})
    con = duckdb.connect(str(path))
    con.register("frame", df)
    con.execute("CREATE TABLE purchases AS SELECT * FROM frame")
    con.close()


def _change_claim(path, dim: str, value: str) -> Claim:
    import duckdb

    from assay.models import ExplorationStep, StepAction
    from assay.stats.claims import candidate_claims
    from assay.stats.detectors.candidate import Candidate

    probe = (f'SELECT date_trunc(\'month\', "purchased_at") AS month, "{dim}", "status", count(*) AS n '
             f'FROM "main"."purchases" GROUP BY 1, 2, 3 ORDER BY 1, 2, 3')
    con = duckdb.connect(str(path), read_only=True)
    try:
        df = con.execute(probe).fetchdf()
        step = ExplorationStep(run_id="t", step=1, action=StepAction.query, query=probe, probe={"event": "status"})
        cand = Candidate(kind="change_point", name=f"The rate of failed per succeeded for {value} purchases rose "
                         "from 2026-06-01", description="", table="purchases", step=1, effect=0.5, p_value=0.001,
                         count_sql=None, segment=f"{dim}={value}")
        (c,) = candidate_claims(cand, step, df, "duckdb")
        seg, base = con.execute(c.verification_sql).fetchone()
    finally:
        con.close()
    return c.model_copy(update={"query": c.verification_sql, "verified_value": seg, "verified_baseline_value": base,
                                "verdict": ValidationStatus.confirmed})


def test_a_change_the_other_values_share_is_not_the_segments(tmp_path):
    path = tmp_path / "p.duckdb"
    _purchases(path)
    echo, cause = _change_claim(path, "product", "coins_large"), _change_claim(path, "platform", "ios")
    assert echo.metric == MetricKind.change and echo.verified_value > 2 * echo.verified_baseline_value
    cfg = WarehouseConfig(kind="duckdb", settings={"path": str(path)})
    wh = open_warehouse(cfg)
    try:
        tables = wh.list_tables()
        ref = Refuter(Executor(wh, build_guard(wh, cfg, tables), cfg), tables)
        r = ref.refute(echo)
        assert r.outcome == "shared" and r.caveat, r.text
        assert "not specific to product = 'coins_large'" in r.text and "NOT (" in r.sql
        r = ref.refute(cause)
        assert r.outcome == "survives", r.text  # the other platform did not move
    finally:
        wh.close()


def test_a_change_of_a_total_is_not_stratified(stats_world):
    from assay.validate.refute import _parse, _probe_of

    claims, ref = stats_world
    _, c = claims[0]
    probe = _probe_of(_parse(c.query, "duckdb")).this.sql(dialect="duckdb")
    total = c.model_copy(update={
        "metric": MetricKind.change,
        "query": f"""SELECT sum(n) FILTER (WHERE "channel" = 'paid') AS segment_value, sum(n) FILTER (WHERE NOT """
                 f"""("channel" = 'paid')) AS baseline_value FROM ({probe}) AS p"""})
    r = ref.refute(total)
    assert r.outcome == "skipped" and "a total" in r.text


def test_a_level_at_100_percent_on_both_sides_defines_the_measure():
    """An InsightBench run: 'within each assigned_to ... 100% vs 100%' compared a segment with its own whole (a
    closure rate within the rows that name who closed them). A proportion at either bound on both sides is the
    measure's definition, not a mix; an average that happens to be 1 on both sides is not a bound."""
    from assay.validate.refute import _defines_measure

    mixed = [Stratum("x", 1.0, 1.0, 50, 50), Stratum("y", 0.4, 0.2, 50, 50)]
    assert _defines_measure(mixed)
    assert _defines_measure([Stratum("x", 0.0, 0.0, 50, 50), Stratum("y", 0.4, 0.2, 50, 50)])
    assert not _defines_measure([Stratum("x", 0.9, 0.9, 50, 50), Stratum("y", 0.4, 0.2, 50, 50)])
    assert not _defines_measure([Stratum("x", 1.0, 1.0, 50, 50), Stratum("y", 3.5, 2.0, 50, 50)])  # averages


def test_a_vanishing_difference_shows_the_levels_it_rests_on_and_the_pooled_figure():
    """An InsightBench run read 'within each closed_by the difference mostly vanishes (12 vs 3.75)': the largest
    level by rows had few segment rows and a big gap, while the verdict weighed the levels by both sides' sizes.
    The sentence now shows the levels the pooled figure rests on, and the pooled figure beside the total."""
    claim = Claim(metric=MetricKind.average, value=9.0, baseline_value=4.0)
    strata = [Stratum("big", 12.0, 3.75, 11, 2000),  # many rows, few of them the segment's
              Stratum("a", 5.0, 4.8, 300, 300), Stratum("b", 4.1, 4.0, 250, 260), Stratum("c", 3.0, 3.1, 200, 220)]
    assert judge_strata(5.0, strata) == "vanishes"
    text = Refuter._mix_text(None, claim, "closed_by", "vanishes", strata)
    assert "+0.312 within its levels against +5 in total" in text  # weights 2ab/(a+b): 21.9, 300, 255, 210
    assert "big:" not in text and "a: 5 vs 4.8" in text
    rate = Claim(metric=MetricKind.rate, value=0.30, baseline_value=0.10)
    text = Refuter._mix_text(None, rate, "device", "vanishes",
                             [Stratum("m", 0.21, 0.20, 400, 400), Stratum("d", 0.06, 0.05, 400, 400)])
    assert "+1.0 points within its levels against +20.0 points in total" in text


def test_counter_evidence_that_undermines_a_comparison_caps_its_severity(world):
    """The gaming demo ranked "the failure rate of coins_small purchases rose ... confirmed, but the other values
    changed as much over the same split" high among the run's headlines. A mix, a small sample or a shared change
    caps an insight at medium; a gap confined to one half of the period says when, not that it is wrong."""
    from assay.models import Severity, Validation
    from assay.validate.refute import weakens, weigh_severity

    cases, ref = world
    seen = set()
    for c in cases:
        r = ref.refute(c.claim)
        seen.add(r.outcome)
        assert weakens(r.text) == (r.outcome in ("reverses", "vanishes", "small_sample", "shared")), (r.outcome, r.text)
    assert {"survives", "period"} <= seen and seen & {"reverses", "vanishes"}
    small = cases[-1].claim.model_copy(update={
        "segment_sql": "channel = 'paid' AND visit_id < 40",
        "query": cases[-1].claim.query.replace("channel = 'paid'", "channel = 'paid' AND visit_id < 40")})
    assert weakens(ref.refute(small).text)
    mix = next(c for c in cases if c.kind == "mix")
    for sev, after in (("critical", "medium"), ("high", "medium"), ("medium", "medium"), ("low", "low")):
        ins = Insight(id="I1", area="a", name="paid converts better", description="paid converts better", severity=sev,
                      claims=[mix.claim.model_copy()], validation=Validation(status="confirmed"))
        ins.validation.refutation = refute_insight(ref, ins)
        weigh_severity(ins)
        assert ins.severity == Severity(after)
    # the headline claim's own outcome decides: a supporting comparison undermined leaves the severity (its caveat is
    # shown beside it), the headline undermined caps it whatever the other claims found
    clean = next(c for c in cases if c.kind == "clean")
    period = next(c for c in cases if c.kind == "period")
    for claims, after in (([clean.claim, mix.claim], "critical"), ([mix.claim, period.claim], "medium")):
        ins = Insight(id="I3", area="a", name="two comparisons", description="two comparisons", severity="critical",
                      claims=[c.model_copy() for c in claims], validation=Validation(status="confirmed"))
        ins.validation.refutation = refute_insight(ref, ins)
        weigh_severity(ins)
        assert ins.severity == Severity(after), [c.refutation for c in ins.claims]
    ins = Insight(id="I2", area="a", name="late gap", description="late gap", severity="critical", claims=[period.claim.model_copy()],
                  validation=Validation(status="confirmed"))
    ins.validation.refutation = refute_insight(ref, ins)
    weigh_severity(ins)
    assert ins.severity == Severity.critical and not weakens(ins.validation.refutation)
    assert weakens("but the other values changed as much over the same split (0.04 to 0.18, against 0.02 to 0.26)")
