"""The LLM protocol and its wire-neutral request/response types."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from ..models import TokenUsage


@dataclass
class ToolSpec:
    name: str
    description: str
    parameters: dict[str, Any]


@dataclass
class ToolCall:
    id: str
    name: str
    args: dict[str, Any]


@dataclass
class Message:
    role: str  # "user" | "assistant"
    content: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)  # assistant turns
    tool_results: list[tuple[str, str]] = field(default_factory=list)  # user turns: (call id, content)

    def chars(self) -> int:
        n = len(self.content)
        n += sum(len(json.dumps(c.args)) + len(c.name) for c in self.tool_calls)
        n += sum(len(c) for _, c in self.tool_results)
        return n


@dataclass
class SystemBlock:
    text: str
    cache: bool = False  # a stable prefix worth caching


@dataclass
class LLMRequest:
    purpose: str  # explore | analyze:<area> | verify | fix | recommend | ask | pack
    system: list[SystemBlock]
    messages: list[Message]
    tools: list[ToolSpec] | None = None
    max_tokens: int = 4096
    meta: dict[str, Any] = field(default_factory=dict)  # for scripted LLMs and logs

    def system_text(self) -> str:
        return "\n\n".join(b.text for b in self.system)

    def chars(self) -> int:
        return len(self.system_text()) + sum(m.chars() for m in self.messages)

    def stable_chars(self) -> int:
        return sum(len(b.text) for b in self.system if b.cache)


@dataclass
class LLMResponse:
    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    usage: TokenUsage = field(default_factory=TokenUsage)
    stop_reason: str = ""


@runtime_checkable
class LLM(Protocol):
    name: str
    model: str
    supports_tools: bool

    def complete(self, request: LLMRequest) -> LLMResponse: ...


def estimate_tokens(chars: int) -> int:
    from ..limits import CHARS_PER_TOKEN

    return (chars + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


# a provider caches a prompt prefix only from this size on (Anthropic: 1,024 tokens for Sonnet and Opus; OpenAI:
# 1,024): a shorter repeated system prompt is billed as fresh input every time
CACHE_MIN_TOKENS = 1_024


def cached_system_chars(request: LLMRequest, seen: set[str]) -> int:
    """What a provider's prompt cache serves of a request's system prompt, counted as the replay LLM counts it: the
    leading blocks marked for caching, when an earlier request (recorded in ``seen``) sent the same text and it
    reaches the provider's minimum. A prefix that differs at all is a miss (a claim's sources inside the block made
    every verification request a miss)."""
    prefix = ""
    for b in request.system:
        if not b.cache:
            break
        prefix += b.text
    if not prefix:
        return 0
    hit = prefix in seen
    seen.add(prefix)
    return len(prefix) if hit and estimate_tokens(len(prefix)) >= CACHE_MIN_TOKENS else 0
