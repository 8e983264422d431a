"""Fit statistics and a share's whole as claims (#16, session 11). Round 8's InsightBench model found "closed_at
follows the open date almost exactly, R² 0.99999" and had no claim kind for it, and fit "78 of 128 open incidents"
to the share rule only by guesswork. A fit (slope, r, R² of y on x) and a share's whole are parsed, grounded,
re-derived blind by the verifier (scripted LLM writing the SQL) and judged with their stated tolerances."""

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
from assay.validate.fit import fit_expression, fit_numbers, off_fit
from assay.validate.grounding import ground_claim
from assay.validate.verify import Verifier, claim_definition
from assay.warehouse.duckdb import DuckDBWarehouse
from assay.warehouse.guard import SQLGuard

C, A, R, E = (ValidationStatus.confirmed, ValidationStatus.adjusted, ValidationStatus.rejected,
              ValidationStatus.error)

DAYS = "date_diff('day', DATE '2024-01-01', {})"
Y, X = DAYS.format("closed_at"), DAYS.format("opened_at")
R2_SQL = (f"SELECT regr_r2({Y}, {X}) FILTER (WHERE state = 'closed') AS segment_value FROM incidents "
          "WHERE opened_at >= DATE '2024-01-01'")


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """200 incidents: closed ones close 2 days after opening (give or take a day), one agent holds 78 of the 128
    open ones; the daily count of a 30-day series rises by 2 a day."""
    path = tmp_path_factory.mktemp("fit") / "w.duckdb"
    con = duckdb.connect(str(path))
    con.execute("""
        CREATE TABLE incidents AS SELECT i AS id,
            DATE '2024-01-01' + INTERVAL (i) DAY AS opened_at,
            CASE WHEN i < 72 THEN DATE '2024-01-03' + INTERVAL (i + i % 3 - 1) DAY END AS closed_at,
            CASE WHEN i < 72 THEN 'closed' ELSE 'open' END AS state,
            CASE WHEN i >= 72 AND i < 150 THEN 'A' WHEN i % 2 = 0 THEN 'B' ELSE 'C' END AS assigned_to
        FROM range(0, 200) t(i);
        CREATE TABLE daily AS SELECT i AS day, 10 + 2 * i + (i % 2) AS n FROM range(0, 30) t(i);
    """)
    con.close()
    wh = DuckDBWarehouse(str(path))
    tables = wh.list_tables()
    steps = {}
    for n, sql in ((5, f"SELECT {X} AS opened_day, {Y} AS closed_day FROM incidents WHERE state = 'closed' "
                       "ORDER BY 1 LIMIT 60"),
                   (6, "SELECT day, n FROM daily ORDER BY day"),
                   (8, "SELECT assigned_to, count(*) AS incidents FROM incidents WHERE state = 'open' GROUP BY 1 "
                       "ORDER BY 2 DESC"),
                   (9, "SELECT state, assigned_to, count(*) AS incidents FROM incidents GROUP BY 1, 2 ORDER BY 1, 2")):
        table = wh.query(sql, row_cap=100, timeout_s=30).table
        steps[n] = ExplorationStep(run_id="r", step=n, action=StepAction.query, purpose=f"step {n}", query=sql,
                                   row_count=table.num_rows, digest=build_compact_result(table))
    yield wh, tables, steps
    wh.close()


def verifier(world, llm):
    wh, tables, steps = world
    ex = Executor(wh, SQLGuard("duckdb", tables=tables, default_schema="main"),
                  WarehouseConfig(kind="duckdb", settings={}), llm)
    return Verifier(llm=llm, executor=ex, steps=steps, catalog="- main.incidents\n- main.daily")


def r2_claim(value=0.99999, **kw) -> Claim:
    fields = dict(metric="fit", statistic="r2", measure="close time following open time", entity="incidents",
                  y="closed at, in days", y_sql=Y, x="opened at, in days", x_sql=X, segment="closed incidents",
                  segment_sql="state = 'closed'", period="since 2024", period_sql="opened_at >= DATE '2024-01-01'",
                  value=value, source_steps=[5])
    fields.update(kw)
    return Claim(**fields)


