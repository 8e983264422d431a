"""OpenAI-compatible chat completions (OpenAI, vLLM, Ollama via ``base_url``).

Uses httpx (already a dependency through Prefect) against the documented
``/chat/completions`` surface, with native tool calls when ``tools`` is set.
Set ``llm.provider: openai-json`` for models without tool support: the loop
then speaks the JSON-action protocol.
"""

from __future__ import annotations

import json

import httpx

from ..errors import LLMError, LLMTimeout, MissingKey
from ..models import TokenUsage
from .base import LLMRequest, LLMResponse, ToolCall


class OpenAICompatLLM:
    name = "openai"

    def __init__(self, model: str, base_url: str | None = None, api_key: str | None = None,
                 tools: bool = True, timeout_s: float = 300):
        self.model = model
        self.base_url = (base_url or "https://api.openai.com/v1").rstrip("/")
        self.supports_tools = tools
        if api_key is None and "api.openai.com" in self.base_url:
            raise MissingKey("openai: no API key; set OPENAI_API_KEY or llm.api_key_env")
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.http = httpx.Client(base_url=self.base_url, headers=headers, timeout=timeout_s)

    def _messages(self, req: LLMRequest) -> list[dict]:
        out: list[dict] = [{"role": "system", "content": req.system_text()}]
        for m in req.messages:
            if m.role == "assistant":
                msg: dict = {"role": "assistant", "content": m.content or None}
                if m.tool_calls:
                    msg["tool_calls"] = [
                        {"id": c.id, "type": "function",
                         "function": {"name": c.name, "arguments": json.dumps(c.args)}}
                        for c in m.tool_calls
                    ]
                out.append(msg)
            else:
                for cid, text in m.tool_results:
                    out.append({"role": "tool", "tool_call_id": cid, "content": text})
                if m.content:
                    out.append({"role": "user", "content": m.content})
        return out

    def complete(self, req: LLMRequest) -> LLMResponse:
        body: dict = {"model": self.model, "messages": self._messages(req), "max_tokens": req.max_tokens}
        if req.tools and self.supports_tools:
            body["tools"] = [
                {"type": "function", "function": {"name": t.name, "description": t.description,
                                                  "parameters": t.parameters}}
                for t in req.tools
            ]
        try:
            r = self.http.post("/chat/completions", json=body)
        except (httpx.TimeoutException, httpx.TransportError) as exc:
            raise LLMTimeout(f"openai: {type(exc).__name__}: {exc}") from None
        if r.status_code in (401, 403):
            raise MissingKey(f"openai: the API key was rejected ({r.status_code})")
        if r.status_code in (408, 429) or r.status_code >= 500:
            raise LLMTimeout(f"openai: HTTP {r.status_code}")
        if r.status_code >= 400:
            raise LLMError(f"openai: HTTP {r.status_code}: {r.text[:300]}")
        data = r.json()
        msg = data["choices"][0]["message"]
        calls = []
        for c in msg.get("tool_calls") or []:
            try:
                args = json.loads(c["function"].get("arguments") or "{}")
            except json.JSONDecodeError:
                args = {"_invalid_arguments": c["function"].get("arguments")}
            calls.append(ToolCall(id=c.get("id") or f"call_{len(calls)}", name=c["function"]["name"], args=args))
        u = data.get("usage") or {}
        cached = int((u.get("prompt_tokens_details") or {}).get("cached_tokens") or 0)
        usage = TokenUsage(input_tokens=int(u.get("prompt_tokens") or 0),
                           output_tokens=int(u.get("completion_tokens") or 0),
                           cached_tokens=cached, input_chars=req.chars())
        return LLMResponse(text=msg.get("content") or "", tool_calls=calls, usage=usage,
                           stop_reason=data["choices"][0].get("finish_reason") or "")
