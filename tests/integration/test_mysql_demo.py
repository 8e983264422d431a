"""`assay demo --mysql DSN` loads the gaming demo into MariaDB; a whole statistical discovery runs there."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pymysql
import pytest
from typer.testing import CliRunner

from assay.cli import app
from assay.settings import load_settings
from assay.store import open_store
from assay.warehouse.mysql import parse_dsn
from tests.prefect_servers import seed_database

ROOT = Path(__file__).resolve().parents[2]
STEPS = 20  # enough for the level-42 wall; each step is a few MariaDB queries


@pytest.fixture(scope="module")
def loaded(mysql_dsn):
    res = CliRunner().invoke(app, ["demo", "--mysql", mysql_dsn, "--which", "gaming", "--scale", "0.2",
                                   "--generate-only", "--max-steps", "40"])
    assert res.exit_code == 0, res.output
    yield res
    with pymysql.connect(**parse_dsn(mysql_dsn), autocommit=True) as c, c.cursor() as cur:
        cur.execute("DROP DATABASE IF EXISTS assay_demo_gaming")


def test_demo_mysql_registers_a_mysql_project(loaded, mysql_dsn):
    assert "loaded gaming into MySQL database assay_demo_gaming" in loaded.output
    p = open_store(load_settings()).get_project("demo-gaming")
    assert p.warehouse.kind == "mysql" and p.warehouse.schemas == ["assay_demo_gaming"]
    assert p.warehouse.settings["dsn"] == mysql_dsn
    assert open_store(load_settings()).get_project("demo-ecommerce").warehouse.kind == "duckdb"  # not asked for


@pytest.mark.timeout(1800)  # a fresh process: imports, the embedder, Prefect's server; 2 busy cores stretch each
def test_assay_discover_runs_on_mariadb(loaded, tmp_path):
    """The real `assay discover` command in its own process, as a user runs it after `assay demo --mysql`:
    the embedded defaults (Prefect's ephemeral server, the statistical analyst: no LLM is configured), the
    project the demo registered, the MariaDB warehouse. A full run, with verified insights."""
    from assay.vectors.index import _close_all

    # this test process (another user's process, as far as the command knows) may hold the local vector folder
    # from earlier tests; the command would wait for it, as a second run waits for the first (README)
    _close_all()
    # a fresh PREFECT_HOME whose database is the template's copy (as the local server's first start makes one): the
    # command's ephemeral server runs no migration
    seed_database(tmp_path / "prefect" / "prefect.db")
    env = dict(os.environ, PREFECT_HOME=str(tmp_path / "prefect"), ASSAY_HOME=os.environ["ASSAY_HOME"],
               PYTHONPATH=os.pathsep.join([str(ROOT)] + [x for x in [os.environ.get("PYTHONPATH")] if x]))
    r = subprocess.run([sys.executable, "-c", "from assay.cli import main; main()", "discover", "demo-gaming",
                        "--max-steps", str(STEPS)], env=env, cwd=ROOT, capture_output=True, text=True, timeout=1700)
    assert r.returncode == 0, (r.stdout[-2000:], r.stderr[-2000:])
    assert "analyst: statistical" in r.stdout and "· full ·" in r.stdout, r.stdout[-2000:]
    settings = load_settings()
    store = open_store(settings)
    [run] = store.list_runs("demo-gaming")  # the one run this command started
    result = store.get_result(run.id)
    assert result.run_type.value == "full" and not result.errors, result.errors
    truth = {t["id"]: t for t in json.loads((settings.demo_dir / "gaming_truth.json").read_text())["patterns"]}
    wall = [i for i in result.insights if i.segment == "level=42"]
    assert wall and abs(wall[0].affected_count - truth["level_42_wall"]["affected_count"]) <= 0.2 * \
        truth["level_42_wall"]["affected_count"]
    assert wall[0].validation.status.value == "confirmed", [(c.metric.value, c.reasoning, c.query) for c in wall[0].claims]
    steps = store.steps(result.run_id)
    assert len(steps) >= STEPS // 2 and all(s.error is None for s in steps), [s.error for s in steps if s.error][:3]


def test_assay_doctor_on_the_mariadb_project(loaded):
    """`assay doctor` on a real non-DuckDB warehouse: one screen, every part answered, exit 0."""
    from assay.doctor import OK, SKIP, run_checks

    res = CliRunner().invoke(app, ["doctor", "demo-gaming"])
    assert res.exit_code == 0 and "ready: everything this project needs answered" in res.output, res.output
    checks = {c.part: c for c in run_checks(open_store(load_settings()).get_project("demo-gaming"), load_settings())}
    import duckdb

    with duckdb.connect(str(load_settings().demo_dir / "gaming.duckdb"), read_only=True) as c:
        n = c.execute("SELECT count(*) FROM information_schema.tables").fetchone()[0]
    assert checks["warehouse"].status == OK and checks["warehouse"].detail.startswith("mysql "), checks["warehouse"]
    assert checks["warehouse"].detail.endswith(f"{n} tables in assay_demo_gaming"), checks["warehouse"]
    assert checks["llm"].status == SKIP and checks["store"].status == OK and checks["vector index"].status == OK


def test_a_password_in_the_dsn_is_not_stored(mysql_dsn, monkeypatch):
    from assay.cli import _demo_mysql
    from assay.models import Project, WarehouseConfig

    calls = {}
    monkeypatch.setenv("ASSAY_DEMO_MYSQL_PASSWORD", "")  # restored after the test
    monkeypatch.setattr("assay.demo.mysql.load_into_mysql", lambda db, dsn, name: calls.setdefault("dsn", dsn) and {})
    p = Project(id="x", pack="gaming", warehouse=WarehouseConfig(kind="duckdb", settings={"path": "x"}))
    u = parse_dsn(mysql_dsn)
    out = _demo_mysql(p, None, "gaming", f"mysql://root:s3cret@{u['host']}:{u['port']}/test")
    assert out.warehouse.settings == {"dsn": f"mysql://root@{u['host']}:{u['port']}/test",
                                      "password_env": "ASSAY_DEMO_MYSQL_PASSWORD"}
    assert "s3cret" not in json.dumps(out.model_dump(mode="json"))
