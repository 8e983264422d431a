"""One way to get a run's tables, and it always carries the project's table descriptions.

Under Prefect every phase opens its own session (``assay_flows/tasks/phases.py``): the schema phase discovers and
caches the tables, and a later phase (exploration, an area) reads them back from the cache. The
project's descriptions must be on them there too, or the explorer's ``lookup_schema`` and the
verifier read tables without the notes the project wrote.
"""

from __future__ import annotations

from assay.models import Project, WarehouseConfig
from assay.run.lifecycle import create_run
from assay.run.phases import schema_phase
from assay.run.session import RunSession
from assay.settings import load_settings
from assay.store import open_store
from tests.helpers import small_warehouse

NOTE = "one row per order; amount in euros"


def _project(tmp_path, pid: str) -> Project:
    db = small_warehouse(tmp_path / "w.duckdb")
    return Project(id=pid, pack="ecommerce", analyst="statistical", max_steps=3,
                   warehouse=WarehouseConfig(kind="duckdb", settings={"path": str(db)},
                                             descriptions={"orders": NOTE}))


def _note(tables, name: str) -> str:
    return next(t.description for t in tables if t.name == name)


def test_a_later_phase_session_reads_the_tables_with_the_projects_descriptions(tmp_path):
    store = open_store(load_settings())
    p = _project(tmp_path, "tables-desc")
    store.save_project(p)
    create_run(store, p, run_id="tables-desc-1")
    first = RunSession("tables-desc-1")  # the schema task's session
    try:
        schema_phase(first)
        assert _note(first.tables, "orders") == NOTE
    finally:
        first.close()
    later = RunSession("tables-desc-1")  # the exploration / area task's session: the cached schema
    try:
        assert _note(later.tables, "orders") == NOTE
        assert _note(later.provider().tables, "orders") == NOTE
        assert not _note(later.tables, "customers")  # only the tables the project describes
    finally:
        later.close()


def test_a_session_without_a_cached_schema_discovers_it_with_the_descriptions(tmp_path):
    store = open_store(load_settings())
    p = _project(tmp_path, "tables-desc-cold")
    store.save_project(p)
    create_run(store, p, run_id="tables-desc-2")
    s = RunSession("tables-desc-2")  # no schema phase ran: the session discovers on its own
    try:
        assert _note(s.tables, "orders") == NOTE
    finally:
        s.close()
