"""A local Prefect server that later `assay` commands reuse (issue #20 item 8).

Prefect's ephemeral server costs every command its start: 8 s on a warm home, 17 s on a fresh one (the
database migrations). The first command that needs Prefect instead starts this server in the background:
the same API as the ephemeral one (same ``PREFECT_HOME`` database, no UI, no services), bound to loopback
on a free port, recorded in ``$PREFECT_HOME/assay-server.json``. Later commands find it there and connect
to it when it answers; it exits by itself after ``ASSAY_PREFECT_SERVER_IDLE`` seconds (default 1800) with
no request in flight and none received (a running flow holds its events socket open, so a long run keeps
it alive). ``assay local-server stop`` stops it.

What always wins: ``PREFECT_API_URL`` (environment or the active Prefect profile) means a real server and
nothing is started; ``ASSAY_PREFECT_SERVER=ephemeral`` keeps one ephemeral server per command. A stale
record or a dead server is replaced; a server that does not answer in time leaves the command on the
ephemeral server, never waiting past the start-up timeout.

The client side (``connect``) is plain Python: it must run before Prefect is imported, because Prefect
reads its settings once, at import. The server side (``serve``) is this module run with ``-m``.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

STATE = "assay-server.json"
LOCK = "assay-server.lock"  # held by the live server for its whole life
START_LOCK = "assay-server.start.lock"  # held by the command that starts one, so two never both start
LOG = "assay-server.log"
DEFAULT_IDLE_S = 1800.0


def idle_seconds() -> float:
    """How long the server stays up unused (``ASSAY_PREFECT_SERVER_IDLE``, default 30 min)."""
    return float(os.environ.get("ASSAY_PREFECT_SERVER_IDLE") or DEFAULT_IDLE_S)


def prefect_home() -> Path:
    return Path(os.environ.get("PREFECT_HOME") or Path.home() / ".prefect").expanduser()


def configured_api_url() -> str | None:
    """The user's own Prefect server, if any: ``PREFECT_API_URL`` from the environment, or from the active
    profile of ``profiles.toml`` (read the way Prefect reads it, without importing Prefect)."""
    if os.environ.get("PREFECT_API_URL"):
        return os.environ["PREFECT_API_URL"]
    import tomllib

    path = Path(os.environ.get("PREFECT_PROFILES_PATH") or prefect_home() / "profiles.toml").expanduser()
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, ValueError):
        return None
    active = os.environ.get("PREFECT_PROFILE") or data.get("active") or "ephemeral"
    return (data.get("profiles", {}).get(active) or {}).get("PREFECT_API_URL") or None


def _healthy(url: str, timeout: float = 2.0) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/health", timeout=timeout) as r:  # noqa: S310 - loopback URL we wrote
            return r.status == 200
    except OSError:
        return False


def _read_state(home: Path) -> dict | None:
    try:
        return json.loads((home / STATE).read_text())
    except (OSError, ValueError):
        return None


def _alive(home: Path) -> bool:
    """Whether a server process holds the lock (a pid in a file can be reused; a lock dies with its holder)."""
    home.mkdir(parents=True, exist_ok=True)
    with open(home / LOCK, "a+") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return True
        fcntl.flock(f, fcntl.LOCK_UN)
        return False


def status(home: Path | None = None) -> dict | None:
    """The running server's record (``url``, ``pid``, ``idle_s``) when one answers, else None."""
    home = home or prefect_home()
    st = _read_state(home)
    if st and _alive(home) and _healthy(st["url"]):
        return st
    return None


