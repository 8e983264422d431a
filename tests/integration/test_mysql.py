"""The MySQL/MariaDB adapter against a real MariaDB: read-only, timeout, row cap, schema, errors."""

from __future__ import annotations

import time
import uuid

import pymysql
import pytest

from assay.config import validate_project_data
from assay.errors import ConfigError, QueryError, QueryTimeout, WarehouseUnreachable
from assay.models import WarehouseConfig
from assay.warehouse import SQLGuard, build_guard, open_warehouse
from assay.warehouse.mysql import MySQLWarehouse, parse_dsn


def _admin(dsn):
    return pymysql.connect(**parse_dsn(dsn), autocommit=True)


@pytest.fixture(scope="module")
def my_db(mysql_dsn):
    db = f"assay_{uuid.uuid4().hex[:8]}"
    with _admin(mysql_dsn) as c, c.cursor() as cur:
        cur.execute(f"CREATE DATABASE {db}")
        cur.execute(f"CREATE TABLE {db}.customers (customer_id INT PRIMARY KEY, email VARCHAR(80), channel TEXT) "
                    "COMMENT 'People who bought,\n at least once'")
        cur.execute(f"CREATE TABLE {db}.orders (order_id INT PRIMARY KEY, customer_id INT, amount DECIMAL(10,2) "
                    f"COMMENT 'Order total in EUR', placed_at DATETIME, spent TIME, doc JSON, paid BOOLEAN, "
                    f"FOREIGN KEY (customer_id) REFERENCES {db}.customers(customer_id))")
        cur.execute(f"INSERT INTO {db}.customers SELECT seq, CONCAT('u', seq, '@x.io'), "
                    "IF(seq % 2 = 0, 'paid', 'organic') FROM seq_1_to_100")
        cur.execute(f"INSERT INTO {db}.orders SELECT seq, 1 + seq % 100, seq * 1.5, '2024-01-01' + INTERVAL seq HOUR, "
                    "'01:02:03', JSON_OBJECT('k', seq), seq % 2 FROM seq_1_to_5000")
        cur.execute(f"ANALYZE TABLE {db}.orders, {db}.customers")
    yield db
    with _admin(mysql_dsn) as c, c.cursor() as cur:
        cur.execute(f"DROP DATABASE {db}")


def wh(dsn, db, **kw) -> MySQLWarehouse:
    return open_warehouse(WarehouseConfig(kind="mysql", settings={"dsn": dsn}, schemas=[db], **kw))


def test_schema_discovery_with_keys_comments_and_row_estimates(mysql_dsn, my_db):
    w = wh(mysql_dsn, my_db)
    try:
        tables = {t.name: t for t in w.list_tables()}
    finally:
        w.close()
    assert set(tables) == {"customers", "orders"}
    assert tables["orders"].foreign_keys == {"customer_id": f"{my_db}.customers"}
    assert 4000 <= tables["orders"].row_count <= 6000  # InnoDB's estimate, read without a count(*)
    assert [c.name for c in tables["customers"].columns] == ["customer_id", "email", "channel"]
    assert tables["customers"].description == "People who bought, at least once"
    assert {c.name: c.description for c in tables["orders"].columns}["amount"] == "Order total in EUR"
    assert tables["orders"].description == ""
    types = {c.name: c.type for c in tables["orders"].columns}
    assert types["paid"] == "boolean" and types["customer_id"].startswith("int")  # BOOLEAN is tinyint(1)


def test_row_cap_reports_true_count_and_the_connection_survives(mysql_dsn, my_db):
    w = wh(mysql_dsn, my_db)
    try:
        for sql in (f"SELECT * FROM {my_db}.orders", f"SELECT * FROM {my_db}.orders LIMIT 100000"):
            r = w.query(sql, row_cap=100, timeout_s=10)
            assert r.table.num_rows == 100 and r.truncated and r.total_rows == 5000
        r = w.query(f"SELECT count(*) AS n FROM {my_db}.orders", row_cap=10, timeout_s=5)
        assert r.table.to_pylist() == [{"n": 5000}] and not r.truncated
    finally:
        w.close()


