"""An in-process DuckDB for statements over data the product already holds.

Some of the model's SQL never reaches the warehouse: an ``information_schema`` query is answered from the
discovered schema, a claim's condition is recomputed on a step's stored rows. It runs in this process, beside
the warehouse's credentials and the LLM keys, so it is held to what the warehouse's statements are: the guard for
DuckDB checks it against a catalog of only the local tables, and it runs on a connection with no file or network
access, no extension loading, one thread, a memory limit and a timeout (red team 9 read the process's environment
and the warehouse file through ``LATERAL read_text(...)`` on the unguarded path).
"""

from __future__ import annotations

import threading

import duckdb
import pyarrow as pa

from ..errors import QueryError
from ..models import ColumnInfo, TableInfo
from .base import FETCH_ROWS, check_result_bytes

MEMORY_LIMIT = "256MB"  # what a query over a few thousand held rows may use
TIMEOUT_S = 10.0
SCHEMA = "main"


def connect() -> duckdb.DuckDBPyConnection:
    return duckdb.connect(":memory:", config={
        "enable_external_access": False, "autoinstall_known_extensions": False,
        "autoload_known_extensions": False, "threads": 1, "memory_limit": MEMORY_LIMIT})


def guarded(sql: str, tables: dict[str, list[str]]) -> str:
    """The statement the guard for DuckDB allows over ``tables`` (name -> columns, in schema ``main``); raises
    ValueError with the guard's reason."""
    from .guard import SQLGuard

    catalog = [TableInfo(schema=SCHEMA, name=name, columns=[ColumnInfo(name=c, type="VARCHAR") for c in cols])
               for name, cols in tables.items()]
    verdict = SQLGuard("duckdb", tables=catalog, schemas=[SCHEMA], default_schema=SCHEMA).check(sql)
    if not verdict.allowed:
        raise ValueError(f"refused: {verdict.reason}")
    return verdict.sql


def run(sql: str, tables: dict[str, pa.Table], *, row_cap: int = 10_000, timeout_s: float = TIMEOUT_S) -> pa.Table:
    """``sql`` over ``tables`` (name -> rows) once the guard allows it, on a sandboxed connection: at most
    ``row_cap + 1`` rows (one more says the result was cut), read in batches and stopped past the result's byte
    budget (red team 10 grew a self-join of the views past 1 GB; DuckDB's memory limit does not cover the
    result). Raises ValueError (refused, failed, timed out, too large)."""
    checked = guarded(sql, {name: t.column_names for name, t in tables.items()})
    con = connect()
    timer = threading.Timer(timeout_s, con.interrupt)
    try:
        for name, t in tables.items():
            con.register(f"_src_{name}", t)
            con.execute(f'CREATE TABLE {SCHEMA}."{name}" AS SELECT * FROM "_src_{name}"')
            con.unregister(f"_src_{name}")
        con.execute("SET lock_configuration = true")
        timer.start()
        try:
            reader = con.sql(checked).to_arrow_reader(min(max(row_cap, 1), FETCH_ROWS))
            batches, rows, size = [], 0, 0
            for batch in reader:
                batches.append(batch)
                rows += batch.num_rows
                size += batch.nbytes
                check_result_bytes(size)
                if rows > row_cap:
                    break
            return pa.Table.from_batches(batches, schema=reader.schema).slice(0, row_cap + 1)
        except QueryError as exc:
            raise ValueError(str(exc)) from None
        except duckdb.InterruptException:
            raise ValueError(f"the query exceeded the {timeout_s:g}s timeout") from None
        except duckdb.Error as exc:
            raise ValueError(str(exc).splitlines()[0]) from None
    finally:
        timer.cancel()
        con.close()
