"""The exploration agent loop: bounded, crash-safe, one loop for two wire protocols.

Each completed step is handed to a sink at once (persisted, digested, indexed),
so a run that dies at step 40 resumes at step 41 with its history rebuilt from
the store, and no step runs twice. The conversation is bounded: a stable
prefix (system prompt with catalog and pack context, cache-eligible), one-line
summaries of older steps, and the last few turns in full.
"""

from __future__ import annotations

import contextvars
import json
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Callable, Protocol

import pyarrow as pa

from .. import limits
from ..digest import (build_compact_result, cap_bytes, chart_rows, dates_only, masked_columns, shortened_columns,
                      unique_names, view_cell)
from ..rows import describe_cut, partial_last_period, select_rows
from ..errors import InvalidLLMOutput
from ..llm.base import LLM, LLMRequest, LLMResponse, Message, SystemBlock, ToolCall
from ..analysis.picker import uncovered_areas
from ..models import AnalysisArea, ExplorationStep, StepAction, TableInfo, TokenUsage
from ..pii import MASK
from ..schema.provider import SchemaProvider
from .actions import (ALL_ACTIONS, Action, ActionParseError, from_tool_call, parse_action, reformat_nudge,
                      tool_specs)
from .executor import Executor
from .hints import empty_hints, error_hints
from .info_schema import answer as answer_info_schema, is_info_schema_query
from .numbering import label, labels, name, tag
from .projection import fit_lookup, project

MAX_CONSECUTIVE_ERRORS = 3
MODEL_ROWS_SHOWN = 60  # the budget (TOOL_RESULT_BUDGET_CHARS) cuts further when rows are wide


class StepSink(Protocol):
    def __call__(self, step: ExplorationStep) -> None: ...


@dataclass
class ExploreOutcome:
    steps: list[ExplorationStep]
    finished: str  # done | max_steps | errors
    summary: str = ""
    requests: list[int] = field(default_factory=list)  # chars per LLM request (bench)
    stable: list[int] = field(default_factory=list)    # stable-prefix chars per request


def _figures(s: ExplorationStep) -> str:
    """The key figures a query showed: its only rows, or the rows carrying its signal (capped)."""
    d = s.digest
    rows = (d.all_rows if d.all_rows is not None else d.kept_rows) if d else None
    if not rows:
        return ""
    k = limits.SUMMARY_FIGURE_ROWS
    if len(rows) > k:
        try:
            table = pa.Table.from_pylist(rows)
            positions, _ = select_rows(table, k)
        except (pa.ArrowInvalid, pa.ArrowTypeError, ValueError):
            positions = list(range(k))
        rows = [rows[i] for i in positions]
    return "; ".join(", ".join(f"{c}={v}" for c, v in r.items()) for r in rows)


def step_summary(s: ExplorationStep) -> str:
    cap = limits.SUMMARY_LINE_CHARS
    if s.action == StepAction.query:
        if s.refused:
            body = f"query refused ({s.refused}): {s.purpose}"
        elif s.error:
            body = f"query failed ({s.error[:80]}): {s.purpose}"
        else:
            cols = ",".join(c.name for c in (s.digest.columns if s.digest else [])[:8])
            body = f"query: {s.purpose or s.query[:80]} -> {s.row_count} rows [{cols}]"
            figures = _figures(s)
            if figures:
                shown = "" if s.digest is None or s.digest.all_rows is not None else " (signal rows)"
                body += f" saw{shown}: {figures}"
    elif s.action == StepAction.lookup_schema:
        body = f"lookup_schema: {', '.join(s.tables)}"
    elif s.action == StepAction.search_tables:
        body = f"search_tables {s.purpose!r} -> {', '.join(s.tables[:5])}"
    elif s.action == StepAction.search_insights:
        body = f"search_insights {s.purpose!r} -> {', '.join(s.tables[:5]) or 'no match'}"
    elif s.action == StepAction.complete_rejected:
        body = "done rejected (min_steps not reached)"
    elif s.action == StepAction.done:
        body = f"done: {s.summary}"
    else:
        body = f"error: {s.error or ''}"
    note = (s.note or s.thinking or "").strip().replace("\n", " ")
    if note:
        n = limits.SUMMARY_NOTE_CHARS
        body = f"(your note: {note if len(note) <= n else note[: n - 1] + '…'}) " + body
    n = label(s)
    line = f"#{n} {body}" if n is not None else f"(free) {body}"
    return line if len(line) <= cap else line[: cap - 1] + "…"


