"""`assay report`: the HTML page opens in a real headless Chromium without console errors and every
chart renders; the page is self-contained (no network) and links insights and recommendations."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest
from typer.testing import CliRunner

from assay.cli import app
from tests.conftest import need_service

pytestmark = pytest.mark.chromium

# injected first in <head>: every console error and uncaught exception lands in the DOM
CAPTURE = """<script>
window.__errors = [];
const _err = console.error.bind(console);
console.error = (...a) => { window.__errors.push(a.map(String).join(' ')); _err(...a); };
window.addEventListener('error', e => window.__errors.push('uncaught: ' + e.message));
window.addEventListener('unhandledrejection', e => window.__errors.push('rejection: ' + e.reason));
window.addEventListener('load', () => setTimeout(() => {
  const pre = document.createElement('pre'); pre.id = 'console-errors';
  pre.textContent = JSON.stringify(window.__errors); document.body.appendChild(pre); }, 3000));
</script>"""


@pytest.fixture(scope="module")
def report(gaming_statistical, tmp_path_factory):
    _, result = gaming_statistical
    out = tmp_path_factory.mktemp("report") / "gaming.html"
    r = CliRunner().invoke(app, ["report", result.run_id, "-o", str(out)], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    return result, out


def test_report_is_self_contained_and_linked(report):
    result, path = report
    html = path.read_text()
    assert path.with_suffix(".md").read_text().startswith(f"# Discovery {result.run_id[:8]}")
    assert not re.search(r"""<script[^>]+src=|<link[^>]+href=["']https?:""", html)  # nothing fetched
    for i in result.insights:
        assert f'id="ins-{i.id}"' in html and i.name.replace("&", "&amp;") in html
    assert html.count("<details>") >= len(result.insights)  # the SQL behind each number, collapsed
    assert "Recommendations need an LLM" in html


def test_report_renders_in_chromium_without_console_errors(report, tmp_path):
    _, path = report
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if not exe:
        need_service("chromium", "Debian's chromium package is not installed")
    page = tmp_path / "page.html"
    page.write_text(path.read_text().replace("<head>", "<head>" + CAPTURE, 1))
    dom = subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=15000",
                          "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120).stdout
    errors = re.search(r'<pre id="console-errors">(.*?)</pre>', dom, re.S)
    assert errors is not None, "the page did not finish loading"
    assert errors.group(1) == "[]", errors.group(1)
    charts = re.findall(r'<div class="chart[^"]*" id="(chart-\d+)"', dom)
    # charts come only from stored, masked results that hold the claim's rows (no re-query): fewer than one
    # per insight, but every one drawn
    assert len(charts) >= 1
    for cid in charts:  # vega-embed drew an SVG with marks into every chart container
        body = dom.split(f'id="{cid}"', 1)[1][:200000]
        assert re.search(r'<svg[^>]*class="marks"', body.split('class="card"', 1)[0]), cid
