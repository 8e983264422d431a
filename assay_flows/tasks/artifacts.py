"""Prefect artifacts: run report, step digests, exploration progress."""

from __future__ import annotations

import re

from prefect.artifacts import acreate_markdown_artifact

from assay.models import DiscoveryResult, ExplorationStep
from assay.report.markdown import render_markdown


def artifact_key(*parts: str) -> str:
    """Prefect's rule: lowercase letters, digits and dashes only."""
    raw = "-".join(p for p in parts if p)
    key = re.sub(r"[^a-z0-9-]+", "-", raw.lower()).strip("-")
    return re.sub(r"-{2,}", "-", key)[:120] or "assay"


def _cell(v) -> str:
    text = "" if v is None else str(v)
    return text.replace("|", "\\|").replace("\n", " ")[:80]


def render_exploration(run_id: str, steps: list[ExplorationStep]) -> str:
    """Every step of a run in one Markdown document: purpose, SQL, and the digest's column summary."""
    out = [f"# Exploration of run {run_id[:8]}", "", f"{len(steps)} steps.", ""]
    for st in steps:
        head = f"## Step {st.step}: {(st.purpose or st.query[:100]).strip()}"
        out += [head, ""]
        if st.error:
            out += [f"Error: {_cell(st.error)}", ""]
        else:
            out += [f"{st.row_count:,} rows", ""]
        if st.query:
            out += ["```sql", st.query.strip(), "```", ""]
        if st.digest is not None and st.digest.columns:
            out += ["| column | kind | nulls | distinct | min | max | top |", "|---|---|---|---|---|---|---|"]
            for c in st.digest.columns:
                d = c.model_dump(mode="json")
                top = ", ".join(f"{t['value']} ({t['count']})" for t in d.get("top") or [])
                lo = d.get("min") if d.get("min") is not None else d.get("min_time")
                hi = d.get("max") if d.get("max") is not None else d.get("max_time")
                out.append("| " + " | ".join(_cell(x) for x in (
                    d.get("name"), d.get("kind"), d.get("null_count"), d.get("distinct"), lo, hi, top)) + " |")
            out.append("")
    return "\n".join(out)


async def exploration_artifact(project_id: str, run_id: str, steps: list[ExplorationStep]) -> None:
    """One artifact for the whole exploration (not one per step: a run keeps a handful of artifacts). The key
    is stable per project, so Prefect versions it and its latest is always the last run's."""
    if not steps:
        return
    await acreate_markdown_artifact(
        key=artifact_key("exploration", project_id),
        markdown=render_exploration(run_id, steps),
        description=f"Exploration of run {run_id[:8]} of {project_id}: {len(steps)} steps with their SQL and digests",
    )


async def report_artifact(result: DiscoveryResult) -> None:
    """The discovery report, keyed by project (versioned by Prefect: the latest is the last run's)."""
    await acreate_markdown_artifact(
        key=artifact_key("report", result.project_id),
        markdown=render_markdown(result),
        description=f"Discovery {result.run_id[:8]} of {result.project_id} ({result.run_type.value})",
    )


async def publish_report(run_id: str) -> None:
    """The run's report as an artifact of the flow run itself (not of a task, where it sat among step
    tables). A failure to write it is logged, never raised: the discovery is already saved."""
    import logging

    from assay.settings import load_settings
    from assay.store import open_store

    from .common import in_thread

    try:
        store = open_store(load_settings())
        result = await in_thread(store.get_result, run_id)
        await report_artifact(result)
    except Exception as exc:
        logging.getLogger("assay").warning("could not write the report artifact of run %s: %s", run_id, exc)
