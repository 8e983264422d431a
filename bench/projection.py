"""Result projection over an adversarial corpus (issue: exploration agent).

Generates >= 1,000 tool results (huge lists, deep nesting, long strings, non-ASCII, NaN/Inf,
mixed types), projects each into the default budget and checks that every output is valid JSON
and within budget.

Prints: projection_results, projection_valid_share, projection_within_budget_share,
projection_median_ms, projection_p99_ms
"""

from __future__ import annotations

import json
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from assay.explore.projection import project  # noqa: E402
from assay.limits import TOOL_RESULT_BUDGET_CHARS  # noqa: E402

WORDS = ["orders", "customers", "日本語", "émigré", "Ölçüm", "🙂", "naïve", "x" * 40, "", "NULL", '"quoted"', "\\"]


def value(rng: random.Random, depth: int, budget: list[int] | None = None):
    """A random JSON-ish value; ``budget`` caps the total number of leaves (huge, never explosive)."""
    budget = budget if budget is not None else [20_000]
    budget[0] -= 1
    r = rng.random()
    if depth > 6 or r < 0.35 or budget[0] <= 0:
        return rng.choice([rng.randint(-10**12, 10**12), rng.random() * 1e6, float("nan"), float("inf"), None, True,
                           rng.choice(WORDS) * rng.randint(1, 60)])
    if r < 0.7:
        return [value(rng, depth + 1, budget) for _ in range(min(budget[0], rng.choice([0, 1, 5, 50, 500, 3000])))]
    return {f"{rng.choice(WORDS)}_{i}": value(rng, depth + 1, budget)
            for i in range(min(max(budget[0], 1), rng.choice([1, 3, 12, 40])))}


def corpus(n: int, seed: int = 7) -> list[dict]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        b = [20_000]  # leaves per result: huge, never explosive
        kind = i % 5
        if kind == 0:  # a wide query result
            rows = [{f"c{j}": value(rng, 5, b) for j in range(rng.randint(1, 30))}
                    for _ in range(rng.choice([1, 50, 2000]))]
            out.append({"tool": "query", "ok": True, "data": {"row_count": len(rows), "rows": rows}})
        elif kind == 1:  # a lookup with long column lists
            tables = [{"table": f"erp.t{j}", "columns": [{"name": f"col_{k}_" + rng.choice(WORDS), "type": "VARCHAR"}
                                                        for k in range(rng.randint(5, 400))],
                       "sample_rows": [value(rng, 4, b) for _ in range(3)]} for j in range(rng.randint(1, 10))]
            out.append({"tool": "lookup_schema", "ok": True, "data": {"tables": tables}})
        elif kind == 2:  # an error with hints
            out.append({"tool": "query", "ok": False, "error": "Binder Error: " + rng.choice(WORDS) * 500,
                        "hints": [rng.choice(WORDS) * 100 for _ in range(10)]})
        elif kind == 3:  # deep nesting
            deep = value(rng, 0, b)
            for _ in range(rng.randint(10, 60)):
                deep = {"k": deep, "v": rng.choice(WORDS) * rng.randint(1, 20)}  # a tree, as JSON gives
            out.append({"tool": "search_tables", "ok": True, "data": deep})
        else:  # anything
            out.append({"tool": "query", "ok": True, "data": value(rng, 0, b)})
    return out


def main() -> None:
    n = 1200
    items = corpus(n)
    valid = within = 0
    times = []
    for item in items:
        t0 = time.perf_counter()
        s = project(item, TOOL_RESULT_BUDGET_CHARS)
        times.append((time.perf_counter() - t0) * 1000)
        try:
            json.loads(s)
            valid += 1
        except ValueError:
            pass
        within += len(s) <= TOOL_RESULT_BUDGET_CHARS
    times.sort()
    print(f"projection_results: {n}")
    print(f"projection_valid_share: {valid / n:.3f}")
    print(f"projection_within_budget_share: {within / n:.3f}")
    print(f"projection_median_ms: {statistics.median(times):.2f}")
    print(f"projection_p99_ms: {times[int(0.99 * n)]:.2f}")


if __name__ == "__main__":
    main()
