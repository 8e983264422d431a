"""PostgreSQL adapter (psycopg 3).

Read-only at the connection (``default_transaction_read_only``), and every statement it sends
under a ``statement_timeout``: a query's whole budget is split over its server-side cursor's
fetches (each FETCH gets what is left), and the count behind a truncated result runs in the same
transaction with what is left after that. The session bounds memory (``work_mem``, and
``temp_file_limit`` where the role may set it), closes a transaction left idle, and checks the
client while a query runs (``client_connection_check_interval``), so a query whose client went
away is cancelled on the server. Values come back as digestible scalars (see ``values``): types
without a native Python form load as their text. One connection per thread.
"""

from __future__ import annotations

import threading
import time
import uuid
from contextlib import contextmanager
from typing import Iterator

import psycopg
from psycopg import sql as psql
from psycopg.types import datetime as pgdt
from psycopg.types.string import TextLoader

from .. import secrets
from ..errors import ConfigError, QueryError, QueryTimeout, WarehouseUnreachable
from ..models import ColumnInfo, TableInfo, WarehouseConfig
from .base import FETCH_ROWS, QueryResult, clean_comment, fetch_capped, fix_prompt_for
from .redact import scrub_error
from .values import table_from_rows

_SYSTEM = ("pg_catalog", "information_schema", "pg_toast")
FETCH_BATCH = FETCH_ROWS  # rows a FETCH reads: the result's size is checked after each
CLIENT_CHECK_MS = 1000  # how often a running query checks that its client is still there

# types psycopg loads as a value every stage reads (json/jsonb and records: nested, turned into
# JSON text later); every other built-in type loads as its PostgreSQL text
NATIVE_TYPES = {"bool", "int2", "int4", "int8", "oid", "xid", "xid8", "cid", "float4", "float8", "numeric",
                "text", "varchar", "bpchar", "name", '"char"', "bytea", "date", "time", "timestamp",
                "timestamptz", "json", "jsonb", "record"}


def _text_on_overflow(base: type) -> type:
    """A date/time loader that gives the value's text when Python cannot hold it (infinity, BC,
    year 10000+) instead of failing the whole fetch."""

    class Loader(base):
        def load(self, data):
            try:
                return super().load(data)
            except (psycopg.DataError, ValueError, OverflowError):
                return bytes(data).decode("utf-8", "replace")

    Loader.__name__ = f"TextOnOverflow{base.__name__}"
    return Loader


_TEMPORAL_LOADERS = {name: _text_on_overflow(cls) for name, cls in (
    ("date", pgdt.DateLoader), ("timestamp", pgdt.TimestampLoader), ("timestamptz", pgdt.TimestamptzLoader))}


def _register_loaders(c: psycopg.Connection) -> None:
    for info in psycopg.postgres.types:
        if info.name not in NATIVE_TYPES:
            c.adapters.register_loader(info.oid, TextLoader)
    for name, loader in _TEMPORAL_LOADERS.items():
        c.adapters.register_loader(name, loader)


def _message(exc: BaseException) -> str:
    diag = getattr(exc, "diag", None)
    msg = (diag.message_primary if diag is not None else None) or str(exc) or type(exc).__name__
    return scrub_error(msg.strip().splitlines()[0][:500])


