"""Golden fixtures of what a model and a person read: the prompts (exploration, one area, recommendations,
verification), the Markdown report and the CLI's ``show``. Each is a small file under tests/data/golden/ with
one line that says why; a missing or changed file fails (``pytest --update-goldens`` to accept a change).
"""

from __future__ import annotations

import datetime as dt

import pandas as pd
import pytest
from typer.testing import CliRunner

from assay.analysis.analyze import build_area_prompt
from assay.digest import build_compact_result
from assay.explore.prompt import render_exploration_prompt
from assay.models import (
    AreaLog,
    Claim,
    ColumnInfo,
    DiscoveryResult,
    DiscoveryRun,
    ExpectedImpact,
    ExplorationStep,
    Insight,
    Project,
    Recommendation,
    RunType,
    StepAction,
    TableInfo,
    TenantFilter,
    Validation,
    ValidationStatus,
    WarehouseConfig,
)
from assay.packs import load_pack
from assay.recommend import recommendation_prompt
from assay.report.markdown import render_markdown
from assay.schema.catalog import render_catalog
from tests.goldens import GOLDEN, check_golden, read_golden, why_line

WHEN = dt.datetime(2026, 3, 2, 9, 30, tzinfo=dt.timezone.utc)


def tables() -> list[TableInfo]:
    def t(name, cols, rows, desc=""):
        return TableInfo(schema="shop", name=name, row_count=rows, description=desc,
                         columns=[ColumnInfo(name=n, type=ty) for n, ty in cols])

    return [
        t("customers", [("customer_id", "BIGINT"), ("tenant_id", "INTEGER"), ("email", "VARCHAR"),
                        ("channel", "VARCHAR"), ("signed_up_at", "TIMESTAMP")], 2_000, "one row per customer"),
        t("orders", [("order_id", "BIGINT"), ("customer_id", "BIGINT"), ("tenant_id", "INTEGER"),
                     ("amount", "DECIMAL(12,2)"), ("status", "VARCHAR"), ("ordered_at", "TIMESTAMP")], 15_000),
        t("order_items", [("order_id", "BIGINT"), ("sku", "VARCHAR"), ("qty", "INTEGER"),
                          ("price", "DECIMAL(10,2)")], 40_000),
    ]


def project() -> Project:
    return Project(id="shop", pack="ecommerce", profile={"market": "EU", "currency": "EUR"},
                   warehouse=WarehouseConfig(kind="duckdb", schemas=["shop"], settings={"path": "shop.duckdb"},
                                             tenant_filter=TenantFilter(column="tenant_id", value=7)))


def steps() -> list[ExplorationStep]:
    by_channel = pd.DataFrame({"channel": ["organic", "paid", "email"], "orders": [8_100, 5_200, 1_700],
                               "revenue": [402_113.5, 198_877.25, 51_020.0]})
    by_month = pd.DataFrame({"month": pd.date_range("2025-01-01", periods=6, freq="MS"),
                             "cancelled_share": [0.031, 0.029, 0.034, 0.052, 0.061, 0.066]})
    return [
        ExplorationStep(run_id="g", step=3, action=StepAction.query, purpose="orders and revenue per channel",
                        query="SELECT c.channel, count(*) AS orders, sum(o.amount) AS revenue FROM shop.orders o "
                              "JOIN shop.customers c USING (customer_id) WHERE o.tenant_id = 7 AND c.tenant_id = 7 "
                              "GROUP BY 1 ORDER BY 2 DESC",
                        row_count=3, digest=build_compact_result(by_channel), created_at=WHEN),
        ExplorationStep(run_id="g", step=5, action=StepAction.query, purpose="cancelled share by month",
                        query="SELECT date_trunc('month', ordered_at) AS month, avg((status = 'cancelled')::INT) "
                              "AS cancelled_share FROM shop.orders WHERE tenant_id = 7 GROUP BY 1 ORDER BY 1",
                        row_count=6, digest=build_compact_result(by_month), created_at=WHEN),
    ]


def insights() -> list[Insight]:
    return [
        Insight(id="revenue-1", area="revenue", name="Cancellations doubled since April",
                description="The share of cancelled orders rose from 3.1% in January to 6.6% in June.",
                severity="high", affected_count=990, affected_entity="orders", source_steps=[5],
                indicators=["cancelled_share"], discovered_at=WHEN,
                claims=[Claim(metric="share", measure="cancelled orders", entity="orders", segment="June 2025",
                              segment_sql="ordered_at >= DATE '2025-06-01'", baseline="January 2025",
                              value=0.066, baseline_value=0.031, source_steps=[5], verdict="confirmed",
                              verified_value=0.066, verified_baseline_value=0.031, grounded=True)],
                validation=Validation(status=ValidationStatus.confirmed, claimed_count=990, verified_count=990)),
        Insight(id="customer-1", area="customer", name="Paid customers order less often",
                description="Paid-channel customers place 35% fewer orders than organic ones.",
                severity="medium", affected_count=640, affected_entity="customers", source_steps=[3],
                discovered_at=WHEN,
                validation=Validation(status=ValidationStatus.adjusted, claimed_count=640, verified_count=702)),
        Insight(id="customer-2", area="customer", name="Email orders are small",
                description="Orders from the email channel are a tenth of all orders.", severity="low",
                source_steps=[3], discovered_at=WHEN, duplicate_of="customer-1"),
    ]


