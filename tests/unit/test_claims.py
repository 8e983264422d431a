"""Claims: the contract, the verdict arithmetic, grounding, blind re-derivation, one entity per count."""

from __future__ import annotations

import json

import duckdb
import pytest

from assay.digest import build_compact_result
from assay.explore.executor import Executor
from assay.llm.scripted import ReplayLLM
from assay.models import (
    AnalysisAnswer,
    Claim,
    ExplorationStep,
    Insight,
    MetricKind,
    StepAction,
    ValidationStatus,
    WarehouseConfig,
)
from assay.validate.compare import judge, worst
from assay.validate.conditions import missing_conditions, partial_conditions
from assay.validate.entity import entity_of_sql, normalize_entity, same_entity
from assay.validate.grounding import ground_claim, ground_insight
from assay.validate.verify import Verifier
from assay.warehouse.duckdb import DuckDBWarehouse
from assay.warehouse.guard import SQLGuard

# android: 100 carts, 14 purchases; ios: 100 carts, 52 purchases; 50 customers per platform
RATE_SQL = ("SELECT count(*) FILTER (WHERE platform = 'android' AND event_type = 'purchase') * 1.0 / "
            "count(*) FILTER (WHERE platform = 'android' AND event_type = 'add_to_cart') AS segment_value, "
            "count(*) FILTER (WHERE platform = 'ios' AND event_type = 'purchase') * 1.0 / "
            "count(*) FILTER (WHERE platform = 'ios' AND event_type = 'add_to_cart') AS baseline_value FROM events "
            "WHERE event_at >= TIMESTAMP '2026-07-01'")


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    path = tmp_path_factory.mktemp("claims") / "w.duckdb"
    con = duckdb.connect(str(path))
    con.execute("""
        CREATE TABLE events AS SELECT i AS event_id,
            CASE WHEN i < 200 THEN 'android' ELSE 'ios' END AS platform,
            CASE WHEN i < 200 THEN i % 50 ELSE 50 + i % 50 END AS customer_id,
            CASE WHEN i % 200 < 100 THEN 'add_to_cart'
                 WHEN (i < 200 AND i % 200 < 114) OR (i >= 200 AND i % 200 < 152) THEN 'purchase'
                 ELSE 'view' END AS event_type,
            TIMESTAMP '2026-07-02' + INTERVAL (i) MINUTE AS event_at
        FROM range(0, 400) t(i)
    """)
    con.close()
    wh = DuckDBWarehouse(str(path))
    tables = wh.list_tables()
    step_sql = ("SELECT platform, count(*) FILTER (WHERE event_type = 'purchase') * 1.0 / "
                "count(*) FILTER (WHERE event_type = 'add_to_cart') AS conversion, count(DISTINCT customer_id) AS "
                "customers FROM events GROUP BY 1 ORDER BY 1")
    table = wh.query(step_sql, row_cap=100, timeout_s=30).table
    step = ExplorationStep(run_id="r", step=7, action=StepAction.query, purpose="conversion by platform",
                           query=step_sql, row_count=table.num_rows, digest=build_compact_result(table))
    yield wh, tables, {7: step}
    wh.close()


def verifier(world, llm):
    wh, tables, steps = world
    ex = Executor(wh, SQLGuard("duckdb", tables=tables, default_schema="main"),
                  WarehouseConfig(kind="duckdb", settings={}), llm)
    return Verifier(llm=llm, executor=ex, steps=steps, catalog="- main.events")


def rate_claim(value=0.14, base=0.52, **kw) -> Claim:
    fields = dict(metric="rate", measure="cart-to-purchase conversion", entity="events", segment="android",
                  segment_sql="platform = 'android'", baseline="ios", baseline_sql="platform = 'ios'",
                  period="since 2026-07-01", period_sql="event_at >= TIMESTAMP '2026-07-01'", value=value,
                  baseline_value=base, source_steps=[7])
    fields.update(kw)
    return Claim(**fields)


def insight(*claims, count=None, entity=None) -> Insight:
    return Insight(id="conversion-1", area="conversion", name="Android conversion fell to 14%",
                   description="android converts 14% of carts against 52% on ios", claims=list(claims),
                   affected_count=count, affected_entity=entity, source_steps=[7])


# ---------------------------------------------------------------------------- the contract


def test_answer_with_claims_parses_numbers_as_written():
    ans = AnalysisAnswer.model_validate({"insights": [{
        "name": "Android conversion fell", "description": "android vs ios", "affected_count": "1,234",
        "affected_entity": "customers",
        "claims": [{"metric": "percentage", "measure": "conversion", "value": "14%", "baseline_value": 52,
                    "source_steps": "7"}]}]})
    d = ans.insights[0]
    c = d.claims[0]
    assert d.affected_entity == "customers" and d.affected_count == 1234
    assert c.metric == MetricKind.share and c.value == 14.0 and c.baseline_value == 52.0 and c.source_steps == [7]


def test_old_answer_without_claims_still_parses_with_unknown_unit():
    d = AnalysisAnswer.model_validate({"insights": [{"name": "Paid churn", "description": "paid churn",
                                                     "affected_count": 66}]}).insights[0]
    assert d.claims == [] and d.affected_entity is None


# ---------------------------------------------------------------------------- the verdict arithmetic


@pytest.mark.parametrize("claimed, verified, status", [
    ((0.14, 0.52), (0.14, 0.52), "confirmed"),
    ((0.14, 0.52), (0.155, 0.51), "confirmed"),      # within 2 pp
    ((14, 52), (0.14, 0.52), "confirmed"),           # percents written as percents
    ((0.40, 0.60), (0.43, 0.60), "confirmed"),       # 3 pp off but within 10% relative
    ((0.07, 0.52), (0.14, 0.52), "adjusted"),        # same direction, wrong rate
    ((0.52, 0.14), (0.14, 0.52), "rejected"),        # wrong direction
    ((0.14, 0.52), (0.50, 0.51), "rejected"),        # no effect in the warehouse
])
def test_rate_verdicts(claimed, verified, status):
    assert judge(rate_claim(*claimed), *verified)[0].value == status


@pytest.mark.parametrize("claimed, verified, status", [
    (100, 120, "confirmed"), (100, 80, "confirmed"), (100, 121, "adjusted"), (150, 100, "adjusted"),
    (100, 0, "rejected"),
])
def test_count_verdicts(claimed, verified, status):
    c = Claim(metric="count", value=claimed)
    assert judge(c, verified, None)[0].value == status


