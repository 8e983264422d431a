"""Copy a demo warehouse into a MySQL/MariaDB database (for trying assay, and for tests)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import duckdb

_TYPES = {"BIGINT": "BIGINT", "INTEGER": "INT", "DOUBLE": "DOUBLE", "FLOAT": "FLOAT", "VARCHAR": "TEXT",
          "BOOLEAN": "BOOLEAN", "TIMESTAMP": "DATETIME(6)", "DATE": "DATE",
          "TIMESTAMP WITH TIME ZONE": "DATETIME(6)"}


def _q(ident: str) -> str:
    return "`" + ident.replace("`", "``") + "`"


def load_into_mysql(duckdb_path: Path, dsn: str, database: str, *, password: str | None = None) -> dict[str, int]:
    """Create ``database`` (dropping its demo tables first) and copy every table of the DuckDB file."""
    import pymysql

    from ..warehouse.mysql import parse_dsn

    params = parse_dsn(dsn)
    params.pop("database", None)
    if password is not None:
        params["password"] = password
    src = duckdb.connect(str(duckdb_path), read_only=True)
    counts = {}
    try:
        tables = [r[0] for r in src.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main' ORDER BY 1").fetchall()]
        con = pymysql.connect(**params, charset="utf8mb4", autocommit=False, local_infile=True)
        try:
            with con.cursor() as cur:
                cur.execute(f"CREATE DATABASE IF NOT EXISTS {_q(database)} CHARACTER SET utf8mb4")
                for t in tables:
                    cols = src.execute(
                        "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = ? "
                        "ORDER BY ordinal_position", [t]).fetchall()
                    cur.execute(f"DROP TABLE IF EXISTS {_q(database)}.{_q(t)}")
                    cur.execute(f"CREATE TABLE {_q(database)}.{_q(t)} ("
                                + ", ".join(f"{_q(c)} {_TYPES.get(ty, 'TEXT')}" for c, ty in cols) + ")")
                    with tempfile.TemporaryDirectory(prefix="assay-demo-") as tmp:
                        # DuckDB writes the rows as a tab-separated file that LOAD DATA LOCAL reads
                        # (NULL as \N, booleans as 0/1): far faster than INSERTs
                        csv = Path(tmp) / f"{t}.tsv"
                        sel = ", ".join(f'CAST("{c}" AS INTEGER)' if ty == "BOOLEAN" else
                                        f'CAST("{c}" AS TIMESTAMP)' if ty == "TIMESTAMP WITH TIME ZONE" else
                                        f'"{c}"' for c, ty in cols)
                        src.execute(f"COPY (SELECT {sel} FROM \"{t}\") TO '{csv}' "
                                    "(FORMAT csv, DELIMITER '\t', HEADER false, NULLSTR '\\N', QUOTE '', ESCAPE '')")
                        cur.execute(f"LOAD DATA LOCAL INFILE %s INTO TABLE {_q(database)}.{_q(t)} "
                                    "CHARACTER SET utf8mb4 FIELDS TERMINATED BY '\t' ESCAPED BY '' "
                                    "LINES TERMINATED BY '\n'", [str(csv)])
                    con.commit()
                    # the keys a MySQL schema would have: without them every join is a nested loop
                    for c, _ in cols:
                        if c.endswith("_id"):
                            cur.execute(f"ALTER TABLE {_q(database)}.{_q(t)} ADD INDEX ({_q(c)})")
                    cur.execute(f"ANALYZE TABLE {_q(database)}.{_q(t)}")
                    cur.fetchall()
                    counts[t] = src.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0]
        finally:
            con.close()
    finally:
        src.close()
    return counts
