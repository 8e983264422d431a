"""A sum as a claim (#16, session 12). Every model of round 10 asked for a money total ("revenue of paid_social
customers is $1.2M"); "sum" and "total" parsed as a count, so a total was checked as a row count. A sum is parsed,
grounded on the cited step's rows, re-derived blind by the verifier (scripted LLM writing the SQL) and judged with the
mean's tolerances; a query that counts rows or sums another expression is refused."""

from __future__ import annotations

import json

import duckdb
import pytest

from assay.digest import build_compact_result
from assay.explore.executor import Executor
from assay.llm.scripted import ReplayLLM
from assay.models import AnalysisAnswer, Claim, ExplorationStep, Insight, MetricKind, StepAction, ValidationStatus, \
    WarehouseConfig
from assay.report.claims import claim_line
from assay.validate.compare import judge
from assay.validate.conditions import missing_conditions, partial_conditions
from assay.validate.grounding import ground_claim, sum_numbers
from assay.validate.sums import off_sum, sum_expression
from assay.validate.verify import CLAIM_PROMPT, Verifier, claim_definition
from assay.warehouse.duckdb import DuckDBWarehouse
from assay.warehouse.guard import SQLGuard

C, A, R, E = (ValidationStatus.confirmed, ValidationStatus.adjusted, ValidationStatus.rejected,
              ValidationStatus.error)

REVENUE = "oi.quantity * oi.unit_price"
SOURCE = "order_items oi JOIN orders o USING (order_id)"
SUM_SQL = (f"SELECT sum({REVENUE}) FILTER (WHERE o.channel = 'paid_social') AS segment_value, "
           f"sum({REVENUE}) FILTER (WHERE o.channel <> 'paid_social') AS baseline_value "
           f"FROM {SOURCE} WHERE o.ordered_at >= DATE '2025-01-01'")


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """300 orders over 2024-2025 on two channels, each with two items: quantity 1-3 at a price of 10-59, so the
    revenue is not any row count."""
    path = tmp_path_factory.mktemp("sum") / "w.duckdb"
    con = duckdb.connect(str(path))
    con.execute("""
        CREATE TABLE orders AS SELECT i AS order_id, DATE '2024-01-01' + INTERVAL (i * 2) DAY AS ordered_at,
            CASE WHEN i % 3 = 0 THEN 'paid_social' ELSE 'organic' END AS channel FROM range(0, 300) t(i);
        CREATE TABLE order_items AS SELECT o.order_id, k AS item, 1 + (o.order_id + k) % 3 AS quantity,
            10 + (o.order_id * 7 + k) % 50 AS unit_price FROM orders o, range(0, 2) t(k);
    """)
    con.close()
    wh = DuckDBWarehouse(str(path))
    tables = wh.list_tables()
    sql = (f"SELECT o.channel, date_trunc('quarter', o.ordered_at) AS quarter, sum({REVENUE}) AS revenue, "
           f"count(*) AS items FROM {SOURCE} WHERE o.ordered_at >= DATE '2025-01-01' GROUP BY 1, 2 ORDER BY 1, 2")
    table = wh.query(sql, row_cap=100, timeout_s=30).table
    steps = {4: ExplorationStep(run_id="r", step=4, action=StepAction.query, purpose="revenue by channel and quarter",
                                query=sql, row_count=table.num_rows, digest=build_compact_result(table))}
    truth = wh.query(SUM_SQL, row_cap=10, timeout_s=30).table.to_pylist()[0]
    yield wh, tables, steps, truth
    wh.close()


def verifier(world, llm):
    wh, tables, steps, _ = world
    ex = Executor(wh, SQLGuard("duckdb", tables=tables, default_schema="main"),
                  WarehouseConfig(kind="duckdb", settings={}), llm)
    return Verifier(llm=llm, executor=ex, steps=steps, catalog="- main.orders\n- main.order_items")


