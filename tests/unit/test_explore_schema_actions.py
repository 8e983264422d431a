"""What a real model hit learning the schema (#15 item 2), replayed with a scripted LLM on real DuckDB.

The real run: one lookup_schema of several tables came back as 3 tables x 3 columns, the rest were
marked fetched anyway (asking again returned nothing), information_schema queries were refused, and
every one of those turns cost an exploration step.
"""

from __future__ import annotations

import datetime as dt
import json

import duckdb
import pandas as pd
import pyarrow as pa
import pytest

from assay import limits
from assay.digest import view_cell
from assay.llm.scripted import ReplayLLM
from assay.models import StepAction
from assay.schema.catalog import render_catalog
from assay.warehouse.duckdb import DuckDBWarehouse
from tests.helpers import make_explorer

WIDE = [f"w{i}" for i in range(6)]


@pytest.fixture(scope="module")
def wide_db(tmp_path_factory):
    path = tmp_path_factory.mktemp("wide") / "wide.duckdb"
    con = duckdb.connect(str(path))
    cols = ", ".join(f"'some fairly long text value number ' || i || ' for c{j}' AS descriptive_column_{j}"
                     for j in range(14))
    for t in WIDE:
        con.execute(f"CREATE TABLE {t} AS SELECT i AS {t}_id, {cols} FROM range(1, 51) r(i)")
    con.close()
    return path


def q(sql, purpose="p"):
    return json.dumps({"thinking": "t", "purpose": purpose, "query": sql})


def test_a_lookup_of_many_wide_tables_delivers_every_column(wide_db):
    llm = ReplayLLM({"explore": [json.dumps({"lookup_schema": [f"main.{t}" for t in WIDE]}),
                                 json.dumps({"lookup_schema": ["main.w5"]}), '{"done": true}']})
    ex = make_explorer(wide_db, llm, max_steps=5)
    steps = ex.run().steps
    data = json.loads(steps[0].result_preview)["data"]
    assert [t["table"] for t in data["tables"]] == [f"main.{t}" for t in WIDE]
    for t in data["tables"]:
        assert len(t["columns"]) == 15  # every column of every table
        assert t["columns"][1].startswith("descriptive_column_0 ")
    assert "_truncated_from" not in steps[0].result_preview
    assert sorted(steps[0].tables) == [f"main.{t}" for t in WIDE]
    assert json.loads(steps[1].result_preview)["data"]["already_fetched"] == ["main.w5"]


def test_a_table_that_does_not_fit_is_not_marked_fetched(wide_db, monkeypatch):
    monkeypatch.setattr(limits, "LOOKUP_TABLE_BUDGET_CHARS", 300)
    monkeypatch.setattr(limits, "TOOL_RESULT_BUDGET_CHARS", 300)
    monkeypatch.setattr(limits, "LOOKUP_RESULT_MAX_CHARS", 2500)
    llm = ReplayLLM({"explore": [json.dumps({"lookup_schema": [f"main.{t}" for t in WIDE]}),
                                 json.dumps({"lookup_schema": ["main.w5"]}), '{"done": true}']})
    steps = make_explorer(wide_db, llm, max_steps=5).run().steps
    first = json.loads(steps[0].result_preview)["data"]
    delivered = [t["table"] for t in first["tables"]]
    assert 1 <= len(delivered) < len(WIDE) and first["deferred"] and "main.w5" in first["deferred"]
    assert all(len(t["columns"]) == 15 for t in first["tables"])  # what is delivered is whole
    again = json.loads(steps[1].result_preview)["data"]
    assert [t["table"] for t in again["tables"]] == ["main.w5"]  # asked again: delivered now, not "already fetched"


def test_schema_actions_and_refusals_do_not_spend_steps(wide_db):
    llm = ReplayLLM({"explore": [
        json.dumps({"lookup_schema": ["main.w0"]}),
        json.dumps({"search_tables": "wide things"}),
        q("DROP TABLE w0"),
        q("SELECT column_name FROM information_schema.columns WHERE table_name = 'w1' ORDER BY ordinal_position"),
        q("SELECT count(*) AS n FROM w0"),
        q("SELECT count(*) AS n FROM w1"),
        '{"done": true, "summary": "never reached: max_steps is 2"}',
    ]})
    out = make_explorer(wide_db, llm, max_steps=2).run()
    assert out.finished == "max_steps"
    assert [s.action for s in out.steps] == [StepAction.lookup_schema, StepAction.search_tables] + [StepAction.query] * 4
    assert out.steps[2].refused
    assert [s.ok for s in out.steps[4:]] == [True, True]  # both real queries ran
    assert "Steps used: 0 of 2" in llm.calls[4].messages[-1].content
    assert "Steps used: 1 of 2" in llm.calls[5].messages[-1].content