class PostgresWarehouse:
    kind = "postgres"
    dialect = "postgres"
    default_schema = "public"
    concurrent_queries = True
    startup_options = True  # session settings in the startup packet (Redshift refuses them: it SETs instead)

    def __init__(self, cfg: WarehouseConfig):
        s = cfg.settings
        self.schemas = cfg.schemas
        self.timeout_s = cfg.statement_timeout_s
        self.memory_limit_mb = cfg.memory_limit_mb
        dsn = s.get("dsn")
        if not dsn and not s.get("host"):
            raise ConfigError(f"warehouse.settings: {self.kind} needs dsn or host/dbname/user")
        password = secrets.warehouse_password(s, what=self.kind)
        if dsn:  # a DSN psycopg cannot read is one line naming the setting, not a driver traceback
            try:
                psycopg.conninfo.conninfo_to_dict(dsn)
            except psycopg.Error as exc:
                raise ConfigError(f"warehouse.settings.dsn: not a {self.kind} connection string "
                                  f"({_message(exc)})") from None
        self.conninfo = psycopg.conninfo.make_conninfo(
            dsn or "",
            **{k: v for k, v in {
                "host": s.get("host"), "port": s.get("port"), "dbname": s.get("dbname"),
                "user": s.get("user"), "password": password, "sslmode": s.get("sslmode"),
            }.items() if v is not None},
            connect_timeout=int(s.get("connect_timeout", 10)),
            application_name="assay",
            # standard_conforming_strings pinned on: with it off (a role's or database's legacy setting) the engine
            # reads \' in a literal as a quote, where the guard's parser read the literal to its end
            **({"options": (f"-c default_transaction_read_only=on -c standard_conforming_strings=on "
                            f"-c statement_timeout={int(self.timeout_s * 1000)}"
                            + (f" -c search_path={','.join(cfg.schemas)}" if cfg.schemas else ""))}
               if self.startup_options else {}),
        )
        if self.schemas:
            self.default_schema = self.schemas[0]
        self._local = threading.local()
        self._all: list[psycopg.Connection] = []
        self._lock = threading.Lock()
        self.session_limits: dict[str, str] = {}  # the limits the server accepted for this role
        self.health_check()

    def _limits(self) -> list[tuple[str, str]]:
        mem = int(self.memory_limit_mb)
        return [
            ("work_mem", f"{max(4, mem // 16)}MB"),
            ("temp_file_limit", f"{4 * mem}MB"),  # superuser (or GRANT SET) only: skipped otherwise
            ("idle_in_transaction_session_timeout", str(int((self.timeout_s + 30) * 1000))),
            ("client_connection_check_interval", str(CLIENT_CHECK_MS)),  # PostgreSQL 14+
        ]

    def _apply_limits(self, c: psycopg.Connection) -> None:
        accepted = {}
        for name, value in self._limits():
            try:
                c.execute(psql.SQL("SET {} = {}").format(psql.Identifier(name), psql.Literal(value)))
                c.commit()
                accepted[name] = value
            except psycopg.Error:
                c.rollback()  # an older server or a role without the right: the other limits still hold
        self.session_limits = accepted

    def _conn(self) -> psycopg.Connection:
        c = getattr(self._local, "conn", None)
        if c is None or c.closed or c.broken:
            try:
                c = psycopg.connect(self.conninfo, autocommit=False)
                c.read_only = True
                self._apply_limits(c)
            except psycopg.OperationalError as exc:
                msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                raise WarehouseUnreachable(f"{self.kind}: cannot connect ({msg})") from None
            _register_loaders(c)
            self._local.conn = c
            with self._lock:
                self._all.append(c)
        return c

    @contextmanager
    def _txn(self) -> Iterator[psycopg.Connection]:
        """The thread's connection for one unit of work, rolled back after it whatever happens."""
        c = self._conn()
        try:
            yield c
        finally:
            try:
                c.rollback()
            except psycopg.Error:
                self._local.conn = None

    def health_check(self) -> None:
        with self._txn() as c, c.cursor() as cur:
            cur.execute("SELECT 1")

    # roles whose members read or write the server's files or run its programs
    _SERVER_ROLES = ("pg_read_server_files", "pg_write_server_files", "pg_execute_server_program")

    def role_problem(self) -> str | None:
        """What the connected role may do that assay's role must not (doctor): a superuser, or a member of a role
        that reads the server's files or runs its programs. The guard would then be the only lock."""
        with self._txn() as c, c.cursor() as cur:
            # a member through another role too (pg_has_role follows the chain; the session's review)
            cur.execute("SELECT current_user, r.rolsuper, array(SELECT b.rolname FROM pg_roles b WHERE b.rolname = "
                        "ANY(%s) AND pg_has_role(current_user, b.oid, 'MEMBER')) FROM pg_roles r "
                        "WHERE r.rolname = current_user", (list(self._SERVER_ROLES),))
            row = cur.fetchone()
        if row is None:
            return None
        user, superuser, server_roles = row
        if superuser:
            return (f"the role {user} is a superuser: the guard would be the only lock between a model and the "
                    "server's files; connect as a read-only role (README, Security)")
        if server_roles:
            return (f"the role {user} is a member of {', '.join(server_roles)}: connect as a role without them "
                    "(README, Security)")
        return None

    def explain_cost(self, sql: str) -> dict | None:
        try:
            with self._txn() as c, c.cursor() as cur:
                cur.execute("EXPLAIN (FORMAT JSON) " + sql)
                plan = cur.fetchone()[0]
            return {"unit": "plan cost units", "value": float(plan[0]["Plan"]["Total Cost"]),
                    "rows": float(plan[0]["Plan"].get("Plan Rows", 0))}
        except (psycopg.Error, WarehouseUnreachable, LookupError, TypeError, ValueError):
            return None

    def quote(self, ident: str) -> str:
        return '"' + ident.replace('"', '""') + '"'

    def sql_fix_prompt(self) -> str:
        return fix_prompt_for("postgres")

    def list_tables(self) -> list[TableInfo]:
        schema_filter = "AND c.table_schema = ANY(%s)" if self.schemas else ""
        params = [self.schemas] if self.schemas else []
        with self._txn() as c, c.cursor() as cur:
            cur.execute(
                # a user-defined type (citext, an enum, a domain) by its own name, not "USER-DEFINED"
                f"""SELECT c.table_schema, c.table_name, c.column_name,
                           CASE WHEN c.data_type = 'USER-DEFINED' THEN c.udt_name ELSE c.data_type END, c.is_nullable
                    FROM information_schema.columns c
                    WHERE c.table_schema NOT IN ('pg_catalog', 'information_schema', 'pg_toast')
                      AND c.table_schema NOT LIKE 'pg_temp%%' {schema_filter}
                    ORDER BY c.table_schema, c.table_name, c.ordinal_position""",
                params,
            )
            rows = cur.fetchall()
            cur.execute(
                """SELECT n.nspname, c.relname, greatest(c.reltuples, 0)::bigint
                   FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                   WHERE c.relkind IN ('r', 'p', 'm', 'v', 'f')"""
            )
            counts = {(s, n): int(r) for s, n, r in cur.fetchall()}
            cur.execute(
                """SELECT n.nspname, cl.relname, a.attname, rn.nspname, rc.relname
                   FROM pg_constraint con
                   JOIN pg_class cl ON cl.oid = con.conrelid JOIN pg_namespace n ON n.oid = cl.relnamespace
                   JOIN pg_class rc ON rc.oid = con.confrelid JOIN pg_namespace rn ON rn.oid = rc.relnamespace
                   JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = con.conkey[1]
                   WHERE con.contype = 'f'"""
            )
            fks = cur.fetchall()
            cur.execute(  # COMMENT ON TABLE / VIEW / COLUMN
                """SELECT n.nspname, cl.relname, a.attname, d.description
                   FROM pg_description d
                   JOIN pg_class cl ON cl.oid = d.objoid AND d.classoid = 'pg_class'::regclass
                   JOIN pg_namespace n ON n.oid = cl.relnamespace
                   LEFT JOIN pg_attribute a ON a.attrelid = cl.oid AND a.attnum = d.objsubid AND d.objsubid > 0
                   WHERE n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')
                     AND (d.objsubid = 0 OR a.attname IS NOT NULL)"""
            )
            comments = {(s, n, col): text for s, n, col, text in cur.fetchall()}
        tables: dict[tuple[str, str], TableInfo] = {}
        for schema, name, col, typ, nullable in rows:
            t = tables.setdefault((schema, name), TableInfo(schema=schema, name=name))
            t.columns.append(ColumnInfo(name=col, type=typ, nullable=nullable == "YES"))
        for s, n, col, rs, rn in fks:
            t = tables.get((s, n))
            if t is not None:
                t.foreign_keys[col] = f"{rs}.{rn}"
        for key, t in tables.items():
            t.row_count = counts.get(key, 0)
            t.description = clean_comment(comments.get((*key, None)))
            for col in t.columns:
                col.description = clean_comment(comments.get((*key, col.name)))
        return list(tables.values())

    def sample_rows(self, table: TableInfo, n: int = 3) -> list[dict]:
        q = psql.SQL("SELECT * FROM {}.{} LIMIT {}").format(
            psql.Identifier(table.schema_name), psql.Identifier(table.name), psql.Literal(int(n)))
        return self.query(q.as_string(self._conn()), row_cap=int(n), timeout_s=self.timeout_s).table.to_pylist()

    @staticmethod
    def _budget(cur: psycopg.Cursor, deadline: float) -> None:
        """The next statement of this transaction gets what is left of the query's timeout."""
        left_ms = int((deadline - time.perf_counter()) * 1000)
        if left_ms <= 0:
            raise psycopg.errors.QueryCanceled("the query's time is up")
        cur.execute(psql.SQL("SET LOCAL statement_timeout = {}").format(psql.Literal(left_ms)))

    def query(self, sql: str, *, row_cap: int, timeout_s: float) -> QueryResult:
        t0 = time.perf_counter()
        deadline = t0 + timeout_s
        name = f"assay_{uuid.uuid4().hex[:12]}"
        total = None
        try:
            with self._txn() as c, c.transaction(), c.cursor() as setup:
                with c.cursor(name=name) as cur:
                    cur.itersize = FETCH_BATCH
                    self._budget(setup, deadline)
                    cur.execute(sql)  # DECLARE: plans the query; the FETCHes run it
                    cols = [d.name for d in cur.description] if cur.description else []
                    got = fetch_capped(cur, row_cap, before_batch=lambda: self._budget(setup, deadline))
                    truncated = len(got) > row_cap
                    got = got[:row_cap]
                if truncated:
                    total = self._count(c, setup, sql, deadline)
        except psycopg.errors.QueryCanceled:
            raise QueryTimeout(f"query exceeded the {timeout_s:g}s statement timeout") from None
        except psycopg.errors.ReadOnlySqlTransaction as exc:
            raise QueryError(f"refused by the read-only connection: {_message(exc)}") from None
        except psycopg.OperationalError as exc:
            # an OperationalError with a server's SQLSTATE outside the connection classes is the statement's own
            # (54000 "requested character too large for encoding": red team 19 saw it reported as a lost
            # connection, and the sound connection dropped)
            state = getattr(exc, "sqlstate", None)
            if state and not state.startswith(("08", "57P")):
                raise QueryError(_message(exc)) from None
            self._local.conn = None
            raise QueryError(f"the connection to the warehouse was lost during the query ({_message(exc)}); "
                             "the next query reconnects") from None
        except psycopg.Error as exc:
            raise QueryError(_message(exc)) from None
        except QueryError:  # the result grew past its byte budget
            raise
        except Exception as exc:  # a value psycopg could not load, a decoding error: this query fails, not the run
            raise QueryError(f"the result could not be read: {type(exc).__name__}: {scrub_error(str(exc))[:300]}"
                             ) from None
        table = table_from_rows(cols, got)
        return QueryResult(table=table, truncated=truncated, total_rows=total,
                           duration_ms=(time.perf_counter() - t0) * 1000, columns=cols)

    def _count(self, c: psycopg.Connection, setup: psycopg.Cursor, sql: str, deadline: float) -> int | None:
        """The true row count of a truncated result, in the query's transaction, within what is left
        of its timeout (None when that is not enough)."""
        try:
            with c.transaction():  # a savepoint: a cancelled count leaves the rows already read
                self._budget(setup, deadline)
                setup.execute(f"SELECT count(*) FROM ({sql}\n) AS _q")
                return int(setup.fetchone()[0])
        except psycopg.errors.QueryCanceled:
            return None
        except psycopg.OperationalError:
            raise
        except psycopg.Error:
            return None

    def close(self) -> None:
        with self._lock:
            for c in self._all:
                try:
                    c.close()
                except psycopg.Error:
                    pass
            self._all.clear()
