"""A local Prefect server that later `assay` commands reuse (issue #20 item 8).

Prefect's ephemeral server costs every command its start: 8 s on a warm home, 17 s on a fresh one (the
database migrations). The first command that needs Prefect instead starts this server in the background:
the same API as the ephemeral one (same ``PREFECT_HOME`` database, no UI) with Prefect's services (its scheduler
creates the flow runs of a deployment's schedule: without it, as in an ephemeral server, a project's cron schedule
served by `assay serve` never fired, which a new user met in session 26), bound to loopback
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

A fresh home's database (issue #20 item 8): Prefect builds it by running all of its Alembic migrations one
by one (16 s of a 25-s start on an idle machine). The server instead copies a *template* database into a
home that has none: one built once per installed Prefect by Prefect's own migrations and block registration
(``prepare_database``), kept in ``$ASSAY_CACHE_DIR/prefect-db`` (default ``~/.cache/assay/prefect-db``) and
named after Prefect's version and the file names of its SQLite migrations, so an upgrade, a downgrade or a
patched install names another template and the first server after it builds that one. The copy is then
started by Prefect exactly as an existing home is: it runs ``alembic upgrade head`` (a no-op at head) and
its block registration, so a template can never leave a home behind the installed Prefect.
``ASSAY_PREFECT_DB_TEMPLATE=0`` turns this off. ``python -m assay_flows.local_server --prepare`` builds the
template ahead of time (``make install`` does).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib.util
import json
import os
import shutil
import signal
import socket
import sqlite3
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
SETTLE_S = 10.0  # the least a server lives once up, however short its idle limit (see _run)


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
    env.update(PREFECT_HOME=str(home), PREFECT_UI_ENABLED="0", PREFECT__SERVER_FINAL="1")
    env.pop("PREFECT__SERVER_EPHEMERAL", None)  # an ephemeral server runs no scheduler
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


# ------------------------------------------------------------------------------- the template database


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/assay`` (``~/.cache/assay``): the cache without ``ASSAY_CACHE_DIR``."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache").expanduser() / "assay"


def cache_dir() -> Path:
    """Where assay keeps what outlives any one home (``ASSAY_CACHE_DIR``, else ``default_cache_dir``)."""
    if os.environ.get("ASSAY_CACHE_DIR"):
        return Path(os.environ["ASSAY_CACHE_DIR"]).expanduser()
    return default_cache_dir()


def _prefect_dir() -> Path:
    spec = importlib.util.find_spec("prefect")
    return Path(next(iter(spec.submodule_search_locations)))


def template_key() -> str:
    """The installed Prefect's database layout: its version and the names of its SQLite migrations (each
    named after its revision), read from the files, without importing Prefect."""
    prefect_dir = _prefect_dir()
    version = "unknown"
    with contextlib.suppress(OSError):
        text = (prefect_dir / "_build_info.py").read_text()
        version = next(line.split("=", 1)[1].strip().strip("'\"") for line in text.splitlines()
                       if line.startswith("__version__"))
    migrations = prefect_dir / "server" / "database" / "_migrations" / "versions" / "sqlite"
    names = sorted(p.name for p in migrations.glob("*.py") if p.name != "__init__.py")
    digest = hashlib.sha256("\n".join([version, *names]).encode()).hexdigest()[:16]
    return f"prefect-{version}-{digest}"


def template_path() -> Path:
    return cache_dir() / "prefect-db" / f"{template_key()}.db"


# a template of another Prefect (another virtualenv may share the cache) is kept while it is in use; one
# unused this long belongs to an install that has gone, and a temporary copy this old to a process that died
TEMPLATE_UNUSED_DAYS = 30
TEMPORARY_STALE_SECONDS = 3600


def prune_templates(now: float | None = None) -> list[Path]:
    """Remove other Prefects' templates unused for ``TEMPLATE_UNUSED_DAYS`` and temporary copies left by a
    process that died; the installed Prefect's template is never removed. Returns what was removed."""
    folder = template_path().parent
    if not folder.is_dir():
        return []
    now = time.time() if now is None else now
    current = template_path().name
    removed = []
    for p in folder.iterdir():
        try:
            age = now - p.stat().st_mtime
        except OSError:
            continue
        stale_template = (p.name.startswith("prefect-") and p.suffix == ".db" and p.name != current
                          and age > TEMPLATE_UNUSED_DAYS * 86400)
        stale_temporary = p.name.startswith(".prefect-") and age > TEMPORARY_STALE_SECONDS
        if stale_template or stale_temporary:
            with contextlib.suppress(OSError):
                p.unlink()
                removed.append(p)
    return removed


def is_current_template(path: Path, head: str | None = None) -> bool:
    """``path`` is a template database at the installed Prefect's migration head (``head``, read when not given)."""
    head = head if head is not None else _migrations_head()
    return path.is_file() and head is not None and _head_revision(path) == head


def _head_revision(path: Path) -> str | None:
    """The Alembic revision a database is stamped at, or None when it is not a complete Prefect database."""
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    except sqlite3.Error:
        return None
    try:
        if con.execute("PRAGMA quick_check").fetchone()[0] != "ok":
            return None
        row = con.execute("SELECT version_num FROM alembic_version").fetchone()
        return row[0] if row else None
    except sqlite3.Error:
        return None
    finally:
        con.close()


