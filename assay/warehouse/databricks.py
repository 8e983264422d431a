"""Databricks SQL adapter (databricks-sdk: the Statement Execution API and Unity Catalog).

Why the SDK and not ``databricks-sql-connector``: the Statement Execution API takes the row cap
itself (``row_limit``: the warehouse stops at cap + 1 rows and says whether it cut), answers in
JSON over plain HTTPS (no Thrift, no Arrow build), and can be driven for real in tests by a
loopback server (tests/services/databricks_server.py).

Databricks has no read-only session: give assay a principal with ``USE CATALOG``/``USE SCHEMA``
and ``SELECT`` only (Unity Catalog grants), and a SQL warehouse it may use. The guard refuses
everything but one SELECT. Each statement is submitted with a wait of at most the statement
timeout (``wait_timeout``, at most 50 s), then polled until the deadline, and cancelled when the
deadline passes. The true count of a truncated result is a second statement within what is left.
Discovery reads Unity Catalog (``tables.list`` per schema): columns with comments, table comments,
declared primary/foreign keys (``table_constraints``) and the row count the table's statistics
hold (``spark.sql.statistics.numRows``, present once ``ANALYZE TABLE`` has run; 0 otherwise).
Credentials: a personal access token or OAuth token from ``token_env``/``token_block``
(otherwise the SDK's own chain: ``DATABRICKS_TOKEN``, a config profile, OAuth M2M).
"""

from __future__ import annotations

import decimal
import json
import time

from .. import secrets
from ..errors import ConfigError, QueryError, QueryTimeout, WarehouseUnreachable
from ..models import ColumnInfo, TableInfo, WarehouseConfig
from .base import QueryResult, check_result_bytes, clean_comment, fix_prompt_for, rows_bytes
from .redact import scrub_error
from .values import table_from_rows

MAX_WAIT_S = 50  # the API's longest synchronous wait
POLL_S = 0.5


def _line(exc: BaseException) -> str:
    msg = str(exc).strip()
    return scrub_error(msg.splitlines()[0][:400] if msg else type(exc).__name__)


def convert(value, type_name: str):
    """A JSON_ARRAY cell (always text or null) as the Python value of its Databricks type."""
    if value is None:
        return None
    t = (type_name or "").upper()
    try:
        if t in ("INT", "BIGINT", "SMALLINT", "TINYINT", "LONG", "SHORT", "BYTE"):
            return int(value)
        if t in ("DOUBLE", "FLOAT"):
            return float(value)
        if t == "DECIMAL":
            return decimal.Decimal(value)
        if t == "BOOLEAN":
            return value.lower() == "true"
        if t == "DATE":
            import datetime as dt

            return dt.date.fromisoformat(value)
        if t in ("TIMESTAMP", "TIMESTAMP_NTZ"):
            import datetime as dt

            v = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
            return v
        if t in ("ARRAY", "MAP", "STRUCT"):
            return json.loads(value)
    except (ValueError, TypeError, decimal.InvalidOperation, json.JSONDecodeError):
        return value
    return value


