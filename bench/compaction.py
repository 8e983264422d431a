"""Analysis compaction at ERP scale (issue: analysis compaction).

An 80-step scripted run on the synthetic 2,000-table ERP warehouse: one step returns 1,000,000
rows, ten return 2,000 rows, the rest are small. Every analysis area is then prompted through
the real picker and renderer; the largest prompt is compared with the naive prompt (every
step's full rows inlined), measured in the same run.

Prints: largest_prompt_chars, naive_prompt_chars, prompt_reduction_x, prompt_budget_chars,
digest_1m_s, arrow_scan_1m_s, digest_to_scan_ratio, digest_2000_rows_bytes
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def digest_speed() -> dict:
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    from assay.digest import build_compact_result

    rng = np.random.default_rng(0)
    n = 1_000_000
    cols = {}
    for i in range(10):
        if i % 3 == 0:
            cols[f"c{i}"] = rng.integers(0, 1000, n)
        elif i % 3 == 1:
            cols[f"c{i}"] = rng.normal(size=n)
        else:
            cols[f"c{i}"] = pa.array(rng.choice(["north", "south", "east", "west"], n))
    t = pa.table(cols)

    def scan():
        for c in t.columns:
            pc.min_max(c)

    out = {}
    for name, fn in (("arrow_scan_1m_s", scan), ("digest_1m_s", lambda: build_compact_result(t))):
        times = []
        for _ in range(5):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
        out[name] = statistics.median(times)
    out["digest_to_scan_ratio"] = out["digest_1m_s"] / out["arrow_scan_1m_s"]
    return out


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="assay-compaction-") as d:
        tmp = Path(d)
        os.environ.update(ASSAY_HOME=str(tmp / "home"), HF_HUB_OFFLINE="1")
        from assay.demo.erp import generate_erp, table_plan
        from assay.digest import build_compact_result, cell, digest_json
        from assay.llm import register_scripted
        from assay.llm.scripted import ScriptedLLM
        from assay.models import LLMConfig, Project, WarehouseConfig
        from assay.run.lifecycle import run_discovery_inline
        from assay.settings import load_settings
        from assay.store import open_store

        db = generate_erp(tmp / "erp.duckdb")
        plan = table_plan()
        mid = [n for n, _, rows in plan if rows >= 5_000 and n != "sls_ord_ln"][:10]
        small = [n for n, _, rows in plan if 20 <= rows <= 500][:80]
        prompts: list[int] = []

        def handler(req):
            if req.purpose == "explore":
                n = req.meta["step"]
                if n == 1:
                    return json.dumps({"purpose": "all sales order lines (revenue detail)",
                                       "query": "SELECT * FROM sls_ord_ln"})
                if n <= 11:
                    t = mid[n - 2]
                    return json.dumps({"purpose": f"recent rows of {t} (orders, revenue, customers)",
                                       "query": f"SELECT * FROM {t} LIMIT 2000"})
                if n <= 80:
                    t = small[n - 12]
                    return json.dumps({"purpose": f"contents of {t}", "query": f"SELECT * FROM {t} LIMIT 20"})
                return '{"done": true, "summary": "explored"}'
            if req.purpose.startswith("analyze:"):
                prompts.append(len(req.system_text()))
                return json.dumps({"insights": []})
            if req.purpose == "recommend":
                return '{"recommendations": []}'
            return '{"query": "SELECT 1 AS count"}'

        register_scripted("compaction", lambda cfg: ScriptedLLM(handler))
        store = open_store(load_settings())
        store.save_project(Project(
            id="erp", pack="ecommerce", category="multi_category", max_steps=80,
            llm=LLMConfig(provider="scripted", model="compaction"),
            warehouse=WarehouseConfig(kind="duckdb", settings={"path": str(db)}, row_cap=1_100_000,
                                      statement_timeout_s=300)))
        result = run_discovery_inline("erp", "compaction-run")
        steps = store.steps("compaction-run")
        assert result.run_type.value == "full", result.errors
        assert max(s.row_count for s in steps) == 1_000_000

        # the naive prompt: every step's full rows inlined, measured batch by batch
        import duckdb

        con = duckdb.connect(str(db), read_only=True)
        naive_rows = 0
        for s in steps:
            if not s.ok:
                continue
            reader = con.sql(s.query).to_arrow_reader(100_000)
            for batch in reader:
                rows = batch.to_pylist()
                naive_rows += len(json.dumps([{k: cell(v) for k, v in r.items()} for r in rows], ensure_ascii=False))
        two_k = con.sql(f"SELECT * FROM {mid[0]} LIMIT 2000").to_arrow_table()
        con.close()
        base = min(prompts) - min(log.query_results_chars for log in result.analysis_log)
        figures = {
            "largest_prompt_chars": max(prompts),
            "naive_prompt_chars": base + naive_rows,
            "prompt_budget_chars": 200_000 * 4,
            "digest_2000_rows_bytes": len(digest_json(build_compact_result(two_k)).encode()),
        }
        figures["prompt_reduction_x"] = figures["naive_prompt_chars"] / figures["largest_prompt_chars"]
    figures.update(digest_speed())
    for k in ("largest_prompt_chars", "naive_prompt_chars", "prompt_reduction_x", "prompt_budget_chars",
              "digest_1m_s", "arrow_scan_1m_s", "digest_to_scan_ratio", "digest_2000_rows_bytes"):
        v = figures[k]
        print(f"{k}: {v:.3f}" if isinstance(v, float) else f"{k}: {v}")


if __name__ == "__main__":
    main()
