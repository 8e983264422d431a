"""Compatibility names for code written before the split of this module (issue #23).

The run lives in ``assay.run`` (session, phases, writer, lifecycle, analyst), schema discovery in
``assay.schema``, the exploration prompt in ``assay.explore.prompt``, and the estimate, pack generation
and maintenance in ``assay.services``. Nothing in this tree imports this module: import from those
homes. It stays only while branches written against the old module are merged.
"""

from __future__ import annotations

from .context import profile_text as _profile_text  # noqa: F401
from .explore.prompt import exploration_prompt, render_exploration_prompt
from .models import as_utc as _aware  # noqa: F401
from .run.analyst import STATISTICAL_NOTE, analyst_choice, resolve_analyst
from .run.lifecycle import (
    check_rerun,
    create_run,
    fail_run,
    new_run_id,
    prepare_rerun,
    rerun_areas_inline,
    run_discovery_inline,
)
from .run.phases import (
    area_phase,
    collect_insights,
    context_phase,
    exploration_phase,
    init_phase,
    recommendations_phase,
    save_phase,
    schema_phase,
)
from .run.session import RunSession
from .run.writer import RunWriter as _RunWriter  # noqa: F401
from .schema.discovery import discover_schema
from .schema.index import project_schema_index
from .services.estimate import estimate_project
from .services.maintenance import prune_runs, sweep_run_collections
from .services.packs import accept_pack, generate_pack

__all__ = [
    "STATISTICAL_NOTE", "RunSession", "accept_pack", "analyst_choice", "area_phase", "check_rerun",
    "collect_insights", "context_phase", "create_run", "discover_schema", "estimate_project", "exploration_phase",
    "exploration_prompt", "fail_run", "generate_pack", "init_phase", "new_run_id", "prepare_rerun",
    "project_schema_index", "prune_runs", "recommendations_phase", "render_exploration_prompt",
    "rerun_areas_inline", "resolve_analyst", "run_discovery_inline", "save_phase", "schema_phase",
    "sweep_run_collections",
]
