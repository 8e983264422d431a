"""Warehouse adapters, registered by short name."""

from __future__ import annotations

from ..errors import ConfigError
from ..models import TableInfo, WarehouseConfig
from .base import QueryResult, Warehouse
from .guard import SQLGuard

KINDS = ("duckdb", "postgres", "snowflake", "mysql", "redshift", "bigquery", "databricks", "mssql")

# kind -> (module, class) of the adapters that take the whole WarehouseConfig
_ADAPTERS = {
    "postgres": ("postgres", "PostgresWarehouse"),
    "snowflake": ("snowflake", "SnowflakeWarehouse"),
    "mysql": ("mysql", "MySQLWarehouse"),
    "redshift": ("redshift", "RedshiftWarehouse"),
    "bigquery": ("bigquery", "BigQueryWarehouse"),
    "databricks": ("databricks", "DatabricksWarehouse"),
    "mssql": ("mssql", "MSSQLWarehouse"),
}


def open_warehouse(cfg: WarehouseConfig) -> Warehouse:
    """The adapter of ``cfg.kind``; every statement it runs takes a query slot (``slots.slot``)."""
    from .slots import SlottedWarehouse

    return SlottedWarehouse(_open(cfg), cfg)


def _open(cfg: WarehouseConfig) -> Warehouse:
    if cfg.kind == "duckdb":
        from .duckdb import DuckDBWarehouse

        path = cfg.settings.get("path")
        if not path:
            raise ConfigError("warehouse.settings.path: required for duckdb")
        return DuckDBWarehouse(path, schemas=cfg.schemas, timeout_s=cfg.statement_timeout_s,
                               memory_limit_mb=cfg.memory_limit_mb, threads=cfg.settings.get("threads"))
    if cfg.kind in _ADAPTERS:
        import importlib

        module, cls = _ADAPTERS[cfg.kind]
        return getattr(importlib.import_module(f"{__name__}.{module}"), cls)(cfg)
    raise ConfigError(f"warehouse.kind: unknown warehouse {cfg.kind!r} (valid: {', '.join(KINDS)})")


def build_guard(wh: Warehouse, cfg: WarehouseConfig, tables: list[TableInfo] | None) -> SQLGuard:
    return SQLGuard(
        wh.dialect,
        tables=tables,
        schemas=cfg.schemas or None,
        default_schema=getattr(wh, "default_schema", None),
        tenant=cfg.tenant_filter,
        inject_tenant=cfg.inject_tenant_filter,
        database=getattr(wh, "database", None),
        pii_columns=cfg.pii_columns,
    )


def sampler_for(wh: Warehouse, cfg: WarehouseConfig, tables: list[TableInfo] | None):
    """What a table lookup's sample rows come from. Under a tenant filter, the adapter's own sample (a plain
    ``SELECT * ... LIMIT 3``) showed other tenants' rows to the model: the sample is then a statement the run's
    guard writes the tenant predicate into (with its PII lineage masked), and a table it refuses has no sample."""
    if cfg.tenant_filter is None:
        return wh.sample_rows
    from sqlglot import exp

    from ..pii import MASK

    guard = build_guard(wh, cfg.model_copy(update={"inject_tenant_filter": True}), tables)

    def sample(t: TableInfo, n: int = 3) -> list[dict]:
        sql = exp.select("*").from_(_table_node(wh, t)).limit(n).sql(dialect=wh.dialect)
        v = guard.check(sql)
        if not v.allowed:
            return []
        res = wh.query(v.sql, row_cap=n, timeout_s=cfg.statement_timeout_s)
        cols = res.table.column_names
        masked = {cols[i] for i in v.masked_outputs if i < len(cols)}
        return [{k: (MASK if k in masked and val is not None else val) for k, val in r.items()}
                for r in res.table.to_pylist()]

    return sample


def _table_node(wh: Warehouse, t: TableInfo):
    """The table as a FROM of the product's own SQL, quoted as the catalog spells it (a table named order or user
    is no syntax error); the Snowflake adapter lists in lower case the names it reads in upper case."""
    from sqlglot import exp

    def name(part: str) -> exp.Identifier:
        return exp.to_identifier(part.upper() if wh.dialect == "snowflake" else part, quoted=True)

    return exp.Table(this=name(t.name), db=name(t.schema_name) if t.schema_name else None)


def holds_column(t: TableInfo, column: str) -> bool:
    """The table has the column (names compared case-insensitively, as the tenant column is)."""
    return any(c.name.lower() == column.lower() for c in t.columns)


def tenant_row_counts(wh: Warehouse, cfg: WarehouseConfig, tables: list[TableInfo]) -> list[TableInfo]:
    """The tables with the row counts the run's tenant has. The engines' own counts (statistics, metadata) are
    totals over every tenant, and the model saw them in the catalog, the table lookups and ``information_schema``:
    each tenant learnt how much data the others hold, table by table (left since session 25). Under a tenant filter
    each table is counted with the tenant predicate the guard writes in; a shared table keeps its total; a table
    the guard refuses to read, or whose count fails on the engine, counts 0 (nothing the run may read of it).

    A tenant value the tenant column cannot hold (``'one'`` for a number column), or one no row of any table has,
    is a ConfigError: the run refused every read, or found nothing, and ended "Completed, no insights" without
    saying why (a new user, session 27)."""
    if cfg.tenant_filter is None:
        return tables
    import logging

    from sqlglot import exp

    from ..errors import QueryTimeout

    tf = cfg.tenant_filter
    guard = build_guard(wh, cfg.model_copy(update={"inject_tenant_filter": True}), tables)
    out, holders, counted, refused_value = [], 0, 0, []
    for t in tables:
        n = 0
        v = guard.check(exp.select(exp.Count(this=exp.Star()).as_("n")).from_(_table_node(wh, t))
                        .sql(dialect=wh.dialect))
        mine = holds_column(t, tf.column)
        if not v.allowed and mine and "tenant_filter" in v.reason:
            raise ConfigError(f"warehouse.tenant_filter.value: {v.reason}")
        holders += mine
        if v.allowed:
            try:
                res = wh.query(v.sql, row_cap=1, timeout_s=cfg.statement_timeout_s)
                n = int(res.table.column(0)[0].as_py() or 0)
                counted += mine
            except Exception as exc:  # a timeout on a huge table: no count is better than another tenant's
                why = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
                if mine and not isinstance(exc, QueryTimeout):
                    refused_value.append((t.fqn, why))
                logging.getLogger("assay").warning("%s: the tenant's row count failed (%s); shown as 0", t.fqn, why)
        out.append(t.model_copy(update={"row_count": n}))

    if holders and len(refused_value) == holders:
        # the engine refused the value in every table that has the column (a uuid or date column given 'one': the
        # guard judges number columns only; the review of session 27)
        fqn, why = refused_value[0]
        raise ConfigError(f"warehouse.tenant_filter: counting the rows of {tf.column} = {tf.value!r} failed in every "
                          f"table with that column ({fqn}: {why})")

    # (tables whose engine counts no row at all hold no data yet: nothing to say about the value)
    if holders and counted == holders and any(t.row_count for t in tables if holds_column(t, tf.column)) and \
            not any(t.row_count for t in out if holds_column(t, tf.column)):
        raise ConfigError(f"warehouse.tenant_filter.value: no row of the {holders} table(s) with a "
                          f"{tf.column} column has {tf.column} = {tf.value!r}: the run would have nothing to read")
    return out


__all__ = ["KINDS", "QueryResult", "SQLGuard", "Warehouse", "build_guard", "holds_column", "open_warehouse",
           "sampler_for", "tenant_row_counts"]
