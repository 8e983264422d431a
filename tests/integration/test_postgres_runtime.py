"""PostgreSQL runtime limits: every statement timed, cancelled on the server when the client goes
away, bounded memory, digestible values of every type, no value in error text."""

from __future__ import annotations

import subprocess
import sys
import time
import uuid

import psycopg
import pytest

from assay.errors import QueryTimeout
from assay.explore.executor import Executor
from assay.models import WarehouseConfig
from assay.warehouse import build_guard
from assay.warehouse.postgres import PostgresWarehouse
from bench.type_fuzz import corpus, fuzz


@pytest.fixture(scope="module")
def schema(pg_dsn):
    name = f"rt_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(pg_dsn, autocommit=True) as c:
        c.execute(f"CREATE SCHEMA {name}")
        c.execute(f"CREATE TABLE {name}.t AS SELECT i, 'u' || i || '@x.io' AS email FROM generate_series(1, 20000) i")
        c.execute(f"ANALYZE {name}.t")
    yield name
    with psycopg.connect(pg_dsn, autocommit=True) as c:
        c.execute(f"DROP SCHEMA {name} CASCADE")


def wh(pg_dsn, schema, **kw):
    return PostgresWarehouse(WarehouseConfig(kind="postgres", settings={"dsn": pg_dsn}, schemas=[schema], **kw))


def active(pg_dsn, marker: str) -> int:
    with psycopg.connect(pg_dsn, autocommit=True) as c:
        return c.execute("SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query LIKE %s "
                         "AND pid <> pg_backend_pid()", [f"%{marker}%"]).fetchone()[0]


def test_the_count_of_a_truncated_result_runs_within_the_timeout(pg_dsn, schema):
    w = wh(pg_dsn, schema)
    w.query("SELECT 1", row_cap=1, timeout_s=5)  # warm the client (first Arrow use)
    t0 = time.perf_counter()
    r = w.query(f"SELECT a.i, b.i FROM {schema}.t a, {schema}.t b", row_cap=100, timeout_s=1.5)
    assert time.perf_counter() - t0 <= 1.5 * 1.5
    assert r.truncated and r.table.num_rows == 100 and r.total_rows is None
    assert w.query(f"SELECT * FROM {schema}.t", row_cap=10, timeout_s=10).total_rows == 20000


def test_a_timeout_leaves_nothing_running_on_the_server(pg_dsn, schema):
    w = wh(pg_dsn, schema)
    marker = f"m{uuid.uuid4().hex[:8]}"
    with pytest.raises(QueryTimeout):
        w.query(f"SELECT count(*) AS {marker} FROM {schema}.t a, {schema}.t b", row_cap=10, timeout_s=1)
    assert active(pg_dsn, marker) == 0


def running_fetches(pg_dsn) -> set[int]:
    """Backends of assay running a FETCH (what a server-side cursor's query shows as)."""
    with psycopg.connect(pg_dsn, autocommit=True) as c:
        return {r[0] for r in c.execute("SELECT pid FROM pg_stat_activity WHERE state = 'active' AND "
                                        "application_name = 'assay' AND query LIKE 'FETCH%%'").fetchall()}


def test_a_query_whose_client_died_is_cancelled_on_the_server(pg_dsn, schema):
    # the command prints its own backend's pid before its query: a FETCH of another test's process (other xdist
    # workers query this server too) is never taken for this one's (seen once under three workers). Three copies of
    # the table: the count never ends by itself within the test's bound (two copies took 8 s, within the 10 s)
    code = (f"from assay.models import WarehouseConfig\nfrom assay.warehouse.postgres import PostgresWarehouse\n"
            f"w = PostgresWarehouse(WarehouseConfig(kind='postgres', settings={{'dsn': {pg_dsn!r}}}, "
            f"statement_timeout_s=120))\n"
            f"print(w._conn().info.backend_pid, flush=True)\n"
            f"w.query('SELECT count(*) FROM {schema}.t a, {schema}.t b, {schema}.t c', row_cap=1, timeout_s=120)\n")
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        mine = {int(p.stdout.readline())}  # the connection the query runs on (the thread's, health-checked)
        deadline = time.time() + 60
        while not running_fetches(pg_dsn) & mine:
            assert time.time() < deadline and p.poll() is None, "the query never started"
            time.sleep(0.2)
    finally:
        p.kill()
        p.wait()
    t0 = time.time()
    while running_fetches(pg_dsn) & mine and time.time() - t0 < 10:
        time.sleep(0.2)
    assert not running_fetches(pg_dsn) & mine  # gone within seconds, not after the 120 s timeout


def test_session_limits_bound_memory_and_watch_the_client(pg_dsn, schema):
    w = wh(pg_dsn, schema, memory_limit_mb=512)
    got = w.query("SELECT current_setting('work_mem') AS wm, current_setting('client_connection_check_interval') AS cc, "
                  "current_setting('idle_in_transaction_session_timeout') AS it", row_cap=1, timeout_s=5)
    assert got.table.to_pylist() == [{"wm": "32MB", "cc": "1s", "it": "90s"}]
    assert {"work_mem", "client_connection_check_interval", "idle_in_transaction_session_timeout"} <= set(
        w.session_limits)


def test_cast_error_does_not_leak_an_email(pg_dsn, schema):
    cfg = WarehouseConfig(kind="postgres", settings={"dsn": pg_dsn}, schemas=[schema])
    w = PostgresWarehouse(cfg)
    out = Executor(w, build_guard(w, cfg, w.list_tables()), cfg).run(f"SELECT CAST(email AS INTEGER) FROM {schema}.t",
                                                                     fix=False)
    assert not out.ok and "@x.io" not in out.error and "[masked]" in out.error


def test_every_postgres_type_is_digestible(pg_dsn):
    r = fuzz("postgres")
    assert r["types_total"] == len(corpus("postgres")) >= 70
    assert r["run_failures"] == [] and r["step_errors"] == []
    def rows(t):
        return [x["c"] for x in r["results"][t]["digest"]["all_rows"]]

    assert rows("integer[]")[:2] == ["[1, 2, null]", "[[1, 2], [3, 4]]"]
    assert rows("date")[:2] == ["infinity", "-infinity"]
    assert rows("inet")[:2] == ["192.168.0.1/24", "::1"] and rows("int4range")[:2] == ["[1,5)", "empty"]
    assert rows("interval")[0] == "1 year 2 mons 3 days 04:05:06"
