"""The exploration loop against a real DuckDB file, with a scripted LLM."""

from __future__ import annotations

import json

import pytest

from assay import limits
from assay.errors import InvalidLLMOutput
from assay.llm.base import LLMResponse, ToolCall
from assay.llm.scripted import ReplayLLM, ScriptedLLM
from assay.models import StepAction
from tests.helpers import make_explorer, small_warehouse


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    return small_warehouse(tmp_path_factory.mktemp("wh") / "small.duckdb")


def q(sql, purpose="p"):
    return json.dumps({"thinking": "t", "purpose": purpose, "query": sql})


def test_queries_then_done(db):
    llm = ReplayLLM({"explore": [q("SELECT count(*) AS n FROM orders"), q("SELECT channel, count(*) FROM customers GROUP BY 1"),
                                 '{"done": true, "summary": "ok"}']})
    saved = []
    out = make_explorer(db, llm, sink=saved.append).run()
    assert out.finished == "done" and out.summary == "ok"
    assert [s.action for s in out.steps] == [StepAction.query, StepAction.query, StepAction.done]
    assert out.steps[0].row_count == 1 and out.steps[0].digest.all_rows == [{"n": 1000}]
    assert [s.step for s in saved] == [1, 2, 3]  # each step handed to the sink at once


def test_reformat_nudges_then_error_step(db):
    bad = ["no json here"] * (limits.MAX_REFORMAT_NUDGES + 1)
    llm = ReplayLLM({"explore": bad + [q("SELECT 1 AS x"), '{"done": true}']})
    ex = make_explorer(db, llm)
    out = ex.run()
    assert out.steps[0].action == StepAction.error and "3 reformat nudges" in out.steps[0].error
    assert out.steps[1].ok
    assert ex.counters["reformat_nudges"] == limits.MAX_REFORMAT_NUDGES + 1
    nudges = [c for c in llm.calls if "could not be used" in c.messages[-1].content]
    assert len(nudges) == limits.MAX_REFORMAT_NUDGES


def test_only_errors_is_invalid_output_never_silent_done(db):
    llm = ScriptedLLM(lambda req: "I am done.")
    with pytest.raises(InvalidLLMOutput):
        make_explorer(db, llm, max_steps=10).run()


def test_min_steps_rejects_early_done(db):
    llm = ReplayLLM({"explore": ['{"done": true}', q("SELECT 1 AS a"), q("SELECT 2 AS b"), '{"done": true}']})
    ex = make_explorer(db, llm, max_steps=6, min_steps=3)
    out = ex.run()
    assert out.steps[0].action == StepAction.complete_rejected
    assert "2 more step(s) needed" in out.steps[0].result_preview
    assert out.steps[-1].action == StepAction.done and ex.counters["rejected_completions"] == 1


def test_sql_fix_success_keeps_history(db):
    fixer = iter(["```sql\nSELECT sum(amount) AS n FROM orders\n```"])
    llm = ReplayLLM({"explore": [q("SELECT sum(amountz) AS n FROM orders"), '{"done": true}'], "fix": [lambda r: next(fixer)]})
    out = make_explorer(db, llm).run()
    s = out.steps[0]
    assert s.ok and s.query == "SELECT sum(amount) AS n FROM orders"
    assert len(s.fix_history) == 2 and s.fix_history[0].error and s.fix_history[-1].error is None
    assert "amountz" in llm.purposes("fix")[0].messages[0].content


def test_sql_fix_exhaustion_records_every_attempt(db):
    llm = ReplayLLM({"explore": [q("SELECT nope FROM orders"), '{"done": true}'],
                     "fix": ["SELECT nope1 FROM orders", "SELECT nope2 FROM orders", "SELECT nope3 FROM orders"]})
    ex = make_explorer(db, llm)
    s = ex.run().steps[0]
    assert s.error and not s.ok
    assert len(s.fix_history) == limits.MAX_SQL_FIXES + 1
    assert ex.counters["sql_fixes"] == limits.MAX_SQL_FIXES
    assert "did you mean" in s.result_preview or "does not exist" in s.result_preview.lower() or "hints" in s.result_preview


def test_guard_refusal_goes_back_to_the_model(db):
    llm = ReplayLLM({"explore": [q("DELETE FROM orders"), '{"done": true}']})
    ex = make_explorer(db, llm)
    s = ex.run().steps[0]
    assert s.refused and "DELETE" in s.refused and "refused by the SQL guard" in s.result_preview
    assert ex.counters["guard_refusals"] == 1


