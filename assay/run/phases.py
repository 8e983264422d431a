"""The run's phases, in order: init, context, schema, exploration, one area (analysis and validation),
recommendations, save. Each takes a session (built from the run id) and rebuilds what it needs from the
store. Prefect tasks (``assay_flows/tasks/``) wrap these functions; the CLI and tests can call them directly.
"""

from __future__ import annotations

import logging
from typing import Callable

from ..analysis.analyze import analyze_area
from ..analysis.picker import cited_steps, pick_steps
from ..context import mark_duplicates, profile_text, render_previous_context
from ..errors import ConfigError, InvalidLLMOutput, TransientError, UserError
from ..explore.loop import Explorer
from ..explore.numbering import resolve
from ..explore.prompt import exploration_prompt, run_areas
from ..models import (
    AreaLog,
    DiscoveryResult,
    DiscoveryRun,
    ExplorationStep,
    Insight,
    Phase,
    RunStatus,
    RunType,
    StepAction,
    as_utc,
    utcnow,
)
from ..recommend import recommend
from ..schema.catalog import join_hints, render_catalog
from ..schema.discovery import discover_schema, schema_cache_key
from ..validate.refute import Refuter, refute_insight, weigh_severity
from ..validate.verify import Verifier
from .analyst import statistical_note
from .session import RunSession
from .writer import RunWriter

log = logging.getLogger("assay")


# ---------------------------------------------------------------------------- phase 1: init


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


def schema_phase(s: RunSession, refresh: bool = False) -> dict:
    s.store.update_run(s.run_id, phase=Phase.schema)
    key = schema_cache_key(s.project.warehouse)
    tables = discover_schema(s.store, s.project, s.warehouse, refresh=refresh)
    s.__dict__["tables"] = tables
    joins = join_hints(tables)
    catalog = render_catalog(tables)
    from ..schema.describe import run_notes  # the LLM's table descriptions, when the project has an LLM

    # search_tables waits for the index; exploration does not
    s.schema_index.sync_in_background(tables, joins, run_notes(s.store, s.project, lambda: s.llm))
    s.store.update_run(s.run_id, schema_key=key, catalog=catalog.text)
    s.store.update_run(s.run_id, **{"telemetry.catalog_tokens": catalog.tokens,
                                    "telemetry.catalog_tables_left_out": catalog.tables_left_out})
    s.refresh()
    return {"tables": len(tables), "catalog_tokens": catalog.tokens, "left_out": catalog.tables_left_out}


# ---------------------------------------------------------------------------- phase 4: exploration


def exploration_phase(s: RunSession, on_step: Callable[[ExplorationStep], None] | None = None) -> str:
    s.store.update_run(s.run_id, phase=Phase.exploration)
    prior = [st for st in s.store.steps(s.run_id) if st.action != StepAction.scan]  # the scan's are not the model's
    if s.run.exploration_finished:
        return s.run.exploration_finished
    # the steps already stored (a resumed run) are indexed by the writer's indexer thread, before its new ones
    if s.run.analyst == "statistical":
        from ..stats.planner import explore_statistically

        writer = RunWriter(s, on_step, prior)
        try:
            finished = explore_statistically(s, prior, writer)
        finally:
            writer.close()
        summary = "statistical exploration"
    else:
        from ..explore.leads import leads_section

        leads_section(s)  # scanned once per run, before the first request; the prompt reads it from the run
        writer = RunWriter(s, on_step, prior)
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
            max_tokens=s.project.llm.max_tokens,
            areas=run_areas(s),
        )
        try:
            out = explorer.run(prior)
        finally:
            writer.close()
        finished, summary = out.finished, out.summary
    s.store.update_run(s.run_id, exploration_finished=finished, exploration_summary=summary)
    s.refresh()  # the areas of an in-process run read the summary from this session's run
    return finished


# ---------------------------------------------------------------------------- phases 5+6: one area


def _explorer_summary(run: DiscoveryRun) -> str:
    """The explorer's closing summary (its ``done``), when it wrote one."""
    return run.exploration_summary if run.exploration_finished == "done" else ""


