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


__all__ = ["KINDS", "QueryResult", "SQLGuard", "Warehouse", "build_guard", "open_warehouse"]
