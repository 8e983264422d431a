"""Which analyst a run uses (the LLM analyst, or the statistical one without an LLM), decided at run start."""

from __future__ import annotations

from ..errors import MissingKey
from ..models import Project

STATISTICAL_NOTE = (
    "No LLM is configured, so the statistical analyst ran (set ANTHROPIC_API_KEY or llm.provider to use an "
    "LLM analyst). Recommendations need an LLM and were not generated."
)


def resolve_analyst(project: Project) -> str:
    return analyst_choice(project)[0]


def analyst_choice(project: Project) -> tuple[str, str]:
    """(analyst, the run's first line: which analyst and model run, and why), decided now."""
    from ..llm.resolve import describe, resolve_llm

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


