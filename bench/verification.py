"""Planted claims through the verifier (issue #16): blind re-derivation and grounding.

On both demo warehouses, claims are written as the analysis step writes them (metric, measure,
entity, segment and baseline in words and SQL, period, values, cited step) about the metric
definitions of ``bench/claims_corpus.py``: true ones, and wrong ones of every kind (wrong rate,
wrong direction, wrong period, wrong segment, wrong baseline, inflated count, right count with a
wrong rate, numbers that trace to no step). A wrong claim whose stated definition happens to hold
within the tolerances is not wrong, and is left out (counted in ``skipped_not_wrong``).

The verifier's LLM is scripted three ways: one writes the correct SQL for the claim's definition (it
sees only the definition, never the values); one a plausible wrong SQL that leaves a stated condition
out (period filter forgotten, baseline over every row, rows counted instead of distinct entities);
one a sloppy SQL that keeps every stated condition but computes another metric (the median for the
mean, every event as the denominator, the period on the numerator only).

Prints per LLM: wrong_confirmed, true_confirmed_share; for the correct one verdict_accuracy and
verdict_accuracy_<kind>, for the wrong ones not_confirmed_<kind> (wrong claims not confirmed, per kind); per
metric (fit, share_of_whole for a share of a stated whole, ...) claims, wrong_confirmed, true_confirmed_share;
then ungrounded_flagged_share, grounded_true_share, claims_total, verify_query_median_ms.
Usage: .venv/bin/python bench/verification.py [--scale 1]
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from claims_corpus import DEFINITIONS, Definition, build_sql, sloppy_sql, wrong_sql  # noqa: E402

from assay.demo import generate  # noqa: E402
from assay.digest import build_compact_result  # noqa: E402
from assay.explore.executor import Executor  # noqa: E402
from assay.llm.scripted import ScriptedLLM  # noqa: E402
from assay.models import Claim, ExplorationStep, Insight, StepAction, WarehouseConfig  # noqa: E402
from assay.validate.compare import judge  # noqa: E402
from assay.validate.verify import Verifier  # noqa: E402
from assay.warehouse.duckdb import DuckDBWarehouse  # noqa: E402
from assay.warehouse.guard import SQLGuard  # noqa: E402

MODES = ("correct_sql", "wrong_sql", "sloppy_sql")
EXPECT = {
    "true": {"confirmed"}, "true_pct": {"confirmed"}, "true_2sig": {"confirmed"},
    "wrong_rate": {"adjusted"}, "wrong_value_small": {"adjusted", "rejected"}, "wrong_direction": {"rejected"},
    "wrong_period": {"adjusted", "rejected"}, "wrong_segment": {"adjusted", "rejected"},
    "wrong_baseline": {"adjusted", "rejected"}, "inflated_count": {"adjusted"}, "inflated_count_2x": {"adjusted"},
    "right_count_wrong_rate": {"adjusted"}, "ungrounded": {"adjusted", "rejected"},
    "wrong_sign": {"rejected"}, "wrong_whole": {"adjusted", "rejected"},
}


def sig(x: float, n: int = 3) -> float:
    return float(f"{x:.{n}g}")


def values(wh, sql: str) -> tuple[float | None, float | None]:
    row = wh.query(sql, row_cap=10, timeout_s=120).table.to_pylist()[0]
    v = [None if x is None else float(x) for x in row.values()]
    return v[0], (v[1] if len(v) > 1 else None)


def claim_of(d: Definition, step: int, value: float, base: float | None, *, segment=None, baseline=None,
             period=None, whole=None) -> Claim:
    seg, bl, per = segment or d.segment, baseline or d.baseline, period if period is not None else d.period
    wh = whole or d.whole
    fit = {}
    if d.fit:
        stat, (yw, ys), (xw, xs) = d.fit
        fit = dict(statistic=stat, y=yw, y_sql=ys, x=xw, x_sql=xs)
    if d.summed:
        fit["sum_sql"] = d.summed
    return Claim(metric=d.metric, measure=d.measure, entity=d.entity, segment=seg[0], segment_sql=seg[1],
                 baseline=bl[0] if bl else "", baseline_sql=bl[1] if bl else "", period=per[0] if per else "",
                 period_sql=per[1] if per else "", whole=wh[0] if wh else "", whole_sql=wh[1] if wh else "",
                 value=value, baseline_value=base, source_steps=[step], **fit)


def bounded(d: Definition) -> bool:
    """Values between 0 and 1 (or -1 and 1): rates, shares, r and R²."""
    return d.metric in ("rate", "share") or bool(d.fit and d.fit[0] in ("r", "r2"))


def period_sql(d: Definition, words: str) -> str | None:
    for p in (d.period, d.alt_period):
        if p and p[0] == words:
            return p[1]
    return None


def truth_of(wh, d: Definition, c: Claim) -> tuple[float | None, float | None]:
    return values(wh, build_sql(d, c.segment_sql, c.baseline_sql or None, period_sql(d, c.period),
                                c.whole_sql or None))


def corpus(wh, defs: list[Definition]) -> tuple[list[tuple[str, Insight]], dict[int, ExplorationStep], int]:
    items: list[tuple[str, Insight]] = []
    steps: dict[int, ExplorationStep] = {}
    skipped = 0
    rates_wrong: list[Claim] = []
    counts_true: list[Claim] = []
    for k, d in enumerate(defs, start=1):
        sql = build_sql(d, d.segment[1], d.baseline[1] if d.baseline else None, d.period[1] if d.period else None,
                        d.whole[1] if d.whole else None)
        table = wh.query(sql, row_cap=10, timeout_s=120).table
        steps[k] = ExplorationStep(run_id="bench", step=k, action=StepAction.query, purpose=d.measure, query=sql,
                                   row_count=table.num_rows, digest=build_compact_result(table))
        sv, bv = values(wh, sql)
        is_count = d.metric == "count"
        exact = (lambda x: float(round(x))) if is_count else sig
        cands: list[tuple[str, Claim]] = [("true", claim_of(d, k, exact(sv), None if bv is None else exact(bv)))]
        if d.metric in ("rate", "share"):
            cands.append(("true_pct", claim_of(d, k, round(sv * 100, 1), round(bv * 100, 1) if bv is not None else None)))
        cands.append(("true_2sig", claim_of(d, k, sig(sv, 2), None if bv is None else sig(bv, 2))))
        if bv is not None:
            far = sv * 0.5 if sv < bv else min(sv * 1.5, (sv + 1) / 2 if bounded(d) else sv * 1.5)
            cands.append(("wrong_rate", claim_of(d, k, sig(far), sig(bv))))
            cands.append(("wrong_value_small", claim_of(d, k, sig(sv * (0.75 if sv < bv else 1.25)), sig(bv))))
            cands.append(("wrong_direction", claim_of(d, k, sig(bv), sig(sv))))
            if d.wrong_baseline:
                cands.append(("wrong_baseline", claim_of(d, k, sig(sv), sig(bv), baseline=d.wrong_baseline)))
        elif not is_count:
            cands.append(("wrong_rate", claim_of(d, k, sig(min(sv * 1.5, (sv + 1) / 2) if bounded(d)
                                                           else sv * 1.5), None)))
        else:
            cands.append(("inflated_count", claim_of(d, k, float(round(sv * 1.5)), None)))
            cands.append(("inflated_count_2x", claim_of(d, k, float(round(sv * 2)), None)))
            counts_true.append(claim_of(d, k, exact(sv), None))
        if d.alt_period:
            cands.append(("wrong_period", claim_of(d, k, exact(sv), None if bv is None else exact(bv), period=d.alt_period)))
        if d.alt_segment:
            cands.append(("wrong_segment", claim_of(d, k, exact(sv), None if bv is None else exact(bv),
                                                    segment=d.alt_segment)))
        if d.fit and d.fit[0] in ("slope", "r"):  # the relation the other way round
            cands.append(("wrong_sign", claim_of(d, k, -sig(sv), None if bv is None else -sig(bv))))
        if d.alt_whole:  # the share of another whole
            cands.append(("wrong_whole", claim_of(d, k, sig(sv), None, whole=d.alt_whole)))
        up = 1.37 if not bounded(d) or abs(sv) * 1.37 <= 1 else 0.63
        cands.append(("ungrounded", claim_of(d, k, exact(sv * up + (3 if is_count else 0)),
                                             None if bv is None else exact(bv * 0.71))))
        for kind, c in cands:
            if kind not in ("true", "true_pct", "true_2sig", "ungrounded"):
                status, _ = judge(c, *truth_of(wh, d, c))
                if status.value == "confirmed":  # what it states holds: not a wrong claim
                    skipped += 1
                    continue
            if kind == "wrong_rate" and c.baseline_value is not None:
                rates_wrong.append(c)
            items.append((kind, Insight(id=f"{kind}-{k}", area="bench", name=d.measure, description=d.measure,
                                        claims=[c], source_steps=[k])))
    for n, (cnt, rt) in enumerate(zip(counts_true, rates_wrong), start=1):
        items.append(("right_count_wrong_rate", Insight(id=f"combo-{n}", area="bench", name="count and rate",
                                                        description="count and rate", claims=[cnt, rt],
                                                        source_steps=sorted(set(cnt.source_steps + rt.source_steps)))))
    return items, steps, skipped


def scripted(defs: list[Definition], mode: str) -> ScriptedLLM:
    by_measure = {d.measure: d for d in defs}

    def handler(req):
        if req.purpose != "verify":
            return ""  # no fixing: a failed query is an error verdict
        text = req.messages[0].content
        lines = text.split("\n")  # a corrective round states why first: the definition follows its heading
        definition = json.loads(lines[lines.index("Metric to compute:") + 1])
        d = by_measure[definition["measure"]]
        seg, base = definition.get("segment_sql"), definition.get("baseline_sql")
        per, whole = definition.get("period_sql"), definition.get("whole_sql")
        if d.summed and definition["metric"] == "count":
            # a sum read as a count (before session 12 "sum" and "total" parsed as count): the verifier writes what it
            # is told, a count of the rows
            sql = d.build(seg, base, per, what="count(*)")
        elif mode == "correct_sql":
            sql = build_sql(d, seg, base, per, whole)
        elif mode == "wrong_sql":
            sql = wrong_sql(d, seg, base, per, whole)
        else:
            sql = sloppy_sql(d, seg, base, per, whole) or wrong_sql(d, seg, base, per, whole)
        return json.dumps({"query": sql, "purpose": definition["measure"]})
    return ScriptedLLM(handler)


def run(scale: float) -> dict[str, float]:
    figures: dict[str, float] = {}
    per_llm: dict[str, dict] = {m: {"kinds": defaultdict(lambda: [0, 0]), "wrong_confirmed": 0, "true": 0,
                                    "true_confirmed": 0, "total": 0, "correct": 0, "errors": 0,
                                    "condition": 0, "kinds_safe": defaultdict(lambda: [0, 0]),
                                    "metrics": defaultdict(lambda: [0, 0, 0, 0, 0])} for m in MODES}
    flags = {"ungrounded": [0, 0], "true": [0, 0]}
    times: list[float] = []
    total = skipped_all = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, defs in DEFINITIONS.items():
            db, _ = generate(name, Path(tmp), scale=scale)
            wh = DuckDBWarehouse(str(db))
            tables = wh.list_tables()
            items, steps, skipped = corpus(wh, defs)
            planted_kind = {d.measure: d.metric for d in defs}
            total += len(items)
            skipped_all += skipped
            for mode in MODES:
                llm = scripted(defs, mode)
                ex = Executor(wh, SQLGuard("duckdb", tables=tables, default_schema="main"),
                              WarehouseConfig(kind="duckdb", statement_timeout_s=60, row_cap=10), llm)
                v = Verifier(llm=llm, executor=ex, steps=steps, catalog="")
                stats = per_llm[mode]
                for kind, ins in items:
                    ins = ins.model_copy(deep=True)
                    t0 = time.perf_counter()
                    status = v.verify(ins).status.value
                    times.append((time.perf_counter() - t0) * 1000 / max(1, len(ins.claims)))
                    ok = status in EXPECT[kind]
                    stats["errors"] += status == "error"
                    stats["condition"] += any("does not apply" in c.reasoning for c in ins.claims)
                    stats["kinds"][kind][0] += ok
                    stats["kinds"][kind][1] += 1
                    if not kind.startswith("true"):
                        stats["kinds_safe"][kind][0] += status != "confirmed"
                        stats["kinds_safe"][kind][1] += 1
                    stats["total"] += 1
                    stats["correct"] += ok
                    # per metric (a fit, a share of a stated whole): [correct, n, wrong confirmed, true, true confirmed]
                    head = ins.claims[0]
                    planted = planted_kind.get(head.measure, head.metric.value)  # as planted, not as parsed
                    metric = planted + ("_of_whole" if head.whole_sql else "")
                    m = stats["metrics"][metric]
                    m[0] += ok
                    m[1] += 1
                    m[2] += (not kind.startswith("true")) and status == "confirmed"
                    m[3] += kind.startswith("true")
                    m[4] += kind.startswith("true") and status == "confirmed"
                    if kind.startswith("true"):
                        stats["true"] += 1
                        stats["true_confirmed"] += status == "confirmed"
                    elif status == "confirmed":
                        stats["wrong_confirmed"] += 1
                        print(f"# {mode} confirmed a wrong claim: {name}/{ins.id} {ins.claims[0].reasoning}",
                              file=sys.stderr)
                    if mode == "correct_sql":
                        if kind == "ungrounded":
                            flags["ungrounded"][0] += ins.ungrounded
                            if not ins.ungrounded:
                                print(f"# grounded by coincidence: {name}/{ins.id} "
                                      f"{ins.claims[0].value} {ins.claims[0].baseline_value}", file=sys.stderr)
                            flags["ungrounded"][1] += 1
                        elif kind.startswith("true"):
                            flags["true"][0] += not ins.ungrounded
                            flags["true"][1] += 1
                        if not ok:
                            print(f"# {mode} {name}/{ins.id}: expected {sorted(EXPECT[kind])}, got {status}: "
                                  f"{'; '.join(c.reasoning for c in ins.claims)}", file=sys.stderr)
            wh.close()
    figures["claims_total"] = total
    figures["claims_true"] = per_llm["correct_sql"]["true"]
    figures["claims_wrong"] = total - per_llm["correct_sql"]["true"]
    figures["skipped_not_wrong"] = skipped_all
    for mode, stats in per_llm.items():
        figures[f"{mode}_wrong_confirmed"] = stats["wrong_confirmed"]
        figures[f"{mode}_true_confirmed_share"] = stats["true_confirmed"] / max(1, stats["true"])
        for metric, (ok, n, wc, nt, tc) in sorted(stats["metrics"].items()):
            figures[f"{mode}_metric_{metric}_claims"] = n
            figures[f"{mode}_metric_{metric}_wrong_confirmed"] = wc
            figures[f"{mode}_metric_{metric}_true_confirmed_share"] = tc / max(1, nt)
            if mode == "correct_sql":
                figures[f"{mode}_metric_{metric}_verdict_accuracy"] = ok / max(1, n)
        if mode != "correct_sql":
            figures[f"{mode}_error_share"] = stats["errors"] / max(1, stats["total"])
            figures[f"{mode}_condition_check_share"] = stats["condition"] / max(1, stats["total"])
            # the SQL is wrong: the right outcome for a true claim is not `confirmed` by luck but any
            # verdict; for a wrong claim, anything but `confirmed`
            for kind, (ok, n) in sorted(stats["kinds_safe"].items()):
                figures[f"{mode}_not_confirmed_{kind}"] = ok / n
            continue
        figures[f"{mode}_verdict_accuracy"] = stats["correct"] / max(1, stats["total"])
        for kind, (ok, n) in sorted(stats["kinds"].items()):
            figures[f"{mode}_verdict_accuracy_{kind}"] = ok / n
            figures[f"{mode}_claims_{kind}"] = n
    figures["ungrounded_flagged_share"] = flags["ungrounded"][0] / max(1, flags["ungrounded"][1])
    figures["true_claims_grounded_share"] = flags["true"][0] / max(1, flags["true"][1])
    figures["verify_query_median_ms"] = statistics.median(times)
    return figures


def main() -> None:
    scale = float(sys.argv[sys.argv.index("--scale") + 1]) if "--scale" in sys.argv else 1.0
    for k, v in run(scale).items():
        print(f"{k}: {v:.3f}" if isinstance(v, float) and not float(v).is_integer() else f"{k}: {int(v)}")


if __name__ == "__main__":
    main()
