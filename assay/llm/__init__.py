"""LLM providers, registered by short name."""

from __future__ import annotations

from typing import Callable

from ..errors import ConfigError
from ..models import LLMConfig
from .base import LLM, LLMRequest, LLMResponse, Message, SystemBlock, ToolCall, ToolSpec

PROVIDERS = ("auto", "anthropic", "openai", "openai-json", "bedrock", "vertex", "azure", "scripted", "replay", "none")

_scripted_factories: dict[str, Callable[[LLMConfig], LLM]] = {}


def register_scripted(name: str, factory: Callable[[LLMConfig], LLM]) -> None:
    """Register a scripted LLM by name (tests and benchmarks)."""
    _scripted_factories[name] = factory


def llm_configured(cfg: LLMConfig) -> bool:
    from .resolve import resolve_llm

    return resolve_llm(cfg).cfg is not None


def build_llm(cfg: LLMConfig) -> LLM | None:
    from .. import secrets
    from .resolve import resolve_llm

    resolved = resolve_llm(cfg).cfg  # auto picks the provider; base URLs come from the environment
    if resolved is None and cfg.provider in ("auto", "none"):
        return None
    cfg = resolved or cfg
    p = cfg.provider
    if p == "anthropic":
        from .anthropic import AnthropicLLM

        key = secrets.resolve(cfg.api_key_env or "ANTHROPIC_API_KEY", cfg.secret_block, what="anthropic")
        return AnthropicLLM(cfg.model, api_key=key, base_url=cfg.base_url, timeout_s=cfg.timeout_s)
    if p in ("openai", "openai-json"):
        from .openai_compat import OpenAICompatLLM

        key = secrets.resolve(cfg.api_key_env or "OPENAI_API_KEY", cfg.secret_block, what="openai",
                              required=cfg.base_url is None)
        if not cfg.model:
            raise ConfigError("llm.model: required for the openai provider")
        return OpenAICompatLLM(cfg.model, base_url=cfg.base_url, api_key=key, tools=p == "openai",
                               timeout_s=cfg.timeout_s)
    if p in ("bedrock", "vertex", "azure"):
        return _build_cloud(cfg)
    if p == "scripted":
        factory = _scripted_factories.get(cfg.model)
        if factory is None:
            known = ", ".join(sorted(_scripted_factories)) or "none registered"
            raise ConfigError(f"llm.model: unknown scripted LLM {cfg.model!r} (registered: {known})")
        return factory(cfg)
    if p == "replay":
        from .replay import replay_llm

        return replay_llm(cfg)
    raise ConfigError(f"llm.provider: unknown provider {p!r} (valid: {', '.join(PROVIDERS)})")


def _build_cloud(cfg: LLMConfig) -> LLM:
    """Claude on Bedrock or Vertex, GPT on Azure: each from its typed ``llm.settings``."""
    from .. import secrets
    from ..config import llm_settings

    st = llm_settings(cfg.provider, cfg.settings)
    if cfg.provider == "bedrock":
        from .bedrock import BedrockLLM

        return BedrockLLM(cfg.model, region=st.region, profile=st.profile, base_url=cfg.base_url,
                          timeout_s=cfg.timeout_s)
    if cfg.provider == "vertex":
        from .vertex import VertexLLM, access_token_from_env

        return VertexLLM(cfg.model, region=st.region, project_id=st.project_id,
                         access_token=access_token_from_env(st.access_token_env),
                         service_account_file=st.service_account_file, base_url=cfg.base_url,
                         timeout_s=cfg.timeout_s)
    from .azure import AzureOpenAILLM

    ad_token = None
    if st.ad_token_env:
        import os

        ad_token = os.environ.get(st.ad_token_env)
        if not ad_token:
            from ..errors import MissingKey

            raise MissingKey(f"azure: llm.settings.ad_token_env names {st.ad_token_env}, which is not set")
    key = None if ad_token else secrets.resolve(cfg.api_key_env or "AZURE_OPENAI_API_KEY", cfg.secret_block,
                                                what="azure", required=False)  # the adapter says what is missing
    return AzureOpenAILLM(cfg.model, endpoint=st.endpoint, deployment=st.deployment, api_version=st.api_version,
                          api_key=key, ad_token=ad_token, timeout_s=cfg.timeout_s)


__all__ = [
    "LLM", "LLMRequest", "LLMResponse", "Message", "SystemBlock", "ToolCall", "ToolSpec",
    "PROVIDERS", "build_llm", "llm_configured", "register_scripted",
]


def _bench(cfg: LLMConfig) -> LLM:
    from .bench_script import bench_llm

    return bench_llm(cfg)


register_scripted("bench", _bench)
