"""Result projection: always valid JSON, always within budget, identifiers kept."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from assay.explore.projection import overflow, project

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=300),
    lambda children: st.lists(children, max_size=30) | st.dictionaries(st.text(max_size=12), children, max_size=12),
    max_leaves=200,
)


@settings(max_examples=300, deadline=None)
@given(data=json_values, budget=st.integers(min_value=120, max_value=6000))
def test_valid_and_within_budget(data, budget):
    s = project({"tool": "query", "ok": True, "data": data}, budget)
    json.loads(s)
    assert len(s) <= budget


def test_huge_list_is_halved_with_original_length():
    rows = [{"id": i, "name": f"n{i}", "blob": "x" * 300} for i in range(2000)]
    s = project({"tool": "query", "ok": True, "data": {"rows": rows}}, 4000)
    out = json.loads(s)
    assert len(s) <= 4000
    assert out["_truncated_from"]["data.rows"] == 2000
    assert out["data"]["rows"][0]["id"] == 0  # identifiers survive
    assert out["_values_shortened_to_chars"] in (160, 60, 24)  # the shortened values are said too (#25.4)


def test_deep_nesting_and_non_ascii():
    deep: dict = {"v": "ü" * 50}
    for _ in range(50):
        deep = {"k": deep, "ünïcødé": "日本語" * 20}
    s = project({"tool": "lookup_schema", "ok": True, "data": deep}, 1500)
    json.loads(s)
    assert len(s) <= 1500


def test_overflow_envelope_is_fixed_and_valid():
    s = overflow("query", False)
    assert json.loads(s)["data"] == {"_overflow": True}


def test_small_results_pass_unchanged():
    r = {"tool": "query", "ok": True, "data": {"rows": [{"a": 1}]}}
    assert json.loads(project(r)) == r


def test_hints_are_capped_at_three():
    r = {"tool": "query", "ok": False, "error": "x", "hints": ["a", "b", "c", "d"]}
    assert json.loads(project(r))["hints"] == ["a", "b", "c"]
