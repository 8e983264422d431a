"""Raw PII anywhere a discovery leaves it (issue 18): a scripted run over the PII corpus, then a scan.

Seeds a DuckDB warehouse (bench/guard_seed.py: unique emails, names and phones for two tenants),
registers a project with pii_columns and a tenant filter, and runs the whole discovery inline
(``assay.run.lifecycle.run_discovery_inline``: exploration, areas, verification, recommendations, save)
with a scripted LLM whose exploration sends every query of bench/data/guard/pii.json, and whose
analyst cites each step in an insight (so the report draws a chart from each). Then `assay report`
writes the HTML and Markdown report. Everything is scanned for the seeded values (as they are,
lower-cased, reversed, base64, hex, or their distinctive part): every request the LLM received,
every file under ASSAY_HOME (the store, the vector index, the reports), the run result, and every
log record of the ``assay`` logger.

Prints: pii_queries, pii_steps, pii_raw_values_found (goal 0), pii_places_with_raw_values,
pii_found_in_<place>, pii_run_type.
"""

from __future__ import annotations

import dataclasses
import io
import json
import logging
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from guard_seed import cleanup, new_seed, pii_needles, seed_duckdb

QUERIES = json.loads((HERE / "data" / "guard" / "pii.json").read_text())


def scripted_handler(queries: list[str]):
    from assay.llm.bench_script import BenchScript

    script = BenchScript()

    def handler(req):
        if req.purpose == "explore":
            n = int(req.meta.get("step", 1))
            if n > len(queries):
                return json.dumps({"done": True, "summary": "PII corpus sent"})
            return json.dumps({"thinking": "look at customers", "purpose": f"pii query {n}", "query": queries[n - 1]})
        if req.purpose.startswith("analyze:"):
            area = req.purpose.split(":", 1)[1]
            shown = req.meta.get("step_labels") or {}  # cited as the model saw them (explore/numbering.py)
            steps = [shown[n] for n in (req.meta.get("steps") or []) if n in shown][:25]
            return json.dumps({"insights": [{
                "name": f"{area}: customers of step {s}", "description": "customer contacts by step",
                "severity": "medium", "affected_count": 40, "confidence": 0.5, "source_steps": [s]} for s in steps]})
        if req.purpose == "verify":
            return json.dumps({"query": "SELECT count(*) AS count FROM customers WHERE tenant_id = 7",
                               "purpose": "count the tenant's customers"})
        return script(req)

    return handler


def request_text(req) -> str:
    try:
        return json.dumps(dataclasses.asdict(req), default=str)
    except Exception:
        return repr(req)


def main() -> None:
    seed = new_seed()
    home = Path(tempfile.mkdtemp(prefix="gbench_pii_home_"))
    os.environ["ASSAY_HOME"] = str(home)
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    logbuf = io.StringIO()
    handler = logging.StreamHandler(logbuf)
    handler.setFormatter(logging.Formatter("%(name)s %(levelname)s %(message)s"))
    alog = logging.getLogger("assay")
    alog.setLevel(logging.DEBUG)
    alog.addHandler(handler)
    logging.getLogger().addHandler(handler)
    try:
        seed_duckdb(seed)
        queries = [q.replace("{S}", "main") for q in QUERIES]
        from typer.testing import CliRunner

        from assay.cli import app
        from assay.llm import register_scripted
        from assay.llm.scripted import ScriptedLLM
        from assay.models import LLMConfig, Project, TenantFilter, WarehouseConfig
        from assay.run.lifecycle import new_run_id, run_discovery_inline
        from assay.settings import load_settings
        from assay.store import open_store

        llms: list[ScriptedLLM] = []

        def factory(cfg):
            llm = ScriptedLLM(scripted_handler(queries))
            llms.append(llm)
            return llm

        register_scripted("gbench-pii", factory)
        p = Project(id="gbench-pii", pack="ecommerce", max_steps=len(queries) + 1, min_steps=0, analyst="llm",
                    warehouse=WarehouseConfig(kind="duckdb", settings={"path": str(seed.duckdb_path)},
                                              schemas=["main"], statement_timeout_s=20, row_cap=500,
                                              tenant_filter=TenantFilter(column="tenant_id", value=7,
                                                                         shared_tables=["products"]),
                                              pii_columns=["email", "full_name", "phone"]),
                    llm=LLMConfig(provider="scripted", model="gbench-pii"))
        store = open_store(load_settings())
        store.save_project(p)
        run_id = new_run_id()
        result, crash = None, ""
        try:
            result = run_discovery_inline(p.id, run_id)
        except Exception as exc:  # a run failure is a finding; what it left behind is still scanned
            crash = f"{type(exc).__name__}: {str(exc)[:200]}"
            print(f"# the discovery failed: {crash}", file=sys.stderr)
        report = home / "reports" / "pii.html"
        r = CliRunner().invoke(app, ["report", run_id, "-o", str(report)]) if result is not None else None
        steps = store.steps(run_id)
        places: dict[str, str] = {
            "llm_requests": "\n".join(request_text(c) for llm in llms for c in llm.calls),
            "run_result": result.model_dump_json() if result is not None else "",
            "logs": logbuf.getvalue(),
            "report_cli_output": r.output if r is not None else "",
        }
        for f in sorted(home.rglob("*")):
            if f.is_file():
                kind = ("report" if f.suffix in (".html", ".md") else "vector_index" if "qdrant" in f.parts
                        else "store" if "store" in f.parts else "other_files")
                places[kind] = places.get(kind, "") + "\n" + f.read_bytes().decode("latin-1")
        needles = [(v, n) for v in seed.pii for n in pii_needles(v)]
        found_total: set[str] = set()
        per_place: dict[str, int] = {}
        for place, text in places.items():
            low = text.lower()
            hit = {v for v, n in needles if n in low}
            per_place[place] = len(hit)
            found_total |= hit
        print(f"pii_queries: {len(queries)}")
        print(f"pii_steps: {sum(1 for s in steps if s.query)}")
        print(f"pii_steps_ok: {sum(1 for s in steps if s.query and s.ok)}")
        print(f"pii_raw_values_found: {len(found_total)}")
        print(f"pii_places_with_raw_values: {sum(1 for v in per_place.values() if v)}")
        for place in sorted(per_place):
            print(f"pii_found_in_{place}: {per_place[place]}")
        print(f"pii_run_type: {result.run_type.value if result is not None else 'crashed'}")
        if found_total:
            print(f"# e.g. {sorted(found_total)[0]!r} in "
                  f"{', '.join(k for k, v in per_place.items() if v)}", file=sys.stderr)
    finally:
        cleanup(seed)
        import shutil

        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
