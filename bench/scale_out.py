"""Scale-out (#22): areas as flow runs on 1, 2 and 4 workers against the in-process baseline, in one run.

A `prefect server start` on loopback, MongoDB through nx-27017 (the store and the vector index), a process
work pool and the ``area`` deployment of prefect.yaml. The project has a synthetic pack of 12 analysis areas
on a small DuckDB warehouse; the analyst is a loopback OpenAI-compatible server (the scripted LLM) whose
analysis answer takes a fixed ``--delay`` seconds (a sleep: what a model's latency is to the worker).

Each discovery is started by `assay discover` (its parent flow runs in the CLI's process):

- ``in-process``: ``ASSAY_AREA_RUNS=inline``, the 12 areas as subflows gathered in that process (today's
  path; the LLM is the only bound on how many run at once);
- ``N workers``: ``ASSAY_AREA_RUNS=deployment``, each area a flow run of ``assay-area/area`` on the pool, served
  by N `prefect worker start --limit 1` (each worker analyses one area at a time: a host's capacity).

Figures: the wall time of the area phase (first area submitted or started -> last area ended, from the
flow runs' own times) and of the whole command; speed-up of 2 and 4 workers over 1; orchestration
overhead per area flow run = (area phase x workers / areas) - the in-process area's own duration.

``--load``: 20 discoveries queued at once on the pool (20 projects on ONE warehouse, each its own
``discover-<project>`` deployment from `assay deploy --pool`, statistical analyst, areas in process), the
warehouse's ``max_concurrent_queries`` at 2: every statement every process ran is traced at the engine call
(``ASSAY_QUERY_TRACE``), and the peak number running at once is counted; every run must end ``full``.

    python bench/scale_out.py [--delay 4] [--areas 12] [--workers 1,2,4] [--load] [--load-runs 20]

No /work/shared data is needed (the warehouse is generated).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
BIN = Path(sys.executable).parent
# not REPOSSESSOR: it revokes expired concurrency leases; without it a slot whose release failed (a busy SQLite
# server) is never given back, and the warehouse limit stalls every run (seen in the first load figure)
IDLE_SERVICES = ("SCHEDULER", "TRIGGERS", "FOREMAN", "LATE_RUNS", "PAUSE_EXPIRATIONS", "CANCELLATION_CLEANUP",
                 "CLEANUP_RECONCILER")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(30)
    except (subprocess.TimeoutExpired, ProcessLookupError, PermissionError):
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def sh(env: dict, *cmd: str, timeout: float = 900) -> str:
    r = subprocess.run(list(cmd), env=env, cwd=REPO, capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[:3])} failed ({r.returncode}): {(r.stdout + r.stderr)[-1500:]}")
    return r.stdout


# ----------------------------------------------------------------------------- the scripted analyst


class Analyst:
    """OpenAI-compatible chat answers by phase; the analysis answer sleeps ``delay`` seconds."""

    def __init__(self, delay: float):
        from assay.llm.replay import skeleton

        self.skeleton, self.delay = skeleton, delay
        self.lock = threading.Lock()
        self.now = self.peak = 0

    def answer(self, body: dict) -> tuple[int, str]:
        phase = self.skeleton(body)["phase"]
        if phase == "explore-json":
            n = 1 + sum(1 for m in body["messages"] if m["role"] == "assistant")
            if n <= 2:
                return 200, json.dumps({"purpose": f"orders and revenue by channel ({n})",
                                        "query": "SELECT c.channel, count(*) AS orders, sum(o.amount) AS revenue "
                                                 "FROM orders o JOIN customers c ON o.customer_id = c.customer_id "
                                                 "GROUP BY 1 ORDER BY 1"})
            return 200, json.dumps({"done": True, "summary": "orders and revenue by channel"})
        if phase == "analyze":
            with self.lock:
                self.now += 1
                self.peak = max(self.peak, self.now)
            time.sleep(self.delay)
            with self.lock:
                self.now -= 1
            return 200, json.dumps({"insights": [{"name": "paid customers order less", "description": "paid vs organic",
                                                  "severity": "high", "affected_count": 66, "source_steps": [1]}]})
        if phase == "verify":
            return 200, json.dumps({"query": "SELECT count(*) AS count FROM customers WHERE channel = 'paid'"})
        if phase == "recommend":
            return 200, json.dumps({"recommendations": []})
        return 400, json.dumps({"error": {"message": f"unexpected request ({phase})"}})

    def serve(self) -> str:
        me = self

        class H(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                status, text = me.answer(body)
                payload = text if status != 200 else json.dumps({
                    "id": "c", "object": "chat.completion", "usage": {"prompt_tokens": 50, "completion_tokens": 7},
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                 "finish_reason": "stop"}]})
                data = payload.encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    pass

            def log_message(self, *a):
                pass

        srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
        srv.daemon_threads = True
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        return f"http://127.0.0.1:{srv.server_address[1]}/v1"


# ----------------------------------------------------------------------------- services


def small_warehouse(path: Path) -> Path:
    import duckdb

    con = duckdb.connect(str(path))
    con.execute("""
        CREATE TABLE customers AS SELECT i AS customer_id, CASE WHEN i % 3 = 0 THEN 'paid' ELSE 'organic' END
            AS channel, DATE '2025-01-01' + CAST(i % 300 AS INTEGER) AS signed_up FROM range(1, 2001) t(i);
        CREATE TABLE orders AS SELECT i AS order_id, 1 + (i % 2000) AS customer_id, (i % 17) * 3.5 AS amount,
            TIMESTAMP '2025-01-01' + INTERVAL (i) HOUR AS ordered_at,
            CASE WHEN i % 5 = 0 THEN 'returned' ELSE 'completed' END AS status FROM range(1, 20001) t(i);
    """)
    con.close()
    return path


def pack_with_areas(root: Path, n: int) -> Path:
    """The ecommerce pack with ``n`` analysis areas (its three, and copies of them under other ids)."""
    import yaml

    src = REPO / "assay" / "domain_packs" / "ecommerce"
    dst = root / f"pack{n}"
    shutil.copytree(src, dst, dirs_exist_ok=True)
    data = yaml.safe_load((src / "pack.yaml").read_text())
    base = data["areas"]
    data["areas"] = [{**a, "id": f"{a['id']}{i // len(base) or ''}", "name": f"{a['name']} {i // len(base) or ''}".strip()}
                     for i, a in ((i, base[i % len(base)]) for i in range(n))]
    for a, i in zip(data["areas"], range(n)):
        own = dst / "prompts" / f"analysis_{base[i % len(base)]['id']}.md"
        if own.exists() and not (dst / "prompts" / f"analysis_{a['id']}.md").exists():
            shutil.copy(own, dst / "prompts" / f"analysis_{a['id']}.md")
    data["name"] = f"bench{n}"
    data.pop("categories", None)
    (dst / "pack.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return dst


def postgres_database(dsn: str) -> tuple[str, callable]:
    """A new, empty database for the Prefect server on the PostgreSQL at ``dsn`` (the production backend:
    a SQLite server answers 503 to many writers at once), its SQLAlchemy URL and a function that drops it."""
    import psycopg

    name = f"prefect_bench_{os.getpid()}"
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute(f'DROP DATABASE IF EXISTS "{name}"')
        c.execute(f'CREATE DATABASE "{name}"')
    info = psycopg.conninfo.conninfo_to_dict(dsn)
    url = (f"postgresql+asyncpg://{info.get('user', 'postgres')}@{info.get('host', '127.0.0.1')}:"
           f"{info.get('port', 5432)}/{name}")

    def drop() -> None:
        with psycopg.connect(dsn, autocommit=True) as c:
            c.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    return url, drop


class Services:
    def __init__(self, root: Path, prefect_db: str = "sqlite"):
        self.root = root
        self.procs: list[subprocess.Popen] = []
        self.drop_db = None
        nx = shutil.which("nx-27017") or str(BIN / "nx-27017")
        mport, pport = free_port(), free_port()
        (root / "nx").mkdir(exist_ok=True)
        self.procs.append(subprocess.Popen([nx, "--host", "127.0.0.1", "-p", str(mport), "--data-dir", str(root / "nx"),
                                            "--log-file", str(root / "nx.log"), "--pid-file", str(root / "nx.pid")],
                                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                           start_new_session=True))
        self.env = {**os.environ, "PREFECT_HOME": str(root / "prefect"), "ASSAY_HOME": str(root / "assay"),
                    "PREFECT_API_URL": f"http://127.0.0.1:{pport}/api", "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
                    "PREFECT_LOGGING_LEVEL": "WARNING", "PREFECT_UI_ENABLED": "false", "DO_NOT_TRACK": "1",
                    "MONGODB_URI": f"mongodb://127.0.0.1:{mport}/bench", "ASSAY_CODE_DIR": str(REPO),
                    "PYTHONPATH": str(REPO), "PREFECT_WORKER_QUERY_SECONDS": "1", "HF_HUB_OFFLINE": "1",
                    **{f"PREFECT_SERVER_SERVICES_{s}_ENABLED": "false" for s in IDLE_SERVICES}}
        for k in ("QDRANT_URL", "ASSAY_VECTOR_INDEX", "ASSAY_AREA_RUNS"):
            self.env.pop(k, None)
        log = open(root / "server.log", "w")
        server_env = dict(self.env)
        if prefect_db != "sqlite":
            url, self.drop_db = postgres_database(prefect_db)
            server_env["PREFECT_API_DATABASE_CONNECTION_URL"] = url
        self.prefect_db = "sqlite" if prefect_db == "sqlite" else "postgresql"
        self.procs.append(subprocess.Popen([str(BIN / "prefect"), "server", "start", "--host", "127.0.0.1", "--port",
                                            str(pport), "--no-ui"], env=server_env, stdout=log,
                                           stderr=subprocess.STDOUT, start_new_session=True))
        deadline = time.time() + 300
        while time.time() < deadline:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{pport}/api/health", timeout=2)
                break
            except Exception:
                time.sleep(1)
        else:
            self.close()
            raise SystemExit("prefect server did not start: " + (root / "server.log").read_text()[-800:])
        sh(self.env, str(BIN / "prefect"), "work-pool", "create", "assay", "--type", "process")

    def worker(self, name: str, limit: int) -> subprocess.Popen:
        env = {**self.env, "PREFECT_HOME": str(self.root / f"prefect-{name}")}
        p = subprocess.Popen([str(BIN / "prefect"), "worker", "start", "--pool", "assay", "--name", name, "--limit",
                              str(limit)], cwd=REPO, env=env, stdout=open(self.root / f"worker-{name}.log", "w"),
                             stderr=subprocess.STDOUT, start_new_session=True)
        self.procs.append(p)
        return p

    def close(self) -> None:
        for p in reversed(self.procs):
            stop(p)
        if self.drop_db is not None:
            self.drop_db()
            self.drop_db = None


READ_AREAS = """
import asyncio, json, sys
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import FlowFilter, FlowFilterName
async def main():
    async with get_client() as c:
        runs = await c.read_flow_runs(flow_filter=FlowFilter(name=FlowFilterName(any_=["assay-area"])), limit=200)
        out = [{"id": str(r.id), "run": r.parameters.get("run_id"), "created": r.created.timestamp(),
                "start": r.start_time.timestamp() if r.start_time else None,
                "end": r.end_time.timestamp() if r.end_time else None, "state": r.state.name}
               for r in runs if r.parameters.get("run_id") == sys.argv[1]]
        print(json.dumps(out))
