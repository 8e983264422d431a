"""The replay LLM reads a bridge directory as the bridge writes it, and tells drift from wording."""

from __future__ import annotations

import json

import pytest

from assay.llm.anthropic import wire_body
from assay.llm.base import LLMRequest, Message, SystemBlock, ToolCall
from assay.llm.openai_compat import OpenAICompatLLM
from assay.llm.replay import TranscriptLLM, TranscriptMismatch, skeleton
from assay.llm.scripted import ScriptedLLM
from assay.explore.actions import tool_specs
from tests.helpers import make_explorer, small_warehouse

ANSWERS = [
    {"text": "Two things at once.", "tool_calls": [
        {"name": "query", "arguments": {"sql": "SELECT count(*) AS n FROM orders", "purpose": "orders"}},
        {"name": "lookup_schema", "arguments": {"tables": ["main.customers"]}}]},
    {"text": "", "tool_calls": [{"name": "query", "arguments": {
        "sql": "SELECT channel, count(*) AS n FROM customers GROUP BY 1", "purpose": "mix"}}]},
    {"text": "", "tool_calls": [{"name": "done", "arguments": {"summary": "1000 orders; organic 134, paid 66"}}]},
]


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    return small_warehouse(tmp_path_factory.mktemp("replay") / "w.duckdb")


@pytest.fixture
def bridge_dir(db, tmp_path):
    """What the bridge writes for a run: the wire request, and the answer file beside it."""
    answers = iter(ANSWERS)

    def record(req):
        n = len(llm.calls)
        (tmp_path / f"{n:04d}.request.json").write_text(json.dumps(wire_body(req, "claude-x")))
        a = next(answers)
        (tmp_path / f"{n:04d}.response.json").write_text(json.dumps(a))
        return [ToolCall(f"toolu_{n}_{i}", c["name"], c["arguments"]) for i, c in enumerate(a["tool_calls"])]

    llm = ScriptedLLM(record, tools=True)
    make_explorer(db, llm).run()
    return tmp_path


def test_an_untrimmed_bridge_directory_replays(db, bridge_dir):
    llm = TranscriptLLM(bridge_dir)
    assert llm.supports_tools and llm.model == "claude-x"
    out = make_explorer(db, llm).run()
    assert [s.action.value for s in out.steps] == ["query", "lookup_schema", "query", "done"]
    assert out.summary == "1000 orders; organic 134, paid 66"
    llm.assert_consumed()


def test_wording_may_change_but_not_the_tools_or_the_length(db, bridge_dir):
    ex = make_explorer(db, TranscriptLLM(bridge_dir))
    ex.system_prompt = "A reworded prompt."  # prompt wording is free
    ex.run()
    short = TranscriptLLM(bridge_dir)
    make_explorer(db, short, max_steps=1).run()  # the loop stops early: answers are left over
    with pytest.raises(TranscriptMismatch, match="2 recorded answer\\(s\\) unused"):
        short.assert_consumed()


def test_the_openai_wire_gives_the_same_skeleton():
    req = LLMRequest(purpose="explore", system=[SystemBlock("sys")], tools=tool_specs(), messages=[
        Message("user", "go"), Message("assistant", content="hm", tool_calls=[ToolCall("a", "query", {"sql": "x"})]),
        Message("user", tool_results=[("a", "{}")], content="Steps used: 1")])
    oa = {"model": "m", "messages": OpenAICompatLLM._messages(None, req),
          "tools": [{"type": "function", "function": {"name": t.name}} for t in req.tools]}
    assert skeleton(oa) == skeleton(wire_body(req)) == {
        "phase": "tools:done,lookup_schema,query,search_tables", "tools": ["done", "lookup_schema", "query",
                                                                          "search_tables"],
        "last_tool_results": 1, "previous_calls": ["query"]}


def test_a_verification_request_is_matched_to_its_claim():
    """A verification request names its claim ("Metric to compute: {metric, measure, ...}"): a recorded answer
    for another claim is a mismatch, not an answer (tests/integration/test_replay_transcripts.py holds the run)."""
    from assay.llm.replay import _claim_key

    text = 'Metric to compute:\n{"metric": "count", "measure": "android \\"cart\\" events", "entity": "events"}'
    assert _claim_key(text) == ("count", 'android \\"cart\\" events')
    assert _claim_key(text + "\n\nThe query must apply the stated definition exactly") == _claim_key(text)
    assert _claim_key("Lookup result: {}") is None and _claim_key("") is None


def test_a_corrective_round_says_why_first_and_still_names_its_claim():
    """Round 7 / InsightBench: a refused verification query's reason was the request's last sentence, easy to miss.
    The corrective round now starts with it; the replay still finds the claim after it, in the wire request and in
    a trimmed recording (bench/record_transcript.py keeps the claim's line apart when the reason pushes it out of
    the head)."""
    from assay.llm.replay import _claim_key, _first_user, trim
    from assay.validate.verify import corrective

    ask = 'Metric to compute:\n{"metric": "rate", "measure": "week-1 churn", "entity": "players"}'
    text = corrective(ask, "SELECT 1", ["segment (" + "x = 1 AND " * 80 + "y = 2)"])
    assert text.startswith("REFUSED: your query does not apply the stated definition exactly: segment (x = 1")
    assert _claim_key(text) == ("rate", "week-1 churn") and text.rstrip().endswith("SELECT 1\n```")
    trimmed = trim({"model": "m", "messages": [{"role": "user", "content": text}]})
    assert _claim_key(trimmed["last_user_head"]) is None  # the reason fills the head
    assert _claim_key(_first_user(trimmed)) == ("rate", "week-1 churn")
    # round 19: a shorter reason cut the head inside the claim's measure ('"measure": "android'); the cut measure
    # read on into the kept claim line ('android\nMetric to compute:\n{') and the replay failed on its own recording
    r19 = ('Metric to compute:\n{"metric": "change", "measure": "android share of completed revenue (total_amount)", '
           '"entity": "orders", "segment": "android, October 2026", "segment_sql": "platform = \'android\'"}')
    text = corrective(r19, "SELECT 1", ["sum (SUM(total_amount) as it is: the query divides it, an average or a "
                                        "ratio is no total)"])
    trimmed = trim({"model": "m", "messages": [{"role": "user", "content": text}]})
    assert '"measure": "android' in trimmed["last_user_head"] and trimmed.get("claim_head")
    assert _claim_key(_first_user(trimmed)) == _claim_key(text) == ("change", "android share of completed revenue "
                                                                     "(total_amount)")
