"""Generated SQL is written once, in DuckDB's dialect, and transpiled to the warehouse's."""

from __future__ import annotations

from functools import lru_cache

import sqlglot
from sqlglot import exp

_MAKE_DATE = {"postgres"}  # dialects with make_date(y, m, d), which sqlglot writes as DATE_FROM_PARTS


# EXTRACT parts DuckDB has and these engines spell otherwise (DuckDB: dow 0 = Sunday, isodow 1 = Monday)
_EXTRACT = {
    "mysql": {"DOW": "(DAYOFWEEK({x}) - 1)", "ISODOW": "(WEEKDAY({x}) + 1)", "DOY": "DAYOFYEAR({x})"},
    "bigquery": {"DOW": "(EXTRACT(DAYOFWEEK FROM {x}) - 1)", "ISODOW": "(MOD(EXTRACT(DAYOFWEEK FROM {x}) + 5, 7) + 1)",
                 "DOY": "EXTRACT(DAYOFYEAR FROM {x})", "EPOCH": "UNIX_SECONDS(CAST({x} AS TIMESTAMP))"},
    "databricks": {"DOW": "(DAYOFWEEK({x}) - 1)", "ISODOW": "(WEEKDAY({x}) + 1)", "DOY": "DAYOFYEAR({x})",
                   "EPOCH": "UNIX_TIMESTAMP({x})"},
    "tsql": {"DOW": "(DATEDIFF(DAY, '19000107', {x}) % 7)", "ISODOW": "(DATEDIFF(DAY, '19000101', {x}) % 7 + 1)",
             "DOY": "DATEPART(DAYOFYEAR, {x})", "EPOCH": "DATEDIFF_BIG(SECOND, '19700101', {x})"},
}


def _fix(node: exp.Expression, dialect: str) -> exp.Expression:
    if isinstance(node, exp.Extract) and dialect in _EXTRACT:
        template = _EXTRACT[dialect].get(node.name.upper())
        if template:
            return sqlglot.parse_one(template.format(x=node.expression.sql(dialect=dialect)), read=dialect)
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
