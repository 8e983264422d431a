"""A failed phase keeps nothing of the warehouse alive: Prefect keeps a failed task's exception, and its
traceback's frames used to hold the session's DuckDB connection until the process exited (nanobind then
reported leaked instances under pytest's summary line)."""

from __future__ import annotations

import asyncio
import gc
import weakref

import pytest

from assay.errors import ConfigError
from assay.models import Project, WarehouseConfig
from assay.run.lifecycle import create_run
from assay.settings import load_settings
from assay.store import open_store
from tests.helpers import small_warehouse


def test_a_failed_phase_releases_the_warehouse(tmp_path):
    from assay_flows.tasks.phases import _phase  # here: the unit tier collects without Prefect

    store = open_store(load_settings())
    p = Project(id="release-p", pack="ecommerce", analyst="statistical", max_steps=3,
                warehouse=WarehouseConfig(kind="duckdb", settings={"path": str(small_warehouse(tmp_path / "w.duckdb"))}))
    store.save_project(p)
    create_run(store, p, run_id="release1")
    opened = []

    def failing_phase(s):
        wh = s.warehouse
        opened.append(weakref.ref(wh))
        raise ConfigError("the phase failed")

    with pytest.raises(ConfigError) as caught:
        asyncio.run(_phase("release1", failing_phase))
    kept = caught.value  # as Prefect keeps it in the task's state
    gc.collect()
    assert kept.__traceback__ is not None  # the traceback (its lines, for the log) is still there ...
    assert opened and opened[0]() is None  # ... but the warehouse is gone
