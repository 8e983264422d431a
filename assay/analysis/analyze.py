"""One area's analysis: picked steps in, parsed insights out."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass

from ..llm.base import LLM, LLMRequest, Message, SystemBlock
from ..llm.contract import ask_contract
from ..models import AnalysisAnswer, AnalysisArea, DomainPack, ExplorationStep, Insight, TokenUsage
from ..packs import render
from ..explore.numbering import labels, resolve, resolve_text
from ..validate.grounding import as_drafted
from .discipline import CLAIM_DISCIPLINE, explorer_summary_section, goal_section, goal_text, insights_contract
from .render import render_query_results

log = logging.getLogger("assay")


@dataclass
class AreaAnswer:
    insights: list[Insight]
    usage: TokenUsage
    dialog: list[dict]
    prompt_chars: int


def leads_section(leads: str) -> str:
    """The statistical scan's leads, as the analysis reads them and numbers them (L1, L2, ...): headlines and
    numbers, no SQL (``explore.leads``)."""
    from ..explore.leads import headlines

    items = headlines(leads or "")
    if not items:
        return ""
    return ("## Leads of the statistical scan (to check against the results above)\n"
            "Before exploring, a statistical scan flagged these candidates. Its probes are not steps: cite only the "
            "results above. A lead that a result above shows, and that belongs to this area, is a finding to report "
            "like any other, ranked by how material it is (unless another insight already reports it); a lead no "
            "result above shows is not reported. An insight that reports a lead's finding, in its own words and "
            "figures or as the explanation of it, lists the lead's label in its \"leads\" field "
            "(\"leads\": [\"L2\"]); list a lead only where the insight states that finding. The scan's findings "
            "that no insight of the run lists or states are added to the report as the scan's own insights.\n"
            + "\n".join(f"L{n}. {h}" for n, h in enumerate(items, start=1)))


_LABEL = re.compile(r"\s*(?:L|lead|#)?\s*(\d+)\b", re.I)


def resolve_leads(labels: list[str], leads: str) -> list[str]:
    """The headlines (whole) of the leads an insight lists ("L2", "2", "Lead 2", "L2: ..."); a label of no lead is
    dropped, and said in the log."""
    from ..explore.leads import lead_titles

    heads = lead_titles(leads)
    out, dropped = [], []
    for label in labels:
        m = _LABEL.match(str(label))
        if m and 1 <= int(m.group(1)) <= len(heads):
            out.append(heads[int(m.group(1)) - 1])
        else:
            dropped.append(str(label)[:40])
    if dropped:
        log.info("analysis: lead labels of no lead dropped: %s", ", ".join(dropped))
    return list(dict.fromkeys(out))


def build_area_prompt(pack: DomainPack, area: AnalysisArea, steps: list[ExplorationStep], *,
                      previous_context: str, profile: str, dataset: str, goal: str = "",
                      explorer_summary: str = "", leads: str = "") -> str:
    base = render(pack.base_context, f"{pack.name} base_context", profile=profile,
                  previous_context=previous_context, goal=goal_text(goal))
    body = render(area.prompt, f"{pack.name} analysis_{area.id}", area=area.model_dump(),
                  total_queries=len(steps), query_results=render_query_results(steps), dataset=dataset,
                  goal=goal_text(goal))
    parts = (base, goal_section(goal), body, explorer_summary_section(explorer_summary), leads_section(leads),
             CLAIM_DISCIPLINE, insights_contract(goal))
    return "\n\n".join(p.strip() for p in parts if p.strip())


def analyze_area(llm: LLM, pack: DomainPack, area: AnalysisArea, steps: list[ExplorationStep], *,
                 previous_context: str = "", profile: str = "", dataset: str = "", goal: str = "",
                 explorer_summary: str = "", max_tokens: int = 4096, leads: str = "") -> AreaAnswer:
    prompt = build_area_prompt(pack, area, steps, previous_context=previous_context, profile=profile,
                               dataset=dataset, goal=goal, explorer_summary=explorer_summary, leads=leads)
    req = LLMRequest(
        purpose=f"analyze:{area.id}",
        system=[SystemBlock(prompt)],
        messages=[Message("user", content=f"Report the {area.name} insights as JSON.")],
        max_tokens=max_tokens,
        meta={"area": area.id, "steps": [s.step for s in steps], "step_labels": labels(steps)},
    )
    answer, usage, dialog = ask_contract(llm, req, AnalysisAnswer, "insights")
    known = {s.step for s in steps}
    insights = []
    for i, d in enumerate(answer.insights, start=1):
        data = d.model_dump()
        # the model cites the numbers it was shown (explore/numbering.py): read back as the stored steps
        data["source_steps"] = resolve(d.source_steps, steps)
        data["description"] = resolve_text(data.get("description") or "", steps)  # "[step N]" as the report numbers it
        data["verification_sql"] = None  # the verifier writes its own grounded query: a model cannot grade itself
        claims = [dict(c, source_steps=resolve(c.get("source_steps") or [], steps)) for c in data.get("claims") or []]
        data["claims"] = as_drafted(claims, known)
        data["leads"] = resolve_leads(d.leads, leads)
        insights.append(Insight(id=f"{area.id}-{i}", area=area.id, **data))
    return AreaAnswer(insights, usage, dialog, len(prompt))