def test_values_are_digestible(mysql_dsn, my_db):
    w = wh(mysql_dsn, my_db)
    try:
        row = w.query(f"SELECT amount, placed_at, spent, doc FROM {my_db}.orders WHERE order_id = 2",
                      row_cap=5, timeout_s=5).table.to_pylist()[0]
    finally:
        w.close()
    assert float(row["amount"]) == 3.0 and str(row["placed_at"]).startswith("2024-01-01 02:00")
    assert row["spent"] == "1:02:03" and '"k"' in row["doc"]


def test_session_is_read_only_even_past_the_guard(mysql_dsn, my_db):
    w = wh(mysql_dsn, my_db)
    try:
        for sql in (f"DELETE FROM {my_db}.orders", f"UPDATE {my_db}.orders SET amount = 0",
                    f"CREATE TABLE {my_db}.x (a int)"):
            with pytest.raises(QueryError):
                w.query(sql, row_cap=10, timeout_s=5)
        assert w.query(f"SELECT count(*) AS n FROM {my_db}.orders", row_cap=1, timeout_s=5).table.to_pylist() == [
            {"n": 5000}]
    finally:
        w.close()


def test_statement_timeout_is_enforced_by_the_server(mysql_dsn, my_db):
    w = wh(mysql_dsn, my_db)
    try:
        t0 = time.perf_counter()
        with pytest.raises(QueryTimeout):
            w.query("SELECT SLEEP(5)", row_cap=10, timeout_s=1)
        assert time.perf_counter() - t0 < 1.5 + 0.5
        assert w.timeout_variable in ("max_statement_time", "max_execution_time")
        assert w.query("SELECT 1 AS one", row_cap=1, timeout_s=5).table.to_pylist() == [{"one": 1}]
    finally:
        w.close()


def test_guard_in_mysql_dialect_end_to_end(mysql_dsn, my_db):
    w = wh(mysql_dsn, my_db, pii_columns=["email"])
    cfg = WarehouseConfig(kind="mysql", settings={"dsn": mysql_dsn}, schemas=[my_db], pii_columns=["email"])
    try:
        g = build_guard(w, cfg, w.list_tables())
        sql = g.enforce("SELECT channel, COUNT(*) AS n FROM customers GROUP BY channel ORDER BY channel")
        assert w.query(sql, row_cap=10, timeout_s=5).table.to_pylist() == [
            {"channel": "organic", "n": 50}, {"channel": "paid", "n": 50}]
        sql = g.enforce("SELECT DATE_FORMAT(placed_at, '%Y-%m-01') AS m, SUM(amount) AS s FROM orders "
                        "GROUP BY m ORDER BY m")
        assert w.query(sql, row_cap=100, timeout_s=5).table.num_rows >= 1
        for bad in ("SELECT SLEEP(1)", "SELECT LOAD_FILE('/etc/passwd')", "SELECT @@version",
                    "SELECT * FROM mysql.user", "SELECT * FROM information_schema.tables",
                    "SELECT * FROM orders INTO OUTFILE '/tmp/x'", "SELECT * FROM orders FOR UPDATE"):
            assert not g.check(bad).allowed, bad
        v = g.vet("SELECT email FROM customers")
        assert v.masked_outputs == [0]
        # REGEXP as MariaDB reads it (sqlglot writes REGEXP_LIKE, which MariaDB lacks: session 25's audit)
        for sql, n in (("SELECT count(*) AS n FROM customers WHERE channel REGEXP '^pa'", 50),
                       ("SELECT count(*) AS n FROM customers WHERE channel NOT RLIKE '^pa'", 50)):
            assert w.query(g.enforce(sql), row_cap=5, timeout_s=5).table.to_pylist() == [{"n": n}], sql
    finally:
        w.close()


def test_aliases_that_differ_only_in_case_are_two_aliases_as_mariadb_reads_them(mysql_dsn, my_db):
    """MariaDB on Linux tells table aliases C and c apart (the second red team, session 23): a tenant predicate on
    c must not count for C, whose rows the engine returns unfiltered."""
    from assay.models import TenantFilter

    w = wh(mysql_dsn, my_db)
    try:
        sql = "SELECT C.order_id FROM orders AS C, orders AS c WHERE c.customer_id = 1 LIMIT 200"
        assert len({r["order_id"] for r in w.query(sql, row_cap=200, timeout_s=5).table.to_pylist()}) > 1
        g = SQLGuard("mysql", tables=w.list_tables(), schemas=[my_db], default_schema=my_db,
                     tenant=TenantFilter(column="customer_id", value=1))
        assert not g.check(sql).allowed
        ok = g.enforce("SELECT c.order_id FROM orders AS c WHERE c.customer_id = 1")
        assert {r["order_id"] for r in w.query(ok, row_cap=100, timeout_s=5).table.to_pylist()} == \
            set(range(100, 5001, 100))
    finally:
        w.close()