def area_phase(s: RunSession, area_id: str, *, raise_transient: bool = False, redo: bool = False) -> AreaLog:
    """Pick, analyse and verify one area. An area failure is logged, never raised, except a transient one
    (LLM overloaded or throttled, a dropped connection) when ``raise_transient``: it is logged and then
    raised, so the orchestrator's retry policy tries the area again.

    Resumable: an area this run already analysed successfully (a retried or duplicated area run, a worker
    that died after saving) is not analysed again; its stored log is returned. ``redo`` (a rerun) analyses
    it again; its insights replace the stored ones only if it succeeds (``Store.save_area``)."""
    area = next((a for a in s.pack.areas if a.id == area_id), None)
    if area is None:
        raise ConfigError(f"unknown area {area_id!r} (valid: {', '.join(a.id for a in s.pack.areas)})")
    if not redo:
        done = s.store.area_done(s.run_id, area.id)
        if done is not None:
            logging.getLogger("assay").info("area %s of run %s: already analysed, kept (%d insights)",
                                            area.id, s.run_id[:8], done.insights)
            return done
    s.store.update_run(s.run_id, phase=Phase.analysis)
    log = AreaLog(area=area.id, ok=False)
    insights: list[Insight] = []
    transient: TransientError | None = None
    try:
        steps = s.store.steps(s.run_id)
        # the scan's probes that back adopted findings (run/adopt.py) are steps of the run, not of its exploration:
        # never indexed for an area, never offered to its picker (an area rerun after adoption reads what the model
        # explored, as the first analysis did); the verifier still finds them by number
        explored = [st for st in steps if st.action != StepAction.scan]
        s.step_index.ensure(explored)
        by_no = {st.step: st for st in steps}

        def counted_search(text: str, top_k: int):
            s.bump({"analysis_step_index_search_calls": 1})
            return s.step_index.search(text, top_k)

        pick = pick_steps(area, explored, counted_search, budget_tokens=s.project.llm.analysis_budget_tokens,
                          goal=s.run.goal or "",
                          cited=set(resolve(cited_steps(_explorer_summary(s.run)), explored)),
                          areas_in_run=len(s.run.areas))
        log.selected_steps, log.dropped_steps = pick.log()
        log.query_results_chars = pick.chars
        s.bump({"analysis_steps_dropped": len(pick.dropped)})
        picked = sorted((by_no[p.step] for p in pick.picked), key=lambda st: st.step)  # the explorer's order
        if s.run.analyst == "statistical":
            from ..stats.analyst import analyze_area_statistically

            insights = analyze_area_statistically(s, area, picked)
        elif not picked:  # nothing to read: the model is not asked to invent
            log.note = "no explored step carries evidence for this area: no insights"
        else:
            answer = analyze_area(s.llm, s.pack, area, picked, previous_context=s.run.previous_context,
                                  profile=profile_text(s.project), dataset=", ".join(s.project.warehouse.schemas)
                                  or s.project.warehouse.kind, goal=s.run.goal or "",
                                  explorer_summary=_explorer_summary(s.run), max_tokens=s.project.llm.max_tokens,
                                  leads=s.run.leads or "")
            insights = answer.insights
            log.usage = answer.usage
            s.bump({"llm_calls": len(answer.dialog), "input_tokens": answer.usage.input_tokens,
                    "output_tokens": answer.usage.output_tokens, "cached_tokens": answer.usage.cached_tokens})
        s.store.update_run(s.run_id, phase=Phase.validation)
        verifier = Verifier(llm=s.llm, executor=s.executor, steps=by_no, catalog=s.run.catalog,
                            provider=s.provider())
        refuter = Refuter(s.executor, s.tables)
        for ins in insights:
            ins.validation = verifier.verify(ins)
            ins.validation.refutation = refute_insight(refuter, ins)
            weigh_severity(ins)
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


def collect_insights(s: RunSession, context: list[Insight] | None = None) -> tuple[list[Insight], list[AreaLog]]:
    """Every area's insights, each finding once (merged across areas); the ones that are context (a
    non-difference, a fact of the data's shape) are left out, into ``context`` when given."""
    from ..findings import merge_findings, split_context

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
    insights, notes = split_context(insights)
    if context is not None:
        context.extend(notes)
    return insights, logs


