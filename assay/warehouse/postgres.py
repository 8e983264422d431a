"""PostgreSQL adapter (psycopg 3).

Read-only at the connection (``default_transaction_read_only``), a
``statement_timeout``, and a server-side cursor so a huge result stops at the
row cap without being fetched whole. One connection per thread.
"""

from __future__ import annotations

import threading
import time
import uuid

import psycopg
import pyarrow as pa
from psycopg import sql as psql

from .. import secrets
from ..errors import ConfigError, QueryError, QueryTimeout, TransientError, WarehouseUnreachable
from ..models import ColumnInfo, TableInfo, WarehouseConfig
from .base import QueryResult, clean_comment, fix_prompt_for

_SYSTEM = ("pg_catalog", "information_schema", "pg_toast")
FETCH_BATCH = 10_000


class PostgresWarehouse:
    kind = "postgres"
    dialect = "postgres"
    default_schema = "public"
    concurrent_queries = True

    def __init__(self, cfg: WarehouseConfig):
        s = cfg.settings
        self.schemas = cfg.schemas
        self.timeout_s = cfg.statement_timeout_s
        dsn = s.get("dsn")
        if not dsn and not s.get("host"):
            raise ConfigError("warehouse.settings: postgres needs dsn or host/dbname/user")
        password = secrets.resolve(s.get("password_env"), s.get("password_block"), what="postgres",
                                   required=False)
        self.conninfo = psycopg.conninfo.make_conninfo(
            dsn or "",
            **{k: v for k, v in {
                "host": s.get("host"), "port": s.get("port"), "dbname": s.get("dbname"),
                "user": s.get("user"), "password": password, "sslmode": s.get("sslmode"),
            }.items() if v is not None},
            connect_timeout=int(s.get("connect_timeout", 10)),
            application_name="assay",
            options=(f"-c default_transaction_read_only=on -c statement_timeout={int(self.timeout_s * 1000)}"
                     + (f" -c search_path={','.join(cfg.schemas)}" if cfg.schemas else "")),
        )
        if self.schemas:
            self.default_schema = self.schemas[0]
        self._local = threading.local()
        self._all: list[psycopg.Connection] = []
        self._lock = threading.Lock()
        self.health_check()

    def _conn(self) -> psycopg.Connection:
        c = getattr(self._local, "conn", None)
        if c is None or c.closed:
            try:
                c = psycopg.connect(self.conninfo, autocommit=False)
            except psycopg.OperationalError as exc:
                msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                raise WarehouseUnreachable(f"postgres: cannot connect ({msg})") from None
            c.read_only = True
            self._local.conn = c
            with self._lock:
                self._all.append(c)
        return c

    def health_check(self) -> None:
        c = self._conn()
        with c.cursor() as cur:
            cur.execute("SELECT 1")
        c.rollback()

    def explain_cost(self, sql: str) -> dict | None:
        c = self._conn()
        try:
            with c.cursor() as cur:
                cur.execute("EXPLAIN (FORMAT JSON) " + sql)
                plan = cur.fetchone()[0]
            return {"unit": "plan cost units", "value": float(plan[0]["Plan"]["Total Cost"]),
                    "rows": float(plan[0]["Plan"].get("Plan Rows", 0))}
        except psycopg.Error:
            return None
        finally:
            c.rollback()

    def quote(self, ident: str) -> str:
        return '"' + ident.replace('"', '""') + '"'

    def sql_fix_prompt(self) -> str:
        return fix_prompt_for("postgres")

    def list_tables(self) -> list[TableInfo]:
        c = self._conn()
        schema_filter = "AND c.table_schema = ANY(%s)" if self.schemas else ""
        params = [self.schemas] if self.schemas else []
        with c.cursor() as cur:
            cur.execute(
                f"""SELECT c.table_schema, c.table_name, c.column_name, c.data_type, c.is_nullable
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
        c.rollback()
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
        c = self._conn()
        try:
            with c.cursor() as cur:
                cur.execute(q)
                cols = [d.name for d in cur.description]
                return [dict(zip(cols, r)) for r in cur.fetchall()]
        finally:
            c.rollback()

    def query(self, sql: str, *, row_cap: int, timeout_s: float) -> QueryResult:
        c = self._conn()
        t0 = time.perf_counter()
        name = f"assay_{uuid.uuid4().hex[:12]}"
        try:
            with c.transaction():
                with c.cursor() as setup:
                    setup.execute(psql.SQL("SET LOCAL statement_timeout = {}").format(
                        psql.Literal(int(timeout_s * 1000))))
                with c.cursor(name=name) as cur:
                    cur.itersize = FETCH_BATCH
                    cur.execute(sql)
                    cols = [d.name for d in cur.description] if cur.description else []
                    got: list[tuple] = []
                    while len(got) <= row_cap:
                        batch = cur.fetchmany(min(FETCH_BATCH, row_cap + 1 - len(got)))
                        if not batch:
                            break
                        got.extend(batch)
                    truncated = len(got) > row_cap
                    got = got[:row_cap]
        except psycopg.errors.QueryCanceled:
            raise QueryTimeout(f"query exceeded the {timeout_s:g}s statement timeout") from None
        except psycopg.errors.ReadOnlySqlTransaction as exc:
            raise QueryError(f"refused by the read-only connection: {exc.diag.message_primary}") from None
        except psycopg.OperationalError as exc:
            self._local.conn = None
            raise TransientError(f"postgres: connection lost ({type(exc).__name__})") from None
        except psycopg.Error as exc:
            msg = (exc.diag.message_primary if getattr(exc, "diag", None) else None) or str(exc)
            raise QueryError(msg.strip().splitlines()[0][:500]) from None
        table = pa.Table.from_pydict({col: [r[i] for r in got] for i, col in enumerate(cols)}) if cols else pa.table({})
        total = None
        if truncated:
            try:
                with c.transaction():
                    with c.cursor() as cur:
                        cur.execute(f"SELECT count(*) FROM ({sql}) AS _q")
                        total = int(cur.fetchone()[0])
            except psycopg.Error:
                total = None
        return QueryResult(table=table, truncated=truncated, total_rows=total,
                           duration_ms=(time.perf_counter() - t0) * 1000, columns=cols)

    def close(self) -> None:
        with self._lock:
            for c in self._all:
                try:
                    c.close()
                except psycopg.Error:
                    pass
            self._all.clear()
