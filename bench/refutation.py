"""The refuter (issue #24): counter-evidence for confirmed comparisons.

Part 1, synthetic warehouses (bench/refutation_data.py): comparisons that are true in total but confounded
(a mix shift where the difference vanishes within each level of another column; a reversal inside the
levels; an effect confined to one half of the period), and clean ones (the effect holds in every level and
period). Each claim is confirmed, then refuted. Goal: >= 90% of the confounded flagged, <= 10% of the clean
given a caveat.

Part 2, the true claims of the planted-claims corpus (bench/claims_corpus.py, both demo warehouses),
confirmed by the correct-SQL verifier of bench/verification.py, then refuted: the share that gets a caveat
(each caveat is printed to stderr for a reader to judge).

Prints: flagged_share_<kind>, confounded_flagged_share, clean_caveat_share, corpus_true_confirmed,
corpus_true_caveat_share, refute_queries_per_claim, refute_ms_per_claim.
Part 3, the statistical analyst's claims (generated probes): the synthetic comparisons of part 1 stated as
the statistical analyst states them (a breakdown probe and the claim its code generates over it:
stats_* figures), and the analyst's own comparisons in a statistical discovery of both demo warehouses
(how many the refuter tested, and each one's outcome, printed to stderr).

Usage: .venv/bin/python bench/refutation.py [--per-kind 15] [--seeds 3] [--demo-scale 1] [--parts llm,stats,corpus,demo]
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from refutation_data import KINDS, build, stats_form  # noqa: E402

from assay.explore.executor import Executor  # noqa: E402
from assay.models import WarehouseConfig  # noqa: E402
from assay.validate.refute import Refuter  # noqa: E402
from assay.warehouse import build_guard, open_warehouse  # noqa: E402


def synthetic(per_kind: int, seeds: int, form: str = "llm") -> dict[str, float]:
    """``form``: "llm", the claims as an analyst writes them (bench/refutation_data.py); "stats", the same
    comparisons as the statistical analyst states them (a breakdown probe and its generated claim)."""
    flagged, total = Counter(), Counter()
    queries = 0
    ms = []
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(seeds):
            path = Path(tmp) / f"r{seed}.duckdb"
            cases = build(path, per_kind=per_kind, seed=100 + seed)
            claims = {c.name: c.claim if form == "llm" else stats_form(path, c) for c in cases}
            cfg = WarehouseConfig(kind="duckdb", settings={"path": str(path)})
            wh = open_warehouse(cfg)
            tables = wh.list_tables()
            ref = Refuter(Executor(wh, build_guard(wh, cfg, tables), cfg), tables)
            for c in cases:
                claim = claims[c.name]
                if claim is None:
                    continue
                t0 = time.perf_counter()
                r = ref.refute(claim)
                ms.append((time.perf_counter() - t0) * 1000)
                total[c.kind] += 1
                flagged[c.kind] += r.caveat
                if (c.kind == "clean") == r.caveat:
                    print(f"# {form} {c.kind} {c.name} (seed {seed}): {r.outcome}: {r.text}", file=sys.stderr)
            queries += ref.queries
            wh.close()
    out = {f"flagged_share_{k}": flagged[k] / total[k] for k in KINDS}
    confounded = [k for k in KINDS if k != "clean"]
    out["confounded_flagged_share"] = sum(flagged[k] for k in confounded) / sum(total[k] for k in confounded)
    out["clean_caveat_share"] = flagged["clean"] / total["clean"]
    out["synthetic_claims"] = sum(total.values())
    out["refute_queries_per_claim"] = queries / sum(total.values())
    out["refute_ms_per_claim"] = sorted(ms)[len(ms) // 2]
    return out


def corpus_true_claims() -> dict[str, float]:
    from claims_corpus import DEFINITIONS
    from verification import corpus, scripted

    from assay.demo import generate
    from assay.validate.verify import Verifier
    from assay.warehouse.duckdb import DuckDBWarehouse
    from assay.warehouse.guard import SQLGuard

    confirmed = caveats = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, defs in DEFINITIONS.items():
            db, _ = generate(name, Path(tmp), scale=1.0)
            wh = DuckDBWarehouse(str(db))
            tables = wh.list_tables()
            items, steps, _ = corpus(wh, defs)
            llm = scripted(defs, "correct_sql")
            cfg = WarehouseConfig(kind="duckdb", statement_timeout_s=60, row_cap=10)
            ex = Executor(wh, SQLGuard("duckdb", tables=tables, default_schema="main"), cfg, llm)
            v = Verifier(llm=llm, executor=ex, steps=steps, catalog="")
            ref = Refuter(Executor(wh, SQLGuard("duckdb", tables=tables, default_schema="main"), cfg), tables)
            for kind, ins in items:
                if not kind.startswith("true"):
                    continue
                ins = ins.model_copy(deep=True)
                v.verify(ins)
                for c in ins.claims:
                    if c.verdict is None or c.verdict.value != "confirmed" or c.baseline_value is None:
                        continue
                    r = ref.refute(c)
                    if r.outcome == "skipped":
                        continue
                    confirmed += 1
                    caveats += r.caveat
                    if r.caveat:
                        print(f"# corpus {name}/{ins.id} {c.measure} ({c.segment} vs {c.baseline}): {r.text}",
                              file=sys.stderr)
            wh.close()
    return {"corpus_true_comparisons_refuted": confirmed,
            "corpus_true_caveat_share": caveats / max(1, confirmed)}


def statistical_demo(scale: float) -> dict[str, float]:
    """The statistical analyst's own comparisons on both demo warehouses, refuted in its runs: how many were
    tested, and each caveat (printed to stderr for a reader to judge)."""
    import os

    from assay.demo import generate
    from assay.models import LLMConfig, Project, WarehouseConfig

    out: Counter = Counter()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["ASSAY_HOME"] = str(Path(tmp) / "home")
        from assay.run.lifecycle import new_run_id, run_discovery_inline
        from assay.settings import load_settings
        from assay.store import open_store

        settings = load_settings()
        store = open_store(settings)
        for name in ("ecommerce", "gaming"):
            db, truth = generate(name, Path(tmp) / "demo", scale=scale)
            import json

            t = json.loads(truth.read_text())
            p = Project(id=f"refute-{name}", pack=t["pack"], category=t["category"], analyst="statistical",
                        max_steps=60, llm=LLMConfig(provider="none"),
                        warehouse=WarehouseConfig(kind="duckdb", settings={"path": str(db)}))
            store.save_project(p)
            result = run_discovery_inline(p.id, new_run_id(), settings=settings)
            for ins in result.insights:
                for c in ins.claims:
                    if c.metric.value not in ("rate", "share", "average", "change") or c.baseline_value is None:
                        continue
                    out["comparisons"] += 1
                    print(f"# stats demo {name}/{ins.id} {c.metric.value} {c.measure} ({c.segment}): "
                          f"{c.refutation or 'not refuted (skipped)'}", file=sys.stderr)
                    if not c.refutation:
                        continue
                    out["refuted"] += 1
                    out["caveats"] += not c.refutation.startswith("survives")
    return {"stats_demo_comparisons": out["comparisons"], "stats_demo_refuted": out["refuted"],
            "stats_demo_caveats": out["caveats"]}


def main() -> None:
    per_kind = int(sys.argv[sys.argv.index("--per-kind") + 1]) if "--per-kind" in sys.argv else 15
    seeds = int(sys.argv[sys.argv.index("--seeds") + 1]) if "--seeds" in sys.argv else 3
    scale = float(sys.argv[sys.argv.index("--demo-scale") + 1]) if "--demo-scale" in sys.argv else 1.0
    parts = (sys.argv[sys.argv.index("--parts") + 1] if "--parts" in sys.argv else "llm,stats,corpus,demo").split(",")
    figures = {}
    if "llm" in parts:
        figures.update(synthetic(per_kind, seeds))
    if "stats" in parts:
        figures.update({f"stats_{k}": v for k, v in synthetic(per_kind, seeds, form="stats").items()})
    if "corpus" in parts:
        figures.update(corpus_true_claims())
    if "demo" in parts:
        figures.update(statistical_demo(scale))
    for k, v in figures.items():
        print(f"{k}: {v:.3f}" if isinstance(v, float) else f"{k}: {v}")


if __name__ == "__main__":
    main()
