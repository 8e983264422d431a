"""Verification: verdict boundaries and the grounded verifier loop."""

from __future__ import annotations

import json

import pytest

from assay import limits
from assay.explore.executor import Executor
from assay.llm.scripted import ReplayLLM
from assay.models import ExplorationStep, Insight, StepAction, ValidationStatus, WarehouseConfig
from assay.schema.provider import SchemaProvider
from assay.validate.verify import Verifier, render_evidence, verdict
from assay.warehouse.duckdb import DuckDBWarehouse
from assay.warehouse.guard import SQLGuard
from tests.helpers import small_warehouse


@pytest.mark.parametrize("claimed, verified, status", [
    (100, 100, "confirmed"), (100, 80, "confirmed"), (100, 120, "confirmed"), (100, 79, "adjusted"),
    (100, 121, "adjusted"), (100, 0, "rejected"), (5, 4, "confirmed"), (5, 6, "confirmed"), (5, 7, "adjusted"),
])
def test_verdict_boundaries(claimed, verified, status):
    assert verdict(claimed, verified).value == status


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    db = small_warehouse(tmp_path_factory.mktemp("v") / "w.duckdb")
    wh = DuckDBWarehouse(str(db))
    tables = wh.list_tables()
    return wh, tables


def verifier(world, llm):
    wh, tables = world
    src = ExplorationStep(run_id="r", step=3, action=StepAction.query, purpose="paid customers",
                          query="SELECT channel, count(*) FROM customers GROUP BY 1")
    ex = Executor(wh, SQLGuard("duckdb", tables=tables, default_schema="main"),
                  WarehouseConfig(kind="duckdb", settings={}), llm)
    return Verifier(llm=llm, executor=ex, steps={3: src}, catalog="- main.customers", provider=SchemaProvider(tables))


def insight(count=66, steps=(3,)):
    return Insight(id="churn-1", area="churn", name="Paid customers", description="paid customers churn", affected_count=count,
                   source_steps=list(steps))


def test_sources_only(world):
    llm = ReplayLLM({"verify": ['{"query": "SELECT count(*) AS count FROM customers WHERE channel = \'paid\'"}']})
    v = verifier(world, llm).verify(insight(66))
    assert v.status == ValidationStatus.confirmed and v.verified_count == 66 and v.claimed_count == 66
    # the instructions and the catalog, the same for every claim of the run, first and marked for the provider's
    # prompt cache; the claim's own source queries after them, outside the cached block
    stable, sources = llm.calls[0].system
    assert stable.cache and not sources.cache
    assert "Warehouse catalog" in stable.text and "SELECT channel" not in stable.text
    assert "SELECT channel, count(*) FROM customers" in sources.text


def test_lookups_then_query(world):
    llm = ReplayLLM({"verify": ['{"lookup_schema": ["main.orders"]}',
                                '{"query": "SELECT count(DISTINCT customer_id) AS count FROM orders"}']})
    v = verifier(world, llm).verify(insight(150))
    assert v.status == ValidationStatus.adjusted and v.verified_count == 200
    assert "customer_id" in llm.calls[1].messages[-1].content  # the lookup result reached the model


def test_budget_exhausted_then_forced_round(world):
    answers = ['{"lookup_schema": ["main.orders"]}'] * limits.MAX_LOOKUPS_PER_VERIFICATION
    answers.append('{"query": "SELECT 66 AS count"}')
    llm = ReplayLLM({"verify": answers})
    v = verifier(world, llm).verify(insight(66))
    assert v.status == ValidationStatus.confirmed
    last = llm.calls[-1]
    assert last.meta["forced"] and "final round" in last.messages[-1].content


def test_forced_round_without_query_is_error(world):
    answers = ['{"lookup_schema": ["main.orders"]}'] * limits.MAX_LOOKUPS_PER_VERIFICATION + ['{"lookup_schema": ["x"]}']
    v = verifier(world, ReplayLLM({"verify": answers})).verify(insight(66))
    assert v.status == ValidationStatus.error and "forced final round" in v.reasoning