class Explorer:
    def __init__(
        self,
        *,
        llm: LLM,
        executor: Executor,
        provider: SchemaProvider | None,
        run_id: str,
        system_prompt: str,
        max_steps: int,
        min_steps: int = 0,
        sink: StepSink | None = None,
        tables: list[TableInfo] | None = None,
        pii: list[str] | None = None,
        purpose: str = "explore",
        intro: str = "Begin exploring the warehouse.",
        max_tokens: int = 2048,
        bump: Callable[[dict[str, int]], None] | None = None,
        actions: tuple[str, ...] = ALL_ACTIONS,
        insight_searcher: Callable[[str, int], list[dict]] | None = None,
        areas: list[AnalysisArea] | None = None,
    ):
        self.llm = llm
        self.executor = executor
        self.provider = provider
        self.run_id = run_id
        self.system_prompt = system_prompt
        self.max_steps = max_steps
        self.min_steps = min(min_steps, max_steps)
        self.sink = sink or (lambda s: None)
        self.tables = tables or []
        self.pii = pii or []
        self.purpose = purpose
        self.intro = intro
        self.max_tokens = max_tokens
        self.bump = bump or (lambda c: None)
        self.tools = bool(getattr(llm, "supports_tools", False))
        self.actions = actions
        self.insight_searcher = insight_searcher
        self.areas = list(areas or []) if len(areas or []) > 1 else []  # one area: every step is for it
        self.steps: list[ExplorationStep] = []
        self.lookups_used = 0
        self.searches_used = 0
        self.requests: list[int] = []
        self.stable: list[int] = []
        self._prev_request: LLMRequest | None = None
        self._issued = 0  # the highest step number handed out

    # ------------------------------------------------------------------ history

    def _restore(self, prior: list[ExplorationStep]) -> None:
        self.steps = sorted(prior, key=lambda s: s.step)
        for s in self.steps:
            if s.action == StepAction.lookup_schema and s.charged:
                self.lookups_used += 1
            if s.action == StepAction.search_tables:
                self.searches_used += 1
            if s.action == StepAction.lookup_schema and self.provider is not None:
                self.provider.fetched.update(s.tables)

    def _turns(self) -> list[list[ExplorationStep]]:
        turns: dict[int, list[ExplorationStep]] = {}
        for s in self.steps:
            if s.action == StepAction.done:
                continue
            turns.setdefault(s.turn or s.step, []).append(s)
        return [turns[k] for k in sorted(turns)]

    @staticmethod
    def _action_of(s: ExplorationStep) -> Action:
        if s.action == StepAction.query:
            return Action("query", sql=s.query, purpose=s.purpose, thinking=s.thinking)
        if s.action == StepAction.lookup_schema:
            return Action("lookup_schema", tables=list(s.tables))
        if s.action in (StepAction.search_tables, StepAction.search_insights):
            return Action(s.action.value, search=s.purpose)
        return Action("done", summary=s.summary)

    def _turn_messages(self, turn: list[ExplorationStep]) -> list[Message]:
        tool_turn = self.tools and all(s.call_id for s in turn)
        if tool_turn:
            calls = [ToolCall(id=s.call_id, name=self._action_of(s).kind, args=self._action_of(s).tool_args())
                     for s in turn]
            return [Message("assistant", content=turn[0].note, tool_calls=calls),
                    # each result names its step as the model cites it (explore/numbering.py): the step budget's
                    # count, so that "Steps used" follows the last [step N]; a free action has no number
                    Message("user", tool_results=[(s.call_id, f"{tag(s)}\n{s.result_preview}") for s in turn],
                            content=self._progress(turn[-1].step))]
        out: list[Message] = []
        for s in turn:
            out.append(Message("assistant", content=self._action_of(s).as_json() if s.action != StepAction.error
                               else (s.thinking or "(invalid reply)")))
            out.append(Message("user", content=f"Result of {name(s)}:\n{s.result_preview}\n\n"
                                                 + self._progress(s.step)))
        return out

    def _progress(self, step: int) -> str:
        """The steps line after each turn, counted as the loop counts them (``_counted_steps``, the same rule the
        prompt states: ``actions.step_rule``)."""
        used = self._counted_steps(upto=step)
        left = self.max_steps - used
        refusals = self._free_refusals(upto=step)
        free = ("schema lookups, searches and information_schema queries are free and carry no step number; "
                + (f"refused queries too ({limits.MAX_FREE_REFUSALS_PER_RUN - refusals} free refusals left)"
                   if refusals < limits.MAX_FREE_REFUSALS_PER_RUN else "a refused query now takes a step"))
        msg = (f"Steps used: {used} of {self.max_steps}, {max(left, 0)} left (each query takes one"
               + (", also several in one turn" if self.tools else "") + f"; {free}; "
               "cite results by their [step N] numbers).")
        if self.min_steps and used < self.min_steps:
            msg += f" Do not finish before step {self.min_steps}."
        bare = uncovered_areas(self.areas, [s for s in self.steps if s.step <= step]) if left > 0 else []
        if bare:
            msg += (" Areas none of your queries has looked at yet (each is analysed only from your steps): "
                    + ", ".join(a.name for a in bare) + ".")
        if 0 < left <= 3:
            msg += (f" {left} step{'s' if left != 1 else ''} left: each query "
                    + ("call takes one, also in the same turn" if self.tools else "takes one")
                    + "; end with `done` and your summary.")
        if not self.tools:
            msg += " Answer with one JSON action."
        return msg if left > 0 else msg + " This was the last step."

    def _free_refusals(self, upto: int | None = None) -> int:
        """Guard refusals so far that did not cost a step (``_counted_steps``' rule)."""
        return min(limits.MAX_FREE_REFUSALS_PER_RUN,
                   sum(1 for s in self.steps if s.action == StepAction.query and s.refused
                       and (upto is None or s.step <= upto)))

    def build_request(self, extra: list[Message] | None = None) -> LLMRequest:
        """Stable prefix first, then the history; append-only between compactions.

        Every ``COMPACT_EVERY_TURNS`` turns, the older raw turns are folded into one-line
        summaries in a cached system block; in between, each request extends the previous
        one, so all but the newest turn is a cache hit. The size is bounded by the prompt,
        the summaries and at most ``COMPACT_EVERY_TURNS + MIN_RAW_TURNS`` raw turns.
        """
        turns = self._turns()
        c = limits.COMPACT_EVERY_TURNS
        folded = max(0, (len(turns) - limits.MIN_RAW_TURNS) // c * c)
        system = [SystemBlock(self.system_prompt, cache=True)]
        if folded:
            # each step's line as it was written when the step finished (``_finish_step``), not rebuilt every turn
            lines = [step_summary(s) if s.action == StepAction.done or not s.summary else s.summary
                     for t in turns[:folded] for s in t]
            system.append(SystemBlock("## Earlier steps of this run, summarised with the figures they showed and "
                                      "your own notes (the latest steps follow in full)\n"
                                      + "\n".join(lines), cache=True))
        msgs = [Message("user", content=self.intro)]
        for t in turns[folded:]:
            msgs += self._turn_messages(t)
        if extra:
            msgs += extra
        # roles must alternate: merge a trailing user message into the previous one
        merged: list[Message] = []
        for m in msgs:
            if merged and merged[-1].role == m.role == "user" and not m.tool_results:
                merged[-1] = Message("user", content=(merged[-1].content + "\n\n" + m.content).strip(),
                                     tool_results=merged[-1].tool_results)
            else:
                merged.append(m)
        return LLMRequest(
            purpose=self.purpose,
            system=system,
            messages=merged,
            tools=tool_specs(self.actions) if self.tools else None,
            max_tokens=self.max_tokens,
            meta={"run_id": self.run_id, "step": len(self.steps) + 1, "max_steps": self.max_steps,
                  "cache_messages": True, "step_labels": labels(self.steps)},
        )

    @staticmethod
    def shared_prefix_chars(prev: LLMRequest | None, req: LLMRequest) -> int:
        """Characters of ``req`` that repeat ``prev`` from the start: what a prompt cache can hit."""
        if prev is None:
            return 0
        n = 0
        for a, b in zip(prev.system, req.system):
            if a.text != b.text:
                return n
            n += len(b.text)
        if len(prev.system) != len(req.system):
            return n
        for a, b in zip(prev.messages, req.messages):
            if a == b:
                n += b.chars()
                continue
            if a.role == b.role and b.content.startswith(a.content) and not a.tool_calls and not b.tool_calls \
                    and a.tool_results == b.tool_results[:len(a.tool_results)]:
                n += len(a.content)
            return n
        return n

    # ------------------------------------------------------------------ actions

    @staticmethod
    def _free_kind(s: ExplorationStep) -> bool:
        """Schema actions (lookups, searches, information_schema answers) and guard refusals have their own
        per-run budgets; they do not cost exploration steps."""
        if s.action in (StepAction.lookup_schema, StepAction.search_tables):
            return not (s.error and ("exhausted" in s.error or "not available" in s.error))
        if s.action == StepAction.query:
            return bool(s.refused) or (not s.charged and s.error is None)
        return False

    def _counted_steps(self, upto: int | None = None) -> int:
        cap = limits.MAX_LOOKUPS_PER_RUN + limits.MAX_SEARCHES_PER_RUN + limits.MAX_FREE_REFUSALS_PER_RUN
        counted = free = refusals = 0
        for s in self.steps:
            if s.action == StepAction.done or (upto is not None and s.step > upto):
                continue
            is_free = self._free_kind(s) and free < cap
            if is_free and s.refused:
                is_free = refusals < limits.MAX_FREE_REFUSALS_PER_RUN
                refusals += 1
            if is_free:
                free += 1
            else:
                counted += 1
        return counted

    def _new_step(self, action: StepAction, turn: int, **kw) -> ExplorationStep:
        # numbered when created: the actions of one turn are all created before any of them is finished,
        # so len(self.steps) would give them all the same number (and the store keeps one per number)
        n = max(len(self.steps), self._issued) + 1
        self._issued = n
        return ExplorationStep(run_id=self.run_id, step=n, turn=turn, action=action, **kw)

    def _fit_rows(self, res, table: pa.Table, masked: set[str]) -> dict:
        """The rows the model sees (``table``: the result's, its column names made unique): all of them when they
        fit, else the rows that carry the signal (rows.py), fewer until the result fits its budget; every column
        always, and every cut said."""
        n = table.num_rows
        shortened = shortened_columns(table)
        k = min(n, MODEL_ROWS_SHOWN)
        names = table.column_names
        # a timestamp column reads as dates only when all of it is at midnight (one grain per column)
        dates = [pa.types.is_timestamp(f.type) and dates_only(table.column(i).to_pylist())
                 for i, f in enumerate(table.schema)]
        while True:
            positions, how = select_rows(table, k)
            # rows as lists under one header: keys repeated in every row took half the budget, and a 54-row
            # breakdown was cut to 17 rows where a real model needed the rows in between. Read column by column:
            # a row as a dict keeps one of two columns of the same name
            picked = table.take(pa.array(positions, type=pa.int64()))
            cols = [[MASK if names[i] in masked and v is not None else view_cell(v, dates[i])
                     for v in picked.column(i).to_pylist()] for i in range(picked.num_columns)]
            rows = [list(r) for r in zip(*cols)] if cols else [[] for _ in positions]
            data = {"row_count": res.row_count, "columns": table.column_names, "rows": rows}
            notes = []
            if len(positions) < res.row_count:
                data["row_numbers"] = [p + 1 for p in positions] if len(positions) < n else None
                notes.append(describe_cut(len(positions), res.row_count, how if len(positions) < n else
                                          f"only the first {n:,} rows were fetched (the row cap)"))
                if res.truncated:
                    data["truncated_at_row_cap"] = True
            if shortened:
                notes.append(f"long values shortened in column(s): {', '.join(shortened)}")
            if notes:
                data["cut"] = "; ".join(notes)
            data = {k2: v for k2, v in data.items() if v is not None}
            if k <= 1 or len(json.dumps(data, default=str)) <= limits.TOOL_RESULT_BUDGET_CHARS - 300:
                return data
            k = max(1, k * 2 // 3)

    def _query_view(self, out, step: ExplorationStep) -> dict:
        data: dict = {}
        hints: list[str] = []
        if out.refused:
            return {"tool": "query", "ok": False, "error": f"refused by the SQL guard: {out.refused}",
                    "hints": ["rewrite the statement as one read-only SELECT on the project's tables"]}
        if out.error:
            hints = error_hints(out.error, out.sql, self.executor.warehouse.dialect, self.tables)
            return {"tool": "query", "ok": False, "error": out.error, "hints": hints,
                    "data": {"attempts": len(out.attempts)}}
        res = out.result
        # two columns of one name (SELECT a.id, b.id) are told apart as the digest tells them: id, id_2
        table = res.table.rename_columns(unique_names(res.table.column_names))
        masked = masked_columns(table, self.pii)
        data = self._fit_rows(res, table, masked)
        if out.fixes:
            data["fixed_sql"] = out.sql
        view = {"tool": "query", "ok": True, "data": data}
        if res.row_count == 0:
            view["hints"] = empty_hints(out.sql, self.executor.warehouse.dialect)
        elif res.row_count == table.num_rows and (partial := partial_last_period(table)):
            view["hints"] = [partial]
        return view

    def _info_schema(self, a: Action, turn: int) -> tuple[ExplorationStep, dict]:
        """information_schema (tables/columns) answered from the discovered schema: free, like a lookup."""
        step = self._new_step(StepAction.query, turn, thinking=a.thinking, purpose=a.purpose, query=a.sql,
                              call_id=a.call_id)
        step.charged = False
        try:
            res = answer_info_schema(a.sql, self.executor.warehouse.dialect, self.tables,
                                     row_cap=self.executor.cfg.row_cap)
        except Exception as exc:
            step.error = f"information_schema query failed: {exc}"
            return step, {"tool": "query", "ok": False, "error": step.error,
                          "hints": ["information_schema.tables and information_schema.columns are answered from "
                                    "the project's schema; or call lookup_schema"]}
        step.row_count = res.row_count
        step.digest = build_compact_result(res.table, total_rows=res.total_rows, truncated=res.truncated)
        self.bump({"information_schema_answers": 1})
        from types import SimpleNamespace

        view = self._query_view(SimpleNamespace(refused=None, error=None, result=res, sql=a.sql, fixes=0), step)
        view["data"]["source"] = "the project's discovered schema (information_schema is answered from it)"
        return step, view

    def _do_query(self, a: Action, turn: int, out=None) -> tuple[ExplorationStep, dict]:
        if out is None and is_info_schema_query(a.sql, self.executor.warehouse.dialect):
            return self._info_schema(a, turn)
        out = out or self.executor.run(a.sql, purpose=self.purpose)
        step = self._new_step(StepAction.query, turn, thinking=a.thinking, purpose=a.purpose, query=out.sql,
                              call_id=a.call_id)
        step.fix_history = out.attempts
        step.duration_ms = out.duration_ms
        step.usage = out.usage
        counters = {"sql_fixes": out.fixes}
        if out.refused:
            step.refused = out.refused
            step.query = a.sql
            counters["guard_refusals"] = 1
        elif out.error:
            step.error = out.error
        else:
            res = out.result
            step.row_count = res.row_count
            view = self._query_view(out, step)
            # the rows the model was shown stay in the step's digest: its notes and the analysis cite them (round 7:
            # a number the explorer read in row 57 of 108 was not in the 12 rows the digest kept)
            shown = view["data"].get("row_numbers") or range(1, len(view["data"].get("rows") or []) + 1)
            step.digest = cap_bytes(
                build_compact_result(res.table, total_rows=res.total_rows, truncated=res.truncated, pii=self.pii,
                                     keep=[r - 1 for r in shown]),
                self.executor.cfg.digest_bytes_cap)
            step.chart_rows = chart_rows(res.table, pii=self.pii, total_rows=res.total_rows,
                                          truncated=res.truncated)
            self.bump(counters)
            return step, view
        self.bump(counters)
        return step, self._query_view(out, step)

    def _do_lookup(self, a: Action, turn: int) -> tuple[ExplorationStep, dict]:
        step = self._new_step(StepAction.lookup_schema, turn, thinking=a.thinking, tables=a.tables,
                              call_id=a.call_id, purpose="lookup " + ", ".join(a.tables)[:200])
        if self.provider is None:
            step.error, step.charged = "lookup_schema is not available", False
            return step, {"tool": "lookup_schema", "ok": False, "error": step.error}
        if self.lookups_used >= limits.MAX_LOOKUPS_PER_RUN:
            step.error, step.charged = "budget exhausted", False
            return step, {"tool": "lookup_schema", "ok": False,
                          "error": f"lookup budget exhausted: {limits.MAX_LOOKUPS_PER_RUN} of "
                                   f"{limits.MAX_LOOKUPS_PER_RUN} calls used this run",
                          "hints": ["use the catalog and the columns of earlier queries"]}
        res = self.provider.lookup(a.tables, mark=False)
        step.charged = res.charged
        if res.charged:
            self.lookups_used += 1
            self.bump({"schema_lookup_calls": 1})
        data = res.as_dict()
        data["lookups_left"] = limits.MAX_LOOKUPS_PER_RUN - self.lookups_used
        if res.already_fetched and not res.tables:
            data["note"] = "these tables were already fetched earlier in this run; this call was free"
        view = {"tool": "lookup_schema", "ok": not res.not_found or bool(res.tables), "data": data}
        budget = max(limits.TOOL_RESULT_BUDGET_CHARS, limits.LOOKUP_TABLE_BUDGET_CHARS * max(1, len(res.tables)))
        view, deferred = fit_lookup(view, budget, max(budget, limits.LOOKUP_RESULT_MAX_CHARS))
        delivered = [t["table"] for t in view["data"]["tables"]]
        preview = project(view, max_chars=max(budget, len(project(view, max_chars=10**9))))
        # a table is fetched only when the model saw it whole
        self.provider.mark_fetched(delivered)
        step.tables = delivered + res.already_fetched
        view["_preview"] = preview
        return step, view

    def _do_search(self, a: Action, turn: int) -> tuple[ExplorationStep, dict]:
        top_k = a.top_k if a.top_k is not None else limits.DEFAULT_SEARCH_TOP_K
        top_k = max(1, min(int(top_k), limits.MAX_SEARCH_TOP_K))
        step = self._new_step(StepAction.search_tables, turn, thinking=a.thinking, purpose=a.search,
                              call_id=a.call_id)
        if self.provider is None or self.provider.searcher is None:
            step.error, step.charged = "search_tables is not available", False
            return step, {"tool": "search_tables", "ok": False, "error": step.error}
        if self.searches_used >= limits.MAX_SEARCHES_PER_RUN:
            step.error, step.charged = "budget exhausted", False
            return step, {"tool": "search_tables", "ok": False,
                          "error": f"search budget exhausted: {limits.MAX_SEARCHES_PER_RUN} of "
                                   f"{limits.MAX_SEARCHES_PER_RUN} calls used this run"}
        try:
            hits = self.provider.search(a.search, top_k)
        except Exception as exc:  # the index is optional help, never fatal
            step.error, step.charged = f"search failed: {exc}", False
            return step, {"tool": "search_tables", "ok": False, "error": step.error}
        self.searches_used += 1
        self.bump({"schema_search_calls": 1})
        step.tables = [h["table"] for h in hits]
        step.row_count = len(hits)
        return step, {"tool": "search_tables", "ok": True,
                      "data": {"top_k": top_k, "tables": hits,
                               "searches_left": limits.MAX_SEARCHES_PER_RUN - self.searches_used}}

    def _do_insight_search(self, a: Action, turn: int) -> tuple[ExplorationStep, dict]:
        """Earlier discoveries' insights and recommendations closest to the query (`assay ask`)."""
        step = self._new_step(StepAction.search_insights, turn, thinking=a.thinking, purpose=a.search,
                              call_id=a.call_id)
        if self.insight_searcher is None:
            step.error, step.charged = "search_insights is not available", False
            return step, {"tool": "search_insights", "ok": False, "error": step.error}
        top_k = max(1, min(int(a.top_k or 5), 20))
        try:
            hits = self.insight_searcher(a.search, top_k)
        except Exception as exc:  # the insight index is help, never fatal: the warehouse can still answer
            step.error, step.charged = f"search failed: {exc}", False
            return step, {"tool": "search_insights", "ok": False, "error": step.error}
        step.tables = [f"{h['id']}@{h['run']}" for h in hits]
        step.row_count = len(hits)
        return step, {"tool": "search_insights", "ok": True,
                      "data": {"hits": hits} if hits else {"hits": [], "note": "no earlier finding matches; "
                                                                              "query the warehouse"}}

    def _finish_step(self, step: ExplorationStep, view: dict) -> None:
        step.result_preview = view.pop("_preview", None) or project(view)
        before = self._counted_steps()
        self.steps.append(step)
        # the number the model sees: the step's place in the budget's count (0: free, shown without a number)
        after = self._counted_steps()
        step.shown = after if after > before else 0
        if step.action != StepAction.done:  # a done step keeps the model's own summary (what a resumed run reads)
            step.summary = step_summary(step)
        self.bump({f"steps_by_action.{step.action.value}": 1})
        self.sink(step)

    # ------------------------------------------------------------------ the loop

    def _ask(self, extra: list[Message]) -> LLMResponse:
        req = self.build_request(extra)
        shared = self.shared_prefix_chars(self._prev_request, req)
        req.meta["prefix_chars"] = shared
        self._prev_request = req
        self.requests.append(req.chars())
        self.stable.append(shared)
        resp = self.llm.complete(req)
        u = resp.usage
        self.bump({"llm_calls": 1, "input_tokens": u.input_tokens, "output_tokens": u.output_tokens,
                   "cached_tokens": u.cached_tokens})
        return resp

    def _parse(self, resp: LLMResponse) -> list[Action]:
        if self.tools and resp.tool_calls:
            return [from_tool_call(c, self.actions) for c in resp.tool_calls]
        return [parse_action(resp.text, self.actions)]

    def run(self, prior: list[ExplorationStep] | None = None) -> ExploreOutcome:
        self._restore(prior or [])
        for s in self.steps:
            if s.action == StepAction.done:
                return ExploreOutcome(self.steps, "done", s.summary, self.requests, self.stable)
        consecutive_errors = 0
        turn = max((s.turn or s.step for s in self.steps), default=0)
        while self._counted_steps() < self.max_steps:
            turn += 1
            extra: list[Message] = []
            usage = TokenUsage()
            nudges = 0
            actions: list[Action] | None = None
            last_text = ""
            while True:
                resp = self._ask(extra)
                usage = usage.add(resp.usage)
                try:
                    actions = self._parse(resp)
                    if not actions:
                        raise ActionParseError("the reply contained no action")
                    break
                except ActionParseError as exc:
                    last_text = resp.text or json.dumps([c.args for c in resp.tool_calls])[:500]
                    nudges += 1
                    self.bump({"reformat_nudges": 1})
                    if nudges > limits.MAX_REFORMAT_NUDGES:
                        actions = None
                        reason = str(exc)
                        break
                    if self.tools and resp.tool_calls:
                        extra = [Message("assistant", tool_calls=resp.tool_calls),
                                 Message("user", tool_results=[(c.id, json.dumps({"ok": False, "error": str(exc)}))
                                                               for c in resp.tool_calls],
                                         content=reformat_nudge(str(exc), self.actions, tools=True))]
                    elif self.tools:  # text where a tool call was due: the nudge names the tools, never JSON
                        extra = [Message("assistant", content=resp.text or "(empty)"),
                                 Message("user", content=reformat_nudge("it called no tool", self.actions,
                                                                        tools=True))]
                    else:
                        extra = [Message("assistant", content=resp.text or "(empty)"),
                                 Message("user", content=reformat_nudge(str(exc), self.actions))]
            if actions is None:
                step = self._new_step(StepAction.error, turn, thinking=last_text[:500],
                                      error=f"invalid output after {limits.MAX_REFORMAT_NUDGES} reformat nudges: "
                                            f"{reason}")
                step.usage, step.nudges = usage, nudges - 1
                self._finish_step(step, {"tool": "error", "ok": False, "error": step.error})
                consecutive_errors += 1
                if consecutive_errors >= MAX_CONSECUTIVE_ERRORS:
                    if not any(s.ok for s in self.steps):
                        raise InvalidLLMOutput(
                            f"the model gave no usable action in {MAX_CONSECUTIVE_ERRORS} consecutive steps"
                        )
                    return ExploreOutcome(self.steps, "errors", "", self.requests, self.stable)
                continue
            consecutive_errors = 0
            done = [a for a in actions if a.kind == "done"]
            work = [a for a in actions if a.kind != "done"]
            room = self.max_steps - self._counted_steps()
            kept: list[Action] = []
            for a in work:  # only queries spend steps; schema actions have their own budgets
                if a.kind == "query" and not is_info_schema_query(a.sql, self.executor.warehouse.dialect):
                    if room <= 0:
                        continue
                    room -= 1
                kept.append(a)
            results = self._execute(kept, turn)
            for i, (step, view) in enumerate(results):
                if i == 0:
                    step.usage = step.usage.add(usage)
                    step.nudges = nudges
                    if self.tools and resp.tool_calls:
                        step.note = (resp.text or "").strip()[:2000]
                self._finish_step(step, view)
            if done and not work:
                a = done[0]
                n_done = self._counted_steps()
                if n_done < self.min_steps:
                    step = self._new_step(StepAction.complete_rejected, turn, thinking=a.thinking,
                                          summary=a.summary, call_id=a.call_id)
                    step.usage = usage
                    self.bump({"rejected_completions": 1})
                    remaining = self.min_steps - n_done - 1
                    self._finish_step(step, {
                        "tool": "done", "ok": False,
                        "error": f"too early: explore at least {self.min_steps} steps before finishing; "
                                 f"{max(remaining, 0)} more step(s) needed",
                    })
                    continue
                step = self._new_step(StepAction.done, turn, summary=a.summary, thinking=a.thinking,
                                      call_id=a.call_id)
                step.usage = usage
                self._finish_step(step, {"tool": "done", "ok": True})
                return ExploreOutcome(self.steps, "done", a.summary, self.requests, self.stable)
        return ExploreOutcome(self.steps, "max_steps", "", self.requests, self.stable)

    def _execute(self, actions: list[Action], turn: int) -> list[tuple[ExplorationStep, dict]]:
        handlers = {"query": self._do_query, "lookup_schema": self._do_lookup, "search_tables": self._do_search,
                    "search_insights": self._do_insight_search}
        dialect = self.executor.warehouse.dialect
        queries = [a for a in actions if a.kind == "query" and not is_info_schema_query(a.sql, dialect)]
        parallel = len(queries) > 1 and getattr(self.executor.warehouse, "concurrent_queries", False)
        if not parallel:
            return [handlers[a.kind](a, turn) for a in actions]
        # run the turn's queries concurrently; steps keep the model's order
        with ThreadPoolExecutor(max_workers=min(4, len(queries))) as pool:
            # each query under a copy of this thread's context: what the caller set (query slots) holds there
            futures = {id(a): pool.submit(contextvars.copy_context().run, self.executor.run, a.sql,
                                          purpose=self.purpose) for a in queries}
            outs = {k: f.result() for k, f in futures.items()}
        return [self._do_query(a, turn, outs[id(a)]) if id(a) in outs else handlers[a.kind](a, turn)
                for a in actions]
