"""DuckDB adapter: a read-only file connection with external access disabled.

Every statement it sends (queries, the count behind a truncated result, samples, the catalog,
health checks) runs on its own cursor under a timer that interrupts it; the instance has a memory
limit and a thread count, and ``lock_configuration`` stops a query from changing them. Result
columns of types later stages cannot digest are converted by DuckDB itself (nested values to
JSON text, the rest to text) before they reach Arrow.
"""

from __future__ import annotations

import os
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import duckdb
import pyarrow as pa

from ..errors import QueryError, QueryTimeout, WarehouseUnreachable
from ..models import ColumnInfo, TableInfo
from .base import (DEFAULT_MEMORY_LIMIT_MB, DEFAULT_TIMEOUT_S, FETCH_ROWS, QueryResult, check_result_bytes,
                   clean_comment, fix_prompt_for)
from .values import digestible

_SYSTEM = ("information_schema", "pg_catalog")

# DuckDB type ids whose Arrow form every stage reads as is; nested ones become JSON text, any
# other (interval, uuid, enum, bit, time with time zone, bignum, uhugeint, types to come) text.
NATIVE_TYPES = {
    "boolean", "tinyint", "smallint", "integer", "bigint", "utinyint", "usmallint", "uinteger",
    "ubigint", "hugeint", "float", "double", "decimal", "varchar", "blob", "date", "time",
    "timestamp", "timestamp_s", "timestamp_ms", "timestamp_ns", "timestamp with time zone", "null",
}
NESTED_TYPES = {"list", "array", "struct", "map", "union"}


def is_duckdb_file(path: str | Path) -> bool:
    """The file starts as a DuckDB database does (its magic bytes ``DUCK`` after the 8-byte checksum): read
    without opening it, so a file another process holds for writing is still recognised."""
    try:
        with open(path, "rb") as f:
            return f.read(12)[8:12] == b"DUCK"
    except OSError:
        return False


