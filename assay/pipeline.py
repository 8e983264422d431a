"""The discovery run, phase by phase, without Prefect.

Each phase takes a run id and rebuilds what it needs from the store, so any
phase can run in another thread, process or machine, and a retried phase
picks up where the last attempt left off. Prefect tasks (``tasks/``) wrap
these functions; the CLI and tests can call them directly.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
import time
from pathlib import Path
from dataclasses import dataclass, field
from functools import cached_property
from typing import Callable

from . import limits
from .analysis.analyze import analyze_area
from .analysis.discipline import goal_section, goal_text
from .analysis.picker import cited_steps, pick_steps
from .analysis.step_index import StepIndex
from .background import BatchWorker
from .context import mark_duplicates, render_previous_context
from .config import check_project, check_schema_found
from .errors import ConfigError, InvalidLLMOutput, MissingKey, TransientError, UserError
from .explore.executor import Executor
from .explore.loop import Explorer
from .llm import build_llm, llm_configured
from .liveness import reap_gone_runs
from .llm.base import LLM
from .models import (
    AreaLog,
    DiscoveryResult,
    DiscoveryRun,
    DomainPack,
    ExplorationStep,
    Insight,
    Phase,
    Project,
    ProjectState,
    RunStatus,
    RunType,
    TableInfo,
    utcnow,
)
from .packs import pack_for_project, render
from .recommend import recommend
from .schema.catalog import join_hints, render_catalog
from .schema.discovery import apply_descriptions, schema_cache_key
from .schema.index import SchemaIndex
from .schema.provider import SchemaProvider
from .settings import Settings, load_settings
from .store import Store, open_store
from .validate.verify import Verifier
from .vectors import get_embedder, open_index
from .warehouse import build_guard, open_warehouse

log = logging.getLogger("assay")

STATISTICAL_NOTE = (
    "No LLM is configured, so the statistical analyst ran (set ANTHROPIC_API_KEY or llm.provider to use an "
    "LLM analyst). Recommendations need an LLM and were not generated."
)


def resolve_analyst(project: Project) -> str:
    return analyst_choice(project)[0]


def analyst_choice(project: Project) -> tuple[str, str]:
    """(analyst, the run's first line: which analyst and model run, and why), decided now."""
    from .llm.resolve import describe, resolve_llm

    res = resolve_llm(project.llm)
    if project.analyst == "statistical":
        return "statistical", "analyst: statistical because the project sets analyst: statistical"
    if project.analyst == "llm" and res.cfg is None:
        raise MissingKey(
            f"project {project.id}: analyst is 'llm' but no LLM is configured ({res.reason}; "
            "set ANTHROPIC_API_KEY, OPENAI_BASE_URL/OPENAI_API_KEY, or llm.provider in the project)"
        )
    analyst = "llm" if res.cfg is not None else "statistical"
    return analyst, describe(analyst, res)


def _profile_text(project: Project) -> str:
    return "\n".join(f"- {k}: {v}" for k, v in project.profile.items()) if project.profile else ""


def project_schema_index(project: Project, index=None, embedder=None,
                         settings: Settings | None = None) -> SchemaIndex:
    """The project's schema index, read with the project's glossary, as every run reads it."""
    if index is None or embedder is None:
        settings = settings or load_settings()
        index = index if index is not None else open_index(settings)
        embedder = embedder if embedder is not None else get_embedder(settings.embedding_model)
    return SchemaIndex(index, embedder, project.id, glossary=project.warehouse.settings.get("glossary"))


@dataclass
class RunSession:
    """Everything one run needs, built lazily from ids."""

    run_id: str
    settings: Settings = field(default_factory=load_settings)

    @cached_property
    def store(self) -> Store:
        return open_store(self.settings)

    @cached_property
    def run(self) -> DiscoveryRun:
        return self.store.get_run(self.run_id)

    def refresh(self) -> DiscoveryRun:
        self.__dict__.pop("run", None)
        return self.run

    @cached_property
    def project(self) -> Project:
        return self.store.get_project(self.run.project_id)

    @cached_property
    def pack(self) -> DomainPack:
        p = pack_for_project(self.project)
        if self.run.areas:
            p = p.model_copy(update={"areas": [a for a in p.areas if a.id in set(self.run.areas)]})
        return p

    @cached_property
    def warehouse(self):
        return open_warehouse(self.project.warehouse)

    @cached_property
    def tables(self) -> list[TableInfo]:
        key = self.run.schema_key or schema_cache_key(self.project.warehouse)
        cached = self.store.get_schema(key)
        if cached is None:
            cached = discover_schema(self.store, self.project, self.warehouse)
        return cached

    @cached_property
    def llm(self) -> LLM | None:
        if self.run.analyst == "statistical":
            return None
        return build_llm(self.project.llm)

    @cached_property
    def executor(self) -> Executor:
        guard = build_guard(self.warehouse, self.project.warehouse, self.tables)
        return Executor(self.warehouse, guard, self.project.warehouse, self.llm)

    @cached_property
    def index(self):
        return open_index(self.settings)

    @cached_property
    def embedder(self):
        return get_embedder(self.settings.embedding_model)

    @cached_property
    def step_index(self) -> StepIndex:
        return StepIndex(self.index, self.embedder, self.run_id)

    @cached_property
    def schema_index(self) -> SchemaIndex:
        return project_schema_index(self.project, self.index, self.embedder)

    def provider(self) -> SchemaProvider:
        return SchemaProvider(
            self.tables,
            sampler=self.warehouse.sample_rows,
            searcher=self.schema_index.search,
            pii=self.project.warehouse.pii_columns,
            joins=join_hints(self.tables),
        )

    def bump(self, counters: dict[str, int]) -> None:
        self.store.bump(self.run_id, counters)

    def close(self) -> None:
        wh = self.__dict__.get("warehouse")
        if wh is not None:
            wh.close()
        # forget what holds the connection: a failed phase's traceback keeps this session alive (Prefect
        # keeps the exception in the task's state), and with it the engine's connection until exit
        for name in ("executor", "provider", "warehouse"):
            self.__dict__.pop(name, None)


# ---------------------------------------------------------------------------- phase 1: init


def create_run(store: Store, project: Project, *, run_id: str, max_steps: int | None = None,
               min_steps: int | None = None, areas: list[str] | None = None,
               flow_run_id: str | None = None, goal: str | None = None) -> DiscoveryRun:
    """Validate the project and create the run document (idempotent for a retried run). ``goal`` is
    this run's question; without one the project's goal (if any) is the run's."""
    try:
        existing = store.get_run(run_id)
        if existing.id == run_id:
            store.update_run(run_id, status=RunStatus.running, error=None)
            return store.get_run(run_id)
    except UserError:
        pass
    check_project(project)  # the strict checks of `project apply`, on what is stored (secrets, kinds, cron)
    if project.state != ProjectState.ready:
        raise ConfigError(
            f"project {project.id} is in state {project.state.value}; discovery needs 'ready' "
            "(accept the generated pack with `assay pack accept`)"
        )
    pack = pack_for_project(project)
    valid = [a.id for a in pack.areas]
    if areas:
        unknown = [a for a in areas if a not in valid]
        if unknown:
            raise ConfigError(f"unknown area {unknown[0]!r} for pack {pack.name} (valid: {', '.join(valid)})")
    analyst, note = analyst_choice(project)
    log.info("run %s: %s", run_id[:8], note)
    run = DiscoveryRun(
        id=run_id,
        project_id=project.id,
        status=RunStatus.running,
        phase=Phase.init,
        analyst=analyst,
        analyst_note=note,
        max_steps=max_steps or project.max_steps,
        min_steps=project.min_steps if min_steps is None else min_steps,
        areas_requested=areas or None,
        areas=areas or valid,
        flow_run_id=flow_run_id,
        goal=(goal or "").strip() or project.goal,
    )
    store.create_run(run)
    return run


def prepare_rerun(store: Store, run_ref: str, areas: list[str]) -> DiscoveryRun:
    """Check that a run's areas can be analysed again from its stored exploration, and mark the run
    running. Areas the run did not analyse before are added to it."""
    run = check_rerun(store, run_ref, areas)
    store.update_run(run.id, status=RunStatus.running, error=None, phase=Phase.analysis,
                     areas=list(run.areas) + [a for a in areas if a not in run.areas], finished_at=None)
    return store.get_run(run.id)


def check_rerun(store: Store, run_ref: str, areas: list[str]) -> DiscoveryRun:
    if not areas:
        raise ConfigError("name at least one area to re-run (--area AREA)")
    run = store.get_run(store.resolve_run_id(run_ref))
    if run.status == RunStatus.running and reap_gone_runs(store):  # its process may be gone: then it crashed
        run = store.get_run(run.id)
    if run.status == RunStatus.running:
        raise ConfigError(f"run {run.id[:8]} is still running; re-run its areas once it has ended")
    if not run.exploration_finished or store.step_count(run.id) == 0:
        raise ConfigError(f"run {run.id[:8]} has no finished exploration to re-use; start a new discovery")
    project = store.get_project(run.project_id)
    check_project(project)
    valid = [a.id for a in pack_for_project(project).areas]
    unknown = [a for a in areas if a not in valid]
    if unknown:
        raise ConfigError(f"unknown area {unknown[0]!r} for run {run.id[:8]} (valid: {', '.join(valid)})")
    return run


def rerun_areas_inline(run_ref: str, areas: list[str], *, settings: Settings | None = None) -> DiscoveryResult:
    """Re-run some areas of a finished run without Prefect (tests, benchmarks)."""
    settings = settings or load_settings()
    run = prepare_rerun(open_store(settings), run_ref, areas)
    s = RunSession(run.id, settings)
    try:
        for a in dict.fromkeys(areas):
            area_phase(s, a)
        recommendations_phase(s)
        return save_phase(s)
    finally:
        s.step_index.drop()
        s.close()


def init_phase(s: RunSession) -> None:
    """Fail fast: warehouse reachable, pack valid, LLM key accepted by its constructor."""
    s.store.update_run(s.run_id, phase=Phase.init)
    s.warehouse.health_check()
    _ = s.pack
    if s.run.analyst == "llm":
        _ = s.llm


# ---------------------------------------------------------------------------- phase 2: context


def context_phase(s: RunSession) -> str:
    s.store.update_run(s.run_id, phase=Phase.context)
    previous = s.store.recent_results(s.project.id, limit=5, exclude=s.run_id)
    text = render_previous_context(previous, s.store.feedback(s.project.id))
    s.store.update_run(s.run_id, previous_context=text)
    return text


# ---------------------------------------------------------------------------- phase 3: schema


def discover_schema(store: Store, project: Project, warehouse, refresh: bool = False) -> list[TableInfo]:
    """The warehouse's tables (cached by configuration), with the project's descriptions added."""
    key = schema_cache_key(project.warehouse)
    tables = None if refresh else store.get_schema(key)
    if tables is None:
        tables = warehouse.list_tables()
        check_schema_found(project.warehouse, tables)  # a missing schema or an empty warehouse: one line
        store.put_schema(key, project.id, tables)
    tables, unknown = apply_descriptions(tables, project.warehouse.descriptions)
    if unknown:
        log.warning("project %s: warehouse.descriptions name no table (or an ambiguous one): %s",
                    project.id, ", ".join(sorted(unknown)))
    return tables


def schema_phase(s: RunSession, refresh: bool = False) -> dict:
    s.store.update_run(s.run_id, phase=Phase.schema)
    key = schema_cache_key(s.project.warehouse)
    tables = discover_schema(s.store, s.project, s.warehouse, refresh=refresh)
    s.__dict__["tables"] = tables
    joins = join_hints(tables)
    catalog = render_catalog(tables)
    s.schema_index.sync_in_background(tables, joins)  # search_tables waits for it; exploration does not
    s.store.update_run(s.run_id, schema_key=key, catalog=catalog.text)
    s.store.update_run(s.run_id, **{"telemetry.catalog_tokens": catalog.tokens,
                                    "telemetry.catalog_tables_left_out": catalog.tables_left_out})
    s.refresh()
    return {"tables": len(tables), "catalog_tokens": catalog.tokens, "left_out": catalog.tables_left_out}


# ---------------------------------------------------------------------------- phase 4: exploration


def exploration_prompt(s: RunSession) -> str:
    return render_exploration_prompt(s.project, s.pack, s.run.catalog, s.run.max_steps,
                                     previous_context=s.run.previous_context, goal=s.run.goal or "",
                                     tools=bool(getattr(s.llm, "supports_tools", False)))


def render_exploration_prompt(project: Project, pack: DomainPack, catalog: str, max_steps: int, *,
                              previous_context: str = "", goal: str = "", tools: bool = True) -> str:
    from .explore.actions import actions_text

    cfg = project.warehouse
    tenant = ""
    if cfg.tenant_filter:
        tenant = (f"Every table that has the column {cfg.tenant_filter.column} must be filtered with "
                  f"{cfg.tenant_filter.column} = {cfg.tenant_filter.value!r} in the SELECT that reads it.")
    base = render(pack.base_context, f"{pack.name} base_context", profile=_profile_text(project),
                  previous_context=previous_context, goal=goal_text(goal))
    body = render(pack.exploration, f"{pack.name} exploration", schema_info=catalog,
                  tenant_rule=tenant, max_steps=max_steps, limits=limits.template_vars(), goal=goal_text(goal),
                  actions=actions_text(tools))
    if "actions" not in pack.exploration:  # a pack written before {{ actions }}: the protocol is still described
        body = f"{body.strip()}\n\n## Actions (this is how to answer)\n{actions_text(tools)}"
    return "\n\n".join(p.strip() for p in (body, goal_section(goal), base) if p.strip())


class _RunWriter:
    """The sink of exploration steps.

    The step itself is written synchronously, once (crash-safe resume depends on it). The run
    document's progress and telemetry are coalesced by a background writer, and steps are
    indexed in batches off the loop's critical path.
    """

    def __init__(self, s: RunSession, on_step: Callable[[ExplorationStep], None] | None):
        self.s = s
        self.on_step = on_step
        self.pending: dict[str, int] = {}
        self._lock = threading.Lock()
        self.indexer = BatchWorker(self._index, name=f"step-index-{s.run_id[:8]}")
        self.progress = BatchWorker(self._progress, name=f"run-progress-{s.run_id[:8]}", max_batch=256)

    def bump(self, counters: dict[str, int]) -> None:
        with self._lock:
            for k, v in counters.items():
                if v:
                    self.pending[k] = self.pending.get(k, 0) + v

    def _index(self, steps: list[ExplorationStep]) -> None:
        self.bump({"analysis_step_index_upserts": self.s.step_index.upsert(steps)})

    def _progress(self, steps: list[int]) -> None:
        with self._lock:
            counters, self.pending = self.pending, {}
        self.s.store.record_step(self.s.run_id, max(steps), counters)

    def __call__(self, step: ExplorationStep) -> None:
        self.s.store.add_step(step)  # written once, immediately: crash-safe resume
        self.progress.put(step.step)
        if step.action.value == "query":  # every completed query, failed ones flagged (has_error)
            self.indexer.put(step)
        if self.on_step is not None:
            self.on_step(step)

    def close(self) -> None:
        self.indexer.close()
        self.progress.close()
        with self._lock:
            counters, self.pending = self.pending, {}
        if counters:
            self.s.bump(counters)


def exploration_phase(s: RunSession, on_step: Callable[[ExplorationStep], None] | None = None,
                      should_stop: Callable[[], bool] | None = None) -> str:
    s.store.update_run(s.run_id, phase=Phase.exploration)
    prior = s.store.steps(s.run_id)
    if s.run.exploration_finished:
        return s.run.exploration_finished
    s.step_index.ensure(prior)
    if s.run.analyst == "statistical":
        from .stats.planner import explore_statistically

        writer = _RunWriter(s, on_step)
        try:
            finished = explore_statistically(s, prior, writer)
        finally:
            writer.close()
        summary = "statistical exploration"
    else:
        writer = _RunWriter(s, on_step)
        explorer = Explorer(
            llm=s.llm,
            executor=s.executor,
            provider=s.provider(),
            run_id=s.run_id,
            system_prompt=exploration_prompt(s),
            max_steps=s.run.max_steps,
            min_steps=s.run.min_steps,
            sink=writer,
            tables=s.tables,
            pii=s.project.warehouse.pii_columns,
            bump=writer.bump,
            should_stop=should_stop,
            max_tokens=s.project.llm.max_tokens,
        )
        try:
            out = explorer.run(prior)
        finally:
            writer.close()
        finished, summary = out.finished, out.summary
    if finished != "cancelled":
        s.store.update_run(s.run_id, exploration_finished=finished, exploration_summary=summary)
    return finished


# ---------------------------------------------------------------------------- phases 5+6: one area


def _explorer_summary(run: DiscoveryRun) -> str:
    """The explorer's closing summary (its ``done``), when it wrote one."""
    return run.exploration_summary if run.exploration_finished == "done" else ""


def area_phase(s: RunSession, area_id: str, *, raise_transient: bool = False) -> AreaLog:
    """Pick, analyse and verify one area. An area failure is logged, never raised, except a transient one
    (LLM overloaded or throttled, a dropped connection) when ``raise_transient``: it is logged and then
    raised, so the orchestrator's retry policy tries the area again."""
    area = next((a for a in s.pack.areas if a.id == area_id), None)
    if area is None:
        raise ConfigError(f"unknown area {area_id!r} (valid: {', '.join(a.id for a in s.pack.areas)})")
    s.store.update_run(s.run_id, phase=Phase.analysis)
    log = AreaLog(area=area.id, ok=False)
    insights: list[Insight] = []
    transient: TransientError | None = None
    try:
        steps = s.store.steps(s.run_id)
        s.step_index.ensure(steps)
        by_no = {st.step: st for st in steps}

        def counted_search(text: str, top_k: int):
            s.bump({"analysis_step_index_search_calls": 1})
            return s.step_index.search(text, top_k)

        pick = pick_steps(area, steps, counted_search, budget_tokens=s.project.llm.analysis_budget_tokens,
                          goal=s.run.goal or "", cited=cited_steps(_explorer_summary(s.run)),
                          areas_in_run=len(s.run.areas))
        log.selected_steps, log.dropped_steps = pick.log()
        log.query_results_chars = pick.chars
        s.bump({"analysis_steps_dropped": len(pick.dropped)})
        picked = sorted((by_no[p.step] for p in pick.picked), key=lambda st: st.step)  # the explorer's order
        if s.run.analyst == "statistical":
            from .stats.analyst import analyze_area_statistically

            insights = analyze_area_statistically(s, area, picked)
        elif not picked:  # nothing to read: the model is not asked to invent
            log.note = "no explored step carries evidence for this area: no insights"
        else:
            answer = analyze_area(s.llm, s.pack, area, picked, previous_context=s.run.previous_context,
                                  profile=_profile_text(s.project), dataset=", ".join(s.project.warehouse.schemas)
                                  or s.project.warehouse.kind, goal=s.run.goal or "",
                                  explorer_summary=_explorer_summary(s.run), max_tokens=s.project.llm.max_tokens)
            insights = answer.insights
            log.usage = answer.usage
            s.bump({"llm_calls": len(answer.dialog), "input_tokens": answer.usage.input_tokens,
                    "output_tokens": answer.usage.output_tokens, "cached_tokens": answer.usage.cached_tokens})
        s.store.update_run(s.run_id, phase=Phase.validation)
        verifier = Verifier(llm=s.llm, executor=s.executor, steps=by_no, catalog=s.run.catalog,
                            provider=s.provider())
        for ins in insights:
            ins.validation = verifier.verify(ins)
        log.usage = log.usage.add(verifier.usage)
        s.bump({"llm_calls": verifier.calls, "input_tokens": verifier.usage.input_tokens,
                "output_tokens": verifier.usage.output_tokens, "cached_tokens": verifier.usage.cached_tokens})
        log.ok = True
        log.insights = len(insights)
        if not insights and not log.note:
            log.note = f"the {len(picked)} picked steps carry no evidence for this area: no insights"
    except TransientError as exc:
        log.error = f"{exc} (transient)"
        transient = exc
    except (UserError, InvalidLLMOutput) as exc:
        log.error = str(exc)
    except Exception as exc:  # an area's failure must not sink the run: it is recorded
        log.error = f"{type(exc).__name__}: {exc}"
    s.store.save_area(s.run_id, area.id, insights, log)
    if transient is not None and raise_transient:
        raise transient
    return log


# ---------------------------------------------------------------------------- phase 7: recommendations


def collect_insights(s: RunSession) -> tuple[list[Insight], list[AreaLog]]:
    """Every area's insights, each finding once (merged across areas)."""
    from .findings import merge_findings

    results = s.store.area_results(s.run_id)
    insights: list[Insight] = []
    logs: list[AreaLog] = []
    for area in s.run.areas:
        if area in results:
            ins, log = results[area]
            insights += ins
            logs.append(log)
    if len(insights) > 1:
        insights = merge_findings(insights, s.pack.areas, s.embedder.embed)
    return insights, logs


def recommendations_phase(s: RunSession) -> dict:
    s.store.update_run(s.run_id, phase=Phase.recommendations)
    insights, _ = collect_insights(s)
    previous = s.store.recent_results(s.project.id, limit=5, exclude=s.run_id)
    if previous and insights:
        marked = mark_duplicates(insights, previous, s.embedder.embed)
        if marked:
            by_area: dict[str, list[Insight]] = {}
            for i in insights:
                by_area.setdefault(i.area, []).append(i)
            stored = s.store.area_results(s.run_id)
            for area, ins in by_area.items():
                s.store.save_area(s.run_id, area, ins, stored[area][1])
    if s.llm is None:
        doc = {"recommendations": [], "log": [], "note": STATISTICAL_NOTE}
    else:
        out = recommend(s.llm, s.pack, insights, previous_context=s.run.previous_context,
                        profile=_profile_text(s.project), goal=s.run.goal or "")
        s.bump({"llm_calls": 1, "input_tokens": out.usage.input_tokens,
                "output_tokens": out.usage.output_tokens, "cached_tokens": out.usage.cached_tokens})
        doc = {"recommendations": [r.model_dump(mode="json") for r in out.recommendations], "log": out.log,
               "note": None}
    s.store.put_recommendations(s.run_id, doc)
    return {"recommendations": len(doc["recommendations"])}


# ---------------------------------------------------------------------------- phase 8: save


def save_phase(s: RunSession, *, error: str | None = None) -> DiscoveryResult:
    from .models import Recommendation

    s.store.update_run(s.run_id, phase=Phase.save)
    run = s.refresh()
    insights, logs = collect_insights(s)
    rec_doc = s.store.get_recommendations(s.run_id)
    recs = [Recommendation.model_validate(r) for r in rec_doc.get("recommendations", [])]
    ok_areas = [log for log in logs if log.ok]
    errors = [f"{log.area}: {log.error}" for log in logs if not log.ok]
    if error:
        errors.insert(0, error)
    if error or not logs or not ok_areas:
        run_type = RunType.failed
    elif len(ok_areas) < len(run.areas):
        run_type = RunType.partial
    else:
        run_type = RunType.full
    steps = s.store.steps(s.run_id)
    statuses: dict[str, int] = {}
    for i in insights:
        k = i.validation.status.value if i.validation else "unverified"
        statuses[k] = statuses.get(k, 0) + 1
    result = DiscoveryResult(
        run_id=s.run_id,
        project_id=run.project_id,
        domain=s.project.pack,
        category=s.project.category,
        analyst=run.analyst,
        run_type=run_type,
        areas_requested=run.areas_requested,
        total_steps=len([st for st in steps if st.action.value != "done"]),
        duration_s=round((utcnow() - _aware(run.started_at)).total_seconds(), 1),
        insights=insights,
        recommendations=recs,
        recommendation_note=rec_doc.get("note"),
        summary={
            "insights": len(insights),
            "recommendations": len(recs),
            "validation": statuses,
            "areas_ok": [log.area for log in ok_areas],
            "areas_failed": [log.area for log in logs if not log.ok],
            "exploration": run.exploration_finished,
        },
        analysis_log=logs,
        validation_log=[{"insight": i.id, **(i.validation.model_dump(mode="json") if i.validation else {})}
                        for i in insights],
        recommendation_log=rec_doc.get("log", []),
        errors=errors,
    )
    s.store.save_result(result)
    status = RunStatus.failed if run_type == RunType.failed else RunStatus.completed
    s.store.update_run(s.run_id, status=status, phase=Phase.done, finished_at=utcnow(), run_type=run_type,
                       error=errors[0] if run_type == RunType.failed and errors else None)
    return result


def _aware(ts: dt.datetime) -> dt.datetime:
    """Stored timestamps come back naive (UTC); make them comparable with utcnow()."""
    return ts if ts.tzinfo else ts.replace(tzinfo=dt.timezone.utc)


def fail_run(store: Store, run_id: str, error: str) -> None:
    """Record why a run failed (every failure leaves a run document that says why)."""
    try:
        store.update_run(run_id, status=RunStatus.failed, error=error, finished_at=utcnow())
    except Exception:
        pass


def run_discovery_inline(project_id: str, run_id: str, *, max_steps: int | None = None,
                         min_steps: int | None = None, areas: list[str] | None = None,
                         settings: Settings | None = None, goal: str | None = None) -> DiscoveryResult:
    """The whole run in this thread, without Prefect (tests, benchmarks, debugging)."""
    settings = settings or load_settings()
    store = open_store(settings)
    project = store.get_project(project_id)
    create_run(store, project, run_id=run_id, max_steps=max_steps, min_steps=min_steps, areas=areas, goal=goal)
    s = RunSession(run_id, settings)
    try:
        init_phase(s)
        context_phase(s)
        schema_phase(s)
        exploration_phase(s)
        for a in s.run.areas:
            area_phase(s, a)
        recommendations_phase(s)
        return save_phase(s)
    except UserError as exc:
        fail_run(store, run_id, str(exc))
        raise
    finally:
        s.step_index.drop()
        s.close()


def new_run_id() -> str:
    import uuid

    return uuid.uuid4().hex




def sweep_run_collections(store: Store, index, *, now: float | None = None,
                          max_age_s: float = limits.ORPHAN_COLLECTION_AGE_S) -> list[str]:
    """Drop step collections of runs that are no longer active and ended more than a day ago
    (or whose run is unknown: a process killed before its hooks ran)."""
    from .analysis.step_index import sweep_orphans
    from .vectors.index import run_collection

    now = now if now is not None else time.time()
    reap_gone_runs(store)
    crashed = {run_collection(r) for r in store.crashed_run_ids()}  # no hook dropped theirs: nothing to wait for
    ended = {run_collection(run_id): _aware(dt.datetime.fromisoformat(fin)).timestamp()
             for run_id, fin in store.finished_runs().items()}
    active = store.active_run_ids()
    recent = {name for name, t in ended.items() if now - t < max_age_s and name not in crashed}
    # a run that ended recently keeps its collection for a day (a rerun may still want it)
    known = None if getattr(index, "local", True) else set(ended)
    return sweep_orphans(index, active, {n: ended[n] for n in recent}, now, max_age_s, known=known)


def prune_runs(store: Store, *, keep_days: float, keep_last: int = 3, now: dt.datetime | None = None) -> list[str]:
    """Delete runs that ended more than ``keep_days`` ago, with everything they wrote; the last
    ``keep_last`` finished runs of every project are kept whatever their age (their insights are the
    memory the next discovery compares with)."""
    now = now or utcnow()
    cutoff = now - dt.timedelta(days=keep_days)
    by_project: dict[str, list[tuple[dt.datetime, str]]] = {}
    for run_id, fin in store.finished_runs().items():
        run = store.get_run(run_id)
        by_project.setdefault(run.project_id, []).append((_aware(dt.datetime.fromisoformat(fin)), run_id))
    deleted = []
    for runs in by_project.values():
        runs.sort(reverse=True)
        for ended, run_id in runs[keep_last:]:
            if ended < cutoff:
                store.delete_run(run_id)
                deleted.append(run_id)
    return deleted


def estimate_project(project_id: str, *, max_steps: int | None = None, settings: Settings | None = None):
    """The cost estimate of a discovery of the project, from its real prompts and catalog."""
    from .analysis.analyze import build_area_prompt
    from .estimate import calibrate, estimate
    from .recommend import recommendation_prompt
    from .stats.planner import Planner
    from .stats.portable import portable

    settings = settings or load_settings()
    store = open_store(settings)
    project = store.get_project(project_id)
    pack = pack_for_project(project)
    note = None
    try:
        analyst = resolve_analyst(project)
    except MissingKey:
        analyst = "statistical"
    if analyst == "statistical" and project.analyst != "statistical" and project.llm.provider not in ("", "none",
                                                                                                    "auto"):
        # what the configured model would cost, before the key is set
        analyst = "llm"
        note = "no API key is set yet: a run started now would use the statistical analyst"
    steps = max_steps or project.max_steps
    previous = render_previous_context(store.recent_results(project.id, limit=5), store.feedback(project.id))
    profile, goal = _profile_text(project), project.goal or ""
    wh = open_warehouse(project.warehouse)
    try:
        tables = discover_schema(store, project, wh)
        catalog = render_catalog(tables).text
        planner = Planner(tables, wh.quote, [k for a in pack.areas for k in a.keywords])
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
                   warehouse=warehouse)
    if note:
        est.notes.append(note)
    return est


