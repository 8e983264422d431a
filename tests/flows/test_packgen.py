"""Pack generation and the project lifecycle: pending -> generation -> done -> (accept) -> ready."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from assay.cli import app
from assay.llm import register_scripted
from assay.llm.scripted import ScriptedLLM
from assay.models import LLMConfig, Project, ProjectState, WarehouseConfig
from assay.packs import load_pack_dir
from assay.settings import load_settings
from assay.store import open_store
from tests.helpers import small_warehouse

ANSWERS: list[str] = []
SEEN: list[str] = []


def handler(req):
    SEEN.append(req.system_text())
    return ANSWERS.pop(0)


register_scripted("packgen", lambda cfg: ScriptedLLM(handler))

GOOD = {"pack": {
    "name": "Online Shop", "description": "A small web shop: customers, their orders and channels.",
    "areas": [
        {"id": "acquisition", "name": "Acquisition", "description": "Where customers come from and what they are worth",
         "keywords": ["channel", "customers"], "focus": "Compare paid and organic customers: order counts, "
                                                      "amounts, repeat rate. {{ not a template }}", "priority": 1},
        {"id": "orders", "name": "Orders", "description": "Order volume and value over time",
         "keywords": ["orders", "amount", "ordered_at"], "focus": "Monthly orders and amounts, spikes and drops, "
                                                                  "the largest orders."}],
    "profile_schema": {"currency": "the currency of amounts"}}}


@pytest.fixture()
def project(tmp_path):
    db = small_warehouse(tmp_path / "w.duckdb")
    p = Project(id="packgen", pack="generic", state=ProjectState.pack_generation_pending,
                warehouse=WarehouseConfig(kind="duckdb", settings={"path": str(db)}),
                llm=LLMConfig(provider="scripted", model="packgen"))
    store = open_store(load_settings())
    store.save_project(p)
    ANSWERS.clear()
    SEEN.clear()
    return p, store, tmp_path


def run(*args):
    return CliRunner().invoke(app, list(args))


def test_generate_review_accept(project):
    p, store, tmp = project
    # discovery is refused until the project is ready
    r = run("discover", p.id)
    assert r.exit_code != 0 and "pack_generation_pending" in r.output and "assay pack accept" in r.output
    notes = tmp / "notes.md"
    notes.write_text("We sell furniture online. Paid channels are expensive.")
    ANSWERS.append(json.dumps(GOOD))
    r = run("pack", "generate", p.id, "--notes", str(notes), "--out", str(tmp / "draft"))
    assert r.exit_code == 0, r.output
    assert "We sell furniture online" in SEEN[0] and "main.orders" in SEEN[0]  # notes and catalog in the prompt
    assert store.get_project(p.id).state == ProjectState.pack_generation_done
    pack = load_pack_dir(tmp / "draft")
    assert pack.name == "online-shop" and [a.id for a in pack.areas] == ["acquisition", "orders"]
    assert pack.profile_schema == {"currency": "the currency of amounts"}
    # the model's text is shown as written, never evaluated as a template
    from assay.packs import render
    rendered = render(pack.areas[0].prompt, "t", area=pack.areas[0].model_dump(), total_queries=0,
                      query_results="[]", dataset="d", goal="g")
    assert "{{ not a template }}" in rendered

    r = run("pack", "accept", p.id, str(tmp / "draft"))
    assert r.exit_code == 0, r.output
    accepted = store.get_project(p.id)
    assert accepted.state == ProjectState.ready and accepted.pack == "online-shop"
    assert accepted.pack_dir == str((tmp / "draft").resolve())


def test_invalid_drafts_leave_nothing_and_return_to_pending(project):
    p, store, tmp = project
    bad = json.loads(json.dumps(GOOD))
    bad["pack"]["areas"][1]["id"] = "Bad Id"
    ANSWERS.extend([json.dumps(bad)] * 4)  # the first answer and every correction are invalid
    r = run("pack", "generate", p.id, "--out", str(tmp / "draft"))
    assert r.exit_code != 0 and r.output.startswith("error:") and "pack" in r.output
    assert not (tmp / "draft").exists() and not (tmp / "draft.tmp").exists()
    assert store.get_project(p.id).state == ProjectState.pack_generation_pending


def test_accept_refuses_an_invalid_folder(project):
    p, store, tmp = project
    (tmp / "nopack").mkdir()
    r = run("pack", "accept", p.id, str(tmp / "nopack"))
    assert r.exit_code == 2 and "no pack.yaml" in r.output
    assert store.get_project(p.id).state == ProjectState.pack_generation_pending


def test_generate_needs_an_llm(project):
    p, store, tmp = project
    store.save_project(p.model_copy(update={"llm": LLMConfig()}))
    r = run("pack", "generate", p.id)
    assert r.exit_code != 0 and "pack generation needs an LLM" in r.output