def test_change_stated_as_one_relative_number():
    c = Claim(metric="change", value=-0.55)
    assert judge(c, 80.0, 180.0)[0] == ValidationStatus.confirmed      # -55.6%
    assert judge(c, 175.0, 180.0)[0] == ValidationStatus.rejected      # no effect
    assert judge(c, 250.0, 180.0)[0] == ValidationStatus.rejected      # rose
    assert judge(c, 120.0, 180.0)[0] == ValidationStatus.adjusted      # fell, by a third


def test_insight_verdict_is_the_worst_claim():
    S = ValidationStatus
    assert worst([S.confirmed, S.adjusted]) == S.adjusted
    assert worst([S.confirmed, S.rejected, S.adjusted]) == S.rejected
    assert worst([S.confirmed, S.error]) == S.error


# ---------------------------------------------------------------------------- grounding


def test_grounded_numbers_directly_as_percent_and_by_arithmetic(world):
    steps = world[2]
    assert ground_claim(rate_claim(0.14, 0.52), steps, []) == []
    assert ground_claim(rate_claim(14.0, 52.0), steps, []) == []                    # written as percents
    ratio = Claim(metric="change", value=round(0.14 / 0.52 - 1, 3), source_steps=[7])  # -73%: recomputed
    assert ground_claim(ratio, steps, []) == []
    made_up = rate_claim(0.19, 0.61)
    assert ground_claim(made_up, steps, []) == [0.19, 0.61] and made_up.grounded is False


def test_ungrounded_insight_is_flagged_and_a_count_no_step_shows(world):
    steps = world[2]
    ins = insight(rate_claim(0.14, 0.52), count=50, entity="customers")
    assert ground_insight(ins, steps) and not ins.ungrounded
    ins = insight(rate_claim(0.14, 0.52), count=4321, entity="customers")
    assert not ground_insight(ins, steps) and ins.ungrounded
    assert ground_insight(insight(rate_claim(0.14, 0.52, source_steps=[99])), {}) is False  # cites nothing stored


# ---------------------------------------------------------------------------- the stated definition


def test_missing_conditions_ignore_qualifiers_and_literal_forms():
    q = ("SELECT count(*) FILTER (WHERE e.platform = 'android') AS segment_value FROM events e "
         "WHERE e.event_at >= '2026-07-01'")
    assert missing_conditions(q, {"segment": "platform = 'android'",
                                  "period": "event_at >= TIMESTAMP '2026-07-01'"}) == []
    assert missing_conditions(q, {"baseline": "platform = 'ios'"}) == ["baseline (platform = 'ios')"]
    assert missing_conditions(q, {"baseline": "TRUE", "x": ""}) == []


PERIOD = "o.ordered_at >= TIMESTAMP '2026-07-01'"
SHARE = {"segment": "c.channel = 'email'", "period": PERIOD}


@pytest.mark.parametrize("sql, flagged", [
    # the period on the rows: it bounds both sides of the share
    ("SELECT count(*) FILTER (WHERE c.channel = 'email') * 1.0 / count(*) AS segment_value FROM orders o "
     "JOIN customers c USING (customer_id) WHERE o.ordered_at >= TIMESTAMP '2026-07-01'", False),
    # the period in every aggregate
    ("SELECT count(*) FILTER (WHERE c.channel = 'email' AND o.ordered_at >= TIMESTAMP '2026-07-01') * 1.0 / "
     "count(*) FILTER (WHERE o.ordered_at >= TIMESTAMP '2026-07-01') AS segment_value FROM orders o "
     "JOIN customers c USING (customer_id)", False),
    # scalar subqueries, each bounded
    ("SELECT (SELECT count(*) FROM orders o JOIN customers c USING (customer_id) WHERE c.channel = 'email' "
     "AND o.ordered_at >= TIMESTAMP '2026-07-01') * 1.0 / (SELECT count(*) FROM orders o WHERE "
     "o.ordered_at >= TIMESTAMP '2026-07-01') AS segment_value", False),
    # a CTE that applies the period
    ("WITH recent AS (SELECT * FROM orders o WHERE o.ordered_at >= TIMESTAMP '2026-07-01') "
     "SELECT count(*) FILTER (WHERE c.channel = 'email') * 1.0 / count(*) AS segment_value FROM recent "
     "JOIN customers c USING (customer_id)", False),
    # the period on the numerator only: the share of ALL orders that are recent email orders
    ("SELECT count(*) FILTER (WHERE c.channel = 'email' AND o.ordered_at >= TIMESTAMP '2026-07-01') * 1.0 / "
     "count(*) AS segment_value FROM orders o JOIN customers c USING (customer_id)", True),
    ("SELECT (SELECT count(*) FROM orders o JOIN customers c USING (customer_id) WHERE c.channel = 'email' "
     "AND o.ordered_at >= TIMESTAMP '2026-07-01') * 1.0 / (SELECT count(*) FROM orders o) AS segment_value", True),
])
def test_the_period_must_bound_the_whole_metric(sql, flagged):
    assert missing_conditions(sql, SHARE) == []  # every condition is somewhere in the query...
    out = partial_conditions(sql, SHARE, metric="share")
    assert bool(out) is flagged, out  # ...but only the whole-bounding ones compute the stated share
    if flagged:
        assert out[0].startswith("period")


def test_a_rate_segment_must_bound_numerator_and_denominator():
    stated = {"segment": "platform = 'android'", "baseline": "platform = 'ios'", "period": ""}
    assert partial_conditions(RATE_SQL, stated, metric="rate") == []
    part = ("SELECT count(*) FILTER (WHERE platform = 'android' AND event_type = 'purchase') * 1.0 / "
            "count(*) FILTER (WHERE event_type = 'add_to_cart') AS segment_value, "
            "count(*) FILTER (WHERE platform = 'ios' AND event_type = 'purchase') * 1.0 / "
            "count(*) FILTER (WHERE platform = 'ios' AND event_type = 'add_to_cart') AS baseline_value FROM events")
    assert [m.split(" ")[0] for m in partial_conditions(part, stated, metric="rate")] == ["segment"]
    swapped = RATE_SQL.replace("AS segment_value", "AS tmp").replace("AS baseline_value", "AS segment_value") \
        .replace("AS tmp", "AS baseline_value")
    assert len(partial_conditions(swapped, stated, metric="rate")) == 2  # each side computed on the other
    # a share's whole is not the segment: the segment reaches its column, and that is enough
    share = "SELECT sum(x) FILTER (WHERE platform = 'android') / sum(x) AS segment_value FROM events"
    assert partial_conditions(share, {"segment": "platform = 'android'"}, metric="share") == []
    # a ratio to the stated baseline (a real model's level drop-off: no baseline_value column)
    drop = ("SELECT 1 - count(DISTINCT player_id) FILTER (WHERE level = 5) * 1.0 / count(DISTINCT player_id) "
            "FILTER (WHERE level = 4) AS segment_value FROM level_attempts")
    assert partial_conditions(drop, {"segment": "level = 5", "baseline": "level = 4"}, metric="rate") == []


