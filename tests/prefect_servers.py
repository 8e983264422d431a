"""Real `prefect server start` processes on loopback, shared by the integration files that need one.

A server costs ~10-20 s of CPU to start (its database migrations, its services) and keeps polling while it lives,
so the four files that used one each now share two (tests/integration/conftest.py): one for the served and
deployed paths (`assay serve`, `prefect deploy`, `assay deploy`; the scheduler on) and one for the work-pool
workers (the scheduler off). Between users the server is reset to what a fresh one holds: no deployments and
no work pools (``PrefectServer.reset``); each user has its own ``ASSAY_HOME``, so `assay serve` sees only its
own projects.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

BIN = Path(sys.executable).parent

# services the served paths do not use (they poll the server's SQLite while it idles between runs); the
# scheduler stays (the schedule test needs it)
SERVE_UNUSED_SERVICES = (
    "TRIGGERS",
    "FOREMAN",
    "LATE_RUNS",
    "PAUSE_EXPIRATIONS",
    "CANCELLATION_CLEANUP",
    "REPOSSESSOR",
    "CLEANUP_RECONCILER",
)
# the work-pool tests use none of them: fewer writers on the server's SQLite file (under load a writer held it
# for 60 s at a time, "database is locked")
POOL_UNUSED_SERVICES = ("SCHEDULER", *SERVE_UNUSED_SERVICES)

SERVE_SETTINGS = {
    # the scheduler looks every 60 s by default; the schedule test should not wait that long
    "PREFECT_SERVER_SERVICES_SCHEDULER_LOOP_SECONDS": "2",
    # and writes 3 runs ahead, not 100 (a schedule's hour ahead, capped): the test needs the first
    "PREFECT_SERVER_SERVICES_SCHEDULER_MAX_RUNS": "3",
    "PREFECT_SERVER_SERVICES_SCHEDULER_MIN_RUNS": "1",
    **{f"PREFECT_SERVER_SERVICES_{s}_ENABLED": "false" for s in SERVE_UNUSED_SERVICES},
    # nor for `assay serve`'s runner or a worker to look for runs to start (every 10 s by default)
    "PREFECT_RUNNER_POLL_FREQUENCY": "1",
    "PREFECT_WORKER_QUERY_SECONDS": "1",
}
POOL_SETTINGS = {"DO_NOT_TRACK": "1", **{f"PREFECT_SERVER_SERVICES_{s}_ENABLED": "false" for s in POOL_UNUSED_SERVICES}}


def template_database() -> Path:
    """The installed Prefect's template database of this pytest run (assay_flows/local_server.py: a database at
    the migrations' head, its blocks registered), made once per run under a lock (every xdist worker shares
    ``ASSAY_CACHE_DIR``, tests/conftest.py, and the local server's own starts copy the same file): a copy of the
    one `make install` built (``installed_template``), else built here."""
    from assay_flows import local_server

    path = local_server.template_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.parent / ".tests.lock", "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # a second worker waits for the first one's build
        if not path.exists() and (installed := installed_template()) is not None:
            shutil.copyfile(installed, path.with_name(f".{path.name}.tmp"))
            path.with_name(f".{path.name}.tmp").replace(path)
        if not path.exists():
            env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_API_")}
            r = subprocess.run([sys.executable, "-m", "assay_flows.local_server", "--prepare"], env=env,
                               capture_output=True, text=True, timeout=600)
            assert r.returncode == 0 and path.exists(), r.stdout[-2000:] + r.stderr[-2000:]
    return path


def installed_template() -> Path | None:
    """The template `make install` built for this Prefect in the user's cache (``$XDG_CACHE_HOME/assay``), when
    it is at this Prefect's migration head: the run copies it instead of building its own (~10 s of CPU). The
    tests only read it; what they build stays in the run's own cache."""
    from assay_flows import local_server

    path = local_server.default_cache_dir() / "prefect-db" / f"{local_server.template_key()}.db"
    try:
        return path if local_server.is_current_template(path) else None
    except Exception:  # noqa: BLE001 - an unreadable file is no template: the run builds its own
        return None


def seed_database(db: Path) -> None:
    """A fresh home's database is the template's copy, as the local server's first start makes it: a `prefect
    server start` on it runs no migration (~5 s of CPU and 15 s of wall less per start, bench/README.md)."""
    if db.exists():
        return
    db.parent.mkdir(parents=True, exist_ok=True)
    tmp = db.with_name(f".{db.name}.{os.getpid()}")
    shutil.copyfile(template_database(), tmp)
    tmp.replace(db)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_http(url: str, proc: subprocess.Popen, timeout: float) -> bool:
    import httpx

    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            return False
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return True
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    return False