def one(*claims) -> Insight:
    return Insight(id="resolution-1", area="resolution", name="closed_at follows opened_at",
                   description="closed_at follows the open date almost exactly", claims=list(claims),
                   source_steps=sorted({n for c in claims for n in c.source_steps}))


# ---------------------------------------------------------------------------- the contract


def test_a_fit_parses_as_the_model_writes_it_and_old_answers_still_parse():
    ans = AnalysisAnswer.model_validate({"insights": [{"name": "closes follow opens", "description": "R² 0.99999",
                                                       "claims": [{"metric": "R²", "value": "0.99999"},
                                                                  {"metric": "correlation", "value": -0.8},
                                                                  {"metric": "fit", "statistic": "R-squared",
                                                                   "value": 0.5, "y_sql": "a", "x_sql": "b"},
                                                                  {"metric": "slope", "value": 2}]}]})
    got = [(c.metric, c.statistic) for c in ans.insights[0].claims]
    assert got == [(MetricKind.fit, "r2"), (MetricKind.fit, "r"), (MetricKind.fit, "r2"), (MetricKind.fit, "slope")]
    old = AnalysisAnswer.model_validate({"insights": [{"name": "A holds open ones", "description": "61%", "claims": [
        {"metric": "share", "segment_sql": "assigned_to = 'A'", "value": 0.61, "whole": None}]}]}).insights[0]
    assert old.claims[0].whole == "" and old.claims[0].whole_sql == "" and old.claims[0].statistic == ""


def test_the_contract_s_worked_fit_example_is_what_the_verifier_accepts():
    from assay.analysis.discipline import INSIGHTS_CONTRACT

    text = " ".join(INSIGHTS_CONTRACT.split())
    assert "fit)" in text  # the metric list names it
    start = text.index('Example: {"metric": "fit"')
    example = Claim.model_validate(json.loads(text[start + len("Example: "):text.index("}", start) + 1]))
    assert example.metric == MetricKind.fit and example.statistic == "r2"
    sql = (f"SELECT {fit_expression('r2', example.y_sql, example.x_sql, where=example.segment_sql)} AS segment_value "
           "FROM incidents")
    assert not off_fit(sql, example, "duckdb")
    assert not missing_conditions(sql, {"segment": example.segment_sql}, "duckdb")
    # the whole's example: the share rule with the whole bounding both sides
    assert "whole_sql \"state = 'open'\"" in text


# ---------------------------------------------------------------------------- the verdict arithmetic


@pytest.mark.parametrize("stat,claimed,base,found,fbase,want", [
    ("slope", 2.0, None, 2.15, None, C),        # within 10% relative
    ("slope", 2.0, None, 2.5, None, A),         # same sign, 25% off
    ("slope", 2.0, None, -2.0, None, R),        # the trend goes the other way
    ("r", -0.9, None, -0.93, None, C),          # within 0.05 absolute
    ("r", -0.9, None, -0.7, None, A),
    ("r", -0.9, None, 0.9, None, R),            # the sign is wrong
    ("r", 0.6, None, 0.02, None, R),            # a claimed relation that is not there
    ("r", 0.02, None, -0.03, None, C),          # "no relation", and none there
    ("r2", 0.99999, None, 0.9998, None, C),
    ("r2", 99.9, None, 0.998, None, C),         # R² written as a percent
    ("r2", 0.8, None, 0.005, None, R),
    ("r2", 0.8, None, 0.6, None, A),
    ("r", -0.99, 0.17, -0.98, 0.2, C),          # two fits compared, each within tolerance
    ("r", -0.99, 0.17, 0.18, -0.97, R),         # the comparison goes the other way
    ("slope", 200.0, 67.0, 201.0, 70.0, C),
    ("slope", 200.0, 67.0, 201.0, 90.0, A),
    ("r2", 0.9, 0.5, 0.7, 0.7, R),              # the warehouse shows no difference between the two fits
])
def test_fit_tolerances(stat, claimed, base, found, fbase, want):
    c = Claim(metric="fit", statistic=stat, value=claimed, baseline_value=base,
              baseline="other" if base is not None else "", baseline_sql="TRUE" if base is not None else "")
    assert judge(c, found, fbase)[0] == want


