"""A statistical discovery on PostgreSQL, loaded with the gaming demo (the whole pipeline, real engine)."""

from __future__ import annotations

import json
import uuid

import psycopg
import pytest

from assay.demo.postgres import load_into_postgres
from assay.models import Project, WarehouseConfig
from assay.run.lifecycle import run_discovery_inline
from assay.settings import load_settings
from assay.store import open_store


@pytest.fixture(scope="module")
def pg_demo(pg_dsn, demo_dir):
    schema = f"assay_demo_{uuid.uuid4().hex[:8]}"
    counts = load_into_postgres(demo_dir / "gaming.duckdb", pg_dsn, schema)
    yield schema, counts
    with psycopg.connect(pg_dsn, autocommit=True) as c:
        c.execute(f"DROP SCHEMA {schema} CASCADE")


def test_statistical_discovery_on_postgres(pg_dsn, pg_demo, demo_dir):
    schema, counts = pg_demo
    assert counts["players"] == 6000
    p = Project(id="pg-gaming", pack="gaming", category="match3", max_steps=40,
                warehouse=WarehouseConfig(kind="postgres", settings={"dsn": pg_dsn}, schemas=[schema]))
    store = open_store(load_settings())
    store.save_project(p)
    result = run_discovery_inline(p.id, "pg-demo-run")
    assert result.run_type.value == "full", result.errors
    truth = {t["id"]: t for t in json.loads((demo_dir / "gaming_truth.json").read_text())["patterns"]}
    wall = [i for i in result.insights if i.segment == "level=42"]
    assert wall and abs(wall[0].affected_count - truth["level_42_wall"]["affected_count"]) <= 0.2 * \
        truth["level_42_wall"]["affected_count"]
    assert wall[0].validation.status.value == "confirmed"
    steps = store.steps("pg-demo-run")
    assert all(s.error is None for s in steps), [s.error for s in steps if s.error][:3]