def test_entities():
    assert normalize_entity("Order items") == normalize_entity("order_items") == "order_item"
    assert normalize_entity("customer_id") == normalize_entity("customers") == "customer"
    assert entity_of_sql("SELECT count(DISTINCT customer_id) FROM events") == "customer"
    assert entity_of_sql("SELECT count(*) FROM order_items oi JOIN orders o USING (order_id)") == "order_item"
    assert entity_of_sql("SELECT count(*) FROM (SELECT player_id FROM level_attempts GROUP BY player_id)") == "player"
    assert entity_of_sql("SELECT count(*) FROM players p WHERE NOT EXISTS (SELECT 1 FROM sessions s)") == "player"
    assert entity_of_sql("SELECT count(*) FROM (SELECT player_id FROM a GROUP BY 1) x", strict=True) is None


# ---------------------------------------------------------------------------- blind re-derivation


def test_blind_rederivation_confirms_and_never_shows_the_values(world):
    llm = ReplayLLM({"verify": [json.dumps({"query": RATE_SQL})]})
    ins = insight(rate_claim(0.14, 0.52))
    v = verifier(world, llm).verify(ins)
    assert v.status == ValidationStatus.confirmed
    c = ins.claims[0]
    assert c.verdict == ValidationStatus.confirmed and c.verified_value == pytest.approx(0.14)
    assert c.verified_baseline_value == pytest.approx(0.52) and c.query.startswith("SELECT")
    req = llm.calls[0]
    shown = req.system_text() + "".join(m.content for m in req.messages)
    for number in ("0.14", "0.52", "14%", "52%", "Android conversion fell"):
        assert number not in shown  # the verifier sees the definition, not the claim
    assert "platform = 'android'" in shown and "SELECT platform" in shown  # definition and cited step's SQL


def test_wrong_direction_rejected_wrong_rate_adjusted(world):
    llm = ReplayLLM({"verify": [json.dumps({"query": RATE_SQL})] * 2})
    v = verifier(world, llm)
    assert v.verify(insight(rate_claim(0.52, 0.14))).status == ValidationStatus.rejected
    adjusted = insight(rate_claim(0.05, 0.52))
    assert v.verify(adjusted).status == ValidationStatus.adjusted
    assert adjusted.claims[0].verified_value == pytest.approx(0.14)  # the verified value is kept and shown


def test_query_leaving_the_period_out_gets_one_correction_then_error(world):
    no_period = RATE_SQL.replace(" WHERE event_at >= TIMESTAMP '2026-07-01'", "")
    llm = ReplayLLM({"verify": [json.dumps({"query": no_period}), json.dumps({"query": RATE_SQL})]})
    ins = insight(rate_claim(0.14, 0.52))
    assert verifier(world, llm).verify(ins).status == ValidationStatus.confirmed
    assert "period (event_at >= TIMESTAMP '2026-07-01')" in llm.calls[1].messages[-1].content
    llm = ReplayLLM({"verify": [json.dumps({"query": no_period})] * 2})
    ins = insight(rate_claim(0.14, 0.52))
    assert verifier(world, llm).verify(ins).status == ValidationStatus.error
    assert "does not apply" in ins.claims[0].reasoning


def test_query_applying_the_period_to_the_numerator_only_is_an_error(world):
    """Every stated condition is in the query, but the period filters the numerator only: it computes
    another metric, which may land near the claimed one by chance; it must not confirm anything."""
    part = RATE_SQL.replace(" WHERE event_at >= TIMESTAMP '2026-07-01'", "").replace(
        "platform = 'android' AND event_type = 'purchase'",
        "platform = 'android' AND event_type = 'purchase' AND event_at >= TIMESTAMP '2026-07-01'").replace(
        "platform = 'ios' AND event_type = 'purchase'",
        "platform = 'ios' AND event_type = 'purchase' AND event_at >= TIMESTAMP '2026-07-01'")
    llm = ReplayLLM({"verify": [json.dumps({"query": part})] * 2})
    ins = insight(rate_claim(0.14, 0.52))
    assert verifier(world, llm).verify(ins).status == ValidationStatus.error
    assert "part of the metric" in ins.claims[0].reasoning
    assert "part of the metric" in llm.calls[1].messages[-1].content  # the corrective round says why


def test_affected_count_is_a_claim_of_its_entity_and_a_count_of_another_is_refused(world):
    rate = json.dumps({"query": RATE_SQL})
    rows = json.dumps({"query": "SELECT count(*) AS segment_value FROM events WHERE platform = 'android' "
                                "AND event_at >= TIMESTAMP '2026-07-01'"})
    distinct = json.dumps({"query": "SELECT count(DISTINCT customer_id) AS segment_value FROM events WHERE "
                                    "platform = 'android' AND event_at >= TIMESTAMP '2026-07-01'"})
    llm = ReplayLLM({"verify": [rate, rows, distinct]})
    ins = insight(rate_claim(0.14, 0.52), count=50, entity="customers")
    v = verifier(world, llm).verify(ins)
    assert v.status == ValidationStatus.confirmed and v.verified_count == 50
    count = ins.claims[-1]
    assert count.metric == MetricKind.count and count.entity == "customers" and count.verdict.value == "confirmed"
    assert count.segment_sql == "platform = 'android'" and count.period_sql.startswith("event_at >=")  # its scope
    assert "the query counts event" in llm.calls[2].messages[-1].content  # rows of events are not customers


def test_right_count_wrong_rate_is_adjusted(world):
    distinct = json.dumps({"query": "SELECT count(DISTINCT customer_id) AS segment_value FROM events WHERE "
                                    "platform = 'android' AND event_at >= TIMESTAMP '2026-07-01'"})
    llm = ReplayLLM({"verify": [json.dumps({"query": RATE_SQL}), distinct]})
    ins = insight(rate_claim(0.05, 0.52), count=50, entity="customers")
    assert verifier(world, llm).verify(ins).status == ValidationStatus.adjusted
    assert [c.verdict.value for c in ins.claims] == ["adjusted", "confirmed"]


