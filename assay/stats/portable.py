"""Generated SQL is written once, in DuckDB's dialect, and transpiled to the warehouse's."""

from __future__ import annotations

from functools import lru_cache

import sqlglot
from sqlglot import exp

_MAKE_DATE = {"postgres"}  # dialects with make_date(y, m, d), which sqlglot writes as DATE_FROM_PARTS


def _fix(node: exp.Expression, dialect: str) -> exp.Expression:
    if isinstance(node, exp.DateFromParts) and dialect in _MAKE_DATE:
        return exp.Anonymous(this="MAKE_DATE", expressions=[node.args.get("year"), node.args.get("month"), node.args.get("day")])
    return node


def quote(ident: str) -> str:
    """An identifier in the dialect generated SQL is written in (DuckDB), whatever the warehouse's own quoting."""
    return '"' + ident.replace('"', '""') + '"'


@lru_cache(maxsize=4096)
def portable(sql: str, dialect: str) -> str:
    if dialect == "duckdb":
        return sql
    tree = sqlglot.parse_one(sql, read="duckdb")
    return tree.transform(_fix, dialect).sql(dialect=dialect)
