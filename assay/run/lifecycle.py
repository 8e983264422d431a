"""A run's lifecycle: create it (or pick up a retried one), prepare a rerun of some areas, record a
failure, and run it whole in this thread without Prefect (tests, benchmarks, debugging)."""

from __future__ import annotations

import logging
import uuid

from ..config import check_project
from ..errors import ConfigError, UserError
from ..liveness import reap_gone_runs
from ..models import DiscoveryResult, DiscoveryRun, Phase, Project, ProjectState, RunStatus, as_utc, utcnow
from ..packs import pack_for_project
from ..settings import Settings, load_settings
from ..store import Store, open_store
from .analyst import analyst_choice
from .phases import (
    area_phase,
    context_phase,
    exploration_phase,
    init_phase,
    recommendations_phase,
    save_phase,
    schema_phase,
)
from .session import RunSession

log = logging.getLogger("assay")


def new_run_id() -> str:
    return uuid.uuid4().hex


def step_bounds(project: Project, max_steps: int | None = None, min_steps: int | None = None) -> tuple[int, int]:
    """The run's (max_steps, min_steps): what was asked, else the project's. An explicit ``min_steps`` above the
    run's maximum is a ConfigError (it asks for something the run cannot do); the project's own minimum above a
    smaller maximum asked for this run is cut to it, as the exploration loop cuts it."""
    hi = max_steps or project.max_steps
    if min_steps is not None and min_steps > hi:
        raise ConfigError(f"--min-steps ({min_steps}) is more than the run's max steps ({hi})")
    lo = project.min_steps if min_steps is None else min_steps
    return hi, min(lo, hi)


def create_run(store: Store, project: Project, *, run_id: str, max_steps: int | None = None,
               min_steps: int | None = None, areas: list[str] | None = None,
               flow_run_id: str | None = None, goal: str | None = None) -> DiscoveryRun:
    """Validate the project and create the run document (idempotent for a retried run). ``goal`` is
    this run's question; without one the project's goal (if any) is the run's."""
    try:
        existing = store.get_run(run_id)
        if existing.id == run_id:
            resumed = resumed_fields(store, existing) if existing.finished_at is not None else {}
            store.update_run(run_id, status=RunStatus.running, error=None, **resumed)
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
    hi, lo = step_bounds(project, max_steps, min_steps)
    analyst, note = analyst_choice(project)
    log.info("run %s: %s", run_id[:8], note)
    run = DiscoveryRun(
        id=run_id,
        project_id=project.id,
        status=RunStatus.running,
        phase=Phase.init,
        analyst=analyst,
        analyst_note=note,
        max_steps=hi,
        min_steps=lo,
        areas_requested=areas or None,
        areas=areas or valid,
        flow_run_id=flow_run_id,
        goal=(goal or "").strip() or project.goal,
    )
    store.create_run(run)
    return run


def resumed_fields(store: Store, run: DiscoveryRun) -> dict:
    """What a run that ended and starts again records: when it resumed and how long its earlier attempts worked
    (its saved duration; else its last attempt's start to end), so that its duration is not the days between
    the first start and a rerun."""
    if store.has_result(run.id):
        earlier = store.get_result(run.id).duration_s
    elif run.finished_at is not None:
        earlier = run.earlier_s + (as_utc(run.finished_at) - as_utc(run.resumed_at or run.started_at)).total_seconds()
    else:
        earlier = run.earlier_s
    return {"resumed_at": utcnow(), "earlier_s": round(max(earlier, 0.0), 1)}


def prepare_rerun(store: Store, run_ref: str, areas: list[str]) -> DiscoveryRun:
    """Check that a run's areas can be analysed again from its stored exploration, and mark the run
    running. Areas the run did not analyse before are added to it."""
    run = check_rerun(store, run_ref, areas)
    store.update_run(run.id, status=RunStatus.running, error=None, phase=Phase.analysis,
                     areas=list(run.areas) + [a for a in areas if a not in run.areas], finished_at=None,
                     **resumed_fields(store, run))
    return store.get_run(run.id)


def check_rerun(store: Store, run_ref: str, areas: list[str]) -> DiscoveryRun:
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


def unfinished_areas(store: Store, run: DiscoveryRun) -> list[str]:
    """The run's areas with no analysis saved (failed, or never reached: a run cancelled or crashed after its
    exploration); what `assay rerun RUN` without ``--area`` analyses."""
    left = [a for a in run.areas if store.area_done(run.id, a) is None]
    if not left:
        raise ConfigError(f"every area of run {run.id[:8]} has its analysis; name the areas to analyse again "
                          f"(--area AREA: {', '.join(run.areas)})")
    return left


def rerun_areas_inline(run_ref: str, areas: list[str], *, settings: Settings | None = None) -> DiscoveryResult:
    """Re-run some areas of a finished run without Prefect (tests, benchmarks)."""
    settings = settings or load_settings()
    run = prepare_rerun(open_store(settings), run_ref, areas)
    s = RunSession(run.id, settings)
    try:
        for a in dict.fromkeys(areas):
            area_phase(s, a, redo=True)
        recommendations_phase(s)
        return save_phase(s)
    finally:
        s.step_index.drop()
        s.close()


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

