"""Verdict accuracy of the grounded verifier (issue: verification).

On both demo warehouses a scripted analyst claims every planted pattern with its true count,
with the count off by +10%, +50% and +100%, and claims invented patterns. The verifier (with a
scripted LLM that answers with a grounded count query, sometimes after a lookup) must return:
true and +10% -> confirmed, +50% and +100% -> adjusted, invented -> rejected.

Prints: verdict_accuracy, verdicts_total, verify_query_median_ms
Usage: .venv/bin/python bench/verification.py [--scale 1]
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from assay.demo import generate  # noqa: E402
from assay.explore.executor import Executor  # noqa: E402
from assay.llm.scripted import ScriptedLLM  # noqa: E402
from assay.models import Insight, WarehouseConfig  # noqa: E402
from assay.schema.provider import SchemaProvider  # noqa: E402
from assay.validate.verify import Verifier  # noqa: E402
from assay.warehouse.duckdb import DuckDBWarehouse  # noqa: E402
from assay.warehouse.guard import SQLGuard  # noqa: E402

INVENTED = {
    "ecommerce": [("Customers from Antarctica churn", "SELECT count(*) AS count FROM customers WHERE country = 'AQ'"),
                  ("Refunds on toys by tablet users", "SELECT count(*) AS count FROM events WHERE platform = 'tablet'"),
                  ("Orders above 1M", "SELECT count(*) AS count FROM orders WHERE total_amount > 1000000")],
    "gaming": [("Level 99 wall", "SELECT count(DISTINCT player_id) AS count FROM level_attempts WHERE level = 99"),
               ("Players from Mars", "SELECT count(*) AS count FROM players WHERE country = 'MARS'"),
               ("Refunded starter bundles", "SELECT count(*) AS count FROM purchases WHERE status = 'refunded'")],
}
OFFSETS = {0.0: "confirmed", 0.10: "confirmed", 0.50: "adjusted", 1.00: "adjusted"}


def main() -> None:
    scale = float(sys.argv[sys.argv.index("--scale") + 1]) if "--scale" in sys.argv else 1.0
    total = correct = 0
    times: list[float] = []
    wrong: list[str] = []
    with tempfile.TemporaryDirectory() as d:
        for name in ("ecommerce", "gaming"):
            db, truth_path = generate(name, Path(d), scale=scale)
            truth = json.loads(truth_path.read_text())
            wh = DuckDBWarehouse(str(db))
            tables = wh.list_tables()
            claims: list[tuple[Insight, str, str]] = []
            for p in truth["patterns"]:
                for off, expect in OFFSETS.items():
                    claimed = max(1, round(p["affected_count"] * (1 + off)))
                    ins = Insight(id=f"{p['area']}-{len(claims) + 1}", area=p["area"], name=p["description"][:80],
                                  description=p["description"], affected_count=claimed, segment=p["segment"])
                    claims.append((ins, p["count_sql"], expect))
            for title, sql in INVENTED[name]:
                ins = Insight(id=f"x-{len(claims) + 1}", area="x", name=title, description=title, affected_count=500)
                claims.append((ins, sql, "rejected"))
            for n, (ins, sql, expect) in enumerate(claims):
                # every third claim looks a table up first, exercising the verifier's loop
                answers = iter(([json.dumps({"lookup_schema": [tables[0].fqn]})] if n % 3 == 0 else [])
                               + [json.dumps({"query": sql, "purpose": "count of the claim"})])
                llm = ScriptedLLM(lambda req, a=answers: next(a))
                ex = Executor(wh, SQLGuard("duckdb", tables=tables, default_schema="main"),
                              WarehouseConfig(kind="duckdb", statement_timeout_s=60, row_cap=10), llm)
                v = Verifier(llm=llm, executor=ex, steps={}, catalog="", provider=SchemaProvider(tables))
                t0 = time.perf_counter()
                val = v.verify(ins)
                times.append((time.perf_counter() - t0) * 1000)
                total += 1
                if val.status.value == expect:
                    correct += 1
                else:
                    wrong.append(f"{name}/{ins.id}: expected {expect}, got {val.status.value} ({val.reasoning})")
            wh.close()
    for w in wrong:
        print("#", w, file=sys.stderr)
    print(f"verdict_accuracy: {correct / total:.3f}")
    print(f"verdicts_total: {total}")
    print(f"verify_query_median_ms: {statistics.median(times):.1f}")


if __name__ == "__main__":
    main()
