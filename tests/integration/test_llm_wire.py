"""The LLM adapters on their real wire formats, against a loopback server playing a scripted model.

The Anthropic SDK and the OpenAI-compatible client talk HTTP to 127.0.0.1; the server replays
answers and records what the adapters sent. Then the exploration loop runs end to end on each.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from assay.errors import LLMTimeout, MissingKey
from assay.llm.anthropic import AnthropicLLM
from assay.llm.base import LLMRequest, Message, SystemBlock, ToolSpec
from assay.llm.openai_compat import OpenAICompatLLM
from tests.helpers import make_explorer, small_warehouse


class Replay:
    def __init__(self):
        self.answers: list[tuple[int, dict]] = []
        self.requests: list[dict] = []


@pytest.fixture
def server():
    replay = Replay()

    class H(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            replay.requests.append({"path": self.path, "body": body, "headers": dict(self.headers)})
            status, payload = replay.answers.pop(0)
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *a):
            pass

    srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    replay.url = f"http://127.0.0.1:{srv.server_address[1]}"
    yield replay
    srv.shutdown()


def anthropic_msg(content, stop="end_turn", cached=0):
    return {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test", "content": content,
            "stop_reason": stop, "stop_sequence": None,
            "usage": {"input_tokens": 100, "output_tokens": 20, "cache_read_input_tokens": cached,
                      "cache_creation_input_tokens": 0}}


def openai_msg(content=None, tool_calls=None):
    msg = {"role": "assistant", "content": content}
    if tool_calls:
        msg["tool_calls"] = tool_calls
    return {"id": "c", "object": "chat.completion", "choices": [{"index": 0, "message": msg,
                                                                  "finish_reason": "tool_calls" if tool_calls else "stop"}],
            "usage": {"prompt_tokens": 50, "completion_tokens": 7, "prompt_tokens_details": {"cached_tokens": 30}}}


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    return small_warehouse(tmp_path_factory.mktemp("wire") / "w.duckdb")


def test_anthropic_tool_use_loop_end_to_end(server, db):
    server.answers = [
        (200, anthropic_msg([{"type": "text", "text": "Counting first."},
                             {"type": "tool_use", "id": "tu_1", "name": "query",
                              "input": {"sql": "SELECT count(*) AS n FROM orders", "purpose": "orders"}},
                             {"type": "tool_use", "id": "tu_2", "name": "lookup_schema",
                              "input": {"tables": ["main.customers"]}}], stop="tool_use")),
        (200, anthropic_msg([{"type": "tool_use", "id": "tu_3", "name": "done", "input": {"summary": "ok"}}],
                            stop="tool_use", cached=80)),
    ]
    llm = AnthropicLLM("claude-test", api_key="k", base_url=server.url, max_retries=0)
    out = make_explorer(db, llm).run()
    assert [s.action.value for s in out.steps] == ["query", "lookup_schema", "done"]
    first, second = (r["body"] for r in server.requests)
    assert first["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert {t["name"] for t in first["tools"]} == {"query", "lookup_schema", "search_tables", "done"}
    results = [b for b in second["messages"][-1]["content"] if b["type"] == "tool_result"]
    assert [b["tool_use_id"] for b in results] == ["tu_1", "tu_2"]
    assert '"columns": ["n"], "rows": [[1000]]' in results[0]["content"]
    assert second["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    assert out.steps[0].usage.input_tokens == 100 and out.steps[2].usage.cached_tokens == 80


def test_anthropic_errors_map_to_assay_errors(server):
    llm = AnthropicLLM("claude-test", api_key="bad", base_url=server.url, max_retries=0)
    req = LLMRequest(purpose="x", system=[SystemBlock("s")], messages=[Message("user", "hi")])
    server.answers = [(401, {"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}})]
    with pytest.raises(MissingKey, match="rejected"):
        llm.complete(req)
    server.answers = [(429, {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}})]
    with pytest.raises(LLMTimeout):
        llm.complete(req)


def test_anthropic_needs_a_key():
    with pytest.raises(MissingKey, match="ANTHROPIC_API_KEY"):
        AnthropicLLM("m", api_key=None)


def test_openai_compatible_tool_calls_end_to_end(server, db):
    server.answers = [
        (200, openai_msg(tool_calls=[{"id": "call_1", "type": "function", "function": {
            "name": "query", "arguments": json.dumps({"sql": "SELECT channel, count(*) AS n FROM customers GROUP BY 1",
                                                      "purpose": "mix"})}}])),
        (200, openai_msg(tool_calls=[{"id": "call_2", "type": "function", "function": {
            "name": "done", "arguments": "{\"summary\": \"fine\"}"}}])),
    ]
    llm = OpenAICompatLLM("qwen", base_url=server.url, api_key=None, tools=True)
    out = make_explorer(db, llm).run()
    assert [s.action.value for s in out.steps] == ["query", "done"]
    second = server.requests[1]["body"]
    assert server.requests[0]["path"] == "/chat/completions"
    assert second["messages"][0]["role"] == "system" and second["tools"][0]["type"] == "function"
    tool_msgs = [m for m in second["messages"] if m["role"] == "tool"]
    assert tool_msgs[0]["tool_call_id"] == "call_1" and "organic" in tool_msgs[0]["content"]
    assert out.steps[0].usage.cached_tokens == 30


def test_openai_json_protocol_for_models_without_tools(server, db):
    server.answers = [
        (200, openai_msg(content="Here you go:\n```json\n{\"query\": \"SELECT 1 AS one\", \"purpose\": \"p\"}\n```")),
        (200, openai_msg(content="{\"done\": true, \"summary\": \"s\"}")),
    ]
    llm = OpenAICompatLLM("small-model", base_url=server.url, api_key=None, tools=False)
    out = make_explorer(db, llm).run()
    assert [s.action.value for s in out.steps] == ["query", "done"]
    assert "tools" not in server.requests[0]["body"]


def test_openai_invalid_tool_arguments_get_a_nudge(server, db):
    server.answers = [
        (200, openai_msg(tool_calls=[{"id": "c1", "type": "function",
                                      "function": {"name": "query", "arguments": "{not json"}}])),
        (200, openai_msg(tool_calls=[{"id": "c2", "type": "function",
                                      "function": {"name": "done", "arguments": "{}"}}])),
    ]
    llm = OpenAICompatLLM("m", base_url=server.url, api_key=None)
    out = make_explorer(db, llm).run()
    assert out.finished == "done"
    nudge = server.requests[1]["body"]["messages"]
    assert any(m["role"] == "tool" and "not valid JSON" in m["content"] for m in nudge)


def test_tool_spec_shapes():
    spec = ToolSpec("q", "d", {"type": "object", "properties": {}})
    assert spec.parameters["type"] == "object"


def test_ask_uses_claude_from_the_environment_alone(server, db, monkeypatch):
    """A project saved with the default llm settings: the key and base URL in the environment are enough."""
    from assay.ask import ask
    from assay.models import Project, WarehouseConfig
    from assay.settings import load_settings
    from assay.store import open_store

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-wire")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    server.answers = [
        (200, anthropic_msg([{"type": "tool_use", "id": "tu_1", "name": "query",
                              "input": {"sql": "SELECT count(*) AS n FROM orders", "purpose": "orders"}}],
                            stop="tool_use")),
        (200, anthropic_msg([{"type": "tool_use", "id": "tu_2", "name": "done",
                              "input": {"summary": "1000 orders (step 1)"}}], stop="tool_use")),
    ]
    p = Project(id="wire-ask", pack="ecommerce", warehouse=WarehouseConfig(kind="duckdb", settings={"path": str(db)}))
    ans = ask(open_store(load_settings()), p, "How many orders?")
    assert ans.finished == "done" and ans.answer == "1000 orders (step 1)"
    assert "sk-wire" in " ".join(server.requests[0]["headers"].values())  # the key from the environment
    assert {t["name"] for t in server.requests[0]["body"]["tools"]} == {"query", "lookup_schema", "search_tables",
                                                                         "done"}
