"""Strict project config: every typo, unknown name, secret, bad number or bad cron is one line at
`assay project apply` (naming the file and the field), and the same checks hold at run start."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from assay.cli import app
from assay.config import check_project, cron_error, strip_dsn_password
from assay.errors import ConfigError
from assay.models import LLMConfig, Project, TenantFilter, WarehouseConfig
from assay.settings import load_settings
from assay.store import open_store

runner = CliRunner()

GOOD = {
    "id": "shop",
    "pack": "ecommerce",
    "warehouse": {"kind": "duckdb", "settings": {"path": "w.duckdb"}},
}
PG = {"kind": "postgres", "settings": {"host": "db", "dbname": "a", "user": "u", "password_env": "PGPW"}}


def _yaml(data) -> str:
    import yaml

    return yaml.safe_dump(data, sort_keys=False)


def apply(tmp_path, data_or_text, name="p.yaml"):
    import duckdb

    if not (tmp_path / "w.duckdb").exists():  # GOOD's warehouse: a DuckDB file that is there
        duckdb.connect(str(tmp_path / "w.duckdb")).close()
    f = tmp_path / name
    f.write_text(data_or_text if isinstance(data_or_text, str) else _yaml(data_or_text))
    return f, runner.invoke(app, ["project", "apply", "-f", str(f)], catch_exceptions=False)


def errors_of(result) -> list[str]:
    assert result.exit_code != 0, result.output
    assert "Traceback" not in result.output
    lines = [x for x in result.output.strip().splitlines() if x.strip()]
    assert lines and all(x.startswith("error: ") for x in lines), result.output
    return lines


def merge(base: dict, **over) -> dict:
    import copy

    out = copy.deepcopy(base)
    for k, v in over.items():
        out[k] = v
    return out


# (what the user wrote, the field path and what the one line must say)
TYPOS = [
    (merge(GOOD, pakc="gaming"), "pakc: unknown key (did you mean pack?)"),
    (merge(GOOD, schedul="0 6 * * 1"), "schedul: unknown key (did you mean schedule?)"),
    (merge(GOOD, max_step=10), "max_step: unknown key (did you mean max_steps?)"),
    (merge(GOOD, anlyst="llm"), "anlyst: unknown key (did you mean analyst?)"),
    (merge(GOOD, disabled_area=["x"]), "disabled_area: unknown key (did you mean disabled_areas?)"),
    (merge(GOOD, prompt_override={}), "prompt_override: unknown key (did you mean prompt_overrides?)"),
    (merge(GOOD, warehous={"kind": "duckdb"}), "warehous: unknown key (did you mean warehouse?)"),
    (merge(GOOD, warehouse={**GOOD["warehouse"], "tenant_filtr": {"column": "t", "value": 1}}),
     "warehouse.tenant_filtr: unknown key (did you mean tenant_filter?)"),
    (merge(GOOD, warehouse={**GOOD["warehouse"], "tenant_filter": {"colum": "t", "value": 1}}),
     "warehouse.tenant_filter.colum: unknown key (did you mean column?)"),
    (merge(GOOD, warehouse={**GOOD["warehouse"], "tenant_filter": {"column": "t", "value": 1,
                                                                    "shared_table": ["p"]}}),
     "warehouse.tenant_filter.shared_table: unknown key (did you mean shared_tables?)"),
    (merge(GOOD, warehouse={**GOOD["warehouse"], "pii_column": ["email"]}),
     "warehouse.pii_column: unknown key (did you mean pii_columns?)"),
    (merge(GOOD, warehouse={**GOOD["warehouse"], "schema": ["sales"]}),
     "warehouse.schema: unknown key (did you mean schemas?)"),
    (merge(GOOD, warehouse={**GOOD["warehouse"], "rowcap": 10}),
     "warehouse.rowcap: unknown key (did you mean row_cap?)"),
    (merge(GOOD, warehouse={"kind": "duckdb", "settings": {"pth": "w.duckdb"}}),
     "warehouse.settings.pth: unknown key (did you mean path?)"),
    (merge(GOOD, warehouse={**PG, "settings": {**PG["settings"], "hostname": "db"}}),
     "warehouse.settings.hostname: unknown key (did you mean host?)"),
    (merge(GOOD, warehouse={**PG, "settings": {**PG["settings"], "pasword_env": "X"}}),
     "warehouse.settings.pasword_env: unknown key (did you mean password_env?)"),
    (merge(GOOD, warehouse={**PG, "settings": {**PG["settings"], "port": "fivefourthreetwo"}}),
     "warehouse.settings.port: Input should be a valid integer"),
    (merge(GOOD, warehouse={"kind": "snowflake", "settings": {"database": "D", "acount": "x"}}),
     "warehouse.settings.acount: unknown key (did you mean account?)"),
    (merge(GOOD, warehouse={"kind": "oracle"}),
     "warehouse.kind: unknown warehouse 'oracle'; valid: duckdb, postgres, snowflake"),
    (merge(GOOD, warehouse={"kind": "postgress", "settings": PG["settings"]}),
     "warehouse.kind: unknown warehouse 'postgress' (did you mean postgres?)"),
    (merge(GOOD, warehouse={"kind": "snowflake", "settings": {"account": "x"}}),
     "warehouse.settings.database: required"),
    (merge(GOOD, llm={"provider": "antropic"}),
     "llm.provider: unknown provider 'antropic' (did you mean anthropic?); valid: auto, anthropic, openai"),
    (merge(GOOD, llm={"provider": "claude"}), "llm.provider: unknown provider 'claude'; valid: auto, anthropic"),
    (merge(GOOD, llm={"provider": "anthropic", "modle": "claude-sonnet-4-5"}),
     "llm.modle: unknown key (did you mean model?)"),
    (merge(GOOD, llm={"provider": "anthropic", "api_key_evn": "K"}),
     "llm.api_key_evn: unknown key (did you mean api_key_env?)"),
    (merge(GOOD, llm={"provider": "openai", "base_url": "http://127.0.0.1:8000/v1"}),
     "llm.model: required for the openai provider"),
    (merge(GOOD, llm={"provider": "openai", "model": "m", "base_url": "127.0.0.1:8000/v1"}),
     "llm.base_url: '127.0.0.1:8000/v1' is not an http(s) URL"),
    (merge(GOOD, notify={"webhook_url_evn": "HOOK"}),
     "notify.webhook_url_evn: unknown key (did you mean webhook_url_env?)"),
    (merge(GOOD, custom_areas=[{"id": "vip", "name": "VIP", "description": "d", "keywords": ["vip"],
                                "keyword": ["x"]}]),
     "custom_areas[0].keyword: unknown key (did you mean keywords?)"),
    (merge(GOOD, analyst="statistic"), "analyst: Input should be 'auto', 'llm' or 'statistical'"),
    (merge(GOOD, schedule="0 6 * * 1", timezone="Europe/Berln"),
     "timezone: 'Europe/Berln' is not an IANA time zone (did you mean Europe/Berlin?)"),
]


@pytest.mark.parametrize("data,expected", TYPOS, ids=[t[1].split(":")[0] for t in TYPOS])
def test_each_config_typo_is_one_line_naming_file_and_field(tmp_path, data, expected):
    f, r = apply(tmp_path, data)
    lines = errors_of(r)
    assert len(lines) == 1, r.output
    assert lines[0].startswith(f"error: {f}: "), lines[0]
    assert expected in lines[0], lines[0]


def test_the_typo_matrix_is_broad():
    assert len(TYPOS) >= 20
    where = [t[1].split(":")[0] for t in TYPOS]
    assert any(w.startswith("warehouse.settings.") for w in where)  # nested settings
    assert any(w == "warehouse.kind" for w in where) and any(w == "llm.provider" for w in where)


def test_every_error_is_reported_at_once(tmp_path):
    data = merge(GOOD, pakc="x", warehouse={"kind": "duckdb", "settings": {"path": "w", "pth": "w"},
                                            "tenant_filtr": {}}, llm={"provider": "antropic"})
    lines = errors_of(apply(tmp_path, data)[1])
    assert len(lines) == 4, lines
    assert sorted(x.split(": ")[2] for x in lines) == ["llm.provider", "pakc", "warehouse.settings.pth",
                                                       "warehouse.tenant_filtr"]


def test_a_valid_project_applies_and_nothing_of_a_refused_one_is_stored(tmp_path):
    f, r = apply(tmp_path, merge(GOOD, id="valid-one", schedule="0 6 * * 1",
                                 warehouse={**PG, "tenant_filter": {"column": "t", "value": 1},
                                            "settings": {**PG["settings"], "glossary": {"cust": "customer"}}},
                                 llm={"provider": "anthropic", "api_key_env": "MY_KEY"}))
    assert r.exit_code == 0, r.output
    stored = open_store(load_settings()).get_project("valid-one")
    assert stored.warehouse.tenant_filter.column == "t"
    _, r = apply(tmp_path, merge(GOOD, id="refused-one", warehouse={**GOOD["warehouse"], "tenant_filtr": {}}))
    assert r.exit_code != 0
    assert "refused-one" not in [p.id for p in open_store(load_settings()).list_projects()]


def test_a_duckdb_path_that_is_no_duckdb_file_is_refused_and_nothing_is_stored(tmp_path):
    """A missing DuckDB file passed `project apply` and was caught only at doctor or discover: it is refused in one
    line naming the file and the field, as a file that is not a DuckDB database is; nothing is saved."""
    f, r = apply(tmp_path, merge(GOOD, id="no-file", warehouse={"kind": "duckdb", "settings": {"path": "shop.duckdb"}}))
    assert errors_of(r) == [f"error: {f}: warehouse.settings.path: no such file {tmp_path / 'shop.duckdb'}"]
    (tmp_path / "notes.duckdb").write_text("not a database")
    f, r = apply(tmp_path, merge(GOOD, id="no-file", warehouse={"kind": "duckdb", "settings": {"path": "notes.duckdb"}}))
    assert errors_of(r) == [f"error: {f}: warehouse.settings.path: {tmp_path / 'notes.duckdb'} is not a DuckDB "
                            "database file"]
    assert "no-file" not in [p.id for p in open_store(load_settings()).list_projects()]
    _, r = apply(tmp_path, merge(GOOD, id="no-file"))  # the file is there: applied
    assert r.exit_code == 0, r.output
    # pack accept saves the project too: not on a file that has gone since
    from assay.packs import BUILTIN_PACKS

    (tmp_path / "w.duckdb").unlink()
    r = runner.invoke(app, ["pack", "accept", "no-file", str(BUILTIN_PACKS / "social")], catch_exceptions=False)
    assert errors_of(r) == [f"error: project no-file: warehouse.settings.path: no such file {tmp_path / 'w.duckdb'}"]
    assert open_store(load_settings()).get_project("no-file").pack == "ecommerce"


def test_a_pii_column_or_schema_the_duckdb_file_lacks_is_refused_at_apply(tmp_path):
    """A new user (session 24): ``pii_columns: [customers.emial]`` was applied; only doctor and the run caught it.
    A local DuckDB file is read at apply: a qualified PII column or a schema it lacks is one line, nothing saved."""
    import duckdb

    db = tmp_path / "shop.duckdb"
    con = duckdb.connect(str(db))
    con.execute("CREATE TABLE customers AS SELECT 1 AS id, 'a@b.c' AS email")
    con.close()
    wh = {"kind": "duckdb", "settings": {"path": "shop.duckdb"}}
    f, r = apply(tmp_path, merge(GOOD, id="pii-typo", warehouse={**wh, "pii_columns": ["customers.emial"]}))
    assert errors_of(r) == [f"error: {f}: warehouse.pii_columns: 'customers.emial' is no column of the warehouse, "
                            "so nothing would be masked for it (did you mean 'customers.email'?)"]
    f, r = apply(tmp_path, merge(GOOD, id="pii-typo", warehouse={**wh, "schemas": ["mian"]}))
    assert errors_of(r)[0].startswith(f"error: {f}: warehouse.schemas: schema 'mian' has no tables")
    assert "pii-typo" not in [p.id for p in open_store(load_settings()).list_projects()]
    _, r = apply(tmp_path, merge(GOOD, id="pii-typo", warehouse={**wh, "pii_columns": ["customers.email"]}))
    assert r.exit_code == 0, r.output


def test_a_tenant_column_no_table_has_is_refused_at_apply_and_at_the_run(tmp_path):
    """A new user (session 26): ``tenant_filter: {column: tenant_id}`` over tables without it was applied and run;
    the guard refused every query and the run ended "completed" with no insight and no word why. Refused at apply
    (a DuckDB file is read there) and at the run's schema phase, in one line."""
    import duckdb

    from assay.config import ConfigError, check_schema_found
    from assay.models import ColumnInfo, TableInfo, WarehouseConfig

    db = tmp_path / "shop.duckdb"
    con = duckdb.connect(str(db))
    con.execute("CREATE TABLE sales AS SELECT 1 AS id, 7 AS tenantid")
    con.close()
    wh = {"kind": "duckdb", "settings": {"path": "shop.duckdb"}}
    f, r = apply(tmp_path, merge(GOOD, id="tenant-typo", warehouse={**wh, "tenant_filter": {"column": "tenant_id",
                                                                                            "value": 7}}))
    assert errors_of(r) == [f"error: {f}: warehouse.tenant_filter.column: no table of the warehouse has a column "
                            "'tenant_id', so every query would be refused (did you mean 'tenantid'?)"]
    assert "tenant-typo" not in [p.id for p in open_store(load_settings()).list_projects()]
    _, r = apply(tmp_path, merge(GOOD, id="tenant-typo", warehouse={**wh, "tenant_filter": {"column": "TenantID",
                                                                                            "value": 7}}))
    assert r.exit_code == 0, r.output
    # the run's schema phase checks the same (any warehouse: this one is listed only when it runs)
    tables = [TableInfo(schema="app", name="sales", columns=[ColumnInfo(name="id", type="int")])]
    cfg = WarehouseConfig(kind="postgres", settings={"dsn": "host=x"}, tenant_filter={"column": "org_id", "value": 1})
    with pytest.raises(ConfigError, match="no table of the warehouse has a column 'org_id'"):
        check_schema_found(cfg, tables)


