"""The Redshift adapter's connection, cursors, timeouts and discovery against the local PostgreSQL
(Redshift speaks its wire protocol); the Redshift dialect is tested in tests/unit/test_dialects.py."""

from __future__ import annotations

import time
import uuid

import psycopg
import pytest

from assay.errors import QueryError, QueryTimeout, WarehouseUnreachable
from assay.models import WarehouseConfig
from assay.warehouse import build_guard, open_warehouse
from assay.warehouse.redshift import RedshiftWarehouse


@pytest.fixture(scope="module")
def rs_schema(pg_dsn):
    schema = f"assay_rs_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(pg_dsn, autocommit=True) as c:
        c.execute(f"CREATE SCHEMA {schema}")
        c.execute(f"CREATE TABLE {schema}.customers (customer_id int PRIMARY KEY, email text, channel text)")
        c.execute(f"CREATE TABLE {schema}.orders (order_id int PRIMARY KEY, customer_id int REFERENCES "
                  f"{schema}.customers(customer_id), amount numeric(10,2), placed_at timestamp)")
        c.execute(f"INSERT INTO {schema}.customers SELECT i, 'u' || i || '@x.io', "
                  f"CASE WHEN i % 2 = 0 THEN 'paid' ELSE 'organic' END FROM generate_series(1, 100) i")
        c.execute(f"INSERT INTO {schema}.orders SELECT i, 1 + i % 100, i * 1.5, timestamp '2024-01-01' + i * "
                  f"interval '1 hour' FROM generate_series(1, 5000) i")
        c.execute(f"ANALYZE {schema}.orders")
        c.execute(f"COMMENT ON TABLE {schema}.orders IS 'Orders'")
    yield schema
    with psycopg.connect(pg_dsn, autocommit=True) as c:
        c.execute(f"DROP SCHEMA {schema} CASCADE")


def wh(dsn, schema, **kw) -> RedshiftWarehouse:
    return open_warehouse(WarehouseConfig(kind="redshift", settings={"dsn": dsn}, schemas=[schema], **kw))


def test_session_is_set_after_connecting(pg_dsn, rs_schema):
    w = wh(pg_dsn, rs_schema, statement_timeout_s=7)
    try:
        assert w.session_limits == {"statement_timeout": "set", "search_path": "set"}
        with w._txn() as c:
            assert c.execute("SHOW statement_timeout").fetchone()[0] == "7s"
            assert c.execute("SHOW transaction_read_only").fetchone()[0] == "on"
        assert "options" not in w.conninfo  # Redshift refuses startup options
    finally:
        w.close()


def test_discovery_keys_comments_counts(pg_dsn, rs_schema):
    w = wh(pg_dsn, rs_schema)
    try:
        tables = {t.name: t for t in w.list_tables()}
    finally:
        w.close()
    assert tables["orders"].foreign_keys == {"customer_id": f"{rs_schema}.customers"}
    assert tables["orders"].row_count == 5000 and tables["orders"].description == "Orders"


def test_declared_cursor_caps_rows_and_counts(pg_dsn, rs_schema):
    w = wh(pg_dsn, rs_schema)
    try:
        r = w.query("SELECT * FROM orders ORDER BY order_id", row_cap=100, timeout_s=10)
        assert r.table.num_rows == 100 and r.truncated and r.total_rows == 5000
        assert r.table.column("order_id").to_pylist()[:3] == [1, 2, 3]
        r = w.query("SELECT * FROM orders WHERE order_id <= 100", row_cap=100, timeout_s=10)
        assert r.table.num_rows == 100 and not r.truncated
    finally:
        w.close()


def test_timeout_read_only_and_errors(pg_dsn, rs_schema):
    w = wh(pg_dsn, rs_schema)
    try:
        t0 = time.perf_counter()
        with pytest.raises(QueryTimeout):
            w.query("SELECT pg_sleep(5)", row_cap=10, timeout_s=1)
        assert time.perf_counter() - t0 < 2.0
        with pytest.raises(QueryError):
            w.query("DELETE FROM orders", row_cap=10, timeout_s=5)
        with pytest.raises(QueryError, match="nope"):
            w.query("SELECT nope FROM orders", row_cap=10, timeout_s=5)
        assert w.query("SELECT count(*) AS n FROM orders", row_cap=1, timeout_s=5).table.to_pylist() == [{"n": 5000}]
        cost = w.explain_cost("SELECT * FROM orders")
        assert cost["unit"] == "plan cost units" and cost["value"] > 0 and cost["rows"] == 5000
    finally:
        w.close()
    with pytest.raises(WarehouseUnreachable, match="redshift: cannot connect"):
        open_warehouse(WarehouseConfig(kind="redshift", settings={"dsn": "host=127.0.0.1 port=1 user=x dbname=x",
                                                                  "connect_timeout": 2}))


def test_guard_in_redshift_dialect_runs_on_the_wire(pg_dsn, rs_schema):
    cfg = WarehouseConfig(kind="redshift", settings={"dsn": pg_dsn}, schemas=[rs_schema], pii_columns=["email"])
    w = open_warehouse(cfg)
    try:
        g = build_guard(w, cfg, w.list_tables())
        sql = g.enforce("SELECT channel, COUNT(*) AS n FROM customers GROUP BY channel ORDER BY channel")
        assert w.query(sql, row_cap=10, timeout_s=5).table.to_pylist() == [
            {"channel": "organic", "n": 50}, {"channel": "paid", "n": 50}]
        for bad in ("SELECT * FROM stl_query", "SELECT * FROM svv_table_info", "SELECT * FROM pg_user",
                    "SELECT pg_sleep(1)", "UNLOAD ('select 1') TO 's3://x'"):
            assert not g.check(bad).allowed, bad
    finally:
        w.close()
