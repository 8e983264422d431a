"""What the executor hands on is safe: PII-derived outputs masked before anyone sees them, engine
error text scrubbed of the values it quotes, and any failure of one query a step error."""

from __future__ import annotations

import re

import json
from pathlib import Path

import pytest

from assay.digest import build_compact_result, digest_json
from assay.explore.executor import Executor
from assay.llm.scripted import ReplayLLM
from assay.models import WarehouseConfig
from assay.pii import MASK
from assay.warehouse.duckdb import DuckDBWarehouse
from assay.warehouse.guard import SQLGuard
from assay.warehouse.redact import WITHHELD, scrub_error
from tests.helpers import make_explorer, small_warehouse


class LineageStub(SQLGuard):
    """A test double of our guard: the real verdict, with PII lineage as the test declares it
    (output positions to mask, and whether the statement reads a PII column)."""

    def __init__(self, *a, masked=(), touches=False, **kw):
        super().__init__(*a, **kw)
        self.masked, self.touches = list(masked), touches

    def vet(self, sql):
        v = super().vet(sql)
        v.masked_outputs, v.touches_pii = list(self.masked), self.touches
        return v


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    return small_warehouse(tmp_path_factory.mktemp("wh") / "small.duckdb")


def executor(db, guard_cls=SQLGuard, llm=None, **kw):
    wh = DuckDBWarehouse(str(db))
    guard = guard_cls("duckdb", tables=wh.list_tables(), default_schema="main", **kw)
    return Executor(wh, guard, WarehouseConfig(kind="duckdb", settings={"path": str(db)}), llm)


def test_lineage_positions_are_masked_in_the_result_itself(db):
    # `contact` is an email under another name: the name-based rule cannot see it, lineage can
    ex = executor(db, LineageStub, masked=[1])
    out = ex.run("SELECT customer_id, email AS contact, channel FROM customers ORDER BY customer_id LIMIT 5")
    assert out.ok
    rows = out.result.table.to_pylist()
    assert [r["contact"] for r in rows] == [MASK] * 5
    assert rows[0]["customer_id"] == 1 and rows[0]["channel"] in ("paid", "organic")  # the rest untouched
    digest = digest_json(build_compact_result(out.result.table, auto_pii=False))
    assert "@x.io" not in digest


def test_masking_keeps_nulls_and_ignores_positions_out_of_range(db):
    ex = executor(db, LineageStub, masked=[0, 7])
    out = ex.run("SELECT CASE WHEN customer_id % 2 = 0 THEN email END AS e FROM customers ORDER BY customer_id LIMIT 4")
    assert out.result.table.column("e").to_pylist() == [None, MASK, None, MASK]


class WidthStub(LineageStub):
    def vet(self, sql):
        v = super().vet(sql)
        v.output_count = 1  # the guard traced one output; the engine returns more (SELECT * of a pivot...)
        return v


def test_a_result_wider_than_the_guard_traced_is_masked_whole(db):
    ex = executor(db, WidthStub, masked=[0])
    out = ex.run("SELECT customer_id, email FROM customers ORDER BY 1 LIMIT 2")
    assert out.result.table.to_pylist() == [{"customer_id": MASK, "email": MASK}] * 2


def test_explorer_tool_result_and_stored_step_carry_no_lineage_pii(db):
    sql = "SELECT lower(email) AS who, count(*) AS n FROM customers GROUP BY 1 ORDER BY 1 LIMIT 3"
    llm = ReplayLLM({"explore": [json.dumps({"thinking": "t", "purpose": "p", "query": sql}), '{"done": true}']})
    saved = []
    ex = make_explorer(db, llm, sink=saved.append)
    ex.executor.guard = LineageStub("duckdb", tables=ex.tables, default_schema="main", masked=[0], touches=True)
    out = ex.run()
    assert out.steps[0].ok
    seen = "".join(m.content for c in llm.calls for m in c.messages)  # what the model received
    stored = "".join(s.model_dump_json() for s in saved)
    for text in (seen, stored):
        assert "@x.io" not in text and MASK in text


def test_cast_error_does_not_leak_the_value(db):
    # the engine quotes the offending value; the statement reads a PII column, so values go
    ex = executor(db, LineageStub, touches=True)
    out = ex.run("SELECT CAST(email AS INTEGER) AS n FROM customers", fix=False)
    assert not out.ok and "@x.io" not in out.error and "user" not in out.error
    assert out.error.startswith("Conversion Error: Could not convert string")
    assert all("@x.io" not in (a.error or "") for a in out.attempts)


