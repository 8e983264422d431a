"""Folded history keeps numbers (#15 item 4): once older turns fold into summaries, the real model
re-queried what it had already seen, because the figures and its own reasoning were gone."""

from __future__ import annotations

import pytest

from assay import limits
from assay.llm.base import LLMResponse, ToolCall
from assay.llm.scripted import ScriptedLLM
from tests.helpers import make_explorer, small_warehouse


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    return small_warehouse(tmp_path_factory.mktemp("fold") / "w.duckdb")


def test_folded_steps_keep_their_figures_and_the_models_notes(db):
    turns = 2 * limits.COMPACT_EVERY_TURNS + 1
    first = [
        LLMResponse(text="Start with the channel mix.", tool_calls=[ToolCall("c1", "query", {
            "sql": "SELECT channel, count(*) AS customers FROM customers GROUP BY 1 ORDER BY 2 DESC",
            "purpose": "customers by channel"})]),
        LLMResponse(text="Organic has 134 customers and paid 66: paid is a third. Next, order totals.",
                    tool_calls=[ToolCall("c2", "query", {
                        "sql": "SELECT count(*) AS orders, sum(amount) AS revenue FROM orders",
                        "purpose": "order totals"})]),
    ]
    filler = [LLMResponse(text=f"Month check {i}.", tool_calls=[ToolCall(f"f{i}", "query", {
        "sql": f"SELECT {i} AS k, count(*) AS n FROM orders", "purpose": f"filler {i}"})]) for i in range(turns)]
    script = iter(first + filler)
    llm = ScriptedLLM(lambda req: next(script), tools=True)
    make_explorer(db, llm, max_steps=turns).run()
    folded = [c.system[1].text for c in llm.calls if len(c.system) > 1]
    assert folded, "the history never folded"
    text = folded[-1]
    line1 = next(ln for ln in text.splitlines() if ln.startswith("#1 "))
    assert "channel=organic, customers=134" in line1 and "channel=paid, customers=66" in line1  # the rows seen
    assert "(your note: Start with the channel mix.)" in line1
    line2 = next(ln for ln in text.splitlines() if ln.startswith("#2 "))
    assert "orders=1000" in line2 and "revenue=" in line2  # the totals seen
    assert "paid is a third" in line2  # the model's own reasoning, with its numbers
    assert all(len(ln) <= limits.SUMMARY_LINE_CHARS for ln in text.splitlines()[1:])


def test_raw_turns_keep_the_models_text_beside_its_calls(db):
    script = iter([LLMResponse(text="Counting orders first.", tool_calls=[ToolCall("a", "query", {
        "sql": "SELECT count(*) AS n FROM orders", "purpose": "orders"})]),
        [ToolCall("b", "done", {"summary": "1000 orders"})]])
    llm = ScriptedLLM(lambda req: next(script), tools=True)
    make_explorer(db, llm).run()
    assistant = [m for m in llm.calls[1].messages if m.role == "assistant"][0]
    assert assistant.content == "Counting orders first." and assistant.tool_calls[0].id == "a"


def test_the_last_steps_say_each_call_takes_one_and_to_end_with_done(db):
    """Round 8's InsightBench model: two of five explorations spent their budget without `done` (several calls in
    one turn each took a step, which nothing said). With native tools, the progress line says so when 3 or fewer
    steps are left."""
    script = iter([
        [ToolCall("a", "query", {"sql": "SELECT count(*) AS n FROM orders", "purpose": "orders"}),
         ToolCall("b", "query", {"sql": "SELECT count(*) AS n FROM customers", "purpose": "customers"})],
        [ToolCall("c", "done", {"summary": "counted"})]])
    llm = ScriptedLLM(lambda req: next(script), tools=True)
    make_explorer(db, llm, max_steps=5).run()
    after = llm.calls[1].messages[-1]
    text = (after.content or "") + " ".join(r for _, r in (after.tool_results or []))
    assert "Steps used: 2 of 5" in text
    assert "3 steps left: each query call takes one, also in the same turn; end with `done`" in text
