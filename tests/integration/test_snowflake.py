"""The Snowflake adapter against fakesnow (no Snowflake is reachable here)."""

from __future__ import annotations

import pytest

fakesnow = pytest.importorskip("fakesnow")

from assay.models import WarehouseConfig  # noqa: E402
from assay.warehouse.guard import SQLGuard  # noqa: E402
from assay.warehouse.snowflake import SnowflakeWarehouse  # noqa: E402


@pytest.fixture
def sf():
    import snowflake.connector

    with fakesnow.patch():
        conn = snowflake.connector.connect(database="SHOP", schema="SALES")
        cur = conn.cursor()
        cur.execute("CREATE SCHEMA IF NOT EXISTS SHOP.SALES")
        cur.execute("CREATE TABLE SALES.ORDERS (ORDER_ID INT, CUSTOMER_ID INT, AMOUNT FLOAT, TENANT_ID INT)")
        cur.execute("INSERT INTO SALES.ORDERS SELECT seq4(), seq4() % 10, seq4() * 1.5, 1 FROM TABLE(GENERATOR(ROWCOUNT => 500))")
        yield SnowflakeWarehouse(WarehouseConfig(kind="snowflake", settings={"database": "SHOP", "account": "x",
                                                                            "user": "u"}, schemas=["SALES"]))


def test_schema_and_query(sf):
    tables = sf.list_tables()
    assert [t.fqn for t in tables] == ["sales.orders"]
    assert [c.name for c in tables[0].columns] == ["order_id", "customer_id", "amount", "tenant_id"]
    r = sf.query("SELECT customer_id, count(*) AS n FROM sales.orders GROUP BY 1 ORDER BY 1", row_cap=100, timeout_s=10)
    assert r.table.num_rows == 10 and r.table.column_names == ["customer_id", "n"]


def test_comments_on_tables_and_columns(sf):
    import snowflake.connector

    conn = snowflake.connector.connect(database="SHOP", schema="SALES")
    conn.cursor().execute("COMMENT ON TABLE SALES.ORDERS IS 'Customer orders'")
    conn.cursor().execute("COMMENT ON COLUMN SALES.ORDERS.AMOUNT IS 'Order total'")
    t = sf.list_tables()[0]
    assert t.description == "Customer orders"
    assert {c.name: c.description for c in t.columns}["amount"] == "Order total"


def test_imported_keys_are_read_by_name_and_bad_rows_skipped():
    from assay.warehouse.snowflake import imported_keys

    # the columns of Snowflake's SHOW IMPORTED KEYS, as its documentation lists them
    headers = ["created_on", "pk_database_name", "pk_schema_name", "pk_table_name", "pk_column_name",
               "fk_database_name", "fk_schema_name", "fk_table_name", "fk_column_name", "key_sequence",
               "update_rule", "delete_rule", "fk_name", "pk_name", "deferrability", "rely", "comment"]
    row = (None, "SHOP", "SALES", "CUSTOMERS", "CUSTOMER_ID", "SHOP", "SALES", "ORDERS", "CUSTOMER_ID", 1,
           "NO ACTION", "NO ACTION", "FK1", "PK1", "NOT DEFERRABLE", "false", None)
    second = row[:9] + (2,) + row[10:]  # the second column of a two-column key
    empty = row[:3] + ("",) + row[4:]
    assert imported_keys(headers, [row, second, empty]) == [("SALES", "ORDERS", "CUSTOMER_ID", "SALES", "CUSTOMERS")]
    assert imported_keys(headers[:5] + ["pk_column_name"] + headers[5:], [row]) == []  # ambiguous header


def test_declared_keys_never_break_discovery(sf):
    """fakesnow's SHOW IMPORTED KEYS repeats a header and shifts its values: no hint, and no error."""
    import snowflake.connector

    conn = snowflake.connector.connect(database="SHOP", schema="SALES")
    conn.cursor().execute("CREATE TABLE SALES.CUSTOMERS (CUSTOMER_ID INT PRIMARY KEY)")
    conn.cursor().execute("CREATE TABLE SALES.REFUNDS (REFUND_ID INT, CUSTOMER_ID INT REFERENCES SALES.CUSTOMERS)")
    tables = {t.name: t for t in sf.list_tables()}
    assert set(tables) == {"orders", "customers", "refunds"}
    assert tables["refunds"].foreign_keys in ({}, {"customer_id": "sales.customers"})


def test_row_cap(sf):
    r = sf.query("SELECT * FROM sales.orders", row_cap=50, timeout_s=10)
    assert r.table.num_rows == 50 and r.truncated