# ---------------------------------------------------------------------------- secrets

SECRETS = [
    ({**PG, "settings": {"dsn": "postgresql://assay:hunter2@db.internal/analytics"}},
     "warehouse.settings.dsn: holds a password", "password_env:"),
    ({**PG, "settings": {"dsn": "host=db dbname=a user=u password=hunter2"}},
     "warehouse.settings.dsn: holds a password", "password_block:"),
    ({**PG, "settings": {"dsn": "host=db dbname=a user=u password='hunter 2'"}},
     "warehouse.settings.dsn: holds a password", "password_env:"),
    ({**PG, "settings": {**PG["settings"], "password": "hunter2"}},
     "warehouse.settings.password: secrets are never stored", "password_env:"),
    ({"kind": "snowflake", "settings": {"database": "D", "private_key": "-----BEGIN"}},
     "warehouse.settings.private_key: secrets are never stored", "private_key_env:"),
    ({"kind": "snowflake", "settings": {"database": "D", "token": "abc"}},
     "warehouse.settings.token: secrets are never stored", "token_block:"),
]


@pytest.mark.parametrize("warehouse,expected,form", SECRETS)
def test_a_secret_in_the_warehouse_is_refused_with_the_form_to_use(tmp_path, warehouse, expected, form):
    f, r = apply(tmp_path, merge(GOOD, id="sec", warehouse=warehouse))
    lines = errors_of(r)
    assert len(lines) == 1 and expected in lines[0] and form in lines[0], lines
    assert "hunter" not in r.output and "BEGIN" not in r.output  # the secret is not echoed either
    assert "sec" not in [p.id for p in open_store(load_settings()).list_projects()]


