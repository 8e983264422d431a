"""Run-completion notifications to a Slack-compatible webhook (a real HTTP server on loopback)."""

from __future__ import annotations

import asyncio
import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from assay.models import DiscoveryResult, Insight, NotifyConfig, Project, RunType, WarehouseConfig
from assay.notify import notify_run, summary_message
from assay.settings import load_settings
from assay.store import open_store
from assay_flows.flows.discovery import DiscoveryParams, discovery_flow
from tests.helpers import small_warehouse


@pytest.fixture()
def webhook(monkeypatch):
    got: list[dict] = []
    status = {"code": 200}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802
            body = self.rfile.read(int(self.headers["Content-Length"]))
            got.append({"path": self.path, "json": json.loads(body), "type": self.headers["Content-Type"]})
            self.send_response(status["code"])
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *a):
            pass

    srv = HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    monkeypatch.setenv("TEST_SLACK_WEBHOOK", f"http://127.0.0.1:{srv.server_port}/hooks/T000/B000/xyz")
    yield got, status
    srv.shutdown()


def result(run_type="full", n=7):
    ins = [Insight(id=f"a-{k}", area="a", name=f"finding {k}", description="details", severity=sev, affected_count=10 * k)
           for k, sev in zip(range(1, n + 1), ["low", "critical", "medium", "high", "low", "low", "medium"])]
    return DiscoveryResult(run_id="abcdef0123", project_id="shop", domain="ecommerce", run_type=RunType(run_type),
                           insights=ins, total_steps=12, duration_s=33.0,
                           errors=["revenue: timeout"] if run_type != "full" else [])


def test_summary_lists_the_most_severe_first():
    msg = summary_message(result("partial"))
    lines = msg["text"].splitlines()
    assert lines[0].startswith(":warning: assay discovery *abcdef01* of *shop*: partial · 7 insights")
    assert lines[1] == "• [critical] finding 2 (20 affected)" and lines[2] == "• [high] finding 4 (40 affected)"
    assert "… and 2 more" in msg["text"] and ":x: revenue: timeout" in msg["text"]
    assert msg["blocks"][0]["text"]["type"] == "mrkdwn"


def test_notify_posts_and_reports_failures(webhook):
    got, status = webhook
    p = Project(id="shop", notify=NotifyConfig(webhook_url_env="TEST_SLACK_WEBHOOK"))
    assert notify_run(p, result()) is None
    assert got[0]["path"] == "/hooks/T000/B000/xyz" and got[0]["type"] == "application/json"
    assert got[0]["json"]["text"].startswith(":white_check_mark:")
    status["code"] = 500
    assert "webhook post failed" in notify_run(p, result())
    only_failed = Project(id="shop", notify=NotifyConfig(webhook_url_env="TEST_SLACK_WEBHOOK", on=["failed"]))
    assert notify_run(only_failed, result("full")) is None and len(got) == 2  # not sent for a full run
    unset = Project(id="shop", notify=NotifyConfig(webhook_url_env="NO_SUCH_VAR_SET"))
    assert "webhook URL is not set" in notify_run(unset, result())


def test_discovery_flow_notifies_when_it_ends(webhook, tmp_path):
    got, _ = webhook
    db = small_warehouse(tmp_path / "w.duckdb")
    p = Project(id="notify-flow", pack="ecommerce", analyst="statistical", max_steps=8,
                warehouse=WarehouseConfig(kind="duckdb", settings={"path": str(db)}),
                notify=NotifyConfig(webhook_url_env="TEST_SLACK_WEBHOOK"))
    open_store(load_settings()).save_project(p)
    state = asyncio.run(discovery_flow(DiscoveryParams(project=p.id), run_id="notify1", return_state=True))
    assert state.is_completed()
    assert len(got) == 1 and "*notify1*" in got[0]["json"]["text"] and "notify-flow" in got[0]["json"]["text"]


class _Died(BaseException):
    """What a process sees when it is torn down mid-run (not an Exception: the flow crashes, not fails)."""


def test_a_crashed_discovery_notifies_too(webhook, tmp_path, monkeypatch):
    """A crash saves no result; the webhook still hears that the run crashed (it heard nothing before)."""
    got, _ = webhook
    db = small_warehouse(tmp_path / "w.duckdb")
    p = Project(id="notify-crash", pack="ecommerce", analyst="statistical", max_steps=8,
                warehouse=WarehouseConfig(kind="duckdb", settings={"path": str(db)}),
                notify=NotifyConfig(webhook_url_env="TEST_SLACK_WEBHOOK"))
    open_store(load_settings()).save_project(p)

    async def dies(run_id):
        raise _Died("worker torn down")

    monkeypatch.setattr("assay_flows.flows.discovery.init_task", dies)
    state = None
    try:
        state = asyncio.run(discovery_flow(DiscoveryParams(project=p.id), run_id="crash1", return_state=True))
    except _Died:
        pass
    assert state is None or state.is_crashed()
    texts = [g["json"]["text"] for g in got]
    assert len(texts) == 1, texts
    assert texts[0].startswith(":boom: assay discovery *crash1*") and "notify-crash" in texts[0]
    assert "crashed" in texts[0] and "assay rerun crash1" in texts[0]
    assert open_store(load_settings()).get_run("crash1").status.value == "crashed"  # one state: crashed here too