def test_a_name_in_another_case_and_a_number_on_a_text_tenant_column_read_no_other_rows(mysql_dsn, my_db):
    """Red team 9 (session 25), on MariaDB with lower_case_table_names=0: ``UPPER.customers`` is another database's
    table, and the guard read it as the project's; and ``tenant_id = 1`` on a VARCHAR column also returns '01' and
    '1-eu' (MySQL compares them as numbers). A name must be written as the catalog spells it; the tenant literal
    follows the column's type."""
    from assay.models import TenantFilter

    other = my_db.upper()
    with _admin(mysql_dsn) as c, c.cursor() as cur:
        cur.execute("SELECT @@lower_case_table_names")
        if cur.fetchone()[0] != 0:
            pytest.skip("this server folds names (lower_case_table_names != 0)")
        cur.execute(f"CREATE DATABASE `{other}`")
        cur.execute(f"CREATE TABLE `{other}`.customers (customer_id INT, email VARCHAR(80), channel TEXT)")
        cur.execute(f"INSERT INTO `{other}`.customers VALUES (7, 'x@other.db', 'other database')")
        cur.execute(f"CREATE TABLE {my_db}.accounts (id INT, tenant_id VARCHAR(10), note TEXT)")
        cur.execute(f"INSERT INTO {my_db}.accounts VALUES (1, '1', 'mine'), (2, '01', 'not mine'), "
                    "(3, '1-eu', 'not mine'), (4, '2', 'not mine')")
    w = wh(mysql_dsn, my_db)
    try:
        assert w.query(f"SELECT channel FROM `{other}`.customers", row_cap=5, timeout_s=5).table.to_pylist() == [
            {"channel": "other database"}]  # the engine reads it
        g = SQLGuard("mysql", tables=w.list_tables(), schemas=[my_db], default_schema=my_db,
                     tenant=TenantFilter(column="tenant_id", value=1, shared_tables=["customers", "orders"]),
                     inject_tenant=True)
        for sql in (f"SELECT c.channel FROM `{other}`.customers c", f"SELECT c.channel FROM {other}.customers c",
                    f"SELECT c.channel FROM {my_db}.CUSTOMERS c"):
            v = g.check(sql)
            assert not v.allowed and "as the catalog spells it" in v.reason, sql
        assert g.check(f"SELECT c.channel FROM {my_db}.customers c").allowed
        sql = g.enforce("SELECT a.id, a.note FROM accounts a ORDER BY a.id")
        assert "a.tenant_id = '1'" in sql
        assert w.query(sql, row_cap=10, timeout_s=5).table.to_pylist() == [{"id": 1, "note": "mine"}]
        strict = SQLGuard("mysql", tables=w.list_tables(), schemas=[my_db], default_schema=my_db,
                          tenant=TenantFilter(column="tenant_id", value=1, shared_tables=["customers", "orders"]))
        v = strict.check("SELECT a.id FROM accounts a WHERE a.tenant_id = 1")
        assert not v.allowed and "a.tenant_id = '1'" in v.reason
        assert strict.check("SELECT a.id FROM accounts a WHERE a.tenant_id = '1'").allowed
    finally:
        w.close()
        with _admin(mysql_dsn) as c, c.cursor() as cur:
            cur.execute(f"DROP DATABASE `{other}`")
            cur.execute(f"DROP TABLE {my_db}.accounts")