def test_allow_list_rejects_explorer_actions(world):
    llm = ReplayLLM({"verify": ['{"done": true}', '{"search_tables": "x"}', '{"query": "SELECT 66 AS count"}']})
    v = verifier(world, llm).verify(insight(66))
    assert v.status == ValidationStatus.confirmed
    assert "not available" in llm.calls[1].messages[-1].content


def test_zero_verified_is_rejected_and_claim_kept(world):
    llm = ReplayLLM({"verify": ['{"query": "SELECT count(*) AS count FROM customers WHERE channel = \'tv\'"}']})
    ins = insight(40)
    v = verifier(world, llm).verify(ins)
    assert v.status == ValidationStatus.rejected and ins.affected_count == 40 and v.claimed_count == 40


def test_no_count_is_not_verifiable(world):
    v = verifier(world, ReplayLLM({})).verify(insight(None))
    assert v.status == ValidationStatus.not_verifiable


def test_not_a_single_count_is_error(world):
    llm = ReplayLLM({"verify": ['{"query": "SELECT channel, count(*) FROM customers GROUP BY 1"}']})
    assert verifier(world, llm).verify(insight(66)).status == ValidationStatus.error


def test_fixer_gets_the_same_evidence(world):
    llm = ReplayLLM({"verify": ['{"query": "SELECT count(chanel) AS count FROM customers"}'],
                     "fix": ["SELECT count(*) AS count FROM customers WHERE channel = 'paid'"]})
    v = verifier(world, llm).verify(insight(66))
    assert v.status == ValidationStatus.confirmed
    fix_prompt = llm.purposes("fix")[0].system_text()
    assert "SELECT channel, count(*) FROM customers" in fix_prompt  # evidence in the fixer's prompt


def test_evidence_skips_failed_steps():
    ok = ExplorationStep(run_id="r", step=1, action=StepAction.query, query="SELECT 1")
    bad = ExplorationStep(run_id="r", step=2, action=StepAction.query, query="SELECT x", error="boom")
    text = render_evidence(insight(1, steps=(1, 2, 9)), {1: ok, 2: bad})
    assert "SELECT 1" in text and "SELECT x" not in text


def test_generated_sql_needs_no_llm(world):
    wh, tables = world
    ex = Executor(wh, SQLGuard("duckdb", tables=tables, default_schema="main"), WarehouseConfig(), None)
    ins = insight(200)
    ins.verification_sql = "SELECT count(*) FROM customers"
    v = Verifier(llm=None, executor=ex, steps={}).verify(ins)
    assert v.status == ValidationStatus.confirmed and json.loads(v.model_dump_json())["query"]


def test_a_providers_cache_serves_the_shared_block_of_the_second_verification():
    """What the replay LLM counts as served from a prompt cache: the leading cache-marked system blocks, when an
    earlier request sent the same text and it reaches the provider's 1,024-token minimum."""
    from assay.llm.base import CACHE_MIN_TOKENS, LLMRequest, SystemBlock, cached_system_chars
    from assay.limits import CHARS_PER_TOKEN
    from assay.validate.verify import CLAIM_PROMPT, verification_system

    catalog = "- main.orders: " + "order_id, " * (CACHE_MIN_TOKENS * CHARS_PER_TOKEN // 10)
    seen: set[str] = set()

    def req(evidence, cat=catalog):
        return LLMRequest(purpose="verify", system=verification_system(CLAIM_PROMPT, evidence, cat), messages=[])

    first, second = req("-- step 1\nSELECT 1"), req("-- step 4\nSELECT 2")
    assert first.system[0].text == second.system[0].text  # two claims' sources differ, their first block not
    assert cached_system_chars(first, seen) == 0
    assert cached_system_chars(second, seen) == len(second.system[0].text)
    small = set()
    a, b = req("x", "- main.orders"), req("y", "- main.orders")  # under the provider's minimum: never cached
    assert cached_system_chars(a, small) == cached_system_chars(b, small) == 0
    plain = LLMRequest(purpose="verify", system=[SystemBlock("x" * 10_000)], messages=[])
    assert cached_system_chars(plain, seen) == cached_system_chars(plain, seen) == 0  # not marked: not cached
