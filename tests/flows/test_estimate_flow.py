"""`assay estimate` and the flow's estimate_only: a prediction per phase, nothing run."""

from __future__ import annotations

import asyncio
import json
import math

from typer.testing import CliRunner

from assay.cli import app
from assay.estimate import Shape
from assay.models import LLMConfig, Project, WarehouseConfig
from assay.settings import load_settings
from assay.store import open_store
from assay_flows.flows.discovery import DiscoveryParams, discovery_flow
from tests.helpers import small_warehouse


def project(tmp_path, pid, **llm):
    db = small_warehouse(tmp_path / "w.duckdb")
    p = Project(id=pid, pack="ecommerce", max_steps=30, warehouse=WarehouseConfig(kind="duckdb",
                                                                                    settings={"path": str(db)}),
                llm=LLMConfig(**llm))
    open_store(load_settings()).save_project(p)
    return p


def test_cli_estimate_per_phase(tmp_path):
    project(tmp_path, "est-cli", provider="anthropic", model="claude-sonnet-4-5", api_key_env="NO_SUCH_KEY_ENV")
    r = CliRunner().invoke(app, ["estimate", "est-cli", "--json"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    est = json.loads(r.output)
    assert est["analyst"] == "llm" and est["max_steps"] == 30
    assert [p["phase"] for p in est["phases"]] == ["exploration", "analysis", "verification", "recommendations",
                                                  "table descriptions"]  # #19: LLM-written descriptions
    ex = est["phases"][0]
    d = Shape()  # 30 steps: the steps it uses and its schema actions, a few to a turn, then done
    assert ex["calls"] == math.ceil((round(30 * d.steps_used_share) + d.schema_calls) / d.steps_per_call) + 1
    assert 0 < ex["cached_tokens"] < ex["input_tokens"]
    assert est["total"]["cost_usd"] > 0 and est["prices"]["input"] == 3.0
    assert est["warehouse"]["engine"] == "duckdb" and "no cost" in est["warehouse"]["note"]
    r = CliRunner().invoke(app, ["estimate", "est-cli", "--max-steps", "10"], catch_exceptions=False)
    assert r.exit_code == 0 and "exploration" in r.output and "total" in r.output
    r = CliRunner().invoke(app, ["estimate", "nope"])
    assert r.exit_code == 2 and "no project 'nope'" in r.output


def test_an_auto_project_is_priced_as_the_model_a_run_would_use(tmp_path, monkeypatch):
    """A project with the default ``llm.provider: auto`` and ANTHROPIC_API_KEY set runs Claude's default model; its
    estimate said "model auto" and "no price known for model 'auto'" (session 15). Without a key it is the
    statistical analyst's (no LLM cost): its estimate says so and prices what the LLM analyst would cost."""
    from assay.llm.anthropic import DEFAULT_MODEL

    project(tmp_path, "est-auto")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    est = json.loads(CliRunner().invoke(app, ["estimate", "est-auto", "--json"], catch_exceptions=False).output)
    assert est["analyst"] == "llm" and est["model"] == DEFAULT_MODEL, (est["analyst"], est["model"])
    assert est["prices"] == {"input": 3.0, "output": 15.0, "cache_read": 0.3} and est["total"]["cost_usd"] > 0
    assert not any("no price known" in n for n in est["notes"])
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    est = json.loads(CliRunner().invoke(app, ["estimate", "est-auto", "--json"], catch_exceptions=False).output)
    assert est["lead"].startswith("No API key is set: a run started now would use the statistical analyst")
    assert est["analyst"] == "llm" and est["model"] == DEFAULT_MODEL and est["total"]["cost_usd"] > 0


def test_estimate_only_runs_nothing(tmp_path):
    p = project(tmp_path, "est-flow", provider="scripted", model="bench")
    store = open_store(load_settings())
    state = asyncio.run(discovery_flow(DiscoveryParams(project=p.id, estimate_only=True), return_state=True))
    assert state.is_completed()
    est = state.result()
    assert est["project"] == "est-flow" and est["total"]["input_tokens"] > 0
    assert store.list_runs(p.id) == []  # no run, no step