def test_statistical_count_goes_through_the_same_check_with_its_sql(world):
    ins = Insight(id="s-1", area="a", name="android", description="android", affected_count=45,
                  verification_sql="SELECT count(DISTINCT customer_id) AS count FROM events WHERE platform = 'android'")
    v = verifier(world, None).verify(ins)
    assert v.status == ValidationStatus.confirmed and v.verified_count == 50
    assert ins.affected_entity == "customer" and ins.claims[0].verdict == ValidationStatus.confirmed
    assert not ins.ungrounded  # a computed count is not held to a step's result


def test_a_generated_count_claim_states_its_own_population_not_another_claims(world):
    """The statistical analyst's affected count had been given the first claim's segment and period; the
    count's own query defines what it counts."""
    rate = rate_claim(0.14, 0.52, verification_sql=RATE_SQL)
    ins = Insight(id="s-2", area="a", name="android", description="android", affected_count=48, segment="ios",
                  claims=[rate], source_steps=[7],
                  verification_sql="SELECT count(*) AS count FROM events WHERE platform = 'ios' AND event_type = 'view'")
    v = verifier(world, None).verify(ins)
    count = ins.claims[-1]
    assert count.measure == "affected count" and count.verdict == ValidationStatus.confirmed
    assert count.segment_sql == "platform = 'ios' AND event_type = 'view'" and count.period_sql == ""
    assert count.segment == "ios" and count.entity == "event"
    assert v.status == ValidationStatus.confirmed and [c.verdict.value for c in ins.claims] == ["confirmed"] * 2


def test_grounding_reads_a_cut_result_s_kept_rows():
    """A result too long to keep whole stores only its signal rows (``kept_rows``, no ``all_rows``): grounding
    reads those. It crashed with ``None + None`` on the legacy head/tail fields and failed four of five areas
    of a real-model run."""
    import pyarrow as pa

    from assay.models import ExplorationStep, StepAction

    months = pa.table({"month": [f"2026-{m:02d}" for m in range(1, 13)] * 4,
                       "rate": [0.44] * 6 + [0.11] * 6 + [0.41 + i / 1000 for i in range(36)]})
    digest = build_compact_result(months)
    assert digest.all_rows is None and digest.kept_rows  # a cut result
    step = ExplorationStep(run_id="r", step=3, action=StepAction.query, query="SELECT 1", row_count=48,
                           digest=digest)
    kept = [r["rate"] for r in digest.kept_rows]
    claim = Claim(metric="rate", value=kept[0], source_steps=[3])
    assert ground_claim(claim, {3: step}, []) == []
    assert ground_claim(Claim(metric="rate", value=0.777, source_steps=[3]), {3: step}, []) == [0.777]


def test_a_claim_without_a_baseline_may_say_null():
    """A real model wrote ``"baseline": null`` for a plain count; that is a claim with no comparison, not an
    invalid answer (which cost a corrective round in both real-model runs)."""
    c = Claim.model_validate({"metric": "count", "measure": "orders", "entity": "orders", "segment": "bulk orders",
                              "segment_sql": "quantity >= 11", "baseline": None, "baseline_sql": None,
                              "baseline_value": None, "period": None, "period_sql": None, "value": 353,
                              "source_steps": [12]})
    assert c.baseline == "" and c.baseline_sql == "" and c.period == "" and c.value == 353


# ---------------------------------------------------------------------------- what the reader is told


def test_every_number_of_an_insight_is_said_to_be_checked_or_not():
    from assay.report.claims import checked_summary, insight_notes, unchecked_numbers

    checked = rate_claim(0.14, 0.52, verdict="confirmed", verified_value=0.141, verified_baseline_value=0.52)
    count = Claim(metric="count", measure="affected count", value=1200, verdict="adjusted", verified_value=900)
    i = Insight(id="c-1", area="conversion", name="Android conversion fell to 14%",
                description="From 52% to 14% since 2026-07-01 (a 73% drop), 1,200 customers, robust z = 5.7 over "
                            "12 months.", claims=[checked, count])
    # 14%, 52%, 73% (their change) and 1,200 (checked, adjusted) are the warehouse's; z and the months are not
    assert unchecked_numbers(i) == ["5.7", "12"]
    assert "not re-derived in the warehouse: 5.7, 12" in insight_notes(i)
    wall = Insight(id="l-1", area="levels", name="42 has a much lower won rate than other level values",
                   description="Level 42 is won 2.0% of the time against 62.9% (n = 154,148 rows, value < 0,).",
                   claims=[rate_claim(0.02, 0.629, segment="level = 42", segment_sql="level = 42 AND x >= 0",
                                      verdict="confirmed")])
    assert unchecked_numbers(wall) == ["154,148"]  # 42 and 0 define the segment; they are not measured
    bare = Insight(id="c-2", area="conversion", name="Sessions grow", description="Sessions grew 129% a month.")
    assert insight_notes(bare)[0] == "no number of this insight was re-derived in the warehouse"
    failed = Insight(id="c-3", area="conversion", name="x fell", description="x fell by 10%.",
                     claims=[rate_claim(0.1, 0.2, verdict="error")])
    assert checked_summary([i, bare, failed]) == (
        "Re-derived in the warehouse: 2 numbers of 1 insight (1 confirmed, 1 adjusted, 0 rejected); 1 could not be "
        "checked; 2 insights with no number checked; 1 with numbers in the text not re-derived (listed under each).")


def test_a_change_against_an_earlier_period_is_not_bound_by_the_later_period():
    """A real model's change claims ("android conversion since July against the same segment before July") were
    all `error`: the period was required to bound the baseline too, which left it no rows."""
    from assay.validate.conditions import partial_conditions

    stated = {"segment": "platform = 'android'", "baseline": "event_at < DATE '2026-07-01'",
              "period": "event_at >= DATE '2026-07-01'"}
    sql = ("SELECT count(*) FILTER (WHERE platform = 'android' AND event_at >= DATE '2026-07-01' AND kind = 'buy') "
           "* 1.0 / count(*) FILTER (WHERE platform = 'android' AND event_at >= DATE '2026-07-01') AS segment_value, "
           "count(*) FILTER (WHERE platform = 'android' AND event_at < DATE '2026-07-01' AND kind = 'buy') * 1.0 / "
           "count(*) FILTER (WHERE platform = 'android' AND event_at < DATE '2026-07-01') AS baseline_value FROM events")
    assert not any("period" in m for m in partial_conditions(sql, stated, "duckdb", "change"))
    # the later period left off the segment's side is still caught
    no_period = sql.replace("platform = 'android' AND event_at >= DATE '2026-07-01' AND kind = 'buy'",
                            "platform = 'android' AND kind = 'buy'")
    assert any("period" in m for m in partial_conditions(no_period, stated, "duckdb", "change"))
    # a baseline that is another segment in the same period: the period bounds both sides, as before
    other = dict(stated, baseline="platform <> 'android'")
    assert any("period" in m for m in partial_conditions(sql, other, "duckdb", "change"))