def stop(proc: subprocess.Popen) -> None:
    """SIGTERM to the process group (a server, `assay serve` or a worker, with what it started), then SIGKILL."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)


class PrefectServer:
    """One `prefect server start` on a free loopback port with its own ``PREFECT_HOME`` under ``root``; started
    by ``ensure`` (again after ``stop``), reset to a fresh server's state by ``reset``."""

    def __init__(self, root: Path, settings: dict[str, str]):
        self.root = root
        self.settings = settings
        self.proc: subprocess.Popen | None = None
        self.url = ""
        self.starts = 0

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def _env(self) -> dict[str, str]:
        return {
            **os.environ,
            "PREFECT_HOME": str(self.root / "prefect"),
            "PREFECT_API_URL": self.url,
            "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
            "PREFECT_LOGGING_LEVEL": "WARNING",
            "PREFECT_UI_ENABLED": "false",
            **self.settings,
        }

    def ensure(self) -> None:
        """Start the server unless it runs; a server that does not answer is a missing service."""
        if self.running:
            return
        from tests.conftest import need_service

        self.root.mkdir(parents=True, exist_ok=True)
        seed_database(self.root / "prefect" / "prefect.db")
        port = free_port()
        self.url = f"http://127.0.0.1:{port}/api"
        log = self.root / "server.log"
        self.proc = subprocess.Popen(
            [str(BIN / "prefect"), "server", "start", "--host", "127.0.0.1", "--port", str(port), "--no-ui"],
            env=self._env(),
            stdout=open(log, "a"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.starts += 1
        if not wait_http(f"{self.url}/health", self.proc, 180):
            self.stop()
            need_service("prefect server", log.read_text()[-500:])

    def stop(self) -> None:
        if self.proc is not None:
            stop(self.proc)
            self.proc = None

    def reset(self) -> None:
        """What a fresh server holds: every deployment and work pool the last user made is deleted (their
        schedules and scheduled runs with them); flow runs of earlier users stay, under their own ids."""
        import httpx

        with httpx.Client(base_url=self.url, timeout=30) as c:
            # each request through ``retrying``: the last user's `assay serve` or worker may have just stopped, and
            # a server still writing its runs' states answers a delete with 503 ("database is locked"; seen in
            # a whole-suite run: two tests errored in their setup)
            for d in retrying(lambda: c.post("/deployments/filter", json={})):
                gone(retrying_response(lambda d=d: c.delete(f"/deployments/{d['id']}")))
            for p in retrying(lambda: c.post("/work_pools/filter", json={})):
                gone(retrying_response(lambda p=p: c.delete(f"/work_pools/{p['name']}")))
            assert retrying(lambda: c.post("/deployments/filter", json={})) == []
            assert retrying(lambda: c.post("/work_pools/filter", json={})) == []

    def client_env(self, assay_home: Path) -> dict[str, str]:
        """The environment of the commands, servers and workers a test runs against this server: its own
        ``ASSAY_HOME``, whose embedding cache is the one every user of this server shares (a text embedded once
        is read back: a flow run loads the embedding model, importing torch, only for a text no earlier user
        embedded, as it did when the users of a server shared one home)."""
        assay_home.mkdir(parents=True, exist_ok=True)
        cache = assay_home / "embeddings.sqlite"
        if not os.path.lexists(cache):
            cache.symlink_to(self.root / "embeddings.sqlite")
        return {**self._env(), "ASSAY_HOME": str(assay_home)}


def gone(r) -> None:
    """A delete's answer: done, or already gone (404: a retried delete whose first try went through)."""
    if r.status_code != 404:
        r.raise_for_status()


def retrying_response(call, attempts: int = 5):
    """``call()``'s response once it is not a 503 (or the last try's): a timeout, a dropped connection or a 503
    is tried again 1, 2, 4, 8 s later."""
    import httpx

    for i in range(attempts):
        try:
            r = call()
            if r.status_code != 503 or i == attempts - 1:
                return r
        except (httpx.TimeoutException, httpx.TransportError):
            if i == attempts - 1:
                raise
        time.sleep(2**i)
    raise AssertionError("unreachable")


def retrying(call, attempts: int = 5):
    """A request to a SQLite-backed server busy with the workers' writes: a timeout, a dropped connection or a
    503 is tried again (1, 2, 4, 8 s later) instead of failing the test on one slow answer; its JSON."""
    return retrying_response(call, attempts).raise_for_status().json()


def create_flow_run(api_url: str, name: str, parameters: dict | None = None) -> str:
    """A flow run of the deployment ``flow/deployment`` (its id), made over the REST API as the UI's Run button
    and ``run_deployment`` make one (an idempotency key: a retried request never makes a second run). In this
    process: a ``python -c`` with ``run_deployment`` cost each call ~2-3 s of CPU importing Prefect."""
    import uuid

    import httpx

    flow, deployment = name.split("/", 1)
    with httpx.Client(base_url=api_url, timeout=30) as c:
        d = retrying(lambda: c.get(f"/deployments/name/{flow}/{deployment}"))
        body = {"parameters": parameters or {}, "idempotency_key": uuid.uuid4().hex}
        return retrying(lambda: c.post(f"/deployments/{d['id']}/create_flow_run", json=body))["id"]


FINAL_STATES = ("COMPLETED", "FAILED", "CRASHED", "CANCELLED")


def wait_flow_run(api_url: str, flow_run_id: str, timeout: float) -> dict:
    """Poll a flow run (every second, as ``run_deployment(poll_interval=1)`` did) until its state is final or
    ``timeout`` passes: {"state": its type, "id", "message"}."""
    import httpx

    deadline = time.time() + timeout
    with httpx.Client(base_url=api_url, timeout=30) as c:
        while True:
            fr = retrying(lambda: c.get(f"/flow_runs/{flow_run_id}"))
            state = fr.get("state") or {}
            if state.get("type") in FINAL_STATES or time.time() > deadline:
                return {"state": state.get("type"), "id": fr["id"], "message": state.get("message")}
            time.sleep(1)