def test_information_schema_is_answered_from_the_discovered_schema(wide_db):
    llm = ReplayLLM({"explore": [
        q("SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'w1' "
          "ORDER BY ordinal_position"),
        q("SELECT table_name FROM information_schema.tables ORDER BY 1"),
        '{"done": true}']})
    ex = make_explorer(wide_db, llm, max_steps=5)
    steps = ex.run().steps
    first = json.loads(steps[0].result_preview)
    assert first["ok"] and first["data"]["row_count"] == 15 and not steps[0].refused
    assert first["data"]["columns"] == ["column_name", "data_type"]
    assert first["data"]["rows"][0] == ["w1_id", "BIGINT"]
    names = [r[0] for r in json.loads(steps[1].result_preview)["data"]["rows"]]
    assert names == sorted(WIDE)  # the project's tables, not DuckDB's own catalog
    assert ex.counters.get("guard_refusals", 0) == 0 and ex.counters["information_schema_answers"] == 2


def test_information_schema_answers_are_held_to_the_guard(wide_db, tmp_path, monkeypatch):
    """Red team 9: the information_schema path ran whatever came with the views, with no guard, on a DuckDB with
    file access: ``LATERAL read_duckdb(<the warehouse>, ...)`` gave every tenant's rows unmasked, ``read_text`` any
    file (``/proc/self/environ``: the warehouse password and the API keys), ``range`` x ``range`` ran unbounded.
    Only a statement whose every source is one of the two views takes this path (anything else goes to the
    warehouse's guard, which refuses information_schema); it is checked by the guard for DuckDB against the two
    views, and runs with external access off."""
    from assay.explore.info_schema import answer, is_info_schema_query

    secret = tmp_path / "secret.txt"
    secret.write_text("SECRETLINE")
    monkeypatch.setenv("REDTEAM_PW", "hunter2")
    attacks = [
        f"SELECT r.* FROM information_schema.tables t, LATERAL read_duckdb('{wide_db}', table_name => 'w0') AS r",
        f"SELECT r.content FROM information_schema.tables CROSS JOIN LATERAL read_text('{secret}') AS r",
        f"SELECT * FROM information_schema.tables, read_text('{secret}')",
        f"SELECT (SELECT content FROM read_text('{secret}')) AS c FROM information_schema.tables",
        "SELECT count(*) FROM information_schema.tables a, range(1000000) b, range(1000000) c",
        "SELECT * FROM information_schema.tables, unnest([1, 2])",
        "SELECT * FROM information_schema.tables JOIN w0 ON true",
    ]
    llm = ReplayLLM({"explore": [q(a) for a in attacks] + ['{"done": true}'], "fix:explore": []})
    ex = make_explorer(wide_db, llm, max_steps=len(attacks) + 1)
    steps = [s for s in ex.run().steps if s.action == StepAction.query]
    assert [s.query for s in steps] == attacks
    for a, step in zip(attacks, steps):
        assert not is_info_schema_query(a, "duckdb"), a
        assert step.refused or step.error, a  # the warehouse's guard had them, not the local views
        assert "SECRETLINE" not in (step.result_preview or "") and "hunter2" not in (step.result_preview or "")
    assert ex.counters.get("information_schema_answers", 0) == 0
    # over the views alone, the guard's rules hold (functions, bounds), and no file is reachable
    for bad, why in [("SELECT getenv('REDTEAM_PW') FROM information_schema.tables", "allow-list"),
                     ("SELECT repeat('x', 100000000) FROM information_schema.tables", "repeat"),
                     ("SELECT table_name FROM information_schema.tables WHERE table_name IN "
                      f"(SELECT content FROM read_text('{secret}'))", "only information_schema")]:
        with pytest.raises(ValueError, match=why):
            answer(bad, "duckdb", ex.tables)
    # a self-join of the views that pads every row: cut at the row cap, read in batches under the byte budget
    import assay.warehouse.base as base

    big = answer("SELECT lpad(a.column_name, 10000, 'x') AS p FROM information_schema.columns a, "
                 "information_schema.columns b", "duckdb", ex.tables, row_cap=50)
    assert big.row_count == 50 and big.truncated
    monkeypatch.setattr(base, "MAX_RESULT_BYTES", 2**20)
    with pytest.raises(ValueError, match="the result holds more than 1 MB"):
        answer("SELECT lpad(a.column_name, 10000, 'x') AS p FROM information_schema.columns a, "
               "information_schema.columns b", "duckdb", ex.tables, row_cap=5000)
    ok = answer("WITH c AS (SELECT * FROM information_schema.columns) SELECT t.table_name, count(*) AS n "
                "FROM information_schema.tables t JOIN c USING (table_name) GROUP BY 1 ORDER BY 1", "duckdb", ex.tables)
    assert ok.row_count == len(WIDE) and ok.table.column("n").to_pylist() == [15] * len(WIDE)


