"""Start-up and orchestration overhead (issue: foundation).

Prints one `name: value` line per figure:
  first_step_s            wall time from `assay discover` to the first persisted step (cold process)
  demo_run_s              wall time of that whole demo run (scripted LLM, zero latency)
  overhead_per_step_ms    median time per exploration step that is neither LLM nor warehouse, 100-step run
  demo_generate_scale1_s  demo warehouse generation at scale 1
  demo_generate_scale10_s demo warehouse generation at scale 10

Parts (issue #20 item 8), each in a fresh process, with the machine's own baseline beside them:
  baseline_python_s       `python -c pass`: the floor every figure stands on (report ratios to it under load)
  import_prefect_s        `import prefect`
  import_flows_s          `import assay_flows.flows.discovery` (Prefect, the core, Qdrant's client, pandas)
  embedder_load_s         torch, sentence-transformers and the bundled model, loaded and used once
  ephemeral_server_s      Prefect's ephemeral server: first API answer, after `import prefect`
  first_step_stat_s       `assay discover` with the statistical analyst (no LLM configured: the embedded
                          defaults) until its first exploration step is in the store
  stat_run_s              that run to the end
  area_start_spread_s     the latest minus the earliest start of that run's area subflows
  rerun_area_s            `assay rerun RUN --area A` of that run, wall time in a fresh process
  first_step_stat_again_s a second `assay discover` in the same homes, to its first stored step (the local
                          Prefect server the first command started is running; the embedding cache is warm)
  local_server_build_s    the local Prefect server on a fresh home with no template database yet (it runs
                          Prefect's migrations and keeps the result as the template): start to first answer
  local_server_start_s    the local Prefect server on a fresh home: start to first answer (`connect()`),
                          the template copied into the home
  local_server_reuse_s    a fresh process finding it running and Prefect's client answered through it
  *_notemplate_s          with --compare-template: the statistical figures again in other fresh homes, with
                          ASSAY_PREFECT_DB_TEMPLATE=0 (every fresh home migrates: the behaviour before)

Usage: .venv/bin/python bench/startup.py [--skip-scale10] [--parts-only [--no-local-server] [--compare-template [--template-first]]]
The template database lives in ASSAY_CACHE_DIR: the bench points it at its own temporary directory.
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
               PREFECT_SERVER_ANALYTICS_ENABLED="false", PREFECT_LOGGING_LEVEL="WARNING", HF_HUB_OFFLINE="1",
               PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS="180", DO_NOT_TRACK="1")
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


def _wall(env: dict, *args: str) -> float:
    t0 = time.perf_counter()
    subprocess.run(list(args), env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


SERVER = ("import asyncio, time; from prefect.client.orchestration import get_client\n"
          "t0 = time.perf_counter()\n"
          "async def main():\n"
          "    async with get_client() as c:\n"
          "        await c.hello()\n"
          "asyncio.run(main()); print(time.perf_counter() - t0)")


REUSE = ("import time; t0 = time.perf_counter()\n"
         "from assay_flows import local_server\n"
         "url = local_server.connect(60); import os; os.environ['PREFECT_API_URL'] = url\n"
         "import asyncio; from prefect.client.orchestration import get_client\n"
         "async def main():\n"
         "    async with get_client() as c:\n"
         "        await c.hello()\n"
         "asyncio.run(main()); print(time.perf_counter() - t0)")
START = ("import time; t0 = time.perf_counter(); from assay_flows import local_server\n"
         "assert local_server.connect(300); print(time.perf_counter() - t0)")


def stop_local_server(env: dict) -> None:
    subprocess.run([sys.executable, "-c", "from assay_flows import local_server; local_server.stop()"], env=env,
                   capture_output=True)


def measure_local_server(tmp: Path) -> dict:
    env = env_for(tmp / "local")
    env.pop("PREFECT_API_URL", None)
    out = {}
    try:  # the bench's cache starts empty: the first server builds the template, a fresh home copies it
        r = subprocess.run([sys.executable, "-c", START], env=env, capture_output=True, text=True)
        out["local_server_build_s"] = float(r.stdout.strip().splitlines()[-1]) if r.returncode == 0 else float("nan")
        stop_local_server(env)
        env = env_for(tmp / "local2")
        env.pop("PREFECT_API_URL", None)
        for key, code in (("local_server_start_s", START), ("local_server_reuse_s", REUSE)):
            r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
            out[key] = float(r.stdout.strip().splitlines()[-1]) if r.returncode == 0 else float("nan")
    finally:
        stop_local_server(env)
    return out


def measure_parts(tmp: Path) -> dict:
    env = env_for(tmp / "parts")
    env.pop("PREFECT_API_URL", None)
    py = sys.executable
    out = {"baseline_python_s": min(_wall(env, py, "-c", "pass") for _ in range(3)),
           "import_prefect_s": _wall(env, py, "-c", "import prefect"),
           "import_flows_s": _wall(env, py, "-c", "import assay_flows.flows.discovery"),
           "embedder_load_s": _wall(env, py, "-c", "from assay.vectors.embedder import get_embedder; "
                                                  "get_embedder().embed(['warm'])")}
    r = subprocess.run([py, "-c", SERVER], env=env, capture_output=True, text=True)
    if r.returncode == 0:
        out["ephemeral_server_s"] = float(r.stdout.strip().splitlines()[-1])
    else:  # a busy machine can outlast the server's start-up wait: say so, measure the rest
        out["ephemeral_server_s"] = float("nan")
        print(f"# ephemeral server did not answer: {(r.stderr.strip().splitlines() or ['?'])[-1][:300]}", flush=True)
    return out


def _area_spread(prefect_home: Path) -> float:
    import sqlite3
    from datetime import datetime

    con = sqlite3.connect(str(prefect_home / "prefect.db"))
    rows = con.execute("SELECT fr.start_time FROM flow_run fr JOIN flow f ON f.id = fr.flow_id "
                       "WHERE f.name = 'assay-area' AND fr.start_time IS NOT NULL").fetchall()
    con.close()
    starts = sorted(datetime.fromisoformat(str(t).replace("Z", "+00:00")) for (t,) in rows)
    return (starts[-1] - starts[0]).total_seconds() if len(starts) > 1 else float("nan")


def measure_statistical(tmp: Path, demo_path: Path, template: bool = True) -> dict:
    """The embedded defaults: no LLM configured, so the statistical analyst runs."""
    home = tmp / ("stat" if template else "stat-notemplate")
    env = env_for(home)
    if not template:
        env["ASSAY_PREFECT_DB_TEMPLATE"] = "0"
    env.pop("ANTHROPIC_API_KEY", None)
    env.pop("OPENAI_API_KEY", None)
    code = ("from assay.settings import load_settings; from assay.store import open_store;"
            "from assay.models import Project, WarehouseConfig;"
            "open_store(load_settings()).save_project(Project(id='bench-stat', pack='ecommerce',"
            f" category='multi_category', max_steps=20, analyst='statistical',"
            f" warehouse=WarehouseConfig(kind='duckdb', settings={{'path': {str(demo_path)!r}}})))")
    subprocess.run([sys.executable, "-c", code], env=env, check=True)
    assay = str(Path(sys.executable).parent / "assay")
    probe = ("from assay.settings import load_settings; from assay.store import open_store;"
             "s=open_store(load_settings()); print(s.db.steps.count_documents({}))")
    t0 = time.perf_counter()
    errlog = open(home / "discover.err", "w")  # noqa: SIM115
    proc = subprocess.Popen([assay, "discover", "bench-stat"], env=env, stdout=subprocess.DEVNULL, stderr=errlog)
    first = None
    while proc.poll() is None:
        if first is None:
            r = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True)
            if r.stdout.strip().isdigit() and int(r.stdout.strip()) > 0:
                first = time.perf_counter() - t0
        time.sleep(0.2)
    total = time.perf_counter() - t0
    errlog.close()
    if proc.returncode != 0:
        raise SystemExit(f"assay discover (statistical) failed with exit {proc.returncode}: "
                         f"{(home / 'discover.err').read_text()[-1500:]}")
    spread = _area_spread(home / "prefect")
    ids = subprocess.run([sys.executable, "-c", "from assay.settings import load_settings; from assay.store import "
                          "open_store; print(open_store(load_settings()).list_runs('bench-stat', limit=1)[0].id)"],
                         env=env, capture_output=True, text=True, check=True).stdout.strip()
    rerun = _wall(env, assay, "rerun", ids[:8], "--area", "revenue")
    before = int(subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True).stdout)
    t0 = time.perf_counter()  # again: the local Prefect server (when this checkout has one) is running
    proc = subprocess.Popen([assay, "discover", "bench-stat"], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    again = None
    while proc.poll() is None:
        if again is None:
            r = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True)
            if r.stdout.strip().isdigit() and int(r.stdout.strip()) > before:
                again = time.perf_counter() - t0
        time.sleep(0.2)
    stop_local_server(env)
    return {"first_step_stat_s": first if first is not None else float("nan"), "stat_run_s": total,
            "area_start_spread_s": spread, "rerun_area_s": rerun,
            "first_step_stat_again_s": again if again is not None else float("nan")}


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
    if "--parts-only" in sys.argv:
        with tempfile.TemporaryDirectory(prefix="assay-bench-") as d:
            from assay.demo import generate

            db, _ = generate("ecommerce", Path(d) / "g1")
            os.environ["ASSAY_CACHE_DIR"] = str(Path(d) / "cache")  # no template yet: built below
            figures = measure_parts(Path(d))

            def before() -> None:  # every fresh home runs Prefect's migrations
                figures.update({k[:-2] + "_notemplate_s" if k.endswith("_s") else k: v for k, v in
                                measure_statistical(Path(d), db, template=False).items()})

            compare = "--compare-template" in sys.argv
            if compare and "--template-first" not in sys.argv:
                before()
            if "--no-local-server" not in sys.argv:
                figures.update(measure_local_server(Path(d)))
            figures.update(measure_statistical(Path(d), db))
            if compare and "--template-first" in sys.argv:  # the other order: a falling load favours the later
                before()
        base = figures["baseline_python_s"]
        for k, v in figures.items():
            print(f"{k}: {v:.3f}" + (f"  # {v / base:.1f}x baseline" if k != "baseline_python_s" else ""))
        return
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
        figures.update(measure_parts(tmp))
        figures.update(measure_cold_start(tmp, demo_path))
        figures.update(measure_statistical(tmp, demo_path))
        figures.update(measure_overhead(tmp, demo_path))
    for k in ("baseline_python_s", "import_prefect_s", "import_flows_s", "embedder_load_s", "ephemeral_server_s",
              "first_step_stat_s", "stat_run_s", "area_start_spread_s", "rerun_area_s", "first_step_s", "demo_run_s", "overhead_per_step_ms", "demo_generate_scale1_s",
              "demo_generate_scale10_s"):
        if k in figures:
            print(f"{k}: {figures[k]:.3f}" if "ms" not in k else f"{k}: {figures[k]:.1f}")


if __name__ == "__main__":
    main()