asyncio.run(main())
"""


def latest_run(env: dict, project: str) -> dict:
    import pymongo

    client = pymongo.MongoClient(env["MONGODB_URI"])
    try:
        return next(client.get_default_database().runs.find({"project_id": project}).sort("started_at", -1))
    finally:
        client.close()


def one_discovery(svc: Services, project: str, mode: str) -> dict:
    env = {**svc.env, "ASSAY_AREA_RUNS": mode, "ASSAY_AREA_POLL_S": "0.5"}
    t = time.monotonic()
    out = subprocess.run([str(BIN / "assay"), "discover", project], env=env, cwd=REPO, capture_output=True, text=True,
                         timeout=3600)
    wall = time.monotonic() - t
    run = latest_run(svc.env, project)
    if out.returncode != 0 or run.get("run_type") != "full":
        raise SystemExit(f"{mode} discovery did not end full ({out.returncode}, {run.get('run_type')}): "
                         f"{(out.stdout + out.stderr)[-1500:]}")
    areas = json.loads(sh(svc.env, sys.executable, "-c", READ_AREAS, run["_id"]).strip().splitlines()[-1])
    first = min((a["created"] if mode == "deployment" else a["start"]) for a in areas)
    last = max(a["end"] for a in areas)
    own = [a["end"] - a["start"] for a in areas]
    return {"wall_s": wall, "area_phase_s": last - first, "area_own_s": sum(own) / len(own), "areas": len(areas),
            "run": run["_id"]}


def scale_figures(args, svc: Services, analyst: Analyst) -> dict:
    root = svc.root
    db = small_warehouse(root / "wh.duckdb")
    pack = pack_with_areas(root, args.areas)
    (root / "p.yaml").write_text(
        f"id: scale12\npack: bench{args.areas}\npack_dir: {pack}\nmax_steps: 3\nllm:\n  provider: openai-json\n"
        f"  model: loop\n  base_url: {analyst.url}\nwarehouse:\n  kind: duckdb\n  max_concurrent_queries: 4\n"
        f"  settings:\n    path: {db}\n")
    sh(svc.env, str(BIN / "assay"), "project", "apply", "-f", str(root / "p.yaml"))
    sh(svc.env, str(BIN / "prefect"), "--no-prompt", "deploy", "--name", "area")
    out = {"in-process": one_discovery(svc, "scale12", "inline")}
    print("in-process", json.dumps(out["in-process"]), flush=True)
    for n in args.workers:
        workers = [svc.worker(f"w{n}-{i}", 1) for i in range(n)]
        try:
            out[f"{n} workers"] = one_discovery(svc, "scale12", "deployment")
        finally:
            for w in workers:
                stop(w)
        print(f"{n} workers", json.dumps(out[f"{n} workers"]), flush=True)
    work = out["in-process"]["area_own_s"]
    for n in args.workers:
        f = out[f"{n} workers"]
        f["overhead_per_area_s"] = f["area_phase_s"] * n / f["areas"] - work
        if 1 in args.workers:
            f["speedup_vs_1"] = out["1 workers"]["area_phase_s"] / f["area_phase_s"]
    return out


# ----------------------------------------------------------------------------- the load figure


START_MANY = """
import asyncio, json, sys
from prefect.deployments import run_deployment
async def one(p):
    for wait in (1, 3, 10, 30, None):  # the SQLite-backed server answers 503 when it is busy
        try:
            return await run_deployment(f"assay-discovery/discover-{p}", timeout=0, idempotency_key=f"load-{p}")
        except Exception:
            if wait is None:
                raise
            await asyncio.sleep(wait)
