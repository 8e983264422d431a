"""One step numbering for the model (#15/#16 follow-up, session 12). Rounds 9-11's models saw each result tagged with
its stored number, free schema lookups numbered too, and were told "Steps used" by the budget's count: after a free
lookup every step they cited ran one ahead of what they were told. The model now sees one numbering (the budget's):
tags, "Steps used", folded summaries, the analysis input and the verifier's evidence agree, and what it cites resolves
to the stored step it saw under that number."""

from __future__ import annotations

import json
import re

import pytest

from assay.analysis.analyze import analyze_area
from assay.analysis.picker import cited_steps
from assay.analysis.render import render_query_results
from assay.ask import AskAnswer
from assay.explore.loop import step_summary
from assay.explore.numbering import label, labels, resolve, tag
from assay.llm.base import ToolCall
from assay.llm.replay import renumber_answer
from assay.llm.scripted import ReplayLLM, ScriptedLLM
from assay.models import Insight, StepAction
from assay.packs import load_pack
from assay.validate.verify import render_evidence
from tests.helpers import make_explorer, small_warehouse

USED = re.compile(r"Steps used: (\d+) of")


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    return small_warehouse(tmp_path_factory.mktemp("wh") / "small.duckdb")


def q(sql, purpose):
    return {"sql": sql, "purpose": purpose}


QUERIES = [("SELECT count(*) AS orders FROM orders", "orders"),
           ("SELECT channel, count(*) AS customers FROM customers GROUP BY 1 ORDER BY 1", "customers by channel"),
           ("SELECT count(DISTINCT customer_id) AS buyers FROM orders", "buyers")]


def tool_run(db):
    """query, lookup (free), query, query in one turn with another lookup, done."""
    turns = iter([
        [ToolCall("a", "query", q(*QUERIES[0]))],
        [ToolCall("b", "lookup_schema", {"tables": ["main.orders"]})],
        [ToolCall("c", "query", q(*QUERIES[1]))],
        [ToolCall("d", "lookup_schema", {"tables": ["main.customers"]}), ToolCall("e", "query", q(*QUERIES[2]))],
        [ToolCall("f", "done", {"summary": "customers by channel (step 2); buyers (step 3)"})],
    ])
    llm = ScriptedLLM(lambda req: next(turns), tools=True)
    saved = []
    out = make_explorer(db, llm, sink=saved.append, max_steps=10).run()
    return out, llm, saved


def test_tags_and_steps_used_agree_across_a_free_lookup(db):
    out, llm, saved = tool_run(db)
    assert [s.action for s in saved] == [StepAction.query, StepAction.lookup_schema, StepAction.query,
                                         StepAction.lookup_schema, StepAction.query, StepAction.done]
    assert [s.step for s in saved] == [1, 2, 3, 4, 5, 6]  # the store's numbering is unchanged: every action
    assert [s.shown for s in saved] == [1, 0, 2, 0, 3, 0]  # what the model sees: the budget's count
    last = llm.calls[-1]
    shown_tags, used = [], []
    for m in last.messages:
        if m.tool_results:
            shown_tags += [text.split("\n", 1)[0] for _, text in m.tool_results]
            used.append(int(USED.search(m.content).group(1)))
            numbered = [int(t[6:-1]) for t in shown_tags if t.startswith("[step ")]
            # after every turn, "Steps used" is the last number the model saw on a result
            assert used[-1] == (numbered[-1] if numbered else 0)
    assert shown_tags == ["[step 1]", "[free lookup_schema, no step number]", "[step 2]",
                          "[free lookup_schema, no step number]", "[step 3]"]
    assert used == [1, 1, 2, 3]
    assert last.meta["step_labels"] == {1: 1, 3: 2, 5: 3}


def test_the_json_protocol_says_the_same_numbers(db):
    answers = [json.dumps({"query": QUERIES[0][0], "purpose": "orders"}),
               json.dumps({"lookup_schema": ["main.orders"]}),
               json.dumps({"query": QUERIES[1][0], "purpose": "customers"}), '{"done": true, "summary": "ok"}']
    llm = ReplayLLM({"explore": answers})
    make_explorer(db, llm, max_steps=10).run()
    text = "\n".join(m.content for m in llm.calls[-1].messages if m.role == "user")
    heads = re.findall(r"^Result of (.+):$", text, re.M)
    assert heads == ["step 1", "free lookup_schema, no step number", "step 2"]
    assert [int(n) for n in USED.findall(text)] == [1, 1, 2]


def test_folded_summaries_use_the_model_s_numbers(db):
    out, _, saved = tool_run(db)
    assert step_summary(saved[2]).startswith("#2 query: customers by channel")
    assert step_summary(saved[1]).startswith("(free) lookup_schema: main.orders")