def test_business_words_in_free_text_mappings_are_not_secrets(tmp_path):
    _, r = apply(tmp_path, merge(GOOD, id="words", profile={"token_price": 0.1, "secret_menu": "yes"},
                                 warehouse={**GOOD["warehouse"], "descriptions": {"auth_tokens": "login tokens"}}))
    assert r.exit_code == 0, r.output
    lines = errors_of(apply(tmp_path, merge(GOOD, warehouse={"kind": "duckdb", "settings": {
        "path": "w", "glossary": {"pwd": "password"}, "token": "x"}}))[1])
    assert len(lines) == 1 and "warehouse.settings.token: secrets are never stored" in lines[0]


def test_a_secret_llm_key_is_refused(tmp_path):
    lines = errors_of(apply(tmp_path, merge(GOOD, llm={"provider": "anthropic", "api_key": "sk-ant-x"}))[1])
    assert len(lines) == 1 and "llm.api_key: secrets are never stored" in lines[0]
    assert "api_key_env:" in lines[0] and "secret_block:" in lines[0]


def test_references_to_secrets_are_fine(tmp_path):
    _, r = apply(tmp_path, merge(GOOD, id="refs", warehouse={**PG, "settings": {
        "dsn": "postgresql://assay@db.internal:5432/analytics", "password_env": "PGPW"}},
        llm={"provider": "anthropic", "api_key_env": "K", "secret_block": "anthropic-key"},
        notify={"webhook_url_env": "HOOK"}))
    assert r.exit_code == 0, r.output