def _database_path() -> Path | None:
    """This home's SQLite database when Prefect would create and migrate it at start, else None (another
    database, an in-memory one, migrations off, or templates turned off). Imports Prefect's settings."""
    if os.environ.get("ASSAY_PREFECT_DB_TEMPLATE", "1").lower() in ("0", "false", "no", "off"):
        return None
    from prefect.settings import get_current_settings

    db = get_current_settings().server.database
    url = db.connection_url.get_secret_value() if db.connection_url is not None else ""
    prefix = "sqlite+aiosqlite:///"
    if not db.migrate_on_start or not url.startswith(prefix) or ":memory:" in url or "?" in url:
        return None
    return Path(url[len(prefix):])


def _migrations_head() -> str | None:
    """The head revision of the installed Prefect's SQLite migrations (from the files' names, no import)."""
    migrations = _prefect_dir() / "server" / "database" / "_migrations" / "versions" / "sqlite"
    revisions: dict[str, str | None] = {}
    for p in migrations.glob("*.py"):
        text = p.read_text(errors="replace")
        rev = down = None
        for line in text.splitlines():
            if line.startswith("revision ="):
                rev = line.split("=", 1)[1].strip().strip("'\"")
            elif line.startswith("down_revision ="):
                down = line.split("=", 1)[1].strip().strip("'\"")
        if rev:
            revisions[rev] = down
    heads = set(revisions) - set(revisions.values())
    return heads.pop() if len(heads) == 1 else None


async def _build(path: Path) -> None:
    """Prefect's own way to a working database: every migration, then the block types it registers."""
    from prefect.server.database import provide_database_interface
    from prefect.server.models.block_registration import run_block_auto_registration

    db = provide_database_interface()
    await db.create_db()
    async with await db.session() as session:
        await run_block_auto_registration(session=session)


def prepare_database() -> str:
    """Give this home's database a head start before Prefect's start-up runs: ``"copied"`` (the template,
    into a home with no database), ``"built"`` (no template yet: Prefect's migrations ran here and their
    result became the template), ``"existing"`` (the home has a database: Prefect migrates it as ever) or
    ``"off"`` (not a SQLite home database Prefect migrates at start, or templates turned off)."""
    path = _database_path()
    if path is None:
        return "off"
    if path.exists() and path.stat().st_size > 0:
        return "existing"
    path.parent.mkdir(parents=True, exist_ok=True)
    template = template_path()
    head = _migrations_head()
    if is_current_template(template, head):
        tmp = path.with_name(f".{path.name}.{os.getpid()}.template")
        shutil.copyfile(template, tmp)
        with contextlib.suppress(OSError):
            os.utime(template)  # in use: pruning goes by the last copy
            prune_templates()
        try:
            os.link(tmp, path)  # never over a database another process created meanwhile
        except FileExistsError:
            return "existing"
        finally:
            tmp.unlink()
        return "copied"
    import asyncio

    asyncio.run(_build(path))
    if head is not None and _head_revision(path) == head:  # only a complete database at the files' head
        template.parent.mkdir(parents=True, exist_ok=True)
        tmp = template.with_name(f".{template.name}.{os.getpid()}")
        src, dst = sqlite3.connect(str(path)), sqlite3.connect(str(tmp))
        try:
            src.backup(dst)
            dst.execute("PRAGMA journal_mode=DELETE")  # one self-contained file (Prefect sets WAL on its copy)
        finally:
            src.close()
            dst.close()
        tmp.replace(template)
        prune_templates()
    return "built"


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

    try:
        how = prepare_database()
    except Exception as e:  # noqa: BLE001 - Prefect's own start-up still creates the database
        how = f"failed ({type(e).__name__}: {e})"
    print(f"assay local server: database {how}", file=sys.stderr, flush=True)
    # not ephemeral: Prefect's services run (the scheduler, late runs, cancellation clean-up, the foreman); the
    # UI stays off (PREFECT_UI_ENABLED=0)
    app = _Activity(create_app(ephemeral=False, final=True))
    server = uvicorn.Server(uvicorn.Config(app, log_level="error", lifespan="on"))

    async def watch() -> None:
        # the idle clock starts once the app is up, and the server stays at least SETTLE_S after that: Prefect's
        # services start as background tasks of the lifespan, and a shutdown before one of them got going fails
        # in its stop() ("Reactive triggers not started", a traceback in the log: session 20's last CI, idle 1 s)
        while not server.started and not server.should_exit:
            await asyncio.sleep(0.1)
        up = app.last = time.monotonic()
        while not server.should_exit:
            await asyncio.sleep(min(5.0, max(idle_s / 4, 0.2)))
            if app.idle_for() >= idle_s and time.monotonic() - up >= SETTLE_S:
                server.should_exit = True

    async def main() -> None:
        task = asyncio.ensure_future(watch())
        try:
            await server.serve(sockets=[sock])
        finally:
            task.cancel()

    asyncio.run(main())


if __name__ == "__main__":
    if "--prepare" in sys.argv:  # build the template ahead of time, in a throwaway home
        import tempfile

        if template_path().exists() and _head_revision(template_path()) == _migrations_head():
            print(f"template ready: {template_path()}")
        else:
            with tempfile.TemporaryDirectory(prefix="assay-prefect-") as d:
                os.environ["PREFECT_HOME"] = d
                os.environ.pop("PREFECT_API_DATABASE_CONNECTION_URL", None)
                os.environ.pop("PREFECT_SERVER_DATABASE_CONNECTION_URL", None)
                print(f"template {prepare_database()}: {template_path()}")
    else:
        serve()
