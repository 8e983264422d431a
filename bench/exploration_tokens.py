"""Conversation size of a 100-step exploration (issue: exploration agent).

Runs the real exploration loop (scripted LLM, zero latency) for 100 steps on the demo ecommerce
warehouse, with realistic result sizes (up to 200-row scans of wide tables), and computes in the
same run the naive baseline: every request carrying every earlier turn with its full raw result.

Prints: steps, input_chars_total, naive_input_chars_total, input_share_of_naive,
largest_request_chars, naive_largest_request_chars, stable_prefix_share
(stable prefix = the characters of a request that repeat the previous request from its start,
which is what a prompt cache can serve; summed over all requests).
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from assay import limits  # noqa: E402
from assay.demo import generate  # noqa: E402
from assay.digest import cell  # noqa: E402
from assay.explore.actions import actions_text  # noqa: E402
from assay.explore.executor import Executor  # noqa: E402
from assay.explore.loop import Explorer  # noqa: E402
from assay.llm.bench_script import BenchScript  # noqa: E402
from assay.llm.scripted import ScriptedLLM  # noqa: E402
from assay.models import WarehouseConfig  # noqa: E402
from assay.explore.prompt import areas_section  # noqa: E402
from assay.packs import load_pack, render  # noqa: E402
from assay.schema.catalog import join_hints, render_catalog  # noqa: E402
from assay.schema.provider import SchemaProvider  # noqa: E402
from assay.warehouse.duckdb import DuckDBWarehouse  # noqa: E402
from assay.warehouse.guard import SQLGuard  # noqa: E402

STEPS = 100


def main() -> None:
    with tempfile.TemporaryDirectory() as d:
        db, _ = generate("ecommerce", Path(d))
        wh = DuckDBWarehouse(str(db))
        tables = wh.list_tables()
        cfg = WarehouseConfig(kind="duckdb", settings={"path": str(db)})
        pack = load_pack("ecommerce", "multi_category")
        system = render(pack.exploration, "bench", schema_info=render_catalog(tables).text, tenant_rule="",
                        max_steps=STEPS, limits=limits.template_vars(), actions=actions_text(False))
        system += "\n\n" + areas_section(pack.areas)  # the analysis areas, as the product's prompt lists them
        system += "\n\n" + render(pack.base_context, "bench", profile="", previous_context="")
        script = BenchScript(steps_before_done=STEPS, rows_limit=200)
        llm = ScriptedLLM(script)
        ex = Explorer(llm=llm, executor=Executor(wh, SQLGuard("duckdb", tables=tables, default_schema="main"), cfg, llm),
                      provider=SchemaProvider(tables, sampler=wh.sample_rows, joins=join_hints(tables)),
                      run_id="bench", system_prompt=system, max_steps=STEPS, tables=tables, areas=pack.areas)
        out = ex.run()
        # the naive baseline, from the same steps: full history, full raw results
        naive, history = [], 0
        base = len(system) + len(ex.intro)
        for s in out.steps:
            naive.append(base + history)
            if s.action.value == "done":
                break
            raw = wh.query(s.query, row_cap=cfg.row_cap, timeout_s=60).table.to_pylist() if s.ok else []
            raw_json = json.dumps([{k: cell(v) for k, v in r.items()} for r in raw], ensure_ascii=False)
            history += len(Explorer._action_of(s).as_json()) + len(raw_json) + 80
        wh.close()
    total, naive_total = sum(ex.requests), sum(naive)
    print(f"steps: {len([s for s in out.steps if s.action.value != 'done'])}")
    print(f"input_chars_total: {total}")
    print(f"naive_input_chars_total: {naive_total}")
    print(f"input_share_of_naive: {total / naive_total:.4f}")
    print(f"largest_request_chars: {max(ex.requests)}")
    print(f"naive_largest_request_chars: {max(naive)}")
    print(f"stable_prefix_share: {sum(ex.stable) / total:.3f}")


if __name__ == "__main__":
    main()
