"""LLM providers, registered by short name."""

from __future__ import annotations

import os
from typing import Callable

from ..errors import ConfigError
from ..models import LLMConfig
from .base import LLM, LLMRequest, LLMResponse, Message, SystemBlock, ToolCall, ToolSpec

PROVIDERS = ("anthropic", "openai", "openai-json", "scripted", "none")

_scripted_factories: dict[str, Callable[[LLMConfig], LLM]] = {}


def register_scripted(name: str, factory: Callable[[LLMConfig], LLM]) -> None:
    """Register a scripted LLM by name (tests and benchmarks)."""
    _scripted_factories[name] = factory


def llm_configured(cfg: LLMConfig) -> bool:
    if cfg.provider == "none":
        return False
    if cfg.provider == "anthropic":
        return bool(os.environ.get(cfg.api_key_env or "ANTHROPIC_API_KEY") or cfg.secret_block)
    return True


def build_llm(cfg: LLMConfig) -> LLM | None:
    from .. import secrets

    p = cfg.provider
    if p == "none":
        return None
    if p == "anthropic":
        from .anthropic import AnthropicLLM

        key = secrets.resolve(cfg.api_key_env or "ANTHROPIC_API_KEY", cfg.secret_block, what="anthropic")
        return AnthropicLLM(cfg.model, api_key=key, base_url=cfg.base_url)
    if p in ("openai", "openai-json"):
        from .openai_compat import OpenAICompatLLM

        key = secrets.resolve(cfg.api_key_env or "OPENAI_API_KEY", cfg.secret_block, what="openai",
                              required=cfg.base_url is None)
        if not cfg.model:
            raise ConfigError("llm.model: required for the openai provider")
        return OpenAICompatLLM(cfg.model, base_url=cfg.base_url, api_key=key, tools=p == "openai")
    if p == "scripted":
        factory = _scripted_factories.get(cfg.model)
        if factory is None:
            known = ", ".join(sorted(_scripted_factories)) or "none registered"
            raise ConfigError(f"llm.model: unknown scripted LLM {cfg.model!r} (registered: {known})")
        return factory(cfg)
    raise ConfigError(f"llm.provider: unknown provider {p!r} (valid: {', '.join(PROVIDERS)})")


__all__ = [
    "LLM", "LLMRequest", "LLMResponse", "Message", "SystemBlock", "ToolCall", "ToolSpec",
    "PROVIDERS", "build_llm", "llm_configured", "register_scripted",
]


def _bench(cfg: LLMConfig) -> LLM:
    from .bench_script import bench_llm

    return bench_llm(cfg)


register_scripted("bench", _bench)
