"""Which LLM a run uses, decided when the run starts (not when the project was saved).

``llm.provider: auto`` (the default) takes Claude when ``ANTHROPIC_API_KEY`` (or the
project's ``llm.secret_block``) is there, an OpenAI-compatible server when
``OPENAI_BASE_URL`` or ``OPENAI_API_KEY`` is there, and no LLM otherwise (the
statistical analyst runs). ``ANTHROPIC_BASE_URL`` and ``OPENAI_BASE_URL`` are
honoured, so a proxy, a gateway or the developers' model bridge is reached
without editing the project. Every resolution carries a one-line reason: the
first line of a run says which analyst and model ran and why.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Mapping

from ..models import LLMConfig

DEFAULT_OPENAI_MODEL = "gpt-4o-mini"


@dataclass
class Resolution:
    cfg: LLMConfig | None  # None: no LLM (the statistical analyst runs)
    reason: str

    @property
    def model(self) -> str:
        if self.cfg is None:
            return ""
        if self.cfg.provider == "anthropic" and not self.cfg.model:
            from .anthropic import DEFAULT_MODEL

            return DEFAULT_MODEL
        return self.cfg.model


def _anthropic(cfg: LLMConfig, env: Mapping[str, str], why: str) -> Resolution:
    base = cfg.base_url or env.get("ANTHROPIC_BASE_URL") or None
    out = cfg.model_copy(update={"provider": "anthropic", "base_url": base})
    if base:
        why += f", ANTHROPIC_BASE_URL={base}"
    return Resolution(out, why)


def _openai(cfg: LLMConfig, env: Mapping[str, str], why: str, provider: str = "openai") -> Resolution:
    base = cfg.base_url or env.get("OPENAI_BASE_URL") or None
    # api.openai.com has a sensible default model; a self-hosted server serves the model it was started with
    model = cfg.model or env.get("OPENAI_MODEL") or ("" if base else DEFAULT_OPENAI_MODEL)
    out = cfg.model_copy(update={"provider": provider, "base_url": base, "model": model})
    if base:
        why += f", OPENAI_BASE_URL={base}"
    return Resolution(out, why)


def resolve_llm(cfg: LLMConfig, env: Mapping[str, str] | None = None) -> Resolution:
    """The concrete LLM configuration for a run now, and why."""
    env = os.environ if env is None else env
    p = cfg.provider
    if p == "none":
        return Resolution(None, "llm.provider is 'none' in the project")
    if p == "anthropic":
        key_env = cfg.api_key_env or "ANTHROPIC_API_KEY"
        if env.get(key_env):
            return _anthropic(cfg, env, f"llm.provider is 'anthropic' and {key_env} is set")
        if cfg.secret_block:
            return _anthropic(cfg, env, f"llm.provider is 'anthropic' with Secret block {cfg.secret_block!r}")
        return Resolution(None, f"llm.provider is 'anthropic' but {key_env} is not set")
    if p in ("openai", "openai-json"):
        return _openai(cfg, env, f"llm.provider is {p!r}", p)
    if p == "scripted":
        return Resolution(cfg, f"llm.provider is 'scripted' ({cfg.model})")
    if p in ("bedrock", "vertex", "azure"):
        where = cfg.settings.get("region") or cfg.settings.get("endpoint") or ""
        return Resolution(cfg, f"llm.provider is {p!r}" + (f" ({where})" if where else ""))
    if p != "auto":
        return Resolution(cfg, f"llm.provider is {p!r}")  # build_llm reports the unknown name
    # auto
    key_env = cfg.api_key_env or "ANTHROPIC_API_KEY"
    if env.get(key_env):
        return _anthropic(cfg, env, f"{key_env} is set")
    if cfg.secret_block:
        return _anthropic(cfg, env, f"the project names Secret block {cfg.secret_block!r}")
    if env.get("OPENAI_BASE_URL") or env.get("OPENAI_API_KEY"):
        which = "OPENAI_BASE_URL" if env.get("OPENAI_BASE_URL") else "OPENAI_API_KEY"
        res = _openai(cfg, env, f"{which} is set (an OpenAI-compatible server)")
        if not res.cfg.model:
            return Resolution(None, f"{which} is set but no model is named (set OPENAI_MODEL or llm.model)")
        return res
    return Resolution(None, "no ANTHROPIC_API_KEY, OPENAI_API_KEY or OPENAI_BASE_URL is set")


# how to get an LLM analyst, in every message that says there is none (the run's note, `show`, `ask`, pack
# generation, analyst: llm): one wording, as the README's "Which analyst runs" says it
HOW_TO_ADD_AN_LLM = ("set ANTHROPIC_API_KEY, or OPENAI_BASE_URL / OPENAI_API_KEY for an OpenAI-compatible server, "
                     "or the project's llm.provider")


def describe(analyst: str, res: Resolution) -> str:
    """The first line of a run: which analyst and model ran, and why."""
    if analyst == "llm" and res.cfg is not None:
        return f"analyst: LLM ({res.cfg.provider} {res.model}) because {res.reason}"
    if res.cfg is None:
        return f"analyst: statistical (no LLM) because {res.reason}"
    return f"analyst: statistical because the project sets analyst: statistical ({res.reason})"
