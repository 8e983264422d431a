"""`assay verify RUN [INSIGHT...]`: re-verification against today's warehouse, with a history of verdicts."""

from __future__ import annotations

import datetime as dt
import shutil

import duckdb
import pytest
from typer.testing import CliRunner

from assay.cli import app
from assay.errors import NotFound
from assay.models import (Claim, DiscoveryResult, DiscoveryRun, Insight, MetricKind, Project, RunStatus, Validation,
                          ValidationStatus, WarehouseConfig)
from assay.reverify import reverify
from assay.settings import load_settings
from assay.store import open_store
from tests.helpers import small_warehouse

PAID = "SELECT count(*) AS segment_value FROM customers WHERE channel = 'paid'"
RATE = ("SELECT avg(CASE WHEN channel = 'paid' THEN 1.0 ELSE 0 END) AS segment_value FROM customers")


@pytest.fixture()
def run(tmp_path_factory, request):
    src = small_warehouse(tmp_path_factory.mktemp("rv0") / "w.duckdb")
    db = tmp_path_factory.mktemp("rv") / "w.duckdb"
    shutil.copy(src, db)
    pid = f"rv{request.node.name[-6:]}".replace("[", "").replace("]", "")
    store = open_store(load_settings())
    store.save_project(Project(id=pid, pack="ecommerce", llm={"provider": "none"},
                               warehouse=WarehouseConfig(kind="duckdb", settings={"path": str(db)})))
    rid = f"reverify-{pid}"
    store.create_run(DiscoveryRun(id=rid, project_id=pid, status=RunStatus.completed))
    confirmed = Validation(status=ValidationStatus.confirmed)
    store.save_result(DiscoveryResult(
        run_id=rid, project_id=pid, domain="ecommerce", created_at=dt.datetime(2026, 11, 1, tzinfo=dt.timezone.utc),
        insights=[
            Insight(id="I1", area="acquisition", name="66 paid customers", description="There are 66 paid customers.",
                    affected_count=66, affected_entity="customers", validation=confirmed,
                    claims=[Claim(metric=MetricKind.count, entity="customers", segment="paid customers",
                                  segment_sql="channel = 'paid'", value=66, verified_value=66, query=PAID,
                                  verdict=ValidationStatus.confirmed)]),
            Insight(id="I2", area="acquisition", name="A third are paid", description="33% of customers are paid.",
                    validation=confirmed,
                    claims=[Claim(metric=MetricKind.share, measure="paid share", segment="paid customers",
                                  segment_sql="channel = 'paid'", value=0.33, query=RATE,
                                  verdict=ValidationStatus.confirmed)]),
        ]))
    return store, rid, db


def test_unchanged_warehouse_keeps_the_verdicts_and_records_history(run):
    store, rid, _ = run
    rows = reverify(store, rid)
    assert [(r.insight, r.before, r.now) for r in rows] == [("I1", "confirmed", "confirmed"),
                                                            ("I2", "confirmed", "confirmed")]
    ins = store.get_result(rid).insights[0]
    assert [h.source for h in ins.verdict_history] == ["discovery", "reverify"]
    assert ins.verdict_history[-1].claims[0]["verified_value"] == 66


def test_a_finding_that_stopped_holding_is_caught(run):
    store, rid, db = run
    con = duckdb.connect(str(db))
    con.execute("INSERT INTO customers SELECT i, 'new' || i || '@x.io', 'paid' FROM range(1000, 1200) t(i)")
    con.close()
    rows = {r.insight: r for r in reverify(store, rid, ["I1"])}
    assert list(rows) == ["I1"]  # only the chosen insight
    assert rows["I1"].before == "confirmed" and rows["I1"].now in ("adjusted", "rejected") and rows["I1"].changed
    saved = {i.id: i for i in store.get_result(rid).insights}
    assert saved["I1"].validation.status.value == rows["I1"].now
    assert saved["I1"].claims[0].verified_value == 266
    assert saved["I2"].verdict_history == []  # not chosen: untouched
    # a second re-run appends to the history
    reverify(store, rid, ["I1"])
    assert [h.source for h in store.get_result(rid).insights[0].verdict_history] == ["discovery", "reverify",
                                                                                     "reverify"]


def test_unknown_insight_is_one_clear_line(run):
    store, rid, _ = run
    with pytest.raises(NotFound, match="has no insight I9 \\(ids: I1, I2\\)"):
        reverify(store, rid, ["I9"])
    res = CliRunner().invoke(app, ["verify", rid, "I9"])
    assert res.exit_code != 0


def test_cli(run):
    store, rid, _ = run
    res = CliRunner().invoke(app, ["verify", rid])
    assert res.exit_code == 0, res.output
    assert "Re-verified 2 insight(s)" in res.output and "0 verdict(s) changed" in res.output


def test_show_lists_the_reverifications(run):
    store, rid, _ = run
    reverify(store, rid, ["I2"])
    res = CliRunner().invoke(app, ["show", rid])
    assert res.exit_code == 0 and res.output.count("re-verified 20") == 1


def test_the_cli_says_which_insights_it_left_out_as_repeats(run):
    """Session 15, a new user: after a second `make demo` every insight repeats the first run's, and `assay verify`
    printed "Re-verified 0 insight(s)" and nothing else. It now says which were left out and how to verify them."""
    store, rid, _ = run
    result = store.get_result(rid)
    result.insights[1].duplicate_of = "older-run:I2"
    store.save_result(result)
    res = CliRunner().invoke(app, ["verify", rid])
    assert res.exit_code == 0, res.output
    assert "Re-verified 1 insight(s)" in res.output
    assert "1 insight(s) repeat an earlier run's and were not re-verified" in " ".join(res.output.split())
    assert f"assay verify {rid} I2" in " ".join(res.output.split())
    res = CliRunner().invoke(app, ["verify", rid, "I2"])  # named: verified, and nothing said about repeats
    assert "Re-verified 1 insight(s)" in res.output and "repeat an earlier" not in res.output


def test_a_finding_the_warehouse_backs_less_is_a_failed_check(run):
    """The session-16 new user: `assay verify` exited 0 after a verdict turned rejected; a scheduled check could
    not alert on it. The table's numbers are never cut in two (a cut "claimed 0.163 vs 0" read as a baseline of 0)."""
    store, rid, db = run
    con = duckdb.connect(str(db))
    con.execute("INSERT INTO customers SELECT i, 'new' || i || '@x.io', 'paid' FROM range(1000, 1200) t(i)")
    con.close()
    res = CliRunner().invoke(app, ["verify", rid, "I1"])
    assert res.exit_code == 1
    assert "the warehouse backs 1 insight(s) less than their last verdict: I1" in " ".join(res.stderr.split())
    assert "266" in res.stdout  # the whole reasoning, with the number the warehouse gives now
    assert CliRunner().invoke(app, ["verify", rid, "I1"]).exit_code == 0  # unchanged since the last verdict