def test_the_affected_count_is_checked_as_the_segment_s_entities_with_the_outcome_not_the_segment(world):
    """Real models sized a finding by its whole segment (every customer of a channel) where the finding is about
    those with the outcome (the ones who churned). The contract asks for the latter; the verifier checks the
    affected count as those of the segment that show the finding (the segment of the claim that measures its
    outcome rate, not the first claim's), so the segment's size is not confirmed as the affected count."""
    from assay.analysis.discipline import CLAIM_DISCIPLINE

    assert "that show the finding's outcome" in CLAIM_DISCIPLINE and "separate count claim" in CLAIM_DISCIPLINE
    # android: 50 customers, 14 of them bought (customer_id 0..13)
    rate_sql = ("SELECT count(DISTINCT customer_id) FILTER (WHERE event_type = 'purchase') * 1.0 / "
                "count(DISTINCT customer_id) AS segment_value FROM events WHERE platform = 'android'")
    outcome_sql = ("SELECT count(DISTINCT customer_id) AS segment_value FROM events WHERE platform = 'android' AND "
                   "customer_id NOT IN (SELECT customer_id FROM events WHERE event_type = 'purchase')")
    total = json.dumps({"query": "SELECT count(DISTINCT customer_id) AS segment_value FROM events"})

    def android(count):
        claims = [Claim(metric="count", measure="customers", entity="customers", segment="all customers", value=100,
                        source_steps=[7]),
                  Claim(metric="rate", measure="share of customers who bought", entity="customers",
                        segment="android", segment_sql="platform = 'android'", value=0.28, source_steps=[7])]
        return Insight(id="conversion-2", area="conversion", name="Only 28% of android customers buy",
                       description="72% of android customers never bought", segment="android", claims=claims,
                       affected_count=count, affected_entity="customers", source_steps=[7])

    llm = ReplayLLM({"verify": [total, json.dumps({"query": rate_sql}), json.dumps({"query": outcome_sql})]})
    ins = android(36)
    assert verifier(world, llm).verify(ins).status == ValidationStatus.confirmed
    count = ins.claims[-1]
    assert count.measure == "affected count" and count.segment_sql == "platform = 'android'"  # the outcome's claim
    assert count.segment.startswith("android: only those that show the finding (Only 28% of android customers buy)")
    assert count.verified_value == 36 and count.verdict == ValidationStatus.confirmed
    assert "only those that show the finding" in llm.calls[2].messages[0].content  # the verifier is told
    assert "only those that show the finding" in llm.calls[2].system[0].text  # and how to count them
    # the segment's size as the affected count: the warehouse counts 36 with the outcome, not 50
    llm = ReplayLLM({"verify": [total, json.dumps({"query": rate_sql}), json.dumps({"query": outcome_sql})]})
    ins = android(50)
    assert verifier(world, llm).verify(ins).status == ValidationStatus.adjusted
    assert ins.claims[-1].verdict == ValidationStatus.adjusted and ins.claims[-1].verified_value == 36


def test_the_share_rule_says_the_whole_is_the_period_s_rows():
    """The verifier prompt had said the segment bounds all of segment_value and, one clause later, that a share's
    whole is not the segment: a model reported the two as contradictory. Each metric now has one rule."""
    from assay.validate.verify import CLAIM_PROMPT

    assert "For a rate, an average, a sum or a count, the segment's condition bounds all of segment_value" \
        in CLAIM_PROMPT
    assert "For a share, the condition selects the part only" in CLAIM_PROMPT
    assert "the segment's condition bounds all of segment_value (a rate's numerator and denominator), the " \
           "baseline's all of" not in CLAIM_PROMPT


def test_the_contract_asks_for_material_findings_and_calls_a_non_difference_context():
    """Round 5's gaming run reported "boosters do not help" twice and a product's small revenue: the contract names
    both as context and asks for the most material findings first, fewer when fewer are material."""
    from assay.analysis.discipline import INSIGHTS_CONTRACT

    text = " ".join(INSIGHTS_CONTRACT.split())
    assert "no difference (that something does not help, does not change or does not differ)" in text
    assert "the most material first (the largest effect on the most entities), and fewer when fewer are material" \
        in text
    assert "a gap too small to act on" in text and "a segment too small to matter" in text


# ---------------------------------------------------------------------------- round 6's verifier defects


def test_a_count_of_events_of_one_type_is_a_count_of_events(world):
    """Round 6 (ecommerce conversion-1): the claim counted "add_to_cart events", the verifier's query counted rows of
    events (the condition picks the type), and the entity check held them as another entity: a corrective round,
    then `error`. The counted entity is compared by its head noun."""
    from assay.validate.entity import same_entity

    assert same_entity("add_to_cart events", "event") and same_entity("purchase events", "events")
    assert same_entity("order items", "order_item") and same_entity("items", "order_item")
    assert not same_entity("customers", "event") and not same_entity("orders", "order_item")
    sql = ("SELECT count(*) AS segment_value FROM events WHERE platform = 'android' AND event_type = 'add_to_cart' "
           "AND event_at >= TIMESTAMP '2026-07-01'")
    llm = ReplayLLM({"verify": [json.dumps({"query": sql})]})
    claim = Claim(metric="count", measure="android add_to_cart events", entity="add_to_cart events",
                  segment="android add_to_cart events", segment_sql="platform = 'android' AND event_type = 'add_to_cart'",
                  period="since 2026-07-01", period_sql="event_at >= TIMESTAMP '2026-07-01'", value=100,
                  source_steps=[7])
    ins = insight(claim)
    assert verifier(world, llm).verify(ins).status == ValidationStatus.confirmed
    assert len(llm.calls) == 1  # no corrective round


