"""The CLI: bad input is one clear line and a non-zero exit; nothing is lost."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from assay.cli import app

runner = CliRunner()


def invoke(*args):
    return runner.invoke(app, list(args), catch_exceptions=False)


def one_line_error(result, needle):
    assert result.exit_code != 0
    text = result.output.strip()
    assert "Traceback" not in text
    assert needle in text, text
    assert text.startswith("error:")


def test_packs_lists_builtins():
    r = invoke("packs")
    assert r.exit_code == 0 and "gaming" in r.output and "match3" in r.output


def test_bad_project_yaml(tmp_path):
    f = tmp_path / "p.yaml"
    f.write_text("id: Bad Id\npack: ecommerce\n")
    one_line_error(invoke("project", "apply", "-f", str(f)), "id:")
    f.write_text("id: ok\npack: nope\nwarehouse: {kind: duckdb, settings: {path: w.duckdb}}\n")
    one_line_error(invoke("project", "apply", "-f", str(f)), "unknown pack 'nope'")
    f.write_text("id: ok\npack: ecommerce\nwarehouse: {kind: oracle}\n")
    one_line_error(invoke("project", "apply", "-f", str(f)), "unknown warehouse 'oracle'")
    one_line_error(invoke("project", "apply", "-f", str(tmp_path / "missing.yaml")), "no such project file")


def test_project_apply_resolves_relative_paths(tmp_path):
    import duckdb

    duckdb.connect(str(tmp_path / "w.duckdb")).close()
    f = tmp_path / "p.yaml"
    f.write_text("id: rel\npack: gaming\ncategory: match3\nwarehouse:\n  kind: duckdb\n  settings: {path: w.duckdb}\n")
    assert invoke("project", "apply", "-f", str(f)).exit_code == 0
    from assay.settings import load_settings
    from assay.store import open_store

    assert open_store(load_settings()).get_project("rel").warehouse.settings["path"] == str(tmp_path / "w.duckdb")
    # the file as the argument, as a new user typed it (session 25: "Missing option '-f'")
    f.write_text(f.read_text().replace("match3", "idle"))
    assert invoke("project", "apply", str(f)).exit_code == 0
    assert open_store(load_settings()).get_project("rel").category == "idle"
    one_line_error(invoke("project", "apply"), "give the project's YAML file once")
    one_line_error(invoke("project", "apply", "-f", str(f), str(f)), "give the project's YAML file once")


def test_unknown_project_and_run():
    one_line_error(invoke("discover", "nope"), "no project 'nope'")
    one_line_error(invoke("show", "zzzz"), "no run 'zzzz'")


def test_unreachable_warehouse_fails_in_one_line(tmp_path):
    import duckdb

    db = tmp_path / "x.duckdb"
    duckdb.connect(str(db)).close()
    f = tmp_path / "p.yaml"
    f.write_text(f"id: gone\npack: ecommerce\nwarehouse: {{kind: duckdb, settings: {{path: {db}}}}}\n")
    assert invoke("project", "apply", "-f", str(f)).exit_code == 0
    db.unlink()  # the file is gone after the project was applied
    one_line_error(invoke("schema", "refresh", "gone"), f"no database file at {db}")


def test_sql_check_prints_verdicts(tmp_path):
    f = tmp_path / "q.json"
    f.write_text(json.dumps(["SELECT * FROM t WHERE tenant_id = 3", "DROP TABLE t", "SELECT * FROM t"]))
    r = invoke("sql", "check", "--dialect", "postgres", "--tenant", "tenant_id=3", str(f))
    verdicts = json.loads(r.stdout)
    # no catalog: the guard cannot prove t is filtered by a known column, so the bare SELECT is refused
    assert [v["allowed"] for v in verdicts] == [True, False, False]
    # a refusal is a failed check, as a linter's finding is: exit 1 and one line saying which
    assert r.exit_code == 1
    assert r.stderr.strip() == "refused: 2 of 3 statement(s) (number 2, 3)"
    f.write_text(json.dumps(["SELECT * FROM t WHERE tenant_id = 3"]))
    r = invoke("sql", "check", "--dialect", "postgres", "--tenant", "tenant_id=3", str(f))
    assert r.exit_code == 0 and r.stderr == "" and json.loads(r.stdout)[0]["allowed"]
    one_line_error(invoke("sql", "check", str(tmp_path / "nope.json")), "not a JSON list")


def test_packs_validate(tmp_path):
    from assay.packs import BUILTIN_PACKS

    assert invoke("packs", "validate", str(BUILTIN_PACKS / "social")).exit_code == 0
    one_line_error(invoke("packs", "validate", str(tmp_path)), "not a pack")


@pytest.mark.parametrize("rating", ["love"])
def test_feedback_rating_checked(rating):
    one_line_error(invoke("feedback", "x", "y", rating), "rating must be")


def test_schema_refresh_and_search_read_the_project_glossary(tmp_path):
    """`schema refresh` indexes with the project's glossary, as runs do (a run re-embeds nothing after
    it); `schema search` answers as search_tables does, copies folded."""
    import duckdb

    from assay.schema.catalog import join_hints
    from assay.schema.discovery import discover_schema
    from assay.schema.index import project_schema_index
    from assay.settings import load_settings
    from assay.store import open_store
    from assay.warehouse import open_warehouse

    db = tmp_path / "erp.duckdb"
    con = duckdb.connect(str(db))
    con.execute("CREATE TABLE zq_kx (id INT, kx_amt DOUBLE)")
    con.execute("COMMENT ON TABLE zq_kx IS 'one row per refund'")
    for i in range(3):
        con.execute(f"CREATE TABLE zq_kx_bkp{i} AS SELECT * FROM zq_kx")
    con.execute("CREATE TABLE hr_emp (id INT, emp_no VARCHAR)")
    con.close()
    f = tmp_path / "p.yaml"
    f.write_text("id: glossed\npack: ecommerce\nwarehouse:\n  kind: duckdb\n"
                 f"  settings: {{path: {db}, glossary: {{kx: refund, zq: returns}}}}\n")
    assert invoke("project", "apply", "-f", str(f)).exit_code == 0
    r = invoke("schema", "refresh", "glossed")
    assert r.exit_code == 0 and "re-embedded 5" in r.output, r.output

    store = open_store(load_settings())
    p = store.get_project("glossed")

    wh = open_warehouse(p.warehouse)
    tables = discover_schema(store, p, wh)
    wh.close()
    assert project_schema_index(p).sync(tables, join_hints(tables)).embedded == 0  # same texts as a run's

    r = invoke("schema", "search", "glossed", "money given back to customers", "--json", "-k", "2")
    assert r.exit_code == 0, r.output
    hits = json.loads(r.output)
    assert hits[0]["table"] == "main.zq_kx" and hits[0]["description"] == "one row per refund"
    assert sorted(hits[0]["similar"]) == ["main.zq_kx_bkp0", "main.zq_kx_bkp1", "main.zq_kx_bkp2"]
    r = invoke("schema", "search", "glossed", "money given back to customers")
    assert r.exit_code == 0 and "main.zq_kx" in r.output and "one row per refund" in r.output
    one_line_error(invoke("schema", "search", "nope", "x"), "no project 'nope'")


def test_project_descriptions_reach_search_and_re_embed_only_their_table(tmp_path, caplog):
    import duckdb

    db = tmp_path / "w.duckdb"
    con = duckdb.connect(str(db))
    for name in ("tbl_a", "tbl_b", "tbl_c"):
        con.execute(f"CREATE TABLE {name} (id INT, val DOUBLE)")
    con.close()
    f = tmp_path / "p.yaml"

    def apply(note_b: str) -> None:
        f.write_text("id: noted\npack: ecommerce\nwarehouse:\n  kind: duckdb\n"
                     f"  settings: {{path: {db}}}\n"
                     f"  descriptions: {{tbl_b: '{note_b}', main.tbl_zz: 'no such table'}}\n")
        assert invoke("project", "apply", "-f", str(f)).exit_code == 0

    apply("veterinary appointments booked for pets")
    r = invoke("schema", "refresh", "noted")
    assert r.exit_code == 0 and "re-embedded 3" in r.output, r.output
    assert "main.tbl_zz" in caplog.text  # a description that names no table is reported, not fatal
    hits = json.loads(invoke("schema", "search", "noted", "vet visits for animals", "--json", "-k", "1").output)
    assert hits == [{"table": "main.tbl_b", "score": hits[0]["score"], "rows": 0,
                     "description": "veterinary appointments booked for pets", "columns": ["id", "val"]}]
    apply("invoices of the garden centre")  # edited in the project file: that table only is embedded again
    r = invoke("schema", "refresh", "noted")
    assert "re-embedded 1" in r.output, r.output
    r = invoke("schema", "search", "noted", "garden centre invoices", "--json", "-k", "1")
    assert json.loads(r.output)[0]["table"] == "main.tbl_b"


def test_discover_goal_bad_input_is_one_line():
    one_line_error(invoke("discover", "nope", "--goal", "  "), "--goal: give the question")
    one_line_error(invoke("discover", "--goal", "why do paid customers churn"), "needs a project id")
    one_line_error(invoke("discover", "nope", "--goal", "why do paid customers churn"), "no project 'nope'")


def test_feedback_on_a_merged_insight_names_the_one_that_stands_for_it():
    """The session-16 new user: conversion-1, -2 and -4 were listed, and `feedback RUN conversion-3 like` said only
    "no insight 'conversion-3'" (it was folded into conversion-2)."""
    import datetime as dt

    from assay.cli import _store
    from assay.models import DiscoveryResult, DiscoveryRun, Insight, RunStatus

    store = _store()
    rid = "fb16" + "0" * 28
    store.create_run(DiscoveryRun(id=rid, project_id="fb16", status=RunStatus.completed))
    keeper = Insight(id="conversion-2", area="conversion", name="android fell", description="android fell",
                     merged_from=["conversion-3"])
    store.save_result(DiscoveryResult(run_id=rid, project_id="fb16", domain="ecommerce", insights=[keeper],
                                      created_at=dt.datetime(2026, 11, 28, tzinfo=dt.timezone.utc)))
    one_line_error(invoke("feedback", rid, "conversion-3", "like"), "conversion-3 of run fb160000 was merged into "
                                                                    "conversion-2 (the same finding)")
    one_line_error(invoke("feedback", rid, "conversion-9", "like"), "has no insight 'conversion-9' (ids: conversion-2)")
    assert invoke("feedback", rid, "conversion-2", "like").exit_code == 0
    # and `show` says where conversion-3 went (session 21's new user saw the gap and no reason for it)
    shown = " ".join(invoke("show", rid).output.split())
    assert "conversion-2" in shown and "merged conversion-3 into it" in shown, shown


def test_estimate_of_a_statistical_project_prices_the_llm_analyst(tmp_path):
    """A project without an LLM (llm.provider none) runs the statistical analyst: the estimate says so in one line
    and prices what the LLM analyst would cost, with Claude's default model or the one --model names."""
    import duckdb

    from assay.llm.anthropic import DEFAULT_MODEL

    db = tmp_path / "w.duckdb"
    con = duckdb.connect(str(db))
    con.execute("CREATE TABLE orders AS SELECT range AS order_id, range % 7 AS customer_id, 10.0 * range AS amount "
                "FROM range(100)")
    con.close()
    f = tmp_path / "p.yaml"
    f.write_text(f"id: est-none\npack: ecommerce\nllm: {{provider: none}}\n"
                 f"warehouse: {{kind: duckdb, settings: {{path: {db}}}}}\n")
    assert invoke("project", "apply", "-f", str(f)).exit_code == 0
    r = invoke("estimate", "est-none", "--json")
    assert r.exit_code == 0, r.output
    est = json.loads(r.stdout)
    assert est["lead"].startswith("This project runs the statistical analyst: no LLM cost.")
    assert est["model"] == DEFAULT_MODEL and est["analyst"] == "llm" and est["total"]["cost_usd"] > 0
    r = invoke("estimate", "est-none", "--model", "claude-haiku-4-5", "--json")
    cheap = json.loads(r.stdout)
    assert cheap["model"] == "claude-haiku-4-5" and 0 < cheap["total"]["cost_usd"] < est["total"]["cost_usd"]
    assert "claude-haiku-4-5" in cheap["lead"]
    shown = invoke("estimate", "est-none").output
    assert "This project runs the statistical analyst: no LLM cost." in shown and DEFAULT_MODEL in shown
    # an LLM project without a key does not "run the statistical analyst": it would stop (a review's case)
    f.write_text(f"id: est-llm\npack: ecommerce\nanalyst: llm\n"
                 f"warehouse: {{kind: duckdb, settings: {{path: {db}}}}}\n")
    assert invoke("project", "apply", "-f", str(f)).exit_code == 0
    lead = json.loads(invoke("estimate", "est-llm", "--json").stdout)["lead"]
    assert lead.startswith("No API key is set: a run of this project (analyst: llm) would stop now.")


