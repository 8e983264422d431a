"""First contact: `assay discover --warehouse FILE` with or without --goal, one project per warehouse."""

from __future__ import annotations

import duckdb
from typer.testing import CliRunner

from assay.cli import _goal_project, _store, app


def test_one_project_per_warehouse_whatever_the_goal(tmp_path):
    db = tmp_path / "w.duckdb"
    duckdb.connect(str(db)).close()
    a = _goal_project(None, str(db), "which carriers drive delays?")[0]
    b = _goal_project(None, str(db), "what changed over the year?")[0]
    assert a == b
    p = _store().get_project(a)
    assert p.goal == "what changed over the year?" and p.pack == "goal"
    other = tmp_path / "x.duckdb"
    duckdb.connect(str(other)).close()
    assert _goal_project(None, str(other), "which carriers drive delays?")[0] != a


def test_no_goal_runs_the_generic_pack(tmp_path):
    db = tmp_path / "w.duckdb"
    duckdb.connect(str(db)).close()
    pid = _goal_project(None, str(db), None)[0]
    p = _store().get_project(pid)
    assert p.pack == "generic" and p.goal is None and p.state.value == "ready"
    assert _goal_project(None, str(db), "delays?")[0] == pid  # a goal later reuses the same project


def test_missing_warehouse_file_is_one_line():
    r = CliRunner().invoke(app, ["discover", "--warehouse", "/nonexistent/w.duckdb"], catch_exceptions=False)
    assert r.exit_code != 0 and "Traceback" not in r.output
    assert r.output.strip().startswith("error:") and "no such warehouse file" in r.output


def test_a_file_that_is_not_duckdb_is_one_line_and_leaves_no_project(tmp_path):
    csv = tmp_path / "orders.csv"
    csv.write_text("id,amount\n1,2.5\n")
    before = [p.id for p in _store().list_projects()]
    runs_before = [r.id for r in _store().list_runs(None, 10_000)]
    r = CliRunner().invoke(app, ["discover", "--warehouse", str(csv), "--goal", "what sells?"],
                           catch_exceptions=False)
    assert r.exit_code == 2 and "Traceback" not in r.output
    assert r.output.strip().startswith("error:") and "not a DuckDB database file" in r.output
    assert len(r.output.strip().splitlines()) == 1
    assert [p.id for p in _store().list_projects()] == before  # nothing saved, so no failed run either
    assert [r.id for r in _store().list_runs(None, 10_000)] == runs_before  # and no failed run


def test_min_steps_above_max_steps_is_one_line_before_any_run(tmp_path):
    db = tmp_path / "w.duckdb"
    duckdb.connect(str(db)).close()
    pid = _goal_project(None, str(db), "what sells?")[0]
    runs_before = len(_store().list_runs(pid, 100))
    r = CliRunner().invoke(app, ["discover", pid, "--min-steps", "12", "--max-steps", "10"], catch_exceptions=False)
    assert r.exit_code != 0 and "Traceback" not in r.output
    assert r.output.strip() == "error: --min-steps (12) is more than the run's max steps (10)"
    # against the project's own max_steps too
    hi = _store().get_project(pid).max_steps
    r = CliRunner().invoke(app, ["discover", pid, "--min-steps", str(hi + 1)], catch_exceptions=False)
    assert r.exit_code != 0 and f"--min-steps ({hi + 1}) is more than the run's max steps ({hi})" in r.output
    assert len(_store().list_runs(pid, 100)) == runs_before


