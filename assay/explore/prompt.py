"""The exploration prompt: the pack's exploration and base-context templates, filled for one run."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import limits
from ..analysis.discipline import goal_section, goal_text
from ..context import profile_text
from ..models import AnalysisArea, DomainPack, Project
from ..packs import render

if TYPE_CHECKING:
    from ..run.session import RunSession


def run_areas(s: RunSession) -> list[AnalysisArea]:
    """The areas this run analyses, in the pack's order."""
    wanted = set(s.run.areas or [])
    return [a for a in s.pack.areas if not wanted or a.id in wanted]


def exploration_prompt(s: RunSession) -> str:
    return render_exploration_prompt(s.project, s.pack, s.run.catalog, s.run.max_steps,
                                     previous_context=s.run.previous_context, goal=s.run.goal or "",
                                     tools=bool(getattr(s.llm, "supports_tools", False)), areas=run_areas(s),
                                     leads=s.run.leads or "")


def areas_section(areas: list[AnalysisArea]) -> str:
    """What the analysis will report on. Each area is analysed only from the exploration's steps, so an
    explorer that spends its budget on one area leaves the others with nothing to report."""
    if len(areas) < 2:
        return ""
    lines = "\n".join(f"- {a.name}: {a.description}" for a in areas)
    return ("## Areas the analysis will report on\n"
            "After you finish, each area below is analysed only from your steps: an area that none of your "
            "steps looks at has nothing to report. Before spending several steps on one finding, give every "
            "area at least one step that breaks its main measure down by the segment columns the schema has "
            "and over time.\n" + lines)


DIALECT_NAMES = {"duckdb": "DuckDB", "postgres": "PostgreSQL", "postgresql": "PostgreSQL", "snowflake": "Snowflake",
                 "mysql": "MySQL", "mariadb": "MariaDB", "bigquery": "BigQuery", "redshift": "Amazon Redshift",
                 "sqlite": "SQLite"}


def dialect_name(kind: str) -> str:
    return DIALECT_NAMES.get((kind or "").lower(), kind or "SQL")


def render_exploration_prompt(project: Project, pack: DomainPack, catalog: str, max_steps: int, *,
                              previous_context: str = "", goal: str = "", tools: bool = True,
                              areas: list[AnalysisArea] | None = None, leads: str = "") -> str:
    """``leads``: the statistical scan's section (explore/leads.py), after the areas; empty: none."""
    from .actions import actions_text

    cfg = project.warehouse
    tenant = ""
    if cfg.tenant_filter:
        tenant = (f"Every table that has the column {cfg.tenant_filter.column} must be filtered with "
                  f"{cfg.tenant_filter.column} = {cfg.tenant_filter.value!r} in the SELECT that reads it.")
    base = render(pack.base_context, f"{pack.name} base_context", profile=profile_text(project),
                  previous_context=previous_context, goal=goal_text(goal))
    body = render(pack.exploration, f"{pack.name} exploration", schema_info=catalog,
                  tenant_rule=tenant, max_steps=max_steps, limits=limits.template_vars(), goal=goal_text(goal),
                  actions=actions_text(tools))
    if "actions" not in pack.exploration:  # a pack written before {{ actions }}: the protocol is still described
        body = f"{body.strip()}\n\n## Actions (this is how to answer)\n{actions_text(tools)}"
    # the models of round 8 inferred the dialect from the leads' SQL: name it
    body = f"{body.strip()}\n\nThe warehouse is {dialect_name(cfg.kind)}: write every query in its SQL dialect."
    section = areas_section(pack.areas if areas is None else areas)
    return "\n\n".join(p.strip() for p in (body, section, leads, goal_section(goal), base) if p.strip())
