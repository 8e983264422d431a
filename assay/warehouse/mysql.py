"""MySQL and MariaDB adapter (PyMySQL, pure Python).

Read-only at the session (``SET SESSION TRANSACTION READ ONLY``: every statement, autocommit or
not, runs in a read-only transaction and a write fails with error 1792). Every statement runs
under the server's own statement timeout (MariaDB ``max_statement_time``, MySQL
``max_execution_time``), set to what is left of the query's budget, and the socket's read timeout
backs it up. The row cap is enforced by the server (``sql_select_limit``: the top-level SELECT
returns at most cap + 1 rows unless it has its own LIMIT) and by an unbuffered cursor that stops
reading at cap + 1 rows; a result cut short closes the connection rather than reading the rest.
The true count of a truncated result runs with what is left of the timeout. One connection per
thread. A schema is a MySQL database: ``schemas`` (default: the DSN's database) are what is
discovered.
"""

from __future__ import annotations

import threading
import time
from urllib.parse import parse_qs, unquote, urlparse

from .. import secrets
from ..errors import ConfigError, QueryError, QueryTimeout, WarehouseUnreachable
from ..models import ColumnInfo, TableInfo, WarehouseConfig
from .base import QueryResult, clean_comment, fetch_capped, fix_prompt_for
from .redact import scrub_error
from .values import table_from_rows

SYSTEM_SCHEMAS = ("mysql", "information_schema", "performance_schema", "sys")
# server error codes
_TIMEOUT_CODES = {1969, 3024, 1317, 1028}  # max_statement_time / max_execution_time exceeded, interrupted
_ACCESS_DENIED = {1044, 1045, 1698}
_UNKNOWN_DB = 1049
_READ_ONLY = {1792, 1290, 1036}


def parse_dsn(dsn: str) -> dict:
    """``mysql://user[:password]@host[:port]/database?ssl_ca=...`` as PyMySQL connect() keywords."""
    u = urlparse(dsn.strip())
    if u.scheme not in ("mysql", "mariadb", "mysql+pymysql") or not u.hostname:
        raise ConfigError("warehouse.settings.dsn: not a MySQL URL (expected mysql://user@host:3306/database)")
    try:
        port = u.port
    except ValueError:
        raise ConfigError("warehouse.settings.dsn: the port is not a number") from None
    out: dict = {"host": u.hostname, "port": port or 3306}
    if u.username:
        out["user"] = unquote(u.username)
    if u.password:
        out["password"] = unquote(u.password)
    db = u.path.lstrip("/")
    if db:
        out["database"] = unquote(db)
    for k, v in parse_qs(u.query).items():
        if k in ("ssl_ca", "ssl_cert", "ssl_key", "charset", "unix_socket"):
            out[k] = v[-1]
    return out


def _code(exc: BaseException) -> int | None:
    args = getattr(exc, "args", ())
    return args[0] if args and isinstance(args[0], int) else None


def _message(exc: BaseException) -> str:
    args = getattr(exc, "args", ())
    msg = str(args[1]) if len(args) > 1 else str(exc) or type(exc).__name__
    return scrub_error(msg.strip().splitlines()[0][:500] if msg.strip() else type(exc).__name__)


