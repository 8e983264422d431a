"""Warehouse credentials from a Prefect Secret block (the `*_block` settings), on a real MariaDB: the
block's value logs in, a wrong one is one line without the secret, a missing block names itself."""

from __future__ import annotations

import uuid

import pymysql
import pytest

from assay.errors import MissingKey, WarehouseUnreachable
from assay.models import WarehouseConfig
from assay.warehouse import open_warehouse
from assay.warehouse.mysql import parse_dsn


@pytest.fixture
def mysql_user(mysql_dsn):
    """A MariaDB user with a password and SELECT on one database (root has none on the test server)."""
    import assay_flows.tasks  # noqa: F401  (registers the Prefect Secret block resolver)

    name, db, password = f"assay_blk_{uuid.uuid4().hex[:6]}", f"assay_blk_{uuid.uuid4().hex[:6]}", uuid.uuid4().hex
    with pymysql.connect(**parse_dsn(mysql_dsn), autocommit=True) as c, c.cursor() as cur:
        cur.execute(f"CREATE DATABASE {db}")
        cur.execute(f"CREATE TABLE {db}.t AS SELECT 1 AS x")
        cur.execute(f"CREATE USER '{name}'@'%' IDENTIFIED BY '{password}'")
        cur.execute(f"GRANT SELECT ON {db}.* TO '{name}'@'%'")
    yield name, db, password
    with pymysql.connect(**parse_dsn(mysql_dsn), autocommit=True) as c, c.cursor() as cur:
        cur.execute(f"DROP USER '{name}'@'%'")
        cur.execute(f"DROP DATABASE {db}")


def test_mysql_password_from_a_prefect_secret_block(mysql_dsn, mysql_user):
    from prefect.blocks.system import Secret

    name, db, password = mysql_user
    u = parse_dsn(mysql_dsn)
    block = f"wh-pw-{uuid.uuid4().hex[:6]}"
    Secret(value=password).save(block)
    settings = {"host": u["host"], "port": u["port"], "user": name, "database": db, "password_block": block}
    w = open_warehouse(WarehouseConfig(kind="mysql", settings=settings))
    try:
        assert w.query("SELECT x FROM t", row_cap=5, timeout_s=10).table.to_pylist() == [{"x": 1}]
    finally:
        w.close()
    Secret(value="not-" + password).save(block, overwrite=True)
    with pytest.raises(WarehouseUnreachable, match=f"access denied for user '{name}'") as e:
        open_warehouse(WarehouseConfig(kind="mysql", settings=settings))
    assert password not in str(e.value) and "\n" not in str(e.value)
    with pytest.raises(MissingKey, match="mysql: cannot read Prefect Secret block 'wh-no-such-block'"):
        open_warehouse(WarehouseConfig(kind="mysql", settings=dict(settings, password_block="wh-no-such-block")))
