"""Shared fixtures: an isolated ASSAY_HOME and PREFECT_HOME per session, real services."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

_SESSION_DIR = Path(tempfile.mkdtemp(prefix="assay-tests-"))
os.environ["ASSAY_HOME"] = str(_SESSION_DIR / "home")
os.environ["PREFECT_HOME"] = str(_SESSION_DIR / "prefect")
# what the sessions of one pytest run share: made by the first process (the xdist controller, or the one process);
# the workers inherit the environment. Removed with that process's session folder.
RUN_DIR = Path(os.environ.setdefault("ASSAY_TESTS_RUN_DIR", str(_SESSION_DIR / "run")))
# the local server's template Prefect database (assay_flows/local_server.py): built once per run, not in ~/.cache;
# every Prefect server the tests start on a fresh home copies it (tests/prefect_servers.py: seed_database)
os.environ["ASSAY_CACHE_DIR"] = str(RUN_DIR / "cache")
os.environ["PREFECT_SERVER_ANALYTICS_ENABLED"] = "false"
os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "120")
os.environ["PREFECT_LOGGING_LEVEL"] = "WARNING"
# a command run by a test uses one ephemeral server, as before: a local server outliving it would keep
# running after the session (tests/flows/test_local_server.py sets ASSAY_PREFECT_SERVER=local itself)
os.environ["ASSAY_PREFECT_SERVER"] = "ephemeral"
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ.pop("MONGODB_URI", None)
os.environ.pop("QDRANT_URL", None)
for _k in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL"):
    os.environ.pop(_k, None)

# The statistical leads scan (``analysis.leads_probes``, 40 probe queries before an LLM explores) is off by default
# in the tests: most LLM runs here test something else, and the scan costs each one ~1 s of CPU on the small
# warehouse, 2-4 s on a demo (bench/README.md, session 8). A test about the leads sets ``leads_probes`` itself, or carries ``@pytest.mark.leads_default`` to run with
# the product's default (40, the scan on; at least one end-to-end run does). Subprocesses (the CLI, Prefect
# workers) do not read this: their projects say ``analysis: {leads_probes: 0}`` where the leads are not the subject.
def _product_leads_probes() -> int:
    from assay.models import AnalysisConfig

    return AnalysisConfig.model_fields["leads_probes"].default


PRODUCT_LEADS_PROBES = _product_leads_probes()  # read before the tests change it (assay/models.py: 40)


def set_leads_default(probes: int) -> None:
    """The default of ``analysis.leads_probes`` for projects made in this process (Project embeds
    AnalysisConfig's validator: both are rebuilt)."""
    from assay.models import AnalysisConfig, Project

    AnalysisConfig.model_fields["leads_probes"].default = probes
    AnalysisConfig.model_rebuild(force=True)
    Project.model_rebuild(force=True)


set_leads_default(0)

REQUIRE_SERVICES = os.environ.get("ASSAY_REQUIRE_SERVICES") == "1"
PG_DSN = os.environ.get("ASSAY_TEST_PG_DSN", "host=127.0.0.1 port=5432 user=postgres dbname=test")


def pytest_addoption(parser):
    parser.addoption("--update-goldens", action="store_true", default=False,
                     help="rewrite the golden fixtures under tests/data/golden/ from what the code produces now")


def pytest_configure(config):
    from tests import goldens

    goldens.set_update(config.getoption("--update-goldens", default=False))


# tiers, by folder: unit (no services, no Prefect), flow (one Prefect test harness), integration (real engines)
_TIERS = {"unit": "unit", "flows": "flow", "integration": "integration"}
# service markers, by the fixture that starts or reaches the service (files that start their own server or
# browser set theirs with ``pytestmark``); every one of them also carries ``services``
_SERVICE_FIXTURES = {"pg_dsn": "postgres", "mongo_uri": "mongodb", "mysql_dsn": "mariadb"}
SERVICE_MARKERS = ("postgres", "mongodb", "mariadb", "prefect_server", "chromium")


# the order files are handed to the xdist workers in (`make test` runs with `--dist loadfile
# --no-loadscope-reorder`, so this order is kept): the files that run deployments on a real Prefect server
# (two pairs, each pair sharing one server: _SHARED_UNITS) take minutes where most files take seconds, so
# they start first, one pair on each worker, and
# the many short files fill in around them; handed out last (xdist's default order, by number of tests),
# they ran alone at the end on one worker while the other sat idle. Then the tiers in their order.
# Among them, longest first (measured: bench/README.md, "Test suite time"), so that the two longest start
# together on the two workers; a file carrying the marker that is not listed comes after these.
_FIRST_MARKERS = ("prefect_server",)
_LONGEST_FIRST = ("test_prefect_workers.py", "test_prefect_scale_out.py", "test_prefect_server.py",
                  "test_deploy_paths.py")
_TIER_ORDER = {"unit": 1, "flow": 2, "integration": 3}
# within the integration tier, the long units that cannot be split start first (CPU s in a fresh-clone run,
# bench/README.md, session 18: 61, 44, 19, 18, 16), and the replays, split into one unit per test (SPLIT_FILES,
# ~8 s each), end it: the last minute of a run is shared by every worker (it was one worker replaying alone
# for ~70 s while the others sat idle)
_LONG_INTEGRATION = ("test_embedding_cache.py", "test_mysql_demo.py", "test_mysql.py", "test_ask_eval.py",
                     "test_schema_index.py", "test_statistical_demo.py", "test_report_browser.py")
SPLIT_FILES = ("tests/integration/test_replay_transcripts.py",)


def _start_rank(item) -> float:
    name = Path(str(item.fspath)).name
    if any(item.get_closest_marker(m) for m in _FIRST_MARKERS):
        return _LONGEST_FIRST.index(name) / len(_LONGEST_FIRST) if name in _LONGEST_FIRST else 0.99
    rank = next((rank for tier, rank in _TIER_ORDER.items() if item.get_closest_marker(tier)), 4)
    if rank == _TIER_ORDER["integration"]:
        if name in _LONG_INTEGRATION:
            return rank - 0.5 + _LONG_INTEGRATION.index(name) / (2 * len(_LONG_INTEGRATION))
        if any(str(item.fspath).endswith(f) for f in SPLIT_FILES):
            return rank + 0.5
    return rank


def pytest_collection_modifyitems(config, items):
    for item in items:
        parts = Path(str(item.fspath)).parts
        tier = next((_TIERS[p] for p in parts[-3:-1] if p in _TIERS), None)
        if tier:
            item.add_marker(tier)
        for fixture, marker in _SERVICE_FIXTURES.items():
            if fixture in item.fixturenames:
                item.add_marker(marker)
        if any(item.get_closest_marker(m) for m in SERVICE_MARKERS):
            item.add_marker("services")
    # a file is one unit of work under loadfile: it ranks as its earliest test; the sort is stable, so within
    # a rank the collection order is kept
    rank: dict[str, float] = {}
    for item in items:
        rank[str(item.fspath)] = min(rank.get(str(item.fspath), 9), _start_rank(item))
    items.sort(key=lambda item: rank[str(item.fspath)])


# files that share an expensive session fixture run on one worker, as one unit of work (a session fixture is
# per worker: split over both, it ran twice). By path prefix -> unit name:
# - the flow tier shares a Prefect test harness (a server in a subprocess, ~25 s of CPU to start), but for the
#   files of OWN_SERVER_FLOW_FILES (tests/flows/conftest.py);
# - two files read the one statistical discovery of the gaming demo (``gaming_statistical``, 40 steps);
# - two files use the throw-away MariaDB server (``mysql_dsn``: mariadb-install-db, then a server start);
# - two pairs of files each share a real `prefect server start` (tests/integration/conftest.py).
# (the flow files that start their own servers and run without the harness are units of their own: listed first)
OWN_SERVER_FLOW_FILES = ("test_local_server.py", "test_prefect_db_template.py", "test_cli_server_start.py")
_SHARED_UNITS = {
    **{f"tests/flows/{name}": f"tests/flows/{name}" for name in OWN_SERVER_FLOW_FILES},
    "tests/flows/": "tests/flows",
    "tests/integration/test_prefect_server.py": "prefect_serve_server",
    "tests/integration/test_deploy_paths.py": "prefect_serve_server",
    "tests/integration/test_prefect_workers.py": "prefect_pool_server",
    "tests/integration/test_prefect_scale_out.py": "prefect_pool_server",
    "tests/integration/test_statistical_demo.py": "gaming_statistical",
    "tests/integration/test_report_browser.py": "gaming_statistical",
    "tests/integration/test_mysql.py": "mariadb",
    "tests/integration/test_mysql_demo.py": "mariadb",
}


def unit_of(scope: str) -> str:
    """The unit of work a file (an xdist loadfile scope, its path from the rootdir) belongs to."""
    return next((unit for prefix, unit in _SHARED_UNITS.items() if scope.startswith(prefix)), scope)


def work_unit(nodeid: str, scope: str) -> str:
    """The unit of work of a test (its node id) in a file (its loadfile scope): the test itself in SPLIT_FILES."""
    return nodeid if scope in SPLIT_FILES else unit_of(scope)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """`--dist loadfile`, with the files of each _SHARED_UNITS entry as one unit, and the units handed out in
    collection order (the order pytest_collection_modifyitems gives; xdist would reorder them by number of
    tests)."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class TierScheduling(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid, super()._split_scope(nodeid))

    config.option.loadscopereorder = False
    return TierScheduling(config, log)


def pytest_sessionfinish(session, exitstatus):
    shutil.rmtree(_SESSION_DIR, ignore_errors=True)


@pytest.fixture(autouse=True)
def _leads_default(request):
    """``@pytest.mark.leads_default``: this test runs with the product's default leads scan."""
    if request.node.get_closest_marker("leads_default") is None:
        yield
        return
    set_leads_default(PRODUCT_LEADS_PROBES)
    try:
        yield
    finally:
        set_leads_default(0)


def need_service(name: str, reason: str):
    """Skip with a visible reason on a user's machine; fail under CI."""
    if REQUIRE_SERVICES:
        pytest.fail(f"{name} is required under ASSAY_REQUIRE_SERVICES=1 but {reason}")
    pytest.skip(f"{name} not available: {reason}")


@pytest.fixture(scope="session")
def session_dir() -> Path:
    return _SESSION_DIR


@pytest.fixture(scope="session")
def settings():
    from assay.settings import load_settings

    return load_settings()


@pytest.fixture(scope="session")
def demo_dir(session_dir) -> Path:
    """Both demo warehouses at a small scale, generated once per session."""
    from assay.demo import generate

    out = session_dir / "demo"
    for name in ("ecommerce", "gaming"):
        generate(name, out, scale=0.2)
    return out


@pytest.fixture(scope="session")
def gaming_statistical(demo_dir):
    """One statistical discovery of the gaming demo (40 steps, inline), shared by every test that reads one:
    (project, result)."""
    from assay.models import Project, WarehouseConfig
    from assay.run.lifecycle import new_run_id, run_discovery_inline
    from assay.store import open_store

    p = Project(id="stat-gaming", pack="gaming", category="match3", max_steps=40, analyst="statistical",
                warehouse=WarehouseConfig(kind="duckdb", settings={"path": str(demo_dir / "gaming.duckdb")}))
    open_store(settings_of()).save_project(p)
    return p, run_discovery_inline(p.id, new_run_id())


def settings_of():
    from assay.settings import load_settings

    return load_settings()


@pytest.fixture(scope="session")
def embedder():
    from assay.vectors import get_embedder

    e = get_embedder()
    e.embed_one("warm up")
    return e


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def mongo_uri(session_dir):
    """A real MongoDB wire-protocol server (nx-27017) for the MongoDB path."""
    exe = shutil.which("nx-27017") or str(Path(sys.executable).parent / "nx-27017")
    if not Path(exe).exists():
        need_service("nx-27017", "the nx-27017 executable is not installed")
    port = _free_port()
    data = session_dir / "nx"
    data.mkdir(exist_ok=True)
    proc = subprocess.Popen([exe, "--host", "127.0.0.1", "-p", str(port), "--data-dir", str(data),
                             "--log-file", str(session_dir / "nx.log"), "--pid-file", str(session_dir / "nx.pid")],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 30
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            break
        except OSError:
            time.sleep(0.2)
    else:
        proc.kill()
        need_service("nx-27017", "the server did not start")
    yield f"mongodb://127.0.0.1:{port}/assay_test"
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()


@pytest.fixture(scope="session")
def pg_dsn():
    try:
        import psycopg

        with psycopg.connect(PG_DSN, connect_timeout=3) as c:
            c.execute("SELECT 1")
    except Exception as exc:
        need_service("PostgreSQL", f"cannot connect with {PG_DSN!r} ({type(exc).__name__})")
    return PG_DSN


MYSQL_DSN_ENV = "ASSAY_TEST_MYSQL_DSN"  # .ci/run starts a throw-away MariaDB and sets this


def _mysql_answers(dsn: str) -> bool:
    try:
        import pymysql

        from assay.warehouse.mysql import parse_dsn

        pymysql.connect(**parse_dsn(dsn), connect_timeout=3).close()
        return True
    except Exception:
        return False


@pytest.fixture(scope="session")
def mysql_dsn(session_dir):
    """A MariaDB/MySQL server: the one .ci/run started (ASSAY_TEST_MYSQL_DSN), else a throw-away
    mariadbd this session starts on a free loopback port with its own data dir, and stops."""
    dsn = os.environ.get(MYSQL_DSN_ENV)
    if dsn:
        if not _mysql_answers(dsn):
            need_service("MariaDB", f"cannot connect with {dsn!r} ({MYSQL_DSN_ENV})")
        yield dsn
        return
    script = Path(__file__).parent / "services" / "mariadb.sh"
    if not (shutil.which("mariadbd") or Path("/usr/sbin/mariadbd").exists()) or not shutil.which("mariadb-install-db"):
        need_service("MariaDB", "mariadbd / mariadb-install-db are not installed")
    data = session_dir / "mariadb"
    env = dict(os.environ, PATH=os.environ.get("PATH", "") + ":/usr/sbin")
    proc = subprocess.run([str(script), "start", str(data), str(_free_port())], capture_output=True, text=True,
                          env=env, timeout=120)
    if proc.returncode != 0:
        need_service("MariaDB", f"the throw-away server did not start: {proc.stderr.strip()[-300:]}")
    try:
        yield proc.stdout.strip()
    finally:
        subprocess.run([str(script), "stop", str(data)], env=env, timeout=30)
