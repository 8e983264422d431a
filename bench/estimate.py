"""Cost estimate accuracy and the saving of a one-area rerun (issue: operations).

On the demo ecommerce warehouse with the built-in scripted analyst (``llm: scripted/bench``, zero
latency, usage counted from characters as for a real provider), for runs of 20, 50 and 100 steps:
the estimate made before the run (no history: default sizes) against the tokens the run recorded,
per kind (input, cached, output); and the estimate calibrated from an earlier 12-step run of the
project (what `assay estimate` does once a project has history). Then a one-area rerun of the 50-step run against the full run: LLM calls and wall time.

Prints one `name: value` line per figure:
  estimate_error_max             max |predicted - recorded| / recorded over sizes and token kinds, with the
                                 estimate calibrated from the project's earlier 12-step run (what the product
                                 does once a project has run)
  estimate_error_max_cold        the same for a project with no history (default sizes)
  estimate_error_max_cold_input_cached   cold, input and cached tokens only
  estimate_error_[cold_]<kind>_<steps>   every single figure behind the maxima
  full_run_llm_calls, rerun_llm_calls, full_run_wall_s, rerun_wall_s

Usage: .venv/bin/python bench/estimate.py   (runs inline, without Prefect: it measures the product's
own calls; the Prefect flow adds the same fixed overhead to both sides of the rerun comparison)
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SIZES = (20, 50, 100)


def main() -> None:
    home = Path(tempfile.mkdtemp(prefix="assay-bench-estimate-"))
    os.environ.update(ASSAY_HOME=str(home), HF_HUB_OFFLINE="1")
    from assay.demo import generate
    from assay.models import LLMConfig, Project, WarehouseConfig
    from assay.run.lifecycle import new_run_id, rerun_areas_inline, run_discovery_inline
    from assay.services.estimate import estimate_project
    from assay.settings import load_settings
    from assay.store import open_store

    settings = load_settings()
    store = open_store(settings)
    db, _ = generate("ecommerce", home / "demo")
    errors, calibrated, recorded = {}, {}, {}

    def project(pid: str, n: int) -> Project:
        p = Project(id=pid, pack="ecommerce", max_steps=n,
                    warehouse=WarehouseConfig(kind="duckdb", settings={"path": str(db)}),
                    llm=LLMConfig(provider="scripted", model="bench"))
        store.save_project(p)
        return p

    # the calibrated project's history: one earlier, shorter run
    project("calibrated", 12)
    run_discovery_inline("calibrated", new_run_id(), settings=settings)
    for n in SIZES:
        pid = f"cold-{n}"
        project(pid, n)
        cold = estimate_project(pid, settings=settings).total
        cal = estimate_project("calibrated", max_steps=n, settings=settings).total
        t0 = time.perf_counter()
        result = run_discovery_inline(pid, new_run_id(), settings=settings)
        wall = time.perf_counter() - t0
        tel = store.get_run(result.run_id).telemetry
        recorded[n] = (tel, wall, result.run_id)
        for kind in ("input", "cached", "output"):
            got = getattr(tel, f"{kind}_tokens")
            errors[f"{kind}_{n}"] = abs(getattr(cold, f"{kind}_tokens") - got) / max(got, 1)
            calibrated[f"{kind}_{n}"] = abs(getattr(cal, f"{kind}_tokens") - got) / max(got, 1)
        print(f"# {n} steps: recorded in/cached/out {tel.input_tokens:,}/{tel.cached_tokens:,}/{tel.output_tokens:,}"
              f" in {tel.llm_calls} calls; predicted cold {cold.input_tokens:,}/{cold.cached_tokens:,}/"
              f"{cold.output_tokens:,}, calibrated {cal.input_tokens:,}/{cal.cached_tokens:,}/{cal.output_tokens:,}",
              flush=True)

    tel, wall, run_id = recorded[50]
    calls_before = store.get_run(run_id).telemetry.llm_calls
    t0 = time.perf_counter()
    rerun_areas_inline(run_id, ["retention"], settings=settings)
    rerun_wall = time.perf_counter() - t0
    rerun_calls = store.get_run(run_id).telemetry.llm_calls - calls_before

    print(f"estimate_error_max: {max(calibrated.values()):.3f}")
    print(f"estimate_error_max_cold: {max(errors.values()):.3f}")
    print(f"estimate_error_max_cold_input_cached: {max(v for k, v in errors.items() if 'output' not in k):.3f}")
    for k, v in calibrated.items():
        print(f"estimate_error_{k}: {v:.3f}")
    for k, v in errors.items():
        print(f"estimate_error_cold_{k}: {v:.3f}")
    print(f"full_run_llm_calls: {tel.llm_calls}")
    print(f"rerun_llm_calls: {rerun_calls}")
    print(f"full_run_wall_s: {wall:.2f}")
    print(f"rerun_wall_s: {rerun_wall:.2f}")


if __name__ == "__main__":
    main()