def test_a_refused_min_steps_with_a_warehouse_file_saves_nothing(tmp_path):
    """The review found the goal's project saved (and an existing one's goal overwritten) before the refusal."""
    db = tmp_path / "w.duckdb"
    duckdb.connect(str(db)).close()
    pid = _goal_project(None, str(db), "what sells?")[0]
    before = [(p.id, p.goal, p.min_steps) for p in _store().list_projects()]
    for args in (["--min-steps", "12", "--max-steps", "10"], ["--min-steps", "999"]):
        r = CliRunner().invoke(app, ["discover", "--warehouse", str(db), "--goal", "a new goal", *args],
                               catch_exceptions=False)
        assert r.exit_code == 2 and "is more than the run's max steps" in r.output
    other = tmp_path / "x.duckdb"
    duckdb.connect(str(other)).close()
    r = CliRunner().invoke(app, ["discover", "--warehouse", str(other), "--min-steps", "12", "--max-steps", "10"],
                           catch_exceptions=False)
    assert r.exit_code == 2
    assert [(p.id, p.goal, p.min_steps) for p in _store().list_projects()] == before
    assert _store().get_project(pid).goal == "what sells?"


def test_runs_limit_must_be_positive():
    r = CliRunner().invoke(app, ["runs", "--limit", "0"], catch_exceptions=False)
    assert r.exit_code == 2 and "Traceback" not in r.output and "--limit" in r.output


def test_a_run_started_elsewhere_refuses_an_explicit_min_steps_above_max_steps(tmp_path):
    """The Prefect UI's run form and MCP reach create_run without the CLI's check. The project's own minimum above
    a smaller maximum asked for one run is cut to it (as the exploration loop cuts it), never a failed run."""
    import pytest

    from assay.errors import ConfigError
    from assay.run.lifecycle import create_run, new_run_id

    db = tmp_path / "w.duckdb"
    duckdb.connect(str(db)).close()
    store = _store()
    p = store.get_project(_goal_project(None, str(db), "what sells?")[0])
    with pytest.raises(ConfigError, match=r"--min-steps \(9\) is more than the run's max steps \(8\)"):
        create_run(store, p, run_id=new_run_id(), max_steps=8, min_steps=9)
    assert create_run(store, p, run_id=new_run_id(), max_steps=8, min_steps=8).min_steps == 8
    p = p.model_copy(update={"min_steps": 20, "max_steps": 60})
    run = create_run(store, p, run_id=new_run_id(), max_steps=10)
    assert (run.max_steps, run.min_steps) == (10, 10)



def test_runs_piped_keeps_every_cell_whole():
    """Piped, `assay runs` fitted its table in 80 columns: "demo-ec…", "Complet…", a date cut in two."""
    from assay.models import DiscoveryRun, Phase, RunStatus

    store = _store()
    rid = "f00dfeed" + "0" * 24
    store.create_run(DiscoveryRun(id=rid, project_id="a-rather-long-project-name-for-the-table", analyst="statistical",
                                  status=RunStatus.completed, phase=Phase.done, max_steps=60))
    r = CliRunner().invoke(app, ["runs", "--limit", "100"], catch_exceptions=False)
    assert r.exit_code == 0
    row = next(line for line in r.output.splitlines() if "f00dfeed" in line)
    assert "a-rather-long-project-name-for-the-table" in row and "statistical" in row and "…" not in row


def test_warehouse_never_replaces_a_registered_project(tmp_path):
    """The new user's `assay discover shop --warehouse copy.duckdb` turned the registered ecommerce project shop
    into a generic one on the copy, without a word."""
    db, copy = tmp_path / "shop.duckdb", tmp_path / "copy.duckdb"
    for f in (db, copy):
        duckdb.connect(str(f)).close()
    y = tmp_path / "shop.yaml"
    y.write_text(f"id: shop16\npack: ecommerce\nwarehouse: {{kind: duckdb, settings: {{path: {db}}}}}\n")
    assert CliRunner().invoke(app, ["project", "apply", "-f", str(y)]).exit_code == 0
    r = CliRunner().invoke(app, ["discover", "shop16", "--warehouse", str(copy), "--goal", "what sells?"],
                           catch_exceptions=False)
    assert r.exit_code == 2 and "project shop16 already exists (pack ecommerce, duckdb)" in r.output
    p = _store().get_project("shop16")
    assert p.pack == "ecommerce" and p.warehouse.settings["path"] == str(db)
    # the goal project of that same file may be named and reused
    assert _goal_project("mine16", str(copy), "what sells?")[0] == "mine16"
    assert _goal_project("mine16", str(copy), "what else?")[0] == "mine16"
    assert _store().get_project("mine16").goal == "what else?"


