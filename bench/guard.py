"""The SQL guard and the warehouse limits (issue: warehouses).

Prints: attacks_total, attacks_executed (summed over engines; per engine below as
<engine>_attacks_executed), legit_pass_share, guard_median_us, timeout_overrun_ratio (worst of
DuckDB and PostgreSQL), pg_arrow_rows_per_s, pg_copy_rows_per_s, pg_arrow_to_copy_ratio.

Needs PostgreSQL on 127.0.0.1:5432 (ASSAY_TEST_PG_DSN to override) for the PostgreSQL figures.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import duckdb  # noqa: E402
import psycopg  # noqa: E402

from assay.errors import QueryTimeout  # noqa: E402
from assay.explore.executor import Executor  # noqa: E402
from assay.models import ColumnInfo, TableInfo, TenantFilter, WarehouseConfig  # noqa: E402
from assay.warehouse.duckdb import DuckDBWarehouse  # noqa: E402
from assay.warehouse.guard import SQLGuard  # noqa: E402
from assay.warehouse.postgres import PostgresWarehouse  # noqa: E402

DATA = ROOT / "tests" / "data" / "guard"
PG_DSN = os.environ.get("ASSAY_TEST_PG_DSN", "host=127.0.0.1 port=5432 user=postgres dbname=test")


class Counting:
    """Wraps a warehouse and counts the statements that reached the engine."""

    def __init__(self, inner):
        self.inner, self.executed = inner, []
        self.dialect, self.kind = inner.dialect, inner.kind

    def query(self, sql, **kw):
        self.executed.append(sql)
        return self.inner.query(sql, **kw)

    def sql_fix_prompt(self):
        return self.inner.sql_fix_prompt()


def catalog(schema: str) -> list[TableInfo]:
    cols = lambda *n: [ColumnInfo(name=c, type="INTEGER") for c in n]  # noqa: E731
    return [TableInfo(schema=schema, name="orders", columns=cols("id", "tenant_id", "customer_id", "amount")),
            TableInfo(schema=schema, name="customers", columns=cols("id", "tenant_id", "country")),
            TableInfo(schema=schema, name="products", columns=cols("id", "price"))]


def run_attacks(wh, schema: str, dialect_filter) -> int:
    counting = Counting(wh)
    attacks = json.loads((DATA / "refuse.json").read_text())
    for a in attacks:
        if not dialect_filter(a.get("dialect", "duckdb")):
            continue
        g = SQLGuard(wh.dialect, tables=catalog(schema), default_schema=schema,
                     tenant=TenantFilter(column="tenant_id", value=7) if a.get("tenant") else None)
        Executor(counting, g, WarehouseConfig(statement_timeout_s=5, row_cap=10), llm=None).run(a["sql"], fix=False)
    return len(counting.executed)


def main() -> None:
    figures: dict[str, float] = {}
    attacks = json.loads((DATA / "refuse.json").read_text())
    allow = json.loads((DATA / "allow.json").read_text())
    figures["attacks_total"] = len(attacks)
    times, passed = [], 0
    for case in allow:
        g = SQLGuard(case.get("dialect", "duckdb"), tables=catalog("main"), default_schema="main",
                     tenant=TenantFilter(column="tenant_id", value=7) if case.get("tenant") else None)
        t0 = time.perf_counter()
        ok = g.check(case["sql"]).allowed
        times.append((time.perf_counter() - t0) * 1e6)
        passed += ok
    for a in attacks:
        g = SQLGuard(a.get("dialect", "duckdb"), tables=catalog("main"), default_schema="main")
        t0 = time.perf_counter()
        g.check(a["sql"])
        times.append((time.perf_counter() - t0) * 1e6)
    figures["legit_pass_share"] = passed / len(allow)
    figures["guard_median_us"] = statistics.median(times)

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "g.duckdb"
        con = duckdb.connect(str(path))
        con.execute("CREATE TABLE orders AS SELECT i AS id, i % 3 AS tenant_id, i % 50 AS customer_id, i * 1.0 AS amount "
                    "FROM range(1000) t(i); CREATE TABLE customers AS SELECT i AS id, i % 3 AS tenant_id, 'DE' AS country "
                    "FROM range(50) t(i); CREATE TABLE products AS SELECT i AS id, 9.5 AS price FROM range(10) t(i)")
        con.close()
        duck = DuckDBWarehouse(str(path))
        figures["duckdb_attacks_executed"] = run_attacks(duck, "main", lambda d: d in ("duckdb", "postgres"))
        t0 = time.perf_counter()
        try:
            duck.query("SELECT count(*) FROM range(100000000000) a", row_cap=1, timeout_s=1.0)
        except QueryTimeout:
            pass
        duck_over = (time.perf_counter() - t0) / 1.0
        duck.close()

    schema = f"assay_bench_{uuid.uuid4().hex[:8]}"
    pg_over = None
    try:
        with psycopg.connect(PG_DSN, autocommit=True) as c:
            c.execute(f"CREATE SCHEMA {schema}")
            for t in catalog(schema):
                cols = ", ".join(f"{col.name} int" for col in t.columns)
                c.execute(f"CREATE TABLE {schema}.{t.name} ({cols})")
            c.execute(f"CREATE TABLE {schema}.big AS SELECT i AS id, i % 97 AS k, md5(i::text) AS s, i * 0.5 AS v "
                      f"FROM generate_series(1, 1000000) i")
        pg = PostgresWarehouse(WarehouseConfig(kind="postgres", settings={"dsn": PG_DSN}, schemas=[schema],
                                               statement_timeout_s=1))
        figures["postgres_attacks_executed"] = run_attacks(pg, schema, lambda d: d in ("duckdb", "postgres"))
        t0 = time.perf_counter()
        try:
            pg.query("SELECT count(*) FROM generate_series(1, 1000000000)", row_cap=1, timeout_s=1.0)
        except QueryTimeout:
            pass
        pg_over = (time.perf_counter() - t0) / 1.0
        t0 = time.perf_counter()
        r = pg.query(f"SELECT * FROM {schema}.big", row_cap=1_000_000, timeout_s=120)
        arrow_s = time.perf_counter() - t0
        figures["pg_arrow_rows_per_s"] = r.table.num_rows / arrow_s
        with psycopg.connect(PG_DSN) as c:
            t0 = time.perf_counter()
            n = 0
            with c.cursor().copy(f"COPY (SELECT * FROM {schema}.big) TO STDOUT") as cp:
                for chunk in cp:
                    n += bytes(chunk).count(b"\n")
            copy_s = time.perf_counter() - t0
        figures["pg_copy_rows_per_s"] = n / copy_s
        figures["pg_arrow_to_copy_ratio"] = figures["pg_arrow_rows_per_s"] / figures["pg_copy_rows_per_s"]
        pg.close()
    except psycopg.OperationalError as exc:
        print(f"# PostgreSQL not reachable ({exc.__class__.__name__}); PostgreSQL figures skipped", file=sys.stderr)
    finally:
        try:
            with psycopg.connect(PG_DSN, autocommit=True) as c:
                c.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        except psycopg.OperationalError:
            pass
    figures["attacks_executed"] = sum(v for k, v in figures.items() if k.endswith("_attacks_executed"))
    figures["timeout_overrun_ratio"] = max(x for x in (duck_over, pg_over) if x is not None)
    figures["duckdb_timeout_overrun_ratio"] = duck_over
    if pg_over is not None:
        figures["postgres_timeout_overrun_ratio"] = pg_over
    for k in ("attacks_total", "attacks_executed", "duckdb_attacks_executed", "postgres_attacks_executed",
              "legit_pass_share", "guard_median_us", "timeout_overrun_ratio", "duckdb_timeout_overrun_ratio",
              "postgres_timeout_overrun_ratio", "pg_arrow_rows_per_s", "pg_copy_rows_per_s", "pg_arrow_to_copy_ratio"):
        if k in figures:
            v = figures[k]
            print(f"{k}: {int(v)}" if float(v).is_integer() and "ratio" not in k else f"{k}: {v:.3f}")


if __name__ == "__main__":
    main()
