"""Project any tool result into a character budget, always as valid JSON.

Identifiers and ranking values are kept; long strings are trimmed; lists are
halved with their original lengths recorded under ``_truncated_from``; deep
nesting is cut with a marker. If nothing else fits, a fixed overflow envelope
is returned: losing the data beats chopping JSON mid-value.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..limits import TOOL_RESULT_BUDGET_CHARS

KEEP_KEYS = {"id", "table", "name", "score", "rank", "step", "count", "row_count", "rows", "tool", "ok",
             "error", "ref", "fqn", "sort_value", "value", "sql", "query"}
MAX_DEPTH = 8


def _dumps(v: Any) -> str:
    return json.dumps(v, ensure_ascii=False, default=str, allow_nan=False)


def _sanitize(v: Any, depth: int = 0) -> Any:
    """JSON-safe copy: NaN/Inf -> None, odd types -> str, depth capped."""
    if depth > MAX_DEPTH:
        return "…(nested too deep)"
    if isinstance(v, dict):
        return {str(k): _sanitize(x, depth + 1) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_sanitize(x, depth + 1) for x in v]
    if isinstance(v, float):
        return v if v == v and v not in (float("inf"), float("-inf")) else None
    if v is None or isinstance(v, (str, int, bool)):
        return v
    return str(v)


def _trim_strings(v: Any, cap: int, key: str = "") -> Any:
    if isinstance(v, dict):
        return {k: _trim_strings(x, cap, k) for k, x in v.items()}
    if isinstance(v, list):
        return [_trim_strings(x, cap, key) for x in v]
    if isinstance(v, str) and len(v) > cap:
        if key in KEEP_KEYS and len(v) <= 2000:
            return v
        return v[: max(1, cap - 1)] + "…"
    return v


def _record(orig: dict[str, int], path: str, n: int) -> None:
    # list elements share one entry ("rows[*].tags"), keeping the record small
    key = re.sub(r"\[\d+\]", "[*]", path)
    if key not in orig or n > orig[key]:
        orig[key] = n if key not in orig else max(orig[key], n)


def _halve_lists(v: Any, path: str, orig: dict[str, int]) -> bool:
    shrunk = False
    if isinstance(v, dict):
        for k in list(v):
            x = v[k]
            p = f"{path}.{k}" if path else k
            if isinstance(x, list) and len(x) > 1:
                if p not in orig:
                    _record(orig, p, len(x))
                v[k] = x[: max(1, len(x) // 2)]
                shrunk = True
            shrunk |= _halve_lists(v[k], p, orig)
    elif isinstance(v, list):
        for i, x in enumerate(v):
            if isinstance(x, list) and len(x) > 1:
                _record(orig, f"{path}[{i}]", len(x))
                v[i] = x[: max(1, len(x) // 2)]
                shrunk = True
            shrunk |= _halve_lists(v[i], f"{path}[{i}]", orig)
    return shrunk


def overflow(tool: str, ok: bool) -> str:
    return _dumps({"tool": tool, "ok": ok, "data": {"_overflow": True},
                   "error": "tool_result_exceeded_context_budget"})


def project(result: dict[str, Any], max_chars: int = TOOL_RESULT_BUDGET_CHARS) -> str:
    """``result`` is ``{"tool", "ok", "data", "error"?, "hints"?}``."""
    tool = str(result.get("tool", ""))
    ok = bool(result.get("ok", True))
    env = _sanitize(result)
    if not isinstance(env, dict):
        env = {"tool": tool, "ok": ok, "data": env}
    if "hints" in env and isinstance(env["hints"], list):
        env["hints"] = env["hints"][:3]
    s = _dumps(env)
    if len(s) <= max_chars:
        return s
    for cap in (400, 160, 60):
        trimmed = _trim_strings(env, cap)
        if trimmed != env:  # every cut is said: values were shortened
            trimmed["_values_shortened_to_chars"] = cap
        env = trimmed
        s = _dumps(env)
        if len(s) <= max_chars:
            return s
    orig: dict[str, int] = {}
    for _ in range(24):
        if not _halve_lists(env, "", orig):
            break
        env["_truncated_from"] = dict(orig)
        s = _dumps(env)
        if len(s) <= max_chars:
            return s
    trimmed = _trim_strings(env, 24)
    if trimmed != env:
        trimmed["_values_shortened_to_chars"] = 24
    env = trimmed
    s = _dumps(env)
    if len(s) <= max_chars:
        return s
    s = overflow(tool, ok)
    if len(s) <= max_chars:
        return s
    return '{"_overflow":true}' if max_chars >= 18 else "{}"


LOOKUP_SAMPLE_CELL_CHARS = 40


def _compact_table(t: dict) -> dict:
    out = dict(t)
    cols = []
    for c in t.get("columns", []):
        if isinstance(c, dict):
            s = f"{c.get('name')} {c.get('type', '')}".strip()
            if c.get("description"):
                s += f" -- {c['description']}"
            cols.append(s)
        else:
            cols.append(c)
    out["columns"] = cols
    return out


def _cut_cells(rows: list, cap: int) -> list:
    return [{k: (v[: cap - 1] + "…" if isinstance(v, str) and len(v) > cap else v) for k, v in r.items()}
            if isinstance(r, dict) else r for r in rows]


def fit_lookup(view: dict[str, Any], budget: int, hard_cap: int) -> tuple[dict[str, Any], list[str]]:
    """Fit a lookup_schema result: every table keeps its full column list; sample rows shrink first,
    then long descriptions. Tables past ``hard_cap`` are deferred whole (returned by name, not marked
    fetched) rather than cut. Returns (view, deferred table names)."""
    data = dict(view.get("data") or {})
    tables = [_compact_table(t) for t in data.get("tables", [])]
    full_samples = [list(t.get("sample_rows") or []) for t in tables]

    def size() -> int:
        return len(_dumps(_sanitize({**view, "data": {**data, "tables": tables}})))

    steps = [(None, None), (3, LOOKUP_SAMPLE_CELL_CHARS), (2, LOOKUP_SAMPLE_CELL_CHARS), (1, 24), (0, 0)]
    for n, cap in steps:
        if n is not None:
            for t, rows in zip(tables, full_samples):
                t["sample_rows"] = _cut_cells(rows[:n], cap) if n else []
                if not n:
                    t.pop("sample_rows", None)
        if size() <= budget:
            break
    if size() > budget:
        for t in tables:
            if isinstance(t.get("description"), str) and len(t["description"]) > 200:
                t["description"] = t["description"][:199] + "…"
            t["columns"] = [c if len(c) <= 120 else c[:119] + "…" for c in t["columns"]]
    deferred: list[str] = []
    while len(tables) > 1 and size() > hard_cap:
        deferred.insert(0, tables.pop()["table"])
    if any(n and len(t.get("sample_rows", [])) < min(n, len(rows)) for t, rows, n in
           zip(tables, full_samples, [len(r) for r in full_samples])):
        data["sample_rows_note"] = "sample rows were shortened to fit; every column is listed"
    data["tables"] = tables
    if deferred:
        data["deferred"] = deferred
        data["deferred_note"] = (f"{len(deferred)} table(s) did not fit in this answer and were NOT fetched: "
                                 "call lookup_schema again for them")
    return {**view, "data": data}, deferred
