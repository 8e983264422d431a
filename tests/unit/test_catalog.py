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


def test_duckdb_comments_reach_the_catalog_the_index_text_and_lookups(tmp_path):
    """COMMENT ON in the warehouse: read by discovery, shown in the catalog (cut), embedded early in
    the table's text and its name text, and returned by lookup_schema and search_tables."""
    import duckdb

    from assay.schema.discovery import name_text, table_hash, table_text
    from assay.schema.provider import SchemaProvider
    from assay.warehouse.duckdb import DuckDBWarehouse

    db = tmp_path / "w.duckdb"
    con = duckdb.connect(str(db))
    con.execute("CREATE TABLE sls_quote (id INT, cust_no VARCHAR, amt_lcy DOUBLE)")
    con.execute("CREATE TABLE sls_disc (id INT)")
    con.execute("CREATE VIEW open_quotes AS SELECT * FROM sls_quote")
    long = "Quotations sent to customers and prospects, one row per offer; " * 4
    con.execute(f"COMMENT ON TABLE sls_quote IS '{long}'")
    con.execute("COMMENT ON COLUMN sls_quote.amt_lcy IS 'Offer total in local currency'")
    con.execute("COMMENT ON VIEW open_quotes IS 'Quotes not yet accepted'")
    con.close()
    wh = DuckDBWarehouse(str(db))
    tables = {x.name: x for x in wh.list_tables()}
    q = tables["sls_quote"]
    assert q.description.startswith("Quotations sent to customers") and len(q.description) <= 300
    assert tables["open_quotes"].description == "Quotes not yet accepted"
    assert tables["sls_disc"].description == ""
    assert {c.name: c.description for c in q.columns}["amt_lcy"] == "Offer total in local currency"

    line = next(x for x in render_catalog(list(tables.values())).text.splitlines() if ".sls_quote " in x)
    assert '"Quotations sent to customers' in line and "…" in line and len(line) < 200
    text = table_text(q)
    assert text.index("Quotations sent") < text.index("columns:")  # before the columns, which may be cut
    assert "amt_lcy double (Offer total in local currency)" in text
    assert "Quotations sent to customers" in name_text(q)
    assert table_hash(q) != table_hash(q.model_copy(update={"description": ""}))

    p = SchemaProvider(list(tables.values()), sampler=wh.sample_rows,
                       searcher=lambda text, k: [(q.fqn, 0.9, [])])
    detail = p.lookup(["sls_quote"]).tables[0]
    assert detail["description"] == q.description
    assert [c.get("description", "") for c in detail["columns"]] == ["", "", "Offer total in local currency"]
    assert "description" not in p.lookup(["sls_disc"]).tables[0]
    assert p.search("offers", 5)[0]["description"] == q.description
    wh.close()


def test_project_descriptions_name_tables_by_fqn_or_unambiguous_bare_name():
    from assay.schema.discovery import apply_descriptions

    a = t("quote", 10)
    b = TableInfo(schema="erp", name="disc", row_count=5, description="Discount rules.")
    c1, c2 = TableInfo(schema="x", name="dup"), TableInfo(schema="y", name="dup")
    tables = [a, b, c1, c2]
    out, unknown = apply_descriptions(tables, {"ERP.Quote": "  offers to\ncustomers ", "disc": "Per customer group.",
                                               "dup": "ambiguous", "y.dup": "the second", "nope": "x", "erp.gone": "y"})
    assert [x.description for x in out] == ["offers to customers", "Discount rules. Per customer group.", "",
                                            "the second"]
    assert sorted(unknown) == ["dup", "erp.gone", "nope"]
    assert a.description == "" and b.description == "Discount rules."  # the input is not changed
    assert apply_descriptions(tables, {}) == (tables, [])


def test_catalog_hints_are_real_column_names():
    """A real model read the hint ``dep`` (a word cut from ``dep_delay``) as a column and queried it."""
    flights = TableInfo(schema="air", name="flights", row_count=10, columns=[
        ColumnInfo(name=c, type="INT") for c in ("flight_id", "dep_delay", "arr_delay", "carrier", "origin", "dest")])
    line = render_catalog([flights], budget_tokens=1000).text
    hints = [h.strip() for h in line.split("): ", 1)[1].split(" joins:")[0].split(",")]
    assert "dep_delay" in hints and "arr_delay" in hints
    assert set(hints) <= {c.name for c in flights.columns} and "dep" not in hints
