"""Queries over ``information_schema`` answered from the discovered schema.

Models ask for column names the way analysts do: ``SELECT column_name FROM
information_schema.columns WHERE table_name = 'orders'``. The guard refuses
system schemas on the warehouse (they also show what the project does not
cover), so such a statement is run instead against an in-memory DuckDB copy of
``tables`` and ``columns`` built from the schema the run already has: the model
gets a normal query result, limited to the project's tables.

The statement never reaches the warehouse, but it runs in this process (red team
9 read every tenant's rows and the process's environment through ``LATERAL
read_duckdb(...)`` here): only a statement whose every source is one of the two
views takes this path, and it runs in ``warehouse.sandbox`` (the guard for DuckDB
over those two tables, no file access, a memory limit and a timeout).
"""

from __future__ import annotations

import pyarrow as pa
import sqlglot
from sqlglot import exp

from ..models import TableInfo
from ..warehouse import sandbox
from ..warehouse.base import QueryResult

VIEWS = ("tables", "columns")
_SCHEMA = "information_schema"
# what may appear as a source in FROM/JOIN: the views by name, a CTE's name, a subquery; never a function
# (read_text, range), LATERAL, UNNEST, VALUES or a table of any other schema
_NOT_A_SOURCE = (exp.Lateral, exp.Unnest, exp.Values)


def _tables_of(sql: str, dialect: str) -> list[exp.Table] | None:
    try:
        trees = sqlglot.parse(sql, read=dialect)
    except Exception:
        return None
    if len(trees) != 1 or trees[0] is None or not isinstance(trees[0], (exp.Select, exp.Union, exp.Subquery)):
        return None
    return list(trees[0].find_all(exp.Table))


def is_info_schema_query(sql: str, dialect: str) -> bool:
    """One SELECT whose every source is information_schema.tables / .columns (or a CTE or subquery of them):
    no table function, LATERAL, UNNEST or VALUES anywhere."""
    tables = _tables_of(sql, dialect)
    if not tables:
        return False
    tree = tables[0].root()
    if tree.find(*_NOT_A_SOURCE) is not None:
        return False
    ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
    views = [t for t in tables if not (not t.db and t.name.lower() in ctes)]
    return bool(views) and all(
        isinstance(t.this, exp.Identifier) and not t.args.get("catalog") and t.db.lower() == _SCHEMA
        and t.name.lower() in VIEWS for t in views)



def _frames(tables: list[TableInfo]) -> tuple[pa.Table, pa.Table]:
    t_rows = {"table_catalog": [], "table_schema": [], "table_name": [], "table_type": [], "row_count": [],
              "comment": []}
    c_rows = {"table_catalog": [], "table_schema": [], "table_name": [], "column_name": [], "ordinal_position": [],
              "data_type": [], "is_nullable": [], "comment": []}
    for t in tables:
        schema = t.fqn.rsplit(".", 1)[0] if "." in t.fqn else ""
        t_rows["table_catalog"].append("")
        t_rows["table_schema"].append(schema)
        t_rows["table_name"].append(t.name)
        t_rows["table_type"].append("BASE TABLE")
        t_rows["row_count"].append(int(t.row_count or 0))
        t_rows["comment"].append(t.description or None)
        for i, c in enumerate(t.columns, 1):
            c_rows["table_catalog"].append("")
            c_rows["table_schema"].append(schema)
            c_rows["table_name"].append(t.name)
            c_rows["column_name"].append(c.name)
            c_rows["ordinal_position"].append(i)
            c_rows["data_type"].append(c.type)
            c_rows["is_nullable"].append("YES" if c.nullable else "NO")
            c_rows["comment"].append(c.description or None)
    return pa.table(t_rows), pa.table(c_rows)


def answer(sql: str, dialect: str, tables: list[TableInfo], row_cap: int = 10_000) -> QueryResult:
    """Run an information_schema query against the discovered schema. Raises ValueError when it cannot (the
    statement is not one over the two views, the guard refuses it, or DuckDB does)."""
    if not is_info_schema_query(sql, dialect):
        raise ValueError("only information_schema.tables and information_schema.columns can be read here")
    tree = sqlglot.parse(sql, read=dialect)[0]
    ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
    for t in tree.find_all(exp.Table):
        if t.db:  # a view (is_info_schema_query); a bare name is a CTE's
            t.set("db", exp.to_identifier(sandbox.SCHEMA))
            t.set("catalog", None)
        elif t.name.lower() not in ctes:
            raise ValueError(f"unknown table {t.name}")
    local_sql = tree.sql(dialect="duckdb")
    t_tab, c_tab = _frames(tables)
    table = sandbox.run(local_sql, {"tables": t_tab, "columns": c_tab}, row_cap=row_cap)
    truncated = table.num_rows > row_cap
    table = table.slice(0, row_cap)
    return QueryResult(table=table, truncated=truncated, total_rows=None if truncated else table.num_rows,
                       columns=table.column_names)