def revenue(value, base=None, **kw) -> Claim:
    fields = dict(metric="sum", measure="revenue", entity="order items", sum_sql=REVENUE,
                  segment="paid_social orders", segment_sql="o.channel = 'paid_social'",
                  baseline="other channels" if base is not None else "",
                  baseline_sql="o.channel <> 'paid_social'" if base is not None else "",
                  period="2025", period_sql="o.ordered_at >= DATE '2025-01-01'", value=value, baseline_value=base,
                  source_steps=[4])
    fields.update(kw)
    return Claim(**fields)


def one(*claims) -> Insight:
    return Insight(id="revenue-1", area="revenue", name="paid_social revenue", description="paid_social revenue",
                   claims=list(claims), source_steps=[4])


# ---------------------------------------------------------------------------- the contract


@pytest.mark.parametrize("written", ["sum", "Sum", "total", "TOTAL", "totals", "total amount", "sum_total"])
def test_total_and_sum_parse_as_a_sum_never_as_a_count(written):
    assert Claim(metric=written, sum_sql="price_usd").metric == MetricKind.sum
    assert Claim(metric="number").metric == MetricKind.count and Claim(metric="count").metric == MetricKind.count


def test_a_total_with_nothing_to_sum_is_a_total_count():
    """The reviewer's case: "total customers" (metric total, no sum_sql) is a count, as before the sum metric; a
    sum with nothing to sum would end in an error verdict. "sum" itself stays a sum (its check says what is missing)."""
    assert Claim(metric="total", measure="customers").metric == MetricKind.count
    assert Claim(metric="Totals", measure="orders", sum_sql="  ").metric == MetricKind.count
    assert Claim(metric="sum", measure="revenue").metric == MetricKind.sum
    assert Claim(metric="total amount", measure="revenue").metric == MetricKind.sum


def test_the_contract_s_worked_sum_example_is_what_the_verifier_accepts():
    from assay.analysis.discipline import INSIGHTS_CONTRACT

    text = " ".join(INSIGHTS_CONTRACT.split())
    assert "| sum |" in text  # the metric list names it
    start = text.index('Example: {"metric": "sum"')
    example = Claim.model_validate(json.loads(text[start + len("Example: "):text.index("}", start) + 1]))
    assert example.metric == MetricKind.sum and example.sum_sql == REVENUE and example.value == 1204500
    sql = (f"SELECT sum({example.sum_sql}) AS segment_value FROM order_items oi JOIN orders o USING (order_id) "
           f"JOIN customers c USING (customer_id) WHERE {example.segment_sql} AND {example.period_sql}")
    assert not off_sum(sql, example, "duckdb")
    assert not missing_conditions(sql, {"segment": example.segment_sql, "period": example.period_sql}, "duckdb")
    ans = AnalysisAnswer.model_validate({"insights": [{"name": "paid_social revenue", "description": "$1.2M",
                                                       "claims": [dict(example.model_dump(), metric="total")]}]})
    assert ans.insights[0].claims[0].metric == MetricKind.sum


def test_the_verifier_prompt_describes_the_sum():
    assert "For a sum (metric sum" in CLAIM_PROMPT and "never\na count of rows" in CLAIM_PROMPT


# ---------------------------------------------------------------------------- the verdict arithmetic


@pytest.mark.parametrize("claimed,base,found,fbase,want", [
    (1_200_000, None, 1_150_000, None, C),       # within 10% relative, as a mean
    (1_200_000, None, 1_000_000, None, A),       # 17% off: a count's 20% would have confirmed it
    (1_200_000, None, 0, None, R),               # nothing there
    (1_200_000, 300_000, 1_190_000, 310_000, C),
    (1_200_000, 300_000, 300_000, 1_190_000, R),  # the comparison goes the other way
    (1_200_000, 300_000, 1_000_000, 1_000_000, R),  # no effect in the warehouse
])
def test_sum_tolerances(claimed, base, found, fbase, want):
    c = revenue(claimed, base)
    assert judge(c, found, fbase)[0] == want