async def main():
    runs = await asyncio.gather(*(one(p) for p in sys.argv[1:]))
    print(json.dumps([str(r.id) for r in runs]))
asyncio.run(main())
"""

STATES = """
import asyncio, json, sys
from uuid import UUID
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId
async def main():
    async with get_client() as c:
        runs = await c.read_flow_runs(flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[UUID(i) for i in sys.argv[1:]])))
        print(json.dumps({str(r.id): [r.state.type.value, r.state.name, (r.state.message or "")[:160]] for r in runs}))
asyncio.run(main())
"""


def load_figure(args, svc: Services) -> dict:
    from assay.warehouse.slots import peak_concurrency

    root = svc.root
    db = root / "wh.duckdb" if (root / "wh.duckdb").exists() else small_warehouse(root / "wh.duckdb")
    trace = root / "queries.trace"
    env = {**svc.env, "ASSAY_QUERY_TRACE": str(trace), "ASSAY_AREA_RUNS": "inline"}
    names = [f"load{i:02d}" for i in range(args.load_runs)]
    for p in names:
        (root / f"{p}.yaml").write_text(
            f"id: {p}\npack: ecommerce\nanalyst: statistical\nmax_steps: {args.load_steps}\nwarehouse:\n"
            f"  kind: duckdb\n  max_concurrent_queries: 2\n  settings:\n    path: {db}\n")
        sh(env, str(BIN / "assay"), "project", "apply", "-f", str(root / f"{p}.yaml"))
    sh(env, str(BIN / "assay"), "deploy", "--pool", "assay")
    svc.env = env  # the workers trace too
    workers = [svc.worker(f"load-{i}", args.load_limit) for i in range(2)]
    t = time.monotonic()
    try:
        ids = json.loads(sh(env, sys.executable, "-c", START_MANY, *names).strip().splitlines()[-1])
        deadline = time.time() + args.load_timeout
        while time.time() < deadline:
            try:
                states = json.loads(sh(env, sys.executable, "-c", STATES, *ids).strip().splitlines()[-1])
            except SystemExit:  # the server busy for a moment
                time.sleep(5)
                continue
            if all(s[0] in ("COMPLETED", "FAILED", "CRASHED", "CANCELLED") for s in states.values()):
                break
            time.sleep(5)
    finally:
        for w in workers:
            stop(w)
    wall = time.monotonic() - t
    import pymongo

    client = pymongo.MongoClient(env["MONGODB_URI"])
    runs = {d["_id"]: d.get("run_type") for d in client.get_default_database().runs.find({"project_id": {"$in": names}})}
    client.close()
    lines = trace.read_text().splitlines() if trace.exists() else []
    failures = sorted({s[2] for s in states.values() if s[0] != "COMPLETED"})
    return {"prefect_db": svc.prefect_db, "discoveries": len(ids),
            "final_states": sorted({f"{s[0]}/{s[1]}" for s in states.values()}), "failures": failures[:5],
            "run_types": {k: list(runs.values()).count(k) for k in set(runs.values())},
            "statements": len(lines), "processes": len({x.split()[0] for x in lines}),
            "peak_concurrent_statements": peak_concurrency(lines), "limit": 2, "wall_s": wall}


def index_figures(root: Path, mongo_uri: str | None) -> dict:
    """The choice of a shared index without a Qdrant server, measured: the same collection (``n`` vectors of
    384 floats, as all-MiniLM-L6-v2 writes) in Qdrant local mode and in the store (tinymongo, MongoDB): the
    first search of a process (it loads the collection), a search after it, a search after another process
    wrote, and a write of 50 points."""
    import numpy as np
    import tinymongo
    from qdrant_client import QdrantClient

    from assay.vectors.index import VectorIndex
    from assay.vectors.store_index import StoreIndex

    rng = np.random.default_rng(1)
    out = {}
    for n in (300, 3000):
        items = [(f"k{i}", rng.normal(size=384).astype(np.float32).tolist(), {"step": i}) for i in range(n)]
        q = rng.normal(size=384).tolist()
        kinds = {"qdrant-local": lambda n=n: VectorIndex(QdrantClient(path=str(root / f"qd{n}")), local=True),
                 "store-tinymongo": lambda n=n: StoreIndex(tinymongo.TinyMongoClient(str(root / f"tm{n}"),
                                                                                 backend="sqlite")["a"])}
        if mongo_uri:
            import pymongo

            kinds["store-mongodb"] = lambda n=n: StoreIndex(pymongo.MongoClient(mongo_uri)[f"ix{n}"], backend="mongodb")
        for kind, make in kinds.items():
            idx = make()
            idx.ensure("c", 384)
            t = time.perf_counter()
            for i in range(0, n, 256):
                idx.upsert("c", items[i:i + 256])
            load_s = time.perf_counter() - t
            if kind == "qdrant-local":
                idx.close()
                t = time.perf_counter()
                idx = make()  # what a second process pays to open the folder (the first must have closed it)
                open_s = time.perf_counter() - t
            else:
                other = make()  # another process's view of the same store
                t = time.perf_counter()
                other.search("c", q, 10)
                open_s = time.perf_counter() - t
            t = time.perf_counter()
            for _ in range(20):
                idx.search("c", q, 10)
            warm_ms = (time.perf_counter() - t) / 20 * 1000
            t = time.perf_counter()
            idx.upsert("c", items[:50])
            write50_ms = (time.perf_counter() - t) * 1000
            t = time.perf_counter()
            idx.search("c", q, 10)
            after_write_ms = (time.perf_counter() - t) * 1000
            out[f"{kind} n={n}"] = {"write_all_s": round(load_s, 2), "first_search_or_open_s": round(open_s, 3),
                                    "search_ms": round(warm_ms, 2), "write_50_ms": round(write50_ms, 1),
                                    "search_after_a_write_ms": round(after_write_ms, 1)}
            print(kind, n, json.dumps(out[f"{kind} n={n}"]), flush=True)
            idx.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--delay", type=float, default=4.0, help="seconds each analysis answer takes")
    ap.add_argument("--areas", type=int, default=12)
    ap.add_argument("--workers", default="1,2,4")
    ap.add_argument("--skip-scale", action="store_true", help="only the load figure")
    ap.add_argument("--load", action="store_true", help="also the load figure (20 discoveries at once)")
    ap.add_argument("--load-runs", type=int, default=20)
    ap.add_argument("--load-steps", type=int, default=6)
    ap.add_argument("--load-limit", type=int, default=4, help="flow runs each of the two workers runs at once")
    ap.add_argument("--load-timeout", type=float, default=3600)
    ap.add_argument("--prefect-db", default="sqlite", metavar="sqlite|DSN",
                    help="the Prefect server's database: its default SQLite, or a PostgreSQL DSN to create a "
                         "throw-away database on (e.g. postgresql://postgres@127.0.0.1:5432/postgres)")
    ap.add_argument("--index", action="store_true", help="only the index figures (Qdrant local vs the store)")
    args = ap.parse_args()
    try:
        args.workers = [int(x) for x in args.workers.split(",") if x.strip()]
    except ValueError:
        raise SystemExit(f"--workers {args.workers!r}: a comma-separated list of worker counts, e.g. 1,2,4") from None
    if args.areas < 1 or any(n < 1 for n in args.workers):
        raise SystemExit("--areas and --workers must be positive")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True,
                            text=True).stdout.strip()
    root = Path(tempfile.mkdtemp(prefix="bench-scale-"))
    analyst = Analyst(args.delay)
    analyst.url = analyst.serve()
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"])
    py_s = time.perf_counter() - t0
    figures = {"date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="minutes"), "commit": commit,
               "load_avg_start": os.getloadavg(), "python_c_pass_s": round(py_s, 3), "delay_s": args.delay}
    if args.index:
        figures["index"] = index_figures(root, os.environ.get("BENCH_MONGODB_URI"))
        print(json.dumps(figures, indent=1, default=str))
        return
    svc = Services(root, args.prefect_db)
    try:
        if not args.skip_scale:
            figures["scale"] = scale_figures(args, svc, analyst)
            figures["llm_peak_concurrent_analyses"] = analyst.peak
        if args.load or args.skip_scale:
            figures["load"] = load_figure(args, svc)
    finally:
        svc.close()
    figures["load_avg_end"] = os.getloadavg()
    print(json.dumps(figures, indent=1, default=str))


if __name__ == "__main__":
    main()
