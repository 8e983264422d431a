"""PostgreSQL: a project whose `schemas` names a schema that does not exist (or holds no tables) is a
failed run with one clear line, not a `full` run of nothing."""

from __future__ import annotations

import uuid

import psycopg
import pytest

from assay.errors import ConfigError
from assay.models import Project, WarehouseConfig
from assay.run.lifecycle import run_discovery_inline
from assay.settings import load_settings
from assay.store import open_store


@pytest.fixture()
def pg_empty_schema(pg_dsn):
    schema = f"assay_cfg_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(pg_dsn, autocommit=True) as c:
        c.execute(f"CREATE SCHEMA {schema}")
    yield schema
    with psycopg.connect(pg_dsn, autocommit=True) as c:
        c.execute(f"DROP SCHEMA {schema} CASCADE")


@pytest.mark.services
@pytest.mark.parametrize("which", ["missing", "empty"])
def test_missing_or_empty_schema_fails_the_run(pg_dsn, pg_empty_schema, which):
    schema = f"nope_{uuid.uuid4().hex[:6]}" if which == "missing" else pg_empty_schema
    pid = f"pg-{which}-schema"
    store = open_store(load_settings())
    store.save_project(Project(id=pid, analyst="statistical", warehouse=WarehouseConfig(
        kind="postgres", settings={"dsn": pg_dsn}, schemas=[schema])))
    with pytest.raises(ConfigError, match=rf"^warehouse.schemas: schema '{schema}' has no tables or does not exist$"):
        run_discovery_inline(pid, f"{pid}-run")
    run = store.get_run(f"{pid}-run")
    assert run.status.value == "failed" and schema in run.error