def test_fit_sql_in_each_dialect():
    assert fit_expression("slope", "y", "x") == "regr_slope(y, x)"
    assert fit_expression("r2", "y", "x", where="g = 1") == "regr_r2(y, x) FILTER (WHERE g = 1)"
    bq = fit_expression("slope", "y", "x", "bigquery", where="g = 1")
    assert "REGR" not in bq.upper() and "COVAR_POP" in bq.upper() and "VAR_POP" in bq.upper()
    assert "POWER(CORR" in fit_expression("r2", "y", "x", "bigquery").upper()
    con = duckdb.connect()
    got = con.sql(f"SELECT {fit_expression('slope', 'y', 'x')} FROM (SELECT i AS x, 3 * i AS y FROM range(9) t(i))")
    assert got.fetchall()[0][0] == pytest.approx(3.0)


# ---------------------------------------------------------------------------- grounding


def test_a_fit_read_off_a_step_s_rows_is_grounded_by_recomputing_it(world):
    steps = world[2]
    series = Claim(metric="fit", statistic="slope", measure="daily count trend", y="count", y_sql="n", x="day",
                   x_sql="day", value=2.0, source_steps=[6])
    assert ground_claim(series, steps, [6]) == [] and series.grounded  # no cell holds 2.0: recomputed
    assert any(abs(v - 2.0) < 0.01 for v in fit_numbers(steps[6]))
    assert ground_claim(r2_claim(), steps, [5]) == []  # the closes' R² on the step's 60 rows rounds to 0.99
    assert ground_claim(r2_claim(0.42), steps, [5]) == [0.42]


# ---------------------------------------------------------------------------- blind re-derivation


def test_the_verifier_re_derives_a_fit_blind_and_judges_it(world):
    seen = []

    def answer(req):
        seen.append(req.messages[0].content)
        return json.dumps({"query": R2_SQL})

    ins = one(r2_claim())
    assert verifier(world, ReplayLLM({"verify": [answer]})).verify(ins).status == C
    c = ins.claims[0]
    assert c.verified_value == pytest.approx(0.998, abs=2e-3) and c.grounded
    shown = json.loads(seen[0].split("\n")[1])
    assert shown["statistic"] == "r2" and shown["y_sql"] == Y and shown["x_sql"] == X
    assert "0.99999" not in seen[0] and "value" not in shown  # blind: the definition, never the value
    assert "fit r2 of closed at, in days on opened at, in days" in claim_line(c)
    # a wrong R² is not confirmed
    ins = one(r2_claim(0.5))
    assert verifier(world, ReplayLLM({"verify": [json.dumps({"query": R2_SQL})]})).verify(ins).status == A


def test_a_query_that_computes_another_statistic_or_drops_x_is_refused(world):
    corr_for_slope = R2_SQL.replace("regr_r2", "avg").replace(f", {X})", ")")
    ins = one(r2_claim())
    llm = ReplayLLM({"verify": [json.dumps({"query": corr_for_slope}), json.dumps({"query": corr_for_slope})]})
    assert verifier(world, llm).verify(ins).status == E
    assert "statistic (r2" in ins.claims[0].reasoning
    on_id = R2_SQL.replace(f", {X})", ", id)")  # R² on another x
    ins = one(r2_claim())
    llm = ReplayLLM({"verify": [json.dumps({"query": on_id}), json.dumps({"query": on_id})]})
    assert verifier(world, llm).verify(ins).status == E
    assert f"x ({X})" in ins.claims[0].reasoning and "y (" not in ins.claims[0].reasoning
    # x computed in a subquery and named there is the stated x
    renamed = (f"SELECT regr_r2(c, o) AS segment_value FROM (SELECT {Y} AS c, {X} AS o, state FROM incidents "
               "WHERE opened_at >= DATE '2024-01-01') t WHERE state = 'closed'")
    assert not off_fit(renamed, r2_claim(), "duckdb")
    # the corrective round names the statistic, then the right query is accepted
    ins = one(r2_claim())
    llm = ReplayLLM({"verify": [json.dumps({"query": corr_for_slope}), json.dumps({"query": R2_SQL})]})
    assert verifier(world, llm).verify(ins).status == C
    assert llm.calls[1].messages[0].content.startswith("REFUSED") and "statistic (r2" in llm.calls[1].messages[0].content