def test_a_baseline_outside_the_warehouse_is_ungrounded_context_not_an_error(world):
    """Round 6 (gaming churn-1): "day-7 retention 5% against an industry benchmark of 12%": no SQL can re-derive the
    benchmark, and the claim ended `error` (a critical_wrong). The contract says baselines come from the warehouse; a
    claim whose baseline is not there is judged on its segment's value, its baseline flagged as ungrounded."""
    from assay.analysis.discipline import INSIGHTS_CONTRACT

    assert "A baseline comes from this warehouse" in INSIGHTS_CONTRACT
    seg = ("SELECT count(*) FILTER (WHERE platform = 'android' AND event_type = 'purchase') * 1.0 / "
           "count(*) FILTER (WHERE platform = 'android' AND event_type = 'add_to_cart') AS segment_value FROM events "
           "WHERE event_at >= TIMESTAMP '2026-07-01'")
    llm = ReplayLLM({"verify": [json.dumps({"query": seg})]})
    ins = insight(rate_claim(0.14, 0.30, baseline="industry benchmark 30%", baseline_sql=""))
    assert verifier(world, llm).verify(ins).status == ValidationStatus.confirmed
    c = ins.claims[0]
    assert c.verdict == ValidationStatus.confirmed and "not in the warehouse" in c.reasoning
    assert c.grounded is False and 0.30 in c.ungrounded_numbers and ins.ungrounded
    # a warehouse baseline the query leaves out is still an error
    llm = ReplayLLM({"verify": [json.dumps({"query": seg})] * 2})
    ins = insight(rate_claim(0.14, 0.52))
    assert verifier(world, llm).verify(ins).status == ValidationStatus.error


def test_a_reach_rate_counts_its_part_against_every_row():
    """Round 6 (gaming levels-2): "30% of all players never reach level 8": the condition selects who reached, the
    denominator is every player; the rule that the segment bounds all of a rate sent a corrective round."""
    stated = {"segment": "level = 8", "baseline": "level = 1"}
    sql = ("SELECT count(DISTINCT CASE WHEN level = 8 THEN player_id END) * 1.0 / (SELECT count(*) FROM players) "
           "AS segment_value, count(DISTINCT CASE WHEN level = 1 THEN player_id END) * 1.0 / "
           "(SELECT count(*) FROM players) AS baseline_value FROM level_attempts")
    assert partial_conditions(sql, stated, metric="rate") == []
    # a denominator with a condition of its own that is not the segment's is still another metric
    part = ("SELECT count(*) FILTER (WHERE platform = 'android' AND event_type = 'purchase') * 1.0 / "
            "count(*) FILTER (WHERE event_type = 'add_to_cart') AS segment_value FROM events")
    assert partial_conditions(part, {"segment": "platform = 'android'"}, metric="rate")


def test_a_change_of_a_share_follows_the_share_rule():
    """Round 6 (ecommerce revenue-1): "electronics' share of completed revenue fell" is a change of a share: its
    whole is the period's revenue, not the segment's."""
    from assay.validate.conditions import metric_kind

    assert metric_kind("change", "electronics share of completed revenue") == "share"
    assert metric_kind("change", "completed revenue") == "change" and metric_kind("rate", "share") == "rate"
    stated = {"segment": "p.category = 'electronics'", "baseline": "p.category = 'electronics' AND "
              "o.ordered_at < TIMESTAMP '2026-07-01'", "period": "o.ordered_at >= TIMESTAMP '2026-07-01'"}
    sql = ("SELECT sum(x) FILTER (WHERE p.category = 'electronics' AND o.ordered_at >= TIMESTAMP '2026-07-01') / "
           "sum(x) FILTER (WHERE o.ordered_at >= TIMESTAMP '2026-07-01') AS segment_value, "
           "sum(x) FILTER (WHERE p.category = 'electronics' AND o.ordered_at < TIMESTAMP '2026-07-01') / "
           "sum(x) FILTER (WHERE o.ordered_at < TIMESTAMP '2026-07-01') AS baseline_value "
           "FROM orders o JOIN products p USING (product_id)")
    assert partial_conditions(sql, stated, metric=metric_kind("change", "electronics share of revenue")) == []
    assert partial_conditions(sql, stated, metric="change")  # as a change of a level it would not be


def test_a_counterfactual_count_reads_an_earlier_window_on_purpose():
    """Round 6 (ecommerce conversion-1): "purchases missing since July at the pre-July rate" needs the carts and
    purchases before July; the period rule sent a corrective round. A computation bounded by another window of the
    period's own column reads outside the period on purpose; one bounded by nothing is still caught."""
    stated = {"segment": "platform = 'android'", "period": "event_at >= TIMESTAMP '2026-07-01'"}
    sql = ("WITH w AS (SELECT count(*) FILTER (WHERE event_type = 'add_to_cart' AND event_at < TIMESTAMP '2026-07-01') "
           "AS carts_before, count(*) FILTER (WHERE event_type = 'purchase' AND event_at < TIMESTAMP '2026-07-01') AS "
           "buys_before, count(*) FILTER (WHERE event_type = 'add_to_cart' AND event_at >= TIMESTAMP '2026-07-01') AS "
           "carts_after, count(*) FILTER (WHERE event_type = 'purchase' AND event_at >= TIMESTAMP '2026-07-01') AS "
           "buys_after FROM events WHERE platform = 'android') "
           "SELECT carts_after * buys_before * 1.0 / carts_before - buys_after AS segment_value FROM w")
    assert partial_conditions(sql, stated, metric="count") == []
    unbounded = sql.replace("AND event_at < TIMESTAMP '2026-07-01') AS carts_before", ") AS carts_before")
    assert any(m.startswith("period") for m in partial_conditions(unbounded, stated, metric="count"))


def test_the_verified_count_is_the_one_of_the_claim_that_states_the_affected_count(world):
    """A reader compares "claimed N, warehouse says M": M must be the re-derivation of the claim that states N, not of
    the first count claim (a real model's InsightBench run showed "claimed 41, warehouse says 116" where the 41 was
    confirmed)."""
    rows = json.dumps({"query": "SELECT count(*) AS segment_value FROM events WHERE platform = 'android' "
                                "AND event_at >= TIMESTAMP '2026-07-01'"})
    distinct = json.dumps({"query": "SELECT count(DISTINCT customer_id) AS segment_value FROM events WHERE "
                                    "platform = 'android' AND event_at >= TIMESTAMP '2026-07-01'"})
    scope = dict(metric="count", segment="android", segment_sql="platform = 'android'", baseline=None,
                 baseline_sql=None, period="since 2026-07-01", period_sql="event_at >= TIMESTAMP '2026-07-01'",
                 baseline_value=None, source_steps=[7])
    events = Claim(measure="android events", entity="events", value=200, **scope)
    customers = Claim(measure="android customers", entity="customers", value=50, **scope)
    ins = insight(events, customers, count=50, entity="customers")
    v = verifier(world, ReplayLLM({"verify": [rows, distinct]})).verify(ins)
    assert [c.verified_value for c in ins.claims] == [200, 50]
    assert v.status == ValidationStatus.confirmed and (v.claimed_count, v.verified_count) == (50, 50)


