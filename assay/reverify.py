"""Re-verify a run's insights on demand, against today's warehouse (`assay verify RUN [INSIGHT...]`).

Each claim is re-derived by the query that verified it at discovery (the verifier's own, written blind);
a claim that had none (its verification failed) is re-derived blind again when the project has an LLM.
The insight's verdict is updated in the stored result, and every verification is kept in its
``verdict_history`` (the discovery's first, then each re-run), so a reader sees when a finding stopped
holding.
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import NotFound
from .models import Claim, Insight, ValidationStatus, VerdictRecord
from .store import Store


@dataclass
class Reverified:
    insight: str
    title: str
    before: str
    now: str
    reasoning: str
    refutation: str | None = None

    @property
    def changed(self) -> bool:
        return self.before != self.now


def _claims_record(claims: list[Claim]) -> list[dict]:
    return [{"metric": c.metric.value, "measure": c.measure, "segment": c.segment, "value": c.value,
             "baseline_value": c.baseline_value, "verified_value": c.verified_value,
             "verified_baseline_value": c.verified_baseline_value,
             "verdict": c.verdict.value if c.verdict else None, "refutation": c.refutation} for c in claims]


def _discovery_record(ins: Insight, at) -> VerdictRecord:
    v = ins.validation
    return VerdictRecord(at=at, source="discovery", status=v.status if v else ValidationStatus.not_verifiable,
                         claims=_claims_record(ins.claims), note=(v.reasoning if v else "")[:500])


def _fresh(ins: Insight) -> Insight:
    """The insight as a verifier should see it again: each claim keeps its definition, values and the query
    that verified it; the verdicts and verified values go."""
    claims = []
    for c in ins.claims:
        claims.append(c.model_copy(update={
            "verification_sql": c.verification_sql or (c.query or None),
            "verdict": None, "verified_value": None, "verified_baseline_value": None, "reasoning": "",
        }))
    return ins.model_copy(update={"claims": claims, "validation": None})


def reverify(store: Store, run_ref: str, insight_ids: list[str] | None = None, *, llm=None,
             use_project_llm: bool = True) -> list[Reverified]:
    """Re-verify ``insight_ids`` (default: every insight that is not a repeat) of a finished run."""
    from .explore.executor import Executor
    from .schema.discovery import discover_schema
    from .validate.refute import Refuter, refute_insight, weigh_severity
    from .validate.verify import Verifier
    from .warehouse import build_guard, open_warehouse

    rid = store.resolve_run_id(run_ref)
    if not store.has_result(rid):
        raise NotFound(f"run {rid[:8]} has no saved result to re-verify (`assay runs` shows its status)")
    result = store.get_result(rid)
    known = {i.id: i for i in result.insights}
    if insight_ids:
        unknown = [i for i in insight_ids if i not in known]
        if unknown:
            raise NotFound(f"run {rid[:8]} has no insight {', '.join(unknown)} (ids: {', '.join(known)})")
        chosen = [known[i] for i in insight_ids]
    else:
        chosen = [i for i in result.insights if not i.duplicate_of]
    project = store.get_project(result.project_id)
    if llm is None and use_project_llm:
        from .llm import build_llm
        from .llm.resolve import resolve_llm

        if resolve_llm(project.llm).cfg is not None:
            llm = build_llm(project.llm)
    run = store.get_run(rid)
    steps = {s.step: s for s in store.steps(rid)}
    wh = open_warehouse(project.warehouse)
    out: list[Reverified] = []
    try:
        tables = discover_schema(store, project, wh)
        # under a tenant filter the predicate is written into every statement: most are the product's own (the
        # statistical analyst's, adoption's), which carry none and were refused (session 24's review)
        cfg = project.warehouse
        if cfg.tenant_filter is not None:
            cfg = cfg.model_copy(update={"inject_tenant_filter": True})
        verifier = Verifier(llm=llm, executor=Executor(wh, build_guard(wh, cfg, tables), project.warehouse, llm),
                            steps=steps, catalog=run.catalog)
        refuter = Refuter(verifier.executor, tables)
        for ins in chosen:
            if not ins.verdict_history:
                ins.verdict_history.append(_discovery_record(ins, result.created_at))
            before = ins.validation.status.value if ins.validation else "unverified"
            again = _fresh(ins)
            validation = verifier.verify(again)
            validation.refutation = refute_insight(refuter, again)
            ins.claims, ins.validation = again.claims, validation
            weigh_severity(ins)  # as a discovery weighs it (a cap once set stays: the evidence was undermined once)
            ins.verdict_history.append(VerdictRecord(source="reverify", status=validation.status,
                                                     claims=_claims_record(again.claims),
                                                     note=validation.reasoning[:500]))
            out.append(Reverified(ins.id, ins.name, before, validation.status.value, validation.reasoning,
                                  validation.refutation))
    finally:
        wh.close()
    store.save_result(result)
    return out
