"""DuckDB adapter: a read-only file connection with external access disabled."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import duckdb
import pyarrow as pa

from ..errors import QueryError, QueryTimeout, WarehouseUnreachable
from ..models import ColumnInfo, TableInfo
from .base import QueryResult, clean_comment, fix_prompt_for

_SYSTEM = ("information_schema", "pg_catalog")


class DuckDBWarehouse:
    kind = "duckdb"
    dialect = "duckdb"
    default_schema = "main"
    concurrent_queries = True  # each query gets its own cursor

    def __init__(self, path: str, schemas: list[str] | None = None, **_: object):
        self.path = str(path)
        self.schemas = schemas or []
        if self.path != ":memory:" and not Path(self.path).is_file():
            raise WarehouseUnreachable(f"duckdb: no database file at {self.path}")
        try:
            self._con = duckdb.connect(
                self.path,
                read_only=self.path != ":memory:",
                # identical config on every open: DuckDB shares one instance per file in a process
                config={"enable_external_access": False, "autoinstall_known_extensions": False,
                        "autoload_known_extensions": False, "lock_configuration": True},
            )
        except duckdb.Error as exc:
            raise WarehouseUnreachable(f"duckdb: cannot open {self.path}: {exc}") from None
        self._lock = threading.Lock()

    # cursors are independent connections to the same database: one per call
    def _cursor(self) -> duckdb.DuckDBPyConnection:
        with self._lock:
            return self._con.cursor()

    def explain_cost(self, sql: str) -> dict | None:
        return None  # DuckDB is local: its plans give cardinalities, not a cost anyone pays

    def health_check(self) -> None:
        self._cursor().execute("SELECT 1").fetchall()

    def quote(self, ident: str) -> str:
        return '"' + ident.replace('"', '""') + '"'

    def sql_fix_prompt(self) -> str:
        return fix_prompt_for("duckdb")

    def list_tables(self) -> list[TableInfo]:
        cur = self._cursor()
        rows = cur.execute(
            """
            SELECT table_schema, table_name, column_name, data_type, is_nullable
            FROM information_schema.columns
            WHERE table_catalog = current_database()
            ORDER BY table_schema, table_name, ordinal_position
            """
        ).fetchall()
        tables: dict[tuple[str, str], TableInfo] = {}
        for schema, name, col, typ, nullable in rows:
            if schema in _SYSTEM or (self.schemas and schema not in self.schemas):
                continue
            t = tables.setdefault(
                (schema, name), TableInfo(schema=schema, name=name)
            )
            t.columns.append(ColumnInfo(name=col, type=str(typ), nullable=nullable == "YES"))
        counts, comments = {}, {}
        for s, n, c, comment in cur.execute(
                "SELECT schema_name, table_name, estimated_size, comment FROM duckdb_tables() "
                "WHERE database_name = current_database()").fetchall():
            counts[(s, n)] = int(c or 0)
            comments[(s, n)] = comment
        comments.update({(s, n): comment for s, n, comment in cur.execute(
            "SELECT schema_name, view_name, comment FROM duckdb_views() "
            "WHERE NOT internal AND database_name = current_database()").fetchall()})
        col_comments = {(s, n, col): comment for s, n, col, comment in cur.execute(
            "SELECT schema_name, table_name, column_name, comment FROM duckdb_columns() "
            "WHERE comment IS NOT NULL AND database_name = current_database()").fetchall()}
        fks = cur.execute(
            """SELECT schema_name, table_name, constraint_column_names, referenced_table
               FROM duckdb_constraints() WHERE constraint_type = 'FOREIGN KEY'"""
        ).fetchall()
        for s, n, cols, ref in fks:
            t = tables.get((s, n))
            if t is not None and cols:
                t.foreign_keys[cols[0]] = f"{s}.{ref}"
        for key, t in tables.items():
            t.description = clean_comment(comments.get(key))
            for c in t.columns:
                c.description = clean_comment(col_comments.get((*key, c.name)))
            t.row_count = counts.get(key, 0)
            if key not in counts:  # a view: count it (views are cheap in the demo)
                try:
                    q = f"SELECT count(*) FROM {self.quote(key[0])}.{self.quote(key[1])}"
                    t.row_count = int(cur.execute(q).fetchone()[0])
                except duckdb.Error:
                    t.row_count = 0
        return list(tables.values())

    def sample_rows(self, table: TableInfo, n: int = 3) -> list[dict]:
        q = f"SELECT * FROM {self.quote(table.schema_name)}.{self.quote(table.name)} LIMIT {int(n)}"
        return self._cursor().sql(q).to_arrow_table().to_pylist()

    def query(self, sql: str, *, row_cap: int, timeout_s: float) -> QueryResult:
        cur = self._cursor()
        timed_out = threading.Event()

        def _interrupt() -> None:
            timed_out.set()
            cur.interrupt()

        timer = threading.Timer(timeout_s, _interrupt)
        t0 = time.perf_counter()
        timer.start()
        try:
            reader = cur.sql(sql).to_arrow_reader(min(max(row_cap, 1), 100_000))
            batches, got = [], 0
            truncated = False
            for batch in reader:
                if got + batch.num_rows > row_cap:
                    batches.append(batch.slice(0, row_cap - got))
                    got = row_cap
                    truncated = True
                    break
                batches.append(batch)
                got += batch.num_rows
            table = pa.Table.from_batches(batches, schema=reader.schema)
        except duckdb.InterruptException:
            raise QueryTimeout(f"query exceeded the {timeout_s:g}s statement timeout") from None
        except duckdb.Error as exc:
            if timed_out.is_set():
                raise QueryTimeout(f"query exceeded the {timeout_s:g}s statement timeout") from None
            raise QueryError(str(exc).strip().splitlines()[0][:500]) from None
        finally:
            timer.cancel()
        total = None
        if truncated:
            try:
                total = int(self._cursor().execute(f"SELECT count(*) FROM ({sql}) AS _q").fetchone()[0])
            except duckdb.Error:
                total = None
        return QueryResult(
            table=table,
            truncated=truncated,
            total_rows=total,
            duration_ms=(time.perf_counter() - t0) * 1000,
            columns=list(table.column_names),
        )

    def close(self) -> None:
        try:
            self._con.close()
        except duckdb.Error:
            pass
