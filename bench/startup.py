"""Start-up and orchestration overhead (issue: foundation).

Prints one `name: value` line per figure:
  first_step_s            wall time from `assay discover` to the first persisted step (cold process)
  demo_run_s              wall time of that whole demo run (scripted LLM, zero latency)
  overhead_per_step_ms    median time per exploration step that is neither LLM nor warehouse, 100-step run
  demo_generate_scale1_s  demo warehouse generation at scale 1
  demo_generate_scale10_s demo warehouse generation at scale 10

Usage: .venv/bin/python bench/startup.py [--skip-scale10]
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def env_for(home: Path) -> dict:
    (home / "prefect").mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    env.update(ASSAY_HOME=str(home / "assay"), PREFECT_HOME=str(home / "prefect"),
               PREFECT_SERVER_ANALYTICS_ENABLED="false", PREFECT_LOGGING_LEVEL="WARNING", HF_HUB_OFFLINE="1")
    return env


def measure_generation(tmp: Path, skip10: bool) -> dict:
    from assay.demo import generate

    out = {}
    t0 = time.perf_counter()
    generate("ecommerce", tmp / "g1", scale=1)
    out["demo_generate_scale1_s"] = time.perf_counter() - t0
    if not skip10:
        t0 = time.perf_counter()
        generate("ecommerce", tmp / "g10", scale=10)
        out["demo_generate_scale10_s"] = time.perf_counter() - t0
    return out


def register_bench_project(env: dict, demo_path: Path, project_id: str, max_steps: int) -> None:
    code = (
        "from assay.settings import load_settings; from assay.store import open_store;"
        "from assay.models import Project, WarehouseConfig, LLMConfig;"
        f"open_store(load_settings()).save_project(Project(id={project_id!r}, pack='ecommerce',"
        f" category='multi_category', max_steps={max_steps}, llm=LLMConfig(provider='scripted', model='bench'),"
        f" warehouse=WarehouseConfig(kind='duckdb', settings={{'path': {str(demo_path)!r}}})))"
    )
    subprocess.run([sys.executable, "-c", code], env=env, check=True)


def measure_cold_start(tmp: Path, demo_path: Path) -> dict:
    home = tmp / "cold"
    env = env_for(home)
    register_bench_project(env, demo_path, "bench-cold", 20)
    store_file = home / "assay" / "store"
    t0 = time.perf_counter()
    proc = subprocess.Popen([str(Path(sys.executable).parent / "assay"), "discover", "bench-cold"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    first = None
    probe = ("import sys; from assay.settings import load_settings; from assay.store import open_store;"
             "s=open_store(load_settings()); print(s.db.steps.count_documents({}))")
    while proc.poll() is None:
        if first is None:
            r = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True)
            if r.stdout.strip().isdigit() and int(r.stdout.strip()) > 0:
                first = time.perf_counter() - t0
        time.sleep(0.2)
    total = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"assay discover failed with exit {proc.returncode}")
    _ = store_file
    return {"first_step_s": first if first is not None else float("nan"), "demo_run_s": total}


def measure_overhead(tmp: Path, demo_path: Path, steps: int = 100) -> dict:
    home = tmp / "overhead"
    os.environ.update(env_for(home))
    from assay.llm import register_scripted
    from assay.llm.bench_script import BenchScript
    from assay.llm.scripted import ScriptedLLM
    from assay.models import LLMConfig, Project, WarehouseConfig
    from assay.settings import load_settings
    from assay.store import open_store
    from assay_flows.flows.discovery import DiscoveryParams, discovery_flow

    script = BenchScript(steps_before_done=steps, rows_limit=50)
    register_scripted("bench-timed", lambda cfg: ScriptedLLM(script, model="bench"))
    store = open_store(load_settings())
    store.save_project(Project(id="bench-overhead", pack="ecommerce", max_steps=steps,
                               llm=LLMConfig(provider="scripted", model="bench-timed"),
                               warehouse=WarehouseConfig(kind="duckdb", settings={"path": str(demo_path)})))
    state = asyncio.run(discovery_flow(DiscoveryParams(project="bench-overhead"), run_id="overhead",
                                       return_state=True))
    if not state.is_completed():
        raise SystemExit(f"overhead run did not complete: {state.message}")
    explore = [t for p, t in script.times if p == "explore"]
    gaps = [b - a for a, b in zip(explore, explore[1:])]
    wh_ms = [s.duration_ms for s in store.steps("overhead") if s.action.value == "query"]
    per_step = [g * 1000 - w for g, w in zip(gaps, wh_ms)]
    return {"overhead_per_step_ms": statistics.median(per_step)}


def main() -> None:
    skip10 = "--skip-scale10" in sys.argv
    if "--overhead-only" in sys.argv:
        with tempfile.TemporaryDirectory(prefix="assay-bench-") as d:
            from assay.demo import generate

            db, _ = generate("ecommerce", Path(d) / "g1")
            print(f"overhead_per_step_ms: {measure_overhead(Path(d), db)['overhead_per_step_ms']:.1f}")
        return
    with tempfile.TemporaryDirectory(prefix="assay-bench-") as d:
        tmp = Path(d)
        figures = measure_generation(tmp, skip10)
        demo_path = tmp / "g1" / "ecommerce.duckdb"
        figures.update(measure_cold_start(tmp, demo_path))
        figures.update(measure_overhead(tmp, demo_path))
    for k in ("first_step_s", "demo_run_s", "overhead_per_step_ms", "demo_generate_scale1_s",
              "demo_generate_scale10_s"):
        if k in figures:
            print(f"{k}: {figures[k]:.3f}" if "ms" not in k else f"{k}: {figures[k]:.1f}")


if __name__ == "__main__":
    main()
