"""CompactResult: kinds, boundaries, NaN/Inf, mixed, PII, determinism, golden JSON."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from assay.digest import build_compact_result, digest_json
from assay.limits import COMPACT_INLINE_THRESHOLD, DIGEST_KEPT_ROWS
from assay.pii import pii_columns
from tests.goldens import check_golden


def frame(n: int) -> pd.DataFrame:
    return pd.DataFrame({"i": np.arange(n), "s": [f"v{k % 3}" for k in range(n)]})


@pytest.mark.parametrize("n, all_rows, kept", [
    (0, 0, None), (1, 1, None), (10, 10, None), (20, 20, None), (21, None, DIGEST_KEPT_ROWS),
])
def test_row_boundaries(n, all_rows, kept):
    cr = build_compact_result(frame(n))
    assert cr.row_count == n
    assert (None if cr.all_rows is None else len(cr.all_rows)) == all_rows
    assert (None if cr.kept_rows is None else len(cr.kept_rows)) == kept
    assert cr.head_rows is None and cr.tail_rows is None  # each row is sent once
    assert cr.truncated == (kept is not None)  # never false when rows were dropped
    if kept:
        assert cr.cut.startswith(f"{kept} of {n} rows kept") and cr.kept_row_numbers[-1] == n
    assert COMPACT_INLINE_THRESHOLD == 20


def test_a_small_result_is_sent_once():
    """The real model saw a 13-row result three times (rows, head and tail)."""
    df = pd.DataFrame({"month": pd.date_range("2025-11-01", periods=13, freq="MS"), "rate": np.linspace(0.3, 0.4, 13)})
    text = digest_json(build_compact_result(df))
    assert text.count("2026-06-01T00:00:00") == 1 and "head_rows" not in text and "tail_rows" not in text


def test_a_long_series_keeps_the_rows_around_the_change():
    """A 38-month series kept only head 5 and tail 5 and lost the month where android fell."""
    months = pd.date_range("2023-01-01", periods=38, freq="MS")
    rows = []
    for i, m in enumerate(months):
        for platform in ("android", "ios"):
            drop = platform == "android" and i >= 20
            rows.append({"month": m, "platform": platform, "rate": 0.10 if drop else 0.40 + 0.001 * (i % 3)})
    cr = build_compact_result(pd.DataFrame(rows))
    assert cr.row_count == 76 and cr.truncated and cr.cut.startswith(f"{DIGEST_KEPT_ROWS} of 76 rows kept")
    kept = {(r["month"][:7], r["platform"]) for r in cr.kept_rows}
    assert ("2024-08", "android") in kept and ("2024-09", "android") in kept  # both sides of the break
    assert "ordered series by month" in cr.cut
    assert cr.kept_row_numbers == sorted(cr.kept_row_numbers) and len(cr.kept_rows) == DIGEST_KEPT_ROWS


def test_a_ranking_keeps_top_and_bottom():
    df = pd.DataFrame({"product": [f"p{i}" for i in range(40)], "revenue": np.arange(40, 0, -1) * 10.0})
    cr = build_compact_result(df)
    names = [r["product"] for r in cr.kept_rows]
    assert names[:6] == [f"p{i}" for i in range(6)] and names[-6:] == [f"p{i}" for i in range(34, 40)]
    assert "ranking by revenue" in cr.cut and "of 40 rows kept" in cr.cut


def test_every_cut_is_labelled():
    long = pd.DataFrame({"note": ["x" * 500, "short"], "n": [1, 2]})
    cr = build_compact_result(long)
    assert cr.cut == "long values shortened in column(s): note" and cr.all_rows[0]["note"].endswith("…")
    capped = build_compact_result(frame(16), total_rows=5000, truncated=True)
    assert capped.truncated and capped.cut == "16 of 5000 rows kept (the row cap)"


def test_number_stats_exclude_nan_and_inf():
    df = pd.DataFrame({"x": [1.0, 2.0, 3.0, 4.0, np.nan, np.inf, -np.inf]})
    col = build_compact_result(df).columns[0]
    assert col.kind.value == "number"
    assert col.null_count == 3  # NaN, +Inf, -Inf
    assert (col.min, col.p25, col.median, col.p75, col.max) == (1.0, 1.75, 2.5, 3.25, 4.0)  # linear interpolation
    assert col.distinct == 4


def test_kinds():
    df = pd.DataFrame({
        "n": [1, 2, 3], "s": ["a", "b", "a"], "b": [True, False, True],
        "t": pd.to_datetime(["2026-01-01", "2026-03-01", "2026-02-01"]), "z": [None, None, None],
        "m": [1, "x", 2.5],
    })
    kinds = {c.name: c.kind.value for c in build_compact_result(df).columns}
    assert kinds == {"n": "number", "s": "string", "b": "boolean", "t": "timestamp", "z": "null", "m": "mixed"}
    cols = {c.name: c for c in build_compact_result(df).columns}
    assert cols["t"].min_time == "2026-01-01T00:00:00" and cols["t"].max_time == "2026-03-01T00:00:00"
    assert [(v.value, v.count) for v in cols["b"].top] == [(True, 2), (False, 1)]
    assert [(v.value, v.count) for v in cols["s"].top] == [("a", 2), ("b", 1)]


def test_top_values_only_for_low_cardinality_strings():
    low = pd.DataFrame({"s": [f"v{i % 20}" for i in range(100)]})
    high = pd.DataFrame({"s": [f"v{i % 21}" for i in range(100)]})
    assert build_compact_result(low).columns[0].top is not None
    assert build_compact_result(high).columns[0].top is None  # PII guard: no values above 20 distinct


def test_pii_columns_masked_in_rows_and_top():
    df = pd.DataFrame({"email": ["a@x.io", "b@x.io"], "secret_code": ["k1", "k2"], "n": [1, 2]})
    cr = build_compact_result(df, pii=["secret_code"])
    text = digest_json(cr)
    assert "a@x.io" not in text and "k1" not in text
    assert cr.all_rows[0]["email"] == "[masked]" and cr.all_rows[0]["n"] == 1


def test_a_number_about_a_pii_named_channel_is_not_masked():
    """Round 18 (ecommerce): a monthly breakdown's ``email_rev`` (revenue of the e-mail channel) reached the model as
    "[masked]". No identifier is a fraction, and only the digit kinds (phone, zip, ssn, card, ip) are integers: a
    float or a count named after e-mail is shown; an address, a phone stored as digits and a declared column are
    still masked."""
    df = pd.DataFrame({"email_rev": [11854.5, 2723.25], "email_orders": [12, 30], "phone": [5551234567, 5559876543],
                       "email": ["a@x.io", "b@x.io"], "zip_code": [10115, 80331], "amount": [3.5, 4.5]})
    cr = build_compact_result(df, pii=["amount"])
    row = cr.all_rows[0]
    assert row["email_rev"] == 11854.5 and row["email_orders"] == 12
    assert row["email"] == row["phone"] == row["zip_code"] == row["amount"] == "[masked]"
    assert "5551234567" not in digest_json(cr) and "a@x.io" not in digest_json(cr)
    # without the values' types (a schema's column names) the name alone decides, as before
    assert pii_columns(["email_rev", "n"]) == {"email_rev"}


def test_a_number_is_an_identifier_when_a_digit_kind_ends_its_name():
    """Review of session 14: a date of birth stored as yyyymmdd and a phone read into a float column are identifiers
    (masked whatever their numeric type), while ``phone_orders`` and ``mobile_sessions`` count a channel's and a
    platform's activity (shown, as ``email_rev`` is). A masked number or timestamp keeps its null and distinct
    counts, never a value: no extreme, no quantile, no first or last time."""
    df = pd.DataFrame({"dob": [19800407, 19810430, 19800407], "contact_phone": [5550001234.0, 5550009876.0, None],
                       "phone_orders": [30, 40, 50], "mobile_sessions": [7, 8, 9], "phone_rev": [1.5, 2.5, 3.5],
                       "date_of_birth": pd.to_datetime(["1980-04-07", "1981-04-30", None])})
    cr = build_compact_result(df)
    row = cr.all_rows[0]
    assert row["dob"] == row["contact_phone"] == row["date_of_birth"] == "[masked]"
    assert row["phone_orders"] == 30 and row["mobile_sessions"] == 7 and row["phone_rev"] == 1.5
    text = digest_json(cr)
    assert "1980" not in text and "19810430" not in text and "555000" not in text
    by_name = {c.name: c for c in cr.columns}
    assert (by_name["dob"].distinct, by_name["dob"].null_count) == (2, 0)  # not "0 distinct": the count is kept
    assert (by_name["contact_phone"].distinct, by_name["contact_phone"].null_count) == (2, 1)
    born = by_name["date_of_birth"]
    assert born.min_time is None and born.max_time is None and (born.distinct, born.null_count) == (2, 1)
    assert pii_columns(["zip", "ip_count", "hotel"], types={"zip": pa.int64(), "ip_count": pa.int64(),
                                                            "hotel": pa.int64()}) == {"zip"}


def test_deterministic_bytes():
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"a": rng.normal(size=500), "b": rng.choice(["x", "y", "z"], 500),
                       "c": pd.date_range("2026-01-01", periods=500, freq="h")})
    assert digest_json(build_compact_result(df)) == digest_json(build_compact_result(df.copy()))
    assert digest_json(build_compact_result(df)) == digest_json(build_compact_result(pa.Table.from_pandas(df)))


def test_truncated_result_reports_true_count():
    cr = build_compact_result(frame(30), total_rows=5000, truncated=True)
    assert cr.row_count == 5000 and cr.truncated


def test_duplicate_column_names_are_kept_apart():
    t = pa.Table.from_arrays([pa.array([1]), pa.array([2])], names=["id", "id"])
    cr = build_compact_result(t)
    assert [c.name for c in cr.columns] == ["id", "id_2"]
    assert cr.all_rows == [{"id": 1, "id_2": 2}]


def test_json_has_no_nan():
    df = pd.DataFrame({"x": [np.nan, 1.5, math.inf]})
    text = digest_json(build_compact_result(df))
    assert "NaN" not in text and "Infinity" not in text
    json.loads(text)


def test_golden():
    df = pd.DataFrame({
        "channel": ["organic", "paid", "organic", "email", "paid", "organic", None, "paid", "organic", "organic",
                    "paid", "email"],
        "revenue": [120.5, 80.0, 99.9, 10.0, 55.5, 300.0, 12.0, np.nan, 45.0, 77.7, 66.6, 5.0],
        "orders": list(range(12)),
        "first_at": pd.date_range("2026-01-01", periods=12, freq="D"),
        "active": [True, False] * 6,
    })
    got = digest_json(build_compact_result(df))
    check_golden("digest/12_rows.txt", got, "the CompactResult JSON of a 12-row frame with every kind of column, "
                 "as a model reads it")


def test_bytes_cap_sheds_rows_never_statistics():
    from assay.digest import cap_bytes

    df = pd.DataFrame({"id": range(15), "text": ["x" * 150] * 15})
    cr = build_compact_result(df)
    capped = cap_bytes(cr, 1000)
    assert len(digest_json(capped).encode()) <= 1000
    assert capped.columns == cr.columns and capped.row_count == 15  # statistics kept
    assert capped.all_rows is None and len(capped.kept_rows) < 15 and capped.truncated
    assert capped.cut == f"{len(capped.kept_rows)} of 15 rows kept (the digest's byte cap)"
    assert cap_bytes(cr, 10**6) is cr  # under the cap: untouched


@pytest.mark.parametrize("values", [
    np.arange(1000), np.array([5] * 7 + [9] * 3), np.random.default_rng(1).integers(-50, 50, 5000),
    np.random.default_rng(2).integers(0, 10**9, 5000), np.random.default_rng(3).normal(size=4001),
])
def test_quantiles_and_distinct_equal_numpy(values):
    col = build_compact_result(pd.DataFrame({"v": values})).columns[0]
    want = np.quantile(values.astype(float), [0, 0.25, 0.5, 0.75, 1], method="linear")
    got = [col.min, col.p25, col.median, col.p75, col.max]
    assert np.allclose(got, [float(f"{w:.6g}") for w in want])
    assert col.distinct == len(np.unique(values))


def test_integer_counts_stay_integers():
    """A real model read ``SUM(visits)`` back as 1234.0: DuckDB's SUM of integers is a numeric(38, 0)
    (PostgreSQL's a numeric), which the digest rendered as a float. Counts render as integers, in the
    rows and in the column statistics, exactly; real decimals stay decimals."""
    import duckdb

    t = duckdb.sql("SELECT g, sum(x) AS visits, count(*) AS n, sum(x * 1.5)::DECIMAL(10, 2) AS cost, "
                   "sum(x) + 1234567 AS big FROM (SELECT x % 3 AS g, x FROM range(10) r(x)) GROUP BY g "
                   "ORDER BY g").to_arrow_table()
    cr = build_compact_result(t)
    text = digest_json(cr)
    assert cr.all_rows[0] == {"g": 0, "visits": 18, "n": 4, "cost": 27.0, "big": 1234585}
    assert '"visits":18,' in text and '"visits":18.0' not in text
    cols = {c.name: c for c in cr.columns}
    assert (cols["visits"].min, cols["visits"].max) == (12, 18) and isinstance(cols["visits"].max, int)
    assert (cols["n"].min, cols["n"].max) == (3, 4) and isinstance(cols["n"].min, int)
    assert cols["big"].max == 1234585  # exact, not 1.23458e6
    assert isinstance(cols["cost"].max, float) and cols["cost"].p25 == 20.25
    assert '"min":12,' in text


def test_the_rows_the_explorer_was_shown_stay_in_the_digest_and_a_byte_cap_sheds_the_least_signal_first():
    """Round 7: the explorer was shown 40 of a 108-row result and cited a number from one of them; the step's digest
    kept its own 12 signal rows only, so the analysis could not read (or ground) it. The digest keeps the rows the
    explorer saw; when the byte cap cuts it, the rows around the series' change go last, not whichever rows are
    last."""
    from assay.digest import cap_bytes

    months = pd.date_range("2017-01-01", periods=108, freq="MS")
    value = np.where(np.arange(108) < 80, 100.0, 40.0) + np.arange(108) % 3
    df = pd.DataFrame({"month": months, "orders": value, "note": ["x" * 60] * 108})
    plain = build_compact_result(df)
    assert len(plain.kept_rows) == 12 and 57 not in plain.kept_row_numbers
    seen = build_compact_result(df, keep=range(40, 60))
    assert {n for n in range(41, 61)} <= set(seen.kept_row_numbers)  # the 20 rows shown, 1-based
    assert set(plain.kept_row_numbers) <= set(seen.kept_row_numbers)  # and the signal rows
    assert "and the 20 other rows the explorer was shown" in seen.cut
    capped = cap_bytes(seen, 2500)
    assert len(digest_json(capped).encode()) <= 2500 and capped.row_count == 108
    assert {80, 81} <= set(capped.kept_row_numbers)  # the change (row 80 -> 81) outlives the rows around it
    assert len(capped.kept_row_numbers) < len(seen.kept_row_numbers)


def _by_category_then_month(drop_in: str = "electronics") -> pa.Table:
    """72 rows of monthly revenue per category, ordered by category and then month (``ORDER BY 2, 1``): large
    categories wobble around 40,000; the small one falls from 2,000 to 1,000 in its last two months."""
    rng = np.random.default_rng(7)
    months = pd.date_range("2025-11-01", periods=12, freq="MS")
    rows = []
    for cat in ("beauty", "books", drop_in, "fashion", "home", "toys"):
        for i, m in enumerate(months):
            if cat == drop_in:
                value = 2000.0 if i < 10 else 1000.0
            else:
                value = 40000.0 + rng.normal(0, 1500)
            rows.append({"month": m, "category": cat, "revenue": round(value, 2)})
    return pa.Table.from_pylist(rows)


def test_a_series_per_group_ordered_by_group_keeps_each_group_s_end_and_a_small_group_s_break():
    """Round 12 (ecommerce): monthly revenue by category, ordered by category then month (72 rows), was read as no
    series at all (its month column runs 12 times) and cut to its first and last rows: the rows where electronics
    fell, in the middle of the table, were dropped, and the model spent a step to get them back. A series per group
    is a series; every group's last row is kept, and a change is measured against its own group's scale, so a small
    group's halving is not hidden by the large groups' wobble."""
    from assay.rows import select_rows, shape_of

    table = _by_category_then_month()
    assert shape_of(table) == ("series", "month")
    for k in (40, 24):
        positions, how = select_rows(table, k)
        rows = table.take(pa.array(positions)).to_pylist()
        kept = {(r["category"], r["month"].strftime("%Y-%m")) for r in rows}
        assert ("electronics", "2026-08-01"[:7]) in kept and ("electronics", "2026-09") in kept, (k, sorted(kept))
        assert all((c, "2026-10") in kept for c in ("beauty", "books", "electronics", "fashion", "home", "toys"))
        assert "ordered series by month" in how and len(positions) == k
    # a table whose date column runs out of order within a group is no series
    shuffled = table.take(pa.array(np.random.default_rng(1).permutation(72)))
    assert shape_of(shuffled)[0] != "series"


def test_an_empty_result_with_a_date_and_a_group_column_has_a_shape():
    """shape_of on no rows (a date, a category and a number column, as an empty month x category result has): the
    series-per-group test reads no group, it does not fail on an empty reduction (review, session 12)."""
    from assay.rows import shape_of

    empty = pa.table({"month": pa.array([], pa.date32()), "category": pa.array([], pa.string()),
                      "revenue": pa.array([], pa.float64())})
    assert shape_of(empty)[0] != "series"


def test_a_long_series_per_group_is_cut_in_one_pass():
    """20,000 groups of 5 months (100,000 rows, the most a series may hold): each group's level is one vectorised
    pass, not a Python call per group per column (12.9 s on the session's machine before, 0.7 s after; review,
    session 12)."""
    import datetime as dt
    import time

    from assay.rows import select_rows

    n_groups, per = 20_000, 5
    rng = np.random.default_rng(0)
    table = pa.table({"grp": [f"g{i}" for i in range(n_groups) for _ in range(per)],
                      "month": [dt.date(2024, m, 1) for m in range(1, per + 1)] * n_groups,
                      "a": rng.normal(size=n_groups * per), "b": rng.normal(size=n_groups * per)})
    t0 = time.process_time()  # CPU, not wall: a loaded machine stretches the wall
    positions, how = select_rows(table, 40)
    assert time.process_time() - t0 < 15 and how.startswith("ordered series by month") and len(positions) == 40


def test_a_mid_sized_result_keeps_every_row_for_the_chart_masked_and_only_there():
    """A monthly series by platform (36 rows) kept 12 rows in its digest, so the report drew no chart of the change
    it showed. Its rows are kept beside the digest (masked alike), never inside it (the digest is what prompts read)."""
    from assay.analysis.render import render_query_results
    from assay.digest import chart_rows
    from assay.limits import CHART_COLUMNS, CHART_ROWS
    from assay.models import ExplorationStep, StepAction

    months = pd.date_range("2025-11-01", periods=12, freq="MS")
    df = pd.DataFrame({"month": np.repeat(months, 3), "platform": ["android", "ios", "web"] * 12,
                       "email": ["a@x.io"] * 36, "rate": np.linspace(0.1, 0.5, 36)})
    rows = chart_rows(df)
    assert len(rows) == 36 and rows[0]["platform"] == "android" and rows[35]["rate"] == pytest.approx(0.5)
    assert {r["email"] for r in rows} == {"[masked]"}  # the digest's masking
    digest = build_compact_result(df)
    assert digest.all_rows is None and len(digest.kept_rows) < 36
    assert "rate" in digest_json(digest) and "chart_rows" not in digest_json(digest)
    step = ExplorationStep(run_id="r", step=1, action=StepAction.query, query="SELECT 1", digest=digest,
                           chart_rows=rows)
    prompt = render_query_results([step])
    assert prompt.count('"platform"') <= len(digest.kept_rows) + 1 and "chart_rows" not in prompt
    # a result the digest holds whole, one too long or too wide to draw: nothing kept beside it
    assert chart_rows(df.head(COMPACT_INLINE_THRESHOLD)) is None
    assert chart_rows(pd.DataFrame({"x": range(CHART_ROWS + 1)})) is None
    assert chart_rows(pd.DataFrame({f"c{i}": range(30) for i in range(CHART_COLUMNS + 1)})) is None
    assert chart_rows(pd.DataFrame({f"c{i}": range(60) for i in range(10)})) is not None  # a per-level breakdown
    assert chart_rows(pd.DataFrame({f"c{i}": range(400) for i in range(12)})) is None  # over CHART_CELLS values
    assert chart_rows(df, total_rows=5000) is None  # the row cap cut it: a part drawn as the whole misleads
    assert chart_rows(df, truncated=True) is None
    assert chart_rows(pd.DataFrame({"k": range(400), "note": ["x" * 300] * 400})) is None  # over CHART_BYTES