def result() -> DiscoveryResult:
    recs = [Recommendation(id="rec-1", title="Find the cause of the cancellations", priority=1, effort="low",
                           description="Break the cancelled orders of May and June down by reason and carrier.",
                           target_segment="orders since April", segment_size=2_900,
                           expected_impact=ExpectedImpact(metric="cancelled share", estimated_improvement="-2 pts"),
                           related_insight_ids=["revenue-1"])]
    return DiscoveryResult(run_id="golden0001", project_id="shop", domain="ecommerce", analyst="llm",
                           run_type=RunType.partial, total_steps=12, duration_s=184.4, insights=insights(),
                           recommendations=recs, created_at=WHEN,
                           analysis_log=[AreaLog(area="revenue", ok=True, insights=1),
                                         AreaLog(area="customer", ok=True, insights=2),
                                         AreaLog(area="product", ok=True, note="no explored step carries evidence "
                                                                             "for this area: no insights"),
                                         AreaLog(area="marketing", ok=False, error="LLM overloaded (transient)")],
                           errors=["marketing: LLM overloaded (transient)"])


# ---------------------------------------------------------------- prompts


def test_exploration_prompt():
    p = project()
    pack = load_pack("ecommerce")
    catalog = render_catalog(tables()).text
    text = render_exploration_prompt(p, pack, catalog, 30, previous_context="- avoid: Email orders are small",
                                     goal="why did cancellations rise?", tools=False)
    check_golden("prompts/exploration_ecommerce.txt", text,
                 "the explorer's system prompt (JSON-action protocol, tenant rule, goal, catalog) as the model reads it")


def test_area_prompt():
    pack = load_pack("ecommerce")
    area = pack.areas[0]
    text = build_area_prompt(pack, area, steps(), previous_context="", profile="- market: EU", dataset="shop",
                             goal="why did cancellations rise?",
                             explorer_summary="Cancellations rose from April (step 5); paid is second (step 3).")
    check_golden(f"prompts/area_{area.id}.txt", text,
                 "one area's analysis prompt: digests of the picked steps, the explorer's summary, the contract")


def test_recommendation_prompt():
    pack = load_pack("ecommerce")
    text = recommendation_prompt(pack, insights()[:2], previous_context="", profile="- market: EU",
                                 today=dt.date(2026, 3, 2), goal="")
    check_golden("prompts/recommendations.txt", text,
                 "the recommendations prompt over validated insights (no goal given), with its contract")


def test_verification_prompt():
    from assay import limits
    from assay.validate.verify import VERIFY_PROMPT, render_evidence

    evidence = render_evidence(insights()[0], {s.step: s for s in steps()})
    text = VERIFY_PROMPT.format(evidence=evidence, catalog=render_catalog(tables()).text,
                                max_lookups=limits.MAX_LOOKUPS_PER_VERIFICATION)
    check_golden("prompts/verify_count.txt", text,
                 "the verifier's count prompt: the cited step's SQL first, then the catalog")


# ---------------------------------------------------------------- what a person reads


def test_markdown_report():
    check_golden("report/partial_run.md", render_markdown(result()),
                 "the Markdown report (Prefect artifact, assay report --md) of a partial run with every verdict kind")


def test_cli_show(monkeypatch):
    from assay import cli
    from assay.settings import load_settings
    from assay.store import open_store

    store = open_store(load_settings())
    r = result()
    store.create_run(DiscoveryRun(id=r.run_id, project_id=r.project_id, analyst="llm"))
    store.save_result(r)
    monkeypatch.setattr(cli.out, "_width", 100)  # the terminal's width decides the rules and the table
    out = CliRunner().invoke(cli.app, ["show", "golden00"], catch_exceptions=False)
    assert out.exit_code == 0, out.output
    padded = [line for line in out.output.splitlines() if line != line.rstrip()]
    assert not padded, padded  # lines padded to the terminal's width with spaces (copying them copied those)
    check_golden("cli/show_partial_run.txt", out.output,
                 "`assay show` of a partial run: verdict badges, a repeat, a failed area, recommendations")


# ---------------------------------------------------------------- the fixtures themselves


def test_every_golden_file_says_why():
    files = [p for p in GOLDEN.rglob("*") if p.is_file() and p.suffix in (".sql", ".txt", ".md")]
    assert files
    for p in files:
        head, _ = read_golden(p)
        assert head.startswith(why_line(p, "x")[:6]) and len(head) > 12, f"{p.name}: first line must say why"


def test_a_missing_golden_fails(tmp_path, monkeypatch):
    import tests.goldens as g

    monkeypatch.setattr(g, "GOLDEN", tmp_path)
    monkeypatch.setattr(g, "_update", False)
    with pytest.raises(pytest.fail.Exception, match="missing"):
        check_golden("nothing.txt", "x", "a test")
    assert not (tmp_path / "nothing.txt").exists()  # nothing is written without the update flag
    (tmp_path / "nothing.txt").write_text("# why: a test\ny\n")
    with pytest.raises(pytest.fail.Exception, match="changed"):
        check_golden("nothing.txt", "x", "a test")
    check_golden("nothing.txt", "y", "a test")