class DatabricksWarehouse:
    kind = "databricks"
    dialect = "databricks"
    concurrent_queries = True

    def __init__(self, cfg: WarehouseConfig):
        from databricks.sdk.service import sql as dsql

        self._sql = dsql
        s = cfg.settings
        if not s.get("host") or not s.get("warehouse_id"):
            raise ConfigError("warehouse.settings: databricks needs host and warehouse_id")
        self.host = s["host"].rstrip("/")
        self.warehouse_id = s["warehouse_id"]
        self.catalog = s.get("catalog") or "main"
        self.database = self.catalog  # `catalog.schema.table`: the guard refuses other catalogs
        self.schemas = list(cfg.schemas)
        self.default_schema = self.schemas[0] if self.schemas else "default"
        self.timeout_s = cfg.statement_timeout_s
        token = secrets.resolve(s.get("token_env"), s.get("token_block"), what="databricks",
                                required=bool(s.get("token_env") or s.get("token_block")))
        self.connect_timeout = float(s.get("connect_timeout", 30))
        self._token = token
        self._statements_client = None
        # the SDK reads the host's metadata when the client is built and waits its HTTP timeout per request:
        # the connect timeout bounds that, the health check and Unity Catalog reads (a silent host is one
        # line after about twice the connect timeout, not minutes); statements get a client that waits as
        # long as the API's synchronous wait (MAX_WAIT_S) and then some
        self.client = self._client(self.connect_timeout)
        self.health_check()

    def _client(self, http_timeout_s: float):
        try:
            from databricks.sdk import WorkspaceClient
            from databricks.sdk.core import Config

            conf = Config(host=self.host, token=self._token, http_timeout_seconds=http_timeout_s,
                          retry_timeout_seconds=int(self.connect_timeout))
            return WorkspaceClient(config=conf)
        except Exception as exc:
            if isinstance(exc, TimeoutError) or "timed out" in str(exc).lower():
                raise WarehouseUnreachable(f"databricks: cannot reach {self.host} (timed out after "
                                           f"{self.connect_timeout:g}s)") from None
            raise WarehouseUnreachable(f"databricks: cannot configure the client ({_line(exc)})") from None

    @property
    def _statements(self):
        """The statement-execution API, on a client whose HTTP timeout outlasts the synchronous wait."""
        if self._statements_client is None:
            self._statements_client = self._client(MAX_WAIT_S + 15)
        return self._statements_client.statement_execution

    def _unreachable(self, exc: BaseException, what: str = "") -> WarehouseUnreachable:
        from databricks.sdk import errors as derr

        if isinstance(exc, (derr.Unauthenticated, derr.PermissionDenied)):
            return WarehouseUnreachable(f"databricks: the token was refused at {self.host}{what} ({_line(exc)})")
        if isinstance(exc, derr.NotFound):
            return WarehouseUnreachable(f"databricks: {what.strip() or 'not found'} ({_line(exc)})")
        if isinstance(exc, TimeoutError) or "timed out" in str(exc).lower():
            return WarehouseUnreachable(f"databricks: cannot reach {self.host} (timed out after "
                                        f"{self.connect_timeout:g}s)")
        return WarehouseUnreachable(f"databricks: cannot reach {self.host}{what} ({_line(exc)})")

    def health_check(self) -> None:
        try:
            self.client.warehouses.get(self.warehouse_id)
        except Exception as exc:
            raise self._unreachable(exc, f" SQL warehouse {self.warehouse_id}") from None

    def explain_cost(self, sql: str) -> dict | None:
        return None  # EXPLAIN COST reports sizes only once statistics exist: no figure rather than a guess

    def quote(self, ident: str) -> str:
        return "`" + ident.replace("`", "``") + "`"

    def sql_fix_prompt(self) -> str:
        return fix_prompt_for("databricks")

    def list_tables(self) -> list[TableInfo]:
        out = []
        try:
            schemas = self.schemas or [s.name for s in self.client.schemas.list(catalog_name=self.catalog)
                                       if s.name != "information_schema"]
            for schema in schemas:
                for t in self.client.tables.list(catalog_name=self.catalog, schema_name=schema):
                    props = t.properties or {}
                    info = TableInfo(schema=schema, name=t.name, description=clean_comment(t.comment),
                                     row_count=int(props.get("spark.sql.statistics.numRows", 0) or 0))
                    for c in sorted(t.columns or [], key=lambda c: c.position or 0):
                        info.columns.append(ColumnInfo(name=c.name, type=c.type_text or str(c.type_name or ""),
                                                       nullable=c.nullable is not False,
                                                       description=clean_comment(c.comment)))
                    for con in t.table_constraints or []:
                        fk = con.foreign_key_constraint
                        if fk and fk.child_columns and fk.parent_table:
                            parent = fk.parent_table.split(".")
                            info.foreign_keys.setdefault(fk.child_columns[0], ".".join(parent[-2:]))
                    out.append(info)
        except Exception as exc:
            raise self._unreachable(exc, f" listing tables of {self.catalog}") from None
        return out

    def sample_rows(self, table: TableInfo, n: int = 3) -> list[dict]:
        sql = f"SELECT * FROM {self.quote(table.schema_name)}.{self.quote(table.name)} LIMIT {int(n)}"
        return self.query(sql, row_cap=int(n), timeout_s=self.timeout_s).table.to_pylist()

    def _execute(self, sql: str, deadline: float, row_limit: int | None):
        """Submit, wait, poll until the deadline (then cancel); the finished StatementResponse."""
        d = self._sql
        left = deadline - time.perf_counter()
        wait = int(min(MAX_WAIT_S, left))
        r = self._statements.execute_statement(
            statement=sql, warehouse_id=self.warehouse_id, catalog=self.catalog, schema=self.default_schema,
            wait_timeout=f"{wait}s" if wait >= 5 else "0s", on_wait_timeout=d.ExecuteStatementRequestOnWaitTimeout.CONTINUE,
            row_limit=row_limit, disposition=d.Disposition.INLINE, format=d.Format.JSON_ARRAY)
        while r.status and r.status.state in (d.StatementState.PENDING, d.StatementState.RUNNING):
            if time.perf_counter() >= deadline:
                try:
                    self._statements.cancel_execution(r.statement_id)
                except Exception:
                    pass
                raise QueryTimeout("deadline")
            time.sleep(min(POLL_S, max(0.0, deadline - time.perf_counter())))
            r = self._statements.get_statement(r.statement_id)
        state = r.status.state if r.status else None
        if state == d.StatementState.SUCCEEDED:
            return r
        if state == d.StatementState.CANCELED:
            raise QueryTimeout("cancelled")
        err = r.status.error if r.status else None
        raise QueryError(scrub_error((err.message if err and err.message else str(state)).splitlines()[0][:500]))

    def query(self, sql: str, *, row_cap: int, timeout_s: float) -> QueryResult:
        t0 = time.perf_counter()
        deadline = t0 + timeout_s
        total = None
        try:
            r = self._execute(sql, deadline, row_cap + 1)
            cols_meta = r.manifest.schema.columns if r.manifest and r.manifest.schema else []
            cols = [c.name for c in cols_meta]
            types = [(c.type_name.value if hasattr(c.type_name, "value") else str(c.type_name or "")) or
                     (c.type_text or "").split("<")[0].split("(")[0].upper() for c in cols_meta]
            rows = list((r.result.data_array if r.result else None) or [])
            size = rows_bytes(rows)
            check_result_bytes(size)  # the row cap counts rows, not bytes: each chunk's size is checked
            chunk = r.result.next_chunk_index if r.result else None
            while chunk is not None and len(rows) <= row_cap:
                if time.perf_counter() >= deadline:
                    raise QueryTimeout("deadline")
                part = self._statements.get_statement_result_chunk_n(r.statement_id, chunk)
                rows += part.data_array or []
                size += rows_bytes(part.data_array or [])
                check_result_bytes(size)
                chunk = part.next_chunk_index
            truncated = len(rows) > row_cap or bool(r.manifest and r.manifest.truncated and len(rows) >= row_cap)
            rows = rows[:row_cap]
            got = [tuple(convert(v, t) for v, t in zip(row, types)) for row in rows]
            if truncated and time.perf_counter() < deadline:
                try:
                    c = self._execute(f"SELECT count(*) FROM ({sql}\n) AS _q", deadline, None)
                    total = int(c.result.data_array[0][0])
                except (QueryError, QueryTimeout, LookupError, TypeError, ValueError):
                    total = None
        except QueryTimeout:
            raise QueryTimeout(f"query exceeded the {timeout_s:g}s statement timeout") from None
        except QueryError:
            raise
        except Exception as exc:
            if "timed out" in str(exc).lower():
                raise QueryTimeout(f"query exceeded the {timeout_s:g}s statement timeout") from None
            raise QueryError(_line(exc)) from None
        return QueryResult(table=table_from_rows(cols, got), truncated=truncated, total_rows=total,
                           duration_ms=(time.perf_counter() - t0) * 1000, columns=cols)

    def close(self) -> None:
        pass