def test_a_run_on_the_projects_own_file_keeps_its_tenant_filter_and_pii_columns(tmp_path):
    """A new user's walkthrough (session 23): `assay discover shop --warehouse shop.duckdb` on a project applied with
    a tenant filter and PII columns saved it again with the defaults, so the run read every tenant unmasked."""
    db = tmp_path / "shop.duckdb"
    duckdb.connect(str(db)).close()
    (tmp_path / "shopt.yaml").write_text(
        f"id: shopt\npack: generic\nanalyst: statistical\nwarehouse:\n  kind: duckdb\n  settings:\n"
        f"    path: {db}\n  tenant_filter: {{column: region, value: north}}\n  pii_columns: [visits.user_id]\n")
    r = CliRunner().invoke(app, ["project", "apply", "-f", str(tmp_path / "shopt.yaml")], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    before = _store().get_project("shopt")
    for goal in (None, "why did conversion fall?"):
        # a project applied from a file is never rewritten by a one-off run: the goal is the run's alone (a new
        # user, session 26: a weekly scheduled project became the one-off goal's)
        assert _goal_project("shopt", str(db), goal) == ("shopt", goal)
        p = _store().get_project("shopt")
        assert p == before and p.goal is None and p.pack == "generic"
        assert p.warehouse.tenant_filter.column == "region" and p.warehouse.tenant_filter.value == "north"
        assert p.warehouse.pii_columns == ["visits.user_id"] and p.analyst == "statistical"
    scheduled = before.model_copy(update={"id": "shops", "name": "shop.duckdb", "schedule": "0 6 * * 1"})
    _store().save_project(scheduled)
    assert _goal_project("shops", str(db), "refunds by region?") == ("shops", "refunds by region?")
    assert _store().get_project("shops") == scheduled


def test_an_unknown_area_is_one_line_before_any_run(tmp_path):
    """A new user's walkthrough (session 23): `assay discover shop --area nosucharea` started a flow run first."""
    db = tmp_path / "w.duckdb"
    duckdb.connect(str(db)).close()
    pid = _goal_project(None, str(db), None)[0]
    runs_before = len(_store().list_runs(pid, 100))
    r = CliRunner().invoke(app, ["discover", pid, "--area", "nosucharea"], catch_exceptions=False)
    assert r.exit_code == 2 and "Traceback" not in r.output
    assert r.output.strip() == "error: unknown area 'nosucharea' for pack generic (valid: overview)"
    assert len(_store().list_runs(pid, 100)) == runs_before


def test_zero_steps_is_refused_by_every_command_that_takes_them():
    for args in (["demo", "--generate-only", "--max-steps", "0"], ["eval", "demo", "--max-steps", "0"]):
        r = CliRunner().invoke(app, args, catch_exceptions=False)
        assert r.exit_code == 2 and "--max-steps" in r.output, (args, r.output)


def test_a_warehouse_files_project_is_named_after_the_file(tmp_path):
    """A new user's walkthroughs (sessions 23 and 24): one-off projects were named `goal-7e79d752a1`. Now the file's
    name (`shop24`), with a short hash of its path when another project already has that name; a project made for
    the file before (whatever its id) is reused, so its runs stay together."""
    from assay.models import Project, WarehouseConfig

    db = tmp_path / "Shop 24.duckdb"
    duckdb.connect(str(db)).close()
    pid = _goal_project(None, str(db), "what sells?")[0]
    assert pid == "shop-24" and _goal_project(None, str(db), None)[0] == "shop-24"
    elsewhere = tmp_path / "b" / "Shop 24.duckdb"
    elsewhere.parent.mkdir()
    duckdb.connect(str(elsewhere)).close()
    other = _goal_project(None, str(elsewhere), "what sells?")[0]
    assert other.startswith("shop-24-") and len(other) == len("shop-24-") + 6
    # a project an earlier version made for a file, under its old id, is the file's project still
    old_file = tmp_path / "legacy24.duckdb"
    duckdb.connect(str(old_file)).close()
    _store().save_project(Project(id="goal-0123456789", pack="goal", goal="why?", warehouse=WarehouseConfig(
        kind="duckdb", settings={"path": str(old_file.resolve())})))
    assert _goal_project(None, str(old_file), "why else?")[0] == "goal-0123456789"


def test_a_files_new_one_off_project_takes_the_tenant_filter_and_pii_of_the_files_projects(tmp_path):
    """A new user (session 27): `assay discover --warehouse shop.duckdb` beside an applied project of that file with
    a tenant filter made a new project without it, and the run read every tenant, unmasked, without a word. The
    new project takes what the file's projects declare; projects that disagree on the tenant stop the run."""
    db = tmp_path / "shop.duckdb"
    duckdb.connect(str(db)).close()
    (tmp_path / "t.yaml").write_text(
        f"id: tenantp\npack: ecommerce\nwarehouse:\n  kind: duckdb\n  settings:\n    path: {db}\n"
        f"  tenant_filter: {{column: tenant_id, value: 1}}\n  pii_columns: [email]\n")
    r = CliRunner().invoke(app, ["project", "apply", "-f", str(tmp_path / "t.yaml")], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    pid, goal = _goal_project(None, str(db), "why do refunds rise?")
    assert pid != "tenantp" and goal is None
    p = _store().get_project(pid)
    assert p.warehouse.tenant_filter.column == "tenant_id" and p.warehouse.tenant_filter.value == 1
    assert p.warehouse.pii_columns == ["email"]
    other = tmp_path / "other.duckdb"
    duckdb.connect(str(other)).close()
    for n, v in (("t1", 1), ("t2", 2)):
        (tmp_path / f"{n}.yaml").write_text(
            f"id: {n}\npack: ecommerce\nwarehouse:\n  kind: duckdb\n  settings:\n    path: {other}\n"
            f"  tenant_filter: {{column: tenant_id, value: {v}}}\n")
        assert CliRunner().invoke(app, ["project", "apply", "-f", str(tmp_path / f"{n}.yaml")]).exit_code == 0
    r = CliRunner().invoke(app, ["discover", "--warehouse", str(other), "--goal", "why?"])
    assert r.exit_code != 0 and "different tenant filters" in r.output, r.output


def test_a_files_protections_are_found_whatever_the_path_was_applied_as(tmp_path):
    """The session's review: a project applied as ``../data/shop.duckdb`` or through a link was not matched, and the
    new one-off project was made without its tenant filter; a project with PII columns only is no "different tenant
    filter"."""
    from assay.cli import _file_protections
    from assay.models import Project, TenantFilter, WarehouseConfig

    (tmp_path / "data").mkdir()
    db = tmp_path / "data" / "shop.duckdb"
    duckdb.connect(str(db)).close()
    _store().save_project(Project(id="rel", pack="ecommerce", warehouse=WarehouseConfig(
        kind="duckdb", settings={"path": str(tmp_path / "data" / ".." / "data" / "shop.duckdb")},
        tenant_filter=TenantFilter(column="tenant_id", value=3))))
    _store().save_project(Project(id="piionly", pack="ecommerce", warehouse=WarehouseConfig(
        kind="duckdb", settings={"path": str(db)}, pii_columns=["email"])))
    got = _file_protections(db.resolve())
    assert got["tenant_filter"].value == 3 and got["pii_columns"] == ["email"]
