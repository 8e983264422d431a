"""The single source of truth of the ``{{ query_results }}`` block.

``estimate_rendered_size`` calls the renderer, so the estimate equals the
rendered size for any input, by construction.
"""

from __future__ import annotations

import json

from ..explore.numbering import label
from ..models import ExplorationStep


def step_entry(step: ExplorationStep) -> dict:
    # the number the model saw the step under in the exploration (explore/numbering.py): what it cites
    entry = {"step": label(step), "purpose": step.purpose, "sql": step.query, "row_count": step.row_count}
    if step.digest is not None:
        entry["digest"] = step.digest.model_dump(mode="json", exclude_none=True)
    return entry


def render_query_results(steps: list[ExplorationStep]) -> str:
    return json.dumps([step_entry(s) for s in steps], ensure_ascii=False, separators=(",", ":"),
                      allow_nan=False)


def estimate_rendered_size(steps: list[ExplorationStep]) -> int:
    return len(render_query_results(steps))
