"""Level-0 catalog: one line per table, budget, archive tables dropped first."""

from __future__ import annotations

from assay.models import ColumnInfo, TableInfo
from assay.schema.catalog import is_archive_like, join_hints, render_catalog


def t(name, rows, cols=("id",)):
    return TableInfo(schema="erp", name=name, row_count=rows, columns=[ColumnInfo(name=c, type="INT") for c in cols])


def test_archive_names():
    for n in ("orders_bkp", "orders_tmp", "stg_orders", "orders_20240101", "orders_2023_12", "audit_log", "x_old"):
        assert is_archive_like(n), n
    for n in ("orders", "order_items", "logins", "customers"):
        assert not is_archive_like(n), n


def test_join_hints_by_name():
    tables = [t("customers", 10, ("customer_id", "name")), t("orders", 100, ("order_id", "customer_id"))]
    assert join_hints(tables)["erp.orders"] == ["customer_id->erp.customers"]


def test_fits_everything_under_budget():
    c = render_catalog([t("orders", 5, ("id", "amount")), t("customers", 3)], budget_tokens=1000)
    assert c.tables_left_out == 0 and c.text.count("\n") == 1 and "erp.orders (2 cols, ~5 rows)" in c.text


def test_over_budget_drops_archives_then_smallest():
    tables = [t(f"big_{i}", 1_000_000 + i) for i in range(30)] + [t(f"orders_bkp{i}", 10**9) for i in range(10)]
    tables += [t(f"tiny_{i}", i) for i in range(30)]
    c = render_catalog(tables, budget_tokens=600)
    assert c.tokens <= c.budget_tokens
    assert c.tables_left_out > 0 and f"{c.tables_left_out} of {len(tables)} tables are not listed" in c.text
    assert "orders_bkp" not in c.text  # archives go first, even when huge
    assert "big_29" in c.text and "tiny_0 " not in c.text