def test_cast_error_of_a_name_is_masked_when_the_statement_touches_pii(db):
    ex = executor(db, LineageStub, touches=True)
    out = ex.run("SELECT CAST(channel || ' Ann Lee' AS INTEGER) FROM customers", fix=False)
    assert "Ann Lee" not in out.error and "organic" not in out.error and MASK in out.error


def test_contacts_are_masked_from_errors_even_without_pii_lineage(db):
    ex = executor(db)  # the real guard: no lineage yet, touches_pii False
    out = ex.run("SELECT CAST(email AS INTEGER) FROM customers", fix=False)
    assert not out.ok and "@x.io" not in out.error and MASK in out.error


def test_the_fixer_never_sees_the_value(db):
    llm = ReplayLLM({"fix:explore": ["```sql\nSELECT 1 AS one\n```"]})
    ex = executor(db, LineageStub, llm=llm, touches=True)
    out = ex.run("SELECT CAST(email AS INTEGER) FROM customers")
    assert out.ok and out.fixes == 1
    sent = "".join(m.content for c in llm.calls for m in c.messages) + json.dumps([c.meta for c in llm.calls])
    assert "@x.io" not in sent


def test_identifier_errors_stay_useful(db):
    ex = executor(db)
    out = ex.run("SELECT emial FROM customers", fix=False)
    assert out.error.startswith('Binder Error: Referenced column "emial" not found in FROM clause!')  # its typo
    # reading PII, or under a tenant filter: an error raised before any row is read (binding names) stays whole
    # (session 24's review: 'Table "o" does not have a column named "amout"' was masked), a value's error does not
    ex = executor(db, pii_columns=["email"])
    out = ex.run("SELECT email, chanel FROM customers", fix=False)
    assert out.error.startswith('Binder Error: Referenced column "chanel" not found'), out.error
    out = ex.run("SELECT CAST(email AS INT) AS x FROM customers", fix=False)
    assert "@x.io" not in out.error and "user" not in out.error and "[masked]" in out.error, out.error


ALPHABET = " ".join("abcdefghijklmnopqrstuvwxyz0123456789")


@pytest.mark.parametrize("sql", [
    # red team 7: the value spelled out with spaces, every letter a word of the statement (its literal)
    f"SELECT CAST(regexp_replace(email, '(.)', '\\1 ', 'g') AS INT) AS x FROM customers "
    f"WHERE customer_id = 7 AND channel <> '{ALPHABET}'",
    # ... and as unquoted digits: DuckDB prints an overflow's operands as they are (4 characters per query)
    "SELECT CAST((ascii(substr(email, 1, 1)) - 32) * 1000000 + (ascii(substr(email, 2, 1)) - 32) * 10000 AS BIGINT) "
    "* 1000000000000 AS x FROM customers WHERE customer_id = 7",
    "SELECT CAST(ascii(substr(email, 1, 1)) AS TINYINT) * 100 AS x FROM customers WHERE customer_id = 7",
])
def test_an_error_on_a_pii_value_says_nothing_of_it(db, sql):
    ex = executor(db, pii_columns=["email"])
    out = ex.run(sql, fix=False)
    assert not out.ok and out.error, out
    spelled = "u s e r 7"
    digits = {str(ord(ch) - 32) for ch in "us"} | {str(ord("u"))}
    assert spelled not in out.error and not any(d in out.error for d in digits), out.error


def test_an_error_under_a_tenant_filter_says_nothing_of_a_value(db):
    """A tenant filter makes every value of a row sensitive, PII or not (PostgreSQL may fail on another tenant's
    row before the tenant predicate removes it: tests/integration/test_postgres.py)."""
    from assay.models import TenantFilter

    ex = executor(db, tenant=TenantFilter(column="customer_id", value=7), inject_tenant=True)
    out = ex.run("SELECT CAST(channel AS INT) AS x FROM customers", fix=False)
    assert not out.ok and "organic" not in out.error and out.error.startswith("Conversion Error"), out.error
    out = ex.run("SELECT CAST(amount * 1e30 AS BIGINT) AS x FROM orders", fix=False)
    assert not out.ok and not any(ch.isdigit() for ch in out.error.replace("INT64", "")), out.error


