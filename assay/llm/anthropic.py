"""Anthropic Claude: native tool use, prompt caching, usage accounting."""

from __future__ import annotations

from ..errors import MissingKey
from ..models import TokenUsage
from .base import LLMRequest, LLMResponse, ToolCall
from .sdk_errors import classify

DEFAULT_MODEL = "claude-sonnet-4-5"


def wire_messages(req: LLMRequest) -> list[dict]:
    """The request's messages in the Messages API shape (also what the replay LLM compares)."""
    out = []
    for m in req.messages:
        if m.role == "assistant":
            blocks: list[dict] = []
            if m.content:
                blocks.append({"type": "text", "text": m.content})
            for c in m.tool_calls:
                blocks.append({"type": "tool_use", "id": c.id, "name": c.name, "input": c.args})
            out.append({"role": "assistant", "content": blocks or [{"type": "text", "text": "."}]})
        else:
            blocks = [{"type": "tool_result", "tool_use_id": cid, "content": text} for cid, text in m.tool_results]
            if m.content:
                blocks.append({"type": "text", "text": m.content})
            out.append({"role": "user", "content": blocks})
    return out


def wire_body(req: LLMRequest, model: str = "") -> dict:
    """The whole Messages API body of a request, without cache markers."""
    body: dict = {"model": model, "max_tokens": req.max_tokens,
                  "system": [{"type": "text", "text": b.text} for b in req.system],
                  "messages": wire_messages(req)}
    if req.tools:
        body["tools"] = [{"name": t.name, "description": t.description, "input_schema": t.parameters}
                         for t in req.tools]
    return body


class ClaudeLLM:
    """Claude through an anthropic SDK client: the Anthropic API, Bedrock or Vertex (one wire format)."""

    name = "anthropic"
    supports_tools = True
    where = ""  # "via bedrock us-east-1" and the like, for the doctor screen

    def __init__(self, model: str, client):
        self.model = model
        self.client = client

    def _messages(self, req: LLMRequest) -> list[dict]:
        return wire_messages(req)

    def _kwargs(self, req: LLMRequest) -> dict:
        system = []
        for b in req.system:
            block = {"type": "text", "text": b.text}
            if b.cache:
                block["cache_control"] = {"type": "ephemeral"}
            system.append(block)
        messages = self._messages(req)
        if req.meta.get("cache_messages") and messages and messages[-1]["content"]:
            # the history is append-only between compactions: cache it up to the newest block
            messages[-1]["content"][-1]["cache_control"] = {"type": "ephemeral"}
        kwargs = dict(model=self.model, max_tokens=req.max_tokens, system=system, messages=messages)
        if req.tools:
            kwargs["tools"] = [
                {"name": t.name, "description": t.description, "input_schema": t.parameters} for t in req.tools
            ]
        return kwargs

    def _create(self, client, **kwargs):
        try:
            return client.messages.create(**kwargs)
        except self._anthropic.AnthropicError as exc:
            raise classify(exc, self.name, self.model) from None

    def complete(self, req: LLMRequest) -> LLMResponse:
        resp = self._create(self.client, **self._kwargs(req))
        text = "".join(b.text for b in resp.content if getattr(b, "type", "") == "text")
        calls = [
            ToolCall(id=b.id, name=b.name, args=dict(b.input or {}))
            for b in resp.content
            if getattr(b, "type", "") == "tool_use"
        ]
        return LLMResponse(text=text, tool_calls=calls, usage=claude_usage(resp.usage, req.chars()),
                           stop_reason=str(resp.stop_reason or ""))

    def ping(self, timeout_s: float = 20.0) -> str:
        """A one-token message: proves the endpoint, the credentials and the model id (costs ~10 tokens)."""
        client = self.client.with_options(timeout=timeout_s, max_retries=0)
        self._create(client, model=self.model, max_tokens=1, messages=[{"role": "user", "content": "OK?"}])
        return f"{self.model} via {self.name}{(' ' + self.where) if self.where else ''}"

    @property
    def _anthropic(self):
        import anthropic

        return anthropic


def claude_usage(u, input_chars: int) -> TokenUsage:
    """Input counts every prompt token (fresh, cache writes and cache reads); cached is the reads."""
    cached = int(getattr(u, "cache_read_input_tokens", 0) or 0)
    created = int(getattr(u, "cache_creation_input_tokens", 0) or 0)
    return TokenUsage(input_tokens=int(u.input_tokens or 0) + cached + created,
                      output_tokens=int(u.output_tokens or 0), cached_tokens=cached, input_chars=input_chars)


class AnthropicLLM(ClaudeLLM):
    name = "anthropic"

    def __init__(self, model: str = "", api_key: str | None = None, max_retries: int = 2, timeout_s: float = 300,
                 base_url: str | None = None):
        if not api_key:
            raise MissingKey("anthropic: no API key; set ANTHROPIC_API_KEY or the project's llm.secret_block")
        import anthropic

        super().__init__(model or DEFAULT_MODEL, anthropic.Anthropic(
            api_key=api_key, max_retries=max_retries, timeout=timeout_s, base_url=base_url))
        self.where = f"at {base_url}" if base_url else ""
