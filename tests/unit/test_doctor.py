"""`assay doctor PROJECT`: one screen, one line per part, a non-zero exit when something is unreachable."""

from __future__ import annotations

import yaml
from typer.testing import CliRunner

from assay.cli import app
from assay.doctor import FAIL, OK, SKIP, run_checks
from assay.llm import register_scripted
from assay.llm.scripted import ScriptedLLM
from assay.models import LLMConfig, Project, WarehouseConfig
from assay.settings import load_settings
from tests.helpers import small_warehouse


class _PingLLM(ScriptedLLM):
    def ping(self, timeout_s: float) -> str:
        self.pinged = timeout_s
        return "pinged-model via loopback"


register_scripted("doctor-echo", lambda cfg: ScriptedLLM(lambda req: "OK"))
register_scripted("doctor-ping", lambda cfg: _PingLLM(lambda req: (_ for _ in ()).throw(AssertionError("no call"))))


def _project(tmp_path, llm: LLMConfig, wh: WarehouseConfig | None = None) -> Project:
    db = small_warehouse(tmp_path / "w.duckdb")
    return Project(id="doc", pack="ecommerce", llm=llm,
                   warehouse=wh or WarehouseConfig(kind="duckdb", settings={"path": str(db)}))


def test_all_parts_reachable_with_a_one_token_completion(tmp_path):
    checks = run_checks(_project(tmp_path, LLMConfig(provider="scripted", model="doctor-echo")), load_settings())
    assert [c.part for c in checks] == ["warehouse", "llm", "store", "vector index"]
    assert [c.status for c in checks] == [OK] * 4, checks
    assert "duckdb" in checks[0].detail and "3 tables" in checks[0].detail
    assert "answered" in checks[1].detail


def test_the_llm_check_uses_the_providers_ping(tmp_path):
    checks = run_checks(_project(tmp_path, LLMConfig(provider="scripted", model="doctor-ping")), load_settings(),
                        llm_timeout_s=7)
    assert checks[1].status == OK and checks[1].detail == "pinged-model via loopback"


def test_no_llm_is_not_a_failure(tmp_path):
    checks = run_checks(_project(tmp_path, LLMConfig(provider="none")), load_settings())
    assert checks[1].status == SKIP and "statistical analyst" in checks[1].detail


def test_cli_one_screen_and_exit_code(tmp_path):
    bad = _project(tmp_path, LLMConfig(provider="openai", model="m", base_url="http://127.0.0.1:9/v1", timeout_s=3),
                   WarehouseConfig(kind="mysql", settings={"dsn": "mysql://root@127.0.0.1:1/x", "connect_timeout": 2}))
    f = tmp_path / "bad.yaml"
    f.write_text(yaml.safe_dump(bad.model_dump(mode="json", exclude_none=True)))
    res = CliRunner().invoke(app, ["doctor", str(f), "--llm-timeout", "3"])
    assert res.exit_code == 1, res.output
    assert "Traceback" not in res.output
    assert "cannot connect to 127.0.0.1:1/x" in " ".join(res.output.split())
    checks = run_checks(bad, load_settings(), llm_timeout_s=3)
    assert [c.status for c in checks][:2] == [FAIL, FAIL] and checks[2].status == OK
    good = _project(tmp_path, LLMConfig(provider="scripted", model="doctor-echo"))
    g = tmp_path / "good.yaml"
    g.write_text(yaml.safe_dump(good.model_dump(mode="json", exclude_none=True)))
    res = CliRunner().invoke(app, ["doctor", str(g)])
    assert res.exit_code == 0 and "ready" in res.output, res.output


def test_a_pii_column_no_table_has_fails_the_warehouse_check_named_for_what_it_is(tmp_path):
    # the README's example entry copied onto a warehouse without that column: the warehouse answers, the check fails
    # on the entry, and the closing line says the warehouse check failed, not that the warehouse is unreachable
    db = small_warehouse(tmp_path / "w.duckdb")
    f = tmp_path / "pii.yaml"
    f.write_text(yaml.safe_dump({"id": "doc", "pack": "ecommerce", "llm": {"provider": "none"},
                                 "warehouse": {"kind": "duckdb", "settings": {"path": str(db)},
                                               "pii_columns": ["customers.phone"]}}))
    res = CliRunner().invoke(app, ["doctor", str(f)])
    flat = " ".join(res.output.split())
    assert res.exit_code == 1 and "the warehouse check failed" in flat and "unreachable" not in flat, res.output
    from assay.settings import load_project_file

    checks = run_checks(load_project_file(f), load_settings())
    assert checks[0].status == FAIL and "'customers.phone' is no column of the warehouse" in checks[0].detail, checks
