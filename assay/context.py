"""Memory across runs: previous discoveries and feedback, and duplicate marking."""

from __future__ import annotations

from typing import Callable

import numpy as np

from .limits import DUPLICATE_COSINE
from .models import DiscoveryResult, Feedback, Insight

PREVIOUS_RUNS = 5


def render_previous_context(results: list[DiscoveryResult], feedback: list[Feedback]) -> str:
    if not results and not feedback:
        return ""
    lines: list[str] = []
    if results:
        lines.append("Previously found insights:")
        for r in results[:PREVIOUS_RUNS]:
            date = r.created_at.date().isoformat()
            for i in r.insights:
                if i.duplicate_of:
                    continue
                lines.append(f"- [{date}] {i.area}: {i.name} (severity {i.severity.value})")
    disliked = [f for f in feedback if f.rating == "dislike"]
    liked = [f for f in feedback if f.rating == "like"]
    if disliked:
        lines.append("\nAVOID similar conclusions (the team disliked these):")
        for f in disliked:
            c = f" (comment: {f.comment})" if f.comment else ""
            lines.append(f"- {f.area}: {f.insight_name or f.insight_id}{c}")
    if liked:
        lines.append("\nMONITOR for changes (the team found these valuable):")
        for f in liked:
            c = f" (comment: {f.comment})" if f.comment else ""
            lines.append(f"- {f.area}: {f.insight_name or f.insight_id}{c}")
    recs = [rec for r in results[:PREVIOUS_RUNS] for rec in r.recommendations]
    if recs:
        lines.append("\nPrevious recommendations (do not repeat unless the numbers changed):")
        for rec in recs:
            lines.append(f"- {rec.title}")
    return "\n".join(lines).strip()


def insight_text(i: Insight) -> str:
    return f"{i.name}. {i.description}"


def mark_duplicates(new: list[Insight], previous: list[DiscoveryResult],
                    embed: Callable[[list[str]], np.ndarray], threshold: float = DUPLICATE_COSINE) -> int:
    """Mark new insights that repeat an earlier one in the same area (cosine >= threshold)."""
    old_pairs = [(r.run_id, i) for r in previous for i in r.insights if not i.duplicate_of]
    old = [i for _, i in old_pairs]
    if not new or not old:
        return 0
    nv = embed([insight_text(i) for i in new])
    ov = embed([insight_text(i) for i in old])
    sims = nv @ ov.T  # embeddings are normalised
    marked = 0
    for a, ins in enumerate(new):
        best, best_j = -1.0, -1
        for j, o in enumerate(old):
            if o.area == ins.area and sims[a, j] > best:
                best, best_j = float(sims[a, j]), j
        if best_j >= 0 and best >= threshold:
            run_id, o = old_pairs[best_j]
            ins.duplicate_of = f"{run_id[:8]}/{o.id}"
            marked += 1
    return marked


def profile_text(project) -> str:
    """The project's profile (``key: value`` lines) as the prompts show it."""
    return "\n".join(f"- {k}: {v}" for k, v in project.profile.items()) if project.profile else ""
