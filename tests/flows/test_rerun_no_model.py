"""A one-area rerun reads its discovery's vectors back from the embedding cache: in a fresh process it
neither imports torch nor loads sentence-transformers (issue #20 item 8), and finds what it found before. So does a
second discovery of the same project, whose texts were all embedded by the first: the model loads lazily, at the
first text the cache lacks, not at the start of every discovery."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys

import pytest

from assay.models import Project, WarehouseConfig
from assay.settings import load_settings
from assay.store import open_store
from assay_flows.flows.discovery import DiscoveryParams, discovery_flow
from tests.helpers import small_warehouse

RERUN = """
import json, sys
from assay.cli import app
try:
    app(sys.argv[1:], standalone_mode=False)
except SystemExit as exc:
    assert not exc.code, exc.code
from assay.vectors.embedder import get_embedder, is_loaded
e = get_embedder()
print(json.dumps({"torch": "torch" in sys.modules, "st": "sentence_transformers" in sys.modules,
                  "loaded": is_loaded(e), "hits": e.hits, "misses": e.misses}))
"""


@pytest.mark.timeout(1800)  # a discovery, then a fresh process: imports and Prefect; 2 busy cores stretch both
def test_a_statistical_rerun_needs_no_model(tmp_path):
    from prefect.settings import PREFECT_API_URL

    from assay.vectors.index import _close_all

    db = small_warehouse(tmp_path / "w.duckdb")
    p = Project(id="rerun-nomodel", pack="ecommerce", max_steps=8,
                warehouse=WarehouseConfig(kind="duckdb", settings={"path": str(db)}))
    store = open_store(load_settings())
    store.save_project(p)
    state = asyncio.run(discovery_flow(DiscoveryParams(project=p.id), run_id="nomodel1", return_state=True))
    assert state.is_completed(), state.message
    before = {i.name for i in store.get_result("nomodel1").insights if i.area == "revenue"}
    _close_all()  # this process holds the local vector folder: the rerun would wait for it, as a second run waits
    env = dict(os.environ, PREFECT_API_URL=PREFECT_API_URL.value(), ASSAY_PREFECT_SERVER="ephemeral")
    out = _fresh(env, "rerun", "nomodel1", "--area", "revenue")
    assert out["hits"] > 0 and out["misses"] == 0, out
    assert not out["loaded"] and not out["torch"] and not out["st"], out
    after = {i.name for i in open_store(load_settings()).get_result("nomodel1").insights if i.area == "revenue"}
    assert after == before  # the same vectors: the same picks, the same insights

    # a second discovery of the project in a fresh process (`assay discover`, which warmed the model up at its
    # start until session 13, as the discovery flow did): every text it embeds is cached, so no torch at all
    out = _fresh(env, "discover", p.id)
    assert out["hits"] > 0 and out["misses"] == 0, out
    assert not out["loaded"] and not out["torch"] and not out["st"], out


def _fresh(env, *args) -> dict:
    """``assay ARGS`` in a fresh process: what it imported and what its embedder did."""
    r = subprocess.run([sys.executable, "-c", RERUN, *args], env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])
