"""The statistical scan's findings join an LLM run (issues #15/#16).

An LLM run starts with a statistical scan (``explore/leads.py``); its probe steps are stored with the run
(``Store.put_scan``). After the areas are analysed, every finding the statistical analyst would report from
those probes (``stats/analyst.py``: its detectors, ``worth_reporting``, goal ranking and off-goal cap, merged
segment outliers, per-area cap, each in the area ``assign_areas`` gives) that no LLM insight or context note
covers (``findings.uncovered_leads``' rules) becomes an insight of the run, marked ``origin: "statistical scan"``.

It is built and verified exactly as in a statistical run (``analyze_area_statistically``: claims with generated
SQL, count SQL, severity; the verifier without an LLM). The probe steps it cites are stored as steps of the run
of their own kind (``StepAction.scan``), numbered after the exploration's: they never count against the
exploration budget, are never offered to the areas' step picker (which reads queries only) and are never sent
to the model. Nothing here calls the LLM, so no request before the recommendations changes.

Idempotent and rebuilt from the store: a resumed or repeated call replaces the adopted insights it stored
before (the scan is never re-run; its candidates are cached like a statistical run's). Off
(``analysis.adopt_scan_findings: false``): nothing is adopted and the uncovered leads are only listed.
"""

from __future__ import annotations

import logging
import time

from ..models import ExplorationStep, Insight, StepAction

log = logging.getLogger("assay")

ORIGIN = "statistical scan"
LEAD_CHARS = 200  # a finding as a lead line ("headline: numbers"), as explore.leads.headlines renders one


class _ScanStore:
    """The run's store, whose steps are the scan's probes (numbered after the exploration's steps)."""

    def __init__(self, store, steps: list[ExplorationStep]):
        self._store = store
        self._steps = steps

    def steps(self, run_id: str) -> list[ExplorationStep]:
        return list(self._steps)

    def __getattr__(self, name):
        return getattr(self._store, name)


def scan_steps(s) -> list[ExplorationStep]:
    """The stored scan's probes, numbered after the run's own steps (deterministic: the exploration is over)."""
    probes = s.store.scan_steps(s.run_id) or []
    base = max((st.step for st in s.store.steps(s.run_id) if st.action != StepAction.scan), default=0)
    return [st.model_copy(update={"step": base + st.step, "run_id": s.run_id, "action": StepAction.query})
            for st in probes]


def lead_line(i: Insight) -> str:
    """A statistical insight as a lead line ("headline: numbers (segment)"), as ``findings.uncovered_leads`` reads
    one: its segment ("acquisition_channel=cross_promo") is stated, so that an LLM insight naming the segment's
    value covers it, as it covers a lead of the prompt (round 9, gaming: the model explained cross_promo's revenue
    jump by its 7 whales in its own insight, and the scan's change point of it was adopted beside it)."""
    from ..explore.leads import _one_line

    seg = f" ({i.segment})" if i.segment and "=" in i.segment else ""
    return f"{_one_line(i.name, LEAD_CHARS)}: {_one_line(i.description, LEAD_CHARS)}{seg}"


def _drop_adopted(s) -> None:
    """The run's areas without the insights an earlier adoption stored."""
    for area, (ins, area_log) in s.store.area_results(s.run_id).items():
        own = [i for i in ins if i.origin != ORIGIN]
        if len(own) != len(ins):
            s.store.save_area(s.run_id, area, own, area_log.model_copy(update={"insights": len(own)}))
            s.store.update_run(s.run_id, **{"telemetry.scan_adopted": 0})


def adopt_scan_findings(s) -> int:
    """Adopt the scan's uncovered findings into the run's areas (see the module doc); the number adopted."""
    if s.llm is None:
        return 0
    if not s.project.analysis.adopt_scan_findings:
        _drop_adopted(s)  # turned off since an earlier call adopted some (a resumed or rerun run)
        return 0
    from ..explore.leads import _CachingExecutor, _ScanSession
    from ..findings import uncovered_leads
    from ..stats.analyst import analyze_area_statistically
    from ..validate.refute import Refuter, refute_insight, weigh_severity
    from ..validate.verify import Verifier

    probes = scan_steps(s)
    if not probes:
        return 0
    t0 = time.perf_counter()
    results = s.store.area_results(s.run_id)
    areas = [a for a in s.pack.areas if a.id in s.run.areas and a.id in results and results[a.id][1].ok]
    if not areas:
        return 0
    own = {a: [i for i in ins if i.origin != ORIGIN] for a, (ins, _) in results.items()}
    reported = [i for ins in own.values() for i in ins]
    # the verifier re-runs the count SQL the analyst ran: once; all of it the product's SQL (a tenant predicate is
    # written in)
    ex = _CachingExecutor(s.generated_executor)
    ss = _ScanSession(s, ex, store=_ScanStore(s.store, probes))
    by_no = {st.step: st for st in probes}
    verifier = Verifier(llm=None, executor=ex, steps=by_no, catalog=s.run.catalog, provider=s.provider())
    refuter = Refuter(ex, s.tables)
    adopted: dict[str, list[Insight]] = {}
    for area in areas:
        found = analyze_area_statistically(ss, area, [])
        if not found:
            continue
        left = set(uncovered_leads([lead_line(i) for i in found], reported, s.embedder.embed,
                                    columns=s.column_names))
        mine = []
        for i in found:
            if lead_line(i) not in left:
                continue
            i.id = f"{area.id}-scan-{len(mine) + 1}"
            i.origin = ORIGIN
            i.validation = verifier.verify(i)
            i.validation.refutation = refute_insight(refuter, i)
            weigh_severity(i)
            mine.append(i)
        if mine:
            adopted[area.id] = mine
    cited = sorted({n for ins in adopted.values() for i in ins
                    for n in i.source_steps + [m for c in i.claims for m in c.source_steps]})
    for n in cited:  # the evidence they cite, as steps of the run of their own kind
        if n in by_no:
            s.store.add_step(by_no[n].model_copy(update={"action": StepAction.scan}))
    changed = set(adopted) | {a for a, (ins, _) in results.items() if len(own[a]) != len(ins)}
    for a in changed:
        ins, area_log = results[a]
        new = own[a] + adopted.get(a, [])
        s.store.save_area(s.run_id, a, new, area_log.model_copy(update={"insights": len(new)}))
    n = sum(len(v) for v in adopted.values())
    took = time.perf_counter() - t0
    s.store.update_run(s.run_id, **{"telemetry.scan_adopted": n, "telemetry.scan_adoption_queries": ex.queries,
                                    "telemetry.scan_adoption_ms": int(took * 1000)})
    log.info("scan findings: %d adopted as insights (%d queries, %.1f s)", n, ex.queries, took)
    return n
