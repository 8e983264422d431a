"""Each LLM provider in a project YAML: typed settings with suggestions, the README's examples,
the run's first line, and the price table for the providers' model ids."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from assay.config import project_errors
from assay.errors import ConfigError
from assay.estimate import price_for, price_model
from assay.llm import PROVIDERS, build_llm
from assay.llm.resolve import describe, resolve_llm
from assay.models import LLMConfig
from assay.settings import load_project_file

README = Path(__file__).resolve().parents[2] / "README.md"
WH = {"kind": "duckdb", "settings": {"path": "w.duckdb"}}


def errors(llm: dict) -> list[str]:
    return project_errors({"id": "p", "warehouse": WH, "llm": llm})[1]


def test_cloud_providers_are_registered():
    assert {"bedrock", "vertex", "azure"} <= set(PROVIDERS)


@pytest.mark.parametrize("llm, expected", [
    ({"provider": "bedrok", "model": "m"}, "llm.provider: unknown provider 'bedrok' (did you mean bedrock?)"),
    ({"provider": "vertx", "model": "m"}, "llm.provider: unknown provider 'vertx' (did you mean vertex?)"),
    ({"provider": "bedrock", "model": "m", "settings": {"regoin": "us-east-1"}},
     "llm.settings.regoin: unknown key (did you mean region?)"),
    ({"provider": "bedrock", "model": "m", "settings": {"profil": "x"}},
     "llm.settings.profil: unknown key (did you mean profile?)"),
    ({"provider": "vertex", "model": "m", "settings": {"project_id": "p"}}, "llm.settings.region: required"),
    ({"provider": "vertex", "model": "m", "settings": {"region": "us-east5", "projectid": "p"}},
     "llm.settings.projectid: unknown key (did you mean project_id?)"),
    ({"provider": "azure", "model": "gpt-4o", "settings": {"endpoint": "acme.openai.azure.com"}},
     "llm.settings.endpoint: 'acme.openai.azure.com' is not an http(s) URL"),
    ({"provider": "azure", "model": "gpt-4o", "settings": {"endpont": "https://a.openai.azure.com"}},
     "llm.settings.endpont: unknown key (did you mean endpoint?)"),
    ({"provider": "azure", "model": "gpt-4o", "settings": {"endpoint": "https://a", "api_verison": "x"}},
     "llm.settings.api_verison: unknown key (did you mean api_version?)"),
    ({"provider": "bedrock", "settings": {"region": "us-east-1"}}, "llm.model: required for the bedrock provider"),
    ({"provider": "azure", "settings": {"endpoint": "https://a"}}, "llm.model: required for the azure provider"),
    ({"provider": "anthropic", "settings": {"region": "us-east-1"}},
     "llm.settings: the anthropic provider takes no settings"),
    ({"provider": "bedrock", "model": "m", "settings": {"region": "r", "aws_secret_access_key": "abc"}},
     "llm.settings.aws_secret_access_key: secrets are never stored in a project"),
])
def test_typed_settings_errors(llm, expected):
    errs = errors(llm)
    assert any(e.startswith(expected) for e in errs), errs
    assert all("\n" not in e for e in errs)


def test_a_misspelt_required_key_is_one_error():
    errs = errors({"provider": "vertex", "model": "m", "settings": {"regoin": "us-east5"}})
    assert errs == ["llm.settings.regoin: unknown key (did you mean region?)"]


def test_the_readme_examples_are_valid_projects(tmp_path):
    text = README.read_text()
    section = text[text.index("### LLM providers"):text.index("### Environment")]
    blocks = re.findall(r"```yaml\n(llm:.*?)```", section, re.DOTALL)
    assert len(blocks) == 5
    providers = []
    for i, block in enumerate(blocks):
        f = tmp_path / f"p{i}.yaml"
        f.write_text(f"id: p{i}\nwarehouse: {{kind: duckdb, settings: {{path: w.duckdb}}}}\n{block}")
        project = load_project_file(f)  # strict: raises on any problem
        providers.append(project.llm.provider)
        assert price_for(project.llm.model) is not None, project.llm.model
    assert providers == ["anthropic", "openai", "bedrock", "vertex", "azure"]


def test_an_unquoted_azure_api_version_is_read_as_text(tmp_path):
    f = tmp_path / "p.yaml"
    f.write_text("id: p\nwarehouse: {kind: duckdb, settings: {path: w.duckdb}}\nllm:\n  provider: azure\n"
                 "  model: gpt-4o\n  settings: {endpoint: 'https://a.openai.azure.com', api_version: 2024-10-21}\n")
    assert errors_of(f) == []
    from assay.config import llm_settings

    assert llm_settings("azure", load_project_file(f).llm.settings).api_version == "2024-10-21"


def errors_of(path: Path) -> list[str]:
    try:
        load_project_file(path)
    except ConfigError as exc:
        return str(exc).splitlines()
    return []


def test_build_llm_reports_bad_settings_of_a_stored_project():
    with pytest.raises(ConfigError, match=r"llm.settings.endpoint: required"):
        build_llm(LLMConfig(provider="azure", model="gpt-4o", settings={}))


def test_the_runs_first_line_names_the_provider_and_where():
    res = resolve_llm(LLMConfig(provider="bedrock", model="us.anthropic.claude-sonnet-4-5-20250929-v1:0",
                                settings={"region": "eu-west-1"}), env={})
    assert describe("llm", res) == ("analyst: LLM (bedrock us.anthropic.claude-sonnet-4-5-20250929-v1:0) because "
                                    "llm.provider is 'bedrock' (eu-west-1)")
    res = resolve_llm(LLMConfig(provider="auto"), env={"ANTHROPIC_API_KEY": "k"})
    assert res.cfg.provider == "anthropic"  # auto is unchanged: cloud providers are chosen by name only


@pytest.mark.parametrize("model, name, prices", [
    ("us.anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5-20250929-v1:0", (3.0, 15.0, 0.3)),
    ("global.anthropic.claude-opus-4-5-20251101-v1:0", "claude-opus-4-5-20251101-v1:0", (5.0, 25.0, 0.5)),
    ("anthropic.claude-3-5-haiku-20241022-v1:0", "claude-3-5-haiku-20241022-v1:0", (0.8, 4.0, 0.08)),
    ("arn:aws:bedrock:us-east-1:123456789012:inference-profile/eu.anthropic.claude-haiku-4-5-20251001-v1:0",
     "claude-haiku-4-5-20251001-v1:0", (1.0, 5.0, 0.1)),
    ("claude-sonnet-4-5@20250929", "claude-sonnet-4-5", (3.0, 15.0, 0.3)),
    ("claude-opus-4-1@20250805", "claude-opus-4-1", (15.0, 75.0, 1.5)),
    ("gpt-4o", "gpt-4o", (2.5, 10.0, 1.25)),
    ("gpt-5-mini", "gpt-5-mini", (0.25, 2.0, 0.025)),
    ("o4-mini", "o4-mini", (1.1, 4.4, 0.275)),
])
def test_price_table_covers_each_providers_model_ids(model, name, prices):
    assert price_model(model) == name
    p = price_for(model)
    assert (p["input"], p["output"], p["cache_read"]) == prices


def test_unknown_models_have_no_price_and_overrides_win():
    assert price_for("my-finetune") is None
    assert price_for("us.anthropic.claude-sonnet-4-5-v1:0", {"input": 1.0, "output": 2.0})["output"] == 2.0
