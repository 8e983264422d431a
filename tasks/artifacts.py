"""Prefect artifacts: run report, step digests, exploration progress."""

from __future__ import annotations

import json
import re

from prefect.artifacts import acreate_markdown_artifact, create_table_artifact

from assay.models import DiscoveryResult, ExplorationStep
from assay.report.markdown import render_markdown


def artifact_key(*parts: str) -> str:
    """Prefect's rule: lowercase letters, digits and dashes only."""
    raw = "-".join(p for p in parts if p)
    key = re.sub(r"[^a-z0-9-]+", "-", raw.lower()).strip("-")
    return re.sub(r"-{2,}", "-", key)[:120] or "assay"


def _json_safe(rows: list[dict]) -> list[dict]:
    # through JSON: timestamps and numpy scalars would break the artifact API
    return json.loads(json.dumps(rows, default=str))


def step_digest_artifact(step: ExplorationStep) -> None:
    if step.digest is None:
        return
    rows = [
        {k: v for k, v in c.model_dump(mode="json", exclude_none=True).items() if k != "top"}
        | ({"top": ", ".join(f"{t['value']} ({t['count']})" for t in c.model_dump(mode='json')["top"])}
           if c.top else {})
        for c in step.digest.columns
    ]
    create_table_artifact(  # from the exploration worker thread
        _sync=True,
        key=artifact_key("step", step.run_id[:12], str(step.step)),
        table=_json_safe(rows),
        description=f"Step {step.step}: {step.purpose or step.query[:120]} ({step.row_count} rows)",
    )


async def report_artifact(result: DiscoveryResult) -> None:
    await acreate_markdown_artifact(
        key=artifact_key("discovery", result.project_id, result.run_id[:12]),
        markdown=render_markdown(result),
        description=f"Discovery {result.run_id[:8]} of {result.project_id} ({result.run_type.value})",
    )
