"""The re-verify deployment's flow: re-checks a run's insights and returns what changed; a bad run id is a
Failed state with one line."""

from __future__ import annotations

import duckdb

from assay_flows.flows.reverify import ReverifyParams, reverify_flow
from tests.unit.test_reverify import run  # noqa: F401  (the fixture)


def test_flow_reverifies_and_reports_changes(run):  # noqa: F811
    store, rid, db = run
    con = duckdb.connect(str(db))
    con.execute("DELETE FROM customers WHERE channel = 'paid' AND customer_id > 30")
    con.close()
    out = reverify_flow(ReverifyParams(run=rid))
    assert out == {"reverified": 2, "changed": ["I1", "I2"]}
    assert store.get_result(rid).insights[0].verdict_history[-1].source == "reverify"


def test_flow_bad_run_is_failed_state():
    state = reverify_flow(ReverifyParams(run="no-such-run"), return_state=True)
    assert state.is_failed() and "no run 'no-such-run'" in state.message
