"""Copy a demo warehouse into a PostgreSQL schema (for trying assay, and for tests).

One transaction for the whole copy (a commit per statement cost an fsync each: four per table, minutes
at 2,000 tables on a busy disk), and each table's rows go as DuckDB's own CSV through ``COPY FROM
STDIN`` instead of row by row through Python (2.5 million rows of the 2,000-table ERP warehouse took
87 s of CPU that way).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import duckdb
import psycopg
from psycopg import sql as psql

_TYPES = {"BIGINT": "bigint", "INTEGER": "integer", "DOUBLE": "double precision", "FLOAT": "real",
          "VARCHAR": "text", "BOOLEAN": "boolean", "TIMESTAMP": "timestamp", "DATE": "date",
          "TIMESTAMP WITH TIME ZONE": "timestamptz"}
_CHUNK = 1 << 20


def load_into_postgres(duckdb_path: Path, dsn: str, schema: str) -> dict[str, int]:
    src = duckdb.connect(str(duckdb_path), read_only=True)
    src.execute("SET enable_progress_bar = false")
    counts = {}
    try:
        tables = [r[0] for r in src.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main' ORDER BY 1").fetchall()]
        with tempfile.TemporaryDirectory(prefix="assay-pg-load-") as tmp, psycopg.connect(dsn) as pg:
            csv = Path(tmp) / "t.csv"
            with pg.transaction():
                pg.execute(psql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(psql.Identifier(schema)))
                columns: dict[str, list[tuple[str, str]]] = {}  # one catalog query, not one per table
                for t, c, ty in src.execute(
                        "SELECT table_name, column_name, data_type FROM information_schema.columns "
                        "WHERE table_schema = 'main' ORDER BY table_name, ordinal_position").fetchall():
                    columns.setdefault(t, []).append((c, ty))
                for t in tables:
                    cols = columns[t]
                    target = psql.SQL("{}.{}").format(psql.Identifier(schema), psql.Identifier(t))
                    pg.execute(psql.SQL("DROP TABLE IF EXISTS {}").format(target))
                    pg.execute(psql.SQL("CREATE TABLE {} ({})").format(target, psql.SQL(", ").join(
                        psql.SQL("{} {}").format(psql.Identifier(c), psql.SQL(_TYPES.get(ty, "text")))
                        for c, ty in cols)))
                    # NULL is an unquoted empty field, an empty string a quoted one: PostgreSQL's CSV reads both so
                    src.execute(f"COPY \"{t}\" TO '{csv}' (FORMAT csv, HEADER false)")
                    with pg.cursor().copy(psql.SQL("COPY {} FROM STDIN (FORMAT csv)").format(target)) as cp, \
                            csv.open("rb") as f:
                        while chunk := f.read(_CHUNK):
                            cp.write(chunk)
                    pg.execute(psql.SQL("ANALYZE {}").format(target))
                    counts[t] = src.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0]
    finally:
        src.close()
    return counts