def test_a_text_tenant_value_reads_only_its_own_bytes(mysql_dsn, my_db):
    """Red team 10 (session 25): under MariaDB's default collation (case- and accent-insensitive, padded)
    ``tenant_id = 'acme'`` also read 'ACME', 'acme  ' and 'acmé'. The guard writes the same value compared as bytes
    beside the predicate, whether the model wrote it or the guard injected it, in WHERE and in a LEFT JOIN's ON."""
    from assay.models import TenantFilter

    with _admin(mysql_dsn) as c, c.cursor() as cur:
        cur.execute(f"CREATE TABLE {my_db}.notes (id INT, tenant_id VARCHAR(10), note TEXT) "
                    "CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci")
        cur.execute(f"INSERT INTO {my_db}.notes VALUES (1, 'acme', 'mine'), (2, 'ACME', 'not mine'), "
                    "(3, 'acme  ', 'not mine'), (4, 'acmé', 'not mine'), (5, 'acme', 'mine too')")
    w = wh(mysql_dsn, my_db)
    try:
        assert w.query(f"SELECT count(*) AS n FROM {my_db}.notes WHERE tenant_id = 'acme'", row_cap=5,
                       timeout_s=5).table.to_pylist() == [{"n": 5}]  # the engine's own reading
        tf = TenantFilter(column="tenant_id", value="acme", shared_tables=["customers", "orders"])
        tables = w.list_tables()
        for inject, sql in ((True, "SELECT n.id FROM notes n ORDER BY n.id"),
                            (False, "SELECT n.id FROM notes n WHERE n.tenant_id = 'acme' ORDER BY n.id"),
                            (False, "SELECT m.id FROM notes m LEFT JOIN notes n ON n.id = m.id + 1 AND "
                                    "n.tenant_id = 'acme' WHERE m.tenant_id = 'acme' AND n.id IS NOT NULL "
                                    "ORDER BY m.id")):
            g = SQLGuard("mysql", tables=tables, schemas=[my_db], default_schema=my_db, tenant=tf,
                         inject_tenant=inject)
            sent = g.enforce(sql)
            assert "CAST('acme' AS BINARY)" in sent, sent
            got = [r["id"] for r in w.query(sent, row_cap=10, timeout_s=5).table.to_pylist()]
            assert got == ([] if "LEFT JOIN" in sql else [1, 5]), (sent, got)
    finally:
        w.close()
        with _admin(mysql_dsn) as c, c.cursor() as cur:
            cur.execute(f"DROP TABLE {my_db}.notes")


def test_one_clear_error_per_failure(mysql_dsn, my_db):
    host = parse_dsn(mysql_dsn)
    base = f"mysql://{{user}}@{host['host']}:{host['port']}/{{db}}"
    with pytest.raises(WarehouseUnreachable, match="access denied for user 'nobody'"):
        wh(base.format(user="nobody", db=my_db), my_db)
    with pytest.raises(WarehouseUnreachable, match="database 'no_such_db' does not exist"):
        open_warehouse(WarehouseConfig(kind="mysql", settings={"dsn": base.format(user="root", db="no_such_db")}))
    with pytest.raises(WarehouseUnreachable, match="cannot connect to 127.0.0.1:1/"):
        open_warehouse(WarehouseConfig(kind="mysql", settings={"dsn": "mysql://root@127.0.0.1:1/x",
                                                               "connect_timeout": 2}))
    with pytest.raises(ConfigError, match="not a MySQL URL"):
        open_warehouse(WarehouseConfig(kind="mysql", settings={"dsn": "postgres://h/db"}))
    for err in (WarehouseUnreachable, ConfigError):
        assert "\n" not in str(err)


def test_password_from_env_never_in_config(mysql_dsn, my_db, monkeypatch):
    monkeypatch.setenv("WH_TEST_MYSQL_PW", "")
    host = parse_dsn(mysql_dsn)
    w = open_warehouse(WarehouseConfig(kind="mysql", settings={
        "host": host["host"], "port": host["port"], "user": "root", "database": my_db,
        "password_env": "WH_TEST_MYSQL_PW"}))
    w.close()
    with pytest.raises(ConfigError, match="secrets are never stored|holds a password"):
        validate_project_data({"id": "p", "pack": "ecommerce", "warehouse": {
            "kind": "mysql", "settings": {"dsn": "mysql://root:hunter2@h:3306/db"}}}, "p.yaml")


def test_explain_cost_without_running(mysql_dsn, my_db):
    w = wh(mysql_dsn, my_db)
    try:
        got = w.explain_cost(f"SELECT * FROM {my_db}.orders o JOIN {my_db}.customers c USING (customer_id)")
        assert got is not None and got["value"] > 0
        assert w.explain_cost("SELECT * FROM no_such_table") is None
        w.health_check()
    finally:
        w.close()