def test_the_sum_in_each_dialect():
    assert sum_expression(REVENUE) == f"SUM({REVENUE})"
    assert sum_expression(REVENUE, "snowflake").upper() == f"SUM({REVENUE})".upper()
    assert sum_expression("`x`", "bigquery").upper().startswith("SUM(")
    shown = claim_definition(revenue(1.0), "bigquery")
    assert shown["metric"] == "sum" and shown["sum_sql"] == REVENUE and shown["value_sql"].upper().startswith("SUM(")


# ---------------------------------------------------------------------------- grounding


def test_a_total_added_up_from_a_step_s_rows_is_grounded(world):
    steps, truth = world[2], world[3]
    total = float(truth["segment_value"])
    # no cell holds the year's total: the paid_social quarters added up on the stored rows
    assert total not in [v for r in steps[4].digest.rows() for v in r.values()]
    claim = revenue(total)
    assert ground_claim(claim, steps, [4]) == [] and claim.grounded
    assert any(abs(v - total) < 1e-6 for v in sum_numbers(steps[4], claim))
    both = revenue(total, float(truth["baseline_value"]))
    assert ground_claim(both, steps, [4]) == []
    made_up = revenue(round(total * 1.37))
    assert ground_claim(made_up, steps, [4]) == [round(total * 1.37)] and made_up.grounded is False


# ---------------------------------------------------------------------------- blind re-derivation


def test_the_verifier_re_derives_a_sum_blind_and_judges_it(world):
    truth = world[3]
    seen = []

    def answer(req):
        seen.append(req.messages[0].content)
        return json.dumps({"query": SUM_SQL})

    ins = one(revenue(float(truth["segment_value"]), float(truth["baseline_value"])))
    assert verifier(world, ReplayLLM({"verify": [answer]})).verify(ins).status == C
    c = ins.claims[0]
    assert c.verified_value == pytest.approx(float(truth["segment_value"])) and c.grounded
    shown = json.loads(seen[0].split("\n")[1])
    assert shown["metric"] == "sum" and shown["sum_sql"] == REVENUE and shown["value_sql"] == f"SUM({REVENUE})"
    assert "value" not in shown and str(int(truth["segment_value"])) not in seen[0]  # blind
    assert claim_line(c).startswith("[confirmed] sum · revenue")
    # a wrong total (+25%) is not confirmed
    ins = one(revenue(float(truth["segment_value"]) * 1.25, float(truth["baseline_value"])))
    assert verifier(world, ReplayLLM({"verify": [json.dumps({"query": SUM_SQL})]})).verify(ins).status == A


def test_a_query_that_counts_rows_or_sums_another_expression_is_refused(world):
    truth = world[3]
    counted = SUM_SQL.replace(f"sum({REVENUE})", "count(*)")
    price_only = SUM_SQL.replace(f"sum({REVENUE})", "sum(oi.unit_price)")
    for bad in (counted, price_only):
        ins = one(revenue(float(truth["segment_value"]), float(truth["baseline_value"])))
        # the corrective round is answered with the same query: refused twice, an error verdict, never confirmed
        status = verifier(world, ReplayLLM({"verify": [json.dumps({"query": bad})] * 2})).verify(ins).status
        assert status == E, bad
        assert "does not apply the claim's sum" in ins.claims[0].reasoning \
            or "summed expression" in ins.claims[0].reasoning
    c = revenue(1.0)
    assert off_sum(counted, c) and off_sum(price_only, c)
    assert not off_sum(SUM_SQL, c)
    # a column a CTE names counts as what it names
    cte = ("WITH t AS (SELECT o.channel, oi.quantity * oi.unit_price AS rev FROM order_items oi JOIN orders o "
           "USING (order_id)) SELECT sum(rev) AS segment_value FROM t WHERE channel = 'paid_social'")
    assert not off_sum(cte, c)
    # a sum stated without its expression still needs a SUM
    assert off_sum(counted, revenue(1.0, sum_sql="")) and not off_sum(SUM_SQL, revenue(1.0, sum_sql=""))


