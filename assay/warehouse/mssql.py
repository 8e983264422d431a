"""Microsoft SQL Server / Azure SQL / Synapse adapter (pymssql, FreeTDS bundled in the wheel).

NOT tested against a live server (none can run on these machines): the dialect (sqlglot ``tsql``)
is tested in the guard and the fix prompt, and this module is exercised only up to connecting.

SQL Server has no read-only session for a login: give assay a user with ``db_datareader`` only
(or connect with ``ApplicationIntent=ReadOnly`` to a readable secondary); each query runs under
``SET TRANSACTION ISOLATION LEVEL READ UNCOMMITTED`` (it takes no shared locks, so it never blocks
writers) and ``SET LOCK_TIMEOUT``, with the query timeout of the connection as its statement
timeout. ``SET ROWCOUNT cap+1`` makes the server stop after cap + 1 rows; the true count of a
truncated result runs after it. Row counts come from ``sys.dm_db_partition_stats`` (no scan),
declared keys from ``sys.foreign_keys``, comments from the ``MS_Description`` extended property.
"""

from __future__ import annotations

import re
import threading
import contextlib
import time

from .. import secrets
from ..errors import ConfigError, QueryError, QueryTimeout, WarehouseUnreachable
from ..models import ColumnInfo, TableInfo, WarehouseConfig
from .base import QueryResult, clean_comment, fetch_capped, fix_prompt_for
from .redact import scrub_error
from .values import table_from_rows

_SYSTEM = ("sys", "INFORMATION_SCHEMA", "guest")


def _message(exc: BaseException) -> str:
    """pymssql's message, one line: (code, b"DB-Lib error message 20003, severity 6:\\nTDS server
    connection timed out (host)\\n...") as its first line that says something."""
    args = getattr(exc, "args", ())
    if len(args) == 1 and isinstance(args[0], tuple):  # connect errors: ((code, bytes),)
        args = args[0]
    raw = args[1] if len(args) > 1 else (args[0] if args else exc)
    if isinstance(raw, bytes):
        raw = raw.decode("utf-8", "replace")
    lines = [x.strip() for x in str(raw).splitlines() if x.strip()]
    said = [x for x in lines if not re.match(r"DB-Lib error message \d+, severity \d+:?$", x)]
    text = (said or lines or [type(exc).__name__])[0]
    return scrub_error(text[:400])