def _uncovered_leads(s: RunSession, reported: list[Insight]) -> list[str]:
    """The scan's leads that no insight or context note covers (an LLM run with leads only); never fails a run."""
    from ..explore.leads import headlines
    from ..findings import uncovered_leads

    leads = headlines(s.run.leads or "")
    if not leads or s.llm is None:
        return []
    try:
        return uncovered_leads(leads, reported, s.embedder.embed, columns=s.column_names)
    except Exception as exc:  # a listing for the reader: the run's result stands without it
        log.warning("leads: could not match the scan's leads to the insights (%s)", exc)
        return []


def _adopt_scan_findings(s: RunSession) -> None:
    """The scan's findings no LLM insight covers join the run (run/adopt.py); never fails a run."""
    from .adopt import adopt_scan_findings

    try:
        adopt_scan_findings(s)
    except Exception as exc:  # the LLM's analysis stands without them; the leads stay listed
        log.warning("scan findings: could not adopt them (%s: %s)", type(exc).__name__, str(exc)[:300])


def recommendations_phase(s: RunSession) -> dict:
    s.store.update_run(s.run_id, phase=Phase.recommendations)
    _adopt_scan_findings(s)  # after every area, before the recommendations read the insights
    notes: list[Insight] = []
    insights, _ = collect_insights(s, notes)
    previous = s.store.recent_results(s.project.id, limit=5, exclude=s.run_id)
    if previous and insights:
        marked = mark_duplicates(insights, previous, s.embedder.embed)
        if marked:
            by_area: dict[str, list[Insight]] = {}
            for i in insights + [n.model_copy(update={"context_reason": None}) for n in notes]:
                by_area.setdefault(i.area, []).append(i)
            stored = s.store.area_results(s.run_id)
            for area, ins in by_area.items():
                s.store.save_area(s.run_id, area, ins, stored[area][1])
    if s.llm is None:
        doc = {"recommendations": [], "log": [], "note": statistical_note(s.project.analyst == "statistical")}
    else:
        out = recommend(s.llm, s.pack, insights, previous_context=s.run.previous_context,
                        profile=profile_text(s.project), goal=s.run.goal or "", context_notes=notes)
        s.bump({"llm_calls": 1, "input_tokens": out.usage.input_tokens,
                "output_tokens": out.usage.output_tokens, "cached_tokens": out.usage.cached_tokens})
        doc = {"recommendations": [r.model_dump(mode="json") for r in out.recommendations], "log": out.log,
               "note": None}
    s.store.put_recommendations(s.run_id, doc)
    return {"recommendations": len(doc["recommendations"])}


# ---------------------------------------------------------------------------- phase 8: save


def save_phase(s: RunSession, *, error: str | None = None) -> DiscoveryResult:
    from ..models import Recommendation

    run = s.refresh()
    stopped = run.phase  # where a failed run stopped: the phase it keeps (nothing below reads the run's phase)
    s.store.update_run(s.run_id, phase=Phase.save)
    notes: list[Insight] = []
    insights, logs = collect_insights(s, notes)
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
        total_steps=len([st for st in steps if st.action.value not in ("done", "scan")]),
        duration_s=round(run.earlier_s + (utcnow() - as_utc(run.resumed_at or run.started_at)).total_seconds(), 1),
        insights=insights,
        context_notes=notes,
        uncovered_leads=_uncovered_leads(s, insights + notes),
        recommendations=recs,
        recommendation_note=rec_doc.get("note"),
        summary={
            "insights": len(insights),
            "context_notes": len(notes),
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
    failed = run_type == RunType.failed
    # a failed run keeps the phase it stopped in (`assay runs` said "done" beside "Failed" and a schema error):
    # the one its error came from, or the analysis when every area failed
    s.store.update_run(s.run_id, status=RunStatus.failed if failed else RunStatus.completed,
                       phase=(stopped if error else Phase.analysis) if failed else Phase.done,
                       finished_at=utcnow(), run_type=run_type,
                       error=(errors[0] if errors else None) if failed else
                       (f"{len(errors)} area(s) failed: {'; '.join(errors)}" if run_type == RunType.partial else None))
    return result