def test_the_period_must_bound_the_whole_sum(world):
    numerator_only = (f"SELECT sum({REVENUE}) FILTER (WHERE o.channel = 'paid_social' AND o.ordered_at >= DATE "
                      f"'2025-01-01') AS segment_value, sum({REVENUE}) FILTER (WHERE o.channel <> 'paid_social') AS "
                      f"baseline_value FROM {SOURCE}")
    stated = {"segment": "o.channel = 'paid_social'", "baseline": "o.channel <> 'paid_social'",
              "period": "o.ordered_at >= DATE '2025-01-01'"}
    assert any(m.startswith("period") for m in partial_conditions(numerator_only, stated, "duckdb", "sum"))
    assert not partial_conditions(SUM_SQL, stated, "duckdb", "sum")


def test_a_column_name_cannot_write_the_sql_that_grounds_a_number():
    """The totals are recomputed on a step's rows with the rows' column names in the SQL: a name with a double quote
    (an alias the explorer wrote) is one quoted identifier, never SQL that makes up a number (review, session 12)."""
    import pyarrow as pa

    evil = 'revenue") + 4242000 + sum("revenue'
    table = pa.table({"channel": ["paid_social", "organic"], "revenue": [10.0, 20.0], evil: [1.0, 2.0]})
    step = ExplorationStep(run_id="r", step=1, action=StepAction.query, purpose="p", query="SELECT 1",
                           row_count=2, digest=build_compact_result(table))
    claim = Claim(metric="sum", measure="revenue", sum_sql="revenue", segment_sql="channel = 'paid_social'",
                  value=4242040.0, source_steps=[1])
    got = sum_numbers(step, claim)
    assert 10.0 in got and 1.0 in got  # the quoted column is summed as a column
    assert not any(abs(v - 4242040.0) < 1 for v in got)
    assert ground_claim(claim, {1: step}, [1]) == [4242040.0]


def test_a_condition_recomputed_in_process_is_held_to_the_guard():
    """Red team 9 (session 25): a claim's condition is the model's text, run on the step's rows in this process.
    Each function was checked on its own, so ``list_transform(range(9999), lambda x: range(99999))`` (10^9 elements in
    this process) passed; the statement now goes through the guard for DuckDB over the rows, on a sandboxed
    connection (no file access, a memory limit, a timeout), and a refused condition grounds nothing."""
    import time

    import pyarrow as pa

    table = pa.table({"channel": ["paid_social", "organic"], "revenue": [10.0, 20.0]})
    step = ExplorationStep(run_id="r", step=1, action=StepAction.query, purpose="p", query="SELECT 1",
                           row_count=2, digest=build_compact_result(table))
    fine = Claim(metric="sum", measure="revenue", sum_sql="revenue", segment_sql="channel = 'paid_social'",
                 value=10.0, source_steps=[1])
    assert 10.0 in sum_numbers(step, fine)
    t0 = time.process_time()  # CPU, not wall: a loaded machine stretches the wall (the bomb ran for minutes)
    for cond in ["len(list_transform(range(9999), lambda x: range(99999))) > 0 AND channel = 'paid_social'",
                 "channel = 'paid_social' AND len(flatten([range(99999) for x in range(9999)])) > 0"]:
        bomb = fine.model_copy(update={"segment_sql": cond})
        assert sum_numbers(step, bomb) == [], cond
    assert time.process_time() - t0 < 15