def test_an_analyst_s_word_for_a_table_s_rows_is_that_table_s_entity():
    """A real model counted rows of ``expenses`` as "expense claims" and every count query was refused (the head
    noun "claims" is not "expense"). A head noun the warehouse does not name is the analyst's word for the rows of
    the table its phrase names; a head noun the warehouse names still decides."""
    known = {"expense", "user", "department", "order", "customer"}
    assert same_entity("expense claims", "expenses", known)
    assert same_entity("pending expense claims", "expense", known)
    assert not same_entity("customer orders", "customers", known)  # orders is an entity of this warehouse
    assert not same_entity("expense claims", "users", known)  # the phrase names another table
    assert not same_entity("expense claims", "expenses")  # nothing known: the head noun alone, as before


def test_a_count_of_table_rows_named_in_the_analyst_s_words_is_confirmed_without_a_correction(world):
    rows = json.dumps({"query": "SELECT count(*) AS segment_value FROM events WHERE platform = 'android' "
                                "AND event_at >= TIMESTAMP '2026-07-01'"})
    llm = ReplayLLM({"verify": [rows]})
    ins = insight(Claim(metric="count", measure="android event records", entity="event records", segment="android",
                        segment_sql="platform = 'android'", period="since 2026-07-01",
                        period_sql="event_at >= TIMESTAMP '2026-07-01'", value=200, source_steps=[7]),
                  count=200, entity="event records")
    v = verifier(world, llm).verify(ins)
    assert v.status == ValidationStatus.confirmed and v.verified_count == 200
    assert len(llm.calls) == 1  # no corrective round


_LAST_DAY = ("date_diff('day', p.installed_at, (SELECT max(s.started_at) FROM main.sessions s "
             "WHERE s.player_id = p.player_id))")


@pytest.mark.parametrize("cut, applied", [
    ("last_active_day < 1", True),  # the stated condition, on the column the CTE renamed
    ("last_active_day < 7", False),  # another literal: another segment
    ("max_level < 1", False),  # a renamed column that names something else
    ("true", False),  # the condition dropped
])
def test_a_condition_on_a_column_a_cte_renamed_is_the_stated_condition(cut, applied):
    """Round 7 (both runs' one corrective round each): the model computed ``date_diff(...) AS last_active_day`` (or
    ``min(event_at) AS cart_at``) in a CTE and filtered the renamed column outside it; the literal-condition check
    did not find the stated condition and asked again. A renamed column is read as the expression it names (in
    both checks: the condition is there, and it bounds the whole column); another literal, an unrelated renamed
    column or a dropped condition are still refused."""
    stated = {"segment": f"p.acquisition_channel <> 'tiktok_ads' AND {_LAST_DAY} < 1",
              "baseline": f"p.acquisition_channel <> 'tiktok_ads' AND {_LAST_DAY} >= 90",
              "period": "p.installed_at < TIMESTAMP '2026-05-01'"}
    sql = (f"WITH ps AS (SELECT p.player_id, p.acquisition_channel, {_LAST_DAY} AS last_active_day, "
           "(SELECT max(a.level) FROM main.level_attempts a WHERE a.player_id = p.player_id) AS max_level "
           "FROM main.players p WHERE p.installed_at < TIMESTAMP '2026-05-01') "
           f"SELECT avg(max_level) FILTER (WHERE acquisition_channel <> 'tiktok_ads' AND {cut}) AS segment_value, "
           "avg(max_level) FILTER (WHERE acquisition_channel <> 'tiktok_ads' AND last_active_day >= 90) "
           "AS baseline_value FROM ps")
    off = missing_conditions(sql, stated, "duckdb") or partial_conditions(sql, stated, "duckdb", "average")
    assert (not off) == applied, off
    # ecommerce: an aggregate renamed in a CTE (min(event_at) AS cart_at) and the period's window read through it
    stated = {"segment": "platform = 'android' AND event_at >= TIMESTAMP '2026-07-01' AND event_at < "
                         "TIMESTAMP '2026-10-01'",
              "baseline": "platform = 'android' AND event_at < TIMESTAMP '2026-07-01'",
              "period": "event_at < TIMESTAMP '2026-10-01'"}
    sql = ("WITH s AS (SELECT session_id, min(event_at) AS cart_at, max(CASE WHEN event_type = 'purchase' THEN 1 "
           "ELSE 0 END) AS bought FROM main.events WHERE platform = 'android' AND event_at < TIMESTAMP '2026-10-01' "
           "GROUP BY 1) SELECT avg(CASE WHEN cart_at >= TIMESTAMP '2026-07-01' THEN bought END) AS segment_value, "
           "avg(CASE WHEN cart_at < TIMESTAMP '2026-07-01' THEN bought END) AS baseline_value FROM s")
    assert not missing_conditions(sql, stated, "duckdb")
    assert missing_conditions(sql.replace("cart_at >= TIMESTAMP '2026-07-01'", "cart_at >= TIMESTAMP '2026-08-01'"),
                              stated, "duckdb")