def test_a_stored_secret_is_refused_at_run_start():
    """A project stored before the check (or written around it) does not run with a secret in it."""
    from assay.run.lifecycle import create_run

    store = open_store(load_settings())
    p = Project(id="old-secret", pack="ecommerce", warehouse=WarehouseConfig(
        kind="postgres", settings={"dsn": "postgresql://u:pw@h/db"}))
    store.save_project(p)
    with pytest.raises(ConfigError, match=r"project old-secret: warehouse.settings.dsn: holds a password"):
        create_run(store, store.get_project("old-secret"), run_id="oldsecret1")
    assert store.list_runs("old-secret", 10) == []


def test_run_start_applies_the_strict_checks():
    for bad in (Project(id="x", warehouse=WarehouseConfig(kind="oracle")),
                Project(id="x", warehouse=WarehouseConfig(settings={"path": "w", "pth": "w"})),
                Project(id="x", warehouse=WarehouseConfig(settings={"path": "w"}, row_cap=0)),
                Project(id="x", warehouse=WarehouseConfig(settings={"path": "w"}), llm=LLMConfig(provider="antropic")),
                Project(id="x", warehouse=WarehouseConfig(settings={"path": "w"}), schedule="every day")):
        with pytest.raises(ConfigError, match=r"^project x: "):
            check_project(bad)
    check_project(Project(id="x", warehouse=WarehouseConfig(
        settings={"path": "w"}, tenant_filter=TenantFilter(column="t", value=1))))


