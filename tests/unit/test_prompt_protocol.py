"""One protocol per provider (#15 item 3): the real model was asked for JSON-only answers while native
tools with other argument names were offered. Every exploration prompt is rendered for each protocol
and every action and argument it names is checked against the tool schemas."""

from __future__ import annotations

import re

import pytest

from assay import limits
from assay.ask import ASK_PROMPT
from assay.explore.actions import ALL_ACTIONS, ASK_ACTIONS, _json_objects, actions_text, parse_action, tool_specs
from assay.explore.prompt import render_exploration_prompt
from assay.models import Project, WarehouseConfig
from assay.packs import goal_pack, list_packs, load_pack, render

SPECS = {t.name: t for t in tool_specs(ASK_ACTIONS)}


def _prompts(tools: bool) -> list[tuple[str, str]]:
    out = []
    for name in list_packs():
        pack = load_pack(name)
        p = Project(id="x", pack=name, warehouse=WarehouseConfig(kind="duckdb"))
        out.append((name, render_exploration_prompt(p, pack, "- main.t (1 cols, ~1 rows): a", 10, tools=tools),
                    ALL_ACTIONS))
    p = Project(id="g", pack="goal", goal="why do orders fall", warehouse=WarehouseConfig(kind="duckdb"))
    out.append(("goal", render_exploration_prompt(p, goal_pack("why do orders fall"), "", 10, tools=tools),
                ALL_ACTIONS))
    out.append(("ask", render(ASK_PROMPT, schema_info="", tenant_rule="", limits=limits.template_vars(),
                              max_steps=5, findings="", actions=actions_text(tools)), ALL_ACTIONS))
    # a project with earlier findings: ask may also search them
    out.append(("ask+findings", render(ASK_PROMPT, schema_info="", tenant_rule="", limits=limits.template_vars(),
                                       max_steps=5, findings="Earlier discoveries found insights.",
                                       actions=actions_text(tools, ASK_ACTIONS)), ASK_ACTIONS))
    return out


@pytest.mark.parametrize("name,text,allowed", _prompts(tools=True))
def test_native_tools_prompt_names_the_tool_schemas(name, text, allowed):
    calls = re.findall(r"`(\w+)\(([^)]*)\)`", text)
    assert {c for c, _ in calls} == set(allowed), name
    for tool, args in calls:
        named = {a.strip().rstrip("?") for a in args.split(",") if a.strip()}
        assert named == set(SPECS[tool].parameters["properties"]), (name, tool)
    assert not _json_objects(text), f"{name}: JSON action shapes in a native-tools prompt"
    assert "JSON object" not in text


@pytest.mark.parametrize("name,text,allowed", _prompts(tools=False))
def test_json_prompt_shows_shapes_the_parser_accepts(name, text, allowed):
    shapes = _json_objects(text)
    kinds = [parse_action(__import__("json").dumps(o), allowed).kind for o in shapes]
    assert sorted(kinds) == sorted(allowed), name
    assert not re.search(r"`\w+\([^)]*\)`", text), f"{name}: tool-call syntax in a JSON-protocol prompt"


def test_the_exploration_prompt_names_the_dialect_and_what_a_step_costs():
    """Round 8's models inferred the SQL dialect from the leads' SQL, and two explorations ended without `done`
    because several calls in one turn each took a step."""
    pack = load_pack("generic")
    for kind, name in (("duckdb", "DuckDB"), ("postgres", "PostgreSQL"), ("snowflake", "Snowflake"),
                       ("mysql", "MySQL")):
        p = Project(id="x", pack="generic", warehouse=WarehouseConfig(kind=kind))
        text = render_exploration_prompt(p, pack, "- main.t (1 cols, ~1 rows): a", 10, tools=True)
        assert f"The warehouse is {name}: write every query in its SQL dialect." in text
    assert "Each `query` takes one step of your budget, also when several are in one turn" in actions_text(True)
