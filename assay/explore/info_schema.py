"""Queries over ``information_schema`` answered from the discovered schema.

Models ask for column names the way analysts do: ``SELECT column_name FROM
information_schema.columns WHERE table_name = 'orders'``. The guard refuses
system schemas on the warehouse (they also show what the project does not
cover), so such a statement is run instead against an in-memory DuckDB copy of
``tables`` and ``columns`` built from the schema the run already has: the model
gets a normal query result, limited to the project's tables.
"""

from __future__ import annotations

import duckdb
import pyarrow as pa
import sqlglot
from sqlglot import exp

from ..models import TableInfo
from ..warehouse.base import QueryResult

VIEWS = ("tables", "columns")
_SCHEMA = "information_schema"
_LOCAL = "isc"


def _tables_of(sql: str, dialect: str) -> list[exp.Table] | None:
    try:
        trees = sqlglot.parse(sql, read=dialect)
    except Exception:
        return None
    if len(trees) != 1 or trees[0] is None or not isinstance(trees[0], (exp.Select, exp.Union, exp.Subquery)):
        return None
    return list(trees[0].find_all(exp.Table))


def is_info_schema_query(sql: str, dialect: str) -> bool:
    """One SELECT whose every table is information_schema.tables / .columns."""
    tables = _tables_of(sql, dialect)
    if not tables:
        return False
    return all(t.db.lower() == _SCHEMA and t.name.lower() in VIEWS for t in tables)


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
    """Run an information_schema query against the discovered schema. Raises ValueError when it cannot."""
    trees = sqlglot.parse(sql, read=dialect)
    tree = trees[0]
    for t in tree.find_all(exp.Table):
        t.set("db", exp.to_identifier(_LOCAL))
        t.set("catalog", None)
    local_sql = tree.sql(dialect="duckdb")
    t_tab, c_tab = _frames(tables)
    con = duckdb.connect(":memory:")
    try:
        con.execute(f"CREATE SCHEMA {_LOCAL}")
        con.register("t_src", t_tab)
        con.register("c_src", c_tab)
        con.execute(f"CREATE TABLE {_LOCAL}.tables AS SELECT * FROM t_src")
        con.execute(f"CREATE TABLE {_LOCAL}.columns AS SELECT * FROM c_src")
        try:
            result = con.sql(local_sql)
            table = result.to_arrow_table() if result is not None else pa.table({})
        except duckdb.Error as exc:
            raise ValueError(str(exc).splitlines()[0]) from None
    finally:
        con.close()
    total = table.num_rows
    truncated = total > row_cap
    if truncated:
        table = table.slice(0, row_cap)
    return QueryResult(table=table, truncated=truncated, total_rows=total, columns=table.column_names)