def test_strip_dsn_password():
    dsn, pw = strip_dsn_password("postgresql://u:s3cret@127.0.0.1:5432/test")
    assert pw == "s3cret" and "s3cret" not in dsn and "user=u" in dsn and "dbname=test" in dsn
    dsn, pw = strip_dsn_password("host=h user=u dbname=d password=p")
    assert pw == "p" and "password" not in dsn
    assert strip_dsn_password("host=h user=u dbname=d") == ("host=h user=u dbname=d", None)


def test_demo_postgres_dsn_password_is_not_stored():
    """`assay demo --postgres DSN` with a password stores the DSN without it and names the env var."""
    import os

    from assay.cli import _demo_postgres_settings
    from assay.config import DEMO_PASSWORD_ENV

    os.environ.pop(DEMO_PASSWORD_ENV, None)
    try:
        settings, note = _demo_postgres_settings("postgresql://assay:letmein@127.0.0.1:5432/test")
        assert "letmein" not in repr(settings) and settings["password_env"] == DEMO_PASSWORD_ENV
        assert DEMO_PASSWORD_ENV in note and "letmein" not in note
        assert os.environ[DEMO_PASSWORD_ENV] == "letmein"  # this process can still connect
        check_project(Project(id="d", warehouse=WarehouseConfig(kind="postgres", settings=settings)))
        assert _demo_postgres_settings("host=h user=u dbname=d") == ({"dsn": "host=h user=u dbname=d"}, "")
    finally:
        os.environ.pop(DEMO_PASSWORD_ENV, None)


# ---------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("over,expected", [
    ({"warehouse": {**GOOD["warehouse"], "statement_timeout_s": -5}},
     "warehouse.statement_timeout_s: -5.0 must be greater than 0"),
    ({"warehouse": {**GOOD["warehouse"], "statement_timeout_s": 0}}, "warehouse.statement_timeout_s: 0.0 must be"),
    ({"warehouse": {**GOOD["warehouse"], "row_cap": 0}}, "warehouse.row_cap: 0 must be at least 1"),
    ({"llm": {"analysis_budget_tokens": -1}}, "llm.analysis_budget_tokens: -1 must be at least 1"),
    ({"llm": {"max_tokens": 0}}, "llm.max_tokens: 0 must be at least 1"),
    ({"llm": {"prices": {"input": -3}}}, "llm.prices.input: -3.0 must not be negative"),
    ({"max_steps": 0}, "max_steps: 0 must be at least 1"),
    ({"min_steps": -2}, "min_steps: -2 must be at least 0"),
    ({"min_steps": 50, "max_steps": 10}, "min_steps: 50 is more than max_steps (10)"),
    ({"schedule": "61 * * * *"}, "schedule: '61 * * * *' is not a valid cron expression"),
    ({"schedule": "every monday"}, "schedule: 'every monday' is not a valid cron"),
    ({"schedule": "H 6 * * *"}, "schedule:"),
])
def test_bad_numbers_and_cron_are_refused_at_apply(tmp_path, over, expected):
    lines = errors_of(apply(tmp_path, merge(GOOD, **over))[1])
    assert len(lines) == 1 and expected in lines[0], lines


@pytest.mark.parametrize("expr", ["0 6 * * 1", "*/15 * * * *", "0 0 1 * *", "61 * * * *", "every day", "* * *",
                                  "0 6 * * MON-FRI", "0 25 * * *", "H 6 * * *", "R R * * *", "@daily", "",
                                  "0 6 * * 1 2020"])
def test_cron_check_agrees_with_prefect(expr):
    """Refused here exactly when Prefect's Cron schedule refuses it: `assay serve` never meets a
    schedule it cannot serve, and no valid schedule is refused."""
    from prefect.client.schemas.schedules import CronSchedule
    from pydantic import ValidationError

    try:
        CronSchedule(cron=expr)
        prefect_ok = True
    except ValidationError:
        prefect_ok = False
    assert (cron_error(expr) is None) == prefect_ok, expr


