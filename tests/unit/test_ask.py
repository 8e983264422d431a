"""`assay ask`: turn budget, enumeration detection, answer citing its SQL."""

from __future__ import annotations

import json

import pytest

from assay import limits
from assay.ask import ask, is_enumeration, turn_budget
from assay.errors import MissingKey
from assay.llm.scripted import ReplayLLM
from assay.models import Project, WarehouseConfig
from assay.settings import load_settings
from assay.store import open_store
from tests.helpers import small_warehouse


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    db = small_warehouse(tmp_path_factory.mktemp("ask") / "w.duckdb")
    return Project(id="askp", pack="ecommerce", warehouse=WarehouseConfig(kind="duckdb", settings={"path": str(db)}))


def test_budget():
    assert turn_budget("How many orders?") == limits.ASK_MAX_TURNS
    assert turn_budget("List all channels with their customers") == limits.ASK_MAX_TURNS_ENUMERATION
    assert turn_budget("anything", 7) == 7
    assert is_enumeration("show me all paid customers") and not is_enumeration("how many customers pay?")


def test_answer_cites_the_sql(project):
    llm = ReplayLLM({"ask": [
        json.dumps({"purpose": "count orders", "query": "SELECT count(*) AS n FROM orders"}),
        json.dumps({"purpose": "paid share", "query": "SELECT channel, count(*) AS n FROM customers GROUP BY 1"}),
        '{"done": true, "summary": "There are 1,000 orders (step 1)."}',
    ]})
    ans = ask(open_store(load_settings()), project, "How many orders are there?", llm=llm)
    assert ans.finished == "done" and "1,000 orders" in ans.answer
    assert [s.query for s in ans.cited()] == ["SELECT count(*) AS n FROM orders"]
    assert "Question: How many orders are there?" in llm.calls[0].messages[0].content
    assert "You have 5 turns" in llm.calls[0].system_text()


def test_out_of_turns_says_so(project):
    llm = ReplayLLM({"ask": [json.dumps({"query": "SELECT 1 AS x"})] * 2})
    ans = ask(open_store(load_settings()), project, "q", llm=llm, turns=2)
    assert ans.finished == "max_steps" and "no final answer within 2 turns" in ans.answer and len(ans.queries) == 2


def test_needs_an_llm(project):
    with pytest.raises(MissingKey, match="assay ask needs an LLM, and none is available: no ANTHROPIC_API_KEY"):
        ask(open_store(load_settings()), project, "q")
    pinned = project.model_copy(update={"llm": project.llm.model_copy(update={"provider": "none"})})
    with pytest.raises(MissingKey, match="llm.provider is 'none' in the project"):
        ask(open_store(load_settings()), pinned, "q")
