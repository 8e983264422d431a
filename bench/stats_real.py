"""The statistical analyst on real public data: does it answer the goal?

For every dataset of ``bench/real_data_expectations.json`` (written before running), runs a
goal-driven discovery with the statistical analyst (no LLM) and prints per dataset:
facts found out of the expected ones, insights, insights off the goal's measure, whether the
first three insights are on the goal, and criticals. TPC-H is the negative control.

    .venv/bin/python bench/stats_real.py --data DIR [--only flights,tpch] [--show]

DIR holds ``flights.duckdb``, ``penguins.duckdb``, ``gapminder.duckdb``, ``seattle_weather.duckdb``
and ``tpch.duckdb`` (how to build them: bench/README.md). Data is never committed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path

FILES = {"flights": "flights.duckdb", "penguins": "penguins.duckdb", "gapminder": "gapminder.duckdb",
         "seattle": "seattle_weather.duckdb", "tpch": "tpch.duckdb"}


def matches(text: str, groups: list[list[str]] | list[str]) -> bool:
    t = re.sub(r"([a-z])([A-Z])", r"\1 \2", text).lower().replace("_", " ")
    alts = [("|".join(g) if isinstance(g, list) else g).split("|") for g in groups]
    return all(any(a.lower() in t for a in g) for g in alts)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True, type=Path)
    ap.add_argument("--only", default="")
    ap.add_argument("--show", action="store_true", help="print every insight")
    ap.add_argument("--max-steps", type=int, default=60)
    ap.add_argument("--goal", default=None, help="another goal for the datasets run ('' = no goal: generic pack)")
    args = ap.parse_args()
    os.environ.setdefault("ASSAY_HOME", tempfile.mkdtemp(prefix="assay-bench-real-"))
    import assay.stats.detectors  # noqa: F401  (scipy before a background thread imports torch)
    from assay.models import Project, WarehouseConfig
    from assay.run.lifecycle import new_run_id, run_discovery_inline
    from assay.settings import load_settings
    from assay.store import open_store

    spec = json.loads((Path(__file__).parent / "real_data_expectations.json").read_text())
    settings = load_settings()
    store = open_store(settings)
    only = [x for x in args.only.split(",") if x]
    tot_found = tot_facts = 0
    for name, file in FILES.items():
        if only and name not in only:
            continue
        db = args.data / file
        if not db.is_file():
            print(f"# {name}: {db} missing, skipped", file=sys.stderr)
            continue
        sp = spec[name]
        pid = f"bench-{name}"
        goal = sp["goal"] if args.goal is None else args.goal
        store.save_project(Project(id=pid, name=name, pack="goal" if goal else "generic", goal=goal or None,
                                   analyst="statistical",
                                   max_steps=args.max_steps,
                                   warehouse=WarehouseConfig(kind="duckdb", settings={"path": str(db)})))
        t0 = time.perf_counter()
        res = run_discovery_inline(pid, new_run_id(), settings=settings)
        secs = time.perf_counter() - t0
        texts = [f"{i.name}. {i.description}" for i in res.insights]
        on = [matches(t, [sp["measure"][0]]) for t in texts]
        found = [f for f, groups in sp["facts"].items() if any(matches(t, groups) for t in texts)]
        critical = sum(1 for i in res.insights if i.severity.value == "critical")
        if args.show:
            for i, t in zip(res.insights, texts):
                print(f"#   [{i.severity.value}] {t}", file=sys.stderr)
        print(f"{name}_insights: {len(texts)}")
        print(f"{name}_facts_found: {len(found)}/{len(sp['facts'])}")
        print(f"{name}_off_goal: {sum(1 for x in on if not x)}")
        print(f"{name}_first3_on_goal: {sum(on[:3])}")
        print(f"{name}_critical: {critical}")
        print(f"{name}_seconds: {secs:.1f}")
        print(f"# {name} missed: {sorted(set(sp['facts']) - set(found))}", file=sys.stderr)
        if not sp.get("negative_control"):
            tot_found += len(found)
            tot_facts += len(sp["facts"])
    if tot_facts:
        print(f"facts_found_share: {tot_found / tot_facts:.3f}")


if __name__ == "__main__":
    main()
