"""Generated SQL is written once, in DuckDB's dialect, and transpiled to the warehouse's."""

from __future__ import annotations

from functools import lru_cache

import sqlglot


@lru_cache(maxsize=4096)
def portable(sql: str, dialect: str) -> str:
    if dialect == "duckdb":
        return sql
    return sqlglot.transpile(sql, read="duckdb", write=dialect)[0]
