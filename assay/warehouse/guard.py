"""The SQL guard: every statement from every phase passes through it.

Enforcement is on the parsed tree (sqlglot, in the warehouse's dialect), never
on substrings: exactly one statement; a read-only query (SELECT / WITH / set
operation); no DDL, DML, COPY, PRAGMA, ATTACH, SET, CALL or transaction
control anywhere in the tree; no function on the dialect's deny list; only
tables of the project's schemas; and, when the project declares one, the
tenant predicate on every table that carries the tenant column, in the scope
that reads that table.

Connections are read-only as well (see the adapters): the guard is one of two
locks, not the only one.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError
from sqlglot.optimizer.scope import Scope, traverse_scope

from ..errors import GuardRefusal

logging.getLogger("sqlglot").setLevel(logging.ERROR)  # "falling back to Command" is our refusal to make
from ..models import TableInfo, TenantFilter

# Statement kinds that may appear nowhere in the tree.
_FORBIDDEN_NODES: tuple[type[exp.Expression], ...] = tuple(
    t
    for t in (
        getattr(exp, name, None)
        for name in (
            "Insert", "Update", "Delete", "Merge", "Create", "Drop", "Alter", "AlterColumn",
            "TruncateTable", "Command", "Set", "SetItem", "Pragma", "Transaction", "Commit",
            "Rollback", "Copy", "Attach", "Detach", "Use", "LoadData", "Into", "Lock",
            "Grant", "Revoke", "Install", "Analyze", "Describe", "Summarize", "Export",
            "Refresh", "Cache", "Uncache", "Kill", "Show",
        )
    )
    if isinstance(t, type)
)

# Functions with side effects, file or network access, or sleeps.
_DENY_COMMON = {
    "sleep", "pg_sleep", "pg_sleep_for", "pg_sleep_until", "benchmark",
    "load_file", "outfile", "dumpfile",
}
DENY_FUNCTIONS: dict[str, set[str]] = {
    "duckdb": _DENY_COMMON | {
        "read_csv", "read_csv_auto", "read_parquet", "parquet_scan", "read_json",
        "read_json_auto", "read_json_objects", "read_ndjson", "read_ndjson_auto",
        "read_ndjson_objects", "read_text", "read_blob", "read_xlsx", "glob", "csv_scan",
        "sniff_csv", "parquet_metadata", "parquet_schema", "parquet_file_metadata",
        "parquet_kv_metadata", "iceberg_scan", "delta_scan", "sqlite_scan", "postgres_scan",
        "mysql_scan", "query", "query_table", "getenv", "current_setting",
        "duckdb_secrets", "duckdb_settings", "duckdb_extensions", "install", "load",
        "readcsv", "readparquet", "readjson", "httpfs", "http_get", "http_post",
        "st_read", "excel_scan", "read_xml", "which_secret", "nextval", "setval",
        "enable_logging", "checkpoint", "force_checkpoint",
    },
    "postgres": _DENY_COMMON | {
        "pg_read_file", "pg_read_binary_file", "pg_ls_dir", "pg_stat_file", "pg_ls_logdir",
        "pg_ls_waldir", "pg_ls_tmpdir", "pg_ls_archive_statusdir", "lo_import", "lo_export",
        "lo_open", "lo_create", "lo_unlink", "lo_put", "lo_from_bytea", "lo_get", "lowrite",
        "loread", "dblink", "dblink_exec", "dblink_connect", "dblink_connect_u",
        "dblink_send_query", "dblink_open", "dblink_fetch", "set_config",
        "pg_terminate_backend", "pg_cancel_backend", "pg_reload_conf", "pg_rotate_logfile",
        "pg_logfile_rotate", "pg_promote", "pg_create_restore_point", "pg_switch_wal",
        "pg_advisory_lock", "pg_advisory_xact_lock", "pg_try_advisory_lock",
        "pg_advisory_lock_shared", "pg_notify", "nextval", "setval", "txid_current",
        "pg_current_xact_id", "query_to_xml", "query_to_xml_and_xmlschema",
        "table_to_xml", "cursor_to_xml", "database_to_xml", "schema_to_xml",
        "pg_file_write", "pg_file_rename", "pg_file_unlink", "pg_logdir_ls",
        "pg_export_snapshot", "pg_import_system_collations", "current_setting",
        "pg_stat_reset", "pg_stat_statements_reset", "pg_drop_replication_slot",
        "pg_create_logical_replication_slot", "pg_create_physical_replication_slot",
        "pg_replication_origin_create", "copy", "xpath_table",
    },
    "snowflake": _DENY_COMMON | {
        "system$wait", "system$cancel_query", "system$cancel_all_queries",
        "system$abort_session", "system$abort_transaction", "system$set_return_value",
        "system$clustering_information", "system$stream_get_table_timestamp",
        "external_function", "get_presigned_url", "build_scoped_file_url",
        "build_stage_file_url", "get_stage_location", "infer_schema", "nextval",
        "external_table_files", "stage_storage_usage_history", "query_history",
        "validate", "result_scan",
    },
}

# One list for every dialect: a statement written for one engine can be sent to another (and
# engines grow each other's functions through extensions), so a dangerous name is refused everywhere.
DENY_ALL: set[str] = set().union(*DENY_FUNCTIONS.values())

# Schemas no query may read even if the project allows "everything".
SYSTEM_SCHEMAS = {
    "information_schema", "pg_catalog", "pg_toast", "sys", "system", "temp", "main.pg_catalog",
    "account_usage", "snowflake",
}


@dataclass
class GuardVerdict:
    allowed: bool
    reason: str = ""
    sql: str = ""  # the statement to run (rewritten when the tenant filter was injected)
    tables: list[str] = field(default_factory=list)
    # positions (0-based) of the result's output columns whose values derive from a PII column
    # (by lineage, not by name); the executor masks them before anyone sees the result
    masked_outputs: list[int] = field(default_factory=list)
    # the statement reads a PII column anywhere (then error text from the engine is scrubbed)
    touches_pii: bool = False

    def as_dict(self) -> dict:
        return {"allowed": self.allowed, "reason": self.reason}


def _func_names(node: exp.Func) -> set[str]:
    names = set()
    if isinstance(node, exp.Anonymous):
        names.add(str(node.this).lower())
    else:
        try:
            names.add(node.sql_name().lower())
        except Exception:  # pragma: no cover - defensive, sqlglot internals
            pass
        names.add(type(node).__name__.lower())
    return names


class SQLGuard:
    """Check (and optionally rewrite) one statement for a project's warehouse.

    ``tables`` is the catalog the project may read; references are resolved
    case-insensitively by ``schema.table`` or, when unambiguous, bare name.
    ``default_schema`` is what a bare name means to the engine.
    """

    def __init__(
        self,
        dialect: str,
        *,
        tables: list[TableInfo] | None = None,
        schemas: list[str] | None = None,
        default_schema: str | None = None,
        tenant: TenantFilter | None = None,
        inject_tenant: bool = False,
        database: str | None = None,
    ):
        self.dialect = dialect
        self.database = (database or "").lower() or None
        self.deny = DENY_ALL
        self.schemas = {s.lower() for s in (schemas or [])}
        self.default_schema = (default_schema or "").lower() or None
        self.tenant = tenant
        self.inject_tenant = inject_tenant
        self._by_fqn: dict[str, TableInfo] = {}
        self._by_name: dict[str, list[TableInfo]] = {}
        for t in tables or []:
            self._by_fqn[t.fqn.lower()] = t
            self._by_name.setdefault(t.name.lower(), []).append(t)
        self.known_tables = tables is not None

    # ------------------------------------------------------------------ api

    def check(self, sql: str) -> GuardVerdict:
        try:
            return self._check(sql)
        except GuardRefusal as r:
            return GuardVerdict(False, r.reason)

    def enforce(self, sql: str) -> str:
        """Return the statement to run, or raise GuardRefusal."""
        return self.vet(sql).sql

    def vet(self, sql: str) -> GuardVerdict:
        """The allowed verdict (statement to run, outputs to mask), or raise GuardRefusal."""
        v = self.check(sql)
        if not v.allowed:
            raise GuardRefusal(v.reason)
        return v

    # ------------------------------------------------------------------ internals

    def _check(self, sql: str) -> GuardVerdict:
        if not isinstance(sql, str) or not sql.strip():
            raise GuardRefusal("empty statement")
        try:
            statements = [s for s in sqlglot.parse(sql, read=self.dialect) if s is not None]
        except (ParseError, TokenError) as exc:
            msg = str(exc).splitlines()[0][:200]
            raise GuardRefusal(f"could not parse the statement as {self.dialect} SQL: {msg}") from None
        except Exception as exc:  # sqlglot raises a few other types on odd input
            raise GuardRefusal(f"could not parse the statement: {type(exc).__name__}") from None
        if len(statements) != 1:
            raise GuardRefusal(
                f"exactly one statement is allowed, got {len(statements)}"
                if statements
                else "empty statement"
            )
        root = statements[0]
        inner = root
        while isinstance(inner, (exp.Subquery, exp.Paren)):
            inner = inner.this
        if not isinstance(inner, (exp.Select, exp.SetOperation)):
            kind = type(inner).__name__.upper()
            raise GuardRefusal(f"only SELECT, WITH and set operations are allowed, not {kind}")
        for node in root.walk():
            if isinstance(node, _FORBIDDEN_NODES):
                raise GuardRefusal(f"{type(node).__name__.upper()} is not allowed in a read-only query")
            if isinstance(node, exp.Func):
                names = _func_names(node)
                bad = names & self.deny
                if not bad and any(n.startswith("system$") for n in names):
                    bad = {next(n for n in names if n.startswith("system$"))}  # Snowflake's system functions
                if bad:
                    raise GuardRefusal(f"function {sorted(bad)[0]}() is not allowed")
            if isinstance(node, exp.Table) and not isinstance(node.this, exp.Identifier):
                if not isinstance(node.this, exp.Dot):
                    raise GuardRefusal("table functions and file readers are not allowed in FROM")
        referenced = self._check_tables(root)
        out = root
        if self.tenant is not None:
            out = self._check_tenant(root)
        return GuardVerdict(True, "", out.sql(dialect=self.dialect), referenced)

    def _cte_names(self, root: exp.Expression) -> set[str]:
        return {c.alias_or_name.lower() for c in root.find_all(exp.CTE)}

    def resolve(self, table: exp.Table) -> TableInfo | None:
        name = table.name.lower()
        db = (table.db or "").lower()
        if db:
            return self._by_fqn.get(f"{db}.{name}")
        cands = self._by_name.get(name, [])
        if self.default_schema:
            for c in cands:
                if c.schema_name.lower() == self.default_schema:
                    return c
        return cands[0] if len(cands) == 1 else None

    def _check_tables(self, root: exp.Expression) -> list[str]:
        ctes = self._cte_names(root)
        seen: list[str] = []
        for t in root.find_all(exp.Table):
            name = t.name.lower()
            db = (t.db or "").lower()
            if not db and name in ctes:
                continue
            if t.catalog and t.catalog.lower() != self.database:
                # another database (an ATTACHed DuckDB file, another Snowflake database, ...)
                raise GuardRefusal(f"table {t.sql(dialect=self.dialect)} is outside the project's database")
            schema = db or self.default_schema or ""
            if schema in SYSTEM_SCHEMAS or name.startswith(("pg_", "duckdb_", "sqlite_")):
                raise GuardRefusal(f"system table {t.sql(dialect=self.dialect)} is not allowed")
            if self.schemas and schema and schema not in self.schemas:
                raise GuardRefusal(
                    f"table {t.sql(dialect=self.dialect)} is outside the project's schemas "
                    f"({', '.join(sorted(self.schemas))})"
                )
            if self.known_tables:
                info = self.resolve(t)
                if info is None:
                    raise GuardRefusal(f"unknown table {t.sql(dialect=self.dialect)}")
                seen.append(info.fqn)
            else:
                seen.append(f"{schema}.{name}" if schema else name)
        return sorted(set(seen))

    # ------------------------------------------------------------------ tenant filter

    def _has_tenant_column(self, t: exp.Table) -> bool:
        info = self.resolve(t)
        if info is None:
            return False
        col = self.tenant.column.lower()
        return any(c.name.lower() == col for c in info.columns)

    def _tenant_literal(self) -> exp.Expression:
        v = self.tenant.value
        return exp.Literal.number(v) if isinstance(v, int) else exp.Literal.string(str(v))

    def _is_tenant_pred(self, cond: exp.Expression, alias: str, sole: bool) -> bool:
        if not isinstance(cond, exp.EQ):
            return False
        left, right = cond.this, cond.expression
        if isinstance(right, exp.Column) and not isinstance(left, exp.Column):
            left, right = right, left
        if not isinstance(left, exp.Column) or not isinstance(right, exp.Literal):
            return False
        if left.name.lower() != self.tenant.column.lower():
            return False
        qual = (left.table or "").lower()
        if qual and qual != alias.lower():
            return False
        if not qual and not sole:
            return False
        want = self.tenant.value
        got = right.this
        if isinstance(want, int):
            return not right.is_string and str(got) == str(want)
        return right.is_string and got == str(want)

    @staticmethod
    def _conjuncts(cond: exp.Expression | None) -> list[exp.Expression]:
        if cond is None:
            return []
        while isinstance(cond, exp.Paren):
            cond = cond.this
        if isinstance(cond, exp.And):
            return SQLGuard._conjuncts(cond.this) + SQLGuard._conjuncts(cond.expression)
        return [cond]

    def _check_tenant(self, root: exp.Expression) -> exp.Expression:
        root = root.copy()
        try:
            scopes = traverse_scope(root)
        except Exception as exc:
            raise GuardRefusal(f"could not analyse the query's scopes for the tenant filter: {exc}") from None
        for scope in scopes:
            self._check_scope(scope)
        return root

    def _check_scope(self, scope: Scope) -> None:
        select = scope.expression
        if not isinstance(select, exp.Select):
            return
        table_sources = {
            alias: src for alias, src in scope.sources.items() if isinstance(src, exp.Table)
        }
        sole = len(scope.sources) == 1
        where = select.args.get("where")
        conds = self._conjuncts(where.this if where else None)
        # ON predicates: an inner join's ON filters every side; a LEFT join's ON
        # filters only the joined table; RIGHT/FULL ON filters nothing safely.
        own_on: dict[str, list[exp.Expression]] = {}
        for join in select.args.get("joins") or []:
            side = (join.side or "").upper()
            kind = (join.kind or "").upper()
            on = self._conjuncts(join.args.get("on"))
            if not side and kind in ("", "INNER"):
                conds = conds + on
            elif side == "LEFT" and isinstance(join.this, exp.Table):
                own_on.setdefault(join.this.alias_or_name, []).extend(on)
        for alias, table in table_sources.items():
            if not self._has_tenant_column(table):
                continue
            mine = conds + own_on.get(alias, [])
            if any(self._is_tenant_pred(c, alias, sole) for c in mine):
                continue
            if self.inject_tenant:
                pred = exp.EQ(
                    this=exp.column(self.tenant.column, table=alias),
                    expression=self._tenant_literal(),
                )
                select.where(pred, append=True, copy=False)
                continue
            raise GuardRefusal(
                f"table {table.sql(dialect=self.dialect)} must be filtered by "
                f"{alias}.{self.tenant.column} = {self.tenant.value!r} in the same SELECT "
                "(an AND-ed predicate in WHERE or an inner JOIN's ON; OR does not count)"
            )