def default_threads() -> int:
    """Half the machine's cores (at least one): a runaway query leaves the rest to everything else."""
    return max(1, (os.cpu_count() or 2) // 2)


class DuckDBWarehouse:
    kind = "duckdb"
    dialect = "duckdb"
    default_schema = "main"
    concurrent_queries = True  # each query gets its own cursor

    def __init__(self, path: str, schemas: list[str] | None = None, *, timeout_s: float = DEFAULT_TIMEOUT_S,
                 memory_limit_mb: int = DEFAULT_MEMORY_LIMIT_MB, threads: int | None = None, **_: object):
        self.path = str(path)
        self.schemas = schemas or []
        self.timeout_s = float(timeout_s)
        if self.path != ":memory:" and not Path(self.path).is_file():
            raise WarehouseUnreachable(f"duckdb: no database file at {self.path}")
        try:
            self._con = duckdb.connect(
                self.path,
                read_only=self.path != ":memory:",
                # identical config on every open: DuckDB shares one instance per file in a process
                config={"enable_external_access": False, "autoinstall_known_extensions": False,
                        "autoload_known_extensions": False},
            )
        except duckdb.Error as exc:
            raise WarehouseUnreachable(f"duckdb: cannot open {self.path}: {exc}") from None
        self._bound(int(memory_limit_mb), int(threads or default_threads()))
        self._lock = threading.Lock()

    def _bound(self, memory_limit_mb: int, threads: int) -> None:
        """Memory (spilling to disk up to 4x) and threads, then lock the configuration: no
        statement can lift a limit, re-enable external access or load an extension. An earlier
        open of the same file in this process shares its instance and has locked it already:
        its limits hold."""
        try:
            for name, value in (("memory_limit", f"{memory_limit_mb}MB"),
                                ("max_temp_directory_size", f"{4 * memory_limit_mb}MB"),
                                ("threads", str(threads))):
                self._con.execute(f"SET {name} = '{value}'")
            self._con.execute("SET lock_configuration = true")
        except duckdb.Error:
            locked = self._con.execute("SELECT current_setting('lock_configuration')").fetchone()[0]
            if str(locked).lower() not in ("true", "1"):
                raise WarehouseUnreachable(f"duckdb: cannot bound {self.path}'s memory and threads") from None

    # cursors are independent connections to the same database: one per call
    def _cursor(self) -> duckdb.DuckDBPyConnection:
        with self._lock:
            return self._con.cursor()

    @staticmethod
    @contextmanager
    def _timer(cur: duckdb.DuckDBPyConnection, timeout_s: float) -> Iterator[threading.Event]:
        """Interrupt ``cur`` when ``timeout_s`` has passed; the event says whether it fired."""
        fired = threading.Event()

        def _interrupt() -> None:
            fired.set()
            cur.interrupt()

        timer = threading.Timer(max(timeout_s, 0.0), _interrupt)
        timer.daemon = True
        timer.start()
        try:
            yield fired
        finally:
            timer.cancel()

    def _timed(self, sql: str, timeout_s: float | None = None) -> list[tuple]:
        """A small internal statement's rows, under the timeout."""
        timeout_s = self.timeout_s if timeout_s is None else timeout_s
        cur = self._cursor()
        try:
            with self._timer(cur, timeout_s) as fired:
                try:
                    return cur.execute(sql).fetchall()
                except Exception as exc:
                    raise _error(exc, fired.is_set(), timeout_s) from None
        finally:
            _close(cur)

    def explain_cost(self, sql: str) -> dict | None:
        return None  # DuckDB is local: its plans give cardinalities, not a cost anyone pays

    def health_check(self) -> None:
        self._timed("SELECT 1", min(self.timeout_s, 10.0))

    def quote(self, ident: str) -> str:
        return '"' + ident.replace('"', '""') + '"'

    def sql_fix_prompt(self) -> str:
        return fix_prompt_for("duckdb")

    def list_tables(self) -> list[TableInfo]:
        deadline = time.perf_counter() + self.timeout_s

        def left() -> float:
            return max(deadline - time.perf_counter(), 0.0)

        rows = self._timed(
            """
            SELECT table_schema, table_name, column_name, data_type, is_nullable
            FROM information_schema.columns
            WHERE table_catalog = current_database()
            ORDER BY table_schema, table_name, ordinal_position
            """, left())
        tables: dict[tuple[str, str], TableInfo] = {}
        for schema, name, col, typ, nullable in rows:
            if schema in _SYSTEM or (self.schemas and schema not in self.schemas):
                continue
            t = tables.setdefault(
                (schema, name), TableInfo(schema=schema, name=name)
            )
            t.columns.append(ColumnInfo(name=col, type=str(typ), nullable=nullable == "YES"))
        counts, comments = {}, {}
        for s, n, c, comment in self._timed(
                "SELECT schema_name, table_name, estimated_size, comment FROM duckdb_tables() "
                "WHERE database_name = current_database()", left()):
            counts[(s, n)] = int(c or 0)
            comments[(s, n)] = comment
        comments.update({(s, n): comment for s, n, comment in self._timed(
            "SELECT schema_name, view_name, comment FROM duckdb_views() "
            "WHERE NOT internal AND database_name = current_database()", left())})
        col_comments = {(s, n, col): comment for s, n, col, comment in self._timed(
            "SELECT schema_name, table_name, column_name, comment FROM duckdb_columns() "
            "WHERE comment IS NOT NULL AND database_name = current_database()", left())}
        fks = self._timed(
            """SELECT schema_name, table_name, constraint_column_names, referenced_table
               FROM duckdb_constraints() WHERE constraint_type = 'FOREIGN KEY'""", left())
        for s, n, cols, ref in fks:
            t = tables.get((s, n))
            if t is not None and cols:
                t.foreign_keys[cols[0]] = f"{s}.{ref}"
        for key, t in tables.items():
            t.description = clean_comment(comments.get(key))
            for c in t.columns:
                c.description = clean_comment(col_comments.get((*key, c.name)))
            t.row_count = counts.get(key, 0)
            if key not in counts:  # a view: counted within what is left of the timeout, else unknown (0)
                try:
                    q = f"SELECT count(*) FROM {self.quote(key[0])}.{self.quote(key[1])}"
                    t.row_count = int(self._timed(q, left())[0][0]) if left() > 0 else 0
                except QueryError:
                    t.row_count = 0
        return list(tables.values())

    def sample_rows(self, table: TableInfo, n: int = 3) -> list[dict]:
        q = f"SELECT * FROM {self.quote(table.schema_name)}.{self.quote(table.name)} LIMIT {int(n)}"
        return self.query(q, row_cap=int(n), timeout_s=self.timeout_s).table.to_pylist()

    def _digestible_relation(self, cur: duckdb.DuckDBPyConnection, sql: str) -> duckdb.DuckDBPyRelation:
        """The statement as a relation whose columns all have native types: when one does not,
        a projection over it converts that column (nested: to_json; others: text). Binding only,
        nothing runs yet."""
        rel = cur.sql(sql)
        ids = [getattr(t, "id", str(t)).lower() for t in rel.types]
        if all(i in NATIVE_TYPES for i in ids):
            return rel
        exprs = []
        for k, (name, i) in enumerate(zip(rel.columns, ids)):
            col = f'"_c{k}"'
            if i in NESTED_TYPES:
                col = f"CAST(to_json({col}) AS VARCHAR)"
            elif i not in NATIVE_TYPES:
                col = f"CAST({col} AS VARCHAR)"
            exprs.append(f"{col} AS {self.quote(name)}")
        aliases = ", ".join(f'"_c{k}"' for k in range(len(ids)))
        return cur.sql(f"SELECT {', '.join(exprs)} FROM ({sql}\n) AS _q({aliases})")

    def query(self, sql: str, *, row_cap: int, timeout_s: float) -> QueryResult:
        t0 = time.perf_counter()
        deadline = t0 + timeout_s
        cur = self._cursor()
        try:
            table, truncated = self._read(cur, sql, row_cap, timeout_s)
        finally:
            # a cursor left to the garbage collector kept the file's database open after close(): the next
            # connection to the file with another configuration failed (a flaky test, session 27)
            _close(cur)
        table = digestible(table)
        total = self._count(sql, deadline) if truncated else None
        return QueryResult(
            table=table,
            truncated=truncated,
            total_rows=total,
            duration_ms=(time.perf_counter() - t0) * 1000,
            columns=list(table.column_names),
        )

    def _read(self, cur: duckdb.DuckDBPyConnection, sql: str, row_cap: int, timeout_s: float) -> tuple[pa.Table, bool]:
        with self._timer(cur, timeout_s) as fired:
            try:
                reader = self._digestible_relation(cur, sql).to_arrow_reader(min(max(row_cap, 1), FETCH_ROWS))
                batches, got, size = [], 0, 0
                truncated = False
                for batch in reader:
                    size += batch.nbytes
                    check_result_bytes(size)
                    if got + batch.num_rows > row_cap:
                        batches.append(batch.slice(0, row_cap - got))
                        got = row_cap
                        truncated = True
                        break
                    batches.append(batch)
                    got += batch.num_rows
                return pa.Table.from_batches(batches, schema=reader.schema), truncated
            except QueryError:  # the result grew past its byte budget
                raise
            except Exception as exc:  # DuckDB errors, and Arrow's OSError when interrupted mid-stream
                raise _error(exc, fired.is_set(), timeout_s) from None

    def _count(self, sql: str, deadline: float) -> int | None:
        """The true row count of a truncated result, within what is left of its timeout (else None)."""
        left = deadline - time.perf_counter()
        if left <= 0.05:
            return None
        try:
            return int(self._timed(f"SELECT count(*) FROM ({sql}\n) AS _q", left)[0][0])
        except QueryError:
            return None

    def close(self) -> None:
        try:
            self._con.close()
        except duckdb.Error:
            pass


def _close(cur: duckdb.DuckDBPyConnection) -> None:
    try:
        cur.close()
    except duckdb.Error:
        pass


def _error(exc: BaseException, timed_out: bool, timeout_s: float) -> QueryError:
    """The exception a failed statement becomes: a timeout when the timer fired (or DuckDB says it
    was interrupted), else the engine's first line."""
    if timed_out or isinstance(exc, duckdb.InterruptException):
        return QueryTimeout(f"query exceeded the {timeout_s:g}s statement timeout")
    text = str(exc).strip()
    first = text.splitlines()[0][:500] if text else type(exc).__name__
    return QueryError(first)
