"""`assay mcp`: the project's discoveries, reachable from any MCP client (an agent, an editor).

Read-only tools over the store and the warehouse, through the same paths as the CLI: every SQL statement
passes the project's guard (refusals reach the client as tool errors, never as data), PII output columns
are masked by the executor, secrets never leave the process (a project is shown without its settings).
Starting a discovery is off unless the server was started with ``--allow-discover``.

The tools are plain methods of ``AssayTools`` (tested without MCP); ``build_server`` registers them on the
official SDK's ``MCPServer``, which serves them over stdio or streamable HTTP.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from .errors import AssayError
from .settings import Settings, load_settings

MAX_ROWS_RETURNED = 100


def _jsonable(v: Any) -> Any:
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, (dt.date, dt.datetime, dt.time)):
        return v.isoformat()
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    return str(v)


class ToolFailure(Exception):
    """A failure the client should read as one line (unknown project, refused SQL, ...)."""


class AssayTools:
    def __init__(self, settings: Settings | None = None, *, allow_discover: bool = False, llm=None):
        self.settings = settings or load_settings()
        self.allow_discover = allow_discover
        self._llm = llm  # tests give a scripted LLM; else the project's, resolved per call
        self._store = None

    @property
    def store(self):
        if self._store is None:
            from .store import open_store

            self._store = open_store(self.settings)
        return self._store

    def _project(self, project: str):
        try:
            return self.store.get_project(project)
        except AssayError as exc:
            raise ToolFailure(str(exc)) from None

    def _run_id(self, run: str) -> str:
        try:
            return self.store.resolve_run_id(run)
        except AssayError as exc:
            raise ToolFailure(str(exc)) from None

    # ------------------------------------------------------------------ tools

    def list_projects(self) -> list[dict]:
        out = []
        for p in self.store.list_projects():
            last = self.store.list_runs(p.id, 1)
            out.append({"project": p.id, "pack": p.pack, "warehouse": p.warehouse.kind, "goal": p.goal,
                        "schedule": p.schedule,
                        "last_run": ({"run": last[0].id, "status": last[0].status.value,
                                      "started": last[0].started_at.isoformat()} if last else None)})
        return out

    def list_runs(self, project: str | None = None, limit: int = 20) -> list[dict]:
        if project:
            self._project(project)
        return [{"run": r.id, "project": r.project_id, "status": r.status.value, "phase": r.phase.value,
                 "analyst": r.analyst, "steps": r.steps_done, "started": r.started_at.isoformat(),
                 "finished": r.finished_at.isoformat() if r.finished_at else None, "error": r.error}
                for r in self.store.list_runs(project, max(1, min(int(limit), 200)))]

    def show_run(self, run: str) -> dict:
        rid = self._run_id(run)
        if not self.store.has_result(rid):
            r = self.store.get_run(rid)
            raise ToolFailure(f"run {rid[:8]} has no result yet (status {r.status.value}, phase {r.phase.value})")
        res = self.store.get_result(rid)
        insights = []
        for i in res.insights:
            v = i.validation
            insights.append({
                "id": i.id, "area": i.area, "severity": i.severity.value, "title": i.name,
                "description": i.description, "affected_count": i.affected_count,
                "affected_entity": i.affected_entity,
                "verdict": v.status.value if v else "unverified",
                "refutation": v.refutation if v else None,
                "verified_count": v.verified_count if v else None,
                "ungrounded": i.ungrounded, "duplicate_of": i.duplicate_of, "also_relevant_to": i.also_relevant_to,
                "claims": [{"metric": c.metric.value, "measure": c.measure, "segment": c.segment,
                            "baseline": c.baseline, "period": c.period, "value": c.value,
                            "baseline_value": c.baseline_value,
                            "verdict": c.verdict.value if c.verdict else "unverified",
                            "refutation": c.refutation,
                            "verified_value": c.verified_value,
                            "verified_baseline_value": c.verified_baseline_value} for c in i.claims],
            })
        return {"run": res.run_id, "project": res.project_id, "run_type": res.run_type.value,
                "analyst": res.analyst, "date": res.created_at.isoformat(), "steps": res.total_steps,
                "insights": insights,
                "recommendations": [{"id": r.id, "priority": r.priority, "title": r.title,
                                     "description": r.description, "addresses": r.related_insight_ids}
                                    for r in res.recommendations],
                "errors": res.errors}

    def search_insights(self, project: str, query: str, top_k: int = 5) -> list[dict]:
        from .insight_search import search_insights

        self._project(project)
        try:
            return [h.as_dict() for h in search_insights(self.store, project, query, top_k=top_k)]
        except ValueError as exc:
            raise ToolFailure(str(exc)) from None

    def query(self, project: str, sql: str) -> dict:
        """One read-only statement through the project's guard and masking, as a run would execute it."""
        from .explore.executor import Executor
        from .schema.discovery import discover_schema
        from .warehouse import build_guard, open_warehouse

        p = self._project(project)
        try:
            wh = open_warehouse(p.warehouse)
        except AssayError as exc:
            raise ToolFailure(str(exc)) from None
        try:
            tables = discover_schema(self.store, p, wh)
            out = Executor(wh, build_guard(wh, p.warehouse, tables), p.warehouse).run(sql, fix=False,
                                                                                      purpose="mcp")
        finally:
            wh.close()
        if out.refused:
            raise ToolFailure(f"refused by the SQL guard: {out.refused}")
        if out.error or out.result is None:
            raise ToolFailure(f"query failed: {out.error}")
        res = out.result
        kept = res.table.slice(0, MAX_ROWS_RETURNED)
        # rows as lists under the one header: a statement may name two outputs alike (``SELECT a.id, b.id``), and
        # rows as dicts would keep one of them
        rows = [list(r) for r in zip(*(c.to_pylist() for c in kept.columns))] if kept.num_columns else []
        return {"sql": out.sql, "columns": res.table.column_names, "rows": _jsonable(rows),
                "row_count": res.row_count, "rows_returned": len(rows),
                "truncated": res.truncated or res.row_count > len(rows)}

    def ask(self, project: str, question: str, turns: int | None = None) -> dict:
        from .ask import ask

        p = self._project(project)
        try:
            ans = ask(self.store, p, question, turns=turns, llm=self._llm)
        except AssayError as exc:
            raise ToolFailure(str(exc)) from None
        from .explore.numbering import label

        # each query under the number the model saw it by, which is what the answer cites (explore/numbering.py)
        return {"answer": ans.answer, "answered_from": ans.sources, "finished": ans.finished,
                "insights": [h.as_dict() for h in ans.cited_insights()],
                "queries": [{"step": label(s), "purpose": s.purpose, "sql": s.query, "rows": s.row_count}
                            for s in ans.cited()]}

    def start_discovery(self, project: str, goal: str | None = None, max_steps: int | None = None) -> dict:
        if not self.allow_discover:
            raise ToolFailure("starting discoveries is off for this server (start it with "
                              "`assay mcp --allow-discover`)")
        self._project(project)
        log_dir = Path(self.settings.home) / "logs"
        log_dir.mkdir(parents=True, exist_ok=True)
        stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%S")
        log = log_dir / f"mcp-discover-{project}-{stamp}.log"
        cmd = [sys.executable, "-c", "from assay.cli import main; main()", "discover", project]
        if goal:
            cmd += ["--goal", goal]
        if max_steps:
            cmd += ["--max-steps", str(int(max_steps))]
        with open(log, "wb") as fh:
            proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    env=dict(os.environ), start_new_session=True)
        return {"started": True, "project": project, "pid": proc.pid, "log": str(log),
                "command": " ".join(["assay", *cmd[3:]]),
                "next": "list_runs shows the run and its status; show_run its insights when it ends"}


