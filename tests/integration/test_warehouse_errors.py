"""One clear line per failure, for each warehouse kind: a setting the driver cannot read, a refused
connection, and a network timeout (a host that accepts the connection and never answers), each
within the connect timeout rather than the query's read timeout or the HTTP client's. Refused
credentials and a missing database for Redshift run against the local PostgreSQL; the other kinds'
are in their own files (test_mysql, test_bigquery, test_databricks)."""

from __future__ import annotations

import socket
import time

import pytest

from assay.errors import ConfigError, WarehouseUnreachable
from assay.models import WarehouseConfig
from assay.warehouse import open_warehouse

KINDS = ["mysql", "redshift", "mssql", "bigquery", "databricks"]


def _settings(kind: str, port: int) -> dict:
    return {
        "mysql": {"dsn": f"mysql://root@127.0.0.1:{port}/x", "connect_timeout": 1},
        "redshift": {"dsn": f"host=127.0.0.1 port={port} user=x dbname=x", "connect_timeout": 1},
        "mssql": {"host": "127.0.0.1", "port": port, "database": "x", "user": "u", "password_env": "WH_ERR_SECRET",
                  "login_timeout": 1},
        "bigquery": {"project": "p", "api_endpoint": f"http://127.0.0.1:{port}", "connect_timeout": 1},
        "databricks": {"host": f"http://127.0.0.1:{port}", "warehouse_id": "w", "token_env": "WH_ERR_SECRET",
                       "connect_timeout": 1},
    }[kind]


@pytest.fixture
def silent_port():
    """A port that accepts connections (the kernel completes the handshake) and never says a word."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(64)
    yield s.getsockname()[1]
    s.close()


def _open(kind: str, settings: dict, **kw):
    return open_warehouse(WarehouseConfig(kind=kind, settings=settings, schemas=["s"], **kw))


@pytest.mark.parametrize("kind", KINDS)
def test_a_host_that_never_answers_is_one_timeout_line(kind, silent_port, monkeypatch):
    monkeypatch.setenv("WH_ERR_SECRET", "x")
    t0 = time.perf_counter()
    with pytest.raises(WarehouseUnreachable) as e:
        _open(kind, _settings(kind, silent_port), statement_timeout_s=60)
    took = time.perf_counter() - t0
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith(f"{kind}: cannot "), msg
    assert "timed out after 1s" in msg or "timeout expired" in msg, msg
    # connect timeout 1 s (plus the SDKs' retries within it); before, MySQL waited for the query read
    # timeout (statement timeout + 30 s: 90 s) and Databricks for its HTTP timeout per try (30 s, twice)
    assert took < 30, (kind, took)


@pytest.mark.parametrize("kind", KINDS)
def test_a_refused_connection_is_one_line(kind, monkeypatch):
    monkeypatch.setenv("WH_ERR_SECRET", "x")
    with pytest.raises(WarehouseUnreachable) as e:
        _open(kind, _settings(kind, 1))  # nothing listens on port 1
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith(f"{kind}: cannot ") and "127.0.0.1" in msg, msg


@pytest.mark.parametrize("kind, settings, match", [
    ("mysql", {"dsn": "postgres://h/db"}, "not a MySQL URL"),
    ("redshift", {"dsn": "this is not a dsn"}, r"^warehouse.settings.dsn: not a redshift connection string"),
    ("redshift", {"port": 5439}, "needs dsn or host"),
    ("mssql", {"host": "h", "user": "u"}, "database"),
    ("bigquery", {"project": "p", "api_endpoint": "http://127.0.0.1:1", "discovery": "tables"}, "discovery"),
    ("databricks", {"host": "https://x"}, "needs host and warehouse_id"),
])
def test_a_setting_the_driver_cannot_read_is_one_config_line(kind, settings, match):
    with pytest.raises(ConfigError, match=match) as e:
        _open(kind, settings)
    assert "\n" not in str(e.value)


def test_redshift_refused_credentials_and_missing_database(pg_dsn):
    import psycopg

    base = psycopg.conninfo.conninfo_to_dict(pg_dsn)
    host, port = base.get("host", "127.0.0.1"), base.get("port", 5432)
    for dsn, match in ((f"host={host} port={port} user=assay_no_such_role dbname={base.get('dbname', 'test')}",
                        'role "assay_no_such_role" does not exist'),
                       (f"host={host} port={port} user={base.get('user', 'postgres')} dbname=assay_no_such_db",
                        'database "assay_no_such_db" does not exist')):
        with pytest.raises(WarehouseUnreachable, match=match) as e:
            _open("redshift", {"dsn": dsn, "connect_timeout": 5})
        assert "\n" not in str(e.value) and str(e.value).startswith("redshift: cannot connect")
