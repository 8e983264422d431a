"""The cost estimate of a discovery of a project, from its real prompts and catalog."""

from __future__ import annotations

from ..context import profile_text, render_previous_context
from ..errors import MissingKey
from ..explore.prompt import render_exploration_prompt
from ..packs import pack_for_project
from ..run.analyst import resolve_analyst
from ..schema.catalog import render_catalog
from ..schema.discovery import discover_schema
from ..settings import Settings, load_settings
from ..store import open_store
from ..warehouse import open_warehouse


def estimate_project(project_id: str, *, max_steps: int | None = None, settings: Settings | None = None,
                     model: str | None = None):
    """The cost estimate of a discovery of the project, from its real prompts and catalog. ``model``: the model to
    price instead of the project's. A project that runs the statistical analyst costs no LLM tokens: what its
    LLM analyst would cost is priced instead (``model``, else the project's model, else Claude's default), so
    that the estimate still answers what an LLM run would cost, and says which analyst the project runs."""
    from ..analysis.analyze import build_area_prompt
    from ..estimate import calibrate, cost, estimate
    from ..recommend import recommendation_prompt
    from ..stats.planner import Planner
    from ..stats.portable import portable, quote as duckdb_quote

    settings = settings or load_settings()
    store = open_store(settings)
    project = store.get_project(project_id)
    pack = pack_for_project(project)
    note = None
    try:
        analyst = resolve_analyst(project)
    except MissingKey:
        analyst = "statistical"  # analyst: llm without a key: a run would stop; priced as the LLM analyst below
    lead = ""
    if analyst == "statistical" and project.analyst != "statistical" and project.llm.provider not in ("", "none",
                                                                                                    "auto"):
        # what the configured model would cost, before the key is set
        analyst = "llm"
        note = ("no API key is set yet: a run started now would stop until it is set (or llm.provider: auto, to "
                "run the statistical analyst without one)")
    elif analyst == "statistical":
        project, lead = _llm_what_if(project, model)
        analyst, model = "llm", None
    if analyst == "llm" and project.llm.provider == "auto":
        # price the model a run started now would use (ANTHROPIC_API_KEY: Claude's default model), not "auto"
        from ..llm.resolve import resolve_llm

        if (resolved := resolve_llm(project.llm)).cfg is not None:
            project = project.model_copy(update={"llm": resolved.cfg.model_copy(update={"model": resolved.model})})
    if model and model != project.llm.model:  # the project's llm.prices are its own model's
        project = project.model_copy(update={"llm": project.llm.model_copy(update={"model": model, "prices": None})})
    steps = max_steps or project.max_steps
    previous = render_previous_context(store.recent_results(project.id, limit=5), store.feedback(project.id))
    profile, goal = profile_text(project), project.goal or ""
    wh = open_warehouse(project.warehouse)
    try:
        tables = discover_schema(store, project, wh)
        catalog = render_catalog(tables).text
        planner = Planner(tables, duckdb_quote, [k for a in pack.areas for k in a.keywords])  # generated SQL is DuckDB's
        costs = [c for t in planner.ranked_tables()
                 if (c := wh.explain_cost(portable(planner.profile_probe(t).sql, wh.dialect))) is not None]
        kind = project.warehouse.kind
    finally:
        wh.close()
    warehouse = ({"engine": kind, "unit": costs[0]["unit"], "total": sum(c["value"] for c in costs),
                  "tables": len(costs)} if costs else
                 {"engine": kind, "note": "the engine gives no cost estimate (DuckDB runs locally: no charge)"})
    system = render_exploration_prompt(project, pack, catalog, steps, previous_context=previous, goal=goal)
    dataset = ", ".join(project.warehouse.schemas) or project.warehouse.kind
    area_chars = [len(build_area_prompt(pack, a, [], previous_context=previous, profile=profile, dataset=dataset,
                                        goal=goal)) for a in pack.areas]
    rec_chars = len(recommendation_prompt(pack, [], previous_context=previous, profile=profile, goal=goal))
    shape = None
    for run in store.list_runs(project.id, limit=10):
        if run.analyst == "llm" and run.status.value == "completed" and store.has_result(run.id):
            result = store.get_result(run.id)
            shape = calibrate(store.steps(run.id), result.analysis_log, run.telemetry)
            if shape:
                break
    est = estimate(project, system_chars=len(system), catalog_chars=len(catalog), area_prompt_chars=area_chars,
                   recommend_prompt_chars=rec_chars, max_steps=steps, analyst=analyst, shape=shape,
                   warehouse=warehouse, leads_probes=project.analysis.leads_probes)
    if note:
        est.notes.append(note)
    est.lead = lead
    from ..schema.describe import estimate_phase

    if (desc := estimate_phase(project, tables, store, analyst)) is not None:
        desc.cost_usd = cost(desc, est.prices)
        est.phases.append(desc)
    return est


def _llm_what_if(project, model: str | None):
    """(the project as the LLM analyst with ``model`` would run it, the estimate's first line saying so: why no
    LLM would run now, and which model is priced)."""
    from ..llm.anthropic import DEFAULT_MODEL

    priced = model or project.llm.model or DEFAULT_MODEL
    prices = project.llm.prices if priced == project.llm.model else None  # the project's prices are its own model's
    llm = project.llm.model_copy(update={"model": priced, "prices": prices})
    other = "" if model else " (another model: --model NAME)"
    if project.analyst == "llm":
        why = "No API key is set: a run of this project (analyst: llm) would stop now."
    elif project.analyst == "statistical" or project.llm.provider in ("", "none"):
        why = "This project runs the statistical analyst: no LLM cost."
    else:
        why = "No API key is set: a run started now would use the statistical analyst (no LLM cost)."
    lead = f"{why} Below, what the LLM analyst would cost with {priced}{other}."
    return project.model_copy(update={"llm": llm}), lead