# ---------------------------------------------------------------------------- a share's whole


def share_claim(**kw) -> Claim:
    fields = dict(metric="share", measure="share of open incidents assigned to agent A", entity="incidents",
                  segment="agent A", segment_sql="assigned_to = 'A'", whole="open incidents",
                  whole_sql="state = 'open'", value=0.61, source_steps=[8])
    fields.update(kw)
    return Claim(**fields)


OF_OPEN = ("SELECT count(*) FILTER (WHERE assigned_to = 'A') * 1.0 / count(*) AS segment_value FROM incidents "
           "WHERE state = 'open'")


def test_a_share_of_its_stated_whole_is_re_derived_on_that_whole(world):
    c = share_claim()
    assert ground_claim(c, world[2], [8]) == []  # 78 / 128 from the step's rows (part over the column total)
    assert claim_definition(c)["whole_sql"] == "state = 'open'" and "0.61" not in json.dumps(claim_definition(c))
    ins = one(c)
    assert verifier(world, ReplayLLM({"verify": [json.dumps({"query": OF_OPEN})]})).verify(ins).status == C
    assert ins.claims[0].verified_value == pytest.approx(78 / 128)


def test_a_share_over_another_whole_is_refused(world):
    every_row = OF_OPEN.replace(" WHERE state = 'open'", "")  # 78 of 200: the whole left out
    numerator_only = ("SELECT count(*) FILTER (WHERE assigned_to = 'A' AND state = 'open') * 1.0 / count(*) "
                      "AS segment_value FROM incidents")
    stated = {"segment": "assigned_to = 'A'", "whole": "state = 'open'"}
    assert missing_conditions(every_row, stated, "duckdb") == ["whole (state = 'open')"]
    assert partial_conditions(numerator_only, {"segment": "assigned_to = 'A'", "period": "(state = 'open')"},
                              "duckdb", "share")
    for sql in (every_row, numerator_only):
        ins = one(share_claim())
        llm = ReplayLLM({"verify": [json.dumps({"query": sql}), json.dumps({"query": sql})]})
        assert verifier(world, llm).verify(ins).status == E, sql
        assert "whole" in ins.claims[0].reasoning or "period" in ins.claims[0].reasoning
    # an old share without a whole keeps the old rule: all of the period's rows
    ins = one(share_claim(whole="", whole_sql="", value=0.39))
    assert verifier(world, ReplayLLM({"verify": [json.dumps({"query": every_row})]})).verify(ins).status == C


def test_the_grounding_check_recomputes_a_share_on_its_stated_whole(world):
    """Step 9 shows incidents by state and agent: 78 of the 128 open ones are A's. No cell holds 128 and no ratio of
    two cells is 0.61, so only the share of the stated whole, recomputed on the step's rows, grounds it."""
    from assay.validate.grounding import share_numbers

    steps = world[2]
    c = share_claim(source_steps=[9], segment_sql="i.assigned_to = 'A'")  # qualifiers are dropped on the rows
    assert any(abs(v - 78 / 128) < 1e-9 for v in share_numbers(steps[9], c.segment_sql, c.whole_sql))
    assert ground_claim(c, steps, [9]) == [] and c.grounded
    old = share_claim(source_steps=[9], whole="", whole_sql="")  # without its whole: traces to nothing
    assert ground_claim(old, steps, [9]) == [0.61]
    other = share_claim(source_steps=[9], whole_sql="state = 'closed'")  # A holds none of the closed ones
    assert ground_claim(other, steps, [9]) == [0.61]
    assert share_numbers(steps[8], c.segment_sql, c.whole_sql) == []  # step 8's rows carry no state column