def generate_pack(project_id: str, notes: str, out_dir: Path | None = None, *,
                  settings: Settings | None = None) -> Path:
    """Draft a domain pack for the project with its LLM; the folder is written for review. A project
    that is not ready moves pack_generation -> pack_generation_done (back to pending on failure)."""
    from .packgen import draft_pack, write_pack

    settings = settings or load_settings()
    store = open_store(settings)
    project = store.get_project(project_id)
    if not llm_configured(project.llm):
        raise MissingKey(f"project {project.id}: pack generation needs an LLM (set ANTHROPIC_API_KEY, or "
                         "llm.provider/llm.api_key_env in the project)")
    moving = project.state != ProjectState.ready
    if moving:
        store.save_project(project.model_copy(update={"state": ProjectState.pack_generation}))
    try:
        wh = open_warehouse(project.warehouse)
        try:
            tables = discover_schema(store, project, wh)
        finally:
            wh.close()
        draft, _ = draft_pack(build_llm(project.llm), render_catalog(tables).text, notes)
        folder = write_pack(draft, out_dir or settings.home / "packs" / f"{project.id}-draft")
    except BaseException:
        if moving:
            store.save_project(project.model_copy(update={"state": ProjectState.pack_generation_pending}))
        raise
    if moving:
        store.save_project(project.model_copy(update={"state": ProjectState.pack_generation_done}))
    return folder


def accept_pack(project_id: str, folder: Path, *, settings: Settings | None = None) -> Project:
    """Make a (reviewed) pack folder the project's pack; the project becomes ready."""
    from .packs import load_pack_dir, validate_pack_dir

    store = open_store(settings or load_settings())
    project = store.get_project(project_id)
    folder = Path(folder).expanduser().resolve()
    validate_pack_dir(folder)
    pack = load_pack_dir(folder)
    accepted = project.model_copy(update={"pack": pack.name, "pack_dir": str(folder), "category": None,
                                          "state": ProjectState.ready})
    pack_for_project(accepted)  # the project's own overrides and disabled areas must fit the new pack
    store.save_project(accepted)
    return accepted
