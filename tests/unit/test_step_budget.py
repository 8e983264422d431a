"""The step budget, said as the loop counts it (#15/#16, session 11): two of round 8's five InsightBench
explorations spent their steps in multi-call turns and ended without `done`. The prompt of each protocol states what
an action costs, and the steps line after each turn counts exactly as the loop does: a scripted model's multi-call
turns, lookups and refusals are run through the loop and every line is compared with its own accounting."""

from __future__ import annotations

import json
import re

import pytest

from assay import limits
from assay.explore.actions import step_rule
from assay.explore.prompt import render_exploration_prompt
from assay.llm.base import ToolCall
from assay.llm.scripted import ScriptedLLM
from assay.models import Project, StepAction, WarehouseConfig
from assay.packs import list_packs, load_pack
from tests.helpers import make_explorer, small_warehouse

LINE = re.compile(r"Steps used: (\d+) of (\d+), (\d+) left")


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    return small_warehouse(tmp_path_factory.mktemp("budget") / "w.duckdb")


@pytest.mark.parametrize("tools", [True, False])
def test_every_exploration_prompt_says_what_a_step_costs(tools):
    for name in list_packs():
        p = Project(id="x", pack=name, warehouse=WarehouseConfig(kind="duckdb"))
        text = render_exploration_prompt(p, load_pack(name), "- main.t (1 cols, ~1 rows): a", 10, tools=tools)
        assert step_rule(tools) in text, name
        assert "10 steps" in text, name
    assert ("three `query` calls in one turn take three steps" in step_rule(True)) is True
    assert "in one turn" not in step_rule(False)  # one action per turn: no multi-call turn to describe
    for n in (limits.MAX_LOOKUPS_PER_RUN, limits.MAX_SEARCHES_PER_RUN, limits.MAX_FREE_REFUSALS_PER_RUN):
        assert f"{n} " in step_rule(tools)


@pytest.mark.parametrize("tools", [True, False])
def test_no_exploration_prompt_says_two_things_about_questions_per_turn(tools):
    """Session 13 (estimate): the packs said "ask one precise question at a time" while the tools said "several in
    one turn when they are independent"; 19 of 23 recorded real-model runs batched, the others did not. How many
    questions a turn holds is said once, by the protocol's actions section: several when independent with native
    tools, one action per turn with the JSON protocol."""
    for name in list_packs():
        p = Project(id="x", pack=name, warehouse=WarehouseConfig(kind="duckdb"))
        text = render_exploration_prompt(p, load_pack(name), "- main.t (1 cols, ~1 rows): a", 10, tools=tools)
        assert not re.search(r"one (precise )?question at a time", text), name
        assert ("several in one turn when they are independent" in text) is tools, name


def _q(i: int, sql: str = "SELECT count(*) AS n FROM orders") -> ToolCall:
    return ToolCall(f"q{i}", "query", {"sql": sql, "purpose": f"q{i}"})


def _lines(llm) -> list[tuple[int, int, int]]:
    out = []
    for req in llm.calls[1:]:
        m = req.messages[-1]
        text = (m.content or "") + " ".join(r for _, r in (m.tool_results or []))
        found = LINE.findall(text)
        assert found, text[-400:]
        out.append(tuple(map(int, found[-1])))
    return out


def test_native_tools_the_steps_line_counts_each_call_as_the_loop_does(db):
    refused = "DELETE FROM orders"
    script = iter([
        [_q(1), _q(2), _q(3)],                                             # three calls: three steps
        [ToolCall("l1", "lookup_schema", {"tables": ["main.orders"]}), _q(4, refused), _q(5)],  # free, free, one
        [_q(6), _q(7), _q(8)],                                             # one step left: one runs, the run ends
    ])
    llm = ScriptedLLM(lambda req: next(script), tools=True)
    ex = make_explorer(db, llm, max_steps=5)
    out = ex.run()
    assert out.finished == "max_steps"
    lines = _lines(llm)
    assert lines == [(3, 5, 2), (4, 5, 1)]
    # the loop's own accounting at the end of each turn, and the queries that ran
    ends = [max(s.step for s in ex.steps if s.turn == t) for t in (1, 2)]
    assert [ex._counted_steps(upto=n) for n in ends] == [3, 4]
    ran = [s for s in ex.steps if s.action == StepAction.query and not s.refused]
    assert len(ran) == 5 == ex._counted_steps()
    # what the lines said: the refusal was free, with its remaining free refusals stated; the last turn was warned
    second = llm.calls[2].messages[-1].content
    assert f"{limits.MAX_FREE_REFUSALS_PER_RUN - 1} free refusals left" in second
    assert "1 step left: each query call takes one, also in the same turn; end with `done`" in second


def test_json_protocol_the_steps_line_counts_one_action_per_turn(db):
    answers = iter([
        {"thinking": "", "purpose": "a", "query": "SELECT count(*) AS n FROM orders"},
        {"lookup_schema": ["main.customers"]},
        {"thinking": "", "purpose": "b", "query": "DROP TABLE orders"},
        {"thinking": "", "purpose": "c", "query": "SELECT count(*) AS n FROM customers"},
        {"done": True, "summary": "two counts"},
    ])
    llm = ScriptedLLM(lambda req: json.dumps(next(answers)))
    ex = make_explorer(db, llm, max_steps=3)
    out = ex.run()
    assert out.finished == "done"
    lines = _lines(llm)
    assert lines == [(1, 3, 2), (1, 3, 2), (1, 3, 2), (2, 3, 1)]
    assert [ex._counted_steps(upto=n) for n in (1, 2, 3, 4)] == [u for u, _, _ in lines]
    last = llm.calls[-1].messages[-1].content
    assert "1 step left: each query takes one; end with `done`" in last
    assert "Answer with one JSON action." in last