def test_the_contract_answers_round_7_s_and_insightbench_s_questions():
    """The models' feedback (round 7, InsightBench session 8): ``<>`` silently drops NULL rows; a partial last period
    was never flagged; a per-period share ("an agent's share of incidents each quarter") fit neither the share nor
    the change rule. The contract says each, with a worked example that the verifier's condition rules accept."""
    from assay.analysis.discipline import INSIGHTS_CONTRACT
    from assay.validate.conditions import metric_kind

    text = " ".join(INSIGHTS_CONTRACT.split())
    assert "col <> 'x' leaves out the rows where col is NULL" in text and "col IS DISTINCT FROM 'x'" in text
    assert "A last period that the data covers only in part" in text
    start = text.index('Example: {"metric": "change", "measure": "share of incidents')
    example = json.loads(text[start + len("Example: "):text.index("}", start) + 1])
    assert metric_kind(example["metric"], example["measure"]) == "share"  # a change of a share: the share rule
    stated = {k: example[f"{k}_sql"] for k in ("segment", "baseline", "period")}
    sql = ("SELECT count(*) FILTER (WHERE assigned_to = 'A' AND opened_at >= DATE '2024-10-01' AND opened_at < "
           "DATE '2025-01-01') * 1.0 / count(*) FILTER (WHERE opened_at >= DATE '2024-10-01' AND opened_at < "
           "DATE '2025-01-01') AS segment_value, count(*) FILTER (WHERE assigned_to = 'A' AND opened_at >= "
           "DATE '2024-01-01' AND opened_at < DATE '2024-04-01') * 1.0 / count(*) FILTER (WHERE opened_at >= "
           "DATE '2024-01-01' AND opened_at < DATE '2024-04-01') AS baseline_value FROM incidents")
    assert not missing_conditions(sql, stated)
    assert not partial_conditions(sql, stated, metric=metric_kind(example["metric"], example["measure"]))
    # the same share with the whole taken over every quarter is refused
    whole = sql.replace("count(*) FILTER (WHERE opened_at >= DATE '2024-10-01' AND opened_at < DATE '2025-01-01')",
                        "count(*)")
    assert partial_conditions(whole, stated, metric="share")


def test_with_a_goal_the_analysis_reports_every_distinct_material_finding_ranked():
    """InsightBench (session 8): the LLM analyst reported 1-3 insights per task against 4-5 truths, because the
    contract asked for the top 3 of an area. With a goal (a question) it asks for every distinct, supported, material
    finding, ranked, up to 6, and no restatements; the open discovery keeps its top 3."""
    from assay.analysis.discipline import insights_contract

    open_text, goal_text = (" ".join(insights_contract(g).split()) for g in ("", "Why do incidents take longer?"))
    assert "Report at most 3 insights for this area" in open_text and "every distinct finding" not in open_text
    assert "Report at most 3 insights" not in goal_text
    assert "report every distinct finding the results above support that bears on it and is material, not only " \
           "the top few, ranked most material first" in goal_text
    assert "at most 10 insights" in goal_text and "never a restatement of another one's number" in goal_text


def test_a_number_the_warehouse_re_derived_and_confirmed_is_not_ungrounded(world):
    """Round 7 (ecommerce conversion-1): "about 6,600 orders lost" was carts times the fall of a rate, arithmetic the
    grounding check does not recompute; the verifier re-derived it blind and confirmed it, and the insight was still
    flagged ungrounded. A number the warehouse confirmed traces to the warehouse; one it did not confirm, or could not
    re-derive (a baseline from outside it), stays flagged."""
    lost_sql = ("SELECT count(*) FILTER (WHERE platform = 'android' AND event_type = 'add_to_cart') - "
                "count(*) FILTER (WHERE platform = 'android' AND event_type = 'purchase') AS segment_value "
                "FROM events WHERE event_at >= TIMESTAMP '2026-07-01'")

    def lost(value):
        return Claim(metric="count", measure="android carts not followed by a purchase", entity="events",
                     segment="android", segment_sql="platform = 'android'", period="since 2026-07-01",
                     period_sql="event_at >= TIMESTAMP '2026-07-01'", value=value, source_steps=[7])

    ins = insight(rate_claim(), lost(86))
    ground_insight(ins, world[2])
    assert ins.claims[1].ungrounded_numbers == [86] and ins.ungrounded  # no step shows 86
    llm = ReplayLLM({"verify": [json.dumps({"query": RATE_SQL}), json.dumps({"query": lost_sql})]})
    assert verifier(world, llm).verify(ins).status == ValidationStatus.confirmed
    c = ins.claims[1]
    assert c.verified_value == 86 and c.grounded and not c.ungrounded_numbers and not ins.ungrounded
    assert "the warehouse's re-derivation confirmed it" in c.reasoning
    # a number the warehouse does not confirm stays ungrounded
    ins = insight(rate_claim(), lost(40))
    llm = ReplayLLM({"verify": [json.dumps({"query": RATE_SQL}), json.dumps({"query": lost_sql})]})
    assert verifier(world, llm).verify(ins).status != ValidationStatus.confirmed
    assert ins.claims[1].ungrounded_numbers == [40] and ins.ungrounded


def test_round_8_s_feedback_is_in_the_prompts():
    """Round 8's models: an area whose own question a non-difference answers (do boosters help?) could only answer
    with an empty list; the change rule (period_sql the later period, baseline_sql the earlier) was only in the
    checking prompt; both verifiers were refused an equivalent form of a stated condition (a join for IN (SELECT ...),
    row_number() for LIMIT) without being told the check is literal."""
    from assay.analysis.discipline import INSIGHTS_CONTRACT
    from assay.validate.verify import CLAIM_PROMPT

    text = " ".join(INSIGHTS_CONTRACT.split())
    assert "When the goal or this area's own question asks something that a non-difference answers" in text
    assert "A change compares two periods: segment_sql the segment, period_sql the later period" in text
    prompt = " ".join(CLAIM_PROMPT.split())
    assert "The check is literal: an equivalent form (a join instead of IN (SELECT ...), row_number() instead of " \
           "LIMIT) is refused" in prompt


def test_a_rates_verdict_reads_in_percents_as_the_report_shows_it():
    """A new user's walkthrough (session 23): `assay verify` printed "claimed 0.1483 vs 0.2013" where `assay show`
    printed "14.8% vs 20.1%" for the same claim."""
    status, why = judge(Claim(metric="rate", value=0.1483, baseline_value=0.2013), 0.1481, 0.2015)
    assert status == ValidationStatus.confirmed and why == "claimed 14.8% vs 20.1%; warehouse 14.8% vs 20.2%"
    status, why = judge(Claim(metric="share", value=14.0), 0.30, None)  # written as a percent: read as one
    assert status == ValidationStatus.adjusted and why.startswith("claimed 14.0%; warehouse 30.0%"), why
    assert judge(Claim(metric="count", value=66), 66, None)[1] == "claimed 66; warehouse 66"
    # a rate's change, as the statistical analyst states it (session 24: "0.2158 vs 0.03628")
    change = Claim(metric="change", measure="refunded rate (monthly share of rows)", value=0.2158,
                   baseline_value=0.03628)
    assert judge(change, 0.2158, 0.0363)[1] == "claimed 21.6% vs 3.6%; warehouse 21.6% vs 3.6%"
    assert judge(Claim(metric="change", measure="revenue", value=1204, baseline_value=1500), 1204, 1500)[1] == \
        "claimed 1,204 vs 1,500; warehouse 1,204 vs 1,500"