def test_the_contract_s_worked_example_of_a_funnel_step_s_affected_count():
    """Item 4: the affected count of a funnel step's rate is the entities that reached the step and did not take the
    next one, stated as a count claim whose condition the verifier's rules accept (and refuse without the outcome)."""
    from assay.analysis.discipline import INSIGHTS_CONTRACT
    from assay.validate.entity import entity_of_sql, same_entity

    text = " ".join(INSIGHTS_CONTRACT.split())
    start = text.index('a funnel step\'s rate (the entities that reached the step and did not take the next one): {')
    start = text.index("{", start)
    example = Claim.model_validate(json.loads(text[start:text.index("}", start) + 1]))
    assert example.metric == MetricKind.count and example.value == 1840
    assert '"affected_count": 1840 and "affected_entity": "accounts"' in text
    stated = {"segment": example.segment_sql, "period": example.period_sql}
    sql = ("SELECT count(DISTINCT account_id) AS segment_value FROM accounts WHERE plan = 'team' AND "
           "trial_start_date IS NOT NULL AND converted_at IS NULL AND created_at >= TIMESTAMP '2025-03-01'")
    assert not missing_conditions(sql, stated) and not partial_conditions(sql, stated, metric="count")
    assert same_entity(example.entity, entity_of_sql(sql), {"accounts"})
    # the segment's size (the outcome left out) is not the affected count
    size = sql.replace(" AND converted_at IS NULL", "")
    assert missing_conditions(size, stated) == [f"segment ({example.segment_sql})"]


def test_the_verifier_is_shown_the_statistic_in_its_warehouses_dialect():
    """BigQuery has no regr_slope / regr_r2: the definition the verifier reads carries the statistic as this
    warehouse's SQL (y first), so the re-derivation does not start from a function the engine lacks."""
    from assay.models import Claim
    from assay.validate.verify import claim_definition

    c = Claim(metric="slope", measure="processing days per amount", y="days", y_sql="days", x="amount",
              x_sql="amount", segment="all", segment_sql="TRUE", value=0.0038)
    assert claim_definition(c, "duckdb")["statistic_sql"] == "regr_slope(days, amount)"
    bq = claim_definition(c, "bigquery")["statistic_sql"].upper()
    assert "REGR" not in bq and "COVAR_POP(DAYS, AMOUNT)" in bq and "VAR_POP(AMOUNT)" in bq


def test_the_slope_reads_y_then_x_in_the_statistics_own_call():
    """The reviewer's cases: regr_slope(x, y) is the slope of x on y, and a query whose regr_slope reads other
    columns while a corr() reads y and x computes another statistic; a word in a comment is no call. The covar/var
    form of the slope and either order of r's arguments are accepted."""
    from assay.models import Claim

    c = Claim(metric="slope", measure="days to close per day opened", y="closed", y_sql="closed", x="opened",
              x_sql="opened", segment="all", segment_sql="TRUE", value=1.0)
    assert off_fit("SELECT regr_slope(closed, opened) AS segment_value FROM t", c, "duckdb") == []
    swapped = off_fit("SELECT regr_slope(opened, closed) AS segment_value FROM t", c, "duckdb")
    assert swapped and "in that order" in swapped[0]
    assert off_fit("SELECT regr_slope(a, b), corr(closed, opened) AS segment_value FROM t", c, "duckdb")
    assert off_fit("SELECT corr(closed, opened) AS segment_value FROM t -- regr_slope(closed, opened)", c,
                   "duckdb")[0].startswith("statistic (slope")
    assert off_fit("SELECT covar_pop(closed, opened) / var_pop(opened) AS segment_value FROM t", c, "duckdb") == []
    r = c.model_copy(update={"statistic": "r", "metric": "fit"})
    assert off_fit("SELECT corr(opened, closed) AS segment_value FROM t", r, "duckdb") == []


def test_a_shares_conditions_run_on_the_stored_rows_only_as_row_conditions(world):
    """The reviewer's case: the grounding check recomputes a share on a step's stored rows in an in-process DuckDB,
    from the model's segment_sql; a subquery reading a file (or any call off the guard's list) ran there unguarded.
    Such a condition is not recomputed (the claim is then grounded, or not, by the other rules)."""
    from assay.validate.grounding import share_numbers

    steps = world[2]
    c = share_claim(source_steps=[9])
    assert any(abs(v - 78 / 128) < 1e-9 for v in share_numbers(steps[9], c.segment_sql, c.whole_sql))
    for cond in (c.segment_sql + " AND (SELECT count(*) FROM read_text('/etc/hostname')) = 1",
                 c.segment_sql + " AND getenv('HOME') IS NOT NULL"):
        assert share_numbers(steps[9], cond, c.whole_sql) == []
