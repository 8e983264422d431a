"""OpenAI chat completions through the official ``openai`` SDK: OpenAI, Azure OpenAI, and
OpenAI-compatible servers (vLLM, Ollama, gateways) via ``base_url``.

Native tool calls when ``tools`` is set; ``llm.provider: openai-json`` for models without
tool support (the loop then speaks the JSON-action protocol). Prompt caching is automatic on
OpenAI's side: the cached share of the prompt comes back in
``usage.prompt_tokens_details.cached_tokens``. The SDK retries throttling, overload and
dropped connections with backoff, honouring ``retry-after``; what still fails is classified
by ``sdk_errors.classify``.
"""

from __future__ import annotations

import json

from ..errors import MissingKey
from ..models import TokenUsage
from .base import LLMRequest, LLMResponse, ToolCall
from .sdk_errors import classify

OPENAI_URL = "https://api.openai.com/v1"


class OpenAICompatLLM:
    name = "openai"

    def __init__(self, model: str, base_url: str | None = None, api_key: str | None = None,
                 tools: bool = True, timeout_s: float = 300, max_retries: int = 2, client=None):
        self.model = model
        self.base_url = (base_url or OPENAI_URL).rstrip("/")
        self.supports_tools = tools
        # OpenAI's own models (reasoning ones included) take max_completion_tokens; self-hosted
        # servers (vLLM, Ollama) know max_tokens
        self.token_param = "max_completion_tokens" if "api.openai.com" in self.base_url else "max_tokens"
        if client is None:
            if api_key is None and "api.openai.com" in self.base_url:
                raise MissingKey("openai: no API key; set OPENAI_API_KEY or llm.api_key_env")
            import openai

            # a self-hosted server without auth: the SDK wants some key, the server ignores it
            client = openai.OpenAI(api_key=api_key or "unused", base_url=self.base_url, timeout=timeout_s,
                                   max_retries=max_retries)
        self.client = client

    def _messages(self, req: LLMRequest) -> list[dict]:
        return wire_messages(req)

    def _create(self, client, **kwargs):
        import openai

        try:
            return client.chat.completions.create(**kwargs)
        except openai.OpenAIError as exc:
            raise classify(exc, self.name, getattr(self, "deployment", self.model)) from None

    def complete(self, req: LLMRequest) -> LLMResponse:
        body: dict = {"model": self.model, "messages": self._messages(req), self.token_param: req.max_tokens}
        if req.tools and self.supports_tools:
            body["tools"] = [
                {"type": "function", "function": {"name": t.name, "description": t.description,
                                                  "parameters": t.parameters}}
                for t in req.tools
            ]
        data = self._create(self.client, **body)
        choice = data.choices[0]
        msg = choice.message
        calls = []
        for c in msg.tool_calls or []:
            fn = getattr(c, "function", None)
            if fn is None:  # a custom (non-function) tool call: not one of ours
                continue
            try:
                args = json.loads(fn.arguments or "{}")
            except json.JSONDecodeError:
                args = {"_invalid_arguments": fn.arguments}
            calls.append(ToolCall(id=c.id or f"call_{len(calls)}", name=fn.name, args=args))
        return LLMResponse(text=msg.content or "", tool_calls=calls, usage=openai_usage(data.usage, req.chars()),
                           stop_reason=choice.finish_reason or "")

    def ping(self, timeout_s: float = 20.0) -> str:
        """Proves the endpoint, the key and the model (or deployment): OpenAI looks the model up (free);
        other servers answer a one-token completion."""
        client = self.client.with_options(timeout=timeout_s, max_retries=0)
        if self.base_url == OPENAI_URL:  # OpenAI itself: looking the model up is free
            import openai

            try:
                client.models.retrieve(self.model)
            except openai.OpenAIError as exc:
                raise classify(exc, self.name, getattr(self, "deployment", self.model)) from None
        else:
            self._create(client, model=self.model, messages=[{"role": "user", "content": "OK?"}],
                         **{self.token_param: 1})
        return f"{self.model} via {self.describe()}"

    def describe(self) -> str:
        return "OpenAI" if self.base_url == OPENAI_URL else f"the OpenAI-compatible server at {self.base_url}"


def wire_messages(req: LLMRequest) -> list[dict]:
    """The request's messages in the chat-completions shape (also what the replay LLM compares)."""
    out: list[dict] = [{"role": "system", "content": req.system_text()}]
    for m in req.messages:
        if m.role == "assistant":
            msg: dict = {"role": "assistant", "content": m.content or None}
            if m.tool_calls:
                msg["tool_calls"] = [
                    {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": json.dumps(c.args)}}
                    for c in m.tool_calls
                ]
            out.append(msg)
        else:
            for cid, text in m.tool_results:
                out.append({"role": "tool", "tool_call_id": cid, "content": text})
            if m.content:
                out.append({"role": "user", "content": m.content})
    return out


def openai_usage(u, input_chars: int) -> TokenUsage:
    if u is None:
        return TokenUsage(input_chars=input_chars)
    details = getattr(u, "prompt_tokens_details", None)
    cached = int(getattr(details, "cached_tokens", 0) or 0) if details is not None else 0
    return TokenUsage(input_tokens=int(u.prompt_tokens or 0), output_tokens=int(u.completion_tokens or 0),
                      cached_tokens=cached, input_chars=input_chars)
