"""Concrete hints for empty results and errors (near columns, filters, operators)."""

from __future__ import annotations

import difflib
import re

import sqlglot
from sqlglot import exp

from ..models import TableInfo

_MISSING_COL = [
    re.compile(r'column "?([\w.]+)"? (?:does not exist|not found)', re.I),
    re.compile(r'Referenced column "?([\w]+)"? not found', re.I),
    re.compile(r"invalid identifier '?\"?([\w.]+)", re.I),
    re.compile(r'Column "?([\w]+)"? .*not found', re.I),
]
_MISSING_TABLE = [
    re.compile(r'Table with name "?([\w.]+)"? does not exist', re.I),
    re.compile(r'relation "?([\w.]+)"? does not exist', re.I),
    re.compile(r"Object '?([\w.]+)'? does not exist", re.I),
]


def _tables_in(sql: str, dialect: str) -> list[str]:
    try:
        tree = sqlglot.parse_one(sql, read=dialect)
    except Exception:
        return []
    return [t.name.lower() for t in tree.find_all(exp.Table)]


def error_hints(error: str, sql: str, dialect: str, tables: list[TableInfo]) -> list[str]:
    hints: list[str] = []
    by_name = {t.name.lower(): t for t in tables}
    for rx in _MISSING_COL:
        m = rx.search(error)
        if m:
            bad = m.group(1).split(".")[-1]
            cols = []
            for tn in _tables_in(sql, dialect) or list(by_name)[:50]:
                t = by_name.get(tn)
                if t:
                    cols += [f"{t.name}.{c.name}" for c in t.columns]
            near = difflib.get_close_matches(bad.lower(), [c.split(".")[-1].lower() for c in cols], n=3, cutoff=0.5)
            full = [c for c in cols if c.split(".")[-1].lower() in near][:3]
            if full:
                hints.append(f"column {bad!r} does not exist; did you mean {', '.join(full)}?")
            else:
                hints.append(f"column {bad!r} does not exist; call lookup_schema on the table to see its columns")
            break
    for rx in _MISSING_TABLE:
        m = rx.search(error)
        if m:
            bad = m.group(1).split(".")[-1].lower()
            near = difflib.get_close_matches(bad, list(by_name), n=3, cutoff=0.5)
            if near:
                hints.append(f"table {bad!r} does not exist; did you mean {', '.join(by_name[n].fqn for n in near)}?")
            else:
                hints.append(f"table {bad!r} does not exist; use search_tables to find it")
            break
    if "timeout" in error.lower():
        hints.append("the query ran out of time: aggregate first, filter a shorter period, or avoid cross joins")
    return hints


def empty_hints(sql: str, dialect: str) -> list[str]:
    """Why a query may have returned nothing, from its WHERE clause."""
    try:
        tree = sqlglot.parse_one(sql, read=dialect)
    except Exception:
        return ["the query returned no rows; check the filters"]
    hints: list[str] = []
    for eq in tree.find_all(exp.EQ):
        col, lit = eq.this, eq.expression
        if isinstance(col, exp.Column) and isinstance(lit, exp.Literal) and lit.is_string:
            hints.append(
                f"the filter {col.sql(dialect=dialect)} = '{lit.this}' may match nothing: check the column's "
                f"distinct values (SELECT {col.name}, count(*) ... GROUP BY 1) or use ILIKE '%{lit.this}%'"
            )
    for _ in tree.find_all(exp.Between):
        hints.append("a BETWEEN range may be outside the data: check min/max of the column first")
        break
    if tree.find(exp.Where) is not None:
        hints.append("drop the most selective WHERE condition and re-run to see which filter removes every row")
    if tree.find(exp.Join) is not None:
        hints.append("an inner JOIN may have no matching keys: check the join columns' types and values")
    return hints[:3] or ["the query returned no rows; the table may be empty for this period"]