TOOL_NAMES = ("list_projects", "list_runs", "show_run", "search_insights", "query", "ask", "start_discovery")


def build_server(tools: AssayTools):
    """The MCP server exposing ``tools`` (official MCP Python SDK)."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    from importlib.metadata import PackageNotFoundError, version

    try:
        ours = version("assay")
    except PackageNotFoundError:  # a checkout run without installing
        ours = ""
    server = MCPServer("assay", version=ours, instructions=(
        "assay discovers insights in a data warehouse. list_projects, then list_runs/show_run to read what a "
        "discovery found (each insight with its verdict from re-checking against the warehouse); "
        "search_insights to find earlier findings; ask for a question answered from findings or SQL; query "
        "for one guarded read-only SQL statement."))

    def guarded(fn):
        def call(*args, **kwargs):
            try:
                return json.dumps(fn(*args, **kwargs), default=str)
            except ToolFailure as exc:
                raise ToolError(str(exc)) from None
        call.__name__, call.__doc__ = fn.__name__, fn.__doc__
        return call

    @server.tool(description="Projects registered in assay, with their warehouse kind, goal and latest run.")
    def list_projects() -> str:
        return guarded(tools.list_projects)()

    @server.tool(description="Recent discovery runs (optionally of one project), newest first.")
    def list_runs(project: str | None = None, limit: int = 20) -> str:
        return guarded(tools.list_runs)(project, limit)

    @server.tool(description="A run's insights with their verdicts (confirmed, adjusted, rejected, unverified) "
                             "and claims, and its recommendations. `run` is a run id or its first 8 characters.")
    def show_run(run: str) -> str:
        return guarded(tools.show_run)(run)

    @server.tool(description="Search a project's discovered insights and recommendations by meaning.")
    def search_insights(project: str, query: str, top_k: int = 5) -> str:
        return guarded(tools.search_insights)(project, query, top_k)

    @server.tool(description="Run one read-only SQL statement on the project's warehouse through assay's SQL "
                             f"guard (PII columns masked; at most {MAX_ROWS_RETURNED} rows returned).")
    def query(project: str, sql: str) -> str:
        return guarded(tools.query)(project, sql)

    @server.tool(description="Answer a question about the project's data from its discovered insights or by "
                             "querying the warehouse (needs the project's LLM); cites insight ids and SQL.")
    def ask(project: str, question: str, turns: int | None = None) -> str:
        return guarded(tools.ask)(project, question, turns)

    @server.tool(description="Start a discovery run of the project in the background (only when the server "
                             "allows it).")
    def start_discovery(project: str, goal: str | None = None, max_steps: int | None = None) -> str:
        return guarded(tools.start_discovery)(project, goal, max_steps)

    return server