def test_a_sum_divided_into_an_average_or_a_ratio_is_refused():
    """A SUM of the stated expression divided by a count (an average per order) or by another sum (a ratio) is no
    total: refused as off the sum, in the query itself or through a CTE's columns; a unit conversion (a division by a
    number: cents to dollars) and a division inside the summed expression stay a total (review, session 12)."""
    c = revenue(1.0)
    per_order = SUM_SQL.replace(f"sum({REVENUE}) FILTER (WHERE o.channel = 'paid_social')",
                                f"sum({REVENUE}) FILTER (WHERE o.channel = 'paid_social') * 1.0 / "
                                f"count(DISTINCT o.order_id) FILTER (WHERE o.channel = 'paid_social')")
    assert per_order != SUM_SQL and off_sum(per_order, c)
    ratio = (f"SELECT sum({REVENUE}) FILTER (WHERE o.channel = 'paid_social') / sum({REVENUE}) AS segment_value "
             f"FROM {SOURCE}")
    assert off_sum(ratio, c)
    cte = (f"WITH t AS (SELECT sum({REVENUE}) AS total, count(*) AS n FROM {SOURCE} WHERE o.channel = "
           f"'paid_social') SELECT total / n AS segment_value FROM t")
    assert off_sum(cte, c)
    cents = SUM_SQL.replace("AS segment_value", "/ 100.0 AS segment_value")
    assert cents != SUM_SQL and not off_sum(cents, c)
    assert not off_sum(f"SELECT sum(oi.quantity * oi.unit_price / 1.2) AS segment_value FROM {SOURCE}",
                       revenue(1.0, sum_sql="oi.quantity * oi.unit_price / 1.2"))
    # in a dialect's own division (BigQuery's SAFE_DIVIDE, integer division)
    assert off_sum(f"SELECT SAFE_DIVIDE(SUM({REVENUE}), COUNT(*)) AS segment_value FROM {SOURCE}", c, "bigquery")
    assert off_sum(f"SELECT SUM({REVENUE}) // COUNT(*) AS segment_value FROM {SOURCE}", c, "duckdb")
    # the period's or a rate's division beside a plain total is no concern of the sum
    beside = (f"SELECT sum({REVENUE}) AS segment_value, sum({REVENUE}) / count(*) AS per_item FROM {SOURCE}")
    assert not off_sum(beside, c)


def test_a_total_of_the_rows_a_cut_digest_kept_is_no_total_of_the_step():
    """A result over the digest's inline size keeps only its signal rows: the paid_social rows it kept, added up, are a
    part of the total, not a number the step holds; a claim of that partial total is ungrounded, as a column total is
    counted only over every row (review, session 12)."""
    import datetime as dt

    import pyarrow as pa

    months = [dt.date(2024, 1, 1) + dt.timedelta(days=31 * i) for i in range(15)]
    rows = [{"channel": ch, "month": m, "revenue": float(1000 + 37 * i + (500 if ch == "paid_social" else 0))}
            for ch in ("organic", "paid_social") for i, m in enumerate(months)]
    digest = build_compact_result(pa.Table.from_pylist(rows))
    assert digest.all_rows is None and len(digest.rows()) < 30  # cut to its signal rows
    step = ExplorationStep(run_id="r", step=1, action=StepAction.query, purpose="revenue by channel and month",
                           query="SELECT 1", row_count=30, digest=digest)
    kept = sum(r["revenue"] for r in digest.rows() if r["channel"] == "paid_social")
    full = sum(r["revenue"] for r in rows if r["channel"] == "paid_social")
    assert kept != full
    claim = Claim(metric="sum", measure="revenue", sum_sql="revenue", segment_sql="channel = 'paid_social'",
                  value=kept, source_steps=[1])
    assert sum_numbers(step, claim) == []
    assert ground_claim(claim, {1: step}, [1]) == [kept]