def test_a_result_laid_out_by_another_catalog_is_masked_whole(db):
    """Red team 7: a table rebuilt with its columns in another order after the schema was cached kept its width,
    so the guard's positions masked the wrong column (MCP ``query`` returned the e-mail)."""
    from assay.models import ColumnInfo, TableInfo

    wh = DuckDBWarehouse(str(db))
    stale = [TableInfo(schema="main", name="customers", columns=[ColumnInfo(name=n, type="VARCHAR") for n in
                                                                  ("customer_id", "channel", "email")])]
    ex = Executor(wh, SQLGuard("duckdb", tables=stale, default_schema="main", pii_columns=["email"]),
                  WarehouseConfig(kind="duckdb", settings={"path": str(db)}))
    out = ex.run("SELECT * FROM customers ORDER BY customer_id LIMIT 3", fix=False)
    assert out.ok and all(v == MASK for r in out.result.table.to_pylist() for v in r.values()), out.result.table
    # a column list over a * renames by the catalog's order: refused
    out = ex.run("SELECT x.v FROM (SELECT * FROM customers) AS x(a, b, v)", fix=False)
    assert out.refused and "column list over a *" in out.refused
    out = ex.run("WITH x(a, b, v) AS (SELECT * FROM customers) SELECT v FROM x", fix=False)
    assert out.refused and "column list over a *" in out.refused
    # names the statement does not fix (an expression) are the engine's own: no reason to mask
    fresh = executor(db, pii_columns=["email"])
    out = fresh.run("SELECT channel, count(*), upper(channel) FROM customers GROUP BY 1 ORDER BY 1", fix=False)
    assert out.ok and out.result.table.column(0).to_pylist() == ["organic", "paid"]
    wh.close()


class Exploding(DuckDBWarehouse):
    """A test double of our adapter: a failure no adapter should let through, to prove the executor holds."""

    def query(self, sql, **kw):
        raise OSError("stream broke while reading ann@example.com")


def test_an_unexpected_adapter_exception_is_a_step_error(db):
    ex = Executor(Exploding(str(db)), SQLGuard("duckdb"), WarehouseConfig(kind="duckdb", settings={"path": str(db)}))
    out = ex.run("SELECT 1 AS a", fix=False)
    assert not out.ok and out.error.startswith("the query failed: OSError") and "ann@example.com" not in out.error


class BrokenGuard(SQLGuard):
    def vet(self, sql):
        raise RecursionError("deep")


def test_a_guard_that_cannot_check_refuses(db):
    ex = executor(db, BrokenGuard)
    out = ex.run("SELECT 1 AS a", fix=False)
    assert not out.ok and out.refused and "could not check" in out.refused


@pytest.mark.parametrize("message, clean", [
    ("invalid input syntax for type integer: \"Ann Lee\"", "invalid input syntax for type integer: [masked]"),
    ("Conversion Error: Could not convert string 'John O'Brien' to INT32",
     "Conversion Error: Could not convert string [masked] to [masked]"),
    ("date field value out of range: 2020-13-07", "date field value out of range: [masked]"),
    ("invalid value \"u1@x\" for \"YYYY\"", "invalid value [masked] for [masked]"),
    ("Invalid Input Error: missing ): ann(", f"Invalid Input Error: [masked] {WITHHELD}"),
    ("operator does not exist: text = integer", "operator does not exist: text = integer"),
])
def test_scrub_fails_closed_on_values(message, clean):
    assert scrub_error(message, strict=True, known=["x", "t"]) == clean


@pytest.mark.parametrize("message, sql", [
    # a value's apostrophe read as the closing quote kept "Brien Siobhan" (session 23's red team): the first part,
    # "O", is a word of the statement (its alias), and the rest was left as the engine's words
    ("Conversion Error: Could not convert string 'O'Brien Siobhan' to INT32",
     "SELECT CAST(o.customer_name AS INT) FROM customers o"),
    ("Conversion Error: Could not convert string 'D'Angelo Marcus' to INT32",
     "SELECT CAST(d.customer_name AS INT) FROM customers d"),
    ("Conversion Error: Could not convert string 'Union's Corner, 7 Elm Lane, Leeds LS1 4AB' to INT32",
     "SELECT CAST(street AS INT) FROM customers WHERE id = 3"),
])
def test_scrub_reads_a_values_apostrophe_as_part_of_it(message, sql):
    assert scrub_error(message, strict=True, known=sql.split()) == \
        "Conversion Error: Could not convert string [masked] to [masked]"


