"""Kruskal-Wallis beside ANOVA for a skewed measure, and NULLs of a measure explained by a status
column: planned from a profile, run by DuckDB, read by the detectors."""

from __future__ import annotations

import duckdb
import numpy as np
import pandas as pd
import pytest
from scipy import stats

from assay.models import ColumnInfo, TableInfo
from assay.stats import detectors as D
from assay.stats.planner import Planner, _profile_from_row


def _q(x: str) -> str:
    return '"' + x + '"'


@pytest.fixture(scope="module")
def shipments():
    rng = np.random.default_rng(7)
    n = 3000
    region = rng.choice(["north", "south", "east", "west"], n)
    scale = pd.Series(region).map({"north": 1.0, "south": 1.0, "east": 1.6, "west": 1.0}).to_numpy()
    days = np.round(rng.exponential(2.0, n) * scale, 1)  # skewed: a long tail of slow deliveries
    status = rng.choice(["delivered", "cancelled"], n, p=[0.9, 0.1])
    days = np.where(status == "cancelled", np.nan, days)
    df = pd.DataFrame({"shipment_id": np.arange(n), "region": region, "status": status, "delivery_days": days})
    con = duckdb.connect()
    con.execute('CREATE SCHEMA s; CREATE TABLE s.shipments AS SELECT * FROM df')
    t = TableInfo(schema="s", name="shipments", row_count=n,
                  columns=[ColumnInfo(name=c, type=ty) for c, ty in
                           (("shipment_id", "BIGINT"), ("region", "VARCHAR"), ("status", "VARCHAR"),
                            ("delivery_days", "DOUBLE"))])
    pl = Planner([t], _q, ["delivery"], goal="")
    row = con.execute(pl.profile_probe(t).sql).df().iloc[0].to_dict()
    probes = pl.plan({t.fqn: _profile_from_row(t, row)})
    return con, df, probes


def _detect(con, pr):
    out = con.execute(pr.sql).df()
    return D.detect_probe({"kind": pr.kind, "table": pr.table, **pr.meta.to_dict()}, out, 1, lambda f: '"s"."shipments"')


def test_kruskal_wallis_on_warehouse_ranks_matches_scipy_and_names_the_slow_region(shipments):
    con, df, probes = shipments
    rank = [pr for pr in probes if pr.kind == "rank_breakdown" and pr.meta.dim == "region"]
    assert len(rank) == 1
    cands = _detect(con, rank[0])
    assert len(cands) == 1 and cands[0].kind == "group_effect"
    c = cands[0]
    groups = [g["delivery_days"].dropna().to_numpy() for _, g in df.groupby("region")]
    h = stats.kruskal(*groups).statistic
    assert f"Kruskal-Wallis H = {h:.1f}" in c.description
    assert c.name.startswith("east has the highest median delivery days")
    assert con.execute(c.count_sql).fetchone()[0] == int((df["region"] == "east").sum())


def test_a_symmetric_measure_is_left_to_the_anova():
    df = pd.DataFrame({"region": ["a", "b", "c"], "n": [100, 100, 100], "rank_sum": [12000.0, 15000.0, 18150.0],
                       "ties": [0.0, 0.0, 0.0], "mean": [10.0, 11.0, 12.0], "median": [10.0, 11.0, 12.0],
                       "sd": [3.0, 3.0, 3.0]})
    assert D.kruskal_effects(df, {"dim": "region", "measure": "x"}, 1, "t", '"t"') == []
    df["median"] = [8.0, 9.0, 10.0]  # mean well above median: skewed
    assert [c.kind for c in D.kruskal_effects(df, {"dim": "region", "measure": "x"}, 1, "t", '"t"')] == ["group_effect"]


def test_nulls_of_a_measure_explained_by_a_status_column(shipments):
    con, df, probes = shipments
    pr = next(pr for pr in probes if pr.kind == "null_status")
    assert pr.meta.status == "status" and pr.meta.measure == "delivery_days"
    cands = _detect(con, pr)
    missing = int(df["delivery_days"].isna().sum())
    assert len(cands) == 1 and cands[0].kind == "null_reason"
    assert cands[0].name == f"{missing:,} shipments ({100 * missing / len(df):.1f}%) have no delivery days because their status is cancelled"
    assert con.execute(cands[0].count_sql).fetchone()[0] == missing


def test_a_status_that_does_not_say_why_explains_nothing():
    # empty rows spread over every status value: the status is not the reason
    df = pd.DataFrame({"value": ["open", "closed"], "n": [500, 500], "missing": [40, 45]})
    assert D.null_status_reason(df, {"measure": "x", "status": "status"}, 1, "t", '"t"') == []