def test_a_change_of_a_total_shows_the_verifier_what_it_sums_and_is_held_to_it():
    """Round 14 (ecommerce): a fall of revenue between periods, metric change with sum_sql, reached the verifier as
    its measure's words only; a change that states sum_sql carries it (and its aggregate) and is checked as a sum."""
    from assay.validate.verify import claim_definition

    change = Claim(metric="change", measure="revenue", sum_sql="price_usd", segment="cross_promo",
                   segment_sql="acquisition_channel = 'cross_promo'", period_sql="month = 10",
                   baseline_sql="acquisition_channel = 'cross_promo' AND month = 9", value=1127.0,
                   baseline_value=286.3)
    d = claim_definition(change, "duckdb")
    assert d["sum_sql"] == "price_usd" and d["value_sql"].upper().replace(" ", "") == "SUM(PRICE_USD)"
    counted = "SELECT count(*) AS segment_value FROM purchases WHERE acquisition_channel = 'cross_promo'"
    assert off_sum(counted, change, "duckdb")
    rate = Claim(metric="change", measure="conversion", segment_sql="x = 1", value=0.2, baseline_value=0.1)
    assert "sum_sql" not in claim_definition(rate, "duckdb")


def test_a_change_of_a_share_of_a_total_is_checked_as_a_share_of_that_total(world):
    """Round 19 (ecommerce): "android's share of completed revenue fell from 0.318 to 0.120", metric change with
    sum_sql, was held to a change of android's revenue: the verifier's ratio was refused ("the query divides it"),
    its plain SUM compared 76,155 with 0.12 and the critical insight was marked adjusted."""
    from assay.validate.verify import shares_a_total, sums_a_column

    wh = world[0]
    rev = f"sum({REVENUE})"
    share = (f"SELECT {rev} FILTER (WHERE o.channel = 'paid_social' AND o.ordered_at >= DATE '2025-01-01') / "
             f"{rev} FILTER (WHERE o.ordered_at >= DATE '2025-01-01') AS segment_value, "
             f"{rev} FILTER (WHERE o.channel = 'paid_social' AND o.ordered_at < DATE '2025-01-01') / "
             f"{rev} FILTER (WHERE o.ordered_at < DATE '2025-01-01') AS baseline_value FROM {SOURCE}")
    truth = wh.query(share, row_cap=10, timeout_s=30).table.to_pylist()[0]
    claim = revenue(round(float(truth["segment_value"]), 3), round(float(truth["baseline_value"]), 3),
                    metric="change", measure="paid_social share of revenue",
                    baseline="paid_social orders in 2024",
                    baseline_sql="o.channel = 'paid_social' AND o.ordered_at < DATE '2025-01-01'")
    assert shares_a_total(claim) and not sums_a_column(claim)
    d = claim_definition(claim, "duckdb")
    assert d["sum_sql"] == REVENUE and "share" in d["measure"]  # the verifier sees what the share is of
    assert "value_sql" not in d  # the share is no SUM: a bare total would be the wrong number
    assert "a share of revenue, or its change; no value_sql" in " ".join(CLAIM_PROMPT.split())
    ins = one(claim)
    assert verifier(world, ReplayLLM({"verify": [json.dumps({"query": share})]})).verify(ins).status == C
    assert ins.claims[0].verified_value == pytest.approx(float(truth["segment_value"]))
    # a share of rows (the review's case: 0.333 against the revenue share's 0.25) or the bare total is refused, twice:
    # an error verdict, never an adjusted one with another number
    rows = share.replace(f"{rev} FILTER", "count(*) FILTER")
    bare = (f"SELECT {rev} FILTER (WHERE o.channel = 'paid_social' AND o.ordered_at >= DATE '2025-01-01') AS "
            f"segment_value, {rev} FILTER (WHERE o.channel = 'paid_social' AND o.ordered_at < DATE '2025-01-01') "
            f"AS baseline_value FROM {SOURCE}")
    for wrong in (rows, bare):
        ins = one(claim.model_copy())
        assert verifier(world, ReplayLLM({"verify": [json.dumps({"query": wrong})] * 2})).verify(ins).status == E
        assert "share of a total" in ins.claims[0].reasoning, ins.claims[0].reasoning
    # a change of the total itself is still held to its SUM
    total = claim.model_copy(update={"measure": "paid_social revenue"})
    assert sums_a_column(total) and not shares_a_total(total) and off_sum(share, total, "duckdb")
