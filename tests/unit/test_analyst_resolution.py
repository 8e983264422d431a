"""The analyst is chosen when a run starts: a key in the environment is enough, no file to edit."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from assay.cli import app
from assay.errors import MissingKey
from assay.llm import build_llm, llm_configured
from assay.llm.resolve import resolve_llm
from assay.models import LLMConfig, Project, WarehouseConfig
from assay.run.analyst import analyst_choice
from assay.run.lifecycle import create_run
from assay.settings import load_settings
from assay.store import open_store


def _project(**llm) -> Project:
    return Project(id="resolve-p", pack="ecommerce", warehouse=WarehouseConfig(kind="duckdb", settings={"path": "/nowhere/w.duckdb"}),
                   llm=LLMConfig(**llm))


def test_default_is_auto_and_a_key_picks_claude(monkeypatch):
    p = _project()
    assert p.llm.provider == "auto"
    assert analyst_choice(p)[0] == "statistical"  # no key: the statistical analyst, and the line says why
    assert "no ANTHROPIC_API_KEY, OPENAI_API_KEY or OPENAI_BASE_URL" in analyst_choice(p)[1]
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    analyst, line = analyst_choice(p)
    assert analyst == "llm"
    assert line.startswith("analyst: LLM (anthropic claude-") and "ANTHROPIC_API_KEY is set" in line
    llm = build_llm(p.llm)
    assert llm.name == "anthropic" and llm.supports_tools


def test_base_urls_are_honoured(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9/")
    llm = build_llm(LLMConfig())
    assert str(llm.client.base_url).startswith("http://127.0.0.1:9")
    assert "ANTHROPIC_BASE_URL=http://127.0.0.1:9/" in analyst_choice(_project())[1]
    # an explicit anthropic provider also goes through the gateway
    assert str(build_llm(LLMConfig(provider="anthropic")).client.base_url).startswith("http://127.0.0.1:9")


def test_openai_compatible_server_when_only_its_url_is_set(monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    res = resolve_llm(LLMConfig())  # a self-hosted server: its model must be named
    assert res.cfg is None and "set OPENAI_MODEL" in res.reason
    monkeypatch.setenv("OPENAI_MODEL", "qwen2.5")
    res = resolve_llm(LLMConfig())
    assert res.cfg.provider == "openai" and res.cfg.model == "qwen2.5" and "OPENAI_BASE_URL" in res.reason
    llm = build_llm(LLMConfig())
    assert llm.name == "openai" and llm.base_url == "http://127.0.0.1:9/v1"
    assert analyst_choice(_project())[0] == "llm"


def test_pinned_choices_are_kept(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    assert not llm_configured(LLMConfig(provider="none"))
    assert analyst_choice(_project(provider="none")) == (
        "statistical", "analyst: statistical (no LLM) because llm.provider is 'none' in the project")
    stat = _project().model_copy(update={"analyst": "statistical"})
    assert analyst_choice(stat)[0] == "statistical"
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    with pytest.raises(MissingKey, match="analyst is 'llm' but no LLM is configured"):
        analyst_choice(_project().model_copy(update={"analyst": "llm"}))


def test_a_named_provider_without_its_key_fails_the_run_and_doctor_says_so(monkeypatch):
    """A new user (session 26): ``llm: {provider: anthropic}`` with no key ran the statistical analyst and exited 0
    (a scheduled run that lost its key degraded unnoticed), and `assay doctor` said "ready" for a project with
    ``analyst: llm`` that `assay discover` then refused. A provider the project names needs its key; doctor fails
    where the run would."""
    from assay.doctor import FAIL, check_llm

    for var in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    named = _project(provider="anthropic")
    with pytest.raises(MissingKey, match="llm.provider is 'anthropic' but ANTHROPIC_API_KEY is not set"):
        analyst_choice(named)
    assert check_llm(named)[0] == FAIL and "ANTHROPIC_API_KEY is not set" in check_llm(named)[1]
    llm_only = _project().model_copy(update={"analyst": "llm"})
    status, said = check_llm(llm_only)
    assert status == FAIL and "analyst is 'llm' but no LLM is configured" in said
    # what falls back, as before: auto, none, and a project that chose the statistical analyst
    assert analyst_choice(_project())[0] == "statistical" and check_llm(_project())[0] != FAIL
    assert analyst_choice(_project(provider="none"))[0] == "statistical"
    assert analyst_choice(named.model_copy(update={"analyst": "statistical"}))[0] == "statistical"


def test_run_records_its_first_line(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    store = open_store(load_settings())
    p = _project()
    store.save_project(p)
    run = create_run(store, p, run_id="resolve-run-1")
    assert run.analyst == "llm" and run.analyst_note.startswith("analyst: LLM (anthropic ")


def test_demo_and_goal_projects_do_not_pin_the_statistical_analyst(monkeypatch, tmp_path):
    runner = CliRunner()
    r = runner.invoke(app, ["demo", "--generate-only", "--scale", "0.05"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    store = open_store(load_settings())
    demo = store.get_project("demo-ecommerce")
    assert demo.llm.provider == "auto"
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    assert analyst_choice(demo)[0] == "llm"
    from assay.cli import _goal_project

    pid = _goal_project(None, str(load_settings().demo_dir / "ecommerce.duckdb"), "why do orders fall?")[0]
    assert analyst_choice(store.get_project(pid))[0] == "llm"


def test_demo_names_its_choices_for_an_unknown_which():
    """Session 15, a new user: `assay demo --which foo` said "no project 'demo-foo' (known: ...)"."""
    r = CliRunner().invoke(app, ["demo", "--which", "foo", "--generate-only"])
    assert r.exit_code == 2 and "--which foo: choose ecommerce, gaming or both" in r.output, r.output


def test_every_message_that_says_there_is_no_llm_says_how_to_add_one_in_the_same_words(monkeypatch, tmp_path):
    """A new user met four wordings with four different fixes (the run's first line, `show`, the report's note,
    `ask`); each now ends with one text, and a project that chose the statistical analyst is told about that
    choice, not about a key it has no use for."""
    from assay.ask import ask
    from assay.llm.resolve import HOW_TO_ADD_AN_LLM
    from assay.run.analyst import STATISTICAL_NOTE, statistical_note
    from assay.services.packs import generate_pack
    from tests.helpers import small_warehouse

    for var in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    p = _project().model_copy(update={"warehouse": WarehouseConfig(
        kind="duckdb", settings={"path": str(small_warehouse(tmp_path / "w.duckdb"))})})
    store = open_store(load_settings())
    store.save_project(p)
    assert HOW_TO_ADD_AN_LLM in STATISTICAL_NOTE
    chose = statistical_note(True)
    assert "sets analyst: statistical" in chose and "ANTHROPIC_API_KEY" not in chose
    with pytest.raises(MissingKey) as e:
        analyst_choice(p.model_copy(update={"analyst": "llm"}))
    assert HOW_TO_ADD_AN_LLM in str(e.value)
    with pytest.raises(MissingKey) as e:
        ask(store, p, "how many orders?")
    assert HOW_TO_ADD_AN_LLM in str(e.value)
    with pytest.raises(MissingKey) as e:
        generate_pack(p.id, "")
    assert HOW_TO_ADD_AN_LLM in str(e.value)