def test_guard_in_snowflake_dialect(sf):
    from assay.models import TenantFilter

    g = SQLGuard("snowflake", tables=sf.list_tables(), schemas=["sales"], default_schema="sales",
                 tenant=TenantFilter(column="tenant_id", value=1))
    sql = g.enforce("SELECT COUNT_IF(amount > 10) AS big FROM sales.orders WHERE tenant_id = 1")
    assert sf.query(sql, row_cap=5, timeout_s=10).table.to_pylist()[0]["big"] > 0
    assert not g.check("SELECT * FROM sales.orders").allowed
    assert not g.check("SELECT SYSTEM$WAIT(100)").allowed


def test_a_date_spine_from_generator_runs_under_the_guard(sf):
    """Snowflake's date spine, TABLE(GENERATOR(ROWCOUNT => n)), was refused as a table named by an expression (the
    false-refusal corpus since session 25). A literal row count counts in the series budget, as generate_series
    does; a TIMELIMIT, a count read from a table or beyond the budget is refused, and TABLE('name') still is."""
    from assay.models import TenantFilter
    from assay.warehouse.functions import MAX_SERIES

    g = SQLGuard("snowflake", tables=sf.list_tables(), schemas=["sales"], default_schema="sales",
                 tenant=TenantFilter(column="tenant_id", value=1), pii_columns=["customer_id"])
    spine = ("WITH d AS (SELECT seq4() AS k FROM TABLE(GENERATOR(ROWCOUNT => 12))) "
             "SELECT d.k, count(o.order_id) AS n, max(o.customer_id) AS c FROM d "
             "LEFT JOIN sales.orders o ON o.order_id % 12 = d.k AND o.tenant_id = 1 GROUP BY 1 ORDER BY 1")
    v = g.vet(spine)
    assert v.masked_outputs == [2]  # the PII column's lineage holds through the spine's join
    rows = sf.query(v.sql, row_cap=100, timeout_s=10).table.to_pylist()
    assert [r["k"] for r in rows] == list(range(12)) and sum(r["n"] for r in rows) == 500
    for bad in (f"SELECT seq4() AS k FROM TABLE(GENERATOR(ROWCOUNT => {MAX_SERIES + 1}))",
                "SELECT seq4() AS k FROM TABLE(GENERATOR(TIMELIMIT => 10))",
                "SELECT seq4() AS k FROM TABLE(GENERATOR(ROWCOUNT => (SELECT count(*) FROM sales.orders)))",
                "SELECT a.k FROM (SELECT seq4() AS k FROM TABLE(GENERATOR(ROWCOUNT => 1000))) a, "
                "TABLE(GENERATOR(ROWCOUNT => 1000)) b",
                "SELECT * FROM TABLE('SHOP.SALES.ORDERS')"):
        assert not g.check(bad).allowed, bad


