"""InsightBench ROUGE-1 per task group, from the per-task CSV of `assay eval insightbench`.

    assay eval insightbench DIR --tasks 1-30 --csv out.csv
    .venv/bin/python bench/insightbench_groups.py DIR out.csv

Groups come from each task's metadata.category (incidents, users, assets, finance, goals; a task
with two categories counts in its first). Prints one `rouge1_<group>: value` line per group.
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

GROUPS = (("incident", "incidents"), ("user", "users"), ("asset", "assets"), ("financ", "finance"),
          ("goal", "goals"))


def group_of(category: str) -> str:
    c = category.lower()
    return next((g for key, g in GROUPS if c.startswith(key)), "other")


def main() -> None:
    root, path = Path(sys.argv[1]), Path(sys.argv[2])
    by: dict[str, list[float]] = {}
    for row in csv.DictReader(path.open()):
        flag = json.loads((root / "flags" / f"flag-{row['task']}.json").read_text())
        by.setdefault(group_of(flag["metadata"]["category"]), []).append(float(row["rouge1"]))
    for g, vals in sorted(by.items()):
        print(f"rouge1_{g}: {sum(vals) / len(vals):.3f}")
        print(f"tasks_{g}: {len(vals)}")


if __name__ == "__main__":
    main()
