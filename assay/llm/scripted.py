"""A scripted LLM that replays answers: the one thing tests replace.

``handler(request)`` returns a string (the reply text), a list of ToolCall
(a native tool-calling turn), an LLMResponse, or raises (to simulate
timeouts). Usage is estimated from characters so cost figures stay
comparable with real providers.
"""

from __future__ import annotations

import threading
from typing import Callable, Iterable

from ..models import TokenUsage
from .base import LLMRequest, LLMResponse, ToolCall, estimate_tokens

Handler = Callable[[LLMRequest], "str | list[ToolCall] | LLMResponse"]


class ScriptedLLM:
    name = "scripted"

    def __init__(self, handler: Handler, *, tools: bool = False, model: str = "scripted"):
        self.handler = handler
        self.supports_tools = tools
        self.model = model
        self.calls: list[LLMRequest] = []
        self._lock = threading.Lock()

    def complete(self, request: LLMRequest) -> LLMResponse:
        with self._lock:
            self.calls.append(request)
        out = self.handler(request)
        if isinstance(out, LLMResponse):
            resp = out
        elif isinstance(out, list):
            resp = LLMResponse(tool_calls=out)
        else:
            resp = LLMResponse(text=str(out))
        if not resp.usage.input_tokens:
            chars = request.chars()
            out_chars = len(resp.text) + sum(len(str(c.args)) for c in resp.tool_calls)
            cached = request.meta.get("prefix_chars")
            if cached is None:  # a cacheable system prompt repeated from an earlier call of the same kind
                cached = request.stable_chars() if len(self.purposes(request.purpose)) > 1 else 0
            resp.usage = TokenUsage(
                input_tokens=estimate_tokens(chars),
                output_tokens=estimate_tokens(out_chars),
                cached_tokens=estimate_tokens(cached),
                input_chars=chars,
            )
        return resp

    def purposes(self, prefix: str = "") -> list[LLMRequest]:
        with self._lock:
            return [c for c in self.calls if c.purpose.startswith(prefix)]


class ReplayLLM(ScriptedLLM):
    """Answers per purpose prefix from queues; a missing answer is a test bug."""

    def __init__(self, answers: dict[str, Iterable], *, tools: bool = False):
        self.queues = {k: list(v) for k, v in answers.items()}
        super().__init__(self._next, tools=tools)

    def _next(self, req: LLMRequest):
        for prefix in sorted(self.queues, key=len, reverse=True):
            if req.purpose.startswith(prefix):
                q = self.queues[prefix]
                if not q:
                    raise AssertionError(f"ReplayLLM: no answer left for {req.purpose!r}")
                item = q.pop(0)
                if isinstance(item, BaseException):
                    raise item
                return item(req) if callable(item) else item
        raise AssertionError(f"ReplayLLM: no answers for purpose {req.purpose!r}")