def test_project_show_round_trips_and_delete_removes_the_project_and_its_runs(tmp_path):
    """A new user (session 24): no way to see what a project holds, or to remove one."""
    import datetime as dt

    from assay.models import DiscoveryRun, Feedback, RunStatus
    from assay.settings import load_settings
    from assay.store import open_store
    from tests.helpers import small_warehouse

    db = small_warehouse(tmp_path / "w.duckdb")
    f = tmp_path / "p.yaml"
    f.write_text(f"id: showme\npack: ecommerce\nanalyst: statistical\nmax_steps: 12\nschedule: '0 6 * * 1'\n"
                 f"warehouse:\n  kind: duckdb\n  settings: {{path: {db}}}\n  pii_columns: [customers.email]\n"
                 f"  tenant_filter: {{column: customer_id, value: 7, shared_tables: [orders]}}\n")
    assert invoke("project", "apply", "-f", str(f)).exit_code == 0
    r = invoke("project", "show", "showme")
    assert r.exit_code == 0 and r.output.startswith("id: showme\n") and "customers.email" in r.output, r.output
    again = tmp_path / "again.yaml"
    again.write_text(r.output)
    assert invoke("project", "apply", "-f", str(again)).exit_code == 0  # what show prints, apply takes
    store = open_store(load_settings())
    before = store.get_project("showme")
    assert before.max_steps == 12 and before.warehouse.tenant_filter.value == 7
    store.create_run(DiscoveryRun(id="showme-run-1", project_id="showme", status=RunStatus.completed))
    store.add_feedback(Feedback(project_id="showme", run_id="showme-run-1", insight_id="I1", rating="like",
                                created_at=dt.datetime(2026, 11, 29, tzinfo=dt.timezone.utc)))
    one_line_error(invoke("project", "delete", "showme"), "pass --yes")  # off a terminal: nothing deleted
    assert store.get_project("showme").id == "showme"
    r = invoke("project", "delete", "showme", "--yes")
    assert r.exit_code == 0 and "deleted project showme and its 1 run(s)" in " ".join(r.output.split()), r.output
    assert "prefect deployment delete assay-discovery/discover-showme" in " ".join(r.output.split())
    one_line_error(invoke("project", "show", "showme"), "no project 'showme'")
    assert store.list_runs("showme", 10) == [] and store.feedback("showme") == []


def test_serve_and_deploy_refuse_a_server_their_schedules_would_not_outlive(monkeypatch, tmp_path):
    """Session 24's review: with ASSAY_PREFECT_SERVER=ephemeral, `assay serve`/`deploy` still wrote to a temporary
    Prefect server. They need one that outlives them, and say so in one line before any server starts."""
    monkeypatch.setenv("ASSAY_PREFECT_SERVER", "ephemeral")
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    monkeypatch.setenv("PREFECT_PROFILES_PATH", str(tmp_path / "none.toml"))
    for args in (["serve"], ["deploy", "--pool", "assay"]):
        one_line_error(invoke(*args), "needs a Prefect server that outlives it")
