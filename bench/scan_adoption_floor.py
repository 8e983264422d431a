"""What adopting the statistical scan's findings (``analysis.adopt_scan_findings``, assay/run/adopt.py) gives an LLM
run on InsightBench when the model itself reports nothing: the floor an LLM run now has.

A scripted model explores one step (a row count) and reports no insight; each task runs as ``assay eval insightbench
--analyst llm --max-steps 10`` runs it (goal pack, the leads scan on), once with adoption on and once off, and is
scored by the InsightBench scorer (``assay.insightbench``). No real model, no network. Run:

    ASSAY_HOME=/tmp/floor HF_HUB_OFFLINE=1 .venv/bin/python bench/scan_adoption_floor.py DATA_DIR --tasks 2,7,12,17,22

Prints per task and mode ``task<N>_<on|off>_rouge1``, ``..._adopted``, ``..._adoption_queries``, and the means
``rouge1_on``, ``rouge1_off``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("root", type=Path)
    ap.add_argument("--tasks", default="2,7,12,17,22")
    args = ap.parse_args()

    import duckdb

    from assay import insightbench as IB
    from assay.llm import register_scripted
    from assay.llm.scripted import ScriptedLLM
    from assay.models import LLMConfig, Project, WarehouseConfig
    from assay.run.lifecycle import new_run_id, run_discovery_inline
    from assay.settings import load_settings
    from assay.store import open_store
    from assay.vectors import get_embedder

    table = {}

    def handler(req):
        if req.purpose == "explore":
            if req.meta["step"] == 1:
                return json.dumps({"purpose": "rows", "query": f"SELECT count(*) AS n FROM {table['name']}"})
            return '{"done": true, "summary": "counted the rows"}'
        if req.purpose.startswith("analyze:"):
            return '{"insights": []}'
        if req.purpose == "recommend":
            return '{"recommendations": []}'
        raise AssertionError(req.purpose)

    register_scripted("silent", lambda cfg: ScriptedLLM(handler))
    settings, embed = load_settings(), get_embedder().embed
    store = open_store(settings)
    for on in (True, False):
        mode, scores = ("on" if on else "off"), []
        for task in IB.load_tasks(args.root, [int(x) for x in args.tasks.split(",")]):
            db = IB.build_warehouse(task, settings.home / "insightbench" / f"flag-{task.id}.duckdb")
            con = duckdb.connect(str(db), read_only=True)
            table["name"] = ".".join(con.sql("SELECT table_schema, table_name FROM information_schema.tables "
                                             "LIMIT 1").fetchall()[0])
            con.close()
            pid = f"floor-{task.id}-{mode}"
            store.save_project(Project(id=pid, name=task.goal[:60], pack="goal", goal=task.goal, analyst="llm",
                                       max_steps=10, llm=LLMConfig(provider="scripted", model="silent"),
                                       warehouse=WarehouseConfig(kind="duckdb", settings={"path": str(db)}),
                                       analysis={"adopt_scan_findings": on}))
            result = run_discovery_inline(pid, new_run_id(), settings=settings)
            stated = IB.reported(result)
            rouge = IB.score_task(task.id, [IB.prediction_text(i) for i in stated], task.truth, embed).rouge1 \
                if stated else 0.0
            tel = store.get_run(result.run_id).telemetry
            scores.append(rouge)
            print(f"task{task.id}_{mode}_rouge1: {rouge:.3f}")
            print(f"task{task.id}_{mode}_adopted: {sum(1 for i in stated if i.origin)}")
            print(f"task{task.id}_{mode}_adoption_queries: {tel.scan_adoption_queries}")
            print(f"task{task.id}_{mode}_uncovered_leads: {len(result.uncovered_leads)}", flush=True)
        print(f"rouge1_{mode}: {sum(scores) / max(len(scores), 1):.3f}", flush=True)


if __name__ == "__main__":
    main()