@pytest.mark.parametrize("sql", [
    # red team 15: a value that starts and ends with a quoted keyword read as two known names around the engine's
    # own words ("Could not convert string 'select' user7 AT x.io 'select' to INT32"), the @ and the digits
    # rewritten so that no contact pattern saw it
    "SELECT CAST('select'' ' || translate(replace(email, '@', ' AT '), '0123456789', 'abcdefghij') || ' ''select' "
    "AS INTEGER) FROM customers WHERE customer_id = 7",
    # ... and a value ending in its own ": " (the tail after the last one was masked, the value before it kept)
    "SELECT regexp_matches('x', replace(email, '@', ' AT ') || ': (') FROM customers WHERE customer_id = 7",
    # red team 16: a value where the engine writes it unquoted, before any ": " (every e-mail of the table at once)
    "SELECT strftime(now(), string_agg(translate(replace(email, '@', ' AT '), '0123456789', 'abcdefghij'), ' ') "
    "|| ' %Q') FROM customers WHERE customer_id < 4",
    # ... and one spelt in SQL's own words, a word per character (no quote, no unknown word left to catch)
    "SELECT CAST(array_to_string(list_transform(string_split(lower(email), ''), lambda ch: CASE ch WHEN 'u' THEN "
    "'integer' WHEN 's' THEN 'char' WHEN 'e' THEN 'money' WHEN 'r' THEN 'order' ELSE 'null' END), '.') AS INT) "
    "FROM customers WHERE customer_id = 7",
    # red team 17: the adapter keeps a message's first line, so a value ending in a line break and a type's name
    # put its own tail in the form's last slot ("to int 217215201214151...": the e-mail in character codes)
    "SELECT CAST('a to int ' || left(array_to_string(list_transform(str_split(email, ''), lambda c: "
    "CAST(ord(c) + 100 AS VARCHAR)), ''), 36) || chr(10) AS INT) FROM customers WHERE customer_id = 7",
    # red team 18: ... as a type's precision ("to INT32(117115101114...)"), or cut at the adapter's 500 characters
    "SELECT CAST('zz'' to INT32(' || array_to_string(list_transform(str_split(email, ''), lambda x: "
    "lpad(CAST(ord(x) AS VARCHAR), 3, '0')), '') || ')' || chr(10) || 'x' AS INT) FROM customers "
    "WHERE customer_id = 7",
    "SELECT CAST(repeat('z', 213) || ''' to INT32(' || array_to_string(list_transform(str_split(rpad(email, 40, "
    "'~'), ''), lambda x: lpad(CAST(ord(x) AS VARCHAR), 3, '0')), '') || ')' || repeat('y', 200) AS INT) "
    "FROM customers WHERE customer_id = 7",
])
def test_an_error_never_shows_a_pii_value_however_it_is_spelt(db, sql):
    ex = executor(db, pii_columns=["email"])
    out = ex.run(sql, fix=False)
    assert not out.ok and out.error and MASK in out.error, out.error
    assert "user" not in out.error.lower() and "x.io" not in out.error and "AT" not in out.error, out.error
    assert "money" not in out.error and "char.money" not in out.error and not re.search(r"\d{6}", out.error), \
        out.error


def test_scrub_keeps_an_engines_sentence_in_a_form_it_knows():
    """What the model needs to fix its statement stays, in the engine's own sentence: a name of the catalog or of
    the statement (a column it misspelt), the types; a value's slot is masked whatever it holds; a message in no
    known form is its class and WITHHELD (red teams 15 and 16 spelt values in the engine's and SQL's words)."""
    sql = "SELECT c.amout, sum(c.name) FROM customers c GROUP BY 1"
    keep = ['column "email" must appear in the GROUP BY clause or be used in an aggregate function',
            'column c.amout does not exist', "function sum(text) does not exist",
            "operator does not exist: text = integer", "Unknown column 'amout' in 'field list'",
            'Binder Error: Referenced column "zzz" not found in FROM clause!',  # DuckDB binds before it reads
            'syntax error at or near "GROUP"']
    for msg in keep:
        assert scrub_error(msg, strict=True, known=["email", "customers"], statement=sql) == msg
    # the adapters' own sentences keep their words, the engine's part masked (the session's review)
    for msg, clean in [
        ("refused by the read-only connection: cannot execute INSERT", "refused by the read-only connection: [masked]"),
        ("the result holds more than 256 MB; select fewer or shorter columns, or aggregate", None),
        ("the result could not be read: ValueError: ann@x.io", "the result could not be read: ValueError: [masked]"),
    ]:
        assert scrub_error(msg, strict=True, statement=sql) == (clean or msg)
    for msg, clean in [
        ('column "zzz" does not exist', f"[masked] {WITHHELD}"),  # neither the catalog's nor the statement's
        ('unit "select" alice at tb.com "select" not recognized for type timestamp',
         "unit [masked] not recognized for type [masked]"),
        ("Invalid Input Error: Failed to parse format specifier alice AT example.com bob AT t.org %Q: x",
         "Invalid Input Error: Failed to parse format specifier [masked]"),
        ('invalid input syntax for type integer: "integer.char.money.smallint.decimal"',
         "invalid input syntax for type integer: [masked]"),
        ("Conversion Error: Expected OBJECT, but got ARRAY: [true,false,true]", f"Conversion Error: [masked] {WITHHELD}"),
        ('syntax error at or near "integer.char.money"', f"[masked] {WITHHELD}"),  # not the statement's text
    ]:
        assert scrub_error(msg, strict=True, known=["email", "customers"], statement=sql) == clean