class MySQLWarehouse:
    kind = "mysql"
    dialect = "mysql"
    concurrent_queries = True

    def __init__(self, cfg: WarehouseConfig):
        import pymysql

        self._pymysql = pymysql
        s = cfg.settings
        self.timeout_s = cfg.statement_timeout_s
        params = parse_dsn(s["dsn"]) if s.get("dsn") else {}
        if not params and not s.get("host"):
            raise ConfigError("warehouse.settings: mysql needs dsn, or host with database and user")
        if params.get("password"):
            raise ConfigError("warehouse.settings.dsn: holds a password; name where to read it instead: "
                              "password_env: MY_PASSWORD or password_block: NAME")
        for k in ("host", "port", "user", "database", "ssl_ca", "unix_socket"):
            if s.get(k) is not None:
                params[k] = s[k]
        password = secrets.warehouse_password(s, what="mysql")
        if password is not None:
            params["password"] = password
        self.database = None  # MySQL has no level above the schema (a "database" is a schema)
        self.schemas = list(cfg.schemas) or ([params["database"]] if params.get("database") else [])
        if not self.schemas:
            raise ConfigError("warehouse: mysql needs a database (in the DSN, settings.database or schemas)")
        self.default_schema = self.schemas[0]
        params["database"] = self.default_schema  # bare names mean the first schema, to the engine and the guard
        self.where = f"{params.get('host', 'localhost')}:{params.get('port', 3306)}/{params['database']}"
        ssl = {k[4:]: params.pop(k) for k in ("ssl_ca", "ssl_cert", "ssl_key") if k in params}
        self._params = dict(params, charset=params.get("charset", "utf8mb4"), autocommit=True,
                            connect_timeout=int(s.get("connect_timeout", 10)),
                            read_timeout=int(self.timeout_s + 30), write_timeout=int(self.timeout_s + 30),
                            program_name="assay", **({"ssl": ssl} if ssl else {}))
        self._local = threading.local()
        self._all: list = []
        self._lock = threading.Lock()
        self.timeout_variable: str | None = None  # max_statement_time (MariaDB) or max_execution_time (MySQL)
        self.health_check()

    # ------------------------------------------------------------------ connections

    def _connect(self):
        pymysql = self._pymysql
        try:
            # the server's greeting and the login are read within the connect timeout (a host that accepts
            # and never answers fails after connect_timeout, not after the query read timeout); queries
            # then read with their own timeout
            c = pymysql.connect(**dict(self._params, read_timeout=self._params["connect_timeout"],
                                       write_timeout=self._params["connect_timeout"]))
            c._read_timeout, c._write_timeout = self._params["read_timeout"], self._params["write_timeout"]
        except pymysql.err.OperationalError as exc:
            code = _code(exc)
            if code in _ACCESS_DENIED:
                raise WarehouseUnreachable(f"mysql: access denied for user {self._params.get('user', '')!r} at "
                                           f"{self.where} (check the user and its password)") from None
            if code == _UNKNOWN_DB:
                raise WarehouseUnreachable(f"mysql: database {self._params['database']!r} does not exist at "
                                           f"{self.where}") from None
            if code in (2003, 2013) and "timed out" in str(exc).lower():
                raise WarehouseUnreachable(f"mysql: cannot connect to {self.where} (timed out after "
                                           f"{self._params['connect_timeout']}s)") from None
            raise WarehouseUnreachable(f"mysql: cannot connect to {self.where} ({_message(exc)})") from None
        except (pymysql.err.Error, OSError) as exc:
            raise WarehouseUnreachable(f"mysql: cannot connect to {self.where} ({_message(exc)})") from None
        with c.cursor() as cur:
            cur.execute("SET SESSION TRANSACTION READ ONLY")
            if self.timeout_variable is None:
                cur.execute("SHOW VARIABLES WHERE Variable_name IN ('max_statement_time', 'max_execution_time')")
                names = {r[0] for r in cur.fetchall()}
                self.timeout_variable = "max_statement_time" if "max_statement_time" in names else \
                    "max_execution_time" if "max_execution_time" in names else ""
        return c

    def _conn(self):
        c = getattr(self._local, "conn", None)
        if c is None or not c.open:
            c = self._connect()
            self._local.conn = c
            with self._lock:
                self._all.append(c)
        return c

    def _drop(self, c) -> None:
        """Close a connection without reading what the server still sends (a result cut short)."""
        self._local.conn = None
        try:
            c._force_close() if hasattr(c, "_force_close") else c.close()
        except Exception:
            pass

    def _budget(self, cur, deadline: float, *, rows: int | None) -> None:
        left = deadline - time.perf_counter()
        if left <= 0:
            raise QueryTimeout("the query's time is up")
        if self.timeout_variable == "max_statement_time":
            cur.execute(f"SET SESSION max_statement_time = {max(left, 0.001):.3f}")
        elif self.timeout_variable == "max_execution_time":
            cur.execute(f"SET SESSION max_execution_time = {max(int(left * 1000), 1)}")
        cur.execute(f"SET SESSION sql_select_limit = {int(rows) if rows is not None else 'DEFAULT'}")

    def health_check(self) -> None:
        c = self._conn()
        with c.cursor() as cur:
            cur.execute("SELECT 1")
            cur.fetchall()

    def explain_cost(self, sql: str) -> dict | None:
        import json

        try:
            c = self._conn()
            with c.cursor() as cur:
                cur.execute("EXPLAIN FORMAT=JSON " + sql)
                plan = json.loads(cur.fetchone()[0])
            block = plan.get("query_block", {})
            cost = block.get("cost_info", {}).get("query_cost")  # MySQL
            if cost is not None:
                return {"unit": "plan cost units", "value": float(cost)}
            rows = _rows_examined(block)  # MariaDB reports no cost: the rows its plan reads
            return {"unit": "rows examined", "value": float(rows)} if rows else None
        except Exception:
            return None

    def quote(self, ident: str) -> str:
        return "`" + ident.replace("`", "``") + "`"

    def sql_fix_prompt(self) -> str:
        return fix_prompt_for("mysql")

    # ------------------------------------------------------------------ schema

    def list_tables(self) -> list[TableInfo]:
        marks = ", ".join(["%s"] * len(self.schemas))
        c = self._conn()
        with c.cursor() as cur:
            cur.execute(
                f"""SELECT table_schema, table_name, column_name, column_type, is_nullable, column_comment
                    FROM information_schema.columns WHERE table_schema IN ({marks})
                    ORDER BY table_schema, table_name, ordinal_position""", self.schemas)
            cols = cur.fetchall()
            cur.execute(  # table_rows: InnoDB's estimate (exact for MyISAM/Aria); no count(*) scan
                f"""SELECT table_schema, table_name, table_rows, table_comment FROM information_schema.tables
                    WHERE table_schema IN ({marks})""", self.schemas)
            meta = {(a, b): (r, cm) for a, b, r, cm in cur.fetchall()}
            cur.execute(
                f"""SELECT table_schema, table_name, column_name, referenced_table_schema, referenced_table_name
                    FROM information_schema.key_column_usage
                    WHERE table_schema IN ({marks}) AND referenced_table_name IS NOT NULL
                      AND position_in_unique_constraint = 1""", self.schemas)
            fks = cur.fetchall()
        tables: dict[tuple[str, str], TableInfo] = {}
        for schema, name, col, typ, nullable, comment in cols:
            t = tables.get((schema, name))
            if t is None:
                rows, tcomment = meta.get((schema, name), (0, ""))
                # a view's comment is the word VIEW; MySQL appends InnoDB notes after '; '
                tcomment = "" if (tcomment or "").upper() == "VIEW" else tcomment
                t = tables[(schema, name)] = TableInfo(schema=schema, name=name, row_count=int(rows or 0),
                                                       description=clean_comment(tcomment))
            # BOOL/BOOLEAN is MySQL's alias of tinyint(1): say boolean, as drivers that read it as a flag do
            typ = "boolean" if str(typ).lower() in ("tinyint(1)", "tinyint(1) unsigned") else str(typ)
            t.columns.append(ColumnInfo(name=col, type=typ, nullable=nullable == "YES",
                                        description=clean_comment(comment)))
        for s, n, col, rs, rn in fks:
            t = tables.get((s, n))
            if t is not None:
                t.foreign_keys.setdefault(col, f"{rs}.{rn}")
        return list(tables.values())

    def sample_rows(self, table: TableInfo, n: int = 3) -> list[dict]:
        sql = f"SELECT * FROM {self.quote(table.schema_name)}.{self.quote(table.name)} LIMIT {int(n)}"
        return self.query(sql, row_cap=int(n), timeout_s=self.timeout_s).table.to_pylist()

    # ------------------------------------------------------------------ queries

    def query(self, sql: str, *, row_cap: int, timeout_s: float) -> QueryResult:
        pymysql = self._pymysql
        t0 = time.perf_counter()
        deadline = t0 + timeout_s
        c = self._conn()
        truncated, total, cols, got = False, None, [], []
        try:
            with c.cursor() as setup:
                self._budget(setup, deadline, rows=row_cap + 1)
            cur = c.cursor(pymysql.cursors.SSCursor)
            cur.execute(sql)
            cols = [d[0] for d in cur.description] if cur.description else []
            got = fetch_capped(cur, row_cap)
            truncated = len(got) > row_cap
            got = got[:row_cap]
            if truncated:
                _abandon(cur)
                self._drop(c)  # the rest of the result is not read: the server stops when the client goes
                total = self._count(sql, deadline)
            else:
                cur.close()
        except QueryTimeout:
            self._drop(c)
            raise QueryTimeout(f"query exceeded the {timeout_s:g}s statement timeout") from None
        except pymysql.err.OperationalError as exc:
            code = _code(exc)
            self._drop(c)
            if code in _TIMEOUT_CODES or (code == 2013 and time.perf_counter() >= deadline - 0.05):
                raise QueryTimeout(f"query exceeded the {timeout_s:g}s statement timeout") from None
            if code in _READ_ONLY:
                raise QueryError(f"refused by the read-only connection: {_message(exc)}") from None
            if code in (2006, 2013, 2055):
                raise QueryError(f"the connection to the warehouse was lost during the query ({_message(exc)}); "
                                 "the next query reconnects") from None
            raise QueryError(_message(exc)) from None
        except pymysql.err.Error as exc:
            self._drop(c)
            if _code(exc) in _READ_ONLY:
                raise QueryError(f"refused by the read-only connection: {_message(exc)}") from None
            raise QueryError(_message(exc)) from None
        except QueryError:  # the result grew past its byte budget: the rest is not read
            self._drop(c)
            raise
        except Exception as exc:  # a value the driver could not convert: this query fails, not the run
            self._drop(c)
            raise QueryError(f"the result could not be read: {type(exc).__name__}: {scrub_error(str(exc))[:300]}"
                             ) from None
        table = table_from_rows(cols, got)
        return QueryResult(table=table, truncated=truncated, total_rows=total,
                           duration_ms=(time.perf_counter() - t0) * 1000, columns=cols)

    def _count(self, sql: str, deadline: float) -> int | None:
        """The true row count of a truncated result, within what is left of the timeout (None when that
        is not enough, or when the statement cannot stand as a derived table)."""
        try:
            c = self._conn()
            with c.cursor() as cur:
                self._budget(cur, deadline, rows=None)
                cur.execute(f"SELECT count(*) FROM ({sql}\n) AS _q")
                return int(cur.fetchone()[0])
        except QueryTimeout:
            return None
        except self._pymysql.err.Error:
            return None

    def close(self) -> None:
        with self._lock:
            for c in self._all:
                try:
                    c.close()
                except Exception:
                    pass
            self._all.clear()


def _abandon(cur) -> None:
    """Forget an unbuffered result without reading the rest of it (PyMySQL would read it all on close)."""
    res = getattr(cur, "_result", None)
    if res is not None:
        res.unbuffered_active = False
    cur._result = None
    conn = getattr(cur, "connection", None)
    if conn is not None:
        conn._result = None


def _rows_examined(block) -> float:
    """Sum of the row estimates in a MariaDB EXPLAIN FORMAT=JSON plan."""
    total = 0.0
    if isinstance(block, dict):
        for k, v in block.items():
            if k == "rows" and isinstance(v, (int, float)):
                total += v
            else:
                total += _rows_examined(v)
    elif isinstance(block, list):
        total += sum(_rows_examined(x) for x in block)
    return total
