"""Every statement the DuckDB adapter sends runs under the timeout, in an instance whose memory
and threads are bounded and locked."""

from __future__ import annotations

import time

import duckdb
import pytest

from assay.errors import QueryError, QueryTimeout
from assay.models import WarehouseConfig
from assay.warehouse import open_warehouse
from assay.warehouse.duckdb import DuckDBWarehouse

TIMEOUT = 1.0


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("runaway") / "big.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE t AS SELECT i, 'u' || i || '@x.io' AS email FROM range(200000) r(i)")
    # a view the catalog counts: a cross join of 4e10 rows
    con.execute("CREATE VIEW everything AS SELECT a.i AS a, b.i AS b FROM t a, t b")
    con.close()
    return path


def wh(db, **kw):
    cfg = WarehouseConfig(kind="duckdb", settings={"path": str(db)}, statement_timeout_s=TIMEOUT, **kw)
    return open_warehouse(cfg)


def within(seconds: float, t0: float) -> bool:
    return time.perf_counter() - t0 <= seconds


def test_the_count_behind_a_truncated_result_is_timed(db):
    """Over the row cap the adapter counts the whole result: within what is left of the timeout,
    else the count stays unknown and the rows come back."""
    w = wh(db)
    t0 = time.perf_counter()
    r = w.query("SELECT a.i, b.i FROM t a, t b", row_cap=100, timeout_s=TIMEOUT)
    assert within(1.5 * TIMEOUT, t0)
    assert r.truncated and r.table.num_rows == 100 and r.total_rows is None
    r = w.query("SELECT * FROM t", row_cap=100, timeout_s=5)  # a count that fits is still given
    assert r.truncated and r.total_rows == 200000


def test_a_query_interrupted_while_rows_stream_is_a_timeout(db, monkeypatch):
    import assay.warehouse.base as base

    monkeypatch.setattr(base, "MAX_RESULT_BYTES", 2**40)  # the timeout's path, not the byte budget's
    w = wh(db)
    t0 = time.perf_counter()
    with pytest.raises(QueryTimeout):  # interrupted between batches: Arrow raises OSError there
        w.query("SELECT a.i, b.i FROM t a, t b", row_cap=500_000_000, timeout_s=TIMEOUT)
    # stopped by the timeout, not run out (both take minutes): a loaded 2-core machine overran 1.5 s once
    assert within(4 * TIMEOUT, t0)
    t0 = time.perf_counter()
    with pytest.raises(QueryTimeout):  # interrupted before the first batch
        w.query("SELECT a.i, b.i FROM t a, t b WHERE (a.i * 7 + b.i) % 100003 = 17", row_cap=10, timeout_s=TIMEOUT)
    assert within(4 * TIMEOUT, t0)


def test_the_catalog_and_samples_are_timed(db):
    w = wh(db)
    t0 = time.perf_counter()
    tables = {t.name: t for t in w.list_tables()}
    assert within(1.5 * TIMEOUT + 0.5, t0)
    assert tables["t"].row_count == 200000 and tables["everything"].row_count == 0  # too big to count: unknown
    t0 = time.perf_counter()
    assert len(w.sample_rows(tables["everything"], 3)) == 3
    assert within(1.5 * TIMEOUT, t0)
    w.health_check()


def test_memory_and_threads_are_bounded_and_locked(tmp_path):
    path = tmp_path / "mem.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE t AS SELECT i, 'u' || i || '@x.io' AS email FROM range(200000) r(i)")
    con.close()
    w = wh(path, memory_limit_mb=256)
    again = wh(path, memory_limit_mb=4096)  # the same file opened again in this process: the first limits hold
    r = w.query("SELECT current_setting('memory_limit') AS m, current_setting('threads') AS t", row_cap=1,
                timeout_s=5).table.to_pylist()[0]
    assert r["m"] == "244.1 MiB" and int(r["t"]) >= 1
    assert again.query("SELECT current_setting('memory_limit') AS m", row_cap=1, timeout_s=5).table.to_pylist() == [
        {"m": "244.1 MiB"}]
    with pytest.raises(duckdb.Error, match="locked"):  # lock_configuration: no statement lifts the limit
        w._cursor().execute("SET memory_limit = '64GB'")
    with pytest.raises(QueryError, match="Out of Memory"):  # an aggregate past the limit fails, alone
        w.query("SELECT string_agg(email || j, ',') FROM t a, range(100) r(j)", row_cap=1, timeout_s=30)
    assert w.query("SELECT 1 AS ok", row_cap=1, timeout_s=5).table.to_pylist() == [{"ok": 1}]


def test_threads_default_to_half_the_cores(tmp_path):
    import os

    path = tmp_path / "x.duckdb"
    duckdb.connect(str(path)).close()
    w = DuckDBWarehouse(str(path))
    threads = int(w.query("SELECT current_setting('threads') AS t", row_cap=1, timeout_s=5).table.to_pylist()[0]["t"])
    assert threads == max(1, (os.cpu_count() or 2) // 2)
