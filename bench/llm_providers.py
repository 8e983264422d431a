"""Client-side cost of each LLM provider adapter (issue #21), against a loopback server.

What the adapters add to a call besides the model's own time: the openai SDK against the raw
httpx client it replaced (same server, same body, interleaved rounds), Claude through the
Anthropic client and through the Bedrock client (SigV4 signing by botocore on every request),
Vertex (bearer token), Azure (deployment path, api-key), and the import time of each SDK in a
fresh interpreter. The server answers at once: the figures are pure client overhead.

    .venv/bin/python bench/llm_providers.py [--calls 200]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

CLAUDE = {"id": "m", "type": "message", "role": "assistant", "model": "c", "content": [{"type": "text", "text": "ok"}],
          "stop_reason": "end_turn", "stop_sequence": None,
          "usage": {"input_tokens": 10, "output_tokens": 2, "cache_read_input_tokens": 0,
                    "cache_creation_input_tokens": 0}}
CHAT = {"id": "c", "object": "chat.completion", "created": 0, "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12,
                  "prompt_tokens_details": {"cached_tokens": 0}}}


def serve():
    class H(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as the real services
        disable_nagle_algorithm = True  # else delayed ACKs add 40 ms to every call

        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            body = json.dumps(CHAT if "chat/completions" in self.path else CLAUDE).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a):
            pass

    srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, f"http://127.0.0.1:{srv.server_address[1]}"


def import_s(module: str) -> float:
    code = f"import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=200)
    args = ap.parse_args()
    os.environ.update(AWS_ACCESS_KEY_ID="AKIDBENCH", AWS_SECRET_ACCESS_KEY="bench", AWS_EC2_METADATA_DISABLED="true")
    import httpx

    from assay.llm.anthropic import AnthropicLLM
    from assay.llm.azure import AzureOpenAILLM
    from assay.llm.base import LLMRequest, Message, SystemBlock
    from assay.llm.bedrock import BedrockLLM
    from assay.llm.openai_compat import OpenAICompatLLM, wire_messages
    from assay.llm.vertex import VertexLLM

    srv, url = serve()
    req = LLMRequest(purpose="bench", system=[SystemBlock("You count. " * 200, cache=True)],
                     messages=[Message("user", "How many? " * 50)], max_tokens=64)
    raw = httpx.Client(base_url=url + "/v1", timeout=30)

    def raw_httpx():  # the client this issue replaced: one POST, parse the JSON
        r = raw.post("/chat/completions", json={"model": "m", "messages": wire_messages(req), "max_tokens": 64})
        r.json()["choices"][0]["message"]

    clients = {
        "raw_httpx": raw_httpx,
        "openai_sdk": OpenAICompatLLM("m", base_url=url + "/v1").complete,
        "azure": AzureOpenAILLM("gpt-4o", endpoint=url, deployment="d", api_key="k").complete,
        "anthropic": AnthropicLLM("claude-sonnet-4-5", api_key="k", base_url=url).complete,
        "bedrock": BedrockLLM("us.anthropic.claude-sonnet-4-5-20250929-v1:0", region="us-east-1",
                              base_url=url).complete,
        "vertex": VertexLLM("claude-sonnet-4-5@20250929", region="us-east5", project_id="p", access_token="t",
                            base_url=url + "/v1").complete,
    }
    times: dict[str, list[float]] = {k: [] for k in clients}
    for name, fn in clients.items():  # warm-up: connections, lazy imports
        fn() if name == "raw_httpx" else fn(req)
    rounds = 10
    for _ in range(rounds):  # interleaved, so load on the shared machine hits every client alike
        for name, fn in clients.items():
            for _ in range(args.calls // rounds):
                t = time.perf_counter()
                fn() if name == "raw_httpx" else fn(req)
                times[name].append((time.perf_counter() - t) * 1000)
    med = {k: statistics.median(v) for k, v in times.items()}
    for k, v in med.items():
        print(f"{k}_call_ms: {v:.2f}")
    print(f"openai_sdk_vs_raw_httpx_ratio: {med['openai_sdk'] / med['raw_httpx']:.2f}")
    print(f"bedrock_vs_anthropic_ratio: {med['bedrock'] / med['anthropic']:.2f}")
    print(f"bedrock_sigv4_extra_ms: {med['bedrock'] - med['anthropic']:.2f}")
    for module in ("httpx", "openai", "anthropic", "botocore.auth"):
        print(f"import_{module.replace('.', '_')}_s: {import_s(module):.2f}")
    srv.shutdown()


if __name__ == "__main__":
    main()