def test_lookup_dedup_and_budget(db, monkeypatch):
    monkeypatch.setattr(limits, "MAX_LOOKUPS_PER_RUN", 2)
    llm = ReplayLLM({"explore": ['{"lookup_schema": ["main.orders"]}', '{"lookup_schema": ["orders"]}',
                                 '{"lookup_schema": ["customers"]}', '{"lookup_schema": ["main.ord_bkp_20240101"]}',
                                 '{"done": true}']})
    ex = make_explorer(db, llm, max_steps=10)
    steps = ex.run().steps
    assert steps[0].charged and not steps[1].charged  # already fetched: answered free
    assert "already_fetched" in steps[1].result_preview
    assert steps[2].charged
    assert "budget exhausted" in steps[3].result_preview and not steps[3].charged
    assert ex.counters["schema_lookup_calls"] == 2
    sample = json.loads(steps[2].result_preview)["data"]["tables"][0]["sample_rows"][0]
    assert sample["email"] == "[masked]"  # PII never reaches the prompt


def test_lookup_per_call_cap_and_not_found(db):
    refs = [f"t{i}" for i in range(limits.MAX_LOOKUP_TABLES_PER_CALL + 3)]
    llm = ReplayLLM({"explore": [json.dumps({"lookup_schema": refs}), '{"done": true}']})
    data = json.loads(make_explorer(db, llm).run().steps[0].result_preview)["data"]
    assert len(data["not_found"]) == limits.MAX_LOOKUP_TABLES_PER_CALL
    assert data["truncated"]["limit"] == limits.MAX_LOOKUP_TABLES_PER_CALL


def test_search_top_k_clamped_and_default(db):
    seen = []
    llm = ReplayLLM({"explore": ['{"search_tables": "sales", "top_k": 500}', '{"search_tables": "sales"}',
                                 '{"done": true}']})
    ex = make_explorer(db, llm)
    ex.provider.searcher = lambda text, k: seen.append(k) or []
    ex.run()
    assert seen == [limits.MAX_SEARCH_TOP_K, limits.DEFAULT_SEARCH_TOP_K]


def test_empty_result_carries_hints(db):
    llm = ReplayLLM({"explore": [q("SELECT * FROM customers WHERE channel = 'tiktok'"), '{"done": true}']})
    preview = json.loads(make_explorer(db, llm).run().steps[0].result_preview)
    assert preview["data"]["row_count"] == 0
    assert any("channel" in h for h in preview["hints"])


def test_native_tool_calls_several_per_turn(db):
    turns = iter([
        [ToolCall("a", "query", {"sql": "SELECT 1 AS one", "purpose": "one"}),
         ToolCall("b", "query", {"sql": "SELECT 2 AS two", "purpose": "two"}),
         ToolCall("c", "lookup_schema", {"tables": ["main.orders"]})],
        [ToolCall("d", "done", {"summary": "fin"})],
    ])
    llm = ScriptedLLM(lambda req: next(turns), tools=True)
    saved = []
    out = make_explorer(db, llm, sink=saved.append).run()
    assert [s.action.value for s in out.steps] == ["query", "query", "lookup_schema", "done"]
    assert out.steps[0].turn == out.steps[1].turn == out.steps[2].turn
    # each action of a turn has its own number: the store keeps one step per number (a real run lost 3 of 9)
    assert [s.step for s in saved] == [1, 2, 3, 4]
    second = llm.calls[1]
    results = [m for m in second.messages if m.tool_results][-1].tool_results
    assert [cid for cid, _ in results] == ["a", "b", "c"]  # every tool call answered, in order
    # each result names its step as the model cites it (the budget's count): the free lookup has no number
    assert [text.split("\n", 1)[0] for _, text in results] == ["[step 1]", "[step 2]",
                                                                "[free lookup_schema, no step number]"]
    assert [s.shown for s in saved] == [1, 2, 0, 0]
    assert second.tools and {t.name for t in second.tools} == {"query", "lookup_schema", "search_tables", "done"}


def test_bounded_history_plateaus_and_extends_the_previous_request(db):
    big = "SELECT * FROM orders"  # 1000 rows: each raw result is large

    def answer(req):
        return q(big, purpose=f"step {req.meta['step']}")

    llm = ScriptedLLM(answer)
    ex = make_explorer(db, llm, max_steps=45)
    ex.run()
    sizes = ex.requests
    c = limits.COMPACT_EVERY_TURNS
    # a plateau, not linear growth: beyond the raw window, only summary lines (bounded) accumulate
    assert max(sizes[3 * c:]) - max(sizes[c:2 * c]) <= 3 * c * limits.SUMMARY_LINE_CHARS
    assert max(sizes[3 * c:]) < 1.6 * max(sizes[c:2 * c])
    last = llm.calls[-1]
    assert "Earlier steps of this run, summarised" in last.system[1].text and last.system[1].cache
    # between compactions every request repeats the previous one and adds a turn
    assert all(ex.stable[i] >= 0.7 * sizes[i] for i in range(2 * c + 3, 3 * c))
    assert ex.stable[0] == 0


