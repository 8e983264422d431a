"""One step numbering for the model: the numbers it cites are the steps it is told it used.

The store numbers every action of a run (queries, schema lookups, searches, refusals) in the order they ran: that
number (``ExplorationStep.step``) is the step's key. The model's budget counts only the actions that cost a step
(``Explorer._counted_steps``: schema actions, information_schema answers and a few refusals are free). Rounds 9-11's
models saw each result tagged with the stored number and were told "Steps used" by the budget's count, so every step
they cited ran one ahead of what they were told after a free schema lookup.

The model now sees one numbering: a step that costs one is tagged ``[step N]`` with N its place in the budget's count
(``ExplorationStep.shown``, set when the step is finished), so "Steps used: N" follows the last tag; a free action is
tagged without a number. Everything the model reads (the conversation, folded summaries, the analysis input, the
verifier's evidence) shows ``label``; everything it writes back (insights' and claims' source_steps, the explorer's
summary, an answer of ``assay ask``) is read through ``resolve``, back to stored numbers. A step stored before this
numbering (``shown`` None) keeps its stored number, which is what its model saw.
"""

from __future__ import annotations

import re
from typing import Iterable

from ..models import ExplorationStep, StepAction


def label(s: ExplorationStep) -> int | None:
    """The number the model sees for the step; None for a free action (shown without a number)."""
    if s.shown is None:
        return s.step
    return s.shown or None


def name(s: ExplorationStep) -> str:
    """What the model is told a result is: ``step N``, or the free action it was, with no number."""
    n = label(s)
    if n is not None:
        return f"step {n}"
    what = "information_schema query" if s.action == StepAction.query and not s.refused else (
        "refused query" if s.refused else s.action.value)
    return f"free {what}, no step number"


def tag(s: ExplorationStep) -> str:
    """A tool result's head (native tools): ``[step N]`` or ``[free lookup_schema, no step number]``."""
    return f"[{name(s)}]"


def labels(steps: Iterable[ExplorationStep]) -> dict[int, int]:
    """Stored number -> the number the model saw, for the steps it saw numbered."""
    return {s.step: n for s in steps if (n := label(s)) is not None}


def stored_by_label(steps: Iterable[ExplorationStep]) -> dict[int, int]:
    """The number the model saw -> the stored number, for the steps it saw numbered (the inverse of ``labels``)."""
    out: dict[int, int] = {}
    for s in steps:
        n = label(s)
        if n is not None:
            out.setdefault(n, s.step)
    return out


def map_steps(cited: Iterable, table: dict[int, int]) -> list[int]:
    """Cited step numbers through ``table`` (in the order cited, each once); a number the table lacks, or no number,
    is dropped."""
    out: list[int] = []
    for x in cited:
        try:
            v = table.get(int(x))
        except (TypeError, ValueError):
            continue
        if v is not None and v not in out:
            out.append(v)
    return out


def map_numbers(text: str, table: dict[int, int]) -> str:
    """Every number of a citation's text ("3, 7 and 9") through ``table``; a number the table lacks stays."""
    return re.sub(r"\d+", lambda d: str(table.get(int(d.group()), d.group())), text)


def resolve(cited: Iterable[int], steps: Iterable[ExplorationStep]) -> list[int]:
    """The stored steps a model's citations name (in the order cited, each once): a cited number is a label the model
    saw; a number no step was shown under is dropped."""
    return map_steps(cited, stored_by_label(steps))


# a citation as the model copies its tags or writes them in prose: "[step 3]", "[steps 3, 7]", "(step 13)", "(steps 3
# and 7)" (bracketed only: "funnel step 3" in prose is the data's own word, not a citation)
CITATION = re.compile(r"(?P<open>[\[(])(steps?)\s+(\d+(?:\s*(?:,|&|and)\s*\d+)*)(?P<close>[\])])", re.IGNORECASE)
_PAIRS = {"[": "]", "(": ")"}


def resolve_text(text: str, steps: Iterable[ExplorationStep]) -> str:
    """A text's bracketed citations ("[step 3]", "(step 3)") in stored numbers, so that a description the report
    shows beside its insight's source steps names the same steps; a number no step was shown under stays as written."""
    if not text or not CITATION.search(text):
        return text
    stored = stored_by_label(steps)

    def one(m: re.Match) -> str:
        if _PAIRS[m.group("open")] != m.group("close"):
            return m.group(0)
        return f"{m.group('open')}{m.group(2)} {map_numbers(m.group(3), stored)}{m.group('close')}"
    return CITATION.sub(one, text)


def strip_citations(text: str) -> str:
    """A text without its bracketed step citations, for a reader that sees no steps (the recommendations)."""
    if not text or not CITATION.search(text):
        return text
    stripped = CITATION.sub(lambda m: "" if _PAIRS[m.group("open")] == m.group("close") else m.group(0), text)
    return re.sub(r"\s+([.,;:)])", r"\1", stripped).replace("  ", " ")
