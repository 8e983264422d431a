"""Snowflake adapter (snowflake-connector-python; tested with fakesnow).

Snowflake has no read-only session: give assay a role with SELECT only. The guard refuses
everything else before it is sent, and the session carries a statement timeout and a query tag.
"""

from __future__ import annotations

import time


from .. import secrets
from ..errors import ConfigError, QueryError, QueryTimeout, WarehouseUnreachable
from ..models import ColumnInfo, TableInfo, WarehouseConfig
from .base import QueryResult, clean_comment, fetch_capped, fix_prompt_for
from .redact import scrub_error
from .values import table_from_rows

_SYSTEM = ("INFORMATION_SCHEMA",)



def _first_line(exc: BaseException) -> str:
    """The engine's message as one line: a compilation error's detail is on the lines after its first ("SQL
    compilation error:", "error line 1 at position 7", "invalid identifier 'AMOUT'"), so they are kept, joined (it
    is raised before a row is read); any other error's first line."""
    lines = [x.strip() for x in str(getattr(exc, "msg", exc)).strip().splitlines() if x.strip()] or [""]
    if lines[0].startswith("SQL compilation error"):
        return " ".join(lines)[:500]
    return lines[0][:500]

class SnowflakeWarehouse:
    kind = "snowflake"
    dialect = "snowflake"
    concurrent_queries = False

    def __init__(self, cfg: WarehouseConfig):
        import snowflake.connector

        s = dict(cfg.settings)
        if not s.get("database"):
            raise ConfigError("warehouse.settings.database: required for snowflake")
        self.database = s["database"]
        self.schemas = [x.upper() for x in cfg.schemas]
        self.default_schema = (self.schemas[0] if self.schemas else s.get("schema", "PUBLIC")).lower()
        password = secrets.warehouse_password(s, what="snowflake")
        params = {k: s[k] for k in ("account", "user", "warehouse", "role", "authenticator") if s.get(k)}
        try:
            self.conn = snowflake.connector.connect(
                **params, password=password, database=self.database,
                schema=self.default_schema.upper(),
                session_parameters={"STATEMENT_TIMEOUT_IN_SECONDS": int(cfg.statement_timeout_s),
                                    "QUERY_TAG": "assay"},
                login_timeout=int(s.get("login_timeout", 30)),
            )
        except snowflake.connector.errors.Error as exc:
            raise WarehouseUnreachable(f"snowflake: cannot connect ({type(exc).__name__}: {exc.msg})") from None
        self._errors = snowflake.connector.errors

    def health_check(self) -> None:
        self.conn.cursor().execute("SELECT 1").fetchall()

    def explain_cost(self, sql: str) -> dict | None:
        import json

        try:
            row = self.conn.cursor().execute("EXPLAIN USING JSON " + sql).fetchone()
            stats = json.loads(row[0]).get("GlobalStats", {})
            return {"unit": "bytes", "value": float(stats["bytesAssigned"]),
                    "partitions": float(stats.get("partitionsAssigned", 0))}
        except Exception:  # the engine (or an emulator) cannot explain it: say nothing rather than guess
            return None

    def quote(self, ident: str) -> str:
        return '"' + ident.replace('"', '""') + '"'

    def sql_fix_prompt(self) -> str:
        return fix_prompt_for("snowflake")

    def list_tables(self) -> list[TableInfo]:
        cur = self.conn.cursor()
        cur.execute(
            "SELECT table_schema, table_name, column_name, data_type, is_nullable FROM information_schema.columns "
            "ORDER BY table_schema, table_name, ordinal_position"
        )
        tables: dict[tuple[str, str], TableInfo] = {}
        for schema, name, col, typ, nullable in cur.fetchall():
            if schema.upper() in _SYSTEM or (self.schemas and schema.upper() not in self.schemas):
                continue
            t = tables.setdefault((schema, name), TableInfo(schema=schema.lower(), name=name.lower()))
            t.columns.append(ColumnInfo(name=col.lower(), type=str(typ), nullable=str(nullable).upper() == "YES"))
        try:
            cur.execute("SELECT table_schema, table_name, row_count FROM information_schema.tables")
            counts = {(a, b): int(c or 0) for a, b, c in cur.fetchall()}
        except self._errors.Error:
            counts = {}
        comments: dict[tuple, str] = {}
        try:  # COMMENT = '...' on tables, views and columns
            cur.execute("SELECT table_schema, table_name, comment FROM information_schema.tables "
                        "WHERE comment IS NOT NULL")
            comments.update({(a, b, None): c for a, b, c in cur.fetchall()})
            cur.execute("SELECT table_schema, table_name, column_name, comment FROM information_schema.columns "
                        "WHERE comment IS NOT NULL")
            comments.update({(a, b, col.lower()): c for a, b, col, c in cur.fetchall()})
        except self._errors.Error:
            pass  # an account or emulator without comments: the schema is still complete
        try:  # declared (informational) foreign keys; Snowflake's information schema has no key columns
            cur.execute(f"SHOW IMPORTED KEYS IN DATABASE {self.quote(self.database)}")
            headers = [d[0].lower() for d in cur.description]
            fks = imported_keys(headers, cur.fetchall())
        except self._errors.Error:
            fks = []
        by_upper = {(k[0].upper(), k[1].upper()): x for k, x in tables.items()}
        for fk_schema, fk_table, fk_col, pk_schema, pk_table in fks:
            t = by_upper.get((fk_schema, fk_table))
            if t is not None:
                t.foreign_keys.setdefault(fk_col.lower(), f"{pk_schema.lower()}.{pk_table.lower()}")
        for key, t in tables.items():
            t.row_count = counts.get(key, 0)
            t.description = clean_comment(comments.get((*key, None)))
            for col in t.columns:
                col.description = clean_comment(comments.get((*key, col.name)))
        return list(tables.values())

    def sample_rows(self, table: TableInfo, n: int = 3) -> list[dict]:
        cur = self.conn.cursor()
        cur.execute(f"SELECT * FROM {self.quote(table.schema_name.upper())}.{self.quote(table.name.upper())} "
                    f"LIMIT {int(n)}")
        cols = [d[0].lower() for d in cur.description]
        return [dict(zip(cols, r)) for r in cur.fetchall()]

    def query(self, sql: str, *, row_cap: int, timeout_s: float) -> QueryResult:
        cur = self.conn.cursor()
        t0 = time.perf_counter()
        try:
            cur.execute(sql, timeout=int(max(timeout_s, 1)))
            cols = [d[0].lower() for d in cur.description] if cur.description else []
            rows = fetch_capped(cur, row_cap)
        except QueryError:  # the result grew past its byte budget
            raise
        except self._errors.ProgrammingError as exc:
            if getattr(exc, "errno", None) == 604 or "timeout" in str(exc).lower():
                raise QueryTimeout(f"query exceeded the {timeout_s:g}s statement timeout") from None
            raise QueryError(scrub_error(_first_line(exc))) from None
        except self._errors.Error as exc:
            raise QueryError(scrub_error(_first_line(exc))) from None
        except Exception as exc:  # a value the connector could not convert: this query fails, not the run
            raise QueryError(f"the result could not be read: {type(exc).__name__}") from None
        truncated = len(rows) > row_cap
        rows = rows[:row_cap]
        total = cur.rowcount if truncated and isinstance(cur.rowcount, int) and cur.rowcount > row_cap else None
        table = table_from_rows(cols, rows)  # VARIANT/ARRAY/OBJECT arrive as JSON text; the rest as scalars
        return QueryResult(table=table, truncated=truncated, total_rows=total,
                           duration_ms=(time.perf_counter() - t0) * 1000, columns=cols)

    def close(self) -> None:
        try:
            self.conn.close()
        except Exception:
            pass


_IMPORTED_KEY_COLUMNS = ("fk_schema_name", "fk_table_name", "fk_column_name", "pk_schema_name", "pk_table_name")


def imported_keys(headers: list[str], rows: list[tuple]) -> list[tuple[str, str, str, str, str]]:
    """(fk schema, fk table, fk column, pk schema, pk table), upper-case, from SHOW IMPORTED KEYS.

    Read by column name, first key column only (as the other engines). Rows whose header does not
    name each of these exactly once, or that leave one empty, are skipped: a join hint is a hint,
    and a wrong one is worse than none.
    """
    if any(headers.count(h) != 1 for h in _IMPORTED_KEY_COLUMNS):
        return []
    at = [headers.index(h) for h in _IMPORTED_KEY_COLUMNS]
    seq = headers.index("key_sequence") if headers.count("key_sequence") == 1 else None
    out = []
    for r in rows:
        vals = [r[i] for i in at]
        if not all(isinstance(v, str) and v for v in vals):
            continue
        if seq is not None and str(r[seq]) not in ("1", "1.0"):
            continue
        out.append(tuple(v.upper() for v in vals))
    return out
