"""The analysis step picker on real embeddings (the bundled MiniLM, qdrant local mode).

Twelve steps shaped like a real-model run on a warehouse of clinic visits (generic pack, one area):
most queries use ``count(*)``, one decisive step compares the mean wait per month and location. The
figures compare the picker with the seed's rule (substring keywords lifted to exactly the 0.55 floor,
0.30 minimum score), without and with a goal, and under a budget with room for half the steps.

    .venv/bin/python bench/picker_ranking.py
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pandas as pd  # noqa: E402

from assay.analysis.picker import area_query, pick_steps  # noqa: E402
from assay.analysis.render import estimate_rendered_size  # noqa: E402
from assay.analysis.step_index import StepIndex  # noqa: E402
from assay.digest import build_compact_result  # noqa: E402
from assay.models import ExplorationStep, StepAction  # noqa: E402
from assay.packs import load_pack  # noqa: E402
from assay.vectors import get_embedder  # noqa: E402
from assay.vectors.index import VectorIndex  # noqa: E402

STEPS = [
    ("visits per status", "SELECT status, count(*) AS n FROM visits GROUP BY 1"),
    ("visits per weekday", "SELECT dayname(visit_at) AS weekday, count(*) AS n FROM visits GROUP BY 1"),
    ("visits and mean wait per location", "SELECT location, count(*) AS n, avg(wait_min) AS wait FROM visits "
                                          "GROUP BY 1 ORDER BY 3 DESC"),
    ("visits per hour of day", "SELECT hour(visit_at) AS h, count(*) AS n FROM visits GROUP BY 1"),
    ("patients per age band", "SELECT age_band, count(DISTINCT patient_id) AS patients FROM visits GROUP BY 1"),
    ("no-show rate per location", "SELECT location, avg(CASE WHEN status = 'no_show' THEN 1 ELSE 0 END) AS rate "
                                  "FROM visits GROUP BY 1"),
    ("mean wait per month and location", "SELECT date_trunc('month', visit_at) AS month, location, "
                                         "avg(wait_min) AS wait FROM visits GROUP BY 1, 2 ORDER BY 1, 3 DESC"),
    ("visits per month", "SELECT date_trunc('month', visit_at) AS month, count(*) AS n FROM visits GROUP BY 1"),
    ("staff on shift per location", "SELECT location, count(*) AS staff FROM shifts GROUP BY 1"),
    ("null waits", "SELECT count(*) FILTER (WHERE wait_min IS NULL) AS missing, count(*) AS n FROM visits"),
    ("wait by visit type", "SELECT visit_type, avg(wait_min) AS wait, count(*) AS n FROM visits GROUP BY 1"),
    ("total visits per department", "SELECT department, count(*) AS total FROM visits GROUP BY 1"),
]
DECISIVE = 7
GOAL = "Which location makes patients wait longest, and is it so every month?"


def steps() -> list[ExplorationStep]:
    df = build_compact_result(pd.DataFrame({"k": list("abcdefghijkl") * 2, "v": range(24)}))
    return [ExplorationStep(run_id="bench", step=i, action=StepAction.query, purpose=p, query=q, row_count=24,
                            digest=df) for i, (p, q) in enumerate(STEPS, start=1)]


def seed_rule(area, sts, search, budget_tokens, floor=0.55, min_score=0.30):
    """The seed's picker: substring keyword -> exactly the floor; below the minimum score -> dropped."""
    hits = dict(search(area_query(area), len(sts)))
    scores = {}
    for s in sts:
        sc = hits.get(s.step, 0.0)
        kw = any(k in f"{s.query}\n{s.purpose}".lower() for k in area.keywords)
        if kw:
            scores[s.step] = max(sc, floor)
        elif sc >= min_score:
            scores[s.step] = sc
    order = sorted(scores, key=lambda n: (-scores[n], n))
    by = {s.step: s for s in sts}
    while order and estimate_rendered_size([by[n] for n in order]) > budget_tokens * 4:
        order.pop()
    return order, {n: scores[n] for n in order}


def main() -> None:
    area = load_pack("generic").areas[0]
    sts = steps()
    with tempfile.TemporaryDirectory() as tmp:
        from qdrant_client import QdrantClient

        idx = StepIndex(VectorIndex(QdrantClient(path=tmp), local=True), get_embedder(None), "bench")
        idx.upsert(sts)
        full = 10_000_000
        half = (estimate_rendered_size(sts[:6]) + 3) // 4
        order, scores = seed_rule(area, sts, idx.search, full)
        print(f"seed_rule_dropped_one_area: {len(sts) - len(order)}")
        print(f"seed_rule_distinct_kept_scores: {len(set(scores.values()))}")
        print(f"seed_rule_decisive_kept: {int(DECISIVE in order)}")
        p = pick_steps(area, sts, idx.search, full)
        print(f"picker_dropped_one_area: {len(p.dropped)}")
        print(f"picker_distinct_scores: {len({round(x.score, 4) for x in p.picked})}")
        for goal in ("", GOAL):
            tag = "goal" if goal else "no_goal"
            p = pick_steps(area, sts, idx.search, half, goal=goal)
            ranks = [x.step for x in p.picked] + [d.step for d in p.dropped]
            print(f"picker_half_budget_{tag}_decisive_rank: {ranks.index(DECISIVE) + 1}")
            print(f"picker_half_budget_{tag}_decisive_kept: {int(DECISIVE in {x.step for x in p.picked})}")
        order, _ = seed_rule(area, sts, idx.search, half)
        print(f"seed_rule_half_budget_decisive_kept: {int(DECISIVE in order)}")
        if "-v" in sys.argv:
            for row in pick_steps(area, sts, idx.search, half, goal=GOAL).log()[0]:
                print("#", row)


if __name__ == "__main__":
    main()
