"""The Prefect servers the tests start on a fresh home begin from the run's template database (tests/prefect_servers.py:
seed_database), not from Prefect's migrations: the flow tier's harness, and the shared `prefect server start`s."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from tests.flows.conftest import SEEDED
from tests.prefect_servers import seed_database, template_database


def _revision(db: Path) -> str:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return con.execute("SELECT version_num FROM alembic_version").fetchone()[0]
    finally:
        con.close()


def test_the_harness_database_is_the_seeded_copy():
    from prefect.settings import get_current_settings

    from assay_flows.local_server import _migrations_head

    url = get_current_settings().server.database.connection_url.get_secret_value()
    db = Path(url.removeprefix("sqlite+aiosqlite:///"))
    # the harness's database is the file seeded in its folder (a renamed file would be migrated from nothing)
    assert db in SEEDED, (db, SEEDED)
    assert _revision(db) == _revision(template_database()) == _migrations_head()


def test_a_seed_copies_the_template_and_never_replaces_a_database(tmp_path):
    db = tmp_path / "prefect" / "prefect.db"
    seed_database(db)
    assert db.read_bytes() == template_database().read_bytes()
    db.write_bytes(b"a home's own database")
    seed_database(db)
    assert db.read_bytes() == b"a home's own database"
    assert [p.name for p in db.parent.iterdir()] == ["prefect.db"]  # no temporary copy left behind
