"""`assay sql check --project P` answers with exactly the guard the project's runs use."""

from __future__ import annotations

import json

import duckdb
from typer.testing import CliRunner

from assay.cli import app

runner = CliRunner()


def check(tmp_path, stmts, *args):
    f = tmp_path / "q.json"
    f.write_text(json.dumps(stmts))
    r = runner.invoke(app, ["sql", "check", str(f), *args], catch_exceptions=False)
    return r


def test_project_guard_has_the_catalog_tenant_and_pii(tmp_path):
    db = tmp_path / "shop.duckdb"
    con = duckdb.connect(str(db))
    con.execute("CREATE TABLE customers (id INT, tenant_id INT, email VARCHAR, country VARCHAR)")
    con.execute("CREATE TABLE products (id INT, price DOUBLE)")
    con.execute("CREATE TABLE audit (id INT, note VARCHAR)")
    con.close()
    f = tmp_path / "p.yaml"
    f.write_text(
        "id: shop\npack: ecommerce\nwarehouse:\n  kind: duckdb\n"
        f"  settings: {{path: {db}}}\n"
        "  tenant_filter: {column: tenant_id, value: 7, shared_tables: [products]}\n"
        "  pii_columns: [country]\n"
    )
    assert runner.invoke(app, ["project", "apply", "-f", str(f)]).exit_code == 0
    stmts = [
        "SELECT lower(email), id FROM customers WHERE tenant_id = 7",
        "SELECT id FROM customers",  # no tenant predicate
        "SELECT * FROM products",  # shared by declaration
        "SELECT * FROM audit",  # no tenant column, not shared
        "SELECT * FROM secrets",  # not in the catalog
        "SELECT country FROM customers WHERE tenant_id = 7",  # declared PII
        "SELECT * FROM read_csv('/etc/passwd')",
    ]
    r = check(tmp_path, stmts, "--project", "shop")
    assert r.exit_code == 1, r.output  # some are refused
    v = json.loads(r.stdout)
    assert [x["allowed"] for x in v] == [True, False, True, False, False, True, False]
    assert v[0]["masked_outputs"] == [0] and v[0]["touches_pii"]
    assert v[5]["masked_outputs"] == [0]
    assert "tenant_id = 7" in v[1]["reason"]
    assert "shared_tables" in v[3]["reason"]
    assert "not in the project's catalog" in v[4]["reason"]
    # the catalog-less guard answers differently: it cannot know audit lacks the column
    r = check(tmp_path, stmts[:5], "--tenant", "tenant_id=7")
    assert [x["allowed"] for x in json.loads(r.stdout)] == [True, False, False, False, False]


def test_project_errors_are_one_line(tmp_path):
    r = check(tmp_path, ["SELECT 1"], "--project", "nope")
    assert r.exit_code != 0 and "Traceback" not in r.output and "nope" in r.output
    r = check(tmp_path, ["SELECT 1"], "--project", "nope", "--tenant", "a=1")
    assert r.exit_code != 0 and "drop --tenant" in r.output


def test_a_check_that_cannot_run_exits_2_never_the_refusals_1(tmp_path):
    """A refusal is exit 1; a project whose warehouse cannot be read is not a refusal (the review: both were 1)."""
    db = tmp_path / "x.duckdb"
    duckdb.connect(str(db)).close()
    f = tmp_path / "p.yaml"
    f.write_text(f"id: gone-wh\npack: ecommerce\nwarehouse: {{kind: duckdb, settings: {{path: {db}}}}}\n")
    assert runner.invoke(app, ["project", "apply", "-f", str(f)]).exit_code == 0
    db.unlink()  # the file is gone after the project was applied
    r = check(tmp_path, ["SELECT 1"], "--project", "gone-wh")
    assert r.exit_code == 2 and "Traceback" not in r.output and "no database file" in r.output
    # a failure that is no user error (a query of schema discovery failing) is also 2
    import pytest

    from assay import cli
    from assay.errors import QueryError

    def failing(project_id):
        raise QueryError("schema discovery failed: the catalog query was cancelled")

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(cli, "_project_guard", failing)
        r = check(tmp_path, ["SELECT 1"], "--project", "gone-wh")
    assert r.exit_code == 2 and "catalog query was cancelled" in r.output
