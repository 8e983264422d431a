"""The shared action parser: every accepted shape, and every rejection."""

from __future__ import annotations

import pytest

from assay.explore.actions import ActionParseError, from_tool_call, parse_action, reformat_nudge
from assay.llm.base import ToolCall


@pytest.mark.parametrize("text, kind", [
    ('{"thinking": "t", "query": "SELECT 1"}', "query"),
    ('Sure!\n```json\n{"query": "SELECT 1", "purpose": "p"}\n```', "query"),
    ('{"name": "query", "input": {"sql": "SELECT 1"}}', "query"),
    ('{"tool": "lookup_schema", "arguments": {"tables": ["main.orders"]}}', "lookup_schema"),
    ('{"action": "query", "sql": "SELECT 1"}', "query"),
    ('{"action": "query_data", "query": "SELECT 1"}', "query"),
    ('{"lookup_schema": ["main.orders", "main.customers"]}', "lookup_schema"),
    ('{"lookup_schema": "main.orders, main.customers"}', "lookup_schema"),
    ('{"search_tables": "refunds", "top_k": 5}', "search_tables"),
    ('{"done": true, "summary": "finished"}', "done"),
    ('{"action": "complete", "summary": "x"}', "done"),
])
def test_accepted_shapes(text, kind):
    assert parse_action(text).kind == kind


def test_last_candidate_with_a_recognised_key_wins():
    text = '{"plan": "first"} then {"query": "SELECT 1"} and finally {"query": "SELECT 2"}'
    assert parse_action(text).sql == "SELECT 2"


@pytest.mark.parametrize("text", [
    "", "I think we are done here.", '{"plan": "x", "thinking": "y"}', '{"query": ""}', "{not json",
    '{"done": false}',
])
def test_rejected(text):
    with pytest.raises(ActionParseError):
        parse_action(text)


def test_prose_mentioning_done_is_not_completion():
    with pytest.raises(ActionParseError):
        parse_action("We are done with churn; next I will look at revenue.")


def test_allow_list_rejects_explorer_only_actions():
    with pytest.raises(ActionParseError, match="not available"):
        parse_action('{"done": true}', ("lookup_schema", "query"))
    with pytest.raises(ActionParseError, match="not available"):
        parse_action('{"search_tables": "x"}', ("lookup_schema", "query"))
    assert parse_action('{"query": "SELECT 1"}', ("lookup_schema", "query")).kind == "query"


def test_tool_calls():
    assert from_tool_call(ToolCall("c1", "query", {"sql": "SELECT 1", "purpose": "p"})).call_id == "c1"
    with pytest.raises(ActionParseError):
        from_tool_call(ToolCall("c2", "drop_table", {}))
    with pytest.raises(ActionParseError):
        from_tool_call(ToolCall("c3", "query", {"_invalid_arguments": "{oops"}))


def test_nudge_lists_only_allowed_shapes():
    msg = reformat_nudge("no JSON", ("query",))
    assert "SELECT" in msg and "lookup_schema" not in msg
