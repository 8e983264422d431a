"""load_into_postgres: every value arrives as DuckDB holds it (one transaction, DuckDB's CSV through COPY)."""

from __future__ import annotations

import uuid

import duckdb
import psycopg

from assay.demo.postgres import load_into_postgres


def test_values_survive_the_copy(pg_dsn, tmp_path):
    db = tmp_path / "w.duckdb"
    con = duckdb.connect(str(db))
    con.execute("""CREATE TABLE odd AS SELECT * FROM (VALUES
        (1, 'plain', TRUE, DATE '2023-01-31', TIMESTAMP '2023-01-31 10:11:12.5', TIMESTAMPTZ '2023-01-31 10:00:00+03', 1.5e300),
        (2, '', FALSE, NULL, NULL, NULL, -0.25),
        (3, NULL, NULL, DATE '1999-12-31', TIMESTAMP '1999-12-31 23:59:59', TIMESTAMPTZ '1999-12-31 23:00:00+00', NULL),
        (4, 'a, "quoted"
    two lines', TRUE, DATE '2024-02-29', TIMESTAMP '2024-02-29 00:00:00', TIMESTAMPTZ '2024-02-29 12:00:00-05', 3.0)
        ) v(id, s, b, d, ts, tstz, x)""")
    con.execute("CREATE TABLE big AS SELECT i AS id, 'r' || i AS label FROM range(5000) t(i)")
    con.execute("SET TimeZone = 'UTC'")
    want = con.execute("SELECT id, s, b, d, ts, tstz, x FROM odd ORDER BY id").fetchall()
    con.close()
    schema = f"assay_load_{uuid.uuid4().hex[:8]}"
    try:
        counts = load_into_postgres(db, pg_dsn, schema)
        assert counts == {"big": 5000, "odd": 4}
        with psycopg.connect(pg_dsn) as c:
            c.execute("SET TimeZone = 'UTC'")
            got = c.execute(f"SELECT id, s, b, d, ts, tstz, x FROM {schema}.odd ORDER BY id").fetchall()
            assert got == want  # NULL and the empty string told apart; quotes, commas, newlines, zones kept
            assert c.execute(f"SELECT count(*), max(label) FROM {schema}.big").fetchone() == (5000, "r999")
            # analysed: discovery's row counts (reltuples) are right without a count(*)
            assert c.execute("SELECT reltuples FROM pg_class WHERE oid = %s::regclass",
                             (f"{schema}.big",)).fetchone()[0] == 5000
    finally:
        with psycopg.connect(pg_dsn, autocommit=True) as c:
            c.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