class MSSQLWarehouse:
    kind = "mssql"
    dialect = "tsql"
    concurrent_queries = True

    def __init__(self, cfg: WarehouseConfig):
        import pymssql

        self._pymssql = pymssql
        s = cfg.settings
        if not s.get("host") or not s.get("database"):
            raise ConfigError("warehouse.settings: mssql needs host and database")
        self.database = s["database"]
        self.schemas = list(cfg.schemas)
        self.default_schema = self.schemas[0] if self.schemas else "dbo"
        self.timeout_s = cfg.statement_timeout_s
        password = secrets.warehouse_password(s, what="mssql")
        self.where = f"{s['host']}:{s.get('port') or 1433}/{self.database}"
        self._params = {"server": s["host"], "port": str(s.get("port") or 1433), "database": self.database,
                        "user": s.get("user"), "password": password, "login_timeout": int(s.get("login_timeout", 10)),
                        "timeout": int(max(1, self.timeout_s)), "appname": "assay", "autocommit": True,
                        **({"encryption": "require" if s["encrypt"] else "off"} if s.get("encrypt") is not None
                           else {})}
        self._local = threading.local()
        self._all: list = []
        self._lock = threading.Lock()
        self.health_check()

    def _conn(self):
        c = getattr(self._local, "conn", None)
        if c is None:
            try:
                c = self._pymssql.connect(**self._params)
            except self._pymssql.Error as exc:
                msg = _message(exc)
                if "Login failed" in msg:
                    raise WarehouseUnreachable(f"mssql: login failed for user {self._params['user']!r} at "
                                               f"{self.where}") from None
                if "Cannot open database" in msg:
                    raise WarehouseUnreachable(f"mssql: database {self.database!r} does not exist or is not "
                                               f"accessible at {self.where}") from None
                if "timed out" in msg.lower():
                    raise WarehouseUnreachable(f"mssql: cannot connect to {self.where} (timed out after "
                                               f"{self._params['login_timeout']}s)") from None
                raise WarehouseUnreachable(f"mssql: cannot connect to {self.where} ({msg})") from None
            with c.cursor() as cur:
                cur.execute("SET TRANSACTION ISOLATION LEVEL READ UNCOMMITTED; SET LOCK_TIMEOUT 5000; "
                            "SET ARITHABORT ON")
            self._local.conn = c
            with self._lock:
                self._all.append(c)
        return c

    def health_check(self) -> None:
        with self._conn().cursor() as cur:
            cur.execute("SELECT 1")
            cur.fetchall()

    def explain_cost(self, sql: str) -> dict | None:
        return None  # SHOWPLAN needs its own batch and the SHOWPLAN permission: say nothing rather than guess

    def quote(self, ident: str) -> str:
        return "[" + ident.replace("]", "]]") + "]"

    def sql_fix_prompt(self) -> str:
        return fix_prompt_for("mssql")

    def list_tables(self) -> list[TableInfo]:
        with self._conn().cursor() as cur:
            cur.execute("""SELECT c.TABLE_SCHEMA, c.TABLE_NAME, c.COLUMN_NAME, c.DATA_TYPE, c.IS_NULLABLE
                           FROM INFORMATION_SCHEMA.COLUMNS c ORDER BY 1, 2, c.ORDINAL_POSITION""")
            cols = cur.fetchall()
            cur.execute("""SELECT s.name, t.name, SUM(p.row_count) FROM sys.dm_db_partition_stats p
                           JOIN sys.tables t ON t.object_id = p.object_id JOIN sys.schemas s ON s.schema_id = t.schema_id
                           WHERE p.index_id IN (0, 1) GROUP BY s.name, t.name""")
            counts = {(a, b): int(n or 0) for a, b, n in cur.fetchall()}
            cur.execute("""SELECT ps.name, pt.name, pc.name, rs.name, rt.name
                           FROM sys.foreign_key_columns fkc
                           JOIN sys.tables pt ON pt.object_id = fkc.parent_object_id
                           JOIN sys.schemas ps ON ps.schema_id = pt.schema_id
                           JOIN sys.columns pc ON pc.object_id = fkc.parent_object_id AND pc.column_id = fkc.parent_column_id
                           JOIN sys.tables rt ON rt.object_id = fkc.referenced_object_id
                           JOIN sys.schemas rs ON rs.schema_id = rt.schema_id
                           WHERE fkc.constraint_column_id = 1""")
            fks = cur.fetchall()
            cur.execute("""SELECT s.name, o.name, c.name, CAST(ep.value AS NVARCHAR(4000))
                           FROM sys.extended_properties ep JOIN sys.objects o ON o.object_id = ep.major_id
                           JOIN sys.schemas s ON s.schema_id = o.schema_id
                           LEFT JOIN sys.columns c ON c.object_id = ep.major_id AND c.column_id = ep.minor_id
                           WHERE ep.class = 1 AND ep.name = 'MS_Description'""")
            comments = {(a, b, c): d for a, b, c, d in cur.fetchall()}
        wanted = {x.lower() for x in self.schemas}
        tables: dict[tuple[str, str], TableInfo] = {}
        for schema, name, col, typ, nullable in cols:
            if schema in _SYSTEM or (wanted and schema.lower() not in wanted):
                continue
            t = tables.setdefault((schema, name), TableInfo(schema=schema, name=name))
            t.columns.append(ColumnInfo(name=col, type=typ, nullable=nullable == "YES",
                                        description=clean_comment(comments.get((schema, name, col)))))
        for s, n, col, rs, rn in fks:
            if (s, n) in tables:
                tables[(s, n)].foreign_keys.setdefault(col, f"{rs}.{rn}")
        for key, t in tables.items():
            t.row_count = counts.get(key, 0)
            t.description = clean_comment(comments.get((*key, None)))
        return list(tables.values())

    def sample_rows(self, table: TableInfo, n: int = 3) -> list[dict]:
        sql = f"SELECT TOP {int(n)} * FROM {self.quote(table.schema_name)}.{self.quote(table.name)}"
        return self.query(sql, row_cap=int(n), timeout_s=self.timeout_s).table.to_pylist()

    def query(self, sql: str, *, row_cap: int, timeout_s: float) -> QueryResult:
        pymssql = self._pymssql
        t0 = time.perf_counter()
        c = self._conn()
        total = None
        try:
            with c.cursor() as cur:
                cur.execute(f"SET ROWCOUNT {int(row_cap) + 1}")
                cur.execute(sql)
                cols = [d[0] for d in cur.description] if cur.description else []
                got = fetch_capped(cur, row_cap)  # in batches, the result's size checked after each
                while cur.nextset():  # a statement leaves one result; drain anything else
                    pass
                cur.execute("SET ROWCOUNT 0")
                truncated = len(got) > row_cap
                got = got[:row_cap]
                if truncated and time.perf_counter() - t0 < timeout_s:
                    try:
                        cur.execute(f"SELECT COUNT_BIG(*) FROM ({sql}\n) AS _q")
                        total = int(cur.fetchone()[0])
                    except pymssql.Error:
                        total = None
        except pymssql.OperationalError as exc:
            msg = _message(exc)
            self._local.conn = None
            if "timed out" in msg.lower() or "timeout" in msg.lower():
                raise QueryTimeout(f"query exceeded the {timeout_s:g}s statement timeout") from None
            raise QueryError(msg) from None
        except pymssql.Error as exc:
            raise QueryError(_message(exc)) from None
        except QueryError:  # the result grew past its byte budget
            self._local.conn = None  # the rest of the result is not read: a new query starts on a new connection
            with contextlib.suppress(Exception):
                c.close()
            raise
        except Exception as exc:
            raise QueryError(f"the result could not be read: {type(exc).__name__}") from None
        return QueryResult(table=table_from_rows(cols, got), truncated=truncated, total_rows=total,
                           duration_ms=(time.perf_counter() - t0) * 1000, columns=cols)

    def close(self) -> None:
        with self._lock:
            for c in self._all:
                try:
                    c.close()
                except Exception:
                    pass
            self._all.clear()
