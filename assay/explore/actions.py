"""Actions the model may take, and the one parser every loop shares.

The JSON-action protocol accepts one JSON object per turn, in any of:
fenced JSON, a bare object, a tool-use style envelope
(``{"name": "query", "input": {...}}`` / ``{"tool": ..., "arguments": ...}``)
or the legacy ``{"action": "query", "sql": ...}`` shape. The last candidate
carrying a recognised key wins. Anything else raises ``ActionParseError``
with a reason the reformat nudge can quote. Callers pass an allow-list
(the verifier accepts only ``lookup_schema`` and ``query``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from .. import limits
from ..llm.base import ToolCall, ToolSpec

ALL_ACTIONS = ("query", "lookup_schema", "search_tables", "done")
# `assay ask` also searches what earlier discoveries of the project found
ASK_ACTIONS = ("search_insights", "query", "lookup_schema", "search_tables", "done")
_ALIASES = {"query_data": "query", "sql": "query", "run_query": "query", "complete": "done",
            "finish": "done", "lookup": "lookup_schema", "search": "search_tables"}


class ActionParseError(ValueError):
    pass


@dataclass
class Action:
    kind: str
    sql: str = ""
    purpose: str = ""
    thinking: str = ""
    tables: list[str] = field(default_factory=list)
    search: str = ""
    top_k: int | None = None
    summary: str = ""
    call_id: str | None = None  # native tool call id

    def as_json(self) -> str:
        """The canonical JSON-protocol form (used to rebuild history)."""
        if self.kind == "query":
            d: dict[str, Any] = {"thinking": self.thinking, "purpose": self.purpose, "query": self.sql}
        elif self.kind == "lookup_schema":
            d = {"lookup_schema": self.tables}
        elif self.kind in ("search_tables", "search_insights"):
            d = {self.kind: self.search}
            if self.top_k is not None:
                d["top_k"] = self.top_k
        else:
            d = {"done": True, "summary": self.summary}
        return json.dumps({k: v for k, v in d.items() if v not in ("", None)}, ensure_ascii=False)

    def tool_args(self) -> dict[str, Any]:
        if self.kind == "query":
            return {"sql": self.sql, "purpose": self.purpose, "thinking": self.thinking}
        if self.kind == "lookup_schema":
            return {"tables": self.tables}
        if self.kind in ("search_tables", "search_insights"):
            return {"query": self.search, **({"top_k": self.top_k} if self.top_k is not None else {})}
        return {"summary": self.summary}


_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)


def _json_objects(text: str) -> list[dict]:
    """Every top-level JSON object in ``text`` (fenced ones and bare ones)."""
    found: list[dict] = []
    dec = json.JSONDecoder()
    sources = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    seen: set[str] = set()
    for src in sources:
        i = 0
        while True:
            j = src.find("{", i)
            if j < 0:
                break
            try:
                obj, end = dec.raw_decode(src, j)
            except json.JSONDecodeError:
                i = j + 1
                continue
            if isinstance(obj, dict):
                key = json.dumps(obj, sort_keys=True, default=str)
                if key not in seen:
                    seen.add(key)
                    found.append(obj)
            i = end
    return found


def _as_list(v: Any) -> list[str]:
    if isinstance(v, str):
        return [s.strip() for s in v.split(",") if s.strip()]
    if isinstance(v, list):
        return [str(x) for x in v if isinstance(x, (str, int))]
    return []


def _from_named(name: str, args: dict, extra: dict | None = None) -> Action | None:
    name = _ALIASES.get(name, name)
    extra = extra or {}
    thinking = str(args.get("thinking") or extra.get("thinking") or "")
    if name == "query":
        sql = args.get("sql") or args.get("query") or ""
        if not isinstance(sql, str) or not sql.strip():
            raise ActionParseError("a query action needs a non-empty SQL string in `query`")
        return Action("query", sql=sql.strip(), purpose=str(args.get("purpose") or extra.get("purpose") or ""),
                      thinking=thinking)
    if name == "lookup_schema":
        tables = _as_list(args.get("tables", args.get("lookup_schema", args.get("table"))))
        if not tables:
            raise ActionParseError("lookup_schema needs a list of fully qualified table names")
        return Action("lookup_schema", tables=tables, thinking=thinking)
    if name in ("search_tables", "search_insights"):
        q = args.get("query") or args.get(name) or args.get("text") or ""
        if not isinstance(q, str) or not q.strip():
            raise ActionParseError(f"{name} needs a natural-language description")
        top_k = args.get("top_k")
        try:
            top_k = int(top_k) if top_k is not None else None
        except (TypeError, ValueError):
            top_k = None
        return Action(name, search=q.strip(), top_k=top_k, thinking=thinking)
    if name == "done":
        return Action("done", summary=str(args.get("summary") or args.get("answer") or ""), thinking=thinking)
    return None


def _from_object(obj: dict) -> Action | None:
    # tool-use style envelopes
    for nk, ak in (("name", "input"), ("tool", "arguments"), ("tool", "args"), ("name", "arguments"),
                   ("tool", "input"), ("function", "arguments")):
        if isinstance(obj.get(nk), str) and isinstance(obj.get(ak), (dict, str)):
            args = obj[ak]
            if isinstance(args, str):
                try:
                    args = json.loads(args)
                except json.JSONDecodeError:
                    continue
            act = _from_named(obj[nk], args, obj)
            if act is not None:
                return act
    # legacy {"action": "query", "sql": ...}
    if isinstance(obj.get("action"), str):
        act = _from_named(obj["action"].strip().lower(), obj, obj)
        if act is not None:
            return act
    # the primary shapes: the recognised key names the action
    if "query" in obj and isinstance(obj["query"], str):
        return _from_named("query", obj)
    if "sql" in obj and isinstance(obj["sql"], str):
        return _from_named("query", obj)
    if "lookup_schema" in obj:
        return _from_named("lookup_schema", obj)
    if "search_tables" in obj:
        return _from_named("search_tables", obj)
    if "search_insights" in obj:
        return _from_named("search_insights", obj)
    if obj.get("done") is True or obj.get("done") == "true":
        return _from_named("done", obj)
    return None


def parse_action(text: str, allowed: tuple[str, ...] | None = None) -> Action:
    """Parse one model turn; raise ActionParseError with a reason otherwise."""
    allowed = allowed or ALL_ACTIONS
    if not text or not text.strip():
        raise ActionParseError("the reply was empty")
    objs = _json_objects(text)
    if not objs:
        raise ActionParseError("the reply contained no JSON object")
    last_err: ActionParseError | None = None
    chosen: Action | None = None
    for obj in objs:
        try:
            act = _from_object(obj)
        except ActionParseError as exc:
            last_err = exc
            continue
        if act is not None:
            chosen = act
    if chosen is None:
        if last_err is not None:
            raise last_err
        keys = sorted({k for o in objs for k in o})[:6]
        raise ActionParseError(f"no recognised action key in the JSON (found keys: {', '.join(keys)})")
    if chosen.kind not in allowed:
        raise ActionParseError(f"action {chosen.kind!r} is not available here (allowed: {', '.join(allowed)})")
    return chosen


def from_tool_call(call: ToolCall, allowed: tuple[str, ...] | None = None) -> Action:
    allowed = allowed or ALL_ACTIONS
    if "_invalid_arguments" in call.args:
        raise ActionParseError(f"tool {call.name!r} was called with arguments that are not valid JSON")
    act = _from_named(call.name, call.args)
    if act is None:
        raise ActionParseError(f"unknown tool {call.name!r}")
    if act.kind not in allowed:
        raise ActionParseError(f"tool {act.kind!r} is not available here (allowed: {', '.join(allowed)})")
    act.call_id = call.id
    return act


JSON_SHAPES = {
    "query": ('{"thinking": "...", "purpose": "what this answers", "query": "SELECT ..."}',
              "runs one read-only SQL statement"),
    "lookup_schema": ('{"lookup_schema": ["schema.table", "schema.other_table"]}', None),
    "search_tables": ('{"search_tables": "what the table holds, in English", "top_k": 10}', None),
    "search_insights": ('{"search_insights": "the finding or question, in words", "top_k": 5}', None),
    "done": ('{"done": true, "summary": "what you learned, with the numbers and the step numbers they come from"}',
             "ends exploration"),
}


def step_rule(tools: bool, caps: bool = True) -> str:
    """What an action costs, as the loop counts it (``ExplorationLoop._counted_steps``): every `query` that runs
    (or fails) takes one step, in a turn of several tool calls each one; schema lookups, table searches,
    information_schema queries and guard refusals are free within their per-run budgets, after which each takes a
    step too. Round 8's InsightBench runs spent their budget in multi-call turns and ended without `done`.
    ``caps=False`` leaves the per-run numbers out: beside `assay ask`'s five steps, "up to 30 lookups" read as a
    second budget to a real model (session 19)."""
    several = ("also when several are in one turn (three `query` calls in one turn take three steps); "
               if tools else "")
    limit = (f"up to {limits.MAX_LOOKUPS_PER_RUN} lookups, {limits.MAX_SEARCHES_PER_RUN} searches and "
             f"{limits.MAX_FREE_REFUSALS_PER_RUN} refusals per run" if caps else "within generous limits")
    return (f"Each `query` takes one step of your budget, {several}`lookup_schema`, `search_tables`, queries of "
            f"information_schema and refused queries are free ({limit}; beyond those each takes a step too). "
            "A result that takes a step is numbered in that count ([step N], "
            "the number to cite); a free action's result has no number. When the budget is spent the exploration "
            "ends without you: finish with `done` and your summary before it runs out.")


def actions_text(tools: bool, allowed: tuple[str, ...] | None = None, caps: bool = True) -> str:
    """The prompt's description of the actions, in the one protocol the provider speaks: tool names and
    argument names from ``tool_specs`` with native tools, the JSON shapes otherwise."""
    allowed = allowed or ALL_ACTIONS
    specs = {t.name: t for t in tool_specs(allowed)}
    lines = []
    if tools:
        lines.append("Call the tools below (several in one turn when they are independent); do not write JSON "
                     "actions in text. " + step_rule(True, caps))
        for name in allowed:
            t = specs[name]
            props = t.parameters.get("properties", {})
            req = set(t.parameters.get("required", []))
            args = ", ".join(a if a in req else f"{a}?" for a in props)
            lines.append(f"- `{name}({args})`: {t.description}")
    else:
        lines.append("Answer every turn with exactly ONE JSON object and nothing else (one action per turn). "
                     + step_rule(False, caps) + " One of:")
        for name in allowed:
            shape, what = JSON_SHAPES[name]
            lines.append(f"- `{shape}`: {what or specs[name].description}")
    return "\n".join(lines)


def reformat_nudge(reason: str, allowed: tuple[str, ...] | None = None, tools: bool = False) -> str:
    allowed = allowed or ALL_ACTIONS
    if tools:
        return (f"Your last reply could not be used: {reason}.\n"
                f"Call one of the tools: {', '.join(allowed)}.")
    shapes = {
        "query": '{"thinking": "...", "purpose": "...", "query": "SELECT ..."}',
        "lookup_schema": '{"lookup_schema": ["schema.table"]}',
        "search_tables": '{"search_tables": "description", "top_k": 10}',
        "search_insights": '{"search_insights": "the finding or question", "top_k": 5}',
        "done": '{"done": true, "summary": "..."}',
    }
    opts = "\n".join(f"- {shapes[a]}" for a in allowed if a in shapes)
    return (f"Your last reply could not be used: {reason}.\n"
            f"Answer with exactly one JSON object and nothing else, one of:\n{opts}")


def tool_specs(allowed: tuple[str, ...] | None = None) -> list[ToolSpec]:
    allowed = allowed or ALL_ACTIONS
    specs = {
        "query": ToolSpec("query", "Run one read-only SQL statement against the warehouse.", {
            "type": "object",
            "properties": {
                "sql": {"type": "string", "description": "One SELECT statement."},
                "purpose": {"type": "string", "description": "The question this query answers."},
                "thinking": {"type": "string", "description": "Why you ask it now."},
            },
            "required": ["sql", "purpose"],
        }),
        "lookup_schema": ToolSpec(
            "lookup_schema",
            f"Columns and {limits.SAMPLE_ROWS} sample rows for up to {limits.MAX_LOOKUP_TABLES_PER_CALL} "
            f"fully qualified tables ({limits.MAX_LOOKUPS_PER_RUN} calls per run; already fetched tables are free).",
            {"type": "object", "properties": {"tables": {"type": "array", "items": {"type": "string"}}},
             "required": ["tables"]},
        ),
        "search_tables": ToolSpec(
            "search_tables",
            f"Semantic search for tables (top_k default {limits.DEFAULT_SEARCH_TOP_K}, at most "
            f"{limits.MAX_SEARCH_TOP_K}; {limits.MAX_SEARCHES_PER_RUN} calls per run). Describe in English what the "
            "table holds: names are indexed with their English reading, whatever their language. Archive copies and "
            "numbered siblings of a result are folded into it and listed as `similar`.",
            {"type": "object", "properties": {"query": {"type": "string"}, "top_k": {"type": "integer"}},
             "required": ["query"]},
        ),
        "search_insights": ToolSpec(
            "search_insights",
            "Search the insights and recommendations that earlier discoveries of this project found and verified "
            "(each hit gives its id, run, date, verdict and text). It takes one step, as a query does, and costs the "
            "warehouse nothing; the numbers are as of the run's date.",
            {"type": "object", "properties": {"query": {"type": "string"}, "top_k": {"type": "integer"}},
             "required": ["query"]},
        ),
        "done": ToolSpec("done", "Finish exploring, with a summary of what you learned.", {
            "type": "object", "properties": {"summary": {"type": "string"}}, "required": ["summary"],
        }),
    }
    return [specs[a] for a in allowed if a in specs]
