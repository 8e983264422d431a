"""`assay ask`: one question answered in a few turns, from earlier findings or from the warehouse.

The loop is the exploration agent's. When the project has discovered insights, the model may also search
them (`search_insights`) and answer from them, citing their ids and the run and date they come from; it
queries the warehouse when they do not answer the question or when it needs today's numbers. The answer
says which it used.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from . import limits
from .errors import MissingKey
from .explore.actions import ALL_ACTIONS, ASK_ACTIONS, actions_text
from .explore.executor import Executor
from .explore.loop import Explorer
from .llm import build_llm
from .llm.base import LLM
from .insight_search import InsightHit, search_insights
from .models import ExplorationStep, Project, StepAction
from .packs import render
from .schema.catalog import join_hints, render_catalog
from .schema.provider import SchemaProvider
from .store import Store
from .warehouse import build_guard, open_warehouse, sampler_for

_ENUMERATION = ("list all", "list every", "every ", "all of the ", "all the ", "show me all", "which ones",
                "enumerate", "complete list", "full list")

ASK_PROMPT = """\
You answer one question about a data warehouse by running SQL. Be exact and brief.

## Warehouse catalog (one line per table)
{{ schema_info }}
{% if findings %}

## Earlier findings
{{ findings }}
{% endif %}
{% if tenant_rule %}

## Mandatory filter
{{ tenant_rule }}
{% endif %}

## Actions
{{ actions }}
Finish with done; its summary is the answer, citing the step numbers of the queries it rests on, e.g. (step 2){% if findings %}, and the ids of the earlier findings it rests on with their run and date, e.g. (churn-2 of run 1a2b3c4d, 2026-11-20){% endif %}.

Your budget is {{ max_steps }} steps. Finish with done as soon as the question is answered: by a query, or by earlier findings when they answer it."""


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
    found: list[InsightHit] = field(default_factory=list)  # every earlier finding the searches returned

    @property
    def queries(self) -> list[ExplorationStep]:
        return [s for s in self.steps if s.ok and s.action == StepAction.query]

    def cited_insights(self) -> list[InsightHit]:
        """The earlier findings the answer names by id (churn-2, I3, R1: whatever ids the searches returned)."""
        return [h for h in self.found
                if re.search(rf"(?<![\w-]){re.escape(h.id)}(?![\w-])", self.answer)]

    @property
    def sources(self) -> str:
        """What the answer rests on: "insights", "warehouse", "insights and warehouse", or "nothing"."""
        ins, sql = bool(self.cited_insights()), bool(self.queries)
        return {(True, True): "insights and warehouse", (True, False): "insights",
                (False, True): "warehouse"}.get((ins, sql), "nothing")

    def cited(self) -> list[ExplorationStep]:
        """The queries the answer cites (step numbers in the text), else every successful query."""
        from .explore.numbering import resolve

        nums = [int(n) for n in re.findall(r"step\s*#?(\d+)", self.answer, re.I)]
        if not self.queries:
            return []
        cited = set(resolve(nums, self.steps))  # the numbers the model was shown (explore/numbering.py)
        chosen = [s for s in self.queries if s.step in cited]
        return chosen or self.queries


def ask(store: Store, project: Project, question: str, *, turns: int | None = None, llm: LLM | None = None,
        searcher=None) -> AskAnswer:
    if llm is None:
        from .llm.resolve import HOW_TO_ADD_AN_LLM, resolve_llm

        res = resolve_llm(project.llm)
        if res.cfg is None:
            raise MissingKey(f"assay ask needs an LLM, and none is available: {res.reason} ({HOW_TO_ADD_AN_LLM})")
        llm = build_llm(project.llm)
    from .schema.discovery import discover_schema

    wh = open_warehouse(project.warehouse)
    try:
        tables = discover_schema(store, project, wh)
        cfg = project.warehouse
        tenant = (f"Filter every table that has {cfg.tenant_filter.column} by {cfg.tenant_filter.column} = "
                  f"{cfg.tenant_filter.value!r}." if cfg.tenant_filter else "")
        budget = turn_budget(question, turns)
        latest = store.recent_results(project.id, limit=1)
        found: dict[tuple[str, str], InsightHit] = {}

        def insight_searcher(text: str, k: int) -> list[dict]:
            hits = search_insights(store, project.id, text, top_k=k)
            for h in hits:
                found[(h.run_id, h.id)] = h
            return [{"id": h.id, "kind": h.kind, "run": h.run_id[:8], "date": h.run_date, "area": h.area,
                     "title": h.title, "text": h.text, "verdict": h.verdict, "affected_count": h.affected_count}
                    for h in hits]

        findings = ""
        if latest:
            r = latest[0]
            findings = (f"Earlier discoveries of this project found insights and recommendations (the latest run, "
                        f"{r.run_id[:8]}, ended {r.created_at.date().isoformat()} with {len(r.insights)} insights). "
                        "Search them with search_insights first when the question is about what was found, why, "
                        "or what to do; answer from them when they answer it, and say they are as of that run's "
                        "date. Query the warehouse when they do not, or when the question needs today's numbers.")
        allowed = ASK_ACTIONS if latest else ALL_ACTIONS
        tools = bool(getattr(llm, "supports_tools", False))
        system = render(ASK_PROMPT, "ask prompt", schema_info=render_catalog(tables).text, tenant_rule=tenant,
                        limits=limits.template_vars(), max_steps=budget, findings=findings,
                        actions=actions_text(tools, allowed, caps=False))
        explorer = Explorer(
            llm=llm, executor=Executor(wh, build_guard(wh, cfg, tables), cfg, llm),
            provider=SchemaProvider(tables, sampler=sampler_for(wh, cfg, tables), searcher=searcher, pii=cfg.pii_columns,
                                    joins=join_hints(tables)),
            run_id="ask", system_prompt=system, max_steps=budget, purpose="ask", tables=tables,
            pii=cfg.pii_columns, intro=f"Question: {question}", max_tokens=project.llm.max_tokens,
            actions=allowed, insight_searcher=insight_searcher if latest else None,
        )
        out = explorer.run()
    finally:
        wh.close()
    answer = out.summary
    if out.finished != "done":
        answer = (f"(no final answer within {budget} steps; the queries below are what was found)"
                  + (f" {out.summary}" if out.summary else ""))
    steps = [s for s in out.steps if s.action != StepAction.done]
    result = AskAnswer(question=question, answer=answer, finished=out.finished, steps=steps,
                       found=list(found.values()))
    cited = result.cited_insights()
    if cited and not result.queries:
        # an answer from earlier findings alone says when those were true
        runs = sorted({(h.run_date, h.run_id[:8]) for h in cited})
        when = "; ".join(f"run {rid}, {day}" for day, rid in runs)
        if not all(rid in answer for _, rid in runs):
            result.answer = f"{answer} (From earlier findings: {when}; not re-queried today.)"
    return result
