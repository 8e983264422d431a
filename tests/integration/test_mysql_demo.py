"""`assay demo --mysql DSN` loads the gaming demo into MariaDB; a whole statistical discovery runs there."""

from __future__ import annotations

import json

import pymysql
import pytest
from typer.testing import CliRunner

from assay.cli import app
from assay.run.lifecycle import run_discovery_inline
from assay.settings import load_settings
from assay.store import open_store
from assay.warehouse.mysql import parse_dsn


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


def test_statistical_discovery_on_mariadb(loaded):
    settings = load_settings()
    store = open_store(settings)
    result = run_discovery_inline("demo-gaming", "my-demo-run")
    assert result.run_type.value == "full", result.errors
    truth = {t["id"]: t for t in json.loads((settings.demo_dir / "gaming_truth.json").read_text())["patterns"]}
    wall = [i for i in result.insights if i.segment == "level=42"]
    assert wall and abs(wall[0].affected_count - truth["level_42_wall"]["affected_count"]) <= 0.2 * \
        truth["level_42_wall"]["affected_count"]
    assert wall[0].validation.status.value == "confirmed", [(c.metric.value, c.reasoning, c.query) for c in wall[0].claims]
    steps = store.steps("my-demo-run")
    assert len(steps) >= 20 and all(s.error is None for s in steps), [s.error for s in steps if s.error][:3]


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