def test_lateral_flatten_of_a_column_runs_with_its_lineage(sf):
    """Snowflake's LATERAL FLATTEN (and TABLE(FLATTEN(...)) over literals) was refused as a table function, so a
    model could not read a VARIANT's keys; Databricks' LATERAL VIEW explode() too. Their columns carry their
    argument's taint (a PII argument masks every column of the flatten: VALUE, THIS, INDEX...; another argument
    masks none); the rows they unnest from generated values count in the series budget."""
    import snowflake.connector

    from assay.explore.executor import Executor
    from assay.models import TenantFilter
    from assay.pii import MASK

    conn = snowflake.connector.connect(database="SHOP", schema="SALES")
    conn.cursor().execute("CREATE TABLE SALES.EVENTS (EVENT_ID INT, TENANT_ID INT, EMAIL VARCHAR, PROPS VARIANT)")
    conn.cursor().execute("INSERT INTO SALES.EVENTS SELECT 1, 1, 'ann@x.io', PARSE_JSON('{\"page\": \"home\", \"ms\": 5}') "
                          "UNION ALL SELECT 2, 2, 'bob@y.io', PARSE_JSON('{\"page\": \"secret\"}')")
    cfg = WarehouseConfig(kind="snowflake", settings={"database": "SHOP"}, schemas=["sales"], pii_columns=["email"],
                          tenant_filter=TenantFilter(column="tenant_id", value=1))
    g = SQLGuard("snowflake", tables=sf.list_tables(), schemas=["sales"], default_schema="sales",
                 tenant=cfg.tenant_filter, pii_columns=cfg.pii_columns)
    ex = Executor(sf, g, cfg)
    out = ex.run("SELECT f.key AS k, f.value::string AS v FROM sales.events e, LATERAL FLATTEN(input => e.props) f "
                 "WHERE e.tenant_id = 1 ORDER BY 1", fix=False)
    assert out.ok and out.result.table.to_pylist() == [{"k": "ms", "v": "5"}, {"k": "page", "v": "home"}], out.error
    out = ex.run("SELECT f.value::string AS v, f.index AS i FROM sales.events e, "
                 "LATERAL FLATTEN(input => SPLIT(e.email, '@')) f WHERE e.tenant_id = 1", fix=False)
    assert out.ok and {r["v"] for r in out.result.table.to_pylist()} == {MASK}, out.result.table.to_pylist()
    out = ex.run("SELECT f.value::string AS stage FROM TABLE(FLATTEN(input => ARRAY_CONSTRUCT('visit', 'buy'))) f",
                 fix=False)
    assert out.ok and out.result.table.column("stage").to_pylist() == ["visit", "buy"], out.error
    assert not g.check("SELECT f.value FROM sales.events e, LATERAL FLATTEN(input => e.props) f").allowed  # tenant
    assert not g.check("SELECT a.value FROM TABLE(FLATTEN(input => SPLIT(SPACE(10000), ' '))) a, "
                       "TABLE(FLATTEN(input => SPLIT(SPACE(10000), ' '))) b").allowed
    # red team 17: a subquery in the argument is traced after the flatten that reads it: its taint counts
    v = g.vet("SELECT f.value::string AS v FROM TABLE(FLATTEN(input => (SELECT ARRAY_AGG(x.email) FROM sales.events x "
              "WHERE x.tenant_id = 1))) f")
    assert v.masked_outputs == [0]
    # ... and a series aggregated into a list one CTE before it is flattened counts as that series, qualified or
    # not (the session's review: FLATTEN(input => arr) found no CTE)
    for arr in ("b.arr", "arr"):
        assert not g.check("WITH a AS (SELECT seq4() AS x FROM TABLE(GENERATOR(ROWCOUNT => 90000))), "
                           "b AS (SELECT ARRAY_AGG(x) AS arr FROM a) SELECT count(*) AS n FROM b, "
                           f"LATERAL FLATTEN(input => {arr}) f, LATERAL FLATTEN(input => {arr}) g").allowed
    dbx = SQLGuard("databricks", tables=sf.list_tables(), schemas=["sales"], default_schema="sales",
                   pii_columns=["email"])
    assert dbx.vet("SELECT t.x FROM sales.orders c LATERAL VIEW explode(array((SELECT max(x.email) "
                   "FROM sales.events x))) t AS x").masked_outputs == [0]
    v = dbx.vet("SELECT e.event_id, t.x FROM sales.events e LATERAL VIEW explode(array(e.email, 'a')) t AS x")
    assert v.masked_outputs == [1]
    assert dbx.vet("SELECT e.event_id, t.tag FROM sales.events e LATERAL VIEW explode(array('a', 'b')) t AS tag"
                   ).masked_outputs == []


def test_sample_rows_and_fix_prompt(sf):
    t = sf.list_tables()[0]
    assert len(sf.sample_rows(t, 3)) == 3
    assert "{{#VERIFICATION_CONTEXT}}" in sf.sql_fix_prompt()


@pytest.mark.parametrize("kind", ["duckdb", "postgres", "snowflake"])
def test_every_fix_prompt_keeps_the_verification_section(kind):
    from assay.warehouse.base import fix_prompt_for

    text = fix_prompt_for(kind)
    assert "{{#VERIFICATION_CONTEXT}}" in text and "{{/VERIFICATION_CONTEXT}}" in text


def test_a_result_past_its_byte_budget_stops_being_read(sf, monkeypatch):
    """Red team 8: the row cap counts rows, not bytes; the adapter reads in batches and stops past the budget."""
    import assay.warehouse.base as base
    from assay.errors import QueryError

    monkeypatch.setattr(base, "MAX_RESULT_BYTES", 10_000)
    with pytest.raises(QueryError, match="the result holds more than"):
        sf.query("SELECT repeat('x', 100) AS s FROM sales.orders", row_cap=1000, timeout_s=10)
    assert sf.query("SELECT order_id FROM sales.orders", row_cap=1000, timeout_s=10).table.num_rows == 500


def test_a_compilation_errors_detail_reaches_the_model():
    """The session's review: the adapter kept the first line, "SQL compilation error:", and dropped which name."""
    from assay.warehouse.redact import scrub_error
    from assay.warehouse.snowflake import _first_line

    class E(Exception):
        msg = "SQL compilation error:\nerror line 1 at position 7\ninvalid identifier 'AMOUT'"

    line = _first_line(E())
    assert line == "SQL compilation error: error line 1 at position 7 invalid identifier 'AMOUT'"
    assert scrub_error(line, strict=True) == line  # raised before a row is read: whole under strict scrubbing

    class D(Exception):
        msg = "Numeric value 'ann@x.io' is not recognized\nsecond line"

    assert _first_line(D()) == "Numeric value 'ann@x.io' is not recognized"
