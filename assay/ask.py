"""`assay ask`: the exploration loop answering one question in a few turns."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from . import limits
from .errors import MissingKey
from .explore.actions import actions_text
from .explore.executor import Executor
from .explore.loop import Explorer
from .llm import build_llm
from .llm.base import LLM
from .models import ExplorationStep, Project, StepAction
from .packs import render
from .schema.catalog import join_hints, render_catalog
from .schema.provider import SchemaProvider
from .store import Store
from .warehouse import build_guard, open_warehouse

_ENUMERATION = ("list all", "list every", "every ", "all of the ", "all the ", "show me all", "which ones",
                "enumerate", "complete list", "full list")

ASK_PROMPT = """\
You answer one question about a data warehouse by running SQL. Be exact and brief.

## Warehouse catalog (one line per table)
{{ schema_info }}
{% if tenant_rule %}

## Mandatory filter
{{ tenant_rule }}
{% endif %}

## Actions
{{ actions }}
Finish with done; its summary is the answer, citing the step numbers of the queries it rests on, e.g. (step 2).

You have {{ max_steps }} turns. Finish with done as soon as a query has answered the question."""


def is_enumeration(question: str) -> bool:
    q = question.lower()
    return any(tok in q for tok in _ENUMERATION)


def turn_budget(question: str, requested: int | None = None) -> int:
    if requested:
        return requested
    return limits.ASK_MAX_TURNS_ENUMERATION if is_enumeration(question) else limits.ASK_MAX_TURNS


@dataclass
class AskAnswer:
    question: str
    answer: str
    finished: str
    steps: list[ExplorationStep] = field(default_factory=list)

    @property
    def queries(self) -> list[ExplorationStep]:
        return [s for s in self.steps if s.ok]

    def cited(self) -> list[ExplorationStep]:
        """The queries the answer cites (step numbers in the text), else every successful query."""
        nums = {int(n) for n in re.findall(r"step\s*#?(\d+)", self.answer, re.I)}
        chosen = [s for s in self.queries if s.step in nums]
        return chosen or self.queries


def ask(store: Store, project: Project, question: str, *, turns: int | None = None, llm: LLM | None = None,
        searcher=None) -> AskAnswer:
    if llm is None:
        from .llm.resolve import resolve_llm

        res = resolve_llm(project.llm)
        if res.cfg is None:
            raise MissingKey(f"assay ask needs an LLM, and none is available: {res.reason} (set "
                             "ANTHROPIC_API_KEY, OPENAI_BASE_URL/OPENAI_API_KEY, or the project's llm.provider)")
        llm = build_llm(project.llm)
    from .schema.discovery import discover_schema

    wh = open_warehouse(project.warehouse)
    try:
        tables = discover_schema(store, project, wh)
        cfg = project.warehouse
        tenant = (f"Filter every table that has {cfg.tenant_filter.column} by {cfg.tenant_filter.column} = "
                  f"{cfg.tenant_filter.value!r}." if cfg.tenant_filter else "")
        budget = turn_budget(question, turns)
        system = render(ASK_PROMPT, "ask prompt", schema_info=render_catalog(tables).text, tenant_rule=tenant,
                        limits=limits.template_vars(), max_steps=budget,
                        actions=actions_text(bool(getattr(llm, "supports_tools", False))))
        explorer = Explorer(
            llm=llm, executor=Executor(wh, build_guard(wh, cfg, tables), cfg, llm),
            provider=SchemaProvider(tables, sampler=wh.sample_rows, searcher=searcher, pii=cfg.pii_columns,
                                    joins=join_hints(tables)),
            run_id="ask", system_prompt=system, max_steps=budget, purpose="ask", tables=tables,
            pii=cfg.pii_columns, intro=f"Question: {question}", max_tokens=project.llm.max_tokens,
        )
        out = explorer.run()
    finally:
        wh.close()
    answer = out.summary
    if out.finished != "done":
        answer = (f"(no final answer within {budget} turns; the queries below are what was found)"
                  + (f" {out.summary}" if out.summary else ""))
    steps = [s for s in out.steps if s.action != StepAction.done]
    return AskAnswer(question=question, answer=answer, finished=out.finished, steps=steps)
