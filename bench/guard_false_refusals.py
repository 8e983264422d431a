"""How often the guard refuses ordinary analytical SQL (session 25's false-refusal audit).

    .venv/bin/python bench/guard_false_refusals.py [--show]

``bench/data/guard_ordinary.jsonl`` holds 479 statements a helper wrote as an analyst would (CTE chains, windows,
cohorts, funnels, date spines, percentiles, JSON, arrays, LATERAL, GROUPING SETS, PIVOT, samples) over a retail and
SaaS catalog, in seven dialects, plain, under a tenant filter with the predicate written, and with the filter
injected; ``refuse`` marks the four the audit judged rightly refused (an unbounded ``repeat`` count, a spine bounded
by the data, ``o.*`` over USING beside a PII table, DuckDB ``COLUMNS(regex)``). Every statement is checked by the
guard of its dialect over the catalog below (``email`` declared PII, ``full_name`` PII by its name, ``products``
shared). Printed: per dialect the statements, those refused, and those refused wrongly; ``--show`` lists the
wrong refusals with the guard's reason.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from assay.models import ColumnInfo, TableInfo, TenantFilter  # noqa: E402
from assay.warehouse.guard import SQLGuard  # noqa: E402

CORPUS = Path(__file__).resolve().parent / "data" / "guard_ordinary.jsonl"
COLS = {
    "customers": [("customer_id", "integer"), ("tenant_id", "integer"), ("email", "varchar"),
                  ("full_name", "varchar"), ("country", "varchar"), ("segment", "varchar"), ("signup_date", "date"),
                  ("created_at", "timestamp")],
    "orders": [("order_id", "integer"), ("tenant_id", "integer"), ("customer_id", "integer"), ("order_date", "date"),
               ("created_at", "timestamp"), ("status", "varchar"), ("total_amount", "decimal(12,2)"),
               ("channel", "varchar")],
    "order_items": [("order_item_id", "integer"), ("tenant_id", "integer"), ("order_id", "integer"),
                    ("product_id", "integer"), ("quantity", "integer"), ("unit_price", "decimal(12,2)")],
    "products": [("product_id", "integer"), ("name", "varchar"), ("category", "varchar"), ("price", "decimal(12,2)"),
                 ("cost", "decimal(12,2)")],
    "subscriptions": [("subscription_id", "integer"), ("tenant_id", "integer"), ("customer_id", "integer"),
                      ("plan", "varchar"), ("mrr", "decimal(12,2)"), ("started_at", "date"), ("ended_at", "date"),
                      ("status", "varchar")],
    "events": [("event_id", "integer"), ("tenant_id", "integer"), ("customer_id", "integer"),
               ("event_type", "varchar"), ("event_ts", "timestamp"), ("properties", "json")],
    "tickets": [("ticket_id", "integer"), ("tenant_id", "integer"), ("customer_id", "integer"),
                ("opened_at", "timestamp"), ("closed_at", "timestamp"), ("priority", "varchar"), ("csat", "integer"),
                ("channel", "varchar")],
}
# dialect -> (schema, the JSON column's type, database)
WHERE = {"duckdb": ("main", "json", None), "postgres": ("public", "jsonb", None), "mysql": ("falseref", "json", None),
         "snowflake": ("public", "variant", "analytics"), "bigquery": ("shop", "json", "proj"),
         "tsql": ("dbo", "nvarchar(max)", "shopdb"), "databricks": ("default", "string", "spark_catalog")}


def guard(dialect: str, variant: str) -> SQLGuard:
    schema, json_type, database = WHERE[dialect]
    tables = [TableInfo(schema=schema, name=t, row_count=300,
                        columns=[ColumnInfo(name=c, type=json_type if ty == "json" else ty) for c, ty in cols])
              for t, cols in COLS.items()]
    tenant = TenantFilter(column="tenant_id", value=1, shared_tables=["products"]) \
        if variant in ("tenant", "inject") else None
    return SQLGuard(dialect, tables=tables, schemas=[schema], default_schema=schema, database=database,
                    pii_columns=["email"], tenant=tenant, inject_tenant=variant == "inject")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--show", action="store_true", help="list the wrong refusals")
    args = ap.parse_args()
    total, refused, wrong = Counter(), Counter(), Counter()
    shown = []
    for line in CORPUS.read_text().splitlines():
        case = json.loads(line)
        d = case["dialect"]
        v = guard(d, case["variant"]).check(case["sql"])
        total[d] += 1
        if not v.allowed:
            refused[d] += 1
            if not case["refuse"]:
                wrong[d] += 1
                shown.append((d, case["variant"], case["sql"], v.reason))
        elif case["refuse"]:
            shown.append((d, case["variant"], case["sql"], "ALLOWED, though the audit judged it rightly refused"))
    print(f"{'dialect':<12}{'statements':>11}{'refused':>9}{'wrongly':>9}")
    for d in sorted(total):
        print(f"{d:<12}{total[d]:>11}{refused[d]:>9}{wrong[d]:>9}")
    print(f"{'all':<12}{sum(total.values()):>11}{sum(refused.values()):>9}{sum(wrong.values()):>9}")
    if args.show:
        for d, var, sql, why in shown:
            print(f"\n[{d}/{var}] {' '.join(sql.split())[:160]}\n  -> {why[:160]}")


if __name__ == "__main__":
    main()