def test_scrub_always_masks_contacts():
    text = scrub_error("bad value ann@example.com, call +44 20 7946 0958 or 555-123-4567 (on 2024-01-01 10:00:00)")
    assert text == "bad value [masked], call [masked] or [masked] (on 2024-01-01 10:00:00)"


def test_every_streaming_adapter_reads_through_one_budgeted_fetch(monkeypatch):
    """Session 25: SQL Server read up to the row cap in one fetch, with no byte budget. PostgreSQL, MySQL,
    Snowflake and SQL Server now read through ``fetch_capped``: batches of FETCH_ROWS, one row past the cap to
    say the result was cut, the size checked after each batch, a hook before each read (PostgreSQL's deadline).
    Exercised here on a real DB-API cursor (DuckDB's)."""
    import duckdb

    import assay.warehouse.base as base
    from assay.errors import QueryError

    con = duckdb.connect()
    calls = []
    cur = con.cursor()
    cur.execute("SELECT i FROM range(2500) t(i)")
    got = base.fetch_capped(cur, 2000, before_batch=lambda: calls.append(1))
    assert len(got) == 2001 and len(calls) == 3  # 1,000 + 1,000 + 1: one past the cap, three reads
    cur.execute("SELECT i FROM range(5) t(i)")
    assert [r[0] for r in base.fetch_capped(cur, 10)] == [0, 1, 2, 3, 4]
    monkeypatch.setattr(base, "MAX_RESULT_BYTES", 100_000)
    cur.execute("SELECT repeat('x', 200) FROM range(3000)")
    with pytest.raises(QueryError, match="the result holds more than"):
        base.fetch_capped(cur, 3000)
    for mod in ("postgres", "mysql", "snowflake", "mssql"):
        text = (Path(base.__file__).parent / f"{mod}.py").read_text()
        assert "fetch_capped(cur, row_cap" in text, mod


def test_the_fixer_reads_the_error_before_the_query(db):
    """InsightBench (session 8): the reason a query failed, given after a long query, was easy to miss. The fix
    request states the error first, then the query."""
    llm = ReplayLLM({"fix:explore": ["```sql\nSELECT 1 AS one\n```"]})
    ex = executor(db, LineageStub, llm=llm)
    out = ex.run("SELECT emial FROM customers")
    assert out.ok and out.fixes == 1
    text = llm.calls[0].messages[0].content
    assert text.startswith("Error:\n") and text.index("SELECT emial") > text.index("Query:") > text.index("emial")


def test_a_result_past_its_byte_budget_stops_being_read(db, monkeypatch):
    """Red team 8: the row cap counts rows, and 25 rows of 82 MB took the client past 3.6 GB. Each adapter reads a
    result in batches and stops once it holds more than MAX_RESULT_BYTES, with one clear error."""
    import assay.warehouse.base as base
    from assay.errors import QueryError

    # arrays, JSON and records count by what they hold (session 24's review: 8 bytes each)
    assert base.rows_bytes([("ab", ["x" * 10, ["y" * 5]], {"k": "v" * 3}, 1)]) == 29
    monkeypatch.setattr(base, "MAX_RESULT_BYTES", 2**20)
    wh = DuckDBWarehouse(str(db))
    try:
        with pytest.raises(QueryError, match="the result holds more than 1 MB"):
            wh.query("SELECT repeat('x', 5000) AS s FROM range(1000)", row_cap=10_000, timeout_s=30)
        assert wh.query("SELECT repeat('x', 500) AS s FROM range(1000)", row_cap=10_000, timeout_s=30).row_count == 1000
    finally:
        wh.close()