def test_the_catalog_lists_column_names(wide_db):
    tables = DuckDBWarehouse(str(wide_db)).list_tables()
    text = render_catalog(tables).text
    assert "descriptive_column_13" in text and "w0_id" in text
    small = render_catalog(tables, budget_tokens=400)
    assert small.tokens <= 400 and small.tables_left_out == 0  # column lists shrink before tables go
    assert "w0_id" in small.text and "more" in small.text


def test_a_long_result_keeps_every_column_and_says_what_was_cut(tmp_path):
    """The real model got a 38-row month x platform result as 19 rows of 2 of its 5 columns, no word said."""
    path = tmp_path / "series.duckdb"
    con = duckdb.connect(str(path))
    con.execute("""CREATE TABLE m AS SELECT DATE '2023-01-01' + INTERVAL (i // 2) MONTH AS month,
                   CASE WHEN i % 2 = 0 THEN 'android' ELSE 'ios' END AS platform, 1000 + i AS carts, 400 + i AS buys,
                   CASE WHEN i % 2 = 0 AND i >= 40 THEN 0.1 ELSE 0.4 END AS rate FROM range(0, 76) r(i)""")
    con.close()
    llm = ReplayLLM({"explore": [q("SELECT month, platform, carts, buys, rate FROM m ORDER BY month, platform"),
                                 '{"done": true}']})
    step = make_explorer(path, llm).run().steps[0]
    view = json.loads(step.result_preview)
    data = view["data"]
    assert data["columns"] == ["month", "platform", "carts", "buys", "rate"] and "_truncated_from" not in view
    assert data["row_count"] == 76 and data["cut"].startswith(f"{len(data['rows'])} of 76 rows kept")
    assert len(data["row_numbers"]) == len(data["rows"]) and all(len(r) == 5 for r in data["rows"])
    kept = {(r[0][:7], r[1]) for r in data["rows"]}  # rows as lists under the one header
    assert ("2024-08", "android") in kept and ("2024-09", "android") in kept  # both sides of the drop
    # the step's digest keeps the rows the model was shown (session 10: the analysis cites what the explorer read)
    assert step.digest.truncated and step.digest.cut.startswith(f"{len(data['rows'])} of 76 rows kept")
    assert set(data["row_numbers"]) <= set(step.digest.kept_row_numbers)


def test_a_small_breakdown_reaches_the_model_whole(tmp_path):
    """A 54-row category x platform breakdown fits the tool-result budget when each row is a list under one
    header; with a key per cell it was cut to 17 rows, and a real model spent a step re-querying the rest."""
    path = tmp_path / "grid.duckdb"
    con = duckdb.connect(str(path))
    con.execute("""CREATE TABLE g AS SELECT 'category_' || (i // 3) AS category,
                   ['android', 'ios', 'web'][(i % 3) + 1] AS platform, 1000 + i AS carts, 0.4 AS rate
                   FROM range(0, 54) r(i)""")
    con.close()
    llm = ReplayLLM({"explore": [q("SELECT category, platform, carts, rate FROM g ORDER BY 1, 2"), '{"done": true}']})
    data = json.loads(make_explorer(path, llm).run().steps[0].result_preview)["data"]
    assert data["row_count"] == 54 and len(data["rows"]) == 54 and "cut" not in data


def test_a_sixty_level_breakdown_of_ratios_reaches_the_model_whole(tmp_path):
    """Round 18 (gaming): a per-level result (60 levels, 8 columns, ratios to ten digits) was cut to 40 rows, and the
    model never saw level 5. The explorer reads numbers to 4 significant digits (never fewer than the cents) and
    midnight timestamps as dates: the same result fits whole; the step's digest keeps the full precision."""
    path = tmp_path / "levels.duckdb"
    con = duckdb.connect(str(path))
    con.execute("""CREATE TABLE l AS SELECT i AS level, 40000 - i * 37 AS attempts, 30000 - i * 29 AS players,
                   30000 - i * 31 AS players_won, 0.74649149 - i / 417.0 AS win_rate, 0.2383298497 + i / 9001.0 AS
                   avg_boosters_used, 4.094431173 - i / 71.0 AS avg_moves_left, 8 + i % 5 AS max_attempt_no
                   FROM range(1, 61) r(i)""")
    con.close()
    llm = ReplayLLM({"explore": [q("SELECT * FROM l ORDER BY level"), '{"done": true}']})
    step = make_explorer(path, llm).run().steps[0]
    data = json.loads(step.result_preview)["data"]
    assert data["row_count"] == 60 and len(data["rows"]) == 60 and "cut" not in data, data.get("cut")
    first = dict(zip(data["columns"], data["rows"][0]))
    assert first["win_rate"] == 0.7441 and first["avg_boosters_used"] == 0.2384 and first["avg_moves_left"] == 4.08
    assert first["attempts"] == 39963 and first["max_attempt_no"] == 9
    assert view_cell(10889.27) == 10889.27 and view_cell(3346869.126) == 3346869.13  # totals keep their cents
    assert view_cell(0.000123456) == 0.0001235 and view_cell(dt.datetime(2025, 11, 1)) == "2025-11-01"
    assert view_cell(dt.datetime(2025, 11, 1, 5, 3)) == "2025-11-01T05:03:00"
    digest = json.dumps(step.digest.model_dump(mode="json"))
    assert "0.7440934085" in digest  # the digest (analysis, verification) keeps cell()'s ten digits


