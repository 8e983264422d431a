"""`assay mcp` as a user's MCP client starts it: over stdio (an editor or agent launching the command) and over
streamable HTTP, driven by the official MCP SDK's client."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time

from mcp import Client
from mcp.client.stdio import StdioServerParameters

from assay.models import Project, WarehouseConfig
from assay.settings import load_settings
from assay.store import open_store
from tests.helpers import small_warehouse

CLI = ["-c", "from assay.cli import main; main()"]


def _project(tmp_path) -> str:
    db = small_warehouse(tmp_path / "w.duckdb")
    open_store(load_settings()).save_project(
        Project(id="mcpt", pack="ecommerce",
                warehouse=WarehouseConfig(kind="duckdb", settings={"path": str(db)}, pii_columns=["email"])))
    return "mcpt"


async def _exercise(client) -> None:
    tools = {t.name for t in (await client.list_tools()).tools}
    assert {"list_projects", "query", "ask", "show_run", "search_insights"} <= tools
    res = await client.call_tool("list_projects", {})
    assert not res.is_error and "mcpt" in {p["project"] for p in json.loads(res.content[0].text)}
    res = await client.call_tool("query", {"project": "mcpt", "sql": "SELECT email FROM customers LIMIT 1"})
    assert not res.is_error and "@x.io" not in res.content[0].text
    res = await client.call_tool("query", {"project": "mcpt", "sql": "DELETE FROM customers"})
    assert res.is_error and "refused by the SQL guard" in res.content[0].text


def test_stdio(tmp_path):
    _project(tmp_path)
    params = StdioServerParameters(command=sys.executable, args=CLI + ["mcp"], env=dict(os.environ))

    async def go():
        async with Client(params, read_timeout_seconds=120) as client:
            await _exercise(client)
    asyncio.run(go())


def test_streamable_http(tmp_path):
    _project(tmp_path)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, *CLI, "mcp", "--http", "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert proc.poll() is None, proc.stderr.read()
                time.sleep(0.3)

        async def go():
            async with Client(f"http://127.0.0.1:{port}/mcp", read_timeout_seconds=120) as client:
                await _exercise(client)
        asyncio.run(go())
    finally:
        proc.terminate()
        proc.wait(20)
