"""Statistical analyst, session 7 (#17): labels in two columns are no finding, a key-named column of a few
repeated labels is a segment, and a segment climbing while the others fall is its own trend."""

from __future__ import annotations

import numpy as np
import pandas as pd

from assay.models import ColumnInfo, TableInfo
from assay.stats import detectors as D
from assay.stats.detectors.series import departs_alone
from assay.stats.planner import Profile

REF = '"main"."incidents"'


def months(n):
    return [pd.Timestamp("2023-01-01") + pd.DateOffset(months=i) for i in range(n)]


def test_the_same_label_in_two_columns_is_no_finding():
    # category and assignment group share their labels without one determining the other (Cramér's V < 0.8)
    rows = [("Database", "Database", 60), ("Database", "Service Desk", 40), ("Network", "Network", 55),
            ("Network", "Service Desk", 45), ("Software", "Service Desk", 70), ("Software", "Database", 30),
            ("Hardware", "Service Desk", 80), ("Hardware", "Network", 20)]
    df = pd.DataFrame(rows, columns=["category", "assignment_group", "n"])
    assert D.cramers_v(df.pivot_table(index="category", columns="assignment_group", values="n",
                                      fill_value=0).to_numpy()) < 0.8
    out = D.crosstab_concentration(df, {"dims": ["category", "assignment_group"]}, 1, "incidents", REF)
    named = [c.name for c in out]
    assert not any("Database incidents have assignment group Database" in x for x in named)
    assert not any("Network incidents have assignment group Network" in x for x in named)
    assert not any("Database incidents have category Database" in x for x in named)
    # a real association between different labels still is one
    assert "Most of the Hardware incidents have assignment group Service Desk" in named
    assert D.same_label("Database", " database") and not D.same_label("Service Desk", "Software")


def profile(cols, rows, distinct, avg_len=None):
    t = TableInfo(schema="main", name="incidents", row_count=rows, columns=[ColumnInfo(name=n, type=ty) for n, ty in cols])
    return Profile(table=t, rows=rows, distinct=distinct, avg_len=avg_len or {})


def test_a_key_named_column_of_few_repeated_labels_is_a_segment():
    p = profile([("number", "VARCHAR"), ("caller_id", "VARCHAR"), ("category", "VARCHAR"), ("customer_id", "BIGINT"),
                 ("sys_id", "VARCHAR"), ("ttr", "DOUBLE")], 500,
                {"number": 500, "caller_id": 6, "category": 5, "customer_id": 8, "sys_id": 500, "ttr": 480},
                avg_len={"caller_id": 10.0, "category": 8.0, "sys_id": 32.0, "number": 13.0})
    dims = p.dims()
    assert "caller_id" in dims and "category" in dims
    assert "customer_id" not in dims  # a numeric key is never a segment
    assert "sys_id" not in dims       # a key holding one value per row is an identifier
    assert p.is_label_key("caller_id") and not p.is_label_key("sys_id") and not p.is_label_key("customer_id")
    # a key with many values in few rows each identifies, it does not segment
    q = profile([("caller_id", "VARCHAR")], 100, {"caller_id": 40}, avg_len={"caller_id": 10.0})
    assert q.dims() == []


def test_a_segment_climbing_while_the_others_fall_is_its_own_trend():
    rng = np.random.default_rng(7)
    rows = []
    for i, m in enumerate(months(13)):
        rows.append((m, "Beth Anglin", 8 + 1.3 * i + float(rng.integers(-1, 2))))
        for a in ("Luke Wilson", "Fred Luddy", "Howard Johnson"):
            rows.append((m, a, max(1.0, 9 - 0.45 * i + float(rng.integers(-1, 2)))))
    df = pd.DataFrame(rows, columns=["month", "assigned_to", "n"])
    out = D.segment_series_changes(df, {"dim": "assigned_to", "measure": "n", "time": "opened_at", "trend": True},
                                   5, "incidents", REF)
    assert "The number of incidents for Beth Anglin is increasing over time" in [c.name for c in out if c.kind == "trend"]
    assert departs_alone(1.0, -0.7) and departs_alone(1.0, 0.4) and not departs_alone(1.0, 0.6)
    assert not departs_alone(-1.0, -0.8) and departs_alone(-1.0, 0.9)