def test_a_column_keeps_one_grain_and_two_columns_of_one_name_both_reach_the_model(tmp_path):
    """Review of session 14: midnight timestamps are read as dates only when the whole column is at midnight (an
    hourly series showed its midnight rows as dates, two grains in one column), and a result with two columns of
    the same name (SELECT a.id, b.id) ended the exploration with a KeyError; they read as id, id_2, as in the
    digest."""
    path = tmp_path / "hours.duckdb"
    con = duckdb.connect(str(path))
    con.execute("""CREATE TABLE h AS SELECT TIMESTAMP '2025-11-01 00:00:00' + INTERVAL (i) HOUR AS hour,
                   TIMESTAMP '2025-11-01' + INTERVAL (i) DAY AS day, 100 + i AS n FROM range(0, 6) r(i)""")
    con.close()
    llm = ReplayLLM({"explore": [q("SELECT hour, day, n, n * 2 AS n FROM h ORDER BY hour"), '{"done": true}']})
    data = json.loads(make_explorer(path, llm).run().steps[0].result_preview)["data"]
    rows = [dict(enumerate(r)) for r in data["rows"]]
    assert rows[0][0] == "2025-11-01T00:00:00" and rows[1][0] == "2025-11-01T01:00:00"  # one grain: hours
    assert rows[0][1] == "2025-11-01" and rows[1][1] == "2025-11-02"  # an all-midnight column reads as dates
    assert data["columns"] == ["hour", "day", "n", "n_2"] and (rows[0][2], rows[0][3]) == (100, 200)


def test_a_partial_last_period_is_flagged_to_the_explorer(tmp_path):
    """Round 7 (ecommerce): a daily series ended with 2026-11-01, of which the warehouse held a few hours, and no one
    flagged it. A date series whose last period holds under half of the median period's counts is flagged as possibly
    partial (its averages need not fall); a full last period, or one where only a rate fell, is not."""
    from assay.rows import partial_last_period

    path = tmp_path / "days.duckdb"
    con = duckdb.connect(str(path))
    con.execute("""CREATE TABLE d AS SELECT DATE '2026-10-20' + INTERVAL (i) DAY AS day,
                   CASE WHEN i = 12 THEN 30 ELSE 1000 + i END AS orders FROM range(0, 13) r(i)""")
    con.close()
    llm = ReplayLLM({"explore": [q("SELECT day, orders FROM d ORDER BY day"), '{"done": true}']})
    view = json.loads(make_explorer(path, llm).run().steps[0].result_preview)
    assert any("the last period (2026-11-01" in h and "may cover only part" in h for h in view["hints"]), view
    full = pa.table({"day": pd.date_range("2026-10-01", periods=6).date, "orders": [10, 11, 12, 10, 11, 9]})
    assert partial_last_period(full) is None
    mixed = pa.table({"day": pd.date_range("2026-10-01", periods=6).date, "orders": [10, 11, 12, 10, 11, 2],
                      "avg_value": [5.0, 5.1, 5.2, 5.0, 4.9, 5.0]})
    assert "orders 18%" in partial_last_period(mixed)  # the count fell; an average does not with a partial period
    rate = pa.table({"day": pd.date_range("2026-10-01", periods=6).date, "orders": [10, 11, 12, 10, 11, 10],
                     "rate": [0.5, 0.5, 0.5, 0.5, 0.5, 0.1]})
    assert partial_last_period(rate) is None  # a rate that fell, on a full period's count: a finding, not a gap
    # round 8 (ecommerce): each event type's first timestamp, sorted, is no series of periods
    firsts = pa.table({"first_at": pd.to_datetime(["2025-11-01 00:00:05", "2025-11-01 00:02:10", "2025-11-01 09:58:27",
                                                   "2025-11-02 09:58:27"]), "events": [250000, 90000, 30000, 900]})
    assert partial_last_period(firsts) is None
    months = pa.table({"month": pd.to_datetime(["2026-07-01", "2026-08-01", "2026-09-01", "2026-10-01",
                                                "2026-11-01"]), "orders": [900, 950, 910, 940, 12]})
    assert "the last period (2026-11-01" in partial_last_period(months)  # months of 28-31 days are periods