def test_a_cited_step_resolves_to_the_query_the_model_saw_under_that_number(db):
    out, llm, saved = tool_run(db)
    queries = [s for s in saved if s.ok]
    # the model saw "customers by channel" as [step 2] (stored 3): the analysis shows it as step 2 ...
    rendered = json.loads(render_query_results(queries))
    assert [(e["step"], e["purpose"]) for e in rendered] == [(1, "orders"), (2, "customers by channel"),
                                                             (3, "buyers")]
    # ... and a claim citing step 2 is about stored step 3, the query the model saw under that number
    answer = {"insights": [{"name": "Most customers came from one channel",
                            "description": "by channel [step 2], buyers [steps 1 and 3] (step 3); funnel step 2 "
                                           "is prose",
                            "source_steps": [2], "claims": [{"metric": "count", "measure": "customers",
                                                             "value": 1, "source_steps": [2, 3]}]}]}
    pack = load_pack("generic")
    llm2 = ReplayLLM({"analyze": [json.dumps(answer)]})
    got = analyze_area(llm2, pack, pack.areas[0], queries).insights[0]
    assert got.source_steps == [3] and got.claims[0].source_steps == [3, 5]
    # its description's citations name the stored steps, as the report numbers them beside its source steps (round
    # 14's model saw its "[step 3]" beside source_steps [4]); a word of the data ("funnel step 2") is not a citation
    assert got.description == "by channel [step 3], buyers [steps 1 and 5] (step 5); funnel step 2 is prose"
    # the recommendations, which see no steps, read neither the claims' source steps nor the citations
    from assay.recommend import recommendation_prompt

    rec = recommendation_prompt(pack, [got.model_copy(update={"id": "generic-1"})])
    assert "source_steps" not in rec and "[step" not in rec and "by channel, buyers; funnel step 2 is prose" in rec
    assert llm2.calls[0].meta["step_labels"] == {1: 1, 3: 2, 5: 3}
    # the verifier's evidence shows it under the same number
    evidence = render_evidence(Insight(id="x-1", area="x", name="by channel", description="by channel", source_steps=[3]),
                               {s.step: s for s in saved})
    assert evidence.startswith("-- step 2: customers by channel")
    # the explorer's summary cites the model's numbers: the picker's floor resolves them to stored steps
    assert resolve(cited_steps(out.summary), saved) == [3, 5]
    # an answer of `assay ask` citing (step 3) rests on the buyers query
    ans = AskAnswer(question="?", answer="Buyers: 800 (step 3)", finished="done", steps=saved[:-1])
    assert [s.purpose for s in ans.cited()] == ["buyers"]


def test_a_step_stored_before_the_numbering_keeps_its_own_number(db):
    out, _, saved = tool_run(db)
    old = saved[2].model_copy(update={"shown": None})
    assert label(old) == 3 and tag(old) == "[step 3]"
    assert labels([old]) == {3: 3} and resolve([3], [old]) == [3]
    assert label(saved[1]) is None and resolve([0, 2, 9], saved) == [3]  # a free action or no step: dropped


def test_the_replay_translates_a_recorded_answer_s_stored_numbers():
    """A transcript recorded before this numbering cites stored numbers: the replay serves its answers in the numbers
    the product showed (the requests' meta), so they resolve to the steps the recorded model meant."""
    table = {1: 1, 3: 2, 5: 3}
    answer = {"text": json.dumps({"insights": [{"name": "n", "source_steps": [3, 2],
                                                "claims": [{"metric": "count", "source_steps": [5]}]}]})}
    got = json.loads(renumber_answer(answer, "analyze:conversion", table)["text"])
    assert got["insights"][0]["source_steps"] == [2] and got["insights"][0]["claims"][0]["source_steps"] == [3]
    done = {"text": "", "tool_calls": [{"name": "done", "arguments": {"summary": "see [step 3] and steps 1, 5"}}]}
    assert renumber_answer(done, "explore", table)["tool_calls"][0]["arguments"]["summary"] == \
        "see [step 2] and steps 1, 3"
    text = {"text": json.dumps({"done": True, "summary": "step 5"})}
    assert json.loads(renumber_answer(text, "explore", table)["text"])["summary"] == "step 3"
    query = {"text": json.dumps({"query": "SELECT 5", "purpose": "step 5"})}
    assert renumber_answer(query, "explore", table) == query  # only citations the product reads back


def test_the_prompt_says_how_results_are_numbered():
    from assay.explore.actions import step_rule

    for tools in (True, False):
        assert "numbered in that count ([step N], the number to cite); a free action's result has no number" \
            in step_rule(tools)
