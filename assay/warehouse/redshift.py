"""Amazon Redshift adapter (psycopg 3, over Redshift's PostgreSQL wire protocol).

Why psycopg and not ``redshift-connector``: the connector reads a whole result into memory on
``execute`` (it has no server-side cursor), so a row cap would still fetch the whole result;
with psycopg this adapter declares a cursor and FETCHes at most cap + 1 rows, shares the
PostgreSQL adapter's value loaders, timeouts and error handling, and its connection, cursor,
timeout and discovery code runs in the tests against a real PostgreSQL server. (IAM
authentication is the connector's one advantage: here, give a database user and its password, or
a temporary password from ``aws redshift get-cluster-credentials`` through ``password_env``.)

What differs from PostgreSQL: Redshift takes no session settings in the startup packet, so the
session is SET after connecting (``statement_timeout``, ``search_path``); every transaction is
``BEGIN READ ONLY``; there are no savepoints, so the count behind a truncated result runs after
the cursor is read, and a failed count only loses the count; the cursor is declared with plain
``DECLARE ... CURSOR FOR`` (Redshift materialises a cursor's result on the leader node: the
statement timeout bounds that); ``EXPLAIN`` has no JSON form, so its cost is read from the text
plan; row counts come from ``svv_table_info`` when the user may read it (the catalog's
``reltuples`` otherwise). The SQL dialect is sqlglot's ``redshift``.
"""

from __future__ import annotations

import re
import time
import uuid

import psycopg
from psycopg import sql as psql

from ..errors import QueryError, QueryTimeout
from .base import QueryResult, check_result_bytes, fix_prompt_for, rows_bytes
from .postgres import FETCH_BATCH, PostgresWarehouse, _message
from .redact import scrub_error
from .values import table_from_rows

_COST = re.compile(r"cost=[\d.]+\.\.([\d.]+)\s+rows=(\d+)")


class RedshiftWarehouse(PostgresWarehouse):
    kind = "redshift"
    dialect = "redshift"
    startup_options = False

    def _apply_limits(self, c: psycopg.Connection) -> None:
        accepted = {}
        settings = [("statement_timeout", psql.SQL("SET statement_timeout TO {}").format(
            psql.Literal(int(self.timeout_s * 1000))))]
        if self.schemas:
            settings.append(("search_path", psql.SQL("SET search_path TO {}").format(
                psql.SQL(", ").join(psql.Identifier(x) for x in self.schemas))))
        for name, stmt in settings:
            try:
                c.execute(stmt)
                c.commit()
                accepted[name] = "set"
            except psycopg.Error:
                c.rollback()
        self.session_limits = accepted

    def role_problem(self) -> str | None:
        """Redshift has no pg_roles or server file roles: a superuser is what its pg_user says."""
        with self._txn() as c, c.cursor() as cur:
            cur.execute("SELECT usename, usesuper FROM pg_user WHERE usename = current_user")
            row = cur.fetchone()
        if row and row[1]:
            return (f"the user {row[0]} is a superuser: the guard would be the only lock; connect as a read-only "
                    "user (README, Security)")
        return None

    def sql_fix_prompt(self) -> str:
        return fix_prompt_for("redshift")

    def explain_cost(self, sql: str) -> dict | None:
        try:
            with self._txn() as c, c.cursor() as cur:
                cur.execute("EXPLAIN " + sql)
                first = cur.fetchone()[0]
            m = _COST.search(first or "")
            if not m:
                return None
            return {"unit": "plan cost units", "value": float(m.group(1)), "rows": float(m.group(2))}
        except (psycopg.Error, LookupError, TypeError, ValueError):
            return None
        except Exception:
            return None

    def list_tables(self):
        tables = super().list_tables()
        counts = self._svv_counts()
        for t in tables:
            if (t.schema_name, t.name) in counts:
                t.row_count = counts[(t.schema_name, t.name)]
        return tables

    def _svv_counts(self) -> dict[tuple[str, str], int]:
        """Redshift's own row estimate per table (svv_table_info); {} where it cannot be read."""
        try:
            with self._txn() as c, c.cursor() as cur:
                cur.execute('SELECT "schema", "table", tbl_rows FROM svv_table_info')
                return {(s, t): int(n or 0) for s, t, n in cur.fetchall()}
        except psycopg.Error:
            return {}

    def query(self, sql: str, *, row_cap: int, timeout_s: float) -> QueryResult:
        t0 = time.perf_counter()
        deadline = t0 + timeout_s
        name = psql.Identifier(f"assay_{uuid.uuid4().hex[:12]}")
        total = None
        try:
            with self._txn() as c, c.cursor() as cur:
                self._budget(cur, deadline)
                cur.execute(psql.SQL("DECLARE {} CURSOR FOR ").format(name) + psql.SQL(sql))
                cols: list[str] = []
                got: list[tuple] = []
                size = 0
                while len(got) <= row_cap:
                    self._budget(cur, deadline)
                    want = min(FETCH_BATCH, row_cap + 1 - len(got))
                    cur.execute(psql.SQL("FETCH FORWARD {} FROM {}").format(psql.Literal(want), name))
                    cols = [d.name for d in cur.description] if cur.description else cols
                    batch = cur.fetchall()
                    got.extend(batch)
                    size += rows_bytes(batch)
                    check_result_bytes(size)
                    if len(batch) < want:
                        break
                truncated = len(got) > row_cap
                got = got[:row_cap]
                cur.execute(psql.SQL("CLOSE {}").format(name))
                if truncated:
                    total = self._count_after(cur, sql, deadline)
        except psycopg.errors.QueryCanceled:
            raise QueryTimeout(f"query exceeded the {timeout_s:g}s statement timeout") from None
        except psycopg.errors.ReadOnlySqlTransaction as exc:
            raise QueryError(f"refused by the read-only connection: {_message(exc)}") from None
        except psycopg.OperationalError as exc:
            self._local.conn = None
            raise QueryError(f"the connection to the warehouse was lost during the query ({_message(exc)}); "
                             "the next query reconnects") from None
        except psycopg.Error as exc:
            raise QueryError(_message(exc)) from None
        except QueryError:  # the result grew past its byte budget
            raise
        except Exception as exc:
            raise QueryError(f"the result could not be read: {type(exc).__name__}: {scrub_error(str(exc))[:300]}"
                             ) from None
        return QueryResult(table=table_from_rows(cols, got), truncated=truncated, total_rows=total,
                           duration_ms=(time.perf_counter() - t0) * 1000, columns=cols)

    def _count_after(self, cur: psycopg.Cursor, sql: str, deadline: float) -> int | None:
        """The true count of a truncated result with what is left of the timeout (no savepoint:
        a failed count aborts the transaction, which the rows already read do not need)."""
        try:
            self._budget(cur, deadline)
            cur.execute(psql.SQL("SELECT count(*) FROM (") + psql.SQL(sql) + psql.SQL("\n) AS _q"))
            return int(cur.fetchone()[0])
        except psycopg.OperationalError:
            raise
        except psycopg.Error:
            return None