def test_yaml_alias_bomb_is_refused_and_not_stored(tmp_path):
    lines = ["id: bomb", "pack: ecommerce", "warehouse: {kind: duckdb, settings: {path: w}}",
             'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    prev = "a"
    for name in "bcdefghi":
        lines.append(f"{name}: &{name} [{', '.join(['*' + prev] * 9)}]")
        prev = name
    lines.append(f"profile: {{x: *{prev}}}")
    f, r = apply(tmp_path, "\n".join(lines) + "\n")
    out = errors_of(r)
    assert len(out) == 1 and "aliases expand past" in out[0] and str(f) in out[0]
    assert "bomb" not in [p.id for p in open_store(load_settings()).list_projects()]


def test_a_recursive_alias_is_refused(tmp_path):
    out = errors_of(apply(tmp_path, "id: rec\npack: ecommerce\nprofile: &x {self: *x}\n")[1])
    assert len(out) == 1 and "refer to themselves" in out[0]


def test_ordinary_anchors_still_work(tmp_path):
    text = ("id: anchors\npack: ecommerce\nwarehouse: &wh {kind: duckdb, settings: {path: w.duckdb}}\n"
            "profile: {tiers: &t [gold, silver], again: *t}\n")
    _, r = apply(tmp_path, text)
    assert r.exit_code == 0, r.output
    assert open_store(load_settings()).get_project("anchors").profile["again"] == ["gold", "silver"]


# ---------------------------------------------------------------------------- packs


def _pack(tmp_path, yaml_text):
    from assay.packs import BUILTIN_PACKS

    import shutil

    d = tmp_path / "pk"
    shutil.copytree(BUILTIN_PACKS / "generic", d)
    (d / "pack.yaml").write_text(yaml_text)
    return d


@pytest.mark.parametrize("text,expected", [
    ("name: p\nareas:\n  - {id: overview, name: O, description: d, keyword: [x]}\n",
     "areas[0].keyword: unknown key (did you mean keywords?)"),
    ("name: p\nareas:\n  - {id: overview, name: O, description: d, keywords: [x], priorty: 2}\n",
     "areas[0].priorty: unknown key (did you mean priority?)"),
    ("name: p\narea:\n  - {id: overview, name: O, description: d, keywords: [x]}\n",
     "area: unknown key (did you mean areas?)"),
    ("name: p\nprompts: {base_contxt: base_context.md}\nareas:\n"
     "  - {id: overview, name: O, description: d, keywords: [x]}\n",
     "prompts.base_contxt: unknown key (did you mean base_context?)"),
    ("name: p\nareas:\n  - {id: overview, name: O, description: d, keywords: [x]}\n"
     "categories: {vip: {area: []}}\n", "categories.vip.area: unknown key (did you mean areas?)"),
])
def test_pack_typos_are_one_line(tmp_path, text, expected):
    d = _pack(tmp_path, text)
    lines = errors_of(runner.invoke(app, ["packs", "validate", str(d)], catch_exceptions=False))
    assert len(lines) == 1 and expected in lines[0] and "pack.yaml" in lines[0], lines


def test_a_pack_typo_is_reported_before_the_files_other_errors(tmp_path):
    """A misspelt key leaves its field missing: it is usually the cause of the other errors, so it comes first
    (an area's typo was reported only once an earlier area's error and a missing prompt file were fixed)."""
    d = _pack(tmp_path, "name: p\nprompts: {exploration: nope.md}\nareas:\n"
                        "  - {id: overview, name: O, description: d, keywords: [x], priority: high}\n"
                        "  - {id: second, name: S, description: d, keywrds: [y]}\n"
                        "categories: {vip: {areas: [{id: vip, name: V, descripton: d, keywords: [v]}]}}\n")
    lines = errors_of(runner.invoke(app, ["packs", "validate", str(d)], catch_exceptions=False))
    assert [x.split("pack.yaml: ", 1)[1] for x in lines] == [
        "areas[1].keywrds: unknown key (did you mean keywords?)",
        "categories.vip.areas[0].descripton: unknown key (did you mean description?)"]
    _, r = apply(tmp_path, merge(GOOD, id="typo-pack", pack="p", pack_dir=str(d)))
    assert errors_of(r)[0].endswith("pack.yaml: areas[1].keywrds: unknown key (did you mean keywords?)")


def test_unknown_pack_and_category_suggest(tmp_path):
    lines = errors_of(apply(tmp_path, merge(GOOD, pack="ecomerce"))[1])
    assert len(lines) == 1 and "p.yaml: pack: unknown pack 'ecomerce' (did you mean ecommerce?)" in lines[0]
    lines = errors_of(apply(tmp_path, merge(GOOD, pack="gaming", category="match"))[1])
    assert len(lines) == 1, lines
    assert "p.yaml: category: 'match' is not a category of the gaming pack (did you mean match3?)" in lines[0]


def test_a_pack_typo_is_reported_with_the_files_other_errors(tmp_path):
    """A new user's file with three mistakes heard of one, the pack's, once the other two were fixed: every
    problem of the file is one line naming the file and the field, the pack's among them."""
    bad = merge(GOOD, pack="ecomerce", schedule="every monday")
    bad["warehouse"] = {**bad["warehouse"], "kind": "duckbd"}
    lines = errors_of(apply(tmp_path, bad)[1])
    fields = sorted(x.split("p.yaml: ", 1)[1].split(":", 1)[0] for x in lines)
    assert fields == ["pack", "schedule", "warehouse.kind"], lines


def test_missing_schema_and_empty_warehouse_are_one_line(tmp_path):
    import duckdb

    db = tmp_path / "w.duckdb"
    con = duckdb.connect(str(db))
    con.execute("CREATE TABLE orders (id INT)")
    con.close()
    empty = tmp_path / "empty.duckdb"
    duckdb.connect(str(empty)).close()
    f, r = apply(tmp_path, merge(GOOD, id="noschema", warehouse={"kind": "duckdb", "settings": {"path": str(db)},
                                                                 "schemas": ["nope"]}))
    assert errors_of(r) == [f"error: {f}: warehouse.schemas: schema 'nope' has no tables or does not exist (tables "
                            "were found in: main)"]  # a local file is read at apply (session 24)
    open_store(load_settings()).save_project(Project(id="noschema", warehouse=WarehouseConfig(
        kind="duckdb", settings={"path": str(db)}, schemas=["nope"])))  # ... a file changed since: the run's check
    lines = errors_of(runner.invoke(app, ["schema", "refresh", "noschema"], catch_exceptions=False))
    assert len(lines) == 1 and "warehouse.schemas: schema 'nope' has no tables or does not exist" in lines[0]
    _, r = apply(tmp_path, merge(GOOD, id="emptydb", warehouse={"kind": "duckdb", "settings": {"path": str(empty)}}))
    lines = errors_of(runner.invoke(app, ["schema", "refresh", "emptydb"], catch_exceptions=False))
    assert len(lines) == 1 and "the duckdb warehouse has no tables to analyse" in lines[0]


def test_discover_refuses_a_stored_secret_before_prefect_starts():
    store = open_store(load_settings())
    store.save_project(Project(id="cli-secret", warehouse=WarehouseConfig(
        kind="postgres", settings={"host": "h", "password": "hunter2"})))
    r = runner.invoke(app, ["discover", "cli-secret"], catch_exceptions=False)
    lines = errors_of(r)
    assert lines == ["error: project cli-secret: warehouse.settings.password: secrets are never stored in a project; "
                     "name where to read it instead: password_env: MY_PASSWORD (an environment variable) or "
                     "password_block: NAME (a Prefect Secret block)"]
    assert store.list_runs("cli-secret", 5) == []


def test_llm_descriptions_can_be_turned_off_in_the_project_file():
    """The README's switch for LLM table descriptions is a known key, not an 'unknown key' error."""
    from assay.config import validate_project_data

    p = validate_project_data({"id": "p", "pack": "ecommerce", "warehouse": {
        "kind": "duckdb", "settings": {"path": "w.duckdb", "llm_descriptions": False}}}, "p.yaml")
    assert p.warehouse.settings["llm_descriptions"] is False


def test_a_declared_pii_column_that_names_no_column_stops_the_run(tmp_path):
    """Session 15, a new user: `pii_columns: [customers.nosuchcol]` was accepted and the discovery ran without a
    word, so a typo leaves the column it meant unmasked. Like a misnamed schema, it is one line and no run (the
    schema phase and `assay doctor` both check it); a column given bare, by table or by schema.table, any case,
    passes, and a bare name that matches nothing (a list kept for many warehouses, as the demos' ``email``) is
    logged, not refused."""
    from assay.doctor import check_warehouse
    from assay.models import Project, WarehouseConfig
    from assay.schema.discovery import discover_schema
    from assay.settings import load_settings
    from assay.store import open_store
    from assay.warehouse import open_warehouse
    from tests.helpers import small_warehouse

    db = small_warehouse(tmp_path / "w.duckdb")
    store = open_store(load_settings())
    for ok in (["email"], ["customers.email"], ["main.customers.EMAIL"], ["full_name"]):
        p = Project(id="pii-ok", warehouse=WarehouseConfig(kind="duckdb", settings={"path": str(db)}, pii_columns=ok))
        wh = open_warehouse(p.warehouse)
        try:
            assert discover_schema(store, p, wh, refresh=True)
        finally:
            wh.close()
    bad = Project(id="pii-typo", warehouse=WarehouseConfig(kind="duckdb", settings={"path": str(db)},
                                                           pii_columns=["customers.emial"]))
    wh = open_warehouse(bad.warehouse)
    try:
        with pytest.raises(ConfigError, match=r"^warehouse.pii_columns: 'customers.emial' is no column of the "
                                              r"warehouse, so nothing would be masked for it \(did you mean "
                                              r"'customers.email'\?\)$"):
            discover_schema(store, bad, wh, refresh=True)
    finally:
        wh.close()
    with pytest.raises(ConfigError, match="customers.emial"):
        check_warehouse(bad)


def test_a_tenant_column_no_table_has_stops_the_run_on_a_cached_schema_too(tmp_path):
    """The session's review: the schema phase checked the tenant column only when it listed the tables, not on a
    schema cached by an earlier run (a tenant_filter changed to a typo between runs)."""
    from assay.models import Project, WarehouseConfig
    from assay.schema.discovery import discover_schema, schema_cache_key
    from assay.settings import load_settings
    from assay.store import open_store
    from assay.warehouse import open_warehouse
    from tests.helpers import small_warehouse

    db = small_warehouse(tmp_path / "w.duckdb")
    store = open_store(load_settings())
    p = Project(id="tenant-cached", warehouse=WarehouseConfig(kind="duckdb", settings={"path": str(db)}))
    wh = open_warehouse(p.warehouse)
    try:
        assert discover_schema(store, p, wh, refresh=True)
        from assay.models import TenantFilter

        typo = p.model_copy(update={"warehouse": p.warehouse.model_copy(
            update={"tenant_filter": TenantFilter(column="tenant_idd", value=1)})})
        with pytest.raises(ConfigError, match="no table of the warehouse has a column 'tenant_idd'"):
            discover_schema(store, typo, wh, key=schema_cache_key(p.warehouse))  # the cached schema
    finally:
        wh.close()


@pytest.mark.parametrize("kind, settings", [
    ("postgres", {"host": "127.0.0.1", "dbname": "shop", "user": "assay"}),
    ("mysql", {"host": "127.0.0.1", "database": "shop", "user": "assay"}),
    ("snowflake", {"account": "acme", "user": "assay", "database": "SHOP", "warehouse": "WH"}),
])
def test_a_named_password_variable_that_is_not_set_is_one_line(kind, settings, monkeypatch):
    """A new user (session 24): ``password_env: PGSHOP_PW`` unset connected without a password, and doctor said
    'role "assay" does not exist'. A named variable that is not set says so; one set to "" is an empty password."""
    from assay.errors import MissingKey
    from assay.warehouse import open_warehouse

    monkeypatch.delenv("SHOP_PW_UNSET", raising=False)
    cfg = WarehouseConfig(kind=kind, settings={**settings, "password_env": "SHOP_PW_UNSET"})
    with pytest.raises(MissingKey, match=r"no password: set the environment variable SHOP_PW_UNSET "
                                         r"\(warehouse.settings.password_env\)"):
        open_warehouse(cfg)


def test_a_files_mistakes_come_in_one_report(tmp_path):
    """A new user (session 26) fixed six mistakes of one file in five `project apply` runs: a refused value (analyst)
    hid the bounds, the cron and the time zone; a missing schema hid a misspelt PII column. Every problem of the file
    is one line of one report; once it is clean, every schema, PII column and tenant column the file does not hold."""
    import duckdb

    db = tmp_path / "shop.duckdb"
    con = duckdb.connect(str(db))
    con.execute("CREATE TABLE customers AS SELECT 1 AS id, 'a@b.c' AS email")
    con.close()
    wh = {"kind": "duckdb", "settings": {"path": "shop.duckdb"}}
    f, r = apply(tmp_path, merge(GOOD, id="many", analyst="stat", max_steps=-3, schedule="99 * * * *",
                                 timezone="Mars/Base", warehouse=wh))
    said = errors_of(r)
    assert [line.split(": ", 2)[2].split(":")[0] for line in said] == ["analyst", "max_steps", "schedule", "timezone"]
    f, r = apply(tmp_path, merge(GOOD, id="many", warehouse={**wh, "schemas": ["mian"], "pii_columns": [
        "customers.emial", "customers.fulname"], "tenant_filter": {"column": "tenant", "value": 1}}))
    said = errors_of(r)
    assert len(said) == 4 and all(line.startswith(f"error: {f}: warehouse.") for line in said), said
    assert "schema 'mian'" in said[0] and "'customers.emial'" in said[1] and "'customers.fulname'" in said[2]
    assert "tenant_filter.column" in said[3]
    assert "many" not in [p.id for p in open_store(load_settings()).list_projects()]
