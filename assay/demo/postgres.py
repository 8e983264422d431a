"""Copy a demo warehouse into a PostgreSQL schema (for trying assay, and for tests)."""

from __future__ import annotations

from pathlib import Path

import duckdb
import psycopg
from psycopg import sql as psql

_TYPES = {"BIGINT": "bigint", "INTEGER": "integer", "DOUBLE": "double precision", "FLOAT": "real",
          "VARCHAR": "text", "BOOLEAN": "boolean", "TIMESTAMP": "timestamp", "DATE": "date",
          "TIMESTAMP WITH TIME ZONE": "timestamptz"}


def load_into_postgres(duckdb_path: Path, dsn: str, schema: str) -> dict[str, int]:
    src = duckdb.connect(str(duckdb_path), read_only=True)
    counts = {}
    try:
        tables = [r[0] for r in src.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main' ORDER BY 1").fetchall()]
        with psycopg.connect(dsn, autocommit=True) as pg:
            pg.execute(psql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(psql.Identifier(schema)))
            for t in tables:
                cols = src.execute(
                    "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = ? "
                    "ORDER BY ordinal_position", [t]).fetchall()
                ddl = psql.SQL("CREATE TABLE {}.{} ({})").format(
                    psql.Identifier(schema), psql.Identifier(t),
                    psql.SQL(", ").join(psql.SQL("{} {}").format(psql.Identifier(c), psql.SQL(_TYPES.get(ty, "text")))
                                        for c, ty in cols))
                pg.execute(psql.SQL("DROP TABLE IF EXISTS {}.{}").format(psql.Identifier(schema), psql.Identifier(t)))
                pg.execute(ddl)
                rel = src.execute(f'SELECT * FROM "{t}"')
                with pg.cursor().copy(psql.SQL("COPY {}.{} FROM STDIN").format(
                        psql.Identifier(schema), psql.Identifier(t))) as cp:
                    while True:
                        batch = rel.fetchmany(50_000)
                        if not batch:
                            break
                        for row in batch:
                            cp.write_row(row)
                pg.execute(psql.SQL("ANALYZE {}.{}").format(psql.Identifier(schema), psql.Identifier(t)))
                counts[t] = src.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0]
    finally:
        src.close()
    return counts
