"""`assay mcp`: every tool driven by the official MCP SDK's client, in-process; guard refusals and PII
masks reach the client as errors and masks, not data."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time
from pathlib import Path

import pytest

from assay.llm.scripted import ReplayLLM
from assay.mcp_server import TOOL_NAMES, AssayTools, build_server
from assay.models import Project, WarehouseConfig
from assay.pii import MASK
from assay.settings import load_settings
from assay.store import open_store
from tests.helpers import small_warehouse
from tests.unit.test_ask import _findings_project


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    db = small_warehouse(tmp_path_factory.mktemp("mcp") / "w.duckdb")
    p = Project(id="mcpp", pack="ecommerce",
                warehouse=WarehouseConfig(kind="duckdb", settings={"path": str(db)}, pii_columns=["email"]))
    return _findings_project(p, open_store(load_settings()), "mcpp")


def call(tools: AssayTools, name: str, args: dict | None = None):
    from mcp import Client  # here, not at collection: ~0.7 s of CPU in every xdist worker (tests/unit/test_suite_config.py)

    async def go():
        async with Client(build_server(tools)) as client:
            listed = {t.name for t in (await client.list_tools()).tools}
            res = await client.call_tool(name, args or {})
            return listed, res
    listed, res = asyncio.run(go())
    assert listed == set(TOOL_NAMES)
    text = "".join(getattr(c, "text", "") for c in res.content)
    return res.is_error, (text if res.is_error else json.loads(text))


def test_projects_runs_and_a_runs_insights_with_verdicts(project):
    tools = AssayTools()
    err, projects = call(tools, "list_projects")
    assert not err
    mine = next(p for p in projects if p["project"] == "mcpp")
    assert mine["warehouse"] == "duckdb" and "settings" not in json.dumps(mine)  # no paths, no secrets
    err, shown = call(tools, "show_run", {"run": "feedbeef-mcpp"})
    assert not err and shown["run"] == "feedbeef-mcpp"
    verdicts = {i["id"]: i["verdict"] for i in shown["insights"]}
    assert verdicts == {"I1": "confirmed", "I2": "unverified"}
    assert shown["recommendations"][0]["id"] == "R1"
    err, msg = call(tools, "show_run", {"run": "nosuchrun"})
    assert err and "nosuchrun" in msg and "\n" not in msg.strip()


def test_search_insights(project):
    err, hits = call(AssayTools(), "search_insights", {"project": "mcpp", "query": "customers leaving after paid "
                                                                                     "acquisition"})
    assert not err and hits[0]["id"] == "I1" and hits[0]["run_date"] == "2026-11-20"


def test_query_masks_pii_and_refusals_are_errors(project):
    tools = AssayTools()
    err, out = call(tools, "query", {"project": "mcpp", "sql": "SELECT email, channel FROM customers "
                                                               "ORDER BY customer_id LIMIT 3"})
    assert not err and out["rows_returned"] == 3
    assert out["columns"] == ["email", "channel"]
    assert all(r[0] == MASK for r in out["rows"]) and {r[1] for r in out["rows"]} <= {"paid", "organic"}
    assert "@x.io" not in json.dumps(out)
    # two outputs of one name are two columns of every row (rows as dicts kept one of them)
    err, out = call(tools, "query", {"project": "mcpp", "sql": "SELECT c.customer_id, c.email, d.customer_id FROM "
                                                               "customers c JOIN customers d ON d.customer_id = "
                                                               "c.customer_id + 1 ORDER BY 1 LIMIT 2"})
    assert not err and out["columns"] == ["customer_id", "email", "customer_id"]
    assert [[r[0] + 1, r[1]] for r in out["rows"]] == [[r[2], MASK] for r in out["rows"]]
    for bad in ("DROP TABLE customers", "SELECT * FROM read_csv('/etc/passwd')",
                "COPY customers TO '/tmp/leak.csv'"):
        err, msg = call(tools, "query", {"project": "mcpp", "sql": bad})
        assert err and "refused by the SQL guard" in msg and "\n" not in msg, bad
    err, msg = call(tools, "query", {"project": "nope", "sql": "SELECT 1"})
    assert err and "nope" in msg


def test_ask_through_mcp(project):
    llm = ReplayLLM({"ask": [json.dumps({"search_insights": "paid churn"}),
                             '{"done": true, "summary": "Paid customers churn twice as often (I1)."}']})
    err, out = call(AssayTools(llm=llm), "ask", {"project": "mcpp", "question": "Do paid customers churn more?"})
    assert not err and out["answered_from"] == "insights" and out["insights"][0]["id"] == "I1"
    assert "2026-11-20" in out["answer"]


def test_start_discovery_is_off_unless_allowed(project, tmp_path):
    err, msg = call(AssayTools(), "start_discovery", {"project": "mcpp"})
    assert err and "--allow-discover" in msg
    err, out = call(AssayTools(allow_discover=True), "start_discovery", {"project": "mcpp", "max_steps": 2})
    assert not err and out["started"]
    try:
        assert out["command"] == "assay discover mcpp --max-steps 2" and out["pid"] > 0
        assert Path(out["log"]).exists()
        # the process itself, while it runs (under load it may already have ended: a zombie's cmdline is empty)
        try:
            cmdline = Path(f"/proc/{out['pid']}/cmdline").read_bytes().split(b"\0")
        except FileNotFoundError:
            cmdline = []
        if any(cmdline):
            assert b"discover" in cmdline and b"mcpp" in cmdline and b"--max-steps" in cmdline
    finally:
        try:
            os.killpg(out["pid"], signal.SIGTERM)
        except ProcessLookupError:
            pass
        time.sleep(0.2)


def test_ask_through_mcp_labels_cited_queries_as_the_answer_cites_them(project):
    """The answer cites the numbers the model was shown (a free lookup has none): the listed query carries the same
    number, not its stored one (review, session 12)."""
    llm = ReplayLLM({"ask": [json.dumps({"lookup_schema": ["main.orders"]}),
                             json.dumps({"purpose": "count orders", "query": "SELECT count(*) AS n FROM orders"}),
                             '{"done": true, "summary": "There are 1,000 orders (step 1)."}']})
    err, out = call(AssayTools(llm=llm), "ask", {"project": "mcpp", "question": "How many orders are there?"})
    assert not err and "(step 1)" in out["answer"]
    assert [(q["step"], q["purpose"]) for q in out["queries"]] == [(1, "count orders")]


def test_the_server_and_the_cli_say_their_version():
    """A new user (session 26): no `assay --version`, and the MCP server's serverInfo.version was ''."""
    from importlib.metadata import version

    from mcp import Client
    from typer.testing import CliRunner

    from assay.cli import app

    async def go():
        async with Client(build_server(AssayTools())) as client:
            return client.server_info
    info = asyncio.run(go())
    assert info.name == "assay" and info.version == version("assay") != ""
    r = CliRunner().invoke(app, ["--version"])
    assert r.exit_code == 0 and r.output.strip() == f"assay {version('assay')}"