def test_resume_continues_without_repeating_steps(db):
    first = ReplayLLM({"explore": [q("SELECT 1 AS a"), q("SELECT 2 AS b")]})
    saved = []
    make_explorer(db, first, max_steps=2, sink=saved.append).run()
    assert [s.step for s in saved] == [1, 2]
    # the process "dies"; a retry rebuilds the history from what was persisted
    second = ReplayLLM({"explore": [q("SELECT 3 AS c"), '{"done": true}']})
    out = make_explorer(db, second, max_steps=4, sink=saved.append).run(prior=list(saved))
    assert [s.step for s in saved] == [1, 2, 3, 4]
    assert out.steps[2].query == "SELECT 3 AS c"
    assert "SELECT 1 AS a" in json.dumps([m.content for m in second.calls[0].messages])


def test_resume_of_a_finished_exploration_asks_nothing(db):
    first = ReplayLLM({"explore": [q("SELECT 1 AS a"), '{"done": true, "summary": "s"}']})
    saved = []
    make_explorer(db, first, sink=saved.append).run()
    second = ReplayLLM({})
    out = make_explorer(db, second).run(prior=saved)
    assert out.finished == "done" and second.calls == []


def test_usage_recorded_per_step(db):
    llm = ReplayLLM({"explore": [q("SELECT 1 AS a"), '{"done": true}']})
    s = make_explorer(db, llm).run().steps[0]
    assert s.usage.input_tokens > 0 and s.usage.output_tokens > 0


def test_llm_response_object_passthrough(db):
    llm = ScriptedLLM(lambda req: LLMResponse(text='{"done": true}'))
    assert make_explorer(db, llm).run().finished == "done"


def test_duckdb_file_opened_twice_in_one_process(db):
    from assay.warehouse.duckdb import DuckDBWarehouse

    a, b = DuckDBWarehouse(str(db)), DuckDBWarehouse(str(db))
    assert a.query("SELECT 1 AS x", row_cap=1, timeout_s=5).table.to_pylist() == [{"x": 1}]
    assert b.query("SELECT 2 AS x", row_cap=1, timeout_s=5).table.to_pylist() == [{"x": 2}]
    with pytest.raises(Exception, match="locked|lock"):
        a._cursor().execute("SET enable_external_access = true")


def test_a_reply_with_no_tool_call_is_nudged_to_call_a_tool_not_to_write_json(db):
    """Round 12 (InsightBench, 20 steps): a model that answered an exploration turn with text (a table description)
    was told to "answer with exactly one JSON object", against the system prompt's "do not write JSON actions in
    text"; with native tools the nudge asks for a tool call, by the tools' names."""
    turns = iter(['{"main.incidents": "Each row is one incident"}',
                  [ToolCall("a", "done", {"summary": "fin"})]])
    llm = ScriptedLLM(lambda req: next(turns), tools=True)
    out = make_explorer(db, llm).run()
    assert [s.action.value for s in out.steps] == ["done"]
    nudge = llm.calls[1].messages[-1].content
    assert nudge.startswith("Your last reply could not be used: it called no tool.")
    assert "Call one of the tools: query, lookup_schema, search_tables, done" in nudge and "JSON" not in nudge


def test_a_mid_sized_result_keeps_its_rows_for_the_report_s_chart(db):
    llm = ReplayLLM({"explore": [q("SELECT order_id, amount FROM orders ORDER BY order_id LIMIT 36"),
                                 q("SELECT count(*) AS n FROM orders"), '{"done": true}']})
    out = make_explorer(db, llm).run()
    mid, small = out.steps[0], out.steps[1]
    assert mid.digest.all_rows is None and len(mid.chart_rows) == 36  # the digest cut it; the chart keeps it whole
    assert len({r["order_id"] for r in mid.chart_rows}) == 36
    assert small.chart_rows is None  # the digest holds it whole


def test_a_resumed_exploration_ends_with_the_models_own_summary(db):
    """A run that stopped after its `done` step was stored (before the run recorded the end of its exploration)
    resumes with that step: the summary the analysis reads is the model's text, not its history line
    ("#2 done: ..."), and it is whole, however long."""
    text = "Android conversion fell in July; " + "paid customers rarely return. " * 12
    llm = ReplayLLM({"explore": [q("SELECT count(*) AS n FROM orders"), json.dumps({"done": True, "summary": text})]})
    first = make_explorer(db, llm).run()
    assert first.summary == text
    resumed = make_explorer(db, ReplayLLM({"explore": []})).run(prior=[s.model_copy() for s in first.steps])
    assert resumed.finished == "done" and resumed.summary == text
