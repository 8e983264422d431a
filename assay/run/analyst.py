"""Which analyst a run uses (the LLM analyst, or the statistical one without an LLM), decided at run start."""

from __future__ import annotations

from ..errors import MissingKey
from ..llm.resolve import HOW_TO_ADD_AN_LLM
from ..models import Project

NO_RECOMMENDATIONS = "Recommendations need an LLM and were not generated."


def statistical_note(project_chose: bool) -> str:
    """The note a statistical run's recommendations carry: why there are none, and what would change that."""
    if project_chose:
        return (f"The project sets analyst: statistical (analyst: auto uses an LLM when one is configured). "
                f"{NO_RECOMMENDATIONS}")
    return f"No LLM is configured, so the statistical analyst ran ({HOW_TO_ADD_AN_LLM}). {NO_RECOMMENDATIONS}"


STATISTICAL_NOTE = statistical_note(False)


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
            f"project {project.id}: analyst is 'llm' but no LLM is configured ({res.reason}; {HOW_TO_ADD_AN_LLM})"
        )
    if res.cfg is None and project.llm.provider not in ("auto", "none"):
        # a provider the project names whose key is gone: a scheduled run fell back to the statistical analyst
        # without a word (a new user, session 26); analyst: auto with provider: auto is the fallback
        raise MissingKey(f"project {project.id}: {res.reason} (set it, or llm.provider: auto to run the statistical "
                         "analyst when no LLM is configured)")
    analyst = "llm" if res.cfg is not None else "statistical"
    return analyst, describe(analyst, res)