def _wait_record(home: Path, timeout: float, proc: subprocess.Popen | None = None) -> dict | None:
    """The server's record, once written (right after it binds its port, before its slow start)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        st = _read_state(home)
        if st and (proc is None or st.get("pid") == proc.pid):
            return st
        if proc is not None and proc.poll() is not None:
            return None  # it exited: its log says why
        if proc is None and not _alive(home):
            return None
        time.sleep(0.05)
    return None


def begin(timeout: float) -> tuple[str | None, subprocess.Popen | None]:
    """Find the local server, or start it: its API URL at once (before it answers, so the caller can set
    ``PREFECT_API_URL`` and import Prefect while it starts) and the process when this call started it.
    ``(None, None)`` when there is no URL to use (then the command uses the ephemeral server)."""
    home = prefect_home()
    home.mkdir(parents=True, exist_ok=True)
    st = _read_state(home)
    if st and _healthy(st["url"], 1.0):
        return st["url"], None
    with open(home / START_LOCK, "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another command is starting one: use it once it is recorded
        try:
            if _alive(home):  # running or starting
                st = _wait_record(home, timeout)
                return (st["url"], None) if st else (None, None)
            with contextlib.suppress(OSError):
                (home / STATE).unlink()  # stale: its server is gone
            proc = start(home)
            st = _wait_record(home, min(timeout, 30.0), proc)
            if st is None:
                if proc.poll() is None:
                    proc.terminate()
                return None, None
            return st["url"], proc
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def wait(url: str, timeout: float, proc: subprocess.Popen | None = None) -> bool:
    """Whether the server at ``url`` answers within ``timeout``. One this command started and that does
    not answer in time is stopped (never left half-started)."""
    deadline = time.monotonic() + timeout
    while True:
        if _healthy(url):
            return True
        if (proc is not None and proc.poll() is not None) or time.monotonic() >= deadline:
            break
        time.sleep(0.2)
    if proc is not None and proc.poll() is None:
        proc.terminate()
    return False


def connect(timeout: float | None = None) -> str | None:
    """``begin`` then ``wait``: the URL of a local server that answers, or None."""
    if timeout is None:
        timeout = float(os.environ.get("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS") or 90)
    url, proc = begin(timeout)
    return url if url and wait(url, timeout, proc) else None


def start(home: Path) -> subprocess.Popen:
    """Start the server detached from this command (its own session: Ctrl-C of the command spares it)."""
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    env.update(PREFECT_HOME=str(home), PREFECT_UI_ENABLED="0", PREFECT__SERVER_EPHEMERAL="1",
               PREFECT__SERVER_FINAL="1")
    env.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    env.setdefault("DO_NOT_TRACK", "1")
    root = str(Path(__file__).resolve().parent.parent)  # this checkout's assay_flows, whatever the cwd
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    log = open(home / LOG, "ab")  # noqa: SIM115 - handed to the child
    try:
        return subprocess.Popen([sys.executable, "-m", "assay_flows.local_server"], env=env, cwd=str(home),
                                stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
    finally:
        log.close()


def stop(home: Path | None = None, timeout: float = 15.0) -> int | None:
    """Stop the running server; returns its pid, or None when none was running."""
    home = home or prefect_home()
    st = _read_state(home)
    if not st or not _alive(home):
        with contextlib.suppress(OSError):
            (home / STATE).unlink()
        return None
    with contextlib.suppress(ProcessLookupError):
        os.kill(st["pid"], signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while _alive(home) and time.monotonic() < deadline:
        time.sleep(0.1)
    if _alive(home):
        with contextlib.suppress(ProcessLookupError):
            os.kill(st["pid"], signal.SIGKILL)
        while _alive(home) and time.monotonic() < deadline + 5:
            time.sleep(0.1)
    if not _alive(home) and (_read_state(home) or {}).get("pid") == st["pid"]:
        with contextlib.suppress(OSError):
            (home / STATE).unlink()
    return st["pid"]


# ------------------------------------------------------------------------------------------ the server


class _Activity:
    """ASGI middleware: counts requests and websockets in flight and when the last one ended."""

    def __init__(self, app):
        self.app = app
        self.active = 0
        self.last = time.monotonic()

    async def __call__(self, scope, receive, send):
        if scope["type"] not in ("http", "websocket"):
            return await self.app(scope, receive, send)
        self.active += 1
        try:
            return await self.app(scope, receive, send)
        finally:
            self.active -= 1
            self.last = time.monotonic()

    def idle_for(self) -> float:
        return 0.0 if self.active else time.monotonic() - self.last


def serve() -> None:
    home = prefect_home()
    home.mkdir(parents=True, exist_ok=True)
    lock = open(home / LOCK, "a+")  # noqa: SIM115 - held until this process ends
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        sys.exit("another assay local Prefect server is running in this PREFECT_HOME")

    def leave(signum, frame):  # also after uvicorn, which re-raises the signal it stopped on: end through finally
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, leave)
    signal.signal(signal.SIGINT, leave)
    idle_s = idle_seconds()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/api"
    tmp = home / f".{STATE}.{os.getpid()}"
    tmp.write_text(json.dumps({"url": url, "pid": os.getpid(), "idle_s": idle_s, "started": time.time()}))
    try:
        tmp.replace(home / STATE)  # written before the app is up: clients wait for /health
        _run(sock, idle_s)
    finally:
        st = _read_state(home)
        if st and st.get("pid") == os.getpid():
            with contextlib.suppress(OSError):
                (home / STATE).unlink()


def _run(sock: socket.socket, idle_s: float) -> None:
    import asyncio

    import uvicorn
    from prefect.server.api.server import create_app

    app = _Activity(create_app(ephemeral=True, final=True))
    server = uvicorn.Server(uvicorn.Config(app, log_level="error", lifespan="on"))

    async def watch() -> None:
        while not server.should_exit:
            await asyncio.sleep(min(5.0, max(idle_s / 4, 0.2)))
            if app.idle_for() >= idle_s:
                server.should_exit = True

    async def main() -> None:
        task = asyncio.ensure_future(watch())
        try:
            await server.serve(sockets=[sock])
        finally:
            task.cancel()

    asyncio.run(main())


if __name__ == "__main__":
    serve()
